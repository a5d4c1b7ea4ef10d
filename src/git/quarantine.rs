//! Reading pushed objects in a `pre-receive` hook.
//!
//! While a push is being received, git keeps its objects in a quarantine
//! directory that it names in `GIT_QUARANTINE_PATH` (and
//! `GIT_OBJECT_DIRECTORY`, with the repository's own objects as an
//! alternate). A gix repository ignores those variables, so it cannot see
//! the objects; this module opens the two object directories as gix
//! object stores of their own, the quarantine first, as git does. Read
//! only, as git requires in pre-receive; replace references are not
//! applied (what is checked is what was pushed). It used to ask `git
//! cat-file --batch`, one more process in every push of a request.

use gix::ObjectId;
use gix::objs::{Find as _, FindHeader as _, Kind};

use super::GitError;
use super::inbox::{Note, Object, ObjectSource, changed_notes, read_blob};

/// The objects a push brought, and the repository's.
pub struct Quarantine {
    /// The quarantine's store; `None` when git named none (a hook run by
    /// hand, or a git too old to quarantine: the objects are then the
    /// repository's own).
    pushed: Option<gix::odb::Handle>,
    own: gix::odb::Handle,
}

impl Quarantine {
    /// Opens the objects of `repo` and of the quarantine git's
    /// environment names.
    pub fn open(repo: &super::Repository) -> Result<Quarantine, GitError> {
        let named = std::env::var_os("GIT_QUARANTINE_PATH").filter(|p| !p.is_empty());
        Quarantine::at(repo, named.as_deref().map(std::path::Path::new))
    }

    /// Opens the objects of `repo` and of the quarantine at `pushed`.
    fn at(
        repo: &super::Repository,
        pushed: Option<&std::path::Path>,
    ) -> Result<Quarantine, GitError> {
        let fail = |e: std::io::Error| GitError::op("open the pushed objects", e);
        let hash = repo.repo.object_hash();
        let git_dir = repo.repo.common_dir();
        let pushed = pushed
            .map(|dir| gix::odb::at(dir, hash))
            .transpose()
            .map_err(fail)?;
        let own = gix::odb::at(git_dir.join("objects"), hash).map_err(fail)?;
        Ok(Quarantine { pushed, own })
    }

    /// The notes that notes commit `new` adds or changes compared with `old`.
    pub fn changed_notes(
        &mut self,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<Vec<Note>, GitError> {
        changed_notes(self, old, new)
    }

    /// The message of commit `id`.
    pub fn commit_message(&mut self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        // Far more than a request's message needs; a commit is headers
        // and a message, not content.
        const MAX_COMMIT: usize = 1 << 20;
        let fail = |e: &dyn std::fmt::Display| GitError::op(format!("read commit {id}"), e);
        let object = self.object(id, MAX_COMMIT)?;
        if object.kind != Kind::Commit {
            return Err(fail(&format!("it is a {}", object.kind)));
        }
        let data = object
            .data
            .ok_or_else(|| fail(&format!("it is {} bytes long", object.size)))?;
        let commit =
            gix::objs::CommitRef::from_bytes(&data, gix::hash::Kind::Sha1).map_err(|e| fail(&e))?;
        Ok(commit.message.to_vec())
    }

    /// The content of blob `id` if it is at most `max` bytes; `Err(size)`
    /// with its size otherwise.
    pub fn blob_within(
        &mut self,
        id: ObjectId,
        max: usize,
    ) -> Result<Result<Vec<u8>, u64>, GitError> {
        read_blob(self, id, max)
    }
}

impl ObjectSource for Quarantine {
    fn object(&mut self, id: ObjectId, max: usize) -> Result<Object, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op(format!("read object {id}"), e);
        for store in self.pushed.iter().chain([&self.own]) {
            let Some(header) = store.try_header(&id).map_err(|e| fail(&e))? else {
                continue;
            };
            let (kind, size) = (header.kind, header.size);
            if size > max as u64 {
                return Ok(Object {
                    kind,
                    size,
                    data: None,
                });
            }
            let mut buf = Vec::new();
            let data = store
                .try_find(&id, &mut buf)
                .map_err(|e| fail(&e))?
                .ok_or_else(|| fail(&"it went away while it was read"))?;
            if data.kind != kind {
                return Err(fail(&"its type changed while it was read"));
            }
            let data = data.data.to_vec();
            return Ok(Object {
                kind,
                size: data.len() as u64,
                data: Some(data),
            });
        }
        Err(fail(&"it is neither in the push nor in the repository"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git::command;

    #[test]
    fn objects_are_read_from_the_quarantine_first_then_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("server.git");
        let init = command(dir.path(), &["init", "-q", "--bare", "server.git"])
            .status()
            .unwrap();
        assert!(init.success());
        let write = |objects: &std::path::Path, content: &str| {
            let file = dir.path().join("content");
            std::fs::write(&file, content).unwrap();
            let out = command(
                dir.path(),
                &["--git-dir", "server.git", "hash-object", "-w"],
            )
            .arg(&file)
            .env("GIT_OBJECT_DIRECTORY", objects)
            .output()
            .unwrap();
            assert!(out.status.success());
            ObjectId::from_hex(String::from_utf8(out.stdout).unwrap().trim().as_bytes()).unwrap()
        };
        let own = write(&bare.join("objects"), "the repository's\n");
        let incoming = bare.join("objects/incoming-test");
        std::fs::create_dir_all(&incoming).unwrap();
        let pushed = write(&incoming, "pushed\n");
        // A push of many objects arrives as a pack.
        let loose = dir.path().join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        let packed = write(&loose, "packed\n");
        std::fs::create_dir_all(incoming.join("pack")).unwrap();
        let mut pack = command(
            dir.path(),
            &["--git-dir", "server.git", "pack-objects", "-q"],
        )
        .arg(incoming.join("pack/pack"))
        .env("GIT_OBJECT_DIRECTORY", &loose)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
        std::io::Write::write_all(
            pack.stdin.as_mut().unwrap(),
            format!("{packed}\n").as_bytes(),
        )
        .unwrap();
        drop(pack.stdin.take());
        assert!(pack.wait().unwrap().success());
        let repo = crate::git::Repository::open(&bare).unwrap();
        let mut q = Quarantine::at(&repo, Some(&incoming)).unwrap();
        assert_eq!(
            q.blob_within(pushed, 100).unwrap(),
            Ok(b"pushed\n".to_vec())
        );
        assert_eq!(
            q.blob_within(own, 100).unwrap(),
            Ok(b"the repository's\n".to_vec())
        );
        assert_eq!(
            q.blob_within(packed, 100).unwrap(),
            Ok(b"packed\n".to_vec())
        );
        // Too big to read: its size.
        assert_eq!(q.blob_within(pushed, 3).unwrap(), Err(7));
        // The repository alone does not see what was pushed.
        assert!((&repo).object(pushed, 100).is_err());
        let mut without = Quarantine::at(&repo, None).unwrap();
        assert!(without.blob_within(pushed, 100).is_err());
        assert!(without.blob_within(own, 100).is_ok());
    }
}
