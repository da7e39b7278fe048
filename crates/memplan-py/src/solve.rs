//! Solving from Python: keyword arguments translated into the library's
//! request ([`memplan::request::Request`], which checks them and holds
//! every default), run on a thread of its own with the GIL released while
//! the calling thread waits and polls for signals (Ctrl-C raises the
//! solve's cancel flag, then `KeyboardInterrupt`); a panic becomes
//! `memplan.InternalError`; the request's report becomes a
//! `memplan.Result`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use memplan::named::Named;
use memplan::request::{self, Control, Outcome, Report, Request, RequestError, RunError};
use memplan::solver::Cancel;
use memplan::solvers::search::Schedule;
use memplan::{NotFoundReason, SolveError, Stopped};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{argument_error, counters, internal_error, not_found, NotFoundInfo};
use crate::plan::PyPlan;
use crate::problem::PyProblem;

/// How often the waiting thread looks for signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// The keyword arguments of `Problem.solve`: `None` leaves the request's
/// default.
#[derive(Default)]
pub struct SolverArgs<'a> {
    pub solver: Option<&'a str>,
    pub time_limit: Option<f64>,
    pub effort: Option<f64>,
    pub seed: Option<u64>,
    pub order: Option<&'a str>,
    pub fit: Option<&'a str>,
    pub step_limit: Option<u64>,
    pub learned_backtracking: Option<bool>,
    pub learned_jump: Option<bool>,
    pub learned_threshold: Option<u32>,
    pub learned_depth_weight: Option<u32>,
    pub iterations: Option<u32>,
    pub target_fragmentation: Option<f64>,
    pub size_classes: Option<bool>,
    pub preorders: Option<Vec<String>>,
    pub round_robin: Option<bool>,
    pub rerank_parts: Option<bool>,
    pub canonical: Option<bool>,
    pub section_inference: Option<bool>,
    pub effective_height: Option<bool>,
    pub dominance: Option<bool>,
    pub dynamic_order: Option<bool>,
    pub decompose: Option<bool>,
    pub hatless: Option<bool>,
    pub exact_fill: Option<bool>,
    pub head_start: Option<bool>,
    pub ignore_hints: Option<bool>,
    pub stable: Option<bool>,
    pub stable_makespan: Option<u64>,
    pub strategy: Option<&'a str>,
}

/// `memplan.InputError` naming the keyword argument of a request error.
pub fn request_error(py: Python<'_>, e: RequestError) -> PyErr {
    argument_error(py, e.field, None, e.message)
}

/// The named value `name` of keyword `field` (underscores accepted for
/// dashes, as Python names are written).
pub fn named<T: Named>(py: Python<'_>, field: &'static str, name: &str) -> PyResult<T> {
    request::parse(field, &name.replace('_', "-")).map_err(|e| request_error(py, e))
}

impl SolverArgs<'_> {
    /// The library's request: names parsed, limits and options checked by
    /// the request itself.
    pub fn request(&self, py: Python<'_>) -> PyResult<Request> {
        let mut r = Request::default();
        let fail = |e| request_error(py, e);
        if let Some(name) = self.solver {
            r.set_solver_name(name).map_err(fail)?;
        }
        r.set_time_limit(self.time_limit).map_err(fail)?;
        r.set_effort(self.effort).map_err(fail)?;
        set(&mut r.seed, self.seed);
        if let Some(order) = self.order {
            r.greedy.order = named(py, "order", order)?;
        }
        if let Some(fit) = self.fit {
            r.greedy.fit = named(py, "fit", fit)?;
        }
        set(&mut r.tela.step_limit, self.step_limit);
        set(&mut r.tela.learned_backtracking, self.learned_backtracking);
        set(&mut r.tela.learned_jump, self.learned_jump);
        set(&mut r.tela.learned_threshold, self.learned_threshold);
        set(&mut r.tela.learned_depth_weight, self.learned_depth_weight);
        set(&mut r.boxing.iterations, self.iterations);
        set(
            &mut r.boxing.target_fragmentation,
            self.target_fragmentation,
        );
        set(&mut r.boxing.size_classes, self.size_classes);
        if let Some(names) = &self.preorders {
            r.search.preorders = names
                .iter()
                .map(|n| named(py, "preorders", n))
                .collect::<PyResult<_>>()?;
        }
        if let Some(round_robin) = self.round_robin {
            r.search.schedule = if round_robin {
                Schedule::RoundRobin
            } else {
                Schedule::Lockstep
            };
        }
        set(&mut r.search.rerank_parts, self.rerank_parts);
        set(&mut r.search.canonical, self.canonical);
        set(&mut r.search.section_inference, self.section_inference);
        set(&mut r.search.effective_height, self.effective_height);
        set(&mut r.search.dominance, self.dominance);
        set(&mut r.search.dynamic_order, self.dynamic_order);
        set(&mut r.search.decompose, self.decompose);
        set(&mut r.search.hatless, self.hatless);
        set(&mut r.search.exact_fill, self.exact_fill);
        set(&mut r.auto.head_start, self.head_start);
        set(&mut r.ignore_hints, self.ignore_hints);
        set(&mut r.stable, self.stable);
        r.stable_makespan = self.stable_makespan;
        if let Some(strategy) = self.strategy {
            r.pool_strategy = named(py, "strategy", strategy)?;
        }
        r.check().map_err(fail)?;
        Ok(r)
    }
}

