//! The repository: everything that reads or writes git data.
//!
//! This is the only module that imports gix; its types and errors do not
//! leak past it, except `ObjectId`, which callers hold as an opaque id.
//!
//! - `lock`: the apply lock in the git dir, with stale-lock breaking.
//! - `snapshot`: the `pre` tree of the user's working tree state.
//! - `dirty`: which working tree paths differ from the index (the
//!   status's fast path).
//! - `tree`: files of a tree edited in memory (the apply's store).
//! - `commit`: signatures, commits, notes and compare-and-swap ref updates.
//! - `worktree`: bringing the user's working tree and index to the result.
//! - `index_file`: writing the index file (fast, in gix's format).
//! - `state`: the user's uncommitted working tree and index, as trees.
//! - `switch`: moving the working tree and index between states (history).
//! - `history`: commit headers, ancestry, HEAD and reference moves (history).
//! - `scratch`: clada's own reusable working tree, where commands run.
//! - `workspace`: the apply's files: a tree in memory, the scratch tree for RUN.
//! - `hooks`: where the repository's hooks live.
//! - `inbox`: the notes a push adds to the inbox, and branch tips.
//! - `quarantine`: reading pushed objects in pre-receive (the git program).

mod cas;
pub mod commit;
mod config_write;
mod convert;
mod dirty;
pub mod history;
pub mod hooks;
mod ignored;
pub mod inbox;
mod index_file;
pub mod lock;
mod parameters;
pub mod paths;
pub mod quarantine;
pub mod queue;
pub mod scratch;
pub mod ship;
pub mod snapshot;
pub mod state;
pub mod switch;
#[cfg(test)]
mod test_git;
pub mod tree;
pub mod workspace;
pub mod worktree;

use std::path::{Path, PathBuf};

pub use gix::ObjectId;

/// Why a repository operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot open the git repository at {path}: {message}")]
    Open { path: PathBuf, message: String },
    /// What clada asked of the repository, and why it could not be done.
    #[error("cannot {what}: {message}")]
    Op { what: String, message: String },
    /// A revision the user named that names no commit.
    #[error("unknown revision {rev:?}: {why}")]
    UnknownRevision { rev: String, why: String },
}

impl GitError {
    pub(crate) fn op(what: impl Into<String>, e: impl std::fmt::Display) -> GitError {
        GitError::Op {
            what: what.into(),
            message: crate::words::plain(&e.to_string()),
        }
    }
}

/// `REV~N` or `REV^` (N = 1) as `(REV, N)`: the only suffixes that fail
/// for a lack of history rather than a bad name.
fn ancestor_of(rev: &str) -> Option<(&str, usize)> {
    if let Some(below) = rev.strip_suffix('^') {
        return Some((below, 1));
    }
    let (below, n) = rev.rsplit_once('~')?;
    let n = if n.is_empty() { 1 } else { n.parse().ok()? };
    Some((below, n))
}

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On branch `name` (full ref name) at `commit`, or unborn (`None`).
    Branch {
        name: String,
        commit: Option<ObjectId>,
    },
    Detached(ObjectId),
}

impl Head {
    /// The commit HEAD points at (`None`: an unborn branch).
    pub fn commit(&self) -> Option<ObjectId> {
        match self {
            Head::Branch { commit, .. } => *commit,
            Head::Detached(id) => Some(*id),
        }
    }
}

/// An open repository.
pub struct Repository {
    repo: gix::Repository,
    /// The index as the status last read it, for the update that follows
    /// to use instead of reading it again (`worktree.rs`).
    last_index: std::cell::RefCell<Option<worktree::ReadIndex>>,
    /// Work that need not hold the caller up (writing the dirty check's
    /// listing cache), finished before the repository is dropped.
    background: std::cell::RefCell<Vec<std::thread::JoinHandle<()>>>,
}

impl Drop for Repository {
    fn drop(&mut self) {
        for handle in self.background.get_mut().drain(..) {
            // A panic there has been reported on stderr; nothing to add.
            let _ = handle.join();
        }
    }
}

