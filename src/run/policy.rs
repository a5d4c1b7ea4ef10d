//! Which commands may run without asking (apply.md §6).
//!
//! Owns the built-in allowlist — read-only commands, read-only git, and
//! `mv rm cp mkdir touch` whose every path stays inside the working tree
//! and out of `.git`/`.clada` — and the format of the approval stores
//! (exact command lines): the user's own, `clada-allowed-commands.json` in
//! the repository's git dir, and the team's, `.clada/allowed-commands.json`
//! committed in the repository (doc/run.md). The team's store is read from
//! the repository state before the apply, never from the reply's own
//! changes: the caller passes its content in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use std::path::Path;

use crate::plan::repo_path;

use super::reads;

/// Where the team's approvals live, relative to the repository root: a
/// file the user chose to commit and share.
pub const ALLOWED_COMMANDS: &str = ".clada/allowed-commands.json";

/// The user's own approvals, in the repository's (common) git dir: never
/// in the working tree, so approving leaves no untracked file behind.
pub const PRIVATE_APPROVALS: &str = "clada-allowed-commands.json";

/// Commands that only read.
const READ_ONLY: &[&str] = &[
    "cat", "head", "tail", "grep", "find", "ls", "pwd", "tree", "wc", "diff", "file", "stat",
    "realpath", "xxd", "echo", "true", "false",
];

/// `find` actions that write or run something.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Read-only git subcommands.
const GIT_READ_ONLY: &[&str] = &["status", "diff", "log", "show", "ls-files", "branch"];

/// Options that make those git subcommands write.
const GIT_WRITING_OPTIONS: &[&str] = &[
    "--output",
    "-o",
    "--ext-diff",
    "--textconv",
    "-d",
    "-D",
    "--delete",
    "-m",
    "-M",
    "--move",
    "-c",
    "-C",
    "--copy",
    "--set-upstream-to",
    "-u",
    "--unset-upstream",
    "--edit-description",
    "--force",
    "-f",
    "--track",
    "-t",
];

/// Options that make those git subcommands read a file they name.
const GIT_READING_OPTIONS: &[&str] = &["--pathspec-from-file", "--exclude-from"];

/// Commands whose path arguments must stay inside the tree.
const PATH_COMMANDS: &[&str] = &["mv", "rm", "cp", "mkdir", "touch"];

/// The verdict on one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Built in, or approved in the store.
    Allowed,
    /// Needs the user's approval.
    NeedsApproval,
    /// Never: the reason says why.
    Refused(String),
}

/// The approval store's format: `{"commands": [...], "added": {cmd: time}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    #[serde(default)]
    pub commands: Vec<String>,
    #[serde(default)]
    pub added: BTreeMap<String, String>,
}

impl Approvals {
    /// Reads the store's JSON; a malformed store is an error, never ignored.
    pub fn parse(bytes: &[u8]) -> Result<Approvals, String> {
        Approvals::parse_named(bytes, ALLOWED_COMMANDS)
    }

