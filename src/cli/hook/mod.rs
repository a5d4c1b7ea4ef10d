//! `git clada hook`: install and remove clada's git hooks, and run them.
//!
//! The shims in the project's `hooks/` folder only call `git clada hook
//! <name>`; this is where each hook's work starts. A hook that was there
//! before clada's and was kept with `install --chain` runs first, with the
//! same input (`<name>.clada-chained` beside the shim).
//!
//! - `client`: post-commit, CSL in a commit message.
//! - pre-receive, post-receive and `recover` read their input here and
//!   call the server library (`server`), handing it `host`: the settings
//!   layers, the apply's report and diagnostics, which are the command
//!   line's. What the library says is printed here, after it is done.
//! - `summary`: the request log summed up (`server::log`), printed.

/// Appends a line to a receive hook's output (`format!`'s arguments).
/// The receive hooks write what they say into a buffer and print it when
/// done ([`emit`]): never while they hold the repository's lock, where a
/// pusher that stopped reading would hold up every other push.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = writeln!($out, $($arg)*);
    }};
}

mod client;
mod host;
mod summary;

pub(super) use host::CliHost;

use std::io::{Read, Write};
use std::path::Path;

use crate::git::Repository;
use crate::hook::install::{self, CHAINED, Done, Existing, InstallError};
use crate::hook::shim;
use crate::server;

use super::{CliError, Outcome};

/// The arguments of `git clada hook` (its help text is on `Command::Hook`).
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub action: HookAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookAction {
    /// Install clada's hooks into this repository's hooks directory
    Install(InstallArgs),
    /// Remove clada's hooks, putting back any hook they chained
    Uninstall,
    /// Run the post-commit hook: apply the CSL in the new commit's message
    PostCommit,
    /// Run the pre-receive hook: reject pushed inbox notes with fatal CSL errors
    PreReceive,
    /// Run the post-receive hook: apply new inbox notes to the branches they are on
    PostReceive,
    /// Answer the requests whose post-receive hook was stopped before answering them
    ///
    /// Every push does this too: a request waiting under refs/clada/inbox/
    /// that no live hook is answering is answered by the next push's
    /// post-receive. This does it now, for a repository nobody pushes to
    /// (from cron, or by hand after a crash).
    Recover,
    /// Summarise the server's request log: requests, outcomes, apply and
    /// wait times (p50, p95), recovered requests, the queue now
    ///
    /// The receive hooks log one line per answered request in
    /// <git dir>/clada/requests.log (rotated at 1 MiB).
    Stats,
}

/// Install clada's hooks into this repository's hooks directory
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Install the server hooks (pre-receive, post-receive) instead of the client's (post-commit)
    #[arg(long)]
    pub server: bool,

    /// Replace a hook that is not clada's (it is kept as <name>.clada-replaced)
    #[arg(long, conflicts_with = "chain")]
    pub force: bool,

    /// Keep a hook that is not clada's as <name>.clada-chained and run it before clada's
    #[arg(long)]
    pub chain: bool,
}

