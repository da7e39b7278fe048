//! Several memories (pools, banks): a list of pools with capacities,
//! fastest first; `memplan_solve_pools` gives every buffer a pool and an
//! offset in it (pins from `memplan_problem_set_pool`), minimising the
//! bytes × time outside the first pool, then outside the first two, and so
//! on (docs/pools.md).

use std::ffi::{c_char, CStr};

use planner::pools::{Pool, PoolSolution, PoolSolveError};
use planner::NotFoundReason;

use crate::options::{memplan_options, run_failure};
use crate::problem::memplan_problem;
use crate::status::{
    from_mut_ptr, from_ptr, guard, memplan_status, slice_mut, write_out, Failure,
    MEMPLAN_ERROR_BUFFER_TOO_SMALL, MEMPLAN_ERROR_INVALID_ARGUMENT, MEMPLAN_ERROR_OUT_OF_RANGE,
    MEMPLAN_INFEASIBLE, MEMPLAN_NOT_FOUND,
};

/// The pools of a pooled problem, fastest first, made by
/// `memplan_pools_new` and freed by `memplan_pools_free`.
///
/// Thread safety: as a problem (read-only use from any number of threads;
/// adding needs it to itself).
#[allow(non_camel_case_types)]
pub struct memplan_pools {
    pools: Vec<Pool>,
}

/// A pooled plan, made by `memplan_solve_pools`, freed by
/// `memplan_pool_solution_free`. Read-only.
#[allow(non_camel_case_types)]
pub struct memplan_pool_solution {
    solution: PoolSolution,
    /// The report as JSON (`memplan solve --pools --json`).
    json: String,
}

/// Creates an empty list of pools and stores it in `*out_pools`; free it
/// with `memplan_pools_free`. On failure `*out_pools` is set to NULL (when
/// `out_pools` is not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`out_pools`).
#[no_mangle]
pub unsafe extern "C" fn memplan_pools_new(out_pools: *mut *mut memplan_pools) -> memplan_status {
    guard("memplan_pools_new", || {
        let pools = Box::into_raw(Box::new(memplan_pools { pools: Vec::new() }));
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_pools, pools, "out_pools") }.inspect_err(|_| {
            // SAFETY: just made, never shared.
            drop(unsafe { Box::from_raw(pools) });
        })
    })
}

/// Frees pools made by `memplan_pools_new`. NULL is accepted and does
/// nothing.
///
/// Errors: none.
#[no_mangle]
pub unsafe extern "C" fn memplan_pools_free(pools: *mut memplan_pools) -> memplan_status {
    guard("memplan_pools_free", || {
        if !pools.is_null() {
            // SAFETY: made by `memplan_pools_new`, freed once.
            drop(unsafe { Box::from_raw(pools) });
        }
        Ok(())
    })
}

/// Appends a pool (the next in order of preference): its `name` (UTF-8,
/// unique, non-empty), `capacity` in bytes (positive) and `alignment` of
/// every offset in it (positive; 1 for none). Checked when used.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`pools`, `name`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (`name` not UTF-8).
#[no_mangle]
pub unsafe extern "C" fn memplan_pools_add(
    pools: *mut memplan_pools,
    name: *const c_char,
    capacity: u64,
    alignment: u64,
) -> memplan_status {
    guard("memplan_pools_add", || {
        // SAFETY: the caller passes NULL or pools of ours, to itself.
        let pools = unsafe { from_mut_ptr(pools, "pools")? };
        if name.is_null() {
            return Err(Failure::null("name"));
        }
        // SAFETY: non-null; the caller passes a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| {
            Failure::new(MEMPLAN_ERROR_INVALID_ARGUMENT, "the pool name is not UTF-8")
        })?;
        pools
            .pools
            .push(Pool::new(name, capacity).aligned(alignment));
        Ok(())
    })
}

/// Shares the buffers of `problem` out among `pools` with the options'
/// pool strategy (`memplan_options_set_pool_strategy`), time limit,
/// effort, seed, hints switch and cancel handle (the solver, stable mode
/// and capacity are not used), and stores the plan in
/// `*out_solution`; free it with `memplan_pool_solution_free`. Every plan
/// is checked by the per-pool validator first.
///
/// Returns `MEMPLAN_INFEASIBLE` when it is proven that the buffers cannot
/// all be placed, `MEMPLAN_NOT_FOUND` when no assignment was found (one
/// may exist); the message says why. On any status other than
/// `MEMPLAN_OK`, `*out_solution` is set to NULL (when not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER`, `MEMPLAN_ERROR_INVALID_PROBLEM`
/// (the message names the buffer or pool by index),
/// `MEMPLAN_ERROR_OUT_OF_MEMORY`, `MEMPLAN_ERROR_INTERNAL`.
#[no_mangle]
pub unsafe extern "C" fn memplan_solve_pools(
    problem: *const memplan_problem,
    pools: *const memplan_pools,
    options: *const memplan_options,
    out_solution: *mut *mut memplan_pool_solution,
) -> memplan_status {
    guard("memplan_solve_pools", || {
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_solution, std::ptr::null_mut(), "out_solution")? };
        // SAFETY: the caller passes NULL or live objects of ours.
        let (problem, pools, options) = unsafe {
            (
                from_ptr(problem, "problem")?,
                from_ptr(pools, "pools")?,
                from_ptr(options, "options")?,
            )
        };
        let pooled = problem.build_pooled(&pools.pools)?;
        let report = options
            .request
            .run_pools(&pooled, &options.control())
            .map_err(run_failure)?;
        let json = report.json(&pooled).to_string();
        let solution = report.outcome.map_err(|e| {
            let status = match &e {
                PoolSolveError::Infeasible(_) => MEMPLAN_INFEASIBLE,
                PoolSolveError::NotFound {
                    reason: NotFoundReason::ProvenInfeasible,
                    ..
                } => MEMPLAN_INFEASIBLE,
                PoolSolveError::NotFound { .. } => MEMPLAN_NOT_FOUND,
            };
            Failure::new(status, e.to_string())
        })?;
        let solved = Box::into_raw(Box::new(memplan_pool_solution { solution, json }));
        // SAFETY: checked writable above.
        unsafe { write_out(out_solution, solved, "out_solution") }
    })
}

