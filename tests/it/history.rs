//! End-to-end tests of the history commands (git.md §2–4): what each does
//! to the branch, the working tree, the index and `refs/clada/`, and that
//! every refusal changes nothing and says what to do next.

use predicates::str::contains;

use crate::history_fixture::{Repo, stdout, write_reply};

/// Uncommitted work of every kind: a modified file, a deleted one, an
/// untracked one, and one that is staged.
fn dirty(r: &Repo) {
    r.write("a.txt", "a edited by the user\n");
    r.remove("gone.txt");
    r.write("notes/todo.txt", "untracked\n");
    r.write("staged.txt", "staged\n");
    r.git(&["add", "staged.txt"]);
}

fn base_repo() -> Repo {
    Repo::new(&[
        ("a.txt", "a\n"),
        ("gone.txt", "gone\n"),
        (".gitignore", "*.log\n"),
    ])
}

// ---------------------------------------------------------------- undo

#[test]
fn undo_returns_branch_and_working_tree_to_just_before_the_apply() {
    let r = base_repo();
    let base = r.rev("HEAD");
    dirty(&r);
    r.write("build.log", "ignored, never touched\n");
    let before = r.worktree();
    r.apply(&format!(
        "{}{}",
        write_reply("a.txt", "a from the reply\n"),
        write_reply("src/new.txt", "new\n")
    ));
    let post = r.rev("HEAD");
    assert_ne!(post, base);

    r.run(&["undo"])
        .success()
        .stdout(contains("git clada redo"));
    assert_eq!(r.rev("HEAD"), base, "the branch is back where it was");
    assert!(!r.detached());
    assert_eq!(r.worktree(), before, "every file as before the apply");
    // The user's work is uncommitted again, untracked files untracked,
    // staged files staged.
    assert_eq!(
        r.status(),
        " M a.txt\n D gone.txt\nA  staged.txt\n?? notes/todo.txt"
    );
    assert_eq!(r.refs("refs/clada/undo/"), ["refs/clada/undo/1"]);
    assert_eq!(r.rev("refs/clada/undo/1"), post, "undone commits are kept");
    assert!(r.git(&["reflog", "-1", "main"]).contains("clada: undo"));
    assert!(r.git(&["reflog", "-1", "HEAD"]).contains("clada: undo"));
    r.assert_fsck_clean();
}

#[test]
fn redo_restores_the_undone_apply_exactly() {
    let r = base_repo();
    dirty(&r);
    r.apply(&write_reply("a.txt", "a from the reply\n"));
    let post = r.rev("HEAD");
    let after_apply = r.worktree();
    let status_after_apply = r.status();
    r.run(&["undo"]).success();
    r.run(&["redo"])
        .success()
        .stdout(contains("git clada undo"));
    assert_eq!(r.rev("HEAD"), post);
    assert_eq!(r.worktree(), after_apply);
    assert_eq!(r.status(), status_after_apply);
    assert!(
        r.refs("refs/clada/undo/").is_empty(),
        "the entry is used up"
    );
    r.run(&["redo"]).code(2).stderr(contains("nothing to redo"));
    r.assert_fsck_clean();
}

#[test]
fn undo_of_a_clean_apply_and_undo_n() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    let base = r.rev("HEAD");
    r.apply_write("a.txt", "1\n");
    r.apply_write("b.txt", "2\n");
    r.apply_write("a.txt", "3\n");
    let tip = r.rev("HEAD");
    r.run(&["undo", "3"]).success();
    assert_eq!(r.rev("HEAD"), base);
    assert_eq!(r.status(), "");
    assert_eq!(r.read("a.txt").as_deref(), Some("a\n"));
    assert_eq!(r.read("b.txt"), None);
    assert_eq!(r.refs("refs/clada/undo/").len(), 3);
    // Redo takes them back oldest first, one at a time.
    r.run(&["redo"]).success();
    assert_eq!(r.read("a.txt").as_deref(), Some("1\n"));
    r.run(&["redo"]).success();
    r.run(&["redo"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    assert_eq!(r.status(), "");
    r.run(&["undo", "4"])
        .code(2)
        .stderr(contains("git clada undo 3"));
    assert_eq!(r.rev("HEAD"), tip);
}

#[test]
fn undo_n_will_not_undo_past_an_apply_made_on_uncommitted_work() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.write("mine.txt", "my work\n");
    r.apply_write("b.txt", "2\n");
    r.apply_write("c.txt", "3\n");
    let tip = r.rev("HEAD");
    r.run(&["undo", "3"])
        .code(2)
        .stderr(contains("git clada undo 2"));
    assert_eq!(r.rev("HEAD"), tip, "nothing changed");
    r.run(&["undo", "2"]).success();
    assert_eq!(r.status(), "?? mine.txt");
    assert_eq!(r.read("mine.txt").as_deref(), Some("my work\n"));
}

#[test]
fn undo_refuses_a_tip_that_is_not_an_apply() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.write("a.txt", "my own commit\n");
    r.commit("mine");
    let tip = r.rev("HEAD");
    r.run(&["undo"])
        .code(2)
        .stderr(contains("not a clada apply"))
        .stderr(contains("hint:"));
    assert_eq!(r.rev("HEAD"), tip);
    assert!(r.refs("refs/clada/").is_empty());
}

