//! Building a problem: buffers with sizes, lifetimes in the caller's
//! convention, alignments and fixed offsets. The library checks its rules
//! when the problem is used ([`memplan_problem_check`], solve, validate).

use planner::{Buffer, BufferIdx, Gap, Gaps, Lifetimes, Problem, ProblemError};

use crate::status::{
    from_mut_ptr, from_ptr, guard, memplan_status, slice, write_out, Failure,
    MEMPLAN_ERROR_INVALID_ARGUMENT, MEMPLAN_ERROR_INVALID_PROBLEM, MEMPLAN_ERROR_OUT_OF_MEMORY,
    MEMPLAN_ERROR_OUT_OF_RANGE,
};

/// How the start and end times of buffers are read: one of the
/// `MEMPLAN_LIFETIMES_*` values.
#[allow(non_camel_case_types)]
pub type memplan_lifetimes = i32;

/// A buffer is live during `[start, end)`: from `start` up to, not including,
/// `end` (MiniMalloc's convention).
pub const MEMPLAN_LIFETIMES_HALF_OPEN: memplan_lifetimes = 0;
/// A buffer is live during `[start, end]`, both included (XLA, ExecuTorch):
/// read as `[start, end + 1)`.
pub const MEMPLAN_LIFETIMES_INCLUSIVE: memplan_lifetimes = 1;
/// A buffer is live during `(start, end)` in continuous time (idealloc):
/// it conflicts with exactly the buffers a `[start, end)` one does, and is
/// read as such.
pub const MEMPLAN_LIFETIMES_EXCLUSIVE: memplan_lifetimes = 2;

/// Most buffers a problem may hold.
const MAX_BUFFERS: usize = u32::MAX as usize - 1;

/// A planning problem under construction: buffers (numbered from 0 in the
/// order they are added) with their sizes, lifetimes, alignments and fixed
/// offsets. Created by `memplan_problem_new`, freed by `memplan_problem_free`.
///
/// Thread safety: any number of threads may use one problem at the same time
/// in functions that take it as `const` (solve, validate, check, counts);
/// the functions that change it (add, set) or free it need it to themselves.
#[allow(non_camel_case_types)]
pub struct memplan_problem {
    lifetimes: Lifetimes,
    /// Half-open lifetimes; ids are the indices.
    buffers: Vec<Buffer>,
    /// Gaps added, by buffer index, in half-open time (checked when the
    /// problem is used).
    gaps: Vec<(BufferIdx, Gap)>,
    /// Preferred offsets by index; empty until one is set (then padded
    /// with `None` up to the buffers when the problem is built).
    hints: Vec<Option<u64>>,
    /// Pool pins by index (for `memplan_solve_pools`); empty until one is
    /// set, like `hints`.
    pins: Vec<Option<u32>>,
}

impl memplan_problem {
    /// The library's problem with `capacity`, after its checks.
    pub(crate) fn build(&self, capacity: Option<u64>) -> Result<Problem, Failure> {
        let mut buffers = Vec::new();
        buffers
            .try_reserve_exact(self.buffers.len())
            .map_err(|_| out_of_memory(self.buffers.len()))?;
        buffers.extend(self.buffers.iter().cloned());
        let gaps = Gaps::new(buffers.len(), self.gaps.iter().copied())
            .map_err(|e| problem_failure(e.into()))?;
        let problem = Problem::new_with_gaps(buffers, gaps, capacity).map_err(problem_failure)?;
        if self.hints.is_empty() {
            return Ok(problem);
        }
        let mut hints = self.hints.clone();
        hints.resize(self.buffers.len(), None);
        problem.with_hints(&hints).map_err(problem_failure)
    }

    /// The library's pooled problem over `pools`, after its checks (the
    /// hints are not used with pools).
    pub(crate) fn build_pooled(
        &self,
        pools: &[planner::pools::Pool],
    ) -> Result<planner::pools::PoolProblem, Failure> {
        if !self.gaps.is_empty() {
            return Err(Failure::new(
                MEMPLAN_ERROR_INVALID_PROBLEM,
                "gaps are not supported with pools (yet)",
            ));
        }
        let mut buffers = Vec::new();
        buffers
            .try_reserve_exact(self.buffers.len())
            .map_err(|_| out_of_memory(self.buffers.len()))?;
        buffers.extend(self.buffers.iter().cloned());
        let mut pins: Vec<Option<planner::pools::PoolIdx>> = self
            .pins
            .iter()
            .map(|p| p.map(planner::pools::PoolIdx))
            .collect();
        pins.resize(self.buffers.len(), None);
        planner::pools::PoolProblem::new(buffers, pins, pools.to_vec()).map_err(|e| {
            let message = match (e.buffer(), e.pool()) {
                (Some(b), _) => format!("buffer {}: {e}", b.0),
                (None, Some(p)) => format!("pool {}: {e}", p.0),
                (None, None) => e.to_string(),
            };
            Failure::new(MEMPLAN_ERROR_INVALID_PROBLEM, message)
        })
    }

