//! Commits, notes and reference updates.
//!
//! Owns how clada writes history: signatures (the `--git-author` identity
//! with `GIT_AUTHOR_DATE` / `GIT_COMMITTER_DATE` honoured), commit objects,
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
        _ => Ok(gix::date::Time::now_local_or_utc().to_string()),
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

impl Repository {
    /// Writes a commit by `who` and returns its id.
    pub fn commit(
        &self,
        who: &Identity,
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, GitError> {
        let author_time = time_from_env("GIT_AUTHOR_DATE")?;
        let committer_time = time_from_env("GIT_COMMITTER_DATE")?;
        let author = gix::actor::SignatureRef {
            name: who.name.as_bytes().as_bstr(),
            email: who.email.as_bytes().as_bstr(),
            time: &author_time,
        };
        let committer = gix::actor::SignatureRef {
            time: &committer_time,
            ..author
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
    pub fn set_note_with(
        &self,
        who: &Identity,
        notes_ref: &str,
        object: ObjectId,
        text: &[u8],
        message: &str,
    ) -> Result<(), GitError> {
        let mut repo = self.repo.clone();
        {
            use gix::config::tree::{Author, Committer};
            let mut config = repo.config_snapshot_mut();
            let set = |config: &mut gix::config::SnapshotMut<'_>, key, value: &str| {
                config
                    .set_value(key, value)
                    .map(|_| ())
                    .map_err(|e| GitError::op("configure the notes author", e))
            };
            set(&mut config, &Committer::NAME, &who.name)?;
            set(&mut config, &Committer::EMAIL, &who.email)?;
            set(&mut config, &Author::NAME, &who.name)?;
            set(&mut config, &Author::EMAIL, &who.email)?;
            config
                .commit()
                .map_err(|e| GitError::op("configure the notes author", e))?;
        }
        let mut notes = repo
            .notes()
            .map_err(|e| GitError::op("open the notes", e))?
            .with_commit_message(message);
        let name: &gix::refs::FullNameRef = notes_ref
            .try_into()
            .map_err(|e| GitError::op(format!("use notes ref {notes_ref:?}"), e))?;
        notes
            .replace_at_ref(name, object, text)
            .map_err(|e| GitError::op(format!("write a note in {notes_ref}"), e))?;
        Ok(())
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
    pub(super) fn edit_as(&self, who: &Identity, edit: RefEdit) -> Result<(), gix::Error> {
        let time = time_from_env("GIT_COMMITTER_DATE")
            .unwrap_or_else(|_| gix::date::Time::now_local_or_utc().to_string());
        let committer = gix::actor::SignatureRef {
            name: who.name.as_bytes().as_bstr(),
            email: who.email.as_bytes().as_bstr(),
            time: &time,
        };
        self.repo
            .edit_references_as([edit], Some(committer))
            .map(|_| ())
    }

    /// Names of the references under `prefix` (like `refs/clada/rejected/`).
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<String>, GitError> {
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
}
