//! The server's request log, and what it sums up to for `git clada hook
//! stats` (issue 28, for the operator; the command prints [`Summary`]).
//!
//! Every request a hook answers adds one JSON line to
//! `<git dir>/clada/requests.log`: when, who pushed it (as pre-receive
//! recorded it: `clada.pusherVariables`, doc/hooks.md), its branch, its
//! id, its status,
//! the milliseconds its apply took, the milliseconds from the hook's start
//! to that apply (its turn in the branch's queue and the lock, and reading
//! the push), and whether it was recovered (answered by a hook other than
//! the one its push ran). Past 1 MiB the log is renamed to
//! `requests.log.1` (the one before is dropped) and a new one begun: a
//! busy server keeps its last few thousand requests at most.
//!
//! A line is one `write` to a file opened for appending, so hooks writing
//! at once never interleave their lines; a line that cannot be written is
//! not the pusher's problem and is left out.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::git::Repository;

use super::Error;

/// When this hook process started (`mark_start`).
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Remembers the hook's start, from which each request's wait is counted.
pub fn mark_start() {
    let _ = STARTED.set(Instant::now());
}

/// Past this size the log is rotated.
const ROTATE_AT: u64 = 1 << 20;

/// One answered request.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    /// Seconds since the epoch.
    time: u64,
    pusher: Option<String>,
    branch: Option<String>,
    request: String,
    status: String,
    apply_ms: u64,
    wait_ms: u64,
    recovered: bool,
}

fn log_path(repo: &Repository) -> PathBuf {
    repo.git_dir().join("clada").join("requests.log")
}

/// The time a request's answer started, for [`record`].
pub struct Timing {
    began: Instant,
}

impl Timing {
    pub fn start() -> Timing {
        Timing {
            began: Instant::now(),
        }
    }
}

/// Adds the line of request `id` (pushed by `pusher`), answered `status`
/// after `timing`.
#[allow(clippy::too_many_arguments)]
pub fn record(
    repo: &Repository,
    id: &str,
    pusher: Option<&str>,
    branch: Option<&str>,
    status: &str,
    timing: &Timing,
    recovered: bool,
) {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let wait = STARTED.get().map_or(Duration::ZERO, |s| {
        timing.began.saturating_duration_since(*s)
    });
    let line = Line {
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        pusher: pusher.map(str::to_string),
        branch: branch.map(|b| b.strip_prefix("refs/heads/").unwrap_or(b).to_string()),
        request: id.to_string(),
        status: status.to_string(),
        apply_ms: ms(timing.began.elapsed()),
        wait_ms: ms(wait),
        recovered,
    };
    let Ok(mut text) = serde_json::to_string(&line) else {
        return;
    };
    text.push('\n');
    let path = log_path(repo);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= ROTATE_AT) {
        // Two hooks may both rotate: the second renames a short new log
        // over the first's, losing its few lines, never a whole log.
        let _ = std::fs::rename(&path, path.with_extension("log.1"));
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = file.write_all(text.as_bytes());
    }
}

/// The lines of both logs, oldest first; lines that do not read are
/// counted apart.
fn read_lines(path: &Path) -> (Vec<Line>, usize) {
    let mut lines = Vec::new();
    let mut bad = 0;
    for file in [path.with_extension("log.1"), path.to_path_buf()] {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str(l) {
                Ok(line) => lines.push(line),
                Err(_) => bad += 1,
            }
        }
    }
    (lines, bad)
}

/// The `p`th percentile (nearest rank) of sorted `xs`.
pub fn percentile(xs: &[u64], p: f64) -> u64 {
    if xs.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * xs.len() as f64).ceil() as usize;
    xs[rank.clamp(1, xs.len()) - 1]
}

/// What the log says, and the queue now.
pub struct Summary {
    /// Requests logged.
    pub requests: usize,
    /// The first and the last line's time (seconds since the epoch).
    pub span: Option<(u64, u64)>,
    /// Requests by status, in the order of their names.
    pub by_status: Vec<(String, usize)>,
    /// Milliseconds each apply took, sorted.
    pub apply_ms: Vec<u64>,
    /// Milliseconds from each hook's start to its apply, sorted.
    pub wait_ms: Vec<u64>,
    /// Requests answered by a hook other than their push's.
    pub recovered: usize,
    /// Requests waiting under `refs/clada/inbox/` now.
    pub waiting: usize,
    /// Log lines that do not read.
    pub unreadable: usize,
}

/// Sums up the request log of `repo`.
pub fn summary(repo: &Repository) -> Result<Summary, Error> {
    let (lines, bad) = read_lines(&log_path(repo));
    let waiting = repo
        .refs_under(crate::hook::requests::REQUESTS)
        .map_err(|e| Error::new(e.to_string()))?
        .len();
    let mut by_status: std::collections::BTreeMap<&str, usize> = Default::default();
    for l in &lines {
        *by_status.entry(l.status.as_str()).or_default() += 1;
    }
    let sorted = |f: fn(&Line) -> u64| {
        let mut v: Vec<u64> = lines.iter().map(f).collect();
        v.sort_unstable();
        v
    };
    Ok(Summary {
        requests: lines.len(),
        span: match (lines.first(), lines.last()) {
            (Some(a), Some(b)) => Some((a.time, b.time)),
            _ => None,
        },
        by_status: by_status.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        apply_ms: sorted(|l| l.apply_ms),
        wait_ms: sorted(|l| l.wait_ms),
        recovered: lines.iter().filter(|l| l.recovered).count(),
        waiting,
        unreadable: bad,
    })
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn percentiles_are_nearest_rank() {
        let xs: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&xs, 50.0), 50);
        assert_eq!(percentile(&xs, 95.0), 95);
        assert_eq!(percentile(&[7], 95.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }
}