    /// Number of buffers.
    pub(crate) fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Records a gap of buffer `index` given in the problem's convention.
    fn add_gap(
        &mut self,
        index: usize,
        start: u64,
        end: u64,
        window: Option<(u64, u64)>,
    ) -> Result<(), Failure> {
        self.buffer_mut(index)?;
        let (start, end) = self.lifetimes.to_half_open(start, end).ok_or_else(|| {
            Failure::new(
                MEMPLAN_ERROR_INVALID_PROBLEM,
                format!(
                    "buffer {index}: gap end {end} is the largest time; \
                     it has no end in half-open time"
                ),
            )
        })?;
        self.gaps
            .try_reserve(1)
            .map_err(|_| out_of_memory(self.gaps.len() + 1))?;
        self.gaps
            .push((BufferIdx(index as u32), Gap { start, end, window }));
        Ok(())
    }

    fn buffer_mut(&mut self, index: usize) -> Result<&mut Buffer, Failure> {
        let count = self.buffers.len();
        self.buffers.get_mut(index).ok_or_else(|| {
            Failure::new(
                MEMPLAN_ERROR_OUT_OF_RANGE,
                format!("buffer index {index} is out of range (the problem has {count} buffers)"),
            )
        })
    }
}

fn out_of_memory(count: usize) -> Failure {
    Failure::new(
        MEMPLAN_ERROR_OUT_OF_MEMORY,
        format!("cannot reserve memory for {count} buffers"),
    )
}

/// The library's problem error, naming buffers by index.
fn problem_failure(error: ProblemError) -> Failure {
    let message = match &error {
        ProblemError::FixedOverlap { first, second, .. } => format!(
            "buffers {} and {}: both fixed, they overlap in time and address",
            first.0, second.0
        ),
        ProblemError::Gap { buffer, error, .. } => format!("buffer {}: {error}", buffer.0),
        _ => match error.buffer() {
            Some(b) => format!("buffer {}: {error}", b.0),
            None => error.to_string(),
        },
    };
    Failure::new(MEMPLAN_ERROR_INVALID_PROBLEM, message)
}

fn lifetimes(value: memplan_lifetimes) -> Result<Lifetimes, Failure> {
    match value {
        MEMPLAN_LIFETIMES_HALF_OPEN => Ok(Lifetimes::HalfOpen),
        MEMPLAN_LIFETIMES_INCLUSIVE => Ok(Lifetimes::Inclusive),
        MEMPLAN_LIFETIMES_EXCLUSIVE => Ok(Lifetimes::Exclusive),
        _ => Err(Failure::new(
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            format!(
                "unknown lifetime convention {value} (MEMPLAN_LIFETIMES_HALF_OPEN = 0, \
                 MEMPLAN_LIFETIMES_INCLUSIVE = 1, MEMPLAN_LIFETIMES_EXCLUSIVE = 2)"
            ),
        )),
    }
}

/// Creates an empty problem whose buffers' times follow `lifetimes` (one of
/// `MEMPLAN_LIFETIMES_*`), and stores it in `*out_problem`; free it with
/// `memplan_problem_free`. On failure `*out_problem` is set to NULL (when
/// `out_problem` is not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`out_problem`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (unknown `lifetimes`).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_new(
    lifetimes_convention: memplan_lifetimes,
    out_problem: *mut *mut memplan_problem,
) -> memplan_status {
    guard("memplan_problem_new", || {
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_problem, std::ptr::null_mut(), "out_problem")? };
        let problem = memplan_problem {
            lifetimes: lifetimes(lifetimes_convention)?,
            buffers: Vec::new(),
            gaps: Vec::new(),
            hints: Vec::new(),
            pins: Vec::new(),
        };
        // SAFETY: checked writable above.
        unsafe { write_out(out_problem, Box::into_raw(Box::new(problem)), "out_problem") }
    })
}

/// Frees a problem made by `memplan_problem_new`. NULL is accepted and does
/// nothing (returns `MEMPLAN_OK`), like `free(NULL)`. The problem must not be
/// used afterwards; solutions made from it stay valid.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_free(problem: *mut memplan_problem) -> memplan_status {
    guard("memplan_problem_free", || {
        if !problem.is_null() {
            // SAFETY: made by `Box::into_raw` in `memplan_problem_new`, and
            // the caller gives up its use.
            drop(unsafe { Box::from_raw(problem) });
        }
        Ok(())
    })
}

