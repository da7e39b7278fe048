//! Greedy solvers: sort the buffers, then place each at the lowest (first-fit)
//! or tightest (best-fit) gap among the already placed buffers it overlaps in
//! time (idealloc §2.2; the first-fit note). Fixed buffers are placed first.
//!
//! Cost: O(n log n + P log P) where P is the number of time-overlapping pairs
//! between buffers, thanks to the [`Occupancy`] index.

pub mod fallback;
pub mod skyline;

use std::cmp::Reverse;

use rayon::prelude::*;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::buffer::BufferIdx;
use crate::geometry::fit::{align_up, best_fit, first_fit};
use crate::geometry::gaps::{best_free, first_free, PieceConflicts};
use crate::geometry::occupancy::{Occupancy, Span};
use crate::geometry::sweep::LoadProfile;
use crate::geometry::time_tree::TimeTree;
use crate::plan::Plan;
use crate::problem::Hints;
use crate::problem::{Buffer, Problem};
use crate::solver::{NotFoundReason, Solution, SolveError, SolveOptions, Solver};

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

    /// First-fit and best-fit place the pieces of buffers with gaps
    /// ([`crate::geometry::gaps::PieceConflicts`]); the skyline places hulls.
    fn gap_aware(&self) -> bool {
        self.fit != Fit::Skyline
    }

    /// Places every buffer. With a time limit (or a cancel flag), the
    /// placement stops when it passes and the buffers left are placed by
    /// [`fallback::complete`] above the others: the plan is always
    /// complete and valid, and the counter `fallback` (only present then)
    /// says how many buffers the clock left to it.
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let deadline = options.deadline();
        // One after the other (each is parallel inside): at a million
        // buffers, their working memory at once would double the peak.
        let order = order(problem, self.order);
        let placer = Placer::new(problem, self.fit);
        let max_load = placer.max_load();
        let (plan, fallback) = placer.place_within(&order, &|| deadline.passed());
        let reason = if fallback > 0 {
            NotFoundReason::TimeLimit
        } else {
            NotFoundReason::Heuristic
        };
        let counters = if fallback > 0 {
            vec![("fallback", fallback as u64)]
        } else {
            Vec::new()
        };
        Solution::within_capacity_counted(problem, plan, max_load, reason, counters)
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
    // Every buffer, fixed ones last: an exact-size collect (a filtered
    // one gathers pieces and copies them, twice the memory).
    let mut keyed: Vec<(bool, K, BufferIdx)> = buffers
        .par_iter()
        .enumerate()
        .map(|(i, b)| (b.fixed_offset.is_some(), key(b, i), BufferIdx::new(i)))
        .collect();
    keyed.par_sort_unstable();
    let free = keyed.partition_point(|k| !k.0);
    keyed.truncate(free);
    keyed.into_iter().map(|(_, _, b)| b).collect()
}

/// Places the fixed buffers, then the buffers of `order` one by one with
/// `fit`. With `limit`, stops and returns `None` as soon as a buffer would
/// end above it (idealloc §5.5 early stopping). Buffers that are neither
/// fixed nor in `order` get offset 0.
///
/// Buffers in different [time groups](crate::geometry::sweep::time_groups) never compete for addresses, so the
/// groups are placed independently (in parallel); the plan is exactly the
/// one a single pass over `order` gives.
pub fn place(problem: &Problem, order: &[BufferIdx], fit: Fit, limit: Option<u64>) -> Option<Plan> {
    Placer::new(problem, fit).place(order, limit)
}

/// Everything about placement that does not depend on the order: the
/// [`Occupancy`] index (buffers by start time, in independent time groups)
/// and, for dense groups under first-fit, a [`TimeTree`] with the fixed
/// buffers already placed. Build once, then [`Placer::place`] many orders
/// (idealloc's iterations), also at the same time from several threads.
#[derive(Clone, Debug)]
pub struct Placer<'p> {
    problem: &'p Problem,
    fit: Fit,
    /// With gaps (first-fit and best-fit): what each buffer forbids the
    /// others; the occupancy is then unused.
    pieces: Option<PieceConflicts>,
    occupancy: Occupancy,
    /// Per group of the occupancy: the tree template of a dense group.
    trees: Vec<Option<TimeTree>>,
    /// Whether some buffer needs an alignment other than 1.
    aligned: bool,
}

