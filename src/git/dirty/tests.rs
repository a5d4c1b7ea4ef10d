//! The dirty check against `git status` itself, on generated working
//! trees: every path git reports as not staged or untracked (`-uall`),
//! and no other. Each case checks twice — with every directory's mtime
//! set in the past, so that the second check takes unchanged directories
//! from the listing cache the first one wrote — and the cache must not
//! hide what changed in between.
//!
//! `CLADA_DIRTY_CASES=N` runs more cases than the default.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;

use crate::git::test_git::command;

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    command(dir, args).output().expect("run git")
}

/// A change's `git` call: it may fail (the directory may be a file by
/// now), as the change it stands for may.
fn git_may_fail(dir: &Path, args: &[&str]) {
    let _ = command(dir, args).output();
}

/// Paths `git status` shows in the worktree column (unstaged changes,
/// untracked files), without nested repositories (`dir/`).
fn git_worktree_paths(dir: &Path) -> BTreeSet<String> {
    let out = git(
        dir,
        &[
            "-c",
            "status.renames=false",
            "status",
            "--porcelain=v1",
            "-z",
            "-uall",
        ],
    );
    assert!(
        out.status.success(),
        "git status: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == 0)
        .filter(|rec| rec.len() > 3 && rec[1] != b' ')
        .map(|rec| String::from_utf8_lossy(&rec[3..]).into_owned())
        .filter(|p| !p.ends_with('/'))
        .collect()
}

thread_local! {
    /// How many threads the pass uses, when a test says (`None`: as in a
    /// real run, one for a repository this small).
    pub(super) static THREADS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The check's paths, on one thread and then on three (which take the
/// entries and directories in chunks): both must give the same answer.
fn ours(dir: &Path) -> BTreeSet<String> {
    let one = ours_on(dir, None);
    let three = ours_on(dir, Some(3));
    assert_eq!(one, three, "one thread against three");
    one
}

fn ours_on(dir: &Path, threads: Option<usize>) -> BTreeSet<String> {
    THREADS.with(|t| t.set(threads));
    // Directories are made old by their mtime alone (see `backdate_dirs`):
    // the cache trusts their listings whatever the ctime says.
    super::cache::TEST_MARGIN.with(|m| m.set(-3_600));
    let repo = gix::open_opts(dir, gix::open::Options::isolated()).expect("open");
    let read_index = || {
        Ok(gix::index::File::at_or_default(
            repo.index_path(),
            repo.object_hash(),
            false,
            Default::default(),
        )
        .expect("index"))
    };
    let changes = super::worktree_changes(&repo, read_index)
        .expect("dirty check")
        .1
        .expect("a layout the fast check handles");
    if let Some(cache) = changes.cache {
        cache.write();
    }
    // Compared as `git_worktree_paths` reads git's: names that are not
    // UTF-8 lossily.
    let mut paths = changes.paths.utf8;
    paths.extend(
        changes
            .paths
            .not_utf8
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
    );
    paths
}

/// Tracked files the base commit may have.
const TRACKED: &[&str] = &[
    "a",
    "b.txt",
    "d1/x",
    "d1/y.o",
    "d1/e/z",
    "d1/e/f/g",
    "d2/w",
    "d2/sub/q",
    "build/kept",
    // Around `d1/` in byte order: '-' sorts before '/', '0' after it.
    "d1-x",
    "d10/k",
];
/// Names untracked files may get.
const NEW: &[&str] = &[
    "n1",
    "d1/n2",
    "d1/e/n3",
    "d3/n4",
    "d3/deep/n5",
    "build/out",
    "d1/gen.o",
    "d2/build/x",
    "x.o",
    "d1/e/f/new",
    "d1-y",
    "d1/été",
    "d1/A",
    "d10/m",
];
const DIRS: &[&str] = &["d1", "d1/e", "d2", "d2/sub", "d1/e/f"];

#[derive(Debug, Clone)]
enum Change {
    Edit(usize, bool),
    Remove(usize),
    Chmod(usize),
    ToSymlink(usize),
    ToDir(usize),
    Untracked(usize),
    /// A repository (`git init`), or only something like one.
    NestedRepo(usize, bool),
    /// A `.git` file naming a git dir (as a submodule's does), or naming
    /// nothing that is one.
    GitFile(usize, bool),
    RemoveDir(usize),
    DirToFile(usize),
    DirToSymlink(usize),
    Stage(usize),
    IntentToAdd(usize),
}

fn change() -> impl Strategy<Value = Change> {
    let t = 0..TRACKED.len();
    let n = 0..NEW.len();
    let d = 0..DIRS.len();
    prop_oneof![
        (t.clone(), any::<bool>()).prop_map(|(i, same)| Change::Edit(i, same)),
        t.clone().prop_map(Change::Remove),
        t.clone().prop_map(Change::Chmod),
        t.clone().prop_map(Change::ToSymlink),
        t.clone().prop_map(Change::ToDir),
        n.clone().prop_map(Change::Untracked),
        n.clone().prop_map(Change::Untracked),
        (n.clone(), any::<bool>()).prop_map(|(i, real)| Change::NestedRepo(i, real)),
        (n.clone(), any::<bool>()).prop_map(|(i, real)| Change::GitFile(i, real)),
        d.clone().prop_map(Change::RemoveDir),
        d.clone().prop_map(Change::DirToFile),
        d.prop_map(Change::DirToSymlink),
        t.prop_map(Change::Stage),
        n.prop_map(Change::IntentToAdd),
    ]
}

fn write(dir: &Path, path: &str, content: &str) {
    let full = dir.join(path);
    if let Some(parent) = full.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = std::fs::write(full, content);
}

fn remove(full: &Path) {
    match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(full);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(full);
        }
        Err(_) => {}
    }
}

