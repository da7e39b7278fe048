//! The C ABI of memplan: `libmemplan.a` / `libmemplan.so` and the header
//! `include/memplan.h`, generated from this crate by cbindgen (the test
//! `header::committed_header_is_current` fails when the committed header is
//! stale; `MEMPLAN_BLESS=1 cargo test -p memplan-capi` rewrites it).
//!
//! Conventions, stated in the header too: every function returns a
//! [`memplan_status`]; a failure leaves a message for
//! [`memplan_last_error`] (per thread); no panic unwinds into C (each body
//! runs under `catch_unwind`); outputs go through pointers the caller owns,
//! with lengths for arrays and strings; objects are made by `*_new` (or
//! [`memplan_solve`]) and released by `*_free`.
//!
//! One module per concept: [`status`] (codes, last error, the guard),
//! [`problem`], [`options`] (with the cancel handle), [`solve`] (and the
//! solution), [`validate`], [`pools`] (several memories).
//!
//! Every exported function is `unsafe`: it takes raw pointers whose validity
//! the caller guarantees (NULL is always detected). The header's preamble
//! states that contract once rather than in a `# Safety` section per function.
#![allow(clippy::missing_safety_doc)]

// In the header's order (blank lines keep rustfmt from sorting them).
pub mod status;

pub mod problem;

pub mod options;

pub mod solve;

pub mod validate;

pub mod pools;

#[cfg(test)]
mod header;
#[cfg(test)]
mod tests;

pub use options::*;
pub use pools::*;
pub use problem::*;
pub use solve::*;
pub use status::*;
pub use validate::*;

use status::{guard, write_out};

/// Stores the version of the library (e.g. 0, 1, 0) in `*out_major`,
/// `*out_minor` and `*out_patch`. Functions and constants are only ever
/// added within a major version (and, before 1.0, within a minor one).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (any of the three); nothing is
/// written then.
#[no_mangle]
pub unsafe extern "C" fn memplan_version(
    out_major: *mut u32,
    out_minor: *mut u32,
    out_patch: *mut u32,
) -> memplan_status {
    guard("memplan_version", || {
        for (p, name) in [
            (out_major, "out_major"),
            (out_minor, "out_minor"),
            (out_patch, "out_patch"),
        ] {
            if p.is_null() {
                return Err(status::Failure::null(name));
            }
        }
        let part = |s: &str| s.parse::<u32>().unwrap_or(0);
        // SAFETY: checked non-null; the caller passes writable pointers.
        unsafe {
            write_out(
                out_major,
                part(env!("CARGO_PKG_VERSION_MAJOR")),
                "out_major",
            )?;
            write_out(
                out_minor,
                part(env!("CARGO_PKG_VERSION_MINOR")),
                "out_minor",
            )?;
            write_out(
                out_patch,
                part(env!("CARGO_PKG_VERSION_PATCH")),
                "out_patch",
            )
        }
    })
}
