//! Several memories from Python: `Problem.solve_pools` shares the buffers
//! out among pools (fastest first) with a strategy of the library's
//! `pools` module, and returns a `PoolResult` (each buffer's pool and
//! offset, the spill, the bound, what each pool holds). Every plan is
//! checked by the per-pool validator before it is returned.

use memplan::pools::{Pool, PoolIdx, PoolProblem, PoolProblemError, PoolSolution, PoolSolveError};
use memplan::Stopped;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{argument_error, counters};
use crate::problem::PyProblem;
use crate::solve::{run, SolverArgs};

/// The pools given as `(name, capacity[, alignment])` tuples, fastest
/// first.
fn pools(py: Python<'_>, ob: &Bound<'_, PyAny>) -> PyResult<Vec<Pool>> {
    let mut out = Vec::new();
    for (i, item) in ob.try_iter()?.enumerate() {
        let item = item?;
        let bad = || {
            argument_error(
                py,
                "pools",
                Some(i),
                "expected (name, capacity) or (name, capacity, alignment) with a string name \
                 and non-negative 64-bit integers",
            )
        };
        let pool = if let Ok((name, capacity)) = item.extract::<(String, u64)>() {
            Pool::new(name, capacity)
        } else if let Ok((name, capacity, alignment)) = item.extract::<(String, u64, u64)>() {
            Pool::new(name, capacity).aligned(alignment)
        } else {
            return Err(bad());
        };
        out.push(pool);
    }
    Ok(out)
}

/// One pin per buffer: a pool name, or `None` / `""` for any pool.
fn pins(
    py: Python<'_>,
    ob: Option<&Bound<'_, PyAny>>,
    pools: &[Pool],
    n: usize,
) -> PyResult<Vec<Option<PoolIdx>>> {
    let Some(ob) = ob else {
        return Ok(vec![None; n]);
    };
    let mut out = Vec::with_capacity(n);
    for (i, item) in ob.try_iter()?.enumerate() {
        let item = item?;
        if item.is_none() {
            out.push(None);
            continue;
        }
        let name: String = item
            .extract()
            .map_err(|_| argument_error(py, "pins", Some(i), "expected a pool name or None"))?;
        if name.is_empty() {
            out.push(None);
            continue;
        }
        match pools.iter().position(|p| p.name == name) {
            Some(p) => out.push(Some(PoolIdx::new(p))),
            None => {
                let known: Vec<&str> = pools.iter().map(|p| p.name.as_str()).collect();
                return Err(argument_error(
                    py,
                    "pins",
                    Some(i),
                    format!("unknown pool `{name}` (pools: {})", known.join(", ")),
                ));
            }
        }
    }
    if out.len() != n {
        return Err(argument_error(
            py,
            "pins",
            None,
            format!("has {} values, the problem has {n} buffers", out.len()),
        ));
    }
    Ok(out)
}

/// A [`PoolProblemError`] as an `InputError` naming the argument and the
/// buffer (or pool) index.
fn pool_problem_error(py: Python<'_>, e: PoolProblemError) -> PyErr {
    let (field, index) = match (&e, e.buffer(), e.pool()) {
        (_, _, Some(p)) => ("pools", Some(p.index())),
        (PoolProblemError::NoPools | PoolProblemError::TooManyPools(_), _, _) => ("pools", None),
        (PoolProblemError::UnknownPin { .. } | PoolProblemError::UnpinnedFixed { .. }, b, _) => {
            ("pins", b.map(|b| b.index()))
        }
        (_, b, _) => ("buffers", b.map(|b| b.index())),
    };
    argument_error(py, field, index, e)
}

/// The outcome of `Problem.solve_pools`.
#[pyclass(frozen, name = "PoolResult", module = "memplan")]
pub struct PoolResult {
    names: Vec<String>,
    pools: Py<PyArray1<u32>>,
    offsets: Py<PyArray1<u64>>,
    solution: PoolSolution,
    seconds: f64,
    /// The report as JSON (`memplan solve --pools --json`).
    json: String,
}

