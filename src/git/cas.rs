//! Compare-and-swap of one reference to an object id, as git's files
//! backend does it.
//!
//! Owns every update of a reference under `refs/` to a commit: the branch
//! after an apply (directly or through HEAD), clada's own refs, notes.
//! gix's reference transaction takes `packed-refs.lock` for each such
//! update whenever a `packed-refs` file exists (every clone has one), only
//! to read the previous value; git reads `packed-refs` without a lock and
//! takes `packed-refs.lock` only to delete or pack. A second lock on every
//! update is a second file a kill can leave behind and a second place to
//! collide with a concurrent `git pack-refs` or `git branch -d`. So this
//! module takes git's steps:
//!
//! 1. lock `HEAD.lock` when the update goes through HEAD (for HEAD's
//!    reflog, as git's `split_head_update` does) and check that HEAD
//!    still names the branch;
//! 2. lock `<ref>.lock`, creating missing directories;
//! 3. read the current value (the loose file, else `packed-refs`,
//!    unlocked) and compare it with the expected one;
//! 4. write the new id into the lock, append the reflog entries, and
//!    rename the lock into place.
//!
//! Dropping a lock that was not committed removes it, so every failure
//! leaves the reference as it was. Deletions, symbolic updates and updates
//! of HEAD itself go on through gix's transaction (none of them needs
//! `packed-refs` to be locked, except deletion, where git locks it too).

use std::io::Write;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::lock::acquire::Fail;
use gix::refs::Target;
use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};

/// What the reference must hold before the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    Value(ObjectId),
    Absent,
}

/// An update this module makes instead of gix.
#[derive(Debug)]
pub(super) struct Update {
    /// The reference written: `refs/…`.
    name: String,
    /// Whether the update was asked for through HEAD, which names `name`.
    through_head: bool,
    expected: Expected,
    new: ObjectId,
    message: Vec<u8>,
    force_create_reflog: bool,
}

impl Update {
    /// The update `edit` asks for, when it is one this module makes: an
    /// object id written to a shared `refs/` reference (through HEAD or
    /// not), against an expected id or absence. `None`: leave it to gix.
    pub(super) fn of(repo: &gix::Repository, edit: &RefEdit) -> Option<Update> {
        if repo.refs.namespace.is_some() {
            return None;
        }
        let Change::Update {
            log,
            expected,
            new: Target::Object(new),
        } = &edit.change
        else {
            return None;
        };
        if log.mode != RefLog::AndReference {
            return None;
        }
        let expected = match expected {
            PreviousValue::MustExistAndMatch(Target::Object(id)) => Expected::Value(*id),
            PreviousValue::MustNotExist => Expected::Absent,
            _ => return None,
        };
        let name = edit.name.as_bstr().to_str().ok()?;
        let (name, through_head) = if name == "HEAD" {
            if !edit.deref {
                return None;
            }
            // A detached HEAD is HEAD's own update: gix's, without
            // packed-refs.
            let branch = read_symbolic_head(repo.git_dir())?;
            (branch, true)
        } else {
            (name.to_owned(), false)
        };
        shared_ref(&name).then(|| Update {
            name,
            through_head,
            expected,
            new: *new,
            message: log.message.to_vec(),
            force_create_reflog: log.force_create_reflog,
        })
    }

