//! Commands in an apply, as the command line sees them: the settings of
//! RUN and `--verify` from their layers, the yes / no / always question on
//! a terminal, `[task-N:exec] line` as output arrives, and recording the
//! lines answered "always".

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::git::Repository;
use crate::git::commit::now_iso8601;
use crate::plan::repo_path;
use crate::run::policy::{ALLOWED_COMMANDS, Approvals, PRIVATE_APPROVALS};
use crate::run::{Answer, Ask, OnLine};
pub use crate::transaction::RunSettings;

use super::config::{Layers, parse_duration, parse_size};
use super::{CliError, write_stdout};

/// The flags that feed [`RunSettings`].
pub struct RunFlags {
    pub timeout: Option<Duration>,
    pub total_timeout: Option<Duration>,
    pub max_output: Option<usize>,
    pub verify: Option<String>,
}

pub fn resolve(flags: RunFlags, layers: &Layers<'_>) -> Result<RunSettings, CliError> {
    // Limits: the team file may only lower them (Layers::get_limit).
    let timeout = layers
        .get_limit(
            flags.timeout,
            "timeout",
            parse_duration,
            "a duration",
            Some(Duration::from_secs(30)),
        )?
        .unwrap_or(Duration::from_secs(30));
    let total_timeout = layers.get_limit(
        flags.total_timeout,
        "totalTimeout",
        parse_duration,
        "a duration",
        None,
    )?;
    let max_output = layers
        .get_limit(
            flags.max_output,
            "maxOutput",
            parse_size,
            "a size",
            Some(10 << 20),
        )?
        .unwrap_or(10 << 20);
    // The whole reply's READ and RUN output together: by default what one
    // task may show.
    let max_reply_output = layers
        .get_limit(
            None,
            "maxReplyOutput",
            parse_size,
            "a size",
            Some(max_output),
        )?
        .unwrap_or(max_output);
    let verify = layers
        .get(flags.verify, "verify", |s| Some(s.to_string()), "")?
        .filter(|v| !v.trim().is_empty());
    let mut shared_dirs = Vec::new();
    for dir in layers.get_list("sharedDirs")? {
        let path = repo_path(&dir).map_err(|e| {
            CliError::new(format!("clada.sharedDirs: {dir}: {e}"))
                .hint("list directories of the working tree, such as node_modules")
        })?;
        shared_dirs.push(path.as_str().to_string());
    }
    Ok(RunSettings {
        timeout,
        total_timeout,
        max_output,
        max_reply_output,
        verify,
        shared_dirs,
        cancel: None,
    })
}

/// The question on the terminal about a command line that is not
/// approved.
pub fn terminal_question() -> Ask<'static> {
    Box::new(ask_on_terminal)
}

/// Command output as `[label] line` on stdout as it arrives, when
/// `stream` is set.
pub fn output_lines(stream: bool) -> OnLine<'static> {
    Box::new(move |label: &str, line: &str| {
        if stream {
            crate::progress::above(|| {
                let _ = write_stdout(|out| writeln!(out, "[{label}] {}", visible(line)));
            });
        }
    })
}

/// Asks on the terminal whether to run `line`: yes, no or always.
fn ask_on_terminal(line: &str) -> Answer {
    let stdin = std::io::stdin();
    loop {
        eprint!(
            "clada: the reply wants to run `{}`, which is not approved.\n  Run it? [y]es, [n]o, [a]lways (approve it from now on): ",
            visible(line)
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        match stdin.lock().read_line(&mut answer) {
            Ok(0) | Err(_) => return Answer::No,
            Ok(_) => {}
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Answer::Yes,
            "n" | "no" | "" => return Answer::No,
            "a" | "always" => return Answer::Always,
            _ => eprintln!("clada: answer y, n or a"),
        }
    }
}

/// `text` with control characters (escape sequences that could redraw
/// the terminal, making a command look like another) shown as escapes.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Records the command lines the user answered "always" to, in the
/// user's own store: in the git dir of `repo` (never the working tree,
/// where it would be an untracked file that blocks undo and slips into
/// the next pre snapshot); without a repository (`--no-git`), in the
/// team's store of directory `root`, the only place there is.
pub fn record_always(
    repo: Option<&Repository>,
    root: Option<&Path>,
    lines: &[String],
) -> Result<(), CliError> {
    if lines.is_empty() {
        return Ok(());
    }
    let (path, name) = match (repo, root) {
        (Some(repo), _) => {
            let path = private_store(repo);
            let name = path.display().to_string();
            (path, name)
        }
        (None, Some(root)) => (root.join(ALLOWED_COMMANDS), ALLOWED_COMMANDS.to_string()),
        (None, None) => return Ok(()),
    };
    let mut store = Approvals::load_from(&path, &name).map_err(CliError::new)?;
    let now = now_iso8601();
    for line in lines {
        store.add(line, &now);
    }
    store.save_to(&path, &name).map_err(CliError::new)?;
    eprintln!(
        "clada: approved in {name}: {}{}",
        lines.join(", "),
        if repo.is_some() {
            " (yours, for this repository; `git clada allow --shared` shares a command with the team)"
        } else {
            ""
        }
    );
    Ok(())
}

/// The user's own approval store of `repo`, in its git dir.
pub fn private_store(repo: &Repository) -> PathBuf {
    repo.common_dir().join(PRIVATE_APPROVALS)
}
