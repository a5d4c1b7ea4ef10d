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
#[derive(Debug, Clone)]
pub struct Limits {
    /// Killed after this long (`--timeout`).
    pub timeout: Duration,
    /// Also killed at this instant (`--total-timeout`), if set.
    pub deadline: Option<Instant>,
    /// Bytes of output kept (`--max-output`); the rest is dropped.
    pub max_output: usize,
    /// Killed (with its group) as soon as this is set: the caller gave
    /// up on the apply (an MCP client's `notifications/cancelled`).
    pub cancel: Option<Cancel>,
}

/// A flag another thread sets to stop the commands of one apply: the
/// running one is killed with its process group, none starts after.
#[derive(Debug, Clone, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Whether `other` is this same flag (a clone of it).
    pub fn is(&self, other: &Cancel) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Killed by us for running past a limit.
    pub timed_out: bool,
    /// Killed by us because the apply was cancelled ([`Limits::cancel`]).
    pub cancelled: bool,
    /// stdout and stderr interleaved as they arrived, up to the limit.
    pub output: Vec<u8>,
    pub truncated: bool,
}

impl Ran {
    pub fn success(&self) -> bool {
        !self.timed_out && !self.cancelled && self.code == Some(0)
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

/// Runs `words` in `cwd` with `env` added; `on_line` receives each output
/// line (without its line end) as it arrives.
pub fn run(
    words: &[String],
    cwd: &Path,
    limits: Limits,
    env: &[(&str, std::ffi::OsString)],
    mut on_line: impl FnMut(&str),
) -> Result<Ran, SpawnError> {
    let program = resolve(&words[0]).ok_or_else(|| SpawnError::NotFound(words[0].clone()))?;
    let mut command = Command::new(&program);
    command
        // The name as written, as a shell would pass it (messages say `cat:`).
        .arg0(&words[0])
        .args(&words[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for var in GIT_REDIRECTS {
        command.env_remove(var);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    on_interrupt_kill_the_running_group();
    // Signals wait until the group is known, so Ctrl-C can never fall
    // between the start and the record (the child's mask is reset).
    let blocked = block_signals();
    let spawned = command.spawn();
    if let Ok(child) = &spawned {
        RUNNING_GROUP.store(child.id() as i32, Ordering::SeqCst);
    }
    restore_signals(blocked);
    let mut child = spawned.map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            SpawnError::NotFound(words[0].clone())
        } else {
            SpawnError::Start {
                program: words[0].clone(),
                source,
            }
        }
    })?;
    let group = child.id() as i32;
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
        cancelled: false,
        output: Vec::new(),
        truncated: false,
    };
    let mut partial = Vec::new();
    let mut exited = None;
    // After the command ends, its output is read for a moment more; a
    // process that left the group (setsid) and kept the pipes open must
    // not hold the apply (and its lock) forever.
    let mut drain_until = None;
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
        if drain_until.is_some_and(|t| Instant::now() >= t) {
            break;
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
            } else if limits.cancel.as_ref().is_some_and(Cancel::is_set) {
                ran.cancelled = true;
                kill_group(group);
                exited = child.wait().ok();
            }
            if exited.is_some() {
                drain_until = Some(Instant::now() + DRAIN);
            }
        }
    }
    RUNNING_GROUP.store(0, Ordering::SeqCst);
    // Readers still blocked on a pipe someone else holds are left to end
    // with the process.
    for reader in readers {
        if reader.is_finished() {
            let _ = reader.join();
        }
    }
    if !partial.is_empty() {
        on_line(&String::from_utf8_lossy(&partial));
    }
    ran.code = exited.and_then(|s| s.code());
    Ok(ran)
}

/// Adds `chunk` to the captured output (up to `max`) and passes complete
/// lines on. What is captured is exactly what is passed on: at the limit,
/// the kept part of a cut line is passed on as a last line.
fn take(
    ran: &mut Ran,
    partial: &mut Vec<u8>,
    chunk: &[u8],
    max: usize,
    on_line: &mut impl FnMut(&str),
) {
    if ran.truncated {
        return;
    }
    let room = max.saturating_sub(ran.output.len());
    let kept = &chunk[..chunk.len().min(room)];
    ran.output.extend_from_slice(kept);
    partial.extend_from_slice(kept);
    while let Some(end) = memchr::memchr(b'\n', partial) {
        let line: Vec<u8> = partial.drain(..=end).collect();
        on_line(String::from_utf8_lossy(&line[..line.len() - 1]).trim_end_matches('\r'));
    }
    if chunk.len() > room {
        ran.truncated = true;
        if !partial.is_empty() {
            on_line(&String::from_utf8_lossy(partial));
            partial.clear();
        }
    }
}

/// How long output is still read after the command ended.
const DRAIN: Duration = Duration::from_millis(500);

/// The program to start: a name is looked up in the absolute entries of
/// `PATH` only (a relative entry would resolve inside the tree the reply
/// writes); a path with a slash is taken as written. push-reply finds
/// git's remote helper with it too.
pub(crate) fn resolve(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    if program.contains('/') {
        return Some(program.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

const INTERRUPTS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn block_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; the calls only read and write it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in INTERRUPTS {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

fn restore_signals(old: libc::sigset_t) {
    // SAFETY: restores a mask read by block_signals.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
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
        }
        // After the kill: writing to a terminal that is stopped (Ctrl-S)
        // could block.
        crate::progress::erase_from_signal_handler();
        // SAFETY: as above.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
    INSTALL.call_once(|| {
        for signal in INTERRUPTS {
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
            cancel: None,
        }
    }

    #[test]
    fn a_cancel_kills_the_running_group_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = Cancel::default();
        let setter = cancel.clone();
        let started = Instant::now();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            setter.set();
        });
        let ran = run(
            &words("sleep 20"),
            dir.path(),
            Limits {
                cancel: Some(cancel),
                ..limits()
            },
            &[],
            |_| {},
        )
        .unwrap();
        assert!(ran.cancelled && !ran.timed_out && !ran.success());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn captures_output_lines_and_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut lines = Vec::new();
        let ran = run(&words("echo hello world"), dir.path(), limits(), &[], |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert!(ran.success());
        assert_eq!(lines, ["hello world"]);
        let ran = run(&words("false"), dir.path(), limits(), &[], |_| {}).unwrap();
        assert_eq!(ran.code, Some(1));
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            run(
                &words("no-such-program-x"),
                dir.path(),
                limits(),
                &[],
                |_| {}
            ),
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
            &[],
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
            &[],
            |_| {},
        )
        .unwrap();
        assert!(ran.success() && ran.truncated);
        assert_eq!(ran.output.len(), 1000);
    }

    /// Streamed lines are what is captured: the kept part is never lost,
    /// even when the limit falls inside one chunk of output.
    #[test]
    fn streamed_lines_hold_the_kept_part_of_a_truncated_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut streamed = Vec::new();
        let ran = run(
            &words("printf 'one\ntwo\nthree\n'"),
            dir.path(),
            Limits {
                max_output: 9,
                ..limits()
            },
            &[],
            |l| streamed.push(l.to_string()),
        )
        .unwrap();
        assert!(ran.truncated);
        assert_eq!(ran.output, b"one\ntwo\nt");
        assert_eq!(streamed, ["one", "two", "t"]);
    }

    #[test]
    fn stdin_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(&words("cat"), dir.path(), limits(), &[], |_| {}).unwrap();
        assert!(ran.success() && ran.output.is_empty());
    }
}
