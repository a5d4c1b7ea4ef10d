//! EDIT: hunks of lines found and replaced the way the format that wrote
//! them finds them (syntaxes.md §4, [`Locate`]).
//!
//! Owns locating hunks in a file's lines — the exact step first, then each
//! looser step the format allows, reported when it was needed — and
//! replacing them while the file keeps its line ends, BOM and every byte
//! outside the hunks (matching runs on [`Text::norm`], the edits are
//! spliced into the original bytes). Every hunk is located in the file as
//! it was before the EDIT, in order, each after the one before; hunks that
//! would overlap are an error, never a guess. After a looser step the
//! lines a hunk keeps are written as the file has them and its added lines
//! in the file's indentation ([`super::loose`]); a hunk that only adds
//! lines which already stand where it would put them is refused as
//! applied already.

use std::cell::OnceCell;

use crate::plan::{Hunk, Locate};

use super::feedback::{Feedback, feedback, without_search};
use super::loose::{Indent, context_of, kept};
use super::text::{Text, is_binary};

/// How a hunk was found: exactly, or by one of the looser steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Exact,
    /// apply_patch: lines equal once trailing whitespace is ignored.
    TrimEnd,
    /// apply_patch: lines equal once surrounding whitespace is ignored
    /// (and their indentation agrees on one shift).
    Trim,
    /// apply_patch: equal once Unicode dashes, quotes and spaces are read
    /// as their ASCII forms (and surrounding whitespace ignored).
    Punctuation,
    /// aider, diff: equal once surrounding whitespace is ignored, every
    /// line's indentation shifted by one uniform amount (tabs or spaces).
    Indent,
    /// aider, diff: without the hunk's leading blank line(s).
    LeadingBlank,
    /// Both of the above.
    LeadingBlankIndent,
    /// Every syntax with kept lines: up to two kept (context) lines differ
    /// from the file; every line the hunk removes matches, and nowhere
    /// else in the file does the hunk match so.
    Fuzz,
}

