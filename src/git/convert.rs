//! Blob ↔ working-tree conversions for the files clada writes into the
//! user's working tree: `core.autocrlf`, `core.eol` and `.gitattributes`
//! (`text`, `eol`, `filter`, `ident`, `working-tree-encoding`), through
//! gix's filter pipeline, as git's checkout and `git add` apply them.
//!
//! Without any of those (no such config, no attributes file on the way to
//! the path) the conversion is the identity, and nothing is built: the
//! pipeline reads the whole index, which an apply does not pay for unless
//! a path needs it.

use std::io::Read as _;
use std::path::Path;

use gix::bstr::ByteSlice as _;

use super::{GitError, ObjectId, Repository};

pub(crate) struct Convert<'r> {
    repo: &'r Repository,
    /// Whether the configuration alone may convert every path.
    by_config: bool,
    pipeline: Option<(
        gix::filter::Pipeline<'r>,
        gix::worktree::IndexPersistedOrInMemory,
    )>,
}

impl<'r> Convert<'r> {
    pub(crate) fn new(repo: &'r Repository) -> Convert<'r> {
        let set = |key: &str| repo.config_string(key).is_some();
        let by_config = repo
            .config_string("core.autocrlf")
            .is_some_and(|v| !v.trim().eq_ignore_ascii_case("false"))
            || set("core.eol")
            || set("core.attributesFile")
            || repo.git_dir().join("info/attributes").is_file();
        Convert {
            repo,
            by_config,
            pipeline: None,
        }
    }

    pub(crate) fn object_hash(&self) -> gix::hash::Kind {
        self.repo.repo.object_hash()
    }

    /// Whether `path` (in `workdir`) may be converted: by configuration,
    /// or by a `.gitattributes` file in its directory or one above.
    pub(crate) fn applies(&self, workdir: &Path, path: &str) -> bool {
        if self.by_config {
            return true;
        }
        let mut dir = Some(Path::new(path).parent().unwrap_or(Path::new("")));
        while let Some(d) = dir {
            if workdir.join(d).join(".gitattributes").is_file() {
                return true;
            }
            dir = d.parent();
        }
        false
    }

    fn pipeline(
        &mut self,
    ) -> Result<
        &mut (
            gix::filter::Pipeline<'r>,
            gix::worktree::IndexPersistedOrInMemory,
        ),
        GitError,
    > {
        if self.pipeline.is_none() {
            let built = self
                .repo
                .repo
                .filter_pipeline(None)
                .map_err(|e| GitError::op("set up git's filters", e))?;
            self.pipeline = Some(built);
        }
        Ok(self.pipeline.as_mut().expect("built above"))
    }

    /// The bytes git's checkout would write for a blob's `bytes` at `path`.
    pub(crate) fn for_worktree(
        &mut self,
        workdir: &Path,
        path: &str,
        bytes: Vec<u8>,
    ) -> Result<Vec<u8>, GitError> {
        if !self.applies(workdir, path) {
            return Ok(bytes);
        }
        let fail = |e: &dyn std::fmt::Display| GitError::op(format!("convert {path}"), e);
        let (pipeline, _) = self.pipeline()?;
        let mut out = pipeline
            .convert_to_worktree(&bytes, path.as_bytes().as_bstr(), Default::default())
            .map_err(|e| fail(&e))?;
        let mut converted = Vec::with_capacity(bytes.len() + bytes.len() / 16);
        out.read_to_end(&mut converted).map_err(|e| fail(&e))?;
        Ok(converted)
    }

    /// The blob id `git add` would give the regular file `full` at `path`.
    pub(crate) fn hash_file(
        &mut self,
        workdir: &Path,
        path: &str,
        full: &Path,
    ) -> Result<ObjectId, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op(format!("read {path}"), e);
        let kind = self.repo.repo.object_hash();
        let data = if self.applies(workdir, path) {
            let file = std::fs::File::open(full).map_err(|e| fail(&e))?;
            let (pipeline, index) = self.pipeline()?;
            let mut converted = pipeline
                .convert_to_git(file, Path::new(path), index)
                .map_err(|e| fail(&e))?;
            let mut data = Vec::new();
            converted.read_to_end(&mut data).map_err(|e| fail(&e))?;
            data
        } else {
            std::fs::read(full).map_err(|e| fail(&e))?
        };
        gix::objs::compute_hash(kind, gix::objs::Kind::Blob, &data).map_err(|e| fail(&e))
    }
}
