//! Stable plans: among plans with the best makespan found (or within a
//! given makespan), keep as many hints as possible ([`crate::hints`]). A
//! compiler that replans after a small change gives the old offsets as
//! hints and gets a plan that moves few buffers.
//!
//! Minimising the number of moved buffers exactly is NP-hard (it contains
//! the makespan decision itself), so this is a heuristic with a bound:
//!
//! 1. **Makespan.** The solver plans the problem (hints are tried first by
//!    every solver), within the given makespan if any: plan P0. M is the
//!    given makespan, else the problem's capacity, else P0's makespan (the
//!    best found). This solve has the caller's options but half the time
//!    limit: with a work budget (`effort`, auto's default) and no time
//!    limit, P0 is exactly the plain solve's plan.
//! 2. **Selection.** The hints P0 keeps are compatible (P0 is valid); every
//!    other hint that ends within M and overlaps neither a fixed buffer nor
//!    a hint chosen before it is added ([`crate::hints::select`]), in start
//!    order.
//! 3. **Completion.** The chosen buffers are fixed at their hints and the
//!    solver plans the rest within M (trying their hints first), with a
//!    sixteenth of the work budget and half the time left. If it fails, the
//!    chosen buffers alive at the same time as a moved one (not chosen)
//!    and near it in address are freed too: first those overlapping its
//!    hint, then those within a window of its size around it, the window
//!    doubling each round (at most 12 rounds, up to the whole range); the
//!    solver's own plan P0 is the fallback.
//!
//! **Guaranteed:** the plan is valid, its makespan is at most M (never
//! worse than the plain solve's), and it keeps at least as many hints as
//! P0. **Bound:** no plan within M keeps more than
//! [`StableSolution::bound`] hints (hints past M or on a fixed buffer must
//! move, and of each pair of a matching of conflicting hints one must);
//! when `kept == bound` the plan is proven to keep the most hints
//! possible at makespan M. With a time limit the result depends on the
//! clock, as every solver's does.

use crate::buffer::BufferIdx;
use crate::geometry::occupancy::Occupancy;
use crate::hints;
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solver::{Effort, Solution, SolveError, SolveOptions, Solver};

/// The switches of [`solve_stable`] (CLI `--stable`, `--stable-makespan`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StableOptions {
    /// Keep hints among plans within this makespan (a capacity for the
    /// plan), rather than within the best makespan the solver finds.
    pub makespan: Option<u64>,
}

/// A stable plan and what is known of its hints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StableSolution {
    /// The plan (for the problem as given, hints included).
    pub solution: Solution,
    /// The makespan hints were kept within (M).
    pub target: u64,
    /// Buffers with a hint.
    pub hints: usize,
    /// Buffers at their hint in the plan.
    pub kept: usize,
    /// At most this many hints can be kept by any plan within `target`.
    pub bound: usize,
    /// Hints kept by the plain solve (P0), which `kept` never falls below.
    pub kept_by_solver: usize,
}

/// Plans `problem` with `solver`, keeping as many hints as it can within
/// the best makespan found or `stable.makespan` (see the module notes).
/// Fails as the solver does when no plan within the capacity (or the
/// given makespan) is found.
pub fn solve_stable(
    solver: &dyn Solver,
    problem: &Problem,
    options: &SolveOptions,
    stable: &StableOptions,
) -> Result<StableSolution, SolveError> {
    let deadline = options.stop();
    let (first, target) = first_solve(solver, problem, options, stable)?;
    let total = hints::count(problem);
    let kept_by_solver = hints::kept(problem, &first.plan);
    let at_hint: Vec<BufferIdx> = problem
        .indices()
        .filter(|&b| problem.hint(b) == Some(first.plan.offset(b)))
        .collect();
    let selection = hints::select(problem, target, &at_hint);
    let done = |solution: Solution, kept| StableSolution {
        solution,
        target,
        hints: total,
        kept,
        bound: selection.bound.max(kept),
        kept_by_solver,
    };
    if selection.keep.len() <= at_hint.len() || options.ignore_hints {
        return Ok(done(first, kept_by_solver));
    }
    let mut near = Neighbourhood::new(problem, &first.plan, &selection.keep);
    let base_effort = options.effort.unwrap_or(Effort::DEFAULT);
    for round in 0..MAX_ROUNDS {
        if deadline.is_cut() {
            break;
        }
        let options = SolveOptions {
            time_limit: deadline.remaining().map(|left| left / 2),
            effort: Effort::new(base_effort.factor() / ROUND_SHARE),
            ..options.clone()
        };
        if let Some(plan) = complete(solver, problem, target, near.fixed(), &options) {
            let kept = hints::kept(problem, &plan);
            if kept <= kept_by_solver {
                break;
            }
            return Ok(done(completed(solver, problem, &first, plan, round), kept));
        }
        if !near.widen(problem, target) {
            break;
        }
    }
    Ok(done(first, kept_by_solver))
}

