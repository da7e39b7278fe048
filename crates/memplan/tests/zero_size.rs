//! Zero-size buffers through every solver called by the `Solver` trait:
//! each plan is checked by the validator, zero-size buffers sit at 0 (or
//! their fixed offset), and the rest is planned as if they were absent.

use std::time::Duration;

use memplan::solvers::search::Search;
use memplan::{validate, Buffer, NotFoundReason, Problem, SolveError, SolveOptions, Solver};
use proptest::prelude::*;

/// Every solver: each greedy variant, search, boxing, tela and auto.
fn solvers() -> Vec<Box<dyn Solver>> {
    memplan::solvers::every()
}

fn options() -> SolveOptions {
    SolveOptions {
        time_limit: Some(Duration::from_millis(200)),
        ..SolveOptions::default()
    }
}

/// The same problem without its zero-size buffers.
fn positive(problem: &Problem) -> Problem {
    let kept = problem
        .buffers()
        .iter()
        .filter(|b| b.size > 0)
        .cloned()
        .collect();
    Problem::new(kept, problem.capacity).unwrap()
}

/// Checks a solution of `problem` by `solver`: valid, zero-size buffers at
/// 0 or their fixed offset, consistent makespan and bound; returns it.
fn check(solver: &dyn Solver, problem: &Problem) -> Result<memplan::Solution, SolveError> {
    let result = solver.solve(problem, &options());
    if let Ok(s) = &result {
        let name = solver.name();
        assert_eq!(validate(problem, &s.plan), Ok(()), "{name}");
        for (b, &o) in problem.buffers().iter().zip(s.plan.offsets()) {
            if b.size == 0 {
                assert_eq!(o, b.fixed_offset.unwrap_or(0), "{name}: `{}`", b.id);
            }
        }
        assert_eq!(s.makespan, s.plan.makespan(problem), "{name}");
        assert!(s.lower_bound >= problem.max_load(), "{name}");
        assert!(s.lower_bound <= s.makespan, "{name}");
        assert_eq!(s.optimal, s.lower_bound == s.makespan, "{name}");
    }
    result
}

#[test]
fn zero_size_buffers_conflict_with_nothing() {
    // z0 lies in time and address inside a; z1 is fixed inside b's range.
    let problem = Problem::new(
        vec![
            Buffer::new("a", 0, 4, 8),
            Buffer::new("z0", 1, 3, 0).aligned(64),
            Buffer::new("b", 2, 6, 8),
            Buffer::new("z1", 0, 9, 0).fixed(4),
            Buffer::new("c", 5, 9, 8),
        ],
        None,
    )
    .unwrap();
    assert_eq!(problem.max_load(), 16);
    for solver in solvers() {
        let s = check(solver.as_ref(), &problem).unwrap();
        assert_eq!(s.makespan, 16, "{}", solver.name());
        assert!(s.optimal, "{}", solver.name());
    }
}

#[test]
fn only_zero_size_buffers() {
    let problem = Problem::new(
        vec![
            Buffer::new("a", 0, 4, 0).aligned(8),
            Buffer::new("b", 0, 4, 0),
        ],
        Some(0),
    )
    .unwrap();
    for solver in solvers() {
        let s = check(solver.as_ref(), &problem).unwrap();
        assert_eq!((s.makespan, s.lower_bound), (0, 0), "{}", solver.name());
        assert_eq!(s.plan.offsets(), [0, 0]);
    }
}

#[test]
fn fixed_zero_size_offsets_count_in_the_makespan_and_capacity() {
    let buffers = vec![
        Buffer::new("a", 0, 4, 8),
        Buffer::new("z", 0, 4, 0).fixed(32),
    ];
    let problem = Problem::new(buffers.clone(), None).unwrap();
    for solver in solvers() {
        let s = check(solver.as_ref(), &problem).unwrap();
        assert_eq!((s.makespan, s.lower_bound), (32, 32), "{}", solver.name());
        assert!(s.optimal);
    }
    let tight = Problem::new(buffers, Some(31)).unwrap();
    for solver in solvers() {
        let e = check(solver.as_ref(), &tight).unwrap_err();
        let SolveError::NotFound { reason, .. } = e;
        assert_eq!(
            reason,
            NotFoundReason::ProvenInfeasible,
            "{}",
            solver.name()
        );
    }
}

/// Buffers as `(start, length, size, alignment exponent, fixed zero-size
/// offset)`; about a third have size 0, and some of those are fixed.
fn buffers() -> impl Strategy<Value = Vec<(u64, u64, u64, u32, Option<u64>)>> {
    proptest::collection::vec(
        (
            0u64..16,
            1u64..8,
            prop_oneof![Just(0u64), 1u64..9, 1u64..9],
            0u32..3,
            proptest::option::weighted(0.3, 0u64..40),
        ),
        0..14,
    )
}

fn build(spec: &[(u64, u64, u64, u32, Option<u64>)], capacity: Option<u64>) -> Problem {
    let buffers = spec
        .iter()
        .enumerate()
        .map(|(i, &(start, len, size, align, fixed))| {
            let b = Buffer::new(format!("b{i}"), start, start + len, size).aligned(1 << align);
            match fixed {
                Some(o) if size == 0 => b.fixed(o << align),
                _ => b,
            }
        })
        .collect();
    Problem::new(buffers, capacity).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every solver on random problems with zero sizes: a valid plan whose
    /// zero-size buffers sit at 0 or their fixed offset, and the same
    /// makespan as the solver gives without them (when the fixed zero-size
    /// offsets are below it) for the deterministic solvers.
    #[test]
    fn every_solver_plans_zero_sizes(spec in buffers()) {
        let problem = build(&spec, None);
        let without = positive(&problem);
        let zero_end = problem
            .buffers()
            .iter()
            .filter(|b| b.size == 0)
            .filter_map(|b| b.fixed_offset)
            .max()
            .unwrap_or(0);
        prop_assert_eq!(problem.max_load(), without.max_load());
        for solver in solvers() {
            let s = check(solver.as_ref(), &problem).unwrap();
            let name = solver.name();
            if name.starts_with("greedy") || name == "boxing" {
                let alone = solver.solve(&without, &options()).unwrap();
                prop_assert_eq!(s.makespan, alone.makespan.max(zero_end), "{}", name);
            }
            if s.optimal {
                let alone = Search::default().solve(&without, &SolveOptions::default()).unwrap();
                prop_assert!(alone.optimal);
                prop_assert_eq!(s.makespan, alone.makespan.max(zero_end), "{}", name);
            }
        }
    }

    /// With a capacity: a plan within it or a refusal, never an invalid plan;
    /// the exact search decides, and agrees with the problem without zero
    /// sizes.
    #[test]
    fn capacities_with_zero_sizes(spec in buffers(), slack in 0u64..12) {
        let loose = build(&spec, None);
        let capacity = loose.max_load() + slack;
        let problem = loose.with_capacity(Some(capacity));
        let zero_end = problem
            .buffers()
            .iter()
            .filter(|b| b.size == 0)
            .filter_map(|b| b.fixed_offset)
            .max()
            .unwrap_or(0);
        for solver in solvers() {
            let _ = check(solver.as_ref(), &problem);
        }
        let full = Search::default().solve(&problem, &SolveOptions::default());
        let alone = Search::default().solve(&positive(&problem), &SolveOptions::default());
        prop_assert_eq!(full.is_ok(), alone.is_ok() && zero_end <= capacity);
    }
}
