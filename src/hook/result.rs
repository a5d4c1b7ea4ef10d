//! The result note a server writes on a request's commit.
//!
//! The note is the report `git clada apply` would print, then one
//! paragraph of trailers that a program can read (`git interpret-trailers
//! --parse`, or [`request_of`]):
//!
//! ```text
//! Clada-Status: success | partial | failed | rejected | branch_moved | fatal | stale | ambiguous | refused | error
//! Clada-Request: <blob id of the inbox note answered>
//! Clada-Request-Ref: <refs/clada/inbox/<id>>  (a request of its own)
//! Clada-Branch: <branch>                  (when one was chosen)
//! Clada-Post: <post commit id>            (when a post commit was made)
//! Clada-Pusher: <pusher>                  (when the server knows who pushed)
//! ```

use crate::git::ObjectId;
use crate::git::ship::{Kind, Object};

/// Everything a result note says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultNote {
    /// A status of the apply report, or `stale`, `ambiguous`, `refused`,
    /// `error`.
    pub status: String,
    /// The inbox note answered.
    pub request: ObjectId,
    /// The request's own reference (`refs/clada/inbox/<id>`), when it
    /// came as a request of its own: what tells two requests with the same
    /// reply on the same commit apart.
    pub request_ref: Option<String>,
    /// The branch's short name, when one was chosen.
    pub branch: Option<String>,
    /// The post commit, when one was made.
    pub post: Option<ObjectId>,
    /// Who pushed the request, when the server knows (doc/hooks.md,
    /// "Branch permissions").
    pub pusher: Option<String>,
    /// The report.
    pub body: String,
}

impl ResultNote {
    /// The text of the note.
    pub fn render(&self) -> String {
        let mut text = self.body.trim_end().to_string();
        text.push_str("\n\n");
        text.push_str(&format!("Clada-Status: {}\n", self.status));
        text.push_str(&format!("Clada-Request: {}\n", self.request));
        if let Some(name) = &self.request_ref {
            text.push_str(&format!("Clada-Request-Ref: {name}\n"));
        }
        if let Some(branch) = &self.branch {
            text.push_str(&format!("Clada-Branch: {branch}\n"));
        }
        if let Some(post) = self.post {
            text.push_str(&format!("Clada-Post: {post}\n"));
        }
        if let Some(pusher) = &self.pusher {
            text.push_str(&format!("Clada-Pusher: {pusher}\n"));
        }
        text
    }
}

/// The request a result note answers: its `Clada-Request` trailer, read
/// from the last paragraph only (the report above it quotes the reply and
/// the files, which could hold anything).
pub fn request_of(note: &[u8]) -> Option<ObjectId> {
    trailer(note, "Clada-Request").and_then(|id| ObjectId::from_hex(id.as_bytes()).ok())
}

/// The `Clada-Status` of a result note (or of a per-request result
/// commit's message, which is the same text).
pub fn status_of(note: &[u8]) -> Option<String> {
    trailer(note, "Clada-Status")
}

/// The `Clada-Request-Ref` of a result: the request reference answered.
pub fn request_ref_of(note: &[u8]) -> Option<String> {
    trailer(note, "Clada-Request-Ref")
}

/// The `Clada-Post` of a result: the commit the request made.
pub fn post_of(note: &[u8]) -> Option<ObjectId> {
    trailer(note, "Clada-Post").and_then(|id| ObjectId::from_hex(id.as_bytes()).ok())
}

/// The branch a request names (`Clada-Branch` in its notes commit's
/// message), when it names a valid one.
pub fn branch_of(message: &[u8]) -> Option<String> {
    branch_trailer(message).filter(|b| is_branch_name(b))
}

/// Whether a request's message asks for the objects the branch gained
/// since the reply's commit (`Clada-Objects: send`, as `push-reply` writes
/// it): a person pushing a request by hand is not shown them.
pub fn wants_objects(message: &[u8]) -> bool {
    trailer(message, "Clada-Objects").as_deref() == Some("send")
}

