//! The `memplan._memplan` extension module: memplan's problems, plans and
//! solvers for Python (pyo3; abi3, CPython >= 3.9). The Python package
//! `memplan` (in `python/memplan`) re-exports it with the exceptions, the
//! typed `solve` function and the ExecuTorch adapter.
//!
//! - `input`: integer columns from lists or NumPy arrays, names and
//!   options, with errors naming the argument and the buffer index;
//! - `errors`: the Python exceptions (defined in `memplan/_errors.py`);
//! - `problem`: `Problem` and its statistics;
//! - `plan`: `Plan`, its validation and statistics;
//! - `solve`: solver options, the solve off the GIL with Ctrl-C, `Result`;
//! - `pools`: several memories, `Problem.solve_pools` and `PoolResult`.

use memplan::named::Named;
use pyo3::prelude::*;

/// Every name of a [`Named`] value, in help order (a Python tuple).
fn names<T: Named>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.name()).collect()
}

mod errors;
mod input;
mod plan;
mod pools;
mod problem;
mod solve;

/// memplan's native module (use it through the `memplan` package).
#[pymodule]
fn _memplan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The names every option takes, from the library's one registry.
    m.add("SOLVERS", names::<memplan::solvers::SolverKind>())?;
    m.add("ORDERS", names::<memplan::solvers::greedy::Order>())?;
    m.add("FITS", names::<memplan::solvers::greedy::Fit>())?;
    m.add("PREORDERS", names::<memplan::solvers::search::Preorder>())?;
    m.add("LIFETIMES", names::<memplan::Lifetimes>())?;
    m.add("STRATEGIES", names::<memplan::pools::Strategy>())?;
    m.add("KINDS", names::<memplan::generate::Kind>())?;
    m.add_class::<problem::PyProblem>()?;
    m.add_class::<problem::ProblemStats>()?;
    m.add_class::<plan::PyPlan>()?;
    m.add_class::<plan::PlanStats>()?;
    m.add_class::<solve::SolveResult>()?;
    m.add_class::<pools::PoolResult>()?;
    m.add_function(wrap_pyfunction!(problem::generate, m)?)?;
    Ok(())
}
