//! The Codex `apply_patch` scenario: the commit as a `*** Begin Patch`
//! envelope whose hunks Codex's own rules place where git placed them.
//!
//! Codex (`codex-rs/apply-patch`, `compute_replacements` and
//! `seek_sequence`) seeks each hunk in the original file from where the
//! one before ended: first its `@@ anchor` line, then its old lines after
//! the anchor, taking the first exact match (or, for `*** End of File`,
//! only the file's last lines). Each hunk here is checked against those
//! rules: the anchor is git's function context (the full line it names,
//! when that line comes after the previous hunk and leads to the right
//! place), else no anchor; and the hunk is widened with more context
//! lines until the first match is the real one.

use super::blocks::{Skip, read};
use super::corpus::Entry;
use super::damage::{self, Damage};
use super::text::{self, Line};

/// A Codex hunk.
#[derive(Clone, Debug)]
pub struct PHunk {
    pub anchor: Option<String>,
    /// `(tag, text)`, tag `b' '`, `b'-'` or `b'+'`.
    pub lines: Vec<(u8, Vec<u8>)>,
    pub end_of_file: bool,
}

#[derive(Clone, Debug)]
pub enum PFile {
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<PHunk>,
    },
}

/// The commit as Codex sections.
pub fn plan(entry: &Entry) -> Result<Vec<PFile>, Skip> {
    let mut out = Vec::new();
    for s in &entry.sections {
        if s.old_mode.as_deref() == Some("120000") || s.new_mode.as_deref() == Some("120000") {
            return Err(Skip::Na("a symbolic link: only a diff carries one".into()));
        }
        if s.mode_changes() || (s.status() == 'A' && s.new_mode.as_deref() != Some("100644")) {
            return Err(Skip::Na("a mode: only a diff carries modes".into()));
        }
        match s.status() {
            'A' => {
                let path = s.new_path.clone().expect("a new path");
                let after = read(&entry.after(), &path)?;
                if let Some(why) = text::block_format_limit(b"", &after) {
                    return Err(Skip::Na(format!("{path}: {why}")));
                }
                let lines = text::split(&after);
                if lines.last().is_some_and(|l| !l.eol) {
                    return Err(Skip::Na(format!(
                        "{path}: Add File ends every line with a newline"
                    )));
                }
                out.push(PFile::Add {
                    path,
                    lines: lines.into_iter().map(|l| l.text).collect(),
                });
            }
            'D' => out.push(PFile::Delete {
                path: s.old_path.clone().expect("an old path"),
            }),
            status => {
                let old = s.old_path.clone().expect("an old path");
                let new = s.new_path.clone().expect("a new path");
                let before = read(&entry.before(), &old)?;
                let after = read(&entry.after(), &new)?;
                let mut hunks = Vec::new();
                if !s.hunks.is_empty() {
                    if let Some(why) = text::block_format_limit(&before, &after) {
                        return Err(Skip::Na(format!("{old}: {why}")));
                    }
                    if text::split(&after).last().is_some_and(|l| !l.eol) {
                        return Err(Skip::Na(format!(
                            "{old}: Codex ends an updated file with a newline"
                        )));
                    }
                    hunks = place(&old, &text::split(&before), &s.hunks)?;
                }
                out.push(PFile::Update {
                    path: old,
                    move_to: (status == 'R').then_some(new),
                    hunks,
                });
            }
        }
    }
    Ok(out)
}

/// Codex's `seek_sequence`, exact pass (the patch's lines are the file's
/// own, so the exact pass is the one that decides): the first index at or
/// after `start` where `pattern` stands, or only the last position for
/// an end-of-file hunk.
fn seek(lines: &[String], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let from = if eof {
        lines.len() - pattern.len()
    } else {
        start
    };
    (from..=lines.len() - pattern.len()).find(|&i| lines[i..i + pattern.len()] == *pattern)
}

