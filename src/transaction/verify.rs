//! `--verify`: the user's own command, run on the result before the
//! branch may move.

use serde::Serialize;

use crate::apply::files::Workspace;
use crate::run::{RunOutcome, Runner};

/// How `--verify` went, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    pub command: String,
    pub passed: bool,
    /// `verify_failed: …` when it failed.
    pub message: String,
    pub details: Vec<String>,
    pub output: String,
    /// How many of the last `details` quote the output's last lines: a
    /// text report that printed the output (streamed or buffered) leaves
    /// them out rather than show it twice. JSON keeps them.
    #[serde(skip)]
    pub output_tail: usize,
}

/// Runs the verify command in the workspace's current state.
pub fn verify<W: Workspace>(command: &str, files: &mut W, runner: &mut Runner<'_>) -> Verified {
    let failed = |message: String, details: Vec<String>, output: String| Verified {
        command: command.to_string(),
        passed: false,
        message: format!("verify_failed: {message}"),
        output_tail: details
            .iter()
            .position(|d| d == crate::run::TAIL_HEADING)
            .map_or(0, |at| details.len() - at),
        details,
        output,
    };
    let root = match files.materialize() {
        Ok(root) => root,
        Err(e) => {
            return failed(
                format!("could not prepare the files: {e}"),
                Vec::new(),
                String::new(),
            );
        }
    };
    let RunOutcome {
        failure, output, ..
    } = runner.run_trusted("verify", command, &root);
    match failure {
        None => Verified {
            command: command.to_string(),
            passed: true,
            message: format!("`{command}` passed"),
            details: Vec::new(),
            output,
            output_tail: 0,
        },
        Some(f) => failed(
            format!("{} ({})", f.message, f.error_type),
            f.details,
            output,
        ),
    }
}
