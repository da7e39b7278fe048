//! Greedy solvers: sort the buffers, then place each at the lowest (first-fit)
//! or tightest (best-fit) gap among the already placed buffers it overlaps in
//! time (idealloc §2.2; the first-fit note). Fixed buffers are placed first.
//!
//! Cost: O(n log n + P log P) where P is the number of time-overlapping pairs
//! between buffers, thanks to the [`Occupancy`] index.

use std::cmp::Reverse;

use rayon::prelude::*;

use crate::index::BufferIdx;
use crate::occupancy::{Occupancy, Span};
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};
use crate::solver::{NotFoundReason, Solution, SolveError, SolveOptions, Solver};
use crate::sweep::{time_groups, LoadProfile};
use crate::time_tree::TimeTree;

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

/// How a buffer's offset is chosen among the gaps left by placed buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest offset that fits.
    FirstFit,
    /// The smallest gap that fits, lowest on ties; above everything if none.
    BestFit,
    /// TelaMalloc §3.1's skyline: rows filled bottom-up, each with the
    /// buffers that fit, the order giving the priority ([`crate::skyline`]).
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

impl Solver for Greedy {
    fn name(&self) -> String {
        format!("greedy/{}/{}", self.order.name(), self.fit.name())
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        _options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let (max_load, order) = rayon::join(|| problem.max_load(), || order(problem, self.order));
        let plan = place(problem, &order, self.fit, None).unwrap_or_default();
        Solution::within_capacity(problem, plan, max_load, NotFoundReason::Heuristic)
    }
}

/// The free buffers of `problem` in placement order `order`.
pub fn order(problem: &Problem, order: Order) -> Vec<BufferIdx> {
    let profile = if order == Order::Contention {
        LoadProfile::new(problem.buffers())
    } else {
        LoadProfile::default()
    };
    order_with_profile(problem, order, &profile)
}

fn order_with_profile(problem: &Problem, order: Order, profile: &LoadProfile) -> Vec<BufferIdx> {
    let buffers = problem.buffers();
    match order {
        Order::Size => sorted_by_key(buffers, |b, _| (Reverse(b.size), Reverse(b.lifetime()))),
        Order::Area => sorted_by_key(buffers, |b, _| {
            (
                Reverse(u128::from(b.size) * u128::from(b.lifetime())),
                Reverse(b.size),
            )
        }),
        Order::Lifetime => sorted_by_key(buffers, |b, _| (Reverse(b.lifetime()), Reverse(b.size))),
        Order::Start => sorted_by_key(buffers, |b, _| (b.start, Reverse(b.size))),
        Order::Contention => {
            let contention = profile.contention(buffers);
            sorted_by_key(buffers, |b, i| {
                let lifetime = u128::from(b.lifetime());
                (
                    Reverse(contention[i]),
                    Reverse(b.alignment),
                    Reverse(
                        u128::from(b.size)
                            .saturating_mul(lifetime)
                            .saturating_mul(lifetime),
                    ),
                    Reverse(b.lifetime()),
                )
            })
        }
    }
}

/// The free (not fixed) buffers sorted by `key(buffer, index)`, ties by
/// index. Keys are computed once, then sorted in parallel.
fn sorted_by_key<K: Ord + Send>(
    buffers: &[Buffer],
    key: impl Fn(&Buffer, usize) -> K + Sync,
) -> Vec<BufferIdx> {
    let mut keyed: Vec<(K, BufferIdx)> = buffers
        .par_iter()
        .enumerate()
        .filter(|(_, b)| b.fixed_offset.is_none())
        .map(|(i, b)| (key(b, i), BufferIdx::new(i)))
        .collect();
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, b)| b).collect()
}

/// Places the fixed buffers, then the buffers of `order` one by one with
/// `fit`. With `limit`, stops and returns `None` as soon as a buffer would
/// end above it (idealloc §5.5 early stopping). Buffers that are neither
/// fixed nor in `order` get offset 0.
///
/// Buffers in different [`time_groups`] never compete for addresses, so the
/// groups are placed independently (in parallel); the plan is exactly the
/// one a single pass over `order` gives.
pub fn place(problem: &Problem, order: &[BufferIdx], fit: Fit, limit: Option<u64>) -> Option<Plan> {
    Placer::new(problem, fit).place(order, limit)
}

/// Everything about placement that does not depend on the order: the time
/// groups and, per group, the index with the fixed buffers already placed.
/// Build once, then [`Placer::place`] many orders (idealloc's iterations).
#[derive(Clone, Debug)]
pub struct Placer<'p> {
    problem: &'p Problem,
    fit: Fit,
    /// Group of each buffer.
    group_of: Vec<u32>,
    /// Members of each group, input order.
    members: Vec<Vec<BufferIdx>>,
    /// Index of each buffer within its group.
    local: Vec<u32>,
    /// Per group: the index and the offsets with only fixed buffers placed.
    templates: Vec<(Index, Vec<u64>)>,
}

