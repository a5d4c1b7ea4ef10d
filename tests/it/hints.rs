//! What a failing reply is told (issue 29): hints in the reply's own
//! words (a wrong path gets the closest existing ones, and every hint
//! names what to write in the syntax the reply is written in, never
//! another syntax's blocks), and messages without noise or contradiction.

use crate::common::{apply, repo};

const STORE: &str = "import os\nimport sys\n\n\ndef save():\n    return 1\n";
const APP: &str = "def main():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    return a + b + c + d + e\n";

/// The repository every reply of the pass is applied to.
fn files() -> tempfile::TempDir {
    repo(&[
        ("todo/store.py", STORE),
        ("dup.txt", "x = 1\nkeep\nx = 1\n"),
        ("app.py", APP),
    ])
}

/// One failing reply per syntax: an edit of `todo/storage.py` (which does
/// not exist), an edit whose text is in `dup.txt` twice, (where the
/// syntax writes whole files) a whole-file write that leaves code out,
/// and (CML, JSON) a command line with a pipe.
/// With the words each must hear.
const PASS: &[(&str, &str, &[&str])] = &[
    (
        "csl",
        "<---SEARCH file=\"todo/storage.py\"--->\nimport os\n<---REPLACE--->\nimport json\n<---END--->\n\
         <---SEARCH file=\"dup.txt\"--->\nx = 1\n<---REPLACE--->\nx = 2\n<---END--->\n\
         <---WRITE file=\"app.py\"--->\ndef main():\n    a = 1\n    # ... rest of the function unchanged\n<---END--->\n",
        &[
            "or create the file with a WRITE block",
            "or set count=\"2\" to replace every one of them",
            "change only the part that differs with a SEARCH block",
        ],
    ),
    (
        "cml",
        "<edit path=\"todo/storage.py\">\n<search><![CDATA[import os]]></search>\n<replace><![CDATA[import json]]></replace>\n</edit>\n\
         <edit path=\"dup.txt\">\n<search><![CDATA[x = 1]]></search>\n<replace><![CDATA[x = 2]]></replace>\n</edit>\n\
         <write path=\"app.py\"><![CDATA[def main():\n    a = 1\n    # ... rest of the function unchanged\n]]></write>\n\
         <run><![CDATA[ls | wc -l]]></run>\n",
        &[
            "or create the file with a <write path=\"…\"> element",
            "or set count=\"2\" on the <edit> to replace every one of them",
            "change only the part that differs with an <edit path=\"…\"> element",
        ],
    ),
    (
        "sham",
        "#!SHAM [@three-char-SHA-256: a1a]\naction = \"file_replace_text\"\npath = \"todo/storage.py\"\nold_text = \"import os\"\nnew_text = \"import json\"\n#!END_SHAM_a1a\n\
         #!SHAM [@three-char-SHA-256: b2b]\naction = \"file_replace_text\"\npath = \"dup.txt\"\nold_text = \"x = 1\"\nnew_text = \"x = 2\"\n#!END_SHAM_b2b\n\
         #!SHAM [@three-char-SHA-256: c3c]\naction = \"file_write\"\npath = \"app.py\"\ncontent = <<'EOT_SHAM_c3c'\ndef main():\n    a = 1\n    # ... rest of the function unchanged\nEOT_SHAM_c3c\n#!END_SHAM_c3c\n",
        &[
            "or create the file with a file_write action",
            "or use action = \"file_replace_all_text\" with count = \"2\" to replace every one of them",
            "change only the part that differs with a file_replace_text action",
        ],
    ),
    (
        "telt",
        "#!telt [3-char SHA: a1a]\n=== FILE_REPLACE_TEXT ===\n--PATH a1a--\ntodo/storage.py\n--OLD_TEXT a1a--\nimport os\n--NEW_TEXT a1a--\nimport json\n--END a1a--\n\
         #!telt [3-char SHA: b2b]\n=== FILE_REPLACE_TEXT ===\n--PATH b2b--\ndup.txt\n--OLD_TEXT b2b--\nx = 1\n--NEW_TEXT b2b--\nx = 2\n--END b2b--\n\
         #!telt [3-char SHA: c3c]\n=== FILE_WRITE ===\n--PATH c3c--\napp.py\n--CONTENT c3c--\ndef main():\n    a = 1\n    # ... rest of the function unchanged\n--END c3c--\n",
        &[
            "or create the file with a FILE_WRITE command",
            "or use === FILE_REPLACE_ALL_TEXT === with a COUNT parameter of 2 to replace every one of them",
            "change only the part that differs with a FILE_REPLACE_TEXT command",
        ],
    ),
    (
        "replacer",
        "<<<FILE>>>\ntodo/storage.py\n<<<SEARCH>>>\nimport os\n<<<REPLACE>>>\nimport json\n<<<END>>>\n\
         <<<FILE>>>\ndup.txt\n<<<SEARCH>>>\nx = 1\n<<<REPLACE>>>\nx = 2\n<<<END>>>\n\
         <<<FILE>>>\napp.py\n<<<OVERWRITE>>>\ndef main():\n    a = 1\n    # ... rest of the function unchanged\n<<<END>>>\n",
        &[
            "or create the file with a <<<OVERWRITE>>> block",
            "include more of the surrounding lines so that the pattern matches exactly where you mean\n",
            "change only the part that differs with a <<<SEARCH>>> block",
        ],
    ),
    (
        "aider",
        "todo/storage.py\n```python\n<<<<<<< SEARCH\nimport os\n=======\nimport json\n>>>>>>> REPLACE\n```\n\n\
         dup.txt\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n",
        &["or create the file with a block with an empty SEARCH part"],
    ),
    (
        "patch",
        "*** Begin Patch\n*** Update File: todo/storage.py\n@@\n-import os\n+import json\n import sys\n\
         *** Update File: dup.txt\n@@\n-x = 1\n+x = 2\n*** End Patch\n",
        &["or create the file with an *** Add File: section"],
    ),
    (
        "diff",
        "--- a/todo/storage.py\n+++ b/todo/storage.py\n@@ -1,2 +1,2 @@\n-import os\n+import json\n import sys\n\
         --- a/dup.txt\n+++ b/dup.txt\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        &["or create the file with a diff from /dev/null"],
    ),
    (
        "json",
        "[{\"op\": \"search\", \"path\": \"todo/storage.py\", \"search\": \"import os\", \"replace\": \"import json\"},\n\
          {\"op\": \"search\", \"path\": \"dup.txt\", \"search\": \"x = 1\", \"replace\": \"x = 2\"},\n\
          {\"op\": \"write\", \"path\": \"app.py\", \"content\": \"def main():\\n    a = 1\\n    # ... rest of the function unchanged\\n\"},\n\
          {\"op\": \"run\", \"cmd\": \"ls | wc -l\"}]\n",
        &[
            "or create the file with a {\"op\": \"write\"} operation",
            "or set \"count\": 2 to replace every one of them",
            "change only the part that differs with a {\"op\": \"search\"} operation",
        ],
    ),
];