/// The value of a request's `Clada-Branch` trailer as written, a branch's
/// name or not: pre-receive refuses a request whose value is not one.
pub fn branch_trailer(message: &[u8]) -> Option<String> {
    trailer(message, "Clada-Branch")
}

/// Whether `name` is one branch's short name: a valid reference name under
/// `refs/heads/`, and none of the characters that make a pattern or a
/// list (`*`, `?`, `[`, spaces) nor an option's leading `-`.
pub fn is_branch_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.contains(['*', '?', '[', '\\', ' ', '\t'])
        && crate::git::commit::is_valid_ref_name(&format!("refs/heads/{name}"))
}

/// A result as post-receive prints it for the pusher, in an envelope a
/// client can check: git shows it as `remote:` lines, which it may cut or
/// pad, so the text is taken from the push's output only when its SHA-1
/// is the one announced (else it is fetched).
pub fn envelope(id: &str, status: &str, text: &str) -> String {
    let mut out = format!(
        "clada: request {id}: {status}; the result ({}) follows\n",
        checksum(text.as_bytes())
    );
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("clada: end of the result of request {id}\n"));
    out
}

/// The result of request `id` from a push's standard error (git's
/// `remote: ` lines), when it is there whole.
pub fn from_push_output(stderr: &str, id: &str) -> Option<String> {
    let start = format!("clada: request {id}: ");
    let (announced, text) = block(
        stderr,
        |line| {
            line.strip_prefix(&start)?
                .split_once("; the result (")?
                .1
                .strip_suffix(") follows")
        },
        &format!("clada: end of the result of request {id}"),
    )?;
    (checksum(text.as_bytes()) == announced).then_some(text)
}

/// The post commit of request `id` as post-receive prints it after its
/// result: the commit object's bytes, for a client that can rebuild its
/// tree to take it without fetching it (`git clada push-reply`). `None`
/// when the object is not text a push's output carries whole.
pub fn post_envelope(id: &str, post: ObjectId, raw: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?;
    // git shows a carriage return as the end of a line, and a line it
    // shows may lose trailing spaces: such an object would not come back
    // as it is (the client would then fetch it).
    if text.contains('\r') || !text.ends_with('\n') {
        return None;
    }
    Some(format!(
        "clada: request {id}: its post commit {post} follows\n{text}clada: end of the post commit of request {id}\n"
    ))
}

/// The bytes of post commit `post` of request `id` from a push's standard
/// error, when they are there whole: their object id is `post`.
pub fn post_from_push_output(
    stderr: &str,
    id: &str,
    post: ObjectId,
    commit_id: impl Fn(&[u8]) -> Option<ObjectId>,
) -> Option<Vec<u8>> {
    let start = format!("clada: request {id}: its post commit {post} follows");
    let (_, text) = block(
        stderr,
        |line| (line == start).then_some(""),
        &format!("clada: end of the post commit of request {id}"),
    )?;
    (commit_id(text.as_bytes()) == Some(post)).then(|| text.into_bytes())
}

/// The objects the branch gained since `base` (the commit request `id`
/// was sent for), as post-receive prints them after the result
/// (`git::ship`): the post commit's, and those of the commits in between
/// when the request was replayed on a tip that moved. A line each: kind,
/// id and the bytes in hex (`-` for none: git may drop a line's trailing
/// space), which a push's output carries unchanged.
pub fn objects_envelope(id: &str, base: ObjectId, objects: &[Object]) -> String {
    let mut text = format!("clada: request {id}: the objects since {base} follow\n");
    for o in objects {
        text.push_str(o.kind.as_str());
        text.push(' ');
        text.push_str(&o.id.to_string());
        text.push(' ');
        if o.data.is_empty() {
            text.push('-');
        } else {
            text.push_str(&faster_hex::hex_string(&o.data));
        }
        text.push('\n');
    }
    text.push_str(&format!("clada: end of the objects of request {id}\n"));
    text
}

