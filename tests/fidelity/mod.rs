//! The differential harness of issue 25: real commits rebuilt as replies
//! in every format a model writes, applied by clada (and, for diffs, by
//! `git apply` and GNU `patch`) in a repository holding the commit's
//! parent, and judged byte for byte against the commit itself.
//!
//! Used by the `cargo test` sample (`tests/it/fidelity.rs`) and the
//! whole-corpus benchmark (`benches/fidelity.rs`) through `#[path]`
//! modules; doc/fidelity.md says what every scenario is. It never uses
//! clada's own parsers: it is the oracle.
//!
//! - `corpus`: the shared archives unpacked, and the project's own history
//! - `gitdiff`: an independent `git diff` reader and printer
//! - `text`, `blocks`, `damage`: the commit as lines, blocks and damage
//! - `diffgen`, `patchgen`, `formats`, `scenario`: the replies
//! - `run`, `classify`: applying them and the verdict
//! - `report`: the tables and the case records under `target/fidelity/`

// Two programs use this module, each only part of it.
#![allow(dead_code)]

pub mod blocks;
pub mod classify;
pub mod corpus;
pub mod damage;
pub mod diffgen;
pub mod formats;
pub mod gitdiff;
pub mod patchgen;
pub mod report;
pub mod run;
pub mod scenario;
pub mod text;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use blocks::Skip;
use corpus::Entry;
use run::Tool;
use scenario::Scenario;

/// The verdict on one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Exit 0 and every file as the commit has it (and HEAD's tree too).
    Exact,
    /// The applier said it failed (clada: exit 1, 2 or 3).
    Refused,
    /// Exit 0 and something differs: the failure that must never happen.
    Wrong,
    /// A panic, a signal, an undocumented exit status or a timeout.
    Crash,
    /// The format cannot say this commit.
    Na,
    /// The harness could not build the reply: its own defect.
    Bug,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Exact => "exact",
            Class::Refused => "refused",
            Class::Wrong => "WRONG",
            Class::Crash => "crash",
            Class::Na => "n/a",
            Class::Bug => "harness-bug",
        }
    }
}

/// What an apply gave.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub class: Class,
    /// Why: the differences, the exit status, or why it is n/a.
    pub reason: String,
    /// The applier's output (clada: its JSON report), stdout and stderr.
    pub report: String,
    /// For WRONG: expected vs got, unified.
    pub diff: String,
    pub elapsed: Option<Duration>,
}

impl Outcome {
    pub fn new(class: Class, reason: String) -> Outcome {
        Outcome {
            class,
            reason,
            report: String::new(),
            diff: String::new(),
            elapsed: None,
        }
    }
}

/// One apply of one scenario of one commit by one tool.
#[derive(Clone, Debug)]
pub struct Case {
    pub corpus: String,
    pub commit: String,
    pub scenario: Scenario,
    pub tool: Tool,
    pub outcome: Outcome,
    /// The reply, kept for the cases that are not exact.
    pub reply: Option<(Vec<u8>, &'static str)>,
}

impl Case {
    pub fn name(&self) -> String {
        format!("{}/{}", self.corpus, &self.commit[..12])
    }
}

/// What to run; read from `FIDELITY_*` variables (doc/fidelity.md).
#[derive(Clone, Debug)]
pub struct Config {
    pub corpora: Vec<String>,
    /// Entries whose `corpus/id` (or id) starts with one of these.
    pub only: Vec<String>,
    pub scenarios: Vec<Scenario>,
    pub threads: usize,
    pub peers: bool,
    /// How many commits of the own history.
    pub own: usize,
    /// The tag-covering sample rather than every commit.
    pub sample: bool,
    /// Keep each case's work tree under the run's directory.
    pub keep: bool,
    pub run_name: String,
}

impl Config {
    /// Defaults for a program, overridden by the environment.
    pub fn from_env(
        sample: bool,
        peers: bool,
        own: usize,
        run_name: &str,
    ) -> Result<Config, String> {
        let list = |name: &str| -> Vec<String> {
            std::env::var(name)
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let flag = |name: &str, default: bool| match std::env::var(name).as_deref() {
            Ok("1") | Ok("true") | Ok("yes") => true,
            Ok("0") | Ok("false") | Ok("no") => false,
            _ => default,
        };
        let mut scenarios = scenario::all();
        let wanted = list("FIDELITY_SCENARIO");
        if !wanted.is_empty() {
            for w in &wanted {
                if !scenarios.iter().any(|s| s.name() == *w) {
                    let names: Vec<String> = scenarios.iter().map(Scenario::name).collect();
                    return Err(format!(
                        "FIDELITY_SCENARIO: no scenario {w:?} (known: {})",
                        names.join(", ")
                    ));
                }
            }
            scenarios.retain(|s| wanted.contains(&s.name()));
        }
        let mut corpora = list("FIDELITY_CORPORA");
        if corpora.is_empty() {
            corpora = ["flask", "fd", "fzf", "own"].map(String::from).to_vec();
        }
        let only = list("FIDELITY_ONLY");
        Ok(Config {
            corpora,
            // A single case asked for by name is run even outside the sample.
            sample: sample && only.is_empty(),
            only,
            scenarios,
            threads: std::env::var("FIDELITY_THREADS")
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(2)
                .max(1),
            peers: flag("FIDELITY_PEERS", peers),
            own: std::env::var("FIDELITY_OWN")
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(own),
            keep: flag("FIDELITY_KEEP", false),
            run_name: std::env::var("FIDELITY_RUN").unwrap_or_else(|_| run_name.to_string()),
        })
    }
}

/// `../shared/corpus` beside the package, if it is there.
pub fn shared_corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    dir.join("index.tsv").is_file().then_some(dir)
}

/// Where the runs' records go: `target/fidelity/<run>/`.
pub fn out_dir(run_name: &str) -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("fidelity").join(run_name)
}

