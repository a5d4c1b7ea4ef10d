//! Fuzz target: EDIT (`clada::apply::edit::edit`) given the hunks of a
//! unified diff of two texts A → B, exact or damaged the way models damage
//! them, gives B exactly or refuses — never another text reported as
//! success. `whitespace_lines` (`--match whitespace`) is checked on the
//! same hunks.
//!
//! Input: `[variant, p1, p2, A.., 0, B..]`. The texts are read as UTF-8
//! (lossily) with every `\r` and a leading BOM dropped: line ends and the
//! BOM are `Text`'s business, and a diff of them is not what this checks.
//! `variant`'s low three bits pick the damage, bit 3 the aider form
//! (`Hunk::of_lines(old, new)`: no kept tags, no line number); `p1`, `p2`
//! parametrise the damage. See fuzz/README.md for the oracle and the
//! inputs it leaves out.

#![no_main]

use clada::apply::edit::{EditError, Loose, edit, fold, whitespace_lines};
use clada::apply::loose::kept;
use clada::plan::{Hunk, Locate};
use libfuzzer_sys::fuzz_target;
use similar::{ChangeTag, TextDiff};

/// A hunk as `(tag, line)` pairs (tags `' '`, `'-'`, `'+'`), with where
/// its old lines start in A (0-based) and its `@@ -l` number.
#[derive(Clone)]
struct Lines {
    lines: Vec<(char, String)>,
    start: usize,
    number: u32,
}

impl Lines {
    fn old_lines(&self) -> Vec<&str> {
        self.side('+')
    }

    fn new_lines(&self) -> Vec<&str> {
        self.side('-')
    }

    /// Every line but those tagged `not`.
    fn side(&self, not: char) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(t, _)| *t != not)
            .map(|(_, l)| l.as_str())
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    None,
    /// Trailing blanks stripped from kept and removed lines.
    Ws,
    /// Every non-blank line (kept, removed, added) four spaces deeper.
    Indent,
    /// Each tab of every line's leading whitespace four spaces.
    Tabs,
    /// One kept line of two visible characters or more loses one of them.
    Ctx,
    /// Every hunk's line number moved by the same amount.
    Shift,
}

fn damage_of(b: u8) -> Damage {
    match b & 7 {
        1 => Damage::Ws,
        2 => Damage::Indent,
        3 => Damage::Tabs,
        4 => Damage::Ctx,
        5 => Damage::Shift,
        _ => Damage::None,
    }
}

/// A and B as the oracle compares them.
fn text(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes).replace('\r', "");
    s.strip_prefix('\u{feff}').map_or(s.clone(), str::to_string)
}

/// The hunks of `diff -U3` from `a` to `b`, and the final-newline rule a
/// diff's `\ No newline at end of file` markers give (as the diff front
/// end reads them).
fn diff(a: &str, b: &str) -> (Vec<Lines>, Option<bool>) {
    let d = TextDiff::from_lines(a, b);
    let (a_len, b_len) = (d.old_len(), d.new_len());
    let mut hunks = Vec::new();
    let (mut no_newline_old, mut no_newline_new) = (false, false);
    for group in d.grouped_ops(3) {
        let start = group[0].old_range().start;
        let mut lines = Vec::new();
        for op in &group {
            for change in d.iter_changes(op) {
                let tag = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let v = change.value();
                lines.push((tag, v.strip_suffix('\n').unwrap_or(v).to_string()));
            }
        }
        let last = group.last().expect("a group has ops");
        if last.old_range().end == a_len && !a.is_empty() && !a.ends_with('\n') {
            no_newline_old = true;
        }
        if last.new_range().end == b_len && !b.is_empty() && !b.ends_with('\n') {
            no_newline_new = true;
        }
        let has_old = lines.iter().any(|(t, _)| *t != '+');
        // `@@ -l,n`: the first old line, or the line after which an
        // added-only hunk goes.
        let number = if has_old { start + 1 } else { start } as u32;
        hunks.push(Lines {
            lines,
            start,
            number,
        });
    }
    let final_newline = match (no_newline_old, no_newline_new) {
        (_, true) => Some(false),
        (true, false) => Some(true),
        _ => None,
    };
    (hunks, final_newline)
}

/// A line's leading spaces and tabs.
fn lead(l: &str) -> &str {
    &l[..l.len() - l.trim_start_matches([' ', '\t']).len()]
}

fn blank(l: &str) -> bool {
    l.trim().is_empty()
}

