//! Output helpers: safe output files and human units.
//!
//! An output file is never left partial and never written through a link
//! someone else planted: a regular file is written into a fresh temporary
//! file beside it (random name, created with `O_EXCL`, so no symlink is
//! followed), synced, then renamed over the target. Standard output (`-`,
//! `/dev/stdout`, `/dev/fd/1`), standard error (`/dev/stderr`,
//! `/dev/fd/2`) and other special files (devices, FIFOs) are written in
//! place; a symlink is resolved to the file it names, which is then
//! replaced, not the link. Refused: an output that is one of the command's
//! inputs, a regular file the user may not write (as the shell's `>`
//! would), and another open descriptor's file (`/dev/fd/3`), which would
//! be replaced rather than written.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::signals;
use crate::Failure;

/// Where an output file goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Sink {
    /// The process's standard output.
    Stdout,
    /// The process's standard error.
    Stderr,
    /// A device, FIFO or socket: opened and written as it is.
    InPlace(PathBuf),
    /// A regular file (existing or not), replaced atomically; symlinks
    /// already resolved.
    File(PathBuf),
}

impl Sink {
    /// Where `path` goes; refused when it is one of `inputs`, a directory,
    /// or a link to nowhere.
    pub fn new(path: &Path, inputs: &[&Path]) -> Result<Sink, Failure> {
        let refuse = |why: &str| Failure::Input(format!("{}: {why}", path.display()));
        if path.as_os_str() == "-" {
            return Ok(Sink::Stdout);
        }
        let (Ok(meta), Some(id)) = (fs::metadata(path), identity(path)) else {
            if fs::symlink_metadata(path).is_ok() {
                return Err(refuse("is a symbolic link to a missing file; not followed"));
            }
            return Ok(Sink::File(path.to_path_buf()));
        };
        let [stdout, stderr] = standard_identities();
        if stdout.is_some_and(|out| out == id) {
            return Ok(Sink::Stdout);
        }
        if stderr.is_some_and(|err| err == id) {
            return Ok(Sink::Stderr);
        }
        if inputs
            .iter()
            .any(|input| identity(input).is_some_and(|input| input == id))
        {
            return Err(refuse(
                "is also an input of this command; write the output elsewhere",
            ));
        }
        if meta.is_dir() {
            return Err(refuse("is a directory"));
        }
        if !meta.is_file() {
            return Ok(Sink::InPlace(path.to_path_buf()));
        }
        if names_a_descriptor(path) {
            return Err(refuse(
                "names an open descriptor's file, which would be replaced rather than \
                 written; give the file's own path",
            ));
        }
        // A regular file, maybe behind links: replace the file, keep links.
        let target =
            fs::canonicalize(path).map_err(|e| refuse(&format!("cannot resolve the path: {e}")))?;
        // Opening for writing (no truncation) asks the system whether the
        // user may write it: replacing it must not bypass that.
        fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .map_err(|e| refuse(&format!("cannot write: {e}")))?;
        Ok(Sink::File(target))
    }

    /// True for standard output, where the command's own report must not go.
    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout)
    }

    /// Writes the output through `write`; see the module documentation.
    pub fn write(
        &self,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), Failure> {
        let (path, result) = match self {
            Sink::Stdout => {
                let mut out = BufWriter::new(PipeWatch {
                    inner: std::io::stdout().lock(),
                    broken: false,
                });
                let result = write(&mut out).and_then(|()| out.flush());
                if result.is_err() && out.get_ref().broken {
                    return Err(Failure::OutputClosed);
                }
                (Path::new("standard output"), result)
            }
            Sink::Stderr => {
                let mut out = BufWriter::new(std::io::stderr().lock());
                let result = write(&mut out).and_then(|()| out.flush());
                (Path::new("standard error"), result)
            }
            Sink::InPlace(path) => (
                path.as_path(),
                fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .and_then(|file| {
                        let mut out = BufWriter::new(file);
                        write(&mut out)?;
                        out.flush()
                    }),
            ),
            Sink::File(path) => (path.as_path(), replace(path, write)),
        };
        result.map_err(|e| Failure::Input(format!("{}: cannot write: {e}", path.display())))
    }
}

/// Writes one line to standard output. A reader that went away (a broken
/// pipe) ends the command quietly ([`Failure::OutputClosed`]); any other
/// error (a full disk) is reported, never a panic as with `println!`.
pub fn say(line: std::fmt::Arguments<'_>) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(line)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| write_failure(e, "standard output"))
}

/// The failure of a write to `what` (standard output or error, for the
/// report): a broken pipe is a reader that went away.
pub fn write_failure(e: std::io::Error, what: &str) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::OutputClosed
    } else {
        Failure::Input(format!("{what}: cannot write: {e}"))
    }
}