impl<'p> Placer<'p> {
    /// Prepares placement with `fit`.
    pub fn new(problem: &'p Problem, fit: Fit) -> Self {
        // Small groups are merged: an index per handful of buffers costs
        // more than it saves.
        Self::with_min_group(problem, fit, 4096)
    }

    fn with_min_group(problem: &'p Problem, fit: Fit, min_group: usize) -> Self {
        let buffers = problem.buffers();
        let (group_of, groups) = time_groups(buffers, min_group);
        let members = bucket(groups, problem.indices(), |b| group_of[b.index()]);
        let mut local = vec![0u32; buffers.len()];
        for list in &members {
            for (i, b) in list.iter().enumerate() {
                local[b.index()] = i as u32;
            }
        }
        // The skyline keeps its own state (see `place_until`).
        let templates = if fit == Fit::Skyline {
            Vec::new()
        } else {
            members
                .par_iter()
                .map(|members| group_template(buffers, members, fit))
                .collect()
        };
        Placer {
            problem,
            fit,
            group_of,
            members,
            local,
            templates,
        }
    }

    /// Places the fixed buffers, then the buffers of `order` one by one. With
    /// `limit`, stops and returns `None` as soon as a buffer would end above
    /// it (idealloc §5.5 early stopping). Buffers that are neither fixed nor
    /// in `order` get offset 0.
    pub fn place(&self, order: &[BufferIdx], limit: Option<u64>) -> Option<Plan> {
        self.place_until(order, limit, &|| false)
    }

