//! Which commits clada wrote, recognised by the first line of their
//! message, and the unit of one apply.
//!
//! An apply writes a post commit (`[clada:post] …`) whose parent is either
//! its pre snapshot (`[clada:pre] …`, the user's uncommitted work, whose
//! parent is the branch as it was) or the branch as it was. A pre snapshot
//! may have a second parent, `[clada:index] …`: the user's index, when it
//! held content found nowhere else (its parent is the branch as it was too;
//! on an unborn branch it is the pre's only parent). A squash writes one
//! `[clada:squash] …` commit in place of several units. Any other merge
//! commit is never a clada commit, whatever its message says.

use crate::git::history::CommitInfo;
use crate::git::{GitError, ObjectId, Repository};

pub const PRE: &str = "[clada:pre]";
pub const POST: &str = "[clada:post]";
pub const SQUASH: &str = "[clada:squash]";
pub const INDEX: &str = "[clada:index]";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pre,
    Post,
    Squash,
    Index,
    Other,
}

/// The kind of commit a message belongs to.
pub fn kind(message: &str) -> Kind {
    if message.starts_with(PRE) {
        Kind::Pre
    } else if message.starts_with(POST) {
        Kind::Post
    } else if message.starts_with(SQUASH) {
        Kind::Squash
    } else if message.starts_with(INDEX) {
        Kind::Index
    } else {
        Kind::Other
    }
}

/// The first line of `message` without clada's marker.
pub fn summary(message: &str) -> &str {
    let line = message.lines().next().unwrap_or_default();
    [PRE, POST, SQUASH, INDEX]
        .iter()
        .find_map(|m| line.strip_prefix(m))
        .unwrap_or(line)
        .trim()
}

/// The value of the trailer `key` (`Key: value` in the last paragraph).
pub fn trailer<'m>(message: &'m str, key: &str) -> Option<&'m str> {
    let last = message.trim_end().rsplit("\n\n").next()?;
    last.lines().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(str::trim)
    })
}

/// One apply (a post commit and its pre snapshot, if any) or one squash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The post or squash commit.
    pub top: CommitInfo,
    /// The pre snapshot of the user's work, for an apply made on a dirty
    /// working tree.
    pub pre: Option<CommitInfo>,
    /// The user's index before the apply, when it held content that is
    /// neither in the base nor in the pre snapshot.
    pub index: Option<CommitInfo>,
    /// The commit the unit was made on; `None` for a root commit.
    pub base: Option<ObjectId>,
}

impl Unit {
    pub fn kind(&self) -> Kind {
        kind(&self.top.message)
    }

    pub fn summary(&self) -> &str {
        summary(&self.top.message)
    }

    /// The commits of the unit, newest first.
    pub fn commits(&self) -> Vec<ObjectId> {
        std::iter::once(self.top.id)
            .chain(self.pre.as_ref().map(|p| p.id))
            .collect()
    }

    /// The oldest commit of the unit.
    pub fn oldest(&self) -> ObjectId {
        self.pre.as_ref().map_or(self.top.id, |p| p.id)
    }

    /// The tree of the user's state just before the apply: the pre
    /// snapshot, else the base.
    pub fn before_tree(&self, repo: &Repository) -> Result<ObjectId, GitError> {
        match &self.pre {
            Some(pre) => Ok(pre.tree),
            None => repo.tree_of(self.base),
        }
    }

    /// The tree of the user's index just before the apply, when it was
    /// recorded; otherwise the index held no content of its own and the
    /// base's tree stands for it.
    pub fn index_tree(&self, repo: &Repository) -> Result<ObjectId, GitError> {
        match &self.index {
            Some(index) => Ok(index.tree),
            None => repo.tree_of(self.base),
        }
    }
}

