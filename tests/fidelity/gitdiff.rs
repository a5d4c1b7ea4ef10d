//! An independent reader of `git diff` output, the oracle's own: it never
//! uses clada's parsers, so a bug there cannot hide itself here.
//!
//! It reads exactly what `git diff --binary -M --full-index` prints for
//! text changes (headers, hunks, `\ No newline at end of file`) and can
//! print a section back; [`render`] of a parsed diff gives the input byte
//! for byte, which the corpus loader checks for every entry.

/// One `diff --git` section: a file's change.
#[derive(Clone, Debug)]
pub struct Section {
    /// The header lines, raw, from `diff --git` up to the first `@@`
    /// (including `---` and `+++`).
    pub header: Vec<Vec<u8>>,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    pub old_mode: Option<String>,
    pub new_mode: Option<String>,
    pub hunks: Vec<Hunk>,
}

impl Section {
    /// `A`, `D`, `R` or `M`, as meta.json says it.
    pub fn status(&self) -> char {
        match (&self.old_path, &self.new_path) {
            (None, Some(_)) => 'A',
            (Some(_), None) => 'D',
            (Some(a), Some(b)) if a != b => 'R',
            _ => 'M',
        }
    }

    /// The file's mode changes (exec bit, symlink) between the two sides.
    pub fn mode_changes(&self) -> bool {
        match (&self.old_mode, &self.new_mode) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        }
    }
}

/// One hunk: its numbers, git's function-context heading and its lines.
#[derive(Clone, Debug)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    /// What follows the second `@@` (with its leading space), raw.
    pub heading: Vec<u8>,
    pub lines: Vec<HunkLine>,
}

/// A hunk line: `tag` is `b' '`, `b'-'` or `b'+'`; `text` has no line
/// feed (a CRLF line keeps its `\r`); `eol` is false when git printed
/// `\ No newline at end of file` after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkLine {
    pub tag: u8,
    pub text: Vec<u8>,
    pub eol: bool,
}

/// Splits `bytes` into lines without their `\n`; a final line without
/// one is kept (and reported as such by the second value).
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// Reads a whole `git diff`; an error says what was not understood.
pub fn parse(bytes: &[u8]) -> Result<Vec<Section>, String> {
    let all = lines(bytes);
    let mut sections: Vec<Section> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        if !line.starts_with(b"diff --git ") {
            return Err(format!(
                "line {}: expected `diff --git`, found {:?}",
                i + 1,
                String::from_utf8_lossy(line)
            ));
        }
        let mut s = Section {
            header: vec![line.to_vec()],
            old_path: None,
            new_path: None,
            old_mode: None,
            new_mode: None,
            hunks: Vec::new(),
        };
        let (mut a, mut b) = split_git_line(&line[11..])?;
        let mut created = false;
        let mut deleted = false;
        i += 1;
        while i < all.len() && !all[i].starts_with(b"@@ ") && !all[i].starts_with(b"diff --git ") {
            let h = all[i];
            s.header.push(h.to_vec());
            let text = String::from_utf8_lossy(h);
            if let Some(m) = text.strip_prefix("old mode ") {
                s.old_mode = Some(m.to_string());
            } else if let Some(m) = text.strip_prefix("new mode ") {
                s.new_mode = Some(m.to_string());
            } else if let Some(m) = text.strip_prefix("new file mode ") {
                s.new_mode = Some(m.to_string());
                created = true;
            } else if let Some(m) = text.strip_prefix("deleted file mode ") {
                s.old_mode = Some(m.to_string());
                deleted = true;
            } else if h.starts_with(b"rename from ") {
                a = unquote(&h[12..])?;
            } else if h.starts_with(b"rename to ") {
                b = unquote(&h[10..])?;
            } else if h.starts_with(b"index ") {
                // `index a..b 100644`: the mode of an unchanged-mode file.
                if let Some(m) = text.split(' ').nth(2) {
                    s.old_mode.get_or_insert_with(|| m.to_string());
                    s.new_mode.get_or_insert_with(|| m.to_string());
                }
            } else if h.starts_with(b"--- ") {
                if &h[4..] != b"/dev/null" {
                    a = strip_prefix(&unquote(&h[4..])?, "a/")?;
                }
            } else if h.starts_with(b"+++ ") {
                if &h[4..] != b"/dev/null" {
                    b = strip_prefix(&unquote(&h[4..])?, "b/")?;
                }
            } else if h.starts_with(b"GIT binary patch") || h.starts_with(b"Binary files") {
                return Err(format!("{a}: a binary patch"));
            } else if h.starts_with(b"copy ") {
                return Err(format!("{a}: a copy"));
            }
            i += 1;
        }
        s.old_path = (!created).then_some(a);
        s.new_path = (!deleted).then_some(b);
        while i < all.len() && all[i].starts_with(b"@@ ") {
            let (hunk, next) = parse_hunk(&all, i)?;
            s.hunks.push(hunk);
            i = next;
        }
        sections.push(s);
    }
    Ok(sections)
}

