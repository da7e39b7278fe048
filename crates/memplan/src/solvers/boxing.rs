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
//!   paper's squeeze by sparse offset alone (`size_classes: false`) never
//!   beat the size-first greedy on iopddl G_1 in 100 iterations (8.34 MB,
//!   3 seeds) and reached 5.5 MB on somas resnet50; with classes, G_1
//!   reaches 0 bytes and resnet50 under 3.84 MB (idealloc's best);
//! - Theorem 16's loop also stops when μ would exceed (√5 − 1)/2: with
//!   ε > 1 the literal loop drives μ past 1, which Corollary 15 forbids
//!   (§3.2), and box heights overflow;
//! - iterations run in rounds of `ROUND` in parallel; an iteration is
//!   abandoned only when a buffer would end strictly above the best makespan,
//!   so the winner (lowest makespan, then lowest iteration) never depends on
//!   thread timing.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solver::{Deadline, NotFoundReason, Solution, SolveError, SolveOptions, Solver};
use crate::solvers::greedy::{self, Fit, Order, Placer};

/// Inequality 12 (§3.2): BA needs `h_max / h_min > 2216.53`.
const MIN_RATIO: f64 = 2216.53;
/// Inequality 10 (§3.2): μ* ≤ (√5 − 1) / 2.
const MU_MAX: f64 = 0.618_033_988_749_895;
/// Iterations run together, in parallel; the target is checked between
/// rounds (a fixed round size keeps the plan independent of the thread
/// count), the time limit also within iterations.
const ROUND: usize = 8;
/// Theorem 2 recursions on fewer jobs run sequentially.
const PARALLEL_JOBS: usize = 4096;

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
    /// The plan to start from (§5.5 bootstrapping); `None`: the size-first
    /// greedy plan.
    pub bootstrap: Option<Plan>,
}

