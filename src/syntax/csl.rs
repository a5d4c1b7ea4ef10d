//! The CSL front end: a parsed CSL reply ([`crate::csl`]) as drafts of the
//! common plan.
//!
//! Owns the mapping of CSL's markers and attributes onto plan actions. The
//! language itself (lexing, parsing, the spec's semantic checks and their
//! messages) stays in `csl/`; this file only reads its tree.

use crate::csl::validate::{Count, parse_append, parse_count, validate_one};
use crate::csl::{Body, Delimiters, DiagnosticKind, Diagnostics, Operation, Reply, Severity};
use crate::plan::{Action, Draft};

use super::{Dropped, Why};

/// The drafts of a CSL reply without fatal errors, in document order.
pub fn drafts<'a>(reply: &Reply<'a>, delims: &Delimiters) -> Vec<Draft<'a>> {
    each_draft(reply, delims).collect()
}

/// [`drafts`] one at a time, for a caller that needs each only briefly
/// (`git clada parse` plans a reply it never applies).
pub fn each_draft<'r, 'a>(
    reply: &'r Reply<'a>,
    delims: &'r Delimiters,
) -> impl Iterator<Item = Draft<'a>> + 'r {
    reply
        .operations
        .iter()
        .map(move |op| draft(reply, op, delims))
}

fn draft<'a>(reply: &Reply<'a>, op: &Operation<'a>, delims: &Delimiters) -> Draft<'a> {
    // The operation's own checks again, not its diagnostics: those past
    // the cap are not kept, and an invalid operation must not run. In
    // their order in the report (by column).
    let mut found = Diagnostics::new();
    validate_one(&reply.source, op, &mut found);
    found.finish();
    let kept = &reply.diagnostics;
    let mut invalid: Vec<(u32, String)> = found
        .iter()
        .filter(|d| d.severity() == Severity::Invalid)
        .map(|d| (d.line, kept.reason(d.line, d.kind, || d.message.clone())))
        .collect();
    // The AST keeps such content as the spec says, but nothing runs on a
    // guess: writing the next operation's marker and content into a file
    // is how a forgotten END corrupts it (csl.md §6).
    if let Some(line) = op.starts_another {
        let why = kept.reason(line, DiagnosticKind::MarkerInContent, || {
            // Said at the line where the other operation starts, that
            // line first, in one sentence.
            format!(
                "line {line}: another operation starts inside this one's text, so neither was applied: did you forget {s}END{e} above it? (to keep such a line as text, use other delimiters)",
                s = delims.start,
                e = delims.end,
            )
        });
        invalid.push((line, why));
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
pub fn dropped(reply: &Reply<'_>) -> Vec<Dropped> {
    reply
        .indented
        .iter()
        .map(|&(line, kind)| Dropped {
            line,
            kind,
            why: Why::IndentedMarker,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::csl::Delimiters;
    use crate::csl::sink::MAX_KEPT;
    use crate::syntax::{Choice, Syntax, parse};

    /// What decides that an operation does not run is read from the tree,
    /// not from its diagnostic, which may be past the cap.
    #[test]
    fn operations_past_the_cap_are_skipped_for_their_problems_too() {
        let n = MAX_KEPT + 200;
        let cases = [
            (
                "<---WRITE file=\"a\" append=\"maybe\"--->\nx\n<---END--->\n",
                "invalid_append",
            ),
            (
                "<---WRITE file=\"a\"--->\n<---RUN--->\n<---END--->\n",
                "marker_in_content",
            ),
        ];
        for (block, code) in cases {
            let reply = block.repeat(n);
            let parsed = parse(
                reply.as_bytes(),
                Choice::Only(Syntax::Csl),
                &Delimiters::default(),
            );
            assert_eq!(parsed.diagnostics.len(), MAX_KEPT, "{code}");
            assert_eq!(parsed.drafts.len(), n, "{code}");
            for d in &parsed.drafts {
                assert_eq!(d.invalid.len(), 1, "{code}: task {} would run", d.task);
            }
            // The first are described, the last named by their code.
            assert!(parsed.drafts[0].invalid[0].1.len() > code.len(), "{code}");
            assert_eq!(parsed.drafts[n - 1].invalid[0].1, code);
        }
    }

    #[test]
    fn every_indented_marker_past_the_cap_is_dropped() {
        let n = MAX_KEPT + 200;
        let reply = "  <---RUN--->\n".repeat(n);
        let parsed = parse(
            reply.as_bytes(),
            Choice::Only(Syntax::Csl),
            &Delimiters::default(),
        );
        assert_eq!(parsed.diagnostics.len(), MAX_KEPT);
        assert_eq!(parsed.dropped.len(), n);
        assert_eq!(parsed.dropped[n - 1].line, n as u32);
    }
}
