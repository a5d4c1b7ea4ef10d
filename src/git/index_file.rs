//! Writing the index file, fast: it is the one write of every apply whose
//! cost grows with the repository (5.5 MB for 50,000 files).
//!
//! The bytes are the ones gix's `File::write_to` produces (header, entries
//! as version 2 or 3, the TREE, sdir and EOIE extensions, SHA-1 trailer),
//! built three times faster and, from 2,000 entries, split over three
//! threads:
//!
//! - **this thread serialises** the entries with gix's own `Entry::write_to`
//!   straight into chunk buffers. gix's `State::write_to` goes through a
//!   counting writer that checks every one of the ~16 small writes per
//!   entry, and takes 4.5 ms at 50,000 entries against 0.9 ms this way;
//! - **a hashing thread** computes the trailer with the `sha1` crate
//!   (hardware-accelerated where the CPU can; gix's hasher detects
//!   collisions and is several times slower, and a trailer is a checksum);
//! - **a writing thread** writes the chunks and, on Linux, starts their
//!   writeback at once (`sync_file_range`). Otherwise ext4 does it when
//!   the lock file is renamed over the index (its `auto_da_alloc` rule for
//!   replace-by-rename) and the rename takes 5 ms at 50,000 entries on the
//!   critical path. On ext4 that is the same writeback, started earlier;
//!   elsewhere (XFS, `noauto_da_alloc`) it is writeback the kernel would
//!   have done a little later. Durability is the same either way.

use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::sync_channel;

use gix::index::entry::Flags;
use gix::index::extension;

use super::GitError;

/// The size of the pieces the index is serialised, hashed and written in;
/// small enough for the allocator to recycle them without new page faults.
const CHUNK: usize = 64 << 10;

/// How many chunks may wait for the hashing or the writing thread.
const QUEUE: usize = 16;

/// From this many entries the index is serialised, hashed and written on
/// three threads; below, on this one.
const THREADS_FROM: usize = 2_000;

/// Writes `index` into git's `index.lock`, to be committed by the caller.
pub(super) fn write_index_to_lock(
    index: &gix::index::State,
    lock: &mut gix::lock::File,
) -> Result<(), GitError> {
    use std::os::fd::AsRawFd as _;
    let fd = lock.with_mut(|file| Ok(file.as_raw_fd())).ok();
    write_index(index, lock, fd)
}

/// Writes `index` to `out` with its SHA-1 trailer. `fd`, the file
/// descriptor `out` writes to, is for starting the writeback early.
pub(super) fn write_index(
    index: &gix::index::State,
    out: &mut (impl Write + Send),
    fd: Option<std::os::fd::RawFd>,
) -> Result<(), GitError> {
    use sha1::Digest as _;
    let fail = |e: &dyn std::fmt::Display| GitError::op("write the index", e);
    // A small index is written in less time than two threads take to
    // start (every apply and push-reply update in a small repository).
    if index.entries().len() < THREADS_FROM {
        let mut hasher = sha1::Sha1::new();
        let mut chunks = Vec::new();
        serialise(index, |chunk| {
            hasher.update(&chunk);
            chunks.push(Arc::new(chunk));
            Ok(())
        })
        .map_err(|e| fail(&e))?;
        chunks.push(Arc::new(hasher.finalize().to_vec()));
        return write_chunks(chunks, out, fd).map_err(|e| fail(&e));
    }
    std::thread::scope(|scope| {
        let (to_hash, hash_rx) = sync_channel::<Arc<Vec<u8>>>(QUEUE);
        let (to_write, write_rx) = sync_channel::<Arc<Vec<u8>>>(QUEUE);
        let spawn = |name: &str| std::thread::Builder::new().name(name.into());
        let hasher = spawn("clada-index-hash")
            .spawn_scoped(scope, move || {
                let mut hasher = sha1::Sha1::new();
                for chunk in hash_rx {
                    hasher.update(&chunk[..]);
                }
                hasher.finalize()
            })
            .map_err(|e| fail(&e))?;
        let writer = spawn("clada-index-write")
            .spawn_scoped(scope, move || write_chunks(write_rx, out, fd))
            .map_err(|e| fail(&e))?;
        let serialised = serialise(index, |chunk| {
            let chunk = Arc::new(chunk);
            let stopped = || std::io::Error::other("the index writer stopped");
            to_hash.send(Arc::clone(&chunk)).map_err(|_| stopped())?;
            to_write.send(chunk).map_err(|_| stopped())
        });
        drop(to_hash);
        let digest = hasher
            .join()
            .map_err(|_| fail(&"the index hashing thread panicked"))?;
        // The trailer goes last; a writer that failed has dropped its end
        // and its own error says what went wrong.
        if serialised.is_ok() {
            let _ = to_write.send(Arc::new(digest.to_vec()));
        }
        drop(to_write);
        let written = writer
            .join()
            .map_err(|_| fail(&"the index writer thread panicked"))?;
        match (serialised, written) {
            (_, Err(e)) => Err(fail(&e)),
            (Err(e), Ok(())) => Err(fail(&e)),
            (Ok(()), Ok(())) => Ok(()),
        }
    })
}