    /// [`Approvals::parse`] of the store that `name` names in messages.
    pub fn parse_named(bytes: &[u8], name: &str) -> Result<Approvals, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("{name} is malformed: {e}"))
    }

    /// Adds every approval of `other` not already here.
    pub fn extend(&mut self, other: Approvals) {
        for command in other.commands {
            if !self.allows(&command) {
                if let Some(when) = other.added.get(&command) {
                    self.added.insert(command.clone(), when.clone());
                }
                self.commands.push(command);
            }
        }
    }

    pub fn allows(&self, command_line: &str) -> bool {
        self.commands.iter().any(|c| c == command_line)
    }

    /// Approves `command_line`, noting when. `false` if it already was.
    pub fn add(&mut self, command_line: &str, when: &str) -> bool {
        if self.allows(command_line) {
            return false;
        }
        self.commands.push(command_line.to_string());
        self.added
            .insert(command_line.to_string(), when.to_string());
        true
    }

    /// Withdraws the approval of `command_line`. `false` if there was none.
    pub fn remove(&mut self, command_line: &str) -> bool {
        let before = self.commands.len();
        self.commands.retain(|c| c != command_line);
        self.added.remove(command_line);
        self.commands.len() != before
    }

    /// The store's text: pretty JSON, one command per line, for review.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("strings always serialise");
        text.push('\n');
        text
    }

    /// Reads the team's store in working tree `root`; an absent store is
    /// empty.
    pub fn load(root: &Path) -> Result<Approvals, String> {
        Approvals::load_from(&root.join(ALLOWED_COMMANDS), ALLOWED_COMMANDS)
    }

    /// Reads the store at `path` (`name` in messages); an absent store is
    /// empty.
    pub fn load_from(path: &Path, name: &str) -> Result<Approvals, String> {
        match std::fs::read(path) {
            Ok(bytes) => Approvals::parse_named(&bytes, name),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Approvals::default()),
            Err(e) => Err(format!("cannot read {name}: {e}")),
        }
    }

    /// Writes the team's store in working tree `root`.
    pub fn save(&self, root: &Path) -> Result<(), String> {
        let path = root.join(ALLOWED_COMMANDS);
        let dir = path.parent().expect("the store is inside .clada");
        // Never through a link: .clada must be a real directory here.
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{ALLOWED_COMMANDS} or its directory is a symbolic link; not writing through it"
            ));
        }
        self.save_to(&path, ALLOWED_COMMANDS)
    }

    /// Writes the store at `path` (`name` in messages): beside it, then
    /// renamed over it.
    pub fn save_to(&self, path: &Path, name: &str) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot write {name}: {e}");
        let dir = path.parent().expect("a store is a file in a directory");
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{name} or its directory is a symbolic link; not writing through it"
            ));
        }
        std::fs::create_dir_all(dir).map_err(fail)?;
        let file_name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, self.to_json())
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                fail(e)
            })
    }
}

/// Where a command runs: the working tree's root on disk and the
/// directory inside it (relative, `""` for the root), and the shared
/// directories (`clada.sharedDirs`), links in the tree to the user's own
/// directories, whose contents may be read as the tree's.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub root: &'a Path,
    pub dir: &'a str,
    pub shared: &'a [String],
}

/// Judges one command (its words and its line as written) about to run
/// at `place`. Paths are checked against the disk as it is now, so run
/// it right before the command.
pub fn judge(words: &[String], line: &str, approvals: &Approvals, place: Place<'_>) -> Verdict {
    let Some(program) = words.first() else {
        return Verdict::Refused("empty command".to_string());
    };
    if approvals.allows(line) {
        return Verdict::Allowed;
    }
    let args = &words[1..];
    let name = program.as_str();
    if READ_ONLY.contains(&name) {
        if writes_despite_its_name(name, args) {
            return Verdict::NeedsApproval;
        }
        let reads_inside = if name == "xxd" {
            reads::xxd_reads_inside(args, place)
        } else {
            reads::judge_reads(name, args, place) == Verdict::Allowed
        };
        return if reads_inside {
            Verdict::Allowed
        } else {
            Verdict::NeedsApproval
        };
    }
    if name == "git" {
        return match judge_git(args) {
            Verdict::Allowed if !reads::git_reads_inside(&args[1..], place) => {
                Verdict::NeedsApproval
            }
            verdict => verdict,
        };
    }
    if PATH_COMMANDS.contains(&name) {
        return judge_paths(name, args, place);
    }
    Verdict::NeedsApproval
}

/// The ways the read-only commands write a file or run something:
/// `find` actions, `tree -o FILE` (and its HTML mode), `xxd IN OUT` or
/// `xxd -r`, `file -C` (compiles a magic file). GNU getopt accepts
/// grouped short options (`-ao`) and shortened long ones (`--comp`), so
/// every form is looked at.
fn writes_despite_its_name(name: &str, args: &[String]) -> bool {
    let short_has = |letters: &str| {
        args.iter().any(|a| {
            a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().any(|c| letters.contains(c))
        })
    };
    let long_has = |prefix: &str| args.iter().any(|a| a.starts_with(prefix));
    match name {
        "find" => args.iter().any(|a| FIND_ACTIONS.contains(&a.as_str())),
        "tree" => short_has("oHR") || long_has("--o") || long_has("--fromfile"),
        "file" => short_has("C") || long_has("--comp"),
        "xxd" => xxd_writes(args),
        _ => false,
    }
}

