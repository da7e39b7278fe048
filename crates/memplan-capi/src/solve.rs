//! Solving a problem and reading the solution back.

use std::ffi::c_char;

use planner::request::Outcome;
use planner::{NotFoundReason, SolveError, Stopped};

use crate::options::{memplan_options, run_failure};
use crate::problem::memplan_problem;
use crate::status::{
    from_ptr, guard, memplan_status, slice_mut, write_out, write_str, Failure,
    MEMPLAN_ERROR_BUFFER_TOO_SMALL, MEMPLAN_INFEASIBLE, MEMPLAN_NOT_FOUND,
};

/// Bytes that hold the name of every solver and its NUL (see
/// `memplan_solution_solver`).
pub const MEMPLAN_SOLVER_NAME_CAPACITY: usize = 64;

/// Whether a solve was cut short: one of the `MEMPLAN_STOPPED_*` values.
#[allow(non_camel_case_types)]
pub type memplan_stopped = i32;

/// The solver finished: its plan is proven optimal, or it had no more to try
/// (a greedy solver, boxing's iterations, tela's step limit).
pub const MEMPLAN_STOPPED_NONE: memplan_stopped = 0;
/// The time limit ran out before the solver finished: the plan is the best
/// found so far, and a longer limit may give a better one. (`auto` without a
/// time limit has a 30 s safety cap; with a limit of 0 it runs the greedy
/// variants only.)
pub const MEMPLAN_STOPPED_TIME_LIMIT: memplan_stopped = 1;
/// The cancel handle was raised before the solver finished: the plan is the
/// best found so far.
pub const MEMPLAN_STOPPED_CANCELLED: memplan_stopped = 2;

/// A plan and what is known of it, made by `memplan_solve` and freed by
/// `memplan_solution_free`. It does not refer to the problem or the options:
/// those may be changed or freed while the solution is in use.
///
/// Thread safety: read-only; any number of threads may read one solution at
/// the same time.
#[allow(non_camel_case_types)]
pub struct memplan_solution {
    offsets: Vec<u64>,
    makespan: u64,
    max_load: u64,
    lower_bound: u64,
    optimal: bool,
    solver: String,
    stopped: memplan_stopped,
    seconds: f64,
    hints: usize,
    hints_kept: usize,
    /// The report as JSON (`memplan solve --json`).
    json: String,
}

/// The C value of the library's [`Stopped`].
fn stopped(stopped: Option<Stopped>) -> memplan_stopped {
    match stopped {
        None => MEMPLAN_STOPPED_NONE,
        Some(Stopped::TimeLimit) => MEMPLAN_STOPPED_TIME_LIMIT,
        Some(Stopped::Interrupted) => MEMPLAN_STOPPED_CANCELLED,
    }
}

/// Builds `problem` and runs the library's request of `options` on it
/// (which solves, checks the plan and reports).
fn solve(
    problem: &memplan_problem,
    options: &memplan_options,
) -> Result<memplan_solution, Failure> {
    let problem = problem.build(options.capacity)?;
    let report = options
        .request
        .run(&problem, &options.control())
        .map_err(run_failure)?;
    let json = report.json().to_string();
    let solution = match report.outcome {
        Outcome::Planned(solution) => solution,
        Outcome::NotFound(error) => return Err(not_found(&error, &report.solver)),
    };
    Ok(memplan_solution {
        makespan: solution.makespan,
        max_load: report.max_load,
        lower_bound: solution.lower_bound,
        optimal: solution.optimal,
        solver: report.solver,
        stopped: stopped(solution.stopped),
        seconds: report.seconds,
        hints: report.hints,
        hints_kept: report.hints_kept,
        offsets: solution.plan.offsets().to_vec(),
        json,
    })
}

/// `MEMPLAN_INFEASIBLE` (proven) or `MEMPLAN_NOT_FOUND`, naming the solver.
fn not_found(error: &SolveError, solver: &str) -> Failure {
    let SolveError::NotFound { reason, .. } = error;
    let status = if *reason == NotFoundReason::ProvenInfeasible {
        MEMPLAN_INFEASIBLE
    } else {
        MEMPLAN_NOT_FOUND
    };
    Failure::new(status, format!("solver {solver}: {error}"))
}