/// Where a command's report goes: standard error when the output `sink`
/// is standard output, else standard output; with its name for errors.
pub fn report_stream(sink: Option<&Sink>) -> (Box<dyn Write>, &'static str) {
    if sink.is_some_and(Sink::is_stdout) {
        (Box::new(std::io::stderr()), "standard error")
    } else {
        (Box::new(std::io::stdout()), "standard output")
    }
}

/// [`say`] with `format!` arguments: `say!("{x}")?`.
#[macro_export]
macro_rules! say {
    () => {
        $crate::output::say(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::say(format_args!($($arg)*))
    };
}

/// A writer that remembers whether its reader went away (a broken pipe),
/// whatever the error becomes in the layers above (the CSV writer's
/// errors keep no source).
struct PipeWatch<W> {
    inner: W,
    broken: bool,
}

impl<W: Write> PipeWatch<W> {
    fn watch<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            self.broken |= e.kind() == std::io::ErrorKind::BrokenPipe;
        }
        result
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.watch(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.watch(result)
    }
}

/// Writes `path` atomically through a temporary file in its directory.
fn replace(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A new file gets read-write for everyone less the umask, as any new
    // file; a replaced one keeps its mode exactly.
    let existing = fs::metadata(path).ok().map(|m| m.permissions());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".memplan.tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // Registered as it is created: a second Ctrl-C or SIGTERM exits at
    // once, removing it first.
    let tmp = signals::Pending::create(|| builder.tempfile_in(dir))?;
    let mut out = BufWriter::new(tmp.get().as_file());
    write(&mut out)?;
    out.flush()?;
    drop(out);
    pause_for_tests();
    if let Some(permissions) = existing {
        tmp.get().as_file().set_permissions(permissions)?;
    }
    tmp.get().as_file().sync_all()?;
    tmp.release(|tmp| tmp.persist(path).map_err(|e| e.error))?;
    // Make the rename itself durable; not every system can sync a directory.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Debug builds only: waits `MEMPLAN_TEST_PAUSE_BEFORE_RENAME`
/// milliseconds with the temporary file written, so that a test can signal
/// the process while that file exists. Release builds ignore the variable.
fn pause_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("MEMPLAN_TEST_PAUSE_BEFORE_RENAME")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// The identity of a file: equal for two paths that name the same file
/// (device and inode on Unix, the canonical path elsewhere).
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<PathBuf> {
    fs::canonicalize(path).ok()
}

/// The identities of the files standard output and standard error write
/// to, when they are files.
#[cfg(unix)]
fn standard_identities() -> [Option<(u64, u64)>; 2] {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let of = |fd: std::os::fd::BorrowedFd<'_>| {
        let meta = fs::File::from(fd.try_clone_to_owned().ok()?)
            .metadata()
            .ok()?;
        Some((meta.dev(), meta.ino()))
    };
    [of(std::io::stdout().as_fd()), of(std::io::stderr().as_fd())]
}

#[cfg(not(unix))]
fn standard_identities() -> [Option<PathBuf>; 2] {
    [None, None]
}

/// Whether `path` names a descriptor of this process (`/dev/fd/N`,
/// `/proc/self/fd/N`), which opening would reopen, not write.
fn names_a_descriptor(path: &Path) -> bool {
    path.parent()
        .is_some_and(|dir| dir == Path::new("/dev/fd") || dir == Path::new("/proc/self/fd"))
}

/// Writes a file through `write` (see [`Sink`]); `inputs` are the
/// command's input files, which the output must not replace.
pub fn write_output(
    path: &Path,
    inputs: &[&Path],
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    Sink::new(path, inputs)?.write(write)
}

/// Bytes in human units: `512 B`, `3.50 KiB`, `1.25 MiB`...
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

/// Seconds in human units: `850 µs`, `12.3 ms`, `1.52 s`.
pub fn seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// The failure of a run that gave no report: an invalid request (bad
/// usage), or a plan the validator refused (a bug).
pub(crate) fn run_failure(e: memplan::request::RunError) -> Failure {
    match e {
        memplan::request::RunError::Request(e) => Failure::Input(e.to_string()),
        memplan::request::RunError::Internal(m) => {
            Failure::Internal(format!("internal error: {m}"))
        }
    }
}

/// What a summary says of a solve cut short.
pub(crate) fn stopped_phrase(stopped: memplan::Stopped) -> &'static str {
    match stopped {
        memplan::Stopped::TimeLimit => "by the time limit (best plan so far)",
        memplan::Stopped::Interrupted => "interrupted (best plan so far)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(1048576), "1.00 MiB");
        assert_eq!(seconds(0.0005), "500 µs");
        assert_eq!(seconds(0.0123), "12.3 ms");
        assert_eq!(seconds(2.5), "2.50 s");
    }
}
