//! The CSL front end: a parsed CSL reply ([`crate::csl`]) as drafts of the
//! common plan.
//!
//! Owns the mapping of CSL's markers and attributes onto plan actions. The
//! language itself (lexing, parsing, the spec's semantic checks and their
//! messages) stays in `csl/`; this file only reads its tree.

use crate::csl::validate::{Count, parse_append, parse_count};
use crate::csl::{
    Body, Delimiters, Diagnostic, DiagnosticKind, OpKind, Operation, Reply, Severity,
};
use crate::plan::{Action, Draft};

use super::{Dropped, Why};

/// The drafts of a CSL reply without fatal errors, in document order.
pub fn drafts<'a>(reply: &Reply<'a>, delims: &Delimiters) -> Vec<Draft<'a>> {
    reply
        .operations
        .iter()
        .map(|op| draft(reply, op, delims))
        .collect()
}

/// Whether the diagnostic is a line inside an operation's content that
/// starts another operation: most likely a forgotten END above it.
fn next_operation_in_content(reply: &Reply<'_>, d: &Diagnostic, delims: &Delimiters) -> bool {
    if d.kind != DiagnosticKind::MarkerInContent {
        return false;
    }
    let Some(rest) = reply
        .source
        .get(d.line_start..)
        .and_then(|text| text.strip_prefix(delims.start.as_str()))
    else {
        return false;
    };
    OpKind::CSL.into_iter().any(|k| {
        rest.strip_prefix(k.name()).is_some_and(|after| {
            !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

fn draft<'a>(reply: &Reply<'a>, op: &Operation<'a>, delims: &Delimiters) -> Draft<'a> {
    let mut invalid: Vec<(u32, String)> = reply
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Invalid && d.task == Some(op.task))
        .map(|d| (d.line, d.message.clone()))
        .collect();
    // The AST keeps such content as the spec says, but nothing runs on a
    // guess: writing the next operation's marker and content into a file
    // is how a forgotten END corrupts it (csl.md §6).
    if let Some(d) = reply
        .diagnostics
        .iter()
        .find(|d| d.task == Some(op.task) && next_operation_in_content(reply, d, delims))
    {
        invalid.push((
            op.line,
            format!(
                "did you forget {s}END{e} above line {line}? Line {line} starts another operation, but as written it is part of this one's text, so nothing of it was applied; to write such a line on purpose, use other delimiters (--start-delimiter and --end-delimiter, or git config clada.startDelimiter / clada.endDelimiter)",
                s = delims.start,
                e = delims.end,
                line = d.line
            ),
        ));
    }
    // An empty value is already "Missing required attribute".
    let file = || {
        op.attr("file")
            .filter(|f| !f.trim().is_empty())
            .map(str::to_owned)
    };
    let action = match &op.body {
        Body::Write { content } => file().map(|path| Action::Write {
            path,
            content: content.clone(),
            append: op.attr("append").and_then(parse_append).unwrap_or(false),
        }),
        Body::Search {
            pattern,
            to,
            replacement,
        } => {
            let count = op
                .attr("count")
                .map_or(Some(Count::Exactly(1)), parse_count);
            file().zip(count).map(|(path, count)| Action::Search {
                path,
                pattern: pattern.clone(),
                to: to.as_ref().map(|t| t.to_string()),
                replacement: replacement.clone(),
                count,
            })
        }
        Body::Run { content } => Some(Action::Run {
            dir: op.attr("dir").map(str::to_owned),
            script: content.clone(),
        }),
        Body::Tasks { operations } => Some(Action::Block(
            operations
                .iter()
                .map(|child| draft(reply, child, delims))
                .collect(),
        )),
    };
    let missing = action.is_none() && invalid.is_empty();
    Draft {
        task: op.task,
        line: op.line,
        kind: op.kind(),
        target: file(),
        action,
        invalid: if missing {
            // Cannot happen for a validated reply; say so rather than run
            // something half-read.
            vec![(op.line, "the operation could not be read".to_string())]
        } else {
            invalid
        },
        error_type: None,
    }
}

/// Operations a CSL reply drops: a start marker indented off column 1 in
/// prose is not a marker, so the operation it meant does not run.
pub fn dropped(reply: &Reply<'_>, delims: &Delimiters) -> Vec<Dropped> {
    reply
        .diagnostics
        .iter()
        .filter(|d| d.kind == DiagnosticKind::IndentedMarker && d.operation.is_none())
        .filter_map(|d| {
            let text = reply.source.get(d.line_start..)?;
            let text = text.lines().next()?.trim_start_matches([' ', '\t']);
            let name = text.strip_prefix(delims.start.as_str())?;
            let kind = OpKind::CSL
                .into_iter()
                .find(|k| name.starts_with(k.name()))?;
            Some(Dropped {
                line: d.line,
                kind,
                why: Why::IndentedMarker,
            })
        })
        .collect()
}
