//! EDIT: hunks of lines found and replaced the way the format that wrote
//! them finds them (syntaxes.md §4, [`Locate`]).
//!
//! Owns locating hunks in a file's lines — the exact step first, then each
//! looser step the format allows, reported when it was needed — and
//! replacing them while the file keeps its line ends, BOM and every byte
//! outside the hunks (matching runs on [`Text::norm`], the edits are
//! spliced into the original bytes). Every hunk is located in the file as
//! it was before the EDIT, in order, each after the one before; hunks that
//! would overlap are an error, never a guess.

use crate::plan::{Hunk, Locate};

use super::feedback::{Feedback, feedback, without_search};
use super::text::{Text, is_binary};

/// How a hunk was found: exactly, or by one of the looser steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Exact,
    /// apply_patch: lines equal once trailing whitespace is ignored.
    TrimEnd,
    /// apply_patch: lines equal once surrounding whitespace is ignored.
    Trim,
    /// apply_patch: equal once Unicode dashes, quotes and spaces are read
    /// as their ASCII forms (and surrounding whitespace ignored).
    Punctuation,
    /// aider, diff: every line shifted by one uniform indentation.
    Indent,
    /// aider, diff: without the hunk's leading blank line(s).
    LeadingBlank,
    /// Both of the above.
    LeadingBlankIndent,
}

impl Step {
    /// What the report says of a hunk found this way.
    fn note(self) -> Option<&'static str> {
        Some(match self {
            Step::Exact => return None,
            Step::TrimEnd => "matched only when trailing whitespace is ignored",
            Step::Trim => "matched only when leading and trailing whitespace is ignored",
            Step::Punctuation => {
                "matched only when Unicode dashes, quotes and spaces are read as ASCII (and surrounding whitespace is ignored)"
            }
            Step::Indent => {
                "matched with every line's indentation shifted by one uniform amount; the new lines were re-indented the same way"
            }
            Step::LeadingBlank => {
                "matched without its leading blank line, which the file does not have there"
            }
            Step::LeadingBlankIndent => {
                "matched without its leading blank line and with its indentation shifted by one uniform amount; the new lines were re-indented the same way"
            }
        })
    }
}

/// A successful EDIT.
#[derive(Debug, Clone, PartialEq)]
pub struct Edited {
    pub bytes: Vec<u8>,
    /// 1-based line where each hunk was found, in the file before.
    pub lines: Vec<u32>,
    /// One line per hunk that needed a looser step.
    pub notes: Vec<String>,
}

/// Why an EDIT failed; nothing of it is applied then.
#[derive(Debug, Clone, PartialEq)]
pub enum EditError {
    Binary,
    /// Not UTF-8: the looser steps and the line split need text.
    NotText,
    /// Hunk `hunk` (1-based) of `of` was not found.
    NotFound {
        hunk: usize,
        of: usize,
        /// The anchor line (`@@ context`) that was not found, if that was
        /// what failed.
        anchor: Option<String>,
        feedback: Option<Box<Feedback>>,
    },
    /// Hunk `hunk` matches at several places and nothing says which.
    Ambiguous {
        hunk: usize,
        of: usize,
        lines: Vec<u32>,
        step: Step,
    },
    /// Two hunks found on the same lines (the later one's at `line`).
    Overlap {
        line: u32,
    },
    TooLarge {
        size: usize,
        max: usize,
    },
}

impl EditError {
    pub fn error_type(&self) -> &'static str {
        match self {
            EditError::Binary | EditError::NotText => "binary_file",
            EditError::TooLarge { .. } => "file_too_large",
            _ => "match_count_mismatch",
        }
    }
}

/// One line of the file: where it starts in the normalised text.
struct Lines<'a> {
    text: &'a str,
    /// (start offset, line without its `\n`).
    lines: Vec<(usize, &'a str)>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut lines = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let end =
                memchr::memchr(b'\n', &text.as_bytes()[pos..]).map_or(text.len(), |n| pos + n);
            lines.push((pos, &text[pos..end]));
            pos = end + 1;
        }
        Lines { text, lines }
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    fn line(&self, i: usize) -> &'a str {
        self.lines.get(i).map_or("", |l| l.1)
    }

    /// Byte offset where line `i` starts (the end for `i` past the last).
    fn start(&self, i: usize) -> usize {
        self.lines.get(i).map_or(self.text.len(), |l| l.0)
    }
}

