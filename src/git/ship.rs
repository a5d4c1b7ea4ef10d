//! The objects a branch gained since a commit, carried in a push's output
//! so that `push-reply` need not fetch them (doc/hooks.md, "Requests of
//! their own").
//!
//! When the server replayed a request on a tip that moved since the
//! agent's, the post commit's parent and the commits before it are ones
//! the agent lacks, and it used to fetch them: one more HTTP exchange, an
//! `upload-pack` on the server, several processes on each side. The
//! server lists them instead ([`Repository::objects_since`]): the commits
//! from the request's base (not included) to the tip, each with the trees
//! and blobs it added over its parent. That is everything reachable from
//! the tip and not from the base, given that each has one parent, and it
//! is listed only while it is small ([`MAX_COMMITS`], [`MAX_BYTES`]).
//!
//! The agent takes them only whole ([`Repository::take_objects`]): each
//! object's id is the hash of its bytes, the commits chain from the new
//! tip back to its own, and every tree sent names only objects it was
//! sent or has. Anything else, and it fetches as before.

use std::collections::{HashMap, HashSet};

use gix::objs::Write as _;

use super::{GitError, ObjectId, Repository};

/// At most this many commits are sent: more, and the agent fetches.
pub const MAX_COMMITS: usize = 64;

/// At most this many bytes of objects are sent (before the hex that
/// doubles them in the push's output): more, and the agent fetches.
pub const MAX_BYTES: usize = 256 << 10;

/// The kinds of object sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Commit,
    Tree,
    Blob,
}

impl Kind {
    /// As git names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Commit => "commit",
            Kind::Tree => "tree",
            Kind::Blob => "blob",
        }
    }

    /// From git's name, for the three kinds sent.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "commit" => Some(Kind::Commit),
            "tree" => Some(Kind::Tree),
            "blob" => Some(Kind::Blob),
            _ => None,
        }
    }

    fn gix(self) -> gix::objs::Kind {
        match self {
            Kind::Commit => gix::objs::Kind::Commit,
            Kind::Tree => gix::objs::Kind::Tree,
            Kind::Blob => gix::objs::Kind::Blob,
        }
    }
}

/// One object, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub kind: Kind,
    pub id: ObjectId,
    pub data: Vec<u8>,
}

/// What the walk has gathered so far.
#[derive(Default)]
struct Gathered {
    objects: Vec<Object>,
    seen: HashSet<ObjectId>,
    bytes: usize,
}

impl Gathered {
    /// Adds an object; `false` once over [`MAX_BYTES`].
    fn add(&mut self, kind: Kind, id: ObjectId, data: Vec<u8>) -> bool {
        self.bytes += data.len();
        self.objects.push(Object { kind, id, data });
        self.bytes <= MAX_BYTES
    }
}

impl Repository {
    /// The objects reachable from `tip` and not from `base`, oldest
    /// commit's first: `None` when `tip` does not come down from `base`
    /// through commits of one parent each, or when there are more than
    /// [`MAX_COMMITS`] of them or [`MAX_BYTES`] of objects.
    pub fn objects_since(
        &self,
        base: ObjectId,
        tip: ObjectId,
    ) -> Result<Option<Vec<Object>>, GitError> {
        let read = |e: &dyn std::fmt::Display| GitError::op("read a commit", e);
        // (commit, its bytes, its tree, its parent's tree), newest first.
        let mut chain = Vec::new();
        let mut at = tip;
        while at != base {
            if chain.len() == MAX_COMMITS {
                return Ok(None);
            }
            let commit = self.repo.find_commit(at).map_err(|e| read(&e))?;
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            let [parent] = parents[..] else {
                return Ok(None);
            };
            let tree = commit.tree_id().map_err(|e| read(&e))?.detach();
            let parent_tree = self.tree_of(Some(parent))?;
            chain.push((at, commit.data.clone(), tree, parent_tree));
            at = parent;
        }
        let mut gathered = Gathered::default();
        for (id, data, tree, parent_tree) in chain.into_iter().rev() {
            if !self.gather_tree(tree, Some(parent_tree), &mut gathered)?
                || !gathered.add(Kind::Commit, id, data)
            {
                return Ok(None);
            }
        }
        Ok(Some(gathered.objects))
    }

