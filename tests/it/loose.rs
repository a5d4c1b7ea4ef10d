//! What the report tells the model about how its edits were found (issue
//! 25): every loose step is named, in the text report and in the JSON
//! one, for every syntax; a refusal names the closest candidate and why it
//! was not taken, and an ambiguous match the lines that would choose.

use serde_json::Value;

use crate::common::{apply, json, repo};

/// The text report and the JSON report of applying `reply` (each to its
/// own repository holding `files`), with `args`.
fn reports(files: &[(&str, &str)], args: &[&str], reply: &str) -> (String, Value) {
    let text_repo = repo(files);
    let mut text_args = vec!["-"];
    text_args.extend_from_slice(args);
    let text = apply(text_repo.path(), &text_args, reply);
    let text = String::from_utf8(text.get_output().stdout.clone()).expect("UTF-8");
    let json_repo = repo(files);
    let mut json_args = vec!["--format", "json", "-"];
    json_args.extend_from_slice(args);
    let value = json(&apply(json_repo.path(), &json_args, reply));
    (text, value)
}

/// The first task's detail lines in the JSON report.
fn details(report: &Value) -> Vec<String> {
    report["tasks"][0]["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d.as_str().expect("a string").to_string())
        .collect()
}

/// Asserts that both reports say `words` in the first task's details.
fn both_say(text: &str, report: &Value, words: &str) {
    assert!(text.contains(words), "text report lacks {words:?}:\n{text}");
    assert!(
        details(report).iter().any(|d| d.contains(words)),
        "JSON details lack {words:?}: {:#}",
        report["tasks"][0]
    );
}

const NESTED: &str = "class A:\n    def f(self):\n        return 1\n";

#[test]
fn a_loose_step_is_named_in_both_reports_for_every_syntax() {
    let shifted = "matched only with every line's indentation shifted by 4 columns";
    // aider: the SEARCH lines without the class's indentation.
    let aider = "a.py\n<<<<<<< SEARCH\ndef f(self):\n    return 1\n=======\ndef f(self):\n    return 2\n>>>>>>> REPLACE\n";
    let (text, report) = reports(&[("a.py", NESTED)], &[], aider);
    assert_eq!(report["tasks"][0]["status"], "SUCCESS");
    both_say(&text, &report, shifted);
    // A unified diff, shifted the same way.
    let diff =
        "--- a/a.py\n+++ b/a.py\n@@ -2,2 +2,2 @@\n def f(self):\n-    return 1\n+    return 2\n";
    let (text, report) = reports(&[("a.py", NESTED)], &[], diff);
    assert_eq!(report["tasks"][0]["status"], "SUCCESS");
    both_say(&text, &report, shifted);
    // apply_patch: the file's trailing blanks the patch does not have.
    let patch =
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 3\n y = 2\n*** End Patch\n";
    let (text, report) = reports(&[("a.py", "x = 1   \ny = 2\n")], &[], patch);
    assert_eq!(report["tasks"][0]["status"], "SUCCESS");
    both_say(
        &text,
        &report,
        "matched only with trailing whitespace ignored",
    );
}

const BLOCK: &str = "fn f() {\n    if x {\n        a();\n    }\n}\n";

#[test]
fn a_search_matched_with_match_whitespace_says_so_even_when_nothing_changed() {
    let edit = |new: &str| {
        format!(
            "<---SEARCH file=\"a.rs\"--->\nif x {{\n    a();\n}}\n<---REPLACE--->\n{new}\n<---END--->\n"
        )
    };
    let words = "--match whitespace at lines 2-4: matched only with";
    let (text, report) = reports(
        &[("a.rs", BLOCK)],
        &["--match", "whitespace"],
        &edit("if x {\n    b();\n}"),
    );
    assert_eq!(report["tasks"][0]["status"], "SUCCESS");
    both_say(&text, &report, words);
    // The same lines sent again: found loosely, nothing to change.
    let (text, report) = reports(
        &[("a.rs", BLOCK)],
        &["--match", "whitespace"],
        &edit("if x {\n    a();\n}"),
    );
    assert!(
        report["tasks"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("nothing changed"),
        "{report:#}"
    );
    both_say(&text, &report, words);
}

const TWO: &str = "def a():\n    pass\n\ndef b():\n    pass\n";

#[test]
fn an_ambiguous_hunk_lists_its_places_and_the_lines_that_tell_them_apart() {
    let aider = "a.py\n<<<<<<< SEARCH\n    pass\n=======\n    return None\n>>>>>>> REPLACE\n";
    let (text, report) = reports(&[("a.py", TWO)], &[], aider);
    let task = &report["tasks"][0];
    assert_eq!(task["error_type"], "match_count_mismatch");
    assert_eq!(task["lines"], serde_json::json!([2, 5]));
    both_say(
        &text,
        &report,
        "the match at line 2: line 1, just above it, `def a():`",
    );
    both_say(
        &text,
        &report,
        "the match at line 5: line 4, just above it, `def b():`",
    );
}

#[test]
fn a_hunk_not_found_names_the_closest_region_and_what_differs() {
    let aider =
        "a.py\n<<<<<<< SEARCH\ndef b():\n  pass\n=======\ndef b():\n  return 1\n>>>>>>> REPLACE\n";
    let (text, report) = reports(&[("a.py", TWO)], &[], aider);
    let task = &report["tasks"][0];
    assert_eq!(task["status"], "ERROR");
    assert_eq!(task["closest"]["lines"], serde_json::json!([4, 5]));
    both_say(&text, &report, "closest to your pattern: lines 4-5");
    both_say(
        &text,
        &report,
        "line 5: the file indents this line by 4 characters, your pattern by 2",
    );
}

#[test]
fn a_missing_patch_context_line_names_the_closest_line() {
    let file = "class H:\n    def handle(self, req):\n        return req\n";
    let patch = "*** Begin Patch\n*** Update File: h.py\n@@ def handle(self, request):\n-        return req\n+        return None\n*** End Patch\n";
    let (text, report) = reports(&[("h.py", file)], &[], patch);
    assert_eq!(report["tasks"][0]["status"], "ERROR");
    both_say(&text, &report, "closest line: 2, `def handle(self, req):`");
}

#[test]
fn a_patch_context_line_before_an_earlier_hunk_is_said_to_be_out_of_order() {
    let file = "def a():\n    x = 1\ndef b():\n    y = 2\n";
    let patch = "*** Begin Patch\n*** Update File: h.py\n@@ def b():\n-    y = 2\n+    y = 3\n@@ def a():\n-    x = 1\n+    x = 0\n*** End Patch\n";
    let (text, report) = reports(&[("h.py", file)], &[], patch);
    assert_eq!(report["tasks"][0]["status"], "ERROR");
    both_say(
        &text,
        &report,
        "line 1 has it, but before the lines of the hunks before this one",
    );
}
