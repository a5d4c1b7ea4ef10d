//! A reply as it was read — its bytes, its name in diagnostics, or that it
//! was over the size limit — and parsing it with its syntax's front end.
//!
//! Data only: reading a file or standard input is the command line's
//! (`cli/input.rs`), reading a note or a commit message is its reader's.
//! The server's hooks (`server`) and `git clada apply` parse replies the
//! same way through [`parse`].

use crate::csl::input::MAX_INPUT;
use crate::csl::{self, Delimiters};
use crate::syntax::{self, Choice, Parsed};

/// The bytes of a reply and a name for it in diagnostics.
pub struct ReplyInput {
    /// A file name, or `<stdin>`.
    pub origin: String,
    pub bytes: Vec<u8>,
    /// Set when the input is over the limit: its size (at least), and
    /// `bytes` holds nothing.
    pub too_large: Option<u64>,
}

impl ReplyInput {
    /// A reply already in memory (a commit message, a note).
    pub fn from_bytes(origin: String, bytes: Vec<u8>) -> ReplyInput {
        if bytes.len() > MAX_INPUT {
            return ReplyInput {
                origin,
                too_large: Some(bytes.len() as u64),
                bytes: Vec::new(),
            };
        }
        ReplyInput {
            origin,
            bytes,
            too_large: None,
        }
    }
}

/// Parses a reply with the front end of its syntax; an input over the
/// size limit is one fatal diagnostic.
pub fn parse<'a>(input: &'a ReplyInput, choice: Choice, delims: &Delimiters) -> Parsed<'a> {
    match input.too_large {
        Some(size) => {
            let reply = csl::Reply {
                source: "".into(),
                operations: Vec::new(),
                diagnostics: vec![csl::input::too_large(size)].into(),
                indented: Vec::new(),
            };
            Parsed {
                syntax: syntax::Syntax::Csl,
                source: "".into(),
                drafts: Vec::new(),
                diagnostics: reply.diagnostics.clone(),
                dropped: Vec::new(),
                csl: Some(reply),
                explanations: Vec::new(),
            }
        }
        None => syntax::parse(&input.bytes, choice, delims),
    }
}
