//! One function per subcommand.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use memplan::generate::{generate, Kind};
use memplan::plan::{read_plan, write_plan};
use memplan::problem::{read_problem, write_problem};
use memplan::quote::quoted;
use memplan::solver::{Cancel, Effort};
use memplan::solvers::greedy::Greedy;
use memplan::{
    validate, Lifetimes, Problem, Progress, Solution, SolveError, SolveOptions, Solver, Stats,
};
use serde_json::json;

use crate::args::{
    Cli, Command, GenerateArgs, InputArgs, SolveArgs, SolverArg, StatsArgs, ValidateArgs,
};
use crate::output::{bytes, report_stream, seconds, write_failure, write_output, Sink};
use crate::progress::Spinner;
use crate::say;
use crate::signals;
use crate::Failure;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Solve(args) => solve(args),
        Command::Validate(args) => {
            let json = args.json;
            let result = validate_plan(args);
            if let (true, Err(Failure::Input(message))) = (json, &result) {
                // Bad input: no verdict, but still one JSON object (if it
                // cannot be written, the message still goes to stderr).
                let _ = say!("{}", json!({ "valid": null, "error": message }));
            }
            result
        }
        Command::Stats(args) => stats(args),
        Command::Generate(args) => generate_file(args),
        Command::Plot(args) => crate::plot::run(args),
        Command::Bench(args) => crate::bench::run(args),
    }
}

fn read(input: &InputArgs) -> Result<Problem, Failure> {
    Ok(read_problem(&input.input, input.lifetimes)?)
}

/// The solver selected on the command line.
fn solver(args: &SolveArgs) -> Box<dyn Solver> {
    match args.solver {
        SolverArg::Auto => Box::new(memplan::solvers::auto::Auto::default()),
        SolverArg::Greedy => Box::new(Greedy {
            order: args.order,
            fit: args.fit,
        }),
        SolverArg::Search => Box::new(memplan::solvers::search::Search {
            options: args.search.options(),
        }),
        SolverArg::Boxing => Box::new(memplan::solvers::boxing::Boxing {
            options: args.boxing.options(),
        }),
        SolverArg::Tela => Box::new(memplan::solvers::tela::Tela {
            options: args.tela.options(),
        }),
    }
}

/// `memplan solve`: reads, solves, checks, writes the plan and reports.
fn solve(args: SolveArgs) -> Result<(), Failure> {
    if let Some(pools) = &args.pools {
        return crate::pools::solve(&args, pools);
    }
    let problem = read(&args.input)?.with_capacity(args.capacity);
    check_start_address(&problem, args.start_address)?;
    // Checked before solving: a bad output path must not cost a solve.
    let sink = args
        .output
        .as_deref()
        .map(|path| Sink::new(path, &[&args.input.input]))
        .transpose()?;
    // The report goes to stderr when the plan goes to stdout.
    let (mut report, reported) = report_stream(sink.as_ref());
    let unwritten = |e| write_failure(e, reported);
    let inner = solver(&args);
    let stable = memplan::stable::Stable {
        solver: inner.as_ref(),
        options: memplan::stable::StableOptions {
            makespan: args.stable_makespan,
        },
    };
    let solver: &dyn Solver = if args.stable { &stable } else { inner.as_ref() };
    let options = solve_options(&args);
    let spinner = Spinner::start(&options.progress, args.quiet);
    let started = Instant::now();
    let result = memplan::solver::run(solver, &problem, &options);
    let elapsed = started.elapsed().as_secs_f64();
    // How long the solver took to return after Ctrl-C or SIGTERM.
    let stop_latency = signals::first_signal().map(|t| t.elapsed().as_secs_f64());
    spinner.finish();
    let mut solution = match result {
        Ok(solution) => solution,
        Err(error) => {
            report_not_found(&mut report, &args, &problem, solver.name(), &error, elapsed)
                .map_err(unwritten)?;
            return Err(Failure::Negative(format!(
                "{}: {error}",
                args.input.input.display()
            )));
        }
    };
    validate(&problem, &solution.plan).map_err(|e| {
        Failure::Internal(format!(
            "internal error: {} returned an invalid plan: {e}",
            solver.name()
        ))
    })?;
    // The plan is written while the max load is computed beside it.
    let (written, max_load) = std::thread::scope(|scope| {
        // A solver stopped before it computed the max load reports a
        // weaker bound; the report never says less than the max load.
        let max_load = scope.spawn(|| problem.max_load());
        let written = match &sink {
            Some(sink) => {
                let lifetimes: Lifetimes = args.input.lifetimes;
                at_address(&problem, &solution.plan, args.start_address)
                    .and_then(|plan| sink.write(|out| write_plan(out, &problem, &plan, lifetimes)))
            }
            None => Ok(()),
        };
        (written, max_load.join())
    });
    written?;
    let max_load =
        max_load.map_err(|_| Failure::Internal("internal error: the max load failed".into()))?;
    solution.raise_lower_bound(max_load);
    let mut summary = Summary::new(&problem, &solution, solver, max_load, elapsed);
    summary.stop_latency = stop_latency;
    if args.json {
        writeln!(report, "{}", summary.json())
    } else {
        summary.write_text(&mut report, args.output.as_deref())
    }
    .and_then(|()| report.flush())
    .map_err(unwritten)
}