/// The tags the sample covers: the first commit of each corpus that has
/// each tag, in `index.tsv` order, plus the first with no tag at all.
const SAMPLE_TAGS: [&str; 8] = [
    "noeol", "crlf", "mode", "rename", "delete", "add", "tabs", "large",
];

fn sample(entries: Vec<Entry>, own: usize) -> Vec<Entry> {
    let mut keep = vec![false; entries.len()];
    for corpus in ["flask", "fd", "fzf"] {
        let idx: Vec<usize> = (0..entries.len())
            .filter(|&i| entries[i].corpus == corpus)
            .collect();
        for tag in SAMPLE_TAGS {
            // A commit kept for an earlier tag may cover this one too.
            let covered = idx
                .iter()
                .any(|&j| keep[j] && entries[j].tags.iter().any(|t| t == tag));
            if let Some(&i) = idx
                .iter()
                .find(|&&i| entries[i].tags.iter().any(|t| t == tag))
                && !covered
            {
                keep[i] = true;
            }
        }
        if let Some(&i) = idx.iter().find(|&&i| entries[i].tags.is_empty()) {
            keep[i] = true;
        }
    }
    let mut own_left = own;
    for (i, e) in entries.iter().enumerate() {
        if e.corpus == "own" && own_left > 0 {
            keep[i] = true;
            own_left -= 1;
        }
    }
    entries
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(e, _)| e)
        .collect()
}

/// The result of a run.
pub struct Run {
    pub cases: Vec<Case>,
    /// Commits per corpus, in the order run.
    pub commits: Vec<(String, usize)>,
    pub notes: Vec<String>,
    pub out_dir: PathBuf,
    pub wall: Duration,
}

