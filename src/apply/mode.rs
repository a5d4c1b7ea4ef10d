//! MODE: what git records of a path besides its content — the executable
//! bit, or a symbolic link whose target is the content (a unified diff's
//! `new mode 100755`, `new file mode 120000`).
//!
//! Owns turning a regular file into what the mode says, and the rule that
//! a link made from a reply points inside the repository: its target,
//! read from the link's directory, must be a path inside it and outside
//! `.git` and `.clada` (plan.rs's path rules), and reach it through no
//! other link (which could lead anywhere), or the link is refused.

use crate::plan::{FileMode, RepoPath, repo_path};

use super::exec::{Failure, Outcome};
use super::files::{Entry, FileData, Files, FilesError};

/// Sets the mode of the regular file at `path`.
pub fn set_mode<F: Files>(files: &mut F, path: &RepoPath, mode: FileMode) -> Outcome {
    let Some(file) = files.read(path)? else {
        return Err(Failure {
            error_type: Some("file_not_found"),
            message: format!("{path} does not exist; its mode cannot be set"),
            details: vec![
                "check the path, or create the file in the same section (`new file mode`)"
                    .to_string(),
            ],
        });
    };
    match mode {
        FileMode::Regular | FileMode::Executable => {
            let executable = mode == FileMode::Executable;
            let said = if executable {
                "executable"
            } else {
                "not executable"
            };
            if file.executable == executable {
                return Ok((
                    format!(
                        "nothing changed: the mode is {} ({said}) already",
                        mode.name()
                    ),
                    Vec::new(),
                ));
            }
            files.write(
                path,
                FileData {
                    bytes: file.bytes,
                    executable,
                },
            )?;
            Ok((format!("mode {} ({said})", mode.name()), Vec::new()))
        }
        FileMode::Link => {
            let (target, resolved) = link_target(path, &file.bytes)?;
            // Through another link the target could be anywhere.
            let through = match files.entry(&resolved) {
                Err(FilesError::Symlink { path }) => Some(path),
                Ok(Some(Entry::Link)) => Some(resolved.to_string()),
                _ => None,
            };
            if let Some(link) = through {
                return Err(Failure {
                    error_type: Some("symlink_not_allowed"),
                    message: format!(
                        "{path} cannot be a symbolic link: its target {target:?} is reached through the link {link}; nothing was changed"
                    ),
                    details: vec![
                        "point the link at the file itself, by its path inside the repository"
                            .to_string(),
                    ],
                });
            }
            files.write_link(path, target)?;
            Ok((format!("made a symbolic link to {target}"), Vec::new()))
        }
    }
}

/// The target a link at `path` gets from `bytes`, and that target as a
/// path from the root, when it stays inside the repository.
fn link_target<'b>(path: &RepoPath, bytes: &'b [u8]) -> Result<(&'b str, RepoPath), Failure> {
    let refuse = |error_type: &'static str, why: String| {
        Failure {
        error_type: Some(error_type),
        message: format!("{path} cannot be a symbolic link: {why}; nothing was changed"),
        details: vec![
            "a link made from a reply points to a path inside the repository, relative to the link's directory"
                .to_string(),
        ],
    }
    };
    let Ok(target) = std::str::from_utf8(bytes) else {
        return Err(refuse(
            "invalid_path",
            "its target is not UTF-8".to_string(),
        ));
    };
    if target.is_empty() || target.contains(['\n', '\0']) {
        return Err(refuse(
            "invalid_path",
            format!("its target {target:?} is not one path"),
        ));
    }
    if target.starts_with('/') || target.starts_with('\\') {
        return Err(refuse(
            "path_escape",
            format!("its target {target:?} is absolute"),
        ));
    }
    // The target as a path from the root: the link's directory, then the
    // target, normalised by the plan's own rules.
    let from_root = match path.as_str().rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{target}"),
        None => target.to_string(),
    };
    match repo_path(&from_root) {
        Ok(resolved) => Ok((target, resolved)),
        Err(e) => {
            // The error's text starts with its type, which the report
            // puts in front already.
            let why = e.to_string();
            let why = why.split_once(": ").map_or(why.as_str(), |(_, w)| w);
            Err(refuse(
                e.error_type(),
                format!("its target {target:?} is not inside the repository ({why})"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_target_stays_inside_the_repository() {
        let at = RepoPath::from_checked("sub/link");
        assert!(link_target(&at, b"../a.txt").is_ok());
        assert!(link_target(&at, b"x/y").is_ok());
        for bad in [
            &b"../../out"[..],
            b"/etc/passwd",
            b"../.git/config",
            b"",
            b"a\nb",
        ] {
            assert!(link_target(&at, bad).is_err(), "{bad:?}");
        }
    }
}
