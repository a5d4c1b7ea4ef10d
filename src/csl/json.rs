//! The JSON form of a parsed reply (csl.md §7).
//!
//! Owns the serde mapping of the syntax tree and diagnostics. Serialisation
//! streams straight into a writer: content is never copied into an
//! intermediate `serde_json::Value`.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::Reply;
use super::ast::{Attr, Body, Operation};
use super::diagnostic::Diagnostic;

impl Serialize for Reply<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("operations", &self.operations)?;
        map.serialize_entry("diagnostics", &self.diagnostics)?;
        map.serialize_entry("diagnostics_omitted", &self.diagnostics.omitted().total())?;
        map.end()
    }
}

impl Serialize for Operation<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", self.kind().name())?;
        map.serialize_entry("line", &self.line)?;
        map.serialize_entry("attrs", &Attrs(&self.attrs))?;
        match &self.body {
            Body::Write { content } | Body::Run { content } => {
                map.serialize_entry("content", content)?;
            }
            Body::Search {
                pattern,
                to,
                replacement,
            } => {
                map.serialize_entry("pattern", pattern)?;
                if let Some(to) = to {
                    map.serialize_entry("to", to)?;
                }
                map.serialize_entry("replacement", replacement)?;
            }
            Body::Tasks { operations } => {
                map.serialize_entry("operations", operations)?;
            }
        }
        map.end()
    }
}

/// Attributes as a JSON object, in the order written.
struct Attrs<'r, 'a>(&'r [Attr<'a>]);

impl Serialize for Attrs<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for attr in self.0 {
            map.serialize_entry(attr.name, &attr.value)?;
        }
        map.end()
    }
}

impl Serialize for Diagnostic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(8))?;
        map.serialize_entry("severity", self.severity().name())?;
        map.serialize_entry("code", self.kind.code())?;
        map.serialize_entry("line", &self.line)?;
        map.serialize_entry("column", &self.column)?;
        map.serialize_entry("operation", &self.operation.map(|o| o.name()))?;
        map.serialize_entry("message", &self.message)?;
        map.serialize_entry("hint", &self.hint)?;
        map.serialize_entry("task", &self.task.map(|t| t.to_string()))?;
        map.end()
    }
}
