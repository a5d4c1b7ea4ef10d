//! `git clada parse`: check a reply without applying anything.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use crate::csl::input::MAX_INPUT;
use crate::csl::{self, Body, Counts, OpKind, Operation, Reply};

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
/// Exit status: 0 when the reply has no fatal or invalid problems (warnings
/// are fine), 1 when some operation is invalid and would be skipped, 2 when
/// a fatal syntax error means nothing would run (or the input is unusable).
#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// The reply: a file, or - for standard input (the default when stdin is not a terminal)
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Text that starts a marker [default: <---, or git config clada.startDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub start_delimiter: Option<String>,

    /// Text that ends a marker [default: --->, or git config clada.endDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub end_delimiter: Option<String>,
}

pub fn run_parse(args: ParseArgs) -> Result<Outcome, CliError> {
    let delims = settings::delimiters(
        args.start_delimiter.as_deref(),
        args.end_delimiter.as_deref(),
    )?;
    let mapped = args.input.as_deref().and_then(map_large_file);
    let input = match &mapped {
        Some((origin, _)) => ReplyInput::from_bytes(origin.clone(), Vec::new()),
        None => ReplyInput::read(args.input.as_deref())?,
    };
    let bytes = mapped
        .as_ref()
        .map_or(&input.bytes[..], |(_, map)| &map[..]);
    let reply = match input.too_large {
        Some(size) => Reply {
            source: "".into(),
            operations: Vec::new(),
            diagnostics: vec![csl::input::too_large(size)],
        },
        None => csl::parse_bytes(bytes, &delims),
    };
    match args.format {
        Format::Json => write_json(&reply),
        Format::Text => write_stdout(|out| write_text(out, &reply, &input.origin)),
    }?;
    let counts = reply.counts();
    Ok(if counts.fatal > 0 {
        Outcome::Fatal
    } else if counts.invalid > 0 {
        Outcome::Failed
    } else {
        Outcome::Success
    })
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

/// Writes the reply as JSON to stdout, treating a closed pipe (`| head`)
/// as a normal end, as [`write_stdout`] does.
///
/// Through a handle of its own on stdout rather than `std::io::stdout()`,
/// which is line-buffered: that looks for the last line end in everything
/// written, and the JSON, as large as the reply, has a single one, at its
/// end. `json_writer` buffers.
fn write_json(reply: &Reply<'_>) -> Result<(), CliError> {
    let result = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| {
            let mut out = File::from(fd);
            csl::json_writer::to_writer(&mut out, reply)?;
            out.write_all(b"\n")
        });
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::new(format!("cannot write the output: {e}"))),
    }
}

pub(crate) fn write_text(
    out: &mut dyn Write,
    reply: &Reply<'_>,
    origin: &str,
) -> std::io::Result<()> {
    for d in &reply.diagnostics {
        writeln!(out, "{}", csl::diagnostic::render(d, &reply.source, origin))?;
    }
    writeln!(out, "{}", summary(reply, origin))
}

/// One line: what the reply holds and what would happen to it.
fn summary(reply: &Reply<'_>, origin: &str) -> String {
    let mut by_kind = [0usize; 4];
    let mut inner = 0;
    for op in &reply.operations {
        by_kind[kind_index(op)] += 1;
        for child in op.children() {
            by_kind[kind_index(child)] += 1;
            inner += 1;
        }
    }
    let tasks = reply.operations.len();
    let kinds: Vec<String> = OpKind::ALL
        .iter()
        .zip(by_kind)
        .filter(|(_, n)| *n > 0)
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
    } = reply.counts();
    let verdict = if fatal > 0 {
        "nothing would run"
    } else if invalid > 0 {
        "invalid operations would be skipped"
    } else {
        "ok"
    };
    format!(
        "{origin}: {ops}; {fatal} fatal, {invalid} invalid, {warning} warning{}: {verdict}",
        if warning == 1 { "" } else { "s" }
    )
}

fn plural_ops(n: usize) -> String {
    format!("{n} operation{}", if n == 1 { "" } else { "s" })
}

fn kind_index(op: &Operation<'_>) -> usize {
    match op.body {
        Body::Write { .. } => 0,
        Body::Run { .. } => 1,
        Body::Search { .. } => 2,
        Body::Tasks { .. } => 3,
    }
}
