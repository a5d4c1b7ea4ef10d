//! Files in a plain directory, for `--no-git`.
//!
//! Owns [`DirFiles`]: reads and writes go straight to disk under a root.
//! Symbolic links are refused at the path and at every parent, so nothing
//! is written outside the root. A checkpoint records the original content
//! of each file written after it, so a failed TASKS block can be undone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fsmode::{is_executable, set_executable};
use crate::plan::RepoPath;

use super::files::{Entry, FileData, Files, FilesError, Workspace};

pub struct DirFiles {
    root: PathBuf,
    /// One journal per open checkpoint, innermost last: the original
    /// content of each file written since it (`None`: the file did not
    /// exist) and the directories created.
    journals: Vec<Journal>,
}

#[derive(Default)]
pub struct Journal {
    files: BTreeMap<String, Option<FileData>>,
    /// Directories created since the checkpoint (removed on rollback when
    /// empty).
    dirs: Vec<PathBuf>,
    /// Empty directories removed since the checkpoint (made again on
    /// rollback).
    removed_dirs: Vec<PathBuf>,
}

impl DirFiles {
    pub fn new(root: &Path) -> DirFiles {
        DirFiles {
            root: root.to_path_buf(),
            journals: Vec::new(),
        }
    }

    fn denied(path: &str, e: std::io::Error) -> FilesError {
        FilesError::Denied {
            path: path.to_string(),
            message: crate::words::io(&e),
        }
    }

    /// Checks the parents of `path` on disk: no links, no files. A path
    /// outside the root (`--allow-escape`) was asked for explicitly: only
    /// the file itself is checked.
    fn check_parents(&self, path: &RepoPath) -> Result<(), FilesError> {
        if path.escapes() {
            return Ok(());
        }
        let parts: Vec<&str> = path.components().collect();
        let mut dir = self.root.clone();
        for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
            dir.push(part);
            let shown = parts[..=i].join("/");
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(FilesError::Symlink { path: shown });
                }
                Ok(m) if !m.is_dir() => {
                    return Err(FilesError::ParentIsFile {
                        path: path.to_string(),
                        parent: shown,
                    });
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Self::denied(&shown, e)),
            }
        }
        Ok(())
    }

    fn write_checked(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError> {
        let before = self.read_checked(path)?;
        let full = self.root.join(path.as_str());
        if let Some(parent) = full.parent() {
            // Remember each directory this write creates, for rollback.
            let mut missing = Vec::new();
            let mut dir = parent.to_path_buf();
            while !dir.exists() && dir.starts_with(&self.root) {
                missing.push(dir.clone());
                if !dir.pop() {
                    break;
                }
            }
            std::fs::create_dir_all(parent).map_err(|e| Self::denied(path.as_str(), e))?;
            if let Some(j) = self.journals.last_mut() {
                j.dirs.extend(missing.into_iter().rev());
            }
        }
        if let Some(j) = self.journals.last_mut() {
            j.files.entry(path.to_string()).or_insert(before);
        }
        std::fs::write(&full, &data.bytes).map_err(|e| Self::denied(path.as_str(), e))?;
        set_executable(&full, data.executable).map_err(|e| Self::denied(path.as_str(), e))?;
        Ok(())
    }

    fn read_checked(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError> {
        let Some((full, m)) = self.regular_file(path)? else {
            return Ok(None);
        };
        let bytes = std::fs::read(&full).map_err(|e| Self::denied(path.as_str(), e))?;
        Ok(Some(FileData {
            bytes,
            executable: is_executable(&m),
        }))
    }

    /// The regular file at `path` and its metadata, with the errors of
    /// [`DirFiles::read_checked`], unread.
    fn regular_file(
        &self,
        path: &RepoPath,
    ) -> Result<Option<(std::path::PathBuf, std::fs::Metadata)>, FilesError> {
        self.check_parents(path)?;
        let full = self.root.join(path.as_str());
        match std::fs::symlink_metadata(&full) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Self::denied(path.as_str(), e)),
            Ok(m) if m.file_type().is_symlink() => Err(FilesError::Symlink {
                path: path.to_string(),
            }),
            Ok(m) if m.is_dir() => Err(FilesError::IsDirectory {
                path: path.to_string(),
            }),
            // A FIFO, socket or device would block or never end.
            Ok(m) if !m.is_file() => Err(FilesError::Denied {
                path: path.to_string(),
                message: "not a regular file".to_string(),
            }),
            Ok(m) => Ok(Some((full, m))),
        }
    }
}

