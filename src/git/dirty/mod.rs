//! The working tree side of the dirty check: which paths differ from the
//! index (modified, removed, type-changed, unmerged, intent-to-add) and
//! which untracked files are not ignored — what `git status` reports as
//! "not staged" and "untracked" with `-uall`, less nested repositories
//! (which git shows as `dir/` and the snapshot leaves out).
//!
//! Why not gix's status, which the snapshot used before: every apply pays
//! this check, and at 50,000 files gix's (0.90) took 85–98 ms where
//! `git status` takes ≈ 100 and the apply's whole budget is ≈ 80. This one
//! `lstat`s relative to an open worktree directory and splits the work
//! over the cores, lists each directory once, and sorts names against the
//! index in memory; see doc/performance.md for the measurements.
//!
//! It covers the common layout; anything else falls back to gix's status
//! (`worktree_changes` returns the index without changes): a
//! case-insensitive or symlink-less filesystem setting, submodules
//! (gitlink entries), sparse checkouts (skip-worktree entries, sparse
//! directories), a split index, or a worktree it cannot open.
//!
//! - `cache`: directory listings kept between runs (an untracked cache).
//! - `pass`: sharing the pass over the disk between threads.
//! - `sys`: `lstat` relative to a directory.
//! - `tracked`: one index entry against the disk (stat, then content).
//! - `untracked`: listing directories and sorting their names.

mod cache;
mod pass;
mod sys;
mod tracked;
mod untracked;

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

use foldhash::HashSet;

use gix::bstr::ByteSlice as _;
use gix::index::entry::{Flags, Mode};

use crate::git::GitError;
use sys::Root;
use tracked::{Rules, Verdict};
use untracked::{Candidate, Children, Listed, Lister, Sorter};

/// Below this many index entries the check runs on one thread: starting
/// threads costs more than it saves.
const PARALLEL_FROM: usize = 2_000;

/// What the check found.
pub(super) struct Changes {
    /// The paths of the working tree that differ from the index or are
    /// untracked and not ignored.
    pub paths: Paths,
    /// The listing cache to write, when it changed.
    pub cache: Option<cache::Write>,
}

/// Paths, split by whether their names are UTF-8: clada names paths as
/// strings, and leaves the others as they are (doc/architecture.md,
/// known limits).
#[derive(Debug, Default)]
pub(in crate::git) struct Paths {
    pub utf8: BTreeSet<String>,
    pub not_utf8: BTreeSet<Vec<u8>>,
}

impl Paths {
    pub fn add(&mut self, path: &[u8]) {
        match std::str::from_utf8(path) {
            Ok(path) => {
                self.utf8.insert(path.to_string());
            }
            Err(_) => {
                self.not_utf8.insert(path.to_vec());
            }
        }
    }
}

/// Reads the index with `read_index` and gives it back with the working
/// tree's changes against it; no changes (`None`) when the repository's
/// layout needs gix's status (see the module documentation).
///
/// The index is read while another thread opens the working tree and
/// loads the listing cache, which do not depend on it (about 4 and 2 ms
/// at 50,000 files).
pub(super) fn worktree_changes(
    repo: &gix::Repository,
    read_index: impl FnOnce() -> Result<gix::index::File, GitError>,
) -> Result<(gix::index::File, Option<Changes>), GitError> {
    let fail = |e: &dyn std::fmt::Display| GitError::op("compute the status", e);
    let Some(workdir) = repo.workdir() else {
        return Ok((read_index()?, None));
    };
    let caps = repo.filesystem_options().map_err(|e| fail(&e))?;
    if caps.ignore_case || caps.precompose_unicode || !caps.symlink {
        return Ok((read_index()?, None));
    }
    let stat = repo.stat_options().map_err(|e| fail(&e))?;
    let with_cache = cache_enabled(repo);
    let git_dir = repo.git_dir();
    let (index, disk) = std::thread::scope(|scope| {
        let open = move || Disk::open(workdir, git_dir, with_cache);
        let opening = std::thread::Builder::new()
            .name("clada-status-open".into())
            .spawn_scoped(scope, open);
        let index = read_index();
        let disk = match opening {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => open(),
        };
        (index, disk)
    });
    let index = index?;
    // A working tree that cannot be opened here is left to gix's status
    // too (which says what is wrong with it).
    let disk = match disk {
        Ok(disk) if supported(&index) => disk,
        _ => return Ok((index, None)),
    };
    let rules = Rules {
        stat,
        symlinks: caps.symlink,
        executable_bit: caps.executable_bit,
        index_time: {
            let t = index.timestamp();
            (t.unix_seconds(), t.nanoseconds())
        },
    };
    let changes = changes(repo, &index, workdir, &rules, disk)?;
    Ok((index, Some(changes)))
}

