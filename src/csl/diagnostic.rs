//! Problems found in a reply: what they are, where, and how to fix them.
//!
//! Owns the diagnostic model and its rustc-style text rendering. Problems in
//! a reply are data, not `Err`: the parser records them here and keeps going
//! so that one pass reports every fatal error.

use std::fmt::{self, Write as _};

use super::ast::{OpKind, Span, TaskId};
use crate::style::{Painted, Palette};

/// How bad a problem is, in the spec's three levels (csl.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Syntax error: nothing in the reply may run.
    Fatal,
    /// Semantic error: the operation (or its whole TASKS block) is skipped.
    Invalid,
    /// Worth telling, changes nothing.
    Warning,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Fatal => "fatal",
            Severity::Invalid => "invalid",
            Severity::Warning => "warning",
        }
    }
}

/// Every kind of problem the front end reports. Tests compare these, not
/// message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    // Fatal.
    InputTooLarge,
    InvalidUtf8,
    MalformedMarker,
    UnknownOperation,
    UnquotedValue,
    UnterminatedQuote,
    DuplicateAttribute,
    EndWithAttributes,
    ContentOnMarkerLine,
    /// END with nothing open, or TO / REPLACE outside a SEARCH.
    MisplacedMarker,
    NestedTasks,
    SearchWithoutReplace,
    Unterminated,
    // Invalid.
    MissingFile,
    InvalidCount,
    InvalidAppend,
    EmptyRun,
    EmptyPattern,
    EmptyTo,
    // Warnings.
    UnknownAttribute,
    IndentedMarker,
    MarkerInContent,
    EmptyTasks,
    NoOperations,
    // Detection and the other front ends (syntax/).
    /// Warning: a block of another syntax than the reply's; not applied.
    ForeignBlock,
    /// Fatal: the JSON document does not parse.
    MalformedJson,
    /// Fatal: the JSON parses but is none of the forms clada reads.
    UnknownJsonShape,
    /// Invalid: a JSON operation is missing a field, has one of the wrong
    /// type, or names an unknown operation.
    InvalidJsonOperation,
    /// A block of a marker-line syntax whose markers are out of order.
    MalformedBlock,
    /// A block the reply never ends (it runs into the next one).
    UnterminatedBlock,
    /// A marker where it does nothing (ignored).
    StrayMarker,
    /// Invalid: a CML element is not well-formed or not CML (unknown
    /// element or attribute, markup outside CDATA, a missing part): that
    /// element, or its whole block, is skipped.
    MalformedXml,
    /// Fatal: a CML CDATA section never closes, so nothing after it can
    /// be read.
    UnreadableXml,
    /// Invalid: `<tasks version="…">` names a CML version there never was.
    UnknownVersion,
    // SHAM/NESL and TELT (syntax/sham.rs, syntax/telt.rs): each skips its
    // block (invalid) except the warning.
    /// A line inside a block that is none of the syntax's forms.
    MalformedLine,
    /// A closing line or delimiter carrying another block's ID.
    IdMismatch,
    /// A SHAM heredoc whose terminator never comes.
    UnterminatedHeredoc,
    /// A quoted SHAM value: an unknown escape, no closing quote, no quotes.
    MalformedValue,
    /// A key given twice in one SHAM block (or a single-valued TELT
    /// parameter given twice).
    DuplicateKey,
    UnknownAction,
    /// An action of the original tooling that git-clada does not run
    /// (`context_*`, `files_replace_text_in_parents`, …).
    UnsupportedAction,
    MissingParameter,
    /// A parameter whose value cannot be used (a count that is no number,
    /// an unknown `lang`, an empty `old_text`).
    InvalidParameter,
    /// Warning: a parameter the action does not take; ignored.
    UnknownParameter,
}

