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
//! own line end.
//!
//! Each hunk is found as `Locate::Unique` finds one, without the looser
//! steps (a diff that names its bytes means them): its old lines after
//! the hunk before, once; several matches are told apart by the hunk's
//! line number, moved by how far the hunks before were from theirs.

use crate::plan::Hunk;

use super::edit::{EditError, Edited, Step};
use super::text::is_binary;

/// Whether any hunk gives a line end explicitly: a line ending in `\r`
/// (a `\r` inside a line is text, as it always was).
pub fn gives_line_ends(hunks: &[Hunk]) -> bool {
    hunks.iter().any(|h| h.lines.contains("\r\n"))
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
    let mut shift: i64 = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        let (old, new) = (hunk.old_lines(), hunk.new_lines());
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
        if let Some(l) = hunk.line
            && !old.is_empty()
        {
            shift = start as i64 + 1 - i64::from(l);
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
}
