//! Lines of a reply for the line-based readers (SHAM, TELT, replacer,
//! aider, diff, patch): one pass, `memchr` for line ends, no copy.

/// One line: where it starts, its text without the line break (LF or
/// CRLF), and where the next line starts.
#[derive(Debug, Clone, Copy)]
pub struct Line<'t> {
    /// 1-based.
    pub no: u32,
    pub start: usize,
    pub text: &'t str,
    pub next: usize,
}

/// The lines of `text` from byte `pos` (a line start), numbered from `no`.
#[derive(Debug, Clone)]
pub struct Lines<'t> {
    text: &'t str,
    pos: usize,
    no: u32,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Lines<'t> {
        Lines {
            text,
            pos: 0,
            no: 1,
        }
    }

    /// Goes to the end of the text: no line follows.
    pub fn finish(&mut self) {
        self.pos = self.text.len();
    }

    /// Goes back (or on) to `line`, which the next call returns.
    pub fn seek(&mut self, line: &Line<'_>) {
        self.pos = line.start;
        self.no = line.no;
    }
}

impl<'t> Iterator for Lines<'t> {
    type Item = Line<'t>;

    fn next(&mut self) -> Option<Line<'t>> {
        let item = line_at(self.text, self.pos, self.no)?;
        self.pos = item.next;
        self.no += 1;
        Some(item)
    }
}

/// The line of `text` that starts at byte `pos`, numbered `no`; `None`
/// at the end.
pub fn line_at(text: &str, pos: usize, no: u32) -> Option<Line<'_>> {
    let rest = text.get(pos..).filter(|r| !r.is_empty())?;
    let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
        Some(n) => (&rest[..n], pos + n + 1),
        None => (rest, text.len()),
    };
    Some(Line {
        no,
        start: pos,
        text: line.strip_suffix('\r').unwrap_or(line),
        next,
    })
}

/// The text from `from` up to the line starting at `to`, without the
/// line break just before `to`: the value of a multi-line parameter.
pub fn value_between(text: &str, from: usize, to: usize) -> &str {
    if to <= from {
        return "";
    }
    let value = text.get(from..to).unwrap_or_default();
    let value = value.strip_suffix('\n').unwrap_or(value);
    value.strip_suffix('\r').unwrap_or(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_strip_their_breaks_and_know_their_place() {
        let text = "a\r\nb\n\nc";
        let lines: Vec<_> = Lines::new(text).map(|l| (l.no, l.start, l.text)).collect();
        assert_eq!(lines, [(1, 0, "a"), (2, 3, "b"), (3, 5, ""), (4, 6, "c")]);
        assert_eq!(value_between(text, 0, 5), "a\r\nb");
        assert_eq!(value_between(text, 5, 5), "");
    }
}
