//! Which syntax a reply is written in (syntaxes.md §2).
//!
//! Owns the block openers of every syntax and the choice between them. One
//! pass over the lines finds blocks in document order: an opener at column
//! 1 claims its block up to its closing line, and nothing inside a claimed
//! block counts (a CSL WRITE of a `.patch` file holds diff headers that are
//! content, not blocks). A block whose closing line never comes claims only
//! its opener: the front end reports it, and detection must not swallow
//! the rest of the reply. Only a syntax's own openers count; HTML, JSX and
//! shell scripts have none of them.

use super::Syntax;
use super::ahead::Ahead;
use crate::csl::Delimiters;

/// One block of some syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub syntax: Syntax,
    /// 1-based line of the opener.
    pub line: u32,
}

/// The line that starts at byte `pos` of `text`, without its line end
/// (LF, CRLF), and where the next one starts; `None` past the end.
fn line_at(text: &str, pos: usize) -> Option<(&str, usize)> {
    if pos >= text.len() {
        return None;
    }
    let rest = &text[pos..];
    let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
        Some(n) => (&rest[..n], pos + n + 1),
        None => (rest, text.len()),
    };
    Some((line.strip_suffix('\r').unwrap_or(line), next))
}

/// Where blocks close, remembered across blocks so that a reply of many
/// unclosed openers is read about once, not once per opener.
#[derive(Default)]
struct Closers<'t> {
    /// For each kind of closing line: where the last search for it
    /// started, and the start of the line after the closing line it found
    /// (`None`: none from there to the end).
    found: std::collections::HashMap<String, (usize, Option<usize>)>,
    /// The closing lines of SHAM, NESL and TELT blocks, by text, from the
    /// first such block that never closes on: their kinds are as many as
    /// the reply's IDs, so remembering each kind alone would still rescan
    /// the rest of a reply of unclosed blocks with distinct IDs once per
    /// block.
    ahead: Option<Ahead<'t>>,
    look_ahead: bool,
}

impl<'t> Closers<'t> {
    /// Where the line after the first line from `next` on that `pred`
    /// picks starts, remembered as `key`.
    fn until(
        &mut self,
        text: &str,
        next: usize,
        key: &str,
        pred: &dyn Fn(&str) -> bool,
    ) -> Option<usize> {
        if let Some(&(from, found)) = self.found.get(key)
            && from <= next
            && found.is_none_or(|end| end > next)
        {
            return found;
        }
        let mut at = next;
        let mut found = None;
        while let Some((l, after)) = line_at(text, at) {
            if pred(l) {
                found = Some(after);
                break;
            }
            at = after;
        }
        self.found.insert(key.to_string(), (next, found));
        found
    }

    /// [`Closers::until`] the line `end` (trailing whitespace allowed), a
    /// hashbang block's closing line.
    fn until_line(&mut self, text: &'t str, next: usize, end: &str) -> Option<usize> {
        if let Some(ahead) = &self.ahead
            && !ahead.may_come(end, next)
        {
            return None;
        }
        let found = self.until(text, next, end, &|l| l.trim_end() == end);
        if found.is_none()
            && self.look_ahead
            && self.ahead.is_none()
            && let Some(from) = super::lines::line_at(text, next, 1)
        {
            let key =
                |l: &'t str| (l.starts_with("#!") || l.starts_with("--END ")).then(|| l.trim_end());
            self.ahead = Some(Ahead::new(text, &from, key, |_| false));
        }
        found
    }
}

/// Every block in `text`, in document order. One pass, no copy of the
/// lines: most lines are passed over on their first byte.
pub fn blocks(text: &str, delims: &Delimiters) -> Vec<Block> {
    blocks_with(text, delims, true)
}

/// [`blocks`]; `look_ahead`: whether to use an [`Ahead`] (the tests check
/// that it changes nothing but the time taken).
pub(super) fn blocks_with(text: &str, delims: &Delimiters, look_ahead: bool) -> Vec<Block> {
    let csl_first = delims.start.as_bytes().first().copied();
    let mut closers = Closers {
        look_ahead,
        ..Closers::default()
    };
    let csl_end = CslEnd::new(delims);
    let mut found = Vec::new();
    let mut fence = Fence::default();
    let (mut pos, mut line_no) = (0, 1u32);
    while let Some((line, next)) = line_at(text, pos) {
        let first = line.as_bytes().first().copied();
        let cml = fence.cml_allowed(line);
        let candidate = first.is_some_and(|b| {
            Some(b) == csl_first || matches!(b, b'<' | b'-' | b'd' | b'*' | b'#' | b' ' | b'\t')
        });
        let opened = if candidate {
            opener(text, pos, line, next, delims, &csl_end, &mut closers, cml)
        } else {
            None
        };
        let Some((syntax, close)) = opened else {
            pos = next;
            line_no += 1;
            continue;
        };
        found.push(Block {
            syntax,
            line: line_no,
        });
        let end = close.unwrap_or(next);
        line_no += memchr::memchr_iter(b'\n', &text.as_bytes()[pos..end]).count() as u32;
        pos = end;
    }
    found
}

