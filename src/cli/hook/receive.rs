//! The server hooks: CSL pushed as notes in the inbox notes ref (git.md §5).
//!
//! `pre-receive` checks every note a push adds to or changes in the inbox
//! and rejects the push when one has a fatal syntax error, printing the
//! diagnostics for the pusher. The pushed objects are in quarantine, so they
//! are read with the git program (`git/quarantine.rs`), and nothing is
//! written.
//!
//! `post-receive` answers each such note under the apply lock: when its
//! commit is the tip of a branch, the note's CSL is applied to that branch
//! in the bare repository (`transaction::apply` without a working tree,
//! through `cli::apply::apply_and_render` for its report); otherwise it
//! is `stale`. Either way the report becomes a result note on the commit in
//! the results ref. A note whose result already answers the same note
//! text is not applied again (a push may bring back notes answered before).

use std::time::Duration;

use crate::fault;
use crate::git::commit::Identity;
use crate::git::inbox::Note;
use crate::git::quarantine::Quarantine;
use crate::git::{GitError, Head, ObjectId, Repository};
use crate::hook::result::{ResultNote, request_of};
use crate::hook::updates::{self, RefUpdate};

use crate::cli::apply::{self, ApplyArgs, Format, OutputMode, apply_and_render, parse_input};
use crate::cli::config::{Layers, parse_duration};
use crate::cli::parse::write_text;
use crate::cli::{CliError, Outcome, ReplyInput, settings};
use crate::syntax::{self as syntax_, Parsed};
use crate::transaction::{Target, Timings};

/// Why RUN did not run (a server without `clada.serverRun`).
const RUN_REFUSED: &str =
    "RUN is disabled on this server (git config clada.serverRun is not true); nothing was run";

/// The server's settings, from its git config only: the pushed tree must
/// not decide what the server runs or where it writes.
struct Server {
    inbox: String,
    results: String,
    run: bool,
    max_notes: usize,
    lock_timeout: Duration,
    /// `clada.syntax`: how notes are read.
    syntax: syntax_::Choice,
}

