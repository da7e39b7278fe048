//! The anytime harness: what every solver does when the clock or a cancel
//! flag cuts it, so that a cut solve still returns a valid, usable plan,
//! promptly. Not a solver; the solvers call it at their start and end.
//!
//! - [`fallback`]: the cheap plans, linear in the buffers: interval
//!   colouring by size class (above a placement cut short, or for every
//!   buffer), the bucketed plan that needs no index, the stacked plan that
//!   needs one pass;
//! - `best_fit`: best fit in start order, the cheap plan made ahead of a
//!   stop, beside the placement (far lower than the colouring's, not
//!   linear: bounded by its work);
//! - `both_ways`: best fit of the bucketed buffers both ways from the
//!   middle of the timeline, one side a core, made first at the largest
//!   sizes (no index needed);
//! - `plan`: a greedy plan within a deadline ([`plan_within`]), with the
//!   cheap plans made beside it at scale so that a stop finds one ready;
//! - `within`: the placer's placement within a deadline, completed by the
//!   fallback when cut;
//! - `variants`: the best of the greedy variants within a deadline, the
//!   default one always finished (the exact solvers' first upper bound);
//! - `improving`: the start and end of a solver that improves on a plan
//!   ([`improving`]: boxing's bootstrap, index, max load and answer);
//! - here: the time kept back for the answer ([`reserve`]), when a cut
//!   placement may still improve on the plan in hand ([`settle`]), the
//!   start of the exact solvers and the portfolio at scale ([`greedy_first`],
//!   [`exact_start`]) and the floor a cut result never goes below
//!   ([`at_least`]).

mod best_fit;
mod both_ways;
pub mod fallback;
mod improving;
mod plan;
mod variants;
mod within;

pub use fallback::{bucketed, stacked};
pub use improving::{improving, Bootstrap, Improving};
pub use plan::{plan_within, plan_within_beside, Within};
pub use variants::{best_of, best_variant, best_variant_plan, is_dense};

use std::sync::Arc;

use crate::plan::{Measured, Plan};
use crate::problem::Problem;
use crate::solver::{
    NotFoundReason, Prepared, Solution, SolveError, SolveOptions, Solver, Stop, Stopped,
};
use crate::solvers::greedy::{Fit, Greedy, Placer};

impl Solver for Greedy {
    fn name(&self) -> String {
        format!("greedy/{}/{}", self.order.name(), self.fit.name())
    }

    /// First-fit and best-fit place the pieces of buffers with gaps
    /// ([`crate::geometry::gaps::PieceConflicts`]); the skyline places hulls.
    fn gap_aware(&self) -> bool {
        self.fit != Fit::Skyline
    }

    /// Places every buffer ([`greedy_solution`]:
    /// cut by the clock or a cancel flag, the buffers left are placed above
    /// the others, and the counter `fallback` says how many).
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        greedy_solution(problem, *self, options)
    }
}

/// The solution of `greedy` on `problem` ([`Greedy`]'s `solve_positive`):
/// with a time limit (or a cancel flag), the placement stops when it
/// passes and the buffers left are placed by [`fallback::complete`] above
/// the others: the plan is always complete and valid, and the counter
/// `fallback` (only present then) says how many buffers the clock left to
/// it.
pub fn greedy_solution(
    problem: &Problem,
    greedy: Greedy,
    options: &SolveOptions,
) -> Result<Solution, SolveError> {
    let own = options.stop();
    let deadline = reserved(problem, &own);
    let within = greedy_within(problem, greedy, &own);
    let cut = within.fallback > 0;
    let mut result = solution_of(problem, within, &deadline);
    if let (Ok(s), true) = (&mut result, cut) {
        // Cut ahead of the caller's deadline, which may not have passed.
        s.stopped = deadline.stopped();
    }
    result
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

/// The max load when `known`; else computed, unless `deadline` has passed:
/// then 0, the weakest bound (the solution takes the largest size from the
/// pass that measures the plan).
fn max_load_or_weakest(problem: &Problem, known: Option<u64>, deadline: &Stop) -> u64 {
    match known {
        Some(load) => load,
        None if deadline.is_cut() => 0,
        None => problem.max_load(),
    }
}

/// The solution of a greedy plan within `deadline` ([`Greedy`]'s): the
/// counter `fallback` when the clock left buffers to the fallback, and
/// without the time to compute the max load, a weaker bound (the largest
/// size, from the pass that measures the plan).
fn solution_of(problem: &Problem, within: Within, deadline: &Stop) -> Result<Solution, SolveError> {
    let (plan, fallback) = (within.plan, within.fallback);
    let max_load = max_load_or_weakest(problem, within.max_load, deadline);
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
pub enum First<'p> {
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
        /// The placer that made it (its index), for more orders placed on
        /// the same problem (boxing's iterations).
        placer: Option<Box<Placer<'p>>>,
    },
}

