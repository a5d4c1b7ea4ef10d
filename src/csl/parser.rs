//! The state machine that turns lines into operations.
//!
//! Owns context sensitivity (csl.md §5): which markers are recognised in which
//! state, what is content and what is prose, and recovery after an error so
//! that one pass reports every fatal problem. One transition function per
//! kind of state, driven line by line (runs of lines that cannot be markers
//! at once); no backtracking. Each operation is validated as it closes.

use std::borrow::Cow;

use foldhash::HashSet;

use super::Delimiters;
use super::ast::{Attr, Body, OpKind, Operation, Span, TaskId};
use super::diagnostic::{Diagnostic, DiagnosticKind as K, Severity};
use super::lexer::{Line, Marker, MarkerError, Piece, Pieces, Plain, marker_name, read_marker};
use super::sink::Diagnostics;
use super::validate;

/// Marker names that are not operations but mean something inside one.
const END: &str = "END";
const TO: &str = "TO";
const REPLACE: &str = "REPLACE";

/// What the parser read besides its diagnostics.
#[derive(Debug)]
pub struct Read<'a> {
    pub operations: Vec<Operation<'a>>,
    /// See [`super::Reply::indented`].
    pub indented: Vec<(u32, OpKind)>,
}

/// Parses `src` into operations and validates them, appending problems to
/// `diags`.
pub fn parse<'a>(src: &'a str, delims: &Delimiters, diags: &mut Diagnostics) -> Read<'a> {
    // Fatal errors found before (invalid UTF-8) count as the parser's own.
    let fatal_lines = diags
        .iter()
        .filter(|d| d.severity() == Severity::Fatal)
        .map(|d| d.line)
        .collect();
    let mut p = Parser {
        src,
        delims,
        diags,
        ops: Vec::new(),
        tasks: None,
        open: None,
        next_task: 1,
        last_line: 0,
        unrecognised: None,
        last_closed: None,
        fatal_lines,
        indented: Vec::new(),
    };
    let mut pieces = Pieces::new(src, delims);
    for piece in &mut pieces {
        match piece {
            Piece::Plain(run) => p.plain_lines(run),
            Piece::Line(line) if p.open.is_some() => p.in_operation(line),
            Piece::Line(line) => p.in_prose(line),
        }
    }
    p.last_line = pieces.lines_read();
    p.finish();
    Read {
        operations: p.ops,
        indented: p.indented,
    }
}

/// Which part of an open operation the next content line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// WRITE or RUN content.
    Content,
    Pattern,
    To,
    Replacement,
}

impl Section {
    /// The marker names recognised in this section (csl.md §5).
    fn names(self) -> &'static [&'static str] {
        match self {
            Section::Content | Section::Replacement => &[END],
            Section::Pattern => &[TO, REPLACE, END],
            Section::To => &[REPLACE],
        }
    }

    fn recognises(self, name: &str) -> bool {
        self.names().contains(&name)
    }

    /// What the section is called in messages.
    fn noun(self) -> &'static str {
        match self {
            Section::Content => "content",
            Section::Pattern => "pattern",
            Section::To => "TO text",
            Section::Replacement => "replacement",
        }
    }

    /// The marker(s) that must follow for the operation to be complete.
    fn missing(self, d: &Delimiters) -> String {
        match self {
            Section::Content | Section::Replacement => format!("{}END{}", d.start, d.end),
            Section::Pattern | Section::To => format!(
                "{}REPLACE{}, the replacement text and {}END{}",
                d.start, d.end, d.start, d.end
            ),
        }
    }
}

/// Every marker name, for did-you-mean suggestions in prose.
const ALL_NAMES: [&str; 7] = ["WRITE", "RUN", "SEARCH", "TASKS", END, TO, REPLACE];

/// An operation whose END has not been seen yet.
struct OpenOp<'a> {
    kind: OpKind,
    line: u32,
    line_start: usize,
    task: TaskId,
    attrs: Vec<Attr<'a>>,
    section: Section,
    /// Byte range of the current section's content lines, if any.
    content: Option<Span>,
    pattern: Option<Cow<'a, str>>,
    to: Option<Cow<'a, str>>,
    /// First content line that looks like the start of another operation:
    /// where the missing END most likely belongs.
    looks_like_next_op: Option<u32>,
    /// A content line that looks like a misspelt marker of this section
    /// (`<---end--->`): where the author most likely meant to close it.
    looks_like_close: Option<(u32, &'static str)>,
    /// An END read as TO text (a range SEARCH needs REPLACE first).
    end_in_to: Option<u32>,
}

