//! Tracked files: does each index entry still describe what is on disk?
//!
//! Git's rules, as gix's status applies them: an entry whose `lstat`
//! matches the stat data the index recorded (under `core.trustCTime`,
//! `core.checkStat`) and is not racy (modified no earlier than the index
//! was written) is unchanged without reading the file. Anything else is a
//! candidate whose content is hashed — through the repository's filters,
//! as `git add` would store it — and compared with the entry's blob.

use gix::index::entry::{Flags, Mode, Stage, Stat, mode::Change, stat};

use super::sys::{Meta, Root, c_path, is_gone};
use crate::git::GitError;

/// What the stat comparison says about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The entry describes the file on disk.
    Clean,
    /// The file differs (or is gone, or is of another type).
    Dirty,
    /// The stat data differs or is racy: compare the content.
    Compare,
}

/// Settings the comparison reads from the repository's configuration.
#[derive(Clone, Copy)]
pub(super) struct Rules {
    pub stat: stat::Options,
    pub symlinks: bool,
    pub executable_bit: bool,
    /// When the index file was written (seconds, nanoseconds): entries
    /// modified since are racy.
    pub index_time: (i64, u32),
}

/// Flags under which gix's status takes an entry as unchanged without
/// looking (in-memory "up to date", assume-unchanged, fsmonitor-valid).
const TRUSTED: Flags = Flags::UPTODATE
    .union(Flags::ASSUME_VALID)
    .union(Flags::FSMONITOR_VALID);

/// Compares `entries` (with their paths) with the disk.
pub(super) fn check<'a>(
    root: &Root,
    rules: &Rules,
    entries: impl Iterator<Item = (&'a gix::index::Entry, &'a [u8])>,
    mut verdict: impl FnMut(Verdict),
) -> Result<(), GitError> {
    let mut buf = Vec::with_capacity(256);
    for (entry, path) in entries {
        verdict(check_one(root, rules, entry, path, &mut buf)?);
    }
    Ok(())
}

fn check_one(
    root: &Root,
    rules: &Rules,
    entry: &gix::index::Entry,
    path: &[u8],
    buf: &mut Vec<u8>,
) -> Result<Verdict, GitError> {
    if entry.stage() != Stage::Unconflicted {
        return Ok(Verdict::Dirty);
    }
    if entry.flags.intersects(TRUSTED) {
        return Ok(Verdict::Clean);
    }
    // An intent-to-add entry always shows: as added, or as removed.
    if entry.flags.contains(Flags::INTENT_TO_ADD) {
        return Ok(Verdict::Dirty);
    }
    let Some(c) = c_path(buf, path) else {
        return Ok(Verdict::Dirty);
    };
    let meta = match root.lstat(c) {
        Ok(meta) => meta,
        // Nothing there (or a name too long to be): the entry is removed
        // from the working tree.
        Err(e) if is_gone(&e) || e.raw_os_error() == Some(libc::ENAMETOOLONG) => {
            return Ok(Verdict::Dirty);
        }
        Err(e) => {
            return Err(GitError::op(
                format!("read {}", String::from_utf8_lossy(path)),
                e,
            ));
        }
    };
    Ok(compare_stat(rules, &Recorded::of(entry), &meta))
}

/// What an index entry records about its file.
pub(super) struct Recorded<'a> {
    mode: Mode,
    stat: Stat,
    id: &'a gix::oid,
}

impl<'a> Recorded<'a> {
    fn of(entry: &'a gix::index::Entry) -> Recorded<'a> {
        Recorded {
            mode: entry.mode,
            stat: entry.stat,
            id: &entry.id,
        }
    }
}

/// The comparison of one entry with its `lstat`, as gix's status makes it.
pub(super) fn compare_stat(rules: &Rules, entry: &Recorded<'_>, meta: &Meta) -> Verdict {
    if meta.is_dir() {
        return Verdict::Dirty;
    }
    match entry.mode.change_to_match_fs_with_values(
        meta.is_file(),
        false,
        meta.is_symlink(),
        meta.is_executable(),
        rules.symlinks,
        rules.executable_bit,
    ) {
        Some(Change::Type { .. } | Change::ExecutableBit) => return Verdict::Dirty,
        None => {}
    }
    // A fifo, socket or device where a file was (possible with
    // `core.fileMode=false`, where the type test above is lenient): a
    // type change, and never opened (a fifo would block).
    if !meta.is_file() && !meta.is_symlink() {
        return Verdict::Dirty;
    }
    let disk = stat_of(meta);
    let unchanged = disk.matches(&entry.stat, rules.stat)
        // A recorded size of 0 for a blob that is not empty: git's mark
        // ("smudged") for an entry it found racy when writing the index,
        // which must be compared whatever the stat says
        // (`ce_match_stat_basic`).
        && (entry.stat.size != 0 || entry.id.is_empty_blob());
    if unchanged && !is_racy(&disk, rules) {
        Verdict::Clean
    } else {
        Verdict::Compare
    }
}

/// Whether `disk` was modified no earlier than the index was written, so
/// that a change in the same clock tick could hide behind equal stat data
/// (git's racy-git rule, as gix's `Stat::is_racy` states it).
fn is_racy(disk: &Stat, rules: &Rules) -> bool {
    let (secs, nsecs) = rules.index_time;
    match secs.cmp(&i64::from(disk.mtime.secs)) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Equal if rules.stat.use_nsec && rules.stat.check_stat => {
            nsecs <= disk.mtime.nsecs
        }
        std::cmp::Ordering::Equal => true,
        std::cmp::Ordering::Greater => false,
    }
}

