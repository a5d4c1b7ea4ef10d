//! End-to-end tests of `git clada hook`: a bare "server" repository with
//! the receive hooks installed and client clones pushing to it over the
//! local filesystem, and the post-commit hook in a client. git runs the
//! hooks itself, and they find the built `git-clada` first on PATH.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{clada, clada_std, git_command, scratch};

const DATE: &str = "2026-01-01T00:00:00Z";

/// PATH with the directory of the built `git-clada` first.
pub(crate) fn path_with_clada() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_git-clada"))
        .parent()
        .expect("the binary is in a directory")
        .to_path_buf();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("a valid PATH")
}

/// Hermetic `git` in `dir` that finds `git clada`, with a fixed identity
/// and clock (inherited by the hooks a push runs on the server).
pub(crate) fn git_cmd(dir: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = git_command(dir, args);
    cmd.env("PATH", path_with_clada())
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE);
    cmd
}

pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    git_cmd(dir, args).output().expect("run git")
}

/// Runs git, which must succeed; its stdout, trimmed.
pub(crate) fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A bare server with the receive hooks, and one client clone with `a.txt`
/// pushed on `main`.
pub(crate) struct Setup {
    pub(crate) root: tempfile::TempDir,
    pub(crate) server: PathBuf,
    pub(crate) client: PathBuf,
}

pub(crate) fn setup() -> Setup {
    let root = scratch();
    let server = root.path().join("server.git");
    ok(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", "server.git"],
    );
    clada(root.path(), &server)
        .args(["hook", "install", "--server"])
        .assert()
        .success();
    let client = clone(root.path(), &server, "client");
    std::fs::write(client.join("a.txt"), "hi\n").unwrap();
    ok(&client, &["add", "a.txt"]);
    ok(&client, &["commit", "-q", "-m", "add a"]);
    ok(&client, &["push", "-q", "origin", "main"]);
    Setup {
        root,
        server,
        client,
    }
}

fn clone(root: &Path, server: &Path, name: &str) -> PathBuf {
    ok(root, &["clone", "-q", server.to_str().unwrap(), name]);
    root.join(name)
}

/// Adds `reply` as the inbox note on `rev` in `client` (replacing one).
pub(crate) fn note(client: &Path, rev: &str, reply: &str) {
    let file = client.join(".git/reply.md");
    std::fs::write(&file, reply).unwrap();
    ok(
        client,
        &[
            "notes",
            "--ref",
            "clada-inbox",
            "add",
            "-f",
            "-F",
            file.to_str().unwrap(),
            rev,
        ],
    );
}

/// Pushes the inbox (forced: it is a request queue, see doc/hooks.md).
fn push_inbox(client: &Path) -> Output {
    run(client, &["push", "origin", "+refs/notes/clada-inbox"])
}

/// Fetches the branches and the result notes into the client.
fn fetch(client: &Path) {
    ok(
        client,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/notes/clada-results:refs/notes/clada-results",
        ],
    );
}

/// The result note on `rev`, as fetched.
fn result(client: &Path, rev: &str) -> String {
    ok(client, &["notes", "--ref", "clada-results", "show", rev])
}

/// Pushes the inbox from `client`, which must succeed, fetches, and
/// returns the result note on `rev`.
fn pushed_result(client: &Path, rev: &str) -> String {
    let pushed = push_inbox(client);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    fetch(client);
    result(client, rev)
}

/// The message of the server's result of request `id`: the result text.
pub(crate) fn answered(server: &Path, id: &str) -> String {
    ok(
        server,
        &[
            "log",
            "-1",
            "--format=%B",
            &format!("refs/clada/results/{id}"),
        ],
    )
}

pub(crate) fn trailer<'a>(note: &'a str, key: &str) -> Option<&'a str> {
    note.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
}

pub(crate) const EDIT: &str =
    "Please apply:\n<---SEARCH file=\"a.txt\"--->\nhi\n<---REPLACE--->\nhello\n<---END--->\n";

#[test]
fn a_valid_note_is_applied_on_the_server_and_the_result_fetched() {
    let s = setup();
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", EDIT);
    let pushed = push_inbox(&s.client);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    // The pusher sees the outcome in the push's own output.
    let said = text(&pushed.stderr);
    assert!(
        said.contains("remote: [task-1] SUCCESS: SEARCH a.txt"),
        "{said}"
    );
    fetch(&s.client);
    let post = ok(&s.client, &["rev-parse", "origin/main"]);
    assert_ne!(post, tip);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main^"]), tip);
    assert_eq!(ok(&s.client, &["show", "origin/main:a.txt"]), "hello");
    let message = ok(&s.client, &["log", "-1", "--format=%B", "origin/main"]);
    assert!(message.starts_with("[clada:post] edit a.txt"), "{message}");
    let found = result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("success"), "{found}");
    assert_eq!(trailer(&found, "Clada-Branch"), Some("main"));
    assert_eq!(trailer(&found, "Clada-Post"), Some(post.as_str()));
    assert_eq!(
        trailer(&found, "Clada-Request"),
        Some(ok(&s.client, &["notes", "--ref", "clada-inbox", "list", &tip]).as_str())
    );
    assert!(found.contains("[task-1] SUCCESS: SEARCH a.txt - replaced 1 match"));
    // The reply is kept as a note on the post commit, as with a local apply;
    // the server repository is sound.
    assert_eq!(
        ok(&s.server, &["notes", "--ref", "clada", "show", &post]),
        EDIT.trim_end()
    );
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
    // The server's HEAD still names main, and no lock is left behind.
    assert_eq!(ok(&s.server, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert!(!s.server.join("clada.lock").exists());
}

#[test]
fn a_note_answered_before_is_not_applied_again() {
    let s = setup();
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", EDIT);
    assert!(push_inbox(&s.client).status.success());
    // The inbox is deleted on the server and pushed again whole: every
    // note in it is new to the server, but this one has its answer.
    ok(
        &s.client,
        &["push", "-q", "origin", ":refs/notes/clada-inbox"],
    );
    let again = push_inbox(&s.client);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("was answered before"),
        "{}",
        text(&again.stderr)
    );
    fetch(&s.client);
    assert_eq!(
        trailer(&result(&s.client, &tip), "Clada-Status"),
        Some("success")
    );
    assert_eq!(
        ok(&s.client, &["rev-list", "--count", "origin/main"]),
        "2",
        "one post commit, not two"
    );
}

#[test]
fn a_malformed_note_is_rejected_at_push_with_its_diagnostics() {
    let s = setup();
    note(
        &s.client,
        "HEAD",
        "<---WRTIE file=\"b.txt\"--->\nx\n<---END--->\n",
    );
    let pushed = push_inbox(&s.client);
    assert!(!pushed.status.success());
    let said = text(&pushed.stderr);
    assert!(
        said.contains("remote: fatal[unknown_operation]: Unknown operation: WRTIE"),
        "{said}"
    );
    assert!(said.contains("did you mean WRITE?"), "{said}");
    assert!(said.contains("clada: push rejected"), "{said}");
    assert!(said.contains("pre-receive hook declined"), "{said}");
    // Nothing reached the server: no inbox, no result, main unmoved.
    let refs = ok(&s.server, &["for-each-ref", "--format=%(refname)"]);
    assert_eq!(refs, "refs/heads/main");
}

/// A note of more problems than a parse keeps (1,000): refused for the
/// fatal error past them, which the last line counts.
#[test]
fn a_fatal_error_past_the_kept_diagnostics_still_rejects_the_note() {
    let s = setup();
    let reply = format!(
        "{}<---WRITE file=\"b.txt\"--->\nnever ended\n",
        "  <---RUN--->\n".repeat(1005)
    );
    note(&s.client, "HEAD", &reply);
    let pushed = push_inbox(&s.client);
    assert!(!pushed.status.success());
    let said = text(&pushed.stderr);
    assert_eq!(
        said.matches("remote: warning[indented_marker]").count(),
        1000
    );
    assert!(
        said.contains("remote: … and 6 more diagnostics not shown (1 fatal, 5 warnings)"),
        "{said}"
    );
    assert!(said.contains("1 fatal, 0 invalid, 1005 warnings"), "{said}");
    assert!(said.contains("clada: push rejected"), "{said}");
}

#[test]
fn a_note_on_a_commit_that_is_not_a_branch_tip_is_reported_stale() {
    let s = setup();
    std::fs::write(s.client.join("a.txt"), "hi again\nhi\n").unwrap();
    ok(&s.client, &["commit", "-q", "-am", "second"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let old = ok(&s.client, &["rev-parse", "HEAD^"]);
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD^", EDIT);
    let found = pushed_result(&s.client, &old);
    assert_eq!(trailer(&found, "Clada-Status"), Some("stale"), "{found}");
    assert!(found.contains("is not the tip of any branch"), "{found}");
    assert_eq!(trailer(&found, "Clada-Post"), None);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), tip);
}