/// A change since the apply on a path undo must restore (the apply's own
/// file, on disk or staged; a file where undo must put back the user's
/// earlier work) makes undo refuse and touch nothing.
#[test]
fn undo_refuses_changes_made_since_the_apply_to_what_it_restores() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.write("mine.txt", "my work before the apply\n");
    r.apply_write("a.txt", "1\n");
    let tip = r.rev("HEAD");
    for (path, stage) in [("a.txt", false), ("a.txt", true), ("mine.txt", false)] {
        r.write(path, "user change\n");
        if stage {
            r.git(&["add", path]);
        }
        let before = r.worktree();
        let status = r.status();
        r.run(&["undo"])
            .code(2)
            .stderr(contains(path))
            .stderr(contains("git stash -u"));
        assert_eq!(r.rev("HEAD"), tip);
        assert_eq!(r.worktree(), before, "nothing touched");
        assert_eq!(r.status(), status, "nothing touched");
        assert!(r.refs("refs/clada/").is_empty());
        r.git(&["reset", "-q", "--hard"]);
    }
}

/// Untracked files the apply never touched, and edits of files undo does
/// not restore, never block undo: they are left as they are, staged or
/// not (git.md §2).
#[test]
fn undo_leaves_alone_what_the_user_changed_since_elsewhere() {
    let r = base_repo();
    let base = r.rev("HEAD");
    r.write("mine.txt", "untracked before the apply\n");
    r.apply(&write_reply("a.txt", "a from the reply\n"));
    r.write("scratch.txt", "made after the apply\n");
    r.write("notes/later.txt", "also after\n");
    r.write("gone.txt", "edited after the apply\n");
    r.write("staged-later.txt", "staged after the apply\n");
    r.git(&["add", "staged-later.txt"]);
    r.run(&["undo"]).success();
    assert_eq!(r.rev("HEAD"), base);
    assert_eq!(r.read("a.txt").as_deref(), Some("a\n"));
    assert_eq!(
        r.status(),
        " M gone.txt\nA  staged-later.txt\n?? mine.txt\n?? notes/later.txt\n?? scratch.txt"
    );
    assert_eq!(
        r.read("scratch.txt").as_deref(),
        Some("made after the apply\n")
    );
    assert_eq!(
        r.read("gone.txt").as_deref(),
        Some("edited after the apply\n")
    );
    r.assert_fsck_clean();
}

/// What was staged before the apply is staged again after undo, as
/// step-back keeps it (git.md §2): `M ` stays `M `, `A ` stays `A `.
#[test]
fn undo_restores_the_index_as_it_was() {
    let r = base_repo();
    r.write("a.txt", "staged by the user\n");
    r.git(&["add", "a.txt"]);
    r.write("new.txt", "a new file, staged\n");
    r.git(&["add", "new.txt"]);
    r.write("gone.txt", "edited, not staged\n");
    let before = r.status();
    assert_eq!(before, "M  a.txt\n M gone.txt\nA  new.txt");
    r.apply(&write_reply("b.txt", "from the reply\n"));
    assert_eq!(r.status(), "");
    r.run(&["undo"]).success();
    assert_eq!(r.status(), before);
    assert_eq!(r.git(&["show", ":a.txt"]), "staged by the user");
    r.run(&["redo"]).success();
    assert_eq!(r.status(), "");
    r.run(&["undo"]).success();
    assert_eq!(r.status(), before);
    r.assert_fsck_clean();
}

#[test]
fn undo_refuses_pushed_applies_unless_forced() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    let tip = r.rev("HEAD");
    r.git(&["update-ref", "refs/remotes/origin/main", &tip]);
    r.run(&["undo"])
        .code(2)
        .stderr(contains("refs/remotes/origin/main"))
        .stderr(contains("--force"));
    assert_eq!(r.rev("HEAD"), tip);
    r.run(&["undo", "--force"]).success();
    assert_ne!(r.rev("HEAD"), tip);
}

#[test]
fn undo_and_redo_of_an_apply_to_an_unborn_branch() {
    let r = Repo::new(&[]);
    r.write("mine.txt", "before any commit\n");
    r.apply_write("hello.txt", "hi\n");
    let post = r.rev("HEAD");
    r.run(&["undo"]).success();
    assert_eq!(r.rev("refs/heads/main"), "", "unborn again");
    assert_eq!(r.status(), "?? mine.txt");
    assert_eq!(r.read("hello.txt"), None);
    r.run(&["redo"]).success();
    assert_eq!(r.rev("HEAD"), post);
    assert_eq!(r.status(), "");
    r.assert_fsck_clean();
}

/// Content only the index holds (staged, then changed again on disk) is
/// recorded as the pre snapshot's second parent, and undo puts it back in
/// the index; redo works from that state.
#[test]
fn staged_content_changed_again_on_disk_survives_apply_undo_and_redo() {
    let r = base_repo();
    let base = r.rev("HEAD");
    r.write("a.txt", "staged version\n");
    r.git(&["add", "a.txt"]);
    r.write("a.txt", "disk version\n");
    let status_before = r.status();
    assert_eq!(status_before, "MM a.txt");
    r.apply(&write_reply("b.txt", "from the reply\n"));
    let post = r.rev("HEAD");
    let pre = r.rev("HEAD^");
    assert_eq!(r.rev(&format!("{pre}^1")), base);
    let index = r.rev(&format!("{pre}^2"));
    assert!(
        r.git(&["log", "-1", "--format=%s", &index])
            .starts_with("[clada:index]")
    );
    assert_eq!(r.rev(&format!("{index}^")), base);
    assert_eq!(
        r.git(&["show", &format!("{index}:a.txt")]),
        "staged version"
    );
    assert_eq!(r.git(&["show", &format!("{pre}:a.txt")]), "disk version");
    assert_eq!(r.status(), "", "the index follows the applied commit");
    // The history commands see an apply like any other.
    assert!(
        r.git(&["log", "--first-parent", "--format=%s"])
            .contains("[clada:pre]")
    );
    r.run(&["log"]).success().stdout(contains("b.txt"));

    r.run(&["undo"]).success();
    assert_eq!(r.rev("HEAD"), base);
    assert_eq!(r.status(), status_before, "staged and unstaged as before");
    assert_eq!(r.git(&["show", ":a.txt"]), "staged version");
    assert_eq!(r.read("a.txt").as_deref(), Some("disk version\n"));
    r.run(&["redo"]).success();
    assert_eq!(r.rev("HEAD"), post);
    assert_eq!(r.status(), "");
    r.apply(&write_reply("c.txt", "more\n"));
    r.run(&["squash"]).success();
    assert_eq!(r.git(&["show", "HEAD:a.txt"]), "disk version");
    let squashed = r.rev("refs/clada/squashed/1");
    assert_eq!(
        r.git(&["show", &format!("{squashed}^^^2:a.txt")]),
        "staged version",
        "the old tip keeps the index commit reachable"
    );
    r.assert_fsck_clean();
}

