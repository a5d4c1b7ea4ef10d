//! Which commands may run without asking (apply.md §6).
//!
//! Owns the built-in allowlist — read-only commands, read-only git, and
//! `mv rm cp mkdir touch` whose every path stays inside the working tree
//! and out of `.git`/`.clada` — and the approval store
//! `.clada/allowed-commands.json` (exact command lines). The store is read
//! from the repository state before the apply, never from the reply's own
//! changes: the caller passes its content in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::repo_path;

/// Where the approvals live, relative to the repository root.
pub const ALLOWED_COMMANDS: &str = ".clada/allowed-commands.json";

/// Commands that only read.
const READ_ONLY: &[&str] = &[
    "cat", "head", "tail", "grep", "find", "ls", "pwd", "tree", "wc", "diff", "file", "stat",
    "realpath", "xxd", "echo", "true", "false",
];

/// `find` actions that write or run something.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Read-only git subcommands.
const GIT_READ_ONLY: &[&str] = &["status", "diff", "log", "show", "ls-files", "branch"];

/// Options that make those git subcommands write.
const GIT_WRITING_OPTIONS: &[&str] = &[
    "--output",
    "-o",
    "--ext-diff",
    "--textconv",
    "-d",
    "-D",
    "--delete",
    "-m",
    "-M",
    "--move",
    "-c",
    "-C",
    "--copy",
    "--set-upstream-to",
    "-u",
    "--unset-upstream",
    "--edit-description",
    "--force",
    "-f",
    "--track",
    "-t",
];

/// Commands whose path arguments must stay inside the tree.
const PATH_COMMANDS: &[&str] = &["mv", "rm", "cp", "mkdir", "touch"];

/// The verdict on one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Built in, or approved in the store.
    Allowed,
    /// Needs the user's approval.
    NeedsApproval,
    /// Never: the reason says why.
    Refused(String),
}

/// The approval store's format: `{"commands": [...], "added": {cmd: time}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    #[serde(default)]
    pub commands: Vec<String>,
    #[serde(default)]
    pub added: BTreeMap<String, String>,
}

impl Approvals {
    /// Reads the store's JSON; a malformed store is an error, never ignored.
    pub fn parse(bytes: &[u8]) -> Result<Approvals, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("{ALLOWED_COMMANDS} is malformed: {e}"))
    }

    pub fn allows(&self, command_line: &str) -> bool {
        self.commands.iter().any(|c| c == command_line)
    }
}

/// Judges one command (its words and its line as written).
pub fn judge(words: &[String], line: &str, approvals: &Approvals) -> Verdict {
    let Some(program) = words.first() else {
        return Verdict::Refused("empty command".to_string());
    };
    if approvals.allows(line) {
        return Verdict::Allowed;
    }
    let args = &words[1..];
    let name = program.as_str();
    if READ_ONLY.contains(&name) {
        // find with an action that writes or runs things is not read-only.
        if name == "find" && args.iter().any(|a| FIND_ACTIONS.contains(&a.as_str())) {
            return Verdict::NeedsApproval;
        }
        return Verdict::Allowed;
    }
    if name == "git" {
        return judge_git(args);
    }
    if PATH_COMMANDS.contains(&name) {
        return judge_paths(name, args);
    }
    Verdict::NeedsApproval
}

fn judge_git(args: &[String]) -> Verdict {
    // Options before the subcommand (`-C dir`, `-c k=v`) change what git
    // reads or runs: not built in.
    let Some(sub) = args.first() else {
        return Verdict::NeedsApproval;
    };
    if !GIT_READ_ONLY.contains(&sub.as_str()) {
        return Verdict::NeedsApproval;
    }
    let writes = args[1..].iter().any(|a| {
        let key = a.split('=').next().unwrap_or(a);
        GIT_WRITING_OPTIONS.contains(&key)
    });
    if writes {
        return Verdict::NeedsApproval;
    }
    // `git branch NAME` creates a branch; only listing is read-only.
    if sub == "branch" && args[1..].iter().any(|a| !a.starts_with('-')) {
        return Verdict::NeedsApproval;
    }
    Verdict::Allowed
}

/// `mv rm cp mkdir touch`: every non-option argument is a path that must
/// resolve inside the working tree and outside `.git`/`.clada`.
fn judge_paths(name: &str, args: &[String]) -> Verdict {
    let mut options_done = false;
    for arg in args {
        if !options_done && arg == "--" {
            options_done = true;
            continue;
        }
        if !options_done && arg.starts_with('-') {
            // Options that take a path of their own (`-t DIR`,
            // `--target-directory=DIR`) would bypass the check.
            if arg.starts_with("--target-directory")
                || arg == "-t"
                || arg.starts_with("-S")
                || arg.starts_with("--suffix")
            {
                return Verdict::NeedsApproval;
            }
            continue;
        }
        if let Err(e) = repo_path(arg) {
            return Verdict::Refused(format!("{name} {arg}: {e}"));
        }
    }
    Verdict::Allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(line: &str) -> Verdict {
        let words = shell_words::split(line).unwrap();
        judge(&words, line, &Approvals::default())
    }

    #[test]
    fn read_only_commands_and_git_are_built_in() {
        for line in [
            "ls -la",
            "cat src/main.rs",
            "grep -rn foo .",
            "git status",
            "git log --oneline -3",
            "git diff HEAD~1",
            "git branch -a",
            "find . -name '*.rs'",
        ] {
            assert_eq!(verdict(line), Verdict::Allowed, "{line}");
        }
    }

    #[test]
    fn anything_that_writes_needs_approval() {
        for line in [
            "cargo test",
            "npm install",
            "git commit -m x",
            "git branch new",
            "git branch -D main",
            "git diff --output=x",
            "git -C .. status",
            "find . -delete",
            "find . -exec rm {} ;",
            "python3 x.py",
            "mv -t dir a",
        ] {
            assert_eq!(verdict(line), Verdict::NeedsApproval, "{line}");
        }
    }

    #[test]
    fn path_commands_stay_inside_the_tree() {
        assert_eq!(verdict("mv a.txt b/c.txt"), Verdict::Allowed);
        assert_eq!(verdict("rm -rf build"), Verdict::Allowed);
        assert_eq!(verdict("mkdir -p src/new"), Verdict::Allowed);
        for line in [
            "rm -rf ../x",
            "mv a /etc/passwd",
            "cp x .git/config",
            "touch .clada/allowed-commands.json",
            "rm -- ../../y",
            "mkdir .GIT/hooks",
        ] {
            assert!(matches!(verdict(line), Verdict::Refused(_)), "{line}");
        }
    }

    #[test]
    fn approvals_are_exact_command_lines() {
        let store = Approvals::parse(
            br#"{"commands": ["cargo test"], "added": {"cargo test": "2026-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        assert_eq!(
            judge(&["cargo".into(), "test".into()], "cargo test", &store),
            Verdict::Allowed
        );
        assert_eq!(
            judge(
                &["cargo".into(), "test".into(), "-q".into()],
                "cargo test -q",
                &store
            ),
            Verdict::NeedsApproval
        );
        assert!(Approvals::parse(b"{not json").is_err());
    }
}