    /// Adds `tree` and what it holds that `old` (the same place in the
    /// parent's tree) does not: an entry of the same name, mode and object
    /// there is one the receiver has. `false` once over the budget.
    fn gather_tree(
        &self,
        tree: ObjectId,
        old: Option<ObjectId>,
        gathered: &mut Gathered,
    ) -> Result<bool, GitError> {
        if old == Some(tree) || !gathered.seen.insert(tree) {
            return Ok(true);
        }
        let data = self.object_data(tree)?;
        let before: HashMap<Vec<u8>, (gix::objs::tree::EntryMode, ObjectId)> = match old {
            Some(old) => tree_entries(&self.object_data(old)?, self.repo.object_hash())?
                .into_iter()
                .map(|(mode, name, id)| (name, (mode, id)))
                .collect(),
            None => HashMap::new(),
        };
        for (mode, name, id) in tree_entries(&data, self.repo.object_hash())? {
            let was = before.get(&name);
            if was == Some(&(mode, id)) {
                continue;
            }
            if mode.is_tree() {
                let old = was.filter(|(m, _)| m.is_tree()).map(|(_, id)| *id);
                if !self.gather_tree(id, old, gathered)? {
                    return Ok(false);
                }
            } else if mode.is_blob_or_symlink()
                && gathered.seen.insert(id)
                && !gathered.add(Kind::Blob, id, self.object_data(id)?)
            {
                return Ok(false);
            }
            // A submodule's commit is not an object of this repository.
        }
        Ok(gathered.add(Kind::Tree, tree, data))
    }

    /// Writes `objects` (as [`Repository::objects_since`] lists them, sent
    /// for `base`) through this repository, which should keep them in
    /// memory ([`Repository::in_memory`]) until they are known whole:
    /// whether they are, so that `tip` and everything it reaches is here.
    /// They are when each object's id is its bytes' hash, `tip` comes down
    /// to `base` through commits sent, one parent each, and every tree
    /// sent names only objects sent or already here.
    pub fn take_objects(
        &self,
        objects: &[Object],
        base: ObjectId,
        tip: ObjectId,
    ) -> Result<bool, GitError> {
        let mut commits = HashMap::new();
        for o in objects {
            let written = self
                .repo
                .objects
                .write_buf(o.kind.gix(), &o.data)
                .map_err(|e| GitError::op("write an object", e))?;
            if written != o.id {
                return Ok(false);
            }
            if o.kind == Kind::Commit {
                commits.insert(o.id, &o.data);
            }
        }
        let has = |id: ObjectId| self.repo.has_object(id);
        for o in objects.iter().filter(|o| o.kind == Kind::Tree) {
            for (mode, _, id) in tree_entries(&o.data, self.repo.object_hash())? {
                if (mode.is_tree() || mode.is_blob_or_symlink()) && !has(id) {
                    return Ok(false);
                }
            }
        }
        let mut at = tip;
        for _ in 0..=commits.len() {
            if at == base {
                return Ok(true);
            }
            let Some(data) = commits.get(&at) else {
                return Ok(false);
            };
            let Some((tree, parents)) = self.parse_commit(data) else {
                return Ok(false);
            };
            let [parent] = parents[..] else {
                return Ok(false);
            };
            if !has(tree) {
                return Ok(false);
            }
            at = parent;
        }
        Ok(false)
    }

    /// An object's bytes.
    fn object_data(&self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        let object = self
            .repo
            .find_object(id)
            .map_err(|e| GitError::op("read an object", e))?;
        Ok(object.data.clone())
    }
}