pub fn run_hook(args: HookArgs) -> Result<Outcome, CliError> {
    match args.action {
        HookAction::Install(a) => run_install(&a),
        HookAction::Uninstall => run_uninstall(),
        HookAction::PostCommit => {
            let repo = open()?;
            let chained = run_chained(&repo, "post-commit", &[])?;
            let ours = client::post_commit(repo)?;
            Ok(worst(chained, ours))
        }
        HookAction::PreReceive => {
            let input = read_stdin()?;
            let repo = open()?;
            // A chained hook that rejects the push has the last word.
            if run_chained(&repo, "pre-receive", input.as_bytes())? != Outcome::Success {
                return Ok(Outcome::Failed);
            }
            let mut out = String::new();
            let checked = server::receive::pre_receive(&repo, &CliHost, &input, &mut out);
            emit(&out);
            Ok(checked?.into())
        }
        HookAction::PostReceive => {
            let input = read_stdin()?;
            let repo = open()?;
            let chained = run_chained(&repo, "post-receive", input.as_bytes())?;
            // The lock is taken and released inside: what the hook says
            // is printed after.
            let mut out = String::new();
            server::log::mark_start();
            let ours = server::receive::post_receive(&repo, &CliHost, &input, &mut out);
            tidy(&repo, server::expire::When::Due, &mut out);
            emit(&out);
            Ok(worst(chained, ours?.into()))
        }
        HookAction::Stats => summary::run_stats(&open()?),
        HookAction::Recover => {
            server::log::mark_start();
            let mut out = String::new();
            let repo = open()?;
            let done = server::request::recover_now(&repo, &CliHost, &mut out);
            tidy(&repo, server::expire::When::Always, &mut out);
            // Run from cron, its lines are a log: on stderr, with errors.
            let _ = std::io::stderr().write_all(out.as_bytes());
            Ok(done?.into())
        }
    }
}

/// Prints a receive hook's buffered output. git shows it to the pusher;
/// one who hung up cannot read it, which is no error of the hook's (and
/// must not make it panic).
/// After the answers, whatever this push was (or on `hook recover`): old
/// results go when `when` says it is time, and claims long dead (on
/// `hook recover`, `When::Always`, dead claims of any age).
fn tidy(repo: &Repository, when: server::expire::When, out: &mut String) {
    let kept = host::results_kept_for(repo);
    if let Err(e) = server::expire::expire_results(repo, kept, when, out) {
        say!(
            out,
            "clada: old results could not be removed: {}",
            e.message
        );
    }
    let now = matches!(when, server::expire::When::Always);
    crate::git::lock::sweep_claims(&server::request::claims_dir(repo), now);
}

fn emit(out: &str) {
    let _ = super::write_stdout(|stdout| stdout.write_all(out.as_bytes()));
}

fn worst(a: Outcome, b: Outcome) -> Outcome {
    if a.exit_code() >= b.exit_code() { a } else { b }
}

/// The repository the hook or command runs in: the one git names in
/// `GIT_DIR` (as it does for hooks), else the one around the current
/// directory.
fn open() -> Result<Repository, CliError> {
    if let Some(dir) = std::env::var_os("GIT_DIR") {
        return Repository::open(Path::new(&dir)).map_err(|e| CliError::new(e.to_string()));
    }
    Repository::discover(Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| {
            CliError::new("not a git repository (or any of its parents)")
                .hint("run it inside the repository whose hooks you mean")
        })
}

fn hooks_dir(repo: &Repository) -> Result<std::path::PathBuf, CliError> {
    repo.hooks_dir().map_err(|e| CliError::new(e.to_string()))
}

