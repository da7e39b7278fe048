//! Pools (issue 19): pinning, capacities, proofs of infeasibility, the
//! spill objective of both strategies against each other and against an
//! exhaustive optimum, every plan checked by the per-pool validator.

use std::time::Duration;

use memplan::pools::{
    bounds::spill_lower_bound, solve_pools, validate_pools, Infeasible, Pool, PoolIdx, PoolPlan,
    PoolProblem, PoolSolveError, Spill, Strategy,
};
use memplan::solvers::search::Search;
use memplan::{Buffer, BufferIdx, NotFoundReason, SolveError, SolveOptions, Solver};
use proptest::prelude::{prop_assert, prop_oneof, proptest, Just, ProptestConfig};
use proptest::strategy::{Strategy as _, ValueTree};

fn options(ms: u64) -> SolveOptions {
    SolveOptions {
        time_limit: Some(Duration::from_millis(ms)),
        ..SolveOptions::default()
    }
}

fn pooled(buffers: Vec<Buffer>, pins: &[Option<u32>], pools: Vec<Pool>) -> PoolProblem {
    PoolProblem::new(
        buffers,
        pins.iter().map(|p| p.map(PoolIdx)).collect(),
        pools,
    )
    .unwrap()
}

/// Solves with `strategy`, checks the plan with the validator and the pins,
/// and returns it.
fn solve_checked(
    problem: &PoolProblem,
    strategy: Strategy,
) -> Result<(PoolPlan, Spill), PoolSolveError> {
    let s = solve_pools(problem, strategy, &options(200))?;
    validate_pools(problem, &s.plan).unwrap_or_else(|e| panic!("{strategy:?}: {e}"));
    for b in problem.indices() {
        if let Some(pin) = problem.pin(b) {
            assert_eq!(s.plan.pool(b), pin, "pinned buffer moved");
        }
    }
    assert_eq!(s.spill, s.plan.spill(problem));
    assert_eq!(s.spill_bound, spill_lower_bound(problem));
    for (got, bound) in s.spill.0.iter().zip(&s.spill_bound.0) {
        assert!(
            got >= bound,
            "spill {:?} below its bound {:?}",
            s.spill,
            s.spill_bound
        );
    }
    Ok((s.plan, s.spill))
}

#[test]
fn pinned_buffers_stay_in_their_pool_even_when_the_fast_one_has_room() {
    // `slow` is pinned to the slow pool although the fast one is empty;
    // `fast` is pinned to the fast one; the free ones share the rest.
    let p = pooled(
        vec![
            Buffer::new("slow", 0, 10, 4),
            Buffer::new("fast", 0, 10, 4),
            Buffer::new("x", 0, 5, 4),
            Buffer::new("y", 5, 10, 4),
            Buffer::new("z", 2, 7, 4),
        ],
        &[Some(1), Some(0), None, None, None],
        vec![Pool::new("fast", 8), Pool::new("slow", 16)],
    );
    for strategy in Strategy::ALL {
        let (plan, spill) = solve_checked(&p, strategy).unwrap();
        assert_eq!(plan.pool(BufferIdx(0)), PoolIdx(1));
        assert_eq!(plan.pool(BufferIdx(1)), PoolIdx(0));
        // `fast` leaves 4 bytes of the fast pool: x and y (area 20 each)
        // fit there one after the other, z (20) overlaps both and spills,
        // with the pinned `slow` (40).
        assert_eq!(spill, Spill(vec![60]), "{strategy:?}");
    }
}

#[test]
fn pool_capacities_and_alignments_hold() {
    // Three pools; the fast one takes 8 bytes at 8-byte alignment.
    let buffers: Vec<Buffer> = (0..12)
        .map(|i| Buffer::new(format!("b{i}"), i % 5, i % 5 + 3, 1 + (i * 7) % 5))
        .collect();
    let p = pooled(
        buffers,
        &[None; 12],
        vec![
            Pool::new("tcm", 8).aligned(8),
            Pool::new("sram", 10).aligned(2),
            Pool::new("dram", 100),
        ],
    );
    for strategy in Strategy::ALL {
        let (plan, _) = solve_checked(&p, strategy).unwrap();
        for b in p.indices() {
            let (pool, offset) = (p.pool(plan.pool(b)), plan.offset(b));
            assert_eq!(offset % pool.alignment, 0);
            assert!(offset + p.buffer(b).size <= pool.capacity);
        }
    }
}