impl Server {
    fn read(repo: &Repository) -> Result<Server, CliError> {
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
        Ok(Server {
            inbox,
            results,
            run: layers.get_bool(None, "serverRun")?.unwrap_or(false),
            max_notes,
            lock_timeout,
            syntax: apply::syntax_choice(None, Some(repo))?,
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

    fn too_many(&self, n: usize) -> Option<String> {
        (n > self.max_notes).then(|| {
            format!(
                "this push adds or changes {n} notes in {}, more than the {} one push may (git config clada.inboxMaxNotes)",
                self.inbox, self.max_notes
            )
        })
    }
}

fn git(e: GitError) -> CliError {
    CliError::new(e.to_string())
}

fn parse_updates(stdin: &str) -> Result<Vec<RefUpdate>, CliError> {
    updates::parse(stdin).map_err(|e| {
        CliError::new(format!("unexpected hook input: {e}"))
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
fn diagnostics(reply: &Parsed<'_>, origin: &str) -> Result<String, CliError> {
    let mut text = Vec::new();
    write_text(&mut text, reply, origin)
        .map_err(|e| CliError::new(format!("cannot render diagnostics: {e}")))?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

pub fn pre_receive(repo: &Repository, stdin: &str) -> Result<Outcome, CliError> {
    let updates = parse_updates(stdin)?;
    let server = Server::read(repo)?;
    if let Some(u) = updates.iter().find(|u| u.name == server.results) {
        eprintln!(
            "clada: push rejected: {} holds the server's results and only the server writes it",
            u.name
        );
        return Ok(Outcome::Failed);
    }
    let inbox = server.inbox_updates(&updates);
    if inbox.is_empty() {
        return Ok(Outcome::Success);
    }
    let delims = settings::delimiters_in(Some(repo), None, None)?;
    let mut quarantine = Quarantine::open(repo.git_dir()).map_err(git)?;
    let mut notes = Vec::new();
    for (old, new) in inbox {
        notes.extend(quarantine.changed_notes(old, new).map_err(|e| {
            git(e).hint(format!(
                "{} must hold git notes (git notes --ref {} add …)",
                server.inbox, server.inbox
            ))
        })?);
    }
    if let Some(why) = server.too_many(notes.len()) {
        eprintln!("clada: push rejected: {why}");
        return Ok(Outcome::Failed);
    }
    let mut broken = 0;
    for note in &notes {
        let origin = format!("note on {}", repo.short(note.target));
        let content = quarantine
            .blob_within(note.blob, crate::csl::input::MAX_INPUT)
            .map_err(git)?;
        let input = request_input(origin, content);
        let reply = parse_input(&input, server.syntax, &delims);
        eprint!("{}", diagnostics(&reply, &input.origin)?);
        if reply.has_fatal() {
            broken += 1;
        } else if reply.has_run() && !server.run {
            eprintln!(
                "clada: warning: {}: its RUN operations will be refused ({RUN_REFUSED})",
                input.origin
            );
        }
    }
    if broken > 0 {
        eprintln!(
            "clada: push rejected: {broken} note{} in {} {} fatal syntax errors (above); nothing was stored. Fix the reply, replace the note (git notes --ref {} add -f -F reply.md <commit>) and push again",
            if broken == 1 { "" } else { "s" },
            server.inbox,
            if broken == 1 { "has" } else { "have" },
            server.inbox
        );
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Success)
}

pub fn post_receive(repo: &Repository, stdin: &str) -> Result<Outcome, CliError> {
    let updates = parse_updates(stdin)?;
    let server = Server::read(repo)?;
    let inbox = server.inbox_updates(&updates);
    if inbox.is_empty() {
        return Ok(Outcome::Success);
    }
    let mut notes = Vec::new();
    for (old, new) in inbox {
        notes.extend(repo.changed_notes(old, new).map_err(git)?);
    }
    if let Some(why) = server.too_many(notes.len()) {
        eprintln!("clada: nothing was applied: {why}");
        return Ok(Outcome::Failed);
    }
    if notes.is_empty() {
        return Ok(Outcome::Success);
    }
    // Branch tips pushed together with the notes: they single out a branch
    // when several point at a note's commit.
    let pushed: Vec<(String, ObjectId)> = updates
        .iter()
        .filter(|u| u.name.starts_with("refs/heads/"))
        .filter_map(|u| Some((u.name.clone(), u.new?)))
        .collect();
    let _lock = crate::git::lock::acquire(repo.git_dir(), server.lock_timeout).map_err(|e| {
        let list: Vec<String> = notes.iter().map(|n| repo.short(n.target)).collect();
        CliError::new(format!(
            "{e}; the notes on {} were not applied",
            list.join(", ")
        ))
        .hint("raise git config clada.lockTimeout on the server; to retry, replace the note with a changed one and push again")
    })?;
    fault::point("hook-locked");
    let author = apply::author(None, &Layers::new(Some(repo)))?;
    let mut outcome = Outcome::Success;
    for note in &notes {
        // One request's trouble is its own: the others are still answered.
        match respond(repo, &server, &author, note, &pushed) {
            Ok(Some(status)) if status == "success" => {}
            Ok(None) => {}
            Ok(Some(_)) => outcome = Outcome::Failed,
            Err(e) => {
                eprintln!(
                    "clada: note on {}: error: {}",
                    repo.short(note.target),
                    e.message
                );
                outcome = Outcome::Failed;
            }
        }
    }
    println!(
        "clada: results are in {} (git fetch origin {}:{})",
        server.results, server.results, server.results
    );
    Ok(outcome)
}

/// Answers one request and writes its result note; the status, or `None`
/// when it was answered before.
fn respond(
    repo: &Repository,
    server: &Server,
    author: &Identity,
    note: &Note,
    pushed: &[(String, ObjectId)],
) -> Result<Option<String>, CliError> {
    let short = repo.short(note.target);
    if let Some(old) = repo.note(&server.results, note.target).map_err(git)?
        && request_of(&old) == Some(note.blob)
    {
        println!("clada: the note on {short} was answered before; it is not applied again");
        return Ok(None);
    }
    let result = answer(repo, server, note, pushed).unwrap_or_else(|e| ResultNote {
        status: "error".into(),
        request: note.blob,
        branch: None,
        post: None,
        body: render_error(&e),
    });
    let text = result.render();
    repo.set_note_with(
        author,
        &server.results,
        note.target,
        text.as_bytes(),
        "clada: result of a request",
    )
    .map_err(git)?;
    println!("clada: note on {short}: {}", result.status);
    print!("{text}");
    Ok(Some(result.status))
}

/// An error as the CLI prints it, for a result note.
fn render_error(e: &CliError) -> String {
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
}

fn choose(
    repo: &Repository,
    target: ObjectId,
    pushed: &[(String, ObjectId)],
) -> Result<Choice, CliError> {
    let tips = repo.branches_at(target).map_err(git)?;
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
fn checked_out_here(repo: &Repository, branch: &str) -> Result<bool, CliError> {
    if repo.workdir().is_none() {
        return Ok(false);
    }
    Ok(matches!(repo.head().map_err(git)?, Head::Branch { name, .. } if name == branch))
}

fn short_branch(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

/// Applies one request (under the lock) and says how it went.
fn answer(
    repo: &Repository,
    server: &Server,
    note: &Note,
    pushed: &[(String, ObjectId)],
) -> Result<ResultNote, CliError> {
    let short = repo.short(note.target);
    let mut result = ResultNote {
        status: String::new(),
        request: note.blob,
        branch: None,
        post: None,
        body: String::new(),
    };
    let branch = match choose(repo, note.target, pushed)? {
        Choice::One(branch) => branch,
        Choice::None => {
            result.status = "stale".into();
            result.body = format!(
                "stale: {short} is not the tip of any branch; the request was not applied.\n    fetch, and send the reply again as a note on the tip of the branch you mean (git notes --ref {} add -F reply.md origin/<branch>)\n",
                server.inbox
            );
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
    let content = repo
        .blob_within(note.blob, crate::csl::input::MAX_INPUT)
        .map_err(git)?;
    let input = request_input(format!("note on {short}"), content);
    let delims = settings::delimiters_in(Some(repo), None, None)?;
    let reply = parse_input(&input, server.syntax, &delims);
    if reply.has_fatal() {
        // pre-receive normally refuses these; without it, or with other
        // delimiters since, the result says why nothing ran.
        result.status = "fatal".into();
        result.body = format!(
            "{}FATAL: nothing was applied: the reply has fatal syntax errors\n",
            diagnostics(&reply, &input.origin)?
        );
        return Ok(result);
    }
    let args = ApplyArgs {
        // Results are read by people and agents alike: the text report,
        // with every task line, then trailers.
        format: Some(Format::Text),
        output_mode: Some(OutputMode::Buffer),
        ..ApplyArgs::default()
    };
    let target = Target {
        branch: &branch,
        base: Some(note.target),
        worktree: false,
        // With clada.serverRun, RUN (and verify) run in the scratch working
        // tree of this bare repository (doc/run.md, doc/hooks.md).
        refuse_run: (!server.run).then_some(RUN_REFUSED),
    };
    if reply.is_empty() {
        let applied = crate::transaction::no_operations(&reply);
        result.status = applied.ending.name().into();
        result.body = format!("{}\n", applied.message);
        return Ok(result);
    }
    match apply_and_render(
        repo,
        &args,
        &input,
        &reply,
        &target,
        false,
        &mut Timings::default(),
    ) {
        Ok(rendered) => {
            let ending = rendered.applied.ending;
            result.status = ending.name().to_string();
            result.post = rendered.applied.post.filter(|_| {
                use crate::transaction::Ending;
                matches!(
                    ending,
                    Ending::Success | Ending::Failed | Ending::Partial | Ending::Rejected
                )
            });
            result.body = String::from_utf8_lossy(&rendered.report).into_owned();
        }
        Err(e) => {
            result.status = "error".into();
            result.body = render_error(&e);
        }
    }
    Ok(result)
}
