//! INSERT: text put after a line of a file (Claude's text-editor
//! `insert`; syntaxes.md §1).
//!
//! Owns the line arithmetic: line 0 is the top (after a BOM), line N puts
//! the text after the N-th line. The inserted lines take the file's line
//! ending and end with one; a last line without a line end gets one
//! before them. Every other byte of the file is kept.

use super::text::{LineEnding, Text, is_binary};

/// Why an insert cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InsertError {
    Binary,
    /// The line is past the end; the file has `lines` lines.
    OutOfRange {
        lines: usize,
    },
}

/// The file's bytes with `text` inserted after line `after`.
pub fn insert(original: &[u8], after: usize, text: &str) -> Result<Vec<u8>, InsertError> {
    if is_binary(original) {
        return Err(InsertError::Binary);
    }
    let ending = Text::new(original).ending;
    let bom = if original.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let body = &original[bom..];
    // Offsets just past each line end, in the original bytes.
    let mut ends = Vec::new();
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\n' => ends.push(bom + i + 1),
            b'\r' if body.get(i + 1) != Some(&b'\n') => ends.push(bom + i + 1),
            _ => {}
        }
        i += 1;
    }
    let unterminated = !body.is_empty() && !matches!(body.last(), Some(b'\n' | b'\r'));
    let lines = ends.len() + usize::from(unterminated);
    if after > lines {
        return Err(InsertError::OutOfRange { lines });
    }
    let at = match after {
        0 => bom,
        n if n <= ends.len() => ends[n - 1],
        _ => original.len(),
    };
    let mut out = Vec::with_capacity(original.len() + text.len() + 2);
    out.extend_from_slice(&original[..at]);
    if at == original.len() && unterminated {
        out.extend_from_slice(ending.as_bytes());
    }
    push_with_ending(&mut out, text, ending);
    out.extend_from_slice(&original[at..]);
    Ok(out)
}

/// `text` with its line ends made `ending`, ending with one.
fn push_with_ending(out: &mut Vec<u8>, text: &str, ending: LineEnding) {
    let normal = text.replace("\r\n", "\n");
    for line in normal.split_inclusive('\n') {
        let content = line.strip_suffix('\n').unwrap_or(line);
        out.extend_from_slice(content.as_bytes());
        out.extend_from_slice(ending.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(file: &str, after: usize, text: &str) -> Result<String, InsertError> {
        insert(file.as_bytes(), after, text).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn lines_go_after_the_named_line() {
        assert_eq!(ins("a\nb\n", 0, "x"), Ok("x\na\nb\n".into()));
        assert_eq!(ins("a\nb\n", 1, "x\ny\n"), Ok("a\nx\ny\nb\n".into()));
        assert_eq!(ins("a\nb\n", 2, "x"), Ok("a\nb\nx\n".into()));
        assert_eq!(ins("a\nb", 2, "x"), Ok("a\nb\nx\n".into()));
        assert_eq!(ins("", 0, "x"), Ok("x\n".into()));
        assert_eq!(
            ins("a\nb\n", 3, "x"),
            Err(InsertError::OutOfRange { lines: 2 })
        );
    }

    #[test]
    fn crlf_and_bom_are_kept() {
        assert_eq!(
            ins("a\r\nb\r\n", 1, "x\ny"),
            Ok("a\r\nx\r\ny\r\nb\r\n".into())
        );
        assert_eq!(ins("\u{feff}a\n", 0, "x"), Ok("\u{feff}x\na\n".into()));
        assert_eq!(insert(b"a\0b", 0, "x"), Err(InsertError::Binary));
    }
}
