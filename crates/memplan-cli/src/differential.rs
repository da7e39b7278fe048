//! `memplan bench --reference BINARY`: memplan against MiniMalloc's
//! reference solver on the same instances and capacities, each run timed
//! in the same process run, with answer-preserving copies of every input
//! (`--transforms`). Per instance: who decided it (a plan within the
//! capacity or a proof that none exists) and memplan's time as a multiple
//! of the reference's. Both plans are checked by the validator, and
//! opposite answers are reported.
//!
//! The reference's time is the solve time it prints (`Elapsed time`,
//! parsing excluded); memplan's is the time of its solve call (parsing
//! excluded too). Runs under a second are repeated `--repeat` times on
//! both sides and the median kept.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memplan::plan::read_plan;
use memplan::problem::{read_problem, write_problem};
use memplan::transform::Transform;
use memplan::{validate, Lifetimes, Problem, SolveError, SolveOptions, Solver};
use serde_json::{json, Value};

use crate::args::{BenchArgs, TransformArg};
use crate::output::{seconds, write_output};
use crate::table::{Cell, Column, Printer};
use crate::Failure;

/// memplan's time must be at most this multiple of the reference's on
/// every instance the reference decides.
pub const TARGET_RATIO: f64 = 0.5;

/// What one solver said of one instance.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    /// A plan within the capacity (checked by the validator).
    Fits,
    /// No plan exists (proven).
    Infeasible,
    /// Undecided within the time limit.
    Unknown,
    /// The run failed: a crash, an invalid plan, unreadable output.
    Failed(String),
}

impl Answer {
    fn decided(&self) -> bool {
        matches!(self, Answer::Fits | Answer::Infeasible)
    }

    fn name(&self) -> String {
        match self {
            Answer::Fits => "fits".into(),
            Answer::Infeasible => "infeasible".into(),
            Answer::Unknown => "unknown".into(),
            Answer::Failed(why) => format!("failed: {why}"),
        }
    }
}

/// Runs the differential benchmark on `files` (and their transformed
/// copies) with `solver` as memplan's side.
pub fn run(
    args: &BenchArgs,
    reference: &Path,
    files: &[PathBuf],
    solver: (&str, &dyn Solver),
) -> Result<(), Failure> {
    if !reference.is_file() {
        return Err(Failure::Input(format!(
            "--reference {}: no such file",
            reference.display()
        )));
    }
    let timeout = memplan::solver::seconds(args.time_limit);
    // A private directory with an unpredictable name, removed on drop
    // (or by a signal ending the process).
    let tmp = crate::signals::TempDir::new("memplan-differential-")?;
    let dir = tmp.path().to_path_buf();
    let columns = [
        Column::left("instance", 30, &["instance"]),
        Column::right("buffers", 7, &["buffers"]),
        Column::right("capacity", 10, &["capacity"]),
        Column::left("reference", 22, &["reference", "reference_seconds"]),
        Column::left("memplan", 22, &["memplan", "memplan_seconds"]),
        Column::right("ratio", 7, &["ratio"]),
        Column::left("verdict", 0, &["verdict"]),
    ];
    let mut out = Printer::new(args.format, &columns)?;
    let transforms: Vec<Transform> = args.transforms.iter().map(|&t| t.into()).collect();
    let mut tally = Tally::default();
    let result = (|| {
        for file in files {
            let problem = read_problem(file, Lifetimes::HalfOpen)?;
            let capacity = args
                .capacity
                .or_else(|| capacity_in_name(file))
                .unwrap_or_else(|| problem.max_load());
            let base = problem.with_capacity(Some(capacity));
            let name = file_stem(file);
            let copies = std::iter::once((name.clone(), Ok(base.clone()))).chain(
                transforms
                    .iter()
                    .map(|t| (format!("{name}~{}", t.name()), t.apply(&base))),
            );
            for (instance, copy) in copies {
                let copy = copy.map_err(|e| Failure::Input(format!("{instance}: {e}")))?;
                let path = dir.join(format!("{instance}.csv"));
                write_output(&path, &[], |w| write_problem(w, &copy, Lifetimes::HalfOpen))?;
                let repeat = args.repeat.max(1) as usize;
                let theirs = median_of(repeat, || {
                    run_reference(reference, &path, &copy, timeout, &dir)
                });
                let ours = median_of(repeat, || run_memplan(solver.1, &copy, timeout));
                let row = Row::new(instance, &copy, theirs, ours);
                tally.count(&row);
                out.row(&row.cells())?;
            }
        }
        Ok::<(), Failure>(())
    })();
    drop(tmp);
    result?;
    out.finish(tally.summary(solver.0))?;
    Ok(())
}

