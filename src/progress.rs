//! Progress on the terminal: one line on stderr, rewritten in place, for
//! work that can take over a second (checking out the scratch working
//! tree, a long RUN command).
//!
//! Owns only the drawing. It is off unless the command line turned it on
//! ([`enable`]: stderr is a terminal and no `--quiet`), so nothing is ever
//! written to a pipe or a file. A line appears only once its work has run
//! for a second (`CLADA_PROGRESS_DELAY_MS` sets another delay, for the
//! tests), is redrawn a few times a second, and is erased when the work
//! ends. Whoever writes other output to the terminal meanwhile does it
//! through [`above`], which erases the line first and keeps it from being
//! redrawn until the output is written: progress never mixes into command
//! output or the report.
//!
//! The switch is process-wide because the work that reports progress lies
//! deep in the library (`git`, `run`) while the decision is the command
//! line's, made once at start.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether a progress line is on the terminal now. Held while drawing,
/// erasing and writing other output ([`above`]).
static SHOWN: Mutex<bool> = Mutex::new(false);

/// [`SHOWN`] as a signal handler may read it (no lock there).
static ON_SCREEN: AtomicBool = AtomicBool::new(false);

/// Erases the progress line from a signal handler (Ctrl-C during a long
/// RUN), so that the shell's prompt does not land after it: only an
/// atomic load and write(2), both async-signal-safe.
pub fn erase_from_signal_handler() {
    if ON_SCREEN.load(Ordering::SeqCst) {
        const CLEAR: &[u8] = b"\r\x1b[K";
        // SAFETY: write(2) reads CLEAR.len() bytes from a static buffer.
        unsafe {
            libc::write(libc::STDERR_FILENO, CLEAR.as_ptr().cast(), CLEAR.len());
        }
    }
}

/// Turns progress on or off for the rest of the process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether progress is drawn.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// How long work runs before its line appears.
fn delay() -> Duration {
    std::env::var("CLADA_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

/// Erases the line, if one is shown.
fn erase(shown: &mut bool) {
    if *shown {
        let mut err = std::io::stderr().lock();
        // Back to column 1, clear to the end of the line.
        let _ = err.write_all(b"\r\x1b[K");
        let _ = err.flush();
        *shown = false;
        ON_SCREEN.store(false, Ordering::SeqCst);
    }
}

fn lock() -> std::sync::MutexGuard<'static, bool> {
    // A thread that panicked while drawing leaves nothing inconsistent.
    SHOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `write` (which writes output to the terminal) with the progress
/// line erased and not redrawn until it returns. Flush what `write` wrote
/// inside it: the line may be redrawn right after.
pub fn above<R>(write: impl FnOnce() -> R) -> R {
    if !enabled() {
        return write();
    }
    let mut shown = lock();
    erase(&mut shown);
    write()
}

/// A progress line kept up to date by a thread of its own while the value
/// lives; erased when it is dropped.
pub struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    /// Draws `text(elapsed)` from [`delay`] on, every fifth of a second.
    /// Does nothing when progress is off.
    pub fn start(text: impl Fn(Duration) -> String + Send + 'static) -> Ticker {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        if !enabled() {
            return Ticker { stop, thread: None };
        }
        let started = Instant::now();
        let first = delay();
        let signal = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let (stopped, wake) = &*signal;
                let mut wait = first;
                loop {
                    let guard = stopped.lock().unwrap_or_else(|e| e.into_inner());
                    let (guard, _) = wake
                        .wait_timeout_while(guard, wait, |stopped| !*stopped)
                        .unwrap_or_else(|e| e.into_inner());
                    if *guard {
                        return;
                    }
                    drop(guard);
                    let line = fit(&text(started.elapsed()), width());
                    let mut shown = lock();
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r\x1b[K{line}");
                    let _ = err.flush();
                    *shown = true;
                    ON_SCREEN.store(true, Ordering::SeqCst);
                    wait = Duration::from_millis(200);
                }
            })
            .ok();
        Ticker { stop, thread }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let (stopped, wake) = &*self.stop;
        *stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        let _ = thread.join();
        erase(&mut lock());
    }
}

/// A count of things done out of a total, shown as `what: done/total` —
/// for work that counts as it goes (files checked out).
pub struct Counter {
    done: Arc<AtomicUsize>,
    _ticker: Ticker,
}

impl Counter {
    pub fn start(what: &'static str, total: usize) -> Counter {
        let done = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&done);
        let ticker = Ticker::start(move |_| {
            let n = seen.load(Ordering::Relaxed).min(total);
            format!("{what}: {n}/{total} files")
        });
        Counter {
            done,
            _ticker: ticker,
        }
    }

    /// The shared count, for work spread over threads.
    pub fn shared(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.done)
    }
}

/// The terminal's width in columns (stderr's), 80 when unknown.
fn width() -> usize {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the given place.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    }
}

/// `text` made one terminal line: control characters blanked, cut to
/// fewer than `width` columns (a line that wrapped could not be erased).
/// A character other than ASCII counts as two columns, as a wide (CJK)
/// one takes: a line of accented letters may be cut a little short, but
/// none wraps.
fn fit(text: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(1);
    let columns = |c: char| if c.is_ascii() { 1 } else { 2 };
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.chars().map(columns).sum::<usize>() <= max {
        return line;
    }
    // Room for the ellipsis (one column).
    let mut room = max.saturating_sub(1);
    let mut cut = String::new();
    for c in line.chars() {
        if columns(c) > room {
            break;
        }
        room -= columns(c);
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// Elapsed time as a person reads it: `4s`, `1m 05s`, `1h 02m`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_reads_as_a_person_would() {
        assert_eq!(elapsed(Duration::from_millis(4900)), "4s");
        assert_eq!(elapsed(Duration::from_secs(65)), "1m 05s");
        assert_eq!(elapsed(Duration::from_secs(3720)), "1h 02m");
    }

    #[test]
    fn a_line_fits_the_terminal() {
        assert_eq!(fit("RUN\tmake\x1b[2J", 80), "RUN make [2J");
        assert_eq!(fit("abcdefghij", 6), "abcd…");
        assert_eq!(fit("abcde", 6), "abcde");
        // Wide characters take two columns each: 5 columns of room.
        assert_eq!(fit("日本語の", 6), "日本…");
        assert_eq!(fit("日本", 6), "日本");
        assert_eq!(fit("a日本語", 6), "a日…");
    }

    #[test]
    fn nothing_runs_while_progress_is_off() {
        // Off by default: no thread, so nothing can ever be drawn.
        let ticker = Ticker::start(|_| unreachable!("never drawn"));
        assert!(ticker.thread.is_none());
    }
}
