//! The `json` front end (syntaxes.md §4): one JSON document holding
//! operations, in one of four forms.
//!
//! - clada's own operation list: `[{"op": "write", …}, …]`, bare or as
//!   `{"operations": [...]}` (what `git clada parse --format json` prints
//!   for a reply of any syntax but CSL);
//! - the CSL syntax tree that `git clada parse --format json` prints for a
//!   CSL reply (`{"operations": [{"type": "WRITE", "attrs": …}]}`), so that
//!   parse and apply round-trip;
//! - the CML v1.0.0 JSON form: `{"tasks": [{"action": "edit", …}]}`, each
//!   task standalone;
//! - Claude text-editor tool calls (`{"command": "create" | "str_replace"
//!   | "insert" | "view", …}`), alone, as a list, or wrapped as a tool use
//!   (`{"name": …, "input": {…}}`).
//!
//! The document is the whole reply, or the one ```` ```json ```` fence in it.
//! A document that does not parse is fatal; an operation with a missing or
//! mistyped field is invalid (skipped) with a diagnostic at its line. The
//! CSL tree form is printed back as CSL and read by the CSL front end, so
//! it is checked by exactly the rules a CSL reply is.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{LineCursor, Parsed, Syntax};
use crate::csl::validate::Count;
use crate::csl::{Diagnostic, DiagnosticKind, OpKind, Span, TaskId};
use crate::plan::{Action, Draft};

/// Whether `text` is worth reading as JSON when no block of another
/// syntax was found: it starts with `[` or `{`, or is one ```` ```json ````
/// fence.
pub fn looks_like_json(text: &str) -> bool {
    document(text).is_some_and(|(doc, _)| doc.starts_with(['[', '{']))
}

/// The JSON text of the reply and its byte offset: the trimmed reply, or
/// the inside of its first ```` ```json ```` fence.
fn document(text: &str) -> Option<(&str, usize)> {
    let trimmed = text.trim_start();
    if trimmed.starts_with(['[', '{']) {
        let at = text.len() - trimmed.len();
        return Some((trimmed.trim_end(), at));
    }
    let open = text.find("```json")?;
    let body = open + text[open..].find('\n')? + 1;
    let close = text[body..]
        .find("\n```")
        .map_or(text.len(), |n| body + n + 1);
    let doc = &text[body..close];
    let lead = doc.len() - doc.trim_start().len();
    Some((doc.trim(), body + lead))
}

/// Reads the reply as a JSON document.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut reader = Reader {
        text,
        lines: LineCursor::new(text),
        diagnostics: crate::csl::Diagnostics::new(),
    };
    let drafts = match document(text) {
        None => {
            reader.fatal(
                0,
                DiagnosticKind::MalformedJson,
                "the reply is not a JSON document".to_string(),
                "send one JSON document: a list of operations such as [{\"op\": \"write\", \"path\": \"a.txt\", \"content\": \"hi\"}]",
            );
            Vec::new()
        }
        Some((doc, _)) => reader.document(doc),
    };
    Parsed::read(Syntax::Json, text, drafts, reader.diagnostics)
}

struct Reader<'t> {
    text: &'t str,
    /// Lines of `text`, asked for each broken operation: counted once.
    lines: LineCursor<'t>,
    diagnostics: crate::csl::Diagnostics,
}

/// A JSON value with where it stands in the reply.
struct Located<'t> {
    raw: &'t RawValue,
    offset: usize,
}

