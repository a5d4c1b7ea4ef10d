//! Fuzz target: the TELT front end and the plan never panic on arbitrary
//! bytes read as TELT.
//!
//! For each reply the target parses it with `--syntax telt`, serialises the
//! parse output to JSON, renders every diagnostic, builds the plan (with a
//! working tree, so absolute paths are tried against it), and reads the
//! JSON parse output back as a `json` reply, which must have no fatal
//! error when the first parse had none.

#![no_main]

#[path = "common/check.rs"]
mod check;

use clada::syntax::{Choice, Syntax};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &[u8]| check::check(
    reply,
    Choice::Only(Syntax::Telt),
    Some(std::path::Path::new("/repo"))
));
