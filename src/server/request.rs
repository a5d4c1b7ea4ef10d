//! Requests of their own (doc/hooks.md): a notes commit pushed to
//! `refs/clada/inbox/<id>`, answered at `refs/clada/results/<id>` and then
//! deleted; and the requests a stopped hook left unanswered.
//!
//! Each post-receive claims the requests of its push (`git/lock.rs`
//! `Claim`); the ones no live process claims are orphans, answered by the
//! next hook under the lock, which first looks for what the stopped one
//! did (its result note, its post commit, both naming the request) so
//! that nothing is done twice. How one note is answered is `receive.rs`'s.

use crate::fault;
use crate::git::commit::Identity;
use crate::git::inbox::Note;
use crate::git::lock::{Claim, claimed};
use crate::git::{ObjectId, Repository};
use crate::hook::requests::{self, claim_file, request_id, request_ref, result_ref};
use crate::hook::result::{
    ResultNote, branch_of, envelope, objects_envelope, post_envelope, post_of, request_of,
    request_ref_of, status_of, wants_objects,
};

use crate::reply;
use crate::report::Tally;

use super::receive::{
    RUN_REFUSED, Replies, Server, answer_note, git, queue_keys, read_reply, short_branch,
    write_result,
};
use super::{Error, Host, Outcome};
use crate::git::queue::Tickets;

/// A request pushed under a reference of its own.
pub(super) struct Request {
    pub(super) id: String,
    /// The notes commit pushed.
    pub(super) commit: ObjectId,
    pub(super) notes: Vec<Note>,
    /// The branch named by the request's `Clada-Branch` trailer (its
    /// notes commit's message): the one to apply to, even when other
    /// branches point at the same commit.
    pub(super) branch: Option<String>,
    /// Who pushed it, as its pre-receive recorded (`authorize.rs`).
    pub(super) pusher: Option<String>,
    /// Whether its message asks for the objects the branch gained since
    /// the reply's commit (`Clada-Objects: send`).
    wants_objects: bool,
}

impl Request {
    /// The commit its one reply was written for (`push-reply` sends one),
    /// when it asks for the objects the branch gained since.
    fn base(&self) -> Option<ObjectId> {
        match self.notes[..] {
            [note] if self.wants_objects => Some(note.target),
            _ => None,
        }
    }

    pub(super) fn read(repo: &Repository, id: &str, commit: ObjectId) -> Result<Request, Error> {
        let message = repo.commit_message(commit).map_err(git)?;
        Ok(Request {
            id: id.to_string(),
            commit,
            notes: repo.changed_notes(None, commit).map_err(git)?,
            branch: branch_of(&message).map(|b| format!("refs/heads/{b}")),
            pusher: super::authorize::recorded(repo, id, commit),
            wants_objects: wants_objects(&message),
        })
    }
}

/// Where post-receive hooks record the requests they are answering.
pub fn claims_dir(repo: &Repository) -> std::path::PathBuf {
    repo.git_dir().join("clada").join("claims")
}

/// The requests waiting under `refs/clada/inbox/` that no live hook is
/// answering, except `ours`: their hook was stopped (killed, or out of
/// time waiting for the lock) before it answered them.
pub(super) fn orphans(
    repo: &Repository,
    ours: &[Request],
    out: &mut String,
) -> Result<Vec<Request>, Error> {
    let dir = claims_dir(repo);
    let mut found = Vec::new();
    for name in repo.refs_under(requests::REQUESTS).map_err(git)? {
        let Some(id) = request_id(&name) else {
            continue;
        };
        if ours.iter().any(|r| r.id == id) || claimed(&dir.join(claim_file(id))) {
            continue;
        }
        let Some(commit) = repo.ref_target(&name).map_err(git)? else {
            continue;
        };
        match Request::read(repo, id, commit) {
            Ok(request) => found.push(request),
            // Not a notes commit: nothing to answer (pre-receive refuses
            // these; one written on the server by hand is left alone).
            Err(e) => say!(out, "clada: {name}: left unanswered: {}", e.message),
        }
    }
    Ok(found)
}