/// Appends `count` buffers to the problem: buffer `i` of the call has size
/// `sizes[i]` bytes and lifetime (`starts[i]`, `ends[i]`) in the problem's
/// lifetime convention. They are numbered after the buffers already present
/// (the first buffer of a problem is 0); alignment 1, not fixed. The arrays
/// hold `count` elements each; with `count` 0 they may be NULL.
///
/// Sizes and times are passed to the library as they are: its rules (e.g. a
/// non-empty lifetime) are checked when the problem is used. Zero sizes are
/// taken if the library version accepts them (see docs/formats.md), and refused
/// with `MEMPLAN_ERROR_INVALID_PROBLEM` when the problem is used otherwise.
///
/// All or nothing: on failure no buffer is added.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`, or an array with a
/// `count` above 0), `MEMPLAN_ERROR_INVALID_ARGUMENT` (a misaligned array),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (more than 4294967294 buffers in all),
/// `MEMPLAN_ERROR_INVALID_PROBLEM` (an inclusive end of 2^64 - 1, whose
/// half-open end overflows), `MEMPLAN_ERROR_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_add_buffers(
    problem: *mut memplan_problem,
    count: usize,
    sizes: *const u64,
    starts: *const u64,
    ends: *const u64,
) -> memplan_status {
    guard("memplan_problem_add_buffers", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        // SAFETY: the caller passes arrays of `count` elements (or NULL).
        let (sizes, starts, ends) = unsafe {
            (
                slice(sizes, count, "sizes")?,
                slice(starts, count, "starts")?,
                slice(ends, count, "ends")?,
            )
        };
        let first = problem.buffers.len();
        if count > MAX_BUFFERS - first {
            return Err(Failure::new(
                MEMPLAN_ERROR_OUT_OF_RANGE,
                format!(
                    "{count} more buffers would make {} (at most {MAX_BUFFERS})",
                    first as u128 + count as u128
                ),
            ));
        }
        let mut added = Vec::new();
        added
            .try_reserve_exact(count)
            .map_err(|_| out_of_memory(count))?;
        problem
            .buffers
            .try_reserve(count)
            .map_err(|_| out_of_memory(first + count))?;
        for (i, ((&size, &start), &end)) in sizes.iter().zip(starts).zip(ends).enumerate() {
            let index = first + i;
            let (start, end) = problem.lifetimes.to_half_open(start, end).ok_or_else(|| {
                Failure::new(
                    MEMPLAN_ERROR_INVALID_PROBLEM,
                    format!(
                        "buffer {index}: inclusive end {end} is the largest time; \
                         it has no end in half-open time"
                    ),
                )
            })?;
            added.push(Buffer::new(index.to_string(), start, end, size));
        }
        problem.buffers.append(&mut added);
        Ok(())
    })
}

/// Sets the alignment of buffer `index`: its offset must be a multiple of
/// `alignment` (default 1). An alignment of 0 is refused when the problem is
/// used (`MEMPLAN_ERROR_INVALID_PROBLEM`).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`index` not below the buffer count).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_set_alignment(
    problem: *mut memplan_problem,
    index: usize,
    alignment: u64,
) -> memplan_status {
    guard("memplan_problem_set_alignment", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.buffer_mut(index)?.alignment = alignment;
        Ok(())
    })
}

/// Fixes buffer `index` at `offset`: every plan keeps it there (a buffer
/// placed beforehand, e.g. by another allocator). The offset must be a
/// multiple of the buffer's alignment and must not overlap another fixed
/// buffer alive at the same time; both are checked when the problem is used.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`index` not below the buffer count).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_set_fixed_offset(
    problem: *mut memplan_problem,
    index: usize,
    offset: u64,
) -> memplan_status {
    guard("memplan_problem_set_fixed_offset", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.buffer_mut(index)?.fixed_offset = Some(offset);
        Ok(())
    })
}

/// Adds a gap to buffer `index`'s lifetime: during (`start`, `end`), in the
/// problem's lifetime convention, the buffer occupies no address
/// (MiniMalloc's `gaps`, entry `start-end`). Buffers conflict only when,
/// at some instant, what they occupy intersects. A gap must lie within the
/// lifetime, be non-empty and not overlap another gap of the buffer;
/// checked when the problem is used (`MEMPLAN_ERROR_INVALID_PROBLEM`).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`index` not below the buffer count),
/// `MEMPLAN_ERROR_INVALID_PROBLEM` (an inclusive end of 2^64 - 1),
/// `MEMPLAN_ERROR_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_add_gap(
    problem: *mut memplan_problem,
    index: usize,
    start: u64,
    end: u64,
) -> memplan_status {
    guard("memplan_problem_add_gap", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.add_gap(index, start, end, None)
    })
}

