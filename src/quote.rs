//! Paths as git prints them (`core.quotePath`): a name with a control
//! character, a double quote or a backslash is shown in double quotes with
//! C escapes, so that no name can move the cursor, recolour the terminal or
//! fake a report line. Every report, status, log and commit message shows
//! paths through [`shown`].

use std::borrow::Cow;

/// `path` as a report shows it: as is, or quoted as git quotes it when it
/// holds a character a terminal would act on (a control character) or one
/// that quoting itself uses. Other non-ASCII characters stay as they are
/// (UTF-8 reads fine), unlike git's default, which quotes every byte over
/// 0x7f.
pub fn shown(path: &str) -> Cow<'_, str> {
    if path
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\')
    {
        Cow::Owned(quoted(path.as_bytes()))
    } else {
        Cow::Borrowed(path)
    }
}

/// A report's text that may hold a path (a task's target: a file, a
/// command line, `grep "x" in src`): quoted like [`shown`] only when it
/// holds a control character, so that quotes in a command line stay as
/// written.
pub fn visible(text: &str) -> Cow<'_, str> {
    if text.chars().any(char::is_control) {
        Cow::Owned(quoted(text.as_bytes()))
    } else {
        Cow::Borrowed(text)
    }
}

/// Untrusted text of several lines (a file's content a READ shows, a
/// command's output, a server's result) as a terminal may print it: every
/// control character but line feeds and tabs — escape sequences that
/// could clear the screen, retitle the window or rewrite a line to fake a
/// report — shown as Rust's `\u{1b}`, as the streamed output of a
/// command shows it. Text without one is borrowed; escaped text is left
/// as it is (escaping twice changes nothing).
pub fn escaped(text: &str) -> Cow<'_, str> {
    let kept = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(kept) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if kept(c) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    Cow::Owned(out)
}

/// `path` quoted as git quotes a name with `core.quotePath`: in double
/// quotes, with `"` and `\` escaped, C's letter escapes for the control
/// characters that have one, and every other byte that is not printable
/// ASCII as a backslash and three octal digits.
pub fn quoted(path: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in path {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_keeps_lines_and_shows_every_other_control() {
        assert_eq!(escaped("a\tb\nc"), "a\tb\nc");
        let once = escaped("\u{1b}[2Jx\ry\u{7}\u{9b}\n");
        assert_eq!(once, "\\u{1b}[2Jx\\u{d}y\\u{7}\\u{9b}\n");
        assert_eq!(escaped(&once), once);
    }

    /// Names are quoted as git quotes them in `git status` (with
    /// `core.quotePath`).
    #[test]
    fn quoted_names_read_as_git_prints_them() {
        assert_eq!(quoted(b"caf\xe9.txt"), r#""caf\351.txt""#);
        assert_eq!(quoted("é".as_bytes()), r#""\303\251""#);
        assert_eq!(
            quoted(b"a \"b\"\\c\td\n\x01\x07"),
            r#""a \"b\"\\c\td\n\001\a""#
        );
    }

    #[test]
    fn only_names_a_terminal_would_act_on_are_quoted() {
        assert_eq!(shown("src/main.rs"), "src/main.rs");
        assert_eq!(shown("café/ü.txt"), "café/ü.txt");
        assert_eq!(shown("a\u{1b}[31mred"), r#""a\033[31mred""#);
        assert_eq!(shown("new\nline"), r#""new\nline""#);
        assert_eq!(shown("tab\there"), r#""tab\there""#);
        assert_eq!(visible(r#"grep "x" in ."#), r#"grep "x" in ."#);
        assert_eq!(visible("a\u{7}"), r#""a\a""#);
    }
}
