//! Fuzz target: the CSL front end never panics on arbitrary bytes.
//!
//! The first byte chooses the delimiters: below 0x80 the defaults
//! (`<---` / `--->`), otherwise a start delimiter from `DELIMS` (low seven
//! bits) and, from the second byte, an end delimiter. The rest of the input
//! is the reply. For each reply the target
//!
//! - parses it with `parse_bytes`,
//! - serialises the reply to JSON,
//! - renders every diagnostic as text,
//! - and, when nothing is fatal, prints the operations back as CSL with
//!   `print`, then parses, serialises and renders that text too.
//!
//! Any panic (index out of range, slicing inside a character, overflow with
//! debug assertions, a failing `expect`) is a finding.

#![no_main]

use clada::csl::{self, Delimiters, Reply, diagnostic, print};
use libfuzzer_sys::fuzz_target;

/// Short delimiters, chosen to collide with marker names, attribute syntax,
/// each other and multi-byte characters.
const DELIMS: &[&str] = &[
    "<---",
    "--->",
    "<",
    ">",
    "<<",
    ">>",
    "END>>",
    "[[",
    "]]",
    "END]]",
    "@[[[[",
    "]]]]@",
    "@@",
    "%%",
    "<!--CLADA:",
    ":-->",
    "a",
    "ab",
    "A",
    "END",
    "WRITE",
    "RUN",
    "TO",
    "0",
    "1x",
    "_",
    "x=",
    "=",
    "\"",
    "'",
    "\\",
    "-",
    "--",
    "#",
    "==",
    "<--",
    "-->",
    "{{",
    "}}",
    "a b",
    "<-- -->",
    "\u{e9}",
    "\u{2192}",
    "\u{1f600}",
];

fn delimiters(data: &[u8]) -> (Delimiters, &[u8]) {
    match data {
        [sel, rest @ ..] if *sel < 0x80 => (Delimiters::default(), rest),
        [sel, end, rest @ ..] => {
            let start = DELIMS[usize::from(sel & 0x7f) % DELIMS.len()];
            let end = DELIMS[usize::from(*end) % DELIMS.len()];
            let d = Delimiters::new(start, end).expect("table delimiters are valid");
            (d, rest)
        }
        _ => (Delimiters::default(), &[]),
    }
}

/// Serialises and renders everything in `reply`; nothing may panic.
fn exercise(reply: &Reply<'_>) {
    let json = serde_json::to_string(reply).expect("a reply serialises to JSON");
    std::hint::black_box(json);
    for d in &reply.diagnostics {
        std::hint::black_box(diagnostic::render(d, &reply.source, "fuzz"));
        std::hint::black_box(d.to_string());
    }
    std::hint::black_box(reply.counts());
}

fuzz_target!(|data: &[u8]| {
    let (delims, input) = delimiters(data);
    let reply = csl::parse_bytes(input, &delims);
    exercise(&reply);
    if !reply.has_fatal() {
        let printed = print::print(&reply.operations, &delims);
        let again = csl::parse_bytes(printed.as_bytes(), &delims);
        exercise(&again);
    }
});
