//! What a pusher may not write on a server with clada's hooks (issue 28):
//! the records only the hooks write, and requests whose `Clada-Branch`
//! does not name one branch.

use std::path::{Path, PathBuf};

use crate::common::clada;
use crate::hook::{ok, run, text};

/// A bare server with the receive hooks, and a client that pushed `main`
/// (`hook::setup`).
fn server() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let s = crate::hook::setup();
    (s.root, s.server, s.client)
}

fn refused(client: &Path, refspec: &str, why: &str) {
    let pushed = run(client, &["push", "origin", refspec]);
    assert!(!pushed.status.success(), "{refspec} was accepted");
    assert!(
        text(&pushed.stderr).contains(why),
        "{}",
        text(&pushed.stderr)
    );
}

#[test]
fn the_records_only_the_hooks_write_cannot_be_pushed() {
    let (_root, server, client) = server();
    // Installing the server hooks keeps results out of pushes'
    // advertisements, once.
    assert_eq!(
        ok(&server, &["config", "--get-all", "receive.hideRefs"]),
        "refs/clada/results"
    );
    clada(&server, &server)
        .args(["hook", "install", "--server"])
        .assert()
        .success();
    assert_eq!(
        ok(&server, &["config", "--get-all", "receive.hideRefs"]),
        "refs/clada/results"
    );
    ok(
        &client,
        &[
            "notes",
            "--ref",
            "clada",
            "add",
            "-m",
            "a forged reply",
            "HEAD",
        ],
    );
    refused(
        &client,
        "refs/notes/clada",
        "written only by the server's hooks",
    );
    refused(
        &client,
        "HEAD:refs/clada/rejected/1",
        "written only by the server's hooks",
    );
    refused(
        &client,
        "HEAD:refs/clada/undo/1",
        "written only by the server's hooks",
    );
    // Nor deleted or forced, once the server has them.
    let head = ok(&client, &["rev-parse", "HEAD"]);
    ok(&server, &["update-ref", "refs/notes/clada", &head]);
    refused(
        &client,
        ":refs/notes/clada",
        "written only by the server's hooks",
    );
    assert_eq!(ok(&server, &["rev-parse", "refs/notes/clada"]), head);
}

/// A request commit (the reply as the note on `main`'s tip) whose message
/// ends in `Clada-Branch: <branch>`.
fn request(client: &Path, branch: &str) -> String {
    let reply = client.join(".git/reply.md");
    std::fs::write(
        &reply,
        "<---SEARCH file=\"a.txt\"--->\nhi\n<---REPLACE--->\nhello\n<---END--->\n",
    )
    .unwrap();
    let blob = ok(client, &["hash-object", "-w", reply.to_str().unwrap()]);
    let target = ok(client, &["rev-parse", "HEAD"]);
    let tree_line = format!("100644 blob {blob}\t{target}\n");
    let tree = {
        let mut mktree = crate::hook::git_cmd(client, &["mktree"]);
        mktree
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = mktree.spawn().unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(tree_line.as_bytes())
            .unwrap();
        text(&child.wait_with_output().unwrap().stdout)
            .trim()
            .to_string()
    };
    let trailer = format!("Clada-Branch: {branch}");
    ok(
        client,
        &["commit-tree", "-m", "clada: request", "-m", &trailer, &tree],
    )
}

#[test]
fn a_request_whose_branch_trailer_names_no_single_branch_is_refused_at_the_push() {
    let (_root, server, client) = server();
    for (n, bad) in ["agents/*", "main agents/x", "../main"].iter().enumerate() {
        let commit = request(&client, bad);
        let pushed = run(
            &client,
            &[
                "push",
                "origin",
                &format!("{commit}:refs/clada/inbox/bad-{n}"),
            ],
        );
        assert!(!pushed.status.success(), "{bad} was accepted");
        let said = text(&pushed.stderr);
        assert!(said.contains(&format!("`Clada-Branch: {bad}`")), "{said}");
        assert_eq!(
            ok(&server, &["show", "main:a.txt"]),
            "hi",
            "the request was applied anyway"
        );
    }
    // A good one still goes through and is applied.
    let commit = request(&client, "main");
    let pushed = run(
        &client,
        &["push", "origin", &format!("{commit}:refs/clada/inbox/good")],
    );
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
}

/// `git clada hook recover` in `server` as if it ran at `date`.
fn recover_at(server: &Path, date: &str) -> String {
    let out = crate::common::clada_std(server, server)
        .args(["hook", "recover"])
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stderr)
}

