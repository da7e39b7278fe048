//! Reads the public benchmark files in `../shared/bench` (when present) as
//! they are, and checks that every greedy plan for them validates.

use std::path::{Path, PathBuf};

use memplan::problem::read_problem;
use memplan::solvers::greedy::Greedy;
use memplan::{validate, Lifetimes, SolveOptions, Solver};

fn bench_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench");
    dir.is_dir().then_some(dir)
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
    let Some(dir) = bench_dir() else {
        println!("skipped: ../shared/bench is absent");
        return;
    };
    let files = csv_files(&dir);
    assert!(!files.is_empty());
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
