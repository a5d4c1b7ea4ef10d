//! Reply syntaxes: which one a reply is written in, and the front ends
//! that turn each into drafts of the common plan (syntaxes.md).
//!
//! Owns the front-end interface: [`parse`] takes a reply's bytes and gives
//! a [`Parsed`] — the syntax, the drafts in document order, every
//! diagnostic (with a stable code), and the blocks it found but does not
//! apply ([`Dropped`]: another syntax's blocks, markers off column 1).
//! `plan` then checks paths and values the same way for every syntax.
//! A front end does no I/O and knows nothing about git.
//!
//! Front ends: `csl` (over [`crate::csl`]), `cml`, `sham` and `telt`
//! (over the shared action vocabulary in `actions`), `replacer`, `aider`,
//! `diff`, `patch` and `json`: every syntax detection recognises.

pub mod actions;
mod ahead;
pub mod aider;
pub mod cml;
pub mod csl;
pub mod detect;
pub mod diff;
pub mod json;
mod line_cursor;
pub mod lines;
pub mod patch;
pub mod replacer;
pub mod sham;
pub mod telt;

use std::borrow::Cow;

use crate::csl::{
    Delimiters, Diagnostic, DiagnosticKind, Diagnostics, OpKind, Reply, Span, TaskId,
};
use crate::plan::Draft;
pub use line_cursor::LineCursor;

/// A syntax a reply can be written in (syntaxes.md §2 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Syntax {
    Csl,
    Cml,
    Sham,
    Telt,
    Replacer,
    Aider,
    Patch,
    Diff,
    Json,
}

impl Syntax {
    /// In the order detection prefers them on a tie of everything else.
    pub const ALL: [Syntax; 9] = [
        Syntax::Csl,
        Syntax::Cml,
        Syntax::Sham,
        Syntax::Telt,
        Syntax::Replacer,
        Syntax::Aider,
        Syntax::Patch,
        Syntax::Diff,
        Syntax::Json,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Syntax::Csl => "csl",
            Syntax::Cml => "cml",
            Syntax::Sham => "sham",
            Syntax::Telt => "telt",
            Syntax::Replacer => "replacer",
            Syntax::Aider => "aider",
            Syntax::Patch => "patch",
            Syntax::Diff => "diff",
            Syntax::Json => "json",
        }
    }

    /// How a person calls it in a sentence.
    pub fn title(self) -> &'static str {
        match self {
            Syntax::Csl => "CSL",
            Syntax::Cml => "CML",
            Syntax::Sham => "SHAM",
            Syntax::Telt => "TELT",
            Syntax::Replacer => "replacer",
            Syntax::Aider => "aider SEARCH/REPLACE",
            Syntax::Patch => "apply_patch",
            Syntax::Diff => "unified diff",
            Syntax::Json => "JSON",
        }
    }

    /// Its words for what a hint asks a reply to write.
    pub fn vocab(self) -> &'static crate::vocab::Vocab {
        use crate::vocab;
        match self {
            Syntax::Csl => &vocab::CSL,
            Syntax::Cml => &vocab::CML,
            Syntax::Sham => &vocab::SHAM,
            Syntax::Telt => &vocab::TELT,
            Syntax::Replacer => &vocab::REPLACER,
            Syntax::Aider => &vocab::AIDER,
            Syntax::Patch => &vocab::PATCH,
            Syntax::Diff => &vocab::DIFF,
            Syntax::Json => &vocab::JSON,
        }
    }

    /// Its title after "a" or "an": "an apply_patch", "a unified diff".
    pub fn with_article(self) -> String {
        let title = self.title();
        let article = if title.starts_with(['a', 'e', 'i', 'o', 'A', 'E', 'I', 'O']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {title}")
    }

    pub fn from_name(name: &str) -> Option<Syntax> {
        Syntax::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the syntax's own prompts ask for absolute paths (SHAM, the
    /// replacer): then one inside the repository is taken relative to it
    /// (syntaxes.md §1).
    pub fn takes_absolute_paths(self) -> bool {
        matches!(self, Syntax::Sham | Syntax::Replacer)
    }

    /// `csl, cml, …`: the names of the syntaxes this version reads (every
    /// one detection recognises).
    pub fn read_names() -> String {
        Syntax::ALL.map(Syntax::name).join(", ")
    }
}

impl std::fmt::Display for Syntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `--syntax`: detect, or read only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    #[default]
    Auto,
    Only(Syntax),
}

