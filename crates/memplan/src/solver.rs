//! The interface every solver implements.

use std::time::Duration;

use crate::plan::Plan;
use crate::problem::Problem;

/// Limits and randomness shared by all solvers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SolveOptions {
    /// Wall-clock budget; `None` means no limit. Fast solvers may ignore it.
    pub time_limit: Option<Duration>,
    /// Seed of every random choice: the same seed gives the same plan.
    pub seed: u64,
}

/// A plan and what the solver knows about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The offsets, valid for the problem (tests check this independently).
    pub plan: Plan,
    /// Makespan of the plan.
    pub makespan: u64,
    /// A proven lower bound on every makespan (at least the max load).
    pub lower_bound: u64,
    /// True only when `makespan == lower_bound`, i.e. proven optimal.
    pub optimal: bool,
    /// Solver-specific counters (nodes, backtracks, iterations...).
    pub counters: Vec<(&'static str, u64)>,
}

impl Solution {
    /// A solution for `plan` whose lower bound is the max load (or the
    /// highest fixed end, if higher). Fails when the problem has a capacity
    /// and the plan does not fit in it: as
    /// [`NotFoundReason::ProvenInfeasible`] when even the lower bound exceeds
    /// the capacity, else as `reason`.
    pub fn within_capacity(
        problem: &Problem,
        plan: Plan,
        max_load: u64,
        reason: NotFoundReason,
    ) -> Result<Solution, SolveError> {
        let makespan = plan.makespan(problem);
        // Fixed buffers bound the makespan from below too.
        let max_load = max_load.max(problem.fixed_end());
        if let Some(capacity) = problem.capacity {
            if max_load > capacity {
                return Err(SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::ProvenInfeasible,
                    best_makespan: Some(makespan),
                });
            }
            if makespan > capacity {
                return Err(SolveError::NotFound {
                    capacity,
                    reason,
                    best_makespan: Some(makespan),
                });
            }
        }
        Ok(Solution {
            plan,
            makespan,
            lower_bound: max_load,
            optimal: makespan == max_load,
            counters: Vec::new(),
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
    },
}

/// A memory planner: gives every buffer an offset.
///
/// Without a capacity on the problem, a solver minimises the makespan; with
/// one, it returns a plan within it or [`SolveError::NotFound`].
pub trait Solver: Send + Sync {
    /// Name for reports, e.g. `greedy/size/first-fit`.
    fn name(&self) -> String;

    /// Plans `problem`.
    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError>;
}
