//! Errors in the user's words: what the operating system said, without
//! the Rust standard library's `(os error 2)` suffix, which names an
//! errno for a programmer, not a problem for the user. git prints
//! `could not open 'x': No such file or directory`; clada does the same.
//!
//! Owns only text: callers say what was asked and what is wrong, and use
//! these helpers for the cause they pass on.

/// `text` without any ` (os error N)` the standard library put in it.
pub fn plain(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// An I/O error as the operating system words it ("No such file or
/// directory", "Permission denied").
pub fn io(e: &std::io::Error) -> String {
    plain(&e.to_string())
}

/// `1 apply`, `2 applies`: a count and its noun, singular or plural, for
/// nouns whose plural is not just an `s` (`apply::exec::plural` does those).
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_errno_suffix_goes_and_the_words_stay() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io(&e), "No such file or directory");
        assert_eq!(
            plain("cannot read a: Permission denied (os error 13); b (os error x)"),
            "cannot read a: Permission denied; b (os error x)"
        );
    }
}
