//! One request, one report: what an interface (the CLI, Python, C) asks of
//! a solve, checked once here, and what it gets back. The interfaces only
//! translate their arguments into a [`Request`] and its [`Report`] into
//! their own types; every default and every check of an option lives in
//! this module (the docs' table of defaults lists them).
//!
//! ```
//! use memplan::request::{Control, Request};
//! use memplan::{Buffer, Problem};
//!
//! let problem = Problem::new(
//!     vec![Buffer::new("a", 0, 2, 64), Buffer::new("b", 1, 3, 32)],
//!     None,
//! )?;
//! let mut request = Request::default(); // auto, no time limit, seed 0
//! request.set_time_limit(Some(1.0))?;
//! let report = request.run(&problem, &Control::default())?;
//! assert_eq!(report.makespan(), Some(96));
//! assert_eq!(report.json()["status"], "ok");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::named::{Named, UnknownName};
use crate::plan::validate;
use crate::pools::{
    solve_pools, validate_pools, PoolProblem, PoolSolution, PoolSolveError, Strategy,
};
use crate::problem::{Lifetimes, Problem};
use crate::solver::{
    run, Cancel, Effort, NotFoundReason, Progress, Solution, SolveError, SolveOptions, Solver,
    Stopped,
};
use crate::solvers::auto::{Auto, AutoOptions};
use crate::solvers::boxing::{Boxing, BoxingOptions};
use crate::solvers::greedy::Greedy;
use crate::solvers::search::{Search, SearchOptions};
use crate::solvers::tela::{Tela, TelaOptions};
use crate::solvers::SolverKind;
use crate::stable::{Stable, StableOptions};

/// The solver when none is named.
pub const DEFAULT_SOLVER: SolverKind = SolverKind::Auto;
/// The seed when none is given.
pub const DEFAULT_SEED: u64 = 0;
/// How lifetimes are read when no convention is named.
pub const DEFAULT_LIFETIMES: Lifetimes = Lifetimes::HalfOpen;
/// The pool strategy when none is named.
pub const DEFAULT_POOL_STRATEGY: Strategy = Strategy::Guided;
/// The time limit when none is given: none. `auto` and the guided pool
/// strategy then cap themselves at
/// [`crate::solvers::auto::DEFAULT_TIME_LIMIT`]; the other solvers run to
/// their end.
pub const DEFAULT_TIME_LIMIT: Option<Duration> = None;
/// The work budget when none is given: none (`auto` then works to
/// [`Effort::DEFAULT`], the other solvers to their own limits).
pub const DEFAULT_EFFORT: Option<Effort> = None;
/// The largest effort accepted, a multiple of the default: beyond it a
/// budget means nothing a user can wait for.
pub const MAX_EFFORT: f64 = 1e9;

/// A request option that is not valid, named as the interfaces name it
/// (`time_limit`, `effort`, `stable_makespan`...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError {
    /// The option, in the Python keyword's spelling.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for RequestError {}

impl RequestError {
    fn new(field: &'static str, message: impl Into<String>) -> Self {
        RequestError {
            field,
            message: message.into(),
        }
    }
}

/// Why a request gave no report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The request is not valid.
    #[error("{0}")]
    Request(RequestError),
    /// A solver returned a plan the independent validator refused (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<RequestError> for RunError {
    fn from(e: RequestError) -> Self {
        RunError::Request(e)
    }
}

/// What one solve asks: the solver and its options, the limits, the seed,
/// hints and stable mode, and the pool strategy. [`Request::default`] is
/// the default of every interface.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The solver.
    pub solver: SolverKind,
    /// The greedy solver's order and fit (`solver` greedy).
    pub greedy: Greedy,
    /// The search's switches (`solver` search).
    pub search: SearchOptions,
    /// Boxing's options (`solver` boxing).
    pub boxing: BoxingOptions,
    /// Tela's options (`solver` tela).
    pub tela: TelaOptions,
    /// The portfolio's options (`solver` auto).
    pub auto: AutoOptions,
    /// Wall-clock budget (`None`: none); from seconds by
    /// [`Request::set_time_limit`].
    pub time_limit: Option<Duration>,
    /// Work budget (`None`: the solvers' own), at most [`MAX_EFFORT`];
    /// from a factor by [`Request::set_effort`].
    pub effort: Option<Effort>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Solve as if the problem had no hints.
    pub ignore_hints: bool,
    /// Keep as many hints as possible at the best makespan ([`Stable`]).
    pub stable: bool,
    /// With `stable`: keep hints among plans within this makespan.
    pub stable_makespan: Option<u64>,
    /// How buffers are shared out among pools ([`Request::run_pools`]).
    pub pool_strategy: Strategy,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            solver: DEFAULT_SOLVER,
            greedy: Greedy::default(),
            search: SearchOptions::default(),
            boxing: BoxingOptions::default(),
            tela: TelaOptions::default(),
            auto: AutoOptions::default(),
            time_limit: DEFAULT_TIME_LIMIT,
            effort: DEFAULT_EFFORT,
            seed: DEFAULT_SEED,
            ignore_hints: false,
            stable: false,
            stable_makespan: None,
            pool_strategy: DEFAULT_POOL_STRATEGY,
        }
    }
}

