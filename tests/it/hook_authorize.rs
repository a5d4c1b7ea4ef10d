//! Branch permissions on a server (issue 28, point 2): `clada.authorize`
//! decides whether the pusher (`clada.pusherVariables`) may write the
//! branch a request is for, failing closed, and the pusher is recorded in
//! the post commit and the result.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::clada;
use crate::hook::{EDIT, git_cmd, ok, text, trailer};

/// A bare server with the receive hooks, a client that pushed `main`, and
/// `authorize.sh`: it logs its arguments and environment to
/// `authorize.log` and allows alice to write anything, bob only
/// `agents/*`.
fn server() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let crate::hook::Setup {
        root,
        server,
        client,
    } = crate::hook::setup();
    // A second branch at the same commit, for a second request.
    ok(&client, &["branch", "agents/b"]);
    ok(&client, &["push", "-q", "origin", "agents/b"]);
    let script = root.path().join("authorize.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$* | $CLADA_PUSHER $CLADA_BRANCH $CLADA_REF\" >> '{}'\n\
             case \"$1:$3\" in alice:*|bob:agents/*) exit 0;; esac\n\
             echo \"$1 may not push $3\" >&2\nexit 1\n",
            root.path().join("authorize.log").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (root, server, client)
}

fn authorize_with_script(root: &Path, server: &Path) {
    let script = root.join("authorize.sh");
    ok(
        server,
        &["config", "clada.authorize", script.to_str().unwrap()],
    );
}

fn log(root: &Path) -> String {
    std::fs::read_to_string(root.join("authorize.log")).unwrap_or_default()
}

/// `git clada push-reply origin <branch>` of `reply` from `client`, with
/// the variables `env` set: the pusher's (the hooks inherit it over the
/// local filesystem, as a web server's `REMOTE_USER`), a fault point.
fn push_reply_as(client: &Path, env: &[(&str, &str)], branch: &str) -> Output {
    let file = client.join(".git/request.md");
    std::fs::write(&file, EDIT).unwrap();
    let mut cmd = git_cmd(
        client,
        &[
            "clada",
            "push-reply",
            "origin",
            branch,
            file.to_str().unwrap(),
            "--timeout",
            "200ms",
        ],
    );
    cmd.envs(env.iter().copied());
    cmd.output().expect("run git clada push-reply")
}

/// The message of the only result under `refs/clada/results/` on
/// `server`.
fn only_result(server: &Path) -> String {
    let refs = ok(
        server,
        &["for-each-ref", "--format=%(refname)", "refs/clada/results/"],
    );
    let names: Vec<&str> = refs.lines().collect();
    assert_eq!(names.len(), 1, "{refs}");
    ok(server, &["log", "-1", "--format=%B", names[0]])
}

#[test]
fn a_request_for_a_branch_the_pusher_may_not_write_is_refused_at_the_push() {
    let (root, server, client) = server();
    authorize_with_script(root.path(), &server);
    let main = ok(&server, &["rev-parse", "main"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "bob")], "main");
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("push rejected: refs/clada/inbox/"), "{said}");
    assert!(
        said.contains(" is for main, and bob may not write main: git config clada.authorize"),
        "{said}"
    );
    assert!(said.contains("exit 1 (bob may not push main)"), "{said}");
    assert_eq!(ok(&server, &["rev-parse", "main"]), main, "main unmoved");
    assert_eq!(ok(&server, &["for-each-ref", "refs/clada/"]), "", "{said}");
    // The user, the repository's absolute path and the branch, as
    // arguments and in the environment.
    let repo = std::fs::canonicalize(&server).unwrap();
    assert!(
        log(root.path()).contains(&format!(
            "bob {} main | bob main refs/heads/main",
            repo.display()
        )),
        "{}",
        log(root.path())
    );
    // A note in the shared inbox on main's tip is refused the same way.
    crate::hook::note(&client, "HEAD", EDIT);
    let pushed = git_cmd(&client, &["push", "origin", "refs/notes/clada-inbox"])
        .env("GL_USER", "bob")
        .output()
        .unwrap();
    let said = text(&pushed.stderr);
    assert!(!pushed.status.success(), "{said}");
    assert!(
        said.contains("the note on ") && said.contains("is for main, and bob may not write main"),
        "{said}"
    );
    assert_eq!(ok(&server, &["rev-parse", "main"]), main, "main unmoved");
}

