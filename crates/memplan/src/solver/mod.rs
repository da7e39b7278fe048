//! The interface every solver implements.

pub mod hulls;
mod prepared;
mod solution;
pub mod zero_size;

pub use crate::stop::{uncut, Cancel, Cut, Poll, Stop, Stopped};
pub use prepared::{starting_plan, Prepared};
pub use solution::{NotFoundReason, Solution, SolveError};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::plan::{Measured, Plan};
use crate::problem::Problem;

/// Limits and randomness shared by all solvers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SolveOptions {
    /// Wall-clock budget; `None` means no limit. Fast solvers may ignore it.
    /// With an [`effort`](Self::effort) it is only a safety cap: a result
    /// it cuts short says so ([`Solution::stopped`]) and may differ from
    /// run to run.
    pub time_limit: Option<Duration>,
    /// Work budget: solvers that improve with time stop after this much
    /// work, counted in their own units (search nodes, boxing iterations,
    /// tela steps), so that the same options give the same plan whatever
    /// the machine's load. `None`: the time limit alone bounds them.
    pub effort: Option<Effort>,
    /// Seed of every random choice: the same seed gives the same plan.
    pub seed: u64,
    /// Set from outside (Ctrl-C, a portfolio) to stop early: solvers then
    /// return their best plan so far, as at the time limit.
    pub cancel: Cancel,
    /// Where solvers that improve over time publish their best makespan
    /// and lower bound, for a caller to display while they run.
    pub progress: Progress,
    /// Solve as if the problem had no hints ([`crate::hints`]): by
    /// default every solver tries a buffer's hint before its own choice
    /// (CLI `--ignore-hints` sets this).
    pub ignore_hints: bool,
    /// Bounds and a greedy plan of this very problem, computed once by a
    /// portfolio for its members; `None`: each solver computes what it
    /// needs. [`Solver::solve`] drops them when it solves a transformed
    /// problem.
    pub prepared: Option<Arc<Prepared>>,
}

impl SolveOptions {
    /// The prepared facts of `problem`: the caller's, else computed now
    /// (bounds only; `Err` once `stop` cuts while computing them).
    pub fn prepared(&self, problem: &Problem, stop: &Stop) -> Result<Arc<Prepared>, Cut> {
        match &self.prepared {
            Some(p) => Ok(p.clone()),
            None => Prepared::bounds(problem, stop).map(Arc::new),
        }
    }

    /// These options with the time limit shortened by the time elapsed
    /// since `started`, so that the work done before a solver reads its
    /// deadline (zero-size buffers set aside, hulls) counts against the
    /// limit. A limit of zero stays zero and a positive one stays
    /// positive (to `auto`, zero means greedy only).
    fn since(&self, started: Instant) -> SolveOptions {
        let elapsed = started.elapsed();
        SolveOptions {
            time_limit: self.time_limit.map(|t| {
                if t.is_zero() {
                    t
                } else {
                    t.saturating_sub(elapsed).max(Duration::from_nanos(1))
                }
            }),
            ..self.clone()
        }
    }

    /// These options for a problem derived from the one they came with:
    /// without its prepared facts.
    fn for_derived_problem(&self) -> SolveOptions {
        SolveOptions {
            prepared: None,
            ..self.clone()
        }
    }

    /// The point at which the solver must stop, measured from now. A limit
    /// too far away to represent (e.g. `Duration::MAX`) means no limit: the
    /// arithmetic saturates, it never overflows.
    pub fn stop(&self) -> Stop {
        Stop::after(self.time_limit, self.cancel.clone())
    }
}

/// A time limit of `seconds`, saturating: a negative or NaN count gives
/// zero, one too large for a [`Duration`] gives `Duration::MAX` (which
/// [`SolveOptions::stop`] treats as no limit). Never panics, unlike
/// `Duration::from_secs_f64`.
pub fn seconds(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        Duration::ZERO
    } else {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
    }
}

/// What a solver's worker thread returned, or `on_panic()` when it
/// panicked. A panic is a bug: debug builds (the tests) re-raise it so
/// that it cannot pass for an answer; a release build carries on without
/// the worker (the panic hook has printed the message).
pub(crate) fn joined<T>(
    handle: std::thread::ScopedJoinHandle<'_, T>,
    on_panic: impl FnOnce() -> T,
) -> T {
    handle.join().unwrap_or_else(|payload| {
        if cfg!(debug_assertions) {
            std::panic::resume_unwind(payload);
        }
        on_panic()
    })
}

