//! Greedy solvers: sort the buffers, then place each at the lowest (first-fit)
//! or tightest (best-fit) gap among the already placed buffers it overlaps in
//! time (idealloc §2.2; the first-fit note). Fixed buffers are placed first.
//!
//! Cost: O(n log n + P log P) where P is the number of time-overlapping pairs
//! between buffers, thanks to the [`Occupancy`](crate::geometry::occupancy::Occupancy) index.

pub(crate) mod groups;
mod orders;
pub(crate) mod placer;
pub mod skyline;

pub use orders::order;
pub use placer::{place, Placer};

/// The order in which buffers are placed. Ties always end on input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Decreasing size, ties by longer lifetime (idealloc's bootstrap "SLFF").
    Size,
    /// Decreasing size × lifetime.
    Area,
    /// Decreasing lifetime, ties by size.
    Lifetime,
    /// Increasing start time, like an online allocator; ties by size.
    Start,
    /// Decreasing contention (TelaMalloc §3.1), ties by alignment,
    /// size × lifetime², lifetime.
    Contention,
}

impl Order {
    /// Every order.
    pub const ALL: [Order; 5] = [
        Order::Size,
        Order::Area,
        Order::Lifetime,
        Order::Start,
        Order::Contention,
    ];

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Order::Size => "size",
            Order::Area => "area",
            Order::Lifetime => "lifetime",
            Order::Start => "start",
            Order::Contention => "contention",
        }
    }
}

impl crate::named::Named for Order {
    const WHAT: &'static str = "order";
    const ALL: &'static [Self] = &Order::ALL;
    fn name(self) -> &'static str {
        Order::name(self)
    }
}

/// How a buffer's offset is chosen among the gaps left by placed buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest offset that fits.
    FirstFit,
    /// The smallest gap that fits, lowest on ties; above everything if none.
    BestFit,
    /// TelaMalloc §3.1's skyline: rows filled bottom-up, each with the
    /// buffers that fit, the order giving the priority ([`crate::solvers::greedy::skyline`]).
    Skyline,
}

impl Fit {
    /// Every fit.
    pub const ALL: [Fit; 3] = [Fit::FirstFit, Fit::BestFit, Fit::Skyline];

    /// Name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Fit::FirstFit => "first-fit",
            Fit::BestFit => "best-fit",
            Fit::Skyline => "skyline",
        }
    }
}

impl crate::named::Named for Fit {
    const WHAT: &'static str = "fit";
    const ALL: &'static [Self] = &Fit::ALL;
    fn name(self) -> &'static str {
        Fit::name(self)
    }
    fn help(self) -> Option<&'static str> {
        (self == Fit::Skyline).then_some(
            "TelaMalloc §3.1: rows bottom-up on the skyline (with --order contention: its baseline)",
        )
    }
}

/// A sort + fit greedy solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Greedy {
    /// Placement order.
    pub order: Order,
    /// Fitting rule.
    pub fit: Fit,
}

impl Default for Greedy {
    /// Size order with first-fit: the first-fit-decreasing-size method.
    fn default() -> Self {
        Greedy {
            order: Order::Size,
            fit: Fit::FirstFit,
        }
    }
}

impl Greedy {
    /// Every combination of order and fit.
    pub fn all() -> impl Iterator<Item = Greedy> {
        Order::ALL
            .into_iter()
            .flat_map(|order| Fit::ALL.into_iter().map(move |fit| Greedy { order, fit }))
    }
}