impl Choice {
    /// `auto` or a syntax name.
    pub fn from_name(name: &str) -> Option<Choice> {
        match name {
            "auto" => Some(Choice::Auto),
            _ => Syntax::from_name(name).map(Choice::Only),
        }
    }
}

/// Something in the reply that looks like an operation but is not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub line: u32,
    /// The operation it would have been, as far as known (TASKS for a
    /// whole block of another syntax).
    pub kind: OpKind,
    /// Why; its words are made when a report needs them, not kept for
    /// every one of the blocks a reply may drop.
    pub why: Why,
}

/// Why a [`Dropped`] block is not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// A block of syntax `block` in a reply read as `reply`.
    Foreign { block: Syntax, reply: Syntax },
    /// A block opener of this syntax (SHAM, TELT) off column 1.
    IndentedOpener(Syntax),
    /// A CSL start marker off column 1 (of the dropped operation's kind).
    IndentedMarker,
    /// An apply_patch file section outside `*** Begin Patch` … `*** End
    /// Patch`.
    SectionOutsidePatch,
    /// apply_patch lines in no file section.
    OutsideSections,
}

impl Dropped {
    /// What it is, for the report: "a SHAM block".
    pub fn what(&self) -> String {
        match self.why {
            Why::Foreign { block, .. } => format!("{} block", block.with_article()),
            Why::IndentedOpener(syntax) => format!("an indented {} block", syntax.title()),
            Why::IndentedMarker => format!("an indented {} marker", self.kind.name()),
            Why::SectionOutsidePatch => "a file section outside a patch".to_string(),
            Why::OutsideSections => "lines outside any file section".to_string(),
        }
    }

    /// Why it was not applied.
    pub fn reason(&self) -> String {
        match self.why {
            Why::Foreign { block, reply } => format!(
                "this reply is read as {} (one syntax per reply), so this {} block was not applied",
                reply.title(),
                block.title()
            ),
            Why::IndentedOpener(syntax) => format!(
                "a {} opener must start at column 1; this block was not applied",
                syntax.title()
            ),
            Why::IndentedMarker => format!(
                "markers must start at column 1; this {} was not applied",
                self.kind.name()
            ),
            Why::SectionOutsidePatch => {
                "it is not between *** Begin Patch and *** End Patch, so it was not applied"
                    .to_string()
            }
            Why::OutsideSections => "no *** Add File, *** Delete File or *** Update File line comes before them, so they were not applied".to_string(),
        }
    }
}

/// A reply read by its front end.
#[derive(Debug)]
pub struct Parsed<'a> {
    pub syntax: Syntax,
    /// The text the diagnostics' offsets refer to.
    pub source: Cow<'a, str>,
    /// In document order; empty when there is a fatal error.
    pub drafts: Vec<Draft<'a>>,
    /// Every problem, sorted by line: the first [`crate::csl::sink::MAX_KEPT`]
    /// kept, all counted.
    pub diagnostics: Diagnostics,
    /// Blocks that are not applied (each is also a warning).
    pub dropped: Vec<Dropped>,
    /// The CSL tree, for `parse --format json` of a CSL reply.
    pub csl: Option<Reply<'a>>,
    /// Why the reply makes an edit, where its syntax says (a replacer
    /// `<<<EXPLANATION>>>`): shown in the report with its task.
    pub explanations: Vec<Explanation>,
}

/// A reply's own words on why a task is made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    #[serde(serialize_with = "task_name")]
    pub task: TaskId,
    pub text: String,
}

fn task_name<S: serde::Serializer>(task: &TaskId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(task)
}

impl<'a> Parsed<'a> {
    /// What a front end other than CSL's read from `text`: its drafts and
    /// diagnostics (finished here), nothing dropped and no explanations (a
    /// front end that has them sets them).
    pub fn read(
        syntax: Syntax,
        text: &'a str,
        drafts: Vec<Draft<'a>>,
        mut diagnostics: Diagnostics,
    ) -> Parsed<'a> {
        diagnostics.finish();
        Parsed {
            syntax,
            source: Cow::Borrowed(text),
            drafts,
            diagnostics,
            dropped: Vec::new(),
            csl: None,
            explanations: Vec::new(),
        }
    }
}

