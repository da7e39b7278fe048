//! `solve --pools` and `validate --pools`: several memories, each with a
//! capacity, in order of preference.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use memplan::pools::{
    read_pool_plan, read_pool_problem, read_pools, solve_pools, validate_pools, write_pool_plan,
    PoolProblem, PoolSolution, PoolSolveError, PoolUsage, Spill, Strategy,
};
use memplan::solver::Cancel;
use memplan::{Lifetimes, Progress, SolveOptions};
use serde_json::{json, Value};

use crate::args::{SolveArgs, ValidateArgs};
use crate::commands::stopped_phrase;
use crate::output::{bytes, report_stream, seconds, write_failure, Sink};
use crate::say;
use crate::signals;
use crate::Failure;

/// Reads the pool file and the pooled problem.
fn read(input: &Path, lifetimes: Lifetimes, pools: &Path) -> Result<PoolProblem, Failure> {
    let pools = read_pools(pools)?;
    Ok(read_pool_problem(input, lifetimes, &pools)?)
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

/// What "outside the first j + 1 pools" reads as for pool set `problem`.
fn outside(problem: &PoolProblem, j: usize) -> String {
    if j == 0 {
        format!(
            "outside `{}`",
            memplan::quote::quoted(&problem.pools()[0].name)
        )
    } else {
        format!("outside the first {}", j + 1)
    }
}

/// `memplan solve INPUT --pools POOLS.csv`.
pub fn solve(args: &SolveArgs, pools: &Path) -> Result<(), Failure> {
    let lifetimes: Lifetimes = args.input.lifetimes;
    let problem = read(&args.input.input, lifetimes, pools)?;
    let sink = args
        .output
        .as_deref()
        .map(|path| Sink::new(path, &[&args.input.input, pools]))
        .transpose()?;
    // The report goes to stderr when the plan goes to stdout.
    let (mut report, reported) = report_stream(sink.as_ref());
    let unwritten = |e| write_failure(e, reported);
    let strategy: memplan::pools::Strategy = args.pool_strategy;
    let started = Instant::now();
    let result = solve_pools(&problem, strategy, &solve_options(args));
    let elapsed = started.elapsed().as_secs_f64();
    let solution = match result {
        Ok(solution) => solution,
        Err(error) => {
            if args.json {
                let value = failure_json(&error, &problem, strategy, elapsed);
                writeln!(report, "{value}").map_err(unwritten)?;
            }
            return Err(Failure::Negative(format!(
                "{}: {error}",
                args.input.input.display()
            )));
        }
    };
    validate_pools(&problem, &solution.plan).map_err(|e| {
        Failure::Internal(format!(
            "internal error: the {} strategy returned an invalid plan: {e}",
            solution.found_by.name()
        ))
    })?;
    if let Some(sink) = &sink {
        sink.write(|out| write_pool_plan(out, &problem, &solution.plan, lifetimes))?;
    }
    let out = &mut report;
    if args.json {
        let value = solution_json(&problem, strategy, &solution, elapsed);
        writeln!(out, "{value}")
    } else {
        write_summary(out, args, &problem, strategy, &solution, elapsed)
    }
    .and_then(|()| out.flush())
    .map_err(unwritten)
}

/// The solve options of `solve --pools`'s flags.
fn solve_options(args: &SolveArgs) -> SolveOptions {
    SolveOptions {
        time_limit: args.time_limit.map(memplan::solver::seconds),
        seed: args.seed,
        cancel: Cancel::new(signals::graceful_stop()),
        progress: Progress::default(),
        effort: None,
        ignore_hints: args.ignore_hints,
        ..SolveOptions::default()
    }
}

/// The JSON report of a solve that found no plan.
fn failure_json(
    error: &PoolSolveError,
    problem: &PoolProblem,
    strategy: Strategy,
    elapsed: f64,
) -> Value {
    let (status, reason) = match error {
        PoolSolveError::Infeasible(proof) => ("infeasible", proof.to_string()),
        PoolSolveError::NotFound { reason, detail } => {
            ("not_found", format!("{}: {detail}", reason.describe()))
        }
    };
    json!({
        "status": status,
        "reason": reason,
        "buffers": problem.len(),
        "strategy": strategy.name(),
        "seconds": elapsed,
    })
}

/// The JSON report of a plan: pools, spills, bounds, time and counters.
fn solution_json(
    problem: &PoolProblem,
    strategy: Strategy,
    solution: &PoolSolution,
    elapsed: f64,
) -> Value {
    let total: u128 = problem.indices().map(|b| problem.area(b)).sum();
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
    let spill = |s: &Spill| s.0.iter().map(|&a| area_json(a)).collect::<Vec<_>>();
    let percent: Vec<f64> = solution.spill.0.iter().map(|&a| share(a, total)).collect();
    let counters: serde_json::Map<String, Value> = solution
        .counters
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    json!({
        "status": "ok",
        "buffers": problem.len(),
        "strategy": strategy.name(),
        "found_by": solution.found_by.name(),
        "pools": pools,
        "area": area_json(total),
        "spill": spill(&solution.spill),
        "spill_percent": percent,
        "spill_bound": spill(&solution.spill_bound),
        "seconds": elapsed,
        "stopped": solution.stopped.map(memplan::Stopped::name),
        "counters": counters,
    })
}

/// The text summary of a plan: pool usage, spills, strategy, time,
/// counters and the plan's path.
fn write_summary(
    out: &mut dyn Write,
    args: &SolveArgs,
    problem: &PoolProblem,
    strategy: Strategy,
    solution: &PoolSolution,
    elapsed: f64,
) -> std::io::Result<()> {
    let total: u128 = problem.indices().map(|b| problem.area(b)).sum();
    writeln!(out, "buffers        {}", problem.len())?;
    for (pool, u) in problem.pools().iter().zip(&solution.usage) {
        writeln!(
            out,
            "pool {:<9} {}",
            pool.name,
            usage_text(u, pool.capacity, total)
        )?;
    }
    for (j, (&spilled, &bound)) in solution
        .spill
        .0
        .iter()
        .zip(&solution.spill_bound.0)
        .enumerate()
    {
        writeln!(
            out,
            "spilled        {}: {spilled} B×t ({:.2}% of bytes × time; lower bound {bound}, {:.2}%)",
            outside(problem, j),
            share(spilled, total),
            share(bound, total)
        )?;
    }
    let by = if solution.found_by == strategy {
        String::new()
    } else {
        format!(" (plan of {})", solution.found_by.name())
    };
    writeln!(out, "strategy       {}{by}", strategy.name())?;
    writeln!(out, "time           {}", seconds(elapsed))?;
    if let Some(stopped) = solution.stopped {
        writeln!(out, "stopped        {}", stopped_phrase(stopped))?;
    }
    for (name, value) in &solution.counters {
        writeln!(out, "{name:<14} {value}")?;
    }
    if let Some(path) = &args.output {
        writeln!(out, "plan           {}", path.display())?;
    }
    Ok(())
}

/// One pool's line of the summary.
fn usage_text(u: &PoolUsage, capacity: u64, total: u128) -> String {
    format!(
        "{} buffers, {} used of {}, {:.2}% of bytes × time",
        u.buffers,
        bytes(u.makespan),
        bytes(capacity),
        share(u.area, total)
    )
}

/// `memplan validate INPUT PLAN.csv --pools POOLS.csv`.
pub fn validate(args: &ValidateArgs, pools: &Path) -> Result<(), Failure> {
    let problem = read(&args.input.input, args.input.lifetimes, pools)?;
    let invalid = |at: String, message: String| {
        if args.json {
            if let Err(failure) = say!("{}", json!({ "valid": false, "error": message })) {
                return failure;
            }
        }
        Failure::Negative(format!("{at}: invalid plan: {message}"))
    };
    let plan = match read_pool_plan(&args.plan, &problem) {
        Ok(plan) => plan,
        Err(e) if e.is_plan_mismatch() => {
            let at = match e.line {
                Some(line) => format!("{}:{line}", e.path.display()),
                None => e.path.display().to_string(),
            };
            let message = match &e.column {
                Some(column) if column == "pool" => format!("column `pool`: {}", e.kind),
                _ => e.kind.to_string(),
            };
            return Err(invalid(at, message));
        }
        Err(e) => return Err(e.into()),
    };
    if let Err(e) = validate_pools(&problem, &plan) {
        return Err(invalid(args.plan.display().to_string(), e.to_string()));
    }
    let usage = memplan::pools::solve::usage(&problem, &plan);
    let total: u128 = problem.indices().map(|b| problem.area(b)).sum();
    let spill = plan.spill(&problem);
    if args.json {
        let pools: Vec<Value> = problem
            .pools()
            .iter()
            .zip(&usage)
            .map(|(pool, u)| {
                json!({
                    "name": pool.name,
                    "capacity": pool.capacity,
                    "buffers": u.buffers,
                    "makespan": u.makespan,
                    "area": area_json(u.area),
                })
            })
            .collect();
        let spilled: Vec<Value> = spill.0.iter().map(|&a| area_json(a)).collect();
        say!(
            "{}",
            json!({
                "valid": true,
                "buffers": problem.len(),
                "pools": pools,
                "area": area_json(total),
                "spill": spilled,
            })
        )?;
    } else {
        say!(
            "valid: {} buffers in {} pools",
            problem.len(),
            problem.pools().len()
        )?;
        for (pool, u) in problem.pools().iter().zip(&usage) {
            say!(
                "pool {:<9} {}",
                pool.name,
                usage_text(u, pool.capacity, total)
            )?;
        }
        for (j, &spilled) in spill.0.iter().enumerate() {
            say!(
                "spilled        {}: {spilled} B×t ({:.2}%)",
                outside(&problem, j),
                share(spilled, total)
            )?;
        }
    }
    Ok(())
}