impl<'t> Reader<'t> {
    fn locate(&self, raw: &'t RawValue) -> Located<'t> {
        // `raw` borrows from the reply: its offset is the distance between
        // the two slices' starts.
        let offset = (raw.get().as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        Located { raw, offset }
    }

    fn push(&mut self, offset: usize, kind: DiagnosticKind, message: String, hint: &str) {
        // serde_json counts columns in bytes: its place may be inside a
        // character.
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let end = self.text[offset..]
            .chars()
            .next()
            .map_or(offset, |c| offset + c.len_utf8());
        let (line, start) = self.lines.of(offset);
        let column = crate::csl::column(self.text, start, offset);
        self.diagnostics.push(Diagnostic {
            kind,
            line,
            column,
            line_start: start,
            span: Span::new(offset, end),
            message,
            hint: Some(hint.to_string()),
            operation: None,
            task: None,
        });
    }

    fn fatal(&mut self, offset: usize, kind: DiagnosticKind, message: String, hint: &str) {
        self.push(offset, kind, message, hint);
    }

    fn document(&mut self, doc: &'t str) -> Vec<Draft<'static>> {
        let raw: &'t RawValue = match serde_json::from_str(doc) {
            Ok(raw) => raw,
            Err(e) => {
                // serde_json counts lines and columns in the document.
                let base = (doc.as_ptr() as usize) - (self.text.as_ptr() as usize);
                let line_in_doc = e.line().max(1);
                let doc_line_start = if line_in_doc == 1 {
                    0
                } else {
                    // Another text than the reply's: its own cursor.
                    LineCursor::new(doc).start(line_in_doc as u32)
                };
                let offset = base + doc_line_start + e.column().saturating_sub(1);
                self.fatal(
                    offset.min(self.text.len()),
                    DiagnosticKind::MalformedJson,
                    format!("the JSON does not parse: {}", without_position(&e)),
                    "check the quotes, commas and brackets near this point; strings need \\n for line breaks and \\\" for quotes",
                );
                return Vec::new();
            }
        };
        let top = self.locate(raw);
        let ops = match self.operations_of(&top) {
            Some(ops) => ops,
            None => {
                self.fatal(
                    top.offset,
                    DiagnosticKind::UnknownJsonShape,
                    "the JSON is none of the forms git-clada reads".to_string(),
                    "send a list of operations ([{\"op\": \"write\", \"path\": …, \"content\": …}]), {\"tasks\": [...]} (CML), the output of git clada parse --format json, or text-editor tool calls ({\"command\": \"str_replace\", …})",
                );
                return Vec::new();
            }
        };
        if is_csl_tree(&ops) {
            return self.csl_tree(&ops);
        }
        ops.iter()
            .enumerate()
            .map(|(i, op)| {
                let task = TaskId {
                    top: i as u32 + 1,
                    sub: None,
                };
                self.operation(op, task, true)
            })
            .collect()
    }

    /// The list of operations in the document, whichever form it has.
    fn operations_of(&self, top: &Located<'t>) -> Option<Vec<Located<'t>>> {
        let text = top.raw.get();
        if text.starts_with('[') {
            let items: Vec<&'t RawValue> = serde_json::from_str(text).ok()?;
            return Some(items.into_iter().map(|r| self.locate(r)).collect());
        }
        let fields: Map<String, Value> = serde_json::from_str(text).ok()?;
        let raw_fields: std::collections::BTreeMap<&str, &'t RawValue> =
            serde_json::from_str(text).ok()?;
        for key in ["operations", "tasks"] {
            if let Some(list) = raw_fields.get(key) {
                let items: Vec<&'t RawValue> = serde_json::from_str(list.get()).ok()?;
                return Some(items.into_iter().map(|r| self.locate(r)).collect());
            }
        }
        // One tool call, or one operation, on its own.
        (fields.contains_key("command")
            || fields.contains_key("op")
            || fields.contains_key("input"))
        .then(|| vec![self.locate(top.raw)])
    }

    /// One operation in any of the list forms.
    fn operation(&mut self, at: &Located<'t>, task: TaskId, top_level: bool) -> Draft<'static> {
        let line = self.lines.of(at.offset).0;
        let fields: Map<String, Value> = match serde_json::from_str(at.raw.get()) {
            Ok(Value::Object(map)) => map,
            _ => {
                return self.invalid(
                    at,
                    task,
                    OpKind::Tasks,
                    "an operation must be a JSON object".to_string(),
                    OP_FORMS,
                );
            }
        };
        // A tool use wraps its call: {"name": …, "input": {…}}.
        if let Some(Value::Object(input)) = fields.get("input") {
            return self.tool_call(at, task, input);
        }
        if fields.contains_key("command") {
            return self.tool_call(at, task, &fields);
        }
        if fields.contains_key("action") {
            return self.cml_task(at, task, &fields);
        }
        let Some(name) = fields.get("op").and_then(Value::as_str) else {
            return self.invalid(
                at,
                task,
                OpKind::Tasks,
                "the operation has no \"op\" field".to_string(),
                OP_FORMS,
            );
        };
        let f = Fields {
            map: &fields,
            op: name,
            soft: Default::default(),
        };
        let kind = match name {
            "write" => OpKind::Write,
            "search" => OpKind::Search,
            "run" => OpKind::Run,
            "delete" => OpKind::Delete,
            "move" => OpKind::Move,
            "insert" => OpKind::Insert,
            "mkdir" => OpKind::Mkdir,
            "read" => OpKind::Read,
            "edit" => OpKind::Edit,
            "create" => OpKind::Write,
            "mode" => OpKind::Mode,
            "tasks" => OpKind::Tasks,
            other => {
                return self.invalid(
                    at,
                    task,
                    OpKind::Tasks,
                    format!("unknown operation \"op\": {other:?}"),
                    OP_FORMS,
                );
            }
        };
        let action: Result<Action<'static>, String> = (|| {
            Ok(match name {
                "write" => Action::Write {
                    path: f.string("path")?,
                    content: f.string("content")?.into(),
                    append: f.flag("append")?,
                },
                "search" => Action::Search {
                    path: f.string("path")?,
                    pattern: f
                        .nonblank("search", "Empty search pattern not allowed")?
                        .into(),
                    to: match f.map.get("to") {
                        None | Some(Value::Null) => None,
                        Some(_) => Some(f.nonblank("to", "Empty TO pattern not allowed")?),
                    },
                    replacement: f.string("replace")?.into(),
                    count: f.count()?,
                },
                "run" => Action::Run {
                    dir: f.optional_string("dir")?,
                    script: f
                        .nonblank("cmd", "Empty content not allowed for RUN operation")?
                        .into(),
                },
                "delete" => Action::Delete {
                    path: f.string("path")?,
                    recursive: f.flag("recursive")?,
                },
                "move" => Action::Move {
                    from: f.string("from")?,
                    to: f.string("to")?,
                    overwrite: f.flag("overwrite")?,
                },
                "insert" => Action::Insert {
                    path: f.string("path")?,
                    line: f.number("line")?,
                    text: f.string("text")?.into(),
                },
                "mkdir" => Action::Mkdir {
                    path: f.string("path")?,
                },
                "read" => f.read()?,
                "create" => Action::Create {
                    path: f.string("path")?,
                    content: f.string("content")?.into(),
                },
                "mode" => Action::Mode {
                    path: f.string("path")?,
                    mode: {
                        let name = f.string("mode")?;
                        crate::plan::FileMode::from_name(&name).ok_or_else(|| {
                            format!(
                                "\"mode\" {name:?} is not one of \"100644\", \"100755\", \"120000\""
                            )
                        })?
                    },
                },
                "edit" => Action::Edit {
                    path: f.string("path")?,
                    hunks: hunks_of(f.map.get("hunks"))?,
                    locate: match f.map.get("match") {
                        None | Some(Value::Null) => crate::plan::Locate::Unique,
                        Some(Value::String(name)) => crate::plan::Locate::from_name(name)
                            .ok_or_else(|| {
                                "\"match\" of an \"edit\" is \"unique\" or \"sequential\""
                                    .to_string()
                            })?,
                        Some(_) => {
                            return Err("\"match\" of an \"edit\" must be a string".to_string());
                        }
                    },
                    final_newline: match f.map.get("final_newline") {
                        None | Some(Value::Null) => None,
                        Some(Value::Bool(b)) => Some(*b),
                        Some(_) => {
                            return Err("\"final_newline\" must be true or false".to_string());
                        }
                    },
                },
                _ => Action::Block(Vec::new()),
            })
        })();
        let action = match action {
            Ok(action) => action,
            Err(why) => {
                let hint = op_form(name);
                return self.invalid(at, task, kind, why, hint);
            }
        };
        let action = match action {
            Action::Block(_) if !top_level => {
                return self.invalid(
                    at,
                    task,
                    kind,
                    "a \"tasks\" operation cannot hold another".to_string(),
                    OP_FORMS,
                );
            }
            Action::Block(_) => {
                let Some(list) = raw_list(at.raw, "ops") else {
                    return self.invalid(
                        at,
                        task,
                        kind,
                        "a \"tasks\" operation needs \"ops\": a list of operations".to_string(),
                        op_form("tasks"),
                    );
                };
                let children = list
                    .into_iter()
                    .enumerate()
                    .map(|(i, raw)| {
                        let child = self.locate(raw);
                        let id = TaskId {
                            top: task.top,
                            sub: Some(i as u32 + 1),
                        };
                        self.operation(&child, id, false)
                    })
                    .collect();
                Action::Block(children)
            }
            other => other,
        };
        let draft = Draft {
            target: fields
                .get("path")
                .and_then(Value::as_str)
                .map(str::to_owned),
            ..Draft::new(task, line, kind, action)
        };
        // The reasons parse output gives for a skipped operation.
        let mut soft = f.soft.take();
        if let Some(Value::Array(reasons)) = fields.get("invalid") {
            soft.extend(reasons.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        self.noted(at, draft, soft, op_form(name))
    }

    /// `draft` with the problems its fields had noted: invalid, at its line.
    fn noted(
        &mut self,
        at: &Located<'t>,
        mut draft: Draft<'static>,
        soft: Vec<String>,
        hint: &str,
    ) -> Draft<'static> {
        for why in soft {
            self.push(
                at.offset,
                DiagnosticKind::InvalidJsonOperation,
                why.clone(),
                hint,
            );
            if let Some(d) = self.diagnostics.last_mut() {
                d.task = Some(draft.task);
                d.operation = Some(draft.kind);
            }
            let kind = DiagnosticKind::InvalidJsonOperation;
            let why = self.diagnostics.reason(draft.line, kind, || why);
            draft.invalid.push((draft.line, why));
        }
        // Grown by push, the list has room for four; every invalid
        // operation keeps its list, with one or two in it.
        draft.invalid.shrink_to_fit();
        draft
    }

    /// A Claude text-editor tool call.
    fn tool_call(
        &mut self,
        at: &Located<'t>,
        task: TaskId,
        call: &Map<String, Value>,
    ) -> Draft<'static> {
        let line = self.lines.of(at.offset).0;
        let command = call.get("command").and_then(Value::as_str).unwrap_or("");
        let f = Fields {
            map: call,
            op: command,
            soft: Default::default(),
        };
        let built: Result<(OpKind, Action<'static>), String> = (|| {
            Ok(match command {
                // Anthropic's reference tool refuses to create over an
                // existing file, and writes file_text as it is.
                "create" => (
                    OpKind::Write,
                    Action::Create {
                        path: f.string("path")?,
                        content: f.string("file_text")?.into(),
                    },
                ),
                "str_replace" => (
                    OpKind::Search,
                    Action::Search {
                        path: f.string("path")?,
                        pattern: f
                            .nonblank("old_str", "Empty search pattern not allowed")?
                            .into(),
                        to: None,
                        replacement: f.optional_string("new_str")?.unwrap_or_default().into(),
                        count: Count::Exactly(1),
                    },
                ),
                "insert" => (
                    OpKind::Insert,
                    Action::Insert {
                        path: f.string("path")?,
                        line: f.number("insert_line")?,
                        text: match f.optional_string("new_str")? {
                            Some(text) => text.into(),
                            None => f.string("insert_text")?.into(),
                        },
                    },
                ),
                "view" => (
                    OpKind::Read,
                    Action::ReadFiles {
                        paths: vec![f.string("path")?],
                    },
                ),
                other => {
                    return Err(format!(
                        "the text-editor command {other:?} is not supported (create, str_replace, insert and view are)"
                    ));
                }
            })
        })();
        self.built(at, task, line, call, built, f.soft.take(), TOOL_FORMS)
    }

    /// The draft of an operation of the tool-call or CML form, or why it
    /// is invalid; `soft`: the problems its fields noted.
    #[allow(clippy::too_many_arguments)]
    fn built(
        &mut self,
        at: &Located<'t>,
        task: TaskId,
        line: u32,
        fields: &Map<String, Value>,
        built: Result<(OpKind, Action<'static>), String>,
        soft: Vec<String>,
        forms: &str,
    ) -> Draft<'static> {
        match built {
            Ok((kind, action)) => {
                let draft = Draft {
                    target: fields
                        .get("path")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    ..Draft::new(task, line, kind, action)
                };
                self.noted(at, draft, soft, forms)
            }
            Err(why) => self.invalid(at, task, OpKind::Tasks, why, forms),
        }
    }

    /// A task of the CML v1.0.0 JSON form.
    fn cml_task(
        &mut self,
        at: &Located<'t>,
        task: TaskId,
        fields: &Map<String, Value>,
    ) -> Draft<'static> {
        let line = self.lines.of(at.offset).0;
        let action_name = fields.get("action").and_then(Value::as_str).unwrap_or("");
        let f = Fields {
            map: fields,
            op: action_name,
            soft: Default::default(),
        };
        let built: Result<(OpKind, Action<'static>), String> = (|| {
            Ok(match action_name {
                "edit" => (
                    OpKind::Search,
                    Action::Search {
                        path: f.string("path")?,
                        pattern: f
                            .nonblank("find", "Empty search pattern not allowed")?
                            .into(),
                        to: None,
                        replacement: f.string("replace")?.into(),
                        count: f.count()?,
                    },
                ),
                "write" => (
                    OpKind::Write,
                    Action::Write {
                        path: f.string("path")?,
                        content: f.string("content")?.into(),
                        append: f.flag("append")?,
                    },
                ),
                "run" => (
                    OpKind::Run,
                    Action::Run {
                        dir: f.optional_string("dir")?,
                        script: f
                            .nonblank("cmd", "Empty content not allowed for RUN operation")?
                            .into(),
                    },
                ),
                "move" => (
                    OpKind::Move,
                    Action::Move {
                        from: f.string("from")?,
                        to: f.string("to")?,
                        overwrite: false,
                    },
                ),
                "remove" => (
                    OpKind::Delete,
                    Action::Delete {
                        path: f.string("path")?,
                        recursive: true,
                    },
                ),
                other => {
                    return Err(format!(
                        "unknown CML action {other:?} (edit, write, run, move and remove are known)"
                    ));
                }
            })
        })();
        self.built(at, task, line, fields, built, f.soft.take(), CML_FORMS)
    }

    fn invalid(
        &mut self,
        at: &Located<'t>,
        task: TaskId,
        kind: OpKind,
        why: String,
        hint: &str,
    ) -> Draft<'static> {
        let line = self.lines.of(at.offset).0;
        self.push(
            at.offset,
            DiagnosticKind::InvalidJsonOperation,
            why.clone(),
            hint,
        );
        if let Some(d) = self.diagnostics.last_mut() {
            d.task = Some(task);
            d.operation = Some(kind);
        }
        let why = self
            .diagnostics
            .reason(line, DiagnosticKind::InvalidJsonOperation, || why);
        Draft::invalid(task, line, kind, why)
    }

    /// The CSL tree form: printed back as CSL and read by its front end.
    /// An object that is no CSL operation is invalid on its own; the
    /// others keep their numbers.
    fn csl_tree(&mut self, ops: &[Located<'t>]) -> Vec<Draft<'static>> {
        let values: Vec<Value> = ops
            .iter()
            .map(|op| serde_json::from_str(op.raw.get()).unwrap_or(Value::Null))
            .collect();
        let lines: Vec<(u32, usize)> = ops.iter().map(|op| self.lines.of(op.offset)).collect();
        // Each JSON object's place: the operation read, or why not.
        let mut tree = Vec::new();
        let mut read: Vec<Result<usize, String>> = Vec::new();
        for value in &values {
            let id = TaskId {
                top: tree.len() as u32 + 1,
                sub: None,
            };
            match csl_operation(value, id) {
                Ok(op) => {
                    read.push(Ok(tree.len()));
                    tree.push(op);
                }
                Err(why) => read.push(Err(why)),
            }
        }
        let delims = unused_delimiters(&tree);
        let printed = crate::csl::print::print(&tree, &delims);
        let reply = crate::csl::parse(&printed, &delims);
        // JSON index of each printed operation.
        let index_of: Vec<usize> = read
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_ok())
            .map(|(i, _)| i)
            .collect();
        // Those the printed reply's parse did not keep still count.
        self.diagnostics.count_omitted(reply.diagnostics.omitted());
        for d in &reply.diagnostics {
            if d.kind == DiagnosticKind::NoOperations {
                continue;
            }
            let at = d
                .task
                .and_then(|t| index_of.get(t.top as usize - 1))
                .copied();
            let (line, start) = at.map_or((1, 0), |i| lines[i]);
            self.diagnostics.push(Diagnostic {
                line,
                column: 1,
                line_start: start,
                span: Span::new(start, start),
                task: d.task.map(|t| TaskId {
                    top: at.map_or(t.top, |i| i as u32 + 1),
                    sub: t.sub,
                }),
                ..d.clone()
            });
        }
        if reply.has_fatal() {
            return Vec::new();
        }
        let mut printed_drafts = super::csl::drafts(&reply, &delims).into_iter();
        let mut drafts = Vec::new();
        for (i, r) in read.into_iter().enumerate() {
            let task = TaskId {
                top: i as u32 + 1,
                sub: None,
            };
            match r {
                Ok(_) => {
                    let Some(mut draft) = printed_drafts.next() else {
                        break;
                    };
                    relocate(&mut draft, lines[i].0, task.top);
                    drafts.push(draft.into_owned());
                }
                Err(why) => {
                    let at = Located {
                        raw: ops[i].raw,
                        offset: ops[i].offset,
                    };
                    self.push(
                        at.offset,
                        DiagnosticKind::InvalidJsonOperation,
                        why.clone(),
                        CSL_TREE_FORM,
                    );
                    if let Some(d) = self.diagnostics.last_mut() {
                        d.task = Some(task);
                    }
                    let kind = DiagnosticKind::InvalidJsonOperation;
                    let why = self.diagnostics.reason(lines[i].0, kind, || why);
                    drafts.push(Draft::invalid(task, lines[i].0, OpKind::Tasks, why));
                }
            }
        }
        drafts
    }
}

