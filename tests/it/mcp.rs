//! `git clada mcp` driven by the MCP SDK's own client (rmcp) over the real
//! binary's stdin and stdout, as an agent host drives it.
//!
//! Every session goes through a tee that keeps each line the server wrote
//! to stdout; closing a session checks that every one was a JSON-RPC
//! message (a stray print would break every host), that the server exited
//! cleanly on the end of stdin, and every structured result is checked
//! against its tool's output schema with a JSON Schema validator.

// Roots are how a client bounds a server under protocol 2025-11-25,
// which this server speaks; a later revision deprecates them (SEP-2577).
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, GetPromptRequestParams,
    Implementation, ListRootsResult, ProgressNotificationParam, Root,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use crate::common::{self, DATE};

/// What the client says and hears besides the calls.
#[derive(Clone, Default)]
struct Host {
    /// Answer to give when the server asks about a command ("once",
    /// "always", "no"); `None`: the client cannot ask (no elicitation).
    answer: Option<&'static str>,
    /// Roots to offer; `None`: no roots capability.
    roots: Option<Vec<String>>,
    asked: Arc<Mutex<Vec<String>>>,
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities = ClientCapabilities::builder().enable_elicitation().build();
        }
        if self.roots.is_some() {
            capabilities.roots = ClientCapabilities::builder().enable_roots().build().roots;
        }
        ClientConfig::new(capabilities, Implementation::new("clada-test-host", "1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        Ok(match self.answer {
            Some(answer) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({ "answer": answer })),
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.clone().unwrap_or_default();
        Ok(ListRootsResult::new(
            roots
                .into_iter()
                .map(|r| Root::new(format!("file://{r}")))
                .collect(),
        ))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

/// One client talking to one `git clada mcp` process.
struct Session {
    client: RunningService<RoleClient, Host>,
    child: tokio::process::Child,
    lines: Arc<Mutex<Vec<String>>>,
    tee: tokio::task::JoinHandle<()>,
    schemas: HashMap<String, Value>,
}

impl Session {
    async fn start(dir: &Path, host: Host) -> Session {
        Session::start_with(dir, host, &[]).await
    }

    async fn start_with(dir: &Path, host: Host, args: &[&str]) -> Session {
        let mut command = common::clada_std(dir, dir);
        command
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE)
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = tokio::process::Command::from(command)
            .kill_on_drop(true)
            .spawn()
            .expect("start git clada mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (ours, theirs) = tokio::io::duplex(1 << 22);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&lines);
        let tee = tokio::spawn(async move {
            let mut from_server = BufReader::new(stdout).lines();
            let mut theirs = theirs;
            while let Ok(Some(line)) = from_server.next_line().await {
                kept.lock().unwrap().push(line.clone());
                if theirs
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let (read, _write) = tokio::io::split(ours);
        let client = host.serve((read, stdin)).await.expect("initialize");
        let schemas = client
            .list_all_tools()
            .await
            .expect("tools/list")
            .into_iter()
            .map(|t| {
                let schema = Value::Object((*t.output_schema.expect("an output schema")).clone());
                (t.name.to_string(), schema)
            })
            .collect();
        Session {
            client,
            child,
            lines,
            tee,
            schemas,
        }
    }

    /// Calls `tool`; its structured result must match its output schema.
    async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let result = self
            .client
            .call_tool(
                CallToolRequestParams::new(tool.to_string()).with_arguments(object(arguments)),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        let structured = result
            .structured_content
            .clone()
            .expect("structured content");
        let validator = jsonschema::validator_for(&self.schemas[tool]).expect("a valid schema");
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{tool}'s result does not match its output schema: {errors:?}\n{structured:#}"
        );
        result
    }

    /// Ends the session as a host does (stdin closed): the server must
    /// exit 0 on its own, having written only JSON-RPC to stdout.
    async fn close(self) -> Vec<String> {
        let Session {
            client,
            mut child,
            lines,
            tee,
            ..
        } = self;
        client.cancel().await.expect("close the client");
        let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
            .await
            .expect("the server exits when stdin ends")
            .expect("wait");
        assert!(status.success(), "the server exited with {status}");
        let _ = tee.await;
        let lines = lines.lock().unwrap().clone();
        assert_json_rpc_only(&lines);
        lines
    }
}

fn assert_json_rpc_only(lines: &[String]) {
    assert!(!lines.is_empty());
    for line in lines {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout held a line that is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "not a JSON-RPC message: {line}");
    }
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(o) => o,
        other => panic!("arguments must be an object, not {other}"),
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

const CSL_REPLY: &str =
    "<---SEARCH file=\"app.py\"--->\nreturn 1\n<---REPLACE--->\nreturn 2\n<---END--->\n";

const AIDER_REPLY: &str = "app.py\n```python\n<<<<<<< SEARCH\ndef main():\n=======\ndef main(argv):\n>>>>>>> REPLACE\n```\n";

fn project() -> tempfile::TempDir {
    common::repo(&[
        ("app.py", "def main():\n    return 1\n"),
        ("README", "hello\n"),
    ])
}

#[test]
fn initialize_lists_tools_with_valid_schemas_and_true_annotations() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let info = session.client.peer_info().expect("the server's info");
        assert_eq!(
            info.server_info.as_ref().map(|i| i.name.as_str()),
            Some("git-clada")
        );
        assert_eq!(info.protocol_version.to_string(), "2025-11-25");
        assert!(info.capabilities.tools.is_some() && info.capabilities.prompts.is_some());
        let tools = session.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "apply", "check", "read", "status", "log", "show", "undo", "redo"
            ]
        );
        for tool in &tools {
            for (which, schema) in [
                ("input", Some(Value::Object((*tool.input_schema).clone()))),
                (
                    "output",
                    tool.output_schema
                        .as_ref()
                        .map(|s| Value::Object((**s).clone())),
                ),
            ] {
                let schema =
                    schema.unwrap_or_else(|| panic!("{} has no {which} schema", tool.name));
                jsonschema::meta::validate(&schema)
                    .unwrap_or_else(|e| panic!("{}'s {which} schema is not valid: {e}", tool.name));
                jsonschema::validator_for(&schema).unwrap_or_else(|e| {
                    panic!("{}'s {which} schema does not compile: {e}", tool.name)
                });
            }
            let a = tool.annotations.as_ref().expect("annotations");
            let read_only =
                ["check", "read", "status", "log", "show"].contains(&tool.name.as_ref());
            assert_eq!(a.read_only_hint, Some(read_only), "{}", tool.name);
            assert_eq!(
                a.destructive_hint,
                Some(["apply", "undo"].contains(&tool.name.as_ref())),
                "{}",
                tool.name
            );
            assert_eq!(a.idempotent_hint, Some(read_only), "{}", tool.name);
        }
        // The arguments' schema says what apply reads.
        let apply = &tools[0].input_schema;
        assert_eq!(apply["required"], json!(["reply"]));
        session.close().await;
    });
}

