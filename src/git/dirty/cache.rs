//! The listing cache: each directory's names as last read, kept in
//! `clada-untracked` in the git dir, so that a directory whose `lstat`
//! has not changed since is not read again.
//!
//! A directory's modification time changes whenever a name is added,
//! removed or renamed in it, so an unchanged `lstat` (mtime, ctime, inode,
//! device, size) means unchanged names — with one exception git's
//! "racy" rule is about: a change in the same clock tick as the one the
//! recorded mtime came from leaves the mtime as it was. So a listing is
//! only recorded when the directory's mtime is earlier than a file this
//! run created before listing anything (its mtime is the filesystem's own
//! clock), with one second to spare for a worktree on another clock.
//!
//! Only raw listings are kept, never what they mean: tracked or not,
//! ignored or not is decided afresh each time from the index and the
//! ignore files, so nothing here goes stale when those change.
//!
//! The file is replaced through a temporary file and a rename; a
//! temporary file that a killed run left behind is removed by a later run
//! once it is an hour old.
//!
//! Like git's untracked cache this relies on the filesystem updating
//! directory mtimes; `core.untrackedCache=false` or
//! `clada.untrackedCache=false` turns it off.
//!
//! Format (integers little-endian): the header line, then per directory
//! its path (u32 length + bytes), its stat (mtime s i64, ns u32, ctime s
//! i64, ns u32, inode u64, device u64, size u64), and its names (u32 byte
//! count, then per name, sorted by bytes: kind u8, u16 length, bytes). A
//! file that does not parse is ignored.

use foldhash::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::sys::Meta;
use super::untracked::Kind;

const HEADER: &[u8] = b"clada untracked cache 2\n";
/// The cache file, in the worktree's git dir.
pub(super) const FILE_NAME: &str = "clada-untracked";

/// What tells one state of a directory from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DirStat {
    mtime: (i64, u32),
    ctime: (i64, u32),
    ino: u64,
    dev: u64,
    size: u64,
}

impl DirStat {
    pub fn of(meta: &Meta) -> DirStat {
        DirStat {
            mtime: meta.mtime,
            ctime: meta.ctime,
            ino: meta.ino,
            dev: meta.dev,
            size: meta.size,
        }
    }
}

/// A directory's names, sorted by bytes: as just read, or encoded as in
/// the cache file.
#[derive(Debug)]
pub(super) enum Names<'c> {
    Read(Vec<(Vec<u8>, Kind)>),
    Cached(&'c [u8]),
}

impl Names<'_> {
    pub fn iter(&self) -> NamesIter<'_> {
        match self {
            Names::Read(names) => NamesIter::Read(names.iter()),
            Names::Cached(bytes) => NamesIter::Cached(bytes),
        }
    }

    /// Appends the names as the file holds them; `None` (and the
    /// directory is not recorded) for a name too long for the format,
    /// which no Linux filesystem allows (NAME_MAX is 255).
    fn encode(&self, out: &mut Vec<u8>) -> Option<()> {
        match self {
            Names::Cached(bytes) => out.extend_from_slice(bytes),
            Names::Read(names) => {
                for (name, kind) in names {
                    let len = u16::try_from(name.len()).ok()?;
                    out.push(kind_byte(*kind));
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(name);
                }
            }
        }
        Some(())
    }
}

pub(super) enum NamesIter<'a> {
    Read(std::slice::Iter<'a, (Vec<u8>, Kind)>),
    Cached(&'a [u8]),
}

impl<'a> Iterator for NamesIter<'a> {
    type Item = (&'a [u8], Kind);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            NamesIter::Read(it) => it.next().map(|(n, k)| (n.as_slice(), *k)),
            NamesIter::Cached(bytes) => {
                // Validated when the file was parsed.
                let (&k, rest) = bytes.split_first()?;
                let len = u16::from_le_bytes([*rest.first()?, *rest.get(1)?]) as usize;
                let name = rest.get(2..2 + len)?;
                *bytes = &rest[2 + len..];
                Some((name, kind_of(k)?))
            }
        }
    }
}

