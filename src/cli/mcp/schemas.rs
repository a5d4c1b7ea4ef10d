//! The output schemas of the MCP tools: the JSON documents the commands
//! write with `--format json` (doc/report.md), and the documents of the
//! tools that have no such format (show, undo, redo).
//!
//! Written by hand, because the documents are written by hand-made
//! serialisers in several modules; the tests check every document a tool
//! returns against its schema with a JSON Schema validator, so that the
//! two cannot drift apart unnoticed.

use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// A document or the error a command stopped with (`status: "error"`,
/// exit code 2, as `git clada apply --format json` writes it).
fn or_error(document: Value) -> JsonObject {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "anyOf": [document, error()],
    }))
}

fn error() -> Value {
    json!({
        "type": "object",
        "required": ["status", "exit_code", "message"],
        "properties": {
            "status": {"const": "error"},
            "exit_code": {"type": "integer"},
            "message": {"type": "string"},
            "hint": {"type": ["string", "null"]},
        },
    })
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn nullable_string() -> Value {
    json!({"type": ["string", "null"]})
}

fn tally() -> Value {
    json!({
        "type": "object",
        "required": ["succeeded", "failed", "skipped"],
        "properties": {
            "succeeded": {"type": "integer", "minimum": 0},
            "failed": {"type": "integer", "minimum": 0},
            "skipped": {"type": "integer", "minimum": 0},
        },
    })
}

fn diagnostic() -> Value {
    json!({
        "type": "object",
        "required": ["severity", "code", "line", "column", "message"],
        "properties": {
            "severity": {"enum": ["fatal", "invalid", "warning"]},
            "code": {"type": "string"},
            "line": {"type": "integer"},
            "column": {"type": "integer"},
            "operation": nullable_string(),
            "message": {"type": "string"},
            "hint": nullable_string(),
            "task": nullable_string(),
        },
    })
}

fn task() -> Value {
    json!({
        "type": "object",
        "required": ["task", "op", "line", "status", "message", "details"],
        "properties": {
            "task": {"type": "string"},
            "op": {"type": "string"},
            "target": nullable_string(),
            "line": {"type": "integer"},
            "status": {"enum": ["SUCCESS", "ERROR", "SKIP", "FATAL"]},
            "error_type": nullable_string(),
            "message": {"type": "string"},
            "details": strings(),
            "operations": {"type": "array", "items": {"$ref": "#/$defs/task"}},
            "output": {"type": "string"},
            "lines": {"type": "array", "items": {"type": "integer"}},
            "closest": {
                "type": "object",
                "required": ["path", "lines", "similarity", "text"],
                "properties": {
                    "path": {"type": "string"},
                    "lines": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
                    "similarity": {"type": "number"},
                    "text": {"type": "string"},
                },
            },
            "already_present": {"type": "integer"},
        },
    })
}

/// The apply report (doc/report.md).
fn report() -> Value {
    let kept = json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["path", "reason"],
            "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
        },
    });
    json!({
        "type": "object",
        "required": ["status", "exit_code", "message", "syntax", "summary", "tasks", "diagnostics", "worktree"],
        "properties": {
            "status": {"enum": ["success", "failed", "partial", "no_operations", "rejected", "branch_moved", "fatal"]},
            "exit_code": {"type": "integer"},
            "message": {"type": "string"},
            "syntax": {"type": "string"},
            "branch": nullable_string(),
            "base": nullable_string(),
            "pre": nullable_string(),
            "post": nullable_string(),
            "rejected_ref": nullable_string(),
            "summary": tally(),
            "tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}},
            "diagnostics": {"type": "array", "items": diagnostic()},
            "diagnostics_omitted": {"type": "integer"},
            "explanations": {"type": "array"},
            "worktree": {
                "type": "object",
                "required": ["written", "kept", "failed"],
                "properties": {
                    "written": strings(),
                    "kept": kept.clone(),
                    "failed": kept,
                    "left_out": strings(),
                    "left_ignored": strings(),
                },
            },
            "diff": nullable_string(),
            "your_work": strings(),
            "verify": {
                "type": ["object", "null"],
                "properties": {
                    "command": {"type": "string"},
                    "passed": {"type": "boolean"},
                    "message": {"type": "string"},
                    "details": strings(),
                    "output": {"type": "string"},
                },
            },
            "warnings": strings(),
        },
    })
}

fn with_task_defs(mut schema: JsonObject) -> JsonObject {
    schema.insert("$defs".into(), json!({"task": task()}));
    schema
}

pub fn apply() -> JsonObject {
    with_task_defs(or_error(report()))
}

/// `read`: the report of an apply of one READ operation; the text shown
/// is the task's `output`.
pub fn read() -> JsonObject {
    with_task_defs(or_error(report()))
}

/// `git clada parse --format json`.
pub fn check() -> JsonObject {
    or_error(json!({
        "type": "object",
        "required": ["syntax", "operations", "diagnostics", "diagnostics_omitted"],
        "properties": {
            "syntax": {"type": "string"},
            "operations": {"type": "array", "items": {"type": "object"}},
            "diagnostics": {"type": "array", "items": diagnostic()},
            "diagnostics_omitted": {"type": "integer"},
        },
    }))
}

fn status_document() -> Value {
    json!({
        "type": "object",
        "required": ["branch", "head", "detached", "undoable", "redoable", "uncommitted", "rejected", "interrupted_update"],
        "properties": {
            "branch": nullable_string(),
            "head": nullable_string(),
            "detached": {"type": "boolean"},
            "stepped_back": {"type": ["object", "null"]},
            "last_apply": {
                "type": ["object", "null"],
                "properties": {
                    "kind": {"type": "string"},
                    "commit": {"type": "string"},
                    "summary": {"type": "string"},
                    "tasks": {"anyOf": [tally(), {"type": "null"}]},
                    "pre": nullable_string(),
                },
            },
            "undoable": {"type": "integer"},
            "redoable": {"type": "integer"},
            "uncommitted": strings(),
            "rejected": strings(),
            "lock": {"type": ["object", "null"]},
            "interrupted_update": {"type": "boolean"},
        },
    })
}

/// `git clada status --format json`.
pub fn status() -> JsonObject {
    or_error(status_document())
}

/// `git clada log --format json`.
pub fn log() -> JsonObject {
    let entry = json!({
        "type": "object",
        "required": ["commit", "kind", "summary", "time"],
        "properties": {
            "commit": {"type": "string"},
            "kind": {"type": "string"},
            "summary": {"type": "string"},
            "time": {"type": "integer"},
            "tasks": {"anyOf": [tally(), {"type": "null"}]},
            "pre": nullable_string(),
            "base": nullable_string(),
        },
    });
    or_error(json!({
        "type": "object",
        "required": ["entries", "redoable"],
        "properties": {
            "entries": {"type": "array", "items": entry.clone()},
            "redoable": {"type": "array", "items": entry},
        },
    }))
}

/// `show`: what `git clada show` prints, as text.
pub fn show() -> JsonObject {
    or_error(json!({
        "type": "object",
        "required": ["status", "rev", "reply", "text"],
        "properties": {
            "status": {"const": "success"},
            "rev": {"type": "string"},
            "reply": {"type": "boolean"},
            "text": {"type": "string"},
        },
    }))
}

/// `undo` and `redo`: what the command said, and the status after it.
pub fn history() -> JsonObject {
    or_error(json!({
        "type": "object",
        "required": ["status", "exit_code", "message", "state"],
        "properties": {
            "status": {"const": "success"},
            "exit_code": {"const": 0},
            "message": {"type": "string"},
            "state": status_document(),
        },
    }))
}
