//! Pushing a request through git's HTTP remote helper directly, without
//! `git push` in between.
//!
//! Over HTTP, `git push` is a front: it runs `git remote-http` (one more
//! git process, which finds and runs `git-remote-http`), says to it
//! `push <src>:<dst>`, and prints what the helper answers. For a request
//! (a single new reference, no branch along) that front is two cold git
//! processes, about 3 ms of CPU: a fifth of what a request costs beyond a
//! plain push (doc/performance.md). So push-reply speaks the helper's
//! protocol (gitremote-helpers(7): `capabilities`, `list for-push`,
//! `push`) itself, and writes the helper's answer as `git push
//! --porcelain` would have, for the rest of push-reply to read as before.
//!
//! It does so only where `git push` would do nothing more than that, and
//! leaves the push to `git push` otherwise: a remote that is not one
//! HTTP(S) URL (another transport, several push URLs, a `vcs` helper),
//! any `url.<base>.insteadOf` or `pushInsteadOf` rewriting, a `pre-push`
//! hook (git runs it; we do not), signed pushes (`push.gpgSign`), or no
//! helper on PATH. git puts its own programs' directory first on PATH for
//! the commands it starts, so `git clada push-reply` finds the helper of
//! the git that started it; `git-clada push-reply` run by itself finds
//! none and uses `git push`.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::git::Repository;

/// The helper to push to a remote with, and how to call it.
pub(super) struct Helper {
    program: PathBuf,
    remote: String,
    url: String,
    git_dir: PathBuf,
}

impl Helper {
    /// The helper `git push` would run to push to `remote`, when that is
    /// all it would do (the module's doc says when not).
    pub(super) fn for_remote(repo: &Repository, remote: &str) -> Option<Helper> {
        let key = |name: &str| format!("remote.{remote}.{name}");
        let urls = repo.config_strings(&key("url"))?;
        let push_urls = repo.config_strings(&key("pushurl")).unwrap_or_default();
        let url = match (&urls[..], &push_urls[..]) {
            (_, [push]) => push,
            ([url], []) => url,
            _ => return None,
        };
        let scheme = if url.starts_with("https://") {
            "https"
        } else if url.starts_with("http://") {
            "http"
        } else {
            return None;
        };
        if repo.config_string(&key("vcs")).is_some()
            || repo.config_string("push.gpgSign").is_some()
            || repo.config_has_section("url")
        {
            return None;
        }
        let hooks = repo.hooks_dir().ok()?;
        if std::fs::symlink_metadata(hooks.join("pre-push")).is_ok() {
            return None;
        }
        let program = crate::run::spawn::resolve(&format!("git-remote-{scheme}"))?;
        Some(Helper {
            program,
            remote: remote.to_string(),
            url: url.clone(),
            git_dir: std::path::absolute(repo.git_dir()).ok()?,
        })
    }

