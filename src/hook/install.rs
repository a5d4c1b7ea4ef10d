//! Installing clada's hook shims into a hooks directory, and removing them.
//!
//! Owns the rule that a hook clada did not write is never lost: without a
//! choice it is left alone and nothing is installed; `Chain` keeps it as
//! `<name>.clada-chained` (which `git clada hook <name>` runs first);
//! `Force` replaces it, keeping it as `<name>.clada-replaced`. Uninstalling
//! removes only clada's shims and puts a chained hook back. Every check is
//! made before the first file is changed, and each shim is written to a
//! temporary file and renamed into place, so a refused or failed install
//! leaves the directory as it was.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::shim;

/// Suffix of a foreign hook kept and run before clada's.
pub const CHAINED: &str = "clada-chained";
/// Suffix of a foreign hook replaced with `--force`.
pub const REPLACED: &str = "clada-replaced";

/// What to do with a hook that is not clada's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Install nothing and say so.
    Refuse,
    /// Keep it as `<name>.clada-chained`, run before clada's.
    Chain,
    /// Replace it, keeping it as `<name>.clada-replaced`.
    Force,
}

/// What happened to one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// The shim was written where there was no hook.
    Installed,
    /// clada's shim was already there; it is now the current version.
    Updated,
    /// The old hook was kept at this path and is run first.
    Chained(PathBuf),
    /// The old hook was moved to this path.
    Replaced(PathBuf),
    /// (uninstall) The shim was removed.
    Removed,
    /// (uninstall) The shim was removed and the chained hook put back.
    Restored,
    /// (uninstall) The hook there is not clada's; it was left alone.
    NotOurs,
    /// (uninstall) There was no clada hook.
    Absent,
}

/// Why nothing was installed or removed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{} already exist{} and {} not clada's; nothing was installed", list(.0), if .0.len() == 1 { "s" } else { "" }, if .0.len() == 1 { "is" } else { "are" })]
    Foreign(Vec<PathBuf>),
    #[error("{0} already holds a chained hook; nothing was installed")]
    AlreadyChained(PathBuf),
    #[error("{0} is not a regular file; nothing was installed")]
    NotAFile(PathBuf),
    #[error("cannot {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Io { what, path, source }
}

/// What is at a hook's path.
#[derive(Debug, PartialEq, Eq)]
enum State {
    Absent,
    Ours,
    /// Another program's hook (a symbolic link counts as one: it is never
    /// followed or written through).
    Foreign,
}

fn state(path: &Path) -> Result<State, InstallError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::Absent),
        Err(e) => return Err(io("read", path)(e)),
    };
    if meta.file_type().is_symlink() {
        return Ok(State::Foreign);
    }
    if !meta.is_file() {
        return Err(InstallError::NotAFile(path.to_path_buf()));
    }
    // A shim is a few lines; the mark is near the top.
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .map_err(io("read", path))?;
    Ok(if shim::is_ours(&head) {
        State::Ours
    } else {
        State::Foreign
    })
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// `<dir>/<name>.<suffix>`.
pub fn beside(dir: &Path, name: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{name}.{suffix}"))
}

/// Installs the shims of `names` into `dir` (created if missing).
pub fn install(
    dir: &Path,
    names: &[&str],
    existing: Existing,
) -> Result<Vec<(String, Done)>, InstallError> {
    // Every check first: a refusal changes nothing.
    let mut states = Vec::with_capacity(names.len());
    let mut foreign = Vec::new();
    for name in names {
        let path = dir.join(name);
        let st = state(&path)?;
        if st == State::Foreign {
            match existing {
                Existing::Refuse => foreign.push(path.clone()),
                Existing::Chain => {
                    let chained = beside(dir, name, CHAINED);
                    if exists(&chained) {
                        return Err(InstallError::AlreadyChained(chained));
                    }
                }
                Existing::Force => {}
            }
        }
        states.push(st);
    }
    if !foreign.is_empty() {
        return Err(InstallError::Foreign(foreign));
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let mut done = Vec::with_capacity(names.len());
    for (name, st) in names.iter().zip(states) {
        let path = dir.join(name);
        let text = shim::shim(name).expect("only hooks clada has a shim for are installed");
        let outcome = match st {
            State::Absent => {
                write_shim(dir, name, text)?;
                Done::Installed
            }
            State::Ours => {
                write_shim(dir, name, text)?;
                Done::Updated
            }
            State::Foreign => {
                let suffix = if existing == Existing::Chain {
                    CHAINED
                } else {
                    REPLACED
                };
                let kept = beside(dir, name, suffix);
                std::fs::rename(&path, &kept).map_err(io("move", &path))?;
                if let Err(e) = write_shim(dir, name, text) {
                    // Put the old hook back rather than leave none.
                    let _ = std::fs::rename(&kept, &path);
                    return Err(e);
                }
                if existing == Existing::Chain {
                    Done::Chained(kept)
                } else {
                    Done::Replaced(kept)
                }
            }
        };
        done.push((name.to_string(), outcome));
    }
    Ok(done)
}

/// Writes `text` as the executable hook `dir/name`, through a temporary
/// file renamed into place.
fn write_shim(dir: &Path, name: &str, text: &str) -> Result<(), InstallError> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.clada-tmp"));
    let result = (|| {
        let _ = std::fs::remove_file(&tmp);
        std::fs::write(&tmp, text)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
        }
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io("write", &path))
}

