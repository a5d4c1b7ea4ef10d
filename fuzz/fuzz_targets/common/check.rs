//! The check every syntax fuzz target makes on one input: the front end
//! and the plan never panic; the parse output serialises to JSON, every
//! diagnostic renders, and the JSON parse output read back as a `json`
//! reply has no fatal error when the first parse had none.

use clada::csl::{Delimiters, diagnostic};
use clada::syntax::{self, Choice, Syntax};

/// Checks `reply` read as `choice`; `root`: the working tree the plan
/// tries absolute paths against (SHAM's and TELT's rule), if any.
pub fn check(reply: &[u8], choice: Choice, root: Option<&std::path::Path>) {
    let delims = Delimiters::default();
    let parsed = syntax::parse(reply, choice, &delims);
    for d in &parsed.diagnostics {
        let _ = diagnostic::render(d, &parsed.source, "fuzz");
    }
    let _ = clada::transaction::tasks_of(&parsed, false, root);
    let json = serde_json::to_string(&parsed).expect("parse output serialises");
    let again = syntax::parse(json.as_bytes(), Choice::Only(Syntax::Json), &delims);
    if !parsed.has_fatal() {
        assert!(!again.has_fatal(), "{json}\n{:?}", again.diagnostics);
    }
}
