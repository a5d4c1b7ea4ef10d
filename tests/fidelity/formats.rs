//! The block formats printed from a plan (blocks.rs): aider
//! SEARCH/REPLACE, CSL, clada's JSON operation list and Claude
//! text-editor calls, each as a model would write it, optionally damaged.

use serde_json::{Value, json};

use super::blocks::{BLine, Block, FileOp, Skip, Tag};
use super::damage::{self, Damage};
use super::text::Line;

/// The plan with `damage` applied to the blocks of its edits; `Na` when
/// the damage changes nothing.
pub fn damaged(ops: &[FileOp], damage: Option<Damage>, seed: u64) -> Result<Vec<FileOp>, Skip> {
    let Some(d) = damage else {
        return Ok(ops.to_vec());
    };
    let mut hunks: Vec<Vec<(u8, Vec<u8>)>> = Vec::new();
    for op in ops {
        if let FileOp::Edit { blocks, .. } = op {
            for b in blocks {
                hunks.push(
                    b.lines
                        .iter()
                        .map(|l| (l.tag.byte(), l.line.text.clone().into_bytes()))
                        .collect(),
                );
            }
        }
    }
    if d == Damage::Ws && damage::erases_a_change(&hunks) {
        // In SEARCH/REPLACE text a removed line and its added line that
        // differ only in trailing blanks become one kept line once the
        // blanks go: the reply no longer asks for the change, and no
        // applier can know it did.
        return Err(Skip::Na(
            "the -ws damage makes a removed line equal to the added line that replaces it, erasing that change from SEARCH/REPLACE text".to_string(),
        ));
    }
    if !damage::apply(d, &mut hunks, seed) {
        return Err(Skip::Na(format!(
            "the -{} damage changes nothing here",
            d.suffix()
        )));
    }
    let mut it = hunks.into_iter();
    let mut out = ops.to_vec();
    for op in &mut out {
        if let FileOp::Edit { blocks, .. } = op {
            for b in blocks {
                let lines = it.next().expect("one hunk per block");
                for (l, (_, text)) in b.lines.iter_mut().zip(lines) {
                    l.line.text = String::from_utf8(text).expect("damage keeps UTF-8");
                }
            }
        }
    }
    Ok(out)
}

/// A line that reads as one of the block's markers, which a block's
/// content cannot hold: 5–9 `<` + ` SEARCH`, `=` alone, `>` + ` REPLACE`,
/// or Cline's `-` + ` SEARCH` and `+` + ` REPLACE`; indented too, as
/// aider's own reader strips a line before it compares.
fn marker_like(text: &str) -> bool {
    let t = text.trim();
    [
        ('<', " SEARCH"),
        ('=', ""),
        ('>', " REPLACE"),
        ('-', " SEARCH"),
        ('+', " REPLACE"),
    ]
    .iter()
    .any(|&(c, word)| {
        let run = t.chars().take_while(|&x| x == c).count();
        (5..=9).contains(&run) && t[run..].trim_end() == word
    })
}

fn push_lines(out: &mut String, lines: &[Line]) {
    for l in lines {
        out.push_str(&l.text);
        out.push('\n');
    }
}

/// aider's SEARCH/REPLACE blocks: the path on the line before each block.
/// aider has no delete or rename, and its lines cannot say that the last
/// line loses or gains its line end.
pub fn aider(ops: &[FileOp]) -> Result<String, Skip> {
    let mut out = String::new();
    for op in ops {
        let (path, blocks) = match op {
            FileOp::Edit { path, blocks } => (path, blocks.clone()),
            FileOp::Write { path, content, .. } => {
                if content.is_empty() {
                    return Err(Skip::Na(format!(
                        "{path}: aider cannot write an empty file"
                    )));
                }
                let lines = super::text::split(content.as_bytes())
                    .into_iter()
                    .map(|line| BLine {
                        tag: Tag::Add,
                        line,
                    })
                    .collect();
                (path, vec![Block { lines }])
            }
            FileOp::Delete { .. } => return Err(Skip::Na("aider cannot delete a file".into())),
            FileOp::Move { .. } => return Err(Skip::Na("aider cannot rename a file".into())),
        };
        for b in &blocks {
            let (s, r) = (b.search_lines(), b.replace_lines());
            let end = |v: &[Line]| v.last().is_none_or(|l| l.eol);
            if end(&s) != end(&r) && !s.is_empty() {
                return Err(Skip::Na(format!(
                    "{path}: the last line's line end changes"
                )));
            }
            if s.iter().chain(&r).any(|l| marker_like(&l.text)) {
                return Err(Skip::Na(format!("{path}: a line like an aider marker")));
            }
            out.push_str(path);
            out.push_str("\n<<<<<<< SEARCH\n");
            push_lines(&mut out, &s);
            out.push_str("=======\n");
            push_lines(&mut out, &r);
            out.push_str(">>>>>>> REPLACE\n\n");
        }
    }
    Ok(out)
}

