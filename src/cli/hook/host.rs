//! The command line's side of the server library (`server`): the
//! settings it reads through the layers (git config only: a pushed tree
//! must not decide what the server runs or where it writes), the apply
//! and its report as `git clada apply` renders them, and diagnostics as
//! `git clada parse` prints them. The receive hooks and `push-reply` hand
//! [`CliHost`] to the library.

use std::time::Duration;

use crate::csl::Delimiters;
use crate::git::commit::Identity;
use crate::git::{ObjectId, Repository};
use crate::reply::ReplyInput;
use crate::server::authorize::Authorize;
use crate::server::receive::{Settings, server_branches};
use crate::server::{self, Host};
use crate::syntax::{Choice, Parsed};
use crate::transaction::{self, Applied, Target, Timings};

use crate::cli::apply::{self, ApplyArgs, Format, OutputMode, apply_and_render};
use crate::cli::config::{Layers, parse_duration};
use crate::cli::{CliError, Outcome, settings};

/// The command line, as the server library's [`Host`].
pub(crate) struct CliHost;

impl Host for CliHost {
    fn settings(&self, repo: &Repository) -> Result<Settings, server::Error> {
        Ok(read_settings(repo)?)
    }

    fn syntax(&self, repo: &Repository) -> Result<Choice, server::Error> {
        Ok(apply::syntax_choice(None, Some(repo))?)
    }

    fn delimiters(&self, repo: &Repository) -> Result<Delimiters, server::Error> {
        Ok(settings::delimiters_in(Some(repo), None, None)?)
    }

    fn author(&self, repo: &Repository) -> Result<Identity, server::Error> {
        Ok(apply::author(None, &Layers::new(Some(repo)))?)
    }

    fn diagnostics(
        &self,
        out: &mut dyn std::io::Write,
        parsed: &Parsed<'_>,
        origin: &str,
    ) -> std::io::Result<()> {
        crate::cli::parse::write_text(out, parsed, origin)
    }

    fn apply(
        &self,
        repo: &Repository,
        input: &ReplyInput,
        parsed: &Parsed<'_>,
        target: &Target<'_>,
    ) -> Result<(Applied, Vec<u8>), server::Error> {
        let args = ApplyArgs {
            // Results are read by people and agents alike: the text report,
            // with every task line, then trailers.
            format: Some(Format::Text),
            output_mode: Some(OutputMode::Buffer),
            ..ApplyArgs::default()
        };
        let rendered = apply_and_render(
            repo,
            &args,
            input,
            parsed,
            target,
            false,
            &mut Timings::default(),
            &mut apply::Caller::default(),
        )?;
        Ok((rendered.applied, rendered.report))
    }

    fn replayed_tree(
        &self,
        repo: &Repository,
        parsed: &Parsed<'_>,
        base: ObjectId,
        refuse_run: Option<&str>,
    ) -> Result<Option<ObjectId>, transaction::Error> {
        apply::replayed_tree(repo, parsed, base, refuse_run)
    }
}

/// The server's settings, from its git config only.
fn read_settings(repo: &Repository) -> Result<Settings, CliError> {
    let layers = Layers::new(Some(repo));
    let text = |s: &str| Some(s.to_string());
    let inbox = layers
        .get(None, "inboxRef", text, "")?
        .unwrap_or_else(|| "refs/notes/clada-inbox".to_string());
    let results = layers
        .get(None, "resultsRef", text, "")?
        .unwrap_or_else(|| "refs/notes/clada-results".to_string());
    for (key, name) in [("inboxRef", &inbox), ("resultsRef", &results)] {
        if !name.starts_with("refs/notes/") || name.len() == "refs/notes/".len() {
            return Err(CliError::new(format!(
                "git config clada.{key} = {name:?} is not a notes ref"
            ))
            .hint("notes refs live under refs/notes/ (git refuses notes elsewhere)"));
        }
    }
    if inbox == results {
        return Err(CliError::new(format!(
            "clada.inboxRef and clada.resultsRef are both {inbox}"
        ))
        .hint("keep them apart: results written into the inbox would make every client's next push non-fast-forward"));
    }
    let max_notes = layers
        .get(
            None,
            "inboxMaxNotes",
            |s| s.parse::<usize>().ok().filter(|n| *n > 0),
            "a positive number",
        )?
        .unwrap_or(100);
    let lock_timeout = layers
        .get(None, "lockTimeout", parse_duration, "a duration")?
        .unwrap_or(Duration::from_secs(60));
    let branches = server_branches(repo)?;
    Ok(Settings {
        branches,
        inbox,
        results,
        run: layers.get_bool(None, "serverRun")?.unwrap_or(false),
        replay: layers.get_bool(None, "serverReplay")?.unwrap_or(true),
        authorize: Authorize::read(repo)?,
        max_notes,
        lock_timeout,
        syntax: apply::syntax_choice(None, Some(repo))?,
    })
}

/// How long results are kept when `clada.resultsExpire` is not set.
const DEFAULT_EXPIRE: Duration = Duration::from_secs(7 * 24 * 3600);

/// `clada.resultsExpire`, and how to say it: `None` for `never` (or
/// `off`, `0`); `Err` says why it does not read (`server::expire`).
pub(super) fn results_kept_for(repo: &Repository) -> Result<Option<(Duration, String)>, String> {
    let Some(value) = repo.config_string("clada.resultsExpire") else {
        return Ok(Some((DEFAULT_EXPIRE, "a week".to_string())));
    };
    match value.trim() {
        "never" | "off" | "0" => Ok(None),
        text => parse_duration(text)
            .map(|age| Some((age, text.to_string())))
            .ok_or_else(|| {
                format!(
                    "clada.resultsExpire = {text:?} is not a duration (7d, 36h, never); results are kept"
                )
            }),
    }
}

impl From<server::Error> for CliError {
    fn from(e: server::Error) -> CliError {
        CliError {
            message: e.message,
            hint: e.hint,
        }
    }
}

impl From<CliError> for server::Error {
    fn from(e: CliError) -> server::Error {
        server::Error {
            message: e.message,
            hint: e.hint,
        }
    }
}

impl From<server::Outcome> for Outcome {
    fn from(o: server::Outcome) -> Outcome {
        match o {
            server::Outcome::Success => Outcome::Success,
            server::Outcome::Failed => Outcome::Failed,
        }
    }
}
