//! Splits a reply into lines and reads marker lines.
//!
//! Owns the two lowest layers of the front end: line splitting (LF, CRLF and
//! CR are all line ends) and the syntax of one marker line (name, attributes,
//! delimiters). It knows nothing about which marker is allowed where; that is
//! the parser's state machine.

use std::borrow::Cow;

use super::Delimiters;
use super::ast::{Attr, Span};

/// One line of the input, without its line end.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub text: &'a str,
    /// Byte offset of the first byte of the line.
    pub start: usize,
    /// 1-based line number in the original input.
    pub number: u32,
}

impl Line<'_> {
    /// Byte offset just past the line's text (before its line end).
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// Iterates the lines of `src`. A line end at the very end of the input does
/// not start another (empty) line.
pub struct Lines<'a> {
    src: &'a str,
    pos: usize,
    number: u32,
}

impl<'a> Lines<'a> {
    pub fn new(src: &'a str) -> Lines<'a> {
        Lines {
            src,
            pos: 0,
            number: 0,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.pos >= self.src.len() {
            return None;
        }
        let bytes = self.src.as_bytes();
        let rest = &bytes[self.pos..];
        let start = self.pos;
        let (len, line_end) = match memchr::memchr2(b'\n', b'\r', rest) {
            Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => (i, 2),
            Some(i) => (i, 1),
            None => (rest.len(), 0),
        };
        self.pos = start + len + line_end;
        self.number += 1;
        Some(Line {
            text: &self.src[start..start + len],
            start,
            number: self.number,
        })
    }
}

/// Why a marker line is not well formed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerError {
    /// The structure is broken; the text says how.
    Malformed(String),
    UnquotedValue,
    /// The value opened with this quote is not closed on the line.
    UnterminatedQuote(char),
    DuplicateAttribute(String),
    /// Text after the end delimiter.
    TrailingContent,
}

/// A line that starts with the start delimiter, read as a marker.
#[derive(Debug, Clone)]
pub struct Marker<'a> {
    /// `[A-Za-z0-9_]+` right after the start delimiter; may be empty.
    pub name: &'a str,
    pub name_span: Span,
    /// The attributes read before any error; duplicates are dropped.
    pub attrs: Vec<Attr<'a>>,
    /// The first problem found and where it is.
    pub error: Option<(MarkerError, Span)>,
}

/// The name right after the start delimiter of `text`, if `text` starts with
/// it, and whether the name stands alone (is followed by the end delimiter,
/// whitespace or the end of the line) so that the line can be a marker.
pub fn marker_name<'a>(text: &'a str, delims: &Delimiters) -> Option<(&'a str, bool)> {
    let rest = text.strip_prefix(delims.start.as_str())?;
    let len = name_len(rest, delims);
    let after = &rest[len..];
    let standalone = after.is_empty()
        || after.starts_with(delims.end.as_str())
        || after.starts_with([' ', '\t']);
    Some((&rest[..len], standalone))
}

/// Length of the `[A-Za-z0-9_]*` run at the start of `s`, stopping where the
/// end delimiter begins (it may itself start with a name character).
fn name_len(s: &str, delims: &Delimiters) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        if s[i..].starts_with(delims.end.as_str()) {
            break;
        }
        i += 1;
    }
    i
}

