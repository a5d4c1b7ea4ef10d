//! EDIT of hunks that give their line ends: a unified diff as git prints
//! it for a file with CRLF (or mixed) line ends carries each line's `\r`.
//!
//! Owns the rule for such hunks (doc/syntax-diff.md): the file is read as
//! lines ended by `\n` only, so a `\r` is part of its line; the hunk's
//! old lines must match those bytes exactly (a CRLF line is not an LF
//! line here: the diff said which it is), and its new lines are written
//! with exactly the ends it gives. That is what lets a diff change only
//! line ends. Hunks without any `\r` (a diff a model wrote with LF) go
//! through `edit`, which matches LF-normalised text and writes the file's
//! own line end — except in a file that has `\r` where hunks of the
//! diff and aider formats match its bytes exactly: a git diff of an LF
//! region of a CRLF (or mixed) file has no `\r`, and its new lines are
//! LF like the lines around them, not the file's most common end.
//!
//! Each hunk is found as `Locate::Unique` finds one, without the looser
//! steps (a diff that names its bytes means them): its old lines after
//! the hunk before, once; several matches are told apart by the hunk's
//! line number, moved by how far the hunks before were from theirs.

use crate::plan::{Hunk, Locate};

use super::edit::{EditError, Edited, Step};
use super::text::is_binary;

/// Whether any hunk gives a line end explicitly: a line ending in `\r`
/// (a `\r` inside a line is text, as it always was).
pub fn gives_line_ends(hunks: &[Hunk]) -> bool {
    hunks.iter().any(|h| h.lines.contains("\r\n"))
}

/// `hunks` without their `\r`, when every line of every hunk ends in one
/// and every line of `file` ends in CRLF (no lone `\r`, no lone `\n`,
/// bar an unterminated last line): then the ends the hunks give are the
/// file's own, and `edit` (which writes the file's line end) may find
/// them by its looser steps. `None` otherwise.
pub fn without_uniform_crlf(file: &[u8], hunks: &[Hunk]) -> Option<Vec<Hunk>> {
    let every_line_crlf = hunks
        .iter()
        .all(|h| h.lines.split_terminator('\n').all(|l| l.ends_with('\r')));
    if !every_line_crlf || !uniform_crlf(file) {
        return None;
    }
    Some(
        hunks
            .iter()
            .map(|h| Hunk {
                lines: h.lines.replace("\r\n", "\n"),
                ..h.clone()
            })
            .collect(),
    )
}

/// Whether every line end of `file` is CRLF (and there is one at least).
fn uniform_crlf(file: &[u8]) -> bool {
    let mut crlf = 0;
    for (i, &b) in file.iter().enumerate() {
        match b {
            b'\n' if i > 0 && file[i - 1] == b'\r' => crlf += 1,
            b'\n' => return false,
            b'\r' if file.get(i + 1) != Some(&b'\n') => return false,
            _ => {}
        }
    }
    crlf > 0
}

/// The EDIT of `file` when it is made byte for byte: always for hunks
/// that give their line ends; for a file with `\r` whose hunks (found as
/// `Locate::Unique` finds them, without an anchor or an end-of-file
/// mark) all match its bytes exactly, that result. `None`: `edit`
/// decides, with its looser steps.
pub fn exact_edit(
    file: &[u8],
    hunks: &[Hunk],
    locate: Locate,
    final_newline: Option<bool>,
    max_size: usize,
) -> Option<Result<Edited, EditError>> {
    if gives_line_ends(hunks) {
        return Some(edit(file, hunks, final_newline, max_size));
    }
    let plain = hunks.iter().all(|h| h.anchor.is_none() && !h.at_end);
    if locate != Locate::Unique || !plain || memchr::memchr(b'\r', file).is_none() {
        return None;
    }
    edit(file, hunks, final_newline, max_size).ok().map(Ok)
}

