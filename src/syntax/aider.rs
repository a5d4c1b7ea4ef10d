//! The aider front end: SEARCH/REPLACE blocks (aider, Cline, Roo) as
//! drafts of the common plan (syntaxes.md §4; decisions in
//! doc/syntax-aider.md).
//!
//! Owns the reading of the format:
//!
//! ````text
//! src/app.py
//! ```python
//! <<<<<<< SEARCH
//! print("hi")
//! =======
//! print("hello")
//! >>>>>>> REPLACE
//! ```
//! ````
//!
//! Markers are 5 to 9 characters (`<<<<<<< SEARCH`, `=======`,
//! `>>>>>>> REPLACE`; Cline's `------- SEARCH` and `+++++++ REPLACE`). The
//! file path is the line just before the block, or before its opening
//! fence, as aider finds it (spaces allowed); a block after prose keeps the
//! previous block's path, and a block after a line that may be a path or
//! prose is refused, never applied to the previous block's file. Each block is one task: an EDIT of one hunk found as
//! `plan::Locate::Unique` finds it, or, with an empty SEARCH, a WRITE that
//! creates the file or appends to it.

use crate::csl::{DiagnosticKind, OpKind, TaskId};
use crate::plan::{Action, Draft, Hunk, Locate};

use super::detect::conflict_marker;
use super::lines::{Line, Lines};
use super::{LineCursor, Parsed, Syntax};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Search,
    Divider,
    Replace,
}

/// The marker `line` is: markers may be indented (aider strips lines),
/// with trailing spaces.
fn marker(line: &str) -> Option<Marker> {
    let t = line.trim();
    let first = *t.as_bytes().first()?;
    match first {
        b'<' | b'-' if conflict_marker(t, first, "SEARCH").is_some() => Some(Marker::Search),
        b'>' | b'+' if conflict_marker(t, first, "REPLACE").is_some() => Some(Marker::Replace),
        b'=' => {
            let n = t.bytes().take_while(|&b| b == b'=').count();
            ((5..=9).contains(&n) && n == t.len()).then_some(Marker::Divider)
        }
        _ => None,
    }
}

/// What the line before a block says about the block's file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PathLine {
    /// The file's path.
    Path(String),
    /// Prose, a blank line or nothing: the block keeps the previous
    /// block's path.
    Prose,
    /// A line that may be a path or prose (the line, trimmed): the block
    /// is refused rather than applied to the previous block's file.
    Unclear(String),
}

/// What a line just before a block (or before its fence) is, as aider
/// reads a path and more carefully: trimmed, without a trailing `:`,
/// leading `#`, surrounding backticks or asterisks (`\_` is `_`); also
/// Cline's `<path>…</path>`. aider takes any such line for a path; here
///
/// - a word without spaces is a path, unless it ends a sentence with
///   neither `.` nor `/` in it ("Sure:", "Done.");
/// - a line with spaces is a path when it is wrapped whole in backticks or
///   `<path>`, or ends in a file extension with no `: ` in it and at most
///   three words a name ("my notes.txt"); it is prose
///   when it ends a sentence (`:` `.` `!` `?` `,` `;`) and names no file
///   ("Here is the change:");
/// - anything else with spaces ("Now the notes", "Update `a.py`:") is
///   unclear.
fn path_line(line: &str) -> PathLine {
    let t = line.trim();
    if t.is_empty() || t == "..." {
        return PathLine::Prose;
    }
    let unclear = || PathLine::Unclear(t.to_string());
    let (mut name, mut marked) = match t
        .strip_prefix("<path>")
        .and_then(|r| r.strip_suffix("</path>"))
    {
        Some(inner) => (inner.trim(), true),
        None => (t, false),
    };
    let mut colon = name.ends_with(':');
    name = name.trim_end_matches(':').trim_start_matches('#').trim();
    marked |= name.len() > 2 && name.starts_with('`') && name.ends_with('`');
    name = name.trim_matches('`').trim_matches('*').trim();
    // "**Sure:**": the colon inside the emphasis.
    colon |= name.ends_with(':');
    name = name.trim_end_matches(':').trim_end();
    if name.is_empty() {
        return PathLine::Prose;
    }
    let path = || PathLine::Path(name.replace("\\_", "_"));
    let sentence = colon || name.ends_with(['.', '!', '?', ',', ';']);
    if !name.contains(char::is_whitespace) {
        let bare = name.trim_end_matches(['.', '!', '?', ',', ';']);
        return if sentence && !bare.contains(['.', '/']) {
            PathLine::Prose
        } else {
            path()
        };
    }
    if marked && !name.contains(['`', '*']) {
        return path();
    }
    // A word that names a file (`a.py`, `src/x`), or code, in a sentence.
    let names_file = name.contains(['`', '/']) || name.split_whitespace().any(has_inner_dot);
    if sentence {
        return if names_file {
            unclear()
        } else {
            PathLine::Prose
        };
    }
    // "File: a.py" is a label, and a name of more than three words is
    // more likely a sentence ("Create the file notes.txt") than a file.
    let wordy = name
        .split('/')
        .any(|part| part.split_whitespace().count() > 3);
    if !name.contains(['`', '*']) && !name.contains(": ") && !wordy && has_extension(name) {
        return path();
    }
    unclear()
}

