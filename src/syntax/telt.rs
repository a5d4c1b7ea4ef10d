//! The TELT front end (syntaxes.md §3): commands with delimited
//! parameters.
//!
//! ```text
//! #!telt [3-char SHA: k4x]
//! === FILE_REPLACE_TEXT ===
//! --PATH k4x--
//! src/index.js
//! --OLD_TEXT k4x--
//! import ReactDOM from 'react-dom';
//! --NEW_TEXT k4x--
//! import ReactDOM from 'react-dom/client';
//! --END k4x--
//! ```
//!
//! Owns the block syntax: the opener, `=== COMMAND ===` lines, `--PARAM
//! ID--` delimiters, `--END ID--`, `//` comments on those lines. The
//! commands are the shared vocabulary ([`super::actions`]) in upper case.
//! One pass over the lines; a value is a slice of the reply until it is
//! copied once into its draft.
//!
//! Every problem skips its own block only: delimiters carry the block's ID,
//! so the reader always finds where the block ends. See doc/syntax-telt.md.

use std::borrow::Cow;

use super::actions::{self, BlockRead, Call, Param, Problem, Style, problem};
use super::ahead::Ahead;
use super::lines::{Line, Lines, line_at, value_between};
use super::{Dropped, Parsed, Syntax};
use crate::csl::DiagnosticKind;

const OPENER: &str = "#!telt [3-char SHA:";

/// A syntax line's text without a trailing `// comment`: whether the rest
/// after the construct is empty or a comment.
fn only_comment_after(rest: &str) -> bool {
    let rest = rest.trim();
    rest.is_empty() || rest.starts_with("//")
}

/// `#!telt [3-char SHA: ID]`: the ID (`None`: malformed), and whether
/// only a comment follows.
fn opener(line: &str) -> Option<(Option<&str>, bool)> {
    let rest = line.strip_prefix(OPENER)?;
    let Some(close) = rest.find(']') else {
        return Some((None, true));
    };
    let id = rest.get(..close).unwrap_or_default().trim();
    let after = rest.get(close + 1..).unwrap_or_default();
    let id = (!id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(id);
    Some((id, only_comment_after(after)))
}

/// `--NAME ID--`: the name, the ID, and whether only a comment follows.
fn delimiter(line: &str) -> Option<(&str, &str, bool)> {
    let rest = line.strip_prefix("--")?;
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let name = rest.get(..name_len).filter(|n| !n.is_empty())?;
    let rest = rest.get(name_len..)?.strip_prefix(' ')?.trim_start();
    let id_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let id = rest.get(..id_len).filter(|i| !i.is_empty())?;
    let after = rest.get(id_len..)?.strip_prefix("--")?;
    Some((name, id, only_comment_after(after)))
}

/// The ID of a line that ends a value of its block (a delimiter, or an
/// opener with that ID), for [`Ahead`].
fn own_line_id(line: &str) -> Option<&str> {
    match delimiter(line) {
        Some((_, id, _)) => Some(id),
        None if line.starts_with(OPENER) => opener(line).and_then(|(id, _)| id),
        None => None,
    }
}

/// The command line that ends a value just before `next`, its block's
/// next delimiter (`id`): the last line before it, comments and blank
/// lines aside, if that line is an upper-case `=== NAME ===` at or after
/// `from`. Inside a value, only such a line is a command.
fn command_before<'t>(text: &'t str, next: &Line<'t>, from: usize, id: &str) -> Option<Line<'t>> {
    if delimiter(next.text).is_none_or(|(_, line_id, _)| line_id != id) {
        return None;
    }
    let bytes = text.as_bytes();
    let (mut end, mut no) = (next.start, next.no);
    while end > from {
        // The line before the one starting at `end`.
        let start = memchr::memrchr(b'\n', &bytes[..end - 1]).map_or(0, |n| n + 1);
        no -= 1;
        let line = line_at(text, start, no)?;
        if start < from {
            return None;
        }
        if !is_comment(line.text) {
            return command(line.text)
                .is_some_and(|(name, _)| is_upper(name))
                .then_some(line);
        }
        end = start;
    }
    None
}

/// Whether a line is where a value that never ends may have meant to
/// (a wrong-ID END, or the next opener), for [`Ahead`].
fn ends_value_late(line: &str) -> bool {
    line.starts_with(OPENER) || delimiter(line).is_some_and(|(name, ..)| name == "END")
}

/// `=== NAME ===`: the name, and whether only a comment follows.
fn command(line: &str) -> Option<(&str, bool)> {
    let rest = line.strip_prefix("===")?;
    let close = rest.find("===")?;
    let name = rest.get(..close)?.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let after = rest.get(close + 3..)?;
    Some((name, only_comment_after(after)))
}

/// A command name as TELT spells it: `FILE_WRITE`, never `Summary`.
fn is_upper(name: &str) -> bool {
    !name.bytes().any(|b| b.is_ascii_lowercase())
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with("//")
}

/// Reads the reply as TELT.
pub fn parse(text: &str) -> Parsed<'_> {
    read(text, true)
}

