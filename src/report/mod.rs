//! The apply report: one entry per task, then a summary.
//!
//! Owns the report model (serialised as the JSON report, documented in
//! `doc/report.md`) and its text rendering (apply.md §2). Every ERROR
//! carries a stable error type, what was expected and found, and detail
//! lines that tell the reply's author what to send instead.

pub mod text;

use serde::Serialize;

use crate::csl::{OpKind, TaskId};

/// The outcome of one task (apply.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Success,
    Error,
    Skip,
    Fatal,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Success => "SUCCESS",
            Status::Error => "ERROR",
            Status::Skip => "SKIP",
            Status::Fatal => "FATAL",
        }
    }
}

/// One task (or one operation of a TASKS block).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskReport {
    #[serde(serialize_with = "as_string")]
    pub task: TaskId,
    #[serde(serialize_with = "op_name")]
    pub op: OpKind,
    /// The file (WRITE/SEARCH) or command (RUN) the task is about.
    pub target: Option<String>,
    /// Line of the operation's marker in the reply.
    pub line: u32,
    pub status: Status,
    /// A stable identifier for errors (`match_count_mismatch`, …).
    pub error_type: Option<&'static str>,
    /// What happened, in one line.
    pub message: String,
    /// Further lines (closest match, differences, hints), in order.
    pub details: Vec<String>,
    /// The operations of a TASKS block.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<TaskReport>,
    /// What a RUN's commands printed (stdout and stderr interleaved, up
    /// to `--max-output`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Lines of the file a SEARCH or an edit of lines matched (replaced,
    /// or found too many times), in order, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
    /// The region of the file most like a pattern that matched nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest: Option<Region>,
    /// First line where a failed pattern's replacement already stands:
    /// the edit looks applied already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_present: Option<u32>,
}

/// The region of a file most like a pattern that matched nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Region {
    pub path: String,
    /// First and last line, 1-based, inclusive.
    pub lines: [u32; 2],
    /// 0.0–1.0, two decimals.
    pub similarity: f32,
    /// The region's lines as they are in the file (LF line ends).
    pub text: String,
}

fn as_string<S: serde::Serializer>(t: &TaskId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

fn op_name<S: serde::Serializer>(op: &OpKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(op.name())
}

/// Task counts for the summary and the `Clada-Tasks` trailer. A TASKS
/// block counts as one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub succeeded: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Operations of failed TASKS blocks that were not run (SKIP lines
    /// inside a block, which counts as one failed task): said in the
    /// summary, so that a `[task-2.3] SKIP` line does not contradict
    /// "0 skipped".
    #[serde(skip)]
    pub not_run: usize,
}

impl Tally {
    pub fn of(tasks: &[TaskReport]) -> Tally {
        let mut t = Tally::default();
        for task in tasks {
            t.not_run += task
                .operations
                .iter()
                .filter(|o| o.status == Status::Skip)
                .count();
            match task.status {
                Status::Success => t.succeeded += 1,
                Status::Error | Status::Fatal => t.failed += 1,
                Status::Skip => t.skipped += 1,
            }
        }
        t
    }

    pub fn all_succeeded(&self) -> bool {
        self.failed == 0 && self.skipped == 0
    }

    /// The counts alone, `1 succeeded, 0 failed, 2 skipped`: the
    /// `Clada-Tasks` trailer.
    pub fn counts(&self) -> String {
        format!(
            "{} succeeded, {} failed, {} skipped",
            self.succeeded, self.failed, self.skipped
        )
    }

    /// Reads [`Tally::counts`] back; `None` for anything else.
    pub fn parse(text: &str) -> Option<Tally> {
        let mut t = Tally::default();
        let mut parts = text.split(", ");
        for (field, word) in [
            (&mut t.succeeded, "succeeded"),
            (&mut t.failed, "failed"),
            (&mut t.skipped, "skipped"),
        ] {
            let (n, w) = parts.next()?.split_once(' ')?;
            if w != word {
                return None;
            }
            *field = n.parse().ok()?;
        }
        parts.next().is_none().then_some(t)
    }
}

/// The counts as a summary says them: [`Tally::counts`], then the
/// operations of failed blocks that were not run, if any.
impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.counts())?;
        match self.not_run {
            0 => Ok(()),
            1 => f.write_str("; 1 operation of a failed block not run"),
            n => write!(f, "; {n} operations of failed blocks not run"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_reads_back_what_it_prints() {
        let t = Tally {
            succeeded: 3,
            failed: 1,
            skipped: 12,
            not_run: 0,
        };
        assert_eq!(Tally::parse(&t.counts()), Some(t));
        assert_eq!(Tally::parse("1 succeeded, 0 failed"), None);
        assert_eq!(Tally::parse("1 succeeded, x failed, 0 skipped"), None);
        assert_eq!(
            Tally::parse("1 succeeded, 0 failed, 0 skipped, 1 more"),
            None
        );
    }
}