#[test]
fn fixed_buffers_keep_their_offsets_in_their_pools() {
    // Two fixed buffers at the same address in different pools.
    let p = pooled(
        vec![
            Buffer::new("f", 0, 4, 4).fixed(4),
            Buffer::new("g", 0, 4, 4).fixed(4),
            Buffer::new("a", 0, 4, 4),
            Buffer::new("b", 0, 4, 4),
        ],
        &[Some(0), Some(1), None, None],
        vec![Pool::new("fast", 8), Pool::new("slow", 8)],
    );
    for strategy in Strategy::ALL {
        let (plan, spill) = solve_checked(&p, strategy).unwrap();
        assert_eq!(
            (plan.offset(BufferIdx(0)), plan.offset(BufferIdx(1))),
            (4, 4)
        );
        assert_eq!(spill, Spill(vec![32]));
    }
}

#[test]
fn proofs_of_infeasibility() {
    let proof = |p: &PoolProblem| match solve_pools(p, Strategy::Guided, &options(500)) {
        Err(PoolSolveError::Infeasible(proof)) => proof,
        other => panic!("expected a proof, got {other:?}"),
    };
    let two = || vec![Pool::new("fast", 8), Pool::new("slow", 8)];
    // Pinned load over the pool's capacity.
    let p = pooled(
        vec![Buffer::new("a", 0, 4, 5), Buffer::new("b", 3, 6, 4)],
        &[Some(0), Some(0)],
        two(),
    );
    assert!(matches!(
        proof(&p),
        Infeasible::PinnedOverCapacity {
            time: 3,
            load: 9,
            capacity: 8,
            ..
        }
    ));
    // Everything together over all pools (pins aside).
    let p = pooled(
        vec![
            Buffer::new("a", 0, 4, 8),
            Buffer::new("b", 3, 6, 8),
            Buffer::new("c", 3, 4, 1),
        ],
        &[None, None, None],
        two(),
    );
    assert_eq!(
        proof(&p),
        Infeasible::TotalOverCapacity {
            time: 3,
            load: 17,
            capacity: 16
        }
    );
    // A buffer larger than every pool.
    let p = pooled(vec![Buffer::new("a", 0, 4, 9)], &[None], two());
    assert!(matches!(proof(&p), Infeasible::TooLarge { size: 9, .. }));
    // A fixed buffer past its pool.
    let p = pooled(vec![Buffer::new("a", 0, 4, 4).fixed(6)], &[Some(1)], two());
    assert!(matches!(
        proof(&p),
        Infeasible::FixedPastCapacity {
            end: 10,
            capacity: 8,
            ..
        }
    ));
    // The load fits, but the pool's alignment does not: three 1-byte
    // buffers at multiples of 4 need 9 bytes of the 6; the solvers prove it.
    let p = pooled(
        (0..3)
            .map(|i| Buffer::new(format!("b{i}"), 0, 2, 1))
            .collect(),
        &[Some(0), Some(0), Some(0)],
        vec![Pool::new("fast", 6).aligned(4), Pool::new("slow", 100)],
    );
    assert!(matches!(
        proof(&p),
        Infeasible::PinnedUnplaceable { capacity: 6, .. }
    ));
    // The same three buffers unpinned: two in the fast pool, one spills.
    let p = pooled(
        (0..3)
            .map(|i| Buffer::new(format!("b{i}"), 0, 2, 1))
            .collect(),
        &[None, None, None],
        vec![Pool::new("fast", 6).aligned(4), Pool::new("slow", 100)],
    );
    for strategy in Strategy::ALL {
        assert_eq!(solve_checked(&p, strategy).unwrap().1, Spill(vec![2]));
    }
}

#[test]
fn guided_places_everything_where_fastest_first_cannot() {
    // Fastest-first puts the large `a` in the fast pool first; then `b`
    // (pinned to it? no: free) and `c` no longer fit anywhere. Guided
    // keeps `a` out of the fast pool... only when that is what it takes:
    // here the slow pool is too small for `b` + `c` together with `a`
    // gone elsewhere, so the assignment must be a→slow, b,c→fast.
    let p = pooled(
        vec![
            Buffer::new("a", 0, 4, 6),
            Buffer::new("b", 0, 4, 4),
            Buffer::new("c", 0, 4, 4),
        ],
        &[None, None, None],
        vec![Pool::new("fast", 8), Pool::new("slow", 6)],
    );
    assert!(matches!(
        solve_pools(&p, Strategy::FastestFirst, &options(100)),
        Err(PoolSolveError::NotFound {
            reason: NotFoundReason::Heuristic,
            ..
        })
    ));
    let (plan, spill) = solve_checked(&p, Strategy::Guided).unwrap();
    assert_eq!(plan.pools(), &[PoolIdx(1), PoolIdx(0), PoolIdx(0)]);
    assert_eq!(spill, Spill(vec![24]));
}