/// Answers `orphans`: requests whose own hook stopped before answering
/// them. Each waits its turn in its branch's queue, as a pushed request
/// does (`git/queue.rs`), and is looked at again first: its hook may have
/// come back to life (a claim written late) or answered it.
pub(super) fn recover(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    orphans: Vec<Request>,
    out: &mut String,
) -> Result<(), Error> {
    let dir = claims_dir(repo);
    for request in orphans {
        if claimed(&dir.join(claim_file(&request.id)))
            || repo.ref_target(&request_ref(&request.id)).map_err(git)? != Some(request.commit)
        {
            continue;
        }
        say!(
            out,
            "clada: answering the request {}, left unanswered by a hook that was stopped",
            request.id
        );
        // The claim keeps a second recovering hook away (it would wait for
        // the turn, then find the result anyway).
        let _claim = Claim::take(dir.join(claim_file(&request.id)));
        // Its own hook, alive after all (the moment before it claimed it),
        // answers it in the same queue: whichever comes second finds the
        // other's answer.
        let keys = queue_keys(repo, server, &[], std::slice::from_ref(&request))?;
        let mut tickets = Tickets::take(repo.git_dir(), &keys);
        if let Err(e) = tickets.wait(server.lock_timeout) {
            say!(out, "clada: request {}: not answered now: {e}", request.id);
            continue;
        }
        // With commands run (one scratch working tree), one at a time.
        let _whole = if server.run {
            Some(server.shared(repo)?)
        } else {
            None
        };
        // One request's trouble is its own: the others are still answered.
        if let Err(e) = answer_request(repo, server, author, &request, Came::Left, &mut || {}, out)
        {
            say!(out, "clada: request {}: error: {}", request.id, e.message);
        }
    }
    Ok(())
}

/// `git clada hook recover`: answers every request that no live hook is
/// answering, as the next push would; what it did is added to `out`.
pub fn recover_now(repo: &Repository, host: &dyn Host, out: &mut String) -> Result<Outcome, Error> {
    let server = Server::read(repo, host)?;
    let orphans = orphans(repo, &[], out)?;
    if orphans.is_empty() {
        say!(out, "clada: no request is waiting for an answer");
        return Ok(Outcome::Success);
    }
    let author = host.author(repo)?;
    recover(repo, &server, &author, orphans, out)?;
    Ok(Outcome::Success)
}

