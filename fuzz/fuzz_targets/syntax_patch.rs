//! Fuzz target: the patch front end (Codex apply_patch) and the plan never
//! panic on arbitrary bytes read as a patch reply, and a parse without
//! fatal errors prints JSON that the `json` front end reads back without
//! one.

#![no_main]

#[path = "common/check.rs"]
mod check;

use clada::syntax::{Choice, Syntax};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &[u8]| check::check(reply, Choice::Only(Syntax::Patch), None));
