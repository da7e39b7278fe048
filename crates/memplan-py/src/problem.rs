//! `memplan.Problem`: buffers (sizes, lifetimes, alignments, fixed offsets)
//! and an optional capacity, built from arrays or read from CSV, with its
//! statistics; and `memplan.generate`.

use std::path::PathBuf;
use std::sync::Arc;

use memplan::generate::Kind;
use memplan::{Buffer, BufferIdx, Gaps, Lifetimes, Problem, ProblemError};
use numpy::PyArray1;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};

use crate::errors::{argument_error, csv_error};
use crate::input::{column, lifetimes as parse_lifetimes, optional_column};
use crate::solve::{SolveResult, SolverArgs};

/// A memory-planning problem: every buffer's size, lifetime, alignment and
/// optional fixed offset, plus an optional capacity. Immutable.
#[pyclass(frozen, name = "Problem", module = "memplan")]
pub struct PyProblem {
    /// The problem (shared with plans and results).
    pub problem: Arc<Problem>,
    /// How lifetimes were given (used when writing CSV and reading back
    /// `starts`/`ends`).
    pub lifetimes: Lifetimes,
}

impl PyProblem {
    /// Wraps a problem.
    pub fn new(problem: Problem, lifetimes: Lifetimes) -> Self {
        PyProblem {
            problem: Arc::new(problem),
            lifetimes,
        }
    }
}

/// Statistics of a problem, as `memplan stats` prints them.
#[pyclass(frozen, get_all, name = "ProblemStats", module = "memplan")]
pub struct ProblemStats {
    /// Number of buffers.
    buffers: usize,
    /// The max load: most bytes alive at one instant (a lower bound on
    /// every makespan).
    max_load: u64,
    /// Sum of all sizes.
    total_size: u64,
    /// Smallest size (0 for no buffers).
    min_size: u64,
    /// Largest size.
    max_size: u64,
    /// First time (half-open).
    time_start: u64,
    /// End of the last lifetime (half-open).
    time_end: u64,
    /// Buffers with a fixed offset.
    fixed: usize,
    /// Buffers with an alignment above 1.
    aligned: usize,
    /// Buffers of size 0.
    zero_size: usize,
    /// Gaps in lifetimes, over all buffers.
    gaps: usize,
}

#[pymethods]
impl ProblemStats {
    fn __repr__(&self) -> String {
        format!(
            "ProblemStats(buffers={}, max_load={}, total_size={}, min_size={}, max_size={}, \
             time_start={}, time_end={}, fixed={}, aligned={}, zero_size={}, gaps={})",
            self.buffers,
            self.max_load,
            self.total_size,
            self.min_size,
            self.max_size,
            self.time_start,
            self.time_end,
            self.fixed,
            self.aligned,
            self.zero_size,
            self.gaps
        )
    }
}

/// Checks that column `field` has `n` values.
fn check_len(py: Python<'_>, field: &str, got: usize, n: usize) -> PyResult<()> {
    if got == n {
        Ok(())
    } else {
        Err(argument_error(
            py,
            field,
            None,
            format!("has {got} values, `sizes` has {n}"),
        ))
    }
}

/// The alignments: one integer for all buffers, or a column.
fn alignments(py: Python<'_>, ob: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<u64>> {
    match ob {
        None => Ok(vec![1; n]),
        Some(ob) if ob.is_instance_of::<PyInt>() => match ob.extract::<u64>() {
            Ok(a) => Ok(vec![a; n]),
            Err(_) => Err(argument_error(
                py,
                "alignments",
                None,
                format!("expected a non-negative 64-bit integer, got {}", ob.repr()?),
            )),
        },
        Some(ob) => {
            let a = column(py, ob, "alignments")?;
            check_len(py, "alignments", a.len(), n)?;
            Ok(a)
        }
    }
}

