//! The patch front end: Codex's `apply_patch` envelopes as drafts of the
//! common plan (syntaxes.md §4; decisions in doc/syntax-patch.md).
//!
//! Owns the reading of the format:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md
//! +every line of the new file, after a +
//! *** Delete File: old.txt
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -    print("hi")
//! +    print("hello")
//! *** End Patch
//! ```
//!
//! The lines of a section are read as Codex's parser reads them (its rules
//! are quoted where they matter below), so a patch Codex accepts gives the
//! same hunks here; the hunks are located by `apply/edit.rs`
//! ([`Locate::Sequential`]). Unlike Codex, which refuses the whole patch at
//! its first problem, each file section is one task: a broken section is
//! skipped with a diagnostic and the others apply. Envelopes are found in
//! prose (fenced or not, a heredoc around them, several in one reply); the
//! markers may be padded with whitespace, as Codex allows.

use crate::csl::{Diagnostic, DiagnosticKind, OpKind, Span, TaskId};
use crate::plan::{Action, Draft, Hunk, Locate};

use super::lines::{Line, line_at};
use super::{Dropped, Parsed, Syntax, Why};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const END_OF_FILE: &str = "*** End of File";

/// The marker lines of the format, surrounding whitespace ignored (Codex
/// trims its marker lines; the file headers are also read without regard
/// to ASCII case or the space after the colon, which Codex refuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker<'t> {
    Begin,
    End,
    Add(&'t str),
    Delete(&'t str),
    Update(&'t str),
    Move(&'t str),
    EndOfFile,
    /// `*** Name …: …` that is none of the above: a header the model
    /// meant but misspelt.
    Unknown,
}

impl<'t> Marker<'t> {
    fn of(line: &'t str) -> Option<Marker<'t>> {
        let t = line.trim();
        let rest = t.strip_prefix("***")?;
        Some(match t {
            BEGIN => Marker::Begin,
            END => Marker::End,
            END_OF_FILE => Marker::EndOfFile,
            _ => {
                let rest = rest.strip_prefix(' ')?.trim_start();
                let header = |name: &str| {
                    let head = rest.get(..name.len())?;
                    head.eq_ignore_ascii_case(name)
                        .then(|| rest[name.len()..].trim())
                };
                if let Some(path) = header("Add File:") {
                    Marker::Add(path)
                } else if let Some(path) = header("Delete File:") {
                    Marker::Delete(path)
                } else if let Some(path) = header("Update File:") {
                    Marker::Update(path)
                } else if let Some(path) = header("Move to:") {
                    Marker::Move(path)
                } else if rest.contains(':') {
                    Marker::Unknown
                } else {
                    // `*** bold ***`, a rule: prose, not a header.
                    return None;
                }
            }
        })
    }
}

/// Lines are `super::lines::Line` (LF or CRLF ended: Codex's
/// `str::lines`); where one points for a diagnostic.
trait Place {
    fn pos(&self) -> Pos;
}

impl Place for Line<'_> {
    fn pos(&self) -> Pos {
        Pos {
            number: self.no,
            start: self.start,
            end: self.start + self.text.len(),
        }
    }
}

/// Where a diagnostic points: a whole line.
#[derive(Debug, Clone, Copy)]
struct Pos {
    number: u32,
    start: usize,
    end: usize,
}

/// What kind of file section is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Delete,
    Update,
    /// A misspelt header: the section is refused.
    Bad,
}

impl Kind {
    fn op(self) -> OpKind {
        match self {
            Kind::Add => OpKind::Write,
            Kind::Delete => OpKind::Delete,
            Kind::Update | Kind::Bad => OpKind::Edit,
        }
    }
}

/// A hunk being read: Codex's `UpdateFileChunk`, and how many of its
/// lines were read (a hunk of none is an error, as in Codex).
#[derive(Debug)]
struct Chunk {
    hunk: Hunk,
    lines: u32,
    at: Pos,
}

/// The file section being read.
#[derive(Debug)]
struct Section {
    task: TaskId,
    header: Pos,
    kind: Kind,
    path: String,
    move_to: Option<String>,
    /// An added file's `+` lines: from the start of the first to the
    /// start of the line after the last (the text is made once, at the
    /// end, in one allocation of about that size).
    added: Option<(usize, usize)>,
    hunks: Vec<Hunk>,
    chunk: Option<Chunk>,
}

/// What the reader is in.
#[derive(Debug, Clone, Copy)]
enum State {
    /// Prose, outside any patch.
    Outside,
    /// In a patch, between file sections.
    Between,
    /// In an Add File section; a blank line waits to be judged by the
    /// line after it.
    Add {
        blank: Option<Pos>,
    },
    Delete,
    Update,
    /// The rest of a refused section (or lines outside any section), up
    /// to the next marker.
    Skip,
}

struct Reader<'t> {
    text: &'t str,
    diagnostics: crate::csl::Diagnostics,
    drafts: Vec<Draft<'t>>,
    dropped: Vec<Dropped>,
    state: State,
    section: Option<Section>,
    /// The `*** Begin Patch` of the patch being read, and how many file
    /// sections it has so far.
    envelope: Option<(Pos, usize)>,
    /// The last look for a later `*** End Patch`: from where, and the line
    /// start and kind (true: an End Patch) of what it found.
    end_cache: Option<(usize, Option<(usize, bool)>)>,
}

/// Reads a patch reply.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut reader = Reader {
        text,
        diagnostics: crate::csl::Diagnostics::new(),
        drafts: Vec::new(),
        dropped: Vec::new(),
        state: State::Outside,
        section: None,
        envelope: None,
        end_cache: None,
    };
    let (mut pos, mut number) = (0, 1);
    while let Some(line) = line_at(text, pos, number) {
        reader.state = reader.step(reader.state, &line);
        pos = line.next;
        number += 1;
    }
    reader.finish_reply();
    Parsed {
        dropped: reader.dropped,
        ..Parsed::read(Syntax::Patch, text, reader.drafts, reader.diagnostics)
    }
}