impl OpenOp<'_> {
    /// Adds the lines from byte `start` to `end` to the current section.
    fn add_content(&mut self, start: usize, end: usize) {
        let start = self.content.map_or(start, |span| span.start);
        self.content = Some(Span::new(start, end));
    }
}

/// Where an operation was closed.
#[derive(Debug, Clone, Copy)]
struct Closed {
    kind: OpKind,
    opened: u32,
    end: u32,
    /// Whether the closing marker line was well formed.
    end_ok: bool,
}

/// A TASKS block whose END has not been seen yet.
struct OpenTasks<'a> {
    line: u32,
    line_start: usize,
    task: u32,
    attrs: Vec<Attr<'a>>,
    operations: Vec<Operation<'a>>,
    /// Nested TASKS markers seen (each reported), so their ENDs are absorbed.
    nested: u32,
}

struct Parser<'a, 'd> {
    src: &'a str,
    delims: &'d Delimiters,
    diags: &'d mut Diagnostics,
    ops: Vec<Operation<'a>>,
    tasks: Option<OpenTasks<'a>>,
    open: Option<OpenOp<'a>>,
    next_task: u32,
    /// The number of lines, once all are read.
    last_line: u32,
    /// Line of the last marker with an unknown name that was left as prose,
    /// to explain a stray END later.
    unrecognised: Option<u32>,
    /// The last operation closed, to explain a stray END later.
    last_closed: Option<Closed>,
    /// The lines of the fatal diagnostics, noted as they are pushed: the
    /// diagnostics themselves may be dropped past the cap (`sink`).
    fatal_lines: HashSet<u32>,
    /// See [`Read::indented`].
    indented: Vec<(u32, OpKind)>,
}

