//! The undo stack: every undone apply is kept at `refs/clada/undo/<n>`,
//! pointing at its post commit (so its pre snapshot, reply note and result
//! stay reachable).
//!
//! The stack is read from the graph rather than stored beside it: an entry
//! can be redone when its apply's base is where the branch is now, and the
//! newest such entry (highest `<n>`) is the one redo takes. After it, the
//! next one is the newest entry whose base is the apply just redone, and so
//! on. A new apply or commit moves the branch, so older entries no longer
//! match and redo has nothing to do, as in any editor; the entries stay,
//! and their replies can still be applied again by hand.

use crate::git::{GitError, ObjectId, Repository};

use super::commits::{Kind, Unit, unit_at};

/// Where undone applies are kept.
pub const PREFIX: &str = "refs/clada/undo/";

/// One undone apply.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The full reference name.
    pub name: String,
    pub n: u64,
    pub unit: Unit,
}

/// Every entry, highest number first. A reference that does not point at
/// an apply's post commit is skipped.
pub fn entries(repo: &Repository) -> Result<Vec<Entry>, GitError> {
    let mut out = Vec::new();
    for name in repo.refs_under(PREFIX)? {
        let Some(n) = name
            .strip_prefix(PREFIX)
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let Some(id) = repo.ref_target(&name)? else {
            continue;
        };
        if let Some(unit) = unit_at(repo, id)?
            && unit.kind() == Kind::Post
        {
            out.push(Entry { name, n, unit });
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse(e.n));
    Ok(out)
}

/// The entries redo would take from the branch at `tip`, next first.
pub fn redo_chain(repo: &Repository, tip: Option<ObjectId>) -> Result<Vec<Entry>, GitError> {
    let mut all = entries(repo)?;
    let mut chain = Vec::new();
    let mut at = tip;
    while let Some(i) = all.iter().position(|e| e.unit.base == at) {
        let entry = all.remove(i);
        at = Some(entry.unit.top.id);
        chain.push(entry);
    }
    Ok(chain)
}
