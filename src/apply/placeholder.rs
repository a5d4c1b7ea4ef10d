//! The lazy-placeholder guard (apply.md §4), one for every syntax.
//!
//! Owns the decision whether an edit deletes code by writing an elision
//! placeholder (`# ... existing code ...`) where the code was: the classic
//! way a model shortens its answer and, applied as written, deletes what
//! the placeholder stands for. Every operation that replaces lines asks it
//! with the lines it removes and the lines it puts there: a WRITE (the old
//! file against the content), a SEARCH (the pattern against the
//! replacement) and each hunk of an EDIT (its old lines against its new
//! lines; aider blocks, apply_patch and unified diffs alike).
//!
//! The decision is by lines, not bytes: the old and new lines are aligned
//! (a line diff, leading and trailing whitespace ignored so that
//! re-indentation is not removal), and a placeholder line the file does not
//! have is refused when the changed region it sits in (regions joined
//! across lines of mere punctuation such as `}`) removes more real
//! (non-blank) lines than it adds. A placeholder added beside kept code, or
//! a region that rewrites as many lines as it drops, is an edit, not an
//! elision.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffTag};

use super::exec::Failure;
use crate::plan::Hunk;

/// An edit refused by the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// 1-based line of the placeholder in the new text.
    pub line: u32,
    /// The line, trimmed.
    pub text: String,
    /// Real lines the changed region around it removes (kept nowhere in
    /// the new text).
    pub removed: usize,
}

/// The edit a refused placeholder is in, for the report's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    Write,
    Search,
    /// Hunk `hunk` (1-based) of `of` of an EDIT.
    Hunk {
        hunk: usize,
        of: usize,
    },
}

impl Placeholder {
    /// The `placeholder_detected` failure: where the placeholder is, what
    /// it would delete, and how to send the edit instead.
    /// `vocab`: the reply's syntax's words, for the way to send it instead.
    pub fn refusal(&self, within: Within, vocab: &crate::vocab::Vocab) -> Failure {
        let lines = super::exec::plural(self.removed, "line");
        let (whose, what, why, instead) = match within {
            Within::Write => (
                "your content".to_string(),
                format!("where the file loses {lines}"),
                "the content replaces the whole file, so the left-out code would be deleted",
                format!(
                    "send the complete file, or change only the part that differs with {}",
                    vocab.edit
                ),
            ),
            Within::Search => (
                "your replacement".to_string(),
                format!("where the replacement drops {lines} of what the pattern matches"),
                "the matched text is replaced by exactly the replacement, so the left-out code would be deleted",
                "write the replacement in full, or make the pattern cover only the lines that change"
                    .to_string(),
            ),
            Within::Hunk { hunk, of } => (
                if of == 1 {
                    "the new lines".to_string()
                } else {
                    format!("hunk {hunk} of {of}'s new lines")
                },
                format!("where the edit removes {lines}"),
                "the lines found are replaced by exactly the new lines, so the left-out code would be deleted",
                "write the new lines in full, or make the lines to find cover only the lines that change"
                    .to_string(),
            ),
        };
        Failure {
            error_type: Some("placeholder_detected"),
            message: format!(
                "line {} of {whose}, `{}`, stands for code left out {what}",
                self.line, self.text
            ),
            details: vec![
                why.to_string(),
                instead,
                "if the line really belongs in the file, apply again with --allow-placeholders"
                    .to_string(),
            ],
        }
    }
}

/// The longest the line diff may take: past it the diff is still a diff,
/// only not the smallest (a region may then look larger than it is).
const DIFF_TIME: Duration = Duration::from_millis(500);

/// The placeholder that `new` puts where `old` had real lines, if any.
/// `file` is the whole file the edit changes (for a WRITE, the same as
/// `old`): a placeholder line it already holds is content, not an elision.
pub fn elided(old: &[&str], new: &[&str], file: &[u8]) -> Option<Placeholder> {
    // Most edits hold no placeholder at all: no diff for them.
    let mut candidates: Vec<usize> = new
        .iter()
        .enumerate()
        .filter(|(_, l)| is_placeholder(l.trim()))
        .map(|(i, _)| i)
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let file = String::from_utf8_lossy(file);
    let in_file: HashSet<&str> = file.lines().map(str::trim).collect();
    let in_old: HashSet<&str> = old.iter().map(|l| l.trim()).collect();
    candidates.retain(|&i| {
        let t = new[i].trim();
        !in_file.contains(t) && !in_old.contains(t)
    });
    if candidates.is_empty() {
        return None;
    }
    let old_t: Vec<&str> = old.iter().map(|l| l.trim()).collect();
    let new_t: Vec<&str> = new.iter().map(|l| l.trim()).collect();
    let in_new: HashSet<&str> = new_t.iter().copied().collect();
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &old_t,
        &new_t,
        Some(Instant::now() + DIFF_TIME),
    );
    // Changed regions: runs of ops between two equal ones, each as its old
    // and new range. Equal lines that are only punctuation or blank do
    // not end a region: a diff may pair the `}` before a
    // placeholder with any `}` of the file, and put the lines the
    // placeholder replaces on the far side of it.
    let mut regions: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    let mut open = false;
    for op in &ops {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            if !old_t[o].iter().all(|l| !l.contains(char::is_alphanumeric)) {
                open = false;
            }
            continue;
        }
        match regions.last_mut() {
            Some((ro, rn)) if open => {
                ro.end = o.end;
                rn.end = n.end;
            }
            _ => regions.push((o, n)),
        }
        open = true;
    }
    candidates.into_iter().find_map(|i| {
        let (o, n) = regions.iter().find(|(_, n)| n.contains(&i))?;
        // A placeholder-like line rewritten is no code left out.
        let removed = old_t[o.clone()]
            .iter()
            .filter(|l| !l.is_empty() && !is_placeholder(l) && !in_new.contains(*l))
            .count();
        let added = new_t[n.clone()]
            .iter()
            .filter(|l| !l.is_empty() && !is_placeholder(l) && !in_old.contains(*l))
            .count();
        (removed > added).then(|| Placeholder {
            line: i as u32 + 1,
            text: new_t[i].to_string(),
            removed,
        })
    })
}