/// Reads the hunk whose header is `all[at]`; returns it and the index of
/// the line after it.
fn parse_hunk(all: &[&[u8]], at: usize) -> Result<(Hunk, usize), String> {
    let head = String::from_utf8_lossy(all[at]).into_owned();
    let bad = || format!("line {}: bad hunk header {head:?}", at + 1);
    let rest = head.strip_prefix("@@ -").ok_or_else(bad)?;
    let (ranges, heading) = rest.split_once(" @@").ok_or_else(bad)?;
    let (old, new) = ranges.split_once(" +").ok_or_else(bad)?;
    let range = |r: &str| -> Result<(usize, usize), String> {
        let (s, n) = r.split_once(',').unwrap_or((r, "1"));
        Ok((s.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?))
    };
    let (old_start, old_len) = range(old)?;
    let (new_start, new_len) = range(new)?;
    // The heading's bytes, raw (the function context may be any bytes).
    let heading = all[at][all[at].len() - heading.len()..].to_vec();
    let mut hunk = Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
        heading,
        lines: Vec::new(),
    };
    let (mut old_left, mut new_left) = (old_len, new_len);
    let mut i = at + 1;
    while old_left > 0 || new_left > 0 {
        let line = *all
            .get(i)
            .ok_or_else(|| format!("hunk at line {} cut short", at + 1))?;
        let tag = *line
            .first()
            .ok_or_else(|| format!("line {}: empty hunk line", i + 1))?;
        match tag {
            b' ' if old_left > 0 && new_left > 0 => {
                old_left -= 1;
                new_left -= 1;
            }
            b'-' if old_left > 0 => old_left -= 1,
            b'+' if new_left > 0 => new_left -= 1,
            _ => return Err(format!("line {}: unexpected hunk line", i + 1)),
        }
        hunk.lines.push(HunkLine {
            tag,
            text: line[1..].to_vec(),
            eol: true,
        });
        i += 1;
        if all.get(i).is_some_and(|l| l.starts_with(b"\\")) {
            hunk.lines.last_mut().expect("a line was pushed").eol = false;
            i += 1;
        }
    }
    Ok((hunk, i))
}

/// `a/x b/x` (each side perhaps quoted) → the two paths without prefixes.
fn split_git_line(rest: &[u8]) -> Result<(String, String), String> {
    let text = String::from_utf8(rest.to_vec()).map_err(|_| "a path that is not UTF-8")?;
    if text.starts_with('"') {
        let end = quoted_end(&text)?;
        let a = unquote(&text.as_bytes()[..end])?;
        let b = unquote(text[end..].trim_start().as_bytes())?;
        return Ok((strip_prefix(&a, "a/")?, strip_prefix(&b, "b/")?));
    }
    if let Some(q) = text.find(" \"b/") {
        let a = strip_prefix(&text[..q], "a/")?;
        let b = unquote(&text.as_bytes()[q + 1..])?;
        return Ok((a, strip_prefix(&b, "b/")?));
    }
    // Unquoted and ambiguous when a path holds " b/": both sides are the
    // same path unless rename headers follow, which then override them.
    let half = text.len().saturating_sub(1) / 2;
    if text.len() % 2 == 1
        && text.is_char_boundary(half)
        && text[..half] == format!("a/{}", &text[half + 3..])
    {
        return Ok((text[2..half].to_string(), text[half + 3..].to_string()));
    }
    let (a, b) = text.split_once(" b/").ok_or("bad `diff --git` line")?;
    Ok((strip_prefix(a, "a/")?, b.to_string()))
}

fn quoted_end(text: &str) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err("an unterminated quoted path".into())
}

fn strip_prefix(path: &str, prefix: &str) -> Result<String, String> {
    path.strip_prefix(prefix)
        .map(str::to_string)
        .ok_or_else(|| format!("path {path:?} lacks {prefix}"))
}

/// Git's C-style quoting undone (`"a\tb\303\251"`); an unquoted path is
/// returned as it is.
pub fn unquote(raw: &[u8]) -> Result<String, String> {
    if raw.first() != Some(&b'"') {
        return String::from_utf8(raw.to_vec()).map_err(|_| "a path that is not UTF-8".into());
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < raw.len() {
        match raw[i] {
            b'"' => break,
            b'\\' => {
                let c = *raw.get(i + 1).ok_or("a path ending in a backslash")?;
                i += 2;
                out.push(match c {
                    b'a' => 7,
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 11,
                    b'f' => 12,
                    b'r' => b'\r',
                    b'0'..=b'7' => {
                        let digits = raw.get(i - 1..i + 2).ok_or("a short octal escape")?;
                        i += 2;
                        let s = std::str::from_utf8(digits).map_err(|_| "bad octal")?;
                        u8::from_str_radix(s, 8).map_err(|_| "bad octal escape")?
                    }
                    other => other,
                });
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "a path that is not UTF-8".into())
}

/// A hunk header as git prints it (`-5` for a one-line range, `-5,0`).
pub fn hunk_header(old_start: usize, old_len: usize, new_start: usize, new_len: usize) -> String {
    let range = |s: usize, n: usize| {
        if n == 1 {
            format!("{s}")
        } else {
            format!("{s},{n}")
        }
    };
    format!(
        "@@ -{} +{} @@",
        range(old_start, old_len),
        range(new_start, new_len)
    )
}

/// A hunk's lines as a diff prints them.
pub fn render_hunk_lines(hunk: &Hunk, out: &mut Vec<u8>) {
    for line in &hunk.lines {
        out.push(line.tag);
        out.extend_from_slice(&line.text);
        out.push(b'\n');
        if !line.eol {
            out.extend_from_slice(b"\\ No newline at end of file\n");
        }
    }
}

/// The sections printed back as git printed them.
pub fn render(sections: &[Section]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in sections {
        for h in &s.header {
            out.extend_from_slice(h);
            out.push(b'\n');
        }
        for hunk in &s.hunks {
            out.extend_from_slice(
                hunk_header(hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len).as_bytes(),
            );
            out.extend_from_slice(&hunk.heading);
            out.push(b'\n');
            render_hunk_lines(hunk, &mut out);
        }
    }
    out
}
