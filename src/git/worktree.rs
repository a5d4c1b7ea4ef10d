//! Bringing the user's working tree and index to the applied commit.
//!
//! Owns step 9 of git.md §1. Only paths the apply touched are looked at:
//! the files the reply changed (written to disk unless the user changed them
//! since the snapshot: those are kept and reported) and the paths of the
//! snapshot (whose index entries now match the new commit). The index is
//! read and written under git's own `index.lock`. A journal in the git dir
//! records the update before it starts, so that an update cut short by a
//! crash is finished by the next apply.

use std::io::Write as _;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::index_file::write_index_to_lock;
use super::snapshot::OnDisk;
use super::tree::Changed;
use super::{GitError, Repository};
use crate::fsmode::set_executable;

/// The journal of an update in progress.
const JOURNAL: &str = "clada-worktree-update";

/// Files an update could not write (a read-only directory, say): their
/// stale content on disk must never be taken for the user's edit.
const UNWRITTEN: &str = "clada-unwritten";

/// What the update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeUpdate {
    /// Files written with the applied content.
    pub written: Vec<String>,
    /// Files left as they are, with why.
    pub kept: Vec<(String, String)>,
    /// Files that could not be written, with the error: their disk content
    /// is stale (recorded in the git dir; never taken for the user's edit,
    /// written again by the next command once the cause is fixed).
    pub failed: Vec<(String, String)>,
}

/// The final state of one path in the new commit.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Final {
    Absent,
    Entry(ObjectId, EntryKind),
}

/// The whole update, as recorded in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The commit the branch now points at.
    pub commit: ObjectId,
    pub snapshot: Vec<(String, OnDisk)>,
    pub changed: Vec<Changed>,
}

fn kind_code(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::BlobExecutable => "x",
        EntryKind::Link => "l",
        _ => "f",
    }
}

fn kind_from(code: &str) -> Option<EntryKind> {
    Some(match code {
        "x" => EntryKind::BlobExecutable,
        "l" => EntryKind::Link,
        "f" => EntryKind::Blob,
        _ => return None,
    })
}

/// One side of a change in the journal: `- -` or `<id> <kind>`.
#[allow(clippy::option_option)]
fn side(id: &str, kind: &str) -> Option<Option<(ObjectId, EntryKind)>> {
    if id == "-" {
        return Some(None);
    }
    Some(Some((
        ObjectId::from_hex(id.as_bytes()).ok()?,
        kind_from(kind)?,
    )))
}

impl Plan {
    /// One line per item; paths last (they may hold spaces, never newlines
    /// or tabs in what clada writes).
    fn encode(&self) -> String {
        let mut out = format!("commit {}\n", self.commit);
        for (path, state) in &self.snapshot {
            match state {
                OnDisk::Blob { id, kind } => {
                    out.push_str(&format!("s {id} {}\t{path}\n", kind_code(*kind)))
                }
                OnDisk::Missing => out.push_str(&format!("s - -\t{path}\n")),
                OnDisk::Other => {}
            }
        }
        for c in &self.changed {
            let side = |e: Option<(ObjectId, EntryKind)>| {
                e.map_or("- -".to_string(), |(id, kind)| {
                    format!("{id} {}", kind_code(kind))
                })
            };
            out.push_str(&format!(
                "c {} {}\t{}\n",
                side(c.before),
                side(c.after),
                c.path
            ));
        }
        out
    }

    fn decode(text: &str) -> Option<Plan> {
        let mut lines = text.lines();
        let commit = ObjectId::from_hex(lines.next()?.strip_prefix("commit ")?.as_bytes()).ok()?;
        let (mut snapshot, mut changed) = (Vec::new(), Vec::new());
        for line in lines {
            let (head, path) = line.split_once('\t')?;
            let fields: Vec<&str> = head.split(' ').collect();
            match fields.as_slice() {
                ["s", "-", "-"] => snapshot.push((path.to_string(), OnDisk::Missing)),
                ["s", id, kind] => snapshot.push((
                    path.to_string(),
                    OnDisk::Blob {
                        id: ObjectId::from_hex(id.as_bytes()).ok()?,
                        kind: kind_from(kind)?,
                    },
                )),
                ["c", b_id, b_kind, id, kind] => changed.push(Changed {
                    path: path.to_string(),
                    before: side(b_id, b_kind)?,
                    after: side(id, kind)?,
                }),
                _ => return None,
            }
        }
        Some(Plan {
            commit,
            snapshot,
            changed,
        })
    }
}