/// The start of an exact solver or a portfolio on at least
/// [`GREEDY_FIRST_MIN`] buffers under a deadline: the default greedy plan
/// within it ([`plan_within`]), so that whatever the clock, the solver
/// returns at least what greedy does, not the stacked plan a stop during
/// the bounds' sorts would leave (figures in `docs/benchmarks.md`, the
/// prestacked plan's row). Without a deadline, or on smaller
/// problems, [`First::Usual`].
pub fn greedy_first<'p>(
    problem: &'p Problem,
    options: &SolveOptions,
    deadline: &Stop,
) -> First<'p> {
    greedy_first_from(problem, options, deadline, GREEDY_FIRST_MIN)
}

/// [`greedy_first`] from `min` buffers on.
pub(crate) fn greedy_first_from<'p>(
    problem: &'p Problem,
    options: &SolveOptions,
    deadline: &Stop,
    min: usize,
) -> First<'p> {
    if problem.len() < min || options.prepared.is_some() || deadline.remaining().is_none() {
        return First::Usual;
    }
    let ahead = reserved(problem, deadline);
    let stop = ahead.clone();
    let within = greedy_within(problem, Greedy::default(), deadline);
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
            placer: within.placer.map(Box::new),
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

/// How an exact solver starts ([`exact_start`]).
pub enum Start {
    /// Search from these bounds; a cut result never goes below `floor`
    /// ([`at_least`]), the default greedy plan at scale.
    Search {
        /// The bounds.
        prepared: Arc<Prepared>,
        /// The default greedy plan, made first at scale.
        floor: Option<Plan>,
    },
    /// Nothing to search: the answer to return. The clock or a stop cut
    /// even the start (greedy's plan, or [`plan_of_no_time`] when the
    /// bounds found no time), or greedy's plan meets the lower bound
    /// (proven optimal).
    Answer(Result<Solution, SolveError>),
}

/// The start of an exact solver (search, tela) under `deadline`: the
/// bounds, with the default greedy plan as the floor of a cut result at
/// scale ([`greedy_first`]), or the answer when there is nothing to search.
pub fn exact_start(problem: &Problem, options: &SolveOptions, deadline: &Stop) -> Start {
    exact_start_from(problem, options, deadline, GREEDY_FIRST_MIN)
}

/// [`exact_start`], greedy first from `min` buffers on.
fn exact_start_from(
    problem: &Problem,
    options: &SolveOptions,
    deadline: &Stop,
    min: usize,
) -> Start {
    match greedy_first_from(problem, options, deadline, min) {
        First::Cut(result) => Start::Answer(result),
        // Greedy's plan meets the lower bound: proven optimal, nothing to
        // search (at scale, the variants and the search would spend the
        // whole limit, and pass it, to find the same makespan).
        First::Done { prepared, plan, .. } if plan.makespan(problem) == prepared.lower_bound => {
            options.progress.raise_lower_bound(prepared.lower_bound);
            options.progress.improve(prepared.lower_bound);
            Start::Answer(Solution::within_capacity(
                problem,
                plan,
                prepared.max_load,
                NotFoundReason::Heuristic,
            ))
        }
        First::Done { prepared, plan, .. } => Start::Search {
            prepared,
            floor: Some(plan),
        },
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
                    Start::Search {
                        prepared,
                        floor: None,
                    }
                }
                // No time even for the bounds (millions of buffers), or
                // stopped as they ended: the solver would only make the
                // stacked plan again.
                prepared => {
                    let max_load = prepared.map_or(0, |p| p.max_load);
                    Start::Answer(plan_of_no_time_given(
                        problem, deadline, max_load, prestacked,
                    ))
                }
            }
        }
    }
}