#[test]
fn apply_in_csl_and_aider_commits_and_reports() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let first = session.call("apply", json!({ "reply": CSL_REPLY })).await;
        assert_eq!(first.is_error, Some(false), "{}", text(&first));
        let report = first.structured_content.as_ref().unwrap();
        assert_eq!(report["status"], "success");
        assert_eq!(report["syntax"], "csl");
        assert_eq!(report["tasks"][0]["status"], "SUCCESS");
        assert!(
            text(&first).contains("[task-1] SUCCESS"),
            "{}",
            text(&first)
        );
        let second = session.call("apply", json!({ "reply": AIDER_REPLY })).await;
        assert_eq!(second.is_error, Some(false), "{}", text(&second));
        assert_eq!(
            second.structured_content.as_ref().unwrap()["syntax"],
            "aider"
        );
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main(argv):\n    return 2\n"
        );
        // Both applies are commits on the branch, and nothing is left
        // uncommitted.
        let log = common::out(dir.path(), &["log", "--format=%s"]);
        assert_eq!(log.lines().count(), 3, "{log}");
        assert_eq!(common::out(dir.path(), &["status", "--porcelain"]), "");
        session.close().await;
    });
}

#[test]
fn a_failing_search_is_an_error_result_with_the_closest_match() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let reply =
            "<---SEARCH file=\"app.py\"--->\nreturn 7\n<---REPLACE--->\nreturn 2\n<---END--->\n";
        let result = session.call("apply", json!({ "reply": reply })).await;
        assert_eq!(result.is_error, Some(true));
        let report = result.structured_content.as_ref().unwrap();
        assert_eq!(report["status"], "failed");
        let task = &report["tasks"][0];
        assert_eq!(task["status"], "ERROR");
        assert_eq!(task["closest"]["text"], "    return 1");
        assert_eq!(task["closest"]["lines"], json!([2, 2]));
        assert!(text(&result).contains("ERROR"), "{}", text(&result));
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 1\n"
        );
        session.close().await;
    });
}

