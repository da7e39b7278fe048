//! The boxing solver: idealloc (Lamprakos et al., "idealloc: futureproof
//! static memory planning"), an implementation of the boxing algorithm of
//! Buchsbaum et al. ("OPT versus LOAD in dynamic storage allocation", BA).
//!
//! One iteration boxes the buffers into nested, equal-height boxes
//! (Theorem 16 → Corollary 15 → Theorem 2 → Lemma 1), unboxes them into
//! sparse offsets (idealloc §4, Fig. 6) and squeezes the buffers by first-fit
//! in increasing sparse offset. Iterations differ by their random critical
//! points (§3.3) and tie breaks (§5.10); the best plan is kept, starting from
//! the size-first greedy plan (§5.5).
//!
//! Deviations from idealloc, all deliberate:
//! - every random choice comes from one seeded ChaCha generator per
//!   iteration (idealloc relies on unstable sorts and an unordered priority
//!   queue), so a seed gives one plan whatever the thread count;
//! - the ε calibration of §5.6 simulates Theorem 16's loop on the job heights
//!   alone (boxes of one Corollary 15 call all have height H), so the 101
//!   trial values cost microseconds instead of 101 boxings;
//! - the squeeze orders buffers by decreasing size class first (classes
//!   `⌊log_ρ size⌋` with a random ratio ρ ∈ [2, 10] per iteration, in the
//!   spirit of §7.2.1's sampling) and by sparse offset within a class. The
//!   paper's squeeze by sparse offset alone (`size_classes: false`) did
//!   worse on the public iopddl and somas files, not even beating the
//!   size-first greedy on iopddl G_1, where the classes reach the max load
//!   (figures in `docs/benchmarks.md`);
//! - Theorem 16's loop also stops when μ would exceed (√5 − 1)/2: with
//!   ε > 1 the literal loop drives μ past 1, which Corollary 15 forbids
//!   (§3.2), and box heights overflow;
//! - iterations run in rounds of `ROUND` in parallel; an iteration is
//!   abandoned only when a buffer would end strictly above the best makespan,
//!   so the winner (lowest makespan, then lowest iteration) never depends on
//!   thread timing.

mod boxes;
mod elementary;
mod jobs;
mod prelude;
mod unbox;

pub use elementary::elementary_case;

use std::cmp::Reverse;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::geometry::sort::sort;
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solver::{Effort, Solution, SolveError, SolveOptions, Solver, Stop};
use crate::solvers::anytime;
use crate::solvers::greedy::Placer;

use boxes::theorem_16;
use jobs::{copied, free};
use prelude::Prelude;
use unbox::{unbox_all, Halt};

/// Iterations run together, in parallel; the target is checked between
/// rounds (a fixed round size keeps the plan independent of the thread
/// count), the time limit also within iterations.
const ROUND: usize = 8;

/// Options of the boxing solver (idealloc §5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct BoxingOptions {
    /// Upper bound on box-unbox-squeeze iterations.
    pub iterations: u32,
    /// Stop as soon as the fragmentation is at most this percentage of the
    /// max load (0: stop only at a plan that meets the lower bound).
    pub target_fragmentation: f64,
    /// Squeeze by decreasing size class first, sparse offset within a class
    /// (our deviation); `false` squeezes by sparse offset alone (§4).
    pub size_classes: bool,
    /// Solve the elementary cases directly (§2.1): no two buffers alive
    /// together (every offset 0), or one size (interval graph coloring,
    /// optimal); `false`: bootstrap and iterate on them too.
    pub elementary_cases: bool,
    /// The plan to start from (§5.5 bootstrapping); `None`: the greedy plan
    /// of [`SolveOptions::prepared`] when a portfolio gives one, else the
    /// size-first greedy plan.
    pub bootstrap: Option<Plan>,
}

impl Default for BoxingOptions {
    fn default() -> Self {
        BoxingOptions {
            iterations: 100,
            target_fragmentation: 0.0,
            size_classes: true,
            elementary_cases: true,
            bootstrap: None,
        }
    }
}

/// The idealloc solver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Boxing {
    /// Iterations and early-stop target.
    pub options: BoxingOptions,
}

impl Solver for Boxing {
    fn name(&self) -> String {
        "boxing".to_string()
    }

