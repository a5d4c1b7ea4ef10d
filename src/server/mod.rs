//! The server as a library (doc/hooks.md): what the receive hooks decide
//! and do, as the apply is a library in `transaction`. The command line
//! (`cli/hook/`, `cli/push_reply/`) reads the hook's input and its
//! arguments, calls in here, prints what comes back and turns it into an
//! exit status.
//!
//! - `receive`: a push's reference updates and what they are (inbox
//!   notes, requests of their own, branch pushes, references only the
//!   hooks write); pre-receive's checks, post-receive's answers (the
//!   apply, the result note and references, the post commit's trailers),
//!   and the server's settings as one value (`receive::Server`).
//! - `request`: requests of their own, the claims a live hook holds on
//!   them, and recovering the ones a stopped hook left.
//! - `authorize`: who pushed a request, and whether they may write its
//!   branch (`clada.authorize`, the command run for each branch).
//! - `expire`: removing results older than `clada.resultsExpire`.
//! - `log`: the request log and what it sums up to.
//! - `client` and `rebuild`: push-reply's side of the protocol: the
//!   request commit, its id, whether a result is its answer; the post
//!   commit taken from the push's output, rebuilt from the reply.
//!
//! The hooks never print while they hold a lock: what they say goes into
//! a `String` the caller prints when they are done. Settings layers, the
//! rendering of an apply's report and of diagnostics are the command
//! line's: the library asks for them through [`Host`], which the command
//! line implements (so nothing here depends on `cli`).

/// Appends a line to a receive hook's output (`format!`'s arguments).
/// The receive hooks write what they say into a buffer, which the
/// caller prints when they are done: never while they hold the
/// repository's lock, where a pusher that stopped reading would hold up
/// every other push.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = writeln!($out, $($arg)*);
    }};
}

pub mod authorize;
pub mod client;
pub mod expire;
pub mod log;
pub mod rebuild;
pub mod receive;
pub mod request;

use crate::csl::Delimiters;
use crate::git::commit::Identity;
use crate::git::{ObjectId, Repository};
use crate::reply::ReplyInput;
use crate::syntax::{Choice, Parsed};
use crate::transaction::{self, Applied, Target};

/// Why a hook stopped before it had answered (the command line's exit
/// status 2), with what to do next.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub message: String,
    /// What to do next.
    pub hint: Option<String>,
}

impl Error {
    /// An error saying `message`; an I/O error's `(os error N)` in it is
    /// dropped (`words`), as the command line says its errors.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: crate::words::plain(&message.into()),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }
}

/// How a hook ended: everything it had to do went well, or something
/// was refused or failed (its output says what).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failed,
}

/// What the server asks of its caller: what the command line owns (its
/// settings layers, the apply's report, diagnostics as `git clada parse`
/// prints them), so that a server and `git clada apply` read settings and
/// render reports the same way.
pub trait Host {
    /// The server's settings, from its git config only (a pushed tree
    /// must not decide what the server runs or where it writes).
    fn settings(&self, repo: &Repository) -> Result<receive::Settings, Error>;

    /// How replies are read (`clada.syntax`).
    fn syntax(&self, repo: &Repository) -> Result<Choice, Error>;

    /// The marker delimiters (`clada.startDelimiter`, `clada.endDelimiter`).
    fn delimiters(&self, repo: &Repository) -> Result<Delimiters, Error>;

    /// Who the hooks' commits are by (`clada.gitAuthor`).
    fn author(&self, repo: &Repository) -> Result<Identity, Error>;

    /// Every diagnostic of `parsed` and its summary line, as `git clada
    /// parse` prints them.
    fn diagnostics(
        &self,
        out: &mut dyn std::io::Write,
        parsed: &Parsed<'_>,
        origin: &str,
    ) -> std::io::Result<()>;

    /// Applies `parsed` (no fatal error) to `target` with the settings of
    /// `repo`'s config and the team file the transaction reads, no one to
    /// ask; the result and its text report (task lines, then trailers).
    fn apply(
        &self,
        repo: &Repository,
        input: &ReplyInput,
        parsed: &Parsed<'_>,
        target: &Target<'_>,
    ) -> Result<(Applied, Vec<u8>), Error>;

    /// The tree an apply of `parsed` on `base` makes where there is no
    /// working tree, RUN refused for `refuse_run`
    /// ([`transaction::replay_tree`] with the same settings as
    /// [`Host::apply`]); `None` when the reply runs commands.
    fn replayed_tree(
        &self,
        repo: &Repository,
        parsed: &Parsed<'_>,
        base: ObjectId,
        refuse_run: Option<&str>,
    ) -> Result<Option<ObjectId>, transaction::Error>;
}

#[cfg(test)]
mod tests {
    /// The library stands on its own: what it needs of the command line
    /// it asks through [`super::Host`], never by naming `cli`.
    #[test]
    fn the_server_library_does_not_use_the_command_line() {
        let sources = [
            ("mod.rs", include_str!("mod.rs")),
            ("authorize.rs", include_str!("authorize.rs")),
            ("client.rs", include_str!("client.rs")),
            ("expire.rs", include_str!("expire.rs")),
            ("log.rs", include_str!("log.rs")),
            ("rebuild.rs", include_str!("rebuild.rs")),
            ("receive.rs", include_str!("receive.rs")),
            ("request.rs", include_str!("request.rs")),
            ("../reply.rs", include_str!("../reply.rs")),
        ];
        // Spelled in two pieces, so that this file does not match itself.
        let cli = ["crate", "::cli"].concat();
        for (name, text) in sources {
            assert!(!text.contains(&cli), "server/{name} names {cli}");
        }
    }
}
