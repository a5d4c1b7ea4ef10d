//! The SHAM / NESL front end (syntaxes.md §3): `key = value` blocks.
//!
//! ```text
//! #!SHAM [@three-char-SHA-256: k7m]
//! action = "file_write"
//! path = "src/hello.txt"
//! content = <<'EOT_SHAM_k7m'
//! Hello
//! EOT_SHAM_k7m
//! #!END_SHAM_k7m
//! ```
//!
//! Owns the block syntax: openers and closing lines (`#!SHAM …` /
//! `#!END_SHAM_ID`, and NESL's spelling `#!nesl …` / `#!end_ID`), key
//! lines, quoted values and heredocs. What an action means is
//! [`super::actions`]'s. One pass over the lines; a heredoc's content is
//! a slice of the reply until it is copied once into its draft.
//!
//! Every problem skips its own block only: the closing line carries the
//! block's ID, so the reader always knows where the next block starts. See
//! doc/syntax-sham.md.

use std::borrow::Cow;

use super::actions::{self, BlockRead, Call, Param, Problem, Style, problem};
use super::ahead::Ahead;
use super::lines::{Line, Lines, value_between};
use super::{Dropped, Parsed, Syntax};
use crate::csl::DiagnosticKind;

/// The opener's prefix, before the ID.
const OPENERS: [(&str, Spelling); 3] = [
    ("#!SHAM [@three-char-SHA-256:", Spelling::Sham),
    ("#!nesl [@three-char-SHA-256:", Spelling::Nesl),
    ("#!NESL [@three-char-SHA-256:", Spelling::Nesl),
];

/// SHAM closes with `#!END_SHAM_ID`, NESL with `#!end_ID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    Sham,
    Nesl,
}

impl Spelling {
    fn closer(self, id: &str) -> String {
        match self {
            Spelling::Sham => format!("#!END_SHAM_{id}"),
            Spelling::Nesl => format!("#!end_{id}"),
        }
    }

    /// The ID of any closing line of this spelling.
    fn closer_id(self, line: &str) -> Option<&str> {
        let line = line.trim_end();
        match self {
            Spelling::Sham => line.strip_prefix("#!END_SHAM_"),
            Spelling::Nesl => line
                .strip_prefix("#!end_")
                .or_else(|| line.strip_prefix("#!END_")),
        }
    }
}

/// A block opener: its spelling and ID (`None`: malformed).
fn opener(line: &str) -> Option<(Spelling, Option<&str>)> {
    if !line.starts_with("#!") {
        return None;
    }
    let (prefix, spelling) = OPENERS.iter().find(|(p, _)| line.starts_with(p))?;
    let rest = line.get(prefix.len()..)?.trim();
    let id = rest
        .strip_suffix(']')
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()));
    Some((*spelling, id))
}

/// The key of a line that can end a heredoc, for [`Ahead`]: its text,
/// when it is a word (a terminator) or a hashbang line (a block's
/// closing line).
fn heredoc_end(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let word = !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (word || t.starts_with("#!")).then_some(t)
}

/// Whether an indented line would be an opener at column 1.
fn indented_opener(line: &str) -> bool {
    line.starts_with([' ', '\t']) && opener(line.trim_start()).is_some()
}

/// Reads the reply as SHAM.
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
        ..Parsed::read(Syntax::Sham, text, reader.drafts, reader.diagnostics)
    }
}

struct Reader<'t> {
    text: &'t str,
    lines: Lines<'t>,
    drafts: Vec<crate::plan::Draft<'t>>,
    diagnostics: crate::csl::Diagnostics,
    dropped: Vec<Dropped>,
    /// The lines that can end a heredoc, from the first heredoc that never
    /// ends on (see [`Ahead`]).
    ahead: Option<Ahead<'t>>,
    look_ahead: bool,
}

/// How a block ended.
enum End<'t> {
    /// Its closing line (or one with another ID, reported).
    Closed,
    /// A line that is not the block's: read it again outside the block.
    Before(Line<'t>),
    /// The end of the reply.
    Eof,
}

