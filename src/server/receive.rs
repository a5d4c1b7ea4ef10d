//! The server hooks: CSL pushed as notes in the inbox notes ref (git.md §5)
//! or as requests of their own (`refs/clada/inbox/<id>`, `request.rs`).
//!
//! `pre-receive` checks every note a push adds to or changes in the inbox,
//! or brings in a request, and rejects the push when one has a fatal
//! syntax error (or a request reference is misused), or, with
//! `clada.authorize`, is for a branch its pusher may not write
//! (`authorize.rs`), with the diagnostics for the pusher. The pushed
//! objects are in quarantine, so they are read with the git program
//! (`git/quarantine.rs`); nothing is written but who pushed each request.
//!
//! `post-receive` answers each such note under the apply lock: when its
//! commit is the tip of a branch, the note's CSL is applied to that branch
//! in the bare repository (`transaction::apply` without a working tree,
//! through [`Host::apply`], which renders its report); otherwise it
//! is `stale`. Either way the report becomes a result note on the commit in
//! the results ref. A note whose result already answers the same note
//! text is not applied again (a push may bring back notes answered before).
//! The push's replies are read and parsed before the lock: under it, only
//! the apply and the writing of results.
//!
//! The settings are read by the caller ([`Host::settings`]); this module
//! decides with them.

use std::time::Duration;

use crate::fault;
use crate::git::commit::Identity;
use crate::git::inbox::Note;
use crate::git::lock::Claim;
use crate::git::quarantine::Quarantine;
use crate::git::queue::Tickets;
use crate::git::{GitError, Head, ObjectId, Repository};
use crate::hook::branches::Allowed;
use crate::hook::requests::{self, MAX_ID, claim_file, request_id, request_ref, result_ref};
use crate::hook::result::{ResultNote, branch_of, branch_trailer, request_of};
use crate::hook::updates::{self, RefUpdate};

use crate::reply::{self, ReplyInput};
use crate::syntax::{self as syntax_, Parsed};

use super::authorize::{self, Authorize};
use super::request::{Came, Request, answer_request, claims_dir, orphans, recover};
use super::{Error, Host, Outcome};
use crate::transaction::Target;

/// Why RUN did not run (a server without `clada.serverRun`).
pub(super) const RUN_REFUSED: &str =
    "RUN is disabled on this server (git config clada.serverRun is not true); nothing was run";

/// The server's settings, from its git config only: the pushed tree must
/// not decide what the server runs or where it writes. Read by the caller
/// ([`Host::settings`]).
pub struct Settings {
    /// `clada.inboxRef`: the shared inbox notes ref.
    pub inbox: String,
    /// `clada.resultsRef`: the shared results notes ref.
    pub results: String,
    /// `clada.serverRun`: whether RUN runs.
    pub run: bool,
    /// `clada.inboxMaxNotes`: the most notes one push may bring.
    pub max_notes: usize,
    /// `clada.lockTimeout`.
    pub lock_timeout: Duration,
    /// `clada.syntax`: how notes are read.
    pub syntax: syntax_::Choice,
    /// `clada.serverBranches`: the branches requests may write
    /// ([`server_branches`]).
    pub branches: Allowed,
    /// `clada.serverReplay` (default true).
    pub replay: bool,
    /// `clada.authorize` ([`Authorize::read`]).
    pub authorize: Option<Authorize>,
}

/// The server a hook runs for: its settings, its caller, and whether it
/// holds the repository's lock.
pub(super) struct Server<'h> {
    inbox: String,
    pub(super) results: String,
    pub(super) run: bool,
    max_notes: usize,
    pub(super) lock_timeout: Duration,
    /// `clada.syntax`: how notes are read.
    pub(super) syntax: syntax_::Choice,
    /// `clada.serverBranches`: the branches requests may write.
    pub(super) branches: Allowed,
    /// `clada.serverReplay` (default true): a request whose base is no
    /// longer its branch's tip is applied on the tip when every operation
    /// applies there as it did (doc/replay.md).
    pub(super) replay: bool,
    /// `clada.authorize`: who may write which branch (`authorize.rs`).
    authorize: Option<Authorize>,
    /// Whether this hook holds `clada.lock` now (`Server::shared`).
    held: std::cell::Cell<bool>,
    /// The caller: settings layers, the apply's report, diagnostics.
    pub(super) host: &'h dyn Host,
}

/// `clada.lock`, held by [`Server::shared`] while shared references are
/// written; lets it go when dropped (unless it was held already).
pub(super) struct Shared<'s> {
    lock: Option<crate::git::lock::Lock>,
    held: &'s std::cell::Cell<bool>,
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        if self.lock.take().is_some() {
            self.held.set(false);
        }
    }
}

