//! The XML subset CML is written in: tags with attributes, and the values
//! of elements (CDATA sections and entity-decoded text).
//!
//! Owns the bytes-level reading only: where a tag or a value ends, what a
//! value's text is, and what is wrong with it. It knows nothing of CML's
//! elements (which names, which attributes): `super` decides that. There
//! is no DTD, namespace, processing instruction or external entity here:
//! a `<!DOCTYPE`, `<?…?>` or `<x:y>` inside an element is simply markup the
//! element does not accept.
//!
//! Every function takes the reply and a byte offset and returns offsets
//! into it; nothing slices at an offset it did not get from a search for
//! an ASCII byte, so every slice falls on a character boundary.

use std::borrow::Cow;

use memchr::memmem;

/// `<![CDATA[`, which opens a literal section.
pub const CDATA_OPEN: &str = "<![CDATA[";
/// `]]>`, which closes it.
pub const CDATA_CLOSE: &str = "]]>";

/// Where the next `]]>` is, remembered between searches: a reply of many
/// sections that never close would otherwise be searched to its end once
/// for each.
#[derive(Debug, Default)]
pub struct CdataEnds {
    /// The last search started here and found `found` (`None`: no `]]>`
    /// from there to the end).
    from: usize,
    found: Option<usize>,
    searched: bool,
}

impl CdataEnds {
    /// The first `]]>` at or after `from`.
    pub fn next(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        if self.searched && self.from <= from && self.found.is_none_or(|end| from <= end) {
            return self.found;
        }
        let found =
            memmem::find(&bytes[from.min(bytes.len())..], CDATA_CLOSE.as_bytes()).map(|n| from + n);
        *self = CdataEnds {
            from,
            found,
            searched: true,
        };
        found
    }
}

/// Something wrong, at `start..end` of the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub start: usize,
    pub end: usize,
    pub message: String,
    pub hint: String,
}

impl Problem {
    fn new(start: usize, end: usize, message: String, hint: impl Into<String>) -> Problem {
        Problem {
            start,
            end,
            message,
            hint: hint.into(),
        }
    }
}

/// One `name="value"` of a tag, value entity-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr<'t> {
    pub name: &'t str,
    pub value: Cow<'t, str>,
    /// Name through closing quote.
    pub start: usize,
    pub end: usize,
}

/// An opening (or self-closing) tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag<'t> {
    pub name: &'t str,
    /// The `<`.
    pub start: usize,
    /// Just after the `>`.
    pub end: usize,
    pub attrs: Vec<Attr<'t>>,
    /// `<name …/>`.
    pub self_closing: bool,
    /// Problems with single attributes; the tag itself was read.
    pub problems: Vec<Problem>,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The end of the name that starts at `at` (where the first non-name byte
/// is).
fn name_end(bytes: &[u8], at: usize) -> usize {
    at + bytes[at..].iter().take_while(|&&b| is_name_char(b)).count()
}

/// Where the first byte at or after `at` that is not XML whitespace is.
pub fn skip_space(bytes: &[u8], at: usize) -> usize {
    at + bytes
        .get(at..)
        .map_or(0, |rest| rest.iter().take_while(|&&b| is_space(b)).count())
}

/// [`line_end`], or `limit` if the line goes on past it: searches only up
/// to `limit`.
fn line_end_within(bytes: &[u8], at: usize, limit: usize) -> usize {
    let limit = limit.min(bytes.len());
    let at = at.min(limit);
    memchr::memchr(b'\n', &bytes[at..limit]).map_or(limit, |n| at + n)
}

/// The end of the line `at` is on (its `\n`, or the end of the text).
pub fn line_end(bytes: &[u8], at: usize) -> usize {
    let at = at.min(bytes.len());
    memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n)
}

