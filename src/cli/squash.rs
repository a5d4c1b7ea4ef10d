//! `git clada squash` (git.md §3): one commit in place of the contiguous
//! run of clada commits at the branch tip.
//!
//! The new commit has the tip's tree and the run's base as parent, so the
//! working tree and index are not touched (uncommitted work may stay where
//! it is). The old tip is kept at `refs/clada/squashed/<n>` before the
//! branch moves (compare and swap, with a reflog entry).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::history::commits::{Kind, Unit, units_from};
use crate::history::squash::{Selection, message, select};

use super::guard::{
    LockArgs, git_err, guard, lost_race, on_branch, refuse_open_session, refuse_published,
    short_branch,
};
use super::{CliError, Outcome, write_stdout};

/// Where the tips before a squash are kept.
const SQUASHED: &str = "refs/clada/squashed/";

/// Squash the clada commits at the branch tip into one
///
/// Takes the contiguous run of clada commits ending at the tip (applies
/// with their pre snapshots, and earlier squashes) and replaces it with one
/// commit whose message lists the squashed summaries, by you (the identity
/// git gives your own commits). The files do not change. The old tip is kept at refs/clada/squashed/<n> and in the
/// branch's reflog. Refused when a selected commit is already on a
/// remote-tracking branch, unless --force.
#[derive(Debug, clap::Args)]
pub struct SquashArgs {
    /// Every contiguous clada commit from the tip (the default)
    #[arg(long, conflicts_with_all = ["hours", "days", "message_contains"])]
    pub all: bool,

    /// Only the clada commits committed within the last N hours
    #[arg(long, value_name = "N", conflicts_with_all = ["days", "message_contains"])]
    pub hours: Option<u32>,

    /// Only the clada commits committed within the last N days
    #[arg(long, value_name = "N", conflicts_with = "message_contains")]
    pub days: Option<u32>,

    /// Only the clada commits whose message contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub message_contains: Option<String>,

    /// The message of the new commit, instead of the generated list
    #[arg(long, short = 'm', value_name = "MSG")]
    pub message: Option<String>,

    /// List what would be squashed and change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Squash even commits that are already on a remote-tracking branch
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub lock: LockArgs,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

pub fn run_squash(args: SquashArgs) -> Result<Outcome, CliError> {
    if args.message.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(CliError::new("--message is empty")
            .hint("give the new commit a message, or leave --message out for the generated one"));
    }
    let selection = match (&args.hours, &args.days, &args.message_contains) {
        (Some(h), _, _) => Selection::Since(now() - i64::from(*h) * 3600),
        (_, Some(d), _) => Selection::Since(now() - i64::from(*d) * 86400),
        (_, _, Some(text)) => Selection::MessageContains(text.clone()),
        _ => Selection::All,
    };
    let g = guard(&args.lock)?;
    let repo = &g.repo;
    let (branch, tip) = on_branch(repo, "squash")?;
    refuse_open_session(repo, "squash")?;
    let short_name = short_branch(&branch).to_string();
    let Some(tip) = tip else {
        return Err(CliError::new(format!(
            "nothing to squash: {short_name} has no commits yet"
        )));
    };
    let units = units_from(repo, tip, 100_000).map_err(git_err)?;
    let taken = &units[..select(&units, &selection)];
    let commits: Vec<_> = taken.iter().flat_map(|u| u.commits()).collect();
    let short = |id: crate::git::ObjectId| id.to_hex_with_len(7).to_string();
    if commits.len() < 2 {
        let why = match (units.is_empty(), taken.len()) {
            (true, _) => format!(
                "the tip of {short_name} ({}) is not a clada commit",
                short(tip)
            ),
            (false, 0) => "no clada commit at the tip matches the selection".to_string(),
            _ => "the selection is a single commit".to_string(),
        };
        write_stdout(|w| writeln!(w, "clada: nothing to squash: {why}; nothing was changed"))?;
        return Ok(Outcome::Success);
    }
    let oldest = taken.last().expect("at least two commits");
    let base = oldest.base;
    refuse_published(
        repo,
        oldest.oldest(),
        args.force,
        (
            "some of these commits are",
            "squashing them",
            "squash fewer (--hours, --days, --message-contains), or pass --force if you will force-push",
        ),
    )?;
    let text = match &args.message {
        Some(m) if m.ends_with('\n') => m.clone(),
        Some(m) => format!("{m}\n"),
        None => message(taken, &tip.to_string()),
    };
    if args.dry_run {
        write_stdout(|w| {
            writeln!(
                w,
                "clada: would squash {} ({}) on {short_name} into one commit on top of {}:",
                crate::words::count(commits.len(), "commit", "commits"),
                units_in_words(taken),
                base.map_or("nothing (a root commit)".to_string(), short)
            )?;
            for u in taken {
                let pre = u.pre.as_ref().map_or(String::new(), |p| {
                    format!(" (with pre snapshot {})", short(p.id))
                });
                writeln!(w, "  {} {}{pre}", short(u.top.id), u.summary())?;
            }
            writeln!(w, "clada: dry run: nothing was changed")
        })?;
        return Ok(Outcome::Success);
    }
    let tip_tree = repo.tree_of(Some(tip)).map_err(git_err)?;
    // The user asked for this commit: it is theirs, as `git commit`
    // would sign it (git.md §1); clada's identity only when git has none.
    let users = repo.user_identities();
    let (author, committer) = users
        .clone()
        .unwrap_or((g.author.clone(), g.author.clone()));
    let squashed = repo
        .commit_as(
            (&author, &committer),
            &text,
            tip_tree,
            &base.into_iter().collect::<Vec<_>>(),
        )
        .map_err(git_err)?;
    let kept = repo
        .create_numbered_ref(
            &committer,
            SQUASHED,
            tip,
            &format!("clada: tip of {short_name} before squash"),
        )
        .map_err(git_err)?;
    crate::fault::point("squash-kept");
    if let Err(e) = repo.advance_branch(
        &committer,
        &branch,
        Some(tip),
        squashed,
        &format!("clada: squash {} commits", commits.len()),
    ) {
        return lost_race(e, "squash");
    }
    write_stdout(|w| {
        writeln!(
            w,
            "clada: squashed {} ({}) into {} \"{}\"; {short_name} is at {}",
            crate::words::count(commits.len(), "commit", "commits"),
            units_in_words(taken),
            short(squashed),
            text.lines().next().unwrap_or_default(),
            short(squashed)
        )?;
        if users.is_none() {
            writeln!(
                w,
                "clada: git has no identity of yours (git config user.name and user.email), so the squash is by {} <{}>",
                author.name, author.email
            )?;
        }
        writeln!(
            w,
            "hint: the old tip is kept at {kept} (git clada log {kept}); `git reset --soft {kept}` brings it back (the files are the same)"
        )
    })?;
    Ok(Outcome::Success)
}

/// `2 applies`, or `2 applies and 1 squash` when earlier squashes are
/// squashed again.
fn units_in_words(units: &[Unit]) -> String {
    let squashes = units.iter().filter(|u| u.kind() == Kind::Squash).count();
    let applies = crate::words::count(units.len() - squashes, "apply", "applies");
    match squashes {
        0 => applies,
        n => format!(
            "{applies} and {}",
            crate::words::count(n, "squash", "squashes")
        ),
    }
}
