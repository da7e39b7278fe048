//! Hints (preferred offsets) and stable plans: the `hint` column, solvers
//! trying hints first, and `solve_stable` keeping hints at the best
//! makespan. Every plan is checked by the validator.

use std::path::Path;
use std::time::Duration;

use memplan::generate::{generate, Kind};
use memplan::hints;
use memplan::solvers::auto::Auto;
use memplan::solvers::greedy::{Fit, Greedy, Order};
use memplan::stable::{solve_stable, StableOptions};
use memplan::{validate, Buffer, Lifetimes, Problem, ProblemError, SolveOptions, Solver};
use proptest::prelude::*;

fn read(text: &str) -> Result<Problem, String> {
    memplan::problem::read_problem_from(text.as_bytes(), Path::new("in.csv"), Lifetimes::HalfOpen)
        .map_err(|e| e.to_string())
}

fn options(ms: u64) -> SolveOptions {
    SolveOptions {
        time_limit: Some(Duration::from_millis(ms)),
        ..SolveOptions::default()
    }
}

/// Every solver: each greedy variant, search, boxing, tela and auto.
fn solvers() -> Vec<Box<dyn Solver>> {
    memplan::solvers::every()
}

/// `problem` with `offsets` as its hints.
fn hinted(problem: &Problem, offsets: &[u64]) -> Problem {
    let hints: Vec<Option<u64>> = offsets.iter().map(|&o| Some(o)).collect();
    problem.clone().with_hints(&hints).unwrap()
}

#[test]
fn reads_minimalloc_hint_column() {
    let p = read("id,lower,upper,size,alignment,hint\na,0,4,8,4,16\nb,1,3,8,1,-1\nc,2,5,4,2,\n")
        .unwrap();
    let h: Vec<Option<u64>> = p.indices().map(|b| p.hint(b)).collect();
    assert_eq!(h, [Some(16), None, None]);
    assert_eq!(hints::count(&p), 1);
    // A column of -1 only: no hint table at all.
    let none = read("id,lower,upper,size,hint\na,0,4,8,-1\n").unwrap();
    assert!(none.hints().is_none());
    // Written back with the column (-1 for none) and read the same.
    let mut out = Vec::new();
    memplan::problem::write_problem(&mut out, &p, Lifetimes::HalfOpen).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "id,lower,upper,size,alignment,hint\na,0,4,8,4,16\nb,1,3,8,1,-1\nc,2,5,4,2,-1\n"
    );
    assert_eq!(read(&text).unwrap(), p);
}

#[test]
fn bad_hints_are_located() {
    let head = "id,lower,upper,size,alignment,offset,hint\n";
    let err = |row: &str| read(&format!("{head}a,0,4,8,1,,0\n{row}\n")).unwrap_err();
    assert_eq!(
        err("b,0,4,8,1,,-2"),
        "in.csv:3: column `hint`: expected an offset or -1 (no hint), got `-2`"
    );
    assert_eq!(
        err("b,0,4,8,1,,x"),
        "in.csv:3: column `hint`: expected an offset or -1 (no hint), got `x`"
    );
    assert_eq!(
        err("b,0,4,8,8,,12"),
        "in.csv:3: column `hint`: hint 12 is not a multiple of alignment 8"
    );
    assert_eq!(
        err("b,0,4,8,1,16,8"),
        "in.csv:3: column `hint`: hint 8 differs from the fixed offset 16"
    );
    assert_eq!(
        err("b,0,4,8,1,,18446744073709551610"),
        "in.csv:3: column `hint`: hint 18446744073709551610 is too large: with the sizes (and alignment padding and fixed offsets) addresses could overflow 64 bits"
    );
    // The same hint as the fixed offset is fine.
    read(&format!("{head}a,0,4,8,1,16,16\n")).unwrap();
    // Through the API: by buffer index.
    let p = Problem::new(vec![Buffer::new("a", 0, 2, 4).aligned(4)], None).unwrap();
    assert_eq!(
        p.clone().with_hints(&[Some(2)]),
        Err(ProblemError::MisalignedHint {
            buffer: memplan::BufferIdx(0),
            hint: 2,
            alignment: 4
        })
    );
    assert_eq!(
        p.with_hints(&[]),
        Err(ProblemError::HintCount {
            expected: 1,
            got: 0
        })
    );
}

