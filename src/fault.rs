//! Fault injection for the crash-safety and race tests.
//!
//! In debug builds, `CLADA_FAULT=<point>` aborts the process at that named
//! point of the apply transaction, the way a crash or `kill -9` would, and
//! `CLADA_PAUSE=<point>:<path>` stops there: it creates `<path>.reached`
//! and waits (up to 60 s) for `<path>.go` to exist, so a test can act at
//! that moment (move the branch, edit a file). In release builds this
//! compiles to nothing.

/// Aborts here if `CLADA_FAULT` names `point` (debug builds only).
#[inline]
pub fn point(point: &str) {
    #[cfg(debug_assertions)]
    {
        if std::env::var("CLADA_FAULT").is_ok_and(|p| p == point) {
            std::process::abort();
        }
        if let Ok(spec) = std::env::var("CLADA_PAUSE")
            && let Some((at, path)) = spec.split_once(':')
            && at == point
        {
            let _ = std::fs::write(format!("{path}.reached"), b"");
            let go = std::path::PathBuf::from(format!("{path}.go"));
            let start = std::time::Instant::now();
            while !go.exists() && start.elapsed() < std::time::Duration::from_secs(60) {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// Whether `CLADA_FAIL=<what>:<subject>` asks this operation to fail
/// (debug builds only): how the tests make a write fail where root could
/// write anything (a read-only directory does not stop root).
#[inline]
pub fn fails(what: &str, subject: &str) -> bool {
    #[cfg(debug_assertions)]
    {
        std::env::var("CLADA_FAIL").is_ok_and(|spec| {
            spec.split_once(':')
                .is_some_and(|(w, s)| w == what && s == subject)
        })
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = (what, subject);
        false
    }
}

/// Every fault point, in the order an apply reaches them. (post-receive
/// has three more: `hook-locked`, right after it has its branches' turn
/// (`git/queue.rs`), where the concurrency test pauses; `hook-noted`, after a request's result note,
/// and `hook-answered`, after its result reference, where the recovery
/// tests stop it. The first checkout of the scratch working tree has
/// `scratch-checked-out`, where the progress test pauses.)
pub const POINTS: &[&str] = &[
    "locked",
    "pre-committed",
    "post-committed",
    "journal-written",
    "branch-moved",
    "noted",
    "worktree-file",
    "index-written",
];

/// The fault points of the history commands (`undo`, `redo`, `squash`,
/// `step-back`, `step-forward`) and of the working-tree switch they share.
/// `locked` is reached by them too.
pub const HISTORY_POINTS: &[&str] = &[
    "undo-kept",
    "undo-moved",
    "redo-moved",
    "squash-kept",
    "step-saved",
    "step-moved",
    "step-restored",
    "switch-file",
    "switch-index-written",
];
