//! The action vocabulary SHAM/NESL and TELT share (syntaxes.md §3): an
//! action name with named parameters, turned into plan steps.
//!
//! Owns which actions exist, which parameters each takes (the names the
//! original NESL tooling prompted models with: `path`, `old_text`,
//! `new_text`, `old_path`, `new_path`, `paths`, `base_path`, `code`,
//! `lang`, `cwd`, …), what each becomes in the plan, and the messages for
//! a missing, doubled or bad parameter. The two readers only find the
//! names and values in their own syntax; they decide nothing here. Paths
//! stay as written: `plan` checks them for every syntax.

use std::borrow::Cow;

use crate::csl::validate::Count;
use crate::csl::{Diagnostic, DiagnosticKind, OpKind, Span, TaskId};
use crate::plan::{Action, Draft, Text};

use super::lines::Line;

/// How names are spelled in a syntax: SHAM writes `file_write` and
/// `old_text`, TELT `FILE_WRITE` and `OLD_TEXT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Sham,
    Telt,
}

impl Style {
    /// `name` as this syntax spells it.
    pub fn spell(self, name: &str) -> Cow<'static, str> {
        match self {
            Style::Sham => Cow::Owned(name.to_string()),
            Style::Telt => Cow::Owned(name.to_ascii_uppercase()),
        }
    }

    /// The vocabulary's (lower-case) name for `written`, if it is spelled
    /// the way this syntax spells names.
    fn canonical(self, written: &str) -> Option<String> {
        let ok = match self {
            Style::Sham => !written.bytes().any(|b| b.is_ascii_uppercase()),
            Style::Telt => !written.bytes().any(|b| b.is_ascii_lowercase()),
        };
        ok.then(|| written.to_ascii_lowercase())
    }
}

/// One parameter as written: its name, the line it starts on, and its
/// values (SHAM: always one; TELT: one per time it is given; none when
/// the reader could not read the value and said so).
#[derive(Debug, Clone)]
pub struct Param<'t> {
    pub name: &'t str,
    pub line: u32,
    /// Byte offset of the name in the reply.
    pub at: usize,
    pub values: Vec<Cow<'t, str>>,
}

/// One action as written.
#[derive(Debug, Clone)]
pub struct Call<'t> {
    pub name: &'t str,
    /// The line that names the action.
    pub line: u32,
    /// Byte offset of the name in the reply.
    pub at: usize,
    pub params: Vec<Param<'t>>,
}

/// One plan operation an action becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step<'a> {
    pub kind: OpKind,
    pub action: Action<'a>,
    /// What the report names when the task is skipped.
    pub target: Option<String>,
}

/// Something wrong with an action, at a line of the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u32,
    /// Byte offset in the reply where the problem is.
    pub at: usize,
    pub kind: DiagnosticKind,
    pub message: String,
    pub hint: String,
    /// The stable error type of the skipped task, when there is one
    /// (`unsupported_action`).
    pub error_type: Option<&'static str>,
}

/// What an action's problems leave of it: the kind of operation it meant
/// (for the report), its target if known, and the problems.
#[derive(Debug, Clone)]
pub struct Broken {
    pub kind: OpKind,
    pub target: Option<String>,
    pub problems: Vec<Problem>,
    /// Warnings that do not stop the action (unknown parameters).
    pub warnings: Vec<Problem>,
}

/// A built action: its steps, and warnings that did not stop it.
#[derive(Debug, Clone)]
pub struct Built<'a> {
    pub steps: Vec<Step<'a>>,
    pub warnings: Vec<Problem>,
}

/// Required, optional, list (one value per line, or one per time given).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    Required,
    Optional,
    /// Required; each non-blank line of each value is one item.
    List,
}

use Need::{List, Optional, Required};

