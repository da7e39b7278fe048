//! Status codes, the calling thread's last error message, and the guard that
//! every exported function runs its body in: panics are caught there, so
//! none unwinds into C, and every failure leaves a message.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a call did: `MEMPLAN_OK` (0) on success; below 10, a negative answer
/// to a well-formed question (no plan within the capacity, an invalid plan);
/// 10 and above, an error. Every status but `MEMPLAN_OK` leaves a message for
/// `memplan_last_error`.
#[allow(non_camel_case_types)]
pub type memplan_status = i32;

/// Success.
pub const MEMPLAN_OK: memplan_status = 0;
/// `memplan_solve` with a capacity: no plan within it was found, but one may
/// exist (the time limit or a step limit ran out, or a heuristic's plan did
/// not fit). The message gives the reason and the best makespan seen.
pub const MEMPLAN_NOT_FOUND: memplan_status = 1;
/// `memplan_solve` with a capacity: proven that no plan fits in it.
pub const MEMPLAN_INFEASIBLE: memplan_status = 2;
/// `memplan_validate`: the plan breaks a rule; the message names the buffers
/// (by index) and the rule.
pub const MEMPLAN_INVALID_PLAN: memplan_status = 3;
/// A pointer argument that must not be NULL is NULL.
pub const MEMPLAN_ERROR_NULL_POINTER: memplan_status = 10;
/// An index or a count is out of range (a buffer index past the last buffer,
/// an array longer than memory can hold, more than 4294967294 buffers).
pub const MEMPLAN_ERROR_OUT_OF_RANGE: memplan_status = 11;
/// An argument has a value the function does not take: an unknown solver
/// name or lifetime convention, a negative or NaN time limit, a string that
/// is not UTF-8, a pointer not aligned for its type.
pub const MEMPLAN_ERROR_INVALID_ARGUMENT: memplan_status = 12;
/// The buffers break a rule of the problem (e.g. an empty lifetime, a zero
/// alignment, a fixed offset not a multiple of its alignment, two fixed
/// buffers that overlap); the message names the buffer by its index.
pub const MEMPLAN_ERROR_INVALID_PROBLEM: memplan_status = 13;
/// An output array or string is too short. Arrays: nothing is written.
/// Strings: as much as fits is written, NUL-terminated, and the full length
/// is reported.
pub const MEMPLAN_ERROR_BUFFER_TOO_SMALL: memplan_status = 14;
/// Memory for the arrays of the call could not be reserved.
pub const MEMPLAN_ERROR_OUT_OF_MEMORY: memplan_status = 15;
/// A bug in memplan: a panic was caught, or a solver returned a plan that the
/// validator refused. Please report it with the message.
pub const MEMPLAN_ERROR_INTERNAL: memplan_status = 16;

/// Why a call failed: its status and a message for `memplan_last_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) status: memplan_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: memplan_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// A NULL pointer for the argument `name`.
    pub(crate) fn null(name: &str) -> Self {
        Failure::new(
            MEMPLAN_ERROR_NULL_POINTER,
            format!("argument `{name}` is NULL"),
        )
    }
}

/// The result of a function body.
pub(crate) type Outcome = Result<(), Failure>;

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `message` as this thread's last error. Silently does nothing while
/// the thread is being torn down.
fn set_last_error(message: String) {
    let _ = LAST_ERROR.try_with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = message;
        }
    });
}

/// Runs `body` for the exported function `function`: its failure becomes a
/// status and this thread's last error (prefixed with the function's name);
/// a panic becomes `MEMPLAN_ERROR_INTERNAL`.
pub(crate) fn guard(function: &str, body: impl FnOnce() -> Outcome) -> memplan_status {
    match run(body) {
        Ok(()) => MEMPLAN_OK,
        Err(failure) => {
            set_last_error(format!("{function}: {}", failure.message));
            failure.status
        }
    }
}

/// Runs `body`, turning a panic into an internal failure. The panic's
/// payload is dropped under `catch_unwind` too: a payload whose destructor
/// panics must not unwind either.
pub(crate) fn run(body: impl FnOnce() -> Outcome) -> Outcome {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let message = panic_message(&*payload);
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Err(Failure::new(
                MEMPLAN_ERROR_INTERNAL,
                format!("internal error (a bug, please report it): panic: {message}"),
            ))
        }
    }
}

