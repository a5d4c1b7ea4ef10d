//! The protocol side of `git clada mcp`: rmcp's `ServerHandler` for the
//! tools (`tools`), the syntax guides as prompts, the repository served
//! (and the client's roots), and what a call hears while it runs:
//! progress notifications, cancellation, and the question about a RUN
//! line that is not approved (elicitation).
//!
//! Every tool runs on a blocking thread (`calls`): the command line's code
//! is synchronous, and a long RUN must not hold the protocol up (pings,
//! cancellations and other calls go on meanwhile). Calls that change the
//! repository take clada's lock as the command line does, so a second
//! call (or a second client, or a `git clada apply` in a terminal) waits
//! for the first as a second `git clada apply` would.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, Prompt,
    PromptMessage, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt as _};
use tokio_util::sync::CancellationToken;

use crate::cli::CliError;
use crate::cli::apply::Caller;
use crate::git::Repository;
use crate::run::Answer;
use crate::run::spawn::Cancel;
use crate::syntax::Syntax;

use super::calls::{self, Done};
use super::tools;

/// The repository a server serves: its working tree's root, which is the
/// process's current directory while the server runs (the command line's
/// code finds the repository from there).
#[derive(Debug, Clone)]
pub struct Served {
    root: PathBuf,
}

impl Served {
    /// The repository `dir` is in; it becomes the current directory.
    pub fn open(dir: &Path) -> Result<Served, CliError> {
        let repo = Repository::discover(dir)
            .map_err(|e| CliError::new(e.to_string()))?
            .ok_or_else(|| {
                CliError::new(format!("{} is not in a git repository", dir.display()))
                    .hint("start `git clada mcp` inside a repository, or name one with --repo DIR")
            })?;
        let root = repo
            .workdir()
            .ok_or_else(|| CliError::new("the repository is bare: apply needs a working tree"))?;
        let root = root
            .canonicalize()
            .map_err(|e| CliError::new(format!("cannot resolve {}: {e}", root.display())))?;
        std::env::set_current_dir(&root)
            .map_err(|e| CliError::new(format!("cannot enter {}: {e}", root.display())))?;
        Ok(Served { root })
    }
}

/// The server's state, shared by the calls.
#[derive(Clone)]
struct Server {
    served: Arc<Mutex<Option<Served>>>,
    /// The cancel flags of the calls running: set when the client goes
    /// away (stdin ends), so that none outlives the session.
    running: Arc<Mutex<Vec<Cancel>>>,
}

/// Runs the server on stdin and `protocol` (the real stdout) until the
/// client closes stdin.
pub async fn serve(served: Option<Served>, protocol: tokio::fs::File) -> Result<(), CliError> {
    let server = Server {
        served: Arc::new(Mutex::new(served)),
        running: Arc::new(Mutex::new(Vec::new())),
    };
    let calls = Arc::clone(&server.running);
    let session = server
        .serve((tokio::io::stdin(), protocol))
        .await
        .map_err(|e| CliError::new(format!("the MCP session did not start: {e}")))?;
    let ended = session.waiting().await;
    // The client is gone: calls still running are cancelled as a client's
    // cancellation would (their commands killed, nothing committed), and
    // the caller waits for them before exiting (`run_mcp`).
    for cancel in calls.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        cancel.set();
    }
    ended.map_err(|e| CliError::new(format!("the MCP session ended with an error: {e}")))?;
    Ok(())
}