/// How a request came to the hook answering it.
pub(super) enum Came<'a, 'r> {
    /// In this hook's push: the branch tips the push updated, and the
    /// replies read before the lock.
    Pushed(&'a [(String, ObjectId)], &'a Replies<'r>),
    /// Left by a hook that was stopped, which may have got as far as
    /// applying it or writing its result note.
    Left,
}

/// Answers a request pushed under a reference of its own (under the
/// lock): each note is answered as a shared-inbox note is, the results
/// are written at `refs/clada/results/<id>` (and in the shared results
/// ref), then the request reference is deleted. The statuses, one per
/// note.
///
/// `applied` is called once its last note is applied, before its result
/// is written: a hook answering a lone request gives its branch's turn
/// back there (`post_receive`).
pub(super) fn answer_request(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    request: &Request,
    came: Came<'_, '_>,
    applied: &mut dyn FnMut(),
    out: &mut String,
) -> Result<Vec<String>, Error> {
    let timing = super::log::Timing::start();
    let recovered = matches!(came, Came::Left);
    // The commit whose objects since are printed for the pusher: none for
    // a hook recovering the requests of others, which prints to its own
    // pusher, who has no use for them.
    let base = request.base().filter(|_| !recovered);
    let none = Replies::default();
    let (pushed, replies) = match came {
        Came::Pushed(pushed, replies) => (pushed, replies),
        Came::Left => (&[][..], &none),
    };
    let id = &request.id;
    let results = result_ref(id);
    if let Some(done) = repo.ref_target(&results).map_err(git)? {
        // Answered by another push's hook (which found it waiting), or
        // answered before a hook was stopped short of deleting it.
        let text = repo.commit_message(done).map_err(git)?;
        let status = status_of(&text).unwrap_or_else(|| "error".into());
        print_result(
            repo,
            id,
            base,
            &status,
            &String::from_utf8_lossy(&text),
            out,
        );
        let _shared = server.shared(repo)?;
        // A hook logs a request after taking it away: one still there
        // was left by a hook stopped before it logged it.
        let unlogged = repo.ref_target(&request_ref(id)).map_err(git)? == Some(request.commit);
        remove_request(repo, author, request, out);
        super::authorize::forget(repo, id);
        if unlogged {
            super::log::record(
                repo,
                id,
                request.pusher.as_deref(),
                request.branch.as_deref(),
                &status,
                &timing,
                true,
            );
        }
        return Ok(vec![status]);
    }
    let mut answered: Vec<(ObjectId, String, String)> = Vec::new();
    for (n, note) in request.notes.iter().enumerate() {
        // Looked for even for a request of this push: a hook that
        // recovered it in the moment before this one claimed it, and was
        // stopped in turn, may have applied it (the branch's queue keeps
        // two from answering it at once; this keeps a replay from
        // applying it twice).
        let earlier = answered_before(repo, server, author, note, request)?;
        let (status, text) = match earlier {
            Some(found) => found,
            None => {
                let result = answer_note(repo, server, note, pushed, Some(request), replies);
                if n + 1 == request.notes.len() {
                    applied();
                }
                fault::point("hook-applied");
                let text = write_result(repo, server, author, note, &result)?;
                (result.status, text)
            }
        };
        fault::point("hook-noted");
        answered.push((note.target, status, text));
    }
    let message = match answered.as_slice() {
        [(_, _, text)] => text.clone(),
        many => {
            let mut m = format!(
                "clada: results of {} notes (one result note per commit in this notes tree)\n",
                many.len()
            );
            for (target, status, _) in many {
                m.push_str(&format!("\nnote on {target}: {status}"));
            }
            m.push('\n');
            m
        }
    };
    let entries: Vec<(ObjectId, &[u8])> = answered
        .iter()
        .map(|(target, _, text)| (*target, text.as_bytes()))
        .collect();
    let commit = repo.notes_commit(author, &entries, &message).map_err(git)?;
    let shared = server.shared(repo)?;
    repo.create_ref(author, &results, commit, "clada: result of a request")
        .map_err(git)?;
    fault::point("hook-answered");
    remove_request(repo, author, request, out);
    super::authorize::forget(repo, id);
    drop(shared);
    let mut statuses = Vec::new();
    if let [(_, status, text)] = answered.as_slice() {
        print_result(repo, id, base, status, text, out);
    } else {
        for (target, status, text) in &answered {
            say!(
                out,
                "clada: request {id}, note on {}: {status}",
                repo.short(*target)
            );
            out.push_str(text);
        }
        out.push_str(&envelope(id, "several", &message));
    }
    for (_, status, _) in answered {
        statuses.push(status);
    }
    let logged = if statuses.len() == 1 {
        statuses[0].clone()
    } else {
        "several".to_string()
    };
    super::log::record(
        repo,
        id,
        request.pusher.as_deref(),
        request.branch.as_deref(),
        &logged,
        &timing,
        recovered,
    );
    say!(
        out,
        "clada: the result is at {results} (git fetch origin {results})"
    );
    Ok(statuses)
}

/// Prints the result of request `id` for its pusher, in its envelope,
/// then what the pusher needs to take the post commit it names, if any,
/// without fetching it (`git clada push-reply`). A request sent for
/// `base` that asks for them (`Clada-Objects: send`) gets the objects
/// since `base` (`git::ship`): the post commit's and, when it was
/// replayed on a tip that moved since, those of the commits in between.
/// Otherwise, or when they are too many, the post commit alone, for the
/// pusher to rebuild its tree (`rebuild`), and the commits in between if
/// they are few.
fn print_result(
    repo: &Repository,
    id: &str,
    base: Option<ObjectId>,
    status: &str,
    text: &str,
    out: &mut String,
) {
    out.push_str(&envelope(id, status, text));
    // Only a commit the branch moved to is one the pusher takes.
    let moved = matches!(status, "success" | "failed" | "partial");
    let Some(post) = post_of(text.as_bytes()).filter(|_| moved) else {
        return;
    };
    let since = |tip| base.and_then(|base| Some((base, repo.objects_since(base, tip).ok()??)));
    if let Some((base, objects)) = since(post) {
        out.push_str(&objects_envelope(id, base, &objects));
        return;
    }
    let Ok(raw) = repo.raw_commit(post) else {
        return;
    };
    let Some(shown) = post_envelope(id, post, &raw) else {
        return;
    };
    out.push_str(&shown);
    if let Some((_, parents)) = repo.parse_commit(&raw)
        && let [on] = parents[..]
        && Some(on) != base
        && let Some((base, objects)) = since(on)
    {
        out.push_str(&objects_envelope(id, base, &objects));
    }
}

/// Deletes an answered request's reference, if it still holds the request
/// (its pusher may have withdrawn it). A failure leaves it for the next
/// hook, which finds the result and deletes it then.
fn remove_request(repo: &Repository, author: &Identity, request: &Request, out: &mut String) {
    let name = request_ref(&request.id);
    if let Err(e) = repo.delete_ref(author, &name, request.commit)
        && !matches!(e, crate::git::commit::UpdateError::Moved { .. })
    {
        say!(
            out,
            "clada: could not delete the answered request {name}: {e}"
        );
    }
}

/// What a stopped hook had already done for `note`: the result note it
/// wrote, or the apply it made (a post commit on the note's commit made
/// from this very reply, on a branch) whose report it lost.
fn answered_before(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    note: &Note,
    request: &Request,
) -> Result<Option<(String, String)>, Error> {
    let wanted = request.branch.as_deref();
    let name = request_ref(&request.id);
    // The same reply on the same commit may be another request's: only
    // this request's own answer counts.
    if let Some(old) = repo.note(&server.results, note.target).map_err(git)?
        && request_of(&old) == Some(note.blob)
        && request_ref_of(&old).as_deref() == Some(name.as_str())
    {
        let status = status_of(&old).unwrap_or_else(|| "error".into());
        return Ok(Some((status, String::from_utf8_lossy(&old).into_owned())));
    }
    // A server apply has no pre commit: the post commit's parent is the
    // note's commit, or a later tip of its branch when the branch had
    // moved and the reply was applied there (doc/replay.md); its message
    // names the reply's blob and the request.
    let reply = format!("Clada-Reply: {}", note.blob);
    let made_for = format!("Clada-Request-Ref: {name}");
    // Commits on the note's commit that say they were made from this reply
    // for this request, on branches it may have been applied to.
    let mut found = Vec::new();
    for branch in repo.refs_under("refs/heads/").map_err(git)? {
        if wanted.is_some_and(|w| w != branch) || !server.branches.allows(&branch) {
            continue;
        }
        let Some(tip) = repo.ref_target(&branch).map_err(git)? else {
            continue;
        };
        // Other requests may have been applied on top since; nothing at
        // or below the note's commit can be this request's apply. Walked
        // a commit at a time, 64 at most: most requests are made on the
        // tip itself, and reading 64 commits first cost every request
        // half a millisecond.
        let mut at = Some(tip);
        for _ in 0..64 {
            let Some(commit) = at.filter(|c| *c != note.target) else {
                break;
            };
            let info = repo.commit_info(commit).map_err(git)?;
            let says = |line: &str| info.message.lines().any(|l| l.trim_end() == line);
            if says(&reply) && says(&made_for) {
                found.push((branch.clone(), commit, info));
                break;
            }
            at = info.first_parent();
        }
    }
    let mut result = ResultNote {
        status: "error".into(),
        request: note.blob,
        request_ref: Some(name.clone()),
        branch: None,
        post: None,
        pusher: request.pusher.clone(),
        body: String::new(),
    };
    match found.as_slice() {
        [] => return Ok(None),
        [(branch, commit, info)] => {
            result.branch = Some(short_branch(branch).to_string());
            let on = info.first_parent().unwrap_or(note.target);
            if made_from_reply(repo, server, note, on, *commit)? {
                let all_done = info
                    .message
                    .lines()
                    .find_map(|l| l.strip_prefix("Clada-Tasks: "))
                    .and_then(|t| Tally::parse(t.trim_end()))
                    .is_some_and(|t| t.all_succeeded());
                // The post commit is there: the branch moved, so what
                // failed beside it makes the apply partial, not failed.
                result.status = if all_done { "success" } else { "partial" }.into();
                result.post = Some(*commit);
                result.body = format!(
                    "applied by a hook that was stopped before it wrote its report; the post commit {} records the tasks:\n\n{}",
                    repo.short(*commit),
                    info.message.trim_end()
                );
            } else {
                // Not applied again either: the commit may be the real
                // apply, made under settings that have changed since.
                result.body = format!(
                    "error: {} on {} names this request and its reply, but is not what the reply makes on {} with this server's settings now; it was not taken as this request's answer, and the request was not applied again\nhint: if {} holds the reply's change (the settings changed since it was made), go on from it; if not, someone else wrote it in the request's name\n",
                    repo.short(*commit),
                    short_branch(branch),
                    repo.short(on),
                    repo.short(*commit)
                );
            }
        }
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|(branch, commit, _)| {
                    format!("{} on {}", repo.short(*commit), short_branch(branch))
                })
                .collect();
            result.body = format!(
                "error: several commits name this request and its reply ({}); none was taken as its answer, and the request was not applied again\nhint: look at them: one may be the reply's change\n",
                names.join(", ")
            );
        }
    }
    let text = write_result(repo, server, author, note, &result)?;
    Ok(Some((result.status, text)))
}

/// Whether `commit`'s tree is the one the note's reply makes on `on` (the
/// note's commit, or the tip it was applied on after the branch moved). Its trailers alone do not make a commit the answer to a
/// request: anyone who may push the branch can write them (and the
/// request's id and reply are there for anyone to read). A reply whose
/// commands this server runs (`clada.serverRun`) cannot be checked so
/// without running them again: its trailers are taken.
fn made_from_reply(
    repo: &Repository,
    server: &Server,
    note: &Note,
    on: ObjectId,
    commit: ObjectId,
) -> Result<bool, Error> {
    let input = read_reply(repo, note)?;
    let delims = server.host.delimiters(repo)?;
    let parsed = reply::parse(&input, server.syntax, &delims);
    if parsed.has_fatal() {
        return Ok(false);
    }
    // Nothing written: the tree is only compared.
    let scratch = repo.in_memory();
    let refuse = (!server.run).then_some(RUN_REFUSED);
    Ok(
        match server.host.replayed_tree(&scratch, &parsed, on, refuse) {
            Ok(Some(tree)) => repo.tree_of(Some(commit)).map_err(git)? == tree,
            Ok(None) => true,
            Err(_) => false,
        },
    )
}
