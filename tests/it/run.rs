//! End-to-end tests of RUN and `--verify`: commands in the scratch working
//! tree, what they change in the post commit, the policy against hostile
//! replies, limits, approvals and verification.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{apply, clada, commit, git, json, out, read, repo, scratch};

fn run_block(lines: &str) -> String {
    format!("<---RUN--->\n{lines}\n<---END--->\n")
}

/// Approves `line` in the repository (through the `allow` command).
fn allow(dir: &Path, line: &str) {
    clada(dir, dir).args(["allow", line]).assert().success();
}

/// Approves `line` in the team's `.clada/allowed-commands.json`.
fn allow_shared(dir: &Path, line: &str) {
    clada(dir, dir)
        .args(["allow", "--shared", line])
        .assert()
        .success();
}

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// Applies `reply` (which must fail) with a JSON report; the first task.
fn failed_task(dir: &Path, reply: &str) -> serde_json::Value {
    let a = apply(dir, &["--format", "json", "-"], reply).code(1);
    json(&a)["tasks"][0].clone()
}

/// The post commit's files (`git ls-tree -r --name-only`), one string.
fn files_at(dir: &Path, rev: &str) -> String {
    out(dir, &["ls-tree", "-r", "--name-only", rev])
}

#[test]
fn a_run_that_creates_and_deletes_files_is_committed_and_reaches_the_working_tree() {
    let dir = repo(&[
        ("a.txt", "a\n"),
        ("old/gone.txt", "bye\n"),
        (".gitignore", "build/\n"),
    ]);
    let reply = format!(
        "<---WRITE file=\"new.txt\"--->\nnew\n<---END--->\n{}",
        run_block(
            "cat new.txt\ncp new.txt copy.txt\nmv a.txt moved.txt\nrm -r old\nmkdir -p build\ntouch build/out.o"
        )
    );
    let a = apply(dir.path(), &["-"], &reply).success();
    let text = stdout(&a);
    assert!(text.contains("[task-2:exec] new\n"), "{text}");
    assert!(
        text.contains("[task-2] SUCCESS: RUN cat new.txt - ran 6 commands"),
        "{text}"
    );
    assert!(
        text.contains("    changed: copy.txt, moved.txt\n    removed: a.txt, old/gone.txt\n"),
        "{text}"
    );
    assert_eq!(
        files_at(dir.path(), "HEAD"),
        ".gitignore\ncopy.txt\nmoved.txt\nnew.txt"
    );
    // The user's working tree follows, deletions included, and is clean.
    assert_eq!(read(dir.path(), "copy.txt"), "new\n");
    assert!(!dir.path().join("a.txt").exists());
    assert!(!dir.path().join("old").exists());
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    // Ignored output stays in the scratch tree, not in the commit or in
    // the user's tree.
    assert!(!dir.path().join("build").exists());
    assert!(dir.path().join(".git/clada/scratch/build/out.o").exists());
    assert!(out(dir.path(), &["log", "-1", "--format=%s"]).contains("run cat new.txt"));
}

#[test]
fn the_scratch_tree_is_reused_and_follows_the_branch() {
    let dir = repo(&[("a.txt", "one\n"), (".gitignore", "cache/\n")]);
    apply(
        dir.path(),
        &["-"],
        &run_block("mkdir -p cache\ntouch cache/kept"),
    )
    .success();
    // The user commits a change of their own, and leaves one uncommitted.
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    commit(dir.path(), &["-qam", "two"]);
    std::fs::write(dir.path().join("b.txt"), "mine\n").unwrap();
    let a = apply(dir.path(), &["-"], &run_block("cat a.txt b.txt\nls cache")).success();
    let text = stdout(&a);
    assert!(
        text.contains("[task-1:exec] two\n[task-1:exec] mine\n[task-1:exec] kept\n"),
        "{text}"
    );
    // Nothing changed: no post commit, and the user's file is as it was.
    assert_eq!(read(dir.path(), "b.txt"), "mine\n");
}

#[test]
fn git_works_inside_the_scratch_tree() {
    let dir = repo(&[("a.txt", "a\n")]);
    let reply = format!(
        "<---WRITE file=\"a.txt\"--->\nb\n<---END--->\n{}",
        run_block("git status --porcelain\ngit log --format=%s")
    );
    let text = stdout(&apply(dir.path(), &["-"], &reply).success());
    assert!(text.contains("[task-2:exec] M  a.txt"), "{text}");
    assert!(text.contains("[task-2:exec] initial"), "{text}");
}