impl<'p> Placer<'p> {
    /// Prepares placement with `fit`.
    pub fn new(problem: &'p Problem, fit: Fit) -> Self {
        // Small groups are merged: a parallel task per handful of buffers
        // costs more than it saves.
        Self::with_min_group(problem, fit, 4096)
    }

    fn with_min_group(problem: &'p Problem, fit: Fit, min_group: usize) -> Self {
        let buffers = problem.buffers();
        // With gaps, first-fit and best-fit place pieces.
        let pieces = (problem.has_gaps() && fit != Fit::Skyline)
            .then(|| PieceConflicts::new(problem.buffers(), problem.gaps()));
        // The skyline keeps its own state (see `place_until`).
        let occupancy = if fit == Fit::Skyline || pieces.is_some() {
            Occupancy::default()
        } else {
            Occupancy::of_buffers(buffers, min_group)
        };
        let trees = occupancy
            .groups()
            .par_iter()
            .map(|&(from, to)| {
                (fit == Fit::FirstFit && occupancy.mean_conflicts(from, to) > DENSE_CONFLICTS)
                    .then(|| group_tree(buffers, &occupancy, from, to))
            })
            .collect();
        Placer {
            problem,
            fit,
            pieces,
            occupancy,
            trees,
            aligned: buffers.iter().any(|b| b.alignment != 1),
        }
    }

    /// The problem's max load, from the index when there is one (no sort).
    pub fn max_load(&self) -> u64 {
        if self.occupancy.len() == self.problem.len() && !self.problem.has_gaps() {
            let buffers = self.problem.buffers();
            let occ = &self.occupancy;
            occ.max_load(|p| buffers[occ.buffer_at(p) as usize].size)
        } else {
            self.problem.max_load()
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
            return crate::solvers::greedy::skyline::place(self.problem, order, limit, stop);
        }
        if let Some(pieces) = &self.pieces {
            let (offsets, end) = self.place_pieces(pieces, order, limit, stop);
            return (end == GroupEnd::Done)
                .then(|| Plan::from_offsets(offsets.iter().map(|o| o.unwrap_or(0)).collect()));
        }
        let run = self.run(order, limit, stop);
        if run.ends.iter().any(|end| *end != GroupEnd::Done) {
            return None;
        }
        let occ = &self.occupancy;
        let offsets = (0..self.problem.len() as u32)
            .map(|b| run.ranges[occ.position(b) as usize].0)
            .collect();
        Some(Plan::from_offsets(offsets))
    }

