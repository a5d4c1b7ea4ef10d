//! Commits, notes and reference updates.
//!
//! Owns how clada writes history: signatures (the `--git-author` identity,
//! or the user's own for a commit the user asked for, with
//! `GIT_AUTHOR_DATE` / `GIT_COMMITTER_DATE` honoured), commit objects,
//! notes, and compare-and-swap reference updates that write reflogs. The
//! branch is updated through `HEAD` with deref so that both the branch's
//! and `HEAD`'s reflogs get an entry, as git does.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::transaction::{PreviousValue, RefEdit};

use super::{GitError, Repository};

/// Who clada commits as: `Name <email>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

impl Identity {
    /// Reads `Name <email>`.
    pub fn parse(text: &str) -> Option<Identity> {
        let (name, rest) = text.split_once('<')?;
        let email = rest.strip_suffix('>')?;
        let name = name.trim();
        // A newline or angle bracket would corrupt the commit header.
        if name.is_empty() || email.contains(['<', '>', '\n']) || name.contains(['<', '>', '\n']) {
            return None;
        }
        Some(Identity {
            name: name.to_string(),
            email: email.trim().to_string(),
        })
    }
}

impl Default for Identity {
    fn default() -> Self {
        Identity {
            name: "clada".to_string(),
            email: "clada@localhost".to_string(),
        }
    }
}

/// A time for a signature from `var` (git's date formats), else now.
fn time_from_env(var: &str) -> Result<String, GitError> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => gix::date::parse(&value, None)
            .map(|t| t.to_string())
            .map_err(|e| GitError::op(format!("read {var}={value:?}"), e)),
        _ => Ok(now_local().to_string()),
    }
}

/// Now as clada dates its commits (seconds since the epoch):
/// `GIT_COMMITTER_DATE` when it is set and reads as a date, else the clock.
pub fn committer_now() -> i64 {
    match std::env::var("GIT_COMMITTER_DATE") {
        Ok(value) if !value.trim().is_empty() => {
            gix::date::parse(&value, None).map_or_else(|_| now_local().seconds, |t| t.seconds)
        }
        _ => now_local().seconds,
    }
}

// POSIX's, in every C library; the `libc` crate does not declare it.
unsafe extern "C" {
    fn tzset();
}

/// Now, with the local offset from UTC as the C library works it out
/// (`TZ`, else `/etc/localtime`), as git does; UTC if it cannot.
///
/// Not gix's `Time::now_local_or_utc`: its time zone library first
/// indexes the whole zoneinfo database, 1.4 ms of every apply.
fn now_local() -> gix::date::Time {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    // Irrefutable where `time_t` is 64 bits.
    #[allow(irrefutable_let_patterns)]
    let Ok(t) = libc::time_t::try_from(seconds) else {
        return gix::date::Time::new(seconds, 0);
    };
    let mut tm = std::mem::MaybeUninit::<libc::tm>::uninit();
    // SAFETY: `tzset` reads `TZ`, which nothing in clada sets (POSIX only
    // promises that `localtime_r` sees it after a `tzset`). `t` and `tm`
    // are valid for the call; `localtime_r` is the reentrant form, and
    // fills `tm` when it returns non-null.
    let offset = unsafe {
        tzset();
        if libc::localtime_r(&t, tm.as_mut_ptr()).is_null() {
            0
        } else {
            tm.assume_init().tm_gmtoff
        }
    };
    // Real offsets are within a day; anything else is taken as UTC.
    let offset = i32::try_from(offset)
        .ok()
        .filter(|o| o.unsigned_abs() < 86_400)
        .unwrap_or(0);
    gix::date::Time::new(seconds, offset)
}

