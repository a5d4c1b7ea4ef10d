//! Git hooks: the shims, installing them, and the data hooks exchange.
//!
//! - `shim`: the scripts of the project's `hooks/` folder, built in.
//! - `install`: putting shims into a hooks directory and taking them out,
//!   never losing a hook that was there before.
//! - `updates`: the `<old> <new> <ref>` lines receive hooks read.
//! - `result`: the result note a server writes for each request.
//! - `requests`: the names of the per-request protocol's references.
//! - `branches`: which branches requests may write.
//!
//! What the server's hooks do is in `server/` (the client's post-commit is
//! `cli/hook/client.rs`); nothing here touches git objects.

pub mod branches;
pub mod install;
pub mod requests;
pub mod result;
pub mod shim;
pub mod updates;