impl<'t> Reader<'t> {
    fn step(&mut self, state: State, line: &Line<'t>) -> State {
        match state {
            State::Outside => self.outside(line),
            State::Between => self.between(line),
            State::Add { blank } => self.add_line(line, blank),
            State::Delete => self.delete_line(line),
            State::Update => self.update_line(line),
            State::Skip => match Marker::of(line.text) {
                Some(Marker::Move(_) | Marker::EndOfFile) | None => State::Skip,
                Some(marker) => self.marker(line, marker),
            },
        }
    }

    fn outside(&mut self, line: &Line<'t>) -> State {
        let marker = Marker::of(line.text);
        let column_1 = line.text.starts_with("***");
        match marker {
            Some(Marker::Begin) => {
                self.envelope = Some((line.pos(), 0));
                State::Between
            }
            Some(Marker::End) if column_1 => {
                self.warn(
                    line.pos(),
                    DiagnosticKind::StrayMarker,
                    "*** End Patch with no *** Begin Patch before it is ignored".to_string(),
                    "start every patch with *** Begin Patch on a line of its own",
                );
                State::Outside
            }
            Some(Marker::Add(_) | Marker::Delete(_) | Marker::Update(_)) if column_1 => {
                self.warn(
                    line.pos(),
                    DiagnosticKind::StrayMarker,
                    "a file section outside *** Begin Patch … *** End Patch is not applied"
                        .to_string(),
                    "put every file section between a *** Begin Patch line and an *** End Patch line",
                );
                self.dropped.push(Dropped {
                    line: line.no,
                    kind: OpKind::Edit,
                    why: Why::SectionOutsidePatch,
                });
                State::Outside
            }
            _ => State::Outside,
        }
    }

    fn between(&mut self, line: &Line<'t>) -> State {
        if let Some(marker) = Marker::of(line.text) {
            return self.marker(line, marker);
        }
        if line.text.trim().is_empty() {
            // Codex refuses a blank line between sections; it changes
            // nothing, so it is read as nothing.
            return State::Between;
        }
        self.warn(
            line.pos(),
            DiagnosticKind::StrayMarker,
            "lines that belong to no file section are not applied".to_string(),
            "start each file's lines with *** Add File: PATH, *** Delete File: PATH or *** Update File: PATH",
        );
        self.dropped.push(Dropped {
            line: line.no,
            kind: OpKind::Edit,
            why: Why::OutsideSections,
        });
        State::Skip
    }

