//! Crash safety and concurrency of the history commands.
//!
//! The binary under test is a debug build, so its fault points are live:
//! `CLADA_FAULT=<point>` aborts the process there, as a crash or `kill -9`
//! would, and `CLADA_PAUSE=<point>:<path>` stops it there until the test
//! creates `<path>.go`. Each crash test runs a command that aborts at one
//! point, checks that nothing became unreachable, runs the commands a user
//! would run next, and compares the end state with a run without a crash.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::history_fixture::{Repo, write_reply};

/// Uncommitted work of every kind, then two applies that change and
/// create several files (so a switch has several files to write).
fn applied() -> Repo {
    let r = Repo::new(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("sub/c.txt", "c\n")]);
    r.write("a.txt", "a edited\n");
    r.write("new.txt", "untracked\n");
    r.write("staged.txt", "staged\n");
    r.git(&["add", "staged.txt"]);
    r.apply(&format!(
        "{}{}{}",
        write_reply("b.txt", "b from reply 1\n"),
        write_reply("sub/c.txt", "c from reply 1\n"),
        write_reply("sub/d.txt", "d from reply 1\n")
    ));
    r.apply(&format!(
        "{}{}",
        write_reply("b.txt", "b from reply 2\n"),
        write_reply("e/f.txt", "f from reply 2\n")
    ));
    r
}

fn undone() -> Repo {
    let r = applied();
    r.run(&["undo"]).success();
    r
}

fn stepped_back() -> Repo {
    let r = applied();
    r.write("mine.txt", "saved work\n");
    r.run(&["step-back", "2"]).success();
    r
}

/// What the user sees: files, status, where HEAD is.
#[derive(Debug, PartialEq, Eq)]
struct State {
    files: BTreeMap<String, String>,
    status: String,
    head: String,
    main: String,
}

fn state(r: &Repo) -> State {
    State {
        files: r.worktree(),
        status: r.status(),
        head: if r.detached() {
            format!("detached {}", r.rev("HEAD"))
        } else {
            r.git(&["symbolic-ref", "HEAD"])
        },
        main: r.rev("main"),
    }
}

