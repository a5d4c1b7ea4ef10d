//! `git clada completions`: the scripts it prints, and — for bash, where
//! the machine has git's own completion — completing a real command line
//! through git's completion and through `git-clada` directly.

use std::path::Path;

use crate::common::{clada, scratch};

fn script(shell: &str) -> String {
    let dir = scratch();
    let out = clada(dir.path(), dir.path())
        .args(["completions", shell])
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("UTF-8 script")
}

#[test]
fn each_shell_gets_a_script_for_git_clada() {
    // What each shell's loader keys on: zsh's `#compdef`, fish's `-c`,
    // bash's `complete -F … git-clada`.
    let zsh = script("zsh");
    assert!(zsh.starts_with("#compdef git-clada\n"), "{zsh}");
    let fish = script("fish");
    assert!(fish.contains("complete -c git-clada "), "{fish}");
    let bash = script("bash");
    assert!(
        bash.lines()
            .any(|l| l.trim().starts_with("complete -F ") && l.ends_with(" git-clada")),
        "{bash}"
    );
}

#[test]
fn an_unknown_shell_is_refused() {
    let dir = scratch();
    clada(dir.path(), dir.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}

/// git's bash completion script, where the machine has one.
fn git_bash_completion() -> Option<&'static Path> {
    [
        "/usr/share/bash-completion/completions/git",
        "/usr/local/share/bash-completion/completions/git",
        "/etc/bash_completion.d/git",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.is_file())
}

