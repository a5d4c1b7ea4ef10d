//! The help a user sees: `--help` output (snapshots) and the man page,
//! which must name every subcommand and every flag the binary has.

use clada::cli::Cli;
use clap::CommandFactory;

use crate::common::{clada, scratch};

fn help(args: &[&str]) -> String {
    let dir = scratch();
    let out = clada(dir.path(), dir.path())
        .env("COLUMNS", "100")
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("UTF-8 help")
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!(help(&["--help"]));
}

#[test]
fn parse_help() {
    insta::assert_snapshot!(help(&["parse", "--help"]));
}

#[test]
fn prompt_help() {
    insta::assert_snapshot!(help(&["prompt", "--help"]));
}

#[test]
fn history_commands_help() {
    let all: String = [
        "undo",
        "redo",
        "squash",
        "step-back",
        "step-forward",
        "status",
        "log",
        "show",
    ]
    .iter()
    .map(|cmd| format!("==== {cmd}\n{}", help(&[cmd, "--help"])))
    .collect();
    insta::assert_snapshot!(all);
}

#[test]
fn hook_help() {
    insta::assert_snapshot!(help(&["hook", "--help"]));
}

#[test]
fn hook_install_help() {
    insta::assert_snapshot!(help(&["hook", "install", "--help"]));
}

#[test]
fn man_page_covers_every_subcommand_and_flag() {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/git-clada.1"))
        .expect("man/git-clada.1 exists");
    // roff escapes '-' as '\-'; compare against the unescaped text.
    let man = man.replace("\\-", "-");
    let cli = Cli::command();
    // Subcommands of subcommands count too, named with their parent
    // (`hook install`).
    let subs = cli.get_subcommands().flat_map(|s| {
        std::iter::once((s.get_name().to_string(), s)).chain(
            s.get_subcommands()
                .map(move |inner| (format!("{} {}", s.get_name(), inner.get_name()), inner)),
        )
    });
    for (name, sub) in subs {
        assert!(
            man.contains(&format!("B {name}")) || man.contains(&format!("fB{name}")),
            "man page lacks `{name}`"
        );
        for arg in sub.get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            if let Some(long) = arg.get_long() {
                assert!(
                    man.contains(&format!("--{long}")),
                    "man page lacks `{name} --{long}`"
                );
            }
        }
    }
}

/// The SYNOPSIS names every command, and every flag of the commands it
/// spells out in full (the others say `[OPTIONS]` or take only
/// `--lock-timeout`, described below); its macro lines quote evenly.
#[test]
fn man_page_synopsis_names_every_command_and_its_flags() {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/git-clada.1"))
        .expect("man/git-clada.1 exists");
    let start = man.find(".SH SYNOPSIS").expect("a SYNOPSIS");
    let end = man[start..].find(".SH DESCRIPTION").expect("a DESCRIPTION") + start;
    let synopsis = man[start..end].replace("\\-", "-");
    // One entry per `.B git clada NAME`, up to the next one.
    let entries: Vec<&str> = synopsis.split(".B git clada ").skip(1).collect();
    let entry = |name: &str| {
        entries
            .iter()
            .find(|e| e.starts_with(&format!("{name}\n")) || e.starts_with(&format!("{name} ")))
            .copied()
    };
    let cli = Cli::command();
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        let found = entry(name).or_else(|| {
            sub.get_subcommands()
                .find_map(|inner| entry(&format!("{name} {}", inner.get_name())))
        });
        let found = found.unwrap_or_else(|| panic!("the SYNOPSIS lacks `{name}`"));
        if [
            "parse",
            "prompt",
            "status",
            "log",
            "show",
            "allow",
            "push-reply",
        ]
        .contains(&name)
        {
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                let flags = [
                    arg.get_long().map(|l| format!("--{l}")),
                    arg.get_short().map(|s| format!("-{s}")),
                ];
                assert!(
                    flags.iter().flatten().any(|f| found.contains(f.as_str()))
                        || arg.is_positional(),
                    "the SYNOPSIS of `{name}` lacks {flags:?}"
                );
            }
        }
    }
    for line in synopsis.lines().filter(|l| l.starts_with('.')) {
        assert_eq!(line.matches('"').count() % 2, 0, "uneven quotes: {line}");
    }
    assert!(!man.contains(")),"), "a stray `))`");
}
