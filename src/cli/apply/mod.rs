//! `git clada apply`: arguments and settings in, the library transaction
//! (`transaction`) run, the report rendered (`render`).
//!
//! This file is glue: it reads the reply (a file, stdin, a commit message
//! or a note), parses it with the front end of its syntax (`syntax`),
//! refuses a fatal or empty reply, takes the lock, resolves the settings
//! layers (flags, git config, the team file the transaction hands back)
//! and wires the terminal (questions, streamed lines) to the transaction.

mod render;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::apply::exec::ExecOptions;
use crate::apply::search::MatchMode;
use crate::csl::{self, Delimiters, Severity};
use crate::git::commit::Identity;
use crate::git::{Head, ObjectId, Repository};
use crate::report::text::own_lines;
use crate::syntax::{self, Choice, Parsed};
use crate::transaction::{self, Applied, Ending, Hooks, Settings, Target, Timings};

use super::commands::{self, RunFlags};
use super::config::{Layers, duration_arg, size_arg};
use super::{CliError, Outcome, ReplyInput, settings, write_stdout};

pub(crate) use crate::reply::parse as parse_input;
pub(crate) use render::{Presentation, render};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputMode {
    /// Print each task's line as soon as it finishes
    Stream,
    /// Print every task's line at the end
    Buffer,
    /// Print only the summary
    Silent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum ErrorDetail {
    /// The closest match and the named differences
    Minimal,
    /// Also the line-by-line diff against the closest match
    Full,
    /// Also timings of each phase, on stderr
    Debug,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchArg {
    /// Byte for byte (after line-end normalisation)
    Exact,
    /// Also a unique match differing only in leading/trailing whitespace
    Whitespace,
}

/// Who asked for an apply, where it is not the terminal: `git clada mcp`
/// (a client's tool call) passes the reply in memory, its own question
/// about commands that are not approved, a cancellation flag, and takes
/// the report as text too (the tool result holds the JSON report and the
/// text one). The command line passes [`Caller::default`].
#[derive(Default)]
pub(crate) struct Caller {
    /// The reply, when the caller has it; else it is read as `args` say.
    pub input: Option<ReplyInput>,
    /// Asks whether to run a command line that is not approved.
    pub ask: Option<crate::run::Ask<'static>>,
    /// Receives each line of command output as it arrives.
    pub on_line: Option<crate::run::OnLine<'static>>,
    /// Set by the caller to give up on the apply.
    pub cancel: Option<crate::run::spawn::Cancel>,
    /// `Some`: the text report is written here too.
    pub text: Option<Vec<u8>>,
}

/// Apply a reply to the current branch as pre and post commits
///
/// Snapshots your uncommitted work (untracked files included) in a `pre`
/// commit, applies the reply's operations in memory, commits the result as
/// `post` and fast-forwards the branch; your working tree is updated only
/// for the files the reply changed, and a file you edit meanwhile is never
/// overwritten. Exit status: 0 every task succeeded (or nothing to do), 1
/// some task failed or was skipped, 2 fatal syntax error, bad arguments,
/// not a repository or lock timeout, 3 the branch moved during the apply.
/// Every option can also be set with `git config clada.<name>` (camelCase)
/// or in the repository's .clada/config.toml.
#[derive(Debug, Default, clap::Args)]
pub struct ApplyArgs {
    /// The reply: a file, or - for standard input (the default when stdin is not a terminal)
    #[arg(value_name = "FILE|-", conflicts_with_all = ["from_commit", "from_note"])]
    pub input: Option<PathBuf>,

    /// Read the reply from the message of commit REV
    #[arg(long, value_name = "REV", conflicts_with = "from_note")]
    pub from_commit: Option<String>,

    /// Read the reply from the note on REV (see --notes-ref)
    #[arg(long, value_name = "REV")]
    pub from_note: Option<String>,

    /// Notes ref for --from-note [default: refs/notes/clada-inbox]
    #[arg(long, value_name = "REF")]
    pub notes_ref: Option<String>,

    /// Report format [default: text]
    #[arg(long, value_enum)]
    pub format: Option<Format>,

    /// When task lines are printed [default: stream]
    #[arg(long, value_enum)]
    pub output_mode: Option<OutputMode>,

    /// How much a failed SEARCH explains [default: minimal]
    #[arg(long, value_enum)]
    pub error_detail: Option<ErrorDetail>,

    /// Print the reply's changes as a patch (git apply takes it) and change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Apply in the current directory: no repository, no commits
    #[arg(long)]
    pub no_git: bool,

    /// Leave the branch unmoved if any task fails (the result is kept under refs/clada/rejected/)
    #[arg(long)]
    pub atomic: bool,

    /// Author and committer of clada's commits [default: clada <clada@localhost>]
    #[arg(long, value_name = "NAME <EMAIL>")]
    pub git_author: Option<String>,

    /// How long to wait for another apply to finish [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub lock_timeout: Option<Duration>,

    /// How SEARCH patterns match [default: exact]
    #[arg(long = "match", value_enum, value_name = "MODE")]
    pub match_mode: Option<MatchArg>,

    /// Allow edits whose new text puts an elision placeholder such as "// ... existing code ..." where code was
    #[arg(long)]
    pub allow_placeholders: bool,

    /// With --no-git: allow absolute paths and paths outside the current directory
    #[arg(long)]
    pub allow_escape: bool,

    /// Kill a RUN command (with every process it started) after this long [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub timeout: Option<Duration>,

    /// Stop running commands once the whole apply has taken this long [default: none]
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub total_timeout: Option<Duration>,

    /// Output kept per RUN task; the rest is dropped, the command goes on [default: 10MB]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub max_output: Option<usize>,

    /// Run CMD (your own, trusted) on the result; if it fails the branch is not moved
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,

    /// The reply's syntax [default: auto, or git config clada.syntax]
    #[arg(long, value_name = "NAME", value_parser = syntax_names(true))]
    pub syntax: Option<String>,

    #[command(flatten)]
    pub delimiters: super::settings::DelimiterArgs,
}

/// `--syntax`'s values (with `auto`: `auto` first), for its help and the
/// shell completions. The flag stays a name, read by [`syntax_choice`] as
/// git config `clada.syntax` is.
pub(crate) fn syntax_names(auto: bool) -> clap::builder::PossibleValuesParser {
    let auto = auto.then_some("auto");
    clap::builder::PossibleValuesParser::new(
        auto.into_iter()
            .chain(syntax::Syntax::ALL.map(syntax::Syntax::name)),
    )
}

fn flag(on: bool) -> Option<bool> {
    on.then_some(true)
}

/// The settings of one apply: how to show it, and what the transaction
/// does.
pub(crate) fn resolve(
    args: &ApplyArgs,
    layers: &Layers<'_>,
) -> Result<(Presentation, Settings), CliError> {
    let format = layers.get(
        args.format,
        "format",
        |s| match s {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            _ => None,
        },
        "text or json",
    )?;
    let output_mode = layers.get(
        args.output_mode,
        "outputMode",
        |s| match s {
            "stream" => Some(OutputMode::Stream),
            "buffer" => Some(OutputMode::Buffer),
            "silent" => Some(OutputMode::Silent),
            _ => None,
        },
        "stream, buffer or silent",
    )?;
    let error_detail = layers.get(
        args.error_detail,
        "errorDetail",
        |s| match s {
            "minimal" => Some(ErrorDetail::Minimal),
            "full" => Some(ErrorDetail::Full),
            "debug" => Some(ErrorDetail::Debug),
            _ => None,
        },
        "minimal, full or debug",
    )?;
    let match_mode = layers.get(
        args.match_mode,
        "match",
        |s| match s {
            "exact" => Some(MatchArg::Exact),
            "whitespace" => Some(MatchArg::Whitespace),
            _ => None,
        },
        "exact or whitespace",
    )?;
    let author = author(args.git_author.clone(), layers)?;
    let error_detail = error_detail.unwrap_or(ErrorDetail::Minimal);
    let run = commands::resolve(
        RunFlags {
            timeout: args.timeout,
            total_timeout: args.total_timeout,
            max_output: args.max_output,
            verify: args.verify.clone(),
        },
        layers,
    )?;
    let presentation = Presentation {
        format: format.unwrap_or(Format::Text),
        output_mode: output_mode.unwrap_or(OutputMode::Stream),
        error_detail,
        palette: super::paint::stdout(),
    };
    let settings = Settings {
        dry_run: layers
            .get_bool(flag(args.dry_run), "dryRun")?
            .unwrap_or(false),
        atomic: layers
            .get_bool(flag(args.atomic), "atomic")?
            .unwrap_or(false),
        author,
        exec: ExecOptions {
            match_mode: match match_mode {
                Some(MatchArg::Whitespace) => MatchMode::Whitespace,
                _ => MatchMode::Exact,
            },
            final_newline: layers.get_bool(None, "finalNewline")?.unwrap_or(true),
            allow_placeholders: layers
                .get_bool(flag(args.allow_placeholders), "allowPlaceholders")?
                .unwrap_or(false),
            full_detail: error_detail >= ErrorDetail::Full,
            max_output: run.max_output,
            max_file_size: layers
                .get_limit(
                    None,
                    "maxFileSize",
                    super::config::parse_size,
                    "a size",
                    Some(crate::apply::exec::MAX_FILE_SIZE),
                )?
                .unwrap_or(crate::apply::exec::MAX_FILE_SIZE),
            // Set when the transaction starts.
            feedback_until: None,
            // The reply's syntax's, set by the transaction.
            vocab: &crate::vocab::CSL,
        },
        run,
    };
    Ok((presentation, settings))
}

/// `--syntax` (flag, then git config `clada.syntax`).
pub(crate) fn syntax_choice(
    flag: Option<&str>,
    repo: Option<&Repository>,
) -> Result<Choice, CliError> {
    let choice = Layers::new(repo).get(
        flag.map(str::to_owned),
        "syntax",
        |s| Choice::from_name(s).map(|_| s.to_string()),
        "auto or a syntax name",
    )?;
    let Some(name) = choice else {
        return Ok(Choice::Auto);
    };
    match Choice::from_name(&name) {
        Some(choice) => Ok(choice),
        None => Err(
            CliError::new(format!("unknown syntax {name:?}")).hint(format!(
                "use auto or one of: {}",
                syntax::Syntax::read_names()
            )),
        ),
    }
}

/// Who clada's commits are by: `flag`, else `clada.gitAuthor`, else
/// `clada <clada@localhost>`.
pub(crate) fn author(flag: Option<String>, layers: &Layers<'_>) -> Result<Identity, CliError> {
    match layers.get(flag, "gitAuthor", |s| Some(s.to_string()), "")? {
        None => Ok(Identity::default()),
        Some(text) => Identity::parse(&text).ok_or_else(|| {
            CliError::new(format!(
                "git author {text:?} is not of the form 'Name <email>'"
            ))
        }),
    }
}

impl From<transaction::Error> for CliError {
    fn from(e: transaction::Error) -> CliError {
        CliError {
            message: e.message,
            hint: e.hint,
        }
    }
}

pub fn run_apply(args: ApplyArgs) -> Result<Outcome, CliError> {
    // Discovered once: opening a repository reads its configuration files.
    let discovered = Repository::discover(std::path::Path::new("."));
    let json = args.format == Some(Format::Json)
        || (args.format.is_none()
            && discovered
                .as_ref()
                .ok()
                .and_then(Option::as_ref)
                .and_then(|r| r.config_string("clada.format"))
                .is_some_and(|f| f.trim() == "json"));
    match apply_or_stop(args, discovered, &mut Caller::default()) {
        // An agent that asked for JSON gets JSON even when apply stops
        // before it has a report; the message still goes to stderr too.
        Err(e) if json => {
            render::write_json(&render::JsonError {
                status: "error",
                exit_code: Outcome::Fatal.exit_code(),
                message: &e.message,
                hint: e.hint.as_deref(),
            })?;
            Err(e)
        }
        other => other,
    }
}

/// The apply, from the reply to the report on stdout (captured by `git
/// clada mcp`): what `run_apply` does short of the JSON error document.
pub(crate) fn apply_or_stop(
    args: ApplyArgs,
    discovered: Result<Option<Repository>, crate::git::GitError>,
    caller: &mut Caller,
) -> Result<Outcome, CliError> {
    let mut timings = Timings::default();
    let repo = discovered.map_err(|e| CliError::new(e.to_string()))?;
    let delims = settings::delimiters_in(
        repo.as_ref(),
        args.delimiters.start_delimiter.as_deref(),
        args.delimiters.end_delimiter.as_deref(),
    )?;
    let choice = syntax_choice(args.syntax.as_deref(), repo.as_ref())?;
    // A caller with the reply in memory (the MCP server) serves a
    // repository: `clada.noGit`, meant for the command line, is not its.
    let no_git = caller.input.is_none()
        && (args.no_git
            || Layers::new(repo.as_ref())
                .get_bool(None, "noGit")?
                .unwrap_or(false));
    if no_git {
        return run_no_git(&args, repo.as_ref(), &delims, choice);
    }
    if args.allow_escape {
        return Err(CliError::new("--allow-escape works only with --no-git")
            .hint("a commit can hold only paths inside the repository; add --no-git to write outside it"));
    }
    let Some(mut repo) = repo else {
        return Err(CliError::new("not a git repository (or any of its parents)")
            .hint("run it inside a repository, or use --no-git to apply in the current directory without commits"));
    };
    let input = match caller.input.take() {
        Some(input) => input,
        None => read_input(&args, &repo)?,
    };
    let parsed = parse_input(&input, choice, &delims);
    let (early, early_settings) = resolve(&args, &Layers::new(Some(&repo)))?;
    if parsed.has_fatal() {
        if let Some(text) = &mut caller.text {
            write_fatal(
                text,
                &parsed,
                &input.origin,
                Format::Text,
                &crate::style::Palette::PLAIN,
            )
            .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
        }
        return finish_fatal(&parsed, &input.origin, early.format);
    }
    if parsed.is_empty() {
        let applied = transaction::no_operations(&parsed);
        if let Some(text) = &mut caller.text {
            write_unapplied(text, &parsed, &plain_text(&early), &applied)
                .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
        }
        return finish_unapplied(&parsed, &early, applied);
    }
    // Before the HEAD check: a rebase detaches HEAD, and "switch to a
    // branch" would be the wrong advice.
    super::guard::refuse_operation_in_progress(&repo, "applying")?;
    // Stepped back, the way back to a branch is step-forward (which also
    // restores the saved work), not git switch.
    let (branch, base) = super::guard::on_branch(&repo, "apply")?;
    if repo.workdir().is_none() {
        return Err(CliError::new(
            "the repository is bare: apply needs a working tree",
        ));
    }
    let _lock = super::guard::take_lock(&repo, args.lock_timeout, "apply")?;
    timings.mark("read, parse, lock");
    // A dry run changes nothing, not even an interrupted update.
    if !early_settings.dry_run {
        for said in transaction::finish_interrupted_update(&repo, &branch)? {
            eprintln!("clada: {said}");
        }
        super::guard::finish_interrupted_switch(&repo)?;
        // Files an earlier apply could not write are written once they can be.
        repo.retry_unwritten().map_err(git_err)?;
    }
    // A step-back session remembers its branch's tip; moving that branch
    // under it would make step-forward refuse to return.
    if !early_settings.dry_run {
        super::guard::refuse_session_on(&repo, "apply", Some(&branch))?;
    }
    // The branch as it is now, under the lock.
    let base = match repo.head().map_err(git_err)? {
        Head::Branch { commit, .. } => commit,
        Head::Detached(_) => base,
    };
    // Commands run in the scratch working tree, which reads objects from
    // disk: a dry run that runs commands writes its (unreferenced) objects
    // there; any other dry run keeps them in memory.
    if early_settings.dry_run && !parsed.has_run() && !verifies(&args, &repo) {
        repo.keep_objects_in_memory();
    }
    let target = Target {
        branch: &branch,
        base,
        worktree: true,
        refuse_run: None,
        request: None,
        pusher: None,
        replay: true,
        shared: None,
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let rendered = apply_and_render(
        &repo,
        &args,
        &input,
        &parsed,
        &target,
        interactive,
        &mut timings,
        caller,
    )?;
    write_stdout(|w| w.write_all(&rendered.report))?;
    Ok(rendered.outcome)
}

/// The text report's presentation for a caller that takes text beside
/// JSON: every task line at the end, no colour.
fn plain_text(shown: &Presentation) -> Presentation {
    Presentation {
        format: Format::Text,
        output_mode: OutputMode::Buffer,
        error_detail: shown.error_detail,
        palette: crate::style::Palette::PLAIN,
    }
}

/// What [`apply_and_render`] did.
pub(crate) struct Rendered {
    pub outcome: Outcome,
    pub applied: Applied,
    /// The report as `render` writes it (streamed task lines excepted).
    pub report: Vec<u8>,
}

fn outcome_of(ending: Ending) -> Outcome {
    match ending.exit_code() {
        0 => Outcome::Success,
        3 => Outcome::BranchMoved,
        _ => Outcome::Failed,
    }
}

/// Runs the transaction for a parsed reply (no fatal error) under the
/// lock, with this command line's settings, and renders its report:
/// what `apply` and the server hook share. `interactive`: ask on the
/// terminal about commands that are not approved. `caller`: its
/// question, its cancellation, and the text report for it too
/// ([`Caller::default`] for the command line and the hook).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_and_render(
    repo: &Repository,
    args: &ApplyArgs,
    input: &ReplyInput,
    parsed: &Parsed<'_>,
    target: &Target<'_>,
    interactive: bool,
    timings: &mut Timings,
    caller: &mut Caller,
) -> Result<Rendered, CliError> {
    let mut shown: Option<Presentation> = None;
    let cancel = caller.cancel.clone();
    let mut resolve_team = |team: Option<&[u8]>| -> Result<Settings, transaction::Error> {
        let (presentation, mut settings) = with_team(repo, args, team)?;
        shown = Some(presentation);
        settings.run.cancel = cancel.clone();
        Ok(settings)
    };
    // How it is shown must be known before the team file is read (task
    // lines stream while it runs): flags and git config decide that.
    let (early, _) = resolve(args, &Layers::new(Some(repo)))?;
    let streaming = early.format == Format::Text && early.output_mode == OutputMode::Stream;
    // Streamed, warnings come first on stdout; otherwise they head the
    // report (a server's result note holds them that way).
    let warnings = render::warning_lines(parsed, early.format);
    if streaming && !warnings.is_empty() {
        let _ = write_stdout(|out| out.write_all(warnings.as_bytes()));
    }
    let mut hooks = terminal_hooks(streaming, interactive);
    if let Some(ask) = caller.ask.take() {
        hooks.ask = Some(ask);
    }
    if let Some(on_line) = caller.on_line.take() {
        hooks.on_line = on_line;
    }
    let applied = transaction::apply(
        repo,
        parsed,
        &input.bytes,
        target,
        &mut resolve_team,
        hooks,
        timings,
    )?;
    let presentation = shown.unwrap_or(early);
    if repo.workdir().is_some() {
        commands::record_always(Some(repo), None, &applied.always)?;
    }
    if presentation.error_detail == ErrorDetail::Debug {
        print_timings(timings);
    }
    let mut report = if streaming {
        Vec::new()
    } else {
        warnings.into_bytes()
    };
    render(
        &mut report,
        &|id: ObjectId| repo.short(id),
        &presentation,
        parsed,
        &applied,
        streaming,
    )
    .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
    if let Some(text) = &mut caller.text {
        text.extend_from_slice(render::warning_lines(parsed, Format::Text).as_bytes());
        render(
            text,
            &|id: ObjectId| repo.short(id),
            &plain_text(&presentation),
            parsed,
            &applied,
            false,
        )
        .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
    }
    Ok(Rendered {
        outcome: outcome_of(applied.ending),
        applied,
        report,
    })
}

/// The tree an apply of `parsed` on commit `base` makes where there is no
/// working tree, with the settings `repo`'s config and the team file in
/// `base` give ([`transaction::replay_tree`], RUN refused for
/// `refuse_run`): `None` when the reply runs commands. Objects are written
/// through `repo`: give it an [`in_memory`](Repository::in_memory) one to
/// write nothing.
pub(crate) fn replayed_tree(
    repo: &Repository,
    parsed: &Parsed<'_>,
    base: ObjectId,
    refuse_run: Option<&str>,
) -> Result<Option<ObjectId>, transaction::Error> {
    let mut settings = |team: Option<&[u8]>| {
        with_team(repo, &ApplyArgs::default(), team).map(|(_, settings)| settings)
    };
    transaction::replay_tree(repo, parsed, base, refuse_run, &mut settings)
}

/// [`resolve`] with the team file `team` (as the state before an apply
/// holds it), as the transaction asks for settings.
fn with_team(
    repo: &Repository,
    args: &ApplyArgs,
    team: Option<&[u8]>,
) -> Result<(Presentation, Settings), transaction::Error> {
    let fail = |e: CliError| transaction::Error {
        message: e.message,
        hint: e.hint,
    };
    let layers = Layers::new(Some(repo)).with_team(team).map_err(fail)?;
    resolve(args, &layers).map_err(fail)
}

/// The terminal as the transaction's hooks: streamed task lines and
/// command output, and the question about commands that are not approved.
fn terminal_hooks(streaming: bool, interactive: bool) -> Hooks<'static> {
    Hooks {
        ask: interactive.then(commands::terminal_question),
        on_line: commands::output_lines(streaming),
        // Each operation of a block is heard as it finishes, then the
        // block: its own line only, after theirs.
        on_task: {
            let palette = super::paint::stdout();
            Box::new(move |t| {
                if streaming {
                    let _ = write_stdout(|out| out.write_all(own_lines(t, &palette).as_bytes()));
                }
            })
        },
    }
}

fn print_timings(timings: &Timings) {
    let mut text = String::new();
    for (phase, spent) in &timings.phases {
        text.push_str(&format!(
            "clada: {phase}: {:.1} ms\n",
            spent.as_secs_f64() * 1e3
        ));
    }
    text.push_str(&format!(
        "clada: total: {:.1} ms\n",
        timings.start.elapsed().as_secs_f64() * 1e3
    ));
    // A server hook prints this under the lock (the pushed team file may
    // ask for it): a pusher who hung up must not make it panic there.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
}

/// Whether a `--verify` command is set anywhere (flag, git config, or the
/// team file as it is in the working tree now).
fn verifies(args: &ApplyArgs, repo: &Repository) -> bool {
    let team = repo
        .workdir()
        .and_then(|w| std::fs::read(w.join(transaction::TEAM_CONFIG)).ok());
    Layers::new(Some(repo))
        .with_team(team.as_deref())
        .and_then(|layers| resolve(args, &layers))
        .is_ok_and(|(_, s)| s.run.verify.is_some())
}

fn git_err(e: crate::git::GitError) -> CliError {
    CliError::new(e.to_string())
}

fn read_input(args: &ApplyArgs, repo: &Repository) -> Result<ReplyInput, CliError> {
    if let Some(rev) = &args.from_commit {
        let id = repo.resolve_commit(rev).map_err(git_err)?;
        let bytes = repo.commit_message(id).map_err(git_err)?;
        return Ok(ReplyInput::from_bytes(format!("commit {rev}"), bytes));
    }
    if let Some(rev) = &args.from_note {
        let notes_ref = Layers::new(Some(repo))
            .get(
                args.notes_ref.clone(),
                "notesRef",
                |s| Some(s.to_string()),
                "",
            )?
            .unwrap_or_else(|| "refs/notes/clada-inbox".to_string());
        let id = repo.resolve_commit(rev).map_err(git_err)?;
        let Some(bytes) = repo.note(&notes_ref, id).map_err(git_err)? else {
            return Err(
                CliError::new(format!("commit {rev} has no note in {notes_ref}")).hint(format!(
                    "add one with: git notes --ref {notes_ref} add -F reply.md {rev}"
                )),
            );
        };
        return Ok(ReplyInput::from_bytes(format!("note on {rev}"), bytes));
    }
    ReplyInput::read(args.input.as_deref(), "apply")
}

/// A reply with fatal errors: nothing runs.
fn finish_fatal(parsed: &Parsed<'_>, origin: &str, format: Format) -> Result<Outcome, CliError> {
    let palette = super::paint::stdout();
    write_stdout(|out| write_fatal(out, parsed, origin, format, &palette))?;
    Ok(Outcome::Fatal)
}

/// The report of a reply with fatal errors.
fn write_fatal(
    out: &mut dyn std::io::Write,
    parsed: &Parsed<'_>,
    origin: &str,
    format: Format,
    palette: &crate::style::Palette,
) -> std::io::Result<()> {
    let fatal = parsed.counts().fatal;
    let message = format!(
        "FATAL: nothing was applied: the reply has {fatal} fatal error{}",
        if fatal == 1 { "" } else { "s" }
    );
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &render::fatal_report(parsed, message))
                .map_err(std::io::Error::from)?;
            out.write_all(b"\n")
        }
        Format::Text => {
            for d in parsed
                .diagnostics
                .iter()
                .filter(|d| d.severity() == Severity::Fatal)
            {
                writeln!(
                    out,
                    "{}",
                    csl::diagnostic::render_in(d, &parsed.source, origin, palette)
                )?;
            }
            let omitted = csl::Counts {
                fatal: parsed.diagnostics.omitted().fatal,
                ..csl::Counts::default()
            };
            if let Some(line) = csl::sink::not_shown(omitted) {
                writeln!(out, "{line}\n")?;
            }
            writeln!(out, "{message}")
        }
    }
}