    /// A marker where no section is open (the one before has ended).
    fn marker(&mut self, line: &Line<'t>, marker: Marker<'t>) -> State {
        match marker {
            Marker::Begin => {
                if let Some((begin, _)) = self.envelope {
                    self.warn(
                        line.pos(),
                        DiagnosticKind::StrayMarker,
                        format!(
                            "the patch of line {} has no *** End Patch before this *** Begin Patch",
                            begin.number
                        ),
                        "end every patch with *** End Patch on a line of its own",
                    );
                }
                self.envelope = Some((line.pos(), 0));
                State::Between
            }
            Marker::End => {
                if let Some((begin, 0)) = self.envelope {
                    self.warn(
                        begin,
                        DiagnosticKind::StrayMarker,
                        "an empty patch: no file section between *** Begin Patch and *** End Patch"
                            .to_string(),
                        "write a *** Add File, *** Delete File or *** Update File section inside the patch",
                    );
                }
                self.envelope = None;
                State::Outside
            }
            Marker::Add(path) => self.open(line, Kind::Add, path, State::Add { blank: None }),
            Marker::Delete(path) => self.open(line, Kind::Delete, path, State::Delete),
            Marker::Update(path) => self.open(line, Kind::Update, path, State::Update),
            Marker::Move(_) | Marker::EndOfFile | Marker::Unknown => {
                let (message, hint) = match marker {
                    Marker::Move(_) => (
                        "*** Move to: without an *** Update File: line just before it".to_string(),
                        "to rename a file write *** Update File: OLD, then *** Move to: NEW, then its hunks",
                    ),
                    Marker::EndOfFile => (
                        "*** End of File outside a hunk".to_string(),
                        "*** End of File goes right after the last line of a hunk that ends the file",
                    ),
                    _ => (
                        format!("`{}` is not a file section header", line.text.trim()),
                        "the headers are *** Add File: PATH, *** Delete File: PATH and *** Update File: PATH",
                    ),
                };
                self.open(line, Kind::Bad, "", State::Skip);
                self.refuse(line.pos(), DiagnosticKind::MalformedBlock, message, hint)
            }
        }
    }

    /// Opens a file section at its header; `then` is the state to read
    /// its lines in.
    fn open(&mut self, line: &Line<'t>, kind: Kind, path: &str, then: State) -> State {
        if let Some((_, sections)) = &mut self.envelope {
            *sections += 1;
        }
        self.section = Some(Section {
            task: TaskId {
                top: self.drafts.len() as u32 + 1,
                sub: None,
            },
            header: line.pos(),
            kind,
            path: path.to_string(),
            move_to: None,
            added: None,
            hunks: Vec::new(),
            chunk: None,
        });
        if kind == Kind::Bad {
            return then;
        }
        if let Some(why) = path_problem(path) {
            return self.refuse(
                line.pos(),
                DiagnosticKind::MalformedBlock,
                why,
                "write the path alone after the colon, as it is, e.g. *** Update File: src/main.py",
            );
        }
        then
    }

    fn add_line(&mut self, line: &Line<'t>, blank: Option<Pos>) -> State {
        // Codex: every line that starts with `+` is the file's, up to the
        // first that does not.
        if line.text.starts_with('+') {
            if let Some(at) = blank {
                return self.refuse(
                    at,
                    DiagnosticKind::MalformedBlock,
                    "a line without + inside an added file".to_string(),
                    "start every line of an added file with +, an empty line too (a + alone)",
                );
            }
            if let Some(section) = &mut self.section {
                let start = section.added.map_or(line.start, |(start, _)| start);
                section.added = Some((start, line.next));
            }
            return State::Add { blank: None };
        }
        if line.text.trim().is_empty() {
            return State::Add {
                blank: blank.or(Some(line.pos())),
            };
        }
        if let Some(marker) = Marker::of(line.text) {
            return self.section_ends(line, marker);
        }
        self.refuse(
            line.pos(),
            DiagnosticKind::MalformedBlock,
            "a line without + inside an added file".to_string(),
            "start every line of an added file with +; the section ends at the next *** line",
        )
    }

