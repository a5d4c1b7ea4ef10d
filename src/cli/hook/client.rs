//! The client hook, post-commit: CSL written in a commit message is applied
//! on top of the new commit (git.md §5), as `git clada apply --from-commit`.
//!
//! A commit whose message holds no operation (and no broken marker) is left
//! alone without a word. clada's own commits are never applied: their
//! messages start with `[clada:` (gix, which writes them, runs no hooks
//! anyway; the check keeps a cherry-picked or amended clada commit from
//! being read as a request). During a rebase, cherry-pick or other
//! operation the commits are replays, not requests: the hook says so and
//! does nothing. On a detached HEAD, where apply would refuse, it says how
//! to apply on a branch. The commit itself is made either way.

use crate::git::{Head, Repository};

use crate::cli::apply::{ApplyArgs, parse_input, run_apply};
use crate::cli::{CliError, Outcome, ReplyInput, settings};

/// Prefix of the messages of the commits clada writes.
const CLADA_COMMIT: &[u8] = b"[clada:";

pub fn post_commit(repo: Repository) -> Result<Outcome, CliError> {
    let git = |e: crate::git::GitError| CliError::new(e.to_string());
    if repo.workdir().is_none() {
        return Ok(Outcome::Success);
    }
    let (commit, on_branch) = match repo.head().map_err(git)? {
        Head::Branch {
            commit: Some(id), ..
        } => (id, true),
        Head::Branch { commit: None, .. } => return Ok(Outcome::Success),
        Head::Detached(id) => (id, false),
    };
    let message = repo.commit_message(commit).map_err(git)?;
    if message.starts_with(CLADA_COMMIT) {
        return Ok(Outcome::Success);
    }
    let delims = settings::delimiters_in(Some(&repo), None, None)?;
    let input = ReplyInput::from_bytes(String::new(), message);
    let choice = crate::cli::apply::syntax_choice(None, Some(&repo))?;
    let reply = parse_input(&input, choice, &delims);
    // A message without edits is an ordinary commit: not a word. A
    // message that shows a diff explains the change it commits: it is a
    // request only where the repository says its messages are diffs
    // (clada.syntax diff).
    let diff_by_detection = reply.syntax == crate::syntax::Syntax::Diff
        && choice != crate::syntax::Choice::Only(crate::syntax::Syntax::Diff);
    if reply.is_empty() || diff_by_detection {
        return Ok(Outcome::Success);
    }
    let short = repo.short(commit);
    if let Some(operation) = repo.operation_in_progress() {
        // A rebase or cherry-pick replays commits whose CSL was applied
        // already (their post commits are replayed too): not requests.
        eprintln!(
            "clada: a git {operation} is in progress, so the CSL in the message of {short} was not applied"
        );
        return Ok(Outcome::Success);
    }
    if !on_branch {
        eprintln!(
            "clada: HEAD is detached, so the CSL in the message of {short} was not applied; apply it on a branch with: git clada apply --from-commit {short}"
        );
        return Ok(Outcome::Success);
    }
    drop(repo);
    // By id, so that exactly this commit's message is applied.
    run_apply(ApplyArgs {
        from_commit: Some(commit.to_string()),
        ..ApplyArgs::default()
    })
}