impl Default for BoxingOptions {
    fn default() -> Self {
        BoxingOptions {
            iterations: 100,
            target_fragmentation: 0.0,
            size_classes: true,
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
        let deadline = options.deadline();
        let max_load = problem.max_load();
        let lower_bound = max_load.max(problem.fixed_end());
        // With a capacity, the first plan within it will do.
        let target = target_makespan(max_load, lower_bound, self.options.target_fragmentation)
            .max(problem.capacity.unwrap_or(0));
        let mut counters = vec![("iterations", 0), ("abandoned", 0), ("best_iteration", 0)];
        // A work budget caps the iterations (each costs O(n log n)).
        let iterations = match options.effort {
            Some(effort) => {
                let budget = effort.scale(WORK_PER_EFFORT) / problem.len().max(1) as u64;
                self.options
                    .iterations
                    .min(u32::try_from(budget.max(1)).unwrap_or(u32::MAX))
            }
            None => self.options.iterations,
        };
        let plan = if let Some(plan) = elementary_case(problem) {
            plan
        } else {
            let placer = Placer::new(problem, Fit::FirstFit);
            // Cut by the clock, the bootstrap is completed by the greedy
            // fallback: a valid plan, and no time left for iterations.
            let mut best = match &self.options.bootstrap {
                Some(plan) if plan.offsets().len() == problem.len() => plan.clone(),
                _ => {
                    placer
                        .place_within(&greedy::order(problem, Order::Size), &|| deadline.passed())
                        .0
                }
            };
            let mut best_makespan = best.makespan(problem);
            options.progress.improve(best_makespan);
            options.progress.raise_lower_bound(lower_bound);
            if best_makespan > target && iterations > 0 {
                let prelude = Prelude::new(problem);
                let shared_best = AtomicU64::new(best_makespan);
                let (mut abandoned, mut stopped) = (0u64, 0u64);
                let mut done = 0u32;
                while done < iterations && best_makespan > target {
                    if deadline.passed() {
                        break;
                    }
                    let round = (iterations - done).min(ROUND as u32);
                    let results: Vec<(u32, Outcome)> = (done..done + round)
                        .into_par_iter()
                        .map(|i| {
                            let outcome = iteration(
                                &placer,
                                problem,
                                &prelude,
                                iteration_seed(options.seed, i),
                                self.options.size_classes,
                                &shared_best,
                                &deadline,
                            );
                            (i, outcome)
                        })
                        .collect();
                    done += round;
                    for (i, outcome) in results {
                        let plan = match outcome {
                            Outcome::Placed(plan) => plan,
                            Outcome::Abandoned => {
                                abandoned += 1;
                                continue;
                            }
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
                            counters[2].1 = u64::from(i) + 1;
                        }
                    }
                }
                counters[0].1 = u64::from(done) - stopped;
                counters[1].1 = abandoned;
            }
            best
        };
        // A plan over the capacity when the clock ran out: more time might
        // have found one.
        let reason = if deadline.passed() {
            NotFoundReason::TimeLimit
        } else {
            NotFoundReason::Heuristic
        };
        Solution::within_capacity_counted(problem, plan, max_load, reason, counters).map(
            |mut solution| {
                if !solution.optimal {
                    solution.stopped = deadline.stopped();
                }
                solution
            },
        )
    }
}

/// Boxing work per unit of [`crate::solver::Effort`]: iterations × buffers
/// (an iteration costs O(n log n); about a quarter of a second of one core).
const WORK_PER_EFFORT: u64 = 100_000;

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

/// Elementary cases (idealloc §2.1, §5.6): when no two buffers overlap in
/// time, every offset is 0; when all buffers have one size, interval graph
/// coloring is optimal. `None` when neither applies (or fixed buffers or
/// alignments get in the way).
pub fn elementary_case(problem: &Problem) -> Option<Plan> {
    let buffers = problem.buffers();
    let first = buffers.first()?;
    if buffers.iter().any(|b| b.fixed_offset.is_some()) {
        return None;
    }
    let spans: Vec<(u64, u64)> = buffers.iter().map(|b| (b.start, b.end)).collect();
    if !overlapping(spans) {
        return Some(Plan::from_offsets(vec![0; buffers.len()]));
    }
    let size = first.size;
    if buffers
        .iter()
        .all(|b| b.size == size && size % b.alignment == 0)
    {
        let rows = interval_coloring(buffers.iter().map(|b| (b.start, b.end)));
        let offsets = rows.iter().map(|&r| u64::from(r) * size).collect();
        return Some(Plan::from_offsets(offsets));
    }
    None
}

/// Interval graph coloring (optimal for unit heights, idealloc §2.1): the
/// row of each `(start, end)` lifetime, in input order, so that lifetimes in
/// one row never overlap; uses as many rows as the most alive at once.
/// Lifetimes are visited by start (ties by input order) and take the lowest
/// free row.
fn interval_coloring(lifetimes: impl Iterator<Item = (u64, u64)>) -> Vec<u32> {
    let spans: Vec<(u64, u64, u32)> = lifetimes
        .enumerate()
        .map(|(i, (s, e))| (s, e, i as u32))
        .collect();
    let mut order: Vec<u32> = (0..spans.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (spans[i as usize].0, spans[i as usize].2));
    let mut busy: std::collections::BinaryHeap<Reverse<(u64, u32)>> = Default::default();
    let mut free: std::collections::BinaryHeap<Reverse<u32>> = Default::default();
    let mut rows = vec![0u32; spans.len()];
    let mut next_row = 0u32;
    for i in order {
        let (start, end, _) = spans[i as usize];
        while let Some(&Reverse((busy_end, row))) = busy.peek() {
            if busy_end > start {
                break;
            }
            busy.pop();
            free.push(Reverse(row));
        }
        let row = free.pop().map_or_else(
            || {
                next_row += 1;
                next_row - 1
            },
            |Reverse(r)| r,
        );
        rows[i as usize] = row;
        busy.push(Reverse((end, row)));
    }
    rows
}

/// What a job holds (idealloc §5.2: buffers and boxes are both jobs).
#[derive(Clone, Debug)]
enum Contents {
    /// An input buffer.
    Buffer(u32),
    /// The dummy job of §5.6: boxed, never placed.
    Dummy,
    /// A box and the jobs inside it.
    Boxed(Vec<Job>),
}

/// A BA job: a height and a half-open lifetime.
#[derive(Clone, Debug)]
struct Job {
    size: u64,
    start: u64,
    end: u64,
    contents: Contents,
}

impl Job {
    /// Whether `t` lies in the job's lifetime: Theorem 2's R = {j : t ∈ I_j}
    /// (half-open, equivalent to §5.2's exclusive semantics per §5.4).
    fn is_live_at(&self, t: u64) -> bool {
        self.start <= t && t < self.end
    }

