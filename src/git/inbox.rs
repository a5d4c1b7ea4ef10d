//! The requests in an inbox notes ref, and where they can land.
//!
//! Owns reading notes trees — git's fan-out, where the path of a note's
//! blob spells the id of the object it annotates (`ab/cdef…`) — and
//! finding the notes one notes commit adds or changes compared with
//! another, and the branches whose tip a commit is. Objects come from an
//! [`ObjectSource`]: the object database through gix (post-receive), or
//! the git program while pushed objects are still in quarantine
//! (pre-receive, `quarantine.rs`). Nothing here writes.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::objs::Kind;

use super::{GitError, Repository};

/// A note: the object it annotates and the blob that holds its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub target: ObjectId,
    pub blob: ObjectId,
}

/// One object read from a source: its kind, size, and content when the
/// size is within the limit asked for.
pub(crate) struct Object {
    pub kind: Kind,
    pub size: u64,
    pub data: Option<Vec<u8>>,
}

/// Where objects are read from.
pub(crate) trait ObjectSource {
    /// The object `id`; its content only if it is at most `max` bytes.
    fn object(&mut self, id: ObjectId, max: usize) -> Result<Object, GitError>;
}

/// Commits and trees are small; anything bigger is not a notes ref's.
const MAX_TREE: usize = 64 << 20;
/// Notes trees are at most one level per two hex digits deep.
const MAX_DEPTH: usize = 64;
/// More notes than this on one side of a diff is no request queue.
const MAX_ENTRIES: usize = 100_000;

/// The notes that notes commit `new` adds or changes compared with `old`
/// (`None`: every note of `new`). A note whose blob moved to another path
/// only because the fan-out changed is not a change.
pub(crate) fn changed_notes(
    src: &mut dyn ObjectSource,
    old: Option<ObjectId>,
    new: ObjectId,
) -> Result<Vec<Note>, GitError> {
    let old_tree = old.map(|c| tree_of_commit(src, c)).transpose()?;
    let new_tree = tree_of_commit(src, new)?;
    let mut sides = Sides::default();
    walk(src, old_tree, Some(new_tree), String::new(), 0, &mut sides)?;
    let removed: BTreeMap<ObjectId, ObjectId> =
        sides.removed.iter().map(|n| (n.target, n.blob)).collect();
    let mut added: Vec<Note> = sides
        .added
        .into_iter()
        .filter(|n| removed.get(&n.target) != Some(&n.blob))
        .collect();
    added.sort();
    added.dedup_by_key(|n| n.target);
    Ok(added)
}

fn tree_of_commit(src: &mut dyn ObjectSource, commit: ObjectId) -> Result<ObjectId, GitError> {
    let object = src.object(commit, MAX_TREE)?;
    let (Kind::Commit, Some(data)) = (object.kind, object.data) else {
        return Err(GitError::op(
            format!("read the notes commit {commit}"),
            format!("it is a {} of {} bytes", object.kind, object.size),
        ));
    };
    let parsed = gix::objs::CommitRef::from_bytes(&data, commit.kind())
        .map_err(|e| GitError::op(format!("read the notes commit {commit}"), e))?;
    Ok(parsed.tree())
}

#[derive(Default)]
struct Sides {
    added: Vec<Note>,
    removed: Vec<Note>,
}

