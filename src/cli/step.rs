//! `git clada step-back [N]` and `git clada step-forward [N | --all]`
//! (git.md §4): time travel along the branch's first-parent line that
//! loses nothing.
//!
//! The first step back saves the user's working tree and index in a
//! session record (`history::session`) before anything moves, then
//! detaches HEAD at the older commit. Later steps move the detached HEAD
//! along the same line, only from a clean state: whatever the user changed
//! while stepped back is theirs, and is never overwritten (the refusal
//! says how to keep it). Arriving at the tip attaches HEAD to the branch
//! again and restores the saved state; the session ends there.

use crate::git::{Head, ObjectId, Repository};
use crate::history::session::{self, Session};

use super::guard::{
    Guarded, LockArgs, git_err, guard, list_paths, lost_race, refuse_conflicts, short_branch,
};
use super::{CliError, Outcome, write_stdout};

/// Step back along the branch's first-parent history, saving your work
///
/// The first step saves your uncommitted work (untracked files and staged
/// changes included) under refs/clada/steps/, then checks out the commit N
/// steps below the branch tip as a detached HEAD. Look around, run tests;
/// `git clada step-forward` moves back toward the tip, and arriving there
/// restores your work.
#[derive(Debug, clap::Args)]
pub struct StepBackArgs {
    /// How many commits to step back
    #[arg(value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,

    #[command(flatten)]
    pub lock: LockArgs,
}

/// Step forward toward the branch tip; at the tip, restore your work
///
/// Moves the detached HEAD N commits (default 1) toward the tip the
/// session started from. Arriving at the tip (or with --all) attaches HEAD
/// to the branch again and restores the work saved by step-back. Refused
/// while you have uncommitted changes: they were made while stepped back,
/// and are never discarded.
#[derive(Debug, clap::Args)]
pub struct StepForwardArgs {
    /// How many commits to step forward [default: 1]
    #[arg(value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "all")]
    pub count: Option<u32>,

    /// Go straight back to the tip and restore your work
    #[arg(long)]
    pub all: bool,

