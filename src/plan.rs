//! Validated, typed operations: what `apply` will do, decided before it
//! touches anything.
//!
//! Owns the step from a parsed reply to a plan: attribute values become
//! typed fields, paths are checked and normalised (apply.md §3), and every
//! operation the parser or these checks found invalid becomes a skipped
//! task with its reasons. A TASKS block with any invalid operation is
//! skipped whole. Nothing here does I/O.

use std::fmt;

use crate::csl::validate::{Count, parse_append, parse_count};
use crate::csl::{Body, OpKind, Operation, Reply, Severity, TaskId};

/// A path inside the repository: relative, `/`-separated, normalised (no
/// `.`, `..` or empty components), never into `.git` or `.clada`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

impl RepoPath {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the path leaves the repository (only with `--allow-escape`):
    /// absolute, or starting with `..`.
    pub fn escapes(&self) -> bool {
        self.0.starts_with('/') || self.0 == ".." || self.0.starts_with("../")
    }

    /// The path's components.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a path from a reply is refused (all "invalid": found before anything
/// runs, without touching the disk).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path_escape: empty path")]
    Empty,
    #[error("path_escape: the path contains a NUL byte")]
    Nul,
    #[error("path_escape: absolute path {0:?} (paths are relative to the repository root)")]
    Absolute(String),
    #[error("path_escape: {0:?} leaves the repository")]
    Escapes(String),
    #[error("protected_path: {0:?} is inside .git")]
    Git(String),
    #[error(
        "protected_path: {0:?} is inside .clada (the project's own policy; a reply cannot change it)"
    )]
    Clada(String),
}

impl PathError {
    /// The stable error type of the apply report (apply.md §2).
    pub fn error_type(&self) -> &'static str {
        match self {
            PathError::Git(_) | PathError::Clada(_) => "protected_path",
            _ => "path_escape",
        }
    }
}

/// Checks and normalises a `file` or `dir` value (apply.md §3).
/// Backslashes are accepted as separators.
pub fn repo_path(raw: &str) -> Result<RepoPath, PathError> {
    repo_path_with(raw, false)
}

/// [`repo_path`], where `allow_escape` (`--allow-escape`, `--no-git` only)
/// also accepts absolute paths and paths that climb out with `..`. Paths
/// into `.git` or `.clada` are refused either way.
pub fn repo_path_with(raw: &str, allow_escape: bool) -> Result<RepoPath, PathError> {
    if raw.contains('\0') {
        return Err(PathError::Nul);
    }
    let slashed = raw.replace('\\', "/");
    if slashed.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let bytes = slashed.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    let absolute = slashed.starts_with('/') || drive;
    if absolute && !allow_escape {
        return Err(PathError::Absolute(raw.to_string()));
    }
    let mut parts: Vec<&str> = Vec::new();
    // Leading `..` kept with --allow-escape (never above an absolute root).
    let mut ups = 0usize;
    for part in slashed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    if !allow_escape {
                        return Err(PathError::Escapes(raw.to_string()));
                    }
                    if !absolute {
                        ups += 1;
                    }
                }
            }
            _ => parts.push(part),
        }
    }
    if allow_escape && (absolute || ups > 0) {
        if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
            return Err(PathError::Git(raw.to_string()));
        }
        if parts.iter().any(|p| p.eq_ignore_ascii_case(".clada")) {
            return Err(PathError::Clada(raw.to_string()));
        }
        let prefix = if absolute && !drive {
            "/".to_string()
        } else if drive {
            String::new()
        } else {
            "../".repeat(ups)
        };
        return Ok(RepoPath(format!("{prefix}{}", parts.join("/"))));
    }
    if parts.is_empty() {
        // "." or "a/..": the root itself. Fine for a RUN dir, not a file;
        // the caller decides (an empty RepoPath means the root).
        return Ok(RepoPath(String::new()));
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(PathError::Git(raw.to_string()));
    }
    if parts[0].eq_ignore_ascii_case(".clada") {
        return Err(PathError::Clada(raw.to_string()));
    }
    Ok(RepoPath(parts.join("/")))
}

/// One operation ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Write {
        path: RepoPath,
        content: String,
        append: bool,
    },
    Search {
        path: RepoPath,
        pattern: String,
        to: Option<String>,
        replacement: String,
        count: Count,
    },
    Run {
        /// `None`: the repository root.
        dir: Option<RepoPath>,
        /// The RUN content, split into commands later (`run/`).
        script: String,
    },
}

