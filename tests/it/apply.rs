//! End-to-end tests of `git clada apply` in hermetic repositories: inputs,
//! the commits and refs it writes, modes and settings. Per-operation rules
//! are covered by the data-driven cases in `test-data/apply/`.

use crate::common::{apply, clada, commit, git, git_output, json, out, read, repo, scratch};

const EDIT: &str = "<---SEARCH file=\"a.txt\"--->\nold\n<---REPLACE--->\nnew\n<---END--->\n";

#[test]
fn clean_tree_gets_one_post_commit_with_trailers_note_and_reflogs() {
    let dir = repo(&[("a.txt", "old\n")]);
    let base = out(dir.path(), &["rev-parse", "HEAD"]);
    apply(dir.path(), &["-"], EDIT).success();
    assert_eq!(read(dir.path(), "a.txt"), "new\n");
    assert_eq!(
        out(dir.path(), &["rev-parse", "HEAD^"]),
        base,
        "no pre commit on a clean tree"
    );
    let message = out(dir.path(), &["log", "-1", "--format=%B"]);
    assert!(message.starts_with("[clada:post] edit a.txt"), "{message}");
    let trailers = out(dir.path(), &["log", "-1", "--format=%(trailers:only)"]);
    assert!(
        trailers.contains("Clada-Tasks: 1 succeeded, 0 failed, 0 skipped"),
        "{trailers}"
    );
    let reply_blob = trailers
        .lines()
        .find_map(|l| l.strip_prefix("Clada-Reply: "))
        .expect("a Clada-Reply trailer");
    assert_eq!(
        out(dir.path(), &["cat-file", "-p", reply_blob]),
        EDIT.trim()
    );
    assert_eq!(
        out(dir.path(), &["notes", "--ref", "clada", "show", "HEAD"]),
        EDIT.trim()
    );
    assert_eq!(
        out(dir.path(), &["log", "-1", "--format=%an <%ae> %aI"]),
        "clada <clada@localhost> 2026-01-01T00:00:00Z"
    );
    assert!(out(dir.path(), &["reflog", "-1", "main"]).contains("clada: [clada:post] edit a.txt"));
    assert!(out(dir.path(), &["reflog", "-1", "HEAD"]).contains("clada: [clada:post] edit a.txt"));
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    assert!(out(dir.path(), &["fsck", "--no-dangling"]).is_empty());
}

#[test]
fn dirty_work_is_committed_as_pre_and_status_is_clean_afterwards() {
    let dir = repo(&[("a.txt", "old\n"), ("b.txt", "b\n"), ("gone.txt", "x\n")]);
    std::fs::write(dir.path().join("b.txt"), "b changed\n").unwrap();
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    std::fs::write(dir.path().join("new.txt"), "untracked\n").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(dir.path().join("build.log"), "ignored\n").unwrap();
    apply(dir.path(), &["-"], EDIT).success();
    assert_eq!(
        out(dir.path(), &["log", "--format=%s", "-2"]),
        "[clada:post] edit a.txt\n[clada:pre] snapshot before apply"
    );
    let pre_files = out(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD^"]);
    assert_eq!(pre_files, ".gitignore\na.txt\nb.txt\nnew.txt");
    assert_eq!(out(dir.path(), &["show", "HEAD^:b.txt"]), "b changed");
    assert_eq!(
        out(dir.path(), &["status", "--porcelain"]),
        "",
        "only the ignored file stays out"
    );
    assert!(dir.path().join("build.log").exists());
}

/// The index after an apply matches the post commit entry for entry, and
/// the cache-tree git keeps in it is still right: `git write-tree` (which
/// trusts every valid cache-tree node) gives the post commit's tree, for
/// edits, a new directory, a deletion and a mode change.
#[test]
fn the_index_and_its_cache_tree_match_the_post_commit() {
    let dir = repo(&[
        ("a.txt", "old\n"),
        ("src/lib/one.rs", "one\n"),
        ("src/lib/two.rs", "two\n"),
        ("src/main.rs", "main\n"),
        ("docs/gone.md", "gone\n"),
        ("tools/run.sh", "echo\n"),
    ]);
    // A full, valid cache-tree to start from.
    git(dir.path(), &["read-tree", "HEAD"]);
    std::fs::write(dir.path().join("src/main.rs"), "main, edited by the user\n").unwrap();
    let reply = format!(
        "{EDIT}<---SEARCH file=\"src/lib/one.rs\"--->\none\n<---REPLACE--->\nuno\n<---END--->\n\
         <---WRITE file=\"src/new/mod.rs\"--->\nnew\n<---END--->\n\
         <---RUN--->\nrm docs/gone.md\n<---END--->\n"
    );
    apply(dir.path(), &["-"], &reply).success();
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    let staged = out(dir.path(), &["ls-files", "--stage"]);
    let committed = out(dir.path(), &["ls-tree", "-r", "HEAD"]);
    let as_index: Vec<String> = committed
        .lines()
        .map(|l| {
            let (meta, path) = l.split_once('\t').unwrap();
            let f: Vec<&str> = meta.split(' ').collect();
            format!("{} {} 0\t{path}", f[0], f[2])
        })
        .collect();
    assert_eq!(staged, as_index.join("\n"));
    assert_eq!(
        out(dir.path(), &["write-tree"]),
        out(dir.path(), &["rev-parse", "HEAD^{tree}"])
    );
}

#[test]
fn unborn_branch_gets_a_root_commit() {
    let dir = repo(&[]);
    apply(
        dir.path(),
        &["-"],
        "<---WRITE file=\"src/hello.txt\"--->\nhi\n<---END--->\n",
    )
    .success();
    assert_eq!(out(dir.path(), &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(read(dir.path(), "src/hello.txt"), "hi\n");
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn detached_head_and_non_repositories_are_refused_with_hints() {
    let dir = repo(&[("a.txt", "old\n")]);
    git(dir.path(), &["checkout", "-q", "--detach"]);
    apply(dir.path(), &["-"], EDIT)
        .code(2)
        .stderr(predicates::str::contains("HEAD is detached"))
        .stderr(predicates::str::contains("git switch"));
    let plain = scratch();
    apply(plain.path(), &["-"], EDIT)
        .code(2)
        .stderr(predicates::str::contains("not a git repository"))
        .stderr(predicates::str::contains("--no-git"));
}

#[test]
fn fatal_reply_changes_nothing() {
    let dir = repo(&[("a.txt", "old\n")]);
    std::fs::write(dir.path().join("a.txt"), "dirty\n").unwrap();
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    let a = apply(
        dir.path(),
        &["--format", "json", "-"],
        "<---WRTIE file=\"a.txt\"--->\nx\n<---END--->\n",
    )
    .code(2);
    assert_eq!(json(&a)["status"], "fatal");
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(read(dir.path(), "a.txt"), "dirty\n");
}

#[test]
fn json_report_describes_tasks_commits_and_worktree() {
    let dir = repo(&[("a.txt", "old\n")]);
    let reply =
        format!("{EDIT}<---SEARCH file=\"a.txt\"--->\nmissing\n<---REPLACE--->\nx\n<---END--->\n");
    let a = apply(dir.path(), &["--format", "json", "-"], &reply).code(1);
    let v = json(&a);
    assert_eq!(v["status"], "partial");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["branch"], "main");
    assert_eq!(
        v["post"].as_str().unwrap(),
        out(dir.path(), &["rev-parse", "HEAD"])
    );
    assert_eq!(
        v["summary"],
        serde_json::json!({"succeeded": 1, "failed": 1, "skipped": 0})
    );
    assert_eq!(v["tasks"][0]["status"], "SUCCESS");
    assert_eq!(v["tasks"][1]["error_type"], "match_count_mismatch");
    assert_eq!(v["worktree"]["written"], serde_json::json!(["a.txt"]));
}

#[test]
fn reply_from_a_commit_message_or_a_note() {
    let dir = repo(&[("a.txt", "old\n")]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("ask\n\n{EDIT}"),
        ],
    );
    apply(dir.path(), &["--from-commit", "HEAD"], "").success();
    assert_eq!(read(dir.path(), "a.txt"), "new\n");

    let reply = "<---WRITE file=\"b.txt\"--->\nfrom a note\n<---END--->\n";
    std::fs::write(dir.path().join("note.md"), reply).unwrap();
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "notes",
            "--ref",
            "clada-inbox",
            "add",
            "-F",
            "note.md",
            "HEAD",
        ],
    );
    std::fs::remove_file(dir.path().join("note.md")).unwrap();
    apply(dir.path(), &["--from-note", "HEAD"], "").success();
    assert_eq!(read(dir.path(), "b.txt"), "from a note\n");
    apply(dir.path(), &["--from-note", "HEAD"], "")
        .code(2)
        .stderr(predicates::str::contains(
            "has no note in refs/notes/clada-inbox",
        ));
}

