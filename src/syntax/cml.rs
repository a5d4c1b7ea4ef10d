//! The CML front end (syntaxes.md §3): the XML-like elements of CML v0.0.1
//! and v1.0.0 as drafts of the common plan.
//!
//! Owns which elements and attributes CML has, how each maps onto a plan
//! action, and the diagnostics for what is wrong with them
//! (doc/syntax-cml.md). Reading tags and values byte by byte is
//! [`markup`]'s; paths are checked by `plan` as for every syntax.
//!
//! A top-level element starts at column 1 of a line (prose and Markdown
//! around it are ignored, and so is everything inside a code fence
//! labelled with another language than XML: HTML or JSX shown in prose). A broken element is skipped and
//! reported while the rest of the reply applies; only a CDATA section
//! that never closes is fatal, because everything after it is its text.

mod markup;

use std::borrow::Cow;

use crate::csl::validate::{Count, parse_append, parse_count};
use crate::csl::{Diagnostic, DiagnosticKind, OpKind, Span, TaskId};
use crate::plan::{Action, Draft};

use super::{LineCursor, Parsed, Syntax};
use markup::{Problem, Tag, ValueError};

/// The `version` values of `<tasks>` that CML has had.
const VERSIONS: [&str; 3] = ["1.0", "1.1", "2.0"];

/// The elements a `<tasks>` block holds.
const TASK_ELEMENTS: &str = "<write>, <edit>, <run>, <move> and <remove>";

/// A CML element that is an operation (or a block of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Element {
    Tasks,
    Edit,
    Write,
    Run,
    Move,
    Remove,
}

impl Element {
    const ALL: [Element; 6] = [
        Element::Tasks,
        Element::Edit,
        Element::Write,
        Element::Run,
        Element::Move,
        Element::Remove,
    ];

    fn name(self) -> &'static str {
        match self {
            Element::Tasks => "tasks",
            Element::Edit => "edit",
            Element::Write => "write",
            Element::Run => "run",
            Element::Move => "move",
            Element::Remove => "remove",
        }
    }

    fn from_name(name: &str) -> Option<Element> {
        Element::ALL.into_iter().find(|e| e.name() == name)
    }

    fn kind(self) -> OpKind {
        match self {
            Element::Tasks => OpKind::Tasks,
            Element::Edit => OpKind::Search,
            Element::Write => OpKind::Write,
            Element::Run => OpKind::Run,
            Element::Move => OpKind::Move,
            Element::Remove => OpKind::Delete,
        }
    }

    /// Its attributes, required ones first.
    fn attributes(self) -> &'static [&'static str] {
        match self {
            Element::Tasks => &["version"],
            Element::Edit => &["path", "count"],
            Element::Write => &["path", "append"],
            Element::Run => &["dir"],
            Element::Move => &["from", "to"],
            Element::Remove => &["path"],
        }
    }

    fn required(self) -> &'static [&'static str] {
        match self {
            Element::Edit | Element::Write | Element::Remove => &["path"],
            Element::Move => &["from", "to"],
            Element::Tasks | Element::Run => &[],
        }
    }

    /// A complete example of the element, for hints.
    fn example(self) -> &'static str {
        match self {
            Element::Tasks => "<tasks> … </tasks>",
            Element::Edit => {
                "<edit path=\"src/app.py\"><search><![CDATA[old]]></search><replace><![CDATA[new]]></replace></edit>"
            }
            Element::Write => "<write path=\"src/app.py\"><![CDATA[text]]></write>",
            Element::Run => "<run><![CDATA[cargo test]]></run>",
            Element::Move => "<move from=\"old.txt\" to=\"new.txt\"/>",
            Element::Remove => "<remove path=\"build/\"/>",
        }
    }
}

/// The children of `<edit>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Search,
    SearchStart,
    SearchEnd,
    Replace,
}

impl Part {
    const ALL: [Part; 4] = [
        Part::Search,
        Part::SearchStart,
        Part::SearchEnd,
        Part::Replace,
    ];

    fn name(self) -> &'static str {
        match self {
            Part::Search => "search",
            Part::SearchStart => "search-start",
            Part::SearchEnd => "search-end",
            Part::Replace => "replace",
        }
    }
}

