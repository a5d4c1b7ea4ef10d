//! The `pre` snapshot: the user's working tree as a tree object.
//!
//! Owns finding what differs from HEAD (tracked changes, staged changes and
//! untracked files that are not ignored, through gix's status) and writing
//! a tree of the working tree's state: HEAD's tree with each such path
//! taken from the disk. Only the differing paths are read, so the cost is
//! that of a status plus the changed files.
//!
//! Content that is only in the index (staged, then changed again on disk)
//! is in neither tree; the snapshot then also gives the index's tree, which
//! the apply records as a second parent of `pre`, as `git stash` does.

use crate::quote::quoted;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use super::{GitError, Repository};
use crate::fsmode::is_executable;

/// What the working tree holds at a path, as git would commit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDisk {
    Missing,
    Blob {
        id: ObjectId,
        kind: EntryKind,
    },
    /// A directory where a file was tracked (or a nested repository): left
    /// out of the snapshot.
    Other,
}

/// The working tree state that differs from HEAD.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The tree of the working tree state (HEAD's tree when clean).
    pub tree: ObjectId,
    /// Paths whose state differs from HEAD's tree, with what is on disk.
    pub paths: Vec<(String, OnDisk)>,
    /// The index's tree, when anything is staged (the index is brought to
    /// the applied commit after the apply; undo restores it from this).
    pub index: Option<ObjectId>,
    /// Paths that differ but are not in the snapshot, because their names
    /// are not UTF-8 (as git quotes them); they are left as they are.
    pub left_out: Vec<String>,
}

/// An index entry as the tree would hold it; `None` for a path the index
/// does not have.
pub(super) type Staged = Option<(ObjectId, EntryKind)>;

/// What differs from HEAD's tree.
#[derive(Debug, Default)]
pub(super) struct Dirty {
    /// Paths where the working tree or the index differ.
    pub paths: BTreeSet<String>,
    /// Paths that differ but whose names are not UTF-8: left out.
    pub not_utf8: BTreeSet<Vec<u8>>,
    /// The index's entries (stage 0) where the index differs.
    pub staged: BTreeMap<String, Staged>,
}

/// The pid in the name of one of clada's temporary files in the working
/// tree (`<dir>/.clada-<pid>-<n>.tmp`, or `.lnk` for a link, written
/// beside a file and renamed over it), if `path` names one.
pub(crate) fn own_temp_file(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let rest = name.strip_prefix(".clada-")?;
    let rest = rest
        .strip_suffix(".tmp")
        .or_else(|| rest.strip_suffix(".lnk"))?;
    let (pid, n) = rest.split_once('-')?;
    (n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty()).then_some(())?;
    pid.parse().ok()
}