    /// idealloc's flow (Fig. 7): elementary cases (§2.1), else bootstrap
    /// from the size-first greedy plan (§5.5), the prelude (§5.6), then
    /// box-unbox-squeeze iterations (§3, §4) in parallel rounds until the
    /// iterations, the target (§5.1) or the time limit run out.
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        self.solve_seeded(problem, options, None)
    }
}

impl Boxing {
    /// [`Solver::solve_positive`], the iterations placing on `given` (the
    /// index of the bootstrap plan, built by whoever made that plan) when
    /// there is one rather than on an index of their own.
    fn solve_seeded(
        &self,
        problem: &Problem,
        options: &SolveOptions,
        given: Option<&Placer<'_>>,
    ) -> Result<Solution, SolveError> {
        // How many iterations were abandoned is not counted: it depends on the
        // threads' timing (the shared best makespan), and a report says the
        // same for the same options and seed.
        let counters = vec![("iterations", 0), ("best_iteration", 0)];
        // A work budget caps the iterations (each costs O(n log n)), at
        // least one.
        let iterations = match options.effort {
            Some(effort) => self
                .options
                .iterations
                .min(affordable_iterations(effort, problem.len()).max(1)),
            None => self.options.iterations,
        };
        let bootstrap = anytime::Bootstrap {
            plan: self.options.bootstrap.as_ref(),
            placer: given,
            improves: iterations > 0,
        };
        let elementary = |deadline: &Stop| {
            self.options
                .elementary_cases
                .then(|| elementary_case(problem, deadline))
                .flatten()
        };
        anytime::improving(problem, options, bootstrap, counters, elementary, |start| {
            self.iterate(problem, options, start, iterations)
        })
    }

    /// From the bootstrap plan in `start`, box-unbox-squeeze iterations in
    /// parallel rounds until the iterations, the target (§5.1) or the
    /// deadline run out; the best plan and, in the counters, the iterations
    /// run and the best one.
    fn iterate(
        &self,
        problem: &Problem,
        options: &SolveOptions,
        start: anytime::Improving<'_>,
        iterations: u32,
    ) -> Plan {
        let anytime::Improving {
            plan: mut best,
            placer,
            max_load,
            deadline,
            counters,
        } = start;
        let lower_bound = max_load.max(problem.fixed_end());
        // With a capacity, the first plan within it will do.
        let target = target_makespan(max_load, lower_bound, self.options.target_fragmentation)
            .max(problem.capacity.unwrap_or(0));
        let mut best_makespan = best.makespan(problem);
        options.progress.improve(best_makespan);
        options.progress.raise_lower_bound(lower_bound);
        if best_makespan <= target || iterations == 0 {
            return best;
        }
        let Ok(prelude) = Prelude::new(problem, deadline) else {
            return best;
        };
        let shared_best = AtomicU64::new(best_makespan);
        let mut stopped = 0u64;
        let mut done = 0u32;
        while done < iterations && best_makespan > target {
            if deadline.is_cut() {
                break;
            }
            let round = (iterations - done).min(ROUND as u32);
            let results: Vec<(u32, Outcome)> = (done..done + round)
                .into_par_iter()
                .map(|i| {
                    let outcome = iteration(
                        placer,
                        problem,
                        &prelude,
                        iteration_seed(options.seed, i),
                        self.options.size_classes,
                        &shared_best,
                        deadline,
                    );
                    (i, outcome)
                })
                .collect();
            done += round;
            for (i, outcome) in results {
                let plan = match outcome {
                    Outcome::Placed(plan) => plan,
                    Outcome::Abandoned => continue,
                    Outcome::Stopped => {
                        stopped += 1;
                        continue;
                    }
                };
                let makespan = plan.makespan(problem);
                if makespan < best_makespan {
                    options.progress.improve(makespan);
                    best_makespan = makespan;
                    best = plan;
                    counters[1].1 = u64::from(i) + 1;
                }
            }
        }
        counters[0].1 = u64::from(done) - stopped;
        drop_later(prelude, problem.len());
        best
    }
}

/// Boxing whose iterations place on the index of its bootstrap plan,
/// built by the portfolio that made that plan ([`Prepared`]'s greedy
/// plan): no index of its own. On any other problem than the one the
/// placer indexes (zero-size buffers set aside, hulls), plain boxing.
///
/// [`Prepared`]: crate::solver::Prepared
pub(crate) struct Seeded<'p> {
    /// The solver.
    pub boxing: Boxing,
    /// The index of the plan in [`SolveOptions::prepared`], if kept.
    pub placer: Option<Placer<'p>>,
}

