//! `memplan bench --pool-fractions F1,F2,...`: the pool strategies compared
//! on instance files, with pools whose capacities are fractions of each
//! instance's max load (fastest first). For each instance and pool set: the
//! bytes × time spilled out of the first pool (and out of the first two,
//! with three pools or more) by the fastest-first baseline and by the
//! guided strategy, the lower bound, and the time of each; every plan is
//! checked by the per-pool validator.

use std::path::PathBuf;
use std::time::Instant;

use memplan::pools::{solve_pools, validate_pools, Pool, PoolProblem, Spill, Strategy};
use memplan::problem::{read_problem, InputError, Problem};
use memplan::{Lifetimes, SolveOptions};
use serde_json::{json, Value};

use crate::args::{BenchArgs, Fractions};
use crate::output::seconds;
use crate::table::{file_name, Cell, Column, Printer};
use crate::Failure;
use memplan::request::{area_json, share};

/// One strategy's result on one instance.
struct Run {
    spill: Spill,
    seconds: f64,
    stopped: bool,
}

/// The pools of fraction set `fractions` for max load `max_load`:
/// capacities rounded up, at least 1 byte.
fn pools_for(fractions: &Fractions, max_load: u64) -> Vec<Pool> {
    fractions
        .0
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let capacity = (f * max_load as f64).ceil().clamp(1.0, u64::MAX as f64) as u64;
            Pool::new(format!("p{}", i + 1), capacity)
        })
        .collect()
}

/// The name of a fraction set in reports, e.g. `0.5/1`.
fn fractions_name(fractions: &Fractions) -> String {
    let names: Vec<String> = fractions.0.iter().map(|f| f.to_string()).collect();
    names.join("/")
}

/// Runs `strategy`; the spill and time, or why it failed.
fn run(problem: &PoolProblem, strategy: Strategy, options: &SolveOptions) -> Result<Run, String> {
    let started = Instant::now();
    let solution = solve_pools(problem, strategy, options).map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    validate_pools(problem, &solution.plan).map_err(|e| format!("invalid plan: {e}"))?;
    Ok(Run {
        spill: solution.spill,
        seconds,
        stopped: solution.stopped.is_some(),
    })
}

/// Totals of one pool set over the instances.
#[derive(Default)]
struct Tally {
    instances: usize,
    better: usize,
    equal: usize,
    worse: usize,
    failed: usize,
    /// Fastest-first found no plan where guided did.
    baseline_failed: usize,
    baseline: f64,
    guided: f64,
}

/// Compares the strategies on `files` for every `--pool-fractions` set.
pub fn compare(args: &BenchArgs, files: &[PathBuf]) -> Result<(), Failure> {
    let columns = columns();
    let mut out = Printer::new(args.format, &columns)?;
    let options = SolveOptions {
        time_limit: Some(memplan::solver::seconds(args.time_limit)),
        ..SolveOptions::default()
    };
    let mut tallies: Vec<Tally> = args
        .pool_fractions
        .iter()
        .map(|_| Tally::default())
        .collect();
    for file in files {
        let name = file_name(file);
        let problem = read_problem(file, Lifetimes::HalfOpen);
        for (fractions, tally) in args.pool_fractions.iter().zip(&mut tallies) {
            out.row(&instance_row(&name, &problem, fractions, &options, tally))?;
        }
    }
    let summary = args
        .pool_fractions
        .iter()
        .zip(&tallies)
        .map(|(fractions, t)| summary_line(fractions, t))
        .collect();
    out.finish(summary)?;
    Ok(())
}

