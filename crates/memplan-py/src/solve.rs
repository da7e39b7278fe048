//! Solving from Python: the solver and options chosen by name (every
//! solver and option of `memplan solve`), run on a thread of its own with
//! the GIL released while the calling thread waits and polls for signals
//! (Ctrl-C raises the solve's cancel flag, then `KeyboardInterrupt`); a
//! panic becomes `memplan.InternalError`; the plan is validated before it
//! is returned as a `memplan.Result`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use memplan::solver::{Cancel, Effort};
use memplan::solvers::auto::{Auto, DEFAULT_TIME_LIMIT};
use memplan::solvers::boxing::{Boxing, BoxingOptions};
use memplan::solvers::greedy::{Fit, Greedy, Order};
use memplan::solvers::search::{Preorder, Schedule, Search, SearchOptions};
use memplan::solvers::tela::{Tela, TelaOptions};
use memplan::{NotFoundReason, Problem, Solution, SolveError, SolveOptions, Solver, Stopped};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{argument_error, counters, internal_error, not_found, NotFoundInfo};
use crate::input::choice;
use crate::plan::PyPlan;
use crate::problem::PyProblem;

/// How often the waiting thread looks for signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// The solver selected by name, with its options (the command line's).
pub struct Choice {
    pub solver: Box<dyn Solver>,
    /// Whether the solver honours the time limit (greedy always finishes).
    pub timed: bool,
}

/// Options of every solver, as keyword arguments.
pub struct SolverArgs<'a> {
    pub solver: &'a str,
    pub order: &'a str,
    pub fit: &'a str,
    pub step_limit: u64,
    pub iterations: u32,
    pub target_fragmentation: f64,
    pub size_classes: bool,
    pub preorders: Option<Vec<String>>,
    pub round_robin: bool,
    pub rerank_parts: bool,
    pub canonical: bool,
    pub section_inference: bool,
    pub effective_height: bool,
    pub dominance: bool,
    pub dynamic_order: bool,
    pub decompose: bool,
    pub hatless: bool,
    pub ignore_hints: bool,
    pub stable: bool,
    pub stable_makespan: Option<u64>,
}

/// [`memplan::stable::Stable`] owning its solver (to run on a thread).
struct OwnedStable {
    solver: Box<dyn Solver>,
    options: memplan::stable::StableOptions,
}

impl OwnedStable {
    fn stable(&self) -> memplan::stable::Stable<'_> {
        memplan::stable::Stable {
            solver: self.solver.as_ref(),
            options: self.options.clone(),
        }
    }
}

impl Solver for OwnedStable {
    fn name(&self) -> String {
        self.stable().name()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        self.stable().solve(problem, options)
    }

    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
        self.stable().solve(problem, options)
    }
}

/// The solvers by name.
#[derive(Clone, Copy)]
enum Name {
    Auto,
    Greedy,
    Search,
    Boxing,
    Tela,
}

