//! Validated, typed operations: what `apply` will do, decided before it
//! touches anything.
//!
//! Owns the step from a parsed reply to a plan: attribute values become
//! typed fields, paths are checked and normalised (apply.md §3), and every
//! operation the parser or these checks found invalid becomes a skipped
//! task with its reasons. A TASKS block with any invalid operation is
//! skipped whole. Nothing here does I/O.

use std::borrow::Cow;
use std::fmt;

use crate::csl::validate::Count;
use crate::csl::{OpKind, TaskId};

/// A path inside the repository: relative, `/`-separated, normalised (no
/// `.`, `..` or empty components), never into `.git` or `.clada`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

impl RepoPath {
    /// A path that is known to be normalised and inside the repository
    /// (one a store listed, or one built from checked parts).
    pub(crate) fn from_checked(path: &str) -> RepoPath {
        debug_assert!(
            repo_path(path).is_ok_and(|p| p.0 == path) || path.is_empty(),
            "{path:?} is not a checked path"
        );
        RepoPath(path.to_string())
    }

    /// The path of `rest` (a path below this directory) from the root.
    pub fn join(&self, rest: &str) -> RepoPath {
        if self.0.is_empty() {
            RepoPath(rest.to_string())
        } else {
            RepoPath(format!("{}/{rest}", self.0))
        }
    }

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
    /// A tab, line break or other control character: git stores such a
    /// name, but it reaches terminals and commit subjects raw and the
    /// history commands cannot handle it.
    #[error("invalid_path: {0:?} contains a control character")]
    Control(String),
    /// A name the filesystem cannot hold, or a path deeper than git reads.
    #[error("invalid_path: {0:?} has {1}")]
    TooLong(String, &'static str),
}

/// The longest name a filesystem holds (ext4, APFS, NTFS: 255 bytes).
const MAX_NAME: usize = 255;

/// The deepest path git reads (`core.maxTreeDepth`'s default).
const MAX_DEPTH: usize = 4096;

impl PathError {
    /// The stable error type of the apply report (apply.md §2).
    pub fn error_type(&self) -> &'static str {
        match self {
            PathError::Git(_) | PathError::Clada(_) => "protected_path",
            PathError::Control(_) | PathError::TooLong(..) => "invalid_path",
            _ => "path_escape",
        }
    }
}