impl Repository {
    fn journal_path(&self) -> PathBuf {
        self.git_dir().join(JOURNAL)
    }

    /// A worktree update that a crash cut short, if any.
    pub fn pending_update(&self) -> Result<Option<Plan>, GitError> {
        match std::fs::read_to_string(self.journal_path()) {
            Ok(text) => Ok(Plan::decode(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(GitError::op("read the worktree journal", e)),
        }
    }

    /// Forgets a pending update (when the branch has moved on since).
    pub fn drop_pending_update(&self) -> Result<(), GitError> {
        match std::fs::remove_file(self.journal_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(GitError::op("remove the worktree journal", e))
            }
            _ => Ok(()),
        }
    }

    fn unwritten_path(&self) -> PathBuf {
        self.git_dir().join(UNWRITTEN)
    }

    /// Adds `changes` to the record of files an update could not write.
    fn record_unwritten(&self, commit: ObjectId, changes: Vec<Changed>) -> Result<(), GitError> {
        let mut all = self.unwritten()?;
        all.retain(|old| !changes.iter().any(|c| c.path == old.path));
        all.extend(changes);
        self.save_unwritten(commit, &all)
    }

    fn unwritten(&self) -> Result<Vec<Changed>, GitError> {
        match std::fs::read_to_string(self.unwritten_path()) {
            Ok(text) => Ok(Plan::decode(&text).map(|p| p.changed).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(GitError::op("read the record of unwritten files", e)),
        }
    }

    fn save_unwritten(&self, commit: ObjectId, changes: &[Changed]) -> Result<(), GitError> {
        let path = self.unwritten_path();
        if changes.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(GitError::op("remove the record of unwritten files", e))
                }
                _ => Ok(()),
            };
        }
        let plan = Plan {
            commit,
            snapshot: Vec::new(),
            changed: changes.to_vec(),
        };
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(plan.encode().as_bytes())?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| GitError::op("write the record of unwritten files", e))
    }

    /// Writes again the files an earlier update could not write, where
    /// HEAD still holds that version and the disk still the stale one.
    /// Returns the paths written and those still stale (to be left out of
    /// a snapshot: their content is not the user's). A file the user
    /// changed since, or that HEAD no longer holds, is forgotten.
    pub fn retry_unwritten(&self) -> Result<(Vec<String>, Vec<String>), GitError> {
        let changes = self.unwritten()?;
        if changes.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let Some(workdir) = self.workdir().map(Path::to_path_buf) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let head = self.tree_of(self.head()?.commit())?;
        let mut conv = super::convert::Convert::new(self);
        let (mut written, mut stale, mut keep) = (Vec::new(), Vec::new(), Vec::new());
        for c in changes {
            if self.entry_in_tree(head, &c.path)? != c.after {
                continue;
            }
            let again = if crate::fault::fails("worktree-write", &c.path) {
                Err(GitError::op(
                    format!("write {}", c.path),
                    "injected failure",
                ))
            } else {
                self.write_file(&workdir, &c, false, Some(&mut conv))
            };
            match again {
                Ok(None) => written.push(c.path.clone()),
                // The user changed it since: theirs now.
                Ok(Some(_)) => {}
                Err(_) => {
                    stale.push(c.path.clone());
                    keep.push(c);
                }
            }
        }
        let commit = self
            .head()?
            .commit()
            .unwrap_or_else(|| ObjectId::null(self.repo.object_hash()));
        self.save_unwritten(commit, &keep)?;
        Ok((written, stale))
    }

    /// The recorded unwritten files whose disk content is still the stale
    /// one (and HEAD still the version that could not be written): not
    /// the user's edits. Reads only.
    pub fn unwritten_stale(&self) -> Result<Vec<String>, GitError> {
        let changes = self.unwritten()?;
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        let Some(workdir) = self.workdir().map(Path::to_path_buf) else {
            return Ok(Vec::new());
        };
        let head = self.tree_of(self.head()?.commit())?;
        let mut conv = super::convert::Convert::new(self);
        let mut stale = Vec::new();
        for c in changes {
            if self.entry_in_tree(head, &c.path)? != c.after {
                continue;
            }
            let full = workdir.join(&c.path);
            let now = match disk_entry_converted(&workdir, &c.path, &full, &mut conv)? {
                Disk::Missing => None,
                Disk::Entry(id, is_link) => Some((id, is_link)),
                Disk::Other => continue,
            };
            let before = c.before.map(|(id, kind)| (id, kind == EntryKind::Link));
            if now == before {
                stale.push(c.path);
            }
        }
        Ok(stale)
    }

    /// The entry of `tree` at `path` (a file or link), if any.
    fn entry_in_tree(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, EntryKind)>, GitError> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(|e| GitError::op("read the tree", e))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(|e| GitError::op("read the tree", e))?;
        Ok(entry.and_then(|e| {
            let kind = e.mode().kind();
            matches!(
                kind,
                EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link
            )
            .then(|| (e.object_id(), kind))
        }))
    }

    /// Records `plan` so that a crash during [`Repository::update_worktree`]
    /// can be finished later.
    pub fn record_update(&self, plan: &Plan) -> Result<(), GitError> {
        let path = self.journal_path();
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(plan.encode().as_bytes())?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| GitError::op("write the worktree journal", e))
    }

    /// Brings the working tree and index to the applied commit for the paths
    /// in `plan`, then removes the journal. Safe to run again on the same
    /// plan: files already written are recognised.
    pub fn update_worktree(&self, plan: &Plan) -> Result<WorktreeUpdate, GitError> {
        let report = self.update_paths(plan, false)?;
        self.drop_pending_update()?;
        Ok(report)
    }

    /// The update itself. With `force` (clada's own scratch tree, never the
    /// user's) whatever is on disk is replaced, directories included.
    pub(crate) fn update_paths(
        &self,
        plan: &Plan,
        force: bool,
    ) -> Result<WorktreeUpdate, GitError> {
        let workdir = self
            .workdir()
            .ok_or_else(|| GitError::op("update the working tree", "the repository is bare"))?
            .to_path_buf();
        let hash = self.repo.object_hash();
        let mut report = WorktreeUpdate::default();
        let mut unwritten = Vec::new();
        // clada's scratch tree (force) holds blobs as they are; the user's
        // gets what git's checkout would write there.
        let mut conv = (!force).then(|| super::convert::Convert::new(self));
        let mut finals: std::collections::BTreeMap<String, Final> = plan
            .snapshot
            .iter()
            .filter_map(|(path, state)| match state {
                OnDisk::Blob { id, kind } => Some((path.clone(), Final::Entry(*id, *kind))),
                OnDisk::Missing => Some((path.clone(), Final::Absent)),
                OnDisk::Other => None,
            })
            .collect();
        // Removals first, as git's checkout does: a directory that becomes
        // a file (or the other way round) must be gone before the other
        // takes its place.
        let removals = plan.changed.iter().filter(|c| c.after.is_none());
        let writes = plan.changed.iter().filter(|c| c.after.is_some());
        // Paths outside a sparse checkout's cone (skip-worktree in the
        // index) stay off the disk, as git keeps them: only their index
        // entries change, and they keep the flag.
        let sparse: std::collections::BTreeSet<String> = if force {
            Default::default()
        } else {
            self.skip_worktree_paths(plan.changed.iter().map(|c| c.path.as_str()))?
        };
        for c in removals.chain(writes) {
            let state = c
                .after
                .map_or(Final::Absent, |(id, kind)| Final::Entry(id, kind));
            finals.insert(c.path.clone(), state);
            if sparse.contains(&c.path) {
                continue;
            }
            // A file that cannot be written is reported, not fatal: the
            // branch has moved already and the rest must still be done.
            if force {
                clear_the_way(&workdir, c)
                    .map_err(|e| GitError::op(format!("make room for {}", c.path), e))?;
            }
            let written = if crate::fault::fails("worktree-write", &c.path) {
                Err(GitError::op(
                    format!("write {}", c.path),
                    "injected failure",
                ))
            } else {
                self.write_file(&workdir, c, force, conv.as_mut())
            };
            match written {
                Ok(None) => report.written.push(c.path.clone()),
                Ok(Some(reason)) => report.kept.push((c.path.clone(), reason)),
                Err(e) => {
                    report.failed.push((c.path.clone(), e.to_string()));
                    unwritten.push(c.clone());
                }
            }
            crate::fault::point("worktree-file");
        }

        // Files first, then the index: git's own lock is held only while
        // the index is read and rewritten, so a crash while writing files
        // leaves no index.lock behind. Lock first, then read: no other
        // writer can slip in between.
        let (mut lock, mut index, _intent) = self.lock_and_read_index()?;

        // Entries that stay are updated in place; only paths that come or
        // go (or had conflict stages) change the entries' order.
        let mut gone = std::collections::BTreeSet::new();
        let mut added = Vec::new();
        for (path, state) in &finals {
            let at = index.entry_range(path.as_str().into());
            let Final::Entry(id, kind) = state else {
                if at.is_some() {
                    gone.insert(path.as_str());
                }
                continue;
            };
            let mode = match kind {
                EntryKind::BlobExecutable => gix::index::entry::Mode::FILE_EXECUTABLE,
                EntryKind::Link => gix::index::entry::Mode::SYMLINK,
                _ => gix::index::entry::Mode::FILE,
            };
            // A converted file's bytes are not the blob's: git looks at
            // its content (a zero stat) and finds it clean.
            let converted = conv.as_ref().is_some_and(|c| c.applies(&workdir, path));
            let stat = if converted {
                Default::default()
            } else {
                disk_stat_if_matches(&workdir.join(path), *id, hash).unwrap_or_default()
            };
            match at {
                Some(r) if r.len() == 1 && index.entries()[r.start].stage_raw() == 0 => {
                    let entry = &mut index.entries_mut()[r.start];
                    entry.id = *id;
                    entry.mode = mode;
                    entry.stat = stat;
                    // A sparse entry stays sparse (an extended flag).
                    use gix::index::entry::Flags;
                    entry.flags = if entry.flags.contains(Flags::SKIP_WORKTREE) {
                        entry.flags & (Flags::SKIP_WORKTREE | Flags::EXTENDED)
                    } else {
                        Flags::empty()
                    };
                }
                other => {
                    if other.is_some() {
                        gone.insert(path.as_str());
                    }
                    added.push((path.as_str(), *id, mode, stat));
                }
            }
        }
        if !gone.is_empty() {
            index.remove_entries(|_, path, _| gone.contains(path.to_str_lossy().as_ref()));
        }
        for (path, id, mode, stat) in &added {
            index.dangerously_push_entry(
                *stat,
                *id,
                gix::index::entry::Flags::empty(),
                *mode,
                (*path).into(),
            );
        }
        if !added.is_empty() {
            index.sort_entries();
        }
        // The cached trees of the directories above each path no longer
        // match their entries; the rest stay valid (as git does it).
        if let Some(tree) = index.tree_mut() {
            for path in finals.keys() {
                invalidate_cached_tree(tree, path);
            }
        }
        write_index_to_lock(&index, &mut lock)?;
        lock.commit()
            .map_err(|e| GitError::op("write the index", e.error))?;
        crate::fault::point("index-written");
        if !force && !unwritten.is_empty() {
            self.record_unwritten(plan.commit, unwritten)?;
        }
        Ok(report)
    }

    /// Brings the file at `c.path` to its applied state (written, or
    /// deleted) unless the file on disk is neither the snapshot's version
    /// nor already the applied one. `Some(reason)` when the file was kept.
    fn write_file(
        &self,
        workdir: &Path,
        c: &Changed,
        force: bool,
        mut conv: Option<&mut super::convert::Convert<'_>>,
    ) -> Result<Option<String>, GitError> {
        let hash = self.repo.object_hash();
        let full = workdir.join(&c.path);
        // Never write through a symbolic link or into a non-directory on
        // disk (an ignored link could point outside the repository).
        let mut dir = workdir.to_path_buf();
        let parents: Vec<&str> = c.path.split('/').collect();
        for part in &parents[..parents.len() - 1] {
            dir.push(part);
            let shown = dir.strip_prefix(workdir).unwrap_or(&dir).display();
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Ok(Some(format!(
                        "{shown} is a symbolic link on disk; the applied version is in the commit"
                    )));
                }
                Ok(m) if !m.is_dir() => {
                    return Ok(Some(format!(
                        "{shown} is not a directory on disk; the applied version is in the commit"
                    )));
                }
                // Nothing to delete under a directory that is gone.
                Err(_) if c.after.is_none() => return Ok(None),
                _ => {}
            }
        }
        let on_disk = match conv.as_deref_mut() {
            Some(conv) => disk_entry_converted(workdir, &c.path, &full, conv)?,
            None => disk_entry(&full, hash)?,
        };
        let now = match on_disk {
            Disk::Other => {
                return Ok(Some(
                    "is no longer a regular file on disk; the applied version is in the commit"
                        .to_string(),
                ));
            }
            Disk::Missing => None,
            Disk::Entry(id, is_link) => Some((id, is_link)),
        };
        let as_disk =
            |e: Option<(ObjectId, EntryKind)>| e.map(|(id, kind)| (id, kind == EntryKind::Link));
        if now == as_disk(c.after) {
            if let Some((_, kind)) = c.after
                && kind != EntryKind::Link
            {
                set_executable(&full, kind == EntryKind::BlobExecutable)
                    .map_err(|e| GitError::op(format!("set the mode of {}", c.path), e))?;
            }
            return Ok(None);
        }
        if !force && now != as_disk(c.before) {
            return Ok(Some(
                "you changed this file after the apply started; it was left as is (the applied version is in the commit)".to_string(),
            ));
        }
        let io = |e| GitError::op(format!("write {}", c.path), e);
        let Some((after, kind)) = c.after else {
            std::fs::remove_file(&full).map_err(io)?;
            remove_empty_parents(workdir, &full);
            return Ok(None);
        };
        let mut bytes = self.blob(after)?;
        if kind != EntryKind::Link
            && let Some(conv) = conv
        {
            bytes = conv.for_worktree(workdir, &c.path, bytes)?;
        }
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| GitError::op(format!("create the directory of {}", c.path), e))?;
        }
        // Write beside, then rename: a crash leaves the old or the new file.
        // The temporary file is created exclusively (never through a link
        // or over someone's file) under a short name of our own.
        let dir = full.parent().unwrap_or(workdir);
        let (tmp, mut file) = exclusive_temp(dir).map_err(io)?;
        let written = if kind == EntryKind::Link {
            // A link cannot be opened: replace the placeholder file by it.
            drop(file);
            let target = std::path::PathBuf::from(std::ffi::OsString::from_vec(bytes));
            std::fs::remove_file(&tmp)
                .and_then(|()| std::os::unix::fs::symlink(&target, &tmp))
                .and_then(|()| std::fs::rename(&tmp, &full))
        } else {
            file.write_all(&bytes)
                .and_then(|()| set_executable(&tmp, kind == EntryKind::BlobExecutable))
                .and_then(|()| std::fs::rename(&tmp, &full))
        };
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(None)
    }
}

