//! The apply lock: `clada.lock` in the git dir.
//!
//! Owns mutual exclusion between clada processes on one repository. The
//! lock file is created atomically (`create_new`) and holds the holder's
//! process id and start time; a lock whose holder is gone (crashed or
//! killed) is stale and is broken. The holder also keeps the file locked
//! with flock while it holds it, and a waiter sleeps on that lock, woken
//! the moment the holder lets go or dies ([`wait_released`]); where
//! nothing holds it so (an older clada, a file system without flock) the
//! waiter retries with a short backoff, up to the timeout.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File name of the lock inside the git dir.
pub const LOCK_NAME: &str = "clada.lock";

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock_timeout: another clada process holds {path} (pid {holder}); waited {waited:?}")]
    Timeout {
        path: PathBuf,
        holder: String,
        waited: Duration,
    },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A held lock; released (the file removed) when dropped.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    /// The lock file, held locked (flock) while the lock is: what waiters
    /// sleep on ([`wait_released`]). Closed after the file is removed.
    _held: Option<std::fs::File>,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Locks `file` (flock, exclusive) for as long as it stays open, so that
/// processes waiting for its holder wake the moment it lets go or dies
/// ([`wait_released`]); `None` where the file system cannot (waiters then
/// only poll, as they always may).
pub(super) fn hold(file: std::fs::File) -> Option<std::fs::File> {
    // A waiter looking (`try_lock_shared`) holds the file for an instant.
    for _ in 0..5 {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(std::fs::TryLockError::Error(_)) => return None,
        }
    }
    None
}

/// How a wait for a holder ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Released {
    /// The holder let go (or died, or the file is gone) while we waited:
    /// try again at once.
    Now,
    /// Nothing held the file locked: its holder is about to lock it, is
    /// an older clada, or the file system does not lock; poll.
    NotHeld,
    /// Still held after `timeout`.
    Waited,
}

/// Waits up to `timeout` for the holder of `path` (a lock file or a
/// ticket, which its holder keeps locked with flock while it lives) to
/// let go. The lock files and tickets themselves decide who holds what;
/// this only wakes a waiter the moment the holder is done instead of at
/// its next poll (5 to 100 ms later, with eight agents' hooks queued one
/// after another on one branch, idle time in every hand-over).
pub(super) fn wait_released(path: &Path, timeout: Duration) -> Released {
    let Ok(file) = std::fs::File::open(path) else {
        return Released::Now;
    };
    match file.try_lock_shared() {
        Ok(()) => return Released::NotHeld,
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(_)) => return Released::NotHeld,
    }
    // flock cannot time out: a thread waits, and is left waiting when the
    // time is up (it lets go of the file the moment it gets it). Callers
    // wait for all the time they have left, so a process leaves at most
    // one such thread behind per wait that timed out; a holder that dies
    // wakes it as one that lets go does (the system unlocks its files).
    let (sender, receiver) = std::sync::mpsc::channel();
    let waiting = std::thread::Builder::new()
        .name("clada-lock-wait".into())
        .spawn(move || {
            let _ = file.lock_shared();
            let _ = sender.send(());
        });
    if waiting.is_err() {
        std::thread::sleep(timeout.min(Duration::from_millis(5)));
        return Released::Waited;
    }
    match receiver.recv_timeout(timeout) {
        Ok(()) => Released::Now,
        Err(_) => Released::Waited,
    }
}

/// What `/proc/<pid>/stat` says of a process that the lock and push-reply
/// look at.
pub(crate) struct ProcessStat {
    /// Its state (`R`, `S`, `Z` for a zombie…).
    pub state: char,
    pub parent: u32,
    /// When it started, in clock ticks since boot: with the pid, what
    /// tells it from a later process under a reused pid.
    pub start: u64,
}

