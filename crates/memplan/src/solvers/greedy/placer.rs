//! The placer: fixed buffers first, then the buffers of an order one by
//! one, in independent time groups ([`Placer`]). What a placement cut
//! short by the clock becomes is the anytime harness's
//! ([`crate::solvers::anytime`]).

use crate::stop::{Cut, Stop};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::geometry::gaps::{best_free, first_free, PieceConflicts};
use crate::geometry::occupancy::Occupancy;
use crate::geometry::sort::sort;
use crate::geometry::time_tree::TimeTree;
use crate::plan::Plan;
use crate::problem::Problem;

use super::groups::{group_tree, GroupContext, GroupEnd, DENSE_CONFLICTS};
use super::Fit;

/// Places the fixed buffers, then the buffers of `order` one by one with
/// `fit`. With `limit`, stops and returns `None` as soon as a buffer would
/// end above it (idealloc §5.5 early stopping). Buffers that are neither
/// fixed nor in `order` get offset 0.
///
/// Buffers in different [time groups](crate::geometry::sweep::time_groups) never compete for addresses, so the
/// groups are placed independently (in parallel); the plan is exactly the
/// one a single pass over `order` gives.
pub fn place(problem: &Problem, order: &[BufferIdx], fit: Fit, limit: Option<u64>) -> Option<Plan> {
    // Nothing cuts the never-stop token: `ok()` only satisfies the type.
    let never = Stop::never();
    Placer::new(problem, fit, &never)
        .ok()?
        .place(order, limit, &never)
}

/// Everything about placement that does not depend on the order: the
/// [`Occupancy`] index (buffers by start time, in independent time groups)
/// and, for dense groups under first-fit, a [`TimeTree`] with the fixed
/// buffers already placed. Build once, then [`Placer::place`] many orders
/// (idealloc's iterations), also at the same time from several threads.
#[derive(Clone, Debug)]
pub struct Placer<'p> {
    pub(crate) problem: &'p Problem,
    pub(crate) fit: Fit,
    /// With gaps (first-fit and best-fit): what each buffer forbids the
    /// others; the occupancy is then unused.
    pub(crate) pieces: Option<PieceConflicts>,
    pub(crate) occupancy: Occupancy,
    /// Per group of the occupancy: the tree template of a dense group.
    pub(crate) trees: Vec<Option<TimeTree>>,
    /// Whether some buffer needs an alignment other than 1.
    pub(crate) aligned: bool,
}

impl Drop for Placer<'_> {
    /// The index of millions of buffers takes tens of milliseconds to
    /// free, which a stop may not wait: it goes to the disposal thread.
    fn drop(&mut self) {
        let len = self.problem.len();
        let index = (
            std::mem::take(&mut self.occupancy),
            std::mem::take(&mut self.trees),
            self.pieces.take(),
        );
        drop_later(index, len);
    }
}

impl<'p> Placer<'p> {
    /// Prepares placement with `fit`; `Err` once `stop` cuts, checked
    /// while the index is built ([`Occupancy::of_buffers`]) and between the
    /// trees of dense groups.
    pub fn new(problem: &'p Problem, fit: Fit, stop: &Stop) -> Result<Self, Cut> {
        // Small groups are merged: a parallel task per handful of buffers
        // costs more than it saves.
        Self::with_min_group(problem, fit, 4096, stop)
    }

    pub(crate) fn with_min_group(
        problem: &'p Problem,
        fit: Fit,
        min_group: usize,
        stop: &Stop,
    ) -> Result<Self, Cut> {
        stop.check()?;
        let buffers = problem.buffers();
        // With gaps, first-fit and best-fit place pieces.
        let pieces = if problem.has_gaps() && fit != Fit::Skyline {
            Some(PieceConflicts::new(
                problem.buffers(),
                problem.gaps(),
                stop,
            )?)
        } else {
            None
        };
        // The skyline keeps its own state (see `place`).
        let occupancy = if fit == Fit::Skyline || pieces.is_some() {
            Occupancy::default()
        } else {
            Occupancy::of_buffers(buffers, min_group, stop)?
        };
        // A tree cut by the stop is left out (`None`, as for a sparse
        // group): the placer is given up just below.
        let trees = occupancy
            .groups()
            .par_iter()
            .map(|&(from, to)| {
                (fit == Fit::FirstFit
                    && !stop.is_cut()
                    && occupancy.mean_conflicts(from, to) > DENSE_CONFLICTS)
                    .then(|| group_tree(buffers, &occupancy, from, to, stop))
                    .flatten()
            })
            .collect();
        // A pass over every buffer (tens of milliseconds at 5M), in
        // parallel chunks that poll the stop.
        let aligned = buffers
            .par_chunks(Stop::EVERY)
            .map(|chunk| {
                stop.check()
                    .map(|()| chunk.iter().any(|b| b.alignment != 1))
            })
            .try_reduce(|| false, |a, b| Ok(a || b))?;
        stop.check()?;
        Ok(Placer {
            problem,
            fit,
            pieces,
            occupancy,
            trees,
            aligned,
        })
    }