/// A time limit in seconds: `None` (no limit) or any finite non-negative
/// number; one too large to represent means no limit.
pub fn time_limit(seconds: Option<f64>) -> Result<Option<Duration>, RequestError> {
    match seconds {
        None => Ok(None),
        Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(crate::solver::seconds(s))),
        Some(s) => Err(RequestError::new(
            "time_limit",
            format!("expected a finite number of seconds >= 0, got {s}"),
        )),
    }
}

/// A work budget, a multiple of the default: `None` or a finite number
/// from 0 to [`MAX_EFFORT`].
pub fn effort(factor: Option<f64>) -> Result<Option<Effort>, RequestError> {
    match factor {
        None => Ok(None),
        Some(f) if f <= MAX_EFFORT => Effort::new(f).map(Some).ok_or_else(|| effort_error(f)),
        Some(f) => Err(effort_error(f)),
    }
}

fn effort_error(f: f64) -> RequestError {
    RequestError::new(
        "effort",
        format!("expected a multiple of the default effort from 0 to {MAX_EFFORT:e}, got {f}"),
    )
}

/// The value of `T` called `name`, as a request error of option `field`.
pub fn parse<T: Named>(field: &'static str, name: &str) -> Result<T, RequestError> {
    T::parse(name).map_err(|e: UnknownName| RequestError::new(field, e.to_string()))
}

/// What an interface lends a run: the cancel flags it raises (Ctrl-C,
/// a cancel handle) and where progress is published.
#[derive(Clone, Debug, Default)]
pub struct Control {
    /// Raised to stop the solve; it then returns its best plan so far.
    pub cancel: Cancel,
    /// Where solvers publish their best makespan and bound while they run.
    pub progress: Progress,
}

impl Request {
    /// Sets the time limit in seconds ([`time_limit`]).
    pub fn set_time_limit(&mut self, seconds: Option<f64>) -> Result<(), RequestError> {
        self.time_limit = time_limit(seconds)?;
        Ok(())
    }

    /// Sets the work budget, a multiple of the default ([`effort`]).
    pub fn set_effort(&mut self, factor: Option<f64>) -> Result<(), RequestError> {
        self.effort = effort(factor)?;
        Ok(())
    }

    /// Chooses the solver by one of [`crate::solvers::names`]: a solver
    /// (`auto`, `greedy`, ...) or a greedy variant (`greedy/ORDER/FIT`).
    pub fn set_solver_name(&mut self, name: &str) -> Result<(), RequestError> {
        if let Some(variant) = Greedy::all().find(|g| g.name() == name) {
            self.solver = SolverKind::Greedy;
            self.greedy = variant;
            return Ok(());
        }
        self.solver = SolverKind::parse(name).map_err(|e| {
            RequestError::new(
                "solver",
                format!("{e}, or a greedy variant `greedy/ORDER/FIT`"),
            )
        })?;
        Ok(())
    }

