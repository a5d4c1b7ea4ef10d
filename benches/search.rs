//! Benchmark: a SEARCH that fails on a 1 MB file must stay cheap (issue 3:
//! "well under a second" for a 200-line pattern). Run with `cargo bench
//! --bench search`; prints the median of several runs per scenario.

use std::time::{Duration, Instant};

use clada::apply::search::{MatchMode, Search, search};
use clada::csl::validate::Count;

/// About 1 MB of code-like lines, tab-indented, with many repeated lines.
fn file() -> String {
    let mut out = String::new();
    let mut n = 0u64;
    while out.len() < 1_000_000 {
        n += 1;
        out.push_str(&format!("fn function_{n}(arg: u64) -> u64 {{\n"));
        out.push_str(&format!(
            "\tlet value_{n} = arg.wrapping_mul({});\n",
            n * 7919 % 10007
        ));
        out.push_str("\tif value > 10 {\n\t\treturn value;\n\t}\n");
        out.push_str(&format!("\tvalue_{n} + {}\n}}\n\n", n % 97));
    }
    out
}

fn time(label: &str, file: &str, pattern: &str) {
    let s = Search {
        pattern,
        to: None,
        replacement: "replacement();",
        count: Count::Exactly(1),
        mode: MatchMode::Exact,
    };
    let mut runs: Vec<Duration> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let result = search(file.as_bytes(), &s);
            let spent = t.elapsed();
            assert!(result.is_err(), "the pattern must not match");
            spent
        })
        .collect();
    runs.sort();
    println!(
        "{label}: median {:.1} ms, max {:.1} ms",
        runs[runs.len() / 2].as_secs_f64() * 1e3,
        runs[runs.len() - 1].as_secs_f64() * 1e3
    );
}

fn main() {
    let file = file();
    let lines: Vec<&str> = file.lines().collect();
    // 200 lines of the file, re-indented with spaces: close but no match.
    let near: String = lines[15_000..15_200]
        .iter()
        .map(|l| l.replace('\t', "    "))
        .collect::<Vec<_>>()
        .join("\n");
    // 200 lines that share nothing with the file: the fallback scan.
    let far: String = (0..200)
        .map(|i| format!("completely unrelated text number {i} with some words"))
        .collect::<Vec<_>>()
        .join("\n");
    // 200 lines made of the most common lines of the file.
    let common: String = ["\tif value > 10 {", "\t\treturn value;", "\t}", "}", ""]
        .iter()
        .cycle()
        .take(200)
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
        + "\nnot in the file";
    println!(
        "file: {} bytes, {} lines; pattern: 200 lines",
        file.len(),
        lines.len()
    );
    time("near miss (tabs vs spaces)", &file, &near);
    time("nothing alike (fallback scan)", &file, &far);
    time("only common lines", &file, &common);
}