#[test]
fn run_is_refused_on_a_server_unless_server_run_is_set() {
    let s = setup();
    let reply = "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n\
                 <---RUN--->\necho hi\n<---END--->\n\
                 <---TASKS--->\n<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n<---RUN--->\nls\n<---END--->\n<---END--->\n";
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", reply);
    let pushed = push_inbox(&s.client);
    assert!(pushed.status.success());
    assert!(
        text(&pushed.stderr).contains("its RUN operations will be refused"),
        "{}",
        text(&pushed.stderr)
    );
    fetch(&s.client);
    let found = result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("partial"), "{found}");
    assert!(
        found.contains(
            "[task-2] SKIP: RUN echo hi - command_not_allowed: RUN is disabled on this server"
        ),
        "{found}"
    );
    assert!(
        found.contains("[task-3] SKIP: TASKS - task 3.2: command_not_allowed"),
        "{found}"
    );
    // The edit outside the block is applied; the block's is not.
    assert_eq!(ok(&s.client, &["show", "origin/main:b.txt"]), "b");
    assert!(
        !run(&s.client, &["cat-file", "-e", "origin/main:c.txt"])
            .status
            .success()
    );

    // With clada.serverRun the commands run, in a scratch working tree of
    // the bare repository, and what they change is committed.
    ok(&s.server, &["config", "clada.serverRun", "true"]);
    ok(&s.client, &["merge", "-q", "--ff-only", "origin/main"]);
    note(
        &s.client,
        "HEAD",
        "<---RUN--->\necho hi\ncp b.txt b2.txt\n<---END--->\n",
    );
    let pushed = push_inbox(&s.client);
    assert!(pushed.status.success());
    assert!(!text(&pushed.stderr).contains("will be refused"));
    fetch(&s.client);
    let found = result(&s.client, "HEAD");
    assert!(found.contains("[task-1:exec] hi"), "{found}");
    assert!(found.contains("[task-1] SUCCESS: RUN echo hi"), "{found}");
    assert_eq!(trailer(&found, "Clada-Status"), Some("success"), "{found}");
    assert_eq!(ok(&s.client, &["show", "origin/main:b2.txt"]), "b");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn pushes_for_other_branches_go_on_and_pushes_for_one_branch_wait_their_turn() {
    let s = setup();
    let other = clone(s.root.path(), &s.server, "other");
    ok(&other, &["switch", "-q", "-c", "feature"]);
    std::fs::write(other.join("b.txt"), "one\n").unwrap();
    ok(&other, &["add", "b.txt"]);
    ok(&other, &["commit", "-q", "-m", "add b"]);
    ok(&other, &["push", "-q", "origin", "feature"]);
    let third = clone(s.root.path(), &s.server, "third");
    let main_tip = ok(&s.client, &["rev-parse", "HEAD"]);
    let feature_tip = ok(&other, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", EDIT);
    note(
        &other,
        "HEAD",
        "<---SEARCH file=\"b.txt\"--->\none\n<---REPLACE--->\ntwo\n<---END--->\n",
    );

    // The first push stops in post-receive once it holds main's turn.
    let pause = s.root.path().join("pause");
    let first = push_paused_at(
        &s.client,
        &["push", "origin", "+refs/notes/clada-inbox"],
        "hook-locked",
        &pause,
    );
    // Another branch: applied meanwhile.
    let second = git_cmd(&other, &["push", "origin", "+refs/notes/clada-inbox"])
        .output()
        .expect("push");
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(!first.is_finished(), "the first push did not stay paused");
    assert_eq!(ok(&s.server, &["show", "feature:b.txt"]), "two");
    // The same branch: waits for the first.
    note(
        &third,
        "HEAD",
        "<---WRITE file=\"t.txt\"--->\nthird\n<---END--->\n",
    );
    let third_push = {
        let mut cmd = git_cmd(&third, &["push", "origin", "+refs/notes/clada-inbox"]);
        std::thread::spawn(move || cmd.output().expect("push"))
    };
    std::thread::sleep(std::time::Duration::from_millis(700));
    assert!(
        !third_push.is_finished(),
        "the third push did not wait for main's turn"
    );
    std::fs::write(format!("{}.go", pause.display()), b"").unwrap();
    let (first, third_push) = (first.join().unwrap(), third_push.join().unwrap());
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(third_push.status.success(), "{}", text(&third_push.stderr));

    fetch(&s.client);
    assert_eq!(ok(&s.client, &["show", "origin/main:a.txt"]), "hello");
    assert_eq!(ok(&s.client, &["show", "origin/feature:b.txt"]), "two");
    let found = result(&s.client, &feature_tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("success"), "{found}");
    assert_eq!(trailer(&found, "Clada-Branch"), Some("feature"));
    let short = &main_tip[..7];
    assert!(
        text(&first.stderr).contains(&format!("clada: note on {short}: success")),
        "{}",
        text(&first.stderr)
    );
    // After the first: its note's commit is no longer main's tip (a
    // shared-inbox note names no branch to replay on).
    assert!(
        text(&third_push.stderr).contains(&format!("clada: note on {short}: stale")),
        "{}",
        text(&third_push.stderr)
    );
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn pushes_to_the_results_ref_are_refused() {
    let s = setup();
    ok(
        &s.client,
        &[
            "notes",
            "--ref",
            "clada-results",
            "add",
            "-m",
            "forged",
            "HEAD",
        ],
    );
    let pushed = run(&s.client, &["push", "origin", "refs/notes/clada-results"]);
    assert!(!pushed.status.success());
    assert!(
        text(&pushed.stderr).contains("only the server writes it"),
        "{}",
        text(&pushed.stderr)
    );
}

/// A client repository (not bare) with one commit.
fn client_repo() -> tempfile::TempDir {
    let dir = scratch();
    ok(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "hi\n").unwrap();
    ok(dir.path(), &["add", "a.txt"]);
    ok(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}

fn commit_with_message(dir: &Path, message: &str) -> Output {
    let file = dir.join(".git/message.txt");
    std::fs::write(&file, message).unwrap();
    run(
        dir,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-F",
            file.to_str().unwrap(),
        ],
    )
}

#[test]
fn post_commit_applies_the_csl_in_a_commit_message() {
    let dir = client_repo();
    clada(dir.path(), dir.path())
        .args(["hook", "install"])
        .assert()
        .success()
        .stdout(predicates::str::contains("installed"));
    // A commit without CSL is left alone.
    let plain = commit_with_message(dir.path(), "just a commit\n");
    assert!(plain.status.success());
    assert_eq!(
        ok(dir.path(), &["log", "-1", "--format=%s"]),
        "just a commit"
    );
    // git sends a hook's stdout to stderr.
    assert!(text(&plain.stderr).is_empty(), "{}", text(&plain.stderr));

    let asked = commit_with_message(
        dir.path(),
        "Ask for a greeting\n\n<---WRITE file=\"b.txt\"--->\nhello\n<---END--->\n",
    );
    assert!(asked.status.success(), "{}", text(&asked.stderr));
    assert!(
        text(&asked.stderr).contains("[task-1] SUCCESS: WRITE b.txt"),
        "{}",
        text(&asked.stderr)
    );
    // The post commit sits on the commit that asked; the working tree has
    // the file, and nothing is left uncommitted.
    let log = ok(dir.path(), &["log", "--format=%s", "-3"]);
    assert_eq!(
        log,
        "[clada:post] create b.txt\nAsk for a greeting\njust a commit"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(ok(dir.path(), &["status", "--porcelain"]), "");

    // A rebase replays the asking commit and its post commit: nothing is
    // applied a second time.
    ok(dir.path(), &["switch", "-q", "-c", "side", "HEAD~2"]);
    std::fs::write(dir.path().join("d.txt"), "d\n").unwrap();
    ok(dir.path(), &["add", "d.txt"]);
    ok(dir.path(), &["commit", "-q", "-m", "side work"]);
    let rebased = run(dir.path(), &["rebase", "-q", "side", "main"]);
    assert!(rebased.status.success(), "{}", text(&rebased.stderr));
    assert!(
        text(&rebased.stderr).contains("a git rebase is in progress"),
        "{}",
        text(&rebased.stderr)
    );
    assert_eq!(
        ok(dir.path(), &["log", "--format=%s", "-4"]),
        "[clada:post] create b.txt\nAsk for a greeting\nside work\njust a commit"
    );
    assert_eq!(ok(dir.path(), &["status", "--porcelain"]), "");

    // Detached, the hook says how to apply on a branch and changes nothing.
    ok(dir.path(), &["switch", "-q", "--detach"]);
    let detached = commit_with_message(
        dir.path(),
        "more\n\n<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n",
    );
    assert!(detached.status.success());
    assert!(
        text(&detached.stderr).contains("git clada apply --from-commit"),
        "{}",
        text(&detached.stderr)
    );
    assert!(!dir.path().join("c.txt").exists());
}

#[test]
fn installing_over_an_existing_hook_refuses_then_chains_and_uninstall_restores_it() {
    let dir = client_repo();
    let hooks = dir.path().join(".git/hooks");
    let mine =
        "#!/bin/sh\necho \"$(git log -1 --format=%s)\" >> \"$(git rev-parse --git-dir)/seen\"\n";
    std::fs::write(hooks.join("post-commit"), mine).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            hooks.join("post-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    clada(dir.path(), dir.path())
        .args(["hook", "install"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "is not clada's; nothing was installed",
        ))
        .stderr(predicates::str::contains("--chain"));
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        mine
    );

    clada(dir.path(), dir.path())
        .args(["hook", "install", "--chain"])
        .assert()
        .success()
        .stdout(predicates::str::contains("post-commit.clada-chained"));
    let asked = commit_with_message(
        dir.path(),
        "asked\n\n<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    );
    assert!(asked.status.success(), "{}", text(&asked.stderr));
    // Both ran: the old hook first (it saw the asking commit), then clada.
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".git/seen")).unwrap(),
        "asked\n"
    );
    assert_eq!(
        ok(dir.path(), &["log", "-1", "--format=%s"]),
        "[clada:post] create b.txt"
    );

    clada(dir.path(), dir.path())
        .args(["hook", "uninstall"])
        .assert()
        .success()
        .stdout(predicates::str::contains("the chained hook is back"));
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        mine
    );
    assert!(!hooks.join("post-commit.clada-chained").exists());
}

