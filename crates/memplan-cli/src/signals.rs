//! Ctrl-C, SIGTERM and SIGHUP: the first one stops a solve, which then
//! writes its best plan; the second one (or the first, outside a solve)
//! exits at once with status 130, removing a half-written output file and
//! the temporary directories of `bench`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::Failure;

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

/// Seconds from the first stop signal to the solver's return, which came
/// `check_seconds` before `returned` (the request's return: the check of
/// the plan follows the solver's); `None` without a signal, or when the
/// signal came after the solver had returned.
pub fn stop_latency(returned: Instant, check_seconds: f64) -> Option<f64> {
    let signal = first_signal()?;
    let latency = returned.checked_duration_since(signal)?.as_secs_f64() - check_seconds;
    (latency >= 0.0).then_some(latency)
}

/// Temporary files and directories to remove if a signal ends the
/// process: each registered from its creation ([`Pending::create`]) until
/// it is removed or renamed.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Process ids of the children (`sort`, a reference solver) to end with
/// SIGTERM if a signal ends the process, registered while they run.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

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
        // forget a path; wait for them a little, never forever. Each lock,
        // once taken, is kept until the exit: a file or child registered
        // after the removal, and before the exit, would be left behind.
        with_lock(&CHILDREN, |children| {
            children.iter().for_each(|&id| terminate(id))
        });
        with_lock(&PENDING, |pending| {
            pending.iter().for_each(|path| remove(path))
        });
        // Nothing here may panic (a panic would end this thread, and
        // signals would be ignored from then on): not `eprintln!`, which
        // panics when stderr is a closed pipe.
        let _ = writeln!(std::io::stderr(), "memplan: interrupted");
        std::mem::forget(claimed);
        std::process::exit(130);
    });
}

/// Runs `f` on the value of `lock` if it can be taken within about 100 ms,
/// and keeps it locked from then on (for the handler, which then exits).
fn with_lock<T>(lock: &Mutex<T>, f: impl FnOnce(&T)) {
    for _ in 0..100 {
        if let Ok(value) = lock.try_lock() {
            f(&value);
            std::mem::forget(value);
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

/// Removes the file or directory `path` (not following a symlink), if it
/// is still there.
fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Sends SIGTERM to the child process `id` (Unix; elsewhere it is left
/// to end by itself).
fn terminate(id: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(id) {
        // SAFETY: `kill` only sends a signal; `pid` is a child of this
        // process still registered, so not yet waited for (see
        // [`spawn_child`]).
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = id;
}

/// Locks `lock`, even if a panic poisoned it (the registers stay valid).
fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A temporary file or directory (a `tempfile::NamedTempFile` or
/// `TempDir`) that an exiting signal removes, registered from its
/// creation until it is dropped or [released](Pending::release).
pub struct Pending<T> {
    /// Dropped first (fields drop in order): the file or directory goes
    /// before its registration, so no signal can leave it behind.
    value: T,
    registration: Registration,
}

/// The registration of a [`Pending`] path, forgotten when dropped.
struct Registration(PathBuf);

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&PENDING).retain(|p| p != &self.0);
    }
}

impl<T: AsRef<Path>> Pending<T> {
    /// Creates the file or directory with `create` and registers it,
    /// holding the register throughout: a signal arriving meanwhile waits
    /// for the registration, so no instant leaves it unregistered.
    pub fn create(create: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<Self> {
        let mut pending = lock(&PENDING);
        let value = create()?;
        let path = value.as_ref().to_path_buf();
        pending.push(path.clone());
        Ok(Pending {
            value,
            registration: Registration(path),
        })
    }

    /// The file or directory.
    pub fn path(&self) -> &Path {
        &self.registration.0
    }

    /// The value (a `NamedTempFile` or `TempDir`).
    pub fn get(&self) -> &T {
        &self.value
    }

    /// Hands the value to `finish` (which renames or removes it), then
    /// forgets the registration.
    pub fn release<R>(self, finish: impl FnOnce(T) -> R) -> R {
        let Pending {
            value,
            registration,
        } = self;
        let result = finish(value);
        drop(registration);
        result
    }
}

/// Spawns `command` and registers the child, so that a signal ending this
/// process ends it too (SIGTERM to memplan alone would otherwise leave it
/// running). The child stays registered while the returned guard lives:
/// drop it right after waiting for the child.
pub fn spawn_child(
    command: &mut std::process::Command,
) -> std::io::Result<(std::process::Child, ChildGuard)> {
    let mut children = lock(&CHILDREN);
    let child = command.spawn()?;
    let id = child.id();
    children.push(id);
    Ok((child, ChildGuard(id)))
}

/// Keeps a child registered for [`spawn_child`].
pub struct ChildGuard(u32);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        lock(&CHILDREN).retain(|&id| id != self.0);
    }
}

/// A temporary directory, removed when dropped or when a signal ends the
/// process.
pub(crate) struct TempDir(Pending<tempfile::TempDir>);

impl TempDir {
    /// A fresh directory with an unpredictable name starting with `prefix`.
    pub(crate) fn new(prefix: &str) -> Result<Self, Failure> {
        Pending::create(|| tempfile::Builder::new().prefix(prefix).tempdir())
            .map(TempDir)
            .map_err(|e| Failure::Input(format!("cannot create a temporary directory: {e}")))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(path: &Path) -> bool {
        lock(&PENDING).iter().any(|p| p == path)
    }

    #[test]
    fn a_pending_file_is_registered_from_creation_to_release_or_drop() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Pending::create(|| tempfile::NamedTempFile::new_in(dir.path())).unwrap();
        let from = kept.path().to_path_buf();
        assert!(registered(&from) && from.exists());
        let target = dir.path().join("plan.csv");
        kept.release(|t| t.persist(&target)).unwrap();
        assert!(!registered(&from) && !from.exists() && target.exists());

        let dropped = Pending::create(|| tempfile::NamedTempFile::new_in(dir.path())).unwrap();
        let path = dropped.path().to_path_buf();
        assert!(registered(&path));
        drop(dropped);
        assert!(!registered(&path) && !path.exists());

        let sub = Pending::create(|| tempfile::Builder::new().tempdir_in(dir.path())).unwrap();
        let path = sub.path().to_path_buf();
        std::fs::write(path.join("x.csv"), "id\n").unwrap();
        assert!(registered(&path));
        drop(sub);
        assert!(!registered(&path) && !path.exists());
    }

    #[test]
    fn a_failed_creation_registers_nothing() {
        let absent = Path::new("/nonexistent/memplan-test-directory");
        let failed = Pending::create(|| tempfile::NamedTempFile::new_in(absent));
        assert!(failed.is_err());
        assert!(!lock(&PENDING).iter().any(|p| p.starts_with(absent)));
    }

    #[test]
    fn remove_handles_files_directories_and_absent_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let sub = dir.path().join("d");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("g"), "y").unwrap();
        remove(&file);
        remove(&sub);
        remove(&dir.path().join("absent"));
        assert!(!file.exists() && !sub.exists());
    }
}
