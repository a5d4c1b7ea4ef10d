//! Benchmark: the differential harness of issue 25 over the whole corpus
//! (every commit of `../shared/corpus` and up to 100 of the project's own
//! history), with `git apply`, `git apply --recount` and GNU `patch
//! --fuzz=2` beside clada on the diff scenarios. Run with
//! `bench/fidelity.sh`; doc/fidelity.md says how to read and narrow it
//! (`FIDELITY_ONLY`, `FIDELITY_SCENARIO`, `FIDELITY_KEEP`, …).

#[path = "../tests/fidelity/mod.rs"]
mod fidelity;

use fidelity::{Class, report};

fn main() {
    // `cargo bench` passes `--bench`; this benchmark takes no arguments.
    let config = match fidelity::Config::from_env(false, true, 100, "bench") {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let run = match fidelity::run(&config, 0) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fidelity: {e}");
            std::process::exit(2);
        }
    };
    for n in &run.notes {
        println!("note: {n}");
    }
    let tables = report::tables(&run.cases, &run.commits, &config.scenarios);
    println!("{tables}");
    let bad = report::list(&run.cases, &run.out_dir, |c| {
        matches!(c.outcome.class, Class::Wrong | Class::Crash | Class::Bug)
    });
    if !bad.is_empty() {
        println!("WRONG, crash and harness-bug cases of clada:\n{bad}");
    }
    let na = report::na_reasons(&run.cases);
    println!("\nn/a by reason:\n{na}");
    let _ = std::fs::write(run.out_dir.join("tables.md"), format!("{tables}\n{na}"));
    println!(
        "{} cases in {:.0} s; records of every case that is not exact: {}",
        run.cases.len(),
        run.wall.as_secs_f64(),
        run.out_dir.join("cases.jsonl").display()
    );
}