/// Process `pid`'s state, parent and start time, from `/proc` (`None`
/// where there is no such process, or no `/proc`).
pub(crate) fn process_stat(pid: u32) -> Option<ProcessStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields 3 (state), 4 (parent) and 22 (start time) come after the
    // command name, which is in parentheses and may itself contain spaces.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let start = fields.nth(17)?.parse().ok()?;
    Some(ProcessStat {
        state,
        parent,
        start,
    })
}

/// One turn of a wait for the holder of `path`, up to `left`: woken when
/// it lets go; where it does not hold the file locked, a sleep of `pause`
/// instead (polled as before flock), doubled for the next turn up to
/// `most`.
pub(super) fn wait_or_poll(path: &Path, left: Duration, pause: &mut Duration, most: Duration) {
    if wait_released(path, left) == Released::NotHeld {
        std::thread::sleep((*pause).min(left));
        *pause = (*pause * 2).min(most);
    }
}

/// What identifies a live process: its pid and, where the system tells, its
/// start time (so a reused pid is not mistaken for the holder).
fn identity(pid: u32) -> Option<String> {
    process_stat(pid).map(|p| format!("{pid} {}", p.start))
}

pub(super) fn my_identity() -> String {
    let pid = std::process::id();
    identity(pid).unwrap_or_else(|| format!("{pid} ?"))
}

/// Whether the holder recorded in a lock file is still running.
fn holder_alive(content: &str) -> bool {
    let mut parts = content.split_whitespace();
    let Some(pid) = parts.next().and_then(|p| p.parse::<u32>().ok()) else {
        // Unreadable content: a writer crashed between create and write.
        return false;
    };
    let start = parts.next().unwrap_or("?");
    if !Path::new("/proc/self").exists() {
        // No /proc (macOS, BSDs): whether the pid is in use is all the
        // system says. A reused pid keeps a dead holder's lock for as long
        // as the new process lives; never breaking one would be worse.
        return pid_in_use(pid);
    }
    match identity(pid) {
        // Gone, or hidden from us (/proc mounted with hidepid, another pid
        // namespace): whether the pid is in use tells those apart.
        None => pid_in_use(pid),
        Some(now) => start == "?" || now == format!("{pid} {start}"),
    }
}

/// Whether a process with this pid exists (`kill(pid, 0)`; one we may not
/// signal exists too).
fn pid_in_use(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks; it has no memory-safety
    // preconditions.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A process's claim on a piece of work (a server's pending request): a
/// file holding the claimant's identity, as the lock does, removed when
/// dropped. A claim whose holder died (a killed hook) no longer counts,
/// so another process takes the work over ([`claimed`]).
#[derive(Debug)]
pub struct Claim {
    path: Option<PathBuf>,
}

impl Claim {
    /// Claims `path` for this process (best effort: without the file the
    /// work only looks abandoned sooner, and is then done by another).
    pub fn take(path: PathBuf) -> Claim {
        let path = claim_as(&path, &my_identity()).ok().map(|()| path);
        Claim { path }
    }
}

/// Writes the claim at `path` for the process `identity` names (as
/// [`my_identity`] gives it), in place of any claim there. Written aside
/// and renamed: a reader never sees a claim half written, which would
/// look like no claim (one process taking over another's claim would
/// otherwise leave a moment when the work seems abandoned).
pub fn claim_as(path: &Path, identity: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".{}.new", std::process::id()));
    let aside = PathBuf::from(aside);
    std::fs::write(&aside, identity)
        .and_then(|()| std::fs::rename(&aside, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&aside);
        })
}