    /// The problem's max load from the index (no sort), or `None` once
    /// `stop` cuts (checked between its passes) or without an index.
    pub fn max_load(&self, stop: &Stop) -> Option<u64> {
        if self.occupancy.len() != self.problem.len() || self.problem.has_gaps() || stop.is_cut() {
            return None;
        }
        let buffers = self.problem.buffers();
        let occ = &self.occupancy;
        occ.max_load(|b| buffers[b as usize].size, stop).ok()
    }

    /// Places the fixed buffers, then the buffers of `order` one by one. With
    /// `limit`, stops and returns `None` as soon as a buffer would end above
    /// it (idealloc §5.5 early stopping). Buffers that are neither fixed nor
    /// in `order` get offset 0. Also gives up (`None`) once `stop` cuts,
    /// checked every [`Stop::EVERY_COSTLY`] buffers.
    pub fn place(&self, order: &[BufferIdx], limit: Option<u64>, stop: &Stop) -> Option<Plan> {
        if self.fit == Fit::Skyline {
            // Not one buffer at a time: each row takes the buffers that fit.
            return crate::solvers::greedy::skyline::place(self.problem, order, limit, stop);
        }
        if let Some(pieces) = &self.pieces {
            let (offsets, end) = self.place_pieces(pieces, order, limit, stop);
            return (end == GroupEnd::Done)
                .then(|| Plan::from_offsets(offsets.iter().map(|o| o.unwrap_or(0)).collect()));
        }
        let run = self.run(order, limit, stop)?;
        if run.ends.iter().any(|end| *end != GroupEnd::Done) {
            return None;
        }
        let occ = &self.occupancy;
        let offsets = (0..self.problem.len() as u32)
            .map(|b| run.ranges[occ.position(b) as usize].0)
            .collect();
        Some(Plan::from_offsets(offsets))
    }