// `impl Solver for Greedy` is the anytime harness's
// (`crate::solvers::anytime`): a greedy solve cut by the clock is completed
// there.

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::buffer::BufferIdx;
    use crate::geometry::fit::{align_up, best_fit, first_fit};
    use crate::plan::{validate, Stats};
    use crate::problem::Problem;
    use crate::problem::{read_problem_from, Buffer, Lifetimes};
    use crate::solver::{NotFoundReason, SolveError, SolveOptions, Solver};
    use crate::stop::Stop;
    use proptest::prelude::*;
    use std::path::Path;
    use std::sync::Arc;

    /// The first-fit note's six allocations (size, start, end), inclusive.
    const NOTE: &str =
        "id,lower,upper,size\n0,1,5,10\n1,2,6,5\n2,1,3,8\n3,4,7,4\n4,3,8,6\n5,5,9,12\n";

    /// Nothing can stop a solve without a time limit or a cancel flag: it
    /// skips the fallback computed beside the order (from 2^18 buffers),
    /// sorts the order beside the index and, with dense times, finds the
    /// max load there too; its plan and lower bound are those of a solve
    /// that could be stopped but was not. Times dense and not (scaled).
    #[test]
    fn an_unstoppable_solve_gives_the_stoppable_plan() {
        use std::sync::atomic::AtomicBool;
        let dense = crate::generate::generate(crate::generate::Kind::Random, 270_000, 5).problem;
        let scaled = dense
            .buffers()
            .iter()
            .map(|b| Buffer::new(b.id.clone(), 3 * b.start, 3 * b.end, b.size))
            .collect();
        let sparse = Problem::new(scaled, None).unwrap();
        assert!(dense.buffers().iter().all(|b| b.end < 2 * 270_000));
        assert!(sparse.buffers().iter().any(|b| b.end >= 2 * 270_000));
        for p in [dense, sparse] {
            let free = Greedy::default()
                .solve(&p, &SolveOptions::default())
                .unwrap();
            assert!(!SolveOptions::default().stop().can_cut());
            let flag = SolveOptions {
                cancel: crate::solver::Cancel::new(Arc::new(AtomicBool::new(false))),
                ..SolveOptions::default()
            };
            assert!(flag.stop().can_cut());
            let watched = Greedy::default().solve(&p, &flag).unwrap();
            assert_eq!(free.plan, watched.plan);
            assert_eq!(free.lower_bound, p.max_load());
            assert_eq!(watched.lower_bound, p.max_load());
            assert_eq!(validate(&p, &free.plan), Ok(()));
            assert_eq!(free.stopped, None);
        }
    }

    #[test]
    fn first_fit_note_example() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let s = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        validate(&p, &s.plan).unwrap();
        assert_eq!(s.plan.offsets(), &[12, 28, 0, 33, 22, 0]);
        assert_eq!(s.makespan, 37);
        assert_eq!(s.lower_bound, p.max_load());
        assert_eq!(
            order(&p, Order::Size, &Stop::never()).unwrap(),
            [5, 0, 2, 4, 1, 3].map(BufferIdx)
        );
    }

    #[test]
    fn fit_rules() {
        let occ = [(0, 4), (6, 10), (12, 20), (30, 31)];
        assert_eq!(first_fit(&occ, 2, 1), 4);
        assert_eq!(first_fit(&occ, 3, 1), 20);
        assert_eq!(
            first_fit(&occ, 2, 8),
            24,
            "4 and 16 are inside ranges; 24 fits below 30"
        );
        assert_eq!(first_fit(&occ, 10, 1), 20, "[20,30) holds exactly 10");
        assert_eq!(first_fit(&occ, 11, 1), 31);
        assert_eq!(first_fit(&[], 5, 4), 0);
        assert_eq!(
            best_fit(&occ, 2, 1),
            4,
            "[4,6) and [10,12) tie, the lowest wins"
        );
        assert_eq!(
            best_fit(&[(0, 4), (14, 20), (22, 30)], 2, 1),
            20,
            "[20,22) is tighter than [4,14)"
        );
        assert_eq!(best_fit(&occ, 3, 1), 20, "[4,6) and [10,12) are too small");
        assert_eq!(best_fit(&occ, 11, 1), 31);
        assert_eq!(best_fit(&[(2, 5)], 2, 1), 0);
        // Overlapping ranges (alive at different times of the new buffer).
        assert_eq!(first_fit(&[(0, 10), (2, 4), (12, 14)], 2, 1), 10);
        assert_eq!(best_fit(&[(0, 10), (2, 4), (12, 14)], 2, 1), 10);
    }

    #[test]
    fn fixed_and_aligned_buffers_are_honoured() {
        let p = Problem::new(
            vec![
                Buffer::new("f", 0, 10, 4).fixed(0),
                Buffer::new("a", 0, 10, 3).aligned(8),
                Buffer::new("b", 0, 10, 5),
                Buffer::new("g", 0, 10, 2).fixed(20),
            ],
            None,
        )
        .unwrap();
        for g in Greedy::all() {
            let s = g.solve(&p, &SolveOptions::default()).unwrap();
            validate(&p, &s.plan).unwrap();
            assert_eq!(s.plan.offset(BufferIdx(0)), 0);
            assert_eq!(s.plan.offset(BufferIdx(3)), 20);
            assert_eq!(s.plan.offset(BufferIdx(1)) % 8, 0);
        }
        let s = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        assert_eq!(s.plan.offsets(), &[0, 16, 4, 20]);
    }

    #[test]
    fn capacity_outcomes() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let fits = p.clone().with_capacity(Some(37));
        assert!(Greedy::default()
            .solve(&fits, &SolveOptions::default())
            .is_ok());
        // The note's plan is optimal: its makespan is the max load.
        assert_eq!(p.max_load(), 37);
        let tight = p.clone().with_capacity(Some(36));
        assert_eq!(
            Greedy::default()
                .solve(&tight, &SolveOptions::default())
                .unwrap_err(),
            SolveError::NotFound {
                capacity: 36,
                reason: NotFoundReason::ProvenInfeasible,
                best_makespan: Some(37),
                counters: Vec::new(),
            }
        );
        // A random instance where first-fit leaves fragmentation: not proven.
        let r = crate::generate::generate(crate::generate::Kind::Random, 60, 3).problem;
        let load = r.max_load();
        let free = Greedy::default()
            .solve(&r, &SolveOptions::default())
            .unwrap();
        assert!(free.makespan > load);
        assert!(!free.optimal);
        assert_eq!(
            Greedy::default()
                .solve(&r.with_capacity(Some(load)), &SolveOptions::default())
                .unwrap_err(),
            SolveError::NotFound {
                capacity: load,
                reason: NotFoundReason::Heuristic,
                best_makespan: Some(free.makespan),
                counters: Vec::new(),
            }
        );
        let impossible = p.with_capacity(Some(10));
        assert!(matches!(
            Greedy::default().solve(&impossible, &SolveOptions::default()),
            Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            })
        ));
    }

    #[test]
    fn early_stopping_limit() {
        let p = read_problem_from(NOTE.as_bytes(), Path::new("note.csv"), Lifetimes::Inclusive)
            .unwrap();
        let o = order(&p, Order::Size, &Stop::never()).unwrap();
        assert!(place(&p, &o, Fit::FirstFit, Some(36)).is_none());
        assert_eq!(
            place(&p, &o, Fit::FirstFit, Some(37)).unwrap().makespan(&p),
            37
        );
    }

    /// Reference placement: one pass over `order`, the overlaps found by
    /// scanning every placed buffer.
    pub(crate) fn plain_pass(p: &Problem, order: &[BufferIdx], fit: Fit) -> Vec<u64> {
        let b = p.buffers();
        let mut offsets: Vec<Option<u64>> = b.iter().map(|x| x.fixed_offset).collect();
        for &i in order {
            let mut occ: Vec<(u64, u64)> = b
                .iter()
                .zip(&offsets)
                .filter(|(x, off)| off.is_some() && x.overlaps_in_time(&b[i.index()]))
                .map(|(x, off)| (off.unwrap(), off.unwrap() + x.size))
                .collect();
            occ.sort_unstable();
            let x = &b[i.index()];
            offsets[i.index()] = Some(match fit {
                Fit::FirstFit | Fit::Skyline => first_fit(&occ, x.size, x.alignment),
                Fit::BestFit => best_fit(&occ, x.size, x.alignment),
            });
        }
        offsets.into_iter().map(|o| o.unwrap()).collect()
    }

    /// A generated instance with fixed and aligned buffers.
    pub(crate) fn mixed(kind: crate::generate::Kind, n: usize) -> Problem {
        let base = crate::generate::generate(kind, n, 5).problem;
        let mut buffers = base.buffers().to_vec();
        for (i, b) in buffers.iter_mut().enumerate() {
            if i % 101 == 0 {
                b.fixed_offset = Some((i as u64) << 30);
            } else if i % 5 == 0 {
                b.alignment = 32;
            }
        }
        Problem::new(buffers, None).unwrap()
    }

    #[test]
    fn a_passed_deadline_or_cancel_still_gives_a_valid_plan() {
        use crate::solver::Cancel;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        use std::time::Duration;
        let p = mixed(crate::generate::Kind::Random, 3000);
        let free = p
            .buffers()
            .iter()
            .filter(|b| b.fixed_offset.is_none())
            .count() as u64;
        let passed = SolveOptions {
            time_limit: Some(Duration::ZERO),
            ..SolveOptions::default()
        };
        let cancelled = SolveOptions {
            cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
            ..SolveOptions::default()
        };
        for g in Greedy::all() {
            for options in [&passed, &cancelled] {
                let s = g.solve(&p, options).unwrap();
                assert_eq!(validate(&p, &s.plan), Ok(()), "{}", g.name());
                // Stopped before the first buffer: the fallback placed all.
                assert_eq!(s.counters, vec![("fallback", free)], "{}", g.name());
            }
        }
        // With a capacity the plan does not meet, the reason is the clock.
        let tight = p
            .clone()
            .with_capacity(Some(p.max_load().max(p.fixed_end())));
        assert!(matches!(
            Greedy::default().solve(&tight, &passed),
            Err(SolveError::NotFound {
                reason: NotFoundReason::TimeLimit,
                ..
            })
        ));
    }

    /// Random problems of up to 40 buffers with alignments up to 8; about
    /// one in five is fixed, at `128 * index` (fixed ones never overlap).
    pub(crate) fn arb_problem() -> impl Strategy<Value = Problem> {
        proptest::collection::vec((0u64..40, 1u64..15, 1u64..64, 0u32..4, 0u8..5), 0..40).prop_map(
            |spec| {
                let buffers = spec
                    .into_iter()
                    .enumerate()
                    .map(|(i, (s, len, size, a, fixed))| {
                        let b = Buffer::new(format!("b{i}"), s, s + len, size).aligned(1 << a);
                        if fixed == 0 {
                            b.fixed(128 * i as u64)
                        } else {
                            b
                        }
                    })
                    .collect();
                Problem::new(buffers, None).unwrap()
            },
        )
    }

    proptest! {
        #[test]
        fn every_greedy_plan_validates(p in arb_problem()) {
            for g in Greedy::all() {
                let s = g.solve(&p, &SolveOptions::default()).unwrap();
                prop_assert_eq!(validate(&p, &s.plan), Ok(()));
                let stats = Stats::new(&p, &s.plan);
                prop_assert!(stats.max_load <= stats.makespan);
                prop_assert_eq!(stats.makespan, s.makespan);
            }
        }

        #[test]
        fn first_fit_is_lowest_feasible_offset(
            occ in proptest::collection::vec((0u64..100, 1u64..20), 0..10),
            size in 1u64..30,
            align in 0u32..4,
        ) {
            let mut occ: Vec<(u64, u64)> = occ.into_iter().map(|(o, s)| (o, o + s)).collect();
            occ.sort_unstable();
            let alignment = 1 << align;
            let free = |x: u64| occ.iter().all(|&(o, e)| x + size <= o || e <= x);
            let got = first_fit(&occ, size, alignment);
            prop_assert!(free(got) && got % alignment == 0);
            let lowest = (0..=got).step_by(alignment as usize).find(|&x| free(x));
            prop_assert_eq!(lowest, Some(got));
            let bf = best_fit(&occ, size, alignment);
            prop_assert!(free(bf) && bf % alignment == 0);
            // Best fit by brute force: the free aligned offsets inside gaps
            // (below the top of all ranges), by gap length, then offset.
            let top = occ.iter().map(|r| r.1).max().unwrap_or(0);
            let gap_of = |x: u64| {
                let lo = occ.iter().map(|r| r.1).filter(|&e| e <= x).max().unwrap_or(0);
                let hi = occ.iter().map(|r| r.0).filter(|&o| o >= x + size).min().unwrap();
                (hi - lo, lo)
            };
            let want = (0..top)
                .filter(|&x| x % alignment == 0 && free(x) && x + size <= top)
                .min_by_key(|&x| (gap_of(x), x))
                .unwrap_or_else(|| align_up(top, alignment));
            prop_assert_eq!(bf, want);
        }
    }
}