/// Whether a word has a `.` between two letters or digits (`a.py`, `e.g`).
fn has_inner_dot(word: &str) -> bool {
    let b = word.as_bytes();
    (1..b.len().saturating_sub(1)).any(|i| {
        b[i] == b'.' && b[i - 1].is_ascii_alphanumeric() && b[i + 1].is_ascii_alphanumeric()
    })
}

/// Whether the last name of `path` ends in an extension: `.` then 1 to 10
/// letters or digits, after a character of the name.
fn has_extension(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && !stem.ends_with(char::is_whitespace)
                && (1..=10).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// What the lines before a block's SEARCH marker (nearest last) say about
/// its file: the nearest line that is not a fence, looking past fence
/// lines only (aider's `find_filename`, three lines back).
fn path_before(before: &[&str]) -> PathLine {
    for line in before.iter().rev().take(3) {
        if !line.trim_start().starts_with("```") {
            return path_line(line);
        }
    }
    PathLine::Prose
}

/// The path a block inherits from the blocks before it.
#[derive(Debug, Clone)]
enum Carried {
    None,
    Path(String),
    /// The last path line was unclear (its block's line): no later block
    /// may take an older path instead.
    Unclear(u32),
}

/// Where the reader is; a block's lines are borrowed from the reply until
/// the block is complete.
#[derive(Debug)]
enum State<'t> {
    Outside,
    Search(Vec<&'t str>),
    Replace(Vec<&'t str>, Vec<&'t str>),
}

struct Block {
    task: TaskId,
    line: u32,
    path: Option<String>,
    /// Why it has no path although a line may have named one: the line
    /// before it, or an earlier block's, was unclear.
    unclear: Option<String>,
    /// Why it cannot run, with lines (also diagnostics).
    reasons: Vec<(u32, String)>,
}

struct Reader<'t> {
    /// The reply's lines, for diagnostics: asked in order, read once.
    lines: LineCursor<'t>,
    diagnostics: crate::csl::Diagnostics,
    drafts: Vec<Draft<'t>>,
    /// The path the last block named: a block without one keeps it.
    current: Carried,
    block: Option<Block>,
    /// The last three lines, for a block's path.
    recent: [&'t str; 3],
}

/// Reads an aider reply.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut r = Reader {
        lines: LineCursor::new(text),
        diagnostics: crate::csl::Diagnostics::new(),
        drafts: Vec::new(),
        current: Carried::None,
        block: None,
        recent: [""; 3],
    };
    let mut state = State::Outside;
    let mut last = 0;
    for line in Lines::new(text) {
        last = line.no;
        state = r.line(state, &line);
        r.recent = [r.recent[1], r.recent[2], line.text];
    }
    if !matches!(state, State::Outside) {
        r.unterminated(last, &state, None);
    }
    Parsed::read(Syntax::Aider, text, r.drafts, r.diagnostics)
}

