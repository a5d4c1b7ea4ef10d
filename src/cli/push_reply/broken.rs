//! What became of a request whose push failed (issue 28, doc/hooks.md
//! "Requests of their own").
//!
//! A failed `git push` is not a refusal unless the server said so: a
//! connection that broke after the server stored the request leaves it to
//! be applied later, and an agent told "refused" would send it again and
//! have it applied twice. So the push's own report is read first (the
//! server's verdict on the request reference, or git's words for a
//! connection that never got as far as sending), and only when it has
//! neither is the server asked, with `git ls-remote`, whether it holds the
//! request or its result. A refusal of the request reference is asked
//! about too: sent again under its id (as after an unknown outcome), the
//! request is refused because the server has it from before, and the
//! reply may well be applied.

use std::process::Output;
use std::time::Instant;

use crate::git::ObjectId;
use crate::hook::requests::{request_ref, result_ref};

use super::{git, run_until};
use crate::cli::CliError;

/// What a failed push did.
pub(super) enum Fate {
    /// The server (or git, before sending) answered the push with a
    /// verdict on the request: a refusal, whose words stand.
    Answered,
    /// The connection failed before the request was sent: nothing reached
    /// the server.
    NotSent,
    /// The server holds the request or its result: it is answered as
    /// after a push that succeeded.
    Stored,
    /// The request reference was refused, but the server holds a request
    /// or a result under its id: this reply sent before under the same id
    /// (or another reply under it). Its result is waited for, and taken
    /// only if it answers this reply.
    Taken,
    /// The server, asked, does not hold the request. The connection broke
    /// after it was sent, so a server still at work may yet store it.
    Missing,
    /// The server could not be asked; why (git's words).
    Unasked(String),
}

/// How the failed push `pushed` (`None`: stopped at --push-timeout) of
/// request commit `request` under `id` to `remote` ended; the server is
/// asked, until `deadline`, only when the push's output does not tell.
pub(super) fn fate(
    pushed: Option<&Output>,
    remote: &str,
    id: &str,
    request: ObjectId,
    deadline: Instant,
) -> Result<Fate, CliError> {
    let (porcelain, said) = pushed.map_or_else(Default::default, |p| {
        (
            String::from_utf8_lossy(&p.stdout),
            String::from_utf8_lossy(&p.stderr),
        )
    });
    let ours = format!(":{}", request_ref(id));
    // `<flag>\t<from>:<to>\t<summary> (<reason>)`: a line for the request
    // reference is the push's verdict on it, unless it says the server
    // never gave one.
    let verdict = porcelain.lines().find(|l| {
        l.split('\t').nth(1).is_some_and(|r| r.ends_with(&ours))
            && !l.contains("remote failed to report status")
    });
    match verdict {
        // Refused with the rest of an atomic push (the branch moved): the
        // request was never considered.
        Some(l) if l.starts_with('!') && l.ends_with("(atomic push failed)") => {
            return Ok(Fate::Answered);
        }
        // Refused, by the server or by git for a reference the server
        // has (non-fast-forward): for this reply's words, or because the
        // server has a request under the id already, which only the
        // server can say.
        Some(l) if l.starts_with('!') => {
            return Ok(match ask(remote, id, deadline)? {
                Ok(listed) if holds(&listed, &request_ref(id), None) => Fate::Taken,
                Ok(listed) if holds(&listed, &result_ref(id), None) => Fate::Taken,
                // The server's verdict stands.
                _ => Fate::Answered,
            });
        }
        // Taken, but the push failed for something else: the server has it.
        Some(_) => return Ok(Fate::Stored),
        None => {}
    }
    if never_sent(&said) {
        return Ok(Fate::NotSent);
    }
    let listed = match ask(remote, id, deadline)? {
        Ok(listed) => listed,
        Err(why) => return Ok(Fate::Unasked(why)),
    };
    // A request reference is written once, so one holding another commit
    // means ours was not stored; a result is checked as ours when fetched.
    let request = request.to_string();
    Ok(
        if holds(&listed, &request_ref(id), Some(&request)) || holds(&listed, &result_ref(id), None)
        {
            Fate::Stored
        } else {
            Fate::Missing
        },
    )
}