#[test]
fn undo_redo_and_status_round_trip() {
    let dir = project();
    // The user's own uncommitted work, which undo brings back.
    std::fs::write(dir.path().join("README"), "hello, world\n").unwrap();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let applied = session.call("apply", json!({ "reply": CSL_REPLY })).await;
        assert_eq!(applied.is_error, Some(false), "{}", text(&applied));
        let status = session.call("status", json!({})).await;
        let state = status.structured_content.as_ref().unwrap();
        assert_eq!(state["undoable"], 1);
        assert_eq!(state["last_apply"]["kind"], "apply");

        let undone = session.call("undo", json!({})).await;
        assert_eq!(undone.is_error, Some(false), "{}", text(&undone));
        let after = &undone.structured_content.as_ref().unwrap()["state"];
        assert_eq!(after["undoable"], 0);
        assert_eq!(after["redoable"], 1);
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 1\n"
        );
        assert_eq!(common::read(dir.path(), "README"), "hello, world\n");
        assert_eq!(common::out(dir.path(), &["log", "--format=%s"]), "initial");

        let redone = session.call("redo", json!({})).await;
        assert_eq!(redone.is_error, Some(false), "{}", text(&redone));
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 2\n"
        );
        assert_eq!(
            redone.structured_content.as_ref().unwrap()["state"]["undoable"],
            1
        );

        // Nothing more to redo: the tool ran and failed.
        let again = session.call("redo", json!({})).await;
        assert_eq!(again.is_error, Some(true));
        assert_eq!(
            again.structured_content.as_ref().unwrap()["status"],
            "error"
        );
        assert!(text(&again).contains("nothing to redo"), "{}", text(&again));

        let log = session.call("log", json!({})).await;
        assert_eq!(
            log.structured_content.as_ref().unwrap()["entries"][0]["kind"],
            "apply"
        );
        let show = session.call("show", json!({ "reply": true })).await;
        assert_eq!(show.structured_content.as_ref().unwrap()["text"], CSL_REPLY);
        session.close().await;
    });
}

#[test]
fn a_dry_run_changes_nothing_and_returns_the_patch() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let result = session
            .call("apply", json!({ "reply": CSL_REPLY, "dry_run": true }))
            .await;
        assert_eq!(result.is_error, Some(false), "{}", text(&result));
        let diff = result.structured_content.as_ref().unwrap()["diff"]
            .as_str()
            .expect("a diff")
            .to_string();
        assert!(diff.contains("-    return 1\n+    return 2\n"), "{diff}");
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 1\n"
        );
        assert_eq!(common::out(dir.path(), &["log", "--format=%s"]), "initial");
        session.close().await;
        // git apply takes the patch.
        std::fs::write(dir.path().join("patch.diff"), &diff).unwrap();
        common::git(dir.path(), &["apply", "patch.diff"]);
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 2\n"
        );
    });
}