/// Marks the cache-tree nodes of the directories above `path` invalid (git's
/// `cache_tree_invalidate_path`).
fn invalidate_cached_tree(tree: &mut gix::index::extension::Tree, path: &str) {
    tree.num_entries = None;
    if let Some((dir, rest)) = path.split_once('/')
        && let Some(child) = tree
            .children
            .iter_mut()
            .find(|c| c.name.as_slice() == dir.as_bytes())
    {
        invalidate_cached_tree(child, rest);
    }
}

/// Removes what stands in the way of `c.path` becoming a file: parents
/// that are links or files, a directory at the path itself.
fn clear_the_way(workdir: &Path, c: &Changed) -> std::io::Result<()> {
    let mut dir = workdir.to_path_buf();
    let parts: Vec<&str> = c.path.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if !m.is_dir() => std::fs::remove_file(&dir)?,
            _ => {}
        }
    }
    match std::fs::symlink_metadata(workdir.join(&c.path)) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(workdir.join(&c.path)),
        _ => Ok(()),
    }
}

/// What is on disk at a path, hashed as git would store it.
enum Disk {
    Missing,
    /// A regular file or a symbolic link (`true`) with its blob id.
    Entry(ObjectId, bool),
    /// A directory or something else git does not store as a blob.
    Other,
}