impl Parsed<'_> {
    /// Whether any diagnostic, shown or not, is fatal.
    pub fn has_fatal(&self) -> bool {
        self.diagnostics.has_fatal()
    }

    /// Whether any operation, top level or in a block, runs commands.
    pub fn has_run(&self) -> bool {
        if let Some(reply) = &self.csl {
            return reply.has_run();
        }
        fn any(drafts: &[Draft]) -> bool {
            drafts.iter().any(|d| match &d.action {
                Some(crate::plan::Action::Run { .. }) => true,
                Some(crate::plan::Action::Block(inner)) => any(inner),
                _ => d.kind == OpKind::Run,
            })
        }
        any(&self.drafts)
    }

    /// Whether the reply asks for nothing at all: no operation, valid or
    /// not, and nothing dropped.
    pub fn is_empty(&self) -> bool {
        let no_operations = match &self.csl {
            Some(reply) => reply.operations.is_empty(),
            None => self.drafts.is_empty(),
        };
        no_operations && self.dropped.is_empty() && !self.has_fatal()
    }

    /// Every diagnostic by severity, shown or not.
    pub fn counts(&self) -> crate::csl::Counts {
        self.diagnostics.counts()
    }
}

/// Reads a reply's bytes (already within the size limit) in the syntax
/// `choice` names or, for `auto`, the one detection picks.
pub fn parse<'a>(bytes: &'a [u8], choice: Choice, delims: &Delimiters) -> Parsed<'a> {
    parse_as(bytes, choice, delims, true)
}

/// [`parse`] for `git clada parse`, which shows a CSL reply's tree and
/// never plans it: a CSL reply gets no drafts (they would copy every
/// content of a 20 MB reply once more for nothing).
pub fn check<'a>(bytes: &'a [u8], choice: Choice, delims: &Delimiters) -> Parsed<'a> {
    parse_as(bytes, choice, delims, false)
}

fn parse_as<'a>(bytes: &'a [u8], choice: Choice, delims: &Delimiters, plan: bool) -> Parsed<'a> {
    let decoded = crate::csl::input::decode(bytes);
    if decoded.diagnostic.is_some() {
        // Invalid UTF-8 is fatal whatever the syntax; CSL's parse reports
        // it with every other problem.
        return from_csl(crate::csl::parse_bytes(bytes, delims), delims, plan);
    }
    let text: &'a str = match decoded.text {
        Cow::Borrowed(text) => text,
        // Only invalid UTF-8 makes an owned text, handled above.
        Cow::Owned(_) => unreachable!("decode borrows valid UTF-8"),
    };
    let blocks = detect::blocks(text, delims);
    let syntax = match choice {
        Choice::Only(syntax) => syntax,
        Choice::Auto => detect::choose(&blocks).unwrap_or_else(|| {
            if json::looks_like_json(text) {
                Syntax::Json
            } else {
                Syntax::Csl
            }
        }),
    };
    // Blocks of the other syntaxes are not applied: say where they are.
    let foreign: Vec<detect::Block> = blocks
        .iter()
        .filter(|b| b.syntax != syntax && syntax != Syntax::Json)
        .copied()
        .collect();
    let mut parsed = match syntax {
        Syntax::Csl => from_csl(crate::csl::parse(text, delims), delims, plan),
        Syntax::Json => json::parse(text),
        Syntax::Replacer => replacer::parse(text),
        Syntax::Aider => aider::parse(text),
        Syntax::Diff => diff::parse(text),
        Syntax::Cml => cml::parse(text),
        Syntax::Sham => sham::parse(text),
        Syntax::Telt => telt::parse(text),
        Syntax::Patch => patch::parse(text),
    };
    // Every front end's source is `text` itself (borrowed): one cursor
    // for the foreign blocks, asked in the order they come.
    let lines = LineCursor::new(text);
    for block in foreign {
        let dropped = Dropped {
            line: block.line,
            kind: foreign_kind(&lines, &block, delims),
            why: Why::Foreign {
                block: block.syntax,
                reply: syntax,
            },
        };
        let what = dropped.what();
        parsed.diagnostics.push(warning(
            &lines,
            block.line,
            DiagnosticKind::ForeignBlock,
            format!("{what} in {} reply is not applied", syntax.with_article()),
            Some(format!(
                "write every operation of one reply in one syntax; send this one again as {}, or apply it on its own (--syntax {})",
                syntax.title(),
                block.syntax.name()
            )),
        ));
        parsed.dropped.push(dropped);
    }
    parsed.dropped.sort_by_key(|d| d.line);
    parsed.diagnostics.finish();
    parsed
}