    /// A box of height `size` around `contents` (non-empty), spanning their
    /// lifetimes (Lemma 1's and Theorem 2's boxes; §5.2: a job with
    /// contents).
    fn boxed(size: u64, contents: Vec<Job>) -> Job {
        let start = contents.iter().map(|j| j.start).min().unwrap_or(0);
        let end = contents.iter().map(|j| j.end).max().unwrap_or(0);
        Job {
            size,
            start,
            end,
            contents: Contents::Boxed(contents),
        }
    }
}

/// What the prelude (§5.6) computes once for all iterations.
#[derive(Clone, Debug)]
struct Prelude {
    /// The jobs to box: every free buffer, and the dummy job if any.
    jobs: Vec<Job>,
    /// ε, calibrated within Inequality 11.
    epsilon: f64,
}

impl Prelude {
    /// Builds the jobs, adds the dummy job when the height ratio breaks
    /// Inequality 12 and calibrates ε (§5.6).
    fn new(problem: &Problem) -> Prelude {
        let mut jobs: Vec<Job> = problem
            .buffers()
            .iter()
            .enumerate()
            .filter(|(_, b)| b.fixed_offset.is_none())
            .map(|(i, b)| Job {
                size: b.size,
                start: b.start,
                end: b.end,
                contents: Contents::Buffer(i as u32),
            })
            .collect();
        let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(1);
        let h_max = jobs.iter().map(|j| j.size).max().unwrap_or(1);
        if (h_max as f64) / (h_min as f64) <= MIN_RATIO {
            let start = jobs.iter().map(|j| j.start).min().unwrap_or(0);
            let end = jobs.iter().map(|j| j.end).max().unwrap_or(1);
            // Saturating: from h_min ≈ 2^53 on, ⌈2216.53·h_min⌉ passes
            // u64::MAX (the float cast saturates, the `+ 1` must too, or the
            // dummy gets height 0 and Corollary 15 divides by it).
            jobs.push(Job {
                size: ((MIN_RATIO * h_min as f64).ceil() as u64).saturating_add(1),
                start,
                end,
                contents: Contents::Dummy,
            });
        }
        let mut heights: Vec<u64> = jobs.iter().map(|j| j.size).collect();
        heights.sort_unstable();
        heights.dedup();
        let epsilon = calibrate_epsilon(&heights);
        Prelude { jobs, epsilon }
    }
}

/// Inequality 11 (§3.2): the legal range of ε for height ratio `r`.
fn epsilon_range(r: f64) -> (f64, f64) {
    let log = r.log2();
    let low = (log.powi(14) / r).powf(1.0 / 6.0);
    let high = MU_MAX * log * log;
    (low, high.max(low))
}

/// §5.6: tries ε from the low end of Inequality 11 upwards in steps of 1% of
/// the range and keeps the value whose Theorem 16 loop ends with the
/// smallest ratio r*. `heights` are the distinct job heights, increasing.
fn calibrate_epsilon(heights: &[u64]) -> f64 {
    let (Some(&h_min), Some(&h_max)) = (heights.first(), heights.last()) else {
        return 1.0;
    };
    let (low, high) = epsilon_range(h_max as f64 / h_min as f64);
    let mut best = (f64::INFINITY, low);
    for step in 0..=100 {
        let epsilon = low + (high - low) * f64::from(step) / 100.0;
        let r_star = simulate_ratio(heights, epsilon);
        if r_star < best.0 {
            best = (r_star, epsilon);
        }
    }
    best.1
}

/// The ratio r* at which Theorem 16's loop stops for ε, computed on the
/// heights alone: each round boxes the jobs of height at most μH into boxes
/// of height H.
fn simulate_ratio(heights: &[u64], epsilon: f64) -> f64 {
    let h_max = heights[heights.len() - 1];
    let mut first_unboxed = 0usize;
    let mut box_heights: Vec<u64> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let h_min = heights
            .get(first_unboxed)
            .copied()
            .into_iter()
            .chain(box_heights.iter().copied())
            .min()
            .unwrap_or(h_max);
        let Some(round) = Round::new(h_min, h_max, epsilon) else {
            return h_max as f64 / h_min as f64;
        };
        first_unboxed += heights[first_unboxed..].partition_point(|&h| h <= round.small_limit);
        box_heights.retain(|&h| h > round.small_limit);
        box_heights.push(round.box_height);
    }
    let h_min = heights
        .get(first_unboxed)
        .copied()
        .into_iter()
        .chain(box_heights)
        .min()
        .unwrap_or(h_max);
    h_max as f64 / h_min as f64
}

