//! Running an applier on a reply: a template repository per commit
//! holding `before/`, a fresh copy of it per apply, the applier under a
//! cleared environment and a timeout, and the verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::classify::{self, Tree};
use super::corpus::{Entry, git};
use super::{Class, Outcome};

/// The fixed date of every commit the harness or clada makes.
pub const DATE: &str = "2026-01-01T00:00:00Z";

/// No apply may take longer: a hang is a crash, not a stuck harness.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Who applies the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Clada,
    GitApply,
    GitApplyRecount,
    GnuPatch,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Clada => "clada",
            Tool::GitApply => "git apply",
            Tool::GitApplyRecount => "git apply --recount",
            Tool::GnuPatch => "patch --fuzz=2",
        }
    }
}

/// The attributes of every repository the harness makes: verify.py's
/// `* -text -eol -ident -filter -working-tree-encoding` less the last,
/// which clada cannot read today (gix refuses an unset
/// `working-tree-encoding`: "Encodings must be names, like UTF-16, and
/// cannot be booleans", and every apply in such a repository fails with
/// exit 2). No `.gitattributes` of the corpus names an encoding, so the
/// bytes are the same without it.
pub const ATTRIBUTES: &str = "* -text -eol -ident -filter\n";

/// `git init` + `before/` + one commit, as the corpus's verify.py does
/// (`core.autocrlf=false` and attributes that stop any `.gitattributes`
/// in `before/` from changing bytes).
pub fn template(entry: &Entry, dir: &Path, home: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let git_ok = |args: &[&str]| -> Result<(), String> {
        let mut c = git(dir, home);
        c.args(args)
            .env("GIT_AUTHOR_NAME", "corpus")
            .env("GIT_AUTHOR_EMAIL", "corpus@example.com")
            .env("GIT_COMMITTER_NAME", "corpus")
            .env("GIT_COMMITTER_EMAIL", "corpus@example.com")
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE);
        let out = c.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    // No template: no sample hooks to copy for every apply.
    git_ok(&["init", "-q", "--template=", "-b", "main"])?;
    std::fs::create_dir_all(dir.join(".git/info")).map_err(|e| e.to_string())?;
    git_ok(&["config", "core.autocrlf", "false"])?;
    git_ok(&["config", "core.filemode", "true"])?;
    git_ok(&["config", "core.symlinks", "true"])?;
    std::fs::write(dir.join(".git/info/attributes"), ATTRIBUTES).map_err(|e| e.to_string())?;
    copy_tree(&entry.before(), dir).map_err(|e| format!("copy before/: {e}"))?;
    git_ok(&["add", "-A", "-f"])?;
    git_ok(&["commit", "-q", "--allow-empty", "-m", "before"])?;
    Ok(())
}

/// Copies the contents of `from` into `to`: files with their modes,
/// links as links.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ty = e.file_type()?;
        if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if ty.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// What a process did.
pub struct Ran {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub output: String,
    /// A Rust panic's message on standard error (`thread '…' panicked
    /// at`), which a report that quotes file content cannot fake.
    pub panicked: bool,
    pub elapsed: Duration,
}

/// Runs `cmd` with its output in files under `scratch` (no pipe to fill),
/// killing its whole process group after [`TIMEOUT`].
fn run(mut cmd: Command, scratch: &Path) -> Ran {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    let (Ok(out), Ok(err)) = (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) else {
        return failed("cannot create the output files");
    };
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let start = Instant::now();
    let Ok(mut child) = cmd.spawn() else {
        return failed("cannot start the applier");
    };
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > TIMEOUT => {
                timed_out = true;
                // SAFETY: kill(2) on the group this child leads; no memory
                // is involved.
                unsafe {
                    libc::kill(-(child.id() as i32), libc::SIGKILL);
                }
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => break None,
        }
    };
    let elapsed = start.elapsed();
    let mut output =
        String::from_utf8_lossy(&std::fs::read(&out_path).unwrap_or_default()).into_owned();
    let err = std::fs::read(&err_path).unwrap_or_default();
    if !err.is_empty() {
        output.push_str("\n[stderr]\n");
        output.push_str(&String::from_utf8_lossy(&err));
    }
    let panicked = String::from_utf8_lossy(&err)
        .lines()
        .any(|l| l.starts_with("thread '") && l.contains("' panicked at"));
    Ran {
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out,
        output,
        panicked,
        elapsed,
    }
}