/// Every blob reachable from a ref, a reflog, the index or the working
/// tree, by content.
fn contents(r: &Repo) -> BTreeSet<Vec<u8>> {
    use std::io::Write as _;
    let objects = r.git(&[
        "rev-list",
        "--objects",
        "--all",
        "--reflog",
        "--indexed-objects",
    ]);
    let ids: String = objects
        .lines()
        .map(|l| format!("{}\n", l.split(' ').next().unwrap()))
        .collect();
    let mut child = crate::common::git_command(r.path(), &["cat-file", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ids.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap().stdout;
    let mut found: BTreeSet<Vec<u8>> = r.worktree().into_values().map(String::into_bytes).collect();
    // Each object: "<id> <type> <size>\n<content>\n".
    let mut rest = &out[..];
    while let Some(eol) = rest.iter().position(|&b| b == b'\n') {
        let header = String::from_utf8_lossy(&rest[..eol]).into_owned();
        let fields: Vec<&str> = header.split(' ').collect();
        let size: usize = fields[2].parse().unwrap();
        let content = &rest[eol + 1..eol + 1 + size];
        if fields[1] == "blob" {
            found.insert(content.to_vec());
        }
        rest = &rest[eol + 2 + size..];
    }
    found
}

fn run_with(r: &Repo, args: &[&str], env: (&str, String)) -> Output {
    r.clada(args).env(env.0, env.1).output().unwrap()
}

struct Case {
    setup: fn() -> Repo,
    command: &'static [&'static str],
    point: &'static str,
    /// What the user runs after the crash; the last one must succeed.
    next: &'static [&'static [&'static str]],
}

fn crash(case: &Case) {
    let reference = (case.setup)();
    reference.run(case.command).success();
    let want = state(&reference);

    let r = (case.setup)();
    let before = contents(&r);
    let out = run_with(&r, case.command, ("CLADA_FAULT", case.point.to_string()));
    assert_eq!(
        out.status.code(),
        None,
        "{:?} should abort at {}: {}",
        case.command,
        case.point,
        String::from_utf8_lossy(&out.stderr)
    );
    let after = contents(&r);
    let lost: Vec<String> = before
        .difference(&after)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    assert!(lost.is_empty(), "a crash at {} lost {lost:?}", case.point);
    r.run(&["status"]).success();
    for (i, next) in case.next.iter().enumerate() {
        let a = r.clada(next).output().unwrap();
        if i + 1 == case.next.len() {
            assert!(
                a.status.success(),
                "{next:?} after a crash at {}: {}",
                case.point,
                String::from_utf8_lossy(&a.stderr)
            );
        }
    }
    assert_eq!(state(&r), want, "after a crash at {}", case.point);
    assert!(!r.path().join(".git/clada-switch").exists());
    r.assert_fsck_clean();
}

const AFTER_UNDO: &[&[&str]] = &[&["squash", "--dry-run"]];

#[test]
fn crash_at_locked() {
    crash(&Case {
        setup: applied,
        command: &["undo"],
        point: "locked",
        next: &[&["undo"]],
    });
}

#[test]
fn crash_at_undo_kept() {
    crash(&Case {
        setup: applied,
        command: &["undo"],
        point: "undo-kept",
        next: &[&["undo"]],
    });
}

#[test]
fn crash_at_undo_moved() {
    crash(&Case {
        setup: applied,
        command: &["undo"],
        point: "undo-moved",
        next: AFTER_UNDO,
    });
}

#[test]
fn crash_at_switch_file() {
    crash(&Case {
        setup: applied,
        command: &["undo", "2"],
        point: "switch-file",
        next: AFTER_UNDO,
    });
}

#[test]
fn crash_at_switch_index_written() {
    crash(&Case {
        setup: applied,
        command: &["undo"],
        point: "switch-index-written",
        next: AFTER_UNDO,
    });
}

#[test]
fn crash_at_redo_moved() {
    crash(&Case {
        setup: undone,
        command: &["redo"],
        point: "redo-moved",
        next: AFTER_UNDO,
    });
}

#[test]
fn crash_at_squash_kept() {
    crash(&Case {
        setup: applied,
        command: &["squash"],
        point: "squash-kept",
        next: &[&["squash"]],
    });
}

#[test]
fn crash_at_step_saved() {
    crash(&Case {
        setup: applied,
        command: &["step-back"],
        point: "step-saved",
        // The session whose work is still in place is closed, then the
        // step is taken.
        next: &[&["step-back"]],
    });
}

#[test]
fn crash_at_step_moved_going_back() {
    crash(&Case {
        setup: applied,
        command: &["step-back", "2"],
        point: "step-moved",
        // Refused (HEAD is detached), but it finishes the switch first.
        next: &[&["undo"], &["status"]],
    });
}

#[test]
fn crash_at_step_moved_arriving_at_the_tip() {
    crash(&Case {
        setup: stepped_back,
        command: &["step-forward", "--all"],
        point: "step-moved",
        // The files are restored by the first command; the session, whose
        // work is then in place, is closed by step-forward.
        next: &[&["squash", "--dry-run"], &["step-forward"]],
    });
}

#[test]
fn crash_at_step_restored() {
    crash(&Case {
        setup: stepped_back,
        command: &["step-forward", "--all"],
        point: "step-restored",
        next: &[&["step-forward"]],
    });
}

#[test]
fn every_history_fault_point_has_a_crash_test() {
    let covered = [
        "undo-kept",
        "undo-moved",
        "redo-moved",
        "squash-kept",
        "step-saved",
        "step-moved",
        "step-restored",
        "switch-file",
        "switch-index-written",
    ];
    assert_eq!(clada::fault::HISTORY_POINTS, covered);
}

/// A command paused at a fault point, in a thread; dropping it lets it go.
struct Paused {
    base: PathBuf,
    handle: Option<std::thread::JoinHandle<Output>>,
}

impl Paused {
    fn start(r: &Repo, args: &[&str], point: &str) -> Paused {
        let base = r.path().parent().unwrap().join(format!("pause-{point}"));
        let mut cmd = r.clada(args);
        cmd.env("CLADA_PAUSE", format!("{point}:{}", base.display()));
        let handle = std::thread::spawn(move || cmd.output().unwrap());
        let reached = PathBuf::from(format!("{}.reached", base.display()));
        let start = Instant::now();
        while !reached.exists() {
            assert!(!handle.is_finished(), "ended before reaching {point}");
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "never reached {point}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Paused {
            base,
            handle: Some(handle),
        }
    }

    fn release(mut self) -> Output {
        std::fs::write(format!("{}.go", self.base.display()), b"").unwrap();
        self.handle.take().unwrap().join().unwrap()
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("{}.go", self.base.display()), b"");
    }
}

#[test]
fn a_second_command_waits_for_the_lock_and_times_out() {
    let r = applied();
    let undo = Paused::start(&r, &["undo"], "locked");
    let out = r
        .clada(&["squash", "--lock-timeout", "200ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lock_timeout"));
    // Reading commands do not wait, and say who holds the lock.
    let status = r.run(&["status"]).success();
    assert!(String::from_utf8_lossy(&status.get_output().stdout).contains("holds the lock"));
    assert!(undo.release().status.success());
}

#[test]
fn a_branch_moved_during_undo_is_left_alone_and_exits_3() {
    let r = applied();
    let elsewhere = r.rev("HEAD~1");
    let files = r.worktree();
    let undo = Paused::start(&r, &["undo"], "undo-kept");
    r.git(&["update-ref", "refs/heads/main", &elsewhere]);
    let out = undo.release();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(r.rev("main"), elsewhere, "the other writer's update stands");
    assert_eq!(r.worktree(), files, "no file touched");
    assert!(!r.path().join(".git/clada-switch").exists());
}

#[test]
fn a_file_edited_during_a_switch_is_kept() {
    let r = applied();
    // Pause after the first file of the switch; then the user edits a
    // file the switch has not reached yet.
    let undo = Paused::start(&r, &["undo"], "switch-file");
    // Removals come first (e/f.txt), then writes (b.txt).
    r.write("b.txt", "edited during the undo\n");
    let out = undo.release();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("kept b.txt"));
    assert_eq!(r.read("b.txt").as_deref(), Some("edited during the undo\n"));
    assert_eq!(r.read("e/f.txt"), None);
    assert_eq!(r.status(), " M b.txt");
}

