//! `git clada parse` as a user runs it: inputs, exit statuses, formats and
//! where the delimiters come from.

use serde_json::Value;

use crate::common::{clada, git, scratch};

const GOOD: &str = "<---WRITE file=\"a.txt\"--->\nhi\n<---END--->\n";

fn json(output: &[u8]) -> Value {
    serde_json::from_slice(output).expect("JSON output")
}

#[test]
fn exit_status_is_0_1_or_2_by_the_worst_problem() {
    let dir = scratch();
    let cases = [
        (GOOD, 0),
        ("<---WRITE--->\nhi\n<---END--->\n", 1),
        ("<---WRITE file=\"a\"--->\nhi\n", 2),
        // No operations: nothing would be applied (syntaxes.md §2).
        ("just prose\n", 1),
        ("  <---WRITE file=\"a\"--->\nhi\n  <---END--->\n", 1),
    ];
    for (reply, code) in cases {
        std::fs::write(dir.path().join("r.md"), reply).unwrap();
        clada(dir.path(), dir.path())
            .args(["parse", "r.md"])
            .assert()
            .code(code);
    }
}

#[test]
fn reads_standard_input_with_dash_or_without_a_file() {
    let dir = scratch();
    for args in [
        &["parse", "-", "--format", "json"][..],
        &["parse", "--format", "json"],
    ] {
        let out = clada(dir.path(), dir.path())
            .args(args)
            .write_stdin(GOOD)
            .assert()
            .success();
        let v = json(&out.get_output().stdout);
        assert_eq!(v["operations"][0]["attrs"]["file"], "a.txt");
        assert_eq!(v["operations"][0]["content"], "hi");
    }
}

#[test]
fn a_large_file_parses_as_the_same_reply_on_standard_input() {
    // Over 1 MiB, so `parse FILE` maps the file instead of reading it;
    // with a BOM, CRLF content, an error and a non-ASCII end.
    let dir = scratch();
    let block = "<---WRITE file=\"a\"--->\r\nx\r\n<---END--->\n<---RUN--->\n<---END--->\n";
    let reply = format!("\u{feff}{}ü", block.repeat(30_000));
    assert!(reply.len() > 1 << 20);
    std::fs::write(dir.path().join("big.md"), &reply).unwrap();
    let from_file = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "big.md"])
        .assert()
        .code(1);
    let from_stdin = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "-"])
        .write_stdin(reply)
        .assert()
        .code(1);
    let (file_json, stdin_json) = (
        &from_file.get_output().stdout,
        &from_stdin.get_output().stdout,
    );
    assert_eq!(file_json, stdin_json);
    assert_eq!(json(file_json)["operations"][59_999]["type"], "RUN");
}

#[test]
fn text_format_shows_source_line_caret_hint_and_summary() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("r.md"),
        "<---WRTIE file=\"a\"--->\nx\n<---END--->\n",
    )
    .unwrap();
    let out = clada(dir.path(), dir.path())
        .args(["parse", "r.md"])
        .assert()
        .code(2);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "fatal[unknown_operation]: Unknown operation: WRTIE"
    );
    assert_eq!(lines[1], " --> r.md:1:5");
    assert_eq!(lines[3], "1 | <---WRTIE file=\"a\"--->");
    assert_eq!(lines[4], "  |     ^^^^^");
    assert!(lines[5].contains("did you mean WRITE?"), "{text}");
    assert!(lines.last().unwrap().contains("1 fatal"), "{text}");
}

#[test]
fn missing_file_is_an_error_with_exit_2() {
    let dir = scratch();
    clada(dir.path(), dir.path())
        .args(["parse", "nope.md"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot read the reply nope.md"));
}

#[test]
fn input_over_50_mib_is_refused_without_reading_it() {
    let dir = scratch();
    let path = dir.path().join("big.md");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(50 * 1024 * 1024 + 1).unwrap();
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "big.md"])
        .assert()
        .code(2);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["diagnostics"][0]["severity"], "fatal");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("input_too_large")
    );
}

#[test]
fn input_over_50_mib_on_stdin_is_refused() {
    let dir = scratch();
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "-"])
        .write_stdin(vec![b'x'; 50 * 1024 * 1024 + 1])
        .assert()
        .code(2);
    let v = json(&out.get_output().stdout);
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("input_too_large")
    );
}