    #[command(flatten)]
    pub lock: LockArgs,
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

fn subject(repo: &Repository, id: ObjectId) -> Result<String, CliError> {
    Ok(repo
        .commit_info(id)
        .map_err(git_err)?
        .message
        .lines()
        .next()
        .unwrap_or_default()
        .to_string())
}

/// Refuses unless the working tree and index hold exactly `commit`: what
/// differs was made while stepped back.
fn require_clean_here(
    repo: &Repository,
    commit: ObjectId,
    command: &str,
) -> Result<ObjectId, CliError> {
    let tree = repo.tree_of(Some(commit)).map_err(git_err)?;
    let state = repo.work_state(tree).map_err(git_err)?;
    if !state.is_clean() {
        let paths = if state.unmerged.is_empty() {
            &state.changed
        } else {
            &state.unmerged
        };
        return Err(CliError::new(format!(
            "you have uncommitted changes made while stepped back ({}); `git clada {command}` would discard them, so nothing was changed",
            list_paths(paths, 10)
        ))
        .hint(format!(
            "keep them on a branch: `git switch -c <new-branch>`, `git add -A`, `git commit`, then `git clada step-forward --all` to return; or put them aside with `git stash -u` (bring them back later with `git stash pop`), then `git clada {command}`"
        )));
    }
    Ok(tree)
}

/// Moves the working tree from `from_tree` to `to` and HEAD from
/// `expected` to `new`, with the journal around it.
fn travel(
    g: &Guarded,
    expected: &Head,
    new: &Head,
    disk: (ObjectId, ObjectId),
    index: (ObjectId, ObjectId),
    command: &str,
    message: &str,
) -> Result<Option<crate::git::switch::SwitchReport>, CliError> {
    let repo = &g.repo;
    let switch = repo.plan_switch(disk, index).map_err(git_err)?;
    let conflicts = repo.switch_conflicts(&switch).map_err(git_err)?;
    if !conflicts.is_empty() {
        return Err(refuse_conflicts(&conflicts, command));
    }
    repo.record_switch(new, &switch).map_err(git_err)?;
    if expected != new
        && let Err(e) = repo.set_head(&g.author, expected, new, message)
    {
        repo.clear_switch().map_err(git_err)?;
        lost_race(e, command)?;
        return Ok(None);
    }
    crate::fault::point("step-moved");
    let report = repo.run_switch(&switch).map_err(|e| {
        CliError::new(format!(
            "HEAD was moved but the working tree could not be updated: {e}"
        ))
        .hint("run any clada command (git clada status shows where you are) to finish it")
    })?;
    repo.clear_switch().map_err(git_err)?;
    Ok(Some(report))
}

fn print_kept(
    w: &mut dyn std::io::Write,
    report: &crate::git::switch::SwitchReport,
) -> std::io::Result<()> {
    for (path, why) in &report.kept {
        writeln!(w, "clada: kept {path}: {why}")?;
    }
    Ok(())
}

pub fn run_step_back(args: StepBackArgs) -> Result<Outcome, CliError> {
    let g = guard(&args.lock)?;
    let repo = &g.repo;
    let n = args.count as usize;
    let head = repo.head().map_err(git_err)?;
    let mut open = session::read(repo).map_err(git_err)?;
    // A session whose work is already back in place (a crash between
    // restoring it and closing the session) is closed here.
    if let (Some(s), Head::Branch { name, commit }) = (&open, &head)
        && *name == s.branch
        && *commit == Some(s.tip)
    {
        let state = repo
            .work_state(repo.tree_of(Some(s.tip)).map_err(git_err)?)
            .map_err(git_err)?;
        if state.disk == s.disk && state.index == s.index {
            repo.delete_ref(&g.author, &s.ref_name, s.record)
                .or_else(|e| lost_race(e, "step-back").map(|_| ()))?;
            open = None;
        }
    }
    match (open, head) {
        (None, Head::Branch { name, commit }) => {
            let Some(tip) = commit else {
                return Err(CliError::new(format!(
                    "{} has no commits yet: there is nothing to step back to",
                    short_branch(&name)
                )));
            };
            start(&g, &name, tip, n)
        }
        (None, Head::Detached(_)) => Err(CliError::new(
            "HEAD is detached and no step-back is in progress: step-back starts from a branch",
        )
        .hint("switch to a branch first (git switch <branch>)")),
        (Some(s), Head::Detached(at)) => {
            let Some(pos) = session::position(repo, &s, at).map_err(git_err)? else {
                return Err(off_the_line(&s, at));
            };
            let tree = require_clean_here(repo, at, "step-back")?;
            let line = repo.first_parents(at, n + 1).map_err(git_err)?;
            if line.len() <= n {
                return Err(too_far(line.len() - 1, "below HEAD"));
            }
            step_detached(
                &g,
                &s,
                (at, tree),
                line[n],
                Step {
                    command: "step-back",
                    done: format!("stepped back {n}"),
                    below_tip: pos + n,
                    hint: "`git clada step-forward [N]` moves toward the tip; `git clada step-forward --all` returns to it and restores your work",
                },
            )
        }
        (Some(s), Head::Branch { .. }) => Err(CliError::new(format!(
            "a step-back session on {} is still open (your saved work is at {}), but HEAD is on a branch",
            short_branch(&s.branch),
            s.ref_name
        ))
        .hint("finish it with `git clada step-forward --all` (it restores your saved work), then step back again")),
    }
}

/// One move of a detached HEAD along the session's line, and what it says.
struct Step {
    /// The command, for the reflog and refusals.
    command: &'static str,
    /// What was done ("stepped back 2").
    done: String,
    /// How many commits below the branch's tip the target is.
    below_tip: usize,
    /// Where to go from there.
    hint: &'static str,
}

/// Moves the detached HEAD from `at` (with clean tree `tree`) to `target`
/// within session `s`, and reports where HEAD is.
fn step_detached(
    g: &Guarded,
    s: &Session,
    (at, tree): (ObjectId, ObjectId),
    target: ObjectId,
    step: Step,
) -> Result<Outcome, CliError> {
    let repo = &g.repo;
    let target_tree = repo.tree_of(Some(target)).map_err(git_err)?;
    let Some(report) = travel(
        g,
        &Head::Detached(at),
        &Head::Detached(target),
        (tree, target_tree),
        (tree, target_tree),
        step.command,
        &format!("clada: {} to {}", step.command, short(target)),
    )?
    else {
        return Ok(Outcome::BranchMoved);
    };
    let subject = subject(repo, target)?;
    write_stdout(|w| {
        writeln!(
            w,
            "clada: {}: HEAD is at {} \"{subject}\", {} below the tip of {} (detached)",
            step.done,
            short(target),
            crate::words::count(step.below_tip, "commit", "commits"),
            short_branch(&s.branch)
        )?;
        print_kept(w, &report)?;
        writeln!(w, "hint: {}", step.hint)
    })?;
    Ok(Outcome::Success)
}

fn too_far(available: usize, from: &str) -> CliError {
    if available == 0 {
        CliError::new(format!(
            "there is no commit {from} to step back to (it is the first commit); nothing was changed"
        ))
    } else {
        CliError::new(format!(
            "only {} {from} on the first-parent line; nothing was changed",
            crate::words::count(available, "commit", "commits")
        ))
        .hint(format!(
            "step back at most {available}: git clada step-back {available}"
        ))
    }
}

fn off_the_line(s: &Session, at: ObjectId) -> CliError {
    CliError::new(format!(
        "HEAD ({}) is not on the first-parent history of {} that you stepped back along (something was checked out or committed meanwhile); nothing was changed",
        short(at),
        short_branch(&s.branch)
    ))
    .hint(format!(
        "keep any new commits on a branch (`git branch <name>`), then `git clada step-forward --all` returns to {} and restores your saved work ({})",
        short_branch(&s.branch),
        s.ref_name
    ))
}

/// The first step back from the tip of `branch`.
fn start(g: &Guarded, branch: &str, tip: ObjectId, n: usize) -> Result<Outcome, CliError> {
    let repo = &g.repo;
    let line = repo.first_parents(tip, n + 1).map_err(git_err)?;
    if line.len() <= n {
        return Err(too_far(
            line.len() - 1,
            &format!("below the tip of {}", short_branch(branch)),
        ));
    }
    let target = line[n];
    let tip_tree = repo.tree_of(Some(tip)).map_err(git_err)?;
    let target_tree = repo.tree_of(Some(target)).map_err(git_err)?;
    let state = repo.work_state(tip_tree).map_err(git_err)?;
    if !state.unmerged.is_empty() {
        return Err(CliError::new(format!(
            "the index has unresolved conflicts ({}); nothing was changed",
            list_paths(&state.unmerged, 10)
        ))
        .hint("resolve them (git status says how), then step back"));
    }
    // Checked before the session exists, so a refusal leaves nothing.
    let switch = repo
        .plan_switch((state.disk, target_tree), (state.index, target_tree))
        .map_err(git_err)?;
    let conflicts = repo.switch_conflicts(&switch).map_err(git_err)?;
    if !conflicts.is_empty() {
        return Err(refuse_conflicts(&conflicts, "step-back"));
    }
    let record = session::save(repo, &g.author, branch, tip, &state).map_err(git_err)?;
    let ref_name = session::ref_name(repo);
    repo.create_ref(
        &g.author,
        &ref_name,
        record,
        &format!("clada: step-back from {}", short_branch(branch)),
    )
    .map_err(git_err)?;
    crate::fault::point("step-saved");
    let expected = Head::Branch {
        name: branch.to_string(),
        commit: Some(tip),
    };
    let Some(report) = travel(
        g,
        &expected,
        &Head::Detached(target),
        (state.disk, target_tree),
        (state.index, target_tree),
        "step-back",
        &format!("clada: step-back to {}", short(target)),
    )?
    else {
        // HEAD moved under us: the session never started.
        let _ = repo.delete_ref(&g.author, &ref_name, record);
        return Ok(Outcome::BranchMoved);
    };
    let subject = subject(repo, target)?;
    write_stdout(|w| {
        writeln!(
            w,
            "clada: stepped back {n} from {} ({}): HEAD is at {} \"{subject}\" (detached)",
            short_branch(branch),
            short(tip),
            short(target)
        )?;
        if !state.is_clean() {
            writeln!(
                w,
                "clada: your uncommitted work ({}) is saved at {ref_name}; it comes back at the tip",
                crate::words::count(state.changed.len(), "path", "paths")
            )?;
        }
        print_kept(w, &report)?;
        writeln!(
            w,
            "hint: `git clada step-forward [N]` moves toward the tip; `git clada step-forward --all` returns to it and restores your work"
        )
    })?;
    Ok(Outcome::Success)
}

pub fn run_step_forward(args: StepForwardArgs) -> Result<Outcome, CliError> {
    let g = guard(&args.lock)?;
    let repo = &g.repo;
    let Some(s) = session::read(repo).map_err(git_err)? else {
        return Err(CliError::new("not stepped back: there is nothing to step forward to")
            .hint("`git clada step-back [N]` steps back first; `git clada status` shows where you are"));
    };
    let head = repo.head().map_err(git_err)?;
    match &head {
        Head::Detached(at) => {
            let at = *at;
            let pos = session::position(repo, &s, at).map_err(git_err)?;
            if pos.is_none() && !args.all {
                return Err(off_the_line(&s, at));
            }
            let tree = require_clean_here(repo, at, "step-forward")?;
            let steps = match (pos, args.all) {
                // Off the line but clean: --all may return, as long as
                // HEAD's commit stays reachable from some branch or tag.
                (None, _) => {
                    if !reachable_elsewhere(repo, at)? {
                        return Err(off_the_line(&s, at));
                    }
                    usize::MAX
                }
                (Some(pos), true) => pos,
                (Some(pos), false) => (args.count.unwrap_or(1) as usize).min(pos),
            };
            let pos = pos.unwrap_or(usize::MAX);
            if steps >= pos {
                return finish(&g, &s, &head, tree);
            }
            let target = session::commit_at(repo, &s, pos - steps).map_err(git_err)?;
            step_detached(
                &g,
                &s,
                (at, tree),
                target,
                Step {
                    command: "step-forward",
                    done: format!("stepped forward {steps}"),
                    below_tip: pos - steps,
                    hint: "`git clada step-forward --all` returns to the tip and restores your work",
                },
            )
        }
        Head::Branch { name, commit } => {
            let Some(commit) = *commit else {
                return Err(CliError::new(format!(
                    "HEAD is on {}, which has no commits; the step-back session on {} is still open",
                    short_branch(name),
                    short_branch(&s.branch)
                ))
                .hint(format!("`git switch {}` first", short_branch(&s.branch))));
            };
            let back_home = *name == s.branch && commit == s.tip;
            if !back_home && !args.all {
                return Err(CliError::new(format!(
                    "HEAD is on {}, not stepped back along {}",
                    short_branch(name),
                    short_branch(&s.branch)
                ))
                .hint(format!(
                    "`git clada step-forward --all` returns to {} and restores the work saved at {}",
                    short_branch(&s.branch),
                    s.ref_name
                )));
            }
            if back_home {
                let tree = repo.tree_of(Some(commit)).map_err(git_err)?;
                let state = repo.work_state(tree).map_err(git_err)?;
                if state.disk == s.disk && state.index == s.index {
                    repo.delete_ref(&g.author, &s.ref_name, s.record)
                        .or_else(|e| lost_race(e, "step-forward").map(|_| ()))?;
                    write_stdout(|w| {
                        writeln!(
                            w,
                            "clada: your saved work is already back on {}; the step-back session is closed",
                            short_branch(&s.branch)
                        )
                    })?;
                    return Ok(Outcome::Success);
                }
            }
            let tree = require_clean_here(repo, commit, "step-forward")?;
            finish(&g, &s, &head, tree)
        }
    }
}

/// Whether `id` is reachable from a local branch or a tag (so moving HEAD
/// away from it strands nothing).
fn reachable_elsewhere(repo: &Repository, id: ObjectId) -> Result<bool, CliError> {
    for prefix in ["refs/heads/", "refs/tags/"] {
        for name in repo.refs_under(prefix).map_err(git_err)? {
            if let Some(tip) = repo.ref_target(&name).map_err(git_err)?
                && repo.is_ancestor(id, tip).unwrap_or(false)
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Returns to the session's tip from the clean state `from_tree` (HEAD at
/// `head`): attaches HEAD to the branch, restores the saved work, closes
/// the session.
fn finish(g: &Guarded, s: &Session, head: &Head, from_tree: ObjectId) -> Result<Outcome, CliError> {
    let repo = &g.repo;
    let branch = short_branch(&s.branch).to_string();
    let now = repo.ref_target(&s.branch).map_err(git_err)?;
    if now != Some(s.tip) {
        let now_text = now.map_or("deleted".to_string(), |id| format!("now at {}", short(id)));
        return Err(CliError::new(format!(
            "{branch} moved while you were stepped back (it was at {}, it is {now_text}); your saved work was taken on the old tip, so nothing was changed",
            short(s.tip)
        ))
        .hint(format!(
            "your work is safe at {r}. To continue on the new tip: `git switch {branch}`, bring the work back with `git cherry-pick -m 1 --no-commit {r}` (or `git checkout {r} -- .`), then end the session with `git update-ref -d {r}`",
            r = s.ref_name
        )));
    }
    let new = Head::Branch {
        name: s.branch.clone(),
        commit: Some(s.tip),
    };
    let Some(report) = travel(
        g,
        head,
        &new,
        (from_tree, s.disk),
        (from_tree, s.index),
        "step-forward",
        &format!("clada: step-forward to the tip of {branch}"),
    )?
    else {
        return Ok(Outcome::BranchMoved);
    };
    crate::fault::point("step-restored");
    let closed = report.kept.is_empty();
    if closed {
        repo.delete_ref(&g.author, &s.ref_name, s.record)
            .or_else(|e| lost_race(e, "step-forward").map(|_| ()))?;
    }
    let restored = repo
        .tree_moves(repo.tree_of(Some(s.tip)).map_err(git_err)?, s.disk)
        .map_err(git_err)?
        .len();
    write_stdout(|w| {
        writeln!(w, "clada: back at the tip of {branch} ({})", short(s.tip))?;
        if restored > 0 {
            writeln!(
                w,
                "clada: your uncommitted work is restored ({})",
                crate::words::count(restored, "path", "paths")
            )?;
        }
        print_kept(w, &report)?;
        if !closed {
            writeln!(
                w,
                "hint: some files were kept as they were; the saved work stays at {} (git show {})",
                s.ref_name, s.ref_name
            )?;
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}