    /// The checks that involve several options (each option alone is
    /// checked when it is set or parsed).
    pub fn check(&self) -> Result<(), RequestError> {
        if let Some(e) = self.effort {
            effort(Some(e.factor()))?;
        }
        if self.stable_makespan.is_some() && !self.stable {
            return Err(RequestError::new("stable_makespan", "needs stable"));
        }
        if self.stable && self.ignore_hints {
            return Err(RequestError::new(
                "stable",
                "cannot be combined with ignore_hints",
            ));
        }
        let fragmentation = self.boxing.target_fragmentation;
        if !fragmentation.is_finite() || fragmentation < 0.0 {
            return Err(RequestError::new(
                "target_fragmentation",
                format!("expected a non-negative percentage, got {fragmentation}"),
            ));
        }
        if self.search.preorders.is_empty() {
            return Err(RequestError::new("preorders", "must not be empty"));
        }
        if self.tela.max_candidates == 0 {
            return Err(RequestError::new("max_candidates", "must be at least 1"));
        }
        if self.tela.restart_steps == 0 {
            return Err(RequestError::new("restart_steps", "must be at least 1"));
        }
        if self.tela.restart_noise > 100 {
            return Err(RequestError::new(
                "restart_noise",
                format!(
                    "expected a percentage from 0 to 100, got {}",
                    self.tela.restart_noise
                ),
            ));
        }
        if self.tela.learned_depth_weight > 100 {
            return Err(RequestError::new(
                "learned_depth_weight",
                format!(
                    "expected a percentage from 0 to 100, got {}",
                    self.tela.learned_depth_weight
                ),
            ));
        }
        Ok(())
    }

    /// The solver this request names, with its options (not yet stable).
    pub fn solver(&self) -> Box<dyn Solver> {
        match self.solver {
            SolverKind::Auto => Box::new(Auto {
                options: self.auto.clone(),
            }),
            SolverKind::Greedy => Box::new(self.greedy),
            SolverKind::Search => Box::new(Search {
                options: self.search.clone(),
            }),
            SolverKind::Boxing => Box::new(Boxing {
                options: self.boxing.clone(),
            }),
            SolverKind::Tela => Box::new(Tela {
                options: self.tela.clone(),
            }),
        }
    }

    /// The library's solve options of this request under `control`.
    pub fn solve_options(&self, control: &Control) -> SolveOptions {
        SolveOptions {
            time_limit: self.time_limit,
            effort: self.effort,
            seed: self.seed,
            cancel: control.cancel.clone(),
            progress: control.progress.clone(),
            ignore_hints: self.ignore_hints,
            prepared: None,
        }
    }

    /// Plans `problem` (its capacity, if any, is a hard limit): runs the
    /// solver (in stable mode if asked), validates its plan independently,
    /// raises the lower bound to the max load, counts the hints kept and
    /// times the solve. No plan within the capacity is a report too
    /// ([`Report::outcome`]).
    pub fn run(&self, problem: &Problem, control: &Control) -> Result<Report, RunError> {
        self.check()?;
        let inner = self.solver();
        let stable = Stable {
            solver: inner.as_ref(),
            options: StableOptions {
                makespan: self.stable_makespan,
            },
        };
        let solver: &dyn Solver = if self.stable { &stable } else { inner.as_ref() };
        let options = self.solve_options(control);
        let started = Instant::now();
        let result = run(solver, problem, &options);
        let seconds = started.elapsed().as_secs_f64();
        let returned = Instant::now();
        let name = solver.name();
        // The plan is checked while the max load is computed beside it.
        let (valid, max_load) = rayon::join(
            || match &result {
                Ok(solution) => validate(problem, &solution.plan).map_err(|e| {
                    RunError::Internal(format!("{name} returned an invalid plan: {e}"))
                }),
                Err(_) => Ok(()),
            },
            || problem.max_load(),
        );
        valid?;
        let hints = crate::hints::count(problem);
        let outcome = match result {
            Ok(mut solution) => {
                // A solver stopped before it computed the max load
                // reports a weaker bound; a report never says less.
                solution.raise_lower_bound(max_load);
                Outcome::Planned(solution)
            }
            Err(error) => Outcome::NotFound(error),
        };
        let (solver, hints_kept) = match &outcome {
            Outcome::Planned(s) => (
                s.found_by.clone().unwrap_or(name),
                crate::hints::kept(problem, &s.plan),
            ),
            Outcome::NotFound(_) => (name, 0),
        };
        Ok(Report {
            buffers: problem.len(),
            max_load,
            capacity: problem.capacity,
            solver,
            seconds,
            check_seconds: returned.elapsed().as_secs_f64(),
            stop_latency: None,
            hints,
            hints_kept,
            outcome,
        })
    }