/// Markdown code fences, as far as CML cares: inside a fence labelled with
/// a language other than XML (```` ```html ````, ```` ```jsx ````,
/// ```` ```sh ````…) a line is code, never a CML element. CML itself is
/// often fenced as ```` ```xml ```` or not labelled at all: those are read.
#[derive(Debug, Default)]
pub(super) struct Fence {
    /// The open fence: its character, its length, and whether it is
    /// labelled with another language.
    open: Option<(u8, usize, bool)>,
}

impl Fence {
    /// Takes the next line (one not inside a block); whether a CML element
    /// may start on it.
    pub(super) fn cml_allowed(&mut self, line: &str) -> bool {
        let trimmed = line.trim_start_matches(' ');
        if let Some(&c @ (b'`' | b'~')) = trimmed.as_bytes().first() {
            let n = trimmed.bytes().take_while(|&b| b == c).count();
            if n >= 3 {
                let info = trimmed[n..].trim();
                match self.open {
                    Some((open, len, _)) if open == c && n >= len && info.is_empty() => {
                        self.open = None;
                    }
                    None => {
                        let lang = info.split_whitespace().next().unwrap_or("");
                        let code = !(lang.is_empty()
                            || lang.eq_ignore_ascii_case("xml")
                            || lang.eq_ignore_ascii_case("cml"));
                        self.open = Some((c, n, code));
                    }
                    Some(_) => {}
                }
                return false;
            }
        }
        !matches!(self.open, Some((_, _, true)))
    }
}

/// The syntax whose block opens with `line` (at `pos`, the next line at
/// `next`), and where the line after its closing line starts (`None`: it
/// never closes, or has no closing line of its own). `cml`: whether a CML
/// element may start here (not inside another language's code fence).
#[allow(clippy::too_many_arguments)]
fn opener<'t>(
    text: &'t str,
    pos: usize,
    line: &str,
    next: usize,
    delims: &Delimiters,
    csl_end: &CslEnd,
    closers: &mut Closers<'t>,
    cml: bool,
) -> Option<(Syntax, Option<usize>)> {
    let first = *line.as_bytes().first()?;
    // Where the block's closing line is, by the kind of closing line.
    let mut until = |key: &str, pred: &dyn Fn(&str) -> bool| closers.until(text, next, key, pred);
    // CSL first: its delimiters are configurable and may start with any
    // character.
    if let Some(rest) = line.strip_prefix(delims.start.as_str()) {
        for name in ["WRITE", "SEARCH", "RUN", "TASKS"] {
            if rest.starts_with(name) {
                if name == "TASKS" {
                    // Its operations are blocks of their own.
                    return Some((Syntax::Csl, None));
                }
                // Searched for by its text (most replies are CSL: this is
                // the hot path), remembered like the other closing lines.
                if let Some(&(from, found)) = closers.found.get("csl")
                    && from <= next
                    && found.is_none_or(|end| end > next)
                {
                    return Some((Syntax::Csl, found));
                }
                let found = csl_end.after(text, next);
                closers.found.insert("csl".to_string(), (next, found));
                return Some((Syntax::Csl, found));
            }
        }
    }
    match first {
        b'<' => {
            if conflict_marker(line, b'<', "SEARCH").is_some() {
                return Some((
                    Syntax::Aider,
                    until("aider", &|l| {
                        conflict_marker(l, b'>', "REPLACE").is_some()
                            || conflict_marker(l, b'+', "REPLACE").is_some()
                    }),
                ));
            }
            if line.trim_end() == "<<<FILE>>>" || line.trim_end() == "<<<EXPLANATION>>>" {
                return Some((
                    Syntax::Replacer,
                    until("replacer", &|l| l.trim_end() == "<<<END>>>"),
                ));
            }
            cml_opener(line).filter(|_| cml).map(|name| {
                let self_closing = line.trim_end().ends_with("/>");
                let close = format!("</{name}>");
                let end = if self_closing || line.contains(&close) {
                    Some(next)
                } else {
                    until(&close, &|l| l.trim_start().starts_with(&close))
                };
                (Syntax::Cml, end)
            })
        }
        b'-' => {
            if conflict_marker(line, b'-', "SEARCH").is_some() {
                return Some((
                    Syntax::Aider,
                    until("cline", &|l| conflict_marker(l, b'+', "REPLACE").is_some()),
                ));
            }
            diff_header(text, pos)
        }
        b'd' if line.starts_with("diff --git ") => {
            // The `---`/`+++` pair after it opens the block; a header of
            // its own (a rename, a mode change) is a block too.
            let mut at = next;
            while let Some((l, after)) = line_at(text, at) {
                if l.starts_with("diff --git ") || l.starts_with("@@") {
                    break;
                }
                if l.starts_with("--- ") {
                    return diff_header(text, at);
                }
                at = after;
            }
            Some((Syntax::Diff, None))
        }
        // Codex reads its markers with surrounding whitespace ignored.
        b'*' | b' ' | b'\t' if line.trim() == "*** Begin Patch" => Some((
            Syntax::Patch,
            until("patch", &|l| l.trim() == "*** End Patch"),
        )),
        b'#' => {
            if let Some(id) = hashbang_id(line, "#!SHAM [@three-char-SHA-256:") {
                let end = format!("#!END_SHAM_{id}");
                return Some((Syntax::Sham, closers.until_line(text, next, &end)));
            }
            // NESL, SHAM's later spelling: `#!nesl […: ID]` … `#!end_ID`.
            for prefix in [
                "#!nesl [@three-char-SHA-256:",
                "#!NESL [@three-char-SHA-256:",
            ] {
                if let Some(id) = hashbang_id(line, prefix) {
                    let end = format!("#!end_{id}");
                    return Some((Syntax::Sham, closers.until_line(text, next, &end)));
                }
            }
            if let Some(id) = hashbang_id(line, "#!telt [3-char SHA:") {
                let end = format!("--END {id}--");
                return Some((Syntax::Telt, closers.until_line(text, next, &end)));
            }
            None
        }
        _ => None,
    }
}