#[test]
fn hints_are_refused_with_pools() {
    let pools = [memplan::pools::Pool::new("fast", 64)];
    let err = memplan::pools::read_pool_problem_from(
        b"id,lower,upper,size,hint\na,0,4,8,0\n",
        Path::new("in.csv"),
        Lifetimes::HalfOpen,
        &pools,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "in.csv:1: column `hint`: hints are not supported with pools (yet): remove the `hint` column"
    );
}

#[test]
fn greedy_tries_a_free_hint_first() {
    // First fit would put `a` at 0 and `b` at 8; the hints swap them.
    let p = Problem::new(
        vec![Buffer::new("a", 0, 4, 8), Buffer::new("b", 1, 3, 8)],
        None,
    )
    .unwrap();
    let p = p.with_hints(&[Some(8), Some(0)]).unwrap();
    for fit in [Fit::FirstFit, Fit::BestFit] {
        let g = Greedy {
            order: Order::Size,
            fit,
        };
        let s = g.solve(&p, &SolveOptions::default()).unwrap();
        assert_eq!(s.plan.offsets(), &[8, 0], "{}", g.name());
        assert_eq!(hints::kept(&p, &s.plan), 2);
        let bare = SolveOptions {
            ignore_hints: true,
            ..SolveOptions::default()
        };
        let s = g.solve(&p, &bare).unwrap();
        assert_eq!(s.plan.offsets(), &[0, 8], "{}: hints ignored", g.name());
    }
    // A hint that is taken is passed over: `b` wants `a`'s place.
    let p = Problem::new(
        vec![Buffer::new("a", 0, 4, 8), Buffer::new("b", 1, 3, 8)],
        None,
    )
    .unwrap()
    .with_hints(&[None, Some(4)])
    .unwrap();
    let s = Greedy::default()
        .solve(&p, &SolveOptions::default())
        .unwrap();
    assert_eq!(s.plan.offsets(), &[0, 8]);
    // Past the capacity, a hint is not taken either.
    let p = Problem::new(vec![Buffer::new("a", 0, 4, 8)], Some(8))
        .unwrap()
        .with_hints(&[Some(4)])
        .unwrap();
    let s = Greedy::default()
        .solve(&p, &SolveOptions::default())
        .unwrap();
    assert_eq!(s.plan.offsets(), &[0]);
}

#[test]
fn greedy_reproduces_any_valid_plan_given_as_hints() {
    // A valid plan's offsets are all free when tried first: every greedy
    // variant but the skyline (which ignores hints) gives the same plan,
    // on both placement paths (sorted conflicts and the dense time tree).
    for (kind, n) in [
        (Kind::Random, 600),
        (Kind::Layered, 500),
        (Kind::Trace, 800),
    ] {
        let p = generate(kind, n, 7).problem;
        // A plan unlike greedy's: start order, best fit.
        let other = Greedy {
            order: Order::Start,
            fit: Fit::BestFit,
        }
        .solve(&p, &SolveOptions::default())
        .unwrap();
        let h = hinted(&p, other.plan.offsets());
        for g in Greedy::all().filter(|g| g.fit != Fit::Skyline) {
            let s = g.solve(&h, &SolveOptions::default()).unwrap();
            assert_eq!(s.plan, other.plan, "{} on {}", g.name(), kind.name());
        }
    }
    // Dense: buffers all alive together (the time tree's path).
    let buffers: Vec<Buffer> = (0..400u64)
        .map(|i| Buffer::new(format!("b{i}"), i % 7, 1000 + i % 5, 1 + i % 13))
        .collect();
    let p = Problem::new(buffers, None).unwrap();
    let other = Greedy {
        order: Order::Lifetime,
        fit: Fit::BestFit,
    }
    .solve(&p, &SolveOptions::default())
    .unwrap();
    let h = hinted(&p, other.plan.offsets());
    let s = Greedy::default()
        .solve(&h, &SolveOptions::default())
        .unwrap();
    assert_eq!(s.plan, other.plan);
}