    /// [`Placer::place`] within a deadline: once `stop()` holds (checked
    /// every `STOP_CHECK` buffers), the buffers not placed yet are placed
    /// by [`fallback::complete`] above the others, in linear time. Returns
    /// the plan, always complete and valid, and how many buffers the
    /// fallback placed (0 when the placement finished).
    pub fn place_within(
        &self,
        order: &[BufferIdx],
        stop: &(dyn Fn() -> bool + Sync),
    ) -> (Plan, usize) {
        let problem = self.problem;
        let buffers = problem.buffers();
        if let Some(pieces) = &self.pieces {
            let (mut offsets, _) = self.place_pieces(pieces, order, None, stop);
            // Cut short: the buffers left go above everything, in order.
            let mut top = buffers
                .iter()
                .zip(&offsets)
                .filter_map(|(b, o)| o.map(|o| o + b.size))
                .max()
                .unwrap_or(0);
            let mut count = 0;
            for &b in order {
                if offsets[b.index()].is_none() {
                    let buf = &buffers[b.index()];
                    let offset = align_up(top, buf.alignment);
                    offsets[b.index()] = Some(offset);
                    top = offset + buf.size;
                    count += 1;
                }
            }
            let offsets = offsets.iter().map(|o| o.unwrap_or(0)).collect();
            return (Plan::from_offsets(offsets), count);
        }
        let (mut ranges, skip, occupancy) = if self.fit == Fit::Skyline {
            if let Some(plan) = crate::solvers::greedy::skyline::place(problem, order, None, stop) {
                return (plan, 0);
            }
            // The skyline keeps no partial plan: everything but the fixed
            // buffers goes to the fallback, which needs the index.
            let occ = Occupancy::of_buffers(buffers, usize::MAX);
            let mut skip = vec![true; buffers.len()];
            for b in order {
                skip[occ.position(b.0) as usize] = buffers[b.index()].fixed_offset.is_some();
            }
            let ranges = (0..buffers.len() as u32)
                .map(|p| {
                    let b = &buffers[occ.buffer_at(p) as usize];
                    let offset = b.fixed_offset.unwrap_or(0);
                    (offset, offset + b.size)
                })
                .collect();
            (ranges, skip, std::borrow::Cow::Owned(occ))
        } else {
            let run = self.run(order, None, stop);
            let occ = &self.occupancy;
            // By position: placed (fixed, or ranked before the first buffer
            // of its group the clock left), or not in the order (offset 0,
            // as in a finished placement).
            let mut skip = vec![true; buffers.len()];
            for ((end, work), &(from, to)) in run.ends.iter().zip(&run.work).zip(occ.groups()) {
                let cut = match *end {
                    GroupEnd::Stopped(k) if k < work.len() => run.stamps[work[k].0 as usize].1,
                    _ => u32::MAX,
                };
                let (from, to) = (from as usize, to as usize);
                for (skip, &(_, rank)) in skip[from..to].iter_mut().zip(&run.stamps[from..to]) {
                    *skip = rank == u32::MAX || rank < cut;
                }
            }
            (run.ranges, skip, std::borrow::Cow::Borrowed(occ))
        };
        let count = if skip.iter().all(|&x| x) {
            0
        } else {
            let alignment = |p: u32| {
                if self.aligned {
                    buffers[occupancy.buffer_at(p) as usize].alignment
                } else {
                    1
                }
            };
            fallback::complete(&occupancy, &mut ranges, &skip, &alignment)
        };
        let offsets = (0..buffers.len() as u32)
            .map(|b| ranges[occupancy.position(b) as usize].0)
            .collect();
        (Plan::from_offsets(offsets), count)
    }

    /// Places the fixed buffers, then those of `order` one by one, each at
    /// the lowest (first-fit) or tightest (best-fit) offset its pieces
    /// allow among the buffers placed before it: the offsets (`None`:
    /// not placed) and how it ended. Sequential: O(P log P) for P
    /// conflicting piece pairs.
    fn place_pieces(
        &self,
        pieces: &PieceConflicts,
        order: &[BufferIdx],
        limit: Option<u64>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> (Vec<Option<u64>>, GroupEnd) {
        let buffers = self.problem.buffers();
        let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.fixed_offset).collect();
        let mut forbidden = Vec::new();
        for (k, &b) in order.iter().enumerate() {
            let buf = &buffers[b.index()];
            if buf.fixed_offset.is_some() {
                continue;
            }
            if k % STOP_CHECK == 0 && stop() {
                return (offsets, GroupEnd::Stopped(k));
            }
            pieces.forbidden(b, &offsets, &mut forbidden);
            let offset = match self.fit {
                Fit::BestFit => best_free(&forbidden, buf.alignment),
                Fit::FirstFit | Fit::Skyline => first_free(&forbidden, 0, buf.alignment),
            };
            if limit.is_some_and(|l| offset + buf.size > l) {
                return (offsets, GroupEnd::OverLimit);
            }
            offsets[b.index()] = Some(offset);
        }
        (offsets, GroupEnd::Done)
    }