/// Gives a draft read from printed CSL the line and number of its JSON
/// object.
fn relocate(draft: &mut Draft, line: u32, top: u32) {
    draft.line = line;
    draft.task.top = top;
    for reason in &mut draft.invalid {
        reason.0 = line;
    }
    if let Some(Action::Block(children)) = &mut draft.action {
        for child in children {
            relocate(child, line, top);
        }
    }
}

/// Whether the list is the CSL tree form (`"type": "WRITE"`, …).
fn is_csl_tree(ops: &[Located<'_>]) -> bool {
    ops.first().is_some_and(|op| {
        serde_json::from_str::<Map<String, Value>>(op.raw.get()).is_ok_and(|m| {
            m.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| ["WRITE", "SEARCH", "RUN", "TASKS"].contains(&t))
                && !m.contains_key("op")
        })
    })
}

/// One operation of the CSL tree form as a CSL operation.
fn csl_operation(value: &Value, task: TaskId) -> Result<crate::csl::Operation<'_>, String> {
    use crate::csl::{Attr, Body, Operation};
    let text = |key: &str| -> Result<Cow<'_, str>, String> {
        match value.get(key) {
            Some(Value::String(s)) => Ok(Cow::Borrowed(s.as_str())),
            None | Some(Value::Null) => Ok(Cow::Borrowed("")),
            Some(_) => Err(format!("\"{key}\" must be a string")),
        }
    };
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    let attrs = match value.get("attrs") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, v)| match v {
                Value::String(s) => Ok(Attr {
                    name: name.as_str(),
                    value: Cow::Borrowed(s.as_str()),
                    span: Span::default(),
                }),
                _ => Err(format!("attribute {name:?} must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("\"attrs\" must be an object".to_string()),
    };
    let body = match kind {
        "WRITE" => Body::Write {
            content: text("content")?,
        },
        "RUN" => Body::Run {
            content: text("content")?,
        },
        "SEARCH" => Body::Search {
            pattern: text("pattern")?,
            to: match value.get("to") {
                None | Some(Value::Null) => None,
                Some(_) => Some(text("to")?),
            },
            replacement: text("replacement")?,
        },
        "TASKS" if task.sub.is_none() => {
            let children = match value.get("operations") {
                Some(Value::Array(list)) => list,
                _ => return Err("a TASKS operation needs \"operations\": a list".to_string()),
            };
            Body::Tasks {
                operations: children
                    .iter()
                    .enumerate()
                    .map(|(i, child)| {
                        csl_operation(
                            child,
                            TaskId {
                                top: task.top,
                                sub: Some(i as u32 + 1),
                            },
                        )
                    })
                    .collect::<Result<_, _>>()?,
            }
        }
        other => {
            return Err(format!(
                "unknown operation type {other:?} (WRITE, SEARCH, RUN and TASKS are CSL's)"
            ));
        }
    };
    Ok(Operation {
        line: 0,
        line_start: 0,
        task,
        attrs,
        body,
        starts_another: None,
    })
}