#[test]
fn invalid_utf8_is_fatal_and_names_the_byte_offset() {
    let dir = scratch();
    std::fs::write(dir.path().join("r.md"), b"\xef\xbb\xbfok\n\xc3(\n").unwrap();
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "r.md"])
        .assert()
        .code(2);
    let v = json(&out.get_output().stdout);
    let d = &v["diagnostics"][0];
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        d["message"].as_str().unwrap().contains("byte offset 6"),
        "{d}"
    );
}

#[test]
fn delimiters_come_from_git_config_inside_a_repository() {
    let dir = scratch();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["config", "clada.startDelimiter", "@@"]);
    git(dir.path(), &["config", "clada.endDelimiter", "@@"]);
    let reply = "@@RUN@@\nls\n@@END@@\n";
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "-"])
        .write_stdin(reply)
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["operations"][0]["content"],
        "ls"
    );
    // A flag wins over the configuration.
    let out = clada(dir.path(), dir.path())
        .args([
            "parse",
            "--format",
            "json",
            "--start-delimiter",
            "<---",
            "--end-delimiter",
            "--->",
            "-",
        ])
        .write_stdin(GOOD)
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["operations"][0]["content"],
        "hi"
    );
}

#[test]
fn delimiter_flags_work_outside_a_repository() {
    let dir = scratch();
    let out = clada(dir.path(), dir.path())
        .args([
            "parse",
            "--format",
            "json",
            "--start-delimiter",
            "[[",
            "--end-delimiter",
            "]]",
            "-",
        ])
        .write_stdin("[[RUN]]\nls\n[[END]]\n")
        .assert()
        .success();
    assert_eq!(
        json(&out.get_output().stdout)["operations"][0]["type"],
        "RUN"
    );
}

#[test]
fn unusable_delimiters_are_refused() {
    let dir = scratch();
    clada(dir.path(), dir.path())
        .args(["parse", "--start-delimiter", "", "-"])
        .write_stdin(GOOD)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("start delimiter is empty"));
}

#[test]
fn prompt_prints_a_guide_whose_examples_parse_cleanly() {
    let dir = scratch();
    let out = clada(dir.path(), dir.path())
        .arg("prompt")
        .assert()
        .success();
    let guide = out.get_output().stdout.clone();
    assert!(
        guide.len() < 4000,
        "the guide should stay short: {} bytes",
        guide.len()
    );
    clada(dir.path(), dir.path())
        .args(["parse", "-"])
        .write_stdin(guide)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "0 fatal, 0 invalid, 0 warnings: ok",
        ));
}

/// The pipe the JSON front end is for: parse output applied as a reply.
#[test]
fn parse_output_applies_as_a_json_reply() {
    let dir = crate::common::repo(&[("a.txt", "old\n")]);
    let reply = "<---SEARCH file=\"a.txt\"--->\nold\n<---REPLACE--->\nnew\n<---END--->\n\
                 <---WRITE file=\"b.txt\"--->\n<---SEARCH is content here\n<---END--->\n";
    std::fs::write(dir.path().join(".git/reply.md"), reply).unwrap();
    // As CSL, apply would skip the WRITE (its content starts a SEARCH
    // marker), so parse exits 1; its JSON tree holds the content as
    // written, which the json front end prints back with delimiters that
    // start no line.
    let parsed = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", ".git/reply.md"])
        .assert()
        .code(1);
    let json = String::from_utf8(parsed.get_output().stdout.clone()).unwrap();
    assert!(json.starts_with("{\"syntax\":\"csl\""), "{json}");
    crate::common::apply(dir.path(), &["--syntax", "json", "-"], &json).success();
    assert_eq!(crate::common::read(dir.path(), "a.txt"), "new\n");
    assert_eq!(
        crate::common::read(dir.path(), "b.txt"),
        "<---SEARCH is content here\n"
    );
}

/// A parse keeps the first 1,000 diagnostics (`csl::sink::MAX_KEPT`): a
/// reply of more problems is reported by those, one line for the rest and
/// the summary's exact counts, and exits as before.
const KEPT: usize = 1000;