/// A `git config` value from the system and global files alone, for a
/// command run outside any repository (`color.ui` for `git clada parse`).
pub fn global_config_string(key: &str) -> Option<String> {
    // `git -c key=value clada …` first, as git would have it.
    let given = parameters::from_env()
        .into_iter()
        .rev()
        .find_map(|setting| {
            let (name, value) = setting.split_once('=').unwrap_or((&setting, "true"));
            name.eq_ignore_ascii_case(key).then(|| value.to_string())
        });
    if given.is_some() {
        return given;
    }
    let file = gix::config::File::from_globals().ok()?;
    file.string(key).map(|v| v.to_string())
}

/// How gix opens a repository here: with the settings `git -c` passed on.
fn open_options(options: gix::open::Options) -> gix::open::Options {
    options.cli_overrides(parameters::from_env())
}

impl Repository {
    pub(super) fn new(repo: gix::Repository) -> Repository {
        Repository {
            repo,
            last_index: Default::default(),
            background: Default::default(),
        }
    }

    /// Runs `work` on a thread of its own, or here when no thread can be
    /// started; it is finished before the repository is dropped.
    pub(super) fn in_background(&self, work: impl FnOnce() + Send + 'static) {
        let work = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
        let theirs = std::sync::Arc::clone(&work);
        let spawned = std::thread::Builder::new()
            .name("clada-background".into())
            .spawn(move || {
                if let Some(work) = theirs.lock().ok().and_then(|mut w| w.take()) {
                    work();
                }
            });
        match spawned {
            Ok(handle) => self.background.borrow_mut().push(handle),
            Err(_) => {
                if let Some(work) = work.lock().ok().and_then(|mut w| w.take()) {
                    work();
                }
            }
        }
    }

    /// The file-by-file differences from tree `old` to tree `new`.
    pub fn tree_changes(
        &self,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<Vec<tree::Changed>, GitError> {
        tree::tree_changes(&self.repo, old, new)
    }

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
        let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
        trust.full = open_options(trust.full);
        trust.reduced = open_options(trust.reduced);
        let mut repo = gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            trust,
        )
        .map(gix::Repository::from)
        .map_err(|e| GitError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        // Objects are written and read a lot within one process; a bigger
        // cache than the default costs little.
        repo.object_cache_size_if_unset(4 * 1024 * 1024);
        Ok(Some(Repository::new(repo)))
    }

