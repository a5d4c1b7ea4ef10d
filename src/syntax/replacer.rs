//! The replacer front end: `<<<FILE>>>` blocks as drafts of the common
//! plan (syntaxes.md §3; decisions in doc/syntax-replacer.md).
//!
//! Owns the reading of the replacer format:
//!
//! ```text
//! <<<EXPLANATION>>>
//! Why the change is made (shown in the report)
//! <<<FILE>>>
//! src/api.js
//! <<<SEARCH>>>
//! const timeout = 3000;
//! <<<REPLACE>>>
//! const { timeout } = require('../config.json');
//! <<<END>>>
//! ```
//!
//! or `<<<OVERWRITE>>>` … `<<<END>>>` after the path. A marker is a line of
//! its own from column 1 (trailing spaces allowed). A section's text is the
//! lines strictly between its markers joined with `\n`, as in CSL. Each
//! `<<<FILE>>>` block is one task. A broken block is skipped with a
//! diagnostic and the others apply: every marker is recognised wherever it
//! stands, so a block that never ends stops at the next block's marker and
//! nothing after it is lost.

use std::borrow::Cow;

use crate::csl::validate::Count;
use crate::csl::{Diagnostic, DiagnosticKind, OpKind, Span, TaskId};
use crate::plan::{Action, Draft};

use super::lines::{Line, Lines};
use super::{Explanation, LineCursor, Parsed, Syntax};

/// The marker lines of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Explanation,
    File,
    Search,
    Replace,
    Overwrite,
    End,
}

impl Marker {
    fn text(self) -> &'static str {
        match self {
            Marker::Explanation => "<<<EXPLANATION>>>",
            Marker::File => "<<<FILE>>>",
            Marker::Search => "<<<SEARCH>>>",
            Marker::Replace => "<<<REPLACE>>>",
            Marker::Overwrite => "<<<OVERWRITE>>>",
            Marker::End => "<<<END>>>",
        }
    }

    /// The marker `line` (without its line end) is, if any.
    fn of(line: &str) -> Option<Marker> {
        if !line.starts_with("<<<") {
            return None;
        }
        Some(match line.trim_end() {
            "<<<EXPLANATION>>>" => Marker::Explanation,
            "<<<FILE>>>" => Marker::File,
            "<<<SEARCH>>>" => Marker::Search,
            "<<<REPLACE>>>" => Marker::Replace,
            "<<<OVERWRITE>>>" => Marker::Overwrite,
            "<<<END>>>" => Marker::End,
            _ => return None,
        })
    }
}

/// Where a section's text runs: from the start of its first line to the
/// end of its last (without that line's end).
#[derive(Debug, Clone, Copy)]
struct Section {
    first: Option<(usize, usize)>,
}

impl Section {
    fn new() -> Section {
        Section { first: None }
    }

    fn add(&mut self, line: &Line<'_>) {
        let end = line.start + line.text.len();
        self.first = Some(match self.first {
            None => (line.start, end),
            Some((start, _)) => (start, end),
        });
    }

    /// The lines joined with `\n` (CRLF read as LF, as CSL reads it):
    /// the reply's own slice when it has no CRLF.
    fn text(self, source: &str) -> Cow<'_, str> {
        let Some((start, end)) = self.first else {
            return Cow::Borrowed("");
        };
        let slice = &source[start..end];
        if slice.contains('\r') {
            Cow::Owned(slice.replace("\r\n", "\n"))
        } else {
            Cow::Borrowed(slice)
        }
    }
}

/// What the block being read is at.
#[derive(Debug)]
enum State {
    /// Between blocks: prose.
    Outside,
    /// In an explanation, since its marker (on that line).
    Explaining(u32, Section),
    /// After `<<<FILE>>>`, before the path.
    AwaitPath,
    /// After the path, before `<<<SEARCH>>>` or `<<<OVERWRITE>>>`.
    AwaitBody,
    Search(Section),
    Replace(Section, Section),
    Overwrite(Section),
}

