//! `git clada apply`: a reply in, a fast-forwarded branch out.
//!
//! Orchestrates git.md §1: read and parse the reply, take the lock,
//! snapshot the user's work as `pre`, apply the operations in memory on
//! its tree, commit `post`, attach the reply as a note, move the branch
//! with a compare-and-swap, then update the working tree and index for the
//! touched paths only. Each phase is a call into `csl`, `plan`, `apply`
//! or `git`; this file decides the order and what to report.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::apply::dir::DirFiles;
use crate::apply::exec::{ExecOptions, execute};
use crate::apply::files::Files;
use crate::apply::search::MatchMode;
use crate::csl::{self, Diagnostic, Reply, Severity};
use crate::fault;
use crate::git::commit::{Identity, UpdateError};
use crate::git::snapshot::Snapshot;
use crate::git::workspace::GitWorkspace;
use crate::git::worktree::{Plan as WorktreePlan, WorktreeUpdate};
use crate::git::{Head, ObjectId, Repository};
use crate::history::commits;
use crate::plan::{Task, plan, refuse_run};
use crate::report::text::{task_lines, task_lines_with_output};
use crate::report::{Status, Tally, TaskReport};
use crate::run::policy::{ALLOWED_COMMANDS, Approvals};

use super::commands::{self, RunFlags, RunSettings, Verified};
use super::config::{Layers, TEAM_CONFIG, duration_arg, size_arg};
use super::{CliError, Outcome, ReplyInput, settings, write_stdout};