/// Reads the tag at `at` (a `<` followed by a name). `Err` when the tag
/// itself cannot be read (no `>`, a stray character, an unterminated
/// quote): the caller decides where to go on.
pub fn tag(text: &str, at: usize) -> Result<Tag<'_>, Problem> {
    let bytes = text.as_bytes();
    let name_start = at + 1;
    if !bytes.get(name_start).copied().is_some_and(is_name_start) {
        return Err(Problem::new(
            at,
            at + 1,
            "a `<` that starts no element".to_string(),
            "write a CML element (`<write path=\"…\">`), or put text that holds `<` in <![CDATA[ … ]]>",
        ));
    }
    let name_stop = name_end(bytes, name_start);
    let name = &text[name_start..name_stop];
    let mut tag = Tag {
        name,
        start: at,
        end: name_stop,
        attrs: Vec::new(),
        self_closing: false,
        problems: Vec::new(),
    };
    let mut pos = name_stop;
    loop {
        let spaced = pos < bytes.len() && is_space(bytes[pos]);
        pos = skip_space(bytes, pos);
        let Some(&b) = bytes.get(pos) else {
            return Err(Problem::new(
                at,
                name_stop,
                format!("the <{name}> tag is never closed with `>`"),
                format!("end the tag with `>` (or `/>` when it has no text): <{name} …>"),
            ));
        };
        match b {
            b'>' => {
                tag.end = pos + 1;
                return Ok(tag);
            }
            b'/' if bytes.get(pos + 1) == Some(&b'>') => {
                tag.end = pos + 2;
                tag.self_closing = true;
                return Ok(tag);
            }
            b if is_name_start(b) => {
                if !spaced {
                    tag.problems.push(Problem::new(
                        pos,
                        pos + 1,
                        format!("no space before attribute in the <{name}> tag"),
                        "separate attributes with a space: a=\"1\" b=\"2\"",
                    ));
                }
                pos = attribute(text, pos, &mut tag)?;
            }
            _ => {
                let end = next_char_end(text, pos);
                return Err(Problem::new(
                    pos,
                    end,
                    format!(
                        "unexpected `{}` in the <{name}> tag",
                        text.get(pos..end).unwrap_or("?")
                    ),
                    format!(
                        "write the tag as <{name} name=\"value\" …> (or …/>), attribute values in double or single quotes"
                    ),
                ));
            }
        }
    }
}

/// The end of the character that starts at `at` (1 byte past the end).
fn next_char_end(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| rest.chars().next())
        .map_or(at + 1, |c| at + c.len_utf8())
}

/// Reads one attribute at `at` into `tag`; returns where it ends.
fn attribute<'t>(text: &'t str, at: usize, tag: &mut Tag<'t>) -> Result<usize, Problem> {
    let bytes = text.as_bytes();
    let stop = name_end(bytes, at);
    let name = &text[at..stop];
    let eq = skip_space(bytes, stop);
    if bytes.get(eq) != Some(&b'=') {
        tag.problems.push(Problem::new(
            at,
            stop,
            format!("attribute `{name}` has no value"),
            format!("give it a quoted value: {name}=\"…\""),
        ));
        return Ok(stop);
    }
    let open = skip_space(bytes, eq + 1);
    let quote = match bytes.get(open) {
        Some(&q @ (b'"' | b'\'')) => q,
        _ => {
            // Unquoted: up to the next space or the end of the tag.
            let end = open
                + bytes[open..]
                    .iter()
                    .take_while(|&&b| !is_space(b) && b != b'>' && b != b'/')
                    .count();
            tag.problems.push(Problem::new(
                at,
                end.max(open),
                format!("the value of `{name}` is not quoted"),
                format!(
                    "quote it: {name}=\"{}\"",
                    text.get(open..end).unwrap_or("…")
                ),
            ));
            return Ok(end);
        }
    };
    // A value stays on its line: a quote left open would otherwise swallow
    // the text after the tag. The quote and the line end are searched for
    // together: a value must not cost a search to the end of a long line
    // (a reply of many elements on one line).
    let stop =
        memchr::memchr2(quote, b'\n', &bytes[open + 1..]).map_or(bytes.len(), |n| open + 1 + n);
    let close = (bytes.get(stop) == Some(&quote)).then_some(stop);
    let Some(close) = close else {
        let eol = stop;
        return Err(Problem::new(
            open,
            eol,
            format!("the value of `{name}` has no closing quote on its line"),
            format!(
                "close the value with {q} before the end of the line: {name}={q}…{q}",
                q = quote as char
            ),
        ));
    };
    let raw = &text[open + 1..close];
    if let Some(lt) = memchr::memchr(b'<', raw.as_bytes()) {
        tag.problems.push(Problem::new(
            open + 1 + lt,
            open + 2 + lt,
            format!("`<` inside the value of `{name}`"),
            "write `&lt;` for a `<` in an attribute value",
        ));
    }
    tag.attrs.push(Attr {
        name,
        value: decode(raw),
        start: at,
        end: close + 1,
    });
    Ok(close + 1)
}