/// [`parse`]; `look_ahead`: whether to use an [`Ahead`] (the tests check
/// that it changes nothing but the time taken).
pub(super) fn read(text: &str, look_ahead: bool) -> Parsed<'_> {
    let mut reader = Reader {
        text,
        lines: Lines::new(text),
        drafts: Vec::new(),
        diagnostics: crate::csl::Diagnostics::new(),
        dropped: Vec::new(),
        ahead: None,
        look_ahead,
    };
    reader.run();
    Parsed {
        dropped: reader.dropped,
        ..Parsed::read(Syntax::Telt, text, reader.drafts, reader.diagnostics)
    }
}

struct Reader<'t> {
    text: &'t str,
    lines: Lines<'t>,
    drafts: Vec<crate::plan::Draft<'t>>,
    diagnostics: crate::csl::Diagnostics,
    dropped: Vec<Dropped>,
    /// The lines that end or stop a value, from the first block whose END
    /// never comes on (see [`Ahead`]).
    ahead: Option<Ahead<'t>>,
    look_ahead: bool,
}

/// The command being read and its parameters.
struct Open<'t> {
    call: Call<'t>,
    /// The parameter whose value is being read: its index in
    /// `call.params`, and where the value starts.
    value: Option<(usize, usize)>,
    /// Each parameter's index in `call.params`, by name, once there are
    /// 16 of them (few in any real command: a linear look then).
    index: std::collections::HashMap<&'t str, usize>,
}

impl<'t> Reader<'t> {
    fn run(&mut self) {
        while let Some(line) = self.lines.next() {
            match line.text.as_bytes().first() {
                Some(b'#') => {
                    if let Some((id, clean)) = opener(line.text) {
                        self.block(line, id, clean);
                    }
                }
                Some(b' ' | b'\t') if opener(line.text.trim_start()).is_some() => {
                    self.indented(line)
                }
                _ => {}
            }
        }
    }

    /// An opener off column 1 is prose, not a block: said and listed.
    fn indented(&mut self, line: Line<'t>) {
        actions::indented_opener(
            self.text,
            &line,
            Syntax::Telt,
            "start the #!telt line, and every delimiter of the block, at column 1",
            &mut self.diagnostics,
            &mut self.dropped,
        );
    }

    fn block(&mut self, open: Line<'t>, id: Option<&'t str>, clean: bool) {
        let mut block = BlockRead {
            line: open.no,
            at: open.start,
            ..BlockRead::default()
        };
        if !clean {
            block.problems.push(problem(
                &open,
                open.start,
                DiagnosticKind::MalformedLine,
                "text after the #!telt opener".to_string(),
                "the opener stands alone on its line (a // comment may follow)".to_string(),
            ));
        }
        match id {
            Some(id) => self.body(&open, id, &mut block),
            None => block.problems.push(problem(
                &open,
                open.start,
                DiagnosticKind::MalformedLine,
                "this TELT opener has no block ID, so its block cannot be read".to_string(),
                "write the opener as #!telt [3-char SHA: k4x] with three letters or digits, and use k4x in every delimiter: --PATH k4x--, --END k4x--".to_string(),
            )),
        }
        let top = self.drafts.len() as u32 + 1;
        let draft = actions::draft(self.text, top, block, Style::Telt, &mut self.diagnostics);
        self.drafts.push(draft);
    }

