//! The apply transaction as a library (git.md §1): one entry point,
//! [`apply`], that `git clada apply`, the post-commit hook and the server
//! hook all call, and [`apply_in_dir`] for `--no-git`.
//!
//! Owns the order of the phases and what each decides: plan the parsed
//! reply (`plan`), snapshot the user's work as `pre`, run the operations
//! in memory (`apply::exec`), verify, commit `post` and attach the reply
//! as a note (`commit`), move the branch with a compare-and-swap, update
//! the working tree and index, and the result as data ([`Applied`]). It
//! never reads arguments, prints or renders: the caller passes settings
//! (a function of the team's `.clada/config.toml`, read from the state
//! before the apply) and [`Hooks`] (the terminal question, output lines,
//! finished tasks), and renders the result.
//!
//! The caller reads and parses the reply, refuses a fatal one, takes the
//! lock and finishes an interrupted history switch first (`cli/apply.rs`).

mod commit;
mod diff;
mod dir;
mod replay;
mod verify;

use std::path::Path;
use std::time::{Duration, Instant};

pub use commit::finish_interrupted_update;
pub use dir::apply_in_dir;
pub use replay::TRIES as REPLAY_TRIES;
pub use verify::Verified;

use crate::apply::exec::{ExecOptions, execute};
use crate::csl::TaskId;
use crate::git::commit::Identity;
use crate::git::snapshot::Snapshot;
use crate::git::workspace::GitWorkspace;
use crate::git::worktree::WorktreeUpdate;
use crate::git::{ObjectId, Repository};
use crate::history::commits;
use crate::plan::{Task, plan_in, refuse_names, refuse_run};
use crate::report::{Tally, TaskReport};
use crate::run::policy::{ALLOWED_COMMANDS, Approvals, PRIVATE_APPROVALS};
use crate::run::{Ask, Limits, OnLine, Runner};
use crate::syntax::Parsed;

/// The notes that record the reply each post commit was made from.
pub const REPLY_NOTES: &str = "refs/notes/clada";

/// The team's settings file, read from the state before the apply.
pub const TEAM_CONFIG: &str = ".clada/config.toml";

/// Why an apply stopped before it had a result (always exit 2).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub message: String,
    /// What to do next.
    pub hint: Option<String>,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }
}

impl From<crate::git::GitError> for Error {
    fn from(e: crate::git::GitError) -> Error {
        Error::new(e.to_string())
    }
}

/// Settings of commands (RUN and `--verify`).
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub timeout: Duration,
    pub total_timeout: Option<Duration>,
    pub max_output: usize,
    /// What the whole reply's READ and RUN output may hold together
    /// (`clada.maxReplyOutput`).
    pub max_reply_output: usize,
    pub verify: Option<String>,
    /// `clada.sharedDirs`: the user's ignored directories linked into the
    /// scratch tree.
    pub shared_dirs: Vec<String>,
    /// Set by another thread when the caller gave up on the apply (an MCP
    /// client's cancellation): commands are killed, and the apply stops
    /// before it commits anything.
    pub cancel: Option<crate::run::spawn::Cancel>,
}

/// Resolved settings of one apply.
#[derive(Debug, Clone)]
pub struct Settings {
    pub dry_run: bool,
    pub atomic: bool,
    pub author: Identity,
    pub exec: ExecOptions,
    pub run: RunSettings,
}

/// What the caller hears while the apply runs.
pub struct Hooks<'h> {
    /// Asks whether to run a command line that is not approved; `None`
    /// refuses it (no terminal).
    pub ask: Option<Ask<'h>>,
    /// Each line of command output, as it arrives.
    pub on_line: OnLine<'h>,
    /// Each task's report, as it finishes; the operations of a TASKS block
    /// each as it finishes, then the block.
    pub on_task: Box<dyn FnMut(&TaskReport) + 'h>,
}

impl Hooks<'_> {
    /// Hears nothing; commands that are not approved are refused.
    pub fn quiet() -> Hooks<'static> {
        Hooks {
            ask: None,
            on_line: Box::new(|_, _| {}),
            on_task: Box::new(|_| {}),
        }
    }
}

