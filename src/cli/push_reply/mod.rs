//! `git clada push-reply <remote> <branch> reply.md`: the agent's side of
//! the per-request protocol (doc/hooks.md, "Requests of their own").
//!
//! Makes the request — a notes commit holding the reply as the note on
//! the tip of `<branch>` — pushes it to `refs/clada/inbox/<id>` (with the
//! branch, when the remote may not have that tip), waits for the server's
//! answer at `refs/clada/results/<id>`, prints it and exits as `apply`
//! would have. gix cannot push, and fetches here would need its HTTP
//! transport: the pushing and fetching are the `git` program's
//! (doc/architecture.md lists every such call); a request alone over
//! HTTP goes to git's remote helper without `git push` in front
//! (`helper.rs`). The request's form, its
//! id's rules and whether a result answers it (`server::client`), and
//! rebuilding the server's post commit from the push's output
//! (`server::rebuild`) are the server library's.

mod broken;
mod helper;
mod stop;
mod update;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::git::Repository;
use crate::hook::requests::{new_id, request_ref, result_ref};
use crate::hook::result::{from_push_output, post_of, status_of};
use crate::server::{client, rebuild};

use super::config::{Layers, parse_duration};
use super::{CliError, Outcome, ReplyInput};

/// Push a reply to a clada server as a request of its own and print the result
///
/// The reply becomes a request of its own: a notes commit with the reply
/// as the note on the tip of BRANCH, pushed to refs/clada/inbox/<id> on
/// REMOTE. When the remote-tracking branch REMOTE/BRANCH is not at that
/// tip (or there is none), the branch is pushed in the same atomic push,
/// so the server has the commit the reply edits. The server's hooks check
/// the request (a reply with fatal errors is refused at the push, with its
/// diagnostics), apply it to the branch and answer at
/// refs/clada/results/<id>. The push's own output carries the result
/// (checked against the SHA-1 the server announces); when it does not,
/// the result is fetched, retrying until --timeout. The applied branch is
/// brought into REMOTE/BRANCH (its new commit rebuilt here from the reply
/// when that gives the server's commit, else fetched), and the result
/// printed. After a request that applied, the local BRANCH is
/// fast-forwarded to the applied commit when it is still where the
/// request was made (with the working tree when it is checked out: only
/// the files the request changed, your uncommitted changes kept), so the
/// next reply can be sent at once; --no-update leaves it. No shared ref is
/// written,
/// so agents pushing at the same time never make each other's pushes
/// fail.
///
/// A push that fails without the server's verdict, or is stopped at
/// --push-timeout, is not taken for a refusal: the server is asked (git
/// ls-remote) whether it holds the request or its result, and when it
/// does, the result is waited for as after any push.
///
/// Exit status, as `git clada apply`: 0 success; 1 some task failed or
/// the apply was rejected; 2 the push was refused, the reply had fatal
/// errors, or no result came in time; 3 the branch moved (the reply's
/// commit is no longer the branch's tip: fetch, and send the reply again
/// for the new tip). And push-reply's own: 4 the outcome is unknown (the
/// push broke or was stopped after sending the request, and the server
/// does not have it or cannot be asked: it may yet be applied; the command that
/// fetches the result later is printed, and sending the reply again under
/// the same --id is safe, as the server takes an id once); 5 nothing was
/// sent (the connection to the server failed: send the reply again when
/// it can be reached).
#[derive(Debug, clap::Args)]
pub struct PushReplyArgs {
    /// The remote: a configured remote's name or a URL
    pub remote: String,
    /// The branch to apply the reply to; the request is on its tip here
    pub branch: String,
    /// The reply file (`-` for standard input)
    pub reply: PathBuf,
    /// How long to wait for the result after the push (and the fetches
    /// after it)
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = duration)]
    pub timeout: Duration,
    /// How long the push itself may take before it is stopped (a server
    /// that hangs must not hang the agent); the server is then asked
    /// whether it has the request, as after a push that broke
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration)]
    pub push_timeout: Duration,
    /// The request's id (default: the time, this process and the reply)
    #[arg(long)]
    pub id: Option<String>,
    /// Do not fetch the branch after the result (the result itself is
    /// still fetched when the push's output does not hold it)
    #[arg(long)]
    pub no_fetch: bool,
    /// Leave the local branch where it is after the request applied
    /// (by default it is fast-forwarded to the applied commit when it is
    /// still at the commit the reply was sent for, and the working tree
    /// with it, your uncommitted work kept)
    #[arg(long)]
    pub no_update: bool,
}

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s).ok_or_else(|| format!("{s:?} is not a duration (like 90s, 2m)"))
}

