//! Model-based property test of the history commands.
//!
//! Random sequences of apply (WRITE, or RUN `rm`) / user edit / user stage
//! / user commit / undo / redo / step-back / step-forward / squash run on a
//! small repository, and after each step the repository is compared with a
//! simple reference model: the exit status (done, task failed or refused),
//! the files on disk, whether HEAD is detached, `git status` (so the index,
//! which the user may stage into), and the kinds of the commits on the
//! branch. Invariants checked along the way: no clada command ever makes
//! content unreachable (every blob reachable from a ref, a reflog, the
//! index or the working tree before it stays so after it), and `git fsck`
//! finds nothing wrong at the end.
//!
//! The case count is kept small (48, about 5 s): each step runs the binary
//! and git a few times. `CLADA_MODEL_CASES=400` runs more.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use crate::history_fixture::{Repo, write_reply};

const FILES: [&str; 3] = ["a.txt", "b.txt", "d/c.txt"];

type Files = BTreeMap<String, String>;

/// The paths whose content differs between `a` and `b`.
fn differs(a: &Files, b: &Files) -> BTreeSet<String> {
    a.keys()
        .chain(b.keys())
        .filter(|p| a.get(*p) != b.get(*p))
        .cloned()
        .collect()
}

/// Puts `content` at `path` in `files` (`None`: no file).
fn set(files: &mut Files, path: &str, content: Option<&String>) {
    match content {
        Some(c) => files.insert(path.to_string(), c.clone()),
        None => files.remove(path),
    };
}

#[derive(Debug, Clone)]
enum Op {
    Apply(usize, u8),
    /// An apply whose reply deletes a file with RUN `rm` (it fails when the
    /// file is not there).
    Remove(usize),
    /// The user writes (or, `None`, deletes) a file.
    Edit(usize, Option<u8>),
    /// The user stages everything (`git add -A`).
    Stage,
    /// The user commits everything (skipped while stepped back, or when
    /// there is nothing to commit).
    Commit,
    Undo(u8),
    Redo,
    StepBack(u8),
    /// `None` is `--all`.
    StepForward(Option<u8>),
    Squash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..4u8).prop_map(|(f, c)| Op::Apply(f, c)),
        1 => (0..3usize).prop_map(Op::Remove),
        3 => (0..3usize, proptest::option::weighted(0.8, 0..3u8)).prop_map(|(f, c)| Op::Edit(f, c)),
        1 => Just(Op::Stage),
        1 => Just(Op::Commit),
        3 => (1..3u8).prop_map(Op::Undo),
        2 => Just(Op::Redo),
        2 => (1..3u8).prop_map(Op::StepBack),
        2 => proptest::option::of(1..3u8).prop_map(Op::StepForward),
        1 => Just(Op::Squash),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Pre,
    Post,
    Squash,
}

#[derive(Debug, Clone)]
struct Commit {
    kind: Kind,
    tree: Files,
    /// For a pre commit: the index it recorded (content found only there).
    index: Option<Files>,
}

/// An undone apply: its commits (post, then pre) and the commit below.
#[derive(Debug, Clone)]
struct Undone {
    post: usize,
    pre: Option<usize>,
    base: usize,
}

#[derive(Debug, Clone)]
struct Session {
    saved_work: Files,
    saved_index: Files,
    /// Commits below the tip.
    pos: usize,
}

#[derive(Debug, Clone)]
struct Model {
    commits: Vec<Commit>,
    /// The branch's first-parent line, oldest first.
    branch: Vec<usize>,
    work: Files,
    index: Files,
    undone: Vec<Undone>,
    session: Option<Session>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Done,
    /// A task failed (exit 1).
    Failed,
    Refused,
}

impl Model {
    fn new(initial: Files) -> Model {
        Model {
            commits: vec![Commit {
                kind: Kind::User,
                tree: initial.clone(),
                index: None,
            }],
            branch: vec![0],
            work: initial.clone(),
            index: initial,
            undone: Vec::new(),
            session: None,
        }
    }

    fn tip(&self) -> usize {
        *self.branch.last().unwrap()
    }

    fn tree(&self, id: usize) -> &Files {
        &self.commits[id].tree
    }

    /// The commit HEAD is at.
    fn head(&self) -> usize {
        match &self.session {
            Some(s) => self.branch[self.branch.len() - 1 - s.pos],
            None => self.tip(),
        }
    }

    /// Working tree and index both hold HEAD's tree.
    fn clean(&self) -> bool {
        let head = self.tree(self.head());
        self.work == *head && self.index == *head
    }

    /// Sets working tree and index to `tree`.
    fn reset_to(&mut self, tree: Files) {
        self.index = tree.clone();
        self.work = tree;
    }