/// Delimiters that start no line of any content in `ops`, so that the
/// printed CSL reads back as the same operations.
fn unused_delimiters(ops: &[crate::csl::Operation<'_>]) -> crate::csl::Delimiters {
    fn contents<'o>(op: &'o crate::csl::Operation<'_>, out: &mut Vec<&'o str>) {
        use crate::csl::Body;
        match &op.body {
            Body::Write { content } | Body::Run { content } => out.push(content),
            Body::Search {
                pattern,
                to,
                replacement,
            } => {
                out.push(pattern);
                out.extend(to.as_deref());
                out.push(replacement);
            }
            Body::Tasks { operations } => operations.iter().for_each(|c| contents(c, out)),
        }
    }
    let mut all = Vec::new();
    ops.iter().for_each(|op| contents(op, &mut all));
    let free = |start: &str| !all.iter().any(|c| c.lines().any(|l| l.starts_with(start)));
    let mut n = 0u32;
    loop {
        let (start, end) = if n == 0 {
            ("<---".to_string(), "--->".to_string())
        } else {
            (format!("<--{n}--"), format!("--{n}-->"))
        };
        if free(&start) {
            return crate::csl::Delimiters { start, end };
        }
        n += 1;
    }
}

/// The items of the list under `key` in the object `raw`.
fn raw_list<'t>(raw: &'t RawValue, key: &str) -> Option<Vec<&'t RawValue>> {
    let fields: std::collections::BTreeMap<&str, &'t RawValue> =
        serde_json::from_str(raw.get()).ok()?;
    serde_json::from_str(fields.get(key)?.get()).ok()
}

