//! Files in a git tree, edited in memory.
//!
//! Owns [`TreeFiles`]: the [`Files`] store for an apply in a repository.
//! Reads come from the pending changes, then from the base tree; writes are
//! kept in memory until [`TreeFiles::write_tree`] writes blobs and one new
//! tree with gix's tree editor. Nothing touches a working directory, and
//! the cost follows the number of files edited, not the repository's size.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use crate::apply::files::{Entry, FileData, Files, FilesError};
use crate::plan::RepoPath;

use super::GitError;

/// A tree being edited: a base tree plus the files written so far.
pub struct TreeFiles<'r> {
    repo: &'r gix::Repository,
    base: ObjectId,
    /// The base tree, read once: every lookup starts from it.
    base_tree: gix::Tree<'r>,
    /// Files written (`Some`) or removed (`None`) since the base.
    changes: BTreeMap<String, Option<FileData>>,
    /// Directories made by mkdir that hold nothing yet: a tree cannot hold
    /// them, so they live here until a file is written into them (and are
    /// made in the scratch tree for commands).
    dirs: BTreeSet<String>,
    /// The paths of `changes` written as symbolic links (their content is
    /// the target): a link is a blob of its own mode in the tree.
    links: BTreeSet<String>,
    /// The tree the store started from (the snapshot): a path that is not
    /// in it but is on disk is ignored by git (untracked files are in the
    /// snapshot).
    origin: gix::Tree<'r>,
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
            origin: base_tree.clone(),
            base_tree,
            changes: BTreeMap::new(),
            dirs: BTreeSet::new(),
            links: BTreeSet::new(),
            workdir: repo.workdir().map(std::path::Path::to_path_buf),
        })
    }

    /// Refuses a path that is not in the base tree but exists in the
    /// working tree: git ignores it (untracked files are in the snapshot).
    fn check_not_ignored(&self, path: &RepoPath) -> Result<(), FilesError> {
        let Some(workdir) = &self.workdir else {
            return Ok(());
        };
        // On disk because it is in the snapshot (the reply removed or
        // moved it since): not ignored.
        if self
            .origin
            .lookup_entry_by_path(path.as_str())
            .map_err(Self::store)?
            .is_some()
        {
            return Ok(());
        }
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
        // Once a parent is gone from the base (removed, or never there),
        // nothing deeper is in the base either; but files written since
        // may still stand at any depth, so those are checked to the end.
        let mut in_base = true;
        while let Some(slash) = full[end..].find('/') {
            end += slash;
            let parent = &full[..end];
            match self.changes.get(parent) {
                Some(Some(_)) => {
                    return Err(FilesError::ParentIsFile {
                        path: full.to_string(),
                        parent: parent.to_string(),
                    });
                }
                Some(None) => in_base = false,
                None => {}
            }
            if in_base {
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
                    Found::Directory => {}
                    Found::Nothing => in_base = false,
                }
            }
            end += 1;
        }
        Ok(())
    }

    /// Whether some written file or made directory lies under `path`
    /// (making it a directory).
    fn has_pending_children(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.changes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .any(|(_, v)| v.is_some())
            || self.dirs.contains(path)
            || self
                .dirs
                .range(prefix.clone()..)
                .next()
                .is_some_and(|d| d.starts_with(&prefix))
    }

    /// What `path` is in the state (base, then changes), parents checked.
    fn found(&self, path: &str) -> Result<Found, FilesError> {
        match self.changes.get(path) {
            // Its content is in `changes`: callers read it from there, so
            // the id is never looked up.
            Some(Some(_)) if self.links.contains(path) => return Ok(Found::Link),
            Some(Some(data)) => {
                return Ok(Found::File(
                    ObjectId::null(gix::hash::Kind::Sha1),
                    data.executable,
                ));
            }
            Some(None) => {
                return Ok(if self.has_pending_children(path) {
                    Found::Directory
                } else {
                    Found::Nothing
                });
            }
            None => {}
        }
        Ok(match self.lookup(path)? {
            Found::Directory if self.dir_is_gone(path)? => {
                if self.has_pending_children(path) {
                    Found::Directory
                } else {
                    Found::Nothing
                }
            }
            Found::Nothing if self.has_pending_children(path) => Found::Directory,
            other => other,
        })
    }

    /// Whether every entry the base has under the directory `path` was
    /// removed (then the directory is gone, as git has no empty trees).
    fn dir_is_gone(&self, path: &str) -> Result<bool, FilesError> {
        let prefix = format!("{path}/");
        let removed = self
            .changes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .any(|(_, v)| v.is_none());
        if !removed {
            return Ok(false);
        }
        Ok(self
            .base_entries(path)?
            .iter()
            .filter(|(_, e)| *e != Entry::Dir)
            .all(|(p, _)| matches!(self.changes.get(p), Some(None))))
    }

    /// Every entry of the base tree below the directory `dir` ("" for the
    /// root), as full paths.
    fn base_entries(&self, dir: &str) -> Result<Vec<(String, Entry)>, FilesError> {
        let tree = if dir.is_empty() {
            self.base_tree.clone()
        } else {
            match self
                .base_tree
                .lookup_entry_by_path(dir)
                .map_err(Self::store)?
            {
                Some(e) if e.mode().is_tree() => {
                    self.repo.find_tree(e.object_id()).map_err(Self::store)?
                }
                _ => return Ok(Vec::new()),
            }
        };
        let mut recorder = gix::traverse::tree::Recorder::default();
        tree.traverse()
            .breadthfirst(&mut recorder)
            .map_err(Self::store)?;
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        Ok(recorder
            .records
            .into_iter()
            .map(|r| {
                let entry = match r.mode.kind() {
                    EntryKind::Tree => Entry::Dir,
                    EntryKind::Link => Entry::Link,
                    EntryKind::Commit => Entry::Other,
                    EntryKind::Blob | EntryKind::BlobExecutable => Entry::File,
                };
                (format!("{prefix}{}", r.filepath), entry)
            })
            .collect())
    }

    /// Takes `path` out of the state, whatever it is (no checks: for a
    /// snapshot's own paths, not a reply's).
    pub fn forget(&mut self, path: &str) {
        self.changes.insert(path.to_string(), None);
    }

    /// Directories made by mkdir that are still empty in the state: the
    /// scratch tree makes them for commands.
    pub fn empty_dirs(&self) -> impl Iterator<Item = &str> {
        self.dirs.iter().map(String::as_str)
    }

    /// Writes the blobs of the files written so far and the tree of the
    /// whole state; returns its id (the base's id when nothing was written).
    pub fn write_tree(&self) -> Result<ObjectId, GitError> {
        if self.changes.is_empty() {
            return Ok(self.base);
        }

        let mut editor = self
            .repo
            .edit_tree(self.base)
            .map_err(|e| GitError::op("edit the tree", e))?;
        for (path, data) in &self.changes {
            let Some(data) = data else {
                // A path never in the base is no error to remove.
                editor
                    .remove(path.as_str())
                    .map_err(|e| GitError::op("edit the tree", e))?;
                continue;
            };
            let id = self
                .repo
                .write_blob(&data.bytes)
                .map_err(|e| GitError::op("write a blob", e))?;
            let kind = if self.links.contains(path) {
                EntryKind::Link
            } else if data.executable {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            };
            editor
                .upsert(path.as_str(), kind, id)
                .map_err(|e| GitError::op("edit the tree", e))?;
        }
        let id = editor
            .write()
            .map_err(|e| GitError::op("write the tree", e))?;
        Ok(id.detach())
    }

    /// Makes `tree` the new base, forgetting the files written so far:
    /// they must be in it (a RUN's result, taken from the scratch tree
    /// the pending files were written to).
    pub fn rebase(&mut self, tree: ObjectId) -> Result<(), GitError> {
        self.base_tree = self
            .repo
            .find_tree(tree)
            .map_err(|e| GitError::op("read the tree", e))?;
        self.base = tree;
        self.changes.clear();
        self.dirs.clear();
        self.links.clear();
        Ok(())
    }
}