/// Asks `remote`, until `deadline`, for `id`'s request and result
/// references: `git ls-remote`'s listing, or why it could not be had
/// (git's words).
fn ask(remote: &str, id: &str, deadline: Instant) -> Result<Result<String, String>, CliError> {
    let mut ask = git();
    // `--`: a remote named like an option is still a remote.
    ask.args(["ls-remote", "--"])
        .arg(remote)
        .arg(request_ref(id))
        .arg(result_ref(id));
    let Some(asked) = run_until(&mut ask, deadline)? else {
        return Ok(Err("the server did not answer in time".into()));
    };
    if !asked.status.success() {
        // git's first fatal line says why; what follows is advice.
        let said = String::from_utf8_lossy(&asked.stderr);
        let why = said
            .lines()
            .find_map(|l| l.strip_prefix("fatal: "))
            .or_else(|| said.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("git ls-remote failed");
        return Ok(Err(
            crate::quote::escaped(why.trim().trim_end_matches('.')).into_owned()
        ));
    }
    Ok(Ok(String::from_utf8_lossy(&asked.stdout).into_owned()))
}

/// Whether `git ls-remote`'s `listed` has the reference `name` (at
/// `object`, when given).
fn holds(listed: &str, name: &str, object: Option<&str>) -> bool {
    listed.lines().any(|l| {
        let mut fields = l.split('\t');
        let (Some(sha), Some(r)) = (fields.next(), fields.next()) else {
            return false;
        };
        r == name && object.is_none_or(|o| o == sha)
    })
}

/// Whether git's standard error `said` is of a push that failed at its
/// first contact with the server, before it sent anything: git's words
/// for it over ssh, git:// and local paths (`Could not read from remote
/// repository`, after ssh's own: connection refused, closed by the remote
/// host) and over HTTP (the first request failed: `unable to access`, and
/// the refusals of that request). In another language than git's English
/// they are not recognised, and the server is asked instead. A failure of
/// the push's own request, after the references were listed, is not one,
/// not even curl's errors 6 and 7 (the host not found, the connection
/// refused): curl sends a request over the connection that listed them,
/// and when the server dies with it, tries once more on a new one and
/// reports that second connection's failure, after the first delivered
/// the push (`bench/http_kill.sh --server nginx` found a request so told
/// "nothing was sent" that was applied).
fn never_sent(said: &str) -> bool {
    said.lines().any(|l| {
        let l = l.strip_prefix("fatal: ").unwrap_or(l);
        let l = l.strip_prefix("error: ").unwrap_or(l);
        l.starts_with("Could not read from remote repository")
            || l.starts_with("unable to access '")
            || l.starts_with("Authentication failed for '")
            || l.starts_with("rate limited by '")
            || (l.starts_with("repository '") && l.ends_with("' not found"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_whose_own_request_failed_may_have_sent_it() {
        // What git 2.47 says when the server went away after listing the
        // references: its request may have gone out on the connection
        // that listed them, and curl's second try reports the refusal.
        let refused = "error: RPC failed; curl 7 Failed to connect to 127.0.0.1 port 41491 after 0 ms: Could not connect to server\n\
                       send-pack: unexpected disconnect while reading sideband packet\n\
                       fatal: the remote end hung up unexpectedly\n";
        assert!(!never_sent(refused));
        // The first contact failed: nothing went out.
        let first = "fatal: unable to access 'http://127.0.0.1:41491/r.git/': Failed to connect to 127.0.0.1 port 41491 after 0 ms: Could not connect to server\n";
        assert!(never_sent(first));
        // The connection broke after the request went out: not so.
        let broke = "error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502\n\
                     send-pack: unexpected disconnect while reading sideband packet\n\
                     fatal: the remote end hung up unexpectedly\n";
        assert!(!never_sent(broke));
        let reset = "error: RPC failed; curl 56 Recv failure: Connection reset by peer\n";
        assert!(!never_sent(reset));
    }
}
