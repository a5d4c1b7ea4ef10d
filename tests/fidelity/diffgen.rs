//! The unified-diff scenarios, from the commit's own `git diff`: as it is,
//! with shifted line numbers, in aider's udiff form, and damaged.

use super::blocks::Skip;
use super::corpus::Entry;
use super::damage::{self, Damage};
use super::gitdiff::{self, Section};

/// The diff as git printed it.
pub fn plain(entry: &Entry) -> Vec<u8> {
    entry.diff()
}

/// Every hunk's numbers moved by the same offset, 5 to 50 lines, up or
/// down as the commit id says; down only where every number stays at 2
/// or more (to `git apply` a hunk at line 1 must match at the file's
/// start, so a number moved onto 1 would say something else than "this
/// number is off"). A side that is absent (`-0,0` of a new file) stays 0.
pub fn shifted(entry: &Entry) -> Vec<u8> {
    let seed = entry.seed("shift");
    let by = 5 + (seed % 46) as isize;
    let lowest = entry
        .sections
        .iter()
        .flat_map(|s| &s.hunks)
        .flat_map(|h| [h.old_start, h.new_start])
        .filter(|&n| n > 0)
        .min()
        .unwrap_or(1) as isize;
    let by = if (seed >> 40) & 1 == 1 && lowest - by >= 2 {
        -by
    } else {
        by
    };
    let mut sections = entry.sections.clone();
    for h in sections.iter_mut().flat_map(|s| &mut s.hunks) {
        let shift = |n: usize| {
            if n == 0 {
                0
            } else {
                (n as isize + by) as usize
            }
        };
        h.old_start = shift(h.old_start);
        h.new_start = shift(h.new_start);
    }
    gitdiff::render(&sections)
}

/// A path as a udiff header shows it (no quoting: aider's form).
fn header_path(prefix: &str, p: &Option<String>) -> String {
    match p {
        Some(p) => format!("{prefix}{p}"),
        None => "/dev/null".into(),
    }
}

/// aider's udiff: one ```` ```diff ```` fence per file, `--- a/x` /
/// `+++ b/x`, and hunks headed `@@ @@` with no numbers. It has no rename
/// or mode headers.
pub fn nonum(entry: &Entry) -> Result<Vec<u8>, Skip> {
    let mut out = Vec::new();
    for s in &entry.sections {
        if s.status() == 'R' {
            return Err(Skip::Na(
                "a rename: the udiff form has no rename headers".into(),
            ));
        }
        if s.mode_changes() || (s.status() == 'A' && s.new_mode.as_deref() != Some("100644")) {
            return Err(Skip::Na(
                "a mode: the udiff form has no mode headers".into(),
            ));
        }
        if s.hunks.is_empty() {
            return Err(Skip::Na("a section without hunks (an empty file)".into()));
        }
        out.extend_from_slice(b"```diff\n");
        out.extend_from_slice(format!("--- {}\n", header_path("a/", &s.old_path)).as_bytes());
        out.extend_from_slice(format!("+++ {}\n", header_path("b/", &s.new_path)).as_bytes());
        for h in &s.hunks {
            out.extend_from_slice(b"@@ @@\n");
            gitdiff::render_hunk_lines(h, &mut out);
        }
        out.extend_from_slice(b"```\n\n");
    }
    Ok(out)
}

/// The hunks of a file present on both sides, as damage takes them.
pub fn damage_sections(sections: &mut [Section], d: Damage, seed: u64) -> bool {
    let mut hunks: Vec<Vec<(u8, Vec<u8>)>> = Vec::new();
    let edited = |s: &Section| s.old_path.is_some() && s.new_path.is_some();
    for s in sections.iter().filter(|s| edited(s)) {
        for h in &s.hunks {
            hunks.push(h.lines.iter().map(|l| (l.tag, l.text.clone())).collect());
        }
    }
    if !damage::apply(d, &mut hunks, seed) {
        return false;
    }
    let mut it = hunks.into_iter();
    for s in sections.iter_mut().filter(|s| edited(s)) {
        for h in &mut s.hunks {
            for (l, (_, text)) in h.lines.iter_mut().zip(it.next().expect("one per hunk")) {
                l.text = text;
            }
        }
    }
    true
}

/// The git diff, damaged.
pub fn damaged(entry: &Entry, d: Damage) -> Result<Vec<u8>, Skip> {
    let mut sections = entry.sections.clone();
    if !damage_sections(&mut sections, d, entry.seed("ctx")) {
        return Err(Skip::Na(format!(
            "the -{} damage changes nothing here",
            d.suffix()
        )));
    }
    Ok(gitdiff::render(&sections))
}
