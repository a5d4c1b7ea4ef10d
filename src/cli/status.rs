//! `git clada status`: where the user is, and what they can do next.
//!
//! Read-only: it takes no lock (a long apply must not make it wait),
//! writes no object and finishes nothing; it says when another clada
//! command holds the lock or an interrupted update waits to be finished.

use serde::Serialize;

use crate::git::lock::Holder;

use crate::git::{Head, ObjectId, Repository};
use crate::history::commits::{Kind, last_apply, trailer, units_from};
use crate::history::{session, undo_stack};
use crate::report::Tally;

use super::apply::Format;
use super::guard::{git_err, list_paths, open, short_branch};
use super::{CliError, Outcome, write_stdout};

/// Show where you are: branch or step-back, last apply, undo and redo
///
/// Says whether you are stepped back (and where your saved work is), the
/// newest apply on the branch and its result, how many applies can be
/// undone and redone, your uncommitted changes, and results of rejected
/// applies. Each line names the command that acts on it.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Output format [default: text]
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

#[derive(Serialize)]
struct Report {
    /// The branch HEAD is on (short name), if any.
    branch: Option<String>,
    /// HEAD's commit, if any.
    head: Option<String>,
    detached: bool,
    stepped_back: Option<Stepped>,
    last_apply: Option<ApplyView>,
    /// How many applies `git clada undo N` can take back at most.
    undoable: usize,
    /// How many undone applies `git clada redo` can restore in a row.
    redoable: usize,
    /// Paths with uncommitted changes (untracked files included).
    uncommitted: Vec<String>,
    /// `refs/clada/rejected/<n>` results of applies that did not move the branch.
    rejected: Vec<String>,
    /// clada's lock, when a lock file is there.
    lock: Option<LockView>,
    /// An update of the working tree cut short, finished by the next command.
    interrupted_update: bool,
}

/// Who holds clada's lock.
#[derive(Serialize)]
struct LockView {
    /// The holder's process id (`None`: not written yet, or unreadable).
    pid: Option<u32>,
    /// The holder is gone (killed); the next command breaks the lock.
    stale: bool,
}

#[derive(Serialize)]
struct Stepped {
    branch: String,
    tip: String,
    /// Commits below the tip; `None` when HEAD left that line.
    steps: Option<usize>,
    saved_ref: String,
    saved_paths: usize,
}

