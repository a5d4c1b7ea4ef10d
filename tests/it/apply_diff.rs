//! End-to-end tests of unified diffs as git prints them: what a diff says
//! beyond lines (missing final newlines, explicit line ends, modes and
//! symbolic links, creations over existing files, a file replaced by a
//! directory) lands exactly, or the section is refused.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{apply, git, json, out, repo};

/// The bytes of `path` in the work tree.
fn bytes(dir: &Path, path: &str) -> Vec<u8> {
    std::fs::read(dir.join(path)).unwrap()
}

/// git's mode of `path` in HEAD (`100644`, `100755`, `120000`).
fn head_mode(dir: &Path, path: &str) -> String {
    let line = out(dir, &["ls-tree", "HEAD", "--", path]);
    line.split(' ').next().unwrap_or_default().to_string()
}

fn report(dir: &Path, reply: &str) -> serde_json::Value {
    json(&apply(
        dir,
        &["--format", "json", "--syntax", "diff", "-"],
        reply,
    ))
}

#[test]
fn a_missing_final_newline_is_kept_gained_and_lost_as_the_diff_says() {
    let dir = repo(&[("gain.txt", "a\nb"), ("lose.txt", "a\nb\n")]);
    let reply = "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n\
diff --git a/gain.txt b/gain.txt\n--- a/gain.txt\n+++ b/gain.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n\
diff --git a/lose.txt b/lose.txt\n--- a/lose.txt\n+++ b/lose.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(bytes(dir.path(), "new.txt"), b"one\ntwo");
    assert_eq!(bytes(dir.path(), "gain.txt"), b"a\nb\n");
    assert_eq!(bytes(dir.path(), "lose.txt"), b"a\nc");
}

#[test]
fn a_diff_that_gives_line_ends_writes_them() {
    let dir = repo(&[("dos.txt", "a\r\nb\r\n"), ("unix.txt", "a\nb\n")]);
    git(dir.path(), &["config", "core.autocrlf", "false"]);
    let reply = "diff --git a/dos.txt b/dos.txt\n--- a/dos.txt\n+++ b/dos.txt\n@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n\
diff --git a/unix.txt b/unix.txt\n--- a/unix.txt\n+++ b/unix.txt\n@@ -1,2 +1,2 @@\n-a\n+a\r\n b\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(bytes(dir.path(), "dos.txt"), b"a\nb\n");
    assert_eq!(bytes(dir.path(), "unix.txt"), b"a\r\nb\n");
    // A context line given with LF does not match a CRLF line when the
    // diff speaks about line ends: refused, the file untouched.
    let dir = repo(&[("dos.txt", "a\r\nb\r\n")]);
    let reply = "--- a/dos.txt\n+++ b/dos.txt\n@@ -1,2 +1,2 @@\n a\n-b\r\n+c\r\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["tasks"][0]["status"], "ERROR", "{v}");
    assert_eq!(bytes(dir.path(), "dos.txt"), b"a\r\nb\r\n");
}

#[test]
fn a_diff_written_with_lf_keeps_a_crlf_file_crlf() {
    let dir = repo(&[("dos.txt", "a\r\nb\r\n")]);
    let reply = "--- a/dos.txt\n+++ b/dos.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(bytes(dir.path(), "dos.txt"), b"a\r\nc\r\n");
}

