//! Output helpers: atomic file writes and human units.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::Failure;

/// Writes a file through `write`, atomically: into a temporary file next to
/// `path`, renamed over it only when everything succeeded, so a failure
/// never leaves a partial file. Devices and pipes are written in place.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    if fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        // A device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO): written in
        // place, since renaming a file over it would replace it.
        let result = (|| {
            let mut out = BufWriter::new(fs::OpenOptions::new().write(true).open(path)?);
            write(&mut out)?;
            out.flush()
        })();
        return result
            .map_err(|e| Failure::Input(format!("{}: cannot write: {e}", path.display())));
    }
    let tmp = temp_path(path);
    let result = (|| {
        let file = fs::File::create(&tmp)?;
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        out.flush()?;
        out.get_ref().sync_all()?;
        drop(out);
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Failure::Input(format!("{}: cannot write: {e}", path.display()))
    })
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    path.with_file_name(format!(".{name}.memplan-{}.tmp", std::process::id()))
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