impl<'a> Parser<'a, '_> {
    /// A line outside any operation: top level, or between the operations of
    /// a TASKS block.
    fn in_prose(&mut self, line: Line<'a>) {
        if !line.text.starts_with(self.delims.start.as_str()) {
            self.check_indented(line, None);
            return;
        }
        let mut marker = read_marker(line, self.delims);
        let name = marker.name;
        if let Some(kind) = OpKind::from_name(name) {
            // Open first, so that a problem on the marker line belongs to
            // the task it opens.
            let attrs = std::mem::take(&mut marker.attrs);
            self.open_operation(line, kind, marker.name_span, attrs);
            self.report_marker_error(line, &marker, Some(kind));
            return;
        }
        let had_error = self.report_marker_error(line, &marker, None);
        if name == END {
            self.stray_or_tasks_end(line, &marker, had_error);
            return;
        }
        // A name in the wrong case (`search`) is said even when the rest
        // of the line has an error too: fixing only the quoting would
        // leave it. (Other near names with an error stay prose: the error
        // may be what cut the name short, as `WRITÉ` reads as `WRIT`.)
        let wrong_case = ALL_NAMES
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name) && *n != name);
        if (had_error && !wrong_case) || name.is_empty() {
            self.unrecognised = Some(line.number);
            return;
        }
        if name == TO || name == REPLACE {
            self.push(
                K::MisplacedMarker,
                line,
                marker.name_span,
                format!("{name} marker outside a SEARCH operation"),
                Some(format!(
                    "{name} belongs inside a SEARCH: {}SEARCH file=\"path\"{} pattern, then {}REPLACE{}, replacement, {}",
                    self.delims.start, self.delims.end, self.delims.start, self.delims.end, self.end_marker()
                )),
                None,
            );
            return;
        }
        let suggestion = suggest(name, &ALL_NAMES);
        let hint = match suggestion {
            Some(s) => did_you_mean(name, s),
            None => format!(
                "operations are WRITE, SEARCH, RUN and TASKS; a prose line must not start with '{}'",
                self.delims.start
            ),
        };
        self.push(
            K::UnknownOperation,
            line,
            marker.name_span,
            format!("Unknown operation: {name}"),
            Some(hint),
            None,
        );
        // Recover as the marker that was most likely meant, so that its
        // content and END do not cause a cascade of errors.
        match suggestion {
            Some(END) => self.stray_or_tasks_end(line, &marker, true),
            Some(s) => match OpKind::from_name(s) {
                Some(kind) => {
                    let attrs = std::mem::take(&mut marker.attrs);
                    self.open_operation(line, kind, marker.name_span, attrs);
                }
                None => self.unrecognised = Some(line.number),
            },
            None => self.unrecognised = Some(line.number),
        }
    }

    fn open_operation(
        &mut self,
        line: Line<'a>,
        kind: OpKind,
        name_span: Span,
        attrs: Vec<Attr<'a>>,
    ) {
        if kind == OpKind::Tasks {
            if let Some(tasks) = &mut self.tasks {
                tasks.nested += 1;
                let outer = tasks.line;
                self.push(
                    K::NestedTasks,
                    line,
                    name_span,
                    "TASKS cannot be nested".to_string(),
                    Some(format!(
                        "close the TASKS block opened at line {outer} with {} before starting another",
                        self.end_marker()
                    )),
                    Some(OpKind::Tasks),
                );
                return;
            }
            let task = self.take_task_number();
            self.tasks = Some(OpenTasks {
                line: line.number,
                line_start: line.start,
                task,
                attrs,
                operations: Vec::new(),
                nested: 0,
            });
            return;
        }
        let task = match &self.tasks {
            Some(t) => TaskId {
                top: t.task,
                sub: Some(t.operations.len() as u32 + 1),
            },
            None => TaskId {
                top: self.take_task_number(),
                sub: None,
            },
        };
        self.open = Some(OpenOp {
            kind,
            line: line.number,
            line_start: line.start,
            task,
            attrs,
            section: if kind == OpKind::Search {
                Section::Pattern
            } else {
                Section::Content
            },
            content: None,
            pattern: None,
            to: None,
            looks_like_next_op: None,
            looks_like_close: None,
            end_in_to: None,
        });
    }

    /// END in prose: closes a TASKS block, or stands alone (an error).
    fn stray_or_tasks_end(&mut self, line: Line<'a>, marker: &Marker<'a>, had_error: bool) {
        if let Some(tasks) = &mut self.tasks {
            if tasks.nested > 0 {
                tasks.nested -= 1;
                return;
            }
            if !had_error {
                self.check_end_attributes(line, marker, Some(OpKind::Tasks));
            }
            let tasks = self.tasks.take().expect("checked above");
            self.last_closed = Some(Closed {
                kind: OpKind::Tasks,
                opened: tasks.line,
                end: line.number,
                end_ok: !had_error,
            });
            let task = TaskId {
                top: tasks.task,
                sub: None,
            };
            if tasks.operations.is_empty() {
                self.push_for(
                    Some(task),
                    K::EmptyTasks,
                    Line {
                        text: "",
                        start: tasks.line_start,
                        number: tasks.line,
                    },
                    Span::new(tasks.line_start, tasks.line_start),
                    "TASKS block has no operations".to_string(),
                    Some(
                        "put operations between TASKS and its END, or remove the block".to_string(),
                    ),
                    Some(OpKind::Tasks),
                );
            }
            let op = Operation {
                line: tasks.line,
                line_start: tasks.line_start,
                task,
                attrs: tasks.attrs,
                body: Body::Tasks {
                    operations: tasks.operations,
                },
                starts_another: None,
            };
            self.validate(&op);
            self.ops.push(op);
            return;
        }
        if had_error {
            return;
        }
        let closed_at = self.last_closed.map_or(0, |c| c.end);
        let hint = match (self.unrecognised, self.last_closed) {
            (Some(n), _) if n > closed_at => format!(
                "the marker at line {n} was not recognised, so this END closes nothing; fix that marker"
            ),
            (
                _,
                Some(Closed {
                    kind,
                    opened,
                    end,
                    end_ok: false,
                }),
            ) => format!(
                "the broken marker at line {end} already closed the {kind} opened at line {opened}; fix that line and remove this one"
            ),
            (
                _,
                Some(Closed {
                    kind,
                    opened,
                    end,
                    end_ok: true,
                }),
            ) => format!(
                "the END at line {end} already closed the {kind} opened at line {opened}; if line {end} was meant as content, use delimiters that do not occur in it (--start-delimiter / --end-delimiter)"
            ),
            _ => "remove this line, or add the operation it should close above it".to_string(),
        };
        self.push(
            K::MisplacedMarker,
            line,
            marker.name_span,
            "END marker with no open operation".to_string(),
            Some(hint),
            None,
        );
    }

    /// A line inside an open operation: content, or a marker recognised in
    /// the current section.
    fn in_operation(&mut self, line: Line<'a>) {
        let section = self
            .open
            .as_ref()
            .expect("called with an open operation")
            .section;
        let is_marker = matches!(
            marker_name(line.text, self.delims),
            Some((name, true)) if section.recognises(name)
        );
        if !is_marker {
            self.content_line(line, section);
            return;
        }
        let end_line = line.number;
        let marker = read_marker(line, self.delims);
        let op_kind = self.open.as_ref().map(|o| o.kind);
        let had_error = self.report_marker_error(line, &marker, op_kind);
        let open = self.open.as_mut().expect("called with an open operation");
        match (marker.name, section) {
            (TO, Section::Pattern) => {
                open.pattern = Some(take_section(self.src, &mut open.content));
                open.section = Section::To;
                self.check_no_attributes(line, &marker, had_error);
            }
            (REPLACE, Section::Pattern | Section::To) => {
                let text = take_section(self.src, &mut open.content);
                if section == Section::Pattern {
                    open.pattern = Some(text);
                } else {
                    open.to = Some(text);
                }
                open.section = Section::Replacement;
                self.check_no_attributes(line, &marker, had_error);
            }
            (END, Section::Pattern) => {
                open.pattern = Some(take_section(self.src, &mut open.content));
                let (op_line, kind) = (open.line, open.kind);
                self.push(
                    K::SearchWithoutReplace,
                    line,
                    marker.name_span,
                    "SEARCH operation closed without a REPLACE section".to_string(),
                    Some(format!(
                        "SEARCH (line {op_line}) needs {}REPLACE{} and the replacement text before {}; an empty replacement deletes the match",
                        self.delims.start, self.delims.end, self.end_marker()
                    )),
                    Some(kind),
                );
                self.close_operation(end_line, !had_error);
            }
            _ => {
                // END of WRITE/RUN content or of a SEARCH replacement.
                if !had_error {
                    self.check_end_attributes(line, &marker, op_kind);
                }
                self.close_operation(end_line, !had_error);
            }
        }
    }

    /// Lines that cannot be markers: content of the open operation, or
    /// prose, which needs nothing.
    fn plain_lines(&mut self, run: Plain) {
        if let Some(open) = &mut self.open {
            open.add_content(run.start, run.end);
        }
    }

    fn content_line(&mut self, line: Line<'a>, section: Section) {
        let open = self.open.as_mut().expect("called with an open operation");
        open.add_content(line.start, line.end());
        let kind = open.kind;
        if section == Section::To
            && matches!(marker_name(line.text, self.delims), Some((END, true)))
        {
            if open.end_in_to.is_none() {
                open.end_in_to = Some(line.number);
            }
            let replace = format!("{}REPLACE{}", self.delims.start, self.delims.end);
            self.push(
                K::MarkerInContent,
                line,
                Span::new(line.start, line.end()),
                "END inside the TO text of a range SEARCH is part of the TO text".to_string(),
                Some(format!(
                    "a range SEARCH is pattern, TO, end text, then {replace}, the replacement and END"
                )),
                Some(kind),
            );
            return;
        }
        if let Some((name, true)) = marker_name(line.text, self.delims) {
            if OpKind::from_name(name).is_some() {
                if open.looks_like_next_op.is_none() {
                    open.looks_like_next_op = Some(line.number);
                }
                let missing = section.missing(self.delims);
                self.push(
                    K::MarkerInContent,
                    line,
                    Span::new(line.start, line.end()),
                    format!("line inside {kind} {} looks like a {name} marker", section.noun()),
                    Some(format!(
                        "did you forget {missing} above? As written, this line is part of the {kind} {}",
                        section.noun()
                    )),
                    Some(kind),
                );
                return;
            }
            let names = section.names();
            if let Some(meant) = suggest(name, names) {
                if open.looks_like_close.is_none() {
                    open.looks_like_close = Some((line.number, meant));
                }
                self.push(
                    K::MarkerInContent,
                    line,
                    Span::new(
                        line.start + self.delims.start.len(),
                        line.start + self.delims.start.len() + name.len(),
                    ),
                    format!(
                        "line inside {kind} {} looks like a misspelt {meant} marker",
                        section.noun()
                    ),
                    Some(format!(
                        "{}; as written, this line is part of the {kind} {}",
                        did_you_mean(name, meant),
                        section.noun()
                    )),
                    Some(kind),
                );
                return;
            }
        }
        // `<--- END --->`: a marker of this section with spaces around its
        // name, which is no marker; the author most likely meant it to
        // close the section.
        if let Some((name, at)) = spaced_name(line.text, self.delims)
            && let Some(meant) = suggest(name, section.names())
        {
            let open = self.open.as_mut().expect("called with an open operation");
            if open.looks_like_close.is_none() {
                open.looks_like_close = Some((line.number, meant));
            }
            self.push(
                K::MarkerInContent,
                line,
                Span::new(line.start + at, line.start + at + name.len()),
                format!(
                    "line inside {kind} {} looks like an {meant} marker written with spaces",
                    section.noun()
                ),
                Some(format!(
                    "write it exactly as {}{meant}{}, with no space inside; as written, this line is part of the {kind} {}",
                    self.delims.start,
                    self.delims.end,
                    section.noun()
                )),
                Some(kind),
            );
            return;
        }
        self.check_indented(line, Some(section));
    }

    /// Warns about a line that would be a marker if it started at column 1.
    fn check_indented(&mut self, line: Line<'a>, section: Option<Section>) {
        let trimmed = line.text.trim_start_matches([' ', '\t']);
        if trimmed.len() == line.text.len() {
            return;
        }
        let Some((name, true)) = marker_name(trimmed, self.delims) else {
            return;
        };
        let recognised = match section {
            Some(s) => s.recognises(name),
            None => OpKind::from_name(name).is_some() || (name == END && self.tasks.is_some()),
        };
        if !recognised {
            return;
        }
        let indent = line.text.len() - trimmed.len();
        let operation = self.open.as_ref().map(|o| o.kind);
        if operation.is_none()
            && let Some(kind) = OpKind::from_name(name)
        {
            self.indented.push((line.number, kind));
        }
        self.push(
            K::IndentedMarker,
            line,
            Span::new(line.start, line.start + indent),
            format!("indented {name} marker is not a marker; markers must start at column 1"),
            Some(format!(
                "remove the {indent} leading whitespace character(s) if this is meant as a marker"
            )),
            operation,
        );
    }

    /// Reports the structural error of a marker line; returns whether there
    /// was one.
    fn report_marker_error(
        &mut self,
        line: Line<'a>,
        marker: &Marker<'a>,
        op: Option<OpKind>,
    ) -> bool {
        let Some((error, span)) = &marker.error else {
            return false;
        };
        let end = &self.delims.end;
        let (kind, message, hint) = match error {
            MarkerError::Malformed(why) => (
                K::MalformedMarker,
                format!("Malformed marker: {why}"),
                format!(
                    "a marker is a whole line: {}NAME attr=\"value\"{end}; a prose line must not start with '{}'",
                    self.delims.start, self.delims.start
                ),
            ),
            MarkerError::UnquotedValue => (
                K::UnquotedValue,
                "Unquoted attribute value".to_string(),
                "put the value in double or single quotes: name=\"value\"".to_string(),
            ),
            MarkerError::UnterminatedQuote(quote) => (
                K::UnterminatedQuote,
                "Unterminated quoted value".to_string(),
                format!(
                    "close the value with the {quote} it opens with; write \\{quote} for a {quote} inside it"
                ),
            ),
            MarkerError::DuplicateAttribute(name) => (
                K::DuplicateAttribute,
                format!("Duplicate attribute: {name}"),
                format!("give '{name}' once"),
            ),
            MarkerError::TrailingContent => (
                K::ContentOnMarkerLine,
                "Content not allowed on marker line".to_string(),
                format!("end the line at '{end}' and put the text on the next line"),
            ),
        };
        let op = op.or_else(|| OpKind::from_name(marker.name));
        self.push(kind, line, *span, message, Some(hint), op);
        true
    }

    fn check_end_attributes(&mut self, line: Line<'a>, marker: &Marker<'a>, op: Option<OpKind>) {
        if let Some(first) = marker.attrs.first() {
            let last = marker.attrs.last().expect("not empty");
            self.push(
                K::EndWithAttributes,
                line,
                Span::new(first.span.start, last.span.end),
                "END marker cannot have attributes".to_string(),
                Some(format!("write the closer as {}", self.end_marker())),
                op,
            );
        }
    }

    /// TO and REPLACE take no attributes; they are ignored with a warning.
    fn check_no_attributes(&mut self, line: Line<'a>, marker: &Marker<'a>, had_error: bool) {
        if had_error {
            return;
        }
        for attr in &marker.attrs {
            self.push(
                K::UnknownAttribute,
                line,
                attr.span,
                format!(
                    "Unknown attribute '{}' on {} marker is ignored",
                    attr.name, marker.name
                ),
                Some(format!(
                    "write {}{}{} alone",
                    self.delims.start, marker.name, self.delims.end
                )),
                Some(OpKind::Search),
            );
        }
    }

    fn close_operation(&mut self, end_line: u32, end_ok: bool) {
        let mut open = self.open.take().expect("called with an open operation");
        self.last_closed = Some(Closed {
            kind: open.kind,
            opened: open.line,
            end: end_line,
            end_ok,
        });
        let last = take_section(self.src, &mut open.content);
        let body = match open.kind {
            OpKind::Write => Body::Write { content: last },
            OpKind::Run => Body::Run { content: last },
            OpKind::Search => match open.section {
                // Closed by END right after the pattern (already reported).
                Section::Pattern | Section::To => Body::Search {
                    pattern: open.pattern.unwrap_or_default(),
                    to: open.to,
                    replacement: Cow::Borrowed(""),
                },
                _ => Body::Search {
                    pattern: open.pattern.unwrap_or_default(),
                    to: open.to,
                    replacement: last,
                },
            },
            _ => unreachable!("only WRITE, RUN and SEARCH are open operations"),
        };
        let op = Operation {
            line: open.line,
            line_start: open.line_start,
            task: open.task,
            attrs: open.attrs,
            body,
            starts_another: open.looks_like_next_op,
        };
        match &mut self.tasks {
            // Validated with its block, which may turn out unterminated.
            Some(tasks) => tasks.operations.push(op),
            None => {
                self.validate(&op);
                self.ops.push(op);
            }
        }
    }

    /// Appends the semantic diagnostics of a closed top-level operation
    /// and of its children. Done as it closes, while its marker line is
    /// still in the cache: done over the finished tree, the checks were a
    /// cache miss per operation.
    ///
    /// An operation whose marker line has a fatal error is not checked (see
    /// `validate_one`); every fatal error of a marker line is known once
    /// its operation is closed.
    fn validate(&mut self, op: &Operation<'a>) {
        for op in std::iter::once(op).chain(op.children()) {
            if !self.fatal_lines.contains(&op.line) {
                validate::validate_one(self.src, op, self.diags);
            }
        }
    }

    /// End of input: whatever is still open is unterminated.
    fn finish(&mut self) {
        let end = self.end_marker();
        if let Some(open) = self.open.take() {
            let missing = open.section.missing(self.delims);
            let hint = if let Some(n) = open.end_in_to {
                format!(
                    "line {n} was read as TO text: a range SEARCH needs {}REPLACE{} and the replacement before {end}",
                    self.delims.start, self.delims.end
                )
            } else if let Some((n, meant)) = open.looks_like_close {
                format!(
                    "line {n} looks like a misspelt {meant} marker: write it exactly as {}{meant}{}",
                    self.delims.start, self.delims.end
                )
            } else if let Some(n) = open.looks_like_next_op {
                format!("add {missing} before line {n}, where the next operation seems to start")
            } else {
                format!("add {missing} after line {}", self.last_line)
            };
            let line = Line {
                text: "",
                start: open.line_start,
                number: open.line,
            };
            let span = Span::new(open.line_start, open.line_start + self.delims.start.len());
            self.push_for(
                Some(open.task),
                K::Unterminated,
                line,
                span,
                format!("Unterminated {} operation", open.kind),
                Some(hint),
                Some(open.kind),
            );
        }
        if let Some(tasks) = self.tasks.take() {
            let line = Line {
                text: "",
                start: tasks.line_start,
                number: tasks.line,
            };
            let span = Span::new(tasks.line_start, tasks.line_start + self.delims.start.len());
            self.push_for(
                Some(TaskId {
                    top: tasks.task,
                    sub: None,
                }),
                K::Unterminated,
                line,
                span,
                "Unterminated TASKS operation".to_string(),
                Some(format!(
                    "add {end} after line {} to close the TASKS block",
                    self.last_line
                )),
                Some(OpKind::Tasks),
            );
        }
    }

    fn take_task_number(&mut self) -> u32 {
        let n = self.next_task;
        self.next_task += 1;
        n
    }

    fn end_marker(&self) -> String {
        format!("{}END{}", self.delims.start, self.delims.end)
    }

    /// The task the parser is in: the open operation's, else the open
    /// TASKS block's.
    fn current_task(&self) -> Option<TaskId> {
        self.open.as_ref().map(|o| o.task).or_else(|| {
            self.tasks.as_ref().map(|t| TaskId {
                top: t.task,
                sub: None,
            })
        })
    }

    fn push(
        &mut self,
        kind: K,
        line: Line<'a>,
        span: Span,
        message: String,
        hint: Option<String>,
        operation: Option<OpKind>,
    ) {
        let task = self.current_task();
        self.push_for(task, kind, line, span, message, hint, operation);
    }

    #[allow(clippy::too_many_arguments)]
    fn push_for(
        &mut self,
        task: Option<TaskId>,
        kind: K,
        line: Line<'a>,
        span: Span,
        message: String,
        hint: Option<String>,
        operation: Option<OpKind>,
    ) {
        let prefix = self.src.get(line.start..span.start).unwrap_or("");
        if kind.severity() == Severity::Fatal {
            self.fatal_lines.insert(line.number);
        }
        self.diags.push(Diagnostic {
            kind,
            line: line.number,
            column: prefix.chars().count() as u32 + 1,
            line_start: line.start,
            span,
            message,
            hint,
            operation,
            task,
        });
    }
}

