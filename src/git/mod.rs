//! The repository: everything that reads or writes git data.
//!
//! This is the only module that imports gix; its types and errors do not
//! leak past it. Today it opens repositories and reads `clada.*` settings;
//! the apply transaction, history commands and notes will live here too.

use std::path::{Path, PathBuf};

/// Why a repository could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot open the git repository at {path}: {message}")]
    Open { path: PathBuf, message: String },
}

/// An open repository.
pub struct Repository {
    repo: gix::Repository,
}

impl Repository {
    /// Finds the repository containing `dir` (honouring `GIT_DIR`), or
    /// `None` when `dir` is not inside one.
    pub fn discover(dir: &Path) -> Result<Option<Repository>, GitError> {
        if std::env::var_os("GIT_DIR").is_none() {
            use gix::discover::upwards::Error as E;
            if let Err(e) = gix::discover::upwards(dir) {
                let not_found = matches!(
                    e.downcast_any_ref::<E>(),
                    Some(
                        E::NoGitRepository { .. }
                            | E::NoGitRepositoryWithinCeiling { .. }
                            | E::NoGitRepositoryWithinFs { .. }
                    )
                );
                if not_found {
                    return Ok(None);
                }
                return Err(GitError::Open {
                    path: dir.to_path_buf(),
                    message: e.to_string(),
                });
            }
        }
        let repo = gix::discover_with_environment_overrides(dir).map_err(|e| GitError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Some(Repository { repo }))
    }

    /// The value of a `git config` key such as `clada.startDelimiter`, from
    /// every configuration file git itself would read.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }
}