pub fn run_push_reply(args: PushReplyArgs) -> Result<Outcome, CliError> {
    let repo = Repository::discover(std::path::Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| {
            CliError::new("not a git repository (or any of its parents)")
                .hint("run it in a clone of the repository the server serves")
        })?;
    // A server that hangs must not hang the agent: the push is stopped at
    // --push-timeout (and what comes after it at --timeout).
    let push_deadline = Instant::now() + args.push_timeout;
    let input = ReplyInput::read(Some(&args.reply), "push-reply")?;
    if let Some(size) = input.too_large {
        return Err(CliError::new(format!(
            "{} is over the 50 MiB limit ({size} bytes)",
            input.origin
        )));
    }
    let branch = format!("refs/heads/{}", args.branch);
    let tip = repo
        .ref_target(&branch)
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| {
            CliError::new(format!("there is no branch {} here", args.branch)).hint(format!(
                "fetch it first: git fetch {} {}:{}",
                args.remote, args.branch, args.branch
            ))
        })?;
    let author = super::apply::author(None, &Layers::new(Some(&repo)))?;
    let request = client::request_commit(&repo, &author, tip, &input.bytes, &args.branch)
        .map_err(|e| CliError::new(e.to_string()))?;
    let id = match args.id.clone() {
        Some(id) => id,
        None => new_id(&request.to_string()),
    };
    if !client::is_request_id(&id) {
        return Err(CliError::new(format!("{id:?} cannot be a request id"))
            .hint("use letters, digits, '-', '.', '_' and '/'"));
    }
    // A named remote has remote-tracking branches: when ours is at the
    // tip or past it (the branch moved on the server since, and the
    // request is replayed there), the server has it; otherwise the branch
    // goes along.
    let named = repo
        .config_string(&format!("remote.{}.url", args.remote))
        .is_some();
    let tracking = format!("refs/remotes/{}/{}", args.remote, args.branch);
    let known = named
        && repo
            .ref_target(&tracking)
            .ok()
            .flatten()
            .is_some_and(|t| t == tip || repo.is_ancestor(tip, t).unwrap_or(false));
    // The request alone, to a remote over HTTP: to git's helper directly
    // (`helper.rs`); anything more is `git push`'s.
    let direct = known
        .then(|| helper::Helper::for_remote(&repo, &args.remote))
        .flatten();
    let pushed = if let Some(helper) = direct {
        let (src, dst) = (request.to_string(), request_ref(&id));
        let script = helper::Helper::script(&src, &dst);
        run_until_with(
            &mut helper.command(),
            Some(script.as_bytes()),
            push_deadline,
        )?
        .map(|ran| helper.as_porcelain(ran, &src, &dst))
    } else {
        let mut push = git();
        push.args(["push", "--porcelain"]);
        if !known {
            push.arg("--atomic");
        }
        push.arg("--")
            .arg(&args.remote)
            .arg(format!("{request}:{}", request_ref(&id)));
        if !known {
            push.arg(format!("{tip}:{branch}"));
        }
        run_until(&mut push, push_deadline)?
    };
    if !pushed.as_ref().is_some_and(|p| p.status.success()) {
        // Asked until --timeout, as what follows a push.
        let asking = Instant::now() + args.timeout;
        let fate = broken::fate(pushed.as_ref(), &args.remote, &id, request, asking)?;
        let broke = match &pushed {
            Some(p) if matches!(fate, broken::Fate::Answered) => {
                return Ok(refused(p, &args.branch));
            }
            Some(p) => {
                eprint!("{}", String::from_utf8_lossy(&p.stderr));
                if matches!(fate, broken::Fate::Taken) {
                    // git's own refusal (non-fast-forward) is in its
                    // porcelain report, not on standard error.
                    eprint!("{}", String::from_utf8_lossy(&p.stdout));
                }
                "the push broke (above)".to_string()
            }
            // A server that hangs must not hang the agent, and a push
            // stopped is one whose outcome is to be found out as well.
            None => format!(
                "the push of the request {id} did not finish within {:?} (--push-timeout) and was stopped",
                args.push_timeout
            ),
        };
        if let Some(outcome) = untold(&args, &id, &broke, fate) {
            return Ok(outcome);
        }
    }
    let push_said = pushed.map(|p| p.stderr).unwrap_or_default();
    let deadline = Instant::now() + args.timeout;
    // The push's output holds the result when the server answered at
    // once; it is fetched only when it does not (or came in pieces). The
    // branch is brought here either way, for the agent to go on from.
    // A result is ours only if it names our reply and our reference.
    let reply_blob = repo
        .blob_id(&input.bytes)
        .map_err(|e| CliError::new(e.to_string()))?;
    let ours = |text: &[u8]| client::answers(text, reply_blob, &id);
    let shown = from_push_output(&String::from_utf8_lossy(&push_said), &id)
        .filter(|text| ours(text.as_bytes()));
    let fetch_branch = named && !args.no_fetch;
    // Whether a fetch wrote objects behind this handle's back.
    let mut fetched = true;
    let text = match shown {
        Some(text) => {
            fetched = false;
            if fetch_branch {
                let stderr = String::from_utf8_lossy(&push_said);
                let sent = Sent {
                    repo: &repo,
                    id: &id,
                    tip,
                    input: &input,
                    shown: &stderr,
                };
                fetched = fetch_after(&args, &sent, &text, &branch, &tracking, &author, deadline)?;
            }
            text.into_bytes()
        }
        None => {
            // What the server's hooks said instead of the result (a lock
            // that timed out, an error) is what explains the wait.
            let said: String = String::from_utf8_lossy(&push_said)
                .lines()
                .filter_map(|l| l.strip_prefix("remote: "))
                .map(|l| format!("the server said: {l}\n"))
                .collect();
            if !said.is_empty() {
                eprint!("{}", crate::quote::escaped(&said));
            }
            let mut fetch = fetch_command(&args.remote);
            fetch.arg(format!("+{}:{}", result_ref(&id), result_ref(&id)));
            if fetch_branch {
                fetch.arg(format!("+{branch}:{tracking}"));
            }
            let text = wait_for_result(&mut fetch, &args, &id, deadline)?;
            if !ours(&text) {
                return Err(CliError::new(format!(
                    "{} answers another reply than this one: the id was used for another reply, or the request was replaced before the server answered it",
                    result_ref(&id)
                ))
                .hint("send the reply again under a new id (leave out --id)"));
            }
            text
        }
    };
    // The server's text holds what a reply read there: shown as `apply`
    // shows untrusted text, never its escape sequences.
    let shown = crate::quote::escaped(&String::from_utf8_lossy(&text)).into_owned();
    super::write_stdout(|out| out.write_all(shown.as_bytes()))?;
    let status = status_of(&text);
    // Only a request that moved the server's branch has something to
    // bring here; a refused or failed one leaves the branch alone.
    let applied = matches!(status.as_deref(), Some("success" | "partial"));
    let mut hint = fetch_branch && applied;
    if let Some(post) = post_of(&text).filter(|_| applied && !args.no_update) {
        // Opened again when a fetch wrote objects behind the first
        // handle's back.
        let updated = if fetched {
            Repository::discover(std::path::Path::new("."))
                .map_err(|e| CliError::new(e.to_string()))?
                .ok_or_else(|| CliError::new("the repository went away"))
                .and_then(|repo| update::update_branch(&repo, &author, &branch, tip, post))
        } else {
            update::update_branch(&repo, &author, &branch, tip, post)
        };
        match updated {
            Ok(update::Updated::Moved(said)) => {
                hint = false;
                for line in said {
                    eprintln!("clada: {line}");
                }
            }
            Ok(update::Updated::Left(why)) => {
                eprintln!("clada: {} was left where it is: {why}", args.branch)
            }
            Err(e) => eprintln!(
                "clada: warning: {} was not updated: {}",
                args.branch, e.message
            ),
        }
    }
    if hint {
        eprintln!(
            "clada: {}/{b} is the applied branch; to work on: git merge --ff-only {}/{b}",
            args.remote,
            args.remote,
            b = args.branch
        );
    }
    Ok(match status.as_deref() {
        Some("success") => Outcome::Success,
        Some("failed" | "partial" | "rejected" | "no_operations") => Outcome::Failed,
        Some("stale" | "branch_moved") => Outcome::BranchMoved,
        _ => Outcome::Fatal,
    })
}