    /// Plans `problem` into its pools with [`Request::pool_strategy`]
    /// (the time limit, effort, seed and `ignore_hints` apply; the solver
    /// and stable mode are the strategy's own), validates the plan pool by
    /// pool and times the solve.
    pub fn run_pools(
        &self,
        problem: &PoolProblem,
        control: &Control,
    ) -> Result<PoolReport, RunError> {
        self.check()?;
        let options = self.solve_options(control);
        let started = Instant::now();
        let result = solve_pools(problem, self.pool_strategy, &options);
        let seconds = started.elapsed().as_secs_f64();
        let returned = Instant::now();
        if let Ok(solution) = &result {
            validate_pools(problem, &solution.plan).map_err(|e| {
                RunError::Internal(format!(
                    "the {} strategy returned an invalid plan: {e}",
                    solution.found_by.name()
                ))
            })?;
        }
        Ok(PoolReport {
            buffers: problem.len(),
            area: problem.indices().map(|b| problem.area(b)).sum(),
            strategy: self.pool_strategy,
            seconds,
            check_seconds: returned.elapsed().as_secs_f64(),
            stop_latency: None,
            outcome: result,
        })
    }
}

/// What a solve gave: a plan, or none within the capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A valid plan; its lower bound is at least the max load.
    Planned(Solution),
    /// No plan within the capacity, and why.
    NotFound(SolveError),
}

/// The report of one solve, the same for every interface: `memplan solve
/// --json` prints [`Report::json`], Python's `Result` and C's solution
/// read its fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Buffers in the problem.
    pub buffers: usize,
    /// The max load: most bytes alive at one instant.
    pub max_load: u64,
    /// The problem's capacity (`None`: the makespan was minimised).
    pub capacity: Option<u64>,
    /// The solver, or the portfolio member, that found the plan.
    pub solver: String,
    /// Seconds the solve took (checks and validation excluded).
    pub seconds: f64,
    /// Seconds the work after the solver's return took: the independent
    /// validation of the plan, the max load beside it, the hints kept.
    pub check_seconds: f64,
    /// Seconds from a stop signal to the solver's return, when the
    /// interface knows when the signal came (the CLI's Ctrl-C, SIGTERM)
    /// and it came before that return ([`Report::check_seconds`] later).
    pub stop_latency: Option<f64>,
    /// Buffers with a hint.
    pub hints: usize,
    /// Buffers placed at their hint (0 without a plan).
    pub hints_kept: usize,
    /// The plan and what is known of it, or why there is none.
    pub outcome: Outcome,
}

impl Report {
    /// The solution, when a plan was found.
    pub fn solution(&self) -> Option<&Solution> {
        match &self.outcome {
            Outcome::Planned(s) => Some(s),
            Outcome::NotFound(_) => None,
        }
    }

    /// The makespan of the plan found.
    pub fn makespan(&self) -> Option<u64> {
        self.solution().map(|s| s.makespan)
    }

    /// The proven lower bound on every makespan: at least the max load;
    /// above the capacity when infeasibility is proven.
    pub fn lower_bound(&self) -> u64 {
        match &self.outcome {
            Outcome::Planned(s) => s.lower_bound,
            Outcome::NotFound(SolveError::NotFound {
                capacity, reason, ..
            }) => {
                if *reason == NotFoundReason::ProvenInfeasible {
                    capacity.saturating_add(1).max(self.max_load)
                } else {
                    self.max_load
                }
            }
        }
    }

    /// Whether the plan is proven optimal.
    pub fn optimal(&self) -> bool {
        self.solution().is_some_and(|s| s.optimal)
    }

    /// What cut the solve short, if anything did before it finished.
    pub fn stopped(&self) -> Option<Stopped> {
        match &self.outcome {
            Outcome::Planned(s) => s.stopped,
            Outcome::NotFound(SolveError::NotFound { reason, .. }) => match reason {
                NotFoundReason::TimeLimit => Some(Stopped::TimeLimit),
                NotFoundReason::Interrupted => Some(Stopped::Interrupted),
                _ => None,
            },
        }
    }