/// The character an entity reference at the start of `text` (which starts
/// with `&`) stands for, and its length; `None` when it is none of the
/// five XML entities or a numeric character reference: such an `&` is
/// kept as it is (`a && b`).
fn entity(text: &str) -> Option<(char, usize)> {
    let bytes = text.as_bytes();
    // `&#x10FFFF;` is the longest reference there is.
    let semi = memchr::memchr(b';', &bytes[..bytes.len().min(12)])?;
    let body = &text[1..semi];
    let c = match body {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let code = if let Some(hex) = body.strip_prefix("#x").or(body.strip_prefix("#X")) {
                if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                u32::from_str_radix(hex, 16).ok()?
            } else if let Some(dec) = body.strip_prefix('#') {
                if dec.is_empty() || !dec.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                dec.parse::<u32>().ok()?
            } else {
                return None;
            };
            // NUL is no character XML can hold.
            char::from_u32(code).filter(|&c| c != '\0')?
        }
    };
    Some((c, semi + 1))
}

/// `text` with its entity references decoded; borrowed when it has none.
pub fn decode(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'&', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    decode_into(text, &mut out);
    Cow::Owned(out)
}

fn decode_into(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        match entity(&rest[amp..]) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[amp + len..];
            }
            None => {
                out.push('&');
                rest = &rest[amp + 1..];
            }
        }
    }
    out.push_str(rest);
}

/// One piece of a value, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// Text outside CDATA (entities still to decode).
    Text(usize, usize),
    /// The inside of a CDATA section.
    Cdata(usize, usize),
}

/// An element's value, read up to its closing tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value<'t> {
    /// The reply's own slice when the value is one piece that needs no
    /// decoding (the usual single CDATA section): a large reply is then
    /// not copied.
    pub text: Cow<'t, str>,
    /// Just after the closing tag.
    pub end: usize,
    /// Where text outside CDATA holds a line break (a multi-line value
    /// needs CDATA).
    pub multiline_text: Option<usize>,
}

/// Why a value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    /// A CDATA section never closes: it swallows the rest of the reply.
    Unterminated(Problem),
    /// Markup the value may not hold, a wrong closing tag, or the end of
    /// the reply before the closing tag: `at` is where reading stopped.
    Broken(Problem),
}

