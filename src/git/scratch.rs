//! The scratch working tree, where RUN commands and `--verify` run.
//!
//! Owns clada's own working tree of the repository: `<common git
//! dir>/clada/scratch`, registered as the linked worktree `clada-scratch`
//! (admin dir `<common git dir>/worktrees/clada-scratch`) so that git
//! commands inside it work. The user's working tree is never where a
//! command runs.
//!
//! It is created on first need (one checkout of the whole tree, on every
//! core) and kept: its index always holds the tree recorded in the admin
//! dir's `clada-tree`, and bringing it to another tree costs a status of
//! it (stat calls, as `git status`) plus the files that differ — never a
//! fresh checkout. Ignored files (build outputs,
//! caches) stay from one apply to the next. Directories listed in
//! `clada.sharedDirs` are symbolic links to the user's own (ignored)
//! directories, such as `node_modules`, and are never part of a result.
//!
//! Whatever is on disk there belongs to clada: bringing it to a tree
//! replaces anything in the way, and what was there is recovered from the
//! status, so a scratch tree left half-updated by a crash heals on next use.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::snapshot::OnDisk;
use super::worktree::Plan;
use super::{GitError, Repository};

/// The linked worktree's name (its admin dir under `worktrees/`).
const NAME: &str = "clada-scratch";

/// The file in the admin dir naming the tree the index holds.
const RECORDED: &str = "clada-tree";

/// clada's scratch working tree, open.
pub struct Scratch {
    repo: Repository,
    dir: PathBuf,
    admin: PathBuf,
    /// Paths that are links to the user's directories (`clada.sharedDirs`).
    shared: Vec<String>,
    /// The user's working tree they link to.
    main: Option<PathBuf>,
}

/// The file in the admin dir holding the index's stamp as clada left it.
const STAMP: &str = "clada-index-stamp";

/// Enough of the index file's metadata to tell that someone rewrote it
/// (an approved `git add` in the scratch tree): size, change time, inode.
fn stamp(index: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(index).ok()?;
    Some(format!(
        "{} {}.{} {}\n",
        meta.len(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino()
    ))
}

impl Repository {
    /// The scratch working tree, created (empty) if it does not exist.
    /// `shared`: directories of the user's working tree to link into it.
    pub fn scratch(&self, shared: &[String]) -> Result<Scratch, GitError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            GitError::op(format!("{what} the scratch working tree"), e)
        };
        // Absolute: the paths are written into git's link files.
        let common = std::path::absolute(self.repo.common_dir()).map_err(|e| fail("find", &e))?;
        let dir = common.join("clada").join("scratch");
        let admin = common.join("worktrees").join(NAME);
        let link_file = dir.join(".git");
        let registered = std::fs::read_to_string(admin.join("gitdir")).ok();
        let expected = format!("{}\n", link_file.display());
        let link_text = format!("gitdir: {}\n", admin.display());
        if registered.as_deref() != Some(expected.as_str()) {
            // First use, or a tree someone removed half-way: register it
            // again. Files already there are kept (and healed by `sync`).
            let create = || -> std::io::Result<()> {
                std::fs::create_dir_all(&dir)?;
                std::fs::create_dir_all(&admin)?;
                std::fs::write(admin.join("gitdir"), &expected)?;
                std::fs::write(admin.join("commondir"), "../..\n")?;
                // git prunes a worktree whose directory is gone; `locked`
                // says why this one must stay while it exists.
                std::fs::write(admin.join("locked"), "git-clada's scratch working tree\n")?;
                if !admin.join("HEAD").exists() {
                    std::fs::write(admin.join("HEAD"), "ref: refs/heads/clada-scratch-unborn\n")?;
                }
                // The index and the tree it holds start over together.
                let _ = std::fs::remove_file(admin.join("index"));
                let _ = std::fs::remove_file(admin.join(RECORDED));
                let _ = std::fs::remove_file(admin.join(STAMP));
                Ok(())
            };
            create().map_err(|e| fail("create", &e))?;
        }
        // The link to the admin dir is checked every time: a command may
        // have replaced it, and git inside the tree must find this
        // repository, nothing else.
        let is_file = std::fs::symlink_metadata(&link_file).is_ok_and(|m| m.is_file());
        if !is_file
            || std::fs::read_to_string(&link_file).ok().as_deref() != Some(link_text.as_str())
        {
            let relink = || -> std::io::Result<()> {
                if std::fs::symlink_metadata(&link_file).is_ok_and(|m| m.is_dir()) {
                    std::fs::remove_dir_all(&link_file)?;
                }
                std::fs::create_dir_all(&dir)?;
                let tmp = dir.join(".git.clada-tmp");
                std::fs::write(&tmp, &link_text)?;
                std::fs::rename(&tmp, &link_file)
            };
            relink().map_err(|e| fail("repair", &e))?;
        }
        let mut repo = gix::open(&dir).map_err(|e| fail("open", &e))?;
        repo.object_cache_size_if_unset(4 * 1024 * 1024);
        Ok(Scratch {
            repo: Repository::new(repo),
            dir,
            admin,
            shared: shared.to_vec(),
            // Absolute: the links are read from inside the scratch tree.
            main: self.workdir().and_then(|w| std::path::absolute(w).ok()),
        })
    }
}

