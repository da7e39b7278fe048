//! Helpers shared by the end-to-end tests of the `memplan` binary.
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// The `memplan` binary built for the tests.
pub fn memplan() -> Command {
    Command::cargo_bin("memplan").unwrap()
}

/// A file of the repository's `examples/`.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// Writes `text` to `name` in `dir`.
pub fn file(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Parses a command's JSON output.
pub fn json(output: &[u8]) -> serde_json::Value {
    serde_json::from_slice(output).unwrap()
}
