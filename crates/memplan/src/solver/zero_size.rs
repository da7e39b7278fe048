//! Zero-size buffers: ExecuTorch and other compilers emit empty tensors,
//! which must get an offset like any other but occupy no address range.
//!
//! They conflict with nothing and count for nothing in the max load. A free
//! one gets offset 0 (a multiple of every alignment); a fixed one keeps its
//! offset, and like every buffer it must end (at `offset + 0`) within the
//! capacity and counts in the makespan `max(offset + size)`.
//!
//! Solvers never see them: [`solve_apart`] (called by
//! [`Solver::solve`](crate::Solver::solve)) plans the other buffers as a
//! problem of their own and scatters the offsets back, so every solver
//! handles them the same way. The validator skips them when it looks for
//! overlaps ([`crate::geometry::overlap::first_overlap`]).

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solver::solution::{NotFoundReason, Solution, SolveError};

/// Plans `problem` by planning its buffers of positive size with `solve`,
/// then giving each zero-size buffer its fixed offset or 0. Without
/// zero-size buffers, this is `solve(problem)`.
///
/// The result's makespan and lower bound include the fixed offsets of
/// zero-size buffers; if one lies past the capacity, no plan exists and the
/// error says so ([`NotFoundReason::ProvenInfeasible`]). Progress published
/// by `solve` is that of the positive buffers alone.
pub fn solve_apart(
    problem: &Problem,
    solve: impl FnOnce(&Problem) -> Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    if !has_zero_size(problem) {
        return solve(problem);
    }
    let (positive, kept) = positive_part(problem);
    // The highest end among zero-size buffers: their fixed offsets (free
    // ones end at 0).
    let zero_end = problem
        .buffers()
        .iter()
        .filter(|b| b.size == 0)
        .filter_map(|b| b.fixed_offset)
        .max()
        .unwrap_or(0);
    match solve(&positive) {
        Ok(solution) => {
            let plan = scatter(problem, &kept, &solution.plan);
            let makespan = solution.makespan.max(zero_end);
            let lower_bound = solution.lower_bound.max(zero_end);
            if let Some(capacity) = problem.capacity.filter(|&c| makespan > c) {
                return Err(SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::ProvenInfeasible,
                    best_makespan: Some(makespan),
                    counters: solution.counters,
                });
            }
            Ok(Solution {
                plan,
                makespan,
                lower_bound,
                optimal: solution.optimal || makespan == lower_bound,
                counters: solution.counters,
                found_by: solution.found_by,
                stopped: solution.stopped,
            })
        }
        Err(SolveError::NotFound {
            capacity,
            reason,
            best_makespan,
            counters,
        }) => Err(SolveError::NotFound {
            capacity,
            reason: if zero_end > capacity {
                NotFoundReason::ProvenInfeasible
            } else {
                reason
            },
            best_makespan: best_makespan.map(|m| m.max(zero_end)),
            counters,
        }),
    }
}

/// The buffers of positive size as a problem (same capacity), and the
/// index in `problem` of each of them.
pub fn positive_part(problem: &Problem) -> (Problem, Vec<BufferIdx>) {
    let kept: Vec<BufferIdx> = problem
        .indices()
        .filter(|b| problem.buffer(*b).size > 0)
        .collect();
    (problem.subset(&kept), kept)
}

/// Whether some buffer of `problem` has size 0: in parallel from
/// `PARALLEL_CHECK` buffers on (a pass over millions of buffers takes
/// tens of milliseconds, and it comes before any solver polls its clock).
fn has_zero_size(problem: &Problem) -> bool {
    let buffers = problem.buffers();
    if buffers.len() < PARALLEL_CHECK {
        buffers.iter().any(|b| b.size == 0)
    } else {
        buffers.par_iter().any(|b| b.size == 0)
    }
}

/// Buffers from which [`has_zero_size`] runs in parallel.
const PARALLEL_CHECK: usize = 1 << 16;

/// The plan of `problem` made of `part`'s offsets for the buffers `kept`
/// (in `part`'s order) and, for every other buffer, its fixed offset or 0.
pub fn scatter(problem: &Problem, kept: &[BufferIdx], part: &Plan) -> Plan {
    let mut offsets: Vec<u64> = problem
        .buffers()
        .iter()
        .map(|b| b.fixed_offset.unwrap_or(0))
        .collect();
    for (&b, &offset) in kept.iter().zip(part.offsets()) {
        offsets[b.index()] = offset;
    }
    Plan::from_offsets(offsets)
}