fn disk_entry(full: &Path, hash: gix::hash::Kind) -> Result<Disk, GitError> {
    let shown = || full.display().to_string();
    let meta = match std::fs::symlink_metadata(full) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Disk::Missing),
        Err(e) => return Err(GitError::op(format!("read {}", shown()), e)),
        Ok(m) => m,
    };
    let (bytes, is_link) = if meta.file_type().is_symlink() {
        let target =
            std::fs::read_link(full).map_err(|e| GitError::op(format!("read {}", shown()), e))?;
        (target.into_os_string().into_encoded_bytes(), true)
    } else if meta.is_file() {
        (
            std::fs::read(full).map_err(|e| GitError::op(format!("read {}", shown()), e))?,
            false,
        )
    } else {
        return Ok(Disk::Other);
    };
    let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
        .map_err(|e| GitError::op("hash a file", e))?;
    Ok(Disk::Entry(id, is_link))
}

/// [`disk_entry`], a regular file's content hashed as `git add` would
/// store it (through git's filters, where any apply).
fn disk_entry_converted(
    workdir: &Path,
    path: &str,
    full: &Path,
    conv: &mut super::convert::Convert<'_>,
) -> Result<Disk, GitError> {
    match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_file() => Ok(Disk::Entry(conv.hash_file(workdir, path, full)?, false)),
        _ => disk_entry(full, conv.object_hash()),
    }
}