/// The index commit is made whenever something is staged, so that undo
/// can put it back (git.md §2); an intent-to-add entry alone stages no
/// content and records nothing. A staged file changed back to HEAD's
/// content on disk needs it most: only the index holds that content.
#[test]
fn the_index_is_recorded_whenever_something_is_staged() {
    let parents = |r: &Repo| {
        r.git(&["log", "-1", "--format=%p", "HEAD^"])
            .split(' ')
            .count()
    };
    let r = base_repo();
    r.write("new.txt", "intent to add\n");
    r.git(&["add", "-N", "new.txt"]);
    r.apply(&write_reply("b.txt", "x\n"));
    assert_eq!(parents(&r), 1, "nothing staged");

    let r = base_repo();
    r.write("a.txt", "staged and on disk\n");
    r.git(&["add", "a.txt"]);
    r.apply(&write_reply("b.txt", "x\n"));
    assert_eq!(parents(&r), 2, "staged, even though it is on disk too");
    r.run(&["undo"]).success();
    assert_eq!(r.status(), "M  a.txt");

    let r = base_repo();
    r.write("a.txt", "staged only\n");
    r.git(&["add", "a.txt"]);
    r.write("a.txt", "a\n");
    assert_eq!(r.status(), "MM a.txt");
    r.apply(&write_reply("b.txt", "x\n"));
    assert_eq!(parents(&r), 2, "the disk is HEAD's, the index is not");
    assert_eq!(r.git(&["show", "HEAD^^2:a.txt"]), "staged only");
    assert_eq!(r.git(&["show", "HEAD^:a.txt"]), "a");
    assert_eq!(r.status(), "");
    r.run(&["undo"]).success();
    assert_eq!(r.status(), "MM a.txt");
    assert_eq!(r.git(&["show", ":a.txt"]), "staged only");
    r.assert_fsck_clean();
}

#[test]
fn staged_content_on_an_unborn_branch_is_kept_by_a_root_index_commit() {
    let r = Repo::new(&[]);
    r.write("mine.txt", "staged\n");
    r.git(&["add", "mine.txt"]);
    r.write("mine.txt", "on disk\n");
    r.apply_write("hello.txt", "hi\n");
    assert_eq!(r.git(&["show", "HEAD^^:mine.txt"]), "staged");
    assert_eq!(r.git(&["show", "HEAD^:mine.txt"]), "on disk");
    assert_eq!(r.status(), "");
    r.run(&["undo"]).success();
    assert_eq!(r.rev("refs/heads/main"), "", "unborn again");
    assert_eq!(r.status(), "AM mine.txt");
    assert_eq!(r.git(&["show", ":mine.txt"]), "staged");
    r.run(&["redo"]).success();
    assert_eq!(r.status(), "");
    r.assert_fsck_clean();
}

#[test]
fn redo_refuses_to_overwrite_work_done_after_the_undo_and_an_ignored_file_in_its_way() {
    let r = Repo::new(&[("a.txt", "a\n"), (".gitignore", "*.log\n")]);
    r.apply(&format!(
        "{}{}",
        write_reply("a.txt", "1\n"),
        write_reply("out.log", "from the reply\n")
    ));
    r.run(&["undo"]).success();
    let base = r.rev("HEAD");
    r.write("a.txt", "edited after the undo\n");
    r.run(&["redo"])
        .code(2)
        .stderr(contains("a.txt"))
        .stderr(contains("git stash -u"));
    assert_eq!(r.read("a.txt").as_deref(), Some("edited after the undo\n"));
    r.git(&["checkout", "--", "a.txt"]);
    // An ignored file where the reply wrote one: not in any commit.
    r.write("out.log", "build output\n");
    r.run(&["redo"]).code(2).stderr(contains("out.log"));
    assert_eq!(r.read("out.log").as_deref(), Some("build output\n"));
    assert_eq!(r.rev("HEAD"), base);
    r.remove("out.log");
    r.run(&["redo"]).success();
    assert_eq!(r.read("out.log").as_deref(), Some("from the reply\n"));
}

#[test]
fn redo_after_the_branch_moved_has_nothing_to_redo_and_says_how_to_reapply() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.run(&["undo"]).success();
    r.write("b.txt", "new work\n");
    r.commit("new work");
    let a = r.run(&["redo"]).code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("git clada show --reply refs/clada/undo/1 | git clada apply"),
        "{err}"
    );
    // And that pipeline works.
    let reply = r.run(&["show", "--reply", "refs/clada/undo/1"]).success();
    assert_eq!(stdout(&reply), write_reply("a.txt", "1\n"));
}