impl Files for DirFiles {
    /// The depth of the journal this checkpoint opened.
    type Checkpoint = usize;

    fn read(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError> {
        self.read_checked(path)
    }

    fn size(&self, path: &RepoPath) -> Result<Option<u64>, FilesError> {
        Ok(self.regular_file(path)?.map(|(_, m)| m.len()))
    }

    fn write(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError> {
        self.write_checked(path, data)
    }

    fn write_link(&mut self, path: &RepoPath, target: &str) -> Result<(), FilesError> {
        // The file there (if any) is written first, so that the journal
        // holds it and its directories for a rollback; then it becomes
        // the link.
        // A link there is refused (read_checked says so): without git,
        // a link removed inside a block could not be restored.
        let before = self.read_checked(path)?;
        self.write_checked(
            path,
            before.unwrap_or(FileData {
                bytes: Vec::new(),
                executable: false,
            }),
        )?;
        let full = self.root.join(path.as_str());
        std::fs::remove_file(&full).map_err(|e| Self::denied(path.as_str(), e))?;
        std::os::unix::fs::symlink(target, &full).map_err(|e| Self::denied(path.as_str(), e))
    }

    fn entry(&self, path: &RepoPath) -> Result<Option<Entry>, FilesError> {
        if path.as_str().is_empty() {
            return Ok(Some(Entry::Dir));
        }
        self.check_parents(path)?;
        match std::fs::symlink_metadata(self.root.join(path.as_str())) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Self::denied(path.as_str(), e)),
            Ok(m) => Ok(Some(entry_of(&m))),
        }
    }

    fn remove(&mut self, path: &RepoPath) -> Result<(), FilesError> {
        let full = self.root.join(path.as_str());
        match self.entry(path)? {
            None => Ok(()),
            Some(Entry::Dir) => {
                std::fs::remove_dir(&full).map_err(|e| Self::denied(path.as_str(), e))?;
                if let Some(j) = self.journals.last_mut() {
                    j.removed_dirs.push(full);
                }
                Ok(())
            }
            Some(Entry::Link | Entry::Other) => {
                // Links and special files are removed, never restored:
                // say so rather than lose one inside an undoable block.
                if !self.journals.is_empty() {
                    return Err(FilesError::Denied {
                        path: path.to_string(),
                        message: "not a regular file; without git, clada removes only regular files and directories inside a block it may have to undo".to_string(),
                    });
                }
                std::fs::remove_file(&full).map_err(|e| Self::denied(path.as_str(), e))
            }
            Some(Entry::File) => {
                let before = self.read_checked(path)?;
                if let Some(j) = self.journals.last_mut() {
                    j.files.entry(path.to_string()).or_insert(before);
                }
                std::fs::remove_file(&full).map_err(|e| Self::denied(path.as_str(), e))
            }
        }
    }

    fn list(&self, dir: &RepoPath) -> Result<Vec<(String, Entry)>, FilesError> {
        if self.entry(dir)? != Some(Entry::Dir) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let mut pending = vec![dir.clone()];
        while let Some(at) = pending.pop() {
            let full = self.root.join(at.as_str());
            let read = std::fs::read_dir(&full).map_err(|e| Self::denied(at.as_str(), e))?;
            for item in read {
                let item = item.map_err(|e| Self::denied(at.as_str(), e))?;
                let Some(name) = item.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if name.eq_ignore_ascii_case(".git") {
                    continue;
                }
                let path = at.join(&name);
                let meta = item
                    .metadata()
                    .map_err(|e| Self::denied(path.as_str(), e))?;
                let entry = entry_of(&meta);
                if entry == Entry::Dir {
                    pending.push(path.clone());
                }
                out.push((path.as_str().to_string(), entry));
            }
        }
        out.sort();
        Ok(out)
    }

