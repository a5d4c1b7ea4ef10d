//! Files in a git tree, edited in memory.
//!
//! Owns [`TreeFiles`]: the [`Files`] store for an apply in a repository.
//! Reads come from the pending changes, then from the base tree; writes are
//! kept in memory until [`TreeFiles::write_tree`] writes blobs and one new
//! tree with gix's tree editor. Nothing touches a working directory, and
//! the cost follows the number of files edited, not the repository's size.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use crate::apply::files::{FileData, Files, FilesError};
use crate::plan::RepoPath;

use super::GitError;

/// A tree being edited: a base tree plus the files written so far.
pub struct TreeFiles<'r> {
    repo: &'r gix::Repository,
    base: ObjectId,
    /// The base tree, read once: every lookup starts from it.
    base_tree: gix::Tree<'r>,
    changes: BTreeMap<String, FileData>,
    /// The working tree the base was taken from: a path missing from the
    /// base but present there is ignored by git, and is never written.
    workdir: Option<std::path::PathBuf>,
}

/// An entry of the base tree at some path.
enum Found {
    Nothing,
    File(ObjectId, bool),
    Directory,
    Submodule,
    Link,
}

impl<'r> TreeFiles<'r> {
    pub fn new(repo: &'r gix::Repository, base: ObjectId) -> Result<TreeFiles<'r>, GitError> {
        let base_tree = repo
            .find_tree(base)
            .map_err(|e| GitError::op("read the tree", e))?;
        Ok(TreeFiles {
            repo,
            base,
            base_tree,
            changes: BTreeMap::new(),
            workdir: repo.workdir().map(std::path::Path::to_path_buf),
        })
    }

    /// Refuses a path that is not in the base tree but exists in the
    /// working tree: git ignores it (untracked files are in the snapshot).
    fn check_not_ignored(&self, path: &RepoPath) -> Result<(), FilesError> {
        let Some(workdir) = &self.workdir else {
            return Ok(());
        };
        match std::fs::symlink_metadata(workdir.join(path.as_str())) {
            Ok(_) => Err(FilesError::Ignored {
                path: path.to_string(),
            }),
            Err(_) => Ok(()),
        }
    }

    fn store(e: impl std::fmt::Display) -> FilesError {
        FilesError::Store(e.to_string())
    }

    fn lookup(&self, path: &str) -> Result<Found, FilesError> {
        let entry = self
            .base_tree
            .lookup_entry_by_path(path)
            .map_err(Self::store)?;
        Ok(match entry {
            None => Found::Nothing,
            Some(e) => match e.mode().kind() {
                EntryKind::Blob => Found::File(e.object_id(), false),
                EntryKind::BlobExecutable => Found::File(e.object_id(), true),
                EntryKind::Link => Found::Link,
                EntryKind::Tree => Found::Directory,
                EntryKind::Commit => Found::Submodule,
            },
        })
    }

    /// Checks that every parent of `path` is (or can become) a directory.
    fn check_parents(&self, path: &RepoPath) -> Result<(), FilesError> {
        let full = path.as_str();
        let mut end = 0;
        while let Some(slash) = full[end..].find('/') {
            end += slash;
            let parent = &full[..end];
            if self.changes.contains_key(parent) {
                return Err(FilesError::ParentIsFile {
                    path: full.to_string(),
                    parent: parent.to_string(),
                });
            }
            match self.lookup(parent)? {
                Found::File(..) => {
                    return Err(FilesError::ParentIsFile {
                        path: full.to_string(),
                        parent: parent.to_string(),
                    });
                }
                Found::Link => {
                    return Err(FilesError::Symlink {
                        path: parent.to_string(),
                    });
                }
                Found::Submodule => {
                    return Err(FilesError::Submodule {
                        path: full.to_string(),
                        submodule: parent.to_string(),
                    });
                }
                // A directory, or nothing yet: nothing deeper can exist.
                Found::Directory => {}
                Found::Nothing => return Ok(()),
            }
            end += 1;
        }
        Ok(())
    }

    /// Whether some pending file lies under `path` (making it a directory).
    fn has_pending_children(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.changes
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// The paths written so far with their new data, and the base entry each
    /// replaces (`None`: the file is new). Files rewritten with identical
    /// content and mode are left out.
    pub fn changed(&self) -> Result<Vec<Changed>, GitError> {
        let mut out = Vec::new();
        for (path, data) in &self.changes {
            let id = gix::objs::compute_hash(
                self.repo.object_hash(),
                gix::objs::Kind::Blob,
                &data.bytes,
            )
            .map_err(|e| GitError::op("hash a blob", e))?;
            let before = match self
                .lookup(path)
                .map_err(|e| GitError::op("read the base tree", e))?
            {
                Found::File(old, exec) => Some((old, exec)),
                _ => None,
            };
            if before == Some((id, data.executable)) {
                continue;
            }
            out.push(Changed {
                path: path.clone(),
                before,
                after: (id, data.executable),
            });
        }
        Ok(out)
    }

    /// Writes the blobs of `changed` (from [`TreeFiles::changed`]) and the
    /// new tree; returns its id (the base's id when nothing changed).
    pub fn write_tree(&self, changed: &[Changed]) -> Result<ObjectId, GitError> {
        if changed.is_empty() {
            return Ok(self.base);
        }
        let mut editor = self
            .repo
            .edit_tree(self.base)
            .map_err(|e| GitError::op("edit the tree", e))?;
        for c in changed {
            let data = &self.changes[&c.path];
            let id = self
                .repo
                .write_blob(&data.bytes)
                .map_err(|e| GitError::op("write a blob", e))?;
            let kind = if data.executable {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            };
            editor
                .upsert(c.path.as_str(), kind, id)
                .map_err(|e| GitError::op("edit the tree", e))?;
        }
        let id = editor
            .write()
            .map_err(|e| GitError::op("write the tree", e))?;
        Ok(id.detach())
    }
}

/// One file an apply changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: String,
    /// Blob id and executable bit in the base tree, if the file existed.
    pub before: Option<(ObjectId, bool)>,
    pub after: (ObjectId, bool),
}

impl Files for TreeFiles<'_> {
    type Checkpoint = BTreeMap<String, FileData>;