#[test]
fn dry_run_prints_the_diff_and_changes_nothing() {
    let dir = repo(&[("a.txt", "old\n")]);
    let refs_before = out(dir.path(), &["for-each-ref"]);
    let objects_before = out(dir.path(), &["count-objects"]);
    let a = apply(dir.path(), &["--dry-run", "-"], EDIT).success();
    let text = String::from_utf8(a.get_output().stdout.clone()).unwrap();
    assert!(text.contains("-old\n+new\n"), "{text}");
    assert!(text.contains("--- a/a.txt\n+++ b/a.txt"), "{text}");
    assert_eq!(out(dir.path(), &["for-each-ref"]), refs_before);
    assert_eq!(
        out(dir.path(), &["count-objects"]),
        objects_before,
        "no objects written"
    );
    assert_eq!(read(dir.path(), "a.txt"), "old\n");
}

#[test]
fn atomic_keeps_the_branch_and_stores_the_result() {
    let dir = repo(&[("a.txt", "old\n")]);
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    let reply =
        format!("{EDIT}<---SEARCH file=\"a.txt\"--->\nmissing\n<---REPLACE--->\nx\n<---END--->\n");
    apply(dir.path(), &["--atomic", "-"], &reply)
        .code(1)
        .stdout(predicates::str::contains("refs/clada/rejected/1"));
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        out(dir.path(), &["show", "refs/clada/rejected/1:a.txt"]),
        "new"
    );
    assert_eq!(read(dir.path(), "a.txt"), "old\n");
    apply(dir.path(), &["--atomic", "-"], &reply).code(1);
    assert!(
        out(dir.path(), &["for-each-ref", "refs/clada/rejected/"])
            .contains("refs/clada/rejected/2")
    );
}

#[test]
fn no_git_edits_a_plain_directory_and_rolls_back_blocks() {
    let dir = scratch();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    let reply = "<---TASKS--->\n<---WRITE file=\"made/new.txt\"--->\nx\n<---END--->\n<---SEARCH file=\"a.txt\"--->\nmissing\n<---REPLACE--->\ny\n<---END--->\n<---END--->\n";
    apply(dir.path(), &["--no-git", "-"], &format!("{EDIT}{reply}")).code(1);
    assert_eq!(read(dir.path(), "a.txt"), "new\n");
    assert!(
        !dir.path().join("made").exists(),
        "the failed block's file and directory are gone"
    );
    // --atomic undoes everything.
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    apply(
        dir.path(),
        &["--no-git", "--atomic", "-"],
        &format!("{EDIT}{reply}"),
    )
    .code(1);
    assert_eq!(read(dir.path(), "a.txt"), "old\n");
}

#[test]
fn settings_come_from_git_config_then_the_team_file() {
    let dir = repo(&[("a.py", "def f():\n\treturn 1\n")]);
    let reply =
        "<---SEARCH file=\"a.py\"--->\n    return 1\n<---REPLACE--->\n    return 2\n<---END--->\n";
    apply(dir.path(), &["-"], reply).code(1);
    git(dir.path(), &["config", "clada.match", "whitespace"]);
    apply(dir.path(), &["-"], reply).success();
    assert_eq!(read(dir.path(), "a.py"), "def f():\n\treturn 2\n");

    let dir = repo(&[
        ("a.py", "def f():\n\treturn 1\n"),
        (".clada/config.toml", "match = \"whitespace\"\n"),
    ]);
    apply(dir.path(), &["-"], reply).success();
    // A flag wins.
    let dir = repo(&[
        ("a.py", "def f():\n\treturn 1\n"),
        (".clada/config.toml", "match = \"whitespace\"\n"),
    ]);
    apply(dir.path(), &["--match", "exact", "-"], reply).code(1);
    // A malformed team file is an error naming it.
    let dir = repo(&[("a.txt", "old\n"), (".clada/config.toml", "match = \n")]);
    apply(dir.path(), &["-"], EDIT)
        .code(2)
        .stderr(predicates::str::contains(".clada/config.toml is malformed"));
}