    fn mkdir(&mut self, path: &RepoPath) -> Result<bool, FilesError> {
        match self.entry(path)? {
            Some(Entry::Dir) => return Ok(false),
            Some(Entry::Link) => {
                return Err(FilesError::Symlink {
                    path: path.to_string(),
                });
            }
            Some(_) => {
                return Err(FilesError::NotADirectory {
                    path: path.to_string(),
                });
            }
            None => {}
        }
        let full = self.root.join(path.as_str());
        let mut missing = Vec::new();
        let mut dir = full.clone();
        while !dir.exists() && dir.starts_with(&self.root) {
            missing.push(dir.clone());
            if !dir.pop() {
                break;
            }
        }
        std::fs::create_dir_all(&full).map_err(|e| Self::denied(path.as_str(), e))?;
        if let Some(j) = self.journals.last_mut() {
            j.dirs.extend(missing.into_iter().rev());
        }
        Ok(true)
    }

    fn checkpoint(&mut self) -> usize {
        self.journals.push(Journal::default());
        self.journals.len()
    }

    fn keep(&mut self, depth: usize) {
        if self.journals.len() != depth {
            return;
        }
        let Some(inner) = self.journals.pop() else {
            return;
        };
        // An enclosing checkpoint must still be able to undo these writes:
        // hand them down, keeping its own (older) originals.
        if let Some(outer) = self.journals.last_mut() {
            for (path, before) in inner.files {
                outer.files.entry(path).or_insert(before);
            }
            outer.dirs.extend(inner.dirs);
            outer.removed_dirs.extend(inner.removed_dirs);
        }
    }

    fn rollback(&mut self, depth: usize) -> Result<(), FilesError> {
        if self.journals.len() != depth {
            return Ok(());
        }
        let Some(journal) = self.journals.pop() else {
            return Ok(());
        };
        // Undo in the order that cannot collide: what the block created
        // goes first (files, then directories, deepest first), then what
        // it removed comes back (directories, then file contents). Every
        // step is tried; the first error is reported.
        let mut first_error = None;
        let mut note = |r: Result<(), FilesError>| {
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        };
        let (created, restored): (Vec<_>, Vec<_>) = journal
            .files
            .into_iter()
            .partition(|(_, before)| before.is_none());
        for (path, _) in created.iter().rev() {
            match std::fs::remove_file(self.root.join(path)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    note(Err(Self::denied(path, e)));
                }
                _ => {}
            }
        }
        let mut made = journal.dirs.clone();
        made.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for dir in &made {
            // Only empty directories go; anything else was there anyway.
            let _ = std::fs::remove_dir(dir);
        }
        for dir in &journal.removed_dirs {
            note(std::fs::create_dir_all(dir).map_err(|e| Self::denied(&dir.to_string_lossy(), e)));
        }
        for (path, before) in restored {
            let Some(data) = before else { continue };
            let full = self.root.join(&path);
            let restore = || -> std::io::Result<()> {
                // A removed file's directory may be gone with it.
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                // A link the block made stands there: writing would
                // follow it.
                if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&full)?;
                }
                std::fs::write(&full, &data.bytes)?;
                set_executable(&full, data.executable)
            };
            note(restore().map_err(|e| Self::denied(&path, e)));
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
fn entry_of(meta: &std::fs::Metadata) -> Entry {
    let kind = meta.file_type();
    if kind.is_symlink() {
        Entry::Link
    } else if kind.is_dir() {
        Entry::Dir
    } else if kind.is_file() {
        Entry::File
    } else {
        Entry::Other
    }
}

/// Commands run in place: the directory is the state. What they change
/// is not tracked, so a failed TASKS block cannot undo it (doc/run.md).
impl Workspace for DirFiles {
    fn materialize(&mut self) -> Result<PathBuf, FilesError> {
        Ok(self.root.clone())
    }

    fn absorb(&mut self) -> Result<Vec<(String, bool)>, FilesError> {
        Ok(Vec::new())
    }
}
