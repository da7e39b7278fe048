//! The `memplan` command: a thin layer over the `memplan` library.

mod args;
mod bench;
mod commands;
mod differential;
mod glyphs;
mod named;
mod output;
mod plot;
mod pool_bench;
mod pools;
mod progress;
mod signals;
mod table;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

/// How a command failed, which decides the exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or usage: exit 2.
    Input(String),
    /// The command ran but the answer is negative (no plan within the
    /// capacity, an invalid plan): exit 1.
    Negative(String),
    /// A bug in memplan (a solver returned an invalid plan): exit 3.
    Internal(String),
    /// The reader of standard output closed it (`memplan ... -o - | head`):
    /// a quiet exit 0, as ripgrep and other pipeline tools do.
    OutputClosed,
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Negative(_) => 1,
            Failure::Internal(_) => 3,
            Failure::OutputClosed => 0,
        }
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Input(e.to_string())
    }
}

fn main() -> ExitCode {
    fixed_mmap_threshold();
    let cli = args::Cli::parse();
    signals::install();
    let code = match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::OutputClosed) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Failure::Input(message)
            | Failure::Negative(message)
            | Failure::Internal(message) = &failure
            {
                // Not `eprintln!`, which panics if stderr is a closed pipe.
                let _ = writeln!(std::io::stderr(), "memplan: {message}");
            }
            ExitCode::from(failure.exit_code())
        }
    };
    // A signal racing with this return must not print "interrupted" and
    // then lose to status 0 (or the reverse).
    signals::claim_exit();
    code
}

/// Keeps glibc's mmap threshold at its initial 128 KiB. By default glibc
/// raises it each time a mapped block is freed (up to 32 MiB), after which
/// the multi-megabyte work vectors of reading and solving come from the
/// heap and, freed between longer-lived small blocks (buffer ids), stay
/// resident, adding to the peak memory a buffer costs. Fixed, large
/// blocks are mapped and returned to the system when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    // SAFETY: `mallopt` only sets an allocator parameter; it is called
    // first thing in `main`, before any other thread exists. Its result
    // (0 on failure) only means the default stays.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Other allocators need no such setting.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fixed_mmap_threshold() {}
