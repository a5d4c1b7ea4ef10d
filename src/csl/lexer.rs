//! Splits a reply into lines and reads marker lines.
//!
//! Owns the two lowest layers of the front end: line splitting (LF, CRLF and
//! CR are all line ends; lines that cannot be markers are passed on in
//! bulk) and the syntax of one marker line (name, attributes, delimiters). It knows nothing about which marker is allowed where; that is
//! the parser's state machine.

use std::borrow::Cow;

use memchr::memmem;

use super::Delimiters;
use super::ast::{Attr, Span};

/// One line of the input, without its line end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// What the parser reads, in order: each line that may be a marker, one by
/// one, and the lines between them in bulk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A line that starts with the start delimiter, possibly after spaces
    /// and tabs: a marker, or a line that looks like one.
    Line(Line<'a>),
    /// One or more lines before the next such line.
    Plain(Plain),
}

/// A run of whole lines none of which starts with the start delimiter, even
/// after spaces and tabs: content inside an operation, prose outside one.
/// No such line can be a marker or draw a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plain {
    /// Byte offset where the first line starts.
    pub start: usize,
    /// Byte offset just past the last line's text (before its line end).
    pub end: usize,
    /// 1-based number of the last line.
    pub last: u32,
}

/// Splits `src` into [`Piece`]s. A line end at the very end of the input
/// does not start another (empty) line.
///
/// Most lines of a reply are plain, and a large reply has hundreds of
/// thousands of them, so they are not split one by one: a substring search
/// finds the next start delimiter and the line ends before its line are
/// counted, both with SIMD, which costs a fraction of finding each line end
/// in turn.
pub struct Pieces<'a, 'd> {
    src: &'a str,
    delimiter: memmem::Finder<'d>,
    /// Where the next unread line starts.
    pos: usize,
    /// Lines read so far (plain ones included).
    number: u32,
    /// Where the next line that may be a marker starts, at or after `pos`
    /// (`src.len()` when there is none), once known.
    next_marker: Option<usize>,
    /// Where the next CR is, at or after `pos` (`src.len()` when there is
    /// none), once known. Most replies have none, or few.
    next_cr: Option<usize>,
}

impl<'a, 'd> Pieces<'a, 'd> {
    pub fn new(src: &'a str, delims: &'d Delimiters) -> Pieces<'a, 'd> {
        Pieces {
            src,
            delimiter: memmem::Finder::new(delims.start.as_str()),
            pos: 0,
            number: 0,
            next_marker: None,
            next_cr: None,
        }
    }

    /// The number of lines read so far: all of them once the iterator is
    /// done.
    pub fn lines_read(&self) -> u32 {
        self.number
    }

    /// Where the first line at or after `from` (a line start) that starts
    /// with the start delimiter, after optional spaces and tabs, starts;
    /// `src.len()` when no line does.
    fn find_marker_line(&self, from: usize) -> usize {
        let bytes = self.src.as_bytes();
        // No line end lies between `line` and the next hit's line: the
        // backward search for that line's start stops before `line`, so no
        // byte is searched twice.
        let mut line = from;
        while let Some(i) = self.delimiter.find(&bytes[line..]) {
            let hit = line + i;
            let start =
                memchr::memrchr2(b'\n', b'\r', &bytes[line..hit]).map_or(line, |j| line + j + 1);
            if bytes[start..hit].iter().all(|&b| b == b' ' || b == b'\t') {
                return start;
            }
            // The delimiter is inside a line: go on after that line.
            match memchr::memchr2(b'\n', b'\r', &bytes[hit..]) {
                Some(j) => line = hit + j + 1,
                None => break,
            }
        }
        bytes.len()
    }