/// Removes the directories above `file` that its deletion left empty, up
/// to (not including) `workdir`, as git does.
fn remove_empty_parents(workdir: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == workdir || !d.starts_with(workdir) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

impl Repository {
    /// Takes git's `index.lock`, then reads the index (lock first: no
    /// other writer can slip in between; gix itself reads unlocked), or
    /// takes the status's earlier read when the file is still that one.
    /// Like git, the checksum is not verified on read.
    /// Takes git's `index.lock` and reads the index. The third value
    /// records, until it is dropped (after the lock is committed), that
    /// clada holds `index.lock`: a clada killed meanwhile leaves a record
    /// that lets the next one remove the lock (`lock::RefIntent`).
    pub(super) fn lock_and_read_index(
        &self,
    ) -> Result<(gix::lock::File, gix::index::File, super::lock::RefIntent), GitError> {
        let index_path = self.repo.index_path();
        // Recorded before the lock is taken, so that no moment holds the
        // lock unrecorded; a lock another program made before the record
        // is never taken for clada's (`lock::remove_intended_locks`).
        let intent = super::lock::RefIntent::record(
            self.repo.git_dir(),
            &[index_path.with_extension("lock")],
        );
        let lock = gix::lock::File::acquire_to_update_resource(
            &index_path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(5)),
            None,
            0,
        )
        .map_err(|e| GitError::op("lock the index", e))?;
        // Under git's lock nobody else writes the index: if the file is
        // still the one the status read, that read is as good as a new one.
        let stamp = IndexStamp::of(&index_path);
        let earlier = self.last_index.borrow_mut().take();
        if let Some(read) = earlier
            && stamp == Some(read.stamp)
        {
            return Ok((lock, read.file, intent));
        }
        let index = self.read_index_file()?;
        Ok((lock, index, intent))
    }

    /// Reads the index without verifying its checksum, as git does.
    pub(super) fn read_index_file(&self) -> Result<gix::index::File, GitError> {
        gix::index::File::at_or_default(
            self.repo.index_path(),
            self.repo.object_hash(),
            true,
            Default::default(),
        )
        .map_err(|e| GitError::op("read the index", e))
    }

    /// Remembers `file`, read from the index file as it was at `stamp`;
    /// forgets any earlier read when either is missing.
    pub(super) fn keep_index(&self, file: Option<gix::index::File>, stamp: Option<IndexStamp>) {
        *self.last_index.borrow_mut() = file
            .zip(stamp)
            .map(|(file, stamp)| ReadIndex { file, stamp });
    }

    /// `f` of the index the status last read, if it is kept.
    /// Which of `paths` the index marks skip-worktree (outside a sparse
    /// checkout's cone), from the index the status read or, without one,
    /// the index file.
    pub(super) fn skip_worktree_paths<'p>(
        &self,
        paths: impl Iterator<Item = &'p str>,
    ) -> Result<std::collections::BTreeSet<String>, GitError> {
        let pick = |index: &gix::index::File, paths: Vec<&str>| {
            paths
                .into_iter()
                .filter(|p| {
                    index
                        .entry_by_path(p.as_bytes().as_bstr())
                        .is_some_and(|e| e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE))
                })
                .map(str::to_owned)
                .collect()
        };
        let paths: Vec<&str> = paths.collect();
        if let Some(found) = self.with_kept_index(|index| pick(index, paths.clone())) {
            return Ok(found);
        }
        match self.read_index_file() {
            Ok(index) => Ok(pick(&index, paths)),
            // No index yet (an unborn branch): nothing is sparse.
            Err(_) if !self.repo.index_path().exists() => Ok(Default::default()),
            Err(e) => Err(e),
        }
    }

    pub(super) fn with_kept_index<R>(&self, f: impl FnOnce(&gix::index::File) -> R) -> Option<R> {
        self.last_index.borrow().as_ref().map(|read| f(&read.file))
    }
}