    fn add(&mut self, kind: Kind, tree: Files) -> usize {
        self.commits.push(Commit {
            kind,
            tree,
            index: None,
        });
        self.commits.len() - 1
    }

    /// An apply's pre snapshot, when the working tree or the index
    /// differs from the tip (the index recorded when anything is staged).
    fn snapshot_pre(&mut self) {
        let head = self.tree(self.tip());
        let staged = self.index != *head;
        if self.work != *head || staged {
            let pre = self.add(Kind::Pre, self.work.clone());
            self.commits[pre].index = staged.then(|| self.index.clone());
            self.branch.push(pre);
        }
    }

    /// The index an undo of the apply with `pre` over `base` restores.
    fn index_before(&self, pre: Option<usize>, base: usize) -> &Files {
        pre.and_then(|p| self.commits[p].index.as_ref())
            .unwrap_or_else(|| self.tree(base))
    }

    /// The unit whose top is at branch position `i`: (pre position, base
    /// position), if it is an apply or a squash.
    fn unit_at(&self, i: usize) -> Option<(Option<usize>, usize)> {
        let k = self.commits[self.branch[i]].kind;
        if !matches!(k, Kind::Post | Kind::Squash) || i == 0 {
            return None;
        }
        if k == Kind::Post && self.commits[self.branch[i - 1]].kind == Kind::Pre {
            return Some((Some(i - 1), i - 2));
        }
        Some((None, i - 1))
    }

    /// Whether the user's `Commit` step makes a commit.
    fn commits_now(&self) -> bool {
        self.session.is_none() && self.work != *self.tree(self.tip())
    }

    /// What the step does to the model; `None` for the user's own steps.
    fn step(&mut self, op: &Op) -> Option<Expect> {
        use Expect::*;
        let stepped = self.session.is_some();
        Some(match op {
            Op::Edit(f, c) => {
                match c {
                    Some(c) => self.work.insert(FILES[*f].into(), format!("u{c}\n")),
                    None => self.work.remove(FILES[*f]),
                };
                return None;
            }
            Op::Stage => {
                self.index = self.work.clone();
                return None;
            }
            Op::Commit => {
                if self.commits_now() {
                    let id = self.add(Kind::User, self.work.clone());
                    self.branch.push(id);
                    self.index = self.work.clone();
                }
                return None;
            }
            _ if stepped
                && matches!(
                    op,
                    Op::Apply(..) | Op::Remove(_) | Op::Undo(_) | Op::Redo | Op::Squash
                ) =>
            {
                Refused
            }
            Op::Apply(f, c) => {
                let content = format!("r{c}\n");
                if self.work.get(FILES[*f]) == Some(&content) {
                    return Some(Done);
                }
                // The pre snapshot is the working tree (staged or not).
                self.snapshot_pre();
                let mut post = self.work.clone();
                post.insert(FILES[*f].into(), content);
                let id = self.add(Kind::Post, post.clone());
                self.branch.push(id);
                self.reset_to(post);
                Done
            }
            Op::Remove(f) => {
                if !self.work.contains_key(FILES[*f]) {
                    return Some(Failed);
                }
                self.snapshot_pre();
                let mut post = self.work.clone();
                post.remove(FILES[*f]);
                let id = self.add(Kind::Post, post.clone());
                self.branch.push(id);
                self.reset_to(post);
                Done
            }
            Op::Undo(n) => {
                let mut at = self.branch.len() - 1;
                let mut units = Vec::new();
                for k in 0..*n {
                    let Some((pre, base)) = self.unit_at(at) else {
                        return Some(Refused);
                    };
                    if self.commits[self.branch[at]].kind != Kind::Post
                        || (k + 1 < *n && pre.is_some())
                    {
                        return Some(Refused);
                    }
                    units.push((at, pre, base));
                    at = base;
                }
                let &(_, pre, base) = units.last().unwrap();
                // Only the paths undo restores are looked at and moved:
                // a change of the user's on one of them refuses it, any
                // other change stays (git.md §2).
                let head = self.tree(self.tip()).clone();
                let work_to = self.tree(self.branch[pre.unwrap_or(base)]).clone();
                let index_to = self
                    .index_before(pre.map(|p| self.branch[p]), self.branch[base])
                    .clone();
                let (on_disk, in_index) = (differs(&head, &work_to), differs(&head, &index_to));
                let changed: BTreeSet<String> = differs(&head, &self.work)
                    .union(&differs(&head, &self.index))
                    .cloned()
                    .collect();
                if on_disk.union(&in_index).any(|p| changed.contains(p)) {
                    return Some(Refused);
                }
                for p in &on_disk {
                    set(&mut self.work, p, work_to.get(p));
                }
                for p in &in_index {
                    set(&mut self.index, p, index_to.get(p));
                }
                for (post, pre, base) in &units {
                    self.undone.push(Undone {
                        post: self.branch[*post],
                        pre: pre.map(|p| self.branch[p]),
                        base: self.branch[*base],
                    });
                }
                self.branch.truncate(base + 1);
                Done
            }
            Op::Redo => {
                let tip = self.tip();
                let Some(i) = self.undone.iter().rposition(|u| u.base == tip) else {
                    return Some(Refused);
                };
                let u = self.undone[i].clone();
                let before = self.tree(u.pre.unwrap_or(u.base));
                let fits = |t: &Files| t == before || t == self.tree(tip);
                let staged = self.index_before(u.pre, u.base);
                if !fits(&self.work) || !(fits(&self.index) || self.index == *staged) {
                    return Some(Refused);
                }
                self.undone.remove(i);
                self.branch.extend(u.pre);
                self.branch.push(u.post);
                self.reset_to(self.tree(u.post).clone());
                Done
            }
            Op::StepBack(n) => {
                let n = *n as usize;
                let pos = match &self.session {
                    Some(s) if !self.clean() => {
                        let _ = s;
                        return Some(Refused);
                    }
                    Some(s) => s.pos,
                    None => 0,
                };
                if pos + n > self.branch.len() - 1 {
                    return Some(Refused);
                }
                let (saved_work, saved_index) = (self.work.clone(), self.index.clone());
                self.session
                    .get_or_insert(Session {
                        saved_work,
                        saved_index,
                        pos: 0,
                    })
                    .pos = pos + n;
                self.reset_to(self.tree(self.head()).clone());
                Done
            }
            Op::StepForward(n) => {
                if self.session.is_none() || !self.clean() {
                    return Some(Refused);
                }
                let s = self.session.as_mut().unwrap();
                let steps = n.map_or(s.pos, |n| (n as usize).min(s.pos));
                s.pos -= steps;
                if s.pos == 0 {
                    let s = self.session.take().unwrap();
                    self.work = s.saved_work;
                    self.index = s.saved_index;
                } else {
                    self.reset_to(self.tree(self.head()).clone());
                }
                Done
            }
            Op::Squash => {
                let mut at = self.branch.len() - 1;
                let mut commits = 0;
                while let Some((pre, base)) = self.unit_at(at) {
                    commits += 1 + usize::from(pre.is_some());
                    at = base;
                }
                if commits >= 2 {
                    let tree = self.tree(self.tip()).clone();
                    let id = self.add(Kind::Squash, tree);
                    self.branch.truncate(at + 1);
                    self.branch.push(id);
                }
                Done
            }
        })
    }

