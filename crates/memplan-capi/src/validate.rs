//! Checking a plan, as the command line's `validate` does.

use planner::{validate, Plan};

use crate::problem::memplan_problem;
use crate::status::{
    from_ptr, guard, memplan_status, slice, Failure, Outcome, MEMPLAN_INVALID_PLAN,
};

/// Checks `offsets` (in buffer order) as a plan of `problem`, with the
/// capacity if given.
///
/// # Safety
/// As for [`memplan_validate`].
unsafe fn check(
    problem: *const memplan_problem,
    offsets: *const u64,
    count: usize,
    capacity: Option<u64>,
) -> Outcome {
    // SAFETY: the caller passes NULL or a live problem of ours.
    let problem = unsafe { from_ptr(problem, "problem")? };
    // SAFETY: the caller passes `count` readable offsets (or NULL).
    let offsets = unsafe { slice(offsets, count, "offsets")? };
    let problem = problem.build(capacity)?;
    let mut plan = Vec::new();
    plan.try_reserve_exact(count).map_err(|_| {
        Failure::new(
            crate::status::MEMPLAN_ERROR_OUT_OF_MEMORY,
            format!("cannot reserve memory for {count} offsets"),
        )
    })?;
    plan.extend_from_slice(offsets);
    validate(&problem, &Plan::from_offsets(plan))
        .map_err(|e| Failure::new(MEMPLAN_INVALID_PLAN, format!("invalid plan: {e}")))
}

/// Checks that `offsets`, an array of `count` offsets in buffer order, is a
/// valid plan of `problem`: one offset per buffer, every offset a multiple of
/// its buffer's alignment, fixed buffers at their offsets, no address past
/// 2^64, and no two buffers alive at the same time sharing an address. The
/// check is independent of the solvers (an event sweep, O(n log n)).
///
/// Returns `MEMPLAN_OK` for a valid plan and `MEMPLAN_INVALID_PLAN` for an
/// invalid one (the message names the buffers by index, e.g. buffers `2`
/// and `5`, and the rule).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`; `offsets` with a
/// `count` above 0), `MEMPLAN_ERROR_INVALID_ARGUMENT` (misaligned
/// `offsets`), `MEMPLAN_ERROR_OUT_OF_RANGE` (`count` too large for memory),
/// `MEMPLAN_ERROR_INVALID_PROBLEM`, `MEMPLAN_ERROR_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn memplan_validate(
    problem: *const memplan_problem,
    offsets: *const u64,
    count: usize,
) -> memplan_status {
    // SAFETY: the caller's contract, as documented.
    guard("memplan_validate", || unsafe {
        check(problem, offsets, count, None)
    })
}

/// `memplan_validate` with a capacity: also checks that every buffer ends at
/// or below `capacity` bytes.
///
/// Errors: as `memplan_validate`.
#[no_mangle]
pub unsafe extern "C" fn memplan_validate_capacity(
    problem: *const memplan_problem,
    offsets: *const u64,
    count: usize,
    capacity: u64,
) -> memplan_status {
    // SAFETY: the caller's contract, as documented.
    guard("memplan_validate_capacity", || unsafe {
        check(problem, offsets, count, Some(capacity))
    })
}
