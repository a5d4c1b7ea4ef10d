//! `git -c key=value clada …`: the settings git passes on to a command it
//! runs, in `GIT_CONFIG_PARAMETERS`, which gix does not read.
//!
//! git writes each setting as shell single-quoted words (`sq_quote`):
//! `'key'='value'` (git 2.31 on), `'key'=` (a key given alone: true),
//! `'key'` or `'key=value'` (older git), separated by spaces; a `'` or a
//! `!` inside is written outside the quotes, after a backslash (`'\''`,
//! `'\!'`).

/// The settings in `GIT_CONFIG_PARAMETERS`, as `key=value` (or `key`) for
/// gix's command-line overrides; none when it is unset or not as git
/// writes it (then git would have refused to run us).
pub fn from_env() -> Vec<String> {
    std::env::var("GIT_CONFIG_PARAMETERS")
        .ok()
        .and_then(|text| parse(&text))
        .unwrap_or_default()
}

fn parse(text: &str) -> Option<Vec<String>> {
    let mut settings = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after) = quoted(rest)?;
        let (setting, after) = match after.strip_prefix('=') {
            // `-c key` with no value: git writes `'key'=`, meaning true.
            Some(value) if value.is_empty() || value.starts_with(' ') => (key, value),
            Some(value) => {
                let (value, after) = quoted(value)?;
                (format!("{key}={value}"), after)
            }
            None => (key, after),
        };
        settings.push(setting);
        if !after.is_empty() && !after.starts_with(' ') {
            return None;
        }
        rest = after.trim_start();
    }
    Some(settings)
}

/// One single-quoted word at the start of `text`, with the characters git
/// writes between its quoted runs (`\'`, `\!`: a backslash and any one
/// character, as git's `sq_dequote` reads them): its value and what
/// follows it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut value = String::new();
    loop {
        let end = rest.find('\'')?;
        value.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        let mut chars = rest.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some('\\'), Some(c), Some('\'')) => {
                value.push(c);
                rest = &rest[1 + c.len_utf8() + 1..];
            }
            _ => return Some((value, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_git_writes() {
        assert_eq!(
            parse("'color.ui'='always' 'clada.syntax'='cml'").unwrap(),
            ["color.ui=always", "clada.syntax=cml"]
        );
        // A key alone, the older form, and a quote in a value.
        assert_eq!(
            parse(" 'core.bare' 'user.name=A B' 'user.email'='it'\\''s@x'").unwrap(),
            ["core.bare", "user.name=A B", "user.email=it's@x"]
        );
        // What git 2.47 writes for `-c clada.atomic -c user.name="it's!x"`.
        assert_eq!(
            parse("'clada.atomic'= 'user.name'='it'\\''s'\\!'x'").unwrap(),
            ["clada.atomic", "user.name=it's!x"]
        );
        assert_eq!(parse("'a.b'=").unwrap(), ["a.b"]);
        assert_eq!(parse("").unwrap(), Vec::<String>::new());
        assert_eq!(parse("'unterminated"), None);
        assert_eq!(parse("'a''b'"), None);
        assert_eq!(parse("bare=word"), None);
    }
}