impl Step {
    /// Whether the step compares lines with their whitespace ignored.
    fn loose_whitespace(self) -> bool {
        !matches!(self, Step::Exact | Step::LeadingBlank)
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
    /// Hunk `hunk` only adds lines, and they already stand at `line`
    /// where it would put them: the edit was applied before.
    AlreadyApplied {
        hunk: usize,
        of: usize,
        line: u32,
    },
    /// Hunk `hunk` matched only with its indentation shifted, and an
    /// added line would go left of the margin: its indentation is
    /// unknown.
    Unindentable {
        hunk: usize,
        of: usize,
        line: u32,
    },
    /// The file indents with tabs only, hunk `hunk` adds lines indented
    /// with spaces, and none of its lines shows how the reply writes a
    /// tab (found at `line`).
    SpacesForTabs {
        hunk: usize,
        of: usize,
        line: u32,
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
    /// What the report says of a looser step.
    note: Option<String>,
    /// Where the next hunk is looked for, when not right after this one
    /// (an added-only apply_patch hunk: after its anchor line).
    next: Option<usize>,
}

/// A hunk's lines, and which of them it keeps (worked out only when a
/// looser step needs it).
struct Shape<'h> {
    hunk: &'h Hunk,
    old: Vec<&'h str>,
    new: Vec<&'h str>,
    kept: OnceCell<Vec<Option<usize>>>,
}

impl<'h> Shape<'h> {
    fn new(hunk: &'h Hunk) -> Shape<'h> {
        Shape {
            hunk,
            old: hunk.old_lines(),
            new: hunk.new_lines(),
            kept: OnceCell::new(),
        }
    }

    /// For each new line, the old line it keeps.
    fn kept(&self) -> &[Option<usize>] {
        self.kept
            .get_or_init(|| kept(self.hunk, &self.old, &self.new))
    }

    /// Whether the hunk removes nothing and adds a line that is not blank.
    fn only_adds(&self) -> bool {
        let kept = self.kept();
        kept.iter().flatten().count() == self.old.len()
            && self
                .new
                .iter()
                .zip(kept)
                .any(|(l, k)| k.is_none() && !l.trim().is_empty())
    }
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
    let shapes: Vec<Shape<'_>> = hunks.iter().map(Shape::new).collect();
    let mut found: Vec<Found> = Vec::with_capacity(hunks.len());
    // Where the next hunk may start, and how far the hunks so far moved
    // from their line numbers (a diff's later hints shift with them).
    let mut cursor = 0;
    let mut shift: Option<i64> = None;
    for (i, shape) in shapes.iter().enumerate() {
        let place = match locate {
            Locate::Sequential => sequential(&lines, shape, cursor),
            Locate::Unique => {
                // Line numbers all off by the same amount (a diff made
                // against another version) choose among repeated copies
                // by the shift a later, unrepeated hunk shows.
                let shift = shift.or_else(|| later_shift(&lines, &shapes[i + 1..], cursor));
                unique(&lines, shape, cursor, shift.unwrap_or(0))
            }
        };
        let f = match place {
            Ok(f) => f,
            Err(Miss::NotFound { anchor }) => {
                let feedback = (anchor.is_none()).then(|| {
                    if !look {
                        return Box::new(without_search());
                    }
                    Box::new(feedback(norm, &shape.old.join("\n"), &shape.new.join("\n")))
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
            Err(Miss::Unindentable { line }) => {
                return Err(EditError::Unindentable {
                    hunk: i + 1,
                    of: hunks.len(),
                    line: line as u32 + 1,
                });
            }
        };
        if let Some(line) = already_applied(&lines, shape, &f) {
            return Err(EditError::AlreadyApplied {
                hunk: i + 1,
                of: hunks.len(),
                line: line as u32 + 1,
            });
        }
        // How far this hunk was from its line number moves the later
        // hunks' numbers: measured where its first old line was found
        // (past blank lines a looser step dropped). An added-only hunk
        // stands where its number says: it moves nothing.
        if let Some(hint) = shape.hunk.line
            && f.len > 0
        {
            let dropped = match f.step {
                Step::LeadingBlank | Step::LeadingBlankIndent => {
                    shape.old.iter().take_while(|l| l.trim().is_empty()).count() as i64
                }
                _ => 0,
            };
            shift = Some(f.start as i64 - dropped + 1 - i64::from(hint));
        }
        cursor = f.next.unwrap_or(f.start + f.len);
        found.push(f);
    }
    retab_by_example(&lines, &shapes, &mut found);
    if let Some((i, line)) = spaces_in_a_tab_file(&lines, &shapes, &found) {
        return Err(EditError::SpacesForTabs {
            hunk: i + 1,
            of: hunks.len(),
            line: line as u32 + 1,
        });
    }
    let starts: Vec<u32> = found.iter().map(|f| f.start as u32 + 1).collect();
    let notes: Vec<String> = found
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            f.note.as_ref().map(|note| {
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

/// A reply that wrote the file's tabs as spaces where a hunk's lines show
/// it (a loose match whose indentation maps spaces onto tabs) wrote them
/// so everywhere: the added lines of the EDIT's other hunks, whose own
/// lines say nothing of the file's indentation (none is indented, or they
/// matched exactly), get the file's tabs the same way.
fn retab_by_example(lines: &Lines<'_>, shapes: &[Shape<'_>], found: &mut [Found]) {
    let proof = |f: &Found, shape: &Shape<'_>| -> Option<Indent> {
        if !matches!(
            f.step,
            Step::Indent | Step::Trim | Step::Punctuation | Step::Fuzz
        ) || f.len != shape.old.len()
        {
            return None;
        }
        let pairs = (0..f.len)
            .map(|k| (shape.old[k], lines.line(f.start + k)))
            .filter(|(p, l)| p.trim() == l.trim());
        Indent::fit(pairs)
    };
    let Some((width, example)) = found
        .iter()
        .zip(shapes)
        .enumerate()
        .find_map(|(i, (f, s))| {
            proof(f, s)
                .and_then(|indent| indent.tabs_for_spaces())
                .map(|w| (w, i))
        })
    else {
        return;
    };
    for (i, (f, shape)) in found.iter_mut().zip(shapes).enumerate() {
        if i == example || f.new.len() != shape.new.len() {
            continue;
        }
        // Hunks whose matched lines show the file's indentation were
        // written in it already.
        if shows_indentation(lines, f) {
            continue;
        }
        let kept = shape.kept();
        let mut changed = 0;
        for (k, l) in f.new.iter_mut().enumerate() {
            if kept[k].is_some() {
                continue;
            }
            if !super::loose::spaced(l) {
                continue;
            }
            let n = super::loose::lead(l).len();
            *l = format!(
                "{}{}{}",
                "\t".repeat(n / width),
                " ".repeat(n % width),
                &l[n..]
            );
            changed += 1;
        }
        if changed > 0 {
            let note = format!(
                "its new lines were indented with spaces, where hunk {} showed this reply writes the file's tabs as {width} spaces: they were written with tabs",
                example + 1
            );
            f.note = Some(match f.note.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
    }
}

/// The first hunk (index, and its 0-based line) that adds lines indented
/// with spaces to a file indented with tabs alone, where its matched lines
/// show no indentation to tell how this reply writes a tab: writing them
/// as sent would put spaces in a tab file, converting them a guess at the
/// width.
fn spaces_in_a_tab_file(
    lines: &Lines<'_>,
    shapes: &[Shape<'_>],
    found: &[Found],
) -> Option<(usize, usize)> {
    let first = found.iter().zip(shapes).position(|(f, shape)| {
        let kept = shape.kept();
        let added = || {
            f.new
                .iter()
                .enumerate()
                .filter(|(k, _)| kept[*k].is_none())
                .map(|(_, l)| l)
        };
        // An added line indented with a tab shows the reply writes the
        // file's tabs: its lines with spaces are meant so.
        let tabbed = added().any(|l| !l.trim().is_empty() && l.starts_with('\t'));
        !shows_indentation(lines, f)
            && !tabbed
            && f.new.len() == shape.new.len()
            && added().any(|l| super::loose::spaced(l))
    })?;
    super::loose::tabs_only((0..lines.len()).map(|i| lines.line(i)))
        .then(|| (first, found[first].start))
}

/// Whether the file's lines a hunk was found on show an indentation (one
/// of them is indented).
fn shows_indentation(lines: &Lines<'_>, f: &Found) -> bool {
    (0..f.len).any(|k| super::loose::indented(lines.line(f.start + k)))
}

enum Miss {
    NotFound {
        anchor: Option<String>,
    },
    Ambiguous {
        starts: Vec<usize>,
        step: Step,
    },
    /// The window at this (0-based) line matched, but an added line
    /// cannot be re-indented.
    Unindentable {
        line: usize,
    },
}

/// The shift (found line minus numbered line) of the first later hunk
/// that has a line number and matches exactly once after `cursor`.
fn later_shift(lines: &Lines<'_>, later: &[Shape<'_>], cursor: usize) -> Option<i64> {
    later.iter().find_map(|shape| {
        let hint = shape.hunk.line?;
        let old = &shape.old;
        if old.is_empty() || old.len() > lines.len() {
            return None;
        }
        let mut at = (cursor..=lines.len() - old.len())
            .filter(|&i| (0..old.len()).all(|k| lines.line(i + k) == old[k]));
        let first = at.next()?;
        at.next()
            .is_none()
            .then(|| first as i64 + 1 - i64::from(hint))
    })
}

/// Where the lines a hunk adds already stand, with its kept lines around
/// them as the hunk has them: the 0-based line of that text, if so.
fn already_applied(lines: &Lines<'_>, shape: &Shape<'_>, f: &Found) -> Option<usize> {
    if !shape.only_adds() {
        return None;
    }
    let n = f.new.len();
    let at = if shape.old.is_empty() {
        // Added lines only: right where they would go.
        f.start
    } else {
        // The new lines before the first kept one stand before the
        // match.
        let before = shape.kept().iter().position(Option::is_some)?;
        f.start.checked_sub(before)?
    };
    if at + n > lines.len() {
        return None;
    }
    (0..n)
        .all(|k| lines.line(at + k).trim_end() == f.new[k].trim_end())
        .then_some(at)
}

/// Codex apply_patch's rules: the anchor line first, then the hunk's
/// lines, each the first match from `cursor` (at the end of the file for
/// an end-of-file hunk), by the steps in order; a hunk whose last line is
/// empty is tried again without it where no step finds it whole. A hunk of
/// added lines only goes to the end of the file. Where nothing matches by Codex's steps, a hunk with
/// kept lines may still match with up to two of them different
/// ([`Step::Fuzz`]) where that match is the only one.
fn sequential(lines: &Lines<'_>, shape: &Shape<'_>, mut cursor: usize) -> Result<Found, Miss> {
    let hunk = shape.hunk;
    if let Some(anchor) = &hunk.anchor {
        match seek_anchor(lines, anchor, cursor) {
            Some(at) => cursor = at + 1,
            None => {
                return Err(Miss::NotFound {
                    anchor: Some(anchor.clone()),
                });
            }
        }
    }
    let (old, new) = (&shape.old[..], &shape.new[..]);
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
            note: None,
            next: Some(cursor),
        });
    }
    let whole = Window {
        old,
        new,
        old_from: 0,
        new_from: 0,
    };
    let mut tries = vec![whole];
    // Not cut to nothing: a hunk of no lines matches anywhere and would
    // remove nothing.
    if old.len() > 1 && old.last().is_some_and(|l| l.is_empty()) {
        let new_cut = usize::from(new.last().is_some_and(|l| l.is_empty()));
        tries.push(Window {
            old: &old[..old.len() - 1],
            new: &new[..new.len() - new_cut],
            old_from: 0,
            new_from: 0,
        });
    }
    let first = if hunk.at_end { None } else { Some(cursor) };
    // The whole hunk by every step before the hunk without its last blank
    // line (as Codex does): cut first, a line the file has with blanks on
    // it would not be removed.
    for w in &tries {
        for step in [Step::Exact, Step::TrimEnd, Step::Trim, Step::Punctuation] {
            let Some(range) = windows(lines, w.old.len(), first) else {
                continue;
            };
            for at in range {
                match w.at(lines, shape, at, step) {
                    Fit::No => {}
                    Fit::Yes(new, note) => {
                        return Ok(Found {
                            start: at,
                            len: w.old.len(),
                            new,
                            step,
                            note,
                            next: None,
                        });
                    }
                    // The first place that fits is the one Codex takes:
                    // its new lines cannot be written, so nothing is.
                    Fit::Unindentable => return Err(Miss::Unindentable { line: at }),
                }
            }
        }
    }
    match fuzz(lines, shape, &tries[0], first) {
        Ok(f) => Ok(f),
        Err(Miss::NotFound { .. }) if tries.len() > 1 => fuzz(lines, shape, &tries[1], first),
        Err(miss) => Err(miss),
    }
}

/// The first line from `from` equal to `anchor` (exactly, then by Codex's
/// looser steps).
fn seek_anchor(lines: &Lines<'_>, anchor: &str, from: usize) -> Option<usize> {
    [Step::Exact, Step::TrimEnd, Step::Trim, Step::Punctuation]
        .into_iter()
        .find_map(|step| (from..lines.len()).find(|&i| same(lines.line(i), anchor, step)))
}

/// The window starts to try for `len` old lines: every one from `from`,
/// or (`None`) only the last one of the file.
fn windows(
    lines: &Lines<'_>,
    len: usize,
    from: Option<usize>,
) -> Option<std::ops::RangeInclusive<usize>> {
    let last = lines.len().checked_sub(len)?;
    match from {
        Some(from) if from <= last => Some(from..=last),
        Some(_) => None,
        None => Some(last..=last),
    }
}

/// Whether a file line and a pattern line are equal under `step`.
fn same(file: &str, pattern: &str, step: Step) -> bool {
    match step {
        Step::Exact | Step::LeadingBlank => file == pattern,
        Step::TrimEnd => file.trim_end() == pattern.trim_end(),
        Step::Punctuation => {
            let (a, b) = (file.trim(), pattern.trim());
            a.chars().map(fold).eq(b.chars().map(fold))
        }
        Step::Trim | Step::Indent | Step::LeadingBlankIndent | Step::Fuzz => {
            file.trim() == pattern.trim()
        }
    }
}

/// A Unicode dash, quote or space as its ASCII look-alike (Codex's list).
pub fn fold(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// The old and new lines a step tries: the hunk's, or a part of them (a
/// leading blank line dropped) starting at `old_from` and `new_from`.
#[derive(Clone, Copy)]
struct Window<'s, 'h> {
    old: &'s [&'h str],
    new: &'s [&'h str],
    old_from: usize,
    new_from: usize,
}

/// Whether a window matches at a place, and the lines it writes there.
enum Fit {
    No,
    Yes(Vec<String>, Option<String>),
    /// It matches, but an added line cannot be re-indented.
    Unindentable,
}

impl Window<'_, '_> {
    /// Whether the window's old lines are the file's from `at` under
    /// `step`, and if so the new lines: as the hunk has them after an
    /// exact match; else kept lines as the file has them and added lines
    /// in the file's indentation.
    fn at(&self, lines: &Lines<'_>, shape: &Shape<'_>, at: usize, step: Step) -> Fit {
        let old = self.old;
        if !(0..old.len()).all(|k| same(lines.line(at + k), old[k], step)) {
            return Fit::No;
        }
        if !step.loose_whitespace() {
            let note =
                (step == Step::LeadingBlank).then(|| loose_note(step, None, std::iter::empty(), 0));
            return Fit::Yes(owned(self.new), note);
        }
        let pairs = (0..old.len()).map(|k| (old[k], lines.line(at + k)));
        let Some(indent) = Indent::fit(pairs.clone()) else {
            return Fit::No;
        };
        match self.write(lines, shape, at, &indent) {
            Some(new) => {
                let note = loose_note(step, Some(&indent), pairs, 0);
                Fit::Yes(new, Some(note))
            }
            None => Fit::Unindentable,
        }
    }

    /// The new lines at `at`: kept lines as the file has them, added lines
    /// re-indented by `indent`; `None` when one cannot be.
    fn write(
        &self,
        lines: &Lines<'_>,
        shape: &Shape<'_>,
        at: usize,
        indent: &Indent,
    ) -> Option<Vec<String>> {
        let kept = shape.kept();
        self.new
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let keeps = kept
                    .get(self.new_from + k)
                    .copied()
                    .flatten()
                    .and_then(|o| o.checked_sub(self.old_from))
                    .filter(|&o| o < self.old.len());
                match keeps {
                    Some(o) => Some(lines.line(at + o).to_string()),
                    None => indent.render(l),
                }
            })
            .collect()
    }
}

/// What the report says of a hunk found by a looser step: each way the
/// hunk differed from the file, and what was written instead.
fn loose_note<'a>(
    step: Step,
    indent: Option<&Indent>,
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
    mismatched: usize,
) -> String {
    let mut what = Vec::new();
    if matches!(step, Step::LeadingBlank | Step::LeadingBlankIndent) {
        what.push("its leading blank line dropped, which the file does not have there".to_string());
    }
    if mismatched > 0 {
        what.push(format!(
            "{mismatched} of its kept (context) lines not as in the file (the file's line{} kept)",
            if mismatched == 1 { " was" } else { "s were" },
        ));
    }
    let trailing = |l: &str| l[l.trim_end().len()..].to_string();
    let pairs: Vec<(&str, &str)> = pairs.collect();
    if pairs
        .iter()
        .any(|(p, f)| p.trim() == f.trim() && trailing(p) != trailing(f))
    {
        what.push("trailing whitespace ignored".to_string());
    }
    let mut reindented = false;
    if let Some(indent) = indent {
        if indent.retabbed() {
            what.push("tabs and spaces taken as the same indentation".to_string());
            reindented = true;
        }
        if indent.delta() != 0 {
            let n = indent.delta().abs();
            what.push(format!(
                "every line's indentation shifted by {n} column{}",
                if n == 1 { "" } else { "s" }
            ));
            reindented = true;
        }
    }
    if step == Step::Punctuation {
        what.push("Unicode dashes, quotes and spaces read as ASCII".to_string());
    }
    if what.is_empty() {
        what.push("surrounding whitespace ignored".to_string());
    }
    let mut note = format!("matched only with {}", what.join(", "));
    if step.loose_whitespace() {
        note.push_str("; the lines it keeps were kept as the file has them");
        if reindented {
            note.push_str(", and the new lines were re-indented to the file's indentation");
        }
    }
    note
}

/// aider's and a diff's rules: every match from `cursor`; one is taken,
/// several are told apart by the hunk's line number (moved by `shift`,
/// how far the hunks around it were from theirs) or refused. Where
/// nothing matches exactly: surrounding whitespace ignored with one
/// uniform indentation shift, then without leading blank lines (exactly,
/// then loosely), then with up to two kept lines different.
fn unique(lines: &Lines<'_>, shape: &Shape<'_>, cursor: usize, shift: i64) -> Result<Found, Miss> {
    let hunk = shape.hunk;
    let (old_lines, new_lines) = (&shape.old[..], &shape.new[..]);
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
            note: None,
            next: None,
        });
    }
    let whole = Window {
        old: old_lines,
        new: new_lines,
        old_from: 0,
        new_from: 0,
    };
    let blank_lead = old_lines.iter().take_while(|l| l.trim().is_empty()).count();
    let mut tries: Vec<(Step, Window<'_, '_>)> = vec![(Step::Exact, whole), (Step::Indent, whole)];
    if blank_lead > 0 && blank_lead < old_lines.len() {
        let new_lead = new_lines.iter().take_while(|l| l.trim().is_empty()).count();
        let new_from = new_lead.min(blank_lead);
        let part = Window {
            old: &old_lines[blank_lead..],
            new: &new_lines[new_from..],
            old_from: blank_lead,
            new_from,
        };
        tries.push((Step::LeadingBlank, part));
        tries.push((Step::LeadingBlankIndent, part));
    }
    let mut unindentable = None;
    for (step, w) in &tries {
        let mut matches: Vec<(usize, Vec<String>, Option<String>)> = Vec::new();
        // Places that fit but whose new lines cannot be re-indented are
        // still places: beside another one, which is meant is a guess.
        let mut unwritable = Vec::new();
        if let Some(range) = windows(lines, w.old.len(), Some(cursor)) {
            for i in range {
                match w.at(lines, shape, i, *step) {
                    Fit::No => {}
                    Fit::Yes(new, note) => matches.push((i, new, note)),
                    Fit::Unindentable => unwritable.push(i),
                }
            }
        }
        if let Some(&first) = unwritable.first() {
            unindentable.get_or_insert(first);
            if !matches.is_empty() {
                let mut starts: Vec<usize> =
                    matches.iter().map(|m| m.0).chain(unwritable).collect();
                starts.sort_unstable();
                return Err(Miss::Ambiguous {
                    starts,
                    step: *step,
                });
            }
        }
        if matches.is_empty() {
            continue;
        }
        return choose(matches, hunk.line.map(|l| i64::from(l) - 1 + shift), *step).map(
            |(start, new, note)| Found {
                start,
                len: w.old.len(),
                new,
                step: *step,
                note,
                next: None,
            },
        );
    }
    if let Some(line) = unindentable {
        return Err(Miss::Unindentable { line });
    }
    fuzz(lines, shape, &whole, Some(cursor))
}