/// A switch cut short whose finish fails (git's index.lock held by another
/// program) keeps its journal and says so: dropped, the index would keep
/// the undone apply's content while HEAD and the working tree hold the
/// base. Once the lock is gone the next command finishes it.
#[test]
fn a_switch_that_cannot_be_finished_keeps_its_journal() {
    let reference = applied();
    reference.run(&["undo"]).success();
    let want = state(&reference);

    let r = applied();
    let out = run_with(&r, &["undo"], ("CLADA_FAULT", "switch-file".to_string()));
    assert_eq!(out.status.code(), None);
    let journal = r.path().join(".git/clada-switch");
    assert!(journal.exists());
    let index_lock = r.path().join(".git/index.lock");
    std::fs::write(&index_lock, "").unwrap();
    let blocked = r.clada(&["squash", "--dry-run"]).output().unwrap();
    assert_eq!(blocked.status.code(), Some(2));
    let said = String::from_utf8_lossy(&blocked.stderr);
    assert!(said.contains("cannot be finished"), "{said}");
    assert!(said.contains("clada-switch"), "{said}");
    assert!(journal.exists(), "the journal must survive a failed finish");
    std::fs::remove_file(&index_lock).unwrap();
    r.run(&["status"]).success();
    let done = r.clada(&["squash", "--dry-run"]).output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(!journal.exists());
    assert_eq!(state(&r), want);
    r.assert_fsck_clean();
}
