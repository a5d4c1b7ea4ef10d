//! Whether the output is coloured, decided once at start: `--color`, then
//! git's `color.ui`, then the terminal's own signals (a terminal at all,
//! `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`, `TERM=dumb`, which anstream
//! reads). The styles themselves are [`crate::style::Palette`]'s.

use std::path::Path;

use anstream::{AutoStream, ColorChoice};

use crate::git::Repository;
use crate::style::Palette;

/// `--color`'s values, as git and cargo spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    // No doc comments here: clap would turn them into a long help
    // listing for an option every command has.
    Auto,
    Always,
    Never,
}

/// Sets the process's colour choice: `flag` if given, else `color.ui`
/// from the git configuration of the repository in `cwd` (or the global
/// one), else automatic.
pub fn choose(flag: Option<ColorWhen>, cwd: &Path) {
    let choice = match flag {
        Some(ColorWhen::Always) => ColorChoice::Always,
        Some(ColorWhen::Never) => ColorChoice::Never,
        Some(ColorWhen::Auto) => ColorChoice::Auto,
        None => color_ui(cwd).unwrap_or(ColorChoice::Auto),
    };
    choice.write_global();
}

/// `color.ui` as git reads it: `always`; `never` or false; `auto` or true
/// (and anything else) is automatic. A user's setting overrides
/// `NO_COLOR`, as a command-line flag does (no-color.org).
fn color_ui(cwd: &Path) -> Option<ColorChoice> {
    let value = match Repository::discover(cwd) {
        Ok(Some(repo)) => repo.config_string("color.ui"),
        _ => crate::git::global_config_string("color.ui"),
    }?;
    match value.trim().to_ascii_lowercase().as_str() {
        "always" => Some(ColorChoice::Always),
        "never" | "false" | "no" | "off" | "0" => Some(ColorChoice::Never),
        _ => None,
    }
}

/// The palette for what goes to standard output.
pub fn stdout() -> Palette {
    palette(AutoStream::choice(&std::io::stdout()))
}

/// The palette for what goes to standard error.
pub fn stderr() -> Palette {
    palette(AutoStream::choice(&std::io::stderr()))
}

fn palette(choice: ColorChoice) -> Palette {
    match choice {
        ColorChoice::Never => Palette::PLAIN,
        _ => Palette::COLOR,
    }
}