impl Solver for Seeded<'_> {
    fn name(&self) -> String {
        self.boxing.name()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let seeded = options
            .prepared
            .as_ref()
            .is_some_and(|p| p.greedy.is_some());
        let given = self
            .placer
            .as_ref()
            .filter(|placer| seeded && std::ptr::eq(placer.problem, problem));
        self.boxing.solve_seeded(problem, options, given)
    }
}

/// Boxing work per unit of [`crate::solver::Effort`]: iterations × buffers
/// (an iteration costs O(n log n); about a quarter of a second of one core).
const WORK_PER_EFFORT: u64 = 100_000;

/// The iterations on `buffers` buffers that `effort` pays for in full
/// (zero when one iteration costs more than the whole budget).
pub(crate) fn affordable_iterations(effort: Effort, buffers: usize) -> u32 {
    let iterations = effort.scale(WORK_PER_EFFORT) / buffers.max(1) as u64;
    u32::try_from(iterations).unwrap_or(u32::MAX)
}

/// The makespan at which the iterations stop (idealloc §5.1, worst-case
/// fragmentation): fragmentation (makespan − max load) at most `percent` of
/// the max load, or the lower bound if that is higher (fixed buffers).
fn target_makespan(max_load: u64, lower_bound: u64, percent: f64) -> u64 {
    let slack = (max_load as f64 * percent.max(0.0) / 100.0).floor();
    max_load.saturating_add(slack as u64).max(lower_bound)
}