/// Whether a path component names `.clada` on some filesystem: in any
/// case, with the code points HFS+ ignores (git's list in utf8.c, which
/// gix applies to `.git`), with the trailing dots and spaces NTFS drops, or
/// as its 8.3 short name `CLADA~1`.
fn names_clada(part: &str) -> bool {
    const HFS_IGNORED: &[char] = &[
        '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}',
        '\u{202d}', '\u{202e}', '\u{206a}', '\u{206b}', '\u{206c}', '\u{206d}', '\u{206e}',
        '\u{206f}', '\u{feff}',
    ];
    let folded: String = part.chars().filter(|c| !HFS_IGNORED.contains(c)).collect();
    let folded = folded.trim_end_matches(['.', ' ']);
    folded.eq_ignore_ascii_case(".clada") || folded.eq_ignore_ascii_case("clada~1")
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
    if raw.chars().any(char::is_control) {
        return Err(PathError::Control(raw.to_string()));
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
        if parts.iter().any(|p| names_clada(p)) {
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
    if parts.iter().any(|p| p.len() > MAX_NAME) {
        return Err(PathError::TooLong(
            raw.to_string(),
            "a name longer than 255 bytes, which no filesystem holds",
        ));
    }
    if parts.len() > MAX_DEPTH {
        return Err(PathError::TooLong(
            raw.to_string(),
            "more than 4096 directories, deeper than git reads",
        ));
    }
    if parts.is_empty() {
        // "." or "a/..": the root itself. Fine for a RUN dir, not a file;
        // the caller decides (an empty RepoPath means the root).
        return Ok(RepoPath(String::new()));
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(PathError::Git(raw.to_string()));
    }
    if names_clada(parts[0]) {
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
    /// Removes a file, or a directory (with everything in it only when
    /// `recursive`; an empty one either way).
    Delete {
        path: RepoPath,
        recursive: bool,
    },
    /// Renames a file or a directory; an existing target is replaced only
    /// when `overwrite` (and never when it is a directory).
    Move {
        from: RepoPath,
        to: RepoPath,
        overwrite: bool,
    },
    /// Inserts `text` after line `line` (0: at the top).
    Insert {
        path: RepoPath,
        line: usize,
        text: String,
    },
    Mkdir {
        path: RepoPath,
    },
    /// Shows something to the model; changes nothing.
    Read(Read),
    /// Replaces lines found in a file, hunk by hunk, as the format that
    /// wrote them finds them (aider, apply_patch, unified diff).
    Edit {
        path: RepoPath,
        hunks: Vec<Hunk>,
        locate: Locate,
        /// Whether the file ends with a line end afterwards; `None`: as
        /// it did.
        final_newline: Option<bool>,
    },
    /// Creates a file with exactly `content` (no final newline added, no
    /// line ends converted): a unified diff's new file, a text-editor
    /// `create`. A path that holds other content is refused; one that
    /// already holds exactly this content is reported as applied already.
    Create {
        path: RepoPath,
        content: String,
    },
    /// Sets what git records of an existing path besides its content: the
    /// executable bit, or a symbolic link whose target is the content
    /// (a unified diff's mode lines).
    Mode {
        path: RepoPath,
        mode: FileMode,
    },
}

/// The modes of a file git records (a diff's `new mode 100755`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// `100644`.
    Regular,
    /// `100755`.
    Executable,
    /// `120000`: a symbolic link; the file's content is its target.
    Link,
}

impl FileMode {
    /// git's octal name (`100644`).
    pub fn name(self) -> &'static str {
        match self {
            FileMode::Regular => "100644",
            FileMode::Executable => "100755",
            FileMode::Link => "120000",
        }
    }

    /// The mode of git's octal name; `None` for any other (a submodule's
    /// `160000`, a typo).
    pub fn from_name(name: &str) -> Option<FileMode> {
        [FileMode::Regular, FileMode::Executable, FileMode::Link]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// One change of an EDIT: lines to find, and the lines that replace them.
/// Two hunks are equal when they find and write the same lines, however
/// kept lines are spelled (`' '` or a `'-'` and a `'+'`).
#[derive(Debug, Clone)]
pub struct Hunk {
    /// The hunk's lines as a diff writes them, each ending with `\n`:
    /// `' '` + a line kept (found and kept), `'-'` + a line removed (found),
    /// `'+'` + a line added. One text, not two vectors of lines: a 20 MB
    /// reply of small lines would pay an allocation per line, and kept
    /// lines would be held twice.
    pub lines: String,
    /// 1-based line where the writer saw the old lines start (a diff's
    /// `@@ -l`): it chooses among several matches, never excludes one.
    pub line: Option<u32>,
    /// A line found first; the hunk is then found after it
    /// (apply_patch's `@@ def f():`).
    pub anchor: Option<String>,
    /// The hunk ends the file (apply_patch's `*** End of File`).
    pub at_end: bool,
}

impl Hunk {
    /// An empty hunk, nothing else set.
    pub fn new() -> Hunk {
        Hunk {
            lines: String::new(),
            line: None,
            anchor: None,
            at_end: false,
        }
    }

    /// A hunk that removes `old` and adds `new` (lines without line ends).
    pub fn of_lines<S: AsRef<str>>(old: &[S], new: &[S]) -> Hunk {
        let mut hunk = Hunk::new();
        let size: usize = old.iter().chain(new).map(|l| l.as_ref().len() + 2).sum();
        hunk.lines.reserve_exact(size);
        for l in old {
            hunk.push('-', l.as_ref());
        }
        for l in new {
            hunk.push('+', l.as_ref());
        }
        hunk
    }

    /// Adds a line: `' '` kept, `'-'` removed, `'+'` added.
    pub fn push(&mut self, tag: char, line: &str) {
        self.lines.push(tag);
        self.lines.push_str(line);
        self.lines.push('\n');
    }

    /// The lines to find (kept and removed), without their line ends.
    pub fn old_lines(&self) -> Vec<&str> {
        self.tagged(['-', ' '])
    }

    /// The lines that replace them (kept and added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.tagged(['+', ' '])
    }

    /// Whether the hunk has no line at all.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn tagged(&self, tags: [char; 2]) -> Vec<&str> {
        self.lines
            .split_terminator('\n')
            .filter_map(|l| {
                let tag = l.chars().next()?;
                tags.contains(&tag).then(|| &l[tag.len_utf8()..])
            })
            .collect()
    }
}

impl PartialEq for Hunk {
    fn eq(&self, other: &Hunk) -> bool {
        self.old_lines() == other.old_lines()
            && self.new_lines() == other.new_lines()
            && self.line == other.line
            && self.anchor == other.anchor
            && self.at_end == other.at_end
    }
}

impl Eq for Hunk {}

impl Default for Hunk {
    fn default() -> Hunk {
        Hunk::new()
    }
}

/// `lines`, each ended with `\n`.
pub fn joined<S: AsRef<str>>(lines: &[S]) -> String {
    let mut text = String::with_capacity(lines.iter().map(|l| l.as_ref().len() + 1).sum());
    for l in lines {
        text.push_str(l.as_ref());
        text.push('\n');
    }
    text
}

/// How an EDIT's hunks are found: the rules of the format that wrote them
/// (syntaxes.md §4), each looser step reported when it was needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locate {
    /// aider SEARCH/REPLACE and unified diffs: each hunk matches once, in
    /// order (a diff's line number chooses among several matches); where
    /// nothing matches exactly, one uniform indentation offset, then
    /// without a stray leading blank line.
    Unique,
    /// Codex apply_patch: hunks in order, each the first match after the
    /// previous one; exact, then ignoring trailing whitespace, then
    /// surrounding whitespace, then with Unicode punctuation folded.
    Sequential,
}

