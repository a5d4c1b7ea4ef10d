//! Moving the user's working tree and index from one state to another, for
//! the history commands (undo, redo, step-back, step-forward).
//!
//! Owns the only place where those commands write the user's files. A
//! [`Switch`] lists, path by path, what the working tree and the index hold
//! now and what they must hold afterwards; it is computed from trees, so
//! only the paths that differ are looked at. Before anything changes,
//! [`Repository::switch_conflicts`] checks every such path on disk: a file
//! whose content is not the expected one, or an untracked or ignored file
//! or directory in the way, makes the whole command refuse. While
//! switching, each file is checked again just before it is written or
//! removed and left alone if it changed meanwhile (reported as kept).
//!
//! Unlike the apply's update (`worktree.rs`, which only ever writes the
//! regular files a reply produced), a switch also removes files, writes
//! symbolic links, changes modes and replaces directories by files and back.
//! It shares that module's careful primitives: exclusive temporary files,
//! rename into place, the index written under git's `index.lock`.
//!
//! A journal (`clada-switch` in the git dir) is written before the
//! reference that makes the switch necessary is moved; when a crash cuts
//! the switch short, the next clada command finishes it (every step is
//! safe to repeat) as long as HEAD is still where the command left it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::index_file::write_index_to_lock;
use super::state::kind_of_index_mode;
use super::worktree::{disk_stat_if_matches, exclusive_temp};
use super::{GitError, Head, Repository};
use crate::fsmode::{is_executable, set_executable};

/// The journal of a switch in progress, in the git dir.
const JOURNAL: &str = "clada-switch";

/// A file as git records it: content and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub id: ObjectId,
    pub kind: EntryKind,
}

/// One path: what it holds now (`from`) and must hold after (`to`);
/// `None` is "no file".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub path: String,
    pub from: Option<Entry>,
    pub to: Option<Entry>,
}

/// Every change a switch makes to the working tree and to the index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switch {
    pub disk: Vec<Move>,
    pub index: Vec<Move>,
}

impl Switch {
    pub fn is_empty(&self) -> bool {
        self.disk.is_empty() && self.index.is_empty()
    }
}

/// What a switch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchReport {
    pub written: usize,
    pub removed: usize,
    /// Paths left as they were, with why.
    pub kept: Vec<(String, String)>,
}

/// What is on disk at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Disk {
    Missing,
    File(Entry),
    Dir,
    /// A socket, fifo or device.
    Other,
    /// A parent is a symbolic link or not a directory: the path cannot be
    /// reached without following a link.
    Blocked(String),
}

fn kind_code(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::BlobExecutable => "x",
        EntryKind::Link => "l",
        EntryKind::Commit => "c",
        EntryKind::Tree => "t",
        EntryKind::Blob => "f",
    }
}

fn kind_from(code: &str) -> Option<EntryKind> {
    Some(match code {
        "x" => EntryKind::BlobExecutable,
        "l" => EntryKind::Link,
        "c" => EntryKind::Commit,
        "f" => EntryKind::Blob,
        _ => return None,
    })
}

fn encode_entry(e: Option<Entry>) -> String {
    e.map_or("-".to_string(), |e| {
        format!("{}:{}", e.id, kind_code(e.kind))
    })
}

fn decode_entry(text: &str) -> Option<Option<Entry>> {
    if text == "-" {
        return Some(None);
    }
    let (id, kind) = text.split_once(':')?;
    Some(Some(Entry {
        id: ObjectId::from_hex(id.as_bytes()).ok()?,
        kind: kind_from(kind)?,
    }))
}

/// The journal: where HEAD must be, then one line per move. Paths come
/// last on their line (they may hold spaces; git paths never hold newlines
/// that clada writes, and a path with one is refused when planning).
fn encode(head: &Head, switch: &Switch) -> String {
    let mut out = match head {
        Head::Branch { name, commit } => format!(
            "head branch {} {name}\n",
            commit.map_or("-".to_string(), |c| c.to_string())
        ),
        Head::Detached(id) => format!("head detached {id}\n"),
    };
    for (tag, moves) in [("d", &switch.disk), ("i", &switch.index)] {
        for m in moves {
            out.push_str(&format!(
                "{tag} {} {}\t{}\n",
                encode_entry(m.from),
                encode_entry(m.to),
                m.path
            ));
        }
    }
    out
}