/// Applies `hunks` to `file` byte for byte; `final_newline` as for
/// [`super::edit::edit`].
pub fn edit(
    file: &[u8],
    hunks: &[Hunk],
    final_newline: Option<bool>,
    max_size: usize,
) -> Result<Edited, EditError> {
    if is_binary(file) {
        return Err(EditError::Binary);
    }
    let ends_open = !file.is_empty() && !file.ends_with(b"\n");
    let body = file.strip_suffix(b"\n").unwrap_or(file);
    let lines: Vec<&[u8]> = if file.is_empty() {
        Vec::new()
    } else {
        body.split(|&b| b == b'\n').collect()
    };
    // (start, old length, new lines) of each hunk, in order.
    let mut found: Vec<(usize, usize, Vec<&str>)> = Vec::with_capacity(hunks.len());
    let mut cursor = 0;
    let mut shown: Option<i64> = None;
    for (i, hunk) in hunks.iter().enumerate() {
        let (old, new) = (hunk.old_lines(), hunk.new_lines());
        // Numbers all off by one amount: the shift a later hunk that
        // matches once shows, until a hunk here has shown it (as edit()).
        let shift = shown
            .or_else(|| later_shift(&lines, &hunks[i + 1..], cursor))
            .unwrap_or(0);
        let wanted = hunk.line.map(|l| {
            // `@@ -l,0` adds after line l; otherwise line l is the first.
            let first = if old.is_empty() {
                i64::from(l)
            } else {
                i64::from(l) - 1
            };
            (first + shift).max(0) as usize
        });
        let start = if old.is_empty() {
            match wanted {
                Some(at) if at >= cursor && at <= lines.len() => at,
                _ => {
                    return Err(EditError::NotFound {
                        hunk: i + 1,
                        of: hunks.len(),
                        anchor: None,
                        feedback: None,
                    });
                }
            }
        } else {
            let starts: Vec<usize> = (cursor..=lines.len().saturating_sub(old.len()))
                .filter(|&s| {
                    s + old.len() <= lines.len()
                        && old
                            .iter()
                            .zip(&lines[s..s + old.len()])
                            .all(|(o, l)| o.as_bytes() == *l)
                })
                .collect();
            match (starts.as_slice(), wanted) {
                ([], _) => {
                    return Err(EditError::NotFound {
                        hunk: i + 1,
                        of: hunks.len(),
                        anchor: None,
                        feedback: None,
                    });
                }
                ([one], _) => *one,
                (many, Some(at)) => {
                    let distance = |s: &usize| s.abs_diff(at);
                    let best = many.iter().map(distance).min().unwrap_or(0);
                    let nearest: Vec<usize> = many
                        .iter()
                        .copied()
                        .filter(|s| distance(s) == best)
                        .collect();
                    if nearest.len() > 1 {
                        return Err(ambiguous(i, hunks.len(), &nearest));
                    }
                    nearest[0]
                }
                (many, None) => return Err(ambiguous(i, hunks.len(), many)),
            }
        };
        if let Some(line) = already_applied(&lines, hunk, start, &new) {
            return Err(EditError::AlreadyApplied {
                hunk: i + 1,
                of: hunks.len(),
                line: line as u32 + 1,
            });
        }
        if let Some(l) = hunk.line
            && !old.is_empty()
        {
            shown = Some(start as i64 + 1 - i64::from(l));
        }
        cursor = start + old.len();
        found.push((start, old.len(), new));
    }
    let mut out: Vec<u8> = Vec::with_capacity(file.len() + 64);
    let mut at = 0;
    let push = |line: &[u8], out: &mut Vec<u8>| {
        out.extend_from_slice(line);
        out.push(b'\n');
    };
    for (start, len, new) in &found {
        for line in &lines[at..*start] {
            push(line, &mut out);
        }
        for line in new {
            push(line.as_bytes(), &mut out);
        }
        at = start + len;
    }
    for line in &lines[at..] {
        push(line, &mut out);
    }
    // Every line got a `\n`; the file's last one keeps or loses it as
    // the diff says, or as it was.
    let open = match final_newline {
        Some(eol) => !eol,
        None => ends_open,
    };
    if open && out.last() == Some(&b'\n') {
        out.pop();
    }
    if out.len() > max_size {
        return Err(EditError::TooLarge {
            size: out.len(),
            max: max_size,
        });
    }
    Ok(Edited {
        bytes: out,
        lines: found.iter().map(|f| f.0 as u32 + 1).collect(),
        notes: Vec::new(),
    })
}

/// Where the lines a hunk that only adds lines (no `-` line, an added
/// line not blank) adds already stand with its kept lines around them, as
/// `edit`'s rule for a re-sent addition (doc/matching.md): the 0-based
/// line of that text, if so.
fn already_applied(lines: &[&[u8]], hunk: &Hunk, start: usize, new: &[&str]) -> Option<usize> {
    let tags = || {
        hunk.lines
            .split_terminator('\n')
            .filter_map(|l| l.chars().next())
    };
    let adds_text = hunk
        .lines
        .split_terminator('\n')
        .any(|l| l.starts_with('+') && !l[1..].trim().is_empty());
    if tags().any(|t| t == '-') || !adds_text {
        return None;
    }
    // The added lines before the first kept one stand before the match.
    let before = tags().take_while(|&t| t == '+').count();
    let kept = tags().any(|t| t == ' ');
    let at = if kept {
        start.checked_sub(before)?
    } else {
        start
    };
    let window = lines.get(at..at + new.len())?;
    window
        .iter()
        .zip(new)
        .all(|(l, n)| *l == n.as_bytes())
        .then_some(at)
}

