//! Fuzz target: detection, the front ends and the plan never panic on
//! arbitrary bytes, whatever syntax is chosen.
//!
//! The first byte chooses the syntax (`auto` or one of the names); the rest
//! is the reply. For each reply the target parses it, serialises the parse
//! output to JSON, renders every diagnostic, builds the plan (paths
//! checked), and reads the JSON parse output back as a `json` reply, which
//! must have no fatal error when the first parse had none.

#![no_main]

#[path = "common/check.rs"]
mod check;

use clada::syntax::{Choice, Syntax};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, reply)) = data.split_first() else {
        return;
    };
    let choice = match first as usize % (Syntax::ALL.len() + 1) {
        0 => Choice::Auto,
        n => Choice::Only(Syntax::ALL[n - 1]),
    };
    check::check(reply, choice, None);
});
