//! The figures of the README's Hints section: generated instances of 300
//! and 2000 buffers, planned by auto (default effort), the middle buffer
//! grown by half its size, re-planned with `--stable` (default effort;
//! then within the old makespan plus the grown buffer), against auto with
//! the hints ignored. One line per instance:
//! `cargo run --release -p memplan --example hints_small_changes`.

use memplan::generate::{generate, Kind};
use memplan::hints;
use memplan::solvers::auto::Auto;
use memplan::stable::{solve_stable, StableOptions};
use memplan::{Problem, SolveOptions, Solver};

/// `problem` with `offsets` as its hints.
fn hinted(problem: &Problem, offsets: &[u64]) -> Problem {
    let hints: Vec<Option<u64>> = offsets.iter().map(|&o| Some(o)).collect();
    problem.clone().with_hints(&hints).unwrap()
}

/// `problem` with buffer `b` grown by `extra` bytes.
fn grow(problem: &Problem, b: usize, extra: u64) -> Problem {
    let mut buffers = problem.buffers().to_vec();
    buffers[b].size += extra;
    Problem::new(buffers, None).unwrap()
}

fn main() {
    for n in [300usize, 2000] {
        for kind in Kind::ALL {
            for seed in [11u64, 12] {
                let p = generate(kind, n, seed).problem;
                let old = Auto::default().solve(&p, &SolveOptions::default()).unwrap();
                let b = n / 2;
                let changed = grow(&p, b, p.buffers()[b].size / 2 + 1);
                let h = hinted(&changed, old.plan.offsets());
                let started = std::time::Instant::now();
                let s = solve_stable(
                    &Auto::default(),
                    &h,
                    &SolveOptions::default(),
                    &StableOptions::default(),
                )
                .unwrap();
                let seconds = started.elapsed().as_secs_f64();
                let roomy = StableOptions {
                    makespan: Some(old.makespan + changed.buffers()[b].size),
                };
                let r =
                    solve_stable(&Auto::default(), &h, &SolveOptions::default(), &roomy).unwrap();
                let bare = SolveOptions {
                    ignore_hints: true,
                    ..SolveOptions::default()
                };
                let plain = Auto::default().solve(&h, &bare).unwrap();
                println!(
                    "{} n={n} seed={seed}: old makespan {} | stable: makespan {} kept {}/{} \
                     (bound {}, by the solve {}) in {seconds:.2} s | within {}: kept {} (bound {}) \
                     | hints ignored: makespan {} kept {}",
                    kind.name(),
                    old.makespan,
                    s.solution.makespan,
                    s.kept,
                    s.hints,
                    s.bound,
                    s.kept_by_solver,
                    r.target,
                    r.kept,
                    r.bound,
                    plain.makespan,
                    hints::kept(&h, &plain.plan)
                );
            }
        }
    }
}