    /// The lines from `from` up to `to`, both line starts (or `to` the end
    /// of the input), as one run.
    fn plain(&mut self, from: usize, to: usize) -> Plain {
        let bytes = &self.src.as_bytes()[from..to];
        let mut lines = count_lf(bytes);
        // A CR is a line end too unless an LF follows (CRLF counts once).
        // CRs are rare: they are found once for the whole input rather than
        // looked for in every run, and looked at one by one.
        let next_cr = match self.next_cr {
            Some(cr) if cr >= from => cr,
            _ => memchr::memchr(b'\r', &self.src.as_bytes()[from..])
                .map_or(self.src.len(), |i| from + i),
        };
        self.next_cr = Some(next_cr);
        if next_cr < to {
            lines += memchr::memchr_iter(b'\r', &bytes[next_cr - from..])
                .filter(|&i| bytes.get(next_cr - from + i + 1) != Some(&b'\n'))
                .count();
        }
        let end = match bytes {
            [.., b'\r', b'\n'] => to - 2,
            [.., b'\n' | b'\r'] => to - 1,
            _ => {
                // The last line of the input, without a line end.
                lines += 1;
                to
            }
        };
        self.number += lines as u32;
        Plain {
            start: from,
            end,
            last: self.number,
        }
    }

    /// The line that starts at `pos`.
    fn line(&mut self) -> Line<'a> {
        let rest = &self.src.as_bytes()[self.pos..];
        let start = self.pos;
        let (len, line_end) = match memchr::memchr2(b'\n', b'\r', rest) {
            Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => (i, 2),
            Some(i) => (i, 1),
            None => (rest.len(), 0),
        };
        self.pos = start + len + line_end;
        self.number += 1;
        Line {
            text: &self.src[start..start + len],
            start,
            number: self.number,
        }
    }
}

impl<'a> Iterator for Pieces<'a, '_> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.pos >= self.src.len() {
            return None;
        }
        let next = match self.next_marker {
            Some(n) if n >= self.pos => n,
            _ => self.find_marker_line(self.pos),
        };
        self.next_marker = Some(next);
        if next > self.pos {
            let run = self.plain(self.pos, next);
            self.pos = next;
            return Some(Piece::Plain(run));
        }
        Some(Piece::Line(self.line()))
    }
}