/// Typed access to an operation's fields, with messages that name them.
/// A missing or mistyped field is an error (no operation can be built);
/// an empty pattern or command is a problem noted in `soft`, as CSL notes
/// it, so that the operation's paths are still checked like CSL's.
struct Fields<'m> {
    map: &'m Map<String, Value>,
    op: &'m str,
    soft: std::cell::RefCell<Vec<String>>,
}

impl Fields<'_> {
    fn string(&self, key: &str) -> Result<String, String> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!(
                "\"{key}\" of a {:?} operation must be a string",
                self.op
            )),
            None => Err(format!(
                "missing field \"{key}\" (a string) in a {:?} operation",
                self.op
            )),
        }
    }

    fn optional_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(key).map(Some),
        }
    }

    /// A string that must hold more than whitespace; `message` is the
    /// spec's words for CSL's matching check.
    fn nonblank(&self, key: &str, message: &str) -> Result<String, String> {
        let s = self.string(key)?;
        if s.trim().is_empty() {
            self.soft
                .borrow_mut()
                .push(format!("{message} (\"{key}\")"));
        }
        Ok(s)
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(_) => Err(format!(
                "\"{key}\" of a {:?} operation must be true or false",
                self.op
            )),
        }
    }

    fn number(&self, key: &str) -> Result<usize, String> {
        match self.map.get(key) {
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("\"{key}\" must be a whole number, 0 or more")),
            Some(Value::String(s)) => s
                .parse()
                .map_err(|_| format!("\"{key}\" must be a whole number, 0 or more")),
            Some(_) => Err(format!("\"{key}\" must be a whole number, 0 or more")),
            None => Err(format!(
                "missing field \"{key}\" (a line number) in a {:?} operation",
                self.op
            )),
        }
    }

    fn count(&self) -> Result<Count, String> {
        let bad = || "Invalid value for 'count': must be positive integer or 'all'".to_string();
        match self.map.get("count") {
            None | Some(Value::Null) => Ok(Count::Exactly(1)),
            Some(Value::String(s)) => crate::csl::validate::parse_count(s).ok_or_else(bad),
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n >= 1)
                .map(Count::Exactly)
                .ok_or_else(bad),
            Some(_) => Err(bad()),
        }
    }

    fn read(&self) -> Result<Action<'static>, String> {
        let m = self.map;
        if m.contains_key("paths") {
            let paths = match m.get("paths") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| "\"paths\" must be a list of strings".to_string())?,
                Some(Value::String(one)) => vec![one.clone()],
                _ => return Err("\"paths\" must be a list of strings".to_string()),
            };
            return Ok(Action::ReadFiles { paths });
        }
        if m.contains_key("list") {
            return Ok(Action::List {
                path: self.string("list")?,
            });
        }
        if m.contains_key("grep") {
            return Ok(Action::Grep {
                pattern: self.nonblank("grep", "Empty search pattern not allowed")?,
                path: self.optional_string("path")?.unwrap_or_default(),
                include: self.optional_string("include")?,
            });
        }
        if m.contains_key("glob") {
            return Ok(Action::Glob {
                pattern: self.nonblank("glob", "Empty search pattern not allowed")?,
                base: self.optional_string("base")?.unwrap_or_default(),
            });
        }
        Err(
            "a \"read\" operation needs one of \"paths\", \"list\", \"grep\" or \"glob\""
                .to_string(),
        )
    }
}

