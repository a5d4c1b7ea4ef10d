//! Data-driven `git clada parse` cases: one file in `test-data/parse/` is
//! one test.
//!
//! For `NAME.csl` (or `NAME.cml`, `.sham`, `.telt`, `.replacer`, `.aider`,
//! `.patch`, `.diff`, `.json`: a reply in that syntax, read with
//! auto-detection unless `NAME.args` says `--syntax`) the binary runs
//! `parse --format text` and `--format json` on it (with the extra arguments listed one per line in `NAME.args`, if
//! that file exists) in a hermetic environment, and the exit status and
//! both outputs are compared with the snapshot `NAME.snap` beside it
//! (insta; review new ones with `cargo insta review`).

use std::path::Path;
use std::process::Command;

fn run(case: &Path, args: &[String], format: &str) -> (i32, String) {
    // Run in a temporary directory outside any repository, so that no git
    // config can change the delimiters, on a copy named like the case.
    let home = tempfile::tempdir().expect("temporary home");
    let name = case.file_name().expect("file name");
    std::fs::copy(case, home.path().join(name)).expect("copy the case");
    let out = Command::new(env!("CARGO_BIN_EXE_git-clada"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(home.path())
        .arg("parse")
        .arg("--format")
        .arg(format)
        .args(args)
        .arg(name)
        .output()
        .expect("run git-clada");
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = out.status.code().expect("exit code");
    (code, String::from_utf8(out.stdout).expect("UTF-8 output"))
}

fn parse_case(case: &Path) -> datatest_stable::Result<()> {
    let args_file = case.with_extension("args");
    let args: Vec<String> = match std::fs::read_to_string(&args_file) {
        Ok(text) => text.lines().map(str::to_owned).collect(),
        Err(_) => Vec::new(),
    };
    let (text_code, text) = run(case, &args, "text");
    let (json_code, json) = run(case, &args, "json");
    assert_eq!(text_code, json_code, "exit status differs between formats");
    let value: serde_json::Value = serde_json::from_str(&json)?;
    let pretty = serde_json::to_string_pretty(&value)?;
    let snapshot = format!("exit: {text_code}\n--- text ---\n{text}--- json ---\n{pretty}\n");
    let name = case
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(case.parent().expect("parent").canonicalize()?);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(case);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, snapshot));
    Ok(())
}

datatest_stable::harness! {
    { test = parse_case, root = "test-data/parse", pattern = r"\.(csl|cml|sham|telt|replacer|aider|patch|diff|json)$" },
}
