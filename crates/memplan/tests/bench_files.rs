//! Reads the public benchmark files in `../shared/bench` as they are, and
//! checks that every greedy plan for them validates. Without the directory
//! the test is skipped with a notice on stderr; with it, each file listed
//! in [`FILES`] must be there.

use std::io::Write;
use std::path::{Path, PathBuf};

use memplan::problem::read_problem;
use memplan::solvers::greedy::Greedy;
use memplan::{validate, Lifetimes, SolveOptions, Solver};

/// The benchmark files, relative to `../shared/bench`: a missing one is a
/// failure (any other `.csv` file there is read too).
const FILES: &[&str] = &[
    "iopddl/G_1.csv",
    "iopddl/S_1.csv",
    "minimalloc/A.1048576.csv",
    "minimalloc/B.1048576.csv",
    "minimalloc/C.1048576.csv",
    "minimalloc/D.1048576.csv",
    "minimalloc/E.1048576.csv",
    "minimalloc/F.1048576.csv",
    "minimalloc/G.1048576.csv",
    "minimalloc/input.12.csv",
    "somas/resnet50.csv",
];

/// `../shared/bench` (beside the repository), whether it exists or not.
fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

fn csv_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(csv_files(&path));
        } else if path.extension().is_some_and(|e| e == "csv") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn public_benchmarks_read_and_solve() {
    let dir = bench_dir();
    if !dir.is_dir() {
        // Straight to stderr, not `eprintln!`, which the test harness
        // captures and shows only for a failure: the skip is seen in every
        // run.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: ../shared/bench not found ({}): the public benchmark files are not read",
            dir.display()
        );
        return;
    }
    let missing: Vec<&str> = FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "missing from {}: {}",
        dir.display(),
        missing.join(", ")
    );
    let files = csv_files(&dir);
    for file in files {
        let problem = read_problem(&file, Lifetimes::HalfOpen).unwrap();
        let max_load = problem.max_load();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".1048576.csv") {
            assert!(max_load <= 1_048_576, "{name}: max load {max_load}");
        }
        // Every variant on the small files; the default one on the large.
        let variants: Vec<Greedy> = if problem.len() < 5000 {
            Greedy::all().collect()
        } else {
            vec![Greedy::default()]
        };
        for greedy in variants {
            let solution = greedy.solve(&problem, &SolveOptions::default()).unwrap();
            validate(&problem, &solution.plan).unwrap();
            assert!(solution.makespan >= max_load, "{name}");
            assert_eq!(solution.lower_bound, max_load);
        }
    }
}
