//! Fidelity on real code (issue 25), a sample: commits of each corpus
//! chosen to cover its tags (noeol, crlf, mode, rename, delete, add, tabs,
//! large) and a few of this repository's own history, through every
//! scenario of the harness (`tests/fidelity/`, doc/fidelity.md). No
//! crash and no WRONG anywhere, and every expressible case exact on the
//! scenarios a model writes undamaged. The whole corpus runs as the
//! benchmark `bench/fidelity.sh`.

#[path = "../fidelity/mod.rs"]
mod harness;

use harness::{Class, report, scenario::Format};

/// How many commits of the own history the sample takes.
const OWN: usize = 4;

#[test]
fn real_commits_land_exactly_or_are_refused() {
    if harness::shared_corpus().is_none() {
        println!("fidelity: skipped, ../shared/corpus is absent (CI always has it)");
        return;
    }
    let config =
        harness::Config::from_env(true, false, OWN, "sample").expect("FIDELITY_* variables");
    let run = harness::run(&config, OWN).expect("the harness runs");
    let tables = report::tables(&run.cases, &run.commits, &config.scenarios);
    println!("{tables}");
    for n in &run.notes {
        println!("note: {n}");
    }
    println!(
        "{} cases in {:.1} s",
        run.cases.len(),
        run.wall.as_secs_f64()
    );
    // Exact on every expressible case of the undamaged formats a model
    // writes; nowhere a crash, a WRONG or a reply the harness failed at.
    let must_be_exact = |f: Format| {
        matches!(
            f,
            Format::Diff
                | Format::DiffShift
                | Format::Aider
                | Format::Patch
                | Format::Csl
                | Format::Json
        )
    };
    let failing = report::list(&run.cases, &run.out_dir, |c| match c.outcome.class {
        Class::Wrong | Class::Crash | Class::Bug => true,
        Class::Refused => c.scenario.damage.is_none() && must_be_exact(c.scenario.format),
        Class::Exact | Class::Na => false,
    });
    assert!(
        failing.is_empty(),
        "{tables}\nfailing cases (records in {}):\n{failing}",
        run.out_dir.join("cases.jsonl").display()
    );
}