/// Removes clada's shims of `names` from `dir`, putting chained hooks back.
pub fn uninstall(dir: &Path, names: &[&str]) -> Result<Vec<(String, Done)>, InstallError> {
    let mut done = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(name);
        let chained = beside(dir, name, CHAINED);
        let outcome = match state(&path)? {
            State::Foreign => Done::NotOurs,
            State::Absent => Done::Absent,
            State::Ours if exists(&chained) => {
                // The rename replaces the shim in one step.
                std::fs::rename(&chained, &path).map_err(io("restore", &chained))?;
                Done::Restored
            }
            State::Ours => {
                std::fs::remove_file(&path).map_err(io("remove", &path))?;
                Done::Removed
            }
        };
        done.push((name.to_string(), outcome));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn fresh_install_update_and_uninstall() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("hooks");
        let done = install(&dir, shim::SERVER, Existing::Refuse).unwrap();
        assert!(done.iter().all(|(_, d)| *d == Done::Installed));
        assert_eq!(
            read(&dir.join("pre-receive")),
            shim::shim("pre-receive").unwrap()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("post-receive"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        let again = install(&dir, shim::SERVER, Existing::Refuse).unwrap();
        assert!(again.iter().all(|(_, d)| *d == Done::Updated));
        let gone = uninstall(&dir, shim::SERVER).unwrap();
        assert!(gone.iter().all(|(_, d)| *d == Done::Removed));
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "no temporary files left"
        );
    }

    #[test]
    fn a_foreign_hook_is_never_lost() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("post-receive"), "#!/bin/sh\necho mine\n").unwrap();
        // Refused: nothing at all is installed, not even the free hook.
        let err = install(dir, shim::SERVER, Existing::Refuse).unwrap_err();
        assert!(matches!(&err, InstallError::Foreign(p) if p == &[dir.join("post-receive")]));
        assert!(!dir.join("pre-receive").exists());
        assert_eq!(read(&dir.join("post-receive")), "#!/bin/sh\necho mine\n");
        // Chained: kept beside ours, and put back by uninstall.
        let done = install(dir, shim::SERVER, Existing::Chain).unwrap();
        assert_eq!(
            done[1].1,
            Done::Chained(dir.join("post-receive.clada-chained"))
        );
        assert_eq!(
            read(&dir.join("post-receive.clada-chained")),
            "#!/bin/sh\necho mine\n"
        );
        let gone = uninstall(dir, shim::SERVER).unwrap();
        assert_eq!(gone[1].1, Done::Restored);
        assert_eq!(read(&dir.join("post-receive")), "#!/bin/sh\necho mine\n");
        assert!(!dir.join("post-receive.clada-chained").exists());
        // Forced: moved aside, not deleted.
        install(dir, shim::SERVER, Existing::Force).unwrap();
        assert_eq!(
            read(&dir.join("post-receive.clada-replaced")),
            "#!/bin/sh\necho mine\n"
        );
        // A second chain over an existing chained hook is refused whole.
        std::fs::write(dir.join("post-receive"), "other\n").unwrap();
        std::fs::write(dir.join("post-receive.clada-chained"), "older\n").unwrap();
        assert!(matches!(
            install(dir, shim::SERVER, Existing::Chain),
            Err(InstallError::AlreadyChained(_))
        ));
        assert_eq!(read(&dir.join("post-receive")), "other\n");
        // Uninstall leaves a foreign hook alone.
        assert_eq!(
            uninstall(dir, &["post-receive"]).unwrap()[0].1,
            Done::NotOurs
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_hook_is_foreign_and_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("target"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(dir.join("target"), dir.join("post-commit")).unwrap();
        assert!(install(dir, shim::CLIENT, Existing::Refuse).is_err());
        install(dir, shim::CLIENT, Existing::Chain).unwrap();
        assert_eq!(read(&dir.join("target")), "#!/bin/sh\n");
        assert!(
            std::fs::symlink_metadata(dir.join("post-commit.clada-chained"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