/// Sets `field` to `value` when one was given.
fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *field = v;
    }
}

/// Runs `work` (a request's run) on a thread of its own with the cancel
/// flag of `control`. The calling thread waits with the GIL released,
/// taking it back every [`SIGNAL_POLL`] to run Python's signal handlers:
/// when one raises (Ctrl-C: `KeyboardInterrupt`), the cancel flag is
/// raised, the thread joined (solvers stop promptly at the flag) and the
/// exception returned. A panic is `memplan.InternalError`.
pub fn run<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(&Control) -> Result<T, RunError> + Send + 'static,
) -> PyResult<T> {
    let flag = Arc::new(AtomicBool::new(false));
    let control = Control {
        cancel: Cancel::new(flag.clone()),
        ..Control::default()
    };
    let (send, receive) = mpsc::channel::<std::thread::Result<Result<T, RunError>>>();
    let thread = std::thread::Builder::new()
        .name("memplan-solve".into())
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| work(&control)));
            // The receiver is gone only if the caller stopped waiting.
            let _ = send.send(result);
        })
        .map_err(|e| internal_error(py, format!("cannot start the solving thread: {e}")))?;
    let mut receive = receive;
    let outcome = loop {
        // The receiver goes into the GIL-free closure and comes back out.
        let (got, back) = py.detach(move || (receive.recv_timeout(SIGNAL_POLL), receive));
        receive = back;
        match got {
            Ok(outcome) => break outcome,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    flag.store(true, Ordering::Relaxed);
                    let _ = py.detach(|| thread.join());
                    return Err(signal);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = py.detach(|| thread.join());
                return Err(internal_error(py, "the solving thread died".into()));
            }
        }
    };
    let _ = py.detach(|| thread.join());
    match outcome {
        Err(panic) => Err(panic_error(py, panic)),
        Ok(Err(RunError::Request(e))) => Err(request_error(py, e)),
        Ok(Err(RunError::Internal(m))) => Err(internal_error(
            py,
            format!("internal error: {m} (a bug; please report it)"),
        )),
        Ok(Ok(value)) => Ok(value),
    }
}