/// The fixed offsets: `None` for none, or a column with `None` for a
/// buffer not fixed.
fn offsets_column(
    py: Python<'_>,
    ob: Option<&Bound<'_, PyAny>>,
    n: usize,
) -> PyResult<Vec<Option<u64>>> {
    match ob {
        Some(ob) => {
            let o = optional_column(py, ob, "offsets")?;
            check_len(py, "offsets", o.len(), n)?;
            Ok(o)
        }
        None => Ok(vec![None; n]),
    }
}

/// The ids: strings, or the buffer indices when not given.
fn ids_column(py: Python<'_>, ob: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<String>> {
    match ob {
        Some(ob) => {
            let mut ids = Vec::with_capacity(n);
            for (i, item) in ob.try_iter()?.enumerate() {
                let item = item?;
                ids.push(
                    item.extract::<String>()
                        .map_err(|_| argument_error(py, "ids", Some(i), "expected a string"))?,
                );
            }
            check_len(py, "ids", ids.len(), n)?;
            Ok(ids)
        }
        None => Ok((0..n).map(|i| i.to_string()).collect()),
    }
}

/// Buffer `i`'s lifetime `lower..upper` in `semantics` as a non-empty
/// half-open one.
fn half_open(
    py: Python<'_>,
    semantics: Lifetimes,
    i: usize,
    lower: u64,
    upper: u64,
) -> PyResult<(u64, u64)> {
    let (start, end) = semantics.to_half_open(lower, upper).ok_or_else(|| {
        argument_error(
            py,
            "ends",
            Some(i),
            format!("inclusive end {upper} + 1 overflows 64 bits"),
        )
    })?;
    if start >= end {
        return Err(argument_error(
            py,
            "ends",
            Some(i),
            format!(
                "empty lifetime: start {lower}, end {upper} is empty under {} semantics",
                semantics.name()
            ),
        ));
    }
    Ok((start, end))
}

/// The `gaps` argument: one item per buffer, `None` (no gaps), a string in
/// the CSV column's syntax (`"3-5 7-9@0:4"`), or a sequence of `(lo, hi)`
/// and `(lo, hi, wlo, whi)` tuples; times in the problem's semantics.
/// Errors name `gaps` and the buffer index.
fn gaps_column(
    py: Python<'_>,
    ob: &Bound<'_, PyAny>,
    buffers: &[Buffer],
    starts: &[u64],
    ends: &[u64],
    semantics: Lifetimes,
) -> PyResult<Gaps> {
    let mut pairs = Vec::new();
    let mut count = 0;
    for (i, item) in ob.try_iter()?.enumerate() {
        let item = item?;
        count += 1;
        let Some(buffer) = buffers.get(i) else {
            continue;
        };
        let bad = |message: String| argument_error(py, "gaps", Some(i), message);
        let text = if item.is_none() {
            continue;
        } else if let Ok(text) = item.extract::<String>() {
            text
        } else {
            let mut entries = Vec::new();
            for entry in item.try_iter().map_err(|_| {
                bad("expected None, a string like \"3-5 7-9@0:4\" or a list of tuples".into())
            })? {
                let entry = entry?;
                let values: Vec<u64> = entry.extract().map_err(|_| {
                    bad(format!(
                        "expected a (lo, hi) or (lo, hi, wlo, whi) tuple of non-negative integers, got {}",
                        entry.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                    ))
                })?;
                match values[..] {
                    [lo, hi] => entries.push(format!("{lo}-{hi}")),
                    [lo, hi, wlo, whi] => entries.push(format!("{lo}-{hi}@{wlo}:{whi}")),
                    _ => {
                        return Err(bad(format!(
                            "expected a (lo, hi) or (lo, hi, wlo, whi) tuple, got {} values",
                            values.len()
                        )))
                    }
                }
            }
            entries.join(" ")
        };
        let gaps =
            memplan::problem::parse_gaps(text.as_bytes(), buffer, (starts[i], ends[i]), semantics)
                .map_err(|kind| bad(kind.to_string()))?;
        pairs.extend(gaps.into_iter().map(|g| (BufferIdx::new(i), g)));
    }
    check_len(py, "gaps", count, buffers.len())?;
    Gaps::new(buffers.len(), pairs).map_err(|e| problem_error(py, e.into()))
}