/// Reads the value of element `name` from `at` (just after its opening
/// tag) through its closing tag `</name>`.
///
/// The value is CDATA sections and text, in any order: text outside CDATA
/// is entity-decoded, CDATA is literal except that `]]&gt;` inside it
/// stands for `]]>` (the original CML protocol's escape). Layout around
/// the value is dropped (see [`trim_layout`]).
///
/// `closers` are the elements the value is inside, itself first: a line
/// of a CDATA section that starts with one of their closing tags means the
/// section's `]]>` was forgotten above it (detection ends the element
/// there too), so the value is broken at that line rather than run on.
pub fn value<'t>(
    text: &'t str,
    at: usize,
    closers: &[&str],
    ends: &mut CdataEnds,
) -> Result<Value<'t>, ValueError> {
    let name = closers.first().copied().unwrap_or("");
    let bytes = text.as_bytes();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut pos = at;
    let close_at = loop {
        let Some(lt) = memchr::memchr(b'<', &bytes[pos..]).map(|n| pos + n) else {
            if pos < bytes.len() {
                pieces.push(Piece::Text(pos, bytes.len()));
            }
            return Err(ValueError::Broken(Problem::new(
                bytes.len(),
                bytes.len(),
                format!("the reply ends before </{name}>"),
                format!("close the element with </{name}> after its text"),
            )));
        };
        if lt > pos {
            if let Some(n) = memmem::find(&bytes[pos..lt], CDATA_CLOSE.as_bytes()) {
                return Err(ValueError::Broken(early_close(pos + n, name)));
            }
            pieces.push(Piece::Text(pos, lt));
        }
        let rest = &text[lt..];
        if rest.starts_with(CDATA_OPEN) {
            let from = lt + CDATA_OPEN.len();
            let end = ends.next(bytes, from);
            if let Some(p) = closing_line(text, from, end.unwrap_or(bytes.len()), closers) {
                return Err(ValueError::Broken(p));
            }
            let Some(end) = end else {
                return Err(ValueError::Unterminated(unterminated_cdata(lt, name)));
            };
            pieces.push(Piece::Cdata(from, end));
            pos = end + CDATA_CLOSE.len();
        } else if rest.starts_with("</") {
            break lt;
        } else if let Some(Piece::Cdata(_, end)) = pieces.last()
            && end + CDATA_CLOSE.len() == lt
        {
            // `<![CDATA[<a><![CDATA[x]]></a>]]>`: the text's own `]]>`
            // ended the section.
            return Err(ValueError::Broken(early_close(*end, name)));
        } else {
            let end = line_end_within(bytes, lt, lt + 40);
            let end = floor_char(text, end);
            return Err(ValueError::Broken(Problem::new(
                lt,
                end,
                format!(
                    "markup `{}` inside <{name}>: text holding `<` must be in CDATA",
                    text[lt..end].trim_end()
                ),
                format!(
                    "wrap the whole text in CDATA: <{name}><![CDATA[ … ]]></{name}> (a `]]>` in the text is written `]]]]><![CDATA[>`)"
                ),
            )));
        }
    };
    let end = match closing_tag(text, close_at, name) {
        Ok(end) => end,
        Err(p) => {
            return Err(ValueError::Broken(match pieces.last() {
                Some(Piece::Cdata(_, end)) if end + CDATA_CLOSE.len() == close_at => {
                    early_close(*end, name)
                }
                _ => p,
            }));
        }
    };
    let (first, lead, last, trail) = trim_layout(text, &pieces);
    // Each kept piece's bytes, layout dropped, and whether it is CDATA.
    let kept = pieces
        .iter()
        .enumerate()
        .filter(|&(i, _)| i >= first && i <= last)
        .map(|(i, piece)| {
            let (mut s, mut e, cdata) = match *piece {
                Piece::Text(s, e) => (s, e, false),
                Piece::Cdata(s, e) => (s, e, true),
            };
            if i == first {
                s += lead;
            }
            if i == last {
                e = e.saturating_sub(trail).max(s);
            }
            (s, e, cdata)
        });
    let multiline_text = kept.clone().find_map(|(s, e, cdata)| {
        (!cdata)
            .then(|| memchr::memchr(b'\n', &bytes[s..e]).map(|n| s + n))
            .flatten()
    });
    let mut one = kept.clone();
    if let (Some((s, e, cdata)), None) = (one.next(), one.next()) {
        let slice = &text[s..e];
        let plain = if cdata {
            memmem::find(slice.as_bytes(), CDATA_ESCAPED_CLOSE.as_bytes()).is_none()
        } else {
            memchr::memchr(b'&', slice.as_bytes()).is_none()
        };
        if plain {
            return Ok(Value {
                text: Cow::Borrowed(slice),
                end,
                multiline_text,
            });
        }
    }
    let mut out = String::with_capacity(kept.clone().map(|(s, e, _)| e - s).sum());
    for (s, e, cdata) in kept {
        let slice = &text[s..e];
        if cdata {
            push_cdata(slice, &mut out);
        } else {
            decode_into(slice, &mut out);
        }
    }
    Ok(Value {
        text: Cow::Owned(out),
        end,
        multiline_text,
    })
}

/// The first line in `from..to` (inside a CDATA section) that starts,
/// after spaces or tabs, with the closing tag of one of `closers`.
fn closing_line(text: &str, from: usize, to: usize, closers: &[&str]) -> Option<Problem> {
    let bytes = &text.as_bytes()[..to];
    for hit in memmem::find_iter(&bytes[from..], b"</").map(|n| from + n) {
        let line_start = memchr::memrchr(b'\n', &bytes[from..hit]).map(|n| from + n + 1)?;
        if !bytes[line_start..hit]
            .iter()
            .all(|&b| b == b' ' || b == b'\t')
        {
            continue;
        }
        let rest = &bytes[hit + 2..];
        let Some(&name) = closers
            .iter()
            .find(|name| rest.starts_with(name.as_bytes()) && rest.get(name.len()) == Some(&b'>'))
        else {
            continue;
        };
        return Some(Problem::new(
            hit,
            hit + name.len() + 3,
            format!(
                "`</{name}>` is inside a CDATA section: the `]]>` that ends the text above it is missing"
            ),
            format!(
                "end the text with ]]> right before </{name}>; a `</{name}>` line that belongs to the text is written `]]><![CDATA[</{name}>`"
            ),
        ));
    }
    None
}

