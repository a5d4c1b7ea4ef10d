//! `--no-git`: the reply applied to a plain directory, in place.
//!
//! No snapshot, no commits: a TASKS block (and `--atomic`, the whole
//! reply) is undone through the directory store's journal.

use std::path::Path;
use std::time::Instant;

use crate::apply::dir::DirFiles;
use crate::apply::exec::execute;
use crate::report::Tally;
use crate::run::policy::{ALLOWED_COMMANDS, Approvals};
use crate::syntax::Parsed;

use super::{Applied, Ending, Error, Hooks, Settings, runner, tasks_of, verify};

/// Applies `parsed` to the directory `root`. `allow_escape` lets paths
/// leave it (`--allow-escape`). `common_dir` is the git dir of a
/// repository around `root`, whose user's approvals count too.
pub fn apply_in_dir(
    root: &Path,
    common_dir: Option<&Path>,
    parsed: &Parsed<'_>,
    settings: &Settings,
    allow_escape: bool,
    mut hooks: Hooks<'_>,
) -> Result<Applied, Error> {
    let started = Instant::now();
    let mut exec = settings.exec;
    exec.feedback_until = Some(started + crate::apply::feedback::BUDGET);
    exec.vocab = parsed.syntax.vocab();
    let mut files = DirFiles::new(root);
    let tasks = tasks_of(parsed, allow_escape, Some(root));
    let approvals = if tasks.iter().any(crate::plan::Task::runs_commands) {
        let mut approvals = Approvals::load(root)
            .map_err(|e| Error::new(e).hint(format!("fix {ALLOWED_COMMANDS}, then apply again")))?;
        if let Some(dir) = common_dir {
            approvals.extend(super::private_approvals(dir)?);
        }
        approvals
    } else {
        Approvals::default()
    };
    let mut runner = runner(&settings.run, approvals, started, &mut hooks);
    // --atomic: one checkpoint around everything, undone if any task fails.
    let whole = settings.atomic.then(|| {
        use crate::apply::files::Files as _;
        files.checkpoint()
    });
    let reports = execute(&tasks, &mut files, &exec, &mut runner, |t| {
        (hooks.on_task)(t)
    });
    let tally = Tally::of(&reports);
    let verified = settings
        .run
        .verify
        .as_ref()
        .map(|command| verify::verify(command, &mut files, &mut runner));
    let verify_failed = verified.as_ref().is_some_and(|v| !v.passed);
    use crate::apply::files::Files as _;
    let mut out = match whole {
        Some(checkpoint) if !tally.all_succeeded() || verify_failed => {
            files.rollback(checkpoint).map_err(|e| {
                Error::new(format!(
                    "--atomic: a task failed and undoing the others failed too: {e}"
                ))
            })?;
            Applied::new(
                Ending::Rejected,
                format!(
                    "not applied: a task or the verification failed and --atomic is set; every file change was undone; the reply's tasks ran ({tally})"
                ),
            )
        }
        whole => {
            if let Some(checkpoint) = whole {
                files.keep(checkpoint);
            }
            match &verified {
                Some(v) if !v.passed => Applied::new(
                    Ending::Failed,
                    format!(
                        "{}; without git the changes stay in {} ({tally})",
                        v.message,
                        root.display()
                    ),
                ),
                // Without git there is no branch to move: what a task that
                // succeeded did stays on disk.
                _ => Applied::new(
                    Ending::by_tally(tally, tally.succeeded > 0 || !parsed.dropped.is_empty()),
                    // "applied" only where some task was.
                    format!(
                        "{} in {} without git ({tally})",
                        if tally.succeeded > 0 {
                            "applied"
                        } else {
                            "nothing applied"
                        },
                        root.display()
                    ),
                ),
            }
        }
    };
    out.verify = verified;
    out.reports = reports;
    out.tally = tally;
    out.always = std::mem::take(&mut runner.always);
    Ok(out)
}