impl Task {
    /// Whether running this task runs commands (a RUN, alone or in a
    /// TASKS block); a skipped task runs nothing.
    pub fn runs_commands(&self) -> bool {
        match self {
            Task::Single(step) => matches!(step.op, Op::Run { .. }),
            Task::Block { steps, .. } => steps.iter().any(|s| matches!(s.op, Op::Run { .. })),
            Task::Skipped { .. } => false,
        }
    }
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Write { .. } => OpKind::Write,
            Op::Search { .. } => OpKind::Search,
            Op::Run { .. } => OpKind::Run,
        }
    }
}

/// An operation with its place in the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub task: TaskId,
    pub line: u32,
    pub op: Op,
}

/// Why a task will not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub kind: OpKind,
    /// What the report shows after the operation name (the file, if known).
    pub target: Option<String>,
    /// Each reason, in the spec's words, with the line it was found on.
    pub reasons: Vec<(u32, String)>,
    /// The stable error type when a path rule caused the skip
    /// (`path_escape`, `protected_path`).
    pub error_type: Option<&'static str>,
}

/// One numbered unit of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    Single(Step),
    Block {
        task: TaskId,
        line: u32,
        steps: Vec<Step>,
    },
    Skipped {
        task: TaskId,
        line: u32,
        skip: Skip,
    },
}

/// Builds the plan of a reply without fatal errors. `allow_escape`: see
/// [`repo_path_with`].
pub fn plan(reply: &Reply<'_>, allow_escape: bool) -> Vec<Task> {
    debug_assert!(!reply.has_fatal(), "a reply with fatal errors has no plan");
    reply
        .operations
        .iter()
        .map(|op| plan_task(reply, op, allow_escape))
        .collect()
}

fn plan_task(reply: &Reply<'_>, op: &Operation<'_>, allow_escape: bool) -> Task {
    if let Body::Tasks { operations } = &op.body {
        let mut steps = Vec::new();
        let mut reasons = Vec::new();
        let mut error_type = None;
        for child in operations {
            match plan_step(reply, child, allow_escape) {
                Ok(step) => steps.push(step),
                Err(skip) => {
                    error_type = error_type.or(skip.error_type);
                    for (line, why) in skip.reasons {
                        reasons.push((line, format!("task {}: {why}", child.task)));
                    }
                }
            }
        }
        if reasons.is_empty() {
            return Task::Block {
                task: op.task,
                line: op.line,
                steps,
            };
        }
        return Task::Skipped {
            task: op.task,
            line: op.line,
            skip: Skip {
                kind: OpKind::Tasks,
                target: None,
                reasons,
                error_type,
            },
        };
    }
    match plan_step(reply, op, allow_escape) {
        Ok(step) => Task::Single(step),
        Err(skip) => Task::Skipped {
            task: op.task,
            line: op.line,
            skip,
        },
    }
}

