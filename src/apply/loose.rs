//! What an EDIT's looser steps need beyond equal lines: which of a hunk's
//! new lines are kept old lines, how the hunk's indentation maps onto the
//! file's, and the new lines written in the file's own style.
//!
//! Owns the rules that make a loose match safe to write: a kept line is
//! written as the file has it (never as the reply spelled it), and an
//! added line is re-indented by the mapping the matched lines prove — one
//! uniform shift in columns, tabs or spaces as the file indents there. A
//! hunk whose lines do not agree on one mapping is no match: a guess at
//! the indentation of new code is a wrong result, not a looser one.

use crate::plan::Hunk;

/// The tab widths tried, in order, when the hunk and the file indent with
/// different characters: 4 is what models write for a tab, 8 git's and
/// most terminals', 2 the rest.
const TAB_WIDTHS: [usize; 3] = [4, 8, 2];

/// Above this many lines on both sides the kept lines of a hunk without
/// context tags are its common first and last lines only (a diff of two
/// long unrelated texts is quadratic).
const ALIGN_LIMIT: usize = 4000;

/// For each new line of a hunk, the old line it keeps, if any: from the
/// hunk's tags when it has kept (`' '`) lines, else (aider's SEARCH and
/// REPLACE, a JSON edit) from a diff of the two texts.
pub fn kept(hunk: &Hunk, old: &[&str], new: &[&str]) -> Vec<Option<usize>> {
    let mut kept = vec![None; new.len()];
    if hunk.lines.lines().any(|l| l.starts_with(' ')) {
        let (mut o, mut n) = (0, 0);
        for l in hunk.lines.split_terminator('\n') {
            match l.chars().next() {
                Some(' ') => {
                    if n < kept.len() {
                        kept[n] = Some(o);
                    }
                    o += 1;
                    n += 1;
                }
                Some('-') => o += 1,
                Some('+') => n += 1,
                _ => {}
            }
        }
        return kept;
    }
    if old.len() + new.len() <= ALIGN_LIMIT {
        let ops = similar::capture_diff_slices(similar::Algorithm::Myers, old, new);
        for op in ops {
            if let similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    kept[new_index + k] = Some(old_index + k);
                }
            }
        }
        return kept;
    }
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    for (k, slot) in kept.iter_mut().enumerate().take(prefix) {
        *slot = Some(k);
    }
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    for k in 0..suffix {
        kept[new.len() - 1 - k] = Some(old.len() - 1 - k);
    }
    kept
}

/// For each old line, whether a new line keeps it (context).
pub fn context_of(kept: &[Option<usize>], old_len: usize) -> Vec<bool> {
    let mut context = vec![false; old_len];
    for &o in kept.iter().flatten() {
        if o < old_len {
            context[o] = true;
        }
    }
    context
}

/// A line's indentation: its leading spaces and tabs.
pub fn lead(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether a line has text and is indented.
pub fn indented(line: &str) -> bool {
    !line.trim().is_empty() && !lead(line).is_empty()
}

/// Whether a line has text and is indented with spaces only.
pub fn spaced(line: &str) -> bool {
    indented(line) && !lead(line).contains('\t')
}

/// Whether the indented lines among `lines`, three at least, all start
/// with a tab: a file indented with tabs alone.
pub fn tabs_only<'a>(lines: impl Iterator<Item = &'a str>) -> bool {
    let mut count = 0;
    for l in lines.filter(|l| indented(l)) {
        if !l.starts_with('\t') {
            return false;
        }
        count += 1;
    }
    count >= 3
}

/// The column a run of spaces and tabs reaches, with tab stops every
/// `width` columns.
fn columns(ws: &str, width: usize) -> usize {
    ws.chars().fold(0, |col, c| {
        if c == '\t' {
            (col / width + 1) * width
        } else {
            col + 1
        }
    })
}