#[test]
fn check_and_read_change_nothing() {
    let dir = project();
    std::fs::write(dir.path().join(".gitignore"), "secret.env\nverify-ran\n").unwrap();
    common::git(dir.path(), &["add", ".gitignore"]);
    common::commit(dir.path(), &["-q", "-m", "ignore"]);
    std::fs::write(dir.path().join("secret.env"), "TOKEN=abc\n").unwrap();
    common::git(dir.path(), &["config", "clada.verify", "touch verify-ran"]);
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let ok = session.call("check", json!({ "reply": AIDER_REPLY })).await;
        assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
        assert_eq!(ok.structured_content.as_ref().unwrap()["syntax"], "aider");
        let broken = session
            .call("check", json!({ "reply": "<---WRITE file=\"a\"--->\nx\n" }))
            .await;
        assert_eq!(broken.is_error, Some(true));
        let diagnostics = &broken.structured_content.as_ref().unwrap()["diagnostics"];
        assert!(diagnostics[0]["code"].is_string() && diagnostics[0]["line"].is_number());

        let lines = session
            .call("read", json!({ "paths": ["app.py"], "lines": [2, 2] }))
            .await;
        assert_eq!(text(&lines), "    return 1\n");
        let listed = session.call("read", json!({ "list": "" })).await;
        assert!(text(&listed).contains("app.py"), "{}", text(&listed));
        let found = session.call("read", json!({ "grep": "return" })).await;
        assert_eq!(text(&found), "app.py:2:    return 1\n");
        // Ignored files are refused as an apply's READ refuses them.
        let ignored = session
            .call("read", json!({ "paths": ["secret.env"] }))
            .await;
        assert_eq!(ignored.is_error, Some(true), "{}", text(&ignored));
        assert!(!text(&ignored).contains("TOKEN"), "{}", text(&ignored));
        let grep = session.call("read", json!({ "grep": "TOKEN" })).await;
        assert!(!text(&grep).contains("TOKEN=abc"), "{}", text(&grep));
        // The user's verify command is not run by a read.
        assert!(!dir.path().join("verify-ran").exists());
        let outside = session.call("read", json!({ "paths": ["../x"] })).await;
        assert_eq!(outside.is_error, Some(true), "{}", text(&outside));
        let git_dir = session
            .call("read", json!({ "paths": [".git/config"] }))
            .await;
        assert_eq!(git_dir.is_error, Some(true), "{}", text(&git_dir));
        assert_eq!(common::out(dir.path(), &["status", "--porcelain"]), "");
        session.close().await;
    });
}

#[test]
fn the_syntax_guides_are_prompts() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let prompts = session.client.list_all_prompts().await.unwrap();
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert!(
            names.contains(&"syntax-csl") && names.contains(&"syntax-aider"),
            "{names:?}"
        );
        assert_eq!(prompts.len(), 9);
        let guide = session
            .client
            .get_prompt(GetPromptRequestParams::new("syntax-aider"))
            .await
            .unwrap();
        let body = serde_json::to_string(&guide.messages).unwrap();
        assert!(body.contains("<<<<<<< SEARCH"), "{body}");
        let unknown = session
            .client
            .get_prompt(GetPromptRequestParams::new("syntax-cobol"))
            .await;
        assert!(
            matches!(unknown, Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS)
        );
        session.close().await;
    });
}

#[test]
fn bad_arguments_are_invalid_params_naming_the_field() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        for (tool, arguments, named) in [
            ("apply", json!({}), "reply"),
            ("apply", json!({ "reply": 3 }), "reply: invalid type"),
            ("apply", json!({ "reply": "x", "dryrun": true }), "dryrun"),
            (
                "apply",
                json!({ "reply": "x", "syntax": "cobol" }),
                "syntax: unknown syntax",
            ),
            (
                "apply",
                json!({ "reply": "x", "match": "fuzzy" }),
                "match: unknown variant",
            ),
            (
                "check",
                json!({ "reply": "x", "syntax": "cobol" }),
                "syntax: unknown syntax",
            ),
            ("undo", json!({ "count": "two" }), "count: invalid type"),
            ("undo", json!({ "count": 0 }), "count: 0 is out of range"),
            ("read", json!({}), "exactly one of paths"),
            (
                "read",
                json!({ "paths": ["a", "b"], "lines": [1, 2] }),
                "lines needs exactly one file",
            ),
            ("nope", json!({}), "unknown tool"),
        ] {
            let e = session
                .client
                .call_tool(CallToolRequestParams::new(tool).with_arguments(object(arguments)))
                .await
                .expect_err("a protocol error");
            let ServiceError::McpError(e) = e else {
                panic!("{tool}: {e}");
            };
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{tool}");
            assert!(e.message.contains(named), "{tool}: {}", e.message);
        }
        session.close().await;
    });
}

