//! The unified diff front end: `git diff` and `diff -u` output as drafts
//! of the common plan (syntaxes.md §4; decisions in doc/syntax-diff.md).
//!
//! Owns reading file sections (`diff --git` headers with their extended
//! lines, `---`/`+++` lines) and hunks (`@@ -l,n +l,n @@`). One file is
//! one task: its hunks an EDIT (`Locate::Unique`: context must match, the
//! line numbers choose among several matches), `/dev/null` a CREATE or a
//! DELETE, git's `rename from`/`rename to` a MOVE (with the EDIT before
//! it, as one atomic block). Hunk sizes are recounted from the lines: the
//! counts in the header are never trusted, as models get them wrong; a
//! header without numbers (`@@ @@`, aider's udiff) is a hunk found by its
//! lines alone.
//!
//! What a diff says beyond lines is kept, never dropped: a new file is a
//! CREATE of exactly its lines (refused over other content), mode lines
//! are a MODE after the section's other operations (executable bit,
//! `120000` symbolic links), and a hunk whose `@@` line ends with LF but
//! whose lines end with CRLF gives its line ends (each line keeps its
//! `\r`: apply/exact.rs matches and writes them byte for byte).

use std::iter::Peekable;

use crate::csl::{DiagnosticKind, OpKind, TaskId};
use crate::plan::{Action, Draft, FileMode, Hunk, Locate};

use super::lines::{Line, Lines};
use super::{LineCursor, Parsed, Syntax};

/// One file of the diff, as read so far.
#[derive(Debug, Default)]
struct Section {
    line: u32,
    /// From `diff --git a/X b/Y` (a guess when names have spaces).
    git_old: Option<String>,
    git_new: Option<String>,
    /// Whether a `diff --git` line opened the section (its names may not
    /// have been told apart: quoted names with spaces).
    git_header: bool,
    /// From the `---`/`+++` lines; `None` inside is `/dev/null`.
    old: Option<Option<String>>,
    new: Option<Option<String>>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted: bool,
    /// From `old mode`/`deleted file mode` and `new mode`/`new file
    /// mode`, as written (`100755`).
    old_mode: Option<String>,
    new_mode: Option<String>,
    binary: bool,
    hunks: Vec<Hunk>,
    /// Whether the file ends without a line end after the edit
    /// (`\ No newline at end of file` after the last new line), or
    /// gains one (the marker was on the old side only).
    no_newline_old: bool,
    no_newline_new: bool,
    problems: Vec<(u32, String)>,
}

struct Reader<'t> {
    /// The reply's lines, for diagnostics: asked in order, read once.
    lines: LineCursor<'t>,
    diagnostics: crate::csl::Diagnostics,
    drafts: Vec<Draft<'t>>,
}

/// Reads a unified diff reply.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut r = Reader {
        lines: LineCursor::new(text),
        diagnostics: crate::csl::Diagnostics::new(),
        drafts: Vec::new(),
    };
    let mut lines = Lines::new(text).peekable();
    let mut section: Option<Section> = None;
    while let Some(line) = lines.next() {
        let t = line.text;
        if let Some(names) = t.strip_prefix("diff --git ") {
            r.finish(section.take());
            let (old, new) = git_names(names);
            section = Some(Section {
                line: line.no,
                git_old: old,
                git_header: true,
                git_new: new,
                ..Section::default()
            });
            continue;
        }
        if t.starts_with("--- ") && lines.peek().is_some_and(|n| n.text.starts_with("+++ ")) {
            // A new file's header, unless a `diff --git` header opened
            // this section and it has no `---` yet.
            let opened_by_git = section
                .as_ref()
                .is_some_and(|s| s.git_header && s.old.is_none() && s.hunks.is_empty());
            if !opened_by_git {
                r.finish(section.take());
                section = Some(Section {
                    line: line.no,
                    ..Section::default()
                });
            }
            let plus = lines.next();
            if let Some(s) = section.as_mut() {
                s.old = Some(header_path(&t[4..], "a/"));
                s.new = plus.map(|p| header_path(p.text.get(4..).unwrap_or(""), "b/"));
            }
            continue;
        }
        let Some(s) = section.as_mut() else {
            continue;
        };
        if t.starts_with("@@") {
            read_hunk(text, &mut lines, line, s);
            continue;
        }
        if s.hunks.is_empty() && s.old.is_none() && header_line(t, s) {
            continue;
        }
        // Anything else ends the section: prose after the diff.
        r.finish(section.take());
    }
    r.finish(section.take());
    deletes_first(&mut r.drafts);
    Parsed::read(Syntax::Diff, text, r.drafts, r.diagnostics)
}

