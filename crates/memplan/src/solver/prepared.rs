//! What a portfolio computes once per solve and hands to its members, so
//! that none computes it again: the bounds every member needs and the best
//! greedy plan, a warm start for the solvers that improve on a plan.

use super::{Cut, Stop};
use crate::plan::{Measured, Plan};
use crate::problem::Problem;

/// Facts about one problem, computed once.
///
/// Invariant: they describe the very problem a solver is given. A solver
/// receives them through [`SolveOptions::prepared`](super::SolveOptions::prepared),
/// and [`Solver::solve`](super::Solver::solve) drops them whenever it hands
/// `solve_positive` another problem (zero-size buffers set aside, hints
/// ignored, gaps planned as hulls).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// The max load (idealloc §2): no plan is shorter.
    pub max_load: u64,
    /// `max_load`, or the highest end of a fixed buffer when higher.
    pub lower_bound: u64,
    /// The best plan of the greedy variants, with the variant's name, when
    /// computed: search's starting plan and boxing's bootstrap (§5.5).
    pub greedy: Option<(String, Plan)>,
}

impl Prepared {
    /// The bounds of `problem` (one sweep), without a greedy plan; `Err`
    /// once `stop` cuts (checked in the sweep's sorts; at millions of
    /// buffers they take tenths of a second).
    pub fn bounds(problem: &Problem, stop: &Stop) -> Result<Self, Cut> {
        let max_load = if problem.has_gaps() {
            problem.max_load()
        } else {
            crate::geometry::sweep::max_load(problem.buffers(), stop)?
        };
        Ok(Prepared {
            max_load,
            lower_bound: max_load.max(problem.fixed_end()),
            greedy: None,
        })
    }
}

/// The plan a solver starts from: `warm_start` when it is a valid layout of
/// `problem` (whatever the capacity; an invalid one is passed over), else
/// the prepared greedy plan, else `otherwise()` (the solver's own greedy,
/// with its makespan when a pass measured it).
pub fn starting_plan(
    problem: &Problem,
    warm_start: Option<&Plan>,
    prepared: Option<&Prepared>,
    otherwise: impl FnOnce() -> Measured,
) -> Measured {
    let uncapped = || problem.clone().with_capacity(None);
    if let Some(plan) = warm_start.filter(|p| crate::plan::validate(&uncapped(), p).is_ok()) {
        return plan.clone().into();
    }
    match prepared.and_then(|p| p.greedy.as_ref()) {
        Some((_, plan)) => plan.clone().into(),
        None => otherwise(),
    }
}
