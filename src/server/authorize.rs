//! Who pushed a request, and whether they may write its branch
//! (doc/hooks.md, "Branch permissions").
//!
//! A request moves a branch on the server with the hook's rights, not its
//! pusher's: someone allowed to push only requests would otherwise write
//! branches the server forbids them to push. The pusher is the identity
//! the server puts in the hook's environment (`clada.pusherVariables`),
//! and `clada.authorize`, a command, decides per branch. Both are read
//! from the server's git config only: a pushed team file must not choose
//! who is allowed. When `clada.authorize` is set, everything that is not
//! a plain yes (no pusher, a command that cannot start, a signal) is a no.

use std::io::{Read, Seek};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::git::{ObjectId, Repository};

use super::Error;

/// Where servers put the authenticated user, tried in this order: HTTP
/// (the web server's `REMOTE_USER`), gitolite, Gitea and Forgejo, GitLab.
const PUSHER_VARIABLES: &[&str] = &["REMOTE_USER", "GL_USER", "GITEA_PUSHER_NAME", "GL_USERNAME"];

/// How much of the command's output a refusal quotes.
const QUOTED: usize = 400;

/// How long the command may take before it is stopped and the answer is
/// no: post-receive may ask it while holding the branch's turn (and,
/// with `clada.serverRun`, the repository's lock).
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The pusher's identity: the first of `clada.pusherVariables` (every
/// value, names separated by spaces or commas; default
/// [`PUSHER_VARIABLES`]) set to a usable name. A value with control
/// characters is no name: it would break the trailer it is recorded in.
pub(super) fn pusher(repo: &Repository) -> Option<String> {
    let configured: Option<Vec<String>> = repo.config_strings("clada.pusherVariables").map(|v| {
        v.iter()
            .flat_map(|v| v.split([',', ' ', '\t']))
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect()
    });
    let names =
        configured.unwrap_or_else(|| PUSHER_VARIABLES.iter().map(|n| n.to_string()).collect());
    names.iter().find_map(|name| {
        let value = std::env::var(name).ok()?;
        let value = value.trim();
        (!value.is_empty() && !value.chars().any(char::is_control)).then(|| value.to_string())
    })
}

/// `clada.authorize`: the command that says whether a pusher may write a
/// branch.
pub struct Authorize {
    /// The command as configured (for messages).
    text: String,
    argv: Vec<String>,
}

impl Authorize {
    /// `clada.authorize` from the server's git config; `None` when unset.
    /// Set but empty, or not splittable, is an error: a server that meant
    /// to check must not quietly stop checking.
    pub fn read(repo: &Repository) -> Result<Option<Authorize>, Error> {
        let Some(text) = repo.config_string("clada.authorize") else {
            return Ok(None);
        };
        let fail = |why: String| {
            Error::new(format!("git config clada.authorize = {text:?}: {why}"))
                .hint("a command and its arguments, run without a shell: it gets the pusher, the repository and the branch as its last three arguments (doc/hooks.md)")
        };
        let argv = shell_words::split(&text).map_err(|e| fail(e.to_string()))?;
        if argv.is_empty() {
            return Err(fail("it is set but names no command".into()));
        }
        Ok(Some(Authorize { text, argv }))
    }