    /// Opens the repository whose git dir is `git_dir`. Hooks use it with
    /// the `GIT_DIR` git gives them: gix resolves the relative `GIT_DIR=.`
    /// of a non-bare repository's receive hooks against the wrong directory.
    pub fn open(git_dir: &Path) -> Result<Repository, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::Open {
            path: git_dir.to_path_buf(),
            message: e.to_string(),
        };
        let absolute = std::path::absolute(git_dir).map_err(|e| fail(&e))?;
        let mut repo = gix::open_opts(absolute, open_options(gix::open::Options::default()))
            .map_err(|e| fail(&e))?;
        repo.object_cache_size_if_unset(4 * 1024 * 1024);
        Ok(Repository::new(repo))
    }

    /// The value of a `git config` key such as `clada.startDelimiter`, from
    /// every configuration file git itself would read.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Every value of a multi-valued `git config` key, in order; `None`
    /// when it is not set at all.
    pub fn config_strings(&self, key: &str) -> Option<Vec<String>> {
        self.repo
            .config_snapshot()
            .strings(key)
            .map(|values| values.iter().map(|v| v.to_string()).collect())
    }

    /// Whether any configuration file git would read has a section
    /// `[name]` or `[name "…"]` (such as `url`).
    pub fn config_has_section(&self, name: &str) -> bool {
        self.repo
            .config_snapshot()
            .plumbing()
            .sections_by_name(name)
            .is_some_and(|mut sections| sections.next().is_some())
    }

    /// A boolean `git config` value; `Err` names a value git would reject.
    pub fn config_bool(&self, key: &str) -> Result<Option<bool>, GitError> {
        self.repo
            .config_snapshot()
            .try_boolean(key)
            .map_err(|e| GitError::op(format!("read {key}"), e))
    }

    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The git dir that every worktree of the repository shares (where its
    /// config is): the git dir itself, but for a linked worktree.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    /// The working tree, `None` for a bare repository.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    pub fn head(&self) -> Result<Head, GitError> {
        let head = self.repo.head().map_err(|e| GitError::op("read HEAD", e))?;
        let commit = head.id().map(|id| id.detach());
        match head.referent_name() {
            Some(name) => Ok(Head::Branch {
                name: name.as_bstr().to_string(),
                commit,
            }),
            None => match commit {
                Some(id) => Ok(Head::Detached(id)),
                None => Err(GitError::op(
                    "read HEAD",
                    "HEAD is neither a branch nor a commit",
                )),
            },
        }
    }

    /// The git operation in progress (a merge, rebase, cherry-pick, revert,
    /// bisect or `git am`), named as git names it, if any.
    pub fn operation_in_progress(&self) -> Option<String> {
        use gix::state::InProgress as P;
        let name = match self.repo.state()? {
            P::ApplyMailbox | P::ApplyMailboxRebase => "am",
            P::Bisect => "bisect",
            P::CherryPick | P::CherryPickSequence => "cherry-pick",
            P::Merge => "merge",
            P::Rebase | P::RebaseInteractive => "rebase",
            P::Revert | P::RevertSequence => "revert",
        };
        Some(name.to_string())
    }

    /// The tree of `commit`, or the empty tree for `None` (an unborn branch).
    pub fn tree_of(&self, commit: Option<ObjectId>) -> Result<ObjectId, GitError> {
        match commit {
            None => Ok(ObjectId::empty_tree(self.repo.object_hash())),
            Some(id) => {
                let commit = self
                    .repo
                    .find_commit(id)
                    .map_err(|e| GitError::op("read a commit", e))?;
                commit
                    .tree_id()
                    .map(|t| t.detach())
                    .map_err(|e| GitError::op("read a commit", e))
            }
        }
    }

    /// The commit `rev` names (`HEAD~2`, a branch, an id).
    pub fn resolve_commit(&self, rev: &str) -> Result<ObjectId, GitError> {
        let unknown = |why: String| GitError::UnknownRevision {
            rev: rev.to_string(),
            why,
        };
        // gix's own error names its parser's steps (`NthAncestor(5)`): the
        // user is told what they asked for and what is wrong instead.
        let id = self.repo.rev_parse_single(rev).map_err(|_| {
            unknown(match ancestor_of(rev) {
                Some((below, 1)) if self.repo.rev_parse_single(below).is_ok() => {
                    format!("{below} has no commit below it")
                }
                Some((below, n)) if self.repo.rev_parse_single(below).is_ok() => {
                    format!("{below} has fewer than {n} commits below it")
                }
                _ => "no commit, branch or tag of this repository has that name".to_string(),
            })
        })?;
        let commit = id
            .object()
            .ok()
            .and_then(|o| o.peel_to_commit().ok())
            .ok_or_else(|| unknown("it names an object that is not a commit".to_string()))?;
        Ok(commit.id)
    }

    /// The message of `commit`.
    pub fn commit_message(&self, commit: ObjectId) -> Result<Vec<u8>, GitError> {
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(|e| GitError::op("read a commit", e))?;
        Ok(commit.message_raw_sloppy().to_vec())
    }

    /// A commit object as it is stored: its headers and message.
    pub fn raw_commit(&self, commit: ObjectId) -> Result<Vec<u8>, GitError> {
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(|e| GitError::op("read a commit", e))?;
        Ok(commit.data.clone())
    }

    /// The tree and parents of a commit object given as bytes (as
    /// [`Repository::raw_commit`] gives them), if they are one as clada
    /// writes them: a tree, parents, an author and a committer git would
    /// accept, no other header (a signature, say), a message.
    pub fn parse_commit(&self, raw: &[u8]) -> Option<(ObjectId, Vec<ObjectId>)> {
        let commit = gix::objs::CommitRef::from_bytes(raw, self.repo.object_hash()).ok()?;
        let plain = commit.extra_headers.is_empty()
            && commit.encoding.is_none()
            && commit.author().is_ok()
            && commit.committer().is_ok();
        plain.then(|| (commit.tree(), commit.parents().collect()))
    }

    /// Writes a commit object given as bytes; its id.
    pub fn write_raw_commit(&self, raw: &[u8]) -> Result<ObjectId, GitError> {
        use gix::objs::Write as _;
        self.repo
            .objects
            .write_buf(gix::objs::Kind::Commit, raw)
            .map_err(|e| GitError::op("write a commit", e))
    }

    /// The id git gives a commit object of these bytes.
    pub fn commit_id(&self, raw: &[u8]) -> Option<ObjectId> {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Commit, raw).ok()
    }

    /// The content of a blob.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        let blob = self
            .repo
            .find_blob(id)
            .map_err(|e| GitError::op("read a blob", e))?;
        Ok(blob.data.clone())
    }

    /// The blob at `path` in `tree`, if it is a regular file.
    pub fn file_in_tree(&self, tree: ObjectId, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        self.content_if(tree, path, |mode| mode.is_blob())
    }

    /// The content at `path` in `tree`: a file's bytes, or a symbolic
    /// link's target; `None` for anything else or nothing.
    pub fn entry_content(&self, tree: ObjectId, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        self.content_if(tree, path, |mode| mode.is_blob() || mode.is_link())
    }

    /// The object at `path` in `tree` with its mode (file, directory,
    /// link alike), if there is one: two trees hold the same thing at a
    /// path when this is equal.
    pub fn entry_at(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, u32)>, GitError> {
        let t = self
            .repo
            .find_tree(tree)
            .map_err(|e| GitError::op("read a tree", e))?;
        if path.is_empty() {
            return Ok(Some((tree, 0o40000)));
        }
        let entry = t
            .lookup_entry_by_path(path)
            .map_err(|e| GitError::op("read a tree", e))?;
        Ok(entry.map(|e| (e.object_id(), u32::from(e.mode().value()))))
    }

    /// The object at `path` in `tree`, if there is one and its mode is one
    /// `wanted` takes.
    fn content_if(
        &self,
        tree: ObjectId,
        path: &str,
        wanted: impl Fn(gix::object::tree::EntryMode) -> bool,
    ) -> Result<Option<Vec<u8>>, GitError> {
        let t = self
            .repo
            .find_tree(tree)
            .map_err(|e| GitError::op("read a tree", e))?;
        let Some(entry) = t
            .lookup_entry_by_path(path)
            .map_err(|e| GitError::op("read a tree", e))?
        else {
            return Ok(None);
        };
        if !wanted(entry.mode()) {
            return Ok(None);
        }
        self.blob(entry.object_id()).map(Some)
    }

    /// The id `bytes` have as a blob, whether it is written or not.
    pub fn blob_id(&self, bytes: &[u8]) -> Result<ObjectId, GitError> {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .map_err(|e| GitError::op("hash a blob", e))
    }

    /// Short form of an id for reports.
    pub fn short(&self, id: ObjectId) -> String {
        id.to_hex_with_len(7).to_string()
    }

    /// A store of the files of `tree` for operations to edit in memory.
    pub fn files(&self, tree: ObjectId) -> Result<tree::TreeFiles<'_>, GitError> {
        tree::TreeFiles::new(&self.repo, tree)
    }

    /// Keeps every object written from now on in memory: nothing reaches
    /// the object database (for `--dry-run`).
    pub fn keep_objects_in_memory(&mut self) {
        self.repo = self.repo.clone().with_object_memory();
    }

    /// This repository again, keeping every object written through it in
    /// memory until [`Repository::write_kept_objects`].
    pub fn in_memory(&self) -> Repository {
        Repository::new(self.repo.clone().with_object_memory())
    }

    /// Writes the objects kept in memory (since
    /// [`Repository::keep_objects_in_memory`], or by an
    /// [`in_memory`](Repository::in_memory) one) to the object database; those
    /// written from now on go there directly.
    pub fn write_kept_objects(&mut self) -> Result<(), GitError> {
        use gix::objs::Write as _;
        let Some(kept) = self.repo.objects.take_object_memory() else {
            return Ok(());
        };
        for (id, (kind, data)) in kept.iter() {
            if !self.repo.objects.exists_without_refresh(id) {
                self.repo
                    .objects
                    .write_buf(*kind, data)
                    .map_err(|e| GitError::op("write an object", e))?;
            }
        }
        Ok(())
    }
}
