//! The reference updates a receive hook reads on standard input: one line
//! `<old-id> SP <new-id> SP <ref-name>` per updated reference, the all-zero
//! id standing for "no reference" (created or deleted).

use crate::git::ObjectId;

/// One updated reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// `None`: the reference is created by this push.
    pub old: Option<ObjectId>,
    /// `None`: the reference is deleted by this push.
    pub new: Option<ObjectId>,
    /// The full reference name.
    pub name: String,
}

/// Reads the lines git gives a receive hook; a malformed line is an error
/// naming it (git never writes one, so it means the hook was run by hand).
pub fn parse(text: &str) -> Result<Vec<RefUpdate>, String> {
    let id = |s: &str, line: &str| -> Result<Option<ObjectId>, String> {
        let id = ObjectId::from_hex(s.as_bytes())
            .map_err(|_| format!("not an object id: {s:?} in the line {line:?}"))?;
        Ok((!id.is_null()).then_some(id))
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split(' ');
            let (Some(old), Some(new), Some(name), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(format!(
                    "expected `<old-id> <new-id> <ref>`, found {line:?}"
                ));
            };
            Ok(RefUpdate {
                old: id(old, line)?,
                new: id(new, line)?,
                name: name.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_updates_and_zero_ids_none() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let text = format!("{zero} {a} refs/notes/x\n{a} {zero} refs/heads/main\n");
        let updates = parse(&text).unwrap();
        let id = ObjectId::from_hex(a.as_bytes()).unwrap();
        assert_eq!(
            updates,
            vec![
                RefUpdate {
                    old: None,
                    new: Some(id),
                    name: "refs/notes/x".into()
                },
                RefUpdate {
                    old: Some(id),
                    new: None,
                    name: "refs/heads/main".into()
                },
            ]
        );
        assert!(parse("junk\n").is_err());
        assert!(parse(&format!("{a} xyz refs/heads/main\n")).is_err());
    }
}
