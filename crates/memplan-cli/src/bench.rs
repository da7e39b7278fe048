//! `memplan bench`: times read + solve + validate of the greedy variants on
//! files or on generated instances, beside `sort -t, -k4,4n` on the same CSV
//! (a yardstick for "as fast as reading the file").

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use memplan::generate::generate;
use memplan::greedy::Greedy;
use memplan::problem::{read_problem, write_problem};
use memplan::{validate, Lifetimes, SolveOptions, Solver};

use crate::args::BenchArgs;
use crate::output::{bytes, seconds, write_atomically};
use crate::Failure;

/// Runs the benchmark and prints one table row per instance and variant.
pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let repeat = args.repeat.max(1);
    let (files, temp_dir) = instances(&args)?;
    let variants: Vec<Greedy> = if args.all_variants {
        Greedy::all().collect()
    } else {
        vec![Greedy::default()]
    };
    println!(
        "{:<28} {:>9} {:<28} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12} {:>9}",
        "instance",
        "buffers",
        "solver",
        "read",
        "solve",
        "validate",
        "total",
        "sort",
        "frag",
        "vs sort"
    );
    let result = (|| {
        for file in &files {
            let sort = median(repeat, || time_sort(file)).filter(|s| *s > 0.0);
            for variant in &variants {
                let mut runs = Vec::with_capacity(repeat);
                for _ in 0..repeat {
                    runs.push(measure(file, variant)?);
                }
                runs.sort_by(|a, b| a.total().total_cmp(&b.total()));
                let m = &runs[runs.len() / 2];
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                println!(
                    "{:<28} {:>9} {:<28} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12} {:>9}",
                    name,
                    m.buffers,
                    variant.name(),
                    seconds(m.read),
                    seconds(m.solve),
                    seconds(m.validate),
                    seconds(m.total()),
                    sort.map_or("-".into(), seconds),
                    format!("{} {:.2}%", bytes(m.fragmentation), m.fragmentation_percent),
                    sort.map_or("-".into(), |s| format!("{:.2}x", m.total() / s)),
                );
            }
        }
        Ok(())
    })();
    if let Some(dir) = temp_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
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
        fragmentation_percent: if max_load == 0 {
            0.0
        } else {
            fragmentation as f64 * 100.0 / max_load as f64
        },
    })
}

/// Seconds `sort -t, -k4,4n FILE > /dev/null` takes, if `sort` runs.
fn time_sort(file: &Path) -> Option<f64> {
    let start = Instant::now();
    let status = Command::new("sort")
        .args(["-t,", "-k4,4n"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

fn median(repeat: usize, mut f: impl FnMut() -> Option<f64>) -> Option<f64> {
    let mut values: Vec<f64> = (0..repeat).map(|_| f()).collect::<Option<_>>()?;
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// The files to run on, and a temporary directory to delete afterwards.
fn instances(args: &BenchArgs) -> Result<(Vec<PathBuf>, Option<PathBuf>), Failure> {
    if !args.inputs.is_empty() {
        let mut files = Vec::new();
        for input in &args.inputs {
            if input.is_dir() {
                let entries = std::fs::read_dir(input).map_err(|e| {
                    Failure::Input(format!("{}: cannot read directory: {e}", input.display()))
                })?;
                let mut csvs: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "csv"))
                    .collect();
                csvs.sort();
                files.extend(csvs);
            } else {
                files.push(input.clone());
            }
        }
        return Ok((files, None));
    }
    let dir = std::env::temp_dir().join(format!("memplan-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Input(format!("{}: cannot create: {e}", dir.display())))?;
    let kind: memplan::generate::Kind = args.kind.into();
    let mut files = Vec::new();
    for &n in &args.sizes {
        let path = dir.join(format!("{}-{n}.csv", kind.name()));
        let generated = generate(kind, n as usize, args.seed);
        write_atomically(&path, |out| {
            write_problem(out, &generated.problem, Lifetimes::HalfOpen)
        })?;
        files.push(path);
    }
    Ok((files, Some(dir)))
}