/// How a hunk's indentation maps onto the file's where it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indent {
    width: usize,
    /// File columns minus hunk columns, the same on every matched line.
    delta: i64,
    /// Whether the hunk's blank lines with blanks on them are shifted
    /// with the rest.
    blank_shift: bool,
    /// Whether the file's matched lines indent with tabs (`None`: none of
    /// them is indented, so nothing says).
    file_tabs: Option<bool>,
    /// The hunk's indentations as the file spells them there.
    seen: Vec<(String, String)>,
}

impl Indent {
    /// The mapping the pairs (hunk line, file line) agree on, or `None`
    /// when they do not agree on one shift. Blank lines say nothing.
    pub fn fit<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Option<Indent> {
        let pairs_blank = pairs.clone().filter(|(p, f)| {
            p.trim().is_empty() && f.trim().is_empty() && !(p.is_empty() && f.is_empty())
        });
        let nonblank = pairs.filter(|(p, f)| !p.trim().is_empty() && !f.trim().is_empty());
        'width: for width in TAB_WIDTHS {
            let mut delta = None;
            let mut seen: Vec<(String, String)> = Vec::new();
            let mut file_tabs = None;
            let mut mixed = false;
            for (p, f) in nonblank.clone() {
                let (pl, fl) = (lead(p), lead(f));
                let d = columns(fl, width) as i64 - columns(pl, width) as i64;
                if *delta.get_or_insert(d) != d {
                    continue 'width;
                }
                match seen.iter().find(|(sp, _)| sp == pl) {
                    // One hunk indentation spelled two ways in the file:
                    // which one a new line gets would be a guess.
                    Some((_, sf)) if sf != fl => continue 'width,
                    Some(_) => {}
                    None => seen.push((pl.to_string(), fl.to_string())),
                }
                if !fl.is_empty() {
                    let tabs = fl.contains('\t');
                    mixed |= file_tabs.is_some_and(|t| t != tabs);
                    file_tabs = Some(tabs);
                }
            }
            let delta = delta.unwrap_or(0);
            // Blank lines with blanks on them are shifted too only where
            // the hunk's own show it (a reply that indents its lines
            // seldom indents its blank ones).
            let blank_shift = delta != 0
                && pairs_blank.clone().any(|(p, f)| {
                    p != f && columns(f, width) as i64 - columns(p, width) as i64 == delta
                });
            return Some(Indent {
                width,
                delta,
                blank_shift,
                // Mixed in the file: what the hunk writes is kept where
                // the mapping does not say.
                file_tabs: if mixed { None } else { file_tabs },
                seen,
            });
        }
        None
    }

    /// Whether the mapping changes nothing.
    pub fn is_identity(&self) -> bool {
        self.seen.iter().all(|(p, f)| p == f)
    }

    /// The shift in columns (file minus hunk).
    pub fn delta(&self) -> i64 {
        self.delta
    }

    /// Whether the hunk indents with other characters than the file.
    pub fn retabbed(&self) -> bool {
        self.seen
            .iter()
            .any(|(p, f)| p.contains('\t') != f.contains('\t') && !p.is_empty() && !f.is_empty())
    }

    /// The tab width, when the hunk's lines indent with spaces only where
    /// the file's indent with tabs only.
    pub fn tabs_for_spaces(&self) -> Option<usize> {
        let indented: Vec<&(String, String)> = self
            .seen
            .iter()
            .filter(|(p, f)| !p.is_empty() || !f.is_empty())
            .collect();
        (self.file_tabs == Some(true)
            && !indented.is_empty()
            && indented
                .iter()
                .all(|(p, f)| !p.contains('\t') && f.starts_with('\t')))
        .then_some(self.width)
    }

    /// An added line in the file's indentation, or `None` when the shift
    /// would take it left of the margin.
    pub fn render(&self, line: &str) -> Option<String> {
        let ws = lead(line);
        let rest = &line[ws.len()..];
        let col = columns(ws, self.width) as i64 + self.delta;
        if rest.is_empty() {
            // A blank line with blanks on it: as written, unless the
            // hunk's blank lines show they were shifted too, or the
            // mapping only spells the same columns otherwise (tabs).
            return Some(if self.blank_shift && col >= 0 {
                self.spaces(col as usize, ws)
            } else if self.delta == 0
                && let Some((_, f)) = self.seen.iter().find(|(p, _)| p == ws)
            {
                f.clone()
            } else {
                line.to_string()
            });
        }
        if let Some((_, f)) = self.seen.iter().find(|(p, _)| p == ws) {
            return Some(format!("{f}{rest}"));
        }
        if col < 0 {
            return None;
        }
        let hunk_tabs = ws.contains('\t');
        // Matched lines indented just as the file has them show the reply
        // writes the file's indentation: a line it indents otherwise (with
        // spaces in a tab file) it means so.
        if self.delta == 0
            && (self.is_identity()
                || self
                    .file_tabs
                    .is_none_or(|t| t == hunk_tabs || ws.is_empty()))
        {
            return Some(line.to_string());
        }
        Some(format!("{}{rest}", self.spaces(col as usize, ws)))
    }

    /// `col` columns of indentation as the file writes them (as `ws` does
    /// when the file's matched lines do not say).
    fn spaces(&self, col: usize, ws: &str) -> String {
        let tabs = self.file_tabs.unwrap_or(ws.contains('\t'));
        if tabs {
            let mut s = "\t".repeat(col / self.width);
            s.push_str(&" ".repeat(col % self.width));
            s
        } else {
            " ".repeat(col)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_lines_come_from_tags_or_from_a_diff_of_the_two_texts() {
        let mut h = Hunk::new();
        h.push(' ', "a");
        h.push('-', "b");
        h.push('+', "c");
        h.push(' ', "d");
        assert_eq!(
            kept(&h, &["a", "b", "d"], &["a", "c", "d"]),
            [Some(0), None, Some(2)]
        );
        let h = Hunk::of_lines(&["a", "b", "d"], &["a", "c", "d", "e"]);
        assert_eq!(
            kept(&h, &["a", "b", "d"], &["a", "c", "d", "e"]),
            [Some(0), None, Some(2), None]
        );
    }

    #[test]
    fn a_uniform_shift_re_indents_every_added_line_even_below_the_hunk_margin() {
        // The hunk is 4 columns deeper than the file everywhere.
        let pairs = [("        a", "    a"), ("            b", "        b")];
        let i = Indent::fit(pairs.iter().copied()).unwrap();
        assert_eq!(i.delta(), -4);
        assert_eq!(i.render("    c").as_deref(), Some("c"));
        assert_eq!(
            i.render("                d").as_deref(),
            Some("            d")
        );
        assert_eq!(i.render("  e"), None);
        // Blank lines are not shifted unless the hunk's show it, even
        // where a line of text had their blanks.
        assert_eq!(i.render("    ").as_deref(), Some("    "));
        assert_eq!(i.render("        ").as_deref(), Some("        "));
        let pairs = [("        a", "    a"), ("      ", "  ")];
        let i = Indent::fit(pairs.iter().copied()).unwrap();
        assert_eq!(i.render("      ").as_deref(), Some("  "));
    }

    #[test]
    fn spaces_for_tabs_map_back_to_tabs() {
        let pairs = [("    a", "\ta"), ("        b", "\t\tb"), ("c", "c")];
        let i = Indent::fit(pairs.iter().copied()).unwrap();
        assert!(i.retabbed());
        assert_eq!(i.render("            x").as_deref(), Some("\t\t\tx"));
        assert_eq!(i.render("    y").as_deref(), Some("\ty"));
        assert_eq!(i.render("    ").as_deref(), Some("\t"));
        // Eight spaces a tab: width 4 disagrees, 8 fits.
        let pairs = [("        a", "\ta"), ("                b", "\t\tb")];
        let i = Indent::fit(pairs.iter().copied()).unwrap();
        assert_eq!(i.render("        z").as_deref(), Some("\tz"));
    }

    #[test]
    fn shifts_that_disagree_are_no_mapping() {
        let pairs = [("  a", "    a"), ("  b", "        b")];
        assert_eq!(Indent::fit(pairs.iter().copied()), None);
    }
}
