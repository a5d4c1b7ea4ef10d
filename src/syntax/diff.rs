//! The unified diff front end: `git diff` and `diff -u` output as drafts
//! of the common plan (syntaxes.md §4; decisions in doc/syntax-diff.md).
//!
//! Owns reading file sections (`diff --git` headers with their extended
//! lines, `---`/`+++` lines) and hunks (`@@ -l,n +l,n @@`). One file is
//! one task: its hunks an EDIT (`Locate::Unique`: context must match, the
//! line numbers choose among several matches), `/dev/null` a WRITE or a
//! DELETE, git's `rename from`/`rename to` a MOVE (with the EDIT before
//! it, as one atomic block). Hunk sizes are recounted from the lines: the
//! counts in the header are never trusted, as models get them wrong.

use std::iter::Peekable;

use crate::csl::{DiagnosticKind, OpKind, TaskId};
use crate::plan::{Action, Draft, Hunk, Locate};

use super::lines::{Line, Lines};
use super::{Parsed, Syntax};

/// One file of the diff, as read so far.
#[derive(Debug, Default)]
struct Section {
    line: u32,
    /// From `diff --git a/X b/Y` (a guess when names have spaces).
    git_old: Option<String>,
    git_new: Option<String>,
    /// From the `---`/`+++` lines; `None` inside is `/dev/null`.
    old: Option<Option<String>>,
    new: Option<Option<String>>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted: bool,
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
    text: &'t str,
    diagnostics: crate::csl::Diagnostics,
    drafts: Vec<Draft<'t>>,
}

/// Reads a unified diff reply.
pub fn parse(text: &str) -> Parsed<'_> {
    let mut r = Reader {
        text,
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
                .is_some_and(|s| s.git_old.is_some() && s.old.is_none() && s.hunks.is_empty());
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
            read_hunk(&mut lines, line, s);
            continue;
        }
        if s.hunks.is_empty() && s.old.is_none() && header_line(t, s) {
            continue;
        }
        // Anything else ends the section: prose after the diff.
        r.finish(section.take());
    }
    r.finish(section.take());
    Parsed::read(Syntax::Diff, text, r.drafts, r.diagnostics)
}

/// git's extended header lines between `diff --git` and `---`.
fn header_line(t: &str, s: &mut Section) -> bool {
    if let Some(from) = t.strip_prefix("rename from ") {
        s.rename_from = Some(unquote(from));
    } else if let Some(to) = t.strip_prefix("rename to ") {
        s.rename_to = Some(unquote(to));
    } else if t.starts_with("new file mode ") {
        s.new_file = true;
    } else if t.starts_with("deleted file mode ") {
        s.deleted = true;
    } else if t.starts_with("Binary files ") || t == "GIT binary patch" {
        s.binary = true;
    } else {
        return [
            "index ",
            "similarity index ",
            "dissimilarity index ",
            "old mode ",
            "new mode ",
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

/// Reads a hunk's lines after its `@@` header (`at`): context, removed
/// and added lines, up to the first line that is none of them. Blank
/// lines count as blank context lines (models drop the space) unless
/// nothing of the hunk follows them.
fn read_hunk<'t>(lines: &mut Peekable<Lines<'t>>, at: Line<'t>, s: &mut Section) {
    let start = hunk_start(at.text);
    if start.is_none() {
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
    while let Some(next) = lines.peek() {
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
        let final_newline = match (s.no_newline_old, s.no_newline_new) {
            (_, true) => Some(false),
            (true, false) => Some(true),
            _ => None,
        };
        let target = new_path.clone().or_else(|| old_path.clone());
        let action = if !problems.is_empty() {
            None
        } else if creates {
            new_path.clone().map(|path| {
                let mut content: String = s
                    .hunks
                    .iter()
                    .flat_map(|h| h.new_lines())
                    .flat_map(|l| [l, "\n"])
                    .collect();
                if final_newline == Some(false) {
                    content.pop();
                }
                (
                    OpKind::Write,
                    Action::Write {
                        path,
                        content: content.into(),
                        append: false,
                    },
                )
            })
        } else if deletes {
            old_path.clone().map(|path| {
                (
                    OpKind::Delete,
                    Action::Delete {
                        path,
                        recursive: false,
                    },
                )
            })
        } else {
            match (&old_path, &new_path) {
                // Only git's rename lines move a file: `diff -u a.orig a`
                // names the file twice, and the new name is the file.
                (Some(from), Some(to))
                    if s.rename_from.is_some() && s.rename_to.is_some() && from != to =>
                {
                    let mut ops = Vec::new();
                    let sub = |n: u32| TaskId {
                        top: task.top,
                        sub: Some(n),
                    };
                    if !s.hunks.is_empty() {
                        ops.push(Draft::new(
                            sub(1),
                            s.line,
                            OpKind::Edit,
                            Action::Edit {
                                path: from.clone(),
                                hunks: s.hunks.clone(),
                                locate: Locate::Unique,
                                final_newline,
                            },
                        ));
                    }
                    ops.push(Draft::new(
                        sub(ops.len() as u32 + 1),
                        s.line,
                        OpKind::Move,
                        Action::Move {
                            from: from.clone(),
                            to: to.clone(),
                            overwrite: false,
                        },
                    ));
                    Some((OpKind::Tasks, Action::Block(ops)))
                }
                (_, Some(path)) if !s.hunks.is_empty() => Some((
                    OpKind::Edit,
                    Action::Edit {
                        path: path.clone(),
                        hunks: s.hunks,
                        locate: Locate::Unique,
                        final_newline,
                    },
                )),
                _ => {
                    problems.push((
                        s.line,
                        "the file section has no hunks, and creates, deletes or renames nothing (a mode change alone is not applied)".to_string(),
                    ));
                    None
                }
            }
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
                        self.text,
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
            Some(Action::Write {
                path: "new.txt".into(),
                content: "one\ntwo".into(),
                append: false
            })
        );
        assert_eq!(
            got[1],
            Some(Action::Delete {
                path: "old.txt".into(),
                recursive: false
            })
        );
        let Some(Action::Block(ops)) = &got[2] else {
            panic!("{:?}", got[2]);
        };
        assert_eq!(
            ops[0].action,
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
        let text = "--- a/x\n+++ b/x\n@@ bad @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        let parsed = parse(text);
        let ok: Vec<bool> = parsed.drafts.iter().map(|d| d.action.is_some()).collect();
        assert_eq!(ok, [false, true]);
        assert_eq!(parsed.diagnostics[0].kind.code(), "malformed_block");
    }

    #[test]
    fn every_prefix_parses_without_panic() {
        let text = "diff --git \"a/x y\" \"b/x y\"\nrename from \"a\\303\\251\"\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n\n+é\r\n\\ No newline at end of file\n@@ -x @@\n--- /dev/null\n+++ /dev/null\n";
        crate::syntax::every_prefix_parses(text, parse, |_, _| {});
    }
}