/// The solve options of `solve`'s flags; Ctrl-C or SIGTERM stops the
/// solver, which returns its best plan so far.
fn solve_options(args: &SolveArgs) -> SolveOptions {
    SolveOptions {
        time_limit: args.time_limit.map(memplan::solver::seconds),
        effort: args.effort.and_then(Effort::new),
        seed: args.seed,
        cancel: Cancel::new(signals::graceful_stop()),
        progress: Progress::default(),
        ignore_hints: args.ignore_hints,
        ..SolveOptions::default()
    }
}

/// What `solve` reports of a plan found, in JSON or text.
struct Summary<'a> {
    problem: &'a Problem,
    solution: &'a Solution,
    /// The solver (or portfolio member) that found the plan.
    solver: String,
    buffers: usize,
    max_load: u64,
    elapsed: f64,
    /// Seconds from Ctrl-C or SIGTERM to the solver's return, if stopped so.
    stop_latency: Option<f64>,
    hints: usize,
    kept: usize,
}

impl<'a> Summary<'a> {
    /// The figures of `solution`, found by `solver` in `elapsed` seconds,
    /// for a problem of max load `max_load`.
    fn new(
        problem: &'a Problem,
        solution: &'a Solution,
        solver: &dyn Solver,
        max_load: u64,
        elapsed: f64,
    ) -> Self {
        Summary {
            problem,
            solution,
            solver: solution.found_by.clone().unwrap_or_else(|| solver.name()),
            buffers: problem.len(),
            max_load,
            elapsed,
            stop_latency: None,
            hints: memplan::hints::count(problem),
            kept: memplan::hints::kept(problem, &solution.plan),
        }
    }

    /// The one-line JSON object of `solve --json`.
    fn json(&self) -> serde_json::Value {
        let (solution, max_load) = (self.solution, self.max_load);
        json!({
            "hints": self.hints,
            "hints_kept": self.kept,
            "status": "ok",
            "buffers": self.buffers,
            "max_load": max_load,
            "lower_bound": solution.lower_bound,
            "makespan": solution.makespan,
            "fragmentation": solution.makespan - max_load,
            "fragmentation_percent": percent(solution.makespan - max_load, max_load),
            "optimal": solution.optimal,
            "capacity": self.problem.capacity,
            "solver": self.solver,
            "seconds": self.elapsed,
            "stopped": solution.stopped.map(memplan::Stopped::name),
            "stop_latency": self.stop_latency,
            "counters": counter_map(&solution.counters),
        })
    }

    /// The text summary, naming the plan file `output` if any.
    fn write_text(&self, out: &mut dyn Write, output: Option<&Path>) -> std::io::Result<()> {
        let (solution, max_load) = (self.solution, self.max_load);
        let frag = solution.makespan - max_load;
        writeln!(out, "buffers        {}", self.buffers)?;
        writeln!(out, "max load       {} ({} B)", bytes(max_load), max_load)?;
        writeln!(
            out,
            "makespan       {} ({} B){}",
            bytes(solution.makespan),
            solution.makespan,
            if solution.optimal { ", optimal" } else { "" }
        )?;
        writeln!(
            out,
            "fragmentation  {} ({} B, {:.3}%)",
            bytes(frag),
            frag,
            percent(frag, max_load)
        )?;
        if solution.lower_bound > max_load {
            writeln!(
                out,
                "lower bound    {} ({} B)",
                bytes(solution.lower_bound),
                solution.lower_bound
            )?;
        }
        writeln!(out, "solver         {}", self.solver)?;
        if self.hints > 0 {
            writeln!(out, "hints kept     {} of {}", self.kept, self.hints)?;
        }
        writeln!(out, "time           {}", seconds(self.elapsed))?;
        if let Some(stopped) = solution.stopped {
            writeln!(out, "stopped        {}", stopped_phrase(stopped))?;
        }
        for (name, value) in &solution.counters {
            writeln!(out, "{name:<14} {value}")?;
        }
        if let Some(path) = output {
            writeln!(out, "plan           {}", path.display())?;
        }
        Ok(())
    }
}