/// Asks the user, through the client, whether to run `line`; `None` when
/// the client cannot ask (or the question failed). The form has one
/// field, `answer`: once, always (approve it for this repository, as `git
/// clada allow`) or no.
fn ask_client(
    peer: &Peer<RoleServer>,
    handle: &tokio::runtime::Handle,
    cancelled: &CancellationToken,
    what: &str,
    line: &str,
) -> Option<Answer> {
    let message = format!("The model asks git-clada to run {what}:\n\n    {line}\n\nRun it?");
    let schema = serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Run it?",
                "description": "once: run it this time; always: run it and approve it for this repository; no: do not run it",
                "enum": ["once", "always", "no"],
            },
        },
        "required": ["answer"],
    }));
    let schema = match schema {
        Ok(schema) => schema,
        Err(e) => {
            eprintln!("clada mcp: the approval form is not a valid elicitation schema: {e}");
            return None;
        }
    };
    let question = peer.create_elicitation(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    });
    // A call cancelled while the user has not answered yet stops waiting:
    // the command is not run, and the apply stops before it commits.
    let asked = handle.block_on(async {
        tokio::select! {
            asked = question => Some(asked),
            () = cancelled.cancelled() => None,
        }
    });
    let Some(asked) = asked else {
        return Some(Answer::No);
    };
    match asked {
        Ok(result) => match result.action {
            ElicitationAction::Accept => {
                let answer = result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("answer"))
                    .and_then(|a| a.as_str());
                Some(match answer {
                    Some("once") => Answer::Yes,
                    Some("always") => Answer::Always,
                    // Anything else is not a yes.
                    _ => Answer::No,
                })
            }
            // Declined, cancelled, or an action this version does not know.
            _ => Some(Answer::No),
        },
        Err(e) => {
            eprintln!("clada mcp: could not ask the client about `{line}`: {e}");
            None
        }
    }
}

fn can_ask(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&rmcp::service::ElicitationMode::Form)
}

/// Reads a tool's arguments, strictly: a bad one is -32602 naming it
/// (`apply: arguments: reply: invalid type: …`).
fn arguments<P: serde::de::DeserializeOwned>(
    request: &CallToolRequestParams,
) -> Result<P, ErrorData> {
    let value = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let named = if at == "." {
            String::new()
        } else {
            format!("{at}: ")
        };
        invalid(&request.name, format!("{named}{}", e.inner()))
    })
}

/// -32602 for a tool's arguments.
fn invalid(tool: &str, why: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(format!("{tool}: arguments: {why}"), None)
}

/// A tool call, its arguments read.
enum Call {
    Apply(tools::ApplyParams),
    Check(tools::CheckParams),
    Read(tools::ReadParams),
    Status,
    Log(tools::LogParams),
    Show(tools::ShowParams),
    Undo(tools::UndoParams),
    Redo,
}

impl Call {
    fn read(request: &CallToolRequestParams) -> Result<Call, ErrorData> {
        let syntax = |name: &Option<String>| match name.as_deref() {
            Some(name) if crate::syntax::Choice::from_name(name).is_none() => Err(invalid(
                &request.name,
                format!(
                    "syntax: unknown syntax {name:?}: use auto or one of {}",
                    Syntax::read_names()
                ),
            )),
            _ => Ok(()),
        };
        Ok(match request.name.as_ref() {
            "apply" => {
                let params: tools::ApplyParams = arguments(request)?;
                syntax(&params.syntax)?;
                Call::Apply(params)
            }
            "check" => {
                let params: tools::CheckParams = arguments(request)?;
                syntax(&params.syntax)?;
                Call::Check(params)
            }
            "read" => {
                let params: tools::ReadParams = arguments(request)?;
                calls::read_op(&params).map_err(|e| invalid(&request.name, e.message))?;
                Call::Read(params)
            }
            "status" => arguments::<tools::NoParams>(request).map(|_| Call::Status)?,
            "log" => Call::Log(arguments(request)?),
            "show" => Call::Show(arguments(request)?),
            "undo" => {
                let params: tools::UndoParams = arguments(request)?;
                if let Some(count) = params.count
                    && !(1..=1000).contains(&count)
                {
                    return Err(invalid(
                        &request.name,
                        format!("count: {count} is out of range: undo 1 to 1000 applies"),
                    ));
                }
                Call::Undo(params)
            }
            "redo" => arguments::<tools::NoParams>(request).map(|_| Call::Redo)?,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {other:?}: the tools are apply, check, read, status, log, show, undo, redo"
                    ),
                    None,
                ));
            }
        })
    }
}

/// What an apply hears from the client, made on the blocking thread that
/// runs it (the hooks need not be Send): the cancellation flag, the last
/// line of command output (for progress), and the question about a
/// command that is not approved when the client can ask.
fn caller_for(
    context: &RequestContext<RoleServer>,
    cancel: &Cancel,
    last_line: &Arc<Mutex<String>>,
) -> impl FnOnce() -> Caller + Send + 'static {
    let (peer, cancel, last_line) = (context.peer.clone(), cancel.clone(), Arc::clone(last_line));
    let cancelled = context.ct.clone();
    let handle = tokio::runtime::Handle::current();
    move || {
        let mut caller = Caller {
            cancel: Some(cancel),
            ..Caller::default()
        };
        caller.on_line = Some(Box::new(move |label: &str, line: &str| {
            *last_line.lock().unwrap_or_else(|e| e.into_inner()) = format!("[{label}] {line}");
        }));
        if can_ask(&peer) {
            caller.ask = Some(Box::new(move |line: &str| {
                // A question that could not be asked is not a yes; the
                // reason is on stderr.
                ask_client(&peer, &handle, &cancelled, "a command from the reply", line)
                    .unwrap_or(Answer::No)
            }));
        }
        caller
    }
}