/// An action's name, the operation it is, and its parameters.
type ActionDef = (&'static str, OpKind, &'static [(&'static str, Need)]);

/// The actions the vocabulary knows, with their parameters.
const ACTIONS: &[ActionDef] = &[
    (
        "file_write",
        OpKind::Write,
        &[("path", Required), ("content", Required)],
    ),
    (
        "file_append",
        OpKind::Write,
        &[("path", Required), ("content", Required)],
    ),
    (
        "file_replace_text",
        OpKind::Search,
        &[
            ("path", Required),
            ("old_text", Required),
            ("new_text", Required),
        ],
    ),
    (
        "file_replace_all_text",
        OpKind::Search,
        &[
            ("path", Required),
            ("old_text", Required),
            ("new_text", Required),
            ("count", Optional),
        ],
    ),
    (
        "files_replace_all_text",
        OpKind::Search,
        &[
            ("paths", List),
            ("old_text", Required),
            ("new_text", Required),
        ],
    ),
    ("file_delete", OpKind::Delete, &[("path", Required)]),
    (
        "file_move",
        OpKind::Move,
        &[("old_path", Required), ("new_path", Required)],
    ),
    ("dir_create", OpKind::Mkdir, &[("path", Required)]),
    ("dir_delete", OpKind::Delete, &[("path", Required)]),
    ("file_read", OpKind::Read, &[("path", Required)]),
    ("files_read", OpKind::Read, &[("paths", List)]),
    ("ls", OpKind::Read, &[("path", Optional)]),
    (
        "grep",
        OpKind::Read,
        &[
            ("pattern", Required),
            ("path", Optional),
            ("include", Optional),
        ],
    ),
    (
        "glob",
        OpKind::Read,
        &[("pattern", Required), ("base_path", Optional)],
    ),
    (
        "exec",
        OpKind::Run,
        &[
            ("code", Required),
            ("lang", Required),
            ("cwd", Optional),
            // Accepted and ignored: RUN's policy decides what runs, its
            // report always shows the output.
            ("version", Optional),
            ("return_output", Optional),
        ],
    ),
    // TELT's name for a write: `FILE` and `CONTENT`.
    (
        "create_file",
        OpKind::Write,
        &[("file", Required), ("content", Required)],
    ),
];

/// Actions of the original tooling that git-clada knows but does not run:
/// the working-context actions (clada has no context), edits by parent
/// node or line numbers, and git history actions (clada's own commands
/// do those).
const UNSUPPORTED: &[&str] = &[
    "context_add",
    "context_remove",
    "context_list",
    "context_prune",
    "context_clear",
    "files_replace_text_in_parents",
    "file_replace_text_range",
    "file_replace_lines",
    "file_read_numbered",
    "git_squash",
    "undo",
    "git_step_back",
    "git_step_forward",
];

/// The names of every action this vocabulary runs, as `style` spells
/// them (for hints).
pub fn names(style: Style) -> String {
    ACTIONS
        .iter()
        .filter(|(name, ..)| *name != "create_file" || style == Style::Telt)
        .map(|(name, ..)| style.spell(name).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The interpreters `exec` runs, by `lang` (case-insensitive): the program
/// and its option that takes code as an argument.
pub const INTERPRETERS: &[(&[&str], &str, &str)] = &[
    (&["python", "python3", "py"], "python3", "-c"),
    (&["javascript", "js", "node", "nodejs"], "node", "-e"),
    (&["bash", "sh", "shell"], "bash", "-c"),
];

/// Builds the steps of one action.
pub fn build<'t>(call: &Call<'t>, style: Style) -> Result<Built<'t>, Broken> {
    let Some(name) = style.canonical(call.name) else {
        return Err(broken_alone(
            OpKind::Tasks,
            (call.line, call.at),
            DiagnosticKind::UnknownAction,
            format!(
                "{} is not spelled as {} names actions",
                call.name,
                title(style)
            ),
            format!(
                "write the action name in {} case: {}",
                if style == Style::Sham {
                    "lower"
                } else {
                    "upper"
                },
                style.spell(&call.name.to_ascii_lowercase())
            ),
            None,
        ));
    };
    if UNSUPPORTED.contains(&name.as_str()) {
        return Err(broken_alone(
            OpKind::Tasks,
            (call.line, call.at),
            DiagnosticKind::UnsupportedAction,
            format!(
                "the action {} is not supported by git-clada; this block was skipped",
                call.name
            ),
            format!(
                "use one of: {} (git-clada keeps no working context; edit by text, not by line numbers)",
                names(style)
            ),
            Some("unsupported_action"),
        ));
    }
    let Some(&(_, kind, params)) = ACTIONS
        .iter()
        .find(|(n, ..)| *n == name && (*n != "create_file" || style == Style::Telt))
    else {
        return Err(broken_alone(
            OpKind::Tasks,
            (call.line, call.at),
            DiagnosticKind::UnknownAction,
            format!("unknown action {}", call.name),
            format!("use one of: {}", names(style)),
            None,
        ));
    };
    let mut args = Args {
        call,
        style,
        problems: Vec::new(),
        warnings: Vec::new(),
        values: Vec::new(),
    };
    args.read(params);
    let target = args
        .single("path")
        .or_else(|| args.single("file"))
        .or_else(|| args.single("old_path"))
        .map(|p| p.trim().to_string());
    // A parameter without values is one the reader could not read (and
    // reported): the others are checked, but nothing is built on a guess.
    let unreadable = call.params.iter().any(|p| p.values.is_empty());
    let steps = if args.problems.is_empty() && !unreadable {
        args.steps(&name)
    } else {
        Vec::new()
    };
    if args.problems.is_empty() && !unreadable {
        Ok(Built {
            steps,
            warnings: args.warnings,
        })
    } else {
        Err(Broken {
            kind,
            target,
            problems: args.problems,
            warnings: args.warnings,
        })
    }
}

fn title(style: Style) -> &'static str {
    match style {
        Style::Sham => "SHAM",
        Style::Telt => "TELT",
    }
}

fn broken_alone(
    kind: OpKind,
    (line, at): (u32, usize),
    code: DiagnosticKind,
    message: String,
    hint: String,
    error_type: Option<&'static str>,
) -> Broken {
    Broken {
        kind,
        target: None,
        problems: vec![Problem {
            line,
            at,
            kind: code,
            message,
            hint,
            error_type,
        }],
        warnings: Vec::new(),
    }
}

/// The parameters of one call, checked against its action's list.
struct Args<'c, 't> {
    call: &'c Call<'t>,
    style: Style,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    /// Each known parameter's (canonical name, values).
    values: Vec<(&'static str, &'c [Cow<'t, str>])>,
}

impl<'c, 't> Args<'c, 't> {
    fn problem(
        &mut self,
        (line, at): (u32, usize),
        kind: DiagnosticKind,
        message: String,
        hint: String,
    ) {
        self.problems.push(Problem {
            line,
            at,
            kind,
            message,
            hint,
            error_type: None,
        });
    }

    fn read(&mut self, params: &[(&'static str, Need)]) {
        let call = self.call;
        for param in &call.params {
            let known = self
                .style
                .canonical(param.name)
                .and_then(|n| params.iter().find(|(p, _)| *p == n));
            let Some(&(name, need)) = known else {
                let expected = params
                    .iter()
                    .map(|(p, _)| self.style.spell(p).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ");
                self.warnings.push(Problem {
                    line: param.line,
                    at: param.at,
                    kind: DiagnosticKind::UnknownParameter,
                    message: format!(
                        "{} takes no parameter {}; it was ignored",
                        call.name, param.name
                    ),
                    hint: format!("the parameters of {} are: {expected}", call.name),
                    error_type: None,
                });
                continue;
            };
            if param.values.len() > 1 && need != List {
                self.problem(
                    (param.line, param.at),
                    DiagnosticKind::DuplicateKey,
                    format!(
                        "{} is given {} times; {} takes one",
                        param.name,
                        param.values.len(),
                        call.name
                    ),
                    format!("give {} once", param.name),
                );
                // Read as given once, so that it is not also "missing".
                self.values.push((name, &param.values[..1]));
                continue;
            }
            self.values.push((name, &param.values));
        }
        for &(name, need) in params {
            if need != Optional && !self.values.iter().any(|(n, _)| *n == name) {
                let spelled = self.style.spell(name);
                let example = match self.style {
                    Style::Sham => format!("{spelled} = \"…\""),
                    Style::Telt => format!("--{spelled} ID-- and the value on the lines after it"),
                };
                self.problem(
                    (call.line, call.at),
                    DiagnosticKind::MissingParameter,
                    format!("{} needs the parameter {spelled}", call.name),
                    format!("add {example}"),
                );
            }
        }
    }

    /// The one value of `name`, if given.
    fn single(&self, name: &str) -> Option<&'c str> {
        self.first(name).map(|v| v.as_ref())
    }

    /// The value of a required parameter (checked by `read`), borrowed
    /// from the reply where the reader found it as one slice of it.
    fn text(&self, name: &str) -> Text<'t> {
        self.first(name).cloned().unwrap_or_default()
    }

    /// The first value of `name`, as read.
    fn first(&self, name: &str) -> Option<&'c Cow<'t, str>> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.first())
    }

    /// A path value: surrounding whitespace (a line break before the
    /// closing delimiter) is not part of it.
    fn path(&self, name: &str) -> String {
        self.single(name).unwrap_or_default().trim().to_string()
    }

    /// The items of a list parameter: each non-blank line of each value.
    fn list(&self, name: &str) -> Vec<String> {
        self.values
            .iter()
            .filter(|(n, _)| *n == name)
            .flat_map(|(_, values)| values.iter())
            .flat_map(|v| v.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Where parameter `name` is written (the action's line if nowhere).
    fn line_of(&self, name: &str) -> (u32, usize) {
        let spelled = self.style.spell(name);
        self.call
            .params
            .iter()
            .find(|p| p.name == spelled)
            .map_or((self.call.line, self.call.at), |p| (p.line, p.at))
    }

    fn steps(&mut self, name: &str) -> Vec<Step<'t>> {
        let step = |kind, action, target: Option<String>| Step {
            kind,
            action,
            target,
        };
        let path = self.path("path");
        let search = |path: String, count: Count, this: &Self| Action::Search {
            path,
            pattern: this.text("old_text"),
            to: None,
            replacement: this.text("new_text"),
            count,
        };
        if matches!(
            name,
            "file_replace_text" | "file_replace_all_text" | "files_replace_all_text"
        ) && self.single("old_text").is_some_and(str::is_empty)
        {
            let line = self.line_of("old_text");
            let spelled = self.style.spell("old_text");
            self.problem(
                line,
                DiagnosticKind::InvalidParameter,
                format!("{spelled} is empty: there is nothing to find"),
                format!(
                    "give the exact text to replace in {spelled}; to write a whole file use {}",
                    self.style.spell("file_write")
                ),
            );
            return Vec::new();
        }
        match name {
            "file_write" | "file_append" | "create_file" => {
                let path = if name == "create_file" {
                    self.path("file")
                } else {
                    path
                };
                let target = Some(path.clone());
                vec![step(
                    OpKind::Write,
                    Action::Write {
                        path,
                        content: self.text("content"),
                        append: name == "file_append",
                    },
                    target,
                )]
            }
            "file_replace_text" => {
                let target = Some(path.clone());
                vec![step(
                    OpKind::Search,
                    search(path, Count::Exactly(1), self),
                    target,
                )]
            }
            "file_replace_all_text" => {
                let count = match self.single("count").map(str::trim) {
                    None | Some("") => Count::All,
                    Some(n) => match n.parse::<u32>() {
                        Ok(n) if n > 0 => Count::Exactly(n),
                        _ => {
                            let line = self.line_of("count");
                            let spelled = self.style.spell("count");
                            self.problem(
                                line,
                                DiagnosticKind::InvalidParameter,
                                format!("{spelled} must be a whole number of 1 or more, not {n:?}"),
                                format!(
                                    "write the number of matches expected ({spelled} = \"2\"), or leave {spelled} out to replace every match"
                                ),
                            );
                            return Vec::new();
                        }
                    },
                };
                let target = Some(path.clone());
                vec![step(OpKind::Search, search(path, count, self), target)]
            }
            "files_replace_all_text" => self
                .list("paths")
                .into_iter()
                .map(|p| {
                    let target = Some(p.clone());
                    step(OpKind::Search, search(p, Count::All, self), target)
                })
                .collect(),
            "file_delete" => vec![step(
                OpKind::Delete,
                Action::Delete {
                    path: path.clone(),
                    recursive: false,
                },
                Some(path),
            )],
            // Not recursive: a directory with files in it fails with
            // `directory_not_empty`.
            "dir_delete" => vec![step(
                OpKind::Delete,
                Action::Delete {
                    path: path.clone(),
                    recursive: false,
                },
                Some(path),
            )],
            "file_move" => {
                let (from, to) = (self.path("old_path"), self.path("new_path"));
                let target = Some(format!("{from} -> {to}"));
                vec![step(
                    OpKind::Move,
                    Action::Move {
                        from,
                        to,
                        overwrite: true,
                    },
                    target,
                )]
            }
            "dir_create" => vec![step(
                OpKind::Mkdir,
                Action::Mkdir { path: path.clone() },
                Some(path),
            )],
            "file_read" => vec![step(
                OpKind::Read,
                Action::ReadFiles {
                    paths: vec![path.clone()],
                },
                Some(path),
            )],
            "files_read" => {
                let paths = self.list("paths");
                let target = Some(paths.join(", "));
                vec![step(OpKind::Read, Action::ReadFiles { paths }, target)]
            }
            "ls" => vec![step(OpKind::Read, Action::List { path }, None)],
            "grep" => vec![step(
                OpKind::Read,
                Action::Grep {
                    pattern: self.text("pattern").into_owned(),
                    path,
                    include: self
                        .single("include")
                        .map(str::trim)
                        .filter(|i| !i.is_empty())
                        .map(str::to_owned),
                },
                None,
            )],
            "glob" => vec![step(
                OpKind::Read,
                Action::Glob {
                    pattern: self.text("pattern").trim().to_string(),
                    base: self.path("base_path"),
                },
                None,
            )],
            "exec" => self.exec().into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// `exec`: a RUN of the interpreter on the code, so that RUN's policy
    /// (approval of the exact command line) decides whether it runs.
    fn exec(&mut self) -> Option<Step<'t>> {
        let lang = self.path("lang");
        let Some(&(_, program, flag)) = INTERPRETERS
            .iter()
            .find(|(names, ..)| names.iter().any(|n| n.eq_ignore_ascii_case(&lang)))
        else {
            let line = self.line_of("lang");
            let spelled = self.style.spell("lang");
            self.problem(
                line,
                DiagnosticKind::InvalidParameter,
                format!("exec cannot run {spelled} {lang:?}"),
                format!("write {spelled} as python, javascript or bash"),
            );
            return None;
        };
        let code = self.text("code");
        if code.trim().is_empty() {
            let line = self.line_of("code");
            let spelled = self.style.spell("code");
            self.problem(
                line,
                DiagnosticKind::InvalidParameter,
                format!("{spelled} is empty: there is nothing to run"),
                format!("give the program to run in {spelled}"),
            );
            return None;
        }
        let script = command_line(program, flag, &code);
        let dir = self
            .single("cwd")
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned);
        Some(Step {
            kind: OpKind::Run,
            target: crate::plan::first_command(&script),
            action: Action::Run {
                dir,
                script: script.into(),
            },
        })
    }
}

/// The one command line that runs `code` with `program`.
///
/// RUN reads one command per line and refuses `$(` and backticks anywhere
/// in a line (apply.md §6), so code that is one plain line is passed as is
/// (`python3 -c 'print(1)'`), and any other code is passed escaped on one
/// line and decoded by the interpreter itself: Python and JavaScript get a
/// string literal they evaluate, bash a `%b` string it expands with
/// `printf -v` and evaluates. The command line is what the user approves.
pub fn command_line(program: &str, flag: &str, code: &str) -> String {
    let plain = !code.contains(['\n', '\r', '`'])
        && !code.contains("$(")
        && !code.ends_with('\\')
        && !code.chars().any(char::is_control);
    if plain {
        return format!("{program} {flag} {}", shell_words::quote(code));
    }
    match program {
        "bash" => format!(
            "{program} {flag} {} bash {}",
            shell_words::quote("printf -v c %b \"$1\"; eval \"$c\""),
            shell_words::quote(&escaped(code, false))
        ),
        "python3" => format!(
            "{program} {flag} {}",
            shell_words::quote(&format!("exec(\"{}\")", escaped(code, true)))
        ),
        _ => format!(
            "{program} {flag} {}",
            shell_words::quote(&format!("eval(\"{}\")", escaped(code, true)))
        ),
    }
}

/// `code` on one line: backslashes doubled, line breaks, tabs and other
/// control characters, `$` and backticks written as escapes (which
/// Python, JavaScript and bash's `printf %b` all decode); `quote`: `"`
/// too, for a string literal.
fn escaped(code: &str, quote: bool) -> String {
    let mut out = String::with_capacity(code.len() + code.len() / 8);
    for c in code.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '"' if quote => out.push_str("\\\""),
            '$' | '`' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// A block as a reader found it: its actions and its syntax problems.
#[derive(Debug, Clone, Default)]
pub struct BlockRead<'t> {
    /// The opener's line and byte offset.
    pub line: u32,
    pub at: usize,
    pub calls: Vec<Call<'t>>,
    /// Problems of the block's syntax: any one skips the block.
    pub problems: Vec<Problem>,
}

/// The draft of one block (task `top`): one operation, an atomic group
/// when it holds several, or an invalid draft with every reason when
/// anything in it is wrong. Its diagnostics go to `out`.
pub fn draft<'t>(
    text: &str,
    top: u32,
    block: BlockRead<'t>,
    style: Style,
    out: &mut crate::csl::Diagnostics,
) -> Draft<'t> {
    let task = TaskId { top, sub: None };
    let mut problems = block.problems;
    let mut steps: Vec<(u32, Step)> = Vec::new();
    let mut kinds = Vec::new();
    let mut target = None;
    for call in &block.calls {
        match build(call, style) {
            Ok(built) => {
                out.extend(built.warnings.iter().map(|w| diagnostic(text, w, task)));
                kinds.extend(built.steps.iter().map(|s| s.kind));
                target = target.or_else(|| built.steps.first().and_then(|s| s.target.clone()));
                steps.extend(built.steps.into_iter().map(|s| (call.line, s)));
            }
            Err(broken) => {
                out.extend(broken.warnings.iter().map(|w| diagnostic(text, w, task)));
                kinds.push(broken.kind);
                target = target.or(broken.target);
                problems.extend(broken.problems);
            }
        }
    }
    // One operation is itself; several are a group.
    let kind = match kinds.as_slice() {
        [one] if steps.len() <= 1 => *one,
        _ => OpKind::Tasks,
    };
    out.extend(problems.iter().map(|p| diagnostic(text, p, task)));
    if !problems.is_empty() {
        return Draft {
            task,
            line: block.line,
            kind,
            target: if kind == OpKind::Tasks { None } else { target },
            action: None,
            invalid: problems
                .iter()
                .map(|p| {
                    let why = out.reason(p.line, p.kind, || {
                        format!("{} (hint: {})", p.message, p.hint)
                    });
                    (p.line, why)
                })
                .collect(),
            error_type: problems.iter().find_map(|p| p.error_type),
        };
    }
    if steps.len() == 1
        && let Some((_, step)) = steps.pop()
    {
        return Draft {
            target: step.target,
            ..Draft::new(task, block.line, step.kind, step.action)
        };
    }
    let children = steps
        .into_iter()
        .zip(1u32..)
        .map(|((line, step), sub)| Draft {
            target: step.target,
            ..Draft::new(
                TaskId {
                    top,
                    sub: Some(sub),
                },
                line,
                step.kind,
                step.action,
            )
        })
        .collect();
    Draft::new(task, block.line, OpKind::Tasks, Action::Block(children))
}

/// A problem on `line`, pointing at byte `at`.
pub fn problem(
    line: &Line<'_>,
    at: usize,
    kind: DiagnosticKind,
    message: String,
    hint: String,
) -> Problem {
    Problem {
        line: line.no,
        at,
        kind,
        message,
        hint,
        error_type: None,
    }
}

/// An opener off column 1 (of `syntax`: SHAM, TELT) is prose, not a
/// block: said (with `hint`) and listed among the dropped blocks.
pub fn indented_opener(
    text: &str,
    line: &Line<'_>,
    syntax: super::Syntax,
    hint: &str,
    diagnostics: &mut crate::csl::Diagnostics,
    dropped: &mut Vec<super::Dropped>,
) {
    let title = syntax.title();
    let at = line.start + (line.text.len() - line.text.trim_start().len());
    let p = problem(
        line,
        at,
        DiagnosticKind::IndentedMarker,
        format!("a {title} opener off column 1 is not read; this block was not applied"),
        hint.to_string(),
    );
    let mut d = diagnostic(text, &p, TaskId { top: 0, sub: None });
    d.task = None;
    diagnostics.push(d);
    dropped.push(super::Dropped {
        line: line.no,
        kind: OpKind::Tasks,
        why: super::Why::IndentedOpener(syntax),
    });
}

/// The diagnostic of a problem: its line shown from the problem's place.
pub fn diagnostic(text: &str, p: &Problem, task: TaskId) -> Diagnostic {
    let at = floor_char(text, p.at);
    let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |n| n + 1);
    let end = memchr::memchr2(b'\n', b'\r', &text.as_bytes()[at..]).map_or(text.len(), |n| at + n);
    Diagnostic {
        kind: p.kind,
        line: p.line,
        column: crate::csl::column(text, line_start, at),
        line_start,
        span: Span::new(at, end),
        message: p.message.clone(),
        hint: Some(p.hint.clone()),
        operation: None,
        task: Some(task),
    }
}

/// `at`, moved back to the start of the character it falls in.
pub fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'t>(name: &'t str, params: &[(&'t str, &'t str)]) -> Call<'t> {
        Call {
            name,
            line: 1,
            at: 0,
            params: params
                .iter()
                .enumerate()
                .map(|(i, (n, v))| Param {
                    name: n,
                    line: i as u32 + 2,
                    at: 0,
                    values: vec![Cow::Borrowed(*v)],
                })
                .collect(),
        }
    }

    fn codes(broken: &Broken) -> Vec<(DiagnosticKind, u32)> {
        broken.problems.iter().map(|p| (p.kind, p.line)).collect()
    }

    #[test]
    fn each_action_becomes_its_plan_operation() {
        let cases: Vec<(Call<'_>, Action)> = vec![
            (
                call("file_append", &[("path", "a"), ("content", "x")]),
                Action::Write {
                    path: "a".into(),
                    content: "x".into(),
                    append: true,
                },
            ),
            (
                call(
                    "file_replace_all_text",
                    &[
                        ("path", "a"),
                        ("old_text", "x"),
                        ("new_text", "y"),
                        ("count", "2"),
                    ],
                ),
                Action::Search {
                    path: "a".into(),
                    pattern: "x".into(),
                    to: None,
                    replacement: "y".into(),
                    count: Count::Exactly(2),
                },
            ),
            (
                call("file_move", &[("old_path", "a"), ("new_path", "b")]),
                Action::Move {
                    from: "a".into(),
                    to: "b".into(),
                    overwrite: true,
                },
            ),
            (
                call("glob", &[("pattern", "**/*.rs"), ("base_path", "src")]),
                Action::Glob {
                    pattern: "**/*.rs".into(),
                    base: "src".into(),
                },
            ),
            (
                call("files_read", &[("paths", "a\n\n  b  \n")]),
                Action::ReadFiles {
                    paths: vec!["a".into(), "b".into()],
                },
            ),
        ];
        for (call, action) in cases {
            let built = build(&call, Style::Sham).unwrap();
            assert_eq!(built.steps.len(), 1);
            assert_eq!(built.steps[0].action, action, "{}", call.name);
        }
    }

    #[test]
    fn files_replace_all_text_is_one_search_per_path() {
        let c = call(
            "files_replace_all_text",
            &[("paths", "a\nb\n"), ("old_text", "x"), ("new_text", "y")],
        );
        let built = build(&c, Style::Sham).unwrap();
        let paths: Vec<_> = built
            .steps
            .iter()
            .map(|s| match &s.action {
                Action::Search { path, count, .. } => (path.as_str(), *count),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(paths, [("a", Count::All), ("b", Count::All)]);
    }

    #[test]
    fn problems_name_their_line_and_kind() {
        let c = call("file_replace_text", &[("path", "a"), ("old_text", "x")]);
        let broken = build(&c, Style::Sham).unwrap_err();
        assert_eq!(codes(&broken), [(DiagnosticKind::MissingParameter, 1)]);
        let c = call("context_add", &[("path", "a")]);
        let broken = build(&c, Style::Sham).unwrap_err();
        assert_eq!(codes(&broken), [(DiagnosticKind::UnsupportedAction, 1)]);
        assert_eq!(broken.problems[0].error_type, Some("unsupported_action"));
        let c = call("file_wrte", &[("path", "a")]);
        assert_eq!(
            codes(&build(&c, Style::Sham).unwrap_err()),
            [(DiagnosticKind::UnknownAction, 1)]
        );
        let c = call(
            "file_replace_all_text",
            &[
                ("path", "a"),
                ("old_text", "x"),
                ("new_text", "y"),
                ("count", "two"),
            ],
        );
        assert_eq!(
            codes(&build(&c, Style::Sham).unwrap_err()),
            [(DiagnosticKind::InvalidParameter, 5)]
        );
        // TELT spells names in upper case; SHAM's spelling is refused.
        let c = call("FILE_DELETE", &[("PATH", "a")]);
        assert!(build(&c, Style::Telt).is_ok());
        assert!(build(&c, Style::Sham).is_err());
        // CREATE_FILE is TELT's only.
        let c = call("create_file", &[("file", "a"), ("content", "x")]);
        assert!(build(&c, Style::Sham).is_err());
    }

    #[test]
    fn unknown_parameters_are_warnings() {
        let c = call("file_delete", &[("path", "a"), ("reason", "old")]);
        let built = build(&c, Style::Sham).unwrap();
        assert_eq!(built.warnings.len(), 1);
        assert_eq!(built.warnings[0].kind, DiagnosticKind::UnknownParameter);
    }

    #[test]
    fn exec_runs_the_interpreter_on_one_command_line() {
        let c = call("exec", &[("code", "print(1)"), ("lang", "python")]);
        let built = build(&c, Style::Sham).unwrap();
        assert_eq!(
            built.steps[0].action,
            Action::Run {
                dir: None,
                script: "python3 -c 'print(1)'".into()
            }
        );
    }

    /// Every exec command line is one RUN command that RUN's splitter
    /// accepts, and its words give the interpreter the code back.
    #[test]
    fn exec_command_lines_survive_run_splitting() {
        for code in [
            "print(1)",
            "import os\nprint(\"a\\tb\", os.getcwd())\n",
            "echo $(pwd) `date`\nfor f in *; do echo \"$f\"; done",
            "x = '\\\\'\n\r\u{7}ü",
        ] {
            for (_, program, flag) in INTERPRETERS {
                let line = command_line(program, flag, code);
                let commands = crate::run::split::split(&line).unwrap();
                assert_eq!(commands.len(), 1, "{line}");
                let words = &commands[0].words;
                assert_eq!(&words[..2], [program.to_string(), flag.to_string()]);
                let decoded = match (*program, words.len()) {
                    (_, 3) if !code.contains('\n') => words[2].clone(),
                    ("bash", 5) => unescape(&words[4]),
                    (_, 3) => {
                        let inner = &words[2];
                        let body = inner
                            .strip_prefix("exec(\"")
                            .or_else(|| inner.strip_prefix("eval(\""))
                            .and_then(|s| s.strip_suffix("\")"))
                            .unwrap();
                        unescape(body)
                    }
                    _ => panic!("{line}"),
                };
                assert_eq!(decoded, code, "{line}");
            }
        }
    }

    /// The escapes `escaped` writes, decoded as the interpreters do.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    out.push(char::from(u8::from_str_radix(&hex, 16).unwrap()));
                }
                Some(other) => out.push(other),
                None => {}
            }
        }
        out
    }
}
