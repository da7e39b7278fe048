//! The progress line of `memplan solve`: a spinner on stderr with the
//! elapsed time, the best makespan so far, the lower bound and the gap,
//! polled from the library's [`memplan::Progress`] by a thread. Shown only
//! when stderr is a terminal, the solve lasts over half a second, and
//! `--quiet` is not given.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memplan::Progress;

use crate::output::bytes;

/// How long a solve runs before the line appears.
const DELAY: Duration = Duration::from_millis(500);
/// How often the line is refreshed.
const TICK: Duration = Duration::from_millis(100);

/// A running progress display; [`Spinner::finish`] (or dropping it)
/// clears the line and stops the thread.
pub struct Spinner {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts polling `progress` if stderr is a terminal and not `quiet`;
    /// otherwise does nothing.
    pub fn start(progress: &Progress, quiet: bool) -> Spinner {
        if quiet || !std::io::stderr().is_terminal() {
            return Spinner {
                stop: None,
                thread: None,
            };
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let progress = progress.clone();
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("memplan-progress".into())
            .spawn(move || {
                // Nothing for short solves: only once the delay has passed
                // without a stop (a message or the sender dropped).
                if stopped.recv_timeout(DELAY) != Err(RecvTimeoutError::Timeout) {
                    return;
                }
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_elapsed(started.elapsed());
                let style = ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner());
                bar.set_style(style);
                loop {
                    bar.set_message(message(&progress));
                    bar.tick();
                    if stopped.recv_timeout(TICK) != Err(RecvTimeoutError::Timeout) {
                        break;
                    }
                }
                bar.finish_and_clear();
            })
            .ok();
        Spinner {
            stop: Some(stop),
            thread,
        }
    }

    /// Clears the line (if shown) and waits for the thread to end.
    pub fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        // Dropping the sender wakes the thread at once.
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// `best 1.25 MiB  lower bound 1.20 MiB  gap 51.20 KiB (4.17%)`, with
/// only what the solver has published so far (greedy publishes nothing).
fn message(progress: &Progress) -> String {
    let lower = progress.lower_bound();
    let best = progress.best_makespan();
    let mut parts = Vec::new();
    if let Some(best) = best {
        parts.push(format!("best {}", bytes(best)));
    }
    if lower > 0 {
        parts.push(format!("lower bound {}", bytes(lower)));
    }
    if let (Some(best), true) = (best, lower > 0) {
        let gap = best.saturating_sub(lower);
        let percent = gap as f64 * 100.0 / lower as f64;
        parts.push(format!("gap {} ({percent:.2}%)", bytes(gap)));
    }
    if parts.is_empty() {
        "solving".into()
    } else {
        parts.join("  ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_shows_best_bound_and_gap() {
        let p = Progress::default();
        assert_eq!(message(&p), "solving");
        p.raise_lower_bound(1024);
        assert_eq!(message(&p), "lower bound 1.00 KiB");
        p.improve(2048);
        p.improve(4096);
        assert_eq!(
            message(&p),
            "best 2.00 KiB  lower bound 1.00 KiB  gap 1.00 KiB (100.00%)"
        );
    }
}
