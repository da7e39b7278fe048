//! Greedy solvers: sort the buffers, then place each at the lowest (first-fit)
//! or tightest (best-fit) gap among the already placed buffers it overlaps in
//! time (idealloc §2.2; the first-fit note). Fixed buffers are placed first.
//!
//! Cost: O(n log n + P log P) where P is the number of time-overlapping pairs
//! between buffers, thanks to the [`Occupancy`](crate::geometry::occupancy::Occupancy) index.

pub mod fallback;
mod groups;
mod orders;
mod placer;
pub mod skyline;
mod variants;

pub use fallback::{bucketed, stacked};
pub use orders::order;
pub use placer::{place, plan_within, plan_within_beside, Placer, Within};
pub use variants::{best_of, best_variant, best_variant_plan, is_dense};

use crate::problem::Problem;
use std::sync::Arc;

use crate::plan::{Measured, Plan};
use crate::solver::{
    NotFoundReason, Prepared, Solution, SolveError, SolveOptions, Solver, Stop, Stopped,
};

/// The order in which buffers are placed. Ties always end on input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Decreasing size, ties by longer lifetime (idealloc's bootstrap "SLFF").
    Size,
    /// Decreasing size × lifetime.
    Area,
    /// Decreasing lifetime, ties by size.
    Lifetime,
    /// Increasing start time, like an online allocator; ties by size.
    Start,
    /// Decreasing contention (TelaMalloc §3.1), ties by alignment,
    /// size × lifetime², lifetime.
    Contention,
}

impl Order {
    /// Every order.
    pub const ALL: [Order; 5] = [
        Order::Size,
        Order::Area,
        Order::Lifetime,
        Order::Start,
        Order::Contention,
    ];

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Order::Size => "size",
            Order::Area => "area",
            Order::Lifetime => "lifetime",
            Order::Start => "start",
            Order::Contention => "contention",
        }
    }
}

impl crate::named::Named for Order {
    const WHAT: &'static str = "order";
    const ALL: &'static [Self] = &Order::ALL;
    fn name(self) -> &'static str {
        Order::name(self)
    }
}

/// How a buffer's offset is chosen among the gaps left by placed buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest offset that fits.
    FirstFit,
    /// The smallest gap that fits, lowest on ties; above everything if none.
    BestFit,
    /// TelaMalloc §3.1's skyline: rows filled bottom-up, each with the
    /// buffers that fit, the order giving the priority ([`crate::solvers::greedy::skyline`]).
    Skyline,
}

impl Fit {
    /// Every fit.
    pub const ALL: [Fit; 3] = [Fit::FirstFit, Fit::BestFit, Fit::Skyline];

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Fit::FirstFit => "first-fit",
            Fit::BestFit => "best-fit",
            Fit::Skyline => "skyline",
        }
    }
}

impl crate::named::Named for Fit {
    const WHAT: &'static str = "fit";
    const ALL: &'static [Self] = &Fit::ALL;
    fn name(self) -> &'static str {
        Fit::name(self)
    }
    fn help(self) -> Option<&'static str> {
        (self == Fit::Skyline).then_some(
            "TelaMalloc §3.1: rows bottom-up on the skyline (with --order contention: its baseline)",
        )
    }
}

/// A sort + fit greedy solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Greedy {
    /// Placement order.
    pub order: Order,
    /// Fitting rule.
    pub fit: Fit,
}

impl Default for Greedy {
    /// Size order with first-fit: the first-fit-decreasing-size method.
    fn default() -> Self {
        Greedy {
            order: Order::Size,
            fit: Fit::FirstFit,
        }
    }
}

impl Greedy {
    /// Every combination of order and fit.
    pub fn all() -> impl Iterator<Item = Greedy> {
        Order::ALL
            .into_iter()
            .flat_map(|order| Fit::ALL.into_iter().map(move |fit| Greedy { order, fit }))
    }
}

impl Solver for Greedy {
    fn name(&self) -> String {
        format!("greedy/{}/{}", self.order.name(), self.fit.name())
    }

    /// First-fit and best-fit place the pieces of buffers with gaps
    /// ([`crate::geometry::gaps::PieceConflicts`]); the skyline places hulls.
    fn gap_aware(&self) -> bool {
        self.fit != Fit::Skyline
    }

    /// Places every buffer. With a time limit (or a cancel flag), the
    /// placement stops when it passes and the buffers left are placed by
    /// [`fallback::complete`] above the others: the plan is always
    /// complete and valid, and the counter `fallback` (only present then)
    /// says how many buffers the clock left to it.
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let own = options.stop();
        let deadline = reserved(problem, &own);
        let hurried = hurried(problem, &deadline);
        let within = if own.can_cut() {
            plan_within_beside(problem, *self, &deadline, &settle(problem, &own), hurried)
        } else {
            placer::plan_unstoppable(problem, *self)
        };
        let cut = within.fallback > 0;
        let mut result = solution_of(problem, within, &deadline);
        if let (Ok(s), true) = (&mut result, cut) {
            // Cut ahead of the caller's deadline, which may not have passed.
            s.stopped = deadline.stopped();
        }
        result
    }
}

