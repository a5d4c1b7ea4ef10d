//! Fidelity on real code (issue 25), a sample: commits of each corpus
//! chosen to cover its tags (noeol, crlf, mode, rename, delete, add, tabs,
//! large) and a few of this repository's own history, through every
//! scenario of the harness (`tests/fidelity/`, doc/fidelity.md). No
//! crash and no WRONG anywhere, and every expressible case exact on the
//! scenarios a model writes undamaged. The whole corpus runs as the
//! benchmark `bench/fidelity.sh`.

#[path = "../fidelity/mod.rs"]
mod harness;

use harness::{Class, report, scenario::Format};

/// How many commits of the own history the sample takes.
const OWN: usize = 4;

#[test]
fn real_commits_land_exactly_or_are_refused() {
    if harness::shared_corpus().is_none() {
        println!("fidelity: skipped, ../shared/corpus is absent (CI always has it)");
        return;
    }
    let config =
        harness::Config::from_env(true, false, OWN, "sample").expect("FIDELITY_* variables");
    let run = harness::run(&config, OWN).expect("the harness runs");
    let tables = report::tables(&run.cases, &run.commits, &config.scenarios);
    println!("{tables}");
    for n in &run.notes {
        println!("note: {n}");
    }
    println!(
        "{} cases in {:.1} s",
        run.cases.len(),
        run.wall.as_secs_f64()
    );
    // Exact on every expressible case of the undamaged formats a model
    // writes; nowhere a crash, a WRONG or a reply the harness failed at.
    let must_be_exact = |f: Format| {
        matches!(
            f,
            Format::Diff
                | Format::DiffShift
                | Format::Aider
                | Format::Patch
                | Format::Csl
                | Format::Json
        )
    };
    let failing = report::list(&run.cases, &run.out_dir, |c| match c.outcome.class {
        Class::Wrong | Class::Crash | Class::Bug => true,
        Class::Refused => c.scenario.damage.is_none() && must_be_exact(c.scenario.format),
        Class::Exact | Class::Na => false,
    });
    assert!(
        failing.is_empty(),
        "{tables}\nfailing cases (records in {}):\n{failing}",
        run.out_dir.join("cases.jsonl").display()
    );
}

/// The harness is the oracle, so its own parts are checked on small
/// hermetic repositories: a commit made here, its `git diff`, and what
/// the harness makes of them.
mod oracle {
    use std::path::Path;

    use super::harness::blocks::{self, FileOp};
    use super::harness::classify::{self, Node};
    use super::harness::corpus::Entry;
    use super::harness::{gitdiff, patchgen, text};
    use crate::common::{git, git_command, scratch};

    /// A commit from `before` to `after` (path, content, executable),
    /// laid out as a corpus entry.
    fn entry(dir: &Path, before: &[(&str, &str, bool)], after: &[(&str, &str, bool)]) -> Entry {
        use std::os::unix::fs::PermissionsExt;
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        let write = |root: &Path, files: &[(&str, &str, bool)]| {
            for (path, content, exec) in files {
                let p = root.join(path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, content).unwrap();
                let mode = if *exec { 0o755 } else { 0o644 };
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        };
        let commit = |msg: &str| {
            git(&repo, &["add", "-A"]);
            git(
                &repo,
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-q",
                    "-m",
                    msg,
                ],
            );
        };
        write(&repo, before);
        commit("before");
        for (path, ..) in before {
            std::fs::remove_file(repo.join(path)).unwrap();
        }
        write(&repo, after);
        commit("after");
        let diff = git_command(
            &repo,
            &["diff", "--binary", "-M", "--full-index", "HEAD~", "HEAD"],
        )
        .output()
        .unwrap()
        .stdout;
        let e = dir.join("entry");
        write(&e.join("before"), before);
        write(&e.join("after"), after);
        std::fs::create_dir_all(e.join("before")).unwrap();
        std::fs::create_dir_all(e.join("after")).unwrap();
        std::fs::write(e.join("diff.patch"), &diff).unwrap();
        let sections = gitdiff::parse(&diff).expect("the harness reads git's diff");
        assert_eq!(
            gitdiff::render(&sections),
            diff,
            "printed back byte for byte"
        );
        Entry {
            corpus: "test".into(),
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            dir: e,
            tags: Vec::new(),
            sections,
        }
    }

