//! `memplan.Plan`: an offset per buffer of a problem, checked by the
//! library's independent validator, with statistics and CSV I/O.

use std::path::PathBuf;

use memplan::{Plan, PlanError, Stats};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::errors::{argument_error, csv_error, invalid_plan};
use crate::input::column;
use crate::problem::{write_atomically, PyProblem};

/// Offsets for every buffer of a problem (in the problem's buffer order).
#[pyclass(frozen, name = "Plan", module = "memplan")]
pub struct PyPlan {
    problem: Py<PyProblem>,
    pub plan: Plan,
    /// The offsets as a read-only NumPy array, built once.
    offsets: Py<PyArray1<u64>>,
}

/// How far a plan is from the max load.
#[pyclass(frozen, get_all, name = "PlanStats", module = "memplan")]
pub struct PlanStats {
    /// Number of buffers.
    buffers: usize,
    /// The max load: the lower bound on every makespan.
    max_load: u64,
    /// The plan's makespan: max(offset + size).
    makespan: u64,
    /// makespan - max_load, in bytes.
    fragmentation: u64,
    /// Fragmentation in percent of the max load (0 when it is 0).
    fragmentation_percent: f64,
}

#[pymethods]
impl PlanStats {
    fn __repr__(&self) -> String {
        format!(
            "PlanStats(buffers={}, max_load={}, makespan={}, fragmentation={}, fragmentation_percent={:.3})",
            self.buffers,
            self.max_load,
            self.makespan,
            self.fragmentation,
            self.fragmentation_percent
        )
    }
}

/// A read-only NumPy array holding `values`.
pub fn readonly_array(py: Python<'_>, values: Vec<u64>) -> PyResult<Py<PyArray1<u64>>> {
    let array = PyArray1::from_vec(py, values);
    array.getattr("flags")?.setattr("writeable", false)?;
    Ok(array.unbind())
}

impl PyPlan {
    /// A plan of `problem` with `plan`'s offsets.
    pub fn new(py: Python<'_>, problem: Py<PyProblem>, plan: Plan) -> PyResult<Self> {
        let offsets = readonly_array(py, plan.offsets().to_vec())?;
        Ok(PyPlan {
            problem,
            plan,
            offsets,
        })
    }

    /// A plan of `problem` from a column of offsets.
    pub fn from_offsets(
        problem: &Bound<'_, PyProblem>,
        offsets: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = problem.py();
        let values = column(py, offsets, "offsets")?;
        let n = problem.get().problem.len();
        if values.len() != n {
            return Err(argument_error(
                py,
                "offsets",
                None,
                format!("has {} values for {n} buffers", values.len()),
            ));
        }
        PyPlan::new(py, problem.clone().unbind(), Plan::from_offsets(values))
    }

    /// The read-only offsets array (shared, not copied).
    pub fn offsets_array(&self, py: Python<'_>) -> Py<PyArray1<u64>> {
        self.offsets.clone_ref(py)
    }

    /// Runs the validator: `InvalidPlan` naming the buffers at fault.
    pub fn check(&self, py: Python<'_>) -> PyResult<()> {
        let problem = &self.problem.get().problem;
        let result = py.detach(|| memplan::validate(problem, &self.plan));
        let Err(e) = result else {
            return Ok(());
        };
        let index_of = |id: &str| problem.buffers().iter().position(|b| b.id == id);
        let buffers: Vec<usize> = match &e {
            PlanError::Overlap { first, second, .. } => vec![first.index(), second.index()],
            PlanError::AddressOverflow { id, .. }
            | PlanError::Misaligned { id, .. }
            | PlanError::FixedMoved { id, .. }
            | PlanError::ExceedsCapacity { id, .. } => index_of(id).into_iter().collect(),
            _ => Vec::new(),
        };
        Err(invalid_plan(py, e.to_string(), buffers))
    }
}

#[pymethods]
impl PyPlan {
    /// A plan of `problem` with the given offsets (a list or NumPy array, in
    /// buffer order).
    #[new]
    fn py_new(problem: &Bound<'_, PyProblem>, offsets: &Bound<'_, PyAny>) -> PyResult<Self> {
        PyPlan::from_offsets(problem, offsets)
    }

    /// Reads a plan CSV for `problem` (columns `id` and `offset`; others
    /// are ignored). Errors name the file, line and column.
    #[staticmethod]
    fn from_csv(problem: &Bound<'_, PyProblem>, path: PathBuf) -> PyResult<Self> {
        let py = problem.py();
        let p = &problem.get().problem;
        let plan = py
            .detach(|| memplan::plan::read_plan(&path, p))
            .map_err(|e| csv_error(py, &e))?;
        PyPlan::new(py, problem.clone().unbind(), plan)
    }

    /// Writes the plan as CSV (`id,lower,upper,size[,alignment],offset`,
    /// the command line's format, lifetimes in the problem's semantics),
    /// with addresses `start_address + offset` (a multiple of every
    /// alignment).
    #[pyo3(signature = (path, *, start_address=0))]
    fn to_csv(&self, py: Python<'_>, path: PathBuf, start_address: u64) -> PyResult<()> {
        let problem = self.problem.get();
        let p = &problem.problem;
        if let Some((i, b)) = p
            .buffers()
            .iter()
            .enumerate()
            .find(|(_, b)| start_address % b.alignment != 0)
        {
            return Err(argument_error(
                py,
                "start_address",
                None,
                format!(
                    "{start_address} is not a multiple of buffer {i} (`{}`)'s alignment {}",
                    b.id, b.alignment
                ),
            ));
        }
        let mut addresses = Vec::with_capacity(p.len());
        for (i, (b, &offset)) in p.buffers().iter().zip(self.plan.offsets()).enumerate() {
            match start_address
                .checked_add(offset)
                .filter(|a| a.checked_add(b.size).is_some())
            {
                Some(a) => addresses.push(a),
                None => {
                    return Err(argument_error(
                        py,
                        "start_address",
                        None,
                        format!("buffer {i} (`{}`) would end past 2^64", b.id),
                    ))
                }
            }
        }
        let at = Plan::from_offsets(addresses);
        py.detach(|| {
            write_atomically(&path, |out| {
                memplan::plan::write_plan(out, p, &at, problem.lifetimes)
            })
        })
    }

    /// Checks the plan with memplan's independent validator: one offset
    /// per buffer, alignments, fixed offsets, the capacity, and no two
    /// buffers alive at the same time sharing an address (zero-size buffers
    /// share none). Raises `InvalidPlan` naming the buffers at fault.
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        self.check(py)
    }

    /// Statistics: buffers, max load, makespan, fragmentation.
    fn stats(&self, py: Python<'_>) -> PlanStats {
        let problem = &self.problem.get().problem;
        let s = py.detach(|| Stats::new(problem, &self.plan));
        PlanStats {
            buffers: s.buffers,
            max_load: s.max_load,
            makespan: s.makespan,
            fragmentation: s.fragmentation,
            fragmentation_percent: s.fragmentation_percent,
        }
    }

    /// The offsets, in buffer order (read-only NumPy uint64).
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.offsets.bind(py).clone()
    }

    /// The makespan: max(offset + size), 0 for no buffers.
    #[getter]
    fn makespan(&self) -> u64 {
        self.plan.makespan(&self.problem.get().problem)
    }

    /// The problem planned.
    #[getter]
    fn problem(&self, py: Python<'_>) -> Py<PyProblem> {
        self.problem.clone_ref(py)
    }

    fn __len__(&self) -> usize {
        self.plan.offsets().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan({} buffers, makespan={})",
            self.plan.offsets().len(),
            self.makespan()
        )
    }
}
