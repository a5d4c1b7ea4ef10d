//! The hook shims of the project's `hooks/` folder, built into the binary
//! so that `git clada hook install` works wherever the binary is.
//!
//! A shim only runs `git clada hook <name>`; every decision is in Rust.

/// Text every shim contains, by which an installed hook is known as ours.
pub const MARK: &str = "git-clada hook shim";

/// The client hook: CSL in a commit message.
pub const CLIENT: &[&str] = &["post-commit"];

/// The server hooks: validation and application of inbox notes.
pub const SERVER: &[&str] = &["pre-receive", "post-receive"];

/// The shim for hook `name`, if clada has one.
pub fn shim(name: &str) -> Option<&'static str> {
    match name {
        "post-commit" => Some(include_str!("../../hooks/post-commit")),
        "pre-receive" => Some(include_str!("../../hooks/pre-receive")),
        "post-receive" => Some(include_str!("../../hooks/post-receive")),
        _ => None,
    }
}

/// Whether hook content is one of clada's shims (of any version).
pub fn is_ours(content: &[u8]) -> bool {
    content.windows(MARK.len()).any(|w| w == MARK.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shim_is_marked_and_runs_its_own_hook() {
        for name in CLIENT.iter().chain(SERVER) {
            let text = shim(name).expect("a shim for every hook clada installs");
            assert!(is_ours(text.as_bytes()), "{name}");
            assert!(text.starts_with("#!/bin/sh\n"), "{name}");
            assert!(
                text.contains(&format!("exec git clada hook {name} \"$@\"\n")),
                "{name}"
            );
        }
        assert!(!is_ours(b"#!/bin/sh\necho hi\n"));
    }
}