/// Theorem 16's loop never needs more rounds than this (each round raises
/// h_min geometrically); the bound only guards against float corner cases.
const MAX_ROUNDS: usize = 200;

/// One round of Theorem 16's loop (§3.2 eqs. 3-5).
#[derive(Clone, Copy, Debug)]
struct Round {
    /// μ = ε / (log₂ r)².
    mu: f64,
    /// H = ⌈μ⁵ h_max / (log₂ r)²⌉.
    box_height: u64,
    /// Jobs of height at most μH are boxed this round.
    small_limit: u64,
}

impl Round {
    /// The round for the current heights, or `None` when the loop ends:
    /// (log₂ r)² < 1/ε, or μ would exceed (√5 − 1)/2 (Corollary 15 needs
    /// μ ≤ 1; as r shrinks, ε/(log₂ r)² grows past it when ε > 1), or no
    /// progress (h_min > μH, or boxes as high as the highest job).
    fn new(h_min: u64, h_max: u64, epsilon: f64) -> Option<Round> {
        let r = h_max as f64 / h_min as f64;
        let log2 = r.log2().powi(2);
        if log2 < 1.0 / epsilon {
            return None;
        }
        let mu = epsilon / log2;
        let height = (mu.powi(5) * h_max as f64 / log2).ceil();
        if mu > MU_MAX || height >= h_max as f64 {
            return None;
        }
        let box_height = height as u64;
        let small_limit = (mu * box_height as f64).floor() as u64;
        (h_min <= small_limit && box_height > h_min).then_some(Round {
            mu,
            box_height,
            small_limit,
        })
    }
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
    deadline: &Deadline,
) -> Outcome {
    if deadline.passed() {
        return Outcome::Stopped;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let boxes = theorem_16(prelude.jobs.clone(), prelude.epsilon, &mut rng, deadline);
    // Also true when Theorem 2 gave up midway: `boxes` is then partial.
    if deadline.passed() {
        return Outcome::Stopped;
    }
    let mut sparse = vec![0; problem.len()];
    unbox_all(&boxes, 0, &mut sparse);
    if deadline.passed() {
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
    keyed.sort_unstable();
    let order: Vec<BufferIdx> = keyed.into_iter().map(|k| k.3).collect();
    let limit = best.load(Ordering::Relaxed);
    match placer.place_until(&order, Some(limit), &|| deadline.passed()) {
        Some(plan) => {
            best.fetch_min(plan.makespan(problem), Ordering::Relaxed);
            Outcome::Placed(plan)
        }
        None if deadline.passed() => Outcome::Stopped,
        None => Outcome::Abandoned,
    }
}

/// Theorem 16: box the smallest jobs with Corollary 15 until
/// (log₂ r)² < 1/ε, then box everything once more with μ* = ε/(log₂ r*)²
/// in place of ε (§3.2, Inequality 10). Returns the outermost boxes; once
/// `deadline` passes, some jobs may be left out (the caller discards them).
fn theorem_16(
    mut jobs: Vec<Job>,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Deadline,
) -> Vec<Job> {
    let h_max = jobs.iter().map(|j| j.size).max().unwrap_or(1);
    for _ in 0..MAX_ROUNDS {
        let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(h_max);
        let Some(round) = Round::new(h_min, h_max, epsilon) else {
            break;
        };
        let (small, large): (Vec<Job>, Vec<Job>) =
            jobs.into_iter().partition(|j| j.size <= round.small_limit);
        jobs = large;
        jobs.extend(corollary_15(
            small,
            round.box_height,
            round.mu,
            rng,
            deadline,
        ));
    }
    let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(h_max);
    let log2 = (h_max as f64 / h_min as f64).log2().powi(2);
    let mu_star = if log2 > 0.0 {
        (epsilon / log2).min(MU_MAX)
    } else {
        MU_MAX
    };
    let box_height = (h_max as f64 / mu_star).ceil() as u64;
    corollary_15(jobs, box_height, mu_star, rng, deadline)
}

/// Corollary 15: round every height up to ⌊(1+ε)^i⌋, then box each size
/// class with Theorem 2 into boxes of height `box_height`, ⌊H/h⌋ jobs
/// stacked per box. Size classes are boxed in parallel (§5.9).
fn corollary_15(
    mut jobs: Vec<Job>,
    box_height: u64,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Deadline,
) -> Vec<Job> {
    let base = (1.0 + epsilon).ln();
    let rounded = |h: u64| -> u64 {
        let i = ((h as f64).ln() / base).ceil();
        let r = (i * base).exp().floor() as u64;
        r.max(h)
    };
    jobs.sort_unstable_by_key(|j| j.size);
    // Split into size classes (consecutive after the sort).
    let mut classes: Vec<(u64, Vec<Job>, u64)> = Vec::new();
    for job in jobs {
        let class = rounded(job.size);
        match classes.last_mut() {
            Some((c, members, _)) if *c == class => members.push(job),
            _ => classes.push((class, vec![job], rng.gen())),
        }
    }
    classes
        .into_par_iter()
        .flat_map_iter(|(class, members, seed)| {
            let per_box = (box_height / class).max(1);
            let height = box_height.max(class);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut boxes = Vec::new();
            theorem_2(
                members, per_box, height, epsilon, &mut rng, deadline, &mut boxes,
            );
            boxes
        })
        .collect()
}

/// Theorem 2 as simplified in §5.8 (no free spaces): pick a critical point
/// t at which some job is live (§3.3 critical point injection: the start of
/// a random job), box the jobs live at t with Lemma 1 and its unresolved jobs
/// by interval graph coloring, `per_box` rows per box, then recurse on the
/// jobs wholly before and wholly after t (in parallel, §5.9). Gives up,
/// leaving `jobs` out, once `deadline` has passed.
fn theorem_2(
    jobs: Vec<Job>,
    per_box: u64,
    box_height: u64,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Deadline,
    out: &mut Vec<Job>,
) {
    if jobs.is_empty() || deadline.passed() {
        return;
    }
    let t = jobs[rng.gen_range(0..jobs.len())].start;
    let mut live = Vec::new();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for job in jobs {
        if job.is_live_at(t) {
            live.push(job);
        } else if job.end <= t {
            before.push(job);
        } else {
            after.push(job);
        }
    }
    let unresolved = lemma_1(live, per_box, box_height, epsilon, out);
    box_rows(unresolved, per_box, box_height, out);
    let (seed_before, seed_after): (u64, u64) = (rng.gen(), rng.gen());
    if before.len() + after.len() >= PARALLEL_JOBS {
        let (mut a, b) = rayon::join(
            || {
                let mut out = Vec::new();
                let mut rng = ChaCha8Rng::seed_from_u64(seed_before);
                theorem_2(
                    before, per_box, box_height, epsilon, &mut rng, deadline, &mut out,
                );
                out
            },
            || {
                let mut out = Vec::new();
                let mut rng = ChaCha8Rng::seed_from_u64(seed_after);
                theorem_2(
                    after, per_box, box_height, epsilon, &mut rng, deadline, &mut out,
                );
                out
            },
        );
        a.extend(b);
        out.extend(a);
    } else {
        theorem_2(
            before,
            per_box,
            box_height,
            epsilon,
            &mut ChaCha8Rng::seed_from_u64(seed_before),
            deadline,
            out,
        );
        theorem_2(
            after,
            per_box,
            box_height,
            epsilon,
            &mut ChaCha8Rng::seed_from_u64(seed_after),
            deadline,
            out,
        );
    }
}

/// Lemma 1 (Appendix A): the jobs `live` all share an instant. The
/// `per_box·⌈1/ε²⌉` earliest-starting and then as many latest-ending jobs
/// are unresolved (returned); the rest is cut into alternating vertical
/// strips (earliest starts) and horizontal strips (latest ends) of
/// `per_box·⌈1/ε⌉` jobs, boxed `per_box` at a time in order of decreasing end
/// (vertical) or increasing start (horizontal).
fn lemma_1(
    live: Vec<Job>,
    per_box: u64,
    box_height: u64,
    epsilon: f64,
    out: &mut Vec<Job>,
) -> Vec<Job> {
    let first_strip = strip_len(per_box, (1.0 / (epsilon * epsilon)).ceil());
    if live.len() <= 2 * first_strip {
        return live;
    }
    let strip = strip_len(per_box, (1.0 / epsilon).ceil());
    let n = live.len();
    let mut by_start: Vec<u32> = (0..n as u32).collect();
    by_start.sort_unstable_by_key(|&i| live[i as usize].start);
    let mut by_end: Vec<u32> = (0..n as u32).collect();
    by_end.sort_unstable_by_key(|&i| Reverse(live[i as usize].end));
    let mut slots: Vec<Option<Job>> = live.into_iter().map(Some).collect();
    let (mut s, mut e) = (0usize, 0usize);
    // Takes up to `count` remaining jobs from the front of `order`.
    let take = |order: &[u32], cursor: &mut usize, count: usize, slots: &mut Vec<Option<Job>>| {
        let mut taken = Vec::with_capacity(count);
        while taken.len() < count && *cursor < order.len() {
            if let Some(job) = slots[order[*cursor] as usize].take() {
                taken.push(job);
            }
            *cursor += 1;
        }
        taken
    };
    let mut unresolved = take(&by_start, &mut s, first_strip, &mut slots);
    unresolved.extend(take(&by_end, &mut e, first_strip, &mut slots));
    let per_box = per_box as usize;
    loop {
        let mut vertical = take(&by_start, &mut s, strip, &mut slots);
        if vertical.is_empty() {
            break;
        }
        vertical.sort_unstable_by_key(|j| Reverse(j.end));
        box_chunks(vertical, per_box, box_height, out);
        let mut horizontal = take(&by_end, &mut e, strip, &mut slots);
        if horizontal.is_empty() {
            break;
        }
        horizontal.sort_unstable_by_key(|j| j.start);
        box_chunks(horizontal, per_box, box_height, out);
    }
    unresolved
}

/// Lemma 1's strip length `H·factor` (`factor` = ⌈1/ε²⌉ or ⌈1/ε⌉) in
/// jobs, saturating.
fn strip_len(per_box: u64, factor: f64) -> usize {
    let len = per_box as f64 * factor.max(1.0);
    if len >= usize::MAX as f64 {
        usize::MAX / 4
    } else {
        len as usize
    }
}

/// Lemma 1: boxes a strip's `jobs`, already in order, in consecutive groups
/// of `per_box` (H), the last possibly smaller.
fn box_chunks(jobs: Vec<Job>, per_box: usize, box_height: u64, out: &mut Vec<Job>) {
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        let group: Vec<Job> = jobs.by_ref().take(per_box).collect();
        out.push(Job::boxed(box_height, group));
    }
}

/// Theorem 2's treatment of unresolved jobs: pack them in rows by interval
/// graph coloring, then box `per_box` consecutive rows at a time.
fn box_rows(jobs: Vec<Job>, per_box: u64, box_height: u64, out: &mut Vec<Job>) {
    if jobs.is_empty() {
        return;
    }
    let rows = interval_coloring(jobs.iter().map(|j| (j.start, j.end)));
    let boxes = rows.iter().max().map_or(0, |&r| u64::from(r) / per_box + 1) as usize;
    let mut groups: Vec<Vec<Job>> = vec![Vec::new(); boxes];
    for (job, row) in jobs.into_iter().zip(rows) {
        groups[(u64::from(row) / per_box) as usize].push(job);
    }
    for group in groups.into_iter().filter(|g| !g.is_empty()) {
        out.push(Job::boxed(box_height, group));
    }
}

/// UnboxAll (§4, Fig. 6): gives every buffer inside `jobs` a sparse offset
/// at or above the watermark `w`. Same-size jobs are placed row by row
/// (interval graph coloring); jobs that never overlap all start at `w`;
/// otherwise each size class, largest first, is placed above the previous.
fn unbox_all(jobs: &[Job], w: u64, sparse: &mut [u64]) {
    let Some(first) = jobs.first() else { return };
    if jobs.iter().all(|j| j.size == first.size) {
        place_same_sizes(jobs, w, sparse);
    } else if !any_overlap(jobs) {
        for job in jobs {
            place_job(job, w, sparse);
        }
    } else {
        let mut order: Vec<u32> = (0..jobs.len() as u32).collect();
        order.sort_unstable_by_key(|&i| Reverse(jobs[i as usize].size));
        let mut w = w;
        for class in order.chunk_by(|&a, &b| jobs[a as usize].size == jobs[b as usize].size) {
            let members: Vec<&Job> = class.iter().map(|&i| &jobs[i as usize]).collect();
            w = place_same_sizes_ref(&members, w, sparse);
        }
    }
}

/// PlaceSameSizes (Fig. 6): rows by interval graph coloring, each row's jobs
/// unboxed at the watermark, which then rises by the row height.
fn place_same_sizes(jobs: &[Job], w: u64, sparse: &mut [u64]) -> u64 {
    let refs: Vec<&Job> = jobs.iter().collect();
    place_same_sizes_ref(&refs, w, sparse)
}

/// PlaceSameSizes (Fig. 6) on borrowed jobs; returns the new watermark.
fn place_same_sizes_ref(jobs: &[&Job], w: u64, sparse: &mut [u64]) -> u64 {
    let Some(first) = jobs.first() else { return w };
    let size = first.size;
    let rows = interval_coloring(jobs.iter().map(|j| (j.start, j.end)));
    for (job, &row) in jobs.iter().zip(&rows) {
        place_job(
            job,
            w.saturating_add(u64::from(row).saturating_mul(size)),
            sparse,
        );
    }
    let used = rows.iter().max().map_or(0, |&r| u64::from(r) + 1);
    w.saturating_add(used.saturating_mul(size))
}

/// Places one job at `w`: a buffer gets the offset, a box unboxes its
/// contents from `w`, the dummy job is skipped (§5.7).
fn place_job(job: &Job, w: u64, sparse: &mut [u64]) {
    match &job.contents {
        Contents::Buffer(i) => sparse[*i as usize] = w,
        Contents::Dummy => {}
        Contents::Boxed(contents) => unbox_all(contents, w, sparse),
    }
}

/// Fig. 6 line 5, Overlap(J): true when two of `jobs` are alive at the
/// same time.
fn any_overlap(jobs: &[Job]) -> bool {
    overlapping(jobs.iter().map(|j| (j.start, j.end)).collect())
}

/// Whether two of the `(start, end)` lifetimes intersect.
fn overlapping(mut spans: Vec<(u64, u64)>) -> bool {
    if spans.len() > 1 << 16 {
        spans.par_sort_unstable();
    } else {
        spans.sort_unstable();
    }
    spans.windows(2).any(|w| w[1].0 < w[0].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::problem::Buffer;
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
        let plan = elementary_case(&p).unwrap();
        // Rows by start: b0 row 0, b1 row 1, b2 row 2, b3 reuses row 0,
        // b4 reuses row 1, b5 row 1 again (b4 ended at 5).
        assert_eq!(plan.offsets(), &[0, 8, 16, 0, 8, 8]);
        let s = solve(&p, 0, 10);
        assert_eq!(s.makespan, 24);
        assert_eq!(s.makespan, p.max_load());
        assert!(s.optimal);
    }

    #[test]
    fn epsilon_stays_within_inequality_11() {
        // At r = 2216.53 the range of Inequality 11 closes (Inequality 12).
        let (low, high) = epsilon_range(MIN_RATIO);
        assert!((low - high).abs() / high < 0.01, "{low} {high}");
        let (low, high) = epsilon_range(1e6);
        assert!(low < high);
        let heights = [1, 3, 50, 700, 1_000_000];
        let e = calibrate_epsilon(&heights);
        assert!(
            low * (1.0 - 1e-9) <= e && e <= high,
            "{low} <= {e} <= {high}"
        );
    }

    #[test]
    fn theorem_16_rounds_always_box_something() {
        // Every round of the loop must have h_min <= μH (§3.2), and H
        // grows the minimum height, so the loop ends.
        for &(h_min, h_max) in &[(1u64, 1_000_000u64), (7, 100_000), (1, 2217)] {
            let (low, high) = epsilon_range(h_max as f64 / h_min as f64);
            for e in [low, (low + high) / 2.0, high] {
                if let Some(round) = Round::new(h_min, h_max, e) {
                    assert!(h_min <= round.small_limit);
                    assert!(round.box_height > h_min);
                    assert!(round.mu <= MU_MAX);
                }
            }
        }
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
            let prelude = Prelude::new(&p);
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
    fn unboxing_places_every_buffer() {
        let g = crate::generate::generate(crate::generate::Kind::Random, 500, 3);
        let prelude = Prelude::new(&g.problem);
        assert!(prelude.jobs.len() >= 500);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let boxes = theorem_16(
            prelude.jobs.clone(),
            prelude.epsilon,
            &mut rng,
            &Deadline::default(),
        );
        let mut sparse = vec![u64::MAX; 500];
        fn count(jobs: &[Job]) -> usize {
            jobs.iter()
                .map(|j| match &j.contents {
                    Contents::Boxed(c) => count(c),
                    Contents::Buffer(_) => 1,
                    Contents::Dummy => 0,
                })
                .sum()
        }
        assert_eq!(count(&boxes), 500);
        unbox_all(&boxes, 0, &mut sparse);
        let missing: Vec<usize> = (0..500).filter(|&i| sparse[i] == u64::MAX).collect();
        assert!(missing.is_empty(), "{missing:?}");
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
        let placer = Placer::new(p, Fit::FirstFit);
        let prelude = Prelude::new(p);
        let best = AtomicU64::new(u64::MAX);
        let run = |deadline: &Deadline| iteration(&placer, p, &prelude, 9, true, &best, deadline);
        assert!(matches!(run(&Deadline::default()), Outcome::Placed(_)));
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let cancelled = SolveOptions {
            cancel: crate::solver::Cancel::new(flag),
            ..SolveOptions::default()
        }
        .deadline();
        assert!(matches!(run(&cancelled), Outcome::Stopped));
        let order = greedy::order(p, Order::Size);
        assert!(placer.place_until(&order, None, &|| true).is_none());
        assert_eq!(
            placer.place_until(&order, None, &|| false),
            placer.place(&order, None)
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
    }
}