impl Locate {
    pub fn name(self) -> &'static str {
        match self {
            Locate::Unique => "unique",
            Locate::Sequential => "sequential",
        }
    }

    pub fn from_name(name: &str) -> Option<Locate> {
        [Locate::Unique, Locate::Sequential]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

/// What a read operation shows (syntaxes.md §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// The contents of these files (several: each under `=== path ===`).
    Files(Vec<RepoPath>),
    /// The entries of a directory (the root when empty).
    List(RepoPath),
    /// Lines matching a regular expression in the files under `path`
    /// whose names match `include` (a glob), if given.
    Grep {
        pattern: String,
        path: RepoPath,
        include: Option<String>,
    },
    /// The files under `base` whose path relative to it matches `pattern`.
    Glob { pattern: String, base: RepoPath },
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
            Op::Delete { .. } => OpKind::Delete,
            Op::Move { .. } => OpKind::Move,
            Op::Insert { .. } => OpKind::Insert,
            Op::Mkdir { .. } => OpKind::Mkdir,
            Op::Read(_) => OpKind::Read,
            Op::Edit { .. } => OpKind::Edit,
            Op::Create { .. } => OpKind::Write,
            Op::Mode { .. } => OpKind::Mode,
        }
    }

    /// Every path the operation names (files, directories, RUN's `dir`).
    pub fn paths(&self) -> Vec<&RepoPath> {
        match self {
            Op::Write { path, .. }
            | Op::Search { path, .. }
            | Op::Delete { path, .. }
            | Op::Insert { path, .. }
            | Op::Edit { path, .. }
            | Op::Create { path, .. }
            | Op::Mode { path, .. }
            | Op::Mkdir { path } => vec![path],
            Op::Move { from, to, .. } => vec![from, to],
            Op::Run { dir, .. } => dir.iter().collect(),
            Op::Read(Read::Files(paths)) => paths.iter().collect(),
            Op::Read(Read::List(p) | Read::Grep { path: p, .. } | Read::Glob { base: p, .. }) => {
                vec![p]
            }
        }
    }

    /// What the report names after the operation: its file, its first
    /// command line, `from -> to` for a move.
    pub fn target(&self) -> Option<String> {
        match self {
            Op::Write { path, .. }
            | Op::Search { path, .. }
            | Op::Delete { path, .. }
            | Op::Insert { path, .. }
            | Op::Edit { path, .. }
            | Op::Create { path, .. }
            | Op::Mode { path, .. }
            | Op::Mkdir { path } => Some(path.to_string()),
            Op::Move { from, to, .. } => Some(format!("{from} -> {to}")),
            Op::Run { script, .. } => first_command(script),
            Op::Read(read) => Some(match read {
                Read::Files(paths) => paths
                    .iter()
                    .map(RepoPath::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                Read::List(dir) => format!("list {}", shown_dir(dir)),
                Read::Grep { pattern, path, .. } => {
                    format!("grep {pattern:?} in {}", shown_dir(path))
                }
                Read::Glob { pattern, base } => format!("glob {pattern:?} in {}", shown_dir(base)),
            }),
        }
    }
}