/// xxd's options that take a value (the next word, or glued to a number).
pub(super) const XXD_VALUED: &[&str] = &[
    "-c",
    "-cols",
    "-g",
    "-groupsize",
    "-l",
    "-len",
    "-o",
    "-s",
    "-seek",
    "-n",
    "-name",
    "-R",
];

/// Whether `xxd ARGS` may write: options read as xxd reads them, and
/// anything but `xxd [known options] [INFILE]` counts. xxd takes a value
/// after `-c -g -l -o -s -n -R` or glued to the letter (`-l4`, `-s+16`),
/// a second file name is its output file (even `xxd - FILE`, whose input
/// `-` is standard input), and `-r` writes binary: so an unknown option, a
/// second file or `-r` in any spelling needs approval.
fn xxd_writes(args: &[String]) -> bool {
    const FLAGS: &[&str] = &[
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-d",
        "-E",
        "-EBCDIC",
        "-e",
        "-h",
        "-help",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-postscript",
        "-plain",
        "-u",
        "-v",
        "-version",
    ];
    // Glued values are numbers (xxd reads them with strtol: a sign, hex).
    const GLUED: &[&str] = &["-c", "-g", "-l", "-o", "-s"];
    let number = |v: &str| {
        let v = v.trim_start_matches(['+', '-']);
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X')
    };
    let mut files = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if files > 0 {
            // xxd reads options only before its input file: every word
            // after it is a file name (`xxd a.bin -p` writes `-p`).
            files += 1;
        } else if a == "-" || !a.starts_with('-') {
            files += 1;
        } else if XXD_VALUED.contains(&a) {
            i += 1;
        } else if !FLAGS.contains(&a)
            && !GLUED.iter().any(|g| a.strip_prefix(g).is_some_and(number))
        {
            return true;
        }
        i += 1;
    }
    files > 1
}

fn judge_git(args: &[String]) -> Verdict {
    // Options before the subcommand (`-C dir`, `-c k=v`) change what git
    // reads or runs: not built in.
    let Some(sub) = args.first() else {
        return Verdict::NeedsApproval;
    };
    if !GIT_READ_ONLY.contains(&sub.as_str()) {
        return Verdict::NeedsApproval;
    }
    let writes = args[1..].iter().any(|a| {
        let key = a.split('=').next().unwrap_or(a);
        GIT_WRITING_OPTIONS.contains(&key)
    });
    if writes {
        return Verdict::NeedsApproval;
    }
    // Options that read a file named in their value: `-O ORDERFILE`
    // (`git diff`, `log`, `show`), `-X`/`--exclude-from` (`ls-files`),
    // `--pathspec-from-file`. Short options may be grouped or glued.
    let reads_a_named_file = args[1..].iter().any(|a| {
        let key = a.split('=').next().unwrap_or(a);
        GIT_READING_OPTIONS.contains(&key)
            || (a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].contains(['O', 'X']))
    });
    if reads_a_named_file {
        return Verdict::NeedsApproval;
    }
    // `git branch NAME` creates a branch; only listing is read-only.
    if sub == "branch" && args[1..].iter().any(|a| !a.starts_with('-')) {
        return Verdict::NeedsApproval;
    }
    Verdict::Allowed
}