    /// The helper's command line, as `git push` starts it: the remote's
    /// name and URL, the repository in `GIT_DIR`.
    pub(super) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.arg(&self.remote)
            .arg(&self.url)
            .env("GIT_DIR", &self.git_dir);
        cmd
    }

    /// What is said to the helper to push `src` to the new reference
    /// `dst`: the commands `git push` gives it, in one go (the helper
    /// reads them one by one and ends at the end of its input).
    pub(super) fn script(src: &str, dst: &str) -> String {
        format!("capabilities\nlist for-push\npush {src}:{dst}\n\n")
    }

    /// The helper's run `ran` as `git push --porcelain` reports a push of
    /// `src` to `dst`: its status line for the reference (`*` taken, `!`
    /// refused, with the helper's reason), a failure unless the helper
    /// ended well and took it, and the helper's standard error as it is
    /// (the server's `remote:` lines and git's own words).
    pub(super) fn as_porcelain(&self, ran: Output, src: &str, dst: &str) -> Output {
        use std::os::unix::process::ExitStatusExt as _;
        let said = String::from_utf8_lossy(&ran.stdout);
        // Only the push's answer has lines that start so: capabilities are
        // words, listed references an id or `@`.
        let taken = format!("ok {dst}");
        let refused = format!("error {dst} ");
        let mut porcelain = format!("To {}\n", self.url);
        let mut ok = false;
        for line in said.lines() {
            if line == taken {
                ok = true;
                porcelain.push_str(&format!("*\t{src}:{dst}\t[new reference]\n"));
            } else if let Some(why) = line.strip_prefix(&refused) {
                let kind = match why {
                    "non-fast-forward" | "fetch first" | "stale info" | "already exists" => {
                        "rejected"
                    }
                    _ => "remote rejected",
                };
                porcelain.push_str(&format!("!\t{src}:{dst}\t[{kind}] ({why})\n"));
            }
        }
        let code = if ok && ran.status.success() {
            porcelain.push_str("Done\n");
            0
        } else {
            ran.status.code().filter(|c| *c != 0).unwrap_or(1)
        };
        Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: porcelain.into_bytes(),
            stderr: ran.stderr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt as _;

    fn helper() -> Helper {
        Helper {
            program: PathBuf::from("/nonexistent/git-remote-http"),
            remote: "origin".into(),
            url: "http://127.0.0.1:1/r.git".into(),
            git_dir: PathBuf::from("/nonexistent/.git"),
        }
    }

    fn ran(code: i32, stdout: &str, stderr: &str) -> Output {
        Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    const LISTED: &str = "fetch\noption\npush\ncheck-connectivity\n\n\
        1111111111111111111111111111111111111111 refs/heads/main\n\
        @refs/heads/main HEAD\n\n";

    #[test]
    fn a_taken_reference_reads_as_git_push_porcelain_does() {
        let out = helper().as_porcelain(
            ran(
                0,
                &format!("{LISTED}ok refs/clada/inbox/x\n\n"),
                "remote: clada: hi\n",
            ),
            "abc",
            "refs/clada/inbox/x",
        );
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "To http://127.0.0.1:1/r.git\n*\tabc:refs/clada/inbox/x\t[new reference]\nDone\n"
        );
        assert_eq!(out.stderr, b"remote: clada: hi\n");
    }

    #[test]
    fn a_refusal_or_no_answer_is_a_failure_with_the_helpers_words() {
        let out = helper().as_porcelain(
            ran(
                0,
                &format!("{LISTED}error refs/clada/inbox/x pre-receive hook declined\n\n"),
                "",
            ),
            "abc",
            "refs/clada/inbox/x",
        );
        assert!(!out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "To http://127.0.0.1:1/r.git\n!\tabc:refs/clada/inbox/x\t[remote rejected] (pre-receive hook declined)\n"
        );
        // The server never said: the line says so, as git push's does.
        let lost = helper().as_porcelain(
            ran(
                1,
                &format!("{LISTED}error refs/clada/inbox/x remote failed to report status\n\n"),
                "",
            ),
            "abc",
            "refs/clada/inbox/x",
        );
        assert!(!lost.status.success());
        assert!(
            String::from_utf8(lost.stdout)
                .unwrap()
                .contains("remote failed to report status")
        );
        // The helper died before the push (the server could not be
        // reached): no line, its exit code, its words.
        let died = helper().as_porcelain(
            ran(
                128,
                "fetch\noption\npush\n\n",
                "fatal: unable to access 'x'\n",
            ),
            "abc",
            "refs/clada/inbox/x",
        );
        assert_eq!(died.status.code(), Some(128));
        assert_eq!(
            String::from_utf8(died.stdout).unwrap(),
            "To http://127.0.0.1:1/r.git\n"
        );
        assert_eq!(died.stderr, b"fatal: unable to access 'x'\n");
        // Another reference's answer is not ours; an `ok` with a failed
        // helper is not a success.
        let other = helper().as_porcelain(
            ran(0, &format!("{LISTED}ok refs/clada/inbox/y\n\n"), ""),
            "abc",
            "refs/clada/inbox/x",
        );
        assert!(!other.status.success());
        let failed = helper().as_porcelain(
            ran(1, &format!("{LISTED}ok refs/clada/inbox/x\n\n"), ""),
            "abc",
            "refs/clada/inbox/x",
        );
        assert!(!failed.status.success());
    }
}