#[test]
fn shell_syntax_is_refused_and_nothing_runs() {
    let dir = repo(&[("a.txt", "a\n")]);
    for line in [
        "touch pwned | cat",
        "touch pwned && echo x",
        "touch pwned ; echo x",
        "echo $(touch pwned)",
        "echo `touch pwned`",
        "cat a.txt > pwned",
        "touch pwned &",
    ] {
        let task = failed_task(dir.path(), &run_block(line));
        assert_eq!(task["error_type"], "command_not_allowed", "{line}: {task}");
        assert!(!dir.path().join("pwned").exists(), "{line}");
        assert!(
            !dir.path().join(".git/clada/scratch/pwned").exists(),
            "{line}"
        );
    }
}

#[test]
fn path_commands_cannot_leave_the_tree_or_touch_git_or_clada() {
    let outside = scratch();
    let dir = repo(&[("a.txt", "a\n"), ("sub/b.txt", "b\n")]);
    let victim = outside.path().join("victim");
    let victim = victim.to_str().unwrap();
    for line in [
        format!("touch {victim}"),
        "touch ../../../../escaped".to_string(),
        "mkdir -p ../../../../escaped-dir".to_string(),
        format!("cp a.txt {victim}"),
        format!("mv a.txt {victim}"),
        "rm -rf .git".to_string(),
        "touch .git/hooks/pre-commit".to_string(),
        "touch .clada/allowed-commands.json".to_string(),
        "cp a.txt .clada/config.toml".to_string(),
        "rm -rf .".to_string(),
    ] {
        let task = failed_task(dir.path(), &run_block(&line));
        assert_eq!(task["error_type"], "command_not_allowed", "{line}: {task}");
    }
    assert!(!outside.path().join("victim").exists());
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
    // A RUN dir is a path like any other.
    let task = failed_task(
        dir.path(),
        "<---RUN dir=\"sub\"--->\nrm ../../x\n<---END--->\n",
    );
    assert_eq!(task["error_type"], "command_not_allowed");
    let a = apply(
        dir.path(),
        &["-"],
        "<---RUN dir=\"../..\"--->\nls\n<---END--->\n",
    )
    .code(1);
    assert!(stdout(&a).contains("path_escape"), "{}", stdout(&a));
    // Inside, the same commands work, relative to dir; `..` never does.
    let task = failed_task(
        dir.path(),
        "<---RUN dir=\"sub\"--->\ncp b.txt ../c.txt\n<---END--->\n",
    );
    assert_eq!(task["error_type"], "command_not_allowed");
    let a = apply(
        dir.path(),
        &["-"],
        "<---RUN dir=\"sub\"--->\ncp b.txt c.txt\n<---END--->\n",
    )
    .success();
    assert!(stdout(&a).contains("changed: sub/c.txt"), "{}", stdout(&a));
    assert_eq!(read(dir.path(), "sub/c.txt"), "b\n");
}