/// A directory as the report names it (`.` for the root).
fn shown_dir(dir: &RepoPath) -> &str {
    if dir.as_str().is_empty() {
        "."
    } else {
        dir.as_str()
    }
}

/// The first non-blank line of a RUN, trimmed: how the report names it.
pub fn first_command(script: &str) -> Option<String> {
    script
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
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

/// An operation as a front end read it (`syntax/`): what it asks for with
/// its paths still as written, and what the front end found wrong with it.
/// [`plan`] turns drafts into tasks; every syntax shares its path rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft<'a> {
    pub task: TaskId,
    /// 1-based line of the operation in the reply.
    pub line: u32,
    pub kind: OpKind,
    /// What the report names when the operation is skipped (the file as
    /// written, say); a valid operation is named by [`Op::target`].
    pub target: Option<String>,
    /// `None` when the front end could not build the operation (then
    /// `invalid` says why).
    pub action: Option<Action<'a>>,
    /// Reasons the operation is invalid, each with its line: it is skipped.
    pub invalid: Vec<(u32, String)>,
    /// The stable error type of a skip the front end decided
    /// (`command_not_allowed` for an unsupported action, say).
    pub error_type: Option<&'static str>,
}

impl<'a> Draft<'a> {
    pub fn new(task: TaskId, line: u32, kind: OpKind, action: Action<'a>) -> Draft<'a> {
        Draft {
            task,
            line,
            kind,
            target: None,
            action: Some(action),
            invalid: Vec::new(),
            error_type: None,
        }
    }

    /// The draft with every text its own, for a draft read from a text
    /// that does not outlive it (CSL printed from JSON, say).
    pub fn into_owned(self) -> Draft<'static> {
        Draft {
            task: self.task,
            line: self.line,
            kind: self.kind,
            target: self.target,
            action: self.action.map(Action::into_owned),
            invalid: self.invalid,
            error_type: self.error_type,
        }
    }

    /// A draft the front end already knows to be invalid.
    pub fn invalid(task: TaskId, line: u32, kind: OpKind, why: String) -> Draft<'a> {
        Draft {
            task,
            line,
            kind,
            target: None,
            action: None,
            invalid: vec![(line, why)],
            error_type: None,
        }
    }
}

/// A draft's operation, paths as written.
///
/// The texts a reply carries (contents, patterns, scripts) are [`Text`]:
/// borrowed from the reply where the front end found them as one slice of
/// it, so that reading a large reply does not copy it (`parse` stays
/// within its memory target); [`plan`] makes the owned copies a run needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action<'a> {
    Write {
        path: String,
        content: Text<'a>,
        append: bool,
    },
    Search {
        path: String,
        pattern: Text<'a>,
        to: Option<String>,
        replacement: Text<'a>,
        count: Count,
    },
    Run {
        dir: Option<String>,
        script: Text<'a>,
    },
    Delete {
        path: String,
        recursive: bool,
    },
    Move {
        from: String,
        to: String,
        overwrite: bool,
    },
    Insert {
        path: String,
        line: usize,
        text: Text<'a>,
    },
    Mkdir {
        path: String,
    },
    ReadFiles {
        paths: Vec<String>,
    },
    List {
        path: String,
    },
    Grep {
        pattern: String,
        path: String,
        include: Option<String>,
    },
    Glob {
        pattern: String,
        base: String,
    },
    /// See [`Op::Edit`].
    Edit {
        path: String,
        hunks: Vec<Hunk>,
        locate: Locate,
        final_newline: Option<bool>,
    },
    /// See [`Op::Create`].
    Create {
        path: String,
        content: Text<'a>,
    },
    /// See [`Op::Mode`].
    Mode {
        path: String,
        mode: FileMode,
    },
    /// An atomic group (a TASKS block); its drafts are its operations.
    Block(Vec<Draft<'a>>),
}

