//! Whether the output is coloured, decided once at start: `--color`, then
//! git's `color.ui`, then the terminal's own signals (a terminal at all,
//! `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`, `TERM=dumb`, which anstream
//! reads). The styles themselves are [`crate::style::Palette`]'s.

use std::path::Path;
use std::sync::OnceLock;

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

/// What the command line chose (`None` inside: `--color` not given).
/// Until a command line chooses, nothing is coloured: the library's own
/// callers (a test, the hooks' code called directly) get plain text.
static FLAG: OnceLock<Option<ColorWhen>> = OnceLock::new();

/// The choice made from [`FLAG`] and `color.ui`, on first use: a command
/// that colours nothing (JSON, say) never reads the configuration.
static CHOSEN: OnceLock<()> = OnceLock::new();

/// Records the command line's choice: `flag` if given, else (when first
/// needed) `color.ui` from the git configuration of the repository in the
/// current directory (or the global one), else automatic.
pub fn choose(flag: Option<ColorWhen>) {
    let _ = FLAG.set(flag);
}

/// Whether colour was chosen at all, the global choice made on the first
/// call.
fn chosen() -> bool {
    let Some(&flag) = FLAG.get() else {
        return false;
    };
    CHOSEN.get_or_init(|| {
        let choice = match flag {
            Some(ColorWhen::Always) => ColorChoice::Always,
            Some(ColorWhen::Never) => ColorChoice::Never,
            Some(ColorWhen::Auto) => ColorChoice::Auto,
            None => color_ui(Path::new(".")).unwrap_or(ColorChoice::Auto),
        };
        choice.write_global();
    });
    true
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
    if !chosen() {
        return Palette::PLAIN;
    }
    palette(AutoStream::choice(&std::io::stdout()))
}

/// The palette for what goes to standard error.
pub fn stderr() -> Palette {
    if !chosen() {
        return Palette::PLAIN;
    }
    palette(AutoStream::choice(&std::io::stderr()))
}

fn palette(choice: ColorChoice) -> Palette {
    match choice {
        ColorChoice::Never => Palette::PLAIN,
        _ => Palette::COLOR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hooks' code and the library's other callers, run without the
    /// command line, colour nothing whatever the environment says.
    #[test]
    fn nothing_is_coloured_until_a_command_line_chooses() {
        assert_eq!(stdout(), Palette::PLAIN);
        assert_eq!(stderr(), Palette::PLAIN);
    }
}
