//! Per-branch queues of a server's hooks: requests for one branch are
//! applied one at a time in order of arrival, requests for different
//! branches at the same time (issue 27, doc/replay.md).
//!
//! A hook takes a ticket in the queue of each branch its requests name as
//! soon as it knows them: a file `clada/queues/<branch, hex>/<arrival>-<pid>`
//! in the git dir holding the holder's identity (as `clada.lock` does).
//! Once every older ticket in each of its queues is gone (a ticket whose
//! holder died, a killed hook's, is removed by the next one to look), it
//! takes the branches' locks (`clada/queues/<branch, hex>.lock`, as
//! `clada.lock` is taken and broken), all of them or none: a ticket only
//! orders (two hooks may take theirs in the same instant, each before it
//! sees the other's); the locks exclude. Taken all at once, never one
//! while waiting for another, they cannot deadlock. Tickets and branch
//! locks are held locked with flock while held, so a hook waiting behind
//! one sleeps until it goes (`lock::wait_released`) instead of polling.
//!
//! Holding a branch says nothing about shared references (the notes,
//! results, rejected and request references): those are written under
//! `clada.lock`, taken for each such write only (`server/receive.rs`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::lock::{is_stale, my_identity};

/// Where the queues are, in the git dir.
const QUEUES: &str = "clada/queues";

/// Tickets in the queues of some branches, taken at arrival; removed when
/// dropped.
#[derive(Debug)]
pub struct Tickets {
    held: Vec<PathBuf>,
    /// The tickets' files, held locked (flock) while they are: a hook
    /// waiting behind one is woken when it goes (`lock::wait_released`).
    /// Closed after the files are removed.
    _open: Vec<std::fs::File>,
    /// The branches' locks, once [`Tickets::wait`] has them.
    locks: Vec<super::lock::Lock>,
}

