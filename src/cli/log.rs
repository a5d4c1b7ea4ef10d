//! `git clada log` (the applies on a branch) and `git clada show REV`
//! (one apply: summary, report, files, reply). Read-only, no lock.

use serde::Serialize;

use crate::git::{Head, ObjectId, Repository};
use crate::history::commits::{Kind, Unit, kind, trailer, unit_at};
use crate::history::{session, undo_stack};
use crate::report::Tally;

use super::apply::Format;
use super::guard::{git_err, open};
use super::{CliError, Outcome, write_stdout};

/// Where the reply of each apply is kept, as a note (written by apply).
const REPLY_NOTES: &str = "refs/notes/clada";

/// List the clada applies on this branch
///
/// Walks the branch's first-parent history from its tip (the tip the
/// session started from when you are stepped back) and lists each apply
/// and squash, newest first, with its summary and task counts; then the
/// undone applies that `git clada redo` can restore. `git clada show <id>`
/// prints the reply and report of one of them.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Start from REV instead of the branch tip (e.g. refs/clada/squashed/1)
    #[arg(value_name = "REV")]
    pub rev: Option<String>,

    /// Show at most N entries
    #[arg(long, short = 'n', value_name = "N")]
    pub max_count: Option<usize>,

    /// Output format [default: text]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

/// Show the reply and report of one apply
///
/// For an apply's post commit (or a rejected result under
/// refs/clada/rejected/): its summary, task counts, the commit it was made
/// on, its pre snapshot, the files it changed, the report and the reply.
/// For a squash: the applies it replaced.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The commit
    #[arg(value_name = "REV", default_value = "HEAD")]
    pub rev: String,

    /// Print only the reply, exactly as it was applied (to apply it again: | git clada apply)
    #[arg(long)]
    pub reply: bool,
}

#[derive(Serialize)]
struct Entry {
    commit: String,
    kind: &'static str,
    summary: String,
    /// Committer time, seconds since the epoch.
    time: i64,
    /// The `Clada-Tasks` trailer's counts (`None`: the commit has none).
    tasks: Option<Tally>,
    pre: Option<String>,
    base: Option<String>,
}