/// Damages the hunks; `None` when the damage has nothing to act on or
/// cannot be expressed (a line number below the first line).
fn damage(hunks: &[Lines], d: Damage, p1: u8, p2: u8) -> Option<Vec<Lines>> {
    let mut out = hunks.to_vec();
    match d {
        Damage::None => {}
        Damage::Ws => {
            for (tag, l) in out.iter_mut().flat_map(|h| h.lines.iter_mut()) {
                if *tag != '+' {
                    *l = l.trim_end_matches([' ', '\t']).to_string();
                }
            }
        }
        Damage::Indent => {
            for (_, l) in out.iter_mut().flat_map(|h| h.lines.iter_mut()) {
                if !l.chars().all(|c| c.is_ascii_whitespace()) {
                    l.insert_str(0, "    ");
                }
            }
        }
        Damage::Tabs => {
            for (_, l) in out.iter_mut().flat_map(|h| h.lines.iter_mut()) {
                let ws = lead(l);
                *l = format!("{}{}", ws.replace('\t', "    "), &l[ws.len()..]);
            }
        }
        Damage::Ctx => {
            let candidates: Vec<(usize, usize)> = out
                .iter()
                .enumerate()
                .flat_map(|(h, hunk)| {
                    hunk.lines
                        .iter()
                        .enumerate()
                        .filter(|(_, (t, l))| {
                            *t == ' ' && l.chars().filter(|c| !c.is_whitespace()).count() >= 2
                        })
                        .map(move |(i, _)| (h, i))
                })
                .collect();
            if candidates.is_empty() {
                return None;
            }
            let (h, i) = candidates[usize::from(p1) % candidates.len()];
            let l = &mut out[h].lines[i].1;
            let visible: Vec<(usize, char)> = l
                .char_indices()
                .filter(|(_, c)| !c.is_whitespace())
                .collect();
            let (at, c) = visible[usize::from(p2) % visible.len()];
            l.replace_range(at..at + c.len_utf8(), "");
        }
        Damage::Shift => {
            let by = match p1 as i8 {
                0 => 1,
                n => i64::from(n),
            };
            for h in &mut out {
                let n = i64::from(h.number) + by;
                let least = if h.old_lines().is_empty() { 0 } else { 1 };
                if n < least {
                    return None;
                }
                h.number = u32::try_from(n).ok()?;
            }
        }
    }
    Some(out)
}

fn hunk(lines: &Lines, aider: bool) -> Hunk {
    if aider {
        return Hunk::of_lines(&lines.old_lines(), &lines.new_lines());
    }
    let mut h = Hunk::new();
    for (tag, l) in &lines.lines {
        h.push(*tag, l);
    }
    h.line = Some(lines.number);
    h
}

fn loosely(a: &str, b: &str) -> bool {
    a.trim().chars().map(fold).eq(b.trim().chars().map(fold))
}

/// The places from `from` where `pattern` matches `file` line by line
/// under `eq`.
fn places(
    file: &[&str],
    pattern: &[&str],
    from: usize,
    eq: impl Fn(&str, &str) -> bool,
) -> Vec<usize> {
    if pattern.is_empty() || pattern.len() > file.len() {
        return Vec::new();
    }
    (from.min(file.len())..=file.len() - pattern.len())
        .filter(|&i| pattern.iter().zip(&file[i..]).all(|(p, f)| eq(f, p)))
        .collect()
}