#[test]
fn git_author_sets_the_identity_of_both_commits() {
    let dir = repo(&[("a.txt", "old\n")]);
    std::fs::write(dir.path().join("b.txt"), "dirty\n").unwrap();
    apply(
        dir.path(),
        &["--git-author", "Bot <bot@example.org>", "-"],
        EDIT,
    )
    .success();
    assert_eq!(
        out(dir.path(), &["log", "-2", "--format=%an <%ae>|%cn <%ce>"]),
        "Bot <bot@example.org>|Bot <bot@example.org>\nBot <bot@example.org>|Bot <bot@example.org>"
    );
    apply(dir.path(), &["--git-author", "nobody", "-"], EDIT).code(2);
}

/// Without `GIT_AUTHOR_DATE` and `GIT_COMMITTER_DATE` the commits are
/// dated now, at the local offset `TZ` gives (POSIX fixed-offset zones:
/// no zoneinfo database needed, and `XYZ-5:30` is 5:30 east of UTC), as
/// git dates its own.
#[test]
fn commits_are_dated_now_at_the_local_offset() {
    for (tz, offset) in [
        ("XYZ-5:30", "+0530"),
        ("XYZ+3", "-0300"),
        ("XYZ-14", "+1400"),
    ] {
        let dir = repo(&[("a.txt", "old\n")]);
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        clada(dir.path(), dir.path())
            .env("TZ", tz)
            .args(["apply", "-"])
            .write_stdin(EDIT)
            .assert()
            .success();
        // The post commit's dates and the notes commit's.
        let dates = out(dir.path(), &["log", "-1", "--format=%ad|%cd", "--date=raw"]);
        let notes = out(
            dir.path(),
            &[
                "log",
                "-1",
                "--format=%ad|%cd",
                "--date=raw",
                "refs/notes/clada",
            ],
        );
        for date in dates.split('|').chain(notes.split('|')) {
            let (secs, zone) = date.split_once(' ').expect("seconds and offset");
            let secs: u64 = secs.parse().unwrap();
            assert!(secs >= before && secs <= before + 60, "{tz}: {date}");
            assert_eq!(zone, offset, "{tz}: {dates}");
        }
    }
}

/// A changed or untracked file whose name is not UTF-8 cannot be in the
/// snapshot (clada names paths as strings): the report names it, and it
/// stays on disk as it was.
#[test]
fn files_whose_names_are_not_utf8_are_left_out_and_named() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = repo(&[("a.txt", "old\n")]);
    let tracked = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    let untracked = std::ffi::OsStr::from_bytes(b"new\xff.txt");
    std::fs::write(dir.path().join(tracked), "v1\n").unwrap();
    git(dir.path(), &["add", "-A"]);
    crate::common::commit(dir.path(), &["-q", "-m", "non-UTF-8 name"]);
    let base = out(dir.path(), &["rev-parse", "HEAD"]);
    std::fs::write(dir.path().join(tracked), "mine\n").unwrap();
    std::fs::write(dir.path().join(untracked), "mine too\n").unwrap();
    let text = apply(dir.path(), &["-"], EDIT).success();
    let report = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        report.contains(
            "left out \"caf\\351.txt\": not in pre (its name is not UTF-8); left as it is on disk\n"
        ),
        "{report}"
    );
    assert!(report.contains("left out \"new\\377.txt\""), "{report}");
    assert!(
        report.contains("pre none (only files left out changed)"),
        "{report}"
    );
    assert_eq!(
        out(dir.path(), &["rev-parse", "HEAD^"]),
        base,
        "no pre commit"
    );
    assert_eq!(
        std::fs::read(dir.path().join(tracked)).unwrap(),
        b"mine\n",
        "left as it was"
    );
    assert_eq!(
        std::fs::read(dir.path().join(untracked)).unwrap(),
        b"mine too\n"
    );
    assert_eq!(
        out(dir.path(), &["status", "--porcelain"]),
        // (trimmed: " M" loses its space)
        "M \"caf\\351.txt\"\n?? \"new\\377.txt\""
    );
    // With other work, the pre commit holds that, and the JSON report
    // names what it left out.
    std::fs::write(dir.path().join("b.txt"), "dirty\n").unwrap();
    let reply = "<---SEARCH file=\"a.txt\"--->\nnew\n<---REPLACE--->\nnewer\n<---END--->\n";
    let report = json(&apply(dir.path(), &["--format", "json", "-"], reply).success());
    assert_eq!(
        report["worktree"]["left_out"],
        serde_json::json!(["\"caf\\351.txt\"", "\"new\\377.txt\""])
    );
    let pre = report["pre"].as_str().expect("a pre commit");
    assert_eq!(
        out(dir.path(), &["show", "--format=", "--name-only", pre]),
        "b.txt"
    );
}

#[test]
fn a_reply_that_changes_nothing_moves_nothing() {
    let dir = repo(&[("a.txt", "old\n")]);
    std::fs::write(dir.path().join("b.txt"), "dirty\n").unwrap();
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    apply(
        dir.path(),
        &["-"],
        "<---WRITE file=\"a.txt\"--->\nold\n<---END--->\n",
    )
    .success()
    .stdout(predicates::str::contains("nothing changed"));
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(read(dir.path(), "b.txt"), "dirty\n");
}

#[test]
fn allow_escape_writes_outside_only_with_no_git() {
    let outer = scratch();
    let work = outer.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let reply = "<---WRITE file=\"../outside.txt\"--->\nout\n<---END--->\n";
    // Refused by default, as a SKIP with its error type.
    apply(&work, &["--no-git", "--format", "json", "-"], reply).code(1);
    assert!(!outer.path().join("outside.txt").exists());
    apply(&work, &["--no-git", "--allow-escape", "-"], reply).success();
    assert_eq!(
        std::fs::read_to_string(outer.path().join("outside.txt")).unwrap(),
        "out\n"
    );
    // Never into .git, even with the flag.
    let git_reply = "<---WRITE file=\"../.git/config\"--->\nx\n<---END--->\n";
    apply(&work, &["--no-git", "--allow-escape", "-"], git_reply)
        .code(1)
        .stdout(predicates::str::contains("protected_path"));
    // Without --no-git the flag is refused.
    let dir = repo(&[("a.txt", "old\n")]);
    apply(dir.path(), &["--allow-escape", "-"], EDIT)
        .code(2)
        .stderr(predicates::str::contains(
            "--allow-escape works only with --no-git",
        ));
}