/// The seed of iteration `i`: one stream per iteration, whatever thread
/// runs it (our replacement for idealloc's baked-in randomness, §5.10).
fn iteration_seed(seed: u64, i: u32) -> u64 {
    // SplitMix64 finaliser: distinct, well-mixed seeds per iteration.
    let mut z = seed ^ (u64::from(i) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How an iteration ended.
#[derive(Debug)]
enum Outcome {
    /// A complete plan, at most the best makespan when it started.
    Placed(Plan),
    /// A buffer would have ended above the best makespan (§5.5).
    Abandoned,
    /// The deadline passed (time limit, cancel flag): not counted.
    Stopped,
}

/// One box-unbox-squeeze iteration (idealloc Fig. 7): [`Outcome::Abandoned`]
/// as soon as a buffer would end above the best makespan so far (§5.5 early
/// stopping), [`Outcome::Stopped`] when `deadline` passes, checked between
/// the phases and during the squeeze, so that a time limit or Ctrl-C is
/// honoured within a fraction of one iteration rather than a round.
fn iteration(
    placer: &Placer,
    problem: &Problem,
    prelude: &Prelude,
    seed: u64,
    size_classes: bool,
    best: &AtomicU64,
    deadline: &Stop,
) -> Outcome {
    if deadline.is_cut() {
        return Outcome::Stopped;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let Ok(jobs) = copied(&prelude.jobs, deadline) else {
        return Outcome::Stopped;
    };
    let boxes = theorem_16(jobs, prelude.epsilon, &mut rng, deadline);
    // Also true when Theorem 2 gave up midway: `boxes` is then partial.
    if deadline.is_cut() {
        drop_later(boxes, problem.len());
        return Outcome::Stopped;
    }
    let mut sparse = vec![0; problem.len()];
    unbox_all(&boxes, 0, &mut sparse, &mut Halt::new(deadline));
    // Freeing the boxes takes a tenth of the iteration at 5M buffers.
    free(boxes, deadline);
    if deadline.is_cut() {
        return Outcome::Stopped;
    }
    // Squeeze (§4): first-fit in increasing sparse offset, ties at random
    // (§5.10). With size classes, buffers are first grouped by decreasing
    // size class of a random ratio in [2, 10] per iteration, the sparse
    // offset ordering each class (see the module notes).
    let class_of: Box<dyn Fn(u64) -> u64> = if size_classes {
        let ratio_ln = rng.gen_range(2f64.ln()..10f64.ln());
        Box::new(move |size: u64| ((size as f64).ln() / ratio_ln).floor() as u64)
    } else {
        Box::new(|_| 0)
    };
    let buffers = problem.buffers();
    let mut keyed: Vec<(Reverse<u64>, u64, u32, BufferIdx)> = sparse
        .iter()
        .enumerate()
        .filter(|&(i, _)| buffers[i].fixed_offset.is_none())
        .map(|(i, &o)| {
            (
                Reverse(class_of(buffers[i].size)),
                o,
                rng.gen(),
                BufferIdx::new(i),
            )
        })
        .collect();
    if sort(&mut keyed, deadline).is_err() {
        return Outcome::Stopped;
    }
    let order: Vec<BufferIdx> = keyed.into_iter().map(|k| k.3).collect();
    let limit = best.load(Ordering::Relaxed);
    match placer.place(&order, Some(limit), deadline) {
        Some(plan) => {
            best.fetch_min(plan.makespan(problem), Ordering::Relaxed);
            Outcome::Placed(plan)
        }
        None if deadline.is_cut() => Outcome::Stopped,
        None => Outcome::Abandoned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::problem::Buffer;
    use crate::solvers::greedy::{Fit, Greedy};
    use proptest::prelude::*;

    fn solve(problem: &Problem, seed: u64, iterations: u32) -> Solution {
        let boxing = Boxing {
            options: BoxingOptions {
                iterations,
                ..BoxingOptions::default()
            },
        };
        let options = SolveOptions {
            seed,
            ..SolveOptions::default()
        };
        boxing.solve(problem, &options).unwrap()
    }

    /// Iterations on a given index (the bootstrap plan's, kept by a
    /// portfolio) give the plan of iterations on an index of their own.
    #[test]
    fn a_given_index_changes_no_plan() {
        use crate::solver::Prepared;
        use std::sync::Arc;
        let p = crate::generate::generate(crate::generate::Kind::Random, 2000, 5).problem;
        let greedy = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let options = SolveOptions {
            prepared: Some(Arc::new(Prepared {
                greedy: Some((Greedy::default().name(), greedy.plan)),
                ..Prepared::bounds(&p, &Stop::never()).unwrap()
            })),
            ..SolveOptions::default()
        };
        let boxing = Boxing {
            options: BoxingOptions {
                iterations: 8,
                ..BoxingOptions::default()
            },
        };
        let alone = boxing.solve(&p, &options).unwrap();
        let seeded = Seeded {
            boxing: boxing.clone(),
            placer: Some(Placer::new(&p, Fit::FirstFit, &Stop::never()).unwrap()),
        };
        let s = seeded.solve(&p, &options).unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert_eq!((s.plan, s.counters), (alone.plan, alone.counters));
    }

    #[test]
    fn no_overlaps_puts_everything_at_zero() {
        let buffers = (0..5)
            .map(|i| Buffer::new(format!("b{i}"), i * 10, i * 10 + 10, 100 + i))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let s = solve(&p, 0, 10);
        assert_eq!(s.plan.offsets(), &[0, 0, 0, 0, 0]);
        assert_eq!(s.makespan, 104);
        assert!(s.optimal);
    }

    #[test]
    fn one_size_is_interval_graph_coloring() {
        // Three buffers alive at time 2, staggered lifetimes.
        let spec = [(0, 3), (1, 4), (2, 6), (3, 8), (4, 5), (6, 9)];
        let buffers = spec
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| Buffer::new(format!("b{i}"), s, e, 8))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let plan = elementary_case(&p, &Stop::never()).unwrap();
        // Rows by start: b0 row 0, b1 row 1, b2 row 2, b3 reuses row 0,
        // b4 reuses row 1, b5 row 1 again (b4 ended at 5).
        assert_eq!(plan.offsets(), &[0, 8, 16, 0, 8, 8]);
        let s = solve(&p, 0, 10);
        assert_eq!(s.makespan, 24);
        assert_eq!(s.makespan, p.max_load());
        assert!(s.optimal);
    }

    #[test]
    fn huge_sizes_do_not_overflow_the_dummy_job() {
        // Sizes from 2^53 on: ⌈2216.53·h_min⌉ exceeds u64::MAX. The
        // overlapping, distinct sizes are not an elementary case, and the
        // size-first greedy plan is not optimal, so iterations run. Then
        // sizes from 1 to 2^56 (no dummy, box heights past u64::MAX).
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for (base, spread) in [(1u64 << 53, 1u64 << 52), (1, 1 << 56)] {
            let buffers: Vec<Buffer> = (0..60)
                .map(|i| {
                    let s = next(50);
                    let len = 1 + next(19);
                    let size = base + (next(1 << 31) << 31 | next(1 << 31)) % spread;
                    Buffer::new(format!("b{i}"), s, s + len, size)
                })
                .collect();
            let p = Problem::new(buffers, None).unwrap();
            let prelude = Prelude::new(&p, &Stop::never()).unwrap();
            assert!(prelude.jobs.iter().all(|j| j.size > 0));
            let s = solve(&p, 1, 16);
            assert!(s.counters[0].1 > 0, "{:?}", s.counters);
            assert_eq!(validate(&p, &s.plan), Ok(()));
            let greedy = crate::solvers::greedy::Greedy::default()
                .solve(&p, &SolveOptions::default())
                .unwrap();
            assert!(s.makespan <= greedy.makespan);
        }
    }

    #[test]
    fn same_seed_same_plan_whatever_the_threads() {
        let g = crate::generate::generate(crate::generate::Kind::Perfect, 800, 5);
        let run = |threads: usize, seed: u64| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| solve(&g.problem, seed, 24))
        };
        let a = run(1, 7);
        let b = run(2, 7);
        assert_eq!(a.plan, b.plan);
        assert_eq!(validate(&g.problem, &a.plan), Ok(()));
        let greedy = crate::solvers::greedy::Greedy::default()
            .solve(&g.problem, &SolveOptions::default())
            .unwrap();
        assert!(
            a.makespan < greedy.makespan,
            "{} vs {}",
            a.makespan,
            greedy.makespan
        );
    }

    #[test]
    fn target_fragmentation_stops_early() {
        let g = crate::generate::generate(crate::generate::Kind::Random, 300, 2);
        let boxing = Boxing {
            options: BoxingOptions {
                iterations: 50,
                target_fragmentation: 1000.0,
                ..BoxingOptions::default()
            },
        };
        let s = boxing.solve(&g.problem, &SolveOptions::default()).unwrap();
        // The bootstrap plan already meets a 1000% target: no iteration runs.
        assert_eq!(s.counters[0], ("iterations", 0));
        let greedy = crate::solvers::greedy::Greedy::default()
            .solve(&g.problem, &SolveOptions::default())
            .unwrap();
        assert_eq!(s.plan, greedy.plan);
    }

    #[test]
    fn target_fragmentation_is_a_percentage_of_the_max_load() {
        assert_eq!(target_makespan(1000, 1000, 5.0), 1050);
        assert_eq!(target_makespan(1000, 1000, 0.0), 1000);
        // A fixed buffer ending at 1200 lifts the lower bound: 5% of the
        // max load is then out of reach, the lower bound is the target
        // (not 1200 + 5% of 1200).
        assert_eq!(target_makespan(1000, 1200, 5.0), 1200);
        assert_eq!(target_makespan(1000, 1020, 5.0), 1050);
        assert_eq!(target_makespan(u64::MAX - 1, u64::MAX - 1, 50.0), u64::MAX);
        // Through the solver: the greedy plan's fragmentation lies between
        // 5% of the max load and 5% of the lower bound, so iterations run.
        let p = Problem::new(
            vec![
                Buffer::new("f", 0, 10, 10).fixed(70),
                Buffer::new("a", 4, 6, 40),
                Buffer::new("b", 0, 3, 20),
                Buffer::new("c", 0, 1, 40),
                Buffer::new("d", 2, 10, 20),
            ],
            None,
        )
        .unwrap();
        let greedy = crate::solvers::greedy::Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let (load, bound) = (p.max_load(), p.max_load().max(p.fixed_end()));
        // Max load 70, fixed end 80, greedy makespan 100.
        assert_eq!((load, bound, greedy.makespan), (70, 80, 100));
        let percent = 100.0 * (greedy.makespan - load) as f64 / load as f64 - 0.5;
        assert!(greedy.makespan <= bound + (bound as f64 * percent / 100.0) as u64);
        let boxing = Boxing {
            options: BoxingOptions {
                iterations: 8,
                target_fragmentation: percent,
                ..BoxingOptions::default()
            },
        };
        let s = boxing.solve(&p, &SolveOptions::default()).unwrap();
        assert!(s.counters[0].1 > 0, "{:?}", s.counters);
    }

    #[test]
    fn a_passed_deadline_stops_an_iteration_midway() {
        // 5000 buffers: the squeeze checks the deadline between buffers.
        let g = crate::generate::generate(crate::generate::Kind::Random, 5000, 4);
        let p = &g.problem;
        let placer = Placer::new(p, Fit::FirstFit, &Stop::never()).unwrap();
        let prelude = Prelude::new(p, &Stop::never()).unwrap();
        let best = AtomicU64::new(u64::MAX);
        let run = |deadline: &Stop| iteration(&placer, p, &prelude, 9, true, &best, deadline);
        assert!(matches!(run(&Stop::default()), Outcome::Placed(_)));
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let cancelled = SolveOptions {
            cancel: crate::solver::Cancel::new(flag),
            ..SolveOptions::default()
        }
        .stop();
        assert!(matches!(run(&cancelled), Outcome::Stopped));
        let order =
            crate::solvers::greedy::order(p, crate::solvers::greedy::Order::Size, &Stop::never())
                .unwrap();
        assert!(placer.place(&order, None, &Stop::after_looks(0)).is_none());
        assert_eq!(
            placer.place(&order, None, &Stop::never()),
            placer.place(&order, None, &Stop::never())
        );
    }

    /// Random problems with alignments and a few fixed buffers.
    fn arb_problem() -> impl Strategy<Value = Problem> {
        prop::collection::vec((0u64..60, 1u64..25, 1u64..5000, 0u32..4, 0u8..8), 1..70).prop_map(
            |spec| {
                let buffers = spec
                    .into_iter()
                    .enumerate()
                    .map(|(i, (s, len, size, a, fixed))| {
                        let b = Buffer::new(format!("b{i}"), s, s + len, size).aligned(1 << a);
                        if fixed == 0 {
                            b.fixed(8192 * (i as u64 + 1))
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
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn plans_validate_and_never_lose_to_greedy(p in arb_problem(), seed in 0u64..1000) {
            let s = solve(&p, seed, 6);
            prop_assert_eq!(validate(&p, &s.plan), Ok(()));
            prop_assert_eq!(s.makespan, s.plan.makespan(&p));
            let greedy = crate::solvers::greedy::Greedy::default().solve(&p, &SolveOptions::default()).unwrap();
            prop_assert!(s.makespan <= greedy.makespan);
            prop_assert!(s.makespan >= p.max_load());
        }

        /// Every combination of boxing's switches gives a valid plan, never
        /// below the max load nor above the size-first greedy plan.
        #[test]
        fn every_switch_combination_is_sound(
            p in arb_problem(),
            size_classes: bool,
            elementary_cases: bool,
            seed in 0u64..1000,
        ) {
            let boxing = Boxing {
                options: BoxingOptions {
                    iterations: 4,
                    size_classes,
                    elementary_cases,
                    ..BoxingOptions::default()
                },
            };
            let options = SolveOptions { seed, ..SolveOptions::default() };
            let s = boxing.solve(&p, &options).unwrap();
            prop_assert_eq!(validate(&p, &s.plan), Ok(()));
            prop_assert!(s.makespan >= p.max_load());
            let greedy = crate::solvers::greedy::Greedy::default().solve(&p, &SolveOptions::default()).unwrap();
            prop_assert!(s.makespan <= greedy.makespan);
        }
    }

    /// One size: colored at once (no iteration) with the elementary cases;
    /// without them, bootstrapped like any instance, still valid.
    #[test]
    fn elementary_cases_switch() {
        let buffers = (0..6)
            .map(|i| Buffer::new(format!("b{i}"), i, i + 3, 8))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let run = |elementary_cases| {
            let boxing = Boxing {
                options: BoxingOptions {
                    iterations: 2,
                    elementary_cases,
                    ..BoxingOptions::default()
                },
            };
            boxing.solve(&p, &SolveOptions::default()).unwrap()
        };
        let (on, off) = (run(true), run(false));
        assert_eq!(validate(&p, &on.plan), Ok(()));
        assert_eq!(validate(&p, &off.plan), Ok(()));
        assert_eq!(on.makespan, p.max_load());
        assert!(off.makespan >= p.max_load());
        assert!(on
            .counters
            .iter()
            .any(|&(k, v)| k == "iterations" && v == 0));
    }
}