/// Where an apply lands, and what it may touch.
pub struct Target<'a> {
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
    /// The server request this apply answers (its reference), recorded in
    /// the post commit's message as `Clada-Request-Ref`: how a server
    /// whose hook was stopped after the apply finds that it was made.
    pub request: Option<&'a str>,
    /// Who pushed the server request (`clada.pusherVariables`), recorded
    /// in the post commit's message as `Clada-Pusher`.
    pub pusher: Option<&'a str>,
    /// Whether a branch that moved during the apply gets the reply again
    /// on its new tip (`replay.rs`); `false` (a server with
    /// `clada.serverReplay=false`): it ends `branch_moved` at once.
    pub replay: bool,
    /// Taken before the first reference is written (the branch, the
    /// reply's note, a rejected result), held until the apply ends: a
    /// server's `clada.lock`, for the references all its hooks write
    /// (`git/queue.rs`). `None`: the caller holds what it needs.
    pub shared: Option<&'a SharedLock<'a>>,
}

/// What [`Target::shared`] calls: a guard that lets go when dropped.
pub type SharedLock<'a> = dyn Fn() -> Result<Box<dyn Held + 'a>, Error> + 'a;

/// Anything held until dropped (a lock guard).
pub trait Held {}

impl<T> Held for T {}

/// How an apply ended (doc/report.md `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every task succeeded, or nothing needed to change.
    Success,
    /// Some task failed or was skipped (a dropped block of the reply is a
    /// SKIP task), and nothing was applied: the branch did not move.
    Failed,
    /// Some task failed or was skipped, and the rest is applied: the
    /// branch moved (with `--dry-run`: would move; without git: some task
    /// succeeded). Also an apply whose commit could not all be written to
    /// the working tree, and any reply with dropped blocks (syntaxes.md
    /// §2), even when nothing else changed.
    Partial,
    /// The reply holds no operation at all.
    NoOperations,
    /// `--atomic` with a failed task, or `--verify` failed: the branch was
    /// not moved.
    Rejected,
    /// The branch moved during the apply; nothing was changed.
    BranchMoved,
}

impl Ending {
    pub fn name(self) -> &'static str {
        match self {
            Ending::Success => "success",
            Ending::Failed => "failed",
            Ending::Partial => "partial",
            Ending::NoOperations => "no_operations",
            Ending::Rejected => "rejected",
            Ending::BranchMoved => "branch_moved",
        }
    }

    /// The process exit status (apply.md §7).
    pub fn exit_code(self) -> u8 {
        match self {
            Ending::Success => 0,
            Ending::BranchMoved => 3,
            _ => 1,
        }
    }

    /// The ending of an apply that was not rejected: `applied` says
    /// whether any of the reply is applied (see [`Ending::Partial`]).
    fn by_tally(tally: Tally, applied: bool) -> Ending {
        if tally.all_succeeded() {
            Ending::Success
        } else if applied {
            Ending::Partial
        } else {
            Ending::Failed
        }
    }
}

/// What an apply did, for the caller to render.
pub struct Applied {
    pub ending: Ending,
    /// One line: what happened to the branch, with the tally.
    pub message: String,
    /// The branch's short name.
    pub branch: Option<String>,
    pub base: Option<ObjectId>,
    /// The pre commit, when one was made and the branch moved.
    pub pre: Option<ObjectId>,
    /// The post commit, if one was made (on the branch for `success` and
    /// `partial`).
    pub post: Option<ObjectId>,
    /// Where a rejected result is kept.
    pub rejected_ref: Option<String>,
    pub reports: Vec<TaskReport>,
    pub tally: Tally,
    pub worktree: WorktreeUpdate,
    /// Changed files the snapshot left out (names that are not UTF-8,
    /// quoted as git quotes them).
    pub left_out: Vec<String>,
    /// New files the snapshot left out because the ignore rules before a
    /// reply changed them ignore them (`git::ignored`).
    pub left_ignored: Vec<String>,
    /// `--dry-run`: the reply's changes, as a patch against the working
    /// tree as it is (what the post commit would change from pre).
    pub diff: Option<String>,
    /// `--dry-run`: the paths of your own uncommitted work (not the
    /// reply's; in the working tree already, and in pre when it is made).
    pub your_work: Vec<String>,
    pub verify: Option<Verified>,
    /// Command lines the user answered "always" to: the caller records
    /// them in the user's approvals (`cli/commands.rs`).
    pub always: Vec<String>,
    /// What went wrong after the branch moved that the apply survived
    /// (the reply's note not written, say).
    pub warnings: Vec<String>,
    /// `branch_moved`: why the reply was not applied on the branch's new
    /// tip, one line per operation that would apply differently there
    /// (or why it could not be tried at all).
    pub conflicts: Vec<String>,
    /// The branch's commit when the apply started, when the reply was
    /// applied on the tip it had moved to instead (`base`).
    pub moved_from: Option<ObjectId>,
}