fn decode(text: &str) -> Option<(Head, Switch)> {
    let mut lines = text.lines();
    let first = lines.next()?;
    let head = if let Some(rest) = first.strip_prefix("head branch ") {
        let (commit, name) = rest.split_once(' ')?;
        Head::Branch {
            name: name.to_string(),
            commit: if commit == "-" {
                None
            } else {
                Some(ObjectId::from_hex(commit.as_bytes()).ok()?)
            },
        }
    } else {
        Head::Detached(ObjectId::from_hex(first.strip_prefix("head detached ")?.as_bytes()).ok()?)
    };
    let mut switch = Switch::default();
    for line in lines {
        let (fields, path) = line.split_once('\t')?;
        let mut parts = fields.split(' ');
        let (tag, from, to) = (parts.next()?, parts.next()?, parts.next()?);
        let m = Move {
            path: path.to_string(),
            from: decode_entry(from)?,
            to: decode_entry(to)?,
        };
        match tag {
            "d" => switch.disk.push(m),
            "i" => switch.index.push(m),
            _ => return None,
        }
    }
    Some((head, switch))
}

/// Whether a tree entry of this kind is a file clada may write on disk
/// (submodules are never touched; trees are not files).
fn is_file_kind(kind: EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link
    )
}

fn index_mode(kind: EntryKind) -> gix::index::entry::Mode {
    use gix::index::entry::Mode;
    match kind {
        EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
        EntryKind::Link => Mode::SYMLINK,
        EntryKind::Commit => Mode::COMMIT,
        EntryKind::Tree => Mode::DIR,
        EntryKind::Blob => Mode::FILE,
    }
}

impl Repository {
    /// The file-level differences between two trees: one move per path
    /// whose file differs (directories are not moves themselves).
    pub fn tree_moves(&self, from: ObjectId, to: ObjectId) -> Result<Vec<Move>, GitError> {
        if from == to {
            return Ok(Vec::new());
        }
        let fail = |e: gix::Error| GitError::op("compare two trees", e);
        let a = self.repo.find_tree(from).map_err(fail)?;
        let b = self.repo.find_tree(to).map_err(fail)?;
        let changes = self
            .repo
            .diff_tree_to_tree(&a, &b, gix::diff::Options::default().with_rewrites(None))
            .map_err(fail)?;
        let mut moves: BTreeMap<String, Move> = BTreeMap::new();
        let file = |mode: gix::objs::tree::EntryMode, id: ObjectId| {
            (!mode.is_tree()).then_some(Entry {
                id,
                kind: mode.kind(),
            })
        };
        for change in changes {
            use gix::object::tree::diff::ChangeDetached as C;
            let (path, before, after) = match change {
                C::Addition {
                    location,
                    entry_mode,
                    id,
                    ..
                } => (location, None, file(entry_mode, id)),
                C::Deletion {
                    location,
                    entry_mode,
                    id,
                    ..
                } => (location, file(entry_mode, id), None),
                C::Modification {
                    location,
                    previous_entry_mode,
                    previous_id,
                    entry_mode,
                    id,
                } => (
                    location,
                    file(previous_entry_mode, previous_id),
                    file(entry_mode, id),
                ),
                // Rewrite tracking is off.
                C::Rewrite { .. } => continue,
            };
            if before.is_none() && after.is_none() {
                continue;
            }
            let path = path.to_str_lossy().into_owned();
            if path.contains(['\n', '\t']) {
                return Err(GitError::op(
                    "compare two trees",
                    format!(
                        "the path {path:?} holds a tab or newline, which clada does not support"
                    ),
                ));
            }
            let entry = moves.entry(path.clone()).or_insert(Move {
                path,
                from: None,
                to: None,
            });
            entry.from = entry.from.or(before);
            entry.to = entry.to.or(after);
        }
        Ok(moves.into_values().filter(|m| m.from != m.to).collect())
    }

    /// The switch that takes the working tree from `disk.0` to `disk.1`
    /// and the index from `index.0` to `index.1` (all trees).
    pub fn plan_switch(
        &self,
        disk: (ObjectId, ObjectId),
        index: (ObjectId, ObjectId),
    ) -> Result<Switch, GitError> {
        Ok(Switch {
            disk: self.tree_moves(disk.0, disk.1)?,
            index: self.tree_moves(index.0, index.1)?,
        })
    }

