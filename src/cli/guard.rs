//! What every history command does before it looks at anything: open the
//! repository, refuse to act in the middle of a git operation, take the
//! lock, and finish an update that a crash cut short. Also the helpers
//! their messages share.

use std::time::Duration;

use crate::git::commit::{Identity, UpdateError};
use crate::git::lock::Lock;
use crate::git::{GitError, Head, ObjectId, Repository};
use crate::history::session;

use super::config::{Layers, duration_arg, parse_duration};
use super::{CliError, Outcome};

/// The lock timeout flag of the commands that change something.
#[derive(Debug, Clone, clap::Args)]
pub struct LockArgs {
    /// How long to wait for another clada command to finish [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub lock_timeout: Option<Duration>,
}

/// An open repository, locked for one command.
pub struct Guarded {
    pub repo: Repository,
    /// Who writes clada's commits and reflog entries.
    pub author: Identity,
    _lock: Lock,
}

pub fn git_err(e: GitError) -> CliError {
    CliError::new(e.to_string())
}

/// The repository around the current directory, with a working tree.
pub fn open() -> Result<Repository, CliError> {
    let Some(repo) = Repository::discover(std::path::Path::new(".")).map_err(git_err)? else {
        return Err(
            CliError::new("not a git repository (or any of its parents)")
                .hint("run it inside the repository you applied replies to"),
        );
    };
    if repo.workdir().is_none() {
        return Err(CliError::new(
            "the repository is bare: the history commands need a working tree",
        ));
    }
    Ok(repo)
}

/// Opens, checks and locks the repository for a command that changes it.
pub fn guard(args: &LockArgs) -> Result<Guarded, CliError> {
    let repo = open()?;
    refuse_operation_in_progress(&repo, "moving history")?;
    let author = author(&repo)?;
    let lock = take_lock(&repo, args.lock_timeout, "clada command")?;
    if let Head::Branch { name, .. } = repo.head().map_err(git_err)? {
        for said in crate::transaction::finish_interrupted_update(&repo, &name)? {
            eprintln!("clada: {said}");
        }
    }
    finish_interrupted_switch(&repo)?;
    // Files an apply could not write are written once the cause is gone.
    repo.retry_unwritten().map_err(git_err)?;
    Ok(Guarded {
        repo,
        author,
        _lock: lock,
    })
}

/// Refuses to act during a rebase, merge, cherry-pick, revert or bisect:
/// the one message every command gives (checked before anything else,
/// since a rebase also detaches HEAD). `doing` names the act: "applying".
pub fn refuse_operation_in_progress(repo: &Repository, doing: &str) -> Result<(), CliError> {
    match repo.operation_in_progress() {
        Some(operation) => Err(CliError::new(format!(
            "a git {operation} is in progress: {doing} now could mix its unresolved state into clada's commits"
        ))
        .hint(format!(
            "finish it (git {operation} --continue) or abort it (git {operation} --abort) first; git status says how"
        ))),
        None => Ok(()),
    }
}

/// Finishes a working-tree switch of a history command that a crash cut
/// short (called under the lock, by every command that changes anything).
/// Takes clada's lock, waiting `--lock-timeout` (flag, else git config
/// `clada.lockTimeout` — never the team file, which is read under the
/// lock — else 10s); `other` names what may be holding it.
pub fn take_lock(repo: &Repository, flag: Option<Duration>, other: &str) -> Result<Lock, CliError> {
    let timeout = Layers::new(Some(repo))
        .get(flag, "lockTimeout", parse_duration, "a duration")?
        .unwrap_or(Duration::from_secs(10));
    let lock = crate::git::lock::acquire(repo.git_dir(), timeout).map_err(|e| {
        CliError::new(e.to_string()).hint(format!(
            "wait for the other {other} to finish, or raise --lock-timeout"
        ))
    })?;
    crate::fault::point("locked");
    Ok(lock)
}

pub fn finish_interrupted_switch(repo: &Repository) -> Result<(), CliError> {
    match repo.finish_pending_switch() {
        Ok(None) => Ok(()),
        Ok(Some(done)) => {
            eprintln!(
                "clada: finished updating the working tree after an interrupted history command ({} file(s) written, {} removed)",
                done.written, done.removed
            );
            for (path, why) in &done.kept {
                eprintln!("clada: kept {path}: {why}");
            }
            Ok(())
        }
        Err(e) => Err(CliError::new(format!(
            "an interrupted history command's update of the working tree cannot be finished: {e}"
        ))
        .hint(format!(
            "its record is kept in {}; fix the cause (another program holding .git/index.lock?) and run the command again, which finishes it first",
            repo.git_dir().join("clada-switch").display()
        ))),
    }
}