    /// [`Placer::place`] that also gives up (`None`) once `stop()` holds,
    /// checked every `STOP_CHECK` buffers (a time limit, a cancel flag).
    pub fn place_until(
        &self,
        order: &[BufferIdx],
        limit: Option<u64>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<Plan> {
        if self.fit == Fit::Skyline {
            // Not one buffer at a time: each row takes the buffers that fit.
            return crate::skyline::place(self.problem, order, limit, stop);
        }
        let buffers = self.problem.buffers();
        let orders = bucket(self.members.len(), order.iter().copied(), |b| {
            self.group_of[b.index()]
        });
        let placed: Option<Vec<Vec<u64>>> = self
            .members
            .par_iter()
            .zip(orders.par_iter())
            .zip(self.templates.par_iter())
            .map(|((members, order), (index, offsets))| {
                let local_order = order.iter().map(|b| self.local[b.index()]);
                let (mut index, mut offsets) = (index.clone(), offsets.clone());
                place_group(
                    buffers,
                    members,
                    local_order,
                    &mut index,
                    &mut offsets,
                    limit,
                    stop,
                )?;
                Some(offsets)
            })
            .collect();
        let mut offsets = vec![0u64; buffers.len()];
        for (members, group_offsets) in self.members.iter().zip(placed?) {
            for (b, o) in members.iter().zip(group_offsets) {
                offsets[b.index()] = o;
            }
        }
        Some(Plan::from_offsets(offsets))
    }
}

/// Splits `items` into `groups` lists by `group(item)`, keeping their order.
fn bucket(
    groups: usize,
    items: impl Iterator<Item = BufferIdx>,
    group: impl Fn(BufferIdx) -> u32,
) -> Vec<Vec<BufferIdx>> {
    let mut lists: Vec<Vec<BufferIdx>> = vec![Vec::new(); groups];
    for b in items {
        lists[group(b) as usize].push(b);
    }
    lists
}

/// The index of one time group (`members`) for `fit`, with its fixed
/// buffers placed, and their offsets.
fn group_template(buffers: &[Buffer], members: &[BufferIdx], fit: Fit) -> (Index, Vec<u64>) {
    let spans: Vec<Span> = members
        .iter()
        .map(|b| Span::from(&buffers[b.index()]))
        .collect();
    let mut index = if fit == Fit::FirstFit && mean_conflicts(&spans) > DENSE_CONFLICTS {
        Index::Tree(TimeTree::new(&spans))
    } else {
        Index::Occupancy(Occupancy::new(&spans), fit, Vec::new())
    };
    let mut offsets = vec![0u64; members.len()];
    for (i, b) in members.iter().enumerate() {
        if let Some(offset) = buffers[b.index()].fixed_offset {
            offsets[i] = offset;
            index.place(i as u32, offset, spans[i].size);
        }
    }
    (index, offsets)
}

/// How many buffers [`Placer::place_until`] places between two `stop()`
/// checks.
const STOP_CHECK: usize = 1024;

/// Places one time group: `members` are its buffers, `order` lists local
/// indices into `members`; fills `offsets`. `None` when `limit` is exceeded
/// or `stop()` holds.
fn place_group(
    buffers: &[Buffer],
    members: &[BufferIdx],
    order: impl Iterator<Item = u32>,
    index: &mut Index,
    offsets: &mut [u64],
    limit: Option<u64>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<()> {
    for (k, b) in order.enumerate() {
        if k % STOP_CHECK == STOP_CHECK - 1 && stop() {
            return None;
        }
        let buf = &buffers[members[b as usize].index()];
        let offset = index.fit(b, buf.size, buf.alignment);
        if limit.is_some_and(|l| offset + buf.size > l) {
            return None;
        }
        offsets[b as usize] = offset;
        index.place(b, offset, buf.size);
    }
    Some(())
}

/// Above this many time-overlapping buffers per buffer on average, first-fit
/// uses the [`TimeTree`] (O(log² n) per buffer) rather than sorting the
/// conflicts (O(k log k)). Measured: iopddl S_1 (~1500) is 13× faster with
/// the tree, generated `random` instances (~100) 2× slower; somas resnet50
/// (~216) and iopddl G_1 (~140) about even.
const DENSE_CONFLICTS: u64 = 128;

/// True when buffers meet more than `DENSE_CONFLICTS` others on average:
/// first-fit is then fast (the [`TimeTree`]) but best-fit sorts thousands
/// of conflicts per buffer.
pub fn is_dense(problem: &Problem) -> bool {
    let spans: Vec<Span> = problem.buffers().iter().map(Span::from).collect();
    mean_conflicts(&spans) > DENSE_CONFLICTS
}

/// Mean number of other spans overlapping a span, in O(n log n): each
/// overlapping pair has its later start inside the other's lifetime.
fn mean_conflicts(spans: &[Span]) -> u64 {
    let mut starts: Vec<u64> = spans.iter().map(|s| s.start).collect();
    starts.sort_unstable();
    let pairs: u64 = spans
        .iter()
        .map(|s| {
            let inside =
                starts.partition_point(|&t| t < s.end) - starts.partition_point(|&t| t < s.start);
            inside as u64 - 1
        })
        .sum();
    pairs / spans.len().max(1) as u64
}

/// The placed buffers of one group, indexed for the fit: dense first-fit
/// walks the [`TimeTree`]; otherwise (and for best-fit, which needs every
/// gap) the conflicts the [`Occupancy`] lists are sorted.
#[derive(Clone, Debug)]
enum Index {
    Tree(TimeTree),
    Occupancy(Occupancy, Fit, Vec<(u64, u64)>),
}

impl Index {
    fn place(&mut self, b: u32, offset: u64, size: u64) {
        match self {
            Index::Tree(tree) => tree.place(b, offset, size),
            Index::Occupancy(occupancy, _, _) => occupancy.place(b, offset),
        }
    }

    fn fit(&mut self, b: u32, size: u64, alignment: u64) -> u64 {
        match self {
            Index::Tree(tree) => tree.first_fit(b, size, alignment, 0),
            Index::Occupancy(occupancy, fit, occupied) => {
                occupied.clear();
                occupancy.occupied_during(b, |o, e| occupied.push((o, e)));
                occupied.sort_unstable_by_key(|r| r.0);
                match fit {
                    // The skyline never builds an index (`Placer::new`).
                    Fit::FirstFit | Fit::Skyline => first_fit(occupied, size, alignment),
                    Fit::BestFit => best_fit(occupied, size, alignment),
                }
            }
        }
    }
}

/// The smallest multiple of `alignment` that is `>= x`.
#[inline]
pub fn align_up(x: u64, alignment: u64) -> u64 {
    x.checked_next_multiple_of(alignment).unwrap_or(u64::MAX)
}

/// The lowest aligned offset where `size` bytes avoid every `(offset, end)`
/// range of `occupied` (sorted by offset). After a conflict the candidate
/// jumps past the conflicting range (the first-fit note's offset jump).
pub fn first_fit(occupied: &[(u64, u64)], size: u64, alignment: u64) -> u64 {
    first_fit_from(occupied, 0, size, alignment)
}

/// [`first_fit`] among offsets at or above `start`.
pub fn first_fit_from(occupied: &[(u64, u64)], start: u64, size: u64, alignment: u64) -> u64 {
    let mut candidate = align_up(start, alignment);
    for &(offset, end) in occupied {
        if offset >= candidate + size {
            break;
        }
        if end > candidate {
            candidate = align_up(end, alignment);
        }
    }
    candidate
}

/// The aligned offset in the smallest gap between the `occupied` ranges
/// (sorted by offset) that holds `size` bytes, the lowest such gap on ties;
/// above all ranges when no gap holds it.
pub fn best_fit(occupied: &[(u64, u64)], size: u64, alignment: u64) -> u64 {
    let mut best: Option<(u64, u64)> = None; // (gap length, offset)
    let mut reach = 0;
    for &(offset, end) in occupied {
        if offset > reach {
            let candidate = align_up(reach, alignment);
            let gap = offset - reach;
            if candidate + size <= offset && best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, candidate));
            }
        }
        reach = reach.max(end);
    }
    best.map_or_else(|| align_up(reach, alignment), |(_, offset)| offset)
}

