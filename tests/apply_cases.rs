//! Data-driven `git clada apply` cases: one directory in `test-data/apply/`
//! is one test.
//!
//! A case directory `test-data/apply/<case>/` holds:
//!
//! - `reply.md`: the reply to apply (kept outside the repository). `$REPO`
//!   in it stands for the repository's absolute path (for syntaxes that
//!   name files by absolute paths).
//! - `before/`: the files of the repository's first commit (missing = none).
//! - `dirty/` (optional): files written over the working tree after that
//!   commit and left uncommitted. `NAME.DELETE` deletes `NAME`; new files
//!   are untracked.
//! - `args` (optional): extra arguments for `apply`, one per line.
//! - `setup` (optional): one directive per line (`#` starts a comment):
//!   - `unborn`: make no first commit; `before/` files stay untracked.
//!   - `exec PATH`: `chmod +x PATH` before the first commit.
//!   - `symlink LINK TARGET`: create the symbolic link `LINK` → `TARGET`
//!     before the first commit. It is expected unchanged afterwards.
//!   - `config KEY VALUE`: `git config KEY VALUE` in the repository.
//!   - `detach`: detach HEAD at the first commit (after `dirty/`).
//! - `after/`: every file of the working tree after the apply (`.git`
//!   excluded; missing = none), compared byte for byte, executable bit
//!   included (taken from the fixture file's own mode). Empty directories
//!   left in the working tree count as a difference.
//! - `report.snap`: insta snapshot of the exit status, the report, stderr,
//!   the branch's history (`git log --format=%s`, each clada commit with
//!   the paths it changed), committed modes other than 100644, the tip's
//!   full message when it is a clada commit, `git status --porcelain`, and
//!   every ref under `refs/clada` with its history. Commit ids become
//!   `<base>`, `<pre>`, `<post>` …, the reply's blob id `<reply-blob>`, so
//!   snapshots are stable.
//!
//! In `before/`, `dirty/` and `after/`, a file name starting with `_.`
//! stands for the name without the `_` (`_.gitignore` is `.gitignore`), so
//! that such files do not act on this project's own repository. The files
//! are stored with exact bytes (`test-data/apply/.gitattributes` has
//! `* -text`), so CRLF fixtures stay CRLF.
//!
//! Everything runs in a temporary directory with a cleared environment, no
//! system or global git config, and fixed dates. A new snapshot is written
//! with `INSTA_UPDATE=always cargo test --test apply_cases`.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DATE: &str = "2026-01-01T00:00:00Z";

/// A hermetic environment for the binary and for `git`.
struct Env {
    home: PathBuf,
}

impl Env {
    fn apply(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_DATE", DATE);
    }

    /// Runs `git` in `repo` and returns stdout; any failure panics.
    fn git(&self, repo: &Path, args: &[&str]) -> String {
        let out = self.git_output(repo, args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("git prints UTF-8")
    }

    fn git_output(&self, repo: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        self.apply(&mut cmd);
        cmd.current_dir(repo)
            .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
            .args(["-c", "core.quotePath=false"])
            .args(args)
            .output()
            .expect("run git")
    }
}

/// One entry of a working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File { bytes: Vec<u8>, exec: bool },
    Symlink(PathBuf),
    EmptyDir,
}

/// The name a fixture file stands for (`_.gitignore` → `.gitignore`).
fn real_name(name: &str) -> &str {
    name.strip_prefix('_')
        .filter(|rest| rest.starts_with('.'))
        .unwrap_or(name)
}

