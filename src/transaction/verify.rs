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
}

/// Runs the verify command in the workspace's current state.
pub fn verify<W: Workspace>(command: &str, files: &mut W, runner: &mut Runner<'_>) -> Verified {
    let failed = |message: String, details: Vec<String>, output: String| Verified {
        command: command.to_string(),
        passed: false,
        message: format!("verify_failed: {message}"),
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
        },
        Some(f) => failed(
            format!("{} ({})", f.message, f.error_type),
            f.details,
            output,
        ),
    }
}
