//! git-clada: apply the file edits and commands an LLM writes in its reply,
//! safely and inside git history.
//!
//! The phases of an apply, and the module that owns each:
//!
//! 1. **Read** the reply: a file, stdin, a commit message or a note (`cli`).
//! 2. **Parse and validate** the CSL in it (`csl`): pure, no I/O, no git.
//!    Problems are data (diagnostics), never panics or early returns.
//! 3. **Transact** with the repository (`git`): snapshot, edit trees in
//!    memory, commit, compare-and-swap the branch. Only `git` imports gix.
//! 4. **Report** what happened in words the reply's author can act on.
//!
//! Dependencies point one way: `cli → git, csl`; `csl` depends on nothing
//! of ours but `style` (the colours of the text output, a leaf).
//! `main.rs` only maps the outcome of [`cli::main`] to an exit code.
//!
//! The apply is a library (`transaction`), and so is the server's side
//! of the hooks (`server`): the command line reads arguments and input,
//! calls them, and prints.
//!
//! The history commands (undo, redo, squash, step-back, step-forward,
//! status, log, show) read the commits an apply writes through `history`
//! and move the branch, HEAD and the working tree through `git`
//! (doc/history.md).

pub mod apply;
pub mod cli;
pub mod csl;
pub mod fault;
pub mod fsmode;
pub mod git;
pub mod history;
pub mod hook;
pub mod plan;
pub mod progress;
pub mod quote;
pub mod reply;
pub mod report;
pub mod run;
pub mod server;
pub mod style;
pub mod syntax;
pub mod transaction;
pub mod vocab;
pub mod words;