impl Repository {
    /// Removes the temporary files a killed clada left beside `paths` (in
    /// their directories) in the working tree: those whose pid is not
    /// this process's. Called under clada's lock, while recovering an
    /// update that `paths` were part of: no other clada writes there.
    pub fn remove_stale_temp_files<'p>(&self, paths: impl Iterator<Item = &'p str>) -> Vec<String> {
        let Some(workdir) = self.workdir() else {
            return Vec::new();
        };
        let dirs: BTreeSet<&str> = paths
            .map(|p| p.rsplit_once('/').map_or("", |(dir, _)| dir))
            .collect();
        let mut removed = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(workdir.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = own_temp_file(&name).is_some_and(|pid| pid == std::process::id());
                if own_temp_file(&name).is_some()
                    && !ours
                    && entry
                        .file_type()
                        .is_ok_and(|t| t.is_file() || t.is_symlink())
                    && std::fs::remove_file(entry.path()).is_ok()
                {
                    removed.push(if dir.is_empty() {
                        name
                    } else {
                        format!("{dir}/{name}")
                    });
                }
            }
        }
        removed
    }

    /// Paths where the working tree or index differ from `head_tree`.
    /// With `index_is_head`, the caller knows the index holds exactly
    /// `head_tree` (clada's own scratch tree) and only the working tree is
    /// compared with it.
    pub(super) fn dirty_paths(
        &self,
        head_tree: ObjectId,
        index_is_head: bool,
    ) -> Result<Dirty, GitError> {
        let mut dirty = self.all_dirty_paths(head_tree, index_is_head)?;
        // clada's own temporary files (a killed update leaves them) are
        // never the user's work: never snapshot, never in the way.
        dirty.paths.retain(|p| own_temp_file(p).is_none());
        Ok(dirty)
    }

    /// [`Repository::dirty_paths`] with clada's temporary files.
    fn all_dirty_paths(&self, head_tree: ObjectId, index_is_head: bool) -> Result<Dirty, GitError> {
        use gix::status::{Item, UntrackedFiles, tree_index::TrackRenames};
        let fail = |e: gix::Error| GitError::op("compute the status", e);
        // An earlier read must not stand for this one if this one fails.
        self.keep_index(None, None);
        let stamp = super::worktree::IndexStamp::of(&self.repo.index_path());
        let (index, changes) =
            super::dirty::worktree_changes(&self.repo, || self.read_index_file())?;
        // When the index's cache-tree says it holds exactly HEAD's tree,
        // nothing is staged and comparing HEAD's tree with the index (which
        // reads every tree of the repository) can be skipped.
        let staged_nothing = index_is_head
            || index
                .tree()
                .is_some_and(|t| t.num_entries.is_some() && t.id == head_tree);
        if let Some(changes) = changes {
            if let Some(cache) = changes.cache {
                self.in_background(move || cache.write());
            }
            let mut dirty = Dirty {
                paths: changes.paths.utf8,
                not_utf8: changes.paths.not_utf8,
                staged: BTreeMap::new(),
            };
            if !staged_nothing {
                self.repo
                    .tree_index_status(
                        &head_tree,
                        &index,
                        None,
                        TrackRenames::Disabled,
                        |change, _, _| {
                            note_staged(&mut dirty, &change);
                            Ok(std::ops::ControlFlow::Continue(()))
                        },
                    )
                    .map_err(fail)?;
            }
            self.keep_index(Some(index), stamp);
            return Ok(dirty);
        }
        let platform = self
            .repo
            .status(gix::progress::Discard)
            .map_err(fail)?
            .index(gix::worktree::IndexPersistedOrInMemory::InMemory(index))
            .untracked_files(UntrackedFiles::Files)
            .index_worktree_rewrites(None)
            .tree_index_track_renames(TrackRenames::Disabled)
            .head_tree(head_tree);
        let mut dirty = Dirty::default();
        // The index read here is kept for the update after the apply.
        let keep = |outcome: Option<gix::status::Outcome>| {
            let file = match outcome.map(|o| o.worktree_index) {
                Some(gix::worktree::IndexPersistedOrInMemory::InMemory(file)) => Some(file),
                _ => None,
            };
            self.keep_index(file, stamp);
        };
        if staged_nothing {
            let mut items = platform.into_index_worktree_iter(None).map_err(fail)?;
            for item in &mut items {
                note_worktree_item(&mut dirty, &item.map_err(fail)?);
            }
            keep(items.into_outcome());
            return Ok(dirty);
        }
        let mut items = platform.into_iter(None).map_err(fail)?;
        for item in &mut items {
            match item.map_err(fail)? {
                Item::TreeIndex(change) => note_staged(&mut dirty, &change),
                Item::IndexWorktree(w) => note_worktree_item(&mut dirty, &w),
            }
        }
        keep(items.into_outcome());
        Ok(dirty)
    }

    /// The index's tree when anything is staged (it differs from
    /// `head_tree`): the update after the apply brings the index to the
    /// applied commit, and undo puts back what the user had staged, as
    /// step-back does (git.md §2). Intent-to-add and unmerged entries are
    /// not in `staged` (gix's tree-index diff leaves them out), so they
    /// alone record nothing.
    fn index_if_staged(
        &self,
        head_tree: ObjectId,
        staged: &BTreeMap<String, Staged>,
    ) -> Result<Option<ObjectId>, GitError> {
        if staged.is_empty() {
            return Ok(None);
        }
        let tree = self.staged_tree(head_tree, staged)?;
        Ok((tree != head_tree).then_some(tree))
    }

    /// The index as a tree: `head_tree` with the `staged` entries applied.
    pub(super) fn staged_tree(
        &self,
        head_tree: ObjectId,
        staged: &BTreeMap<String, Staged>,
    ) -> Result<ObjectId, GitError> {
        if staged.is_empty() {
            return Ok(head_tree);
        }
        let mut editor = self
            .repo
            .edit_tree(head_tree)
            .map_err(|e| GitError::op("edit a tree", e))?;
        for (path, entry) in staged {
            match entry {
                Some((id, kind)) => editor.upsert(path.as_str(), *kind, *id),
                None => editor.remove(path.as_str()),
            }
            .map_err(|e| GitError::op(format!("record the index entry of {path}"), e))?;
        }
        Ok(editor
            .write()
            .map_err(|e| GitError::op("write the index tree", e))?
            .detach())
    }

    /// Reads `path` of the working tree as git would store it, writing the
    /// blob.
    fn read_disk(&self, workdir: &Path, path: &str) -> Result<OnDisk, GitError> {
        // A parent that is a symbolic link or not a directory means the
        // path is gone from the working tree; reading through it would
        // commit a file from outside the repository.
        let mut dir = workdir.to_path_buf();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            dir.push(part);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                _ => return Ok(OnDisk::Missing),
            }
        }
        let full = workdir.join(path);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(OnDisk::Missing);
            }
            Err(e) => return Err(GitError::op(format!("read {path}"), e)),
        };
        let (bytes, kind) = if meta.file_type().is_symlink() {
            let target =
                std::fs::read_link(&full).map_err(|e| GitError::op(format!("read {path}"), e))?;
            (
                target.into_os_string().into_encoded_bytes(),
                EntryKind::Link,
            )
        } else if meta.is_file() {
            let bytes =
                std::fs::read(&full).map_err(|e| GitError::op(format!("read {path}"), e))?;
            (
                bytes,
                if is_executable(&meta) {
                    EntryKind::BlobExecutable
                } else {
                    EntryKind::Blob
                },
            )
        } else {
            return Ok(OnDisk::Other);
        };
        let id = self
            .repo
            .write_blob(&bytes)
            .map_err(|e| GitError::op("write a blob", e))?
            .detach();
        Ok(OnDisk::Blob { id, kind })
    }

    /// Takes the snapshot of the working tree against `head_tree`.
    pub fn snapshot(&self, head_tree: ObjectId) -> Result<Snapshot, GitError> {
        self.snapshot_with(head_tree, false, &|_| false)
    }

    /// [`Repository::snapshot`], trusting that the index holds `head_tree`
    /// when `index_is_head` is set, and leaving out paths `exclude` names.
    pub(crate) fn snapshot_with(
        &self,
        head_tree: ObjectId,
        index_is_head: bool,
        exclude: &dyn Fn(&str) -> bool,
    ) -> Result<Snapshot, GitError> {
        Ok(self.snapshot_staged(head_tree, index_is_head, exclude)?.0)
    }

    /// [`Repository::snapshot_with`], and the index's entries where it
    /// differs from `head_tree`.
    pub(super) fn snapshot_staged(
        &self,
        head_tree: ObjectId,
        index_is_head: bool,
        exclude: &dyn Fn(&str) -> bool,
    ) -> Result<(Snapshot, BTreeMap<String, Staged>), GitError> {
        let workdir = self
            .workdir()
            .ok_or_else(|| GitError::op("snapshot the working tree", "the repository is bare"))?
            .to_path_buf();
        let Dirty {
            paths: mut dirty,
            not_utf8,
            mut staged,
        } = self.dirty_paths(head_tree, index_is_head)?;
        dirty.retain(|p| !exclude(p));
        staged.retain(|p, _| !exclude(p));
        let left_out: Vec<String> = not_utf8.iter().map(|p| quoted(p)).collect();
        if dirty.is_empty() {
            let clean = Snapshot {
                tree: head_tree,
                paths: Vec::new(),
                index: None,
                left_out,
            };
            return Ok((clean, staged));
        }
        let mut editor = self
            .repo
            .edit_tree(head_tree)
            .map_err(|e| GitError::op("edit the tree", e))?;
        let mut paths = Vec::with_capacity(dirty.len());
        for path in dirty {
            let state = self.read_disk(&workdir, &path)?;
            match &state {
                OnDisk::Blob { id, kind } => {
                    editor
                        .upsert(path.as_str(), *kind, *id)
                        .map_err(|e| GitError::op(format!("snapshot {path}"), e))?;
                }
                OnDisk::Missing => {
                    editor
                        .remove(path.as_str())
                        .map_err(|e| GitError::op(format!("snapshot {path}"), e))?;
                }
                OnDisk::Other => continue,
            }
            paths.push((path, state));
        }
        let tree = editor
            .write()
            .map_err(|e| GitError::op("write the snapshot tree", e))?
            .detach();
        let index = self.index_if_staged(head_tree, &staged)?;
        Ok((
            Snapshot {
                tree,
                paths,
                index,
                left_out,
            },
            staged,
        ))
    }
}

