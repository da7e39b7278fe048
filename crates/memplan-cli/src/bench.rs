//! `memplan bench`, in two modes:
//!
//! - with `--solvers LIST`, compares solvers: for each instance and solver
//!   the makespan, fragmentation, gap to the solver's lower bound, median
//!   solve time and whether the plan is proven optimal (or why it failed),
//!   then a summary per solver (instances won, optimal, failed);
//! - without, times read + solve + validate of the greedy variants beside
//!   `sort -t, -k4,4n` on the same CSV (a yardstick for "as fast as reading
//!   the file");
//! - with `--pool-fractions`, compares the pool strategies
//!   ([`crate::pool_bench`]).
//!
//! Both print a table (human units), CSV or JSON (raw numbers: bytes and
//! seconds).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use memplan::generate::generate;
use memplan::problem::{read_problem, write_problem};
use memplan::solvers::greedy::Greedy;
use memplan::{validate, Lifetimes, Problem, SolveOptions, Solver};
use serde_json::{json, Value};

use crate::args::BenchArgs;
use crate::output::{bytes, seconds, write_output};
use crate::signals::TempDir;
use crate::table::{file_name, Cell, Column, Printer};
use crate::Failure;

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> Result<(), Failure> {
    // Refuse unknown solver names before generating anything.
    let solvers = match &args.solvers {
        Some(names) => Some(parse_solvers(names)?),
        None => None,
    };
    let (files, temp_dir) = instances(&args)?;
    let result = match (&args.reference, solvers) {
        (Some(reference), solvers) => {
            let default: (String, Box<dyn Solver>) = (
                "search".into(),
                Box::new(memplan::solvers::search::Search::default()),
            );
            let (name, solver) = solvers
                .and_then(|s| s.into_iter().next())
                .unwrap_or(default);
            crate::differential::run(&args, reference, &files, (&name, solver.as_ref()))
        }
        (None, Some(solvers)) => compare(&args, &files, &solvers),
        (None, None) if !args.pool_fractions.is_empty() => {
            crate::pool_bench::compare(&args, &files)
        }
        (None, None) => time_greedy(&args, &files),
    };
    drop(temp_dir);
    result
}

/// Solvers to compare, with the names they were given.
type Named = Vec<(String, Box<dyn Solver>)>;

/// Solvers by name, with their defaults (`greedy` is size/first-fit).
fn parse_solvers(names: &[String]) -> Result<Named, Failure> {
    let mut solvers: Named = Vec::new();
    for name in names {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        let Some(solver) = memplan::solvers::by_name(name) else {
            return Err(Failure::Input(format!(
                "--solvers: unknown solver `{name}` (known: {})",
                memplan::solvers::names().join(", ")
            )));
        };
        if solvers.iter().any(|(n, _)| n == name) {
            return Err(Failure::Input(format!(
                "--solvers: `{name}` is given twice"
            )));
        }
        solvers.push((name.to_string(), solver));
    }
    if solvers.is_empty() {
        return Err(Failure::Input("--solvers: no solver given".into()));
    }
    Ok(solvers)
}

/// One solver's outcome on one instance.
struct Outcome {
    solver: String,
    buffers: Option<usize>,
    result: Result<Run, String>,
}

/// A successful run (the median-time one of `--repeat`).
struct Run {
    max_load: u64,
    makespan: u64,
    lower_bound: u64,
    optimal: bool,
    seconds: f64,
    found_by: Option<String>,
}

/// Runs every solver on every file: a row each, then a summary per solver.
fn compare(args: &BenchArgs, files: &[PathBuf], solvers: &Named) -> Result<(), Failure> {
    let columns = columns();
    let mut out = Printer::new(args.format, &columns)?;
    let options = SolveOptions {
        time_limit: Some(memplan::solver::seconds(args.time_limit)),
        effort: args.effort.and_then(memplan::solver::Effort::new),
        ..SolveOptions::default()
    };
    let repeat = args.repeat.max(1) as usize;
    let mut tally: Vec<Tally> = solvers.iter().map(|_| Tally::default()).collect();
    for file in files {
        let name = file_name(file);
        let outcomes = run_all(file, solvers, &options, repeat);
        let best = outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok().map(|r| r.makespan))
            .min();
        for (o, t) in outcomes.iter().zip(&mut tally) {
            t.count(o, best);
            out.row(&outcome_row(&name, o))?;
        }
    }
    let summary = solvers
        .iter()
        .zip(&tally)
        .map(|((name, _), t)| t.summary(name))
        .collect();
    out.finish(summary)?;
    Ok(())
}