/// The best plan of every greedy variant (run in parallel), ties to the
/// first in [`Greedy::all`] order. On dense problems best-fit is skipped:
/// it costs seconds where first-fit and the skyline cost tenths (iopddl
/// S_1: 3.9 s for the ten first-fit and best-fit variants on 2 cores),
/// which the budget is better spent on. Once
/// `stop()` holds, unfinished variants are dropped; the default one
/// (size/first-fit) always finishes.
pub fn best_variant(problem: &Problem, stop: &(dyn Fn() -> bool + Sync)) -> (Greedy, Plan) {
    let dense = is_dense(problem);
    let variants: Vec<Greedy> = Greedy::all()
        .filter(|g| !dense || g.fit != Fit::BestFit)
        .collect();
    best_of(problem, &variants, Some(Greedy::default()), stop)
        .unwrap_or_else(|| (Greedy::default(), Plan::default()))
}

/// The best plan of `variants` (run in parallel), ties to the first listed.
/// Once `stop()` holds, unfinished variants are dropped, except `finish`;
/// `None` when every variant was dropped.
pub fn best_of(
    problem: &Problem,
    variants: &[Greedy],
    finish: Option<Greedy>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<(Greedy, Plan)> {
    let plans: Vec<(u64, usize, Plan)> = variants
        .par_iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let order = order(problem, g.order);
            let placer = Placer::new(problem, g.fit);
            let plan = if Some(*g) == finish {
                placer.place(&order, None)
            } else {
                placer.place_until(&order, None, stop)
            }?;
            Some((plan.makespan(problem), i, plan))
        })
        .collect();
    plans
        .into_iter()
        .min_by_key(|(m, i, _)| (*m, *i))
        .map(|(_, i, plan)| (variants[i], plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{validate, Stats};
    use crate::problem::{read_problem_from, Lifetimes};
    use proptest::prelude::*;
    use std::path::Path;

    /// The first-fit note's six allocations (size, start, end), inclusive.
    const NOTE: &str =
        "id,lower,upper,size\n0,1,5,10\n1,2,6,5\n2,1,3,8\n3,4,7,4\n4,3,8,6\n5,5,9,12\n";

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
        assert_eq!(order(&p, Order::Size), [5, 0, 2, 4, 1, 3].map(BufferIdx));
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
        let o = order(&p, Order::Size);
        assert!(place(&p, &o, Fit::FirstFit, Some(36)).is_none());
        assert_eq!(
            place(&p, &o, Fit::FirstFit, Some(37)).unwrap().makespan(&p),
            37
        );
    }

    /// Random problems of up to 40 buffers with alignments up to 8; about
    /// one in five is fixed, at `128 * index` (fixed ones never overlap).
    fn arb_problem() -> impl Strategy<Value = Problem> {
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
        fn grouped_placement_equals_a_plain_pass(p in arb_problem(), min_group in 1usize..8) {
            // The skyline is not a pass over the order (see `skyline`).
            for g in Greedy::all().filter(|g| g.fit != Fit::Skyline) {
                let o = order(&p, g.order);
                let grouped = Placer::with_min_group(&p, g.fit, min_group).place(&o, None).unwrap();
                // Reference: one pass, overlaps found by scanning every placed buffer.
                let b = p.buffers();
                let mut offsets: Vec<Option<u64>> = b.iter().map(|x| x.fixed_offset).collect();
                for &i in &o {
                    let mut occ: Vec<(u64, u64)> = b
                        .iter()
                        .zip(&offsets)
                        .filter(|(x, off)| off.is_some() && x.overlaps_in_time(&b[i.index()]))
                        .map(|(x, off)| (off.unwrap(), off.unwrap() + x.size))
                        .collect();
                    occ.sort_unstable();
                    let x = &b[i.index()];
                    offsets[i.index()] = Some(match g.fit {
                        Fit::FirstFit | Fit::Skyline => first_fit(&occ, x.size, x.alignment),
                        Fit::BestFit => best_fit(&occ, x.size, x.alignment),
                    });
                }
                let reference: Vec<u64> = offsets.into_iter().map(|o| o.unwrap()).collect();
                prop_assert_eq!(grouped.offsets(), &reference[..]);
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