impl Action<'_> {
    /// The action with every text its own.
    pub fn into_owned(self) -> Action<'static> {
        let own = |text: Text<'_>| -> Text<'static> { Cow::Owned(text.into_owned()) };
        match self {
            Action::Write {
                path,
                content,
                append,
            } => Action::Write {
                path,
                content: own(content),
                append,
            },
            Action::Search {
                path,
                pattern,
                to,
                replacement,
                count,
            } => Action::Search {
                path,
                pattern: own(pattern),
                to,
                replacement: own(replacement),
                count,
            },
            Action::Run { dir, script } => Action::Run {
                dir,
                script: own(script),
            },
            Action::Insert { path, line, text } => Action::Insert {
                path,
                line,
                text: own(text),
            },
            Action::Delete { path, recursive } => Action::Delete { path, recursive },
            Action::Move {
                from,
                to,
                overwrite,
            } => Action::Move {
                from,
                to,
                overwrite,
            },
            Action::Mkdir { path } => Action::Mkdir { path },
            Action::ReadFiles { paths } => Action::ReadFiles { paths },
            Action::List { path } => Action::List { path },
            Action::Grep {
                pattern,
                path,
                include,
            } => Action::Grep {
                pattern,
                path,
                include,
            },
            Action::Glob { pattern, base } => Action::Glob { pattern, base },
            Action::Edit {
                path,
                hunks,
                locate,
                final_newline,
            } => Action::Edit {
                path,
                hunks,
                locate,
                final_newline,
            },
            Action::Create { path, content } => Action::Create {
                path,
                content: own(content),
            },
            Action::Mode { path, mode } => Action::Mode { path, mode },
            Action::Block(drafts) => {
                Action::Block(drafts.into_iter().map(Draft::into_owned).collect())
            }
        }
    }
}

/// A text of an [`Action`]: a slice of the reply, or made by the front
/// end (unescaped, joined, converted).
pub type Text<'a> = Cow<'a, str>;

/// Builds the plan of a reply without fatal errors from its drafts.
/// `allow_escape`: see [`repo_path_with`].
pub fn plan(drafts: &[Draft<'_>], allow_escape: bool) -> Vec<Task> {
    plan_in(drafts, allow_escape, &[])
}

/// [`plan`] for a syntax that asks for absolute paths (SHAM, the
/// replacer): an absolute path inside the repository's root, spelled as
/// one of `roots` (the working tree as given and as resolved), is taken
/// relative to it (syntaxes.md §1). Any other absolute path is refused as
/// usual.
pub fn plan_in(drafts: &[Draft<'_>], allow_escape: bool, roots: &[String]) -> Vec<Task> {
    drafts
        .iter()
        .map(|draft| {
            plan_task(
                draft,
                Paths {
                    allow_escape,
                    roots,
                },
            )
        })
        .collect()
}

/// How a plan reads paths.
#[derive(Clone, Copy)]
struct Paths<'r> {
    allow_escape: bool,
    roots: &'r [String],
}

/// `raw` relative to the root it lies in, if it is absolute and inside
/// one of `roots` (compared by whole components, `/`-separated).
fn under_root<'p>(raw: &'p str, roots: &[String]) -> Option<Cow<'p, str>> {
    if roots.is_empty()
        || !(raw.starts_with('/') || raw.starts_with('\\') || raw.get(1..2) == Some(":"))
    {
        return None;
    }
    let slashed = raw.replace('\\', "/");
    roots.iter().find_map(|root| {
        let root = root.replace('\\', "/");
        let root = root.trim_end_matches('/');
        let rest = slashed.strip_prefix(root)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(Cow::Owned(rest.trim_start_matches('/').to_string()))
    })
}

