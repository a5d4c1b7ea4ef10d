//! The command line: argument definitions, one file per subcommand, and the
//! mapping of outcomes to exit codes.
//!
//! Each subcommand file has an `XxxArgs` (clap derive) and a `run_xxx`
//! returning an [`Outcome`] or a [`CliError`]. Nothing here parses CSL or
//! touches gix directly: it calls `csl` and `git`.

mod allow;
mod apply;
mod commands;
mod completions;
mod config;
mod guard;
mod hook;
mod input;
mod log;
mod mcp;
mod paint;
mod parse;
mod prompt;
mod push_reply;
mod settings;
mod squash;
mod status;
mod step;
mod undo;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use input::ReplyInput;

use crate::style::Painted;

/// Apply the file edits and commands an LLM writes in its reply, safely,
/// inside git history
///
/// Reads CSL (Clada Syntax Language) from a reply: WRITE, SEARCH/REPLACE,
/// RUN and TASKS operations between <---NAME---> and <---END---> markers.
/// Start with `git clada prompt` (a guide to give the model) and
/// `git clada parse reply.md` (check a reply without touching anything).
#[derive(Debug, Parser)]
#[command(
    name = "git-clada",
    bin_name = "git clada",
    version,
    max_term_width = 100
)]
pub struct Cli {
    /// When to colour the output (auto: on a terminal, unless NO_COLOR or
    /// git config color.ui say otherwise)
    #[arg(long, global = true, value_enum, value_name = "WHEN")]
    pub color: Option<paint::ColorWhen>,
    #[command(subcommand)]
    pub command: Command,

    // Progress is drawn only on a terminal, for work over a second
    // (checking out the scratch tree, a long RUN), and erased after.
    /// Show no progress lines on the terminal
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and validate a reply, and list every problem with a fix hint
    Parse(parse::ParseArgs),
    /// Print a CSL guide to paste into an LLM's system prompt
    Prompt(prompt::PromptArgs),
    /// Apply a reply to the current branch as pre and post commits
    Apply(apply::ApplyArgs),
    // The history commands take their help from their argument structs.
    Undo(undo::UndoArgs),
    Redo(undo::RedoArgs),
    Squash(squash::SquashArgs),
    StepBack(step::StepBackArgs),
    StepForward(step::StepForwardArgs),
    Status(status::StatusArgs),
    Log(log::LogArgs),
    Show(log::ShowArgs),
    /// Approve a command line for RUN, list or remove approvals
    Allow(allow::AllowArgs),
    /// Install, remove or run clada's git hooks
    ///
    /// `install` puts the client hook (post-commit: apply the CSL written in
    /// a commit message) or, with --server, the server hooks (pre-receive:
    /// reject pushed inbox notes with fatal CSL errors; post-receive: apply
    /// new inbox notes to the branches they are on, results in
    /// refs/notes/clada-results) into the hooks directory, core.hooksPath
    /// honoured. A hook that is not clada's is never overwritten without
    /// --chain or --force. git runs the other subcommands through the
    /// installed shims.
    ///
    /// Agents send replies to such a server with `git clada push-reply
    /// <remote> <branch> reply.md`, or by hand: a notes commit holding the
    /// reply as the note on the branch's tip, with the trailer
    /// `Clada-Branch: <branch>` in its message, pushed to
    /// refs/clada/inbox/<id> under an id of their own; the server answers
    /// at refs/clada/results/<id> (fetch it: the commit's message is the
    /// result, ending in the Clada-Status, Clada-Request, Clada-Branch and
    /// Clada-Post trailers) and deletes the request. Each request has its
    /// own reference, so agents pushing at once never make each other's
    /// pushes fail. A request whose post-receive was stopped is answered by
    /// the next push to the repository, or by `hook recover`. The shared
    /// inbox (a note in refs/notes/clada-inbox, pushed forced) still works.
    /// The hooks write branches past a forge's branch protection: name the
    /// ones requests may write with `git config clada.serverBranches
    /// 'agents/*'`. doc/hooks.md has the whole protocol.
    Hook(hook::HookArgs),
    // Its help is on its argument struct.
    PushReply(push_reply::PushReplyArgs),
    Completions(completions::CompletionsArgs),
    // Its help is on its argument struct.
    Mcp(mcp::McpArgs),
}

