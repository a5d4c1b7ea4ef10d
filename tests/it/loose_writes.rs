//! What an edit found by a looser step writes (issue 25, defects 3, 4, 5
//! and 9), through the binary as a user runs it: kept lines as the file
//! has them, added lines re-indented whole, and an addition sent twice
//! refused rather than applied twice.

use crate::common::{apply, json, read, repo};

const PY: &str = "def f():\n    x = 1\n    if x:\n        y()\nz = 0\n";

#[test]
fn an_aider_block_indented_too_deep_re_indents_every_replace_line() {
    // Defect 3: every line four spaces too deep, and a REPLACE line less
    // indented than every SEARCH line (at the file's column 0).
    let reply = "a.py\n```\n<<<<<<< SEARCH\n        x = 1\n        if x:\n            y()\n=======\n        x = 2\n    w = 3\n>>>>>>> REPLACE\n```\n";
    let dir = repo(&[("a.py", PY)]);
    let report = json(&apply(dir.path(), &["--format", "json", "-"], reply));
    assert_eq!(report["tasks"][0]["status"], "SUCCESS", "{report:#}");
    assert_eq!(
        read(dir.path(), "a.py"),
        "def f():\n    x = 2\nw = 3\nz = 0\n"
    );
}

#[test]
fn a_patch_kept_line_matched_without_its_trailing_blanks_keeps_them() {
    // Defect 4.
    let file = "x = 1   \ny = 2\nz = 3\n";
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 20\n z = 3\n*** End Patch\n";
    let dir = repo(&[("a.py", file)]);
    apply(dir.path(), &["-"], patch).success();
    assert_eq!(read(dir.path(), "a.py"), "x = 1   \ny = 20\nz = 3\n");
}

#[test]
fn a_patch_indented_too_deep_writes_its_new_lines_in_the_files_indentation() {
    // Defect 5: every line of the patch four spaces deeper.
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n     def f():\n-        x = 1\n+        x = 2\n+        v = 4\n         if x:\n*** End Patch\n";
    let dir = repo(&[("a.py", PY)]);
    apply(dir.path(), &["-"], patch).success();
    assert_eq!(
        read(dir.path(), "a.py"),
        "def f():\n    x = 2\n    v = 4\n    if x:\n        y()\nz = 0\n"
    );
}

#[test]
fn an_addition_sent_twice_is_refused_the_second_time_in_every_format() {
    // Defect 9: aider's REPLACE = SEARCH + new lines, a patch and a diff
    // that only add lines at the end of their kept lines.
    let file = "a = 1\nb = 2\n\nend = 0\n";
    let aider =
        "a.py\n<<<<<<< SEARCH\na = 1\nb = 2\n=======\na = 1\nb = 2\nc = 3\n>>>>>>> REPLACE\n";
    let patch =
        "*** Begin Patch\n*** Update File: a.py\n@@\n a = 1\n b = 2\n+c = 3\n*** End Patch\n";
    let diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n a = 1\n b = 2\n+c = 3\n";
    for reply in [aider, patch, diff] {
        let dir = repo(&[("a.py", file)]);
        apply(dir.path(), &["-"], reply).success();
        let once = read(dir.path(), "a.py");
        assert_eq!(once, "a = 1\nb = 2\nc = 3\n\nend = 0\n", "{reply}");
        let again = json(&apply(dir.path(), &["--format", "json", "-"], reply).code(1));
        let task = &again["tasks"][0];
        assert_eq!(task["status"], "ERROR", "{task:#}");
        assert!(
            task["message"]
                .as_str()
                .is_some_and(|m| m.contains("applied already")),
            "{task:#}"
        );
        assert_eq!(read(dir.path(), "a.py"), once, "{reply}");
    }
}

#[test]
fn a_crlf_diff_of_a_crlf_file_found_loosely_keeps_every_crlf() {
    // git prints a CRLF file's lines with their `\r`; here every line of
    // the diff is also four spaces too deep.
    let file = "a:\r\n  b: 1\r\n  c: 2\r\n";
    let diff = "--- a/x.yml\n+++ b/x.yml\n@@ -1,3 +1,3 @@\n     a:\r\n-      b: 1\r\n+      b: 10\r\n       c: 2\r\n";
    let dir = repo(&[("x.yml", file)]);
    let report = json(&apply(dir.path(), &["--format", "json", "-"], diff));
    assert_eq!(report["tasks"][0]["status"], "SUCCESS", "{report:#}");
    assert_eq!(read(dir.path(), "x.yml"), "a:\r\n  b: 10\r\n  c: 2\r\n");
}