#[test]
fn a_request_the_command_allows_is_applied_with_its_pusher_recorded() {
    let (root, server, client) = server();
    authorize_with_script(root.path(), &server);
    let out = push_reply_as(&client, &[("REMOTE_USER", "alice")], "main");
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
    let post = ok(&server, &["log", "-1", "--format=%B", "main"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), Some("alice"), "{post}");
    let result = only_result(&server);
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    assert_eq!(trailer(&result, "Clada-Pusher"), Some("alice"), "{result}");
    // Asked in pre-receive, and again for the branch chosen under the
    // lock.
    assert_eq!(log(root.path()).lines().count(), 2, "{}", log(root.path()));
    // Gitea's variable, and bob on a branch he may write.
    let out = push_reply_as(&client, &[("GITEA_PUSHER_NAME", "bob")], "agents/b");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let post = ok(&server, &["log", "-1", "--format=%B", "agents/b"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), Some("bob"), "{post}");
}

#[test]
fn with_authorize_set_a_push_without_a_known_pusher_is_refused() {
    let (root, server, client) = server();
    authorize_with_script(root.path(), &server);
    let main = ok(&server, &["rev-parse", "main"]);
    let out = push_reply_as(&client, &[], "main");
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("is for main, and no pusher identity: git config clada.authorize is set, and none of REMOTE_USER, GL_USER, GITEA_PUSHER_NAME, GL_USERNAME is set"),
        "{said}"
    );
    assert_eq!(ok(&server, &["rev-parse", "main"]), main);
    assert_eq!(log(root.path()), "", "the command is not run");
    // clada.pusherVariables replaces the list: REMOTE_USER is then not
    // read.
    ok(&server, &["config", "clada.pusherVariables", "MY_USER"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "alice")], "main");
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("none of git config clada.pusherVariables (MY_USER) is set"),
        "{said}"
    );
    let out = push_reply_as(&client, &[("MY_USER", "alice")], "main");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
}

#[test]
fn an_authorize_command_that_cannot_start_refuses_the_push() {
    let (root, server, client) = server();
    ok(
        &server,
        &[
            "config",
            "clada.authorize",
            &format!("{} --flag", root.path().join("missing").display()),
        ],
    );
    let main = ok(&server, &["rev-parse", "main"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "alice")], "main");
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("could not be run"), "{said}");
    assert!(
        said.contains("alice may not write main until it can"),
        "{said}"
    );
    assert_eq!(ok(&server, &["rev-parse", "main"]), main);
}