/// Whether `members` fit in pool `p`: decided by the exact search (no
/// fixed buffers here, so it always decides).
fn fits(problem: &PoolProblem, p: PoolIdx, members: &[BufferIdx]) -> bool {
    if members.is_empty() {
        return true;
    }
    if members.iter().any(|&b| !problem.fits_in(b, p)) {
        return false;
    }
    let sub = problem.sub_problem(p, members).unwrap();
    let options = SolveOptions {
        time_limit: Some(Duration::from_secs(20)),
        ..SolveOptions::default()
    };
    match Search::default().solve(&sub, &options) {
        Ok(_) => true,
        Err(SolveError::NotFound {
            reason: NotFoundReason::ProvenInfeasible,
            ..
        }) => false,
        Err(e) => panic!("search undecided on a tiny problem: {e}"),
    }
}

/// The best spill over every assignment of the buffers to pools (pins
/// respected), or `None` when none fits.
fn optimum(problem: &PoolProblem) -> Option<Spill> {
    let k = problem.pools().len();
    let n = problem.len();
    let mut best: Option<Spill> = None;
    let mut assignment = vec![0usize; n];
    loop {
        let pins_ok = problem.indices().all(|b| {
            problem
                .pin(b)
                .is_none_or(|p| p.index() == assignment[b.index()])
        });
        if pins_ok {
            let pools: Vec<PoolIdx> = assignment.iter().map(|&p| PoolIdx::new(p)).collect();
            let spill = Spill::of(problem, &pools);
            if best.as_ref().is_none_or(|b| spill < *b)
                && problem.pool_indices().all(|p| {
                    let members: Vec<BufferIdx> = problem
                        .indices()
                        .filter(|b| pools[b.index()] == p)
                        .collect();
                    fits(problem, p, &members)
                })
            {
                best = Some(spill);
            }
        }
        // Next assignment (base k counter).
        let mut i = 0;
        loop {
            if i == n {
                return best;
            }
            assignment[i] += 1;
            if assignment[i] < k {
                break;
            }
            assignment[i] = 0;
            i += 1;
        }
    }
}

/// Small random pooled problems: up to 7 buffers (some of size 0), 2 or 3
/// pools with capacities around a fraction of the max load, some buffers
/// pinned.
fn small_problems() -> impl proptest::strategy::Strategy<Value = PoolProblem> {
    (
        proptest::collection::vec(
            (
                0u64..8,
                1u64..5,
                0u64..6,
                proptest::option::weighted(0.2, 0u32..3),
            ),
            1..8,
        ),
        proptest::collection::vec((2u64..12, prop_oneof![Just(1u64), Just(2)]), 2..4),
    )
        .prop_map(|(spec, pools)| {
            let k = pools.len() as u32;
            let buffers = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, _))| Buffer::new(format!("b{i}"), s, s + len, size))
                .collect();
            let pins = spec.iter().map(|x| x.3.map(|p| PoolIdx(p % k))).collect();
            let pools = pools
                .iter()
                .enumerate()
                .map(|(i, &(c, a))| Pool::new(format!("p{i}"), c).aligned(a))
                .collect();
            PoolProblem::new(buffers, pins, pools).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every plan is valid and keeps its pins; guided is never worse than
    /// fastest-first and places everything whenever it does; neither beats
    /// the exhaustive optimum, and a proof of infeasibility is never given
    /// when an assignment exists.
    #[test]
    fn strategies_against_each_other_and_the_optimum(p in small_problems()) {
        let best = optimum(&p);
        let ff = solve_checked(&p, Strategy::FastestFirst);
        let guided = solve_checked(&p, Strategy::Guided);
        if let (Ok((_, f)), Ok((_, g))) = (&ff, &guided) {
            prop_assert!(g <= f, "guided {:?} worse than fastest-first {:?}", g, f);
        }
        if ff.is_ok() {
            prop_assert!(guided.is_ok(), "fastest-first placed everything, guided did not");
        }
        match &best {
            Some(best) => {
                for r in [&ff, &guided] {
                    match r {
                        Ok((_, s)) => prop_assert!(s >= best, "{:?} beats the optimum {:?}", s, best),
                        Err(PoolSolveError::Infeasible(proof)) => {
                            prop_assert!(false, "false proof {} (optimum {:?})", proof, best)
                        }
                        Err(_) => {}
                    }
                }
            }
            None => {
                prop_assert!(ff.is_err() && guided.is_err(), "a plan for an infeasible problem");
            }
        }
    }
}