impl<'h> Server<'h> {
    pub(super) fn read(repo: &Repository, host: &'h dyn Host) -> Result<Server<'h>, Error> {
        let settings = host.settings(repo)?;
        Ok(Server {
            inbox: settings.inbox,
            results: settings.results,
            run: settings.run,
            max_notes: settings.max_notes,
            lock_timeout: settings.lock_timeout,
            syntax: settings.syntax,
            branches: settings.branches,
            replay: settings.replay,
            authorize: settings.authorize,
            held: std::cell::Cell::new(false),
            host,
        })
    }

    /// The (old, new) commits of this push's updates of the inbox; a
    /// deleted inbox has nothing to check or apply.
    fn inbox_updates(&self, updates: &[RefUpdate]) -> Vec<(Option<ObjectId>, ObjectId)> {
        updates
            .iter()
            .filter(|u| u.name == self.inbox)
            .filter_map(|u| Some((u.old, u.new?)))
            .collect()
    }

    /// The requests this push creates under `refs/clada/inbox/`: (id,
    /// notes commit).
    fn request_updates(updates: &[RefUpdate]) -> Vec<(String, ObjectId)> {
        updates
            .iter()
            .filter(|u| u.old.is_none())
            .filter_map(|u| Some((request_id(&u.name)?.to_string(), u.new?)))
            .collect()
    }

    /// Takes `clada.lock` for writing references every hook writes (the
    /// result and reply notes, result, rejected and request references,
    /// and a branch's compare-and-swap): requests for different branches
    /// are applied at the same time, each under its branch's queue
    /// (`git/queue.rs`), and meet only here, for milliseconds. Nothing to
    /// take when this hook holds it already.
    pub(super) fn shared(&self, repo: &Repository) -> Result<Shared<'_>, Error> {
        if self.held.get() {
            return Ok(Shared {
                lock: None,
                held: &self.held,
            });
        }
        let lock = crate::git::lock::acquire(repo.git_dir(), self.lock_timeout)
            .map_err(|e| Error::new(e.to_string()))?;
        self.held.set(true);
        Ok(Shared {
            lock: Some(lock),
            held: &self.held,
        })
    }

    fn too_many(&self, n: usize) -> Option<String> {
        (n > self.max_notes).then(|| {
            format!(
                "this push adds or changes {n} notes in {}, more than the {} one push may (git config clada.inboxMaxNotes)",
                self.inbox, self.max_notes
            )
        })
    }
}

/// `clada.serverBranches`, every value of it (`git config --add`), each
/// patterns separated by spaces or commas. Set but naming no branch
/// refuses every request rather than allow them all (fails closed).
pub fn server_branches(repo: &Repository) -> Result<Allowed, Error> {
    let fail = |why: String| {
        Error::new(format!("git config clada.serverBranches: {why}"))
            .hint("patterns of branch names, like agents/* (doc/hooks.md)")
    };
    let Some(values) = repo.config_strings("clada.serverBranches") else {
        return Ok(Allowed::all());
    };
    let patterns: Vec<String> = values
        .iter()
        .flat_map(|v| v.split([',', ' ', '\t']))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if patterns.is_empty() {
        return Err(fail("it is set but names no branch".into()));
    }
    Allowed::parse(patterns).map_err(fail)
}

pub(super) fn git(e: GitError) -> Error {
    Error::new(e.to_string())
}

fn parse_updates(stdin: &str) -> Result<Vec<RefUpdate>, Error> {
    updates::parse(stdin).map_err(|e| {
        Error::new(format!("unexpected hook input: {e}"))
            .hint("git runs this hook with one `<old> <new> <ref>` line per updated ref on stdin")
    })
}

/// A note's text as a reply: read within the size limit.
fn request_input(origin: String, content: Result<Vec<u8>, u64>) -> ReplyInput {
    match content {
        Ok(bytes) => ReplyInput::from_bytes(origin, bytes),
        Err(size) => ReplyInput {
            origin,
            bytes: Vec::new(),
            too_large: Some(size),
        },
    }
}

