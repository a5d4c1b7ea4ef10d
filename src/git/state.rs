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
        let changed = self.dirty_paths(base, false)?.into_iter().collect();
        let index = gix::index::File::at_or_default(
            self.repo.index_path(),
            self.repo.object_hash(),
            true,
            Default::default(),
        )
        .map_err(|e| GitError::op("read the index", e))?;
        let unmerged: BTreeSet<String> = index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0)
            .map(|e| e.path(&index).to_str_lossy().into_owned())
            .collect();
        Ok((changed, unmerged.into_iter().collect()))
    }

    /// The working tree and index of this repository against `base`.
    pub fn work_state(&self, base: ObjectId) -> Result<WorkState, GitError> {
        let snapshot = self.snapshot(base)?;
        let fail = |e: gix::Error| GitError::op("read the index", e);
        let index = gix::index::File::at_or_default(
            self.repo.index_path(),
            self.repo.object_hash(),
            true,
            Default::default(),
        )
        .map_err(fail)?;
        let unmerged: BTreeSet<String> = index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0)
            .map(|e| e.path(&index).to_str_lossy().into_owned())
            .collect();
        let mut changed: BTreeSet<String> = snapshot.paths.into_iter().map(|(p, _)| p).collect();
        // The cache-tree of an index written by git says when the index
        // holds exactly the base tree: no need to compare them entry by entry.
        let staged_nothing = index
            .tree()
            .is_some_and(|t| t.num_entries.is_some() && t.id == base);
        let index_tree = if staged_nothing || !unmerged.is_empty() {
            base
        } else {
            let mut staged: Vec<(String, Option<(ObjectId, EntryKind)>)> = Vec::new();
            self.repo
                .tree_index_status(
                    &base,
                    &index,
                    None,
                    gix::status::tree_index::TrackRenames::Disabled,
                    |change, _, _| {
                        use gix::diff::index::ChangeRef;
                        let path = change.location().to_str_lossy().into_owned();
                        match change {
                            ChangeRef::Deletion { .. } => staged.push((path, None)),
                            ChangeRef::Addition { entry_mode, id, .. }
                            | ChangeRef::Modification { entry_mode, id, .. } => {
                                if let Some(kind) = kind_of_index_mode(entry_mode) {
                                    staged.push((path, Some((id.into_owned(), kind))));
                                }
                            }
                            ChangeRef::Rewrite { .. } => {}
                        }
                        Ok(gix::diff::index::Action::Continue(()))
                    },
                )
                .map_err(fail)?;
            if staged.is_empty() {
                base
            } else {
                let mut editor = self
                    .repo
                    .edit_tree(base)
                    .map_err(|e| GitError::op("edit a tree", e))?;
                for (path, entry) in &staged {
                    changed.insert(path.clone());
                    match entry {
                        Some((id, kind)) => editor.upsert(path.as_str(), *kind, *id),
                        None => editor.remove(path.as_str()),
                    }
                    .map_err(|e| GitError::op(format!("record the index entry of {path}"), e))?;
                }
                editor
                    .write()
                    .map_err(|e| GitError::op("write the index tree", e))?
                    .detach()
            }
        };
        Ok(WorkState {
            base,
            disk: snapshot.tree,
            index: index_tree,
            changed: changed.into_iter().collect(),
            unmerged: unmerged.into_iter().collect(),
        })
    }
}
