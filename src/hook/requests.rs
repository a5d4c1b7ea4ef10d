//! The per-request protocol's names (doc/hooks.md, "Requests of their
//! own").
//!
//! A request is a notes commit pushed to a reference of its own,
//! `refs/clada/inbox/<id>`; the server answers it at
//! `refs/clada/results/<id>` and then deletes the request. Agents never
//! share a reference, so none can make another's push non-fast-forward.
//! This module only names things; `server/` does the work.

/// Where requests are pushed, one reference each.
pub const REQUESTS: &str = "refs/clada/inbox/";
/// Where the server answers them, under the same id.
pub const RESULTS: &str = "refs/clada/results/";
/// The longest id accepted: ids are names, not payloads.
pub const MAX_ID: usize = 200;

/// The id of a request reference, when `name` is one.
pub fn request_id(name: &str) -> Option<&str> {
    name.strip_prefix(REQUESTS).filter(|id| !id.is_empty())
}

/// The id of a result reference, when `name` is one.
pub fn result_id(name: &str) -> Option<&str> {
    name.strip_prefix(RESULTS)
}

/// The request reference of `id`.
pub fn request_ref(id: &str) -> String {
    format!("{REQUESTS}{id}")
}

/// The result reference of `id`.
pub fn result_ref(id: &str) -> String {
    format!("{RESULTS}{id}")
}

/// The file name of `id`'s claim in the server's `clada/claims/`
/// directory: ids may hold `/`, claims are one flat directory. An id
/// whose name would be too long for a file system (255 bytes is the usual
/// limit; an id of 200 bytes of `/` escapes to 600) is named by its SHA-1
/// instead, after `%h`, which no escaped id holds.
pub fn claim_file(id: &str) -> String {
    let name = id.replace('%', "%25").replace('/', "%2F");
    if name.len() <= MAX_ID {
        return name;
    }
    format!("%h{}", super::result::checksum(id.as_bytes()))
}

/// A fresh request id: the time, the process and `salt` (the reply's
/// blob id), so agents on many machines do not pick the same one.
pub fn new_id(salt: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let short = salt.get(..12).unwrap_or(salt);
    format!(
        "{}.{:09}-{}-{short}",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_between_requests_results_and_claims() {
        assert_eq!(
            request_id("refs/clada/inbox/agent-1/42"),
            Some("agent-1/42")
        );
        assert_eq!(request_id("refs/clada/inbox/"), None);
        assert_eq!(request_id("refs/notes/clada-inbox"), None);
        assert_eq!(result_ref("agent-1/42"), "refs/clada/results/agent-1/42");
        assert_eq!(result_id("refs/clada/results/x"), Some("x"));
        assert_eq!(claim_file("a/b%c"), "a%2Fb%25c");
        // Long ids (in bytes, once escaped) are named by their hash, and
        // still apart.
        let slashes = "a/".repeat(MAX_ID / 2);
        let long = claim_file(&slashes);
        assert!(long.starts_with("%h") && long.len() == 42, "{long}");
        assert_ne!(long, claim_file(&"a/".repeat(MAX_ID / 2 - 1)));
        assert_eq!(claim_file(&"x".repeat(MAX_ID)), "x".repeat(MAX_ID));
        let id = new_id("0123456789abcdef");
        assert!(id.ends_with("-0123456789ab"), "{id}");
        assert!(gix_ref_ok(&request_ref(&id)), "{id}");
    }

    fn gix_ref_ok(name: &str) -> bool {
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/.-_".contains(&b))
            && !name.contains("..")
    }
}