/// Every entry under `root`, by `/`-separated relative path; `.git` is
/// skipped, and with `fixture` the `_.` names are translated.
fn walk(root: &Path, fixture: bool) -> BTreeMap<String, Entry> {
    fn go(dir: &Path, prefix: &str, fixture: bool, out: &mut BTreeMap<String, Entry>) {
        let mut empty = true;
        for entry in fs::read_dir(dir).expect("read a directory") {
            let entry = entry.expect("directory entry");
            let name = entry.file_name().into_string().expect("UTF-8 file name");
            if prefix.is_empty() && name == ".git" {
                empty = false;
                continue;
            }
            empty = false;
            let shown = if fixture { real_name(&name) } else { &name };
            let rel = format!("{prefix}{shown}");
            let path = entry.path();
            let meta = fs::symlink_metadata(&path).expect("metadata");
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("read link");
                out.insert(rel, Entry::Symlink(target));
            } else if meta.is_dir() {
                go(&path, &format!("{rel}/"), fixture, out);
            } else {
                let bytes = fs::read(&path).expect("read a file");
                let exec = meta.permissions().mode() & 0o111 != 0;
                out.insert(rel, Entry::File { bytes, exec });
            }
        }
        if empty && !prefix.is_empty() {
            out.insert(prefix.trim_end_matches('/').to_string(), Entry::EmptyDir);
        }
    }
    let mut out = BTreeMap::new();
    if root.is_dir() {
        go(root, "", fixture, &mut out);
    }
    out
}

/// Writes the fixture files of `from` into `repo`, with their modes;
/// `NAME.DELETE` (when `deletes`) removes `NAME`.
fn materialise(from: &Path, repo: &Path, deletes: bool) {
    for (rel, entry) in walk(from, true) {
        let Entry::File { bytes, exec } = entry else {
            panic!("fixture {}: {rel} is not a regular file", from.display());
        };
        if deletes && let Some(name) = rel.strip_suffix(".DELETE") {
            let target = repo.join(name);
            fs::remove_file(&target).unwrap_or_else(|e| panic!("dirty: cannot delete {name}: {e}"));
            // Leave no empty directory behind, as git would.
            let mut dir = target.parent().map(Path::to_path_buf);
            while let Some(d) = dir.filter(|d| d != repo) {
                if fs::remove_dir(&d).is_err() {
                    break;
                }
                dir = d.parent().map(Path::to_path_buf);
            }
            continue;
        }
        let target = repo.join(&rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        fs::write(&target, &bytes).expect("write a fixture file");
        let mode = if exec { 0o755 } else { 0o644 };
        fs::set_permissions(&target, fs::Permissions::from_mode(mode)).expect("set the mode");
    }
}

/// The `setup` directives of a case.
#[derive(Default)]
struct Setup {
    unborn: bool,
    detach: bool,
    exec: Vec<String>,
    symlinks: Vec<(String, String)>,
    config: Vec<(String, String)>,
}

fn read_setup(case: &Path) -> Setup {
    let mut setup = Setup::default();
    let Ok(text) = fs::read_to_string(case.join("setup")) else {
        return setup;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["unborn"] => setup.unborn = true,
            ["detach"] => setup.detach = true,
            ["exec", path] => setup.exec.push(path.to_string()),
            ["symlink", link, target] => {
                setup.symlinks.push((link.to_string(), target.to_string()))
            }
            ["config", key, value @ ..] if !value.is_empty() => {
                setup.config.push((key.to_string(), value.join(" ")))
            }
            _ => panic!("setup: unknown directive {line:?}"),
        }
    }
    setup
}