fn plan_task(draft: &Draft<'_>, paths: Paths<'_>) -> Task {
    if let Some(Action::Block(children)) = &draft.action {
        let mut steps = Vec::new();
        let mut reasons = draft.invalid.clone();
        let mut error_type = draft.error_type;
        for child in children {
            match plan_step(child, paths) {
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
                task: draft.task,
                line: draft.line,
                steps,
            };
        }
        return Task::Skipped {
            task: draft.task,
            line: draft.line,
            skip: Skip {
                kind: OpKind::Tasks,
                target: None,
                reasons,
                error_type,
            },
        };
    }
    match plan_step(draft, paths) {
        Ok(step) => Task::Single(step),
        Err(skip) => Task::Skipped {
            task: draft.task,
            line: draft.line,
            skip,
        },
    }
}

/// Whether a path names a file (the root is refused) or a directory (the
/// root is fine: `""`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Names {
    File,
    Dir,
}

/// The reasons a draft is skipped, gathered while its paths are checked.
struct Checked<'r> {
    line: u32,
    allow_escape: bool,
    roots: &'r [String],
    reasons: Vec<(u32, String)>,
    error_type: Option<&'static str>,
}

impl Checked<'_> {
    fn path(&mut self, raw: &str, names: Names) -> Option<RepoPath> {
        // A directory left empty is the root (`"path": ""` in JSON).
        if names == Names::Dir && raw.trim().is_empty() {
            return Some(RepoPath(String::new()));
        }
        let relative = under_root(raw, self.roots);
        let raw = match &relative {
            // The root itself, named absolutely.
            Some(rest) if rest.is_empty() && names == Names::Dir => {
                return Some(RepoPath(String::new()));
            }
            Some(rest) if rest.is_empty() => raw,
            Some(rest) => rest.as_ref(),
            None => raw,
        };
        match repo_path_with(raw, self.allow_escape) {
            Ok(p) if p.as_str().is_empty() && names == Names::File => {
                self.error_type.get_or_insert("path_escape");
                self.reasons.push((
                    self.line,
                    format!("path_escape: {raw:?} names the repository root, not a file"),
                ));
                None
            }
            Ok(p) => Some(p),
            Err(e) => {
                self.error_type.get_or_insert(e.error_type());
                self.reasons.push((self.line, e.to_string()));
                None
            }
        }
    }
}

