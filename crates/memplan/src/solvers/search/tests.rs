//! Tests of the search on small instances, every plan validated.

use super::counters::Counters;
use super::group::Groups;
use super::*;
use crate::plan::{validate, Plan};
use crate::problem::Buffer;
use crate::solver::Probe;
use proptest::prelude::*;
use std::sync::atomic::Ordering;

/// The paper's running example (Figure 2): five buffers, capacity 12.
fn running_example() -> Problem {
    let b = |id: &str, s, e| Buffer::new(id, s, e, 4);
    Problem::new(
        vec![
            b("b1", 0, 3),
            b("b2", 3, 9),
            b("b3", 0, 9),
            b("b4", 9, 21),
            b("b5", 0, 21),
        ],
        None,
    )
    .unwrap()
}

/// Decides `problem` at `capacity` with the search alone (no greedy).
fn decide(problem: &Problem, capacity: u64, options: &SearchOptions) -> (Probe, Counters) {
    let mut effort = Counters::default();
    let groups = Groups::new(problem, options.decompose, &Stop::default()).unwrap();
    (
        groups.decide(capacity, options, &Stop::default(), u64::MAX, &mut effort),
        effort,
    )
}

/// The five buffers of the module doc's canonical-placement example
/// (those of the sweep's example): fits 4 with the offsets drawn, not 3.
#[test]
fn canonical_example_of_the_module_doc() {
    let b = |id: &str, s, e, size| Buffer::new(id, s, e, size);
    let p = Problem::new(
        vec![
            b("b0", 0, 3, 2),
            b("b1", 1, 4, 1),
            b("b2", 3, 6, 2),
            b("b3", 6, 8, 3),
            b("b4", 7, 9, 1),
        ],
        None,
    )
    .unwrap();
    for preorder in Preorder::ALL {
        let options = SearchOptions {
            preorders: vec![preorder],
            ..Default::default()
        };
        let Probe::Fits(plan) = decide(&p, 4, &options).0 else {
            panic!("{preorder:?}")
        };
        assert_eq!(plan.offsets(), [0, 2, 0, 0, 3], "{preorder:?}");
        assert_eq!(decide(&p, 3, &options).0, Probe::Infeasible, "{preorder:?}");
    }
}

#[test]
fn running_example_fits_12_and_not_11() {
    let p = running_example();
    for options in [
        SearchOptions::default(),
        SearchOptions {
            decompose: false,
            ..Default::default()
        },
    ] {
        let (d, effort) = decide(&p, 12, &options);
        let Probe::Fits(plan) = d else {
            panic!("{d:?}")
        };
        validate(&p.clone().with_capacity(Some(12)), &plan).unwrap();
        assert!(effort.nodes >= 1);
        assert_eq!(decide(&p, 11, &options).0, Probe::Infeasible);
    }
    // Through the solver interface.
    let s = Search::default()
        .solve(&p, &SolveOptions::default())
        .unwrap();
    assert_eq!((s.makespan, s.lower_bound, s.optimal), (12, 12, true));
    let err = Search::default().solve(&p.clone().with_capacity(Some(11)), &SolveOptions::default());
    assert!(matches!(
        err,
        Err(SolveError::NotFound {
            reason: NotFoundReason::ProvenInfeasible,
            ..
        })
    ));
}

#[test]
fn every_ablation_still_decides_the_example() {
    let p = running_example();
    let all = SearchOptions::default();
    let variants = [
        SearchOptions {
            canonical: false,
            ..all.clone()
        },
        SearchOptions {
            section_inference: false,
            ..all.clone()
        },
        SearchOptions {
            effective_height: false,
            ..all.clone()
        },
        SearchOptions {
            dominance: false,
            ..all.clone()
        },
        SearchOptions {
            dynamic_order: false,
            ..all.clone()
        },
        SearchOptions {
            preorders: vec![Preorder::Wat],
            ..all.clone()
        },
        SearchOptions {
            hatless: false,
            ..all.clone()
        },
        SearchOptions {
            decompose: false,
            ..all.clone()
        },
        SearchOptions {
            schedule: Schedule::RoundRobin,
            ..all.clone()
        },
        SearchOptions {
            rerank_parts: false,
            ..all.clone()
        },
    ];
    for options in variants {
        assert!(
            matches!(decide(&p, 12, &options).0, Probe::Fits(_)),
            "{options:?}"
        );
        assert_eq!(decide(&p, 11, &options).0, Probe::Infeasible, "{options:?}");
    }
}