/// The number of LFs in `bytes`. Runs between markers are short (a few
/// lines), where memchr's set-up costs more than counting eight bytes at a
/// time; long ones are left to memchr.
fn count_lf(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const LOW7: u64 = ONES * 0x7f;
    if bytes.len() > 512 {
        return memchr::memchr_iter(b'\n', bytes).count();
    }
    let mut words = bytes.chunks_exact(8);
    // One count per byte lane (at most 64 each, so no lane overflows):
    // cheaper than a popcount per word where the CPU has no instruction
    // for it, as baseline x86-64 does not.
    let mut lanes = 0;
    for word in &mut words {
        let x =
            u64::from_ne_bytes(word.try_into().expect("eight bytes")) ^ (ONES * u64::from(b'\n'));
        // The top bit of each byte of `x` that is zero, exactly.
        let zero = !(((x & LOW7) + LOW7) | x | LOW7);
        lanes += zero >> 7;
    }
    // Add the eight lanes: pairs into 16-bit lanes, then those with a
    // multiplication that sums them into the top 16 bits.
    const PAIRS: u64 = 0x00ff_00ff_00ff_00ff;
    let pairs = (lanes & PAIRS) + ((lanes >> 8) & PAIRS);
    let n = (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
    n + words.remainder().iter().filter(|&&b| b == b'\n').count()
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
        if starts_with_at(s, i, &delims.end) {
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
        // Room for an attribute per '=': exact unless a value holds one.
        // A vector that grows makes room for four at once, which is
        // megabytes for a reply of many small operations.
        attrs: Vec::with_capacity(text.bytes().filter(|&b| b == b'=').count()),
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
            if starts_with_at(text, i, end) {
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

/// Whether `text[i..]` starts with `pat`. Called for each character of
/// names, so it compares the first byte before calling `memcmp`.
fn starts_with_at(text: &str, i: usize, pat: &str) -> bool {
    let (text, pat) = (&text.as_bytes()[i..], pat.as_bytes());
    match pat.first() {
        Some(first) => text.first() == Some(first) && text.starts_with(pat),
        None => true,
    }
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

    fn pieces(src: &str) -> Vec<Piece<'_>> {
        Pieces::new(src, &Delimiters::default()).collect()
    }

    fn marker_line(text: &str, start: usize, number: u32) -> Piece<'_> {
        Piece::Line(Line {
            text,
            start,
            number,
        })
    }

    fn plain(start: usize, end: usize, last: u32) -> Piece<'static> {
        Piece::Plain(Plain { start, end, last })
    }

    #[test]
    fn lines_split_on_lf_crlf_and_cr() {
        assert_eq!(
            pieces("<---a\n<---b\r\n<---c\r<---d"),
            [
                marker_line("<---a", 0, 1),
                marker_line("<---b", 6, 2),
                marker_line("<---c", 13, 3),
                marker_line("<---d", 19, 4),
            ]
        );
        assert_eq!(pieces("a\nb\r\nc\rd"), [plain(0, 8, 4)]);
    }

    #[test]
    fn final_line_end_starts_no_line_but_blank_lines_count() {
        assert_eq!(pieces("a\n"), [plain(0, 1, 1)]);
        assert_eq!(pieces("a\n\n"), [plain(0, 2, 2)]);
        assert_eq!(pieces(""), []);
        assert_eq!(pieces("\r\n\r\n"), [plain(0, 2, 2)]);
        assert_eq!(pieces("<---\r\n"), [marker_line("<---", 0, 1)]);
    }

    #[test]
    fn only_lines_starting_with_the_delimiter_come_one_by_one() {
        assert_eq!(
            pieces("x\n  <---END--->\ny <--- z\n<---RUN\n\t<---"),
            [
                plain(0, 1, 1),
                marker_line("  <---END--->", 2, 2),
                plain(16, 24, 3),
                marker_line("<---RUN", 25, 4),
                marker_line("\t<---", 33, 5),
            ]
        );
    }

    #[test]
    fn count_lf_counts_short_and_long_runs() {
        let text = "ab\ncd\n\n\u{80a}\r\n\u{10a}\n".repeat(100);
        for end in 0..text.len() {
            let bytes = &text.as_bytes()[..end];
            let naive = bytes.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count_lf(bytes), naive, "{end}");
        }
    }

    /// The lines of `src` split one by one, each with whether it may be a
    /// marker: what [`Pieces`] must agree with.
    fn naive_lines<'a>(src: &'a str, delims: &Delimiters) -> Vec<(Line<'a>, bool)> {
        let mut out = Vec::new();
        let (mut pos, mut number) = (0, 0);
        while pos < src.len() {
            let rest = &src[pos..];
            let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
            let line_end = match &rest[len..] {
                s if s.starts_with("\r\n") => 2,
                "" => 0,
                _ => 1,
            };
            number += 1;
            let text = &rest[..len];
            let may_be_marker = text
                .trim_start_matches([' ', '\t'])
                .starts_with(delims.start.as_str());
            let line = Line {
                text,
                start: pos,
                number,
            };
            out.push((line, may_be_marker));
            pos += len + line_end;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn pieces_agree_with_splitting_line_by_line(
            parts in proptest::collection::vec(
                proptest::sample::select(
                    &["<---", "<-", "-", "[[", "x", "é", " ", "\t", "\r", "\n", "\r\n"][..],
                ),
                0..40,
            ),
            square in proptest::bool::ANY,
        ) {
            let src = parts.concat();
            let delims = if square {
                Delimiters::new("[[", "]]").unwrap()
            } else {
                Delimiters::default()
            };
            let mut expected = Vec::new();
            for (line, may_be_marker) in naive_lines(&src, &delims) {
                match expected.last_mut() {
                    _ if may_be_marker => expected.push(Piece::Line(line)),
                    Some(Piece::Plain(run)) => {
                        run.end = line.end();
                        run.last = line.number;
                    }
                    _ => expected.push(plain(line.start, line.end(), line.number)),
                }
            }
            let mut got = Pieces::new(&src, &delims);
            proptest::prop_assert_eq!(got.by_ref().collect::<Vec<_>>(), expected);
            proptest::prop_assert_eq!(got.lines_read() as usize, naive_lines(&src, &delims).len());
        }
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