    fn delete_line(&mut self, line: &Line<'t>) -> State {
        if line.text.trim().is_empty() {
            return State::Delete;
        }
        if let Some(marker) = Marker::of(line.text) {
            return self.section_ends(line, marker);
        }
        self.refuse(
            line.pos(),
            DiagnosticKind::MalformedBlock,
            "lines after *** Delete File: a deletion has none, so the file was not deleted"
                .to_string(),
            "write *** Delete File: PATH alone; the next line is another section's header or *** End Patch",
        )
    }

    fn update_line(&mut self, line: &Line<'t>) -> State {
        let text = line.text;
        let in_chunk = self
            .section
            .as_ref()
            .and_then(|s| s.chunk.as_ref())
            .map(|c| c.lines);
        if let Some(read) = in_chunk {
            // Codex's hunk lines: exactly `*** End of File`, an empty line
            // (context), or a line starting with space, `-` or `+`.
            if text == END_OF_FILE {
                if read == 0 {
                    return self.refuse(
                        line.pos(),
                        DiagnosticKind::MalformedBlock,
                        "*** End of File right after @@: the hunk has no lines".to_string(),
                        "write the hunk's lines (space: kept, -: removed, +: added) before *** End of File",
                    );
                }
                self.close_chunk(true);
                return State::Update;
            }
            let first = text.as_bytes().first().copied();
            if first == Some(b' ') && text.trim() == END && !self.later_end(line.next) {
                // A padded `*** End Patch` that no other follows: Codex
                // takes the patch's last line as its end.
                return self.section_ends(line, Marker::End);
            }
            if let Some(chunk) = self.section.as_mut().and_then(|s| s.chunk.as_mut()) {
                let hunk = &mut chunk.hunk;
                match first {
                    None => hunk.push(' ', ""),
                    Some(b' ') => hunk.push(' ', &text[1..]),
                    Some(b'-') => hunk.push('-', &text[1..]),
                    Some(b'+') => hunk.push('+', &text[1..]),
                    _ if read == 0 => {
                        let message = if Marker::of(text).is_some() {
                            "@@ with no hunk lines after it".to_string()
                        } else {
                            format!(
                                "`{text}` in a hunk: every line of a hunk starts with a space, - or +"
                            )
                        };
                        let state = self.refuse(
                            line.pos(),
                            DiagnosticKind::MalformedBlock,
                            message,
                            "start kept lines with a space, removed lines with - and added lines with +",
                        );
                        // A header or End Patch right after @@ still counts.
                        return self.step(state, line);
                    }
                    _ => {
                        // Codex: the start of the next hunk.
                        self.close_chunk(false);
                        return self.update_line(line);
                    }
                }
                chunk.lines += 1;
            }
            return State::Update;
        }
        // Between hunks.
        let (no_hunks, moved) = self.section.as_ref().map_or((false, false), |s| {
            (s.hunks.is_empty(), s.move_to.is_some())
        });
        if text.trim().is_empty() {
            return State::Update;
        }
        match Marker::of(text) {
            Some(Marker::Move(path)) if no_hunks && !moved => {
                if let Some(why) = path_problem(path) {
                    return self.refuse(
                        line.pos(),
                        DiagnosticKind::MalformedBlock,
                        why,
                        "write the new path alone after the colon, e.g. *** Move to: src/main.py",
                    );
                }
                if let Some(section) = &mut self.section {
                    section.move_to = Some(path.to_string());
                }
                return State::Update;
            }
            Some(Marker::Move(_)) => {
                return self.refuse(
                    line.pos(),
                    DiagnosticKind::MalformedBlock,
                    "*** Move to: after the hunks (or a second one)".to_string(),
                    "write *** Move to: NEW once, on the line right after *** Update File: OLD",
                );
            }
            Some(Marker::EndOfFile) => {
                return self.refuse(
                    line.pos(),
                    DiagnosticKind::MalformedBlock,
                    "*** End of File outside a hunk".to_string(),
                    "*** End of File goes right after the last line of a hunk that ends the file",
                );
            }
            Some(marker) => return self.section_ends(line, marker),
            None => {}
        }
        let anchor = if text == "@@" {
            None
        } else if let Some(anchor) = text.strip_prefix("@@ ") {
            Some(anchor.to_string())
        } else if no_hunks {
            // Codex: the first hunk may start without its @@ line.
            self.open_chunk(line.pos(), None);
            return self.update_line(line);
        } else {
            return self.refuse(
                line.pos(),
                DiagnosticKind::MalformedBlock,
                format!("`{text}` between hunks: each hunk after the first starts with @@"),
                "start each hunk with @@ (or @@ and a line of the file that comes before it, such as a function's first line)",
            );
        };
        self.open_chunk(line.pos(), anchor);
        State::Update
    }

