//! What to tell the model when its SEARCH pattern matches nothing.
//!
//! Owns the search for the region of the file closest to the pattern, the
//! naming of the differences (indentation, tabs vs spaces, trailing
//! whitespace, Unicode look-alikes) and the "replacement already present"
//! check. Its cost is bounded whatever the input: candidate regions come
//! from votes of lines shared with the pattern (lines frequent in the file
//! do not vote), at most a few candidates are scored, and the fallback scan
//! for a pattern that shares no line with the file has a fixed budget.

use std::collections::HashMap;

/// How many candidate regions are scored with a real diff.
const CANDIDATES: usize = 3;
/// A file line that occurs more often than this is too common to vote.
const MAX_OCCURRENCES: usize = 32;
/// Character comparisons allowed in the fallback scan.
const FALLBACK_BUDGET: usize = 4_000_000;
/// Similarity below which a region is not worth showing.
const MIN_SIMILARITY: f32 = 0.3;

/// The help for a pattern with no exact match.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    pub closest: Option<Closest>,
    /// First line where the replacement text already stands, if it does.
    pub already_present: Option<u32>,
    /// The closest region was not looked for: the apply's feedback budget
    /// was spent on earlier failures.
    pub budget_spent: bool,
    /// How `--match whitespace` would take the pattern, when it would (the
    /// whole pattern indented by one offset, issue 29): "--match
    /// whitespace would apply it at lines 2-4: …".
    pub loose: Option<String>,
}

/// The time one apply may spend looking for closest regions, all failed
/// SEARCHes together: a reply of thousands of failing SEARCHes on a large
/// file must not hold the lock for minutes (a server's other pushes wait).
pub const BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// The region of the file most like the pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// 0.0–1.0: mean edit similarity of the aligned lines.
    pub similarity: f32,
    pub differences: Vec<Difference>,
    /// Pattern lines (`-`) against file lines (`+`), changed lines only.
    pub diff: Vec<String>,
    /// The region's lines, joined by `\n`.
    pub text: String,
}

/// One kind of difference between a pattern line and the file line it
/// lines up with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// Same text, different leading whitespace (widths in characters, a
    /// tab counting as one).
    Indentation {
        line: u32,
        file: usize,
        pattern: usize,
    },
    /// Leading whitespace is tabs on one side and spaces on the other.
    TabsVsSpaces {
        line: u32,
        file_uses_tabs: bool,
    },
    TrailingWhitespace {
        line: u32,
    },
    /// A character that looks like another: the file has `found` where the
    /// pattern has `expected` (or the reverse, `in_pattern`).
    LookAlike {
        line: u32,
        found: char,
        expected: char,
        in_pattern: bool,
    },
    /// The file has a blank line where the pattern has none (`extra`), or
    /// the pattern has one the file does not; `line` is the file's line
    /// (for a missing one, the line the blank line would come before).
    BlankLine {
        line: u32,
        extra: bool,
    },
}

impl Difference {
    pub fn describe(&self) -> String {
        match *self {
            Difference::Indentation {
                line,
                file,
                pattern,
            } => {
                format!(
                    "line {line}: the file indents this line by {file} character{}, your pattern by {pattern}",
                    if file == 1 { "" } else { "s" }
                )
            }
            Difference::TabsVsSpaces {
                line,
                file_uses_tabs,
            } => {
                let (file, yours) = if file_uses_tabs {
                    ("tabs", "spaces")
                } else {
                    ("spaces", "tabs")
                };
                format!("line {line}: the file indents with {file}, your pattern with {yours}")
            }
            Difference::TrailingWhitespace { line } => {
                format!("line {line}: trailing whitespace differs")
            }
            Difference::BlankLine { line, extra: true } => {
                format!("line {line}: the file has a blank line here that your pattern does not")
            }
            Difference::BlankLine { line, extra: false } => format!(
                "line {line}: your pattern has a blank line before this line that the file does not"
            ),
            Difference::LookAlike {
                line,
                found,
                expected,
                in_pattern,
            } => {
                let (where_, other) = if in_pattern {
                    ("your pattern has", "the file has")
                } else {
                    ("the file has", "your pattern has")
                };
                format!(
                    "line {line}: {where_} {} where {other} {}",
                    describe_char(found),
                    describe_char(expected)
                )
            }
        }
    }
}