/// A located hunk: replace `len` lines from `start` with `new`.
struct Found {
    start: usize,
    len: usize,
    new: Vec<String>,
    step: Step,
    /// Where the next hunk is looked for, when not right after this one
    /// (an added-only apply_patch hunk: after its anchor line).
    next: Option<usize>,
}

/// Applies `hunks` to `file`. `look`: when a hunk is not found, look for
/// the closest region (false once the apply's feedback budget is spent).
pub fn edit(
    file: &[u8],
    hunks: &[Hunk],
    locate: Locate,
    final_newline: Option<bool>,
    max_size: usize,
    look: bool,
) -> Result<Edited, EditError> {
    if is_binary(file) {
        return Err(EditError::Binary);
    }
    let text = Text::new(file);
    let Ok(norm) = std::str::from_utf8(text.norm()) else {
        return Err(EditError::NotText);
    };
    let lines = Lines::new(norm);
    let mut found: Vec<Found> = Vec::with_capacity(hunks.len());
    // Where the next hunk may start, and how far the hunks so far moved
    // from their line numbers (a diff's later hints shift with them).
    let mut cursor = 0;
    let mut shift: i64 = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        let (old, new) = (hunk.old_lines(), hunk.new_lines());
        let place = match locate {
            Locate::Sequential => sequential(&lines, hunk, &old, &new, cursor),
            Locate::Unique => unique(&lines, hunk, &old, &new, cursor, shift),
        };
        let f = match place {
            Ok(f) => f,
            Err(Miss::NotFound { anchor }) => {
                let feedback = (anchor.is_none()).then(|| {
                    if !look {
                        return Box::new(without_search());
                    }
                    Box::new(feedback(norm, &old.join("\n"), &new.join("\n")))
                });
                return Err(EditError::NotFound {
                    hunk: i + 1,
                    of: hunks.len(),
                    anchor,
                    feedback,
                });
            }
            Err(Miss::Ambiguous { starts, step }) => {
                return Err(EditError::Ambiguous {
                    hunk: i + 1,
                    of: hunks.len(),
                    lines: starts.iter().map(|&s| s as u32 + 1).collect(),
                    step,
                });
            }
        };
        // How far this hunk was from its line number moves the later
        // hunks' numbers: measured where its first old line was found
        // (past blank lines a looser step dropped). An added-only hunk
        // stands where its number says: it moves nothing.
        if let Some(hint) = hunk.line
            && f.len > 0
        {
            let dropped = match f.step {
                Step::LeadingBlank | Step::LeadingBlankIndent => {
                    old.iter().take_while(|l| l.trim().is_empty()).count() as i64
                }
                _ => 0,
            };
            shift = f.start as i64 - dropped + 1 - i64::from(hint);
        }
        cursor = f.next.unwrap_or(f.start + f.len);
        found.push(f);
    }
    let starts: Vec<u32> = found.iter().map(|f| f.start as u32 + 1).collect();
    let notes: Vec<String> = found
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            f.step.note().map(|note| {
                if hunks.len() == 1 {
                    format!("line {}: {note}", f.start + 1)
                } else {
                    format!("hunk {} (line {}): {note}", i + 1, f.start + 1)
                }
            })
        })
        .collect();
    // In file order for the splice (a stable sort keeps additions at one
    // place in the reply's order).
    found.sort_by_key(|f| f.start);
    // Hunks located one by one may still claim the same lines (an
    // end-of-file hunk is looked for at the end whatever came before):
    // an error, never a guess at which one wins.
    for pair in found.windows(2) {
        if pair[1].start < pair[0].start + pair[0].len {
            return Err(EditError::Overlap {
                line: pair[1].start as u32 + 1,
            });
        }
    }
    let bytes = splice(&text, &lines, &found, final_newline);
    if bytes.len() > max_size {
        return Err(EditError::TooLarge {
            size: bytes.len(),
            max: max_size,
        });
    }
    Ok(Edited {
        bytes,
        lines: starts,
        notes,
    })
}

enum Miss {
    NotFound { anchor: Option<String> },
    Ambiguous { starts: Vec<usize>, step: Step },
}