/// Why the oracle does not hold for an input: the damage changed what the
/// hunks ask for, or nothing in them says where they go. `None`: the
/// result must be B or a refusal.
fn out_of_domain(
    a: &[&str],
    orig: &[Lines],
    damaged: &[Lines],
    d: Damage,
    aider: bool,
    locate: Locate,
) -> Option<&'static str> {
    if d == Damage::Tabs {
        // One hunk that shows tabs written as spaces has the others'
        // added lines written with tabs: B's must be so.
        let leads = || {
            orig.iter()
                .flat_map(|o| &o.lines)
                .filter(|(_, l)| !blank(l))
                .map(|(_, l)| lead(l))
        };
        if leads().any(|ws| ws.contains('\t'))
            && leads().any(|ws| !ws.is_empty() && !ws.contains('\t'))
        {
            return Some("indentation mixed across hunks");
        }
    }
    for (o, h) in orig.iter().zip(damaged) {
        // A removed line and an added line made equal: the change is gone
        // (a trailing-blank or tab-only change).
        let (removed, added): (Vec<_>, Vec<_>) = o
            .lines
            .iter()
            .zip(&h.lines)
            .filter(|((t, _), _)| *t != ' ')
            .partition(|((t, _), _)| *t == '-');
        if removed
            .iter()
            .any(|((_, r), (_, dr))| added.iter().any(|((_, ad), (_, dad))| r != ad && dr == dad))
        {
            return Some("a change erased");
        }
        // aider's form has no tags: the kept lines are a diff of the two
        // sides, and a kept line is written as the file has it. Each pair
        // the damaged sides keep must be one the real sides keep.
        if aider {
            let (dold, dnew) = (h.old_lines(), h.new_lines());
            let (old, new) = (o.old_lines(), o.new_lines());
            let k = kept(&hunk(h, true), &dold, &dnew);
            if k.iter()
                .enumerate()
                .any(|(n, o)| o.is_some_and(|o| old[o] != new[n]))
            {
                return Some("aider: other lines kept");
            }
        }
        if matches!(d, Damage::Indent | Damage::Tabs) {
            // Added lines are written in the indentation the matched
            // lines show: B's must be what that gives.
            let indented: Vec<&str> = o
                .lines
                .iter()
                .map(|(_, l)| l.as_str())
                .filter(|l| !blank(l))
                .map(lead)
                .collect();
            let tab_form = |ws: &str| {
                let t = ws.trim_start_matches('\t');
                t.len() < ws.len() && t.len() < 4 && !t.contains('\t')
            };
            let spaces = |ws: &str| !ws.contains('\t');
            let consistent = indented.iter().all(|ws| tab_form(ws) || ws.is_empty())
                || indented.iter().all(|ws| spaces(ws));
            if !consistent {
                return Some("indentation mixed");
            }
            if o.lines
                .iter()
                .any(|(t, l)| *t == '+' && blank(l) && !l.is_empty())
            {
                return Some("an added blank line with blanks");
            }
            let shows_tabs = o
                .lines
                .iter()
                .any(|(t, l)| *t != '+' && !blank(l) && lead(l).contains('\t'));
            let adds_tabs = o
                .lines
                .iter()
                .any(|(t, l)| *t == '+' && !blank(l) && lead(l).contains('\t'));
            if !o.lines.iter().any(|(t, l)| *t != '+' && !blank(l)) {
                return Some("nothing shows the indentation");
            }
            if d == Damage::Tabs && adds_tabs && !shows_tabs {
                return Some("tabs: nothing shows the width");
            }
        }
    }
    // Where the hunks go must be decided by their lines (and numbers).
    let mut cursor = 0;
    let mut shift_known = false;
    for (i, (o, h)) in orig.iter().zip(damaged).enumerate() {
        let old = h.old_lines();
        let copies = |eq: fn(&str, &str) -> bool| places(a, &old, cursor, eq);
        match locate {
            Locate::Sequential => {
                // The first match from the cursor, by any step.
                if old.is_empty() && !a.is_empty() {
                    return Some("sequential: added-only hunk");
                }
                if d == Damage::None {
                    // Exact at its place: only an exact copy before it
                    // comes first.
                    if copies(|f, p| f == p).first() != Some(&o.start) {
                        return Some("sequential: an exact copy comes first");
                    }
                } else {
                    let mut at = copies(loosely);
                    if old.last().is_some_and(|l| l.is_empty()) {
                        let cut = &old[..old.len() - 1];
                        at.extend(places(a, cut, cursor, loosely));
                    }
                    if at.iter().any(|&p| p != o.start) {
                        return Some("sequential: another place fits");
                    }
                }
            }
            Locate::Unique => {
                if d != Damage::None && d != Damage::Shift {
                    // The hunk as damaged, exactly elsewhere: it asks for
                    // that place.
                    if copies(|f, p| f == p).iter().any(|&p| p != o.start) {
                        return Some("unique: damaged hunk exact elsewhere");
                    }
                }
                if d == Damage::Ctx && copies(loosely).iter().any(|&p| p != o.start) {
                    return Some("ctx: another place fits loosely");
                }
                if d == Damage::Shift && !old.is_empty() {
                    // A wrong number chooses among exact copies only once
                    // a hunk before or after shows the shift.
                    if copies(|f, p| f == p).len() > 1
                        && !shift_known
                        && !damaged[i + 1..].iter().any(|l| {
                            let old = l.old_lines();
                            !old.is_empty() && places(a, &old, cursor, |f, p| f == p).len() == 1
                        })
                    {
                        return Some("shift: nothing shows it");
                    }
                    shift_known = true;
                }
            }
        }
        cursor = o.start + o.old_lines().len();
    }
    None
}