#[test]
fn a_link_in_the_tree_cannot_carry_a_write_outside() {
    let outside = scratch();
    let dir = repo(&[("a.txt", "a\n")]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    git(dir.path(), &["add", "out"]);
    commit(dir.path(), &["-qm", "link"]);
    for line in [
        "cp a.txt out/x",
        "mv a.txt out",
        "touch out/y",
        "mkdir out/d",
    ] {
        let task = failed_task(dir.path(), &run_block(line));
        assert_eq!(task["error_type"], "command_not_allowed", "{line}");
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_reply_cannot_approve_its_own_commands() {
    let dir = repo(&[("a.txt", "a\n")]);
    // Writing the store is refused before anything runs, and the command
    // it tried to approve still needs approval.
    let reply = format!(
        "<---WRITE file=\".clada/allowed-commands.json\"--->\n{{\"commands\": [\"sh -c 'touch pwned'\"]}}\n<---END--->\n{}",
        run_block("sh -c 'touch pwned'")
    );
    let a = apply(dir.path(), &["--format", "json", "-"], &reply).code(1);
    let report = json(&a);
    assert_eq!(report["tasks"][0]["status"], "SKIP", "{report}");
    assert_eq!(report["tasks"][1]["error_type"], "command_not_allowed");
    assert!(!dir.path().join("pwned").exists());
    assert!(!dir.path().join(".clada").exists());
    // An approved command that changes .clada has nothing kept.
    allow_shared(
        dir.path(),
        "sh -c 'echo {\"commands\":[\"rm -rf /\"]} > .clada/allowed-commands.json; touch made'",
    );
    git(dir.path(), &["add", ".clada"]);
    commit(dir.path(), &["-qm", "allow"]);
    let store = read(dir.path(), ".clada/allowed-commands.json");
    let a = apply(
        dir.path(),
        &["--format", "json", "-"],
        &run_block(
            "sh -c 'echo {\"commands\":[\"rm -rf /\"]} > .clada/allowed-commands.json; touch made'",
        ),
    )
    .code(1);
    let report = json(&a);
    assert_eq!(
        report["tasks"][0]["error_type"], "protected_path",
        "{report}"
    );
    assert_eq!(read(dir.path(), ".clada/allowed-commands.json"), store);
    assert!(!dir.path().join("made").exists());
    assert_eq!(out(dir.path(), &["log", "-1", "--format=%s"]), "allow");
}

#[test]
fn approvals_come_from_the_state_before_the_apply() {
    let dir = repo(&[("a.txt", "a\n")]);
    let a = apply(dir.path(), &["-"], &run_block("sh -c 'echo approved'")).code(1);
    assert!(
        stdout(&a).contains("git clada allow 'sh -c '\\''echo approved'\\'''"),
        "{}",
        stdout(&a)
    );
    // The user's own approval, in the git dir.
    allow(dir.path(), "sh -c 'echo approved'");
    assert!(!dir.path().join(".clada").exists());
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    let listed = clada(dir.path(), dir.path())
        .args(["allow", "--list"])
        .assert()
        .success();
    assert!(stdout(&listed).starts_with("sh -c 'echo approved'\t(added "));
    let a = apply(dir.path(), &["-"], &run_block("sh -c 'echo approved'")).success();
    assert!(
        stdout(&a).contains("[task-1:exec] approved"),
        "{}",
        stdout(&a)
    );
    // Exact lines only.
    apply(dir.path(), &["-"], &run_block("sh -c 'echo  approved'")).code(1);
    clada(dir.path(), dir.path())
        .args(["allow", "--remove", "sh -c 'echo approved'"])
        .assert()
        .success();
    apply(dir.path(), &["-"], &run_block("sh -c 'echo approved'")).code(1);
    clada(dir.path(), dir.path())
        .args(["allow", "--remove", "sh -c 'echo approved'"])
        .assert()
        .code(2);
    // The team's store, approved but not committed: the user's working
    // tree is the state before the apply.
    allow_shared(dir.path(), "sh -c 'echo approved'");
    let listed = clada(dir.path(), dir.path())
        .args(["allow", "--list"])
        .assert()
        .success();
    assert!(stdout(&listed).starts_with("sh -c 'echo approved'\t(shared, added "));
    apply(dir.path(), &["-"], &run_block("sh -c 'echo approved'")).success();
    clada(dir.path(), dir.path())
        .args(["allow", "--remove", "sh -c 'echo approved'"])
        .assert()
        .code(2);
    clada(dir.path(), dir.path())
        .args(["allow", "--remove", "--shared", "sh -c 'echo approved'"])
        .assert()
        .success();
    clada(dir.path(), dir.path())
        .args(["allow", "echo a | sh"])
        .assert()
        .code(2);
}

#[test]
fn a_timeout_kills_the_command_and_everything_it_started() {
    let dir = repo(&[("a.txt", "a\n")]);
    let outside = scratch();
    let marker = outside.path().join("child-alive");
    let line = format!("sh -c '(sleep 2; touch {}) & sleep 30'", marker.display());
    allow(dir.path(), &line);
    let started = Instant::now();
    let a = apply(
        dir.path(),
        &["--timeout", "500ms", "--format", "json", "-"],
        &run_block(&line),
    )
    .code(1);
    assert!(started.elapsed() < Duration::from_secs(10));
    let report = json(&a);
    assert_eq!(report["tasks"][0]["error_type"], "exec_timeout", "{report}");
    assert!(
        report["tasks"][0]["message"]
            .as_str()
            .unwrap()
            .contains("killed after 500ms"),
        "{report}"
    );
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!marker.exists(), "a child outlived the timeout");
}

#[test]
fn the_total_timeout_stops_later_commands() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow(dir.path(), "sleep 5");
    let reply = format!("{}{}", run_block("sleep 5"), run_block("ls"));
    let a = apply(
        dir.path(),
        &["--total-timeout", "300ms", "--format", "json", "-"],
        &reply,
    )
    .code(1);
    let report = json(&a);
    assert_eq!(report["tasks"][0]["error_type"], "exec_timeout");
    assert_eq!(report["tasks"][1]["error_type"], "exec_timeout");
    assert!(
        report["tasks"][1]["message"]
            .as_str()
            .unwrap()
            .contains("was not started"),
        "{report}"
    );
}

#[test]
fn an_output_flood_is_truncated_and_the_command_goes_on() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow(dir.path(), "sh -c 'seq 1 200000; touch finished'");
    let a = apply(
        dir.path(),
        &["--max-output", "1KB", "--format", "json", "-"],
        &run_block("sh -c 'seq 1 200000; touch finished'"),
    )
    .success();
    let report = json(&a);
    let output = report["tasks"][0]["output"].as_str().unwrap();
    assert!(output.len() < 1100, "{}", output.len());
    assert!(output.ends_with("[output truncated]\n"), "{output}");
    assert_eq!(read(dir.path(), "finished"), "");
}