#[test]
fn stable_keeps_every_hint_of_its_own_plan_at_the_same_makespan() {
    for (kind, seed) in [(Kind::Random, 1), (Kind::Layered, 2), (Kind::Trace, 3)] {
        let p = generate(kind, 300, seed).problem;
        let first = Auto::default().solve(&p, &options(300)).unwrap();
        let h = hinted(&p, first.plan.offsets());
        let stable = solve_stable(
            &Auto::default(),
            &h,
            &options(300),
            &StableOptions {
                makespan: Some(first.makespan),
            },
        )
        .unwrap();
        assert_eq!(validate(&h, &stable.solution.plan), Ok(()));
        assert_eq!(stable.hints, 300);
        assert_eq!(stable.kept, 300, "{}", kind.name());
        assert_eq!(stable.bound, 300);
        assert_eq!(stable.solution.plan, first.plan);
        assert!(stable.solution.makespan <= first.makespan);
        // Without a given makespan: the best found, at most the same.
        let again = solve_stable(
            &Auto::default(),
            &h,
            &options(300),
            &StableOptions::default(),
        )
        .unwrap();
        assert_eq!(validate(&h, &again.solution.plan), Ok(()));
        assert!(again.solution.makespan <= first.makespan);
        assert!(again.kept >= again.kept_by_solver);
        if again.solution.makespan == first.makespan {
            assert_eq!(again.kept, 300, "{}", kind.name());
        }
    }
}

/// `problem` with buffer `b` grown by `extra` bytes.
fn grow(problem: &Problem, b: usize, extra: u64) -> Problem {
    let mut buffers = problem.buffers().to_vec();
    buffers[b].size += extra;
    Problem::new(buffers, None).unwrap()
}

#[test]
fn small_change_keeps_most_hints() {
    for (kind, seed) in [(Kind::Random, 11), (Kind::Layered, 12), (Kind::Trace, 13)] {
        let p = generate(kind, 300, seed).problem;
        let old = Auto::default().solve(&p, &options(200)).unwrap();
        // The buffer in the middle of the list grows by half its size.
        let b = 150;
        let extra = p.buffers()[b].size / 2 + 1;
        let changed = grow(&p, b, extra);
        let h = hinted(&changed, old.plan.offsets());
        let check = |s: &memplan::stable::StableSolution| {
            assert_eq!(validate(&h, &s.solution.plan), Ok(()));
            assert_eq!(s.kept, hints::kept(&h, &s.solution.plan));
            assert!(s.kept <= s.bound);
            assert!(s.kept >= s.kept_by_solver);
            assert!(s.solution.makespan <= s.target);
        };
        // At the best makespan found: on the random instance it is the max
        // load (a perfect packing, which leaves little choice), elsewhere
        // one buffer moves.
        let best = solve_stable(
            &Auto::default(),
            &h,
            &options(400),
            &StableOptions::default(),
        )
        .unwrap();
        check(&best);
        if kind != Kind::Random {
            assert!(best.kept >= 295, "{}: {} kept", kind.name(), best.kept);
        }
        // Within the old makespan plus the grown buffer: room to put it on
        // top, so all hints but one can be kept, and the bound says so.
        let roomy = StableOptions {
            makespan: Some(old.makespan + changed.buffers()[b].size),
        };
        let s = solve_stable(&Auto::default(), &h, &options(400), &roomy).unwrap();
        check(&s);
        assert!(s.kept >= 295, "{}: {} kept", kind.name(), s.kept);
        assert!(s.bound <= 299, "{}: two hints overlap", kind.name());
    }
}