#[test]
fn staged_changes_are_part_of_the_snapshot() {
    let dir = repo(&[("a.txt", "old\n"), ("b.txt", "b\n")]);
    std::fs::write(dir.path().join("b.txt"), "b staged\n").unwrap();
    std::fs::write(dir.path().join("new.txt"), "staged new\n").unwrap();
    git(dir.path(), &["add", "b.txt", "new.txt"]);
    apply(dir.path(), &["-"], EDIT).success();
    assert_eq!(out(dir.path(), &["show", "HEAD^:b.txt"]), "b staged");
    assert_eq!(out(dir.path(), &["show", "HEAD^:new.txt"]), "staged new");
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn a_second_apply_after_the_first_sees_a_clean_tree() {
    // The first apply rewrites the index; the second must still find the
    // tree clean (no pre commit) and apply on top.
    let dir = repo(&[("a.txt", "old\n")]);
    apply(dir.path(), &["-"], EDIT).success();
    apply(
        dir.path(),
        &["-"],
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    )
    .success();
    assert_eq!(
        out(dir.path(), &["log", "--format=%s"]),
        "[clada:post] create b.txt\n[clada:post] edit a.txt\ninitial"
    );
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn a_link_at_a_temporary_name_cannot_redirect_writes() {
    let outside = scratch();
    let target = outside.path().join("outside.txt");
    std::fs::write(&target, "untouched\n").unwrap();
    let dir = repo(&[("a.txt", "old\n")]);
    for name in [".a.txt.clada-tmp", ".clada-0-0.tmp"] {
        std::os::unix::fs::symlink(&target, dir.path().join(name)).unwrap();
    }
    apply(dir.path(), &["-"], EDIT).success();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched\n");
    assert_eq!(read(dir.path(), "a.txt"), "new\n");
    assert!(!dir.path().join("a.txt").is_symlink());
}

#[test]
fn ignored_files_are_never_overwritten() {
    let dir = repo(&[("a.txt", "old\n"), (".gitignore", ".env\n")]);
    std::fs::write(dir.path().join(".env"), "SECRET=1\n").unwrap();
    apply(
        dir.path(),
        &["-"],
        "<---WRITE file=\".env\"--->\nSECRET=2\n<---END--->\n",
    )
    .code(1)
    .stdout(predicates::str::contains(
        "protected_path: .env exists but git ignores it",
    ));
    assert_eq!(read(dir.path(), ".env"), "SECRET=1\n");
    assert!(
        out(dir.path(), &["ls-tree", "-r", "--name-only", "HEAD"])
            .lines()
            .all(|l| l != ".env")
    );
}

#[test]
fn a_symlinked_directory_is_not_read_through_by_the_snapshot() {
    let outside = scratch();
    std::fs::write(outside.path().join("f"), "OUTSIDE-SECRET\n").unwrap();
    let dir = repo(&[("a.txt", "old\n"), ("d/f", "inside\n")]);
    std::fs::remove_dir_all(dir.path().join("d")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("d")).unwrap();
    apply(dir.path(), &["-"], EDIT).success();
    let pre_tree = out(dir.path(), &["ls-tree", "-r", "HEAD^"]);
    assert!(!pre_tree.contains("d/f"), "{pre_tree}");
    assert!(!out(dir.path(), &["grep", "-r", "OUTSIDE-SECRET", "HEAD^"]).contains("SECRET"));
}

#[test]
fn apply_refuses_during_a_merge() {
    let dir = repo(&[("a.txt", "old\n")]);
    git(dir.path(), &["checkout", "-q", "-b", "other"]);
    std::fs::write(dir.path().join("a.txt"), "theirs\n").unwrap();
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qam",
            "theirs",
        ],
    );
    git(dir.path(), &["checkout", "-q", "main"]);
    std::fs::write(dir.path().join("a.txt"), "ours\n").unwrap();
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qam",
            "ours",
        ],
    );
    let _ = git_output(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "merge",
            "other",
        ],
    );
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    apply(dir.path(), &["-"], EDIT)
        .code(2)
        .stderr(predicates::str::contains("merge is in progress"));
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    assert!(out(dir.path(), &["status", "--porcelain"]).contains("UU a.txt"));
}

#[test]
fn errors_before_the_report_are_json_too_when_json_was_asked_for() {
    let dir = scratch();
    let a = clada(dir.path(), dir.path())
        .args(["apply", "--format", "json", "-"])
        .write_stdin(EDIT)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a git repository"));
    let doc = json(&a);
    assert_eq!(doc["status"], "error");
    assert_eq!(doc["exit_code"], 2);
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .contains("not a git repository")
    );
    assert!(doc["hint"].as_str().unwrap().contains("--no-git"));
    // From git config as well: a detached HEAD.
    let dir = repo(&[("a.txt", "old\n")]);
    git(dir.path(), &["config", "clada.format", "json"]);
    git(dir.path(), &["checkout", "-q", "--detach"]);
    let a = apply(dir.path(), &["-"], EDIT).code(2);
    assert_eq!(json(&a)["status"], "error");
}

/// The operations beyond WRITE, SEARCH and RUN, end to end in a
/// repository: JSON report, undo and redo of renames and deletions.
#[test]
fn json_moves_and_deletes_are_undone_and_redone() {
    let dir = repo(&[("a.txt", "a\n"), ("d/b.txt", "b\n"), ("d/c.txt", "c\n")]);
    let reply = r#"[{"op": "move", "from": "a.txt", "to": "x/a.txt"},
                    {"op": "delete", "path": "d", "recursive": true},
                    {"op": "read", "glob": "**", "base": ""}]"#;
    let done = apply(dir.path(), &["--format", "json", "-"], reply).success();
    let report = json(&done);
    assert_eq!(report["status"], "success");
    assert_eq!(report["syntax"], "json");
    assert_eq!(report["tasks"][0]["op"], "MOVE");
    assert_eq!(report["tasks"][2]["output"], "x/a.txt\n");
    assert!(!dir.path().join("a.txt").exists());
    assert!(!dir.path().join("d").exists(), "the emptied directory goes");
    assert_eq!(read(dir.path(), "x/a.txt"), "a\n");
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    clada(dir.path(), dir.path()).arg("undo").assert().success();
    assert_eq!(read(dir.path(), "a.txt"), "a\n");
    assert_eq!(read(dir.path(), "d/b.txt"), "b\n");
    assert!(!dir.path().join("x").exists());
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
    clada(dir.path(), dir.path()).arg("redo").assert().success();
    assert_eq!(read(dir.path(), "x/a.txt"), "a\n");
    assert!(!dir.path().join("d/b.txt").exists());
}