/// Turns one draft into a step, or says why it is skipped.
fn plan_step(draft: &Draft<'_>, paths: Paths<'_>) -> Result<Step, Skip> {
    let line = draft.line;
    let mut checked = Checked {
        line,
        allow_escape: paths.allow_escape,
        roots: paths.roots,
        reasons: draft.invalid.clone(),
        error_type: draft.error_type,
    };
    let mut path_of = |raw: &str, names: Names| checked.path(raw, names);
    use Names::{Dir, File};
    let built = match &draft.action {
        None => None,
        Some(Action::Write {
            path,
            content,
            append,
        }) => path_of(path, File).map(|path| Op::Write {
            path,
            content: content.to_string(),
            append: *append,
        }),
        Some(Action::Search {
            path,
            pattern,
            to,
            replacement,
            count,
        }) => path_of(path, File).map(|path| Op::Search {
            path,
            pattern: pattern.to_string(),
            to: to.clone(),
            replacement: replacement.to_string(),
            count: *count,
        }),
        Some(Action::Edit {
            path,
            hunks,
            locate,
            final_newline,
        }) => path_of(path, File).map(|path| Op::Edit {
            path,
            hunks: hunks.clone(),
            locate: *locate,
            final_newline: *final_newline,
        }),
        Some(Action::Create { path, content }) => path_of(path, File).map(|path| Op::Create {
            path,
            content: content.to_string(),
        }),
        Some(Action::Mode { path, mode }) => {
            path_of(path, File).map(|path| Op::Mode { path, mode: *mode })
        }
        Some(Action::Run { dir, script }) => {
            let dir = match dir {
                None => Some(None),
                Some(raw) if raw.trim().is_empty() => Some(None),
                Some(raw) => path_of(raw, Dir).map(|d| (!d.as_str().is_empty()).then_some(d)),
            };
            dir.map(|dir| Op::Run {
                dir,
                script: script.to_string(),
            })
        }
        Some(Action::Delete { path, recursive }) => path_of(path, File).map(|path| Op::Delete {
            path,
            recursive: *recursive,
        }),
        Some(Action::Move {
            from,
            to,
            overwrite,
        }) => {
            let (from, to) = (path_of(from, File), path_of(to, File));
            from.zip(to).map(|(from, to)| Op::Move {
                from,
                to,
                overwrite: *overwrite,
            })
        }
        Some(Action::Insert {
            path,
            line: at,
            text,
        }) => path_of(path, File).map(|path| Op::Insert {
            path,
            line: *at,
            text: text.to_string(),
        }),
        Some(Action::Mkdir { path }) => path_of(path, File).map(|path| Op::Mkdir { path }),
        Some(Action::ReadFiles { paths }) if paths.is_empty() => {
            checked
                .reasons
                .push((line, "a read needs at least one path".to_string()));
            None
        }
        Some(Action::ReadFiles { paths }) => {
            let read: Vec<Option<RepoPath>> = paths.iter().map(|p| path_of(p, File)).collect();
            read.into_iter()
                .collect::<Option<Vec<_>>>()
                .map(|paths| Op::Read(Read::Files(paths)))
        }
        Some(Action::List { path }) => path_of(path, Dir).map(|p| Op::Read(Read::List(p))),
        Some(Action::Grep {
            pattern,
            path,
            include,
        }) => path_of(path, Dir).map(|path| {
            Op::Read(Read::Grep {
                pattern: pattern.clone(),
                path,
                include: include.clone(),
            })
        }),
        Some(Action::Glob { pattern, base }) => path_of(base, Dir).map(|base| {
            Op::Read(Read::Glob {
                pattern: pattern.clone(),
                base,
            })
        }),
        Some(Action::Block(_)) => {
            checked
                .reasons
                .push((line, "TASKS blocks cannot be nested".to_string()));
            None
        }
    };
    let Checked {
        mut reasons,
        mut error_type,
        ..
    } = checked;
    // --allow-escape lets a reply write and edit files outside the
    // directory, never delete or move there: a recursive delete of `/` or
    // `..` would be one typo away.
    let outside = match &built {
        Some(Op::Delete { path, .. }) => path.escapes(),
        Some(Op::Move { from, to, .. }) => from.escapes() || to.escapes(),
        _ => false,
    };
    if outside {
        error_type.get_or_insert("path_escape");
        reasons.push((
            line,
            "path_escape: a delete or move stays inside the directory, even with --allow-escape"
                .to_string(),
        ));
    }
    // A reply can never read outside the repository either: reads are
    // shown to whoever sent the reply (a server's pusher, say).
    if let Some(Op::Read(read)) = &built {
        let escapes = match read {
            Read::Files(paths) => paths.iter().any(RepoPath::escapes),
            Read::List(p) | Read::Grep { path: p, .. } | Read::Glob { base: p, .. } => p.escapes(),
        };
        if escapes {
            error_type.get_or_insert("path_escape");
            reasons.push((
                line,
                "path_escape: a read stays inside the repository, even with --allow-escape"
                    .to_string(),
            ));
        }
    }
    match built {
        Some(op) if reasons.is_empty() => Ok(Step {
            task: draft.task,
            line,
            op,
        }),
        _ => Err(Skip {
            kind: draft.kind,
            target: draft.target.clone().filter(|t| !t.trim().is_empty()),
            reasons,
            error_type,
        }),
    }
}