/// The shift (found line minus numbered line) of the first of `later`
/// that has a line number and whose old lines match once from `cursor`.
fn later_shift(lines: &[&[u8]], later: &[Hunk], cursor: usize) -> Option<i64> {
    later.iter().find_map(|hunk| {
        let line = hunk.line?;
        let old = hunk.old_lines();
        if old.is_empty() || old.len() > lines.len() {
            return None;
        }
        let mut at = (cursor..=lines.len() - old.len()).filter(|&s| {
            old.iter()
                .zip(&lines[s..s + old.len()])
                .all(|(o, l)| o.as_bytes() == *l)
        });
        let first = at.next()?;
        at.next()
            .is_none()
            .then(|| first as i64 + 1 - i64::from(line))
    })
}

fn ambiguous(hunk: usize, of: usize, starts: &[usize]) -> EditError {
    EditError::Ambiguous {
        hunk: hunk + 1,
        of,
        lines: starts.iter().map(|&s| s as u32 + 1).collect(),
        step: Step::Exact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(lines: &str, line: Option<u32>) -> Hunk {
        Hunk {
            lines: lines.to_string(),
            line,
            ..Hunk::new()
        }
    }

    #[test]
    fn line_ends_change_as_the_hunk_gives_them() {
        let to_lf = hunk("-a\r\n-b\r\n+a\n+b\n", Some(1));
        assert!(gives_line_ends(std::slice::from_ref(&to_lf)));
        assert!(!gives_line_ends(&[hunk("-a\rb\n+c\n", None)]));
        let done = edit(b"a\r\nb\r\n", &[to_lf], None, 1 << 20).unwrap();
        assert_eq!(done.bytes, b"a\nb\n");
        let add_cr = hunk(" x\n-a\n+a\r\n", Some(1));
        let done = edit(b"x\na\ny", &[add_cr], None, 1 << 20).unwrap();
        assert_eq!(done.bytes, b"x\na\r\ny");
    }

    #[test]
    fn an_lf_hunk_keeps_the_lf_lines_of_a_crlf_file_lf() {
        let h = hunk(" a\n-b\n+c\n", Some(2));
        let done = exact_edit(
            b"x\r\na\nb\ny\r\n",
            std::slice::from_ref(&h),
            Locate::Unique,
            None,
            1 << 20,
        );
        assert_eq!(done.unwrap().unwrap().bytes, b"x\r\na\nc\ny\r\n");
        // Not a match byte for byte: `edit` decides (and writes CRLF).
        assert!(
            exact_edit(
                b"a\r\nb\r\n",
                std::slice::from_ref(&h),
                Locate::Unique,
                None,
                1 << 20
            )
            .is_none()
        );
        // apply_patch's rules are its own.
        assert!(exact_edit(b"a\nb\r\n", &[h], Locate::Sequential, None, 1 << 20).is_none());
    }

    /// A line's text in a generated file.
    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy as _;
        proptest::sample::select(vec!["", "a", "b", "x y", "\tz"]).prop_map(str::to_string)
    }

    /// `texts` as lines ending in CRLF, but for those in `lf` (a run of
    /// LF lines in a CRLF file, or the other way round) and every
    /// `odd`-th one.
    fn ends(texts: Vec<String>, lf: std::ops::Range<usize>, odd: usize) -> Vec<(String, bool)> {
        texts
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t, !(lf.contains(&i) || (odd > 0 && i % odd == 0))))
            .collect()
    }

    fn bytes_of(lines: &[(String, bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (t, crlf) in lines {
            out.extend_from_slice(t.as_bytes());
            out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
        }
        out
    }

    proptest::proptest! {
        /// A diff as git prints it (three context lines, each line with
        /// its own end) of one change to a file of mixed line ends gives
        /// exactly the file after the change, through the diff reader and
        /// the same choice between this module and `edit` as exec makes.
        #[test]
        fn a_git_diff_of_mixed_line_ends_gives_the_file_after(
            texts in proptest::collection::vec(text(), 0..24),
            lf in (0usize..24, 0usize..10),
            odd in 0usize..5,
            at in 0usize..24,
            removed in 0usize..4,
            added in proptest::collection::vec(text(), 0..4),
            added_crlf in proptest::bool::ANY,
        ) {
            let before = ends(texts, lf.0..lf.0 + lf.1, odd);
            let added: Vec<(String, bool)> =
                added.into_iter().map(|t| (t, added_crlf)).collect();
            let at = at.min(before.len());
            let removed = removed.min(before.len() - at);
            proptest::prop_assume!(removed + added.len() > 0);
            let mut after = before[..at].to_vec();
            after.extend(added.iter().cloned());
            after.extend(before[at + removed..].iter().cloned());
            let from = at.saturating_sub(3);
            let to = (at + removed + 3).min(before.len());
            let old_count = to - from;
            let new_count = old_count - removed + added.len();
            let start = |count: usize| if count == 0 { from } else { from + 1 };
            let mut diff = format!(
                "--- a/f\n+++ b/f\n@@ -{},{old_count} +{},{new_count} @@\n",
                start(old_count),
                start(new_count)
            );
            let mut push = |tag: char, (t, crlf): &(String, bool)| {
                diff.push(tag);
                diff.push_str(t);
                diff.push_str(if *crlf { "\r\n" } else { "\n" });
            };
            before[from..at].iter().for_each(|l| push(' ', l));
            before[at..at + removed].iter().for_each(|l| push('-', l));
            added.iter().for_each(|l| push('+', l));
            before[at + removed..to].iter().for_each(|l| push(' ', l));
            let parsed = crate::syntax::diff::parse(&diff);
            let Some(crate::plan::Action::Edit { hunks, final_newline, .. }) =
                &parsed.drafts[0].action
            else {
                panic!("{diff:?}: {:?}", parsed.drafts);
            };
            let file = bytes_of(&before);
            let done = exact_edit(&file, hunks, Locate::Unique, *final_newline, 1 << 20)
                .unwrap_or_else(|| {
                    super::super::edit::edit(&file, hunks, Locate::Unique, *final_newline, 1 << 20, true)
                });
            proptest::prop_assert_eq!(done.map(|d| d.bytes), Ok(bytes_of(&after)), "{:?}", diff);
        }
    }

    #[test]
    fn an_lf_line_does_not_match_a_crlf_line() {
        let h = hunk(" a\n-b\r\n+c\r\n", Some(1));
        assert!(matches!(
            edit(b"a\r\nb\r\n", &[h], None, 1 << 20),
            Err(EditError::NotFound { .. })
        ));
    }

    #[test]
    fn the_line_number_chooses_and_the_final_newline_follows_the_diff() {
        let h = hunk(" k\r\n-v\r\n+w\r\n", Some(3));
        let done = edit(b"k\r\nv\r\nk\r\nv\r\n", &[h], Some(false), 1 << 20).unwrap();
        assert_eq!(done.bytes, b"k\r\nv\r\nk\r\nw\r");
        assert_eq!(done.lines, [3]);
        let h = hunk(" k\r\n-v\r\n+w\r\n", None);
        assert!(matches!(
            edit(b"k\r\nv\r\nk\r\nv\r\n", &[h], None, 1 << 20),
            Err(EditError::Ambiguous { .. })
        ));
    }

    #[test]
    fn a_resent_addition_to_a_crlf_file_is_refused_as_applied_already() {
        let h = hunk(" a\r\n b\r\n+c\r\n", Some(1));
        let once = edit(
            b"a\r\nb\r\nd\r\n",
            std::slice::from_ref(&h),
            None,
            usize::MAX,
        )
        .unwrap();
        assert_eq!(once.bytes, b"a\r\nb\r\nc\r\nd\r\n");
        let again = edit(&once.bytes, &[h], None, usize::MAX);
        assert!(
            matches!(again, Err(EditError::AlreadyApplied { line: 1, .. })),
            "{again:?}"
        );
    }

    #[test]
    fn crlf_hunks_of_a_crlf_file_lose_their_cr_for_the_looser_steps() {
        let h = hunk(" a\r\n-b\r\n+c\r\n", Some(1));
        let stripped = without_uniform_crlf(b"a\r\nb\r\n", std::slice::from_ref(&h)).unwrap();
        assert_eq!(stripped[0].lines, " a\n-b\n+c\n");
        // A file with an LF line, or a hunk line without its CR: the ends
        // say something, and stay.
        assert!(without_uniform_crlf(b"a\r\nb\n", std::slice::from_ref(&h)).is_none());
        let mixed = hunk(" a\r\n-b\n+c\r\n", Some(1));
        assert!(without_uniform_crlf(b"a\r\nb\r\n", &[mixed]).is_none());
    }

    #[test]
    fn numbers_all_off_by_one_amount_choose_the_copy_a_later_hunk_shows() {
        // Two copies of `x`; every number 3 too high, which puts the first
        // hunk's nearer the second copy.
        let file = b"x\r\n1\r\n2\r\nx\r\n3\r\n4\r\nend\r\n";
        let first = hunk("-x\r\n+X\r\n", Some(4));
        let second = hunk("-end\r\n+END\r\n", Some(10));
        let out = edit(file, &[first, second], None, usize::MAX).unwrap();
        assert_eq!(out.bytes, b"X\r\n1\r\n2\r\nx\r\n3\r\n4\r\nEND\r\n");
    }
}
