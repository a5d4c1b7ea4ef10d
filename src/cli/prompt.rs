//! `git clada prompt`: a CSL guide for an LLM's system prompt.

use super::{CliError, Outcome, settings, write_stdout};

/// The guide, with `{S}` and `{E}` standing for the delimiters.
const GUIDE: &str = include_str!("prompt.md");

/// Print a CSL guide to paste into an LLM's system prompt
///
/// The guide is short enough to use as is. It uses the configured marker
/// delimiters (flags, then git config clada.startDelimiter/endDelimiter).
#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    /// Text that starts a marker [default: <---, or git config clada.startDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub start_delimiter: Option<String>,

    /// Text that ends a marker [default: --->, or git config clada.endDelimiter]
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub end_delimiter: Option<String>,
}

pub fn run_prompt(args: PromptArgs) -> Result<Outcome, CliError> {
    let delims = settings::delimiters(
        args.start_delimiter.as_deref(),
        args.end_delimiter.as_deref(),
    )?;
    let guide = render(&delims);
    write_stdout(|out| out.write_all(guide.as_bytes()))?;
    Ok(Outcome::Success)
}

/// The guide for these delimiters.
pub fn render(delims: &crate::csl::Delimiters) -> String {
    GUIDE
        .replace("{S}", &delims.start)
        .replace("{E}", &delims.end)
}

#[cfg(test)]
mod tests {
    use crate::csl::{self, Delimiters};

    /// The examples in the guide must themselves be clean CSL.
    #[test]
    fn guide_examples_parse_without_any_diagnostic() {
        for delims in [Delimiters::default(), Delimiters::new("@@", "@@").unwrap()] {
            let guide = super::render(&delims);
            let reply = csl::parse(&guide, &delims);
            assert!(reply.diagnostics.is_empty(), "{:?}", reply.diagnostics);
            assert_eq!(reply.operations.len(), 5);
            assert_eq!(reply.operations[4].children().len(), 2);
        }
    }
}