/// Medium random problems: up to 60 buffers, pools at fractions of the
/// max load (the last one at 1 to 1.5 times it), a tenth pinned.
fn medium_problems() -> impl proptest::strategy::Strategy<Value = PoolProblem> {
    (
        proptest::collection::vec(
            (
                0u64..40,
                1u64..12,
                1u64..64,
                proptest::option::weighted(0.1, 0u32..3),
            ),
            1..60,
        ),
        proptest::collection::vec(5u32..60, 1..3),
        100u32..150,
    )
        .prop_map(|(spec, fast, last)| {
            let buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, _))| Buffer::new(format!("b{i}"), s, s + len, size))
                .collect();
            let load = memplan::Problem::new(buffers.clone(), None)
                .unwrap()
                .max_load();
            let mut percents = fast;
            percents.sort_unstable();
            percents.push(last);
            let k = percents.len() as u32;
            let pools = percents
                .iter()
                .enumerate()
                .map(|(i, &pc)| Pool::new(format!("p{i}"), (load * u64::from(pc) / 100).max(64)))
                .collect();
            let pins = spec.iter().map(|x| x.3.map(|p| PoolIdx(p % k))).collect();
            PoolProblem::new(buffers, pins, pools).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// On larger problems: valid plans that keep their pins, guided never
    /// worse than fastest-first and placing everything whenever it does.
    #[test]
    fn guided_is_never_worse_on_medium_problems(p in medium_problems()) {
        let ff = solve_checked(&p, Strategy::FastestFirst);
        let guided = solve_checked(&p, Strategy::Guided);
        match (&ff, &guided) {
            (Ok((_, f)), Ok((_, g))) => prop_assert!(g <= f, "guided {:?} worse than {:?}", g, f),
            (Ok(_), Err(e)) => prop_assert!(false, "guided failed where fastest-first did not: {}", e),
            _ => {}
        }
    }
}

#[test]
fn guided_reaches_the_optimum_on_most_small_problems() {
    // Deterministic sample: how often each strategy is optimal.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut feasible, mut guided, mut baseline) = (0, 0, 0);
    for _ in 0..60 {
        let p = small_problems().new_tree(&mut runner).unwrap().current();
        let Some(best) = optimum(&p) else { continue };
        feasible += 1;
        let optimal = |strategy| solve_checked(&p, strategy).is_ok_and(|(_, spill)| spill == best);
        guided += usize::from(optimal(Strategy::Guided));
        baseline += usize::from(optimal(Strategy::FastestFirst));
    }
    eprintln!("optimal on {feasible} feasible problems: guided {guided}, fastest-first {baseline}");
    assert!(feasible >= 30, "{feasible} feasible problems");
    assert!(
        guided * 10 >= feasible * 9,
        "guided optimal on {guided} of {feasible}"
    );
    assert!(
        guided > baseline,
        "guided {guided}, fastest-first {baseline}"
    );
}

#[test]
fn a_zero_budget_is_deterministic_and_a_cancel_stops_with_a_valid_plan() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let p = medium_problems().new_tree(&mut runner).unwrap().current();
    let zero = SolveOptions {
        time_limit: Some(Duration::ZERO),
        ..SolveOptions::default()
    };
    let first = solve_pools(&p, Strategy::Guided, &zero);
    let second = solve_pools(&p, Strategy::Guided, &zero);
    assert_eq!(first, second);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cancelled = SolveOptions {
        time_limit: Some(Duration::from_secs(60)),
        cancel: memplan::solver::Cancel::new(flag),
        ..SolveOptions::default()
    };
    let started = std::time::Instant::now();
    if let Ok(s) = solve_pools(&p, Strategy::Guided, &cancelled) {
        validate_pools(&p, &s.plan).unwrap();
        if s.found_by == Strategy::Guided && p.pools().len() > 1 {
            assert_eq!(s.stopped, Some(memplan::Stopped::Interrupted));
        }
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn zero_size_buffers_go_anywhere_without_taking_room() {
    let p = pooled(
        vec![
            Buffer::new("a", 0, 4, 8),
            Buffer::new("empty", 0, 4, 0),
            Buffer::new("pinned-empty", 1, 3, 0),
            Buffer::new("b", 1, 3, 8),
        ],
        &[None, None, Some(1), None],
        vec![Pool::new("fast", 8), Pool::new("slow", 8)],
    );
    for strategy in Strategy::ALL {
        let (plan, spill) = solve_checked(&p, strategy).unwrap();
        assert_eq!(plan.pool(BufferIdx(2)), PoolIdx(1));
        // `a` (area 32) stays in the fast pool, `b` (16) spills.
        assert_eq!(spill, Spill(vec![16]), "{strategy:?}");
    }
}