/// Runs the harness as `config` says; `own_sample` commits of the own
/// history in a sample.
pub fn run(config: &Config, own_sample: usize) -> Result<Run, String> {
    let start = std::time::Instant::now();
    // In memory where the system has it: clada syncs what it commits,
    // and thousands of throw-away repositories need not reach the disk.
    let shm = Path::new("/dev/shm");
    let tmp = if shm.is_dir() {
        tempfile::Builder::new().prefix("fidelity").tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .map_err(|e| e.to_string())?;
    let mut notes = Vec::new();
    let mut entries = Vec::new();
    let shared: Vec<&str> = ["flask", "fd", "fzf"]
        .into_iter()
        .filter(|c| config.corpora.iter().any(|x| x == c))
        .collect();
    if !shared.is_empty() {
        match shared_corpus() {
            Some(dir) => entries.extend(corpus::load_shared(&dir, &shared, tmp.path())?),
            None => notes.push("../shared/corpus is absent: only the own history is run".into()),
        }
    }
    if config.corpora.iter().any(|c| c == "own") {
        let limit = if config.sample {
            own_sample
        } else {
            config.own
        };
        let (own, note) =
            corpus::load_own(Path::new(env!("CARGO_MANIFEST_DIR")), tmp.path(), limit);
        notes.extend(note);
        entries.extend(own);
    }
    if config.sample {
        entries = sample(entries, own_sample);
    }
    if !config.only.is_empty() {
        entries.retain(|e| {
            config
                .only
                .iter()
                .any(|o| e.name().starts_with(o.as_str()) || e.commit.starts_with(o.as_str()))
        });
    }
    let mut commits: Vec<(String, usize)> = Vec::new();
    for e in &entries {
        match commits.iter_mut().find(|(c, _)| *c == e.corpus) {
            Some((_, n)) => *n += 1,
            None => commits.push((e.corpus.clone(), 1)),
        }
    }
    let out_dir = out_dir(&config.run_name);
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let base = if config.keep {
        out_dir.join("work")
    } else {
        tmp.path().join("work")
    };
    // The peers that are installed ("where installed", says the issue).
    let mut peers = Vec::new();
    if config.peers {
        peers.extend([Tool::GitApply, Tool::GitApplyRecount]);
        let patch = std::process::Command::new("patch")
            .arg("--version")
            .output();
        match patch {
            Ok(o) if String::from_utf8_lossy(&o.stdout).contains("GNU patch") => {
                peers.push(Tool::GnuPatch)
            }
            _ => notes.push("GNU patch is not installed: its rows are left out".into()),
        }
    }
    let next = AtomicUsize::new(0);
    let cases = Mutex::new((Vec::new(), 0usize));
    std::thread::scope(|scope| {
        for _ in 0..config.threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(entry) = entries.get(i) else { break };
                    let done = run_entry(config, &peers, entry, &base);
                    let mut all = cases.lock().expect("no thread panics holding it");
                    all.0.extend(done);
                    all.1 += 1;
                    if all.1 % 25 == 0 || all.1 == entries.len() {
                        eprintln!("fidelity: {}/{} commits", all.1, entries.len());
                    }
                }
            });
        }
    });
    let mut cases = cases.into_inner().expect("no thread panicked").0;
    let order = |s: &Scenario| config.scenarios.iter().position(|x| x == s);
    cases.sort_by_key(|c| {
        (
            c.corpus.clone(),
            c.commit.clone(),
            order(&c.scenario),
            c.tool as u8,
        )
    });
    report::write_records(&out_dir, &cases).map_err(|e| format!("writing records: {e}"))?;
    Ok(Run {
        cases,
        commits,
        notes,
        out_dir,
        wall: start.elapsed(),
    })
}

/// Every scenario (and peer) of one commit.
fn run_entry(config: &Config, peers: &[Tool], entry: &Entry, base: &Path) -> Vec<Case> {
    let dir = base.join(format!("{}-{}", entry.corpus, &entry.commit[..12]));
    let template = dir.join("template");
    let home = dir.join("home");
    let _ = std::fs::create_dir_all(&home);
    let case = |scenario: Scenario,
                tool: Tool,
                outcome: Outcome,
                reply: Option<(Vec<u8>, &'static str)>| Case {
        corpus: entry.corpus.clone(),
        commit: entry.commit.clone(),
        scenario,
        tool,
        outcome,
        reply,
    };
    let mut out = Vec::new();
    if let Err(e) = run::template(entry, &template, &home) {
        for &s in &config.scenarios {
            out.push(case(
                s,
                Tool::Clada,
                Outcome::new(Class::Bug, format!("template: {e}")),
                None,
            ));
        }
        return out;
    }
    let want = classify::read_tree(&entry.after());
    let plans = scenario::Plans::new(entry);
    for &s in &config.scenarios {
        let reply = match scenario::reply(entry, &plans, s) {
            Ok(r) => r,
            Err(Skip::Na(why)) => {
                out.push(case(s, Tool::Clada, Outcome::new(Class::Na, why), None));
                continue;
            }
            Err(Skip::Bug(why)) => {
                out.push(case(s, Tool::Clada, Outcome::new(Class::Bug, why), None));
                continue;
            }
        };
        let scratch = dir.join(s.name());
        let _ = std::fs::create_dir_all(&scratch);
        let reply_path = scratch.join(format!("reply.{}", s.ext()));
        if let Err(e) = std::fs::write(&reply_path, &reply) {
            out.push(case(
                s,
                Tool::Clada,
                Outcome::new(Class::Bug, format!("writing the reply: {e}")),
                None,
            ));
            continue;
        }
        let mut tools = vec![Tool::Clada];
        if s.is_diff() {
            tools.extend(peers.iter().copied());
        }
        for tool in tools {
            let args = if tool == Tool::Clada {
                s.args()
            } else {
                Vec::new()
            };
            let o = run::apply(
                tool,
                &reply_path,
                &args,
                &template,
                &scratch,
                &want,
                config.keep,
            );
            let kept = (o.class != Class::Exact).then(|| (reply.clone(), s.ext()));
            out.push(case(s, tool, o, kept));
        }
        if !config.keep {
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    if !config.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    out
}
