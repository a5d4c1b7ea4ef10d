//! Reading a reply from a file or standard input, within the size limit.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use crate::csl::input::MAX_INPUT;

use super::CliError;

pub use crate::reply::ReplyInput;

impl ReplyInput {
    /// Reads `path` (`-` or `None` for standard input) for `git clada
    /// <command>` (named in the hint when no reply is given). Stops reading
    /// past the 50 MiB limit, so a huge input costs no more than the limit.
    pub fn read(path: Option<&Path>, command: &str) -> Result<ReplyInput, CliError> {
        match path {
            Some(p) if p != Path::new("-") => read_file(p),
            None if std::io::stdin().is_terminal() => Err(CliError::new("no reply given")
                .hint(format!("name a file (git clada {command} reply.md) or pipe the reply in (… | git clada {command} -)"))),
            _ => read_limited(std::io::stdin().lock(), "<stdin>".to_string(), None),
        }
    }
}

fn read_file(path: &Path) -> Result<ReplyInput, CliError> {
    let cannot = |e: std::io::Error| {
        CliError::new(format!(
            "cannot read the reply {}: {}",
            path.display(),
            crate::words::io(&e)
        ))
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if meta.is_dir() {
        return Err(CliError::new(format!(
            "{} is a directory, not a reply",
            path.display()
        )));
    }
    let size = meta.len();
    read_limited(file, PathBuf::from(path).display().to_string(), Some(size))
}

fn read_limited(
    reader: impl Read,
    origin: String,
    size: Option<u64>,
) -> Result<ReplyInput, CliError> {
    if let Some(size) = size
        && size > MAX_INPUT as u64
    {
        return Ok(ReplyInput {
            origin,
            bytes: Vec::new(),
            too_large: Some(size),
        });
    }
    let mut bytes = Vec::with_capacity(size.map_or(8192, |s| s as usize + 1));
    reader
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::new(format!("cannot read {origin}: {e}")))?;
    if bytes.len() > MAX_INPUT {
        return Ok(ReplyInput {
            origin,
            too_large: Some(bytes.len() as u64),
            bytes: Vec::new(),
        });
    }
    Ok(ReplyInput {
        origin,
        bytes,
        too_large: None,
    })
}