impl<'t> Reader<'t> {
    fn run(&mut self) {
        while let Some(line) = self.lines.next() {
            let Some(first) = line.text.as_bytes().first() else {
                continue;
            };
            if *first == b'#'
                && let Some((spelling, id)) = opener(line.text)
            {
                self.block(line, spelling, id);
            } else if (*first == b' ' || *first == b'\t') && indented_opener(line.text) {
                self.indented(line);
            }
        }
    }

    /// An opener off column 1 is prose, not a block: said and listed.
    fn indented(&mut self, line: Line<'t>) {
        actions::indented_opener(
            self.text,
            &line,
            Syntax::Sham,
            "start the #!SHAM line, and every line of the block, at column 1",
            &mut self.diagnostics,
            &mut self.dropped,
        );
    }

    fn block(&mut self, open: Line<'t>, spelling: Spelling, id: Option<&'t str>) {
        let mut block = BlockRead {
            line: open.no,
            at: open.start,
            ..BlockRead::default()
        };
        let end = match id {
            Some(id) => self.body(&open, spelling, id, &mut block),
            None => {
                block.problems.push(problem(
                    &open,
                    open.start,
                    DiagnosticKind::MalformedLine,
                    "this SHAM opener has no block ID, so its block cannot be read".to_string(),
                    "write the opener as #!SHAM [@three-char-SHA-256: k7m] with three letters or digits, and close the block with #!END_SHAM_k7m".to_string(),
                ));
                End::Closed
            }
        };
        if let End::Before(line) = end {
            self.lines.seek(&line);
        }
        let top = self.drafts.len() as u32 + 1;
        let draft = actions::draft(self.text, top, block, Style::Sham, &mut self.diagnostics);
        self.drafts.push(draft);
    }