/// Notes ref the reply of each apply is stored in.
const REPLY_NOTES: &str = "refs/notes/clada";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputMode {
    /// Print each task's line as soon as it finishes
    Stream,
    /// Print every task's line at the end
    Buffer,
    /// Print only the summary
    Silent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum ErrorDetail {
    /// The closest match and the named differences
    Minimal,
    /// Also the line-by-line diff against the closest match
    Full,
    /// Also timings of each phase, on stderr
    Debug,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchArg {
    /// Byte for byte (after line-end normalisation)
    Exact,
    /// Also a unique match differing only in leading/trailing whitespace
    Whitespace,
}

/// Apply a reply to the current branch as pre and post commits
///
/// Snapshots your uncommitted work (untracked files included) in a `pre`
/// commit, applies the reply's operations in memory, commits the result as
/// `post` and fast-forwards the branch; your working tree is updated only
/// for the files the reply changed, and a file you edit meanwhile is never
/// overwritten. Exit status: 0 every task succeeded (or nothing to do), 1
/// some task failed or was skipped, 2 fatal syntax error, bad arguments,
/// not a repository or lock timeout, 3 the branch moved during the apply.
/// Every option can also be set with `git config clada.<name>` (camelCase)
/// or in the repository's .clada/config.toml.
#[derive(Debug, Default, clap::Args)]
pub struct ApplyArgs {
    /// The reply: a file, or - for standard input (the default when stdin is not a terminal)
    #[arg(value_name = "FILE|-", conflicts_with_all = ["from_commit", "from_note"])]
    pub input: Option<PathBuf>,

    /// Read the reply from the message of commit REV
    #[arg(long, value_name = "REV", conflicts_with = "from_note")]
    pub from_commit: Option<String>,

    /// Read the reply from the note on REV (see --notes-ref)
    #[arg(long, value_name = "REV")]
    pub from_note: Option<String>,

    /// Notes ref for --from-note [default: refs/notes/clada-inbox]
    #[arg(long, value_name = "REF")]
    pub notes_ref: Option<String>,

    /// Report format [default: text]
    #[arg(long, value_enum)]
    pub format: Option<Format>,

    /// When task lines are printed [default: stream]
    #[arg(long, value_enum)]
    pub output_mode: Option<OutputMode>,

    /// How much a failed SEARCH explains [default: minimal]
    #[arg(long, value_enum)]
    pub error_detail: Option<ErrorDetail>,

    /// Print the diff that would be committed and change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Apply in the current directory: no repository, no commits
    #[arg(long)]
    pub no_git: bool,

    /// Leave the branch unmoved if any task fails (the result is kept under refs/clada/rejected/)
    #[arg(long)]
    pub atomic: bool,

    /// Author and committer of clada's commits [default: clada <clada@localhost>]
    #[arg(long, value_name = "NAME <EMAIL>")]
    pub git_author: Option<String>,

    /// How long to wait for another apply to finish [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub lock_timeout: Option<Duration>,

    /// How SEARCH patterns match [default: exact]
    #[arg(long = "match", value_enum, value_name = "MODE")]
    pub match_mode: Option<MatchArg>,

    /// Allow WRITE content with elision placeholders such as "// ... existing code ..."
    #[arg(long)]
    pub allow_placeholders: bool,

    /// With --no-git: allow absolute paths and paths outside the current directory
    #[arg(long)]
    pub allow_escape: bool,

    /// Kill a RUN command (with every process it started) after this long [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub timeout: Option<Duration>,

    /// Stop running commands once the whole apply has taken this long [default: none]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub total_timeout: Option<Duration>,

    /// Output kept per RUN task; the rest is dropped, the command goes on [default: 10MB]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub max_output: Option<usize>,

    /// Run CMD (your own, trusted) on the result; if it fails the branch is not moved
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,

    /// Text that starts a marker [default: <---, or git config clada.startDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub start_delimiter: Option<String>,

    /// Text that ends a marker [default: --->, or git config clada.endDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub end_delimiter: Option<String>,
}

/// Resolved settings of one apply.
struct Settings {
    format: Format,
    output_mode: OutputMode,
    error_detail: ErrorDetail,
    dry_run: bool,
    atomic: bool,
    author: Identity,
    exec: ExecOptions,
    run: RunSettings,
}

fn flag(on: bool) -> Option<bool> {
    on.then_some(true)
}

fn resolve(args: &ApplyArgs, layers: &Layers<'_>) -> Result<Settings, CliError> {
    let format = layers.get(
        args.format,
        "format",
        |s| match s {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            _ => None,
        },
        "text or json",
    )?;
    let output_mode = layers.get(
        args.output_mode,
        "outputMode",
        |s| match s {
            "stream" => Some(OutputMode::Stream),
            "buffer" => Some(OutputMode::Buffer),
            "silent" => Some(OutputMode::Silent),
            _ => None,
        },
        "stream, buffer or silent",
    )?;
    let error_detail = layers.get(
        args.error_detail,
        "errorDetail",
        |s| match s {
            "minimal" => Some(ErrorDetail::Minimal),
            "full" => Some(ErrorDetail::Full),
            "debug" => Some(ErrorDetail::Debug),
            _ => None,
        },
        "minimal, full or debug",
    )?;
    let match_mode = layers.get(
        args.match_mode,
        "match",
        |s| match s {
            "exact" => Some(MatchArg::Exact),
            "whitespace" => Some(MatchArg::Whitespace),
            _ => None,
        },
        "exact or whitespace",
    )?;
    let author = author(args.git_author.clone(), layers)?;
    let error_detail = error_detail.unwrap_or(ErrorDetail::Minimal);
    let run = commands::resolve(
        RunFlags {
            timeout: args.timeout,
            total_timeout: args.total_timeout,
            max_output: args.max_output,
            verify: args.verify.clone(),
        },
        layers,
    )?;
    Ok(Settings {
        run,
        format: format.unwrap_or(Format::Text),
        output_mode: output_mode.unwrap_or(OutputMode::Stream),
        error_detail,
        dry_run: layers
            .get_bool(flag(args.dry_run), "dryRun")?
            .unwrap_or(false),
        atomic: layers
            .get_bool(flag(args.atomic), "atomic")?
            .unwrap_or(false),
        author,
        exec: ExecOptions {
            match_mode: match match_mode {
                Some(MatchArg::Whitespace) => MatchMode::Whitespace,
                _ => MatchMode::Exact,
            },
            final_newline: layers.get_bool(None, "finalNewline")?.unwrap_or(true),
            allow_placeholders: layers
                .get_bool(flag(args.allow_placeholders), "allowPlaceholders")?
                .unwrap_or(false),
            full_detail: error_detail >= ErrorDetail::Full,
        },
    })
}

/// Who clada's commits are by: `flag`, else `clada.gitAuthor`, else
/// `clada <clada@localhost>`.
pub(crate) fn author(flag: Option<String>, layers: &Layers<'_>) -> Result<Identity, CliError> {
    match layers.get(flag, "gitAuthor", |s| Some(s.to_string()), "")? {
        None => Ok(Identity::default()),
        Some(text) => Identity::parse(&text).ok_or_else(|| {
            CliError::new(format!(
                "git author {text:?} is not of the form 'Name <email>'"
            ))
        }),
    }
}

/// The JSON report (doc/report.md).
#[derive(Serialize)]
struct JsonReport<'a> {
    status: &'static str,
    exit_code: u8,
    message: String,
    branch: Option<String>,
    base: Option<String>,
    pre: Option<String>,
    post: Option<String>,
    rejected_ref: Option<String>,
    summary: Tally,
    tasks: &'a [TaskReport],
    diagnostics: &'a [Diagnostic],
    worktree: JsonWorktree,
    diff: Option<String>,
    verify: Option<&'a Verified>,
}

#[derive(Serialize, Default)]
struct JsonWorktree {
    written: Vec<String>,
    kept: Vec<JsonKept>,
    /// Changed files left out of `pre` (names that are not UTF-8).
    left_out: Vec<String>,
}

#[derive(Serialize)]
struct JsonKept {
    path: String,
    reason: String,
}

/// What happened, for both renderings.
struct Finished {
    status: &'static str,
    outcome: Outcome,
    exit_code: u8,
    message: String,
    branch: Option<String>,
    base: Option<ObjectId>,
    pre: Option<ObjectId>,
    post: Option<ObjectId>,
    rejected_ref: Option<String>,
    worktree: WorktreeUpdate,
    /// Changed files the snapshot left out (names that are not UTF-8,
    /// quoted as git quotes them).
    left_out: Vec<String>,
    diff: Option<String>,
    verify: Option<Verified>,
}

impl Finished {
    /// `success` or `failed` by whether every task succeeded.
    fn by_tally(tally: Tally, message: String) -> Finished {
        if tally.all_succeeded() {
            Finished::new("success", Outcome::Success, message)
        } else {
            Finished::new("failed", Outcome::Failed, message)
        }
    }

    fn new(status: &'static str, outcome: Outcome, message: String) -> Finished {
        Finished {
            status,
            outcome,
            exit_code: outcome.exit_code(),
            message,
            branch: None,
            base: None,
            pre: None,
            post: None,
            rejected_ref: None,
            worktree: WorktreeUpdate::default(),
            left_out: Vec::new(),
            diff: None,
            verify: None,
        }
    }
}

pub fn run_apply(args: ApplyArgs) -> Result<Outcome, CliError> {
    // Discovered once: opening a repository reads its configuration files.
    let discovered = Repository::discover(std::path::Path::new("."));
    let json = args.format == Some(Format::Json)
        || (args.format.is_none()
            && discovered
                .as_ref()
                .ok()
                .and_then(Option::as_ref)
                .and_then(|r| r.config_string("clada.format"))
                .is_some_and(|f| f.trim() == "json"));
    match apply_or_stop(args, discovered) {
        // An agent that asked for JSON gets JSON even when apply stops
        // before it has a report; the message still goes to stderr too.
        Err(e) if json => {
            write_json(&JsonError {
                status: "error",
                exit_code: Outcome::Fatal.exit_code(),
                message: &e.message,
                hint: e.hint.as_deref(),
            })?;
            Err(e)
        }
        other => other,
    }
}

/// The JSON document of an apply that stopped before it had a report.
#[derive(Serialize)]
struct JsonError<'a> {
    status: &'static str,
    exit_code: u8,
    message: &'a str,
    hint: Option<&'a str>,
}