#[test]
fn a_failing_command_reports_its_exit_code_and_output_tail() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow(
        dir.path(),
        "sh -c 'echo compiling; echo error: boom >&2; exit 101'",
    );
    let a = apply(
        dir.path(),
        &["-"],
        &run_block("sh -c 'echo compiling; echo error: boom >&2; exit 101'"),
    )
    .code(1);
    let text = stdout(&a);
    assert!(text.contains("exec_failed: "), "{text}");
    assert!(text.contains("failed: exit code 101"), "{text}");
    assert!(text.contains("    | error: boom"), "{text}");
    let a = apply(dir.path(), &["-"], &run_block("no-such-program-xyz")).code(1);
    assert!(stdout(&a).contains("needs approval"), "{}", stdout(&a));
}

#[test]
fn a_failed_block_rolls_back_what_its_run_changed() {
    let dir = repo(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let reply = format!(
        "<---TASKS--->\n{}<---SEARCH file=\"b.txt\"--->\nmissing\n<---REPLACE--->\nx\n<---END--->\n<---END--->\n<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n",
        run_block("touch made-by-run.txt\nrm a.txt")
    );
    let a = apply(dir.path(), &["-"], &reply).code(1);
    assert!(stdout(&a).contains("block rolled back"), "{}", stdout(&a));
    assert_eq!(files_at(dir.path(), "HEAD"), "a.txt\nb.txt\nc.txt");
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
    assert!(!dir.path().join("made-by-run.txt").exists());
}

#[test]
fn modes_and_links_made_by_commands_are_committed() {
    let dir = repo(&[("run.sh", "echo hi\n")]);
    allow(dir.path(), "chmod +x run.sh");
    allow(dir.path(), "ln -s run.sh link");
    apply(
        dir.path(),
        &["-"],
        &run_block("chmod +x run.sh\nln -s run.sh link"),
    )
    .success();
    let tree = out(dir.path(), &["ls-tree", "HEAD"]);
    assert!(tree.contains("100755 blob"), "{tree}");
    assert!(tree.contains("120000 blob"), "{tree}");
    assert_eq!(
        std::fs::read_link(dir.path().join("link")).unwrap(),
        Path::new("run.sh")
    );
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn verify_decides_whether_the_branch_moves() {
    let dir = repo(&[("a.txt", "a\n")]);
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    let edit = "<---WRITE file=\"a.txt\"--->\nbroken\n<---END--->\n";
    let a = apply(dir.path(), &["--verify", "grep -q fine a.txt", "-"], edit).code(1);
    let text = stdout(&a);
    assert!(
        text.contains("[verify] FAILED: grep -q fine a.txt - verify_failed"),
        "{text}"
    );
    assert!(text.contains("refs/clada/rejected/1"), "{text}");
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    // A dry run says what the apply would: rejected, and nothing kept.
    let dry = apply(
        dir.path(),
        &[
            "--dry-run",
            "--format",
            "json",
            "--verify",
            "grep -q fine a.txt",
            "-",
        ],
        edit,
    )
    .code(1);
    let report = json(&dry);
    assert_eq!(report["status"], "rejected", "{report}");
    assert_eq!(report["rejected_ref"], serde_json::Value::Null, "{report}");
    assert!(
        report["message"]
            .as_str()
            .is_some_and(|m| m.contains("it would not be applied")),
        "{report}"
    );
    assert_eq!(
        out(dir.path(), &["for-each-ref", "refs/clada/rejected/"])
            .lines()
            .count(),
        1
    );
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
    assert_eq!(
        out(dir.path(), &["show", "refs/clada/rejected/1:a.txt"]),
        "broken"
    );
    // From git config, passing.
    git(
        dir.path(),
        &["config", "clada.verify", "grep -q fine a.txt"],
    );
    let a = apply(
        dir.path(),
        &["--format", "json", "-"],
        "<---WRITE file=\"a.txt\"--->\nfine\n<---END--->\n",
    )
    .success();
    let report = json(&a);
    assert_eq!(report["verify"]["passed"], true, "{report}");
    assert_eq!(read(dir.path(), "a.txt"), "fine\n");
}

#[test]
fn no_git_runs_commands_in_place() {
    let dir = scratch();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let a = clada(dir.path(), dir.path())
        .args(["apply", "--no-git", "-"])
        .write_stdin(run_block("cp a.txt b.txt\ncat b.txt"))
        .assert()
        .success();
    assert!(stdout(&a).contains("[task-1:exec] a"), "{}", stdout(&a));
    assert_eq!(read(dir.path(), "b.txt"), "a\n");
}

#[test]
fn output_modes_place_command_output() {
    let dir = repo(&[("a.txt", "a\n")]);
    let a = apply(
        dir.path(),
        &["--output-mode", "buffer", "-"],
        &run_block("cat a.txt"),
    )
    .success();
    assert!(
        stdout(&a).starts_with("[task-1:exec] a\n[task-1] SUCCESS: RUN cat a.txt"),
        "{}",
        stdout(&a)
    );
    let a = apply(
        dir.path(),
        &["--output-mode", "silent", "-"],
        &run_block("cat a.txt"),
    )
    .success();
    assert!(!stdout(&a).contains("[task-1"), "{}", stdout(&a));
}

/// Runs `git clada apply reply.md` with stdin and stderr on a new
/// pseudo-terminal, typing `answer` there; returns stdout and what the
/// terminal showed.
fn apply_on_a_terminal(dir: &Path, reply: &str, answer: &str) -> (String, String) {
    use std::io::{Read as _, Write as _};
    use std::os::fd::{FromRawFd as _, OwnedFd};
    std::fs::write(dir.join("reply.md"), reply).unwrap();
    let (mut master, slave) = unsafe {
        let (mut m, mut s) = (0, 0);
        // SAFETY: openpty fills two new descriptors, owned from here on.
        let rc = libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        assert_eq!(rc, 0, "openpty");
        (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s))
    };
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_git-clada"))
        .args(["apply", "reply.md"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .stdin(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(slave);
    // The terminal keeps the typed line until the program reads it.
    master.write_all(answer.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let mut shown = Vec::new();
    // Reading ends with an error (EIO) once no one has the terminal open.
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        shown.extend_from_slice(&buf[..n]);
    }
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&shown).into_owned(),
    )
}

#[test]
fn on_a_terminal_the_user_is_asked_yes_no_or_always() {
    let dir = repo(&[("a.txt", "a\n")]);
    let reply = run_block("sh -c 'echo asked'");
    let (stdout, shown) = apply_on_a_terminal(dir.path(), &reply, "y\n");
    assert!(
        shown.contains("wants to run `sh -c 'echo asked'`"),
        "{shown}"
    );
    assert!(stdout.contains("[task-1:exec] asked"), "{stdout}");
    assert!(!dir.path().join(".clada").exists());

    let (stdout, _) = apply_on_a_terminal(dir.path(), &reply, "n\n");
    assert!(stdout.contains("declined by the user"), "{stdout}");
    assert!(!stdout.contains("[task-1:exec] asked"), "{stdout}");

    let (stdout, shown) = apply_on_a_terminal(dir.path(), &reply, "a\n");
    assert!(stdout.contains("[task-1:exec] asked"), "{stdout}");
    assert!(
        shown.contains("clada-allowed-commands.json: sh -c 'echo asked' (yours"),
        "{shown}"
    );
    // Recorded in the git dir, not the working tree: no untracked file
    // to block undo or to slip into the next pre snapshot.
    assert!(!dir.path().join(".clada").exists());
    assert!(read(dir.path(), ".git/clada-allowed-commands.json").contains("sh -c 'echo asked'"));
    // The next apply runs it without asking, even without a terminal.
    let again = apply(dir.path(), &["-"], &reply).success();
    assert!(String::from_utf8_lossy(&again.get_output().stdout).contains("[task-1:exec] asked"));
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "?? reply.md");
}

#[test]
fn a_command_that_stages_in_the_scratch_tree_still_has_its_changes_kept() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow(dir.path(), "git add new.txt a.txt");
    apply(
        dir.path(),
        &["-"],
        &run_block("touch new.txt\ncp new.txt a.txt\ngit add new.txt a.txt"),
    )
    .success();
    // (The approval is in the git dir: nothing of it in the commit.)
    assert_eq!(files_at(dir.path(), "HEAD"), "a.txt\nnew.txt");
    assert_eq!(read(dir.path(), "a.txt"), "");
    // The next apply brings the scratch tree back in line regardless.
    let a = apply(dir.path(), &["-"], &run_block("git status --porcelain")).success();
    assert!(!stdout(&a).contains("[task-1:exec]"), "{}", stdout(&a));
}

