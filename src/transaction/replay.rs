//! A branch that moved during an apply (doc/replay.md): the reply is
//! planned again on the new tip and committed there when every operation
//! has the same outcome as on the tip it was first applied to; otherwise
//! the apply ends `branch_moved` (stale, exit 3) naming each operation
//! that would apply differently and why.
//!
//! Owns the decision "same outcome" and the bounded loop of tries; each
//! try is a whole apply of its own ([`super::attempt`]): a fresh snapshot
//! of the user's work on the new tip as its pre commit, the operations,
//! the compare-and-swap from that tip.

use crate::git::{ObjectId, Repository};
use crate::plan::{Op, Step, Task};
use crate::report::{Status, TaskReport};
use crate::syntax::Parsed;

use super::{Applied, Ending, Error, Hooks, ResolveSettings, Target, Timings, attempt};

/// How many times the reply is planned again before the apply gives up on
/// a branch that keeps moving. Each try costs one status and the
/// operations; a branch that moves under five tries in a row is one whose
/// writers should take turns.
pub const TRIES: usize = 5;

/// What the first try saw, for the later ones to be held to.
pub(super) struct Expected<'a> {
    /// Its task reports.
    pub reports: &'a [TaskReport],
    /// The tree the operations ran on (its pre tree).
    pub tree: ObjectId,
}

/// After a first try that found the branch moved (`first`, whose
/// operations ran on `first_tree`): the reply again on the branch's new
/// tip, up to [`TRIES`] times.
#[allow(clippy::too_many_arguments)]
pub(super) fn after_move(
    repo: &Repository,
    parsed: &Parsed<'_>,
    reply: &[u8],
    target: &Target<'_>,
    settings: &mut ResolveSettings<'_>,
    timings: &mut Timings,
    first: Applied,
    first_tree: ObjectId,
) -> Result<Applied, Error> {
    let expected = Expected {
        reports: &first.reports,
        tree: first_tree,
    };
    let branch = target.branch;
    for _ in 0..TRIES {
        let tip = repo.ref_target(branch)?;
        if let Some(why) = not_replayable(repo, parsed, target, tip)? {
            return Ok(stale(repo, &first, target, tip, vec![why]));
        }
        let again = Target {
            branch,
            base: tip,
            worktree: target.worktree,
            refuse_run: target.refuse_run,
            request: target.request,
            pusher: target.pusher,
            replay: true,
            shared: target.shared,
        };
        // Heard once: the task lines of the first try were shown already,
        // and a try that differs from them is not committed.
        let (mut out, _) = attempt(
            repo,
            parsed,
            reply,
            &again,
            settings,
            Hooks::quiet(),
            timings,
            Some(&expected),
        )?;
        match out.ending {
            // Moved again: another try, on the newer tip.
            Ending::BranchMoved if out.conflicts.is_empty() => continue,
            Ending::BranchMoved => return Ok(out),
            _ => {
                out.moved_from = target.base;
                if out.post.is_some() {
                    out.message = format!(
                        "{} on top of {} (the branch moved during the apply)",
                        out.message,
                        tip.map_or_else(|| "nothing".to_string(), |t| repo.short(t))
                    );
                }
                return Ok(out);
            }
        }
    }
    let tip = repo.ref_target(branch)?;
    Ok(stale(
        repo,
        &first,
        target,
        tip,
        vec![format!(
            "{} moved again during each of {TRIES} tries to apply the reply on its new tip; nothing was changed. Apply it again when the branch is quiet",
            short(branch)
        )],
    ))
}

/// Why the reply cannot be planned again on `tip` at all, if it cannot.
fn not_replayable(
    repo: &Repository,
    parsed: &Parsed<'_>,
    target: &Target<'_>,
    tip: Option<ObjectId>,
) -> Result<Option<String>, Error> {
    let name = short(target.branch);
    let Some(tip) = tip else {
        return Ok(Some(format!("{name} was deleted during the apply")));
    };
    if let Some(base) = target.base
        && !repo.is_ancestor(base, tip)?
    {
        return Ok(Some(format!(
            "{name} was rewritten during the apply ({} does not contain {}, the commit the reply was applied to); whatever replaced it is not built on it",
            repo.short(tip),
            repo.short(base)
        )));
    }
    // A server request applied meanwhile by another hook (one that found
    // it waiting) is not applied a second time.
    if let (Some(request), Some(base)) = (target.request, target.base) {
        let trailer = format!("Clada-Request-Ref: {request}");
        for commit in repo.first_parents(tip, 256)? {
            if commit == base {
                break;
            }
            let info = repo.commit_info(commit)?;
            if info.message.lines().any(|l| l.trim_end() == trailer) {
                return Ok(Some(format!(
                    "the request was applied already, as {} (by another hook)",
                    repo.short(commit)
                )));
            }
        }
    }
    let mut tasks = super::tasks_of(parsed, false, None);
    if let Some(reason) = target.refuse_run {
        tasks = crate::plan::refuse_run(tasks, reason);
    }
    let runs: Vec<String> = steps(&tasks)
        .filter(|s| matches!(s.op, Op::Run { .. }))
        .map(|s| format!("[task-{}] RUN", s.task))
        .collect();
    if !runs.is_empty() {
        return Ok(Some(format!(
            "{}: the reply runs commands, which are not run a second time on the new tip (what they do there cannot be known without running them)",
            runs.join(", ")
        )));
    }
    Ok(None)
}