#[test]
fn an_unapproved_run_is_asked_through_the_client_or_refused() {
    let dir = project();
    let reply = "<---RUN--->\ntouch made-by-run\n<---END--->\n<---SEARCH file=\"app.py\"--->\nreturn 1\n<---REPLACE--->\nreturn 2\n<---END--->\n";
    // `touch` inside the repository is allowed without asking; `install`
    // is not.
    let outside = "<---RUN--->\ninstall -m 644 README copied\n<---END--->\n";
    runtime().block_on(async {
        // A client that cannot ask: refused, naming git clada allow.
        let session = Session::start(dir.path(), Host::default()).await;
        let refused = session.call("apply", json!({ "reply": outside })).await;
        assert_eq!(refused.is_error, Some(true));
        let task = &refused.structured_content.as_ref().unwrap()["tasks"][0];
        assert_eq!(task["error_type"], "command_not_allowed", "{task}");
        assert!(task.to_string().contains("git clada allow"), "{task}");
        let allowed = session.call("apply", json!({ "reply": reply })).await;
        assert_eq!(allowed.is_error, Some(false), "{}", text(&allowed));
        session.close().await;

        // A client that asks the user, who says no.
        let host = Host {
            answer: Some("no"),
            ..Host::default()
        };
        let asked = Arc::clone(&host.asked);
        let session = Session::start(dir.path(), host).await;
        let declined = session.call("apply", json!({ "reply": outside })).await;
        assert_eq!(declined.is_error, Some(true));
        assert!(
            declined.structured_content.as_ref().unwrap()["tasks"][0]["message"]
                .as_str()
                .unwrap()
                .contains("declined"),
            "{}",
            text(&declined)
        );
        assert_eq!(asked.lock().unwrap().len(), 1);
        assert!(asked.lock().unwrap()[0].contains("install -m 644 README copied"));
        session.close().await;

        // One who says always: it runs, and is approved for next time.
        let host = Host {
            answer: Some("always"),
            ..Host::default()
        };
        let session = Session::start(dir.path(), host).await;
        let ran = session.call("apply", json!({ "reply": outside })).await;
        assert_eq!(ran.is_error, Some(false), "{}", text(&ran));
        assert!(dir.path().join("copied").exists());
        session.close().await;
        let listed = common::clada(dir.path(), dir.path())
            .args(["allow", "--list"])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&listed.stdout).contains("install -m 644 README copied"));
    });
}

#[test]
fn a_verify_command_from_the_client_runs_only_when_approved() {
    let dir = project();
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let refused = session
            .call("apply", json!({ "reply": CSL_REPLY, "verify": "false" }))
            .await;
        assert_eq!(refused.is_error, Some(true));
        assert!(
            text(&refused).contains("git clada allow"),
            "{}",
            text(&refused)
        );
        assert_eq!(common::out(dir.path(), &["log", "--format=%s"]), "initial");
        session.close().await;

        let host = Host {
            answer: Some("once"),
            ..Host::default()
        };
        let session = Session::start(dir.path(), host).await;
        let failed = session
            .call("apply", json!({ "reply": CSL_REPLY, "verify": "false" }))
            .await;
        assert_eq!(failed.is_error, Some(true), "{}", text(&failed));
        assert_eq!(
            failed.structured_content.as_ref().unwrap()["verify"]["passed"],
            false
        );
        assert_eq!(common::out(dir.path(), &["log", "--format=%s"]), "initial");
        session.close().await;
    });
}

