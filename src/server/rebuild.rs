//! The post commit of an applied request, taken from the push's output
//! instead of fetched (doc/hooks.md, "Requests of their own").
//!
//! After a request's result, the server's hook prints, for a request that
//! asks (`Clada-Objects: send`, as `push-reply` writes it), the objects
//! the branch gained since the request's commit (`git::ship`): the post
//! commit's, and those of the commits in between when it replayed the
//! request on a tip that moved since. `push-reply` takes them when they
//! are whole, instead of fetching them — one HTTP exchange and several
//! processes fewer.
//!
//! When they are too many, or for a request that did not ask, the hook
//! prints the post commit's bytes alone (and the commits in between if
//! they are few). The commit's tree is the reply's operations on the
//! branch's tip: `push-reply` applies the reply here in memory
//! ([`crate::transaction::replay_tree`]) and, when that gives the tree the
//! commit names, writes the new objects and the commit (whose id then is
//! the one announced). Anything else (a reply whose commands the server
//! ran, settings of this clone that apply it differently, an output git
//! cut) leaves it to the fetch.
//!
//! The client's side of the protocol, here beside the server's so that
//! what the hook prints and what the client rebuilds from it stay one
//! library; `cli/push_reply/` pushes, fetches and prints.

use crate::git::{ObjectId, Repository};
use crate::hook::result::{objects_from_push_output, post_from_push_output};
use crate::reply::{self, ReplyInput};

use super::Host;

/// Writes post commit `post` of request `id` from the push's standard
/// error `shown`, with every object it reaches that this clone lacks:
/// taken whole from the objects the server sent since `tip` (the commit
/// the reply, `input`, was sent for), or rebuilt by applying the reply
/// here (settings, as `git clada apply` reads them here, from `host`) on
/// the post commit's parent when that gives the tree the commit names.
/// Whether it did; nothing is written when it did not.
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
        // In memory until they are known to be whole, or the tree to be
        // the server's.
        let mut scratch = repo.in_memory();
        let sent = objects_from_push_output(shown, id, tip);
        if let Some(objects) = &sent
            && objects.iter().any(|o| o.id == post)
        {
            let whole = scratch.take_objects(objects, tip, post).ok()?;
            return Some(whole && scratch.write_kept_objects().is_ok());
        }
        let raw = post_from_push_output(shown, id, post, |bytes| repo.commit_id(bytes))?;
        let (tree, parents) = repo.parse_commit(&raw)?;
        // A server's apply has no pre commit: the post commit is on the
        // branch's tip, ours or one it moved to since.
        let [on] = parents[..] else {
            return Some(false);
        };
        // The commits the branch gained since ours, when the server sent
        // them whole; else they are fetched.
        if on != tip && !scratch.take_objects(&sent?, tip, on).ok()? {
            return Some(false);
        }
        let choice = host.syntax(repo).ok()?;
        let delims = host.delimiters(repo).ok()?;
        let parsed = reply::parse(input, choice, &delims);
        if parsed.has_fatal() {
            return Some(false);
        }
        // RUN as a server refuses it (the default): one that ran it made
        // another tree, and its commit is fetched.
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
