//! `git clada parse`: check a reply without applying anything.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use crate::csl::input::MAX_INPUT;
use crate::csl::{self, Counts, OpKind};
use crate::plan::{Action, Draft, Task};
use crate::syntax::Parsed;

use super::apply::{parse_input, syntax_choice};
use super::{CliError, Outcome, ReplyInput, settings, write_stdout};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Diagnostics as rustc shows them, then a one-line summary
    Text,
    /// The syntax tree and diagnostics as one JSON document
    Json,
}

/// Parse and validate a reply, and list every problem with a fix hint
///
/// Shows the syntax the reply is read as, and how many tasks `git clada
/// apply` would skip before running anything. Exit status: as apply's
/// would be for those: 0 when no task would be skipped (warnings are fine),
/// 1 when one would be (an invalid operation, a block dropped for another
/// syntax or a marker off column 1, a path the repository refuses) or when
/// there are no operations at all, 2 when a fatal error means nothing would
/// run (or the input is unusable).
#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// The reply: a file, or - for standard input (the default when stdin is not a terminal)
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// The reply's syntax [default: auto, or git config clada.syntax]
    #[arg(long, value_name = "NAME", value_parser = super::apply::syntax_names(true))]
    pub syntax: Option<String>,

    #[command(flatten)]
    pub delimiters: super::settings::DelimiterArgs,
}

pub fn run_parse(args: ParseArgs) -> Result<Outcome, CliError> {
    let delims = settings::delimiters(
        args.delimiters.start_delimiter.as_deref(),
        args.delimiters.end_delimiter.as_deref(),
    )?;
    let repo = crate::git::Repository::discover(std::path::Path::new("."))
        .ok()
        .flatten();
    let choice = syntax_choice(args.syntax.as_deref(), repo.as_ref())?;
    let mapped = args.input.as_deref().and_then(map_large_file);
    let input = match &mapped {
        Some((origin, _)) => ReplyInput::from_bytes(origin.clone(), Vec::new()),
        None => ReplyInput::read(args.input.as_deref(), "parse")?,
    };
    let bytes = mapped
        .as_ref()
        .map_or(&input.bytes[..], |(_, map)| &map[..]);
    let parsed = match input.too_large {
        Some(_) => parse_input(&input, choice, &delims),
        None => crate::syntax::check(bytes, choice, &delims),
    };
    // What apply would skip before anything runs: the same plan, from the
    // same root (the working tree, or for `--no-git` this directory).
    let root = match repo.as_ref().map(|r| r.workdir()) {
        Some(workdir) => workdir.map(Path::to_path_buf),
        None => std::env::current_dir().ok(),
    };
    let skips = Skips::planned(&parsed, root.as_deref(), &delims);
    match args.format {
        Format::Json => write_json(&parsed),
        Format::Text => write_stdout(|out| write_text_with(out, &parsed, &input.origin, skips)),
    }?;
    Ok(verdict(&parsed, skips))
}

/// `parse`'s text report of a reply to be applied in working tree `root`,
/// and its exit class: what the MCP server's `check` tool answers.
pub(crate) fn report(
    out: &mut dyn Write,
    parsed: &Parsed<'_>,
    origin: &str,
    root: Option<&Path>,
    delims: &csl::Delimiters,
) -> std::io::Result<Outcome> {
    let skips = Skips::planned(parsed, root, delims);
    write_text_with(out, parsed, origin, skips)?;
    Ok(verdict(parsed, skips))
}

/// The exit class of a parsed reply: apply's, for the tasks it would skip.
fn verdict(parsed: &Parsed<'_>, skips: Skips) -> Outcome {
    let counts = parsed.counts();
    if counts.fatal > 0 {
        Outcome::Fatal
    } else if counts.invalid > 0 || parsed.is_empty() || skips.skipped > 0 {
        Outcome::Failed
    } else {
        Outcome::Success
    }
}

/// The tasks of a reply, and how many of them apply would skip before
/// running anything.
#[derive(Debug, Clone, Copy, Default)]
struct Skips {
    tasks: usize,
    skipped: usize,
}

impl Skips {
    /// Plans `parsed` as apply would in working tree `root` (none after a
    /// fatal problem: nothing would run). `delims` are the reply's.
    fn planned(parsed: &Parsed<'_>, root: Option<&Path>, delims: &csl::Delimiters) -> Skips {
        if parsed.counts().fatal > 0 {
            return Skips::default();
        }
        if let Some(reply) = parsed.csl.as_ref().filter(|_| parsed.drafts.is_empty()) {
            // `check` made no drafts (syntax::check): plan them one at a
            // time, none kept. CSL paths are relative, so the root does
            // not matter; a dropped block is a skipped task of its own.
            let skipped = crate::syntax::csl::each_draft(reply, delims)
                .filter(|d| matches!(crate::transaction::task_of(d), Task::Skipped { .. }))
                .count();
            return Skips {
                tasks: reply.operations.len() + parsed.dropped.len(),
                skipped: skipped + parsed.dropped.len(),
            };
        }
        let tasks = crate::transaction::tasks_of(parsed, false, root);
        Skips {
            tasks: tasks.len(),
            skipped: tasks
                .iter()
                .filter(|t| matches!(t, Task::Skipped { .. }))
                .count(),
        }
    }
}

/// Files smaller than this are read: mapping one costs about as much.
const MAP_MIN: u64 = 1 << 20;