    /// Whether `pusher` may write `branch` (a full reference name):
    /// `Err` says why not, naming the branch. The command gets the
    /// pusher, the repository's path and the branch's short name as its
    /// last three arguments, and the same in `CLADA_PUSHER`,
    /// `CLADA_REPOSITORY`, `CLADA_BRANCH`, with the full reference name
    /// in `CLADA_REF`; exit 0 allows.
    pub(super) fn check(
        &self,
        repo: &Repository,
        pusher: Option<&str>,
        branch: &str,
    ) -> Result<(), String> {
        let short = super::receive::short_branch(branch);
        let Some(pusher) = pusher else {
            return Err(format!(
                "no pusher identity: git config clada.authorize is set, and none of {} is set in the hook's environment, so who may write {short} cannot be checked",
                self.variables_said(repo)
            ));
        };
        let path = repository_path(repo.git_dir());
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .args([pusher, path.as_str(), short])
            .env("CLADA_PUSHER", pusher)
            .env("CLADA_REPOSITORY", &path)
            .env("CLADA_BRANCH", short)
            .env("CLADA_REF", branch)
            .current_dir(repo.git_dir());
        let (status, said) = match run(cmd) {
            Ok(Some(done)) => done,
            Ok(None) => {
                return Err(format!(
                    "git config clada.authorize ({}) did not answer within {} s and was stopped; {pusher} may not write {short}",
                    self.text,
                    ANSWER_WITHIN.as_secs()
                ));
            }
            Err(e) => {
                return Err(format!(
                    "git config clada.authorize ({}) could not be run: {e}; {pusher} may not write {short} until it can",
                    self.text
                ));
            }
        };
        if status.success() {
            return Ok(());
        }
        let how = match status.code() {
            Some(code) => format!("exit {code}"),
            None => "killed by a signal".to_string(),
        };
        let said = said.trim().lines().collect::<Vec<_>>().join("; ");
        let said = crate::quote::visible(&said);
        let said: String = said.chars().take(QUOTED).collect();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(" ({said})")
        };
        Err(format!(
            "{pusher} may not write {short}: git config clada.authorize ({}) said no, {how}{said}",
            self.text
        ))
    }

    fn variables_said(&self, repo: &Repository) -> String {
        match repo.config_strings("clada.pusherVariables") {
            Some(v) => format!("git config clada.pusherVariables ({})", v.join(", ")),
            None => PUSHER_VARIABLES.join(", "),
        }
    }
}

/// Runs `cmd` with stdin closed and its output (both streams) in a
/// temporary file, not a pipe: a process it leaves behind cannot keep the
/// hook waiting for the pipe's end. Its status and output, or `None`
/// when it did not end within [`ANSWER_WITHIN`] (it is killed).
fn run(mut cmd: Command) -> std::io::Result<Option<(ExitStatus, String)>> {
    let mut file = tempfile::tempfile()?;
    cmd.stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file.try_clone()?);
    let mut child = cmd.spawn()?;
    let deadline = Instant::now() + ANSWER_WITHIN;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut said = Vec::new();
    file.rewind()?;
    // Only the start is quoted: a command that wrote gigabytes is not read.
    file.take(64 << 10).read_to_end(&mut said)?;
    Ok(Some((status, String::from_utf8_lossy(&said).into_owned())))
}

/// Where pre-receive records who pushed each request, by request id: the
/// hook that answers it may be another push's, run for another pusher,
/// when the request's own hook was stopped (`request.rs` `recover`).
/// Written before the request's reference exists, so no hook can find a
/// request without its pusher.
fn recorded_at(repo: &Repository, id: &str) -> std::path::PathBuf {
    repo.git_dir()
        .join("clada")
        .join("pushers")
        .join(crate::hook::requests::claim_file(id))
}

/// Records `pusher` as the pusher of request `id`, the notes commit
/// `commit`.
pub(super) fn record(
    repo: &Repository,
    id: &str,
    commit: ObjectId,
    pusher: &str,
) -> std::io::Result<()> {
    let path = recorded_at(repo, id);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{commit}\n{pusher}\n"))
}

/// The pusher recorded for request `id`, if any, when it was recorded
/// for this very commit: a push of another commit under the same id
/// (refused, but after its pre-receive ran) does not lend it its pusher.
pub(super) fn recorded(repo: &Repository, id: &str, commit: ObjectId) -> Option<String> {
    let text = std::fs::read_to_string(recorded_at(repo, id)).ok()?;
    let (for_commit, pusher) = text.split_once('\n')?;
    let pusher = pusher.trim();
    (ObjectId::from_hex(for_commit.as_bytes()).ok() == Some(commit)
        && !pusher.is_empty()
        && !pusher.chars().any(char::is_control))
    .then(|| pusher.to_string())
}

/// Forgets the pusher of an answered request (its result keeps it).
pub(super) fn forget(repo: &Repository, id: &str) {
    // Left behind, it is only a few bytes, replaced if the id comes again.
    let _ = std::fs::remove_file(recorded_at(repo, id));
}

/// The repository's path as the command gets it: absolute, so that it
/// does not depend on where the command runs.
fn repository_path(git_dir: &Path) -> String {
    std::fs::canonicalize(git_dir)
        .unwrap_or_else(|_| git_dir.to_path_buf())
        .to_string_lossy()
        .into_owned()
}
