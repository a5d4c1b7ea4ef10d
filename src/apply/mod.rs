//! Carrying out operations on file contents.
//!
//! Owns what each operation does to the bytes of one file, independent of
//! where files live (a git tree in memory or a working directory): the
//! transaction code reads a file, calls in here, and writes the result.
//!
//! One module per operation: SEARCH (`search`), with its line-ending model
//! (`text`) and the no-match feedback (`feedback`); WRITE content rules
//! (`write`); INSERT (`insert`); delete, move and mkdir (`paths`); READ
//! (`read`); EDIT (`edit`, and `exact` for hunks that give their line
//! ends); CREATE (`create`) and a file's mode (`mode`). `exec` runs a plan through them; `files` is the store they
//! edit, `dir` the store of `--no-git`.

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
pub mod read;
pub mod search;
pub mod text;
pub mod write;
