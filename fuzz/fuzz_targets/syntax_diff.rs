//! Fuzz target: the unified diff front end and the plan never panic on
//! arbitrary bytes read as a unified diff reply, and a parse without fatal
//! errors prints JSON that the `json` front end reads back without one.

#![no_main]

use clada::csl::{Delimiters, diagnostic};
use clada::syntax::{self, Choice, Syntax};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &[u8]| {
    let delims = Delimiters::default();
    let parsed = syntax::parse(reply, Choice::Only(Syntax::Diff), &delims);
    for d in &parsed.diagnostics {
        let _ = diagnostic::render(d, &parsed.source, "fuzz");
    }
    let _ = clada::transaction::tasks_of(&parsed, false, None);
    let json = serde_json::to_string(&parsed).expect("parse output serialises");
    let again = syntax::parse(json.as_bytes(), Choice::Only(Syntax::Json), &delims);
    if !parsed.has_fatal() {
        assert!(!again.has_fatal(), "{json}\n{:?}", again.diagnostics);
    }
});
