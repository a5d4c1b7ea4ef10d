//! The end of an apply: the post commit, the reply as a note, the branch
//! moved by compare-and-swap, the working tree brought along (git.md §1,
//! steps 7–9), and the recovery of an update a crash cut short.

use crate::csl::OpKind;
use crate::fault;
use crate::git::commit::UpdateError;
use crate::git::snapshot::Snapshot;
use crate::git::tree::Changed;
use crate::git::worktree::{Plan as WorktreePlan, WorktreeUpdate};
use crate::git::{ObjectId, Repository};
use crate::report::text::task_lines_without_output;
use crate::report::{Status, Tally, TaskReport};

use super::verify::Verified;
use super::{Applied, Ending, Error, Settings, Target, Timings};

/// Notes ref the reply of each apply is stored in.
use super::REPLY_NOTES;

/// A worktree update a crash cut short is finished before anything else.
/// Returns what to tell the user.
pub fn finish_interrupted_update(repo: &Repository, branch: &str) -> Result<Vec<String>, Error> {
    let Some(pending) = repo.pending_update()? else {
        return Ok(Vec::new());
    };
    let mut said = Vec::new();
    // A killed update leaves its temporary files beside the files it was
    // writing: never the user's, so they go.
    let paths = pending.changed.iter().map(|c| c.path.as_str());
    for path in repo.remove_stale_temp_files(paths) {
        said.push(format!(
            "removed {path}, a temporary file of an interrupted apply"
        ));
    }
    if repo.ref_target(branch)? == Some(pending.commit) {
        let done = match repo.update_worktree(&pending) {
            Ok(done) => done,
            Err(e) => {
                // Never wedge every later apply on an update that cannot
                // be finished: say so, forget it, go on.
                said.push(format!(
                    "could not finish updating the working tree after an interrupted apply ({e}); `git status` shows where it differs from {}",
                    repo.short(pending.commit)
                ));
                repo.drop_pending_update()?;
                return Ok(said);
            }
        };
        said.push(format!(
            "finished updating the working tree after an interrupted apply ({} file(s) written)",
            done.written.len()
        ));
        for (path, why) in &done.kept {
            said.push(format!("kept {path}: {why}"));
        }
    } else {
        repo.drop_pending_update()?;
    }
    Ok(said)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn commit_and_advance(
    repo: &Repository,
    settings: &Settings,
    reply: &[u8],
    reports: &[TaskReport],
    tally: Tally,
    target: &Target<'_>,
    pre: Option<ObjectId>,
    post_tree: ObjectId,
    snapshot: &Snapshot,
    changed: Vec<Changed>,
    verified: Option<&Verified>,
    timings: &mut Timings,
) -> Result<Applied, Error> {
    let (branch, base) = (target.branch, target.base);
    let reply_blob = repo.write_blob(reply)?;
    let mut message = post_message(reports, tally, reply_blob);
    if let Some(request) = target.request {
        message.push_str(&format!("Clada-Request-Ref: {request}\n"));
    }
    if let Some(pusher) = target.pusher {
        message.push_str(&format!("Clada-Pusher: {pusher}\n"));
    }
    let post = repo.commit(
        &settings.author,
        &message,
        post_tree,
        &pre.into_iter().collect::<Vec<_>>(),
    )?;
    fault::point("post-committed");
    timings.mark("post commit");
    // Every reference below is written under it.
    let _shared = target.shared.map(|take| take()).transpose()?;
    let refused = match verified {
        // The counts are the reply's tasks on the result, not what was
        // applied: said as such, they cannot read as a contradiction.
        Some(v) if !v.passed => Some(format!("{}; the reply's tasks ran ({tally})", v.message)),
        _ if settings.atomic && !tally.all_succeeded() => {
            Some("a task failed and --atomic is set".to_string())
        }
        _ => None,
    };
    if let Some(why) = refused {
        let name = next_rejected(repo)?;
        repo.create_ref(&settings.author, &name, post, "clada: rejected apply")?;
        let mut o = Applied::new(
            Ending::Rejected,
            format!(
                "not applied: {why}; the branch was not moved. The result is kept at {name} (inspect it with: git clada show {name})"
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
        repo.record_update(&plan)?;
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
        repo.drop_pending_update()?;
    }
    match moved {
        Ok(()) => {}
        Err(UpdateError::Moved { .. }) => {
            let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
            let mut o = Applied::new(
                Ending::BranchMoved,
                format!(
                    "branch_moved: {short} moved while applying; nothing was changed. Apply the reply again"
                ),
            );
            o.post = Some(post);
            return Ok(o);
        }
        Err(UpdateError::Git(e)) => return Err(e.into()),
    }
    fault::point("branch-moved");
    timings.mark("journal, branch");
    // The note is written only once the commit is on the branch, so a
    // moved branch leaves no note on an unreachable commit.
    // A note that cannot be written loses the reply's copy, not the
    // apply: the commit holds the reply's blob id too (Clada-Reply).
    let note_failed = repo
        .set_note(&settings.author, REPLY_NOTES, post, reply)
        .err()
        .map(|e| format!("the reply was not stored as a note on the post commit: {e}"));
    fault::point("noted");
    timings.mark("note");
    // The branch has moved: from here on a failure is reported, never a
    // reason to stop without a report. The journal stays, so the next
    // apply tries to finish the update.
    //
    // A user who switched branches meanwhile has another branch checked
    // out: writing the reply's files there would stage them on it.
    let mut warnings = Vec::new();
    let head = target.worktree.then(|| repo.head());
    let switched = matches!(&head, Some(Ok(h)) if !matches!(h, crate::git::Head::Branch { name, .. } if name == branch));
    // HEAD unreadable: nothing is written now, and the journal stays for
    // the next apply to finish (its snapshot would otherwise revert this).
    let unknown = matches!(&head, Some(Err(_)));
    if switched && let Err(e) = repo.drop_pending_update() {
        warnings.push(format!(
            "the record of this update could not be removed: {e}"
        ));
    }
    let kept_all = |why: &dyn Fn() -> String| WorktreeUpdate {
        written: Vec::new(),
        failed: Vec::new(),
        kept: plan
            .changed
            .iter()
            .map(|c| (c.path.clone(), why()))
            .collect(),
    };
    let worktree = if !target.worktree {
        WorktreeUpdate::default()
    } else if unknown {
        kept_all(&|| {
            "HEAD could not be read, so your working tree was left as it is for now; the next clada command finishes the update, and the applied version is in the commit".to_string()
        })
    } else if switched {
        kept_all(&|| {
            format!(
                "HEAD no longer names {} (the branch was switched during the apply), so your working tree was left as it is; the applied version is on {}",
                short(branch),
                short(branch)
            )
        })
    } else {
        match repo.update_worktree(&plan) {
            Ok(done) => done,
            Err(e) => kept_all(&|| {
                format!(
                    "the working tree was not updated ({e}); the next apply finishes it, and the applied version is in the commit"
                )
            }),
        }
    };
    let ending = Ending::by_tally(tally, true);
    let applied = if ending == Ending::Partial {
        "partly applied"
    } else {
        "applied"
    };
    let mut o = Applied::new(ending, format!("{applied} ({tally})"));
    o.post = Some(post);
    o.worktree = worktree;
    o.warnings.extend(note_failed);
    o.warnings.extend(warnings);
    Ok(o)
}

fn short(branch: &str) -> &str {
    branch.strip_prefix("refs/heads/").unwrap_or(branch)
}

/// `refs/clada/rejected/<n>`, one past the highest in use.
fn next_rejected(repo: &Repository) -> Result<String, Error> {
    const PREFIX: &str = "refs/clada/rejected/";
    let n = repo
        .refs_under(PREFIX)?
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
            let verb = match t.op {
                OpKind::Run => "run",
                OpKind::Delete => "delete",
                OpKind::Move => "move",
                OpKind::Insert | OpKind::Edit => "edit",
                OpKind::Mode => "set the mode of",
                // Neither changes a file git keeps.
                OpKind::Read | OpKind::Mkdir => return,
                _ if t.message.starts_with("created") => "create",
                _ if t.message.starts_with("replaced") => "edit",
                _ if t.message.starts_with("appended") => "append to",
                _ => "write",
            };
            done.push(format!("{verb} {}", crate::quote::visible(target)));
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
            summary.push_str(&format!(
                " and {}",
                crate::words::count(done.len() - i, "more change", "more changes")
            ));
            break;
        }
        summary = next;
    }
    if summary.is_empty() {
        summary = "apply reply".to_string();
    }
    let body: String = reports.iter().map(task_lines_without_output).collect();
    format!(
        "[clada:post] {summary}\n\n{body}\nClada-Reply: {reply_blob}\nClada-Tasks: {}\n",
        tally.counts()
    )
}
