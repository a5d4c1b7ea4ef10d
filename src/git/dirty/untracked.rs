//! Untracked files: names on disk that the index does not have and the
//! ignore rules do not exclude.
//!
//! The directories the index implies are listed (in parallel, by the
//! caller); their names are then sorted here into tracked, implied
//! directories (listed themselves), and the rest, which are checked
//! against `.gitignore`, `info/exclude` and `core.excludesFile`. An
//! untracked directory that is not ignored is walked for its files. As in
//! git: nothing below an ignored directory is untracked (even in a
//! directory that also holds tracked files), `.git` is never a candidate,
//! a nested repository is left alone, and only files and symbolic links
//! count (not sockets or fifos, not empty directories).

use std::collections::{BTreeSet, HashMap};

use foldhash::HashSet;

use gix::index::entry::Mode;

use super::cache::{Cache, DirStat, Names};
use super::sys::{Root, c_path, is_gone};
use crate::git::GitError;

/// The type of a directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    Link,
    Other,
}

/// A directory's state and names (without `.` and `..`).
pub(super) struct Listed<'c> {
    pub stat: DirStat,
    pub names: Names<'c>,
}

/// Lists directories, from the cache where a directory is unchanged.
pub(super) struct Lister<'c> {
    pub root: &'c Root,
    pub workdir: &'c std::path::Path,
    pub cache: Option<&'c Cache>,
}

impl<'c> Lister<'c> {
    /// Lists the directory `rela` (relative to the worktree); `None` when
    /// the path is not a directory (gone, a file, a symbolic link). The
    /// path is `lstat`ed first: a symbolic link to a directory is not read
    /// through, and the stat says whether the cached names still hold.
    pub fn list(&self, rela: &[u8]) -> Result<Option<Listed<'c>>, GitError> {
        let mut buf = Vec::new();
        let Some(c) = c_path(&mut buf, rela) else {
            return Ok(None);
        };
        let stat = match self.root.lstat(c) {
            Ok(meta) if meta.is_dir() => DirStat::of(&meta),
            Ok(_) => return Ok(None),
            Err(e) if is_gone(&e) => return Ok(None),
            Err(e) => return Err(list_error(rela, e)),
        };
        if let Some(names) = self.cache.and_then(|c| c.get(rela, &stat)) {
            return Ok(Some(Listed { stat, names }));
        }
        let dir = self.workdir.join(bytes_path(rela));
        let read = match std::fs::read_dir(&dir) {
            Ok(read) => read,
            // Replaced since the lstat.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                return Ok(None);
            }
            Err(e) => return Err(list_error(rela, e)),
        };
        let mut names = Vec::new();
        for entry in read {
            let entry = entry.map_err(|e| list_error(rela, e))?;
            // From the directory entry's type where the filesystem gives
            // one (no extra system call), else from an lstat.
            let kind = match entry.file_type() {
                Ok(t) if t.is_dir() => Kind::Dir,
                Ok(t) if t.is_file() => Kind::File,
                Ok(t) if t.is_symlink() => Kind::Link,
                Ok(_) => Kind::Other,
                // Removed between the listing and the lstat.
                Err(_) => continue,
            };
            names.push((entry.file_name().into_encoded_bytes(), kind));
        }
        Ok(Some(Listed {
            stat,
            names: Names::Read(names),
        }))
    }
}

fn list_error(rela: &[u8], e: std::io::Error) -> GitError {
    GitError::op(format!("list the directory {}", display_dir(rela)), e)
}

fn display_dir(rela: &[u8]) -> String {
    if rela.is_empty() {
        ".".into()
    } else {
        String::from_utf8_lossy(rela).into_owned()
    }
}

fn bytes_path(rela: &[u8]) -> &std::path::Path {
    use std::os::unix::ffi::OsStrExt as _;
    std::path::Path::new(std::ffi::OsStr::from_bytes(rela))
}

/// `dir/name`, or `name` at the top.
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = Vec::with_capacity(dir.len() + 1 + name.len());
    join_into(&mut path, dir, name);
    path
}

/// [`join`] into `path`, reusing its allocation.
fn join_into(path: &mut Vec<u8>, dir: &[u8], name: &[u8]) {
    path.clear();
    if !dir.is_empty() {
        path.extend_from_slice(dir);
        path.push(b'/');
    }
    path.extend_from_slice(name);
}

fn parent(path: &[u8]) -> &[u8] {
    path.iter()
        .rposition(|b| *b == b'/')
        .map_or(&[][..], |i| &path[..i])
}

/// A name the index does not have (or has as something else), in the
/// directory `dir`.
#[derive(Debug)]
pub(super) struct Candidate {
    pub path: Vec<u8>,
    pub kind: Kind,
    pub dir: Vec<u8>,
}