#[test]
fn undo_refuses_a_squash() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.apply_write("a.txt", "2\n");
    r.run(&["squash"]).success();
    r.run(&["undo"])
        .code(2)
        .stderr(contains("squash"))
        .stderr(contains("refs/clada/squashed/"));
}

// ---------------------------------------------------------------- squash

#[test]
fn squash_folds_the_run_with_its_pre_snapshots_and_keeps_the_old_tip() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.write("a.txt", "user before the session\n");
    r.commit("user commit");
    let base = r.rev("HEAD");
    r.apply_write("b.txt", "1\n");
    r.write("mine.txt", "work between replies\n");
    r.apply_write("c.txt", "2\n");
    r.apply_write("b.txt", "3\n");
    let tip = r.rev("HEAD");
    let tree = r.rev("HEAD^{tree}");
    r.write("uncommitted.txt", "stays uncommitted\n");
    let status = r.status();

    let dry = r.run(&["squash", "--dry-run"]).success();
    assert!(
        stdout(&dry).contains("4 commits (3 applies)"),
        "{}",
        stdout(&dry)
    );
    assert_eq!(r.rev("HEAD"), tip, "a dry run changes nothing");
    assert!(r.refs("refs/clada/").is_empty());

    r.run(&["squash"]).success();
    assert_eq!(r.rev("HEAD^"), base, "one commit on top of the base");
    assert_eq!(r.rev("HEAD^{tree}"), tree, "the same files");
    assert_eq!(r.rev("refs/clada/squashed/1"), tip);
    assert_eq!(r.status(), status, "uncommitted work untouched");
    let message = r.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("[clada:squash] create b.txt; create c.txt; write b.txt"),
        "{message}"
    );
    assert!(message.contains("1 pre snapshot(s)"), "{message}");
    assert!(
        message.contains(&format!("Clada-Squashed: {tip}")),
        "{message}"
    );
    assert!(
        r.git(&["reflog", "-1", "main"])
            .contains("clada: squash 4 commits")
    );
    // A second squash after more applies folds the first one in.
    r.git(&["stash", "-u", "-q"]);
    r.apply_write("d.txt", "4\n");
    r.run(&["squash", "--message", "Session: b, c, d"])
        .success();
    assert_eq!(r.rev("HEAD^"), base);
    assert_eq!(r.git(&["log", "-1", "--format=%B"]), "Session: b, c, d");
    r.assert_fsck_clean();
}

#[test]
fn squash_selections_stop_at_the_first_commit_that_does_not_match() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let at = |secs_ago: u64| format!("{} +0000", now - secs_ago);
    for (file, ago) in [("old.txt", 3 * 86400), ("b.txt", 3 * 3600), ("c.txt", 1800)] {
        r.clada(&["apply", "-"])
            .env("GIT_COMMITTER_DATE", at(ago))
            .env("GIT_AUTHOR_DATE", at(ago))
            .write_stdin(write_reply(file, "x\n"))
            .assert()
            .success();
    }
    let tip = r.rev("HEAD");
    let dry = |args: &[&str]| {
        let mut all = vec!["squash", "--dry-run"];
        all.extend_from_slice(args);
        stdout(&r.run(&all).success())
    };
    assert!(dry(&["--hours", "1"]).contains("nothing to squash"));
    assert!(dry(&["--hours", "4"]).contains("2 commits"));
    assert!(dry(&["--days", "1"]).contains("2 commits"));
    assert!(dry(&["--days", "4"]).contains("3 commits"));
    assert!(dry(&["--message-contains", "b.txt"]).contains("nothing to squash"));
    assert!(dry(&["--message-contains", "create"]).contains("3 commits"));
    assert_eq!(r.rev("HEAD"), tip);
    r.run(&["squash", "--hours", "4"]).success();
    assert_eq!(
        r.git(&["log", "-1", "--format=%s", "HEAD^"]),
        "[clada:post] create old.txt"
    );
    r.run(&["squash", "--hours", "1", "--days", "1"]).code(2);
}

#[test]
fn squash_refuses_pushed_commits_unless_forced_and_a_lone_commit_is_left_alone() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("b.txt", "1\n");
    r.run(&["squash"])
        .success()
        .stdout(contains("nothing to squash"));
    r.git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    r.apply_write("c.txt", "2\n");
    let tip = r.rev("HEAD");
    r.run(&["squash"])
        .code(2)
        .stderr(contains("refs/remotes/origin/main"))
        .stderr(contains("--force"));
    assert_eq!(r.rev("HEAD"), tip);
    r.run(&["squash", "--force"]).success();
    assert_ne!(r.rev("HEAD"), tip);
    r.write("a.txt", "mine\n");
    r.commit("user");
    r.run(&["squash"])
        .success()
        .stdout(contains("not a clada commit"));
}