/// Maps `path` into memory if it is a regular file of at least [`MAP_MIN`]
/// bytes and within the input limit; `None` otherwise, or if mapping fails
/// (reading it will then say why, if it cannot be read either). Returns
/// the name for diagnostics and the mapping.
///
/// Reading a large reply copies it into fresh memory, whose pages the
/// kernel zeroes and maps one by one: for a 20 MB reply about 9 ms, a third
/// of a whole `parse`. A mapping uses the page cache's pages as they are.
fn map_large_file(path: &Path) -> Option<(String, memmap2::Mmap)> {
    if path == Path::new("-") {
        return None;
    }
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() < MAP_MIN || meta.len() > MAX_INPUT as u64 {
        return None;
    }
    // SAFETY: the mapping is only read, by this command alone, which
    // writes no file; its contents change only if another process writes
    // the reply file during the parse (then the output is garbage, or the
    // process ends with SIGBUS if the file is truncated), as for git or
    // ripgrep, which map the files they read in the same way. `apply`,
    // which may write the reply file itself, reads it instead.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    Some((path.display().to_string(), map))
}

/// Writes the parsed reply as JSON to stdout, treating a closed pipe (`| head`)
/// as a normal end, as [`write_stdout`] does.
///
/// Through a handle of its own on stdout rather than `std::io::stdout()`,
/// which is line-buffered: that looks for the last line end in everything
/// written, and the JSON, as large as the reply, has a single one, at its
/// end. `json_writer` buffers.
fn write_json(parsed: &Parsed<'_>) -> Result<(), CliError> {
    let result = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| {
            let mut out = File::from(fd);
            csl::json_writer::to_writer(&mut out, parsed)?;
            out.write_all(b"\n")
        });
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::new(format!("cannot write the output: {e}"))),
    }
}

/// The diagnostics and the summary line, as `parse` prints them, for a
/// reply applied where there is no working tree (a server's hook).
pub(crate) fn write_text(
    out: &mut dyn Write,
    parsed: &Parsed<'_>,
    origin: &str,
) -> std::io::Result<()> {
    write_text_with(
        out,
        parsed,
        origin,
        Skips::planned(parsed, None, &csl::Delimiters::default()),
    )
}

fn write_text_with(
    out: &mut dyn Write,
    parsed: &Parsed<'_>,
    origin: &str,
    skips: Skips,
) -> std::io::Result<()> {
    let palette = super::paint::stdout();
    for d in &parsed.diagnostics {
        writeln!(
            out,
            "{}",
            csl::diagnostic::render_in(d, &parsed.source, origin, &palette)
        )?;
    }
    if let Some(line) = csl::sink::not_shown(parsed.diagnostics.omitted()) {
        writeln!(out, "{line}\n")?;
    }
    writeln!(out, "{}", summary(parsed, origin, skips))
}

/// How many operations of each kind, top level and inside blocks.
fn count_kinds(parsed: &Parsed<'_>) -> (Vec<usize>, usize, usize) {
    let mut by_kind = vec![0usize; OpKind::ALL.len()];
    let index = |k: OpKind| OpKind::ALL.iter().position(|x| *x == k).unwrap_or(0);
    let mut inner = 0;
    let tasks;
    if let Some(reply) = &parsed.csl {
        for op in &reply.operations {
            by_kind[index(op.kind())] += 1;
            for child in op.children() {
                by_kind[index(child.kind())] += 1;
                inner += 1;
            }
        }
        tasks = reply.operations.len();
    } else {
        let children = |d: &Draft| match &d.action {
            Some(Action::Block(children)) => children.len(),
            _ => 0,
        };
        for d in &parsed.drafts {
            by_kind[index(d.kind)] += 1;
            if let Some(Action::Block(children)) = &d.action {
                for child in children {
                    by_kind[index(child.kind)] += 1;
                }
            }
            inner += children(d);
        }
        tasks = parsed.drafts.len();
    }
    (by_kind, inner, tasks)
}

/// One line: what the reply holds and what would happen to it.
fn summary(parsed: &Parsed<'_>, origin: &str, skips: Skips) -> String {
    let (by_kind, inner, tasks) = count_kinds(parsed);
    let kinds: Vec<String> = OpKind::ALL
        .iter()
        .zip(&by_kind)
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let ops = if kinds.is_empty() {
        "no operations".to_string()
    } else {
        let inside = if inner > 0 {
            format!(", {inner} of them inside TASKS")
        } else {
            String::new()
        };
        format!(
            "{} ({}{inside}) in {tasks} task{}",
            kinds.join(", "),
            plural_ops(by_kind.iter().sum()),
            if tasks == 1 { "" } else { "s" }
        )
    };
    let Counts {
        fatal,
        invalid,
        warning,
    } = parsed.counts();
    let verdict = if fatal > 0 {
        "nothing would run".to_string()
    } else if parsed.is_empty() {
        "nothing would be applied".to_string()
    } else if skips.skipped > 0 {
        // apply's count: a dropped block is a task of its own, a TASKS
        // block one task however many of its operations are at fault.
        format!(
            "{} of {} would be skipped",
            skips.skipped,
            crate::words::count(skips.tasks, "task", "tasks")
        )
    } else if invalid > 0 {
        "invalid operations would be skipped".to_string()
    } else {
        "ok".to_string()
    };
    format!(
        "{origin} ({}): {ops}; {fatal} fatal, {invalid} invalid, {warning} warning{}: {verdict}",
        parsed.syntax.name(),
        if warning == 1 { "" } else { "s" }
    )
}

fn plural_ops(n: usize) -> String {
    format!("{n} operation{}", if n == 1 { "" } else { "s" })
}
