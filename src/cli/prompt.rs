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

/// The guide to aider's SEARCH/REPLACE blocks.
const AIDER_GUIDE: &str = include_str!("prompt-aider.md");
/// The guide to CML.
const CML_GUIDE: &str = include_str!("prompt-cml.md");

/// The guide to SHAM blocks.
const SHAM_GUIDE: &str = include_str!("prompt-sham.md");

/// The guide to TELT blocks.
const TELT_GUIDE: &str = include_str!("prompt-telt.md");

/// The guide to unified diffs.
const DIFF_GUIDE: &str = include_str!("prompt-diff.md");

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
    #[arg(long, value_name = "NAME", value_parser = super::apply::syntax_names(false))]
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
    write_stdout(|out| out.write_all(guide(syntax, &delims).as_bytes()))?;
    Ok(Outcome::Success)
}

/// The guide to `syntax` (CSL's with these delimiters).
pub(crate) fn guide(syntax: Syntax, delims: &crate::csl::Delimiters) -> String {
    match syntax {
        Syntax::Csl => render(delims),
        Syntax::Json => JSON_GUIDE.to_string(),
        Syntax::Replacer => REPLACER_GUIDE.to_string(),
        Syntax::Aider => AIDER_GUIDE.to_string(),
        Syntax::Cml => CML_GUIDE.to_string(),
        Syntax::Sham => SHAM_GUIDE.to_string(),
        Syntax::Telt => TELT_GUIDE.to_string(),
        Syntax::Patch => PATCH_GUIDE.to_string(),
        Syntax::Diff => DIFF_GUIDE.to_string(),
    }
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

    /// A guide read whole, detected and read as `syntax`: no diagnostic,
    /// every operation built, of these kinds in this order. Returns the
    /// parse for further checks.
    fn clean_guide(
        guide: &'static str,
        syntax: crate::syntax::Syntax,
        kinds: &[&str],
    ) -> crate::syntax::Parsed<'static> {
        let parsed = crate::syntax::parse(
            guide.as_bytes(),
            crate::syntax::Choice::Auto,
            &crate::csl::Delimiters::default(),
        );
        assert_eq!(parsed.syntax, syntax);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let got: Vec<&str> = parsed.drafts.iter().map(|d| d.kind.name()).collect();
        assert_eq!(got, kinds);
        assert!(parsed.drafts.iter().all(|d| d.action.is_some()));
        parsed
    }

    /// The replacer guide is itself a clean replacer reply: its two
    /// blocks, with their explanations.
    #[test]
    fn replacer_guide_example_reads_without_any_diagnostic() {
        let parsed = clean_guide(
            super::REPLACER_GUIDE,
            crate::syntax::Syntax::Replacer,
            &["SEARCH", "WRITE"],
        );
        assert_eq!(parsed.explanations.len(), 2);
    }

    /// The aider guide is a clean aider reply: an edit and a create.
    #[test]
    fn aider_guide_example_reads_without_any_diagnostic() {
        clean_guide(
            super::AIDER_GUIDE,
            crate::syntax::Syntax::Aider,
            &["EDIT", "WRITE"],
        );
    }

    /// The CML guide, read whole as a reply, is clean and its example has
    /// every CML element, with the values the guide says they have.
    #[test]
    fn cml_guide_example_reads_without_any_diagnostic() {
        use crate::csl::validate::Count;
        use crate::plan::Action;
        let parsed = crate::syntax::cml::parse(super::CML_GUIDE);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let ops: Vec<&str> = parsed.drafts.iter().map(|d| d.kind.name()).collect();
        assert_eq!(
            ops,
            ["TASKS", "SEARCH", "WRITE", "MOVE", "DELETE", "RUN"],
            "{:?}",
            parsed.drafts
        );
        let Some(Action::Block(block)) = &parsed.drafts[0].action else {
            panic!("not a block: {:?}", parsed.drafts[0]);
        };
        assert_eq!(
            block[0].action,
            Some(Action::Search {
                path: "src/app.py".to_string(),
                pattern: "def greet():\n    print(\"hello\")".into(),
                to: None,
                replacement: "def greet(name=\"world\"):\n    print(f\"hello, {name}\")".into(),
                count: Count::Exactly(1),
            })
        );
        assert!(matches!(
            &parsed.drafts[1].action,
            Some(Action::Search { to: Some(to), count: Count::All, replacement, .. })
                if to == "# END TODO" && replacement.is_empty()
        ));
        assert!(matches!(
            &parsed.drafts[2].action,
            Some(Action::Write { append: true, content, .. }) if content == "- greet() takes a name"
        ));
        assert!(matches!(
            &parsed.drafts[4].action,
            Some(Action::Delete {
                recursive: true,
                ..
            })
        ));
    }

    /// The guides' example replies, from "Example reply:" to the list of
    /// actions, read as their syntax: no diagnostic, and the operations
    /// they show.
    fn example(guide: &str) -> &str {
        let start = guide.find("Example reply:").expect("an example");
        let end = guide[start..]
            .find("\nCommands and")
            .or_else(|| guide[start..].find("\nActions and"))
            .expect("end of example")
            + start;
        &guide[start..end]
    }

    #[test]
    fn sham_guide_example_reads_without_any_diagnostic() {
        use crate::csl::OpKind::*;
        let reply = example(super::SHAM_GUIDE);
        assert_eq!(
            crate::syntax::detect::choose(&crate::syntax::detect::blocks(
                reply,
                &Default::default()
            )),
            Some(crate::syntax::Syntax::Sham)
        );
        let parsed = crate::syntax::sham::parse(reply);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let kinds: Vec<_> = parsed.drafts.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [Write, Search, Move, Read, Run]);
        assert!(parsed.drafts.iter().all(|d| d.action.is_some()));
    }

    #[test]
    fn telt_guide_example_reads_without_any_diagnostic() {
        use crate::csl::OpKind::*;
        let reply = example(super::TELT_GUIDE);
        assert_eq!(
            crate::syntax::detect::choose(&crate::syntax::detect::blocks(
                reply,
                &Default::default()
            )),
            Some(crate::syntax::Syntax::Telt)
        );
        let parsed = crate::syntax::telt::parse(reply);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let kinds: Vec<_> = parsed.drafts.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [Tasks, Move, Read, Run]);
        let Some(crate::plan::Action::Block(group)) = &parsed.drafts[0].action else {
            panic!("{:?}", parsed.drafts[0]);
        };
        assert_eq!(
            group.iter().map(|d| d.kind).collect::<Vec<_>>(),
            [Write, Search]
        );
    }

    /// The patch guide is itself a clean patch reply, detected as one:
    /// every kind of section.
    #[test]
    fn patch_guide_example_reads_without_any_diagnostic() {
        clean_guide(
            super::PATCH_GUIDE,
            crate::syntax::Syntax::Patch,
            &["WRITE", "EDIT", "TASKS", "DELETE"],
        );
    }

    /// The diff guide is a clean diff reply: an edit and a new file.
    #[test]
    fn diff_guide_example_reads_without_any_diagnostic() {
        clean_guide(
            super::DIFF_GUIDE,
            crate::syntax::Syntax::Diff,
            &["EDIT", "WRITE"],
        );
    }
}