/// What the summary says of a solve cut short.
pub(crate) fn stopped_phrase(stopped: memplan::Stopped) -> &'static str {
    match stopped {
        memplan::Stopped::TimeLimit => "by the time limit (best plan so far)",
        memplan::Stopped::Interrupted => "interrupted (best plan so far)",
    }
}

/// The report of a solve that found no plan within the capacity: the JSON
/// object, or the solver's counters in text.
fn report_not_found(
    out: &mut dyn Write,
    args: &SolveArgs,
    problem: &Problem,
    solver: String,
    error: &SolveError,
    elapsed: f64,
) -> std::io::Result<()> {
    let SolveError::NotFound {
        capacity,
        reason,
        best_makespan,
        counters,
    } = error;
    let stopped = match reason {
        memplan::NotFoundReason::TimeLimit => Some(memplan::Stopped::TimeLimit),
        memplan::NotFoundReason::Interrupted => Some(memplan::Stopped::Interrupted),
        _ => None,
    };
    if args.json {
        let max_load = problem.max_load();
        let value = json!({
            "status": "not_found",
            "reason": reason.describe(),
            "capacity": capacity,
            "best_makespan": best_makespan,
            "makespan": best_makespan,
            "fragmentation": best_makespan.map(|m| m.saturating_sub(max_load)),
            "buffers": problem.len(),
            "max_load": max_load,
            "lower_bound": if *reason == memplan::NotFoundReason::ProvenInfeasible {
                capacity.saturating_add(1).max(max_load)
            } else {
                max_load
            },
            "optimal": false,
            "solver": solver,
            "seconds": elapsed,
            "stopped": stopped.map(memplan::Stopped::name),
            "counters": counter_map(counters),
        });
        writeln!(out, "{value}")?;
    } else if !counters.is_empty() {
        // The effort spent, as for a plan found.
        writeln!(out, "solver         {solver}")?;
        writeln!(out, "time           {}", seconds(elapsed))?;
        for (name, value) in counters {
            writeln!(out, "{name:<14} {value}")?;
        }
    }
    Ok(())
}

/// Refuses a `--start-address` that would misalign a buffer.
fn check_start_address(problem: &Problem, start: u64) -> Result<(), Failure> {
    match problem.buffers().iter().find(|b| start % b.alignment != 0) {
        Some(b) => Err(Failure::Input(format!(
            "--start-address {start} is not a multiple of buffer `{}`'s alignment {}",
            quoted(&b.id),
            b.alignment
        ))),
        None => Ok(()),
    }
}

