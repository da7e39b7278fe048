//! A mutation fuzzer for the CSV readers and for solving small instances
//! (issue 14; the stable-toolchain equivalent of a `cargo fuzz` target).
//!
//! Inputs start from a seed corpus (valid problem and plan files, with
//! fixed, aligned and quoted cells) and are mutated at the byte and the
//! cell level by a seeded generator, so a run is reproducible. Every input
//! is read as a problem and as a plan; every problem read is solved by
//! every solver with a small time limit and its plan validated. A panic is
//! a failure; the input is written to `target/fuzz-failures/`.
//!
//! `MEMPLAN_FUZZ_SECONDS` (default 3) bounds the run, `MEMPLAN_FUZZ_SEED`
//! (default 0) picks the sequence; `scripts/fuzz.sh` runs it longer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use memplan::plan::read_plan_from;
use memplan::problem::read_problem_from;
use memplan::solvers::auto::Auto;
use memplan::solvers::boxing::Boxing;
use memplan::solvers::greedy::{Fit, Greedy, Order};
use memplan::solvers::search::Search;
use memplan::solvers::tela::Tela;
use memplan::{validate, Lifetimes, SolveOptions, Solver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CORPUS: &[&str] = &[
    "id,lower,upper,size\na,0,4,8\nb,2,6,8\nc,5,9,8\n",
    "id,lower,upper,size,alignment,offset\nw,0,10,4096,64,0\nx,0,3,1024,64,\ny,2,5,2048,64,\n",
    "id,lower,upper,size,offset\na,0,2,8,4\nb,0,2,8,\n",
    "buffer,start,end,size\n\"q,1\",0,3,5\n\"r\"\"s\",1,4,7\nt,3,5,2\n",
    "id,lower,upper,size\n0,1,5,10\n1,2,6,5\n2,1,3,8\n3,4,7,4\n4,3,8,6\n5,5,9,12\n",
];

const PLAN: &str = "id,offset\na,0\nb,8\nc,0\n";

/// Interesting replacements for a cell.
const CELLS: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "9999999999999999999999",
    "1e3",
    " 7 ",
    "\"",
    "\"\"",
    "\"a,b\"",
    "\u{1b}[31m",
    "\0",
    "é",
    "4096",
    "64",
];

fn mutate(rng: &mut ChaCha8Rng, input: &str) -> Vec<u8> {
    let mut bytes = input.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..4) {
        match rng.gen_range(0..7) {
            // Flip, insert or delete a byte.
            0 if !bytes.is_empty() => {
                let i = rng.gen_range(0..bytes.len());
                bytes[i] ^= 1 << rng.gen_range(0..8);
            }
            1 => {
                let i = rng.gen_range(0..=bytes.len());
                let b = *b",\n\"0 9-\r".get(rng.gen_range(0..8)).unwrap_or(&b'x');
                bytes.insert(i, b);
            }
            2 if !bytes.is_empty() => {
                let i = rng.gen_range(0..bytes.len());
                bytes.remove(i);
            }
            // Replace a cell.
            3 | 4 => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut cells: Vec<String> = text.split(',').map(str::to_string).collect();
                let i = rng.gen_range(0..cells.len());
                let cell = CELLS[rng.gen_range(0..CELLS.len())];
                // Keep the line break that ended the cell.
                let tail = if cells[i].ends_with('\n') { "\n" } else { "" };
                cells[i] = format!("{cell}{tail}");
                bytes = cells.join(",").into_bytes();
            }
            // Duplicate or drop a line.
            5 => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let i = rng.gen_range(0..lines.len());
                if rng.gen_bool(0.5) {
                    lines.insert(i, lines[i]);
                } else {
                    lines.remove(i);
                }
                bytes = lines.join("\n").into_bytes();
            }
            _ => {
                let i = rng.gen_range(0..=bytes.len());
                bytes.truncate(i);
            }
        }
    }
    bytes
}

fn solvers() -> Vec<Box<dyn Solver>> {
    vec![
        Box::new(Auto::default()),
        Box::new(Search::default()),
        Box::new(Tela::default()),
        Box::new(Boxing::default()),
        Box::new(Greedy {
            order: Order::Size,
            fit: Fit::FirstFit,
        }),
        Box::new(Greedy {
            order: Order::Contention,
            fit: Fit::Skyline,
        }),
        Box::new(Greedy {
            order: Order::Area,
            fit: Fit::BestFit,
        }),
    ]
}

/// Reads `bytes` every way and solves what reads as a small problem.
fn exercise(bytes: &[u8], capacity_slack: Option<u64>) {
    let path = Path::new("fuzz.csv");
    for lifetimes in [Lifetimes::HalfOpen, Lifetimes::Inclusive] {
        let Ok(problem) = read_problem_from(bytes, path, lifetimes) else {
            continue;
        };
        if let Ok(plan) = read_plan_from(bytes, path, &problem) {
            let _ = validate(&problem, &plan);
        }
        if let Ok(reference) = read_problem_from(CORPUS[0].as_bytes(), path, lifetimes) {
            let _ = read_plan_from(bytes, path, &reference);
        }
        if problem.len() > 8 {
            continue;
        }
        let capacity = capacity_slack.map(|s| problem.max_load().saturating_add(s));
        let problem = problem.with_capacity(capacity);
        let options = SolveOptions {
            time_limit: Some(Duration::from_millis(5)),
            ..SolveOptions::default()
        };
        for solver in solvers() {
            if let Ok(s) = solver.solve(&problem, &options) {
                assert!(
                    validate(&problem, &s.plan).is_ok(),
                    "{} returned an invalid plan",
                    solver.name()
                );
            }
        }
    }
}

#[test]
fn readers_and_solvers_survive_mutated_inputs() {
    let seconds: f64 = std::env::var("MEMPLAN_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let seed: u64 = std::env::var("MEMPLAN_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let started = Instant::now();
    let mut runs = 0u64;
    while started.elapsed().as_secs_f64() < seconds {
        let base = if rng.gen_bool(0.1) {
            PLAN
        } else {
            CORPUS[rng.gen_range(0..CORPUS.len())]
        };
        let input = mutate(&mut rng, base);
        let slack = [None, Some(0), Some(3), Some(64)][rng.gen_range(0..4)];
        let outcome = catch_unwind(AssertUnwindSafe(|| exercise(&input, slack)));
        if outcome.is_err() {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("seed{seed}-run{runs}.csv"));
            let _ = std::fs::write(&file, &input);
            panic!(
                "panic on input {:?} (slack {slack:?}), saved to {}",
                String::from_utf8_lossy(&input),
                file.display()
            );
        }
        runs += 1;
    }
    eprintln!("fuzz: {runs} inputs in {seconds} s (seed {seed})");
    assert!(runs > 0);
}
