//! `git clada hook stats`: the server's request log summed up
//! (`server::log`), printed for the operator.

use crate::cli::{CliError, Outcome, write_stdout};
use crate::git::Repository;
use crate::server::log::{percentile, summary};

/// `git clada hook stats`: what the log says, and the queue now.
pub fn run_stats(repo: &Repository) -> Result<Outcome, CliError> {
    let sum = summary(repo)?;
    let span = match sum.span {
        Some((first, last)) => format!(" from {first} to {last} (seconds since the epoch)"),
        None => String::new(),
    };
    let (apply, wait) = (&sum.apply_ms, &sum.wait_ms);
    write_stdout(|w| {
        writeln!(w, "requests: {}{span}", sum.requests)?;
        let statuses: Vec<String> = sum
            .by_status
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect();
        writeln!(
            w,
            "outcomes: {}",
            if statuses.is_empty() {
                "none".into()
            } else {
                statuses.join(", ")
            }
        )?;
        writeln!(
            w,
            "apply ms: p50 {}, p95 {}, max {}",
            percentile(apply, 50.0),
            percentile(apply, 95.0),
            apply.last().copied().unwrap_or(0)
        )?;
        writeln!(
            w,
            "wait ms (queue, lock, reading the push): p50 {}, p95 {}, max {}",
            percentile(wait, 50.0),
            percentile(wait, 95.0),
            wait.last().copied().unwrap_or(0)
        )?;
        writeln!(w, "recovered (answered by another hook): {}", sum.recovered)?;
        writeln!(w, "waiting now (queue depth): {}", sum.waiting)?;
        if sum.unreadable > 0 {
            writeln!(w, "unreadable log lines: {}", sum.unreadable)?;
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}