/// Moves a section that deletes a path before an earlier one that
/// creates a file where the deleted path's directory, or the deleted file,
/// stood: git sorts `x` before `x/x`, so a directory replaced by a file of
/// its name comes as "create x" then "delete x/x", and `git apply` deletes
/// first. Task numbers stay those of the document.
fn deletes_first(drafts: &mut Vec<Draft<'_>>) {
    fn created<'d>(draft: &'d Draft<'_>) -> Vec<&'d str> {
        match &draft.action {
            Some(Action::Create { path, .. }) => vec![path.as_str()],
            Some(Action::Move { to, .. }) => vec![to.as_str()],
            Some(Action::Block(ops)) => ops.iter().flat_map(created).collect(),
            _ => Vec::new(),
        }
    }
    let nested = |a: &str, b: &str| {
        let under = |inner: &str, outer: &str| {
            inner.len() > outer.len()
                && inner.starts_with(outer)
                && inner.as_bytes()[outer.len()] == b'/'
        };
        under(a, b) || under(b, a)
    };
    for i in 1..drafts.len() {
        let Some(Action::Delete { path: gone, .. }) = &drafts[i].action else {
            continue;
        };
        let at = drafts[..i]
            .iter()
            .position(|d| created(d).iter().any(|made| nested(made, gone)));
        if let Some(at) = at {
            let draft = drafts.remove(i);
            drafts.insert(at, draft);
        }
    }
}

/// git's extended header lines between `diff --git` and `---`.
fn header_line(t: &str, s: &mut Section) -> bool {
    if let Some(from) = t.strip_prefix("rename from ") {
        s.rename_from = Some(unquote(from));
    } else if let Some(to) = t.strip_prefix("rename to ") {
        s.rename_to = Some(unquote(to));
    } else if let Some(mode) = t.strip_prefix("new file mode ") {
        s.new_file = true;
        s.new_mode = Some(mode.trim().to_string());
    } else if let Some(mode) = t.strip_prefix("deleted file mode ") {
        s.deleted = true;
        s.old_mode = Some(mode.trim().to_string());
    } else if let Some(mode) = t.strip_prefix("old mode ") {
        s.old_mode = Some(mode.trim().to_string());
    } else if let Some(mode) = t.strip_prefix("new mode ") {
        s.new_mode = Some(mode.trim().to_string());
    } else if t.starts_with("Binary files ") || t == "GIT binary patch" {
        s.binary = true;
    } else {
        return [
            "index ",
            "similarity index ",
            "dissimilarity index ",
            "copy from ",
            "copy to ",
        ]
        .iter()
        .any(|p| t.starts_with(p));
    }
    true
}

/// The two names of `diff --git a/X b/Y`, when they can be told apart
/// (quoted, or split where ` b/` starts the second).
fn git_names(rest: &str) -> (Option<String>, Option<String>) {
    if let Some(at) = rest.find(" b/")
        && let Some(old) = rest[..at].strip_prefix("a/")
    {
        return (Some(old.to_string()), Some(rest[at + 3..].to_string()));
    }
    (None, None)
}

/// A `---`/`+++` line's path: `None` for `/dev/null`; a timestamp after a
/// tab (as `diff -u` writes) dropped; git's `a/`/`b/` prefix removed.
fn header_path(raw: &str, prefix: &str) -> Option<String> {
    let name = raw.split('\t').next().unwrap_or("").trim_end();
    let name = unquote(name);
    if name == "/dev/null" {
        return None;
    }
    Some(name.strip_prefix(prefix).unwrap_or(&name).to_string())
}

/// A name as git quotes one with special characters (`"a\tb"`), or as is.
fn unquote(name: &str) -> String {
    let Some(inner) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) else {
        return name.to_string();
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'"') => out.push(b'"'),
            Some(b'\\') => out.push(b'\\'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = bytes.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        bytes.next();
                    }
                }
                out.push(v as u8);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The old start line of `@@ -l[,n] +l[,n] @@`, and whether the header
/// is well-formed.
fn hunk_start(header: &str) -> Option<u32> {
    hunk_header(header).map(|(start, _)| start)
}

