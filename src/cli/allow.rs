//! `git clada allow`: approve command lines that RUN may use.
//!
//! Edits `.clada/allowed-commands.json` in the working tree (apply.md §6):
//! exact command lines, with the time each was added. The file is the
//! project's own: commit it to share approvals with the team. An apply
//! reads it from the state before the apply (your uncommitted version
//! included), never from a reply's changes.

use crate::git::Repository;
use crate::git::commit::now_iso8601;
use crate::run::policy::{ALLOWED_COMMANDS, Approvals};
use crate::run::split::split;

use super::{CliError, Outcome, write_stdout};

/// Approve a command line for RUN, list or remove approvals
///
/// A RUN line runs without asking when it is built in (read-only commands,
/// read-only git, mv/rm/cp/mkdir/touch inside the repository) or when it
/// matches an approved line exactly. Approvals live in
/// .clada/allowed-commands.json; commit it to share them.
#[derive(Debug, clap::Args)]
pub struct AllowArgs {
    /// The command line, exactly as the reply writes it (quote it for your shell)
    #[arg(value_name = "COMMAND", required_unless_present = "list")]
    pub command: Option<String>,

    /// List the approved command lines
    #[arg(long, conflicts_with_all = ["command", "remove"])]
    pub list: bool,

    /// Withdraw the approval of COMMAND
    #[arg(long)]
    pub remove: bool,
}

pub fn run_allow(args: AllowArgs) -> Result<Outcome, CliError> {
    let repo = Repository::discover(std::path::Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| CliError::new("not a git repository (or any of its parents)"))?;
    let root = repo
        .workdir()
        .ok_or_else(|| CliError::new("the repository is bare: approvals live in a working tree"))?
        .to_path_buf();
    let mut store = Approvals::load(&root)
        .map_err(|e| CliError::new(e).hint(format!("fix or remove {ALLOWED_COMMANDS}")))?;
    if args.list {
        return write_stdout(|out| {
            for command in &store.commands {
                match store.added.get(command) {
                    Some(when) => writeln!(out, "{command}\t(added {when})")?,
                    None => writeln!(out, "{command}")?,
                }
            }
            Ok(())
        })
        .map(|()| Outcome::Success);
    }
    let command = args.command.expect("clap requires it without --list");
    if args.remove {
        if !store.remove(&command) {
            return Err(CliError::new(format!("`{command}` is not approved"))
                .hint("git clada allow --list shows the approved command lines"));
        }
        store.save(&root).map_err(CliError::new)?;
        eprintln!("clada: removed `{command}` from {ALLOWED_COMMANDS}");
        return Ok(Outcome::Success);
    }
    // Approve only what RUN could run as one line: the comparison is
    // exact, so a line RUN would refuse could never match.
    match split(&command) {
        Ok(commands) if commands.len() == 1 && commands[0].text == command.trim() => {}
        Ok(_) => {
            return Err(CliError::new("approve one command line at a time"));
        }
        Err(e) => return Err(CliError::new(format!("RUN could never run this: {e}"))),
    }
    let line = command.trim();
    if store.add(line, &now_iso8601()) {
        store.save(&root).map_err(CliError::new)?;
        eprintln!("clada: approved `{line}` in {ALLOWED_COMMANDS} (commit it to share it)");
    } else {
        eprintln!("clada: `{line}` was already approved");
    }
    Ok(Outcome::Success)
}