/// One match taken from several: the only one, or the one nearest the
/// line `want` (0-based) when one is nearer than all others.
fn choose(
    mut matches: Vec<(usize, Vec<String>, Option<String>)>,
    want: Option<i64>,
    step: Step,
) -> Result<(usize, Vec<String>, Option<String>), Miss> {
    if matches.len() == 1 {
        return Ok(matches.pop().expect("one match"));
    }
    let ambiguous = |matches: &[(usize, Vec<String>, Option<String>)]| Miss::Ambiguous {
        starts: matches.iter().map(|m| m.0).collect(),
        step,
    };
    let Some(want) = want else {
        return Err(ambiguous(&matches));
    };
    let distance = |i: usize| (i as i64 - want).unsigned_abs();
    let best = matches.iter().map(|m| distance(m.0)).min().unwrap_or(0);
    if matches.iter().filter(|m| distance(m.0) == best).count() != 1 {
        return Err(ambiguous(&matches));
    }
    let at = matches
        .iter()
        .position(|m| distance(m.0) == best)
        .expect("a nearest match");
    Ok(matches.swap_remove(at))
}

/// The most kept lines of a hunk that may differ from the file under
/// [`Step::Fuzz`]: one for every three it keeps, at most two (GNU
/// patch's `--fuzz=2` lets two go at each end; here they may be anywhere,
/// but the match must be the only one).
fn fuzz_budget(context: usize) -> usize {
    (context / 3).min(2)
}

