//! What the built-in read-only commands read (apply.md §6).
//!
//! Owns the rule that `cat head tail grep find ls tree wc diff file stat
//! realpath xxd` and read-only git run without asking only when every
//! path they read resolves inside the working tree — not through a link
//! leading out, not into `.git` or `.clada` — so that a reply cannot send
//! `~/.ssh/id_rsa` or `/proc/self/environ` back to the model unasked.
//!
//! Each command's arguments are read as GNU getopt reads them (grouped
//! short options, a value glued or in the next word, `--name=value`):
//! only the options listed here are known, and an unknown one needs
//! approval, since it may name a file (`--files0-from`, `-f LIST`) or
//! follow links while recursing (`grep -R`, `find -L`, `tree -l`). There
//! is no shell, so `~` and globs are never expanded: a word starting with
//! `~` is taken as the model meaning the home directory, and needs
//! approval.

use std::path::{Component, PathBuf};

use super::policy::{Place, Verdict};
use crate::plan::repo_path;

/// How one command's arguments are read.
struct Syntax {
    /// Short options without a value.
    flags: &'static str,
    /// Short options whose value is not a path.
    valued: &'static str,
    /// Short options whose value is a path that is read.
    path_valued: &'static str,
    /// Long options without a value.
    long_flags: &'static [&'static str],
    /// Long options with a value that is not a path.
    long_valued: &'static [&'static str],
    /// Long options with a path value that is read.
    long_path_valued: &'static [&'static str],
    /// `-5` (a count, `head -5`) is an option.
    digits: bool,
}

const NONE: &[&str] = &[];

