//! Benchmark (issue 26): `apply` calls through one warm `git clada mcp`
//! server, driven by the MCP SDK's own client, against `git clada apply`
//! processes on the same replies in the same repository. Run with
//! `bench/mcp.sh`; numbers in doc/performance.md.
//!
//! Each round makes two identical repositories (`MCP_BENCH_FILES` files of
//! 200 lines, committed) and `MCP_BENCH_CALLS` replies, each a CSL SEARCH
//! on its own file; one repository takes them as processes, one by one,
//! the other through the server (started before the clock starts: warm).
//! Rounds alternate which goes first; the medians of the rounds are
//! printed, with the ratio MCP / process.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_git-clada");
const DATE: &str = "2026-01-01T00:00:00Z";

fn number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A command in a hermetic environment (no user or system git config).
fn hermetic(program: &str, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_DATE", DATE)
        .env("LC_ALL", "C")
        .current_dir(dir);
    c
}

fn git(dir: &Path, args: &[&str]) {
    let status = hermetic("git", dir).args(args).status().expect("git");
    assert!(status.success(), "git {args:?}");
}

fn repository(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    for f in 0..files {
        let sub = dir.path().join(format!("src/m{}", f % 10));
        std::fs::create_dir_all(&sub).unwrap();
        let text: String = (0..200)
            .map(|l| format!("    value_{f}_{l} = compute({l}, {f})\n"))
            .collect();
        std::fs::write(sub.join(format!("f{f}.py")), text).unwrap();
    }
    git(dir.path(), &["add", "-A"]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "initial",
        ],
    );
    dir
}

fn replies(calls: usize, files: usize) -> Vec<String> {
    (0..calls)
        .map(|i| {
            let f = i % files;
            let l = 100 + i / files;
            format!(
                "<---SEARCH file=\"src/m{}/f{f}.py\"--->\n    value_{f}_{l} = compute({l}, {f})\n<---REPLACE--->\n    value_{f}_{l} = compute({l}, {f}) + {i}\n<---END--->\n",
                f % 10
            )
        })
        .collect()
}

fn by_processes(dir: &Path, replies: &[String]) -> Duration {
    let started = Instant::now();
    for reply in replies {
        let mut child = hermetic(BIN, dir)
            .args(["apply", "--format", "json", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("git-clada apply");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(reply.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
        assert_eq!(report["status"], "success", "{report}");
    }
    started.elapsed()
}

fn by_server(dir: &Path, replies: &[String]) -> Duration {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut command = tokio::process::Command::from(hermetic(BIN, dir));
        command
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("git-clada mcp");
        let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = ().serve(transport).await.expect("initialize");
        // Warm: one call that changes nothing before the clock starts.
        client
            .call_tool(CallToolRequestParams::new("status"))
            .await
            .expect("status");
        let started = Instant::now();
        for reply in replies {
            let result = client
                .call_tool(
                    CallToolRequestParams::new("apply")
                        .with_arguments(json!({ "reply": reply }).as_object().unwrap().clone()),
                )
                .await
                .expect("apply");
            assert_eq!(result.is_error, Some(false), "{:?}", result.content);
        }
        let spent = started.elapsed();
        client.cancel().await.unwrap();
        let _ = child.wait().await;
        spent
    })
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let calls = number("MCP_BENCH_CALLS", 100);
    let files = number("MCP_BENCH_FILES", 100);
    let rounds = number("MCP_BENCH_ROUNDS", 3);
    let replies = replies(calls, files);
    let (mut process, mut server) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = (repository(files), repository(files));
        let (p, s) = if round % 2 == 0 {
            let p = by_processes(a.path(), &replies);
            (p, by_server(b.path(), &replies))
        } else {
            let s = by_server(b.path(), &replies);
            (by_processes(a.path(), &replies), s)
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3 / calls as f64;
        println!(
            "round {}: process {:.2} ms/apply, MCP {:.2} ms/apply",
            round + 1,
            ms(p),
            ms(s)
        );
        process.push(p);
        server.push(s);
    }
    let (p, s) = (median(process), median(server));
    println!(
        "{calls} applies on {files} files, median of {rounds} rounds: process {:.0} ms ({:.2} ms/apply), MCP {:.0} ms ({:.2} ms/apply), MCP/process {:.2}x",
        p.as_secs_f64() * 1e3,
        p.as_secs_f64() * 1e3 / calls as f64,
        s.as_secs_f64() * 1e3,
        s.as_secs_f64() * 1e3 / calls as f64,
        s.as_secs_f64() / p.as_secs_f64()
    );
}