/// Whether to print one `STAT` line per input and locate (outcome, and
/// why the oracle was off): `CLADA_FUZZ_STATS=1`, for running a corpus
/// through the target to see what the oracle covers.
fn stats() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CLADA_FUZZ_STATS").is_some())
}

/// With `CLADA_FUZZ_DUMP=DIR`, a wrong result's A, B and what EDIT
/// wrote go to `DIR/{a,b,got}`, to compare them with a diff tool.
fn dump(a: &str, b: &str, got: &[u8]) {
    if let Some(dir) = std::env::var_os("CLADA_FUZZ_DUMP") {
        let dir = std::path::Path::new(&dir);
        for (name, bytes) in [("a", a.as_bytes()), ("b", b.as_bytes()), ("got", got)] {
            let _ = std::fs::write(dir.join(name), bytes);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (v, p1, p2) = (data[0], data[1], data[2]);
    let Some(sep) = data[3..].iter().position(|&b| b == 0) else {
        return;
    };
    let (a, b) = (text(&data[3..3 + sep]), text(&data[3 + sep + 1..]));
    let (orig, final_newline) = diff(&a, &b);
    let (d, aider) = (damage_of(v), v & 8 != 0);
    let Some(damaged) = damage(&orig, d, p1, p2) else {
        return;
    };
    let hunks: Vec<Hunk> = damaged.iter().map(|h| hunk(h, aider)).collect();
    let a_lines: Vec<&str> = a.split_terminator('\n').collect();
    for locate in [Locate::Unique, Locate::Sequential] {
        let got = edit(
            a.as_bytes(),
            &hunks,
            locate,
            final_newline,
            usize::MAX,
            true,
        );
        let skip = out_of_domain(&a_lines, &orig, &damaged, d, aider, locate);
        if stats() {
            let outcome = match &got {
                Ok(e) if e.bytes == b.as_bytes() => "B".to_string(),
                Ok(_) => "other".to_string(),
                Err(e) => format!("{:?}", e)
                    .split([' ', '{'])
                    .next()
                    .unwrap_or("")
                    .to_string(),
            };
            eprintln!(
                "STAT\t{d:?}\t{}\t{locate:?}\t{outcome}\t{}",
                if aider { "aider" } else { "tagged" },
                skip.unwrap_or("checked")
            );
        }
        if let Ok(e) = &got
            && skip.is_none()
            && e.bytes != b.as_bytes()
        {
            dump(&a, &b, &e.bytes);
            panic!(
                "WRONG: {locate:?} {d:?} aider={aider}\nA={a:?}\nB={b:?}\nhunks={hunks:#?}\ngot={:?}\nnotes={:?} lines={:?}",
                String::from_utf8_lossy(&e.bytes),
                e.notes,
                e.lines
            );
        }
        // The exact diff, numbered, is never refused but as applied
        // already (an added line that already stands there).
        if d == Damage::None
            && !aider
            && locate == Locate::Unique
            && let Err(err) = &got
            && !matches!(err, EditError::AlreadyApplied { .. })
        {
            panic!("REFUSED an exact diff: {err:?}\nA={a:?}\nB={b:?}\nhunks={hunks:#?}");
        }
    }
    // `--match whitespace` on each hunk as a SEARCH/REPLACE: never
    // panics; for a single hunk in the oracle's domain, a match spliced
    // in gives B.
    for (i, h) in damaged.iter().enumerate() {
        let (old, new) = (h.old_lines(), h.new_lines());
        let found = whitespace_lines(&a, &old, &new);
        if damaged.len() != 1 || final_newline.is_some() {
            continue;
        }
        if out_of_domain(&a_lines, &orig, &damaged, d, true, Locate::Unique).is_some() {
            continue;
        }
        if let Loose::Found {
            start, len, new, ..
        } = found
        {
            let mut out: Vec<&str> = a_lines[..start].to_vec();
            out.extend(new.iter().map(String::as_str));
            out.extend(&a_lines[start + len..]);
            let b_lines: Vec<&str> = b.split_terminator('\n').collect();
            assert!(
                out == b_lines,
                "WRONG whitespace_lines, hunk {i}: {d:?}\nA={a:?}\nB={b:?}\ngot={out:?}"
            );
        }
    }
});
