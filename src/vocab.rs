//! The reply's own words for what a hint asks it to write: a hint to an
//! aider reply names an aider block, never a CSL WRITE (issue 29).
//!
//! Owns only text, one [`Vocab`] per syntax; `syntax` picks the one of the
//! reply's syntax (`Syntax::vocab`) and `apply` words its hints with it
//! (`ExecOptions::vocab`). A leaf: it knows no syntax and no operation.

/// How one syntax writes the operations hints point to.
#[derive(Debug, PartialEq, Eq)]
pub struct Vocab {
    /// What writes a whole file: "a WRITE block".
    pub write: &'static str,
    /// What changes part of a file: "a SEARCH block".
    pub edit: &'static str,
    /// The text that ends a range, where the syntax has ranges.
    pub range_end: &'static str,
    /// How to ask for several matches, before and after the number;
    /// `None`: the syntax has no count (every edit matches once).
    pub count: Option<(&'static str, &'static str)>,
    /// How a move replaces an existing file, where the syntax can say so.
    pub move_overwrite: Option<&'static str>,
}

impl Vocab {
    /// "set count=\"3\"": how to ask for `n` matches, if the syntax can.
    pub fn count(&self, n: usize) -> Option<String> {
        self.count
            .map(|(before, after)| format!("{before}{n}{after}"))
    }
}

pub const CSL: Vocab = Vocab {
    write: "a WRITE block",
    edit: "a SEARCH block",
    range_end: "the TO text",
    count: Some(("set count=\"", "\"")),
    move_overwrite: None,
};

pub const CML: Vocab = Vocab {
    write: "a <write path=\"…\"> element",
    edit: "an <edit path=\"…\"> element",
    range_end: "the <search-end> text",
    count: Some(("set count=\"", "\" on the <edit>")),
    move_overwrite: None,
};

pub const SHAM: Vocab = Vocab {
    write: "a file_write action",
    edit: "a file_replace_text action",
    range_end: "the end text",
    count: Some((
        "use action = \"file_replace_all_text\" with count = \"",
        "\"",
    )),
    move_overwrite: None,
};

pub const TELT: Vocab = Vocab {
    write: "a FILE_WRITE command",
    edit: "a FILE_REPLACE_TEXT command",
    range_end: "the end text",
    count: Some((
        "use === FILE_REPLACE_ALL_TEXT === with a COUNT parameter of ",
        "",
    )),
    move_overwrite: None,
};

pub const REPLACER: Vocab = Vocab {
    write: "a <<<OVERWRITE>>> block",
    edit: "a <<<SEARCH>>> block",
    range_end: "the end text",
    count: None,
    move_overwrite: None,
};

pub const AIDER: Vocab = Vocab {
    write: "a block with an empty SEARCH part (its REPLACE part is the whole file)",
    edit: "a SEARCH/REPLACE block",
    range_end: "the end text",
    count: None,
    move_overwrite: None,
};

pub const PATCH: Vocab = Vocab {
    write: "an *** Add File: section",
    edit: "an *** Update File: section",
    range_end: "the end text",
    count: None,
    move_overwrite: None,
};

pub const DIFF: Vocab = Vocab {
    write: "a diff from /dev/null (--- /dev/null, then +++ b/PATH)",
    edit: "a hunk",
    range_end: "the end text",
    count: None,
    move_overwrite: None,
};

pub const JSON: Vocab = Vocab {
    write: "a {\"op\": \"write\"} operation",
    edit: "a {\"op\": \"search\"} operation",
    range_end: "the \"to\" text",
    count: Some(("set \"count\": ", "")),
    move_overwrite: Some("\"overwrite\": true replaces a file"),
};
