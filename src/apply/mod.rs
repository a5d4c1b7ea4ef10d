//! Carrying out operations on file contents.
//!
//! Owns what each operation does to the bytes of one file, independent of
//! where files live (a git tree in memory or a working directory): the
//! transaction code reads a file, calls in here, and writes the result.
//!
//! Built so far: SEARCH (`search`), with its line-ending model (`text`) and
//! the no-match feedback (`feedback`); WRITE content rules (`write`).

pub mod dir;
pub mod exec;
pub mod feedback;
pub mod files;
pub mod search;
pub mod text;
pub mod write;