/// A work budget, in thousandths of [`Effort::DEFAULT`], the budget of the
/// `auto` portfolio by default: calibrated once to about a second of its
/// members' work on one idle core (`docs/benchmarks.md`); each solver
/// converts it into its own units ([`Effort::scale`]), which do not depend
/// on the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Effort(u64);

impl Effort {
    /// The default budget (1.0).
    pub const DEFAULT: Effort = Effort(1000);

    /// `factor` times the default (`None` unless finite and non-negative).
    pub fn new(factor: f64) -> Option<Effort> {
        (factor.is_finite() && factor >= 0.0).then(|| Effort((factor * 1000.0).round() as u64))
    }

    /// The budget as a multiple of the default.
    pub fn factor(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// `units` of work per default budget, scaled to this budget
    /// (saturating).
    pub fn scale(self, units: u64) -> u64 {
        let scaled = u128::from(units) * u128::from(self.0) / 1000;
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

/// The best makespan and lower bound of a running solve, shared between
/// the solver (which publishes) and its caller (which polls, e.g. from a
/// thread drawing a progress line): the library never prints. Clones share
/// the same values; the `auto` portfolio, boxing and search publish, other
/// solvers only return their result. All `Progress` values compare equal
/// (like [`Cancel`], they are not part of what a solve means).
#[derive(Clone, Debug)]
pub struct Progress(Arc<[AtomicU64; 2]>);

impl Default for Progress {
    fn default() -> Self {
        Progress(Arc::new([AtomicU64::new(u64::MAX), AtomicU64::new(0)]))
    }
}

impl Progress {
    /// Records a plan of makespan `makespan` (kept if lower than the best).
    pub fn improve(&self, makespan: u64) {
        self.0[0].fetch_min(makespan, Ordering::Relaxed);
    }

    /// Records a proven lower bound (kept if higher than the best).
    pub fn raise_lower_bound(&self, bound: u64) {
        self.0[1].fetch_max(bound, Ordering::Relaxed);
    }

    /// The lowest makespan published so far, if any.
    pub fn best_makespan(&self) -> Option<u64> {
        let m = self.0[0].load(Ordering::Relaxed);
        (m != u64::MAX).then_some(m)
    }

    /// The highest lower bound published so far (0 if none).
    pub fn lower_bound(&self) -> u64 {
        self.0[1].load(Ordering::Relaxed)
    }
}

impl PartialEq for Progress {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Progress {}

/// What a decision procedure says of one capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A plan within the capacity.
    Fits(Plan),
    /// No plan fits: proven.
    Infeasible,
    /// Undecided (time or step limit).
    Unknown,
}

/// Minimises the makespan with a decision procedure (the search and tela
/// solvers): capacities between the proven `lower` bound and the makespan
/// of `best`, rounded to the problem's [granularity](Problem::granularity);
/// the lower bound first (perfect plans are common), then bisection. With a
/// time limit, each capacity gets a third of the time left, so that one
/// hard capacity does not take the whole budget; an undecided capacity is
/// passed over (the search looks higher) without raising the bound.
pub fn minimise(
    problem: &Problem,
    best: Measured,
    lower: u64,
    deadline: &Stop,
    progress: &Progress,
    mut decide: impl FnMut(u64, &Stop) -> Probe,
) -> Solution {
    minimise_within(problem, best, lower, deadline, progress, None, |c, d, _| {
        (decide(c, d), 0)
    })
}

/// [`minimise`] within `work` units of the decision procedure's own work
/// when given: each capacity gets a third of the work left (and the
/// deadline only as a safety cap), so that the answer does not depend on
/// the clock. `decide(capacity, deadline, work_limit)` returns the answer
/// and the work it spent.
///
/// With neither work nor a time limit, the capacities are tried in rounds
/// of slices of work doubling from [`FIRST_SLICE`]: each round bisects
/// between the proven bound and the best plan, and the next one tries again,
/// with twice the work, the capacities its slice left undecided. So a
/// search that only a stop can end has improved on its first plan when
/// the stop comes (one capacity given all the work could hold it for
/// hours), and it still ends with a proof when one exists: slices grow
/// without bound, and a capacity decided or undecided within its slice is
/// not tried again in that round.
///
/// A result that is not proven optimal because its capacities ran out of
/// their share of the time limit says so ([`Solution::stopped`]), even
/// when the limit itself has not passed.
pub fn minimise_within(
    problem: &Problem,
    best: Measured,
    lower: u64,
    deadline: &Stop,
    progress: &Progress,
    work: Option<u64>,
    mut decide: impl FnMut(u64, &Stop, u64) -> (Probe, u64),
) -> Solution {
    // Stopped already, no capacity is tried: the granularity (a pass over
    // every buffer, tens of milliseconds at millions) would only round the
    // bound up.
    let unit = if deadline.is_cut() {
        1
    } else {
        problem.granularity().max(1)
    };
    // The makespan of a plan measured by the pass that made it (the
    // stacked plan's after a stop) is not measured again.
    let mut best_makespan = best.makespan(problem);
    let mut best = best.plan;
    let mut proven = lower.div_ceil(unit).saturating_mul(unit).min(best_makespan);
    let mut low = proven;
    let mut first = true;
    let mut work_left = work.unwrap_or(u64::MAX);
    // Rounds of doubling slices only when nothing else bounds a probe.
    let rounds = work.is_none() && deadline.remaining().is_none();
    let mut slice = FIRST_SLICE;
    // A capacity left undecided when its slice ran out: the next round
    // tries again.
    let mut retry = false;
    // What cut a probe short of the caller's own limit (its share of the
    // time), for a result left unproven.
    let mut cut_by = None;
    progress.improve(best_makespan);
    progress.raise_lower_bound(proven);
    while !deadline.is_cut() && work_left > 0 {
        if low >= best_makespan {
            if !(rounds && retry && proven < best_makespan) {
                break;
            }
            (low, first, retry) = (proven, true, false);
            slice = slice.saturating_mul(2);
        }
        let c = if first {
            low
        } else {
            (low + (best_makespan - 1 - low) / 2) / unit * unit
        }
        .max(low);
        first = false;
        let (probe_deadline, probe_work) = match (work, deadline.remaining()) {
            (Some(_), _) => (deadline.clone(), (work_left / 3).max(work_left.min(1024))),
            (None, Some(left)) => (deadline.within(left / 3), u64::MAX),
            (None, None) => (deadline.clone(), slice),
        };
        let (probe, spent) = decide(c, &probe_deadline, probe_work);
        work_left = work_left.saturating_sub(spent);
        match probe {
            Probe::Fits(plan) => {
                best_makespan = plan.makespan(problem).min(best_makespan);
                best = plan;
                progress.improve(best_makespan);
            }
            Probe::Infeasible => {
                proven = proven.max(c + unit);
                low = low.max(c + unit);
                progress.raise_lower_bound(proven);
            }
            Probe::Unknown => {
                retry |= rounds && spent >= slice;
                cut_by = cut_by.or(probe_deadline.stopped());
                low = c + unit;
            }
        }
    }
    let proven = proven.min(best_makespan);
    Solution {
        makespan: best_makespan,
        lower_bound: proven,
        optimal: proven == best_makespan,
        plan: best,
        counters: Vec::new(),
        found_by: None,
        stopped: if proven == best_makespan {
            None
        } else {
            deadline.stopped().or(cut_by)
        },
    }
}

/// The first slice of work a capacity gets in [`minimise_within`]'s rounds
/// (neither work nor a time limit): small enough that the first rounds
/// improve on the starting plan within a fraction of a second.
pub const FIRST_SLICE: u64 = 1 << 17;

/// Runs `solver` on `problem` and says whether the time limit or the
/// cancel flag cut it short: [`Solution::stopped`] on a plan that is not
/// proven optimal, and [`NotFoundReason::Interrupted`] instead of
/// [`NotFoundReason::TimeLimit`] when the flag, not the clock, stopped it.
/// The entry point for interfaces (CLI, Python, C).
pub fn run(
    solver: &dyn Solver,
    problem: &Problem,
    options: &SolveOptions,
) -> Result<Solution, SolveError> {
    let started = Instant::now();
    let stopped = || {
        if options.cancel.is_raised() {
            Some(Stopped::Interrupted)
        } else if options.time_limit.is_some_and(|t| started.elapsed() >= t) {
            Some(Stopped::TimeLimit)
        } else {
            None
        }
    };
    match solver.solve(problem, options) {
        Ok(mut solution) => {
            if !solution.optimal && solution.stopped.is_none() {
                solution.stopped = stopped();
            }
            Ok(solution)
        }
        Err(SolveError::NotFound {
            capacity,
            reason,
            best_makespan,
            counters,
        }) => {
            let reason = match (reason, stopped()) {
                (NotFoundReason::TimeLimit, Some(Stopped::Interrupted)) => {
                    NotFoundReason::Interrupted
                }
                (reason, _) => reason,
            };
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan,
                counters,
            })
        }
    }
}

/// A memory planner: gives every buffer an offset.
///
/// Without a capacity on the problem, a solver minimises the makespan; with
/// one, it returns a plan within it or [`SolveError::NotFound`].
///
/// Solvers implement [`Solver::solve_positive`], which only ever sees
/// buffers of positive size; callers call [`Solver::solve`], which sets
/// zero-size buffers aside first (see [`crate::solver::zero_size`]) and, for a
/// solver that is not [gap-aware](Solver::gap_aware), replaces a problem
/// with gaps by its hulls ([`crate::solver::hulls::solve_hulls`]).
pub trait Solver: Send + Sync {
    /// Name for reports, e.g. `greedy/size/first-fit`.
    fn name(&self) -> String;

