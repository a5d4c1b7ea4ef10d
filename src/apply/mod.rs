//! Carrying out operations on file contents.
//!
//! Owns what each operation does to the bytes of one file, independent of
//! where files live (a git tree in memory or a working directory): the
//! transaction code reads a file, calls in here, and writes the result.
//!
//! One module per operation: SEARCH (`search`), with its line-ending model
//! (`text`), the no-match feedback (`feedback`) and the advice for a
//! pattern that matches several places (`apart`); WRITE content rules
//! (`write`); the lazy-placeholder guard of every edit (`placeholder`);
//! INSERT (`insert`); delete, move and mkdir (`paths`); READ (`read`);
//! EDIT (`edit`, its loose steps' rules in `loose`, and `exact` for hunks
//! that give their line ends); CREATE (`create`) and a file's mode
//! (`mode`). `exec` runs a plan through them; `files` is the store they
//! edit, `dir` the store of `--no-git`.

pub mod apart;
pub mod create;
pub mod dir;
pub mod edit;
pub mod exact;
pub mod exec;
pub mod feedback;
pub mod files;
pub mod insert;
pub mod loose;
pub mod mode;
pub mod paths;
pub mod placeholder;
pub mod read;
pub mod search;
pub mod suggest;
pub mod text;
pub mod write;