/// The operation a block of another syntax would have been, for its SKIP
/// line: a CSL block's marker names it (`<---WRITE …` is a WRITE); a
/// block of the other syntaxes may hold several, so it is a TASKS.
fn foreign_kind(lines: &LineCursor<'_>, block: &detect::Block, delims: &Delimiters) -> OpKind {
    if block.syntax != Syntax::Csl {
        return OpKind::Tasks;
    }
    let start = lines.start(block.line);
    let line = lines.text()[start..].lines().next().unwrap_or("");
    crate::csl::marker_name(line, delims)
        .and_then(|(name, _)| OpKind::CSL.into_iter().find(|k| k.name() == name))
        .unwrap_or(OpKind::Tasks)
}

/// A CSL reply; `plan`: with its drafts.
fn from_csl<'a>(reply: Reply<'a>, delims: &Delimiters, plan: bool) -> Parsed<'a> {
    let fatal = reply.has_fatal();
    Parsed {
        syntax: Syntax::Csl,
        drafts: if fatal || !plan {
            Vec::new()
        } else {
            csl::drafts(&reply, delims)
        },
        diagnostics: reply.diagnostics.clone(),
        source: reply.source.clone(),
        dropped: csl::dropped(&reply),
        csl: Some(reply),
        explanations: Vec::new(),
    }
}

/// A diagnostic on the whole of line `line` (1-based) of the text `lines`
/// counts in (the parse's own cursor: its questions come in order).
pub fn warning(
    lines: &LineCursor<'_>,
    line: u32,
    kind: DiagnosticKind,
    message: String,
    hint: Option<String>,
) -> Diagnostic {
    let text = lines.text();
    let line_start = lines.start(line);
    let end = text[line_start..]
        .find(['\n', '\r'])
        .map_or(text.len(), |n| line_start + n);
    Diagnostic {
        kind,
        line,
        column: 1,
        line_start,
        span: Span::new(line_start, end),
        message,
        hint,
        operation: None,
        task: None,
    }
}

/// `git clada parse --format json`: the syntax, the operations, the
/// diagnostics kept and how many more there are. A CSL reply's operations
/// are its syntax tree (csl.md §7); any other reply's are the operation
/// list of the `json` syntax. Either is valid `json` input, so parse and
/// apply round-trip.
impl serde::Serialize for Parsed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("syntax", self.syntax.name())?;
        match &self.csl {
            Some(reply) => map.serialize_entry("operations", &reply.operations)?,
            None => {
                let ops: Vec<json::OpForm<'_>> = self.drafts.iter().map(json::OpForm).collect();
                map.serialize_entry("operations", &ops)?;
            }
        }
        map.serialize_entry("diagnostics", &self.diagnostics)?;
        map.serialize_entry("diagnostics_omitted", &self.diagnostics.omitted().total())?;
        map.end()
    }
}