#[test]
fn mode_lines_set_the_exec_bit_and_make_symbolic_links() {
    let dir = repo(&[
        ("run.sh", "echo hi\n"),
        ("lib/a.txt", "a\n"),
        ("old.sh", "x\n"),
    ]);
    std::os::unix::fs::symlink("lib/a.txt", dir.path().join("gone")).unwrap();
    git(dir.path(), &["add", "gone"]);
    crate::common::commit(dir.path(), &["-q", "-m", "link"]);
    let reply = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/tool b/tool\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/tool\n@@ -0,0 +1 @@\n+#!/bin/sh\n\
diff --git a/link b/link\nnew file mode 120000\nindex 0000000..2222222\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+lib/a.txt\n\\ No newline at end of file\n\
diff --git a/gone b/gone\ndeleted file mode 120000\nindex 2222222..0000000\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-lib/a.txt\n\\ No newline at end of file\n\
diff --git a/old.sh b/new.sh\nold mode 100644\nnew mode 100755\nsimilarity index 50%\nrename from old.sh\nrename to new.sh\n--- a/old.sh\n+++ b/new.sh\n@@ -1 +1 @@\n-x\n+y\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(head_mode(dir.path(), "run.sh"), "100755");
    assert_eq!(head_mode(dir.path(), "tool"), "100755");
    assert_eq!(head_mode(dir.path(), "link"), "120000");
    assert_eq!(head_mode(dir.path(), "new.sh"), "100755");
    assert_eq!(head_mode(dir.path(), "gone"), "");
    let mode = |p: &str| {
        std::fs::symlink_metadata(dir.path().join(p))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_ne!(mode("run.sh") & 0o111, 0);
    assert_ne!(mode("tool") & 0o111, 0);
    assert_ne!(mode("new.sh") & 0o111, 0);
    assert_eq!(
        std::fs::read_link(dir.path().join("link")).unwrap(),
        Path::new("lib/a.txt")
    );
    assert!(std::fs::symlink_metadata(dir.path().join("gone")).is_err());
    assert_eq!(bytes(dir.path(), "new.sh"), b"y\n");
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn a_symbolic_link_out_of_the_repository_is_refused() {
    let dir = repo(&[("a.txt", "a\n")]);
    // A link already in the repository that leads out of it: a new link
    // through it (or to it) leads out too.
    std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
    git(dir.path(), &["add", "etc"]);
    crate::common::commit(dir.path(), &["-q", "-m", "link"]);
    for target in [
        "../outside",
        "/etc/passwd",
        "sub/../../x",
        "etc/passwd",
        "etc",
    ] {
        let reply = format!(
            "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
        );
        let v = report(dir.path(), &reply);
        assert_eq!(v["tasks"][0]["status"], "ERROR", "{target}: {v}");
        assert!(std::fs::symlink_metadata(dir.path().join("link")).is_err());
    }
}

#[test]
fn hunks_without_line_numbers_are_found_by_their_lines() {
    let dir = repo(&[(
        "src/a.py",
        "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
    )]);
    let reply = "Here is the change:\n\n```diff\n--- a/src/a.py\n+++ b/src/a.py\n@@ @@\n def f():\n-    return 1\n+    return 10\n@@ ... @@\n def g():\n-    return 2\n+    return 3\n```\n\n```diff\n--- /dev/null\n+++ src/b.py\n@@ @@\n+x = 1\n```\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(
        bytes(dir.path(), "src/a.py"),
        b"def f():\n    return 10\n\n\ndef g():\n    return 3\n"
    );
    assert_eq!(bytes(dir.path(), "src/b.py"), b"x = 1\n");
}

#[test]
fn creating_a_file_that_exists_is_refused_unless_it_is_already_there() {
    let dir = repo(&[("a.txt", "old\n"), ("same.txt", "new\n")]);
    let head = out(dir.path(), &["rev-parse", "HEAD"]);
    let create = |path: &str| {
        format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+new\n"
        )
    };
    let v = report(dir.path(), &create("a.txt"));
    assert_eq!(v["tasks"][0]["status"], "ERROR", "{v}");
    assert_eq!(bytes(dir.path(), "a.txt"), b"old\n");
    let v = report(dir.path(), &create("same.txt"));
    assert_eq!(v["tasks"][0]["status"], "ERROR", "{v}");
    assert!(
        v["tasks"][0]["message"]
            .as_str()
            .unwrap()
            .contains("already"),
        "{v}"
    );
    assert_eq!(out(dir.path(), &["rev-parse", "HEAD"]), head);
    // Claude's text-editor create over an existing file is refused too.
    let tool = r#"{"command": "create", "path": "a.txt", "file_text": "other\n"}"#;
    let v = json(&apply(dir.path(), &["--format", "json", "-"], tool));
    assert_eq!(v["tasks"][0]["status"], "ERROR", "{v}");
    assert_eq!(bytes(dir.path(), "a.txt"), b"old\n");
    // Codex's Add File replaces it, as Codex's own suite requires.
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+codex\n*** End Patch\n";
    let v = json(&apply(dir.path(), &["--format", "json", "-"], patch));
    assert_eq!(v["tasks"][0]["status"], "SUCCESS", "{v}");
    assert_eq!(bytes(dir.path(), "a.txt"), b"codex\n");
}

#[test]
fn a_file_becomes_a_directory_of_the_same_name_and_back() {
    let dir = repo(&[("x", "file\n"), ("y/y", "inner\n")]);
    let reply = "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-file\n\
diff --git a/x/x b/x/x\nnew file mode 100644\n--- /dev/null\n+++ b/x/x\n@@ -0,0 +1 @@\n+file\n\
diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+inner\n\
diff --git a/y/y b/y/y\ndeleted file mode 100644\n--- a/y/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-inner\n";
    let v = report(dir.path(), reply);
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(bytes(dir.path(), "x/x"), b"file\n");
    assert_eq!(bytes(dir.path(), "y"), b"inner\n");
    assert_eq!(out(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn modes_survive_the_json_round_trip() {
    let dir = repo(&[("run.sh", "echo hi\n")]);
    let reply = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+run.sh\n\\ No newline at end of file\n";
    let parsed = crate::common::clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "--syntax", "diff", "-"])
        .write_stdin(reply)
        .assert()
        .success();
    let doc = String::from_utf8(parsed.get_output().stdout.clone()).unwrap();
    let v = json(&apply(
        dir.path(),
        &["--format", "json", "--syntax", "json", "-"],
        &doc,
    ));
    assert_eq!(v["status"], "success", "{doc}\n{v}");
    assert_eq!(head_mode(dir.path(), "run.sh"), "100755");
    assert_eq!(head_mode(dir.path(), "link"), "120000");
}

#[test]
fn without_git_modes_and_links_are_made_on_disk_and_rolled_back() {
    let dir = crate::common::scratch();
    let root = dir.path();
    std::fs::write(root.join("run.sh"), "echo\n").unwrap();
    let reply = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+run.sh\n\\ No newline at end of file\n\
diff --git a/bad b/bad\nnew file mode 120000\n--- /dev/null\n+++ b/bad\n@@ -0,0 +1 @@\n+../../etc/passwd\n\\ No newline at end of file\n";
    let v = json(&apply(
        root,
        &["--no-git", "--format", "json", "--syntax", "diff", "-"],
        reply,
    ));
    assert_eq!(v["tasks"][0]["status"], "SUCCESS", "{v}");
    assert_eq!(v["tasks"][1]["status"], "SUCCESS", "{v}");
    assert_eq!(v["tasks"][2]["status"], "ERROR", "{v}");
    assert_eq!(v["tasks"][2]["operations"][1]["error_type"], "path_escape");
    let mode = std::fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o111, 0);
    assert_eq!(
        std::fs::read_link(root.join("link")).unwrap(),
        Path::new("run.sh")
    );
    assert!(
        std::fs::symlink_metadata(root.join("bad")).is_err(),
        "the refused link's block is rolled back, its file too"
    );
}
