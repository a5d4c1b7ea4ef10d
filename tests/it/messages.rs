//! What clada says, held as it is said: the report's typed JSON fields,
//! and the wording of messages that used to mislead (issue 17). Text is
//! compared as insta snapshots; JSON as values.

use serde_json::json;

use crate::common::{apply, clada, json, repo};

/// A failed SEARCH's details are typed in JSON: the lines it matched, the
/// closest region (path, first and last line, similarity, text) and the
/// line where the replacement already stands.
#[test]
fn json_report_fields_are_typed() {
    let dir = repo(&[("a.txt", "one\ntwo\nthree\ntwo\n")]);
    let reply = "\
<---SEARCH file=\"a.txt\"--->
three
<---REPLACE--->
THREE
<---END--->
<---SEARCH file=\"a.txt\"--->
two
<---REPLACE--->
2
<---END--->
<---SEARCH file=\"a.txt\"--->
one
  two
<---REPLACE--->
y
<---END--->
<---SEARCH file=\"a.txt\"--->
gone
<---REPLACE--->
THREE
<---END--->
";
    let v = json(&apply(dir.path(), &["--format", "json", "-"], reply).code(1));
    let tasks = &v["tasks"];
    assert_eq!(tasks[0]["lines"], json!([3]));
    assert_eq!(tasks[1]["lines"], json!([2, 4]));
    assert_eq!(
        tasks[2]["closest"],
        json!({"path": "a.txt", "lines": [1, 2], "similarity": 0.8, "text": "one\ntwo"})
    );
    assert_eq!(tasks[2].get("already_present"), None);
    assert_eq!(tasks[3]["already_present"], 3);
    assert_eq!(tasks[3].get("lines"), None);
}

/// Standard error of `git clada ARGS` in `dir`, for snapshots.
fn stderr_of(dir: &std::path::Path, args: &[&str]) -> String {
    let out = clada(dir, dir).args(args).output().expect("run git-clada");
    String::from_utf8(out.stderr).expect("UTF-8")
}

