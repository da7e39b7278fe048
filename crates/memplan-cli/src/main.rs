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
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Negative(_) => 1,
            Failure::Internal(_) => 3,
        }
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Input(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    signals::install();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (Failure::Input(message) | Failure::Negative(message) | Failure::Internal(message)) =
                &failure;
            eprintln!("memplan: {message}");
            ExitCode::from(failure.exit_code())
        }
    }
}