impl Drop for Tickets {
    fn drop(&mut self) {
        for path in &self.held {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A queue's directory name: the branch's name in hex (any reference name
/// becomes one path component).
fn queue_dir(git_dir: &Path, branch: &str) -> PathBuf {
    let hex: String = branch.bytes().map(|b| format!("{b:02x}")).collect();
    git_dir.join(QUEUES).join(hex)
}

impl Tickets {
    /// Takes a ticket in the queue of each of `branches` (full names), all
    /// with this moment as their arrival. Best effort: a queue whose
    /// ticket cannot be written is not waited for (its branch's
    /// compare-and-swap still keeps applies apart).
    pub fn take(git_dir: &Path, branches: &[String]) -> Tickets {
        let arrival = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{arrival:032}-{:010}", std::process::id());
        let mut held = Vec::new();
        let mut open = Vec::new();
        let mut branches = branches.to_vec();
        branches.sort();
        branches.dedup();
        for branch in branches {
            let dir = queue_dir(git_dir, &branch);
            let path = dir.join(&name);
            let made = std::fs::create_dir_all(&dir).and_then(|()| {
                let mut file = std::fs::File::create(&path)?;
                std::io::Write::write_all(&mut file, my_identity().as_bytes())?;
                Ok(file)
            });
            if let Ok(file) = made {
                held.push(path);
                open.extend(super::lock::hold(file));
            }
        }
        Tickets {
            held,
            _open: open,
            locks: Vec::new(),
        }
    }

    /// Waits until every ticket is first in its queue, up to `timeout`;
    /// `Err` with the branch still waited for (its queue's directory)
    /// when the time is up.
    pub fn wait(&mut self, timeout: Duration) -> Result<(), String> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            let busy = match self.held.iter().find_map(|mine| first_ahead(mine)) {
                Some(ahead) => ahead,
                None => match self.lock_all() {
                    Ok(None) => return Ok(()),
                    Ok(Some(busy)) => busy,
                    Err(e) => return Err(e),
                },
            };
            if started.elapsed() >= timeout {
                return Err(format!(
                    "lock_timeout: another hook has been applying requests for the same branch for {:?} ({})",
                    started.elapsed(),
                    busy.display()
                ));
            }
            let left = timeout.saturating_sub(started.elapsed());
            // Woken when the hook ahead is done.
            super::lock::wait_or_poll(&busy, left, &mut pause, Duration::from_millis(50));
        }
    }

    /// Takes every branch's lock, or none: `Some(path)` of one a live
    /// process holds.
    fn lock_all(&mut self) -> Result<Option<PathBuf>, String> {
        let mut locks = Vec::new();
        for mine in &self.held {
            let Some(dir) = mine.parent() else { continue };
            let path = dir.with_extension("lock");
            match super::lock::try_acquire(&path) {
                Ok(Some(lock)) => locks.push(lock),
                // Those taken are let go (dropped) before waiting.
                Ok(None) => return Ok(Some(path)),
                Err(e) => return Err(e.to_string()),
            }
        }
        self.locks = locks;
        Ok(None)
    }
}

/// The oldest live ticket ahead of `mine` in its queue, if any; dead
/// holders' tickets met on the way are removed.
fn first_ahead(mine: &Path) -> Option<PathBuf> {
    let dir = mine.parent()?;
    let me = mine.file_name()?.to_str()?;
    let mut ahead: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.as_str() < me)
        .collect();
    ahead.sort();
    for name in ahead {
        let path = dir.join(&name);
        if is_stale(&path) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        return Some(path);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_waits_for_older_ones_in_its_queue_only() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        let main = vec!["refs/heads/main".to_string()];
        let mut first = Tickets::take(git, &main);
        std::thread::sleep(Duration::from_millis(2));
        let mut second = Tickets::take(git, &main);
        let mut other = Tickets::take(git, &["refs/heads/other".to_string()]);
        assert!(first.wait(Duration::from_millis(10)).is_ok());
        assert!(other.wait(Duration::from_millis(10)).is_ok());
        let err = second.wait(Duration::from_millis(30)).unwrap_err();
        assert!(err.starts_with("lock_timeout"), "{err}");
        drop(first);
        assert!(second.wait(Duration::from_millis(10)).is_ok());
    }

    #[test]
    fn a_dead_holders_ticket_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        let queue = queue_dir(git, "refs/heads/main");
        std::fs::create_dir_all(&queue).unwrap();
        // Older than any ticket taken now, held by no process.
        let dead = queue.join(format!("{:032}-{:010}", 1, 0));
        std::fs::write(&dead, "0 123").unwrap();
        let mut mine = Tickets::take(git, &["refs/heads/main".to_string()]);
        assert!(mine.wait(Duration::from_millis(10)).is_ok());
        assert!(!dead.exists());
        drop(mine);
        assert_eq!(std::fs::read_dir(&queue).unwrap().count(), 0);
        assert!(!queue.with_extension("lock").exists());
    }

    #[test]
    fn two_tickets_at_the_head_at_once_are_kept_apart_by_the_lock() {
        // The race a ticket alone cannot settle: each hook took its ticket
        // before it saw the other's, so both find nothing ahead.
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        let main = vec!["refs/heads/main".to_string()];
        let mut first = Tickets::take(git, &main);
        assert!(first.wait(Duration::from_millis(10)).is_ok());
        let mut second = Tickets {
            held: vec![queue_dir(git, "refs/heads/main").join(format!("{:032}-{:010}", 0, 1))],
            _open: Vec::new(),
            locks: Vec::new(),
        };
        std::fs::write(&second.held[0], my_identity()).unwrap();
        let err = second.wait(Duration::from_millis(30)).unwrap_err();
        assert!(err.contains(".lock"), "{err}");
        drop(first);
        assert!(second.wait(Duration::from_millis(10)).is_ok());
    }

    #[test]
    fn a_ticket_behind_another_is_woken_when_that_one_goes() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().to_path_buf();
        let main = vec!["refs/heads/main".to_string()];
        let mut first = Tickets::take(&git, &main);
        assert!(first.wait(Duration::from_millis(10)).is_ok());
        std::thread::sleep(Duration::from_millis(2));
        let mut second = Tickets::take(&git, &main);
        let ahead = first.held[0].clone();
        assert_eq!(
            super::super::lock::wait_released(&ahead, Duration::from_millis(20)),
            super::super::lock::Released::Waited,
            "the first holds its ticket locked"
        );
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(first);
        });
        let started = Instant::now();
        assert!(second.wait(Duration::from_secs(30)).is_ok());
        assert!(started.elapsed() < Duration::from_secs(20));
        letting_go.join().unwrap();
    }
}
