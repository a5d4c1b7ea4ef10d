//! The commit as file operations with search blocks: what a careful model
//! writing aider, CSL, JSON or Claude edits would send.
//!
//! Each hunk of the real diff becomes one block (SEARCH = kept + removed
//! lines, REPLACE = kept + added lines), extended with more lines of the
//! file around it until its SEARCH text occurs exactly once in the file as
//! it stands when the block is applied (the earlier blocks applied). The
//! blocks are then replayed here as plain text replacement, and the result
//! must be the commit's `after/` (as LF text): a generator that does not
//! reproduce the commit is a harness bug, reported as such, never counted
//! against the applier.

use std::path::Path;

use super::corpus::Entry;
use super::gitdiff::Section;
use super::text::{self, Line};

/// Why a case is not run: the format cannot say the change (`Na`), or the
/// harness failed to build it (`Bug`, a defect of the harness itself).
#[derive(Clone, Debug)]
pub enum Skip {
    Na(String),
    Bug(String),
}

/// A block line's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Keep,
    Del,
    Add,
}

impl Tag {
    pub fn byte(self) -> u8 {
        match self {
            Tag::Keep => b' ',
            Tag::Del => b'-',
            Tag::Add => b'+',
        }
    }
}

#[derive(Clone, Debug)]
pub struct BLine {
    pub tag: Tag,
    pub line: Line,
}

/// One SEARCH/REPLACE block.
#[derive(Clone, Debug)]
pub struct Block {
    pub lines: Vec<BLine>,
}

impl Block {
    fn side(&self, keep: Tag) -> Vec<Line> {
        self.lines
            .iter()
            .filter(|l| l.tag == Tag::Keep || l.tag == keep)
            .map(|l| l.line.clone())
            .collect()
    }

    /// The SEARCH lines.
    pub fn search_lines(&self) -> Vec<Line> {
        self.side(Tag::Del)
    }

    /// The REPLACE lines.
    pub fn replace_lines(&self) -> Vec<Line> {
        self.side(Tag::Add)
    }

    /// SEARCH and REPLACE as text, as CSL, JSON and Claude send them: the
    /// lines with their line ends, less one final line end that both
    /// share (a model writes `a\nb`, not `a\nb\n`), unless that would
    /// leave the SEARCH empty.
    pub fn texts(&self) -> (String, String) {
        let mut s = text::join(&self.search_lines());
        let mut r = text::join(&self.replace_lines());
        if s.len() > 1 && s.ends_with('\n') && r.ends_with('\n') {
            s.pop();
            r.pop();
        }
        (s, r)
    }
}

/// One operation of the plan, in the order of the diff's sections.
#[derive(Clone, Debug)]
pub enum FileOp {
    /// Search blocks, applied in order.
    Edit {
        path: String,
        blocks: Vec<Block>,
    },
    /// The whole file, LF text ending in a newline (or empty); `new` when
    /// the file did not exist.
    Write {
        path: String,
        content: String,
        new: bool,
    },
    Delete {
        path: String,
    },
    Move {
        from: String,
        to: String,
    },
}

/// The whole commit as file operations, or why it cannot be said that way.
pub fn plan(entry: &Entry) -> Result<Vec<FileOp>, Skip> {
    let mut ops = Vec::new();
    for s in &entry.sections {
        if s.old_mode.as_deref() == Some("120000") || s.new_mode.as_deref() == Some("120000") {
            return Err(Skip::Na("a symbolic link: only a diff carries one".into()));
        }
        if s.mode_changes() {
            return Err(Skip::Na("a mode change: only a diff carries modes".into()));
        }
        match s.status() {
            'A' => {
                if s.new_mode.as_deref() == Some("100755") {
                    return Err(Skip::Na(
                        "a new executable file: only a diff carries modes".into(),
                    ));
                }
                let path = s.new_path.clone().expect("an added file has a new path");
                let after = read(&entry.after(), &path)?;
                if let Some(why) = text::block_format_limit(b"", &after) {
                    return Err(Skip::Na(format!("{path}: {why}")));
                }
                ops.push(FileOp::Write {
                    content: write_content(&path, &after)?,
                    path,
                    new: true,
                });
            }
            'D' => ops.push(FileOp::Delete {
                path: s.old_path.clone().expect("a deleted file has an old path"),
            }),
            status => {
                let old = s.old_path.clone().expect("an old path");
                let new = s.new_path.clone().expect("a new path");
                if status == 'R' {
                    ops.push(FileOp::Move {
                        from: old.clone(),
                        to: new.clone(),
                    });
                }
                if !s.hunks.is_empty() {
                    let before = read(&entry.before(), &old)?;
                    let after = read(&entry.after(), &new)?;
                    ops.push(edit(&new, s, &before, &after)?);
                }
            }
        }
    }
    Ok(ops)
}