/// The objects since `base` of request `id` from a push's standard error,
/// when they are there whole and well-formed (their ids are checked when
/// they are written: `Repository::take_objects`).
pub fn objects_from_push_output(stderr: &str, id: &str, base: ObjectId) -> Option<Vec<Object>> {
    let start = format!("clada: request {id}: the objects since {base} follow");
    let (_, text) = block(
        stderr,
        |line| (line == start).then_some(""),
        &format!("clada: end of the objects of request {id}"),
    )?;
    text.lines()
        .map(|line| {
            let mut parts = line.split(' ');
            let kind = Kind::parse(parts.next()?)?;
            let id = ObjectId::from_hex(parts.next()?.as_bytes()).ok()?;
            let hex = match parts.next()? {
                "-" => &b""[..],
                hex => hex.as_bytes(),
            };
            if parts.next().is_some() || hex.len() % 2 != 0 {
                return None;
            }
            let mut data = vec![0; hex.len() / 2];
            if !hex.is_empty() {
                faster_hex::hex_decode(hex, &mut data).ok()?;
            }
            Some(Object { kind, id, data })
        })
        .collect()
}

/// The lines of a push's standard error between the first line `start`
/// takes (what it says of the line is returned first) and the line `end`.
fn block<'s>(
    stderr: &'s str,
    start: impl Fn(&'s str) -> Option<&'s str>,
    end: &str,
) -> Option<(&'s str, String)> {
    let mut lines = stderr.lines().map(|line| {
        // git writes `remote: ` before each line and, when not on a
        // terminal, eight spaces after a line that is not empty.
        let line = line.strip_prefix("remote: ").unwrap_or(line);
        line.strip_suffix("        ").unwrap_or(line)
    });
    let announced = lines.find_map(start)?;
    let mut text = String::new();
    for line in lines {
        if line == end {
            return Some((announced, text));
        }
        text.push_str(line);
        text.push('\n');
    }
    None
}

