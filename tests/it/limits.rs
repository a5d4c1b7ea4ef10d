//! `clada.maxFileSize` on the files a reply edits: an edit of a file
//! already over the limit is refused from its size, unread (issue 29).

use serde_json::Value;

use crate::common::{apply, git, json, read, repo};

/// Every edit of a file over the limit (a SEARCH that would find nothing,
/// one that would match, a diff's hunk, an INSERT, an append) is
/// `file_too_large`, named from the file's size; the file stays as it was
/// and a WRITE of a whole new file, under the limit, still works.
#[test]
fn an_edit_of_a_file_over_the_limit_is_refused_from_its_size() {
    let big = "0123456789\n".repeat(200); // 2,200 bytes
    let dir = repo(&[("big.txt", &big)]);
    git(dir.path(), &["config", "clada.maxFileSize", "1000"]);
    let replies = [
        "<---SEARCH file=\"big.txt\"--->\nnot there\n<---REPLACE--->\ny\n<---END--->\n",
        "<---SEARCH file=\"big.txt\" count=\"all\"--->\n0123456789\n<---REPLACE--->\n0\n<---END--->\n",
        "--- a/big.txt\n+++ b/big.txt\n@@ -1,1 +1,1 @@\n-0123456789\n+x\n",
        "[{\"op\": \"insert\", \"path\": \"big.txt\", \"line\": 0, \"text\": \"top\\n\"}]",
        "<---WRITE file=\"big.txt\" append=\"true\"--->\nmore\n<---END--->\n",
    ];
    for reply in replies {
        let v = json(&apply(dir.path(), &["--format", "json", "-"], reply).code(1));
        let task = &v["tasks"][0];
        assert_eq!(
            task["error_type"],
            Value::from("file_too_large"),
            "{reply}: {v}"
        );
        let message = task["message"].as_str().unwrap();
        assert!(
            message.contains("big.txt is 2200 bytes") && message.contains("1000"),
            "{message}"
        );
    }
    assert_eq!(read(dir.path(), "big.txt"), big);
    apply(
        dir.path(),
        &["-"],
        "<---WRITE file=\"big.txt\"--->\nsmall\n<---END--->\n",
    )
    .success();
    assert_eq!(read(dir.path(), "big.txt"), "small\n");
}

/// Without git (`--no-git`, here in a repository whose config sets the
/// limit), the same.
#[test]
fn without_git_an_edit_of_a_file_over_the_limit_is_refused_from_its_size() {
    let big = "0123456789\n".repeat(200);
    let dir = repo(&[("big.txt", &big)]);
    git(dir.path(), &["config", "clada.maxFileSize", "1000"]);
    let reply = "<---SEARCH file=\"big.txt\"--->\nnot there\n<---REPLACE--->\ny\n<---END--->\n";
    let v = json(&apply(dir.path(), &["--no-git", "--format", "json", "-"], reply).code(1));
    assert_eq!(
        v["tasks"][0]["error_type"],
        Value::from("file_too_large"),
        "{v}"
    );
    assert_eq!(read(dir.path(), "big.txt"), big);
}
