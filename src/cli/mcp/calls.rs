//! What each MCP tool does, on a blocking thread: the command line's own
//! code run in process, its stdout captured (`cli::captured`), its JSON
//! document parsed back into the tool's structured result and its text
//! kept as the result's text.
//!
//! A command that stops with an error (exit 2 on the command line)
//! becomes the error document `{status: "error", exit_code, message,
//! hint}`, with `isError`: the tool ran and failed, which the model must
//! see, not a protocol error.

use std::path::Path;

use serde_json::{Value, json};

use crate::cli::apply::{self as cli_apply, ApplyArgs, Caller, ErrorDetail, Format, MatchArg};
use crate::cli::{
    CliError, Outcome, ReplyInput, captured, guard, log, parse, settings, status, undo,
};
use crate::git::Repository;

use super::tools::{
    ApplyParams, CheckParams, DetailParam, LogParams, MatchParam, ReadParams, ShowParams,
    UndoParams,
};

/// A tool's result: the structured document, the text for the model,
/// and whether it failed.
pub struct Done {
    pub structured: Value,
    pub text: String,
    pub is_error: bool,
}

impl Done {
    pub fn failed(e: &CliError) -> Done {
        let mut text = format!("error: {}", e.message);
        if let Some(hint) = &e.hint {
            text.push_str(&format!("\nhint: {hint}"));
        }
        Done {
            structured: json!({
                "status": "error",
                "exit_code": Outcome::Fatal.exit_code(),
                "message": e.message,
                "hint": e.hint,
            }),
            text,
            is_error: true,
        }
    }
}

/// A command's JSON output as a document.
fn document(output: &[u8]) -> Result<Value, CliError> {
    serde_json::from_slice(output)
        .map_err(|e| CliError::new(format!("the command wrote no JSON document: {e}")))
}

fn text(output: Vec<u8>) -> String {
    String::from_utf8_lossy(&output).into_owned()
}

/// `apply`, as `git clada apply --format json` with the reply in memory.
pub fn apply(params: ApplyParams, mut caller: Caller) -> Done {
    let args = ApplyArgs {
        format: Some(Format::Json),
        syntax: params.syntax,
        dry_run: params.dry_run,
        atomic: params.atomic,
        verify: params.verify,
        match_mode: params.match_mode.map(|m| match m {
            MatchParam::Exact => MatchArg::Exact,
            MatchParam::Whitespace => MatchArg::Whitespace,
        }),
        error_detail: params.error_detail.map(|d| match d {
            DetailParam::Minimal => ErrorDetail::Minimal,
            DetailParam::Full => ErrorDetail::Full,
        }),
        ..ApplyArgs::default()
    };
    caller.input = Some(ReplyInput::from_bytes(
        "reply".to_string(),
        params.reply.into_bytes(),
    ));
    run_apply(args, caller)
}

/// The apply of `caller`'s reply with `args`: its JSON report, its text
/// report, and whether anything was left undone.
fn run_apply(args: ApplyArgs, mut caller: Caller) -> Done {
    caller.text = Some(Vec::new());
    let discovered = Repository::discover(Path::new("."));
    let (result, json) = captured(|| cli_apply::apply_or_stop(args, discovered, &mut caller));
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => return Done::failed(&e),
    };
    match document(&json) {
        Ok(structured) => Done {
            structured,
            text: text(caller.text.unwrap_or_default()),
            is_error: outcome != Outcome::Success,
        },
        Err(e) => Done::failed(&e),
    }
}

/// `check`, as `git clada parse` on the reply.
pub fn check(params: CheckParams) -> Done {
    match check_or_stop(params) {
        Ok(done) => done,
        Err(e) => Done::failed(&e),
    }
}

