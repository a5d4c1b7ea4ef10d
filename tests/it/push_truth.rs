//! `push-reply` tells the agent what became of its request when the push
//! fails (issue 28, point 1): a connection that broke after the server
//! stored the request is waited on as after a normal push; one whose
//! outcome cannot be found out says so, with exit 4 and the command that
//! fetches the answer later; one that failed before anything was sent is
//! a network error (exit 5); a refusal by the server stays exit 2.
//!
//! The server is a bare repository pushed to over the filesystem, so its
//! `git-receive-pack` is a child process the test controls: a
//! `reference-transaction` hook kills it once the request is stored (or
//! before), as a web server killed mid-request would.

use std::path::Path;

use crate::hook::{EDIT, Setup, answered, ok, push_reply_within, setup, text, trailer};

/// Writes `script` as the executable `reference-transaction` hook of the
/// repository at `git_dir`.
fn reference_transaction_hook(git_dir: &Path, script: &str) {
    let hook = git_dir.join("hooks/reference-transaction");
    std::fs::write(&hook, script).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The hook script that kills receive-pack at `state` of the first push
/// writing a request, running `later` (shell) first.
fn killing_script(state: &str, later: &str) -> String {
    format!(
        "#!/bin/sh\n\
         [ \"$1\" = {state} ] || exit 0\n\
         grep -q refs/clada/inbox/ || exit 0\n\
         [ -e dropped ] && exit 0\n\
         : > dropped\n\
         {later}\
         kill -9 $PPID\n"
    )
}

/// Makes the server's receive-pack die (SIGKILL, from a
/// `reference-transaction` hook) at `state` ("prepared": before the
/// request is stored; "committed": after) of the first push that writes a
/// request, before it reports anything to the pusher. With `recover`,
/// the request is answered a second later as the server's next push
/// would answer it (`git clada hook recover`, in the background).
fn drop_connection_at(s: &Setup, state: &str, recover: bool) {
    let later = if recover {
        "(sleep 1; git clada hook recover) </dev/null >/dev/null 2>&1 &\n"
    } else {
        ""
    };
    reference_transaction_hook(&s.server, &killing_script(state, later));
}

/// The refs under `refs/clada/` on the server.
fn clada_refs(server: &Path) -> String {
    ok(
        server,
        &["for-each-ref", "--format=%(refname)", "refs/clada/"],
    )
}

#[test]
fn a_request_stored_before_the_connection_broke_is_waited_for_not_called_refused() {
    let s = setup();
    drop_connection_at(&s, "committed", true);
    let out = push_reply_within(
        &s.client,
        EDIT,
        None,
        &["--id", "broken-1", "--timeout", "60s"],
    );
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(s.server.join("dropped").exists(), "the hook did not run");
    assert!(!said.contains("refused"), "{said}");
    assert!(
        said.contains("but the server has the request broken-1: it answers it as after any push"),
        "{said}"
    );
    assert!(
        text(&out.stdout).contains("Clada-Status: success"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    let result = answered(&s.server, "broken-1");
    assert_eq!(
        trailer(&result, "Clada-Status"),
        Some("success"),
        "{result}"
    );
    // The applied branch came here as after any push-reply.
    assert_eq!(ok(&s.client, &["show", "main:a.txt"]), "hello");
    // Sent again under its id, it is not taken again (never applied
    // twice), and the agent is told the result it has.
    let again = push_reply_within(&s.client, EDIT, None, &["--id", "broken-1"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("the request broken-1 was answered before"),
        "{}",
        text(&again.stderr)
    );
    told_the_result_applied_once(&s, &again);
}

#[test]
fn a_broken_push_whose_outcome_cannot_be_asked_is_unknown_with_its_own_exit_code() {
    let s = setup();
    drop_connection_at(&s, "committed", false);
    // The server cannot be asked either: its upload-pack (what ls-remote
    // and fetch talk to) fails.
    ok(&s.client, &["config", "remote.origin.uploadpack", "false"]);
    let out = push_reply_within(&s.client, EDIT, None, &["--id", "unknown-1"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(!said.contains("refused"), "{said}");
    assert!(
        said.contains("the outcome of the request unknown-1 is unknown"),
        "{said}"
    );
    assert!(
        said.contains("git fetch origin refs/clada/results/unknown-1"),
        "{said}"
    );
    assert!(said.contains("--id unknown-1"), "{said}");
    // Rightly so: the server has it, and answers it later.
    assert_eq!(clada_refs(&s.server), "refs/clada/inbox/unknown-1");
    ok(&s.server, &["clada", "hook", "recover"]);
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
}

/// A first push of `id` that broke after the server stored the request,
/// the server not to be asked: the agent is told the outcome is unknown
/// (exit 4), as bench/http_kill.py's agents were when the web server was
/// killed.
fn unknown_after_a_broken_push(s: &Setup, id: &str) {
    drop_connection_at(s, "committed", false);
    ok(&s.client, &["config", "remote.origin.uploadpack", "false"]);
    let out = push_reply_within(&s.client, EDIT, None, &["--id", id]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    ok(
        &s.client,
        &["config", "--unset", "remote.origin.uploadpack"],
    );
}

#[test]
fn a_reply_sent_again_under_its_id_after_it_applied_is_told_its_result_not_refused() {
    // The agent told "unknown" sends the reply again under the same id,
    // as push-reply says is safe. The server refuses the id (it answered
    // it): that is no refusal of the reply, which was applied, and "nothing
    // was applied" would be a lie the agent acts on.
    let s = setup();
    unknown_after_a_broken_push(&s, "again-1");
    ok(&s.server, &["clada", "hook", "recover"]);
    let again = push_reply_within(
        &s.client,
        EDIT,
        None,
        &["--id", "again-1", "--timeout", "30s"],
    );
    let said = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{said}");
    assert!(!said.contains("nothing was applied"), "{said}");
    assert!(
        said.contains("the server has the request again-1 from before"),
        "{said}"
    );
    assert!(
        text(&again.stdout).contains("Clada-Status: success"),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
    assert_eq!(
        ok(&s.server, &["rev-list", "--count", "main"]),
        "2",
        "applied once"
    );
}

#[test]
fn a_reply_sent_again_under_its_id_while_the_server_holds_it_waits_for_its_result() {
    // The first push's request is stored and not answered yet (its hook
    // died): sent again, the id is refused as held, and the agent waits
    // for the answer the server's next push (here: hook recover) gives.
    let s = setup();
    unknown_after_a_broken_push(&s, "again-2");
    let server = s.server.clone();
    let later = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        ok(&server, &["clada", "hook", "recover"]);
    });
    // Sent a minute later, the request is another commit, for the same
    // reference the server holds.
    let file = s.client.join(".git/request.md");
    std::fs::write(&file, EDIT).unwrap();
    let again = crate::hook::git_cmd(
        &s.client,
        &[
            "clada",
            "push-reply",
            "--id",
            "again-2",
            "--timeout",
            "60s",
            "origin",
            "main",
            file.to_str().unwrap(),
        ],
    )
    .env("GIT_AUTHOR_DATE", "2026-01-01T00:01:00Z")
    .env("GIT_COMMITTER_DATE", "2026-01-01T00:01:00Z")
    .output()
    .unwrap();
    later.join().unwrap();
    let said = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{said}");
    assert!(!said.contains("nothing was applied"), "{said}");
    assert!(
        said.contains("the server has the request again-2 from before"),
        "{said}"
    );
    told_the_result_applied_once(&s, &again);
}

#[test]
fn a_different_reply_under_an_answered_id_is_not_told_the_other_ones_result() {
    // The id is the agent's word only: a reply sent under an id the server
    // answered for another reply is not given that reply's result.
    let s = setup();
    unknown_after_a_broken_push(&s, "again-3");
    ok(&s.server, &["clada", "hook", "recover"]);
    let other = push_reply_within(
        &s.client,
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
        None,
        &["--id", "again-3", "--timeout", "30s"],
    );
    let said = text(&other.stderr);
    assert_eq!(other.status.code(), Some(2), "{said}");
    assert!(!text(&other.stdout).contains("Clada-Status"), "{said}");
    assert!(
        said.contains("refs/clada/results/again-3 answers another reply than this one"),
        "{said}"
    );
    assert!(said.contains("under a new id"), "{said}");
    assert_eq!(
        ok(&s.server, &["rev-list", "--count", "main"]),
        "2",
        "the first reply applied, the second not"
    );
}

#[test]
fn a_push_that_broke_before_the_request_was_stored_is_not_called_refused() {
    // The server does not have the request when asked, but a server that
    // was still working when the connection broke may store it after: not
    // a refusal, and not "nothing was applied" either. Sending it again
    // under its id is safe.
    let s = setup();
    drop_connection_at(&s, "prepared", false);
    let out = push_reply_within(&s.client, EDIT, None, &["--id", "early-1"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(!said.contains("refused"), "{said}");
    assert!(
        said.contains("the server does not have the request early-1"),
        "{said}"
    );
    assert!(said.contains("--id early-1"), "{said}");
    assert_eq!(clada_refs(&s.server), "");
    // The killed receive-pack left its lock behind, as a killed server
    // does; once it is gone, the same id goes through, once.
    let _ = std::fs::remove_file(s.server.join("refs/clada/inbox/early-1.lock"));
    let again = push_reply_within(
        &s.client,
        EDIT,
        None,
        &["--id", "early-1", "--timeout", "30s"],
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(ok(&s.server, &["show", "main:a.txt"]), "hello");
}

#[test]
fn a_connection_refused_is_a_network_error_and_nothing_was_sent() {
    let s = setup();
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let file = s.client.join(".git/request.md");
    std::fs::write(&file, EDIT).unwrap();
    let url = format!("http://127.0.0.1:{port}/server.git");
    let out = crate::hook::git_cmd(
        &s.client,
        &["clada", "push-reply", &url, "main", file.to_str().unwrap()],
    )
    .output()
    .unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(!said.contains("refused; nothing"), "{said}");
    assert!(
        said.contains("clada: nothing was sent: the push could not reach the server"),
        "{said}"
    );
    assert_eq!(clada_refs(&s.server), "");
}

#[test]
fn a_refusal_by_the_server_stays_exit_2_with_its_diagnostics() {
    let s = setup();
    let out = push_reply_within(
        &s.client,
        "<---WRTIE file=\"b.txt\"--->\nx\n<---END--->\n",
        None,
        &[],
    );
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("Unknown operation: WRTIE"), "{said}");
    assert!(
        said.contains("clada: the request was refused (above); nothing was applied"),
        "{said}"
    );
    assert!(!said.contains("is unknown"), "{said}");
    assert_eq!(clada_refs(&s.server), "");
}

#[test]
fn an_ssh_connection_the_server_drops_at_once_is_a_network_error() {
    // sshd over its MaxStartups closes new connections before a word of
    // git's protocol: ssh says so and exits 255, as this stand-in does.
    let s = setup();
    let ssh = s.root.path().join("ssh");
    std::fs::write(
        &ssh,
        "#!/bin/sh\n\
         echo 'kex_exchange_identification: Connection closed by remote host' >&2\n\
         echo 'Connection closed by 127.0.0.1 port 22' >&2\n\
         exit 255\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = s.client.join(".git/request.md");
    std::fs::write(&file, EDIT).unwrap();
    let out = crate::hook::git_cmd(
        &s.client,
        &[
            "clada",
            "push-reply",
            "ssh://agent@127.0.0.1/server.git",
            "main",
            file.to_str().unwrap(),
        ],
    )
    .env("GIT_SSH_COMMAND", &ssh)
    .output()
    .unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(
        said.contains("clada: nothing was sent: the push could not reach the server"),
        "{said}"
    );
    assert_eq!(clada_refs(&s.server), "");
}

#[test]
fn over_http_a_request_stored_before_the_server_died_is_waited_for() {
    stored_before_the_server_died(crate::http::Web::Lighttpd);
}

#[test]
fn through_nginx_a_request_stored_before_the_server_died_is_waited_for() {
    stored_before_the_server_died(crate::http::Web::Nginx);
}

/// The web server's receive-pack dies once the request is stored, as
/// when the web server is killed and restarted: the agent is told the
/// request is there and gets its result when the server answers it.
fn stored_before_the_server_died(web: crate::http::Web) {
    let Some(server) = crate::http::HttpServer::start_on(web) else {
        return;
    };
    let root = crate::common::scratch();
    let client = crate::http::seeded(&server, root.path(), "truth");
    reference_transaction_hook(&server.path("truth"), &killing_script("committed", ""));
    let file = client.join(".git/request.md");
    std::fs::write(&file, EDIT).unwrap();
    let agent = crate::hook::git_cmd(
        &client,
        &[
            "clada",
            "push-reply",
            "--id",
            "http-broken",
            "--timeout",
            "60s",
            // lighttpd and nginx + fcgiwrap both leave the request open
            // when its receive-pack dies: the push is stopped here, and
            // the server asked then.
            "--push-timeout",
            "3s",
            "origin",
            "main",
            file.to_str().unwrap(),
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    // The request is answered as the server's next push would answer it.
    let stored = std::time::Instant::now();
    while !server.path("truth").join("dropped").exists() {
        assert!(
            stored.elapsed() < std::time::Duration::from_secs(30),
            "the push never reached the hook"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    server.git("truth", &["clada", "hook", "recover"]);
    let out = agent.wait_with_output().unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!said.contains("refused"), "{said}");
    assert!(
        said.contains(
            "but the server has the request http-broken: it answers it as after any push"
        ),
        "{said}"
    );
    assert!(
        text(&out.stdout).contains("Clada-Status: success"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(server.git("truth", &["show", "main:a.txt"]), "hello");
}

/// `out`, a push-reply's, printed the request's successful result, and
/// the request's edit is on the server's main once.
fn told_the_result_applied_once(s: &Setup, out: &std::process::Output) {
    assert!(
        text(&out.stdout).contains("Clada-Status: success"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        ok(&s.server, &["rev-list", "--count", "main"]),
        "2",
        "applied once"
    );
}