/// The comparison's columns (table title, width, CSV/JSON keys).
fn columns() -> [Column; 11] {
    [
        Column::left("instance", 24, &["instance"]),
        Column::right("buffers", 9, &["buffers"]),
        Column::left("solver", 22, &["solver"]),
        Column::right("makespan", 11, &["makespan"]),
        Column::right("max load", 11, &["max_load"]),
        Column::right("lower bound", 11, &["lower_bound"]),
        Column::right(
            "fragmentation",
            20,
            &["fragmentation", "fragmentation_percent"],
        ),
        Column::right("gap", 20, &["gap", "gap_percent"]),
        Column::right("time", 9, &["seconds"]),
        Column::right("optimal", 7, &["optimal"]),
        Column::left("status", 0, &["status", "found_by", "reason"]),
    ]
}

/// Every solver's outcome on `file` (each a failure if it cannot be read).
fn run_all(file: &Path, solvers: &Named, options: &SolveOptions, repeat: usize) -> Vec<Outcome> {
    let problem = read_problem(file, Lifetimes::HalfOpen);
    solvers
        .iter()
        .map(|(solver_name, solver)| Outcome {
            solver: solver_name.clone(),
            buffers: problem.as_ref().ok().map(Problem::len),
            result: match &problem {
                Ok(p) => run_solver(p, solver.as_ref(), options, repeat),
                Err(e) => Err(e.to_string()),
            },
        })
        .collect()
}

/// Per-solver totals for the summary.
#[derive(Default)]
struct Tally {
    instances: usize,
    won: usize,
    optimal: usize,
    failed: usize,
    seconds: f64,
}

impl Tally {
    /// Counts one outcome; it won if its makespan is the instance's `best`.
    fn count(&mut self, o: &Outcome, best: Option<u64>) {
        self.instances += 1;
        match &o.result {
            Ok(r) => {
                self.won += usize::from(Some(r.makespan) == best);
                self.optimal += usize::from(r.optimal);
                self.seconds += r.seconds;
            }
            Err(_) => self.failed += 1,
        }
    }

    /// Solver `name`'s summary: the text line and its JSON.
    fn summary(&self, name: &str) -> (String, Value) {
        let text = format!(
            "{name}: won {} of {}, optimal {}, failed {}, solve time {}",
            self.won,
            self.instances,
            self.optimal,
            self.failed,
            seconds(self.seconds)
        );
        let value = json!({
            "solver": name,
            "instances": self.instances,
            "won": self.won,
            "optimal": self.optimal,
            "failed": self.failed,
            "seconds": self.seconds,
        });
        (text, value)
    }
}

/// Runs `solver` `repeat` times; the run of median time, or why it failed
/// (no plan, an invalid plan, a panic).
fn run_solver(
    problem: &Problem,
    solver: &dyn Solver,
    options: &SolveOptions,
    repeat: usize,
) -> Result<Run, String> {
    let max_load = problem.max_load();
    let mut runs = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let started = Instant::now();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            solver.solve(problem, options)
        }));
        let elapsed = started.elapsed().as_secs_f64();
        let solution = match result {
            Ok(Ok(solution)) => solution,
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => return Err("the solver panicked (a bug; please report it)".into()),
        };
        validate(problem, &solution.plan).map_err(|e| format!("invalid plan: {e}"))?;
        runs.push(Run {
            max_load,
            makespan: solution.makespan,
            lower_bound: solution.lower_bound,
            optimal: solution.optimal,
            seconds: elapsed,
            found_by: solution.found_by,
        });
    }
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let middle = runs.len() / 2;
    Ok(runs.swap_remove(middle))
}

