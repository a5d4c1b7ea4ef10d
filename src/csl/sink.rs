//! Where every front end puts the diagnostics of one parse: the first
//! [`MAX_KEPT`] by position, and exact counts of all of them.
//!
//! Owns the cap on diagnostics (doc/syntaxes.md, "How many diagnostics are
//! kept"). A server hook parses every pushed note, and a 45 MB reply of
//! broken blocks has about a million diagnostics, each a few hundred bytes
//! of message and hint: kept whole, that was over half a gigabyte. Past
//! the cap a diagnostic is counted by severity and dropped as it comes, so
//! memory stays bounded while parsing, not only afterwards; the counts
//! (and so exit statuses, summaries and whether anything may run) stay
//! exact, and the reports say how many are not shown.
//!
//! The kept ones are exactly the first [`MAX_KEPT`] of what a stable sort
//! of all of them by (line, column) would give: the same ones, in the same
//! order, as keeping everything and cutting after the sort.

use super::diagnostic::{Counts, Diagnostic, DiagnosticKind};

/// How many diagnostics one parse keeps. A person reads the first few; an
/// agent fixes a reply from the first ones too (the rest repeat the same
/// mistake further down). 1,000 is far more than any reply written in
/// earnest has (no case in test-data has more than 11) and keeps a
/// parse's diagnostics under about a megabyte, however large the reply.
pub const MAX_KEPT: usize = 1000;

/// The diagnostics of one parse.
///
/// Reads as a slice of the kept diagnostics. Between [`Diagnostics::push`]
/// and [`Diagnostics::finish`] it may hold up to twice its cap, unsorted;
/// a finished [`crate::csl::Reply`] or [`crate::syntax::Parsed`] holds a
/// finished one: sorted by (line, column), at most the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    kept: Vec<Diagnostic>,
    /// Every diagnostic pushed, kept or not.
    counts: Counts,
    cap: usize,
    /// Once some were dropped: the line of the last one kept then. No
    /// diagnostic on a later line will be kept (each cut keeps the first
    /// by position, so this line only moves up).
    cut: Option<u32>,
}

impl Default for Diagnostics {
    fn default() -> Self {
        Diagnostics::new()
    }
}

impl Diagnostics {
    /// An empty collection that keeps [`MAX_KEPT`].
    pub fn new() -> Diagnostics {
        Diagnostics::with_cap(MAX_KEPT)
    }

    /// An empty collection that keeps the first `cap` (at least one: a
    /// reply with problems always shows one).
    pub fn with_cap(cap: usize) -> Diagnostics {
        Diagnostics {
            kept: Vec::new(),
            counts: Counts::default(),
            cap: cap.max(1),
            cut: None,
        }
    }

    /// Counts `d` and keeps it for now. It stays the last one until the
    /// next push, so a front end may still fill in its task.
    pub fn push(&mut self, d: Diagnostic) {
        self.counts.add(d.severity());
        // Cut back to the cap only once twice as many are held: a sort per
        // cap's worth of pushes, not one per push.
        if self.kept.len() >= 2 * self.cap {
            self.finish();
        }
        self.kept.push(d);
    }

    /// Sorts the kept diagnostics by (line, column) and drops all but the
    /// first `cap`. The sort is stable, and the kept ones from earlier cuts
    /// were pushed before any held after them, so a diagnostic dropped here
    /// is one a single sort of everything would have put after the cap.
    pub fn finish(&mut self) {
        self.kept.sort_by_key(|d| (d.line, d.column));
        if self.kept.len() > self.cap {
            self.kept.truncate(self.cap);
            self.cut = self.kept.last().map(|d| d.line);
        }
    }