fn syntax(name: &str) -> Option<Syntax> {
    let s = match name {
        "cat" => Syntax {
            flags: "AbeEnstTuv",
            valued: "",
            path_valued: "",
            long_flags: &[
                "--show-all",
                "--number-nonblank",
                "--number",
                "--squeeze-blank",
                "--show-ends",
                "--show-tabs",
                "--show-nonprinting",
            ],
            long_valued: NONE,
            long_path_valued: NONE,
            digits: false,
        },
        "head" | "tail" => Syntax {
            flags: "qvz",
            valued: "nc",
            path_valued: "",
            long_flags: &["--quiet", "--silent", "--verbose", "--zero-terminated"],
            long_valued: &["--lines", "--bytes"],
            long_path_valued: NONE,
            digits: true,
        },
        // No -R (follows every link while recursing); -r follows only
        // the links named as arguments, which are checked.
        "grep" => Syntax {
            flags: "EFGPiyvwxcLloqsbHhnTZzraIUV",
            valued: "ABCmedD",
            path_valued: "f",
            long_flags: &[
                "--extended-regexp",
                "--fixed-strings",
                "--basic-regexp",
                "--perl-regexp",
                "--ignore-case",
                "--no-ignore-case",
                "--invert-match",
                "--word-regexp",
                "--line-regexp",
                "--count",
                "--files-with-matches",
                "--files-without-match",
                "--only-matching",
                "--quiet",
                "--silent",
                "--no-messages",
                "--byte-offset",
                "--with-filename",
                "--no-filename",
                "--line-number",
                "--initial-tab",
                "--null",
                "--null-data",
                "--recursive",
                "--text",
                "--line-buffered",
                "--color",
                "--colour",
            ],
            long_valued: &[
                "--regexp",
                "--after-context",
                "--before-context",
                "--context",
                "--max-count",
                "--include",
                "--exclude",
                "--exclude-dir",
                "--label",
                "--binary-files",
                "--color",
                "--colour",
            ],
            long_path_valued: &["--file", "--exclude-from"],
            digits: true,
        },
        // No -L/-H (follow links in a listing).
        "ls" => Syntax {
            flags: "1aAbBcCdDfFgGhiklmnNopqQrRsStuUvxXZ",
            valued: "ITw",
            path_valued: "",
            long_flags: &[
                "--all",
                "--almost-all",
                "--classify",
                "--human-readable",
                "--si",
                "--inode",
                "--numeric-uid-gid",
                "--recursive",
                "--reverse",
                "--size",
                "--directory",
                "--full-time",
                "--group-directories-first",
                "--no-group",
                "--literal",
                "--escape",
                "--quote-name",
                "--color",
            ],
            long_valued: &[
                "--color",
                "--sort",
                "--time",
                "--format",
                "--indicator-style",
                "--ignore",
                "--hide",
                "--width",
                "--time-style",
                "--block-size",
                "--quoting-style",
            ],
            long_path_valued: NONE,
            digits: false,
        },
        // No -l (follows links), -o/-H/-R (write), --fromfile.
        "tree" => Syntax {
            flags: "adfiqNQpugshDFvtcUrCAnSJX",
            valued: "LPI",
            path_valued: "",
            long_flags: &[
                "--noreport",
                "--dirsfirst",
                "--filesfirst",
                "--prune",
                "--gitignore",
                "--du",
                "--si",
                "--matchdirs",
                "--ignore-case",
                "--inodes",
                "--device",
            ],
            long_valued: &["--charset", "--filelimit", "--sort", "--timefmt"],
            long_path_valued: NONE,
            digits: false,
        },
        "wc" => Syntax {
            flags: "clmwL",
            valued: "",
            path_valued: "",
            long_flags: &[
                "--bytes",
                "--chars",
                "--lines",
                "--words",
                "--max-line-length",
            ],
            long_valued: NONE,
            long_path_valued: NONE,
            digits: false,
        },
        // No -l (runs pr). Links in the directories compared are
        // followed: see `links_out_below` in `judge_reads`.
        "diff" => Syntax {
            flags: "abBcdeEfinNpPqrstTuwyZ",
            valued: "CUWDLIFxS",
            path_valued: "X",
            long_flags: &[
                "--brief",
                "--report-identical-files",
                "--recursive",
                "--new-file",
                "--unidirectional-new-file",
                "--ignore-case",
                "--ignore-all-space",
                "--ignore-space-change",
                "--ignore-blank-lines",
                "--ignore-tab-expansion",
                "--ignore-trailing-space",
                "--text",
                "--strip-trailing-cr",
                "--minimal",
                "--side-by-side",
                "--normal",
                "--expand-tabs",
                "--initial-tab",
                "--show-c-function",
                "--suppress-common-lines",
                "--left-column",
                "--no-dereference",
                "--speed-large-files",
                "--suppress-blank-empty",
                "--color",
            ],
            long_valued: &[
                "--unified",
                "--context",
                "--label",
                "--ignore-matching-lines",
                "--show-function-line",
                "--exclude",
                "--width",
                "--tabsize",
                "--starting-file",
                "--horizon-lines",
                "--ifdef",
                "--color",
            ],
            long_path_valued: &["--exclude-from", "--from-file", "--to-file"],
            digits: false,
        },
        // No -C (writes), -f/--files-from (names files to read in a file).
        "file" => Syntax {
            flags: "bchikLNnprsvz0SE",
            valued: "eFP",
            path_valued: "m",
            long_flags: &[
                "--brief",
                "--mime",
                "--mime-type",
                "--mime-encoding",
                "--no-dereference",
                "--dereference",
                "--keep-going",
                "--raw",
                "--no-pad",
                "--special-files",
                "--uncompress",
                "--extension",
                "--print0",
                "--no-buffer",
            ],
            long_valued: &["--separator", "--exclude", "--parameter"],
            long_path_valued: &["--magic-file"],
            digits: false,
        },
        "stat" => Syntax {
            flags: "Lft",
            valued: "c",
            path_valued: "",
            long_flags: &["--dereference", "--file-system", "--terse"],
            long_valued: &["--format", "--printf", "--cached"],
            long_path_valued: NONE,
            digits: false,
        },
        "realpath" => Syntax {
            flags: "eLmPqsz",
            valued: "",
            path_valued: "",
            long_flags: &[
                "--canonicalize-existing",
                "--canonicalize-missing",
                "--logical",
                "--physical",
                "--quiet",
                "--strip",
                "--no-symlinks",
                "--zero",
            ],
            long_valued: NONE,
            long_path_valued: &["--relative-to", "--relative-base"],
            digits: false,
        },
        _ => return None,
    };
    Some(s)
}

/// The arguments of one command, sorted.
#[derive(Default)]
struct Parsed<'a> {
    /// Words that are not options, in order.
    operands: Vec<&'a str>,
    /// Values of options that name a file that is read.
    paths: Vec<&'a str>,
    /// The pattern came from an option (`grep -e`, `-f`).
    pattern_given: bool,
}

