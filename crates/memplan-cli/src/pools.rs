//! `solve --pools` and `validate --pools`: several memories, each with a
//! capacity, in order of preference.

use std::io::Write;
use std::path::Path;

use memplan::pools::{
    read_pool_plan, read_pool_problem, read_pools, validate_pools, write_pool_plan, PoolProblem,
    PoolSolution, PoolUsage,
};
use memplan::request::{area_json, share, Control, PoolReport};
use memplan::solver::Cancel;
use memplan::{Lifetimes, Progress};
use serde_json::{json, Value};

use crate::args::{SolveArgs, ValidateArgs};
use crate::output::{
    bytes, report_stream, run_failure, seconds, stopped_phrase, write_failure, Sink,
};
use crate::say;
use crate::signals;
use crate::Failure;

/// Reads the pool file and the pooled problem.
fn read(input: &Path, lifetimes: Lifetimes, pools: &Path) -> Result<PoolProblem, Failure> {
    let pools = read_pools(pools)?;
    Ok(read_pool_problem(input, lifetimes, &pools)?)
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

/// `memplan solve INPUT --pools POOLS.csv`: the library's request
/// shares the buffers out (and checks the plan), then the plan is written
/// and the report printed.
pub fn solve(args: &SolveArgs, pools: &Path) -> Result<(), Failure> {
    let request = args.request().map_err(|e| Failure::Input(e.to_string()))?;
    let lifetimes: Lifetimes = args.input.lifetimes;
    let problem = read(&args.input.input, lifetimes, pools)?;
    let sink = args
        .output
        .as_deref()
        .map(|path| Sink::new(path, &[&args.input.input, pools]))
        .transpose()?;
    // The report goes to stderr when the plan goes to stdout.
    let (mut out, reported) = report_stream(sink.as_ref());
    let unwritten = |e| write_failure(e, reported);
    let control = Control {
        cancel: Cancel::new(signals::graceful_stop()),
        progress: Progress::default(),
    };
    let result = request.run_pools(&problem, &control);
    let returned = std::time::Instant::now();
    let mut report = result.map_err(run_failure)?;
    report.stop_latency = signals::stop_latency(returned, report.check_seconds);
    let solution = match &report.outcome {
        Ok(solution) => solution,
        Err(error) => {
            if args.json {
                writeln!(out, "{}", report.json(&problem)).map_err(unwritten)?;
            }
            return Err(Failure::Negative(format!(
                "{}: {error}",
                args.input.input.display()
            )));
        }
    };
    if let Some(sink) = &sink {
        sink.write(|o| write_pool_plan(o, &problem, &solution.plan, lifetimes))?;
    }
    if args.json {
        writeln!(out, "{}", report.json(&problem))
    } else {
        write_summary(&mut out, args, &problem, &report, solution)
    }
    .and_then(|()| out.flush())
    .map_err(unwritten)
}

/// The text summary of a plan: pool usage, spills, strategy, time,
/// counters and the plan's path.
fn write_summary(
    out: &mut dyn Write,
    args: &SolveArgs,
    problem: &PoolProblem,
    report: &PoolReport,
    solution: &PoolSolution,
) -> std::io::Result<()> {
    let (total, strategy) = (report.area, report.strategy);
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
    writeln!(out, "time           {}", seconds(report.seconds))?;
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