/// Turns one WRITE/SEARCH/RUN into a step, or says why it is skipped.
fn plan_step(reply: &Reply<'_>, op: &Operation<'_>, allow_escape: bool) -> Result<Step, Skip> {
    let mut reasons: Vec<(u32, String)> = reply
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Invalid && d.task == Some(op.task))
        .map(|d| (d.line, d.message.clone()))
        .collect();
    let target = op
        .attr("file")
        .filter(|f| !f.trim().is_empty())
        .map(str::to_owned);
    let mut error_type = None;
    let mut path_of = |name: &str| -> Option<RepoPath> {
        // An empty value is already "Missing required attribute".
        let raw = op.attr(name).filter(|v| !v.trim().is_empty())?;
        match repo_path_with(raw, allow_escape) {
            Ok(p) if p.as_str().is_empty() && name == "file" => {
                error_type.get_or_insert("path_escape");
                reasons.push((
                    op.line,
                    format!("path_escape: {raw:?} names the repository root, not a file"),
                ));
                None
            }
            Ok(p) => Some(p),
            Err(e) => {
                error_type.get_or_insert(e.error_type());
                reasons.push((op.line, e.to_string()));
                None
            }
        }
    };
    let built = match &op.body {
        Body::Write { content } => {
            let path = path_of("file");
            let append = op.attr("append").and_then(parse_append).unwrap_or(false);
            path.map(|path| Op::Write {
                path,
                content: content.to_string(),
                append,
            })
        }
        Body::Search {
            pattern,
            to,
            replacement,
        } => {
            let path = path_of("file");
            let count = op
                .attr("count")
                .map_or(Some(Count::Exactly(1)), parse_count);
            path.zip(count).map(|(path, count)| Op::Search {
                path,
                pattern: pattern.to_string(),
                to: to.as_ref().map(|t| t.to_string()),
                replacement: replacement.to_string(),
                count,
            })
        }
        Body::Run { content } => {
            let dir = match op.attr("dir") {
                None => Some(None),
                Some(raw) if raw.trim().is_empty() => Some(None),
                Some(_) => path_of("dir").map(|d| (!d.as_str().is_empty()).then_some(d)),
            };
            dir.map(|dir| Op::Run {
                dir,
                script: content.to_string(),
            })
        }
        Body::Tasks { .. } => unreachable!("TASKS cannot be nested (the parser refuses it)"),
    };
    match built {
        Some(op_) if reasons.is_empty() => Ok(Step {
            task: op.task,
            line: op.line,
            op: op_,
        }),
        _ => Err(Skip {
            kind: op.kind(),
            target,
            reasons,
            error_type,
        }),
    }
}