fn describe_char(c: char) -> String {
    let name = match c {
        '\u{2018}' | '\u{2019}' => "curly quote",
        '\u{201C}' | '\u{201D}' => "curly double quote",
        '\u{00A0}' => "non-breaking space",
        '\u{2013}' => "en dash",
        '\u{2014}' => "em dash",
        '\u{2212}' => "minus sign",
        '\u{200B}' => "zero-width space",
        '\u{2026}' => "ellipsis",
        '\t' => return "a tab".to_string(),
        ' ' => return "a space".to_string(),
        '\'' => return "a straight quote (')".to_string(),
        '"' => return "a straight double quote (\")".to_string(),
        '-' => return "a hyphen (-)".to_string(),
        c if c.is_ascii() => return format!("'{c}'"),
        _ => "look-alike",
    };
    format!("{name} '{c}' (U+{:04X})", c as u32)
}

/// The ASCII character a look-alike stands for, if `c` is one.
fn ascii_twin(c: char) -> Option<char> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{2032}' | '\u{00B4}' | '\u{0060}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{2033}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2007}' | '\u{2009}' | '\u{200A}'
        | '\u{202F}' => ' ',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
        _ => return None,
    })
}

fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{FEFF}' | '\u{2060}'
    )
}

/// A line reduced to what a model is likely to get right: trimmed, runs of
/// whitespace collapsed, look-alikes as ASCII, invisible characters gone.
fn canonical(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut space = false;
    for c in line.trim().chars() {
        if is_invisible(c) {
            continue;
        }
        let c = ascii_twin(c).unwrap_or(c);
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Builds the feedback for `pattern` (LF text) that has no exact match in
/// `file` (LF-normalised text).
pub fn feedback(file: &str, pattern: &str, replacement: &str) -> Feedback {
    let already_present = present_as_lines(file, replacement);
    Feedback {
        closest: closest(file, pattern),
        already_present,
        budget_spent: false,
        loose: None,
    }
}

/// Lines of a file looked at for [`closest_line`], at most.
const MAX_LINES_SCANNED: usize = 200_000;

/// The line of `file` most like `wanted` (an apply_patch `@@` context
/// line that is not in the file): its 1-based number, its text trimmed and
/// how alike they are (0.0–1.0), when at least half alike. Lines are
/// compared as [`canonical`] reads them; a line of very different length
/// is not scored.
pub fn closest_line(file: &str, wanted: &str) -> Option<(u32, String, f32)> {
    let want = canonical(wanted);
    if want.is_empty() {
        return None;
    }
    let mut best: Option<(u32, &str, f32)> = None;
    for (i, line) in file.split('\n').take(MAX_LINES_SCANNED).enumerate() {
        let have = canonical(line);
        let (a, b) = (have.len(), want.len());
        if have.is_empty() || a * 2 < b || b * 2 < a {
            continue;
        }
        let score = strsim::normalized_levenshtein(&have, &want) as f32;
        if best.is_none_or(|(_, _, s)| score > s) {
            best = Some((i as u32 + 1, line.trim(), score));
        }
    }
    best.filter(|&(_, _, s)| s >= 0.5)
        .map(|(n, text, s)| (n, text.to_string(), s))
}

/// The details of an apply_patch `@@` context line that is not in the
/// file (where it was looked for: after the hunks before it when
/// `after_hunks`): the closest line, and why it was not taken.
pub fn anchor_advice(file: &str, anchor: &str, after_hunks: bool) -> Vec<String> {
    let mut details = match closest_line(file, anchor) {
        // Found whole: it stands before where this hunk was looked for.
        Some((line, _, score)) if score >= 1.0 && after_hunks => vec![format!(
            "line {line} has it, but before the lines of the hunks before this one: a patch's hunks go in the file's order"
        )],
        Some((line, text, score)) => vec![format!(
            "closest line: {line}, `{text}` ({:.0}% similar), not taken: a context line must be in the file as written, but for leading and trailing whitespace and Unicode punctuation",
            score * 100.0
        )],
        None => vec!["no line of the file is like it".to_string()],
    };
    details.push("copy the @@ context line from the file exactly as it is now".to_string());
    details
}

/// The feedback of a failure past the apply's budget: no region looked for.
pub fn without_search() -> Feedback {
    Feedback {
        closest: None,
        already_present: None,
        budget_spent: true,
        loose: None,
    }
}

/// First line where `text` (trimmed) stands as whole lines of `file`:
/// from the start of a line (after indentation) to the end of a line. A
/// fragment inside a longer line (`let ` in `let c = 1;`) does not count.
fn present_as_lines(file: &str, text: &str) -> Option<u32> {
    let needle = text.trim();
    if needle.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(i) = file[from..].find(needle) {
        let at = from + i;
        let end = at + needle.len();
        let line_start = file[..at].rfind('\n').map_or(0, |n| n + 1);
        let line_end = file[end..].find('\n').map_or(file.len(), |n| end + n);
        if file[line_start..at].trim().is_empty() && file[end..line_end].trim().is_empty() {
            return Some(1 + file[..at].matches('\n').count() as u32);
        }
        from = at + needle.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Pattern lines looked at, at most: a bigger pattern is judged by its
/// first lines, so that a huge reply cannot make a failing SEARCH slow.
const MAX_PATTERN_LINES: usize = 400;

fn closest(file: &str, pattern: &str) -> Option<Closest> {
    let file_lines: Vec<&str> = file.split('\n').collect();
    let pat_lines: Vec<&str> = pattern.split('\n').take(MAX_PATTERN_LINES).collect();
    let n = pat_lines.len();
    let starts = candidate_starts(&file_lines, &pat_lines);
    // A region that differs only by blank lines: its extent is not the
    // pattern's length, so aligning line by line would point past it.
    if let Some(found) = starts
        .iter()
        .find_map(|&s| blank_line_miss(&file_lines, &pat_lines, s))
    {
        return Some(found);
    }
    let mut best: Option<(f32, usize)> = None;
    for start in starts {
        let end = (start + n).min(file_lines.len());
        let ratio = similarity(&pat_lines, &file_lines[start..end]);
        if best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, start));
        }
    }
    let (similarity, start) = best?;
    if similarity < MIN_SIMILARITY {
        return None;
    }
    let end = (start + n).min(file_lines.len());
    let aligned = &file_lines[start..end];
    // The region is as long as the pattern; where the pattern has a line
    // the file does not, the file's lines past what matches are not part
    // of it (nor shown as added).
    let differences = differences(&pat_lines, aligned, start as u32 + 1);
    let (start, end) = trimmed(&pat_lines, aligned, start);
    let region = &file_lines[start..end];
    Some(Closest {
        start_line: start as u32 + 1,
        end_line: end as u32,
        similarity,
        differences,
        diff: compact_diff(&pat_lines, region, start as u32 + 1),
        text: region.join("\n"),
    })
}

/// `region` (from line index `start`) without the lines at either end
/// that only the file has (pure insertions before the first or after the
/// last line the pattern shares or changes), as a range of file lines.
fn trimmed(pattern: &[&str], region: &[&str], start: usize) -> (usize, usize) {
    let diff = similar::capture_diff_slices(similar::Algorithm::Myers, pattern, region);
    let kept = |op: &similar::DiffOp| !matches!(op, similar::DiffOp::Insert { .. });
    let (Some(first), Some(last)) = (diff.iter().position(kept), diff.iter().rposition(kept))
    else {
        return (start, start + region.len());
    };
    let from = diff[first].new_range().start;
    let to = diff[last].new_range().end;
    // A change at the region's edge keeps its own lines.
    (start + from.min(to), start + to.max(from))
}

/// The region at `start` when it equals the pattern but for blank lines
/// the file has and the pattern does not, or the other way round.
fn blank_line_miss(file: &[&str], pattern: &[&str], start: usize) -> Option<Closest> {
    let blank = |l: &str| l.trim().is_empty();
    let (mut i, mut j) = (0, start);
    let mut differences = Vec::new();
    while i < pattern.len() {
        let line = j as u32 + 1;
        match file.get(j) {
            Some(f) if *f == pattern[i] => {
                i += 1;
                j += 1;
            }
            Some(f) if blank(f) => {
                differences.push(Difference::BlankLine { line, extra: true });
                j += 1;
            }
            _ if blank(pattern[i]) => {
                differences.push(Difference::BlankLine { line, extra: false });
                i += 1;
            }
            _ => return None,
        }
    }
    if differences.is_empty() || differences.len() * 4 > pattern.len() {
        return None;
    }
    let region = &file[start..j];
    let same = pattern.len().min(region.len()) - differences.len().min(region.len());
    Some(Closest {
        start_line: start as u32 + 1,
        end_line: j as u32,
        similarity: same as f32 / pattern.len().max(region.len()) as f32,
        differences,
        diff: compact_diff(pattern, region, start as u32 + 1),
        text: region.join("\n"),
    })
}

/// Mean edit similarity of aligned lines (0.0–1.0); lines are compared on
/// their first 160 characters to bound the cost.
fn similarity(pattern: &[&str], region: &[&str]) -> f32 {
    const CAP: usize = 160;
    let cut = |l: &str| -> String { l.chars().take(CAP).collect() };
    let total: f64 = pattern
        .iter()
        .enumerate()
        .map(|(i, p)| match region.get(i) {
            Some(f) if p == f => 1.0,
            Some(f) => strsim::normalized_levenshtein(&cut(p), &cut(f)),
            None => 0.0,
        })
        .sum();
    (total / pattern.len().max(1) as f64) as f32
}

/// Region starts worth scoring, best first.
fn candidate_starts(file_lines: &[&str], pat_lines: &[&str]) -> Vec<usize> {
    let mut index: HashMap<String, Vec<usize>> = HashMap::new();
    let wanted: HashMap<String, ()> = pat_lines
        .iter()
        .map(|l| canonical(l))
        .filter(|c| !c.is_empty())
        .map(|c| (c, ()))
        .collect();
    for (j, line) in file_lines.iter().enumerate() {
        let c = canonical(line);
        if wanted.contains_key(&c) {
            let list = index.entry(c).or_default();
            if list.len() <= MAX_OCCURRENCES {
                list.push(j);
            }
        }
    }
    let mut votes: HashMap<usize, u32> = HashMap::new();
    for (i, line) in pat_lines.iter().enumerate() {
        let Some(list) = index.get(&canonical(line)) else {
            continue;
        };
        if list.len() > MAX_OCCURRENCES {
            continue;
        }
        for &j in list {
            if j >= i {
                *votes.entry(j - i).or_default() += 1;
            }
        }
    }
    if votes.is_empty() {
        return fallback_starts(file_lines, pat_lines);
    }
    let mut ranked: Vec<(usize, u32)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(CANDIDATES)
        .map(|(s, _)| s)
        .collect()
}

/// When no line is shared, compare the first non-blank pattern line with
/// file lines by edit similarity, within a fixed budget.
fn fallback_starts(file_lines: &[&str], pat_lines: &[&str]) -> Vec<usize> {
    let Some((offset, first)) = pat_lines
        .iter()
        .enumerate()
        .map(|(i, l)| (i, canonical(l)))
        .find(|(_, c)| !c.is_empty())
    else {
        return Vec::new();
    };
    let first: Vec<char> = first.chars().take(200).collect();
    let mut spent = 0usize;
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for (j, line) in file_lines.iter().enumerate() {
        if j < offset {
            continue;
        }
        let c: Vec<char> = canonical(line).chars().take(200).collect();
        if c.is_empty() {
            continue;
        }
        spent += c.len() * first.len();
        if spent > FALLBACK_BUDGET {
            break;
        }
        let a: String = first.iter().collect();
        let b: String = c.iter().collect();
        scored.push((strsim::normalized_levenshtein(&a, &b), j - offset));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(CANDIDATES)
        .map(|(_, s)| s)
        .collect()
}

/// Names the differences between aligned pattern and region lines.
fn differences(pattern: &[&str], region: &[&str], first_line: u32) -> Vec<Difference> {
    let mut out = Vec::new();
    for (i, (p, f)) in pattern.iter().zip(region).enumerate() {
        let line = first_line + i as u32;
        if p == f {
            continue;
        }
        let (p_lead, f_lead) = (leading(p), leading(f));
        let (p_trail, f_trail) = (&p[p.trim_end().len()..], &f[f.trim_end().len()..]);
        let same_text = p.trim() == f.trim();
        if same_text && p_lead != f_lead {
            if p_lead.contains('\t') != f_lead.contains('\t') {
                out.push(Difference::TabsVsSpaces {
                    line,
                    file_uses_tabs: f_lead.contains('\t'),
                });
            } else {
                out.push(Difference::Indentation {
                    line,
                    file: f_lead.chars().count(),
                    pattern: p_lead.chars().count(),
                });
            }
        }
        if same_text && p_trail != f_trail {
            out.push(Difference::TrailingWhitespace { line });
        }
        for (pc, fc) in p
            .trim()
            .chars()
            .zip(f.trim().chars())
            .filter(|(a, b)| a != b)
        {
            match (ascii_twin(pc), ascii_twin(fc)) {
                (None, Some(twin)) if twin == pc => out.push(Difference::LookAlike {
                    line,
                    found: fc,
                    expected: pc,
                    in_pattern: false,
                }),
                (Some(twin), None) if twin == fc => out.push(Difference::LookAlike {
                    line,
                    found: pc,
                    expected: fc,
                    in_pattern: true,
                }),
                _ => {}
            }
        }
        for c in f.chars().filter(|c| is_invisible(*c)) {
            out.push(Difference::LookAlike {
                line,
                found: c,
                expected: ' ',
                in_pattern: false,
            });
        }
    }
    out.dedup();
    out
}

fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Changed lines of pattern vs region, `-` for the pattern, `+` for the
/// file with its line number; tabs and trailing spaces made visible.
fn compact_diff(pattern: &[&str], region: &[&str], first_line: u32) -> Vec<String> {
    // Lines against lines: as text, the pattern's last line (no line end)
    // would never equal the same line of the file (with one).
    let diff = similar::TextDiff::from_slices(pattern, region);
    let mut out = Vec::new();
    for change in diff.iter_all_changes() {
        let line = change.value();
        let shown = visible(line);
        let entry = match change.tag() {
            similar::ChangeTag::Equal => continue,
            similar::ChangeTag::Delete => format!("-      {shown}"),
            similar::ChangeTag::Insert => {
                let n = first_line + change.new_index().unwrap_or(0) as u32;
                format!("+{n:>5} {shown}")
            }
        };
        out.push(entry);
    }
    out
}

/// Tabs as `→`, trailing spaces as `·`, so the model can see them.
fn visible(line: &str) -> String {
    let body = line.trim_end_matches(' ');
    let mut out = String::with_capacity(line.len());
    for c in body.chars() {
        if c == '\t' {
            out.push('→');
        } else {
            out.push(c);
        }
    }
    for _ in body.len()..line.len() {
        out.push('·');
    }
    out
}

impl Feedback {
    /// Detail lines for the report, most useful first, with at most
    /// `max_diff` lines of diff.
    pub fn lines(&self, max_diff: usize) -> Vec<String> {
        let mut out = Vec::new();
        if self.budget_spent {
            out.push(format!(
                "no closest region was looked for: this apply spent its feedback time ({} s) on earlier failed edits; read the file again and copy the lines exactly",
                BUDGET.as_secs()
            ));
            return out;
        }
        // `already_present` is said in the task's message, by the caller.
        match &self.closest {
            Some(c) => {
                let lines = if c.start_line == c.end_line {
                    format!("line {}", c.start_line)
                } else {
                    format!("lines {}-{}", c.start_line, c.end_line)
                };
                out.push(format!(
                    "closest to your pattern: {lines} ({:.0}% similar)",
                    c.similarity * 100.0
                ));
                for d in &c.differences {
                    out.push(format!("  {}", d.describe()));
                }
                if !c.diff.is_empty() {
                    out.push("  your pattern (-) against the file (+, with line numbers; → is a tab, · a trailing space):".to_string());
                    out.extend(c.diff.iter().take(max_diff).map(|l| format!("  {l}")));
                    if c.diff.len() > max_diff {
                        out.push(format!(
                            "  … {} more diff lines (--error-detail full shows more)",
                            c.diff.len() - max_diff
                        ));
                    }
                }
            }
            // With the replacement in the file, a pattern nothing resembles
            // is what an applied edit leaves: no advice to look elsewhere.
            None if self.already_present.is_some() => {}
            None => out.push(
                "no region of the file resembles your pattern: check the file name, or read the file again before editing it".to_string(),
            ),
        }
        out.extend(self.loose.clone());
        out
    }

    /// The closest region of `path`, typed for the JSON report.
    pub fn region(&self, path: &str) -> Option<crate::report::Region> {
        self.closest.as_ref().map(|c| crate::report::Region {
            path: path.to_string(),
            lines: [c.start_line, c.end_line],
            similarity: (c.similarity * 100.0).round() / 100.0,
            text: c.text.clone(),
        })
    }

    /// The advice that ends the feedback, `copy` ("copy the text to
    /// replace from the file …"), made conditional when the edit looks
    /// applied already: then it needs no resend.
    pub fn closing_advice(&self, copy: &str) -> String {
        if self.already_present.is_some() {
            format!("if it was not applied, {copy}")
        } else {
            copy.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_region_and_names_tabs_vs_spaces() {
        let file = "fn a() {\n\tlet x = 1;\n\tx\n}\n\nfn b() {}\n";
        let fb = feedback(file, "fn a() {\n    let x = 1;\n    x\n}", "new");
        let c = fb.closest.expect("a closest region");
        assert_eq!((c.start_line, c.end_line), (1, 4));
        assert!(
            c.differences.contains(&Difference::TabsVsSpaces {
                line: 2,
                file_uses_tabs: true
            }),
            "{:?}",
            c.differences
        );
        assert_eq!(fb.already_present, None);
    }

    #[test]
    fn names_curly_quotes_and_non_breaking_spaces() {
        let file = "a\nprint(\u{201C}hi\u{201D})\nx\u{00A0}= 1\nb\n";
        let c = feedback(file, "print(\"hi\")\nx = 1", "")
            .closest
            .expect("closest");
        assert_eq!((c.start_line, c.end_line), (2, 3));
        let found: Vec<char> = c
            .differences
            .iter()
            .filter_map(|d| match d {
                Difference::LookAlike { found, .. } => Some(*found),
                _ => None,
            })
            .collect();
        assert_eq!(found, ['\u{201C}', '\u{201D}', '\u{00A0}']);
    }

    #[test]
    fn names_trailing_whitespace_and_indentation() {
        let file = "x = 1   \n  y = 2\n";
        let c = feedback(file, "x = 1\n    y = 2", "")
            .closest
            .expect("closest");
        assert!(
            c.differences
                .contains(&Difference::TrailingWhitespace { line: 1 }),
            "{:?}",
            c.differences
        );
        assert!(
            c.differences.contains(&Difference::Indentation {
                line: 2,
                file: 2,
                pattern: 4
            }),
            "{:?}",
            c.differences
        );
    }

    #[test]
    fn reports_a_replacement_that_is_already_there() {
        let fb = feedback("a\n    new_call()\n", "old_call()", "new_call()");
        assert_eq!(fb.already_present, Some(2));
        // A fragment of a longer line is not "already present".
        let fb = feedback("let c = 1;\n", "var ", "let ");
        assert_eq!(fb.already_present, None);
    }

    #[test]
    fn a_pattern_sharing_no_line_falls_back_to_edit_similarity() {
        let file = "alpha\nconst valeu = compute(1);\nomega\n";
        let c = feedback(file, "const value = compute(1);", "")
            .closest
            .expect("closest");
        assert_eq!(c.start_line, 2);
    }

    #[test]
    fn a_blank_line_more_or_less_is_named_where_it_is() {
        let file = "fn a() {\n    let x = 1;\n\n    x\n}\n\nfn b() {}\n";
        let fb = feedback(file, "fn a() {\n    let x = 1;\n    x\n}", "new");
        let c = fb.closest.clone().expect("a region");
        assert_eq!((c.start_line, c.end_line), (1, 5));
        assert_eq!(
            c.differences,
            [Difference::BlankLine {
                line: 3,
                extra: true
            }]
        );
        assert!(fb.lines(12)[1].contains("line 3: the file has a blank line here"));
        let fb = feedback(
            "fn a() {\n    let x = 1;\n    x\n}\n",
            "fn a() {\n    let x = 1;\n\n    x\n}",
            "new",
        );
        let c = fb.closest.expect("a region");
        assert_eq!((c.start_line, c.end_line), (1, 4));
        assert_eq!(
            c.differences,
            [Difference::BlankLine {
                line: 3,
                extra: false
            }]
        );
    }

    #[test]
    fn the_closest_line_to_a_missing_context_line() {
        let file = "def a():\n    pass\n\ndef handle_request(self, req):\n    return req\n";
        let (line, text, score) =
            closest_line(file, "def handle_request(self, request):").expect("a line");
        assert_eq!((line, text.as_str()), (4, "def handle_request(self, req):"));
        assert!(score > 0.8, "{score}");
        assert_eq!(
            closest_line(file, "class Nothing(Like, This, At, All):"),
            None
        );
    }

    #[test]
    fn nothing_alike_gives_no_region() {
        let fb = feedback("aaaa\nbbbb\n", "completely different text here", "");
        assert_eq!(fb.closest, None);
    }
}