    /// Places the groups in parallel: the address ranges by position, the
    /// work of each group (positions and buffers in the order) and how each
    /// ended. A group over the limit stops the others.
    fn run(
        &self,
        order: &[BufferIdx],
        limit: Option<u64>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Run {
        let buffers = self.problem.buffers();
        let occ = &self.occupancy;
        let n = buffers.len();
        // By position: the rank in the order (fixed buffers 0, buffers not
        // in the order never count as placed) and the address range, whose
        // length is the size before placement too.
        let mut stamps = occ.stamps();
        let mut ranges = vec![(0u64, 0u64); n];
        for (b, buf) in buffers.iter().enumerate() {
            let p = occ.position(b as u32) as usize;
            let offset = buf.fixed_offset.unwrap_or(0);
            ranges[p] = (offset, offset + buf.size);
            if buf.fixed_offset.is_some() {
                stamps[p].1 = 0;
            }
        }
        // Each group's work: positions (and buffers) in the order.
        let groups = occ.groups();
        let mut work: Vec<Vec<(u32, u32)>> = vec![Vec::new(); groups.len()];
        for (r, b) in order.iter().enumerate() {
            if buffers[b.index()].fixed_offset.is_some() {
                continue;
            }
            let p = occ.position(b.0);
            stamps[p as usize].1 = r as u32 + 1;
            let g = groups.partition_point(|&(_, to)| to <= p);
            work[g].push((p, b.0));
        }
        // Disjoint slices of the ranges, one per group.
        let mut slices = Vec::with_capacity(groups.len());
        let mut rest = &mut ranges[..];
        for &(from, to) in groups {
            let (slice, tail) = rest.split_at_mut((to - from) as usize);
            slices.push(slice);
            rest = tail;
        }
        let over = AtomicBool::new(false);
        let stop = || over.load(Ordering::Relaxed) || stop();
        let context = GroupContext {
            buffers,
            occupancy: occ,
            stamps: &stamps,
            fit: self.fit,
            aligned: self.aligned,
            hints: self.problem.hints(),
            hint_limit: limit.or(self.problem.capacity),
            limit,
            stop: &stop,
        };
        let ends = slices
            .into_par_iter()
            .zip(groups.par_iter())
            .zip(work.par_iter())
            .zip(self.trees.par_iter())
            .map(|(((slice, &(from, _)), work), tree)| {
                let end = context.place_group(slice, from, work, tree.as_ref());
                if end == GroupEnd::OverLimit {
                    over.store(true, Ordering::Relaxed);
                }
                end
            })
            .collect();
        Run {
            ranges,
            stamps,
            work,
            ends,
        }
    }
}

/// A placement of the groups by [`Placer::run`].
struct Run {
    /// Address range by position.
    ranges: Vec<(u64, u64)>,
    /// (Compressed end, rank) by position.
    stamps: Vec<(u32, u32)>,
    /// Per group, the (position, buffer) pairs in the order.
    work: Vec<Vec<(u32, u32)>>,
    /// How each group ended.
    ends: Vec<GroupEnd>,
}

/// How the placement of one group ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupEnd {
    /// Every buffer placed.
    Done,
    /// A buffer would have ended above the limit.
    OverLimit,
    /// `stop()` held after this many buffers of the group's work.
    Stopped(usize),
}

/// What placing one group needs besides its own slice of address ranges.
struct GroupContext<'a> {
    buffers: &'a [Buffer],
    occupancy: &'a Occupancy,
    /// Per position: (compressed end, rank in the order).
    stamps: &'a [(u32, u32)],
    fit: Fit,
    aligned: bool,
    /// Preferred offsets, tried before the fit ([`crate::hints`]).
    hints: Option<&'a Hints>,
    /// Hints ending above this are not tried (the limit or the capacity).
    hint_limit: Option<u64>,
    limit: Option<u64>,
    stop: &'a (dyn Fn() -> bool + Sync),
}

