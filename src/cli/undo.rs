//! `git clada undo [N]` and `git clada redo` (git.md §2).
//!
//! Undo is the exact inverse of an apply: the branch goes back to the
//! commit the apply started from, and the working tree to the user's state
//! before it (the pre snapshot's files, uncommitted again, untracked files
//! untracked again), and the index as it was (the apply recorded it when
//! anything was staged). What the user changed since, on paths undo does
//! not restore, is left alone. Redo is the inverse of undo. Order of each, for crash safety: keep the commits on
//! the undo stack, record the switch journal, move the branch (compare and
//! swap), switch the working tree, drop the journal.

use std::collections::BTreeSet;

use crate::git::ObjectId;
use crate::history::commits::{Kind, Unit, unit_at};
use crate::history::undo_stack::{self, PREFIX};

use super::guard::{
    LockArgs, git_err, guard, list_paths, lost_race, on_branch, refuse_conflicts,
    refuse_open_session, refuse_published, short_branch,
};
use super::{CliError, Outcome, write_stdout};
use crate::git::Head;

/// Undo the newest apply, restoring your uncommitted work
///
/// The branch goes back to the commit the apply started from, and your
/// working tree to its state just before the apply: changes you had not
/// committed come back as uncommitted changes, untracked files as untracked
/// files, staged changes as staged changes. Files you changed or created
/// since the apply that undo does not restore are left as they are. The
/// undone commits are kept under refs/clada/undo/ so that `git clada redo`
/// can restore them. Refused when the tip is not an apply, when you changed
/// since a file undo must restore, or when the commits are already on a
/// remote-tracking branch (unless --force).
#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// How many applies to undo, newest first
    #[arg(value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub count: u32,

    /// Undo even if the commits are already on a remote-tracking branch
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub lock: LockArgs,
}