    /// Reads the block's lines after its opener into `block`.
    fn body(
        &mut self,
        open: &Line<'t>,
        spelling: Spelling,
        id: &'t str,
        block: &mut BlockRead<'t>,
    ) -> End<'t> {
        let closer = spelling.closer(id);
        let mut keys: Vec<Key<'t>> = Vec::new();
        let end = loop {
            let Some(line) = self.lines.next() else {
                block.problems.push(unclosed(open, &closer, None));
                break End::Eof;
            };
            let t = line.text;
            if t.starts_with("#!") {
                if t.trim_end() == closer {
                    break End::Closed;
                }
                if let Some(other) = spelling.closer_id(t) {
                    block.problems.push(problem(
                        &line,
                        line.start,
                        DiagnosticKind::IdMismatch,
                        format!("the block opened with ID {id} is closed with ID {other}; this block was skipped"),
                        format!("close it with {closer}: the closing line carries the opener's ID"),
                    ));
                    break End::Closed;
                }
                if opener(t).is_some() {
                    block.problems.push(unclosed(open, &closer, Some(&line)));
                    break End::Before(line);
                }
            }
            if t.starts_with("```") {
                block.problems.push(unclosed(open, &closer, Some(&line)));
                break End::Before(line);
            }
            let trimmed = t.trim_start();
            if trimmed.is_empty()
                || trimmed.starts_with("//")
                || (trimmed.starts_with('#') && !trimmed.starts_with("#!"))
            {
                continue;
            }
            match key_line(t) {
                Some((key, value_at, Value::Quoted)) => {
                    match quoted(t.get(value_at..).unwrap_or_default()) {
                        Ok(value) => keys.push((key, line, line.start + value_at, Some(value))),
                        Err((offset, message, hint)) => {
                            block.problems.push(problem(
                                &line,
                                line.start + value_at + offset,
                                DiagnosticKind::MalformedValue,
                                message,
                                hint,
                            ));
                            keys.push((key, line, line.start + value_at, None));
                        }
                    }
                }
                Some((key, value_at, Value::Heredoc(word))) => {
                    match self.heredoc(word, &closer) {
                        Ok(value) => {
                            keys.push((key, line, line.start + value_at, Some(value.into())))
                        }
                        Err(stop) => {
                            block.problems.push(problem(
                                &line,
                                line.start + value_at,
                                DiagnosticKind::UnterminatedHeredoc,
                                format!("the heredoc of {key} never ends: there is no line {word} before the block's end"),
                                format!("end the value with a line holding only {word}, at column 1, before {closer}"),
                            ));
                            keys.push((key, line, line.start + value_at, None));
                            match stop {
                                HeredocStop::Closer => break End::Closed,
                                HeredocStop::Eof(None) => {
                                    block.problems.push(unclosed(open, &closer, None));
                                    break End::Eof;
                                }
                                HeredocStop::Eof(Some(next)) => {
                                    block.problems.push(unclosed(open, &closer, Some(&next)));
                                    break End::Before(next);
                                }
                            }
                        }
                    }
                }
                Some((key, value_at, Value::Bare)) => {
                    block.problems.push(problem(
                        &line,
                        line.start + value_at,
                        DiagnosticKind::MalformedValue,
                        format!("the value of {key} is not quoted"),
                        format!("write {key} = \"value\" on one line, or {key} = <<'EOT_SHAM_{id}' with the value on the lines after it, ended by a line EOT_SHAM_{id}"),
                    ));
                    keys.push((key, line, line.start + value_at, None));
                }
                None => block.problems.push(problem(
                    &line,
                    line.start,
                    DiagnosticKind::MalformedLine,
                    "this line inside a SHAM block is not key = value".to_string(),
                    format!("inside a block write only key = \"value\" or key = <<'EOT_SHAM_{id}' lines, blank lines and // comments; end the block with {closer}"),
                )),
            }
        };
        self.calls(open, keys, block);
        end
    }

    /// The content of a heredoc whose opening line was just read: every
    /// line up to the one holding only `word`. Stops at the block's own
    /// closing line (the terminator is missing) or the end of the reply
    /// (then at the first opener inside, if any: the next block).
    fn heredoc(&mut self, word: &str, closer: &str) -> Result<&'t str, HeredocStop<'t>> {
        let first_line = self.lines.clone().next();
        let from = first_line.map_or(self.text.len(), |l| l.start);
        if let Some(ahead) = &self.ahead
            && !ahead.may_come(word, from)
            && !ahead.may_come(closer, from)
        {
            // Neither line ever comes: what the scan below would find,
            // without rescanning the rest of the reply.
            self.lines.finish();
            return Err(HeredocStop::Eof(ahead.next_stop(from)));
        }
        let first = word.as_bytes().first().copied();
        let mut next_opener: Option<Line<'t>> = None;
        for line in self.lines.by_ref() {
            let b = line.text.as_bytes().first().copied();
            if b == first && line.text.trim_end() == word {
                return Ok(value_between(self.text, from, line.start));
            }
            if b == Some(b'#') {
                if line.text.trim_end() == closer {
                    return Err(HeredocStop::Closer);
                }
                if next_opener.is_none() && opener(line.text).is_some() {
                    next_opener = Some(line);
                }
            }
        }
        if self.ahead.is_none()
            && self.look_ahead
            && let Some(first_line) = first_line
        {
            self.ahead = Some(Ahead::new(self.text, &first_line, heredoc_end, |t| {
                opener(t).is_some()
            }));
        }
        Err(HeredocStop::Eof(next_opener))
    }

    /// The block's keys as one action call.
    fn calls(&mut self, open: &Line<'t>, keys: Vec<Key<'t>>, block: &mut BlockRead<'t>) {
        let mut action: Option<(&'t str, &Line<'t>, usize)> = None;
        let mut params: Vec<Param<'t>> = Vec::with_capacity(keys.len());
        // Where each key was first given: one lookup per key, however many.
        let mut first_of: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(keys.len());
        for (i, (key, line, at, value)) in keys.iter().enumerate() {
            let first = *first_of.entry(key).or_insert(i);
            if let Some((_, first, ..)) = (first != i).then(|| &keys[first]) {
                block.problems.push(problem(
                    line,
                    line.start,
                    DiagnosticKind::DuplicateKey,
                    format!(
                        "{key} is given twice in this block (first on line {})",
                        first.no
                    ),
                    "give each key once; to do two things, write two blocks".to_string(),
                ));
                continue;
            }
            if *key == "action" {
                match value {
                    Some(Cow::Borrowed(name)) => action = Some((name.trim(), line, *at)),
                    None => {}
                    Some(Cow::Owned(_)) => block.problems.push(problem(
                        line,
                        *at,
                        DiagnosticKind::MalformedValue,
                        "an action name has no escapes".to_string(),
                        format!("write the action's name, such as action = \"file_write\"; the actions are {}", actions::names(Style::Sham)),
                    )),
                }
                continue;
            }
            params.push(Param {
                name: key,
                line: line.no,
                at: line.start,
                values: value.iter().cloned().collect(),
            });
        }
        match action {
            Some((name, line, at)) => block.calls.push(Call {
                name,
                line: line.no,
                at,
                params,
            }),
            None if block
                .problems
                .iter()
                .any(|p| p.kind == DiagnosticKind::MalformedValue) => {}
            None => block.problems.push(problem(
                open,
                open.start,
                DiagnosticKind::MissingParameter,
                "this SHAM block has no action".to_string(),
                format!(
                    "add action = \"…\" naming one of: {}",
                    actions::names(Style::Sham)
                ),
            )),
        }
    }
}