/// Refuses every RUN before anything runs, where commands may not run at
/// all (a server without `clada.serverRun`). A RUN task, or a TASKS block
/// holding one, becomes a skipped task with the error type
/// `command_not_allowed` and `reason`; the other tasks are untouched. The
/// block is skipped whole, as for an invalid operation inside it: running
/// its edits without its commands would leave half of a unit.
pub fn refuse_run(tasks: Vec<Task>, reason: &str) -> Vec<Task> {
    const TYPE: &str = "command_not_allowed";
    let is_run = |step: &Step| matches!(step.op, Op::Run { .. });
    tasks
        .into_iter()
        .map(|task| match task {
            Task::Single(step) if is_run(&step) => Task::Skipped {
                task: step.task,
                line: step.line,
                skip: Skip {
                    kind: OpKind::Run,
                    target: match &step.op {
                        Op::Run { script, .. } => script
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .map(|l| l.trim().to_string()),
                        _ => None,
                    },
                    reasons: vec![(step.line, format!("{TYPE}: {reason}"))],
                    error_type: Some(TYPE),
                },
            },
            Task::Block { task, line, steps } if steps.iter().any(is_run) => Task::Skipped {
                task,
                line,
                skip: Skip {
                    kind: OpKind::Tasks,
                    target: None,
                    reasons: steps
                        .iter()
                        .filter(|s| is_run(s))
                        .map(|s| (s.line, format!("task {}: {TYPE}: {reason}", s.task)))
                        .collect(),
                    error_type: Some(TYPE),
                },
            },
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::{self, Delimiters};

    #[test]
    fn paths_are_normalised() {
        let ok = |raw: &str| repo_path(raw).map(|p| p.0);
        assert_eq!(ok("src/app.js"), Ok("src/app.js".into()));
        assert_eq!(ok("./src//a/../b.js"), Ok("src/b.js".into()));
        assert_eq!(ok("src\\win\\path.txt"), Ok("src/win/path.txt".into()));
        assert_eq!(
            ok("dir with space/f.txt"),
            Ok("dir with space/f.txt".into())
        );
        assert_eq!(ok("a/.."), Ok(String::new()));
    }

    #[test]
    fn allow_escape_accepts_outside_paths_but_never_git_or_clada() {
        let ok = |raw: &str| repo_path_with(raw, true).map(|p| (p.escapes(), p.0));
        assert_eq!(ok("/tmp/x/../y"), Ok((true, "/tmp/y".into())));
        assert_eq!(ok("../../up/x"), Ok((true, "../../up/x".into())));
        assert_eq!(ok("in/repo"), Ok((false, "in/repo".into())));
        assert!(repo_path_with("/repo/.git/config", true).is_err());
        assert!(repo_path_with("../other/.clada/x", true).is_err());
        assert!(repo_path_with("", true).is_err());
    }

    #[test]
    fn unsafe_paths_are_refused() {
        let kind = |raw: &str| repo_path(raw).map_err(|e| e.error_type());
        for raw in [
            "",
            "  ",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "C:\\x",
            "c:x",
            "a\0b",
        ] {
            assert_eq!(kind(raw), Err("path_escape"), "{raw:?}");
        }
        for raw in [
            ".git/config",
            ".GIT/hooks/x",
            "sub/.Git/x",
            ".clada/allowed-commands.json",
            ".CLADA/x",
            "x/../.git",
        ] {
            assert_eq!(kind(raw), Err("protected_path"), "{raw:?}");
        }
        assert!(
            repo_path("sub/.clada/x").is_ok(),
            "only the root .clada is protected"
        );
        assert!(repo_path(".gitignore").is_ok());
    }

    fn plan_of(src: &str) -> Vec<Task> {
        let reply = csl::parse(src, &Delimiters::default());
        plan(&reply, false)
    }

    #[test]
    fn invalid_operations_are_skipped_and_taint_their_block() {
        let tasks = plan_of(
            "<---WRITE file=\"../x\"--->\na\n<---END--->\n\
             <---TASKS--->\n<---WRITE file=\"ok\"--->\na\n<---END--->\n<---SEARCH file=\"b\" count=\"0\"--->\nx\n<---REPLACE--->\ny\n<---END--->\n<---END--->\n\
             <---SEARCH file=\"c\" count=\"all\"--->\nx\n<---REPLACE--->\ny\n<---END--->\n",
        );
        assert_eq!(tasks.len(), 3);
        let Task::Skipped { skip, .. } = &tasks[0] else {
            panic!("{:?}", tasks[0])
        };
        assert!(skip.reasons[0].1.starts_with("path_escape"));
        let Task::Skipped { skip, task, .. } = &tasks[1] else {
            panic!("{:?}", tasks[1])
        };
        assert_eq!((task.top, skip.kind), (2, OpKind::Tasks));
        assert!(
            skip.reasons[0]
                .1
                .starts_with("task 2.2: Invalid value for 'count'"),
            "{:?}",
            skip.reasons
        );
        let Task::Single(step) = &tasks[2] else {
            panic!("{:?}", tasks[2])
        };
        assert!(matches!(
            &step.op,
            Op::Search {
                count: Count::All,
                ..
            }
        ));
    }

    #[test]
    fn run_dir_is_checked_like_a_path() {
        let tasks = plan_of(
            "<---RUN dir=\"./src/\"--->\nls\n<---END--->\n<---RUN dir=\"/tmp\"--->\nls\n<---END--->\n<---RUN dir=\".\"--->\nls\n<---END--->\n",
        );
        assert!(
            matches!(&tasks[0], Task::Single(Step { op: Op::Run { dir: Some(d), .. }, .. }) if d.as_str() == "src")
        );
        assert!(matches!(&tasks[1], Task::Skipped { .. }));
        assert!(matches!(
            &tasks[2],
            Task::Single(Step {
                op: Op::Run { dir: None, .. },
                ..
            })
        ));
    }

    #[test]
    fn refused_run_skips_its_task_and_whole_block_only() {
        let tasks = plan_of(
            "<---WRITE file=\"a\"--->\nx\n<---END--->\n<---RUN--->\n\nmake\n<---END--->\n<---TASKS--->\n<---WRITE file=\"b\"--->\ny\n<---END--->\n<---RUN--->\nls\n<---END--->\n<---END--->\n<---TASKS--->\n<---WRITE file=\"c\"--->\nz\n<---END--->\n<---END--->\n",
        );
        let refused = refuse_run(tasks.clone(), "no commands here");
        assert_eq!(refused[0], tasks[0]);
        assert_eq!(refused[3], tasks[3]);
        let Task::Skipped { skip, line, .. } = &refused[1] else {
            panic!("{:?}", refused[1])
        };
        assert_eq!(
            (skip.kind, skip.target.as_deref(), skip.error_type, *line),
            (OpKind::Run, Some("make"), Some("command_not_allowed"), 4)
        );
        let Task::Skipped { skip, .. } = &refused[2] else {
            panic!("{:?}", refused[2])
        };
        assert_eq!(
            (
                skip.kind,
                skip.error_type,
                skip.reasons.len(),
                skip.reasons[0].0
            ),
            (OpKind::Tasks, Some("command_not_allowed"), 1, 12)
        );
    }
}