/// Reads `line`, which starts with the start delimiter, as a marker.
/// Stops at the first error, keeping what was read before it.
pub fn read_marker<'a>(line: Line<'a>, delims: &Delimiters) -> Marker<'a> {
    let text = line.text;
    let base = line.start;
    let at = |i: usize, j: usize| Span::new(base + i, base + j);
    let mut i = delims.start.len();
    let name_end = i + name_len(&text[i..], delims);
    let mut marker = Marker {
        name: &text[i..name_end],
        name_span: at(i, name_end),
        attrs: Vec::new(),
        error: None,
    };
    let fail = |marker: &mut Marker<'a>, e: MarkerError, span: Span| {
        marker.error = Some((e, span));
    };
    if marker.name.is_empty() {
        let msg = "expected an operation name right after the start delimiter".to_string();
        fail(&mut marker, MarkerError::Malformed(msg), at(0, text.len()));
        return marker;
    }
    i = name_end;
    let end = delims.end.as_str();
    // Whitespace is required between the name and the first attribute;
    // after a quoted value it is optional (`a="1"b="2"`, csl.md §3).
    let mut first = true;
    loop {
        let ws = skip_ws(text, i);
        if text[ws..].starts_with(end) {
            i = ws + end.len();
            break;
        }
        if ws == text.len() {
            let msg = format!("the marker is not closed with '{end}'");
            fail(&mut marker, MarkerError::Malformed(msg), at(i, text.len()));
            return marker;
        }
        if ws == i && first {
            let what = format!(
                "expected whitespace, an attribute or '{end}' after '{}'",
                marker.name
            );
            let span = at(i, i + next_char(text, i).len_utf8());
            fail(&mut marker, MarkerError::Malformed(what), span);
            return marker;
        }
        first = false;
        i = ws;
        // Attribute name.
        let name_start = i;
        while i < text.len() {
            let c = next_char(text, i);
            if c.is_whitespace() || matches!(c, '"' | '\'' | '=' | '<' | '>') {
                break;
            }
            if text[i..].starts_with(end) {
                break;
            }
            i += c.len_utf8();
        }
        let name = &text[name_start..i];
        if name.is_empty() {
            let c = next_char(text, i);
            let msg = format!("expected an attribute name, found '{c}'");
            fail(
                &mut marker,
                MarkerError::Malformed(msg),
                at(i, i + c.len_utf8()),
            );
            return marker;
        }
        let eq = skip_ws(text, i);
        if !text[eq..].starts_with('=') {
            let msg = format!("attribute '{name}' has no value: write {name}=\"...\"");
            fail(&mut marker, MarkerError::Malformed(msg), at(name_start, i));
            return marker;
        }
        i = skip_ws(text, eq + 1);
        let quote = match text[i..].chars().next() {
            Some(q @ ('"' | '\'')) => q,
            _ => {
                let value_end = text[i..]
                    .find(|c: char| c.is_whitespace())
                    .map_or(text.len(), |n| i + n);
                let value_end = text[i..value_end]
                    .find(end)
                    .map_or(value_end, |n| i + n)
                    .max(i);
                fail(
                    &mut marker,
                    MarkerError::UnquotedValue,
                    at(name_start, value_end),
                );
                return marker;
            }
        };
        let value_start = i + 1;
        let Some((value, close)) = read_quoted(text, value_start, quote) else {
            fail(
                &mut marker,
                MarkerError::UnterminatedQuote(quote),
                at(name_start, text.len()),
            );
            return marker;
        };
        i = close + 1;
        let span = at(name_start, i);
        if marker.attrs.iter().any(|a| a.name == name) {
            fail(
                &mut marker,
                MarkerError::DuplicateAttribute(name.to_string()),
                span,
            );
            return marker;
        }
        marker.attrs.push(Attr { name, value, span });
    }
    let trailing = skip_ws(text, i);
    if trailing < text.len() {
        fail(
            &mut marker,
            MarkerError::TrailingContent,
            at(trailing, text.len()),
        );
    }
    marker
}

fn skip_ws(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    i
}

fn next_char(text: &str, i: usize) -> char {
    text[i..].chars().next().unwrap_or(' ')
}