/// The report's columns (table title, width, CSV/JSON keys).
fn columns() -> [Column; 12] {
    [
        Column::left("instance", 20, &["instance"]),
        Column::right("buffers", 8, &["buffers"]),
        Column::left("pools", 12, &["pools"]),
        Column::right("bound", 8, &["bound_percent"]),
        Column::right("fastest-first", 13, &["fastest_first_percent"]),
        Column::right("guided", 8, &["guided_percent"]),
        Column::right("reduction", 9, &["reduction_percent"]),
        Column::right("ff 2", 7, &["fastest_first_2_percent"]),
        Column::right("guided 2", 8, &["guided_2_percent"]),
        Column::right("ff time", 9, &["fastest_first_seconds"]),
        Column::right("guided time", 11, &["guided_seconds"]),
        Column::left(
            "status",
            0,
            &["status", "area", "fastest_first", "guided", "bound"],
        ),
    ]
}

/// The row of pool set `fractions` on instance `name` (both strategies run
/// and checked), counted in `tally`.
fn instance_row(
    name: &str,
    problem: &Result<Problem, InputError>,
    fractions: &Fractions,
    options: &SolveOptions,
    tally: &mut Tally,
) -> Vec<Cell> {
    tally.instances += 1;
    let set = fractions_name(fractions);
    let problem = match problem {
        Ok(p) => p,
        Err(e) => {
            tally.failed += 1;
            return failed_row(head(name, &set, None), e.to_string());
        }
    };
    let pools = pools_for(fractions, problem.max_load());
    let pooled = match PoolProblem::from_problem(problem, vec![None; problem.len()], pools) {
        Ok(p) => p,
        Err(e) => {
            tally.failed += 1;
            return failed_row(head(name, &set, Some(problem.len())), e.to_string());
        }
    };
    let total: u128 = pooled.indices().map(|b| pooled.area(b)).sum();
    let bound = memplan::pools::bounds::spill_lower_bound(&pooled);
    let baseline = run(&pooled, Strategy::FastestFirst, options);
    let guided = run(&pooled, Strategy::Guided, options);
    tally.count(&baseline, &guided, total);
    let mut row = head(name, &set, Some(problem.len()));
    row.extend(result_cells(total, &bound, &baseline, &guided));
    row
}

/// The first cells of a row: instance, buffers (if read), pool set.
fn head(name: &str, set: &str, buffers: Option<usize>) -> Vec<Cell> {
    vec![
        Cell::new(name, [json!(name)]),
        match buffers {
            Some(n) => Cell::new(n.to_string(), [json!(n)]),
            None => Cell::none(1),
        },
        Cell::new(set, [json!(set)]),
    ]
}

/// `head` completed as the row of an instance that could not be run.
fn failed_row(mut row: Vec<Cell>, reason: String) -> Vec<Cell> {
    for _ in 0..8 {
        row.push(Cell::none(1));
    }
    row.push(Cell::new(
        format!("failed: {reason}"),
        [
            json!(format!("failed: {reason}")),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ],
    ));
    row
}

/// The spill out of the first pool of a successful run.
fn first_spill(r: &Result<Run, String>) -> Option<u128> {
    r.as_ref().ok().map(|r| r.spill.first())
}

impl Tally {
    /// Counts one instance's outcome: which strategy spilled less, and
    /// the spill shares where both placed everything.
    fn count(&mut self, baseline: &Result<Run, String>, guided: &Result<Run, String>, total: u128) {
        match (first_spill(baseline), first_spill(guided)) {
            (Some(b0), Some(g0)) => {
                match g0.cmp(&b0) {
                    std::cmp::Ordering::Less => self.better += 1,
                    std::cmp::Ordering::Equal => self.equal += 1,
                    std::cmp::Ordering::Greater => self.worse += 1,
                }
                self.baseline += share(b0, total);
                self.guided += share(g0, total);
            }
            (None, Some(_)) => self.baseline_failed += 1,
            _ => self.failed += 1,
        }
    }
}