impl Scratch {
    /// Where commands run.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tree the index holds, if recorded.
    fn recorded(&self) -> Option<ObjectId> {
        let text = std::fs::read_to_string(self.admin.join(RECORDED)).ok()?;
        let id = ObjectId::from_hex(text.trim().as_bytes()).ok()?;
        // A recorded tree that is gone (pruned) cannot be trusted.
        self.repo.repo.find_tree(id).ok().map(|_| id)
    }

    /// Whether the index is still as clada left it, holding exactly the
    /// recorded tree: then only the working tree needs comparing with it;
    /// otherwise the recorded tree is compared with the index too.
    fn index_untouched(&self) -> bool {
        let Ok(recorded) = std::fs::read_to_string(self.admin.join(STAMP)) else {
            return false;
        };
        !recorded.is_empty()
            && stamp(&self.admin.join("index")).as_deref() == Some(recorded.as_str())
    }

    fn is_shared(&self, path: &str) -> bool {
        self.shared.iter().any(|s| {
            path == s
                || path
                    .strip_prefix(s.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// Brings the scratch working tree and its index to `tree`. `head` is
    /// what `HEAD` shows inside it (the apply's `pre` commit, or the
    /// unborn branch's name) so that `git diff` there shows the reply's
    /// changes.
    pub fn sync(&self, tree: ObjectId, head: Result<ObjectId, &str>) -> Result<(), GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op("update the scratch working tree", e);
        let head_text = match head {
            Ok(id) => format!("{id}\n"),
            Err(branch) => format!("ref: {branch}\n"),
        };
        std::fs::write(self.admin.join("HEAD"), head_text).map_err(|e| fail(&e))?;
        // Without a record the index starts empty, which then holds the
        // empty tree for sure.
        let (recorded, trusted) = match self.recorded() {
            Some(id) => (id, self.index_untouched()),
            None => {
                let _ = std::fs::remove_file(self.admin.join("index"));
                if self.holds_nothing() && self.check_out(tree)? {
                    return self.record(tree);
                }
                (self.repo.empty_tree()?, true)
            }
        };
        let state = self
            .repo
            .snapshot_with(recorded, trusted, &|p| self.is_shared(p))?;
        let changed = self.repo.tree_changes(state.tree, tree)?;
        if !changed.is_empty() || !state.paths.is_empty() {
            let plan = Plan {
                commit: tree,
                snapshot: state.paths,
                changed,
            };
            let done = self.repo.update_paths(&plan, true)?;
            if let Some((path, why)) = done.kept.first() {
                return Err(fail(&format!("{path}: {why}")));
            }
        }
        self.record(tree)
    }

    /// Records that the index holds `tree`, stamps the index as clada
    /// left it, and links the shared directories in.
    fn record(&self, tree: ObjectId) -> Result<(), GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op("update the scratch working tree", e);
        std::fs::write(self.admin.join(RECORDED), format!("{tree}\n")).map_err(|e| fail(&e))?;
        // No stamp (no index yet) means "do not trust": an empty file.
        let stamped = stamp(&self.admin.join("index")).unwrap_or_default();
        std::fs::write(self.admin.join(STAMP), stamped).map_err(|e| fail(&e))?;
        self.link_shared()
    }

    /// Whether the directory holds nothing but its `.git` link: a first
    /// use, which a whole checkout fills fastest.
    fn holds_nothing(&self) -> bool {
        std::fs::read_dir(&self.dir)
            .is_ok_and(|mut entries| entries.all(|e| e.is_ok_and(|e| e.file_name() == ".git")))
    }

    /// Checks `tree` out into the empty directory and writes the index
    /// holding it, with gix's checkout on every core (as `git worktree
    /// add`, where a file-by-file update would cost a rename, a failed
    /// mkdir and a re-read per file). Files get the blobs' bytes as they
    /// are, like every update of this tree: no filters, no line-end
    /// conversion. Shows `files done/total` on a terminal.
    ///
    /// `false` (nothing written) when the tree has a `.gitattributes`:
    /// gix's checkout reads it and would convert what it names (`eol`,
    /// `ident`, `working-tree-encoding`), and a RUN would then commit the
    /// converted bytes. The file-by-file update writes blobs as they are.
    fn check_out(&self, tree: ObjectId) -> Result<bool, GitError> {
        let fail =
            |e: &dyn std::fmt::Display| GitError::op("check out the scratch working tree", e);
        let repo = &self.repo.repo;
        let mut index = repo.index_from_tree(&tree).map_err(|e| fail(&e))?;
        let attributes = index.entries().iter().any(|e| {
            let path: &[u8] = e.path(&index);
            path == b".gitattributes" || path.ends_with(b"/.gitattributes")
        });
        if attributes {
            return Ok(false);
        }
        let mut options = repo
            .checkout_options(gix::worktree::stack::state::attributes::Source::IdMapping)
            .map_err(|e| fail(&e))?;
        // As the file-by-file update writes: modes and links as the tree
        // has them, whatever core.fileMode, core.symlinks or
        // core.ignorecase say about the user's own working tree.
        options.fs.executable_bit = true;
        options.fs.symlink = true;
        options.fs.ignore_case = false;
        options.fs.precompose_unicode = false;
        options.filters = gix::filter::plumbing::Pipeline::new(
            Default::default(),
            repo.object_hash(),
            Default::default(),
        );
        options.attributes = Default::default();
        // Only the `.git` link is there, which no tree entry may name.
        options.destination_is_initially_empty = true;
        let objects = repo.objects.clone().into_arc().map_err(|e| fail(&e))?;
        let progress = crate::progress::Counter::start(
            "Checking out clada's scratch working tree",
            index.entries().len(),
        );
        let files = Count(progress.shared());
        let bytes = Count(Default::default());
        let outcome = gix::worktree::state::checkout(
            &mut index,
            &self.dir,
            objects,
            &files,
            &bytes,
            &std::sync::atomic::AtomicBool::new(false),
            options,
        )
        .map_err(|e| fail(&e))?;
        // Where the progress test holds the finished count on screen.
        crate::fault::point("scratch-checked-out");
        drop(progress);
        if let Some(c) = outcome.collisions.first() {
            return Err(fail(&format!("{}: {:?}", c.path, c.error_kind)));
        }
        if let Some(e) = outcome.errors.first() {
            return Err(fail(&format!("{}: {}", e.path, e.error)));
        }
        index.write(Default::default()).map_err(|e| fail(&e))?;
        Ok(true)
    }

    /// Links each shared directory of the user's working tree in, where
    /// nothing else is in the way.
    fn link_shared(&self) -> Result<(), GitError> {
        let Some(main) = &self.main else {
            return Ok(());
        };
        for shared in &self.shared {
            let source = main.join(shared);
            let link = self.dir.join(shared);
            if !source.is_dir() || std::fs::symlink_metadata(&link).is_ok() {
                continue;
            }
            if let Some(parent) = link.parent() {
                std::fs::create_dir_all(parent)
                    .and_then(|()| std::os::unix::fs::symlink(&source, &link))
                    .map_err(|e| GitError::op(format!("link the shared directory {shared}"), e))?;
            }
        }
        Ok(())
    }

    /// What the scratch working tree holds now, as a tree: the synced tree
    /// with every path commands changed (modified, deleted, new and not
    /// ignored) taken from the disk, and those paths.
    pub fn scan(&self) -> Result<(ObjectId, Vec<(String, OnDisk)>), GitError> {
        let recorded = self.recorded().ok_or_else(|| {
            GitError::op(
                "read the scratch working tree",
                "it was never brought to a tree",
            )
        })?;
        let state = self
            .repo
            .snapshot_with(recorded, self.index_untouched(), &|p| self.is_shared(p))?;
        Ok((state.tree, state.paths))
    }
}

/// A count gix's checkout adds to from its threads.
struct Count(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl gix::Count for Count {
    fn set(&self, step: usize) {
        self.0.store(step, std::sync::atomic::Ordering::Relaxed);
    }

    fn step(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn inc_by(&self, step: usize) {
        self.0.fetch_add(step, std::sync::atomic::Ordering::Relaxed);
    }

    fn counter(&self) -> gix::progress::StepShared {
        std::sync::Arc::clone(&self.0)
    }
}

impl Repository {
    /// The empty tree, written (gix does not assume it exists).
    fn empty_tree(&self) -> Result<ObjectId, GitError> {
        self.repo
            .write_object(gix::objs::Tree::empty())
            .map(gix::Id::detach)
            .map_err(|e| GitError::op("write the empty tree", e))
    }
}