fn apply(dir: &Path, change: &Change) {
    use std::os::unix::fs::PermissionsExt as _;
    match *change {
        Change::Edit(i, same_size) => {
            // The base content is the path and a newline; the same size
            // leaves only mtime and the racy rule to tell.
            let text = if same_size {
                format!("{}\n", "X".repeat(TRACKED[i].len()))
            } else {
                "changed, and longer than before\n".to_string()
            };
            write(dir, TRACKED[i], &text);
        }
        Change::Remove(i) => remove(&dir.join(TRACKED[i])),
        Change::Chmod(i) => {
            let full = dir.join(TRACKED[i]);
            if let Ok(m) = std::fs::symlink_metadata(&full)
                && m.is_file()
            {
                let mode = m.permissions().mode() ^ 0o111;
                let _ = std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode));
            }
        }
        Change::ToSymlink(i) => {
            let full = dir.join(TRACKED[i]);
            remove(&full);
            let _ = std::os::unix::fs::symlink("target", full);
        }
        Change::ToDir(i) => {
            remove(&dir.join(TRACKED[i]));
            write(dir, &format!("{}/inside", TRACKED[i]), "inside\n");
        }
        Change::Untracked(i) => write(dir, NEW[i], "new\n"),
        Change::NestedRepo(i, real) => {
            let repo = dir.join(NEW[i]);
            remove(&repo);
            let _ = std::fs::create_dir_all(repo.join(".git"));
            if real {
                git_may_fail(&repo, &["init", "-q"]);
            } else {
                let _ = std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n");
            }
            let _ = std::fs::write(repo.join("file"), "in the nested repository\n");
        }
        Change::GitFile(i, real) => {
            let linked = dir.join(NEW[i]);
            remove(&linked);
            let _ = std::fs::create_dir_all(&linked);
            let depth = NEW[i].split('/').count();
            let target = if real {
                // A bare repository in the git dir, as submodules keep.
                let name = format!("modules/m{i}");
                git_may_fail(dir, &["init", "-q", "--bare", &format!(".git/{name}")]);
                format!("{}.git/{name}", "../".repeat(depth))
            } else {
                "../no-such-git-dir".to_string()
            };
            let _ = std::fs::write(linked.join(".git"), format!("gitdir: {target}\n"));
            let _ = std::fs::write(linked.join("file"), "beside a .git file\n");
        }
        Change::RemoveDir(i) => remove(&dir.join(DIRS[i])),
        Change::DirToFile(i) => {
            remove(&dir.join(DIRS[i]));
            write(dir, DIRS[i], "now a file\n");
        }
        Change::DirToSymlink(i) => {
            remove(&dir.join(DIRS[i]));
            let _ = std::fs::create_dir_all(dir.join("elsewhere"));
            let _ = std::os::unix::fs::symlink("elsewhere", dir.join(DIRS[i]));
        }
        Change::Stage(i) => {
            git_may_fail(dir, &["add", "-A", "--", TRACKED[i]]);
        }
        Change::IntentToAdd(i) => {
            write(dir, NEW[i], "new\n");
            git_may_fail(dir, &["add", "-N", "--", NEW[i]]);
        }
    }
}