    /// Reads the block after its opener into `block`; leaves the lines at
    /// the first line after the block.
    fn body(&mut self, open: &Line<'t>, id: &'t str, block: &mut BlockRead<'t>) {
        let end = format!("--END {id}--");
        let mut current: Option<Open<'t>> = None;
        // Inside a value, where it might have meant to end if its own
        // END never comes: a wrong-ID END, else the next opener.
        let mut fallback: Option<(Line<'t>, bool)> = None;
        loop {
            let Some(line) = self.lines.next() else {
                if self.ahead.is_none() && self.look_ahead {
                    self.ahead = Some(Ahead::with_every(
                        self.text,
                        open,
                        own_line_id,
                        ends_value_late,
                    ));
                }
                self.ran_out(open, id, fallback, &mut current, block);
                return;
            };
            let t = line.text;
            let in_value = current.as_ref().is_some_and(|c| c.value.is_some());
            if let Some((name, line_id, clean)) = delimiter(t) {
                // Inside a value only this block's delimiters count:
                // another ID's are content (a TELT example in a file).
                if line_id != id && in_value {
                    if name == "END" && fallback.is_none() {
                        fallback = Some((line, true));
                    }
                    continue;
                }
                if line_id != id {
                    // Read on as if it were this block's, so that one
                    // typo is one diagnostic.
                    block.problems.push(mismatch(&line, id, &end));
                }
                if !clean {
                    block.problems.push(after_delimiter(&line));
                }
                self.finish_value(&mut current, line.start, false);
                if name == "END" {
                    self.finish(&mut current, line.start, block);
                    return;
                }
                match current.as_mut() {
                    Some(open_cmd) => {
                        let at = line.start + 2;
                        // Parameters are few in any real command; the
                        // index keeps a hostile one with thousands linear.
                        let found = if open_cmd.call.params.len() < 16 {
                            open_cmd.call.params.iter().position(|p| p.name == name)
                        } else {
                            if open_cmd.index.is_empty() {
                                for (i, p) in open_cmd.call.params.iter().enumerate() {
                                    open_cmd.index.entry(p.name).or_insert(i);
                                }
                            }
                            open_cmd.index.get(name).copied()
                        };
                        let index = match found {
                            Some(i) => i,
                            None => {
                                open_cmd.call.params.push(Param {
                                    name,
                                    line: line.no,
                                    at,
                                    values: Vec::new(),
                                });
                                let i = open_cmd.call.params.len() - 1;
                                if !open_cmd.index.is_empty() {
                                    open_cmd.index.insert(name, i);
                                }
                                i
                            }
                        };
                        open_cmd.value = Some((index, line.next));
                        if let Some(ahead) = &self.ahead {
                            if !ahead.may_come(id, line.next) {
                                // None of this block's delimiters comes
                                // again: the value runs to the end of the
                                // reply. Where the scan would have stopped,
                                // without it.
                                let fallback = fallback.or_else(|| {
                                    let stop = ahead.next_stop(line.next)?;
                                    Some((stop, !stop.text.starts_with(OPENER)))
                                });
                                self.lines.finish();
                                self.ran_out(open, id, fallback, &mut current, block);
                                return;
                            }
                            // The value runs to this block's next line (or
                            // a command line just before it): the lines
                            // between are its own, and only a place where
                            // it may have meant to end matters. Going there
                            // directly keeps a reply of values whose ends
                            // lie far away from rescanning them per block.
                            if let Some(next) = ahead.next_of(id, line.next) {
                                if fallback.is_none()
                                    && let Some(stop) = ahead.next_stop(line.next)
                                    && stop.start < next.start
                                {
                                    fallback = Some((stop, !stop.text.starts_with(OPENER)));
                                }
                                let resume = command_before(self.text, &next, line.next, id);
                                self.lines.seek(&resume.unwrap_or(next));
                            }
                        }
                    }
                    None => block.problems.push(problem(
                        &line,
                        line.start,
                        DiagnosticKind::MalformedLine,
                        format!("the parameter {name} comes before any command"),
                        "start each command with a line === COMMAND === (=== FILE_WRITE ===, say) before its parameters".to_string(),
                    )),
                }
                continue;
            }
            if let Some((name, clean)) = command(t)
                && (!in_value || (is_upper(name) && self.command_follows(id)))
            {
                if !clean {
                    block.problems.push(after_delimiter(&line));
                }
                self.finish_value(&mut current, line.start, true);
                self.finish(&mut current, line.start, block);
                current = Some(Open {
                    call: Call {
                        name,
                        line: line.no,
                        at: line.start
                            + 3
                            + (t.len() - 3 - t.get(3..).unwrap_or_default().trim_start().len()),
                        params: Vec::new(),
                    },
                    value: None,
                    index: std::collections::HashMap::new(),
                });
                continue;
            }
            if t.starts_with(OPENER) {
                // An opener with this block's own ID is the next block
                // (a model reusing the example's ID), never this value's
                // content: a value cannot hold this ID's delimiters anyway.
                let own_id = opener(t).is_some_and(|(opened, _)| opened == Some(id));
                if in_value && !own_id {
                    if fallback.is_none() {
                        fallback = Some((line, false));
                    }
                    continue;
                }
                block.problems.push(unclosed(open, &end, Some(&line)));
                self.finish(&mut current, line.start, block);
                self.lines.seek(&line);
                return;
            }
            if in_value {
                continue;
            }
            if t.starts_with("```") {
                block.problems.push(unclosed(open, &end, Some(&line)));
                self.finish(&mut current, line.start, block);
                self.lines.seek(&line);
                return;
            }
            if is_comment(t) {
                continue;
            }
            block.problems.push(problem(
                &line,
                line.start,
                DiagnosticKind::MalformedLine,
                "this line inside a TELT block is no command, parameter or comment".to_string(),
                format!("a value goes on the lines after its parameter line (--PATH {id}--); between commands write only === COMMAND === lines and // comments; end the block with {end}"),
            ));
        }
    }

    /// Whether the lines after a `=== NAME ===` line inside a value make
    /// it a command: the next line that is not blank or a comment is a
    /// delimiter of this block. Otherwise it is part of the value. (Only
    /// upper-case names are asked about: `=== Notes ===` in a value is
    /// always text.)
    fn command_follows(&self, id: &str) -> bool {
        self.lines
            .clone()
            .find(|l| !is_comment(l.text))
            .and_then(|l| delimiter(l.text))
            .is_some_and(|(_, line_id, _)| line_id == id)
    }

    /// Ends a block whose `--END ID--` never came, at the end of the reply:
    /// at `fallback`, where it most likely meant to end (a wrong-ID END,
    /// taken as its own; else the next opener, where reading resumes).
    fn ran_out(
        &mut self,
        open: &Line<'t>,
        id: &str,
        fallback: Option<(Line<'t>, bool)>,
        current: &mut Option<Open<'t>>,
        block: &mut BlockRead<'t>,
    ) {
        let end = format!("--END {id}--");
        match fallback {
            Some((line, true)) => {
                block.problems.push(mismatch(&line, id, &end));
                self.finish(current, line.start, block);
                self.lines.seek(&line);
                self.lines.next();
            }
            Some((line, false)) => {
                block.problems.push(unclosed(open, &end, Some(&line)));
                self.lines.seek(&line);
            }
            None => {
                block.problems.push(unclosed(open, &end, None));
                self.finish(current, self.text.len(), block);
            }
        }
    }

    /// Ends the value being read at the line starting at `to`. Before a
    /// command line, the blank lines that separate commands are not part
    /// of it.
    fn finish_value(&self, current: &mut Option<Open<'t>>, to: usize, before_command: bool) {
        let Some(open) = current.as_mut() else {
            return;
        };
        let Some((index, from)) = open.value.take() else {
            return;
        };
        let mut value = value_between(self.text, from, to);
        if before_command {
            value = value.trim_end_matches(['\n', '\r']);
        }
        if let Some(param) = open.call.params.get_mut(index) {
            param.values.push(Cow::Borrowed(value));
        }
    }

    /// Ends the command being read: its value, then the command itself.
    fn finish(&self, current: &mut Option<Open<'t>>, to: usize, block: &mut BlockRead<'t>) {
        self.finish_value(current, to, false);
        if let Some(open) = current.take() {
            block.calls.push(open.call);
        }
    }
}

fn mismatch(line: &Line<'_>, id: &str, end: &str) -> Problem {
    problem(
        line,
        line.start,
        DiagnosticKind::IdMismatch,
        format!("this delimiter carries another ID than its block's ({id}); the block was skipped"),
        format!("every delimiter of the block carries the opener's ID: --PATH {id}--, {end}"),
    )
}

fn after_delimiter(line: &Line<'_>) -> Problem {
    problem(
        line,
        line.start,
        DiagnosticKind::MalformedLine,
        "text after a delimiter on its line".to_string(),
        "a delimiter stands alone on its line (a // comment may follow); put the value on the lines after it".to_string(),
    )
}

/// The problem of a block whose `--END ID--` never comes (`at`: the line
/// that showed it, if any).
fn unclosed(open: &Line<'_>, end: &str, at: Option<&Line<'_>>) -> Problem {
    let (message, line) = match at {
        Some(line) => (
            format!(
                "this TELT block is not closed: line {} comes before its {end}; this block was skipped",
                line.no
            ),
            line,
        ),
        None => (
            format!(
                "this TELT block is never closed: the reply ends before {end}; this block was skipped"
            ),
            open,
        ),
    };
    Problem {
        line: line.no,
        at: line.start,
        kind: DiagnosticKind::UnterminatedBlock,
        message,
        hint: format!("end every block with {end}, at column 1"),
        error_type: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Action;

    fn read(text: &str) -> (Vec<crate::plan::Draft<'_>>, Vec<(DiagnosticKind, u32)>) {
        let parsed = parse(text);
        let codes = parsed
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.line))
            .collect();
        (parsed.drafts, codes)
    }

    #[test]
    fn delimiters_are_recognised_with_comments() {
        assert_eq!(delimiter("--PATH k4x--"), Some(("PATH", "k4x", true)));
        assert_eq!(
            delimiter("--PATH k4x-- // the file"),
            Some(("PATH", "k4x", true))
        );
        assert_eq!(delimiter("--PATH k4x-- src"), Some(("PATH", "k4x", false)));
        assert_eq!(delimiter("-- PATH k4x--"), None);
        assert_eq!(delimiter("--- a/x"), None);
        assert_eq!(
            command("=== FILE_WRITE === // new"),
            Some(("FILE_WRITE", true))
        );
        assert_eq!(command("=== Summary of changes ==="), None);
        assert_eq!(
            opener("#!telt [3-char SHA: a1b] // x"),
            Some((Some("a1b"), true))
        );
    }

    #[test]
    fn one_command_is_one_operation() {
        let text = "#!telt [3-char SHA: k4x]\n=== CREATE_FILE ===\n--FILE k4x--\nsrc/a.txt\n--CONTENT k4x--\nline // not a comment\n\nend\n--END k4x--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        assert_eq!(
            drafts[0].action,
            Some(Action::Write {
                path: "src/a.txt".into(),
                content: "line // not a comment\n\nend".into(),
                append: false
            })
        );
    }

