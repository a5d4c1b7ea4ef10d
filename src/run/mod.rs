//! RUN: commands from a reply, never through a shell.
//!
//! - `split`: RUN content to commands, refusing shell syntax.
//! - `policy`: which commands may run without asking.
//! - `reads`: what the built-in read-only commands read.
//! - `spawn`: one command with limits, in its own process group.
//!
//! This file owns running one RUN operation (or the user's `--verify`
//! command): each line judged right before it runs, approval asked on a
//! terminal, limits shared by the lines of one task, output passed on line
//! by line and kept for the report, and the outcome as the report's error
//! types (`command_not_allowed`, `exec_failed`, `exec_timeout`).

pub mod policy;
pub mod reads;
pub mod spawn;
pub mod split;

use std::path::Path;
use std::time::{Duration, Instant};

use policy::{Approvals, Place, Verdict};

/// Limits of commands (apply.md §6).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Per command (`--timeout`).
    pub timeout: Duration,
    /// The whole apply's end (`--total-timeout`), if any.
    pub deadline: Option<Instant>,
    /// Output kept per task (`--max-output`).
    pub max_output: usize,
    /// Output kept for the whole reply, its READ operations and RUN lines
    /// together (`clada.maxReplyOutput`); the user's `--verify` is not
    /// the reply's and does not count.
    pub max_reply_output: usize,
    /// Set when the caller gave up on the apply: the running command is
    /// killed and no other starts.
    pub cancel: Option<spawn::Cancel>,
}

/// The user's answer to "run this command?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
    /// Yes, and record the command line as approved.
    Always,
}

/// How a RUN (or the verify command) went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOutcome {
    /// `None` when every command succeeded.
    pub failure: Option<RunFailure>,
    /// The commands' output, interleaved, up to the limit.
    pub output: String,
    pub truncated: bool,
    /// Commands that ran (to the end or not).
    pub ran: usize,
}

/// Why a RUN failed, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    pub error_type: &'static str,
    pub message: String,
    pub details: Vec<String>,
}

/// A command stopped because the apply was cancelled.
fn cancelled(line: &str, what: &str) -> RunFailure {
    RunFailure {
        error_type: "cancelled",
        message: format!("`{line}` {what}: the request was cancelled"),
        details: Vec::new(),
    }
}

/// Lines of output quoted in an `exec_failed` report.
const TAIL_LINES: usize = 20;

/// The detail line before the output's last lines in a failure's details
/// (a report that printed the output already leaves them out).
pub const TAIL_HEADING: &str = "last lines of its output:";

/// Asks the user whether to run a command line.
pub type Ask<'a> = Box<dyn FnMut(&str) -> Answer + 'a>;

/// Receives `(label, line)` for each line of output as it arrives.
pub type OnLine<'a> = Box<dyn FnMut(&str, &str) + 'a>;

/// Runs RUN operations for one apply.
pub struct Runner<'a> {
    approvals: Approvals,
    limits: Limits,
    /// Asks the user; `None` without a terminal.
    ask: Option<Ask<'a>>,
    on_line: OnLine<'a>,
    /// Command lines the user approved with "always", in order.
    pub always: Vec<String>,
    /// `clada.sharedDirs`: read-only commands may read through them.
    shared_dirs: Vec<String>,
    /// What is left of the reply's output budget, in bytes.
    output_left: usize,
}