impl GroupContext<'_> {
    /// Places the group starting at position `from`: `work` lists its
    /// (position, buffer) pairs in order; fills `ranges` (the group's
    /// address ranges, by position). False when `limit` is exceeded or
    /// `stop()` holds.
    fn place_group(
        &self,
        ranges: &mut [(u64, u64)],
        from: u32,
        work: &[(u32, u32)],
        tree: Option<&TimeTree>,
    ) -> GroupEnd {
        match tree {
            Some(tree) => self.place_in_tree(ranges, from, work, tree.clone()),
            None => self.place_in_batches(ranges, from, work),
        }
    }

    /// The hint of buffer `b` (of `size` bytes) if it has one that ends
    /// within the limit and the capacity.
    #[inline]
    fn hint(&self, b: u32, size: u64) -> Option<u64> {
        let h = self.hints?.at(b as usize)?;
        (self.hint_limit.is_none_or(|l| h + size <= l)).then_some(h)
    }

    fn alignment(&self, b: u32) -> u64 {
        if self.aligned {
            self.buffers[b as usize].alignment
        } else {
            1
        }
    }

    /// Dense first-fit: one buffer at a time in the [`TimeTree`].
    fn place_in_tree(
        &self,
        ranges: &mut [(u64, u64)],
        from: u32,
        work: &[(u32, u32)],
        mut tree: TimeTree,
    ) -> GroupEnd {
        for (k, &(p, b)) in work.iter().enumerate() {
            if k % STOP_CHECK == 0 && (self.stop)() {
                return GroupEnd::Stopped(k);
            }
            let local = (p - from) as usize;
            let size = ranges[local].1 - ranges[local].0;
            let alignment = self.alignment(b);
            // The hint when it is free: the first fit at or above it is
            // the hint itself.
            let offset = match self.hint(b, size) {
                Some(h) if tree.first_fit(local as u32, size, alignment, h) == h => h,
                _ => tree.first_fit(local as u32, size, alignment, 0),
            };
            if self.limit.is_some_and(|l| offset + size > l) {
                return GroupEnd::OverLimit;
            }
            ranges[local] = (offset, offset + size);
            tree.place(local as u32, offset, size);
        }
        GroupEnd::Done
    }

    /// The offset of the buffer at position `p` among the buffers of rank
    /// below `r`: its hint if free, else by the group's fit; `top` is at
    /// least the end of every one of them.
    fn fit(
        &self,
        ranges: &[(u64, u64)],
        from: u32,
        (p, b): (u32, u32),
        r: u32,
        top: u64,
        conflicts: &mut Conflicts,
    ) -> u64 {
        let local = (p - from) as usize;
        let size = ranges[local].1 - ranges[local].0;
        let alignment = self.alignment(b);
        let positions = &mut conflicts.positions;
        positions.clear();
        self.occupancy.occupied_during(p, r, self.stamps, positions);
        if let Some(h) = self.hint(b, size) {
            let free = positions.iter().all(|&c| {
                let (o, e) = ranges[(c - from) as usize];
                e <= h || h + size <= o
            });
            if free {
                return h;
            }
        }
        if self.fit != Fit::BestFit && top <= u64::from(u32::MAX) {
            // Both ends fit in 32 bits: sort them as one word.
            let packed = &mut conflicts.packed;
            packed.clear();
            packed.extend(positions.iter().map(|&c| {
                let (o, e) = ranges[(c - from) as usize];
                o << 32 | e
            }));
            packed.sort_unstable();
            return first_fit_packed(packed, size, alignment);
        }
        let occupied = &mut conflicts.ranges;
        occupied.clear();
        occupied.extend(positions.iter().map(|&c| ranges[(c - from) as usize]));
        occupied.sort_unstable_by_key(|r| r.0);
        match self.fit {
            Fit::FirstFit | Fit::Skyline => first_fit(occupied, size, alignment),
            Fit::BestFit => best_fit(occupied, size, alignment),
        }
    }

    /// The [`Occupancy`] path, in batches of [`BATCH`] consecutive buffers
    /// of the order: each buffer's offset is first computed in parallel
    /// among the buffers placed before the batch, then the batch is
    /// committed in order; a buffer that an earlier one of the batch
    /// overlaps in time (and, for first-fit, in address) is fitted again.
    /// A first-fit offset computed without obstacles that turn out not to
    /// touch it is still the lowest feasible one, so the plan is exactly
    /// that of one buffer at a time. When refits are frequent (buffers of the
    /// same size competing for the same gaps), batches stop until they pay
    /// again.
    fn place_in_batches(
        &self,
        ranges: &mut [(u64, u64)],
        from: u32,
        work: &[(u32, u32)],
    ) -> GroupEnd {
        let mut conflicts = Conflicts::default();
        let mut guesses = vec![0u64; BATCH];
        // At least every end so far (the unplaced ranges hold their sizes).
        let mut top = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        // Recent refits per batched buffer, in 1/16ths; sequential stretch
        // left before batches are tried again.
        let (mut refit_rate, mut sequential) = (0u32, 0usize);
        let (mut k, mut next_poll) = (0, 0);
        while k < work.len() {
            if k >= next_poll {
                next_poll = k + STOP_CHECK;
                if (self.stop)() {
                    return GroupEnd::Stopped(k);
                }
            }
            if sequential > 0 || work.len() - k < BATCH {
                if let Some(&(ahead, _)) = work.get(k + PREFETCH) {
                    self.occupancy.prefetch(ahead, self.stamps);
                }
                let item = work[k];
                let r = self.stamps[item.0 as usize].1;
                let offset = self.fit(ranges, from, item, r, top, &mut conflicts);
                let Some(end) = self.commit(ranges, from, item.0, offset) else {
                    return GroupEnd::OverLimit;
                };
                top = top.max(end);
                sequential = sequential.saturating_sub(1);
                k += 1;
                continue;
            }
            let batch = &work[k..k + BATCH];
            // Only buffers placed before the batch count here.
            let before = self.stamps[batch[0].0 as usize].1;
            {
                let shared: &[(u64, u64)] = ranges;
                batch
                    .par_chunks(BATCH / 4)
                    .zip(guesses.par_chunks_mut(BATCH / 4))
                    .for_each(|(items, guesses)| {
                        let mut conflicts = Conflicts::default();
                        for (i, (&item, guess)) in items.iter().zip(guesses).enumerate() {
                            if let Some(&(ahead, _)) = items.get(i + PREFETCH) {
                                self.occupancy.prefetch(ahead, self.stamps);
                            }
                            *guess = self.fit(shared, from, item, before, top, &mut conflicts);
                        }
                    });
            }
            let mut refits = 0;
            for i in 0..BATCH {
                let (p, _) = batch[i];
                let local = (p - from) as usize;
                let size = ranges[local].1 - ranges[local].0;
                let (s, e) = self.occupancy.compressed(p);
                let mut offset = guesses[i];
                // First-fit keeps its offset unless an obstacle touches
                // it; best-fit's tightest gap may change with any.
                let first_fit = self.fit != Fit::BestFit;
                let touched = batch[..i].iter().any(|&(q, _)| {
                    let (qs, qe) = self.occupancy.compressed(q);
                    let (o, x) = ranges[(q - from) as usize];
                    qs < e && s < qe && (!first_fit || (o < offset + size && offset < x))
                });
                if touched {
                    refits += 1;
                    let r = self.stamps[p as usize].1;
                    offset = self.fit(ranges, from, batch[i], r, top, &mut conflicts);
                }
                let Some(end) = self.commit(ranges, from, p, offset) else {
                    return GroupEnd::OverLimit;
                };
                top = top.max(end);
            }
            refit_rate = (refit_rate * 3 + refits * 16 / BATCH as u32) / 4;
            if refit_rate >= 4 {
                // A quarter refitted: the batches cost more than they save.
                sequential = 16 * BATCH;
                refit_rate = 0;
            }
            k += BATCH;
        }
        GroupEnd::Done
    }

    /// Records the buffer at position `p` at `offset` and returns its end;
    /// `None` when that is above the limit.
    fn commit(&self, ranges: &mut [(u64, u64)], from: u32, p: u32, offset: u64) -> Option<u64> {
        let local = (p - from) as usize;
        let size = ranges[local].1 - ranges[local].0;
        let end = offset + size;
        if self.limit.is_some_and(|l| end > l) {
            return None;
        }
        ranges[local] = (offset, end);
        Some(end)
    }
}

