//! Raising memplan's Python exceptions. They are defined in Python
//! (`memplan/_errors.py`) so that `InputError` and `InvalidPlan` can
//! subclass `ValueError` under the stable ABI; this module builds them.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exception class `name` of `memplan._errors` called with `message`
/// and keyword arguments set by `kwargs`. If the class cannot be built
/// (the package is broken), that failure is raised instead.
fn raise(
    py: Python<'_>,
    name: &str,
    message: String,
    kwargs: impl FnOnce(&Bound<'_, PyDict>) -> PyResult<()>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("memplan._errors")?.getattr(name)?;
        let args = PyDict::new(py);
        kwargs(&args)?;
        Ok(PyErr::from_value(class.call((message,), Some(&args))?))
    };
    build().unwrap_or_else(|e| e)
}

/// Where bad input was found: an argument and buffer index (array input),
/// or a file, line and column (CSV input).
#[derive(Clone, Debug, Default)]
pub struct Location {
    pub index: Option<usize>,
    pub field: Option<String>,
    pub path: Option<String>,
    pub line: Option<u64>,
}

/// `memplan.InputError` (a `ValueError`).
pub fn input_error(py: Python<'_>, message: String, at: Location) -> PyErr {
    raise(py, "InputError", message, |kw| {
        kw.set_item("index", at.index)?;
        kw.set_item("field", at.field)?;
        kw.set_item("path", at.path)?;
        kw.set_item("line", at.line)
    })
}

/// `memplan.InputError` for argument `field` (and buffer `index`), with
/// the message prefixed by `field[index]: `.
pub fn argument_error(
    py: Python<'_>,
    field: &str,
    index: Option<usize>,
    what: impl std::fmt::Display,
) -> PyErr {
    let message = match index {
        Some(i) => format!("{field}[{i}]: {what}"),
        None => format!("{field}: {what}"),
    };
    input_error(
        py,
        message,
        Location {
            index,
            field: Some(field.to_string()),
            ..Location::default()
        },
    )
}

/// `memplan.InputError` from the library's located CSV error.
pub fn csv_error(py: Python<'_>, e: &memplan::InputError) -> PyErr {
    input_error(
        py,
        e.to_string(),
        Location {
            index: None,
            field: e.column.clone(),
            path: Some(e.path.display().to_string()),
            line: e.line,
        },
    )
}

/// `memplan.InvalidPlan` (a `ValueError`) naming the buffers at fault.
pub fn invalid_plan(py: Python<'_>, message: String, buffers: Vec<usize>) -> PyErr {
    raise(py, "InvalidPlan", message, |kw| {
        kw.set_item("buffers", buffers)
    })
}

/// What `memplan.NotFound` carries besides the message.
pub struct NotFoundInfo {
    pub capacity: u64,
    pub proven_infeasible: bool,
    pub reason: &'static str,
    pub best_makespan: Option<u64>,
    pub max_load: u64,
    pub solver: String,
    pub seconds: f64,
    pub counters: Vec<(&'static str, u64)>,
    /// The report as JSON (`memplan solve --json`).
    pub json: String,
}

/// `memplan.NotFound`: no plan within the capacity.
pub fn not_found(py: Python<'_>, message: String, info: NotFoundInfo) -> PyErr {
    raise(py, "NotFound", message, |kw| {
        kw.set_item("capacity", info.capacity)?;
        kw.set_item("proven_infeasible", info.proven_infeasible)?;
        kw.set_item("reason", info.reason)?;
        kw.set_item("best_makespan", info.best_makespan)?;
        kw.set_item("max_load", info.max_load)?;
        kw.set_item("solver", info.solver)?;
        kw.set_item("seconds", info.seconds)?;
        kw.set_item("counters", counters(py, &info.counters)?)?;
        kw.set_item("report", info.json)
    })
}

/// `memplan.PoolsNotFound`: the buffers could not all be placed in the
/// pools (`proven_infeasible` when no assignment exists).
pub fn pools_not_found(
    py: Python<'_>,
    message: String,
    proven_infeasible: bool,
    reason: &'static str,
) -> PyErr {
    raise(py, "PoolsNotFound", message, |kw| {
        kw.set_item("proven_infeasible", proven_infeasible)?;
        kw.set_item("reason", reason)
    })
}

/// `memplan.InternalError` (a `RuntimeError`): a bug in memplan.
pub fn internal_error(py: Python<'_>, message: String) -> PyErr {
    let err = raise(py, "InternalError", message.clone(), |_| Ok(()));
    if err.is_instance_of::<PyRuntimeError>(py) {
        err
    } else {
        PyRuntimeError::new_err(message)
    }
}

/// Solver counters as a dict.
pub fn counters<'py>(
    py: Python<'py>,
    counters: &[(&'static str, u64)],
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, value) in counters {
        dict.set_item(*name, *value)?;
    }
    Ok(dict)
}