/// What the harness hands an exact solver ([`exact`]): the facts it
/// starts from and the deadlines it works to.
pub struct Exact {
    /// The bounds (a portfolio's, when it gave them).
    pub prepared: Arc<Prepared>,
    /// The default greedy plan, made first at scale under a deadline: the
    /// floor of a cut result ([`at_least`]), applied by the harness.
    pub floor: Option<Plan>,
    /// The caller's deadline.
    pub deadline: Stop,
    /// The deadline of setup work (indexes, models, the first plan):
    /// `deadline` brought forward by [`reserve`], so that a cut setup
    /// leaves the time to answer.
    pub setup: Stop,
}

impl Exact {
    /// The plan to improve on when the solver has none of its own: the
    /// best greedy variant ([`best_variant_plan`]), from the floor when it
    /// was made.
    pub fn best_variant(&self, problem: &Problem) -> Measured {
        best_variant_plan(problem, self.floor.as_ref(), &self.deadline)
    }
}

/// Runs an exact solver (search, tela) under the harness: the start
/// ([`exact_start`]: the bounds, the floor at scale, or the answer when
/// there is nothing to search), the lower bound published, then `solve`
/// with those facts, and its result never below the floor once the setup
/// deadline has passed ([`at_least`]). A cut `solve` returns what it has,
/// or `NotFound` with the reason: the harness keeps the floor.
pub fn exact(
    problem: &Problem,
    options: &SolveOptions,
    solve: impl FnOnce(&Exact) -> Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    let deadline = options.stop();
    let (prepared, floor) = match exact_start(problem, options, &deadline) {
        Start::Search { prepared, floor } => (prepared, floor),
        Start::Answer(result) => return result,
    };
    options.progress.raise_lower_bound(prepared.lower_bound);
    let setup = reserved(problem, &deadline);
    let facts = Exact {
        prepared,
        floor,
        deadline,
        setup,
    };
    let result = solve(&facts);
    let Exact {
        prepared,
        floor,
        setup,
        ..
    } = facts;
    at_least(problem, floor, prepared.max_load, &setup, result)
}

/// The default greedy plan within `own` (the caller's token), as every
/// solver that starts from it makes it: placed up to the [`reserved`]
/// deadline, the bucketed plan made beside when the time is short
/// (`hurried`), a cut placement settled as [`settle`] says.
pub fn greedy_within<'p>(problem: &'p Problem, greedy: Greedy, own: &Stop) -> Within<'p> {
    let deadline = reserved(problem, own);
    let hurried = hurried(problem, &deadline);
    plan_within_beside(problem, greedy, &deadline, &settle(problem, own), hurried)
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
    use crate::plan::validate;
    use crate::solver::Solver;
    use crate::solvers::greedy::tests::mixed;

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
        let First::Done { prepared, plan, .. } = first(&limited(100), 0) else {
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
        let Start::Answer(Ok(s)) = exact_start_from(&perfect, &limited, &deadline, 0) else {
            panic!("an optimal greedy plan was not returned at once");
        };
        assert_eq!(validate(&perfect, &s.plan), Ok(()));
        assert!(s.optimal);
        assert_eq!(s.makespan, perfect.max_load());
        assert_eq!(s.plan, greedy.plan);
        assert_eq!(s.stopped, None);
        // Within a capacity at the bound: the same; below it: infeasible.
        let at = perfect.clone().with_capacity(Some(s.makespan));
        let Start::Answer(Ok(fits)) = exact_start_from(&at, &limited, &deadline, 0) else {
            panic!("not returned at once within the capacity");
        };
        assert_eq!(fits.plan, s.plan);
        let below = perfect.clone().with_capacity(Some(s.makespan - 1));
        assert!(matches!(
            exact_start_from(&below, &limited, &deadline, 0),
            Start::Answer(Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            }))
        ));
        // Greedy above the bound: the bounds and its plan as the floor.
        let p = crate::generate::generate(crate::generate::Kind::Random, 3000, 1).problem;
        let greedy = Greedy::default().solve(&p, &limited).unwrap();
        assert!(!greedy.optimal, "greedy is optimal on the test instance");
        let Start::Search {
            prepared,
            floor: Some(floor),
        } = exact_start_from(&p, &limited, &deadline, 0)
        else {
            panic!("no floor");
        };
        assert_eq!(*prepared, Prepared::bounds(&p, &Stop::never()).unwrap());
        assert_eq!(floor, greedy.plan);
        // Below the threshold: the usual bounds, no floor.
        let Start::Search { floor: None, .. } =
            exact_start_from(&perfect, &limited, &deadline, perfect.len() + 1)
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
}