impl DiagnosticKind {
    pub fn severity(self) -> Severity {
        use DiagnosticKind::*;
        match self {
            InputTooLarge | InvalidUtf8 | MalformedMarker | UnknownOperation | UnquotedValue
            | UnterminatedQuote | DuplicateAttribute | EndWithAttributes | ContentOnMarkerLine
            | MisplacedMarker | NestedTasks | SearchWithoutReplace | Unterminated
            | MalformedJson | UnknownJsonShape | UnreadableXml => Severity::Fatal,
            MissingFile | InvalidCount | InvalidAppend | EmptyRun | EmptyPattern | EmptyTo
            | InvalidJsonOperation | MalformedBlock | UnterminatedBlock | MalformedXml
            | UnknownVersion | MalformedLine | IdMismatch | UnterminatedHeredoc
            | MalformedValue | DuplicateKey | UnknownAction | UnsupportedAction
            | MissingParameter | InvalidParameter => Severity::Invalid,
            UnknownAttribute | IndentedMarker | MarkerInContent | EmptyTasks | NoOperations
            | ForeignBlock | StrayMarker | UnknownParameter => Severity::Warning,
        }
    }

    /// The stable code of the problem, in text (`fatal[code]`) and JSON
    /// (`code`): agents branch on it, so a code never changes meaning.
    pub fn code(self) -> &'static str {
        use DiagnosticKind::*;
        match self {
            InputTooLarge => "input_too_large",
            InvalidUtf8 => "invalid_utf8",
            MalformedMarker => "malformed_marker",
            UnknownOperation => "unknown_operation",
            UnquotedValue => "unquoted_value",
            UnterminatedQuote => "unterminated_quote",
            DuplicateAttribute => "duplicate_attribute",
            EndWithAttributes => "end_with_attributes",
            ContentOnMarkerLine => "content_on_marker_line",
            MisplacedMarker => "misplaced_marker",
            NestedTasks => "nested_tasks",
            SearchWithoutReplace => "search_without_replace",
            Unterminated => "unterminated_operation",
            MissingFile => "missing_attribute",
            InvalidCount => "invalid_count",
            InvalidAppend => "invalid_append",
            EmptyRun => "empty_run",
            EmptyPattern => "empty_pattern",
            EmptyTo => "empty_to",
            UnknownAttribute => "unknown_attribute",
            IndentedMarker => "indented_marker",
            MarkerInContent => "marker_in_content",
            EmptyTasks => "empty_tasks",
            NoOperations => "no_operations",
            ForeignBlock => "foreign_block",
            MalformedJson => "malformed_json",
            UnknownJsonShape => "unknown_json_shape",
            InvalidJsonOperation => "invalid_operation",
            MalformedBlock => "malformed_block",
            UnterminatedBlock => "unterminated_block",
            StrayMarker => "stray_marker",
            // One code for CML's syntax errors (the original protocol's);
            // the severity says whether the rest of the reply was read.
            MalformedXml | UnreadableXml => "malformed_xml",
            UnknownVersion => "unknown_version",
            MalformedLine => "malformed_line",
            IdMismatch => "id_mismatch",
            UnterminatedHeredoc => "unterminated_heredoc",
            MalformedValue => "malformed_value",
            DuplicateKey => "duplicate_key",
            UnknownAction => "unknown_action",
            UnsupportedAction => "unsupported_action",
            MissingParameter => "missing_parameter",
            InvalidParameter => "invalid_parameter",
            UnknownParameter => "unknown_parameter",
        }
    }
}

/// One problem, located in the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// 1-based line in the original input.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// Byte offset of the start of the line, to show it when rendering.
    pub line_start: usize,
    /// The offending bytes, underlined when rendering.
    pub span: Span,
    pub message: String,
    pub hint: Option<String>,
    pub operation: Option<OpKind>,
    pub task: Option<TaskId>,
}

impl Diagnostic {
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }
}

/// Counts by severity, for summaries and exit codes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub fatal: usize,
    pub invalid: usize,
    pub warning: usize,
}

