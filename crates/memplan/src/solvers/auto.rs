//! The portfolio users run by default: every greedy variant, then the
//! exact search, boxing and (with a capacity) tela in parallel, each with
//! the whole work budget ([`SolveOptions::effort`]; without one,
//! [`EFFORT_PER_SECOND`] times the time limit, else [`Effort::DEFAULT`]:
//! [`budget`]), as if it ran alone. Reports the best plan, who
//! found it, and the best proven lower bound.
//!
//! Determinism: every member is deterministic for a seed and a work
//! budget, and the portfolio keeps it so. Members have a priority (search,
//! tela, boxing; on large instances the skyline, then boxing); a conclusive
//! answer (a proof of optimality, a plan within the capacity, a proof that
//! none exists) stops only the members of lower priority, and the answer
//! is chosen by priority among conclusive ones, else by makespan with ties
//! to the higher priority. A member stopped early thus never changes the
//! answer, and the plan is the same whatever the machine's load. The time
//! limit is only a safety cap: a result it cuts short says so
//! ([`Solution::stopped`]).
//!
//! Progress: the portfolio publishes the best makespan and lower bound in
//! [`SolveOptions::progress`] as they improve (boxing and search publish
//! theirs while they run), for a caller to display.

use crate::stop::uncut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::plan::Measured;
use crate::problem::Problem;
use crate::solver::{
    Effort, NotFoundReason, Prepared, Solution, SolveError, SolveOptions, Solver, Stop, Stopped,
};
use crate::solvers::anytime::{self, First};
use crate::solvers::boxing::{affordable_iterations, Boxing, BoxingOptions, Seeded};
use crate::solvers::greedy::{Fit, Greedy, Order, Placer};
use crate::solvers::search::{Search, SearchOptions};
use crate::solvers::tela::{Tela, TelaOptions};

/// Options of the portfolio.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoOptions {
    /// The exact search joins the portfolio only up to this many buffers
    /// (beyond, its time is better spent on boxing iterations).
    pub search_max_buffers: usize,
    /// With a capacity at which the search's exact fill decides (zero or
    /// little slack, [`Search::fills`]), the other members wait for the
    /// search up to [`HEAD_START`] (at most an eighth of the time left)
    /// before they start: the fill's lanes get both cores, and the
    /// search, first in priority, usually ends the solve before the
    /// others begin. A wait on the clock, not on work: it changes when
    /// members run, never what they answer (their budgets are in work).
    pub head_start: bool,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            search_max_buffers: 5000,
            head_start: true,
        }
    }
}

/// The `auto` portfolio solver. Its work budget is
/// [`SolveOptions::effort`], else derived from the time limit ([`budget`]:
/// [`EFFORT_PER_SECOND`] per second), else [`Effort::DEFAULT`]; its time limit
/// (default [`DEFAULT_TIME_LIMIT`]) is a safety cap, and 0 means greedy
/// only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Auto {
    /// Which members run.
    pub options: AutoOptions,
}

/// Buffers per unit of effort up to which large instances run the §3.1
/// skyline beside boxing (its cost grows with the buffers, so the effort
/// bounds how many it may take).
const SKYLINE_BUFFERS_PER_EFFORT: u64 = 500_000;

/// Buffers per unit of effort up to which that skyline runs in every
/// order, not only contention and area: on guillotine-cut perfect
/// packings the start order leaves less fragmentation, and at this many
/// buffers per unit of effort five orders stay cheap beside the budget
/// (figures in `docs/benchmarks.md`).
const SKYLINE_ALL_ORDERS_BUFFERS_PER_EFFORT: u64 = 20_000;

/// The longest the other members wait for the search's exact fill
/// ([`AutoOptions::head_start`]).
pub const HEAD_START: Duration = Duration::from_millis(500);

/// The safety cap of `auto` when the caller gives no time limit: well
/// above what the default effort takes on a loaded machine.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(30);

/// Units of effort (multiples of [`Effort::DEFAULT`]) per second of a
/// time limit given without an effort ([`budget`]): a fixed constant for
/// the reference machine (the 2-core development machine, on which
/// [`Effort::DEFAULT`] is about one second of the members' work), never
/// measured at run time, so that the same limit and seed give the same
/// plan on any machine and any load (unless the clock, still a safety cap,
/// cuts the run).
pub const EFFORT_PER_SECOND: f64 = 1.0;

/// Time limits from this one on are no limit, for the budget as for the
/// stop token: no instant is that far ahead (2^63 - 1 seconds).
const UNBOUNDED: Duration = Duration::from_secs(i64::MAX as u64);

/// The work budget of `auto`: the caller's effort when given; else, with a
/// positive time limit, [`EFFORT_PER_SECOND`] times the limit (a 60 s limit
/// buys about 60 s of work); else (no limit, one of 2^63 - 1 s or more,
/// or 0, which runs the greedy plans only) [`Effort::DEFAULT`].
pub fn budget(time_limit: Option<Duration>, effort: Option<Effort>) -> Effort {
    match (effort, time_limit) {
        (Some(effort), _) => effort,
        (None, Some(limit)) if !limit.is_zero() && limit < UNBOUNDED => {
            Effort::new(limit.as_secs_f64() * EFFORT_PER_SECOND).unwrap_or(Effort::DEFAULT)
        }
        (None, _) => Effort::DEFAULT,
    }
}

/// The stop flags of members by priority: a member's conclusive answer
/// raises the flags of the members after it.
struct Priorities {
    flags: Vec<Arc<AtomicBool>>,
}

impl Priorities {
    fn new(members: usize) -> Self {
        Priorities {
            flags: (0..members)
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
        }
    }

    /// The options of member `rank`: the caller's cancel flags and its own.
    fn options(&self, rank: usize, options: &SolveOptions) -> SolveOptions {
        SolveOptions {
            cancel: options.cancel.with(self.flags[rank].clone()),
            ..options.clone()
        }
    }

