//! The post commit of an applied request, taken from the push's output
//! instead of fetched (doc/hooks.md, "Requests of their own").
//!
//! After a request's result, the server's hook prints the post commit's
//! bytes, and when it replayed the request on a tip that moved since the
//! agent's, the objects the branch gained in between (`git::ship`). The
//! commit's tree is the reply's operations on the branch's tip, which the
//! agent then has: `push-reply` applies the reply here in memory
//! ([`crate::transaction::replay_tree`]) and, when that gives the tree the
//! commit names, writes the new objects and the commit (whose id then is
//! the one announced) instead of fetching them — one HTTP exchange and
//! several processes fewer. Anything else (a reply whose commands the
//! server ran, settings of this clone that apply it differently, an
//! output git cut) leaves it to the fetch.
//!
//! The client's side of the protocol, here beside the server's so that
//! what the hook prints and what the client rebuilds from it stay one
//! library; `cli/push_reply/` pushes, fetches and prints.

use crate::git::{ObjectId, Repository};
use crate::hook::result::{objects_from_push_output, post_from_push_output};
use crate::reply::{self, ReplyInput};

use super::Host;

/// Writes post commit `post` of request `id` from the push's standard
/// error `shown`, when the reply (`input`, sent for `tip`) rebuilds its
/// tree here (settings, as `git clada apply` reads them here, from
/// `host`); whether it did. Nothing is written when it did not.
pub fn take_post(
    repo: &Repository,
    host: &dyn Host,
    shown: &str,
    id: &str,
    post: ObjectId,
    tip: ObjectId,
    input: &ReplyInput,
) -> bool {
    let rebuilt = || -> Option<bool> {
        // A clone that checks what it fetches (fsckObjects) fetches it.
        for key in ["fetch.fsckObjects", "transfer.fsckObjects"] {
            if repo.config_bool(key).ok().flatten() == Some(true) {
                return None;
            }
        }
        let raw = post_from_push_output(shown, id, post, |bytes| repo.commit_id(bytes))?;
        let (tree, parents) = repo.parse_commit(&raw)?;
        // A server's apply has no pre commit: the post commit is on the
        // branch's tip, ours or one it moved to since.
        let [on] = parents[..] else {
            return Some(false);
        };
        let choice = host.syntax(repo).ok()?;
        let delims = host.delimiters(repo).ok()?;
        let parsed = reply::parse(input, choice, &delims);
        if parsed.has_fatal() {
            return Some(false);
        }
        // In memory until the tree is known to be the server's. RUN as a
        // server refuses it (the default): one that ran it made another tree,
        // and its commit is fetched.
        let mut scratch = repo.in_memory();
        // The commits the branch gained since ours, when the server sent
        // them whole (`git::ship`); else they are fetched.
        if on != tip {
            let objects = objects_from_push_output(shown, id, tip)?;
            if !scratch.take_objects(&objects, tip, on).ok()? {
                return Some(false);
            }
        }
        let replayed = host
            .replayed_tree(&scratch, &parsed, on, Some("refused"))
            .ok()??;
        if replayed != tree {
            return Some(false);
        }
        scratch.write_kept_objects().ok()?;
        Some(repo.write_raw_commit(&raw).ok()? == post)
    };
    rebuilt().unwrap_or(false)
}