    fn read(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError> {
        if let Some(data) = self.changes.get(path.as_str()) {
            return Ok(Some(data.clone()));
        }
        self.check_parents(path)?;
        match self.lookup(path.as_str())? {
            Found::Nothing if self.has_pending_children(path.as_str()) => {
                Err(FilesError::IsDirectory {
                    path: path.to_string(),
                })
            }
            Found::Nothing => {
                self.check_not_ignored(path)?;
                Ok(None)
            }
            Found::Directory => Err(FilesError::IsDirectory {
                path: path.to_string(),
            }),
            Found::Submodule => Err(FilesError::Submodule {
                path: path.to_string(),
                submodule: path.to_string(),
            }),
            Found::Link => Err(FilesError::Symlink {
                path: path.to_string(),
            }),
            Found::File(id, executable) => {
                let blob = self.repo.find_blob(id).map_err(Self::store)?;
                Ok(Some(FileData {
                    bytes: blob.data.clone(),
                    executable,
                }))
            }
        }
    }

    fn write(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError> {
        if !self.changes.contains_key(path.as_str()) {
            self.check_parents(path)?;
            match self.lookup(path.as_str())? {
                Found::Directory => {
                    return Err(FilesError::IsDirectory {
                        path: path.to_string(),
                    });
                }
                Found::Link => {
                    return Err(FilesError::Symlink {
                        path: path.to_string(),
                    });
                }
                Found::Nothing if self.has_pending_children(path.as_str()) => {
                    return Err(FilesError::IsDirectory {
                        path: path.to_string(),
                    });
                }
                Found::Submodule => {
                    return Err(FilesError::Submodule {
                        path: path.to_string(),
                        submodule: path.to_string(),
                    });
                }
                Found::Nothing => self.check_not_ignored(path)?,
                Found::File(..) => {}
            }
        }
        self.changes.insert(path.to_string(), data);
        Ok(())
    }

    fn checkpoint(&mut self) -> Self::Checkpoint {
        self.changes.clone()
    }

    fn keep(&mut self, _: Self::Checkpoint) {}

    fn rollback(&mut self, checkpoint: Self::Checkpoint) -> Result<(), FilesError> {
        self.changes = checkpoint;
        Ok(())
    }
}