    /// Places the fixed buffers, then those of `order` one by one, each at
    /// the lowest (first-fit) or tightest (best-fit) offset its pieces
    /// allow among the buffers placed before it: the offsets (`None`:
    /// not placed) and how it ended. Sequential: O(P log P) for P
    /// conflicting piece pairs.
    pub(crate) fn place_pieces(
        &self,
        pieces: &PieceConflicts,
        order: &[BufferIdx],
        limit: Option<u64>,
        stop: &Stop,
    ) -> (Vec<Option<u64>>, GroupEnd) {
        let buffers = self.problem.buffers();
        let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.fixed_offset).collect();
        let mut forbidden = Vec::new();
        for (k, &b) in order.iter().enumerate() {
            let buf = &buffers[b.index()];
            if buf.fixed_offset.is_some() {
                continue;
            }
            if stop.every_costly(k).is_err() {
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
    pub(crate) fn run(&self, order: &[BufferIdx], limit: Option<u64>, stop: &Stop) -> Option<Run> {
        self.run_batched(order, limit, stop).map(|(run, _)| run)
    }

    /// [`Placer::run`], and the longest batch that a group placed at once
    /// ([`GroupContext::place_group`]; 0 for none).
    pub(crate) fn run_batched(
        &self,
        order: &[BufferIdx],
        limit: Option<u64>,
        stop: &Stop,
    ) -> Option<(Run, usize)> {
        let buffers = self.problem.buffers();
        let occ = &self.occupancy;
        let n = buffers.len();
        // Each buffer's rank in the order, from 1 (u32::MAX: not in it).
        let mut rank = vec![u32::MAX; n];
        for (r, b) in order.iter().enumerate() {
            if stop.every(r).is_err() {
                return None;
            }
            rank[b.index()] = r as u32 + 1;
        }
        // By position, in parallel: the rank (fixed buffers 0, buffers not
        // in the order never count as placed) and the address range, whose
        // length is the size before placement too.
        let mut stamps = vec![(0u32, 0u32); n];
        let mut ranges = vec![(0u64, 0u64); n];
        let done = stamps
            .par_chunks_mut(Stop::EVERY)
            .zip(ranges.par_chunks_mut(Stop::EVERY))
            .enumerate()
            .try_for_each(|(k, (stamps, ranges))| {
                if stop.is_cut() {
                    return None;
                }
                let from = (k * Stop::EVERY) as u32;
                for ((stamp, range), p) in stamps.iter_mut().zip(ranges).zip(from..) {
                    let b = occ.buffer_at(p) as usize;
                    let buf = &buffers[b];
                    let offset = buf.fixed_offset.unwrap_or(0);
                    *range = (offset, offset + buf.size);
                    let r = if buf.fixed_offset.is_some() {
                        0
                    } else {
                        rank[b]
                    };
                    *stamp = (occ.compressed(p).1, r);
                }
                Some(())
            });
        drop_later(rank, n);
        done?;
        // Each group's work: positions (and buffers) in the order.
        let groups = occ.groups();
        let free = |b: &BufferIdx| buffers[b.index()].fixed_offset.is_none();
        let work: Vec<Vec<(u32, u32)>> = if groups.len() == 1 {
            // One group (random instances): in parallel chunks.
            let chunks: Option<Vec<Vec<(u32, u32)>>> = order
                .par_chunks(Stop::EVERY)
                .map(|chunk| {
                    (!stop.is_cut()).then(|| {
                        chunk
                            .iter()
                            .filter(|b| free(b))
                            .map(|b| (occ.position(b.0), b.0))
                            .collect()
                    })
                })
                .collect();
            vec![chunks?.concat()]
        } else {
            // Several groups (in parallel): each one's positions in the
            // order, sorted by rank.
            let stamps = &stamps;
            groups
                .par_iter()
                .map(|&(from, to)| {
                    let mut keyed: Vec<(u32, u32)> = Vec::new();
                    for p in from..to {
                        if stop.every(p as usize).is_err() {
                            return None;
                        }
                        let rank = stamps[p as usize].1;
                        if rank != 0 && rank != u32::MAX {
                            keyed.push((rank, p));
                        }
                    }
                    sort(&mut keyed, stop).ok()?;
                    // In place: (rank, position) becomes (position, buffer).
                    for item in &mut keyed {
                        *item = (item.1, occ.buffer_at(item.1));
                    }
                    Some(keyed)
                })
                .collect::<Option<_>>()?
        };
        // Disjoint slices of the ranges, one per group.
        let mut slices = Vec::with_capacity(groups.len());
        let mut rest = &mut ranges[..];
        for &(from, to) in groups {
            let (slice, tail) = rest.split_at_mut((to - from) as usize);
            slices.push(slice);
            rest = tail;
        }
        // A group over the limit raises `over`, which cuts the others.
        let over = Arc::new(AtomicBool::new(false));
        let stop = stop.with(over.clone());
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
        let (ends, batches): (Vec<GroupEnd>, Vec<usize>) = slices
            .into_par_iter()
            .zip(groups.par_iter())
            .zip(work.par_iter())
            .zip(self.trees.par_iter())
            .map(|(((slice, &(from, _)), work), tree)| {
                let (end, longest_batch) = context.place_group(slice, from, work, tree.as_ref());
                if end == GroupEnd::OverLimit {
                    over.store(true, Ordering::Relaxed);
                }
                (end, longest_batch)
            })
            .unzip();
        let run = Run {
            ranges,
            stamps,
            work,
            ends,
        };
        Some((run, batches.into_iter().max().unwrap_or(0)))
    }
}

/// A placement of the groups by [`Placer::run`].
pub(crate) struct Run {
    /// Address range by position.
    pub(crate) ranges: Vec<(u64, u64)>,
    /// (Compressed end, rank) by position.
    pub(crate) stamps: Vec<(u32, u32)>,
    /// Per group, the (position, buffer) pairs in the order.
    pub(crate) work: Vec<Vec<(u32, u32)>>,
    /// How each group ended.
    pub(crate) ends: Vec<GroupEnd>,
}

impl Run {
    /// Whether the clock left some buffer of the order unplaced.
    pub(crate) fn cut(&self) -> bool {
        self.ends
            .iter()
            .zip(&self.work)
            .any(|(end, work)| matches!(*end, GroupEnd::Stopped(k) if k < work.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::problem::Buffer;
    use crate::solvers::greedy::tests::{arb_problem, plain_pass};
    use crate::solvers::greedy::{order, Greedy, Order};
    use proptest::prelude::*;

    #[test]
    fn batched_placement_equals_a_plain_pass() {
        // Large enough for batches (and their refits: layered buffers of
        // one step compete for the same gaps), with fixed and aligned
        // buffers, with addresses below 2^32 (the packed scan by marks)
        // and past it (no packed sort).
        use crate::generate::{generate, Kind};
        for (kind, seed) in [(Kind::Random, 1), (Kind::Layered, 2), (Kind::Trace, 3)] {
            let base = generate(kind, 1500, seed).problem;
            let with_fixed = |fixed: &dyn Fn(u64) -> u64| {
                let mut buffers = base.buffers().to_vec();
                for (i, b) in buffers.iter_mut().enumerate() {
                    if i % 97 == 0 {
                        b.fixed_offset = Some(fixed(i as u64));
                    } else if i % 7 == 0 {
                        b.alignment = 64;
                    }
                }
                Problem::new(buffers, None).unwrap()
            };
            // Fixed buffers apart by the largest size, or past 2^32.
            let stride = base.buffers().iter().map(|b| b.size).max().unwrap();
            assert!(stride * 16 < 1 << 31, "{stride}");
            let low = with_fixed(&|i| i / 97 * stride);
            let p = with_fixed(&|i| 1 << 20 | i << 24);
            let huge: Vec<Buffer> = base
                .buffers()
                .iter()
                .map(|b| Buffer::new(b.id.clone(), b.start, b.end, b.size << 24))
                .collect();
            let huge = Problem::new(huge, None).unwrap();
            for p in [&low, &p, &huge] {
                for fit in [Fit::FirstFit, Fit::BestFit] {
                    let o = order(p, Order::Size, &Stop::never()).unwrap();
                    let plan = Placer::with_min_group(p, fit, 64, &Stop::never())
                        .unwrap()
                        .place(&o, None, &Stop::never())
                        .unwrap();
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

    #[test]
    fn long_batches_equal_a_plain_pass() {
        // Few buffers alive together, sizes competing for the same
        // addresses: batches grow to their longest, and some buffers of a
        // batch are refitted.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let buffers: Vec<Buffer> = (0..8000)
            .map(|i| {
                let start = rng.gen_range(0..1_000_000u64);
                let len = rng.gen_range(1..150u64);
                let mut b = Buffer::new(
                    format!("b{i}"),
                    start,
                    start + len,
                    rng.gen_range(1..1u64 << 16),
                );
                if i % 9 == 0 {
                    b.alignment = 128;
                }
                b
            })
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        for fit in [Fit::FirstFit, Fit::BestFit] {
            let o = order(&p, Order::Size, &Stop::never()).unwrap();
            let placer = Placer::with_min_group(&p, fit, usize::MAX, &Stop::never()).unwrap();
            let plan = placer.place(&o, None, &Stop::never()).unwrap();
            validate(&p, &plan).unwrap();
            assert_eq!(plan.offsets(), &plain_pass(&p, &o, fit)[..], "{fit:?}");
            // The placement's own pass, measured: batches of the longest.
            let (run, longest_batch) = placer.run_batched(&o, None, &Stop::never()).unwrap();
            assert!(run.ends.iter().all(|end| *end == GroupEnd::Done));
            assert_eq!(longest_batch, 1024, "{fit:?}");
        }
    }

    proptest! {
        #[test]
        fn grouped_placement_equals_a_plain_pass(p in arb_problem(), min_group in 1usize..8) {
            // The skyline is not a pass over the order (see `skyline`).
            for g in Greedy::all().filter(|g| g.fit != Fit::Skyline) {
                let o = order(&p, g.order, &Stop::never()).unwrap();
                let grouped = Placer::with_min_group(&p, g.fit, min_group, &Stop::never()).unwrap().place(&o, None, &Stop::never()).unwrap();
                prop_assert_eq!(grouped.offsets(), &plain_pass(&p, &o, g.fit)[..]);
            }
        }
    }
}