/// Reads `args` with `syntax`; `None` when an option is not known.
fn parse<'a>(syntax: &Syntax, args: &'a [String]) -> Option<Parsed<'a>> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            parsed.operands.push(arg);
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (format!("--{name}"), Some(value)),
                None => (arg.to_string(), None),
            };
            let name = name.as_str();
            if matches!(name, "--regexp" | "--file") {
                parsed.pattern_given = true;
            }
            let path = syntax.long_path_valued.contains(&name);
            if inline.is_none() && syntax.long_flags.contains(&name) {
                continue;
            }
            if !path && !syntax.long_valued.contains(&name) {
                return None;
            }
            let value = match inline {
                Some(value) => value,
                None => {
                    i += 1;
                    args.get(i - 1)?.as_str()
                }
            };
            if path {
                parsed.paths.push(value);
            }
            continue;
        }
        for (at, c) in arg.char_indices().skip(1) {
            if syntax.flags.contains(c) || (syntax.digits && c.is_ascii_digit()) {
                continue;
            }
            let path = syntax.path_valued.contains(c);
            if !path && !syntax.valued.contains(c) {
                return None;
            }
            // grep's `-e PATTERN` and `-f FILE` (no other command here
            // takes a value after those letters).
            if matches!(c, 'e' | 'f') {
                parsed.pattern_given = true;
            }
            let rest = &arg[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                i += 1;
                args.get(i - 1)?.as_str()
            } else {
                rest
            };
            if path {
                parsed.paths.push(value);
            }
            break;
        }
    }
    Some(parsed)
}

/// The verdict on read-only command `name` (not `git`, not `find` or
/// `xxd`, which have their own grammar) by the paths it reads.
pub fn judge_reads(name: &str, args: &[String], place: Place<'_>) -> Verdict {
    if matches!(name, "echo" | "true" | "false" | "pwd") {
        return Verdict::Allowed;
    }
    if name == "find" {
        return judge_find(args, place);
    }
    let Some(syntax) = syntax(name) else {
        return Verdict::NeedsApproval;
    };
    let Some(parsed) = parse(&syntax, args) else {
        return Verdict::NeedsApproval;
    };
    let mut read = parsed.paths;
    let mut operands = parsed.operands.into_iter();
    // grep's first operand is its pattern, unless an option gave it.
    if name == "grep" && !parsed.pattern_given {
        operands.next();
    }
    read.extend(operands);
    if !read.iter().all(|p| inside(p, place)) {
        return Verdict::NeedsApproval;
    }
    // diff follows the links it meets in the directories it compares
    // (`diff d e` compares their files; `-r` goes below them too).
    if name == "diff" && read.iter().any(|p| links_out_below(p, place)) {
        return Verdict::NeedsApproval;
    }
    Verdict::Allowed
}

/// `find`'s options before its roots (`-H`, `-P`; `-L` follows every
/// link), its roots, then an expression of known tests and actions. Tests
/// that name another file (`-newer`, `-samefile`, `-files0-from`),
/// `-follow` and every writing or running action need approval.
fn judge_find(args: &[String], place: Place<'_>) -> Verdict {
    const NO_VALUE: &[&str] = &[
        "-print",
        "-print0",
        "-prune",
        "-not",
        "-a",
        "-o",
        "-and",
        "-or",
        "-true",
        "-false",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-depth",
        "-mount",
        "-xdev",
        "-noleaf",
        "-ls",
        "-quit",
        "-empty",
        "-daystart",
        "(",
        ")",
        "!",
        ",",
    ];
    const VALUED: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-lname",
        "-ilname",
    ];
    let mut i = 0;
    while i < args.len() && matches!(args[i].as_str(), "-H" | "-P") {
        i += 1;
    }
    while i < args.len() {
        let arg = args[i].as_str();
        if arg.starts_with('-') || matches!(arg, "(" | ")" | "!" | ",") {
            break;
        }
        if !inside(arg, place) {
            return Verdict::NeedsApproval;
        }
        i += 1;
    }
    while i < args.len() {
        let arg = args[i].as_str();
        if VALUED.contains(&arg) {
            i += 2;
        } else if NO_VALUE.contains(&arg) {
            i += 1;
        } else {
            return Verdict::NeedsApproval;
        }
    }
    Verdict::Allowed
}

/// The file `xxd` reads, as [`super::policy`] reads its arguments: the
/// first word that is `-` or not an option, after the values of the
/// options that take one.
pub fn xxd_reads_inside(args: &[String], place: Place<'_>) -> bool {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-" || !a.starts_with('-') {
            return inside(a, place);
        }
        if super::policy::XXD_VALUED.contains(&a) {
            i += 1;
        }
        i += 1;
    }
    true
}