/// A squash is a commit the user asked for: it carries the identity git
/// gives the user's own commits (git.md §1), while the applies stay
/// clada's. Without any identity of the user's, clada's is used and the
/// output says so.
#[test]
fn squash_commits_as_the_user() {
    let who = |r: &Repo, rev: &str| r.git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>", rev]);
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.git(&["config", "clada.gitAuthor", "Bot <bot@clada>"]);
    r.git(&["config", "user.name", "Ada User"]);
    r.git(&["config", "user.email", "ada@example.org"]);
    r.git(&["config", "committer.email", "ada@work.example"]);
    r.apply_write("b.txt", "1\n");
    r.apply_write("c.txt", "2\n");
    assert_eq!(who(&r, "HEAD"), "Bot <bot@clada> / Bot <bot@clada>");
    r.run(&["squash"]).success();
    assert_eq!(
        who(&r, "HEAD"),
        "Ada User <ada@example.org> / Ada User <ada@work.example>"
    );
    assert!(
        r.git(&["reflog", "-1", "--format=%gn <%ge>", "main"])
            .contains("Ada User <ada@work.example>")
    );
    // git's environment variables come first, as for `git commit`.
    r.apply_write("d.txt", "3\n");
    r.clada(&["squash"])
        .env("GIT_AUTHOR_NAME", "Env Author")
        .env("GIT_COMMITTER_EMAIL", "env@example.org")
        .assert()
        .success();
    assert_eq!(
        who(&r, "HEAD"),
        "Env Author <ada@example.org> / Ada User <env@example.org>"
    );

    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("b.txt", "1\n");
    r.apply_write("c.txt", "2\n");
    r.run(&["squash"]).success().stdout(contains("user.name"));
    assert_eq!(
        who(&r, "HEAD"),
        "clada <clada@localhost> / clada <clada@localhost>"
    );
}

// ---------------------------------------------------------------- steps

#[test]
fn step_back_and_forward_restore_every_kind_of_uncommitted_work() {
    let r = base_repo();
    r.apply_write("b.txt", "1\n");
    r.apply_write("b.txt", "2\n");
    r.apply_write("c.txt", "3\n");
    let tip = r.rev("HEAD");
    dirty(&r);
    r.write("build.log", "ignored\n");
    let work = r.worktree();
    let status = r.status();

    r.run(&["step-back"])
        .success()
        .stdout(contains("step-forward"));
    assert!(r.detached());
    assert_eq!(r.rev("HEAD"), r.rev(&format!("{tip}~1")));
    assert_eq!(r.status(), "", "the older commit, clean");
    assert_eq!(r.read("b.txt").as_deref(), Some("2\n"));
    assert_eq!(r.read("c.txt"), None);
    assert_eq!(r.read("build.log").as_deref(), Some("ignored\n"));
    assert_eq!(r.refs("refs/clada/steps/"), ["refs/clada/steps/saved"]);

    let back = stdout(&r.run(&["step-back", "2"]).success());
    assert_eq!(r.rev("HEAD"), r.rev(&format!("{tip}~3")));
    assert_eq!(r.read("b.txt"), None);
    // What a step says first: where HEAD is, `below` commits under the tip.
    let head_line = |done: &str, below: usize| {
        let at = format!("{tip}~{below}");
        format!(
            "clada: {done}: HEAD is at {} \"{}\", {below} commit{} below the tip of main (detached)\n",
            r.git(&["rev-parse", "--short=7", &at]),
            r.git(&["log", "-1", "--format=%s", &at]),
            if below == 1 { "" } else { "s" }
        )
    };
    assert!(back.starts_with(&head_line("stepped back 2", 3)), "{back}");
    assert!(
        back.contains("hint: `git clada step-forward [N]`"),
        "{back}"
    );
    let st = stdout(&r.run(&["status"]).success());
    assert!(st.contains("stepped back 3 commits from main"), "{st}");

    let forward = stdout(&r.run(&["step-forward"]).success());
    assert_eq!(r.rev("HEAD"), r.rev(&format!("{tip}~2")));
    assert!(
        forward.starts_with(&head_line("stepped forward 1", 2)),
        "{forward}"
    );
    assert!(
        forward.contains("hint: `git clada step-forward --all` returns to the tip"),
        "{forward}"
    );
    assert!(
        r.git(&["reflog", "-1", "HEAD"])
            .contains("clada: step-forward to")
    );
    r.run(&["step-forward", "--all"]).success();
    assert!(!r.detached());
    assert_eq!(r.rev("HEAD"), tip);
    assert_eq!(r.worktree(), work);
    assert_eq!(
        r.status(),
        status,
        "staged stays staged, untracked untracked"
    );
    assert!(
        r.refs("refs/clada/steps/").is_empty(),
        "the session is over"
    );
    assert!(r.git(&["reflog", "-1", "HEAD"]).contains("step-forward"));
    r.run(&["step-forward"])
        .code(2)
        .stderr(contains("not stepped back"));
    r.assert_fsck_clean();
}

#[test]
fn changes_made_while_stepped_back_are_never_discarded() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.write("mine.txt", "saved work\n");
    r.run(&["step-back"]).success();
    let at = r.rev("HEAD");
    r.write("a.txt", "edited while stepped back\n");
    for args in [["step-forward", "--all"], ["step-back", "1"]] {
        r.run(&args)
            .code(2)
            .stderr(contains("a.txt"))
            .stderr(contains("git stash -u"));
        assert_eq!(r.rev("HEAD"), at);
        assert_eq!(
            r.read("a.txt").as_deref(),
            Some("edited while stepped back\n")
        );
    }
    r.git(&["stash", "-q"]);
    r.run(&["step-forward"]).success();
    assert_eq!(r.read("mine.txt").as_deref(), Some("saved work\n"));
    assert_eq!(r.read("a.txt").as_deref(), Some("1\n"));
}