/// Sets every directory's mtime (not `.git`'s) ten seconds back, so that
/// any later change to a directory moves its mtime for sure.
fn backdate_dirs(dir: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                if e.file_name() != ".git" && e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
        if let Ok(f) = std::fs::File::open(&d) {
            let _ = f.set_modified(past);
        }
    }
}

fn case(base: &[bool], ignore: bool, first: &[Change], second: &[Change]) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    assert!(git(dir, &["init", "-q", "-b", "main"]).status.success());
    for (path, keep) in TRACKED.iter().zip(base) {
        if *keep {
            write(dir, path, &format!("{path}\n"));
        }
    }
    if ignore {
        write(dir, ".gitignore", "*.o\nbuild/\n");
        write(dir, "d1/.gitignore", "!gen.o\n");
    }
    write(dir, "always", "so the commit is never empty\n");
    assert!(git(dir, &["add", "-A", "-f"]).status.success());
    assert!(git(dir, &["commit", "-q", "-m", "base"]).status.success());
    for c in first {
        apply(dir, c);
    }
    backdate_dirs(dir);
    let (got, want) = (ours(dir), git_worktree_paths(dir));
    assert_eq!(got, want, "after {first:?}");
    for c in second {
        apply(dir, c);
    }
    let (got, want) = (ours(dir), git_worktree_paths(dir));
    assert_eq!(got, want, "after {first:?} then {second:?}");
}

fn cases() -> u32 {
    std::env::var("CLADA_DIRTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_dirty_check_agrees_with_git_status(
        base in proptest::collection::vec(any::<bool>(), TRACKED.len()),
        ignore in any::<bool>(),
        first in proptest::collection::vec(change(), 0..6),
        second in proptest::collection::vec(change(), 0..6),
    ) {
        case(&base, ignore, &first, &second);
    }
}

#[test]
fn the_cache_is_used_for_unchanged_directories() {
    // The listing of an unchanged directory comes from the cache.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    assert!(git(dir, &["init", "-q", "-b", "main"]).status.success());
    write(dir, "d/precious", "t\n");
    assert!(git(dir, &["add", "-A"]).status.success());
    assert!(git(dir, &["commit", "-q", "-m", "base"]).status.success());
    backdate_dirs(dir);
    assert_eq!(ours(dir), BTreeSet::new());
    assert!(dir.join(".git").join(super::cache::FILE_NAME).is_file());
    // Rename the cached name in the cache file (same length): the check
    // then reports a file that is on disk under another name.
    let file = dir.join(".git").join(super::cache::FILE_NAME);
    let bytes = std::fs::read(&file).unwrap();
    let at = bytes
        .windows(8)
        .position(|w| w == b"precious")
        .expect("d's listing is cached");
    let mut edited = bytes.clone();
    edited[at..at + 8].copy_from_slice(b"preciouX");
    std::fs::write(&file, &edited).unwrap();
    assert_eq!(ours(dir), BTreeSet::from(["d/preciouX".to_string()]));
    // The same with the cache turned off, as git's own setting allows.
    assert!(
        git(dir, &["config", "core.untrackedCache", "false"])
            .status
            .success()
    );
    assert_eq!(ours(dir), BTreeSet::new());
}

#[test]
fn a_submodule_falls_back_to_gix() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    assert!(git(dir, &["init", "-q", "-b", "main"]).status.success());
    write(dir, "f", "f\n");
    assert!(git(dir, &["add", "f"]).status.success());
    let id = "0123456789012345678901234567890123456789";
    let cacheinfo = format!("160000,{id},sub");
    assert!(
        git(dir, &["update-index", "--add", "--cacheinfo", &cacheinfo])
            .status
            .success()
    );
    let repo = gix::open_opts(dir, gix::open::Options::isolated()).expect("open");
    let read_index = || Ok(repo.open_index().expect("index"));
    assert!(
        super::worktree_changes(&repo, read_index)
            .unwrap()
            .1
            .is_none()
    );
}
