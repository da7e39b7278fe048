//! Status codes, the last error, strings into caller buffers, panics.

use std::ffi::c_char;
use std::ptr::null_mut;

use super::*;
use crate::status::{guard, write_str, Failure};

/// Sets this thread's last error to a known message.
fn fail_with(message: &str) {
    let status = guard("test", || {
        Err(Failure::new(MEMPLAN_ERROR_INVALID_ARGUMENT, message))
    });
    assert_eq!(status, MEMPLAN_ERROR_INVALID_ARGUMENT);
}

#[test]
fn last_error_is_empty_before_any_failure_and_per_thread() {
    std::thread::spawn(|| {
        assert_eq!(last_error(), "");
        fail_with("on another thread");
        assert_eq!(last_error(), "test: on another thread");
    })
    .join()
    .unwrap();
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
}

#[test]
fn last_error_survives_successful_calls() {
    fail_with("first");
    let mut major = 0;
    let (mut minor, mut patch) = (0, 0);
    // SAFETY: local outputs.
    assert_eq!(
        unsafe { memplan_version(&mut major, &mut minor, &mut patch) },
        MEMPLAN_OK
    );
    assert_eq!(last_error(), "test: first");
}

#[test]
fn last_error_copies_snprintf_like_and_never_changes_itself() {
    fail_with("héllo");
    // "test: héllo" is 12 bytes (é is two).
    let mut length = 0usize;
    // SAFETY: every buffer below is local and of the capacity given.
    unsafe {
        // Length alone.
        assert_eq!(
            memplan_last_error(null_mut(), 0, &mut length),
            MEMPLAN_ERROR_BUFFER_TOO_SMALL
        );
        assert_eq!(length, 12);
        // Exactly fits with its NUL.
        let mut buffer = [0x55 as c_char; 13];
        assert_eq!(
            memplan_last_error(buffer.as_mut_ptr(), 13, &mut length),
            MEMPLAN_OK
        );
        assert_eq!(buffer[12], 0);
        // One byte short: cut, NUL-terminated, nothing past the capacity.
        let mut buffer = [0x55 as c_char; 16];
        assert_eq!(
            memplan_last_error(buffer.as_mut_ptr(), 12, &mut length),
            MEMPLAN_ERROR_BUFFER_TOO_SMALL
        );
        assert_eq!(length, 12);
        assert_eq!(buffer[11], 0);
        assert!(buffer[12..].iter().all(|&c| c == 0x55));
        // Cut inside `é` (bytes 7 and 8): backs up to the boundary.
        let mut buffer = [0x55 as c_char; 16];
        assert_eq!(
            memplan_last_error(buffer.as_mut_ptr(), 9, &mut length),
            MEMPLAN_ERROR_BUFFER_TOO_SMALL
        );
        let text: Vec<u8> = buffer[..7].iter().map(|&c| c as u8).collect();
        assert_eq!(text, b"test: h");
        assert_eq!(buffer[7], 0);
        assert!(buffer[9..].iter().all(|&c| c == 0x55));
        // NULL arguments.
        assert_eq!(
            memplan_last_error(buffer.as_mut_ptr(), 16, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER
        );
        assert_eq!(
            memplan_last_error(null_mut(), 16, &mut length),
            MEMPLAN_ERROR_NULL_POINTER
        );
    }
    // None of the failures above replaced the message.
    assert_eq!(last_error(), "test: héllo");
}

#[test]
fn write_str_refuses_null_length_before_writing() {
    let mut buffer = [0x55 as c_char; 4];
    // SAFETY: a local buffer of 4 bytes.
    let result = unsafe { write_str("abc", buffer.as_mut_ptr(), 4, null_mut()) };
    assert_eq!(result.unwrap_err().status, MEMPLAN_ERROR_NULL_POINTER);
    assert!(buffer.iter().all(|&c| c == 0x55));
}

#[test]
fn a_panic_becomes_an_internal_error() {
    let status = guard("memplan_test", || panic!("boom {}", 42));
    expect_error(
        status,
        MEMPLAN_ERROR_INTERNAL,
        &["memplan_test: internal error", "panic: boom 42"],
    );
    let status = guard("memplan_test", || std::panic::panic_any(7u8));
    expect_error(status, MEMPLAN_ERROR_INTERNAL, &["(no message)"]);
}

#[test]
fn version_is_the_crate_version() {
    let (mut major, mut minor, mut patch) = (9, 9, 9);
    // SAFETY: local outputs, then NULL ones.
    unsafe {
        assert_eq!(
            memplan_version(&mut major, &mut minor, &mut patch),
            MEMPLAN_OK
        );
        assert_eq!(
            format!("{major}.{minor}.{patch}"),
            env!("CARGO_PKG_VERSION")
        );
        let mut untouched = 77;
        expect_error(
            memplan_version(&mut untouched, null_mut(), &mut patch),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_version", "`out_minor` is NULL"],
        );
        assert_eq!(untouched, 77, "nothing written on failure");
        expect_error(
            memplan_version(null_mut(), &mut minor, &mut patch),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_major`"],
        );
        expect_error(
            memplan_version(&mut major, &mut minor, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_patch`"],
        );
    }
}

#[test]
fn free_functions_accept_null() {
    // SAFETY: NULL is documented as accepted.
    unsafe {
        assert_eq!(memplan_problem_free(null_mut()), MEMPLAN_OK);
        assert_eq!(memplan_options_free(null_mut()), MEMPLAN_OK);
        assert_eq!(memplan_solution_free(null_mut()), MEMPLAN_OK);
        assert_eq!(memplan_cancel_free(null_mut()), MEMPLAN_OK);
    }
}