/// Reads a quoted value starting at `start` (just past the opening quote).
/// Returns the unescaped value and the index of the closing quote, or `None`
/// when the line ends first. Only `\<quote>` and `\\` are escapes.
fn read_quoted(text: &str, start: usize, quote: char) -> Option<(Cow<'_, str>, usize)> {
    let bytes = text.as_bytes();
    let q = quote as u8;
    let mut owned: Option<String> = None;
    let mut run_start = start;
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        if b == q {
            let value = match owned {
                Some(mut s) => {
                    s.push_str(&text[run_start..i]);
                    Cow::Owned(s)
                }
                None => Cow::Borrowed(&text[start..i]),
            };
            return Some((value, i));
        }
        if b == b'\\' && matches!(bytes.get(i + 1), Some(&n) if n == q || n == b'\\') {
            let s = owned.get_or_insert_with(String::new);
            s.push_str(&text[run_start..i]);
            s.push(bytes[i + 1] as char);
            i += 2;
            run_start = i;
            continue;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line<'_> {
        Line {
            text,
            start: 0,
            number: 1,
        }
    }

    fn read(text: &str) -> Marker<'_> {
        read_marker(line(text), &Delimiters::default())
    }

    #[test]
    fn lines_split_on_lf_crlf_and_cr() {
        let got: Vec<_> = Lines::new("a\nb\r\nc\rd")
            .map(|l| (l.text, l.start, l.number))
            .collect();
        assert_eq!(got, [("a", 0, 1), ("b", 2, 2), ("c", 5, 3), ("d", 7, 4)]);
    }

    #[test]
    fn final_line_end_starts_no_line_but_blank_lines_count() {
        assert_eq!(Lines::new("a\n").count(), 1);
        assert_eq!(Lines::new("a\n\n").count(), 2);
        assert_eq!(Lines::new("").count(), 0);
        assert_eq!(Lines::new("\r\n\r\n").count(), 2);
    }

    #[test]
    fn reads_name_and_attributes_with_both_quotes_and_escapes() {
        let m = read(r#"<---WRITE file = "a\"b" other='c\'d\\e' x="\n"--->  "#);
        assert_eq!(m.error, None);
        assert_eq!(m.name, "WRITE");
        let attrs: Vec<_> = m.attrs.iter().map(|a| (a.name, a.value.as_ref())).collect();
        assert_eq!(attrs, [("file", "a\"b"), ("other", "c'd\\e"), ("x", "\\n")]);
    }

    #[test]
    fn value_may_hold_the_end_delimiter() {
        let m = read(r#"<---WRITE file="a--->b"--->"#);
        assert_eq!(m.error, None);
        assert_eq!(m.attrs[0].value, "a--->b");
    }

    #[test]
    fn errors_are_classified_with_spans() {
        let kind = |t: &str| read(t).error.map(|(e, s)| (e, s.start, s.end));
        assert_eq!(
            kind(r#"<---WRITE file=test--->"#),
            Some((MarkerError::UnquotedValue, 10, 19))
        );
        assert_eq!(
            kind(r#"<---WRITE file="x"---> hi"#),
            Some((MarkerError::TrailingContent, 23, 25))
        );
        assert_eq!(
            kind(r#"<---WRITE file="x' --->"#),
            Some((MarkerError::UnterminatedQuote('"'), 10, 23))
        );
        assert_eq!(
            kind(r#"<---WRITE a="1" a='2'--->"#),
            Some((MarkerError::DuplicateAttribute("a".into()), 16, 21))
        );
        assert!(matches!(
            read("<---").error,
            Some((MarkerError::Malformed(_), _))
        ));
        assert!(matches!(
            read(r#"<---WRITE file="x""#).error,
            Some((MarkerError::Malformed(_), _))
        ));
        assert!(matches!(
            read("<---WRITE-x--->").error,
            Some((MarkerError::Malformed(_), _))
        ));
        assert_eq!(read(r#"<---WRITE a="1"b='2'--->"#).error, None);
        assert!(matches!(
            read("<---WRITE flag--->").error,
            Some((MarkerError::Malformed(_), _))
        ));
    }

    #[test]
    fn name_stops_where_an_alphanumeric_end_delimiter_starts() {
        let d = Delimiters::new("[[", "END]]").unwrap();
        let m = read_marker(line("[[RUNEND]]"), &d);
        assert_eq!((m.name, m.error), ("RUN", None));
    }

    #[test]
    fn marker_name_tells_whether_the_name_stands_alone() {
        let d = Delimiters::default();
        assert_eq!(marker_name("<---END--->", &d), Some(("END", true)));
        assert_eq!(marker_name("<---END x", &d), Some(("END", true)));
        assert_eq!(marker_name("<---END", &d), Some(("END", true)));
        assert_eq!(marker_name("<---ENDING--->", &d), Some(("ENDING", true)));
        assert_eq!(marker_name("<---END:x", &d), Some(("END", false)));
        assert_eq!(marker_name(" <---END--->", &d), None);
    }
}
