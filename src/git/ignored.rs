//! Files a reply un-ignored: never swept into a snapshot.
//!
//! A reply that rewrites `.gitignore` makes files that were ignored (an
//! `.env`, build output) untracked and not ignored; the next apply's
//! snapshot would then commit them into `pre`. The ignore rules that count
//! for such a file are those of the state before clada's commits changed
//! them: the newest commit on the first-parent line below HEAD that is not
//! one of clada's (`[clada:…]`). A new file in the snapshot that those
//! rules ignore is left out (and stays on disk, untouched); the report
//! says so.

use gix::bstr::ByteSlice as _;

use super::snapshot::{OnDisk, Snapshot};
use super::{GitError, ObjectId, Repository};

/// How far down the first-parent line clada's own commits are followed.
const MAX_CLADA_COMMITS: usize = 1000;

impl Repository {
    /// Leaves out of `snapshot` the new files that the ignore rules of the
    /// state before clada's commits on `base` ignore; returns their paths.
    pub fn leave_out_unignored(
        &self,
        snapshot: &mut Snapshot,
        base: Option<ObjectId>,
    ) -> Result<Vec<String>, GitError> {
        let Some(base) = base else {
            return Ok(Vec::new());
        };
        let new_files: Vec<&str> = snapshot
            .paths
            .iter()
            .filter(|(_, on_disk)| matches!(on_disk, OnDisk::Blob { .. }))
            .map(|(p, _)| p.as_str())
            .collect();
        if new_files.is_empty() {
            return Ok(Vec::new());
        }
        let Some(before) = self.before_clada(base)? else {
            return Ok(Vec::new());
        };
        let (base_tree, before_tree) = (self.tree_of(Some(base))?, self.tree_of(Some(before))?);
        let rules_changed = self
            .tree_changes(before_tree, base_tree)?
            .iter()
            .any(|c| c.path == ".gitignore" || c.path.ends_with("/.gitignore"));
        if !rules_changed {
            return Ok(Vec::new());
        }
        let mut left_out = Vec::new();
        for path in new_files {
            // Only files that are new to the base: a tracked file is the
            // user's to change, whatever the rules say.
            if self.file_in_tree(base_tree, path)?.is_some() {
                continue;
            }
            if self.ignored_in(before_tree, path)? {
                left_out.push(path.to_string());
            }
        }
        if !left_out.is_empty() {
            let mut files = self.files(snapshot.tree)?;
            for path in &left_out {
                files.forget(path);
            }
            snapshot.tree = files.write_tree()?;
            snapshot.paths.retain(|(p, _)| !left_out.contains(p));
        }
        Ok(left_out)
    }

    /// The newest commit on the first-parent line from `tip` that is not
    /// one of clada's; `None` when `tip` is not clada's (nothing changed
    /// the rules since) or there is none.
    fn before_clada(&self, tip: ObjectId) -> Result<Option<ObjectId>, GitError> {
        let mut id = tip;
        for step in 0..MAX_CLADA_COMMITS {
            let info = self.commit_info(id)?;
            if !info.message.starts_with("[clada:") {
                return Ok((step > 0).then_some(id));
            }
            match info.first_parent() {
                Some(parent) => id = parent,
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    /// Whether the `.gitignore` files of `tree` (the root's and those of
    /// the directories above `path`) ignore `path` or a directory above it.
    fn ignored_in(&self, tree: ObjectId, path: &str) -> Result<bool, GitError> {
        use gix::glob::pattern::Case;
        let mut search = gix::ignore::Search::default();
        let parts: Vec<&str> = path.split('/').collect();
        for depth in 0..parts.len() {
            let dir = parts[..depth].join("/");
            let file = if dir.is_empty() {
                ".gitignore".to_string()
            } else {
                format!("{dir}/.gitignore")
            };
            if let Some(bytes) = self.file_in_tree(tree, &file)? {
                let root = std::path::PathBuf::from(&dir);
                search
                    .add_patterns_buffer(
                        &bytes,
                        &file,
                        (!dir.is_empty()).then_some(root.as_path()),
                        Default::default(),
                    )
                    .map_err(|e| GitError::op(format!("read {file}"), e))?;
            }
        }
        // A directory that is ignored ignores everything below it.
        for depth in 1..=parts.len() {
            let prefix = parts[..depth].join("/");
            let is_dir = depth < parts.len();
            let found = search.pattern_matching_relative_path(
                prefix.as_bytes().as_bstr(),
                Some(is_dir),
                Case::Sensitive,
            );
            if found.is_some_and(|m| !m.pattern.is_negative()) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