/// A CSL block's closing line, `<---END--->` with the reply's delimiters,
/// found by searching for its text rather than by looking at every line
/// of the block: a reply of many small blocks has hundreds of thousands of
/// content lines. Made once per reply.
struct CslEnd {
    line: String,
    finder: memchr::memmem::Finder<'static>,
}

impl CslEnd {
    fn new(delims: &Delimiters) -> CslEnd {
        let line = format!("{}END{}", delims.start, delims.end);
        let finder = memchr::memmem::Finder::new(line.as_bytes()).into_owned();
        CslEnd { line, finder }
    }

    /// Where the line after the first END line at or after `from` (a line
    /// start) starts; trailing whitespace is allowed on the END line.
    fn after(&self, text: &str, from: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        for hit in self.finder.find_iter(&bytes[from..]) {
            let at = from + hit;
            if at > from && bytes[at - 1] != b'\n' {
                continue;
            }
            let (line, next) = line_at(text, at)?;
            if line.trim_end() == self.line {
                return Some(next);
            }
        }
        None
    }
}

/// `<<<<<<< SEARCH` and its kin: 5 to 9 of `c`, optional spaces, `word`.
/// Returns the number of marker characters.
pub fn conflict_marker(line: &str, c: u8, word: &str) -> Option<usize> {
    let n = line.bytes().take_while(|&b| b == c).count();
    if !(5..=9).contains(&n) {
        return None;
    }
    (line[n..].trim() == word).then_some(n)
}

/// The ID of a `#!SHAM [@three-char-SHA-256: ID]` or `#!telt [3-char SHA:
/// ID]` line.
fn hashbang_id<'l>(line: &'l str, prefix: &str) -> Option<&'l str> {
    let rest = line.strip_prefix(prefix)?.trim_start();
    let id = rest.split(']').next()?.trim();
    (!id.is_empty() && id.len() <= 16 && id.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(id)
}

/// A CML top-level element that opens here: its name, when the line starts
/// with it and carries its required attribute.
pub(super) fn cml_opener(line: &str) -> Option<&'static str> {
    const ELEMENTS: [(&str, &[&str]); 6] = [
        ("tasks", &[]),
        ("edit", &["path="]),
        ("write", &["path="]),
        ("run", &[]),
        ("move", &["from=", "to="]),
        ("remove", &["path="]),
    ];
    let rest = line.strip_prefix('<')?;
    ELEMENTS.iter().find_map(|(name, required)| {
        let after = rest.strip_prefix(name)?;
        // `<tasks>`, `<tasks version="1.0">`, `<run>`; never `<runner>`.
        let next = after.chars().next()?;
        if !(next == '>' || next == ' ' || next == '/') {
            return None;
        }
        required
            .iter()
            .all(|attr| after.contains(attr))
            .then_some(*name)
    })
}

