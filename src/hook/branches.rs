//! Which branches the server's hooks may write: `clada.serverBranches`.
//!
//! The hooks move branches with the repository's own rights, past any
//! branch protection a forge puts on pushes (doc/hooks.md). A server can
//! name the branches requests may write — glob patterns of short branch
//! names, `*` matching any run of characters (`/` included), `?` one, and
//! `[...]` a set — and a request for any other is refused. Unset, every
//! branch may be written, as before the setting existed.

/// The branches requests may write.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// The patterns as configured; empty: every branch.
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl Allowed {
    /// Every branch.
    pub fn all() -> Allowed {
        Allowed {
            patterns: Vec::new(),
            set: globset::GlobSet::empty(),
        }
    }

    /// The branches matching one of `patterns` (every branch when there
    /// is none); the reason when a pattern is not one.
    pub fn parse(patterns: Vec<String>) -> Result<Allowed, String> {
        let mut set = globset::GlobSetBuilder::new();
        for pattern in &patterns {
            let short = pattern.strip_prefix("refs/heads/").unwrap_or(pattern);
            let glob = globset::GlobBuilder::new(short)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("{pattern:?} is not a branch pattern: {}", e.kind()))?;
            set.add(glob);
        }
        let set = set
            .build()
            .map_err(|e| format!("the branch patterns cannot be used: {e}"))?;
        Ok(Allowed { patterns, set })
    }

    /// Whether requests may write `branch` (`refs/heads/…` or short).
    pub fn allows(&self, branch: &str) -> bool {
        let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
        self.patterns.is_empty() || self.set.is_match(short)
    }

    /// The patterns, for messages.
    pub fn describe(&self) -> String {
        self.patterns.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(patterns: &[&str]) -> Allowed {
        Allowed::parse(patterns.iter().map(|p| p.to_string()).collect()).unwrap()
    }

    #[test]
    fn patterns_name_the_branches_requests_may_write() {
        assert!(Allowed::all().allows("refs/heads/main"));
        assert!(allowed(&[]).allows("anything"));
        let agents = allowed(&["agents/*", "refs/heads/scratch"]);
        assert!(agents.allows("refs/heads/agents/a"));
        assert!(agents.allows("agents/a/b"), "* crosses /");
        assert!(agents.allows("scratch"));
        assert!(!agents.allows("refs/heads/main"));
        assert!(!agents.allows("agents"));
        assert!(!agents.allows("scratch2"));
        assert_eq!(agents.describe(), "agents/* refs/heads/scratch");
        let one = allowed(&["release-[0-9]"]);
        assert!(one.allows("release-1") && !one.allows("release-x"));
        let bad = Allowed::parse(vec!["a[".into()]).unwrap_err();
        assert!(bad.contains("\"a[\" is not a branch pattern"), "{bad}");
    }
}