/// Writes what arrives to `out`, starting the writeback of each piece.
/// Only whole pages are started before the end: a page under writeback
/// that the next write touches again would make that write wait on
/// devices that need stable pages.
fn write_chunks(
    chunks: impl IntoIterator<Item = Arc<Vec<u8>>>,
    out: &mut impl Write,
    fd: Option<std::os::fd::RawFd>,
) -> std::io::Result<()> {
    const PAGE: u64 = 4096;
    let (mut written, mut started) = (0u64, 0u64);
    for chunk in chunks {
        out.write_all(&chunk)?;
        written += chunk.len() as u64;
        let whole = written / PAGE * PAGE;
        if let Some(fd) = fd
            && whole > started
        {
            start_writeback(fd, started, whole - started);
            started = whole;
        }
    }
    out.flush()?;
    if let Some(fd) = fd
        && written > started
    {
        start_writeback(fd, started, written - started);
    }
    Ok(())
}

/// Asks the kernel to start writing `len` bytes at `offset` of `fd` to
/// disk, without waiting. Best effort: an error only means the rename
/// will do it.
#[cfg(target_os = "linux")]
fn start_writeback(fd: std::os::fd::RawFd, offset: u64, len: u64) {
    let (Ok(offset), Ok(len)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return;
    };
    // SAFETY: a plain system call on a descriptor the caller keeps open
    // while this runs (the index lock file, borrowed by the writer).
    unsafe {
        libc::sync_file_range(fd, offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_fd: std::os::fd::RawFd, _offset: u64, _len: u64) {}

/// Serialises `state` without its trailer, in gix's format and with gix's
/// choices (version 3 only when an entry needs extended flags, entries
/// marked for removal left out, EOIE after the other extensions), handing
/// over pieces of about [`CHUNK`] bytes.
fn serialise(
    state: &gix::index::State,
    mut emit: impl FnMut(Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let too_big = || std::io::Error::other("the index would be larger than 4 GB");
    let entries = state.entries();
    let version: u32 = if entries.iter().any(|e| e.flags.contains(Flags::EXTENDED)) {
        3
    } else {
        2
    };
    let kept = entries
        .iter()
        .filter(|e| !e.flags.contains(Flags::REMOVE))
        .count();
    let kept = u32::try_from(kept).map_err(|_| too_big())?;

    let mut buf = Vec::with_capacity(CHUNK + 4096);
    // Bytes handed over before `buf`.
    let mut before = 0usize;
    buf.extend_from_slice(b"DIRC");
    buf.extend_from_slice(&version.to_be_bytes());
    buf.extend_from_slice(&kept.to_be_bytes());
    let header = buf.len();
    for entry in entries {
        if entry.flags.contains(Flags::REMOVE) {
            continue;
        }
        entry.write_to(&mut buf, state)?;
        // Each entry is padded with NULs to a multiple of eight bytes
        // (counted from the first entry), after its NUL-ended path.
        match (before + buf.len() - header) % 8 {
            0 => {}
            n => buf.extend_from_slice(&[0u8; 8][n..]),
        }
        if buf.len() >= CHUNK {
            before += buf.len();
            emit(std::mem::replace(
                &mut buf,
                Vec::with_capacity(CHUNK + 4096),
            ))?;
        }
    }

    let to_extensions = before + buf.len();
    let mut toc: Vec<(extension::Signature, u32)> = Vec::new();
    let mut add = |buf: &mut Vec<u8>,
                   signature: extension::Signature,
                   write: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let start = buf.len();
        write(buf)?;
        let size = buf.len() - start - extension::MIN_SIZE;
        toc.push((signature, u32::try_from(size).map_err(|_| too_big())?));
        std::io::Result::Ok(())
    };
    if let Some(tree) = state.tree() {
        add(&mut buf, extension::tree::SIGNATURE, &|b| tree.write_to(b))?;
    }
    if state.is_sparse() {
        add(&mut buf, extension::sparse::SIGNATURE, &|b| {
            extension::sparse::write_to(b)
        })?;
    }
    if !entries.is_empty() && !toc.is_empty() {
        let offset = u32::try_from(to_extensions).map_err(|_| too_big())?;
        extension::end_of_index_entry::write_to(&mut buf, state.object_hash(), offset, toc)
            .map_err(std::io::Error::other)?;
    }
    if u32::try_from(before + buf.len()).is_err() {
        return Err(too_big());
    }
    emit(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gix::ObjectId;

    fn state(count: usize, extended: bool, removed: bool) -> gix::index::State {
        let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
        for n in 0..count {
            let path = format!("dir{}/some/longer/path/file-{n:06}.txt", n % 97);
            let id = ObjectId::from_bytes_or_panic(&[(n % 251) as u8; 20]);
            let mut flags = Flags::empty();
            if extended && n % 5 == 0 {
                flags |= Flags::INTENT_TO_ADD | Flags::EXTENDED;
            }
            if removed && n % 7 == 0 {
                flags |= Flags::REMOVE;
            }
            let stat = gix::index::entry::Stat {
                mtime: gix::index::entry::stat::Time {
                    secs: n as u32,
                    nsecs: 7,
                },
                size: n as u32,
                ..Default::default()
            };
            state.dangerously_push_entry(
                stat,
                id,
                flags,
                gix::index::entry::Mode::FILE,
                path.as_str().into(),
            );
        }
        state.sort_entries();
        state
    }

    fn gix_bytes(state: gix::index::State) -> Vec<u8> {
        let file = gix::index::File::from_state(state, "unused");
        let mut theirs = Vec::new();
        file.write_to(&mut theirs, gix::index::write::Options::default())
            .unwrap();
        theirs
    }

    fn ours(state: &gix::index::State) -> Vec<u8> {
        let mut ours = Vec::new();
        write_index(state, &mut ours, None).unwrap();
        ours
    }

    /// The bytes are gix's own (whose trailer is the same SHA-1 computed
    /// another way): for an empty index, a tiny one and one of many
    /// chunks; with version 3 entries and entries marked for removal.
    #[test]
    fn the_index_written_is_the_one_gix_writes() {
        for (count, extended, removed) in [
            (0, false, false),
            (1, false, false),
            (3, true, false),
            // Several chunks, written without threads.
            (THREADS_FROM - 1, true, true),
            (40_000, false, false),
            (5_000, true, true),
        ] {
            let state = state(count, extended, removed);
            let ours = ours(&state);
            if count == 40_000 {
                assert!(ours.len() > 20 * CHUNK, "many chunks: {}", ours.len());
            }
            let theirs = gix_bytes(state);
            assert_eq!(ours.len(), theirs.len(), "{count} entries");
            assert!(ours == theirs, "{count} entries: the bytes differ");
        }
    }

    /// With the extensions gix writes: the cache-tree of an index git
    /// wrote, valid and then with invalidated nodes, followed by EOIE.
    #[test]
    fn extensions_are_written_as_gix_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let out = crate::git::test_git::command(dir.path(), args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        run(&["init", "-q"]);
        for path in ["a/x", "a/b/y", "c/z", "top"] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, path).unwrap();
        }
        // Pinned: a later git might default to version 4 or to EOIE.
        let pinned = [
            "-c",
            "index.version=2",
            "-c",
            "index.recordEndOfIndexEntries=false",
        ];
        run(&[&pinned[..], &["add", "."]].concat());
        run(&[&pinned[..], &["write-tree"]].concat());
        let path = dir.path().join(".git/index");
        let mut state =
            gix::index::File::at(&path, gix::hash::Kind::Sha1, false, Default::default())
                .unwrap()
                .into_parts()
                .0;
        let tree = state.tree().expect("git wrote a cache-tree");
        assert_eq!(tree.num_entries, Some(4));
        let bytes = ours(&state);
        // git wrote no EOIE: up to there, the bytes are git's own.
        let git = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(&git[..git.len() - 20]), "as git wrote it");
        for signature in [b"TREE", b"EOIE"] {
            assert!(bytes.windows(4).any(|w| w == signature));
        }
        assert!(bytes == gix_bytes(state.clone()));

        let root = state.tree_mut().unwrap();
        root.num_entries = None;
        root.children[0].num_entries = None;
        assert!(ours(&state) == gix_bytes(state.clone()), "invalidated");
    }

    /// A writer that fails is reported as the error, and the serialising
    /// side stops instead of waiting on it.
    #[test]
    fn a_failing_writer_is_reported() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("no space left"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        for count in [40_000, 10] {
            let err = write_index(&state(count, false, false), &mut Full, None).unwrap_err();
            assert!(err.to_string().contains("no space left"), "{err}");
        }
    }
}
