//! What `git clada squash` selects and the message of the commit it writes.
//!
//! The selection is always a contiguous run of units at the branch tip:
//! each selector is a test on one unit, and the run stops at the first
//! unit that fails it (or at the first commit that is not clada's).

use super::commits::{Kind, SQUASH, Unit};

/// Which units, counted from the tip, a squash takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every contiguous clada unit.
    All,
    /// Units committed at or after this time (seconds since the epoch).
    Since(i64),
    /// Units whose message contains this text.
    MessageContains(String),
}

impl Selection {
    fn takes(&self, unit: &Unit) -> bool {
        match self {
            Selection::All => true,
            Selection::Since(cutoff) => {
                unit.top.time >= *cutoff && unit.pre.as_ref().is_none_or(|p| p.time >= *cutoff)
            }
            Selection::MessageContains(text) => unit.top.message.contains(text.as_str()),
        }
    }
}

/// How many of `units` (newest first) the selection takes.
pub fn select(units: &[Unit], selection: &Selection) -> usize {
    units.iter().take_while(|u| selection.takes(u)).count()
}

/// The items a squash lists: each apply's summary with its short id; a
/// squash contributes the items it listed itself.
fn items(units: &[Unit]) -> Vec<String> {
    let mut out = Vec::new();
    for unit in units.iter().rev() {
        if unit.kind() == Kind::Squash {
            let listed: Vec<String> = unit
                .top
                .message
                .lines()
                .filter_map(|l| l.strip_prefix("- ").map(str::to_string))
                .collect();
            if !listed.is_empty() {
                out.extend(listed);
                continue;
            }
        }
        out.push(format!(
            "{} ({})",
            unit.summary(),
            unit.top.id.to_hex_with_len(7)
        ));
    }
    out
}

/// The generated message of a squash of `units` (newest first) whose old
/// tip was `old_tip`.
pub fn message(units: &[Unit], old_tip: &str) -> String {
    let items = items(units);
    let summaries: Vec<&str> = items
        .iter()
        .map(|i| i.rsplit_once(" (").map_or(i.as_str(), |(s, _)| s))
        .collect();
    let mut subject = String::new();
    for (i, s) in summaries.iter().enumerate() {
        let next = if subject.is_empty() {
            s.to_string()
        } else {
            format!("{subject}; {s}")
        };
        if next.len() > 60 && !subject.is_empty() {
            // An apply's summary may end in "and 2 more changes" itself.
            subject.push_str(&format!(
                " (+{})",
                crate::words::count(summaries.len() - i, "more apply", "more applies")
            ));
            break;
        }
        subject = next;
    }
    let pre = units.iter().filter(|u| u.pre.is_some()).count();
    let mut body = format!(
        "{SQUASH} {subject}\n\nSquashed {}, oldest first:\n",
        crate::words::count(items.len(), "clada apply", "clada applies")
    );
    for item in &items {
        body.push_str(&format!("- {item}\n"));
    }
    if pre > 0 {
        body.push_str(&format!(
            "\n{pre} pre snapshot(s) of uncommitted work are folded in.\n"
        ));
    }
    body.push_str(&format!("\nClada-Squashed: {old_tip}\n"));
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::ObjectId;
    use crate::git::history::CommitInfo;

    fn unit(n: u8, message: &str, time: i64, pre: bool) -> Unit {
        let id = |n: u8| ObjectId::from_bytes_or_panic(&[n; 20]);
        let info = |n: u8, message: &str| CommitInfo {
            id: id(n),
            tree: id(0),
            parents: vec![id(n + 100)],
            message: message.to_string(),
            time,
        };
        Unit {
            top: info(n, message),
            pre: pre.then(|| info(n + 50, "[clada:pre] snapshot before apply\n")),
            index: None,
            base: Some(id(n + 1)),
        }
    }

    #[test]
    fn selections_stop_at_the_first_unit_that_fails() {
        let units = vec![
            unit(1, "[clada:post] edit auth.rs\n", 1000, false),
            unit(2, "[clada:post] edit db.rs\n", 900, true),
            unit(3, "[clada:post] edit auth.rs again\n", 100, false),
        ];
        assert_eq!(select(&units, &Selection::All), 3);
        assert_eq!(select(&units, &Selection::Since(900)), 2);
        assert_eq!(select(&units, &Selection::Since(2000)), 0);
        assert_eq!(
            select(&units, &Selection::MessageContains("auth".into())),
            1
        );
        assert_eq!(
            select(&units, &Selection::MessageContains("edit".into())),
            3
        );
    }

    #[test]
    fn the_message_lists_every_apply_oldest_first_and_keeps_a_squashes_list() {
        let units = vec![
            unit(1, "[clada:post] create c.txt\n", 0, false),
            unit(
                2,
                "[clada:squash] edit a; edit b\n\nSquashed 2 clada applies, oldest first:\n- edit a (1111111)\n- edit b (2222222)\n",
                0,
                false,
            ),
        ];
        let m = message(&units, "abc");
        assert!(
            m.starts_with("[clada:squash] edit a; edit b; create c.txt\n"),
            "{m}"
        );
        assert!(
            m.contains("- edit a (1111111)\n- edit b (2222222)\n- create c.txt (0101010)\n"),
            "{m}"
        );
        assert!(m.ends_with("\nClada-Squashed: abc\n"), "{m}");
    }
}