/// Every diagnostic of a request and its summary line, as `git clada
/// parse` prints them.
fn diagnostics(host: &dyn Host, reply: &Parsed<'_>, origin: &str) -> Result<String, Error> {
    let mut text = Vec::new();
    host.diagnostics(&mut text, reply, origin)
        .map_err(|e| Error::new(format!("cannot render diagnostics: {e}")))?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// Why this push's request references cannot be taken, if they cannot:
/// a request is written once, under an id not used before.
fn refused_requests(repo: &Repository, updates: &[RefUpdate]) -> Result<Option<String>, Error> {
    for u in updates {
        let Some(id) = request_id(&u.name) else {
            continue;
        };
        if u.new.is_none() {
            // Withdrawing a request that is not answered yet.
            continue;
        }
        // The old value is the client's word, checked by git only after
        // this hook: a push claiming a waiting request's id as new would
        // otherwise get as far as recording its pusher for it.
        if u.old.is_some() || repo.ref_target(&u.name).map_err(git)?.is_some() {
            return Ok(Some(format!(
                "{} already holds a request: a request reference is written once; push the next request under a new id",
                u.name
            )));
        }
        if id.len() > MAX_ID {
            return Ok(Some(format!(
                "the request id in {} is longer than {MAX_ID} bytes",
                u.name
            )));
        }
        if repo.ref_target(&result_ref(id)).map_err(git)?.is_some() {
            return Ok(Some(format!(
                "the request {id} was answered before ({}); push the next request under a new id",
                result_ref(id)
            )));
        }
        // Its result could not be written beside another's: a reference
        // cannot also be a directory (results/a and results/a/b). Refused
        // now, or it would stay in the inbox unanswerable.
        let taken = id
            .match_indices('/')
            .map(|(at, _)| &id[..at])
            .find(|prefix| matches!(repo.ref_target(&result_ref(prefix)), Ok(Some(_))));
        let under = repo
            .refs_under(&format!("{}/", result_ref(id)))
            .map_err(git)?;
        if let Some(name) = taken.map(result_ref).or(under.into_iter().next()) {
            return Ok(Some(format!(
                "the request id {id} clashes with the answered request at {name}; push it under an id that is neither a prefix of another nor has one"
            )));
        }
    }
    Ok(None)
}

/// References only the hooks write: the reply notes (which reply made
/// which post commit) and everything under `refs/clada/` but the requests
/// (results, rejected results). A pusher who could rewrite them could
/// forge or erase the record.
fn hooks_own(name: &str) -> bool {
    name == crate::transaction::REPLY_NOTES
        || (name.starts_with("refs/clada/") && !name.starts_with(requests::REQUESTS))
}

/// pre-receive for the push whose `<old> <new> <ref>` lines are `stdin`:
/// `Failed` refuses the push; what to tell the pusher is added to `out`.
pub fn pre_receive(
    repo: &Repository,
    host: &dyn Host,
    stdin: &str,
    out: &mut String,
) -> Result<Outcome, Error> {
    let updates = parse_updates(stdin)?;
    let server = Server::read(repo, host)?;
    // A reference named as a prefix itself (refs/clada/inbox) would stop
    // every request or result under it from being written.
    let prefix = |p: &str| p.strip_suffix('/').unwrap_or(p).to_string();
    if let Some(u) = updates
        .iter()
        .find(|u| u.name == prefix(requests::REQUESTS) || u.name == prefix(requests::RESULTS))
    {
        say!(
            out,
            "clada: push rejected: {} cannot be a reference: requests and results are references under it",
            u.name
        );
        return Ok(Outcome::Failed);
    }
    if let Some(u) = updates
        .iter()
        .find(|u| u.name == server.results || requests::result_id(&u.name).is_some())
    {
        say!(
            out,
            "clada: push rejected: {} holds the server's results and only the server writes it",
            u.name
        );
        return Ok(Outcome::Failed);
    }
    if let Some(u) = updates.iter().find(|u| hooks_own(&u.name)) {
        say!(
            out,
            "clada: push rejected: {} is written only by the server's hooks (which reply made which commit, rejected results); push a request under {}<id>",
            u.name,
            requests::REQUESTS
        );
        return Ok(Outcome::Failed);
    }
    if let Some(why) = refused_requests(repo, &updates)? {
        say!(out, "clada: push rejected: {why}");
        return Ok(Outcome::Failed);
    }
    let inbox = server.inbox_updates(&updates);
    let created = Server::request_updates(&updates);
    if inbox.is_empty() && created.is_empty() {
        return Ok(Outcome::Success);
    }
    let delims = host.delimiters(repo)?;
    let mut quarantine = Quarantine::open(repo).map_err(git)?;
    let mut notes = Vec::new();
    // What each request of this push is: its name, the branch it names,
    // its notes (for `clada.authorize`).
    let mut asked: Vec<(String, Option<String>, Vec<Note>)> = Vec::new();
    for &(old, new) in &inbox {
        notes.extend(quarantine.changed_notes(old, new).map_err(|e| {
            git(e).hint(format!(
                "{} must hold git notes (git notes --ref {} add …)",
                server.inbox, server.inbox
            ))
        })?);
    }
    for (id, commit) in &created {
        let found = quarantine.changed_notes(None, *commit).map_err(|e| {
            git(e).hint(format!(
                "{} must be a notes commit (git clada push-reply makes one)",
                request_ref(id)
            ))
        })?;
        if found.is_empty() {
            say!(
                out,
                "clada: push rejected: {} holds no note: a request is a notes commit with the reply as the note on the commit to edit",
                request_ref(id)
            );
            return Ok(Outcome::Failed);
        }
        let message = quarantine.commit_message(*commit).map_err(git)?;
        asked.push((request_ref(id), branch_of(&message), found.clone()));
        notes.extend(found);
    }
    let inbox_notes = notes.len() - asked.iter().map(|(_, _, n)| n.len()).sum::<usize>();
    for note in &notes[..inbox_notes] {
        asked.push((
            format!("the note on {}", repo.short(note.target)),
            None,
            vec![*note],
        ));
    }
    for (id, commit) in &created {
        let message = quarantine.commit_message(*commit).map_err(git)?;
        if let Some(written) = branch_trailer(&message)
            && branch_of(&message).is_none()
        {
            say!(
                out,
                "clada: push rejected: the trailer `Clada-Branch: {written}` of {} does not name one branch; write one branch's name as `git branch` shows it (no wildcards, spaces or `..`), or leave the trailer out to apply to the branch whose tip the note is on",
                request_ref(id)
            );
            return Ok(Outcome::Failed);
        }
        if let Some(branch) = branch_of(&message)
            && !server.branches.allows(&format!("refs/heads/{branch}"))
        {
            say!(
                out,
                "clada: push rejected: {} is for {branch}, which requests may not write on this server (git config clada.serverBranches: {}); send it for one of those branches",
                request_ref(id),
                server.branches.describe()
            );
            return Ok(Outcome::Failed);
        }
    }
    if let Some(why) = server.too_many(notes.len()) {
        say!(out, "clada: push rejected: {why}");
        return Ok(Outcome::Failed);
    }
    let pusher = authorize::pusher(repo);
    if let Some(check) = &server.authorize {
        for (name, branch, found) in &asked {
            let branches = match branch {
                Some(b) => vec![format!("refs/heads/{b}")],
                None => candidates(repo, &server, &updates, found)?,
            };
            for branch in branches {
                if let Err(why) = check.check(repo, pusher.as_deref(), &branch) {
                    say!(
                        out,
                        "clada: push rejected: {name} is for {}, and {why}; nothing was stored",
                        short_branch(&branch)
                    );
                    return Ok(Outcome::Failed);
                }
            }
        }
    }
    let mut broken = 0;
    for note in &notes {
        let origin = format!("note on {}", repo.short(note.target));
        let content = quarantine
            .blob_within(note.blob, crate::csl::input::MAX_INPUT)
            .map_err(git)?;
        let input = request_input(origin, content);
        let reply = reply::parse(&input, server.syntax, &delims);
        out.push_str(&diagnostics(host, &reply, &input.origin)?);
        if reply.has_fatal() {
            broken += 1;
        } else if reply.has_run() && !server.run {
            say!(
                out,
                "clada: warning: {}: its RUN operations will be refused ({RUN_REFUSED})",
                input.origin
            );
        }
    }
    if broken > 0 {
        let how = if inbox.is_empty() {
            "Fix the reply and push it again (git clada push-reply <remote> <branch> reply.md)"
                .to_string()
        } else {
            format!(
                "Fix the reply, replace the note (git notes --ref {} add -f -F reply.md <commit>) and push again",
                server.inbox
            )
        };
        say!(
            out,
            "clada: push rejected: {broken} note{} {} fatal syntax errors (above); nothing was stored. {how}",
            if broken == 1 { "" } else { "s" },
            if broken == 1 { "has" } else { "have" },
        );
        return Ok(Outcome::Failed);
    }
    // Before the request references exist: whichever hook answers a
    // request finds who pushed it (and not who pushed the same id in a
    // push refused later).
    for (id, commit) in &created {
        let Some(pusher) = &pusher else {
            authorize::forget(repo, id);
            continue;
        };
        if let Err(e) = authorize::record(repo, id, *commit, pusher)
            && server.authorize.is_some()
        {
            say!(
                out,
                "clada: push rejected: cannot record who pushed {} (git config clada.authorize needs it): {e}",
                request_ref(id)
            );
            return Ok(Outcome::Failed);
        }
    }
    // Claimed for the receive-pack that runs this push's hooks, until its
    // post-receive claims them for itself: between the moment the
    // request's reference is written and that claim, another push's hook
    // would take the request for one whose hook was stopped and answer it
    // before its own (right, but the two then wait for each other). A
    // killed push's claim dies with it, and the request is recovered.
    if let Some(receiver) = crate::git::lock::receiver_identity() {
        for (id, _) in &created {
            let _ = crate::git::lock::claim_as(&claims_dir(repo).join(claim_file(id)), &receiver);
        }
    }
    Ok(Outcome::Success)
}

/// The branches a request naming none may be applied to, as far as
/// pre-receive can tell: each allowed branch whose tip is one of its
/// notes' commits, or that this push sets to one. post-receive checks
/// the branch it picks again (one may have moved there since).
fn candidates(
    repo: &Repository,
    server: &Server,
    updates: &[RefUpdate],
    notes: &[Note],
) -> Result<Vec<String>, Error> {
    let mut found: Vec<String> = Vec::new();
    for note in notes {
        let pushed = updates
            .iter()
            .filter(|u| u.name.starts_with("refs/heads/") && u.new == Some(note.target))
            .map(|u| u.name.clone());
        for branch in repo
            .branches_at(note.target)
            .map_err(git)?
            .into_iter()
            .chain(pushed)
        {
            if server.branches.allows(&branch) && !found.contains(&branch) {
                found.push(branch);
            }
        }
    }
    Ok(found)
}

/// How many bytes of replies post-receive reads before it takes the lock.
const PRE_READ_BUDGET: usize = 64 << 20;

/// The requests' replies, read and parsed before the lock is taken, by
/// note.
#[derive(Default)]
pub(super) struct Replies<'a>(Vec<(Note, &'a ReplyInput, Parsed<'a>)>);

impl<'a> Replies<'a> {
    fn get(&self, note: &Note) -> Option<(&'a ReplyInput, &Parsed<'a>)> {
        self.0
            .iter()
            .find(|(n, _, _)| n == note)
            .map(|(_, input, parsed)| (*input, parsed))
    }
}

/// A note's text as a reply, within the size limit.
pub(super) fn read_reply(repo: &Repository, note: &Note) -> Result<ReplyInput, Error> {
    let content = repo
        .blob_within(note.blob, crate::csl::input::MAX_INPUT)
        .map_err(git)?;
    Ok(request_input(
        format!("note on {}", repo.short(note.target)),
        content,
    ))
}

/// post-receive for the push whose `<old> <new> <ref>` lines are
/// `stdin`: answers its requests (and those stopped hooks left); `Failed`
/// when one was not answered `success`. What to tell the pusher is added
/// to `out`.
pub fn post_receive(
    repo: &Repository,
    host: &dyn Host,
    stdin: &str,
    out: &mut String,
) -> Result<Outcome, Error> {
    let updates = parse_updates(stdin)?;
    let server = Server::read(repo, host)?;
    let mut notes = Vec::new();
    for (old, new) in server.inbox_updates(&updates) {
        notes.extend(repo.changed_notes(old, new).map_err(git)?);
    }
    let mut ours = Vec::new();
    for (id, commit) in Server::request_updates(&updates) {
        let mut request = Request::read(repo, &id, commit)?;
        // Without pre-receive to record it, the pusher is this push's.
        if request.pusher.is_none() {
            request.pusher = authorize::pusher(repo);
        }
        ours.push(request);
    }
    let count = notes.len() + ours.iter().map(|r| r.notes.len()).sum::<usize>();
    if let Some(why) = server.too_many(count) {
        say!(out, "clada: nothing was applied: {why}");
        return Ok(Outcome::Failed);
    }
    // Until here the claims pre-receive made for this push's receive-pack
    // keep other hooks away from its requests.
    fault::point("post-receive");
    // Claimed before the wait for the lock: a hook that finds them
    // meanwhile leaves them to this one while it lives.
    let _claims: Vec<Claim> = ours
        .iter()
        .map(|r| Claim::take(claims_dir(repo).join(claim_file(&r.id))))
        .collect();
    // Those of stopped hooks are answered by any later push: trouble
    // finding them must not keep this push's own requests unanswered.
    let orphans = orphans(repo, &ours, out).unwrap_or_else(|e| {
        say!(
            out,
            "clada: requests left by stopped hooks were not looked for ({}); the next push answers them",
            e.message
        );
        Vec::new()
    });
    // In the queue of each branch this push's requests are for, in order
    // of arrival: requests for one branch are applied one at a time, for
    // different branches at once. With requests of stopped hooks to
    // answer first, after them: those wait in their own branches' queues
    // one at a time, and a hook waiting there must hold no turn of its
    // own (two hooks could each hold what the other waits for).
    let keys = queue_keys(repo, &server, &notes, &ours)?;
    let mut tickets = orphans
        .is_empty()
        .then(|| Tickets::take(repo.git_dir(), &keys));
    if notes.is_empty() && ours.is_empty() && orphans.is_empty() {
        return Ok(Outcome::Success);
    }
    // Branch tips pushed together with the notes: they single out a branch
    // when several point at a note's commit.
    let pushed: Vec<(String, ObjectId)> = updates
        .iter()
        .filter(|u| u.name.starts_with("refs/heads/"))
        .filter_map(|u| Some((u.name.clone(), u.new?)))
        .collect();
    // Read and parsed now: under the lock, only the apply.
    let delims = host.delimiters(repo)?;
    let all: Vec<Note> = notes
        .iter()
        .chain(ours.iter().flat_map(|r| &r.notes))
        .copied()
        .collect();
    // Up to a budget: a push of many large notes is read under the lock
    // instead, one at a time, rather than all at once here.
    let mut budget = PRE_READ_BUDGET;
    let inputs: Vec<(Note, ReplyInput)> = all
        .iter()
        .map_while(|n| {
            let input = read_reply(repo, n).ok();
            let size = input.as_ref().map_or(0, |i| i.bytes.len());
            budget = budget.checked_sub(size)?;
            Some(input.map(|i| (*n, i)))
        })
        .flatten()
        .collect();
    let replies = Replies(
        inputs
            .iter()
            .map(|(n, input)| (*n, input, reply::parse(input, server.syntax, &delims)))
            .collect(),
    );
    let unanswered = |e: String| {
        let mut list: Vec<String> = notes
            .iter()
            .map(|n| format!("the note on {}", repo.short(n.target)))
            .collect();
        list.extend(ours.iter().map(|r| format!("the request {}", r.id)));
        if list.is_empty() {
            list.push("no request of this push".to_string());
        }
        Error::new(format!("{e}; {} were not answered", list.join(", ")))
        .hint("requests pushed under refs/clada/inbox/ are answered by the next push to this repository (or git clada hook recover on the server); a note in the shared inbox must be replaced by a changed one and pushed again. Raise git config clada.lockTimeout if this is frequent")
    };
    let author = host.author(repo)?;
    // The requests left by stopped hooks first (they are older), each in
    // its branch's queue.
    let recovered = recover(repo, &server, &author, orphans, out);
    tickets
        .get_or_insert_with(|| Tickets::take(repo.git_dir(), &keys))
        .wait(server.lock_timeout)
        .map_err(unanswered)?;
    // Commands run in the repository's one scratch working tree: a
    // server that runs them applies one request at a time, as before.
    // Taken after the turn, never before: a hook holding clada.lock must
    // not wait for a turn another hook holds while it needs clada.lock.
    let _whole = if server.run {
        Some(server.shared(repo).map_err(|e| unanswered(e.message))?)
    } else {
        None
    };
    fault::point("hook-locked");
    let mut outcome = Outcome::Success;
    let mut tally = |status: Option<String>| {
        if status.is_some_and(|s| s != "success") {
            outcome = Outcome::Failed;
        }
    };
    // One request's trouble is its own: the others are still answered.
    if let Err(e) = recovered {
        say!(
            out,
            "clada: recovering waiting requests: error: {}",
            e.message
        );
        tally(Some("error".into()));
    }
    for note in &notes {
        // One request's trouble is its own: the others are still answered.
        match respond(repo, &server, &author, note, &pushed, &replies, out) {
            Ok(status) => tally(status),
            Err(e) => {
                say!(
                    out,
                    "clada: note on {}: error: {}",
                    repo.short(note.target),
                    e.message
                );
                tally(Some("error".into()));
            }
        }
    }
    // A push of one request gives its branches' turn back as soon as the
    // request is applied: what is left (its result written, the request
    // taken away) moves no branch, and the next request for the branch is
    // applied meanwhile, where it waited for all of it (on a disk where a
    // file costs a millisecond, most of a request's turn). Several
    // requests, or notes of the shared inbox, keep it to the end: each is
    // applied after the one before, and an inbox note's result is what
    // keeps it from being applied twice. A server that runs commands
    // applies one request at a time anyway (`_whole`).
    let lone = ours.len() == 1 && notes.is_empty() && !server.run;
    let mut give_back = || {
        if lone {
            tickets.take();
        }
    };
    for request in &ours {
        let came = Came::Pushed(&pushed, &replies);
        match answer_request(repo, &server, &author, request, came, &mut give_back, out) {
            Ok(statuses) => statuses.into_iter().for_each(|s| tally(Some(s))),
            Err(e) => {
                say!(out, "clada: request {}: error: {}", request.id, e.message);
                tally(Some("error".into()));
            }
        }
    }
    if !notes.is_empty() {
        say!(
            out,
            "clada: results are in {} (git fetch origin {}:{})",
            server.results,
            server.results,
            server.results
        );
    }
    Ok(outcome)
}

/// The branches (full names) the queues of which this push's requests
/// wait in: the one a request names, else those whose tip is a note's
/// commit.
pub(super) fn queue_keys(
    repo: &Repository,
    server: &Server,
    notes: &[Note],
    ours: &[Request],
) -> Result<Vec<String>, Error> {
    let mut keys = Vec::new();
    let unnamed = ours
        .iter()
        .filter(|r| r.branch.is_none())
        .flat_map(|r| &r.notes);
    for note in notes.iter().chain(unnamed) {
        keys.extend(
            repo.branches_at(note.target)
                .map_err(git)?
                .into_iter()
                .filter(|b| server.branches.allows(b)),
        );
    }
    keys.extend(ours.iter().filter_map(|r| r.branch.clone()));
    Ok(keys)
}

/// Answers `note` (an error is an answer too) and writes its result note
/// in the shared results ref: its status and text.
fn answer_and_note(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    note: &Note,
    pushed: &[(String, ObjectId)],
    request: Option<&Request>,
    replies: &Replies<'_>,
) -> Result<(String, String), Error> {
    let result = answer_note(repo, server, note, pushed, request, replies);
    let text = write_result(repo, server, author, note, &result)?;
    Ok((result.status, text))
}

/// Answers `note`: the result to write, an error being an answer too.
pub(super) fn answer_note(
    repo: &Repository,
    server: &Server,
    note: &Note,
    pushed: &[(String, ObjectId)],
    request: Option<&Request>,
    replies: &Replies<'_>,
) -> ResultNote {
    answer(repo, server, note, pushed, request, replies).unwrap_or_else(|e| ResultNote {
        status: "error".into(),
        request: note.blob,
        request_ref: request.map(|r| request_ref(&r.id)),
        branch: None,
        post: None,
        pusher: pusher_of(repo, request),
        body: render_error(&e),
    })
}

/// Writes `result` as the note on `note`'s commit in the shared results
/// ref; its text.
pub(super) fn write_result(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    note: &Note,
    result: &ResultNote,
) -> Result<String, Error> {
    let text = result.render();
    let _shared = server.shared(repo)?;
    repo.set_note_with(
        author,
        &server.results,
        note.target,
        text.as_bytes(),
        "clada: result of a request",
    )
    .map_err(git)?;
    Ok(text)
}

/// Answers one request and writes its result note; the status, or `None`
/// when it was answered before.
fn respond(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    note: &Note,
    pushed: &[(String, ObjectId)],
    replies: &Replies<'_>,
    out: &mut String,
) -> Result<Option<String>, Error> {
    let short = repo.short(note.target);
    if let Some(old) = repo.note(&server.results, note.target).map_err(git)?
        && request_of(&old) == Some(note.blob)
    {
        say!(
            out,
            "clada: the note on {short} was answered before; it is not applied again"
        );
        return Ok(None);
    }
    let (status, text) = answer_and_note(repo, server, author, note, pushed, None, replies)?;
    say!(out, "clada: note on {short}: {status}");
    out.push_str(&text);
    Ok(Some(status))
}

/// Who pushed a request: the one recorded for a request of its own,
/// this push's pusher for a note in the shared inbox (answered only by
/// its own push's hook).
fn pusher_of(repo: &Repository, request: Option<&Request>) -> Option<String> {
    match request {
        Some(r) => r.pusher.clone(),
        None => authorize::pusher(repo),
    }
}

/// An error as the command line prints it, for a result note.
pub(super) fn render_error(e: &Error) -> String {
    match &e.hint {
        Some(hint) => format!("error: {}\nhint: {hint}\n", e.message),
        None => format!("error: {}\n", e.message),
    }
}

/// The branch a request on `target` applies to.
enum Choice {
    One(String),
    None,
    Many(Vec<String>),
    /// Branches are there, but requests may not write any of them.
    Refused(Vec<String>),
}

fn choose(
    repo: &Repository,
    target: ObjectId,
    pushed: &[(String, ObjectId)],
    allowed: &Allowed,
) -> Result<Choice, Error> {
    let (tips, refused): (Vec<String>, Vec<String>) = repo
        .branches_at(target)
        .map_err(git)?
        .into_iter()
        .partition(|b| allowed.allows(b));
    if tips.is_empty() && !refused.is_empty() {
        return Ok(Choice::Refused(refused));
    }
    Ok(match tips.len() {
        0 => Choice::None,
        1 => Choice::One(tips[0].clone()),
        _ => {
            let in_push: Vec<&String> = tips
                .iter()
                .filter(|b| pushed.iter().any(|(name, id)| name == *b && *id == target))
                .collect();
            match in_push.as_slice() {
                [one] => Choice::One((*one).clone()),
                _ => Choice::Many(tips),
            }
        }
    })
}

/// Whether `branch` is checked out in this (non-bare) repository.
fn checked_out_here(repo: &Repository, branch: &str) -> Result<bool, Error> {
    if repo.workdir().is_none() {
        return Ok(false);
    }
    Ok(matches!(repo.head().map_err(git)?, Head::Branch { name, .. } if name == branch))
}

pub(super) fn short_branch(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

/// Applies one note (under the lock) and says how it went; `request`:
/// the request of its own it came in, if it did (it may name the branch).
pub(super) fn answer(
    repo: &Repository,
    server: &Server,
    note: &Note,
    pushed: &[(String, ObjectId)],
    request: Option<&Request>,
    replies: &Replies<'_>,
) -> Result<ResultNote, Error> {
    let wanted = request.and_then(|r| r.branch.as_deref());
    let request_name = request.map(|r| request_ref(&r.id));
    let short = repo.short(note.target);
    let pusher = pusher_of(repo, request);
    let mut result = ResultNote {
        status: String::new(),
        request: note.blob,
        request_ref: request_name.clone(),
        branch: None,
        post: None,
        pusher: pusher.clone(),
        body: String::new(),
    };
    let refused = |result: &mut ResultNote, names: &[&str]| {
        result.status = "refused".into();
        result.body = format!(
            "refused: requests may not write {} on this server (git config clada.serverBranches: {}); the request was not applied.\n    send it for one of those branches\n",
            names.join(", "),
            server.branches.describe()
        );
    };
    let choice = match wanted {
        Some(name) if !server.branches.allows(name) => {
            result.branch = Some(short_branch(name).to_string());
            refused(&mut result, &[short_branch(name)]);
            return Ok(result);
        }
        Some(name) if repo.ref_target(name).map_err(git)? == Some(note.target) => {
            Choice::One(name.to_string())
        }
        // Moved since: applied on its tip by the transaction's replay,
        // which refuses a tip not built on the note's commit.
        Some(name) if server.replay && repo.ref_target(name).map_err(git)?.is_some() => {
            Choice::One(name.to_string())
        }
        Some(name) => {
            let name = short_branch(name);
            result.status = "stale".into();
            result.branch = Some(name.to_string());
            result.body = format!(
                "stale: {name} is no longer at {short}; the request was not applied.\n    fetch, bring your work onto the new tip of {name}, and push the reply again (git clada push-reply <remote> {name} reply.md)\n"
            );
            return Ok(result);
        }
        None => choose(repo, note.target, pushed, &server.branches)?,
    };
    let branch = match choice {
        Choice::One(branch) => branch,
        Choice::None => {
            result.status = "stale".into();
            result.body = format!(
                "stale: {short} is not the tip of any branch; the request was not applied.\n    fetch, and send the reply again as a note on the tip of the branch you mean (git notes --ref {} add -F reply.md origin/<branch>)\n",
                server.inbox
            );
            return Ok(result);
        }
        Choice::Refused(tips) => {
            let names: Vec<&str> = tips.iter().map(|b| short_branch(b)).collect();
            refused(&mut result, &names);
            return Ok(result);
        }
        Choice::Many(tips) => {
            let names: Vec<&str> = tips.iter().map(|b| short_branch(b)).collect();
            result.status = "ambiguous".into();
            result.body = format!(
                "ambiguous: {short} is the tip of several branches ({}); the request was not applied.\n    push the branch you mean in the same push as the note, or put the note on a commit of its own\n",
                names.join(", ")
            );
            return Ok(result);
        }
    };
    result.branch = Some(short_branch(&branch).to_string());
    // pre-receive asked already, for the branches it could foresee; asked
    // again for the one chosen now, which may have moved here since, and
    // for a request answered by another pusher's hook.
    if let Some(check) = &server.authorize
        && let Err(why) = check.check(repo, pusher.as_deref(), &branch)
    {
        result.status = "refused".into();
        result.body = format!(
            "refused: {why}; the request was not applied.\n    ask the server's administrator for write access to {}, or send the request for a branch you may push\n",
            short_branch(&branch)
        );
        return Ok(result);
    }
    if checked_out_here(repo, &branch)? {
        // Moving it would leave that working tree behind its branch, the
        // state git's receive.denyCurrentBranch exists to prevent.
        result.status = "error".into();
        result.body = format!(
            "error: {} is checked out in the server's working tree; the request was not applied\nhint: serve the repository bare (git clone --bare), or send the request for another branch\n",
            short_branch(&branch)
        );
        return Ok(result);
    }
    // Read and parsed before the lock, unless this is a request found
    // under it (left by a stopped hook).
    let (own_input, own_reply);
    let (input, reply) = match replies.get(note) {
        Some(found) => found,
        None => {
            own_input = read_reply(repo, note)?;
            let delims = server.host.delimiters(repo)?;
            own_reply = reply::parse(&own_input, server.syntax, &delims);
            (&own_input, &own_reply)
        }
    };
    if reply.has_fatal() {
        // pre-receive normally refuses these; without it, or with other
        // delimiters since, the result says why nothing ran.
        result.status = "fatal".into();
        result.body = format!(
            "{}FATAL: nothing was applied: the reply has fatal syntax errors\n",
            diagnostics(server.host, reply, &input.origin)?
        );
        return Ok(result);
    }
    let shared = || -> Result<Box<dyn crate::transaction::Held + '_>, crate::transaction::Error> {
        server
            .shared(repo)
            .map(|s| Box::new(s) as Box<dyn crate::transaction::Held + '_>)
            .map_err(|e| crate::transaction::Error::new(e.message))
    };
    let target = Target {
        branch: &branch,
        base: Some(note.target),
        worktree: false,
        // With clada.serverRun, RUN (and verify) run in the scratch working
        // tree of this bare repository (doc/run.md, doc/hooks.md).
        refuse_run: (!server.run).then_some(RUN_REFUSED),
        request: request_name.as_deref(),
        pusher: pusher.as_deref(),
        replay: server.replay,
        shared: Some(&shared),
    };
    if reply.is_empty() {
        let applied = crate::transaction::no_operations(reply);
        result.status = applied.ending.name().into();
        result.body = format!("{}\n", applied.message);
        return Ok(result);
    }
    match server.host.apply(repo, input, reply, &target) {
        Ok((applied, report)) => {
            let ending = applied.ending;
            result.status = match ending {
                // Moved under it and not applied on the new tip: the
                // server's word for a request whose base is gone.
                crate::transaction::Ending::BranchMoved => "stale".to_string(),
                _ => ending.name().to_string(),
            };
            result.post = applied.post.filter(|_| {
                use crate::transaction::Ending;
                matches!(
                    ending,
                    Ending::Success | Ending::Failed | Ending::Partial | Ending::Rejected
                )
            });
            result.body = String::from_utf8_lossy(&report).into_owned();
        }
        Err(e) => {
            result.status = "error".into();
            result.body = render_error(&e);
        }
    }
    Ok(result)
}