impl<'a> Runner<'a> {
    pub fn new(
        approvals: Approvals,
        limits: Limits,
        ask: Option<Ask<'a>>,
        on_line: OnLine<'a>,
    ) -> Runner<'a> {
        Runner {
            approvals,
            output_left: limits.max_reply_output,
            limits,
            ask,
            on_line,
            always: Vec::new(),
            shared_dirs: Vec::new(),
        }
    }

    /// Lets read-only commands read through the links of
    /// `clada.sharedDirs` into the user's directories they lead to.
    pub fn with_shared_dirs(mut self, shared_dirs: Vec<String>) -> Runner<'a> {
        self.shared_dirs = shared_dirs;
        self
    }

    /// What an operation of the reply may still show, at most
    /// `per_task`: the reply's whole output is bounded, not only each
    /// operation's (issue 28).
    pub fn output_room(&self, per_task: usize) -> usize {
        per_task.min(self.output_left)
    }

    /// Counts `bytes` of output shown against the reply's budget.
    pub fn spend_output(&mut self, bytes: usize) {
        self.output_left = self.output_left.saturating_sub(bytes);
    }

    /// The reply's output budget (`clada.maxReplyOutput`).
    pub fn reply_output_limit(&self) -> usize {
        self.limits.max_reply_output
    }

    /// Runs the lines of `script` in `dir` (relative to `root`) one after
    /// another; the first failure stops them. `label` prefixes output lines.
    pub fn run_script(&mut self, label: &str, script: &str, root: &Path, dir: &str) -> RunOutcome {
        let mut outcome = RunOutcome::default();
        let commands = match split::split(script) {
            Ok(commands) => commands,
            Err(e) => {
                outcome.failure = Some(RunFailure {
                    error_type: "command_not_allowed",
                    message: format!("nothing was run: {e}"),
                    details: Vec::new(),
                });
                return outcome;
            }
        };
        let cwd = root.join(dir);
        for command in &commands {
            let place = Place {
                root,
                dir,
                shared: &self.shared_dirs,
            };
            let verdict = policy::judge(&command.words, &command.text, &self.approvals, place);
            if let Some(failure) = self.permit(verdict, &command.text) {
                outcome.failure = Some(failure);
                return outcome;
            }
            let pin_git = command.words[0] == "git";
            if let Some(failure) = self.run_one(
                label,
                &command.words,
                &command.text,
                root,
                &cwd,
                pin_git,
                true,
                &mut outcome,
            ) {
                outcome.failure = Some(failure);
                return outcome;
            }
        }
        outcome
    }

    /// Runs the user's own command (`--verify`): trusted, no policy, but no
    /// shell and the same limits.
    pub fn run_trusted(&mut self, label: &str, command_line: &str, cwd: &Path) -> RunOutcome {
        let mut outcome = RunOutcome::default();
        let words = match shell_words::split(command_line) {
            Ok(words) if !words.is_empty() => words,
            Ok(_) => {
                outcome.failure = Some(RunFailure {
                    error_type: "exec_failed",
                    message: "the command is empty".to_string(),
                    details: Vec::new(),
                });
                return outcome;
            }
            Err(e) => {
                outcome.failure = Some(RunFailure {
                    error_type: "exec_failed",
                    message: format!("cannot split `{command_line}`: {e}"),
                    details: Vec::new(),
                });
                return outcome;
            }
        };
        outcome.failure = self.run_one(
            label,
            &words,
            command_line,
            cwd,
            cwd,
            false,
            false,
            &mut outcome,
        );
        outcome
    }

    /// Whether a judged command may run; the failure when it may not.
    fn permit(&mut self, verdict: Verdict, line: &str) -> Option<RunFailure> {
        let not_allowed = |message: String, details: Vec<String>| {
            Some(RunFailure {
                error_type: "command_not_allowed",
                message,
                details,
            })
        };
        match verdict {
            Verdict::Allowed => None,
            Verdict::Refused(why) => not_allowed(
                format!("`{line}` was refused: {why}"),
                vec!["keep every path inside the repository and out of .git and .clada".to_string()],
            ),
            Verdict::NeedsApproval => match self.ask.as_mut().map(|ask| ask(line)) {
                Some(Answer::Yes) => None,
                Some(Answer::Always) => {
                    self.approvals.commands.push(line.to_string());
                    self.always.push(line.to_string());
                    None
                }
                Some(Answer::No) => not_allowed(
                    format!("`{line}` was declined by the user; nothing more of this RUN was run"),
                    Vec::new(),
                ),
                None => not_allowed(
                    format!("`{line}` needs approval, and there is no terminal to ask on"),
                    vec![
                        format!(
                            "the user can approve it once for this repository with: git clada allow {}",
                            shell_words::quote(line)
                        ),
                        "or send a command that is allowed without asking (read-only commands and read-only git reading only inside the repository, mv/rm/cp/mkdir/touch inside it)".to_string(),
                    ],
                ),
            },
        }
    }

    /// Runs one command, adding its output to `outcome`.
    /// With `pin_git`, a `git` command is pinned to the repository of the
    /// tree at `root` (see [`git_pinned_to`]); with `of_reply`, its output
    /// counts against the reply's budget.
    #[allow(clippy::too_many_arguments)]
    fn run_one(
        &mut self,
        label: &str,
        words: &[String],
        line: &str,
        root: &Path,
        cwd: &Path,
        pin_git: bool,
        of_reply: bool,
        outcome: &mut RunOutcome,
    ) -> Option<RunFailure> {
        if self
            .limits
            .cancel
            .as_ref()
            .is_some_and(spawn::Cancel::is_set)
        {
            return Some(cancelled(line, "was not started"));
        }
        if self.limits.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(RunFailure {
                error_type: "exec_timeout",
                message: format!(
                    "`{line}` was not started: the apply's --total-timeout has passed"
                ),
                details: Vec::new(),
            });
        }
        let mut room = self.limits.max_output.saturating_sub(outcome.output.len());
        if of_reply {
            room = room.min(self.output_left);
        }
        let limits = spawn::Limits {
            timeout: self.limits.timeout,
            deadline: self.limits.deadline,
            max_output: room,
            cancel: self.limits.cancel.clone(),
        };
        let env = if pin_git {
            git_pinned_to(root)
        } else {
            Vec::new()
        };
        let on_line = &mut self.on_line;
        // Elapsed time on a terminal while it runs (after a second); the
        // time first, as a long line is cut at the terminal's width.
        let (label_shown, line_shown) = (label.to_string(), line.to_string());
        let ticker = crate::progress::Ticker::start(move |t| {
            format!(
                "[{label_shown}] running for {}: `{line_shown}`",
                crate::progress::elapsed(t)
            )
        });
        let result = spawn::run(words, cwd, limits, &env, |l| on_line(label, l));
        drop(ticker);
        outcome.ran += 1;
        if of_reply && let Ok(ran) = &result {
            self.spend_output(ran.output.len());
        }
        let ran = match result {
            Ok(ran) => ran,
            Err(e) => {
                return Some(RunFailure {
                    error_type: "exec_failed",
                    message: crate::words::plain(&format!("`{line}`: {e}")),
                    details: vec![
                        "only programs installed on the user's machine can run; check the name"
                            .to_string(),
                    ],
                });
            }
        };
        outcome
            .output
            .push_str(&String::from_utf8_lossy(&ran.output));
        if ran.truncated && !outcome.truncated {
            outcome.truncated = true;
            (self.on_line)(label, "[output truncated]");
            if !outcome.output.ends_with('\n') && !outcome.output.is_empty() {
                outcome.output.push('\n');
            }
            outcome.output.push_str("[output truncated]\n");
        }
        if ran.cancelled {
            return Some(cancelled(line, "was killed"));
        }
        if ran.timed_out {
            let total = self.limits.deadline.is_some_and(|d| Instant::now() >= d);
            return Some(RunFailure {
                error_type: "exec_timeout",
                message: if total {
                    format!("`{line}` was killed: the apply's --total-timeout passed")
                } else {
                    format!(
                        "`{line}` was killed after {} (--timeout), with every process it started",
                        human(self.limits.timeout)
                    )
                },
                details: tail_details(&ran),
            });
        }
        if ran.success() {
            return None;
        }
        let how = match ran.code {
            Some(code) => format!("exit code {code}"),
            None => "killed by a signal".to_string(),
        };
        Some(RunFailure {
            error_type: "exec_failed",
            message: format!("`{line}` failed: {how}"),
            details: tail_details(&ran),
        })
    }
}