/// The element a top-level line opens, if any: `<name` at column 1 with
/// what detection requires (its required attributes), or, since the reply
/// is read as CML, a `<write>`, `<edit>`, `<move>` or `<remove>` that
/// carries some attribute or opens CDATA right away: a model's element
/// with a misspelt attribute is reported, not taken for prose. A bare
/// `<write>` or `<edit>` in prose stays prose.
fn opener(line: &str) -> Option<Element> {
    if let Some(name) = super::detect::cml_opener(line) {
        return Element::from_name(name);
    }
    let rest = line.strip_prefix('<')?;
    let element = Element::ALL
        .into_iter()
        .find(|e| rest.starts_with(e.name()))?;
    let after = &rest[element.name().len()..];
    let tag_end = after.find('>').unwrap_or(after.len());
    let tag = &after[..tag_end];
    let has_attribute = tag.starts_with([' ', '\t']) && tag.contains('=');
    let opens_cdata = tag.is_empty() && after[tag_end..].starts_with("><![CDATA[");
    (has_attribute || opens_cdata).then_some(element)
}

/// Reads a reply as CML.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut reader = Reader {
        text,
        lines: LineCursor::new(text),
        diagnostics: crate::csl::Diagnostics::new(),
        fatal: false,
        in_block: false,
        no_close: Default::default(),
        ends: markup::CdataEnds::default(),
        eol: std::cell::Cell::new((usize::MAX, 0)),
    };
    let drafts = reader.document();
    let fatal = reader.fatal;
    Parsed::read(
        Syntax::Cml,
        text,
        if fatal { Vec::new() } else { drafts },
        reader.diagnostics,
    )
}

/// What became of an element: its draft and where reading goes on.
struct Read<'t> {
    draft: Draft<'t>,
    /// Just after the element (its closing tag), or where reading can
    /// resume when the element was broken.
    resume: usize,
}

struct Reader<'t> {
    text: &'t str,
    lines: LineCursor<'t>,
    diagnostics: crate::csl::Diagnostics,
    /// A CDATA section never closes: nothing after it can be read.
    fatal: bool,
    /// Reading the operations of a `<tasks>` block.
    in_block: bool,
    /// Per element: from where on its closing tag is known to be missing
    /// (and the unclosed CDATA found on the way, if any). A reply of many
    /// broken elements would otherwise be searched to its end once each.
    no_close: [Option<NoClose>; 6],
    /// Where the next `]]>` is.
    ends: markup::CdataEnds,
    /// The last line end found, and from where it was searched: see
    /// [`Reader::line_end`].
    eol: std::cell::Cell<(usize, usize)>,
}

/// A search for a closing tag that found none: where it started, and the
/// unclosed CDATA section (its offset and problem) that ended it, if any.
type NoClose = (usize, Option<(usize, Problem)>);

/// The reasons collected for one draft, with the task and operation the
/// diagnostics belong to.
struct Errors {
    task: TaskId,
    kind: OpKind,
    reasons: Vec<(u32, String)>,
}

impl<'t> Reader<'t> {
    /// The end of the line `at` is on ([`markup::line_end`]). The reader
    /// asks again and again from further along one line (after each
    /// element on it): a reply of 100,000 elements on one line must not be
    /// searched to its end 100,000 times. The last answer holds for every
    /// position from where it was searched up to the end it found.
    fn line_end(&self, at: usize) -> usize {
        let (from, end) = self.eol.get();
        if from <= at && at <= end {
            return end;
        }
        let end = markup::line_end(self.text.as_bytes(), at);
        self.eol.set((at, end));
        end
    }