#[derive(Serialize)]
struct ApplyView {
    /// `apply`, or `squash` (of applies, which it replaced).
    kind: &'static str,
    commit: String,
    summary: String,
    /// The `Clada-Tasks` trailer's counts (`None`: the commit has none).
    tasks: Option<Tally>,
    pre: Option<String>,
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// How many applies from `tip` one `git clada undo N` accepts.
pub(super) fn undoable(repo: &Repository, tip: ObjectId) -> Result<usize, CliError> {
    let mut n = 0;
    for unit in units_from(repo, tip, 1000).map_err(git_err)? {
        if unit.kind() != Kind::Post {
            break;
        }
        n += 1;
        if unit.pre.is_some() {
            break;
        }
    }
    Ok(n)
}

fn gather(repo: &Repository) -> Result<Report, CliError> {
    let head = repo.head().map_err(git_err)?;
    let session = session::read(repo).map_err(git_err)?;
    let (branch, head_commit) = match &head {
        Head::Branch { name, commit } => (Some(short_branch(name).to_string()), *commit),
        Head::Detached(id) => (None, Some(*id)),
    };
    let stepped_back = match &session {
        None => None,
        Some(s) => {
            let steps = match head_commit {
                Some(at) => session::position(repo, s, at).map_err(git_err)?,
                None => None,
            };
            let tip_tree = repo.tree_of(Some(s.tip)).map_err(git_err)?;
            Some(Stepped {
                branch: short_branch(&s.branch).to_string(),
                tip: s.tip.to_string(),
                steps,
                saved_ref: s.ref_name.clone(),
                saved_paths: repo
                    .tree_moves(tip_tree, s.disk)
                    .map_err(git_err)?
                    .len()
                    .max(repo.tree_moves(tip_tree, s.index).map_err(git_err)?.len()),
            })
        }
    };
    // The branch's history, even when stepped back.
    let tip = match (&session, &head) {
        (Some(s), Head::Detached(_)) => Some(s.tip),
        _ => head_commit,
    };
    let last = match tip {
        Some(t) => last_apply(repo, t, 1000).map_err(git_err)?,
        None => None,
    };
    let on_branch = matches!(head, Head::Branch { .. });
    let undoable = match (on_branch, head_commit) {
        (true, Some(t)) => undoable(repo, t)?,
        _ => 0,
    };
    let redoable = if on_branch {
        undo_stack::redo_chain(repo, head_commit)
            .map_err(git_err)?
            .len()
    } else {
        0
    };
    let head_tree = repo.tree_of(head_commit).map_err(git_err)?;
    let (changed, unmerged) = repo.changed_paths(head_tree).map_err(git_err)?;
    let lock = crate::git::lock::holder(repo.git_dir()).map(|h| {
        let (pid, stale) = match h {
            Holder::Running(pid) => (pid, false),
            Holder::Gone(pid) => (pid, true),
        };
        LockView {
            pid: pid.parse().ok(),
            stale,
        }
    });
    let interrupted_update = ["clada-switch", "clada-worktree-update"]
        .iter()
        .any(|f| repo.git_dir().join(f).exists());
    Ok(Report {
        branch,
        head: head_commit.map(|id| id.to_string()),
        detached: !on_branch,
        stepped_back,
        last_apply: last.map(|u| ApplyView {
            kind: if u.kind() == Kind::Squash {
                "squash"
            } else {
                "apply"
            },
            commit: u.top.id.to_string(),
            summary: u.summary().to_string(),
            tasks: trailer(&u.top.message, "Clada-Tasks").and_then(Tally::parse),
            pre: u.pre.as_ref().map(|p| p.id.to_string()),
        }),
        undoable,
        redoable,
        uncommitted: if unmerged.is_empty() {
            changed
        } else {
            unmerged
        },
        rejected: repo.refs_under("refs/clada/rejected/").map_err(git_err)?,
        lock,
        interrupted_update,
    })
}

pub fn run_status(args: StatusArgs) -> Result<Outcome, CliError> {
    let repo = open()?;
    let r = gather(&repo)?;
    if args.format == Some(Format::Json) {
        write_stdout(|w| {
            serde_json::to_writer_pretty(&mut *w, &r).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        })?;
        return Ok(Outcome::Success);
    }
    let lines = text_lines(&repo, &r)?;
    write_stdout(|w| {
        for l in &lines {
            writeln!(w, "{l}")?;
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}

/// The status as its JSON document and as text, from one look at the
/// repository (the MCP server's `status` tool gives both).
pub(crate) fn status_both() -> Result<(serde_json::Value, String), CliError> {
    let repo = open()?;
    let r = gather(&repo)?;
    let document = serde_json::to_value(&r)
        .map_err(|e| CliError::new(format!("cannot write the status: {e}")))?;
    let mut text = String::new();
    for l in text_lines(&repo, &r)? {
        text.push_str(&l);
        text.push('\n');
    }
    Ok((document, text))
}

/// The text status of `r`, line by line.
fn text_lines(repo: &Repository, r: &Report) -> Result<Vec<String>, CliError> {
    let subject = |id: &str| -> Result<String, CliError> {
        let id = ObjectId::from_hex(id.as_bytes()).map_err(|e| CliError::new(e.to_string()))?;
        let info = repo.commit_info(id).map_err(git_err)?;
        Ok(format!(
            "{} \"{}\"",
            short(id),
            info.message.lines().next().unwrap_or_default()
        ))
    };
    let mut lines = Vec::new();
    match (&r.branch, &r.head, &r.stepped_back) {
        (_, Some(head), Some(s)) if r.detached => {
            let where_ = match s.steps {
                Some(n) => format!(
                    "stepped back {} from {}",
                    crate::words::count(n, "commit", "commits"),
                    s.branch
                ),
                None => format!(
                    "stepped back from {}, but HEAD has left its first-parent line",
                    s.branch
                ),
            };
            lines.push(format!(
                "{where_} (tip {}): HEAD is at {} (detached)",
                &s.tip[..7],
                subject(head)?
            ));
            lines.push(format!(
                "your work from before stepping back is saved at {} ({}); it comes back at the tip",
                s.saved_ref,
                crate::words::count(s.saved_paths, "path", "paths")
            ));
            lines.push("hint: `git clada step-forward [N]` moves toward the tip; `git clada step-forward --all` returns to it".to_string());
        }
        (Some(b), head, s) => {
            lines.push(match head {
                Some(h) => format!("on branch {b} at {}", subject(h)?),
                None => format!("on branch {b}, no commits yet"),
            });
            if let Some(s) = s {
                lines.push(format!(
                    "a step-back session on {} is still open: your saved work is at {}; `git clada step-forward --all` restores it",
                    s.branch, s.saved_ref
                ));
            }
        }
        (None, Some(head), None) => {
            lines.push(format!("HEAD is detached at {}", subject(head)?));
        }
        _ => {}
    }
    match &r.last_apply {
        None => lines.push("no apply on this branch (in the last 1000 commits)".to_string()),
        Some(a) if a.kind == "squash" => lines.push(format!(
            "last apply: a squash of applies, {} \"{}\"; what it replaced: git clada show {}",
            &a.commit[..7],
            a.summary,
            &a.commit[..7]
        )),
        Some(a) => {
            let pre = a.pre.as_ref().map_or(String::new(), |p| {
                format!(", made on a pre snapshot {} of your work", &p[..7])
            });
            lines.push(format!(
                "last apply: {} \"{}\" ({}){pre}; its reply: git clada show {}",
                &a.commit[..7],
                a.summary,
                a.tasks
                    .map_or_else(|| "no task count".to_string(), |t| t.to_string()),
                &a.commit[..7]
            ));
        }
    }
    if !r.detached {
        let tip_is_squash = r
            .last_apply
            .as_ref()
            .is_some_and(|a| a.kind == "squash" && r.head.as_deref() == Some(a.commit.as_str()));
        lines.push(if tip_is_squash {
            "undo: the tip is a squash, which undo does not take back (the commits it replaced are kept under refs/clada/squashed/)".to_string()
        } else if r.undoable == 0 {
            "undo: the tip is not an apply; nothing to undo".to_string()
        } else if !r.uncommitted.is_empty() {
            // undo refuses while anything is uncommitted (it would take
            // the changes away): say so here rather than promise it.
            format!(
                "undo: {} at the tip, but not while you have uncommitted changes: commit them, or `git stash -u` them, first",
                crate::words::count(r.undoable, "apply", "applies")
            )
        } else {
            format!(
                "undo: {} at the tip can be undone (git clada undo [N])",
                crate::words::count(r.undoable, "apply", "applies")
            )
        });
        if r.redoable > 0 {
            lines.push(format!(
                "redo: {} can be redone (git clada redo)",
                crate::words::count(r.redoable, "undone apply", "undone applies")
            ));
        }
    }
    if r.uncommitted.is_empty() {
        lines.push("working tree: clean".to_string());
    } else {
        lines.push(format!(
            "working tree: {}: {}",
            crate::words::count(r.uncommitted.len(), "uncommitted path", "uncommitted paths"),
            list_paths(&r.uncommitted, 10)
        ));
    }
    if !r.rejected.is_empty() {
        lines.push(format!(
            "rejected results: {} (inspect with git clada show <ref>)",
            list_paths(&r.rejected, 5)
        ));
    }
    if let Some(lock) = &r.lock {
        let pid = lock.pid.map_or_else(|| "?".to_string(), |p| p.to_string());
        lines.push(if lock.stale {
            format!(
                "a lock was left by a clada command that is gone (pid {pid}, killed); the next clada command clears it"
            )
        } else {
            format!(
                "another clada command holds the lock (pid {pid}); what is shown may change when it finishes"
            )
        });
    }
    if r.interrupted_update {
        lines.push(
            "an interrupted update of the working tree waits; the next clada command finishes it"
                .to_string(),
        );
    }
    Ok(lines)
}