/// Removes the claims in `dir` whose holder is gone (a dead claim counts
/// as none: this only keeps the directory small) and that were last
/// written over a minute ago, or at any age when `now` (`hook recover`,
/// which has answered what they held), and claims half written by a
/// process that died (those only after a minute: one being written now
/// looks the same). Best effort.
pub fn sweep_claims(dir: &Path, now: bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60));
        let whole = !entry.file_name().to_string_lossy().ends_with(".new");
        if (old || now && whole) && !claimed(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The identity of the `git receive-pack` this hook runs under: the
/// nearest ancestor whose command is `git-receive-pack` or `git …
/// receive-pack` (the hook's shim and `git clada` stand between; git's
/// HTTP backend, sshd and gitolite above). It lives until the last hook
/// of the push is done, so a claim made for it from pre-receive holds
/// until post-receive takes the work over, and dies with the push when
/// the push is killed. `None` where `/proc` does not tell.
pub fn receiver_identity() -> Option<String> {
    let mut pid = std::process::id();
    for _ in 0..8 {
        pid = process_stat(pid)?.parent;
        if pid <= 1 {
            return None;
        }
        if is_receive_pack(pid) {
            return identity(pid);
        }
    }
    None
}

/// Whether process `pid` is `git-receive-pack`, or `git` running
/// `receive-pack` (as git's HTTP backend starts it).
fn is_receive_pack(pid: u32) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mut args = cmdline.split(|&b| b == 0);
    let program = args.next().unwrap_or_default();
    let name = program.rsplit(|&b| b == b'/').next().unwrap_or_default();
    name == b"git-receive-pack" || (name == b"git" && args.take(8).any(|a| a == b"receive-pack"))
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether a live process holds the claim at `path`.
pub fn claimed(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|content| holder_alive(&content))
}

/// The record of git lock files a reference update is about to take
/// (`clada-ref-intent` in the git dir), emptied when the update is done.
/// A clada killed in between leaves it full; the next one, breaking the
/// dead holder's lock, removes exactly those lock files. The file stays,
/// empty: making it afresh for every update (a server hook makes five
/// per request) costs a new inode each time, which on a busy file system
/// is the dearest part of writing a reference.
pub struct RefIntent {
    path: Option<PathBuf>,
}

/// The intent record's name in the git dir.
const INTENT: &str = "clada-ref-intent";

/// How old a recorded git lock file must be before a breaker removes it:
/// git holds a reference lock for milliseconds, so one this old with its
/// clada dead is that clada's.
const INTENT_LOCK_AGE: Duration = Duration::from_secs(2);

/// How long after the record a lock file it names may have been made
/// (or last written, the index's being written in chunks) to count.
const INTENT_SLACK: Duration = Duration::from_secs(60);

/// How much earlier than the record a lock file may look and still count:
/// two files' timestamps can tick apart by a filesystem's granularity.
const INTENT_TICK: Duration = Duration::from_millis(10);

impl RefIntent {
    /// Records `locks` (best effort: without the record a killed update's
    /// lock files are only named, as before).
    pub fn record(git_dir: &Path, locks: &[PathBuf]) -> RefIntent {
        let path = git_dir.join(INTENT);
        let text: String = locks.iter().map(|l| format!("{}\n", l.display())).collect();
        // Another user's record (a repository shared by several accounts)
        // may not be ours to write: made afresh, it is.
        let written = std::fs::write(&path, &text).or_else(|_| {
            std::fs::remove_file(&path)?;
            std::fs::write(&path, &text)
        });
        let path = written.ok().map(|()| path);
        RefIntent { path }
    }
}

impl Drop for RefIntent {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            empty(path);
        }
    }
}

/// Empties the intent record at `path`, if there is one (never makes it);
/// removes it when it cannot be emptied (another user's).
fn empty(path: &Path) {
    let emptied = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path);
    if emptied.is_err() {
        let _ = std::fs::remove_file(path);
    }
}