#[test]
fn stable_within_a_given_makespan() {
    // a and b both want offset 0 at the same time: one must move; the
    // bound says so.
    let p = Problem::new(
        vec![
            Buffer::new("a", 0, 4, 8),
            Buffer::new("b", 1, 3, 8),
            Buffer::new("c", 4, 6, 16),
        ],
        None,
    )
    .unwrap()
    .with_hints(&[Some(0), Some(0), Some(8)])
    .unwrap();
    let s = solve_stable(
        &Greedy::default(),
        &p,
        &SolveOptions::default(),
        &StableOptions { makespan: Some(24) },
    )
    .unwrap();
    assert_eq!(validate(&p, &s.solution.plan), Ok(()));
    assert_eq!(s.target, 24);
    assert_eq!((s.hints, s.kept, s.bound), (3, 2, 2));
    assert!(s.solution.makespan <= 24);
    // Within 16, c's hint (8 + 16) is out of reach: at most one kept.
    let s = solve_stable(
        &Greedy::default(),
        &p,
        &SolveOptions::default(),
        &StableOptions { makespan: Some(16) },
    )
    .unwrap();
    assert_eq!(validate(&p, &s.solution.plan), Ok(()));
    assert_eq!((s.kept, s.bound), (1, 1));
    // Below the max load: no plan.
    assert!(solve_stable(
        &Greedy::default(),
        &p,
        &SolveOptions::default(),
        &StableOptions { makespan: Some(15) },
    )
    .is_err());
}

/// Small random problems with random (aligned) hints on some buffers.
fn problems() -> impl Strategy<Value = Problem> {
    prop::collection::vec(
        (
            0u64..12,
            1u64..6,
            0u64..9,
            prop::sample::select(vec![1u64, 1, 2, 4]),
            prop::option::weighted(0.7, 0u64..24),
        ),
        1..9,
    )
    .prop_map(|rows| {
        let buffers = rows
            .iter()
            .enumerate()
            .map(|(i, &(start, len, size, align, _))| {
                Buffer::new(format!("b{i}"), start, start + len, size).aligned(align)
            })
            .collect();
        let hints: Vec<Option<u64>> = rows
            .iter()
            .map(|&(_, _, _, align, h)| h.map(|h| h / align * align))
            .collect();
        Problem::new(buffers, None)
            .unwrap()
            .with_hints(&hints)
            .unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_solver_gives_valid_plans_with_hints(problem in problems(), seed in 0u64..3) {
        let options = SolveOptions { seed, ..options(20) };
        for solver in solvers() {
            let s = solver.solve(&problem, &options).unwrap();
            prop_assert_eq!(validate(&problem, &s.plan), Ok(()), "{}", solver.name());
            prop_assert_eq!(s.makespan, s.plan.makespan(&problem));
        }
    }

    #[test]
    fn stable_plans_are_valid_and_bounded(
        problem in problems(),
        slack in prop::sample::select(vec![None, Some(0u64), Some(3), Some(40)]),
    ) {
        let stable = StableOptions {
            makespan: slack.map(|s| problem.max_load() + s),
        };
        for solver in [Box::new(Greedy::default()) as Box<dyn Solver>, Box::new(Auto::default())] {
            match solve_stable(solver.as_ref(), &problem, &options(20), &stable) {
                Ok(s) => {
                    prop_assert_eq!(validate(&problem, &s.solution.plan), Ok(()));
                    prop_assert!(s.solution.makespan <= s.target);
                    if let Some(m) = stable.makespan {
                        prop_assert_eq!(s.target, m);
                    }
                    prop_assert_eq!(s.kept, hints::kept(&problem, &s.solution.plan));
                    prop_assert!(s.kept >= s.kept_by_solver);
                    prop_assert!(s.kept <= s.bound);
                    prop_assert!(s.bound <= s.hints);
                    prop_assert_eq!(s.hints, hints::count(&problem));
                }
                Err(_) => prop_assert!(stable.makespan.is_some()),
            }
        }
    }
}

/// The figures of docs/benchmarks.md (hints kept): generated instances of 300
/// and 2000 buffers, planned by auto (default effort), the middle buffer
/// grown by half its size, re-planned with `--stable` (default effort;
/// then within the old makespan plus the grown buffer), against auto with
/// the hints ignored. Run with
/// `cargo test --release -p memplan --test hints -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_small_changes() {
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
                eprintln!(
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