fn apply_or_stop(
    args: ApplyArgs,
    discovered: Result<Option<Repository>, crate::git::GitError>,
) -> Result<Outcome, CliError> {
    let mut timings = Timings::default();
    let repo = discovered.map_err(|e| CliError::new(e.to_string()))?;
    let delims = settings::delimiters_in(
        repo.as_ref(),
        args.start_delimiter.as_deref(),
        args.end_delimiter.as_deref(),
    )?;
    let no_git = args.no_git
        || Layers::new(repo.as_ref())
            .get_bool(None, "noGit")?
            .unwrap_or(false);
    if no_git {
        return run_no_git(&args, repo.as_ref(), &delims);
    }
    if args.allow_escape {
        return Err(CliError::new("--allow-escape works only with --no-git")
            .hint("a commit can hold only paths inside the repository; add --no-git to write outside it"));
    }
    let Some(mut repo) = repo else {
        return Err(CliError::new("not a git repository (or any of its parents)")
            .hint("run it inside a repository, or use --no-git to apply in the current directory without commits"));
    };
    let input = read_input(&args, &repo)?;
    let reply = parse_input(&input, &delims);
    let git_layers = Layers::new(Some(&repo));
    let early = resolve(&args, &git_layers)?;
    if reply.has_fatal() {
        return finish_fatal(&reply, &input.origin, early.format);
    }
    let Head::Branch {
        name: branch,
        commit: base,
    } = repo.head().map_err(git_err)?
    else {
        return Err(
            CliError::new("HEAD is detached: clada applies to a branch").hint(
                "switch to a branch first (git switch <branch>, or git switch -c <new-branch>)",
            ),
        );
    };
    if let Some(operation) = repo.operation_in_progress() {
        return Err(CliError::new(format!(
            "a git {operation} is in progress: applying now would fold its unresolved state into clada's commits"
        ))
        .hint("finish or abort it first (git status says how), then apply the reply"));
    }
    if repo.workdir().is_none() {
        return Err(CliError::new(
            "the repository is bare: apply needs a working tree",
        ));
    }
    let _lock = super::guard::take_lock(&repo, args.lock_timeout, "apply")?;
    timings.mark("read, parse, lock");
    // A dry run changes nothing, not even an interrupted update.
    if !early.dry_run {
        finish_interrupted_update(&repo, &branch)?;
        super::guard::finish_interrupted_switch(&repo)?;
    }
    // A step-back session remembers its branch's tip; moving that branch
    // under it would make step-forward refuse to return.
    if !early.dry_run {
        super::guard::refuse_session_on(&repo, "apply", Some(&branch))?;
    }
    // The branch as it is now, under the lock.
    let base = match repo.head().map_err(git_err)? {
        Head::Branch { commit, .. } => commit,
        Head::Detached(_) => base,
    };
    // Commands run in the scratch working tree, which reads objects from
    // disk: a dry run that runs commands writes its (unreferenced) objects
    // there; any other dry run keeps them in memory.
    if early.dry_run && !reply.has_run() && !verifies(&args, &repo) {
        repo.keep_objects_in_memory();
    }
    let target = Target {
        branch: &branch,
        base,
        worktree: true,
        refuse_run: None,
    };
    let applied = apply_to(&repo, &args, &input, &reply, &target, &mut timings)?;
    write_stdout(|w| w.write_all(&applied.report))?;
    Ok(applied.outcome)
}

/// Where an apply lands, and what it may touch.
pub(crate) struct Target<'a> {
    /// The branch to advance (full ref name).
    pub branch: &'a str,
    /// Its commit, read under the lock (`None`: unborn).
    pub base: Option<ObjectId>,
    /// Whether the branch is checked out in this repository's working tree,
    /// to be snapshot as `pre` first and updated afterwards. `false` in a
    /// bare repository: `pre` is then the base itself.
    pub worktree: bool,
    /// Refuse every RUN before anything runs, for this reason (a server
    /// without `clada.serverRun`).
    pub refuse_run: Option<&'a str>,
}