fn read_args(case: &Path) -> Vec<String> {
    match fs::read_to_string(case.join("args")) {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Replaces every commit id (full, or a prefix of 7+ hex digits) in `text`
/// with its name.
fn scrub(text: &str, names: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let run = bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            .count();
        let ends = bytes
            .get(i + run)
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        if boundary && run >= 7 && ends {
            let hex = &text[i..i + run];
            if let Some((_, name)) = names.iter().find(|(id, _)| id.starts_with(hex)) {
                out.push_str(name);
                i += run;
                continue;
            }
        }
        let c = text[i..].chars().next().expect("a character");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Names for every commit and the reply blob: `<base>`, `<pre>`, `<post>`,
/// then `<commit-N>` for anything else (notes commits).
fn id_names(env: &Env, repo: &Path, reply: &Path) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    let log = env.git(repo, &["log", "--all", "--format=%H %s"]);
    for line in log.lines() {
        let (id, subject) = line.split_once(' ').unwrap_or((line, ""));
        let base = if subject.starts_with("[clada:pre]") {
            "pre"
        } else if subject.starts_with("[clada:post]") {
            "post"
        } else if subject == "initial" {
            "base"
        } else {
            "commit"
        };
        let n = taken.entry(base.to_string()).or_default();
        *n += 1;
        let name = if base == "commit" || *n > 1 {
            format!("<{base}-{n}>")
        } else {
            format!("<{base}>")
        };
        names.push((id.to_string(), name));
    }
    let blob = env.git(
        repo,
        &["hash-object", reply.to_str().expect("UTF-8 temp path")],
    );
    names.push((blob.trim().to_string(), "<reply-blob>".to_string()));
    names
}

fn describe(entry: &Entry) -> String {
    match entry {
        Entry::File { bytes, exec } => format!(
            "{}file, {} bytes: {:?}",
            if *exec { "executable " } else { "" },
            bytes.len(),
            String::from_utf8_lossy(bytes)
        ),
        Entry::Symlink(target) => format!("symlink to {}", target.display()),
        Entry::EmptyDir => "empty directory".to_string(),
    }
}

/// The subjects of the commits reachable from `rev`, newest first, each
/// but the fixture's own first commit followed by the paths it changed.
fn history(env: &Env, repo: &Path, rev: &str) -> String {
    let mut out = String::new();
    let log = env.git(repo, &["log", "--format=%H %s", rev]);
    for line in log.lines() {
        let (id, subject) = line.split_once(' ').unwrap_or((line, ""));
        out.push_str(&format!("{subject}\n"));
        if subject == "initial" {
            continue;
        }
        let changes = env.git(
            repo,
            &[
                "diff-tree",
                "-r",
                "--root",
                "--no-commit-id",
                "--name-status",
                id,
            ],
        );
        for change in changes.lines() {
            out.push_str(&format!("    {}\n", change.replace('\t', " ")));
        }
    }
    out
}

fn apply_case(reply_path: &Path) -> datatest_stable::Result<()> {
    let case = reply_path.parent().expect("the case directory");
    let setup = read_setup(case);
    let args = read_args(case);

    let temp = tempfile::tempdir()?;
    let home = temp.path().join("home");
    let repo = temp.path().join("repo");
    fs::create_dir_all(&home)?;
    fs::create_dir_all(&repo)?;
    let reply = temp.path().join("reply.md");
    // `$REPO` in a reply stands for the repository's absolute path.
    let text = fs::read(reply_path)?;
    let repo_str = repo.to_str().expect("UTF-8 temp path");
    fs::write(
        &reply,
        String::from_utf8_lossy(&text).replace("$REPO", repo_str),
    )?;
    let env = Env { home };

    env.git(&repo, &["init", "-q", "-b", "main"]);
    for (key, value) in &setup.config {
        env.git(&repo, &["config", key, value]);
    }
    materialise(&case.join("before"), &repo, false);
    for path in &setup.exec {
        let p = repo.join(path);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("setup exec {path}: {e}"));
    }
    for (link, target) in &setup.symlinks {
        let p = repo.join(link);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        std::os::unix::fs::symlink(target, &p)
            .unwrap_or_else(|e| panic!("setup symlink {link}: {e}"));
    }
    if !setup.unborn {
        env.git(&repo, &["add", "-A"]);
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "initial"]);
    }
    materialise(&case.join("dirty"), &repo, true);
    if setup.detach {
        env.git(&repo, &["checkout", "-q", "--detach"]);
    }

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_git-clada"));
    env.apply(&mut cmd);
    let out = cmd
        .current_dir(&repo)
        .arg("apply")
        .args(&args)
        .arg(&reply)
        .output()?;
    let code = out.status.code().expect("exit code");
    let names = id_names(&env, &repo, &reply);
    let temp_str = temp.path().to_str().expect("UTF-8 temp path");
    let clean =
        |bytes: &[u8]| scrub(&String::from_utf8_lossy(bytes), &names).replace(temp_str, "$TMP");

    let mut snap = format!("exit: {code}\n--- report ---\n{}", clean(&out.stdout));
    if !out.stderr.is_empty() {
        snap.push_str(&format!("--- stderr ---\n{}", clean(&out.stderr)));
    }
    let born = env
        .git_output(&repo, &["rev-parse", "--verify", "-q", "main"])
        .status
        .success();
    let log = if born {
        history(&env, &repo, "main")
    } else {
        "(unborn)\n".to_string()
    };
    snap.push_str(&format!("--- git log ---\n{log}"));
    if born {
        // Committed modes other than a plain file: executables, links.
        let tree = env.git(&repo, &["ls-tree", "-r", "main"]);
        let modes: String = tree
            .lines()
            .filter(|l| !l.starts_with("100644 "))
            .filter_map(|l| {
                let (meta, path) = l.split_once('\t')?;
                Some(format!("{} {path}\n", meta.split(' ').next()?))
            })
            .collect();
        if !modes.is_empty() {
            snap.push_str(&format!("--- modes ---\n{modes}"));
        }
    }
    let tip = env.git_output(&repo, &["log", "-1", "--format=%B", "main"]);
    let tip_message = String::from_utf8_lossy(&tip.stdout).into_owned();
    if tip_message.starts_with("[clada:") {
        snap.push_str(&format!(
            "--- tip message ---\n{}",
            clean(tip_message.trim_end().as_bytes()) + "\n"
        ));
    }
    if tip_message.starts_with("[clada:post]") {
        // git.md §1.7: the reply is stored as a note on the post commit.
        let note = env.git(
            &repo,
            &["notes", "--ref", "refs/notes/clada", "show", "main"],
        );
        let sent = fs::read_to_string(&reply)?;
        assert_eq!(
            note.trim_end(),
            sent.trim_end(),
            "the note on the post commit is not the reply"
        );
    }
    let status = env.git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    snap.push_str(&format!("--- git status ---\n{status}"));
    let refs = env.git(
        &repo,
        &["for-each-ref", "--format=%(refname)", "refs/clada"],
    );
    snap.push_str("--- refs/clada ---\n");
    for name in refs.lines() {
        let one = history(&env, &repo, name);
        snap.push_str(&format!("{name}:\n{}", clean(one.as_bytes())));
    }

    // The working tree against after/.
    let mut expected = walk(&case.join("after"), true);
    for (link, target) in &setup.symlinks {
        expected.insert(link.clone(), Entry::Symlink(PathBuf::from(target)));
    }
    let actual = walk(&repo, false);
    let mut problems = Vec::new();
    for (path, want) in &expected {
        match actual.get(path) {
            None => problems.push(format!("missing {path}: expected {}", describe(want))),
            Some(got) if got != want => problems.push(format!(
                "differs {path}:\n    expected {}\n    found    {}",
                describe(want),
                describe(got)
            )),
            Some(_) => {}
        }
    }
    for (path, got) in &actual {
        if !expected.contains_key(path) {
            problems.push(format!("unexpected {path}: {}", describe(got)));
        }
    }

    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(case.canonicalize()?);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(reply_path);
    settings.set_omit_expression(true);
    let snapshot_result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!("report", snap));
    }));
    assert!(
        problems.is_empty(),
        "the working tree differs from {}:\n  {}\n\nreport:\n{snap}",
        case.join("after").display(),
        problems.join("\n  ")
    );
    if let Err(panic) = snapshot_result {
        std::panic::resume_unwind(panic);
    }
    Ok(())
}

datatest_stable::harness! {
    { test = apply_case, root = "test-data/apply", pattern = r"^[^/]+/reply\.md$" },
}