/// `git fetch` from `remote`, quietly. No housekeeping or forced-update
/// walk: the agent is waiting for it, and the next ordinary git command
/// does the former.
fn fetch_command(remote: &str) -> Command {
    let mut fetch = git();
    fetch.args([
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-auto-maintenance",
        "--no-show-forced-updates",
    ]);
    // `--`: a remote named like an option is still a remote.
    fetch.arg("--").arg(remote);
    fetch
}

/// What was sent, and what the push said.
struct Sent<'a> {
    repo: &'a Repository,
    id: &'a str,
    /// The branch's commit the reply was sent for.
    tip: crate::git::ObjectId,
    input: &'a ReplyInput,
    /// The push's standard error.
    shown: &'a str,
}

/// Brings the branch the result names into `tracking`. When the request
/// moved the branch, its post commit is taken from the push's output if
/// the reply rebuilds its tree here (`server::rebuild`), else fetched by id —
/// with git's protocol v2 that is one request fewer than asking for the
/// branch by name — and `tracking` set to it; otherwise, or if that
/// fails, the branch is fetched by name. A failure is a warning: the
/// result stands. Whether it fetched (wrote objects behind `sent.repo`'s
/// back).
fn fetch_after(
    args: &PushReplyArgs,
    sent: &Sent<'_>,
    text: &str,
    branch: &str,
    tracking: &str,
    author: &crate::git::commit::Identity,
    deadline: Instant,
) -> Result<bool, CliError> {
    let moved = matches!(
        status_of(text.as_bytes()).as_deref(),
        Some("success" | "failed" | "partial")
    );
    if let Some(post) = post_of(text.as_bytes()).filter(|_| moved) {
        let track = |repo: &Repository| {
            repo.set_ref(
                author,
                tracking,
                post,
                "clada push-reply: the applied request",
            )
            .is_ok()
        };
        if rebuild::take_post(
            sent.repo,
            &super::hook::CliHost,
            sent.shown,
            sent.id,
            post,
            sent.tip,
            sent.input,
        ) && track(sent.repo)
        {
            return Ok(false);
        }
        let mut fetch = fetch_command(&args.remote);
        fetch.arg(post.to_string());
        if run_until(&mut fetch, deadline)?.is_some_and(|f| f.status.success()) {
            // Opened again: the fetch wrote objects behind the first
            // handle's back.
            let repo = Repository::discover(std::path::Path::new("."))
                .map_err(|e| CliError::new(e.to_string()))?
                .ok_or_else(|| CliError::new("the repository went away"))?;
            if track(&repo) {
                return Ok(true);
            }
        }
    }
    let mut fetch = fetch_command(&args.remote);
    fetch.arg(format!("+{branch}:{tracking}"));
    let fetched = run_until(&mut fetch, deadline)?;
    if !fetched.as_ref().is_some_and(|f| f.status.success()) {
        match &fetched {
            Some(f) => eprint!("{}", String::from_utf8_lossy(&f.stderr)),
            None => eprintln!("clada: the fetch did not finish within {:?}", args.timeout),
        }
        eprintln!(
            "clada: warning: {tracking} was not updated; fetch it: git fetch {} {}",
            args.remote, args.branch
        );
    }
    Ok(true)
}

