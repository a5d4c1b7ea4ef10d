//! The syntax tree of a parsed reply.
//!
//! Owns the shapes of operations and attributes. Everything borrows from the
//! reply text where it can: content that needed no line-end normalisation and
//! attribute values without escapes are slices of the input, so a 20 MB reply
//! is not copied again while it is parsed and printed.

use std::borrow::Cow;
use std::fmt;

/// The kinds of operation of the plan (syntaxes.md §1). CSL writes the
/// first four as markers ([`OpKind::CSL`]); the others come from the other
/// syntaxes, and CSL keeps RUN `rm`/`mv` for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Write,
    Run,
    Search,
    Tasks,
    Delete,
    Move,
    Insert,
    Mkdir,
    Read,
    Edit,
    /// A file's mode (executable bit, symbolic link): a diff's mode lines.
    Mode,
}

impl OpKind {
    /// The operations CSL has markers for, in the order the spec lists them.
    pub const CSL: [OpKind; 4] = [OpKind::Write, OpKind::Run, OpKind::Search, OpKind::Tasks];

    /// Every operation of the plan.
    pub const ALL: [OpKind; 11] = [
        OpKind::Write,
        OpKind::Run,
        OpKind::Search,
        OpKind::Tasks,
        OpKind::Delete,
        OpKind::Move,
        OpKind::Insert,
        OpKind::Mkdir,
        OpKind::Read,
        OpKind::Edit,
        OpKind::Mode,
    ];

    /// The name in reports and JSON `type` fields; for the CSL four, the
    /// marker name.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Write => "WRITE",
            OpKind::Run => "RUN",
            OpKind::Search => "SEARCH",
            OpKind::Tasks => "TASKS",
            OpKind::Delete => "DELETE",
            OpKind::Move => "MOVE",
            OpKind::Insert => "INSERT",
            OpKind::Mkdir => "MKDIR",
            OpKind::Read => "READ",
            OpKind::Edit => "EDIT",
            OpKind::Mode => "MODE",
        }
    }

    /// The CSL operation a marker name opens, if it is one (case-sensitive).
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::CSL.into_iter().find(|k| k.name() == name)
    }

    /// Attribute names this CSL operation understands; others draw a warning.
    pub fn known_attributes(self) -> &'static [&'static str] {
        match self {
            OpKind::Write => &["file", "append"],
            OpKind::Run => &["dir"],
            OpKind::Search => &["file", "count"],
            OpKind::Tasks => &["version"],
            _ => &[],
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A half-open byte range into the reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
}

/// The number a task gets in reports: `3` for a top-level operation or TASKS
/// block, `3.2` for the second operation inside block 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskId {
    pub top: u32,
    pub sub: Option<u32>,
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sub {
            Some(sub) => write!(f, "{}.{}", self.top, sub),
            None => write!(f, "{}", self.top),
        }
    }
}

/// One `name="value"` pair of a marker, value already unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr<'a> {
    pub name: &'a str,
    pub value: Cow<'a, str>,
    /// Where the attribute (name through closing quote) stands in the reply.
    pub span: Span,
}

/// What an operation carries besides its attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    Write {
        content: Cow<'a, str>,
    },
    Run {
        content: Cow<'a, str>,
    },
    Search {
        pattern: Cow<'a, str>,
        /// The end text of a range SEARCH (`<---TO--->`), absent otherwise.
        to: Option<Cow<'a, str>>,
        replacement: Cow<'a, str>,
    },
    Tasks {
        operations: Vec<Operation<'a>>,
    },
}

/// One parsed operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation<'a> {
    /// 1-based line of the opening marker in the original input.
    pub line: u32,
    /// Byte offset where the opening marker's line starts.
    pub line_start: usize,
    pub task: TaskId,
    /// In the order written; a duplicate name is a fatal error and is not kept.
    pub attrs: Vec<Attr<'a>>,
    pub body: Body<'a>,
    /// The first line of its content that starts another operation (a
    /// forgotten END above it, most likely): the operation is not run on
    /// such a guess (csl.md §6). Said by a warning too, which may be past
    /// the diagnostics' cap; the plan reads it here.
    pub starts_another: Option<u32>,
}

impl<'a> Operation<'a> {
    pub fn kind(&self) -> OpKind {
        match self.body {
            Body::Write { .. } => OpKind::Write,
            Body::Run { .. } => OpKind::Run,
            Body::Search { .. } => OpKind::Search,
            Body::Tasks { .. } => OpKind::Tasks,
        }
    }

    /// The value of attribute `name`, if the marker has it.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_ref())
    }

    /// The operations of a TASKS block; empty for every other operation.
    pub fn children(&self) -> &[Operation<'a>] {
        match &self.body {
            Body::Tasks { operations } => operations,
            _ => &[],
        }
    }
}