/// What [`apply_to`] did.
pub(crate) struct Applied {
    pub outcome: Outcome,
    /// The report's `status` (doc/report.md).
    pub status: &'static str,
    /// The post commit, if one was made (on the branch only for `success`
    /// and `failed`).
    pub post: Option<ObjectId>,
    /// The report as `render` writes it (streamed task lines excepted).
    pub report: Vec<u8>,
}

/// Steps 4–9 of git.md §1 for a reply without fatal errors, under the lock:
/// snapshot (with a working tree), operations in memory, post commit, note,
/// compare-and-swap of `target.branch`, working tree update.
pub(crate) fn apply_to(
    repo: &Repository,
    args: &ApplyArgs,
    input: &ReplyInput,
    reply: &Reply<'_>,
    target: &Target<'_>,
    timings: &mut Timings,
) -> Result<Applied, CliError> {
    let (branch, base) = (target.branch, target.base);
    let base_tree = repo.tree_of(base).map_err(git_err)?;
    let snapshot = if target.worktree {
        repo.snapshot(base_tree).map_err(git_err)?
    } else {
        Snapshot {
            tree: base_tree,
            paths: Vec::new(),
            index: None,
            left_out: Vec::new(),
        }
    };
    timings.mark("snapshot (status)");
    let team = repo
        .file_in_tree(snapshot.tree, TEAM_CONFIG)
        .map_err(git_err)?;
    let layers = Layers::new(Some(repo)).with_team(team.as_deref())?;
    let settings = resolve(args, &layers)?;

    let pre = if snapshot.tree == base_tree && snapshot.index.is_none() {
        base
    } else {
        // Content only the index holds (staged, then changed on disk) is
        // kept as a second parent, as `git stash` does: the index is
        // brought to the applied commit afterwards, and undo restores it.
        let mut parents: Vec<ObjectId> = base.into_iter().collect();
        if let Some(index_tree) = snapshot.index {
            let message = format!("{} staged content before apply\n", commits::INDEX);
            let index = repo
                .commit(&settings.author, &message, index_tree, &parents)
                .map_err(git_err)?;
            parents.push(index);
        }
        let message = format!("{} snapshot before apply\n", commits::PRE);
        let pre = repo
            .commit(&settings.author, &message, snapshot.tree, &parents)
            .map_err(git_err)?;
        fault::point("pre-committed");
        Some(pre)
    };

    let mut tasks = plan(reply, false);
    if let Some(reason) = target.refuse_run {
        tasks = refuse_run(tasks, reason);
    }
    let has_run = tasks.iter().any(Task::runs_commands);
    // Approvals come from the state before the apply, never from the
    // reply; a malformed store matters only to a reply that runs commands.
    let approvals = match repo
        .file_in_tree(snapshot.tree, ALLOWED_COMMANDS)
        .map_err(git_err)?
    {
        Some(bytes) if has_run => Approvals::parse(&bytes).map_err(|e| {
            CliError::new(e).hint(format!(
                "fix {ALLOWED_COMMANDS} (git clada allow --list reads it), then apply again"
            ))
        })?,
        _ => Approvals::default(),
    };
    let head = pre.ok_or_else(|| branch.to_string());
    let mut files = GitWorkspace::new(repo, snapshot.tree, head, settings.run.shared_dirs.clone())
        .map_err(git_err)?;
    let streaming = settings.format == Format::Text && settings.output_mode == OutputMode::Stream;
    // Streamed, warnings come first on stdout; otherwise they head the
    // report (a server's result note holds them that way).
    let warnings = warning_lines(reply, settings.format);
    if streaming && !warnings.is_empty() {
        let _ = write_stdout(|out| out.write_all(warnings.as_bytes()));
    }
    let mut runner = commands::runner(&settings.run, approvals, timings.start, streaming);
    let reports = execute(&tasks, &mut files, &settings.exec, &mut runner, |t| {
        if streaming {
            let _ = write_stdout(|out| out.write_all(task_lines(t).as_bytes()));
        }
    });
    if let Some(workdir) = repo.workdir() {
        commands::record_always(workdir, &runner.always)?;
    }
    let tally = Tally::of(&reports);
    let post_tree = files.write_tree().map_err(git_err)?;
    let changed = repo
        .tree_changes(snapshot.tree, post_tree)
        .map_err(git_err)?;
    // Verification runs the user's own command on a change: never on a
    // server that refuses commands (the team file there comes from
    // whoever pushed), and not when nothing changed (there is nothing to
    // accept or reject).
    let verify = settings
        .run
        .verify
        .as_ref()
        .filter(|_| target.refuse_run.is_none());
    let verified = match verify {
        Some(command) if !changed.is_empty() => {
            Some(commands::verify(command, &mut files, &mut runner))
        }
        _ => None,
    };
    timings.mark("pre commit, operations, post tree");

    let mut out = if changed.is_empty() {
        let mut o = Finished::by_tally(
            tally,
            format!("nothing changed; the branch was not moved ({tally})"),
        );
        if settings.dry_run {
            o.diff = Some(String::new());
        }
        o
    } else if settings.dry_run {
        let paths: Vec<String> = snapshot
            .paths
            .iter()
            .map(|(p, _)| p.clone())
            .chain(changed.iter().map(|c| c.path.clone()))
            .collect();
        let diff = unified_diff(repo, base_tree, post_tree, &paths)?;
        let mut o = match &verified {
            Some(v) if !v.passed => Finished::new(
                "failed",
                Outcome::Failed,
                format!("dry run: nothing was changed; {} ({tally})", v.message),
            ),
            _ => Finished::by_tally(tally, format!("dry run: nothing was changed ({tally})")),
        };
        o.diff = Some(diff);
        o
    } else {
        commit_and_advance(
            repo,
            &settings,
            input,
            &reports,
            tally,
            target,
            pre,
            post_tree,
            &snapshot,
            changed,
            verified.as_ref(),
            timings,
        )?
    };
    out.verify = verified;
    out.left_out = snapshot.left_out.clone();
    out.branch = Some(
        branch
            .strip_prefix("refs/heads/")
            .unwrap_or(branch)
            .to_string(),
    );
    out.base = base;
    // Only a pre commit that was made is reported (a clean tree has none).
    out.pre = match out.post {
        Some(_) => pre.filter(|p| Some(*p) != base),
        None => None,
    };
    timings.mark("working tree, index");
    if settings.error_detail == ErrorDetail::Debug {
        timings.print();
    }
    let mut report = if streaming {
        Vec::new()
    } else {
        warnings.into_bytes()
    };
    render(
        &mut report,
        &repo_short(repo),
        &settings,
        reply,
        &reports,
        tally,
        &out,
        streaming,
    )
    .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
    Ok(Applied {
        outcome: out.outcome,
        status: out.status,
        post: out.post,
        report,
    })
}