pub fn read(root: &Path, path: &str) -> Result<Vec<u8>, Skip> {
    std::fs::read(root.join(path)).map_err(|e| Skip::Bug(format!("{path}: {e}")))
}

/// A file's content as a write says it: every format's write ends the
/// file with a newline (apply.md §4, Codex's Add File), so a non-empty
/// file without one cannot be written.
fn write_content(path: &str, bytes: &[u8]) -> Result<String, Skip> {
    let content = text::lf(bytes);
    if !content.is_empty() && !content.ends_with('\n') {
        return Err(Skip::Na(format!(
            "{path}: a written file without a final newline (writes add one)"
        )));
    }
    Ok(content)
}

/// The blocks of one modified file.
fn edit(path: &str, s: &Section, before: &[u8], after: &[u8]) -> Result<FileOp, Skip> {
    if let Some(why) = text::block_format_limit(before, after) {
        return Err(Skip::Na(format!("{path}: {why}")));
    }
    let mut cur = text::split(before);
    let want = text::lf(after);
    if cur.is_empty() {
        // Nothing to search in: the file is written whole.
        return Ok(FileOp::Write {
            path: path.to_string(),
            content: write_content(path, after)?,
            new: false,
        });
    }
    let mut blocks = Vec::new();
    let mut delta: isize = 0;
    for h in &s.hunks {
        let lines: Vec<BLine> = h
            .lines
            .iter()
            .map(|l| {
                let t = String::from_utf8_lossy(&l.text);
                BLine {
                    tag: match l.tag {
                        b' ' => Tag::Keep,
                        b'-' => Tag::Del,
                        _ => Tag::Add,
                    },
                    line: Line {
                        text: t.strip_suffix('\r').unwrap_or(&t).to_string(),
                        eol: l.eol,
                    },
                }
            })
            .collect();
        let mut block = Block { lines };
        let old = block.search_lines();
        if old.is_empty() {
            return Err(Skip::Na(format!("{path}: a hunk without old lines")));
        }
        let start = (h.old_start as isize - 1 + delta) as usize;
        let (mut lo, mut hi) = (start, start + old.len());
        if cur.get(lo..hi) != Some(&old[..]) {
            return Err(Skip::Bug(format!(
                "{path}: hunk at line {} does not match the file",
                h.old_start
            )));
        }
        // Widen until the SEARCH text is unique in the file as it stands.
        let mut before_turn = true;
        loop {
            let hay = text::join(&cur);
            if text::count(&hay, &block.texts().0) == 1 {
                break;
            }
            if lo > 0 && (before_turn || hi == cur.len()) {
                lo -= 1;
                block.lines.insert(
                    0,
                    BLine {
                        tag: Tag::Keep,
                        line: cur[lo].clone(),
                    },
                );
            } else if hi < cur.len() {
                block.lines.push(BLine {
                    tag: Tag::Keep,
                    line: cur[hi].clone(),
                });
                hi += 1;
            } else {
                return Err(Skip::Bug(format!(
                    "{path}: no unique SEARCH even for the whole file"
                )));
            }
            before_turn = !before_turn;
        }
        let new = block.replace_lines();
        delta += new.len() as isize - (hi - lo) as isize;
        cur.splice(lo..hi, new);
        blocks.push(block);
    }
    if text::join(&cur) != want {
        return Err(Skip::Bug(format!(
            "{path}: replaying the blocks does not give after/"
        )));
    }
    Ok(FileOp::Edit {
        path: path.to_string(),
        blocks,
    })
}