/// `@@ -l[,n] +l[,m] @@`: the old start line, and the two counts (a
/// missing count is 1).
fn hunk_header(header: &str) -> Option<(u32, (usize, usize))> {
    let rest = header.strip_prefix("@@ -")?;
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == ','))?;
    let old = &rest[..end];
    let rest = rest[end..].strip_prefix(" +")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(rest.len());
    if end == 0 || !rest[end..].starts_with(" @@") {
        return None;
    }
    let count = |range: &str| -> Option<usize> {
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => Some(1),
        }
    };
    let start = old.split(',').next()?.parse().ok()?;
    Some((start, (count(old)?, count(&rest[..end])?)))
}

/// Whether a hunk header carries no line numbers at all (`@@ @@`, `@@ ...
/// @@`, as aider's udiff writes them): not an attempt at `@@ -l +l @@`.
fn numberless(header: &str) -> bool {
    let rest = header.trim_start_matches('@').trim_start();
    !rest.starts_with(['-', '+'])
}

/// The text of `line` as the reply has it, with a `\r` before its `\n`
/// (the line end itself left out).
fn with_cr<'t>(text: &'t str, line: &Line<'t>) -> &'t str {
    let raw = &text[line.start..line.next];
    raw.strip_suffix('\n').unwrap_or(raw)
}

/// Reads a hunk's lines after its `@@` header (`at`): context, removed
/// and added lines, up to the first line that is none of them. Blank
/// lines count as blank context lines (models drop the space) unless
/// nothing of the hunk follows them.
fn read_hunk<'t>(text: &'t str, lines: &mut Peekable<Lines<'t>>, at: Line<'t>, s: &mut Section) {
    let start = hunk_start(at.text);
    // A header that ends with LF, above lines that end with CRLF: the
    // diff gives each line's end (git prints a CRLF file's lines so), and
    // the lines keep their `\r`. A reply whose every line ends with CRLF
    // (a header too) was saved so: its `\r` are not the file's.
    let gives_ends = !with_cr(text, &at).ends_with('\r');
    if start.is_none() && !numberless(at.text) {
        s.problems.push((
            at.no,
            format!(
                "the hunk header `{}` is not `@@ -LINE,COUNT +LINE,COUNT @@`",
                at.text
            ),
        ));
    }
    let mut hunk = Hunk {
        line: start,
        ..Hunk::new()
    };
    // Blank lines seen but not yet known to be context.
    let mut blanks = 0;
    let mut last_side = ' ';
    // The header's counts end the hunk where they add up and the next line
    // is blank or `-- ` (git format-patch's signature): a line after that
    // is not the hunk's. Where they do not add up, the lines decide.
    let counts = hunk_header(at.text).map(|(_, counts)| counts);
    let (mut old_seen, mut new_seen) = (0, 0);
    while let Some(&next) = lines.peek() {
        let t = next.text;
        if counts == Some((old_seen, new_seen)) && blanks == 0 && (t.is_empty() || t == "-- ") {
            break;
        }
        let (side, body) = match t.as_bytes().first() {
            None => {
                blanks += 1;
                lines.next();
                continue;
            }
            Some(b' ') => (' ', &t[1..]),
            Some(b'+') if !t.starts_with("+++ ") || blanks > 0 || !hunk.is_empty() => {
                ('+', &t[1..])
            }
            Some(b'-') if !(t.starts_with("--- ") && is_header_pair(lines)) => ('-', &t[1..]),
            Some(b'\\') => {
                // `\ No newline at end of file` belongs to the line before.
                match last_side {
                    '-' => s.no_newline_old = true,
                    '+' => s.no_newline_new = true,
                    _ => {
                        s.no_newline_old = true;
                        s.no_newline_new = true;
                    }
                }
                lines.next();
                continue;
            }
            _ => break,
        };
        for _ in 0..blanks {
            hunk.push(' ', "");
        }
        old_seen += blanks + usize::from(side != '+');
        new_seen += blanks + usize::from(side != '-');
        blanks = 0;
        // Only the last line of a file can lack its line end: a marker
        // seen before more lines is cancelled by them.
        match side {
            '-' => s.no_newline_old = false,
            '+' => s.no_newline_new = false,
            _ => {
                s.no_newline_old = false;
                s.no_newline_new = false;
            }
        }
        let body = if gives_ends {
            &with_cr(text, &next)[1..]
        } else {
            body
        };
        hunk.push(side, body);
        last_side = side;
        lines.next();
    }
    if hunk.is_empty() {
        s.problems
            .push((at.no, "the hunk has no lines".to_string()));
        return;
    }
    hunk.lines.shrink_to_fit();
    s.hunks.push(hunk);
}