/// The block being read.
#[derive(Debug)]
struct Block {
    task: TaskId,
    /// The `<<<FILE>>>` line (or the stray body marker's).
    line: u32,
    path: Option<String>,
    /// Reasons it cannot run, with their lines; the diagnostics are
    /// pushed as they are found.
    invalid: Vec<(u32, String)>,
    kind: OpKind,
}

struct Reader<'t> {
    text: &'t str,
    /// The reply's lines, for diagnostics: asked in order, read once.
    lines: LineCursor<'t>,
    diagnostics: crate::csl::Diagnostics,
    drafts: Vec<Draft<'t>>,
    explanations: Vec<Explanation>,
    /// An explanation waiting for the block it explains.
    pending: Option<(u32, String)>,
    block: Option<Block>,
    state: State,
}

/// Reads a replacer reply.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut reader = Reader {
        text,
        lines: LineCursor::new(text),
        diagnostics: crate::csl::Diagnostics::new(),
        drafts: Vec::new(),
        explanations: Vec::new(),
        pending: None,
        block: None,
        state: State::Outside,
    };
    let mut last = 0;
    for line in Lines::new(text) {
        last = line.no;
        reader.line(&line);
    }
    reader.finish(last);
    Parsed {
        explanations: reader.explanations,
        ..Parsed::read(Syntax::Replacer, text, reader.drafts, reader.diagnostics)
    }
}