/// A `]]>` at `at` that ends a CDATA section before the text does.
fn early_close(at: usize, name: &str) -> Problem {
    Problem::new(
        at,
        at + CDATA_CLOSE.len(),
        format!("`]]>` inside the text of <{name}> ends its CDATA section early"),
        "write a `]]>` that belongs to the text as `]]]]><![CDATA[>` (the section ends after `]]` and a new one starts with `>`)",
    )
}

/// The largest character boundary at or below `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// How a CDATA section writes its own `]]>` (the original protocol's
/// escape).
const CDATA_ESCAPED_CLOSE: &str = "]]&gt;";

/// A CDATA section's text: literal, with the original protocol's
/// `]]&gt;` read as `]]>`.
fn push_cdata(slice: &str, out: &mut String) {
    let mut rest = slice;
    while let Some(n) = memmem::find(rest.as_bytes(), CDATA_ESCAPED_CLOSE.as_bytes()) {
        out.push_str(&rest[..n]);
        out.push_str(CDATA_CLOSE);
        rest = &rest[n + CDATA_ESCAPED_CLOSE.len()..];
    }
    out.push_str(rest);
}

/// The layout around a value, which is not part of it: which pieces are
/// kept (`first..=last`), how many bytes to drop from the start of the
/// first and from the end of the last.
///
/// - With CDATA: whitespace-only text before the first and after the last
///   section goes (the indentation of `<![CDATA[` and of `</search>`).
/// - The line break that ends the line `<![CDATA[` (or the opening tag)
///   is on, when nothing but spaces or tabs follows it there, goes: the
///   value starts on the next line.
/// - The line break before `]]>` (or the closing tag), when only spaces or
///   tabs stand between it and the end, goes: the value's last line has no
///   line break, as in CSL.
///
/// Everything else is kept byte for byte, CRLF included.
fn trim_layout(text: &str, pieces: &[Piece]) -> (usize, usize, usize, usize) {
    if pieces.is_empty() {
        return (1, 0, 0, 0);
    }
    let blank = |s: usize, e: usize| text.as_bytes()[s..e].iter().all(|&b| is_space(b));
    let mut first = 0;
    let mut last = pieces.len() - 1;
    if pieces.iter().any(|p| matches!(p, Piece::Cdata(..))) {
        while let Piece::Text(s, e) = pieces[first]
            && blank(s, e)
        {
            first += 1;
        }
        while let Piece::Text(s, e) = pieces[last]
            && blank(s, e)
        {
            last -= 1;
        }
    }
    let span = |p: Piece| match p {
        Piece::Text(s, e) | Piece::Cdata(s, e) => (s, e),
    };
    let (fs, fe) = span(pieces[first]);
    let bytes = text.as_bytes();
    let head = &bytes[fs..fe];
    let lead = {
        let spaces = head
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        match &head[spaces..] {
            [b'\n', ..] => spaces + 1,
            [b'\r', b'\n', ..] => spaces + 2,
            _ => 0,
        }
    };
    let (ls, le) = span(pieces[last]);
    // The first piece's lead is not trimmed twice when it is also the last.
    let from = if first == last { ls + lead } else { ls };
    let tail = &bytes[from..le];
    let trail = {
        let spaces = tail
            .iter()
            .rev()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let before = &tail[..tail.len() - spaces];
        if before.ends_with(b"\r\n") {
            spaces + 2
        } else if before.ends_with(b"\n") {
            spaces + 1
        } else {
            0
        }
    };
    (first, lead, last, trail)
}

/// Reads the closing tag `</name>` at `at` (which starts with `</`);
/// returns where it ends.
pub fn closing_tag(text: &str, at: usize, name: &str) -> Result<usize, Problem> {
    let bytes = text.as_bytes();
    let name_start = at + 2;
    let stop = name_end(bytes, name_start);
    let found = &text[name_start..stop];
    let gt = skip_space(bytes, stop);
    if found == name && bytes.get(gt) == Some(&b'>') {
        return Ok(gt + 1);
    }
    let end = floor_char(text, line_end_within(bytes, at, gt + 1));
    let shown = text[at..end].trim_end();
    Err(Problem::new(
        at,
        end,
        if found == name {
            format!("`{shown}` does not end with `>`")
        } else {
            format!("`{shown}` where </{name}> was expected")
        },
        format!("close the element with </{name}>; a closing tag inside its text must be in CDATA"),
    ))
}