/// Entries of a tree by name: (is a tree, id), blobs and trees only.
fn entries(
    src: &mut dyn ObjectSource,
    tree: Option<ObjectId>,
) -> Result<BTreeMap<String, (bool, ObjectId)>, GitError> {
    let mut out = BTreeMap::new();
    let Some(id) = tree else {
        return Ok(out);
    };
    let object = src.object(id, MAX_TREE)?;
    let (Kind::Tree, Some(data)) = (object.kind, object.data) else {
        return Err(GitError::op(
            format!("read the notes tree {id}"),
            format!("it is a {} of {} bytes", object.kind, object.size),
        ));
    };
    let parsed = gix::objs::TreeRef::from_bytes(&data, id.kind())
        .map_err(|e| GitError::op(format!("read the notes tree {id}"), e))?;
    for entry in parsed.entries {
        let is_tree = entry.mode.is_tree();
        if !is_tree && !entry.mode.is_blob() {
            continue;
        }
        // Note paths are hex digits; anything else is not a note.
        let Ok(name) = std::str::from_utf8(entry.filename) else {
            continue;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        out.insert(name.to_ascii_lowercase(), (is_tree, entry.oid.to_owned()));
    }
    Ok(out)
}

/// Compares two (sub)trees at `prefix` (the hex digits so far), skipping
/// every subtree whose id is the same on both sides.
fn walk(
    src: &mut dyn ObjectSource,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: String,
    depth: usize,
    sides: &mut Sides,
) -> Result<(), GitError> {
    if depth > MAX_DEPTH || old == new {
        return Ok(());
    }
    let old_entries = entries(src, old)?;
    let new_entries = entries(src, new)?;
    let names: std::collections::BTreeSet<&String> =
        old_entries.keys().chain(new_entries.keys()).collect();
    for name in names {
        let o = old_entries.get(name).copied();
        let n = new_entries.get(name).copied();
        if o == n {
            continue;
        }
        let path = format!("{prefix}{name}");
        let subtree = |e: Option<(bool, ObjectId)>| e.filter(|(t, _)| *t).map(|(_, id)| id);
        let blob = |e: Option<(bool, ObjectId)>| e.filter(|(t, _)| !*t).map(|(_, id)| id);
        if subtree(o).is_some() || subtree(n).is_some() {
            walk(src, subtree(o), subtree(n), path.clone(), depth + 1, sides)?;
        }
        let target = ObjectId::from_hex(path.as_bytes()).ok();
        if let (Some(target), Some(blob)) = (target, blob(o)) {
            sides.removed.push(Note { target, blob });
        }
        if let (Some(target), Some(blob)) = (target, blob(n)) {
            sides.added.push(Note { target, blob });
        }
        if sides.added.len() > MAX_ENTRIES || sides.removed.len() > MAX_ENTRIES {
            return Err(GitError::op(
                "read the notes",
                format!("more than {MAX_ENTRIES} notes changed at once"),
            ));
        }
    }
    Ok(())
}

impl ObjectSource for &Repository {
    fn object(&mut self, id: ObjectId, max: usize) -> Result<Object, GitError> {
        let header = self
            .repo
            .find_header(id)
            .map_err(|e| GitError::op(format!("find object {id}"), e))?;
        let (kind, size) = (header.kind(), header.size());
        if size > max as u64 {
            return Ok(Object {
                kind,
                size,
                data: None,
            });
        }
        let object = self
            .repo
            .find_object(id)
            .map_err(|e| GitError::op(format!("read object {id}"), e))?;
        Ok(Object {
            kind,
            size,
            data: Some(object.detach().data),
        })
    }
}

impl Repository {
    /// The notes that notes commit `new` adds or changes compared with `old`.
    pub fn changed_notes(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<Vec<Note>, GitError> {
        changed_notes(&mut &*self, old, new)
    }

    /// The full names of the branches (`refs/heads/…`) whose tip is `commit`.
    pub fn branches_at(&self, commit: ObjectId) -> Result<Vec<String>, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op("list branches", e);
        let platform = self.repo.references().map_err(|e| fail(&e))?;
        let mut out = Vec::new();
        for r in platform.local_branches().map_err(|e| fail(&e))? {
            let r = r.map_err(|e| fail(&e))?;
            if r.target().try_id() == Some(commit.as_ref()) {
                out.push(r.name().as_bstr().to_string());
            }
        }
        Ok(out)
    }

    /// The content of blob `id` if it is at most `max` bytes; `Err(size)`
    /// with its size otherwise.
    pub fn blob_within(&self, id: ObjectId, max: usize) -> Result<Result<Vec<u8>, u64>, GitError> {
        read_blob(&mut &*self, id, max)
    }
}

/// The content of blob `id` from `src`, or its size when over `max`.
pub(crate) fn read_blob(
    src: &mut dyn ObjectSource,
    id: ObjectId,
    max: usize,
) -> Result<Result<Vec<u8>, u64>, GitError> {
    let object = src.object(id, max)?;
    if object.kind != Kind::Blob {
        return Err(GitError::op(
            format!("read the note {id}"),
            format!("it is a {}, not a blob", object.kind),
        ));
    }
    Ok(object.data.ok_or(object.size))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Objects in memory, for walking hand-made notes trees.
    #[derive(Default)]
    struct Memory(BTreeMap<ObjectId, (Kind, Vec<u8>)>);

    impl Memory {
        fn put(&mut self, kind: Kind, data: Vec<u8>) -> ObjectId {
            let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, &data)
                .expect("hashing cannot fail for sha1");
            self.0.insert(id, (kind, data));
            id
        }

        fn tree(&mut self, entries: &[(&str, bool, ObjectId)]) -> ObjectId {
            let mut sorted: Vec<_> = entries.to_vec();
            // git's order: trees compare as if their name ended in '/'.
            sorted.sort_by_key(|(n, t, _)| format!("{n}{}", if *t { "/" } else { "" }));
            let mut data = Vec::new();
            for (name, is_tree, id) in sorted {
                data.extend_from_slice(if is_tree { b"40000 " } else { b"100644 " });
                data.extend_from_slice(name.as_bytes());
                data.push(0);
                data.extend_from_slice(id.as_bytes());
            }
            self.put(Kind::Tree, data)
        }

        fn commit(&mut self, tree: ObjectId) -> ObjectId {
            let data =
                format!("tree {tree}\nauthor a <a> 0 +0000\ncommitter a <a> 0 +0000\n\nnotes\n");
            self.put(Kind::Commit, data.into_bytes())
        }
    }

    impl ObjectSource for Memory {
        fn object(&mut self, id: ObjectId, max: usize) -> Result<Object, GitError> {
            let (kind, data) = self
                .0
                .get(&id)
                .cloned()
                .ok_or_else(|| GitError::op("find", id))?;
            Ok(Object {
                kind,
                size: data.len() as u64,
                data: (data.len() <= max).then_some(data),
            })
        }
    }

    fn hex(n: u8) -> String {
        format!("{n:02x}").repeat(20)
    }

    #[test]
    fn added_and_changed_notes_are_found_and_fanout_moves_are_not() {
        let mut m = Memory::default();
        let (a, b, c) = (hex(0xaa), hex(0xbb), hex(0xcc));
        let one = m.put(Kind::Blob, b"one".to_vec());
        let two = m.put(Kind::Blob, b"two".to_vec());
        let old_tree = m.tree(&[(&a, false, one), (&b, false, one)]);
        let old = m.commit(old_tree);
        // New: a moved under a fan-out directory unchanged, b changed, c added,
        // and a stray non-note file.
        let fan = m.tree(&[(&a[2..], false, one)]);
        let new_tree = m.tree(&[
            ("aa", true, fan),
            (&b, false, two),
            (&c, false, one),
            ("README", false, one),
        ]);
        let new = m.commit(new_tree);
        let found = changed_notes(&mut m, Some(old), new).unwrap();
        let want = |t: &str, blob| Note {
            target: ObjectId::from_hex(t.as_bytes()).unwrap(),
            blob,
        };
        assert_eq!(found, vec![want(&b, two), want(&c, one)]);
        // A new ref: every note is new.
        let all = changed_notes(&mut m, None, old).unwrap();
        assert_eq!(all, vec![want(&a, one), want(&b, one)]);
        // Nothing changed.
        assert!(changed_notes(&mut m, Some(new), new).unwrap().is_empty());
    }

    #[test]
    fn a_notes_ref_that_is_not_a_commit_is_an_error() {
        let mut m = Memory::default();
        let blob = m.put(Kind::Blob, b"x".to_vec());
        assert!(changed_notes(&mut m, None, blob).is_err());
    }
}