#[test]
fn shared_directories_are_linked_in_and_never_committed() {
    let dir = repo(&[
        ("a.txt", "a\n"),
        (".gitignore", "node_modules/\nnode_modules\n"),
    ]);
    std::fs::create_dir(dir.path().join("node_modules")).unwrap();
    std::fs::write(dir.path().join("node_modules/dep.js"), "dep\n").unwrap();
    git(dir.path(), &["config", "clada.sharedDirs", "node_modules"]);
    let a = apply(
        dir.path(),
        &["-"],
        &run_block("cat node_modules/dep.js\ncp a.txt b.txt"),
    )
    .success();
    assert!(stdout(&a).contains("[task-1:exec] dep"), "{}", stdout(&a));
    assert!(stdout(&a).contains("changed: b.txt"), "{}", stdout(&a));
    assert_eq!(files_at(dir.path(), "HEAD"), ".gitignore\na.txt\nb.txt");
    // Even when the link itself is not ignored, it is left out.
    std::fs::write(dir.path().join(".gitignore"), "").unwrap();
    git(dir.path(), &["add", ".gitignore"]);
    commit(dir.path(), &["-qm", "unignore"]);
    std::fs::remove_dir_all(dir.path().join("node_modules")).unwrap();
    std::fs::create_dir(dir.path().join("node_modules")).unwrap();
    std::fs::write(dir.path().join("node_modules/x"), "x\n").unwrap();
    git(dir.path(), &["config", "clada.sharedDirs", "node_modules"]);
    // node_modules is now untracked and not ignored: it goes into the pre
    // snapshot like any of the user's files, but the scratch link to it
    // is not what gets committed.
    apply(dir.path(), &["-"], &run_block("cp a.txt c.txt")).success();
    let tree = out(dir.path(), &["ls-tree", "-r", "HEAD"]);
    assert!(!tree.contains("120000"), "{tree}");
}