#[test]
fn install_honours_core_hooks_path_and_refuses_the_client_hook_in_a_bare_repository() {
    let dir = client_repo();
    ok(dir.path(), &["config", "core.hooksPath", "githooks"]);
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    // Relative to the top of the working tree, wherever it is run from.
    clada(dir.path(), &sub)
        .args(["hook", "install"])
        .assert()
        .success();
    assert!(dir.path().join("githooks/post-commit").exists());
    assert!(!dir.path().join(".git/hooks/post-commit").exists());
    let asked = commit_with_message(
        dir.path(),
        "asked\n\n<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    );
    assert!(asked.status.success());
    assert!(
        dir.path().join("b.txt").exists(),
        "git ran the hook from core.hooksPath"
    );

    let bare = scratch();
    ok(bare.path(), &["init", "-q", "--bare"]);
    clada(bare.path(), bare.path())
        .args(["hook", "install"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--server"));
}

#[test]
fn a_branch_checked_out_in_a_non_bare_server_is_not_moved() {
    let root = scratch();
    let server = root.path().join("server");
    ok(root.path(), &["init", "-q", "-b", "main", "server"]);
    std::fs::write(server.join("a.txt"), "hi\n").unwrap();
    ok(&server, &["add", "a.txt"]);
    ok(&server, &["commit", "-q", "-m", "initial"]);
    clada(root.path(), &server)
        .args(["hook", "install", "--server"])
        .assert()
        .success();
    let client = clone(root.path(), &server, "client");
    let tip = ok(&client, &["rev-parse", "HEAD"]);
    note(&client, "HEAD", EDIT);
    let pushed = push_inbox(&client);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    fetch(&client);
    let found = result(&client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("error"), "{found}");
    assert!(
        found.contains("checked out in the server's working tree"),
        "{found}"
    );
    assert_eq!(ok(&server, &["rev-parse", "main"]), tip);
    assert_eq!(ok(&server, &["status", "--porcelain"]), "");
}

#[test]
fn a_request_that_cannot_be_applied_gets_an_error_result_and_changes_nothing() {
    let s = setup();
    std::fs::create_dir(s.client.join(".clada")).unwrap();
    std::fs::write(s.client.join(".clada/config.toml"), "match = \n").unwrap();
    ok(&s.client, &["add", ".clada/config.toml"]);
    ok(&s.client, &["commit", "-q", "-m", "broken team config"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", EDIT);
    let found = pushed_result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("error"), "{found}");
    assert!(found.contains(".clada/config.toml is malformed"), "{found}");
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), tip);
}

#[test]
fn without_pre_receive_a_malformed_note_gets_a_fatal_result() {
    let s = setup();
    std::fs::remove_file(s.server.join("hooks/pre-receive")).unwrap();
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(
        &s.client,
        "HEAD",
        "<---WRTIE file=\"b.txt\"--->\nx\n<---END--->\n",
    );
    let found = pushed_result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("fatal"), "{found}");
    assert!(found.contains("did you mean WRITE?"), "{found}");
    assert!(found.contains("FATAL: nothing was applied"), "{found}");
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), tip);
}

#[test]
fn a_pushed_verify_command_is_not_run_on_a_server_that_refuses_commands() {
    let s = setup();
    std::fs::create_dir(s.client.join(".clada")).unwrap();
    std::fs::write(s.client.join(".clada/config.toml"), "verify = \"false\"\n").unwrap();
    ok(&s.client, &["add", ".clada"]);
    ok(&s.client, &["commit", "-q", "-m", "team verify"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(
        &s.client,
        "HEAD",
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    );
    assert!(push_inbox(&s.client).status.success());
    fetch(&s.client);
    let found = result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("success"), "{found}");
    assert!(!found.contains("[verify]"), "{found}");
    assert_eq!(ok(&s.client, &["show", "origin/main:b.txt"]), "b");
}

#[test]
fn a_json_note_with_deletes_moves_and_reads_is_applied_on_a_server_without_run() {
    let s = setup();
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    let reply = r#"[
  {"op": "move", "from": "a.txt", "to": "docs/a.txt"},
  {"op": "insert", "path": "docs/a.txt", "line": 0, "text": "top"},
  {"op": "read", "paths": ["docs/a.txt"]},
  {"op": "mkdir", "path": "empty"},
  {"op": "tasks", "ops": [{"op": "delete", "path": "docs/a.txt"}, {"op": "run", "cmd": "ls"}]}
]"#;
    note(&s.client, "HEAD", reply);
    let found = pushed_result(&s.client, &tip);
    // RUN is refused, so its block (with the delete) is skipped whole; the
    // rest ran in memory in the bare repository.
    assert_eq!(trailer(&found, "Clada-Status"), Some("partial"), "{found}");
    assert!(
        found.contains("[task-1] SUCCESS: MOVE a.txt -> docs/a.txt"),
        "{found}"
    );
    assert!(
        found.contains("[task-3:read] top\n[task-3:read] hi\n"),
        "{found}"
    );
    assert!(
        found.contains("[task-5] SKIP: TASKS - task 5.2: command_not_allowed"),
        "{found}"
    );
    assert_eq!(
        ok(&s.client, &["show", "origin/main:docs/a.txt"]),
        "top\nhi"
    );
    assert!(
        !run(&s.client, &["cat-file", "-e", "origin/main:a.txt"])
            .status
            .success()
    );
}

#[test]
fn post_commit_applies_a_json_message_and_ignores_one_without_operations() {
    let dir = client_repo();
    clada(dir.path(), dir.path())
        .args(["hook", "install"])
        .assert()
        .success();
    let out = commit_with_message(
        dir.path(),
        "[{\"op\": \"write\", \"path\": \"from-json.txt\", \"content\": \"hi\"}]",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("from-json.txt")).unwrap(),
        "hi\n"
    );
    // An ordinary message that shows a diff is not a request.
    let before = ok(dir.path(), &["rev-parse", "HEAD"]);
    let out = commit_with_message(
        dir.path(),
        "Explain the change\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    assert_ne!(ok(dir.path(), &["rev-parse", "HEAD"]), before);
    assert!(
        ok(dir.path(), &["log", "-1", "--format=%s"]).starts_with("Explain"),
        "the commit itself is the tip: nothing was applied"
    );
}

/// One reply per syntax git-clada reads, each editing `a.txt` ("hi" to
/// "hello") and creating `b.txt`, written as models write them (prose
/// around the blocks). Every syntax goes the same way through apply,
/// undo, the post-commit hook and the server hooks.
const EVERY_SYNTAX: &[(&str, &str)] = &[
    (
        "csl",
        "Here you go:\n<---SEARCH file=\"a.txt\"--->\nhi\n<---REPLACE--->\nhello\n<---END--->\n<---WRITE file=\"b.txt\"--->\nnew\n<---END--->\n",
    ),
    (
        "json",
        r#"[{"op": "search", "path": "a.txt", "search": "hi", "replace": "hello"}, {"op": "write", "path": "b.txt", "content": "new"}]"#,
    ),
    (
        "cml",
        "Here are the edits:\n\n<edit path=\"a.txt\">\n<search>hi</search>\n<replace>hello</replace>\n</edit>\n<write path=\"b.txt\">new</write>\n",
    ),
    (
        "sham",
        "Edits:\n\n```sh\n#!SHAM [@three-char-SHA-256: k7m]\naction = \"file_replace_text\"\npath = \"a.txt\"\nold_text = \"hi\"\nnew_text = \"hello\"\n#!END_SHAM_k7m\n```\n\n```sh\n#!SHAM [@three-char-SHA-256: r2d]\naction = \"file_write\"\npath = \"b.txt\"\ncontent = <<'EOT_SHAM_r2d'\nnew\nEOT_SHAM_r2d\n#!END_SHAM_r2d\n```\n",
    ),
    (
        "telt",
        "#!telt [3-char SHA: k4x]\n=== FILE_REPLACE_TEXT ===\n--PATH k4x--\na.txt\n--OLD_TEXT k4x--\nhi\n--NEW_TEXT k4x--\nhello\n=== CREATE_FILE ===\n--FILE k4x--\nb.txt\n--CONTENT k4x--\nnew\n--END k4x--\n",
    ),
    (
        "diff",
        "```diff\ndiff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hi\n+hello\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n```\n",
    ),
    (
        "aider",
        "Two edits.\n\na.txt\n```\n<<<<<<< SEARCH\nhi\n=======\nhello\n>>>>>>> REPLACE\n```\n\nb.txt\n```\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n```\n",
    ),
    (
        "replacer",
        "Two edits.\n\n<<<EXPLANATION>>>\nA warmer greeting\n<<<FILE>>>\na.txt\n<<<SEARCH>>>\nhi\n<<<REPLACE>>>\nhello\n<<<END>>>\n\n<<<FILE>>>\nb.txt\n<<<OVERWRITE>>>\nnew\n<<<END>>>\n",
    ),
    (
        "patch",
        "A warmer greeting and a new file:\n\n```\n*** Begin Patch\n*** Update File: a.txt\n@@\n-hi\n+hello\n*** Add File: b.txt\n+new\n*** End Patch\n```\n",
    ),
];

