//! Look-ahead for the readers whose values end at a line that may never
//! come: a SHAM heredoc's terminator, a TELT value's next delimiter.
//!
//! Such a reader scans for the end line; when it never comes the value
//! runs to the end of the reply, and reading resumes where the value most
//! likely meant to stop (the next opener, say), before the lines it just
//! scanned. One such value costs one scan; a reply of many (a hostile one,
//! or a model that forgets every terminator) would rescan the rest of
//! itself once per value, quadratic in its size: minutes for a megabyte
//! pushed to a server hook. So after the first value that reaches the end,
//! the reader builds an [`Ahead`] of the rest of the reply once, and asks
//! it before each later scan whether the end line can come at all.

use std::collections::HashMap;
use std::hash::BuildHasher;

use super::lines::{Line, Lines, line_at};

/// The lines of a reply from some point on, indexed by key.
pub struct Ahead<'t> {
    text: &'t str,
    /// Keys are hashed with a per-process random seed: two keys with one
    /// hash only make [`Ahead::may_come`] say "maybe", which costs a scan,
    /// and nobody can choose keys that collide.
    hasher: foldhash::fast::RandomState,
    /// The start of the last line with each key (by its hash), for an
    /// index made by [`Ahead::new`].
    last: HashMap<u64, usize>,
    /// The start and number of every line with each key, in order, for an
    /// index made by [`Ahead::with_every`] (its last is the last line).
    every: HashMap<u64, Vec<(usize, u32)>>,
    /// The start and number of each stopping line, in order.
    stops: Vec<(usize, u32)>,
}