impl<'t> Reader<'t> {
    fn line(&mut self, line: &Line<'t>) {
        let marker = Marker::of(line.text);
        let state = std::mem::replace(&mut self.state, State::Outside);
        self.state = match (state, marker) {
            (State::Explaining(at, mut text), None) => {
                text.add(line);
                State::Explaining(at, text)
            }
            (State::Search(mut text), None) => {
                text.add(line);
                State::Search(text)
            }
            (State::Replace(pattern, mut text), None) => {
                text.add(line);
                State::Replace(pattern, text)
            }
            (State::Overwrite(mut text), None) => {
                text.add(line);
                State::Overwrite(text)
            }
            (State::Outside, None) => State::Outside,
            (State::AwaitPath, None) => self.path_line(line),
            (State::AwaitBody, None) => {
                if !line.text.trim().is_empty() {
                    self.fault(
                        line,
                        DiagnosticKind::MalformedBlock,
                        "a second line after <<<FILE>>>: the path is one line, and <<<SEARCH>>> or <<<OVERWRITE>>> follows it".to_string(),
                        "write <<<FILE>>>, the path alone on the next line, then <<<SEARCH>>> (to edit) or <<<OVERWRITE>>> (to write the whole file)",
                    );
                }
                State::AwaitBody
            }
            (State::Search(pattern), Some(Marker::Replace)) => {
                State::Replace(pattern, Section::new())
            }
            (State::Replace(pattern, replacement), Some(Marker::End)) => {
                self.finish_search(line, pattern, replacement);
                State::Outside
            }
            (State::Overwrite(content), Some(Marker::End)) => {
                self.finish_write(content);
                State::Outside
            }
            (State::Search(_), Some(Marker::End)) => {
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    "<<<END>>> before <<<REPLACE>>>: a <<<SEARCH>>> needs its replacement".to_string(),
                    "write <<<REPLACE>>> and the new text (empty to delete the text) between the searched text and <<<END>>>",
                );
                self.close_block();
                State::Outside
            }
            (State::Explaining(at, text), Some(marker)) => {
                self.pending = Some((at, collapse(&text.text(self.text))));
                self.marker(line, marker)
            }
            (
                state @ (State::Search(_) | State::Replace(..) | State::Overwrite(_)),
                Some(
                    marker @ (Marker::Explanation
                    | Marker::File
                    | Marker::Search
                    | Marker::Overwrite),
                ),
            ) => {
                self.unterminated(line, &state);
                self.marker(line, marker)
            }
            (State::Replace(..), Some(Marker::Replace)) => {
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    "a second <<<REPLACE>>> in one block".to_string(),
                    "one block is <<<SEARCH>>>, the text, <<<REPLACE>>>, the new text, <<<END>>>; start another <<<FILE>>> block for the next edit",
                );
                // Read on to the block's end, which is skipped.
                State::Replace(Section::new(), Section::new())
            }
            (State::Overwrite(_), Some(Marker::Replace)) => {
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    "<<<REPLACE>>> in an <<<OVERWRITE>>> block".to_string(),
                    "<<<OVERWRITE>>> takes the whole new file up to <<<END>>>; to edit part of a file, write <<<SEARCH>>> … <<<REPLACE>>> … <<<END>>>",
                );
                State::Overwrite(Section::new())
            }
            (State::AwaitPath, Some(marker)) => {
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    format!(
                        "{} where the path of the <<<FILE>>> block belongs",
                        marker.text()
                    ),
                    "write the file's path alone on the line after <<<FILE>>>",
                );
                if matches!(marker, Marker::Search | Marker::Overwrite) {
                    self.body(marker)
                } else {
                    self.close_block();
                    self.marker(line, marker)
                }
            }
            (State::AwaitBody, Some(marker @ (Marker::Search | Marker::Overwrite))) => {
                self.body(marker)
            }
            (State::AwaitBody, Some(marker)) => {
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    format!("{} right after the path: the block has no edit", marker.text()),
                    "after the path write <<<SEARCH>>> (the text to find) or <<<OVERWRITE>>> (the whole new file)",
                );
                self.close_block();
                self.marker(line, marker)
            }
            (State::Outside, Some(marker)) => self.marker(line, marker),
        };
    }

    /// A marker met between blocks (or one that ended the block before).
    fn marker(&mut self, line: &Line<'t>, marker: Marker) -> State {
        match marker {
            Marker::Explanation => {
                if let Some((at, _)) = self.pending.take() {
                    self.warn(
                        at,
                        "an <<<EXPLANATION>>> with no <<<FILE>>> block after it".to_string(),
                        "write each explanation just before the <<<FILE>>> block it explains",
                    );
                }
                State::Explaining(line.no, Section::new())
            }
            Marker::File => {
                self.open_block(line, OpKind::Write);
                State::AwaitPath
            }
            Marker::Search | Marker::Overwrite => {
                // A body without its <<<FILE>>>: read it as a block (so its
                // text is not taken for prose) that names no file.
                self.open_block(line, OpKind::Write);
                self.fault(
                    line,
                    DiagnosticKind::MalformedBlock,
                    format!("{} without a <<<FILE>>> line and path before it", marker.text()),
                    "write <<<FILE>>> and the path on the line after it, just before each <<<SEARCH>>> or <<<OVERWRITE>>>",
                );
                self.body(marker)
            }
            Marker::Replace | Marker::End => {
                self.diagnostic(
                    line,
                    DiagnosticKind::StrayMarker,
                    format!("{} outside a block is ignored", marker.text()),
                    format!(
                        "{} belongs inside a <<<FILE>>> block, after <<<SEARCH>>>; remove it",
                        marker.text()
                    ),
                );
                State::Outside
            }
        }
    }

    fn open_block(&mut self, line: &Line<'t>, kind: OpKind) {
        let task = TaskId {
            top: self.drafts.len() as u32 + 1,
            sub: None,
        };
        if let Some((_, text)) = self.pending.take()
            && !text.is_empty()
        {
            self.explanations.push(Explanation { task, text });
        }
        self.block = Some(Block {
            task,
            line: line.no,
            path: None,
            invalid: Vec::new(),
            kind,
        });
        // Reserve the task's number: a block is a task even if broken.
        self.drafts
            .push(Draft::invalid(task, line.no, kind, String::new()));
    }

    fn path_line(&mut self, line: &Line<'t>) -> State {
        let path = line.text.trim();
        if path.is_empty() {
            return State::AwaitPath;
        }
        let decorated = ['`', '"', '\'', '*', '<', '['];
        if path.starts_with(decorated) || path.ends_with(decorated) {
            self.fault(
                line,
                DiagnosticKind::MalformedBlock,
                format!("the path {path} is decorated (quotes, backticks or markdown)"),
                "write the path alone and as it is, e.g. src/main.py, with nothing around it",
            );
        }
        if let Some(block) = &mut self.block {
            block.path = Some(path.to_string());
        }
        State::AwaitBody
    }

    fn body(&mut self, marker: Marker) -> State {
        if let Some(block) = &mut self.block {
            block.kind = if marker == Marker::Search {
                OpKind::Search
            } else {
                OpKind::Write
            };
        }
        if marker == Marker::Search {
            State::Search(Section::new())
        } else {
            State::Overwrite(Section::new())
        }
    }

    fn finish_search(&mut self, end: &Line<'t>, pattern: Section, replacement: Section) {
        let pattern = pattern.text(self.text);
        if pattern.trim().is_empty() {
            self.fault(
                end,
                DiagnosticKind::EmptyPattern,
                "the <<<SEARCH>>> text is empty: there is nothing to find".to_string(),
                "copy the lines to change, exactly as they are in the file, between <<<SEARCH>>> and <<<REPLACE>>>; to write a whole file use <<<OVERWRITE>>>",
            );
        }
        let mut replacement = replacement.text(self.text);
        // The format's rule: a replacement of only whitespace deletes.
        if replacement.trim().is_empty() {
            replacement = Cow::Borrowed("");
        }
        self.complete(|path| Action::Search {
            path,
            pattern,
            to: None,
            replacement,
            count: Count::Exactly(1),
        });
    }

    fn finish_write(&mut self, content: Section) {
        let content = content.text(self.text);
        self.complete(|path| Action::Write {
            path,
            content,
            append: false,
        });
    }

    /// Ends the block with its action, unless something made it invalid.
    fn complete(&mut self, action: impl FnOnce(String) -> Action<'t>) {
        let Some(block) = self.block.take() else {
            return;
        };
        let draft = match (&block.path, block.invalid.is_empty()) {
            (Some(path), true) => {
                Draft::new(block.task, block.line, block.kind, action(path.clone()))
            }
            _ => self.invalid_draft(&block),
        };
        self.place(draft);
    }

    /// Ends the block without an action: it is skipped.
    fn close_block(&mut self) {
        if let Some(block) = self.block.take() {
            let draft = self.invalid_draft(&block);
            self.place(draft);
        }
    }

    fn invalid_draft(&self, block: &Block) -> Draft<'t> {
        let mut draft = Draft::invalid(block.task, block.line, block.kind, String::new());
        draft.invalid = if block.invalid.is_empty() {
            vec![(block.line, "the block names no file".to_string())]
        } else {
            block.invalid.clone()
        };
        draft.target = block.path.clone();
        draft
    }

    fn place(&mut self, draft: Draft<'t>) {
        let index = draft.task.top as usize - 1;
        if let Some(slot) = self.drafts.get_mut(index) {
            *slot = draft;
        }
    }

    /// A block still open at `line` (a marker of the next block, or the
    /// end of the reply).
    fn unterminated(&mut self, line: &Line<'t>, state: &State) {
        let (what, missing) = match state {
            State::Search(_) => ("<<<SEARCH>>>", "<<<REPLACE>>>, the new text and <<<END>>>"),
            State::Replace(..) => ("<<<REPLACE>>>", "<<<END>>>"),
            _ => ("<<<OVERWRITE>>>", "<<<END>>>"),
        };
        let Some(opened) = self.block.as_ref().map(|b| b.line) else {
            return;
        };
        let message = format!(
            "the block of line {opened} has no {missing} before line {}: its {what} text runs into the next block, so the block was not applied",
            line.no
        );
        self.fault(
            line,
            DiagnosticKind::UnterminatedBlock,
            message,
            "end every block with <<<END>>> on a line of its own before the next <<<FILE>>> or <<<EXPLANATION>>>",
        );
        self.close_block();
    }

    /// At the end of the reply.
    fn finish(&mut self, last: u32) {
        let state = std::mem::replace(&mut self.state, State::Outside);
        match state {
            State::Outside => {}
            State::Explaining(at, text) => {
                self.pending = Some((at, text.text(self.text).into_owned()))
            }
            State::AwaitPath | State::AwaitBody => {
                let opened = self.block.as_ref().map_or(last, |b| b.line);
                self.fault_at(
                    opened,
                    DiagnosticKind::UnterminatedBlock,
                    "the <<<FILE>>> block ends with the reply before its <<<SEARCH>>> or <<<OVERWRITE>>>".to_string(),
                    "finish the block: the path, then <<<SEARCH>>> … <<<REPLACE>>> … <<<END>>> or <<<OVERWRITE>>> … <<<END>>>",
                );
                self.close_block();
            }
            state @ (State::Search(_) | State::Replace(..) | State::Overwrite(_)) => {
                let opened = self.block.as_ref().map_or(last, |b| b.line);
                let missing = match state {
                    State::Search(_) => "<<<REPLACE>>> and <<<END>>>",
                    _ => "<<<END>>>",
                };
                self.fault_at(
                    opened,
                    DiagnosticKind::UnterminatedBlock,
                    format!("the block has no {missing}: the reply ends inside it, so it was not applied"),
                    "end every block with <<<END>>> on a line of its own",
                );
                self.close_block();
            }
        }
        if let Some((at, _)) = self.pending.take() {
            self.warn(
                at,
                "an <<<EXPLANATION>>> with no <<<FILE>>> block after it".to_string(),
                "write each explanation just before the <<<FILE>>> block it explains",
            );
        }
    }

    /// A problem that makes the current block invalid, on `line`.
    fn fault(&mut self, line: &Line<'t>, kind: DiagnosticKind, message: String, hint: &str) {
        self.fault_at(line.no, kind, message, hint);
    }

    fn fault_at(&mut self, line: u32, kind: DiagnosticKind, message: String, hint: &str) {
        let (task, op) = match &mut self.block {
            Some(block) => {
                let why = self.diagnostics.reason(line, kind, || message.clone());
                block.invalid.push((line, why));
                (Some(block.task), Some(block.kind))
            }
            None => (None, None),
        };
        let mut d = super::warning(&self.lines, line, kind, message, Some(hint.to_string()));
        d.task = task;
        d.operation = op;
        self.diagnostics.push(d);
    }

    fn warn(&mut self, line: u32, message: String, hint: &str) {
        let d = super::warning(
            &self.lines,
            line,
            DiagnosticKind::StrayMarker,
            message,
            Some(hint.to_string()),
        );
        self.diagnostics.push(d);
    }

    fn diagnostic(&mut self, line: &Line<'t>, kind: DiagnosticKind, message: String, hint: String) {
        let end = line.start + line.text.len();
        self.diagnostics.push(Diagnostic {
            kind,
            line: line.no,
            column: 1,
            line_start: line.start,
            span: Span::new(line.start, end),
            message,
            hint: Some(hint),
            operation: None,
            task: None,
        });
    }
}

