//! Expiry of the server's answers (issue 28): each request leaves a
//! result reference, `refs/clada/results/<id>`, which every push's
//! reference advertisement lists. One older than `clada.resultsExpire`
//! (default a week; `never` keeps them) is removed by the next
//! post-receive, after it answered its own requests, and by `hook
//! recover` (run from a timer, doc/hooks.md). An agent reads its result
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

/// Removes the result references older than `kept`, `clada.resultsExpire`
/// as the caller read it (how long, and how to say it; `None` for never;
/// `Err`: why it does not read, said on `out`, and nothing removed);
/// says how many on `out` when it removed any. A reference another hook
/// removed or rewrote meanwhile is left to it.
pub fn expire_results(
    repo: &Repository,
    kept: Result<Option<(Duration, String)>, String>,
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
    let from = newest.min(crate::git::commit::committer_now());
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
