//! The text form of the report: `[task-N] STATUS: OP target - message`,
//! detail lines indented by four spaces.

use std::fmt::Write as _;

use super::TaskReport;
use crate::csl::OpKind;

/// The line(s) of one task, its block's operations first.
pub fn task_lines(task: &TaskReport) -> String {
    lines(task, false)
}

/// [`task_lines`], each RUN's output first as `[task-N:exec] line`: what
/// a stream would have shown, for `--output-mode buffer`. A READ's output
/// (`[task-N:read] line`) is in both.
pub fn task_lines_with_output(task: &TaskReport) -> String {
    lines(task, true)
}

fn lines(task: &TaskReport, with_output: bool) -> String {
    let mut out = String::new();
    for child in &task.operations {
        out.push_str(&lines(child, with_output));
    }
    // A READ's output is what it is for: always shown. A RUN's was
    // streamed as it ran, unless buffered.
    let label = match task.op {
        OpKind::Read => Some("read"),
        _ if with_output => Some("exec"),
        _ => None,
    };
    if let (Some(label), Some(output)) = (label, &task.output) {
        for line in output.lines() {
            let _ = writeln!(out, "[task-{}:{label}] {line}", task.task);
        }
    }
    let target = task
        .target
        .as_deref()
        .map(|t| format!(" {t}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "[task-{}] {}: {}{} - {}",
        task.task,
        task.status.name(),
        task.op,
        target,
        task.message
    );
    for detail in &task.details {
        let _ = writeln!(out, "    {detail}");
    }
    out
}
