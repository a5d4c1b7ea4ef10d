//! Property: printing a syntax tree as CSL and parsing it back gives the
//! same tree (operations, attributes, contents; not positions).

use std::borrow::Cow;

use clada::csl::{self, Attr, Body, Delimiters, Operation, Span, TaskId};
use proptest::prelude::*;

/// A tree without positions, which is what must survive the round trip.
#[derive(Debug, Clone, PartialEq)]
enum Model {
    Write(Vec<(String, String)>, String),
    Run(Vec<(String, String)>, String),
    Search(Vec<(String, String)>, String, Option<String>, String),
    Tasks(Vec<(String, String)>, Vec<Model>),
}

fn attrs_of(op: &Operation<'_>) -> Vec<(String, String)> {
    op.attrs
        .iter()
        .map(|a| (a.name.to_string(), a.value.to_string()))
        .collect()
}

fn model_of(op: &Operation<'_>) -> Model {
    let attrs = attrs_of(op);
    match &op.body {
        Body::Write { content } => Model::Write(attrs, content.to_string()),
        Body::Run { content } => Model::Run(attrs, content.to_string()),
        Body::Search {
            pattern,
            to,
            replacement,
        } => Model::Search(
            attrs,
            pattern.to_string(),
            to.as_ref().map(|t| t.to_string()),
            replacement.to_string(),
        ),
        Body::Tasks { operations } => {
            Model::Tasks(attrs, operations.iter().map(model_of).collect())
        }
    }
}

fn attrs_from(list: &[(String, String)]) -> Vec<Attr<'_>> {
    list.iter()
        .map(|(n, v)| Attr {
            name: n,
            value: Cow::Borrowed(v),
            span: Span::default(),
        })
        .collect()
}

fn op_of(model: &Model) -> Operation<'_> {
    let attrs = attrs_from;
    let (attrs, body) = match model {
        Model::Write(a, c) => (attrs(a), Body::Write { content: c.into() }),
        Model::Run(a, c) => (attrs(a), Body::Run { content: c.into() }),
        Model::Search(a, p, t, r) => (
            attrs(a),
            Body::Search {
                pattern: p.into(),
                to: t.as_deref().map(Cow::Borrowed),
                replacement: r.into(),
            },
        ),
        Model::Tasks(a, children) => (
            attrs(a),
            Body::Tasks {
                operations: children.iter().map(op_of).collect(),
            },
        ),
    };
    Operation {
        line: 0,
        line_start: 0,
        task: TaskId { top: 0, sub: None },
        attrs,
        body,
        starts_another: None,
    }
}

/// Attribute lists with distinct names from the allowed character set and
/// values with quotes and backslashes (which need escaping).
fn attrs() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::btree_map(
        "[a-z@$_-]{1,6}|[0-9]{1,3}",
        "[ a-z\"'\\\\./<>=-]{0,8}",
        0..3,
    )
    .prop_map(|m| m.into_iter().collect())
}