    fn open_chunk(&mut self, at: Pos, anchor: Option<String>) {
        if let Some(section) = &mut self.section {
            section.chunk = Some(Chunk {
                hunk: Hunk {
                    anchor,
                    ..Hunk::new()
                },
                lines: 0,
                at,
            });
        }
    }

    fn close_chunk(&mut self, at_end: bool) {
        if let Some(section) = &mut self.section
            && let Some(mut chunk) = section.chunk.take()
        {
            chunk.hunk.at_end = at_end;
            section.hunks.push(sealed(chunk.hunk));
        }
    }

    /// Whether a line reading `*** End Patch` comes at or after byte
    /// `from` before the next `*** Begin Patch` at column 1. Remembered, so
    /// that many padded End Patch lines are looked past once.
    fn later_end(&mut self, from: usize) -> bool {
        if let Some((since, found)) = self.end_cache
            && since <= from
            && found.is_none_or(|(at, _)| at >= from)
        {
            return found.is_some_and(|(_, end)| end);
        }
        let mut found = None;
        let mut at = from;
        while let Some(line) = line_at(self.text, at, 0) {
            let t = line.text.trim();
            if t == END {
                found = Some((line.start, true));
                break;
            }
            if line.text.starts_with(BEGIN) && t == BEGIN {
                found = Some((line.start, false));
                break;
            }
            at = line.next;
        }
        self.end_cache = Some((from, found));
        found.is_some_and(|(_, end)| end)
    }

    /// The open section ends at `line`, a marker: it is finished, then the
    /// marker read. A `*** Begin Patch` means the patch never ended: the
    /// section may be cut short, so it is refused.
    fn section_ends(&mut self, line: &Line<'t>, marker: Marker<'t>) -> State {
        if marker == Marker::Begin {
            self.unterminated(Some(line));
            // Said once, by the refused section.
            self.envelope = None;
        } else {
            self.finish_section();
        }
        self.marker(line, marker)
    }

    /// Turns the open section, complete, into its draft.
    fn finish_section(&mut self) {
        let Some(mut section) = self.section.take() else {
            return;
        };
        if let Some(chunk) = section.chunk.take() {
            if chunk.lines == 0 {
                self.section = Some(section);
                self.refuse(
                    chunk.at,
                    DiagnosticKind::MalformedBlock,
                    "@@ with no hunk lines after it".to_string(),
                    "write the hunk's lines after @@: a space before kept lines, - before removed, + before added",
                );
                return;
            }
            section.hunks.push(sealed(chunk.hunk));
        }
        let Section {
            task,
            header,
            kind,
            path,
            move_to,
            added,
            hunks,
            ..
        } = section;
        let line = header.number;
        let draft = match kind {
            Kind::Add => Draft::new(
                task,
                line,
                OpKind::Write,
                Action::Write {
                    path,
                    content: added_text(self.text, added).into(),
                    append: false,
                },
            ),
            Kind::Delete => Draft::new(
                task,
                line,
                OpKind::Delete,
                Action::Delete {
                    path,
                    recursive: false,
                },
            ),
            Kind::Update => {
                let to = move_to.filter(|to| *to != path);
                if hunks.is_empty() {
                    let Some(to) = to else {
                        self.section = Some(Section {
                            task,
                            header,
                            kind,
                            path,
                            move_to: None,
                            added: None,
                            hunks,
                            chunk: None,
                        });
                        self.refuse(
                            header,
                            DiagnosticKind::MalformedBlock,
                            "*** Update File: with no hunks: nothing to change".to_string(),
                            "after *** Update File: PATH write @@ and the hunk's lines (a space before kept lines, - before removed, + before added)",
                        );
                        return;
                    };
                    // A rename alone (Codex asks for a hunk as well).
                    Draft::new(
                        task,
                        line,
                        OpKind::Move,
                        Action::Move {
                            from: path,
                            to,
                            overwrite: true,
                        },
                    )
                } else {
                    let edit = Action::Edit {
                        path: path.clone(),
                        hunks,
                        locate: Locate::Sequential,
                        // Codex: an updated file always ends with a newline.
                        final_newline: Some(true),
                    };
                    match to {
                        None => Draft::new(task, line, OpKind::Edit, edit),
                        Some(to) => {
                            let sub = |n| TaskId {
                                top: task.top,
                                sub: Some(n),
                            };
                            let steps = vec![
                                Draft::new(sub(1), line, OpKind::Edit, edit),
                                Draft::new(
                                    sub(2),
                                    line,
                                    OpKind::Move,
                                    Action::Move {
                                        from: path,
                                        to,
                                        // Codex writes over the destination.
                                        overwrite: true,
                                    },
                                ),
                            ];
                            Draft::new(task, line, OpKind::Tasks, Action::Block(steps))
                        }
                    }
                }
            }
            Kind::Bad => {
                let mut draft =
                    Draft::invalid(task, line, OpKind::Edit, "not a file section".to_string());
                draft.target = None;
                draft
            }
        };
        self.drafts.push(draft);
    }