#[test]
fn a_cancelled_apply_kills_its_run_and_applies_nothing() {
    let dir = project();
    // An unusual duration, to find the process by its command line.
    common::clada(dir.path(), dir.path())
        .args(["allow", "sleep 41.5"])
        .assert()
        .success();
    common::git(dir.path(), &["add", "-A"]);
    common::commit(dir.path(), &["-q", "--allow-empty", "-m", "approve"]);
    let reply = "<---SEARCH file=\"app.py\"--->\nreturn 1\n<---REPLACE--->\nreturn 2\n<---END--->\n<---RUN--->\nsleep 41.5\n<---END--->\n";
    runtime().block_on(async {
        let host = Host::default();
        let progress = Arc::clone(&host.progress);
        let session = Session::start(dir.path(), host).await;
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
            CallToolRequestParams::new("apply").with_arguments(object(json!({ "reply": reply }))),
        ));
        let started = Instant::now();
        let handle = session
            .client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        // The RUN is running: wait until its process is there.
        while !sleeping() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the RUN never started"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(2500)).await;
        handle
            .cancel(Some("the user pressed stop".into()))
            .await
            .unwrap();
        let gone = Instant::now();
        while sleeping() {
            assert!(
                gone.elapsed() < Duration::from_secs(5),
                "the RUN outlived the cancellation"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            progress
                .lock()
                .unwrap()
                .iter()
                .any(|m| m.contains("apply: running for")),
            "no progress was sent: {:?}",
            progress.lock().unwrap()
        );
        // Nothing was applied, and the lock is free for the next call.
        assert_eq!(
            common::out(dir.path(), &["log", "--format=%s"]),
            "approve\ninitial"
        );
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 1\n"
        );
        let next = session.call("apply", json!({ "reply": CSL_REPLY })).await;
        assert_eq!(next.is_error, Some(false), "{}", text(&next));
        session.close().await;
    });
}

/// Whether a `sleep 41.5` is running.
fn sleeping() -> bool {
    running(b"sleep\x0041.5\x00")
}

/// Whether a process with this command line (NUL-separated) is running.
fn running(cmdline: &[u8]) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|entry| std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == cmdline))
}

#[test]
fn the_roots_a_client_offers_bound_the_repository() {
    let dir = project();
    let elsewhere = common::scratch();
    runtime().block_on(async {
        let root = |p: &Path| p.canonicalize().unwrap().display().to_string();
        let host = Host {
            roots: Some(vec![root(elsewhere.path())]),
            ..Host::default()
        };
        let session = Session::start(dir.path(), host).await;
        let refused = session.call("status", json!({})).await;
        assert_eq!(refused.is_error, Some(true));
        assert!(
            text(&refused).contains("outside the roots"),
            "{}",
            text(&refused)
        );
        session.close().await;

        // Started outside any repository, the server takes the root.
        let host = Host {
            roots: Some(vec![root(dir.path())]),
            ..Host::default()
        };
        let session = Session::start(elsewhere.path(), host).await;
        let applied = session.call("apply", json!({ "reply": CSL_REPLY })).await;
        assert_eq!(applied.is_error, Some(false), "{}", text(&applied));
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 2\n"
        );
        session.close().await;
    });
}

/// Raw JSON-RPC, below the SDK: a line that is not JSON does not stop the
/// server, stdout holds only JSON-RPC, and the end of stdin ends it.
#[test]
fn a_malformed_line_is_answered_and_the_server_goes_on() {
    let dir = project();
    let mut child = common::clada_std(dir.path(), dir.path())
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write as _;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    writeln!(stdin, "{{this is not json").unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    )
    .unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "status", "arguments": {}}})
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out);
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_json_rpc_only(&lines);
    let ids: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect();
    assert!(
        ids.contains(&json!(2)) && ids.contains(&json!(3)),
        "{lines:?}"
    );
}

