//! READ: what the model asked to see — file contents, a directory
//! listing, grep or glob results — from the state at that point of the
//! reply (syntaxes.md §1). Never changes anything.
//!
//! Owns the shape of the output (`=== path ===` before each of several
//! files, `path:line:text` for grep, one path a line for glob, `name/` for
//! a directory in a listing) and its cap: output past `max_output` bytes
//! is cut at a line and says so. Matching uses the `regex` and `globset`
//! crates, as ripgrep does.

use crate::plan::{Read, RepoPath};

use super::exec::{Failure, Outcome, plural};
use super::files::{Entry, Files};
use super::text::is_binary;

/// What a read produced: the outcome for the report and the text shown.
pub struct ReadResult {
    pub outcome: Outcome,
    pub output: String,
}

/// Output collected up to a cap.
struct Capped {
    text: String,
    max: usize,
    truncated: bool,
}

impl Capped {
    fn push(&mut self, line: &str) {
        if self.truncated {
            return;
        }
        if self.text.len() + line.len() + 1 > self.max {
            self.truncated = true;
            return;
        }
        self.text.push_str(line);
        self.text.push('\n');
    }
}

/// What a READ may show: `bytes`, the lesser of `--max-output`
/// (`per_task`) and what is left of the reply's `clada.maxReplyOutput`
/// (`reply`, the whole budget, for messages).
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    pub bytes: usize,
    pub per_task: usize,
    pub reply: usize,
}

/// The failure of a READ the reply's output budget left nothing for.
fn spent(cap: Cap) -> ReadResult {
    ReadResult {
        outcome: Err(Failure {
            error_type: Some("output_limit"),
            message: format!(
                "not shown: the reply's READ and RUN output reached its limit ({} bytes for the whole reply)",
                cap.reply
            ),
            details: vec![
                "ask for it in another reply, or read less at a time (a part of a file, a grep)"
                    .to_string(),
            ],
        }),
        output: String::new(),
    }
}

pub fn read<F: Files>(files: &F, read: &Read, cap: Cap) -> ReadResult {
    let max_output = cap.bytes;
    let by_reply = max_output < cap.per_task;
    // The reply has shown all it may: nothing is read, and the model is
    // told to ask again rather than shown an empty success.
    if max_output == 0 {
        return spent(cap);
    }
    let mut out = Capped {
        text: String::new(),
        max: max_output,
        truncated: false,
    };
    let outcome = match read {
        Read::Files(paths) => read_files(files, paths, &mut out),
        Read::List(dir) => list(files, dir, &mut out),
        Read::Grep {
            pattern,
            path,
            include,
        } => grep(files, pattern, path, include.as_deref(), &mut out),
        Read::Glob { pattern, base } => glob(files, pattern, base, &mut out),
    };
    // Cut by the reply's budget before a single line: nothing shown.
    if by_reply && out.truncated && out.text.is_empty() && outcome.is_ok() {
        return spent(cap);
    }
    let outcome = outcome.map(|(message, mut details)| {
        if out.truncated && by_reply {
            details.push(format!(
                "output cut at the reply's limit ({} bytes for all its READ and RUN output); read less at a time",
                cap.reply
            ));
        } else if out.truncated {
            details.push(format!(
                "output cut at --max-output ({max_output} bytes); read less at a time"
            ));
        }
        (message, details)
    });
    ReadResult {
        outcome,
        output: out.text,
    }
}

fn read_files<F: Files>(files: &F, paths: &[RepoPath], out: &mut Capped) -> Outcome {
    let mut missing = Vec::new();
    let mut lines = 0;
    for path in paths {
        let data = match files.read(path) {
            Ok(Some(data)) => data,
            Ok(None) => {
                missing.push(path.to_string());
                continue;
            }
            Err(e) if paths.len() == 1 => return Err(e.into()),
            Err(e) => {
                out.push(&format!("=== {path} ==="));
                out.push(&format!("({e})"));
                continue;
            }
        };
        if paths.len() > 1 {
            out.push(&format!("=== {path} ==="));
        }
        if is_binary(&data.bytes) {
            out.push(&format!("(binary file, {} bytes)", data.bytes.len()));
            continue;
        }
        // Only the part that can be shown is decoded and copied: the
        // lines of a large file past the cap are counted, not kept.
        lines += line_count(&data.bytes);
        let room = out.max.saturating_sub(out.text.len());
        let shown = if data.bytes.len() > room {
            // Up to the last whole line that fits; what follows is cut.
            let end = data.bytes[..room]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            &data.bytes[..end]
        } else {
            &data.bytes[..]
        };
        let text = String::from_utf8_lossy(shown);
        for line in text.lines() {
            out.push(line);
        }
        if shown.len() < data.bytes.len() {
            out.truncated = true;
        }
    }
    if !missing.is_empty() {
        return Err(Failure {
            error_type: Some("file_not_found"),
            message: format!(
                "{} {} not exist",
                missing.join(", "),
                if missing.len() == 1 { "does" } else { "do" }
            ),
            details: vec![
                "check the paths (relative to the repository root); a listing of the directory shows what is there"
                    .to_string(),
            ],
        });
    }
    Ok((
        format!(
            "read {} ({})",
            plural(paths.len(), "file"),
            plural(lines, "line")
        ),
        Vec::new(),
    ))
}

