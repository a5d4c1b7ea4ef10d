//! push-reply's side of the per-request protocol that is not the `git`
//! program's (doc/hooks.md, "Requests of their own"): the request as a
//! notes commit, the ids a request may have, and whether a result
//! answers this very request. Pushing, fetching and asking the server are
//! `cli/push_reply/`'s, through `git`.

use crate::git::commit::Identity;
use crate::git::{GitError, ObjectId, Repository};
use crate::hook::requests::{MAX_ID, request_ref};
use crate::hook::result::{request_of, request_ref_of};

/// Writes the request for `reply` on commit `tip` of `branch` (its short
/// name): a notes commit holding the reply as the note on `tip`, whose
/// `Clada-Branch` trailer names the branch to apply it to
/// (`hook::result::branch_of` reads it on the server), and whose
/// `Clada-Objects: send` asks the server to print the objects the branch
/// gained since `tip` — the post commit's, and after a replay on a tip
/// that moved those of the commits in between (`git::ship`;
/// `hook::result::wants_objects`) — for `rebuild` to take.
pub fn request_commit(
    repo: &Repository,
    author: &Identity,
    tip: ObjectId,
    reply: &[u8],
    branch: &str,
) -> Result<ObjectId, GitError> {
    repo.notes_commit(
        author,
        &[(tip, reply)],
        &format!("clada: request\n\nClada-Branch: {branch}\nClada-Objects: send\n"),
    )
}

/// Whether `id` can name a request: not empty, at most [`MAX_ID`] bytes,
/// and its request reference a valid reference name.
pub fn is_request_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID && crate::git::commit::is_valid_ref_name(&request_ref(id))
}

/// Whether the result note `text` answers the request `id` made of the
/// reply whose blob is `reply`: it names both. An id is no secret (anyone
/// may list the inbox), so another pusher could withdraw a waiting
/// request and push one of their own under its id.
pub fn answers(text: &[u8], reply: ObjectId, id: &str) -> bool {
    request_of(text) == Some(reply)
        && request_ref_of(text).as_deref() == Some(request_ref(id).as_str())
}

#[cfg(test)]
mod tests {
    use super::{answers, is_request_id};
    use crate::git::ObjectId;
    use crate::hook::result::ResultNote;

    #[test]
    fn request_ids_are_short_valid_reference_names() {
        assert!(is_request_id("agent-1/task.7_b"));
        assert!(is_request_id(&"a".repeat(200)));
        assert!(!is_request_id(""));
        assert!(!is_request_id(&"a".repeat(201)));
        assert!(!is_request_id("a..b"));
        assert!(!is_request_id("a b"));
        assert!(!is_request_id("x.lock"));
    }

    #[test]
    fn a_result_answers_only_the_request_and_reply_it_names() {
        let reply = ObjectId::from_hex("b".repeat(40).as_bytes()).unwrap();
        let other = ObjectId::from_hex("c".repeat(40).as_bytes()).unwrap();
        let note = |request: ObjectId, id: Option<&str>| {
            ResultNote {
                status: "success".into(),
                request,
                request_ref: id.map(crate::hook::requests::request_ref),
                branch: Some("main".into()),
                post: None,
                pusher: None,
                body: "ok\n".into(),
            }
            .render()
        };
        assert!(answers(note(reply, Some("r1")).as_bytes(), reply, "r1"));
        // Another reply under the same id: the request was replaced.
        assert!(!answers(note(other, Some("r1")).as_bytes(), reply, "r1"));
        // The same reply, another request (or a shared-inbox note).
        assert!(!answers(note(reply, Some("r2")).as_bytes(), reply, "r1"));
        assert!(!answers(note(reply, None).as_bytes(), reply, "r1"));
    }
}