impl SolverArgs<'_> {
    /// The solver these arguments select.
    pub fn choose(&self, py: Python<'_>) -> PyResult<Choice> {
        let name = choice(
            py,
            "solver",
            self.solver,
            &[
                ("auto", Name::Auto),
                ("greedy", Name::Greedy),
                ("search", Name::Search),
                ("boxing", Name::Boxing),
                ("tela", Name::Tela),
            ],
        )?;
        let (order, fit) = self.greedy_variant(py)?;
        if !self.target_fragmentation.is_finite() || self.target_fragmentation < 0.0 {
            return Err(argument_error(
                py,
                "target_fragmentation",
                None,
                format!(
                    "expected a non-negative percentage, got {}",
                    self.target_fragmentation
                ),
            ));
        }
        let preorders = self.preorders(py)?;
        let solver = self.solver(name, Greedy { order, fit }, preorders);
        self.check_stable(py)?;
        let solver: Box<dyn Solver> = if self.stable {
            Box::new(OwnedStable {
                solver,
                options: memplan::stable::StableOptions {
                    makespan: self.stable_makespan,
                },
            })
        } else {
            solver
        };
        Ok(Choice {
            solver,
            timed: !matches!(name, Name::Greedy) || self.stable,
        })
    }

    /// The greedy solver's order and fit, by name.
    fn greedy_variant(&self, py: Python<'_>) -> PyResult<(Order, Fit)> {
        let order = choice(
            py,
            "order",
            self.order,
            &[
                ("size", Order::Size),
                ("area", Order::Area),
                ("lifetime", Order::Lifetime),
                ("start", Order::Start),
                ("contention", Order::Contention),
            ],
        )?;
        let fit = choice(
            py,
            "fit",
            self.fit,
            &[
                ("first-fit", Fit::FirstFit),
                ("best-fit", Fit::BestFit),
                ("skyline", Fit::Skyline),
            ],
        )?;
        Ok((order, fit))
    }

    /// The search's preorders by name (its default when not given); not
    /// empty.
    fn preorders(&self, py: Python<'_>) -> PyResult<Vec<Preorder>> {
        let preorders = match &self.preorders {
            None => SearchOptions::default().preorders,
            Some(names) => names
                .iter()
                .map(|n| {
                    choice(
                        py,
                        "preorders",
                        n,
                        &[
                            ("twa", Preorder::Twa),
                            ("wat", Preorder::Wat),
                            ("taw", Preorder::Taw),
                            ("area", Preorder::Area),
                        ],
                    )
                })
                .collect::<PyResult<Vec<_>>>()?,
        };
        if preorders.is_empty() {
            return Err(argument_error(py, "preorders", None, "must not be empty"));
        }
        Ok(preorders)
    }

    /// Solver `name` with these options (`greedy` for the greedy one).
    fn solver(&self, name: Name, greedy: Greedy, preorders: Vec<Preorder>) -> Box<dyn Solver> {
        match name {
            Name::Auto => Box::new(Auto::default()),
            Name::Greedy => Box::new(greedy),
            Name::Search => Box::new(Search {
                options: SearchOptions {
                    canonical: self.canonical,
                    section_inference: self.section_inference,
                    effective_height: self.effective_height,
                    dominance: self.dominance,
                    dynamic_order: self.dynamic_order,
                    preorders,
                    schedule: if self.round_robin {
                        Schedule::RoundRobin
                    } else {
                        Schedule::Lockstep
                    },
                    rerank_parts: self.rerank_parts,
                    decompose: self.decompose,
                    hatless: self.hatless,
                    warm_start: None,
                },
            }),
            Name::Boxing => Box::new(Boxing {
                options: BoxingOptions {
                    iterations: self.iterations,
                    target_fragmentation: self.target_fragmentation,
                    size_classes: self.size_classes,
                    elementary_cases: true,
                    bootstrap: None,
                },
            }),
            Name::Tela => Box::new(Tela {
                options: TelaOptions {
                    step_limit: self.step_limit,
                    ..TelaOptions::default()
                },
            }),
        }
    }

    /// Refuses `stable_makespan` without `stable`, and `stable` with
    /// `ignore_hints`.
    fn check_stable(&self, py: Python<'_>) -> PyResult<()> {
        if self.stable_makespan.is_some() && !self.stable {
            return Err(argument_error(
                py,
                "stable_makespan",
                None,
                "needs stable=True",
            ));
        }
        if self.stable && self.ignore_hints {
            return Err(argument_error(
                py,
                "stable",
                None,
                "cannot be combined with ignore_hints=True",
            ));
        }
        Ok(())
    }
}

/// A time limit in seconds: `None` (no limit) or a finite non-negative
/// number.
pub fn time_limit(py: Python<'_>, seconds: Option<f64>) -> PyResult<Option<Duration>> {
    match seconds {
        None => Ok(None),
        Some(s) if (0.0..1e12).contains(&s) => Ok(Some(memplan::solver::seconds(s))),
        Some(s) => Err(argument_error(
            py,
            "time_limit",
            None,
            format!("expected a non-negative number of seconds or None, got {s}"),
        )),
    }
}

/// What the solving thread sends back.
type Outcome = (std::thread::Result<Result<Solution, SolveError>>, Duration);