/// Whether the paths a read-only git command reads stay inside: with
/// `--no-index` (`git diff`) every operand is a file read; without it, a
/// word that names the file system rather than a revision or a pathspec —
/// absolute, `~`, or climbing out with `..` — is checked too, since `git
/// diff` compares two such paths as `--no-index` does when one is outside
/// the working tree.
pub fn git_reads_inside(args: &[String], place: Place<'_>) -> bool {
    let no_index = args.iter().any(|a| a == "--no-index");
    let mut options_done = false;
    let mut read = Vec::new();
    for arg in args {
        if !options_done && arg == "--" {
            options_done = true;
            continue;
        }
        if !options_done && arg.starts_with('-') && arg != "-" {
            continue;
        }
        let names_the_disk =
            arg.starts_with('/') || arg.starts_with('~') || arg == ".." || arg.starts_with("../");
        if no_index || names_the_disk {
            read.push(arg.as_str());
        }
    }
    if !read.iter().all(|p| inside(p, place)) {
        return false;
    }
    !(no_index && read.iter().any(|p| links_out_below(p, place)))
}

/// Where `path` (as a command given it, from the directory it runs in)
/// leads, every link followed; `None` when that cannot be known.
fn resolve(path: &str, place: Place<'_>) -> Option<PathBuf> {
    let cwd = place.root.join(place.dir);
    let given = cwd.join(path);
    if let Ok(real) = given.canonicalize() {
        return Some(real);
    }
    // Not there (the read will fail): the deepest directory that is,
    // resolved, and the rest as written, which may not climb.
    let mut base = given.clone();
    let mut rest = Vec::new();
    loop {
        let name = base.file_name()?.to_os_string();
        rest.push(name);
        if !base.pop() {
            return None;
        }
        if let Ok(real) = base.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                if part == ".." || part == "." {
                    return None;
                }
                out.push(part);
            }
            return Some(out);
        }
    }
}

/// Whether reading `path` reads only inside the working tree and out of
/// `.git` and `.clada`. `-` is standard input (empty for commands) and
/// `/dev/null` reads nothing; `~` needs approval (no shell expands it).
pub fn inside(path: &str, place: Place<'_>) -> bool {
    if path == "-" || path == "/dev/null" {
        return true;
    }
    if path.starts_with('~') || path.contains('\0') {
        return false;
    }
    let (Some(real), Ok(root)) = (resolve(path, place), place.root.canonicalize()) else {
        return false;
    };
    let Ok(rel) = real.strip_prefix(&root) else {
        // The directories a shared link leads to are the user's to share.
        return place.shared.iter().any(|shared| {
            std::fs::symlink_metadata(root.join(shared)).is_ok_and(|m| m.is_symlink())
                && root
                    .join(shared)
                    .canonicalize()
                    .is_ok_and(|target| real.starts_with(target))
        });
    };
    if rel.as_os_str().is_empty() {
        return true;
    }
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    rel.to_str().is_some_and(|rel| repo_path(rel).is_ok())
}