    /// The patch never ended where the open section is (at `at`, a new
    /// `*** Begin Patch`, or at the end of the reply): the section may be
    /// cut short, so it is refused; sections before it apply.
    fn unterminated(&mut self, at: Option<&Line<'t>>) {
        let Some(section) = &self.section else {
            return;
        };
        let header = section.header;
        let place = match at {
            Some(line) => format!("before the *** Begin Patch of line {}", line.no),
            None => "before the reply ends".to_string(),
        };
        self.refuse(
            header,
            DiagnosticKind::UnterminatedBlock,
            format!(
                "the patch has no *** End Patch {place}: this last section may be cut short, so it was not applied"
            ),
            "end every patch with *** End Patch on a line of its own; send this section again",
        );
    }

    fn finish_reply(&mut self) {
        match self.state {
            State::Outside => {}
            _ if self.section.is_some() => self.unterminated(None),
            _ => {
                if let Some((begin, _)) = self.envelope {
                    self.warn(
                        begin,
                        DiagnosticKind::StrayMarker,
                        "the patch has no *** End Patch".to_string(),
                        "end every patch with *** End Patch on a line of its own",
                    );
                }
            }
        }
    }

    /// A problem that refuses the open section: the diagnostic, the
    /// section's draft (skipped, with the reason), and its remaining lines
    /// skipped up to the next marker.
    fn refuse(&mut self, at: Pos, kind: DiagnosticKind, message: String, hint: &str) -> State {
        let section = self.section.take();
        let mut d = diagnostic(at, kind, message.clone(), hint);
        if let Some(section) = &section {
            d.task = Some(section.task);
            d.operation = Some(section.kind.op());
            let why = self.diagnostics.reason(at.number, kind, || message);
            let mut draft =
                Draft::invalid(section.task, section.header.number, section.kind.op(), why);
            draft.invalid[0].0 = at.number;
            draft.target = (!section.path.is_empty()).then(|| section.path.clone());
            self.drafts.push(draft);
        }
        self.diagnostics.push(d);
        State::Skip
    }

    fn warn(&mut self, at: Pos, kind: DiagnosticKind, message: String, hint: &str) {
        let d = diagnostic(at, kind, message, hint);
        self.diagnostics.push(d);
    }
}

fn diagnostic(at: Pos, kind: DiagnosticKind, message: String, hint: &str) -> Diagnostic {
    Diagnostic {
        kind,
        line: at.number,
        column: 1,
        line_start: at.start,
        span: Span::new(at.start, at.end),
        message,
        hint: Some(hint.to_string()),
        operation: None,
        task: None,
    }
}

/// A read hunk without the spare room its lists grew (a large reply has
/// hundreds of thousands of hunk lines, and all of them are kept).
fn sealed(mut hunk: Hunk) -> Hunk {
    hunk.lines.shrink_to_fit();
    hunk
}

/// An added file's text from its `+` lines (`span` of `text`): each line
/// after its `+`, each followed by `\n` (Codex's rule: the file ends with
/// a newline).
fn added_text(text: &str, span: Option<(usize, usize)>) -> String {
    let Some(lines) = span.and_then(|(start, end)| text.get(start..end)) else {
        return String::new();
    };
    let mut content = String::with_capacity(lines.len());
    for line in lines.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        content.push_str(line.strip_prefix('+').unwrap_or(line));
        content.push('\n');
    }
    content
}