    fn document(&mut self) -> Vec<Draft<'t>> {
        let bytes = self.text.as_bytes();
        let mut drafts = Vec::new();
        let mut fence = super::detect::Fence::default();
        let mut pos = 0;
        while pos < bytes.len() && !self.fatal {
            let eol = self.line_end(pos);
            // A position after an element is mid-line: no fence there.
            let at_line_start = pos == 0 || bytes[pos - 1] == b'\n';
            let line = &self.text[pos..eol];
            let allowed =
                !at_line_start || fence.cml_allowed(line.strip_suffix('\r').unwrap_or(line));
            let element = if allowed && bytes[pos] == b'<' {
                opener(line)
            } else {
                None
            };
            let Some(element) = element else {
                pos = eol + 1;
                continue;
            };
            let task = TaskId {
                top: drafts.len() as u32 + 1,
                sub: None,
            };
            let read = self.element(pos, element, task, true);
            drafts.push(read.draft);
            // Another element may follow on the same line; anything else
            // there is prose.
            let after = skip_blanks(bytes, read.resume);
            pos = if bytes.get(after) == Some(&b'<') {
                let eol = self.line_end(after);
                if opener(&self.text[after..eol]).is_some() {
                    after
                } else {
                    eol + 1
                }
            } else if bytes.get(after) == Some(&b'\n') {
                after + 1
            } else {
                self.line_end(after) + 1
            };
        }
        drafts
    }

    /// Records a diagnostic at `start..end`.
    fn report(
        &mut self,
        kind: DiagnosticKind,
        start: usize,
        end: usize,
        message: String,
        hint: String,
        errors: Option<&mut Errors>,
    ) {
        let start = start.min(self.text.len());
        let line = self.lines.of(start).0;
        let line_start =
            memchr::memrchr(b'\n', &self.text.as_bytes()[..start]).map_or(0, |n| n + 1);
        let column = crate::csl::column(self.text, line_start, start);
        let (task, operation) = match &errors {
            Some(e) => (Some(e.task), Some(e.kind)),
            None => (None, None),
        };
        if kind.severity() == crate::csl::Severity::Fatal {
            self.fatal = true;
        }
        if let Some(errors) = errors
            && kind.severity() == crate::csl::Severity::Invalid
        {
            let why = self.diagnostics.reason(line, kind, || message.clone());
            errors.reasons.push((line, why));
        }
        self.diagnostics.push(Diagnostic {
            kind,
            line,
            column,
            line_start,
            span: Span::new(start, end.max(start).min(self.text.len())),
            message,
            hint: Some(hint),
            operation,
            task,
        });
    }

    fn problem(&mut self, kind: DiagnosticKind, p: Problem, errors: &mut Errors) {
        self.report(kind, p.start, p.end, p.message, p.hint, Some(errors));
    }

    /// Reads the element whose tag starts at `at`.
    fn element(&mut self, at: usize, element: Element, task: TaskId, top_level: bool) -> Read<'t> {
        let line = self.lines.of(at).0;
        let mut errors = Errors {
            task,
            kind: element.kind(),
            reasons: Vec::new(),
        };
        let tag = match markup::tag(self.text, at) {
            Ok(tag) => tag,
            Err(p) => {
                self.problem(DiagnosticKind::MalformedXml, p, &mut errors);
                let resume = self.after_broken_tag(at, element, top_level);
                return Read {
                    draft: invalid(task, line, element.kind(), None, errors.reasons),
                    resume,
                };
            }
        };
        let attrs = self.attributes(&tag, element, &mut errors);
        let target = match element {
            Element::Move => attrs.get("from").map(str::to_owned),
            _ => attrs.get("path").map(str::to_owned),
        };
        let body = match element {
            Element::Tasks => self.tasks(&tag, &attrs, task, &mut errors),
            Element::Edit => self.edit(&tag, &attrs, &mut errors),
            Element::Write | Element::Run => self.text_element(&tag, element, &attrs, &mut errors),
            Element::Move | Element::Remove => {
                self.empty_element(&tag, element, &attrs, &mut errors)
            }
        };
        let (action, resume) = match body {
            Ok(done) => done,
            Err(stopped) => {
                let resume = if self.fatal {
                    self.text.len()
                } else {
                    self.resume_after(stopped, element, at, top_level, &mut errors)
                };
                (None, resume)
            }
        };
        let draft = match action {
            Some(action) if errors.reasons.is_empty() || matches!(action, Action::Block(_)) => {
                Draft {
                    target,
                    invalid: errors.reasons,
                    ..Draft::new(task, line, element.kind(), action)
                }
            }
            _ => invalid(task, line, element.kind(), target, errors.reasons),
        };
        Read { draft, resume }
    }

    /// [`markup::find_close`] for `element` from `from`, remembering where
    /// there is none.
    fn find_close(&mut self, from: usize, element: Element) -> Result<Option<usize>, Problem> {
        let slot = element as usize;
        match &self.no_close[slot] {
            Some((known, None)) if from >= *known => return Ok(None),
            // An unclosed CDATA hides everything after it, but only from
            // searches that start before it.
            Some((known, Some((cdata, p)))) if (*known..=*cdata).contains(&from) => {
                return Err(p.clone());
            }
            _ => {}
        }
        let found = markup::find_close(self.text, from, element.name(), &mut self.ends);
        match &found {
            Ok(Some(_)) => {}
            Ok(None) => self.no_close[slot] = Some((from, None)),
            Err(p) => self.no_close[slot] = Some((from, Some((p.start, p.clone())))),
        }
        found
    }

    /// Where to go on after an element whose opening tag is unreadable: at
    /// top level the next line (its lines are prose or other elements);
    /// inside a block, after the element's closing tag if it has one.
    fn after_broken_tag(&mut self, at: usize, element: Element, top_level: bool) -> usize {
        if top_level {
            return self.line_end(at) + 1;
        }
        let eol = self.line_end(at);
        match self.find_close(eol, element) {
            Ok(Some(end)) => end,
            _ => eol,
        }
    }

    /// Where to go on after an element whose content went wrong at
    /// `stopped`: after its closing tag; when it has none, it is reported
    /// as never closed and reading goes on at the line after its opening
    /// tag (top level) or where it stopped (in a block).
    fn resume_after(
        &mut self,
        stopped: usize,
        element: Element,
        at: usize,
        top_level: bool,
        errors: &mut Errors,
    ) -> usize {
        // Stopped at the next top-level element: this one lacks its
        // closing tag (searching on would swallow the next one's).
        let next_element = top_level && self.starts_element(stopped);
        let close = if next_element {
            Ok(None)
        } else {
            self.find_close(stopped, element)
        };
        match close {
            Ok(Some(end)) => end,
            Ok(None) => {
                let name = element.name();
                let message = if next_element {
                    let line = self.lines.of(stopped).0;
                    format!(
                        "<{name}> is not closed before line {line}, where the next element starts"
                    )
                } else {
                    format!("<{name}> is never closed: there is no </{name}> after it")
                };
                self.report(
                    DiagnosticKind::MalformedXml,
                    at,
                    at + 1 + name.len(),
                    message,
                    format!("close it with </{name}> after its last line"),
                    Some(errors),
                );
                // A block's or an edit's parts up to `stopped` were read
                // as such; a text may have run anywhere, so only the
                // opening line is certain to be this element's.
                if top_level && !next_element && matches!(element, Element::Write | Element::Run) {
                    self.line_end(at) + 1
                } else {
                    stopped
                }
            }
            Err(p) => {
                self.problem(DiagnosticKind::UnreadableXml, p, errors);
                self.text.len()
            }
        }
    }

    /// The element's attributes by name, after checking them: unknown,
    /// duplicate and missing required attributes are errors.
    fn attributes(&mut self, tag: &Tag<'t>, element: Element, errors: &mut Errors) -> Attrs<'t> {
        for p in &tag.problems {
            self.problem(DiagnosticKind::MalformedXml, p.clone(), errors);
        }
        let known = element.attributes();
        let mut attrs = Attrs(Vec::with_capacity(known.len()));
        for attr in &tag.attrs {
            if !known.contains(&attr.name) {
                let hint = if known.len() == 1 {
                    format!("<{}> has one attribute: {}", element.name(), known[0])
                } else {
                    format!(
                        "<{}> has the attributes {}",
                        element.name(),
                        known.join(", ")
                    )
                };
                self.report(
                    DiagnosticKind::MalformedXml,
                    attr.start,
                    attr.end,
                    format!("unknown attribute `{}` on <{}>", attr.name, element.name()),
                    hint,
                    Some(errors),
                );
            } else if attrs.get(attr.name).is_some() {
                self.report(
                    DiagnosticKind::MalformedXml,
                    attr.start,
                    attr.end,
                    format!(
                        "duplicate attribute `{}` on <{}>",
                        attr.name,
                        element.name()
                    ),
                    format!("give `{}` once", attr.name),
                    Some(errors),
                );
            } else {
                attrs
                    .0
                    .push((attr.name, attr.value.clone(), attr.start, attr.end));
            }
        }
        // A missing attribute is only worth reporting when the tag was read
        // cleanly: a broken quote may have hidden it.
        if tag.problems.is_empty() {
            for &name in element.required() {
                match attrs.get(name) {
                    None => self.report(
                        DiagnosticKind::MissingFile,
                        tag.start,
                        tag.start + 1 + element.name().len(),
                        format!("<{}> needs a `{name}` attribute", element.name()),
                        format!("write it as {}", element.example()),
                        Some(errors),
                    ),
                    Some(value) if value.trim().is_empty() => {
                        let (start, end) = attrs.span(name);
                        self.report(
                            DiagnosticKind::MissingFile,
                            start,
                            end,
                            format!("`{name}` of <{}> is empty", element.name()),
                            format!(
                                "give the path relative to the repository root: {}",
                                element.example()
                            ),
                            Some(errors),
                        )
                    }
                    Some(_) => {}
                }
            }
        }
        attrs
    }

    /// `<write>` or `<run>`: a value.
    fn text_element(
        &mut self,
        tag: &Tag<'t>,
        element: Element,
        attrs: &Attrs<'t>,
        errors: &mut Errors,
    ) -> Result<(Option<Action<'t>>, usize), usize> {
        let (text, end) = if tag.self_closing {
            (Cow::Borrowed(""), tag.end)
        } else {
            let v = self.value(tag.end, &[element.name()], errors)?;
            (v.text, v.end)
        };
        let action = match element {
            Element::Write => {
                let append = match attrs.get("append") {
                    None => false,
                    Some(value) => parse_append(value).unwrap_or_else(|| {
                        let (start, end) = attrs.span("append");
                        self.report(
                            DiagnosticKind::InvalidAppend,
                            start,
                            end,
                            format!("append=\"{value}\" is neither true nor false"),
                            "write append=\"true\" to add to the file, or leave it out to overwrite".to_string(),
                            Some(errors),
                        );
                        false
                    }),
                };
                Action::Write {
                    path: attrs.get("path").unwrap_or_default().to_string(),
                    content: text,
                    append,
                }
            }
            _ => {
                if text.trim().is_empty() {
                    self.report(
                        DiagnosticKind::EmptyRun,
                        tag.start,
                        tag.end,
                        "<run> has no command".to_string(),
                        "put the command lines inside: <run><![CDATA[cargo test]]></run>"
                            .to_string(),
                        Some(errors),
                    );
                }
                Action::Run {
                    dir: attrs.get("dir").map(str::to_owned),
                    script: text,
                }
            }
        };
        Ok((Some(action), end))
    }

    /// A value, with a multi-line text outside CDATA reported; `Err`:
    /// where reading stopped.
    /// `inner`: the element, then (for a part of `<edit>`) the edit; the
    /// block they are in, if any, is added: their closing lines end a
    /// CDATA section whose `]]>` was forgotten.
    fn value(
        &mut self,
        at: usize,
        inner: &[&'static str],
        errors: &mut Errors,
    ) -> Result<markup::Value<'t>, usize> {
        let mut closers: Vec<&str> = inner.to_vec();
        if self.in_block {
            closers.push("tasks");
        }
        let name = inner.first().copied().unwrap_or("");
        match markup::value(self.text, at, &closers, &mut self.ends) {
            Ok(v) => {
                if let Some(nl) = v.multiline_text {
                    self.report(
                        DiagnosticKind::MalformedXml,
                        nl,
                        nl,
                        format!("the text of <{name}> runs over several lines outside CDATA"),
                        format!(
                            "wrap a multi-line text in CDATA: <{name}><![CDATA[ … ]]></{name}>"
                        ),
                        Some(errors),
                    );
                }
                Ok(v)
            }
            Err(ValueError::Unterminated(p)) => {
                let at = p.start;
                self.problem(DiagnosticKind::UnreadableXml, p, errors);
                Err(at)
            }
            Err(ValueError::Broken(p)) => {
                let at = p.start;
                // Markup that is the next top-level element is reported as
                // this one never being closed (`resume_after`).
                if !self.starts_element(at) {
                    self.problem(DiagnosticKind::MalformedXml, p, errors);
                }
                Err(at)
            }
        }
    }

    /// Whether a top-level element starts at `at` (at column 1).
    fn starts_element(&self, at: usize) -> bool {
        let bytes = self.text.as_bytes();
        at > 0
            && bytes.get(at - 1) == Some(&b'\n')
            && opener(&self.text[at..self.line_end(at)]).is_some()
    }

    /// `<move/>` or `<remove/>`: attributes only.
    fn empty_element(
        &mut self,
        tag: &Tag<'t>,
        element: Element,
        attrs: &Attrs<'t>,
        errors: &mut Errors,
    ) -> Result<(Option<Action<'t>>, usize), usize> {
        let end = if tag.self_closing {
            tag.end
        } else {
            // `<remove path="x"></remove>` is the same element.
            let bytes = self.text.as_bytes();
            let close = skip_blanks(bytes, tag.end);
            let name = element.name();
            if self.text[close..].starts_with("</") {
                match markup::closing_tag(self.text, close, name) {
                    Ok(end) => end,
                    Err(p) => {
                        self.problem(DiagnosticKind::MalformedXml, p, errors);
                        return Err(close);
                    }
                }
            } else {
                self.report(
                    DiagnosticKind::MalformedXml,
                    tag.start,
                    tag.end,
                    format!("<{name}> holds no text"),
                    format!("write it as one self-closing tag: {}", element.example()),
                    Some(errors),
                );
                return Ok((None, tag.end));
            }
        };
        let get = |name| attrs.get(name).unwrap_or_default().to_string();
        let action = match element {
            Element::Move => Action::Move {
                from: get("from"),
                to: get("to"),
                overwrite: false,
            },
            _ => Action::Delete {
                path: get("path"),
                recursive: true,
            },
        };
        Ok((Some(action), end))
    }

    /// `<edit>`: `<search>` or `<search-start>` + `<search-end>`, and
    /// `<replace>`, in any order.
    fn edit(
        &mut self,
        tag: &Tag<'t>,
        attrs: &Attrs<'t>,
        errors: &mut Errors,
    ) -> Result<(Option<Action<'t>>, usize), usize> {
        let count = match attrs.get("count") {
            None => Count::Exactly(1),
            Some(value) => parse_count(value).unwrap_or_else(|| {
                let (start, end) = attrs.span("count");
                self.report(
                    DiagnosticKind::InvalidCount,
                    start,
                    end,
                    format!("count=\"{value}\" is not a number of matches"),
                    "write count=\"2\" for exactly two matches, count=\"all\" for every one, or leave it out for one".to_string(),
                    Some(errors),
                );
                Count::Exactly(1)
            }),
        };
        let mut parts: [Option<(Cow<'t, str>, usize)>; 4] = Default::default();
        let mut end = tag.end;
        if !tag.self_closing {
            let bytes = self.text.as_bytes();
            let mut pos = tag.end;
            end = loop {
                pos = match markup::skip_space_and_comments(self.text, pos) {
                    Ok(pos) => pos,
                    Err(p) => {
                        let at = p.start;
                        self.problem(DiagnosticKind::MalformedXml, p, errors);
                        return Err(at);
                    }
                };
                if self.text[pos..].starts_with("</") {
                    match markup::closing_tag(self.text, pos, "edit") {
                        Ok(end) => break end,
                        Err(p) => {
                            self.problem(DiagnosticKind::MalformedXml, p, errors);
                            return Err(pos);
                        }
                    }
                }
                let part = (bytes.get(pos) == Some(&b'<'))
                    .then(|| markup::tag(self.text, pos).ok())
                    .flatten()
                    .and_then(|t| {
                        Part::ALL
                            .into_iter()
                            .find(|p| p.name() == t.name)
                            .map(|p| (p, t))
                    });
                let Some((part, child)) = part else {
                    let eol = self.line_end(pos);
                    self.report(
                        DiagnosticKind::MalformedXml,
                        pos,
                        eol,
                        format!(
                            "`{}` inside <edit>, which holds only <search>, <search-start>, <search-end> and <replace>",
                            self.text[pos..eol].trim_end()
                        ),
                        "write the edit as <edit path=\"…\"><search><![CDATA[old]]></search><replace><![CDATA[new]]></replace></edit>; put prose outside it".to_string(),
                        Some(errors),
                    );
                    return Err(pos);
                };
                for attr in &child.attrs {
                    self.report(
                        DiagnosticKind::MalformedXml,
                        attr.start,
                        attr.end,
                        format!("<{}> has no attributes", part.name()),
                        format!(
                            "put `{}` on <edit>, if it is one of its own (path, count)",
                            attr.name
                        ),
                        Some(errors),
                    );
                }
                for p in &child.problems {
                    self.problem(DiagnosticKind::MalformedXml, p.clone(), errors);
                }
                let (text, after) = if child.self_closing {
                    (Cow::Borrowed(""), child.end)
                } else {
                    let v = self.value(child.end, &[part.name(), "edit"], errors)?;
                    (v.text, v.end)
                };
                let slot = &mut parts[part as usize];
                if slot.is_some() {
                    self.report(
                        DiagnosticKind::MalformedXml,
                        child.start,
                        child.end,
                        format!("a second <{}> in one <edit>", part.name()),
                        "give each part once; make one <edit> per change".to_string(),
                        Some(errors),
                    );
                } else {
                    *slot = Some((text, child.start));
                }
                pos = after;
            };
        }
        let [search, start, stop, replace] = parts;
        let (pattern, to) = match (search, start, stop) {
            (Some(search), None, None) => (Some(search), None),
            (None, Some(start), Some(stop)) => (Some(start), Some(stop)),
            (None, None, None) => {
                self.report(
                    DiagnosticKind::MalformedXml,
                    tag.start,
                    tag.end,
                    "<edit> has no <search>".to_string(),
                    "give the text to find: <search><![CDATA[old]]></search>, or a range with <search-start> and <search-end>".to_string(),
                    Some(errors),
                );
                (None, None)
            }
            (search, start, _) => {
                let message = if search.is_some() {
                    "<edit> has both <search> and a <search-start>/<search-end> range"
                } else if start.is_none() {
                    "<edit> has <search-end> without <search-start>"
                } else {
                    "<edit> has <search-start> without <search-end>"
                };
                self.report(
                    DiagnosticKind::MalformedXml,
                    tag.start,
                    tag.end,
                    message.to_string(),
                    "use <search> for exact text, or <search-start> and <search-end> together for a range from one through the other".to_string(),
                    Some(errors),
                );
                (None, None)
            }
        };
        if let Some((text, at)) = &pattern
            && text.is_empty()
        {
            let name = if to.is_some() {
                "search-start"
            } else {
                "search"
            };
            self.report(
                DiagnosticKind::EmptyPattern,
                *at,
                *at + 2 + name.len(),
                format!("<{name}> is empty"),
                "give the exact text to find, copied from the file".to_string(),
                Some(errors),
            );
        }
        if let Some((text, at)) = &to
            && text.is_empty()
        {
            self.report(
                DiagnosticKind::EmptyTo,
                *at,
                *at + 12,
                "<search-end> is empty".to_string(),
                "give the text the range ends with, copied from the file".to_string(),
                Some(errors),
            );
        }
        if replace.is_none() && pattern.is_some() {
            self.report(
                DiagnosticKind::MalformedXml,
                tag.start,
                tag.end,
                "<edit> has no <replace>".to_string(),
                "give the new text: <replace><![CDATA[new]]></replace> (empty to delete the match)"
                    .to_string(),
                Some(errors),
            );
        }
        let action = match (pattern, replace) {
            (Some((pattern, _)), Some((replacement, _))) => Some(Action::Search {
                path: attrs.get("path").unwrap_or_default().to_string(),
                pattern,
                to: to.map(|(t, _)| t.into_owned()),
                replacement,
                count,
            }),
            _ => None,
        };
        Ok((action, end))
    }

    /// `<tasks>`: operations that apply together or not at all.
    fn tasks(
        &mut self,
        tag: &Tag<'t>,
        attrs: &Attrs<'t>,
        task: TaskId,
        errors: &mut Errors,
    ) -> Result<(Option<Action<'t>>, usize), usize> {
        if let Some(version) = attrs.get("version")
            && !VERSIONS.contains(&version)
        {
            let (start, end) = attrs.span("version");
            self.report(
                DiagnosticKind::UnknownVersion,
                start,
                end,
                format!("unknown CML version \"{version}\"; this block was not applied"),
                format!(
                    "use version=\"{}\" or leave `version` out",
                    VERSIONS.join("\", \"")
                ),
                Some(errors),
            );
        }
        let mut children = Vec::new();
        if tag.self_closing {
            self.empty_tasks(tag, errors);
            return Ok((Some(Action::Block(children)), tag.end));
        }
        let bytes = self.text.as_bytes();
        let mut pos = tag.end;
        let end = loop {
            pos = match markup::skip_space_and_comments(self.text, pos) {
                Ok(pos) => pos,
                Err(p) => {
                    let at = p.start;
                    self.problem(DiagnosticKind::MalformedXml, p, errors);
                    return Err(at);
                }
            };
            if pos >= bytes.len() {
                return Err(pos);
            }
            if self.text[pos..].starts_with("</") {
                match markup::closing_tag(self.text, pos, "tasks") {
                    Ok(end) => break end,
                    Err(p) => {
                        self.problem(DiagnosticKind::MalformedXml, p, errors);
                        return Err(pos);
                    }
                }
            }
            let child = (bytes[pos] == b'<')
                .then(|| {
                    let name_end = pos
                        + 1
                        + bytes[pos + 1..]
                            .iter()
                            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                            .count();
                    Element::from_name(&self.text[pos + 1..name_end])
                })
                .flatten();
            let eol = self.line_end(pos);
            match child {
                Some(Element::Tasks) => {
                    self.report(
                        DiagnosticKind::MalformedXml,
                        pos,
                        eol,
                        "<tasks> inside <tasks>".to_string(),
                        "close the first block with </tasks> before opening another; blocks do not nest".to_string(),
                        Some(errors),
                    );
                    return Err(pos);
                }
                Some(element) => {
                    let id = TaskId {
                        top: task.top,
                        sub: Some(children.len() as u32 + 1),
                    };
                    // An invalid operation makes `plan` skip the block
                    // whole, with the operation's reasons.
                    self.in_block = true;
                    let read = self.element(pos, element, id, false);
                    self.in_block = false;
                    children.push(read.draft);
                    if self.fatal {
                        return Err(self.text.len());
                    }
                    pos = read.resume;
                }
                None => {
                    let shown = self.text[pos..eol].trim_end();
                    let message = if bytes[pos] == b'<' {
                        format!("unknown element `{shown}` inside <tasks>")
                    } else {
                        format!("text `{shown}` inside <tasks>")
                    };
                    self.report(
                        DiagnosticKind::MalformedXml,
                        pos,
                        eol,
                        message,
                        format!("a <tasks> block holds only {TASK_ELEMENTS}; put prose outside the block"),
                        Some(errors),
                    );
                    return Err(pos);
                }
            }
        };
        if children.is_empty() {
            self.empty_tasks(tag, errors);
        }
        Ok((Some(Action::Block(children)), end))
    }

    fn empty_tasks(&mut self, tag: &Tag<'t>, errors: &mut Errors) {
        self.report(
            DiagnosticKind::EmptyTasks,
            tag.start,
            tag.end,
            "this <tasks> block holds no operation".to_string(),
            format!("put {TASK_ELEMENTS} elements inside, or leave the block out"),
            Some(errors),
        );
    }
}

/// The draft of an element that could not be built.
fn invalid(
    task: TaskId,
    line: u32,
    kind: OpKind,
    target: Option<String>,
    mut reasons: Vec<(u32, String)>,
) -> Draft<'static> {
    // Grown by push, the list has room for four; every broken element
    // keeps its list, with one or two in it.
    reasons.shrink_to_fit();
    Draft {
        task,
        line,
        kind,
        target,
        action: None,
        invalid: if reasons.is_empty() {
            vec![(line, "the element could not be read".to_string())]
        } else {
            reasons
        },
        error_type: None,
    }
}

/// Spaces and tabs from `at`.
fn skip_blanks(bytes: &[u8], at: usize) -> usize {
    let at = at.min(bytes.len());
    at + bytes[at..]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
        .count()
}

/// An element's checked attributes: name, value, span.
struct Attrs<'t>(Vec<(&'t str, Cow<'t, str>, usize, usize)>);

impl Attrs<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|a| a.0 == name).map(|a| a.1.as_ref())
    }

    fn span(&self, name: &str) -> (usize, usize) {
        self.0
            .iter()
            .find(|a| a.0 == name)
            .map_or((0, 0), |a| (a.2, a.3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<(DiagnosticKind, u32)> {
        parse(text)
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.line))
            .collect()
    }

    #[test]
    fn blocks_number_their_operations_and_map_onto_the_plan() {
        let parsed = parse(
            "<tasks>\n  <move from=\"a\" to=\"b\"/>\n  <remove path=\"c\"></remove>\n</tasks>\n<run>make</run>\n",
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let Some(Action::Block(children)) = &parsed.drafts[0].action else {
            panic!("{:?}", parsed.drafts);
        };
        let ids: Vec<String> = children.iter().map(|c| c.task.to_string()).collect();
        assert_eq!(ids, ["1.1", "1.2"]);
        assert_eq!(
            children[1].action,
            Some(Action::Delete {
                path: "c".to_string(),
                recursive: true
            })
        );
        assert_eq!(parsed.drafts[1].task.to_string(), "2");
        assert_eq!(parsed.drafts[1].line, 5);
    }

    #[test]
    fn every_broken_element_is_reported_and_the_others_kept() {
        let text = "<write path=\"a\" x=\"1\"><![CDATA[a]]></write>\nprose\n<write path=\"b\"><![CDATA[b]]></write>\n<edit path=\"c\"><search>x</search></edit>\n";
        assert_eq!(
            codes(text),
            [
                (DiagnosticKind::MalformedXml, 1),
                (DiagnosticKind::MalformedXml, 4)
            ]
        );
        let parsed = parse(text);
        let valid: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(valid, [false, true, false]);
    }

    #[test]
    fn only_a_cdata_that_never_ends_is_fatal() {
        let fatal = "<write path=\"a\"><![CDATA[x\n<remove path=\"b\"/>\n";
        assert_eq!(codes(fatal), [(DiagnosticKind::UnreadableXml, 1)]);
        assert!(parse(fatal).drafts.is_empty());
        // Its end is known: the element only.
        let recovered = "<write path=\"a\"><![CDATA[x\n</write>\n<remove path=\"b\"/>\n";
        assert_eq!(codes(recovered), [(DiagnosticKind::MalformedXml, 2)]);
        assert_eq!(parse(recovered).drafts.len(), 2);
    }

    #[test]
    fn two_elements_on_a_line_are_both_read() {
        let parsed =
            parse("<remove path=\"a\"/> <remove path=\"b\"/> and prose <remove path=\"c\"/>\n");
        assert_eq!(parsed.drafts.len(), 2);
    }
}