/// The differences between two trees, file by file (see [`Changed`]).
/// The cost follows the subtrees that differ, not the trees' size.
pub fn tree_changes(
    repo: &gix::Repository,
    old: ObjectId,
    new: ObjectId,
) -> Result<Vec<Changed>, GitError> {
    use gix::diff::tree::recorder::Change;
    if old == new {
        return Ok(Vec::new());
    }
    let fail = |e: &dyn std::fmt::Display| GitError::op("compare two trees", e);
    let old_tree = repo.find_tree(old).map_err(|e| fail(&e))?;
    let new_tree = repo.find_tree(new).map_err(|e| fail(&e))?;
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, repo.object_hash()),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, repo.object_hash()),
        &mut gix::diff::tree::State::default(),
        &repo.objects,
        &mut recorder,
    )
    .map_err(|e| fail(&e))?;
    // A path can appear twice (a file replaced by a directory of the same
    // name is a deletion and an addition): merge by path.
    let mut by_path: BTreeMap<String, Changed> = BTreeMap::new();
    let file = |mode: gix::objs::tree::EntryMode, id: ObjectId| {
        let kind = mode.kind();
        matches!(
            kind,
            EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link
        )
        .then_some((id, kind))
    };
    for change in recorder.records {
        let (path, before, after) = match change {
            Change::Addition {
                entry_mode,
                oid,
                path,
                ..
            } => (path, None, file(entry_mode, oid)),
            Change::Deletion {
                entry_mode,
                oid,
                path,
                ..
            } => (path, file(entry_mode, oid), None),
            Change::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
                path,
            } => (
                path,
                file(previous_entry_mode, previous_oid),
                file(entry_mode, oid),
            ),
        };
        if before.is_none() && after.is_none() {
            continue;
        }
        let path = path.to_string();
        let entry = by_path.entry(path.clone()).or_insert(Changed {
            path,
            before: None,
            after: None,
        });
        entry.before = entry.before.or(before);
        entry.after = entry.after.or(after);
    }
    Ok(by_path
        .into_values()
        .filter(|c| c.before != c.after)
        .collect())
}