#[test]
fn commands_get_the_environment_without_git_redirections() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow(dir.path(), "env");
    let a = clada(dir.path(), dir.path())
        .env("GIT_QUARANTINE_PATH", "/nonexistent")
        .env("GIT_PREFIX", "sub/")
        .env("CLADA_TEST_KEEP", "kept")
        .args(["apply", "-"])
        .write_stdin(run_block("env"))
        .assert()
        .success();
    let text = stdout(&a);
    assert!(
        text.contains("[task-1:exec] CLADA_TEST_KEEP=kept"),
        "{text}"
    );
    assert!(!text.contains("GIT_QUARANTINE_PATH"), "{text}");
    assert!(!text.contains("GIT_PREFIX"), "{text}");
}

#[test]
fn ctrl_c_during_a_command_kills_it_too() {
    use std::io::Write as _;
    let dir = repo(&[("a.txt", "a\n")]);
    let outside = scratch();
    let marker = outside.path().join("still-running");
    let line = format!("sh -c 'sleep 2; touch {}'", marker.display());
    allow(dir.path(), &line);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_git-clada"))
        .args(["apply", "-"])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(run_block(&line).as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: sends SIGINT to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert!(!status.success());
    std::thread::sleep(Duration::from_millis(2000));
    assert!(!marker.exists(), "the command outlived clada");
    // The lock of the killed apply is stale: the next apply goes ahead.
    apply(dir.path(), &["-"], &run_block("ls")).success();
}

#[test]
fn a_run_dir_through_a_link_is_refused() {
    let outside = scratch();
    let dir = repo(&[("a.txt", "a\n")]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    git(dir.path(), &["add", "out"]);
    commit(dir.path(), &["-qm", "link"]);
    let task = failed_task(dir.path(), "<---RUN dir=\"out\"--->\nls\n<---END--->\n");
    assert_eq!(task["error_type"], "symlink_not_allowed", "{task}");
    assert!(task.get("output").is_none(), "{task}");
}

#[test]
fn review_escapes_are_closed() {
    let outside = scratch();
    let victim = outside.path().join("victim");
    let dir = repo(&[("a.txt", "a\n"), ("sub/b.txt", "b\n")]);
    // An absolute path after a RUN dir; `..` anywhere; options that carry
    // a target or make links; backslashes.
    for (attrs, line) in [
        (" dir=\"sub\"", format!("cp b.txt {}", victim.display())),
        ("", "cp -s sub lnk".to_string()),
        ("", "cp -l a.txt hard".to_string()),
        ("", "cp a.txt sub/../c.txt".to_string()),
        ("", "cp -t../.. a.txt".to_string()),
        ("", "cp --targ=../.. a.txt".to_string()),
        ("", "cp -vt../.. a.txt".to_string()),
        ("", "cp -bSt a.txt .gi".to_string()),
        ("", "cp --backup --suf=a a.txt .clad".to_string()),
        (" dir=\"sub\"", "cp --parents ../a.txt ..".to_string()),
        ("", "cp a.txt 'l\\k'".to_string()),
        ("", "cp -r . sub".to_string()),
        ("", "xxd a.txt -d/x".to_string()),
    ] {
        let reply = format!("<---RUN{attrs}--->\n{line}\n<---END--->\n");
        let task = failed_task(dir.path(), &reply);
        assert_eq!(task["error_type"], "command_not_allowed", "{line}: {task}");
    }
    assert!(!victim.exists());
    assert_eq!(files_at(dir.path(), "HEAD"), "a.txt\nsub/b.txt");
}

#[test]
fn a_directory_dressed_up_as_a_repository_is_not_used_by_git() {
    let outside = scratch();
    let marker = outside.path().join("fsmonitor-ran");
    let dir = repo(&[("a.txt", "a\n")]);
    let reply = format!(
        "<---WRITE file=\"evil/HEAD\"--->\nref: refs/heads/main\n<---END--->\n\
         <---WRITE file=\"evil/config\"--->\n[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch {}; false\"\n<---END--->\n\
         <---WRITE file=\"evil/objects/keep\"--->\nx\n<---END--->\n\
         <---WRITE file=\"evil/refs/keep\"--->\nx\n<---END--->\n\
         <---RUN dir=\"evil\"--->\ngit status --porcelain\n<---END--->\n",
        marker.display()
    );
    apply(dir.path(), &["-"], &reply);
    assert!(!marker.exists(), "git ran the reply's fsmonitor");
}

#[test]
fn the_scratch_link_file_is_repaired_and_dot_clada_itself_is_protected() {
    let dir = repo(&[("a.txt", "a\n")]);
    allow_shared(dir.path(), "sh -c 'echo gitdir: /nonexistent > .git'");
    allow_shared(dir.path(), "sh -c 'rm -r .clada; echo x > .clada'");
    apply(
        dir.path(),
        &["-"],
        &run_block("sh -c 'echo gitdir: /nonexistent > .git'"),
    );
    // git inside the tree works again (HEAD there is the pre snapshot of
    // the uncommitted approvals).
    let a = apply(dir.path(), &["-"], &run_block("git log --format=%s -1")).success();
    assert!(
        stdout(&a).contains("[task-1:exec] [clada:pre] snapshot before apply"),
        "{}",
        stdout(&a)
    );
    // (.clada/ holds the uncommitted approvals in the user's tree; in the
    // scratch tree a command replaces it with a file.)
    let task = failed_task(
        dir.path(),
        &run_block("sh -c 'rm -r .clada; echo x > .clada'"),
    );
    assert_eq!(task["error_type"], "protected_path", "{task}");
}

#[test]
fn programs_are_not_found_through_relative_path_entries() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = repo(&[("a.txt", "a\n"), ("bin/cat", "#!/bin/sh\necho PWNED\n")]);
    let script = dir.path().join("bin/cat");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(dir.path(), &["add", "bin/cat"]);
    commit(dir.path(), &["-qm", "tool"]);
    let path = format!("bin:{}", std::env::var("PATH").unwrap_or_default());
    let a = clada(dir.path(), dir.path())
        .env("PATH", path)
        .args(["apply", "-"])
        .write_stdin(run_block("cat a.txt"))
        .assert()
        .success();
    let text = stdout(&a);
    assert!(text.contains("[task-1:exec] a\n"), "{text}");
    assert!(!text.contains("PWNED"), "{text}");
}

#[test]
fn a_process_that_leaves_the_group_does_not_hold_the_apply() {
    let dir = repo(&[("a.txt", "a\n")]);
    let line = "sh -c 'setsid sleep 20 & echo started'";
    allow(dir.path(), line);
    let started = Instant::now();
    let a = apply(dir.path(), &["-"], &run_block(line)).success();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stdout(&a).contains("[task-1:exec] started"),
        "{}",
        stdout(&a)
    );
}

