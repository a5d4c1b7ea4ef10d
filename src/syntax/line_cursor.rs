//! Where lines are in one text, for the front ends' diagnostics: which
//! line a byte offset is on, and where a 1-based line starts.
//!
//! Owns [`LineCursor`]. Each front end's parse of a text makes one and
//! passes it to whatever asks (`syntax::warning`, the foreign blocks of
//! `syntax::parse`); a text inside the reply (json.rs's embedded
//! document) gets its own. Every answer starts from the last one, so a
//! reply of a million broken blocks, asked about in increasing order, is
//! read once and not once per block (doc/performance.md). Not to be
//! confused with `lines::Lines`, the iterator over a text's lines.

use std::cell::Cell;

/// Line numbers and line starts of one text, counted from the last
/// answer: forwards from it when asked about a later place, backwards
/// from it when asked about an earlier one. Lines end at `\n` (a CRLF
/// line ends at its `\n`).
pub struct LineCursor<'t> {
    text: &'t str,
    /// A line and where it starts: the last one answered (or, after a
    /// question about a line past the end, the last line there is).
    /// A `Cell`: readers ask through a shared borrow while they hold
    /// other parts of themselves.
    last: Cell<(u32, usize)>,
}

impl<'t> LineCursor<'t> {
    pub fn new(text: &'t str) -> LineCursor<'t> {
        LineCursor {
            text,
            last: Cell::new((1, 0)),
        }
    }

    /// The text the cursor counts in.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// The 1-based line of byte `offset` and where that line starts (an
    /// offset past the end is the end).
    pub fn of(&self, offset: usize) -> (u32, usize) {
        let bytes = self.text.as_bytes();
        let offset = offset.min(bytes.len());
        let (line, start) = self.last.get();
        let found = if offset >= start {
            // One pass: the count, and the last newline for the start.
            let (mut newlines, mut last) = (0, None);
            for n in memchr::memchr_iter(b'\n', &bytes[start..offset]) {
                newlines += 1;
                last = Some(n);
            }
            match last {
                Some(n) => (line + newlines, start + n + 1),
                None => (line, start),
            }
        } else {
            let newlines = memchr::memchr_iter(b'\n', &bytes[offset..start]).count() as u32;
            let begins = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |n| n + 1);
            (line - newlines, begins)
        };
        self.last.set(found);
        found
    }

    /// Byte offset where 1-based line `line` starts (0 for line 0; the
    /// end for a line past the last).
    pub fn start(&self, line: u32) -> usize {
        if line <= 1 {
            return 0;
        }
        let bytes = self.text.as_bytes();
        let (known, at) = self.last.get();
        if line >= known {
            let mut reached = (known, at);
            if line > known {
                for n in memchr::memchr_iter(b'\n', &bytes[at..]) {
                    reached = (reached.0 + 1, at + n + 1);
                    if reached.0 == line {
                        break;
                    }
                }
            }
            // Past the last line, the last line is what was learnt: the
            // next question starts from there too.
            self.last.set(reached);
            if reached.0 == line {
                reached.1
            } else {
                bytes.len()
            }
        } else {
            // `at` starts line `known`, so the k-th newline back from it
            // ends line `known - k`: the one ending line `line - 1` is
            // found after `known - line` others. There are `known - 1`
            // newlines before `at`, so it is always there.
            let begins = memchr::memrchr_iter(b'\n', &bytes[..at])
                .nth((known - line) as usize)
                .map_or(0, |n| n + 1);
            self.last.set((line, begins));
            begins
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LineCursor;
    use proptest::strategy::Strategy;

    /// The line of `offset` and its start, counted from the text's start.
    fn naive_of(text: &str, offset: usize) -> (u32, usize) {
        let before = &text.as_bytes()[..offset.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
        (line, start)
    }

    /// Where `line` starts, counted from the text's start.
    fn naive_start(text: &str, line: u32) -> usize {
        if line <= 1 {
            return 0;
        }
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .nth(line as usize - 2)
            .map_or(text.len(), |(n, _)| n + 1)
    }

    #[test]
    fn lines_of_offsets_asked_in_any_order_are_right() {
        let text = "a\nbb\n\nccc\nd";
        let offsets: Vec<usize> = (0..=text.len() + 2).collect();
        let lines = LineCursor::new(text);
        for &offset in offsets.iter().chain(offsets.iter().rev()) {
            assert_eq!(lines.of(offset), naive_of(text, offset), "offset {offset}");
        }
        for offset in [7, 0, 11, 3, 9, 2, 12, 5] {
            assert_eq!(lines.of(offset), naive_of(text, offset), "offset {offset}");
        }
    }

    #[test]
    fn line_starts_asked_in_any_order_are_right() {
        let text = "a\nbb\n\nccc\nd";
        let want = [0, 2, 5, 6, 10, 11, 11];
        // One cursor for every order: each order starts where the last
        // one left it, as a front end's questions do.
        let lines = LineCursor::new(text);
        for order in [
            [1u32, 2, 3, 4, 5, 6, 7],
            [7, 6, 5, 4, 3, 2, 1],
            [3, 1, 5, 2, 7, 4, 6],
        ] {
            for line in order {
                assert_eq!(lines.start(line), want[line as usize - 1], "line {line}");
                // A fresh cursor answers the same.
                assert_eq!(LineCursor::new(text).start(line), want[line as usize - 1]);
            }
        }
        assert_eq!(lines.start(0), 0);
    }

    #[test]
    fn a_text_ending_in_a_newline_has_an_empty_last_line() {
        let text = "a\r\nb\n";
        let lines = LineCursor::new(text);
        assert_eq!(lines.start(3), 5);
        assert_eq!(lines.of(5), (3, 5));
        assert_eq!(lines.start(4), 5);
        assert_eq!(lines.start(2), 3);
        assert_eq!(lines.of(4), (2, 3));
    }

    /// A question to the cursor.
    #[derive(Debug, Clone)]
    enum Ask {
        Start(u32),
        Of(usize),
    }

    proptest::proptest! {
        /// Any text, any questions about lines and offsets in any order:
        /// the same answers as counting from the start each time.
        #[test]
        fn answers_like_a_scan_from_the_start(
            text in "[ab\n\r\u{e9}]{0,30}",
            asks in proptest::collection::vec(
                proptest::prop_oneof![
                    (0u32..40).prop_map(Ask::Start),
                    (0usize..45).prop_map(Ask::Of),
                ],
                0..40,
            ),
        ) {
            let lines = LineCursor::new(&text);
            for ask in asks {
                match ask {
                    Ask::Start(line) => {
                        proptest::prop_assert_eq!(lines.start(line), naive_start(&text, line), "line {}", line);
                    }
                    Ask::Of(offset) => {
                        proptest::prop_assert_eq!(lines.of(offset), naive_of(&text, offset), "offset {}", offset);
                    }
                }
            }
        }
    }
}