const OP_FORMS: &str = "each operation is an object with \"op\": write, create, search, edit, mode, run, delete, move, insert, mkdir, read or tasks (git clada prompt --syntax json lists their fields)";
const TOOL_FORMS: &str = "a text-editor call is {\"command\": \"create\" | \"str_replace\" | \"insert\" | \"view\", \"path\": …} with file_text, old_str/new_str or insert_line/new_str";
const CML_FORMS: &str = "a CML task is {\"action\": \"edit\", \"path\", \"find\", \"replace\"}, {\"action\": \"write\", \"path\", \"content\"}, {\"action\": \"run\", \"cmd\"}, {\"action\": \"move\", \"from\", \"to\"} or {\"action\": \"remove\", \"path\"}";
const CSL_TREE_FORM: &str = "each operation of the parse output is {\"type\": \"WRITE\" | \"SEARCH\" | \"RUN\" | \"TASKS\", \"attrs\": {…}, …} as git clada parse --format json prints it";

/// The fields of one operation of the list form, for a hint.
fn op_form(name: &str) -> &'static str {
    match name {
        "write" => {
            "{\"op\": \"write\", \"path\": \"a.txt\", \"content\": \"…\", \"append\": false}"
        }
        "search" => {
            "{\"op\": \"search\", \"path\": \"a.txt\", \"search\": \"old\", \"replace\": \"new\", \"count\": 1} (\"to\" for a range, \"count\": \"all\" for every match)"
        }
        "run" => {
            "{\"op\": \"run\", \"cmd\": \"cargo test\", \"dir\": \"sub\"} (one command per line in cmd)"
        }
        "delete" => "{\"op\": \"delete\", \"path\": \"old.txt\", \"recursive\": false}",
        "move" => {
            "{\"op\": \"move\", \"from\": \"a.txt\", \"to\": \"b.txt\", \"overwrite\": false}"
        }
        "insert" => {
            "{\"op\": \"insert\", \"path\": \"a.txt\", \"line\": 3, \"text\": \"…\"} (after line 3; 0 is the top)"
        }
        "mkdir" => "{\"op\": \"mkdir\", \"path\": \"docs\"}",
        "create" => {
            "{\"op\": \"create\", \"path\": \"new.txt\", \"content\": \"…\"} (exactly these bytes; refused when the file exists with other content)"
        }
        "mode" => {
            "{\"op\": \"mode\", \"path\": \"run.sh\", \"mode\": \"100755\"} (\"100644\", \"100755\", or \"120000\": a symbolic link to the file's content)"
        }
        "read" => {
            "{\"op\": \"read\", \"paths\": [\"a.txt\"]}, {\"op\": \"read\", \"list\": \"src\"}, {\"op\": \"read\", \"grep\": \"fn main\", \"path\": \"src\", \"include\": \"*.rs\"} or {\"op\": \"read\", \"glob\": \"**/*.md\", \"base\": \"\"}"
        }
        "tasks" => "{\"op\": \"tasks\", \"ops\": [ … ]}: the operations of one atomic block",
        "edit" => {
            "{\"op\": \"edit\", \"path\": \"a.txt\", \"hunks\": [{\"old\": [\"x = 1\"], \"new\": [\"x = 2\"], \"line\": 3}], \"match\": \"unique\"} (lines without line ends; \"match\": \"sequential\" finds each hunk after the one before, as apply_patch does)"
        }
        _ => OP_FORMS,
    }
}

/// A draft in the operation-list form, as `git clada parse --format json`
/// prints it for a reply that is not CSL: reading it back gives the same
/// draft. `source_line` is the line in the reply it was read from (a key
/// the reader ignores, as `line` is insert's line number).
pub struct OpForm<'d>(pub &'d Draft<'d>);