/// Words that only a hint to a reply of that syntax may use.
const OWN_WORDS: &[(&str, &[&str])] = &[
    (
        "csl",
        &["WRITE block", "SEARCH block", "TO text", "with WRITE"],
    ),
    ("cml", &["<write", "<edit", "<search-end>"]),
    ("sham", &["file_write", "file_replace"]),
    ("telt", &["FILE_WRITE", "FILE_REPLACE"]),
    ("replacer", &["<<<OVERWRITE>>>", "<<<SEARCH>>>"]),
    ("aider", &["SEARCH/REPLACE", "empty SEARCH"]),
    ("patch", &["*** Add File", "*** Update File"]),
    ("diff", &["/dev/null"]),
    ("json", &["{\"op\"", "\"count\":", "\"overwrite\""]),
];

/// The pass across all syntaxes: each failing reply is read as its syntax,
/// hears how to fix it in that syntax, gets `todo/store.py` offered for
/// `todo/storage.py`, and never hears another syntax's words (nor CSL's
/// `count="…"` where the syntax has its own, or none).
#[test]
fn every_syntax_hears_hints_in_its_own_words() {
    let dir = files();
    for (syntax, reply, expected) in PASS {
        let out = apply(dir.path(), &["--dry-run", "-"], reply).code(1);
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let json = crate::common::json(&apply(
            dir.path(),
            &["--dry-run", "--format", "json", "-"],
            reply,
        ));
        assert_eq!(json["syntax"], *syntax, "{text}");
        assert!(
            text.contains("todo/storage.py does not exist\n    did you mean todo/store.py?\n"),
            "{syntax}: {text}"
        );
        for words in *expected {
            assert!(text.contains(words), "{syntax}: no {words:?} in\n{text}");
        }
        for (other, words) in OWN_WORDS {
            if other == syntax {
                continue;
            }
            for word in *words {
                assert!(
                    !text.contains(word),
                    "{syntax}: {other}'s {word:?} in\n{text}"
                );
            }
        }
        if !["csl", "cml"].contains(syntax) {
            assert!(!text.contains("count=\""), "{syntax}: {text}");
        }
    }
}