/// Redo the last undone apply
///
/// Works while the branch is where `git clada undo` left it; your
/// working tree may hold what undo restored or nothing uncommitted at all.
#[derive(Debug, clap::Args)]
pub struct RedoArgs {
    #[command(flatten)]
    pub lock: LockArgs,
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// The `N` newest applies at the tip of `branch`, or why they cannot all
/// be undone in one step.
fn applies_to_undo(
    repo: &crate::git::Repository,
    branch: &str,
    tip: ObjectId,
    count: u32,
) -> Result<Vec<Unit>, CliError> {
    let short_name = short_branch(branch);
    // Asking for more applies than the tip has is the problem to name
    // first: a pre snapshot among them matters only when there are enough.
    let mut available = 0;
    let mut at = Some(tip);
    while let Some(id) = at
        && available < count as usize
    {
        match unit_at(repo, id).map_err(git_err)? {
            Some(u) if u.kind() == Kind::Post => {
                available += 1;
                at = u.base;
            }
            _ => break,
        }
    }
    let enough = available >= count as usize;
    let mut units: Vec<Unit> = Vec::new();
    let mut at = Some(tip);
    for i in 0..count as usize {
        let Some(id) = at else {
            return Err(CliError::new(format!(
                "{short_name} has only {} before its first commit; nothing was changed",
                crate::words::count(i, "apply", "applies")
            ))
            .hint(format!("undo fewer: git clada undo {i}")));
        };
        let unit = unit_at(repo, id).map_err(git_err)?;
        let info = repo.commit_info(id).map_err(git_err)?;
        match unit {
            Some(u) if u.kind() == Kind::Post => {
                if enough && i + 1 < count as usize && u.pre.is_some() {
                    return Err(CliError::new(format!(
                        "cannot undo {count} applies in one step: apply {} \"{}\" was made on uncommitted changes of yours (pre snapshot {}); undoing past it would take them out of your working tree. Nothing was changed",
                        short(id),
                        u.summary(),
                        short(u.pre.as_ref().map_or(id, |p| p.id))
                    ))
                    .hint(format!(
                        "undo {} first (git clada undo {}), then commit or stash (git stash -u) the changes it gives back, and undo again",
                        i + 1,
                        i + 1
                    )));
                }
                at = u.base;
                units.push(u);
            }
            Some(u) if u.kind() == Kind::Squash => {
                return Err(CliError::new(format!(
                    "{} \"{}\" is a squash of clada applies, not one apply; nothing was changed",
                    short(id),
                    u.summary()
                ))
                .hint(format!(
                    "the commits before the squash are kept under refs/clada/squashed/ (git clada log refs/clada/squashed/<n>); to drop the squash use git reset{}",
                    if i > 0 { format!(", or undo fewer: git clada undo {i}") } else { String::new() }
                )));
            }
            _ => {
                let subject = info.message.lines().next().unwrap_or_default().to_string();
                let e = if i == 0 {
                    CliError::new(format!(
                        "the tip of {short_name} ({} \"{subject}\") is not a clada apply; nothing was changed",
                        short(id)
                    ))
                    .hint("undo only reverses `git clada apply`; for other commits use git revert or git reset")
                } else {
                    CliError::new(format!(
                        "only {} at the tip of {short_name}: {} \"{subject}\" below {} is not a clada apply; nothing was changed",
                        crate::words::count(i, "apply", "applies"),
                        short(id),
                        if i == 1 { "it" } else { "them" }
                    ))
                    .hint(format!("undo fewer: git clada undo {i}"))
                };
                return Err(e);
            }
        }
    }
    Ok(units)
}

pub fn run_undo(args: UndoArgs) -> Result<Outcome, CliError> {
    let g = guard(&args.lock)?;
    let repo = &g.repo;
    let (branch, tip) = on_branch(repo, "undo")?;
    refuse_open_session(repo, "undo")?;
    let short_name = short_branch(&branch).to_string();
    let Some(tip) = tip else {
        return Err(CliError::new(format!(
            "nothing to undo: {short_name} has no commits yet"
        )));
    };
    let units = applies_to_undo(repo, &branch, tip, args.count)?;
    let oldest = units.last().expect("count is at least 1");

    let tip_tree = repo.tree_of(Some(tip)).map_err(git_err)?;
    let state = repo.work_state(tip_tree).map_err(git_err)?;
    if !state.unmerged.is_empty() {
        return Err(CliError::new(format!(
            "the index has unresolved conflicts ({}); nothing was changed",
            list_paths(&state.unmerged, 10)
        ))
        .hint("resolve them (git status says how), then undo"));
    }
    refuse_published(
        repo,
        oldest.oldest(),
        args.force,
        (
            "the apply is",
            "undoing it",
            "use git revert to undo it with a new commit, or pass --force if you will force-push",
        ),
    )?;

    let target = oldest.base;
    let disk_to = oldest.before_tree(repo).map_err(git_err)?;
    let index_to = oldest.index_tree(repo).map_err(git_err)?;
    let switch = repo
        .plan_switch((tip_tree, disk_to), (tip_tree, index_to))
        .map_err(git_err)?;
    // What the user changed since the apply is in the way only where undo
    // must restore something (git.md §2): anywhere else — an untracked
    // file made since, an edit of a file neither the apply nor the user's
    // earlier work touched — it is left as it is, staged or not. A file
    // or directory in the way of a restored path is the conflict check's.
    let restores: BTreeSet<&str> = switch
        .disk
        .iter()
        .chain(&switch.index)
        .map(|m| m.path.as_str())
        .collect();
    let in_the_way: Vec<String> = state
        .changed
        .iter()
        .filter(|p| restores.contains(p.as_str()))
        .cloned()
        .collect();
    if !in_the_way.is_empty() {
        return Err(CliError::new(format!(
            "you changed files since the apply that undo must restore ({}); undo would take those changes away, so nothing was changed",
            list_paths(&in_the_way, 10)
        ))
        .hint("commit them (then the tip is your commit and there is no apply to undo), or put them aside with `git stash -u`, run `git clada undo`, then `git stash pop`"));
    }
    let conflicts = repo.switch_conflicts(&switch).map_err(git_err)?;
    if !conflicts.is_empty() {
        return Err(refuse_conflicts(&conflicts, "undo"));
    }

    // The undone commits are kept before the branch moves. The newest
    // apply gets the lowest number: redo takes the oldest first.
    let mut kept = Vec::new();
    for u in &units {
        let name = repo
            .create_numbered_ref(
                &g.author,
                PREFIX,
                u.top.id,
                &format!("clada: undo {}", u.summary()),
            )
            .map_err(git_err)?;
        kept.push(name);
    }
    crate::fault::point("undo-kept");
    let new_head = Head::Branch {
        name: branch.clone(),
        commit: target,
    };
    repo.record_switch(&new_head, &switch).map_err(git_err)?;
    let summary = units[0].summary().to_string();
    let moved = match target {
        Some(base) => repo.advance_branch(
            &g.author,
            &branch,
            Some(tip),
            base,
            &format!("clada: undo {summary}"),
        ),
        None => repo.unset_branch(&g.author, &branch, tip),
    };
    if let Err(e) = moved {
        repo.clear_switch().map_err(git_err)?;
        return lost_race(e, "undo");
    }
    crate::fault::point("undo-moved");
    let report = repo.run_switch(&switch).map_err(|e| {
        CliError::new(format!(
            "the branch was moved back but the working tree could not be updated: {e}"
        ))
        .hint("run any clada command (git clada status shows where you are) to finish it")
    })?;
    repo.clear_switch().map_err(git_err)?;

    let restored = repo
        .tree_moves(repo.tree_of(target).map_err(git_err)?, disk_to)
        .map_err(git_err)?
        .len();
    write_stdout(|w| {
        for u in &units {
            writeln!(
                w,
                "clada: undid apply {} \"{}\"",
                short(u.top.id),
                u.summary()
            )?;
        }
        let at = target.map_or("no commit (unborn, as before the apply)".to_string(), short);
        writeln!(w, "clada: {short_name} is back at {at}")?;
        if restored > 0 {
            writeln!(
                w,
                "clada: your uncommitted work from before the apply is back in the working tree ({}, not committed)",
                crate::words::count(restored, "path", "paths")
            )?;
        }
        for (path, why) in &report.kept {
            writeln!(w, "clada: kept {path}: {why}")?;
        }
        writeln!(
            w,
            "hint: `git clada redo` restores it; the undone commits are kept at {}",
            kept.join(", ")
        )
    })?;
    Ok(Outcome::Success)
}

pub fn run_redo(args: RedoArgs) -> Result<Outcome, CliError> {
    let g = guard(&args.lock)?;
    let repo = &g.repo;
    let (branch, tip) = on_branch(repo, "redo")?;
    refuse_open_session(repo, "redo")?;
    let short_name = short_branch(&branch).to_string();
    let chain = undo_stack::redo_chain(repo, tip).map_err(git_err)?;
    let Some(entry) = chain.first() else {
        let any = undo_stack::entries(repo).map_err(git_err)?;
        let e = CliError::new(format!("nothing to redo on {short_name}"));
        return Err(match any.first() {
            None => e.hint("redo restores what `git clada undo` took back; nothing was undone"),
            Some(newest) => e.hint(format!(
                "{short_name} moved since the last undo (a new apply or commit), so no undone apply fits on it; the undone applies are kept under {PREFIX}, and one can be applied again with: git clada show --reply {} | git clada apply",
                newest.name
            )),
        });
    };
    let unit = &entry.unit;
    let post = unit.top.id;
    let base_tree = repo.tree_of(tip).map_err(git_err)?;
    let before = unit.before_tree(repo).map_err(git_err)?;
    let state = repo.work_state(base_tree).map_err(git_err)?;
    let staged = unit.index_tree(repo).map_err(git_err)?;
    let fits = |t: ObjectId| t == before || t == base_tree;
    if !state.unmerged.is_empty()
        || !fits(state.disk)
        || !(fits(state.index) || state.index == staged)
    {
        return Err(CliError::new(format!(
            "you changed files since the undo ({}); redo would overwrite them, so nothing was changed",
            list_paths(&state.changed, 10)
        ))
        .hint("put them aside with `git stash -u`, run `git clada redo`, then `git stash pop`; or commit them (then there is nothing to redo)"));
    }
    let switch = repo
        .plan_switch((state.disk, unit.top.tree), (state.index, unit.top.tree))
        .map_err(git_err)?;
    let conflicts = repo.switch_conflicts(&switch).map_err(git_err)?;
    if !conflicts.is_empty() {
        return Err(refuse_conflicts(&conflicts, "redo"));
    }
    let new_head = Head::Branch {
        name: branch.clone(),
        commit: Some(post),
    };
    repo.record_switch(&new_head, &switch).map_err(git_err)?;
    if let Err(e) = repo.advance_branch(
        &g.author,
        &branch,
        tip,
        post,
        &format!("clada: redo {}", unit.summary()),
    ) {
        repo.clear_switch().map_err(git_err)?;
        return lost_race(e, "redo");
    }
    crate::fault::point("redo-moved");
    let report = repo.run_switch(&switch).map_err(|e| {
        CliError::new(format!(
            "the branch was moved forward but the working tree could not be updated: {e}"
        ))
        .hint("run any clada command (git clada status shows where you are) to finish it")
    })?;
    repo.clear_switch().map_err(git_err)?;
    // The commits are on the branch again: the entry has done its job.
    if let Err(e) = repo.delete_ref(&g.author, &entry.name, post) {
        eprintln!(
            "clada: could not remove {} ({e}); it is harmless",
            entry.name
        );
    }
    write_stdout(|w| {
        writeln!(
            w,
            "clada: redid apply {} \"{}\"; {short_name} is at {}",
            short(post),
            unit.summary(),
            short(post)
        )?;
        for (path, why) in &report.kept {
            writeln!(w, "clada: kept {path}: {why}")?;
        }
        let more = chain.len() - 1;
        if more > 0 {
            writeln!(
                w,
                "hint: {} more undone {} can be redone (git clada redo); `git clada undo` takes this one back",
                more,
                if more == 1 { "apply" } else { "applies" }
            )
        } else {
            writeln!(w, "hint: `git clada undo` takes it back again")
        }
    })?;
    Ok(Outcome::Success)
}