/// A key line: the key, its line, the byte offset of its value, and the
/// value (`None`: unreadable, and reported).
type Key<'t> = (&'t str, Line<'t>, usize, Option<Cow<'t, str>>);

/// Where a heredoc without its terminator stopped.
enum HeredocStop<'t> {
    /// At its block's closing line.
    Closer,
    /// At the end of the reply; the first opener inside it, if any.
    Eof(Option<Line<'t>>),
}

/// The problem of a block whose closing line never comes (`at`: the line
/// that showed it, if any).
fn unclosed(open: &Line<'_>, closer: &str, at: Option<&Line<'_>>) -> Problem {
    let (message, line) = match at {
        Some(line) => (
            format!(
                "this SHAM block is not closed: line {} comes before its closing line {closer}; this block was skipped",
                line.no
            ),
            line,
        ),
        None => (
            format!(
                "this SHAM block is never closed: the reply ends before {closer}; this block was skipped"
            ),
            open,
        ),
    };
    Problem {
        line: line.no,
        at: line.start,
        kind: DiagnosticKind::UnterminatedBlock,
        message,
        hint: format!("end every block with its closing line {closer}, at column 1"),
        error_type: None,
    }
}

/// The value form after `key =`.
enum Value<'t> {
    /// `"…"`.
    Quoted,
    /// `<<'WORD'`: the terminator.
    Heredoc(&'t str),
    /// Anything else.
    Bare,
}

/// A `key = value` line: the key, the byte offset of the value in the
/// line, and its form.
fn key_line(line: &str) -> Option<(&str, usize, Value<'_>)> {
    let key_len = line
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if key_len == 0 || line.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let key = line.get(..key_len)?;
    let rest = line.get(key_len..)?;
    let after_eq = rest.trim_start().strip_prefix('=')?;
    let value = after_eq.trim_start();
    let value_at = line.len() - value.len();
    if value.starts_with('"') {
        return Some((key, value_at, Value::Quoted));
    }
    if let Some(word) = value.strip_prefix("<<") {
        let word = word.trim_end();
        let word = word
            .strip_prefix('\'')
            .and_then(|w| w.strip_suffix('\''))
            .or_else(|| word.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
            .unwrap_or(word);
        if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Some((key, value_at, Value::Heredoc(word)));
        }
    }
    Some((key, value_at, Value::Bare))
}