/// The problem of a CDATA section opened at `at` (inside `<name>`) that
/// never closes, with a hint at the closing tag it probably meant to come
/// before.
fn unterminated_cdata(at: usize, name: &str) -> Problem {
    let hint = format!(
        "end the text with ]]> and close the element: <![CDATA[…]]></{name}>; nothing after this point can be read until then"
    );
    Problem::new(
        at,
        at + CDATA_OPEN.len(),
        format!("this CDATA section inside <{name}> never ends: there is no `]]>` after it"),
        hint,
    )
}

/// Where the closing tag `</name>` that ends an element whose text went
/// wrong is, skipping CDATA sections; `Ok(None)`: there is none.
/// `Err(at)`: a CDATA section at `at` never ends on the way.
pub fn find_close(
    text: &str,
    from: usize,
    name: &str,
    ends: &mut CdataEnds,
) -> Result<Option<usize>, Problem> {
    let bytes = text.as_bytes();
    let mut pos = from.min(bytes.len());
    while let Some(lt) = memchr::memchr(b'<', &bytes[pos..]).map(|n| pos + n) {
        let rest = &text[lt..];
        if rest.starts_with(CDATA_OPEN) {
            let from = lt + CDATA_OPEN.len();
            match ends.next(bytes, from) {
                Some(end) => pos = end + CDATA_CLOSE.len(),
                None => return Err(unterminated_cdata(lt, name)),
            }
            continue;
        }
        if let Some(after) = rest.strip_prefix("</")
            && let Some(after) = after.strip_prefix(name)
        {
            let gt = skip_space(after.as_bytes(), 0);
            if after.as_bytes().get(gt) == Some(&b'>') {
                return Ok(Some(lt + 2 + name.len() + gt + 1));
            }
        }
        pos = lt + 1;
    }
    Ok(None)
}

