//! What a solve returns: a plan with its bounds, or why there is none.

use crate::plan::{Measured, Plan};
use crate::problem::Problem;
use crate::stop::Stopped;

/// A plan and what the solver knows about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The offsets, valid for the problem (tests check this independently).
    pub plan: Plan,
    /// Makespan of the plan.
    pub makespan: u64,
    /// A proven lower bound on every makespan: at least the max load,
    /// except after a stop that left the solver no time to compute it
    /// (then at least the largest size and the highest fixed end), which
    /// [`Solution::raise_lower_bound`] with [`Problem::max_load`] mends.
    pub lower_bound: u64,
    /// True only when `makespan == lower_bound`, i.e. proven optimal.
    pub optimal: bool,
    /// Solver-specific counters (nodes, backtracks, iterations...).
    pub counters: Vec<(&'static str, u64)>,
    /// For portfolios: the member that found the plan (e.g. `search`).
    pub found_by: Option<String>,
    /// Set when the solve was cut short before the solver finished (the
    /// plan is then the best found so far); `None` when it ran to its end
    /// or proved the plan optimal. Filled in by [`run`](super::run).
    pub stopped: Option<Stopped>,
}

impl Solution {
    /// Raises the lower bound to `bound`, a proven lower bound on every
    /// makespan (e.g. the max load, which a solve stopped early may not
    /// have computed); the plan is then optimal if it meets it (a bound
    /// above the makespan, impossible for a correct one, is capped there).
    pub fn raise_lower_bound(&mut self, bound: u64) {
        self.lower_bound = self.lower_bound.max(bound.min(self.makespan));
        if self.lower_bound == self.makespan {
            self.optimal = true;
            self.stopped = None;
        }
    }

    /// [`Solution::within_capacity`] that reports the solver's `counters`
    /// in the solution or in the error alike.
    pub fn within_capacity_counted(
        problem: &Problem,
        plan: Plan,
        max_load: u64,
        reason: NotFoundReason,
        counters: Vec<(&'static str, u64)>,
    ) -> Result<Solution, SolveError> {
        Solution::within_capacity_of_counted(problem, plan.into(), max_load, reason, counters)
    }

    /// [`Solution::within_capacity_counted`] for a plan whose makespan may
    /// be known already ([`Solution::within_capacity_of`]).
    pub(crate) fn within_capacity_of_counted(
        problem: &Problem,
        best: Measured,
        max_load: u64,
        reason: NotFoundReason,
        counters: Vec<(&'static str, u64)>,
    ) -> Result<Solution, SolveError> {
        match Solution::within_capacity_of(problem, best, max_load, reason) {
            Ok(mut s) => {
                s.counters = counters;
                Ok(s)
            }
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan,
                ..
            }) => Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan,
                counters,
            }),
        }
    }

    /// A solution for `plan` whose lower bound is the max load (or the
    /// highest fixed end, or the largest size, if higher: a stop that
    /// leaves no time for the max load passes 0 and gets those weak bounds,
    /// taken when the problem was made). Fails when the problem has a capacity
    /// and the plan does not fit in it: as
    /// [`NotFoundReason::ProvenInfeasible`] when even the lower bound exceeds
    /// the capacity, else as `reason`.
    pub fn within_capacity(
        problem: &Problem,
        plan: Plan,
        max_load: u64,
        reason: NotFoundReason,
    ) -> Result<Solution, SolveError> {
        Solution::within_capacity_of(problem, plan.into(), max_load, reason)
    }

    /// [`Solution::within_capacity`] for a plan whose makespan may be known
    /// already ([`Measured`]): no pass over the buffers then.
    pub(crate) fn within_capacity_of(
        problem: &Problem,
        best: Measured,
        max_load: u64,
        reason: NotFoundReason,
    ) -> Result<Solution, SolveError> {
        let makespan = best.makespan(problem);
        Solution::within_capacity_measured(problem, best.plan, max_load, reason, makespan)
    }

    /// [`Solution::within_capacity`] with the plan's makespan already
    /// known, as the pass that made the plan may give it (the stacked
    /// plan's, after a stop: a second pass over millions of buffers would
    /// cost tens of milliseconds more).
    pub(crate) fn within_capacity_measured(
        problem: &Problem,
        plan: Plan,
        max_load: u64,
        reason: NotFoundReason,
        makespan: u64,
    ) -> Result<Solution, SolveError> {
        // Fixed buffers and the largest one bound the makespan from below
        // too.
        let max_load = max_load.max(problem.fixed_end()).max(problem.max_size());
        if let Some(capacity) = problem.capacity {
            if max_load > capacity {
                return Err(SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::ProvenInfeasible,
                    best_makespan: Some(makespan),
                    counters: Vec::new(),
                });
            }
            if makespan > capacity {
                return Err(SolveError::NotFound {
                    capacity,
                    reason,
                    best_makespan: Some(makespan),
                    counters: Vec::new(),
                });
            }
        }
        Ok(Solution {
            plan,
            makespan,
            lower_bound: max_load,
            optimal: makespan == max_load,
            counters: Vec::new(),
            found_by: None,
            stopped: None,
        })
    }
}

