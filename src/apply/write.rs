//! WRITE: the bytes a file gets (apply.md §4).
//!
//! Owns content rules only: final newline, keeping an overwritten file's
//! line-ending style, append on a new line; an overwrite asks the
//! lazy-placeholder guard (`placeholder`, shared by every operation that
//! replaces lines). Parent directories, modes (executable bit kept, new
//! files 0644) and paths belong to the tree the caller writes into.

pub use super::placeholder::Placeholder;
use super::text::{LineEnding, Text};

/// How to write.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// The WRITE content (LF line ends, as parsed).
    pub content: &'a str,
    pub append: bool,
    /// Add `\n` to non-empty content that lacks one (`clada.finalNewline`).
    pub final_newline: bool,
}

/// The new bytes of the file, given its current bytes (`None`: new file).
/// With `guard`, an overwrite that looks like an elision is refused.
pub fn write(existing: Option<&[u8]>, w: &Write<'_>, guard: bool) -> Result<Vec<u8>, Placeholder> {
    let mut content = w.content.to_string();
    if w.final_newline && !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    let Some(old) = existing else {
        return Ok(content.into_bytes());
    };
    let text = Text::new(old);
    if w.append {
        let mut out = old.to_vec();
        let ends_open = !old.is_empty() && !matches!(old.last(), Some(b'\n' | b'\r'));
        if ends_open && !content.is_empty() {
            out.extend_from_slice(text.ending.as_bytes());
        }
        out.extend_from_slice(&text.with_file_endings(&content));
        return Ok(out);
    }
    if guard && let Some(found) = placeholder(&content, old) {
        return Err(found);
    }
    Ok(match text.ending {
        LineEnding::Lf => content.into_bytes(),
        _ => text.with_file_endings(&content),
    })
}

/// WRITE content a model wrapped whole in a markdown fence (a first line
/// ```` ```lang ````, a last line ```` ``` ````) for a file that is not
/// markdown: the lines between, when that is the case.
pub fn unfenced<'c>(path: &str, content: &'c str) -> Option<&'c str> {
    let lower = path.to_ascii_lowercase();
    if [".md", ".markdown", ".mdx", ".rmd"]
        .iter()
        .any(|ext| lower.ends_with(ext))
    {
        return None;
    }
    let (first, rest) = content.split_once('\n')?;
    let ticks = first.len() - first.trim_start_matches('`').len();
    let info = &first[ticks..];
    if ticks < 3 || info.contains('`') || info.trim().contains(' ') {
        return None;
    }
    let body = rest.trim_end_matches('\n');
    let (inner, last) = match body.rsplit_once('\n') {
        Some((inner, last)) => (inner, last),
        None => ("", body),
    };
    if last.trim_end() != &first[..ticks] {
        return None;
    }
    // A fence of the same length inside would have closed it: then this
    // is not one fenced block.
    let fence = &first[..ticks];
    if inner.lines().any(|l| l.trim_end() == fence) {
        return None;
    }
    Some(inner)
}

/// The placeholder a WRITE's content puts where the old file had real
/// lines: a whole-file rewrite judged as any other edit of lines.
fn placeholder(content: &str, old: &[u8]) -> Option<Placeholder> {
    super::placeholder::elided_text(&String::from_utf8_lossy(old), content, old)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(content: &str) -> Write<'_> {
        Write {
            content,
            append: false,
            final_newline: true,
        }
    }

    fn text(r: Result<Vec<u8>, Placeholder>) -> String {
        String::from_utf8(r.expect("written")).unwrap()
    }

    #[test]
    fn new_files_get_a_final_newline_unless_turned_off() {
        assert_eq!(text(write(None, &w("a\nb"), true)), "a\nb\n");
        assert_eq!(text(write(None, &w("a\n"), true)), "a\n");
        assert_eq!(text(write(None, &w(""), true)), "");
        let off = Write {
            final_newline: false,
            ..w("a")
        };
        assert_eq!(text(write(None, &off, true)), "a");
    }

    #[test]
    fn overwriting_keeps_crlf() {
        assert_eq!(
            text(write(Some(b"old\r\nfile\r\n"), &w("new\ncontent"), true)),
            "new\r\ncontent\r\n"
        );
    }

    #[test]
    fn appended_text_starts_on_a_new_line() {
        let a = |old: &[u8], c| {
            text(write(
                Some(old),
                &Write {
                    append: true,
                    ..w(c)
                },
                true,
            ))
        };
        assert_eq!(a(b"one", "two"), "one\ntwo\n");
        assert_eq!(a(b"one\n", "two"), "one\ntwo\n");
        assert_eq!(a(b"one\r\n", "two\nthree"), "one\r\ntwo\r\nthree\r\n");
        assert_eq!(a(b"", "two"), "two\n");
    }

    #[test]
    fn a_placeholder_where_lines_were_is_refused() {
        let old = b"fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n";
        let err = write(Some(old), &w("fn a() {}\n// ... existing code ...\n"), true).unwrap_err();
        assert_eq!(
            err,
            Placeholder {
                line: 2,
                text: "// ... existing code ...".into(),
                removed: 3,
            }
        );
        for line in [
            "# rest of file unchanged",
            "<!-- ... -->",
            "// ...",
            "/* ... rest of the code ... */",
            "// …other methods",
        ] {
            assert!(write(Some(old), &w(line), true).is_err(), "{line}");
        }
    }

    #[test]
    fn a_whole_fence_is_taken_off_content_that_is_not_markdown() {
        assert_eq!(
            unfenced("a.py", "```python\nprint(1)\n```\n"),
            Some("print(1)")
        );
        assert_eq!(unfenced("a.py", "````\nx\n```\ny\n````"), Some("x\n```\ny"));
        assert_eq!(unfenced("README.md", "```sh\nls\n```\n"), None);
        assert_eq!(unfenced("a.py", "```python\nprint(1)\n"), None);
        assert_eq!(unfenced("a.py", "```\na\n```\nmiddle\n```\nb\n```"), None);
        assert_eq!(unfenced("a.py", "print(1)\n```\n"), None);
    }

    #[test]
    fn placeholder_guard_spares_real_content() {
        let old = b"x = 1\n# ... existing code ...\ny = 2\nz = 3\n";
        // Already in the old file: kept on purpose.
        assert!(write(Some(old), &w("# ... existing code ...\n"), true).is_ok());
        // The guard can be turned off.
        assert!(write(Some(old), &w("// ... existing code ..."), false).is_ok());
        // Longer in bytes, and nothing removed around it: a comment.
        assert!(
            write(
                Some(b"short\n"),
                &w("short\n# rest of file unchanged\n"),
                true
            )
            .is_ok()
        );
        // Longer in bytes, but real lines gone where it stands: refused.
        let long = "x = 1\n# ... existing code ... (kept as it was, all of it)\n";
        assert!(write(Some(old), &w(long), true).is_err());
        // Ordinary comments and Python's Ellipsis.
        for line in [
            "# compute the rest",
            "...",
            "// see the docs...",
            "x = '...'",
            "// decode the input...",
            "// restore state...",
        ] {
            assert!(write(Some(old), &w(line), true).is_ok(), "{line}");
        }
    }
}