/// How a command ended, as the spec's exit statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything succeeded (exit 0).
    Success,
    /// Some task failed or was skipped, or something was invalid (exit 1).
    Failed,
    /// Fatal syntax error, bad arguments, unusable input (exit 2).
    Fatal,
    /// The branch moved during the apply; nothing was changed (exit 3).
    BranchMoved,
    /// `push-reply` only: the push broke after sending the request and the
    /// server could not say whether it has it; it may yet apply (exit 4).
    Unknown,
    /// `push-reply` only: the push failed before the request was sent (no
    /// connection to the server); nothing was applied (exit 5).
    NotSent,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Failed => 1,
            Outcome::Fatal => 2,
            Outcome::BranchMoved => 3,
            Outcome::Unknown => 4,
            Outcome::NotSent => 5,
        }
    }
}

/// An error that stops a command before it produced its result. Always
/// exit status 2, with a hint that names what to do next.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub message: String,
    pub hint: Option<String>,
}

impl CliError {
    /// An error saying `message`; an I/O error's `(os error N)` in it is
    /// dropped (`words`), whatever the caller passed on.
    pub fn new(message: impl Into<String>) -> CliError {
        CliError {
            message: crate::words::plain(&message.into()),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }
}

/// Every loose object gix writes allocates a deflate state (about 330 KB,
/// zeroed) and frees it; glibc maps a block that size fresh from the
/// kernel each time and gives it back at once, so each object pays some
/// 80 page faults (a server hook writes about eleven). A command is a
/// short-lived process: freed memory is kept for the next allocation
/// instead. Not in `git clada mcp`, which lives on.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets the allocator's thresholds (under its own
    // lock); the values are within what glibc accepts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Mcp(_)) {
        keep_freed_memory();
    }
    // What the hooks print goes to git (a pusher's `remote:` lines) and
    // into notes and commit messages: never coloured.
    let color = match cli.command {
        // So is what an MCP client gets (stdout is the protocol's there,
        // and file descriptor 1 becomes stderr, maybe a terminal).
        Command::Hook(_) | Command::Mcp(_) => Some(paint::ColorWhen::Never),
        _ => cli.color,
    };
    paint::choose(color);
    // The MCP server reports progress to its client, not on a terminal.
    let drawn = !cli.quiet && !matches!(cli.command, Command::Mcp(_));
    crate::progress::enable(drawn && std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let result = match cli.command {
        Command::Parse(args) => parse::run_parse(args),
        Command::Prompt(args) => prompt::run_prompt(args),
        Command::Apply(args) => apply::run_apply(args),
        Command::Undo(args) => undo::run_undo(args),
        Command::Redo(args) => undo::run_redo(args),
        Command::Squash(args) => squash::run_squash(args),
        Command::StepBack(args) => step::run_step_back(args),
        Command::StepForward(args) => step::run_step_forward(args),
        Command::Status(args) => status::run_status(args),
        Command::Log(args) => log::run_log(args),
        Command::Show(args) => log::run_show(args),
        Command::Allow(args) => allow::run_allow(args),
        Command::Hook(args) => hook::run_hook(args),
        Command::PushReply(args) => push_reply::run_push_reply(args),
        Command::Completions(args) => completions::run_completions(args),
        Command::Mcp(args) => mcp::run_mcp(args),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        Err(e) => {
            let palette = paint::stderr();
            let mut text = format!("{}: {}\n", Painted(palette.bad, "error"), e.message);
            if let Some(hint) = &e.hint {
                text.push_str(&format!("{}: {hint}\n", Painted(palette.hint, "hint")));
            }
            // Whoever ran us may have stopped listening (a pusher who hung
            // up): that is no reason to panic.
            let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
            ExitCode::from(Outcome::Fatal.exit_code())
        }
    }
}

thread_local! {
    /// Where this thread's command output goes instead of stdout, while
    /// `git clada mcp` runs a command for a tool call ([`captured`]).
    static CAPTURE: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with everything it writes through [`write_stdout`] kept
/// instead of printed, and returns it beside `f`'s result. Every
/// command writes its output through `write_stdout`, so the MCP server
/// can run a command in process and hand its output to the client.
pub(crate) fn captured<T>(f: impl FnOnce() -> T) -> (T, Vec<u8>) {
    let outer = CAPTURE.with(|c| c.replace(Some(Vec::new())));
    let result = f();
    let output = CAPTURE.with(|c| c.replace(outer)).unwrap_or_default();
    (result, output)
}

/// Writes to stdout, treating a closed pipe (`| head`) as a normal end.
pub(crate) fn write_stdout(
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), CliError> {
    if let Some(mut buffer) = CAPTURE.with(|c| c.borrow_mut().take()) {
        let result = f(&mut buffer);
        CAPTURE.with(|c| *c.borrow_mut() = Some(buffer));
        return result.map_err(|e| CliError::new(format!("cannot write the output: {e}")));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = f(&mut out).and_then(|()| std::io::Write::flush(&mut out));
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::new(format!("cannot write the output: {e}"))),
    }
}