/// Fetches the result (and the branch) until it is there or the time is
/// up; its text.
fn wait_for_result(
    fetch: &mut Command,
    args: &PushReplyArgs,
    id: &str,
    deadline: Instant,
) -> Result<Vec<u8>, CliError> {
    let mut pause = Duration::from_millis(100);
    loop {
        let fetched = run_until(fetch, deadline)?;
        if fetched.as_ref().is_some_and(|f| f.status.success()) {
            break;
        }
        if Instant::now() + pause > deadline {
            if let Some(f) = fetched {
                eprint!("{}", String::from_utf8_lossy(&f.stderr));
            }
            return Err(CliError::new(format!(
                "no result for the request {id} within {:?}",
                args.timeout
            ))
            .hint(format!(
                "it stays queued on the server and is answered by the next push there (or git clada hook recover); fetch it later: git fetch {} {}",
                args.remote,
                result_ref(id)
            )));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_secs(2));
    }
    // Opened again: the fetch wrote objects and references behind the
    // first handle's back.
    let repo = Repository::discover(std::path::Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| CliError::new("the repository went away"))?;
    let result = repo
        .ref_target(&result_ref(id))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| CliError::new(format!("{} was not fetched", result_ref(id))))?;
    repo.commit_message(result)
        .map_err(|e| CliError::new(e.to_string()))
}

/// `git`, with the user's environment: their remotes, credentials and
/// proxies are what the push needs.
fn git() -> Command {
    let mut cmd = Command::new("git");
    cmd.stdin(std::process::Stdio::null());
    cmd
}

/// Runs `cmd`, its output captured, until it ends or `deadline`, when it
/// is stopped: `None` then. It stays in our process group (unlike a RUN
/// command): git may ask for credentials on the terminal, and Ctrl-C
/// reaches it.
fn run_until(cmd: &mut Command, deadline: Instant) -> Result<Option<Output>, CliError> {
    run_until_with(cmd, None, deadline)
}