/// The unit whose top commit is `id`, if `id` is a post or squash commit.
pub fn unit_at(repo: &Repository, id: ObjectId) -> Result<Option<Unit>, GitError> {
    let top = repo.commit_info(id)?;
    if top.parents.len() > 1 || !matches!(kind(&top.message), Kind::Post | Kind::Squash) {
        return Ok(None);
    }
    let Some(parent) = top.first_parent() else {
        return Ok(Some(Unit {
            top,
            pre: None,
            index: None,
            base: None,
        }));
    };
    if kind(&top.message) == Kind::Post {
        let below = repo.commit_info(parent)?;
        if kind(&below.message) == Kind::Pre
            && let Some((base, index)) = pre_parents(repo, &below)?
        {
            return Ok(Some(Unit {
                top,
                pre: Some(below),
                index,
                base,
            }));
        }
    }
    Ok(Some(Unit {
        top,
        pre: None,
        index: None,
        base: Some(parent),
    }))
}

/// The base and the index commit of a pre snapshot, or `None` when its
/// parents are not those an apply writes: the base alone (or nothing), or
/// the base and an index commit made on that same base.
#[allow(clippy::type_complexity)]
fn pre_parents(
    repo: &Repository,
    pre: &CommitInfo,
) -> Result<Option<(Option<ObjectId>, Option<CommitInfo>)>, GitError> {
    let index_on = |id: ObjectId, base: &[ObjectId]| -> Result<Option<CommitInfo>, GitError> {
        let info = repo.commit_info(id)?;
        Ok((kind(&info.message) == Kind::Index && info.parents == base).then_some(info))
    };
    Ok(match pre.parents.as_slice() {
        [] => Some((None, None)),
        [only] => match index_on(*only, &[])? {
            // An unborn branch: the index commit is a root too.
            Some(index) => Some((None, Some(index))),
            None => Some((Some(*only), None)),
        },
        [base, second] => index_on(*second, &[*base])?.map(|index| (Some(*base), Some(index))),
        _ => None,
    })
}

/// The contiguous units from `tip` down, newest first, at most `limit`.
pub fn units_from(repo: &Repository, tip: ObjectId, limit: usize) -> Result<Vec<Unit>, GitError> {
    let mut out = Vec::new();
    let mut at = Some(tip);
    while let Some(id) = at {
        if out.len() >= limit {
            break;
        }
        let Some(unit) = unit_at(repo, id)? else {
            break;
        };
        at = unit.base;
        out.push(unit);
    }
    Ok(out)
}

/// The newest apply or squash on the first-parent line from `tip`, looking
/// at most `limit` commits down. (A squash replaces the applies below it:
/// looking past it would find none, or older ones.)
pub fn last_apply(
    repo: &Repository,
    tip: ObjectId,
    limit: usize,
) -> Result<Option<Unit>, GitError> {
    let mut at = Some(tip);
    for _ in 0..limit {
        let Some(id) = at else { break };
        if let Some(unit) = unit_at(repo, id)?
            && matches!(unit.kind(), Kind::Post | Kind::Squash)
        {
            return Ok(Some(unit));
        }
        at = repo.commit_info(id)?.first_parent();
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_summaries_and_trailers() {
        let post = "[clada:post] edit a.txt\n\n[task-1] SUCCESS: x\n\nClada-Reply: abc\nClada-Tasks: 1 succeeded, 0 failed, 0 skipped\n";
        assert_eq!(kind(post), Kind::Post);
        assert_eq!(kind("[clada:pre] snapshot before apply\n"), Kind::Pre);
        assert_eq!(kind("[clada:squash] a; b\n"), Kind::Squash);
        assert_eq!(kind("fix: [clada:post] in the middle\n"), Kind::Other);
        assert_eq!(summary(post), "edit a.txt");
        assert_eq!(summary("plain\nbody"), "plain");
        assert_eq!(
            trailer(post, "Clada-Tasks"),
            Some("1 succeeded, 0 failed, 0 skipped")
        );
        assert_eq!(trailer(post, "Clada-Reply"), Some("abc"));
        assert_eq!(trailer(post, "Clada-Squashed"), None);
        assert_eq!(
            trailer("Clada-Tasks: in a lone line", "Clada-Tasks"),
            Some("in a lone line")
        );
    }
}