    fn switch_workdir(&self) -> Result<PathBuf, GitError> {
        Ok(self
            .workdir()
            .ok_or_else(|| GitError::op("update the working tree", "the repository is bare"))?
            .to_path_buf())
    }

    /// What is on disk at `path`, never following a symbolic link.
    fn disk_at(
        &self,
        workdir: &Path,
        path: &str,
        conv: &mut super::convert::Convert<'_>,
    ) -> Result<Disk, GitError> {
        let mut dir = workdir.to_path_buf();
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
            dir.push(part);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Ok(Disk::Blocked(parts[..=i].join("/"))),
                Err(_) => return Ok(Disk::Missing),
            }
        }
        let full = workdir.join(path);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Disk::Missing),
            Err(e) => return Err(GitError::op(format!("read {path}"), e)),
        };
        let read = |e| GitError::op(format!("read {path}"), e);
        let (bytes, kind) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).map_err(read)?;
            (
                target.into_os_string().into_encoded_bytes(),
                EntryKind::Link,
            )
        } else if meta.is_dir() {
            return Ok(Disk::Dir);
        } else if meta.is_file() {
            let kind = if is_executable(&meta) {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            };
            // As `git add` would store it (through git's filters).
            let id = conv.hash_file(workdir, path, &full)?;
            return Ok(Disk::File(Entry { id, kind }));
        } else {
            return Ok(Disk::Other);
        };
        let id = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &bytes)
            .map_err(|e| GitError::op("hash a file", e))?;
        Ok(Disk::File(Entry { id, kind }))
    }

    /// Every path where switching would overwrite or remove something that
    /// is not the expected content, with why. Empty: the switch is safe.
    pub fn switch_conflicts(&self, switch: &Switch) -> Result<Vec<(String, String)>, GitError> {
        let workdir = self.switch_workdir()?;
        let mut conv = super::convert::Convert::new(self);
        let sparse = self.skip_worktree_paths(switch.disk.iter().map(|m| m.path.as_str()))?;
        // Paths whose file goes away, and whose disk content is the
        // expected one: a directory holding only those will be empty.
        let mut removed: BTreeSet<&str> = BTreeSet::new();
        let mut now: BTreeMap<&str, Disk> = BTreeMap::new();
        for m in switch.disk.iter().filter(|m| !sparse.contains(&m.path)) {
            let disk = self.disk_at(&workdir, &m.path, &mut conv)?;
            if m.to.is_none() && m.from.is_some() && Some(&disk) == m.from.map(Disk::File).as_ref()
            {
                removed.insert(m.path.as_str());
            }
            now.insert(m.path.as_str(), disk);
        }
        let mut conflicts = Vec::new();
        for m in switch.disk.iter().filter(|m| !sparse.contains(&m.path)) {
            let touches_submodule = [m.from, m.to]
                .iter()
                .flatten()
                .any(|e| !is_file_kind(e.kind));
            if touches_submodule {
                continue;
            }
            let disk = &now[m.path.as_str()];
            let is = |e: Option<Entry>| match e {
                None => *disk == Disk::Missing,
                Some(e) => *disk == Disk::File(e),
            };
            if let Disk::Blocked(at) = disk {
                if m.to.is_some() && !removed.contains(at.as_str()) {
                    conflicts.push((
                        m.path.clone(),
                        format!("{at} is a file or symbolic link on disk, in the way"),
                    ));
                }
                continue;
            }
            if is(m.to) || is(m.from) {
                // Parents of a file to write must be directories, missing,
                // or files this switch removes first.
                if m.to.is_some()
                    && let Some(reason) = self.parent_in_the_way(&workdir, &m.path, &removed)?
                {
                    conflicts.push((m.path.clone(), reason));
                }
                continue;
            }
            let reason = match (disk, m.from) {
                (Disk::Dir, None) => match self.dir_only_holds(&workdir, &m.path, &removed)? {
                    None => continue,
                    Some(other) => format!(
                        "a directory is in the way, holding {other}, which is not in any commit"
                    ),
                },
                (Disk::Dir, Some(_)) => "is a directory on disk".to_string(),
                (_, None) => "an untracked or ignored file is in the way (it is not in any commit)"
                    .to_string(),
                (Disk::Missing, Some(_)) => "was deleted since clada looked at it".to_string(),
                _ => "changed since clada looked at it".to_string(),
            };
            conflicts.push((m.path.clone(), reason));
        }
        Ok(conflicts)
    }

    /// `Some(why)` when a parent directory of `path` is a file or link on
    /// disk that this switch does not remove.
    fn parent_in_the_way(
        &self,
        workdir: &Path,
        path: &str,
        removed: &BTreeSet<&str>,
    ) -> Result<Option<String>, GitError> {
        let mut dir = workdir.to_path_buf();
        let parts: Vec<&str> = path.split('/').collect();
        for i in 0..parts.len() - 1 {
            dir.push(parts[i]);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    let at = parts[..=i].join("/");
                    if removed.contains(at.as_str()) {
                        return Ok(None);
                    }
                    return Ok(Some(format!(
                        "{at} is a file or symbolic link on disk, in the way"
                    )));
                }
                Err(_) => return Ok(None),
            }
        }
        Ok(None)
    }

    /// `None` when every file under the directory `path` is removed by the
    /// switch (so the directory can go); else the first one that is not.
    fn dir_only_holds(
        &self,
        workdir: &Path,
        path: &str,
        removed: &BTreeSet<&str>,
    ) -> Result<Option<String>, GitError> {
        let mut stack = vec![path.to_string()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(workdir.join(&dir))
                .map_err(|e| GitError::op(format!("read the directory {dir}"), e))?;
            for entry in entries {
                let entry = entry.map_err(|e| GitError::op(format!("read {dir}"), e))?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    return Ok(Some(format!("{dir}/{}", name.to_string_lossy())));
                };
                let child = format!("{dir}/{name}");
                let file_type = entry
                    .file_type()
                    .map_err(|e| GitError::op(format!("read {child}"), e))?;
                if file_type.is_dir() {
                    stack.push(child);
                } else if !removed.contains(child.as_str()) {
                    return Ok(Some(child));
                }
            }
        }
        Ok(None)
    }

    /// Performs `switch`: removals, then writes, then the index. A file
    /// that is neither the expected old content nor already the new one is
    /// left as it is and reported. Safe to run again on the same switch.
    pub fn run_switch(&self, switch: &Switch) -> Result<SwitchReport, GitError> {
        let workdir = self.switch_workdir()?;
        let mut report = SwitchReport::default();
        let mut conv = super::convert::Convert::new(self);
        // Paths outside a sparse checkout's cone stay off the disk.
        let sparse = self.skip_worktree_paths(switch.disk.iter().map(|m| m.path.as_str()))?;
        let files = |m: &&Move| {
            !sparse.contains(&m.path)
                && [m.from, m.to]
                    .iter()
                    .flatten()
                    .all(|e| is_file_kind(e.kind))
        };
        for m in switch.disk.iter().filter(files).filter(|m| m.to.is_none()) {
            match self.disk_at(&workdir, &m.path, &mut conv)? {
                Disk::Missing | Disk::Blocked(_) => {}
                disk if Some(disk.clone()) == m.from.map(Disk::File) => {
                    let full = workdir.join(&m.path);
                    std::fs::remove_file(&full)
                        .map_err(|e| GitError::op(format!("remove {}", m.path), e))?;
                    remove_empty_parents(&workdir, &m.path);
                    report.removed += 1;
                }
                _ => report.kept.push((
                    m.path.clone(),
                    "changed since clada looked at it; left as it is".to_string(),
                )),
            }
            crate::fault::point("switch-file");
        }
        for m in switch.disk.iter().filter(files) {
            let Some(to) = m.to else { continue };
            match self.write_entry(&workdir, m, to, &mut conv) {
                Ok(None) => report.written += 1,
                Ok(Some(reason)) => report.kept.push((m.path.clone(), reason)),
                Err(e) => report
                    .kept
                    .push((m.path.clone(), format!("could not be written ({e})"))),
            }
            crate::fault::point("switch-file");
        }
        self.switch_index(&workdir, &switch.index, &mut report)?;
        crate::fault::point("switch-index-written");
        Ok(report)
    }

    /// Writes `to` at `m.path` unless the disk holds something other than
    /// `m.from` (or `to` already). `Some(reason)` when left alone.
    fn write_entry(
        &self,
        workdir: &Path,
        m: &Move,
        to: Entry,
        conv: &mut super::convert::Convert<'_>,
    ) -> Result<Option<String>, GitError> {
        let full = workdir.join(&m.path);
        let disk = self.disk_at(workdir, &m.path, conv)?;
        if disk == Disk::File(to) {
            return Ok(None);
        }
        // Same content, other mode: only the mode changes.
        if let (Disk::File(now), EntryKind::Blob | EntryKind::BlobExecutable) = (&disk, to.kind)
            && now.id == to.id
            && now.kind != EntryKind::Link
            && Some(*now) == m.from
        {
            set_executable(&full, to.kind == EntryKind::BlobExecutable)
                .map_err(|e| GitError::op(format!("set the mode of {}", m.path), e))?;
            return Ok(None);
        }
        match (&disk, m.from) {
            (Disk::File(now), Some(from)) if *now == from => {}
            (Disk::Missing, None) => {}
            // A directory this switch emptied.
            (Disk::Dir, None) => {
                if std::fs::remove_dir(&full).is_err() {
                    return Ok(Some(
                        "a directory that is not empty is in the way; left as it is".to_string(),
                    ));
                }
            }
            (Disk::Blocked(at), _) => {
                return Ok(Some(format!(
                    "{at} is a file or symbolic link on disk, in the way; left as it is"
                )));
            }
            _ => {
                return Ok(Some(
                    "changed since clada looked at it; left as it is".to_string(),
                ));
            }
        }
        let mut bytes = self.blob(to.id)?;
        if to.kind != EntryKind::Link {
            bytes = conv.for_worktree(workdir, &m.path, bytes)?;
        }
        let parent = full.parent().unwrap_or(workdir).to_path_buf();
        std::fs::create_dir_all(&parent)
            .map_err(|e| GitError::op(format!("create the directory of {}", m.path), e))?;
        let io = |e| GitError::op(format!("write {}", m.path), e);
        if to.kind == EntryKind::Link {
            let tmp = link_temp(&parent, &bytes).map_err(io)?;
            if let Err(e) = std::fs::rename(&tmp, &full) {
                let _ = std::fs::remove_file(&tmp);
                return Err(io(e));
            }
            return Ok(None);
        }
        let (tmp, mut file) = exclusive_temp(&parent).map_err(io)?;
        let written = file
            .write_all(&bytes)
            .and_then(|()| set_executable(&tmp, to.kind == EntryKind::BlobExecutable))
            .and_then(|()| std::fs::rename(&tmp, &full));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(None)
    }

    /// Sets the index entries of `moves`, under git's `index.lock`. An
    /// entry that is neither the old nor the new one (staged meanwhile) is
    /// kept.
    fn switch_index(
        &self,
        workdir: &Path,
        moves: &[Move],
        report: &mut SwitchReport,
    ) -> Result<(), GitError> {
        if moves.is_empty() {
            return Ok(());
        }
        let hash = self.repo.object_hash();
        let conv = super::convert::Convert::new(self);
        let (mut lock, mut index, _intent) = self.lock_and_read_index()?;
        let mut replace: BTreeMap<&str, Option<Entry>> = BTreeMap::new();
        let mut sparse: BTreeSet<&str> = BTreeSet::new();
        for m in moves {
            let found = index.entry_by_path(m.path.as_bytes().as_bstr());
            if found.is_some_and(|e| e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE)) {
                sparse.insert(m.path.as_str());
            }
            let current =
                found.and_then(|e| kind_of_index_mode(e.mode).map(|kind| Entry { id: e.id, kind }));
            if current == m.to {
                continue;
            }
            if current != m.from {
                report.kept.push((
                    m.path.clone(),
                    "its index entry changed since clada looked at it (staged meanwhile); left as it is"
                        .to_string(),
                ));
                continue;
            }
            replace.insert(m.path.as_str(), m.to);
        }
        if replace.is_empty() {
            return Ok(());
        }
        index.remove_entries(|_, path, _| replace.contains_key(path.to_str_lossy().as_ref()));
        for (path, entry) in &replace {
            let Some(entry) = entry else { continue };
            // A converted or sparse file is not the blob's bytes on disk:
            // a zero stat makes git look at the content.
            let stat = if sparse.contains(path) || conv.applies(workdir, path) {
                Default::default()
            } else {
                disk_stat_if_matches(&workdir.join(path), entry.id, hash).unwrap_or_default()
            };
            let flags = if sparse.contains(path) {
                gix::index::entry::Flags::SKIP_WORKTREE | gix::index::entry::Flags::EXTENDED
            } else {
                gix::index::entry::Flags::empty()
            };
            index.dangerously_push_entry(
                stat,
                entry.id,
                flags,
                index_mode(entry.kind),
                path.as_bytes().as_bstr(),
            );
        }
        index.sort_entries();
        // The cached trees no longer match the entries.
        index.remove_tree();
        write_index_to_lock(&index, &mut lock)?;
        lock.commit()
            .map_err(|e| GitError::op("write the index", e.error))?;
        Ok(())
    }

    fn switch_journal_path(&self) -> PathBuf {
        self.git_dir().join(JOURNAL)
    }

    /// Records `switch`, to be finished by a later command if HEAD is then
    /// `head` (where the command is about to put it).
    pub fn record_switch(&self, head: &Head, switch: &Switch) -> Result<(), GitError> {
        let path = self.switch_journal_path();
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(encode(head, switch).as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| GitError::op("write the switch journal", e))
    }

    /// Forgets the recorded switch.
    pub fn clear_switch(&self) -> Result<(), GitError> {
        match std::fs::remove_file(self.switch_journal_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(GitError::op("remove the switch journal", e))
            }
            _ => Ok(()),
        }
    }

    /// Finishes a switch a crash cut short, if HEAD is where that command
    /// put it; otherwise (or when the journal is unreadable) forgets it.
    /// `Some` when a switch was finished.
    pub fn finish_pending_switch(&self) -> Result<Option<SwitchReport>, GitError> {
        let text = match std::fs::read_to_string(self.switch_journal_path()) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(GitError::op("read the switch journal", e)),
        };
        let Some((head, switch)) = decode(&text) else {
            self.clear_switch()?;
            return Ok(None);
        };
        if self.head()? != head {
            self.clear_switch()?;
            return Ok(None);
        }
        let paths = switch
            .disk
            .iter()
            .chain(&switch.index)
            .map(|m| m.path.as_str());
        self.remove_stale_temp_files(paths);
        // The journal stays until the switch has really finished: dropped
        // after a failure (git's index.lock held, say), the index would
        // keep the undone apply's content while HEAD and the working tree
        // hold the base, and a later `git commit` would bring it back.
        let report = self.run_switch(&switch)?;
        self.clear_switch()?;
        Ok(Some(report))
    }
}