impl Counts {
    pub fn of(diagnostics: &[Diagnostic]) -> Counts {
        let mut counts = Counts::default();
        for d in diagnostics {
            counts.add(d.severity());
        }
        counts
    }

    /// Counts one more diagnostic of `severity`.
    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Fatal => self.fatal += 1,
            Severity::Invalid => self.invalid += 1,
            Severity::Warning => self.warning += 1,
        }
    }

    pub fn total(self) -> usize {
        self.fatal + self.invalid + self.warning
    }

    pub fn plus(self, other: Counts) -> Counts {
        Counts {
            fatal: self.fatal + other.fatal,
            invalid: self.invalid + other.invalid,
            warning: self.warning + other.warning,
        }
    }

    /// `self` less `other`, which it counts a part of.
    pub fn minus(self, other: Counts) -> Counts {
        Counts {
            fatal: self.fatal.saturating_sub(other.fatal),
            invalid: self.invalid.saturating_sub(other.invalid),
            warning: self.warning.saturating_sub(other.warning),
        }
    }
}

/// Renders one diagnostic the way rustc does: headline, location, the source
/// line with a caret under the problem, and the hint.
///
/// `source` is the text the diagnostic's offsets refer to; `origin` names it
/// (a file name, or `<stdin>`).
pub fn render(d: &Diagnostic, source: &str, origin: &str) -> String {
    render_in(d, source, origin, &Palette::PLAIN)
}

/// [`render`] in `palette`'s colours, as rustc colours its diagnostics:
/// the severity and the carets in its colour, the gutter blue.
pub fn render_in(d: &Diagnostic, source: &str, origin: &str, palette: &Palette) -> String {
    let mut out = String::new();
    let level = match d.severity() {
        Severity::Warning => palette.warn,
        Severity::Fatal | Severity::Invalid => palette.bad,
    };
    let _ = writeln!(
        out,
        "{}: {}",
        Painted(
            level,
            &format!("{}[{}]", d.severity().name(), d.kind.code())
        ),
        d.message
    );
    let gutter = d.line.to_string().len();
    let pad = " ".repeat(gutter);
    let bar = Painted(palette.gutter, "|");
    let _ = writeln!(
        out,
        "{pad}{} {origin}:{}:{}",
        Painted(palette.gutter, "-->"),
        d.line,
        d.column
    );
    if let Some(text) = line_text(source, d.line_start) {
        let shown = text.replace('\t', "    ");
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(
            out,
            "{} {bar} {}",
            Painted(palette.gutter, &d.line.to_string()),
            shown
        );
        // A span from any front end may fall inside a character: the caret
        // goes to the character it is in (rendering never panics).
        let at = floor_boundary(text, d.span.start.saturating_sub(d.line_start));
        let lead = &text[..at];
        let lead_width: usize = lead.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum();
        let under_end = floor_boundary(text, d.span.end.saturating_sub(d.line_start));
        let under_start = lead.len();
        let width = text
            .get(under_start..under_end.max(under_start))
            .map_or(1, |s| s.chars().count())
            .max(1);
        let _ = writeln!(
            out,
            "{pad} {bar} {}{}",
            " ".repeat(lead_width),
            Painted(level, &"^".repeat(width))
        );
    }
    if let Some(hint) = &d.hint {
        let _ = writeln!(out, "{pad} = {}: {hint}", Painted(palette.hint, "hint"));
    }
    out
}

/// `at`, or the start of the character it falls in, within `text`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The line that starts at `line_start`, without its line end; `None` when
/// the offset is past the end (an empty input, say).
fn line_text(source: &str, line_start: usize) -> Option<&str> {
    let rest = source.get(line_start..)?;
    if rest.is_empty() && line_start > 0 {
        return None;
    }
    let end = memchr::memchr2(b'\n', b'\r', rest.as_bytes()).unwrap_or(rest.len());
    Some(&rest[..end])
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, column {}: {}",
            self.severity().name(),
            self.line,
            self.column,
            self.message
        )
    }
}