/// The hunks of one file, each checked to land where git put it.
fn place(path: &str, file: &[Line], hunks: &[super::gitdiff::Hunk]) -> Result<Vec<PHunk>, Skip> {
    let orig: Vec<String> = file.iter().map(|l| l.text.clone()).collect();
    let mut out = Vec::new();
    let mut line_index = 0;
    for h in hunks {
        let lines: Vec<(u8, Vec<u8>)> = h
            .lines
            .iter()
            .map(|l| {
                (
                    l.tag,
                    l.text.strip_suffix(b"\r").unwrap_or(&l.text).to_vec(),
                )
            })
            .collect();
        let old: Vec<String> = lines
            .iter()
            .filter(|(t, _)| *t != b'+')
            .map(|(_, t)| String::from_utf8_lossy(t).into_owned())
            .collect();
        if old.is_empty() {
            return Err(Skip::Na(format!("{path}: a hunk without old lines")));
        }
        let start = h.old_start - 1;
        if orig.get(start..start + old.len()) != Some(&old[..]) {
            return Err(Skip::Bug(format!(
                "{path}: hunk at {} does not match",
                h.old_start
            )));
        }
        // git's function context names the nearest line above the hunk
        // that starts with it (git cuts it short); Codex needs the line.
        let heading = String::from_utf8_lossy(&h.heading).trim().to_string();
        let anchor = (!heading.is_empty())
            .then(|| {
                (line_index..start)
                    .rev()
                    .find(|&j| orig[j].starts_with(&heading))
            })
            .flatten();
        let mut placed = None;
        'search: for anchor in [anchor, None] {
            let from = match anchor {
                Some(j) => match seek(&orig, &orig[j..=j], line_index, false) {
                    Some(found) if found == j => j + 1,
                    _ => continue,
                },
                None => line_index,
            };
            // Widen: a line before (never before `from`), then one after.
            let (mut lo, mut hi) = (start, start + old.len());
            let mut before_turn = true;
            loop {
                let eof = hi == orig.len();
                if seek(&orig, &orig[lo..hi], from, eof) == Some(lo) {
                    placed = Some((anchor, lo, hi));
                    break 'search;
                }
                if lo > from && (before_turn || hi == orig.len()) {
                    lo -= 1;
                } else if hi < orig.len() {
                    hi += 1;
                } else {
                    break;
                }
                before_turn = !before_turn;
            }
        }
        let Some((anchor, lo, hi)) = placed else {
            return Err(Skip::Bug(format!(
                "{path}: no Codex placement for hunk at {}",
                h.old_start
            )));
        };
        let mut all: Vec<(u8, Vec<u8>)> = orig[lo..start]
            .iter()
            .map(|t| (b' ', t.clone().into_bytes()))
            .collect();
        all.extend(lines);
        all.extend(
            orig[start + old.len()..hi]
                .iter()
                .map(|t| (b' ', t.clone().into_bytes())),
        );
        out.push(PHunk {
            anchor: anchor.map(|j| orig[j].clone()),
            lines: all,
            end_of_file: hi == orig.len(),
        });
        line_index = hi;
    }
    Ok(out)
}

/// The plan with its hunks damaged.
pub fn damaged(files: &[PFile], d: Option<Damage>, seed: u64) -> Result<Vec<PFile>, Skip> {
    let Some(d) = d else {
        return Ok(files.to_vec());
    };
    let mut hunks: Vec<Vec<(u8, Vec<u8>)>> = Vec::new();
    for f in files {
        if let PFile::Update { hunks: hs, .. } = f {
            hunks.extend(hs.iter().map(|h| h.lines.clone()));
        }
    }
    if !damage::apply(d, &mut hunks, seed) {
        return Err(Skip::Na(format!(
            "the -{} damage changes nothing here",
            d.suffix()
        )));
    }
    let mut it = hunks.into_iter();
    let mut out = files.to_vec();
    for f in &mut out {
        if let PFile::Update { hunks: hs, .. } = f {
            for h in hs {
                h.lines = it.next().expect("one per hunk");
            }
        }
    }
    Ok(out)
}

/// The envelope.
pub fn render(files: &[PFile]) -> Vec<u8> {
    let mut out = b"*** Begin Patch\n".to_vec();
    for f in files {
        match f {
            PFile::Add { path, lines } => {
                out.extend_from_slice(format!("*** Add File: {path}\n").as_bytes());
                for l in lines {
                    out.extend_from_slice(format!("+{l}\n").as_bytes());
                }
            }
            PFile::Delete { path } => {
                out.extend_from_slice(format!("*** Delete File: {path}\n").as_bytes());
            }
            PFile::Update {
                path,
                move_to,
                hunks,
            } => {
                out.extend_from_slice(format!("*** Update File: {path}\n").as_bytes());
                if let Some(to) = move_to {
                    out.extend_from_slice(format!("*** Move to: {to}\n").as_bytes());
                }
                for h in hunks {
                    match &h.anchor {
                        Some(a) => out.extend_from_slice(format!("@@ {a}\n").as_bytes()),
                        None => out.extend_from_slice(b"@@\n"),
                    }
                    for (tag, text) in &h.lines {
                        out.push(*tag);
                        out.extend_from_slice(text);
                        out.push(b'\n');
                    }
                    if h.end_of_file {
                        out.extend_from_slice(b"*** End of File\n");
                    }
                }
            }
        }
    }
    out.extend_from_slice(b"*** End Patch\n");
    out
}
