//! Runs a plan against a store of files and reports each task.
//!
//! Owns the unit rules of apply.md §1: standalone operations are
//! independent; a TASKS block stops at its first failure, reports the rest
//! SKIP and rolls back everything it changed; a skipped task (invalid at
//! plan time) is reported with its reasons.

use crate::csl::OpKind;
use crate::plan::{Op, RepoPath, Step, Task};
use crate::report::{Status, TaskReport};
use crate::run::Runner;

use super::feedback::Feedback;
use super::files::{FileData, Files, Workspace};
use super::search::{MatchMode, Search, SearchError, search_within};
use super::write::{Write, write};

/// Settings that change how operations behave.
#[derive(Debug, Clone, Copy)]
pub struct ExecOptions {
    pub match_mode: MatchMode,
    /// `clada.finalNewline`.
    pub final_newline: bool,
    /// `--allow-placeholders`: turn the lazy-placeholder guard off.
    pub allow_placeholders: bool,
    /// Include the compact diff in no-match feedback (`--error-detail full`).
    pub full_detail: bool,
    /// What a READ may show, in bytes (`--max-output`).
    pub max_output: usize,
    /// The largest file an operation may leave (`clada.maxFileSize`).
    pub max_file_size: usize,
    /// Until when a failed SEARCH may look for the closest region (the
    /// apply's feedback budget); `None`: always.
    pub feedback_until: Option<std::time::Instant>,
    /// The reply's syntax's words, for hints (set from the parsed reply).
    pub vocab: &'static crate::vocab::Vocab,
}

/// The default of `clada.maxFileSize`: the size of the largest reply.
pub const MAX_FILE_SIZE: usize = 50 * 1024 * 1024;

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            match_mode: MatchMode::Exact,
            final_newline: true,
            allow_placeholders: false,
            full_detail: false,
            max_output: 10 * 1024 * 1024,
            max_file_size: MAX_FILE_SIZE,
            feedback_until: None,
            vocab: &crate::vocab::CSL,
        }
    }
}