impl Repository {
    /// The identities git gives the user's own commits, author and
    /// committer, by git's rules: `GIT_AUTHOR_NAME`/`GIT_COMMITTER_NAME`
    /// (and `_EMAIL`), then `author.*`/`committer.*`, then `user.*`, then
    /// `EMAIL`, name and email each on its own. `None` when either has no
    /// name or no email, or one that would corrupt a commit header (git
    /// would refuse to commit too).
    pub fn user_identities(&self) -> Option<(Identity, Identity)> {
        let identity = |sig: Option<Result<gix::actor::SignatureRef<'_>, _>>| {
            let sig = sig?.ok()?;
            let (name, email) = (sig.name.to_str().ok()?, sig.email.to_str().ok()?);
            Identity::parse(&format!("{name} <{email}>"))
                .filter(|id| id.name == name.trim() && id.email == email.trim())
        };
        Some((
            identity(self.repo.author())?,
            identity(self.repo.committer())?,
        ))
    }
}

/// Why a branch update did not happen.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("branch_moved: {branch} moved while applying (expected {expected}, found {found})")]
    Moved {
        branch: String,
        expected: String,
        found: String,
    },
    #[error(transparent)]
    Git(#[from] GitError),
}

/// Whether git takes `name` as a full reference name (`git
/// check-ref-format`).
pub fn is_valid_ref_name(name: &str) -> bool {
    gix::refs::FullName::try_from(name).is_ok()
}