/// Working memory of [`GroupContext::fit`].
#[derive(Default)]
struct Conflicts {
    /// Positions of the placed buffers overlapping in time.
    positions: Vec<u32>,
    /// Address ranges.
    ranges: Vec<(u64, u64)>,
    /// Address ranges as `offset << 32 | end`, when both fit in 32 bits.
    packed: Vec<u64>,
}

/// How many buffers ahead [`GroupContext::place_in_batches`] prefetches.
const PREFETCH: usize = 4;

/// Buffers per batch of [`GroupContext::place_in_batches`].
const BATCH: usize = 64;

/// The first-fit tree of the group `[from, to)` of `occupancy` (indexed by
/// position minus `from`) with its fixed buffers placed.
fn group_tree(buffers: &[Buffer], occupancy: &Occupancy, from: u32, to: u32) -> TimeTree {
    let spans: Vec<Span> = (from..to)
        .map(|p| {
            let (start, end) = occupancy.compressed(p);
            let size = buffers[occupancy.buffer_at(p) as usize].size;
            Span {
                start: u64::from(start),
                end: u64::from(end),
                size,
            }
        })
        .collect();
    let mut tree = TimeTree::new(&spans);
    for p in from..to {
        let b = &buffers[occupancy.buffer_at(p) as usize];
        if let Some(offset) = b.fixed_offset {
            tree.place(p - from, offset, b.size);
        }
    }
    tree
}