/// The result of a reply that is not applied on the moved branch:
/// `branch_moved` (exit 3), naming why in `conflicts`.
pub(super) fn stale(
    repo: &Repository,
    first: &Applied,
    target: &Target<'_>,
    tip: Option<ObjectId>,
    conflicts: Vec<String>,
) -> Applied {
    let mut o = Applied::new(Ending::BranchMoved, stale_message(repo, target, tip));
    o.branch = first.branch.clone();
    o.base = target.base;
    o.reports = first.reports.clone();
    o.tally = first.tally;
    o.conflicts = conflicts;
    o
}

/// The summary line of a stale apply.
pub(super) fn stale_message(
    repo: &Repository,
    target: &Target<'_>,
    tip: Option<ObjectId>,
) -> String {
    let tip = tip.map_or_else(|| "nothing".to_string(), |t| repo.short(t));
    format!(
        "branch_moved: {} moved to {tip} while applying, and the reply does not apply there as it did (see the stale lines above); nothing was changed. Send a reply written for the new tip",
        short(target.branch)
    )
}

/// Each operation that would apply differently on the new tree than it
/// did on `expected.tree`, with why: an outcome that differs (another
/// status or error, another number of places matched, created where it
/// replaced), or an operation placed by position or on the whole file
/// (WRITE that replaces, INSERT at a line, DELETE) on a path the branch
/// changed meanwhile, whose other change it would undo or misplace.
pub(super) fn differences(
    repo: &Repository,
    tasks: &[Task],
    expected: &Expected<'_>,
    reports: &[TaskReport],
    tree: ObjectId,
) -> Result<Vec<String>, Error> {
    let before = flatten(expected.reports);
    let now = flatten(reports);
    let mut out = Vec::new();
    if before.len() != now.len() {
        out.push(format!(
            "the reply's operations did not run the same way ({} reports on the old tip, {} now)",
            before.len(),
            now.len()
        ));
        return Ok(out);
    }
    for (b, n) in before.iter().zip(&now) {
        if outcome(b) != outcome(n) {
            out.push(format!(
                "{}: {} on the old tip, {} now",
                label(n),
                describe(b),
                describe(n)
            ));
        }
    }
    for step in steps(tasks) {
        let (path, what) = match &step.op {
            Op::Write {
                path,
                append: false,
                ..
            } => (path, "replaces the whole file".to_string()),
            Op::Insert { path, line, .. } => (path, format!("inserts after line {line}")),
            Op::Delete { path, .. } => (path, "deletes it".to_string()),
            _ => continue,
        };
        // An operation that failed on the old tip changed nothing there;
        // if it fails the same way now, the outcomes above agree.
        let succeeded = before
            .iter()
            .any(|r| r.task == step.task && r.status == Status::Success);
        if !succeeded {
            continue;
        }
        let p = path.as_str();
        if repo.entry_at(expected.tree, p)? != repo.entry_at(tree, p)? {
            out.push(format!(
                "[task-{}] {} {p}: {what}, and {p} changed on the branch meanwhile: applied again it would undo or misplace that change",
                step.task,
                step.op.kind().name()
            ));
        }
    }
    Ok(out)
}

/// What must be the same for an operation to count as applying the same
/// way: its status, its error, how many places it matched, and what it
/// did (the first word of its message: created, replaced, appended…).
fn outcome(r: &TaskReport) -> (Status, Option<&'static str>, usize, &str) {
    let did = r.message.split_whitespace().next().unwrap_or("");
    (r.status, r.error_type, r.lines.len(), did)
}

fn describe(r: &TaskReport) -> String {
    match (r.status, r.error_type) {
        (Status::Success, _) => format!("it {}", r.message),
        (_, Some(kind)) => format!("{} ({kind}: {})", r.status.name(), r.message),
        _ => format!("{} ({})", r.status.name(), r.message),
    }
}

fn label(r: &TaskReport) -> String {
    match &r.target {
        Some(target) => format!(
            "[task-{}] {} {}",
            r.task,
            r.op.name(),
            crate::quote::visible(target)
        ),
        None => format!("[task-{}] {}", r.task, r.op.name()),
    }
}

/// Every report, the operations of a TASKS block after the block's own.
fn flatten(reports: &[TaskReport]) -> Vec<&TaskReport> {
    let mut out = Vec::new();
    for r in reports {
        out.push(r);
        out.extend(r.operations.iter());
    }
    out
}

/// Every step of the plan, those of blocks included.
fn steps(tasks: &[Task]) -> impl Iterator<Item = &Step> {
    tasks.iter().flat_map(|t| match t {
        Task::Single(step) => std::slice::from_ref(step),
        Task::Block { steps, .. } => steps.as_slice(),
        Task::Skipped { .. } => &[],
    })
}

pub(super) fn short(branch: &str) -> &str {
    branch.strip_prefix("refs/heads/").unwrap_or(branch)
}