/// Git's stat data (32-bit fields, truncated as git truncates them).
fn stat_of(meta: &Meta) -> Stat {
    Stat {
        mtime: time(meta.mtime),
        ctime: time(meta.ctime),
        dev: meta.dev as u32,
        ino: meta.ino as u32,
        uid: meta.uid,
        gid: meta.gid,
        size: meta.size as u32,
    }
}

fn time((secs, nsecs): (i64, u32)) -> stat::Time {
    stat::Time {
        // Before 1970 or after 2106: git stores such times as 0 too.
        secs: u32::try_from(secs).unwrap_or(0),
        nsecs,
    }
}

/// Whether the content at `path` (a candidate) differs from `entry`'s
/// blob, converting it as `git add` would.
pub(super) fn content_differs(
    workdir: &std::path::Path,
    filters: &mut gix::filter::Pipeline<'_>,
    index: &gix::index::State,
    entry: &gix::index::Entry,
    path: &str,
) -> Result<bool, GitError> {
    use std::io::Read as _;
    let full = workdir.join(path);
    let fail = |e: &dyn std::fmt::Display| GitError::op(format!("read {path}"), e);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(m) => m,
        // Gone since the stat pass.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(fail(&e)),
    };
    let mut data = Vec::new();
    if entry.mode == Mode::SYMLINK && meta.file_type().is_symlink() {
        let target = std::fs::read_link(&full).map_err(|e| fail(&e))?;
        data = target.into_os_string().into_encoded_bytes();
    } else {
        let file = std::fs::File::open(&full).map_err(|e| fail(&e))?;
        let mut converted = filters
            .convert_to_git(file, std::path::Path::new(path), index)
            .map_err(|e| fail(&e))?;
        converted.read_to_end(&mut data).map_err(|e| fail(&e))?;
    }
    let id = gix::objs::compute_hash(entry.id.kind(), gix::objs::Kind::Blob, &data)
        .map_err(|e| fail(&e))?;
    Ok(id != entry.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            stat: stat::Options {
                trust_ctime: true,
                check_stat: true,
                use_nsec: false,
                use_stdev: false,
            },
            symlinks: true,
            executable_bit: true,
            index_time: (2_000, 0),
        }
    }

    fn meta(mode: u32, size: u64, mtime: i64) -> Meta {
        Meta {
            mode,
            size,
            mtime: (mtime, 0),
            ctime: (mtime, 0),
            dev: 1,
            ino: 7,
            uid: 1000,
            gid: 1000,
        }
    }

    const ID: &[u8] = b"0123456789012345678901234567890123456789";

    fn entry(mode: Mode, size: u32, mtime: u32, id: &gix::oid) -> Recorded<'_> {
        let t = stat::Time {
            secs: mtime,
            nsecs: 0,
        };
        Recorded {
            stat: Stat {
                mtime: t,
                ctime: t,
                dev: 1,
                ino: 7,
                uid: 1000,
                gid: 1000,
                size,
            },
            id,
            mode,
        }
    }

    #[test]
    fn matching_stat_older_than_the_index_is_clean() {
        let id = gix::ObjectId::from_hex(ID).unwrap();
        let e = entry(Mode::FILE, 10, 1_000, &id);
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 10, 1_000)),
            Verdict::Clean
        );
    }

    #[test]
    fn racy_or_changed_stat_asks_for_the_content() {
        let id = gix::ObjectId::from_hex(ID).unwrap();
        let e = entry(Mode::FILE, 10, 2_000, &id);
        // Same second as the index: racy.
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 10, 2_000)),
            Verdict::Compare
        );
        let e = entry(Mode::FILE, 10, 1_000, &id);
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 11, 1_000)),
            Verdict::Compare
        );
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 10, 1_001)),
            Verdict::Compare
        );
    }

    #[test]
    fn a_smudged_entry_is_compared() {
        // Size 0 recorded for a non-empty blob: compare, whatever the stat.
        let id = gix::ObjectId::from_hex(ID).unwrap();
        let e = entry(Mode::FILE, 0, 1_000, &id);
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 0, 1_000)),
            Verdict::Compare
        );
        // An empty blob with size 0 is simply an empty file.
        let empty = gix::ObjectId::empty_blob(gix::hash::Kind::Sha1);
        let e = entry(Mode::FILE, 0, 1_000, &empty);
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100644, 0, 1_000)),
            Verdict::Clean
        );
    }

    #[test]
    fn a_fifo_where_a_file_was_is_dirty_even_without_file_modes() {
        let id = gix::ObjectId::from_hex(ID).unwrap();
        let e = entry(Mode::FILE, 0, 1_000, &id);
        let mut no_exec = rules();
        no_exec.executable_bit = false;
        assert_eq!(
            compare_stat(&no_exec, &e, &meta(0o010644, 0, 1_000)),
            Verdict::Dirty
        );
    }

    #[test]
    fn type_and_executable_bit_changes_are_dirty() {
        let id = gix::ObjectId::from_hex(ID).unwrap();
        let e = entry(Mode::FILE, 10, 1_000, &id);
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o100755, 10, 1_000)),
            Verdict::Dirty
        );
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o120777, 10, 1_000)),
            Verdict::Dirty
        );
        assert_eq!(
            compare_stat(&rules(), &e, &meta(0o040755, 10, 1_000)),
            Verdict::Dirty
        );
        let mut no_exec = rules();
        no_exec.executable_bit = false;
        assert_eq!(
            compare_stat(&no_exec, &e, &meta(0o100755, 10, 1_000)),
            Verdict::Clean
        );
    }
}