/// Runs `solver` on `problem` on a thread of its own. The calling thread
/// waits with the GIL released, taking it back every [`SIGNAL_POLL`] to
/// run Python's signal handlers: when one raises (Ctrl-C:
/// `KeyboardInterrupt`), the solve's cancel flag is raised, the thread
/// joined (solvers stop promptly at the flag) and the exception returned.
fn run(
    py: Python<'_>,
    problem: Arc<Problem>,
    solver: Box<dyn Solver>,
    mut options: SolveOptions,
) -> PyResult<Outcome> {
    let cancel = Arc::new(AtomicBool::new(false));
    options.cancel = Cancel::new(cancel.clone());
    let (send, receive) = mpsc::channel::<Outcome>();
    let thread = std::thread::Builder::new()
        .name("memplan-solve".into())
        .spawn(move || {
            let started = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| {
                memplan::solver::run(solver.as_ref(), &problem, &options)
            }));
            // The receiver is gone only if the caller stopped waiting.
            let _ = send.send((result, started.elapsed()));
        })
        .map_err(|e| internal_error(py, format!("cannot start the solving thread: {e}")))?;
    let mut receive = receive;
    loop {
        // The receiver goes into the GIL-free closure and comes back out.
        let (got, back) = py.detach(move || (receive.recv_timeout(SIGNAL_POLL), receive));
        receive = back;
        match got {
            Ok(outcome) => {
                let _ = py.detach(|| thread.join());
                return Ok(outcome);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    let _ = py.detach(|| thread.join());
                    return Err(signal);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = py.detach(|| thread.join());
                return Err(internal_error(py, "the solving thread died".into()));
            }
        }
    }
}

/// The outcome of a solve: the plan and what the solver knows about it.
#[pyclass(frozen, name = "Result", module = "memplan")]
pub struct SolveResult {
    plan: Py<PyPlan>,
    offsets: Py<PyArray1<u64>>,
    makespan: u64,
    max_load: u64,
    lower_bound: u64,
    optimal: bool,
    solver: String,
    seconds: f64,
    stopped: Option<Stopped>,
    counters: Vec<(&'static str, u64)>,
    capacity: Option<u64>,
    hints: usize,
    hints_kept: usize,
}

#[pymethods]
impl SolveResult {
    /// Offset of every buffer, in input order (read-only NumPy uint64).
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.offsets.bind(py).clone()
    }

    /// The plan's makespan: max(offset + size).
    #[getter]
    fn makespan(&self) -> u64 {
        self.makespan
    }

    /// The max load: most bytes alive at one instant.
    #[getter]
    fn max_load(&self) -> u64 {
        self.max_load
    }

    /// A proven lower bound on every makespan (at least the max load, or
    /// the highest end of a fixed buffer).
    #[getter]
    fn lower_bound(&self) -> u64 {
        self.lower_bound
    }

    /// True when the makespan equals the proven lower bound.
    #[getter]
    fn optimal(&self) -> bool {
        self.optimal
    }

    /// makespan - max_load, in bytes.
    #[getter]
    fn fragmentation(&self) -> u64 {
        self.makespan.saturating_sub(self.max_load)
    }

    /// The solver that found the plan (for `auto`, its member, e.g.
    /// `auto/search`).
    #[getter]
    fn solver(&self) -> &str {
        &self.solver
    }

    /// Time spent solving, in seconds.
    #[getter]
    fn seconds(&self) -> f64 {
        self.seconds
    }

    /// True when the time limit cut the solve short before it proved its
    /// plan optimal: a longer limit may find a better plan, and the plan
    /// may differ between runs.
    #[getter]
    fn timed_out(&self) -> bool {
        self.stopped == Some(Stopped::TimeLimit)
    }

    /// What cut the solve short: `"time_limit"`, or `None` when the solver
    /// ran to its end or proved its plan optimal (as `memplan solve
    /// --json` reports it).
    #[getter]
    fn stopped(&self) -> Option<&'static str> {
        self.stopped.map(Stopped::name)
    }

    /// The solver's effort counters (nodes, backtracks, iterations...).
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters(py, &self.counters)
    }

    /// The problem's capacity (`None`: the makespan was minimised).
    #[getter]
    fn capacity(&self) -> Option<u64> {
        self.capacity
    }

    /// Number of buffers with a hint.
    #[getter]
    fn hints(&self) -> usize {
        self.hints
    }

    /// Number of buffers placed at their hint.
    #[getter]
    fn hints_kept(&self) -> usize {
        self.hints_kept
    }

    /// The plan, to validate, write as CSV or inspect.
    #[getter]
    fn plan(&self, py: Python<'_>) -> Py<PyPlan> {
        self.plan.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Result(makespan={}, max_load={}, lower_bound={}, optimal={}, solver='{}', seconds={:.3}, timed_out={})",
            self.makespan,
            self.max_load,
            self.lower_bound,
            if self.optimal { "True" } else { "False" },
            self.solver,
            self.seconds,
            if self.timed_out() { "True" } else { "False" },
        )
    }
}