/// [`elided`] for text: a WRITE's content over the file, or a SEARCH's
/// replacement over its pattern.
pub fn elided_text(old: &str, new: &str, file: &[u8]) -> Option<Placeholder> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    elided(&old, &new, file)
}

/// [`elided`] for one hunk of an EDIT: its old lines (kept and removed)
/// against its new lines (kept and added). The line is the placeholder's
/// among the new lines.
pub fn elided_in_hunk(hunk: &Hunk, file: &[u8]) -> Option<Placeholder> {
    // Most hunks add no placeholder: no line lists for them.
    let adds_one = hunk.lines.split_terminator('\n').any(|l| {
        l.strip_prefix('+')
            .is_some_and(|l| is_placeholder(l.trim()))
    });
    if !adds_one {
        return None;
    }
    elided(&hunk.old_lines(), &hunk.new_lines(), file)
}

/// Phrases that, in a comment, say "code left out here".
const PHRASES: &[&str] = &[
    "existing code",
    "rest of the file",
    "rest of file",
    "rest of the code",
    "rest of the function",
    "rest of the class",
    "rest of the implementation",
    "rest unchanged",
    "remains unchanged",
    "remain unchanged",
    "unchanged code",
    "stays the same",
    "remains the same",
    "remain the same",
    "same as before",
    "omitted for brevity",
    "previous code",
    "existing implementation",
    "existing methods",
    "existing imports",
    "other methods",
    "keep existing",
];

/// Words that, next to an ellipsis in a comment, say the same.
const WORDS: &[&str] = &[
    "existing",
    "rest",
    "unchanged",
    "same",
    "previous",
    "omitted",
    "remaining",
    "code",
    "other",
];

/// Whether a trimmed line is an elision placeholder: a comment (`//`, `#`,
/// `/* */`, `<!-- -->`, `--`, `;`) that names left-out code, holds only an
/// ellipsis, or has an ellipsis next to such a word. A bare `...` outside a
/// comment (valid Python) is not one, nor is a comment that quotes one
/// (`/// a placeholder such as "// ... existing code ..."`): the words in
/// double quotes or backticks are left out before looking.
pub fn is_placeholder(line: &str) -> bool {
    const OPENERS: &[&str] = &["//", "#", "/*", "<!--", "--", ";", "{/*", "*"];
    let Some(body) = OPENERS.iter().find_map(|o| line.strip_prefix(o)) else {
        return false;
    };
    let body = unquoted(body).to_lowercase();
    if PHRASES.iter().any(|p| body.contains(p)) {
        return true;
    }
    let ellipsis = body.contains("...") || body.contains('…');
    // A comment that is nothing but an ellipsis: `// ...`, `<!-- ... -->`.
    let bare = body
        .trim()
        .trim_end_matches("-->")
        .trim_end_matches("*/}")
        .trim_end_matches("*/")
        .trim();
    // Whole words only: "decode" is not "code", "restore" not "rest".
    let has_word = body
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| WORDS.contains(&word));
    ellipsis && (matches!(bare, "..." | "…") || has_word)
}