/// Turns a [`ProblemError`] into an `InputError` naming the argument and
/// buffer index.
fn problem_error(py: Python<'_>, e: ProblemError) -> PyErr {
    let field = match &e {
        ProblemError::TooManyBuffers(_) | ProblemError::SizeSumOverflow(_) => "sizes",
        ProblemError::EmptyLifetime { .. } => "ends",
        ProblemError::ZeroAlignment(_) => "alignments",
        ProblemError::DuplicateId { .. } => "ids",
        ProblemError::Gap { .. }
        | ProblemError::GapTable(_)
        | ProblemError::GapTableSize { .. } => "gaps",
        ProblemError::HintCount { .. }
        | ProblemError::MisalignedHint { .. }
        | ProblemError::HintNotFixedOffset { .. }
        | ProblemError::HintTooLarge { .. } => "hints",
        _ => "offsets",
    };
    let index = e.buffer().map(|b| b.index());
    let message = match &e {
        ProblemError::DuplicateId { id, first, .. } => {
            format!("duplicate id `{id}` (first at index {})", first.index())
        }
        ProblemError::FixedOverlap {
            first,
            first_id,
            second_id,
            ..
        } => format!(
            "fixed buffer `{second_id}` overlaps fixed buffer `{first_id}` (index {}) in time and address",
            first.index()
        ),
        other => other.to_string(),
    };
    argument_error(py, field, index, message)
}