#[test]
fn time_limit_gives_unknown_not_a_wrong_answer() {
    let g = crate::generate::generate(crate::generate::Kind::Random, 60, 1).problem;
    let load = g.max_load();
    let options = SolveOptions {
        time_limit: Some(Duration::from_millis(50)),
        ..SolveOptions::default()
    };
    let started = std::time::Instant::now();
    match Search::default().solve(&g.clone().with_capacity(Some(load)), &options) {
        Ok(s) => validate(&g.with_capacity(Some(load)), &s.plan).unwrap(),
        Err(SolveError::NotFound { reason, .. }) => {
            assert!(matches!(
                reason,
                NotFoundReason::TimeLimit | NotFoundReason::ProvenInfeasible
            ))
        }
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// Two independent halves joined by nothing: the search splits them
/// (§7) and the plan is the same in every run (lockstep preorders).
#[test]
fn lockstep_search_is_deterministic_and_splits_independent_parts() {
    let g = crate::generate::generate(crate::generate::Kind::Perfect, 120, 3).problem;
    let load = g.max_load();
    let runs: Vec<(Probe, Counters)> = (0..3)
        .map(|_| decide(&g, load, &SearchOptions::default()))
        .collect();
    let Probe::Fits(plan) = &runs[0].0 else {
        panic!("{:?}", runs[0].0)
    };
    validate(&g.clone().with_capacity(Some(load)), plan).unwrap();
    assert!(runs.iter().all(|r| r == &runs[0]));
}

/// The lockstep answer and effort do not depend on how fast each
/// search runs: searches slowed at some meetings (as on a busy
/// machine) give the same plan and the same counts.
#[test]
fn lockstep_answer_does_not_depend_on_thread_timing() {
    let g = crate::generate::generate(crate::generate::Kind::Challenging, 60, 4).problem;
    let capacity = g.capacity.unwrap();
    let groups = Groups::new(&g, true, &Stop::default()).unwrap();
    let group = groups.groups.iter().max_by_key(|g| g.size.len()).unwrap();
    let options = SearchOptions::default();
    let run = |pause: &(dyn Fn(usize, u64) + Sync), limit: u64| {
        let mut counters = Counters::default();
        let d = group.decide_in_lockstep(
            capacity,
            &options,
            &options.preorders,
            &Stop::default(),
            limit,
            &mut counters,
            pause,
        );
        (d, counters)
    };
    let sleep = |micros: u64| std::thread::sleep(Duration::from_micros(micros));
    let pauses: [&(dyn Fn(usize, u64) + Sync); 4] = [
        &|_, _| {},
        &|search, _| sleep(300 * search as u64),
        &|search, meeting| {
            if (search as u64 + meeting) % 2 == 0 {
                sleep(500)
            }
        },
        &|search, _| {
            if search == 0 {
                sleep(1000)
            }
        },
    ];
    for limit in [u64::MAX, 3000] {
        let expected = run(pauses[0], limit);
        assert!(expected.1.steps > 256, "{:?}", expected.1);
        for pause in &pauses[1..] {
            assert_eq!(run(*pause, limit), expected, "limit {limit}");
        }
        if limit == u64::MAX {
            assert!(matches!(expected.0, Probe::Fits(_)), "{:?}", expected.0);
        } else {
            assert_eq!(expected.0, Probe::Unknown);
        }
    }
}

/// With a work budget the whole solver gives the same plan whether or
/// not other threads compete for the cores.
#[test]
fn effort_budget_gives_the_same_plan_under_load() {
    use std::sync::atomic::AtomicBool;
    let p = crate::generate::generate(crate::generate::Kind::Challenging, 100, 5).problem;
    let options = SolveOptions {
        effort: Effort::new(0.05),
        ..SolveOptions::default()
    };
    let search = Search::default();
    let solve = || match search.solve(&p, &options) {
        Ok(s) => (Some(s.plan), s.counters),
        Err(SolveError::NotFound { counters, .. }) => (None, counters),
    };
    let alone = solve();
    let stop = AtomicBool::new(false);
    let busy = std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            });
        }
        let runs = [solve(), solve()];
        stop.store(true, Ordering::Relaxed);
        runs
    });
    assert_eq!(busy[0], alone);
    assert_eq!(busy[1], alone);
    if let (Some(plan), _) = &alone {
        validate(&p, plan).unwrap();
    }
}