/// The working tree's side of the check, opened before the index is read.
struct Disk {
    root: Root,
    /// The next listing cache file, when the cache is used.
    next: Option<cache::Next>,
    /// The last one (empty when there was none).
    old: Option<cache::Cache>,
}

impl Disk {
    fn open(workdir: &Path, git_dir: &Path, with_cache: bool) -> Result<Disk, GitError> {
        let root = Root::open(workdir).map_err(|e| GitError::op("open the working tree", e))?;
        // The next cache file is started before anything is listed (see
        // `cache`); the old one is read only when a new one can be written.
        let next = (with_cache && !root.on_remote_filesystem())
            .then(|| cache::Next::start(git_dir))
            .flatten();
        let old = next.as_ref().map(|_| cache::Cache::load(git_dir));
        Ok(Disk { root, next, old })
    }
}

/// The check itself, for an index the check [supports](supported).
fn changes(
    repo: &gix::Repository,
    index: &gix::index::File,
    workdir: &Path,
    rules: &Rules,
    Disk { root, next, old }: Disk,
) -> Result<Changes, GitError> {
    let fail = |e: &dyn std::fmt::Display| GitError::op("compute the status", e);
    let lister = Lister {
        root: &root,
        workdir,
        cache: old.as_ref(),
    };

    let entries = index.entries();
    let paths: Vec<&[u8]> = entries.iter().map(|e| e.path(index).as_bytes()).collect();
    let threads = if entries.len() < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    };
    // The tests' repositories are small: they ask for threads here.
    #[cfg(test)]
    let threads = tests::THREADS.with(|t| t.get()).unwrap_or(threads);
    // One pass over entries and directories, shared by the threads.
    let done = pass::run(
        threads,
        pass::Work {
            entries: entries.len(),
            // In path order, not the table's: each directory's children
            // (which point into the index's paths) and its cached names
            // (the cache file is written in this order) are then read
            // where they lie in memory, one after the other (measured: 2
            // to 3 ms less at 50,000 files).
            prepare: || {
                let mut dirs: Vec<(&[u8], Children)> =
                    untracked::index_dirs(&paths).into_iter().collect();
                dirs.sort_unstable_by_key(|(dir, _)| *dir);
                dirs
            },
            check: |range: Range<usize>| {
                let mut verdicts = Vec::with_capacity(range.len());
                tracked::check(&root, rules, range.map(|i| (&entries[i], paths[i])), |v| {
                    verdicts.push(v)
                })?;
                Ok(verdicts)
            },
            list: |dirs: &Vec<(&[u8], Children)>, range: Range<usize>| {
                let mut listings = Vec::with_capacity(range.len());
                let mut candidates = Vec::new();
                for (dir, children) in &dirs[range] {
                    let listed = lister.list(dir)?;
                    if let Some(listed) = &listed {
                        untracked::candidates(dir, &listed.names, children, &mut candidates);
                    }
                    listings.push(listed);
                }
                Ok(Listings {
                    listings,
                    candidates,
                })
            },
            dir_count: |dirs: &Vec<(&[u8], Children)>| dirs.len(),
        },
    )?;

    let mut changed = Paths::default();
    let mut compare = Vec::new();
    let verdicts = done.checked.iter().flatten();
    for (i, verdict) in verdicts.enumerate() {
        match verdict {
            Verdict::Clean => {}
            Verdict::Dirty => changed.add(paths[i]),
            // A name that is not UTF-8 is only noted (it is not read).
            Verdict::Compare if paths[i].to_str().is_err() => changed.add(paths[i]),
            Verdict::Compare => compare.push(i),
        }
    }
    if !compare.is_empty() {
        let attributes = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .map_err(|e| fail(&e))?;
        let mut filters =
            gix::filter::Pipeline::new(repo, attributes.detach()).map_err(|e| fail(&e))?;
        for i in compare {
            let path = paths[i].to_str_lossy();
            if tracked::content_differs(workdir, &mut filters, index, &entries[i], &path)? {
                changed.add(paths[i]);
            }
        }
    }

    let mut sorter = Sorter::new(repo, index, &lister);
    // A directory that is not one any more (or is below one that is not:
    // its lstat went through a symbolic link) lists nothing.
    let listings: Vec<(&[u8], Option<&Listed>)> = done
        .dirs
        .iter()
        .map(|(dir, _)| *dir)
        .zip(
            done.listed
                .iter()
                .flat_map(|l| l.listings.iter().map(Option::as_ref)),
        )
        .collect();
    let mut gone: HashSet<&[u8]> = listings
        .iter()
        .filter(|(_, l)| l.is_none())
        .map(|(dir, _)| *dir)
        .collect();
    if !gone.is_empty() {
        let below_gone: Vec<&[u8]> = listings
            .iter()
            .filter(|(dir, l)| l.is_some() && ancestors(dir).any(|a| gone.contains(a)))
            .map(|(dir, _)| *dir)
            .collect();
        gone.extend(below_gone);
    }
    let listed = listings
        .iter()
        .filter_map(|(dir, l)| Some((*dir, (*l)?)))
        .filter(|(dir, _)| !gone.contains(dir));
    let candidates: Vec<&Candidate> = done.listed.iter().flat_map(|l| &l.candidates).collect();
    for candidate in candidates {
        if !gone.contains(candidate.dir.as_slice()) {
            sorter.candidate(candidate)?;
        }
    }
    // Entries below a directory that is no longer one are removed (the
    // stat pass may have reached them through a symbolic link).
    if !gone.is_empty() {
        for path in &paths {
            if ancestors(path).any(|dir| gone.contains(dir)) {
                changed.add(path);
            }
        }
    }
    for path in &sorter.found {
        changed.add(path);
    }
    let mut cache = None;
    if let Some(next) = next {
        let all: Vec<(&[u8], &Listed)> = listed
            .chain(sorter.walked.iter().map(|(dir, l)| (dir.as_slice(), l)))
            .collect();
        // Rewritten only when a directory was read or one went away.
        let reread = all
            .iter()
            .any(|(_, l)| matches!(l.names, cache::Names::Read(_)));
        if reread || old.as_ref().is_some_and(|c| c.len() != all.len()) {
            cache = Some(next.finish(all.into_iter().map(|(dir, l)| (dir, l.stat, &l.names))));
        }
    }
    Ok(Changes {
        paths: changed,
        cache,
    })
}

/// Whether this check handles every entry of `index`.
fn supported(index: &gix::index::State) -> bool {
    index.link().is_none()
        && !index.is_sparse()
        && index.entries().iter().all(|e| {
            !matches!(e.mode, Mode::COMMIT | Mode::DIR) && !e.flags.contains(Flags::SKIP_WORKTREE)
        })
}

/// What listing a range of directories found: a listing per directory
/// (`None`: not a directory), and the names the index does not account
/// for.
struct Listings<'c> {
    listings: Vec<Option<Listed<'c>>>,
    candidates: Vec<Candidate>,
}

/// The directories above `path`, innermost first (not "").
fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &path[..i])
}

/// Whether the listing cache may be used: git's `core.untrackedCache`
/// and clada's `clada.untrackedCache` both say when a filesystem does not
/// keep directory mtimes (unset means yes).
fn cache_enabled(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    ["core.untrackedCache", "clada.untrackedCache"]
        .iter()
        .all(|key| config.boolean(*key) != Some(false))
}

#[cfg(test)]
mod tests;