/// Sends `notifications/progress` for a call once a second, after its
/// first second (as the terminal's progress line): the seconds so far and
/// the last line of command output. Ends when the client stops listening
/// or the call's task aborts it.
async fn report_progress(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
    tool: String,
    last_line: Arc<Mutex<String>>,
) {
    let started = Instant::now();
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    loop {
        tick.tick().await;
        let line = last_line.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let secs = started.elapsed().as_secs_f64().floor();
        let mut message = format!("{tool}: running for {secs:.0} s");
        if !line.is_empty() {
            message.push_str(&format!("; last output: {line}"));
        }
        let note = ProgressNotificationParam::new(token.clone(), secs).with_message(message);
        if peer.notify_progress(note).await.is_err() {
            break;
        }
    }
}

impl Server {
    /// The repository, checked against the client's roots when it has
    /// them: a server serves only a repository inside a root the client
    /// offered, and without one of its own takes the first root that is
    /// in a repository.
    // Roots are what protocol 2025-11-25 gives for this; a later revision
    // (SEP-2577) deprecates them.
    #[allow(deprecated)]
    async fn repository(&self, peer: &Peer<RoleServer>) -> Result<Served, CliError> {
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let roots: Vec<PathBuf> = if offers_roots {
            match peer.list_roots().await {
                Ok(listed) => listed
                    .roots
                    .iter()
                    .filter_map(|r| r.uri.strip_prefix("file://"))
                    .map(|p| PathBuf::from(percent_decoded(p)))
                    .map(|p| p.canonicalize().unwrap_or(p))
                    .collect(),
                Err(e) => {
                    return Err(CliError::new(format!(
                        "the client offers roots but did not list them: {e}"
                    )));
                }
            }
        } else {
            Vec::new()
        };
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        if served.is_none() {
            let first = roots.iter().find_map(|r| Served::open(r).ok());
            *served = first;
        }
        let Some(repo) = served.clone() else {
            return Err(CliError::new("no repository to serve: the server was not started in one and no root the client offers is in one")
                .hint("start it with `git clada mcp --repo DIR`, or open a folder that is in a git repository"));
        };
        if offers_roots && !roots.iter().any(|r| repo.root.starts_with(r)) {
            return Err(CliError::new(format!(
                "the repository {} is outside the roots the client offers ({})",
                repo.root.display(),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .hint("open the repository's folder in the client, or start the server with --repo inside one of its roots"));
        }
        Ok(repo)
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<Done, ErrorData> {
        // Arguments first: a malformed call is a protocol error whatever
        // the repository.
        let call = Call::read(&request)?;
        if !matches!(call, Call::Check(_))
            && let Err(e) = self.repository(&context.peer).await
        {
            return Ok(Done::failed(&e));
        }
        let cancel = Cancel::default();
        let last_line = Arc::new(Mutex::new(String::new()));
        let work: Box<dyn FnOnce() -> Done + Send> = match call {
            Call::Apply(params) => {
                if let Some(line) = params.verify.clone()
                    && !calls::verify_is_approved(&line)
                    && let Err(e) = self.approve_verify(&context, &line).await
                {
                    return Ok(Done::failed(&e));
                }
                let caller = caller_for(&context, &cancel, &last_line);
                Box::new(move || calls::apply(params, caller()))
            }
            Call::Check(params) => Box::new(move || calls::check(params)),
            Call::Read(params) => Box::new(move || calls::read(params)),
            Call::Status => Box::new(calls::status),
            Call::Log(params) => Box::new(move || calls::log(params)),
            Call::Show(params) => Box::new(move || calls::show(params)),
            Call::Undo(params) => Box::new(move || calls::undo(params)),
            Call::Redo => Box::new(calls::redo),
        };
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(cancel.clone());
        let running = tokio::task::spawn_blocking(work);
        let progress = context.meta.get_progress_token().map(|token| {
            tokio::spawn(report_progress(
                context.peer.clone(),
                token,
                request.name.to_string(),
                Arc::clone(&last_line),
            ))
        });
        let cancelled = {
            let (ct, cancel) = (context.ct.clone(), cancel.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.set();
            })
        };
        let done = running.await;
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|c| !c.is(&cancel));
        cancelled.abort();
        if let Some(progress) = progress {
            progress.abort();
        }
        done.map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))
    }

    /// The `verify` command of an apply, approved by the user through the
    /// client; refused when the client cannot ask.
    async fn approve_verify(
        &self,
        context: &RequestContext<RoleServer>,
        line: &str,
    ) -> Result<(), CliError> {
        let peer = &context.peer;
        let refused = || {
            CliError::new(format!(
                "command_not_allowed: verify `{line}` is not approved, and the client cannot ask the user"
            ))
            .hint(format!(
                "the user can approve it with: git clada allow {} (or set it as git config clada.verify)",
                shell_words::quote(line)
            ))
        };
        if !can_ask(peer) {
            return Err(refused());
        }
        let (peer, line_owned, cancelled) = (peer.clone(), line.to_string(), context.ct.clone());
        let handle = tokio::runtime::Handle::current();
        let answer = tokio::task::spawn_blocking(move || {
            ask_client(
                &peer,
                &handle,
                &cancelled,
                "this command to verify the result",
                &line_owned,
            )
        })
        .await
        .ok()
        .flatten();
        match answer {
            Some(Answer::Yes) => Ok(()),
            Some(Answer::Always) => calls::approve(line),
            Some(Answer::No) => Err(CliError::new(format!(
                "command_not_allowed: verify `{line}` was declined by the user; nothing was applied"
            ))),
            None => Err(refused()),
        }
    }
}

