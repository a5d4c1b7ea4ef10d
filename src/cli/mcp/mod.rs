//! `git clada mcp`: git-clada as a Model Context Protocol server over
//! stdio (doc/mcp.md), for agent hosts that call tools rather than run
//! commands.
//!
//! - `server`: the protocol side (rmcp's `ServerHandler`): tools, prompts,
//!   roots, progress, cancellation and the approval question.
//! - `tools`: each tool's name, arguments (typed, with their schema),
//!   output schema and annotations.
//! - `calls`: what each tool does, run on a blocking thread through the
//!   same code as the command line (`apply_or_stop`, `run_status`, …),
//!   with the command's output captured instead of printed.
//!
//! This file owns the start: which repository is served, stdout kept for
//! the protocol alone, and the tokio runtime, which exists only inside
//! this command.

mod calls;
mod schemas;
mod server;
mod tools;

use std::io::Write as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::path::PathBuf;

use super::{CliError, Outcome};

/// Serve this repository to an agent host over MCP (stdio)
///
/// Speaks the Model Context Protocol on stdin and stdout, one JSON-RPC
/// message per line; logs go to stderr. Tools: apply, check, read,
/// status, log, show, undo, redo; prompts: the syntax guides of `git clada
/// prompt`. Applies take the same lock and make the same pre and post
/// commits as `git clada apply`; a RUN line that is not approved is asked
/// about through the client (elicitation) when it can ask, and refused
/// otherwise. Register it in a host with the command `git-clada` and the
/// argument `mcp` (doc/mcp.md has each host's lines).
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The repository to serve [default: the one the command starts in,
    /// else the first root the client offers that is in a repository]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

pub fn run_mcp(args: McpArgs) -> Result<Outcome, CliError> {
    let repo = match &args.repo {
        Some(dir) => Some(server::Served::open(dir)?),
        // Hosts often start servers in the user's home directory: the
        // client's roots decide then (server::Served::from_roots).
        None => server::Served::open(std::path::Path::new(".")).ok(),
    };
    let protocol = keep_stdout_for_the_protocol()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the MCP server: {e}")))?;
    let result = runtime.block_on(server::serve(repo, protocol));
    // Calls still running when the client went away were cancelled (their
    // commands killed): they end within moments, and are waited for so
    // that none is cut off holding the lock. The bound is for a call past
    // its cancellation point, finishing its commit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(30));
    result.map(|()| Outcome::Success)
}

/// The protocol's stdout, kept apart: file descriptor 1 is pointed at
/// stderr, so that nothing but protocol messages can ever reach the
/// client's stdout, not even a stray print in some library. (Commands
/// run for tool calls write their output through `write_stdout`, which
/// the server captures.)
fn keep_stdout_for_the_protocol() -> Result<tokio::fs::File, CliError> {
    let cannot = |e: std::io::Error| CliError::new(format!("cannot set up stdout: {e}"));
    let _ = std::io::stdout().flush();
    // SAFETY: dup(2) and dup2(2) on the process's own standard
    // descriptors; the new descriptor is owned by the OwnedFd below.
    let protocol = unsafe {
        let fd = libc::dup(std::io::stdout().as_raw_fd());
        if fd < 0 {
            return Err(cannot(std::io::Error::last_os_error()));
        }
        let owned = OwnedFd::from_raw_fd(fd);
        if libc::dup2(std::io::stderr().as_raw_fd(), std::io::stdout().as_raw_fd()) < 0 {
            return Err(cannot(std::io::Error::last_os_error()));
        }
        owned
    };
    // The descriptor must not leak into RUN's commands.
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        libc::fcntl(protocol.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}