#[pymethods]
impl PoolResult {
    /// Each buffer's pool, as an index into the pools given (NumPy uint32).
    #[getter]
    fn pools<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.pools.bind(py).clone()
    }

    /// Each buffer's pool by name.
    #[getter]
    fn pool_names(&self) -> Vec<String> {
        self.solution
            .plan
            .pools()
            .iter()
            .map(|p| self.names[p.index()].clone())
            .collect()
    }

    /// Each buffer's offset in its pool (NumPy uint64).
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.offsets.bind(py).clone()
    }

    /// The objective: entry k is the bytes × time placed outside the first
    /// k + 1 pools, for every pool but the last (outside all of them,
    /// nothing is).
    #[getter]
    fn spill(&self) -> Vec<u128> {
        self.solution.spill.0.clone()
    }

    /// A lower bound on every plan's spill, entry by entry.
    #[getter]
    fn spill_bound(&self) -> Vec<u128> {
        self.solution.spill_bound.0.clone()
    }

    /// Per pool, in order: a dict with `pool` (the name), `buffers`,
    /// `makespan` (highest address used) and `area` (bytes × time).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (name, u) in self.names.iter().zip(&self.solution.usage) {
            let d = PyDict::new(py);
            d.set_item("pool", name)?;
            d.set_item("buffers", u.buffers)?;
            d.set_item("makespan", u.makespan)?;
            d.set_item("area", u.area)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The strategy whose plan this is (`guided` may keep the
    /// `fastest-first` plan when it is better).
    #[getter]
    fn strategy(&self) -> &'static str {
        self.solution.found_by.name()
    }

    /// `"time_limit"` or `"interrupted"` when the clock or a cancel cut
    /// the solve short, else `None`.
    #[getter]
    fn stopped(&self) -> Option<&'static str> {
        self.solution.stopped.map(Stopped::name)
    }

    /// Time spent, in seconds.
    #[getter]
    fn seconds(&self) -> f64 {
        self.seconds
    }

    /// The strategy's effort counters.
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counters(py, &self.solution.counters)
    }

    /// The report as one JSON object, the same as `memplan solve --pools
    /// --json` prints.
    fn to_json(&self) -> String {
        self.json.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "PoolResult(strategy='{}', spill={:?}, seconds={:.3})",
            self.solution.found_by.name(),
            self.solution.spill.0,
            self.seconds
        )
    }
}

/// The body of `Problem.solve_pools`: the library's request runs off the
/// GIL (Ctrl-C stops it) and checks the plan.
pub fn solve_pools(
    problem: &PyProblem,
    py: Python<'_>,
    pools_ob: &Bound<'_, PyAny>,
    pins_ob: Option<&Bound<'_, PyAny>>,
    args: SolverArgs<'_>,
) -> PyResult<PoolResult> {
    let request = args.request(py)?;
    let pools = pools(py, pools_ob)?;
    let pins = pins(py, pins_ob, &pools, problem.problem.len())?;
    let names: Vec<String> = pools.iter().map(|p| p.name.clone()).collect();
    let pooled = PoolProblem::from_problem(&problem.problem, pins, pools)
        .map_err(|e| pool_problem_error(py, e))?;
    let pooled = std::sync::Arc::new(pooled);
    let shared = pooled.clone();
    let report = run(py, move |control| request.run_pools(&shared, control))?;
    let json = report.json(&pooled).to_string();
    let solution = match report.outcome {
        Ok(solution) => solution,
        Err(e) => return Err(pools_not_found(py, &e)),
    };
    let pool_of: Vec<u32> = solution.plan.pools().iter().map(|p| p.0).collect();
    Ok(PoolResult {
        names,
        pools: PyArray1::from_vec(py, pool_of).unbind(),
        offsets: PyArray1::from_vec(py, solution.plan.offsets().to_vec()).unbind(),
        solution,
        seconds: report.seconds,
        json,
    })
}

/// `memplan.PoolsNotFound`: no assignment of every buffer to a pool.
fn pools_not_found(py: Python<'_>, e: &PoolSolveError) -> PyErr {
    let (proven, reason) = match e {
        PoolSolveError::Infeasible(_) => (true, "proven infeasible"),
        PoolSolveError::NotFound { reason, .. } => (false, reason.describe()),
    };
    crate::errors::pools_not_found(py, e.to_string(), proven, reason)
}
