//! `git clada prompt`: a guide for an LLM's system prompt, in the syntax
//! the model should write.

use crate::syntax::Syntax;

use super::{CliError, Outcome, settings, write_stdout};

/// The CSL guide, with `{S}` and `{E}` standing for the delimiters.
const GUIDE: &str = include_str!("prompt.md");

/// The guide to the `json` syntax's operation list.
const JSON_GUIDE: &str = include_str!("prompt-json.md");

/// The guide to the replacer format.
const REPLACER_GUIDE: &str = include_str!("prompt-replacer.md");

/// The guide to Codex's apply_patch format.
const PATCH_GUIDE: &str = include_str!("prompt-patch.md");

/// Print a guide to paste into an LLM's system prompt
///
/// The guide is short enough to use as is. The CSL guide uses the
/// configured marker delimiters (flags, then git config
/// clada.startDelimiter/endDelimiter).
#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    /// The syntax the model should write (any apply reads) [default: csl]
    #[arg(long, value_name = "NAME")]
    pub syntax: Option<String>,

    #[command(flatten)]
    pub delimiters: super::settings::DelimiterArgs,
}

pub fn run_prompt(args: PromptArgs) -> Result<Outcome, CliError> {
    let delims = settings::delimiters(
        args.delimiters.start_delimiter.as_deref(),
        args.delimiters.end_delimiter.as_deref(),
    )?;
    let syntax = match args.syntax.as_deref() {
        None => Syntax::Csl,
        Some(name) => Syntax::from_name(name).ok_or_else(|| {
            CliError::new(format!("unknown syntax {name:?}"))
                .hint(format!("use one of: {}", Syntax::read_names()))
        })?,
    };
    let guide = match syntax {
        Syntax::Csl => render(&delims),
        Syntax::Json => JSON_GUIDE.to_string(),
        Syntax::Replacer => REPLACER_GUIDE.to_string(),
        Syntax::Patch => PATCH_GUIDE.to_string(),
        other => {
            return Err(CliError::new(format!(
                "git-clada does not read the {} syntax yet, so it has no guide for it",
                other.title()
            ))
            .hint(format!("use one of: {}", Syntax::read_names())));
        }
    };
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

    /// The JSON guide's example is a clean `json` reply with every
    /// operation of the plan.
    #[test]
    fn json_guide_example_reads_without_any_diagnostic() {
        let guide = super::JSON_GUIDE;
        let start = guide.find("\n[\n").expect("example list") + 1;
        let end = guide[start..].find("\n]\n").expect("end of example") + start + 2;
        let parsed = crate::syntax::json::parse(&guide[start..end]);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.drafts.len(), 14);
        let kinds: std::collections::BTreeSet<&str> =
            parsed.drafts.iter().map(|d| d.kind.name()).collect();
        assert_eq!(kinds.len(), 9, "{kinds:?}");
    }

    /// The replacer guide is itself a clean replacer reply: its two
    /// blocks, with their explanations.
    #[test]
    fn replacer_guide_example_reads_without_any_diagnostic() {
        let parsed = crate::syntax::replacer::parse(super::REPLACER_GUIDE);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let kinds: Vec<&str> = parsed.drafts.iter().map(|d| d.kind.name()).collect();
        assert_eq!(kinds, ["SEARCH", "WRITE"]);
        assert!(parsed.drafts.iter().all(|d| d.action.is_some()));
        assert_eq!(parsed.explanations.len(), 2);
        let auto = crate::syntax::parse(
            super::REPLACER_GUIDE.as_bytes(),
            crate::syntax::Choice::Auto,
            &crate::csl::Delimiters::default(),
        );
        assert_eq!(auto.syntax, crate::syntax::Syntax::Replacer);
    }

    /// The patch guide is itself a clean patch reply, detected as one:
    /// every kind of section.
    #[test]
    fn patch_guide_example_reads_without_any_diagnostic() {
        let parsed = crate::syntax::patch::parse(super::PATCH_GUIDE);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let kinds: Vec<&str> = parsed.drafts.iter().map(|d| d.kind.name()).collect();
        assert_eq!(kinds, ["WRITE", "EDIT", "TASKS", "DELETE"]);
        assert!(parsed.drafts.iter().all(|d| d.action.is_some()));
        let auto = crate::syntax::parse(
            super::PATCH_GUIDE.as_bytes(),
            crate::syntax::Choice::Auto,
            &crate::csl::Delimiters::default(),
        );
        assert_eq!(auto.syntax, crate::syntax::Syntax::Patch);
        assert!(auto.diagnostics.is_empty(), "{:?}", auto.diagnostics);
    }
}
