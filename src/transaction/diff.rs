//! The diff a `--dry-run` prints.

use crate::git::{ObjectId, Repository};

use super::Error;

/// Unified diff of `paths` between two trees.
pub(super) fn unified_diff(
    repo: &Repository,
    from: ObjectId,
    to: ObjectId,
    paths: &[String],
) -> Result<String, Error> {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        if !seen.insert(path) {
            continue;
        }
        let old = repo.file_in_tree(from, path)?;
        let new = repo.file_in_tree(to, path)?;
        if old == new {
            continue;
        }
        let (a, b) = (old.unwrap_or_default(), new.unwrap_or_default());
        let (Ok(a), Ok(b)) = (std::str::from_utf8(&a), std::str::from_utf8(&b)) else {
            out.push_str(&format!("Binary file {path} differs\n"));
            continue;
        };
        let diff = similar::TextDiff::from_lines(a, b);
        out.push_str(&format!("diff --git a/{path} b/{path}\n"));
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string(),
        );
    }
    Ok(out)
}
