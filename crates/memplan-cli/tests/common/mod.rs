//! Helpers shared by the end-to-end tests of the `memplan` binary.
#![allow(dead_code)] // each test file uses its own subset

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::assert::Assert;
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

/// Runs `cmd`, expects success, and returns its standard output.
pub fn ok_stdout(cmd: &mut Command) -> Vec<u8> {
    cmd.assert().success().get_output().stdout.clone()
}

/// Runs `cmd`, expects success, and parses its JSON report.
pub fn json_ok(cmd: &mut Command) -> serde_json::Value {
    json(&ok_stdout(cmd))
}

/// The JSON report on the standard output of a finished command.
pub fn stdout_json(assert: Assert) -> serde_json::Value {
    json(&assert.get_output().stdout)
}

/// `memplan validate INPUT PLAN`, to be checked by the caller.
pub fn validate_plan(input: impl AsRef<OsStr>, plan: impl AsRef<OsStr>) -> Assert {
    memplan().arg("validate").arg(input).arg(plan).assert()
}

/// `memplan generate --kind KIND --buffers N [--seed SEED] -o PATH`,
/// which must succeed.
pub fn generate(kind: &str, buffers: usize, seed: Option<u64>, path: &Path) {
    let mut cmd = memplan();
    cmd.args([
        "generate",
        "--kind",
        kind,
        "--buffers",
        &buffers.to_string(),
    ]);
    if let Some(seed) = seed {
        cmd.args(["--seed", &seed.to_string()]);
    }
    cmd.arg("-o").arg(path).assert().success();
}

/// The text of a file.
pub fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Runs `cmd`, expects exit `code` and `message` on the standard error.
pub fn fails(cmd: &mut Command, code: i32, message: impl Into<String>) -> Assert {
    cmd.assert()
        .code(code)
        .stderr(predicates::str::contains(message))
}

/// Runs `cmd`, expects exit `code`, and parses its JSON report.
pub fn json_code(cmd: &mut Command, code: i32) -> serde_json::Value {
    json(&cmd.assert().code(code).get_output().stdout)
}

/// `memplan validate INPUT PLAN` refuses the plan (exit 1) with `message`.
pub fn invalid_plan(input: impl AsRef<OsStr>, plan: impl AsRef<OsStr>, message: &str) -> Assert {
    validate_plan(input, plan)
        .code(1)
        .stderr(predicates::str::contains(message))
}
