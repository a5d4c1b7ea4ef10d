//! How the text output is coloured: one [`Palette`] of styles for every
//! kind of word that gets a colour, as git and rustc colour them (status
//! words, severities, carets, diff lines).
//!
//! Renderers take a palette and never decide about colour themselves:
//! what goes to a terminal gets [`Palette::COLOR`] when the command line
//! chose colour (`cli::paint`), and everything else (commit messages,
//! notes, JSON, a pipe) [`Palette::PLAIN`], whose styles are empty, so
//! that no escape code can reach a file or a commit.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use anstyle::{AnsiColor, Style};

/// The styles of the text output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// SUCCESS, PASSED.
    pub good: Style,
    /// ERROR, FATAL, FAILED, `fatal[…]`, and the carets under a fatal or
    /// invalid problem.
    pub bad: Style,
    /// SKIP, `warning`, and the carets under a warning.
    pub warn: Style,
    /// The `-->`, `|` and line-number gutter of a diagnostic.
    pub gutter: Style,
    /// `hint:`.
    pub hint: Style,
    /// A diff's added lines.
    pub added: Style,
    /// A diff's removed lines.
    pub removed: Style,
    /// A diff's `@@` hunk headers.
    pub hunk: Style,
    /// A diff's file headers (`diff --git`, `---`, `+++`, modes).
    pub meta: Style,
}

impl Palette {
    /// No colour: every style is empty.
    pub const PLAIN: Palette = Palette {
        good: Style::new(),
        bad: Style::new(),
        warn: Style::new(),
        gutter: Style::new(),
        hint: Style::new(),
        added: Style::new(),
        removed: Style::new(),
        hunk: Style::new(),
        meta: Style::new(),
    };

    /// The colours of a terminal: git's for diffs, rustc's for
    /// diagnostics.
    pub const COLOR: Palette = Palette {
        good: Style::new()
            .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)))
            .bold(),
        bad: Style::new()
            .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)))
            .bold(),
        warn: Style::new()
            .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)))
            .bold(),
        gutter: Style::new()
            .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Blue)))
            .bold(),
        hint: Style::new()
            .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)))
            .bold(),
        added: Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green))),
        removed: Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red))),
        hunk: Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan))),
        meta: Style::new().bold(),
    };

    /// Each line of a unified diff in its colour, as `git diff` shows it.
    /// Without colour, the diff itself (a dry run's can be large).
    pub fn diff<'d>(&self, diff: &'d str) -> Cow<'d, str> {
        if *self == Palette::PLAIN {
            return Cow::Borrowed(diff);
        }
        let mut out = String::with_capacity(diff.len() + diff.len() / 8);
        // File headers come before the first hunk of each file; inside a
        // hunk, `---`/`+++` lines are removed and added lines.
        let mut in_hunk = false;
        for line in diff.split_inclusive('\n') {
            let text = line.strip_suffix('\n').unwrap_or(line);
            let style = if text.starts_with("diff --git ") {
                in_hunk = false;
                self.meta
            } else if text.starts_with("Binary file") {
                // A file of its own without a header of its own (and
                // uncoloured, as git shows it).
                in_hunk = false;
                Style::new()
            } else if text.starts_with("@@") {
                in_hunk = true;
                self.hunk
            } else if !in_hunk {
                self.meta
            } else if text.starts_with('+') {
                self.added
            } else if text.starts_with('-') {
                self.removed
            } else {
                Style::new()
            };
            let _ = write!(out, "{}", Painted(style, text));
            if line.ends_with('\n') {
                out.push('\n');
            }
        }
        Cow::Owned(out)
    }
}

/// `text` in `style`: shown with its escape codes only when the style is
/// not empty.
#[derive(Debug, Clone, Copy)]
pub struct Painted<'t>(pub Style, pub &'t str);

impl fmt::Display for Painted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Painted(style, text) = *self;
        if style == Style::new() || text.is_empty() {
            return f.write_str(text);
        }
        write!(f, "{style}{text}{style:#}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_adds_nothing_and_color_wraps_the_text() {
        assert_eq!(
            Painted(Palette::PLAIN.good, "SUCCESS").to_string(),
            "SUCCESS"
        );
        assert_eq!(
            Painted(Palette::COLOR.good, "SUCCESS").to_string(),
            "\x1b[1m\x1b[32mSUCCESS\x1b[0m"
        );
    }

    #[test]
    fn diff_lines_are_coloured_as_git_colours_them() {
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- d\n";
        let shown = Palette::COLOR.diff(diff);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "\x1b[1mdiff --git a/x b/x\x1b[0m");
        assert_eq!(lines[1], "\x1b[1m--- a/x\x1b[0m");
        assert_eq!(lines[2], "\x1b[1m+++ b/x\x1b[0m");
        assert_eq!(lines[3], "\x1b[36m@@ -1,2 +1,2 @@\x1b[0m");
        assert_eq!(lines[4], " a");
        assert_eq!(lines[5], "\x1b[31m-b\x1b[0m");
        assert_eq!(lines[6], "\x1b[32m+c\x1b[0m");
        // Inside a hunk, a line starting with --- is a removed line.
        assert_eq!(lines[7], "\x1b[31m--- d\x1b[0m");
        assert_eq!(Palette::PLAIN.diff(diff), diff);
        // A binary file's line is plain, and the next file's headers bold.
        let diff = "@@ -1 +1 @@\n-a\nBinary file b.bin differs\n--- a/c\n";
        let shown = Palette::COLOR.diff(diff);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[2], "Binary file b.bin differs");
        assert_eq!(lines[3], "\x1b[1m--- a/c\x1b[0m");
    }
}