/// What bash offers for `line` (the cursor at its end), with git's
/// completion and clada's loaded, as `complete` would call it.
fn complete_in_bash(git_completion: &Path, line: &str) -> Vec<String> {
    let dir = scratch();
    let ours = dir.path().join("git-clada.bash");
    std::fs::write(&ours, script("bash")).unwrap();
    let program = r#"
source "$1"
source "$2"
read -ra COMP_WORDS <<< "$3"
COMP_LINE=$3
COMP_POINT=${#COMP_LINE}
# A line ending in a space completes a new, empty word.
if [[ $3 == *' ' ]]; then COMP_WORDS+=(""); fi
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
# The function `complete` names for the line's first word.
spec=$(complete -p "${COMP_WORDS[0]}")
function=${spec##*-F }
function=${function%% *}
"$function" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", program, "bash"])
        .arg(git_completion)
        .arg(&ours)
        .arg(line)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .current_dir(dir.path())
        .output()
        .expect("run bash");
    assert!(
        output.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn git_s_bash_completion_completes_git_clada() {
    let Some(git_completion) = git_bash_completion() else {
        eprintln!("SKIPPED: no bash completion script of git on this machine");
        return;
    };
    // git's completion is `-o nospace`: a whole word comes with its space.
    assert_eq!(complete_in_bash(git_completion, "git clada ap"), ["apply "]);
    // After git's own options, even one that looks like a subcommand.
    assert_eq!(
        complete_in_bash(git_completion, "git -C undo clada ap"),
        ["apply "]
    );
    assert_eq!(
        complete_in_bash(git_completion, "git -C apply clada completions f"),
        ["fish "]
    );
    let mut steps = complete_in_bash(git_completion, "git clada step-");
    steps.sort();
    assert_eq!(steps, ["step-back ", "step-forward "]);
    assert!(
        complete_in_bash(git_completion, "git clada apply --dry")
            .contains(&"--dry-run ".to_string())
    );
    assert_eq!(
        complete_in_bash(git_completion, "git clada completions f"),
        ["fish "]
    );
    // The program itself, as `git-clada …`.
    assert_eq!(complete_in_bash(git_completion, "git-clada ap"), ["apply"]);
}

/// Every option with a fixed set of values, and its values.
const FIXED: &[(&str, &[&str])] = &[
    (
        "syntax",
        &[
            "auto", "csl", "cml", "sham", "telt", "replacer", "aider", "patch", "diff", "json",
        ],
    ),
    ("format", &["text", "json"]),
    ("color", &["auto", "always", "never"]),
    ("error-detail", &["minimal", "full", "debug"]),
    ("match", &["exact", "whitespace"]),
    ("output-mode", &["stream", "buffer", "silent"]),
];

/// Each shell's script offers the values of every option with a fixed set
/// of them wherever the option appears: never file names for `--syntax`.
#[test]
fn options_with_fixed_values_complete_them_in_every_shell() {
    let (bash, zsh, fish) = (script("bash"), script("zsh"), script("fish"));
    for (option, all) in FIXED {
        // `prompt --syntax` names a syntax to write, so it has no `auto`
        // (apply's and parse's have it: the bash test below completes it).
        let values: Vec<&str> = all
            .iter()
            .copied()
            .filter(|v| !(*option == "syntax" && *v == "auto"))
            .collect();
        // bash: the option's case in each subcommand, up to its `;;`.
        let case = format!("--{option})");
        let cases: Vec<&str> = bash
            .match_indices(&case)
            .map(|(at, _)| &bash[at..at + bash[at..].find(";;").unwrap()])
            .collect();
        assert!(!cases.is_empty(), "bash has no case for --{option}");
        for case in cases {
            let words = case
                .split_once("compgen -W \"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(words, _)| words.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_else(|| panic!("bash completes --{option} without its values: {case}"));
            let missing: Vec<&&str> = values.iter().filter(|v| !words.contains(v)).collect();
            assert!(
                missing.is_empty(),
                "bash, --{option}: no {missing:?} in {words:?}"
            );
        }
        // zsh: `'--syntax=[help]:NAME:(auto csl …)'`, or with descriptions
        // `:FORMAT:((text\:"…" json\:"…"))` over several lines.
        let spec = format!("'--{option}=[");
        let specs: Vec<&str> = zsh
            .match_indices(&spec)
            .map(|(at, _)| {
                let rest = &zsh[at + spec.len()..];
                let end = rest.find("' \\\n").unwrap_or(rest.len());
                &rest[..end]
            })
            .collect();
        assert!(!specs.is_empty(), "zsh has no spec for --{option}");
        for spec in specs {
            let action = &spec[spec.rfind("]:").unwrap()..];
            for value in &values {
                assert!(
                    action.contains(&format!("({value} "))
                        || action.contains(&format!(" {value} "))
                        || action.contains(&format!(" {value})"))
                        || action.contains(&format!("{value}\\:")),
                    "zsh completes --{option} without {value}: {action}"
                );
            }
        }
        // fish: `complete … -l syntax … -r -f -a "auto\t'…'` (a `\t`
        // written out) and the other values on the lines up to the quote.
        let flag = format!(" -l {option} ");
        let lines: Vec<&str> = fish
            .match_indices(&flag)
            .map(|(at, _)| {
                let rest = &fish[at..];
                let a = rest
                    .find(" -a \"")
                    .unwrap_or_else(|| panic!("fish completes --{option} without values"));
                let after = &rest[a + 5..];
                &after[..after.find("\"\n").unwrap()]
            })
            .collect();
        assert!(!lines.is_empty(), "fish has no line for --{option}");
        for list in lines {
            let words: Vec<&str> = list
                .split(['\n', ' '])
                .filter_map(|w| w.split("\\t").next())
                .filter(|w| !w.is_empty() && !w.starts_with('\''))
                .collect();
            for value in &values {
                assert!(
                    words.contains(value),
                    "fish completes --{option} without {value}: {list}"
                );
            }
        }
    }
}

/// Through git's bash completion, `--syntax <TAB>` lists the syntaxes.
#[test]
fn git_s_bash_completion_completes_syntax_names() {
    let Some(git_completion) = git_bash_completion() else {
        eprintln!("SKIPPED: no bash completion script of git on this machine");
        return;
    };
    let mut offered = complete_in_bash(git_completion, "git clada apply --syntax ");
    offered.sort();
    assert_eq!(
        offered,
        [
            "aider ",
            "auto ",
            "cml ",
            "csl ",
            "diff ",
            "json ",
            "patch ",
            "replacer ",
            "sham ",
            "telt "
        ]
    );
    assert_eq!(
        complete_in_bash(git_completion, "git clada prompt --syntax te"),
        ["telt "]
    );
}
