//! SEARCH: exact, counted, non-overlapping replacement (apply.md §5).
//!
//! Owns matching (plain and range), the count rule, the opt-in whitespace
//! mode and the errors a model can act on. Works on bytes: the file need
//! not be valid UTF-8 to be edited, only free of NUL bytes (text).

use std::ops::Range;

use crate::csl::validate::Count;

use super::feedback::{Feedback, feedback};
use super::text::{Text, is_binary};

/// How a pattern may match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatchMode {
    /// Byte for byte (after line-end normalisation). The default.
    #[default]
    Exact,
    /// Also a unique match of whole lines that differ only in leading or
    /// trailing whitespace; the replacement is re-indented to fit.
    Whitespace,
}

/// One SEARCH to carry out.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    pub pattern: &'a str,
    pub to: Option<&'a str>,
    pub replacement: &'a str,
    pub count: Count,
    pub mode: MatchMode,
}

/// A successful SEARCH.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    /// The new file content.
    pub bytes: Vec<u8>,
    /// 1-based line where each replaced match started.
    pub lines: Vec<u32>,
    /// Set when the match needed `--match whitespace`: how it differed.
    pub whitespace_note: Option<String>,
}

/// Why a SEARCH failed; each says what was expected and what was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error(
        "binary_file: the file contains NUL bytes; only text files are edited by matching text"
    )]
    Binary,
    #[error("match_count_mismatch: found {}, expected {}", matches_text(.found.len()), expected_text(.expected))]
    Count {
        expected: Count,
        /// Line of every match found.
        found: Vec<u32>,
        /// Help when nothing matched.
        feedback: Option<Box<Feedback>>,
    },
    #[error(
        "match_count_mismatch: the range starting at line {line} has no end: its end text does not occur after it"
    )]
    RangeWithoutEnd { line: u32 },
    #[error(
        "match_count_mismatch: no exact match, and --match whitespace found {} regions that differ from your pattern only in whitespace (lines {}); it needs exactly one",
        .lines.len(),
        lines.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    )]
    AmbiguousWhitespace { lines: Vec<u32> },
    #[error(
        "match_count_mismatch: with --match whitespace, the file indents with tabs only and the replacement (at line {line}) with spaces, and no line of the pattern shows how many spaces stand for a tab"
    )]
    SpacesForTabs { line: u32 },
    #[error(
        "file_too_large: replacing {matches} would make the file {size} bytes; the limit is {max} bytes"
    )]
    TooLarge {
        matches: String,
        size: usize,
        max: usize,
    },
}

impl SearchError {
    /// The stable error type (apply.md §2).
    pub fn error_type(&self) -> &'static str {
        match self {
            SearchError::Binary => "binary_file",
            SearchError::TooLarge { .. } => "file_too_large",
            _ => "match_count_mismatch",
        }
    }
}

fn matches_text(n: usize) -> String {
    match n {
        0 => "no match".to_string(),
        1 => "1 match".to_string(),
        n => format!("{n} matches"),
    }
}

fn expected_text(count: &Count) -> String {
    match count {
        Count::All => "at least 1 (every match is replaced)".to_string(),
        Count::Exactly(n) => n.to_string(),
    }
}

/// Runs `search` on `file` and returns the new content or why it failed.
pub fn search(file: &[u8], search: &Search<'_>) -> Result<Replaced, SearchError> {
    search_within(file, search, usize::MAX, true)
}