#[test]
fn json_operations_work_without_git_and_a_failed_block_restores_deletions() {
    let dir = scratch();
    let root = dir.path();
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    std::fs::write(root.join("d/b.txt"), "b\n").unwrap();
    let reply = r#"[
      {"op": "tasks", "ops": [
        {"op": "delete", "path": "d", "recursive": true},
        {"op": "move", "from": "a.txt", "to": "m/a.txt"},
        {"op": "insert", "path": "m/a.txt", "line": 7, "text": "no such line"}
      ]},
      {"op": "mkdir", "path": "made/here"},
      {"op": "read", "list": ""}
    ]"#;
    let done = apply(root, &["--no-git", "-"], reply).code(1);
    let said = String::from_utf8(done.get_output().stdout.clone()).unwrap();
    assert!(
        said.contains("[task-1] ERROR: TASKS - task 1.3 failed; block rolled back"),
        "{said}"
    );
    assert_eq!(read(root, "a.txt"), "a\n");
    assert_eq!(read(root, "d/b.txt"), "b\n");
    assert!(
        !root.join("m").exists(),
        "the directory the move made is gone"
    );
    assert!(
        root.join("made/here").is_dir(),
        "without git mkdir is on disk"
    );
    assert!(said.contains("[task-3:read] made/\n"), "{said}");
    // Applied for real, it moves and deletes on disk.
    let reply = r#"[{"op": "move", "from": "d", "to": "e"}, {"op": "delete", "path": "a.txt"}]"#;
    apply(root, &["--no-git", "-"], reply).success();
    assert_eq!(read(root, "e/b.txt"), "b\n");
    assert!(!root.join("d").exists() && !root.join("a.txt").exists());
    // --atomic undoes everything, deletions included.
    let reply = r#"[{"op": "delete", "path": "e", "recursive": true}, {"op": "delete", "path": "missing"}]"#;
    apply(root, &["--no-git", "--atomic", "-"], reply).code(1);
    assert_eq!(read(root, "e/b.txt"), "b\n");
}

#[test]
fn a_reply_without_operations_exits_1_and_changes_nothing() {
    let dir = repo(&[("a.txt", "a\n")]);
    std::fs::write(dir.path().join("untracked.txt"), "u\n").unwrap();
    let done = apply(
        dir.path(),
        &["--format", "json", "-"],
        "Sure, here is the plan.\n",
    )
    .code(1);
    let report = json(&done);
    assert_eq!(report["status"], "no_operations");
    assert_eq!(report["exit_code"], 1);
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("git clada prompt"),
        "{report}"
    );
    // No pre snapshot, no commit.
    assert_eq!(out(dir.path(), &["rev-list", "--count", "HEAD"]), "1");
}

/// A rebase stopped on a conflict detaches HEAD: apply and undo both say
/// a rebase is in progress (one message), never "switch to a branch".
#[test]
fn during_a_rebase_apply_and_undo_give_the_same_message() {
    let dir = repo(&[("a.txt", "base\n")]);
    let d = dir.path();
    git(d, &["checkout", "-q", "-b", "side"]);
    std::fs::write(d.join("a.txt"), "side\n").unwrap();
    crate::common::commit(d, &["-q", "-am", "side"]);
    git(d, &["checkout", "-q", "main"]);
    std::fs::write(d.join("a.txt"), "main\n").unwrap();
    crate::common::commit(d, &["-q", "-am", "main"]);
    let rebase = crate::common::git_command(
        d,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "rebase",
            "-q",
            "main",
            "side",
        ],
    )
    .output()
    .unwrap();
    assert!(
        !rebase.status.success(),
        "the rebase must stop on its conflict"
    );
    let reply = "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n";
    let applied = apply(d, &["-"], reply).code(2);
    let apply_err = String::from_utf8(applied.get_output().stderr.clone()).unwrap();
    let undone = clada(d, d).arg("undo").assert().code(2);
    let undo_err = String::from_utf8(undone.get_output().stderr.clone()).unwrap();
    for said in [&apply_err, &undo_err] {
        assert!(said.contains("a git rebase is in progress"), "{said}");
        assert!(said.contains("git rebase --abort"), "{said}");
        assert!(!said.contains("switch to a branch"), "{said}");
    }
}

/// git's lock files a killed command left behind: the apply fails with a
/// message that names the file and says how to recover, and the reply
/// applies once it is gone. `packed-refs.lock` is not in the way of an
/// apply, as it is not in the way of `git commit`: git takes it only to
/// delete references or pack them, and so does clada.
#[test]
fn a_leftover_git_lock_file_is_named_with_how_to_recover() {
    let dir = repo(&[("a.txt", "a\n")]);
    let d = dir.path();
    git(d, &["pack-refs", "--all"]);
    let packed_lock = d.join(".git/packed-refs.lock");
    std::fs::write(&packed_lock, "").unwrap();
    let first = "<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n";
    apply(d, &["-"], first).success();
    assert_eq!(read(d, "c.txt"), "c\n");
    assert!(packed_lock.exists(), "somebody else's lock is left alone");
    std::fs::remove_file(&packed_lock).unwrap();
    let reply = "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n";
    for lock in ["refs/heads/main.lock", "HEAD.lock"] {
        let path = d.join(".git").join(lock);
        std::fs::write(&path, "").unwrap();
        let failed = apply(d, &["-"], reply).code(2);
        let said = String::from_utf8(failed.get_output().stderr.clone()).unwrap();
        assert!(said.contains(&format!("{lock} exists")), "{said}");
        assert!(
            said.contains("If no git command is running, remove it"),
            "{said}"
        );
        assert_eq!(
            out(d, &["rev-list", "--count", "main"]),
            "2",
            "the branch did not move"
        );
        std::fs::remove_file(&path).unwrap();
    }
    apply(d, &["-"], reply).success();
    assert_eq!(read(d, "b.txt"), "b\n");
}

