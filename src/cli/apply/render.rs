//! The apply report, rendered: text for people (and the model that wrote
//! the reply), one JSON document for agents (doc/report.md).

use serde::Serialize;

use crate::csl::{Diagnostic, Severity};
use crate::git::ObjectId;
use crate::report::text::task_lines_with_output;
use crate::report::{Tally, TaskReport};
use crate::style::{Painted, Palette};
use crate::syntax::Parsed;
use crate::transaction::{Applied, Ending, Verified};

use super::{ErrorDetail, Format, OutputMode};
use crate::cli::{CliError, write_stdout};

/// How a report is shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presentation {
    pub format: Format,
    pub output_mode: OutputMode,
    pub error_detail: ErrorDetail,
    /// The colours of the text report (none unless it goes to a
    /// terminal, or colour is asked for).
    pub palette: Palette,
}

/// The JSON report (doc/report.md).
#[derive(Serialize)]
struct JsonReport<'a> {
    status: &'static str,
    exit_code: u8,
    message: String,
    /// The syntax the reply was read as.
    syntax: &'static str,
    branch: Option<String>,
    base: Option<String>,
    pre: Option<String>,
    post: Option<String>,
    rejected_ref: Option<String>,
    summary: Tally,
    tasks: &'a [TaskReport],
    diagnostics: &'a [Diagnostic],
    /// How many diagnostics the parse counted but did not keep
    /// (`csl::sink::MAX_KEPT`).
    diagnostics_omitted: usize,
    /// The reply's own words on why it makes a task (replacer).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    explanations: &'a [crate::syntax::Explanation],
    worktree: JsonWorktree,
    diff: Option<String>,
    /// `--dry-run`: the paths of the user's own uncommitted work.
    your_work: &'a [String],
    verify: Option<&'a Verified>,
    /// What went wrong after the branch moved that the apply survived.
    warnings: &'a [String],
    /// `branch_moved`: each operation that would apply differently on
    /// the branch's new tip, with why (doc/replay.md).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    conflicts: &'a [String],
    /// The branch's commit when the apply started, when the reply was
    /// applied on the tip it had moved to (`base`).
    #[serde(skip_serializing_if = "Option::is_none")]
    moved_from: Option<String>,
}

#[derive(Serialize, Default)]
struct JsonWorktree {
    written: Vec<String>,
    kept: Vec<JsonKept>,
    /// Files that could not be written (path and error).
    failed: Vec<JsonKept>,
    /// Changed files left out of `pre` (names that are not UTF-8).
    left_out: Vec<String>,
    /// New files left out of `pre`: ignored before a reply changed the
    /// ignore rules.
    left_ignored: Vec<String>,
}

#[derive(Serialize)]
struct JsonKept {
    path: String,
    reason: String,
}

/// The JSON document of an apply that stopped before it had a report.
#[derive(Serialize)]
pub(crate) struct JsonError<'a> {
    pub status: &'static str,
    pub exit_code: u8,
    pub message: &'a str,
    pub hint: Option<&'a str>,
}

pub(crate) fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    write_stdout(|out| {
        serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    })
}

/// The JSON report of a reply with fatal errors.
pub(crate) fn fatal_report<'a>(parsed: &'a Parsed<'_>, message: String) -> impl Serialize + 'a {
    JsonReport {
        status: "fatal",
        exit_code: 2,
        message,
        syntax: parsed.syntax.name(),
        branch: None,
        base: None,
        pre: None,
        post: None,
        rejected_ref: None,
        summary: Tally::default(),
        tasks: &[],
        diagnostics: &parsed.diagnostics,
        diagnostics_omitted: parsed.diagnostics.omitted().total(),
        explanations: &[],
        worktree: JsonWorktree::default(),
        diff: None,
        your_work: &[],
        verify: None,
        warnings: &[],
        conflicts: &[],
        moved_from: None,
    }
}

/// The lines that head the text report: the reply's explanations of its
/// tasks, then its warnings (none in JSON, which lists both as fields).
pub(crate) fn warning_lines(parsed: &Parsed<'_>, format: Format) -> String {
    if format != Format::Text {
        return String::new();
    }
    let explanations = parsed.explanations.iter().map(|e| {
        format!(
            "[task-{}] explanation: {}\n",
            e.task,
            crate::quote::visible(&e.text)
        )
    });
    let warnings = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Warning)
        .map(|d| format!("warning: line {}: {}\n", d.line, d.message));
    explanations.chain(warnings).collect()
}