/// Removes the empty directories above `path`, up to the working tree.
fn remove_empty_parents(workdir: &Path, path: &str) {
    let mut dir = Path::new(path).parent();
    while let Some(d) = dir {
        if d.as_os_str().is_empty() || std::fs::remove_dir(workdir.join(d)).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// A symbolic link to `target` in `dir` under a name nobody else uses.
#[cfg(unix)]
fn link_temp(dir: &Path, target: &[u8]) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::OsStr::from_bytes(target);
    for attempt in 0..100u32 {
        let path = dir.join(format!(".clada-{}-{attempt}.lnk", std::process::id()));
        match std::os::unix::fs::symlink(target, &path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

#[cfg(not(unix))]
fn link_temp(_: &Path, _: &[u8]) -> std::io::Result<PathBuf> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "symbolic links are only written on Unix",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_round_trips() {
        let id = |n: u8| ObjectId::from_bytes_or_panic(&[n; 20]);
        let switch = Switch {
            disk: vec![
                Move {
                    path: "a b.txt".into(),
                    from: None,
                    to: Some(Entry {
                        id: id(1),
                        kind: EntryKind::BlobExecutable,
                    }),
                },
                Move {
                    path: "link".into(),
                    from: Some(Entry {
                        id: id(2),
                        kind: EntryKind::Link,
                    }),
                    to: None,
                },
            ],
            index: vec![Move {
                path: "dir/x".into(),
                from: Some(Entry {
                    id: id(3),
                    kind: EntryKind::Blob,
                }),
                to: Some(Entry {
                    id: id(4),
                    kind: EntryKind::Commit,
                }),
            }],
        };
        for head in [
            Head::Branch {
                name: "refs/heads/my branch".into(),
                commit: Some(id(9)),
            },
            Head::Branch {
                name: "refs/heads/main".into(),
                commit: None,
            },
            Head::Detached(id(8)),
        ] {
            assert_eq!(
                decode(&encode(&head, &switch)),
                Some((head, switch.clone()))
            );
        }
        assert_eq!(decode("garbage"), None);
    }
}