    /// Makes the update; `committer` signs the reflog entries. The error
    /// says what went wrong in git's words.
    pub(super) fn apply(
        &self,
        repo: &gix::Repository,
        committer: gix::actor::SignatureRef<'_>,
    ) -> Result<(), String> {
        let fail = lock_timeout(repo);
        let git_dir = repo.git_dir();
        let common = repo.common_dir();
        let ref_path = common.join(&self.name);
        // HEAD first, as git orders them: HEAD.lock is held (never
        // written) so that nobody switches HEAD while its reflog gets
        // this update's entry.
        let _head = if self.through_head {
            let marker =
                gix::lock::Marker::acquire_to_hold_resource(git_dir.join("HEAD"), fail, None, 0)
                    .map_err(|e| format!("Could not lock HEAD: {e}"))?;
            match read_symbolic_head(git_dir) {
                Some(branch) if branch == self.name => {}
                _ => {
                    return Err(format!(
                        "HEAD no longer points to {}: another command switched it",
                        self.name
                    ));
                }
            }
            Some(marker)
        } else {
            None
        };
        let mut lock = gix::lock::File::acquire_to_update_resource(
            &ref_path,
            fail,
            Some(common.to_owned()),
            0,
        )
        .map_err(|e| format!("Could not lock reference {}: {e}", self.name))?;
        let previous = self.current(repo)?;
        match (self.expected, previous) {
            (Expected::Value(want), Some(found)) if want == found => {}
            (Expected::Absent, None) => {}
            // gix's rule, kept: creating what already holds the new value
            // is no conflict.
            (Expected::Absent, Some(found)) if found == self.new => {}
            (Expected::Value(want), found) => {
                return Err(format!(
                    "reference {} was expected at {want} but is {}",
                    self.name,
                    found.map_or("missing".to_string(), |id| id.to_string())
                ));
            }
            (Expected::Absent, Some(found)) => {
                return Err(format!(
                    "reference {} already exists (at {found})",
                    self.name
                ));
            }
        }
        lock.with_mut(|file| writeln!(file, "{}", self.new))
            .map_err(|e| format!("Could not write {}.lock: {e}", self.name))?;
        let entry = self.reflog_entry(previous, committer);
        self.append_reflog(
            repo,
            &common.join("logs").join(&self.name),
            &self.name,
            &entry,
        )?;
        if self.through_head {
            self.append_reflog(repo, &git_dir.join("logs").join("HEAD"), "HEAD", &entry)?;
        }
        lock.commit()
            .map_err(|e| format!("Could not update reference {}: {}", self.name, e.error))?;
        Ok(())
    }

    /// The id the reference holds now: its loose file, else its line in
    /// `packed-refs` (read without locking it, as git does).
    fn current(&self, repo: &gix::Repository) -> Result<Option<ObjectId>, String> {
        let found = repo
            .refs
            .try_find(self.name.as_str())
            .map_err(|e| format!("Could not read reference {}: {e}", self.name))?;
        match found.map(|r| r.target) {
            None => Ok(None),
            Some(Target::Object(id)) => Ok(Some(id)),
            Some(Target::Symbolic(to)) => Err(format!(
                "reference {} is a symbolic reference (to {to}); clada updates only references to commits",
                self.name
            )),
        }
    }

    /// `<old> <new> <committer>\t<message>\n`, git's reflog line; a
    /// message's line breaks become spaces, as git writes them.
    fn reflog_entry(
        &self,
        previous: Option<ObjectId>,
        committer: gix::actor::SignatureRef<'_>,
    ) -> Vec<u8> {
        let old = previous.unwrap_or_else(|| self.new.kind().null());
        let mut entry = format!("{old} {} ", self.new).into_bytes();
        // Writing into a Vec cannot fail.
        let _ = committer.trim().write_to(&mut entry);
        let message: Vec<u8> = self
            .message
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect();
        let message = message.trim();
        if !message.is_empty() {
            entry.push(b'\t');
            entry.extend_from_slice(message);
        }
        entry.push(b'\n');
        entry
    }

    /// Appends `entry` to the reflog at `path` (of reference `name`) when
    /// git would: the log exists, or core.logAllRefUpdates says to create
    /// it for this kind of reference.
    fn append_reflog(
        &self,
        repo: &gix::Repository,
        path: &Path,
        name: &str,
        entry: &[u8],
    ) -> Result<(), String> {
        use gix::refs::store::WriteReflog;
        let create = match repo.refs.write_reflog {
            WriteReflog::Disable => return Ok(()),
            WriteReflog::Always => true,
            WriteReflog::Normal => self.force_create_reflog || autocreated(name),
        };
        let mut options = std::fs::OpenOptions::new();
        options.append(true);
        if create {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("Could not create {}: {e}", parent.display()))?;
            }
            options.create(true);
        }
        match options.open(path) {
            Ok(mut file) => file
                .write_all(entry)
                .map_err(|e| format!("Could not append to the reflog of {name}: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => Ok(()),
            Err(e) => Err(format!("Could not open the reflog of {name}: {e}")),
        }
    }
}

