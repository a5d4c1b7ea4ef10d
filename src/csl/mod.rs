//! CSL, the language of replies: decoding, parsing, validation, diagnostics.
//!
//! This module does no I/O and knows nothing about git. [`parse_bytes`] and
//! [`parse`] are the entry points; everything a later phase needs is in the
//! returned [`Reply`]: the syntax tree and every diagnostic, sorted by line.
//!
//! Layers, lowest first: `input` (bytes to text), `lexer` (lines and marker
//! lines), `parser` (the context-sensitive state machine), `validate`
//! (semantic rules, which the parser applies to each operation it closes),
//! then `json` and `print` (output; `json_writer` writes the JSON) and
//! `diagnostic` (the problem model and its text rendering), `sink` (the
//! diagnostics a parse keeps, capped).

pub mod ast;
pub mod diagnostic;
pub mod input;
pub mod json;
pub mod json_writer;
mod lexer;
mod parser;
pub mod print;
pub mod sink;
pub mod validate;

use std::borrow::Cow;

pub use ast::{Attr, Body, OpKind, Operation, Span, TaskId};
pub use diagnostic::{Counts, Diagnostic, DiagnosticKind, Severity};
pub use lexer::marker_name;
pub use sink::Diagnostics;

/// The marker delimiters, `<---` and `--->` unless configured otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delimiters {
    pub start: String,
    pub end: String,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            start: "<---".to_string(),
            end: "--->".to_string(),
        }
    }
}

/// Why a pair of delimiters cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DelimiterError {
    #[error("the {which} delimiter is empty")]
    Empty { which: &'static str },
    #[error("the {which} delimiter {value:?} contains a line break")]
    LineBreak { which: &'static str, value: String },
    #[error("the {which} delimiter {value:?} starts or ends with whitespace")]
    Whitespace { which: &'static str, value: String },
}

impl Delimiters {
    /// Checks and builds a pair of delimiters. They must be non-empty, on one
    /// line, and not start or end with whitespace (markers are recognised at
    /// column 1 and trailing whitespace after a marker is tolerated).
    pub fn new(start: &str, end: &str) -> Result<Delimiters, DelimiterError> {
        for (which, value) in [("start", start), ("end", end)] {
            if value.is_empty() {
                return Err(DelimiterError::Empty { which });
            }
            if value.contains(['\n', '\r']) {
                return Err(DelimiterError::LineBreak {
                    which,
                    value: value.to_string(),
                });
            }
            if value.starts_with(char::is_whitespace) || value.ends_with(char::is_whitespace) {
                return Err(DelimiterError::Whitespace {
                    which,
                    value: value.to_string(),
                });
            }
        }
        Ok(Delimiters {
            start: start.to_string(),
            end: end.to_string(),
        })
    }
}

/// A parsed reply: what it asks for and what is wrong with it.
#[derive(Debug, Clone)]
pub struct Reply<'a> {
    /// The text the spans refer to (BOM removed, invalid UTF-8 replaced).
    pub source: Cow<'a, str>,
    /// Top-level operations in document order; TASKS blocks hold their own.
    pub operations: Vec<Operation<'a>>,
    /// Every problem, sorted by line (stable for one line): the first
    /// [`sink::MAX_KEPT`] kept, all counted.
    pub diagnostics: Diagnostics,
    /// Start markers indented off column 1 outside any operation (line,
    /// operation): operations the reply meant that do not run. Kept apart
    /// from their warnings, which may be past the diagnostics' cap.
    pub indented: Vec<(u32, OpKind)>,
}

impl Reply<'_> {
    pub fn counts(&self) -> Counts {
        self.diagnostics.counts()
    }

    /// Whether any operation, top level or in a TASKS block, is a RUN.
    pub fn has_run(&self) -> bool {
        fn any_run(ops: &[Operation<'_>]) -> bool {
            ops.iter().any(|op| match &op.body {
                Body::Run { .. } => true,
                Body::Tasks { operations } => any_run(operations),
                _ => false,
            })
        }
        any_run(&self.operations)
    }

    /// Whether nothing in the reply may run.
    pub fn has_fatal(&self) -> bool {
        self.diagnostics.has_fatal()
    }
}

/// Parses reply bytes: size limit, BOM, UTF-8, then [`parse`].
pub fn parse_bytes<'a>(bytes: &'a [u8], delims: &Delimiters) -> Reply<'a> {
    if bytes.len() > input::MAX_INPUT {
        return Reply {
            source: Cow::Borrowed(""),
            operations: Vec::new(),
            diagnostics: vec![input::too_large(bytes.len() as u64)].into(),
            indented: Vec::new(),
        };
    }
    let decoded = input::decode(bytes);
    let mut diagnostics = Diagnostics::new();
    diagnostics.extend(decoded.diagnostic);
    match decoded.text {
        Cow::Borrowed(text) => {
            let read = parser::parse(text, delims, &mut diagnostics);
            finish(Cow::Borrowed(text), read, diagnostics, delims)
        }
        Cow::Owned(text) => {
            // Invalid UTF-8 is fatal: the tree is only needed for its
            // diagnostics, so it need not borrow from the owned text.
            let read = parser::parse(&text, delims, &mut diagnostics);
            let read = parser::Read {
                operations: Vec::new(),
                ..read
            };
            finish(Cow::Owned(text), read, diagnostics, delims)
        }
    }
}

/// Parses and validates reply text (already decoded, BOM removed).
pub fn parse<'a>(text: &'a str, delims: &Delimiters) -> Reply<'a> {
    let mut diagnostics = Diagnostics::new();
    let read = parser::parse(text, delims, &mut diagnostics);
    finish(Cow::Borrowed(text), read, diagnostics, delims)
}

fn finish<'a>(
    source: Cow<'a, str>,
    read: parser::Read<'a>,
    mut diagnostics: Diagnostics,
    delims: &Delimiters,
) -> Reply<'a> {
    let parser::Read {
        operations,
        indented,
    } = read;
    if operations.is_empty() && !diagnostics.has_fatal() {
        diagnostics.push(Diagnostic {
            kind: DiagnosticKind::NoOperations,
            line: 1,
            column: 1,
            line_start: 0,
            span: Span::default(),
            message: "the reply contains no operations".to_string(),
            hint: Some(format!(
                "operations start with a marker at column 1, such as {}WRITE file=\"path\"{}",
                delims.start, delims.end
            )),
            operation: None,
            task: None,
        });
    }
    diagnostics.finish();
    Reply {
        source,
        operations,
        diagnostics,
        indented,
    }
}

/// 1-based character column of byte `offset` on the line starting at
/// `line_start`.
pub(crate) fn column(src: &str, line_start: usize, offset: usize) -> u32 {
    src.get(line_start..offset)
        .map_or(1, |s| s.chars().count() as u32 + 1)
}