/// A delete or move of a path that does not exist gets the closest ones
/// too; a file in another directory is found by its name.
#[test]
fn a_missing_path_to_delete_or_move_gets_the_closest_existing_ones() {
    let dir = files();
    let reply = "[{\"op\": \"delete\", \"path\": \"todo/Store.py\"},\n\
                 {\"op\": \"move\", \"from\": \"src/store.py\", \"to\": \"b.py\"}]\n";
    let out = apply(dir.path(), &["--dry-run", "-"], reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(
            "todo/Store.py does not exist; nothing to delete\n    did you mean todo/store.py?\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "src/store.py does not exist; nothing to move\n    did you mean todo/store.py?\n"
        ),
        "{text}"
    );
}

/// A block of another syntax is named by what it is (a CSL WRITE is a
/// WRITE, not a TASKS), with the right article for the reply's syntax.
#[test]
fn a_dropped_csl_write_is_labelled_write_in_an_aider_reply() {
    let dir = files();
    let reply = "todo/store.py\n```python\n<<<<<<< SEARCH\nimport os\n=======\nimport json\n>>>>>>> REPLACE\n```\n\n\
                 <---WRITE file=\"todo/new.py\"--->\nx = 1\n<---END--->\n";
    let out = apply(dir.path(), &["--dry-run", "-"], reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("[task-2] SKIP: WRITE a CSL block - "),
        "{text}"
    );
    assert!(
        text.contains("line 10: a CSL block in an aider SEARCH/REPLACE reply is not applied"),
        "{text}"
    );
}

/// A SEARCH whose lines are all indented by one offset less than the file
/// has them is refused in the exact mode, with a hint that names `--match
/// whitespace`, which applies it re-indented (as an aider block is).
#[test]
fn a_search_indented_by_one_offset_names_match_whitespace() {
    let dir = repo(&[(
        "cls.py",
        "class Store:\n    def save(self):\n        x = 1\n        return x\n",
    )]);
    let reply = "<---SEARCH file=\"cls.py\"--->\ndef save(self):\n    x = 1\n    return x\n<---REPLACE--->\ndef save(self):\n    x = 2\n    return x\n<---END--->\n";
    let out = apply(dir.path(), &["-"], reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(
            "\n    --match whitespace would apply it at lines 2-4: matched only with every line's indentation shifted by 4 columns"
        ),
        "{text}"
    );
    // What the hint promises.
    apply(dir.path(), &["--match", "whitespace", "-"], reply).success();
    assert_eq!(
        crate::common::read(dir.path(), "cls.py"),
        "class Store:\n    def save(self):\n        x = 2\n        return x\n"
    );
}

/// A WRITE whose END is missing is skipped with its line first, in one
/// short sentence (it used to run to 60 words with the line at the end).
#[test]
fn a_missing_end_is_said_line_first_in_one_sentence() {
    let dir = files();
    let reply = "<---WRITE file=\"new.py\"--->\nx = 1\n<---SEARCH file=\"app.py\"--->\n    a = 1\n<---REPLACE--->\n    a = 2\n<---END--->\n";
    let out = apply(dir.path(), &["-"], reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("[task-1] SKIP: WRITE new.py - "))
        .unwrap_or_else(|| panic!("{text}"));
    let reason = line.strip_prefix("[task-1] SKIP: WRITE new.py - ").unwrap();
    assert!(reason.starts_with("line 3: "), "{reason}");
    assert!(
        reason.contains("did you forget <---END---> above it?"),
        "{reason}"
    );
    assert!(reason.split_whitespace().count() <= 35, "{reason}");
    assert!(!reason.contains("(line "), "{reason}");
}

