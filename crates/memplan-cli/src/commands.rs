//! One function per subcommand.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use memplan::generate::{generate, Kind};
use memplan::plan::{read_plan, write_plan};
use memplan::problem::{read_problem, write_problem};
use memplan::quote::quoted;
use memplan::request::{Control, Outcome, Report};
use memplan::solver::Cancel;
use memplan::{validate, Lifetimes, Problem, Progress, Stats};
use serde_json::json;

use crate::args::{Cli, Command, GenerateArgs, InputArgs, SolveArgs, StatsArgs, ValidateArgs};
use crate::output::{
    bytes, report_stream, run_failure, seconds, stopped_phrase, write_failure, write_output, Sink,
};
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

/// `memplan solve`: reads, runs the library's request (which solves,
/// checks and measures), writes the plan and prints the report.
fn solve(args: SolveArgs) -> Result<(), Failure> {
    if let Some(pools) = &args.pools {
        return crate::pools::solve(&args, pools);
    }
    let request = args.request().map_err(|e| Failure::Input(e.to_string()))?;
    let problem = read(&args.input)?.with_capacity(args.capacity);
    check_start_address(&problem, args.start_address)?;
    // Checked before solving: a bad output path must not cost a solve.
    let sink = args
        .output
        .as_deref()
        .map(|path| Sink::new(path, &[&args.input.input]))
        .transpose()?;
    // The report goes to stderr when the plan goes to stdout.
    let (mut out, reported) = report_stream(sink.as_ref());
    let unwritten = |e| write_failure(e, reported);
    let control = Control {
        cancel: Cancel::new(signals::graceful_stop()),
        progress: Progress::default(),
    };
    let spinner = Spinner::start(&control.progress, args.quiet);
    let result = request.run(&problem, &control);
    let returned = Instant::now();
    spinner.finish();
    let mut report = result.map_err(run_failure)?;
    report.stop_latency = signals::stop_latency(returned, report.check_seconds);
    let solution = match &report.outcome {
        Outcome::Planned(solution) => solution,
        Outcome::NotFound(error) => {
            write_not_found(&mut out, &args, &report).map_err(unwritten)?;
            return Err(Failure::Negative(format!(
                "{}: {error}",
                args.input.input.display()
            )));
        }
    };
    if let Some(sink) = &sink {
        let lifetimes: Lifetimes = args.input.lifetimes;
        at_address(&problem, &solution.plan, args.start_address)
            .and_then(|plan| sink.write(|o| write_plan(o, &problem, &plan, lifetimes)))?;
    }
    if args.json {
        writeln!(out, "{}", report.json())
    } else {
        write_text(&mut out, &report, solution, args.output.as_deref())
    }
    .and_then(|()| out.flush())
    .map_err(unwritten)
}

/// The text summary of a plan found, naming the plan file `output` if any.
fn write_text(
    out: &mut dyn Write,
    report: &Report,
    solution: &memplan::Solution,
    output: Option<&Path>,
) -> std::io::Result<()> {
    let max_load = report.max_load;
    let frag = solution.makespan - max_load;
    writeln!(out, "buffers        {}", report.buffers)?;
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
        memplan::request::share(u128::from(frag), u128::from(max_load))
    )?;
    if solution.lower_bound > max_load {
        writeln!(
            out,
            "lower bound    {} ({} B)",
            bytes(solution.lower_bound),
            solution.lower_bound
        )?;
    }
    writeln!(out, "solver         {}", report.solver)?;
    if report.hints > 0 {
        writeln!(
            out,
            "hints kept     {} of {}",
            report.hints_kept, report.hints
        )?;
    }
    writeln!(out, "time           {}", seconds(report.seconds))?;
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

/// The report of a solve that found no plan within the capacity: the JSON
/// object, or the solver's counters in text.
fn write_not_found(out: &mut dyn Write, args: &SolveArgs, report: &Report) -> std::io::Result<()> {
    if args.json {
        writeln!(out, "{}", report.json())?;
    } else if !report.counters().is_empty() {
        // The effort spent, as for a plan found.
        writeln!(out, "solver         {}", report.solver)?;
        writeln!(out, "time           {}", seconds(report.seconds))?;
        for (name, value) in report.counters() {
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
        memplan::solver::uncut(|never| memplan::geometry::sweep::max_load(b, never))
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