#[test]
fn a_second_client_waits_for_the_first_as_a_second_apply_would() {
    let dir = project();
    common::clada(dir.path(), dir.path())
        .args(["allow", "sleep 2.25"])
        .assert()
        .success();
    let slow = "<---SEARCH file=\"app.py\"--->\nreturn 1\n<---REPLACE--->\nreturn 2\n<---END--->\n<---RUN--->\nsleep 2.25\n<---END--->\n";
    let other = "<---WRITE file=\"README\"--->\nhello again\n<---END--->\n";
    runtime().block_on(async {
        let (first, second) = tokio::join!(
            Session::start(dir.path(), Host::default()),
            Session::start(dir.path(), Host::default())
        );
        let applying = {
            let first = &first;
            async move { first.call("apply", json!({ "reply": slow })).await }
        };
        let waiting = async {
            // Once the first apply is running its command (it holds the
            // lock), the second client sends its reply.
            let started = Instant::now();
            while !running(b"sleep\x002.25\x00") {
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "the RUN never started"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let sent = Instant::now();
            let result = second.call("apply", json!({ "reply": other })).await;
            (result, sent.elapsed())
        };
        let (slow_result, (other_result, waited)) = tokio::join!(applying, waiting);
        assert_eq!(slow_result.is_error, Some(false), "{}", text(&slow_result));
        assert_eq!(
            other_result.is_error,
            Some(false),
            "{}",
            text(&other_result)
        );
        assert!(
            waited > Duration::from_millis(1000),
            "the second apply did not wait: {waited:?}"
        );
        // Both landed, one after the other.
        assert_eq!(
            common::out(dir.path(), &["log", "--format=%s"])
                .lines()
                .count(),
            3
        );
        assert_eq!(
            common::read(dir.path(), "app.py"),
            "def main():\n    return 2\n"
        );
        assert_eq!(common::read(dir.path(), "README"), "hello again\n");
        first.close().await;
        second.close().await;
    });
}

#[test]
fn the_server_ignores_clada_no_git_and_applies_in_the_repository() {
    let dir = project();
    common::git(dir.path(), &["config", "clada.noGit", "true"]);
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let applied = session.call("apply", json!({ "reply": CSL_REPLY })).await;
        assert_eq!(applied.is_error, Some(false), "{}", text(&applied));
        assert_eq!(
            applied.structured_content.as_ref().unwrap()["syntax"],
            "csl"
        );
        assert_eq!(
            common::out(dir.path(), &["log", "--format=%s"])
                .lines()
                .count(),
            2
        );
        // The session goes on: the reply was not read from the protocol.
        let status = session.call("status", json!({})).await;
        assert_eq!(status.is_error, Some(false));
        session.close().await;
    });
}

#[test]
fn a_client_that_goes_away_mid_run_leaves_no_command_and_no_lock() {
    let dir = project();
    common::clada(dir.path(), dir.path())
        .args(["allow", "sleep 43.5"])
        .assert()
        .success();
    let reply = "<---SEARCH file=\"app.py\"--->\nreturn 1\n<---REPLACE--->\nreturn 2\n<---END--->\n<---RUN--->\nsleep 43.5\n<---END--->\n";
    runtime().block_on(async {
        let session = Session::start(dir.path(), Host::default()).await;
        let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
            CallToolRequestParams::new("apply").with_arguments(object(json!({ "reply": reply }))),
        ));
        let _pending = session
            .client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        let started = Instant::now();
        while !running(b"sleep\x0043.5\x00") {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the RUN never started"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The host quits: stdin ends with the call in flight.
        let closed = Instant::now();
        session.close().await;
        assert!(
            closed.elapsed() < Duration::from_secs(10),
            "{:?}",
            closed.elapsed()
        );
    });
    // Killed before the server exited; the kernel may take a moment to
    // finish it on a loaded machine.
    let gone = Instant::now();
    while running(b"sleep\x0043.5\x00") {
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "the RUN outlived the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !dir.path().join(".git/clada.lock").exists(),
        "the lock was left"
    );
    assert_eq!(common::out(dir.path(), &["log", "--format=%s"]), "initial");
    assert_eq!(
        common::read(dir.path(), "app.py"),
        "def main():\n    return 1\n"
    );
}