/// Whether a `--verify` command is set anywhere (flag, git config, or the
/// team file as it is in the working tree now).
fn verifies(args: &ApplyArgs, repo: &Repository) -> bool {
    let team = repo
        .workdir()
        .and_then(|w| std::fs::read(w.join(TEAM_CONFIG)).ok());
    Layers::new(Some(repo))
        .with_team(team.as_deref())
        .and_then(|layers| resolve(args, &layers))
        .is_ok_and(|s| s.run.verify.is_some())
}

fn repo_short(repo: &Repository) -> impl Fn(ObjectId) -> String + '_ {
    move |id| repo.short(id)
}

fn git_err(e: crate::git::GitError) -> CliError {
    CliError::new(e.to_string())
}

/// Phase timings for `--error-detail debug`, printed on stderr.
pub(crate) struct Timings {
    start: std::time::Instant,
    last: std::time::Instant,
    phases: Vec<(&'static str, Duration)>,
}

impl Default for Timings {
    fn default() -> Self {
        let now = std::time::Instant::now();
        Timings {
            start: now,
            last: now,
            phases: Vec::new(),
        }
    }
}

impl Timings {
    pub(crate) fn mark(&mut self, phase: &'static str) {
        let now = std::time::Instant::now();
        self.phases.push((phase, now - self.last));
        self.last = now;
    }