/// A result reached without the transaction (no operations): rendered
/// like any other.
fn finish_unapplied(
    parsed: &Parsed<'_>,
    presentation: &Presentation,
    applied: Applied,
) -> Result<Outcome, CliError> {
    write_stdout(|w| write_unapplied(w, parsed, presentation, &applied))?;
    Ok(outcome_of(applied.ending))
}

fn write_unapplied(
    w: &mut dyn std::io::Write,
    parsed: &Parsed<'_>,
    presentation: &Presentation,
    applied: &Applied,
) -> std::io::Result<()> {
    let warnings = render::warning_lines(parsed, presentation.format);
    w.write_all(warnings.as_bytes())?;
    render(
        w,
        &|id: ObjectId| id.to_string(),
        presentation,
        parsed,
        applied,
        false,
    )
}

/// `--no-git`: edit the current directory in place.
fn run_no_git(
    args: &ApplyArgs,
    repo: Option<&Repository>,
    delims: &Delimiters,
    choice: Choice,
) -> Result<Outcome, CliError> {
    if args.from_commit.is_some() || args.from_note.is_some() {
        return Err(CliError::new(
            "--from-commit and --from-note need a repository; --no-git reads a file or stdin",
        ));
    }
    let input = ReplyInput::read(args.input.as_deref(), "apply")?;
    let parsed = parse_input(&input, choice, delims);
    let layers = Layers::new(repo);
    let (presentation, settings) = resolve(args, &layers)?;
    if parsed.has_fatal() {
        return finish_fatal(&parsed, &input.origin, presentation.format);
    }
    if settings.dry_run {
        return Err(CliError::new(
            "--dry-run with --no-git is not supported: there is no repository to compute the diff in",
        ));
    }
    if parsed.is_empty() {
        return finish_unapplied(&parsed, &presentation, transaction::no_operations(&parsed));
    }
    let allow_escape = layers
        .get_bool(flag(args.allow_escape), "allowEscape")?
        .unwrap_or(false);
    let root = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    let streaming =
        presentation.format == Format::Text && presentation.output_mode == OutputMode::Stream;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let warnings = render::warning_lines(&parsed, presentation.format);
    if !warnings.is_empty() {
        let _ = write_stdout(|out| out.write_all(warnings.as_bytes()));
    }
    let applied = transaction::apply_in_dir(
        &root,
        repo.map(Repository::common_dir),
        &parsed,
        &settings,
        allow_escape,
        terminal_hooks(streaming, interactive),
    )?;
    commands::record_always(repo, Some(&root), &applied.always)?;
    write_stdout(|w| {
        render(
            w,
            &|id: ObjectId| id.to_string(),
            &presentation,
            &parsed,
            &applied,
            streaming,
        )
    })?;
    Ok(outcome_of(applied.ending))
}
