//! Running one command with limits, in its own process group.
//!
//! Owns apply.md §6's process hygiene: no shell; stdin empty; the
//! environment inherited minus the variables that would redirect git; the
//! command in a new process group that is killed whole on timeout — and
//! after the command exits, so no background child outlives it; output
//! captured up to a limit (the command goes on, the rest is dropped and
//! `[output truncated]` noted) and passed on line by line as it arrives.

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Variables that would make git inside a command act on another
/// repository, index or object store than the working tree's own.
pub const GIT_REDIRECTS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// Limits of one command.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Killed after this long (`--timeout`).
    pub timeout: Duration,
    /// Also killed at this instant (`--total-timeout`), if set.
    pub deadline: Option<Instant>,
    /// Bytes of output kept (`--max-output`); the rest is dropped.
    pub max_output: usize,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Killed by us for running past a limit.
    pub timed_out: bool,
    /// stdout and stderr interleaved as they arrived, up to the limit.
    pub output: Vec<u8>,
    pub truncated: bool,
}

impl Ran {
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }

    /// The last `lines` lines of the output, for error reports.
    pub fn tail(&self, lines: usize) -> String {
        let text = String::from_utf8_lossy(&self.output);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("command not found: {0}")]
    NotFound(String),
    #[error("cannot start {program}: {source}")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// Runs `words` in `cwd`; `on_line` receives each output line (without
/// its line end) as it arrives.
pub fn run(
    words: &[String],
    cwd: &Path,
    limits: Limits,
    mut on_line: impl FnMut(&str),
) -> Result<Ran, SpawnError> {
    let program = &words[0];
    let mut command = Command::new(program);
    command
        .args(&words[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for var in GIT_REDIRECTS {
        command.env_remove(var);
    }
    on_interrupt_kill_the_running_group();
    let mut child = command.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            SpawnError::NotFound(program.clone())
        } else {
            SpawnError::Start {
                program: program.clone(),
                source,
            }
        }
    })?;
    let group = child.id() as i32;
    RUNNING_GROUP.store(group, Ordering::SeqCst);
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut stream| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        })
    })
    .collect();
    drop(tx);

    let started = Instant::now();
    let stop_at = limits.deadline.map_or(started + limits.timeout, |d| {
        d.min(started + limits.timeout)
    });
    let mut ran = Ran {
        code: None,
        timed_out: false,
        output: Vec::new(),
        truncated: false,
    };
    let mut partial = Vec::new();
    let mut exited = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(chunk) => take(
                &mut ran,
                &mut partial,
                &chunk,
                limits.max_output,
                &mut on_line,
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) if exited.is_some() => break,
            Err(_) => {}
        }
        if exited.is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                exited = Some(status);
                // Whatever the command left running in its group goes too:
                // no orphans, and the pipes close so the readers finish.
                kill_group(group);
            } else if Instant::now() >= stop_at {
                ran.timed_out = true;
                kill_group(group);
                exited = child.wait().ok();
            }
        }
    }
    RUNNING_GROUP.store(0, Ordering::SeqCst);
    for reader in readers {
        let _ = reader.join();
    }
    if !partial.is_empty() {
        on_line(&String::from_utf8_lossy(&partial));
    }
    ran.code = exited.and_then(|s| s.code());
    Ok(ran)
}

/// Adds `chunk` to the captured output (up to `max`) and passes complete
/// lines on.
fn take(
    ran: &mut Ran,
    partial: &mut Vec<u8>,
    chunk: &[u8],
    max: usize,
    on_line: &mut impl FnMut(&str),
) {
    let room = max.saturating_sub(ran.output.len());
    if chunk.len() > room {
        ran.output.extend_from_slice(&chunk[..room]);
        ran.truncated = true;
    } else {
        ran.output.extend_from_slice(chunk);
    }
    if ran.truncated {
        return;
    }
    partial.extend_from_slice(chunk);
    while let Some(end) = memchr::memchr(b'\n', partial) {
        let line: Vec<u8> = partial.drain(..=end).collect();
        on_line(String::from_utf8_lossy(&line[..line.len() - 1]).trim_end_matches('\r'));
    }
}

/// The process group of the command running now (0: none).
static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

/// A command runs in its own process group, so Ctrl-C on the terminal
/// reaches clada only: without this, clada would die and leave the
/// command running. On SIGINT, SIGTERM or SIGHUP the running group is
/// killed, then clada dies of the signal as it would have (the lock is
/// then stale and broken by the next apply; the transaction is safe to
/// cut at any point).
fn on_interrupt_kill_the_running_group() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    extern "C" fn handler(signal: libc::c_int) {
        let group = RUNNING_GROUP.load(Ordering::SeqCst);
        // SAFETY: kill, signal and raise are async-signal-safe.
        unsafe {
            if group > 0 {
                libc::kill(-group, libc::SIGKILL);
            }
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
    INSTALL.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installs a handler that only calls async-signal-safe
            // functions and reads an atomic.
            unsafe {
                libc::signal(signal, handler as *const () as libc::sighandler_t);
            }
        }
    });
}

fn kill_group(group: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group; it
    // has no memory-safety preconditions.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shell_words::split(s).unwrap()
    }

    fn limits() -> Limits {
        Limits {
            timeout: Duration::from_secs(10),
            deadline: None,
            max_output: 1 << 20,
        }
    }

    #[test]
    fn captures_output_lines_and_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut lines = Vec::new();
        let ran = run(&words("echo hello world"), dir.path(), limits(), |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert!(ran.success());
        assert_eq!(lines, ["hello world"]);
        let ran = run(&words("false"), dir.path(), limits(), |_| {}).unwrap();
        assert_eq!(ran.code, Some(1));
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            run(&words("no-such-program-x"), dir.path(), limits(), |_| {}),
            Err(SpawnError::NotFound(_))
        ));
    }

    #[test]
    fn timeout_kills_the_whole_group_including_background_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-alive");
        // A child that forks a grandchild which would create a file late.
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let started = Instant::now();
        let ran = run(
            &["sh".to_string(), "-c".to_string(), script],
            dir.path(),
            Limits {
                timeout: Duration::from_millis(300),
                ..limits()
            },
            |_| {},
        )
        .unwrap();
        assert!(ran.timed_out && !ran.success());
        assert!(started.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the grandchild outlived the timeout");
    }

    #[test]
    fn output_over_the_limit_is_truncated_and_the_command_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            &words("seq 1 100000"),
            dir.path(),
            Limits {
                max_output: 1000,
                ..limits()
            },
            |_| {},
        )
        .unwrap();
        assert!(ran.success() && ran.truncated);
        assert_eq!(ran.output.len(), 1000);
    }

    #[test]
    fn stdin_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(&words("cat"), dir.path(), limits(), |_| {}).unwrap();
        assert!(ran.success() && ran.output.is_empty());
    }
}