    fn print(&self) {
        for (phase, spent) in &self.phases {
            eprintln!("clada: {phase}: {:.1} ms", spent.as_secs_f64() * 1e3);
        }
        eprintln!(
            "clada: total: {:.1} ms",
            self.start.elapsed().as_secs_f64() * 1e3
        );
    }
}

/// A worktree update a crash cut short is finished before anything else.
pub(super) fn finish_interrupted_update(repo: &Repository, branch: &str) -> Result<(), CliError> {
    let Some(pending) = repo.pending_update().map_err(git_err)? else {
        return Ok(());
    };
    if repo.ref_target(branch).map_err(git_err)? == Some(pending.commit) {
        let done = match repo.update_worktree(&pending) {
            Ok(done) => done,
            Err(e) => {
                // Never wedge every later apply on an update that cannot
                // be finished: say so, forget it, go on.
                eprintln!(
                    "clada: could not finish updating the working tree after an interrupted apply ({e}); `git status` shows where it differs from {}",
                    repo.short(pending.commit)
                );
                repo.drop_pending_update().map_err(git_err)?;
                return Ok(());
            }
        };
        eprintln!(
            "clada: finished updating the working tree after an interrupted apply ({} file(s) written)",
            done.written.len()
        );
        for (path, why) in &done.kept {
            eprintln!("clada: kept {path}: {why}");
        }
    } else {
        repo.drop_pending_update().map_err(git_err)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn commit_and_advance(
    repo: &Repository,
    settings: &Settings,
    input: &ReplyInput,
    reports: &[TaskReport],
    tally: Tally,
    target: &Target<'_>,
    pre: Option<ObjectId>,
    post_tree: ObjectId,
    snapshot: &Snapshot,
    changed: Vec<crate::git::tree::Changed>,
    verified: Option<&Verified>,
    timings: &mut Timings,
) -> Result<Finished, CliError> {
    let (branch, base) = (target.branch, target.base);
    let reply_blob = repo.write_blob(&input.bytes).map_err(git_err)?;
    let message = post_message(reports, tally, reply_blob);
    let post = repo
        .commit(
            &settings.author,
            &message,
            post_tree,
            &pre.into_iter().collect::<Vec<_>>(),
        )
        .map_err(git_err)?;
    fault::point("post-committed");
    timings.mark("post commit");
    let refused = match verified {
        Some(v) if !v.passed => Some(format!("{} ({tally})", v.message)),
        _ if settings.atomic && !tally.all_succeeded() => {
            Some("a task failed and --atomic is set".to_string())
        }
        _ => None,
    };
    if let Some(why) = refused {
        let name = next_rejected(repo)?;
        repo.create_ref(&settings.author, &name, post, "clada: rejected apply")
            .map_err(git_err)?;
        let mut o = Finished::new(
            "rejected",
            Outcome::Failed,
            format!(
                "not applied: {why}; the branch was not moved. The result is kept at {name} (inspect it with: git show {name})"
            ),
        );
        o.rejected_ref = Some(name);
        o.post = Some(post);
        return Ok(o);
    }
    // The journal comes before the branch moves: a crash right after the
    // move must still leave the next apply a record of what to write, or
    // its snapshot of the stale working tree would revert this apply. The
    // next apply acts on the journal only if the branch is at `post`.
    let plan = WorktreePlan {
        commit: post,
        snapshot: snapshot.paths.clone(),
        changed,
    };
    // Without a working tree there is nothing to journal.
    if target.worktree {
        repo.record_update(&plan).map_err(git_err)?;
    }
    fault::point("journal-written");
    let summary = message.lines().next().unwrap_or_default().to_string();
    let moved = repo.advance_branch(
        &settings.author,
        branch,
        base,
        post,
        &format!("clada: {summary}"),
    );
    if moved.is_err() && target.worktree {
        repo.drop_pending_update().map_err(git_err)?;
    }
    match moved {
        Ok(()) => {}
        Err(UpdateError::Moved { .. }) => {
            let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
            let mut o = Finished::new(
                "branch_moved",
                Outcome::BranchMoved,
                format!(
                    "branch_moved: {short} moved while applying; nothing was changed. Apply the reply again"
                ),
            );
            o.post = Some(post);
            return Ok(o);
        }
        Err(UpdateError::Git(e)) => return Err(git_err(e)),
    }
    fault::point("branch-moved");
    timings.mark("journal, branch");
    // The note is written only once the commit is on the branch, so a
    // moved branch leaves no note on an unreachable commit.
    repo.set_note(&settings.author, REPLY_NOTES, post, &input.bytes)
        .map_err(git_err)?;
    fault::point("noted");
    timings.mark("note");
    // The branch has moved: from here on a failure is reported, never a
    // reason to stop without a report. The journal stays, so the next
    // apply tries to finish the update.
    let worktree = match repo.update_worktree(&plan) {
        _ if !target.worktree => WorktreeUpdate::default(),
        Ok(done) => done,
        Err(e) => WorktreeUpdate {
            written: Vec::new(),
            kept: plan
                .changed
                .iter()
                .map(|c| {
                    (
                        c.path.clone(),
                        format!("the working tree was not updated ({e}); the next apply finishes it, and the applied version is in the commit"),
                    )
                })
                .collect(),
        },
    };
    let mut o = Finished::by_tally(tally, format!("applied ({tally})"));
    o.post = Some(post);
    o.worktree = worktree;
    Ok(o)
}

/// `refs/clada/rejected/<n>`, one past the highest in use.
fn next_rejected(repo: &Repository) -> Result<String, CliError> {
    const PREFIX: &str = "refs/clada/rejected/";
    let n = repo
        .refs_under(PREFIX)
        .map_err(git_err)?
        .iter()
        .filter_map(|r| r.strip_prefix(PREFIX)?.parse::<u64>().ok())
        .max()
        .map_or(1, |n| n + 1);
    Ok(format!("{PREFIX}{n}"))
}

/// The post commit's message: summary line, task lines, trailers.
fn post_message(reports: &[TaskReport], tally: Tally, reply_blob: ObjectId) -> String {
    let mut done: Vec<String> = Vec::new();
    let mut collect = |t: &TaskReport| {
        if t.status == Status::Success
            && let Some(target) = &t.target
        {
            let verb = if t.op == csl::OpKind::Run {
                "run"
            } else if t.message.starts_with("created") {
                "create"
            } else if t.message.starts_with("replaced") {
                "edit"
            } else if t.message.starts_with("appended") {
                "append to"
            } else {
                "write"
            };
            done.push(format!("{verb} {target}"));
        }
    };
    for t in reports {
        if t.operations.is_empty() {
            collect(t);
        } else if t.status == Status::Success {
            t.operations.iter().for_each(&mut collect);
        }
    }
    done.dedup();
    let mut summary = String::new();
    for (i, item) in done.iter().enumerate() {
        let next = if summary.is_empty() {
            item.clone()
        } else {
            format!("{summary}, {item}")
        };
        if next.len() > 60 && !summary.is_empty() {
            summary.push_str(&format!(" and {} more", done.len() - i));
            break;
        }
        summary = next;
    }
    if summary.is_empty() {
        summary = "apply reply".to_string();
    }
    let body: String = reports.iter().map(task_lines).collect();
    format!("[clada:post] {summary}\n\n{body}\nClada-Reply: {reply_blob}\nClada-Tasks: {tally}\n")
}

/// Unified diff of `paths` between two trees.
fn unified_diff(
    repo: &Repository,
    from: ObjectId,
    to: ObjectId,
    paths: &[String],
) -> Result<String, CliError> {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        if !seen.insert(path) {
            continue;
        }
        let old = repo.file_in_tree(from, path).map_err(git_err)?;
        let new = repo.file_in_tree(to, path).map_err(git_err)?;
        if old == new {
            continue;
        }
        let (a, b) = (old.unwrap_or_default(), new.unwrap_or_default());
        let (Ok(a), Ok(b)) = (std::str::from_utf8(&a), std::str::from_utf8(&b)) else {
            out.push_str(&format!("Binary file {path} differs\n"));
            continue;
        };
        let diff = similar::TextDiff::from_lines(a, b);
        out.push_str(&format!("diff --git a/{path} b/{path}\n"));
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string(),
        );
    }
    Ok(out)
}

fn read_input(args: &ApplyArgs, repo: &Repository) -> Result<ReplyInput, CliError> {
    if let Some(rev) = &args.from_commit {
        let id = repo.resolve_commit(rev).map_err(git_err)?;
        let bytes = repo.commit_message(id).map_err(git_err)?;
        return Ok(ReplyInput::from_bytes(format!("commit {rev}"), bytes));
    }
    if let Some(rev) = &args.from_note {
        let notes_ref = Layers::new(Some(repo))
            .get(
                args.notes_ref.clone(),
                "notesRef",
                |s| Some(s.to_string()),
                "",
            )?
            .unwrap_or_else(|| "refs/notes/clada-inbox".to_string());
        let id = repo.resolve_commit(rev).map_err(git_err)?;
        let Some(bytes) = repo.note(&notes_ref, id).map_err(git_err)? else {
            return Err(
                CliError::new(format!("commit {rev} has no note in {notes_ref}")).hint(format!(
                    "add one with: git notes --ref {notes_ref} add -F reply.md {rev}"
                )),
            );
        };
        return Ok(ReplyInput::from_bytes(format!("note on {rev}"), bytes));
    }
    ReplyInput::read(args.input.as_deref())
}

pub(crate) fn parse_input<'a>(input: &'a ReplyInput, delims: &csl::Delimiters) -> Reply<'a> {
    match input.too_large {
        Some(size) => Reply {
            source: "".into(),
            operations: Vec::new(),
            diagnostics: vec![csl::input::too_large(size)],
        },
        None => csl::parse_bytes(&input.bytes, delims),
    }
}