impl Applied {
    fn new(ending: Ending, message: String) -> Applied {
        Applied {
            ending,
            message,
            branch: None,
            base: None,
            pre: None,
            post: None,
            rejected_ref: None,
            reports: Vec::new(),
            tally: Tally::default(),
            worktree: WorktreeUpdate::default(),
            left_out: Vec::new(),
            left_ignored: Vec::new(),
            diff: None,
            your_work: Vec::new(),
            verify: None,
            always: Vec::new(),
            warnings: Vec::new(),
            conflicts: Vec::new(),
            moved_from: None,
        }
    }
}

/// The result for a reply with no operation in any syntax read: nothing
/// is touched, not even the lock.
pub fn no_operations(parsed: &Parsed<'_>) -> Applied {
    Applied::new(
        Ending::NoOperations,
        format!(
            "no_operations: the reply holds no operations (read as {}); nothing was applied. git-clada reads {}; git clada prompt prints a guide to give the model",
            parsed.syntax.title(),
            crate::syntax::Syntax::read_names()
        ),
    )
}

/// The tasks of a reply: its plan (git's rules about names applied), then
/// a SKIP task for each block it dropped (numbered after the last task).
/// `root`: the working tree the reply applies to, where a syntax that asks
/// for absolute paths may name files by their absolute path (`None`: no
/// working tree, so every absolute path is refused).
pub fn tasks_of(parsed: &Parsed<'_>, allow_escape: bool, root: Option<&Path>) -> Vec<Task> {
    let roots = match root {
        Some(root) if parsed.syntax.takes_absolute_paths() => root_spellings(root),
        _ => Vec::new(),
    };
    let mut tasks = refuse_names(
        plan_in(&parsed.drafts, allow_escape, &roots),
        &crate::git::paths::refused_name,
    );
    let after = parsed.drafts.last().map_or(0, |d| d.task.top);
    for (next, dropped) in (after + 1..).zip(&parsed.dropped) {
        tasks.push(Task::Skipped {
            task: TaskId {
                top: next,
                sub: None,
            },
            line: dropped.line,
            skip: crate::plan::Skip {
                kind: dropped.kind,
                target: Some(dropped.what()),
                reasons: vec![(dropped.line, dropped.reason())],
                error_type: None,
            },
        });
    }
    tasks
}

/// One draft of a syntax that takes relative paths, planned as
/// [`tasks_of`] plans it (without `--allow-escape`).
pub fn task_of(draft: &crate::plan::Draft<'_>) -> Task {
    refuse_names(
        plan_in(std::slice::from_ref(draft), false, &[]),
        &crate::git::paths::refused_name,
    )
    .remove(0)
}

/// The ways a reply may spell the working tree `root`: as given (made
/// absolute) and with its symbolic links resolved, as `pwd` and
/// `realpath` print it.
fn root_spellings(root: &Path) -> Vec<String> {
    let absolute = std::path::absolute(root).ok();
    let resolved = std::fs::canonicalize(root).ok();
    let mut roots: Vec<String> = [absolute, resolved]
        .into_iter()
        .flatten()
        .filter_map(|p| p.to_str().map(str::to_owned))
        .collect();
    roots.dedup();
    roots
}