/// Adds a gap with a window to buffer `index`'s lifetime: during (`start`,
/// `end`), in the problem's lifetime convention, the buffer occupies only
/// `[offset + window_start, offset + window_end)` of its range (MiniMalloc's
/// `start-end@window_start:window_end`; e.g. a buffer that shrinks). Besides
/// `memplan_problem_add_gap`'s rules, `window_start < window_end <= size`
/// is checked when the problem is used.
///
/// Errors: as `memplan_problem_add_gap`.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_add_gap_window(
    problem: *mut memplan_problem,
    index: usize,
    start: u64,
    end: u64,
    window_start: u64,
    window_end: u64,
) -> memplan_status {
    guard("memplan_problem_add_gap_window", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.add_gap(index, start, end, Some((window_start, window_end)))
    })
}

/// Gives buffer `index` a preferred offset (a hint, as MiniMalloc's `hint`
/// column): solvers try it first, and `memplan_options_set_stable` keeps
/// as many buffers at their hints as it can. Not a constraint. The hint
/// must be a multiple of the buffer's alignment and equal its fixed offset
/// if it has one; checked when the problem is used.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`index` not below the buffer count).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_set_hint(
    problem: *mut memplan_problem,
    index: usize,
    hint: u64,
) -> memplan_status {
    guard("memplan_problem_set_hint", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.buffer_mut(index)?;
        if problem.hints.len() <= index {
            let len = problem.buffers.len();
            problem
                .hints
                .try_reserve_exact(len - problem.hints.len())
                .map_err(|_| out_of_memory(len))?;
            problem.hints.resize(len, None);
        }
        problem.hints[index] = Some(hint);
        Ok(())
    })
}

/// Pins buffer `index` to pool `pool` (an index into the pools given to
/// `memplan_solve_pools`, fastest first): that function keeps it there.
/// `memplan_solve` ignores pins. A fixed buffer must be pinned when there
/// are several pools; an unknown pool is refused when the problem is used.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`index` not below the buffer count, or
/// `pool` above 4294967294).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_set_pool(
    problem: *mut memplan_problem,
    index: usize,
    pool: usize,
) -> memplan_status {
    guard("memplan_problem_set_pool", || {
        // SAFETY: the caller passes NULL or a problem of ours, to itself.
        let problem = unsafe { from_mut_ptr(problem, "problem")? };
        problem.buffer_mut(index)?;
        let pool = u32::try_from(pool)
            .ok()
            .filter(|&p| p != u32::MAX)
            .ok_or_else(|| {
                Failure::new(
                    MEMPLAN_ERROR_OUT_OF_RANGE,
                    format!("pool index {pool} is out of range"),
                )
            })?;
        if problem.pins.len() <= index {
            let len = problem.buffers.len();
            problem
                .pins
                .try_reserve_exact(len - problem.pins.len())
                .map_err(|_| out_of_memory(len))?;
            problem.pins.resize(len, None);
        }
        problem.pins[index] = Some(pool);
        Ok(())
    })
}

/// Stores the number of buffers of the problem in `*out_count`.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`, `out_count`).
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_buffer_count(
    problem: *const memplan_problem,
    out_count: *mut usize,
) -> memplan_status {
    guard("memplan_problem_buffer_count", || {
        // SAFETY: the caller passes NULL or a live problem of ours.
        let problem = unsafe { from_ptr(problem, "problem")? };
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_count, problem.len(), "out_count") }
    })
}

/// Checks the problem against the library's rules, as solve and validate do
/// first: every lifetime non-empty, every alignment positive, fixed offsets
/// multiples of their alignments and not overlapping each other, sizes
/// (with alignment padding and fixed offsets) summing below 2^64, and sizes
/// positive unless the library accepts zero sizes.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`),
/// `MEMPLAN_ERROR_INVALID_PROBLEM` (the message names the buffer index),
/// `MEMPLAN_ERROR_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_check(problem: *const memplan_problem) -> memplan_status {
    guard("memplan_problem_check", || {
        // SAFETY: the caller passes NULL or a live problem of ours.
        let problem = unsafe { from_ptr(problem, "problem")? };
        problem.build(None).map(drop)
    })
}

/// Stores the max load of the problem in `*out_max_load`: the most bytes
/// alive at one instant, a lower bound on the makespan of every plan.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`problem`, `out_max_load`),
/// `MEMPLAN_ERROR_INVALID_PROBLEM`, `MEMPLAN_ERROR_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn memplan_problem_max_load(
    problem: *const memplan_problem,
    out_max_load: *mut u64,
) -> memplan_status {
    guard("memplan_problem_max_load", || {
        // SAFETY: the caller passes NULL or a live problem of ours.
        let problem = unsafe { from_ptr(problem, "problem")? };
        if out_max_load.is_null() {
            return Err(Failure::null("out_max_load"));
        }
        let max_load = problem.build(None)?.max_load();
        // SAFETY: checked non-null; the caller passes a writable pointer.
        unsafe { write_out(out_max_load, max_load, "out_max_load") }
    })
}
