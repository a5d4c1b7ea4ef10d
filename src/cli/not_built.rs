//! Subcommands that exist in the interface but are not built yet.
//!
//! They accept any arguments, do nothing, say so, and exit non-zero, so a
//! script can never mistake them for a success.

use std::ffi::OsString;

use super::{CliError, Outcome};

#[derive(Debug, clap::Args)]
pub struct NotBuiltArgs {
    /// Arguments, ignored until the command is built
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<OsString>,
}

pub fn run_not_built(name: &str, issue: u32) -> Result<Outcome, CliError> {
    Err(CliError::new(format!(
        "`git clada {name}` is not built yet; nothing was done"
    ))
    .hint(format!(
        "it is planned in issue {issue}; `git clada parse` checks a reply without applying it"
    )))
}
