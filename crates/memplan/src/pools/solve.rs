//! Solving a pooled problem: the strategies and what they return.

use crate::buffer::BufferIdx;
use crate::quote::quoted;
use crate::solver::{NotFoundReason, SolveOptions, Stopped};

use super::bounds::{infeasibility, spill_lower_bound, Infeasible};
use super::fill::{cascade, Spans};
use super::guided::{guided, Failure};
use super::{PoolIdx, PoolPlan, PoolProblem, Spill};

/// How buffers are shared out among the pools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The baseline (ExecuTorch's banked planning): buffers in decreasing
    /// size order, pinned ones first, each at its first-fit offset in the
    /// first pool where it ends within the capacity. Microseconds per
    /// buffer; deterministic.
    FastestFirst,
    /// Pool by pool, the set of buffers that keeps the most bytes × time in
    /// the pool, chosen with the solvers deciding what fits (see
    /// `guided.rs`), within the time limit; never worse than
    /// [`FastestFirst`](Strategy::FastestFirst), whose result it keeps when
    /// that is better.
    #[default]
    Guided,
}

impl Strategy {
    /// Every strategy.
    pub const ALL: [Strategy; 2] = [Strategy::FastestFirst, Strategy::Guided];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::FastestFirst => "fastest-first",
            Strategy::Guided => "guided",
        }
    }
}

impl crate::named::Named for Strategy {
    const WHAT: &'static str = "pool strategy";
    const ALL: &'static [Self] = &Strategy::ALL;
    fn name(self) -> &'static str {
        Strategy::name(self)
    }
    fn help(self) -> Option<&'static str> {
        Some(match self {
            Strategy::FastestFirst => {
                "Baseline: each buffer (largest first) in the first pool where its first-fit offset fits (ExecuTorch's banked planning)"
            }
            Strategy::Guided => {
                "Pool by pool, the buffers that keep the most bytes × time in it, chosen with the solvers (never worse than fastest-first)"
            }
        })
    }
}

/// What one pool holds in a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolUsage {
    /// Buffers placed in the pool.
    pub buffers: usize,
    /// The highest address used (0 when empty), at most the capacity.
    pub makespan: u64,
    /// Bytes × time placed in the pool.
    pub area: u128,
}

/// A pooled plan and what is known about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSolution {
    /// Each buffer's pool and offset.
    pub plan: PoolPlan,
    /// The objective reached.
    pub spill: Spill,
    /// A lower bound on every plan's spill, entry by entry
    /// ([`spill_lower_bound`]).
    pub spill_bound: Spill,
    /// Per pool, in order of preference.
    pub usage: Vec<PoolUsage>,
    /// The strategy whose plan this is (`guided` may return the
    /// `fastest-first` plan when it is better).
    pub found_by: Strategy,
    /// Set when the clock or the cancel flag cut the solve short: the plan
    /// may then differ from run to run.
    pub stopped: Option<Stopped>,
    /// Effort counters of the strategy.
    pub counters: Vec<(&'static str, u64)>,
}

/// Why no pooled plan was returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolSolveError {
    /// Proven: no assignment of the buffers to the pools exists.
    #[error("the buffers cannot all be placed (proven): {0}")]
    Infeasible(Infeasible),
    /// None found; one may exist.
    #[error("no assignment of every buffer to a pool found ({}): {detail}", reason.describe())]
    NotFound {
        /// Why the search ended.
        reason: NotFoundReason,
        /// What could not be placed.
        detail: String,
    },
}