/// A quoted value (`value` starts with `"`): its text, borrowed when it
/// has no escapes; or the offset of the problem in `value`, a message and
/// a hint.
fn quoted(value: &str) -> Result<Cow<'_, str>, (usize, String, String)> {
    let body = value.get(1..).unwrap_or_default();
    let mut owned: Option<String> = None;
    let mut from = 0;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let rest = body.get(i + 1..).unwrap_or_default().trim();
                if !rest.is_empty() && !rest.starts_with("//") {
                    return Err((
                        i + 2,
                        "text after the closing quote".to_string(),
                        "write \\\" for a quote inside the value, or put the value in a heredoc (key = <<'EOT_SHAM_ID' … EOT_SHAM_ID)".to_string(),
                    ));
                }
                let last = body.get(from..i).unwrap_or_default();
                return Ok(match owned {
                    None => Cow::Borrowed(last),
                    Some(mut s) => {
                        s.push_str(last);
                        Cow::Owned(s)
                    }
                });
            }
            b'\\' => {
                let decoded = match bytes.get(i + 1) {
                    Some(b'"') => '"',
                    Some(b'\\') => '\\',
                    Some(b'n') => '\n',
                    Some(b't') => '\t',
                    _ => {
                        return Err((
                            i + 1,
                            "unknown escape in a quoted value (only \\\", \\\\, \\n and \\t are escapes)".to_string(),
                            "write \\\\ for a backslash, or put the value in a heredoc, where nothing is escaped".to_string(),
                        ));
                    }
                };
                let s = owned.get_or_insert_with(String::new);
                s.push_str(body.get(from..i).unwrap_or_default());
                s.push(decoded);
                i += 2;
                from = i;
            }
            _ => i += 1,
        }
    }
    Err((
        0,
        "the quoted value has no closing quote".to_string(),
        "end the value with \" on the same line; for a value of several lines use a heredoc: key = <<'EOT_SHAM_ID' … EOT_SHAM_ID".to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::Severity;
    use crate::plan::Action;

    fn read(text: &str) -> (Vec<crate::plan::Draft<'_>>, Vec<(DiagnosticKind, u32)>) {
        let parsed = parse(text);
        let mut codes: Vec<_> = parsed
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.line))
            .collect();
        codes.sort_by_key(|(_, line)| *line);
        (parsed.drafts, codes)
    }

    #[test]
    fn a_block_with_a_heredoc_is_a_write() {
        let text = "Intro.\n```sh\n#!SHAM [@three-char-SHA-256: k7m]\naction = \"file_write\"\npath = \"a.txt\"\ncontent = <<'EOT_SHAM_k7m'\n  one\r\n\ntwo\nEOT_SHAM_k7m\n#!END_SHAM_k7m\n```\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].line, 3);
        assert_eq!(
            drafts[0].action,
            Some(Action::Write {
                path: "a.txt".into(),
                content: "  one\r\n\ntwo".into(),
                append: false
            })
        );
    }

    #[test]
    fn quoted_values_decode_their_four_escapes() {
        assert_eq!(quoted("\"a\\\"b\\\\c\\nd\\te\"").unwrap(), "a\"b\\c\nd\te");
        assert!(matches!(
            quoted("\"plain\"").unwrap(),
            Cow::Borrowed("plain")
        ));
        assert_eq!(quoted("\"C:\\Users\"").unwrap_err().0, 3);
        assert_eq!(quoted("\"open").unwrap_err().0, 0);
        assert!(quoted("\"a\" b").is_err());
        assert_eq!(quoted("\"a\"  // why").unwrap(), "a");
    }

    #[test]
    fn nesl_spelling_is_read_too() {
        let text = "#!nesl [@three-char-SHA-256: v7r]\naction = \"file_delete\"\npath = \"old.txt\"\n#!end_v7r\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        assert!(matches!(drafts[0].action, Some(Action::Delete { .. })));
    }

    #[test]
    fn a_broken_block_is_skipped_and_the_next_is_read() {
        let text = "#!SHAM [@three-char-SHA-256: aaa]\naction = \"file_write\"\npath = \"a\"\ncontent = <<'EOT_SHAM_aaa'\nx\n#!END_SHAM_aaa\n\n#!SHAM [@three-char-SHA-256: bbb]\naction = \"file_delete\"\npath = \"b\"\n#!END_SHAM_bbb\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, [(DiagnosticKind::UnterminatedHeredoc, 4)]);
        assert_eq!(drafts.len(), 2);
        assert!(drafts[0].action.is_none());
        assert!(drafts[1].action.is_some());
        assert_eq!(drafts[1].task.top, 2);
    }

    #[test]
    fn every_problem_of_a_block_is_reported_in_one_pass() {
        let text = "#!SHAM [@three-char-SHA-256: abc]\naction = \"file_replace_text\"\npath = \"a\"\npath = \"b\"\nold_text = unquoted\nthis is prose\n#!END_SHAM_abd\n";
        let (drafts, codes) = read(text);
        assert_eq!(
            codes,
            [
                (DiagnosticKind::MissingParameter, 2),
                (DiagnosticKind::DuplicateKey, 4),
                (DiagnosticKind::MalformedValue, 5),
                (DiagnosticKind::MalformedLine, 6),
                (DiagnosticKind::IdMismatch, 7),
            ]
        );
        assert!(drafts[0].action.is_none());
        assert!(
            parse(text)
                .diagnostics
                .iter()
                .all(|d| d.severity() == Severity::Invalid && d.hint.is_some())
        );
    }

    #[test]
    fn markers_of_other_blocks_inside_a_heredoc_are_content() {
        let text = "#!SHAM [@three-char-SHA-256: abc]\naction = \"file_write\"\npath = \"doc.md\"\ncontent = <<'EOT_SHAM_abc'\n#!SHAM [@three-char-SHA-256: xyz]\n#!END_SHAM_xyz\nEOT_SHAM_xyz\nEOT_SHAM_abc\n#!END_SHAM_abc\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        let Some(Action::Write { content, .. }) = &drafts[0].action else {
            panic!("{drafts:?}")
        };
        assert_eq!(
            content,
            "#!SHAM [@three-char-SHA-256: xyz]\n#!END_SHAM_xyz\nEOT_SHAM_xyz"
        );
    }

    #[test]
    fn an_unterminated_heredoc_at_the_end_resumes_at_the_next_opener() {
        let text = "#!SHAM [@three-char-SHA-256: abc]\naction = \"file_write\"\npath = \"a\"\ncontent = <<'EOT_SHAM_abc'\nx\n#!SHAM [@three-char-SHA-256: def]\naction = \"file_delete\"\npath = \"b\"\n#!END_SHAM_def\n";
        let (drafts, codes) = read(text);
        assert_eq!(
            codes,
            [
                (DiagnosticKind::UnterminatedHeredoc, 4),
                (DiagnosticKind::UnterminatedBlock, 6)
            ]
        );
        assert_eq!(drafts.len(), 2);
        assert!(matches!(drafts[1].action, Some(Action::Delete { .. })));
    }

    #[test]
    fn an_indented_opener_is_dropped_with_a_warning() {
        let parsed =
            parse("  #!SHAM [@three-char-SHA-256: abc]\naction = \"ls\"\n#!END_SHAM_abc\n");
        assert!(parsed.drafts.is_empty());
        assert_eq!(parsed.dropped.len(), 1);
        assert_eq!(parsed.diagnostics[0].kind, DiagnosticKind::IndentedMarker);
    }

    #[test]
    fn files_replace_all_text_is_a_group_of_searches() {
        let text = "#!SHAM [@three-char-SHA-256: abc]\naction = \"files_replace_all_text\"\npaths = <<'EOT_SHAM_abc'\na.rs\nb.rs\nEOT_SHAM_abc\nold_text = \"x\"\nnew_text = \"y\"\n#!END_SHAM_abc\n";
        let (drafts, codes) = read(text);
        assert_eq!(codes, []);
        let Some(Action::Block(children)) = &drafts[0].action else {
            panic!("{drafts:?}")
        };
        assert_eq!(children.len(), 2);
        assert_eq!(children[1].task.sub, Some(2));
    }

    #[test]
    fn shell_scripts_and_prose_are_not_blocks() {
        let text = "```sh\n#!/bin/sh\n#!SHAM is a format\necho hi <<'EOF'\nEOF\n```\n";
        let (drafts, _) = read(text);
        assert_eq!(drafts.len(), 0);
    }

    #[test]
    fn an_opener_without_an_id_is_an_invalid_block() {
        let (drafts, codes) = read("#!SHAM [@three-char-SHA-256: ]\naction = \"ls\"\n");
        assert_eq!(drafts.len(), 1);
        assert_eq!(codes, [(DiagnosticKind::MalformedLine, 1)]);
    }
}
