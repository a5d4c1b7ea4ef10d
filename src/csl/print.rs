//! Prints a syntax tree back as CSL.
//!
//! Owns the inverse of the parser for well-formed trees: parsing the printed
//! text gives the same operations. Used by the round-trip property test and
//! by tools that rewrite replies. Content that could not have come from a
//! parse (a line that is itself a recognised marker, a CR) is printed as is
//! and will not round-trip.

use std::fmt::Write as _;

use super::Delimiters;
use super::ast::{Attr, Body, Operation};

/// Prints `ops` as CSL text, one operation after another.
pub fn print(ops: &[Operation<'_>], delims: &Delimiters) -> String {
    let mut out = String::new();
    for op in ops {
        print_op(&mut out, op, delims);
    }
    out
}

fn print_op(out: &mut String, op: &Operation<'_>, d: &Delimiters) {
    marker(out, d, op.kind().name(), &op.attrs);
    match &op.body {
        Body::Write { content } | Body::Run { content } => section(out, content),
        Body::Search {
            pattern,
            to,
            replacement,
        } => {
            section(out, pattern);
            if let Some(to) = to {
                marker(out, d, "TO", &[]);
                section(out, to);
            }
            marker(out, d, "REPLACE", &[]);
            section(out, replacement);
        }
        Body::Tasks { operations } => {
            for child in operations {
                print_op(out, child, d);
            }
        }
    }
    marker(out, d, "END", &[]);
}

fn marker(out: &mut String, d: &Delimiters, name: &str, attrs: &[Attr<'_>]) {
    out.push_str(&d.start);
    out.push_str(name);
    for attr in attrs {
        let _ = write!(out, " {}=\"", attr.name);
        for c in attr.value.chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push_str(&d.end);
    out.push('\n');
}

/// A section's lines: the content followed by one line end, so that empty
/// content is zero lines and content ending in `\n` gets its blank line.
fn section(out: &mut String, content: &str) {
    if content.is_empty() {
        return;
    }
    out.push_str(content);
    out.push('\n');
}