/// Writes the report of `applied`. `streamed`: the task lines were
/// printed as the tasks finished.
pub(crate) fn render(
    w: &mut dyn std::io::Write,
    short: &dyn Fn(ObjectId) -> String,
    presentation: &Presentation,
    parsed: &Parsed<'_>,
    applied: &Applied,
    streamed: bool,
) -> std::io::Result<()> {
    let worktree = JsonWorktree {
        written: applied.worktree.written.clone(),
        kept: applied
            .worktree
            .kept
            .iter()
            .map(|(path, reason)| JsonKept {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect(),
        failed: applied
            .worktree
            .failed
            .iter()
            .map(|(path, reason)| JsonKept {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect(),
        left_out: applied.left_out.clone(),
        left_ignored: applied.left_ignored.clone(),
    };
    if presentation.format == Format::Json {
        let report = JsonReport {
            status: applied.ending.name(),
            exit_code: applied.ending.exit_code(),
            message: applied.message.clone(),
            syntax: parsed.syntax.name(),
            branch: applied.branch.clone(),
            base: applied.base.map(|id| id.to_string()),
            pre: applied.pre.map(|id| id.to_string()),
            post: applied.post.map(|id| id.to_string()),
            rejected_ref: applied.rejected_ref.clone(),
            summary: applied.tally,
            tasks: &applied.reports,
            diagnostics: &parsed.diagnostics,
            diagnostics_omitted: parsed.diagnostics.omitted().total(),
            explanations: &parsed.explanations,
            worktree,
            diff: applied.diff.clone(),
            your_work: &applied.your_work,
            verify: applied.verify.as_ref(),
            warnings: &applied.warnings,
            conflicts: &applied.conflicts,
            moved_from: applied.moved_from.map(|id| id.to_string()),
        };
        serde_json::to_writer_pretty(&mut *w, &report).map_err(std::io::Error::from)?;
        return w.write_all(b"\n");
    }
    let buffered = !streamed && presentation.output_mode == OutputMode::Buffer;
    if buffered {
        for t in &applied.reports {
            w.write_all(task_lines_with_output(t, &presentation.palette).as_bytes())?;
        }
    }
    if let Some(v) = &applied.verify {
        if buffered {
            for line in v.output.lines() {
                writeln!(w, "[verify] {line}")?;
            }
        }
        let palette = &presentation.palette;
        let status = if v.passed {
            Painted(palette.good, "PASSED")
        } else {
            Painted(palette.bad, "FAILED")
        };
        writeln!(w, "[verify] {status}: {} - {}", v.command, v.message)?;
        // The output's last lines again, under output just printed line
        // by line (streamed, or buffered above), would say it twice.
        let shown = (streamed || buffered) && !v.output.is_empty();
        let keep = if shown {
            v.details.len() - v.output_tail
        } else {
            v.details.len()
        };
        for detail in &v.details[..keep] {
            writeln!(w, "    {detail}")?;
        }
    }
    for kept in &worktree.kept {
        writeln!(
            w,
            "kept {}: {}",
            crate::quote::shown(&kept.path),
            kept.reason
        )?;
    }
    for warning in &applied.warnings {
        writeln!(
            w,
            "{}: {warning}",
            Painted(presentation.palette.warn, "warning")
        )?;
    }
    for failed in &worktree.failed {
        writeln!(
            w,
            "not written {}: {}; the applied version is in the commit. Fix the cause (permissions? disk space?) and run any clada command: it writes the file then; until then its old content is never taken for your edit",
            crate::quote::shown(&failed.path),
            failed.reason
        )?;
    }
    for path in &worktree.left_ignored {
        writeln!(
            w,
            "left out {}: not in pre, because it was ignored before a reply changed the ignore rules; left as it is on disk (git add it yourself if it belongs in the repository)",
            crate::quote::shown(path)
        )?;
    }
    for path in &worktree.left_out {
        writeln!(
            w,
            "left out {path}: not in pre (its name is not UTF-8); left as it is on disk"
        )?;
    }
    if !applied.your_work.is_empty() {
        let shown: Vec<String> = applied
            .your_work
            .iter()
            .map(|p| crate::quote::shown(p).into_owned())
            .collect();
        writeln!(
            w,
            "clada: your work (uncommitted, in your working tree already; not the reply's, not in the diff): {}",
            crate::cli::guard::list_paths(&shown, 10)
        )?;
    }
    if let Some(diff) = applied.diff.as_ref().filter(|d| !d.is_empty()) {
        writeln!(
            w,
            "clada: the reply's changes, as a patch against your working tree (git apply takes it):"
        )?;
        w.write_all(presentation.palette.diff(diff).as_bytes())?;
    }
    let ids = match (applied.pre, applied.post) {
        (_, Some(post)) if !matches!(applied.ending, Ending::Rejected | Ending::BranchMoved) => {
            let none = if applied.left_out.is_empty() {
                "none (clean tree)"
            } else {
                "none (only files left out changed)"
            };
            let pre = applied.pre.map_or_else(|| none.to_string(), short);
            format!(
                " on {}: pre {pre}, post {}",
                applied.branch.as_deref().unwrap_or("?"),
                short(post)
            )
        }
        _ => String::new(),
    };
    for conflict in &applied.conflicts {
        writeln!(w, "stale: {conflict}")?;
    }
    writeln!(w, "clada: {}{ids}", applied.message)?;
    if !parsed.dropped.is_empty() {
        let n = parsed.dropped.len();
        writeln!(
            w,
            "clada: {} of the reply {} not applied (see the SKIP lines above); send {} again in the reply's syntax",
            crate::apply::exec::plural(n, "block"),
            if n == 1 { "was" } else { "were" },
            if n == 1 { "it" } else { "them" },
        )?;
    }
    // Of the reply's problems only the first are kept: the warnings above
    // and the skipped tasks' reasons stop describing them there.
    let omitted = parsed.diagnostics.omitted();
    if let Some(line) = crate::csl::sink::not_shown(omitted) {
        let codes = if omitted.invalid > 0 {
            "; the skipped tasks past them name their problems by code only"
        } else {
            ""
        };
        writeln!(w, "{line}{codes}")?;
    }
    Ok(())
}
