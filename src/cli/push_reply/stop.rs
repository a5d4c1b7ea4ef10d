//! Stopping a `git` that push-reply gave up waiting for, with the
//! processes it started: `git push` over HTTP runs `git remote-http`,
//! which runs `git send-pack`, and a server that hangs leaves that one
//! waiting for an answer that never comes. Stopping `git push` alone left
//! the two running, each with its connection open, for good.

use std::time::{Duration, Instant};

use crate::git::lock::process_stat;

/// Stops git and every process under it: asked to end first (SIGTERM:
/// git removes its lock files and temporary packs), killed a second
/// later if they have not.
pub(super) fn stop(child: &mut std::process::Child) {
    // Found before the signal: once git is gone, its children belong to
    // no one we can tell.
    let under = descendants(child.id());
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        signal(pid, libc::SIGTERM);
        for (pid, _) in &under {
            signal(*pid, libc::SIGTERM);
        }
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(1) {
            if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) && under.iter().all(|p| !alive(p)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    for p in under.iter().filter(|p| alive(p)) {
        signal(p.0, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn signal(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) has no memory-safety preconditions. `pid` is our
    // child, not yet waited for, or a process under it whose start time
    // was checked (`alive`), so it is the process meant.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// A process under git: its pid and its start time.
type Under = (libc::pid_t, u64);

/// Whether process `p` is still the one found (the same start time, not
/// a new process under a reused pid) and not a zombie.
fn alive(p: &Under) -> bool {
    stat(p.0).is_some_and(|(_, state, start)| start == p.1 && state != 'Z')
}

/// The parent, state and start time of process `pid`, from `/proc`.
fn stat(pid: libc::pid_t) -> Option<(libc::pid_t, char, u64)> {
    let p = process_stat(u32::try_from(pid).ok()?)?;
    Some((libc::pid_t::try_from(p.parent).ok()?, p.state, p.start))
}

/// Every process under `pid`, from `/proc` (none where there is none).
fn descendants(pid: u32) -> Vec<Under> {
    let Ok(root) = libc::pid_t::try_from(pid) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let all: Vec<(libc::pid_t, libc::pid_t, u64)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|p| stat(p).map(|(parent, _, start)| (p, parent, start)))
        .collect();
    let mut found: Vec<Under> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for &(p, of, start) in &all {
            if of == parent && !found.iter().any(|f| f.0 == p) {
                found.push((p, start));
                parents.push(p);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_git_takes_the_processes_under_it_along() {
        // sh starts a sleep under it and waits, as git push waits for its
        // transport.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 60 & echo started; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let under = descendants(child.id());
        assert_eq!(under.len(), 1, "{under:?}");
        assert!(alive(&under[0]));
        stop(&mut child);
        // The sleep's parent reaps it: gone, or at most a zombie.
        let started = Instant::now();
        while alive(&under[0]) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(&under[0]), "the process under it was left running");
    }
}