/// Whether the time left before `deadline` is too short for a greedy plan
/// of `problem`, estimated at 2 µs a buffer (the rate measured on random
/// instances, in `docs/benchmarks.md`), so that [`plan_within_beside`]
/// computes the bucketed plan beside it.
pub(crate) fn hurried(problem: &Problem, deadline: &Stop) -> bool {
    let need = std::time::Duration::from_nanos(2000u64.saturating_mul(problem.len() as u64));
    deadline.remaining().is_some_and(|left| left < need)
}

/// Above this many buffers, a greedy placement cut by an interrupt
/// returns the plan in hand (the fallback's, computed beside the order)
/// rather than improve on it: the improvement (the fallback above the
/// placed buffers) is a pass over every buffer, and beyond this many it
/// would take too much of what a signal may wait. Below, it runs: a late
/// interrupt then keeps a markedly lower plan (figures in
/// `docs/benchmarks.md`).
pub const IMPROVE_AFTER_INTERRUPT_MAX: usize = 1 << 20;

/// Whether a greedy placement cut ahead of `deadline` (the caller's own)
/// must return the plan in hand ([`plan_within_beside`]'s `settle`): the
/// time limit has passed, or an interrupt came on more than
/// [`IMPROVE_AFTER_INTERRUPT_MAX`] buffers.
pub fn settled(problem: &Problem, deadline: &Stop) -> bool {
    settles(problem.len(), deadline.stopped())
}

/// The token whose cut settles a greedy placement cut ahead of `own`
/// (the caller's own token; see [`settled`]): on more than
/// [`IMPROVE_AFTER_INTERRUPT_MAX`] buffers `own` itself, else its clock
/// alone (an interrupt does not settle there).
pub fn settle(problem: &Problem, own: &Stop) -> Stop {
    if problem.len() > IMPROVE_AFTER_INTERRUPT_MAX {
        own.clone()
    } else {
        own.clock_only()
    }
}

/// [`settled`] on `len` buffers, stopped as `stopped` says.
fn settles(len: usize, stopped: Option<Stopped>) -> bool {
    match stopped {
        Some(Stopped::TimeLimit) => true,
        Some(Stopped::Interrupted) => len > IMPROVE_AFTER_INTERRUPT_MAX,
        None => false,
    }
}

/// What a greedy plan cut by the clock leaves of the time limit to the
/// work after the cut: the fallback's plan (a colouring and a gather of
/// its offsets when cut while placing, the stacked plan's pass before the
/// index), its measure and the caller's: 50 ns a buffer, at most 150 ms.
/// The rate is that of this work on a busy machine, so that a cut solve
/// keeps within the allowed overrun of its time limit (target and
/// measurement in `docs/benchmarks.md`).
pub fn reserve(problem: &Problem) -> std::time::Duration {
    std::time::Duration::from_nanos(50u64.saturating_mul(problem.len() as u64))
        .min(std::time::Duration::from_millis(150))
}

/// `deadline` brought forward by [`reserve`]: the deadline of work that
/// must leave the time to answer after it (greedy's placement, the exact
/// solvers' variants and setup).
pub fn reserved(problem: &Problem, deadline: &Stop) -> Stop {
    deadline.ahead(reserve(problem))
}

/// The solution of a greedy plan within `deadline` ([`Greedy`]'s): the
/// counter `fallback` when the clock left buffers to the fallback, and
/// without the time to compute the max load, a weaker bound (the largest
/// size, from the pass that measures the plan).
fn solution_of(problem: &Problem, within: Within, deadline: &Stop) -> Result<Solution, SolveError> {
    let (plan, fallback) = (within.plan, within.fallback);
    let max_load = match within.max_load {
        Some(load) => load,
        None if deadline.is_cut() => 0,
        None => problem.max_load(),
    };
    let reason = if fallback > 0 {
        NotFoundReason::TimeLimit
    } else {
        NotFoundReason::Heuristic
    };
    let counters = if fallback > 0 {
        vec![("fallback", fallback as u64)]
    } else {
        Vec::new()
    };
    let best = Measured {
        plan,
        makespan: within.makespan,
    };
    Solution::within_capacity_of_counted(problem, best, max_load, reason, counters)
}

/// From this many buffers on, search and tela under a time limit, and
/// `auto` under the caller's time limit, start with the default greedy
/// plan ([`greedy_first`]).
pub const GREEDY_FIRST_MIN: usize = 1 << 19;