/// A tree object's entries: mode, name, object.
fn tree_entries(
    data: &[u8],
    hash: gix::hash::Kind,
) -> Result<Vec<(gix::objs::tree::EntryMode, Vec<u8>, ObjectId)>, GitError> {
    gix::objs::TreeRefIter::from_bytes(data, hash)
        .map(|entry| {
            let entry = entry.map_err(|e| GitError::op("read a tree", e))?;
            Ok((entry.mode, entry.filename.to_vec(), entry.oid.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git::command;
    use std::path::Path;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = command(dir, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    /// A repository whose `main` has `base` and then `n` commits, each
    /// changing `d/e/f.txt` and adding a file of its own, and a clone made
    /// at `base`: (server, clone, base, tip).
    fn two(
        n: usize,
    ) -> (
        tempfile::TempDir,
        Repository,
        Repository,
        ObjectId,
        ObjectId,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w");
        git(dir.path(), &["init", "-q", "-b", "main", "w"]);
        std::fs::write(w.join("a.txt"), "a\n").unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "base"]);
        let base = id(&git(&w, &["rev-parse", "HEAD"]));
        git(dir.path(), &["clone", "-q", "--bare", "w", "clone.git"]);
        std::fs::create_dir_all(w.join("d/e")).unwrap();
        for i in 0..n {
            std::fs::write(w.join("d/e/f.txt"), format!("{i}\n")).unwrap();
            std::fs::write(w.join(format!("new{i}.txt")), "").unwrap();
            git(&w, &["add", "."]);
            git(&w, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        let tip = id(&git(&w, &["rev-parse", "HEAD"]));
        let server = Repository::open(&w).unwrap();
        let clone = Repository::open(&dir.path().join("clone.git")).unwrap();
        (dir, server, clone, base, tip)
    }

    #[test]
    fn the_objects_since_a_commit_make_its_descendant_whole_elsewhere() {
        let (dir, server, clone, base, tip) = two(3);
        let objects = server.objects_since(base, tip).unwrap().unwrap();
        // 3 commits; their root trees, d, d/e; 3 versions of f.txt and
        // one empty blob (new0..2.txt share it).
        let count = |k: Kind| objects.iter().filter(|o| o.kind == k).count();
        assert_eq!(
            (count(Kind::Commit), count(Kind::Tree), count(Kind::Blob)),
            (3, 9, 4)
        );
        let mut scratch = clone.in_memory();
        assert!(scratch.take_objects(&objects, base, tip).unwrap());
        scratch.write_kept_objects().unwrap();
        let bare = dir.path().join("clone.git");
        git(&bare, &["update-ref", "refs/heads/main", &tip.to_string()]);
        git(&bare, &["fsck", "--strict", "--no-progress"]);
        assert_eq!(git(&bare, &["show", "main:d/e/f.txt"]), "2");
        // Nothing since the commit itself.
        assert_eq!(server.objects_since(tip, tip).unwrap(), Some(vec![]));
    }

    #[test]
    fn objects_not_whole_are_not_taken() {
        let (_dir, server, clone, base, tip) = two(2);
        let objects = server.objects_since(base, tip).unwrap().unwrap();
        let take = |objects: &[Object], base, tip| {
            clone.in_memory().take_objects(objects, base, tip).unwrap()
        };
        // Bytes that are not their id's.
        let mut forged = objects.clone();
        let blob = forged
            .iter_mut()
            .find(|o| o.kind == Kind::Blob && !o.data.is_empty())
            .unwrap();
        blob.data.push(b'!');
        assert!(!take(&forged, base, tip));
        // An object left out that a tree names.
        let missing: Vec<Object> = objects
            .iter()
            .filter(|o| o.kind != Kind::Blob || o.data.is_empty())
            .cloned()
            .collect();
        assert!(!take(&missing, base, tip));
        // A commit left out of the chain.
        let first = objects.iter().find(|o| o.kind == Kind::Commit).unwrap().id;
        let chain: Vec<Object> = objects.iter().filter(|o| o.id != first).cloned().collect();
        assert!(!take(&chain, base, tip));
        // Sent for another base, which the chain does not come down to.
        assert!(!take(&objects, id(&"1".repeat(40)), tip));
        assert!(take(&objects, base, tip));
    }

    #[test]
    fn only_a_short_line_of_small_commits_is_listed() {
        let (dir, server, _clone, base, tip) = two(MAX_COMMITS + 1);
        assert_eq!(server.objects_since(base, tip).unwrap(), None);
        let w = dir.path().join("w");
        let start = id(&git(&w, &["rev-parse", &format!("HEAD~{MAX_COMMITS}")]));
        assert!(server.objects_since(start, tip).unwrap().is_some());
        // Not down from the base.
        assert_eq!(server.objects_since(tip, base).unwrap(), None);
        // A merge on the way.
        git(&w, &["checkout", "-q", "-b", "side", "HEAD~1"]);
        std::fs::write(w.join("side.txt"), "side\n").unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "side"]);
        git(&w, &["checkout", "-q", "main"]);
        git(&w, &["merge", "-q", "--no-edit", "side"]);
        let merged = id(&git(&w, &["rev-parse", "HEAD"]));
        let server = Repository::open(&w).unwrap();
        assert_eq!(server.objects_since(start, merged).unwrap(), None);
        // Too many bytes.
        git(&w, &["checkout", "-q", "main"]);
        std::fs::write(w.join("big.txt"), vec![b'x'; MAX_BYTES + 1]).unwrap();
        git(&w, &["add", "."]);
        git(&w, &["commit", "-q", "-m", "big"]);
        let big = id(&git(&w, &["rev-parse", "HEAD"]));
        let server = Repository::open(&w).unwrap();
        assert_eq!(server.objects_since(merged, big).unwrap(), None);
    }
}
