//! Expiry of the server's answers (issue 28): each request leaves a
//! result reference, `refs/clada/results/<id>`, which every push's
//! reference advertisement lists. One older than `clada.resultsExpire`
//! (default a week; `never` keeps them) is removed by `hook recover`
//! (run from a timer, doc/hooks.md) and by a post-receive, after it
//! answered its own requests, when the last look is a hundredth of the
//! term old ([`When::Due`]). An agent reads its result
//! from the push's output or fetches it within seconds; a week is room
//! for one that was away.
//!
//! The age is the result commit's committer time, counted back from the
//! newest result's, or from now (the clock clada dates commits with,
//! `GIT_COMMITTER_DATE` when set) if that is earlier: an idle server keeps
//! its last week of answers, and a clock that jumps forward, or a commit
//! date given by the environment, never wipes what was just written.
//!
//! The setting is read by the caller, as the server's other settings
//! (`Host`), and passed in.

use std::time::Duration;

use crate::git::Repository;
use crate::git::commit::Identity;
use crate::hook::requests::RESULTS;

use super::Error;
use super::receive::git;

/// When the results are looked through: by `hook recover` every time
/// (an operator's timer asks for it), by post-receive only now and then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// When the last look is [`interval`] old, or later than now (a clock
    /// set back).
    Due,
}

/// Where the time of the last look is kept, in the git dir.
const LAST_LOOK: &str = "clada/results-expired";

/// How long after one look at the results post-receive looks again:
/// reading every result's commit costs about 35 µs each, on every push,
/// plain ones too, and a week of answers is thousands. A hundredth of
/// the time results are kept, at most an hour: a result outlives its
/// term by that much at most.
fn interval(age: Duration) -> i64 {
    i64::try_from((age / 100).as_secs())
        .unwrap_or(i64::MAX)
        .min(3600)
}

/// Removes the result references older than `kept`, `clada.resultsExpire`
/// as the caller read it (how long, and how to say it; `None` for never;
/// `Err`: why it does not read, said on `out`, and nothing removed), when
/// `when` says it is time to look; says how many on `out` when it removed
/// any. A reference another hook removed or rewrote meanwhile is left to
/// it.
pub fn expire_results(
    repo: &Repository,
    kept: Result<Option<(Duration, String)>, String>,
    when: When,
    out: &mut String,
) -> Result<(), Error> {
    let (age, said) = match kept {
        Ok(Some(kept)) => kept,
        Ok(None) => return Ok(()),
        Err(why) => {
            say!(out, "clada: {why}");
            return Ok(());
        }
    };
    // Dated by the clock commits are dated with, as the results are.
    let now = crate::git::commit::committer_now();
    let stamp = repo.git_dir().join(LAST_LOOK);
    if when == When::Due {
        let last = std::fs::read_to_string(&stamp)
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok());
        if last.is_some_and(|last| last <= now && now - last < interval(age)) {
            return Ok(());
        }
    }
    // Best effort: without it the next push looks again.
    let _ = std::fs::write(&stamp, now.to_string());
    let mut results = Vec::new();
    for name in repo.refs_under(RESULTS).map_err(git)? {
        let Some(id) = repo.ref_target(&name).map_err(git)? else {
            continue;
        };
        // Not a commit (someone else's doing): not ours to judge.
        if let Ok(info) = repo.commit_info(id) {
            results.push((name, id, info.time));
        }
    }
    let Some(newest) = results.iter().map(|(_, _, time)| *time).max() else {
        return Ok(());
    };
    let from = newest.min(now);
    let oldest = from.saturating_sub(i64::try_from(age.as_secs()).unwrap_or(i64::MAX));
    let mut removed = 0;
    for (name, id, time) in results {
        if time < oldest && repo.delete_ref(&Identity::default(), &name, id).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        say!(
            out,
            "clada: removed {} older than {said} (clada.resultsExpire)",
            crate::words::count(removed, "result reference", "result references"),
        );
    }
    Ok(())
}
