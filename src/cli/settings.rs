//! Settings that come from flags or, failing those, from `git config`.

use std::path::Path;

use crate::csl::Delimiters;
use crate::git::Repository;

use super::CliError;

/// The marker delimiters: each flag wins, then `clada.startDelimiter` /
/// `clada.endDelimiter` from git config when run inside a repository, then
/// the defaults. Outside a repository (or in one git cannot open) only the
/// flags and defaults apply: `parse` must work on any reply anywhere.
/// The marker delimiters' flags, the same on every command that reads CSL.
#[derive(Debug, Default, clap::Args)]
pub struct DelimiterArgs {
    /// Text that starts a marker [default: <---, or git config clada.startDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub start_delimiter: Option<String>,

    /// Text that ends a marker [default: --->, or git config clada.endDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub end_delimiter: Option<String>,
}

pub fn delimiters(start: Option<&str>, end: Option<&str>) -> Result<Delimiters, CliError> {
    if start.is_some() && end.is_some() {
        return delimiters_in(None, start, end);
    }
    let repo = Repository::discover(Path::new(".")).ok().flatten();
    delimiters_in(repo.as_ref(), start, end)
}

/// [`delimiters`] with the repository (if any) already open.
pub fn delimiters_in(
    repo: Option<&Repository>,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Delimiters, CliError> {
    let defaults = Delimiters::default();
    let (mut start_value, mut end_value) = (start.map(str::to_owned), end.map(str::to_owned));
    if let Some(repo) = repo {
        start_value = start_value.or_else(|| repo.config_string("clada.startDelimiter"));
        end_value = end_value.or_else(|| repo.config_string("clada.endDelimiter"));
    }
    let start = start_value.unwrap_or(defaults.start);
    let end = end_value.unwrap_or(defaults.end);
    Delimiters::new(&start, &end).map_err(|e| {
        CliError::new(format!("unusable delimiters: {e}"))
            .hint("set --start-delimiter/--end-delimiter (or git config clada.startDelimiter / clada.endDelimiter) to non-empty text on one line")
    })
}