/// [`run_until`], with `input` (when given) as the command's standard
/// input, which then ends.
fn run_until_with(
    cmd: &mut Command,
    input: Option<&[u8]>,
    deadline: Instant,
) -> Result<Option<Output>, CliError> {
    use std::io::{Read as _, Write as _};
    if Instant::now() >= deadline {
        return Ok(None);
    }
    let cannot = |e: std::io::Error| CliError::new(format!("cannot run git: {e}"));
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if input.is_some() {
        cmd.stdin(std::process::Stdio::piped());
    }
    let mut child = cmd.spawn().map_err(cannot)?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // A few lines: the pipe holds them. A helper gone already (it could
        // not start) leaves them unread, and its end says why.
        let _ = stdin.write_all(input);
    }
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            let _ = send.send(bytes);
        });
        receive
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    // git's standard error closes when it ends: waiting for that wakes at
    // once, where asking whether it ended every few milliseconds cost a
    // push-reply about a hundred wake-ups. Asked every 50 ms all the same,
    // for a process git started that holds the pipe open after git is done
    // (an ssh connection kept for later); every millisecond once the pipe
    // closed, for the moment between its closing and git's end.
    let mut said: Option<Vec<u8>> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {}
            // Out of time, or it cannot be waited for: stopped.
            _ => {
                stop::stop(&mut child);
                return Ok(None);
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if said.is_some() {
            std::thread::sleep(Duration::from_millis(1).min(left));
            continue;
        }
        match stderr.recv_timeout(Duration::from_millis(50).min(left)) {
            Ok(bytes) => said = Some(bytes),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            // The reader is gone without its bytes: ask every millisecond.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => said = Some(Vec::new()),
        }
    };
    // Its output is waited for until the deadline only, then left.
    let wait = |pipe: std::sync::mpsc::Receiver<Vec<u8>>| {
        pipe.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    };
    Ok(Some(Output {
        status,
        stdout: wait(stdout),
        stderr: match said {
            Some(bytes) => bytes,
            None => wait(stderr),
        },
    }))
}

/// Says what became of a request whose push failed without the server's
/// verdict (`broken.rs`); the outcome, or `None` when the server has it and
/// its result is to be waited for.
fn untold(args: &PushReplyArgs, id: &str, broke: &str, fate: broken::Fate) -> Option<Outcome> {
    let why = match fate {
        broken::Fate::Answered => return Some(Outcome::Fatal),
        broken::Fate::Stored => {
            eprintln!(
                "clada: {broke}, but the server has the request {id}: it answers it as after any push; waiting for its result"
            );
            return None;
        }
        broken::Fate::Taken => {
            eprintln!(
                "clada: the server has the request {id} from before (above: it does not take an id twice): waiting for its result, which is this reply's if it answers this reply"
            );
            return None;
        }
        broken::Fate::NotSent => {
            eprintln!(
                "clada: nothing was sent: the push could not reach the server (above); the request {id} was not made and nothing was applied. Send the reply again when the server can be reached"
            );
            return Some(Outcome::NotSent);
        }
        broken::Fate::Missing => format!(
            "the server does not have the request {id}: it was not stored before the push ended, or the server is storing it still"
        ),
        broken::Fate::Unasked(why) => {
            format!("the server cannot be asked whether it has the request {id} ({why})")
        }
    };
    eprintln!(
        "clada: {broke}; {why}. So the outcome of the request {id} is unknown: it may yet be applied"
    );
    eprintln!(
        "clada: its result, once the server has answered it: git fetch {} {} && git log -1 --format=%B FETCH_HEAD",
        args.remote,
        result_ref(id)
    );
    eprintln!(
        "clada: or send the reply again under the same id, which the server takes once (if it has the request, it is not taken again, and its result is waited for): git clada push-reply --id {id} {} {} {}",
        args.remote,
        args.branch,
        args.reply.display()
    );
    Some(Outcome::Unknown)
}

/// The outcome of a push that failed: the server's words are shown, and a
/// branch that moved on the server is exit 3, as `apply` says it.
fn refused(pushed: &Output, branch: &str) -> Outcome {
    let porcelain = String::from_utf8_lossy(&pushed.stdout);
    eprint!("{}", String::from_utf8_lossy(&pushed.stderr));
    let moved = porcelain.lines().any(|l| {
        l.starts_with('!')
            && l.contains(&format!(":refs/heads/{branch}\t"))
            && (l.contains("non-fast-forward")
                || l.contains("fetch first")
                || l.contains("stale info"))
    });
    if moved {
        eprintln!(
            "clada: nothing was sent: {branch} moved on the server since your commit. Fetch, bring your work onto the new tip, and push the reply again"
        );
        return Outcome::BranchMoved;
    }
    eprintln!("clada: the request was refused (above); nothing was applied");
    Outcome::Fatal
}