/// The syntax `parse` reads `reply` as (auto-detection).
fn detected(dir: &Path, reply: &str) -> String {
    let out = clada(dir, dir)
        .args(["parse", "--format", "json", "-"])
        .write_stdin(reply)
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    value["syntax"].as_str().unwrap_or_default().to_string()
}

#[test]
fn every_syntax_applies_through_apply_undo_and_both_hooks() {
    for (syntax, reply) in EVERY_SYNTAX {
        // What every syntax's reply does: a.txt edited, b.txt written.
        let edited = |d: &Path| {
            let read = |name: &str| std::fs::read_to_string(d.join(name)).unwrap();
            assert_eq!(read("a.txt"), "hello\n", "{syntax}");
            assert_eq!(read("b.txt"), "new\n", "{syntax}");
        };
        // apply, then undo.
        let dir = client_repo();
        let d = dir.path();
        assert_eq!(detected(d, reply), *syntax);
        let applied = clada(d, d)
            .args(["apply", "-"])
            .write_stdin(*reply)
            .output()
            .unwrap();
        assert!(
            applied.status.success(),
            "{syntax}: {}",
            text(&applied.stdout)
        );
        edited(d);
        clada(d, d).arg("undo").assert().success();
        assert_eq!(
            std::fs::read_to_string(d.join("a.txt")).unwrap(),
            "hi\n",
            "{syntax}"
        );
        assert!(!d.join("b.txt").exists(), "{syntax}");

        // The post-commit hook applies the reply in a commit message (a
        // diff only where the repository says its messages are diffs:
        // one that explains a commit is no request).
        clada(d, d).args(["hook", "install"]).assert().success();
        if *syntax == "diff" {
            ok(d, &["config", "clada.syntax", "diff"]);
        }
        let out = commit_with_message(d, reply);
        assert!(out.status.success(), "{syntax}: {}", text(&out.stderr));
        edited(d);

        // The server hooks apply it pushed as a note.
        let s = setup();
        let tip = ok(&s.client, &["rev-parse", "HEAD"]);
        note(&s.client, "HEAD", reply);
        let pushed = push_inbox(&s.client);
        assert!(
            pushed.status.success(),
            "{syntax}: {}",
            text(&pushed.stderr)
        );
        fetch(&s.client);
        let found = result(&s.client, &tip);
        assert_eq!(
            trailer(&found, "Clada-Status"),
            Some("success"),
            "{syntax}: {found}"
        );
        assert_eq!(
            ok(&s.client, &["show", "origin/main:a.txt"]),
            "hello",
            "{syntax}"
        );
        assert_eq!(
            ok(&s.client, &["show", "origin/main:b.txt"]),
            "new",
            "{syntax}"
        );
        drop(s);
    }
}