/// How alike a kept line must be to the file's line it stands for under
/// [`Step::Fuzz`] (normalised Levenshtein of the trimmed lines): a typo
/// or a dropped character, not another line.
const FUZZ_LIKENESS: f64 = 0.6;

/// [`Step::Fuzz`]: the only place from `from` (the end only, for `None`)
/// where every removed line of `w` matches loosely and at most
/// [`fuzz_budget`] kept lines differ, each still alike.
fn fuzz(
    lines: &Lines<'_>,
    shape: &Shape<'_>,
    w: &Window<'_, '_>,
    from: Option<usize>,
) -> Result<Found, Miss> {
    let context = context_of(shape.kept(), shape.old.len());
    let context: Vec<bool> = context[w.old_from..w.old_from + w.old.len()].to_vec();
    let budget = fuzz_budget(context.iter().filter(|&&c| c).count());
    if budget == 0 {
        return Err(Miss::NotFound { anchor: None });
    }
    let Some(range) = windows(lines, w.old.len(), from) else {
        return Err(Miss::NotFound { anchor: None });
    };
    let mut matches = Vec::new();
    let mut unindentable = None;
    for at in range {
        let mut mismatched = Vec::new();
        let ok = (0..w.old.len()).all(|k| {
            let (p, f) = (w.old[k], lines.line(at + k));
            if same(f, p, Step::Fuzz) {
                return true;
            }
            if !context[k] || mismatched.len() == budget {
                return false;
            }
            mismatched.push(k);
            true
        });
        if !ok
            || mismatched.is_empty()
            || mismatched.len() * 2 >= w.old.len()
            || !mismatched.iter().all(|&k| {
                strsim::normalized_levenshtein(w.old[k].trim(), lines.line(at + k).trim())
                    >= FUZZ_LIKENESS
            })
        {
            continue;
        }
        let pairs = (0..w.old.len())
            .filter(|k| !mismatched.contains(k))
            .map(|k| (w.old[k], lines.line(at + k)));
        let Some(indent) = Indent::fit(pairs.clone()) else {
            continue;
        };
        match w.write(lines, shape, at, &indent) {
            Some(new) => {
                let note = loose_note(Step::Fuzz, Some(&indent), pairs, mismatched.len());
                matches.push((at, new, Some(note)));
            }
            None => {
                unindentable.get_or_insert(at);
            }
        }
        if matches.len() > 1 {
            break;
        }
    }
    match (matches.len(), unindentable) {
        (0, Some(line)) => Err(Miss::Unindentable { line }),
        (0, None) => Err(Miss::NotFound { anchor: None }),
        // A place whose new lines cannot be written is still a place.
        (1, Some(other)) => {
            let mut starts = vec![matches[0].0, other];
            starts.sort_unstable();
            Err(Miss::Ambiguous {
                starts,
                step: Step::Fuzz,
            })
        }
        (1, None) => {
            let (start, new, note) = matches.pop().expect("one match");
            Ok(Found {
                start,
                len: w.old.len(),
                new,
                step: Step::Fuzz,
                note,
                next: None,
            })
        }
        _ => Err(Miss::Ambiguous {
            starts: matches.iter().map(|m| m.0).collect(),
            step: Step::Fuzz,
        }),
    }
}

