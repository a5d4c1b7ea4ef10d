//! A hermetic repository for the history command tests: run clada and git
//! in it with fixed dates, write and read files, and look at its state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{clada, git_command, scratch};

/// The date of every commit, unless a test sets its own.
pub const DATE: &str = "1700000000 +0000";

pub struct Repo {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    path: PathBuf,
}

impl Repo {
    /// A repository on `main` with `files` committed by the user (no
    /// commit when `files` is empty: the branch is unborn).
    pub fn new(files: &[(&str, &str)]) -> Repo {
        let tmp = scratch();
        let home = tmp.path().join("home");
        let path = tmp.path().join("repo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&path).unwrap();
        let r = Repo {
            _tmp: tmp,
            home,
            path,
        };
        r.git(&["init", "-q", "-b", "main"]);
        for (p, c) in files {
            r.write(p, c);
        }
        if !files.is_empty() {
            r.commit("initial");
        }
        r
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `git-clada` in the repository, with fixed dates.
    pub fn clada(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = clada(&self.home, &self.path);
        cmd.env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .args(args);
        cmd
    }

    /// Runs `git clada <args>` and returns its outcome.
    pub fn run(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        self.clada(args).assert()
    }

    /// Applies `reply` from stdin; it must succeed.
    pub fn apply(&self, reply: &str) {
        self.clada(&["apply", "-"])
            .write_stdin(reply.to_string())
            .assert()
            .success();
    }

    /// Applies a WRITE of `content` to `path`.
    pub fn apply_write(&self, path: &str, content: &str) {
        self.apply(&write_reply(path, content));
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.path.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.path.join(path)).ok()
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path.join(path)).unwrap();
    }

    /// `git <args>`, which must succeed; its trimmed output.
    pub fn git(&self, args: &[&str]) -> String {
        let out = git_command(&self.path, args)
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Commits everything as the user.
    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&[
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@u",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        ]);
    }

    /// The commit `rev` names, or "" when it names none.
    pub fn rev(&self, rev: &str) -> String {
        let out = git_command(&self.path, &["rev-parse", "--verify", "-q", rev])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// `git status --porcelain` (untracked files listed one by one).
    pub fn status(&self) -> String {
        let out = git_command(
            &self.path,
            &["status", "--porcelain", "--untracked-files=all"],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "git status failed");
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    }

    /// Every file of the working tree (outside `.git`) with its content.
    pub fn worktree(&self) -> BTreeMap<String, String> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let p = e.path();
                if p.file_name().unwrap() == ".git" {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    walk(root, &p, out);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.path, &self.path, &mut out);
        out
    }

    /// The references under `prefix` with their targets.
    pub fn refs(&self, prefix: &str) -> Vec<String> {
        let out = self.git(&["for-each-ref", "--format=%(refname)", prefix]);
        out.lines().map(str::to_string).collect()
    }

    /// Whether HEAD is detached.
    pub fn detached(&self) -> bool {
        git_command(&self.path, &["symbolic-ref", "-q", "HEAD"])
            .output()
            .unwrap()
            .status
            .code()
            == Some(1)
    }

    /// `git fsck` finds nothing wrong (dangling objects are fine).
    pub fn assert_fsck_clean(&self) {
        let out = git_command(&self.path, &["fsck", "--no-dangling", "--no-progress"])
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "git fsck: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A reply that writes `content` to `path`.
pub fn write_reply(path: &str, content: &str) -> String {
    format!("<---WRITE file=\"{path}\"--->\n{content}<---END--->\n")
}

/// The text of a command's standard output.
pub fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}