/// Removes the git lock files a dead clada recorded that it was taking,
/// once each is [`INTENT_LOCK_AGE`] old (waiting for it, at most that
/// long); returns those it removed.
fn remove_intended_locks(git_dir: &Path) -> Vec<PathBuf> {
    let mut removed: Vec<PathBuf> = Vec::new();
    let intent = git_dir.join(INTENT);
    let Ok(text) = std::fs::read_to_string(&intent) else {
        return removed;
    };
    if text.is_empty() {
        // No update was under way.
        return removed;
    }
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(recorded) = modified(&intent) else {
        return removed;
    };
    for line in text.lines().filter(|l| !l.is_empty()) {
        let lock = PathBuf::from(line);
        let age = |p: &Path| modified(p).and_then(|t| t.elapsed().ok());
        // The dead clada made its locks after recording them (a lock made
        // before the record is another program's, which it was waiting
        // for), and not long after.
        let Some(made) = modified(&lock) else {
            continue;
        };
        let after_record = made.duration_since(recorded).ok().or_else(|| {
            // Timestamps of two files may tick apart by a little.
            recorded
                .duration_since(made)
                .ok()
                .filter(|d| *d <= INTENT_TICK)
                .map(|_| Duration::ZERO)
        });
        if after_record.is_none_or(|d| d > INTENT_SLACK) {
            continue;
        }
        let Some(current) = age(&lock) else {
            continue;
        };
        if current < INTENT_LOCK_AGE {
            std::thread::sleep(INTENT_LOCK_AGE - current);
        }
        if age(&lock).is_some_and(|a| a >= INTENT_LOCK_AGE) && std::fs::remove_file(&lock).is_ok() {
            removed.push(lock);
        }
    }
    empty(&intent);
    removed
}

/// Who holds clada's lock in `git_dir`, as a read-only look (`status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// A running process, by pid.
    Running(String),
    /// A process that is gone (killed): the next command that takes the
    /// lock breaks it.
    Gone(String),
}

/// The holder of the lock in `git_dir`, if there is a lock file.
pub fn holder(git_dir: &Path) -> Option<Holder> {
    let path = git_dir.join(LOCK_NAME);
    let content = std::fs::read_to_string(&path).ok()?;
    let pid = content.split_whitespace().next().unwrap_or("?").to_string();
    Some(if is_stale(&path) {
        Holder::Gone(pid)
    } else {
        Holder::Running(pid)
    })
}

/// Takes the lock in `git_dir`, waiting up to `timeout`.
pub fn acquire(git_dir: &Path, timeout: Duration) -> Result<Lock, LockError> {
    let path = git_dir.join(LOCK_NAME);
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    let mut removed: Vec<PathBuf> = Vec::new();
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                let io = |source| LockError::Io {
                    path: path.clone(),
                    source,
                };
                file.write_all(my_identity().as_bytes()).map_err(io)?;
                let lock = Lock {
                    path,
                    _held: hold(file),
                };
                // Said once the lock is held and the break file gone (a
                // closed stderr's panic then releases the lock as it
                // unwinds); through eprintln!, which a test captures.
                for file in removed {
                    eprintln!(
                        "clada: removed {}, left by a clada command that was killed",
                        file.display()
                    );
                }
                return Ok(lock);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if is_stale(&path) {
                    removed.extend(break_stale(&path));
                    continue;
                }
                let content = std::fs::read_to_string(&path).unwrap_or_default();
                if started.elapsed() >= timeout {
                    return Err(LockError::Timeout {
                        path,
                        holder: content.split_whitespace().next().unwrap_or("?").to_string(),
                        waited: started.elapsed(),
                    });
                }
                let left = timeout.saturating_sub(started.elapsed());
                wait_or_poll(&path, left, &mut pause, Duration::from_millis(100));
            }
            Err(source) => return Err(LockError::Io { path, source }),
        }
    }
}