/// `plan` with every offset moved up by `start` (checked by
/// [`check_start_address`]); every address must stay below 2^64.
fn at_address(
    problem: &Problem,
    plan: &memplan::Plan,
    start: u64,
) -> Result<memplan::Plan, Failure> {
    if start == 0 {
        return Ok(plan.clone());
    }
    let mut offsets = Vec::with_capacity(problem.len());
    for (b, &offset) in problem.buffers().iter().zip(plan.offsets()) {
        let address = start
            .checked_add(offset)
            .filter(|a| a.checked_add(b.size).is_some())
            .ok_or_else(|| {
                Failure::Input(format!(
                    "--start-address {start}: buffer `{}` would end past 2^64",
                    quoted(&b.id)
                ))
            })?;
        offsets.push(address);
    }
    Ok(memplan::Plan::from_offsets(offsets))
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn validate_plan(args: ValidateArgs) -> Result<(), Failure> {
    if let Some(pools) = &args.pools {
        return crate::pools::validate(&args, pools);
    }
    let problem = read(&args.input)?.with_capacity(args.capacity);
    // A plan whose ids do not match the problem's is an invalid plan (exit
    // 1), like one whose offsets collide; an unreadable one is bad input.
    let invalid = |at: String, message: String| {
        if args.json {
            if let Err(failure) = say!("{}", json!({ "valid": false, "error": message })) {
                return failure;
            }
        }
        Failure::Negative(format!("{at}: invalid plan: {message}"))
    };
    let plan = match read_plan(&args.plan, &problem) {
        Ok(plan) => plan,
        Err(e) if e.is_plan_mismatch() => {
            let at = match e.line {
                Some(line) => format!("{}:{line}", e.path.display()),
                None => e.path.display().to_string(),
            };
            return Err(invalid(at, e.kind.to_string()));
        }
        Err(e) => return Err(e.into()),
    };
    if let Err(e) = validate(&problem, &plan) {
        return Err(invalid(args.plan.display().to_string(), e.to_string()));
    }
    let stats = Stats::new(&problem, &plan);
    if args.json {
        say!(
            "{}",
            json!({
                "valid": true,
                "buffers": stats.buffers,
                "max_load": stats.max_load,
                "makespan": stats.makespan,
                "fragmentation": stats.fragmentation,
                "fragmentation_percent": stats.fragmentation_percent,
            })
        )?;
    } else {
        say!(
            "valid: {} buffers, max load {}, makespan {}, fragmentation {} ({:.3}%)",
            stats.buffers,
            bytes(stats.max_load),
            bytes(stats.makespan),
            bytes(stats.fragmentation),
            stats.fragmentation_percent
        )?;
    }
    Ok(())
}

fn stats(args: StatsArgs) -> Result<(), Failure> {
    let problem = read(&args.input)?;
    let b = problem.buffers();
    let max_load = problem.max_load();
    let total: u64 = b.iter().map(|x| x.size).sum();
    let min_size = b.iter().map(|x| x.size).min().unwrap_or(0);
    let max_size = b.iter().map(|x| x.size).max().unwrap_or(0);
    let first = b.iter().map(|x| x.start).min().unwrap_or(0);
    let last = b.iter().map(|x| x.end).max().unwrap_or(0);
    let fixed = b.iter().filter(|x| x.fixed_offset.is_some()).count();
    let aligned = b.iter().filter(|x| x.alignment > 1).count();
    // Gaps: the buffers with some, their number, and the max load of the
    // hulls (what a planner ignoring the gaps would face).
    let gapped = problem
        .indices()
        .filter(|&i| !problem.gaps().of(i).is_empty())
        .count();
    let gaps = problem.gaps().count();
    let hull_max_load = if problem.has_gaps() {
        memplan::geometry::sweep::max_load(b)
    } else {
        max_load
    };
    if args.json {
        say!(
            "{}",
            json!({
                "buffers": problem.len(),
                "max_load": max_load,
                "total_size": total,
                "min_size": min_size,
                "max_size": max_size,
                "time_start": first,
                "time_end": last,
                "fixed": fixed,
                "aligned": aligned,
                "gapped": gapped,
                "gaps": gaps,
                "hull_max_load": hull_max_load,
            })
        )?;
    } else {
        say!("buffers        {}", problem.len())?;
        say!("max load       {} ({max_load} B)", bytes(max_load))?;
        say!("total size     {} ({total} B)", bytes(total))?;
        say!("sizes          {} .. {}", bytes(min_size), bytes(max_size))?;
        say!("time           [{first}, {last}) half-open")?;
        say!("fixed          {fixed}")?;
        say!("aligned        {aligned}")?;
        if gaps > 0 {
            say!("gaps           {gaps} in {gapped} buffers")?;
            say!(
                "hull max load  {} ({hull_max_load} B, ignoring the gaps)",
                bytes(hull_max_load)
            )?;
        }
    }
    Ok(())
}

fn generate_file(args: GenerateArgs) -> Result<(), Failure> {
    let kind: Kind = args.kind;
    let generated = generate(kind, args.buffers as usize, args.seed);
    write_output(&args.output, &[], |out| {
        write_problem(out, &generated.problem, Lifetimes::HalfOpen)
    })?;
    Ok(())
}

/// Solver counters as a JSON object.
fn counter_map(counters: &[(&'static str, u64)]) -> serde_json::Map<String, serde_json::Value> {
    counters
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}