/// A reply with fatal errors: nothing runs.
fn finish_fatal(reply: &Reply<'_>, origin: &str, format: Format) -> Result<Outcome, CliError> {
    let fatal = reply
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Fatal)
        .count();
    let message = format!(
        "FATAL: nothing was applied: the reply has {fatal} fatal syntax error{}",
        if fatal == 1 { "" } else { "s" }
    );
    match format {
        Format::Json => {
            let report = JsonReport {
                status: "fatal",
                exit_code: 2,
                message,
                branch: None,
                base: None,
                pre: None,
                post: None,
                rejected_ref: None,
                summary: Tally::default(),
                tasks: &[],
                diagnostics: &reply.diagnostics,
                worktree: JsonWorktree::default(),
                diff: None,
                verify: None,
            };
            write_json(&report)?;
        }
        Format::Text => {
            write_stdout(|out| {
                for d in reply
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity() == Severity::Fatal)
                {
                    writeln!(out, "{}", csl::diagnostic::render(d, &reply.source, origin))?;
                }
                writeln!(out, "{message}")
            })?;
        }
    }
    Ok(Outcome::Fatal)
}

fn write_json(value: &impl Serialize) -> Result<(), CliError> {
    write_stdout(|out| {
        serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    })
}

fn print_warnings(reply: &Reply<'_>, format: Format) {
    let warnings = warning_lines(reply, format);
    if !warnings.is_empty() {
        let _ = write_stdout(|out| out.write_all(warnings.as_bytes()));
    }
}