/// The identity of clada's commits: `git config clada.gitAuthor`, else
/// `clada <clada@localhost>`.
pub fn author(repo: &Repository) -> Result<Identity, CliError> {
    match repo.config_string("clada.gitAuthor") {
        None => Ok(Identity::default()),
        Some(text) => Identity::parse(&text).ok_or_else(|| {
            CliError::new(format!(
                "git config clada.gitAuthor = {text:?} is not of the form 'Name <email>'"
            ))
        }),
    }
}

/// `main` for `refs/heads/main`.
pub fn short_branch(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

/// The branch HEAD is on and its commit (`None`: unborn), or a refusal
/// that explains a detached HEAD.
pub fn on_branch(repo: &Repository, command: &str) -> Result<(String, Option<ObjectId>), CliError> {
    match repo.head().map_err(git_err)? {
        Head::Branch { name, commit } => Ok((name, commit)),
        Head::Detached(_) => {
            let stepped = session::read(repo).map_err(git_err)?;
            let e = CliError::new(format!(
                "HEAD is detached: `git clada {command}` works on a branch"
            ));
            Err(match stepped {
                Some(s) => e.hint(format!(
                    "you stepped back from {}; return with `git clada step-forward --all` (it restores your saved work), then run `git clada {command}`",
                    short_branch(&s.branch)
                )),
                None => e.hint(
                    "switch to a branch first (git switch <branch>, or git switch -c <new-branch>)",
                ),
            })
        }
    }
}

/// Refuses when a step-back session is open: moving the branch now would
/// strand the work it saved.
pub fn refuse_open_session(repo: &Repository, command: &str) -> Result<(), CliError> {
    refuse_session_on(repo, command, None)
}

/// [`refuse_open_session`] for a session on `branch` (full name) only;
/// every session with `None`.
pub fn refuse_session_on(
    repo: &Repository,
    command: &str,
    branch: Option<&str>,
) -> Result<(), CliError> {
    if let Some(s) = session::read(repo).map_err(git_err)?
        && branch.is_none_or(|b| b == s.branch)
    {
        return Err(CliError::new(format!(
            "a step-back session on {} is open (your saved work is at {})",
            short_branch(&s.branch),
            s.ref_name
        ))
        .hint(format!(
            "finish it first with `git clada step-forward --all` (it restores your saved work), then run `git clada {command}`"
        )));
    }
    Ok(())
}

/// Refuses, unless `force`, to rewrite history that starts at `oldest`
/// when a remote-tracking branch already has it: `what` says what the
/// command would do ("undoing it"), `published` what is published ("the
/// apply is", "some of these commits are"), `hint` the way out.
pub fn refuse_published(
    repo: &Repository,
    oldest: ObjectId,
    force: bool,
    (published, what, hint): (&str, &str, &str),
) -> Result<(), CliError> {
    if force {
        return Ok(());
    }
    let remotes = repo.remote_branches_containing(oldest).map_err(git_err)?;
    if remotes.is_empty() {
        return Ok(());
    }
    Err(CliError::new(format!(
        "{published} already on {}: {what} would rewrite published history; nothing was changed",
        list_paths(&remotes, 5)
    ))
    .hint(hint))
}

/// The paths of a listing, at most `max`, then how many more.
pub fn list_paths(paths: &[String], max: usize) -> String {
    let mut out: Vec<String> = paths
        .iter()
        .take(max)
        .map(|p| crate::quote::shown(p).into_owned())
        .collect();
    if paths.len() > max {
        out.push(format!("and {} more", paths.len() - max));
    }
    out.join(", ")
}

/// Reports a compare-and-swap that lost a race: exit 3.
pub fn lost_race(e: UpdateError, what: &str) -> Result<Outcome, CliError> {
    match e {
        UpdateError::Moved { .. } => {
            eprintln!("clada: {e}");
            eprintln!("clada: {what}: nothing was changed; run the command again");
            Ok(Outcome::BranchMoved)
        }
        UpdateError::Git(e) => Err(git_err(e)),
    }
}

/// The conflicts of a switch as a refusal.
pub fn refuse_conflicts(conflicts: &[(String, String)], command: &str) -> CliError {
    let listed: Vec<String> = conflicts
        .iter()
        .take(10)
        .map(|(p, why)| format!("\n  {p}: {why}"))
        .collect();
    let more = if conflicts.len() > 10 {
        format!("\n  and {} more", conflicts.len() - 10)
    } else {
        String::new()
    };
    CliError::new(format!(
        "`git clada {command}` would overwrite or remove files that are in no commit; nothing was changed:{}{more}",
        listed.concat()
    ))
    .hint("move those files out of the way (or commit them), then run the command again")
}