/// Frees a solution made by `memplan_solve_pools`. NULL is accepted.
///
/// Errors: none.
#[no_mangle]
pub unsafe extern "C" fn memplan_pool_solution_free(
    solution: *mut memplan_pool_solution,
) -> memplan_status {
    guard("memplan_pool_solution_free", || {
        if !solution.is_null() {
            // SAFETY: made by `memplan_solve_pools`, freed once.
            drop(unsafe { Box::from_raw(solution) });
        }
        Ok(())
    })
}

/// Copies each buffer's pool (index into the pools, fastest first) to
/// `out_pools` and its offset in that pool to `out_offsets`, both arrays of
/// `count` elements, the buffer count.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER`, `MEMPLAN_ERROR_BUFFER_TOO_SMALL`
/// (`count` below the buffer count: nothing written).
#[no_mangle]
pub unsafe extern "C" fn memplan_pool_solution_assignment(
    solution: *const memplan_pool_solution,
    out_pools: *mut u32,
    out_offsets: *mut u64,
    count: usize,
) -> memplan_status {
    guard("memplan_pool_solution_assignment", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        let plan = &solution.solution.plan;
        let n = plan.offsets().len();
        if count < n {
            return Err(Failure::new(
                MEMPLAN_ERROR_BUFFER_TOO_SMALL,
                format!("{n} buffers do not fit in arrays of {count}"),
            ));
        }
        // SAFETY: the caller passes arrays of `count` writable elements.
        let (pools, offsets) = unsafe {
            (
                slice_mut(out_pools, n, "out_pools")?,
                slice_mut(out_offsets, n, "out_offsets")?,
            )
        };
        for (out, p) in pools.iter_mut().zip(plan.pools()) {
            *out = p.0;
        }
        offsets.copy_from_slice(plan.offsets());
        Ok(())
    })
}

/// Stores what pool `pool` holds: the number of buffers in
/// `*out_buffers` and the highest address used (0 when empty, at most the
/// capacity) in `*out_makespan`.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER`, `MEMPLAN_ERROR_OUT_OF_RANGE`
/// (`pool` not below the pool count).
#[no_mangle]
pub unsafe extern "C" fn memplan_pool_solution_usage(
    solution: *const memplan_pool_solution,
    pool: usize,
    out_buffers: *mut usize,
    out_makespan: *mut u64,
) -> memplan_status {
    guard("memplan_pool_solution_usage", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        let usage = solution.solution.usage.get(pool).ok_or_else(|| {
            Failure::new(
                MEMPLAN_ERROR_OUT_OF_RANGE,
                format!(
                    "pool index {pool} is out of range (there are {})",
                    solution.solution.usage.len()
                ),
            )
        })?;
        // SAFETY: the caller passes NULL or writable pointers.
        unsafe {
            write_out(out_buffers, usage.buffers, "out_buffers")?;
            write_out(out_makespan, usage.makespan, "out_makespan")
        }
    })
}

/// Stores in `*out_spill` the bytes × time the plan places outside the
/// first `pools` pools (1 for the objective's first term; `pools` from 1 to
/// the pool count − 1), saturated at `UINT64_MAX`.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER`, `MEMPLAN_ERROR_OUT_OF_RANGE`.
#[no_mangle]
pub unsafe extern "C" fn memplan_pool_solution_spill(
    solution: *const memplan_pool_solution,
    pools: usize,
    out_spill: *mut u64,
) -> memplan_status {
    guard("memplan_pool_solution_spill", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        let spill = &solution.solution.spill.0;
        let value = pools
            .checked_sub(1)
            .and_then(|k| spill.get(k))
            .ok_or_else(|| {
                Failure::new(
                    MEMPLAN_ERROR_OUT_OF_RANGE,
                    format!(
                        "spill outside the first {pools} pools: expected 1 to {}",
                        spill.len()
                    ),
                )
            })?;
        let value = u64::try_from(*value).unwrap_or(u64::MAX);
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_spill, value, "out_spill") }
    })
}

/// Copies the pooled solve's report, one JSON object (NUL-terminated), to
/// `buffer` (`capacity` bytes) and its length without the NUL to
/// `*length`: the same object as `memplan solve --pools --json` prints.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`solution`, `length`; `buffer` with
/// a `capacity` above 0), `MEMPLAN_ERROR_BUFFER_TOO_SMALL` (the text is cut
/// to fit, NUL-terminated).
#[no_mangle]
pub unsafe extern "C" fn memplan_pool_solution_json(
    solution: *const memplan_pool_solution,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> memplan_status {
    guard("memplan_pool_solution_json", || {
        // SAFETY: the caller passes NULL or a live solution of ours.
        let solution = unsafe { from_ptr(solution, "solution")? };
        // SAFETY: the caller passes a writable `buffer` of `capacity` bytes
        // (or NULL) and a writable `length` (or NULL).
        unsafe { crate::status::write_str(&solution.json, buffer, capacity, length) }
    })
}