fn kind_byte(kind: Kind) -> u8 {
    match kind {
        Kind::File => 0,
        Kind::Dir => 1,
        Kind::Link => 2,
        Kind::Other => 3,
    }
}

fn kind_of(byte: u8) -> Option<Kind> {
    Some(match byte {
        0 => Kind::File,
        1 => Kind::Dir,
        2 => Kind::Link,
        3 => Kind::Other,
        _ => return None,
    })
}

/// Directory path to its stat and where its names are in the file.
type Records = HashMap<Vec<u8>, (DirStat, std::ops::Range<usize>)>;

/// The cache as read from the git dir.
pub(super) struct Cache {
    bytes: Vec<u8>,
    dirs: Records,
}

impl Cache {
    /// The cache in `git_dir`; empty when there is none or it does not
    /// parse.
    pub fn load(git_dir: &Path) -> Cache {
        let bytes = std::fs::read(git_dir.join(FILE_NAME)).unwrap_or_default();
        let dirs = parse(&bytes).unwrap_or_default();
        Cache { bytes, dirs }
    }

    /// The names of directory `path` if it was recorded with `stat`.
    pub fn get(&self, path: &[u8], stat: &DirStat) -> Option<Names<'_>> {
        let (recorded, range) = self.dirs.get(path)?;
        (recorded == stat).then(|| Names::Cached(&self.bytes[range.clone()]))
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }
}

fn parse(bytes: &[u8]) -> Option<Records> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(HEADER.len())? != HEADER {
        return None;
    }
    let mut dirs = HashMap::default();
    while r.at < bytes.len() {
        let len = r.u32()? as usize;
        let path = r.take(len)?.to_vec();
        let stat = DirStat {
            mtime: (r.i64()?, r.u32()?),
            ctime: (r.i64()?, r.u32()?),
            ino: r.u64()?,
            dev: r.u64()?,
            size: r.u64()?,
        };
        let len = r.u32()? as usize;
        let start = r.at;
        let names = r.take(len)?;
        // Check the names decode now, so that iterating cannot stop short,
        // and are sorted, as `candidates`' merge needs them.
        let mut rest = names;
        let mut last: Option<&[u8]> = None;
        while let Some((&k, tail)) = rest.split_first() {
            kind_of(k)?;
            let n = u16::from_le_bytes([*tail.first()?, *tail.get(1)?]) as usize;
            let name = tail.get(2..2 + n)?;
            if last.is_some_and(|last| last >= name) {
                return None;
            }
            last = Some(name);
            rest = &tail[2 + n..];
        }
        dirs.insert(path, (stat, start..start + len));
    }
    Some(dirs)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let slice = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(slice)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// How old a temporary cache file of another run must be to be taken as