/// Records a staged change (HEAD's tree to the index).
fn note_staged(dirty: &mut Dirty, change: &gix::diff::index::ChangeRef<'_, '_>) {
    use gix::diff::index::ChangeRef;
    let Ok(path) = std::str::from_utf8(change.location()) else {
        dirty.not_utf8.insert(change.location().to_vec());
        return;
    };
    let path = path.to_string();
    let entry = match change {
        ChangeRef::Deletion { .. } => None,
        ChangeRef::Addition { entry_mode, id, .. }
        | ChangeRef::Modification { entry_mode, id, .. } => {
            match super::state::kind_of_index_mode(*entry_mode) {
                Some(kind) => Some((id.clone().into_owned(), kind)),
                // Not a mode a tree can hold.
                None => return,
            }
        }
        ChangeRef::Rewrite { .. } => return,
    };
    dirty.paths.insert(path.clone());
    dirty.staged.insert(path, entry);
}

/// Adds the path of an index-to-worktree change that makes the working
/// tree differ: modifications, and untracked files (not directories or
/// nested repositories). Entries that only need a stat refresh do not.
fn note_worktree_item(dirty: &mut Dirty, item: &gix::status::index_worktree::Item) {
    use gix::dir::entry::{Kind, Status};
    use gix::status::index_worktree::Item as W;
    use gix::status::plumbing::index_as_worktree::EntryStatus;
    let counts = match item {
        W::Modification { status, .. } => !matches!(status, EntryStatus::NeedsUpdate(_)),
        W::DirectoryContents { entry, .. } => {
            matches!(entry.status, Status::Untracked)
                && !matches!(entry.disk_kind, Some(Kind::Repository | Kind::Directory))
        }
        W::Rewrite { .. } => true,
    };
    if counts {
        let path = item.rela_path();
        match std::str::from_utf8(path) {
            Ok(path) => {
                dirty.paths.insert(path.to_string());
            }
            Err(_) => {
                dirty.not_utf8.insert(path.to_vec());
            }
        }
    }
}

#[cfg(test)]
mod tests {}