/// An explanation as one line: its lines trimmed and joined by spaces.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::Delimiters;
    use crate::syntax::{Choice, detect};

    fn actions(text: &str) -> Vec<Option<Action<'_>>> {
        parse(text).drafts.into_iter().map(|d| d.action).collect()
    }

    #[test]
    fn sections_are_the_lines_between_markers_as_in_csl() {
        let text = "<<<FILE>>>\r\na.txt\r\n<<<SEARCH>>>  \r\n  one\r\ntwo\r\n<<<REPLACE>>>\r\n\r\nthree\r\n\r\n<<<END>>>\r\n";
        assert_eq!(
            actions(text),
            [Some(Action::Search {
                path: "a.txt".into(),
                pattern: "  one\ntwo".into(),
                to: None,
                replacement: "\nthree\n".into(),
                count: Count::Exactly(1),
            })]
        );
    }

    #[test]
    fn an_indented_marker_is_content() {
        let text = "<<<FILE>>>\nnotes.md\n<<<OVERWRITE>>>\nThe format:\n    <<<END>>>\n<<<END>>>\n";
        assert_eq!(
            actions(text),
            [Some(Action::Write {
                path: "notes.md".into(),
                content: "The format:\n    <<<END>>>".into(),
                append: false,
            })]
        );
    }

    #[test]
    fn a_broken_block_keeps_its_number_and_the_next_applies() {
        let parsed =
            parse("<<<FILE>>>\na\n<<<SEARCH>>>\nx\n<<<FILE>>>\nb\n<<<OVERWRITE>>>\nb\n<<<END>>>\n");
        let tasks: Vec<(u32, bool)> = parsed
            .drafts
            .iter()
            .map(|d| (d.task.top, d.action.is_some()))
            .collect();
        assert_eq!(tasks, [(1, false), (2, true)]);
        let codes: Vec<&str> = parsed.diagnostics.iter().map(|d| d.kind.code()).collect();
        assert_eq!(codes, ["unterminated_block"]);
        assert_eq!(parsed.diagnostics[0].task.map(|t| t.top), Some(1));
    }

    #[test]
    fn explanations_belong_to_the_next_block() {
        let parsed = parse(
            "<<<EXPLANATION>>>\nwhy\n  one\n<<<FILE>>>\na\n<<<OVERWRITE>>>\na\n<<<END>>>\n<<<FILE>>>\nb\n<<<OVERWRITE>>>\nb\n<<<END>>>\n<<<EXPLANATION>>>\nwhy two\n<<<FILE>>>\nc\n<<<OVERWRITE>>>\nc\n<<<END>>>\n",
        );
        let said: Vec<(u32, &str)> = parsed
            .explanations
            .iter()
            .map(|e| (e.task.top, e.text.as_str()))
            .collect();
        assert_eq!(said, [(1, "why one"), (3, "why two")]);
    }

    #[test]
    fn no_input_panics_or_loses_a_block_number() {
        // Every prefix of a reply with every kind of mistake: the parse
        // never panics, and block numbers run 1..=n.
        let text = "x\n<<<EXPLANATION>>>\ne\n<<<FILE>>>\n\n`p`\nq\n<<<SEARCH>>>\ns\n<<<REPLACE>>>\n<<<REPLACE>>>\nr\n<<<END>>>\n<<<OVERWRITE>>>\nw\n<<<FILE>>>\n<<<END>>>\n<<<SEARCH>>>\n<<<END>>>\né\r\n<<<FILE>>>";
        crate::syntax::every_prefix_parses(text, parse, |parsed, _| {
            for d in &parsed.drafts {
                assert!(d.invalid.iter().all(|(_, why)| !why.is_empty()), "{d:?}");
            }
        });
    }

    #[test]
    fn detection_picks_replacer_for_its_replies_only() {
        let delims = Delimiters::default();
        let pick = |text: &str| crate::syntax::parse(text.as_bytes(), Choice::Auto, &delims).syntax;
        assert_eq!(
            pick("Sure.\n\n<<<FILE>>>\na.py\n<<<SEARCH>>>\nx\n<<<REPLACE>>>\ny\n<<<END>>>\n"),
            Syntax::Replacer
        );
        assert_eq!(
            pick("<<<EXPLANATION>>>\nwhy\n<<<FILE>>>\na.py\n<<<OVERWRITE>>>\nx\n<<<END>>>\n"),
            Syntax::Replacer
        );
        // Shell here-strings and prose with <<< lines are no blocks.
        for prose in [
            "```sh\n#!/bin/bash\ncat <<<\"$x\"\n<<< not a marker\n```\n",
            "The markers are `<<<FILE>>>` and `<<<END>>>`, written inline.\n",
            "<<<FILES>>>\n<<<END>>>\n",
        ] {
            assert!(
                detect::blocks(prose, &delims)
                    .iter()
                    .all(|b| b.syntax != Syntax::Replacer),
                "{prose}"
            );
        }
    }
}