    /// `git status --porcelain --untracked-files=all` of the model.
    fn status(&self) -> String {
        let head = self.tree(self.head());
        let paths: BTreeSet<&String> = head
            .keys()
            .chain(self.index.keys())
            .chain(self.work.keys())
            .collect();
        let (mut tracked, mut untracked) = (Vec::new(), Vec::new());
        for p in paths {
            let (h, i, w) = (head.get(p), self.index.get(p), self.work.get(p));
            let x = match (h, i) {
                (None, Some(_)) => 'A',
                (Some(_), None) => 'D',
                (Some(a), Some(b)) if a != b => 'M',
                _ => ' ',
            };
            let y = match (i, w) {
                (Some(_), None) => 'D',
                (Some(a), Some(b)) if a != b => 'M',
                _ => ' ',
            };
            if x != ' ' || y != ' ' {
                tracked.push(format!("{x}{y} {p}"));
            }
            if i.is_none() && w.is_some() {
                untracked.push(format!("?? {p}"));
            }
        }
        tracked.extend(untracked);
        tracked.join("\n")
    }

    /// Kinds of the commits along the branch, newest first.
    fn kinds(&self) -> Vec<Kind> {
        self.branch
            .iter()
            .rev()
            .map(|&id| self.commits[id].kind)
            .collect()
    }
}