/// The text of a panic payload (`panic!` with a literal or a format).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// Copies the message of the last failed call on this thread into `buffer`
/// (NUL-terminated, cut to `capacity - 1` bytes at a UTF-8 character
/// boundary) and stores its full length in bytes, without the NUL, in
/// `*length`. The message is empty (length 0) when no call has failed on this
/// thread yet. Successful calls leave the message as it was, so read it right
/// after the failure.
///
/// This function never changes the last error, even when it fails itself:
/// `MEMPLAN_ERROR_NULL_POINTER` when `length` is NULL, or when `buffer` is
/// NULL while `capacity` is not 0; `MEMPLAN_ERROR_BUFFER_TOO_SMALL` when the
/// message and its NUL do not fit (`capacity` 0 with a NULL `buffer` asks
/// for the length alone).
///
/// Thread safety: each thread has its own last error.
#[no_mangle]
pub unsafe extern "C" fn memplan_last_error(
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> memplan_status {
    let outcome = run(|| {
        let message = LAST_ERROR
            .try_with(|last| last.try_borrow().map(|m| m.clone()).unwrap_or_default())
            .unwrap_or_default();
        // SAFETY: the caller passes a writable `buffer` of `capacity` bytes
        // (or NULL) and a writable `length` (or NULL).
        unsafe { write_str(&message, buffer, capacity, length) }
    });
    match outcome {
        Ok(()) => MEMPLAN_OK,
        Err(failure) => failure.status,
    }
}

/// Writes `s` to the caller's `buffer` of `capacity` bytes, snprintf-like:
/// NUL-terminated, cut at a character boundary when too long (then
/// `MEMPLAN_ERROR_BUFFER_TOO_SMALL`); the full length goes to `*length`.
///
/// # Safety
/// `buffer` is NULL or writable for `capacity` bytes; `length` is NULL or
/// writable.
pub(crate) unsafe fn write_str(
    s: &str,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Outcome {
    if length.is_null() {
        return Err(Failure::null("length"));
    }
    if buffer.is_null() && capacity != 0 {
        return Err(Failure::null("buffer"));
    }
    // SAFETY: checked non-null; the caller guarantees it is writable.
    unsafe { length.write_unaligned(s.len()) };
    if capacity == 0 {
        return Err(too_small(s.len(), capacity));
    }
    let mut n = s.len().min(capacity - 1);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: `buffer` holds `capacity > n` bytes, and `s` does not overlap
    // it (it is memplan's own string).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buffer.cast::<u8>(), n);
        buffer.add(n).write(0);
    }
    if n < s.len() {
        Err(too_small(s.len(), capacity))
    } else {
        Ok(())
    }
}

fn too_small(len: usize, capacity: usize) -> Failure {
    Failure::new(
        MEMPLAN_ERROR_BUFFER_TOO_SMALL,
        format!(
            "a string of {len} bytes and its NUL do not fit in {capacity} bytes (written cut short)"
        ),
    )
}

/// A shared reference from a pointer argument, or a NULL-pointer failure.
///
/// # Safety
/// `p` is NULL or points to a live `T` not mutated during `'a`.
pub(crate) unsafe fn from_ptr<'a, T>(p: *const T, name: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(name))
}

/// An exclusive reference from a pointer argument, or a NULL-pointer failure.
///
/// # Safety
/// `p` is NULL or points to a live `T` nobody else uses during `'a`.
pub(crate) unsafe fn from_mut_ptr<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::null(name))
}

/// The caller's array of `count` elements: NULL is taken for an empty array
/// only; a misaligned pointer or a count too large for memory is refused.
///
/// # Safety
/// `p` is NULL or points to `count` initialised `T`s, unchanged during `'a`.
pub(crate) unsafe fn slice<'a, T>(
    p: *const T,
    count: usize,
    name: &str,
) -> Result<&'a [T], Failure> {
    if count == 0 {
        return Ok(&[]);
    }
    check_array(p, count, name)?;
    // SAFETY: non-null, aligned, within isize::MAX bytes; the caller
    // guarantees `count` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, count) })
}

/// The caller's writable array of `count` elements (see [`slice`]).
///
/// # Safety
/// `p` is NULL or points to `count` writable `T`s nobody else uses during `'a`.
pub(crate) unsafe fn slice_mut<'a, T>(
    p: *mut T,
    count: usize,
    name: &str,
) -> Result<&'a mut [T], Failure> {
    if count == 0 {
        return Ok(&mut []);
    }
    check_array(p, count, name)?;
    // SAFETY: as in `slice`, and the caller gives exclusive access.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, count) })
}

fn check_array<T>(p: *const T, count: usize, name: &str) -> Outcome {
    if p.is_null() {
        return Err(Failure::new(
            MEMPLAN_ERROR_NULL_POINTER,
            format!("argument `{name}` is NULL with a count of {count}"),
        ));
    }
    if (p as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Failure::new(
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            format!(
                "argument `{name}` is not aligned to {} bytes",
                std::mem::align_of::<T>()
            ),
        ));
    }
    if count > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Failure::new(
            MEMPLAN_ERROR_OUT_OF_RANGE,
            format!("argument `{name}`: count {count} is larger than memory"),
        ));
    }
    Ok(())
}

/// Stores `value` in the caller's `*out`.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T, name: &str) -> Outcome {
    if out.is_null() {
        return Err(Failure::null(name));
    }
    // SAFETY: non-null and writable by the caller's contract; unaligned
    // writes are accepted for leniency (C callers pass `&local`).
    unsafe { out.write_unaligned(value) };
    Ok(())
}
