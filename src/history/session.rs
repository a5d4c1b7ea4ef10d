//! The step-back session: where `git clada step-back` keeps what it needs
//! to bring the user back.
//!
//! One session per working tree, at `refs/clada/steps/saved` (a linked
//! worktree uses `refs/clada/steps/worktrees/<id>`: each has its own HEAD).
//! The reference points at a record commit:
//!
//! - its tree is the user's working tree when they stepped back (untracked
//!   files included): the work to restore at the tip;
//! - its first parent is the branch tip they stepped back from;
//! - a second parent, present when the index differed from the tip, is a
//!   commit of the index's content, so staged changes come back staged;
//! - its message names the branch (`Clada-Branch:` trailer).
//!
//! While the session is open, HEAD is detached on the branch's
//! first-parent line below that tip.

use crate::git::commit::Identity;
use crate::git::state::WorkState;
use crate::git::{GitError, ObjectId, Repository};

use super::commits::trailer;

/// Marker of the record commits.
pub const STEPS: &str = "[clada:steps]";
const BRANCH_TRAILER: &str = "Clada-Branch";

/// An open step-back session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The reference holding the record.
    pub ref_name: String,
    pub record: ObjectId,
    /// Full name of the branch stepped back from.
    pub branch: String,
    /// The branch's tip when the session started.
    pub tip: ObjectId,
    /// The working tree to restore (a tree).
    pub disk: ObjectId,
    /// The index to restore (a tree).
    pub index: ObjectId,
}

/// The session reference of this working tree.
pub fn ref_name(repo: &Repository) -> String {
    match repo.linked_worktree_id() {
        None => "refs/clada/steps/saved".to_string(),
        Some(id) => format!("refs/clada/steps/worktrees/{id}"),
    }
}

/// The open session of this working tree, if any.
pub fn read(repo: &Repository) -> Result<Option<Session>, GitError> {
    let name = ref_name(repo);
    let Some(record) = repo.ref_target(&name)? else {
        return Ok(None);
    };
    let info = repo.commit_info(record)?;
    let malformed = |why: &str| {
        GitError::op(
            format!("read the step-back session {name}"),
            format!("{why}; it is not a record clada wrote (inspect it with: git show {name})"),
        )
    };
    let branch = trailer(&info.message, BRANCH_TRAILER)
        .filter(|b| b.starts_with("refs/heads/"))
        .ok_or_else(|| malformed("it names no branch"))?
        .to_string();
    let tip = info
        .first_parent()
        .ok_or_else(|| malformed("it has no parent"))?;
    let index = match info.parents.get(1) {
        Some(id) => repo.commit_info(*id)?.tree,
        None => repo.tree_of(Some(tip))?,
    };
    Ok(Some(Session {
        ref_name: name,
        record,
        branch,
        tip,
        disk: info.tree,
        index,
    }))
}

/// Writes the record of a session starting on `branch` at `tip` with the
/// user's `state` (compared with `tip`'s tree). Returns the record commit;
/// no reference is created.
pub fn save(
    repo: &Repository,
    who: &Identity,
    branch: &str,
    tip: ObjectId,
    state: &WorkState,
) -> Result<ObjectId, GitError> {
    let mut parents = vec![tip];
    if state.index != state.base {
        parents.push(repo.commit(
            who,
            &format!("{STEPS} index saved by step-back\n"),
            state.index,
            &[tip],
        )?);
    }
    repo.commit(
        who,
        &format!(
            "{STEPS} work saved by step-back\n\nThe working tree (and index) of {branch} when stepping back;\n`git clada step-forward --all` restores it.\n\n{BRANCH_TRAILER}: {branch}\n"
        ),
        state.disk,
        &parents,
    )
}

/// How many first-parent steps `head` is below the session's tip (0: at
/// the tip), or `None` when it is not on that line.
pub fn position(
    repo: &Repository,
    session: &Session,
    head: ObjectId,
) -> Result<Option<usize>, GitError> {
    if !repo.is_ancestor(head, session.tip)? {
        return Ok(None);
    }
    let mut at = Some(session.tip);
    let mut steps = 0;
    while let Some(id) = at {
        if id == head {
            return Ok(Some(steps));
        }
        steps += 1;
        at = repo.commit_info(id)?.first_parent();
    }
    Ok(None)
}

/// The commit `steps` first-parent steps below the session's tip.
pub fn commit_at(repo: &Repository, session: &Session, steps: usize) -> Result<ObjectId, GitError> {
    let line = repo.first_parents(session.tip, steps + 1)?;
    line.get(steps).copied().ok_or_else(|| {
        GitError::op(
            "walk the branch",
            format!("the branch has fewer than {steps} commits below its tip"),
        )
    })
}
