//! After a request applied on the server: the local branch fast-forwarded
//! to the request's post commit when it still points at the request's
//! base, and the working tree brought along as `apply` brings it (only the
//! paths the request changed; the user's uncommitted work kept, never
//! overwritten). So one agent can send replies one after another without
//! fetching or merging by hand (issue 27, doc/hooks.md). `--no-update`
//! leaves the branch alone.

use crate::git::commit::{Identity, UpdateError};
use crate::git::worktree::Plan;
use crate::git::{Head, ObjectId, Repository};

use crate::cli::CliError;

/// What became of the local branch.
pub(super) enum Updated {
    /// Fast-forwarded; the lines to tell the user.
    Moved(Vec<String>),
    /// Left where it is, with why (the user then merges by hand).
    Left(String),
}

/// Moves `branch` (full name) from `base` to `post` under clada's lock,
/// with the working tree when it is checked out here.
pub(super) fn update_branch(
    repo: &Repository,
    author: &Identity,
    branch: &str,
    base: ObjectId,
    post: ObjectId,
) -> Result<Updated, CliError> {
    let git = |e: crate::git::GitError| CliError::new(e.to_string());
    let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    if repo.commit_info(post).is_err() {
        return Ok(Updated::Left(format!(
            "the applied commit {} is not in this clone",
            repo.short(post)
        )));
    }
    let _lock = crate::cli::guard::take_lock(repo, None, "clada command")?;
    let now = repo.ref_target(branch).map_err(git)?;
    if now != Some(base) {
        return Ok(Updated::Left(format!(
            "{short} moved here since the request was made (it is at {})",
            now.map_or_else(|| "nothing".to_string(), |c| repo.short(c))
        )));
    }
    if !repo.is_ancestor(base, post).map_err(git)? {
        return Ok(Updated::Left(format!(
            "{} is not built on {}",
            repo.short(post),
            repo.short(base)
        )));
    }
    let checked_out = repo.workdir().is_some()
        && matches!(repo.head().map_err(git)?, Head::Branch { ref name, .. } if name == branch);
    let message = "clada push-reply: fast-forward to the applied request";
    if !checked_out {
        return Ok(
            match repo.advance_branch(author, branch, Some(base), post, message) {
                Ok(()) => Updated::Moved(vec![format!(
                    "{short} fast-forwarded to {} (the applied request)",
                    repo.short(post)
                )]),
                Err(UpdateError::Moved { .. }) => {
                    Updated::Left(format!("{short} moved here during the update"))
                }
                Err(UpdateError::Git(e)) => return Err(git(e)),
            },
        );
    }
    if let Some(op) = repo.operation_in_progress() {
        return Ok(Updated::Left(format!("a {op} is in progress here")));
    }
    for said in crate::transaction::finish_interrupted_update(repo, branch)
        .map_err(|e| CliError::new(e.message))?
    {
        eprintln!("clada: {said}");
    }
    crate::cli::guard::finish_interrupted_switch(repo)?;
    let base_tree = repo.tree_of(Some(base)).map_err(git)?;
    let post_tree = repo.tree_of(Some(post)).map_err(git)?;
    let changed = repo.tree_changes(base_tree, post_tree).map_err(git)?;
    // The user's work as `apply` sees it; files an earlier update could
    // not write are not the user's edits.
    let stale = repo.unwritten_stale().map_err(git)?;
    let snapshot = repo
        .snapshot_with(base_tree, false, &|p| stale.iter().any(|s| s == p))
        .map_err(git)?;
    // Content only the index holds (staged, then changed again on disk)
    // in a path the request changed would be lost with its index entry.
    if let Some(index) = snapshot.index {
        for c in &changed {
            let staged = repo.entry_at(index, &c.path).map_err(git)?;
            if staged != repo.entry_at(base_tree, &c.path).map_err(git)?
                && staged != repo.entry_at(snapshot.tree, &c.path).map_err(git)?
            {
                return Ok(Updated::Left(format!(
                    "{} has staged changes that are neither committed nor on disk, and the request changed it",
                    crate::quote::shown(&c.path)
                )));
            }
        }
    }
    let yours: Vec<&str> = snapshot
        .paths
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| changed.iter().any(|c| c.path == *p))
        .collect();
    let plan = Plan {
        commit: post,
        // Nothing of the user's is committed: only the changed paths'
        // index entries move, to the new commit's.
        snapshot: Vec::new(),
        changed,
    };
    repo.record_update(&plan).map_err(git)?;
    match repo.advance_branch(author, branch, Some(base), post, message) {
        Ok(()) => {}
        Err(e) => {
            repo.drop_pending_update().map_err(git)?;
            return match e {
                UpdateError::Moved { .. } => Ok(Updated::Left(format!(
                    "{short} moved here during the update"
                ))),
                UpdateError::Git(e) => Err(git(e)),
            };
        }
    }
    let done = match repo.update_worktree(&plan) {
        Ok(done) => done,
        Err(e) => {
            return Ok(Updated::Moved(vec![format!(
                "{short} fast-forwarded to {}, but the working tree was not updated ({e}); the next clada command finishes it",
                repo.short(post)
            )]));
        }
    };
    let mut said = vec![format!(
        "{short} fast-forwarded to {} (the applied request); {} written to the working tree",
        repo.short(post),
        crate::apply::exec::plural(done.written.len(), "file")
    )];
    for (path, why) in &done.kept {
        let why = if yours.contains(&path.as_str()) {
            "you have uncommitted changes in it, kept as they are; the request's version is in the commit (git diff shows your file against it)"
        } else {
            why
        };
        said.push(format!("kept {}: {why}", crate::quote::shown(path)));
    }
    for (path, why) in &done.failed {
        said.push(format!(
            "not written {}: {why}; the applied version is in the commit",
            crate::quote::shown(path)
        ));
    }
    Ok(Updated::Moved(said))
}
