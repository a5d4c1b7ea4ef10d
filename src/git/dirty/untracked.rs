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

use std::collections::BTreeSet;

use foldhash::HashMap;

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
        // Sorted, as the cache keeps them, for `candidates`' merge (and
        // without repeats, which the cache would refuse).
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        names.dedup_by(|a, b| a.0 == b.0);
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
    split_last(path).0
}

/// A name the index does not have (or has as something else), in the
/// directory `dir`.
#[derive(Debug)]
pub(super) struct Candidate {
    pub path: Vec<u8>,
    pub kind: Kind,
    pub dir: Vec<u8>,
}

/// What the index has directly in one directory: the names of its
/// entries and of the directories below, each sorted.
#[derive(Debug, Default)]
pub(super) struct Children<'a> {
    files: Vec<&'a [u8]>,
    dirs: Vec<&'a [u8]>,
}

impl Children<'_> {
    /// The names of `kind`'s list: directories the index implies (listed
    /// themselves), or tracked files (anything but a directory now).
    fn of_kind(&self, kind: Kind) -> &[&[u8]] {
        if kind == Kind::Dir {
            &self.dirs
        } else {
            &self.files
        }
    }
}

/// Every directory holding an index entry, and their parents, with ""
/// for the top, each with what the index has directly in it.
///
/// Built in one pass over the (sorted) paths, so that a directory's
/// listed names are merged with its own short lists (see [`candidates`]),
/// not each looked up as a whole path in a set of every path (a cache
/// miss each, and 9 % of an apply's time at 50,000 files).
pub(super) fn index_dirs<'a>(paths: &[&'a [u8]]) -> HashMap<&'a [u8], Children<'a>> {
    let mut dirs: HashMap<&[u8], Children<'_>> = HashMap::default();
    dirs.insert(b"", Children::default());
    // The files of a directory come in runs (broken by its
    // subdirectories' entries); a run is added when it ends.
    let mut current: &[u8] = b"";
    let mut run: Vec<&[u8]> = Vec::new();
    for path in paths {
        let (dir, name) = split_last(path);
        if dir != current {
            add_run(&mut dirs, current, &mut run);
            current = dir;
            add_dir(&mut dirs, dir);
        }
        run.push(name);
    }
    add_run(&mut dirs, current, &mut run);
    // Sorted already for a well-formed index, which sorts by path; sorted
    // again so that a damaged one cannot make the merge miss.
    for children in dirs.values_mut() {
        children.files.sort_unstable();
        children.files.dedup();
        children.dirs.sort_unstable();
    }
    dirs
}

fn add_run<'a>(dirs: &mut HashMap<&'a [u8], Children<'a>>, dir: &'a [u8], run: &mut Vec<&'a [u8]>) {
    if let Some(children) = dirs.get_mut(dir) {
        children.files.append(run);
    }
    run.clear();
}

/// Adds `dir` and the directories above it that are new, each to its
/// parent's list.
fn add_dir<'a>(dirs: &mut HashMap<&'a [u8], Children<'a>>, dir: &'a [u8]) {
    let mut new = Vec::new();
    let mut d = dir;
    while !d.is_empty() && !dirs.contains_key(d) {
        new.push(d);
        d = split_last(d).0;
    }
    for d in new.into_iter().rev() {
        let (parent, name) = split_last(d);
        dirs.entry(parent).or_default().dirs.push(name);
        dirs.insert(d, Children::default());
    }
}

/// A path's directory and last name.
fn split_last(path: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memrchr(b'/', path) {
        Some(slash) => (&path[..slash], &path[slash + 1..]),
        None => (&[], path),
    }
}