/// How many buffers [`Placer::place_until`] places between two `stop()`
/// checks.
const STOP_CHECK: usize = 1024;

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
    mean_conflicts(problem.buffers()) > DENSE_CONFLICTS
}

/// Mean number of other buffers overlapping a buffer, in O(n log n): each
/// overlapping pair has its later start inside the other's lifetime. By
/// start order, the starts inside a lifetime follow its own, so they are
/// counted by a search outwards from there (lifetimes are mostly short).
fn mean_conflicts(buffers: &[Buffer]) -> u64 {
    let mut spans: Vec<(u64, u64)> = buffers.iter().map(|b| (b.start, b.end)).collect();
    spans.par_sort_unstable();
    let pairs: u64 = spans
        .par_iter()
        .enumerate()
        .map(|(p, &(_, end))| {
            // The first position at or after p starting at `end` or later.
            let (mut lo, mut step) = (p, 1);
            while lo + step < spans.len() && spans[lo + step].0 < end {
                lo += step;
                step *= 2;
            }
            let hi = (lo + step).min(spans.len());
            let to = lo + spans[lo..hi].partition_point(|s| s.0 < end);
            (to - p - 1) as u64
        })
        .sum();
    pairs / buffers.len().max(1) as u64
}

/// [`first_fit`](crate::geometry::fit::first_fit) of ranges packed as `offset << 32 | end`, sorted.
fn first_fit_packed(packed: &[u64], size: u64, alignment: u64) -> u64 {
    let mut candidate = 0;
    for &range in packed {
        let (offset, end) = (range >> 32, range & u64::from(u32::MAX));
        if offset >= candidate + size {
            break;
        }
        // The candidate is aligned, so an end below it changes nothing.
        candidate = candidate.max(align_up(end, alignment));
    }
    candidate
}

/// The best plan of every greedy variant (run in parallel), ties to the
/// first in [`Greedy::all`] order. On dense problems best-fit is skipped:
/// it costs seconds where first-fit and the skyline cost tenths (iopddl
/// S_1: 3.9 s for the ten first-fit and best-fit variants on 2 cores),
/// which the budget is better spent on. Once
/// `stop()` holds, unfinished variants are dropped; the default one
/// (size/first-fit) always returns a plan, completed by the fallback when
/// cut short ([`Placer::place_within`]).
pub fn best_variant(problem: &Problem, stop: &(dyn Fn() -> bool + Sync)) -> (Greedy, Plan) {
    let dense = is_dense(problem);
    let variants: Vec<Greedy> = Greedy::all()
        .filter(|g| !dense || g.fit != Fit::BestFit)
        .collect();
    best_of(problem, &variants, Some(Greedy::default()), stop)
        .unwrap_or_else(|| (Greedy::default(), Plan::default()))
}