/// Runs shorter than this are repeated (`--repeat`): on a busy machine a
/// millisecond run can take ten times as long once in a while.
const REPEAT_BELOW: f64 = 1.0;

/// The run of median time among `repeat` runs, when the first takes less
/// than [`REPEAT_BELOW`] seconds; else the first.
fn median_of(repeat: usize, mut run: impl FnMut() -> (Answer, f64)) -> (Answer, f64) {
    let first = run();
    if repeat <= 1 || first.1 >= REPEAT_BELOW {
        return first;
    }
    let mut runs = vec![first];
    runs.extend((1..repeat).map(|_| run()));
    runs.sort_by(|a, b| a.1.total_cmp(&b.1));
    runs.swap_remove(runs.len() / 2)
}

/// The capacity in a file name `NAME.CAPACITY.csv` (MiniMalloc's naming).
fn capacity_in_name(file: &Path) -> Option<u64> {
    let stem = file.file_stem()?.to_str()?;
    stem.rsplit_once('.')?.1.parse().ok()
}

/// The file name without `.csv` (nor the capacity).
fn file_stem(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('.') {
        Some((name, capacity)) if capacity.parse::<u64>().is_ok() => name.to_string(),
        _ => stem,
    }
}

/// Runs the reference binary on `input` at the problem's capacity.
fn run_reference(
    binary: &Path,
    input: &Path,
    problem: &Problem,
    timeout: Duration,
    dir: &Path,
) -> (Answer, f64) {
    let output_path = dir.join("reference-plan.csv");
    let _ = std::fs::remove_file(&output_path);
    let started = Instant::now();
    let output = crate::signals::spawn_child(
        Command::new(binary)
            .arg(format!("--capacity={}", problem.capacity.unwrap_or(0)))
            .arg(format!("--input={}", input.display()))
            .arg(format!("--output={}", output_path.display()))
            .arg(format!("--timeout={}s", timeout.as_secs_f64()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .and_then(|(child, _registered)| child.wait_with_output());
    let wall = started.elapsed().as_secs_f64();
    let output = match output {
        Ok(o) => o,
        Err(e) => return (Answer::Failed(format!("cannot run: {e}")), wall),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    // "Elapsed time 1.234s": the solve alone; else the process's time.
    let elapsed = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Elapsed time "))
        .and_then(|t| t.trim_end_matches('s').parse::<f64>().ok())
        .unwrap_or(wall);
    let answer = if output.status.success() {
        match read_plan(&output_path, problem) {
            Ok(plan) => match validate(problem, &plan) {
                Ok(()) => Answer::Fits,
                Err(e) => Answer::Failed(format!("invalid plan: {e}")),
            },
            Err(e) => Answer::Failed(format!("unreadable plan: {e}")),
        }
    } else if stderr.contains("DEADLINE_EXCEEDED") {
        Answer::Unknown
    } else if stderr.contains("NOT_FOUND") {
        Answer::Infeasible
    } else {
        let last = stderr.lines().last().unwrap_or("").to_string();
        Answer::Failed(format!("exit {}: {last}", output.status))
    };
    (answer, elapsed)
}

/// Runs memplan's solver in this process.
fn run_memplan(solver: &dyn Solver, problem: &Problem, timeout: Duration) -> (Answer, f64) {
    let options = SolveOptions {
        time_limit: Some(timeout),
        ..SolveOptions::default()
    };
    let started = Instant::now();
    let result = solver.solve(problem, &options);
    let elapsed = started.elapsed().as_secs_f64();
    let answer = match result {
        Ok(s) => match validate(problem, &s.plan) {
            Ok(()) => Answer::Fits,
            Err(e) => Answer::Failed(format!("invalid plan: {e}")),
        },
        Err(SolveError::NotFound { reason, .. }) => {
            if reason == memplan::NotFoundReason::ProvenInfeasible {
                Answer::Infeasible
            } else {
                Answer::Unknown
            }
        }
    };
    (answer, elapsed)
}

/// One instance's results.
struct Row {
    instance: String,
    buffers: usize,
    capacity: u64,
    theirs: (Answer, f64),
    ours: (Answer, f64),
}

impl Row {
    fn new(
        instance: String,
        problem: &Problem,
        theirs: (Answer, f64),
        ours: (Answer, f64),
    ) -> Self {
        Row {
            instance,
            buffers: problem.len(),
            capacity: problem.capacity.unwrap_or(0),
            theirs,
            ours,
        }
    }

    /// memplan's time over the reference's, when both decided.
    fn ratio(&self) -> Option<f64> {
        (self.theirs.0.decided() && self.ours.0.decided())
            .then(|| self.ours.1 / self.theirs.1.max(1e-6))
    }

    fn verdict(&self) -> &'static str {
        let (theirs, ours) = (&self.theirs.0, &self.ours.0);
        let opposite = matches!(
            (theirs, ours),
            (Answer::Fits, Answer::Infeasible) | (Answer::Infeasible, Answer::Fits)
        );
        if opposite || matches!(theirs, Answer::Failed(_)) || matches!(ours, Answer::Failed(_)) {
            "DISAGREE"
        } else if theirs.decided() && !ours.decided() {
            "MISSED"
        } else if theirs.decided() {
            if self.ratio().is_some_and(|r| r <= TARGET_RATIO) {
                "ok"
            } else {
                "SLOW"
            }
        } else if ours.decided() {
            "memplan only"
        } else {
            "neither"
        }
    }

    fn cells(&self) -> Vec<Cell> {
        let answer = |(a, t): &(Answer, f64)| {
            Cell::new(
                format!("{} {}", a.name(), seconds(*t)),
                [json!(a.name()), json!(t)],
            )
        };
        vec![
            Cell::new(self.instance.clone(), [json!(self.instance)]),
            Cell::new(self.buffers.to_string(), [json!(self.buffers)]),
            Cell::new(self.capacity.to_string(), [json!(self.capacity)]),
            answer(&self.theirs),
            answer(&self.ours),
            match self.ratio() {
                Some(r) => Cell::new(format!("{r:.2}"), [json!(r)]),
                None => Cell::none(1),
            },
            Cell::new(self.verdict(), [json!(self.verdict())]),
        ]
    }
}

/// Counts of verdicts.
#[derive(Default)]
struct Tally {
    instances: usize,
    reference_decided: usize,
    ok: usize,
    slow: usize,
    missed: usize,
    memplan_only: usize,
    disagree: usize,
    reference_seconds: f64,
    memplan_seconds: f64,
}

impl Tally {
    fn count(&mut self, row: &Row) {
        self.instances += 1;
        if row.theirs.0.decided() {
            self.reference_decided += 1;
            self.reference_seconds += row.theirs.1;
            self.memplan_seconds += row.ours.1;
        }
        match row.verdict() {
            "ok" => self.ok += 1,
            "SLOW" => self.slow += 1,
            "MISSED" => self.missed += 1,
            "memplan only" => self.memplan_only += 1,
            "DISAGREE" => self.disagree += 1,
            _ => {}
        }
    }

    fn summary(&self, solver: &str) -> Vec<(String, Value)> {
        let met = self.slow == 0 && self.missed == 0 && self.disagree == 0;
        vec![(
            format!(
                "{} instances; the reference decided {} (in {} in all), memplan ({solver}) {} of \
                 them within {TARGET_RATIO}x its time (in {} in all), {} slower, {} missed; \
                 memplan alone decided {}; {} disagreements. Target {}.",
                self.instances,
                self.reference_decided,
                seconds(self.reference_seconds),
                self.ok,
                seconds(self.memplan_seconds),
                self.slow,
                self.missed,
                self.memplan_only,
                self.disagree,
                if met { "met" } else { "NOT met" },
            ),
            json!({
                "instances": self.instances,
                "reference_decided": self.reference_decided,
                "ok": self.ok,
                "slow": self.slow,
                "missed": self.missed,
                "memplan_only": self.memplan_only,
                "disagree": self.disagree,
                "reference_seconds": self.reference_seconds,
                "memplan_seconds": self.memplan_seconds,
                "target_ratio": TARGET_RATIO,
                "target_met": met,
            }),
        )]
    }
}

impl From<TransformArg> for Transform {
    fn from(t: TransformArg) -> Self {
        match t {
            TransformArg::Reverse => Transform::Reverse,
            TransformArg::Shuffle => Transform::Shuffle(1),
            TransformArg::Rename => Transform::Rename,
            TransformArg::Scale => Transform::Scale(3),
        }
    }
}