fn results(server: &Path) -> Vec<String> {
    ok(
        server,
        &["for-each-ref", "--format=%(refname)", "refs/clada/results/"],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

/// Pushes a request as `id` from `client` on `date`: its hooks run then.
fn push_request_at(client: &Path, id: &str, date: &str) -> String {
    let commit = request(client, "main");
    let pushed = crate::hook::git_cmd(
        client,
        &["push", "origin", &format!("{commit}:refs/clada/inbox/{id}")],
    )
    .env("GIT_COMMITTER_DATE", date)
    .env("GIT_AUTHOR_DATE", date)
    .output()
    .unwrap();
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    ok(client, &["fetch", "-q", "origin", "main"]);
    ok(client, &["reset", "-q", "--hard", "origin/main"]);
    text(&pushed.stderr)
}

#[test]
fn results_older_than_results_expire_are_removed() {
    let (_root, server, client) = server();
    push_request_at(&client, "one", "2026-01-01T00:00:00Z");
    // Six days on: kept (the default is a week).
    push_request_at(&client, "two", "2026-01-07T00:00:00Z");
    assert_eq!(results(&server).len(), 2);
    // An idle server keeps its last week, however late recovery runs.
    recover_at(&server, "2026-06-01T00:00:00Z");
    assert_eq!(results(&server).len(), 2);
    // Kept for good when so configured, and a bad value keeps them too,
    // saying so.
    ok(&server, &["config", "clada.resultsExpire", "never"]);
    push_request_at(&client, "three", "2026-01-20T00:00:00Z");
    assert_eq!(results(&server).len(), 3);
    ok(&server, &["config", "clada.resultsExpire", "soon"]);
    let said = recover_at(&server, "2026-06-01T00:00:00Z");
    assert!(said.contains("is not a duration"), "{said}");
    assert_eq!(results(&server).len(), 3);
    // With the default again, the next push removes what is over a week
    // older than its own answer.
    ok(&server, &["config", "--unset", "clada.resultsExpire"]);
    let said = push_request_at(&client, "four", "2026-01-21T00:00:00Z");
    assert!(
        said.contains("removed 2 result references older than a week"),
        "{said}"
    );
    assert_eq!(
        results(&server),
        ["refs/clada/results/four", "refs/clada/results/three"]
    );
}

#[test]
fn a_push_looks_for_old_results_at_most_once_in_a_hundredth_of_their_term() {
    let (_root, server, client) = server();
    ok(&server, &["config", "clada.resultsExpire", "1h"]);
    push_request_at(&client, "old", "2026-01-01T00:00:00Z");
    // As if a push had looked through the results two hours later.
    std::fs::write(server.join("clada/results-expired"), "1767232800").unwrap();
    // 20 s after that look (a hundredth of an hour is 36 s): not looked
    // through, though "old" is two hours older.
    push_request_at(&client, "new", "2026-01-01T02:00:20Z");
    assert_eq!(results(&server).len(), 2);
    // 40 s after it: looked through.
    let said = push_request_at(&client, "newer", "2026-01-01T02:00:40Z");
    assert!(
        said.contains("removed 1 result reference older than"),
        "{said}"
    );
    assert_eq!(
        results(&server),
        ["refs/clada/results/new", "refs/clada/results/newer"]
    );
    // As if a push had looked 10 s before the next one: that one does
    // not look, hook recover 5 s later does (an operator's timer asks).
    std::fs::write(server.join("clada/results-expired"), "1767236440").unwrap();
    push_request_at(&client, "latest", "2026-01-01T03:00:50Z");
    assert_eq!(results(&server).len(), 3);
    recover_at(&server, "2026-01-01T03:00:55Z");
    assert_eq!(results(&server), ["refs/clada/results/latest"]);
}

#[test]
fn each_answered_request_is_logged_and_hook_stats_sums_them_up() {
    let (_root, server, client) = server();
    for id in ["first", "second"] {
        let commit = request(&client, "main");
        let pushed = crate::hook::git_cmd(
            &client,
            &["push", "origin", &format!("{commit}:refs/clada/inbox/{id}")],
        )
        .env("REMOTE_USER", "agent-7")
        .output()
        .unwrap();
        assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    }
    let log = std::fs::read_to_string(server.join("clada/requests.log")).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert_eq!(lines[0]["request"], "first");
    assert_eq!(lines[0]["status"], "success");
    assert_eq!(lines[0]["pusher"], "agent-7");
    assert_eq!(lines[0]["branch"], "main");
    assert_eq!(lines[0]["recovered"], false);
    // The second, made for the old tip, finds `hi` gone on the new one.
    assert_eq!(lines[1]["status"], "stale");
    let stats = clada(&server, &server)
        .args(["hook", "stats"])
        .output()
        .unwrap();
    assert!(stats.status.success());
    let said = text(&stats.stdout);
    assert!(said.contains("requests: 2"), "{said}");
    assert!(said.contains("outcomes: stale 1, success 1"), "{said}");
    assert!(
        said.contains("recovered (answered by another hook): 0"),
        "{said}"
    );
    assert!(said.contains("waiting now (queue depth): 0"), "{said}");
}
