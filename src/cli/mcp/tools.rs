//! The tools `git clada mcp` offers: names, descriptions, typed
//! arguments (their input schema is derived from the types), output
//! schemas (`schemas`) and annotations that say what each does to the
//! repository.
//!
//! Arguments are read strictly: an unknown field, a missing one or one of
//! the wrong type is a JSON-RPC error (-32602) whose message names it.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use super::schemas;

/// `apply`: a reply, applied as `git clada apply` applies it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct ApplyParams {
    /// The reply: file edits and commands in any syntax git-clada reads
    /// (CSL, aider SEARCH/REPLACE, Codex apply_patch, unified diff, JSON
    /// operations, Claude text-editor calls, CML, SHAM, TELT, replacer).
    pub reply: String,
    /// The reply's syntax; detected from the text when absent or "auto".
    pub syntax: Option<String>,
    /// Change nothing: the result holds the patch (`diff`) that `git
    /// apply` takes.
    #[serde(default)]
    pub dry_run: bool,
    /// A command run on the result before the branch moves; if it fails,
    /// nothing is applied. Runs only if the user configured it as
    /// `clada.verify`, approved it (`git clada allow`), or approves it
    /// when asked.
    pub verify: Option<String>,
    /// Apply all tasks or none.
    #[serde(default)]
    pub atomic: bool,
    /// How SEARCH patterns match: "exact" (default) or "whitespace".
    #[serde(rename = "match")]
    pub match_mode: Option<MatchParam>,
    /// How much a failed SEARCH explains: "minimal" (default) or "full"
    /// (also the line-by-line diff against the closest match).
    pub error_detail: Option<DetailParam>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars")]
pub enum MatchParam {
    Exact,
    Whitespace,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars")]
pub enum DetailParam {
    Minimal,
    Full,
}

/// `check`: parse only.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct CheckParams {
    /// The reply to check, in any syntax.
    pub reply: String,
    /// The reply's syntax; detected from the text when absent or "auto".
    pub syntax: Option<String>,
}

/// `read`: one read operation of the plan.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct ReadParams {
    /// Files to show, relative to the repository's root.
    pub paths: Option<Vec<String>>,
    /// With one file in `paths`: only these lines, 1-based and inclusive
    /// ([first, last]).
    pub lines: Option<[u32; 2]>,
    /// A directory to list ("" or "." for the root).
    pub list: Option<String>,
    /// A regular expression to search for, in the files under `path`.
    pub grep: Option<String>,
    /// Where `grep` searches (default: the whole repository).
    pub path: Option<String>,
    /// With `grep`: only files whose names match this glob.
    pub include: Option<String>,
    /// A glob: the files whose paths (relative to `base`) match it.
    pub glob: Option<String>,
    /// Where `glob` looks (default: the root).
    pub base: Option<String>,
}

/// `undo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct UndoParams {
    /// How many applies to undo, newest first (default 1).
    pub count: Option<u32>,
}

/// Tools without arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct NoParams {}

/// `log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct LogParams {
    /// Where to start (default: the branch's tip).
    pub rev: Option<String>,
    /// At most this many applies.
    pub max_count: Option<usize>,
}

/// `show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub struct ShowParams {
    /// The apply (a commit; default HEAD).
    pub rev: Option<String>,
    /// Show the reply that made it rather than the apply.
    #[serde(default)]
    pub reply: bool,
}

/// The tools, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        tool::<ApplyParams>(
            "apply",
            "Apply a reply (file edits and commands, in any syntax) to the repository's current branch as one git transaction: your uncommitted work is saved in a `pre` commit and never overwritten, the edits are committed as `post`, the branch moves only if nothing moved it meanwhile. The result lists each task; a failed SEARCH names the closest match. isError is set when not every task applied: fix the failed tasks and send only those again. `git clada undo` (the undo tool) takes an apply back.",
            schemas::apply(),
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
        tool::<CheckParams>(
            "check",
            "Parse a reply without applying it: the syntax it is read as, each operation, and every problem with its code, line and a hint. Changes nothing.",
            schemas::check(),
            read_only(),
        ),
        tool::<ReadParams>(
            "read",
            "Read the working tree as a reply's READ operations do: files (optionally a range of lines of one file), a directory listing, grep (a regular expression) or glob. Exactly one of paths, list, grep, glob. Paths are relative to the repository; output is capped as in apply.",
            schemas::read(),
            read_only(),
        ),
        tool::<NoParams>(
            "status",
            "Where the branch is: the last apply, how many applies can be undone or redone, uncommitted paths, rejected results, clada's lock.",
            schemas::status(),
            read_only(),
        ),
        tool::<LogParams>(
            "log",
            "The applies on the branch, newest first, and the undone ones that redo restores.",
            schemas::log(),
            read_only(),
        ),
        tool::<ShowParams>(
            "show",
            "One apply: its base, its report and the files it changed; or, with reply, the reply that made it.",
            schemas::show(),
            read_only(),
        ),
        tool::<UndoParams>(
            "undo",
            "Undo the newest apply (or the newest `count`): the branch goes back to where the apply started and the working tree to the user's state before it. Redo restores it.",
            schemas::history(),
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
        tool::<NoParams>(
            "redo",
            "Redo the last undone apply.",
            schemas::history(),
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

fn tool<P: JsonSchema>(
    name: &'static str,
    description: &'static str,
    output: JsonObject,
    annotations: ToolAnnotations,
) -> Tool {
    let mut tool = Tool::new(name, description, Arc::new(input_schema::<P>()));
    tool.output_schema = Some(Arc::new(output));
    tool.annotations = Some(annotations);
    tool
}

/// The JSON Schema of a tool's arguments, derived from their type.
fn input_schema<P: JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<P>();
    match serde_json::to_value(schema) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}