/// Codex apply_patch's rules: the anchor line first, then the hunk's
/// lines, each the first match from `cursor` (at the end of the file for
/// an end-of-file hunk), by the steps in order; a hunk whose last line is
/// empty is tried again without it. A hunk of added lines only goes to the
/// end of the file.
fn sequential(
    lines: &Lines<'_>,
    hunk: &Hunk,
    old: &[&str],
    new: &[&str],
    mut cursor: usize,
) -> Result<Found, Miss> {
    if let Some(anchor) = &hunk.anchor {
        match seek(lines, &[anchor.as_str()], cursor, false) {
            Some((at, _)) => cursor = at + 1,
            None => {
                return Err(Miss::NotFound {
                    anchor: Some(anchor.clone()),
                });
            }
        }
    }
    if old.is_empty() {
        let end = if lines.len() > 0 && lines.line(lines.len() - 1).is_empty() {
            lines.len() - 1
        } else {
            lines.len()
        };
        // Codex puts added-only hunks at the end; the next hunk is still
        // looked for from where it was, or after this hunk's anchor.
        return Ok(Found {
            start: end,
            len: 0,
            new: owned(new),
            step: Step::Exact,
            next: Some(cursor),
        });
    }
    let (mut old, mut new) = (old, new);
    let mut at = seek(lines, old, cursor, hunk.at_end);
    if at.is_none() && old.last().is_some_and(|l| l.is_empty()) {
        old = &old[..old.len() - 1];
        if new.last().is_some_and(|l| l.is_empty()) {
            new = &new[..new.len() - 1];
        }
        at = seek(lines, old, cursor, hunk.at_end);
    }
    match at {
        Some((start, step)) => Ok(Found {
            start,
            len: old.len(),
            new: owned(new),
            step,
            next: None,
        }),
        None => Err(Miss::NotFound { anchor: None }),
    }
}

