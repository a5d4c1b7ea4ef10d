//! `git -c key=value clada …`: the settings git passes on to a command it
//! runs, in `GIT_CONFIG_PARAMETERS`, which gix does not read.
//!
//! git writes each setting as shell single-quoted words: `'key'='value'`
//! (git 2.31 on), `'key'` (a key alone: true), or `'key=value'` (older
//! git), separated by spaces, a `'` inside written `'\''`.

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

/// One single-quoted word at the start of `text` (`'\''` runs included):
/// its value and what follows it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut value = String::new();
    loop {
        let end = rest.find('\'')?;
        value.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix("\\''") {
            Some(after) => {
                value.push('\'');
                rest = after;
            }
            None => return Some((value, rest)),
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
        assert_eq!(parse("").unwrap(), Vec::<String>::new());
        assert_eq!(parse("'unterminated"), None);
        assert_eq!(parse("'a''b'"), None);
        assert_eq!(parse("bare=word"), None);
    }
}
