//! The files an apply edits, wherever they live.
//!
//! Owns the [`Files`] trait that operations read and write through, so the
//! same WRITE/SEARCH code edits a git tree in memory (`git::tree`) or a
//! plain directory (`dir`), and the errors every store reports the same way.

use crate::plan::RepoPath;

/// A regular file's content and executable bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileData {
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// Why a path cannot be read or written as a regular file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilesError {
    #[error(
        "symlink_not_allowed: {path} is a symbolic link; clada does not write or search through links"
    )]
    Symlink { path: String },
    #[error("file_not_found: {path} is a directory, not a file")]
    IsDirectory { path: String },
    #[error("file_not_found: {parent} is a file, so {path} cannot be inside it")]
    ParentIsFile { path: String, parent: String },
    #[error(
        "file_not_found: {path} is inside the submodule {submodule}; clada edits this repository only"
    )]
    Submodule { path: String, submodule: String },
    #[error(
        "protected_path: {path} exists but git ignores it; clada does not overwrite ignored files (they are often secrets or build output)"
    )]
    Ignored { path: String },
    #[error(
        "protected_path: the command changed {path}; .clada holds the project's own policy and a reply cannot change it, so nothing the command changed was kept"
    )]
    CommandChangedPolicy { path: String },
    #[error("not_a_directory: {path} is a file, not a directory")]
    NotADirectory { path: String },
    #[error("permission_denied: {path}: {message}")]
    Denied { path: String, message: String },
    #[error("git_operation_failed: {0}")]
    Store(String),
}

impl FilesError {
    /// What to send instead.
    pub fn hint(&self) -> Option<String> {
        match self {
            FilesError::Symlink { .. } => Some(
                "edit the file the link points to, by its own path inside the repository"
                    .to_string(),
            ),
            FilesError::IsDirectory { .. } => {
                Some("name a file inside the directory, or choose another path".to_string())
            }
            FilesError::ParentIsFile { parent, .. } => Some(format!(
                "{parent} is a file and cannot contain others: choose another directory"
            )),
            FilesError::Submodule { submodule, .. } => Some(format!(
                "change {submodule} in its own repository, or leave it out of this reply"
            )),
            FilesError::Ignored { .. } => Some(
                "choose another path; if the file must change, the user edits it by hand"
                    .to_string(),
            ),
            FilesError::CommandChangedPolicy { .. } => Some(
                "leave .clada alone; the user changes it with git clada allow or by hand"
                    .to_string(),
            ),
            FilesError::NotADirectory { path } => Some(format!(
                "{path} is a file: choose another name for the directory, or move the file away first"
            )),
            FilesError::Denied { .. } | FilesError::Store(_) => None,
        }
    }

    /// The stable error type (apply.md §2).
    pub fn error_type(&self) -> &'static str {
        match self {
            FilesError::Symlink { .. } => "symlink_not_allowed",
            FilesError::IsDirectory { .. }
            | FilesError::ParentIsFile { .. }
            | FilesError::Submodule { .. } => "file_not_found",
            FilesError::Ignored { .. } | FilesError::CommandChangedPolicy { .. } => {
                "protected_path"
            }
            FilesError::NotADirectory { .. } => "not_a_directory",
            FilesError::Denied { .. } => "permission_denied",
            FilesError::Store(_) => "git_operation_failed",
        }
    }
}

/// What a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Entry {
    File,
    Dir,
    /// A symbolic link (never followed).
    Link,
    /// A submodule, or on disk a FIFO, socket or device.
    Other,
}

/// A store of files that operations edit. Reads see earlier writes.
pub trait Files {
    /// A state to return to, for rolling back a TASKS block.
    type Checkpoint;

    /// The regular file at `path`; `None` if nothing is there. A symbolic
    /// link at the path or at any parent is an error, as is a directory.
    fn read(&self, path: &RepoPath) -> Result<Option<FileData>, FilesError>;

    /// The size in bytes of what [`Files::read`] would give, with the same
    /// errors, without reading the file where the store can tell (an
    /// object's header, a file's metadata): an edit of a file over
    /// `clada.maxFileSize` is refused before it is read.
    fn size(&self, path: &RepoPath) -> Result<Option<u64>, FilesError> {
        Ok(self.read(path)?.map(|f| f.bytes.len() as u64))
    }

    /// Creates or replaces the regular file at `path` (parents as needed).
    fn write(&mut self, path: &RepoPath, data: FileData) -> Result<(), FilesError>;

    /// Makes `path` a symbolic link to `target`, replacing the regular
    /// file or link there (parents as needed). The caller has checked
    /// that the target stays inside the repository.
    fn write_link(&mut self, path: &RepoPath, target: &str) -> Result<(), FilesError>;

    /// What is at `path` (`None`: nothing). A symbolic link at a parent
    /// is an error; at the path itself it is [`Entry::Link`].
    fn entry(&self, path: &RepoPath) -> Result<Option<Entry>, FilesError>;

    /// Removes the file or link at `path`, or the empty directory there.
    fn remove(&mut self, path: &RepoPath) -> Result<(), FilesError>;

    /// Everything below the directory `dir` (the root when empty), at every
    /// depth, as paths from the root, sorted; nothing when it is not a
    /// directory. Directories are listed too; `.git` never is.
    fn list(&self, dir: &RepoPath) -> Result<Vec<(String, Entry)>, FilesError>;

    /// Creates the directory `path` and its parents; `false` when it was
    /// there already.
    fn mkdir(&mut self, path: &RepoPath) -> Result<bool, FilesError>;

    fn checkpoint(&mut self) -> Self::Checkpoint;

    /// Ends `checkpoint` keeping every write since it.
    fn keep(&mut self, checkpoint: Self::Checkpoint);

    /// Undoes every write since `checkpoint` was taken.
    fn rollback(&mut self, checkpoint: Self::Checkpoint) -> Result<(), FilesError>;
}

/// A store in which commands can run: its state is made real on disk
/// before a command, and what the command changed is taken in after it.
pub trait Workspace: Files {
    /// Makes the current state real on disk; returns the directory that
    /// stands for the repository root.
    fn materialize(&mut self) -> Result<std::path::PathBuf, FilesError>;

    /// Takes in what commands changed on disk since `materialize`; returns
    /// the paths that changed, in order, each with whether the commands
    /// removed it.
    fn absorb(&mut self) -> Result<Vec<(String, bool)>, FilesError>;
}