/// `%XX` escapes of a file URI's path decoded (a `%` not followed by two
/// hex digits is kept as it is).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

const INSTRUCTIONS: &str = "git-clada applies the file edits and commands you write to this git repository as one transaction. Use `apply` with your reply (any syntax: CSL, aider SEARCH/REPLACE, apply_patch, unified diff, JSON operations); read each failed task's message and closest match, and send only the failed tasks again, fixed. Use `check` to validate a reply without applying it, `read` to see files, `undo` to take an apply back. The prompts are guides to each syntax.";

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("git-clada", env!("CARGO_PKG_VERSION")).with_title("git-clada"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let done = self.call(request, context).await?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(done.text)]);
        result.structured_content = Some(done.structured);
        result.is_error = Some(done.is_error);
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = Syntax::ALL
            .iter()
            .map(|s| {
                Prompt::new(
                    prompt_name(*s),
                    Some(format!(
                        "How to write a reply in {} that git-clada applies (git clada prompt --syntax {})",
                        s.name(),
                        s.name()
                    )),
                    None,
                )
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(syntax) = Syntax::ALL
            .iter()
            .find(|s| prompt_name(**s) == request.name)
        else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt {:?}: the prompts are {}",
                    request.name,
                    Syntax::ALL
                        .iter()
                        .map(|s| prompt_name(*s))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        };
        let delims = Repository::discover(Path::new("."))
            .ok()
            .flatten()
            .and_then(|repo| crate::cli::settings::delimiters_in(Some(&repo), None, None).ok())
            .unwrap_or_default();
        let guide = crate::cli::prompt::guide(*syntax, &delims);
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, guide)]);
        result.description = Some(format!("The git-clada guide to {}", syntax.name()));
        Ok(result.into())
    }
}

fn prompt_name(syntax: Syntax) -> String {
    format!("syntax-{}", syntax.name())
}

#[cfg(test)]
mod tests {
    use super::percent_decoded;

    #[test]
    fn a_file_uri_path_is_decoded_and_a_bad_escape_kept() {
        assert_eq!(percent_decoded("/home/a%20b/r%C3%A9po"), "/home/a b/répo");
        for kept in ["/tmp/%aé", "/tmp/%", "/tmp/%4", "/tmp/%+1", "/tmp/é%zz"] {
            assert_eq!(percent_decoded(kept), kept);
        }
    }
}