impl<'t> Reader<'t> {
    fn line(&mut self, state: State<'t>, line: &Line<'t>) -> State<'t> {
        match (state, marker(line.text)) {
            (State::Outside, Some(Marker::Search)) => self.open(line),
            (State::Outside, Some(Marker::Replace)) => {
                let mut d = super::warning(
                    &self.lines,
                    line.no,
                    DiagnosticKind::StrayMarker,
                    "a REPLACE marker outside a block is ignored".to_string(),
                    Some(
                        "a block is SEARCH marker, the lines to find, =======, the new lines, REPLACE marker"
                            .to_string(),
                    ),
                );
                d.task = None;
                self.diagnostics.push(d);
                State::Outside
            }
            // A divider in prose is a Markdown heading's underline.
            (State::Outside, _) => State::Outside,
            (State::Search(old), Some(Marker::Divider)) => State::Replace(old, Vec::new()),
            (State::Search(_), Some(Marker::Replace)) => {
                self.fault(
                    line.no,
                    DiagnosticKind::MalformedBlock,
                    "the REPLACE marker comes before the ======= line: the block has no replacement part".to_string(),
                    "write the lines to find, then a line =======, then the new lines, then >>>>>>> REPLACE",
                );
                self.close();
                State::Outside
            }
            (state @ (State::Search(_) | State::Replace(..)), Some(Marker::Search)) => {
                self.unterminated(line.no, &state, Some(line.no));
                self.open(line)
            }
            (State::Search(mut old), _) => {
                old.push(line.text);
                State::Search(old)
            }
            (State::Replace(old, new), Some(Marker::Replace)) => {
                self.complete(old, new);
                State::Outside
            }
            (State::Replace(old, mut new), _) => {
                new.push(line.text);
                State::Replace(old, new)
            }
        }
    }

    fn open(&mut self, line: &Line<'t>) -> State<'t> {
        let task = TaskId {
            top: self.drafts.len() as u32 + 1,
            sub: None,
        };
        let (path, unclear) = match (path_before(&self.recent), &self.current) {
            (PathLine::Path(p), _) => {
                self.current = Carried::Path(p.clone());
                (Some(p), None)
            }
            (PathLine::Prose, Carried::Path(p)) => (Some(p.clone()), None),
            (PathLine::Prose, Carried::None) => (None, None),
            (PathLine::Prose, Carried::Unclear(at)) => (
                None,
                Some(format!(
                    "the block has no path line of its own and the one before it (line {at}) was unclear, so the block was not applied (to no older file either): write the file's path alone on the line before the block's fence"
                )),
            ),
            (PathLine::Unclear(text), _) => {
                self.current = Carried::Unclear(line.no);
                (
                    None,
                    Some(format!(
                        "the line before the block, `{text}`, may be the file's path or prose, so the block was not applied (to no other file either): write the path alone on the line before the block's fence, with a blank line after any prose"
                    )),
                )
            }
        };
        self.block = Some(Block {
            task,
            line: line.no,
            path,
            unclear,
            reasons: Vec::new(),
        });
        // The task's number is taken even if the block turns out broken.
        let mut placeholder = Draft::invalid(task, line.no, OpKind::Edit, String::new());
        placeholder.invalid.clear();
        self.drafts.push(placeholder);
        State::Search(Vec::new())
    }

    fn complete(&mut self, old: Vec<&'t str>, new: Vec<&'t str>) {
        let Some((line, path, unclear)) = self
            .block
            .as_ref()
            .map(|b| (b.line, b.path.clone(), b.unclear.clone()))
        else {
            return;
        };
        if let Some(why) = unclear {
            self.fault(
                line,
                DiagnosticKind::MalformedBlock,
                why,
                "write the file's path alone on the line just before the block's opening fence (a path with spaces as it is: my notes.txt), and leave a blank line between prose and the block",
            );
            self.close();
            return;
        }
        let Some(path) = path else {
            self.fault(
                line,
                DiagnosticKind::MalformedBlock,
                "the block names no file: no path on the line before it (or before its fence), and no block before it named one".to_string(),
                "write the file's path alone on the line just before the block's opening fence (or before <<<<<<< SEARCH)",
            );
            self.close();
            return;
        };
        let Some(block) = self.block.take() else {
            return;
        };
        let draft = if old.iter().all(|l| l.trim().is_empty()) {
            // aider's rule: an empty SEARCH creates the file, or appends
            // to it when it exists.
            let content = crate::plan::joined(&new);
            Draft::new(
                block.task,
                block.line,
                OpKind::Write,
                Action::Write {
                    path,
                    content: content.into(),
                    append: true,
                },
            )
        } else {
            Draft::new(
                block.task,
                block.line,
                OpKind::Edit,
                Action::Edit {
                    path,
                    hunks: vec![Hunk::of_lines(&old, &new)],
                    locate: Locate::Unique,
                    final_newline: None,
                },
            )
        };
        self.place(draft);
    }

    /// The block open at `line` was not finished (`next`: the line of the
    /// block that interrupts it; `None`: the reply ends).
    fn unterminated(&mut self, line: u32, state: &State<'t>, next: Option<u32>) {
        let missing = match state {
            State::Search(_) => "======= line and no REPLACE marker",
            _ => "REPLACE marker",
        };
        let opened = self.block.as_ref().map_or(line, |b| b.line);
        let message = match next {
            Some(n) => format!(
                "the block of line {opened} has no {missing} before the next block (line {n}), so it was not applied"
            ),
            None => format!(
                "the block has no {missing}: the reply ends inside it, so it was not applied"
            ),
        };
        self.fault(
            opened,
            DiagnosticKind::UnterminatedBlock,
            message,
            "end every block with >>>>>>> REPLACE on a line of its own",
        );
        self.close();
    }

    /// Ends the current block as skipped.
    fn close(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        let index = block.task.top as usize - 1;
        let mut reasons = block.reasons;
        // Grown by push, the list has room for four; every broken block
        // keeps its list, with one or two in it.
        reasons.shrink_to_fit();
        let mut draft = Draft::invalid(block.task, block.line, OpKind::Edit, String::new());
        draft.invalid = if reasons.is_empty() {
            vec![(block.line, "the block is incomplete".to_string())]
        } else {
            reasons
        };
        draft.target = block.path;
        if let Some(slot) = self.drafts.get_mut(index) {
            *slot = draft;
        }
    }

    fn place(&mut self, draft: Draft<'t>) {
        let index = draft.task.top as usize - 1;
        if let Some(slot) = self.drafts.get_mut(index) {
            *slot = draft;
        }
    }

    fn fault(&mut self, line: u32, kind: DiagnosticKind, message: String, hint: &str) {
        let mut d = super::warning(&self.lines, line, kind, message, Some(hint.to_string()));
        if let Some(block) = &mut self.block {
            d.task = Some(block.task);
            d.operation = Some(OpKind::Edit);
            let why = self.diagnostics.reason(line, kind, || d.message.clone());
            block.reasons.push((line, why));
        }
        self.diagnostics.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csl::Delimiters;
    use crate::syntax::Choice;

    fn drafts(text: &str) -> Vec<(u32, Option<String>, Option<Action<'_>>)> {
        parse(text)
            .drafts
            .into_iter()
            .map(|d| (d.task.top, d.target, d.action))
            .collect()
    }

    fn edit(path: &str, old: &[&str], new: &[&str]) -> Action<'static> {
        Action::Edit {
            path: path.into(),
            hunks: vec![Hunk::of_lines(old, new)],
            locate: Locate::Unique,
            final_newline: None,
        }
    }

    #[test]
    fn the_path_is_before_the_fence_and_carries_to_the_next_block() {
        let text = "Change it:\n\nsrc/app.py\n```python\n<<<<<<< SEARCH\nprint(\"hi\")\n=======\nprint(\"hello\")\n>>>>>>> REPLACE\n```\n\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n";
        let got: Vec<Option<Action>> = drafts(text).into_iter().map(|d| d.2).collect();
        assert_eq!(
            got,
            [
                Some(edit(
                    "src/app.py",
                    &["print(\"hi\")"],
                    &["print(\"hello\")"]
                )),
                Some(edit("src/app.py", &["x = 1"], &["x = 2"])),
            ]
        );
    }

    #[test]
    fn path_lines_as_models_decorate_them() {
        let path = |p: &str| PathLine::Path(p.to_string());
        for (line, want) in [
            ("**src/a.py**", path("src/a.py")),
            ("`src/a.py`:", path("src/a.py")),
            ("# src/my\\_file.py", path("src/my_file.py")),
            ("<path>src/a.py</path>", path("src/a.py")),
            ("Makefile", path("Makefile")),
            ("Here is the change:", PathLine::Prose),
            ("Sure:", PathLine::Prose),
            ("**Sure:**", PathLine::Prose),
            ("Done.", PathLine::Prose),
            ("", PathLine::Prose),
        ] {
            assert_eq!(path_line(line), want, "{line:?}");
        }
    }

    #[test]
    fn a_path_with_spaces_is_a_path_and_an_unclear_line_is_said_so() {
        let path = |p: &str| PathLine::Path(p.to_string());
        let unclear = |p: &str| PathLine::Unclear(p.to_string());
        for (line, want) in [
            ("my notes.txt", path("my notes.txt")),
            ("docs/release notes.md", path("docs/release notes.md")),
            // With spaces, a colon may end a sentence that names a file.
            ("docs/release notes.md:", unclear("docs/release notes.md:")),
            ("`My Project/Makefile`", path("My Project/Makefile")),
            ("<path>my notes.txt</path>", path("my notes.txt")),
            ("Sure, here is the fix for the parser:", PathLine::Prose),
            ("This keeps the old behaviour.", PathLine::Prose),
            ("Now the notes again", unclear("Now the notes again")),
            ("Update `src/app.py`:", unclear("Update `src/app.py`:")),
            ("Changes to notes.txt:", unclear("Changes to notes.txt:")),
            ("File: src/app.py", unclear("File: src/app.py")),
            (
                "Create the file src/new.py",
                unclear("Create the file src/new.py"),
            ),
            ("src/My Old Notes.txt", path("src/My Old Notes.txt")),
            (
                "Here is the updated code for `app.py`",
                unclear("Here is the updated code for `app.py`"),
            ),
        ] {
            assert_eq!(path_line(line), want, "{line:?}");
        }
    }

    #[test]
    fn a_block_after_an_unclear_line_is_refused_and_so_are_blocks_that_would_inherit_it() {
        let block = "```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n";
        let text = format!(
            "a.py\n{block}\nHere is the change:\n{block}\nmy notes.txt\n{block}\nNow the notes again\n{block}\n{block}"
        );
        let parsed = parse(&text);
        let targets: Vec<Option<String>> = parsed
            .drafts
            .iter()
            .map(|d| {
                d.action.as_ref().and_then(|a| match a {
                    Action::Edit { path, .. } => Some(path.clone()),
                    _ => None,
                })
            })
            .collect();
        let some = |p: &str| Some(p.to_string());
        assert_eq!(
            targets,
            [some("a.py"), some("a.py"), some("my notes.txt"), None, None]
        );
        let messages: Vec<&str> = parsed
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert!(
            messages[0].contains("`Now the notes again`, may be the file's path or prose"),
            "{messages:?}"
        );
        assert!(messages[1].contains("was unclear"), "{messages:?}");
        assert!(
            parsed
                .diagnostics
                .iter()
                .all(|d| d.kind.code() == "malformed_block")
        );
    }

    #[test]
    fn cline_blocks_take_a_path_with_spaces_too() {
        let text = "<path>my notes.txt</path>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n";
        assert_eq!(
            drafts(text),
            [(1, None, Some(edit("my notes.txt", &["x"], &["y"])))]
        );
    }

    #[test]
    fn cline_markers_and_an_empty_search_that_creates() {
        let text = "notes.txt\n------- SEARCH\n=======\nfirst line\n+++++++ REPLACE\n";
        assert_eq!(
            drafts(text),
            [(
                1,
                None,
                Some(Action::Write {
                    path: "notes.txt".into(),
                    content: "first line\n".into(),
                    append: true,
                })
            )]
        );
    }

    #[test]
    fn broken_blocks_are_skipped_with_their_reasons_and_the_next_applies() {
        let text = "a.py\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n\nb.py\n<<<<<<< SEARCH\ny\n=======\nz\n\nc.py\n<<<<<<< SEARCH\nq\n=======\nr\n>>>>>>> REPLACE\n";
        let parsed = parse(text);
        let codes: Vec<&str> = parsed.diagnostics.iter().map(|d| d.kind.code()).collect();
        assert_eq!(codes, ["malformed_block", "unterminated_block"]);
        let ok: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(ok, [false, false, true]);
        assert!(
            parsed
                .drafts
                .iter()
                .all(|d| d.action.is_some() || !d.invalid.is_empty())
        );
        // b.py's block runs into c.py's: c.py's path line is taken as b's
        // replacement text, so c.py's block keeps the path b.py named.
        assert_eq!(parsed.drafts[2].target, None);
    }

    #[test]
    fn a_block_with_no_path_anywhere_is_refused() {
        let parsed = parse("Sure:\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n");
        assert!(parsed.drafts[0].action.is_none());
        assert_eq!(parsed.diagnostics[0].kind.code(), "malformed_block");
    }

    #[test]
    fn markdown_rules_and_git_conflicts_are_not_blocks() {
        let delims = Delimiters::default();
        for prose in [
            "Title\n=======\n\nText.\n",
            "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> main\n",
        ] {
            let parsed = crate::syntax::parse(prose.as_bytes(), Choice::Auto, &delims);
            assert_ne!(parsed.syntax, Syntax::Aider, "{prose}");
            assert!(parse(prose).drafts.is_empty(), "{prose}");
        }
    }

    proptest::proptest! {
        /// Any line before a block reads as a path, prose or unclear
        /// without a panic, and a path is never empty or a fence.
        #[test]
        fn any_path_line_is_read_without_panic(line in "[ `*#:<>/a-z.\\\\_é]{0,24}") {
            if let PathLine::Path(p) = path_line(&line) {
                proptest::prop_assert!(!p.is_empty() && !p.starts_with("```"), "{:?}", p);
            }
        }
    }

    #[test]
    fn every_prefix_parses_without_panic_and_numbers_run_in_order() {
        let text = "a.py\n```py\n<<<<<<< SEARCH\nx\n=======\n=======\ny\n>>>>>>> REPLACE\n```\n>>>>>>> REPLACE\n<<<<<<< SEARCH\né\r\n<<<<<<< SEARCH\n=======\n";
        crate::syntax::every_prefix_parses(text, parse, |_, _| {});
    }
}
