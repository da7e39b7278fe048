//! Ctrl-C, SIGTERM and SIGHUP: the first one stops a solve, which then
//! writes its best plan; the second one (or the first, outside a solve)
//! exits at once with status 130, removing a half-written output file and
//! the temporary directories of `bench`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The stop flag a solve watches, raised by the first signal.
fn stop_flag() -> &'static Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// True while a solve can be stopped gracefully.
static GRACEFUL: AtomicBool = AtomicBool::new(false);

/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);

/// When the first signal that stopped a solve arrived.
static FIRST: OnceLock<Instant> = OnceLock::new();

/// The instant the first signal stopped a solve, if one did.
pub fn first_signal() -> Option<Instant> {
    FIRST.get().copied()
}

/// The temporary output file being written, if any.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Held by whichever ends the process first: `main` returning its status
/// ([`claim_exit`]) or the handler exiting with 130. So a process that
/// prints "interrupted" exits 130, and one exiting 0 prints nothing more.
static EXIT: Mutex<()> = Mutex::new(());

/// Claims the end of the process for `main`, which is about to return its
/// status: a signal arriving from now on waits for the exit. Blocks
/// forever if the handler is already exiting (its exit ends the process).
pub fn claim_exit() {
    if let Ok(guard) = EXIT.lock() {
        std::mem::forget(guard);
    }
}

/// Temporary directories to remove if a signal ends the process.
static PENDING_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the handler (once, at start-up). Failing to install it (e.g.
/// one already set) leaves the default action, which ends the process.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let earlier = RECEIVED.fetch_add(1, Ordering::SeqCst);
        if earlier == 0 && GRACEFUL.load(Ordering::SeqCst) {
            let _ = FIRST.set(Instant::now());
            stop_flag().store(true, Ordering::SeqCst);
            return;
        }
        // Unless `main` is already returning its status (then this waits
        // for the exit).
        let claimed = EXIT.lock();
        // The writers hold the locks only for an instant, to register or
        // forget a path; wait for them a little, never forever.
        with_lock(&PENDING, |pending| {
            if let Some(path) = pending.as_ref() {
                let _ = std::fs::remove_file(path);
            }
        });
        with_lock(&PENDING_DIRS, |dirs| {
            for dir in dirs.iter() {
                let _ = std::fs::remove_dir_all(dir);
            }
        });
        // Nothing here may panic (a panic would end this thread, and
        // signals would be ignored from then on): not `eprintln!`, which
        // panics when stderr is a closed pipe.
        let _ = writeln!(std::io::stderr(), "memplan: interrupted");
        std::mem::forget(claimed);
        std::process::exit(130);
    });
}

/// Runs `f` on the value of `lock` if it can be taken within about 100 ms.
fn with_lock<T>(lock: &Mutex<T>, f: impl FnOnce(&T)) {
    for _ in 0..100 {
        if let Ok(value) = lock.try_lock() {
            f(&value);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The flag of a solve that a first signal stops gracefully; from now on,
/// the first signal raises it instead of exiting.
pub fn graceful_stop() -> Arc<AtomicBool> {
    GRACEFUL.store(true, Ordering::SeqCst);
    stop_flag().clone()
}

/// A temporary file that an exiting signal removes, registered while this
/// value lives.
pub struct PendingFile(());

impl PendingFile {
    /// Registers `path`.
    pub fn new(path: &Path) -> Self {
        if let Ok(mut pending) = PENDING.lock() {
            *pending = Some(path.to_path_buf());
        }
        PendingFile(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if let Ok(mut pending) = PENDING.lock() {
            *pending = None;
        }
    }
}

/// A temporary directory that an exiting signal removes (with its
/// content), registered while this value lives.
pub struct PendingDir(PathBuf);

impl PendingDir {
    /// Registers `path`.
    pub fn new(path: &Path) -> Self {
        if let Ok(mut dirs) = PENDING_DIRS.lock() {
            dirs.push(path.to_path_buf());
        }
        PendingDir(path.to_path_buf())
    }
}

impl Drop for PendingDir {
    fn drop(&mut self) {
        if let Ok(mut dirs) = PENDING_DIRS.lock() {
            dirs.retain(|d| d != &self.0);
        }
    }
}