/// One file an apply changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: String,
    /// Blob id and kind (file, executable file, symbolic link) before;
    /// `None` where nothing was there.
    pub before: Option<(ObjectId, EntryKind)>,
    /// The same after; `None` where the file was deleted.
    pub after: Option<(ObjectId, EntryKind)>,
}

impl Changed {
    /// git's mode of the path before and after (`100644`, `100755`,
    /// `120000`), as a diff header names it.
    pub fn modes(&self) -> (Option<&'static str>, Option<&'static str>) {
        let mode = |side: &Option<(ObjectId, EntryKind)>| {
            side.map(|(_, kind)| match kind {
                EntryKind::BlobExecutable => "100755",
                EntryKind::Link => "120000",
                _ => "100644",
            })
        };
        (mode(&self.before), mode(&self.after))
    }
}

/// Where the file a read asks for is: written by this apply, or a blob of
/// the pre tree.
enum At<'d> {
    Data(&'d FileData),
    Blob(ObjectId, bool),
}

impl TreeFiles<'_> {
    /// The regular file at `path` as [`Files::read`] finds it, with its
    /// errors (links, directories, submodules, ignored paths), unread.
    fn at(&self, path: &RepoPath) -> Result<Option<At<'_>>, FilesError> {
        if self.links.contains(path.as_str()) {
            return Err(FilesError::Symlink {
                path: path.to_string(),
            });
        }
        match self.changes.get(path.as_str()) {
            Some(Some(data)) => return Ok(Some(At::Data(data))),
            Some(None) if !self.has_pending_children(path.as_str()) => return Ok(None),
            _ => {}
        }
        self.check_parents(path)?;
        match self.found(path.as_str())? {
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
            Found::File(id, executable) => Ok(Some(At::Blob(id, executable))),
        }
    }
}