/// `text` without its spans in double quotes or backticks (each closed
/// by the same mark; an unclosed one is kept). Apostrophes are English,
/// not quotes.
fn unquoted(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['"', '`']) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['"', '`']) {
        let mark = &rest[at..at + 1];
        match rest[at + 1..].find(mark) {
            Some(end) => {
                out.push_str(&rest[..at]);
                rest = &rest[at + 1 + end + 1..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "def a():\n    return 1\n\ndef b():\n    return 2";

    #[test]
    fn a_placeholder_where_lines_were_is_caught_whatever_the_byte_count() {
        // Longer in bytes, fewer lines: the byte rule of old let it through.
        let new = "def a():\n    return 10\n\n# ... existing code ...";
        let p = elided_text(TWO, new, TWO.as_bytes()).expect("refused");
        assert_eq!((p.line, p.removed), (4, 3));
        assert_eq!(p.text, "# ... existing code ...");
        let p = elided_text(TWO, "def a():\n    # ... existing code ...", TWO.as_bytes());
        assert_eq!(p.map(|p| p.line), Some(2));
    }

    #[test]
    fn the_diff_pairing_braces_elsewhere_does_not_hide_the_removal() {
        let file: String = (1..=8)
            .map(|i| format!("function f{i}() {{\n  return {i};\n}}\n\n"))
            .collect();
        let new = "function f1() {\n  return 100;\n}\n\n// ... existing code ...\n";
        let p = elided_text(&file, new, file.as_bytes()).expect("refused");
        assert_eq!((p.line, p.removed), (5, 15));
    }

    #[test]
    fn a_placeholder_beside_kept_or_rewritten_code_is_an_edit() {
        // Added beside what stays: nothing is removed.
        let new = format!("{TWO}\n\n# ... rest of the file ...");
        assert_eq!(elided_text(TWO, &new, TWO.as_bytes()), None);
        // A changed line and a comment: one removed, two written.
        assert_eq!(
            elided_text(
                "x = 1",
                "x = 2\n# ... rest of file ...\ny = 3",
                "x = 1\n".as_bytes()
            ),
            None
        );
        // Re-indented lines are kept lines, not removed ones.
        let new = "    def a():\n        return 1\n    # ... existing code ...\n    def b():\n        return 2";
        assert_eq!(elided_text(TWO, new, TWO.as_bytes()), None);
    }

    #[test]
    fn a_rewritten_placeholder_like_comment_is_no_removed_code() {
        // From this project's history: a doc line naming the phrase,
        // rewritten as a longer one.
        let old = "/// Allow WRITE content with elision ... existing code ...";
        let new = "/// Allow WRITE and SEARCH with elision ... existing code ...";
        assert_eq!(elided_text(old, new, old.as_bytes()), None);
    }

    #[test]
    fn a_placeholder_the_file_or_old_text_holds_is_content() {
        let file = "# ... existing code ...\nx = 1\ny = 2\n";
        assert_eq!(
            elided_text("x = 1\ny = 2", "# ... existing code ...", file.as_bytes()),
            None
        );
        assert_eq!(
            elided_text(
                "# ... existing code ...\nx = 1",
                "# ... existing code ...",
                file.as_bytes()
            ),
            None
        );
    }

    #[test]
    fn a_hunk_is_judged_by_its_old_and_new_lines() {
        let mut h = Hunk::new();
        for (tag, line) in [
            (' ', "fn a() {"),
            ('-', "    one();"),
            ('-', "    two();"),
            ('+', "    // ... existing code ..."),
            (' ', "}"),
        ] {
            h.push(tag, line);
        }
        let file = "fn a() {\n    one();\n    two();\n}\n";
        let p = elided_in_hunk(&h, file.as_bytes()).expect("refused");
        assert_eq!((p.line, p.removed), (2, 2));
        // Only added, nothing removed: a comment, kept.
        let mut h = Hunk::new();
        h.push(' ', "fn a() {");
        h.push('+', "    // ... other methods");
        assert_eq!(elided_in_hunk(&h, file.as_bytes()), None);
    }

    proptest::proptest! {
        /// Any text, lines of code, comments and placeholders mixed: the
        /// guard answers without panicking, and never refuses an edit that
        /// removes nothing (the old lines all kept, in order).
        #[test]
        fn never_panics_and_spares_pure_additions(
            old in proptest::collection::vec("(    )?(x|y|}|# ...|// ... existing code ...|\\PC{0,6})", 0..12),
            added in proptest::collection::vec(("[0-9]", "(    )?(z|// ...|# rest of file|\\PC{0,6})"), 0..6),
        ) {
            let mut new: Vec<String> = old.clone();
            for (at, line) in &added {
                let at = at.parse::<usize>().unwrap() % (new.len() + 1);
                new.insert(at, line.clone());
            }
            let old_text = old.join("\n");
            let got = elided_text(&old_text, &new.join("\n"), old_text.as_bytes());
            proptest::prop_assert_eq!(got, None);
            // Reversed: whatever it says, it says it without a panic.
            let _ = elided_text(&new.join("\n"), &old_text, new.join("\n").as_bytes());
        }
    }

    #[test]
    fn placeholder_lines_and_ordinary_comments() {
        for line in [
            "// ... existing code ...",
            "# rest of file unchanged",
            "<!-- ... -->",
            "// ...",
            "/* ... rest of the code ... */",
            "// …other methods",
        ] {
            assert!(is_placeholder(line), "{line}");
        }
        for line in [
            "/// Allow placeholders such as \"// ... existing code ...\"",
            "# the `# rest of file unchanged` comment models write",
            "# compute the rest",
            "...",
            "// see the docs...",
            "x = '...'",
            "// decode the input...",
            "// restore state...",
        ] {
            assert!(!is_placeholder(line), "{line}");
        }
    }
}
