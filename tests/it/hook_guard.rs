//! What a pusher may not write on a server with clada's hooks (issue 28):
//! the records only the hooks write, and requests whose `Clada-Branch`
//! does not name one branch.

use std::path::{Path, PathBuf};

use crate::common::{clada, scratch};
use crate::hook::{ok, run, text};

/// A bare server with the receive hooks, and a client that pushed `main`.
fn server() -> (tempfile::TempDir, PathBuf, PathBuf) {
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
    ok(
        root.path(),
        &["clone", "-q", server.to_str().unwrap(), "client"],
    );
    let client = root.path().join("client");
    std::fs::write(client.join("a.txt"), "hi\n").unwrap();
    ok(&client, &["add", "a.txt"]);
    ok(&client, &["commit", "-q", "-m", "add a"]);
    ok(&client, &["push", "-q", "origin", "main"]);
    (root, server, client)
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

fn results(server: &Path) -> usize {
    ok(server, &["for-each-ref", "refs/clada/results/"])
        .lines()
        .count()
}

#[test]
fn results_older_than_results_expire_are_removed() {
    let (_root, server, client) = server();
    // Answered at the tests' fixed date (2026-01-01).
    let commit = request(&client, "main");
    let pushed = run(
        &client,
        &["push", "origin", &format!("{commit}:refs/clada/inbox/one")],
    );
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    assert_eq!(results(&server), 1);
    // Six days on: kept (the default is a week).
    recover_at(&server, "2026-01-07T00:00:00Z");
    assert_eq!(results(&server), 1);
    // Kept for good when so configured.
    ok(&server, &["config", "clada.resultsExpire", "never"]);
    recover_at(&server, "2026-03-01T00:00:00Z");
    assert_eq!(results(&server), 1);
    // A bad value keeps them, and says so.
    ok(&server, &["config", "clada.resultsExpire", "soon"]);
    let said = recover_at(&server, "2026-03-01T00:00:00Z");
    assert!(said.contains("is not a duration"), "{said}");
    assert_eq!(results(&server), 1);
    // Eight days on, with the default: removed.
    ok(&server, &["config", "--unset", "clada.resultsExpire"]);
    let said = recover_at(&server, "2026-01-09T00:00:00Z");
    assert!(
        said.contains("removed 1 result reference older than a week"),
        "{said}"
    );
    assert_eq!(results(&server), 0);
    // The branch and its history are untouched.
    assert_eq!(ok(&server, &["show", "main:a.txt"]), "hello");
}
