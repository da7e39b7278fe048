//! Every solver given a deadline that has already passed, or a raised
//! cancel flag, returns (no test here is timed: `scripts/time-limits.sh`
//! measures how promptly) with a valid plan, or without a capacity's plan
//! and the reason that the clock (or the flag) stopped it, never a
//! heuristic's miss.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use memplan::generate::{generate, Kind};
use memplan::solver::{run, Cancel, Stopped};
use memplan::solvers::auto::{Auto, AutoOptions};
use memplan::{validate, Buffer, NotFoundReason, Problem, SolveError, SolveOptions, Solver};

fn solvers() -> Vec<Box<dyn Solver>> {
    let mut all = memplan::solvers::every();
    // Auto's path for large instances (boxing beside the skyline).
    all.push(Box::new(Auto {
        options: AutoOptions {
            search_max_buffers: 10,
            ..AutoOptions::default()
        },
    }));
    all
}

/// Small instances of each kind, with fixed and aligned buffers.
fn problems() -> Vec<Problem> {
    [Kind::Random, Kind::Layered, Kind::Trace, Kind::Perfect]
        .into_iter()
        .map(|kind| {
            let base = generate(kind, 300, 11).problem;
            let buffers: Vec<Buffer> = base
                .buffers()
                .iter()
                .enumerate()
                .map(|(i, b)| match i % 37 {
                    0 => b.clone().fixed((i as u64) << 40),
                    1..=5 => b.clone().aligned(16),
                    _ => b.clone(),
                })
                .collect();
            Problem::new(buffers, None).unwrap()
        })
        .collect()
}

fn passed() -> SolveOptions {
    SolveOptions {
        time_limit: Some(Duration::ZERO),
        ..SolveOptions::default()
    }
}

fn cancelled() -> SolveOptions {
    SolveOptions {
        time_limit: Some(Duration::from_secs(3600)),
        cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
        ..SolveOptions::default()
    }
}

#[test]
fn a_passed_deadline_gives_a_valid_plan_from_every_solver() {
    for p in problems() {
        for solver in solvers() {
            for (options, stopped) in [
                (passed(), Stopped::TimeLimit),
                (cancelled(), Stopped::Interrupted),
            ] {
                let s = run(solver.as_ref(), &p, &options)
                    .unwrap_or_else(|e| panic!("{}: {e}", solver.name()));
                assert_eq!(validate(&p, &s.plan), Ok(()), "{}", solver.name());
                assert!(s.makespan >= s.lower_bound, "{}", solver.name());
                if !s.optimal {
                    assert_eq!(s.stopped, Some(stopped), "{}", solver.name());
                }
            }
        }
    }
}

#[test]
fn a_capacity_missed_for_lack_of_time_says_so() {
    // A perfect instance no greedy variant solves at its max load: only a
    // search could, and the clock (or the flag) gave it no time.
    let p = generate(Kind::Perfect, 60, 2).problem;
    let load = p.max_load();
    let tight = p.with_capacity(Some(load));
    for solver in solvers() {
        for (options, reason) in [
            (passed(), NotFoundReason::TimeLimit),
            (cancelled(), NotFoundReason::Interrupted),
        ] {
            match run(solver.as_ref(), &tight, &options) {
                Ok(s) => assert_eq!(validate(&tight, &s.plan), Ok(()), "{}", solver.name()),
                Err(SolveError::NotFound {
                    reason: got,
                    best_makespan,
                    ..
                }) => {
                    assert_eq!(got, reason, "{}", solver.name());
                    assert!(best_makespan.is_none_or(|m| m > load), "{}", solver.name());
                }
            }
        }
    }
}
