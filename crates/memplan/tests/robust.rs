//! Every solver on random small problems with fixed and aligned buffers,
//! capacities and time limits (issue 14): no panic, every plan valid and
//! within the capacity, every proof of optimality or infeasibility true
//! (checked against an exhaustive search that honours fixed buffers).

use std::time::Duration;

use memplan::{
    validate, Buffer, NotFoundReason, Problem, SolveError, SolveOptions, Solver, Stopped,
};
use proptest::prelude::*;

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// The smallest makespan of any valid plan, by exhaustive search: free
/// buffers are placed in increasing offset, each on the floor (0) or on top
/// of a buffer it overlaps in time (fixed or already placed), aligned up.
/// Every plan can be pushed down into that form, so this is exact.
fn optimum(p: &Problem) -> u64 {
    let b = p.buffers();
    let fixed: Vec<(usize, u64)> = b
        .iter()
        .enumerate()
        .filter_map(|(i, x)| x.fixed_offset.map(|o| (i, o)))
        .collect();
    let free: Vec<usize> = (0..b.len())
        .filter(|&i| b[i].fixed_offset.is_none())
        .collect();
    fn go(
        b: &[Buffer],
        free: &[usize],
        placed: &mut Vec<(usize, u64)>,
        done: &mut Vec<bool>,
        best: &mut u64,
    ) {
        if done.iter().all(|&d| d) {
            let m = placed
                .iter()
                .map(|&(i, o)| o + b[i].size)
                .max()
                .unwrap_or(0);
            *best = (*best).min(m);
            return;
        }
        for (k, &i) in free.iter().enumerate() {
            if done[k] {
                continue;
            }
            let x = &b[i];
            let mut candidates: Vec<u64> = placed
                .iter()
                .filter(|&&(j, _)| b[j].overlaps_in_time(x))
                .map(|&(j, o)| align_up(o + b[j].size, x.alignment))
                .collect();
            candidates.push(0);
            candidates.sort_unstable();
            candidates.dedup();
            for o in candidates {
                let clash = placed.iter().any(|&(j, oj)| {
                    b[j].overlaps_in_time(x) && o < oj + b[j].size && oj < o + x.size
                });
                if clash || o + x.size >= *best {
                    continue;
                }
                placed.push((i, o));
                done[k] = true;
                go(b, free, placed, done, best);
                done[k] = false;
                placed.pop();
            }
        }
    }
    let mut placed = fixed.clone();
    let mut best = u64::MAX;
    go(
        b,
        &free,
        &mut placed,
        &mut vec![false; free.len()],
        &mut best,
    );
    best
}

/// Small problems: up to 6 buffers, some aligned, some fixed (fixed ones
/// never overlap each other, as the problem requires).
fn problems() -> impl Strategy<Value = Problem> {
    prop::collection::vec(
        (
            0u64..6,
            1u64..4,
            1u64..9,
            prop::sample::select(vec![1u64, 1, 2, 4]),
            0u64..4,
            0u64..12,
        ),
        1..7,
    )
    .prop_map(|rows| {
        let mut buffers: Vec<Buffer> = Vec::new();
        for (i, (start, len, size, align, fix, offset)) in rows.into_iter().enumerate() {
            let mut b = Buffer::new(format!("b{i}"), start, start + len, size).aligned(align);
            if fix == 0 {
                let o = align_up(offset, align);
                let clash = buffers.iter().any(|c| {
                    c.fixed_offset.is_some_and(|co| {
                        c.overlaps_in_time(&b) && o < co + c.size && co < o + b.size
                    })
                });
                if !clash {
                    b = b.fixed(o);
                }
            }
            buffers.push(b);
        }
        Problem::new(buffers, None).unwrap()
    })
}

/// Every solver: each greedy variant, search, boxing, tela and auto.
fn solvers() -> Vec<Box<dyn Solver>> {
    memplan::solvers::every()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn every_solver_is_sound_on_small_problems(
        problem in problems(),
        slack in prop::sample::select(vec![None, Some(0i64), Some(-1), Some(1), Some(4), Some(-6)]),
        limit in prop::sample::select(vec![None, Some(0u64), Some(1), Some(50)]),
        seed in 0u64..4,
    ) {
        let best = optimum(&problem);
        let capacity = slack.map(|s| (best as i64 + s).max(0) as u64);
        let problem = problem.with_capacity(capacity);
        let options = SolveOptions {
            time_limit: limit.map(Duration::from_millis),
            seed,
            ..SolveOptions::default()
        };
        for solver in solvers() {
            let name = solver.name();
            // Nothing raises a cancel flag here; without a limit of the
            // caller's (auto has one of its own by default) no clock can
            // be said to have stopped a solver.
            let clock_free = limit.is_none() && name != "auto";
            match solver.solve(&problem, &options) {
                Ok(s) => {
                    prop_assert!(s.stopped != Some(Stopped::Interrupted), "{}", name);
                    prop_assert!(!clock_free || s.stopped.is_none(), "{}: {:?}", name, s.stopped);
                    prop_assert!(validate(&problem, &s.plan).is_ok(), "{}: {:?}", name, validate(&problem, &s.plan));
                    prop_assert_eq!(s.makespan, s.plan.makespan(&problem), "{}", name);
                    prop_assert!(s.lower_bound <= best, "{}: bound {} > optimum {}", name, s.lower_bound, best);
                    prop_assert!(s.makespan >= best, "{}", name);
                    prop_assert!(!s.optimal || s.makespan == best, "{}: claims optimal {} but optimum is {}", name, s.makespan, best);
                    if let Some(c) = capacity {
                        prop_assert!(s.makespan <= c, "{}", name);
                    }
                }
                Err(SolveError::NotFound { capacity: c, reason, .. }) => {
                    prop_assert_eq!(Some(c), capacity, "{}", name);
                    prop_assert!(reason != NotFoundReason::Interrupted, "{}", name);
                    prop_assert!(!clock_free || reason != NotFoundReason::TimeLimit, "{}: {:?}", name, reason);
                    if reason == NotFoundReason::ProvenInfeasible {
                        prop_assert!(best > c, "{}: claims infeasible at {} but optimum is {}", name, c, best);
                    }
                }
            }
        }
    }
}