/// A reply that rewrites .gitignore does not make the next apply commit
/// the files it un-ignored (an .env, build output) into its pre snapshot.
#[test]
fn files_a_reply_unignored_are_never_snapshot() {
    let dir = repo(&[(".gitignore", ".env\nbuild/\n"), ("a.txt", "a\n")]);
    let d = dir.path();
    std::fs::write(d.join(".env"), "SECRET=1\n").unwrap();
    std::fs::create_dir_all(d.join("build")).unwrap();
    std::fs::write(d.join("build/out.o"), "obj\n").unwrap();
    let rewrite = "<---WRITE file=\".gitignore\"--->\n*.log\n<---END--->\n";
    apply(d, &["-"], rewrite).success();
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    let next = "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n";
    let done = apply(d, &["--format", "json", "-"], next).success();
    let report = json(&done);
    assert_eq!(
        report["worktree"]["left_ignored"],
        serde_json::json!([".env", "build/out.o"])
    );
    let pre = report["pre"]
        .as_str()
        .expect("notes.txt makes a pre commit");
    let in_pre = out(d, &["ls-tree", "-r", "--name-only", pre]);
    assert!(in_pre.contains("notes.txt"), "{in_pre}");
    assert!(
        !in_pre.contains(".env") && !in_pre.contains("out.o"),
        "{in_pre}"
    );
    assert_eq!(read(d, ".env"), "SECRET=1\n", "left on disk as it was");
    let text_report = apply(d, &["-"], "<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n").success();
    let said = String::from_utf8(text_report.get_output().stdout.clone()).unwrap();
    assert!(
        said.contains("left out .env: not in pre, because it was ignored before"),
        "{said}"
    );
}

/// A file the working-tree update cannot write is not a success, and its
/// stale content is never taken for the user's edit: the next apply does
/// not revert it on the branch, and writes it once it can.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "failure points need a debug build (src/fault.rs)"
)]
fn a_file_that_cannot_be_written_is_never_taken_for_a_user_edit() {
    let dir = repo(&[("a.txt", "old\n"), ("b.txt", "b\n")]);
    let d = dir.path();
    let fail = ("CLADA_FAIL", "worktree-write:a.txt");
    let reply = "<---WRITE file=\"a.txt\"--->\nnew\n<---END--->\n";
    let first = crate::common::clada(d, d)
        .env(fail.0, fail.1)
        .args(["apply", "--format", "json", "-"])
        .write_stdin(reply)
        .assert()
        .code(1);
    let report = json(&first);
    assert_eq!(report["status"], "partial");
    assert_eq!(report["worktree"]["failed"][0]["path"], "a.txt");
    assert_eq!(read(d, "a.txt"), "old\n", "the write failed");
    assert_eq!(out(d, &["show", "main:a.txt"]), "new");
    // The cause is still there: an unrelated apply must not commit the
    // stale a.txt as the user's change (a revert of the first apply).
    let next = "<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n";
    let second = crate::common::clada(d, d)
        .env(fail.0, fail.1)
        .args(["apply", "--format", "json", "-"])
        .write_stdin(next)
        .assert()
        .success();
    assert_eq!(
        json(&second)["pre"],
        serde_json::Value::Null,
        "no pre: nothing of the user's changed"
    );
    assert_eq!(out(d, &["show", "main:a.txt"]), "new");
    // A dry run writes nothing, not even a file waiting to be written.
    apply(
        d,
        &["--dry-run", "-"],
        "<---WRITE file=\"f.txt\"--->\nf\n<---END--->\n",
    )
    .success();
    assert_eq!(read(d, "a.txt"), "old\n");
    // Once the cause is gone, the next command writes it.
    let third = "<---WRITE file=\"e.txt\"--->\ne\n<---END--->\n";
    apply(d, &["-"], third).success();
    assert_eq!(read(d, "a.txt"), "new\n");
    assert_eq!(out(d, &["status", "--porcelain"]), "");
    assert!(!d.join(".git/clada-unwritten").exists());
}

/// With core.autocrlf or a .gitattributes eol, the files clada writes are
/// what git's checkout would write (CRLF), a file in its checked-out form
/// is not taken for the user's edit, and the next apply reverts nothing.
#[test]
fn autocrlf_and_eol_attributes_are_honoured_in_the_working_tree() {
    for (config, attributes) in [(Some("true"), None), (None, Some("*.txt eol=crlf\n"))] {
        let dir = repo(&[("a.txt", "one\ntwo\n")]);
        let d = dir.path();
        if let Some(value) = config {
            git(d, &["config", "core.autocrlf", value]);
        }
        if let Some(text) = attributes {
            std::fs::write(d.join(".gitattributes"), text).unwrap();
            git(d, &["add", ".gitattributes"]);
            crate::common::commit(d, &["-q", "-m", "attributes"]);
        }
        // The file as git checks it out here.
        std::fs::remove_file(d.join("a.txt")).unwrap();
        git(d, &["checkout", "-q", "a.txt"]);
        assert_eq!(read(d, "a.txt"), "one\r\ntwo\r\n");
        let edit = "<---SEARCH file=\"a.txt\"--->\ntwo\n<---REPLACE--->\nTWO\n<---END--->\n";
        let done = apply(d, &["-"], edit).success();
        let said = String::from_utf8(done.get_output().stdout.clone()).unwrap();
        assert!(!said.contains("kept"), "{said}");
        assert_eq!(read(d, "a.txt"), "one\r\nTWO\r\n");
        assert_eq!(out(d, &["status", "--porcelain"]), "");
        apply(d, &["-"], "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n").success();
        assert_eq!(
            out(d, &["show", "main:a.txt"]),
            "one\nTWO",
            "nothing reverted"
        );
        assert_eq!(read(d, "b.txt"), "b\r\n");
        assert_eq!(out(d, &["status", "--porcelain"]), "");
        // Undo brings the checked-out form back too.
        let undone = clada(d, d).args(["undo", "2"]).assert().success();
        let said = String::from_utf8(undone.get_output().stderr.clone()).unwrap();
        assert!(!said.contains("kept"), "{said}");
        assert_eq!(read(d, "a.txt"), "one\r\ntwo\r\n");
        assert!(!d.join("b.txt").exists());
        assert_eq!(out(d, &["status", "--porcelain"]), "");
    }
}

