//! How the check's one pass over the disk is shared between threads.
//!
//! The pass has two parts: the index entries (an `lstat` each), then the
//! directories the index implies (an `lstat` each, and a listing when
//! the cache has none). The directories are worked out from the index's
//! paths first, which takes a few milliseconds at 50,000 files; the
//! calling thread does that while the other threads already check
//! entries, and joins them when it is done.
//!
//! Work is handed out in small chunks from shared counters (one for
//! entries, one for directories) rather than split up front, so that the
//! threads finish together however the costs fall (the calling thread
//! starts later, some directories are read rather than cached) and a
//! thread that cannot be started only means fewer hands.

use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::git::GitError;

/// Entries per chunk: about 0.3 ms of `lstat`s, small enough that the
/// threads finish within that of each other.
#[cfg(not(test))]
const ENTRY_CHUNK: usize = 256;
/// Directories per chunk.
#[cfg(not(test))]
const DIR_CHUNK: usize = 32;
// The tests' repositories are small: chunks of a few, so that their
// results are put back together from several threads.
#[cfg(test)]
const ENTRY_CHUNK: usize = 3;
#[cfg(test)]
const DIR_CHUNK: usize = 2;

/// The pass's results, each part in order.
pub(super) struct Done<D, A, B> {
    /// What `prepare` made.
    pub dirs: D,
    /// `check`'s results, in the order of their ranges.
    pub checked: Vec<A>,
    /// `list`'s results, in the order of their ranges.
    pub listed: Vec<B>,
}

/// The pass's work.
pub(super) struct Work<P, C, L, N> {
    /// The number of index entries.
    pub entries: usize,
    /// Makes the directory list, on the calling thread, while the others
    /// check entries.
    pub prepare: P,
    /// Checks a range of entries.
    pub check: C,
    /// Lists a range of the directories `prepare` made.
    pub list: L,
    /// How many directories `prepare` made.
    pub dir_count: N,
}

/// State the threads share.
struct Shared<D> {
    next_entries: AtomicUsize,
    next_dirs: AtomicUsize,
    /// Set once `prepare` is done; `None` when it did not finish (it
    /// panicked), so that nobody waits for it forever.
    dirs: OnceLock<Option<D>>,
    /// Set on the first error: the other threads stop taking chunks.
    failed: AtomicBool,
}

/// What one thread did: chunk numbers with their results.
type Share<A, B> = (Vec<(usize, A)>, Vec<(usize, B)>);