/// The best plan of `variants` (run in parallel), ties to the first listed.
/// Once `stop()` holds, unfinished variants are dropped, except `finish`,
/// which [`Placer::place_within`] completes; `None` when every variant was
/// dropped.
pub fn best_of(
    problem: &Problem,
    variants: &[Greedy],
    finish: Option<Greedy>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<(Greedy, Plan)> {
    // The variant that must finish goes first, alone: on large instances
    // its setup and placement take the whole budget, which the others
    // would otherwise share.
    let finished = finish.map(|g| {
        let (order, placer) =
            rayon::join(|| order(problem, g.order), || Placer::new(problem, g.fit));
        (g, placer.place_within(&order, stop).0)
    });
    // One placer per fit and one order per order kind, shared by the
    // other variants; none is built once `stop()` holds.
    let others: Vec<Greedy> = variants
        .iter()
        .copied()
        .filter(|g| Some(*g) != finish)
        .collect();
    let mut fits: Vec<Fit> = others.iter().map(|g| g.fit).collect();
    let mut orders: Vec<Order> = others.iter().map(|g| g.order).collect();
    fits.sort_by_key(|f| *f as u8);
    fits.dedup();
    orders.sort_by_key(|o| *o as u8);
    orders.dedup();
    let (placers, sorted): (Vec<Option<Placer>>, Vec<Option<Vec<BufferIdx>>>) = rayon::join(
        || {
            fits.par_iter()
                .map(|&f| (!stop()).then(|| Placer::new(problem, f)))
                .collect()
        },
        || {
            orders
                .par_iter()
                .map(|&o| (!stop()).then(|| order(problem, o)))
                .collect()
        },
    );
    let mut plans: Vec<(u64, usize, Plan)> = others
        .par_iter()
        .filter_map(|g| {
            let placer = placers[fits.iter().position(|&f| f == g.fit)?].as_ref()?;
            let order = sorted[orders.iter().position(|&o| o == g.order)?].as_ref()?;
            let plan = if stop() {
                None
            } else {
                placer.place_until(order, None, stop)
            }?;
            let i = variants.iter().position(|v| v == g)?;
            Some((plan.makespan(problem), i, plan))
        })
        .collect();
    if let Some((g, plan)) = finished {
        let i = variants
            .iter()
            .position(|v| *v == g)
            .unwrap_or(variants.len());
        plans.push((plan.makespan(problem), i, plan));
    }
    plans
        .into_iter()
        .min_by_key(|(m, i, _)| (*m, *i))
        .map(|(_, i, plan)| {
            (
                variants.get(i).copied().or(finish).unwrap_or_default(),
                plan,
            )
        })
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

    /// Reference placement: one pass over `order`, the overlaps found by
    /// scanning every placed buffer.
    fn plain_pass(p: &Problem, order: &[BufferIdx], fit: Fit) -> Vec<u64> {
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

    #[test]
    fn batched_placement_equals_a_plain_pass() {
        // Large enough for batches (and their refits: layered buffers of
        // one step compete for the same gaps), with fixed and aligned
        // buffers, and with addresses past 2^32 (no packed sort).
        use crate::generate::{generate, Kind};
        for (kind, seed) in [(Kind::Random, 1), (Kind::Layered, 2), (Kind::Trace, 3)] {
            let base = generate(kind, 1500, seed).problem;
            let mut buffers = base.buffers().to_vec();
            for (i, b) in buffers.iter_mut().enumerate() {
                if i % 97 == 0 {
                    b.fixed_offset = Some(1 << 20 | (i as u64) << 24);
                } else if i % 7 == 0 {
                    b.alignment = 64;
                }
            }
            let p = Problem::new(buffers, None).unwrap();
            let huge: Vec<Buffer> = base
                .buffers()
                .iter()
                .map(|b| Buffer::new(b.id.clone(), b.start, b.end, b.size << 24))
                .collect();
            let huge = Problem::new(huge, None).unwrap();
            for p in [&p, &huge] {
                for fit in [Fit::FirstFit, Fit::BestFit] {
                    let o = order(p, Order::Size);
                    let plan = Placer::with_min_group(p, fit, 64).place(&o, None).unwrap();
                    validate(p, &plan).unwrap();
                    assert_eq!(
                        plan.offsets(),
                        &plain_pass(p, &o, fit)[..],
                        "{kind:?} {fit:?}"
                    );
                }
            }
        }
    }

    /// A generated instance with fixed and aligned buffers.
    fn mixed(kind: crate::generate::Kind, n: usize) -> Problem {
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

    #[test]
    fn a_placement_cut_midway_is_completed() {
        use std::sync::atomic::AtomicUsize;
        for kind in [crate::generate::Kind::Layered, crate::generate::Kind::Trace] {
            let p = mixed(kind, 6000);
            for fit in [Fit::FirstFit, Fit::BestFit] {
                let o = order(&p, Order::Size);
                let full = Placer::new(&p, fit).place(&o, None).unwrap();
                // Stop at the third poll: some buffers are placed first.
                let polls = AtomicUsize::new(0);
                let stop = || polls.fetch_add(1, Ordering::Relaxed) >= 2;
                let (plan, fallback) = Placer::with_min_group(&p, fit, 512).place_within(&o, &stop);
                assert_eq!(validate(&p, &plan), Ok(()), "{kind:?} {fit:?}");
                assert!(fallback > 0 && fallback < o.len(), "{fallback}");
                // The buffers placed before the cut kept their offsets.
                let same = (0..p.len())
                    .filter(|&i| plan.offsets()[i] == full.offsets()[i])
                    .count();
                assert!(same >= p.len() - fallback, "{kind:?} {fit:?}");
            }
        }
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
                prop_assert_eq!(grouped.offsets(), &plain_pass(&p, &o, g.fit)[..]);
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