fn run_install(args: &InstallArgs) -> Result<Outcome, CliError> {
    let repo = open()?;
    let names = if args.server {
        shim::SERVER
    } else {
        if repo.workdir().is_none() {
            return Err(CliError::new(
                "the repository is bare: the post-commit hook needs a working tree",
            )
            .hint("on a server, install the receive hooks: git clada hook install --server"));
        }
        shim::CLIENT
    };
    let existing = if args.chain {
        Existing::Chain
    } else if args.force {
        Existing::Force
    } else {
        Existing::Refuse
    };
    let dir = hooks_dir(&repo)?;
    let done = install::install(&dir, names, existing).map_err(|e| {
        let hint = match &e {
            InstallError::Foreign(_) => Some(
                "add --chain to keep the existing hook and run it before clada's, or --force to replace it (it is kept as <name>.clada-replaced)",
            ),
            InstallError::AlreadyChained(_) => Some(
                "merge the two hooks by hand, or move the chained one away, then install again",
            ),
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    })?;
    report(&dir, &done)?;
    if args.server {
        // Requests' answers are references of their own: kept out of every
        // push's reference advertisement (pushers never write there, and
        // fetching one by name is unaffected). They also expire
        // (clada.resultsExpire).
        if repo
            .add_config_value(
                "receive",
                "hideRefs",
                crate::hook::requests::RESULTS.trim_end_matches('/'),
            )
            .map_err(|e| CliError::new(e.to_string()))?
        {
            println!(
                "clada: receive.hideRefs {} set: results stay out of pushes' reference advertisements",
                crate::hook::requests::RESULTS.trim_end_matches('/')
            );
        }
        println!(
            "clada: pushes to the inbox notes ref (git config clada.inboxRef, default refs/notes/clada-inbox) are now checked and applied; results go to refs/notes/clada-results"
        );
    }
    Ok(Outcome::Success)
}

fn run_uninstall() -> Result<Outcome, CliError> {
    let repo = open()?;
    let dir = hooks_dir(&repo)?;
    let names: Vec<&str> = shim::CLIENT.iter().chain(shim::SERVER).copied().collect();
    let done = install::uninstall(&dir, &names).map_err(|e| CliError::new(e.to_string()))?;
    report(&dir, &done)?;
    Ok(Outcome::Success)
}

/// One line per hook that was there or was changed.
fn report(dir: &Path, done: &[(String, Done)]) -> Result<(), CliError> {
    super::write_stdout(|out| {
        for (name, what) in done {
            let path = dir.join(name);
            let path = path.display();
            match what {
                Done::Installed => writeln!(out, "installed {path}"),
                Done::Updated => writeln!(out, "updated {path} (it was already clada's)"),
                Done::Chained(kept) => writeln!(
                    out,
                    "installed {path}; the hook that was there is kept as {} and runs first",
                    kept.display()
                ),
                Done::Replaced(kept) => writeln!(
                    out,
                    "installed {path}; the hook that was there was moved to {}",
                    kept.display()
                ),
                Done::Removed => writeln!(out, "removed {path}"),
                Done::Restored => {
                    writeln!(out, "removed {path}; the chained hook is back in its place")
                }
                Done::NotOurs => writeln!(out, "left {path}: it is not clada's"),
                Done::Absent => Ok(()),
            }?;
        }
        if done.iter().all(|(_, d)| *d == Done::Absent) {
            writeln!(out, "no clada hook is installed in {}", dir.display())?;
        }
        Ok(())
    })
}

/// Receive hooks read their whole input: it goes to a chained hook too.
fn read_stdin() -> Result<String, CliError> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Err(
            CliError::new("this hook reads `<old> <new> <ref>` lines on standard input")
                .hint("git runs it after a push; to run it by hand, pipe those lines in"),
        );
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::new(format!("cannot read the hook's input: {e}")))?;
    Ok(text)
}

/// Runs `<hooks dir>/<name>.clada-chained`, if there is one that git would
/// have run (an executable file), with `input` on its standard input.
/// `Failed` when it fails, `Success` otherwise.
fn run_chained(repo: &Repository, name: &str, input: &[u8]) -> Result<Outcome, CliError> {
    let path = install::beside(&hooks_dir(repo)?, name, CHAINED);
    if !is_executable_file(&path) {
        return Ok(Outcome::Success);
    }
    let cannot = |e: std::io::Error| {
        CliError::new(format!(
            "cannot run the chained hook {}: {e}",
            path.display()
        ))
    };
    let mut child = std::process::Command::new(&path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    // Written from a thread: a hook that does not read its input must not
    // block this one. A hook that exits early closes the pipe; that is fine.
    let mut stdin = child.stdin.take();
    let bytes = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(pipe) = stdin.as_mut() {
            let _ = pipe.write_all(&bytes);
        }
    });
    let status = child.wait().map_err(cannot)?;
    let _ = writer.join();
    if status.success() {
        return Ok(Outcome::Success);
    }
    let _ = writeln!(
        std::io::stderr(),
        "clada: the chained hook {} failed ({status})",
        path.display()
    );
    Ok(Outcome::Failed)
}

fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}