/// The outcome of a solve: the plan and what the solver knows about it.
#[pyclass(frozen, name = "Result", module = "memplan")]
pub struct SolveResult {
    plan: Py<PyPlan>,
    offsets: Py<PyArray1<u64>>,
    /// The request's report (its outcome is a plan, whose offsets moved
    /// into `plan`).
    report: Report,
    /// The report's solution, for the getters (without its offsets).
    solution: memplan::Solution,
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
        self.solution.makespan
    }

    /// The max load: most bytes alive at one instant.
    #[getter]
    fn max_load(&self) -> u64 {
        self.report.max_load
    }

    /// A proven lower bound on every makespan (at least the max load, or
    /// the highest end of a fixed buffer).
    #[getter]
    fn lower_bound(&self) -> u64 {
        self.solution.lower_bound
    }

    /// True when the makespan equals the proven lower bound.
    #[getter]
    fn optimal(&self) -> bool {
        self.solution.optimal
    }

    /// makespan - max_load, in bytes.
    #[getter]
    fn fragmentation(&self) -> u64 {
        self.solution.makespan.saturating_sub(self.report.max_load)
    }

    /// The solver that found the plan (for `auto`, its member, e.g.
    /// `auto/search`).
    #[getter]
    fn solver(&self) -> &str {
        &self.report.solver
    }

    /// Time spent solving, in seconds.
    #[getter]
    fn seconds(&self) -> f64 {
        self.report.seconds
    }

    /// True when the time limit cut the solve short before it proved its
    /// plan optimal: a longer limit may find a better plan, and the plan
    /// may differ between runs.
    #[getter]
    fn timed_out(&self) -> bool {
        self.solution.stopped == Some(Stopped::TimeLimit)
    }

    /// What cut the solve short: `"time_limit"`, `"interrupted"`, or
    /// `None` when the solver ran to its end or proved its plan optimal
    /// (as `memplan solve --json` reports it).
    #[getter]
    fn stopped(&self) -> Option<&'static str> {
        self.solution.stopped.map(Stopped::name)
    }

    /// The solver's effort counters (nodes, backtracks, iterations...).
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters(py, &self.solution.counters)
    }

    /// The problem's capacity (`None`: the makespan was minimised).
    #[getter]
    fn capacity(&self) -> Option<u64> {
        self.report.capacity
    }

    /// Number of buffers with a hint.
    #[getter]
    fn hints(&self) -> usize {
        self.report.hints
    }

    /// Number of buffers placed at their hint.
    #[getter]
    fn hints_kept(&self) -> usize {
        self.report.hints_kept
    }

    /// The plan, to validate, write as CSV or inspect.
    #[getter]
    fn plan(&self, py: Python<'_>) -> Py<PyPlan> {
        self.plan.clone_ref(py)
    }

    /// The report as one JSON object, the same as `memplan solve --json`
    /// prints.
    fn to_json(&self) -> String {
        self.report.json().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Result(makespan={}, max_load={}, lower_bound={}, optimal={}, solver='{}', seconds={:.3}, timed_out={})",
            self.solution.makespan,
            self.report.max_load,
            self.solution.lower_bound,
            if self.solution.optimal { "True" } else { "False" },
            self.report.solver,
            self.report.seconds,
            if self.timed_out() { "True" } else { "False" },
        )
    }
}

/// `memplan.InternalError` for a solver's panic.
fn panic_error(py: Python<'_>, panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    internal_error(
        py,
        format!("internal error: the solver panicked: {what} (a bug; please report it)"),
    )
}

/// `memplan.NotFound` for a report without a plan, with what is known.
fn not_found_error(py: Python<'_>, report: &Report, error: &SolveError) -> PyErr {
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
            max_load: report.max_load,
            solver: report.solver.clone(),
            seconds: report.seconds,
            counters: counters.clone(),
            json: report.json().to_string(),
        },
    )
}

/// Plans `problem` with the request `args` make (the body of
/// `Problem.solve`).
pub fn solve(slf: &Bound<'_, PyProblem>, args: SolverArgs<'_>) -> PyResult<SolveResult> {
    let py = slf.py();
    let request = args.request(py)?;
    let problem = slf.get().problem.clone();
    let mut report = run(py, move |control| request.run(&problem, control))?;
    let solution = match &mut report.outcome {
        Outcome::Planned(solution) => solution,
        Outcome::NotFound(error) => {
            let error = error.clone();
            return Err(not_found_error(py, &report, &error));
        }
    };
    // The offsets move to the plan once; the getters keep the figures.
    let offsets = std::mem::take(&mut solution.plan);
    let solution = solution.clone();
    let plan = PyPlan::new(py, slf.clone().unbind(), offsets)?;
    let offsets = plan.offsets_array(py);
    Ok(SolveResult {
        plan: Py::new(py, plan)?,
        offsets,
        report,
        solution,
    })
}