/// [`search`], refusing a result over `max_size` bytes before it is built
/// (a few `count="all"` replacements by long text would otherwise grow a
/// file until memory runs out).
/// `look`: when nothing matches, look for the closest region (false once
/// the apply's feedback budget is spent).
pub fn search_within(
    file: &[u8],
    search: &Search<'_>,
    max_size: usize,
    look: bool,
) -> Result<Replaced, SearchError> {
    if is_binary(file) {
        return Err(SearchError::Binary);
    }
    let text = Text::new(file);
    let ranges = find(
        text.norm(),
        search.pattern.as_bytes(),
        search.to.map(str::as_bytes),
    )
    .map_err(|at| SearchError::RangeWithoutEnd {
        line: text.line_of(at),
    })?;
    let count_ok = match search.count {
        Count::All => !ranges.is_empty(),
        Count::Exactly(n) => ranges.len() == n as usize,
    };
    if count_ok {
        if search.mode == MatchMode::Whitespace
            && let Some(first) = ranges.first()
        {
            if spaces_for_tabs(&text, search) {
                return Err(SearchError::SpacesForTabs {
                    line: text.line_of(first.start),
                });
            }
            if let Some(lines) = loosely_elsewhere(&text, search, &ranges) {
                return Err(SearchError::AmbiguousWhitespace { lines });
            }
        }
        let with = text.with_file_endings(search.replacement);
        let removed: usize = ranges.iter().map(|r| r.len()).sum();
        let size = (file.len() - removed.min(file.len()))
            .saturating_add(with.len().saturating_mul(ranges.len()));
        if size > max_size {
            return Err(SearchError::TooLarge {
                matches: matches_text(ranges.len()),
                size,
                max: max_size,
            });
        }
        let edits: Vec<(Range<usize>, Vec<u8>)> =
            ranges.iter().map(|r| (r.clone(), with.clone())).collect();
        return Ok(Replaced {
            bytes: text.splice(&edits),
            lines: text.lines_of(ranges.iter().map(|r| r.start)),
            whitespace_note: None,
        });
    }
    let unique_wanted = matches!(search.count, Count::All | Count::Exactly(1));
    if ranges.is_empty()
        && search.mode == MatchMode::Whitespace
        && search.to.is_none()
        && unique_wanted
    {
        match whitespace_match(&text, search) {
            Ok(Some((done, _))) => return Ok(done),
            Ok(None) => {}
            Err(lines) => return Err(SearchError::AmbiguousWhitespace { lines }),
        }
    }
    let feedback = ranges.is_empty().then(|| {
        if !look {
            return Box::new(super::feedback::without_search());
        }
        let norm = String::from_utf8_lossy(text.norm());
        let mut fb = feedback(&norm, search.pattern, search.replacement);
        // The whole pattern indented by one offset (a method copied
        // without its class's indentation): what `--match whitespace`,
        // which takes it as an EDIT takes an aider block, would do.
        if search.mode == MatchMode::Exact && search.to.is_none() && unique_wanted {
            let loose = Search {
                mode: MatchMode::Whitespace,
                ..*search
            };
            if let Ok(Some((_, found))) = whitespace_match(&text, &loose) {
                fb.loose = Some(format!("--match whitespace would apply it at {found}"));
            }
        }
        Box::new(fb)
    });
    Err(SearchError::Count {
        expected: search.count,
        found: text.lines_of(ranges.iter().map(|r| r.start)),
        feedback,
    })
}

/// `--match whitespace` (a reply whose whitespace is not to be trusted):
/// whether the replacement adds lines indented with spaces to a file whose
/// indented lines (three or more) all start with a tab, while no line of
/// the pattern is indented to show how the reply writes one — the EDIT's
/// rule (doc/matching.md), for an exact match.
fn spaces_for_tabs(text: &Text<'_>, search: &Search<'_>) -> bool {
    use super::loose::{indented, spaced, tabs_only};
    if search.pattern.lines().any(indented)
        || !search
            .replacement
            .lines()
            .filter(|l| !search.pattern.lines().any(|p| p == *l))
            .any(spaced)
    {
        return false;
    }
    std::str::from_utf8(text.norm()).is_ok_and(|norm| tabs_only(norm.lines()))
}

/// `--match whitespace` (a reply whose indentation is not to be trusted):
/// the lines of every place the pattern's whole lines fit with their
/// whitespace ignored, when one is not the exact match — a block indented
/// one level too deep can match exactly where the code is nested deeper,
/// and then which one is meant is a guess. `None` when the loose places
/// are the exact one (or the pattern is not whole lines).
fn loosely_elsewhere(
    text: &Text<'_>,
    search: &Search<'_>,
    ranges: &[Range<usize>],
) -> Option<Vec<u32>> {
    use super::edit::{Loose, whitespace_lines};
    let [exact] = ranges else {
        return None;
    };
    let norm = std::str::from_utf8(text.norm()).ok()?;
    if search.to.is_some() || (exact.start > 0 && !norm[..exact.start].ends_with('\n')) {
        return None;
    }
    let body = search.pattern.strip_suffix('\n').unwrap_or(search.pattern);
    let pattern: Vec<&str> = body.split('\n').collect();
    let at = text.line_of(exact.start);
    match whitespace_lines(norm, &pattern, &[]) {
        Loose::Ambiguous(lines) => Some(lines),
        Loose::Found { start, .. } if start as u32 + 1 != at => Some(vec![at, start as u32 + 1]),
        _ => None,
    }
}