/// The environment that ties a reply's `git` command to the working
/// tree at `root`: `GIT_DIR` and `GIT_WORK_TREE` set, so that a directory
/// the reply dressed up as a repository (a `HEAD`, `config` and `objects/`
/// written with WRITE, with hooks or an fsmonitor in that config) is never
/// discovered, and bare repositories never discovered either.
fn git_pinned_to(root: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    let mut env = vec![
        ("GIT_CONFIG_COUNT", "1".into()),
        ("GIT_CONFIG_KEY_0", "safe.bareRepository".into()),
        ("GIT_CONFIG_VALUE_0", "explicit".into()),
    ];
    let git = root.join(".git");
    if std::fs::symlink_metadata(&git).is_ok() {
        env.push(("GIT_DIR", git.into_os_string()));
        env.push(("GIT_WORK_TREE", root.as_os_str().to_owned()));
    }
    env
}

/// The output's last lines, as detail lines.
fn tail_details(ran: &spawn::Ran) -> Vec<String> {
    let tail = ran.tail(TAIL_LINES);
    if tail.trim().is_empty() {
        return vec!["(it printed nothing)".to_string()];
    }
    let mut details = vec![TAIL_HEADING.to_string()];
    details.extend(tail.lines().map(|l| format!("| {l}")));
    details
}

/// `500ms`, `30s`, `1.5s`, `2m`: as a user would write it.
fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{}ms", d.as_millis())
    } else if secs >= 60.0 && secs % 60.0 == 0.0 {
        format!("{}m", secs as u64 / 60)
    } else if secs.fract() == 0.0 {
        format!("{}s", secs as u64)
    } else {
        format!("{secs:.1}s")
    }
}
