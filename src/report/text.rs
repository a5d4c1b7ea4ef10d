//! The text form of the report: `[task-N] STATUS: OP target - message`,
//! detail lines indented by four spaces.

use std::fmt::Write as _;

use super::TaskReport;

/// The line(s) of one task, its block's operations first.
pub fn task_lines(task: &TaskReport) -> String {
    let mut out = String::new();
    for child in &task.operations {
        out.push_str(&task_lines(child));
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
