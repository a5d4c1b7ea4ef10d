//! Reading commits and moving references for the history commands.
//!
//! Owns what undo, redo, squash and the steps need from the commit graph
//! and the reference store beyond what an apply needs: commit headers,
//! first-parent walks, ancestry (for "already on a remote-tracking
//! branch"), and compare-and-swap updates of HEAD itself (detaching it and
//! attaching it again), of branches, and deletions. Every update names the
//! value it expects and writes a reflog entry, like `commit.rs`.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::Target;
use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};

use super::commit::{Identity, UpdateError};
use super::{GitError, Head, Repository};

/// What the history commands read from a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    /// The message, decoded lossily.
    pub message: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
}

impl CommitInfo {
    pub fn first_parent(&self) -> Option<ObjectId> {
        self.parents.first().copied()
    }
}

fn full_name(name: &str) -> Result<gix::refs::FullName, GitError> {
    name.try_into()
        .map_err(|e| GitError::op(format!("name {name}"), e))
}

impl Repository {
    /// The commit `id`.
    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op(format!("read commit {id}"), e);
        let commit = self.repo.find_commit(id).map_err(|e| fail(&e))?;
        Ok(CommitInfo {
            id,
            tree: commit.tree_id().map_err(|e| fail(&e))?.detach(),
            parents: commit.parent_ids().map(|p| p.detach()).collect(),
            message: commit.message_raw_sloppy().to_str_lossy().into_owned(),
            time: commit.time().map_err(|e| fail(&e))?.seconds,
        })
    }

    /// Up to `limit` commits along the first-parent line from `tip`,
    /// `tip` first.
    pub fn first_parents(&self, tip: ObjectId, limit: usize) -> Result<Vec<ObjectId>, GitError> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            if out.len() >= limit {
                break;
            }
            out.push(id);
            next = self.commit_info(id)?.first_parent();
        }
        Ok(out)
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: ObjectId, descendant: ObjectId) -> Result<bool, GitError> {
        if ancestor == descendant {
            return Ok(true);
        }
        let base = self
            .repo
            .merge_base(ancestor, descendant)
            .map_err(|e| GitError::op("compute a merge base", e))?;
        Ok(base.is_some_and(|b| b.detach() == ancestor))
    }

    /// The remote-tracking branches (`refs/remotes/…`) from which `id` is
    /// reachable.
    pub fn remote_branches_containing(&self, id: ObjectId) -> Result<Vec<String>, GitError> {
        let mut out = Vec::new();
        for name in self.refs_under("refs/remotes/")? {
            // Symbolic refs such as origin/HEAD name another remote ref.
            let Some(tip) = self.ref_target(&name)? else {
                continue;
            };
            let is_commit = self.repo.find_commit(tip).is_ok();
            if is_commit && self.is_ancestor(id, tip)? {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// The id of this linked worktree (its directory name under
    /// `.git/worktrees/`), `None` for the main worktree.
    pub fn linked_worktree_id(&self) -> Option<String> {
        let git_dir = self.repo.git_dir();
        if git_dir == self.repo.common_dir() {
            return None;
        }
        git_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    }

    /// Moves HEAD from `expected` to `new` without touching any branch:
    /// detaching it (`new` an object) or attaching it to a branch (`new` a
    /// full branch name). HEAD's reflog gets `message`.
    pub fn set_head(
        &self,
        who: &Identity,
        expected: &Head,
        new: &Head,
        message: &str,
    ) -> Result<(), UpdateError> {
        let previous = match expected {
            Head::Branch { name, .. } => Target::Symbolic(full_name(name)?),
            Head::Detached(id) => Target::Object(*id),
        };
        let target = match new {
            Head::Branch { name, .. } => Target::Symbolic(full_name(name)?),
            Head::Detached(id) => Target::Object(*id),
        };
        // gix writes no reflog entry when HEAD becomes symbolic (there is
        // no object in the change); git does ("moving from X to main").
        // So the entry is written first, on its own, while HEAD still
        // holds the expected value.
        let from_to = match (expected, new) {
            (
                Head::Detached(from)
                | Head::Branch {
                    commit: Some(from), ..
                },
                Head::Branch {
                    commit: Some(to), ..
                },
            ) if from != to => Some(*to),
            _ => None,
        };
        let log_only = from_to.map(|to| {
            RefEdit::new(
                full_name("HEAD").expect("HEAD is a valid name"),
                Change::Update {
                    log: gix::refs::transaction::LogChange {
                        mode: RefLog::Only,
                        force_create_reflog: false,
                        message: message.into(),
                    },
                    expected: PreviousValue::MustExistAndMatch(previous.clone()),
                    new: Target::Object(to),
                },
            )
        });
        let edit = RefEdit::update(
            full_name("HEAD")?,
            target,
            PreviousValue::MustExistAndMatch(previous),
            message,
        );
        let result = match log_only {
            Some(log) => self
                .edit_as(who, log)
                .and_then(|()| self.edit_as(who, edit)),
            None => self.edit_as(who, edit),
        };
        if let Err(e) = result {
            let now = self.head()?;
            let moved = match (expected, &now) {
                (Head::Branch { name: a, .. }, Head::Branch { name: b, .. }) => a != b,
                (a, b) => a != b,
            };
            if moved {
                return Err(UpdateError::Moved {
                    branch: "HEAD".to_string(),
                    expected: describe(expected),
                    found: describe(&now),
                });
            }
            return Err(GitError::op("update HEAD", e).into());
        }
        Ok(())
    }

    /// Deletes the reference `name` if it still points at `expected`.
    pub fn delete_ref(
        &self,
        who: &Identity,
        name: &str,
        expected: ObjectId,
    ) -> Result<(), UpdateError> {
        let edit = RefEdit::new(
            full_name(name)?,
            Change::Delete {
                expected: PreviousValue::MustExistAndMatch(Target::Object(expected)),
                log: RefLog::AndReference,
            },
        );
        if let Err(e) = self.edit_as(who, edit) {
            let found = self.ref_target(name)?;
            if found != Some(expected) {
                return Err(UpdateError::Moved {
                    branch: name.to_string(),
                    expected: expected.to_string(),
                    found: found.map_or("nothing".to_string(), |id| id.to_string()),
                });
            }
            return Err(GitError::op(format!("delete {name}"), e).into());
        }
        Ok(())
    }

    /// Deletes the branch HEAD points to if it is at `expected`, leaving
    /// HEAD on the (now unborn) branch: the inverse of an apply to an
    /// unborn branch.
    pub fn unset_branch(
        &self,
        who: &Identity,
        branch: &str,
        expected: ObjectId,
    ) -> Result<(), UpdateError> {
        self.delete_ref(who, branch, expected)
    }

    /// Creates `<prefix><n>` at `id` with the first free `n` above those in
    /// use, and returns its name. Another process taking the same number
    /// makes this try the next one.
    pub fn create_numbered_ref(
        &self,
        who: &Identity,
        prefix: &str,
        id: ObjectId,
        message: &str,
    ) -> Result<String, GitError> {
        let mut last_error = None;
        for _ in 0..5 {
            let n = self
                .refs_under(prefix)?
                .iter()
                .filter_map(|r| r.strip_prefix(prefix)?.parse::<u64>().ok())
                .max()
                .map_or(1, |n| n + 1);
            let name = format!("{prefix}{n}");
            match self.create_ref(who, &name, id, message) {
                Ok(()) => return Ok(name),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| GitError::op("create a reference", "no free name")))
    }
}

fn describe(head: &Head) -> String {
    match head {
        Head::Branch { name, .. } => name.clone(),
        Head::Detached(id) => format!("detached at {id}"),
    }
}