/// The cells after `head` of an instance that was run: bound, spills,
/// reduction, second-pool spills, times and status.
fn result_cells(
    total: u128,
    bound: &Spill,
    baseline: &Result<Run, String>,
    guided: &Result<Run, String>,
) -> [Cell; 9] {
    let status = status_text(baseline, guided);
    [
        percent_cell(bound.first(), total),
        first_cell(baseline, total),
        first_cell(guided, total),
        reduction_cell(baseline, guided),
        second_cell(baseline, total),
        second_cell(guided, total),
        time_cell(baseline),
        time_cell(guided),
        Cell::new(
            status.clone(),
            [
                json!(status),
                area_json(total),
                areas_json(baseline),
                areas_json(guided),
                Value::Array(bound.0.iter().map(|&a| area_json(a)).collect()),
            ],
        ),
    ]
}

/// How much less guided spills out of the first pool than fastest-first,
/// in percent.
fn reduction_cell(baseline: &Result<Run, String>, guided: &Result<Run, String>) -> Cell {
    match (first_spill(baseline), first_spill(guided)) {
        (Some(b0), Some(g0)) if b0 > 0 => {
            let r = (b0 as f64 - g0 as f64) * 100.0 / b0 as f64;
            Cell::new(format!("{r:.1}%"), [json!(r)])
        }
        (Some(_), Some(_)) => Cell::new("0.0%", [json!(0.0)]),
        _ => Cell::none(1),
    }
}

/// Area `a` as a percent of `total`.
fn percent_cell(a: u128, total: u128) -> Cell {
    let p = share(a, total);
    Cell::new(format!("{p:.2}%"), [json!(p)])
}

/// The spill out of the first pool, or `failed`.
fn first_cell(r: &Result<Run, String>, total: u128) -> Cell {
    match r {
        Ok(r) => percent_cell(r.spill.first(), total),
        Err(_) => Cell::new("failed", [Value::Null]),
    }
}

/// The spill out of the first two pools, if there are three or more.
fn second_cell(r: &Result<Run, String>, total: u128) -> Cell {
    match r.as_ref().ok().and_then(|r| r.spill.0.get(1)) {
        Some(&a) => percent_cell(a, total),
        None => Cell::none(1),
    }
}

/// A run's time.
fn time_cell(r: &Result<Run, String>) -> Cell {
    match r {
        Ok(r) => Cell::new(seconds(r.seconds), [json!(r.seconds)]),
        Err(_) => Cell::none(1),
    }
}

/// `ok`, or the failures and time-limit cuts of the two runs.
fn status_text(baseline: &Result<Run, String>, guided: &Result<Run, String>) -> String {
    let mut notes: Vec<String> = Vec::new();
    for (strategy, r) in [("fastest-first", baseline), ("guided", guided)] {
        if let Err(e) = r {
            notes.push(format!("{strategy} failed: {e}"));
        }
    }
    if guided.as_ref().is_ok_and(|g| g.stopped) {
        notes.push("guided cut by the time limit".into());
    }
    if notes.is_empty() {
        "ok".to_string()
    } else {
        notes.join("; ")
    }
}

/// A run's spill areas as JSON, or null.
fn areas_json(r: &Result<Run, String>) -> Value {
    match r {
        Ok(r) => Value::Array(r.spill.0.iter().map(|&a| area_json(a)).collect()),
        Err(_) => Value::Null,
    }
}

/// The summary of pool set `fractions`: the text line and its JSON.
fn summary_line(fractions: &Fractions, t: &Tally) -> (String, Value) {
    let set = fractions_name(fractions);
    let done = (t.better + t.equal + t.worse).max(1) as f64;
    let text = format!(
        "pools {set}: guided spills less than fastest-first on {} of {} instances, as much on {}, more on {}; only guided places everything on {}; failed on {}; mean spill out of the first pool where both place everything: {:.2}% vs {:.2}%",
        t.better, t.instances, t.equal, t.worse, t.baseline_failed, t.failed, t.guided / done, t.baseline / done
    );
    let value = json!({
        "pools": set,
        "instances": t.instances,
        "better": t.better,
        "equal": t.equal,
        "worse": t.worse,
        "failed": t.failed,
        "only_guided": t.baseline_failed,
        "mean_guided_percent": t.guided / done,
        "mean_fastest_first_percent": t.baseline / done,
    });
    (text, value)
}