/// Runs every task in order; `on_task` sees each report as it finishes:
/// each operation of a TASKS block as it finishes, then the block (whose
/// report holds them again), so that a stream shows each operation's line
/// before the output of the next.
pub fn execute<F: Workspace>(
    tasks: &[Task],
    files: &mut F,
    options: &ExecOptions,
    runner: &mut Runner<'_>,
    mut on_task: impl FnMut(&TaskReport),
) -> Vec<TaskReport> {
    let mut reports = Vec::with_capacity(tasks.len());
    for task in tasks {
        let report = match task {
            Task::Single(step) => run_step(step, files, options, runner),
            Task::Block { task, line, steps } => {
                run_block(*task, *line, steps, files, options, runner, &mut on_task)
            }
            Task::Skipped { task, line, skip } => TaskReport {
                task: *task,
                op: skip.kind,
                target: skip.target.clone(),
                line: *line,
                status: Status::Skip,
                error_type: skip.error_type,
                message: skip
                    .reasons
                    .iter()
                    // apply.md's form, `why (line N)`; a reason that leads
                    // with its line (a forgotten END) is not told it twice.
                    .map(|(l, why)| {
                        if why.starts_with(&format!("line {l}:")) {
                            why.clone()
                        } else {
                            format!("{why} (line {l})")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
                details: Vec::new(),
                operations: Vec::new(),
                output: None,
                lines: Vec::new(),
                closest: None,
                already_present: None,
            },
        };
        on_task(&report);
        reports.push(report);
    }
    reports
}

fn run_block<F: Workspace>(
    task: crate::csl::TaskId,
    line: u32,
    steps: &[Step],
    files: &mut F,
    options: &ExecOptions,
    runner: &mut Runner<'_>,
    on_task: &mut impl FnMut(&TaskReport),
) -> TaskReport {
    let checkpoint = files.checkpoint();
    let mut operations = Vec::with_capacity(steps.len());
    let mut failed = None;
    for step in steps {
        if let Some(first) = failed {
            let report = TaskReport {
                status: Status::Skip,
                error_type: None,
                message: format!("not run: task {first} failed"),
                details: Vec::new(),
                ..bare(step)
            };
            on_task(&report);
            operations.push(report);
            continue;
        }
        let report = run_step(step, files, options, runner);
        if report.status != Status::Success {
            failed = Some(step.task);
        }
        on_task(&report);
        operations.push(report);
    }
    let (status, message, details) = match failed {
        None => {
            files.keep(checkpoint);
            (
            Status::Success,
            format!("{} operation{} applied", steps.len(), if steps.len() == 1 { "" } else { "s" }),
            Vec::new(),
            )
        }
        Some(first) => match files.rollback(checkpoint) {
            Ok(()) => (
                Status::Error,
                format!("task {first} failed; block rolled back"),
                vec!["nothing from this block was applied; fix the failed operation and send the whole block again".to_string()],
            ),
            Err(e) => (
                Status::Error,
                format!("task {first} failed and the rollback failed too: {e}"),
                Vec::new(),
            ),
        },
    };
    TaskReport {
        task,
        op: OpKind::Tasks,
        target: None,
        line,
        status,
        error_type: None,
        message,
        details,
        operations,
        output: None,
        lines: Vec::new(),
        closest: None,
        already_present: None,
    }
}

/// A report for `step` with the fields every outcome shares.
fn bare(step: &Step) -> TaskReport {
    let target = step.op.target();
    TaskReport {
        task: step.task,
        op: step.op.kind(),
        target,
        line: step.line,
        status: Status::Success,
        error_type: None,
        message: String::new(),
        details: Vec::new(),
        operations: Vec::new(),
        output: None,
        lines: Vec::new(),
        closest: None,
        already_present: None,
    }
}

fn run_step<F: Workspace>(
    step: &Step,
    files: &mut F,
    options: &ExecOptions,
    runner: &mut Runner<'_>,
) -> TaskReport {
    let mut report = bare(step);
    let outcome = match &step.op {
        Op::Write {
            path,
            content,
            append,
        } => run_write(files, path, content, *append, options),
        Op::Search {
            path,
            pattern,
            to,
            replacement,
            count,
        } => {
            let s = Search {
                pattern,
                to: to.as_deref(),
                replacement,
                count: *count,
                mode: options.match_mode,
            };
            let (outcome, found) = run_search(files, path, &s, options);
            found.fill(&mut report, path);
            outcome
        }
        Op::Run { dir, script } => {
            let label = format!("task-{}:exec", step.task);
            let (outcome, output) = run_commands(files, runner, &label, dir.as_ref(), script);
            report.output = output;
            outcome
        }
        Op::Delete { path, recursive } => super::paths::delete(files, path, *recursive),
        Op::Move {
            from,
            to,
            overwrite,
        } => super::paths::move_path(files, from, to, *overwrite, options.vocab),
        Op::Mkdir { path } => super::paths::mkdir(files, path),
        Op::Insert { path, line, text } => run_insert(files, path, *line, text, options),
        Op::Read(read) => {
            // Bounded by what the whole reply may still show.
            let cap = super::read::Cap {
                bytes: runner.output_room(options.max_output),
                per_task: options.max_output,
                reply: runner.reply_output_limit(),
            };
            let done = super::read::read(files, read, cap);
            runner.spend_output(done.output.len());
            report.output = Some(done.output);
            done.outcome
        }
        Op::Edit {
            path,
            hunks,
            locate,
            final_newline,
        } => {
            let (outcome, found) = run_edit(files, path, hunks, *locate, *final_newline, options);
            found.fill(&mut report, path);
            outcome
        }
        Op::Create { path, content } => {
            let mut already = false;
            let outcome =
                super::create::create(files, path, content, options.max_file_size, &mut already);
            if already {
                report.already_present = Some(1);
            }
            outcome
        }
        Op::Mode { path, mode } => super::mode::set_mode(files, path, *mode),
    };
    match outcome {
        Ok((message, details)) => TaskReport {
            message,
            details,
            ..report
        },
        Err(f) => TaskReport {
            status: Status::Error,
            error_type: f.error_type,
            // Every error message starts with its stable type.
            message: match f.error_type {
                Some(t) if !f.message.starts_with(t) => format!("{t}: {}", f.message),
                _ => f.message,
            },
            details: f.details,
            ..report
        },
    }
}

/// A failed operation, ready for the report.
pub struct Failure {
    pub error_type: Option<&'static str>,
    pub message: String,
    pub details: Vec<String>,
}

impl From<super::files::FilesError> for Failure {
    fn from(e: super::files::FilesError) -> Failure {
        Failure {
            error_type: Some(e.error_type()),
            message: crate::words::plain(&e.to_string()),
            details: e.hint().into_iter().collect(),
        }
    }
}

/// What a SEARCH or an edit of lines found, for the report's typed
/// fields (`TaskReport::lines`, `closest`, `already_present`).
#[derive(Default)]
struct Found {
    lines: Vec<u32>,
    feedback: Option<Box<Feedback>>,
}

impl Found {
    fn lines(lines: &[u32]) -> Found {
        let mut lines = lines.to_vec();
        lines.dedup();
        Found {
            lines,
            feedback: None,
        }
    }

    fn fill(self, report: &mut TaskReport, path: &RepoPath) {
        report.lines = self.lines;
        if let Some(fb) = self.feedback {
            report.closest = fb.region(path.as_str());
            report.already_present = fb.already_present;
        }
    }
}

/// What an operation did (message, detail lines), or why it failed.
pub type Outcome = Result<(String, Vec<String>), Failure>;

/// A RUN: the files made real, the commands run, what they changed taken
/// back in (even after a failure: a standalone RUN keeps what it did; a
/// TASKS block rolls it back). Returns the outcome and the output.
fn run_commands<F: Workspace>(
    files: &mut F,
    runner: &mut Runner<'_>,
    label: &str,
    dir: Option<&RepoPath>,
    script: &str,
) -> (Outcome, Option<String>) {
    let root = match files.materialize() {
        Ok(root) => root,
        Err(e) => return (Err(e.into()), None),
    };
    let dir = dir.map_or("", RepoPath::as_str);
    // A linked directory could be anywhere: commands run inside the tree.
    if let Some(link) = crate::run::policy::linked_component(&root, dir, false) {
        let failure = Failure::from(super::files::FilesError::Symlink { path: link });
        return (Err(failure), None);
    }
    if !dir.is_empty() {
        let place = root.join(dir);
        let is_dir = std::fs::symlink_metadata(&place).is_ok_and(|m| m.is_dir());
        if !is_dir {
            let failure = Failure {
                error_type: Some("file_not_found"),
                message: format!("the directory {dir} does not exist; nothing was run"),
                details: vec![
                    "name an existing directory (relative to the repository root) in dir=, or create it first"
                        .to_string(),
                ],
            };
            return (Err(failure), None);
        }
    }
    let ran = runner.run_script(label, script, &root, dir);
    let output = (ran.ran > 0).then(|| ran.output.clone());
    let changed = match files.absorb() {
        Ok(changed) => changed,
        Err(e) => return (Err(e.into()), output),
    };
    let mut details = Vec::new();
    // What the commands removed is said as such: "changed: a.txt" for an
    // `rm a.txt` would read as if a.txt were still there.
    for (removed, label) in [(false, "changed"), (true, "removed")] {
        let shown: Vec<String> = changed
            .iter()
            .filter(|(_, r)| *r == removed)
            .map(|(p, _)| crate::quote::shown(p).into_owned())
            .collect();
        if !shown.is_empty() {
            details.push(format!("{label}: {}", list(&shown)));
        }
    }
    if ran.truncated {
        details.push("output truncated at --max-output".to_string());
    }
    match ran.failure {
        None => (
            Ok((format!("ran {}", plural(ran.ran, "command")), details)),
            output,
        ),
        Some(f) => {
            details.splice(0..0, f.details);
            (
                Err(Failure {
                    error_type: Some(f.error_type),
                    message: f.message,
                    details,
                }),
                output,
            )
        }
    }
}

/// `a, b, c` — at most 20 items, then how many more.
fn list<T: ToString>(items: &[T]) -> String {
    const SHOWN: usize = 20;
    let mut text = items
        .iter()
        .take(SHOWN)
        .map(T::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

/// Lines of `text`: one per line end, plus a last line without one.
fn lines_in(text: &str) -> usize {
    text.matches('\n').count() + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

pub fn plural(n: usize, one: &str) -> String {
    let suffix = match (n, one.ends_with("ch")) {
        (1, _) => "",
        (_, true) => "es",
        _ => "s",
    };
    format!("{n} {one}{suffix}")
}

fn run_write<F: Files>(
    files: &mut F,
    path: &RepoPath,
    content: &str,
    append: bool,
    options: &ExecOptions,
) -> Outcome {
    if append {
        unread_if_too_large(files, path, options)?;
    }
    let existing = files.read(path)?;
    let mut notes = Vec::new();
    let content = match super::write::unfenced(path.as_str(), content) {
        Some(inner) => {
            notes.push(
                "the content was wrapped in a ``` fence; the fence lines were left out of the file (a fence is markdown, not part of the file)"
                    .to_string(),
            );
            inner
        }
        None => content,
    };
    let w = Write {
        content,
        append,
        final_newline: options.final_newline,
    };
    let old = existing.as_ref().map(|f| f.bytes.as_slice());
    let bytes = write(old, &w, !options.allow_placeholders)
        .map_err(|p| p.refusal(super::placeholder::Within::Write, options.vocab))?;
    too_large(path, bytes.len(), options)?;
    let n = lines_in(content);
    let message = match (&existing, append) {
        (None, _) => format!("created ({})", plural(n, "line")),
        (Some(_), true) => format!("appended {}", plural(n, "line")),
        (Some(_), false) => format!("overwritten ({})", plural(n, "line")),
    };
    let executable = existing.is_some_and(|f| f.executable);
    files.write(path, FileData { bytes, executable })?;
    Ok((message, notes))
}

/// An edit of a file that does not exist: the closest existing paths
/// (while the feedback budget lasts), and how to create it in the reply's
/// own syntax.
fn missing_file<F: Files>(files: &F, path: &RepoPath, options: &ExecOptions) -> Failure {
    let look = options
        .feedback_until
        .is_none_or(|until| std::time::Instant::now() < until);
    let closest = if look {
        super::suggest::closest(files, path)
    } else {
        Vec::new()
    };
    Failure {
        error_type: Some("file_not_found"),
        message: format!("{path} does not exist"),
        details: super::suggest::did_you_mean(&closest)
            .into_iter()
            .chain([format!(
                "check the path (relative to the repository root), or create the file with {}",
                options.vocab.write
            )])
            .collect(),
    }
}

/// Refuses an edit of a file already over `clada.maxFileSize` from its
/// size, before it is read: editing it needs the whole file in memory
/// several times over (a 180 MB file took 0.8 GB only to find no match),
/// and an edit that keeps most of it would leave it over the limit anyway.
fn unread_if_too_large<F: Files>(
    files: &F,
    path: &RepoPath,
    options: &ExecOptions,
) -> Result<(), Failure> {
    match files.size(path)? {
        Some(size) if size > options.max_file_size as u64 => Err(Failure {
            error_type: Some("file_too_large"),
            message: format!(
                "{path} is {size} bytes, over the limit of {} bytes, so it is not edited (nor read)",
                options.max_file_size
            ),
            details: vec![
                "edit it another way, or raise the limit (git config clada.maxFileSize)"
                    .to_string(),
            ],
        }),
        _ => Ok(()),
    }
}

/// Refuses a result over `clada.maxFileSize`.
fn too_large(path: &RepoPath, size: usize, options: &ExecOptions) -> Result<(), Failure> {
    if size <= options.max_file_size {
        return Ok(());
    }
    Err(Failure {
        error_type: Some("file_too_large"),
        message: format!(
            "{path} would be {size} bytes; the limit is {} bytes",
            options.max_file_size
        ),
        details: vec![
            "keep files under the limit (git config clada.maxFileSize raises it)".to_string(),
        ],
    })
}

fn run_insert<F: Files>(
    files: &mut F,
    path: &RepoPath,
    after: usize,
    text: &str,
    options: &ExecOptions,
) -> Outcome {
    use super::insert::{InsertError, insert};
    unread_if_too_large(files, path, options)?;
    let Some(existing) = files.read(path)? else {
        return Err(missing_file(files, path, options));
    };
    match insert(&existing.bytes, after, text) {
        Ok(bytes) => {
            too_large(path, bytes.len(), options)?;
            files.write(
                path,
                FileData {
                    bytes,
                    executable: existing.executable,
                },
            )?;
            let n = plural(lines_in(text).max(1), "line");
            let message = match after {
                0 => format!("inserted {n} at the top"),
                _ => format!("inserted {n} after line {after}"),
            };
            Ok((message, Vec::new()))
        }
        Err(InsertError::Binary) => Err(Failure {
            error_type: Some("binary_file"),
            message: format!("{path} is a binary file"),
            details: Vec::new(),
        }),
        Err(InsertError::OutOfRange { lines }) => Err(Failure {
            error_type: Some("line_out_of_range"),
            message: format!(
                "{path} has {}; there is no line {after} to insert after",
                plural(lines, "line")
            ),
            details: vec![format!(
                "insert after a line from 0 (the top) to {lines} (the end); read the file to see its lines"
            )],
        }),
    }
}

fn run_search<F: Files>(
    files: &mut F,
    path: &RepoPath,
    s: &Search<'_>,
    options: &ExecOptions,
) -> (Outcome, Found) {
    let mut found = Found::default();
    let outcome = search(files, path, s, options, &mut found);
    (outcome, found)
}

fn search<F: Files>(
    files: &mut F,
    path: &RepoPath,
    s: &Search<'_>,
    options: &ExecOptions,
    found: &mut Found,
) -> Outcome {
    unread_if_too_large(files, path, options)?;
    let Some(existing) = files.read(path)? else {
        return Err(missing_file(files, path, options));
    };
    if !options.allow_placeholders {
        // A range replaces its TO text too (and what lies between).
        let old = match s.to {
            Some(to) => format!("{}\n{to}", s.pattern),
            None => s.pattern.to_string(),
        };
        if let Some(p) = super::placeholder::elided_text(&old, s.replacement, &existing.bytes) {
            return Err(p.refusal(super::placeholder::Within::Search, options.vocab));
        }
    }
    let look = options
        .feedback_until
        .is_none_or(|until| std::time::Instant::now() < until);
    match search_within(&existing.bytes, s, options.max_file_size, look) {
        Ok(done) if done.bytes == existing.bytes => {
            *found = Found::lines(&done.lines);
            let where_ = match done.lines.as_slice() {
                [one] => format!("line {one}"),
                many => format!("lines {}", join(many)),
            };
            Ok((
                format!(
                    "nothing changed: the replacement is the same as the matched text ({where_})"
                ),
                // A loose match is named even when it changed nothing.
                done.whitespace_note.into_iter().chain([
                    "if the edit is already in the file, it needs no resend; otherwise send the text as it should read after the change".to_string(),
                ]).collect(),
            ))
        }
        Ok(done) => {
            *found = Found::lines(&done.lines);
            let mut lines = done.lines.clone();
            lines.dedup();
            let where_ = match lines.as_slice() {
                [one] => format!("line {one}"),
                many => format!("lines {}", join(many)),
            };
            let message = format!("replaced {} ({where_})", plural(done.lines.len(), "match"));
            let details = done.whitespace_note.into_iter().collect();
            files.write(
                path,
                FileData {
                    bytes: done.bytes,
                    executable: existing.executable,
                },
            )?;
            Ok((message, details))
        }
        Err(e) => Err(search_failure(
            e,
            options,
            found,
            &existing.bytes,
            s.pattern,
        )),
    }
}

/// `3, 10, 44`: each line once, in order; at most 20, then how many more.
fn join(lines: &[u32]) -> String {
    let mut seen = lines.to_vec();
    seen.dedup();
    list(&seen)
}

fn search_failure(
    e: SearchError,
    options: &ExecOptions,
    typed: &mut Found,
    file: &[u8],
    pattern: &str,
) -> Failure {
    let error_type = Some(e.error_type());
    let mut message = e.to_string();
    let mut details = Vec::new();
    // Where a pattern matched several places: what tells them apart.
    let apart = |lines: &[u32]| {
        super::apart::tell_apart(
            &String::from_utf8_lossy(file),
            lines,
            pattern.split('\n').count(),
        )
    };
    match e {
        SearchError::Count {
            expected,
            found,
            feedback,
        } => {
            if !found.is_empty() {
                message.push_str(&format!(
                    " ({} {})",
                    if found.len() == 1 { "line" } else { "lines" },
                    join(&found)
                ));
                // More matches than asked for: which one is meant.
                if matches!(expected, crate::csl::validate::Count::Exactly(n) if (n as usize) < found.len()) {
                    details.extend(apart(&found));
                }
                details.push(match options.vocab.count(found.len()) {
                    Some(count) => format!(
                        "include more of the surrounding lines so that the pattern matches exactly where you mean, or {count} to replace every one of them"
                    ),
                    None => "include more of the surrounding lines so that the pattern matches exactly where you mean".to_string(),
                });
            }
            *typed = Found::lines(&found);
            if let Some(fb) = feedback {
                if let Some(line) = fb.already_present {
                    message.push_str(&format!(
                        ", but the replacement already stands at line {line}: the edit looks applied already and needs no resend"
                    ));
                }
                details.extend(fb.lines(if options.full_detail { 60 } else { 12 }));
                details.push(fb.closing_advice(
                    "copy the text to replace from the file exactly as it is now, including indentation",
                ));
                typed.feedback = Some(fb);
            }
        }
        SearchError::RangeWithoutEnd { .. } => {
            details.push(format!(
                "{} must occur after the start of each range; check it against the file",
                options.vocab.range_end
            ));
        }
        SearchError::AmbiguousWhitespace { lines } => {
            *typed = Found::lines(&lines);
            details.extend(apart(&lines));
            details.push(
                "include more of the surrounding lines so that only one region matches".to_string(),
            );
        }
        SearchError::SpacesForTabs { .. } => details.push(
            "indent the replacement with tabs, as the file does".to_string(),
        ),
        SearchError::Binary => {}
        SearchError::TooLarge { .. } => details.push(
            "replace fewer matches or with shorter text (git config clada.maxFileSize raises the limit)"
                .to_string(),
        ),
    }
    Failure {
        error_type,
        message,
        details,
    }
}

/// An EDIT: every hunk found, or nothing changed.
fn run_edit<F: Files>(
    files: &mut F,
    path: &RepoPath,
    hunks: &[crate::plan::Hunk],
    locate: crate::plan::Locate,
    final_newline: Option<bool>,
    options: &ExecOptions,
) -> (Outcome, Found) {
    let mut found = Found::default();
    let outcome = edit_lines(
        files,
        path,
        hunks,
        locate,
        final_newline,
        options,
        &mut found,
    );
    (outcome, found)
}

fn edit_lines<F: Files>(
    files: &mut F,
    path: &RepoPath,
    hunks: &[crate::plan::Hunk],
    locate: crate::plan::Locate,
    final_newline: Option<bool>,
    options: &ExecOptions,
    found: &mut Found,
) -> Outcome {
    use super::edit::{EditError, edit};
    unread_if_too_large(files, path, options)?;
    let Some(existing) = files.read(path)? else {
        return Err(missing_file(files, path, options));
    };
    if !options.allow_placeholders {
        let of = hunks.len();
        for (i, hunk) in hunks.iter().enumerate() {
            if let Some(p) = super::placeholder::elided_in_hunk(hunk, &existing.bytes) {
                return Err(p.refusal(
                    super::placeholder::Within::Hunk { hunk: i + 1, of },
                    options.vocab,
                ));
            }
        }
    }
    let look = options
        .feedback_until
        .is_none_or(|until| std::time::Instant::now() < until);
    // "the lines to find are …" for one hunk, "hunk 2 of 3: its lines
    // are …" for several.
    let of_hunks = |hunk: usize, of: usize| {
        if of == 1 {
            "the lines to find".to_string()
        } else {
            format!("hunk {hunk} of {of}: its lines")
        }
    };
    // Hunks that give their line ends (a diff as git prints it for a
    // CRLF file), or that match a file with `\r` byte for byte, are
    // written byte for byte (apply/exact.rs).
    let exact = super::exact::exact_edit(
        &existing.bytes,
        hunks,
        locate,
        final_newline,
        options.max_file_size,
    );
    let loose = |hunks: &[crate::plan::Hunk]| {
        edit(
            &existing.bytes,
            hunks,
            locate,
            final_newline,
            options.max_file_size,
            look,
        )
    };
    let edited = match exact {
        // Hunks that give CRLF on every line of a file that is CRLF on
        // every line say nothing its own line ends would not: where they
        // do not match byte for byte, the looser steps may still find
        // them, with the `\r` taken off (written back as the file's CRLF).
        Some(Err(e)) => match super::exact::without_uniform_crlf(&existing.bytes, hunks) {
            Some(plain) => loose(&plain),
            None => Err(e),
        },
        Some(done) => done,
        None => loose(hunks),
    };
    match edited {
        Ok(done) if done.bytes == existing.bytes => Ok((
            "nothing changed: the new lines are the same as the lines they replace".to_string(),
            done.notes,
        )),
        Ok(done) => {
            *found = Found::lines(&done.lines);
            let message = match done.lines.as_slice() {
                [one] => format!("replaced 1 hunk (line {one})"),
                many => format!("replaced {} hunks (lines {})", many.len(), join(many)),
            };
            files.write(
                path,
                FileData {
                    bytes: done.bytes,
                    executable: existing.executable,
                },
            )?;
            Ok((message, done.notes))
        }
        Err(e) => {
            let error_type = Some(e.error_type());
            let (message, details) = match e {
                EditError::Binary => (
                    "the file contains NUL bytes; an edit of lines needs a text file".to_string(),
                    Vec::new(),
                ),
                EditError::NotText => (
                    "the file is not UTF-8 text; an edit of lines needs UTF-8 text".to_string(),
                    vec!["write the whole file instead".to_string()],
                ),
                EditError::Overlap { line } => (
                    format!(
                        "two hunks are on the same lines of the file (line {line}); nothing was changed"
                    ),
                    vec!["send the change of those lines as one hunk".to_string()],
                ),
                EditError::AlreadyApplied { hunk, of, line } => (
                    format!(
                        "{}the lines it adds already stand at line {line}, with its other lines around them: the edit looks applied already and needs no resend; nothing was changed",
                        if of == 1 {
                            String::new()
                        } else {
                            format!("hunk {hunk} of {of}: ")
                        },
                    ),
                    vec![
                        "if the lines really belong in the file twice, send them with the lines around them as they are now".to_string(),
                    ],
                ),
                EditError::Unindentable { hunk, of, line } => (
                    format!(
                        "{} match at line {line} only with their indentation shifted, and a new line would then go left of the margin; nothing was changed",
                        of_hunks(hunk, of),
                    ),
                    vec![
                        "copy the lines to change from the file with their indentation exactly as it is now".to_string(),
                    ],
                ),
                EditError::SpacesForTabs { hunk, of, line } => (
                    format!(
                        "{}the file indents with tabs only, the new lines (at line {line}) with spaces, and none of the lines around them shows how many spaces stand for a tab; nothing was changed",
                        if of == 1 {
                            String::new()
                        } else {
                            format!("hunk {hunk} of {of}: ")
                        },
                    ),
                    vec!["indent the new lines with tabs, as the file does".to_string()],
                ),
                EditError::TooLarge { size, max } => (
                    format!("the edit would make the file {size} bytes; the limit is {max} bytes"),
                    Vec::new(),
                ),
                EditError::Ambiguous {
                    hunk,
                    of,
                    lines,
                    step,
                } => {
                    *found = Found::lines(&lines);
                    let len = hunk
                        .checked_sub(1)
                        .and_then(|i| hunks.get(i))
                        .map_or(1, |h| h.old_lines().len());
                    let file = String::from_utf8_lossy(&existing.bytes);
                    (
                        format!(
                            "{} match at lines {}{}, and nothing says which is meant; nothing was changed",
                            of_hunks(hunk, of),
                            join(&lines),
                            if step == super::edit::Step::Exact {
                                String::new()
                            } else {
                                " (when read loosely)".to_string()
                            }
                        ),
                        super::apart::hunk_advice(&file, &lines, len),
                    )
                }
                EditError::NotFound {
                    hunk,
                    of,
                    anchor: Some(anchor),
                    ..
                } => (
                    format!(
                        "{}the context line `{anchor}` is not in the file{}; nothing was changed",
                        if of == 1 {
                            String::new()
                        } else {
                            format!("hunk {hunk} of {of}: ")
                        },
                        if hunk > 1 {
                            " after the hunks before it"
                        } else {
                            ""
                        }
                    ),
                    super::feedback::anchor_advice(
                        &String::from_utf8_lossy(&existing.bytes),
                        &anchor,
                        hunk > 1,
                    ),
                ),
                EditError::NotFound {
                    hunk, of, feedback, ..
                } => {
                    let mut details = Vec::new();
                    let mut message = format!(
                        "{} are not in the file{}; nothing was changed",
                        of_hunks(hunk, of),
                        if hunk > 1 {
                            " after the hunks before it"
                        } else {
                            ""
                        }
                    );
                    if let Some(fb) = feedback {
                        if let Some(line) = fb.already_present {
                            message = format!(
                                "{} are not in the file, but the new lines already are (line {line}): the edit looks applied already and needs no resend; nothing was changed",
                                of_hunks(hunk, of)
                            );
                        }
                        details.extend(fb.lines(if options.full_detail { 60 } else { 12 }));
                        details.push(fb.closing_advice(
                            "copy the lines to change from the file exactly as they are now, including indentation",
                        ));
                        found.feedback = Some(fb);
                    }
                    (message, details)
                }
            };
            Err(Failure {
                error_type,
                message,
                details,
            })
        }
    }
}