/// `git clada push-reply origin main` of `reply` from `client`, with the
/// server's hooks (which inherit the environment over the filesystem)
/// aborted at `fault`, when given; not waiting long after the push for a
/// result that will not come.
/// `git args` in `dir` (a push), run in the background with its hooks
/// stopped at the pause point `point` (`src/fault.rs`, released by
/// writing `<pause>.go`); returned once a hook got there.
fn push_paused_at(
    dir: &Path,
    args: &[&str],
    point: &str,
    pause: &Path,
) -> std::thread::JoinHandle<Output> {
    let mut cmd = git_cmd(dir, args);
    cmd.env("CLADA_PAUSE", format!("{point}:{}", pause.display()));
    let pushing = std::thread::spawn(move || cmd.output().expect("push"));
    let reached = PathBuf::from(format!("{}.reached", pause.display()));
    let started = std::time::Instant::now();
    while !reached.exists() {
        assert!(
            started.elapsed().as_secs() < 60,
            "the push never got to {point}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    pushing
}

fn push_reply_fs(client: &Path, reply: &str, fault: Option<&str>) -> Output {
    push_reply_within(client, reply, fault, &["--timeout", "200ms"])
}

pub(crate) fn push_reply_within(
    client: &Path,
    reply: &str,
    fault: Option<&str>,
    limits: &[&str],
) -> Output {
    let file = client.join(".git/request.md");
    std::fs::write(&file, reply).unwrap();
    let mut cmd = git_cmd(
        client,
        &[
            "clada",
            "push-reply",
            "origin",
            "main",
            file.to_str().unwrap(),
        ],
    );
    cmd.args(limits);
    if let Some(point) = fault {
        cmd.env("CLADA_FAULT", point);
    }
    cmd.output().expect("run git clada push-reply")
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_request_whose_hook_died_anywhere_is_answered_exactly_once_later() {
    // Every place post-receive can die with a request in hand, from
    // before the apply to after the result but before the request is
    // taken away. Half are answered by the next push, half by `hook
    // recover`.
    let points = [
        // Before it claimed the request for itself: the claim pre-receive
        // made died with the push.
        "post-receive",
        "hook-locked",
        "post-committed",
        "branch-moved",
        "noted",
        "hook-noted",
        "hook-answered",
    ];
    for (i, point) in points.iter().enumerate() {
        let s = setup();
        let tip = ok(&s.client, &["rev-parse", "HEAD"]);
        let first = push_reply_fs(&s.client, EDIT, Some(point));
        let answered_at_once = *point == "hook-answered";
        assert_eq!(
            first.status.code(),
            Some(if answered_at_once { 0 } else { 2 }),
            "{point}: {}",
            text(&first.stderr)
        );
        let waiting = ok(
            &s.server,
            &["for-each-ref", "--format=%(refname)", "refs/clada/inbox/"],
        );
        assert_eq!(waiting.lines().count(), 1, "{point}: {waiting}");
        let id = waiting
            .strip_prefix("refs/clada/inbox/")
            .unwrap()
            .to_string();
        if i % 2 == 0 {
            // Any push answers it: here a branch of no concern. Its
            // pusher is not sent the request's objects (no use to them).
            let other = git_cmd(&s.client, &["push", "origin", "main:elsewhere"])
                .output()
                .unwrap();
            let said = text(&other.stderr);
            assert!(other.status.success(), "{point}: {said}");
            assert!(!said.contains("the objects since"), "{point}: {said}");
        } else {
            clada(s.root.path(), &s.server)
                .args(["hook", "recover"])
                // Dated as the pushes are: results are kept by their dates.
                .env("GIT_COMMITTER_DATE", DATE)
                .env("GIT_AUTHOR_DATE", DATE)
                .assert()
                .success();
        }
        let left = ok(
            &s.server,
            &["for-each-ref", "--format=%(refname)", "refs/clada/inbox/"],
        );
        assert_eq!(left, "", "{point}: the request is taken away");
        let result = answered(&s.server, &id);
        assert_eq!(
            trailer(&result, "Clada-Status"),
            Some("success"),
            "{point}: {result}"
        );
        // Applied exactly once, on the request's commit.
        let post = ok(&s.server, &["rev-parse", "main"]);
        assert_eq!(ok(&s.server, &["rev-parse", "main^"]), tip, "{point}");
        assert_eq!(
            trailer(&result, "Clada-Post"),
            Some(post.as_str()),
            "{point}"
        );
        assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello", "{point}");
        ok(&s.server, &["fsck", "--strict", "--no-progress"]);
        assert!(!s.server.join("clada.lock").exists(), "{point}");
        // Logged once: by the hook that answered it, or by the one that
        // found its result left behind.
        let log = std::fs::read_to_string(s.server.join("clada/requests.log")).unwrap_or_default();
        assert_eq!(
            log.lines()
                .filter(|l| l.contains(&format!("\"{id}\"")))
                .count(),
            1,
            "{point}: {log}"
        );
    }
}

#[test]
fn push_reply_shows_what_the_hooks_said_when_no_result_came() {
    let s = setup();
    ok(&s.server, &["config", "clada.lockTimeout", "1s"]);
    // main's turn held by a live process (this test) that never lets go.
    let hex: String = "refs/heads/main"
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    let queues = s.server.join("clada/queues");
    std::fs::create_dir_all(&queues).unwrap();
    std::fs::write(
        queues.join(format!("{hex}.lock")),
        format!("{} ?", std::process::id()),
    )
    .unwrap();
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("the server said: ") && said.contains("lock_timeout"),
        "{said}"
    );
    assert!(said.contains("no result for the request"), "{said}");
}

/// A request made by hand, as doc/hooks.md shows: the reply as the note on
/// `rev`, the branch named in the message; the notes commit's id.
fn request_by_hand(client: &Path, rev: &str, branch: &str, reply: &str) -> String {
    let file = client.join(".git/by-hand.md");
    std::fs::write(&file, reply).unwrap();
    let blob = ok(client, &["hash-object", "-w", file.to_str().unwrap()]);
    let target = ok(client, &["rev-parse", rev]);
    let mut mktree = git_cmd(client, &["mktree"]);
    mktree
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = mktree.spawn().unwrap();
    use std::io::Write as _;
    writeln!(child.stdin.take().unwrap(), "100644 blob {blob}\t{target}").unwrap();
    let tree = text(&child.wait_with_output().unwrap().stdout)
        .trim()
        .to_string();
    let branch_trailer = format!("Clada-Branch: {branch}");
    ok(
        client,
        &[
            "commit-tree",
            "-m",
            "clada: request",
            "-m",
            &branch_trailer,
            &tree,
        ],
    )
}

/// Pushes `request` from `client` to `refs/clada/inbox/<id>` with the
/// server's post-receive stopped once it holds the lock, as a killed hook
/// would be: the request is left waiting.
fn push_left_waiting(client: &Path, request: &str, id: &str) {
    let stopped = git_cmd(
        client,
        &[
            "push",
            "origin",
            &format!("{request}:refs/clada/inbox/{id}"),
        ],
    )
    .env("CLADA_FAULT", "hook-locked")
    .output()
    .unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_request_made_by_hand_is_answered_and_request_refs_are_written_once() {
    let s = setup();
    let request = request_by_hand(&s.client, "HEAD", "main", EDIT);
    let pushed = run(
        &s.client,
        &[
            "push",
            "origin",
            &format!("{request}:refs/clada/inbox/by-hand/1"),
        ],
    );
    let said = text(&pushed.stderr);
    assert!(pushed.status.success(), "{said}");
    assert!(
        said.contains("remote: clada: request by-hand/1: success; the result ("),
        "{said}"
    );
    ok(
        &s.client,
        &["fetch", "-q", "origin", "refs/clada/results/by-hand/1"],
    );
    let result = ok(&s.client, &["log", "-1", "--format=%B", "FETCH_HEAD"]);
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(trailer(&result, "Clada-Branch"), Some("main"));
    // The result is also a notes tree: the note on the request's commit.
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    assert_eq!(
        ok(&s.client, &["show", &format!("FETCH_HEAD:{tip}")]),
        result
    );

    let refused = |spec: String, why: &str| {
        let out = run(&s.client, &["push", "origin", &spec]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{spec}: {err}");
        assert!(err.contains(why), "{spec}: {err}");
    };
    // An id is used once.
    let again = request_by_hand(&s.client, "HEAD", "main", "Another reply\n");
    refused(
        format!("{again}:refs/clada/inbox/by-hand/1"),
        "was answered before",
    );
    // Only the server writes results.
    refused(
        format!("{again}:refs/clada/results/mine"),
        "only the server writes it",
    );
    // The prefixes themselves are the server's: a reference named so
    // would stop every request or result under it.
    for name in ["refs/clada/inbox", "refs/clada/results"] {
        refused(format!("{again}:{name}"), "cannot be a reference");
    }
    // An id whose result could not be written beside an answered one's
    // (a reference cannot also be a directory), either way round.
    refused(
        format!("{again}:refs/clada/inbox/by-hand/1/more"),
        "clashes with the answered request at refs/clada/results/by-hand/1",
    );
    refused(
        format!("{again}:refs/clada/inbox/by-hand"),
        "clashes with the answered request at refs/clada/results/by-hand/1",
    );
    // A request holds a note.
    let nothing = ok(&s.client, &["hash-object", "-t", "tree", "-w", "--stdin"]);
    let empty = ok(&s.client, &["commit-tree", "-m", "empty", &nothing]);
    refused(format!("{empty}:refs/clada/inbox/empty"), "holds no note");
    // A request waiting (its hook stopped) cannot be replaced.
    let waiting = request_by_hand(&s.client, "HEAD", "main", "Please wait\n");
    push_left_waiting(&s.client, &waiting, "slow");
    refused(
        format!("+{again}:refs/clada/inbox/slow"),
        "already holds a request",
    );
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_recovered_request_is_not_mistaken_for_another_with_the_same_reply() {
    // Two agents send the same reply for the same commit: the first is
    // applied; the second's hook dies before applying it. Recovered, the
    // second is stale: the first one's result and post commit are not its.
    let s = setup();
    let base = ok(&s.client, &["rev-parse", "HEAD"]);
    let first = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    // Made for the commit the first was applied to (push-reply has moved
    // the clone's branch on since): replayed on the tip, its SEARCH finds
    // the first's change there and it is stale.
    let second = request_by_hand(&s.client, &base, "main", EDIT);
    push_left_waiting(&s.client, &second, "twin");
    clada(s.root.path(), &s.server)
        .args(["hook", "recover"])
        // Dated as the pushes are: results are kept by their dates.
        .env("GIT_COMMITTER_DATE", DATE)
        .env("GIT_AUTHOR_DATE", DATE)
        .assert()
        .success();
    let result = answered(&s.server, "twin");
    assert_eq!(trailer(&result, "Clada-Status"), Some("stale"), "{result}");
    assert_eq!(
        trailer(&result, "Clada-Request-Ref"),
        Some("refs/clada/inbox/twin")
    );
    assert_eq!(ok(&s.server, &["rev-list", "--count", "main"]), "2");
}

/// `git clada push-reply origin main` of `reply` from `client`, with
/// git's trace of the commands it ran in `trace`.
fn push_reply_traced(client: &Path, reply: &str, trace: &Path) -> Output {
    let file = client.join(".git/request.md");
    std::fs::write(&file, reply).unwrap();
    let _ = std::fs::remove_file(trace);
    git_cmd(
        client,
        &[
            "clada",
            "push-reply",
            "origin",
            "main",
            file.to_str().unwrap(),
        ],
    )
    .env("GIT_TRACE2_EVENT", trace)
    .output()
    .expect("run git clada push-reply")
}

#[test]
fn push_reply_takes_the_applied_commit_from_the_push_and_fetches_it_only_when_it_differs() {
    let s = setup();
    let trace = s.root.path().join("trace.json");
    let fetched = |trace: &Path| {
        std::fs::read_to_string(trace)
            .unwrap()
            .contains(r#""argv":["git","fetch""#)
    };
    let reply = format!("{EDIT}<---WRITE file=\"new/b.txt\"--->\nnew\n<---END--->\n");
    let first = push_reply_traced(&s.client, &reply, &trace);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    // The commit the server made is here, with every object it needs,
    // and nothing was fetched: the push's output brought them.
    let applied = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), applied);
    assert!(!fetched(&trace), "{}", text(&first.stderr));
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(ok(&s.client, &["show", "origin/main:a.txt"]), "hello");
    assert_eq!(ok(&s.client, &["show", "origin/main:new/b.txt"]), "new");
    // A clone whose settings would apply the reply otherwise (files
    // written without a final newline) takes the server's objects all
    // the same: it does not apply the reply itself.
    ok(&s.client, &["config", "clada.finalNewline", "false"]);
    let second = push_reply_traced(
        &s.client,
        "<---WRITE file=\"c.txt\"--->\nnewline on the server\n<---END--->\n",
        &trace,
    );
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(!fetched(&trace), "{}", text(&second.stderr));
    assert_eq!(
        ok(&s.client, &["cat-file", "-p", "origin/main:c.txt"]),
        "newline on the server"
    );
    ok(&s.client, &["config", "--unset", "clada.finalNewline"]);
    // More than the output carries (a file over 256 KiB): the post commit
    // alone comes back, and the reply applied here makes the same tree.
    let big = "x".repeat(300 << 10);
    let third = push_reply_traced(
        &s.client,
        &format!("<---WRITE file=\"big.txt\"--->\n{big}\n<---END--->\n"),
        &trace,
    );
    assert_eq!(third.status.code(), Some(0), "{}", text(&third.stderr));
    assert!(!fetched(&trace), "{}", text(&third.stderr));
    let applied = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), applied);
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
    // A clone whose settings apply such a reply otherwise than the server
    // does fetches the server's commit instead, and has it all the same.
    ok(&s.client, &["config", "clada.finalNewline", "false"]);
    let fourth = push_reply_traced(
        &s.client,
        &format!("<---WRITE file=\"big2.txt\"--->\n{big}\n<---END--->\n"),
        &trace,
    );
    assert_eq!(fourth.status.code(), Some(0), "{}", text(&fourth.stderr));
    let applied = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), applied);
    assert!(fetched(&trace), "{}", text(&fourth.stderr));
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(
        ok(&s.client, &["cat-file", "-s", "origin/main:big2.txt"]),
        ((300 << 10) + 1).to_string()
    );
}

