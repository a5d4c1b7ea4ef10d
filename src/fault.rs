//! Fault injection for the crash-safety tests.
//!
//! In debug builds, `CLADA_FAULT=<point>` aborts the process at that named
//! point of the apply transaction, the way a crash or `kill -9` would. In
//! release builds this compiles to nothing.

/// Aborts here if `CLADA_FAULT` names `point` (debug builds only).
#[inline]
pub fn point(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("CLADA_FAULT").is_ok_and(|p| p == point) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// Every fault point, in the order an apply reaches them.
pub const POINTS: &[&str] = &[
    "locked",
    "pre-committed",
    "post-committed",
    "noted",
    "branch-moved",
    "journal-written",
    "worktree-file",
    "index-written",
];