/// Solves `problem` with `strategy` within `options.time_limit` (the
/// guided strategy's default: [`crate::solvers::auto::DEFAULT_TIME_LIMIT`]).
///
/// First the simple proofs of infeasibility are checked
/// ([`infeasibility`]); then the strategy runs. Every plan returned is
/// valid for each pool (each pool's sub-problem passes
/// [`validate`](crate::validate)), keeps pinned buffers in their pools and
/// fits the capacities; tests check this with the independent validator.
pub fn solve_pools(
    problem: &PoolProblem,
    strategy: Strategy,
    options: &SolveOptions,
) -> Result<PoolSolution, PoolSolveError> {
    if let Some(proof) = infeasibility(problem) {
        return Err(PoolSolveError::Infeasible(proof));
    }
    let spans = Spans::new(problem);
    let baseline = cascade(problem, &spans);
    let (assignment, found_by, stopped, counters) = match strategy {
        Strategy::FastestFirst => match baseline {
            Ok(a) => (a, Strategy::FastestFirst, None, Vec::new()),
            Err(b) => return Err(not_placed(problem, b)),
        },
        Strategy::Guided => {
            let options = SolveOptions {
                time_limit: Some(
                    options
                        .time_limit
                        .unwrap_or(crate::solvers::auto::DEFAULT_TIME_LIMIT),
                ),
                ..options.clone()
            };
            let deadline = options.stop();
            let guided = guided(problem, &spans, &options, deadline);
            match (guided, baseline) {
                (Ok(g), Ok(base)) => {
                    let (gs, bs) = (spill_of(problem, &g.assignment), spill_of(problem, &base));
                    if bs < gs {
                        (base, Strategy::FastestFirst, g.stopped, g.counters)
                    } else {
                        (g.assignment, Strategy::Guided, g.stopped, g.counters)
                    }
                }
                (Ok(g), Err(_)) => (g.assignment, Strategy::Guided, g.stopped, g.counters),
                (Err(_), Ok(base)) => (base, Strategy::FastestFirst, None, Vec::new()),
                (Err(Failure::Infeasible(proof)), Err(_)) => {
                    return Err(PoolSolveError::Infeasible(proof))
                }
                (Err(Failure::NotFound { reason, detail }), Err(_)) => {
                    let reason = match reason {
                        NotFoundReason::TimeLimit if options.cancel.is_raised() => {
                            NotFoundReason::Interrupted
                        }
                        r => r,
                    };
                    return Err(PoolSolveError::NotFound { reason, detail });
                }
            }
        }
    };
    let (pools, offsets): (Vec<PoolIdx>, Vec<u64>) = assignment.into_iter().unzip();
    let plan = PoolPlan::new(pools, offsets);
    let spill = plan.spill(problem);
    let usage = usage(problem, &plan);
    Ok(PoolSolution {
        plan,
        spill,
        spill_bound: spill_lower_bound(problem),
        usage,
        found_by,
        stopped,
        counters,
    })
}

/// The spill of an assignment.
fn spill_of(problem: &PoolProblem, assignment: &[(PoolIdx, u64)]) -> Spill {
    let pools: Vec<PoolIdx> = assignment.iter().map(|&(p, _)| p).collect();
    Spill::of(problem, &pools)
}

/// The error of a baseline that could not place buffer `b`.
fn not_placed(problem: &PoolProblem, b: BufferIdx) -> PoolSolveError {
    PoolSolveError::NotFound {
        reason: NotFoundReason::Heuristic,
        detail: format!(
            "buffer `{}` fits in no pool after the buffers placed before it",
            quoted(&problem.buffer(b).id)
        ),
    }
}

/// What each pool holds in `plan`.
pub fn usage(problem: &PoolProblem, plan: &PoolPlan) -> Vec<PoolUsage> {
    let mut usage: Vec<PoolUsage> = problem
        .pools()
        .iter()
        .map(|_| PoolUsage {
            buffers: 0,
            makespan: 0,
            area: 0,
        })
        .collect();
    for b in problem.indices() {
        let u = &mut usage[plan.pool(b).index()];
        u.buffers += 1;
        u.makespan = u
            .makespan
            .max(plan.offset(b).saturating_add(problem.buffer(b).size));
        u.area += problem.area(b);
    }
    usage
}
