//! What tells apart the places where a pattern matches more than once.
//!
//! Owns the advice of an ambiguous match (an EDIT hunk or a SEARCH found
//! at several places): for each place, the nearest line just above or
//! below it that the other places do not have at the same distance. The
//! lines to find must be contiguous, so that line and the ones between are
//! what the model adds to choose the place it means; the report names them
//! rather than only saying "include more lines".

/// How far above and below a match a telling line is looked for.
const REACH: usize = 20;
/// Places described, at most (the report lists every line anyway).
const SHOWN: usize = 10;

/// Detail lines for a pattern of `len` lines that matches at `starts`
/// (1-based lines of `file`): a heading, then one per place; the caller
/// adds what to do, in its operation's words. Empty when there are fewer
/// than two places.
pub fn tell_apart(file: &str, starts: &[u32], len: usize) -> Vec<String> {
    let mut starts: Vec<usize> = starts.iter().map(|&s| s as usize).collect();
    starts.dedup();
    if starts.len() < 2 {
        return Vec::new();
    }
    let lines: Vec<&str> = file.split('\n').collect();
    let len = len.max(1);
    let mut out = vec![
        "what tells the matches apart (for each, the nearest line the others do not have at the same place):"
            .to_string(),
    ];
    let mut untold = Vec::new();
    for &start in starts.iter().take(SHOWN) {
        match telling_line(&lines, &starts, start, len) {
            Some((at, "own")) => out.push(format!(
                "  the match at line {start}: its own line, `{}`",
                shown(lines[at - 1])
            )),
            Some((at, side)) => out.push(format!(
                "  the match at line {start}: line {at}, just {side} it, `{}`",
                shown(lines[at - 1])
            )),
            None => untold.push(start),
        }
    }
    if starts.len() > SHOWN {
        out.push(format!("  … and {} more matches", starts.len() - SHOWN));
    }
    if !untold.is_empty() {
        let one = untold.len() == 1;
        let which: Vec<String> = untold.iter().map(usize::to_string).collect();
        out.push(format!(
            "  the match{} at line{} {} {} the same {REACH} lines above and below as another match: no nearby line tells {} apart",
            if one { "" } else { "es" },
            if one { "" } else { "s" },
            which.join(", "),
            if one { "has" } else { "have" },
            if one { "it" } else { "them" },
        ));
    }
    out
}

/// The details of a hunk found at several places (`starts`, 1-based, of
/// a hunk of `len` old lines): what tells them apart, then what to do.
pub fn hunk_advice(file: &str, starts: &[u32], len: usize) -> Vec<String> {
    let mut details = tell_apart(file, starts, len);
    details.push(
        "include more of the surrounding lines (up to the telling line of the match you mean, in the new lines too), so that the lines to change match only where you mean"
            .to_string(),
    );
    details
}

/// The line that tells the match at `start` (1-based) from every other
/// match: its first line itself when that differs (a SEARCH may match
/// inside lines; whole-line matches share it), else the nearest line
/// above or below that differs from the line at the same distance from
/// every other match. Its 1-based number and where it is: "own",
/// "above" or "below".
fn telling_line(
    lines: &[&str],
    starts: &[usize],
    start: usize,
    len: usize,
) -> Option<(usize, &'static str)> {
    // 0-based index of the line `d` away from the match at `s`: above its
    // first line for d < 0, its first line for 0, below its last for d > 0.
    let index = |s: usize, d: isize| -> Option<usize> {
        let first = s as isize - 1;
        let i = match d {
            ..0 => first + d,
            0 => first,
            _ => first + len as isize - 1 + d,
        };
        usize::try_from(i).ok().filter(|&i| i < lines.len())
    };
    let tells = |d: isize| -> Option<usize> {
        let mine = index(start, d)?;
        let own = lines[mine].trim();
        starts
            .iter()
            .filter(|&&s| s != start)
            .all(|&s| index(s, d).is_none_or(|o| lines[o].trim() != own))
            .then_some(mine)
    };
    if let Some(i) = tells(0) {
        return Some((i + 1, "own"));
    }
    (1..=REACH as isize).find_map(|reach| {
        [(-reach, "above"), (reach, "below")]
            .into_iter()
            .find_map(|(d, side)| tells(d).map(|i| (i + 1, side)))
    })
}

/// A line as the report shows it: trimmed, at most 80 characters.
fn shown(line: &str) -> String {
    let t = line.trim();
    if t.is_empty() {
        return "(a blank line)".to_string();
    }
    match t.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_match_gets_its_nearest_telling_line() {
        let file = "class App:\n    def stop(self):\n        stop()\n        pass\n\n    def other(self):\n        pass\n";
        let got = tell_apart(file, &[4, 7], 1);
        assert_eq!(
            got[1..3],
            [
                "  the match at line 4: line 3, just above it, `stop()`",
                "  the match at line 7: line 6, just above it, `def other(self):`",
            ]
        );
        assert_eq!(got.len(), 3, "{got:?}");
    }

    #[test]
    fn a_telling_line_may_be_below_or_further_away() {
        // Same line above both; the lines below differ.
        let file = "x\nmatch\na\nx\nmatch\nb\n";
        let got = tell_apart(file, &[2, 5], 1);
        assert_eq!(got[1], "  the match at line 2: line 3, just below it, `a`");
        assert_eq!(got[2], "  the match at line 5: line 6, just below it, `b`");
        // The start and end of the file tell apart too: nothing is there.
        let got = tell_apart("m\nm\n", &[1, 2], 1);
        assert!(got[1].contains("line 2, just below it"), "{got:?}");
    }

    #[test]
    fn a_match_inside_lines_is_told_by_its_own_line() {
        let file = "const A = 1;\nconst B = 1;\nlet c = A + B;\nconst D = 1;\n";
        let got = tell_apart(file, &[1, 2, 4], 1);
        assert_eq!(
            got[1],
            "  the match at line 1: its own line, `const A = 1;`"
        );
        assert_eq!(
            got[3],
            "  the match at line 4: its own line, `const D = 1;`"
        );
    }

    proptest::proptest! {
        /// Any file, any places (even past its end, or line 0), any
        /// length: an answer without a panic.
        #[test]
        fn any_places_are_told_without_panic(
            file in "[ab\n]{0,40}",
            starts in proptest::collection::vec(0u32..50, 0..6),
            len in 0usize..8,
        ) {
            let _ = tell_apart(&file, &starts, len);
        }
    }

    #[test]
    fn copies_alike_all_around_are_said_to_be() {
        let block = "a\nb\n".repeat(30);
        let file = format!("{block}m\n{block}{block}m\n{block}");
        let at: Vec<u32> = file
            .split('\n')
            .enumerate()
            .filter(|(_, l)| *l == "m")
            .map(|(i, _)| i as u32 + 1)
            .collect();
        let got = tell_apart(&file, &at, 1);
        assert!(
            got.iter()
                .any(|l| l.contains("no nearby line tells them apart")),
            "{got:?}"
        );
        assert!(tell_apart("m\n", &[1], 1).is_empty());
    }
}