#[test]
fn without_authorize_requests_apply_as_before() {
    let (root, server, client) = server();
    let out = push_reply_as(&client, &[], "main");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
    let post = ok(&server, &["log", "-1", "--format=%B", "main"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), None, "{post}");
    // A known pusher is recorded all the same, and not checked.
    let out = push_reply_as(&client, &[("REMOTE_USER", "bob")], "agents/b");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let post = ok(&server, &["log", "-1", "--format=%B", "agents/b"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), Some("bob"), "{post}");
    assert_eq!(log(root.path()), "");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_request_left_by_a_stopped_hook_keeps_its_pusher() {
    let (root, server, client) = server();
    authorize_with_script(root.path(), &server);
    // Alice's request, its post-receive stopped once it holds the lock.
    let stopped = push_reply_as(
        &client,
        &[("REMOTE_USER", "alice"), ("CLADA_FAULT", "hook-locked")],
        "main",
    );
    let waiting = ok(
        &server,
        &["for-each-ref", "--format=%(refname)", "refs/clada/inbox/"],
    );
    assert!(!waiting.is_empty(), "{}", text(&stopped.stderr));
    // Bob's push (to a branch he may write) answers it: as alice's.
    let pushed = git_cmd(&client, &["push", "origin", "main:agents/c"])
        .env("REMOTE_USER", "bob")
        .output()
        .unwrap();
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
    let post = ok(&server, &["log", "-1", "--format=%B", "main"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), Some("alice"), "{post}");
    let result = only_result(&server);
    assert_eq!(trailer(&result, "Clada-Pusher"), Some("alice"), "{result}");
}

#[test]
fn post_receive_asks_again_for_the_branch_it_applies_to() {
    // Without pre-receive (or for a branch that moved onto the note's
    // commit since it ran), post-receive's own check refuses the request.
    let (root, server, client) = server();
    authorize_with_script(root.path(), &server);
    std::fs::remove_file(server.join("hooks/pre-receive")).unwrap();
    let main = ok(&server, &["rev-parse", "main"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "bob")], "main");
    let said = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok(&server, &["rev-parse", "main"]), main, "main unmoved");
    let result = only_result(&server);
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("refused"),
        "{result}"
    );
    assert_eq!(trailer(&result, "Clada-Pusher"), Some("bob"), "{result}");
    assert!(
        result.contains("refused: bob may not write main: git config clada.authorize"),
        "{result}"
    );
    assert!(result.contains("the request was not applied"), "{result}");
}

#[test]
fn an_authorize_setting_that_names_no_command_fails_every_push_of_a_request() {
    let (_root, server, client) = server();
    ok(&server, &["config", "clada.authorize", "  "]);
    let main = ok(&server, &["rev-parse", "main"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "alice")], "main");
    let said = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("names no command"), "{said}");
    assert_eq!(ok(&server, &["rev-parse", "main"]), main);
    ok(&server, &["config", "clada.authorize", "'unclosed"]);
    let out = push_reply_as(&client, &[("REMOTE_USER", "alice")], "main");
    let said = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("git config clada.authorize = \"'unclosed\""),
        "{said}"
    );
    assert_eq!(ok(&server, &["rev-parse", "main"]), main);
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "fault and pause points need a debug build (src/fault.rs)"
)]
fn a_push_claiming_a_waiting_requests_id_cannot_change_its_pusher() {
    // Without clada.authorize, where the pusher is only recorded (with
    // it, carol would also have to be allowed to write main).
    let (root, server, client) = server();
    push_reply_as(
        &client,
        &[("REMOTE_USER", "alice"), ("CLADA_FAULT", "hook-locked")],
        "main",
    );
    let waiting = ok(
        &server,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/clada/inbox/",
        ],
    );
    let (commit, name) = waiting.split_once(' ').expect("a request waits");
    // A client need not send the true old value of a reference: git
    // checks it only after pre-receive. Given as new, as a crafted push
    // would, the request is refused before anything is recorded.
    let hook = git_cmd(&server, &["clada", "hook", "pre-receive"])
        .env("REMOTE_USER", "carol")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    writeln!(
        hook.stdin.as_ref().unwrap(),
        "{} {commit} {name}",
        "0".repeat(40)
    )
    .unwrap();
    let said = hook.wait_with_output().unwrap();
    // Run by hand, the hook prints on standard output.
    let printed = text(&said.stdout);
    assert!(!said.status.success(), "{printed}");
    assert!(printed.contains("already holds a request"), "{printed}");
    // Answered as alice's.
    clada(root.path(), &server)
        .args(["hook", "recover"])
        .assert()
        .success();
    let post = ok(&server, &["log", "-1", "--format=%B", "main"]);
    assert_eq!(trailer(&post, "Clada-Pusher"), Some("alice"), "{post}");
}
