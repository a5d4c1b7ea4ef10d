//! The damaged variants: the mistakes models make when they copy lines,
//! applied to a reply's hunk lines (a diff's, a block's or a patch's).
//!
//! Lines are `(tag, text)` with tag `b' '` (kept), `b'-'` (removed) or
//! `b'+'` (added); a CRLF line's text keeps its `\r`, which no damage
//! touches. Only the hunks of files that exist on both sides are damaged:
//! a new file's lines are what the file will hold, not a copy of it.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Trailing blanks stripped from the lines that must match: kept and
    /// removed.
    Ws,
    /// Every non-blank hunk line (kept, removed, added) four spaces deeper.
    Indent,
    /// Each tab of every hunk line's leading whitespace four spaces.
    Tabs,
    /// One kept line (chosen from the commit id, among those with two
    /// non-blank characters or more) with one of its non-blank characters
    /// dropped.
    Ctx,
}

impl Damage {
    pub fn suffix(self) -> &'static str {
        match self {
            Damage::Ws => "ws",
            Damage::Indent => "indent",
            Damage::Tabs => "tabs",
            Damage::Ctx => "ctx",
        }
    }
}

/// Splits off a final `\r`, which stays as it is.
fn body(text: &[u8]) -> (&[u8], &[u8]) {
    match text.strip_suffix(b"\r") {
        Some(b) => (b, b"\r"),
        None => (text, b""),
    }
}

/// Damages `hunks` in place; false when nothing changed (the damage has
/// nothing to act on in this commit).
pub fn apply(damage: Damage, hunks: &mut [Vec<(u8, Vec<u8>)>], seed: u64) -> bool {
    let before: Vec<Vec<(u8, Vec<u8>)>> = hunks.to_vec();
    match damage {
        Damage::Ws => {
            for (tag, text) in hunks.iter_mut().flatten() {
                if *tag != b'+' {
                    let (b, cr) = body(text);
                    let keep = b
                        .iter()
                        .rposition(|c| !matches!(c, b' ' | b'\t'))
                        .map_or(0, |i| i + 1);
                    *text = [&b[..keep], cr].concat();
                }
            }
        }
        Damage::Indent => {
            for (_, text) in hunks.iter_mut().flatten() {
                let (b, _) = body(text);
                if b.iter().any(|c| !c.is_ascii_whitespace()) {
                    text.splice(0..0, *b"    ");
                }
            }
        }
        Damage::Tabs => {
            for (_, text) in hunks.iter_mut().flatten() {
                let lead = text
                    .iter()
                    .take_while(|c| matches!(c, b' ' | b'\t'))
                    .count();
                let mut out = Vec::with_capacity(text.len() + 8);
                for &c in &text[..lead] {
                    if c == b'\t' {
                        out.extend_from_slice(b"    ");
                    } else {
                        out.push(c);
                    }
                }
                out.extend_from_slice(&text[lead..]);
                *text = out;
            }
        }
        Damage::Ctx => {
            let mut candidates = Vec::new();
            for (h, lines) in hunks.iter().enumerate() {
                for (i, (tag, text)) in lines.iter().enumerate() {
                    // Two visible characters at least: a one-character
                    // line (`}`) without it is a blank line, another line
                    // altogether rather than a damaged copy of this one.
                    if *tag == b' '
                        && std::str::from_utf8(body(text).0).is_ok()
                        && body(text)
                            .0
                            .iter()
                            .filter(|c| !c.is_ascii_whitespace())
                            .count()
                            >= 2
                    {
                        candidates.push((h, i));
                    }
                }
            }
            if candidates.is_empty() {
                return false;
            }
            let (h, i) = candidates[(seed % candidates.len() as u64) as usize];
            let text = &mut hunks[h][i].1;
            let s = String::from_utf8_lossy(body(text).0).into_owned();
            let cr = body(text).1.to_vec();
            let chars: Vec<(usize, char)> = s
                .char_indices()
                .filter(|(_, c)| !c.is_whitespace())
                .collect();
            let (at, c) = chars[((seed >> 32) % chars.len() as u64) as usize];
            let mut t = s.into_bytes();
            t.drain(at..at + c.len_utf8());
            t.extend_from_slice(&cr);
            *text = t;
        }
    }
    before != hunks
}

/// Whether stripping trailing blanks (before [`apply`] with
/// [`Damage::Ws`]) makes a removed line of a hunk equal to one of its
/// added lines that it differed from.
pub fn erases_a_change(hunks: &[Vec<(u8, Vec<u8>)>]) -> bool {
    let strip = |t: &[u8]| -> Vec<u8> {
        let (b, cr) = body(t);
        let keep = b
            .iter()
            .rposition(|c| !matches!(c, b' ' | b'\t'))
            .map_or(0, |i| i + 1);
        [&b[..keep], cr].concat()
    };
    hunks.iter().any(|lines| {
        lines
            .iter()
            .filter(|(t, _)| *t == b'-')
            .any(|(_, removed)| {
                let stripped = strip(removed);
                stripped != *removed
                    && lines
                        .iter()
                        .any(|(t, added)| *t == b'+' && *added == stripped)
            })
    })
}
