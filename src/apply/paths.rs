//! Operations on paths: delete, move and mkdir (syntaxes.md §1).
//!
//! Owns what each does to a [`Files`] store, whichever one it is (a tree
//! in memory, or a directory for `--no-git`): everything goes through the
//! store's read, write, remove and list, so the store's rules (no links
//! followed, no ignored file overwritten, checkpoints for blocks) hold for
//! these as for WRITE. A directory is moved or deleted file by file.

use crate::plan::RepoPath;

use super::exec::{Failure, Outcome, plural};
use super::files::{Entry, Files, FilesError};

fn not_found(path: &RepoPath, what: &str) -> Failure {
    Failure {
        error_type: Some("file_not_found"),
        message: format!("{path} does not exist; nothing to {what}"),
        details: vec![
            "check the path (relative to the repository root); a read of the directory above it lists what is there"
                .to_string(),
        ],
    }
}

/// [`not_found`] for the path a reply names, with the closest existing
/// paths.
fn missing<F: Files>(files: &F, path: &RepoPath, what: &str) -> Failure {
    let mut failure = not_found(path, what);
    let closest = super::suggest::closest(files, path);
    if let Some(hint) = super::suggest::did_you_mean(&closest) {
        failure.details.insert(0, hint);
    }
    failure
}

/// Everything below `dir` that is not a directory, and the directories,
/// deepest first; a submodule or special file below it is an error.
fn contents<F: Files>(files: &F, dir: &RepoPath) -> Result<(Vec<String>, Vec<String>), Failure> {
    let mut leaves = Vec::new();
    let mut dirs = Vec::new();
    for (path, entry) in files.list(dir)? {
        match entry {
            Entry::Dir => dirs.push(path),
            Entry::File | Entry::Link => leaves.push(path),
            Entry::Other => {
                return Err(FilesError::Submodule {
                    path: path.clone(),
                    submodule: path,
                }
                .into());
            }
        }
    }
    dirs.sort_by(|a, b| b.len().cmp(&a.len()).then(b.cmp(a)));
    Ok((leaves, dirs))
}

/// Runs `op` as one unit: a directory is moved or deleted file by file,
/// and one that fails half-way is undone whole.
fn whole<F: Files>(files: &mut F, op: impl FnOnce(&mut F) -> Outcome) -> Outcome {
    let checkpoint = files.checkpoint();
    let done = op(files);
    match &done {
        Ok(_) => files.keep(checkpoint),
        Err(_) => {
            if let Err(e) = files.rollback(checkpoint) {
                return Err(e.into());
            }
        }
    }
    done
}

/// Removes a file or link; a directory when it is empty, or with all it
/// holds when `recursive`.
pub fn delete<F: Files>(files: &mut F, path: &RepoPath, recursive: bool) -> Outcome {
    whole(files, |files| delete_now(files, path, recursive))
}

fn delete_now<F: Files>(files: &mut F, path: &RepoPath, recursive: bool) -> Outcome {
    match files.entry(path)? {
        None => Err(missing(files, path, "delete")),
        Some(Entry::File | Entry::Link) => {
            files.remove(path)?;
            Ok(("deleted".to_string(), Vec::new()))
        }
        Some(Entry::Other) => Err(FilesError::Submodule {
            path: path.to_string(),
            submodule: path.to_string(),
        }
        .into()),
        Some(Entry::Dir) => {
            let (leaves, dirs) = contents(files, path)?;
            if !recursive && !leaves.is_empty() {
                return Err(Failure {
                    error_type: Some("directory_not_empty"),
                    message: format!(
                        "{path} is a directory holding {}; nothing was deleted",
                        plural(leaves.len(), "file")
                    ),
                    details: vec![
                        "delete its files first, or delete the directory recursively (JSON: \"recursive\": true)"
                            .to_string(),
                    ],
                });
            }
            for leaf in &leaves {
                files.remove(&RepoPath::from_checked(leaf))?;
            }
            for dir in &dirs {
                files.remove(&RepoPath::from_checked(dir))?;
            }
            files.remove(path)?;
            let message = if leaves.is_empty() {
                "deleted the empty directory".to_string()
            } else {
                format!(
                    "deleted the directory and the {} in it",
                    plural(leaves.len(), "file")
                )
            };
            Ok((message, Vec::new()))
        }
    }
}

