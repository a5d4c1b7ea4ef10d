//! RUN content to commands: one per line, never a shell.
//!
//! Owns apply.md §6's first rule: each non-empty line is one command (a
//! line ending in `\` continues on the next), split into words with shell
//! quoting rules by `shell-words`, and executed directly. Shell operators
//! standing as words, and command substitution anywhere, are refused with
//! a message that says what to do instead — they would mean nothing
//! without a shell, and silently passing `|` as an argument would be worse.

/// One command of a RUN: its words and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<String>,
    /// The line as written (continuations joined), for reports.
    pub text: String,
    /// 1-based line within the RUN content where the command starts.
    pub line: u32,
}

/// Why a RUN line cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("line {line}: cannot split `{text}`: {why}")]
    Quoting {
        line: u32,
        text: String,
        why: String,
    },
    #[error(
        "line {line}: `{operator}` is a shell operator, and RUN uses no shell: put one command per line instead (for pipes and redirection, write a script file and run it)"
    )]
    Operator { line: u32, operator: String },
    #[error(
        "line {line}: command substitution (`$(` or a backtick) needs a shell, and RUN uses none: run the inner command on its own line"
    )]
    Substitution { line: u32 },
    #[error("line {line}: a `\\` at the end of the last line continues nothing")]
    DanglingContinuation { line: u32 },
}

/// Words that only a shell gives meaning to.
const OPERATORS: &[&str] = &[
    "|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>", "|&", "<<", ">|",
];

/// Splits RUN content into commands.
pub fn split(content: &str) -> Result<Vec<Command>, SplitError> {
    let mut commands = Vec::new();
    let mut pending: Option<(u32, String)> = None;
    let lines: Vec<&str> = content.split('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let number = i as u32 + 1;
        let (start, mut text) = match pending.take() {
            Some((start, so_far)) => (start, so_far + raw),
            None => (number, raw.to_string()),
        };
        if let Some(stripped) = text.strip_suffix('\\') {
            if i + 1 == lines.len() {
                return Err(SplitError::DanglingContinuation { line: number });
            }
            text = stripped.to_string();
            pending = Some((start, text));
            continue;
        }
        if text.trim().is_empty() {
            continue;
        }
        if text.contains("$(") || text.contains('`') {
            return Err(SplitError::Substitution { line: start });
        }
        let words = shell_words::split(&text).map_err(|e| SplitError::Quoting {
            line: start,
            text: text.trim().to_string(),
            why: e.to_string(),
        })?;
        if let Some(op) = bare_words(&text)
            .into_iter()
            .find(|w| OPERATORS.contains(&w.as_str()))
        {
            return Err(SplitError::Operator {
                line: start,
                operator: op,
            });
        }
        commands.push(Command {
            words,
            text: text.trim().to_string(),
            line: start,
        });
    }
    Ok(commands)
}

/// The words of `text` written without any quoting or escaping: only
/// those can be shell operators (`grep '|' f` searches for a bar).
fn bare_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => {
                quote = Some(c);
                quoted = true;
            }
            (None, '\\') => {
                chars.next();
                quoted = true;
            }
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() && !quoted {
                    words.push(std::mem::take(&mut word));
                }
                word.clear();
                quoted = false;
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() && !quoted {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(content: &str) -> Vec<Vec<String>> {
        split(content)
            .unwrap()
            .into_iter()
            .map(|c| c.words)
            .collect()
    }

    #[test]
    fn one_command_per_line_with_quotes_and_continuations() {
        assert_eq!(
            words("cargo test\n\necho 'a b' \"c d\"\nls \\\n  -la src\n"),
            [
                vec!["cargo", "test"],
                vec!["echo", "a b", "c d"],
                vec!["ls", "-la", "src"],
            ]
        );
        let cmds = split("a\nb \\\nc").unwrap();
        assert_eq!((cmds[1].line, cmds[1].text.as_str()), (2, "b c"));
    }

    #[test]
    fn shell_operators_and_substitution_are_refused() {
        for (content, line) in [
            ("ls | wc", 1),
            ("true\nmake && make install", 2),
            ("echo hi > f", 1),
            ("a ; b", 1),
            ("cat < in", 1),
            ("x 2>&1", 1),
            ("sleep 1 &", 1),
        ] {
            assert!(
                matches!(split(content), Err(SplitError::Operator { line: l, .. }) if l == line),
                "{content}"
            );
        }
        assert!(matches!(
            split("echo $(whoami)"),
            Err(SplitError::Substitution { line: 1 })
        ));
        assert!(matches!(
            split("echo `id`"),
            Err(SplitError::Substitution { .. })
        ));
        // Quoted operators are plain arguments.
        assert_eq!(words("grep '|' file"), [vec!["grep", "|", "file"]]);
        assert_eq!(words("echo 'a && b'"), [vec!["echo", "a && b"]]);
    }

    #[test]
    fn bad_quoting_and_dangling_continuations_are_errors() {
        assert!(matches!(
            split("echo 'open"),
            Err(SplitError::Quoting { .. })
        ));
        assert!(matches!(
            split("ls \\"),
            Err(SplitError::DanglingContinuation { line: 1 })
        ));
    }
}
