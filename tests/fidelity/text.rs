//! Files as lines: the line model the block formats (aider, patch, CSL,
//! JSON, Claude) are generated from, and the line-end facts that decide
//! whether a format can say a change at all.

/// A line of a text file: its text without the line end (no `\r` for a
/// CRLF line) and whether a line end follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub eol: bool,
}

/// Which line ends a file uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// No line end at all (empty, or one line without one).
    None,
    Lf,
    Crlf,
    Mixed,
}

pub fn ends(bytes: &[u8]) -> Ends {
    let (mut lf, mut crlf) = (0, 0);
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if i > 0 && bytes[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
    }
    match (lf, crlf) {
        (0, 0) => Ends::None,
        (_, 0) => Ends::Lf,
        (0, _) => Ends::Crlf,
        _ => Ends::Mixed,
    }
}

/// Why a block format (whose replies carry lines, written with LF, and
/// whose applier keeps the file's own line ends) cannot say the change
/// from `before` to `after`, if it cannot.
pub fn block_format_limit(before: &[u8], after: &[u8]) -> Option<String> {
    let (b, a) = (ends(before), ends(after));
    let same_style = matches!(
        (b, a),
        (Ends::Lf | Ends::None, Ends::Lf | Ends::None) | (Ends::Crlf, Ends::Crlf)
    );
    if !same_style {
        return Some(format!("line ends change ({b:?} -> {a:?}) or are mixed"));
    }
    for side in [before, after] {
        if std::str::from_utf8(side).is_err() {
            return Some("a file that is not UTF-8".into());
        }
        // A lone `\r` inside a line cannot be written in a reply.
        let stray = side
            .iter()
            .enumerate()
            .any(|(i, &c)| c == b'\r' && side.get(i + 1) != Some(&b'\n'));
        if stray {
            return Some("a carriage return inside a line".into());
        }
    }
    None
}

/// The file's lines (the text must be UTF-8; see [`block_format_limit`]).
pub fn split(bytes: &[u8]) -> Vec<Line> {
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<Line> = text
        .split('\n')
        .map(|l| Line {
            text: l.strip_suffix('\r').unwrap_or(l).to_string(),
            eol: true,
        })
        .collect();
    // `split` leaves an empty piece after a final line end, and the piece
    // after the last line end is a line without one.
    let last = out.pop().expect("split yields at least one piece");
    if !last.text.is_empty() {
        out.push(Line {
            text: last.text,
            eol: false,
        });
    }
    out
}

/// Lines back to LF text.
pub fn join(lines: &[Line]) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(&l.text);
        if l.eol {
            out.push('\n');
        }
    }
    out
}

/// The file as LF text (what a block format's applier matches against).
pub fn lf(bytes: &[u8]) -> String {
    join(&split(bytes))
}

/// Occurrences of `needle` in `hay`, overlapping ones included (a stricter
/// count than any applier's, so a pattern unique here is unique there).
pub fn count(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return usize::MAX;
    }
    let mut n = 0;
    let mut from = 0;
    while let Some(at) = hay[from..].find(needle) {
        n += 1;
        from += at + hay[from + at..].chars().next().map_or(1, char::len_utf8);
    }
    n
}
