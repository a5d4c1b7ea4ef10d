//! What clada says, held as it is said: the report's typed JSON fields,
//! and the wording of messages that used to mislead (issue 17). Text is
//! compared as insta snapshots; JSON as values.

use serde_json::json;

use crate::common::{apply, json, repo};

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