/// Takes the lock file `path` if no live process holds it, without
/// waiting (one held by a dead process is broken first); `None` when a
/// live one holds it.
pub fn try_acquire(path: &Path) -> Result<Option<Lock>, LockError> {
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut file) => {
                let io = |source| LockError::Io {
                    path: path.to_path_buf(),
                    source,
                };
                file.write_all(my_identity().as_bytes()).map_err(io)?;
                return Ok(Some(Lock {
                    path: path.to_path_buf(),
                    _held: hold(file),
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if !is_stale(path) {
                    return Ok(None);
                }
                break_stale(path);
            }
            Err(source) => {
                return Err(LockError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(None)
}

/// Whether the lock at `path` belongs to a process that is gone. A file
/// that is still empty may be being written right now: it is only judged
/// once it has content or is a few seconds old.
pub(super) fn is_stale(path: &Path) -> bool {
    let Ok(content) = std::fs::read_to_string(path) else {
        return false;
    };
    let young = content.is_empty()
        && std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age < Duration::from_secs(2));
    !young && !holder_alive(&content)
}

/// Removes a stale lock. Two processes may find the same stale lock at
/// once; without care the slower one would remove the lock the faster one
/// has just taken. So breaking happens under a second lock file, and the
/// lock is judged again under it before it is removed. Returns the git
/// lock files the dead holder left that were removed with it.
fn break_stale(path: &Path) -> Vec<PathBuf> {
    let mut removed: Vec<PathBuf> = Vec::new();
    let breaker = path.with_extension("lock.break");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&breaker)
    {
        Ok(_) => {
            if is_stale(path) {
                // The dead holder may have died holding one of git's lock
                // files: those it recorded taking are its own.
                if let Some(git_dir) = path.parent() {
                    removed = remove_intended_locks(git_dir);
                }
                let _ = std::fs::remove_file(path);
            }
            let _ = std::fs::remove_file(&breaker);
        }
        Err(_) => {
            // Someone else is breaking it. A breaker left by a crash in
            // this tiny window is removed once it is clearly old.
            let old = std::fs::metadata(&breaker)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(10));
            if old {
                let _ = std::fs::remove_file(&breaker);
            } else {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_is_in_use_while_its_process_lives() {
        // What holders are judged by where there is no /proc.
        assert!(pid_in_use(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_in_use(pid), "a reaped child's pid {pid}");
        assert!(!pid_in_use(0) && !pid_in_use(u32::MAX));
    }

    #[test]
    fn only_claims_long_dead_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = format!("{} 1", child.id());
        child.wait().unwrap();
        let age = |name: &str, secs: u64| {
            let when = std::time::SystemTime::now() - Duration::from_secs(secs);
            std::fs::File::options()
                .write(true)
                .open(dir.path().join(name))
                .unwrap()
                .set_modified(when)
                .unwrap();
        };
        claim_as(&dir.path().join("dead-old"), &dead).unwrap();
        age("dead-old", 120);
        claim_as(&dir.path().join("dead-new"), &dead).unwrap();
        claim_as(&dir.path().join("live-old"), &my_identity()).unwrap();
        age("live-old", 120);
        std::fs::write(dir.path().join("half.123.new"), "").unwrap();
        age("half.123.new", 120);
        assert!(claimed(&dir.path().join("live-old")));
        assert!(!claimed(&dir.path().join("dead-old")));
        std::fs::write(dir.path().join("half.456.new"), "").unwrap();
        let left = || {
            let mut left: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            left.sort();
            left
        };
        sweep_claims(dir.path(), false);
        assert_eq!(left(), ["dead-new", "half.456.new", "live-old"]);
        // `hook recover`: dead claims of any age, but not what may be
        // being written.
        sweep_claims(dir.path(), true);
        assert_eq!(left(), ["half.456.new", "live-old"]);
    }

    #[test]
    fn the_receiver_is_an_ancestor_running_receive_pack() {
        // This test process runs under no receive-pack.
        assert_eq!(receiver_identity(), None);
        // A process is found by its command line.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5", "receive-pack"])
            .spawn()
            .unwrap();
        assert!(!is_receive_pack(child.id()), "sh is not git");
        child.kill().unwrap();
        child.wait().unwrap();
        let repo = tempfile::tempdir().unwrap();
        let init = std::process::Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(repo.path())
            .status()
            .unwrap();
        assert!(init.success());
        // It advertises its references, then waits for the client.
        let mut receiving = std::process::Command::new("git")
            .arg("receive-pack")
            .arg(repo.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Running once it has begun its advertisement.
        let mut said = [0u8; 4];
        std::io::Read::read_exact(receiving.stdout.as_mut().unwrap(), &mut said).unwrap();
        let found = is_receive_pack(receiving.id());
        receiving.kill().unwrap();
        receiving.wait().unwrap();
        assert!(found);
        assert_eq!(
            process_stat(std::process::id()).map(|p| p.parent),
            Some(std::os::unix::process::parent_id())
        );
    }

    #[test]
    fn a_waiter_is_woken_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_NAME);
        let held = acquire(dir.path(), Duration::from_secs(1)).unwrap();
        assert_eq!(
            wait_released(&path, Duration::from_millis(30)),
            Released::Waited
        );
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        let started = Instant::now();
        assert_eq!(wait_released(&path, Duration::from_secs(30)), Released::Now);
        assert!(started.elapsed() < Duration::from_secs(20));
        letting_go.join().unwrap();
        // A file nobody holds locked (an older clada's lock) is polled.
        std::fs::write(&path, my_identity()).unwrap();
        assert_eq!(
            wait_released(&path, Duration::from_secs(30)),
            Released::NotHeld
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(wait_released(&path, Duration::from_secs(30)), Released::Now);
    }

    #[test]
    fn second_holder_times_out_and_release_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path(), Duration::from_secs(1)).unwrap();
        let err = acquire(dir.path(), Duration::from_millis(50)).unwrap_err();
        assert!(matches!(err, LockError::Timeout { .. }));
        drop(first);
        assert!(acquire(dir.path(), Duration::from_millis(50)).is_ok());
    }

    #[test]
    fn breaking_a_dead_holders_lock_removes_the_git_locks_it_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        let (head, branch, other) = (
            git.join("HEAD.lock"),
            git.join("refs/heads/main.lock"),
            git.join("refs/heads/other.lock"),
        );
        let old = std::time::SystemTime::now() - Duration::from_secs(60);
        for lock in [&head, &branch, &other] {
            std::fs::File::create(lock)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        // A lock made long before the record is not the dead clada's.
        let older = git.join("refs/heads/older.lock");
        std::fs::File::create(&older)
            .unwrap()
            .set_modified(old - Duration::from_secs(30))
            .unwrap();
        // A killed clada recorded HEAD's and main's locks (and the older
        // one), not other's, at the time it took them.
        std::mem::forget(RefIntent::record(
            git,
            &[head.clone(), branch.clone(), older.clone()],
        ));
        std::fs::File::options()
            .write(true)
            .open(git.join(INTENT))
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::write(git.join(LOCK_NAME), "0 123").unwrap();
        let lock = acquire(git, Duration::from_secs(1)).unwrap();
        assert!(!head.exists() && !branch.exists());
        assert!(
            other.exists(),
            "a lock it did not record may be a running git's"
        );
        // Emptied (it stays: remade for every update, it would cost an
        // inode each time), so the next breaker finds nothing to remove.
        assert_eq!(std::fs::read_to_string(git.join(INTENT)).unwrap(), "");
        drop(lock);
    }

    #[test]
    fn a_dead_holder_is_told_from_a_running_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(holder(dir.path()), None);
        // pid 0 is never a process that can hold it.
        std::fs::write(dir.path().join(LOCK_NAME), "0 123").unwrap();
        assert_eq!(holder(dir.path()), Some(Holder::Gone("0".into())));
        let lock = acquire(dir.path(), Duration::from_secs(1)).unwrap();
        let me = std::process::id().to_string();
        assert_eq!(holder(dir.path()), Some(Holder::Running(me)));
        drop(lock);
    }

    #[test]
    fn a_dead_holders_lock_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        // A pid far above any real one: no such process.
        std::fs::write(dir.path().join(LOCK_NAME), "4000000000 123").unwrap();
        assert!(acquire(dir.path(), Duration::from_millis(50)).is_ok());
        // Garbage from a crash between create and write, old enough.
        std::fs::write(dir.path().join(LOCK_NAME), "").unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join(LOCK_NAME))
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(acquire(dir.path(), Duration::from_millis(50)).is_ok());
    }
}