/// How a solver starts at scale under a deadline ([`greedy_first`]).
pub enum First {
    /// Too few buffers, no deadline, or prepared facts from the caller:
    /// the solver's usual way.
    Usual,
    /// The deadline cut the greedy plan: its result, as [`Greedy`] gives
    /// it (the stop recorded), for the solver to return.
    Cut(Result<Solution, SolveError>),
    /// The greedy plan is complete: the bounds (the max load from its
    /// index, no sort), and the plan, a floor for what the solver returns
    /// when cut in turn ([`at_least`]).
    Done {
        /// The bounds, without a greedy plan.
        prepared: Arc<Prepared>,
        /// The default greedy plan, as [`Greedy::default`] gives it.
        plan: Plan,
    },
}

/// The start of an exact solver or a portfolio on at least
/// [`GREEDY_FIRST_MIN`] buffers under a deadline: the default greedy plan
/// within it ([`plan_within`]), so that whatever the clock, the solver
/// returns at least what greedy does (before, the bounds' sorts took the
/// whole of a second at 5M buffers, and a stop then had only the stacked
/// plan, 30,000 times the max load). Without a deadline, or on smaller
/// problems, [`First::Usual`].
pub fn greedy_first(problem: &Problem, options: &SolveOptions, deadline: &Stop) -> First {
    greedy_first_from(problem, options, deadline, GREEDY_FIRST_MIN)
}

/// [`greedy_first`] from `min` buffers on.
fn greedy_first_from(
    problem: &Problem,
    options: &SolveOptions,
    deadline: &Stop,
    min: usize,
) -> First {
    if problem.len() < min || options.prepared.is_some() || deadline.remaining().is_none() {
        return First::Usual;
    }
    let ahead = reserved(problem, deadline);
    let stop = ahead.clone();
    let settle = settle(problem, deadline);
    let hurried = hurried(problem, &ahead);
    let within = plan_within_beside(problem, Greedy::default(), &stop, &settle, hurried);
    let bounds = match within.max_load {
        _ if within.fallback > 0 => None,
        Some(max_load) => Some(Prepared {
            max_load,
            lower_bound: max_load.max(problem.fixed_end()),
            greedy: None,
        }),
        None => Prepared::bounds(problem, &stop).ok(),
    };
    match bounds {
        Some(prepared) => First::Done {
            prepared: Arc::new(prepared),
            plan: within.plan,
        },
        None => {
            let mut result = solution_of(problem, within, &ahead);
            if let Ok(s) = &mut result {
                s.stopped = ahead.stopped();
            }
            First::Cut(result)
        }
    }
}

/// The start of an exact solver (search, tela) under `deadline`: the
/// bounds, with the default greedy plan as the floor of a cut result at
/// scale ([`greedy_first`]); `Err` holds what to return when the clock or
/// a stop cut even that (greedy's plan, or [`plan_of_no_time`] when the
/// bounds found no time), or when that plan meets the lower bound (proven
/// optimal).
pub fn exact_start(
    problem: &Problem,
    options: &SolveOptions,
    deadline: &Stop,
) -> Result<(Arc<Prepared>, Option<Plan>), Result<Solution, SolveError>> {
    exact_start_from(problem, options, deadline, GREEDY_FIRST_MIN)
}

/// [`exact_start`], greedy first from `min` buffers on.
fn exact_start_from(
    problem: &Problem,
    options: &SolveOptions,
    deadline: &Stop,
    min: usize,
) -> Result<(Arc<Prepared>, Option<Plan>), Result<Solution, SolveError>> {
    match greedy_first_from(problem, options, deadline, min) {
        First::Cut(result) => Err(result),
        // Greedy's plan meets the lower bound: proven optimal, nothing to
        // search (at scale, the variants and the search would spend the
        // whole limit, and pass it, to find the same makespan).
        First::Done { prepared, plan } if plan.makespan(problem) == prepared.lower_bound => {
            options.progress.raise_lower_bound(prepared.lower_bound);
            options.progress.improve(prepared.lower_bound);
            Err(Solution::within_capacity(
                problem,
                plan,
                prepared.max_load,
                NotFoundReason::Heuristic,
            ))
        }
        First::Done { prepared, plan } => Ok((prepared, Some(plan))),
        First::Usual => {
            // At scale, when a stop can come, the stacked plan is made
            // beside the bounds: their sorts take long at millions of
            // buffers, and the plan's pass made after a stop would take
            // most of what a stop may wait.
            let prestack = deadline.can_cut()
                && options.prepared.is_none()
                && problem.len() > fallback::BUCKETED_MAX;
            // The stacked plan first, on this thread (see `plan_within`).
            let (prestacked, prepared) = rayon::join(
                || prestack.then(|| fallback::stacked_measured(problem)),
                || options.prepared(problem, deadline).ok(),
            );
            match prepared {
                // Done before the stop (or nothing made ahead): the solver
                // goes on.
                Some(prepared) if prestacked.is_none() || !deadline.is_cut() => {
                    crate::dispose::drop_later(prestacked, problem.len());
                    Ok((prepared, None))
                }
                // No time even for the bounds (millions of buffers), or
                // stopped as they ended: the solver would only make the
                // stacked plan again.
                prepared => {
                    let max_load = prepared.map_or(0, |p| p.max_load);
                    Err(plan_of_no_time_given(
                        problem, deadline, max_load, prestacked,
                    ))
                }
            }
        }
    }
}

