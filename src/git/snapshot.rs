//! The `pre` snapshot: the user's working tree as a tree object.
//!
//! Owns finding what differs from HEAD (tracked changes, staged changes and
//! untracked files that are not ignored, through gix's status) and writing
//! a tree of the working tree's state: HEAD's tree with each such path
//! taken from the disk. Only the differing paths are read, so the cost is
//! that of a status plus the changed files.

use std::collections::BTreeSet;
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
}

impl Repository {
    /// Paths where the working tree or index differ from `head_tree`.
    /// With `index_is_head`, the caller knows the index holds exactly
    /// `head_tree` (clada's own scratch tree) and only the working tree is
    /// compared with it.
    pub(super) fn dirty_paths(
        &self,
        head_tree: ObjectId,
        index_is_head: bool,
    ) -> Result<BTreeSet<String>, GitError> {
        use gix::status::{Item, UntrackedFiles, tree_index::TrackRenames};
        let fail = |e: gix::Error| GitError::op("compute the status", e);
        // Read the index without verifying its checksum, as git does.
        let index = gix::index::File::at_or_default(
            self.repo.index_path(),
            self.repo.object_hash(),
            true,
            Default::default(),
        )
        .map_err(fail)?;
        // When the index's cache-tree says it holds exactly HEAD's tree,
        // nothing is staged and comparing HEAD's tree with the index (which
        // reads every tree of the repository) can be skipped.
        let staged_nothing = index_is_head
            || index
                .tree()
                .is_some_and(|t| t.num_entries.is_some() && t.id == head_tree);
        let platform = self
            .repo
            .status(gix::progress::Discard)
            .map_err(fail)?
            .index(gix::worktree::IndexPersistedOrInMemory::InMemory(index))
            .untracked_files(UntrackedFiles::Files)
            .index_worktree_rewrites(None)
            .tree_index_track_renames(TrackRenames::Disabled)
            .head_tree(head_tree);
        let mut paths = BTreeSet::new();
        if staged_nothing {
            for item in platform.into_index_worktree_iter(None).map_err(fail)? {
                note_worktree_item(&mut paths, &item.map_err(fail)?);
            }
            return Ok(paths);
        }
        for item in platform.into_iter(None).map_err(fail)? {
            match item.map_err(fail)? {
                Item::TreeIndex(change) => {
                    paths.insert(change.location().to_string());
                }
                Item::IndexWorktree(w) => note_worktree_item(&mut paths, &w),
            }
        }
        Ok(paths)
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
        let workdir = self
            .workdir()
            .ok_or_else(|| GitError::op("snapshot the working tree", "the repository is bare"))?
            .to_path_buf();
        let mut dirty = self.dirty_paths(head_tree, index_is_head)?;
        dirty.retain(|p| !exclude(p));
        if dirty.is_empty() {
            return Ok(Snapshot {
                tree: head_tree,
                paths: Vec::new(),
            });
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
        Ok(Snapshot { tree, paths })
    }
}

/// Adds the path of an index-to-worktree change that makes the working
/// tree differ: modifications, and untracked files (not directories or
/// nested repositories). Entries that only need a stat refresh do not.
fn note_worktree_item(paths: &mut BTreeSet<String>, item: &gix::status::index_worktree::Item) {
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
        paths.insert(item.rela_path().to_string());
    }
}