/// Non-overlapping matches, left to right. With `to`, each match runs from
/// an occurrence of `pattern` through the first occurrence of `to` that
/// begins at or after the pattern's end. `Err(offset)`: a range start with
/// no end.
fn find(hay: &[u8], pattern: &[u8], to: Option<&[u8]>) -> Result<Vec<Range<usize>>, usize> {
    let mut out = Vec::new();
    if pattern.is_empty() {
        return Ok(out);
    }
    let starts = memchr::memmem::Finder::new(pattern);
    let ends = to.map(memchr::memmem::Finder::new);
    let mut pos = 0;
    while let Some(i) = starts.find(&hay[pos..]) {
        let start = pos + i;
        let mut end = start + pattern.len();
        if let Some(ends) = &ends {
            match ends.find(&hay[end..]) {
                Some(j) => end += j + ends.needle().len(),
                None => return Err(start),
            }
        }
        out.push(start..end);
        pos = end;
    }
    Ok(out)
}

/// `--match whitespace`: the pattern's lines, trimmed, equal a unique run of
/// the file's lines, trimmed, with one indentation shift (tabs or spaces).
/// Replaces those whole lines with the replacement: lines it keeps as the
/// file has them, the others re-indented by the same shift (edit.rs's
/// [`super::edit::whitespace_lines`], the rule every syntax's loose step
/// follows), and says where and how it matched ("lines 2-4: matched only
/// with …"). `Err`: the first line of every candidate, when there is more
/// than one.
fn whitespace_match(
    text: &Text<'_>,
    search: &Search<'_>,
) -> Result<Option<(Replaced, String)>, Vec<u32>> {
    use super::edit::{Loose, whitespace_lines};
    let Ok(norm) = std::str::from_utf8(text.norm()) else {
        return Ok(None);
    };
    // A pattern ending in a line end (a blank line before REPLACE) matches
    // through that line end; a replacement ending in one writes one. So
    // the line structure is what an exact match of the same texts gives.
    let (pattern_body, pattern_nl) = match search.pattern.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (search.pattern, false),
    };
    let (replacement_body, replacement_nl) = match search.replacement.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (search.replacement, false),
    };
    let pattern: Vec<&str> = pattern_body.split('\n').collect();
    let replacement: Vec<&str> = if replacement_body.is_empty() && !replacement_nl {
        Vec::new()
    } else {
        replacement_body.split('\n').collect()
    };
    let (s, n, new, how) = match whitespace_lines(norm, &pattern, &replacement) {
        Loose::NotFound | Loose::Unindentable(_) => return Ok(None),
        Loose::Ambiguous(lines) => return Err(lines),
        Loose::Found {
            start,
            len,
            new,
            note,
        } => (start, len, new, note),
    };
    // Line start offsets of the file.
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', norm.as_bytes()).map(|i| i + 1));
    let line_len = |i: usize| {
        norm[starts[i]..]
            .find('\n')
            .unwrap_or(norm.len() - starts[i])
    };
    let start = starts[s];
    let mut end = starts[s + n - 1] + line_len(s + n - 1);
    if pattern_nl && end < norm.len() {
        end += 1;
    }
    let mut new = new.join("\n");
    if replacement_nl {
        new.push('\n');
    }
    let at = if n == 1 {
        format!("line {}", s + 1)
    } else {
        format!("lines {}-{}", s + 1, s + n)
    };
    let found = format!("{at}: {how}");
    Ok(Some((
        Replaced {
            bytes: text.splice(&[(start..end, text.with_file_endings(&new))]),
            lines: vec![s as u32 + 1],
            whitespace_note: Some(format!("--match whitespace at {found}")),
        },
        found,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        file: &str,
        pattern: &str,
        to: Option<&str>,
        replacement: &str,
        count: Count,
    ) -> Result<String, SearchError> {
        let s = Search {
            pattern,
            to,
            replacement,
            count,
            mode: MatchMode::Exact,
        };
        search(file.as_bytes(), &s).map(|r| String::from_utf8(r.bytes).unwrap())
    }

    const ONE: Count = Count::Exactly(1);

    #[test]
    fn replaces_exactly_one_match() {
        assert_eq!(
            run("a\nold\nb\n", "old", None, "new", ONE).unwrap(),
            "a\nnew\nb\n"
        );
    }

    #[test]
    fn count_mismatch_lists_the_lines_of_every_match() {
        let err = run("x\nold\nold\n", "old", None, "new", ONE).unwrap_err();
        assert_eq!(
            err,
            SearchError::Count {
                expected: ONE,
                found: vec![2, 3],
                feedback: None
            }
        );
        assert_eq!(
            err.to_string(),
            "match_count_mismatch: found 2 matches, expected 1"
        );
        assert_eq!(
            run("old old", "old", None, "n", Count::Exactly(2)).unwrap(),
            "n n"
        );
        assert_eq!(
            run("old old old", "old", None, "n", Count::All).unwrap(),
            "n n n"
        );
    }

    #[test]
    fn matches_do_not_overlap() {
        assert_eq!(run("aaaa", "aa", None, "b", Count::All).unwrap(), "bb");
        assert!(run("aaa", "aa", None, "b", Count::Exactly(2)).is_err());
    }

    #[test]
    fn crlf_bom_and_tabs_are_preserved_byte_for_byte() {
        let file = "\u{feff}a\r\n\told line\r\n\tnext\r\nz";
        let out = run(file, "\told line\n\tnext", None, "\tnew line\n\tnext", ONE).unwrap();
        assert_eq!(out, "\u{feff}a\r\n\tnew line\r\n\tnext\r\nz");
    }

    #[test]
    fn range_runs_from_pattern_through_the_first_to_after_it() {
        let file = "def f(\n  a)\n  return a\nend\ndef g(\n  return b\n";
        let out = run(
            file,
            "def f(",
            Some("return a"),
            "def f():\n  return 1",
            ONE,
        )
        .unwrap();
        assert_eq!(out, "def f():\n  return 1\nend\ndef g(\n  return b\n");
        let err = run("start\nno end here\n", "start", Some("finish"), "x", ONE).unwrap_err();
        assert_eq!(err, SearchError::RangeWithoutEnd { line: 1 });
    }

    #[test]
    fn empty_replacement_deletes() {
        assert_eq!(
            run("keep\ndrop\nkeep\n", "drop\n", None, "", ONE).unwrap(),
            "keep\nkeep\n"
        );
    }

    #[test]
    fn no_match_comes_with_feedback() {
        let err = run(
            "fn a() {\n\tbody();\n}\n",
            "fn a() {\n    body();\n}",
            None,
            "x",
            ONE,
        )
        .unwrap_err();
        let SearchError::Count {
            found,
            feedback: Some(fb),
            ..
        } = err
        else {
            panic!()
        };
        assert!(found.is_empty());
        assert_eq!(fb.closest.unwrap().start_line, 1);
    }

    #[test]
    fn binary_files_are_refused() {
        let s = Search {
            pattern: "a",
            to: None,
            replacement: "b",
            count: ONE,
            mode: MatchMode::Exact,
        };
        assert_eq!(search(b"a\0b", &s), Err(SearchError::Binary));
    }

    #[test]
    fn whitespace_mode_accepts_a_unique_reindented_match() {
        let file = "class A:\n\tdef f(self):\n\t\treturn 1\n";
        let s = Search {
            pattern: "def f(self):\n\treturn 1",
            to: None,
            replacement: "def f(self):\n\treturn 2",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        let r = search(file.as_bytes(), &s).unwrap();
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "class A:\n\tdef f(self):\n\t\treturn 2\n"
        );
        // Spaces where the file has tabs (a model's tab as 4 spaces): the
        // replacement is written with the file's tabs.
        let spaces = Search {
            pattern: "def f(self):\n    return 1",
            replacement: "def f(self):\n    return 3",
            ..s
        };
        let r2 = search(file.as_bytes(), &spaces).unwrap();
        assert_eq!(
            String::from_utf8(r2.bytes).unwrap(),
            "class A:\n\tdef f(self):\n\t\treturn 3\n"
        );
        assert!(r.whitespace_note.is_some());
        // Exact mode refuses the same edit.
        let exact = Search {
            mode: MatchMode::Exact,
            ..s
        };
        assert!(search(file.as_bytes(), &exact).is_err());
    }

    #[test]
    fn whitespace_mode_ignores_a_trailing_blank_pattern_line() {
        let file = "def f():\n    x = 1\n    return x\n";
        let s = Search {
            pattern: "  x = 1\n  return x\n",
            to: None,
            replacement: "  x = 2\n  return x\n",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        let r = search(file.as_bytes(), &s).unwrap();
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "def f():\n    x = 2\n    return x\n"
        );
    }

    #[test]
    fn past_the_feedback_budget_a_miss_says_less_never_nothing() {
        let s = Search {
            pattern: "fn missing() {}",
            to: None,
            replacement: "x",
            count: ONE,
            mode: MatchMode::Exact,
        };
        let file = b"fn present() {}\n";
        let Err(SearchError::Count {
            feedback: Some(fb), ..
        }) = search_within(file, &s, usize::MAX, false)
        else {
            panic!("a miss");
        };
        assert!(fb.budget_spent && fb.closest.is_none());
        let lines = fb.lines(12);
        assert!(
            lines[0].starts_with("no closest region was looked for"),
            "{lines:?}"
        );
        // Within the budget the region is looked for.
        let Err(SearchError::Count {
            feedback: Some(fb), ..
        }) = search(file, &s)
        else {
            panic!("a miss");
        };
        assert!(!fb.budget_spent && fb.closest.is_some());
    }

    #[test]
    fn whitespace_mode_takes_one_uniform_offset_only() {
        let file = "def f():\n    if x:\n        return 1\n";
        let s = |pattern| Search {
            pattern,
            to: None,
            replacement: "def f():\n  if x:\n    return 2",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        // Lines re-indented by different amounts: no match (the result
        // would not be valid Python).
        let mixed = s("def f():\n  if x:\n          return 1");
        assert!(matches!(
            search(file.as_bytes(), &mixed),
            Err(SearchError::Count { .. })
        ));
        // One offset for the whole block (two spaces where the file has
        // four, from the second level on) is fine, and re-indents.
        let file = "class A:\n    def f():\n        return 1\n";
        let uniform = Search {
            pattern: "  def f():\n      return 1",
            replacement: "  def f():\n      return 2",
            ..s("")
        };
        let r = search(file.as_bytes(), &uniform).unwrap();
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "class A:\n    def f():\n        return 2\n"
        );
    }

    #[test]
    fn whitespace_mode_needs_a_unique_match_and_names_the_candidates() {
        let file = "  x = 1\n  y\n    x = 1\n    y\n";
        let s = Search {
            pattern: "x = 1\ny",
            to: None,
            replacement: "y",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        assert_eq!(
            search(file.as_bytes(), &s),
            Err(SearchError::AmbiguousWhitespace { lines: vec![1, 3] })
        );
    }

    #[test]
    fn whitespace_mode_refuses_spaces_added_to_a_tab_file_with_nothing_to_show_the_width() {
        let file = "func f() {\n\ta()\n\tb()\n\tc()\n}\n\nfunc init() {\n}\n";
        let s = Search {
            pattern: "func init() {\n}",
            to: None,
            replacement: "func init() {\n    d()\n}",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        assert_eq!(
            search(file.as_bytes(), &s),
            Err(SearchError::SpacesForTabs { line: 7 })
        );
        // Exact mode writes what the reply says; tabs are fine either way.
        let exact = Search {
            mode: MatchMode::Exact,
            ..s
        };
        assert!(search(file.as_bytes(), &exact).is_ok());
        let tabs = Search {
            replacement: "func init() {\n\td()\n}",
            ..s
        };
        assert!(search(file.as_bytes(), &tabs).is_ok());
    }

    #[test]
    fn whitespace_mode_refuses_an_exact_match_when_the_pattern_also_fits_loosely_elsewhere() {
        // The block, one level too deep, is exactly the nested copy.
        let file = "fn a() {\n    x();\n}\nmod m {\n    fn a() {\n        x();\n    }\n}\n";
        let s = Search {
            pattern: "    fn a() {\n        x();\n    }",
            to: None,
            replacement: "    fn a() {\n        y();\n    }",
            count: ONE,
            mode: MatchMode::Whitespace,
        };
        assert_eq!(
            search(file.as_bytes(), &s),
            Err(SearchError::AmbiguousWhitespace { lines: vec![1, 5] })
        );
        // Exact mode takes the exact match, as it always has.
        let exact = Search {
            mode: MatchMode::Exact,
            ..s
        };
        assert!(search(file.as_bytes(), &exact).is_ok());
    }
}