fn check_or_stop(params: CheckParams) -> Result<Done, CliError> {
    let repo = Repository::discover(Path::new(".")).ok().flatten();
    let delims = settings::delimiters_in(repo.as_ref(), None, None)?;
    let choice = cli_apply::syntax_choice(params.syntax.as_deref(), repo.as_ref())?;
    let input = ReplyInput::from_bytes("reply".to_string(), params.reply.into_bytes());
    let parsed = match input.too_large {
        Some(_) => cli_apply::parse_input(&input, choice, &delims),
        None => crate::syntax::check(&input.bytes, choice, &delims),
    };
    let mut json = Vec::new();
    crate::csl::json_writer::to_writer(&mut json, &parsed)
        .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
    let mut shown = Vec::new();
    let root = repo.as_ref().and_then(Repository::workdir);
    let outcome = parse::report(&mut shown, &parsed, &input.origin, root, &delims)
        .map_err(|e| CliError::new(format!("cannot write the report: {e}")))?;
    Ok(Done {
        structured: document(&json)?,
        text: text(shown),
        is_error: outcome != Outcome::Success,
    })
}

/// `status`: the JSON document and the text, from one look.
pub fn status() -> Done {
    match status::status_both() {
        Ok((structured, text)) => Done {
            structured,
            text,
            is_error: false,
        },
        Err(e) => Done::failed(&e),
    }
}

/// `log`: the JSON document and the text, from one look.
pub fn log(params: LogParams) -> Done {
    let args = log::LogArgs {
        rev: params.rev,
        max_count: params.max_count,
        format: None,
    };
    match log::log_both(&args) {
        Ok((structured, text)) => Done {
            structured,
            text,
            is_error: false,
        },
        Err(e) => Done::failed(&e),
    }
}

pub fn show(params: ShowParams) -> Done {
    let rev = params.rev.unwrap_or_else(|| "HEAD".to_string());
    let (result, shown) = captured(|| {
        log::run_show(log::ShowArgs {
            rev: rev.clone(),
            reply: params.reply,
        })
    });
    match result {
        Ok(_) => {
            let shown = text(shown);
            Done {
                structured: json!({
                    "status": "success",
                    "rev": rev,
                    "reply": params.reply,
                    "text": shown,
                }),
                text: shown,
                is_error: false,
            }
        }
        Err(e) => Done::failed(&e),
    }
}

/// `undo` or `redo`: what it said, and the status after it.
fn history(run: impl FnOnce() -> Result<Outcome, CliError>) -> Done {
    let (result, said) = captured(run);
    if let Err(e) = result {
        return Done::failed(&e);
    }
    let said = text(said);
    let state = match status::status_both() {
        Ok((state, _)) => state,
        Err(e) => return Done::failed(&e),
    };
    Done {
        structured: json!({
            "status": "success",
            "exit_code": 0,
            "message": said,
            "state": state,
        }),
        text: said,
        is_error: false,
    }
}

pub fn undo(params: UndoParams) -> Done {
    let count = params.count.unwrap_or(1);
    if !(1..=1000).contains(&count) {
        return Done::failed(
            &CliError::new(format!("count {count} is out of range")).hint("undo 1 to 1000 applies"),
        );
    }
    history(|| {
        undo::run_undo(undo::UndoArgs {
            count,
            force: false,
            lock: guard::LockArgs { lock_timeout: None },
        })
    })
}

pub fn redo() -> Done {
    history(|| {
        undo::run_redo(undo::RedoArgs {
            lock: guard::LockArgs { lock_timeout: None },
        })
    })
}

/// `read`: one READ operation of the plan, written as a JSON reply and
/// applied as a dry run: the state read is the one an apply would see
/// (the user's uncommitted work included, ignored files refused, paths
/// checked as every apply checks them), nothing is written, no verify
/// runs (nothing changes), and the output is bounded as in apply.
pub fn read(params: ReadParams) -> Done {
    let op = match read_op(&params) {
        Ok(op) => op,
        Err(e) => return Done::failed(&e),
    };
    let reply = json!([op]).to_string();
    let caller = Caller {
        input: Some(ReplyInput::from_bytes(
            "read".to_string(),
            reply.into_bytes(),
        )),
        ..Caller::default()
    };
    let args = ApplyArgs {
        format: Some(Format::Json),
        syntax: Some("json".to_string()),
        dry_run: true,
        ..ApplyArgs::default()
    };
    let mut done = run_apply(args, caller);
    let task = done.structured.pointer("/tasks/0").cloned();
    let succeeded = task.as_ref().is_some_and(|t| t["status"] == "SUCCESS");
    if !succeeded {
        return done;
    }
    let output = task
        .as_ref()
        .and_then(|t| t["output"].as_str())
        .unwrap_or_default()
        .to_string();
    let shown = match params.lines {
        Some([first, last]) => match line_range(&output, first, last) {
            Ok(lines) => lines,
            Err(e) => return Done::failed(&e),
        },
        None => output,
    };
    if let Some(kept) = done
        .structured
        .pointer_mut("/tasks/0/output")
        .filter(|o| o.is_string())
    {
        *kept = Value::String(shown.clone());
    }
    done.text = shown;
    done
}

