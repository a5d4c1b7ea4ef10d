//! End-to-end and cross-cutting tests, one module per subject.
//!
//! Every test that runs the binary goes through [`common::clada`], which
//! clears the environment and git configuration so that no developer
//! setting or clock can change a result.

mod apply;
mod apply_diff;
// Crashes are made at fault points, which only a debug build has
// (src/fault.rs): `cargo test --release` leaves these out.
#[cfg(debug_assertions)]
mod apply_crash;
mod color;
mod common;
mod completions;
mod conformance;
mod fidelity;
mod help;
mod hints;
mod history;
#[cfg(debug_assertions)]
mod history_crash;
mod history_fixture;
mod history_model;
mod hook;
mod hook_authorize;
mod hook_guard;
mod http;
mod limits;
mod loose;
mod loose_writes;
mod mcp;
mod messages;
mod parse;
mod progress;
mod pty;
mod push_truth;
mod roundtrip;
mod run;
mod try_script;