impl serde::Serialize for OpForm<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let d = self.0;
        let mut map = s.serialize_map(None)?;
        let op = match &d.action {
            None => d.kind.name().to_ascii_lowercase(),
            Some(Action::Write { .. }) => "write".into(),
            Some(Action::Search { .. }) => "search".into(),
            Some(Action::Run { .. }) => "run".into(),
            Some(Action::Delete { .. }) => "delete".into(),
            Some(Action::Move { .. }) => "move".into(),
            Some(Action::Insert { .. }) => "insert".into(),
            Some(Action::Mkdir { .. }) => "mkdir".into(),
            Some(
                Action::ReadFiles { .. }
                | Action::List { .. }
                | Action::Grep { .. }
                | Action::Glob { .. },
            ) => "read".into(),
            Some(Action::Edit { .. }) => "edit".into(),
            Some(Action::Create { .. }) => "create".into(),
            Some(Action::Mode { .. }) => "mode".into(),
            Some(Action::Block(_)) => "tasks".into(),
        };
        map.serialize_entry("op", &op)?;
        map.serialize_entry("source_line", &d.line)?;
        // Why it is skipped, so that reading it back skips it too.
        if !d.invalid.is_empty() {
            let reasons: Vec<&str> = d.invalid.iter().map(|(_, why)| why.as_str()).collect();
            map.serialize_entry("invalid", &reasons)?;
        }
        match &d.action {
            None => {}
            Some(Action::Write {
                path,
                content,
                append,
            }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("content", content)?;
                map.serialize_entry("append", append)?;
            }
            Some(Action::Search {
                path,
                pattern,
                to,
                replacement,
                count,
            }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("search", pattern)?;
                if let Some(to) = to {
                    map.serialize_entry("to", to)?;
                }
                map.serialize_entry("replace", replacement)?;
                match count {
                    Count::All => map.serialize_entry("count", "all")?,
                    Count::Exactly(n) => map.serialize_entry("count", n)?,
                }
            }
            Some(Action::Run { dir, script }) => {
                map.serialize_entry("cmd", script)?;
                if let Some(dir) = dir {
                    map.serialize_entry("dir", dir)?;
                }
            }
            Some(Action::Delete { path, recursive }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("recursive", recursive)?;
            }
            Some(Action::Move {
                from,
                to,
                overwrite,
            }) => {
                map.serialize_entry("from", from)?;
                map.serialize_entry("to", to)?;
                map.serialize_entry("overwrite", overwrite)?;
            }
            Some(Action::Insert { path, line, text }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("line", line)?;
                map.serialize_entry("text", text)?;
            }
            Some(Action::Mkdir { path }) => map.serialize_entry("path", path)?,
            Some(Action::ReadFiles { paths }) => map.serialize_entry("paths", paths)?,
            Some(Action::List { path }) => map.serialize_entry("list", path)?,
            Some(Action::Grep {
                pattern,
                path,
                include,
            }) => {
                map.serialize_entry("grep", pattern)?;
                map.serialize_entry("path", path)?;
                if let Some(include) = include {
                    map.serialize_entry("include", include)?;
                }
            }
            Some(Action::Glob { pattern, base }) => {
                map.serialize_entry("glob", pattern)?;
                map.serialize_entry("base", base)?;
            }
            Some(Action::Edit {
                path,
                hunks,
                locate,
                final_newline,
            }) => {
                map.serialize_entry("path", path)?;
                let hunks: Vec<HunkForm<'_>> = hunks.iter().map(HunkForm).collect();
                map.serialize_entry("hunks", &hunks)?;
                map.serialize_entry("match", locate.name())?;
                if let Some(eol) = final_newline {
                    map.serialize_entry("final_newline", eol)?;
                }
            }
            Some(Action::Create { path, content }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("content", content)?;
            }
            Some(Action::Mode { path, mode }) => {
                map.serialize_entry("path", path)?;
                map.serialize_entry("mode", mode.name())?;
            }
            Some(Action::Block(children)) => {
                let children: Vec<OpForm<'_>> = children.iter().map(OpForm).collect();
                map.serialize_entry("ops", &children)?;
            }
        }
        map.end()
    }
}

/// A hunk of an `edit` operation: `{"old": [lines], "new": [lines],
/// "line": n, "anchor": "…", "at_end": true}` (the last three optional).
struct HunkForm<'h>(&'h crate::plan::Hunk);

impl serde::Serialize for HunkForm<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let h = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("old", &h.old_lines())?;
        map.serialize_entry("new", &h.new_lines())?;
        if let Some(line) = h.line {
            map.serialize_entry("line", &line)?;
        }
        if let Some(anchor) = &h.anchor {
            map.serialize_entry("anchor", anchor)?;
        }
        if h.at_end {
            map.serialize_entry("at_end", &true)?;
        }
        map.end()
    }
}