    /// Member `rank` has a conclusive answer: the later ones stop.
    fn concluded(&self, rank: usize) {
        for flag in &self.flags[rank + 1..] {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

impl Solver for Auto {
    fn name(&self) -> String {
        "auto".into()
    }

    /// The greedy variants and the search exploit gaps, the other members
    /// plan hulls ([`crate::solver::hulls`]); the bounds are the gapped problem's.
    fn gap_aware(&self) -> bool {
        true
    }

    /// [`budget`], from the time limit as the caller gave it (the same
    /// limit gives the same budget however long the preparation took).
    fn effort(&self, options: &SolveOptions) -> Option<Effort> {
        Some(budget(options.time_limit, options.effort))
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let limit = options.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
        let effort = budget(options.time_limit, options.effort);
        // The one safety cap of the portfolio, from now: the bounds, the
        // greedy plans and every member end by it, and the answer says it
        // was cut when it passed. The bounds, once for every member; at
        // millions of buffers their sorts poll the clock too (a limit of
        // 0: greedy only, uncut).
        let cap = SolveOptions {
            time_limit: Some(limit),
            ..options.clone()
        }
        .stop();
        let stop = if limit.is_zero() {
            Stop::new(None, options.cancel.clone())
        } else {
            cap.clone()
        };
        // Beyond `search_max_buffers` buffers, and at scale under the
        // caller's time limit, the default greedy plan first, once for
        // every member (boxing's bootstrap), with the bounds from its index:
        // cut, it is the answer, as greedy's would be.
        let large = problem.len() > self.options.search_max_buffers && !limit.is_zero();
        let first = if large {
            anytime::greedy_first_from(problem, options, &cap, 0)
        } else if options.time_limit.is_some() && !limit.is_zero() {
            anytime::greedy_first(problem, options, &cap)
        } else {
            First::Usual
        };
        let greedy_name = || format!("auto/{}", Greedy::default().name());
        let (prepared, placer) = match first {
            First::Cut(mut result) => {
                if let Ok(s) = &mut result {
                    s.found_by = Some(greedy_name());
                }
                return result;
            }
            First::Done {
                prepared,
                plan,
                placer,
            } => (
                Arc::new(Prepared {
                    greedy: Some((Greedy::default().name(), plan)),
                    ..(*prepared).clone()
                }),
                placer.map(|placer| *placer),
            ),
            First::Usual => match options.prepared(problem, &stop) {
                Ok(prepared) => (prepared, None),
                Err(_) => {
                    // No time even for the bounds: the plan greedy gives
                    // in no time, with a weaker bound.
                    let plan = anytime::plan_within(problem, Greedy::default(), &stop).plan;
                    let mut s =
                        Solution::within_capacity(problem, plan, 0, NotFoundReason::TimeLimit)?;
                    s.found_by = Some(greedy_name());
                    s.stopped = cap.stopped();
                    return Ok(s);
                }
            },
        };
        let lower_bound = prepared.lower_bound;
        options.progress.raise_lower_bound(lower_bound);
        // Members run with the whole budget; the clock only caps them.
        let member_options = SolveOptions {
            time_limit: Some(cap.remaining().unwrap_or(limit)),
            effort: Some(effort),
            prepared: Some(prepared),
            ..options.clone()
        };
        let mut best = if large {
            self.solve_large(problem, &member_options, effort, &cap, placer)
        } else {
            drop(placer);
            self.solve_small(problem, &member_options, limit, &cap)
        };
        if let Ok(s) = &mut best {
            s.lower_bound = s.lower_bound.max(lower_bound);
            s.optimal = s.optimal || s.makespan == s.lower_bound;
            // Cut short by the caller or the safety cap: say so, the cap's
            // reason first (a member may say time limit for a cancel).
            // Not a conclusive answer, which the cut did not change.
            if !conclusive_plan(problem, s) {
                s.stopped = cap.stopped().or(s.stopped);
            }
        }
        best
    }
}

impl Auto {
    /// Up to `search_max_buffers` buffers: the best greedy variant, then
    /// search, tela (with a capacity) and boxing from that plan.
    fn solve_small(
        &self,
        problem: &Problem,
        options: &SolveOptions,
        limit: Duration,
        deadline: &Stop,
    ) -> Result<Solution, SolveError> {
        let prepared = uncut(|never| options.prepared(problem, never));
        let max_load = prepared.max_load;
        // Every variant runs to the end, unless the safety cap passes; with
        // a limit of 0 (greedy only), every variant runs.
        let stop = if limit.is_zero() {
            Stop::new(None, options.cancel.clone())
        } else {
            deadline.clone()
        };
        let (greedy, greedy_plan) = crate::solvers::anytime::best_variant(problem, &stop);
        options.progress.improve(greedy_plan.makespan(problem));
        let mut best = Solution::within_capacity(
            problem,
            greedy_plan.clone(),
            max_load,
            NotFoundReason::Heuristic,
        );
        let greedy_name = format!("auto/{}", greedy.name());
        if let Ok(s) = &mut best {
            s.found_by = Some(greedy_name.clone());
            s.stopped = deadline.stopped();
        }
        if conclusive(problem, &best) || problem.is_empty() {
            return best;
        }
        if limit.is_zero() || deadline.is_cut() {
            return best.map_err(|e| clock_miss(e, options));
        }
        // The members start from the greedy plan (search, once more, does
        // not run the variants again).
        let options = &SolveOptions {
            prepared: Some(Arc::new(Prepared {
                greedy: Some((greedy.name(), greedy_plan.clone())),
                ..(*prepared).clone()
            })),
            ..options.clone()
        };
        let search = Search {
            options: SearchOptions::default(),
        };
        // Boxing bootstraps from the prepared greedy plan (with gaps it
        // plans the hulls, a problem of its own, and starts afresh).
        let boxing = Boxing {
            options: BoxingOptions {
                iterations: u32::MAX,
                ..BoxingOptions::default()
            },
        };
        // Tela decides capacities; it does not minimise better than search.
        // Its member keeps the candidates of its own list only, and cuts
        // the row at sections with no slack only (the cut that loses no
        // plan); only when that ends without a plan does it try tela's
        // defaults (displaced buffers first, the cut at little slack too):
        // never worse than before (`TelaRetry`).
        let tela = problem.capacity.map(|_| TelaRetry {
            tela: Tela {
                options: TelaOptions {
                    displaced_first: false,
                    tight_slack: 0,
                    ..TelaOptions::default()
                },
            },
        });
        let mut members: Vec<&dyn Solver> = vec![&search];
        if let Some(tela) = &tela {
            members.push(tela);
        }
        members.push(&boxing);
        let head_start = problem
            .capacity
            .filter(|&c| self.options.head_start && search.fills(problem, c))
            .map(|_| HEAD_START.min(deadline.remaining().unwrap_or(limit) / 8));
        let results = run_by_priority(problem, options, &members, deadline, head_start);
        pick(problem, best, results, &greedy_name, options)
    }

    /// Beyond `search_max_buffers` buffers: search is out of reach, and the
    /// greedy variants cost tenths of a second that boxing (which starts
    /// from the default, size-first greedy plan, made once before the
    /// members start) puts to better use, as many iterations as the budget
    /// pays for in full (none when one costs more: boxing then returns
    /// that plan). Beside it, the §3.1 skyline in two orders when the
    /// budget covers it (on dense files such as iopddl S_1 it is cheap and
    /// leaves less fragmentation than boxing), in all five orders up to
    /// 20,000 buffers per unit of effort, first in priority.
    ///
    /// `placer`: the index of the greedy plan made before, which boxing's
    /// iterations place on (dropped at once when there are none).
    fn solve_large(
        &self,
        problem: &Problem,
        options: &SolveOptions,
        effort: Effort,
        deadline: &Stop,
        placer: Option<Placer<'_>>,
    ) -> Result<Solution, SolveError> {
        let iterations = affordable_iterations(effort, problem.len());
        let boxing = Seeded {
            boxing: Boxing {
                options: BoxingOptions {
                    iterations,
                    ..BoxingOptions::default()
                },
            },
            placer: placer.filter(|_| iterations > 0),
        };
        let n = problem.len() as u64;
        let skylines = if n <= effort.scale(SKYLINE_ALL_ORDERS_BUFFERS_PER_EFFORT) {
            Some(Skylines {
                orders: &SKYLINE_ALL_ORDERS,
            })
        } else if n <= effort.scale(SKYLINE_BUFFERS_PER_EFFORT) {
            Some(Skylines {
                orders: &SKYLINE_ORDERS,
            })
        } else {
            None
        };
        let mut members: Vec<&dyn Solver> = Vec::new();
        if let Some(skylines) = &skylines {
            members.push(skylines);
        }
        members.push(&boxing);
        let results = run_by_priority(problem, options, &members, deadline, None);
        let none = Err(SolveError::NotFound {
            capacity: problem.capacity.unwrap_or(0),
            reason: NotFoundReason::Heuristic,
            best_makespan: None,
            counters: Vec::new(),
        });
        let mut results = results.into_iter();
        let first = results.next().unwrap_or(none);
        let rest: Vec<_> = results.collect();
        pick(problem, first, rest, "auto", options)
    }
}

/// Auto's tela member: tela with the candidates of its own list only (and
/// the tight-section cut only where a section has no slack); when that
/// ends without a plan within its own budget (steps spent, or given up),
/// one more attempt with tela's default switches (displaced buffers first,
/// the cut at little slack too); and when that ends without one too, a
/// last attempt with learned backtracking (TelaMalloc §6, flags: off in
/// tela's defaults, docs/solvers.md). Each attempt has the same budget and
/// the deadline left; the first plan found is the answer, else the first
/// attempt's. All attempts are bounded by steps and seeded alike: the same
/// seed gives the same answer, and an earlier attempt's plan is never
/// replaced.
struct TelaRetry {
    tela: Tela,
}

/// The attempts after the first ([`TelaRetry`]): the name their plans are
/// found by, and tela's options.
fn tela_retries() -> [(&'static str, TelaOptions); 2] {
    [
        ("retry", TelaOptions::default()),
        (
            "learned",
            TelaOptions {
                learned_backtracking: true,
                ..TelaOptions::default()
            },
        ),
    ]
}

impl Solver for TelaRetry {
    fn name(&self) -> String {
        self.tela.name()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        self.tela.solve_positive(problem, options)
    }

    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
        // Every attempt ends by the first one's deadline.
        let stop = options.stop();
        let first = self.tela.solve(problem, options);
        // A give-up within the budget, not a proof or the clock.
        let gave_up = |e: &SolveError| {
            matches!(
                e,
                SolveError::NotFound {
                    reason: NotFoundReason::StepLimit | NotFoundReason::Heuristic,
                    ..
                }
            )
        };
        if !first.as_ref().is_err_and(gave_up) {
            return first;
        }
        for (label, tela_options) in tela_retries() {
            if stop.is_cut() {
                break;
            }
            let again = Tela {
                options: tela_options,
            };
            let options = &SolveOptions {
                time_limit: stop.remaining(),
                ..options.clone()
            };
            match again.solve(problem, options) {
                Ok(mut s) => {
                    s.found_by = Some(format!("{}/{label}", again.name()));
                    return Ok(s);
                }
                Err(e) if gave_up(&e) => {}
                Err(_) => break,
            }
        }
        first
    }
}

/// The greedy plan's miss when the exact members had no time: the
/// clock's (or the caller's), not the heuristic's.
fn clock_miss(error: SolveError, options: &SolveOptions) -> SolveError {
    match error {
        SolveError::NotFound {
            capacity,
            reason: NotFoundReason::Heuristic,
            best_makespan,
            counters,
        } => SolveError::NotFound {
            capacity,
            reason: if options.cancel.is_raised() {
                NotFoundReason::Interrupted
            } else {
                NotFoundReason::TimeLimit
            },
            best_makespan,
            counters,
        },
        other => other,
    }
}

/// The orders of the skyline on large instances: contention first.
const SKYLINE_ORDERS: [Order; 2] = [Order::Contention, Order::Area];

/// Every order, those of [`SKYLINE_ORDERS`] first: the same plan whenever
/// one of them is (one of) the best.
const SKYLINE_ALL_ORDERS: [Order; 5] = [
    Order::Contention,
    Order::Area,
    Order::Start,
    Order::Lifetime,
    Order::Size,
];

/// The §3.1 skyline in several orders, one after the other, the best plan
/// (ties to the first order listed); each runs to the end unless stopped,
/// and an optimal plan ends the run.
struct Skylines {
    orders: &'static [Order],
}

impl Solver for Skylines {
    fn name(&self) -> String {
        "skyline".into()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let deadline = options.stop();
        let stopped = || SolveError::NotFound {
            capacity: problem.capacity.unwrap_or(0),
            reason: NotFoundReason::TimeLimit,
            best_makespan: None,
            counters: Vec::new(),
        };
        let max_load = uncut(|never| options.prepared(problem, never)).max_load;
        // One order after the other, the best plan kept (ties to the
        // earlier order); an optimal plan ends the run, since the later
        // orders could only tie with it. A run cut by the safety cap keeps
        // the best plan of the orders done.
        let stop = deadline.clone();
        let run = || {
            let mut best: Option<(Greedy, Measured)> = None;
            for &order in self.orders {
                let variant = Greedy {
                    order,
                    fit: Fit::Skyline,
                };
                let Some((greedy, plan)) =
                    crate::solvers::anytime::best_of(problem, &[variant], None, &stop)
                else {
                    break;
                };
                // Measured by `best_of`'s pass: nothing to measure again.
                let makespan = plan.makespan(problem);
                let plan = Measured::new(plan.plan, makespan);
                if best
                    .as_ref()
                    .is_none_or(|b| makespan < b.1.makespan(problem))
                {
                    best = Some((greedy, plan));
                }
                if makespan <= max_load {
                    break;
                }
            }
            best
        };
        // In a one-thread pool of its own: in the global pool, its work
        // could wait for boxing's to end, past the deadline.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().ok();
        let found = match &pool {
            Some(pool) => pool.install(run),
            None => run(),
        };
        let (greedy, plan) = found.ok_or_else(stopped)?;
        let mut s =
            Solution::within_capacity_of(problem, plan, max_load, NotFoundReason::Heuristic)?;
        s.found_by = Some(greedy.name());
        Ok(s)
    }
}

/// Whether `result` ends the portfolio: a proven optimum, a plan within
/// the capacity, or a proof that none exists.
fn conclusive(problem: &Problem, result: &Result<Solution, SolveError>) -> bool {
    match result {
        Ok(s) => conclusive_plan(problem, s),
        Err(SolveError::NotFound { reason, .. }) => *reason == NotFoundReason::ProvenInfeasible,
    }
}

/// Whether a plan ends the portfolio: proven optimal, or within the
/// capacity.
fn conclusive_plan(problem: &Problem, s: &Solution) -> bool {
    s.optimal || problem.capacity.is_some()
}

/// Runs `members` in parallel, each in a thread of its own; a conclusive
/// answer stops the members after it. Results in the members' order,
/// named `auto/NAME`. Their time limit is what is left of `deadline` (one
/// safety cap for the portfolio: a member that gets a core late does not
/// get a limit anew). With a `head_start`, the members after the first
/// wait until it ends or the head start passes (timing only: the answers
/// are the same).
fn run_by_priority(
    problem: &Problem,
    options: &SolveOptions,
    members: &[&dyn Solver],
    deadline: &Stop,
    head_start: Option<Duration>,
) -> Vec<Result<Solution, SolveError>> {
    let priorities = Priorities::new(members.len());
    // Whether the first member has ended, for the head start's wait.
    let first_ended = (std::sync::Mutex::new(false), std::sync::Condvar::new());
    std::thread::scope(|scope| {
        let handles: Vec<_> = members
            .iter()
            .enumerate()
            .map(|(rank, solver)| {
                let priorities = &priorities;
                let first_ended = &first_ended;
                scope.spawn(move || {
                    if let Some(wait) = head_start.filter(|_| rank > 0) {
                        let (ended, signal) = first_ended;
                        if let Ok(guard) = ended.lock() {
                            // A poisoned lock or a timeout: start anyway.
                            let _ = signal.wait_timeout_while(guard, wait, |ended| !*ended);
                        }
                    }
                    let mut member_options = priorities.options(rank, options);
                    if let Some(left) = deadline.remaining() {
                        member_options.time_limit = Some(left);
                    }
                    let result = solver.solve(problem, &member_options);
                    if conclusive(problem, &result) {
                        priorities.concluded(rank);
                    }
                    if rank == 0 {
                        let (ended, signal) = first_ended;
                        if let Ok(mut ended) = ended.lock() {
                            *ended = true;
                        }
                        signal.notify_all();
                    }
                    if let Ok(s) = &result {
                        options.progress.improve(s.makespan);
                        options.progress.raise_lower_bound(s.lower_bound);
                    }
                    result.map(|mut s| {
                        let name = s.found_by.take().unwrap_or_else(|| solver.name());
                        s.found_by = Some(format!("auto/{name}"));
                        // Stopped by a member of higher priority: no
                        // matter (it has a conclusive answer).
                        if s.stopped == Some(Stopped::Interrupted) && !options.cancel.is_raised() {
                            s.stopped = None;
                        }
                        s
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                // A member that panicked: the others answer.
                crate::solver::joined(h, || {
                    Err(SolveError::NotFound {
                        capacity: problem.capacity.unwrap_or(0),
                        reason: NotFoundReason::Heuristic,
                        best_makespan: None,
                        counters: Vec::new(),
                    })
                })
            })
            .collect()
    })
}

/// The answer from `first` (the highest priority) and `rest` (by
/// priority): the first conclusive one, else the lowest makespan (ties to
/// the earlier), with the best lower bound and any proof kept. An answer
/// that is not conclusive is cut short if any member was (a member that
/// stops ahead of the clock to finish its plan leaves a better plan
/// unfound, whichever plan is chosen).
fn pick(
    problem: &Problem,
    first: Result<Solution, SolveError>,
    rest: Vec<Result<Solution, SolveError>>,
    fallback_name: &str,
    options: &SolveOptions,
) -> Result<Solution, SolveError> {
    let all: Vec<Result<Solution, SolveError>> = std::iter::once(first).chain(rest).collect();
    let cut = all.iter().find_map(|r| member_cut(r, options));
    let conclusive_answer = all.iter().any(|r| conclusive(problem, r));
    let bound = all
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|s| s.lower_bound))
        .max()
        .unwrap_or(0);
    let chosen = match all.iter().position(|r| conclusive(problem, r)) {
        // Conclusive with a capacity: the first by priority.
        Some(k) if problem.capacity.is_some() => all.into_iter().nth(k),
        _ => all.into_iter().reduce(better),
    };
    let mut chosen = chosen.unwrap_or_else(|| {
        Err(SolveError::NotFound {
            capacity: problem.capacity.unwrap_or(0),
            reason: NotFoundReason::Heuristic,
            best_makespan: None,
            counters: Vec::new(),
        })
    });
    if let Ok(s) = &mut chosen {
        s.lower_bound = s.lower_bound.max(bound).min(s.makespan);
        s.optimal = s.makespan == s.lower_bound;
        if s.found_by.is_none() {
            s.found_by = Some(fallback_name.to_string());
        }
        if !conclusive_answer && !s.optimal {
            s.stopped = s.stopped.or(cut);
        }
    }
    chosen
}

/// Whether a member's result was cut short by the clock or by the caller
/// (not by a member of higher priority: its answer is conclusive). Once
/// the caller has cancelled, any cut is the caller's (a member may report
/// its deadline, raised by the cancel, as a time limit).
fn member_cut(result: &Result<Solution, SolveError>, options: &SolveOptions) -> Option<Stopped> {
    let cut = match result {
        Ok(s) => s.stopped,
        Err(SolveError::NotFound { reason, .. }) => match reason {
            NotFoundReason::TimeLimit => Some(Stopped::TimeLimit),
            NotFoundReason::Interrupted if options.cancel.is_raised() => Some(Stopped::Interrupted),
            _ => None,
        },
    };
    if options.cancel.is_raised() {
        cut.map(|_| Stopped::Interrupted)
    } else {
        cut
    }
}

/// The better of two outcomes: a plan beats none, a lower makespan beats a
/// higher one (ties keep `a`); proofs (lower bounds, infeasibility) are
/// kept from both.
fn better(
    a: Result<Solution, SolveError>,
    b: Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    match (a, b) {
        (Ok(mut x), Ok(y)) => {
            let bound = x.lower_bound.max(y.lower_bound);
            if y.makespan < x.makespan {
                x = y;
            }
            x.lower_bound = bound;
            x.optimal = x.optimal || x.makespan == bound;
            Ok(x)
        }
        (Ok(x), Err(e)) | (Err(e), Ok(x)) => {
            // A plan within the capacity and a proof of infeasibility
            // cannot both hold; the plan (validated by the caller) wins.
            let _ = e;
            Ok(x)
        }
        (Err(x), Err(y)) => {
            let proven = |e: &SolveError| {
                matches!(
                    e,
                    SolveError::NotFound {
                        reason: NotFoundReason::ProvenInfeasible,
                        ..
                    }
                )
            };
            let best_makespan = |e: &SolveError| match e {
                SolveError::NotFound { best_makespan, .. } => best_makespan.unwrap_or(u64::MAX),
            };
            // Keep the proof if either has one, else the reason of a member
            // that was stopped (its search might have decided) over a
            // heuristic's miss, and the lowest makespan seen.
            let heuristic = |e: &SolveError| {
                matches!(
                    e,
                    SolveError::NotFound {
                        reason: NotFoundReason::Heuristic,
                        ..
                    }
                )
            };
            let m = best_makespan(&x).min(best_makespan(&y));
            let kept = if (proven(&y) && !proven(&x)) || (heuristic(&x) && !heuristic(&y)) {
                y
            } else {
                x
            };
            let SolveError::NotFound {
                capacity,
                reason,
                counters,
                ..
            } = kept;
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan: (m != u64::MAX).then_some(m),
                counters,
            })
        }
    }
}

/// Plans `problem` with the default portfolio: the library's entry point.
pub fn plan(problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
    Auto::default().solve(problem, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::plan::validate;
    use crate::solver::Cancel;
    use crate::solvers::greedy::Greedy;
    use std::time::Instant;

    /// A safety cap of `seconds` at the default effort (what a limit
    /// without an effort meant before the effort came from the limit).
    fn options(seconds: f64) -> SolveOptions {
        SolveOptions {
            time_limit: Some(Duration::from_secs_f64(seconds)),
            effort: Some(Effort::DEFAULT),
            ..SolveOptions::default()
        }
    }

    /// A time limit of `seconds` and no effort: auto derives its own.
    fn limit_only(seconds: f64) -> SolveOptions {
        SolveOptions {
            time_limit: Some(Duration::from_secs_f64(seconds)),
            ..SolveOptions::default()
        }
    }

    #[test]
    fn the_effort_of_a_time_limit_is_the_constant_times_the_limit() {
        assert_eq!(EFFORT_PER_SECOND, 1.0);
        for seconds in [0.001, 0.05, 0.5, 1.0, 20.0, 60.0, 3600.0] {
            let limit = Some(Duration::from_secs_f64(seconds));
            let derived = budget(limit, None);
            assert_eq!(derived, Effort::new(seconds * EFFORT_PER_SECOND).unwrap());
            assert_eq!(derived.factor(), seconds, "{seconds} s");
            // Through the solver, from the limit as the caller gave it.
            assert_eq!(Auto::default().effort(&limit_only(seconds)), Some(derived));
        }
        // 60 s buy 60 default budgets: 60 times the search steps.
        let sixty = budget(Some(Duration::from_secs(60)), None);
        assert_eq!(sixty.scale(150_000_000), 9_000_000_000);
        // An explicit effort wins; no limit, or 0 (greedy only): the default.
        let half = Effort::new(0.5).unwrap();
        assert_eq!(budget(Some(Duration::from_secs(60)), Some(half)), half);
        assert_eq!(budget(None, Some(half)), half);
        assert_eq!(budget(None, None), Effort::DEFAULT);
        assert_eq!(budget(Some(Duration::ZERO), None), Effort::DEFAULT);
        assert_eq!(
            Auto::default().effort(&SolveOptions::default()),
            Some(Effort::DEFAULT)
        );
        // Long limits buy long work; a limit no instant can hold is no
        // limit, as for the stop token.
        assert!(budget(Some(Duration::from_secs(1 << 40)), None) > Effort::new(1e12).unwrap());
        for unbounded in [UNBOUNDED, crate::solver::seconds(1.85e19), Duration::MAX] {
            assert_eq!(budget(Some(unbounded), None), Effort::DEFAULT);
        }
    }

    /// Perfect instance (zero-fragmentation plan exists) where no greedy
    /// variant reaches the max load.
    fn hard_perfect() -> Problem {
        generate(Kind::Perfect, 60, 2).problem
    }

    /// A random instance of 60 buffers, the first fixed at offset 777:
    /// the search is not complete with fixed buffers, so auto does not
    /// prove its plan optimal and stops when its budget is spent (boxing's
    /// iterations), in about a sixth of a second per unit of effort on
    /// the loaded 2-core development machine.
    fn spends_its_budget() -> Problem {
        let p = generate(Kind::Random, 60, 5).problem;
        let mut buffers = p.buffers().to_vec();
        buffers[0] = buffers[0].clone().fixed(777);
        Problem::new(buffers, None).unwrap()
    }

    #[test]
    fn the_head_start_changes_when_members_run_not_what_they_answer() {
        use crate::solvers::search::Search;
        // A perfect packing at its max load, beyond the greedy variants:
        // the exact fill decides it.
        let p = generate(Kind::Perfect, 120, 2).problem;
        let max_load = p.max_load();
        let at = p.clone().with_capacity(Some(max_load));
        assert!(Search::default().fills(&at, max_load));
        // Well above the max load there is slack: no head start.
        assert!(!Search::default().fills(&at, 2 * max_load));
        let mut plans = Vec::new();
        for head_start in [true, false] {
            let auto = Auto {
                options: AutoOptions {
                    head_start,
                    ..AutoOptions::default()
                },
            };
            let s = auto.solve(&at, &options(10.0)).unwrap();
            validate(&at, &s.plan).unwrap();
            assert_eq!(s.makespan, max_load);
            assert_eq!(s.found_by.as_deref(), Some("auto/search"));
            plans.push(s.plan);
        }
        assert_eq!(plans[0], plans[1]);
    }

    #[test]
    fn the_same_seed_and_limit_give_the_same_plan() {
        let p = spends_its_budget();
        // 1 s of limit: effort 1, spent long before the clock passes.
        let first = plan(&p, &limit_only(1.0)).unwrap();
        let second = plan(&p, &limit_only(1.0)).unwrap();
        for s in [&first, &second] {
            assert_eq!(validate(&p, &s.plan), Ok(()));
            assert_eq!(s.stopped, None, "cut by the clock, not by the effort");
            assert!(!s.optimal);
        }
        assert_eq!(first.plan, second.plan);
        assert_eq!(first.makespan, 1_096_477);
        assert_eq!(first.found_by.as_deref(), Some("auto/search"));
        // The same plan as the effort the limit converts to, without a
        // limit: the limit set the budget, the clock did not cut.
        let by_effort = plan(
            &p,
            &SolveOptions {
                effort: Effort::new(EFFORT_PER_SECOND),
                ..SolveOptions::default()
            },
        )
        .unwrap();
        assert_eq!(by_effort.plan, first.plan);
        // Another seed, the same limit, twice: the same plan again.
        let seeded = SolveOptions {
            seed: 7,
            ..limit_only(1.0)
        };
        let a = plan(&p, &seeded).unwrap();
        let b = plan(&p, &seeded).unwrap();
        assert_eq!((a.stopped, b.stopped), (None, None));
        assert_eq!(a.plan, b.plan);
    }

    #[test]
    fn zero_budget_is_the_best_greedy_variant() {
        let p = hard_perfect();
        let s = plan(&p, &options(0.0)).unwrap();
        let best = Greedy::all()
            .map(|g| g.solve(&p, &SolveOptions::default()).unwrap().makespan)
            .min()
            .unwrap();
        assert_eq!(s.makespan, best);
        assert!(s.makespan > p.max_load());
        assert!(s.found_by.unwrap().starts_with("auto/greedy/"));
        assert!(!s.optimal);
    }

    #[test]
    fn progress_reports_the_best_plan_and_the_bound() {
        let p = hard_perfect();
        let options = options(0.0);
        assert_eq!(options.progress.best_makespan(), None);
        let s = plan(&p, &options).unwrap();
        assert_eq!(options.progress.best_makespan(), Some(s.makespan));
        assert_eq!(options.progress.lower_bound(), p.max_load());
        // Clones share the values; lower makespans and higher bounds win.
        let view = options.progress.clone();
        options.progress.improve(s.makespan + 1);
        options.progress.raise_lower_bound(1);
        assert_eq!(view.best_makespan(), Some(s.makespan));
        assert_eq!(view.lower_bound(), p.max_load());
    }

    #[test]
    fn budget_reaches_and_proves_the_optimum() {
        let p = hard_perfect();
        let s = plan(&p, &options(20.0)).unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert_eq!(s.makespan, p.max_load());
        assert_eq!(s.lower_bound, p.max_load());
        assert!(s.optimal);
    }

    #[test]
    fn capacity_stops_at_the_first_plan_within_it() {
        let p = hard_perfect();
        let loose = p.clone().with_capacity(Some(p.max_load() * 2));
        let s = plan(&loose, &options(20.0)).unwrap();
        assert!(s.makespan <= p.max_load() * 2);
        assert!(s.found_by.unwrap().starts_with("auto/greedy/"));
        let below = p.clone().with_capacity(Some(p.max_load() - 1));
        let e = plan(&below, &options(20.0)).unwrap_err();
        assert!(matches!(
            e,
            SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            }
        ));
    }

    #[test]
    fn raised_cancel_returns_the_greedy_plan_at_once() {
        let p = hard_perfect();
        let flag = Arc::new(AtomicBool::new(true));
        let started = Instant::now();
        let s = plan(
            &p,
            &SolveOptions {
                time_limit: Some(Duration::from_secs(60)),
                seed: 0,
                cancel: Cancel::new(flag),
                ..SolveOptions::default()
            },
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(validate(&p, &s.plan), Ok(()));
    }

    #[test]
    fn large_instances_get_boxing_and_the_skyline() {
        // "Large" lowered to 100 buffers to keep the test small.
        let auto = Auto {
            options: AutoOptions {
                search_max_buffers: 100,
                ..AutoOptions::default()
            },
        };
        let p = generate(Kind::Random, 400, 3).problem;
        let s = auto.solve(&p, &options(0.3)).unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        let skyline = Greedy {
            order: Order::Contention,
            fit: Fit::Skyline,
        }
        .solve(&p, &SolveOptions::default())
        .unwrap();
        let boxed = Boxing::default().solve(&p, &options(0.05)).unwrap();
        assert!(
            s.makespan <= skyline.makespan,
            "{} > {}",
            s.makespan,
            skyline.makespan
        );
        assert!(s.makespan <= boxed.makespan.max(skyline.makespan));
        let by = s.found_by.unwrap();
        assert!(by == "auto/boxing" || by.ends_with("/skyline"), "{by}");
        // The skyline reaches the max load of this layered instance (boxing's
        // first plan does not): boxing is stopped long before its budget.
        let p = generate(Kind::Layered, 400, 1).problem;
        let started = Instant::now();
        let s = auto.solve(&p, &options(20.0)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert!(s.optimal);
    }

    /// Beyond `search_max_buffers`, boxing runs only the iterations the
    /// budget pays for in full: with none (and no skyline), the answer is
    /// the default greedy plan, made once before the members start, with
    /// the bounds of its index; with one, the same iterations as boxing
    /// alone.
    #[test]
    fn large_instances_run_only_the_iterations_the_budget_pays_for() {
        let auto = Auto {
            options: AutoOptions {
                search_max_buffers: 100,
                ..AutoOptions::default()
            },
        };
        let p = generate(Kind::Perfect, 3000, 2).problem;
        let with = |factor| SolveOptions {
            time_limit: Some(Duration::from_secs(600)),
            effort: Effort::new(factor),
            ..SolveOptions::default()
        };
        // A thousandth of the default: 100 buffer-iterations, a skyline
        // up to 500 buffers.
        let s = auto.solve(&p, &with(0.001)).unwrap();
        validate(&p, &s.plan).unwrap();
        let greedy = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        assert_eq!(s.plan, greedy.plan);
        assert_eq!(s.found_by.as_deref(), Some("auto/boxing"));
        assert!(s.counters.contains(&("iterations", 0)));
        assert_eq!(s.lower_bound, greedy.lower_bound);
        // 0.03 of the default pays for one iteration on 3000 buffers.
        let one = with(0.03);
        assert_eq!(
            affordable_iterations(Effort::new(0.03).unwrap(), p.len()),
            1
        );
        let boxed = Boxing::default().solve(&p, &one).unwrap();
        let s = auto.solve(&p, &one).unwrap();
        validate(&p, &boxed.plan).unwrap();
        validate(&p, &s.plan).unwrap();
        assert!(s.makespan <= boxed.makespan);
        assert!(boxed.counters.contains(&("iterations", 1)));
    }

    /// Within the budget, large instances get the skyline in every order:
    /// on guillotine-cut perfect packings the start order often wins,
    /// which contention and area alone, and boxing, miss.
    #[test]
    fn large_instances_get_the_skyline_in_every_order_within_budget() {
        let auto = Auto {
            options: AutoOptions {
                search_max_buffers: 100,
                ..AutoOptions::default()
            },
        };
        let mut won_by_others = 0;
        for seed in 1..=4 {
            let p = generate(Kind::Perfect, 1000, seed).problem;
            let s = auto.solve(&p, &options(20.0)).unwrap();
            assert_eq!(validate(&p, &s.plan), Ok(()));
            let skyline = |order| {
                Greedy {
                    order,
                    fit: Fit::Skyline,
                }
                .solve(&p, &SolveOptions::default())
                .unwrap()
                .makespan
            };
            let best = Order::ALL.into_iter().map(skyline).min().unwrap();
            assert!(s.makespan <= best, "seed {seed}: {} > {best}", s.makespan);
            let two = skyline(Order::Contention).min(skyline(Order::Area));
            won_by_others += usize::from(best < two);
        }
        // The test means something: other orders beat both in some seeds.
        assert!(won_by_others > 0);
    }

    #[test]
    fn better_keeps_the_lower_makespan_and_the_higher_bound() {
        let p = hard_perfect();
        let g = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let mut worse = g.clone();
        worse.makespan += 10;
        worse.lower_bound += 5;
        let b = better(Ok(worse), Ok(g.clone())).unwrap();
        assert_eq!(b.makespan, g.makespan);
        assert_eq!(b.lower_bound, g.lower_bound + 5);
        let err = SolveError::NotFound {
            capacity: 1,
            reason: NotFoundReason::TimeLimit,
            best_makespan: Some(9),
            counters: Vec::new(),
        };
        let proof = SolveError::NotFound {
            capacity: 1,
            reason: NotFoundReason::ProvenInfeasible,
            best_makespan: None,
            counters: Vec::new(),
        };
        assert_eq!(
            better(Err(err), Err(proof)).unwrap_err(),
            SolveError::NotFound {
                capacity: 1,
                reason: NotFoundReason::ProvenInfeasible,
                best_makespan: Some(9),
                counters: Vec::new(),
            }
        );
    }

    /// Without a plan within the capacity, a member out of time (its
    /// search might have decided) names the reason over a heuristic's
    /// miss, whichever comes first, with the lowest makespan either saw
    /// (not "heuristic's plan does not fit" when search and tela ran out
    /// of time).
    #[test]
    fn a_member_out_of_time_names_the_reason_over_a_heuristic_miss() {
        let miss = |reason, best| SolveError::NotFound {
            capacity: 100,
            reason,
            best_makespan: Some(best),
            counters: Vec::new(),
        };
        let want = miss(NotFoundReason::TimeLimit, 120);
        let (heuristic, clock) = (
            miss(NotFoundReason::Heuristic, 120),
            miss(NotFoundReason::TimeLimit, 130),
        );
        assert_eq!(
            better(Err(heuristic.clone()), Err(clock.clone())).unwrap_err(),
            want
        );
        assert_eq!(better(Err(clock), Err(heuristic)).unwrap_err(), want);
    }

    /// A member that stops a little ahead of the clock (to finish its
    /// plan) cuts the portfolio short even when the plan kept is another
    /// member's, uncut (a flaky miss of the C API's test, once).
    #[test]
    fn a_cut_member_cuts_the_answer() {
        let p = hard_perfect();
        let g = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        assert!(!g.optimal && g.stopped.is_none());
        assert_eq!(validate(&p, &g.plan), Ok(()));
        let mut cut = g.clone();
        cut.makespan += 1;
        cut.stopped = Some(Stopped::TimeLimit);
        let options = SolveOptions::default();
        let s = pick(&p, Ok(g.clone()), vec![Ok(cut)], "auto", &options).unwrap();
        assert_eq!(
            (s.makespan, s.stopped),
            (g.makespan, Some(Stopped::TimeLimit))
        );
        let stopped_of = |first, rest, options: &SolveOptions| {
            pick(&p, first, rest, "auto", options).unwrap().stopped
        };
        // A member out of time without a plan cuts it too.
        let out = |reason| {
            Err(SolveError::NotFound {
                capacity: 0,
                reason,
                best_makespan: None,
                counters: Vec::new(),
            })
        };
        assert_eq!(
            stopped_of(
                Ok(g.clone()),
                vec![out(NotFoundReason::TimeLimit)],
                &options
            ),
            Some(Stopped::TimeLimit)
        );
        // Stopped by a member of higher priority (the caller did not
        // cancel): not a cut.
        assert_eq!(
            stopped_of(
                Ok(g.clone()),
                vec![out(NotFoundReason::Interrupted)],
                &options
            ),
            None
        );
        let cancelled = SolveOptions {
            cancel: crate::solver::Cancel::new(Arc::new(AtomicBool::new(true))),
            ..SolveOptions::default()
        };
        assert_eq!(
            stopped_of(
                Ok(g.clone()),
                vec![out(NotFoundReason::Interrupted)],
                &cancelled
            ),
            Some(Stopped::Interrupted)
        );
        // A member whose deadline the cancel raised, saying time limit
        // (the skylines): the caller's interrupt (a review found it
        // reported as a time limit).
        assert_eq!(
            stopped_of(
                out(NotFoundReason::TimeLimit),
                vec![Ok(g.clone())],
                &cancelled
            ),
            Some(Stopped::Interrupted)
        );
        // Nor when the answer is conclusive (here, optimal).
        let mut optimal = g.clone();
        optimal.lower_bound = optimal.makespan;
        optimal.optimal = true;
        assert_eq!(
            stopped_of(Ok(optimal), vec![out(NotFoundReason::TimeLimit)], &options),
            None
        );
    }

    /// Auto's tela member keeps tela's plan when it finds one; retries
    /// with tela's defaults only when tela ends without one within its
    /// budget, and with learned backtracking only when that ends without
    /// one too, keeping the first plan found; and gives the same answer
    /// twice (perfect packings of 120 buffers at 1.01 times their max
    /// load, a small budget: at the max load itself, the skyline holes
    /// find them all at once).
    #[test]
    fn the_tela_member_retries_only_without_a_plan() {
        let member = TelaRetry {
            tela: Tela {
                options: TelaOptions {
                    displaced_first: false,
                    ..TelaOptions::default()
                },
            },
        };
        let options = SolveOptions {
            effort: Effort::new(0.005),
            ..SolveOptions::default()
        };
        let [(_, retry), (_, learned)] = tela_retries();
        assert!(!retry.learned_backtracking && learned.learned_backtracking);
        let (retry, learned) = (Tela { options: retry }, Tela { options: learned });
        let mut by = std::collections::BTreeMap::<&str, u32>::new();
        // Seed 31 is one where only the learned attempt finds a plan.
        for seed in (1..=10).chain([31]) {
            let p = generate(Kind::Perfect, 120, seed).problem;
            let p = p.clone().with_capacity(Some(p.max_load() * 101 / 100));
            let answer = member.solve(&p, &options);
            let again = member.solve(&p, &options);
            assert_eq!(
                answer.as_ref().ok().map(|s| &s.plan),
                again.as_ref().ok().map(|s| &s.plan)
            );
            // The attempts alone, in order: the answer is the first plan.
            let attempts = [&member.tela, &retry, &learned].map(|t| t.solve(&p, &options));
            let first = attempts.iter().position(Result::is_ok);
            let found_by = answer.as_ref().ok().and_then(|s| s.found_by.as_deref());
            match (first, &answer) {
                (Some(i), Ok(s)) => {
                    assert_eq!(validate(&p, &s.plan), Ok(()));
                    assert_eq!(attempts[i].as_ref().ok().map(|a| &a.plan), Some(&s.plan));
                    let label = [None, Some("tela/retry"), Some("tela/learned")][i];
                    assert_eq!(found_by, label, "seed {seed}");
                    *by.entry(label.unwrap_or("tela")).or_default() += 1;
                }
                (None, Err(_)) => *by.entry("none").or_default() += 1,
                (first, answer) => panic!("seed {seed}: {first:?} {:?}", answer.is_ok()),
            }
        }
        for label in ["tela", "tela/retry", "tela/learned"] {
            assert!(by.contains_key(label), "{by:?}");
        }
    }
}