/// A failed `--verify`: its output once (streamed, or buffered), the
/// counts of the reply's tasks never read as what was applied, and the
/// rejected result named with the command `status` names too.
#[test]
fn a_failed_verify_says_its_output_once_and_names_git_clada_show() {
    let dir = repo(&[("a.txt", "a\n")]);
    let edit = "<---WRITE file=\"a.txt\"--->\nbroken\n<---END--->\n";
    let verify = "grep -c fine a.txt";
    for mode in ["stream", "buffer"] {
        let out = apply(
            dir.path(),
            &["--verify", verify, "--output-mode", mode, "-"],
            edit,
        )
        .code(1);
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        // grep -c prints the count, 0, once.
        assert_eq!(
            text.lines()
                .filter(|l| l.ends_with(" 0") || *l == "    | 0")
                .count(),
            1,
            "{mode}: {text}"
        );
        let summary = text.lines().last().unwrap();
        assert!(
            summary.starts_with("clada: not applied: verify_failed"),
            "{summary}"
        );
        assert!(
            !summary.contains("(exec_failed) (1 succeeded"),
            "{mode}: {summary}"
        );
        assert!(
            summary.contains("the reply's tasks ran (1 succeeded, 0 failed, 0 skipped)"),
            "{summary}"
        );
        assert!(
            summary.contains("(inspect it with: git clada show refs/clada/rejected/"),
            "{summary}"
        );
    }
    // Silent: the output was not shown, so its last lines are.
    let out = apply(
        dir.path(),
        &["--verify", verify, "--output-mode", "silent", "-"],
        edit,
    )
    .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("\n    | 0\n"), "{text}");
    let status = crate::common::clada(dir.path(), dir.path())
        .arg("status")
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.contains("git clada show"), "{status}");
}

/// A JSON reply that does not parse is placed once, by the diagnostic's
/// own position in the reply (serde counted lines in the fenced document:
/// `line 2 column 50` beside `3:50`).
#[test]
fn a_json_error_is_placed_once_by_the_reply_s_own_lines() {
    let dir = files();
    let reply =
        "```json\n[\n  {\"op\": \"write\", \"path\": \"a.txt\", \"content\": \"x\\q\"}\n]\n```\n";
    let out = apply(dir.path(), &["--format", "json", "-"], reply).code(2);
    let v = crate::common::json(&out);
    let d = &v["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(50)),
        "{v}"
    );
    assert_eq!(
        d["message"], "the JSON does not parse: invalid escape",
        "{v}"
    );
}

/// The closest region's diff shows a line the pattern has and the file
/// does not as that line alone: not its neighbours as changed (the last
/// pattern line, without its line end, never equalled the file's), nor a
/// line of the file past the region as added.
#[test]
fn the_closest_diff_of_an_inserted_line_shows_that_line_alone() {
    let dir = files();
    for (pattern, region) in [
        ("import os\nimport json\nimport sys\n", "lines 1-2"),
        ("import json\nimport os\nimport sys\n", "lines 1-2"),
    ] {
        let reply = format!(
            "<---SEARCH file=\"todo/store.py\"--->\n{pattern}<---REPLACE--->\nx\n<---END--->\n"
        );
        let out = apply(dir.path(), &["--error-detail", "full", "-"], &reply).code(1);
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let diff: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("      -") || l.starts_with("      +"))
            .collect();
        assert_eq!(diff, ["      -      import json"], "{text}");
        assert!(
            text.contains(&format!("closest to your pattern: {region} ")),
            "{text}"
        );
    }
}

/// A SHAM replace-all that finds nothing is not told CSL's `count="all"`.
#[test]
fn a_sham_replace_all_that_finds_nothing_hears_no_csl_attribute() {
    let dir = files();
    let reply = "#!SHAM [@three-char-SHA-256: a1a]\naction = \"file_replace_all_text\"\npath = \"todo/store.py\"\nold_text = \"nothing here\"\nnew_text = \"x\"\n#!END_SHAM_a1a\n";
    let out = apply(dir.path(), &["-"], reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("found no match, expected at least 1"),
        "{text}"
    );
    assert!(!text.contains("count="), "{text}");
}

/// Without git, a reply none of whose tasks succeeded is not said to be
/// "applied", and an --atomic rejection says its counts are the tasks'.
#[test]
fn without_git_the_summary_never_says_applied_for_nothing() {
    let dir = crate::common::scratch();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let miss = "<---SEARCH file=\"a.txt\"--->\nnot there\n<---REPLACE--->\ny\n<---END--->\n";
    let run = |args: &[&str], reply: &str| {
        let out = crate::common::clada(dir.path(), dir.path())
            .arg("apply")
            .args(args)
            .write_stdin(reply.to_string())
            .assert()
            .code(1);
        crate::common::json(&out)["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let message = run(&["--no-git", "--format", "json", "-"], miss);
    assert!(message.starts_with("nothing applied in "), "{message}");
    let some = format!("<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n{miss}");
    let message = run(&["--no-git", "--atomic", "--format", "json", "-"], &some);
    assert!(
        message.ends_with("; the reply's tasks ran (1 succeeded, 1 failed, 0 skipped)"),
        "{message}"
    );
}
