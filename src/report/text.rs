//! The text form of the report: `[task-N] STATUS: OP target - message`,
//! detail lines indented by four spaces.

use std::fmt::Write as _;

use super::{Status, TaskReport};
use crate::csl::OpKind;
use crate::style::{Painted, Palette};

/// The line(s) of one task, its block's operations first.
pub fn task_lines(task: &TaskReport, palette: &Palette) -> String {
    lines(task, Output::Read, palette)
}

/// The line(s) of one task without its block's operations: what a stream
/// prints when a block ends, its operations having been printed as each
/// finished.
pub fn own_lines(task: &TaskReport, palette: &Palette) -> String {
    let mut out = String::new();
    line(&mut out, task, Output::Read, palette);
    out
}

/// [`task_lines`] without any output: what a commit message records.
pub fn task_lines_without_output(task: &TaskReport) -> String {
    lines(task, Output::None, &Palette::PLAIN)
}

/// [`task_lines`], each RUN's output first as `[task-N:exec] line`: what
/// a stream would have shown, for `--output-mode buffer`. A READ's output
/// (`[task-N:read] line`) is in both.
pub fn task_lines_with_output(task: &TaskReport, palette: &Palette) -> String {
    lines(task, Output::All, palette)
}

/// Which output a task's lines include.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    None,
    /// A READ's (a RUN's was streamed as it ran).
    Read,
    All,
}

fn lines(task: &TaskReport, output: Output, palette: &Palette) -> String {
    let mut out = String::new();
    for child in &task.operations {
        out.push_str(&lines(child, output, palette));
    }
    line(&mut out, task, output, palette);
    out
}

/// The task's own line, its output before it and its details after.
fn line(out: &mut String, task: &TaskReport, output: Output, palette: &Palette) {
    let label = match (task.op, output) {
        (_, Output::None) => None,
        (OpKind::Read, _) => Some("read"),
        (_, Output::All) => Some("exec"),
        _ => None,
    };
    if let (Some(label), Some(output)) = (label, &task.output) {
        for line in output.lines() {
            // A file's content or a command's output: untrusted.
            let line = crate::quote::escaped(line);
            let _ = writeln!(out, "[task-{}:{label}] {line}", task.task);
        }
    }
    let target = task
        .target
        .as_deref()
        .map(|t| format!(" {}", crate::quote::visible(t)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "[task-{}] {}: {}{} - {}",
        task.task,
        Painted(
            match task.status {
                Status::Success => palette.good,
                Status::Skip => palette.warn,
                Status::Error | Status::Fatal => palette.bad,
            },
            task.status.name()
        ),
        task.op,
        target,
        task.message
    );
    for detail in &task.details {
        // May quote a command's output or a file's lines: untrusted.
        let _ = writeln!(out, "    {}", crate::quote::escaped(detail));
    }
}