/// left behind (its run killed before it could remove it): far longer
/// than any run writes one.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the temporary cache files in `git_dir` that runs killed midway
/// left behind, but `ours`. A few dozen names to read; errors are ignored
/// (another run may remove the same file).
fn remove_stale(git_dir: &Path, ours: &Path) {
    let Ok(entries) = std::fs::read_dir(git_dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_temp = name
            .as_encoded_bytes()
            .strip_prefix(FILE_NAME.as_bytes())
            .is_some_and(|rest| rest.starts_with(b"."));
        if !is_temp || entry.path() == ours {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Seconds to spare for a worktree whose filesystem clock runs behind the
/// git dir's.
#[cfg(not(test))]
fn margin() -> i64 {
    1
}

// The tests make directories old by setting their mtime back, which they
// cannot do for the ctime: they trust any listing, on their own thread.
#[cfg(test)]
thread_local! {
    pub(super) static TEST_MARGIN: std::cell::Cell<i64> = const { std::cell::Cell::new(1) };
}

#[cfg(test)]
fn margin() -> i64 {
    TEST_MARGIN.with(|m| m.get())
}

/// The next cache file, being made: created before any directory is
/// listed, so that its mtime says which listings can be trusted.
pub(super) struct Next {
    file: tempfile::NamedTempFile,
    target: PathBuf,
    /// The filesystem's time when this run began listing.
    began: (i64, u32),
}

impl Next {
    /// Starts the next cache file in `git_dir`; `None` when it cannot be
    /// written (a read-only repository: the check runs without a cache).
    pub fn start(git_dir: &Path) -> Option<Next> {
        use std::os::unix::fs::MetadataExt as _;
        let file = tempfile::Builder::new()
            .prefix("clada-untracked.")
            .tempfile_in(git_dir)
            .ok()?;
        let meta = file.as_file().metadata().ok()?;
        remove_stale(git_dir, file.path());
        Some(Next {
            file,
            target: git_dir.join(FILE_NAME),
            began: (meta.mtime(), meta.mtime_nsec() as u32),
        })
    }

    /// Whether a listing of a directory with `stat` may be recorded: both
    /// its times before this run (a tool that puts an mtime back, as
    /// `rsync -a` or `tar` do, still moves the ctime).
    pub fn trusts(&self, stat: &DirStat) -> bool {
        // The margin is applied here, on the thread that finishes the
        // cache, which is where the tests set theirs.
        let before = (self.began.0 - margin(), self.began.1);
        stat.mtime < before && stat.ctime < before
    }

    /// The cache of `dirs` (path, stat, names), to be written.
    pub fn finish<'n>(
        self,
        dirs: impl Iterator<Item = (&'n [u8], DirStat, &'n Names<'n>)>,
    ) -> Write {
        let mut out = Vec::with_capacity(1 << 20);
        out.extend_from_slice(HEADER);
        let mut names = Vec::new();
        for (path, stat, listing) in dirs {
            if !self.trusts(&stat) {
                continue;
            }
            let Ok(path_len) = u32::try_from(path.len()) else {
                continue;
            };
            names.clear();
            if listing.encode(&mut names).is_none() {
                continue;
            }
            let Ok(names_len) = u32::try_from(names.len()) else {
                continue;
            };
            out.extend_from_slice(&path_len.to_le_bytes());
            out.extend_from_slice(path);
            out.extend_from_slice(&stat.mtime.0.to_le_bytes());
            out.extend_from_slice(&stat.mtime.1.to_le_bytes());
            out.extend_from_slice(&stat.ctime.0.to_le_bytes());
            out.extend_from_slice(&stat.ctime.1.to_le_bytes());
            out.extend_from_slice(&stat.ino.to_le_bytes());
            out.extend_from_slice(&stat.dev.to_le_bytes());
            out.extend_from_slice(&stat.size.to_le_bytes());
            out.extend_from_slice(&names_len.to_le_bytes());
            out.extend_from_slice(&names);
        }
        Write {
            file: self.file,
            target: self.target,
            bytes: out,
        }
    }
}

/// A cache file's content, ready to be written (on another thread, while
/// the apply goes on).
pub(in crate::git) struct Write {
    file: tempfile::NamedTempFile,
    target: PathBuf,
    bytes: Vec<u8>,
}

impl Write {
    /// Writes the file and puts it in place. Failing to is not an error:
    /// the next run reads the directories again.
    pub(in crate::git) fn write(self) {
        let Write {
            mut file,
            target,
            bytes,
        } = self;
        if file.write_all(&bytes).is_ok() {
            let _ = file.persist(&target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mtime: i64) -> DirStat {
        DirStat {
            mtime: (mtime, 5),
            ctime: (mtime, 5),
            ino: 42,
            dev: 7,
            size: 4096,
        }
    }

    #[test]
    fn a_written_cache_reads_back_and_checks_the_stat() {
        let dir = tempfile::tempdir().unwrap();
        let next = Next::start(dir.path()).unwrap();
        let names = Names::Read(vec![
            (b"a.rs".to_vec(), Kind::File),
            (b"ln".to_vec(), Kind::Link),
            (b"sub".to_vec(), Kind::Dir),
        ]);
        let old = stat(1_000);
        let fresh = stat(next.began.0 + 5);
        next.finish([(&b"src"[..], old, &names), (&b"new"[..], fresh, &names)].into_iter())
            .write();
        let cache = Cache::load(dir.path());
        // Only the listing older than the run was recorded.
        assert_eq!(cache.len(), 1);
        assert!(cache.get(b"new", &fresh).is_none());
        assert!(cache.get(b"src", &stat(1_001)).is_none());
        let got: Vec<_> = cache
            .get(b"src", &old)
            .unwrap()
            .iter()
            .map(|(n, k)| (n.to_vec(), k))
            .collect();
        assert_eq!(
            got,
            vec![
                (b"a.rs".to_vec(), Kind::File),
                (b"ln".to_vec(), Kind::Link),
                (b"sub".to_vec(), Kind::Dir)
            ]
        );
    }

    #[test]
    fn a_damaged_cache_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let next = Next::start(dir.path()).unwrap();
        let names = Names::Read(vec![(b"a.rs".to_vec(), Kind::File)]);
        next.finish([(&b"src"[..], stat(1_000), &names)].into_iter())
            .write();
        let path = dir.path().join(FILE_NAME);
        let bytes = std::fs::read(&path).unwrap();
        for cut in [1, HEADER.len() + 3, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert_eq!(Cache::load(dir.path()).len(), 0, "cut at {cut}");
        }
        let mut bad_kind = bytes.clone();
        let last_name = bytes.len() - (1 + 2 + 4);
        bad_kind[last_name] = 9;
        std::fs::write(&path, &bad_kind).unwrap();
        assert_eq!(Cache::load(dir.path()).len(), 0);
    }

    /// A temporary cache file that a killed run left behind is removed by
    /// a later run once it is old; a recent one (another run's, being
    /// written) and other files are left alone.
    #[test]
    fn old_temporary_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, age_secs: u64| {
            let path = dir.path().join(name);
            std::fs::write(&path, b"x").unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
            path
        };
        let stale = write("clada-untracked.abc123", 2 * 3600);
        let recent = write("clada-untracked.def456", 60);
        let cache = write(FILE_NAME, 2 * 3600);
        let other = write("clada-untracked-notes.old", 2 * 3600);
        let next = Next::start(dir.path()).unwrap();
        assert!(!stale.exists(), "left behind by a killed run");
        assert!(recent.exists(), "maybe another run's");
        assert!(cache.exists() && other.exists());
        assert!(next.file.path().exists(), "this run's own");
    }

    /// Names out of order (as a cache of format 1 kept them) would make
    /// the merge with the index miss: such a file is not used.
    #[test]
    fn a_cache_with_unsorted_names_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let write = |names: Vec<(&[u8], Kind)>| {
            let names = Names::Read(names.into_iter().map(|(n, k)| (n.to_vec(), k)).collect());
            let next = Next::start(dir.path()).unwrap();
            next.finish([(&b"src"[..], stat(1_000), &names)].into_iter())
                .write();
            Cache::load(dir.path()).len()
        };
        assert_eq!(write(vec![(b"a", Kind::File), (b"b", Kind::Dir)]), 1);
        assert_eq!(write(vec![(b"b", Kind::File), (b"a", Kind::Dir)]), 0);
        assert_eq!(write(vec![(b"a", Kind::File), (b"a", Kind::Dir)]), 0);
        let path = dir.path().join(FILE_NAME);
        write(vec![(b"a", Kind::File)]);
        let mut old_format = std::fs::read(&path).unwrap();
        old_format[HEADER.len() - 2] = b'1';
        std::fs::write(&path, &old_format).unwrap();
        assert_eq!(Cache::load(dir.path()).len(), 0);
    }
}