/// The content of the finished section, LF-normalised: borrowed from the
/// input unless it holds CR line ends.
fn take_section<'a>(src: &'a str, content: &mut Option<Span>) -> Cow<'a, str> {
    let Some(span) = content.take() else {
        return Cow::Borrowed("");
    };
    let raw = &src[span.start..span.end];
    if memchr::memchr(b'\r', raw.as_bytes()).is_none() {
        return Cow::Borrowed(raw);
    }
    Cow::Owned(raw.replace("\r\n", "\n").replace('\r', "\n"))
}

/// The name among `candidates` closest to a misspelt `name`, if any is
/// close enough: the same but for case, or one or two edits away (one for
/// names of three letters or fewer).
fn suggest(name: &str, candidates: &[&'static str]) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if let Some(exact) = candidates.iter().find(|c| **c == upper) {
        return Some(exact);
    }
    candidates
        .iter()
        .map(|c| (strsim::osa_distance(&upper, c), *c))
        .filter(|(d, c)| *d <= if c.len() <= 3 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The name of a line that would be a marker but for blanks around its
/// name (`<--- END --->`), and its byte offset in the line.
fn spaced_name<'t>(text: &'t str, delims: &Delimiters) -> Option<(&'t str, usize)> {
    let rest = text.strip_prefix(delims.start.as_str())?;
    let body = rest.trim_start_matches([' ', '\t']);
    let inner = body
        .trim_end()
        .strip_suffix(delims.end.as_str())?
        .trim_end_matches([' ', '\t']);
    let spaced = body.len() < rest.len() || inner.len() < body.trim_end().len() - delims.end.len();
    let is_name = !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    (spaced && is_name).then(|| (inner, text.len() - rest.len() + (rest.len() - body.len())))
}

fn did_you_mean(name: &str, meant: &str) -> String {
    if meant.eq_ignore_ascii_case(name) {
        format!("did you mean {meant}? Marker names are case-sensitive")
    } else {
        format!("did you mean {meant}?")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str) -> (Vec<Operation<'_>>, Vec<(K, u32, u32)>) {
        let mut diags = Diagnostics::new();
        let ops = parse(src, &Delimiters::default(), &mut diags).operations;
        let d = diags.iter().map(|d| (d.kind, d.line, d.column)).collect();
        (ops, d)
    }

    fn content<'a>(op: &'a Operation<'_>) -> &'a str {
        match &op.body {
            Body::Write { content } | Body::Run { content } => content,
            _ => panic!("not WRITE/RUN"),
        }
    }

    #[test]
    fn write_content_is_the_lines_between_markers() {
        let (ops, d) = run("prose\n<---WRITE file=\"a\"--->\nx\n\ny\n\n<---END--->\n");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(content(&ops[0]), "x\n\ny\n");
        assert_eq!((ops[0].line, ops[0].attr("file")), (2, Some("a")));
    }

    #[test]
    fn crlf_and_cr_content_is_normalised_and_lines_count_originals() {
        let (ops, _) = run("a\r\n<---RUN--->\r\nx\r\ny\rz\r\n<---END--->");
        assert_eq!(content(&ops[0]), "x\ny\nz");
        assert_eq!(ops[0].line, 2);
        assert!(matches!(
            &ops[0].body,
            Body::Run {
                content: Cow::Owned(_)
            }
        ));
        let (ops, _) = run("<---RUN--->\nx\n<---END--->");
        assert!(matches!(
            &ops[0].body,
            Body::Run {
                content: Cow::Borrowed(_)
            }
        ));
    }

    #[test]
    fn search_sections_and_range() {
        let (ops, d) =
            run("<---SEARCH file=\"f\"--->\na\n<---TO--->\nb\n<---REPLACE--->\nc\n<---END--->");
        assert!(d.is_empty());
        assert_eq!(
            ops[0].body,
            Body::Search {
                pattern: "a".into(),
                to: Some("b".into()),
                replacement: "c".into()
            }
        );
    }

    #[test]
    fn markers_are_context_sensitive() {
        let (ops, d) =
            run("<---WRITE file=\"a\"--->\n<---REPLACE--->\n<---SEARCH x--->\n<---END--->");
        assert_eq!(content(&ops[0]), "<---REPLACE--->\n<---SEARCH x--->");
        assert_eq!(d, [(K::MarkerInContent, 3, 1)]);
        // END inside TO text is content, with a warning; the hint explains it.
        let (_, d) = run("<---SEARCH file=\"f\"--->\na\n<---TO--->\nb\n<---END--->");
        assert_eq!(d, [(K::MarkerInContent, 5, 1), (K::Unterminated, 1, 1)]);
    }

    #[test]
    fn every_fatal_error_is_reported_in_one_pass() {
        let src = "<---WRTIE file=\"a\"--->\nx\n<---END--->\n<---END--->\n<---RUN--->\nls\n<---END---> x\n<---SEARCH file=\"f\"--->\nq\n<---END--->\n<---TASKS--->\n<---TASKS--->\n<---END--->\n<---WRITE file=\"b\"--->\n";
        let (_, d) = run(src);
        assert_eq!(
            d,
            [
                (K::UnknownOperation, 1, 5),
                (K::MisplacedMarker, 4, 5),
                (K::ContentOnMarkerLine, 7, 13),
                (K::SearchWithoutReplace, 10, 5),
                (K::NestedTasks, 12, 5),
                (K::Unterminated, 14, 1),
                (K::Unterminated, 11, 1),
            ]
        );
    }

    #[test]
    fn task_numbers_count_blocks_and_their_operations() {
        let (ops, _) = run(
            "<---RUN--->\nls\n<---END--->\n<---TASKS--->\n<---RUN--->\nls\n<---END--->\ntext\n<---RUN--->\nls\n<---END--->\n<---END--->\n<---RUN--->\nls\n<---END--->",
        );
        let ids: Vec<String> = ops.iter().map(|o| o.task.to_string()).collect();
        assert_eq!(ids, ["1", "2", "3"]);
        let inner: Vec<String> = ops[1]
            .children()
            .iter()
            .map(|o| o.task.to_string())
            .collect();
        assert_eq!(inner, ["2.1", "2.2"]);
    }

    #[test]
    fn indented_markers_warn() {
        let (ops, d) =
            run("  <---WRITE file=\"a\"--->\n<---RUN--->\nls\n\t<---END--->\n<---END--->");
        assert_eq!(d, [(K::IndentedMarker, 1, 1), (K::IndentedMarker, 4, 1)]);
        assert_eq!(content(&ops[0]), "ls\n\t<---END--->");
    }

    #[test]
    fn suggestions_cover_typos_and_case() {
        let s = |n| suggest(n, &ALL_NAMES);
        assert_eq!(s("WRTIE"), Some("WRITE"));
        assert_eq!(s("write"), Some("WRITE"));
        assert_eq!(s("SERACH"), Some("SEARCH"));
        assert_eq!(s("TASK"), Some("TASKS"));
        assert_eq!(s("RUNN"), Some("RUN"));
        assert_eq!(s("end"), Some("END"));
        assert_eq!(s("REPLCE"), Some("REPLACE"));
        assert_eq!(s("NOTE"), None);
        assert_eq!(s("INVALID"), None);
    }

    #[test]
    fn a_marker_name_with_blanks_around_it_is_found() {
        let d = Delimiters::default();
        assert_eq!(spaced_name("<--- END --->", &d), Some(("END", 5)));
        assert_eq!(
            spaced_name("<---\tREPLACE --->  ", &d),
            Some(("REPLACE", 5))
        );
        assert_eq!(spaced_name("<---END  --->", &d), Some(("END", 4)));
        assert_eq!(spaced_name("<---END--->", &d), None);
        assert_eq!(spaced_name("<--- two words --->", &d), None);
        assert_eq!(spaced_name("<--- END", &d), None);
    }

    #[test]
    fn misspelt_end_in_content_is_named_by_the_unterminated_hint() {
        let mut diags = Diagnostics::new();
        parse(
            "<---WRITE file=\"a\"--->\nx\n<---end--->\nprose\n",
            &Delimiters::default(),
            &mut diags,
        );
        let kinds: Vec<_> = diags.iter().map(|d| (d.kind, d.line)).collect();
        assert_eq!(kinds, [(K::MarkerInContent, 3), (K::Unterminated, 1)]);
        assert!(
            diags[1]
                .hint
                .as_deref()
                .unwrap()
                .starts_with("line 3 looks like a misspelt END")
        );
    }

    #[test]
    fn marker_line_errors_belong_to_the_task_they_open() {
        let mut diags = Diagnostics::new();
        parse(
            "<---RUN--->\nls\n<---END--->\n<---WRITE file=x--->\n<---END--->",
            &Delimiters::default(),
            &mut diags,
        );
        assert_eq!(diags[0].kind, K::UnquotedValue);
        assert_eq!(diags[0].task.map(|t| t.to_string()).as_deref(), Some("2"));
    }
}