/// `result`, or the `floor` plan in its place when the deadline has
/// passed (so runs the clock does not cut are untouched) and the floor is
/// better: a lower makespan, or within the capacity where `result` found
/// nothing in time. The floor's lower bound is `max_load`.
pub fn at_least(
    problem: &Problem,
    floor: Option<Plan>,
    max_load: u64,
    deadline: &Stop,
    result: Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    let Some(floor) = floor.filter(|_| deadline.stopped().is_some()) else {
        return result;
    };
    let makespan = floor.makespan(problem);
    match result {
        Ok(s) if s.makespan <= makespan => Ok(s),
        Ok(s) => Ok(Solution {
            plan: floor,
            makespan,
            optimal: makespan == s.lower_bound,
            stopped: deadline.stopped(),
            ..s
        }),
        Err(SolveError::NotFound {
            capacity,
            reason,
            best_makespan,
            counters,
        }) if reason == NotFoundReason::ProvenInfeasible || makespan > capacity => {
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan: Some(best_makespan.map_or(makespan, |m| m.min(makespan))),
                counters,
            })
        }
        Err(SolveError::NotFound { counters, .. }) => {
            let mut s =
                Solution::within_capacity(problem, floor, max_load, NotFoundReason::TimeLimit)?;
            s.counters = counters;
            s.stopped = deadline.stopped();
            Ok(s)
        }
    }
}

/// The plan of an exact solver cut by `deadline` before it had even its
/// bounds (millions of buffers): the default greedy's plan within that
/// deadline (next to none left), with the weakest bound (the largest size,
/// from the pass that measures the plan) and the stop recorded.
pub fn plan_of_no_time(problem: &Problem, deadline: &Stop) -> Result<Solution, SolveError> {
    plan_of_no_time_given(problem, deadline, 0, None)
}