/// Plans `problem` with `options` and stores the solution in
/// `*out_solution`; free it with `memplan_solution_free`. Without a capacity
/// the solver minimises the makespan; with one (`memplan_options_set_capacity`)
/// it returns a plan that fits, or `MEMPLAN_NOT_FOUND` /
/// `MEMPLAN_INFEASIBLE` and no solution. Every plan is checked by the
/// independent validator before it is returned. Blocks the calling thread
/// until done; uses other threads of its own meanwhile. On any status other
/// than `MEMPLAN_OK`, `*out_solution` is set to NULL (when `out_solution` is
/// not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`, `options`,
/// `out_solution`), `MEMPLAN_ERROR_INVALID_PROBLEM` (the message names the
/// buffer), `MEMPLAN_ERROR_OUT_OF_MEMORY`, `MEMPLAN_ERROR_INTERNAL`.
#[no_mangle]
pub unsafe extern "C" fn memplan_solve(
    problem: *const memplan_problem,
    options: *const memplan_options,
    out_solution: *mut *mut memplan_solution,
) -> memplan_status {
    guard("memplan_solve", || {
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_solution, std::ptr::null_mut(), "out_solution")? };
        // SAFETY: the caller passes NULL or live objects of ours.
        let (problem, options) =
            unsafe { (from_ptr(problem, "problem")?, from_ptr(options, "options")?) };
        let solved = solve(problem, options)?;
        // SAFETY: checked writable above.
        unsafe {
            write_out(
                out_solution,
                Box::into_raw(Box::new(solved)),
                "out_solution",
            )
        }
    })
}

/// Frees a solution made by `memplan_solve`. NULL is accepted and does
/// nothing (returns `MEMPLAN_OK`). The solution must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_free(solution: *mut memplan_solution) -> memplan_status {
    guard("memplan_solution_free", || {
        if !solution.is_null() {
            // SAFETY: made by `Box::into_raw` in `memplan_solve`, and the
            // caller gives up its use.
            drop(unsafe { Box::from_raw(solution) });
        }
        Ok(())
    })
}

/// Stores the number of buffers (of offsets) of the solution in `*out_count`.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_count`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_buffer_count(
    solution: *const memplan_solution,
    out_count: *mut usize,
) -> memplan_status {
    guard("memplan_solution_buffer_count", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_count, solution.offsets.len(), "out_count") }
    })
}

/// Copies the offsets, in buffer order, to `offsets`, an array of `count`
/// elements: buffer `i` occupies `[offsets[i], offsets[i] + size_i)` during
/// its lifetime. `count` must be at least the buffer count; only that many
/// are written. With no buffers, `offsets` may be NULL.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`; `offsets` with a
/// `count` above 0), `MEMPLAN_ERROR_INVALID_ARGUMENT` (misaligned `offsets`),
/// `MEMPLAN_ERROR_BUFFER_TOO_SMALL` (`count` below the buffer count: nothing
/// is written).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_offsets(
    solution: *const memplan_solution,
    offsets: *mut u64,
    count: usize,
) -> memplan_status {
    guard("memplan_solution_offsets", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        let n = solution.offsets.len();
        if count < n {
            return Err(Failure::new(
                MEMPLAN_ERROR_BUFFER_TOO_SMALL,
                format!("{count} offsets do not hold the {n} buffers"),
            ));
        }
        // SAFETY: the caller passes `count` writable elements (or NULL).
        let out = unsafe { slice_mut(offsets, count, "offsets")? };
        out[..n].copy_from_slice(&solution.offsets);
        Ok(())
    })
}

/// Stores the makespan of the plan in `*out_makespan`: the highest
/// `offset + size` over the buffers (0 without buffers).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_makespan`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_makespan(
    solution: *const memplan_solution,
    out_makespan: *mut u64,
) -> memplan_status {
    guard("memplan_solution_makespan", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_makespan, solution.makespan, "out_makespan") }
    })
}

