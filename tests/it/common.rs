//! Helpers shared by the integration tests.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use assert_cmd::Command;

/// The `git-clada` binary in a hermetic environment: no inherited variables
/// but `PATH`, no system or global git config, `HOME` in `home`, and `cwd`
/// as working directory.
pub fn clada(home: &Path, cwd: &Path) -> Command {
    Command::from_std(clada_std(home, cwd))
}

/// [`clada`] as a plain `std` command (for a pseudo-terminal, say).
pub fn clada_std(home: &Path, cwd: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_git-clada"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .current_dir(cwd);
    cmd
}

/// A temporary directory that is not inside any repository.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

/// `git` in `dir` with a cleared environment and no global configuration.
pub fn git_command(dir: &Path, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    cmd
}

/// Runs `git` hermetically in `dir` (for setting up test repositories).
/// Its output is shown only when it fails: git's warnings (CRLF
/// conversions, say) are not the test's output.
pub fn git(dir: &Path, args: &[&str]) {
    let out = git_command(dir, args).output().expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The standard output of a hermetic `git` in `dir`, trimmed.
pub fn git_output(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir, args).output().expect("run git");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// The fixed date of every test commit.
pub const DATE: &str = "2026-01-01T00:00:00Z";

/// A repository with `files` committed on `main`.
pub fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = scratch();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    if !files.is_empty() {
        git(dir.path(), &["add", "-A"]);
        commit(dir.path(), &["-q", "-m", "initial"]);
    }
    dir
}

/// `git` output in `dir`, trimmed.
pub fn out(dir: &Path, args: &[&str]) -> String {
    git_output(dir, args)
}

/// The content of `path` in `dir`.
pub fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

pub fn apply(dir: &Path, args: &[&str], stdin: &str) -> assert_cmd::assert::Assert {
    clada(dir, dir)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .arg("apply")
        .args(args)
        .write_stdin(stdin.to_string())
        .assert()
}

pub fn json(a: &assert_cmd::assert::Assert) -> Value {
    serde_json::from_slice(&a.get_output().stdout).expect("a JSON report")
}

/// `git commit ARGS` in `dir` as the test identity.
pub fn commit(dir: &Path, args: &[&str]) {
    let mut all = vec!["-c", "user.name=t", "-c", "user.email=t@t", "commit"];
    all.extend_from_slice(args);
    git(dir, &all);
}

/// Whether the built git-clada honours `CLADA_FAULT` (src/fault.rs): a
/// debug build aborts at the named point, a release build ignores it.
/// Asked of the binary itself, once: `git clada undo` in a new repository
/// takes the lock (the point `locked`) before it finds nothing to undo.
/// A test that needs a fault says so and checks nothing when this is
/// false; it cannot be false of a debug build of the tests, whose binary
/// cargo builds with the same profile.
pub fn faults_honoured() -> bool {
    static HONOURED: OnceLock<bool> = OnceLock::new();
    *HONOURED.get_or_init(|| {
        let dir = scratch();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        let out = clada_std(dir.path(), dir.path())
            .env("CLADA_FAULT", "locked")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .arg("undo")
            .output()
            .expect("run git-clada");
        let honoured = out.status.signal() == Some(libc::SIGABRT);
        assert!(
            honoured || !cfg!(debug_assertions),
            "a debug build of git-clada did not stop at the fault point `locked` of `undo` ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        honoured
    })
}