/// Phase timings, for `--error-detail debug`.
pub struct Timings {
    pub start: Instant,
    last: Instant,
    pub phases: Vec<(&'static str, Duration)>,
}

impl Default for Timings {
    fn default() -> Self {
        let now = Instant::now();
        Timings {
            start: now,
            last: now,
            phases: Vec::new(),
        }
    }
}

impl Timings {
    pub fn mark(&mut self, phase: &'static str) {
        let now = Instant::now();
        self.phases.push((phase, now - self.last));
        self.last = now;
    }
}

/// The user's own approvals, kept in the git dir `common_dir`
/// ([`PRIVATE_APPROVALS`]).
pub fn private_approvals(common_dir: &Path) -> Result<Approvals, Error> {
    let path = common_dir.join(PRIVATE_APPROVALS);
    let name = path.display().to_string();
    Approvals::load_from(&path, &name).map_err(|e| {
        Error::new(e).hint(format!(
            "fix or remove {name} (git clada allow --list reads it), then apply again"
        ))
    })
}

/// The runner of one apply's commands.
fn runner<'h>(
    run: &RunSettings,
    approvals: Approvals,
    start: Instant,
    hooks: &mut Hooks<'h>,
) -> Runner<'h> {
    let limits = Limits {
        timeout: run.timeout,
        deadline: run.total_timeout.map(|t| start + t),
        max_output: run.max_output,
        max_reply_output: run.max_reply_output,
        cancel: run.cancel.clone(),
    };
    let on_line = std::mem::replace(&mut hooks.on_line, Box::new(|_, _| {}));
    Runner::new(approvals, limits, hooks.ask.take(), on_line)
        .with_shared_dirs(run.shared_dirs.clone())
}

/// The caller's settings, given the team's `.clada/config.toml` as it is
/// in the state before the apply (`None` when there is none).
pub type ResolveSettings<'s> = dyn FnMut(Option<&[u8]>) -> Result<Settings, Error> + 's;

/// The tree an apply of `parsed` on commit `base` makes where there is no
/// working tree (a server's), rebuilt without taking the lock, running a
/// command, committing or moving a reference: `git clada push-reply`
/// checks a server's post commit against it and takes that commit without
/// fetching it when the trees agree (doc/hooks.md). `refuse`: as
/// [`Target::refuse_run`], RUN refused before anything runs (a server without
/// `clada.serverRun`). `None` when the reply runs commands, whose effects
/// cannot be rebuilt without running them.
///
/// `settings` is called as for [`apply`]. The objects are written to
/// `repo`: give it one that keeps them in memory to write nothing.
pub fn replay_tree(
    repo: &Repository,
    parsed: &Parsed<'_>,
    base: ObjectId,
    refuse: Option<&str>,
    settings: &mut ResolveSettings<'_>,
) -> Result<Option<ObjectId>, Error> {
    let base_tree = repo.tree_of(Some(base))?;
    let mut tasks = tasks_of(parsed, false, None);
    if let Some(reason) = refuse {
        tasks = refuse_run(tasks, reason);
    }
    if tasks.iter().any(Task::runs_commands) {
        return Ok(None);
    }
    let team = repo.file_in_tree(base_tree, TEAM_CONFIG)?;
    let settings = settings(team.as_deref())?;
    let mut files = GitWorkspace::new(repo, base_tree, Ok(base), Vec::new())?;
    let mut hooks = Hooks::quiet();
    let mut runner = runner(
        &settings.run,
        Approvals::default(),
        Instant::now(),
        &mut hooks,
    );
    execute(&tasks, &mut files, &settings.exec, &mut runner, |_| {});
    Ok(Some(files.write_tree()?))
}

