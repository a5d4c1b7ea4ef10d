//! Semantic checks on a parsed reply (csl.md §6, "invalid" and attribute
//! warnings).
//!
//! Owns the rules an operation must meet to run: required attributes, the
//! values `count` and `append` may take, non-empty commands and patterns. An
//! invalid operation is skipped; inside TASKS it makes the whole block
//! skipped. The messages are the spec's, word for word.

use super::ast::{Attr, Body, OpKind, Operation};
use super::diagnostic::{Diagnostic, DiagnosticKind as K};
use super::sink::Diagnostics;

/// A `count` value: a positive integer or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Exactly(u32),
    All,
}

/// Reads a `count` value the way the spec allows: `all`, or ASCII digits
/// whose value is at least 1 (and fits in 32 bits).
pub fn parse_count(value: &str) -> Option<Count> {
    if value == "all" {
        return Some(Count::All);
    }
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match value.parse::<u32>() {
        Ok(n) if n >= 1 => Some(Count::Exactly(n)),
        _ => None,
    }
}

/// Reads an `append` value: exactly `true` or `false`.
pub fn parse_append(value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Appends the semantic diagnostics of `op`, not of its children, to
/// `diags`. The parser calls it for every operation it closes, except
/// those whose marker line has a fatal error: their attributes were not all
/// read, and "Missing required attribute 'file'" for a badly quoted `file`
/// would be false. The CSL front end calls it again for the reasons of a
/// skipped task, which the capped diagnostics may no longer hold.
pub fn validate_one(src: &str, op: &Operation<'_>, diags: &mut Diagnostics) {
    let kind = op.kind();
    // A bad value is pointed at where it stands; a missing attribute or
    // an empty body at the start of the marker line.
    let at = |name: Option<&str>| {
        let span = name
            .and_then(|n| op.attrs.iter().find(|a| a.name == n))
            .map_or(super::ast::Span::new(op.line_start, op.line_start), |a| {
                a.span
            });
        let prefix = src.get(op.line_start..span.start).unwrap_or("");
        (span, prefix.chars().count() as u32 + 1)
    };
    let mut invalid = |k: K, attr: Option<&str>, message: &str, hint: String| {
        let (span, column) = at(attr);
        diags.push(Diagnostic {
            kind: k,
            line: op.line,
            column,
            line_start: op.line_start,
            span,
            message: message.to_string(),
            hint: Some(hint),
            operation: Some(kind),
            task: Some(op.task),
        });
    };
    if matches!(kind, OpKind::Write | OpKind::Search) && op.attr("file").is_none_or(is_blank) {
        invalid(
            K::MissingFile,
            None,
            "Missing required attribute 'file'",
            format!("name the file relative to the repository root: {kind} file=\"src/main.rs\""),
        );
    }
    if kind == OpKind::Search
        && let Some(count) = op.attr("count")
        && parse_count(count).is_none()
    {
        invalid(
            K::InvalidCount,
            Some("count"),
            "Invalid value for 'count': must be positive integer or 'all'",
            format!(
                "got \"{count}\"; write count=\"2\" for exactly two matches, count=\"all\" for every match, or leave it out for exactly one"
            ),
        );
    }
    if kind == OpKind::Write
        && let Some(append) = op.attr("append")
        && parse_append(append).is_none()
    {
        invalid(
            K::InvalidAppend,
            Some("append"),
            "Invalid value for 'append': must be 'true' or 'false'",
            format!("got \"{append}\"; write append=\"true\" to add to the end of the file"),
        );
    }
    match &op.body {
        Body::Run { content } if is_blank(content) => invalid(
            K::EmptyRun,
            None,
            "Empty content not allowed for RUN operation",
            "put one command per line between the RUN marker and END".to_string(),
        ),
        Body::Search { pattern, to, .. } => {
            if is_blank(pattern) {
                invalid(
                    K::EmptyPattern,
                    None,
                    "Empty search pattern not allowed",
                    "copy the exact lines to find, from the current file, between SEARCH and REPLACE (or TO)".to_string(),
                );
            }
            if to.as_deref().is_some_and(is_blank) {
                invalid(
                    K::EmptyTo,
                    None,
                    "Empty TO pattern not allowed",
                    "put the exact last line(s) of the range between TO and REPLACE, or drop the TO section".to_string(),
                );
            }
        }
        _ => {}
    }
    for attr in &op.attrs {
        if !kind.known_attributes().contains(&attr.name) {
            diags.push(unknown_attribute(src, op, attr));
        }
    }
}

/// Whether `s` is empty or only whitespace. Unlike `trim`, it stops at the
/// first other character instead of also trimming from the end.
fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

fn unknown_attribute(src: &str, op: &Operation<'_>, attr: &Attr<'_>) -> Diagnostic {
    let kind = op.kind();
    let known = kind.known_attributes().join(", ");
    Diagnostic {
        kind: K::UnknownAttribute,
        line: op.line,
        column: super::column(src, op.line_start, attr.span.start),
        line_start: op.line_start,
        span: attr.span,
        message: format!("Unknown attribute '{}' on {kind} is ignored", attr.name),
        hint: Some(format!("{kind} understands: {known}")),
        operation: Some(kind),
        task: Some(op.task),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_accepts_positive_integers_and_all() {
        assert_eq!(parse_count("all"), Some(Count::All));
        assert_eq!(parse_count("3"), Some(Count::Exactly(3)));
        assert_eq!(parse_count("007"), Some(Count::Exactly(7)));
        for bad in ["0", "-1", "+1", " 1", "1.5", "ALL", "", "99999999999"] {
            assert_eq!(parse_count(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn append_is_exactly_true_or_false() {
        assert_eq!(parse_append("true"), Some(true));
        assert_eq!(parse_append("false"), Some(false));
        assert_eq!(parse_append("yes"), None);
        assert_eq!(parse_append("TRUE"), None);
    }
}