/// The names of `dir`, a directory the index implies, that the index
/// does not account for: not a tracked file (anything but a directory
/// now) nor a directory the index implies. A tracked file that is now a
/// directory holds untracked files; an implied directory that is now a
/// file is an untracked file. Runs on the listing threads: no ignore
/// rules here.
///
/// `names` are sorted (see [`Names`]), as are `children`'s lists: one
/// merge, rather than a search per name, which reads each list once in
/// order (the lists point into the index's paths, and a search's jumps
/// miss the processor's cache; 4 % of a clean apply at 50,000 files).
pub(super) fn candidates(
    dir: &[u8],
    names: &Names<'_>,
    children: &Children<'_>,
    out: &mut Vec<Candidate>,
) {
    debug_assert!(
        names.iter().map(|(name, _)| name).is_sorted(),
        "names of {} out of order",
        String::from_utf8_lossy(dir)
    );
    // How far each of the two lists has been passed.
    let mut passed = [0usize; 2];
    for (name, kind) in names.iter() {
        let list = children.of_kind(kind);
        let at = &mut passed[usize::from(kind == Kind::Dir)];
        while list.get(*at).is_some_and(|child| *child < name) {
            *at += 1;
        }
        let accounted = list.get(*at).is_some_and(|child| *child == name);
        if name != b".git" && !accounted {
            out.push(Candidate {
                path: join(dir, name),
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
            excluded_dirs: HashMap::default(),
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
    /// `refs`. A `.git` file naming something else is not one: git then
    /// lists the directory's files as untracked.
    fn is_repository(&self, path: &[u8], names: &Names<'_>) -> bool {
        let dot_git = join(path, b".git");
        names.iter().any(|(name, kind)| {
            name == b".git"
                && match kind {
                    Kind::File => {
                        let dir = self.lister.workdir.join(bytes_path(path));
                        std::fs::read(dir.join(".git"))
                            .ok()
                            .and_then(|c| gitfile_target(&dir, &c))
                            .is_some_and(|target| is_git_dir(&target))
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

/// The git dir a `.git` file in `dir` names (`gitdir: PATH`, trailing
/// white space dropped, relative to `dir`), as git's
/// `read_gitfile_gently` reads it.
fn gitfile_target(dir: &std::path::Path, content: &[u8]) -> Option<std::path::PathBuf> {
    let target = content.strip_prefix(b"gitdir: ")?.trim_ascii_end();
    (!target.is_empty()).then(|| dir.join(bytes_path(target)))
}

/// Whether `dir` is a git dir by git's `is_git_directory`: a `HEAD`, and
/// `objects` and `refs` in it or in the common dir its `commondir` file
/// names (a linked worktree's git dir).
fn is_git_dir(dir: &std::path::Path) -> bool {
    if !dir.join("HEAD").is_file() {
        return false;
    }
    let common = match std::fs::read(dir.join("commondir")) {
        Ok(c) => dir.join(bytes_path(c.trim_ascii_end())),
        Err(_) => dir.to_path_buf(),
    };
    common.join("objects").is_dir() && common.join("refs").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each directory gets its own files and subdirectories, whatever the
    /// order the runs of its files come in, and every parent is there.
    #[test]
    fn index_dirs_gives_each_directory_its_children() {
        let paths: Vec<&[u8]> = vec![b"a", b"b-x/y", b"b/c", b"b/d/e", b"b/f", b"b0", b"z/y/x/w"];
        let dirs = index_dirs(&paths);
        let mut keys: Vec<&[u8]> = dirs.keys().copied().collect();
        keys.sort();
        let expected: Vec<&[u8]> = vec![b"", b"b", b"b-x", b"b/d", b"z", b"z/y", b"z/y/x"];
        assert_eq!(keys, expected);
        let names = |v: &Vec<&[u8]>| v.iter().map(|n| n.to_vec()).collect::<Vec<_>>();
        let b = &dirs[&b"b"[..]];
        assert_eq!(names(&b.files), [b"c".to_vec(), b"f".to_vec()]);
        assert_eq!(names(&b.dirs), [b"d".to_vec()]);
        let top = &dirs[&b""[..]];
        assert_eq!(names(&top.files), [b"a".to_vec(), b"b0".to_vec()]);
        assert_eq!(
            names(&top.dirs),
            [b"b".to_vec(), b"b-x".to_vec(), b"z".to_vec()]
        );
        assert_eq!(names(&dirs[&b"z/y/x"[..]].files), [b"w".to_vec()]);
        assert_eq!(names(&dirs[&b"z/y"[..]].dirs), [b"x".to_vec()]);
    }

    /// A listed name is a candidate unless the index has it as the same
    /// kind of thing: a tracked file as anything but a directory, an
    /// implied directory as a directory; `.git` never is.
    #[test]
    fn candidates_are_the_names_the_index_does_not_account_for() {
        let paths: Vec<&[u8]> = vec![b"a", b"b-x/y", b"b/c", b"b0", b"d", b"m/n", b"z"];
        let dirs = index_dirs(&paths);
        let listed: Vec<(&[u8], Kind)> = vec![
            (b".git", Kind::Dir),
            (b"a", Kind::Link),   // a link where the file a was
            (b"aa", Kind::File),  // new
            (b"b", Kind::File),   // a file where the directory b was
            (b"b-x", Kind::Dir),  // implied
            (b"b0", Kind::Dir),   // a directory where the file b0 was
            (b"c", Kind::File),   // new, between tracked names
            (b"m", Kind::Dir),    // implied
            (b"new", Kind::Dir),  // new
            (b"zz", Kind::Other), // new, after every tracked name
        ];
        let names = Names::Read(listed.iter().map(|(n, k)| (n.to_vec(), *k)).collect());
        let mut out = Vec::new();
        candidates(b"", &names, &dirs[&b""[..]], &mut out);
        let got: Vec<(Vec<u8>, Kind)> = out.into_iter().map(|c| (c.path, c.kind)).collect();
        let expected: Vec<(Vec<u8>, Kind)> = [
            (&b"aa"[..], Kind::File),
            (b"b", Kind::File),
            (b"b0", Kind::Dir),
            (b"c", Kind::File),
            (b"new", Kind::Dir),
            (b"zz", Kind::Other),
        ]
        .into_iter()
        .map(|(n, k)| (n.to_vec(), k))
        .collect();
        assert_eq!(got, expected);
        // A damaged index with `m` both a file and a directory, and a
        // conflict's stages: each kind of `m` is accounted for.
        let paths: Vec<&[u8]> = vec![b"m", b"m", b"m/n", b"m/n"];
        let dirs_damaged = index_dirs(&paths);
        for kind in [Kind::Dir, Kind::File, Kind::Link] {
            let names = Names::Read(vec![(b"m".to_vec(), kind)]);
            let mut out = Vec::new();
            candidates(b"", &names, &dirs_damaged[&b""[..]], &mut out);
            assert!(out.is_empty(), "{kind:?}");
        }
        let mut out = Vec::new();
        let names = Names::Read(vec![
            (b"c".to_vec(), Kind::File),
            (b"d".to_vec(), Kind::File),
        ]);
        candidates(b"b", &names, &dirs[&b"b"[..]], &mut out);
        let got: Vec<&[u8]> = out.iter().map(|c| c.path.as_slice()).collect();
        assert_eq!(got, [&b"b/d"[..]]);
        assert_eq!(out[0].dir, b"b");
    }
}