/// Steps 4–9 of git.md §1 for a reply without fatal errors, under the lock:
/// snapshot (with a working tree), operations in memory, post commit, note,
/// compare-and-swap of `target.branch`, working tree update. A branch that
/// moved meanwhile gets the reply again on its new tip when every
/// operation applies there as it did (`replay.rs`, doc/replay.md).
///
/// `settings` is called once per try, with the team's
/// `.clada/config.toml` as it is in the state before that try (`None` when
/// there is none).
pub fn apply(
    repo: &Repository,
    parsed: &Parsed<'_>,
    reply: &[u8],
    target: &Target<'_>,
    settings: &mut ResolveSettings<'_>,
    hooks: Hooks<'_>,
    timings: &mut Timings,
) -> Result<Applied, Error> {
    let (first, tree) = attempt(repo, parsed, reply, target, settings, hooks, timings, None)?;
    if first.ending != Ending::BranchMoved || !target.replay {
        return Ok(first);
    }
    replay::after_move(repo, parsed, reply, target, settings, timings, first, tree)
}

/// One try of [`apply`] on `target.base`; also the tree the operations ran
/// on (the pre tree). `expect`: a later try's, held to what the first did:
/// an operation that applies differently stops it before anything is
/// committed (`branch_moved`, naming them).
#[allow(clippy::too_many_arguments)]
fn attempt(
    repo: &Repository,
    parsed: &Parsed<'_>,
    reply: &[u8],
    target: &Target<'_>,
    settings: &mut ResolveSettings<'_>,
    mut hooks: Hooks<'_>,
    timings: &mut Timings,
    expect: Option<&replay::Expected<'_>>,
) -> Result<(Applied, ObjectId), Error> {
    let (branch, base) = (target.branch, target.base);
    let base_tree = repo.tree_of(base)?;
    let mut left_ignored = Vec::new();
    let snapshot = if target.worktree {
        // Files an earlier update could not write (the caller tried them
        // again first, unless this is a dry run): those still stale are
        // not the user's edits.
        let stale = repo.unwritten_stale()?;
        let mut snapshot =
            repo.snapshot_with(base_tree, false, &|p| stale.iter().any(|s| s == p))?;
        left_ignored = repo.leave_out_unignored(&mut snapshot, base)?;
        snapshot
    } else {
        Snapshot {
            tree: base_tree,
            paths: Vec::new(),
            index: None,
            left_out: Vec::new(),
        }
    };
    timings.mark("snapshot (status)");
    let team = repo.file_in_tree(snapshot.tree, TEAM_CONFIG)?;
    let mut settings = settings(team.as_deref())?;
    settings.exec.feedback_until = Some(timings.start + crate::apply::feedback::BUDGET);
    settings.exec.vocab = parsed.syntax.vocab();

    let pre = if snapshot.tree == base_tree && snapshot.index.is_none() {
        base
    } else {
        // Content only the index holds (staged, then changed on disk) is
        // kept as a second parent, as `git stash` does: the index is
        // brought to the applied commit afterwards, and undo restores it.
        let mut parents: Vec<ObjectId> = base.into_iter().collect();
        if let Some(index_tree) = snapshot.index {
            let message = format!("{} staged content before apply\n", commits::INDEX);
            let index = repo.commit(&settings.author, &message, index_tree, &parents)?;
            parents.push(index);
        }
        let message = format!("{} snapshot before apply\n", commits::PRE);
        let pre = repo.commit(&settings.author, &message, snapshot.tree, &parents)?;
        crate::fault::point("pre-committed");
        Some(pre)
    };

    let root = target.worktree.then(|| repo.workdir()).flatten();
    let mut tasks = tasks_of(parsed, false, root);
    if let Some(reason) = target.refuse_run {
        tasks = refuse_run(tasks, reason);
    }
    let has_run = tasks.iter().any(Task::runs_commands);
    // Approvals come from the state before the apply, never from the
    // reply: the team's from the pre tree, the user's own from the git
    // dir, read before anything runs. A malformed store matters only to a
    // reply that runs commands.
    let mut approvals = match repo.file_in_tree(snapshot.tree, ALLOWED_COMMANDS)? {
        Some(bytes) if has_run => Approvals::parse(&bytes).map_err(|e| {
            Error::new(e).hint(format!(
                "fix {ALLOWED_COMMANDS} (git clada allow --list reads it), then apply again"
            ))
        })?,
        _ => Approvals::default(),
    };
    if has_run {
        approvals.extend(private_approvals(repo.common_dir())?);
    }
    let head = pre.ok_or_else(|| branch.to_string());
    let mut files = GitWorkspace::new(repo, snapshot.tree, head, settings.run.shared_dirs.clone())?;
    let mut runner = runner(&settings.run, approvals, timings.start, &mut hooks);
    let reports = execute(&tasks, &mut files, &settings.exec, &mut runner, |t| {
        (hooks.on_task)(t)
    });
    let tally = Tally::of(&reports);
    let post_tree = files.write_tree()?;
    let changed = repo.tree_changes(snapshot.tree, post_tree)?;
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
            Some(verify::verify(command, &mut files, &mut runner))
        }
        _ => None,
    };
    let always = std::mem::take(&mut runner.always);
    timings.mark("pre commit, operations, post tree");
    // Cancelled: nothing is committed and no reference moves (a pre
    // commit made above is unreferenced, as after a crash).
    if settings.run.cancel.as_ref().is_some_and(|c| c.is_set()) {
        return Err(Error::new("the request was cancelled; nothing was applied")
            .hint("send the reply again to apply it"));
    }
    if let Some(expected) = expect {
        let conflicts = replay::differences(repo, &tasks, expected, &reports, snapshot.tree)?;
        if !conflicts.is_empty() {
            let mut o = Applied::new(
                Ending::BranchMoved,
                replay::stale_message(repo, target, base),
            );
            o.branch = Some(replay::short(branch).to_string());
            o.base = base;
            o.reports = expected.reports.to_vec();
            o.tally = Tally::of(expected.reports);
            o.conflicts = conflicts;
            return Ok((o, snapshot.tree));
        }
    }

    let mut out = if changed.is_empty() {
        let mut o = Applied::new(
            // A reply with dropped blocks stays `partial` (syntaxes.md §2):
            // only part of it was read at all.
            Ending::by_tally(tally, !parsed.dropped.is_empty()),
            format!("nothing changed; the branch was not moved ({tally})"),
        );
        if settings.dry_run {
            o.diff = Some(String::new());
            o.your_work = snapshot.paths.iter().map(|(p, _)| p.clone()).collect();
        }
        o
    } else if settings.dry_run {
        // The reply's changes against the working tree as it is (pre), so
        // that git apply takes them there; your own work is listed apart.
        let diff = diff::unified_diff(repo, snapshot.tree, post_tree, &changed)?;
        // The status the apply would have: a failed verify, or a failed
        // task with --atomic, would leave the branch where it is.
        let refused = match &verified {
            Some(v) if !v.passed => Some(format!("{}; the reply's tasks ran ({tally})", v.message)),
            _ if settings.atomic && !tally.all_succeeded() => Some(format!(
                "a task failed and --atomic is set; the reply's tasks ran ({tally})"
            )),
            _ => None,
        };
        let mut o = match refused {
            Some(why) => Applied::new(
                Ending::Rejected,
                format!("dry run: nothing was changed; it would not be applied: {why}"),
            ),
            None => Applied::new(
                Ending::by_tally(tally, true),
                format!("dry run: nothing was changed ({tally})"),
            ),
        };
        o.diff = Some(diff);
        o.your_work = snapshot.paths.iter().map(|(p, _)| p.clone()).collect();
        o
    } else {
        let mut o = commit::commit_and_advance(
            repo,
            &settings,
            reply,
            &reports,
            tally,
            target,
            pre,
            post_tree,
            &snapshot,
            changed,
            verified.as_ref(),
            timings,
        )?;
        // A file that could not be written leaves the working tree behind
        // the branch: not a success, whatever the tasks did.
        if !o.worktree.failed.is_empty() && o.ending == Ending::Success {
            o.ending = Ending::Partial;
            o.message = format!(
                "{}; {} could not be written to your working tree (see the lines above)",
                o.message,
                crate::apply::exec::plural(o.worktree.failed.len(), "file")
            );
        }
        o
    };
    out.verify = verified;
    out.left_out = snapshot.left_out.clone();
    out.left_ignored = left_ignored;
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
    out.reports = reports;
    out.tally = tally;
    out.always = always;
    timings.mark("working tree, index");
    Ok((out, snapshot.tree))
}
