//! Colour: on a terminal only, as `--color`, `color.ui`, `NO_COLOR` and
//! `TERM` say; never in a pipe unless asked for, never from a hook.

use std::path::Path;

use crate::common::{DATE, clada, clada_std, git, git_command, repo};
use crate::pty;

/// The escape code that starts every colour the output uses.
const ESC: &str = "\x1b[";

/// `git-clada ARGS` in `dir` on a terminal with `TERM` and `env`.
fn on_terminal(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> pty::PtyOutput {
    let mut cmd = clada_std(dir, dir);
    cmd.args(args)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .env("TERM", "xterm-256color");
    for (k, v) in env {
        cmd.env(k, v);
    }
    pty::run(cmd)
}

const BROKEN: &str = "<---WRITE--->\nx\n<---END--->\n<---SEARCH file=\"a.txt\"--->\nnot there\n<---REPLACE--->\ny\n<---END--->\n<---WRITE file=\"b.txt\"--->\nnew\n<---END--->\n";

fn setup() -> tempfile::TempDir {
    let dir = repo(&[("a.txt", "hello\n")]);
    std::fs::write(dir.path().join("reply.md"), BROKEN).unwrap();
    git(dir.path(), &["config", "user.name", "t"]);
    git(dir.path(), &["config", "user.email", "t@t"]);
    dir
}

#[test]
fn a_terminal_gets_rustc_colours_for_diagnostics_and_git_colours_for_the_report() {
    let dir = setup();
    let out = on_terminal(dir.path(), &["parse", "reply.md"], &[]);
    // The severity and its carets red and bold, the gutter blue.
    assert!(
        out.text
            .contains("\x1b[1m\x1b[31minvalid[missing_attribute]\x1b[0m"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("\x1b[1m\x1b[34m-->\x1b[0m"),
        "{}",
        out.text
    );
    assert!(out.text.contains("\x1b[1m\x1b[31m^"), "{}", out.text);
    assert!(
        out.text.contains("\x1b[1m\x1b[36mhint\x1b[0m"),
        "{}",
        out.text
    );

    let out = on_terminal(dir.path(), &["apply", "reply.md", "--dry-run"], &[]);
    assert!(
        out.text
            .contains("\x1b[1m\x1b[31mERROR\x1b[0m: SEARCH a.txt"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("\x1b[1m\x1b[32mSUCCESS\x1b[0m: WRITE b.txt"),
        "{}",
        out.text
    );
    assert!(out.text.contains("\x1b[32m+new\x1b[0m"), "{}", out.text);
    assert!(out.text.contains("\x1b[36m@@ "), "{}", out.text);
}

#[test]
fn no_colour_on_a_terminal_when_no_color_term_color_ui_or_the_flag_says_so() {
    let dir = setup();
    // Flags, environment, color.ui.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], Option<&'a str>);
    let cases: [Case<'_>; 5] = [
        (&["--color=never"], &[], None),
        (&[], &[("NO_COLOR", "1")], None),
        (&[], &[("TERM", "dumb")], None),
        (&[], &[], Some("never")),
        (&[], &[], Some("false")),
    ];
    for (flags, env, color_ui) in cases {
        match color_ui {
            Some(value) => git(dir.path(), &["config", "color.ui", value]),
            None => {
                // Unset (exit 5 when it is not set: fine).
                let _ = git_command(dir.path(), &["config", "--unset-all", "color.ui"]).status();
            }
        }
        let mut args = vec!["apply", "reply.md", "--dry-run"];
        args.extend_from_slice(flags);
        let out = on_terminal(dir.path(), &args, env);
        assert!(
            out.text.contains("ERROR: SEARCH a.txt"),
            "{flags:?} {env:?}: {}",
            out.text
        );
        assert!(!out.text.contains(ESC), "{flags:?} {env:?}: {}", out.text);
        let mut args = vec!["parse", "reply.md"];
        args.extend_from_slice(flags);
        let out = on_terminal(dir.path(), &args, env);
        assert!(
            out.text.contains("invalid[missing_attribute]"),
            "{}",
            out.text
        );
        assert!(!out.text.contains(ESC), "{flags:?} {env:?}: {}", out.text);
    }
    // The flag wins over NO_COLOR and color.ui; a user's color.ui wins
    // over NO_COLOR (no-color.org: configuration overrides it).
    let out = on_terminal(
        dir.path(),
        &["parse", "reply.md", "--color=always"],
        &[("NO_COLOR", "1")],
    );
    assert!(out.text.contains(ESC), "{}", out.text);
    git(dir.path(), &["config", "color.ui", "always"]);
    let out = on_terminal(dir.path(), &["parse", "reply.md"], &[("NO_COLOR", "1")]);
    assert!(out.text.contains(ESC), "{}", out.text);
}

#[test]
fn a_pipe_gets_no_colour_unless_asked_for() {
    let dir = setup();
    let piped = clada(dir.path(), dir.path())
        .args(["apply", "reply.md", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8(piped.stdout).unwrap();
    assert!(
        text.contains("ERROR: SEARCH a.txt") && !text.contains(ESC),
        "{text}"
    );

    for config in [false, true] {
        let mut cmd = clada(dir.path(), dir.path());
        cmd.args(["apply", "reply.md", "--dry-run"]);
        if config {
            git(dir.path(), &["config", "color.ui", "always"]);
        } else {
            cmd.arg("--color=always");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("\x1b[1m\x1b[31mERROR\x1b[0m"),
            "color.ui: {config}: {text}"
        );
    }
    // An error on stderr, coloured when asked for.
    let out = clada(dir.path(), dir.path())
        .args(["undo", "--color=always"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("\x1b[1m\x1b[31merror\x1b[0m: "), "{err}");
}

#[test]
fn hooks_never_colour_what_they_write() {
    let dir = setup();
    git(dir.path(), &["config", "color.ui", "always"]);
    clada(dir.path(), dir.path())
        .args(["hook", "install"])
        .assert()
        .success();
    // A commit whose message holds CSL, on a terminal: git runs the
    // post-commit hook, which applies it and reports.
    std::fs::write(
        dir.path().join("msg"),
        "add c\n\n<---WRITE file=\"c.txt\"--->\nc\n<---END--->\n",
    )
    .unwrap();
    let mut cmd = std::process::Command::new("git");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_git-clada")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    cmd.args(["commit", "-q", "--allow-empty", "-F", "msg"])
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .env("TERM", "xterm-256color");
    let out = pty::run(cmd);
    assert!(out.status.success(), "{}", out.text);
    assert!(out.text.contains("SUCCESS: WRITE c.txt"), "{}", out.text);
    assert!(!out.text.contains(ESC), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
        "c\n"
    );
}
