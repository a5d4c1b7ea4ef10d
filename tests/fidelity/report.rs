//! The tables (per corpus and in total, one row per scenario and
//! applier) and the records of every case that is not exact, written to
//! `target/fidelity/<run>/`: `cases.jsonl` and the replies under
//! `replies/`, so that one case can be replayed by hand.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::run::Tool;
use super::scenario::Scenario;
use super::{Case, Class};

/// The file a case's reply is kept in, relative to the run's directory.
pub fn reply_file(c: &Case) -> String {
    let ext = c.reply.as_ref().map_or("txt", |r| r.1);
    format!(
        "replies/{}-{}-{}.{ext}",
        c.corpus,
        &c.commit[..12],
        c.scenario.name()
    )
}

pub fn write_records(dir: &Path, cases: &[Case]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("replies"))?;
    let mut lines = String::new();
    for c in cases.iter().filter(|c| c.outcome.class != Class::Exact) {
        let reply = c.reply.as_ref().map(|(bytes, _)| {
            let file = reply_file(c);
            let _ = std::fs::write(dir.join(&file), bytes);
            file
        });
        let report: String = c.outcome.report.chars().take(6000).collect();
        let rec = json!({
            "corpus": c.corpus,
            "commit": c.commit,
            "scenario": c.scenario.name(),
            "tool": c.tool.name(),
            "class": c.outcome.class.name(),
            "reason": c.outcome.reason,
            "args": c.scenario.args(),
            "reply": reply,
            "report": report,
            "diff": c.outcome.diff,
            "ms": c.outcome.elapsed.map(|d| d.as_secs_f64() * 1000.0),
        });
        lines.push_str(&rec.to_string());
        lines.push('\n');
    }
    std::fs::write(dir.join("cases.jsonl"), lines)
}

/// Counts of one row.
#[derive(Default)]
struct Row {
    counts: [usize; 6],
    times: Vec<f64>,
}

fn class_index(c: Class) -> usize {
    match c {
        Class::Exact => 0,
        Class::Refused => 1,
        Class::Wrong => 2,
        Class::Crash => 3,
        Class::Na => 4,
        Class::Bug => 5,
    }
}

/// The table of `cases` (one corpus or all), one row per scenario and
/// applier present.
pub fn table(title: &str, cases: &[&Case], scenarios: &[Scenario]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ = writeln!(
        out,
        "| scenario | applier | exact | refused | WRONG | crash | n/a | exact % | median ms |"
    );
    let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|");
    for tool in [
        Tool::Clada,
        Tool::GitApply,
        Tool::GitApplyRecount,
        Tool::GnuPatch,
    ] {
        for s in scenarios {
            let mut row = Row::default();
            for c in cases.iter().filter(|c| c.tool == tool && c.scenario == *s) {
                row.counts[class_index(c.outcome.class)] += 1;
                if let Some(t) = c.outcome.elapsed {
                    row.times.push(t.as_secs_f64() * 1000.0);
                }
            }
            if row.counts.iter().sum::<usize>() == 0 {
                continue;
            }
            let [exact, refused, wrong, crash, na, bug] = row.counts;
            let tried = exact + refused + wrong + crash;
            let pct = if tried == 0 {
                "-".to_string()
            } else {
                format!("{:.1}", 100.0 * exact as f64 / tried as f64)
            };
            row.times.sort_by(f64::total_cmp);
            let median = row
                .times
                .get(row.times.len() / 2)
                .map_or("-".into(), |t| format!("{t:.0}"));
            let na = if bug > 0 {
                format!("{na} (+{bug} harness bug)")
            } else {
                na.to_string()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {exact} | {refused} | {wrong} | {crash} | {na} | {pct} | {median} |",
                s.name(),
                tool.name()
            );
        }
    }
    out
}

/// Every table of a run: per corpus, then all together.
pub fn tables(cases: &[Case], commits: &[(String, usize)], scenarios: &[Scenario]) -> String {
    let mut out = String::new();
    for (corpus, n) in commits {
        let mine: Vec<&Case> = cases.iter().filter(|c| c.corpus == *corpus).collect();
        out.push_str(&table(
            &format!("\n{corpus} ({n} commits)"),
            &mine,
            scenarios,
        ));
    }
    let total: usize = commits.iter().map(|(_, n)| n).sum();
    let all: Vec<&Case> = cases.iter().collect();
    out.push_str(&table(&format!("\nall ({total} commits)"), &all, scenarios));
    out
}

/// One line per case of the given classes (clada's only).
pub fn list(cases: &[Case], dir: &Path, pick: impl Fn(&Case) -> bool) -> String {
    let mut out = String::new();
    for c in cases.iter().filter(|c| c.tool == Tool::Clada && pick(c)) {
        let _ = writeln!(
            out,
            "{} {}: {}: {} [{}]",
            c.name(),
            c.scenario.name(),
            c.outcome.class.name(),
            c.outcome.reason.chars().take(300).collect::<String>(),
            dir.join(reply_file(c)).display()
        );
    }
    out
}

/// The n/a cases of clada counted by scenario and reason (a reason's
/// leading `path: ` left out), most frequent first: what the formats
/// could not say.
pub fn na_reasons(cases: &[Case]) -> String {
    let mut counts: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for c in cases
        .iter()
        .filter(|c| c.tool == Tool::Clada && c.outcome.class == Class::Na)
    {
        let r = &c.outcome.reason;
        let why = match r.split_once(": ") {
            Some((head, rest)) if !head.contains(' ') => rest,
            _ => r.as_str(),
        };
        *counts
            .entry((c.scenario.name(), why.to_string()))
            .or_default() += 1;
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = String::from("| scenario | n/a because | cases |\n|---|---|--:|\n");
    for ((scenario, why), n) in rows {
        let _ = writeln!(out, "| {scenario} | {why} | {n} |");
    }
    out
}