/// Reads the hunks of an `edit` operation back.
fn hunks_of(value: Option<&Value>) -> Result<Vec<crate::plan::Hunk>, String> {
    let bad =
        || "\"hunks\" must be a list of {\"old\": [lines], \"new\": [lines]} objects".to_string();
    let Some(Value::Array(items)) = value else {
        return Err(bad());
    };
    let lines = |v: Option<&Value>| -> Result<Vec<String>, String> {
        match v {
            // A string holding line breaks is that many lines. A `\r`
            // that ends a whole string is the line's own (a diff that
            // gives its line ends; see apply/exact.rs), not a break.
            Some(Value::Array(lines)) => lines
                .iter()
                .map(|l| {
                    l.as_str().map(|l| {
                        let parts: Vec<&str> = l.split('\n').collect();
                        let last = parts.len() - 1;
                        parts
                            .iter()
                            .enumerate()
                            .map(|(i, part)| match part.strip_suffix('\r') {
                                Some(cut) if i < last => cut.to_owned(),
                                _ => (*part).to_owned(),
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect::<Option<Vec<_>>>()
                .map(|lines| lines.concat())
                .ok_or_else(bad),
            _ => Err(bad()),
        }
    };
    items
        .iter()
        .map(|item| {
            let Value::Object(m) = item else {
                return Err(bad());
            };
            Ok(crate::plan::Hunk {
                line: match m.get("line") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(
                        v.as_u64()
                            .and_then(|n| u32::try_from(n).ok())
                            .ok_or_else(|| "a hunk's \"line\" must be a line number".to_string())?,
                    ),
                },
                anchor: match m.get("anchor") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(a)) => Some(a.clone()),
                    Some(_) => return Err("a hunk's \"anchor\" must be a string".to_string()),
                },
                at_end: matches!(m.get("at_end"), Some(Value::Bool(true))),
                ..crate::plan::Hunk::of_lines(&lines(m.get("old"))?, &lines(m.get("new"))?)
            })
        })
        .collect()
}

/// serde_json's message without its ` at line L column C`: it counts in
/// the document, which inside a fence is not the reply's line; the
/// diagnostic's own position (in the reply) places it.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&at) {
        Some(message) => message.to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Action;

    fn drafts(text: &str) -> (Vec<Draft<'_>>, Vec<(DiagnosticKind, u32)>) {
        let parsed = parse(text);
        let diags = parsed
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.line))
            .collect();
        (parsed.drafts, diags)
    }

    #[test]
    fn the_op_list_reads_every_operation() {
        let text = r#"[
  {"op": "write", "path": "a.txt", "content": "hi\n"},
  {"op": "search", "path": "a.txt", "search": "hi", "replace": "ho", "count": "all"},
  {"op": "delete", "path": "old", "recursive": true},
  {"op": "move", "from": "a.txt", "to": "b.txt"},
  {"op": "insert", "path": "b.txt", "line": 0, "text": "top"},
  {"op": "mkdir", "path": "d"},
  {"op": "read", "grep": "h.", "path": "", "include": "*.txt"},
  {"op": "tasks", "ops": [{"op": "run", "cmd": "ls"}, {"op": "read", "paths": ["b.txt"]}]}
]"#;
        let (drafts, diags) = drafts(text);
        assert_eq!(diags, []);
        let kinds: Vec<OpKind> = drafts.iter().map(|d| d.kind).collect();
        use OpKind::*;
        assert_eq!(
            kinds,
            [Write, Search, Delete, Move, Insert, Mkdir, Read, Tasks]
        );
        assert_eq!(
            drafts.iter().map(|d| d.line).collect::<Vec<_>>(),
            [2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert!(matches!(
            &drafts[1].action,
            Some(Action::Search {
                count: Count::All,
                ..
            })
        ));
        let Some(Action::Block(children)) = &drafts[7].action else {
            panic!()
        };
        assert_eq!(children.len(), 2);
        assert_eq!(children[1].task.to_string(), "8.2");
    }

    #[test]
    fn broken_operations_are_invalid_at_their_line() {
        let text = "[\n{\"op\": \"write\", \"path\": \"a\"},\n{\"op\": \"frob\"},\n{\"op\": \"search\", \"path\": \"a\", \"search\": \" \", \"replace\": \"\"}\n]";
        let (drafts, diags) = drafts(text);
        assert_eq!(drafts.len(), 3);
        assert!(drafts[..2].iter().all(|d| d.action.is_none()));
        // An empty pattern is invalid as in CSL; its path is still read.
        assert!(drafts[2].action.is_some());
        assert_eq!(
            diags,
            [
                (DiagnosticKind::InvalidJsonOperation, 2),
                (DiagnosticKind::InvalidJsonOperation, 3),
                (DiagnosticKind::InvalidJsonOperation, 4)
            ]
        );
        assert_eq!(
            drafts[2].invalid[0].1,
            "Empty search pattern not allowed (\"search\")"
        );
    }

    #[test]
    fn malformed_json_is_fatal_where_it_breaks() {
        let parsed = parse("[\n{\"op\": \"write\",\n \"path\" \"a\"}\n]");
        assert_eq!(parsed.diagnostics.len(), 1);
        let d = &parsed.diagnostics[0];
        assert_eq!((d.kind, d.line), (DiagnosticKind::MalformedJson, 3));
        assert!(parsed.has_fatal());
        let shape = parse("{\"hello\": 1}");
        assert_eq!(shape.diagnostics[0].kind, DiagnosticKind::UnknownJsonShape);
    }

    #[test]
    fn tool_calls_and_cml_tasks_are_read() {
        let text = r#"[
 {"command": "create", "path": "n.txt", "file_text": "x"},
 {"type": "tool_use", "name": "str_replace_based_edit_tool", "input": {"command": "str_replace", "path": "n.txt", "old_str": "x", "new_str": "y"}},
 {"command": "insert", "path": "n.txt", "insert_line": 1, "new_str": "z"},
 {"command": "view", "path": "n.txt"},
 {"command": "undo_edit", "path": "n.txt"}
]"#;
        let (drafts, diags) = drafts(text);
        use OpKind::*;
        assert_eq!(
            drafts.iter().map(|d| d.kind).collect::<Vec<_>>(),
            [Write, Search, Insert, Read, Tasks]
        );
        assert_eq!(diags, [(DiagnosticKind::InvalidJsonOperation, 6)]);
        let cml = r#"{"tasks": [{"action": "edit", "path": "a", "find": "x", "replace": "y"}, {"action": "run", "cmd": "ls"}, {"action": "remove", "path": "d"}]}"#;
        let (drafts, diags) = self::drafts(cml);
        assert_eq!(diags, []);
        assert_eq!(
            drafts.iter().map(|d| d.kind).collect::<Vec<_>>(),
            [Search, Run, Delete]
        );
        assert!(matches!(
            &drafts[2].action,
            Some(Action::Delete {
                recursive: true,
                ..
            })
        ));
    }

    #[test]
    fn the_csl_tree_form_reads_as_csl() {
        let text = r#"{"syntax": "csl", "operations": [
 {"type": "WRITE", "line": 1, "attrs": {"file": "a.txt"}, "content": "<---END--->\nx"},
 {"type": "SEARCH", "line": 5, "attrs": {"file": "a.txt", "count": "zero"}, "pattern": "x", "replacement": "y"}
], "diagnostics": []}"#;
        let (drafts, diags) = drafts(text);
        assert_eq!(drafts.len(), 2);
        let Some(Action::Write { content, .. }) = &drafts[0].action else {
            panic!("{:?}", drafts[0])
        };
        assert_eq!(content, "<---END--->\nx");
        assert_eq!(diags, [(DiagnosticKind::InvalidCount, 3)]);
        assert!(drafts[1].action.is_none());
    }

    /// Found by fuzzing: serde_json's error column fell inside a
    /// character, and rendering the diagnostic sliced through it.
    #[test]
    fn an_error_inside_a_character_renders() {
        let text = "{\" \u{fffd}\0\0c\u{1}ii";
        let parsed = parse(text);
        assert!(parsed.has_fatal());
        for d in &parsed.diagnostics {
            let shown = crate::csl::diagnostic::render(d, &parsed.source, "r.json");
            assert!(shown.contains("malformed_json"), "{shown}");
        }
    }

    #[test]
    fn a_fenced_document_is_read() {
        let text = "Here you go:\n```json\n[{\"op\": \"mkdir\", \"path\": \"d\"}]\n```\n";
        assert!(looks_like_json("  [1]"));
        assert!(!looks_like_json("hello"));
        let (drafts, diags) = drafts(text);
        assert_eq!(diags, []);
        assert_eq!(drafts[0].line, 3);
    }
}