fn blob_id(content: &str) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", content.len()).as_bytes());
    h.update(content.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Every content the sequence can produce.
fn universe() -> Vec<String> {
    let mut out = vec!["a\n".to_string()];
    for c in 0..4 {
        out.push(format!("r{c}\n"));
        out.push(format!("u{c}\n"));
    }
    out
}

/// Which of `contents` are reachable: from refs, reflogs, the working tree
/// and the index. Only the user's working tree counts:
/// clada's own scratch worktree (where RUN runs) is not a place the user
/// keeps anything.
fn reachable(r: &Repo, contents: &[String]) -> BTreeSet<String> {
    let args = [
        "rev-list",
        "--objects",
        "--single-worktree",
        "--all",
        "--reflog",
        "--indexed-objects",
    ];
    let objects: BTreeSet<String> = r
        .git(&args)
        .lines()
        .map(|l| l.split(' ').next().unwrap_or_default().to_string())
        .collect();
    let on_disk: BTreeSet<String> = r.worktree().into_values().collect();
    contents
        .iter()
        .filter(|c| objects.contains(&blob_id(c)) || on_disk.contains(*c))
        .cloned()
        .collect()
}

fn kind_of(subject: &str) -> Kind {
    if subject.starts_with("[clada:pre]") {
        Kind::Pre
    } else if subject.starts_with("[clada:post]") {
        Kind::Post
    } else if subject.starts_with("[clada:squash]") {
        Kind::Squash
    } else {
        Kind::User
    }
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let r = Repo::new(&[("a.txt", "a\n")]);
    let mut model = Model::new(BTreeMap::from([("a.txt".to_string(), "a\n".to_string())]));
    let contents = universe();
    for (i, op) in ops.iter().enumerate() {
        let (args, stdin): (Vec<String>, Option<String>) = match op {
            Op::Edit(f, c) => {
                match c {
                    Some(c) => r.write(FILES[*f], &format!("u{c}\n")),
                    None => {
                        let _ = std::fs::remove_file(r.path().join(FILES[*f]));
                    }
                }
                model.step(op);
                continue;
            }
            Op::Stage => {
                r.git(&["add", "-A"]);
                model.step(op);
                continue;
            }
            Op::Commit => {
                let commits = model.commits_now();
                model.step(op);
                if commits {
                    r.commit("user");
                }
                continue;
            }
            Op::Apply(f, c) => (
                vec!["apply".into(), "-".into()],
                Some(write_reply(FILES[*f], &format!("r{c}\n"))),
            ),
            Op::Remove(f) => (
                vec!["apply".into(), "-".into()],
                Some(format!("<---RUN--->\nrm {}\n<---END--->\n", FILES[*f])),
            ),
            Op::Undo(n) => (vec!["undo".into(), n.to_string()], None),
            Op::Redo => (vec!["redo".into()], None),
            Op::StepBack(n) => (vec!["step-back".into(), n.to_string()], None),
            Op::StepForward(Some(n)) => (vec!["step-forward".into(), n.to_string()], None),
            Op::StepForward(None) => (vec!["step-forward".into(), "--all".into()], None),
            Op::Squash => (vec!["squash".into()], None),
        };
        let before = reachable(&r, &contents);
        let expect = model.step(op);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // A date of its own for every step, as a real clock gives: with
        // one fixed date an apply that repeats an undone one (same parent,
        // tree and message) would make the very same commit, which the
        // model (like any user) takes for a new one.
        let date = format!("{} +0000", 1_700_000_000 + i);
        let out = r
            .clada(&args)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .write_stdin(stdin.unwrap_or_default())
            .output()
            .unwrap();
        let want = match expect {
            Some(Expect::Done) => 0,
            Some(Expect::Failed) => 1,
            _ => 2,
        };
        prop_assert_eq!(
            out.status.code(),
            Some(want),
            "step {} {:?}: stdout {} stderr {}",
            i,
            op,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        check(&r, &model, &before, &contents, i, op)?;
    }
    r.assert_fsck_clean();
    Ok(())
}

/// The repository matches the model, and nothing reachable was lost.
fn check(
    r: &Repo,
    model: &Model,
    before: &BTreeSet<String>,
    contents: &[String],
    i: usize,
    op: &Op,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        &r.worktree(),
        &model.work,
        "files after step {} {:?}",
        i,
        op
    );
    prop_assert_eq!(
        r.detached(),
        model.session.is_some(),
        "HEAD after step {} {:?}",
        i,
        op
    );
    prop_assert_eq!(
        r.status(),
        model.status(),
        "status after step {} {:?}",
        i,
        op
    );
    let subjects = r.git(&["log", "--first-parent", "--format=%s", "main"]);
    let kinds: Vec<Kind> = subjects.lines().map(kind_of).collect();
    prop_assert_eq!(kinds, model.kinds(), "branch after step {} {:?}", i, op);
    let after = reachable(r, contents);
    let lost: Vec<&String> = before.difference(&after).collect();
    prop_assert!(lost.is_empty(), "step {} {:?} lost {:?}", i, op, lost);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("CLADA_MODEL_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn history_commands_match_the_model_and_lose_nothing(ops in proptest::collection::vec(op(), 1..16)) {
        run(&ops)?;
    }
}