/// Review findings, each a sequence that lost or broke something.
#[test]
fn a_write_below_a_file_the_reply_made_is_refused_and_loses_nothing() {
    let dir = repo(&[("notes.txt", "mine\n")]);
    let d = dir.path();
    let reply = r#"[{"op": "move", "from": "notes.txt", "to": "docs/notes"},
                    {"op": "write", "path": "docs/notes/index.md", "content": "x"},
                    {"op": "write", "path": "x/y", "content": "1"},
                    {"op": "write", "path": "x/y/z", "content": "2"}]"#;
    let done = apply(d, &["--format", "json", "-"], reply).code(1);
    let report = json(&done);
    assert_eq!(report["tasks"][1]["error_type"], "file_not_found");
    assert_eq!(report["tasks"][3]["error_type"], "file_not_found");
    assert_eq!(out(d, &["show", "main:docs/notes"]), "mine");
    assert_eq!(out(d, &["show", "main:x/y"]), "1");
    assert_eq!(read(d, "docs/notes"), "mine\n");
}

#[test]
fn a_directory_move_that_fails_half_way_moves_nothing() {
    let dir = repo(&[(".gitignore", "/b/y\n"), ("a/x", "x\n"), ("a/y", "y\n")]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("b")).unwrap();
    std::fs::write(d.join("b/y"), "ignored, the user's\n").unwrap();
    let reply =
        r#"[{"op": "move", "from": "a", "to": "b"}, {"op": "write", "path": "c", "content": "c"}]"#;
    let done = apply(d, &["--format", "json", "-"], reply).code(1);
    let report = json(&done);
    assert_eq!(report["tasks"][0]["error_type"], "protected_path");
    assert_eq!(
        out(d, &["show", "main:a/x"]),
        "x",
        "a/x was not moved alone"
    );
    assert!(!out(d, &["ls-tree", "-r", "--name-only", "main"]).contains("b/x"));
    assert_eq!(read(d, "b/y"), "ignored, the user's\n");
}

#[test]
fn a_directory_replaced_by_a_file_reaches_the_working_tree() {
    let dir = repo(&[("a/b", "b\n")]);
    let d = dir.path();
    let reply = r#"[{"op": "delete", "path": "a/b"}, {"op": "write", "path": "a", "content": "now a file"}]"#;
    let done = apply(d, &["-"], reply).success();
    let said = String::from_utf8(done.get_output().stdout.clone()).unwrap();
    assert!(!said.contains("kept"), "{said}");
    assert_eq!(read(d, "a"), "now a file\n");
    assert_eq!(out(d, &["status", "--porcelain"]), "");
}

#[test]
fn without_git_a_rolled_back_block_restores_what_it_replaced() {
    let dir = scratch();
    let r = dir.path();
    std::fs::write(r.join("notes"), "my notes\n").unwrap();
    std::fs::create_dir_all(r.join("d")).unwrap();
    std::fs::write(r.join("d/x"), "x\n").unwrap();
    let reply = r#"[{"op": "tasks", "ops": [
        {"op": "delete", "path": "notes"},
        {"op": "write", "path": "notes/a.md", "content": "a"},
        {"op": "delete", "path": "d", "recursive": true},
        {"op": "write", "path": "d", "content": "a file now"},
        {"op": "delete", "path": "missing"}
    ]}]"#;
    apply(r, &["--no-git", "-"], reply).code(1);
    assert_eq!(read(r, "notes"), "my notes\n");
    assert_eq!(read(r, "d/x"), "x\n");
    // With --allow-escape a reply still cannot delete or move outside.
    let outside = r#"[{"op": "delete", "path": "/", "recursive": true}, {"op": "move", "from": "notes", "to": "../elsewhere"}]"#;
    let done = apply(
        r,
        &["--no-git", "--allow-escape", "--format", "json", "-"],
        outside,
    )
    .code(1);
    let report = json(&done);
    for t in 0..2 {
        assert_eq!(report["tasks"][t]["status"], "SKIP");
        assert_eq!(report["tasks"][t]["error_type"], "path_escape");
    }
    assert_eq!(read(r, "notes"), "my notes\n");
}

/// A file outside a sparse checkout's cone is edited in the commit and
/// its index entry, never written to disk, and the next apply does not
/// take its absence for a deletion.
#[test]
fn files_outside_a_sparse_checkout_stay_off_the_disk_and_in_the_branch() {
    let dir = repo(&[("in/a.txt", "a\n"), ("out/x.txt", "x\n")]);
    let d = dir.path();
    git(d, &["sparse-checkout", "set", "in"]);
    assert!(!d.join("out").exists(), "git took out/ off the disk");
    let reply = "<---SEARCH file=\"out/x.txt\"--->\nx\n<---REPLACE--->\nX\n<---END--->\n\
                 <---WRITE file=\"in/a.txt\"--->\nA\n<---END--->\n";
    let done = apply(d, &["-"], reply).success();
    let said = String::from_utf8(done.get_output().stdout.clone()).unwrap();
    assert!(!said.contains("kept"), "{said}");
    assert!(
        !d.join("out").exists(),
        "clada did not write outside the cone"
    );
    assert_eq!(read(d, "in/a.txt"), "A\n");
    assert_eq!(out(d, &["show", "main:out/x.txt"]), "X");
    assert_eq!(out(d, &["status", "--porcelain"]), "");
    apply(
        d,
        &["-"],
        "<---WRITE file=\"in/b.txt\"--->\nb\n<---END--->\n",
    )
    .success();
    assert_eq!(
        out(d, &["show", "main:out/x.txt"]),
        "X",
        "not deleted by the next apply"
    );
    assert_eq!(out(d, &["status", "--porcelain"]), "");
    // Undo keeps the cone too.
    clada(d, d).args(["undo", "2"]).assert().success();
    assert!(
        !d.join("out").exists(),
        "undo did not write outside the cone"
    );
    assert_eq!(out(d, &["show", "main:out/x.txt"]), "x");
    assert_eq!(read(d, "in/a.txt"), "a\n");
    assert_eq!(out(d, &["status", "--porcelain"]), "");
}

/// Two names that differ only in case are one file on a case-insensitive
/// filesystem: a move between them with overwrite is refused everywhere
/// rather than lose the file there.
#[test]
fn a_move_between_names_that_differ_only_in_case_is_refused() {
    let dir = scratch();
    let r = dir.path();
    std::fs::write(r.join("Readme.md"), "mine\n").unwrap();
    std::fs::write(r.join("README.md"), "other\n").unwrap();
    let reply = r#"[{"op": "move", "from": "Readme.md", "to": "README.md", "overwrite": true}]"#;
    let done = apply(r, &["--no-git", "--format", "json", "-"], reply).code(1);
    let report = json(&done);
    assert_eq!(report["tasks"][0]["error_type"], "target_exists");
    assert!(
        report["tasks"][0]["message"]
            .as_str()
            .unwrap()
            .contains("only in case")
    );
    assert_eq!(read(r, "Readme.md"), "mine\n");
}