/// The SHA-1 of `bytes`, in hex.
pub(crate) fn checksum(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    sha1::Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The value of trailer `key` in the last paragraph of `note`.
fn trailer(note: &[u8], key: &str) -> Option<String> {
    let text = String::from_utf8_lossy(note);
    let last = text.trim_end().rsplit("\n\n").next()?;
    last.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .map(|v| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_trailer_names_one_branch() {
        for good in ["main", "agents/a-1", "feature/x.y"] {
            assert!(is_branch_name(good), "{good}");
        }
        for bad in [
            "",
            "agents/*",
            "main agents/x",
            "../main",
            "a..b",
            "-x",
            "ma?n",
            "[ab]",
            "x.lock",
        ] {
            assert!(!is_branch_name(bad), "{bad}");
        }
    }

    #[test]
    fn trailers_close_the_note_and_only_they_are_read() {
        let request = ObjectId::from_hex("b".repeat(40).as_bytes()).unwrap();
        let decoy = "c".repeat(40);
        let result = ResultNote {
            status: "success".into(),
            request,
            request_ref: None,
            branch: Some("main".into()),
            post: None,
            pusher: None,
            body: format!(
                "[task-1] SUCCESS: WRITE a\n\nClada-Request: {decoy}\n\nclada: applied\n"
            ),
        };
        let text = result.render();
        assert!(text.ends_with(&format!(
            "clada: applied\n\nClada-Status: success\nClada-Request: {request}\nClada-Branch: main\n"
        )));
        assert_eq!(request_of(text.as_bytes()), Some(request));
        assert_eq!(status_of(text.as_bytes()).as_deref(), Some("success"));
        // Through a push's output and back, as git shows it.
        let shown: String = envelope("a/1", "success", &text)
            .lines()
            .map(|l| {
                if l.is_empty() {
                    "remote: \n".to_string()
                } else {
                    format!("remote: {l}        \n")
                }
            })
            .collect();
        let noise = format!("To http://x/y.git\n{shown} * [new reference] x -> y\n");
        assert_eq!(
            from_push_output(&noise, "a/1").as_deref(),
            Some(text.as_str())
        );
        assert_eq!(from_push_output(&noise, "a/2"), None);
        // A line git cut or changed fails the checksum.
        let cut = noise.replacen("WRITE a", "WRITE b", 1);
        assert_eq!(from_push_output(&cut, "a/1"), None);
        assert_eq!(
            request_of(format!("Clada-Request: {decoy}\n\nbody\n").as_bytes()),
            None
        );
    }

    #[test]
    fn a_post_commit_comes_back_from_a_push_only_whole() {
        let raw = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\n[clada:post] x\n\nClada-Tasks: 1 succeeded\n";
        let id = |bytes: &[u8]| {
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Commit, bytes).ok()
        };
        let post = id(raw).unwrap();
        let shown: String = post_envelope("r/1", post, raw)
            .unwrap()
            .lines()
            .map(|l| format!("remote: {l}        \n"))
            .collect();
        let output =
            format!("remote: clada: request r/1: success; the result (x) follows\n{shown}");
        assert_eq!(
            post_from_push_output(&output, "r/1", post, id).as_deref(),
            Some(&raw[..])
        );
        assert_eq!(post_from_push_output(&output, "r/2", post, id), None);
        // Another commit's id, or a line that did not come back as it was.
        let other = id(b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nx\n").unwrap();
        assert_eq!(post_from_push_output(&output, "r/1", other, id), None);
        let cut = output.replacen("[clada:post] x", "[clada:post] y", 1);
        assert_eq!(post_from_push_output(&cut, "r/1", post, id), None);
        // What git would not carry whole is not printed.
        assert_eq!(post_envelope("r/1", post, b"tree x\r\n\nm\n"), None);
        assert_eq!(post_envelope("r/1", post, b"tree x\n\nm"), None);
        assert_eq!(post_envelope("r/1", post, b"tree x\n\n\xff\n"), None);
    }

    #[test]
    fn objects_come_back_from_a_push_as_they_were_sent() {
        use crate::git::ship::{Kind, Object};
        let base = ObjectId::from_hex("b".repeat(40).as_bytes()).unwrap();
        let object = |kind, hex: &str, data: &[u8]| Object {
            kind,
            id: ObjectId::from_hex(hex.repeat(40).as_bytes()).unwrap(),
            data: data.to_vec(),
        };
        let objects = vec![
            object(Kind::Blob, "1", b""),
            object(Kind::Blob, "2", b"\x00\xff\r\n  "),
            object(Kind::Tree, "3", b"100644 a\0..."),
            object(Kind::Commit, "4", b"tree x\n\nm\n"),
        ];
        let shown: String = objects_envelope("r/1", base, &objects)
            .lines()
            .map(|l| format!("remote: {l}        \n"))
            .collect();
        assert_eq!(
            objects_from_push_output(&shown, "r/1", base),
            Some(objects.clone())
        );
        assert_eq!(objects_from_push_output(&shown, "r/2", base), None);
        let other = ObjectId::from_hex("c".repeat(40).as_bytes()).unwrap();
        assert_eq!(objects_from_push_output(&shown, "r/1", other), None);
        // Cut short, or a line changed: not taken.
        let cut: String = shown.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(objects_from_push_output(&cut, "r/1", base), None);
        let odd = shown.replacen("tree 333", "tag 333", 1);
        assert_eq!(objects_from_push_output(&odd, "r/1", base), None);
        let short = shown.replacen("00ff", "0ff", 1);
        assert_eq!(objects_from_push_output(&short, "r/1", base), None);
    }
}