impl Files for TreeFiles<'_> {
    type Checkpoint = (
        ObjectId,
        BTreeMap<String, Option<FileData>>,
        BTreeSet<String>,
        BTreeSet<String>,
    );

    fn read(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError> {
        match self.at(path)? {
            None => Ok(None),
            Some(At::Data(data)) => Ok(Some(data.clone())),
            Some(At::Blob(id, executable)) => {
                // The object's own buffer, not a copy of it: a file near
                // the size limit would otherwise be held twice.
                let mut blob = self.repo.find_blob(id).map_err(Self::store)?;
                Ok(Some(FileData {
                    bytes: blob.take_data(),
                    executable,
                }))
            }
        }
    }

    fn size(&self, path: &RepoPath) -> Result<Option<u64>, FilesError> {
        match self.at(path)? {
            None => Ok(None),
            Some(At::Data(data)) => Ok(Some(data.bytes.len() as u64)),
            // The header alone: a pack entry's or a loose object's first
            // bytes, never the content.
            Some(At::Blob(id, _)) => {
                Ok(Some(self.repo.find_header(id).map_err(Self::store)?.size()))
            }
        }
    }

    fn write(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError> {
        if self.links.contains(path.as_str()) {
            return Err(FilesError::Symlink {
                path: path.to_string(),
            });
        }
        if !matches!(self.changes.get(path.as_str()), Some(Some(_))) {
            self.check_parents(path)?;
            match self.found(path.as_str())? {
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
                Found::Submodule => {
                    return Err(FilesError::Submodule {
                        path: path.to_string(),
                        submodule: path.to_string(),
                    });
                }
                Found::Nothing if !self.changes.contains_key(path.as_str()) => {
                    self.check_not_ignored(path)?;
                }
                Found::Nothing | Found::File(..) => {}
            }
        }
        // The directories above it now hold a file.
        let mut parent = path.as_str();
        while let Some(slash) = parent.rfind('/') {
            parent = &parent[..slash];
            self.dirs.remove(parent);
        }
        self.changes.insert(path.to_string(), Some(data));
        Ok(())
    }

    fn write_link(&mut self, path: &RepoPath, target: &str) -> Result<(), FilesError> {
        // A link replaces a file or a link; anything else is refused as a
        // write there would be.
        if matches!(self.found(path.as_str())?, Found::Link) {
            self.remove(path)?;
        }
        self.write(
            path,
            FileData {
                bytes: target.as_bytes().to_vec(),
                executable: false,
            },
        )?;
        self.links.insert(path.to_string());
        Ok(())
    }

    fn entry(&self, path: &RepoPath) -> Result<Option<Entry>, FilesError> {
        if path.as_str().is_empty() {
            return Ok(Some(Entry::Dir));
        }
        self.check_parents(path)?;
        Ok(match self.found(path.as_str())? {
            Found::Nothing => None,
            Found::File(..) => Some(Entry::File),
            Found::Directory => Some(Entry::Dir),
            Found::Link => Some(Entry::Link),
            Found::Submodule => Some(Entry::Other),
        })
    }

    fn remove(&mut self, path: &RepoPath) -> Result<(), FilesError> {
        match self.entry(path)? {
            Some(Entry::File | Entry::Link) => {
                self.changes.insert(path.to_string(), None);
                self.links.remove(path.as_str());
                Ok(())
            }
            Some(Entry::Dir) => {
                // Only an empty one: what mkdir made.
                self.dirs.remove(path.as_str());
                Ok(())
            }
            Some(Entry::Other) => Err(FilesError::Submodule {
                path: path.to_string(),
                submodule: path.to_string(),
            }),
            None => Ok(()),
        }
    }

    fn list(&self, dir: &RepoPath) -> Result<Vec<(String, Entry)>, FilesError> {
        let dir = dir.as_str();
        if !dir.is_empty() && self.entry(&RepoPath::from_checked(dir))? != Some(Entry::Dir) {
            return Ok(Vec::new());
        }
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut all: BTreeMap<String, Entry> = BTreeMap::new();
        for (path, entry) in self.base_entries(dir)? {
            if entry != Entry::Dir {
                all.insert(path, entry);
            }
        }
        for (path, data) in self.changes.range(prefix.clone()..) {
            if !path.starts_with(&prefix) {
                break;
            }
            match data {
                Some(_) if self.links.contains(path) => all.insert(path.clone(), Entry::Link),
                Some(_) => all.insert(path.clone(), Entry::File),
                None => all.remove(path),
            };
        }
        // Directories are what holds a listed file or an empty directory
        // mkdir made, and those empty ones.
        let empty: Vec<&String> = self
            .dirs
            .iter()
            .filter(|d| d.starts_with(&prefix))
            .collect();
        let mut dirs: BTreeSet<String> = empty.iter().map(|d| (*d).clone()).collect();
        for path in all.keys().chain(empty) {
            let mut parent = path.as_str();
            while let Some(slash) = parent.rfind('/') {
                parent = &parent[..slash];
                if parent.len() < prefix.len() || !dirs.insert(parent.to_string()) {
                    break;
                }
            }
        }
        all.extend(dirs.into_iter().map(|d| (d, Entry::Dir)));
        Ok(all.into_iter().collect())
    }

    fn mkdir(&mut self, path: &RepoPath) -> Result<bool, FilesError> {
        self.check_parents(path)?;
        match self.found(path.as_str())? {
            Found::Directory => Ok(false),
            Found::Nothing => {
                self.check_not_ignored(path)?;
                self.dirs.insert(path.to_string());
                Ok(true)
            }
            Found::File(..) => Err(FilesError::NotADirectory {
                path: path.to_string(),
            }),
            Found::Link => Err(FilesError::Symlink {
                path: path.to_string(),
            }),
            Found::Submodule => Err(FilesError::Submodule {
                path: path.to_string(),
                submodule: path.to_string(),
            }),
        }
    }

    fn checkpoint(&mut self) -> Self::Checkpoint {
        (
            self.base,
            self.changes.clone(),
            self.dirs.clone(),
            self.links.clone(),
        )
    }

    fn keep(&mut self, _: Self::Checkpoint) {}

    fn rollback(
        &mut self,
        (base, changes, dirs, links): Self::Checkpoint,
    ) -> Result<(), FilesError> {
        // A RUN in the block may have moved the base: go back to the old one.
        if base != self.base {
            self.rebase(base).map_err(Self::store)?;
        }
        self.changes = changes;
        self.dirs = dirs;
        self.links = links;
        Ok(())
    }
}
