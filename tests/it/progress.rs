//! Progress lines: on a terminal, the scratch tree's checkout counts files
//! and a long RUN command shows its elapsed time, each erased before any
//! other output; never with `--quiet` or when stderr is not a terminal.

use std::path::Path;

use crate::common::{DATE, clada, clada_std, repo, scratch};
use crate::pty;

/// The RUN line: output, a pause long enough for several redraws, output.
const SLOW: &str =
    "python3 -c \"import time; print('one', flush=True); time.sleep(1.5); print('two')\"";

/// A repository of three files with `SLOW` approved, and a reply running it.
fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = repo(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("src/c.txt", "c\n")]);
    clada(dir.path(), dir.path())
        .args(["allow", SLOW])
        .assert()
        .success();
    let outside = scratch();
    std::fs::write(
        outside.path().join("reply.md"),
        format!("<---RUN--->\n{SLOW}\n<---END--->\n"),
    )
    .unwrap();
    (dir, outside)
}

/// `git clada apply reply.md ARGS` in `dir`, hermetic, on a terminal:
/// lines are drawn as soon as work starts (no one-second delay).
fn apply_on_terminal(
    dir: &Path,
    reply: &Path,
    args: &[&str],
    pause: Option<&Path>,
) -> pty::PtyOutput {
    let mut cmd = clada_std(dir, dir);
    cmd.env("TERM", "xterm")
        // Colour is tests/it/color.rs's subject: here the lines are
        // compared as text.
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .env("CLADA_PROGRESS_DELAY_MS", "0")
        .arg("apply")
        .arg(reply)
        .args(args);
    if let Some(pause) = pause {
        cmd.env(
            "CLADA_PAUSE",
            format!("scratch-checked-out:{}", pause.display()),
        );
    }
    pty::run(cmd)
}

/// The lines a terminal shows at the end: `\r` + erase-line clears the
/// line being written, `\n` ends it.
fn screen(text: &str) -> Vec<String> {
    let (mut lines, mut current) = (Vec::new(), String::new());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("\r\x1b[K") {
            current.clear();
            rest = after;
            continue;
        }
        if c == '\n' {
            lines.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "pause points need a debug build (src/fault.rs)"
)]
fn a_terminal_sees_the_checkout_count_and_the_elapsed_time_then_clean_output() {
    let (dir, outside) = setup();
    let pause = outside.path().join("pause");
    // Hold the finished checkout on screen long enough to be drawn.
    let release = {
        let pause = pause.clone();
        std::thread::spawn(move || {
            let reached = pause.with_extension("reached");
            let start = std::time::Instant::now();
            while !reached.exists() && start.elapsed().as_secs() < 30 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
            std::fs::write(pause.with_extension("go"), b"").unwrap();
        })
    };
    let out = apply_on_terminal(
        dir.path(),
        &outside.path().join("reply.md"),
        &[],
        Some(&pause),
    );
    release.join().unwrap();
    let text = &out.text;
    assert!(out.status.success(), "{text}");
    // Three files (the approval `allow` wrote is in the git dir).
    assert!(
        text.contains("\r\x1b[KChecking out clada's scratch working tree: 3/3 files"),
        "{text:?}"
    );
    assert!(
        text.contains("\r\x1b[K[task-1:exec] running for 0s: `python3 -c"),
        "{text:?}"
    );
    assert!(
        text.contains("\r\x1b[K[task-1:exec] running for 1s: `python3 -c"),
        "{text:?}"
    );
    // Every progress line was erased: what stays on screen is the output
    // and the report, each line whole.
    let lines = screen(text);
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("Checking out") || l.contains("running for")),
        "{lines:#?}"
    );
    let one = lines.iter().position(|l| l == "[task-1:exec] one");
    let two = lines.iter().position(|l| l == "[task-1:exec] two");
    assert!(one.is_some() && two > one, "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("[task-1] SUCCESS: RUN python3")),
        "{lines:#?}"
    );
}

#[test]
fn quiet_shows_no_progress_on_a_terminal() {
    let (dir, outside) = setup();
    let out = apply_on_terminal(
        dir.path(),
        &outside.path().join("reply.md"),
        &["--quiet"],
        None,
    );
    assert!(out.status.success(), "{}", out.text);
    assert!(out.text.contains("[task-1:exec] two\n"), "{}", out.text);
    assert!(!out.text.contains('\r'), "{:?}", out.text);
    assert!(!out.text.contains("running for"), "{:?}", out.text);
}

#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let (dir, outside) = setup();
    let a = clada(dir.path(), dir.path())
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .env("CLADA_PROGRESS_DELAY_MS", "0")
        .arg("apply")
        .arg(outside.path().join("reply.md"))
        .assert()
        .success();
    let output = a.get_output();
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(both.contains("[task-1:exec] two\n"), "{both}");
    assert!(!both.contains('\r'), "{both:?}");
    assert!(!both.contains("running for"), "{both:?}");
    assert!(!both.contains("Checking out"), "{both:?}");
}

#[test]
fn ctrl_c_during_a_long_run_leaves_no_progress_line() {
    // The command interrupts clada itself once its line is drawn, as
    // Ctrl-C on the terminal would (it runs in a group of its own, so
    // only clada gets the terminal's SIGINT).
    const INTERRUPTS: &str = "python3 -c \"import os, signal, time; print('one', flush=True); time.sleep(0.8); os.kill(os.getppid(), signal.SIGINT); time.sleep(5)\"";
    let dir = repo(&[("a.txt", "a\n")]);
    clada(dir.path(), dir.path())
        .args(["allow", INTERRUPTS])
        .assert()
        .success();
    let outside = scratch();
    let reply = outside.path().join("reply.md");
    std::fs::write(&reply, format!("<---RUN--->\n{INTERRUPTS}\n<---END--->\n")).unwrap();
    let out = apply_on_terminal(dir.path(), &reply, &[], None);
    assert!(!out.status.success(), "{}", out.text);
    assert!(
        out.text.contains("running for 0s"),
        "the line was drawn: {:?}",
        out.text
    );
    let lines = screen(&out.text);
    assert!(
        !lines.iter().any(|l| l.contains("running for")),
        "{lines:#?}"
    );
}