/// The names of `dir`, a directory the index implies, that the index
/// does not account for: neither a tracked file (`tracked`) nor an implied
/// directory (`implied`, listed itself). A tracked file that is now a
/// directory holds untracked files; an implied directory that is now a
/// file is an untracked file. Runs on the listing threads: no ignore
/// rules here, only set lookups.
pub(super) fn candidates(
    dir: &[u8],
    names: &Names<'_>,
    tracked: &HashSet<&[u8]>,
    implied: &HashSet<&[u8]>,
    out: &mut Vec<Candidate>,
) {
    let mut path = Vec::new();
    for (name, kind) in names.iter() {
        if name == b".git" {
            continue;
        }
        join_into(&mut path, dir, name);
        let listed_itself = kind == Kind::Dir && implied.contains(path.as_slice());
        let tracked_file = kind != Kind::Dir && tracked.contains(path.as_slice());
        if !listed_itself && !tracked_file {
            out.push(Candidate {
                path: path.clone(),
                kind,
                dir: dir.to_vec(),
            });
        }
    }
}

/// Sorts untracked candidates into untracked files.
pub(super) struct Sorter<'a> {
    repo: &'a gix::Repository,
    index: &'a gix::index::State,
    lister: &'a Lister<'a>,
    /// Made on the first untracked name: a clean tree never needs it.
    excludes: Option<gix::AttributeStack<'a>>,
    /// Directories known to be ignored (or not), with what is below them.
    excluded_dirs: HashMap<Vec<u8>, bool>,
    /// The untracked files found.
    pub found: BTreeSet<Vec<u8>>,
    /// The untracked directories listed, for the cache.
    pub walked: Vec<(Vec<u8>, Listed<'a>)>,
}

impl<'a> Sorter<'a> {
    pub fn new(
        repo: &'a gix::Repository,
        index: &'a gix::index::State,
        lister: &'a Lister<'a>,
    ) -> Sorter<'a> {
        Sorter {
            repo,
            index,
            lister,
            excludes: None,
            excluded_dirs: HashMap::new(),
            found: BTreeSet::new(),
            walked: Vec::new(),
        }
    }

    /// The untracked `candidate` (see [`candidates`]): ignored, a file, or
    /// a directory to walk.
    pub fn candidate(&mut self, candidate: &Candidate) -> Result<(), GitError> {
        self.untracked(candidate.path.clone(), candidate.kind, &candidate.dir)
    }

    /// An untracked `path` of type `kind` in directory `dir`.
    fn untracked(&mut self, path: Vec<u8>, kind: Kind, dir: &[u8]) -> Result<(), GitError> {
        let mode = match kind {
            Kind::File => Mode::FILE,
            Kind::Link => Mode::SYMLINK,
            Kind::Dir => Mode::DIR,
            Kind::Other => return Ok(()),
        };
        if self.dir_excluded(dir)? || self.is_excluded(&path, mode)? {
            return Ok(());
        }
        if kind != Kind::Dir {
            self.found.insert(path);
            return Ok(());
        }
        let Some(listed) = self.lister.list(&path)? else {
            return Ok(());
        };
        if self.is_repository(&path, &listed.names) {
            return Ok(());
        }
        self.excluded_dirs.insert(path.clone(), false);
        for (name, kind) in listed.names.iter() {
            if name != b".git" {
                self.untracked(join(&path, name), kind, &path)?;
            }
        }
        self.walked.push((path, listed));
        Ok(())
    }

    /// Whether `dir` or a directory above it is ignored.
    fn dir_excluded(&mut self, dir: &[u8]) -> Result<bool, GitError> {
        if dir.is_empty() {
            return Ok(false);
        }
        if let Some(known) = self.excluded_dirs.get(dir) {
            return Ok(*known);
        }
        let excluded = self.dir_excluded(parent(dir))? || self.is_excluded(dir, Mode::DIR)?;
        self.excluded_dirs.insert(dir.to_vec(), excluded);
        Ok(excluded)
    }

    fn is_excluded(&mut self, path: &[u8], mode: Mode) -> Result<bool, GitError> {
        use gix::bstr::ByteSlice as _;
        let fail = |e: &dyn std::fmt::Display| GitError::op("read the ignore rules", e);
        if self.excludes.is_none() {
            let stack = self
                .repo
                .excludes(
                    self.index,
                    None,
                    gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
                )
                .map_err(|e| fail(&e))?;
            self.excludes = Some(stack);
        }
        let stack = self.excludes.as_mut().expect("made above");
        let platform = stack
            .at_entry(path.as_bstr(), Some(mode))
            .map_err(|e| fail(&e))?;
        Ok(platform.is_excluded())
    }

    /// Whether the directory `path` with `names` is a repository of its
    /// own, by git's test: a `.git` file naming a git dir (a worktree or
    /// submodule link), or a `.git` directory with `HEAD`, `objects` and
    /// `refs`.
    fn is_repository(&self, path: &[u8], names: &Names<'_>) -> bool {
        let dot_git = join(path, b".git");
        names.iter().any(|(name, kind)| {
            name == b".git"
                && match kind {
                    Kind::File => {
                        let full = self.lister.workdir.join(bytes_path(&dot_git));
                        std::fs::read(full).is_ok_and(|c| c.starts_with(b"gitdir: "))
                    }
                    Kind::Dir => [&b"HEAD"[..], b"objects", b"refs"].iter().all(|part| {
                        let mut buf = Vec::new();
                        c_path(&mut buf, &join(&dot_git, part))
                            .is_some_and(|c| self.lister.root.lstat(c).is_ok())
                    }),
                    _ => false,
                }
        })
    }
}
