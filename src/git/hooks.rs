//! Where this repository's hooks live.
//!
//! Owns resolving the hooks directory as git does: `core.hooksPath` when
//! set (`~` expanded; a relative path is relative to where hooks run — the
//! top of the working tree, or the git dir of a bare repository), else
//! `hooks/` in the common git dir (shared by linked worktrees).

use std::path::PathBuf;

use super::{GitError, Repository};

impl Repository {
    /// The directory git runs this repository's hooks from.
    pub fn hooks_dir(&self) -> Result<PathBuf, GitError> {
        let configured = self
            .repo
            .config_snapshot()
            .trusted_path("core.hooksPath")
            .map_err(|e| GitError::op("read core.hooksPath", e))?;
        let dir = match configured {
            Some(path) if path.is_absolute() => path,
            Some(path) => self.workdir().unwrap_or(self.git_dir()).join(path),
            None => self.repo.common_dir().join("hooks"),
        };
        // Absolute, so that what is reported names the place anywhere.
        std::path::absolute(&dir).map_err(|e| GitError::op("resolve the hooks directory", e))
    }
}