/// The text report's warning lines (none in JSON, which lists diagnostics).
fn warning_lines(reply: &Reply<'_>, format: Format) -> String {
    if format != Format::Text {
        return String::new();
    }
    reply
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Warning)
        .map(|d| format!("warning: line {}: {}\n", d.line, d.message))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn render(
    w: &mut dyn std::io::Write,
    short: &impl Fn(ObjectId) -> String,
    settings: &Settings,
    reply: &Reply<'_>,
    reports: &[TaskReport],
    tally: Tally,
    out: &Finished,
    streamed: bool,
) -> std::io::Result<()> {
    let worktree = JsonWorktree {
        written: out.worktree.written.clone(),
        kept: out
            .worktree
            .kept
            .iter()
            .map(|(path, reason)| JsonKept {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect(),
        left_out: out.left_out.clone(),
    };
    if settings.format == Format::Json {
        let report = JsonReport {
            status: out.status,
            exit_code: out.exit_code,
            message: out.message.clone(),
            branch: out.branch.clone(),
            base: out.base.map(|id| id.to_string()),
            pre: out.pre.map(|id| id.to_string()),
            post: out.post.map(|id| id.to_string()),
            rejected_ref: out.rejected_ref.clone(),
            summary: tally,
            tasks: reports,
            diagnostics: &reply.diagnostics,
            worktree,
            diff: out.diff.clone(),
            verify: out.verify.as_ref(),
        };
        serde_json::to_writer_pretty(&mut *w, &report).map_err(std::io::Error::from)?;
        return w.write_all(b"\n");
    }
    if !streamed && settings.output_mode == OutputMode::Buffer {
        for t in reports {
            w.write_all(task_lines_with_output(t).as_bytes())?;
        }
    }
    if let Some(v) = &out.verify {
        if !streamed && settings.output_mode == OutputMode::Buffer {
            for line in v.output.lines() {
                writeln!(w, "[verify] {line}")?;
            }
        }
        let status = if v.passed { "PASSED" } else { "FAILED" };
        writeln!(w, "[verify] {status}: {} - {}", v.command, v.message)?;
        for detail in &v.details {
            writeln!(w, "    {detail}")?;
        }
    }
    for kept in &worktree.kept {
        writeln!(w, "kept {}: {}", kept.path, kept.reason)?;
    }
    for path in &worktree.left_out {
        writeln!(
            w,
            "left out {path}: not in pre (its name is not UTF-8); left as it is on disk"
        )?;
    }
    if let Some(diff) = &out.diff {
        w.write_all(diff.as_bytes())?;
    }
    let ids = match (out.pre, out.post) {
        (_, Some(post)) if !matches!(out.status, "rejected" | "branch_moved") => {
            let none = if out.left_out.is_empty() {
                "none (clean tree)"
            } else {
                "none (only files left out changed)"
            };
            let pre = out.pre.map_or_else(|| none.to_string(), short);
            format!(
                " on {}: pre {pre}, post {}",
                out.branch.as_deref().unwrap_or("?"),
                short(post)
            )
        }
        _ => String::new(),
    };
    writeln!(w, "clada: {}{ids}", out.message)
}

/// `--no-git`: edit the current directory in place.
fn run_no_git(
    args: &ApplyArgs,
    repo: Option<&Repository>,
    delims: &csl::Delimiters,
) -> Result<Outcome, CliError> {
    let started = std::time::Instant::now();
    if args.from_commit.is_some() || args.from_note.is_some() {
        return Err(CliError::new(
            "--from-commit and --from-note need a repository; --no-git reads a file or stdin",
        ));
    }
    let input = ReplyInput::read(args.input.as_deref())?;
    let reply = parse_input(&input, delims);
    let layers = Layers::new(repo);
    let settings = resolve(args, &layers)?;
    if reply.has_fatal() {
        return finish_fatal(&reply, &input.origin, settings.format);
    }
    if settings.dry_run {
        return Err(CliError::new(
            "--dry-run with --no-git is not supported: there is no repository to compute the diff in",
        ));
    }
    let allow_escape = layers
        .get_bool(flag(args.allow_escape), "allowEscape")?
        .unwrap_or(false);
    let root = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    let mut files = DirFiles::new(&root);
    let tasks = plan(&reply, allow_escape);
    let approvals = if tasks.iter().any(Task::runs_commands) {
        Approvals::load(&root).map_err(|e| {
            CliError::new(e).hint(format!("fix {ALLOWED_COMMANDS}, then apply again"))
        })?
    } else {
        Approvals::default()
    };
    let streaming = settings.format == Format::Text && settings.output_mode == OutputMode::Stream;
    let mut runner = commands::runner(&settings.run, approvals, started, streaming);
    print_warnings(&reply, settings.format);
    // --atomic: one checkpoint around everything, undone if any task fails.
    let whole = settings.atomic.then(|| files.checkpoint());
    let reports = execute(&tasks, &mut files, &settings.exec, &mut runner, |t| {
        if streaming {
            let _ = write_stdout(|out| out.write_all(task_lines(t).as_bytes()));
        }
    });
    commands::record_always(&root, &runner.always)?;
    let tally = Tally::of(&reports);
    let verified = settings
        .run
        .verify
        .as_ref()
        .map(|command| commands::verify(command, &mut files, &mut runner));
    let verify_failed = verified.as_ref().is_some_and(|v| !v.passed);
    let mut out = match whole {
        Some(checkpoint) if !tally.all_succeeded() || verify_failed => {
            files.rollback(checkpoint).map_err(|e| {
                CliError::new(format!(
                    "--atomic: a task failed and undoing the others failed too: {e}"
                ))
            })?;
            Finished::new(
                "rejected",
                Outcome::Failed,
                format!(
                    "not applied: a task or the verification failed and --atomic is set; every file change was undone ({tally})"
                ),
            )
        }
        whole => {
            if let Some(checkpoint) = whole {
                files.keep(checkpoint);
            }
            match &verified {
                Some(v) if !v.passed => Finished::new(
                    "failed",
                    Outcome::Failed,
                    format!(
                        "{}; without git the changes stay in {} ({tally})",
                        v.message,
                        root.display()
                    ),
                ),
                _ => Finished::by_tally(
                    tally,
                    format!("applied in {} without git ({tally})", root.display()),
                ),
            }
        }
    };
    out.verify = verified;
    let outcome = out.outcome;
    write_stdout(|w| {
        render(
            w,
            &|id: ObjectId| id.to_string(),
            &settings,
            &reply,
            &reports,
            tally,
            &out,
            streaming,
        )
    })?;
    Ok(outcome)
}