/// The options each path command may take without approval: short
/// letters (alone or grouped) and exact long names. Anything else —
/// `-t DIR`, `--backup`/`-S` suffixes, `--parents`, `-s`/`-l` links,
/// `-P`/`-d`/`-a` that copy links — needs approval.
fn allowed_options(name: &str) -> (&'static str, &'static [&'static str]) {
    match name {
        "cp" => (
            "rRfinvp",
            &[
                "--recursive",
                "--force",
                "--interactive",
                "--no-clobber",
                "--verbose",
            ],
        ),
        "mv" => (
            "finv",
            &["--force", "--interactive", "--no-clobber", "--verbose"],
        ),
        "rm" => ("rRfdiv", &["--recursive", "--force", "--dir", "--verbose"]),
        "mkdir" => ("pv", &["--parents", "--verbose"]),
        "touch" => ("c", &["--no-create"]),
        _ => ("", &[]),
    }
}

/// `mv rm cp mkdir touch`: only known options, and every other argument a
/// path that the kernel will resolve inside the working tree: relative,
/// without `..` or `\` (so the path as written is the path as walked),
/// not into `.git` or `.clada`, and not through a symbolic link on disk
/// (a link to a directory outside would carry the write there). Only `rm`
/// may name a link itself: it removes the link, not what it points to.
/// The root itself may only be the destination of `cp`/`mv`.
fn judge_paths(name: &str, args: &[String], place: Place<'_>) -> Verdict {
    let (short, long) = allowed_options(name);
    let mut options_done = false;
    let mut paths = Vec::new();
    for arg in args {
        if !options_done && arg == "--" {
            options_done = true;
        } else if !options_done && arg.starts_with("--") {
            if !long.contains(&arg.as_str()) {
                return Verdict::NeedsApproval;
            }
        } else if !options_done && arg.len() > 1 && arg.starts_with('-') {
            if !arg[1..].chars().all(|c| short.contains(c)) {
                return Verdict::NeedsApproval;
            }
        } else {
            paths.push(arg);
        }
    }
    let refuse = |arg: &str, why: &str| Verdict::Refused(format!("{name} {arg}: {why}"));
    for (i, arg) in paths.iter().enumerate() {
        if arg.contains('\\') {
            return refuse(arg, "a backslash in a path is not allowed");
        }
        if arg.starts_with('/') {
            return refuse(arg, "an absolute path leaves the repository");
        }
        if arg.split('/').any(|part| part == "..") {
            return refuse(
                arg,
                "`..` is not allowed: name the path from where the command runs (set dir= on the RUN)",
            );
        }
        let joined = if place.dir.is_empty() {
            arg.to_string()
        } else {
            format!("{}/{arg}", place.dir)
        };
        let path = match repo_path(&joined) {
            Ok(path) => path,
            Err(e) => return refuse(arg, &e.to_string()),
        };
        if path.as_str().is_empty() {
            let destination = matches!(name, "cp" | "mv") && i + 1 == paths.len() && i > 0;
            if destination {
                continue;
            }
            return refuse(arg, "that is the whole repository");
        }
        let may_be_link = name == "rm" && !arg.ends_with('/') && !arg.ends_with("/.");
        if let Some(link) = linked_component(place.root, path.as_str(), may_be_link) {
            return refuse(
                arg,
                &format!("{link} is a symbolic link, and a command may not write through one"),
            );
        }
    }
    // `cp`/`mv` into a directory write DIR/NAME for each source (and, with
    // `cp -r`, every path below it): check the paths actually written, not
    // only the words (DIR/NAME may be a committed link to outside).
    if matches!(name, "cp" | "mv")
        && let [sources @ .., dest] = paths.as_slice()
        && !sources.is_empty()
    {
        let in_dir = |p: &str| {
            if place.dir.is_empty() {
                p.to_string()
            } else {
                format!("{}/{p}", place.dir)
            }
        };
        let dest_path = repo_path(&in_dir(dest)).map(|p| p.as_str().to_string());
        let dest_is_dir = dest_path
            .as_ref()
            .is_ok_and(|d| place.root.join(d).is_dir());
        if let (Ok(dest_path), true) = (dest_path, dest_is_dir) {
            for source in sources {
                let Some(base) = source.trim_end_matches('/').rsplit('/').next() else {
                    continue;
                };
                let written = if dest_path.is_empty() {
                    base.to_string()
                } else {
                    format!("{dest_path}/{base}")
                };
                if let Some(why) = written_through_link(place.root, &in_dir(source), &written) {
                    return refuse(
                        source,
                        &format!("it would be written as {written}, and {why}"),
                    );
                }
            }
        }
    }
    Verdict::Allowed
}

/// Why writing the copy of `source` at `written` (and, when `source` is a
/// directory, `cp -r`, every path below it) is refused: a symbolic link on
/// the way, or a tree too large to check.
fn written_through_link(root: &Path, source: &str, written: &str) -> Option<String> {
    let through =
        |link: String| format!("{link} is a symbolic link; a command may not write through one");
    if let Some(link) = linked_component(root, written, false) {
        return Some(through(link));
    }
    let from = root.join(source);
    if !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    // Bounded: a copy of a huge tree is judged by its first entries, and
    // beyond them asks (an error is never a write).
    let mut pending = vec![String::new()];
    let mut seen = 0;
    while let Some(rel) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(from.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 10_000 {
                return Some(format!(
                    "{source} holds over 10,000 files, too many to check for symbolic links where they would be copied"
                ));
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let below = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if let Some(link) = linked_component(root, &format!("{written}/{below}"), false) {
                return Some(through(link));
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(below);
            }
        }
    }
    None
}

/// The first component of `path` (relative to `root`) that is a symbolic
/// link on disk; the last one is let through when `last_may_be_link`.
pub fn linked_component(root: &Path, path: &str, last_may_be_link: bool) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let mut on_disk = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        on_disk.push(part);
        match std::fs::symlink_metadata(&on_disk) {
            Ok(m) if m.file_type().is_symlink() => {
                if i + 1 == parts.len() && last_may_be_link {
                    return None;
                }
                return Some(parts[..=i].join("/"));
            }
            Ok(_) => {}
            // Nothing deeper exists yet.
            Err(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict in an empty working tree.
    fn verdict(line: &str) -> Verdict {
        let root = tempfile::tempdir().unwrap();
        verdict_in(root.path(), "", line)
    }

    fn verdict_in(root: &Path, dir: &str, line: &str) -> Verdict {
        let words = shell_words::split(line).unwrap();
        judge(
            &words,
            line,
            &Approvals::default(),
            Place {
                root,
                dir,
                shared: &[],
            },
        )
    }

    fn nowhere() -> Place<'static> {
        Place {
            root: Path::new("/nonexistent-clada-root"),
            dir: "",
            shared: &[],
        }
    }

    #[test]
    fn read_only_commands_and_git_are_built_in() {
        for line in [
            "ls -la",
            "cat src/main.rs",
            "grep -rn foo .",
            "git status",
            "git log --oneline -3",
            "git diff HEAD~1",
            "git branch -a",
            "find . -name '*.rs'",
        ] {
            assert_eq!(verdict(line), Verdict::Allowed, "{line}");
        }
    }

    #[test]
    fn anything_that_writes_needs_approval() {
        for line in [
            "cargo test",
            "npm install",
            "git commit -m x",
            "git branch new",
            "git branch -D main",
            "git diff --output=x",
            "git -C .. status",
            "find . -delete",
            "find . -exec rm {} ;",
            "python3 x.py",
            "mv -t dir a",
            "tree -o ../../out.txt",
            "tree -ao out.txt",
            "xxd a.bin ../../x",
            "xxd -r -p a.hex -d/x",
            "xxd a.bin -d/../x",
            "xxd - out.bin",
            "xxd - ../../HEAD",
            "xxd -l 4 a.bin out",
            "xxd -l4 a.bin out",
            "xxd -revert a.hex",
            "xxd -ps -r a.hex",
            "xxd -unknown a.bin",
            "xxd a.bin -p",
            "xxd - -i",
            "file -C -m magic",
            "file -bC -m magic",
            "file --comp -m magic",
            "cp -t../.. a",
            "cp --targ=../.. a",
            "cp -vt../.. a",
            "cp -bSt a.txt .gi",
            "cp --backup --suf=a a.txt .clad",
            "cp --parents ../x ..",
            "cp -s a link",
            "cp -l a link",
            "cp -a a b",
            "cp -P a b",
        ] {
            assert_eq!(verdict(line), Verdict::NeedsApproval, "{line}");
        }
    }

    #[test]
    fn xxd_reads_options_as_xxd_does() {
        for line in [
            "xxd a.bin",
            "xxd -l 4 a.bin",
            "xxd -l4 a.bin",
            "xxd -s +16 -c 8 -g 2 a.bin",
            "xxd -s-16 a.bin",
            "xxd -ps -len 0x20 a.bin",
            "xxd -",
        ] {
            assert_eq!(verdict(line), Verdict::Allowed, "{line}");
        }
    }

    #[test]
    fn cp_and_mv_into_a_directory_check_the_path_written() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("sub")).unwrap();
        std::fs::create_dir_all(r.join("tree/inner")).unwrap();
        std::fs::write(r.join("a.txt"), "a").unwrap();
        std::fs::write(r.join("tree/inner/f"), "f").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), r.join("sub/a.txt")).unwrap();
        std::fs::create_dir_all(r.join("dst/tree")).unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("dst/tree/inner")).unwrap();
        for line in ["cp a.txt sub", "mv a.txt sub/", "cp -r tree dst"] {
            assert!(
                matches!(verdict_in(r, "", line), Verdict::Refused(_)),
                "{line}"
            );
        }
        assert_eq!(verdict_in(r, "", "cp a.txt tree"), Verdict::Allowed);
        assert_eq!(verdict_in(r, "", "cp -r tree sub"), Verdict::Allowed);
    }

    #[test]
    fn path_commands_stay_inside_the_tree() {
        assert_eq!(verdict("mv a.txt b/c.txt"), Verdict::Allowed);
        assert_eq!(verdict("rm -rf build"), Verdict::Allowed);
        assert_eq!(verdict("cp -rv src dst"), Verdict::Allowed);
        assert_eq!(verdict("cp -- -odd-name copy"), Verdict::Allowed);
        assert_eq!(verdict("mkdir -p src/new"), Verdict::Allowed);
        for line in [
            "rm -rf ../x",
            "mv a /etc/passwd",
            "cp x .git/config",
            "touch .clada/allowed-commands.json",
            "rm -- ../../y",
            "mkdir .GIT/hooks",
        ] {
            assert!(matches!(verdict(line), Verdict::Refused(_)), "{line}");
        }
    }

    #[test]
    fn paths_are_relative_to_the_directory_the_command_runs_in() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(verdict_in(root.path(), "src", "rm x"), Verdict::Allowed);
        for line in ["rm ../x", "rm ../../x", "cp a /tmp/x", "cp a 'b\\c'"] {
            assert!(
                matches!(verdict_in(root.path(), "src", line), Verdict::Refused(_)),
                "{line}"
            );
        }
        assert!(matches!(
            verdict_in(root.path(), "sub", "touch ../.git/hooks/pre-commit"),
            Verdict::Refused(_)
        ));
        assert_eq!(verdict_in(root.path(), "", "cp a.txt ."), Verdict::Allowed);
        assert!(matches!(
            verdict_in(root.path(), "", "cp -r . sub"),
            Verdict::Refused(_)
        ));
        assert!(matches!(
            verdict_in(root.path(), "", "rm -rf ."),
            Verdict::Refused(_)
        ));
    }

    #[test]
    fn writes_through_a_symbolic_link_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        for line in [
            "mv a.txt out",
            "cp a.txt out/x",
            "touch out/x",
            "mkdir -p out/d",
            "rm -rf out/",
        ] {
            assert!(
                matches!(verdict_in(root.path(), "", line), Verdict::Refused(_)),
                "{line}"
            );
        }
        // Removing the link itself removes only the link.
        assert_eq!(verdict_in(root.path(), "", "rm out"), Verdict::Allowed);
    }

    #[test]
    fn approvals_are_exact_command_lines() {
        let store = Approvals::parse(
            br#"{"commands": ["cargo test"], "added": {"cargo test": "2026-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        assert_eq!(
            judge(
                &["cargo".into(), "test".into()],
                "cargo test",
                &store,
                nowhere()
            ),
            Verdict::Allowed
        );
        assert_eq!(
            judge(
                &["cargo".into(), "test".into(), "-q".into()],
                "cargo test -q",
                &store,
                nowhere()
            ),
            Verdict::NeedsApproval
        );
        assert!(Approvals::parse(b"{not json").is_err());
    }

    #[test]
    fn the_store_round_trips_through_a_file() {
        let root = tempfile::tempdir().unwrap();
        let mut store = Approvals::load(root.path()).unwrap();
        assert!(store.add("cargo test", "2026-01-01T00:00:00+00:00"));
        assert!(!store.add("cargo test", "later"));
        store.add("npm test", "2026-01-02T00:00:00+00:00");
        store.save(root.path()).unwrap();
        let mut back = Approvals::load(root.path()).unwrap();
        assert_eq!(back, store);
        assert!(back.remove("cargo test"));
        assert!(!back.remove("cargo test"));
        assert_eq!(back.commands, ["npm test"]);
        assert!(!back.added.contains_key("cargo test"));
    }
}