/// Whether the `---` line at the front of `lines` is followed by a `+++`
/// line: the next file's header, not a removed line `-- …`.
fn is_header_pair(lines: &Peekable<Lines<'_>>) -> bool {
    let mut ahead = lines.clone();
    ahead.next();
    ahead.next().is_some_and(|l| l.text.starts_with("+++ "))
}

impl Reader<'_> {
    /// Turns a finished section into its task.
    fn finish(&mut self, section: Option<Section>) {
        let Some(s) = section else {
            return;
        };
        let task = TaskId {
            top: self.drafts.len() as u32 + 1,
            sub: None,
        };
        let old_path = s
            .rename_from
            .clone()
            .or_else(|| s.old.clone().flatten())
            .or_else(|| s.git_old.clone());
        let new_path = s
            .rename_to
            .clone()
            .or_else(|| s.new.clone().flatten())
            .or_else(|| s.git_new.clone());
        let creates = s.new_file || matches!(s.old, Some(None));
        let deletes = s.deleted || matches!(s.new, Some(None));
        let mut problems = s.problems.clone();
        if s.binary {
            problems.push((
                s.line,
                "a binary diff cannot be applied from a reply".to_string(),
            ));
        }
        // The mode the file ends with, when the section changes it (a new
        // file's 100644 is what a CREATE makes anyway).
        let mode = match (&s.old_mode, &s.new_mode) {
            _ if deletes => None,
            (_, None) => None,
            (old, Some(new)) if old.as_ref() == Some(new) => None,
            (_, Some(new)) => match FileMode::from_name(new) {
                Some(FileMode::Regular) if creates => None,
                Some(mode) => Some(mode),
                None => {
                    problems.push((
                        s.line,
                        format!(
                            "the mode {new} cannot be applied (100644, 100755 and 120000 can; a submodule cannot be changed from a reply)"
                        ),
                    ));
                    None
                }
            },
        };
        let final_newline = match (s.no_newline_old, s.no_newline_new) {
            (_, true) => Some(false),
            (true, false) => Some(true),
            _ => None,
        };
        let target = new_path.clone().or_else(|| old_path.clone());
        let sub = |n: usize| TaskId {
            top: task.top,
            sub: Some(n as u32),
        };
        // The section's operations, in order; several are one atomic block.
        let mut ops: Vec<(OpKind, Action<'_>)> = Vec::new();
        if !problems.is_empty() {
            // Nothing is built: the section is skipped with its problems.
        } else if creates {
            if let Some(path) = new_path.clone() {
                let mut content: String = s
                    .hunks
                    .iter()
                    .flat_map(|h| h.new_lines())
                    .flat_map(|l| [l, "\n"])
                    .collect();
                if final_newline == Some(false) {
                    content.pop();
                }
                ops.push((
                    OpKind::Write,
                    Action::Create {
                        path,
                        content: content.into(),
                    },
                ));
            }
        } else if deletes {
            if let Some(path) = old_path.clone() {
                ops.push((
                    OpKind::Delete,
                    Action::Delete {
                        path,
                        recursive: false,
                    },
                ));
            }
        } else {
            match (&old_path, &new_path) {
                // Only git's rename lines move a file: `diff -u a.orig a`
                // names the file twice, and the new name is the file.
                (Some(from), Some(to))
                    if s.rename_from.is_some() && s.rename_to.is_some() && from != to =>
                {
                    if !s.hunks.is_empty() {
                        ops.push((
                            OpKind::Edit,
                            Action::Edit {
                                path: from.clone(),
                                hunks: s.hunks.clone(),
                                locate: Locate::Unique,
                                final_newline,
                            },
                        ));
                    }
                    ops.push((
                        OpKind::Move,
                        Action::Move {
                            from: from.clone(),
                            to: to.clone(),
                            overwrite: false,
                        },
                    ));
                }
                (_, Some(path)) if !s.hunks.is_empty() => ops.push((
                    OpKind::Edit,
                    Action::Edit {
                        path: path.clone(),
                        hunks: s.hunks.clone(),
                        locate: Locate::Unique,
                        final_newline,
                    },
                )),
                (_, Some(_)) if mode.is_some() => {}
                _ => {
                    problems.push((
                        s.line,
                        "the file section has no hunks, and creates, deletes, renames or changes the mode of nothing".to_string(),
                    ));
                }
            }
        }
        if problems.is_empty()
            && let (Some(mode), Some(path)) = (mode, new_path.clone())
        {
            ops.push((OpKind::Mode, Action::Mode { path, mode }));
        }
        let action = match ops.len() {
            0 => None,
            1 => ops.pop(),
            _ => Some((
                OpKind::Tasks,
                Action::Block(
                    ops.into_iter()
                        .enumerate()
                        .map(|(i, (kind, action))| Draft::new(sub(i + 1), s.line, kind, action))
                        .collect(),
                ),
            )),
        };
        if action.is_none() && problems.is_empty() {
            problems.push((
                s.line,
                "the file section names no file (both sides are /dev/null, or no path could be read)".to_string(),
            ));
        }
        match action {
            Some((kind, action)) => {
                let mut draft = Draft::new(task, s.line, kind, action);
                draft.target = target;
                self.drafts.push(draft);
            }
            None => {
                for (line, why) in &problems {
                    let mut d = super::warning(
                        &self.lines,
                        *line,
                        DiagnosticKind::MalformedBlock,
                        why.clone(),
                        Some(
                            "write each file as `--- a/PATH`, `+++ b/PATH` and hunks `@@ -LINE,COUNT +LINE,COUNT @@` whose lines start with a space, - or +"
                                .to_string(),
                        ),
                    );
                    d.task = Some(task);
                    d.operation = Some(OpKind::Edit);
                    self.diagnostics.push(d);
                }
                let mut draft = Draft::invalid(task, s.line, OpKind::Edit, String::new());
                draft.invalid = problems
                    .into_iter()
                    .map(|(line, why)| {
                        let kind = DiagnosticKind::MalformedBlock;
                        (line, self.diagnostics.reason(line, kind, || why))
                    })
                    .collect();
                draft.target = target;
                self.drafts.push(draft);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(text: &str) -> Vec<Option<Action<'_>>> {
        parse(text).drafts.into_iter().map(|d| d.action).collect()
    }

    #[test]
    fn a_git_diff_with_wrong_counts_is_read_by_its_lines() {
        let text = "Fix:\n\n```diff\ndiff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,9 +1,9 @@\n def f():\n-    return 1\n+    return 2\n\n def g():\n```\nDone.\n";
        assert_eq!(
            actions(text),
            [Some(Action::Edit {
                path: "src/a.py".into(),
                hunks: vec![Hunk {
                    lines: " def f():\n-    return 1\n+    return 2\n \n def g():\n".into(),
                    line: Some(1),
                    anchor: None,
                    at_end: false,
                }],
                locate: Locate::Unique,
                final_newline: None,
            })]
        );
    }

    #[test]
    fn dev_null_creates_and_deletes_and_git_renames_move() {
        let text = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\ndiff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\ndiff --git a/x.rs b/y.rs\nsimilarity index 100%\nrename from x.rs\nrename to y.rs\n";
        let got = actions(text);
        assert_eq!(
            got[0],
            Some(Action::Create {
                path: "new.txt".into(),
                content: "one\ntwo".into(),
            })
        );
        assert_eq!(
            got[1],
            Some(Action::Delete {
                path: "old.txt".into(),
                recursive: false
            })
        );
        // A rename alone is one MOVE; with hunks, a block (see below).
        assert_eq!(
            got[2],
            Some(Action::Move {
                from: "x.rs".into(),
                to: "y.rs".into(),
                overwrite: false
            })
        );
    }

    #[test]
    fn a_removed_line_that_looks_like_a_header_is_a_removed_line() {
        let text = "--- a/m.md\n+++ b/m.md\n@@ -1,2 +1,1 @@\n--- rule\n keep\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(hunks[0].old_lines(), ["-- rule", "keep"]);
        assert_eq!(hunks[0].new_lines(), ["keep"]);
    }

    #[test]
    fn counts_that_add_up_end_the_hunk_before_a_signature_or_blank_line() {
        let text = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n-- \n2.43.0\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(hunks[0].old_lines(), ["a", "b"]);
        // Counts that do not add up: the lines decide.
        let text = "--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(hunks[0].old_lines(), ["a", "b"]);
        assert_eq!(hunks[0].new_lines(), ["a", "c"]);
    }

    #[test]
    fn plain_diff_u_names_and_timestamps() {
        let text = "--- lib/util.c\t2024-01-01 10:00:00\n+++ lib/util.c\t2024-01-02 10:00:00\n@@ -3 +3 @@\n-a\n+b\n";
        let Some(Action::Edit { path, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(path, "lib/util.c");
    }

    #[test]
    fn a_broken_hunk_header_skips_its_file_only() {
        let text =
            "--- a/x\n+++ b/x\n@@ -1,x +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        let parsed = parse(text);
        let ok: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(ok, [false, true]);
        assert_eq!(parsed.diagnostics[0].kind.code(), "malformed_block");
    }

    #[test]
    fn hunks_without_numbers_are_found_by_their_lines() {
        let text = "```diff\n--- a/x.py\n+++ b/x.py\n@@ @@\n def f():\n-    a\n+    b\n@@ ... @@\n-c\n+d\n```\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!("{:?}", actions(text));
        };
        assert_eq!(hunks.len(), 2);
        assert_eq!((hunks[0].line, hunks[1].line), (None, None));
        assert_eq!(hunks[1].old_lines(), ["c"]);
    }

    #[test]
    fn crlf_lines_under_an_lf_header_keep_their_line_ends() {
        let text = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+b\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(hunks[0].old_lines(), ["a\r", "b\r"]);
        assert_eq!(hunks[0].new_lines(), ["a\r", "b"]);
        // A reply saved with CRLF throughout says nothing of line ends.
        let text = "--- a/x\r\n+++ b/x\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n";
        let Some(Action::Edit { hunks, .. }) = &actions(text)[0] else {
            panic!();
        };
        assert_eq!(hunks[0].old_lines(), ["a", "b"]);
    }

    #[test]
    fn mode_lines_become_mode_operations() {
        let text = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n\
diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+run.sh\n\\ No newline at end of file\n\
diff --git a/m b/m\nold mode 100755\nnew mode 100644\n--- a/m\n+++ b/m\n@@ -1 +1 @@\n-a\n+b\n\
diff --git a/s b/s\nnew mode 160000\n";
        let got = actions(text);
        assert_eq!(
            got[0],
            Some(Action::Mode {
                path: "run.sh".into(),
                mode: FileMode::Executable
            })
        );
        let Some(Action::Block(ops)) = &got[1] else {
            panic!("{:?}", got[1]);
        };
        assert_eq!(
            ops[0].action,
            Some(Action::Create {
                path: "l".into(),
                content: "run.sh".into()
            })
        );
        assert_eq!(
            ops[1].action,
            Some(Action::Mode {
                path: "l".into(),
                mode: FileMode::Link
            })
        );
        let Some(Action::Block(ops)) = &got[2] else {
            panic!("{:?}", got[2]);
        };
        assert!(matches!(ops[0].action, Some(Action::Edit { .. })));
        assert_eq!(
            ops[1].action,
            Some(Action::Mode {
                path: "m".into(),
                mode: FileMode::Regular
            })
        );
        // A mode that cannot be applied refuses the section, never drops.
        assert_eq!(got[3], None);
    }

    #[test]
    fn a_directory_deleted_for_a_file_of_its_name_goes_first() {
        let text = "--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+f\n--- a/y/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-f\n";
        let drafts = parse(text).drafts;
        let order: Vec<u32> = drafts.iter().map(|d| d.task.top).collect();
        assert_eq!(order, [2, 1]);
        assert!(matches!(drafts[0].action, Some(Action::Delete { .. })));
    }

    #[test]
    fn every_prefix_parses_without_panic() {
        let text = "diff --git \"a/x y\" \"b/x y\"\nrename from \"a\\303\\251\"\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n\n+é\r\n\\ No newline at end of file\n@@ -x @@\n--- /dev/null\n+++ /dev/null\ndiff --git a/l b/l\nold mode 100644\nnew mode 120000\nnew file mode 160000\n--- a/l\n+++ b/l\n@@ @@\n é\r\n-\r\n+x\n@@ ... @@\r\n+y\r\n";
        crate::syntax::every_prefix_parses(text, parse, |_, _| {});
    }

    #[test]
    fn a_quoted_name_with_spaces_keeps_its_git_header_section() {
        // git quotes the name and ends the `---` line with a tab.
        let text = "diff --git \"a/x \\\"y\\\" z\" \"b/x \\\"y\\\" z\"\ndeleted file mode 100644\nindex 1..0\n--- \"a/x \\\"y\\\" z\"\t\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n";
        assert_eq!(
            actions(text),
            [Some(Action::Delete {
                path: "x \"y\" z".into(),
                recursive: false
            })]
        );
    }
}