/// A CSL attribute value, quoted.
fn attr(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A word for a RUN line (shell rules), quoted when it needs to be.
fn word(w: &str) -> Result<String, Skip> {
    if w.starts_with('-') {
        return Err(Skip::Na(format!("{w}: a path that reads as an option")));
    }
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+@%,:=".contains(c))
    {
        Ok(w.to_string())
    } else {
        Ok(format!("'{}'", w.replace('\'', "'\\''")))
    }
}

/// Text as CSL section content: its lines, each on a line of its own
/// (a final line end is an empty last line, csl.md §4).
fn csl_content(out: &mut String, text: &str) -> Result<(), Skip> {
    if text.is_empty() {
        return Ok(());
    }
    for l in text.split('\n') {
        // Indented too: an indented marker is a warning that drops the
        // operation (csl.md §6), not content.
        if l.trim_start().starts_with("<---") {
            return Err(Skip::Na(
                "a line starting with CSL's start delimiter".into(),
            ));
        }
        out.push_str(l);
        out.push('\n');
    }
    Ok(())
}

/// CSL: SEARCH/REPLACE per block, WRITE for whole files, and RUN `rm` /
/// `mkdir -p` + `mv` for deletes and renames.
pub fn csl(ops: &[FileOp]) -> Result<String, Skip> {
    let mut out = String::new();
    for op in ops {
        match op {
            FileOp::Edit { path, blocks } => {
                for b in blocks {
                    let (s, r) = b.texts();
                    out.push_str(&format!("<---SEARCH file={}--->\n", attr(path)));
                    csl_content(&mut out, &s)?;
                    out.push_str("<---REPLACE--->\n");
                    csl_content(&mut out, &r)?;
                    out.push_str("<---END--->\n\n");
                }
            }
            FileOp::Write { path, content, .. } => {
                out.push_str(&format!("<---WRITE file={}--->\n", attr(path)));
                // WRITE adds the final newline a content lacks; a file that
                // ends in an empty line keeps it as an empty last line.
                let bare = content.strip_suffix('\n').unwrap_or(content);
                let text = if bare.is_empty() || bare.ends_with('\n') {
                    content
                } else {
                    bare
                };
                csl_content(&mut out, text)?;
                out.push_str("<---END--->\n\n");
            }
            FileOp::Delete { path } => {
                out.push_str(&format!("<---RUN--->\nrm {}\n<---END--->\n\n", word(path)?));
            }
            FileOp::Move { from, to } => {
                out.push_str("<---RUN--->\n");
                if let Some((dir, _)) = to.rsplit_once('/') {
                    out.push_str(&format!("mkdir -p {}\n", word(dir)?));
                }
                out.push_str(&format!(
                    "mv {} {}\n<---END--->\n\n",
                    word(from)?,
                    word(to)?
                ));
            }
        }
    }
    Ok(out)
}

/// clada's JSON operation list (doc/syntaxes.md, `src/syntax/json.rs`).
pub fn json(ops: &[FileOp]) -> Result<String, Skip> {
    let mut list: Vec<Value> = Vec::new();
    for op in ops {
        match op {
            FileOp::Edit { path, blocks } => {
                for b in blocks {
                    let (s, r) = b.texts();
                    list.push(json!({"op": "search", "path": path, "search": s, "replace": r}));
                }
            }
            FileOp::Write { path, content, .. } => {
                list.push(json!({"op": "write", "path": path, "content": content}));
            }
            FileOp::Delete { path } => list.push(json!({"op": "delete", "path": path})),
            FileOp::Move { from, to } => list.push(json!({"op": "move", "from": from, "to": to})),
        }
    }
    Ok(serde_json::to_string_pretty(&list).expect("JSON values print") + "\n")
}

/// Claude text-editor calls: `str_replace` and `create` only (the tool has
/// no delete or rename, and `create` over an existing file is refused).
pub fn claude(ops: &[FileOp]) -> Result<String, Skip> {
    let mut list: Vec<Value> = Vec::new();
    for op in ops {
        match op {
            FileOp::Edit { path, blocks } => {
                for b in blocks {
                    let (s, r) = b.texts();
                    list.push(
                        json!({"command": "str_replace", "path": path, "old_str": s, "new_str": r}),
                    );
                }
            }
            FileOp::Write {
                path,
                content,
                new: true,
            } => {
                list.push(json!({"command": "create", "path": path, "file_text": content}));
            }
            FileOp::Write { path, .. } => {
                return Err(Skip::Na(format!(
                    "{path}: an empty file filled (create would overwrite)"
                )));
            }
            FileOp::Delete { .. } => {
                return Err(Skip::Na("the text editor cannot delete a file".into()));
            }
            FileOp::Move { .. } => {
                return Err(Skip::Na("the text editor cannot rename a file".into()));
            }
        }
    }
    Ok(serde_json::to_string_pretty(&list).expect("JSON values print") + "\n")
}