#[test]
fn minimising_rounds_capacities_to_the_granularity() {
    // Sizes are multiples of 4: from a weak lower bound (1) and a plan
    // of makespan 20, the optimum 12 is found and proven by asking only
    // multiples of 4 (never 11, 10 or 9).
    let p = running_example();
    assert_eq!(p.granularity(), 4);
    let mut asked = Vec::new();
    let s = crate::solver::minimise(
        &p,
        Plan::from_offsets(vec![0, 4, 8, 12, 16]).into(),
        1,
        &Stop::default(),
        &crate::solver::Progress::default(),
        |c, _| {
            asked.push(c);
            decide(&p, c, &SearchOptions::default()).0
        },
    );
    assert_eq!((s.makespan, s.lower_bound, s.optimal), (12, 12, true));
    assert_eq!(asked, vec![4, 12, 8]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Beyond brute-force sizes: the pruning that is not in the paper
    /// (hatless, dynamic decomposition, the child cutoff through eq. 3)
    /// never changes an answer of the plain search.
    #[test]
    fn extra_pruning_agrees_with_the_plain_search(
        spec in proptest::collection::vec((0u64..30, 1u64..12, 1u64..9), 10..16),
        slack in 0u64..3,
    ) {
        let buffers = spec
            .iter()
            .enumerate()
            .map(|(i, &(s, len, size))| Buffer::new(format!("b{i}"), s, s + len, size))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let capacity = p.max_load() + slack;
        let plain = SearchOptions {
            hatless: false,
            decompose: false,
            preorders: vec![Preorder::Twa],
            ..SearchOptions::default()
        };
        let expected = decide(&p, capacity, &plain).0;
        let got = decide(&p, capacity, &SearchOptions::default()).0;
        prop_assert_eq!(
            matches!(expected, Probe::Fits(_)),
            matches!(got, Probe::Fits(_))
        );
        if let Probe::Fits(plan) = got {
            prop_assert_eq!(
                validate(&p.clone().with_capacity(Some(capacity)), &plan),
                Ok(())
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    /// Any combination of the switches decides as the plain search
    /// does, and its plans pass the validator.
    #[test]
    fn every_combination_of_switches_agrees(
        spec in proptest::collection::vec((0u64..24, 1u64..10, 1u64..9), 6..14),
        slack in 0u64..3,
        switches in proptest::collection::vec(any::<bool>(), 10),
        preorders in proptest::sample::subsequence(Preorder::ALL.to_vec(), 1..=4),
    ) {
        let buffers = spec
            .iter()
            .enumerate()
            .map(|(i, &(s, len, size))| Buffer::new(format!("b{i}"), s, s + len, size))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let capacity = p.max_load() + slack;
        let plain = SearchOptions {
            hatless: false,
            decompose: false,
            rerank_parts: false,
            exact_fill: false,
            preorders: vec![Preorder::Twa],
            ..SearchOptions::default()
        };
        let options = SearchOptions {
            canonical: switches[0],
            section_inference: switches[1],
            effective_height: switches[2],
            dominance: switches[3],
            dynamic_order: switches[4],
            decompose: switches[5],
            rerank_parts: switches[6],
            hatless: switches[7],
            exact_fill: switches[9],
            schedule: if switches[8] { Schedule::Lockstep } else { Schedule::RoundRobin },
            preorders,
            warm_start: None,
        };
        let expected = decide(&p, capacity, &plain).0;
        let got = decide(&p, capacity, &options).0;
        prop_assert_eq!(
            matches!(expected, Probe::Fits(_)),
            matches!(got, Probe::Fits(_)),
            "{:?}", options
        );
        prop_assert_eq!(
            expected == Probe::Infeasible,
            got == Probe::Infeasible,
            "{:?}", options
        );
        if let Probe::Fits(plan) = got {
            prop_assert_eq!(
                validate(&p.clone().with_capacity(Some(capacity)), &plan),
                Ok(())
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn minimised_capacity_is_the_brute_force_optimum(
        spec in proptest::collection::vec((0u64..12, 1u64..8, 1u64..9, 0u32..3), 0..8)
    ) {
        let buffers = spec
            .iter()
            .enumerate()
            .map(|(i, &(s, len, size, a))| Buffer::new(format!("b{i}"), s, s + len, size).aligned(1 << a))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let s = Search::default().solve(&p, &SolveOptions::default()).unwrap();
        prop_assert_eq!(validate(&p, &s.plan), Ok(()));
        prop_assert!(s.optimal);
        prop_assert_eq!(s.makespan, crate::testutil::brute_force(&p));
        // The search alone, at the optimum and one below.
        let opt = s.makespan;
        let all = SearchOptions::default();
        let variants = [
            all.clone(),
            SearchOptions { hatless: false, ..all.clone() },
            SearchOptions { decompose: false, ..all.clone() },
            SearchOptions { preorders: vec![Preorder::Area], ..all.clone() },
            SearchOptions { schedule: Schedule::RoundRobin, ..all.clone() },
            SearchOptions { rerank_parts: false, ..all.clone() },
            SearchOptions { effective_height: false, dominance: false, ..all.clone() },
        ];
        for options in &variants {
            let d = decide(&p, opt, options).0;
            let Probe::Fits(plan) = d else {
                return Err(TestCaseError::fail(format!("{options:?}: {d:?}")));
            };
                prop_assert_eq!(validate(&p.clone().with_capacity(Some(opt)), &plan), Ok(()));
            if opt > 0 {
                prop_assert_eq!(decide(&p, opt - 1, options).0, Probe::Infeasible, "{:?}", options);
            }
        }
    }
}

/// Two buffers alive together, sizes 4 and 4, and a plan of them.
fn pair_and(offsets: [u64; 2]) -> (Problem, Plan) {
    let p = Problem::new(
        vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 0, 2, 4)],
        None,
    )
    .unwrap();
    (p, Plan::from_offsets(offsets.to_vec()))
}

fn minimise_from(problem: &Problem, warm_start: Option<Plan>) -> Plan {
    let search = Search {
        options: SearchOptions {
            warm_start,
            ..SearchOptions::default()
        },
    };
    let s = search.solve(problem, &SolveOptions::default()).unwrap();
    validate(problem, &s.plan).unwrap();
    s.plan
}

#[test]
fn an_optimal_warm_start_is_returned_as_is() {
    // The greedy plan puts `a` below `b`; the warm start, as good, the
    // other way round.
    let (p, warm) = pair_and([4, 0]);
    assert_eq!(minimise_from(&p, None).offsets(), &[0, 4]);
    assert_eq!(minimise_from(&p, Some(warm.clone())), warm);
}

#[test]
fn a_poor_warm_start_is_improved_and_an_invalid_one_passed_over() {
    let (p, poor) = pair_and([0, 8]);
    assert_eq!(minimise_from(&p, Some(poor)).makespan(&p), 8);
    let (p, overlapping) = pair_and([0, 0]);
    assert_eq!(minimise_from(&p, Some(overlapping)).offsets(), &[0, 4]);
    let short = Plan::from_offsets(vec![4]);
    assert_eq!(minimise_from(&p, Some(short)).offsets(), &[0, 4]);
}

/// A search cut by the clock reports the default greedy variant's
/// makespan, not that of a plan computed after the deadline (which stacks
/// the buffers: 7,328,768 on challenging D at its max load, against the
/// default variant's 1,291,264).
#[test]
fn a_search_cut_by_the_clock_reports_the_greedy_makespan() {
    use crate::generate::{generate, Kind};
    use crate::solvers::greedy::Greedy;
    // An instance the search does not decide within the 50 ms limit on
    // an ordinary machine; a faster one may decide it (handled below).
    let p = generate(Kind::Challenging, 120, 3)
        .problem
        .with_capacity(None);
    let capacity = p.max_load();
    let best = Greedy::default()
        .solve(&p, &SolveOptions::default())
        .unwrap()
        .makespan;
    assert!(best > capacity);
    let options = SolveOptions {
        time_limit: Some(std::time::Duration::from_millis(50)),
        ..SolveOptions::default()
    };
    match Search::default().solve(&p.clone().with_capacity(Some(capacity)), &options) {
        Err(SolveError::NotFound {
            reason: NotFoundReason::TimeLimit,
            best_makespan,
            ..
        }) => assert_eq!(best_makespan, Some(best)),
        // A machine fast enough to decide it: then the answer is sound.
        Ok(s) => {
            assert_eq!(validate(&p, &s.plan), Ok(()));
            assert!(s.makespan <= capacity);
        }
        Err(e) => assert!(
            matches!(
                e,
                SolveError::NotFound {
                    reason: NotFoundReason::ProvenInfeasible,
                    ..
                }
            ),
            "{e}"
        ),
    }
}
