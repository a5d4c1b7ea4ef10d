//! The user's uncommitted state, as two trees: what the working tree holds
//! and what the index holds.
//!
//! Owns reading that state against a commit's tree for the history
//! commands, which must know exactly what they would take away before they
//! move anything. The working tree side is the apply's `pre` snapshot
//! (untracked files that are not ignored included); the index side is the
//! base tree with every staged change applied. Nothing here writes a file,
//! the index or a reference; only blobs of changed files are stored.

use std::collections::BTreeSet;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::{GitError, Repository};

/// The working tree and index compared with a base tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkState {
    /// The tree compared against (HEAD's).
    pub base: ObjectId,
    /// The working tree's content as a tree.
    pub disk: ObjectId,
    /// The index's content as a tree (`base` when the index has conflicts).
    pub index: ObjectId,
    /// Paths where the working tree or the index differ from `base`.
    pub changed: Vec<String>,
    /// Paths with unresolved merge conflicts in the index.
    pub unmerged: Vec<String>,
}

impl WorkState {
    /// Nothing uncommitted: working tree and index both hold `base`.
    pub fn is_clean(&self) -> bool {
        self.disk == self.base && self.index == self.base && self.unmerged.is_empty()
    }
}

/// The tree entry kind of an index entry mode.
pub(super) fn kind_of_index_mode(mode: gix::index::entry::Mode) -> Option<EntryKind> {
    mode.to_tree_entry_mode().map(|m| m.kind())
}

impl Repository {
    /// The paths where the working tree or index differ from `base`, and
    /// those with unresolved conflicts, without storing anything (for
    /// commands that only report).
    pub fn changed_paths(&self, base: ObjectId) -> Result<(Vec<String>, Vec<String>), GitError> {
        let changed = self.dirty_paths(base, false)?.paths.into_iter().collect();
        Ok((changed, self.unmerged_paths()?))
    }

    /// The working tree and index of this repository against `base`.
    pub fn work_state(&self, base: ObjectId) -> Result<WorkState, GitError> {
        let (snapshot, staged) = self.snapshot_staged(base, false, &|_| false)?;
        let unmerged = self.unmerged_paths()?;
        let mut changed: BTreeSet<String> = snapshot.paths.into_iter().map(|(p, _)| p).collect();
        changed.extend(staged.keys().cloned());
        // With conflicts the index is no tree: it counts as the base, and
        // the conflicts are reported on their own.
        let index = if unmerged.is_empty() {
            self.staged_tree(base, &staged)?
        } else {
            base
        };
        Ok(WorkState {
            base,
            disk: snapshot.tree,
            index,
            changed: changed.into_iter().collect(),
            unmerged,
        })
    }

    /// Paths with unresolved conflicts in the index: in the index the
    /// status just read when it is kept (the same state it compared),
    /// otherwise read again.
    fn unmerged_paths(&self) -> Result<Vec<String>, GitError> {
        match self.with_kept_index(unmerged_in) {
            Some(unmerged) => Ok(unmerged),
            None => Ok(unmerged_in(&self.read_index_file()?)),
        }
    }
}

/// The paths of `index` that have conflict stages.
fn unmerged_in(index: &gix::index::File) -> Vec<String> {
    let unmerged: BTreeSet<String> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(index).to_str_lossy().into_owned())
        .collect();
    unmerged.into_iter().collect()
}