/// A unified diff's file header at byte `pos` (`--- ` then `+++ `, then
/// a hunk): the block runs over the hunks that follow.
fn diff_header(text: &str, pos: usize) -> Option<(Syntax, Option<usize>)> {
    let (minus, at) = line_at(text, pos)?;
    let (plus, at) = line_at(text, at)?;
    let (hunk, mut end) = line_at(text, at)?;
    if !minus.starts_with("--- ") || !plus.starts_with("+++ ") || !hunk.starts_with("@@") {
        return None;
    }
    while let Some((next, after)) = line_at(text, end) {
        let hunk_line = next.starts_with("@@")
            || next.starts_with(' ')
            || next.starts_with('+')
            || next.starts_with('\\')
            || next.is_empty()
            || (next.starts_with('-') && !next.starts_with("--- "));
        if !hunk_line {
            break;
        }
        end = after;
    }
    Some((Syntax::Diff, Some(end)))
}

/// The syntax with the most blocks; on a tie, any purpose-built syntax
/// before `diff` (models show diffs in prose to explain), then the one
/// whose first block comes first. `None` when there are no blocks.
pub fn choose(blocks: &[Block]) -> Option<Syntax> {
    let mut best: Option<(Syntax, usize, bool, u32)> = None;
    for syntax in Syntax::ALL {
        let mine = blocks.iter().filter(|b| b.syntax == syntax);
        let count = mine.clone().count();
        let Some(first) = mine.map(|b| b.line).min() else {
            continue;
        };
        let purpose_built = syntax != Syntax::Diff;
        let better = match best {
            None => true,
            Some((_, n, p, f)) => {
                (count, purpose_built, std::cmp::Reverse(first)) > (n, p, std::cmp::Reverse(f))
            }
        };
        if better {
            best = Some((syntax, count, purpose_built, first));
        }
    }
    best.map(|(s, ..)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntaxes(text: &str) -> Vec<(Syntax, u32)> {
        blocks(text, &Delimiters::default())
            .into_iter()
            .map(|b| (b.syntax, b.line))
            .collect()
    }

    #[test]
    fn each_syntax_is_found_by_its_own_opener() {
        let cases: &[(&str, Syntax)] = &[
            ("<---WRITE file=\"a\"--->\nx\n<---END--->\n", Syntax::Csl),
            (
                "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
                Syntax::Aider,
            ),
            (
                "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n",
                Syntax::Aider,
            ),
            (
                "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
                Syntax::Patch,
            ),
            ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", Syntax::Diff),
            (
                "#!SHAM [@three-char-SHA-256: k7m]\naction = \"file_write\"\n#!END_SHAM_k7m\n",
                Syntax::Sham,
            ),
            (
                "#!telt [3-char SHA: a1b]\n=== CREATE_FILE ===\n--END a1b--\n",
                Syntax::Telt,
            ),
            (
                "```sh nesl\n#!nesl [@three-char-SHA-256: v7r]\naction = \"ls\"\n#!end_v7r\n```\n",
                Syntax::Sham,
            ),
            (
                "<<<FILE>>>\n/a\n<<<OVERWRITE>>>\nx\n<<<END>>>\n",
                Syntax::Replacer,
            ),
            ("<write path=\"a\">x</write>\n", Syntax::Cml),
            ("<remove path=\"a\"/>\n", Syntax::Cml),
        ];
        for (text, syntax) in cases {
            let found = syntaxes(text);
            let first = found.first().map(|(s, _)| *s);
            assert_eq!(first, Some(*syntax), "{text:?}: {found:?}");
            assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        }
    }

    #[test]
    fn prose_html_and_scripts_have_no_blocks() {
        let text = "Here is the plan.\n\n```html\n<div class=\"x\">\n<run-button/>\n<write>\n</div>\n```\n\
                    ```sh\n#!/bin/sh\necho '=== done ==='\ncat <<<\"x\"\n---\n```\n\
                    | a | b |\n|---|---|\n<edit>\n";
        assert_eq!(syntaxes(text), []);
    }

    /// SHAM and TELT are chosen for their own replies, and shell scripts
    /// with `#!`, `===`, `--…--` or `<<<` lines, markdown and JSX in
    /// fences are never taken for them.
    #[test]
    fn sham_and_telt_openers_are_only_their_own() {
        let sham = "Intro\n```sh\n#!SHAM [@three-char-SHA-256: k7m]\naction = \"ls\"\n#!END_SHAM_k7m\n```\n";
        let telt = "```telt\n#!telt [3-char SHA: a1b]\n=== LS ===\n--END a1b--\n```\n";
        let d = Delimiters::default();
        assert_eq!(choose(&blocks(sham, &d)), Some(Syntax::Sham));
        assert_eq!(choose(&blocks(telt, &d)), Some(Syntax::Telt));
        let not_blocks = "```sh\n#!/bin/bash\n#!SHAM is a format\n#!telt\n#!telt [3-char SHA: ]\n\
                          echo '=== BUILD ==='\n=== FILE_WRITE ===\n--PATH abc--\n--END abc--\n\
                          cat <<<\"x\"\n#!END_SHAM_k7m\n#!end_v7r\n```\n\
                          # === Title ===\n\n```jsx\n<Write path=\"a\">x</Write>\n```\n\
                          ```python\n#!/usr/bin/env python3\nprint('--END k4x--')\n```\n";
        assert_eq!(syntaxes(not_blocks), []);
        // A SHAM block quoted inside a TELT value is content, not a block.
        let nested = "#!telt [3-char SHA: a1b]\n=== CREATE_FILE ===\n--FILE a1b--\nx.md\n--CONTENT a1b--\n#!SHAM [@three-char-SHA-256: k7m]\n#!END_SHAM_k7m\n--END a1b--\n";
        assert_eq!(syntaxes(nested), [(Syntax::Telt, 1)]);
    }

    #[test]
    fn cml_is_read_in_xml_fences_and_bare_text_only() {
        let cml = "<tasks>\n<write path=\"a\"><![CDATA[x]]></write>\n</tasks>\n";
        for fence in ["", "```\n", "```xml\n", "~~~XML\n"] {
            let text = format!("prose\n{fence}{cml}");
            assert_eq!(
                syntaxes(&text),
                [(Syntax::Cml, 2 + u32::from(!fence.is_empty()))],
                "{fence}"
            );
        }
        for lang in ["html", "jsx", "tsx", "vue", "sh", "markdown"] {
            let text = format!("```{lang}\n{cml}<run>make</run>\n```\n");
            assert_eq!(syntaxes(&text), [], "{lang}");
        }
        // After the fence closes, elements count again; a longer fence is
        // closed only by one at least as long.
        let text = format!("````html\n```\n{cml}````\n{cml}");
        assert_eq!(syntaxes(&text), [(Syntax::Cml, 7)]);
    }

    #[test]
    fn html_jsx_and_shell_with_cml_like_tags_are_not_cml() {
        // Real markup: element names CML does not have, or CML names
        // without their required attribute, or inside a labelled fence.
        let text = "```jsx\n<tasks>\nexport const Run = () => <run>go</run>;\n```\n\
                    ```html\n<write path=\"x\">y</write>\n```\n\
                    <edit>\n<write>\n<remove/>\n<move from=\"a\">\n<runner>\n<tasksList>\n\
                    #!/bin/sh\necho '=== x ==='\ncat <<<\"y\"\n";
        assert_eq!(syntaxes(text), []);
    }

    #[test]
    fn content_inside_a_block_is_not_a_block() {
        let text = "<---WRITE file=\"fix.patch\"--->\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n<---END--->\n";
        assert_eq!(syntaxes(text), [(Syntax::Csl, 1)]);
    }

    #[test]
    fn the_most_blocks_win_and_diff_loses_ties() {
        let csl = "<---WRITE file=\"a\"--->\nx\n<---END--->\n";
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        let both = format!("{diff}{csl}");
        assert_eq!(
            choose(&blocks(&both, &Delimiters::default())),
            Some(Syntax::Csl)
        );
        let two_diffs = format!("{diff}{diff}{csl}");
        assert_eq!(
            choose(&blocks(&two_diffs, &Delimiters::default())),
            Some(Syntax::Diff)
        );
        assert_eq!(choose(&[]), None);
    }

    #[test]
    fn blocks_carry_their_line_numbers() {
        let text = "prose\r\n<---WRITE file=\"a\"--->\r\nx\r\n<---END--->\r\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n*** Begin Patch\n*** End Patch";
        assert_eq!(
            syntaxes(text),
            [(Syntax::Csl, 2), (Syntax::Diff, 6), (Syntax::Patch, 12)]
        );
    }

    #[test]
    fn an_unclosed_block_claims_only_its_opener() {
        let text = "<---WRITE file=\"a\"--->\nx\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        assert_eq!(syntaxes(text), [(Syntax::Csl, 1), (Syntax::Aider, 3)]);
    }
}