impl<'t> Ahead<'t> {
    /// Indexes the lines of `text` from `from` (a line start, numbered
    /// `no`): `key` gives a line's key, if it has one; `stop` says
    /// whether a line is one where reading can resume.
    pub fn new(
        text: &'t str,
        from: &Line<'_>,
        key: impl Fn(&'t str) -> Option<&'t str>,
        stop: impl Fn(&'t str) -> bool,
    ) -> Ahead<'t> {
        Ahead::build(text, from, key, stop, false)
    }

    /// [`Ahead::new`], keeping every line of each key, for
    /// [`Ahead::next_of`]: for a reader that jumps from line to line of
    /// one key (TELT: a block's own delimiters).
    pub fn with_every(
        text: &'t str,
        from: &Line<'_>,
        key: impl Fn(&'t str) -> Option<&'t str>,
        stop: impl Fn(&'t str) -> bool,
    ) -> Ahead<'t> {
        Ahead::build(text, from, key, stop, true)
    }

    fn build(
        text: &'t str,
        from: &Line<'_>,
        key: impl Fn(&'t str) -> Option<&'t str>,
        stop: impl Fn(&'t str) -> bool,
        every: bool,
    ) -> Ahead<'t> {
        let mut ahead = Ahead {
            text,
            hasher: foldhash::fast::RandomState::default(),
            last: HashMap::new(),
            every: HashMap::new(),
            stops: Vec::new(),
        };
        let mut lines = Lines::new(text);
        lines.seek(from);
        for line in lines {
            if let Some(k) = key(line.text) {
                let hash = ahead.hasher.hash_one(k);
                if every {
                    ahead
                        .every
                        .entry(hash)
                        .or_default()
                        .push((line.start, line.no));
                } else {
                    ahead.last.insert(hash, line.start);
                }
            }
            if stop(line.text) {
                ahead.stops.push((line.start, line.no));
            }
        }
        ahead
    }

    /// Whether a line with `key` may start at or after byte `pos`; `false`
    /// means certainly none does.
    pub fn may_come(&self, key: &str, pos: usize) -> bool {
        let hash = self.hasher.hash_one(key);
        let last = match self.every.get(&hash) {
            Some(lines) => lines.last().map(|&(start, _)| start),
            None => self.last.get(&hash).copied(),
        };
        last.is_some_and(|last| last >= pos)
    }

    /// The first line with `key` that starts at or after byte `pos`, if the
    /// index was made by [`Ahead::with_every`] (else `None`: read on).
    /// Several keys with one hash only make it early, never late: the
    /// caller checks the line it lands on.
    pub fn next_of(&self, key: &str, pos: usize) -> Option<Line<'t>> {
        let lines = self.every.get(&self.hasher.hash_one(key))?;
        let i = lines.partition_point(|&(start, _)| start < pos);
        let &(start, no) = lines.get(i)?;
        line_at(self.text, start, no)
    }

    /// The first stopping line that starts at or after byte `pos`.
    pub fn next_stop(&self, pos: usize) -> Option<Line<'t>> {
        let i = self.stops.partition_point(|&(start, _)| start < pos);
        let &(start, no) = self.stops.get(i)?;
        line_at(self.text, start, no)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_stops_are_found_from_a_position_on() {
        let text = "a\nEND\nb\n#!x\nEND\nc\n#!y\n";
        let first = line_at(text, 0, 1).unwrap();
        let ahead = Ahead::new(
            text,
            &first,
            |t| (t == "END" || t == "a").then_some(t),
            |t| t.starts_with("#!"),
        );
        // "END" last starts at byte 12 (line 5).
        assert!(ahead.may_come("END", 0));
        assert!(ahead.may_come("END", 12));
        assert!(!ahead.may_come("END", 13));
        assert!(ahead.may_come("a", 0));
        assert!(!ahead.may_come("a", 1));
        assert!(!ahead.may_come("never", 0));
        let stop = ahead.next_stop(0).unwrap();
        assert_eq!((stop.no, stop.text), (4, "#!x"));
        // "#!x" starts at byte 8, "#!y" at 18.
        let stop = ahead.next_stop(8).unwrap();
        assert_eq!((stop.no, stop.text), (4, "#!x"));
        let stop = ahead.next_stop(9).unwrap();
        assert_eq!((stop.no, stop.text), (7, "#!y"));
        assert!(ahead.next_stop(19).is_none());
    }

    #[test]
    fn lines_before_the_start_are_not_indexed() {
        let text = "END\n#!x\nmore\n";
        let third = line_at(text, 8, 3).unwrap();
        let ahead = Ahead::new(text, &third, Some, |t| t.starts_with("#!"));
        assert!(!ahead.may_come("END", 0));
        assert!(ahead.next_stop(0).is_none());
        assert!(ahead.may_come("more", 8));
    }
}

/// The readers that use an [`Ahead`] read every reply as they do without
/// one: replies made of the pieces such look-ahead is about (values and
/// blocks that never end, their IDs reused, closing lines of other blocks).
#[cfg(test)]
mod same_result {
    use proptest::prelude::*;

    use crate::csl::Delimiters;
    use crate::syntax::{detect, sham, telt};

    const IDS: [&str; 6] = ["k4x", "m2v", "abc", "q", "zz9", "k4"];

    fn piece(kind: usize, a: &str, b: &str) -> String {
        match kind {
            0 => format!(
                "#!telt [3-char SHA: {a}]\n=== FILE_WRITE ===\n--PATH {a}--\na\n--CONTENT {a}--\nx\n"
            ),
            1 => format!("--END {a}--\n"),
            2 => format!("--CONTENT {a}--\ny\n"),
            3 => format!("=== FILE_DELETE ===\n--PATH {a}--\nq\n"),
            4 => format!(
                "#!telt [3-char SHA: {a}]\n=== FILE_DELETE ===\n--PATH {a}--\nz\n--END {b}--\n"
            ),
            5 => "#!telt [3-char SHA:]\n// a comment\n".to_string(),
            6 => format!(
                "#!SHAM [@three-char-SHA-256: {a}]\naction = \"file_write\"\npath = \"a\"\ncontent = <<'EOT_SHAM_{b}'\nx\n"
            ),
            7 => format!("EOT_SHAM_{a}\n"),
            8 => format!("#!END_SHAM_{a}\n"),
            9 => format!(
                "#!SHAM [@three-char-SHA-256: {a}]\naction = \"file_delete\"\npath = \"b\"\n"
            ),
            10 => format!("#!nesl [@three-char-SHA-256: {a}]\n#!end_{b}\n"),
            11 => "```\n".to_string(),
            12 => format!("=== NOTE ===\n// a comment\n\n--PATH {a}--\nw\n"),
            13 => "=== Notes ===\n".to_string(),
            14 => format!("--PATH {a}-- // a comment\r\n\r\n"),
            15 => format!(
                "#!NESL [@three-char-SHA-256: {a}]\naction = \"file_write\"\npath = \"a\"\ncontent = <<\"W{b}\"\nx\n"
            ),
            16 => format!("W{a}  \n#!end_{b}\t\n"),
            17 => format!("#!END_SHAM_{a}\r\n"),
            _ => "prose, and a line of it\n".to_string(),
        }
    }

    fn reply() -> impl Strategy<Value = String> {
        prop::collection::vec((0..19usize, 0..IDS.len(), 0..IDS.len()), 0..40).prop_map(|pieces| {
            pieces
                .into_iter()
                .map(|(kind, a, b)| piece(kind, IDS[a], IDS[b]))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn sham_telt_and_detection_read_as_without_look_ahead(text in reply()) {
            let (with, without) = (sham::read(&text, true), sham::read(&text, false));
            prop_assert_eq!(&with.drafts, &without.drafts);
            prop_assert_eq!(&with.diagnostics, &without.diagnostics);
            prop_assert_eq!(&with.dropped, &without.dropped);
            let (with, without) = (telt::read(&text, true), telt::read(&text, false));
            prop_assert_eq!(&with.drafts, &without.drafts);
            prop_assert_eq!(&with.diagnostics, &without.diagnostics);
            prop_assert_eq!(&with.dropped, &without.dropped);
            let delims = Delimiters::default();
            prop_assert_eq!(
                detect::blocks_with(&text, &delims, true),
                detect::blocks_with(&text, &delims, false)
            );
        }
    }
}
