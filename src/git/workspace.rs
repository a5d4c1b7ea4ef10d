//! The apply's files in a repository, with commands.
//!
//! Owns [`GitWorkspace`]: WRITE and SEARCH edit a tree in memory
//! ([`TreeFiles`]); the first RUN brings clada's scratch working tree to
//! that tree, runs there, and takes what the command changed back in as
//! the new base tree. So an apply without commands never touches a disk
//! working tree, and one with commands pays for the files that differ
//! (plus a status of the scratch tree), not for a checkout.

use std::path::PathBuf;

use gix::ObjectId;

use crate::apply::files::{Entry, FileData, Files, FilesError, Workspace};
use crate::plan::RepoPath;

use super::Repository;
use super::scratch::Scratch;
use super::tree::TreeFiles;

/// The protected policy directory (any case: it must not appear at all).
const POLICY_DIR: &str = ".clada";

pub struct GitWorkspace<'r> {
    repo: &'r Repository,
    files: TreeFiles<'r>,
    scratch: Option<Scratch>,
    /// What `HEAD` shows in the scratch tree: the `pre` commit, or the
    /// unborn branch.
    head: Result<ObjectId, String>,
    /// `clada.sharedDirs`.
    shared: Vec<String>,
}

impl<'r> GitWorkspace<'r> {
    pub fn new(
        repo: &'r Repository,
        tree: ObjectId,
        head: Result<ObjectId, String>,
        shared: Vec<String>,
    ) -> Result<GitWorkspace<'r>, super::GitError> {
        Ok(GitWorkspace {
            repo,
            files: repo.files(tree)?,
            scratch: None,
            head,
            shared,
        })
    }

    /// The tree of the whole state (blobs and trees written).
    pub fn write_tree(&self) -> Result<ObjectId, super::GitError> {
        self.files.write_tree()
    }

    /// A repository error as the store's error (whose text adds the
    /// `git_operation_failed` type itself).
    fn store(e: super::GitError) -> FilesError {
        FilesError::Store(match e {
            super::GitError::Op { what, message } => format!("cannot {what}: {message}"),
            other => other.to_string(),
        })
    }
}

impl Files for GitWorkspace<'_> {
    type Checkpoint = <TreeFiles<'static> as Files>::Checkpoint;

    fn read(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError> {
        self.files.read(path)
    }

    fn size(&self, path: &RepoPath) -> Result<Option<u64>, FilesError> {
        self.files.size(path)
    }

    fn write(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError> {
        self.files.write(path, data)
    }

    fn write_link(&mut self, path: &RepoPath, target: &str) -> Result<(), FilesError> {
        self.files.write_link(path, target)
    }

    fn entry(&self, path: &RepoPath) -> Result<Option<Entry>, FilesError> {
        self.files.entry(path)
    }

    fn remove(&mut self, path: &RepoPath) -> Result<(), FilesError> {
        self.files.remove(path)
    }

    fn list(&self, dir: &RepoPath) -> Result<Vec<(String, Entry)>, FilesError> {
        self.files.list(dir)
    }

    fn mkdir(&mut self, path: &RepoPath) -> Result<bool, FilesError> {
        self.files.mkdir(path)
    }

    fn checkpoint(&mut self) -> Self::Checkpoint {
        self.files.checkpoint()
    }

    fn keep(&mut self, checkpoint: Self::Checkpoint) {
        self.files.keep(checkpoint);
    }

    fn rollback(&mut self, checkpoint: Self::Checkpoint) -> Result<(), FilesError> {
        self.files.rollback(checkpoint)
    }
}

impl Workspace for GitWorkspace<'_> {
    fn materialize(&mut self) -> Result<PathBuf, FilesError> {
        let tree = self.files.write_tree().map_err(Self::store)?;
        if self.scratch.is_none() {
            self.scratch = Some(self.repo.scratch(&self.shared).map_err(Self::store)?);
        }
        let scratch = self.scratch.as_ref().expect("opened above");
        let head = self.head.as_ref().map(|id| *id).map_err(String::as_str);
        scratch.sync(tree, head).map_err(Self::store)?;
        // A tree holds no empty directory: make the ones mkdir made, so
        // that a command sees them (never through a link).
        for dir in self.files.empty_dirs() {
            if crate::run::policy::linked_component(scratch.dir(), dir, false).is_none() {
                std::fs::create_dir_all(scratch.dir().join(dir)).map_err(|e| {
                    FilesError::Denied {
                        path: dir.to_string(),
                        message: crate::words::io(&e),
                    }
                })?;
            }
        }
        self.files.rebase(tree).map_err(Self::store)?;
        Ok(scratch.dir().to_path_buf())
    }

    fn absorb(&mut self) -> Result<Vec<(String, bool)>, FilesError> {
        let Some(scratch) = &self.scratch else {
            return Ok(Vec::new());
        };
        let (tree, paths) = scratch.scan().map_err(Self::store)?;
        let policy = |p: &str| {
            let p = p.to_ascii_lowercase();
            p == POLICY_DIR || p.starts_with(&format!("{POLICY_DIR}/"))
        };
        if let Some((path, _)) = paths.iter().find(|(p, _)| policy(p)) {
            return Err(FilesError::CommandChangedPolicy { path: path.clone() });
        }
        self.files.rebase(tree).map_err(Self::store)?;
        Ok(paths
            .into_iter()
            .map(|(p, on_disk)| (p, matches!(on_disk, super::snapshot::OnDisk::Missing)))
            .collect())
    }
}