/// The first use of the scratch tree checks it out whole; what a command
/// then commits is the blobs it changed, never a conversion of the files
/// it did not touch: `.gitattributes` (line ends) and `core.fileMode`
/// (the executable bit) are the user's working tree's, not the scratch's.
#[test]
fn the_first_scratch_checkout_writes_blobs_and_modes_as_they_are() {
    let dir = repo(&[
        (".gitattributes", "*.txt text eol=crlf\n"),
        ("a.txt", "one\ntwo\n"),
        ("b.txt", "untouched\n"),
    ]);
    git(dir.path(), &["config", "core.fileMode", "false"]);
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho ran\n").unwrap();
    git(dir.path(), &["add", "--chmod=+x", "run.sh"]);
    commit(dir.path(), &["-q", "-m", "script"]);
    allow(dir.path(), "./run.sh");
    allow(dir.path(), "cp b.txt c.txt");
    let before = out(dir.path(), &["rev-parse", "HEAD:a.txt"]);
    apply(dir.path(), &["-"], &run_block("./run.sh\ncp b.txt c.txt")).success();
    // The script ran (its mode came from the tree), and nothing but the
    // new file was committed: a.txt's blob is the same, c.txt has LF.
    let changed = out(dir.path(), &["diff", "--name-only", "HEAD~1", "HEAD"]);
    assert_eq!(changed, "c.txt");
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD:a.txt"]), before);
    assert_eq!(
        out(dir.path(), &["cat-file", "-p", "HEAD:c.txt"]),
        "untouched"
    );
    let blob = std::process::Command::new("git")
        .args(["cat-file", "-p", "HEAD:c.txt"])
        .current_dir(dir.path())
        .output()
        .unwrap()
        .stdout;
    assert_eq!(blob, b"untouched\n");
}