/// `apply` run on a terminal with no reply names `apply` in its hint, not
/// `parse`.
#[test]
fn apply_without_a_reply_on_a_terminal_names_apply() {
    let dir = repo(&[("a.txt", "one\n")]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_git-clada"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(dir.path())
        .arg("apply");
    let out = crate::pty::run(cmd);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(out.text, @r"
    error: no reply given
    hint: name a file (git clada apply reply.md) or pipe the reply in (… | git clada apply -)
    ");
}

/// Errors say what was asked and what is wrong, in git's words: no gix
/// parser steps, no `(os error 2)`.
#[test]
fn errors_name_what_was_asked_without_internals() {
    let dir = repo(&[("a.txt", "one\n")]);
    let said = [
        stderr_of(dir.path(), &["log", "HEAD~5"]),
        stderr_of(dir.path(), &["show", "HEAD^"]),
        stderr_of(dir.path(), &["show", "nope"]),
        stderr_of(dir.path(), &["apply", "--from-commit", "HEAD^{tree}"]),
        stderr_of(dir.path(), &["apply", "missing.md"]),
    ]
    .concat();
    insta::assert_snapshot!("errors_in_words", said);
}

/// `partial`: some task failed and the rest moved the branch; `failed`:
/// some task failed and nothing was applied. Both exit 1.
#[test]
fn partial_when_the_branch_moved_failed_when_nothing_was_applied() {
    let dir = repo(&[("a.txt", "old\n")]);
    let missing = "<---SEARCH file=\"a.txt\"--->\nmissing\n<---REPLACE--->\nx\n<---END--->\n";
    let some = format!("<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n{missing}");
    let v = json(&apply(dir.path(), &["--format", "json", "-"], &some).code(1));
    assert_eq!(
        (&v["status"], &v["exit_code"]),
        (&json!("partial"), &json!(1))
    );
    assert!(v["post"].is_string());
    let v = json(&apply(dir.path(), &["--format", "json", "-"], missing).code(1));
    assert_eq!(
        (&v["status"], &v["exit_code"]),
        (&json!("failed"), &json!(1))
    );
    assert!(v["post"].is_null());
    let other = format!("<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n{missing}");
    let text = apply(dir.path(), &["-"], &other).code(1);
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(
        text.contains("clada: partly applied (1 succeeded, 1 failed, 0 skipped) on main"),
        "{text}"
    );
}

/// Stepped back, `apply` points to `step-forward --all` (which restores
/// the saved work), not to `git switch`, whose advice would only lead to
/// the next refusal.
#[test]
fn applying_while_stepped_back_says_step_forward_first() {
    let dir = repo(&[("a.txt", "one\n")]);
    std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
    crate::common::commit(dir.path(), &["-q", "-am", "two"]);
    clada(dir.path(), dir.path())
        .args(["step-back", "1"])
        .assert()
        .success();
    std::fs::write(
        dir.path().join("reply.md"),
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
    )
    .unwrap();
    let said = stderr_of(dir.path(), &["apply", "reply.md"]);
    insta::assert_snapshot!(said, @r"
    error: HEAD is detached: `git clada apply` works on a branch
    hint: you stepped back from main; return with `git clada step-forward --all` (it restores your saved work), then run `git clada apply`
    ");
}

/// Standard output of `git clada ARGS` in `dir`.
fn stdout_of(dir: &std::path::Path, args: &[&str]) -> String {
    let out = clada(dir, dir)
        .env("GIT_AUTHOR_DATE", crate::common::DATE)
        .env("GIT_COMMITTER_DATE", crate::common::DATE)
        .args(args)
        .output()
        .expect("run git-clada");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `text` with every short or full commit id as `<id>`, so that snapshots
/// do not depend on ids.
fn redact(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let is_id = (word.len() == 7 || word.len() == 40)
            && word
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        out.push_str(if is_id { "<id>" } else { word });
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `status`, `undo` and `log` say what the next command will do: no undo
/// promised on a dirty tree, the squash at the tip named, `undo 99` about
/// the applies there are, `log -n 0` silent, counts in words.
#[test]
fn history_commands_say_what_the_next_command_will_do() {
    let dir = repo(&[("a.txt", "one\n")]);
    let d = dir.path();
    let write = |name: &str| format!("<---WRITE file=\"{name}\"--->\n{name}\n<---END--->\n");
    std::fs::write(d.join("a.txt"), "mine\n").unwrap();
    apply(d, &["-"], &write("b.txt")).success();
    let mut said = String::new();
    said += &stderr_of(d, &["undo", "99"]);
    said += &stdout_of(d, &["status"]);
    std::fs::write(d.join("a.txt"), "mine, changed\n").unwrap();
    said += "--- dirty\n";
    said += &stdout_of(d, &["status"]);
    std::fs::write(d.join("a.txt"), "mine\n").unwrap();
    apply(d, &["-"], &write("c.txt")).success();
    said += "--- log -n 0\n";
    said += &stdout_of(d, &["log", "-n", "0"]);
    said += "--- squashed\n";
    said += &stdout_of(d, &["squash", "--all"]);
    said += &stdout_of(d, &["status"]);
    insta::assert_snapshot!("history_wording", redact(&said));
}

/// A stream prints each operation of a TASKS block as it finishes, so a
/// RUN's output comes after the line of the operation before it.
#[test]
fn a_blocks_lines_and_output_stream_in_order() {
    let dir = repo(&[("a.txt", "one\n")]);
    let d = dir.path();
    clada(d, d).args(["allow", "echo hello"]).assert().success();
    let reply = "<---TASKS--->\n<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n\
                 <---RUN--->\necho hello\n<---END--->\n<---END--->\n";
    let out = apply(d, &["-"], reply).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    insta::assert_snapshot!(redact(&text), @r"
    [task-1.1] SUCCESS: WRITE b.txt - created (1 line)
    [task-1.2:exec] hello
    [task-1.2] SUCCESS: RUN echo hello - ran 1 command
    [task-1] SUCCESS: TASKS - 2 operations applied
    clada: applied (1 succeeded, 0 failed, 0 skipped) on main: pre none (clean tree), post <id>
    ");
}

/// `--dry-run` prints the reply's changes as a patch `git apply` takes
/// against the working tree as it is (new, empty, deleted, renamed and
/// changed files), and names the user's own
/// uncommitted work apart instead of mixing it into the patch.
#[test]
fn a_dry_run_is_a_patch_git_apply_takes_and_names_your_work_apart() {
    let dir = repo(&[
        ("a.txt", "one\ntwo\nthree\n"),
        ("old.txt", "x\n"),
        ("mv.txt", "moved\n"),
        ("s.sh", "#!/bin/sh\n"),
    ]);
    let d = dir.path();
    std::fs::write(d.join("a.txt"), "one\ntwo\nthree\nmine\n").unwrap();
    std::fs::write(d.join("u.txt"), "untracked\n").unwrap();
    let reply = r##"[
  {"op": "write", "path": "n.txt", "content": "new\n"},
  {"op": "write", "path": "e.txt", "content": ""},
  {"op": "search", "path": "a.txt", "search": "two", "replace": "TWO"},
  {"op": "delete", "path": "old.txt"},
  {"op": "move", "from": "mv.txt", "to": "moved.txt"},
  {"op": "write", "path": "s.sh", "content": "#!/bin/sh\necho hi\n"}
]"##;
    let out = apply(d, &["--dry-run", "-"], reply).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    insta::assert_snapshot!("dry_run_patch", redact(&text));
    let check = |patch: &str| git_apply_check(d, patch);
    // The whole text report: git apply skips the lines around the patch.
    check(&text);
    let v = json(&apply(d, &["--dry-run", "--format", "json", "-"], reply).success());
    assert_eq!(v["your_work"], json!(["a.txt", "u.txt"]));
    check(v["diff"].as_str().unwrap());
    // A dry run that changes nothing still names your work.
    let idle = r#"[{"op": "search", "path": "a.txt", "search": "one", "replace": "one"}]"#;
    let v = json(&apply(d, &["--dry-run", "--format", "json", "-"], idle));
    assert_eq!(v["your_work"], json!(["a.txt", "u.txt"]), "{v}");
}

/// The summary counts a TASKS block as one task and says what its SKIP
/// lines are; a commit's summary of many changes ends "and N more
/// changes", once.
#[test]
fn summaries_agree_with_the_lines_above_them() {
    let dir = repo(&[("a.txt", "one\n")]);
    let d = dir.path();
    let write = |name: &str| format!("<---WRITE file=\"{name}\"--->\n{name}\n<---END--->\n");
    let reply = format!(
        "{}<---TASKS--->\n{}<---SEARCH file=\"a.txt\"--->\nnope\n<---REPLACE--->\nx\n<---END--->\n{}<---END--->\n",
        write("x.txt"),
        write("b.txt"),
        write("c.txt")
    );
    let out = apply(d, &["-"], &reply).code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("[task-2.3] SKIP: WRITE c.txt - not run: task 2.2 failed"),
        "{text}"
    );
    assert!(
        text.contains("clada: partly applied (1 succeeded, 1 failed, 0 skipped; 1 operation of a failed block not run) on main"),
        "{text}"
    );
    let many: String = (1..=9)
        .map(|i| write(&format!("file-number-{i}.txt")))
        .collect();
    apply(d, &["-"], &many).success();
    let subject = crate::common::out(d, &["log", "-1", "--format=%s"]);
    insta::assert_snapshot!(subject, @"[clada:post] create file-number-1.txt, create file-number-2.txt and 7 more changes");
    // A squash's subject does not add "and 1 more" to that "and 7 more".
    clada(d, d).args(["squash", "--all"]).assert().success();
    let subject = crate::common::out(d, &["log", "-1", "--format=%s"]);
    insta::assert_snapshot!(subject, @"[clada:squash] create x.txt (+1 more apply)");
}

/// `git apply --check` of `patch` in `dir` succeeds.
fn git_apply_check(dir: &std::path::Path, patch: &str) {
    use std::io::Write as _;
    let mut child = crate::common::git_command(dir, &["apply", "--check", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run git apply");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(patch.as_bytes())
        .unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "git apply --check refused it: {}\n{patch}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// The text report of a dry run of `command` (approved first, in the git
/// dir) in a repository of `files`, checked with `git apply --check`.
fn dry_run_of_command(files: &[(&str, &str)], command: &str) -> String {
    let dir = repo(files);
    let d = dir.path();
    clada(d, d).args(["allow", command]).assert().success();
    let run = format!("<---RUN--->\n{command}\n<---END--->\n");
    let out = apply(d, &["--dry-run", "-"], &run).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    git_apply_check(d, &text);
    text
}

/// A command that only changes a file's mode gives `old mode`/`new mode`
/// in a dry run's patch, which `git apply` takes.
#[test]
fn a_dry_runs_mode_change_is_a_patch_git_apply_takes() {
    let text = dry_run_of_command(&[("s.sh", "#!/bin/sh\n")], "chmod +x s.sh");
    assert!(
        text.contains("diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n"),
        "{text}"
    );
}

/// A file that a command turns into a symbolic link is a deletion and a
/// creation in the patch, as git writes it (`git apply` refuses a mode
/// change between a file and a link).
#[test]
fn a_dry_runs_file_turned_link_is_a_patch_git_apply_takes() {
    let files = [("a.txt", "one\n"), ("target", "two\n")];
    let text = dry_run_of_command(&files, "ln -sf target a.txt");
    assert!(text.contains("deleted file mode 100644"), "{text}");
    assert!(text.contains("new file mode 120000"), "{text}");
}

/// A name git quotes in a patch (here a `"`) is quoted in the dry run's
/// headers too, so that `git apply` reads the name it means.
#[test]
fn a_dry_runs_quoted_names_are_a_patch_git_apply_takes() {
    let dir = repo(&[("a.txt", "one\n")]);
    let d = dir.path();
    let reply = r#"[{"op": "write", "path": "say \"hi\".txt", "content": "hi\n"}]"#;
    let out = apply(d, &["--dry-run", "-"], reply).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(r#"diff --git "a/say \"hi\".txt" "b/say \"hi\".txt""#),
        "{text}"
    );
    git_apply_check(d, &text);
}