/// Whether a directory at `path` holds a symbolic link that leads out
/// (or into `.git`/`.clada`), for commands that follow the links they
/// meet while recursing. Bounded: past 10,000 entries it counts as
/// leading out, and the command asks.
fn links_out_below(path: &str, place: Place<'_>) -> bool {
    let Some(top) = resolve(path, place) else {
        return false;
    };
    if !top.is_dir() {
        return false;
    }
    let root = place.root;
    let mut pending = vec![top];
    let mut seen = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 10_000 {
                return true;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let at = entry.path();
            if kind.is_symlink() {
                let whole = Place {
                    root,
                    dir: "",
                    shared: place.shared,
                };
                if !at.to_str().is_some_and(|p| inside(p, whole)) {
                    return true;
                }
            } else if kind.is_dir() {
                pending.push(at);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn judge(root: &Path, line: &str) -> Verdict {
        let words = shell_words::split(line).unwrap();
        judge_reads(
            &words[0],
            &words[1..],
            Place {
                root,
                dir: "",
                shared: &[],
            },
        )
    }

    #[test]
    fn options_are_read_as_getopt_reads_them() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::write(r.join("a.txt"), "a").unwrap();
        for line in [
            "cat a.txt",
            "cat -n -- a.txt",
            "head -5 a.txt",
            "head -n 5 a.txt",
            "tail --lines=3 a.txt",
            "grep -rn foo .",
            "grep -e /etc/passwd a.txt",
            "grep -A2 -e x -- a.txt",
            "grep --include=*.rs -r x",
            "ls -la",
            "ls --color=auto .",
            "wc -l a.txt",
            "diff -u a.txt a.txt",
            "stat -c %s a.txt",
            "tree -L 2",
            "cat -",
            "cat missing.txt",
            "diff a.txt /dev/null",
        ] {
            assert_eq!(judge(r, line), Verdict::Allowed, "{line}");
        }
        for line in [
            "cat /etc/passwd",
            "cat ../x",
            "cat ~/.ssh/id_rsa",
            "cat /proc/self/environ",
            "cat /dev/stdin",
            "head -n 5 /etc/passwd",
            "grep -f /etc/passwd a.txt",
            "grep --file=/etc/passwd a.txt",
            "grep -fa.txt x /etc/hosts",
            "grep x /etc/passwd",
            "grep -e x /etc/passwd",
            "grep -R x .",
            "grep --dereference-recursive x .",
            "wc --files0-from=list",
            "diff --from-file=/etc/passwd a.txt",
            "diff -X /etc/passwd a.txt a.txt",
            "ls -L .",
            "tree -l",
            "file -f list",
            "cat .git/config",
            "cat .clada/config.toml",
            "realpath --relative-to=/etc a.txt",
            "cat -- /etc/passwd",
            "head -c",
        ] {
            assert_eq!(judge(r, line), Verdict::NeedsApproval, "{line}");
        }
    }

    #[test]
    fn links_are_followed_before_judging() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::fs::write(r.join("d/in.txt"), "i").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), r.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("outdir")).unwrap();
        std::os::unix::fs::symlink("d/in.txt", r.join("in")).unwrap();
        assert_eq!(judge(r, "cat out"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "cat outdir/secret"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "cat outdir/missing"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "cat in"), Verdict::Allowed);
        let absolute = r.join("d/in.txt");
        let absolute = format!("cat {}", absolute.display());
        assert_eq!(judge(r, &absolute), Verdict::Allowed);
        // diff -r follows links below the directories it compares.
        std::fs::create_dir_all(r.join("e")).unwrap();
        assert_eq!(judge(r, "diff -r d e"), Verdict::Allowed);
        std::os::unix::fs::symlink(outside.path().join("secret"), r.join("d/l")).unwrap();
        assert_eq!(judge(r, "diff -r d e"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "diff d e"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "diff e/x d"), Verdict::NeedsApproval);
        assert_eq!(judge(r, "diff d/in.txt e"), Verdict::Allowed);
    }

    #[test]
    fn a_shared_directory_is_read_through_its_link_and_only_it() {
        let root = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(user.path().join("node_modules/dep")).unwrap();
        std::fs::write(user.path().join("node_modules/dep/x.js"), "x").unwrap();
        std::fs::write(user.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(user.path().join("node_modules"), r.join("node_modules"))
            .unwrap();
        std::os::unix::fs::symlink(user.path(), r.join("up")).unwrap();
        let shared = ["node_modules".to_string()];
        let place = Place {
            root: r,
            dir: "",
            shared: &shared,
        };
        let verdict = |line: &str| {
            let words = shell_words::split(line).unwrap();
            judge_reads(&words[0], &words[1..], place)
        };
        assert_eq!(verdict("cat node_modules/dep/x.js"), Verdict::Allowed);
        assert_eq!(verdict("cat up/node_modules/dep/x.js"), Verdict::Allowed);
        assert_eq!(verdict("cat up/secret"), Verdict::NeedsApproval);
        assert_eq!(
            verdict("cat node_modules/../secret"),
            Verdict::NeedsApproval
        );
    }

    #[test]
    fn find_is_judged_by_its_roots_and_expression() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for line in [
            "find . -name '*.rs'",
            "find -H src -type f -print",
            "find",
            "find . ( -name a -o -name b ) -maxdepth 2",
        ] {
            assert_eq!(judge(r, line), Verdict::Allowed, "{line}");
        }
        for line in [
            "find /",
            "find ~",
            "find -L .",
            "find . -follow",
            "find . -newer /etc/passwd",
            "find . -files0-from x",
            "find . -samefile /etc/passwd",
        ] {
            assert_eq!(judge(r, line), Verdict::NeedsApproval, "{line}");
        }
    }

    #[test]
    fn git_reads_files_only_inside() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::write(r.join("a.txt"), "a").unwrap();
        let place = Place {
            root: r,
            dir: "",
            shared: &[],
        };
        let args = |line: &str| shell_words::split(line).unwrap();
        for line in [
            "diff HEAD~1..HEAD -- a.txt",
            "diff --no-index a.txt /dev/null",
            "log main..HEAD",
            "show HEAD:a.txt",
        ] {
            assert!(git_reads_inside(&args(line), place), "{line}");
        }
        for line in [
            "diff --no-index /etc/passwd /dev/null",
            "diff /etc/passwd /dev/null",
            "diff ../x a.txt",
            "diff -- ~/.aws/credentials a.txt",
        ] {
            assert!(!git_reads_inside(&args(line), place), "{line}");
        }
    }
}