/// Renames a file or directory (parents of the target are created).
pub fn move_path<F: Files>(
    files: &mut F,
    from: &RepoPath,
    to: &RepoPath,
    overwrite: bool,
    vocab: &crate::vocab::Vocab,
) -> Outcome {
    whole(files, |files| move_now(files, from, to, overwrite, vocab))
}

fn move_now<F: Files>(
    files: &mut F,
    from: &RepoPath,
    to: &RepoPath,
    overwrite: bool,
    vocab: &crate::vocab::Vocab,
) -> Outcome {
    if from == to {
        return Ok((
            "nothing to do: the two paths are the same".to_string(),
            Vec::new(),
        ));
    }
    let source = files.entry(from)?;
    if source == Some(Entry::Dir) && to.as_str().starts_with(&format!("{from}/")) {
        return Err(Failure {
            error_type: Some("target_exists"),
            message: format!("cannot move {from} into itself ({to} is inside it)"),
            details: vec!["choose a target outside the directory".to_string()],
        });
    }
    let target = files.entry(to)?;
    let exists = |why: String| Failure {
        error_type: Some("target_exists"),
        message: format!("{to} {why}; nothing was moved"),
        details: vec![format!(
            "choose another target, or delete {to} first{}",
            match vocab.move_overwrite {
                Some(how) if !why.contains("directory") => format!(" ({how})"),
                _ => String::new(),
            }
        )],
    };
    match (source, target) {
        (None, _) => Err(missing(files, from, "move")),
        (_, Some(Entry::Dir)) => Err(exists("is a directory".to_string())),
        (Some(Entry::Dir), Some(_)) => Err(exists("exists".to_string())),
        (_, Some(Entry::Link)) => Err(FilesError::Symlink {
            path: to.to_string(),
        }
        .into()),
        (_, Some(_)) if !overwrite => Err(exists("exists".to_string())),
        // On a case-insensitive filesystem the two names are one file:
        // writing the "target" and removing the source would lose it.
        (_, Some(_)) if from.as_str().eq_ignore_ascii_case(to.as_str()) => Err(exists(format!(
            "differs from {from} only in case (on a case-insensitive filesystem the two are one file); move it through another name, in two moves"
        ))),
        (Some(Entry::Link), _) => Err(FilesError::Symlink {
            path: from.to_string(),
        }
        .into()),
        (Some(Entry::Other), _) => Err(FilesError::Submodule {
            path: from.to_string(),
            submodule: from.to_string(),
        }
        .into()),
        (Some(Entry::File), target) => {
            let data = files.read(from)?.ok_or_else(|| not_found(from, "move"))?;
            files.write(to, data)?;
            files.remove(from)?;
            let message = match target {
                Some(_) => format!("moved to {to}, replacing it"),
                None => format!("moved to {to}"),
            };
            Ok((message, Vec::new()))
        }
        (Some(Entry::Dir), None) => {
            let (leaves, dirs) = contents(files, from)?;
            if let Some(link) = leaves.iter().find(|p| {
                matches!(
                    files.entry(&RepoPath::from_checked(p)),
                    Ok(Some(Entry::Link))
                )
            }) {
                return Err(FilesError::Symlink { path: link.clone() }.into());
            }
            let moved = |p: &str| to.join(&p[from.as_str().len() + 1..]);
            for leaf in &leaves {
                let old = RepoPath::from_checked(leaf);
                let data = files.read(&old)?.ok_or_else(|| not_found(&old, "move"))?;
                files.write(&moved(leaf), data)?;
                files.remove(&old)?;
            }
            // Empty directories keep their place in the new one.
            for dir in dirs.iter().rev() {
                files.mkdir(&moved(dir))?;
            }
            for dir in &dirs {
                files.remove(&RepoPath::from_checked(dir))?;
            }
            if leaves.is_empty() {
                files.mkdir(to)?;
            }
            files.remove(from)?;
            Ok((
                format!("moved to {to} ({})", plural(leaves.len(), "file")),
                Vec::new(),
            ))
        }
    }
}

/// Creates a directory and its parents.
pub fn mkdir<F: Files>(files: &mut F, path: &RepoPath) -> Outcome {
    if files.mkdir(path)? {
        Ok((
            "created".to_string(),
            vec![
                "git keeps a directory only once a file is in it: an empty one is not committed"
                    .to_string(),
            ],
        ))
    } else {
        Ok(("already exists".to_string(), Vec::new()))
    }
}
