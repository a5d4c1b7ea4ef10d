//! `git clada allow`: approve command lines that RUN may use.
//!
//! Edits the approval stores (apply.md §6, doc/run.md): exact command
//! lines, with the time each was added. By default the user's own store,
//! `clada-allowed-commands.json` in the repository's git dir: approving
//! never leaves a file in the working tree. `--shared` edits the team's
//! `.clada/allowed-commands.json` instead, which the user then commits to
//! share. An apply reads both: the user's as it is, the team's from the
//! state before the apply (the uncommitted version included), never from
//! a reply's changes.

use crate::git::Repository;
use crate::git::commit::now_iso8601;
use crate::run::policy::{ALLOWED_COMMANDS, Approvals};
use crate::run::split::split;

use super::commands::private_store;
use super::{CliError, Outcome, write_stdout};

/// Approve a command line for RUN, list or remove approvals
///
/// A RUN line runs without asking when it is built in (read-only commands,
/// read-only git, mv/rm/cp/mkdir/touch inside the repository) or when it
/// matches an approved line exactly. Your approvals live in the
/// repository's git dir (.git/clada-allowed-commands.json), never in the
/// working tree; with --shared a line goes to .clada/allowed-commands.json,
/// which you commit to share it with the team.
#[derive(Debug, clap::Args)]
pub struct AllowArgs {
    /// The command line, exactly as the reply writes it (quote it for your shell)
    #[arg(value_name = "COMMAND", required_unless_present = "list")]
    pub command: Option<String>,

    /// List the approved command lines, yours and the team's
    #[arg(long, conflicts_with_all = ["command", "remove", "shared"])]
    pub list: bool,

    /// Withdraw the approval of COMMAND
    #[arg(long)]
    pub remove: bool,

    /// Approve in (or remove from) the team's .clada/allowed-commands.json, to commit and share
    #[arg(long)]
    pub shared: bool,
}

/// One approval store: where it is, what it is called in messages, and
/// what it holds.
struct Store {
    path: std::path::PathBuf,
    name: String,
    approvals: Approvals,
}

impl Store {
    fn load(path: std::path::PathBuf, name: String) -> Result<Store, CliError> {
        let approvals = Approvals::load_from(&path, &name)
            .map_err(|e| CliError::new(e).hint(format!("fix or remove {name}")))?;
        Ok(Store {
            path,
            name,
            approvals,
        })
    }

    fn save(&self) -> Result<(), CliError> {
        if self.path.ends_with(ALLOWED_COMMANDS) {
            // The team's store: through `save`, which refuses a linked
            // `.clada`.
            let root = self
                .path
                .ancestors()
                .nth(2)
                .expect("the store is root/.clada/allowed-commands.json");
            return self.approvals.save(root).map_err(CliError::new);
        }
        self.approvals
            .save_to(&self.path, &self.name)
            .map_err(CliError::new)
    }
}

pub fn run_allow(args: AllowArgs) -> Result<Outcome, CliError> {
    let repo = Repository::discover(std::path::Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| CliError::new("not a git repository (or any of its parents)"))?;
    let root = repo
        .workdir()
        .ok_or_else(|| CliError::new("the repository is bare: approvals live in a working tree"))?
        .to_path_buf();
    let mine = {
        let path = private_store(&repo);
        let name = path.display().to_string();
        Store::load(path, name)?
    };
    let team = Store::load(root.join(ALLOWED_COMMANDS), ALLOWED_COMMANDS.to_string())?;
    if args.list {
        return write_stdout(|out| {
            for (store, whose) in [(&mine, ""), (&team, "shared, ")] {
                let approvals = &store.approvals;
                for command in &approvals.commands {
                    match approvals.added.get(command) {
                        Some(when) => writeln!(out, "{command}\t({whose}added {when})")?,
                        None if whose.is_empty() => writeln!(out, "{command}")?,
                        None => writeln!(out, "{command}\t(shared)")?,
                    }
                }
            }
            Ok(())
        })
        .map(|()| Outcome::Success);
    }
    let command = args.command.expect("clap requires it without --list");
    let mut store = if args.shared { team } else { mine };
    if args.remove {
        if !store.approvals.remove(&command) {
            let e = CliError::new(format!("`{command}` is not approved in {}", store.name));
            return Err(e.hint(if args.shared {
                "git clada allow --list shows the approved command lines; those not marked shared are yours: remove them without --shared"
            } else {
                "git clada allow --list shows the approved command lines; those marked shared are the team's: remove them with --shared"
            }));
        }
        store.save()?;
        eprintln!("clada: removed `{command}` from {}", store.name);
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
    if store.approvals.add(line, &now_iso8601()) {
        store.save()?;
        if args.shared {
            eprintln!(
                "clada: approved `{line}` in {} (commit it to share it)",
                store.name
            );
        } else {
            eprintln!(
                "clada: approved `{line}` in {} (yours, for this repository)",
                store.name
            );
        }
    } else {
        eprintln!("clada: `{line}` was already approved in {}", store.name);
    }
    Ok(Outcome::Success)
}
