//! The corpora: the shared real-commit archives (`../shared/corpus`), each
//! unpacked with `tar -xJf` into a temporary directory, and the project's
//! own git history rebuilt into the same layout (before/, after/,
//! diff.patch and the file list of meta.json).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::gitdiff::{self, Section};

/// One commit to rebuild: its directory holds `before/`, `after/` and
/// `diff.patch`.
pub struct Entry {
    /// `flask`, `fd`, `fzf` or `own`.
    pub corpus: String,
    /// The commit id (full).
    pub commit: String,
    pub dir: PathBuf,
    pub tags: Vec<String>,
    /// The diff, parsed by the harness's own reader.
    pub sections: Vec<Section>,
}

impl Entry {
    /// `corpus/first-12-hex`, the name a case is known by.
    pub fn name(&self) -> String {
        format!("{}/{}", self.corpus, &self.commit[..12])
    }

    pub fn before(&self) -> PathBuf {
        self.dir.join("before")
    }

    pub fn after(&self) -> PathBuf {
        self.dir.join("after")
    }

    pub fn diff(&self) -> Vec<u8> {
        std::fs::read(self.dir.join("diff.patch")).unwrap_or_default()
    }

    /// A number drawn from the commit id and `salt`, the same on every
    /// run: every deterministic choice of a generator comes from it.
    pub fn seed(&self, salt: &str) -> u64 {
        use sha1::{Digest, Sha1};
        let mut h = Sha1::new();
        h.update(self.commit.as_bytes());
        h.update(salt.as_bytes());
        let d = h.finalize();
        u64::from_be_bytes(d[..8].try_into().expect("eight bytes"))
    }
}

/// A git command with no user or system configuration.
pub fn git(dir: &Path, home: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C");
    cmd
}

fn output(mut cmd: Command) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// Unpacks `<shared>/corpus/<name>.tar.xz` for each name into `into`
/// and reads every entry, in the order of `index.tsv`.
pub fn load_shared(corpus_dir: &Path, names: &[&str], into: &Path) -> Result<Vec<Entry>, String> {
    let index = std::fs::read_to_string(corpus_dir.join("index.tsv"))
        .map_err(|e| format!("{}: {e}", corpus_dir.join("index.tsv").display()))?;
    let mut out = Vec::new();
    for name in names {
        let archive = corpus_dir.join(format!("{name}.tar.xz"));
        let mut tar = Command::new("tar");
        tar.arg("-xJf").arg(&archive).arg("-C").arg(into);
        output(tar)?;
        for row in index.lines().skip(1) {
            let cols: Vec<&str> = row.split('\t').collect();
            if cols.len() < 5 || cols[0] != *name {
                continue;
            }
            let commit = cols[1].to_string();
            let dir = into.join(name).join(&commit[..12]);
            let diff = std::fs::read(dir.join("diff.patch"))
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            let sections = parse_checked(&diff).map_err(|e| format!("{name}/{commit}: {e}"))?;
            let tags = match cols[4] {
                "-" => Vec::new(),
                t => t.split(',').map(str::to_string).collect(),
            };
            out.push(Entry {
                corpus: name.to_string(),
                commit,
                dir,
                tags,
                sections,
            });
        }
    }
    Ok(out)
}

/// Parses a diff and checks that printing it back gives it byte for byte:
/// a diff the harness cannot reproduce cannot be damaged faithfully.
fn parse_checked(diff: &[u8]) -> Result<Vec<Section>, String> {
    let sections = gitdiff::parse(diff)?;
    if gitdiff::render(&sections) != diff {
        return Err("the harness's diff reader does not round-trip this diff".into());
    }
    Ok(sections)
}

/// The project's own history as a corpus: non-merge commits with 1–15
/// files and at most 400 changed lines, text only, no copies, type
/// changes or submodules; ranked by the SHA-1 of their id (stable as the
/// history grows) and the first `limit` taken. Returns the entries and a
/// note when the history could not be read whole.
pub fn load_own(repo: &Path, into: &Path, limit: usize) -> (Vec<Entry>, Option<String>) {
    let home = into;
    let mut note = None;
    let shallow = output({
        let mut c = git(repo, home);
        c.args(["rev-parse", "--is-shallow-repository"]);
        c
    });
    match shallow {
        Err(e) => return (Vec::new(), Some(format!("own history skipped: {e}"))),
        Ok(s) if s.starts_with(b"true") => {
            note = Some(
                "own history: the clone is shallow; only commits whose parent is present are used \
                 (fetch with --unshallow for the whole history)"
                    .to_string(),
            );
        }
        Ok(_) => {}
    }
    let log = match output({
        let mut c = git(repo, home);
        c.args(["log", "--no-merges", "--format=%H %P", "HEAD"]);
        c
    }) {
        Ok(l) => String::from_utf8_lossy(&l).into_owned(),
        Err(e) => return (Vec::new(), Some(format!("own history skipped: {e}"))),
    };
    let mut ranked: Vec<(String, String, String)> = log
        .lines()
        .filter_map(|l| {
            let mut it = l.split(' ');
            let c = it.next()?.to_string();
            let p = it.next()?.to_string();
            Some((rank(&c), c, p))
        })
        .collect();
    ranked.sort();
    let mut out = Vec::new();
    for (_, commit, parent) in ranked {
        if out.len() >= limit {
            break;
        }
        match own_entry(repo, into, &commit, &parent) {
            Ok(Some(e)) => out.push(e),
            Ok(None) => {}
            // A missing parent (shallow clone) or an odd commit: skipped.
            Err(_) => {}
        }
    }
    (out, note)
}

