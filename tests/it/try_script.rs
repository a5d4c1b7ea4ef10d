//! scripts/try.sh, README's first command, with a stand-in for `cargo`
//! (the real build takes minutes): where it installs the binary and the
//! man page, that the example runs, and what it says about PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::scratch;

/// Stands in for `cargo install --locked --root ROOT --path DIR`: puts the
/// test's git-clada in ROOT/bin, as cargo would; refuses any other call.
const FAKE_CARGO: &str = r#"#!/usr/bin/env bash
set -eu
[[ $1 == install && $2 == --locked && $3 == --root && $5 == --path ]] || { echo "fake cargo: unexpected call: $*" >&2; exit 3; }
mkdir -p "$4/bin"
cp "$CLADA_TEST_BIN" "$4/bin/git-clada"
"#;

struct Run {
    stdout: String,
    /// The temporary directory everything is under.
    dir: tempfile::TempDir,
}

/// The PATH entries that hold no git-clada of their own.
fn path_without_clada() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("git-clada").exists())
        .collect()
}

/// Runs try.sh with `vars` (relative values are under the temporary
/// directory) and, first on PATH, the stand-in cargo and `extra_path`.
fn run_try(vars: &[(&str, &str)], extra_path: Option<&str>) -> Run {
    let dir = scratch();
    let t = dir.path();
    let fake = t.join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join("cargo"), FAKE_CARGO).unwrap();
    std::fs::set_permissions(
        fake.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir_all(t.join("tmp")).unwrap();
    let mut path = vec![fake];
    path.extend(extra_path.map(|p| t.join(p)));
    path.extend(path_without_clada());
    let mut cmd = Command::new("bash");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/try.sh"))
        .env_clear()
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", t)
        .env("TMPDIR", t.join("tmp"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("CLADA_TEST_BIN", env!("CARGO_BIN_EXE_git-clada"))
        .current_dir(t);
    for (name, value) in vars {
        cmd.env(name, t.join(value));
    }
    let out = cmd.output().expect("run try.sh");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "try.sh failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Run { stdout, dir }
}

fn man_page() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/man/git-clada.1")).unwrap()
}

fn assert_installed_under(prefix: &Path) {
    assert!(
        prefix.join("bin/git-clada").is_file(),
        "{}",
        prefix.display()
    );
    assert_eq!(
        std::fs::read(prefix.join("share/man/man1/git-clada.1")).ok(),
        Some(man_page()),
        "the man page beside {}",
        prefix.display()
    );
}

#[test]
fn cargo_install_root_gets_binary_and_man_page_and_the_path_line_is_printed() {
    let run = run_try(
        &[("CARGO_INSTALL_ROOT", "root"), ("CARGO_HOME", "cargo-home")],
        None,
    );
    let t = run.dir.path();
    assert_installed_under(&t.join("root"));
    assert!(!t.join("cargo-home").exists(), "{}", run.stdout);
    // The example ran: the reply was applied.
    assert!(
        run.stdout.contains("print(greet(\"world\"))"),
        "{}",
        run.stdout
    );
    let bin = t.join("root/bin");
    assert!(
        run.stdout.contains(&format!(
            "git clada is not on your PATH yet: {} is missing from it.",
            bin.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("    export PATH={}:\"$PATH\"\n", bin.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn cargo_home_with_its_bin_on_path_is_ready() {
    let run = run_try(&[("CARGO_HOME", "cargo-home")], Some("cargo-home/bin"));
    let t = run.dir.path();
    assert_installed_under(&t.join("cargo-home"));
    assert!(
        run.stdout.contains(&format!(
            "git clada is ready: {} is on your PATH.",
            t.join("cargo-home/bin").display()
        )),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("export PATH"), "{}", run.stdout);
}

#[test]
fn a_trailing_slash_or_a_space_in_the_root_is_said_right() {
    // CARGO_HOME=…/cargo-home/ with …/cargo-home/bin on PATH: ready.
    let run = run_try(&[("CARGO_HOME", "cargo-home/")], Some("cargo-home/bin"));
    let bin = run.dir.path().join("cargo-home/bin");
    assert!(
        run.stdout.contains(&format!(
            "git clada is ready: {} is on your PATH.",
            bin.display()
        )),
        "{}",
        run.stdout
    );
    // A root with a space: the line to add works when pasted into a shell.
    let run = run_try(&[("CARGO_INSTALL_ROOT", "my root")], None);
    let line = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("export PATH="))
        .unwrap_or_else(|| panic!("{}", run.stdout))
        .trim()
        .to_string();
    let echoed = Command::new("bash")
        .args(["-c", &format!("PATH=/x; {line}; printf %s \"$PATH\"")])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&echoed.stdout),
        format!("{}:/x", run.dir.path().join("my root/bin").display()),
        "{line}"
    );
}

/// Stands in for `cargo install --locked [--root ROOT] --path DIR` as
/// cargo decides the root: ROOT, else $CARGO_INSTALL_ROOT, else
/// $CARGO_HOME, else ~/.cargo.
const FAKE_CARGO_ANY_ROOT: &str = r#"#!/usr/bin/env bash
set -eu
[[ $1 == install && $2 == --locked ]] || { echo "fake cargo: unexpected call: $*" >&2; exit 3; }
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
if [[ $3 == --root ]]; then root=$4; fi
mkdir -p "$root/bin"
cp "$CLADA_TEST_BIN" "$root/bin/git-clada"
"#;

/// README's "Install only" commands, run as written (in the checkout, a
/// stand-in cargo): the manual lands beside the binary wherever cargo puts
/// it, not in a hard-coded ~/.cargo.
#[test]
fn readme_install_only_puts_the_man_page_beside_the_binary() {
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find("### Install only").expect("the section")..];
    let block = section
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("its sh block")
        .0;
    let dir = scratch();
    let t = dir.path();
    let fake = t.join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join("cargo"), FAKE_CARGO_ANY_ROOT).unwrap();
    std::fs::set_permissions(
        fake.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut path = vec![fake];
    path.extend(path_without_clada());
    for (var, prefix) in [
        (Some("CARGO_INSTALL_ROOT"), t.join("root")),
        (Some("CARGO_HOME"), t.join("cargo-home")),
        (None, t.join(".cargo")),
    ] {
        let mut cmd = Command::new("bash");
        cmd.args(["-euc", block])
            .env_clear()
            .env("PATH", std::env::join_paths(&path).unwrap())
            .env("HOME", t)
            .env("CLADA_TEST_BIN", env!("CARGO_BIN_EXE_git-clada"))
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if let Some(var) = var {
            cmd.env(var, &prefix);
        }
        let out = cmd.output().expect("run bash");
        assert!(
            out.status.success(),
            "{block}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_installed_under(&prefix);
    }
}

/// What `cargo install` builds is lean (no debug info, stripped: 13 MB
/// against 77 MB with line tables, issue 29), and a profile with symbols
/// is kept for profilers, with release's optimisations.
#[test]
fn the_release_profile_is_stripped_and_profiling_keeps_symbols() {
    let manifest: toml::Table = include_str!("../../Cargo.toml").parse().unwrap();
    let profile = &manifest["profile"];
    let release = &profile["release"];
    assert_eq!(release.get("strip"), Some(&toml::Value::Boolean(true)));
    assert_eq!(release.get("debug"), Some(&toml::Value::Boolean(false)));
    let profiling = &profile["profiling"];
    assert_eq!(profiling["inherits"].as_str(), Some("release"));
    assert_eq!(profiling["strip"], toml::Value::Boolean(false));
    assert_eq!(profiling["debug"].as_str(), Some("line-tables-only"));
    // Inherited from release, or set the same: what it measures is what
    // ships.
    for key in ["opt-level", "lto", "codegen-units", "panic"] {
        let own = profiling.get(key);
        assert!(own.is_none() || own == release.get(key), "{key}");
    }
}