/// An index as read, and which file it was read from.
pub(crate) struct ReadIndex {
    file: gix::index::File,
    stamp: IndexStamp,
}

/// What tells one index file from another: git and gix replace the index
/// by renaming a new file over it, which gives it a new inode and ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct IndexStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl IndexStamp {
    /// The stamp of the file at `path`; `None` if there is none. Taken
    /// before reading: a file replaced in between then never matches.
    pub(super) fn of(path: &Path) -> Option<IndexStamp> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        Some(IndexStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// A new file in `dir` with a name nobody else uses, opened exclusively.
pub(super) fn exclusive_temp(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    for attempt in 0..100u32 {
        let name = format!(".clada-{}-{attempt}.tmp", std::process::id());
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

/// The index stat of `path` if its content is `id`; `None` (a zero stat,
/// which makes git look at the content) otherwise.
pub(super) fn disk_stat_if_matches(
    path: &Path,
    id: ObjectId,
    hash: gix::hash::Kind,
) -> Option<gix::index::entry::Stat> {
    let meta = gix::index::fs::Metadata::from_path_no_follow(path).ok()?;
    match disk_entry(path, hash).ok()? {
        Disk::Entry(found, _) if found == id => {}
        _ => return None,
    }
    gix::index::entry::Stat::from_fs(&meta).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_round_trips() {
        let id = |n: u8| ObjectId::from_bytes_or_panic(&[n; 20]);
        let plan = Plan {
            commit: id(1),
            snapshot: vec![
                (
                    "a b.txt".into(),
                    OnDisk::Blob {
                        id: id(2),
                        kind: EntryKind::BlobExecutable,
                    },
                ),
                ("gone".into(), OnDisk::Missing),
            ],
            changed: vec![
                Changed {
                    path: "new file".into(),
                    before: None,
                    after: Some((id(3), EntryKind::Blob)),
                },
                Changed {
                    path: "dir/x".into(),
                    before: Some((id(4), EntryKind::BlobExecutable)),
                    after: Some((id(5), EntryKind::Link)),
                },
                Changed {
                    path: "gone".into(),
                    before: Some((id(6), EntryKind::Blob)),
                    after: None,
                },
            ],
        };
        assert_eq!(Plan::decode(&plan.encode()), Some(plan));
    }
}