/// Skips whitespace and `<!-- … -->` comments from `at`; `Err` for a
/// comment that never ends.
pub fn skip_space_and_comments(text: &str, at: usize) -> Result<usize, Problem> {
    let bytes = text.as_bytes();
    let mut pos = skip_space(bytes, at);
    while text[pos..].starts_with("<!--") {
        let from = pos + 4;
        let Some(n) = memmem::find(&bytes[from..], b"-->") else {
            return Err(Problem::new(
                pos,
                from,
                "this comment never ends: there is no `-->` after it".to_string(),
                "end the comment with -->",
            ));
        };
        pos = skip_space(bytes, from + n + 3);
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(text: &str) -> String {
        let at = text.find('>').unwrap() + 1;
        value(text, at, &["v"], &mut CdataEnds::default())
            .unwrap()
            .text
            .into_owned()
    }

    #[test]
    fn cdata_is_literal_and_split_sections_join() {
        assert_eq!(val("<v><![CDATA[a &amp; <b>]]></v>"), "a &amp; <b>");
        assert_eq!(val("<v><![CDATA[x]]]]><![CDATA[>y]]></v>"), "x]]>y");
        // The original protocol's escape.
        assert_eq!(val("<v><![CDATA[x ]]&gt; y]]></v>"), "x ]]> y");
        assert_eq!(val("<v><![CDATA[]]></v>"), "");
        assert_eq!(val("<v></v>"), "");
    }

    #[test]
    fn text_is_entity_decoded_and_a_lone_ampersand_stays() {
        assert_eq!(
            val("<v>a &lt;b&gt; &amp; &quot;&apos; &#65;&#x42;</v>"),
            "a <b> & \"' AB"
        );
        assert_eq!(val("<v>make && make test</v>"), "make && make test");
        assert_eq!(val("<v>&nbsp;&#0;&#xZZ;</v>"), "&nbsp;&#0;&#xZZ;");
    }

    #[test]
    fn layout_lines_around_the_value_go_and_the_rest_stays() {
        assert_eq!(val("<v><![CDATA[\nline\n]]></v>"), "line");
        assert_eq!(val("<v><![CDATA[\r\nline\r\n  ]]></v>"), "line");
        assert_eq!(val("<v>\n  <![CDATA[\n\nline\n\n]]>\n  </v>"), "\nline\n");
        assert_eq!(val("<v><![CDATA[  two  ]]></v>"), "  two  ");
        assert_eq!(val("<v><![CDATA[a\r\nb]]></v>"), "a\r\nb");
        assert_eq!(val("<v>\n  npm test\n</v>"), "  npm test");
        assert_eq!(val("<v><![CDATA[\n]]></v>"), "");
    }

    #[test]
    fn multi_line_text_outside_cdata_is_flagged() {
        let text = "<v>\na\nb\n</v>";
        let v = value(text, 3, &["v"], &mut CdataEnds::default()).unwrap();
        assert_eq!(v.multiline_text, Some(5));
        assert_eq!(
            value(
                "<v><![CDATA[a\nb]]></v>",
                3,
                &["v"],
                &mut CdataEnds::default()
            )
            .unwrap()
            .multiline_text,
            None
        );
    }

    #[test]
    fn broken_values() {
        assert!(matches!(
            value("<v><![CDATA[never", 3, &["v"], &mut CdataEnds::default()),
            Err(ValueError::Unterminated(_))
        ));
        assert!(
            matches!(value("<v><b>x</b></v>", 3, &["v"], &mut CdataEnds::default()), Err(ValueError::Broken(p)) if p.start == 3)
        );
        assert!(
            matches!(value("<v>x</w>", 3, &["v"], &mut CdataEnds::default()), Err(ValueError::Broken(p)) if p.start == 4)
        );
        assert!(matches!(
            value("<v>x", 3, &["v"], &mut CdataEnds::default()),
            Err(ValueError::Broken(_))
        ));
        // A `]]>` of the text ends the section: caught wherever it leaves
        // the rest.
        for text in [
            "<v><![CDATA[a]]>b]]></v>",
            "<v><![CDATA[<x><![CDATA[y]]></x>]]></v>",
            "<v><![CDATA[<x><![CDATA[y]]><z/>]]></v>",
        ] {
            assert!(
                matches!(value(text, 3, &["v"], &mut CdataEnds::default()), Err(ValueError::Broken(p)) if p.message.contains("early")),
                "{text}"
            );
        }
    }

    #[test]
    fn tags_and_attributes() {
        let t = tag("<write path='a&amp;b' append=\"true\"/>", 0).unwrap();
        assert_eq!(t.name, "write");
        assert!(t.self_closing);
        assert_eq!(t.attrs.len(), 2);
        assert_eq!(t.attrs[0].value, "a&b");
        assert!(t.problems.is_empty());
        let t = tag("<write path=a count>", 0).unwrap();
        assert_eq!(t.problems.len(), 2);
        assert!(tag("<write path=\"a>", 0).is_err());
        assert!(tag("<write path=\"a\"", 0).is_err());
        assert!(tag("<write ?>", 0).is_err());
        assert!(tag("<é>", 0).is_err());
    }

    #[test]
    fn a_closing_line_inside_cdata_breaks_the_value_there() {
        let text = "<v><![CDATA[\na\n</v>\n<w/>\n]]></v>";
        assert!(
            matches!(value(text, 3, &["v"], &mut CdataEnds::default()), Err(ValueError::Broken(p)) if p.start == text.find("</v>").unwrap())
        );
        // Never closed, but where it should have been is known.
        let text = "<s><![CDATA[\na\n  </e>\n";
        assert!(matches!(
            value(text, 3, &["s", "e"], &mut CdataEnds::default()),
            Err(ValueError::Broken(_))
        ));
        // Not at the start of a line: text.
        assert_eq!(val("<v><![CDATA[a </v>\nb]]></v>"), "a </v>\nb");
    }

    #[test]
    fn find_close_skips_cdata() {
        let text = "x<![CDATA[</v>]]></v>";
        assert_eq!(
            find_close(text, 0, "v", &mut CdataEnds::default()),
            Ok(Some(text.len()))
        );
        assert_eq!(find_close("x", 0, "v", &mut CdataEnds::default()), Ok(None));
        assert!(find_close("<![CDATA[", 0, "v", &mut CdataEnds::default()).is_err());
    }
}
