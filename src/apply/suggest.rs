//! "Did you mean": the existing paths closest to one that does not exist
//! (issue 29: `todo/storage.py does not exist` when `todo/store.py` does).
//!
//! Owns the choice of candidates and their order; callers put the words
//! in their failure. Works on any [`Files`] store, so every syntax (each
//! edit, delete or move of a missing path) gets the same suggestions.

use crate::plan::RepoPath;

use super::files::{Entry, Files};

/// At most this many suggestions.
const MAX: usize = 3;

/// Paths listed at most: a suggestion is help, not worth minutes on a
/// tree of millions of files.
const MAX_LISTED: usize = 200_000;

/// Below this similarity a path is not offered.
const THRESHOLD: f64 = 0.6;

/// The existing files (and links) closest to `missing`, best first: the
/// same name in another letter case, the same file name in another
/// directory, then the closest by edit distance over the whole path.
/// Empty when none is close, or the store cannot list.
pub fn closest<F: Files>(files: &F, missing: &RepoPath) -> Vec<String> {
    let Ok(all) = files.list(&RepoPath::from_checked("")) else {
        return Vec::new();
    };
    let wanted = missing.as_str();
    let wanted_name = file_name(wanted);
    let mut scored: Vec<(f64, String)> = all
        .into_iter()
        .take(MAX_LISTED)
        .filter(|(_, entry)| matches!(entry, Entry::File | Entry::Link))
        .filter_map(|(path, _)| {
            let score = score(wanted, wanted_name, &path);
            (score >= THRESHOLD).then_some((score, path))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(MAX).map(|(_, p)| p).collect()
}

/// The hint line for `paths`, if any: "did you mean todo/store.py?".
pub fn did_you_mean(paths: &[String]) -> Option<String> {
    match paths {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        many => Some(format!("did you mean one of: {}?", many.join(", "))),
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn score(wanted: &str, wanted_name: &str, path: &str) -> f64 {
    if path.eq_ignore_ascii_case(wanted) {
        return 1.0;
    }
    let whole = strsim::normalized_levenshtein(wanted, path);
    // The right file in the wrong directory: its name alone says it.
    let name = file_name(path);
    let moved = if name == wanted_name { 0.9 } else { 0.0 };
    whole.max(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_and_moved_files_are_offered_far_ones_are_not() {
        let w = "todo/storage.py";
        let name = file_name(w);
        assert!(score(w, name, "todo/store.py") >= THRESHOLD);
        assert!(score(w, name, "src/storage.py") >= THRESHOLD);
        assert!(score(w, name, "README.md") < THRESHOLD);
        assert!(score(w, name, "TODO/Storage.py") > score(w, name, "todo/store.py"));
        assert_eq!(did_you_mean(&[]), None);
        assert_eq!(
            did_you_mean(&["a".to_string(), "b".to_string()]).as_deref(),
            Some("did you mean one of: a, b?")
        );
    }
}