/// What `--match whitespace` finds for a SEARCH's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loose {
    NotFound,
    /// Several places (1-based lines).
    Ambiguous(Vec<u32>),
    /// It matches at this 1-based line, but a replacement line would go
    /// left of the margin.
    Unindentable(u32),
    /// `len` lines from `start` (0-based) become `new`.
    Found {
        start: usize,
        len: usize,
        new: Vec<String>,
        note: String,
    },
}

/// A SEARCH's pattern and replacement lines located as an EDIT hunk by
/// [`Step::Indent`] alone (`--match whitespace`): surrounding whitespace
/// ignored, one indentation shift, the only place in `norm` that fits;
/// kept lines as the file has them, the others re-indented.
pub fn whitespace_lines(norm: &str, pattern: &[&str], replacement: &[&str]) -> Loose {
    let lines = Lines::new(norm);
    let hunk = Hunk::of_lines(pattern, replacement);
    let shape = Shape::new(&hunk);
    let w = Window {
        old: &shape.old,
        new: &shape.new,
        old_from: 0,
        new_from: 0,
    };
    let Some(range) = windows(&lines, w.old.len(), Some(0)) else {
        return Loose::NotFound;
    };
    let mut matches = Vec::new();
    let mut unindentable = None;
    for at in range {
        match w.at(&lines, &shape, at, Step::Indent) {
            Fit::No => {}
            Fit::Yes(new, note) => matches.push((at, new, note)),
            Fit::Unindentable => {
                unindentable.get_or_insert(at as u32 + 1);
            }
        }
    }
    match (matches.len(), unindentable) {
        (0, _) => unindentable.map_or(Loose::NotFound, Loose::Unindentable),
        // A place whose new lines cannot be written is still a place.
        (1, Some(other)) => {
            let mut lines = vec![matches[0].0 as u32 + 1, other];
            lines.sort_unstable();
            Loose::Ambiguous(lines)
        }
        (1, None) => {
            let (start, new, note) = matches.pop().expect("one match");
            Loose::Found {
                start,
                len: w.old.len(),
                new,
                note: note.unwrap_or_default(),
            }
        }
        _ => Loose::Ambiguous(matches.iter().map(|m| m.0 as u32 + 1).collect()),
    }
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
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
                // Told to end with a line end, the last line gets its own
                // here: a blank last line would otherwise look ended by
                // the line before it, and be lost.
                if !(last && at_unterminated_end) || final_newline == Some(true) {
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
            [
                "hunk 3 (line 4): matched only with trailing whitespace ignored; the lines it keeps were kept as the file has them"
            ]
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
    fn a_blank_last_line_added_where_the_file_had_no_final_line_end_is_written() {
        // Fuzz finding (fuzz target `edit`): git's diff of `a` (no final
        // line end) to `a\n\n` is `-a`, `\ No newline at end of file`,
        // `+a`, `+`. The blank new last line was written without its line
        // end and the final newline then found one already there: the
        // blank line was lost.
        let h = tagged(&[('-', "a"), ('+', "a"), ('+', "")]);
        for locate in [Locate::Unique, Locate::Sequential] {
            let out = edit(
                b"a",
                std::slice::from_ref(&h),
                locate,
                Some(true),
                usize::MAX,
                true,
            )
            .unwrap();
            assert_eq!(out.bytes, b"a\n\n", "{locate:?}");
        }
        let out = edit(
            b"x\r\na",
            &[h],
            Locate::Unique,
            Some(true),
            usize::MAX,
            true,
        )
        .unwrap();
        assert_eq!(out.bytes, b"x\r\na\r\n\r\n");
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

    fn tagged(lines: &[(char, &str)]) -> Hunk {
        let mut h = Hunk::new();
        for (tag, l) in lines {
            h.push(*tag, l);
        }
        h
    }

    #[test]
    fn sequential_drops_a_last_blank_line_only_once_the_whole_hunk_fits_by_no_step() {
        // Fuzz finding (fuzz target `edit`): the patch removes a line with
        // blanks on it, written without them. Tried at the exact step
        // before the whole hunk's looser steps, the hunk without its last
        // (blank) line matched and the edit removed nothing; Codex tries
        // the whole hunk by every step first.
        let h = tagged(&[(' ', "a"), ('-', "")]);
        let (out, notes) = run("a\n  \nb\n", &[h], Locate::Sequential).unwrap();
        assert_eq!(out, "a\nb\n");
        assert!(notes[0].contains("trailing whitespace"), "{notes:?}");
        let (out, _) = run(" ", &[tagged(&[('-', "")])], Locate::Sequential).unwrap();
        assert_eq!(out, "");
        // A hunk of one blank line is never cut to nothing: it would match
        // anywhere and remove nothing.
        let err = run("a\n", &[tagged(&[('-', "")])], Locate::Sequential);
        assert!(matches!(err, Err(EditError::NotFound { .. })), "{err:?}");
    }

    #[test]
    fn an_added_line_indented_with_spaces_stays_so_where_the_hunk_indents_as_the_file() {
        // Fuzz finding (fuzz target `edit`): a hunk found by a loose step
        // whose lines have the file's own indentation (tabs) adds a line
        // indented with spaces (inside a raw string); it was rewritten
        // with tabs, though nothing in the hunk was indented otherwise
        // than the file.
        let file = "func f() {\n\tx := 1\n\ty := 2\n\tz := 3\n}\n";
        let want = "func f() {\n\tx := 1\n\ty := 2\n\tz := `\n      raw\n`\n}\n";
        // One kept line lost a character: the fuzz step.
        let h = tagged(&[
            (' ', "func f() {"),
            (' ', "\tx := 1"),
            (' ', "\ty = 2"),
            ('-', "\tz := 3"),
            ('+', "\tz := `"),
            ('+', "      raw"),
            ('+', "`"),
            (' ', "}"),
        ]);
        for locate in [Locate::Unique, Locate::Sequential] {
            let (out, notes) = run(file, std::slice::from_ref(&h), locate).unwrap();
            assert_eq!(out, want, "{locate:?}");
            assert!(notes[0].contains("1 of its kept"), "{notes:?}");
        }
        // Trailing blanks the file has and the hunk lost.
        let file = "func f() {\n\tx := 1  \n\tz := 3\n}\n";
        let h = tagged(&[
            (' ', "\tx := 1"),
            ('-', "\tz := 3"),
            ('+', "\tz := `"),
            ('+', "      raw"),
            ('+', "`"),
        ]);
        for locate in [Locate::Unique, Locate::Sequential] {
            let (out, _) = run(file, std::slice::from_ref(&h), locate).unwrap();
            assert_eq!(out, "func f() {\n\tx := 1  \n\tz := `\n      raw\n`\n}\n");
        }
    }

    #[test]
    fn a_uniform_shift_re_indents_added_lines_indented_less_than_it() {
        // Issue 25, defect 3: the hunk is 4 columns deeper than the file
        // everywhere, and one new line sits at the hunk's 4 columns (the
        // file's margin).
        let file = "def f():\n    x = 1\n    if x:\n        y()\nz = 0\n";
        let h = hunk(
            &["        x = 1", "        if x:", "            y()"],
            &["        x = 2", "    w = 3"],
        );
        let (out, notes) = run(file, &[h], Locate::Unique).unwrap();
        assert_eq!(out, "def f():\n    x = 2\nw = 3\nz = 0\n");
        assert!(notes[0].contains("shifted by 4 columns"), "{notes:?}");
        // A new line the shift would take left of the margin is refused.
        let h = hunk(&["        x = 1"], &["  w = 3"]);
        assert!(matches!(
            run(file, &[h], Locate::Unique),
            Err(EditError::Unindentable { .. })
        ));
    }

    #[test]
    fn sequential_keeps_the_files_own_kept_lines_after_a_loose_match() {
        // Defect 4: the patch's kept line lost its trailing blanks.
        let h = tagged(&[(' ', "a"), ('-', "b"), ('+', "B")]);
        let (out, notes) = run("a  \nb\nc\n", &[h], Locate::Sequential).unwrap();
        assert_eq!(out, "a  \nB\nc\n");
        assert!(notes[0].contains("trailing whitespace"), "{notes:?}");
    }

    #[test]
    fn sequential_re_indents_added_lines_after_a_shifted_match() {
        // Defect 5: every line of the patch is 4 spaces deeper.
        let h = tagged(&[
            (' ', "    fn f() {"),
            ('-', "        a();"),
            ('+', "        b();"),
            ('+', "    }"),
            ('+', "    fn g() {"),
            (' ', "    }"),
        ]);
        let (out, _) = run("fn f() {\n    a();\n}\n", &[h], Locate::Sequential).unwrap();
        assert_eq!(out, "fn f() {\n    b();\n}\nfn g() {\n}\n");
    }

    #[test]
    fn tabs_written_as_spaces_match_and_new_lines_get_the_files_tabs() {
        let file = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
        let h = tagged(&[
            (' ', "    if x {"),
            ('-', "        y()"),
            ('+', "        z()"),
            ('+', "        if w {"),
            ('+', "            v()"),
            ('+', "        }"),
            (' ', "    }"),
        ]);
        for locate in [Locate::Unique, Locate::Sequential] {
            let (out, notes) = run(file, std::slice::from_ref(&h), locate).unwrap();
            assert_eq!(
                out,
                "func f() {\n\tif x {\n\t\tz()\n\t\tif w {\n\t\t\tv()\n\t\t}\n\t}\n}\n"
            );
            assert!(notes[0].contains("tabs and spaces"), "{notes:?}");
        }
    }

    #[test]
    fn one_wrong_kept_line_is_let_go_where_the_match_is_the_only_one() {
        let file = "a\nb\nlet c = 1;\nd\ne\nf\ng\n";
        // `let c = 1;` lost a character: the file's line is kept.
        let h = tagged(&[
            (' ', "b"),
            (' ', "let c 1;"),
            (' ', "d"),
            ('-', "e"),
            ('+', "E"),
            (' ', "f"),
            (' ', "g"),
        ]);
        for locate in [Locate::Unique, Locate::Sequential] {
            let (out, notes) = run(file, std::slice::from_ref(&h), locate).unwrap();
            assert_eq!(out, "a\nb\nlet c = 1;\nd\nE\nf\ng\n");
            assert!(notes[0].contains("1 of its kept"), "{notes:?}");
        }
        // A removed line that differs is never let go.
        let h = tagged(&[
            (' ', "b"),
            (' ', "let c = 1;"),
            (' ', "d"),
            ('-', "x"),
            (' ', "f"),
        ]);
        assert!(run(file, &[h], Locate::Unique).is_err());
        // A kept line that is another line altogether is not let go.
        let h = tagged(&[
            (' ', "b"),
            (' ', "unrelated()"),
            (' ', "d"),
            ('-', "e"),
            (' ', "f"),
        ]);
        assert!(run(file, &[h], Locate::Unique).is_err());
        // Two places that fit so: refused, both named.
        let file = "a = 1\nb = 2\nk = 3\nq\na = 1\nb = 2\nk = 3\nq\n";
        let h = tagged(&[
            (' ', "a = 1"),
            (' ', "b = 3"),
            (' ', "k = 3"),
            ('-', "q"),
            ('+', "Q"),
        ]);
        let err = run(file, &[h], Locate::Unique).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { ref lines, step: Step::Fuzz, .. } if lines == &[1, 5]),
            "{err:?}"
        );
    }

    #[test]
    fn a_resent_addition_is_refused_as_applied_already() {
        // Defect 9: aider's REPLACE = SEARCH + new lines, sent twice.
        let h = hunk(&["a", "b"], &["a", "b", "c"]);
        let once = run("a\nb\nd\n", std::slice::from_ref(&h), Locate::Unique).unwrap();
        assert_eq!(once.0, "a\nb\nc\nd\n");
        let err = run(&once.0, &[h], Locate::Unique).unwrap_err();
        assert_eq!(
            err,
            EditError::AlreadyApplied {
                hunk: 1,
                of: 1,
                line: 1
            }
        );
        // New lines before the kept ones, by apply_patch.
        let h = tagged(&[('+', "use x;"), (' ', "fn a() {}")]);
        let err = run(
            "use x;\nfn a() {}\n",
            std::slice::from_ref(&h),
            Locate::Sequential,
        );
        assert!(
            matches!(err, Err(EditError::AlreadyApplied { line: 1, .. })),
            "{err:?}"
        );
        // A diff hunk of added lines only (`diff -U0`).
        let mut add = hunk(&[], &["X"]);
        add.line = Some(1);
        let err = run("a\nX\nb\n", &[add], Locate::Unique);
        assert!(
            matches!(err, Err(EditError::AlreadyApplied { .. })),
            "{err:?}"
        );
        // A blank line added next to a blank line is a real edit.
        let h = hunk(&["a"], &["a", ""]);
        assert_eq!(
            run("a\n\nb\n", &[h], Locate::Unique).unwrap().0,
            "a\n\n\nb\n"
        );
    }

    #[test]
    fn numbers_all_off_by_one_amount_choose_the_copy_a_later_hunk_shows() {
        // Two copies of `x`; the numbers are 3 too high, which puts the
        // first hunk's number nearer the second copy. The second hunk
        // matches once and shows the shift.
        let file = "x\n1\n2\nx\n3\n4\nend\n";
        let mut first = hunk(&["x"], &["X"]);
        first.line = Some(1 + 3);
        let mut second = hunk(&["end"], &["END"]);
        second.line = Some(7 + 3);
        let (out, _) = run(file, &[first, second], Locate::Unique).unwrap();
        assert_eq!(out, "X\n1\n2\nx\n3\n4\nEND\n");
    }

    #[test]
    fn tabs_shown_as_spaces_by_one_hunk_are_tabs_in_the_others() {
        // Hunk 1's lines are not indented: nothing in it says the file
        // indents with tabs; hunk 2 shows the reply writes a tab as 4
        // spaces.
        let file = "package a\n\nfunc init() {\n}\n\nfunc f() {\n\tx()\n}\n";
        let one = tagged(&[
            (' ', "package a"),
            (' ', ""),
            ('-', "func init() {"),
            ('+', "func init() {"),
            ('+', "    y()"),
        ]);
        let two = tagged(&[(' ', "func f() {"), ('-', "    x()"), ('+', "    z()")]);
        let (out, notes) = run(file, &[one.clone(), two], Locate::Unique).unwrap();
        assert_eq!(
            out,
            "package a\n\nfunc init() {\n\ty()\n}\n\nfunc f() {\n\tz()\n}\n"
        );
        assert!(notes[0].contains("hunk 2 showed"), "{notes:?}");
        // Alone, hunk 1 is written as the reply has it.
        let (out, _) = run(file, &[one], Locate::Unique).unwrap();
        assert!(out.contains("\n    y()\n"), "{out}");
    }

    #[test]
    fn spaces_added_to_a_tab_file_with_nothing_to_show_the_width_are_refused() {
        let file = "package a\n\nfunc f() {\n\tx()\n\ty()\n\tz()\n}\n\nfunc init() {\n}\n";
        let h = tagged(&[(' ', "func init() {"), ('+', "    w()"), (' ', "}")]);
        let err = run(file, &[h], Locate::Unique).unwrap_err();
        assert!(
            matches!(
                err,
                EditError::SpacesForTabs {
                    hunk: 1,
                    line: 9,
                    ..
                }
            ),
            "{err:?}"
        );
        // Fuzz finding (fuzz target `edit`): an exact diff was refused
        // although its other added lines are indented with tabs, which
        // shows this reply writes the file's tabs as tabs.
        let h = tagged(&[
            (' ', "func init() {"),
            ('+', "\tw()"),
            ('+', "    // aligned"),
            (' ', "}"),
        ]);
        let (out, _) = run(file, &[h], Locate::Unique).unwrap();
        assert!(out.contains("{\n\tw()\n    // aligned\n}"), "{out}");
        // With tabs it lands; in a file indented with spaces too.
        let h = tagged(&[(' ', "func init() {"), ('+', "\tw()"), (' ', "}")]);
        assert!(run(file, &[h], Locate::Unique).is_ok());
        let spaces = file.replace("\tx", "    x");
        let h = tagged(&[(' ', "func init() {"), ('+', "    w()"), (' ', "}")]);
        assert!(run(&spaces, &[h], Locate::Unique).is_ok());
    }

    #[test]
    fn a_place_whose_new_lines_cannot_be_re_indented_still_counts_as_a_place() {
        // Both places fit loosely; at the first (indented 2) the shift
        // would take the new line left of the margin, at the second
        // (indented 8) it would not. Which is meant is a guess.
        let file = "  a = 1\n  b = 2\nx\n        a = 1\n        b = 2\n";
        let h = hunk(&["    a = 1", "    b = 2"], &["    a = 1", " c = 3"]);
        let err = run(file, &[h], Locate::Unique).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { ref lines, .. } if lines == &[1, 4]),
            "{err:?}"
        );
    }
}