/// A reference in the repository's shared `refs/` (not a worktree's own,
/// which live in its git dir).
fn shared_ref(name: &str) -> bool {
    name.starts_with("refs/")
        && !["refs/worktree/", "refs/bisect/", "refs/rewritten/"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// The references whose reflog git creates by default (core.logAllRefUpdates
/// = true): branches, remote-tracking branches, notes, HEAD.
fn autocreated(name: &str) -> bool {
    name == "HEAD"
        || ["refs/heads/", "refs/remotes/", "refs/notes/"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// The branch HEAD names (`ref: refs/heads/main`), if it is symbolic.
fn read_symbolic_head(git_dir: &Path) -> Option<String> {
    let text = std::fs::read(git_dir.join("HEAD")).ok()?;
    let name = text.strip_prefix(b"ref:")?.trim().to_str().ok()?;
    shared_ref(name).then(|| name.to_owned())
}

/// How long to wait for a reference's lock: core.filesRefLockTimeout (ms;
/// git's default 100, -1 forever), retried with backoff as git does.
fn lock_timeout(repo: &gix::Repository) -> Fail {
    let ms = repo
        .config_snapshot()
        .integer("core.filesRefLockTimeout")
        .unwrap_or(100);
    match ms {
        ..0 => Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(u64::MAX / 4)),
        0 => Fail::Immediately,
        ms => Fail::AfterDurationWithBackoff(std::time::Duration::from_millis(ms as u64)),
    }
}

#[cfg(test)]
mod tests {
    use crate::git::Repository;
    use crate::git::commit::{Identity, UpdateError};
    use crate::git::test_git::command;
    use gix::ObjectId;
    use std::path::Path;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = command(dir, args).output().expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("UTF-8")
            .trim()
            .to_string()
    }

    /// A repository with two commits on main, its refs packed (as in every
    /// clone), and `packed-refs.lock` held by somebody else.
    fn packed_repo() -> (tempfile::TempDir, ObjectId, ObjectId) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = git(d, &["rev-parse", "HEAD"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = git(d, &["rev-parse", "HEAD"]);
        git(d, &["reset", "-q", "--hard", "HEAD~1"]);
        git(d, &["pack-refs", "--all"]);
        assert!(
            !d.join(".git/refs/heads/main").exists(),
            "main is packed only"
        );
        std::fs::write(d.join(".git/packed-refs.lock"), "").unwrap();
        (dir, one.parse().unwrap(), two.parse().unwrap())
    }

    fn who() -> Identity {
        Identity {
            name: "Clada".into(),
            email: "clada@example.com".into(),
        }
    }

    fn open(d: &Path) -> Repository {
        Repository::discover(d).unwrap().expect("a repository")
    }

    #[test]
    fn a_branch_moves_through_head_without_packed_refs_lock_as_with_git() {
        let (dir, one, two) = packed_repo();
        let d = dir.path();
        let repo = open(d);
        repo.advance_branch(&who(), "refs/heads/main", Some(one), two, "clada: post")
            .expect("packed-refs.lock does not stand in the way, as for git commit");
        assert_eq!(git(d, &["rev-parse", "main"]), two.to_string());
        assert!(
            d.join(".git/packed-refs.lock").exists(),
            "somebody else's lock is left alone"
        );
        assert!(!d.join(".git/refs/heads/main.lock").exists());
        assert!(!d.join(".git/HEAD.lock").exists());
        // Both reflogs have the entry, in git's format: git reads them.
        for log in ["main", "HEAD"] {
            let top = git(
                d,
                &["reflog", "show", "-n1", "--format=%H %gs %gn <%ge>", log],
            );
            assert_eq!(
                top,
                format!("{two} clada: post Clada <clada@example.com>"),
                "{log}"
            );
        }
        let line = std::fs::read_to_string(d.join(".git/logs/refs/heads/main")).unwrap();
        let last = line.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("{one} {two} Clada <clada@example.com> ")),
            "{last}"
        );
        assert!(last.ends_with("\tclada: post"), "{last}");
        git(d, &["fsck", "--strict"]);
    }

    #[test]
    fn a_packed_branch_that_moved_is_refused_and_left_as_it_was() {
        let (dir, one, two) = packed_repo();
        let d = dir.path();
        let repo = open(d);
        let wrong = two;
        let err = repo
            .advance_branch(&who(), "refs/heads/main", Some(wrong), one, "clada: post")
            .expect_err("the branch is not where the caller thinks");
        assert!(matches!(err, UpdateError::Moved { .. }), "{err}");
        assert_eq!(git(d, &["rev-parse", "main"]), one.to_string());
        assert!(!d.join(".git/refs/heads/main").exists(), "nothing written");
        assert!(
            !d.join(".git/refs/heads/main.lock").exists(),
            "lock removed"
        );
    }

    #[test]
    fn a_new_ref_is_created_once_and_gets_no_reflog_git_would_not_make() {
        let (dir, one, two) = packed_repo();
        let d = dir.path();
        let repo = open(d);
        repo.create_ref(&who(), "refs/clada/test/1", one, "clada: record")
            .expect("created under a directory that did not exist");
        assert_eq!(git(d, &["rev-parse", "refs/clada/test/1"]), one.to_string());
        assert!(
            !d.join(".git/logs/refs/clada").exists(),
            "git makes no reflog for such refs"
        );
        let again = repo.create_ref(&who(), "refs/clada/test/1", two, "clada: record");
        assert!(again.is_err(), "it must not exist yet");
        assert_eq!(git(d, &["rev-parse", "refs/clada/test/1"]), one.to_string());
    }

    #[test]
    fn the_branch_lock_held_by_another_command_is_named() {
        let (dir, one, two) = packed_repo();
        let d = dir.path();
        std::fs::write(d.join(".git/refs/heads/main.lock"), "").unwrap();
        let repo = open(d);
        let err = repo
            .advance_branch(&who(), "refs/heads/main", Some(one), two, "clada: post")
            .expect_err("the branch is locked");
        let said = err.to_string();
        assert!(said.contains("refs/heads/main.lock exists"), "{said}");
        assert!(!said.contains("packed-refs.lock"), "not involved: {said}");
        assert_eq!(git(d, &["rev-parse", "main"]), one.to_string());
    }

    #[test]
    fn head_switched_to_another_branch_is_not_written_through() {
        let (dir, one, two) = packed_repo();
        let d = dir.path();
        let repo = open(d);
        let edit = gix::refs::transaction::RefEdit::update(
            "HEAD".try_into().unwrap(),
            two,
            gix::refs::transaction::PreviousValue::MustExistAndMatch(one.into()),
            "clada: post",
        )
        .with_deref(true);
        let update = super::Update::of(&repo.repo, &edit).expect("made by this module");
        git(d, &["branch", "-q", "other"]);
        git(d, &["symbolic-ref", "HEAD", "refs/heads/other"]);
        let time = "1767225600 +0000".to_string();
        let committer = gix::actor::SignatureRef {
            name: "C".into(),
            email: "c@example.com".into(),
            time: &time,
        };
        let err = update.apply(&repo.repo, committer).expect_err("HEAD moved");
        assert!(
            err.contains("HEAD no longer points to refs/heads/main"),
            "{err}"
        );
        assert_eq!(git(d, &["rev-parse", "main"]), one.to_string());
        assert!(!d.join(".git/HEAD.lock").exists());
    }
}