/// The number of lines `str::lines` finds in `bytes`.
fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Checks that `dir` is a directory.
fn directory<F: Files>(files: &F, dir: &RepoPath) -> Result<(), Failure> {
    match files.entry(dir)? {
        Some(Entry::Dir) => Ok(()),
        None => Err(Failure {
            error_type: Some("file_not_found"),
            message: format!("the directory {dir} does not exist"),
            details: vec!["list the directory above it to see what is there".to_string()],
        }),
        Some(_) => Err(Failure {
            error_type: Some("not_a_directory"),
            message: format!("{dir} is not a directory"),
            details: vec!["read it as a file instead".to_string()],
        }),
    }
}

/// The part of `path` below `dir`; its file name when it is not below
/// (`dir` names the file itself).
fn below<'p>(dir: &RepoPath, path: &'p str) -> &'p str {
    if dir.as_str().is_empty() {
        return path;
    }
    path.strip_prefix(dir.as_str())
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path))
}

fn list<F: Files>(files: &F, dir: &RepoPath, out: &mut Capped) -> Outcome {
    directory(files, dir)?;
    let mut shown = 0;
    for (path, entry) in files.list(dir)? {
        let name = below(dir, &path);
        if name.contains('/') {
            continue;
        }
        shown += 1;
        match entry {
            Entry::Dir => out.push(&format!("{name}/")),
            Entry::Link => out.push(&format!("{name}@")),
            _ => out.push(name),
        }
    }
    let noun = if shown == 1 { "entry" } else { "entries" };
    Ok((format!("listed {shown} {noun}"), Vec::new()))
}

fn glob_matcher(pattern: &str) -> Result<globset::GlobMatcher, Failure> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| Failure {
            error_type: Some("invalid_pattern"),
            message: format!("the glob {pattern:?} is not valid: {e}"),
            details: vec!["use *, ?, [abc], {a,b} and ** (any number of directories)".to_string()],
        })
}

fn grep<F: Files>(
    files: &F,
    pattern: &str,
    path: &RepoPath,
    include: Option<&str>,
    out: &mut Capped,
) -> Outcome {
    let regex = regex::Regex::new(pattern).map_err(|e| Failure {
        error_type: Some("invalid_pattern"),
        message: format!("the pattern {pattern:?} is not a valid regular expression"),
        details: e.to_string().lines().map(str::to_owned).collect(),
    })?;
    let include = include.map(glob_matcher).transpose()?;
    // A file may be named: grep it alone.
    let candidates: Vec<String> = match files.entry(path)? {
        Some(Entry::File) => vec![path.to_string()],
        _ => {
            directory(files, path)?;
            files
                .list(path)?
                .into_iter()
                .filter(|(_, e)| *e == Entry::File)
                .map(|(p, _)| p)
                .collect()
        }
    };
    let (mut hits, mut in_files) = (0, 0);
    for candidate in &candidates {
        if let Some(include) = &include {
            let name = candidate.rsplit('/').next().unwrap_or(candidate);
            if !include.is_match(name) && !include.is_match(below(path, candidate)) {
                continue;
            }
        }
        let Ok(Some(data)) = files.read(&RepoPath::from_checked(candidate)) else {
            continue;
        };
        if is_binary(&data.bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&data.bytes);
        let mut found = false;
        for (n, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                out.push(&format!("{candidate}:{}:{line}", n + 1));
                hits += 1;
                found = true;
            }
        }
        in_files += usize::from(found);
    }
    Ok((
        format!(
            "found {} in {}",
            plural(hits, "matching line"),
            plural(in_files, "file")
        ),
        Vec::new(),
    ))
}

