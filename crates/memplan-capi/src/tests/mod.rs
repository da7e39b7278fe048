//! Tests of the exported functions, called as C would call them: results,
//! every error path, and the plans checked by the library's validator.

mod pools;
mod problem;
mod solve;
mod status;
mod validate;

use std::ffi::c_char;
use std::ptr::null_mut;

use crate::*;

/// This thread's last error message.
fn last_error() -> String {
    let mut buffer = [0 as c_char; 1024];
    let mut length = 0usize;
    // SAFETY: a local buffer of its size and a local length.
    let status = unsafe { memplan_last_error(buffer.as_mut_ptr(), buffer.len(), &mut length) };
    assert_eq!(status, MEMPLAN_OK);
    let bytes: Vec<u8> = buffer[..length].iter().map(|&c| c as u8).collect();
    String::from_utf8(bytes).expect("UTF-8 message")
}

/// Asserts that `status` is `expected` and the last error mentions every
/// one of `words`.
#[track_caller]
fn expect_error(status: memplan_status, expected: memplan_status, words: &[&str]) {
    let message = last_error();
    assert_eq!(status, expected, "message: {message}");
    for word in words {
        assert!(message.contains(word), "`{word}` not in `{message}`");
    }
}

/// A problem of `(size, start, end)` buffers in convention `lifetimes`.
fn problem(lifetimes: memplan_lifetimes, buffers: &[(u64, u64, u64)]) -> Problem {
    let mut p = null_mut();
    // SAFETY: a local out-pointer.
    assert_eq!(
        unsafe { memplan_problem_new(lifetimes, &mut p) },
        MEMPLAN_OK
    );
    let sizes: Vec<u64> = buffers.iter().map(|b| b.0).collect();
    let starts: Vec<u64> = buffers.iter().map(|b| b.1).collect();
    let ends: Vec<u64> = buffers.iter().map(|b| b.2).collect();
    // SAFETY: arrays of `buffers.len()` elements.
    let status = unsafe {
        memplan_problem_add_buffers(
            p,
            buffers.len(),
            sizes.as_ptr(),
            starts.as_ptr(),
            ends.as_ptr(),
        )
    };
    assert_eq!(status, MEMPLAN_OK, "{}", last_error());
    Problem(p)
}

/// A problem with the library's buffers (half-open), alignments and fixed
/// offsets included.
fn from_library(library: &planner::Problem) -> Problem {
    let b = library.buffers();
    let p = problem(
        MEMPLAN_LIFETIMES_HALF_OPEN,
        &b.iter()
            .map(|b| (b.size, b.start, b.end))
            .collect::<Vec<_>>(),
    );
    for (i, b) in b.iter().enumerate() {
        // SAFETY: a live problem of ours.
        unsafe {
            assert_eq!(
                memplan_problem_set_alignment(p.0, i, b.alignment),
                MEMPLAN_OK
            );
            if let Some(offset) = b.fixed_offset {
                assert_eq!(memplan_problem_set_fixed_offset(p.0, i, offset), MEMPLAN_OK);
            }
        }
    }
    p
}

/// A problem that frees itself.
struct Problem(*mut memplan_problem);

impl Drop for Problem {
    fn drop(&mut self) {
        // SAFETY: made by `memplan_problem_new`, freed once.
        assert_eq!(unsafe { memplan_problem_free(self.0) }, MEMPLAN_OK);
    }
}

/// Options that free themselves.
struct Options(*mut memplan_options);

impl Options {
    /// Options for `solver` (by name) with `time_limit` seconds, if any.
    fn new(solver: &str, time_limit: Option<f64>) -> Self {
        let mut o = null_mut();
        // SAFETY: a local out-pointer, then the options just made and a
        // NUL-terminated name.
        unsafe {
            assert_eq!(memplan_options_new(&mut o), MEMPLAN_OK);
            let name = std::ffi::CString::new(solver).unwrap();
            assert_eq!(memplan_options_set_solver(o, name.as_ptr()), MEMPLAN_OK);
            if let Some(t) = time_limit {
                assert_eq!(memplan_options_set_time_limit(o, t), MEMPLAN_OK);
            }
        }
        Options(o)
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: made by `memplan_options_new`, freed once.
        assert_eq!(unsafe { memplan_options_free(self.0) }, MEMPLAN_OK);
    }
}

/// A solution that frees itself.
struct Solution(*mut memplan_solution);

impl Drop for Solution {
    fn drop(&mut self) {
        // SAFETY: made by `memplan_solve` (or NULL), freed once.
        assert_eq!(unsafe { memplan_solution_free(self.0) }, MEMPLAN_OK);
    }
}

/// Everything a solution says, read through the getters.
#[derive(Debug, Clone, PartialEq)]
struct Read {
    offsets: Vec<u64>,
    makespan: u64,
    max_load: u64,
    lower_bound: u64,
    optimal: bool,
    stopped: memplan_stopped,
    solver: String,
    seconds: f64,
}

impl Solution {
    fn read(&self) -> Read {
        let s = self.0;
        let mut count = 0usize;
        let mut read = Read {
            offsets: Vec::new(),
            makespan: 0,
            max_load: 0,
            lower_bound: 0,
            optimal: false,
            stopped: -1,
            solver: String::new(),
            seconds: -1.0,
        };
        let mut name = [0 as c_char; MEMPLAN_SOLVER_NAME_CAPACITY];
        let mut length = 0usize;
        // SAFETY: a live solution and local outputs of the sizes given.
        unsafe {
            assert_eq!(memplan_solution_buffer_count(s, &mut count), MEMPLAN_OK);
            read.offsets = vec![u64::MAX; count];
            assert_eq!(
                memplan_solution_offsets(s, read.offsets.as_mut_ptr(), count),
                MEMPLAN_OK
            );
            assert_eq!(memplan_solution_makespan(s, &mut read.makespan), MEMPLAN_OK);
            assert_eq!(memplan_solution_max_load(s, &mut read.max_load), MEMPLAN_OK);
            assert_eq!(
                memplan_solution_lower_bound(s, &mut read.lower_bound),
                MEMPLAN_OK
            );
            assert_eq!(memplan_solution_optimal(s, &mut read.optimal), MEMPLAN_OK);
            assert_eq!(memplan_solution_stopped(s, &mut read.stopped), MEMPLAN_OK);
            assert_eq!(memplan_solution_seconds(s, &mut read.seconds), MEMPLAN_OK);
            assert_eq!(
                memplan_solution_solver(s, name.as_mut_ptr(), name.len(), &mut length),
                MEMPLAN_OK
            );
        }
        read.solver = name[..length].iter().map(|&c| c as u8 as char).collect();
        read
    }
}

/// Solves; `Ok` with the solution, or `Err` with the status (the solution
/// pointer is then NULL).
fn solve(p: &Problem, o: &Options) -> Result<Solution, memplan_status> {
    let mut s = 0x1 as *mut memplan_solution;
    // SAFETY: live objects and a local out-pointer.
    let status = unsafe { memplan_solve(p.0, o.0, &mut s) };
    if status == MEMPLAN_OK {
        assert!(!s.is_null());
        Ok(Solution(s))
    } else {
        assert!(s.is_null(), "no solution on failure");
        Err(status)
    }
}