    /// Plans `problem`, every buffer of which has a positive size.
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError>;

    /// Whether [`Solver::solve_positive`] honours gaps itself (its plans
    /// exploit them, its bounds are those of the gapped problem). False by
    /// default: such a solver is given the hulls.
    fn gap_aware(&self) -> bool {
        false
    }

    /// The work budget this solver runs with, from the caller's options as
    /// given to [`Solver::solve`] (before it shortens the time limit by its
    /// own preparation): the caller's effort by default; `auto` derives one
    /// from the time limit when none is given
    /// ([`crate::solvers::auto::budget`]).
    fn effort(&self, options: &SolveOptions) -> Option<Effort> {
        options.effort
    }

    /// Plans `problem`: its zero-size buffers get offset 0 (or their fixed
    /// offset) and the others are planned by [`Solver::solve_positive`]
    /// (their hulls, if the problem has gaps and the solver is not
    /// gap-aware). With [`SolveOptions::ignore_hints`], the hints are
    /// dropped first.
    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
        // The limit counts from here: the passes below take tens of
        // milliseconds at millions of buffers.
        let started = Instant::now();
        let budgeted;
        let effort = self.effort(options);
        let options = if effort == options.effort {
            options
        } else {
            budgeted = SolveOptions {
                effort,
                ..options.clone()
            };
            &budgeted
        };
        if options.ignore_hints && problem.hints().is_some() {
            let bare = problem.clone().without_hints();
            return crate::solver::zero_size::solve_apart(&bare, |positive| {
                let options = options.for_derived_problem().since(started);
                self.solve_positive(positive, &options)
            });
        }
        crate::solver::zero_size::solve_apart(problem, |positive| {
            // Another problem than the caller's: its prepared facts are not
            // this one's.
            let options = if std::ptr::eq(positive, problem) {
                options.since(started)
            } else {
                options.for_derived_problem().since(started)
            };
            let options = &options;
            if positive.has_gaps() && !self.gap_aware() {
                // The hulls' bounds are not the problem's: their progress
                // is kept apart, only plans are forwarded.
                let inner = SolveOptions {
                    progress: Progress::default(),
                    ..options.for_derived_problem()
                };
                let result =
                    hulls::solve_hulls(positive, |hulls| self.solve_positive(hulls, &inner));
                if let Ok(s) = &result {
                    options.progress.improve(s.makespan);
                }
                result
            } else {
                self.solve_positive(positive, options)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::gaps::{Gap, Gaps};
    use crate::problem::Buffer;
    use std::sync::Mutex;

    /// A toy decision procedure for `minimise_within` on a problem of one
    /// buffer of size 1 (a plan at capacity `c` puts it at `c - 1`, so its
    /// makespan is `c`; the bounds are the toy's, not the buffer's): capacities below `optimum` are infeasible, proven
    /// after `hard` units of work at `optimum - 1` and 1 below; `optimum`
    /// and above fit after `hard` units at `optimum` and 1 above. Records
    /// every (capacity, work limit) asked.
    fn toy(
        optimum: u64,
        hard: u64,
        asked: &mut Vec<(u64, u64)>,
    ) -> impl FnMut(u64, &Stop, u64) -> (Probe, u64) + '_ {
        move |c, _, limit| {
            asked.push((c, limit));
            let cost = if c == optimum || c + 1 == optimum {
                hard
            } else {
                1
            };
            if cost > limit {
                return (Probe::Unknown, limit);
            }
            let plan = Plan::from_offsets(vec![c - 1]);
            (
                if c >= optimum {
                    Probe::Fits(plan)
                } else {
                    Probe::Infeasible
                },
                cost,
            )
        }
    }

    fn one_buffer() -> Problem {
        Problem::new(vec![Buffer::new("a", 0, 1, 1)], None).unwrap()
    }

    /// Without work or time limits, capacities get rounds of doubling
    /// slices: a capacity that needs more than the first slice is passed
    /// over in the first round, the rounds go on until the answer is
    /// proven, and where every probe ends within its slice the capacities
    /// asked are those of a single unlimited pass (the same plans).
    #[test]
    fn without_limits_capacities_take_rounds_of_doubling_slices() {
        let p = one_buffer();
        // A makespan of 200 to improve on (two buffers' worth), bound 100.
        let start = Measured::new(Plan::from_offsets(vec![199]), 200);
        let progress = Progress::default();
        let mut easy = Vec::new();
        let s = minimise_within(
            &p,
            start.clone(),
            100,
            &Stop::never(),
            &progress,
            None,
            toy(150, 10, &mut easy),
        );
        assert_eq!((s.lower_bound, s.optimal, s.stopped), (150, true, None));
        assert!(
            easy.iter().all(|&(_, limit)| limit == FIRST_SLICE),
            "{easy:?}"
        );
        let mut unlimited = Vec::new();
        minimise_within(
            &p,
            start.clone(),
            100,
            &Stop::never(),
            &progress,
            Some(u64::MAX),
            toy(150, 10, &mut unlimited),
        );
        let capacities = |asked: &[(u64, u64)]| asked.iter().map(|a| a.0).collect::<Vec<_>>();
        assert_eq!(capacities(&easy), capacities(&unlimited));

        // 150 and 149 need 5 first slices: a round bisects past them, the
        // third round (4 slices) still cannot decide them, the fourth does.
        let hard = 5 * FIRST_SLICE;
        let mut asked = Vec::new();
        let s = minimise_within(
            &p,
            start,
            100,
            &Stop::never(),
            &progress,
            None,
            toy(150, hard, &mut asked),
        );
        assert_eq!((s.lower_bound, s.optimal, s.stopped), (150, true, None));
        let at_optimum: Vec<u64> = asked.iter().filter(|a| a.0 == 150).map(|a| a.1).collect();
        assert_eq!(at_optimum.last(), Some(&(8 * FIRST_SLICE)));
        assert!(at_optimum.windows(2).all(|w| w[1] == 2 * w[0]), "{asked:?}");
        // Some capacity above the optimum fit in the first round, before
        // the optimum was decided: an early stop would have had it.
        let first_fit = asked.iter().position(|&(c, _)| c > 150).unwrap();
        let decided = asked
            .iter()
            .position(|&(c, l)| c == 150 && l >= hard)
            .unwrap();
        assert!(first_fit < decided);
    }

    /// A result left unproven because each capacity ran out of its share
    /// of the time limit says it was stopped by the time limit, although
    /// the limit itself has not passed.
    #[test]
    fn a_schedule_cut_by_its_share_of_the_time_limit_says_so() {
        let p = one_buffer();
        let start = Measured::new(Plan::from_offsets(vec![103]), 104);
        let deadline = Stop::after(
            Some(std::time::Duration::from_millis(200)),
            Cancel::default(),
        );
        let undecided = |_: u64, d: &Stop, _: u64| {
            while !d.is_cut() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            (Probe::Unknown, 0)
        };
        // Capacities 100..104, each waiting out a third of what is left.
        let s = minimise_within(
            &p,
            start,
            100,
            &deadline,
            &Progress::default(),
            None,
            undecided,
        );
        assert!(!s.optimal);
        assert!(
            deadline.stopped().is_none(),
            "the limit itself passed: a slow machine"
        );
        assert_eq!(s.stopped, Some(Stopped::TimeLimit));
    }

    /// A worker's value comes back; its panic is re-raised in debug
    /// builds (these tests), not turned into `on_panic`'s answer.
    #[test]
    fn a_worker_panic_is_re_raised_in_debug_builds() {
        assert_eq!(std::thread::scope(|s| joined(s.spawn(|| 3u32), || 7)), 3);
        let raised = std::panic::catch_unwind(|| {
            std::thread::scope(|s| {
                joined(
                    s.spawn(|| -> u32 { panic!("a worker's bug (expected by this test)") }),
                    || 7,
                )
            })
        });
        assert!(raised.is_err());
    }

    /// Records whether `solve_positive` got prepared facts, and of how
    /// many buffers; places buffers one above the other.
    struct Spy {
        gap_aware: bool,
        seen: Mutex<Vec<(usize, bool)>>,
    }

    impl Solver for Spy {
        fn name(&self) -> String {
            "spy".into()
        }
        fn gap_aware(&self) -> bool {
            self.gap_aware
        }
        fn solve_positive(
            &self,
            problem: &Problem,
            options: &SolveOptions,
        ) -> Result<Solution, SolveError> {
            let mut seen = self.seen.lock().unwrap();
            seen.push((problem.len(), options.prepared.is_some()));
            let mut end = 0u64;
            let offsets = problem
                .buffers()
                .iter()
                .map(|b| {
                    let o = end.div_ceil(b.alignment) * b.alignment;
                    end = o + b.size;
                    o
                })
                .collect();
            Solution::within_capacity(
                problem,
                Plan::from_offsets(offsets),
                problem.max_load(),
                NotFoundReason::Heuristic,
            )
        }
    }

    /// What `Spy` saw of `problem` solved with prepared facts of it.
    fn seen(problem: &Problem, gap_aware: bool, ignore_hints: bool) -> Vec<(usize, bool)> {
        let spy = Spy {
            gap_aware,
            seen: Mutex::new(Vec::new()),
        };
        let options = SolveOptions {
            prepared: Some(Arc::new(Prepared::bounds(problem, &Stop::never()).unwrap())),
            ignore_hints,
            ..SolveOptions::default()
        };
        let s = spy.solve(problem, &options).unwrap();
        crate::plan::validate(problem, &s.plan).unwrap();
        spy.seen.into_inner().unwrap()
    }

    #[test]
    fn prepared_facts_reach_only_the_problem_they_describe() {
        let b = |id: &str, size| Buffer::new(id, 0, 4, size);
        let plain = Problem::new(vec![b("a", 4), b("b", 8)], None).unwrap();
        assert_eq!(seen(&plain, false, false), vec![(2, true)]);
        // Zero-size buffers set aside: another problem.
        let zero = Problem::new(vec![b("a", 4), b("z", 0), b("b", 8)], None).unwrap();
        assert_eq!(seen(&zero, false, false), vec![(2, false)]);
        // Hints ignored: another problem.
        let hinted = plain.clone().with_hints(&[Some(8), None]).unwrap();
        assert_eq!(seen(&hinted, false, true), vec![(2, false)]);
        assert_eq!(seen(&hinted, false, false), vec![(2, true)]);
        // Gaps: the hulls for a solver blind to gaps, the problem itself
        // for one that sees them.
        let gaps = Gaps::from_lists(&[vec![Gap::idle(1, 2)], vec![]]).unwrap();
        let gapped = Problem::new_with_gaps(vec![b("a", 4), b("b", 8)], gaps, None).unwrap();
        assert_eq!(seen(&gapped, false, false), vec![(2, false)]);
        assert_eq!(seen(&gapped, true, false), vec![(2, true)]);
    }
}