/// The first window from `from` (only the last one for `at_end`) whose
/// lines equal `pattern` by the first step that finds one.
fn seek(lines: &Lines<'_>, pattern: &[&str], from: usize, at_end: bool) -> Option<(usize, Step)> {
    if pattern.is_empty() {
        return Some((from, Step::Exact));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let first = if at_end { last } else { from };
    for step in [Step::Exact, Step::TrimEnd, Step::Trim, Step::Punctuation] {
        for i in first..=last {
            if (0..pattern.len()).all(|k| same(lines.line(i + k), pattern[k], step)) {
                return Some((i, step));
            }
        }
    }
    None
}

/// Whether a file line and a pattern line are equal under `step`.
fn same(file: &str, pattern: &str, step: Step) -> bool {
    match step {
        Step::TrimEnd => file.trim_end() == pattern.trim_end(),
        Step::Trim => file.trim() == pattern.trim(),
        Step::Punctuation => {
            let (a, b) = (file.trim(), pattern.trim());
            a.chars().map(fold).eq(b.chars().map(fold))
        }
        _ => file == pattern,
    }
}

/// A Unicode dash, quote or space as its ASCII look-alike (Codex's list).
fn fold(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// aider's and a diff's rules: every match from `cursor`; one is taken,
/// several are told apart by the hunk's line number (moved by `shift`,
/// how far earlier hunks were from theirs) or refused. Where nothing
/// matches exactly: one uniform indentation offset, then without leading
/// blank lines (exactly, then re-indented).
fn unique(
    lines: &Lines<'_>,
    hunk: &Hunk,
    old_lines: &[&str],
    new_lines: &[&str],
    cursor: usize,
    shift: i64,
) -> Result<Found, Miss> {
    if old_lines.is_empty() {
        // Added lines only: after the line the hunk names (0: the top).
        let after = hunk.line.map_or(lines.len(), |l| {
            (i64::from(l) + shift).clamp(0, lines.len() as i64) as usize
        });
        return Ok(Found {
            start: after.max(cursor),
            len: 0,
            new: owned(new_lines),
            step: Step::Exact,
            next: None,
        });
    }
    let blank_lead = old_lines.iter().take_while(|l| l.trim().is_empty()).count();
    let mut tries: Vec<(Step, &[&str], &[&str])> = vec![
        (Step::Exact, old_lines, new_lines),
        (Step::Indent, old_lines, new_lines),
    ];
    if blank_lead > 0 && blank_lead < old_lines.len() {
        let old = &old_lines[blank_lead..];
        let new_lead = new_lines.iter().take_while(|l| l.trim().is_empty()).count();
        let new = &new_lines[new_lead.min(blank_lead)..];
        tries.push((Step::LeadingBlank, old, new));
        tries.push((Step::LeadingBlankIndent, old, new));
    }
    for (step, old, new) in tries {
        let indent = matches!(step, Step::Indent | Step::LeadingBlankIndent);
        let mut matches: Vec<(usize, Vec<String>)> = Vec::new();
        // The pattern's indentation, worked out once for every window.
        let shape = if indent { Shape::of(old) } else { None };
        if indent && shape.is_none() {
            continue;
        }
        if old.len() <= lines.len() {
            for i in cursor..=lines.len() - old.len() {
                if let Some(shape) = &shape {
                    if let Some(shifted) = reindent(lines, i, old, new, shape) {
                        matches.push((i, shifted));
                    }
                } else if (0..old.len()).all(|k| lines.line(i + k) == old[k]) {
                    matches.push((i, owned(new)));
                }
            }
        }
        let chosen = match matches.len() {
            0 => continue,
            1 => matches.pop(),
            _ => match hunk.line {
                Some(l) => nearest(&matches, i64::from(l) - 1 + shift),
                None => None,
            },
        };
        return match chosen {
            Some((start, new)) => Ok(Found {
                start,
                len: old.len(),
                new,
                step,
                next: None,
            }),
            None => Err(Miss::Ambiguous {
                starts: matches.iter().map(|m| m.0).collect(),
                step,
            }),
        };
    }
    Err(Miss::NotFound { anchor: None })
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// The match nearest to line index `want`, if one is nearer than all
/// others.
fn nearest(matches: &[(usize, Vec<String>)], want: i64) -> Option<(usize, Vec<String>)> {
    let distance = |i: usize| (i as i64 - want).unsigned_abs();
    let best = matches.iter().map(|m| distance(m.0)).min()?;
    let mut at = matches.iter().filter(|m| distance(m.0) == best);
    let first = at.next()?.clone();
    at.next().is_none().then_some(first)
}

/// A pattern's indentation: what all its non-blank lines share
/// (`common`), and its first non-blank line (`k0`) without it (`core0`).
struct Shape<'p> {
    common: &'p str,
    k0: usize,
    core0: &'p str,
}

impl<'p> Shape<'p> {
    fn of(old: &[&'p str]) -> Option<Shape<'p>> {
        let lead = |l: &str| l.len() - l.trim_start().len();
        let k0 = old.iter().position(|l| !l.trim().is_empty())?;
        let first = old[k0];
        let mut common = &first[..lead(first)];
        for l in old.iter().filter(|l| !l.trim().is_empty()) {
            while !l.starts_with(common) {
                common = &common[..common.len() - common.chars().next_back()?.len_utf8()];
            }
        }
        Some(Shape {
            common,
            k0,
            core0: &first[common.len()..],
        })
    }
}

/// Whether the file's lines from `at` are `old` with one uniform change
/// of indentation (blank lines match blank lines), and if so `new`
/// re-indented the same way. An offset of nothing is no looser match.
/// Most windows are refused on their first non-blank line.
fn reindent(
    lines: &Lines<'_>,
    at: usize,
    old: &[&str],
    new: &[&str],
    shape: &Shape<'_>,
) -> Option<Vec<String>> {
    let Shape { common, k0, core0 } = *shape;
    // The file's indentation in its place, from the first non-blank line.
    let prefix = lines.line(at + k0).strip_suffix(core0)?;
    if !prefix.trim().is_empty() || prefix == common {
        return None;
    }
    for (k, l) in old.iter().enumerate() {
        let f = lines.line(at + k);
        let ok = if l.trim().is_empty() {
            f.trim().is_empty()
        } else {
            f.strip_prefix(prefix) == Some(&l[common.len()..])
        };
        if !ok {
            return None;
        }
    }
    Some(
        new.iter()
            .map(|l| match l.strip_prefix(common) {
                Some(rest) if !l.trim().is_empty() => format!("{prefix}{rest}"),
                _ => l.to_string(),
            })
            .collect(),
    )
}

/// The file with every found hunk replaced, in the file's line ends.
fn splice(
    text: &Text<'_>,
    lines: &Lines<'_>,
    found: &[Found],
    final_newline: Option<bool>,
) -> Vec<u8> {
    let norm = lines.text;
    let ends_with_newline = norm.ends_with('\n');
    let edits: Vec<(std::ops::Range<usize>, Vec<u8>)> = found
        .iter()
        .map(|f| {
            let start = lines.start(f.start);
            let end = lines.start(f.start + f.len);
            // The last line of a file without a final line end: what
            // replaces it has none either (the final newline rule below
            // decides), and lines added after it need one before them.
            let at_unterminated_end =
                f.start + f.len == lines.len() && !ends_with_newline && !norm.is_empty();
            let mut new = String::new();
            if f.len == 0 && at_unterminated_end && !f.new.is_empty() {
                new.push('\n');
            }
            for (k, l) in f.new.iter().enumerate() {
                new.push_str(l);
                let last = k + 1 == f.new.len();
                if !(last && at_unterminated_end) {
                    new.push('\n');
                }
            }
            (start..end, text.with_file_endings(&new))
        })
        .collect();
    let mut bytes = text.splice(&edits);
    match final_newline {
        Some(true) if !bytes.is_empty() && !bytes.ends_with(b"\n") => {
            bytes.extend_from_slice(&text.with_file_endings("\n"));
        }
        Some(false) => {
            if bytes.ends_with(b"\r\n") {
                bytes.truncate(bytes.len() - 2);
            } else if bytes.ends_with(b"\n") {
                bytes.truncate(bytes.len() - 1);
            }
        }
        _ => {}
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old: &[&str], new: &[&str]) -> Hunk {
        Hunk::of_lines(old, new)
    }

    fn run(file: &str, hunks: &[Hunk], locate: Locate) -> Result<(String, Vec<String>), EditError> {
        edit(file.as_bytes(), hunks, locate, None, usize::MAX, true)
            .map(|e| (String::from_utf8(e.bytes).unwrap(), e.notes))
    }

    #[test]
    fn exact_hunks_keep_crlf_and_the_bom() {
        let file = "\u{feff}a\r\nb\r\nc\r\n";
        let (out, notes) = run(file, &[hunk(&["b"], &["B", "B2"])], Locate::Unique).unwrap();
        assert_eq!(out, "\u{feff}a\r\nB\r\nB2\r\nc\r\n");
        assert!(notes.is_empty());
    }

    #[test]
    fn several_matches_are_refused_unless_a_line_number_chooses() {
        let file = "x\ny\nx\ny\n";
        let err = run(file, &[hunk(&["x"], &["z"])], Locate::Unique).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { ref lines, .. } if lines == &[1, 3]),
            "{err:?}"
        );
        let mut h = hunk(&["x"], &["z"]);
        h.line = Some(3);
        assert_eq!(run(file, &[h], Locate::Unique).unwrap().0, "x\ny\nz\ny\n");
    }

    #[test]
    fn a_uniform_indentation_offset_is_found_and_reported() {
        let file =
            "fn f() {\n        let a = 1;\n\n        if a {\n            b();\n        }\n}\n";
        let h = hunk(
            &["let a = 1;", "", "if a {", "    b();", "}"],
            &["let a = 2;", "if a {", "    c();", "}"],
        );
        let (out, notes) = run(file, &[h], Locate::Unique).unwrap();
        assert_eq!(
            out,
            "fn f() {\n        let a = 2;\n        if a {\n            c();\n        }\n}\n"
        );
        assert!(notes[0].contains("indentation shifted"), "{notes:?}");
        // Lines shifted by different amounts are no match.
        let h = hunk(&["let a = 1;", "if a {", "  b();"], &["x"]);
        assert!(matches!(
            run(file, &[h], Locate::Unique),
            Err(EditError::NotFound { .. })
        ));
    }

    #[test]
    fn a_stray_leading_blank_line_is_dropped_and_reported() {
        let file = "a\nb\nc\n";
        let (out, notes) = run(file, &[hunk(&["", "b"], &["", "B"])], Locate::Unique).unwrap();
        assert_eq!(out, "a\nB\nc\n");
        assert!(notes[0].contains("leading blank line"), "{notes:?}");
    }

    #[test]
    fn sequential_takes_the_first_match_after_the_previous_hunk_by_codex_steps() {
        let file = "x\ny  \nx\nz\n";
        let hunks = [
            hunk(&["x"], &["X"]),
            hunk(&["x"], &["X2"]),
            hunk(&["z "], &["Z"]),
        ];
        let (out, notes) = run(file, &hunks, Locate::Sequential).unwrap();
        assert_eq!(out, "X\ny  \nX2\nZ\n");
        assert_eq!(
            notes,
            ["hunk 3 (line 4): matched only when trailing whitespace is ignored"]
        );
        let dash = [hunk(&["a \u{2014} b"], &["c"])];
        let (out, notes) = run("a - b\n", &dash, Locate::Sequential).unwrap();
        assert_eq!(out, "c\n");
        assert!(notes[0].contains("Unicode"), "{notes:?}");
    }

    #[test]
    fn sequential_anchor_end_of_file_and_pure_additions() {
        let file = "def a():\n    return 1\ndef b():\n    return 1\n";
        let mut h = hunk(&["    return 1"], &["    return 2"]);
        h.anchor = Some("def b():".into());
        assert_eq!(
            run(file, &[h], Locate::Sequential).unwrap().0,
            "def a():\n    return 1\ndef b():\n    return 2\n"
        );
        let mut h = hunk(&["    return 1"], &["    return 3"]);
        h.at_end = true;
        assert!(
            run(file, &[h], Locate::Sequential)
                .unwrap()
                .0
                .ends_with("return 3\n")
        );
        let add = hunk(&[], &["def c():", "    pass"]);
        assert!(
            run(file, &[add], Locate::Sequential)
                .unwrap()
                .0
                .ends_with("return 1\ndef c():\n    pass\n")
        );
        let mut missing = hunk(&["x"], &["y"]);
        missing.anchor = Some("def zz():".into());
        assert!(matches!(
            run(file, &[missing], Locate::Sequential),
            Err(EditError::NotFound {
                anchor: Some(_),
                ..
            })
        ));
    }

    #[test]
    fn sequential_an_added_only_hunk_moves_the_search_past_its_anchor() {
        // Codex: the anchor moves the search on even when the hunk's lines
        // go to the end of the file, so a later hunk is not found before it.
        let file = "a\nfn x\nb\nfn y\nc\n";
        let mut add = hunk(&[], &["z"]);
        add.anchor = Some("fn y".into());
        let err = run(
            file,
            &[add.clone(), hunk(&["b"], &["B"])],
            Locate::Sequential,
        );
        assert!(
            matches!(err, Err(EditError::NotFound { hunk: 2, .. })),
            "{err:?}"
        );
        let (out, _) = run(file, &[add, hunk(&["c"], &["C"])], Locate::Sequential).unwrap();
        assert_eq!(out, "a\nfn x\nb\nfn y\nC\nz\n");
    }

    #[test]
    fn a_file_without_a_final_line_end_keeps_that_unless_told() {
        assert_eq!(
            run("a\nb", &[hunk(&["b"], &["c"])], Locate::Unique)
                .unwrap()
                .0,
            "a\nc"
        );
        let mut add = hunk(&[], &["c"]);
        add.line = Some(2);
        assert_eq!(run("a\nb", &[add], Locate::Unique).unwrap().0, "a\nb\nc");
        let out = edit(
            b"a\nb",
            &[hunk(&["b"], &["c"])],
            Locate::Sequential,
            Some(true),
            usize::MAX,
            true,
        )
        .unwrap();
        assert_eq!(out.bytes, b"a\nc\n");
    }

    #[test]
    fn added_only_hunks_do_not_shift_the_hunks_after_them() {
        // diff -U0: insert X after line 1 and Y after line 3.
        let mut x = hunk(&[], &["X"]);
        x.line = Some(1);
        let mut y = hunk(&[], &["Y"]);
        y.line = Some(3);
        let (out, _) = run("a\nb\nc\nd\n", &[x, y], Locate::Unique).unwrap();
        assert_eq!(out, "a\nX\nb\nc\nY\nd\n");
    }

    #[test]
    fn hunks_on_the_same_lines_are_refused() {
        let mut end = hunk(&["b", "c"], &["X"]);
        end.at_end = true;
        let err = run(
            "a\nb\nc\n",
            &[hunk(&["b"], &["B"]), end],
            Locate::Sequential,
        )
        .unwrap_err();
        assert_eq!(err, EditError::Overlap { line: 2 });
    }

    #[test]
    fn a_missing_hunk_says_what_is_already_there() {
        let err = run("a\nnew\n", &[hunk(&["old"], &["new"])], Locate::Unique).unwrap_err();
        let EditError::NotFound {
            feedback: Some(fb), ..
        } = err
        else {
            panic!("{err:?}");
        };
        assert_eq!(fb.already_present, Some(2));
    }
}
