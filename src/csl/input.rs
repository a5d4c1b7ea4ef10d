//! Turns the bytes of a reply into text the parser can read.
//!
//! Owns the input rules of csl.md §1: the 50 MiB limit, the leading BOM and
//! invalid UTF-8. Invalid UTF-8 is a fatal diagnostic, but the rest of the
//! reply is still parsed (with replacement characters) so that every other
//! problem is reported in the same pass.

use std::borrow::Cow;

use super::ast::Span;
use super::diagnostic::{Diagnostic, DiagnosticKind};

/// The largest reply accepted, in bytes.
pub const MAX_INPUT: usize = 50 * 1024 * 1024;

const BOM: &str = "\u{feff}";

/// A reply's text and the problems found while decoding it.
pub struct Decoded<'a> {
    /// The text to parse, BOM removed. Borrowed when the input was valid.
    pub text: Cow<'a, str>,
    /// A fatal diagnostic for invalid UTF-8, if there was any.
    pub diagnostic: Option<Diagnostic>,
}

/// The diagnostic for an input over [`MAX_INPUT`] bytes; `len` is the size
/// seen (a lower bound when reading stopped early).
pub fn too_large(len: u64) -> Diagnostic {
    Diagnostic {
        kind: DiagnosticKind::InputTooLarge,
        line: 1,
        column: 1,
        line_start: 0,
        span: Span::default(),
        message: format!(
            "input_too_large: the reply is {len} bytes; the limit is {MAX_INPUT} bytes (50 MiB)"
        ),
        hint: Some("split the reply into several smaller ones".to_string()),
        operation: None,
        task: None,
    }
}

/// Decodes `bytes`: drops a leading BOM and checks UTF-8. The caller checks
/// the size limit first (it can refuse before reading everything).
pub fn decode(bytes: &[u8]) -> Decoded<'_> {
    let (bytes, bom) = match bytes.strip_prefix(BOM.as_bytes()) {
        Some(rest) => (rest, BOM.len()),
        None => (bytes, 0),
    };
    // simdutf8 checks a large reply several times faster than std (20 MB:
    // under 1 ms against 2-3 ms); its error says nothing about where, so
    // std checks an invalid reply again.
    let checked = simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes));
    match checked {
        Ok(text) => Decoded {
            text: Cow::Borrowed(text),
            diagnostic: None,
        },
        Err(e) => {
            let at = e.valid_up_to();
            let text = String::from_utf8_lossy(bytes).into_owned();
            // The valid prefix is the same in both strings, so line and
            // column can be computed on the lossy text.
            let prefix = &text.as_bytes()[..at];
            let line_start = prefix
                .iter()
                .rposition(|&b| b == b'\n' || b == b'\r')
                .map_or(0, |i| i + 1);
            let line = 1 + line_ends(prefix);
            let diagnostic = Diagnostic {
                kind: DiagnosticKind::InvalidUtf8,
                line,
                column: super::column(&text, line_start, at),
                line_start,
                span: Span::new(at, at + '\u{fffd}'.len_utf8()),
                message: format!(
                    "invalid UTF-8 at byte offset {}: the reply must be UTF-8 text",
                    at + bom
                ),
                hint: Some(
                    "re-encode the reply as UTF-8; binary data cannot be written with CSL"
                        .to_string(),
                ),
                operation: None,
                task: None,
            };
            Decoded {
                text: Cow::Owned(text),
                diagnostic: Some(diagnostic),
            }
        }
    }
}

/// Number of line ends in `bytes`, a CRLF pair counting once.
fn line_ends(bytes: &[u8]) -> u32 {
    let mut n = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_dropped_and_valid_text_borrowed() {
        let d = decode(b"\xef\xbb\xbfhi");
        assert!(matches!(d.text, Cow::Borrowed("hi")));
        assert!(d.diagnostic.is_none());
    }

    #[test]
    fn invalid_utf8_names_offset_line_and_column() {
        let d = decode(b"a\r\nb\rc\nxy\xffz");
        let diag = d.diagnostic.expect("invalid");
        assert_eq!(diag.kind, DiagnosticKind::InvalidUtf8);
        assert_eq!((diag.line, diag.column), (4, 3));
        assert!(diag.message.contains("byte offset 9"), "{}", diag.message);
        assert_eq!(d.text, "a\r\nb\rc\nxy\u{fffd}z");
    }

    #[test]
    fn offset_counts_the_bom() {
        let d = decode(b"\xef\xbb\xbf\xff");
        assert!(
            d.diagnostic
                .expect("invalid")
                .message
                .contains("byte offset 3")
        );
    }
}