/// For the front ends' tests: parses every prefix of `text` (at character
/// boundaries) with `parse`, and checks that nothing panics, that tasks
/// are numbered 1..=n in order, and that every draft has an action or a
/// reason it has none; `also` checks more of each prefix's result (the
/// prefix's length given).
#[cfg(test)]
pub(crate) fn every_prefix_parses(
    text: &str,
    parse: fn(&str) -> Parsed<'_>,
    also: impl Fn(&Parsed<'_>, usize),
) {
    for end in (0..=text.len()).filter(|&n| text.is_char_boundary(n)) {
        let parsed = parse(&text[..end]);
        for (i, d) in parsed.drafts.iter().enumerate() {
            assert_eq!(d.task.top as usize, i + 1);
            assert!(d.action.is_some() || !d.invalid.is_empty(), "{d:?}");
        }
        also(&parsed, end);
    }
}

/// A reply of more problems than a parse keeps (`csl::sink`): what is
/// dropped is only the diagnostics' text, never what they decide.
#[cfg(test)]
mod capped {
    use super::{Choice, Syntax, parse};
    use crate::csl::sink::MAX_KEPT;
    use crate::csl::{Counts, Delimiters, Severity};

    #[test]
    fn a_fatal_error_past_the_cap_still_stops_everything() {
        // Warnings first by position, then the only fatal error.
        let reply = format!(
            "{}<---WRITE file=\"a\"--->\nx\n",
            "  <---WRITE file=\"a\"--->\n".repeat(MAX_KEPT + 10)
        );
        let parsed = parse(reply.as_bytes(), Choice::Auto, &Delimiters::default());
        assert_eq!(parsed.diagnostics.len(), MAX_KEPT);
        assert!(
            parsed
                .diagnostics
                .iter()
                .all(|d| d.severity() == Severity::Warning)
        );
        assert!(parsed.has_fatal());
        assert!(parsed.drafts.is_empty());
        assert_eq!(
            parsed.counts(),
            Counts {
                fatal: 1,
                invalid: 0,
                warning: MAX_KEPT + 10
            }
        );
        assert_eq!(parsed.diagnostics.omitted().total(), 11);
    }

    #[test]
    fn the_first_by_position_are_kept_and_every_one_is_counted() {
        // Unclosed SHAM blocks, each cut short by the next: two invalid
        // diagnostics each, pushed out of line order: the missing closing
        // line (on the next opener), then the unknown action.
        let n = MAX_KEPT * 3;
        let reply = "#!SHAM [@three-char-SHA-256: k7m]\naction = \"nope\"\n".repeat(n);
        let parsed = parse(
            reply.as_bytes(),
            Choice::Only(Syntax::Sham),
            &Delimiters::default(),
        );
        assert_eq!(parsed.counts().invalid, 2 * n);
        assert_eq!(parsed.diagnostics.len(), MAX_KEPT);
        let at: Vec<(u32, u32)> = parsed
            .diagnostics
            .iter()
            .map(|d| (d.line, d.column))
            .collect();
        assert!(at.is_sorted(), "{at:?}");
        // One on each line from the first action on: lines 2 to 1001.
        assert_eq!(at[0], (2, 10));
        assert_eq!(at[MAX_KEPT - 1].0, MAX_KEPT as u32 + 1);
        // Every block is still a task, skipped with its reasons.
        assert_eq!(parsed.drafts.len(), n);
        assert!(parsed.drafts.iter().all(|d| d.invalid.len() == 2));
    }

    #[test]
    fn every_block_of_another_syntax_is_still_dropped() {
        let n = MAX_KEPT + 10;
        let sham = "#!SHAM [@three-char-SHA-256: k7m]\naction = \"file_delete\"\npath = \"a\"\n#!END_SHAM_k7m\n";
        let reply = format!(
            "{}{}",
            sham.repeat(2),
            "  #!SHAM [@three-char-SHA-256: abc]\n".repeat(n)
        );
        let parsed = parse(reply.as_bytes(), Choice::Auto, &Delimiters::default());
        assert_eq!(parsed.syntax, Syntax::Sham);
        assert_eq!(parsed.dropped.len(), n);
        assert_eq!(parsed.counts().warning, n);
        assert_eq!(parsed.diagnostics.len(), MAX_KEPT);
    }
}

#[cfg(test)]
mod borrowing {
    use std::borrow::Cow;

    use super::{Choice, Syntax, parse};
    use crate::csl::Delimiters;
    use crate::plan::{Action, Draft};

    /// The file texts of `drafts` (contents, patterns, replacements).
    fn texts<'d, 'a>(drafts: &'d [Draft<'a>], out: &mut Vec<&'d Cow<'a, str>>) {
        for draft in drafts {
            match &draft.action {
                Some(Action::Write { content, .. }) => out.push(content),
                Some(Action::Search {
                    pattern,
                    replacement,
                    ..
                }) => out.extend([pattern, replacement]),
                // A RUN script may be made rather than found: `exec`'s is a
                // command line built around the code.
                Some(Action::Insert { text, .. }) => out.push(text),
                Some(Action::Block(children)) => texts(children, out),
                _ => {}
            }
        }
    }

    /// The memory target of the earlier syntaxes' front ends (a 20 MB reply
    /// in at most 2.5 × its size, bench/parse.sh) holds because a text that
    /// is one slice of the reply is not copied: this is what keeps it so.
    #[test]
    fn texts_that_are_one_slice_of_the_reply_are_borrowed_from_it() {
        let cases = [
            (Syntax::Cml, "test-data/parse/cml-v1-reply.cml"),
            (Syntax::Sham, "test-data/parse/sham-basic.sham"),
            (Syntax::Telt, "test-data/parse/telt-basic.telt"),
            (Syntax::Replacer, "test-data/parse/replacer-reply.replacer"),
        ];
        for (syntax, file) in cases {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let bytes = std::fs::read(&path).unwrap();
            let parsed = parse(&bytes, Choice::Only(syntax), &Delimiters::default());
            let mut found = Vec::new();
            texts(&parsed.drafts, &mut found);
            assert!(found.len() >= 3, "{file}: {} texts", found.len());
            let reply = bytes.as_ptr_range();
            for text in found {
                let Cow::Borrowed(slice) = text else {
                    panic!("{file}: {text:?} was copied");
                };
                let inside = slice.is_empty() || reply.contains(&slice.as_ptr());
                assert!(inside, "{file}: {slice:?} is not the reply's");
            }
        }
    }
}