/// Writes `path` through a temporary file in the same directory (a new,
/// randomly named one), synced and renamed into place once complete: never
/// a partial file.
pub fn write_atomically(
    path: &PathBuf,
    write: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> PyResult<()> {
    let fail = |e: std::io::Error| PyOSError::new_err(format!("{}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file = tempfile::NamedTempFile::new_in(&dir).map_err(fail)?;
    {
        let mut out = std::io::BufWriter::new(file.as_file());
        write(&mut out).map_err(fail)?;
        std::io::Write::flush(&mut out).map_err(fail)?;
    }
    file.as_file().sync_all().map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

#[pymethods]
impl PyProblem {
    /// Builds a problem from parallel arrays (lists or NumPy integer
    /// arrays, read in place). See `memplan.solve` for the arguments.
    #[new]
    #[pyo3(signature = (sizes, starts, ends, *, alignments=None, offsets=None, ids=None, capacity=None, lifetimes=None, gaps=None, hints=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        sizes: &Bound<'_, PyAny>,
        starts: &Bound<'_, PyAny>,
        ends: &Bound<'_, PyAny>,
        alignments: Option<&Bound<'_, PyAny>>,
        offsets: Option<&Bound<'_, PyAny>>,
        ids: Option<&Bound<'_, PyAny>>,
        capacity: Option<u64>,
        lifetimes: Option<&str>,
        gaps: Option<&Bound<'_, PyAny>>,
        hints: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let semantics = parse_lifetimes(py, lifetimes)?;
        let sizes = column(py, sizes, "sizes")?;
        let n = sizes.len();
        let starts = column(py, starts, "starts")?;
        check_len(py, "starts", starts.len(), n)?;
        let ends = column(py, ends, "ends")?;
        check_len(py, "ends", ends.len(), n)?;
        let alignments = self::alignments(py, alignments, n)?;
        let offsets = offsets_column(py, offsets, n)?;
        let ids = ids_column(py, ids, n)?;
        let mut buffers = Vec::with_capacity(n);
        for (i, id) in ids.into_iter().enumerate() {
            let (start, end) = half_open(py, semantics, i, starts[i], ends[i])?;
            buffers.push(Buffer {
                id,
                start,
                end,
                size: sizes[i],
                alignment: alignments[i],
                fixed_offset: offsets[i],
            });
        }
        let gaps = match gaps {
            Some(ob) => gaps_column(py, ob, &buffers, &starts, &ends, semantics)?,
            None => Gaps::default(),
        };
        let mut problem =
            Problem::new_with_gaps(buffers, gaps, capacity).map_err(|e| problem_error(py, e))?;
        if let Some(ob) = hints {
            let h = optional_column(py, ob, "hints")?;
            check_len(py, "hints", h.len(), n)?;
            problem = problem.with_hints(&h).map_err(|e| problem_error(py, e))?;
        }
        Ok(PyProblem::new(problem, semantics))
    }

    /// Reads a problem CSV (`id,lower,upper,size[,alignment][,offset]`,
    /// the command line's input format). Errors name the file, line and
    /// column.
    #[staticmethod]
    #[pyo3(signature = (path, *, lifetimes=None, capacity=None))]
    fn from_csv(
        py: Python<'_>,
        path: PathBuf,
        lifetimes: Option<&str>,
        capacity: Option<u64>,
    ) -> PyResult<Self> {
        let semantics = parse_lifetimes(py, lifetimes)?;
        let problem = py
            .detach(|| memplan::problem::read_problem(&path, semantics))
            .map_err(|e| csv_error(py, &e))?;
        Ok(PyProblem::new(problem.with_capacity(capacity), semantics))
    }

    /// Writes the problem as CSV, lifetimes in the problem's semantics
    /// (the capacity is not part of the file).
    fn to_csv(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| {
            write_atomically(&path, |out| {
                memplan::problem::write_problem(out, &self.problem, self.lifetimes)
            })
        })
    }

    /// The same buffers with another capacity (`None`: minimise).
    #[pyo3(signature = (capacity))]
    fn with_capacity(&self, capacity: Option<u64>) -> Self {
        PyProblem::new(
            self.problem.as_ref().clone().with_capacity(capacity),
            self.lifetimes,
        )
    }

    /// Number of buffers.
    fn __len__(&self) -> usize {
        self.problem.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Problem({} buffers, max_load={}, capacity={}, lifetimes='{}')",
            self.problem.len(),
            self.problem.max_load(),
            self.problem
                .capacity
                .map_or("None".to_string(), |c| c.to_string()),
            self.lifetimes.name()
        )
    }

    /// The capacity (`None`: the makespan is minimised).
    #[getter]
    fn capacity(&self) -> Option<u64> {
        self.problem.capacity
    }

    /// The lifetime semantics of `starts`/`ends` and of CSV files.
    #[getter]
    fn lifetimes(&self) -> &'static str {
        self.lifetimes.name()
    }

    /// The buffers' ids.
    #[getter]
    fn ids(&self) -> Vec<String> {
        self.problem
            .buffers()
            .iter()
            .map(|b| b.id.clone())
            .collect()
    }

    /// Sizes in bytes (NumPy uint64).
    #[getter]
    fn sizes<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.column(py, |b| b.size)
    }

    /// Preferred offsets (NumPy int64, -1 for none), or `None` when no
    /// buffer has one.
    #[getter]
    fn hints<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<i64>>> {
        let hints = self.problem.hints()?;
        let values = (0..hints.len())
            .map(|i| {
                hints
                    .at(i)
                    .map_or(-1, |h| i64::try_from(h).unwrap_or(i64::MAX))
            })
            .collect();
        Some(PyArray1::from_vec(py, values))
    }

    /// Lifetime starts, in the problem's semantics (NumPy uint64).
    #[getter]
    fn starts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.column(py, |b| self.lifetimes.from_half_open(b.start, b.end).0)
    }

    /// Lifetime ends, in the problem's semantics (NumPy uint64).
    #[getter]
    fn ends<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.column(py, |b| self.lifetimes.from_half_open(b.start, b.end).1)
    }

    /// Alignments (NumPy uint64).
    #[getter]
    fn alignments<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.column(py, |b| b.alignment)
    }

    /// The gaps of each buffer, in the problem's semantics: a list per
    /// buffer of `(lo, hi)` (idle) or `(lo, hi, wlo, whi)` (only
    /// `[offset + wlo, offset + whi)` occupied) tuples.
    #[getter]
    fn gaps<'py>(&self, py: Python<'py>) -> PyResult<Vec<Vec<Bound<'py, PyTuple>>>> {
        self.problem
            .indices()
            .map(|i| {
                self.problem
                    .gaps()
                    .of(i)
                    .iter()
                    .map(|g| {
                        let (lo, hi) = self.lifetimes.from_half_open(g.start, g.end);
                        match g.window {
                            Some((wlo, whi)) => PyTuple::new(py, [lo, hi, wlo, whi]),
                            None => PyTuple::new(py, [lo, hi]),
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Fixed offsets (`None` for a free buffer).
    #[getter]
    fn fixed_offsets(&self) -> Vec<Option<u64>> {
        self.problem
            .buffers()
            .iter()
            .map(|b| b.fixed_offset)
            .collect()
    }

    /// The max load: most bytes alive at one instant, a lower bound on
    /// every makespan.
    #[getter]
    fn max_load(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.problem.max_load())
    }

    /// Statistics: buffers, max load, sizes, time range, fixed, aligned
    /// and zero-size buffers.
    fn stats(&self, py: Python<'_>) -> ProblemStats {
        let b = self.problem.buffers();
        ProblemStats {
            buffers: b.len(),
            max_load: py.detach(|| self.problem.max_load()),
            total_size: b.iter().map(|x| x.size).sum(),
            min_size: b.iter().map(|x| x.size).min().unwrap_or(0),
            max_size: b.iter().map(|x| x.size).max().unwrap_or(0),
            time_start: b.iter().map(|x| x.start).min().unwrap_or(0),
            time_end: b.iter().map(|x| x.end).max().unwrap_or(0),
            fixed: b.iter().filter(|x| x.fixed_offset.is_some()).count(),
            aligned: b.iter().filter(|x| x.alignment > 1).count(),
            zero_size: b.iter().filter(|x| x.size == 0).count(),
            gaps: self.problem.gaps().count(),
        }
    }

    /// Plans the problem; returns a `Result`, or raises `NotFound` when no
    /// plan within the capacity is found. See `memplan.solve` for the
    /// options. The GIL is released while solving; Ctrl-C stops the solve
    /// and raises `KeyboardInterrupt`.
    #[pyo3(signature = (*, solver=None, time_limit=None, effort=None, seed=None, order=None,
        fit=None, step_limit=None, learned_backtracking=None, learned_jump=None,
        learned_threshold=None, learned_depth_weight=None, iterations=None, target_fragmentation=None,
        size_classes=None, preorders=None, round_robin=None, rerank_parts=None, canonical=None,
        section_inference=None, effective_height=None, dominance=None, dynamic_order=None,
        decompose=None, hatless=None, exact_fill=None, head_start=None, ignore_hints=None, stable=None,
        stable_makespan=None),
        text_signature = "(self, /, *, solver=None, time_limit=None, effort=None, seed=None, \
            order=None, fit=None, step_limit=None, learned_backtracking=None, \
            learned_jump=None, learned_threshold=None, learned_depth_weight=None, iterations=None, \
            target_fragmentation=None, size_classes=None, preorders=None, round_robin=None, \
            rerank_parts=None, canonical=None, section_inference=None, effective_height=None, \
            dominance=None, dynamic_order=None, decompose=None, hatless=None, \
            exact_fill=None, head_start=None, ignore_hints=None, stable=None, stable_makespan=None)")]
    #[allow(clippy::too_many_arguments)]
    fn solve(
        slf: &Bound<'_, Self>,
        solver: Option<&str>,
        time_limit: Option<f64>,
        effort: Option<f64>,
        seed: Option<u64>,
        order: Option<&str>,
        fit: Option<&str>,
        step_limit: Option<u64>,
        learned_backtracking: Option<bool>,
        learned_jump: Option<bool>,
        learned_threshold: Option<u32>,
        learned_depth_weight: Option<u32>,
        iterations: Option<u32>,
        target_fragmentation: Option<f64>,
        size_classes: Option<bool>,
        preorders: Option<Vec<String>>,
        round_robin: Option<bool>,
        rerank_parts: Option<bool>,
        canonical: Option<bool>,
        section_inference: Option<bool>,
        effective_height: Option<bool>,
        dominance: Option<bool>,
        dynamic_order: Option<bool>,
        decompose: Option<bool>,
        hatless: Option<bool>,
        exact_fill: Option<bool>,
        head_start: Option<bool>,
        ignore_hints: Option<bool>,
        stable: Option<bool>,
        stable_makespan: Option<u64>,
    ) -> PyResult<SolveResult> {
        let args = SolverArgs {
            solver,
            time_limit,
            effort,
            seed,
            order,
            fit,
            step_limit,
            learned_backtracking,
            learned_jump,
            learned_threshold,
            learned_depth_weight,
            iterations,
            target_fragmentation,
            size_classes,
            preorders,
            round_robin,
            rerank_parts,
            canonical,
            section_inference,
            effective_height,
            dominance,
            dynamic_order,
            decompose,
            hatless,
            exact_fill,
            head_start,
            ignore_hints,
            stable,
            stable_makespan,
            strategy: None,
        };
        crate::solve::solve(slf, args)
    }

    /// Shares the buffers out among several memories: `pools` lists
    /// `(name, capacity[, alignment])` fastest first, `pins` one pool name
    /// (or `None`) per buffer. Minimises the bytes × time outside the
    /// first pool, then outside the first two, and so on; raises
    /// `PoolsNotFound` when the buffers cannot all be placed. The
    /// time limit (default: none; the guided strategy then caps itself at
    /// 30 s), effort, seed and `ignore_hints` are those of `solve`. The GIL
    /// is released while solving; Ctrl-C stops the solve and raises
    /// `KeyboardInterrupt`. The problem's own capacity is not used. See
    /// docs/pools.md.
    #[pyo3(signature = (pools, *, pins=None, strategy=None, time_limit=None, effort=None, seed=None, ignore_hints=None),
        text_signature = "(self, /, pools, *, pins=None, strategy=None, time_limit=None, effort=None, seed=None, ignore_hints=None)")]
    #[allow(clippy::too_many_arguments)]
    fn solve_pools(
        &self,
        py: Python<'_>,
        pools: &Bound<'_, PyAny>,
        pins: Option<&Bound<'_, PyAny>>,
        strategy: Option<&str>,
        time_limit: Option<f64>,
        effort: Option<f64>,
        seed: Option<u64>,
        ignore_hints: Option<bool>,
    ) -> PyResult<crate::pools::PoolResult> {
        let args = SolverArgs {
            strategy,
            time_limit,
            effort,
            seed,
            ignore_hints,
            ..SolverArgs::default()
        };
        crate::pools::solve_pools(self, py, pools, pins, args)
    }

    /// Checks `offsets` as a plan of this problem (see `Plan.validate`).
    fn validate(slf: &Bound<'_, Self>, offsets: &Bound<'_, PyAny>) -> PyResult<()> {
        let plan = crate::plan::PyPlan::from_offsets(slf, offsets)?;
        plan.check(slf.py())
    }
}

impl PyProblem {
    /// A NumPy array of one value per buffer.
    fn column<'py>(
        &self,
        py: Python<'py>,
        value: impl Fn(&Buffer) -> u64,
    ) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_vec(py, self.problem.buffers().iter().map(value).collect())
    }
}

/// A synthetic problem, as `memplan generate` writes: `random`, `perfect`
/// (a zero-fragmentation plan exists), `layered` (training steps of a
/// network), `trace` (malloc-like) or `challenging` (MiniMalloc's
/// challenging suite's character, with its capacity). Half-open lifetimes.
#[pyfunction]
#[pyo3(signature = (kind, buffers, *, seed=0))]
pub fn generate(py: Python<'_>, kind: &str, buffers: usize, seed: u64) -> PyResult<PyProblem> {
    let kind: Kind = crate::solve::named(py, "kind", kind)?;
    if buffers > 100_000_000 {
        return Err(argument_error(
            py,
            "buffers",
            None,
            format!("at most 100,000,000, got {buffers}"),
        ));
    }
    let problem = py.detach(|| memplan::generate::generate(kind, buffers, seed).problem);
    Ok(PyProblem::new(problem, Lifetimes::HalfOpen))
}