    /// A skipped task's reason for a problem of `kind` on `line`: `full()`
    /// (its message), or only its stable code (doc/report.md) once no
    /// diagnostic on that line can be kept. A task's reasons repeat its
    /// diagnostics, so they are capped with them: a reply of a million
    /// broken blocks is a million skipped tasks, but not a million
    /// messages kept twice. Decided by the cuts made so far: a front end
    /// asking as it reads (in line order) gets the full reason for at
    /// most twice the cap's problems.
    pub fn reason(&self, line: u32, kind: DiagnosticKind, full: impl FnOnce() -> String) -> String {
        if self.cut.is_some_and(|cut| line > cut) {
            kind.code().to_string()
        } else {
            full()
        }
    }

    /// Every diagnostic pushed, by severity, kept or not.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Whether any diagnostic pushed, kept or not, is fatal.
    pub fn has_fatal(&self) -> bool {
        self.counts.fatal > 0
    }

    /// How many diagnostics are not kept, by severity (of a finished
    /// collection).
    pub fn omitted(&self) -> Counts {
        self.counts.minus(Counts::of(&self.kept))
    }

    /// Counts `counts` as diagnostics pushed and not kept: those another
    /// parse dropped before its diagnostics were copied into this one.
    pub fn count_omitted(&mut self, counts: Counts) {
        self.counts = self.counts.plus(counts);
    }

    /// The last diagnostic pushed (while it is still held).
    pub fn last_mut(&mut self) -> Option<&mut Diagnostic> {
        self.kept.last_mut()
    }
}