/// Runs `work` on up to `threads` threads (this one included).
pub(super) fn run<D, A, B, P, C, L, N>(
    threads: usize,
    work: Work<P, C, L, N>,
) -> Result<Done<D, A, B>, GitError>
where
    D: Send + Sync,
    A: Send,
    B: Send,
    P: FnOnce() -> D,
    C: Fn(Range<usize>) -> Result<A, GitError> + Sync,
    L: Fn(&D, Range<usize>) -> Result<B, GitError> + Sync,
    N: Fn(&D) -> usize + Sync,
{
    let Work {
        entries,
        prepare,
        check,
        list,
        dir_count,
    } = work;
    let shared = Shared {
        next_entries: AtomicUsize::new(0),
        next_dirs: AtomicUsize::new(0),
        dirs: OnceLock::new(),
        failed: AtomicBool::new(false),
    };
    let mut shares = std::thread::scope(|scope| {
        let take_share = || take_chunks(&shared, entries, &check, &list, &dir_count);
        let mut handles = Vec::with_capacity(threads.saturating_sub(1));
        for _ in 1..threads {
            let spawned = std::thread::Builder::new()
                .name("clada-status".into())
                .spawn_scoped(scope, take_share);
            match spawned {
                Ok(handle) => handles.push(handle),
                // Fewer threads take the chunks.
                Err(_) => break,
            }
        }
        {
            let _unblock = Unblock(&shared.dirs);
            let _ = shared.dirs.set(Some(prepare()));
        }
        let mut shares = vec![take_share()];
        for handle in handles {
            match handle.join() {
                Ok(share) => shares.push(share),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        shares
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let dirs = shared
        .dirs
        .into_inner()
        .flatten()
        .expect("set before this thread took chunks");
    let mut checked: Vec<(usize, A)> = Vec::new();
    let mut listed: Vec<(usize, B)> = Vec::new();
    for (c, l) in shares.iter_mut() {
        checked.append(c);
        listed.append(l);
    }
    checked.sort_unstable_by_key(|(chunk, _)| *chunk);
    listed.sort_unstable_by_key(|(chunk, _)| *chunk);
    Ok(Done {
        dirs,
        checked: checked.into_iter().map(|(_, a)| a).collect(),
        listed: listed.into_iter().map(|(_, b)| b).collect(),
    })
}

/// Takes entry chunks until there are none, then directory chunks.
fn take_chunks<D, A, B>(
    shared: &Shared<D>,
    entries: usize,
    check: &impl Fn(Range<usize>) -> Result<A, GitError>,
    list: &impl Fn(&D, Range<usize>) -> Result<B, GitError>,
    dir_count: &impl Fn(&D) -> usize,
) -> Result<Share<A, B>, GitError> {
    // A panic here stops the others too (it is passed on when the thread
    // is joined).
    let _stop = StopOnPanic(&shared.failed);
    let mut checked = Vec::new();
    while let Some((chunk, range)) = next_chunk(shared, &shared.next_entries, ENTRY_CHUNK, entries)
    {
        checked.push((chunk, failing(shared, check(range))?));
    }
    let mut listed = Vec::new();
    let Some(dirs) = shared.dirs.wait() else {
        // `prepare` panicked; that thread reports it.
        return Ok((checked, listed));
    };
    let count = dir_count(dirs);
    while let Some((chunk, range)) = next_chunk(shared, &shared.next_dirs, DIR_CHUNK, count) {
        listed.push((chunk, failing(shared, list(dirs, range))?));
    }
    Ok((checked, listed))
}

/// The next chunk of `0..len` from `counter`, unless there is none or a
/// thread failed.
fn next_chunk<D>(
    shared: &Shared<D>,
    counter: &AtomicUsize,
    size: usize,
    len: usize,
) -> Option<(usize, Range<usize>)> {
    if shared.failed.load(Ordering::Relaxed) {
        return None;
    }
    let chunk = counter.fetch_add(1, Ordering::Relaxed);
    let start = chunk.checked_mul(size).filter(|s| *s < len)?;
    Some((chunk, start..len.min(start + size)))
}

/// `result`, telling the other threads to stop when it is an error.
fn failing<D, T>(shared: &Shared<D>, result: Result<T, GitError>) -> Result<T, GitError> {
    if result.is_err() {
        shared.failed.store(true, Ordering::Relaxed);
    }
    result
}

/// Tells the other threads to stop taking chunks when this one panics.
struct StopOnPanic<'s>(&'s AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Marks the directory list as never coming if it was not made (`prepare`
/// panicked), so that the threads waiting for it go on.
struct Unblock<'s, D>(&'s OnceLock<Option<D>>);

impl<D> Drop for Unblock<'_, D> {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry and directory is done once, and the results come back
    /// in order, whatever the number of threads.
    #[test]
    fn every_chunk_is_done_once_in_order() {
        for threads in [1, 2, 4] {
            for (entries, dirs) in [
                (0, 0),
                (1, 1),
                (ENTRY_CHUNK - 1, DIR_CHUNK - 1),
                (ENTRY_CHUNK, DIR_CHUNK),
                (10_000, 1_001),
            ] {
                let work = Work {
                    entries,
                    prepare: || (0..dirs).map(|d| d * 10).collect::<Vec<usize>>(),
                    check: |range: Range<usize>| Ok(range.collect::<Vec<usize>>()),
                    list: |dirs: &Vec<usize>, range: Range<usize>| Ok(dirs[range].to_vec()),
                    dir_count: |dirs: &Vec<usize>| dirs.len(),
                };
                let done = run(threads, work).unwrap();
                let checked: Vec<usize> = done.checked.into_iter().flatten().collect();
                assert_eq!(
                    checked,
                    (0..entries).collect::<Vec<_>>(),
                    "{threads} threads"
                );
                let listed: Vec<usize> = done.listed.into_iter().flatten().collect();
                assert_eq!(listed, done.dirs, "{threads} threads");
                assert_eq!(done.dirs.len(), dirs);
            }
        }
    }

    type TestDone = Done<Vec<usize>, usize, usize>;

    /// A pass on two threads whose chunk holding entry `10 * ENTRY_CHUNK`
    /// fails by `fail` (an error or a panic), the others being slow enough
    /// that the other thread cannot run through the rest before the
    /// failure is seen. Checks that the other thread stopped; the pass's
    /// outcome, a panic caught.
    fn with_a_failing_chunk(
        fail: impl Fn() -> Result<usize, GitError> + Sync,
    ) -> std::thread::Result<Result<TestDone, GitError>> {
        let taken = AtomicUsize::new(0);
        let w = Work {
            entries: 1_000_000,
            prepare: Vec::<usize>::new,
            check: |range: Range<usize>| {
                taken.fetch_add(1, Ordering::Relaxed);
                if range.contains(&(10 * ENTRY_CHUNK)) {
                    return fail();
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                Ok(range.len())
            },
            list: |_: &Vec<usize>, range: Range<usize>| Ok(range.len()),
            dir_count: |dirs: &Vec<usize>| dirs.len(),
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(2, w)));
        let chunks = 1_000_000 / ENTRY_CHUNK;
        assert!(taken.into_inner() < chunks / 2, "the pass went on");
        outcome
    }

    /// An error in a chunk is the pass's error, and the other threads
    /// stop taking chunks.
    #[test]
    fn an_error_stops_the_pass() {
        let outcome = with_a_failing_chunk(|| Err(GitError::op("check", "it failed")));
        let err = outcome.expect("no panic").err().expect("the error");
        assert!(err.to_string().contains("it failed"), "{err}");
    }

    /// A panic while the directories are made is the pass's panic, not a
    /// hang of the threads waiting for them.
    #[test]
    fn a_panic_in_prepare_does_not_hang_the_others() {
        let w = Work {
            entries: 100_000,
            prepare: || -> Vec<usize> { panic!("prepare failed") },
            check: |range: Range<usize>| Ok(range.len()),
            list: |_: &Vec<usize>, range: Range<usize>| Ok(range.len()),
            dir_count: |dirs: &Vec<usize>| dirs.len(),
        };
        // On a thread of its own, so that a hang fails the test.
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(2, w)));
            let _ = send.send(outcome.is_err());
        });
        let panicked = receive
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the pass ended");
        assert!(panicked);
    }

    /// A panic in a chunk stops the other threads, as an error does.
    #[test]
    fn a_panic_in_a_chunk_stops_the_others() {
        assert!(with_a_failing_chunk(|| panic!("a chunk failed")).is_err());
    }
}