fn failed(why: &str) -> Ran {
    Ran {
        code: None,
        signal: None,
        timed_out: false,
        output: why.to_string(),
        panicked: false,
        elapsed: Duration::ZERO,
    }
}

/// Applies `reply` with `tool` in a fresh copy of `template` and judges the
/// result against `want` (the files of `after/`).
pub fn apply(
    tool: Tool,
    reply: &Path,
    args: &[&str],
    template: &Path,
    scratch: &Path,
    want: &Tree,
    keep: bool,
) -> Outcome {
    let work = scratch.join("work");
    let _ = std::fs::remove_dir_all(&work);
    if let Err(e) = copy_tree(template, &work) {
        return Outcome::new(Class::Bug, format!("copying the template: {e}"));
    }
    let mut cmd = match tool {
        Tool::Clada => {
            let mut c = Command::new(clada_binary());
            c.arg("apply")
                .arg("--format")
                .arg("json")
                .args(args)
                .arg(reply);
            c
        }
        Tool::GitApply | Tool::GitApplyRecount => {
            let mut c = Command::new("git");
            c.arg("apply");
            if tool == Tool::GitApplyRecount {
                c.arg("--recount");
            }
            c.arg(reply);
            c
        }
        Tool::GnuPatch => {
            let mut c = Command::new("patch");
            c.args([
                "-p1",
                "--fuzz=2",
                "--batch",
                "--no-backup-if-mismatch",
                "-r",
                "-",
                "-i",
            ])
            .arg(reply);
            c
        }
    };
    cmd.current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE);
    let ran = run(cmd, scratch);
    let mut outcome = judge(tool, &ran, &work, scratch, want);
    outcome.elapsed = Some(ran.elapsed);
    outcome.report = ran.output;
    if keep {
        let kept = scratch.join(format!("kept-{}", tool.name().replace(' ', "_")));
        let _ = std::fs::remove_dir_all(&kept);
        let _ = std::fs::rename(&work, &kept);
        outcome
            .reason
            .push_str(&format!(" (work tree kept in {})", kept.display()));
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }
    outcome
}

/// The built `git-clada` binary of this package.
pub fn clada_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-clada"))
}

fn judge(tool: Tool, ran: &Ran, work: &Path, scratch: &Path, want: &Tree) -> Outcome {
    if ran.timed_out {
        return Outcome::new(
            Class::Crash,
            format!("no answer in {} s", TIMEOUT.as_secs()),
        );
    }
    if ran.panicked {
        return Outcome::new(Class::Crash, "a panic".into());
    }
    if let Some(sig) = ran.signal {
        return Outcome::new(Class::Crash, format!("killed by signal {sig}"));
    }
    match (tool, ran.code) {
        (_, None) => Outcome::new(Class::Crash, "no exit status".into()),
        (_, Some(0)) => {
            let got = classify::read_tree(work);
            let (mut problems, diff) = classify::compare(want, &got);
            if tool == Tool::Clada {
                let mut ls = git(work, scratch);
                ls.args(["ls-tree", "-r", "-z", "HEAD"]);
                match ls.output() {
                    Ok(o) if o.status.success() => {
                        problems.extend(classify::compare_head(want, &o.stdout))
                    }
                    _ => problems.push("HEAD: cannot list its tree".into()),
                }
            }
            if problems.is_empty() {
                Outcome::new(Class::Exact, String::new())
            } else {
                let mut o = Outcome::new(Class::Wrong, problems.join("; "));
                o.diff = diff;
                o
            }
        }
        // apply.md §7: 1 a task failed, 2 fatal or unusable input, 3 the
        // branch moved. Peers: any non-zero exit says they failed.
        (Tool::Clada, Some(c @ 1..=3)) => Outcome::new(Class::Refused, format!("exit {c}")),
        (Tool::Clada, Some(c)) => {
            Outcome::new(Class::Crash, format!("exit {c}, not a documented status"))
        }
        // (git apply dies with 128 on a patch it cannot read: a refusal.)
        (_, Some(c)) => Outcome::new(Class::Refused, format!("exit {c}")),
    }
}
