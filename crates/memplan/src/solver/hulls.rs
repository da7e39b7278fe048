//! Problems with gaps planned by solvers that do not exploit them: such a
//! solver is given the *hulls* (every buffer over its whole lifetime, see
//! [`crate::geometry::gaps`]), whose plans are all valid with the gaps.
//! [`Solver::solve`](crate::Solver::solve) does it, like setting zero-size
//! buffers aside, for every solver that is not
//! [gap-aware](crate::Solver::gap_aware).

use crate::problem::Problem;
use crate::solver::solution::{NotFoundReason, Solution, SolveError};

/// The hull problem: every buffer occupies its whole range for its whole
/// lifetime. Its plans are valid for `problem`. Fixed buffers that share
/// addresses only in their gaps overlap in the hulls: the solvers keep
/// them where they are and avoid them, which is all the gapped problem
/// asks. Hints are kept.
pub fn hulls(problem: &Problem) -> Problem {
    problem.without_gaps()
}

/// Plans `problem` (which may have gaps) by planning its hulls with
/// `solve`: for solvers that do not exploit gaps. The plan is valid for
/// `problem`; the lower bound is `problem`'s own (its max load, or the
/// highest fixed end): a bound proven on the hulls does not hold with the
/// gaps. A capacity the hulls were proven not to fit is reported as
/// [`NotFoundReason::Hulls`] unless the max load already exceeds it. The
/// solution gets the counter `hulls` = 1. (The caller keeps progress
/// published by `solve` apart: its lower bounds are the hulls'.)
pub fn solve_hulls(
    problem: &Problem,
    solve: impl FnOnce(&Problem) -> Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    if problem.gaps().is_empty() {
        return solve(problem);
    }
    let hull = hulls(problem);
    let lower_bound = problem.lower_bound();
    match solve(&hull) {
        Ok(mut s) => {
            s.lower_bound = lower_bound.min(s.makespan);
            s.optimal = s.makespan == lower_bound;
            s.counters.push(("hulls", 1));
            Ok(s)
        }
        Err(SolveError::NotFound {
            capacity,
            reason,
            best_makespan,
            mut counters,
        }) => {
            let reason = match reason {
                NotFoundReason::ProvenInfeasible if lower_bound <= capacity => {
                    NotFoundReason::Hulls
                }
                other => other,
            };
            counters.push(("hulls", 1));
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan,
                counters,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::problem::{read_problem_from, Lifetimes};

    /// The hulls drop the gaps (and their lower max load) but keep the
    /// buffers, capacity and hints.
    #[test]
    fn hulls_drop_gaps_and_keep_hints() {
        let text = b"id,lower,upper,size,gaps,hint\na,0,10,4,3-7,0\nb,3,7,4,,0\n";
        let p = read_problem_from(text, Path::new("in.csv"), Lifetimes::HalfOpen)
            .unwrap()
            .with_capacity(Some(8));
        let h = hulls(&p);
        assert!(p.has_gaps() && !h.has_gaps());
        assert_eq!((p.max_load(), h.max_load()), (4, 8));
        assert_eq!(h.buffers(), p.buffers());
        assert_eq!(h.capacity, Some(8));
        assert_eq!(h.hints(), p.hints());
        assert!(h.hints().is_some());
    }
}