/// Stores the max load of the problem in `*out_max_load`: the most bytes
/// alive at one instant. The makespan minus the max load is the
/// fragmentation.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_max_load`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_max_load(
    solution: *const memplan_solution,
    out_max_load: *mut u64,
) -> memplan_status {
    guard("memplan_solution_max_load", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_max_load, solution.max_load, "out_max_load") }
    })
}

/// Stores in `*out_lower_bound` the best lower bound the solver proved on
/// every makespan: at least the max load (and the highest end of a fixed
/// buffer), higher when a search proved that lower capacities do not fit.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_lower_bound`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_lower_bound(
    solution: *const memplan_solution,
    out_lower_bound: *mut u64,
) -> memplan_status {
    guard("memplan_solution_lower_bound", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_lower_bound, solution.lower_bound, "out_lower_bound") }
    })
}

/// Stores in `*out_optimal` whether the plan is proven optimal: its makespan
/// equals the lower bound.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_optimal`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_optimal(
    solution: *const memplan_solution,
    out_optimal: *mut bool,
) -> memplan_status {
    guard("memplan_solution_optimal", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_optimal, solution.optimal, "out_optimal") }
    })
}

/// Stores in `*out_hints` the number of buffers with a hint, and in
/// `*out_kept` how many of them the plan places at their hint.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_hints`,
/// `out_kept`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_hints_kept(
    solution: *const memplan_solution,
    out_hints: *mut usize,
    out_kept: *mut usize,
) -> memplan_status {
    guard("memplan_solution_hints_kept", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or writable pointers.
        unsafe {
            write_out(out_hints, solution.hints, "out_hints")?;
            write_out(out_kept, solution.hints_kept, "out_kept")
        }
    })
}

/// Stores in `*out_stopped` whether the solve was cut short: one of the
/// `MEMPLAN_STOPPED_*` values.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_stopped`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_stopped(
    solution: *const memplan_solution,
    out_stopped: *mut memplan_stopped,
) -> memplan_status {
    guard("memplan_solution_stopped", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_stopped, solution.stopped, "out_stopped") }
    })
}

/// Stores in `*out_seconds` the wall-clock time the solver took, in seconds
/// (the problem's checks and the plan's validation excluded).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `out_seconds`).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_seconds(
    solution: *const memplan_solution,
    out_seconds: *mut f64,
) -> memplan_status {
    guard("memplan_solution_seconds", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_seconds, solution.seconds, "out_seconds") }
    })
}

/// Copies the name of the solver that found the plan to `buffer`
/// (NUL-terminated, `capacity` bytes) and its length in bytes, without the
/// NUL, to `*length`. For `auto` it names the member, e.g. `auto/search` or
/// `auto/greedy/size/first-fit`; otherwise the solver, e.g.
/// `greedy/size/first-fit`. A buffer of `MEMPLAN_SOLVER_NAME_CAPACITY` bytes
/// holds every name.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `length`; `buffer` with
/// a `capacity` above 0), `MEMPLAN_ERROR_BUFFER_TOO_SMALL` (the name is cut
/// to fit, NUL-terminated; `capacity` 0 with a NULL `buffer` asks for the
/// length alone).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_solver(
    solution: *const memplan_solution,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> memplan_status {
    guard("memplan_solution_solver", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes a writable `buffer` of `capacity` bytes
        // (or NULL) and a writable `length` (or NULL).
        unsafe { write_str(&solution.solver, buffer, capacity, length) }
    })
}

/// Copies the solve's report, one JSON object (NUL-terminated), to
/// `buffer` (`capacity` bytes) and its length in bytes, without the NUL, to
/// `*length`: the same object as `memplan solve --json` prints, for logs
/// and for comparing interfaces. Call it with `capacity` 0 and a NULL
/// `buffer` to learn the length first.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `length`; `buffer` with
/// a `capacity` above 0), `MEMPLAN_ERROR_BUFFER_TOO_SMALL` (the text is cut
/// to fit, NUL-terminated).
#[no_mangle]
pub unsafe extern "C" fn memplan_solution_json(
    solution: *const memplan_solution,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> memplan_status {
    guard("memplan_solution_json", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes a writable `buffer` of `capacity` bytes
        // (or NULL) and a writable `length` (or NULL).
        unsafe { write_str(&solution.json, buffer, capacity, length) }
    })
}