/// Why a header's path cannot be used, if it cannot: none, or decorated
/// (Codex would create a file named `` `a.py` ``).
fn path_problem(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("the header names no file".to_string());
    }
    let decorated = ['`', '"', '\'', '*', '<', '['];
    (path.starts_with(decorated) || path.ends_with(decorated))
        .then(|| format!("the path {path} is decorated (quotes, backticks or markdown)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::Delimiters;
    use crate::syntax::{Choice, detect};

    fn actions(text: &str) -> Vec<Option<Action<'_>>> {
        parse(text).drafts.into_iter().map(|d| d.action).collect()
    }

    fn codes(text: &str) -> Vec<(u32, &'static str)> {
        parse(text)
            .diagnostics
            .iter()
            .map(|d| (d.line, d.kind.code()))
            .collect()
    }

    fn hunk(anchor: Option<&str>, old: &[&str], new: &[&str], at_end: bool) -> Hunk {
        Hunk {
            anchor: anchor.map(str::to_string),
            at_end,
            ..Hunk::of_lines(old, new)
        }
    }

    fn edit(path: &str, hunks: Vec<Hunk>) -> Action<'_> {
        Action::Edit {
            path: path.into(),
            hunks,
            locate: Locate::Sequential,
            final_newline: Some(true),
        }
    }

    #[test]
    fn every_kind_of_section_as_codex_parses_it() {
        // Codex's own parser test, with a blank context line and the end
        // of file marker added.
        let text = "*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: path/delete.py\n*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n+    return 123\n\n*** Update File: b.py\n import foo\n+bar\n@@\n x\n-y\n*** End of File\n*** End Patch\n";
        let parsed = parse(text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let got: Vec<Option<Action>> = parsed.drafts.iter().map(|d| d.action.clone()).collect();
        let moved = |n| TaskId {
            top: 3,
            sub: Some(n),
        };
        assert_eq!(
            got,
            [
                Some(Action::Write {
                    path: "path/add.py".into(),
                    content: "abc\ndef\n".into(),
                    append: false,
                }),
                Some(Action::Delete {
                    path: "path/delete.py".into(),
                    recursive: false,
                }),
                Some(Action::Block(vec![
                    Draft::new(
                        moved(1),
                        6,
                        OpKind::Edit,
                        edit(
                            "path/update.py",
                            vec![hunk(
                                Some("def f():"),
                                &["    pass", ""],
                                &["    return 123", ""],
                                false
                            )]
                        )
                    ),
                    Draft::new(
                        moved(2),
                        6,
                        OpKind::Move,
                        Action::Move {
                            from: "path/update.py".into(),
                            to: "path/update2.py".into(),
                            overwrite: true,
                        }
                    ),
                ])),
                Some(edit(
                    "b.py",
                    vec![
                        hunk(None, &["import foo"], &["import foo", "bar"], false),
                        hunk(None, &["x", "y"], &["x"], true),
                    ]
                )),
            ]
        );
    }

    #[test]
    fn patches_are_found_in_prose_fences_and_heredocs_with_padded_markers() {
        let text = "I'll fix both.\n\n```\napply_patch <<'EOF'\n *** Begin Patch \r\n  *** Update File: a.txt\r\n@@\r\n-one\r\n+two\r\n *** End Patch\r\nEOF\n```\n\nThen:\n\n*** Begin Patch\n*** Add File: b.txt\n+new\n*** End Patch\nDone.\n";
        assert_eq!(
            actions(text),
            [
                Some(edit("a.txt", vec![hunk(None, &["one"], &["two"], false)])),
                Some(Action::Write {
                    path: "b.txt".into(),
                    content: "new\n".into(),
                    append: false,
                }),
            ]
        );
        assert_eq!(codes(text), []);
        let delims = Delimiters::default();
        assert_eq!(
            crate::syntax::parse(text.as_bytes(), Choice::Auto, &delims).syntax,
            Syntax::Patch
        );
    }

    #[test]
    fn a_padded_end_patch_is_context_when_another_end_follows() {
        // Editing a document about the format: its lines are the markers.
        let text = "*** Begin Patch\n*** Update File: doc.md\n@@\n *** End Patch\n-old\n+new\n *** End Patch\n";
        assert_eq!(
            actions(text),
            [Some(edit(
                "doc.md",
                vec![hunk(
                    None,
                    &["*** End Patch", "old"],
                    &["*** End Patch", "new"],
                    false
                )]
            ))]
        );
        assert_eq!(codes(text), []);
    }

    #[test]
    fn a_broken_section_is_skipped_and_the_others_apply() {
        let text = "*** Begin Patch\n*** Add File: a\n+x\n\n+y\n*** Update File: b\n@@\n-1\n+2\nnot a hunk line\n-3\n*** Frobnicate File: c\n+z\n*** Delete File: d\n*** Update File: e\n*** Update File: f\n@@ g\n*** Add File: h\n+ok\n*** End Patch\n";
        let parsed = parse(text);
        let tasks: Vec<(u32, bool)> = parsed
            .drafts
            .iter()
            .map(|d| (d.task.top, d.action.is_some()))
            .collect();
        assert_eq!(
            tasks,
            [
                (1, false),
                (2, false),
                (3, false),
                (4, true),
                (5, false),
                (6, false),
                (7, true)
            ]
        );
        assert_eq!(
            codes(text),
            [
                (4, "malformed_block"),
                (10, "malformed_block"),
                (12, "malformed_block"),
                (15, "malformed_block"),
                (18, "malformed_block")
            ]
        );
        assert!(parsed.diagnostics.iter().all(|d| d.task.is_some()));
    }

    #[test]
    fn without_end_patch_the_last_section_is_refused_and_the_rest_applies() {
        let text = "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n@@\n-1\n+2\n";
        let parsed = parse(text);
        let tasks: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(tasks, [true, false]);
        assert_eq!(codes(text), [(4, "unterminated_block")]);
        // A new patch interrupts the same way.
        let text = "*** Begin Patch\n*** Add File: a\n+x\n*** Begin Patch\n*** Add File: b\n+y\n*** End Patch\n";
        let tasks: Vec<bool> = parse(text)
            .drafts
            .iter()
            .map(|d| d.action.is_some())
            .collect();
        assert_eq!(tasks, [false, true]);
        assert_eq!(codes(text), [(2, "unterminated_block")]);
    }

    #[test]
    fn a_rename_alone_moves_and_an_update_without_hunks_is_refused() {
        assert_eq!(
            actions("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n"),
            [Some(Action::Move {
                from: "a".into(),
                to: "b".into(),
                overwrite: true,
            })]
        );
        let text = "*** Begin Patch\n*** Update File: a\n*** End Patch\n";
        assert_eq!(actions(text), [None]);
        assert_eq!(codes(text), [(2, "malformed_block")]);
        let empty = "*** Begin Patch\n*** End Patch\n";
        assert!(parse(empty).drafts.is_empty());
        assert_eq!(codes(empty), [(1, "stray_marker")]);
    }

    #[test]
    fn prose_is_never_a_patch() {
        let delims = Delimiters::default();
        for prose in [
            "Codex wraps edits in `*** Begin Patch` and `*** End Patch` lines.\n",
            "***\n\n*** Important ***\n\n- *** Update File: is the header\n",
            "**Begin Patch**\n",
        ] {
            assert!(
                detect::blocks(prose, &delims)
                    .iter()
                    .all(|b| b.syntax != Syntax::Patch),
                "{prose}"
            );
            assert!(parse(prose).drafts.is_empty(), "{prose}");
        }
    }

    #[test]
    fn no_input_panics_or_loses_a_section_number() {
        let text = "x\n*** Begin Patch\n*** Add File: `a`\n+x\n\n+é\n*** Update File: b\n*** Move to: c\n@@ d\n x\n-\r\n+\n\n*** End of File\n@@\n*** Move to: q\n *** End Patch\n*** Delete File: e\nz\n*** Oops: f\n*** End Patch\n*** Update File: g\n*** Begin Patch\n*** Update File: h\n@@";
        crate::syntax::every_prefix_parses(text, parse, |parsed, end| {
            for d in &parsed.diagnostics {
                assert!(d.span.end <= end && d.span.start <= d.span.end);
            }
        });
    }
}