#[test]
fn push_reply_takes_the_commits_the_branch_gained_from_the_push_and_fetches_only_many() {
    let s = setup();
    let fetched = |trace: &Path| {
        std::fs::read_to_string(trace)
            .unwrap()
            .contains(r#""argv":["git","fetch""#)
    };
    let trace = s.root.path().join("trace.json");
    // Another agent moves main by two commits the client does not have:
    // a new directory, an empty file, a symbolic link, a changed file.
    let other = clone(s.root.path(), &s.server, "other");
    std::fs::create_dir_all(other.join("d/e")).unwrap();
    std::fs::write(other.join("d/e/f.txt"), "deep\n").unwrap();
    std::fs::write(other.join("empty.txt"), "").unwrap();
    ok(&other, &["add", "."]);
    ok(&other, &["commit", "-q", "-m", "deep and empty"]);
    std::fs::write(other.join("d/e/f.txt"), "deeper\n").unwrap();
    std::os::unix::fs::symlink("a.txt", other.join("link")).unwrap();
    ok(&other, &["add", "."]);
    ok(&other, &["commit", "-q", "-m", "changed, and a link"]);
    ok(&other, &["push", "-q", "origin", "main"]);
    // The client's request is replayed on that tip; its push's output
    // brings the two commits, and nothing is fetched.
    let reply = "<---WRITE file=\"new/b.txt\"--->\nnew\n<---END--->\n";
    let out = push_reply_traced(&s.client, reply, &trace);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!fetched(&trace), "{}", text(&out.stderr));
    let applied = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(ok(&s.client, &["rev-parse", "main"]), applied);
    assert_eq!(ok(&s.client, &["rev-parse", "origin/main"]), applied);
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(
        std::fs::read_to_string(s.client.join("d/e/f.txt")).unwrap(),
        "deeper\n"
    );
    assert_eq!(std::fs::read(s.client.join("empty.txt")).unwrap(), b"");
    assert_eq!(
        std::fs::read_link(s.client.join("link")).unwrap(),
        Path::new("a.txt")
    );
    assert_eq!(
        std::fs::read_to_string(s.client.join("new/b.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(ok(&s.client, &["status", "--porcelain"]), "");
    // More than the output carries (a blob over 256 KiB): fetched, and
    // the same in the end.
    ok(&other, &["pull", "-q", "--ff-only"]);
    std::fs::write(other.join("big.txt"), "x".repeat(300 << 10)).unwrap();
    ok(&other, &["add", "big.txt"]);
    ok(&other, &["commit", "-q", "-m", "big"]);
    ok(&other, &["push", "-q", "origin", "main"]);
    let reply = "<---WRITE file=\"new/c.txt\"--->\nnext\n<---END--->\n";
    let out = push_reply_traced(&s.client, reply, &trace);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(fetched(&trace), "{}", text(&out.stderr));
    let applied = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(ok(&s.client, &["rev-parse", "main"]), applied);
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(
        std::fs::read_to_string(s.client.join("big.txt"))
            .unwrap()
            .len(),
        300 << 10
    );
    // A request pushed by hand does not ask for the objects: its pusher's
    // terminal is not filled with them.
    ok(&other, &["pull", "-q", "--ff-only"]);
    std::fs::write(other.join("more.txt"), "more\n").unwrap();
    ok(&other, &["add", "more.txt"]);
    ok(&other, &["commit", "-q", "-m", "more"]);
    ok(&other, &["push", "-q", "origin", "main"]);
    let request = request_by_hand(&s.client, "main", "main", EDIT);
    let pushed = git_cmd(
        &s.client,
        &[
            "push",
            "origin",
            &format!("{request}:refs/clada/inbox/by-hand"),
        ],
    )
    .output()
    .unwrap();
    let said = text(&pushed.stderr);
    assert!(pushed.status.success(), "{said}");
    assert!(said.contains("its post commit"), "{said}");
    assert!(!said.contains("the objects since"), "{said}");
}

#[test]
fn post_receive_answers_a_request_when_the_pusher_has_hung_up() {
    // The pusher stopped reading: what the hook says cannot be written.
    // It still answers the request, exits as usual and does not panic.
    let s = setup();
    let request = request_by_hand(&s.client, "HEAD", "main", EDIT);
    // Brought to the server under a reference of no concern, then made a
    // request there, as a push would have left it for the hook.
    ok(
        &s.client,
        &["push", "-q", "origin", &format!("{request}:refs/carry/x")],
    );
    ok(
        &s.server,
        &["update-ref", "refs/clada/inbox/hung-up", &request],
    );
    ok(&s.server, &["update-ref", "-d", "refs/carry/x"]);
    let mut hook = clada_std(s.root.path(), &s.server);
    hook.args(["hook", "post-receive"])
        .env("GIT_DIR", &s.server)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = hook.spawn().unwrap();
    drop(child.stdout.take());
    {
        use std::io::Write as _;
        let zero = "0".repeat(40);
        writeln!(
            child.stdin.take().unwrap(),
            "{zero} {request} refs/clada/inbox/hung-up"
        )
        .unwrap();
    }
    let done = child.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert!(
        !text(&done.stderr).contains("panicked"),
        "{}",
        text(&done.stderr)
    );
    let result = answered(&s.server, "hung-up");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn recovery_takes_no_commit_for_a_request_on_its_trailers_alone() {
    // A request's hook died before applying it. Someone who may push the
    // branch writes a commit on the request's commit that says it was
    // made from the reply (the request's id and reply are there for
    // anyone to read), with other content. The recovering hook does not
    // take it as the request's answer, nor apply the request again: it
    // says what it found.
    let s = setup();
    let request = request_by_hand(&s.client, "HEAD", "main", EDIT);
    push_left_waiting(&s.client, &request, "forged");
    let reply = ok(&s.client, &["rev-parse", &format!("{request}:")]);
    let blob = ok(&s.client, &["ls-tree", "--format=%(objectname)", &reply]);
    std::fs::write(s.client.join("a.txt"), "not what the reply says\n").unwrap();
    ok(&s.client, &["add", "a.txt"]);
    let message = format!(
        "[clada:post] edit a.txt\n\nClada-Reply: {blob}\nClada-Request-Ref: refs/clada/inbox/forged\nClada-Tasks: 1 succeeded, 0 failed, 0 skipped\n"
    );
    ok(&s.client, &["commit", "-q", "-m", &message]);
    let forged = ok(&s.client, &["rev-parse", "HEAD"]);
    // This push's hook answers the waiting request.
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let result = answered(&s.server, "forged");
    assert_eq!(trailer(&result, "Clada-Status"), Some("error"), "{result}");
    assert!(
        result.contains("names this request and its reply, but is not what the reply makes"),
        "{result}"
    );
    assert_eq!(trailer(&result, "Clada-Post"), None, "{result}");
    assert_eq!(ok(&s.server, &["rev-parse", "main"]), forged);
}

#[test]
fn push_reply_stops_a_push_that_does_not_finish_in_time() {
    // The server hangs in its pre-receive hook (a slow hook of its own,
    // chained before clada's): push-reply gives up at --push-timeout, says
    // so and how to get the result later, instead of hanging with it.
    let s = setup();
    let hooks = s.server.join("hooks");
    std::fs::remove_file(hooks.join("pre-receive")).unwrap();
    std::fs::write(hooks.join("pre-receive"), "#!/bin/sh\nsleep 20\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            hooks.join("pre-receive"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    clada(s.root.path(), &s.server)
        .args(["hook", "install", "--server", "--chain"])
        .assert()
        .success();
    let started = std::time::Instant::now();
    let out = push_reply_within(&s.client, EDIT, None, &["--push-timeout", "200ms"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(
        took < std::time::Duration::from_secs(10),
        "push-reply waited {took:?}"
    );
    let said = text(&out.stderr);
    assert!(
        said.contains("did not finish within 200ms (--push-timeout)"),
        "{said}"
    );
    assert!(
        said.contains("git fetch origin refs/clada/results/"),
        "{said}"
    );
}

#[test]
fn server_branches_limits_the_branches_requests_may_write() {
    let s = setup();
    ok(
        &s.server,
        &["config", "clada.serverBranches", "agents/*, scratch"],
    );
    let main = ok(&s.server, &["rev-parse", "main"]);
    // A request for main is refused at the push, with the reason.
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("is for main, which requests may not write on this server (git config clada.serverBranches: agents/* scratch)"),
        "{said}"
    );
    assert_eq!(
        ok(&s.server, &["for-each-ref", "refs/clada/"]),
        "",
        "nothing stored"
    );
    // A note on a commit that is main's tip and no allowed branch's is
    // answered `refused`; where an allowed branch is there too, that one
    // is written and main is not.
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    note(&s.client, "HEAD", EDIT);
    let found = pushed_result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("refused"), "{found}");
    assert!(found.contains("requests may not write main"), "{found}");
    ok(
        &s.client,
        &["push", "-q", "origin", "HEAD:refs/heads/agents/one"],
    );
    note(&s.client, "HEAD", &format!("Once more. {EDIT}"));
    let found = pushed_result(&s.client, &tip);
    assert_eq!(trailer(&found, "Clada-Status"), Some("success"), "{found}");
    assert_eq!(trailer(&found, "Clada-Branch"), Some("agents/one"));
    assert_eq!(ok(&s.server, &["rev-parse", "main"]), main);
    assert_eq!(ok(&s.server, &["show", "agents/one:a.txt"]), "hello");
    // Every value counts (`git config --add`).
    ok(
        &s.server,
        &["config", "--add", "clada.serverBranches", "main"],
    );
    let out = push_reply_fs(&s.client, &format!("Again. {EDIT}"), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    ok(&s.client, &["fetch", "-q", "origin"]);
    ok(&s.client, &["reset", "-q", "--hard", "origin/main"]);
    // Set but naming no branch, or a pattern that is none: every request
    // is refused (fails closed).
    ok(
        &s.server,
        &["config", "--replace-all", "clada.serverBranches", " , "],
    );
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("clada.serverBranches: it is set but names no branch"),
        "{}",
        text(&out.stderr)
    );
    ok(
        &s.server,
        &[
            "config",
            "--replace-all",
            "clada.serverBranches",
            "agents/[",
        ],
    );
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("git config clada.serverBranches: \"agents/[\" is not a branch pattern"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn settings_given_to_git_with_c_reach_clada() {
    // `git -c key=value clada …`: git passes them in
    // GIT_CONFIG_PARAMETERS, which clada reads as git would.
    let s = setup();
    std::fs::write(
        s.client.join(".git/r.md"),
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    )
    .unwrap();
    let out = git_cmd(
        &s.client,
        &["-c", "clada.format=json", "clada", "apply", ".git/r.md"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    assert_eq!(report["status"], "success", "{report}");
    // Outside a repository too (`parse` reads color.ui from git's files).
    std::fs::write(
        s.root.path().join("broken.md"),
        "<---WRITE--->\nb\n<---END--->\n",
    )
    .unwrap();
    let parse = |color: &str| {
        let out = git_cmd(
            s.root.path(),
            &[
                "-c",
                &format!("color.ui={color}"),
                "clada",
                "parse",
                "broken.md",
            ],
        )
        .output()
        .unwrap();
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    };
    assert!(parse("always").contains('\u{1b}'), "{}", parse("always"));
    assert!(!parse("never").contains('\u{1b}'), "{}", parse("never"));
}

/// Pushes `request` from `client` to `refs/clada/inbox/<id>`, the server's
/// hooks aborted at `fault` when given.
fn push_request(client: &Path, request: &str, id: &str, fault: Option<&str>) -> Output {
    let mut cmd = git_cmd(
        client,
        &[
            "push",
            "origin",
            &format!("{request}:refs/clada/inbox/{id}"),
        ],
    );
    if let Some(point) = fault {
        cmd.env("CLADA_FAULT", point);
    }
    cmd.output().unwrap()
}

/// `setup()`, then another commit on the server's main (`path` with
/// `content`), pushed as a plain push: a request made for the first
/// commit finds its branch moved. The first commit's id.
fn moved(s: &Setup, path: &str, content: &str) -> String {
    let base = ok(&s.client, &["rev-parse", "HEAD"]);
    std::fs::write(s.client.join(path), content).unwrap();
    ok(&s.client, &["add", path]);
    ok(&s.client, &["commit", "-q", "-m", "meanwhile"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    base
}

#[test]
fn a_request_whose_branch_moved_is_replayed_on_the_tip() {
    let s = setup();
    let base = moved(&s, "b.txt", "another agent's file\n");
    let tip = ok(&s.server, &["rev-parse", "main"]);
    let request = request_by_hand(&s.client, &base, "main", EDIT);
    let pushed = push_request(&s.client, &request, "late", None);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    let result = answered(&s.server, "late");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert!(
        result.contains(&format!("on top of {}", &tip[..7])),
        "{result}"
    );
    let post = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(trailer(&result, "Clada-Post"), Some(post.as_str()));
    // On the tip, not beside it: the other agent's commit is kept.
    assert_eq!(ok(&s.server, &["rev-parse", "main^"]), tip);
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    assert_eq!(
        ok(&s.server, &["show", "main:b.txt"]),
        "another agent's file"
    );
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_request_that_conflicts_with_the_moved_branch_is_stale_naming_the_operation() {
    let s = setup();
    let base = moved(&s, "a.txt", "howdy\n");
    let tip = ok(&s.server, &["rev-parse", "main"]);
    let request = request_by_hand(&s.client, &base, "main", EDIT);
    let pushed = push_request(&s.client, &request, "clash", None);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    let result = answered(&s.server, "clash");
    assert_eq!(trailer(&result, "Clada-Status"), Some("stale"), "{result}");
    assert!(
        result
            .lines()
            .any(|l| l.starts_with("stale: [task-1] SEARCH a.txt: it replaced 1 match")),
        "{result}"
    );
    assert_eq!(trailer(&result, "Clada-Post"), None, "{result}");
    assert_eq!(
        ok(&s.server, &["rev-parse", "main"]),
        tip,
        "nothing applied"
    );
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn server_replay_false_keeps_a_moved_branch_stale() {
    let s = setup();
    ok(&s.server, &["config", "clada.serverReplay", "false"]);
    let base = moved(&s, "b.txt", "another agent's file\n");
    let tip = ok(&s.server, &["rev-parse", "main"]);
    let request = request_by_hand(&s.client, &base, "main", EDIT);
    let pushed = push_request(&s.client, &request, "off", None);
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    let result = answered(&s.server, "off");
    assert_eq!(trailer(&result, "Clada-Status"), Some("stale"), "{result}");
    assert!(result.contains("main is no longer at"), "{result}");
    assert_eq!(
        ok(&s.server, &["rev-parse", "main"]),
        tip,
        "nothing applied"
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_replayed_request_whose_hook_died_after_the_move_is_answered_once() {
    let s = setup();
    let base = moved(&s, "b.txt", "another agent's file\n");
    let tip = ok(&s.server, &["rev-parse", "main"]);
    let request = request_by_hand(&s.client, &base, "main", EDIT);
    push_request(&s.client, &request, "cut", Some("branch-moved"));
    let post = ok(&s.server, &["rev-parse", "main"]);
    assert_eq!(
        ok(&s.server, &["rev-parse", "main^"]),
        tip,
        "applied on the tip"
    );
    clada(s.root.path(), &s.server)
        .args(["hook", "recover"])
        // Dated as the pushes are: results are kept by their dates.
        .env("GIT_COMMITTER_DATE", DATE)
        .env("GIT_AUTHOR_DATE", DATE)
        .assert()
        .success();
    let result = answered(&s.server, "cut");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(
        trailer(&result, "Clada-Post"),
        Some(post.as_str()),
        "{result}"
    );
    assert_eq!(ok(&s.server, &["rev-parse", "main"]), post, "applied once");
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn two_push_replies_in_a_row_from_one_clone_both_apply() {
    let s = setup();
    let first = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let stderr = text(&first.stderr);
    assert!(
        stderr.contains("main fast-forwarded to") && !stderr.contains("git merge"),
        "{stderr}"
    );
    assert_eq!(
        ok(&s.client, &["rev-parse", "main"]),
        ok(&s.server, &["rev-parse", "main"])
    );
    assert_eq!(
        std::fs::read_to_string(s.client.join("a.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(ok(&s.client, &["status", "--porcelain"]), "");
    // At once, no fetch or merge by hand: sent for the new tip.
    let again = "<---SEARCH file=\"a.txt\"--->\nhello\n<---REPLACE--->\nhello again\n<---END--->\n";
    let second = push_reply_fs(&s.client, again, None);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(
        ok(&s.client, &["rev-parse", "main"]),
        ok(&s.server, &["rev-parse", "main"])
    );
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello again");
    assert_eq!(
        std::fs::read_to_string(s.client.join("a.txt")).unwrap(),
        "hello again\n"
    );
    assert_eq!(ok(&s.client, &["status", "--porcelain"]), "");
    assert_eq!(ok(&s.server, &["rev-list", "--count", "main"]), "3");
    ok(&s.client, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn push_reply_keeps_uncommitted_changes_in_a_path_it_changes_and_says_so() {
    let s = setup();
    std::fs::write(s.client.join("a.txt"), "hi\nmine, uncommitted\n").unwrap();
    std::fs::write(s.client.join("u.txt"), "untracked\n").unwrap();
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("clada: kept a.txt: you have uncommitted changes in it")),
        "{stderr}"
    );
    assert_eq!(
        ok(&s.client, &["rev-parse", "main"]),
        ok(&s.server, &["rev-parse", "main"])
    );
    assert_eq!(ok(&s.client, &["show", "HEAD:a.txt"]), "hello");
    assert_eq!(
        std::fs::read_to_string(s.client.join("a.txt")).unwrap(),
        "hi\nmine, uncommitted\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.client.join("u.txt")).unwrap(),
        "untracked\n"
    );
    assert_eq!(
        ok(&s.client, &["status", "--porcelain"]),
        "M a.txt\n?? u.txt"
    );
}

#[test]
fn push_reply_no_update_and_a_failed_request_leave_the_branch() {
    let s = setup();
    let tip = ok(&s.client, &["rev-parse", "main"]);
    let missing = "<---SEARCH file=\"a.txt\"--->\nnot there\n<---REPLACE--->\nx\n<---END--->\n";
    let failed = push_reply_fs(&s.client, missing, None);
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed.stderr));
    let stderr = text(&failed.stderr);
    assert!(
        !stderr.contains("merge") && !stderr.contains("fast-forwarded"),
        "{stderr}"
    );
    assert_eq!(ok(&s.client, &["rev-parse", "main"]), tip);

    let out = push_reply_within(
        &s.client,
        EDIT,
        None,
        &["--timeout", "200ms", "--no-update"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("git merge --ff-only origin/main"),
        "{stderr}"
    );
    assert_eq!(ok(&s.client, &["rev-parse", "main"]), tip);
    assert_eq!(
        std::fs::read_to_string(s.client.join("a.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn hooks_killed_on_two_branches_at_once_leave_each_request_answered_once() {
    // Two pushes at once, for two branches, whose hooks apply in parallel
    // and are both killed at the same point; recovery answers each once.
    let points = [
        "post-receive",
        "hook-locked",
        "post-committed",
        "branch-moved",
        "noted",
        "hook-noted",
        "hook-answered",
    ];
    for point in points {
        let s = setup();
        let other = clone(s.root.path(), &s.server, "other");
        ok(&other, &["switch", "-q", "-c", "feature"]);
        ok(&other, &["push", "-q", "origin", "feature"]);
        let tip = ok(&s.client, &["rev-parse", "HEAD"]);
        let on_main = request_by_hand(&s.client, "HEAD", "main", EDIT);
        let on_feature = request_by_hand(&other, "HEAD", "feature", EDIT);
        let pushes: Vec<_> = [(&s.client, on_main, "m"), (&other, on_feature, "f")]
            .into_iter()
            .map(|(dir, request, id)| {
                let mut cmd = git_cmd(
                    dir,
                    &[
                        "push",
                        "origin",
                        &format!("{request}:refs/clada/inbox/{id}"),
                    ],
                );
                cmd.env("CLADA_FAULT", point);
                std::thread::spawn(move || cmd.output().expect("push"))
            })
            .collect();
        let mut said = String::new();
        for push in pushes {
            let out = push.join().unwrap();
            assert!(out.status.success(), "{point}: {}", text(&out.stderr));
            said.push_str(&text(&out.stderr));
        }
        let recovered = clada(s.root.path(), &s.server)
            .args(["hook", "recover"])
            // Dated as the pushes are: results are kept by their dates.
            .env("GIT_COMMITTER_DATE", DATE)
            .env("GIT_AUTHOR_DATE", DATE)
            .output()
            .unwrap();
        assert!(recovered.status.success());
        said.push_str(&text(&recovered.stdout));
        let left = ok(
            &s.server,
            &["for-each-ref", "--format=%(refname)", "refs/clada/inbox/"],
        );
        assert_eq!(left, "", "{point}: every request is taken away");
        for (id, branch) in [("m", "main"), ("f", "feature")] {
            let result = answered(&s.server, id);
            assert_eq!(
                trailer(&result, "Clada-Status"),
                Some("success"),
                "{point} {branch}: {result}\n--- what the hooks said:\n{said}"
            );
            // Applied exactly once, on the request's commit.
            let post = ok(&s.server, &["rev-parse", branch]);
            assert_eq!(
                ok(&s.server, &["rev-parse", &format!("{branch}^")]),
                tip,
                "{point}"
            );
            assert_eq!(
                trailer(&result, "Clada-Post"),
                Some(post.as_str()),
                "{point}"
            );
            assert_eq!(
                ok(&s.server, &["show", &format!("{branch}:a.txt")]),
                "hello"
            );
        }
        ok(&s.server, &["fsck", "--strict", "--no-progress"]);
        // A push afterwards is not held up by what the killed hooks left.
        ok(&s.client, &["push", "-q", "origin", "main:later"]);
        assert!(!s.server.join("clada.lock").exists(), "{point}");
    }
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_request_whose_push_is_still_running_is_left_to_its_own_hook() {
    // Between the moment receive-pack writes a request's reference and
    // the moment its post-receive claims it, another push's hook must not
    // take it for one whose hook was stopped: pre-receive claimed it for
    // the receive-pack.
    let s = setup();
    let other = clone(s.root.path(), &s.server, "other");
    ok(&other, &["switch", "-q", "-c", "feature"]);
    ok(&other, &["push", "-q", "origin", "feature"]);
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    let on_main = request_by_hand(&s.client, "HEAD", "main", EDIT);
    let on_feature = request_by_hand(&other, "HEAD", "feature", EDIT);
    let pause = s.root.path().join("pause");
    let first = push_paused_at(
        &s.client,
        &["push", "origin", &format!("{on_main}:refs/clada/inbox/m")],
        "post-receive",
        &pause,
    );
    let second = git_cmd(
        &other,
        &[
            "push",
            "origin",
            &format!("{on_feature}:refs/clada/inbox/f"),
        ],
    )
    .output()
    .expect("push");
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(
        !text(&second.stderr).contains("answering the request m"),
        "{}",
        text(&second.stderr)
    );
    assert_eq!(
        ok(&s.server, &["rev-parse", "main"]),
        tip,
        "m is not applied yet"
    );
    std::fs::write(format!("{}.go", pause.display()), b"").unwrap();
    let first = first.join().unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    for (id, branch) in [("m", "main"), ("f", "feature")] {
        let result = answered(&s.server, id);
        assert_eq!(
            trailer(&result, "Clada-Status"),
            Some("success"),
            "{result}"
        );
        assert_eq!(ok(&s.server, &["rev-parse", &format!("{branch}^")]), tip);
    }
    // Each answered by its own hook.
    let log = std::fs::read_to_string(s.server.join("clada/requests.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(
        log.lines().all(|l| l.contains("\"recovered\":false")),
        "{log}"
    );
    assert!(
        std::fs::read_dir(s.server.join("clada/claims"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_lone_request_gives_its_branchs_turn_back_once_applied() {
    // A hook answering one request holds its branch's turn for the apply
    // only: the next request for the branch is applied while the first
    // hook still writes its result. Were the turn held to the end, the
    // second hook would wait for it and give up after the lock timeout.
    let s = setup();
    ok(&s.server, &["config", "clada.lockTimeout", "2s"]);
    let other = clone(s.root.path(), &s.server, "other");
    let tip = ok(&s.client, &["rev-parse", "HEAD"]);
    let one = request_by_hand(&s.client, "HEAD", "main", EDIT);
    let two = request_by_hand(
        &other,
        "HEAD",
        "main",
        "<---WRITE file=\"b.txt\"--->\nnew\n<---END--->\n",
    );
    let pause = s.root.path().join("pause");
    let first = push_paused_at(
        &s.client,
        &["push", "origin", &format!("{one}:refs/clada/inbox/one")],
        "hook-applied",
        &pause,
    );
    // Applied, its result not written yet.
    let post = ok(&s.server, &["rev-parse", "main"]);
    assert_ne!(post, tip);
    assert_eq!(ok(&s.server, &["for-each-ref", "refs/clada/results/"]), "");
    let second = git_cmd(
        &other,
        &["push", "origin", &format!("{two}:refs/clada/inbox/two")],
    )
    .output()
    .expect("push");
    assert!(second.status.success(), "{}", text(&second.stderr));
    let result = answered(&s.server, "two");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(
        ok(&s.server, &["rev-parse", "main^"]),
        post,
        "replayed on one's apply"
    );
    std::fs::write(format!("{}.go", pause.display()), b"").unwrap();
    let first = first.join().unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let result = answered(&s.server, "one");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(
        trailer(&result, "Clada-Post"),
        Some(post.as_str()),
        "{result}"
    );
    // Each applied once, in the order they came.
    assert_eq!(ok(&s.server, &["rev-list", "--count", "main"]), "3");
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    assert_eq!(ok(&s.server, &["show", "main:b.txt"]), "new");
    ok(&s.server, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_push_reply_from_a_clone_behind_the_server_is_replayed_on_its_tip() {
    let s = setup();
    let other = clone(s.root.path(), &s.server, "other");
    std::fs::write(other.join("b.txt"), "another agent's file\n").unwrap();
    ok(&other, &["add", "b.txt"]);
    ok(&other, &["commit", "-q", "-m", "meanwhile"]);
    ok(&other, &["push", "-q", "origin", "main"]);
    let tip = ok(&s.server, &["rev-parse", "main"]);
    // The clone knows the new tip but its branch is behind it (as after a
    // stale result): the request is sent for its own commit alone.
    ok(&s.client, &["fetch", "-q", "origin"]);
    let out = push_reply_fs(&s.client, EDIT, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(ok(&s.server, &["rev-parse", "main^"]), tip);
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    assert_eq!(
        ok(&s.client, &["rev-parse", "main"]),
        ok(&s.server, &["rev-parse", "main"])
    );
    assert_eq!(
        std::fs::read_to_string(s.client.join("b.txt")).unwrap(),
        "another agent's file\n"
    );
}

/// Issue 28 point 6: the server's result text is shown as `apply` shows
/// untrusted text: a file holding escape sequences, read on the server,
/// reaches the agent's terminal with its control characters escaped,
/// never as the sequences themselves.
#[test]
fn push_reply_escapes_the_results_control_characters() {
    let s = setup();
    std::fs::write(
        s.client.join("esc.txt"),
        "\x1b[2J\x1b]0;owned\x07cleared\rover\n",
    )
    .unwrap();
    ok(&s.client, &["add", "esc.txt"]);
    ok(&s.client, &["commit", "-q", "-m", "esc"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let out = push_reply_fs(&s.client, r#"[{"op": "read", "paths": ["esc.txt"]}]"#, None);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}{}", text(&out.stderr));
    assert!(shown.contains("cleared"), "{shown}");
    assert!(
        !shown
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{shown:?}"
    );
    assert!(shown.contains("\\u{1b}[2J"), "{shown}");
    assert!(shown.contains("cleared\\u{d}over"), "{shown}");
}

/// Issue 28 point 5 on the server: a small request of many READs shows
/// the server's limit once for the whole request, and a pushed team file
/// cannot raise it.
#[test]
fn a_requests_reads_are_bounded_as_a_whole_on_the_server() {
    let s = setup();
    ok(&s.server, &["config", "clada.maxOutput", "4KB"]);
    let line = format!("{}\n", "z".repeat(99));
    std::fs::write(s.client.join("big.txt"), line.repeat(100)).unwrap();
    std::fs::create_dir_all(s.client.join(".clada")).unwrap();
    std::fs::write(
        s.client.join(".clada/config.toml"),
        "maxOutput = \"1GB\"\nmaxReplyOutput = \"1GB\"\n",
    )
    .unwrap();
    ok(&s.client, &["add", "-A"]);
    ok(&s.client, &["commit", "-q", "-m", "big"]);
    ok(&s.client, &["push", "-q", "origin", "main"]);
    let read = r#"{"op": "read", "paths": ["big.txt"]}"#;
    let reply = format!("[{}]", [read; 5].join(", "));
    let out = push_reply_fs(&s.client, &reply, None);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}{}", text(&out.stderr));
    let read_lines = shown.lines().filter(|l| l.contains(":read] ")).count();
    assert_eq!(read_lines, 40, "{shown}");
    assert_eq!(shown.matches("output_limit").count(), 4, "{shown}");
}