/// [`the_first_scratch_checkout_writes_blobs_and_modes_as_they_are`]
/// without a `.gitattributes`, where the whole tree is checked out at
/// once: modes as the tree has them, whatever `core.fileMode` says.
#[test]
fn the_first_whole_scratch_checkout_keeps_modes_whatever_core_filemode_says() {
    let dir = repo(&[("b.txt", "untouched\n")]);
    git(dir.path(), &["config", "core.fileMode", "false"]);
    std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho ran\n").unwrap();
    git(dir.path(), &["add", "--chmod=+x", "run.sh"]);
    commit(dir.path(), &["-q", "-m", "script"]);
    allow(dir.path(), "./run.sh");
    let a = apply(dir.path(), &["-"], &run_block("./run.sh")).success();
    assert!(stdout(&a).contains("[task-1:exec] ran"), "{}", stdout(&a));
}

/// Issue 28 point 8: a read-only command may read only inside the
/// working tree without asking. A key in a temporary HOME, the process's
/// environment, `git diff --no-index` against an outside file and a
/// committed link leading out all need approval, which there is no
/// terminal to give; reading inside still runs unasked.
#[test]
fn read_only_commands_ask_before_reading_outside_the_tree() {
    let home = scratch();
    let key = home.path().join(".ssh/id_rsa");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "PRIVATE KEY MATERIAL\n").unwrap();
    let key = key.to_str().unwrap().to_string();
    let dir = repo(&[("a.txt", "inside\n")]);
    std::os::unix::fs::symlink(&key, dir.path().join("link")).unwrap();
    git(dir.path(), &["add", "link"]);
    commit(dir.path(), &["-q", "-m", "a link out"]);
    for line in [
        format!("cat {key}"),
        "cat /proc/self/environ".to_string(),
        format!("git diff --no-index {key} /dev/null"),
        format!("git diff {key} /dev/null"),
        "cat link".to_string(),
        format!("head -n 1 {key}"),
        format!("grep -r KEY {}", home.path().display()),
        format!("grep -f {key} a.txt"),
        "cat .git/config".to_string(),
    ] {
        let a = clada(home.path(), dir.path())
            .env("GIT_AUTHOR_DATE", crate::common::DATE)
            .env("GIT_COMMITTER_DATE", crate::common::DATE)
            .args(["apply", "--format", "json", "-"])
            .write_stdin(run_block(&line))
            .assert()
            .code(1);
        let report = json(&a);
        let task = &report["tasks"][0];
        assert_eq!(task["error_type"], "command_not_allowed", "{line}: {task}");
        assert!(
            task["message"].as_str().unwrap().contains("needs approval"),
            "{line}: {task}"
        );
        let text = report.to_string();
        assert!(!text.contains("PRIVATE KEY"), "{line}: {text}");
    }
    let a = apply(
        dir.path(),
        &["-"],
        &run_block("cat a.txt\ngrep -rn inside .\ngit diff --no-index a.txt /dev/null"),
    );
    let text = stdout(&a.code(1));
    assert!(text.contains("[task-1:exec] inside"), "{text}");
    assert!(text.contains("a.txt:1:inside"), "{text}");
    // `git diff --no-index` exits 1 when the files differ: it ran.
    assert!(
        text.contains("+++ /dev/null") || text.contains("--- a/a.txt"),
        "{text}"
    );
}
