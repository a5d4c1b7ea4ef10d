//! CREATE: a new file with exactly the bytes it is given (a unified
//! diff's `--- /dev/null` section, a text-editor `create`).
//!
//! Owns the rule `git apply` keeps for a new file: a path that already
//! holds other content is refused, never overwritten, and one that holds
//! exactly this content is reported as applied already, not written
//! twice. Unlike WRITE, no final newline is added and no line ends are
//! converted: a diff says both itself (`\ No newline at end of file`, the
//! `\r` of its lines).

use crate::plan::RepoPath;

use super::exec::{Failure, Outcome, plural};
use super::files::{FileData, Files};

/// What a CREATE did, or why it was refused. `already` is set when the
/// file already held exactly the content (the report's `already_present`).
pub fn create<F: Files>(
    files: &mut F,
    path: &RepoPath,
    content: &str,
    max_file_size: usize,
    already: &mut bool,
) -> Outcome {
    let lines = content.matches('\n').count() + usize::from(!content.ends_with('\n'));
    let lines = if content.is_empty() { 0 } else { lines };
    match files.read(path)? {
        Some(existing) if existing.bytes == content.as_bytes() => {
            *already = true;
            Err(Failure {
                error_type: Some("match_count_mismatch"),
                message: format!(
                    "{path} already exists with exactly this content: the new file looks created already and needs no resend; nothing was changed"
                ),
                details: Vec::new(),
            })
        }
        Some(existing) => Err(Failure {
            error_type: Some("match_count_mismatch"),
            message: format!(
                "{path} already exists ({}) with other content; a new file does not replace it, and nothing was changed",
                plural(existing.bytes.len(), "byte")
            ),
            details: vec![
                "to change the file, change only its lines that differ (a diff's `--- a/PATH` / `+++ b/PATH` hunks, a text-editor str_replace); to replace it whole, delete it first in the same reply"
                    .to_string(),
            ],
        }),
        None => {
            if content.len() > max_file_size {
                return Err(Failure {
                    error_type: Some("file_too_large"),
                    message: format!(
                        "{path} would be {} bytes; the limit is {max_file_size} bytes",
                        content.len()
                    ),
                    details: vec![
                        "keep files under the limit (git config clada.maxFileSize raises it)"
                            .to_string(),
                    ],
                });
            }
            files.write(
                path,
                FileData {
                    bytes: content.as_bytes().to_vec(),
                    executable: false,
                },
            )?;
            Ok((format!("created ({})", plural(lines, "line")), Vec::new()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::dir::DirFiles;

    #[test]
    fn a_new_file_gets_exactly_its_bytes_and_an_existing_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = DirFiles::new(dir.path());
        let path = RepoPath::from_checked("a.txt");
        let mut already = false;
        let done = create(&mut files, &path, "one\r\ntwo", 1 << 20, &mut already);
        assert_eq!(
            done.ok().map(|d| d.0),
            Some("created (2 lines)".to_string())
        );
        assert_eq!(
            std::fs::read(dir.path().join("a.txt")).unwrap(),
            b"one\r\ntwo"
        );
        let again = create(&mut files, &path, "one\r\ntwo", 1 << 20, &mut already);
        assert!(again.is_err() && already);
        let mut already = false;
        let other = create(&mut files, &path, "three\n", 1 << 20, &mut already);
        assert!(other.is_err() && !already);
        assert_eq!(
            std::fs::read(dir.path().join("a.txt")).unwrap(),
            b"one\r\ntwo"
        );
    }
}