impl Repository {
    /// Writes a commit by `who` and returns its id.
    pub fn commit(
        &self,
        who: &Identity,
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, GitError> {
        self.commit_as((who, who), message, tree, parents)
    }

    /// Writes a commit with its own author and committer and returns its
    /// id.
    pub fn commit_as(
        &self,
        (author, committer): (&Identity, &Identity),
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, GitError> {
        let author_time = time_from_env("GIT_AUTHOR_DATE")?;
        let committer_time = time_from_env("GIT_COMMITTER_DATE")?;
        let author = gix::actor::SignatureRef {
            name: author.name.as_bytes().as_bstr(),
            email: author.email.as_bytes().as_bstr(),
            time: &author_time,
        };
        let committer = gix::actor::SignatureRef {
            name: committer.name.as_bytes().as_bstr(),
            email: committer.email.as_bytes().as_bstr(),
            time: &committer_time,
        };
        let commit = self
            .repo
            .new_commit_as(committer, author, message, tree, parents.iter().copied())
            .map_err(|e| GitError::op("write a commit", e))?;
        Ok(commit.id)
    }

    /// Writes a blob and returns its id.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, GitError> {
        Ok(self
            .repo
            .write_blob(bytes)
            .map_err(|e| GitError::op("write a blob", e))?
            .detach())
    }

    /// Attaches `text` as the note of `object` in `notes_ref`, committed by
    /// `who` (the notes ref is updated with compare-and-swap).
    pub fn set_note(
        &self,
        who: &Identity,
        notes_ref: &str,
        object: ObjectId,
        text: &[u8],
    ) -> Result<(), GitError> {
        self.set_note_with(who, notes_ref, object, text, "clada: reply of an apply")
    }

    /// [`Repository::set_note`] with `message` for the notes commit.
    ///
    /// The notes tree is edited with gix's notes plumbing (which keeps
    /// git's fan-out), but the commit and the reference update are clada's
    /// own, signed by `who`: gix's notes platform signs through the
    /// repository's configured identity, which works out its time through
    /// a time zone library that first indexes the whole zoneinfo database
    /// (1.4 ms of every apply).
    pub fn set_note_with(
        &self,
        who: &Identity,
        notes_ref: &str,
        object: ObjectId,
        text: &[u8],
        message: &str,
    ) -> Result<(), GitError> {
        let fail =
            |e: &dyn std::fmt::Display| GitError::op(format!("write a note in {notes_ref}"), e);
        let name: gix::refs::FullName = notes_ref
            .try_into()
            .map_err(|e| GitError::op(format!("use notes ref {notes_ref:?}"), e))?;
        // The notes commit to build on and the reference to move (a
        // symbolic one is followed to the one it names, as git does).
        let (parent, target) = match self
            .repo
            .try_find_reference(name.as_ref())
            .map_err(|e| fail(&e))?
        {
            Some(mut reference) => {
                let id = reference.follow_to_object().map_err(|e| fail(&e))?.detach();
                (Some(id), reference.name().to_owned())
            }
            None => (None, name),
        };
        let root = match parent {
            Some(id) => self
                .repo
                .find_commit(id)
                .map_err(|e| fail(&e))?
                .tree_id()
                .map_err(|e| fail(&e))?
                .detach(),
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let blob = self.repo.write_blob(text).map_err(|e| fail(&e))?.detach();
        let edit = gix::note::plumbing::State::new(root, &self.repo)
            .and_then(|mut state| state.replace(object, blob, &self.repo))
            .map_err(|e| fail(&e))?;
        let commit = self.commit(who, message, edit.tree, parent.as_slice())?;
        let previous = match parent {
            Some(id) => PreviousValue::MustExistAndMatch(id.into()),
            None => PreviousValue::MustNotExist,
        };
        self.edit_as(
            who,
            RefEdit::update(target, commit, previous, format!("notes: {message}")),
        )
        .map_err(|e| fail(&e))
    }

    /// A notes commit of its own (no parent, no reference): a notes tree
    /// holding `notes` (annotated object, text), committed by `who` with
    /// `message`. The per-request protocol's requests and results are such
    /// commits, each under a reference of its own (doc/hooks.md).
    pub fn notes_commit(
        &self,
        who: &Identity,
        notes: &[(ObjectId, &[u8])],
        message: &str,
    ) -> Result<ObjectId, GitError> {
        let fail = |e: &dyn std::fmt::Display| GitError::op("write a notes commit", e);
        let mut tree = ObjectId::empty_tree(self.repo.object_hash());
        for (object, text) in notes {
            let blob = self.repo.write_blob(text).map_err(|e| fail(&e))?.detach();
            tree = gix::note::plumbing::State::new(tree, &self.repo)
                .and_then(|mut state| state.replace(*object, blob, &self.repo))
                .map_err(|e| fail(&e))?
                .tree;
        }
        self.commit(who, message, tree, &[])
    }

    /// The text of the note on `object` in `notes_ref`, if any.
    pub fn note(&self, notes_ref: &str, object: ObjectId) -> Result<Option<Vec<u8>>, GitError> {
        let mut notes = self
            .repo
            .notes()
            .map_err(|e| GitError::op("open the notes", e))?
            .with_refs([notes_ref])
            .map_err(|e| GitError::op(format!("use notes ref {notes_ref:?}"), e))?;
        let found = notes
            .get(object)
            .map_err(|e| GitError::op("read a note", e))?;
        Ok(found.first().map(|n| n.blob.data.clone()))
    }

    /// The commit `name` (a full ref name) points at, if it exists.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>, GitError> {
        let found = self
            .repo
            .try_find_reference(name)
            .map_err(|e| GitError::op(format!("read {name}"), e))?;
        Ok(found.and_then(|r| r.target().try_id().map(|id| id.to_owned())))
    }

    /// Moves `branch` (a full name) from `expected` (`None`: unborn) to
    /// `new`. When HEAD points to `branch` the update goes through HEAD so
    /// both reflogs get `message`; otherwise (a server applying to another
    /// branch of a bare repository) the branch is updated directly.
    pub fn advance_branch(
        &self,
        who: &Identity,
        branch: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<(), UpdateError> {
        let previous = match expected {
            Some(id) => PreviousValue::MustExistAndMatch(id.into()),
            None => PreviousValue::MustNotExist,
        };
        let through_head =
            matches!(self.head()?, super::Head::Branch { ref name, .. } if name == branch);
        let name: gix::refs::FullName = if through_head { "HEAD" } else { branch }
            .try_into()
            .map_err(|e| GitError::op(format!("name {branch}"), e))?;
        let edit = RefEdit::update(name, new, previous, message).with_deref(through_head);
        if let Err(e) = self.edit_as(who, edit) {
            let found = self.ref_target(branch)?;
            if found != expected {
                return Err(UpdateError::Moved {
                    branch: branch.to_string(),
                    expected: expected.map_or("nothing (unborn)".to_string(), |id| id.to_string()),
                    found: found.map_or("nothing".to_string(), |id| id.to_string()),
                });
            }
            return Err(GitError::op(format!("update {branch}"), e).into());
        }
        Ok(())
    }

    /// Sets the reference `name` to `id`, whatever it held (a
    /// remote-tracking branch brought up to date).
    pub fn set_ref(
        &self,
        who: &Identity,
        name: &str,
        id: ObjectId,
        message: &str,
    ) -> Result<(), GitError> {
        let full: gix::refs::FullName = name
            .try_into()
            .map_err(|e| GitError::op(format!("name {name}"), e))?;
        self.edit_as(who, RefEdit::update(full, id, PreviousValue::Any, message))
            .map_err(|e| GitError::op(format!("update {name}"), e))
    }

    /// Creates the reference `name` at `id`; it must not exist yet.
    pub fn create_ref(
        &self,
        who: &Identity,
        name: &str,
        id: ObjectId,
        message: &str,
    ) -> Result<(), GitError> {
        let full: gix::refs::FullName = name
            .try_into()
            .map_err(|e| GitError::op(format!("name {name}"), e))?;
        self.edit_as(
            who,
            RefEdit::update(full, id, PreviousValue::MustNotExist, message),
        )
        .map_err(|e| GitError::op(format!("create {name}"), e))?;
        Ok(())
    }

    /// Applies `edit` with `who` as the reflog's committer (the user may
    /// have no identity configured; clada's commits do not need one).
    pub(super) fn edit_as(&self, who: &Identity, edit: RefEdit) -> Result<(), RefEditError> {
        let time = time_from_env("GIT_COMMITTER_DATE").unwrap_or_else(|_| now_local().to_string());
        let committer = gix::actor::SignatureRef {
            name: who.name.as_bytes().as_bstr(),
            email: who.email.as_bytes().as_bstr(),
            time: &time,
        };
        let name = edit.name.as_bstr().to_string();
        // An update to a commit is made as git makes it (`cas`), without
        // packed-refs.lock; the rest goes through gix's transaction, which
        // may take it.
        let update = super::cas::Update::of(&self.repo, &edit);
        let candidates = self.git_lock_candidates(&name, update.is_none());
        // Which of git's lock files this update may take, written down
        // first: if clada is killed holding one, the next clada (which
        // finds clada's own lock stale) knows exactly which are its.
        let intent = super::lock::RefIntent::record(self.repo.git_dir(), &candidates);
        let result = match update {
            Some(update) => update.apply(&self.repo, committer),
            None => self
                .repo
                .edit_references_as([edit], Some(committer))
                .map(|_| ())
                .map_err(|e| e.to_string()),
        }
        .map_err(|message| RefEditError {
            message,
            locks: candidates.into_iter().filter(|p| p.exists()).collect(),
        });
        drop(intent);
        result
    }

    /// The lock files an update of the reference `name` may take: the
    /// ref's own, HEAD's, the branch HEAD names, and `packed-refs.lock`
    /// when gix's transaction makes it (`packed`).
    fn git_lock_candidates(&self, name: &str, packed: bool) -> Vec<std::path::PathBuf> {
        let common = self.repo.common_dir();
        let mut candidates = vec![
            common.join(format!("{name}.lock")),
            self.repo.git_dir().join("HEAD.lock"),
        ];
        if packed {
            candidates.push(common.join("packed-refs.lock"));
        }
        // An update through HEAD locks the branch HEAD names too.
        if let Ok(Some(branch)) = self.repo.head_name() {
            candidates.push(common.join(format!("{}.lock", branch.as_bstr())));
        }
        candidates.sort();
        candidates.dedup();
        candidates
    }

    /// Names of the references under `prefix` (like `refs/clada/rejected/`).
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<String>, GitError> {
        // References change under a listing: one deleted between the
        // directory's listing and the read of its file (a server's hooks
        // delete answered requests while others list the inbox) fails the
        // whole listing. Listed again, it is simply gone; a listing that
        // keeps failing is an error. Once, such a failure stopped a hook
        // before it answered its own request.
        let mut tries = 0;
        loop {
            match self.try_refs_under(prefix) {
                Ok(names) => return Ok(names),
                Err(e) if tries >= 20 => return Err(e),
                Err(_) => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
    }

    fn try_refs_under(&self, prefix: &str) -> Result<Vec<String>, GitError> {
        let platform = self
            .repo
            .references()
            .map_err(|e| GitError::op("list references", e))?;
        let iter = platform
            .prefixed(prefix)
            .map_err(|e| GitError::op("list references", e))?;
        let mut out = Vec::new();
        for r in iter {
            let r = r.map_err(|e| GitError::op("list references", e))?;
            out.push(r.name().as_bstr().to_string());
        }
        Ok(out)
    }
}

/// A reference update that failed. When git's lock files are in the way,
/// it names them and says how to recover: they belong to a git command
/// that is running, or to one that was killed (git never removes those).
#[derive(Debug)]
pub struct RefEditError {
    message: String,
    locks: Vec<std::path::PathBuf>,
}

impl std::fmt::Display for RefEditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if !self.locks.is_empty() {
            let list: Vec<String> = self.locks.iter().map(|p| p.display().to_string()).collect();
            write!(
                f,
                "; git's lock file {} exists: a git command is running, or one was killed and left it behind. If no git command is running, remove it (rm {}) and run the command again",
                list.join(", "),
                list.join(" ")
            )?;
        }
        Ok(())
    }
}

/// The current time as ISO 8601 in UTC, for records such as approvals.
pub fn now_iso8601() -> String {
    gix::date::Time::now_utc()
        .format(gix::date::time::format::ISO8601_STRICT)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_name_and_email() {
        assert_eq!(
            Identity::parse("Ada Lovelace <ada@example.org>"),
            Some(Identity {
                name: "Ada Lovelace".into(),
                email: "ada@example.org".into()
            })
        );
        assert_eq!(Identity::parse("no email"), None);
        assert_eq!(Identity::parse("<a@b>"), None);
        assert_eq!(Identity::parse("a\nb <a@b>"), None);
    }

    #[test]
    fn references_deleted_during_a_listing_are_left_out_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let init = crate::git::test_git::command(dir.path(), &["init", "-q", "--bare", "r.git"])
            .status()
            .unwrap();
        assert!(init.success());
        let git_dir = dir.path().join("r.git");
        let id = "0123456789012345678901234567890123456789";
        let refs = git_dir.join("refs/clada/inbox");
        std::fs::create_dir_all(&refs).unwrap();
        for i in 0..400 {
            std::fs::write(refs.join(format!("r{i:03}")), format!("{id}\n")).unwrap();
        }
        let repo = crate::git::Repository::open(&git_dir).unwrap();
        // The deleting starts when the listing does (a thread left to
        // start on its own could be done before the first listing).
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let deleting = std::thread::spawn(move || {
            wait.recv().unwrap();
            for i in 0..400 {
                let _ = std::fs::remove_file(refs.join(format!("r{i:03}")));
            }
        });
        go.send(()).unwrap();
        loop {
            let names = repo.refs_under("refs/clada/inbox/").unwrap();
            assert!(names.len() <= 400);
            if deleting.is_finished() {
                break;
            }
        }
        deleting.join().unwrap();
        assert_eq!(
            repo.refs_under("refs/clada/inbox/").unwrap(),
            Vec::<String>::new()
        );
    }
}