fn rank(commit: &str) -> String {
    use sha1::{Digest, Sha1};
    let d = Sha1::digest(commit.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Builds one entry of the own history, or `None` when the commit is not
/// eligible.
fn own_entry(
    repo: &Path,
    into: &Path,
    commit: &str,
    parent: &str,
) -> Result<Option<Entry>, String> {
    let home = into;
    let run = |args: &[&str]| {
        let mut c = git(repo, home);
        c.args(args);
        output(c)
    };
    let numstat = run(&["diff", "--numstat", "-z", "-M", parent, commit])?;
    let text = String::from_utf8_lossy(&numstat);
    let mut changed = 0usize;
    for rec in text.split('\0') {
        let mut f = rec.split('\t');
        match (f.next(), f.next()) {
            (Some("-"), Some("-")) => return Ok(None), // binary
            (Some(a), Some(d)) => {
                changed += a.parse::<usize>().unwrap_or(0) + d.parse::<usize>().unwrap_or(0)
            }
            _ => {}
        }
    }
    if changed > 400 {
        return Ok(None);
    }
    let raw = run(&["diff", "--raw", "-z", "-M", "--no-abbrev", parent, commit])?;
    // `:old new oid oid status\0path\0[path\0]`
    let parts: Vec<&[u8]> = raw.split(|&b| b == 0).collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < parts.len() && parts[i].starts_with(b":") {
        let head = String::from_utf8_lossy(parts[i]).into_owned();
        let f: Vec<&str> = head[1..].split(' ').collect();
        if f.len() < 5 {
            return Ok(None);
        }
        let status = f[4].chars().next().unwrap_or('?');
        let two = matches!(status, 'R' | 'C');
        let (Some(p1), p2) = (parts.get(i + 1), parts.get(i + 2)) else {
            return Ok(None);
        };
        let (Ok(p1), p2) = (std::str::from_utf8(p1), p2.map(|p| std::str::from_utf8(p))) else {
            return Ok(None);
        };
        let p2 = match (two, p2) {
            (true, Some(Ok(p))) => Some(p.to_string()),
            (true, _) => return Ok(None),
            (false, _) => None,
        };
        if !matches!(status, 'M' | 'A' | 'D' | 'R') || f[0] == "160000" || f[1] == "160000" {
            return Ok(None);
        }
        files.push((
            status,
            f[0].to_string(),
            f[1].to_string(),
            f[2].to_string(),
            f[3].to_string(),
            p1.to_string(),
            p2,
        ));
        i += if two { 3 } else { 2 };
    }
    if files.is_empty() || files.len() > 15 {
        return Ok(None);
    }
    let dir = into.join("own").join(&commit[..12]);
    for (status, old_mode, new_mode, old_oid, new_oid, p1, p2) in &files {
        let old_path = (*status != 'A').then_some(p1.as_str());
        let new_path = match status {
            'D' => None,
            'R' => p2.as_deref(),
            _ => Some(p1.as_str()),
        };
        for (side, path, mode, oid) in [
            ("before", old_path, old_mode, old_oid),
            ("after", new_path, new_mode, new_oid),
        ] {
            let Some(path) = path else { continue };
            let blob = run(&["cat-file", "blob", oid])?;
            if blob.contains(&0) {
                return Ok(None);
            }
            let target = dir.join(side).join(path);
            std::fs::create_dir_all(target.parent().expect("a file has a parent"))
                .map_err(|e| e.to_string())?;
            if mode == "120000" {
                let link = String::from_utf8(blob).map_err(|_| "a link target not UTF-8")?;
                std::os::unix::fs::symlink(link, &target).map_err(|e| e.to_string())?;
            } else {
                std::fs::write(&target, &blob).map_err(|e| e.to_string())?;
                use std::os::unix::fs::PermissionsExt;
                let perm = if mode == "100755" { 0o755 } else { 0o644 };
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(perm))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    std::fs::create_dir_all(dir.join("before")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("after")).map_err(|e| e.to_string())?;
    let diff = run(&[
        "diff",
        "--binary",
        "-M",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        parent,
        commit,
    ])?;
    let Ok(sections) = parse_checked(&diff) else {
        return Ok(None);
    };
    std::fs::write(dir.join("diff.patch"), &diff).map_err(|e| e.to_string())?;
    let mut tags = Vec::new();
    for (status, old_mode, new_mode, ..) in &files {
        let tag = match status {
            'A' => "add",
            'D' => "delete",
            'R' => "rename",
            _ => "",
        };
        if !tag.is_empty() && !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_string());
        }
        if *status != 'A'
            && *status != 'D'
            && old_mode != new_mode
            && !tags.iter().any(|t| t == "mode")
        {
            tags.push("mode".into());
        }
    }
    Ok(Some(Entry {
        corpus: "own".into(),
        commit: commit.to_string(),
        dir,
        tags,
        sections,
    }))
}
