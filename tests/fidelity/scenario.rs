//! The scenarios: their names and how each reply is made from a commit.

use super::blocks::{self, FileOp, Skip};
use super::corpus::Entry;
use super::damage::Damage;
use super::{diffgen, formats, patchgen};

/// The reply formats a scenario is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Diff,
    DiffShift,
    DiffNonum,
    Aider,
    Patch,
    Csl,
    Json,
    Claude,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub format: Format,
    pub damage: Option<Damage>,
}

impl Scenario {
    pub fn name(&self) -> String {
        let base = match self.format {
            Format::Diff => "diff",
            Format::DiffShift => "diff-shift",
            Format::DiffNonum => "diff-nonum",
            Format::Aider => "aider",
            Format::Patch => "patch",
            Format::Csl => "csl",
            Format::Json => "json",
            Format::Claude => "claude",
        };
        match self.damage {
            Some(d) => format!("{base}-{}", d.suffix()),
            None => base.to_string(),
        }
    }

    /// The diff family, which the peers (git apply, GNU patch) also run.
    pub fn is_diff(&self) -> bool {
        matches!(
            self.format,
            Format::Diff | Format::DiffShift | Format::DiffNonum
        )
    }

    /// Extra `apply` arguments: the `csl-*` damaged variants opt in to
    /// the spec's loose matching for CSL (`--match whitespace`).
    pub fn args(&self) -> Vec<&'static str> {
        if self.format == Format::Csl && self.damage.is_some() {
            vec!["--match", "whitespace"]
        } else {
            Vec::new()
        }
    }

    /// The reply file's extension (for whoever replays it by hand).
    pub fn ext(&self) -> &'static str {
        match self.format {
            Format::Diff | Format::DiffShift => "patch",
            Format::Json | Format::Claude => "json",
            _ => "md",
        }
    }
}

/// Every scenario, in table order.
pub fn all() -> Vec<Scenario> {
    let plain = [
        Format::Diff,
        Format::DiffShift,
        Format::DiffNonum,
        Format::Aider,
        Format::Patch,
        Format::Csl,
        Format::Json,
        Format::Claude,
    ];
    let mut out: Vec<Scenario> = plain
        .iter()
        .map(|&format| Scenario {
            format,
            damage: None,
        })
        .collect();
    for format in [Format::Diff, Format::Aider, Format::Patch, Format::Csl] {
        for damage in [Damage::Ws, Damage::Indent, Damage::Tabs, Damage::Ctx] {
            out.push(Scenario {
                format,
                damage: Some(damage),
            });
        }
    }
    out
}

/// The plans of one commit, made once and shared by its scenarios.
pub struct Plans {
    blocks: Result<Vec<FileOp>, Skip>,
    patch: Result<Vec<patchgen::PFile>, Skip>,
}

impl Plans {
    pub fn new(entry: &Entry) -> Plans {
        Plans {
            blocks: blocks::plan(entry),
            patch: patchgen::plan(entry),
        }
    }
}

/// The reply of `scenario` for `entry`.
pub fn reply(entry: &Entry, plans: &Plans, scenario: Scenario) -> Result<Vec<u8>, Skip> {
    let seed = entry.seed("ctx");
    let reply = reply_bytes(entry, plans, scenario, seed)?;
    // A model writes text: a reply that is not UTF-8 (a diff of a Latin-1
    // file) is none a model could send.
    if std::str::from_utf8(&reply).is_err() {
        return Err(Skip::Na(
            "a reply that is not UTF-8 (no model writes one)".into(),
        ));
    }
    Ok(reply)
}

fn reply_bytes(
    entry: &Entry,
    plans: &Plans,
    scenario: Scenario,
    seed: u64,
) -> Result<Vec<u8>, Skip> {
    let blocks = || -> Result<Vec<FileOp>, Skip> {
        formats::damaged(
            plans.blocks.as_ref().map_err(Clone::clone)?,
            scenario.damage,
            seed,
        )
    };
    match scenario.format {
        Format::Diff => match scenario.damage {
            None => Ok(diffgen::plain(entry)),
            Some(d) => diffgen::damaged(entry, d),
        },
        Format::DiffShift => Ok(diffgen::shifted(entry)),
        Format::DiffNonum => diffgen::nonum(entry),
        Format::Aider => formats::aider(&blocks()?).map(String::into_bytes),
        Format::Csl => formats::csl(&blocks()?).map(String::into_bytes),
        Format::Json => formats::json(&blocks()?).map(String::into_bytes),
        Format::Claude => formats::claude(&blocks()?).map(String::into_bytes),
        Format::Patch => {
            let files = patchgen::damaged(
                plans.patch.as_ref().map_err(Clone::clone)?,
                scenario.damage,
                seed,
            )?;
            Ok(patchgen::render(&files))
        }
    }
}