/// Step 1: the solver's plan P0 within the given makespan (half the time
/// limit), and the target makespan M.
fn first_solve(
    solver: &dyn Solver,
    problem: &Problem,
    options: &SolveOptions,
    stable: &StableOptions,
) -> Result<(Solution, u64), SolveError> {
    let capacity = match (problem.capacity, stable.makespan) {
        (Some(c), Some(m)) => Some(c.min(m)),
        (c, m) => c.or(m),
    };
    let first_options = SolveOptions {
        time_limit: options.time_limit.map(|t| t / 2),
        ..options.clone()
    };
    let bounded;
    let first_problem = if capacity == problem.capacity {
        problem
    } else {
        bounded = problem.clone().with_capacity(capacity);
        &bounded
    };
    let first = solver.solve(first_problem, &first_options)?;
    let target = capacity.unwrap_or(first.makespan).max(first.makespan);
    Ok((first, target))
}

/// The solution of a completion that kept more hints than P0 (`first`),
/// found in round `round`.
fn completed(
    solver: &dyn Solver,
    problem: &Problem,
    first: &Solution,
    plan: Plan,
    round: usize,
) -> Solution {
    let makespan = plan.makespan(problem);
    let lower_bound = first.lower_bound.min(makespan);
    let mut counters = first.counters.clone();
    counters.push(("stable_rounds", round as u64 + 1));
    Solution {
        plan,
        makespan,
        lower_bound,
        optimal: makespan == lower_bound,
        counters,
        found_by: Some(format!(
            "stable/{}",
            first.found_by.clone().unwrap_or_else(|| solver.name())
        )),
        stopped: None,
    }
}

/// The buffers a completion round frees (the solver places them; the
/// others stay at their hints). First only those not chosen (the "moved"
/// ones); after each failure, also the chosen buffers alive at the same
/// time as a moved one whose hint lies within a window around the moved
/// one's place (its hint, else its offset in P0): first those overlapping
/// it, then windows of its size, doubling, up to the whole address range.
struct Neighbourhood {
    occ: Occupancy,
    stamps: Vec<(u32, u32)>,
    /// Each moved buffer's (position in `occ`, place, size).
    moved: Vec<(u32, u64, u64)>,
    /// By buffer: placed by the solver.
    free: Vec<bool>,
    /// Scratch for [`Occupancy::occupied_during`].
    found: Vec<u32>,
    /// The window in sizes of the moved buffer; `None`: overlapping only.
    window: Option<u64>,
}

impl Neighbourhood {
    /// Frees the buffers not in `keep`; `first` places those without a
    /// hint.
    fn new(problem: &Problem, first: &Plan, keep: &[BufferIdx]) -> Self {
        let buffers = problem.buffers();
        let mut chosen = vec![false; problem.len()];
        for b in keep {
            chosen[b.index()] = true;
        }
        let occ = crate::stop::uncut(|never| Occupancy::of_buffers(buffers, usize::MAX, never));
        let mut stamps = occ.stamps();
        for b in keep {
            stamps[occ.position(b.0) as usize].1 = 0;
        }
        let moved: Vec<(u32, u64, u64)> = problem
            .indices()
            .filter(|b| !chosen[b.index()] && buffers[b.index()].size > 0)
            .map(|b| {
                let at = problem.hint(b).unwrap_or(first.offset(b));
                (occ.position(b.0), at, buffers[b.index()].size)
            })
            .collect();
        Neighbourhood {
            occ,
            stamps,
            moved,
            free: chosen.iter().map(|&c| !c).collect(),
            found: Vec::new(),
            window: None,
        }
    }