/// Why no plan within the capacity was returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotFoundReason {
    /// A heuristic's plan did not fit; a plan may still exist.
    Heuristic,
    /// No plan fits: proven (e.g. the max load exceeds the capacity).
    ProvenInfeasible,
    /// The time limit ran out first; a plan may still exist.
    TimeLimit,
    /// The step limit ran out first; a plan may still exist.
    StepLimit,
    /// The cancel flag was raised first; a plan may still exist.
    Interrupted,
    /// The search ended without deciding: it is not complete on this
    /// problem (e.g. with fixed buffers); a plan may still exist.
    Incomplete,
    /// The solver planned the buffers' hulls (it does not exploit gaps,
    /// see [`crate::solver::hulls`]) and proved that they do not fit; with
    /// the gaps a plan may still exist.
    Hulls,
    /// The work budget ([`SolveOptions::effort`](super::SolveOptions::effort)) ran out first; a plan may
    /// still exist.
    WorkLimit,
}

impl NotFoundReason {
    /// A phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            NotFoundReason::Heuristic => {
                "the heuristic's plan does not fit (not proven infeasible)"
            }
            NotFoundReason::ProvenInfeasible => "proven infeasible",
            NotFoundReason::TimeLimit => "unknown: time limit reached",
            NotFoundReason::StepLimit => "unknown: step limit reached",
            NotFoundReason::Interrupted => "unknown: interrupted",
            NotFoundReason::Incomplete => {
                "unknown: the search ended undecided (it is not complete with fixed buffers)"
            }
            NotFoundReason::WorkLimit => "unknown: work budget (effort) spent",
            NotFoundReason::Hulls => {
                "unknown: the solver ignores gaps, and the buffers' full lifetimes do not fit"
            }
        }
    }
}

/// A solver failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    #[error("no plan within capacity {capacity} found: {}{}", reason.describe(),
        best_makespan.map(|m| format!(" (best makespan {m})")).unwrap_or_default())]
    NotFound {
        capacity: u64,
        reason: NotFoundReason,
        best_makespan: Option<u64>,
        /// The solver's effort counters, as in [`Solution::counters`].
        counters: Vec<(&'static str, u64)>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::solver::{Cancel, SolveOptions};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn raising_the_lower_bound_of_a_plan_cut_before_its_bounds() {
        let problem = generate(Kind::Random, 200, 3).problem;
        let options = SolveOptions {
            cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
            ..SolveOptions::default()
        };
        let mut s = crate::solvers::anytime::plan_of_no_time(&problem, &options.stop()).unwrap();
        crate::plan::validate(&problem, &s.plan).unwrap();
        let max_load = problem.max_load();
        assert!(s.lower_bound < max_load, "the weak bound of a stop");
        assert_eq!(s.stopped, Some(Stopped::Interrupted));
        s.raise_lower_bound(max_load);
        assert_eq!(s.lower_bound, max_load);
        assert_eq!(s.optimal, s.makespan == max_load);
        // A lower bound never drops, nor passes the makespan.
        s.raise_lower_bound(0);
        assert_eq!(s.lower_bound, max_load);
        s.raise_lower_bound(u64::MAX);
        assert_eq!(s.lower_bound, s.makespan);
        assert!(s.optimal);
        assert_eq!(s.stopped, None, "an optimal plan is not cut short");
    }
}