    /// The solver's effort counters.
    pub fn counters(&self) -> &[(&'static str, u64)] {
        match &self.outcome {
            Outcome::Planned(s) => &s.counters,
            Outcome::NotFound(SolveError::NotFound { counters, .. }) => counters,
        }
    }

    /// The report as one JSON object (`memplan solve --json`).
    pub fn json(&self) -> Value {
        let counters = counter_map(self.counters());
        let common = json!({
            "buffers": self.buffers,
            "max_load": self.max_load,
            "lower_bound": self.lower_bound(),
            "capacity": self.capacity,
            "solver": self.solver,
            "seconds": self.seconds,
            "check_seconds": self.check_seconds,
            "stopped": self.stopped().map(Stopped::name),
            "stop_latency": self.stop_latency,
            "hints": self.hints,
            "hints_kept": self.hints_kept,
            "counters": counters,
        });
        let specific = match &self.outcome {
            Outcome::Planned(s) => {
                let fragmentation = s.makespan.saturating_sub(self.max_load);
                json!({
                    "status": "ok",
                    "makespan": s.makespan,
                    "fragmentation": fragmentation,
                    "fragmentation_percent": percent(fragmentation, self.max_load),
                    "optimal": s.optimal,
                })
            }
            Outcome::NotFound(SolveError::NotFound {
                reason,
                best_makespan,
                ..
            }) => json!({
                "status": "not_found",
                "reason": reason.describe(),
                "best_makespan": best_makespan,
                "makespan": best_makespan,
                "fragmentation": best_makespan.map(|m| m.saturating_sub(self.max_load)),
                "optimal": false,
            }),
        };
        merge(common, specific)
    }
}

/// The report of a pooled solve.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolReport {
    /// Buffers in the problem.
    pub buffers: usize,
    /// Bytes × time of every buffer.
    pub area: u128,
    /// The strategy asked for.
    pub strategy: Strategy,
    /// Seconds the solve took (validation excluded).
    pub seconds: f64,
    /// Seconds the validation after the solver's return took.
    pub check_seconds: f64,
    /// Seconds from a stop signal to the solver's return (see
    /// [`Report::stop_latency`]).
    pub stop_latency: Option<f64>,
    /// The plan, or why there is none.
    pub outcome: Result<PoolSolution, PoolSolveError>,
}

impl PoolReport {
    /// The report as one JSON object (`memplan solve --pools --json`),
    /// naming the pools of `problem`.
    pub fn json(&self, problem: &PoolProblem) -> Value {
        match &self.outcome {
            Ok(solution) => {
                let pools: Vec<Value> = problem
                    .pools()
                    .iter()
                    .zip(&solution.usage)
                    .map(|(pool, u)| {
                        json!({
                            "name": pool.name,
                            "capacity": pool.capacity,
                            "alignment": pool.alignment,
                            "buffers": u.buffers,
                            "makespan": u.makespan,
                            "area": area_json(u.area),
                        })
                    })
                    .collect();
                let spill =
                    |s: &crate::pools::Spill| s.0.iter().map(|&a| area_json(a)).collect::<Vec<_>>();
                let percent: Vec<f64> = solution
                    .spill
                    .0
                    .iter()
                    .map(|&a| share(a, self.area))
                    .collect();
                json!({
                    "status": "ok",
                    "buffers": self.buffers,
                    "strategy": self.strategy.name(),
                    "found_by": solution.found_by.name(),
                    "pools": pools,
                    "area": area_json(self.area),
                    "spill": spill(&solution.spill),
                    "spill_percent": percent,
                    "spill_bound": spill(&solution.spill_bound),
                    "seconds": self.seconds,
                    "check_seconds": self.check_seconds,
                    "stopped": solution.stopped.map(Stopped::name),
                    "stop_latency": self.stop_latency,
                    "counters": counter_map(&solution.counters),
                })
            }
            Err(error) => {
                let (status, reason) = match error {
                    PoolSolveError::Infeasible(proof) => ("infeasible", proof.to_string()),
                    PoolSolveError::NotFound { reason, detail } => {
                        ("not_found", format!("{}: {detail}", reason.describe()))
                    }
                };
                json!({
                    "status": status,
                    "reason": reason,
                    "buffers": self.buffers,
                    "strategy": self.strategy.name(),
                    "seconds": self.seconds,
                    "check_seconds": self.check_seconds,
                    "stop_latency": self.stop_latency,
                })
            }
        }
    }
}

/// A bytes × time figure as JSON: a number, or a string beyond 2^64.
pub fn area_json(area: u128) -> Value {
    match u64::try_from(area) {
        Ok(a) => json!(a),
        Err(_) => json!(area.to_string()),
    }
}