    /// The buffers kept at their hints.
    fn fixed(&self) -> impl Iterator<Item = BufferIdx> + '_ {
        (0..self.free.len())
            .filter(|&b| !self.free[b])
            .map(BufferIdx::new)
    }

    /// Frees the chosen buffers near a moved one and doubles the window;
    /// false when the window already spans the whole range `target`.
    fn widen(&mut self, problem: &Problem, target: u64) -> bool {
        let reach = |k: u64, size: u64| k.saturating_mul(size.max(1)).min(target);
        let moved = &self.moved;
        if self
            .window
            .is_some_and(|k| moved.iter().all(|&(_, _, size)| reach(k, size) >= target))
        {
            return false;
        }
        let buffers = problem.buffers();
        for &(p, at, size) in &self.moved {
            let w = self.window.map_or(0, |k| reach(k, size));
            let (lo, hi) = (
                at.saturating_sub(w),
                at.saturating_add(size).saturating_add(w),
            );
            self.found.clear();
            self.occ
                .occupied_during(p, 1, &self.stamps, &mut self.found);
            for &q in &self.found {
                let c = self.occ.buffer_at(q) as usize;
                let h = problem.hint(BufferIdx(c as u32)).unwrap_or(0);
                if !self.free[c] && h < hi && lo < h + buffers[c].size {
                    self.free[c] = true;
                }
            }
        }
        self.window = Some(self.window.map_or(1, |w| w.saturating_mul(2)));
        true
    }
}

/// How many times [`solve_stable`] widens the freed neighbourhood before
/// it keeps the solver's plan.
const MAX_ROUNDS: usize = 12;

/// Each completion round gets this fraction of the work budget
/// ([`SolveOptions::effort`], default [`Effort::DEFAULT`]): the 12 rounds
/// together take at most three quarters of it.
const ROUND_SHARE: f64 = 16.0;

/// Plans `problem` within `makespan` with the buffers `fixed` at their
/// hints; `None` when the solver finds no such plan (or the fixed hints
/// are incompatible, which [`hints::select`] rules out).
fn complete(
    solver: &dyn Solver,
    problem: &Problem,
    makespan: u64,
    fixed: impl Iterator<Item = BufferIdx>,
    options: &SolveOptions,
) -> Option<Plan> {
    let mut buffers = problem.buffers().to_vec();
    for b in fixed {
        buffers[b.index()].fixed_offset = problem.hint(b);
    }
    let hints: Vec<Option<u64>> = problem.indices().map(|b| problem.hint(b)).collect();
    let pinned = Problem::new(buffers, Some(makespan))
        .and_then(|p| p.with_hints(&hints))
        .ok()?;
    let solution = solver.solve(&pinned, options).ok()?;
    // The plan of the pinned problem is one of the original (same buffers,
    // fewer constraints), within `makespan`.
    Some(solution.plan)
}

/// [`solve_stable`] as a [`Solver`] (for [`crate::solver::run`] and the
/// interfaces): the solution's counters say `hints` (buffers with a
/// hint), `hints_kept`, `hints_bound` ([`StableSolution::bound`]),
/// `hints_kept_by_solver` and `stable_makespan` (the target M).
pub struct Stable<'a> {
    /// The solver that finds the makespan and completes the plans.
    pub solver: &'a dyn Solver,
    /// The target makespan, if given.
    pub options: StableOptions,
}

impl Solver for Stable<'_> {
    fn name(&self) -> String {
        format!("stable/{}", self.solver.name())
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        self.solve(problem, options)
    }

    /// The whole problem goes to [`solve_stable`] (the inner solver sets
    /// zero-size buffers aside itself).
    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
        let s = solve_stable(self.solver, problem, options, &self.options)?;
        let mut solution = s.solution;
        solution.counters.extend([
            ("hints", s.hints as u64),
            ("hints_kept", s.kept as u64),
            ("hints_bound", s.bound as u64),
            ("hints_kept_by_solver", s.kept_by_solver as u64),
            ("stable_makespan", s.target),
        ]);
        Ok(solution)
    }
}
