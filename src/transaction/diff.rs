//! The diff a `--dry-run` prints: the reply's changes as a patch that
//! `git apply` takes, from the state the reply applies to (the pre
//! snapshot: your working tree as it is) to the post tree.
//!
//! Written as `git diff` writes it: `new file mode` with `--- /dev/null`,
//! `deleted file mode` with `+++ /dev/null`, `old mode`/`new mode`, a
//! MOVE whose content did not change as `rename from`/`rename to`, and
//! `\ No newline at end of file`. Your own uncommitted work is not in it:
//! it is in your working tree already (the caller lists it apart).

use std::fmt::Write as _;

use crate::git::tree::Changed;

/// git's mode of a symbolic link.
const LINK: &str = "120000";
use crate::git::{ObjectId, Repository};

use super::Error;

/// The patch from tree `from` to tree `to`, whose differences are
/// `changes`.
pub(super) fn unified_diff(
    repo: &Repository,
    from: ObjectId,
    to: ObjectId,
    changes: &[Changed],
) -> Result<String, Error> {
    let mut out = String::new();
    // A deletion and an addition of the same content and mode: a rename.
    let mut renamed: Vec<(&Changed, &Changed)> = Vec::new();
    let mut rest: Vec<&Changed> = Vec::new();
    for c in changes {
        let pair = match (c.before, c.after) {
            (None, Some((id, kind))) => changes
                .iter()
                .find(|d| {
                    d.after.is_none()
                        && d.before == Some((id, kind))
                        && !renamed.iter().any(|(gone, _)| gone.path == d.path)
                })
                .map(|gone| (gone, c)),
            _ => None,
        };
        match pair {
            Some(pair) => renamed.push(pair),
            None => rest.push(c),
        }
    }
    rest.retain(|c| !renamed.iter().any(|(gone, _)| gone.path == c.path));
    let mut entries: Vec<(&str, Entry<'_>)> = rest
        .into_iter()
        .map(|c| (c.path.as_str(), Entry::Change(c)))
        .chain(
            renamed
                .into_iter()
                .map(|(gone, new)| (new.path.as_str(), Entry::Rename(gone, new))),
        )
        .collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (_, entry) in entries {
        match entry {
            Entry::Rename(gone, new) => {
                let (a, b) = (gone.path.as_str(), new.path.as_str());
                let _ = write!(
                    out,
                    "diff --git {} {}\nsimilarity index 100%\nrename from {}\nrename to {}\n",
                    name("a/", a),
                    name("b/", b),
                    name("", a),
                    name("", b)
                );
            }
            Entry::Change(c) => change(repo, from, to, c, &mut out)?,
        }
    }
    Ok(out)
}

enum Entry<'c> {
    Change(&'c Changed),
    /// The path that went, and the one that came with the same content.
    Rename(&'c Changed, &'c Changed),
}

fn change(
    repo: &Repository,
    from: ObjectId,
    to: ObjectId,
    c: &Changed,
    out: &mut String,
) -> Result<(), Error> {
    let path = c.path.as_str();
    // A file that became a symbolic link (or the other way) is two
    // sections, as git writes it: `git apply` refuses a mode change
    // between types.
    if let (Some(was), Some(is)) = c.modes()
        && (was == LINK) != (is == LINK)
    {
        let gone = Changed {
            path: c.path.clone(),
            before: c.before,
            after: None,
        };
        let came = Changed {
            path: c.path.clone(),
            before: None,
            after: c.after,
        };
        change(repo, from, to, &gone, out)?;
        return change(repo, from, to, &came, out);
    }
    let short = |side: Option<(ObjectId, _)>| {
        side.map_or_else(|| "0000000".to_string(), |(id, _)| repo.short(id))
    };
    let (old_mode, new_mode) = c.modes();
    let _ = writeln!(out, "diff --git {} {}", name("a/", path), name("b/", path));
    let index = format!("index {}..{}", short(c.before), short(c.after));
    match (old_mode, new_mode) {
        (None, Some(mode)) => {
            let _ = write!(out, "new file mode {mode}\n{index}\n");
        }
        (Some(mode), None) => {
            let _ = write!(out, "deleted file mode {mode}\n{index}\n");
        }
        (Some(old), Some(new)) if old != new => {
            let _ = write!(out, "old mode {old}\nnew mode {new}\n");
            if c.before.map(|b| b.0) != c.after.map(|a| a.0) {
                let _ = writeln!(out, "{index}");
            }
        }
        (Some(mode), Some(_)) => {
            let _ = writeln!(out, "{index} {mode}");
        }
        (None, None) => {}
    }
    if c.before.map(|b| b.0) == c.after.map(|a| a.0) {
        return Ok(());
    }
    let old = read(repo, from, path, c.before.is_some())?;
    let new = read(repo, to, path, c.after.is_some())?;
    let (Ok(a), Ok(b)) = (std::str::from_utf8(&old), std::str::from_utf8(&new)) else {
        let _ = writeln!(
            out,
            "Binary files {} and {} differ",
            name("a/", path),
            name("b/", path)
        );
        return Ok(());
    };
    let (a_name, b_name) = (
        if c.before.is_some() {
            name("a/", path)
        } else {
            "/dev/null".to_string()
        },
        if c.after.is_some() {
            name("b/", path)
        } else {
            "/dev/null".to_string()
        },
    );
    if a.is_empty() && b.is_empty() {
        return Ok(());
    }
    let _ = write!(out, "--- {a_name}\n+++ {b_name}\n");
    // Lines keep their own ends, so that a last line without one gets
    // git's `\ No newline at end of file` (without this, similar guesses
    // from the inputs and may add an end the file does not have).
    let diff = similar::TextDiff::configure()
        .newline_terminated(true)
        .diff_lines(a, b);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let _ = write!(out, "{hunk}");
    }
    Ok(())
}

/// `prefix` and `path` as a patch header names them: quoted as git quotes
/// a name holding a control character, `"` or `\` (a line end in a name
/// would otherwise end the header and start patch lines of its own).
fn name(prefix: &str, path: &str) -> String {
    let whole = format!("{prefix}{path}");
    match crate::quote::shown(&whole) {
        std::borrow::Cow::Borrowed(_) => whole,
        std::borrow::Cow::Owned(quoted) => quoted,
    }
}

/// The content at `path` in `tree` (a symbolic link's target), or nothing
/// when the path is not on that side.
fn read(repo: &Repository, tree: ObjectId, path: &str, there: bool) -> Result<Vec<u8>, Error> {
    if !there {
        return Ok(Vec::new());
    }
    Ok(repo.entry_content(tree, path)?.unwrap_or_default())
}
