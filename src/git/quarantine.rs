//! Reading pushed objects in a `pre-receive` hook, through the git program.
//!
//! While a push is being received, git keeps its objects in a quarantine
//! directory that it names in `GIT_OBJECT_DIRECTORY` and
//! `GIT_QUARANTINE_PATH`. gix ignores those variables, so it cannot see the
//! objects; `git cat-file --batch` can. This module owns that one process
//! (listed in doc/architecture.md) and nothing else: it only reads, as git
//! requires in pre-receive.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use gix::ObjectId;
use gix::objs::Kind;

use super::GitError;
use super::inbox::{Note, Object, ObjectSource, changed_notes, read_blob};

/// A running `git cat-file --batch` on the repository being pushed to.
pub struct Quarantine {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Quarantine {
    /// Starts the reader for the repository at `git_dir`. The environment
    /// git gave the hook is kept, since it names the quarantine; variables
    /// that would point git at another index or work tree are dropped, and
    /// replace refs are ignored so that what is checked is what was pushed.
    pub fn open(git_dir: &Path) -> Result<Quarantine, GitError> {
        let fail = |e: std::io::Error| GitError::op("start git cat-file --batch", e);
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .args(["cat-file", "--batch"])
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(fail)?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .map(BufReader::new)
            .ok_or_else(|| GitError::op("start git cat-file --batch", "no output pipe"))?;
        Ok(Quarantine {
            child,
            stdin,
            stdout,
        })
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
        let fail = |e: &dyn std::fmt::Display| {
            GitError::op(format!("read object {id} with git cat-file"), e)
        };
        let stdin = self.stdin.as_mut().ok_or_else(|| fail(&"closed"))?;
        writeln!(stdin, "{id}")
            .and_then(|()| stdin.flush())
            .map_err(|e| fail(&e))?;
        // `<id> <type> <size>` or `<id> missing`.
        let mut header = String::new();
        (&mut self.stdout)
            .take(1024)
            .read_line(&mut header)
            .map_err(|e| fail(&e))?;
        let mut parts = header.split_whitespace();
        let (_, kind, size) = (parts.next(), parts.next(), parts.next());
        let (Some(kind), Some(size)) = (kind, size.and_then(|s| s.parse::<u64>().ok())) else {
            return Err(fail(&format!("unexpected answer {:?}", header.trim())));
        };
        let kind = Kind::from_bytes(kind.as_bytes()).map_err(|e| fail(&e))?;
        let data = if size <= max as u64 {
            let mut data = vec![0; size as usize];
            self.stdout.read_exact(&mut data).map_err(|e| fail(&e))?;
            Some(data)
        } else {
            // Too big to keep: read past it.
            let copied = std::io::copy(&mut (&mut self.stdout).take(size), &mut std::io::sink())
                .map_err(|e| fail(&e))?;
            if copied != size {
                return Err(fail(&"the object ended early"));
            }
            None
        };
        let mut newline = [0u8; 1];
        self.stdout.read_exact(&mut newline).map_err(|e| fail(&e))?;
        Ok(Object { kind, size, data })
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        // Closing its input ends cat-file.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