/// Refuses, before anything runs, every operation with a path that has a
/// component `refuses` names a reason for (git's own rules about names,
/// `git::paths::refused_name`): the task is skipped as `protected_path`,
/// a block whole, the others untouched.
pub fn refuse_names(tasks: Vec<Task>, refuses: &dyn Fn(&str) -> Option<String>) -> Vec<Task> {
    const TYPE: &str = "protected_path";
    let reason = |step: &Step| -> Option<String> {
        // A path outside the repository (--allow-escape) is not a tree's;
        // the root ("") has no name.
        step.op
            .paths()
            .into_iter()
            .filter(|p| !p.escapes() && !p.as_str().is_empty())
            .find_map(|path| {
                path.components().find_map(|name| {
                    refuses(name).map(|why| {
                        format!(
                            "{TYPE}: git refuses the name {name:?} in {:?}: {why}",
                            path.as_str()
                        )
                    })
                })
            })
    };
    tasks
        .into_iter()
        .map(|task| match task {
            Task::Single(step) => match reason(&step) {
                Some(why) => Task::Skipped {
                    task: step.task,
                    line: step.line,
                    skip: Skip {
                        kind: step.op.kind(),
                        target: step.op.target(),
                        reasons: vec![(step.line, why)],
                        error_type: Some(TYPE),
                    },
                },
                None => Task::Single(step),
            },
            Task::Block { task, line, steps } => {
                let reasons: Vec<(u32, String)> = steps
                    .iter()
                    .filter_map(|s| {
                        reason(s).map(|why| (s.line, format!("task {}: {why}", s.task)))
                    })
                    .collect();
                if reasons.is_empty() {
                    Task::Block { task, line, steps }
                } else {
                    Task::Skipped {
                        task,
                        line,
                        skip: Skip {
                            kind: OpKind::Tasks,
                            target: None,
                            reasons,
                            error_type: Some(TYPE),
                        },
                    }
                }
            }
            other => other,
        })
        .collect()
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
                    target: step.op.target(),
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
    fn absolute_paths_inside_a_root_are_taken_relative_to_it() {
        let roots = ["/home/u/repo".to_string(), "/real/repo/".to_string()];
        let draft = |path: &str| {
            Draft::new(
                TaskId { top: 1, sub: None },
                1,
                OpKind::Write,
                Action::Write {
                    path: path.to_string(),
                    content: "".into(),
                    append: false,
                },
            )
        };
        let planned = |path: &str| match plan_in(&[draft(path)], false, &roots).remove(0) {
            Task::Single(step) => Ok(step.op.target().unwrap_or_default()),
            Task::Skipped { skip, .. } => Err(skip.error_type),
            Task::Block { .. } => unreachable!(),
        };
        assert_eq!(planned("/home/u/repo/src/a.rs"), Ok("src/a.rs".to_string()));
        assert_eq!(planned("/real/repo/a.rs"), Ok("a.rs".to_string()));
        assert_eq!(planned("/home/u/repository/a.rs"), Err(Some("path_escape")));
        assert_eq!(planned("/home/u/repo/../x"), Err(Some("path_escape")));
        assert_eq!(planned("/home/u/repo"), Err(Some("path_escape")));
        assert_eq!(planned("/etc/passwd"), Err(Some("path_escape")));
        assert_eq!(
            planned("/home/u/repo/.git/config"),
            Err(Some("protected_path"))
        );
        // Without roots (no working tree, or a syntax that asks for
        // relative paths) every absolute path is refused.
        assert!(matches!(
            plan(&[draft("/home/u/repo/a.rs")], false).remove(0),
            Task::Skipped { .. }
        ));
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
        for raw in ["a\tb.txt", "new\nline", "esc\u{1b}[31m", "del\u{7f}"] {
            assert_eq!(kind(raw), Err("invalid_path"), "{raw:?}");
        }
        let long = "x".repeat(256);
        assert_eq!(kind(&format!("d/{long}")), Err("invalid_path"));
        assert!(repo_path(&"x".repeat(255)).is_ok());
        assert_eq!(kind(&"d/".repeat(4097)), Err("invalid_path"));
        for raw in [
            ".git/config",
            ".GIT/hooks/x",
            "sub/.Git/x",
            ".clada/allowed-commands.json",
            ".CLADA/x",
            ".cl\u{200c}ada/config.toml",
            ".clada./x",
            ".clada /x",
            "CLADA~1/x",
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
        plan(
            &crate::syntax::csl::drafts(&reply, &Delimiters::default()),
            false,
        )
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