/// The line a text report ends its diagnostics with when some of those it
/// would show were not kept (`omitted`: of the severities it shows);
/// `None` when all were.
pub fn not_shown(omitted: Counts) -> Option<String> {
    let n = omitted.total();
    if n == 0 {
        return None;
    }
    let parts: Vec<String> = [
        (omitted.fatal, "fatal"),
        (omitted.invalid, "invalid"),
        (omitted.warning, "warning"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| match (what, n) {
        ("warning", 1) => "1 warning".to_string(),
        ("warning", n) => format!("{n} warnings"),
        (what, n) => format!("{n} {what}"),
    })
    .collect();
    Some(format!(
        "… and {n} more diagnostic{} not shown ({}): a parse keeps the first {MAX_KEPT}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    ))
}

impl From<Vec<Diagnostic>> for Diagnostics {
    /// A finished collection of `diagnostics`.
    fn from(diagnostics: Vec<Diagnostic>) -> Diagnostics {
        let mut out = Diagnostics::new();
        out.extend(diagnostics);
        out.finish();
        out
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        for d in iter {
            self.push(d);
        }
    }
}

impl std::ops::Deref for Diagnostics {
    type Target = [Diagnostic];

    fn deref(&self) -> &[Diagnostic] {
        &self.kept
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

impl serde::Serialize for Diagnostics {
    /// The kept diagnostics, as an array.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.kept.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::{DiagnosticKind, Severity, Span};

    fn at(kind: DiagnosticKind, line: u32, column: u32) -> Diagnostic {
        Diagnostic {
            kind,
            line,
            column,
            line_start: 0,
            span: Span::default(),
            message: format!("{line}:{column}"),
            hint: None,
            operation: None,
            task: None,
        }
    }

    /// `all` pushed into a collection of cap `cap`, finished.
    fn collect(cap: usize, all: &[Diagnostic]) -> Diagnostics {
        let mut sink = Diagnostics::with_cap(cap);
        sink.extend(all.iter().cloned());
        sink.finish();
        sink
    }

    /// What keeping everything and cutting after one stable sort keeps.
    fn reference(cap: usize, all: &[Diagnostic]) -> Vec<Diagnostic> {
        let mut sorted = all.to_vec();
        sorted.sort_by_key(|d| (d.line, d.column));
        sorted.truncate(cap);
        sorted
    }

    #[test]
    fn keeps_the_first_by_position_in_the_order_of_one_sort() {
        // Out of order, with ties on (line, column) that only the push
        // order separates (their messages differ by kind).
        let kinds = [
            DiagnosticKind::MalformedBlock,
            DiagnosticKind::Unterminated,
            DiagnosticKind::ForeignBlock,
        ];
        let all: Vec<Diagnostic> = (0..500u32)
            .map(|i| at(kinds[i as usize % 3], (i * 7919) % 97 + 1, i % 2 + 1))
            .collect();
        for cap in [1, 2, 3, 10, 64, 499, 500, 501, 1000] {
            let sink = collect(cap, &all);
            assert_eq!(&sink[..], &reference(cap, &all)[..], "cap {cap}");
        }
    }

    #[test]
    fn never_holds_more_than_twice_its_cap() {
        let mut sink = Diagnostics::with_cap(10);
        for i in 0..1000 {
            sink.push(at(DiagnosticKind::MalformedLine, 1000 - i, 1));
            assert!(sink.len() <= 20, "{} held", sink.len());
        }
    }

    #[test]
    fn counts_and_fatality_include_what_is_not_kept() {
        let mut all: Vec<Diagnostic> = (1..=50)
            .map(|line| at(DiagnosticKind::MalformedLine, line, 1))
            .collect();
        all.extend((51..=60).map(|line| at(DiagnosticKind::ForeignBlock, line, 1)));
        // The only fatal error is the last one by position: never kept.
        all.push(at(DiagnosticKind::Unterminated, 61, 1));
        let sink = collect(5, &all);
        assert_eq!(sink.len(), 5);
        assert!(sink.iter().all(|d| d.severity() == Severity::Invalid));
        assert!(sink.has_fatal());
        let all_counts = Counts {
            fatal: 1,
            invalid: 50,
            warning: 10,
        };
        assert_eq!(sink.counts(), all_counts);
        assert_eq!(
            sink.omitted(),
            Counts {
                fatal: 1,
                invalid: 45,
                warning: 10
            }
        );
    }

    #[test]
    fn counts_omitted_elsewhere() {
        let mut sink = collect(5, &[at(DiagnosticKind::ForeignBlock, 1, 1)]);
        let elsewhere = Counts {
            fatal: 2,
            invalid: 0,
            warning: 1,
        };
        sink.count_omitted(elsewhere);
        assert!(sink.has_fatal());
        assert_eq!(sink.omitted(), elsewhere);
        assert_eq!(sink.counts().warning, 2);
    }

    #[test]
    fn the_line_of_those_not_shown_counts_each_severity() {
        assert_eq!(not_shown(Counts::default()), None);
        let line = not_shown(Counts {
            fatal: 2,
            invalid: 0,
            warning: 1,
        });
        assert_eq!(
            line.as_deref(),
            Some(
                "… and 3 more diagnostics not shown (2 fatal, 1 warning): a parse keeps the first 1000"
            )
        );
    }

    #[test]
    fn reasons_past_the_cut_are_codes() {
        let mut sink = Diagnostics::with_cap(2);
        let full = || "the whole message".to_string();
        for line in 1..=4 {
            sink.push(at(DiagnosticKind::MalformedLine, line, 1));
            // Nothing dropped yet: every line may still be kept.
            assert_eq!(
                sink.reason(line, DiagnosticKind::MalformedLine, full),
                full()
            );
        }
        sink.push(at(DiagnosticKind::MalformedLine, 5, 1));
        assert_eq!(sink.reason(2, DiagnosticKind::MalformedLine, full), full());
        assert_eq!(
            sink.reason(3, DiagnosticKind::MalformedLine, full),
            DiagnosticKind::MalformedLine.code()
        );
    }

    #[test]
    fn under_the_cap_nothing_is_omitted() {
        let all: Vec<Diagnostic> = (1..=3)
            .rev()
            .map(|line| at(DiagnosticKind::Unterminated, line, 1))
            .collect();
        let sink = collect(MAX_KEPT, &all);
        assert_eq!(sink.len(), 3);
        assert_eq!(sink.omitted(), Counts::default());
        assert_eq!(sink[0].line, 1);
    }
}