/// The last `n` lines of `bytes`.
fn tail(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[test]
fn problems_past_the_kept_ones_are_counted_in_one_line() {
    let dir = scratch();
    let block = "<---WRITE file=\"a\" append=\"maybe\"--->\nx\n<---END--->\n";
    std::fs::write(dir.path().join("r.md"), block.repeat(KEPT + 200)).unwrap();
    let text = clada(dir.path(), dir.path())
        .args(["parse", "r.md"])
        .assert()
        .code(1);
    let stdout = &text.get_output().stdout;
    let shown = String::from_utf8_lossy(stdout)
        .matches("invalid[invalid_append]")
        .count();
    assert_eq!(shown, KEPT);
    insta::assert_snapshot!("more_problems_than_kept", tail(stdout, 3));
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "r.md"])
        .assert()
        .code(1);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(KEPT));
    assert_eq!(v["diagnostics_omitted"].as_u64(), Some(200));
}

#[test]
fn a_fatal_error_past_the_kept_ones_still_exits_2() {
    let dir = scratch();
    let reply = format!(
        "{}<---WRITE file=\"a\"--->\nnever ended\n",
        "  <---RUN--->\n".repeat(KEPT + 5)
    );
    std::fs::write(dir.path().join("r.md"), reply).unwrap();
    let text = clada(dir.path(), dir.path())
        .args(["parse", "r.md"])
        .assert()
        .code(2);
    insta::assert_snapshot!(
        "fatal_past_the_kept_ones",
        tail(&text.get_output().stdout, 3)
    );
    let out = clada(dir.path(), dir.path())
        .args(["parse", "--format", "json", "r.md"])
        .assert()
        .code(2);
    let v = json(&out.get_output().stdout);
    assert_eq!(v["diagnostics_omitted"].as_u64(), Some(6));
    let fatal_shown = v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| d["severity"] == "fatal");
    assert!(!fatal_shown);
}

/// `parse` answers what `apply` would do with the same reply (issue 29,
/// point 3), as `git apply --check` does: the tasks apply skips before
/// anything runs (invalid, dropped, or refused by the path rules) are
/// the ones parse counts, and the exit status is the same.
#[test]
fn parse_counts_the_tasks_apply_skips_and_exits_as_apply_does() {
    let cases = [
        // A WRITE missing its END: the SEARCH after it is its content,
        // which apply refuses to write.
        "<---WRITE file=\"b.txt\"--->\nnew\n<---SEARCH file=\"a.txt\"--->\nold\n\
         <---REPLACE--->\nnew\n<---END--->\n",
        // A path outside the repository, beside one that applies.
        "<---WRITE file=\"../x.txt\"--->\nx\n<---END--->\n\
         <---WRITE file=\"b.txt\"--->\nb\n<---END--->\n",
        // A name git refuses, inside a TASKS block.
        "<---TASKS--->\n<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n\
         <---WRITE file=\"d/.GIT/x\"--->\nx\n<---END--->\n<---END--->\n",
        // aider: a block that escapes the repository, and one that applies.
        "../up.txt\n```\n<<<<<<< SEARCH\n=======\nup\n>>>>>>> REPLACE\n```\n\n\
         b.txt\n```\n<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE\n```\n",
        // A marker off column 1 is dropped: a SKIP task.
        "<---WRITE file=\"b.txt\"--->\nb\n<---END--->\n  <---WRITE file=\"c.txt\"--->\nc\n  <---END--->\n",
        GOOD,
    ];
    for reply in cases {
        let dir = crate::common::repo(&[("a.txt", "old\n")]);
        std::fs::write(dir.path().join(".git/reply.md"), reply).unwrap();
        let parse = clada(dir.path(), dir.path())
            .args(["parse", ".git/reply.md"])
            .output()
            .unwrap();
        let summary = String::from_utf8(parse.stdout).unwrap();
        let apply = clada(dir.path(), dir.path())
            .args(["apply", "--format", "json", ".git/reply.md"])
            .output()
            .unwrap();
        let report = json(&apply.stdout);
        assert_eq!(
            parse.status.code(),
            apply.status.code(),
            "{reply}\nparse: {summary}\napply: {report}"
        );
        let counts = &report["summary"];
        let skipped = counts["skipped"].as_u64().unwrap();
        let tasks =
            skipped + counts["succeeded"].as_u64().unwrap() + counts["failed"].as_u64().unwrap();
        let last = summary.lines().last().unwrap_or_default();
        if skipped == 0 {
            assert!(last.ends_with(": ok"), "{reply}\n{last}");
        } else {
            let says = format!(
                ": {skipped} of {tasks} task{} would be skipped",
                if tasks == 1 { "" } else { "s" }
            );
            assert!(last.ends_with(&says), "{reply}\n{last}\nwant {says}");
        }
    }
}