/// [`plan_of_no_time`] with the max load when known (else 0), the
/// stacked plan given when it was made ahead (then it is the plan:
/// greedy's within a passed deadline is the stacked plan on so many
/// buffers).
fn plan_of_no_time_given(
    problem: &Problem,
    deadline: &Stop,
    max_load: u64,
    prestacked: Option<fallback::Stacked>,
) -> Result<Solution, SolveError> {
    let within = match prestacked {
        Some(stacked) => Within::stacked(stacked),
        None => plan_within(problem, Greedy::default(), deadline),
    };
    // The stacked plan comes measured: no second pass over the buffers.
    let best = Measured {
        plan: within.plan,
        makespan: within.makespan,
    };
    let mut s = Solution::within_capacity_of(problem, best, max_load, NotFoundReason::TimeLimit)?;
    s.stopped = deadline.stopped();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferIdx;
    use crate::geometry::fit::{align_up, best_fit, first_fit};
    use crate::plan::{validate, Stats};
    use crate::problem::{read_problem_from, Buffer, Lifetimes};
    use proptest::prelude::*;
    use std::path::Path;

    /// The first-fit note's six allocations (size, start, end), inclusive.
    const NOTE: &str =
        "id,lower,upper,size\n0,1,5,10\n1,2,6,5\n2,1,3,8\n3,4,7,4\n4,3,8,6\n5,5,9,12\n";

    /// Nothing can stop a solve without a time limit or a cancel flag: it
    /// skips the fallback computed beside the order (from 2^18 buffers),
    /// sorts the order beside the index and, with dense times, finds the
    /// max load there too; its plan and lower bound are those of a solve
    /// that could be stopped but was not. Times dense and not (scaled).
    #[test]
    fn an_unstoppable_solve_gives_the_stoppable_plan() {
        use std::sync::atomic::AtomicBool;
        let dense = crate::generate::generate(crate::generate::Kind::Random, 270_000, 5).problem;
        let scaled = dense
            .buffers()
            .iter()
            .map(|b| Buffer::new(b.id.clone(), 3 * b.start, 3 * b.end, b.size))
            .collect();
        let sparse = Problem::new(scaled, None).unwrap();
        assert!(dense.buffers().iter().all(|b| b.end < 2 * 270_000));
        assert!(sparse.buffers().iter().any(|b| b.end >= 2 * 270_000));
        for p in [dense, sparse] {
            let free = Greedy::default()
                .solve(&p, &SolveOptions::default())
                .unwrap();
            assert!(!SolveOptions::default().stop().can_cut());
            let flag = SolveOptions {
                cancel: crate::solver::Cancel::new(Arc::new(AtomicBool::new(false))),
                ..SolveOptions::default()
            };
            assert!(flag.stop().can_cut());
            let watched = Greedy::default().solve(&p, &flag).unwrap();
            assert_eq!(free.plan, watched.plan);
            assert_eq!(free.lower_bound, p.max_load());
            assert_eq!(watched.lower_bound, p.max_load());
            assert_eq!(validate(&p, &free.plan), Ok(()));
            assert_eq!(free.stopped, None);
        }
    }

    #[test]
    fn first_fit_note_example() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let s = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        validate(&p, &s.plan).unwrap();
        assert_eq!(s.plan.offsets(), &[12, 28, 0, 33, 22, 0]);
        assert_eq!(s.makespan, 37);
        assert_eq!(s.lower_bound, p.max_load());
        assert_eq!(
            order(&p, Order::Size, &Stop::never()).unwrap(),
            [5, 0, 2, 4, 1, 3].map(BufferIdx)
        );
    }

    #[test]
    fn fit_rules() {
        let occ = [(0, 4), (6, 10), (12, 20), (30, 31)];
        assert_eq!(first_fit(&occ, 2, 1), 4);
        assert_eq!(first_fit(&occ, 3, 1), 20);
        assert_eq!(
            first_fit(&occ, 2, 8),
            24,
            "4 and 16 are inside ranges; 24 fits below 30"
        );
        assert_eq!(first_fit(&occ, 10, 1), 20, "[20,30) holds exactly 10");
        assert_eq!(first_fit(&occ, 11, 1), 31);
        assert_eq!(first_fit(&[], 5, 4), 0);
        assert_eq!(
            best_fit(&occ, 2, 1),
            4,
            "[4,6) and [10,12) tie, the lowest wins"
        );
        assert_eq!(
            best_fit(&[(0, 4), (14, 20), (22, 30)], 2, 1),
            20,
            "[20,22) is tighter than [4,14)"
        );
        assert_eq!(best_fit(&occ, 3, 1), 20, "[4,6) and [10,12) are too small");
        assert_eq!(best_fit(&occ, 11, 1), 31);
        assert_eq!(best_fit(&[(2, 5)], 2, 1), 0);
        // Overlapping ranges (alive at different times of the new buffer).
        assert_eq!(first_fit(&[(0, 10), (2, 4), (12, 14)], 2, 1), 10);
        assert_eq!(best_fit(&[(0, 10), (2, 4), (12, 14)], 2, 1), 10);
    }

    #[test]
    fn fixed_and_aligned_buffers_are_honoured() {
        let p = Problem::new(
            vec![
                Buffer::new("f", 0, 10, 4).fixed(0),
                Buffer::new("a", 0, 10, 3).aligned(8),
                Buffer::new("b", 0, 10, 5),
                Buffer::new("g", 0, 10, 2).fixed(20),
            ],
            None,
        )
        .unwrap();
        for g in Greedy::all() {
            let s = g.solve(&p, &SolveOptions::default()).unwrap();
            validate(&p, &s.plan).unwrap();
            assert_eq!(s.plan.offset(BufferIdx(0)), 0);
            assert_eq!(s.plan.offset(BufferIdx(3)), 20);
            assert_eq!(s.plan.offset(BufferIdx(1)) % 8, 0);
        }
        let s = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        assert_eq!(s.plan.offsets(), &[0, 16, 4, 20]);
    }

    #[test]
    fn capacity_outcomes() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let fits = p.clone().with_capacity(Some(37));
        assert!(Greedy::default()
            .solve(&fits, &SolveOptions::default())
            .is_ok());
        // The note's plan is optimal: its makespan is the max load.
        assert_eq!(p.max_load(), 37);
        let tight = p.clone().with_capacity(Some(36));
        assert_eq!(
            Greedy::default()
                .solve(&tight, &SolveOptions::default())
                .unwrap_err(),
            SolveError::NotFound {
                capacity: 36,
                reason: NotFoundReason::ProvenInfeasible,
                best_makespan: Some(37),
                counters: Vec::new(),
            }
        );
        // A random instance where first-fit leaves fragmentation: not proven.
        let r = crate::generate::generate(crate::generate::Kind::Random, 60, 3).problem;
        let load = r.max_load();
        let free = Greedy::default()
            .solve(&r, &SolveOptions::default())
            .unwrap();
        assert!(free.makespan > load);
        assert!(!free.optimal);
        assert_eq!(
            Greedy::default()
                .solve(&r.with_capacity(Some(load)), &SolveOptions::default())
                .unwrap_err(),
            SolveError::NotFound {
                capacity: load,
                reason: NotFoundReason::Heuristic,
                best_makespan: Some(free.makespan),
                counters: Vec::new(),
            }
        );
        let impossible = p.with_capacity(Some(10));
        assert!(matches!(
            Greedy::default().solve(&impossible, &SolveOptions::default()),
            Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            })
        ));
    }

    #[test]
    fn early_stopping_limit() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let o = order(&p, Order::Size, &Stop::never()).unwrap();
        assert!(place(&p, &o, Fit::FirstFit, Some(36)).is_none());
        assert_eq!(
            place(&p, &o, Fit::FirstFit, Some(37)).unwrap().makespan(&p),
            37
        );
    }

    /// Reference placement: one pass over `order`, the overlaps found by
    /// scanning every placed buffer.
    pub(super) fn plain_pass(p: &Problem, order: &[BufferIdx], fit: Fit) -> Vec<u64> {
        let b = p.buffers();
        let mut offsets: Vec<Option<u64>> = b.iter().map(|x| x.fixed_offset).collect();
        for &i in order {
            let mut occ: Vec<(u64, u64)> = b
                .iter()
                .zip(&offsets)
                .filter(|(x, off)| off.is_some() && x.overlaps_in_time(&b[i.index()]))
                .map(|(x, off)| (off.unwrap(), off.unwrap() + x.size))
                .collect();
            occ.sort_unstable();
            let x = &b[i.index()];
            offsets[i.index()] = Some(match fit {
                Fit::FirstFit | Fit::Skyline => first_fit(&occ, x.size, x.alignment),
                Fit::BestFit => best_fit(&occ, x.size, x.alignment),
            });
        }
        offsets.into_iter().map(|o| o.unwrap()).collect()
    }

    /// A generated instance with fixed and aligned buffers.
    pub(super) fn mixed(kind: crate::generate::Kind, n: usize) -> Problem {
        let base = crate::generate::generate(kind, n, 5).problem;
        let mut buffers = base.buffers().to_vec();
        for (i, b) in buffers.iter_mut().enumerate() {
            if i % 101 == 0 {
                b.fixed_offset = Some((i as u64) << 30);
            } else if i % 5 == 0 {
                b.alignment = 32;
            }
        }
        Problem::new(buffers, None).unwrap()
    }

    #[test]
    fn a_passed_deadline_or_cancel_still_gives_a_valid_plan() {
        use crate::solver::Cancel;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        use std::time::Duration;
        let p = mixed(crate::generate::Kind::Random, 3000);
        let free = p
            .buffers()
            .iter()
            .filter(|b| b.fixed_offset.is_none())
            .count() as u64;
        let passed = SolveOptions {
            time_limit: Some(Duration::ZERO),
            ..SolveOptions::default()
        };
        let cancelled = SolveOptions {
            cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
            ..SolveOptions::default()
        };
        for g in Greedy::all() {
            for options in [&passed, &cancelled] {
                let s = g.solve(&p, options).unwrap();
                assert_eq!(validate(&p, &s.plan), Ok(()), "{}", g.name());
                // Stopped before the first buffer: the fallback placed all.
                assert_eq!(s.counters, vec![("fallback", free)], "{}", g.name());
            }
        }
        // With a capacity the plan does not meet, the reason is the clock.
        let tight = p
            .clone()
            .with_capacity(Some(p.max_load().max(p.fixed_end())));
        assert!(matches!(
            Greedy::default().solve(&tight, &passed),
            Err(SolveError::NotFound {
                reason: NotFoundReason::TimeLimit,
                ..
            })
        ));
    }

    /// Greedy first: cut at once (a limit of 0, or a cancel flag), greedy's
    /// own cut result with the stop recorded; with time, greedy's plan and
    /// the bounds from its index, equal to the sweep's; not at all without
    /// a limit, below the size threshold or with prepared facts.
    #[test]
    fn greedy_first_gives_greedys_plan_or_its_cut() {
        use crate::solver::{Cancel, Stopped};
        use std::sync::atomic::AtomicBool;
        use std::time::Duration;
        let p = mixed(crate::generate::Kind::Random, 3000);
        let first =
            |options: &SolveOptions, min| greedy_first_from(&p, options, &options.stop(), min);
        let limited = |seconds| SolveOptions {
            time_limit: Some(Duration::from_secs(seconds)),
            ..SolveOptions::default()
        };
        let cancelled = SolveOptions {
            cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
            ..limited(100)
        };
        for (options, why) in [
            (limited(0), Stopped::TimeLimit),
            (cancelled, Stopped::Interrupted),
        ] {
            let First::Cut(Ok(s)) = first(&options, 0) else {
                panic!("not cut");
            };
            assert_eq!(validate(&p, &s.plan), Ok(()));
            assert_eq!(s.stopped, Some(why));
            assert_eq!(s.plan, Greedy::default().solve(&p, &options).unwrap().plan);
        }
        let First::Done { prepared, plan } = first(&limited(100), 0) else {
            panic!("cut");
        };
        assert_eq!(*prepared, Prepared::bounds(&p, &Stop::never()).unwrap());
        assert_eq!(
            plan,
            Greedy::default()
                .solve(&p, &SolveOptions::default())
                .unwrap()
                .plan
        );
        assert!(matches!(first(&limited(100), p.len() + 1), First::Usual));
        assert!(matches!(first(&SolveOptions::default(), 0), First::Usual));
        let given = SolveOptions {
            prepared: Some(Arc::new(Prepared::bounds(&p, &Stop::never()).unwrap())),
            ..limited(100)
        };
        assert!(matches!(first(&given, 0), First::Usual));
    }

    /// The exact solvers' start: greedy's plan returned at once, proven
    /// optimal, when it meets the lower bound (within a capacity that
    /// allows it, proven infeasible below); else the bounds and that plan
    /// as the floor; the usual bounds below the size threshold.
    #[test]
    fn exact_start_returns_an_optimal_greedy_plan_at_once() {
        use std::time::Duration;
        let limited = SolveOptions {
            time_limit: Some(Duration::from_secs(100)),
            ..SolveOptions::default()
        };
        let deadline = limited.stop();
        // A trace: greedy reaches the max load on it.
        let perfect = crate::generate::generate(crate::generate::Kind::Trace, 2000, 1).problem;
        let greedy = Greedy::default().solve(&perfect, &limited).unwrap();
        assert!(greedy.optimal, "greedy is not optimal on the test instance");
        let Err(Ok(s)) = exact_start_from(&perfect, &limited, &deadline, 0) else {
            panic!("an optimal greedy plan was not returned at once");
        };
        assert_eq!(validate(&perfect, &s.plan), Ok(()));
        assert!(s.optimal);
        assert_eq!(s.makespan, perfect.max_load());
        assert_eq!(s.plan, greedy.plan);
        assert_eq!(s.stopped, None);
        // Within a capacity at the bound: the same; below it: infeasible.
        let at = perfect.clone().with_capacity(Some(s.makespan));
        let Err(Ok(fits)) = exact_start_from(&at, &limited, &deadline, 0) else {
            panic!("not returned at once within the capacity");
        };
        assert_eq!(fits.plan, s.plan);
        let below = perfect.clone().with_capacity(Some(s.makespan - 1));
        assert!(matches!(
            exact_start_from(&below, &limited, &deadline, 0),
            Err(Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            }))
        ));
        // Greedy above the bound: the bounds and its plan as the floor.
        let p = crate::generate::generate(crate::generate::Kind::Random, 3000, 1).problem;
        let greedy = Greedy::default().solve(&p, &limited).unwrap();
        assert!(!greedy.optimal, "greedy is optimal on the test instance");
        let Ok((prepared, Some(floor))) = exact_start_from(&p, &limited, &deadline, 0) else {
            panic!("no floor");
        };
        assert_eq!(*prepared, Prepared::bounds(&p, &Stop::never()).unwrap());
        assert_eq!(floor, greedy.plan);
        // Below the threshold: the usual bounds, no floor.
        let Ok((_, None)) = exact_start_from(&perfect, &limited, &deadline, perfect.len() + 1)
        else {
            panic!("greedy first below the threshold");
        };
    }

    /// A cut placement improves on the plan in hand until the caller's
    /// deadline, and on an interrupt only where that is quick.
    #[test]
    fn settled_by_a_time_limit_at_once_by_an_interrupt_at_scale() {
        let max = IMPROVE_AFTER_INTERRUPT_MAX;
        for len in [0, 1, max, max + 1] {
            assert!(!settles(len, None));
            assert!(settles(len, Some(Stopped::TimeLimit)));
            assert_eq!(settles(len, Some(Stopped::Interrupted)), len > max);
        }
        let p = mixed(crate::generate::Kind::Random, 100);
        let raised = crate::solver::Cancel::new(Arc::new(std::sync::atomic::AtomicBool::new(true)));
        let interrupted = SolveOptions {
            cancel: raised,
            ..SolveOptions::default()
        };
        assert!(!settled(&p, &interrupted.stop()));
        let passed = SolveOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..SolveOptions::default()
        };
        assert!(settled(&p, &passed.stop()));
        assert!(!settled(&p, &SolveOptions::default().stop()));
        // The settle token cuts exactly where `settled` holds (one of the
        // two cuts at a time; both at once, the clock settles).
        for options in [&interrupted, &passed, &SolveOptions::default()] {
            let own = options.stop();
            assert_eq!(settle(&p, &own).is_cut(), settled(&p, &own));
        }
        // At scale, an interrupt settles too.
        let large = Problem::new(
            (0..=IMPROVE_AFTER_INTERRUPT_MAX)
                .map(|i| crate::problem::Buffer::new(i.to_string(), 0, 1, 1))
                .collect(),
            None,
        )
        .unwrap();
        let own = interrupted.stop();
        assert!(settled(&large, &own) && settle(&large, &own).is_cut());
    }

    /// The floor replaces a result only once the deadline has passed, and
    /// only when it is better: lower, or within the capacity where the
    /// result found nothing in time.
    #[test]
    fn at_least_keeps_the_better_plan_once_cut() {
        use crate::solver::Stopped;
        use std::time::Duration;
        let p = mixed(crate::generate::Kind::Random, 500);
        let good = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let (bad, _) = stacked(&p);
        let load = p.max_load();
        let worse =
            Solution::within_capacity(&p, bad.clone(), load, NotFoundReason::Heuristic).unwrap();
        let passed = SolveOptions {
            time_limit: Some(Duration::ZERO),
            ..SolveOptions::default()
        }
        .stop();
        let open = SolveOptions::default().stop();
        let floor = Some(good.plan.clone());
        // Not cut: untouched.
        let kept = at_least(&p, floor.clone(), load, &open, Ok(worse.clone())).unwrap();
        assert_eq!(kept.plan, bad);
        // Cut: the floor, said to be stopped.
        let s = at_least(&p, floor.clone(), load, &passed, Ok(worse.clone())).unwrap();
        assert_eq!((s.plan, s.makespan), (good.plan.clone(), good.makespan));
        assert_eq!(s.stopped, Some(Stopped::TimeLimit));
        // A better result stays.
        let s = at_least(&p, Some(bad.clone()), load, &passed, Ok(good.clone())).unwrap();
        assert_eq!(s.plan, good.plan);
        // Nothing found in time within a capacity the floor meets: the floor.
        let capped = p.clone().with_capacity(Some(good.makespan));
        let missed = || {
            Err(SolveError::NotFound {
                capacity: good.makespan,
                reason: NotFoundReason::TimeLimit,
                best_makespan: None,
                counters: Vec::new(),
            })
        };
        let s = at_least(&capped, floor.clone(), load, &passed, missed()).unwrap();
        assert_eq!(validate(&capped, &s.plan), Ok(()));
        assert_eq!(s.makespan, good.makespan);
        // A floor over the capacity: still no plan, its makespan reported.
        let tight = p.clone().with_capacity(Some(good.makespan - 1));
        let missed_tight = Err(SolveError::NotFound {
            capacity: good.makespan - 1,
            reason: NotFoundReason::TimeLimit,
            best_makespan: None,
            counters: Vec::new(),
        });
        assert_eq!(
            at_least(&tight, floor, load, &passed, missed_tight),
            Err(SolveError::NotFound {
                capacity: good.makespan - 1,
                reason: NotFoundReason::TimeLimit,
                best_makespan: Some(good.makespan),
                counters: Vec::new(),
            })
        );
    }

    /// Random problems of up to 40 buffers with alignments up to 8; about
    /// one in five is fixed, at `128 * index` (fixed ones never overlap).
    pub(super) fn arb_problem() -> impl Strategy<Value = Problem> {
        proptest::collection::vec((0u64..40, 1u64..15, 1u64..64, 0u32..4, 0u8..5), 0..40).prop_map(
            |spec| {
                let buffers = spec
                    .into_iter()
                    .enumerate()
                    .map(|(i, (s, len, size, a, fixed))| {
                        let b = Buffer::new(format!("b{i}"), s, s + len, size).aligned(1 << a);
                        if fixed == 0 {
                            b.fixed(128 * i as u64)
                        } else {
                            b
                        }
                    })
                    .collect();
                Problem::new(buffers, None).unwrap()
            },
        )
    }

    proptest! {
        #[test]
        fn every_greedy_plan_validates(p in arb_problem()) {
            for g in Greedy::all() {
                let s = g.solve(&p, &SolveOptions::default()).unwrap();
                prop_assert_eq!(validate(&p, &s.plan), Ok(()));
                let stats = Stats::new(&p, &s.plan);
                prop_assert!(stats.max_load <= stats.makespan);
                prop_assert_eq!(stats.makespan, s.makespan);
            }
        }

        #[test]
        fn first_fit_is_lowest_feasible_offset(
            occ in proptest::collection::vec((0u64..100, 1u64..20), 0..10),
            size in 1u64..30,
            align in 0u32..4,
        ) {
            let mut occ: Vec<(u64, u64)> = occ.into_iter().map(|(o, s)| (o, o + s)).collect();
            occ.sort_unstable();
            let alignment = 1 << align;
            let free = |x: u64| occ.iter().all(|&(o, e)| x + size <= o || e <= x);
            let got = first_fit(&occ, size, alignment);
            prop_assert!(free(got) && got % alignment == 0);
            let lowest = (0..=got).step_by(alignment as usize).find(|&x| free(x));
            prop_assert_eq!(lowest, Some(got));
            let bf = best_fit(&occ, size, alignment);
            prop_assert!(free(bf) && bf % alignment == 0);
            // Best fit by brute force: the free aligned offsets inside gaps
            // (below the top of all ranges), by gap length, then offset.
            let top = occ.iter().map(|r| r.1).max().unwrap_or(0);
            let gap_of = |x: u64| {
                let lo = occ.iter().map(|r| r.1).filter(|&e| e <= x).max().unwrap_or(0);
                let hi = occ.iter().map(|r| r.0).filter(|&o| o >= x + size).min().unwrap();
                (hi - lo, lo)
            };
            let want = (0..top)
                .filter(|&x| x % alignment == 0 && free(x) && x + size <= top)
                .min_by_key(|&x| (gap_of(x), x))
                .unwrap_or_else(|| align_up(top, alignment));
            prop_assert_eq!(bf, want);
        }
    }
}