#[test]
fn commits_made_while_stepped_back_must_be_kept_on_a_branch_first() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    let tip = r.rev("HEAD");
    r.run(&["step-back"]).success();
    r.write("a.txt", "an experiment\n");
    r.commit("experiment");
    let experiment = r.rev("HEAD");
    r.run(&["step-forward"])
        .code(2)
        .stderr(contains("git branch"));
    r.run(&["step-forward", "--all"])
        .code(2)
        .stderr(contains("git branch"));
    assert_eq!(r.rev("HEAD"), experiment);
    r.git(&["branch", "experiment"]);
    r.run(&["step-forward", "--all"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    assert_eq!(r.rev("experiment"), experiment);
}

#[test]
fn step_back_refusals_change_nothing() {
    let unborn = Repo::new(&[]);
    unborn
        .run(&["step-back"])
        .code(2)
        .stderr(contains("no commits"));

    let r = Repo::new(&[("a.txt", "a\n"), (".gitignore", "*.log\n")]);
    r.write("build.log", "tracked once\n");
    r.git(&["add", "-f", "build.log"]);
    r.commit("tracked log");
    r.git(&["rm", "-q", "--cached", "build.log"]);
    r.commit("untrack log");
    // build.log is now ignored on disk; the older commit tracks it.
    r.write("build.log", "my local log\n");
    let tip = r.rev("HEAD");
    r.run(&["step-back", "5"])
        .code(2)
        .stderr(contains("git clada step-back 2"));
    r.run(&["step-back"]).code(2).stderr(contains("build.log"));
    assert_eq!(r.rev("HEAD"), tip);
    assert!(!r.detached());
    assert!(r.refs("refs/clada/").is_empty());
    assert_eq!(r.read("build.log").as_deref(), Some("my local log\n"));

    r.git(&["checkout", "-q", "--detach"]);
    r.run(&["step-back"]).code(2).stderr(contains("git switch"));
}

#[test]
fn a_branch_moved_while_stepped_back_is_not_overwritten() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.apply_write("a.txt", "2\n");
    r.write("mine.txt", "saved\n");
    r.run(&["step-back"]).success();
    let old_tip = r.rev("main");
    r.git(&["update-ref", "refs/heads/main", "main~2"]);
    r.run(&["step-forward", "--all"])
        .code(2)
        .stderr(contains("moved while you were stepped back"))
        .stderr(contains("refs/clada/steps/saved"));
    assert!(r.detached());
    assert_eq!(
        r.git(&["show", "refs/clada/steps/saved:mine.txt"]),
        "saved",
        "the saved work is still kept"
    );
    assert_ne!(r.rev("main"), old_tip);
}

/// Putting HEAD back on the branch by hand does not let an apply move the
/// branch under an open session; another branch is free, and a dry run is.
#[test]
fn apply_refuses_to_move_the_branch_of_an_open_session() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.run(&["step-back"]).success();
    r.git(&["switch", "-q", "main"]);
    let tip = r.rev("main");
    r.clada(&["apply", "-"])
        .write_stdin(write_reply("b.txt", "b\n"))
        .assert()
        .code(2)
        .stderr(contains("step-back session on main is open"))
        .stderr(contains("step-forward --all"));
    assert_eq!(r.rev("main"), tip);
    assert_eq!(r.read("b.txt"), None);
    r.clada(&["apply", "--dry-run", "-"])
        .write_stdin(write_reply("b.txt", "b\n"))
        .assert()
        .success();
    r.git(&["switch", "-q", "-c", "other"]);
    r.apply_write("b.txt", "b\n");
    assert_ne!(r.rev("other"), tip);
    r.git(&["switch", "-q", "main"]);
    r.run(&["step-forward", "--all"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    r.apply_write("c.txt", "c\n");
    r.assert_fsck_clean();
}

#[test]
fn history_commands_refuse_while_stepped_back() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.apply_write("a.txt", "2\n");
    r.run(&["step-back"]).success();
    for cmd in ["undo", "redo", "squash"] {
        r.run(&[cmd])
            .code(2)
            .stderr(contains("git clada step-forward --all"));
    }
    r.clada(&["apply", "-"])
        .write_stdin(write_reply("a.txt", "3\n"))
        .assert()
        .code(2)
        .stderr(contains("detached"));
}

#[test]
fn a_linked_worktree_has_its_own_session() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    let wt = r.path().parent().unwrap().join("wt");
    r.git(&["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    let mut cmd = crate::common::clada(r.path(), &wt);
    cmd.env("GIT_COMMITTER_DATE", crate::history_fixture::DATE)
        .args(["step-back"])
        .assert()
        .success();
    assert_eq!(
        r.refs("refs/clada/steps/"),
        ["refs/clada/steps/worktrees/wt"]
    );
    // The main worktree is not stepped back.
    r.run(&["undo"]).success();
}

// ---------------------------------------------------------------- status, log, show

#[test]
fn status_says_where_you_are_and_what_comes_next() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.write("mine.txt", "work\n");
    r.apply_write("a.txt", "1\n");
    let post = r.rev("HEAD");
    let json = |r: &Repo| -> serde_json::Value {
        serde_json::from_slice(
            &r.run(&["status", "--format", "json"])
                .success()
                .get_output()
                .stdout,
        )
        .unwrap()
    };
    let v = json(&r);
    assert_eq!(v["branch"], "main");
    assert_eq!(v["detached"], false);
    assert_eq!(v["last_apply"]["commit"], post.as_str());
    assert_eq!(
        v["last_apply"]["tasks"],
        serde_json::json!({"succeeded": 1, "failed": 0, "skipped": 0})
    );
    assert_eq!(v["last_apply"]["pre"], r.rev("HEAD^").as_str());
    assert_eq!(v["undoable"], 1);
    assert_eq!(v["redoable"], 0);
    let text = stdout(&r.run(&["status"]).success());
    assert!(text.contains("git clada undo"), "{text}");

    r.run(&["undo"]).success();
    let v = json(&r);
    assert_eq!(v["undoable"], 0);
    assert_eq!(v["redoable"], 1);
    assert_eq!(v["uncommitted"], serde_json::json!(["mine.txt"]));
    let text = stdout(&r.run(&["status"]).success());
    assert!(text.contains("git clada redo"), "{text}");

    r.run(&["redo"]).success();
    r.run(&["step-back"]).success();
    let v = json(&r);
    assert_eq!(v["detached"], true);
    assert_eq!(v["stepped_back"]["branch"], "main");
    assert_eq!(v["stepped_back"]["steps"], 1);
    assert_eq!(v["stepped_back"]["saved_ref"], "refs/clada/steps/saved");
    assert_eq!(v["last_apply"]["commit"], post.as_str());
    let text = stdout(&r.run(&["status"]).success());
    assert!(text.contains("git clada step-forward"), "{text}");
}