fn outcome_row(instance: &str, o: &Outcome) -> Vec<Cell> {
    let buffers = match o.buffers {
        Some(n) => Cell::new(n.to_string(), [json!(n)]),
        None => Cell::none(1),
    };
    let head = [
        Cell::new(instance, [json!(instance)]),
        buffers,
        Cell::new(&o.solver, [json!(o.solver)]),
    ];
    let mut row: Vec<Cell> = head.into();
    match &o.result {
        Ok(r) => {
            let frag = r.makespan.saturating_sub(r.max_load);
            let gap = r.makespan.saturating_sub(r.lower_bound);
            let frag_percent = percent(frag, r.max_load);
            let gap_percent = percent(gap, r.lower_bound);
            row.extend([
                Cell::new(bytes(r.makespan), [json!(r.makespan)]),
                Cell::new(bytes(r.max_load), [json!(r.max_load)]),
                Cell::new(bytes(r.lower_bound), [json!(r.lower_bound)]),
                Cell::new(
                    format!("{} {frag_percent:.2}%", bytes(frag)),
                    [json!(frag), json!(frag_percent)],
                ),
                Cell::new(
                    format!("{} {gap_percent:.2}%", bytes(gap)),
                    [json!(gap), json!(gap_percent)],
                ),
                Cell::new(seconds(r.seconds), [json!(r.seconds)]),
                Cell::new(if r.optimal { "yes" } else { "no" }, [json!(r.optimal)]),
            ]);
            let by = r.found_by.as_deref().filter(|f| *f != o.solver);
            let text = match by {
                Some(by) => format!("ok ({by})"),
                None => "ok".into(),
            };
            row.push(Cell::new(text, [json!("ok"), json!(by), Value::Null]));
        }
        Err(reason) => {
            for keys in [1, 1, 1, 2, 2, 1, 1] {
                row.push(Cell::none(keys));
            }
            row.push(Cell::new(
                format!("failed: {reason}"),
                [json!("failed"), Value::Null, json!(reason)],
            ));
        }
    }
    row
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The greedy timing table (no `--solvers`).
fn time_greedy(args: &BenchArgs, files: &[PathBuf]) -> Result<(), Failure> {
    let repeat = args.repeat.max(1) as usize;
    let variants: Vec<Greedy> = if args.all_variants {
        Greedy::all().collect()
    } else {
        vec![Greedy::default()]
    };
    let columns = [
        Column::left("instance", 28, &["instance"]),
        Column::right("buffers", 9, &["buffers"]),
        Column::left("solver", 28, &["solver"]),
        Column::right("read", 9, &["read_seconds"]),
        Column::right("solve", 9, &["solve_seconds"]),
        Column::right("validate", 9, &["validate_seconds"]),
        Column::right("total", 9, &["total_seconds"]),
        Column::right("sort", 9, &["sort_seconds"]),
        Column::right("frag", 12, &["fragmentation", "fragmentation_percent"]),
        Column::right("vs sort", 9, &["vs_sort"]),
    ];
    let mut out = Printer::new(args.format, &columns)?;
    for file in files {
        let sort = median(repeat, || time_sort(file)).filter(|s| *s > 0.0);
        for variant in &variants {
            let mut runs = Vec::with_capacity(repeat);
            for _ in 0..repeat {
                runs.push(measure(file, variant)?);
            }
            runs.sort_by(|a, b| a.total().total_cmp(&b.total()));
            let m = &runs[runs.len() / 2];
            let name = file_name(file);
            let time = |s: f64| Cell::new(seconds(s), [json!(s)]);
            out.row(&[
                Cell::new(&name, [json!(name)]),
                Cell::new(m.buffers.to_string(), [json!(m.buffers)]),
                Cell::new(variant.name(), [json!(variant.name())]),
                time(m.read),
                time(m.solve),
                time(m.validate),
                time(m.total()),
                sort.map_or_else(|| Cell::none(1), time),
                Cell::new(
                    format!("{} {:.2}%", bytes(m.fragmentation), m.fragmentation_percent),
                    [json!(m.fragmentation), json!(m.fragmentation_percent)],
                ),
                sort.map_or_else(
                    || Cell::none(1),
                    |s| Cell::new(format!("{:.2}x", m.total() / s), [json!(m.total() / s)]),
                ),
            ])?;
        }
    }
    out.finish(Vec::new())
}

struct Measurement {
    buffers: usize,
    read: f64,
    solve: f64,
    validate: f64,
    fragmentation: u64,
    fragmentation_percent: f64,
}

impl Measurement {
    fn total(&self) -> f64 {
        self.read + self.solve + self.validate
    }
}

fn measure(file: &Path, solver: &Greedy) -> Result<Measurement, Failure> {
    let t0 = Instant::now();
    let problem = read_problem(file, Lifetimes::HalfOpen)?;
    let t1 = Instant::now();
    let solution = solver
        .solve(&problem, &SolveOptions::default())
        .map_err(|e| Failure::Negative(e.to_string()))?;
    let t2 = Instant::now();
    validate(&problem, &solution.plan)
        .map_err(|e| Failure::Negative(format!("invalid plan: {e}")))?;
    let t3 = Instant::now();
    let max_load = solution.lower_bound;
    let fragmentation = solution.makespan - max_load;
    Ok(Measurement {
        buffers: problem.len(),
        read: (t1 - t0).as_secs_f64(),
        solve: (t2 - t1).as_secs_f64(),
        validate: (t3 - t2).as_secs_f64(),
        fragmentation,
        fragmentation_percent: percent(fragmentation, max_load),
    })
}

/// Seconds `sort -t, -k4,4n FILE > /dev/null` takes, if `sort` runs.
fn time_sort(file: &Path) -> Option<f64> {
    let start = Instant::now();
    let (mut child, _registered) = crate::signals::spawn_child(
        Command::new("sort")
            .args(["-t,", "-k4,4n"])
            .arg(file)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .ok()?;
    let status = child.wait().ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

fn median(repeat: usize, mut f: impl FnMut() -> Option<f64>) -> Option<f64> {
    let mut values: Vec<f64> = (0..repeat).map(|_| f()).collect::<Option<_>>()?;
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// The files to run on, and the temporary directory holding them if they
/// were generated. Directories contribute their `.csv` files (not
/// recursively), sorted.
fn instances(args: &BenchArgs) -> Result<(Vec<PathBuf>, Option<TempDir>), Failure> {
    if !args.inputs.is_empty() {
        let mut files = Vec::new();
        for input in &args.inputs {
            if input.is_dir() {
                let entries = std::fs::read_dir(input).map_err(|e| {
                    Failure::Input(format!("{}: cannot read directory: {e}", input.display()))
                })?;
                let mut csvs: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("csv"))
                    })
                    .collect();
                csvs.sort();
                files.extend(csvs);
            } else {
                files.push(input.clone());
            }
        }
        return Ok((files, None));
    }
    let temp = TempDir::new("memplan-bench-")?;
    let dir = temp.path();
    let kind: memplan::generate::Kind = args.kind;
    let mut files = Vec::new();
    for &n in &args.sizes {
        let path = dir.join(format!("{}-{n}.csv", kind.name()));
        let generated = generate(kind, n as usize, args.seed);
        write_output(&path, &[], |out| {
            write_problem(out, &generated.problem, Lifetimes::HalfOpen)
        })?;
        files.push(path);
    }
    Ok((files, Some(temp)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::csv_field;

    #[test]
    fn solver_names_and_csv_fields() {
        let names = |s: &str| {
            parse_solvers(&s.split(',').map(String::from).collect::<Vec<_>>())
                .map(|v| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>())
        };
        assert_eq!(
            names("auto, greedy,greedy/area/best-fit").ok(),
            Some(vec![
                "auto".to_string(),
                "greedy".into(),
                "greedy/area/best-fit".into()
            ])
        );
        assert!(
            matches!(names("auto,fast"), Err(Failure::Input(m)) if m.contains("unknown solver `fast`"))
        );
        assert!(matches!(names("auto,auto"), Err(Failure::Input(m)) if m.contains("twice")));
        assert!(matches!(names(""), Err(Failure::Input(_))));
        assert_eq!(csv_field(&json!("a,b \"c\"")), "\"a,b \"\"c\"\"\"");
        assert_eq!(csv_field(&json!(1.5)), "1.5");
        assert_eq!(csv_field(&Value::Null), "");
    }
}