    #[test]
    fn the_diff_reader_takes_quoted_paths_renames_modes_and_missing_newlines() {
        let dir = scratch();
        let body = "one\ntwo\nthree\nfour\nfive\nsix\n";
        let e = entry(
            dir.path(),
            &[
                ("caf\u{e9} menu.txt", "a\nb", false),
                ("old/x.sh", body, false),
            ],
            &[
                ("caf\u{e9} menu.txt", "a\nc", false),
                ("new/x.sh", body, true),
            ],
        );
        let s = &e.sections;
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].new_path.as_deref(), Some("caf\u{e9} menu.txt"));
        let last = s[0].hunks[0].lines.last().unwrap();
        assert_eq!(
            (last.tag, last.text.as_slice(), last.eol),
            (b'+', &b"c"[..], false)
        );
        assert_eq!(s[1].status(), 'R');
        assert_eq!(s[1].old_path.as_deref(), Some("old/x.sh"));
        assert_eq!(s[1].new_path.as_deref(), Some("new/x.sh"));
        assert!(s[1].mode_changes());
        // Block formats cannot say a mode: n/a, never a reply without it.
        assert!(matches!(blocks::plan(&e), Err(blocks::Skip::Na(_))));
    }

    /// A file of repeated blocks where git's three lines of context occur
    /// twice: the SEARCH is widened until it is unique, and the Codex hunk
    /// until Codex's first match is git's place.
    #[test]
    fn a_repeated_hunk_is_widened_until_it_lands_only_where_git_put_it() {
        let dir = scratch();
        let copy =
            "fn f() {\n    let x = 1;\n    let y = 2;\n    let z = 3;\n    run(x, y, z);\n}\n";
        let before = format!("// head\n{copy}{copy}{copy}// tail\n");
        let after = before.replacen(
            &format!("}}\n{copy}// tail"),
            &format!("}}\n{}// tail", copy.replace("let y = 2", "let y = 5")),
            1,
        );
        assert_ne!(before, after);
        let e = entry(
            dir.path(),
            &[("f.rs", &before, false)],
            &[("f.rs", &after, false)],
        );
        let ops = blocks::plan(&e).expect("a plan");
        let FileOp::Edit { blocks, .. } = &ops[0] else {
            panic!("an edit: {ops:?}")
        };
        let (search, _) = blocks[0].texts();
        assert_eq!(text::count(&before, &search), 1, "unique: {search:?}");
        assert!(
            search.contains("// tail"),
            "widened to the unique end: {search:?}"
        );
        let files = patchgen::plan(&e).expect("a Codex patch");
        let patch = String::from_utf8(patchgen::render(&files)).unwrap();
        assert!(patch.contains("*** End of File"), "{patch}");
    }

    #[test]
    fn the_verdict_sees_content_modes_links_and_extra_or_missing_files() {
        let file = |b: &[u8], exec| Node::File {
            exec,
            bytes: b.to_vec(),
        };
        let mut want = classify::Tree::new();
        want.insert("a".into(), file(b"x\n", false));
        want.insert("l".into(), Node::Link(b"a".to_vec()));
        assert!(classify::compare(&want, &want).0.is_empty());
        let changed = |f: &dyn Fn(&mut classify::Tree)| {
            let mut got = want.clone();
            f(&mut got);
            classify::compare(&want, &got).0
        };
        assert!(
            changed(&|t| {
                t.insert("a".into(), file(b"x", false));
            })[0]
                .contains("content differs")
        );
        assert!(
            changed(&|t| {
                t.insert("a".into(), file(b"x\n", true));
            })[0]
                .contains("mode")
        );
        assert!(
            changed(&|t| {
                t.insert("l".into(), file(b"a", false));
            })[0]
                .contains("mode")
        );
        assert!(
            changed(&|t| {
                t.insert("b".into(), file(b"", false));
            })[0]
                .contains("should not exist")
        );
        assert!(
            changed(&|t| {
                t.remove("a");
            })[0]
                .contains("missing")
        );
        // HEAD's listing: `mode type oid\tpath`, NUL-terminated.
        let listing = b"100644 blob 587be6b4c3f93f93c489c0111bba5596147a26cb\ta\x00120000 blob 2e65efe2a145dda7ee51d1741299f848e5bf752e\tl\0";
        assert!(
            classify::compare_head(&want, listing).is_empty(),
            "blob ids of x\\n and a"
        );
        let wrong = b"100755 blob 587be6b4c3f93f93c489c0111bba5596147a26cb\ta\0";
        let problems = classify::compare_head(&want, wrong);
        assert!(
            problems.iter().any(|p| p.contains("mode 100755"))
                && problems.iter().any(|p| p.contains("l missing"))
        );
    }

    /// The own history as a corpus: eligible commits become entries like
    /// the archives' (before/, after/, a diff that reads back), and a
    /// shallow clone says so instead of failing.
    #[test]
    fn the_own_history_is_read_like_the_corpus_and_a_shallow_clone_says_so() {
        use super::harness::corpus;
        let dir = scratch();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        for (i, text) in ["one\n", "one\ntwo\n", "one\ntwo\nthree\n"]
            .iter()
            .enumerate()
        {
            std::fs::write(repo.join("f.txt"), text).unwrap();
            git(&repo, &["add", "-A"]);
            let msg = format!("c{i}");
            git(
                &repo,
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-q",
                    "-m",
                    &msg,
                ],
            );
        }
        let out = dir.path().join("full");
        std::fs::create_dir_all(&out).unwrap();
        let (entries, note) = corpus::load_own(&repo, &out, 10);
        assert!(note.is_none(), "{note:?}");
        assert_eq!(entries.len(), 2, "two commits have a parent");
        for e in &entries {
            assert_eq!(e.sections.len(), 1);
            assert!(e.before().join("f.txt").is_file() && e.after().join("f.txt").is_file());
        }
        let shallow = dir.path().join("shallow");
        let url = format!("file://{}", repo.display());
        git(
            dir.path(),
            &["clone", "-q", "--depth", "1", &url, "shallow"],
        );
        let out = dir.path().join("from-shallow");
        std::fs::create_dir_all(&out).unwrap();
        let (entries, note) = corpus::load_own(&shallow, &out, 10);
        assert!(note.is_some_and(|n| n.contains("shallow")));
        assert!(entries.is_empty(), "the one commit's parent is not there");
    }
}