    #[test]
    fn several_commands_are_a_group_and_blank_lines_between_them_are_not_values() {
        let text = "#!telt [3-char SHA: k4x]\n// two edits\n=== FILE_REPLACE_TEXT ===\n--PATH k4x--\na\n--OLD_TEXT k4x--\nx\n--NEW_TEXT k4x--\ny\n\n=== FILE_DELETE === // gone\n--PATH k4x--\nb\n--END k4x--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        let Some(Action::Block(children)) = &drafts[0].action else {
            panic!("{drafts:?}")
        };
        assert_eq!(children.len(), 2);
        assert!(
            matches!(&children[0].action, Some(Action::Search { replacement, .. }) if replacement == "y")
        );
        assert_eq!(children[1].line, 11);
    }

    #[test]
    fn a_parameter_given_twice_is_a_list() {
        let text = "#!telt [3-char SHA: k4x]\n=== FILES_READ ===\n--PATHS k4x--\na\n--PATHS k4x--\nb\n--END k4x--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        assert_eq!(
            drafts[0].action,
            Some(Action::ReadFiles {
                paths: vec!["a".into(), "b".into()]
            })
        );
    }

    #[test]
    fn other_ids_and_command_lines_inside_a_value_are_content() {
        let text = "#!telt [3-char SHA: k4x]\n=== FILE_WRITE ===\n--PATH k4x--\ndoc.md\n--CONTENT k4x--\n=== FILE_WRITE ===\n--PATH abc--\n--END abc--\n--END k4x--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        assert!(
            matches!(&drafts[0].action, Some(Action::Write { content, .. }) if content == "=== FILE_WRITE ===\n--PATH abc--\n--END abc--")
        );
    }

    #[test]
    fn a_wrong_id_skips_its_block_only() {
        let text = "#!telt [3-char SHA: k4x]\n=== FILE_DELETE ===\n--PATH k4y--\na\n--END k4x--\n#!telt [3-char SHA: b2b]\n=== FILE_DELETE ===\n--PATH b2b--\nb\n--END b2b--\n";
        let (drafts, codes) = read(text);
        assert!(
            codes.contains(&(DiagnosticKind::IdMismatch, 3)),
            "{codes:?}"
        );
        assert_eq!(drafts.len(), 2);
        assert!(drafts[0].action.is_none());
        assert!(drafts[1].action.is_some());
    }

    #[test]
    fn an_end_with_the_wrong_id_ends_the_block_when_its_own_never_comes() {
        let text = "#!telt [3-char SHA: k4x]\n=== FILE_DELETE ===\n--PATH k4x--\na\n--END k4y--\nprose\n#!telt [3-char SHA: b2b]\n=== FILE_DELETE ===\n--PATH b2b--\nb\n--END b2b--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, [(DiagnosticKind::IdMismatch, 5)]);
        assert_eq!(drafts.len(), 2);
        assert!(drafts[1].action.is_some());
    }

    #[test]
    fn a_missing_end_before_a_block_with_the_same_id_is_reported() {
        let text = "#!telt [3-char SHA: k4x]\n=== CREATE_FILE ===\n--FILE k4x--\na.txt\n--CONTENT k4x--\nhello\n#!telt [3-char SHA: k4x]\n=== CREATE_FILE ===\n--FILE k4x--\nb.txt\n--CONTENT k4x--\nbye\n--END k4x--\n";
        let parsed = parse(text);
        let ok: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(ok, [false, true], "{:?}", parsed.drafts);
        assert!(
            parsed
                .diagnostics
                .iter()
                .any(|d| d.kind == DiagnosticKind::UnterminatedBlock
                    && d.line == 7
                    && d.task.map(|t| t.top) == Some(1)),
            "{:?}",
            parsed.diagnostics
        );
    }

    #[test]
    fn an_unclosed_block_resumes_at_the_next_opener() {
        let text = "#!telt [3-char SHA: k4x]\n=== FILE_DELETE ===\n--PATH k4x--\na\n#!telt [3-char SHA: b2b]\n=== FILE_DELETE ===\n--PATH b2b--\nb\n--END b2b--\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, [(DiagnosticKind::UnterminatedBlock, 5)]);
        assert_eq!(drafts.len(), 2);
        assert!(drafts[1].action.is_some());
    }

    #[test]
    fn unknown_commands_and_stray_lines_are_reported_together() {
        let text =
            "#!telt [3-char SHA: k4x]\n=== FILE_WIRTE ===\nstray\n--PATH k4x--\na\n--END k4x--\n";
        let (drafts, codes) = read(text);
        assert_eq!(
            codes,
            [
                (DiagnosticKind::UnknownAction, 2),
                (DiagnosticKind::MalformedLine, 3)
            ]
        );
        assert!(drafts[0].action.is_none());
    }
}