#[derive(Serialize)]
struct LogReport {
    entries: Vec<Entry>,
    /// Undone applies `git clada redo` restores, next first.
    redoable: Vec<Entry>,
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// `YYYY-MM-DD HH:MM` (UTC) of a time in seconds since the epoch.
fn date(secs: i64) -> String {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn entry(unit: &Unit) -> Entry {
    Entry {
        commit: unit.top.id.to_string(),
        kind: if unit.kind() == Kind::Squash {
            "squash"
        } else {
            "apply"
        },
        summary: unit.summary().to_string(),
        time: unit.top.time,
        tasks: trailer(&unit.top.message, "Clada-Tasks").and_then(Tally::parse),
        pre: unit.pre.as_ref().map(|p| p.id.to_string()),
        base: unit.base.map(|b| b.to_string()),
    }
}

fn line(e: &Entry) -> String {
    let tasks = e
        .tasks
        .as_ref()
        .map_or(String::new(), |t| format!("  [{t}]"));
    let pre = e
        .pre
        .as_ref()
        .map_or(String::new(), |p| format!("  (pre {})", &p[..7]));
    let kind = if e.kind == "squash" { "squash: " } else { "" };
    format!(
        "{}  {}  {kind}{}{tasks}{pre}",
        &e.commit[..7],
        date(e.time),
        e.summary
    )
}

pub fn run_log(args: LogArgs) -> Result<Outcome, CliError> {
    let repo = open()?;
    let (report, head_commit) = gather(&repo, &args)?;
    if args.format == Some(Format::Json) {
        write_stdout(|w| {
            serde_json::to_writer_pretty(&mut *w, &report).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        })?;
        return Ok(Outcome::Success);
    }
    // `-n 0` asks for no entry, as `git log -n 0` does: nothing to print,
    // and "no clada applies" would not be true.
    if args.max_count == Some(0) {
        return Ok(Outcome::Success);
    }
    write_stdout(|w| write_text(w, &report, head_commit))?;
    Ok(Outcome::Success)
}

/// The log as its JSON document and as text, from one look at the
/// repository (the MCP server's `log` tool gives both).
pub(crate) fn log_both(args: &LogArgs) -> Result<(serde_json::Value, String), CliError> {
    let repo = open()?;
    let (report, head_commit) = gather(&repo, args)?;
    let document = serde_json::to_value(&report)
        .map_err(|e| CliError::new(format!("cannot write the log: {e}")))?;
    let mut text = Vec::new();
    if args.max_count != Some(0) {
        write_text(&mut text, &report, head_commit)
            .map_err(|e| CliError::new(format!("cannot write the log: {e}")))?;
    }
    Ok((document, String::from_utf8_lossy(&text).into_owned()))
}

/// The applies `args` ask for, and the commit HEAD is at.
fn gather(repo: &Repository, args: &LogArgs) -> Result<(LogReport, Option<ObjectId>), CliError> {
    let head = repo.head().map_err(git_err)?;
    let start = match &args.rev {
        Some(rev) => Some(repo.resolve_commit(rev).map_err(git_err)?),
        None => match (session::read(repo).map_err(git_err)?, &head) {
            (Some(s), Head::Detached(_)) => Some(s.tip),
            (_, Head::Branch { commit, .. }) => *commit,
            (_, Head::Detached(id)) => Some(*id),
        },
    };
    let max = args.max_count.unwrap_or(usize::MAX);
    let mut entries = Vec::new();
    let mut at = start;
    while let Some(id) = at {
        if entries.len() >= max {
            break;
        }
        match unit_at(repo, id).map_err(git_err)? {
            Some(unit) => {
                entries.push(entry(&unit));
                at = unit.base;
            }
            None => at = repo.commit_info(id).map_err(git_err)?.first_parent(),
        }
    }
    let redoable: Vec<Entry> = match (&args.rev, &head) {
        (None, Head::Branch { commit, .. }) => undo_stack::redo_chain(repo, *commit)
            .map_err(git_err)?
            .iter()
            .map(|e| entry(&e.unit))
            .collect(),
        _ => Vec::new(),
    };
    let report = LogReport { entries, redoable };
    let head_commit = match head {
        Head::Branch { commit, .. } => commit,
        Head::Detached(id) => Some(id),
    };
    Ok((report, head_commit))
}

/// The text log.
fn write_text(
    w: &mut dyn std::io::Write,
    report: &LogReport,
    head_commit: Option<ObjectId>,
) -> std::io::Result<()> {
    if !report.redoable.is_empty() {
        writeln!(w, "undone, `git clada redo` restores (next first):")?;
        for e in &report.redoable {
            writeln!(w, "  {}", line(e))?;
        }
        writeln!(w)?;
    }
    if report.entries.is_empty() {
        writeln!(w, "no clada applies on this history")?;
    }
    for e in &report.entries {
        let here = if Some(e.commit.as_str()) == head_commit.map(|h| h.to_string()).as_deref() {
            "  <- HEAD"
        } else {
            ""
        };
        writeln!(w, "{}{here}", line(e))?;
    }
    writeln!(
        w,
        "hint: `git clada show <id>` prints the reply and report of an apply"
    )
}

/// The reply of the apply `post`: its note, else the blob its
/// `Clada-Reply` trailer names.
fn reply_of(repo: &Repository, post: ObjectId, message: &str) -> Result<Option<Vec<u8>>, CliError> {
    if let Some(note) = repo.note(REPLY_NOTES, post).map_err(git_err)? {
        return Ok(Some(note));
    }
    let Some(blob) =
        trailer(message, "Clada-Reply").and_then(|hex| ObjectId::from_hex(hex.as_bytes()).ok())
    else {
        return Ok(None);
    };
    Ok(repo.blob(blob).ok())
}

pub fn run_show(args: ShowArgs) -> Result<Outcome, CliError> {
    let repo = open()?;
    let id = repo.resolve_commit(&args.rev).map_err(|e| {
        CliError::new(e.to_string()).hint("name a commit: an id, HEAD~2, refs/clada/rejected/1 …; `git clada log` lists the applies")
    })?;
    let info = repo.commit_info(id).map_err(git_err)?;
    let Some(unit) = unit_at(&repo, id).map_err(git_err)? else {
        let e = if kind(&info.message) == Kind::Pre {
            CliError::new(format!(
                "{} is a pre snapshot (your uncommitted work saved before an apply), not an apply",
                short(id)
            ))
            .hint("show the apply made on it: the commit whose parent it is (git clada log lists them)")
        } else {
            CliError::new(format!("{} is not a clada apply", short(id)))
                .hint("`git clada log` lists the applies on this branch")
        };
        return Err(e);
    };
    if unit.kind() == Kind::Squash {
        if args.reply {
            return Err(CliError::new(format!(
                "{} is a squash of several applies; each has its own reply",
                short(id)
            ))
            .hint("`git clada log <the squashed tip>` lists them (see the Clada-Squashed line)"));
        }
        let old = trailer(&info.message, "Clada-Squashed").map(str::to_string);
        write_stdout(|w| {
            writeln!(w, "squash {}  {}", short(id), date(info.time))?;
            w.write_all(info.message.as_bytes())?;
            if let Some(old) = &old {
                writeln!(
                    w,
                    "hint: the squashed applies, with their replies: git clada log {old}"
                )?;
            }
            Ok(())
        })?;
        return Ok(Outcome::Success);
    }
    let reply = reply_of(&repo, id, &info.message)?;
    if args.reply {
        let Some(reply) = reply else {
            return Err(CliError::new(format!(
                "the reply of {} is neither in {REPLY_NOTES} nor in the object database",
                short(id)
            )));
        };
        write_stdout(|w| w.write_all(&reply))?;
        return Ok(Outcome::Success);
    }
    let before = unit.before_tree(&repo).map_err(git_err)?;
    let moves = repo.tree_moves(before, unit.top.tree).map_err(git_err)?;
    let base = match unit.base {
        Some(b) => {
            let i = repo.commit_info(b).map_err(git_err)?;
            format!(
                "{} \"{}\"",
                short(b),
                i.message.lines().next().unwrap_or_default()
            )
        }
        None => "nothing (a root commit)".to_string(),
    };
    let report: Vec<&str> = info
        .message
        .split("\n\n")
        .nth(1)
        .filter(|p| p.starts_with("[task-"))
        .map(|p| p.lines().collect())
        .unwrap_or_default();
    write_stdout(|w| {
        writeln!(w, "apply {}  {}", short(id), date(info.time))?;
        writeln!(w, "summary: {}", unit.summary())?;
        if let Some(tasks) = trailer(&info.message, "Clada-Tasks") {
            writeln!(w, "tasks: {tasks}")?;
        }
        writeln!(w, "made on: {base}")?;
        if let Some(pre) = &unit.pre {
            writeln!(
                w,
                "pre snapshot: {} (the uncommitted work it was made on)",
                short(pre.id)
            )?;
        }
        writeln!(w, "files changed by the reply:")?;
        for m in &moves {
            let tag = match (m.from, m.to) {
                (None, _) => "A",
                (_, None) => "D",
                _ => "M",
            };
            writeln!(w, "  {tag} {}", crate::quote::shown(&m.path))?;
        }
        if !report.is_empty() {
            writeln!(w, "report:")?;
            for l in &report {
                writeln!(w, "  {l}")?;
            }
        }
        match &reply {
            Some(reply) => {
                writeln!(w, "reply:")?;
                w.write_all(reply)?;
                if !reply.ends_with(b"\n") {
                    writeln!(w)?;
                }
            }
            None => writeln!(w, "reply: not found (no note in {REPLY_NOTES})")?,
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::date;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(date(0), "1970-01-01 00:00");
        assert_eq!(date(1_767_225_600), "2026-01-01 00:00");
        assert_eq!(date(951_782_400 + 3 * 3600 + 25 * 60), "2000-02-29 03:25");
    }
}