#[test]
fn log_lists_the_applies_and_show_prints_one() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.write("mine.txt", "work\n");
    let reply =
        "Some prose from the model.\r\n<---WRITE file=\"a.txt\"--->\r\nnew\r\n<---END--->\r\n";
    r.clada(&["apply", "-"])
        .write_stdin(reply)
        .assert()
        .success();
    r.apply_write("b.txt", "b\n");
    r.apply_write("c.txt", "c\n");
    r.run(&["undo"]).success();
    r.git(&["stash", "-u", "-q"]);
    let log = stdout(&r.run(&["log"]).success());
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].starts_with("undone"), "{log}");
    assert!(lines[1].contains("create c.txt"), "{log}");
    assert!(
        lines[3].contains("create b.txt") && lines[3].contains("<- HEAD"),
        "{log}"
    );
    assert!(
        lines[4].contains("write a.txt") && lines[4].contains("(pre "),
        "{log}"
    );
    assert!(log.contains("git clada show"), "{log}");
    let v: serde_json::Value = serde_json::from_slice(
        &r.run(&["log", "--format", "json", "-n", "1"])
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 1);
    assert_eq!(v["redoable"][0]["summary"], "create c.txt");

    let first = r.rev("HEAD~1");
    let show = stdout(&r.run(&["show", &first]).success());
    assert!(show.contains("summary: write a.txt"), "{show}");
    assert!(
        show.contains("tasks: 1 succeeded, 0 failed, 0 skipped"),
        "{show}"
    );
    assert!(show.contains("pre snapshot: "), "{show}");
    assert!(show.contains("  M a.txt"), "{show}");
    assert!(show.contains("[task-1] SUCCESS"), "{show}");
    assert!(show.contains("Some prose from the model."), "{show}");
    let exact = r.run(&["show", "--reply", &first]).success();
    assert_eq!(
        exact.get_output().stdout,
        reply.as_bytes(),
        "the reply byte for byte"
    );
    r.run(&["show", "HEAD~2"])
        .code(2)
        .stderr(contains("pre snapshot"));
    r.run(&["show", "HEAD~3"])
        .code(2)
        .stderr(contains("not a clada apply"));
    r.run(&["show", "no-such-rev"])
        .code(2)
        .stderr(contains("git clada log"));
}

#[test]
fn history_commands_outside_a_repository_say_so() {
    let dir = crate::common::scratch();
    for cmd in [
        "undo",
        "redo",
        "squash",
        "step-back",
        "step-forward",
        "status",
        "log",
        "show",
    ] {
        crate::common::clada(dir.path(), dir.path())
            .arg(cmd)
            .assert()
            .code(2)
            .stderr(contains("not a git repository"));
    }
}

// ---------------------------------------------------------------- the story