/// The `effort` argument: `None`, or a multiple of the default work
/// budget up to 1e9.
fn effort_arg(py: Python<'_>, effort: Option<f64>) -> PyResult<Option<Effort>> {
    match effort {
        None => Ok(None),
        Some(e) => Effort::new(e).filter(|_| e <= 1e9).map(Some).ok_or_else(|| {
            argument_error(
                py,
                "effort",
                None,
                format!("expected a non-negative number (a multiple of the default effort) or None, got {e}"),
            )
        }),
    }
}

/// `memplan.InternalError` for solver `name`'s panic.
fn panic_error(py: Python<'_>, name: &str, panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    internal_error(
        py,
        format!("internal error: {name} panicked: {what} (a bug; please report it)"),
    )
}

/// `memplan.NotFoundError` for a solve that found no plan, with what is
/// known of it.
fn not_found_error(
    py: Python<'_>,
    error: &SolveError,
    solver: String,
    max_load: u64,
    seconds: f64,
) -> PyErr {
    let SolveError::NotFound {
        capacity,
        reason,
        best_makespan,
        counters,
    } = error;
    not_found(
        py,
        error.to_string(),
        NotFoundInfo {
            capacity: *capacity,
            proven_infeasible: *reason == NotFoundReason::ProvenInfeasible,
            reason: reason.describe(),
            best_makespan: *best_makespan,
            max_load,
            solver,
            seconds,
            counters: counters.clone(),
        },
    )
}

/// Plans `problem` with the solver `args` select (the body of
/// `Problem.solve`).
pub fn solve(
    slf: &Bound<'_, PyProblem>,
    args: SolverArgs<'_>,
    time_limit: Option<f64>,
    effort: Option<f64>,
    seed: u64,
) -> PyResult<SolveResult> {
    let py = slf.py();
    let Choice { solver, timed } = args.choose(py)?;
    let limit = self::time_limit(py, time_limit)?;
    let effort = effort_arg(py, effort)?;
    // The limit the solver works to, as `solver::run` sees it: auto's
    // default when none is given; none for greedy, which always finishes.
    let limit = match (timed, limit) {
        (false, _) => None,
        (true, None) if args.solver == "auto" => Some(DEFAULT_TIME_LIMIT),
        (true, l) => l,
    };
    let options = SolveOptions {
        time_limit: limit,
        effort,
        seed,
        ignore_hints: args.ignore_hints,
        ..SolveOptions::default()
    };
    let problem = slf.get().problem.clone();
    let name = solver.name();
    let (outcome, elapsed) = run(py, problem.clone(), solver, options)?;
    let seconds = elapsed.as_secs_f64();
    let max_load = py.detach(|| problem.max_load());
    let mut solution = match outcome {
        Err(panic) => return Err(panic_error(py, &name, panic)),
        Ok(Err(error)) => {
            return Err(not_found_error(py, &error, name, max_load, seconds));
        }
        Ok(Ok(solution)) => solution,
    };
    // A solver stopped before it computed the max load reports a weaker
    // bound; a result never says less than the max load.
    solution.raise_lower_bound(max_load);
    if let Err(e) = py.detach(|| memplan::validate(&problem, &solution.plan)) {
        return Err(internal_error(
            py,
            format!(
                "internal error: {name} returned an invalid plan: {e} (a bug; please report it)"
            ),
        ));
    }
    let hints_kept = memplan::hints::kept(&problem, &solution.plan);
    let plan = PyPlan::new(py, slf.clone().unbind(), solution.plan)?;
    let offsets = plan.offsets_array(py);
    Ok(SolveResult {
        plan: Py::new(py, plan)?,
        offsets,
        makespan: solution.makespan,
        max_load,
        lower_bound: solution.lower_bound,
        optimal: solution.optimal,
        solver: solution.found_by.unwrap_or(name),
        seconds,
        stopped: solution.stopped,
        hints: memplan::hints::count(&problem),
        hints_kept,
        counters: solution.counters,
        capacity: problem.capacity,
    })
}