/// The JSON form of the read `params` ask for (syntaxes.md, `json`);
/// arguments that do not make one read are an error naming them.
pub fn read_op(p: &ReadParams) -> Result<Value, CliError> {
    let given = [
        p.paths.is_some(),
        p.list.is_some(),
        p.grep.is_some(),
        p.glob.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(CliError::new(
            "give exactly one of paths, list, grep and glob",
        ));
    }
    if p.lines.is_some() && p.paths.as_ref().is_none_or(|paths| paths.len() != 1) {
        return Err(CliError::new("lines needs exactly one file in paths"));
    }
    if (p.path.is_some() || p.include.is_some()) && p.grep.is_none() {
        return Err(CliError::new("path and include go with grep"));
    }
    if p.base.is_some() && p.glob.is_none() {
        return Err(CliError::new("base goes with glob"));
    }
    Ok(if let Some(paths) = &p.paths {
        json!({"op": "read", "paths": paths})
    } else if let Some(dir) = &p.list {
        json!({"op": "read", "list": dir})
    } else if let Some(pattern) = &p.grep {
        json!({"op": "read", "grep": pattern, "path": p.path.clone().unwrap_or_default(), "include": p.include})
    } else {
        json!({"op": "read", "glob": p.glob, "base": p.base.clone().unwrap_or_default()})
    })
}

/// Lines `first..=last` (1-based) of a file's text.
fn line_range(text: &str, first: u32, last: u32) -> Result<String, CliError> {
    let count = text.lines().count();
    if first == 0 || last < first {
        return Err(CliError::new(format!(
            "lines [{first}, {last}] is not a range: give [first, last], 1-based, first <= last"
        )));
    }
    if first as usize > count {
        return Err(CliError::new(format!(
            "lines [{first}, {last}] start past the end: the file has {count} line(s)"
        )));
    }
    Ok(text
        .split_inclusive('\n')
        .skip(first as usize - 1)
        .take((last - first + 1) as usize)
        .collect())
}

/// Whether command line `line` may run as an apply's `verify` without
/// asking: the user's own configured `clada.verify`, or a line the user
/// approved for RUN (`git clada allow`, the user's own or the team's).
pub fn verify_is_approved(line: &str) -> bool {
    let Ok(Some(repo)) = Repository::discover(Path::new(".")) else {
        return false;
    };
    let layers = crate::cli::config::Layers::new(Some(&repo));
    let configured = layers
        .get(None, "verify", |s| Some(s.to_string()), "")
        .ok()
        .flatten();
    if configured.as_deref() == Some(line) {
        return true;
    }
    let private =
        crate::transaction::private_approvals(repo.common_dir()).is_ok_and(|a| a.allows(line));
    let shared = repo
        .workdir()
        .and_then(|root| crate::run::policy::Approvals::load(root).ok())
        .is_some_and(|a| a.allows(line));
    private || shared
}

/// Records `line` as approved, as "always" at a RUN question does.
pub fn approve(line: &str) -> Result<(), CliError> {
    let repo = Repository::discover(Path::new("."))
        .map_err(|e| CliError::new(e.to_string()))?
        .ok_or_else(|| CliError::new("not a git repository"))?;
    crate::cli::commands::record_always(Some(&repo), None, &[line.to_string()])
}