/// The issue's "done when": three replies in a row, a look at the state
/// before the second, back, undo the last, redo it, squash the session —
/// with uncommitted work of the user's present throughout, never lost.
#[test]
fn a_whole_session_loses_no_byte_of_the_users_work() {
    let r = Repo::new(&[("app.py", "print('v0')\n"), ("README", "readme\n")]);
    let base = r.rev("HEAD");
    r.write("notes.txt", "my notes, never committed\n");
    r.write("README", "readme, edited by me\n");
    r.apply(&write_reply("app.py", "print('v1')\n"));
    r.apply(&write_reply("lib.py", "def f(): pass\n"));
    r.apply(&write_reply("app.py", "print('v3')\n"));
    let tip = r.rev("HEAD");
    let mine = |r: &Repo| {
        assert_eq!(
            r.read("notes.txt").as_deref(),
            Some("my notes, never committed\n")
        );
        assert_eq!(r.read("README").as_deref(), Some("readme, edited by me\n"));
    };
    mine(&r);
    r.write("scratch.txt", "typed between replies\n");

    // The state before the second reply: two steps back.
    r.run(&["step-back", "2"]).success();
    assert_eq!(r.read("app.py").as_deref(), Some("print('v1')\n"));
    assert_eq!(r.read("lib.py"), None);
    assert_eq!(r.read("scratch.txt"), None, "saved, not on disk here");
    r.run(&["step-forward", "--all"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    mine(&r);
    assert_eq!(
        r.read("scratch.txt").as_deref(),
        Some("typed between replies\n")
    );

    // Undo the last reply: scratch.txt, new since it, stays where it is;
    // redo wants it put aside.
    r.run(&["undo"]).success();
    assert_eq!(r.read("app.py").as_deref(), Some("print('v1')\n"));
    assert_eq!(
        r.read("scratch.txt").as_deref(),
        Some("typed between replies\n")
    );
    r.run(&["redo"]).code(2).stderr(contains("scratch.txt"));
    r.git(&["stash", "-u", "-q"]);
    r.run(&["redo"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    r.git(&["stash", "pop", "-q"]);
    mine(&r);
    assert_eq!(
        r.read("scratch.txt").as_deref(),
        Some("typed between replies\n")
    );

    // One commit for the session; the work stays uncommitted.
    r.run(&["squash"]).success();
    assert_eq!(r.rev("HEAD^"), base);
    assert_eq!(r.rev("HEAD^{tree}"), r.rev(&format!("{tip}^{{tree}}")));
    mine(&r);
    assert_eq!(r.status(), "?? scratch.txt");
    // The user's README edit and notes went into the first pre snapshot,
    // so they are in the squashed commit too.
    assert_eq!(
        r.git(&["show", "HEAD:notes.txt"]),
        "my notes, never committed"
    );
    r.assert_fsck_clean();
}

#[cfg(unix)]
#[test]
fn links_modes_and_a_file_that_becomes_a_directory_survive_the_steps() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new(&[("x", "x was a file\n"), ("run.sh", "echo hi\n")]);
    r.remove("x");
    r.write("x/y", "now x is a directory\n");
    r.commit("x becomes a directory");
    let tip = r.rev("HEAD");
    std::os::unix::fs::symlink("run.sh", r.path().join("link")).unwrap();
    let script = r.path().join("run.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let status = r.status();
    r.run(&["step-back"]).success();
    assert_eq!(r.read("x").as_deref(), Some("x was a file\n"));
    assert!(!r.path().join("link").exists());
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o111,
        0
    );
    r.run(&["step-forward"]).success();
    assert_eq!(r.rev("HEAD"), tip);
    assert_eq!(r.read("x/y").as_deref(), Some("now x is a directory\n"));
    assert_eq!(
        std::fs::read_link(r.path().join("link")).unwrap(),
        std::path::Path::new("run.sh")
    );
    assert_ne!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o111,
        0
    );
    assert_eq!(r.status(), status);
}

#[test]
fn step_forward_all_returns_from_another_branch() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.git(&["branch", "other"]);
    r.apply_write("a.txt", "1\n");
    let tip = r.rev("HEAD");
    r.write("mine.txt", "saved\n");
    r.run(&["step-back"]).success();
    r.git(&["switch", "-q", "other"]);
    r.run(&["step-back"])
        .code(2)
        .stderr(contains("git clada step-forward --all"));
    r.run(&["step-forward"]).code(2).stderr(contains("--all"));
    r.run(&["step-forward", "--all"]).success();
    assert_eq!(r.git(&["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(r.rev("HEAD"), tip);
    assert_eq!(r.status(), "?? mine.txt");
    assert!(r.refs("refs/clada/steps/").is_empty());
    assert_eq!(
        r.git(&["rev-parse", "HEAD@{0}"]),
        tip,
        "HEAD's reflog says where it went"
    );
    r.assert_fsck_clean();
}

#[test]
fn undo_and_redo_of_a_reply_whose_commands_removed_and_renamed_files() {
    let r = Repo::new(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    r.write("mine.txt", "mine\n");
    r.apply("<---RUN--->\nrm b.txt\nmv a.txt moved.txt\n<---END--->\n");
    assert_eq!(r.read("b.txt"), None);
    assert_eq!(r.read("moved.txt").as_deref(), Some("a\n"));
    let after = r.worktree();
    r.run(&["undo"]).success();
    assert_eq!(r.read("b.txt").as_deref(), Some("b\n"));
    assert_eq!(r.read("a.txt").as_deref(), Some("a\n"));
    assert_eq!(r.read("moved.txt"), None);
    assert_eq!(r.status(), "?? mine.txt");
    r.run(&["redo"]).success();
    assert_eq!(r.worktree(), after);
    assert_eq!(r.status(), "");
}

#[test]
fn the_reading_commands_write_nothing() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    r.apply_write("a.txt", "1\n");
    r.write("fresh.txt", "content that is in no object yet\n");
    let id = r.git(&["hash-object", "fresh.txt"]);
    let objects = r.git(&["count-objects"]);
    for args in [
        &["status"][..],
        &["status", "--format", "json"],
        &["log"],
        &["show"],
    ] {
        r.run(args).success();
    }
    assert_eq!(r.git(&["count-objects"]), objects);
    assert!(
        !crate::common::git_command(r.path(), &["cat-file", "-e", &id])
            .status()
            .unwrap()
            .success()
    );
}

/// A lock a killed clada left behind: status says its holder is gone and
/// the next command clears it, and that command indeed goes ahead.
#[test]
fn status_tells_a_dead_holders_lock_from_a_running_one() {
    let r = base_repo();
    r.apply_write("b.txt", "b\n");
    // pid 0 is never a process that can hold a lock.
    std::fs::write(r.path().join(".git/clada.lock"), "0 123").unwrap();
    let said = stdout(&r.run(&["status"]));
    assert!(
        said.contains("a lock was left by a clada command that is gone (pid 0"),
        "{said}"
    );
    assert!(!said.contains("holds the lock"), "{said}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&r.run(&["status", "--format", "json"]))).unwrap();
    assert_eq!(json["lock"], serde_json::json!({"pid": 0, "stale": true}));
    r.run(&["undo"]);
    assert!(!r.path().join(".git/clada.lock").exists());
}

/// A name with a terminal escape in it never reaches the terminal raw: it
/// is quoted as git quotes it.
#[test]
fn paths_with_control_characters_are_quoted_in_status() {
    let r = base_repo();
    r.write("evil\u{1b}[2Jname.txt", "x\n");
    let said = stdout(&r.run(&["status"]));
    assert!(!said.contains('\u{1b}'), "{said:?}");
    assert!(said.contains(r#""evil\033[2Jname.txt""#), "{said}");
}