/// A reply of more problems than a parse keeps (1,000): every task is
/// still reported, those past the kept diagnostics by their problem's
/// code, and the report ends by saying how many more there are.
#[test]
fn problems_past_the_kept_ones_are_counted_at_the_end_of_the_report() {
    let dir = repo(&[("a.txt", "old\n")]);
    let reply = format!(
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n{}",
        "<---WRITE file=\"a.txt\" append=\"maybe\"--->\nx\n<---END--->\n".repeat(1200)
    );
    let text = apply(dir.path(), &["-"], &reply).code(1);
    let said = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        said.contains("[task-2] SKIP: WRITE a.txt - Invalid value for 'append'"),
        "{said}"
    );
    let lines: Vec<&str> = said.lines().collect();
    let end = lines[lines.len() - 3..].join("\n");
    let end = end.replace(
        &out(dir.path(), &["rev-parse", "--short", "HEAD"]),
        "<post>",
    );
    insta::assert_snapshot!("more_problems_than_kept", end);
    assert_eq!(read(dir.path(), "b.txt"), "b\n");
    git(dir.path(), &["reset", "-q", "--hard", "HEAD^"]);
    let report = json(&apply(dir.path(), &["--format", "json", "-"], &reply).code(1));
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(1000));
    assert_eq!(report["diagnostics_omitted"].as_u64(), Some(200));
    assert_eq!(report["tasks"].as_array().map(Vec::len), Some(1201));
}

/// A file's content shown by READ is untrusted: its escape sequences are
/// shown escaped in the text report (issue 28 point 6, the form
/// `push-reply` shows the server's text in too).
#[test]
fn read_output_shows_control_characters_escaped() {
    let dir = repo(&[("esc.txt", "\x1b[2Jcleared\rover\ttab\n")]);
    let a = apply(
        dir.path(),
        &["-"],
        r#"[{"op": "read", "paths": ["esc.txt"]}]"#,
    )
    .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        text.contains("[task-1:read] \\u{1b}[2Jcleared\\u{d}over\ttab\n"),
        "{text:?}"
    );
    // A failed command's last lines, quoted in the details, too.
    let a = apply(
        dir.path(),
        &["-"],
        "<---RUN--->\ncat esc.txt missing.txt\n<---END--->\n",
    )
    .code(1);
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(text.contains("exec_failed"), "{text}");
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert!(text.contains("| \\u{1b}[2Jcleared"), "{text:?}");
}

/// The sum of the outputs of a JSON report's tasks, in bytes.
fn output_bytes(report: &serde_json::Value) -> usize {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["output"].as_str().map_or(0, str::len))
        .sum()
}

/// Issue 28 point 5: the whole reply's output is bounded, READ and RUN
/// together, not each operation's: five READs of a file larger than the
/// limit show the limit once, then say that the reply's output is spent,
/// and a RUN after them shows nothing more.
#[test]
fn the_whole_replys_output_is_bounded_read_and_run_together() {
    let line = format!("{}\n", "x".repeat(99));
    let dir = repo(&[("big.txt", &line.repeat(100))]);
    git(dir.path(), &["config", "clada.maxOutput", "4KB"]);
    let read = r#"{"op": "read", "paths": ["big.txt"]}"#;
    let reply = format!(
        "[{}, {{\"op\": \"run\", \"cmd\": \"cat big.txt\"}}]",
        [read; 5].join(", ")
    );
    let a = apply(dir.path(), &["--format", "json", "-"], &reply).code(1);
    let report = json(&a);
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks[0]["status"], "SUCCESS", "{report}");
    assert_eq!(tasks[0]["output"].as_str().unwrap().len(), 4000);
    for task in &tasks[1..5] {
        assert_eq!(task["error_type"], "output_limit", "{task}");
    }
    let shown = output_bytes(&report);
    // What is left after the first READ (96 bytes) goes to the RUN, and
    // its cut adds the marker line.
    assert_eq!(
        tasks[5]["output"].as_str().unwrap().len(),
        96 + 20,
        "{report}"
    );
    assert!(shown <= 4096 + "\n[output truncated]\n".len(), "{shown}");
    // The reply's limit can be set apart from each operation's.
    git(dir.path(), &["config", "clada.maxReplyOutput", "9000"]);
    let a = apply(dir.path(), &["--format", "json", "-"], &reply).code(1);
    let report = json(&a);
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks[1]["output"].as_str().unwrap().len(), 4000);
    assert_eq!(tasks[2]["output"].as_str().unwrap().len(), 1000);
    assert_eq!(tasks[3]["error_type"], "output_limit", "{report}");
}

/// Issue 28 point 5: the team's `.clada/config.toml` may lower a limit
/// and never raise it above the default (git config, which is the
/// user's, still may).
#[test]
fn a_team_file_lowers_limits_and_never_raises_them() {
    let line = format!("{}\n", "y".repeat(1023));
    let big = line.repeat(11 * 1024);
    let dir = repo(&[
        ("big.txt", &big),
        (
            ".clada/config.toml",
            "maxOutput = \"1GB\"\nmaxReplyOutput = \"1GB\"\n",
        ),
    ]);
    let reply = r#"[{"op": "read", "paths": ["big.txt"]}]"#;
    let a = apply(dir.path(), &["--format", "json", "-"], reply).success();
    let shown = output_bytes(&json(&a));
    assert_eq!(shown, 10 << 20, "the team file raised maxOutput");
    std::fs::write(
        dir.path().join(".clada/config.toml"),
        "maxOutput = \"2KB\"\n",
    )
    .unwrap();
    git(dir.path(), &["add", "-A"]);
    commit(dir.path(), &["-q", "-m", "lower"]);
    let a = apply(dir.path(), &["--format", "json", "-"], reply).success();
    assert_eq!(output_bytes(&json(&a)), 2048);
    git(dir.path(), &["config", "clada.maxOutput", "11MB"]);
    let a = apply(dir.path(), &["--format", "json", "-"], reply).success();
    assert_eq!(output_bytes(&json(&a)), 11 << 20);
}