fn glob<F: Files>(files: &F, pattern: &str, base: &RepoPath, out: &mut Capped) -> Outcome {
    let matcher = glob_matcher(pattern)?;
    directory(files, base)?;
    let mut found = 0;
    for (path, entry) in files.list(base)? {
        if entry != Entry::Dir && matcher.is_match(below(base, &path)) {
            out.push(&path);
            found += 1;
        }
    }
    Ok((format!("found {}", plural(found, "file")), Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::dir::DirFiles;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        std::fs::write(root.join("src/deep/c.rs"), "fn c() {}\n").unwrap();
        std::fs::write(root.join("src/notes.md"), "fn in prose\n").unwrap();
        std::fs::write(root.join("bin.dat"), b"fn\0binary").unwrap();
        dir
    }

    fn path(p: &str) -> RepoPath {
        RepoPath::from_checked(p)
    }

    /// A cap of `bytes` for this operation and for the reply alike.
    fn cap(bytes: usize) -> Cap {
        Cap {
            bytes,
            per_task: bytes,
            reply: bytes,
        }
    }

    fn run(root: &std::path::Path, read_: Read, max: usize) -> (Result<String, String>, String) {
        let files = DirFiles::new(root);
        let done = read(&files, &read_, cap(max));
        let outcome = done
            .outcome
            .map(|(m, _)| m)
            .map_err(|f| f.error_type.unwrap_or("").to_string());
        (outcome, done.output)
    }

    #[test]
    fn grep_glob_and_list_see_what_is_there() {
        let dir = tree();
        let grep = Read::Grep {
            pattern: r"^fn \w\(".into(),
            path: path(""),
            include: Some("*.rs".into()),
        };
        let (done, output) = run(dir.path(), grep, 1000);
        assert_eq!(done.as_deref(), Ok("found 3 matching lines in 2 files"));
        assert_eq!(
            output,
            "src/a.rs:1:fn a() {}\nsrc/a.rs:2:fn b() {}\nsrc/deep/c.rs:1:fn c() {}\n"
        );
        let glob = Read::Glob {
            pattern: "**/*.rs".into(),
            base: path("src"),
        };
        let (_, output) = run(dir.path(), glob, 1000);
        assert_eq!(output, "src/a.rs\nsrc/deep/c.rs\n");
        // A file named as the place to grep, with an include it does not
        // match: nothing found, no panic.
        let one = Read::Grep {
            pattern: "fn".into(),
            path: path("src/a.rs"),
            include: Some("*.py".into()),
        };
        let (done, output) = run(dir.path(), one, 1000);
        assert_eq!(done.as_deref(), Ok("found 0 matching lines in 0 files"));
        assert_eq!(output, "");
        let (done, output) = run(dir.path(), Read::List(path("src")), 1000);
        assert_eq!(done.as_deref(), Ok("listed 3 entries"));
        assert_eq!(output, "a.rs\ndeep/\nnotes.md\n");
        let (done, _) = run(dir.path(), Read::List(path("src/a.rs")), 1000);
        assert_eq!(done, Err("not_a_directory".into()));
    }

    #[test]
    fn output_stops_at_max_output_and_says_so() {
        let dir = tree();
        let files = DirFiles::new(dir.path());
        let done = read(
            &files,
            &Read::Files(vec![path("src/a.rs"), path("bin.dat")]),
            cap(25),
        );
        assert_eq!(done.output, "=== src/a.rs ===\n");
        let (_, details) = done.outcome.ok().unwrap();
        assert!(
            details[0].contains("--max-output (25 bytes)"),
            "{details:?}"
        );
        let done = read(
            &files,
            &Read::Files(vec![path("bin.dat"), path("nope")]),
            cap(1000),
        );
        assert_eq!(done.output, "=== bin.dat ===\n(binary file, 9 bytes)\n");
        assert_eq!(
            done.outcome.err().unwrap().error_type,
            Some("file_not_found")
        );
    }

    #[test]
    fn the_replys_budget_cuts_a_read_or_leaves_it_unread() {
        let dir = tree();
        let files = DirFiles::new(dir.path());
        let a = Read::Files(vec![path("src/a.rs")]);
        let reply = Cap {
            bytes: 12,
            per_task: 1000,
            reply: 5000,
        };
        let done = read(&files, &a, reply);
        assert_eq!(done.output, "fn a() {}\n");
        let (message, details) = done.outcome.ok().unwrap();
        assert_eq!(message, "read 1 file (2 lines)");
        assert!(
            details[0].contains("reply's limit (5000 bytes"),
            "{details:?}"
        );
        let spent = Cap { bytes: 0, ..reply };
        let done = read(&files, &a, spent);
        assert_eq!(done.output, "");
        assert_eq!(done.outcome.err().unwrap().error_type, Some("output_limit"));
    }
}