/// Section text: lines that do not start with the start delimiter and hold
/// no CR. Blank lines and a trailing newline included.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec("([a-z -]|>|<|\t){0,10}", 0..5).prop_map(|lines| {
        lines
            .into_iter()
            .map(|l| {
                if l.starts_with('<') {
                    format!(" {l}")
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn leaf() -> impl Strategy<Value = Model> {
    prop_oneof![
        (attrs(), text()).prop_map(|(a, c)| Model::Write(a, c)),
        (attrs(), text()).prop_map(|(a, c)| Model::Run(a, c)),
        (attrs(), text(), proptest::option::of(text()), text())
            .prop_map(|(a, p, t, r)| Model::Search(a, p, t, r)),
    ]
}

fn operation() -> impl Strategy<Value = Model> {
    prop_oneof![
        3 => leaf(),
        1 => (attrs(), proptest::collection::vec(leaf(), 0..4)).prop_map(|(a, c)| Model::Tasks(a, c)),
    ]
}

proptest! {
    #[test]
    fn print_then_parse_gives_the_same_tree(
        models in proptest::collection::vec(operation(), 0..6),
        custom in any::<bool>(),
    ) {
        let delims = if custom {
            Delimiters::new("@@[", "]@@").unwrap()
        } else {
            Delimiters::default()
        };
        let ops: Vec<Operation<'_>> = models.iter().map(op_of).collect();
        let printed = csl::print::print(&ops, &delims);
        let reply = csl::parse(&printed, &delims);
        prop_assert!(!reply.has_fatal(), "{printed}\n{:?}", reply.diagnostics);
        let back: Vec<Model> = reply.operations.iter().map(model_of).collect();
        prop_assert_eq!(back, models, "printed:\n{}", printed);
    }
}

/// The plan of a reply, without positions and without the words of its
/// skip reasons (the JSON forms say "missing field" where CSL says
/// "Missing required attribute"): what must survive parse → JSON → apply.
#[derive(Debug, PartialEq)]
enum Planned {
    Single(clada::plan::Op),
    Block(Vec<clada::plan::Op>),
    Skipped(csl::OpKind, Option<&'static str>),
}

fn planned(tasks: Vec<clada::plan::Task>) -> Vec<Planned> {
    use clada::plan::Task;
    tasks
        .into_iter()
        .map(|t| match t {
            Task::Single(step) => Planned::Single(step.op),
            Task::Block { steps, .. } => Planned::Block(steps.into_iter().map(|s| s.op).collect()),
            Task::Skipped { skip, .. } => Planned::Skipped(skip.kind, skip.error_type),
        })
        .collect()
}

/// The plan `git clada apply --syntax NAME` makes of `text`.
fn plan_of(text: &str, choice: clada::syntax::Choice) -> (Vec<Planned>, String) {
    let parsed = clada::syntax::parse(text.as_bytes(), choice, &Delimiters::default());
    assert!(!parsed.has_fatal(), "{text}\n{:?}", parsed.diagnostics);
    let json = serde_json::to_string(&parsed).expect("parse output as JSON");
    (
        planned(clada::transaction::tasks_of(&parsed, false, None)),
        json,
    )
}

/// Attributes CSL's operations understand, with good and bad values.
fn csl_attrs(kind: u8) -> impl Strategy<Value = Vec<(String, String)>> {
    let file = prop_oneof![
        Just("a.txt"),
        Just("src/b c.rs"),
        Just("../out.txt"),
        Just(".git/config"),
        Just("./d/../e.txt"),
        Just("")
    ];
    let count = prop_oneof![Just("1"), Just("3"), Just("all"), Just("0"), Just("x")];
    let append = prop_oneof![Just("true"), Just("false"), Just("maybe")];
    let dir = prop_oneof![Just("sub"), Just("."), Just("/tmp")];
    (
        proptest::option::weighted(0.9, file),
        proptest::option::of(count),
        proptest::option::of(append),
        proptest::option::of(dir),
    )
        .prop_map(move |(file, count, append, dir)| {
            let mut attrs = Vec::new();
            let mut add = |k: &str, v: Option<&str>| {
                if let Some(v) = v {
                    attrs.push((k.to_string(), v.to_string()));
                }
            };
            match kind {
                0 => {
                    add("file", file);
                    add("append", append);
                }
                1 => add("dir", dir),
                _ => {
                    add("file", file);
                    add("count", count);
                }
            }
            attrs
        })
}

fn csl_leaf() -> impl Strategy<Value = Model> {
    prop_oneof![
        (csl_attrs(0), text()).prop_map(|(a, c)| Model::Write(a, c)),
        (csl_attrs(1), text()).prop_map(|(a, c)| Model::Run(a, c)),
        (csl_attrs(2), text(), proptest::option::of(text()), text())
            .prop_map(|(a, p, t, r)| Model::Search(a, p, t, r)),
    ]
}

fn csl_operation() -> impl Strategy<Value = Model> {
    prop_oneof![
        3 => csl_leaf(),
        1 => proptest::collection::vec(csl_leaf(), 1..4).prop_map(|c| Model::Tasks(Vec::new(), c)),
    ]
}

proptest! {
    /// `git clada parse --format json reply | git clada apply --syntax json -`
    /// makes the plan the reply makes, and so does the parse output of
    /// that JSON (the operation-list form) read once more.
    #[test]
    fn parse_output_read_as_json_gives_the_same_plan(
        models in proptest::collection::vec(csl_operation(), 1..6),
    ) {
        use clada::syntax::{Choice, Syntax};
        let ops: Vec<Operation<'_>> = models.iter().map(op_of).collect();
        let reply = csl::print::print(&ops, &Delimiters::default());
        let (from_csl, tree_json) = plan_of(&reply, Choice::Auto);
        let (from_tree, list_json) = plan_of(&tree_json, Choice::Only(Syntax::Json));
        prop_assert_eq!(&from_tree, &from_csl, "reply:\n{}\njson:\n{}", reply, tree_json);
        let (from_list, _) = plan_of(&list_json, Choice::Only(Syntax::Json));
        prop_assert_eq!(&from_list, &from_csl, "json:\n{}", list_json);
        // Detection reads the parse output as JSON by itself.
        let auto = clada::syntax::parse(list_json.as_bytes(), Choice::Auto, &Delimiters::default());
        prop_assert_eq!(auto.syntax, Syntax::Json);
    }
}