/// `part` in percent of `whole` (0 when `whole` is 0).
pub fn share(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    share(u128::from(part), u128::from(whole))
}

/// Solver counters as a JSON object.
fn counter_map(counters: &[(&'static str, u64)]) -> Map<String, Value> {
    counters
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

/// The fields of two JSON objects in one.
fn merge(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut a), Value::Object(b)) => {
            a.extend(b);
            Value::Object(a)
        }
        (a, _) => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buffer;

    fn problem(capacity: Option<u64>) -> Problem {
        Problem::new(
            vec![
                Buffer::new("a", 0, 4, 8),
                Buffer::new("b", 2, 6, 8),
                Buffer::new("c", 5, 9, 8),
            ],
            capacity,
        )
        .unwrap()
    }

    #[test]
    fn limits_are_checked_once() {
        let mut r = Request::default();
        assert!(r.set_time_limit(Some(1e13)).is_ok());
        assert_eq!(r.time_limit, Some(Duration::from_secs_f64(1e13)));
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            assert_eq!(r.set_time_limit(Some(bad)).unwrap_err().field, "time_limit");
        }
        assert!(r.set_effort(Some(1e9)).is_ok());
        for bad in [1e9 + 1.0, -0.5, f64::NAN] {
            assert_eq!(r.set_effort(Some(bad)).unwrap_err().field, "effort");
        }
        assert_eq!(r.effort, Effort::new(1e9));
        r.effort = Effort::new(2e9);
        assert_eq!(r.check().unwrap_err().field, "effort");
    }

    #[test]
    fn options_that_contradict_are_refused() {
        let mut r = Request {
            stable_makespan: Some(10),
            ..Request::default()
        };
        assert_eq!(r.check().unwrap_err().field, "stable_makespan");
        r.stable = true;
        r.ignore_hints = true;
        assert_eq!(r.check().unwrap_err().field, "stable");
        r.ignore_hints = false;
        assert!(r.check().is_ok());
        r.search.preorders.clear();
        assert_eq!(r.check().unwrap_err().field, "preorders");
    }

    #[test]
    fn solver_names_parse_with_the_known_ones_listed() {
        let mut r = Request::default();
        r.set_solver_name("greedy/area/best-fit").unwrap();
        assert_eq!(r.solver, SolverKind::Greedy);
        assert_eq!(r.solver().name(), "greedy/area/best-fit");
        r.set_solver_name("tela").unwrap();
        assert_eq!(r.solver().name(), "tela");
        let e = r.set_solver_name("fast").unwrap_err();
        assert!(
            e.message
                .contains("`auto`, `greedy`, `search`, `boxing`, `tela`"),
            "{e}"
        );
        let e = parse::<crate::solvers::greedy::Fit>("fit", "worst-fit").unwrap_err();
        assert_eq!(
            e.to_string(),
            "fit: unknown fit `worst-fit` (expected one of `first-fit`, `best-fit`, `skyline`)"
        );
    }

    /// The report of a plan: valid, bound raised to the max load, hints
    /// counted; its JSON has the CLI's fields.
    #[test]
    fn a_report_of_a_plan() {
        let problem = problem(None);
        for solver in SolverKind::ALL {
            let request = Request {
                solver: *solver,
                ..Request::default()
            };
            let report = request.run(&problem, &Control::default()).unwrap();
            let s = report.solution().unwrap();
            validate(&problem, &s.plan).unwrap();
            assert_eq!(report.max_load, 16);
            assert!(report.lower_bound() >= 16);
            let json = report.json();
            assert_eq!(json["status"], "ok");
            assert_eq!(json["makespan"], s.makespan);
            assert_eq!(json["fragmentation"], s.makespan - 16);
            assert_eq!(json["buffers"], 3);
            assert_eq!(json["hints"], 0);
            assert!(json["stop_latency"].is_null());
        }
    }

    #[test]
    fn a_report_of_no_plan() {
        let problem = problem(Some(15));
        let request = Request {
            solver: SolverKind::Search,
            ..Request::default()
        };
        let report = request.run(&problem, &Control::default()).unwrap();
        assert!(report.solution().is_none());
        assert_eq!(report.lower_bound(), 16);
        let json = report.json();
        assert_eq!(json["status"], "not_found");
        assert_eq!(json["reason"], "proven infeasible");
        assert_eq!(json["optimal"], false);
    }
}
