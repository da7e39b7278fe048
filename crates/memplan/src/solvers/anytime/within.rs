//! A greedy placement within a deadline: the placer's plan when it ends,
//! else, cut, the plan in hand made usable ([`plan_within`]). The cheap
//! plans that need no index ([`fallback::bucketed`], [`fallback::stacked`])
//! stand in before the index exists; the fallback's plan for every free
//! buffer is computed beside the order at scale, so that a cut has it
//! ready; a placement cut midway is completed above what it placed
//! ([`fallback::complete`]) when that is better and there is time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::stop::{uncut, Cut, Stop};

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::geometry::fit::align_up;
use crate::geometry::occupancy::Occupancy;
use crate::plan::Plan;
use crate::problem::Buffer;
use crate::solvers::greedy::groups::GroupEnd;
use crate::solvers::greedy::placer::Run;
use crate::solvers::greedy::{Fit, Order, Placer};

use super::fallback::{self, Method};

impl<'p> Placer<'p> {
    /// [`Placer::place`] within a deadline: once `stop` cuts (checked
    /// every [`Stop::EVERY_COSTLY`] buffers), the buffers not placed yet are placed
    /// by [`fallback::complete`] above the others, in linear time. Returns
    /// the plan, always complete and valid, and how many buffers the
    /// fallback placed (0 when the placement finished).
    pub fn place_within(&self, order: &[BufferIdx], stop: &Stop) -> (Plan, usize) {
        let (plan, count, _) = self.place_within_or(order, stop, stop, None, &Ahead::default());
        (plan, count)
    }

    /// The order `order` of the problem, sorted beside the plan of
    /// [`fallback::complete`] for every free buffer (on large problems,
    /// where computing it after a stop would take longer than a stop may
    /// wait), then [`Placer::place_within`] that order: a cut finds its
    /// fallback ready. Cut before the order is known, that fallback's plan
    /// (or [`Placer::place_none`]'s).
    pub fn place_order_within(&self, order: Order, stop: &Stop) -> (Plan, usize) {
        let placed =
            self.place_order_within_from(order, stop, stop, EARLY_FALLBACK_MIN, None, None);
        (placed.plan, placed.count)
    }

    /// [`Placer::place_order_within`], the fallback computed beside the
    /// order from `early_min` buffers on (and the max load, always), a
    /// cut's improvement on it abandoned once `settle` cuts
    /// ([`Placer::place_within_or`]); `prestacked`, the stacked plan
    /// computed ahead, is the plan when the fallback is cut. A plan `made`
    /// ahead for every free buffer (best fit's) stands in for the
    /// fallback and best fit's plan beside the order: neither is made.
    pub(super) fn place_order_within_from(
        &self,
        order: Order,
        stop: &Stop,
        settle: &Stop,
        early_min: usize,
        prestacked: Option<fallback::Stacked>,
        made: Option<FallbackPlan>,
    ) -> OrderPlaced {
        let early = self.problem.len() >= early_min && made.is_none();
        // The colouring's plan is made beside the order where a cut must
        // return the plan in hand at once (`settle` can cut): best fit's
        // would not be ready in time on a short limit. Elsewhere the
        // placement improves on a cut after it, and best fit's plan alone
        // is made ahead.
        let colour_early = early && settle.can_cut();
        // The stacked plan made ahead is kept until the fallback's is
        // ready: a stop before then returns it at once (stacking anew is a
        // pass over every buffer, most of what a stop may wait at
        // millions). Its 8 bytes a buffer are those the fallback saves by
        // colouring from sizes rather than address ranges
        // ([`Placer::columns`]), so the peak of memory stays where
        // it was.
        // Best fit's plan is made beside everything else from here on (on
        // the core the order and then the placement leave), for a stop to
        // take when it is lower; a placement that ends drops it.
        let done = Arc::new(AtomicBool::new(false));
        let ahead = Ahead::default();
        ahead.publish(made);
        let ((placed, max_load), ()) = rayon::join(
            || {
                let (sorted, (fallback, max_load)) = rayon::join(
                    || crate::solvers::greedy::order(self.problem, order, stop).ok(),
                    || {
                        rayon::join(
                            || {
                                if colour_early {
                                    self.fallback_plan(stop)
                                } else {
                                    Early::NotAsked
                                }
                            },
                            || self.max_load(stop),
                        )
                    },
                );
                let placed =
                    self.place_sorted_within(sorted, fallback, prestacked, stop, settle, &ahead);
                done.store(true, Ordering::Relaxed);
                (placed, max_load)
            },
            || {
                if early {
                    ahead.publish(self.best_fit_plan(&stop.with(done.clone())));
                }
            },
        );
        let fitted = ahead.take();
        OrderPlaced {
            max_load,
            ..self.lower_of(placed, fitted)
        }
    }

    /// The placement's plan, or best fit's when the placement was cut
    /// (its fallback placed some buffers) and best fit's is lower.
    fn lower_of(&self, placed: OrderPlaced, fitted: Option<FallbackPlan>) -> OrderPlaced {
        let Some(fitted) = fitted.filter(|_| placed.count > 0) else {
            return placed;
        };
        let makespan = placed
            .makespan
            .unwrap_or_else(|| placed.plan.makespan(self.problem));
        if fitted.top < makespan {
            drop_later(placed.plan, self.problem.len());
            let (plan, count, makespan) = fitted.measured();
            OrderPlaced {
                plan,
                count,
                stacked: false,
                makespan,
                max_load: None,
            }
        } else {
            drop_later(fitted.plan, self.problem.len());
            placed
        }
    }

    /// [`Placer::place_order_within_from`] without the early fallback, the
    /// order already sorted (`None`: cut), the max load known or not.
    pub(super) fn place_presorted_within(
        &self,
        sorted: Option<Vec<BufferIdx>>,
        max_load: Option<u64>,
        prestacked: Option<fallback::Stacked>,
        stop: &Stop,
        settle: &Stop,
    ) -> OrderPlaced {
        let max_load = max_load.or_else(|| self.max_load(stop));
        OrderPlaced {
            max_load,
            ..self.place_sorted_within(
                sorted,
                Early::NotAsked,
                prestacked,
                stop,
                settle,
                &Ahead::default(),
            )
        }
    }

    /// The rest of [`Placer::place_order_within_from`], given the order
    /// (`None`: cut) and the fallback computed beside it (the max load
    /// left to the caller): the stacked plan is
    /// [`fallback::stacked_measured`]'s, the `prestacked` one when given.
    fn place_sorted_within(
        &self,
        sorted: Option<Vec<BufferIdx>>,
        fallback: Early,
        prestacked: Option<fallback::Stacked>,
        stop: &Stop,
        settle: &Stop,
        ahead: &Ahead,
    ) -> OrderPlaced {
        let problem = self.problem;
        // Not needed once a better plan is in hand: freed off the path.
        let unneeded =
            |prestacked: Option<fallback::Stacked>| drop_later(prestacked, problem.len());
        let stacked = |prestacked: Option<fallback::Stacked>| {
            let (plan, count, makespan) = fallback::stacked_given(problem, prestacked);
            OrderPlaced {
                plan,
                count,
                stacked: true,
                makespan,
                max_load: None,
            }
        };
        let placed = |(plan, count, makespan): (Plan, usize, Option<u64>)| OrderPlaced {
            plan,
            count,
            stacked: false,
            makespan,
            max_load: None,
        };
        // A plan made ahead for every free buffer (best fit's) if one is
        // published, else the stacked plan.
        let made_or_stacked = |prestacked: Option<fallback::Stacked>| match ahead.take() {
            Some(made) => {
                unneeded(prestacked);
                placed(made.measured())
            }
            None => stacked(prestacked),
        };
        match (sorted, fallback) {
            // The fallback cut too (at millions of buffers it takes
            // tenths of a second on a busy machine): what is left of the
            // time allows only the stacked plan (one parallel pass, made
            // ahead at scale).
            (_, Early::Cut) => stacked(prestacked),
            // The skyline keeps no partial plan: cut on more than
            // `BUCKETED_MAX` buffers, its plan is the stacked one, whose
            // pass measures it (the solution then skips a pass of its own
            // after the stop).
            (Some(sorted), _)
                if self.fit == Fit::Skyline && self.problem.len() > fallback::BUCKETED_MAX =>
            {
                match crate::solvers::greedy::skyline::place(problem, &sorted, None, stop) {
                    Some(plan) => {
                        unneeded(prestacked);
                        placed((plan, 0, None))
                    }
                    None => made_or_stacked(prestacked),
                }
            }
            (Some(sorted), fallback) => {
                // The fallback is ready for a stop from here on.
                unneeded(prestacked);
                placed(self.place_within_or(&sorted, stop, settle, fallback.ready(), ahead))
            }
            (None, Early::Ready(fallback)) => {
                unneeded(prestacked);
                placed(fallback.measured())
            }
            // A plan made ahead for every free buffer (best fit's), in
            // hand at once: the fallback would take a pass after the stop.
            (None, _) if ahead.ready() => made_or_stacked(prestacked),
            // Without an index for the fallback, `place_none` would stack
            // (`prestacked` is made only where the stacked plan is
            // `bucketed_or_stacked`'s): the plan made ahead.
            (None, _) if self.place_none_stacks() && prestacked.is_some() => stacked(prestacked),
            (None, _) => {
                let (plan, count) = self.place_none();
                // The stacked plan made ahead, when lower (dyadic windows
                // can beat the colouring): never worse than a plan in hand.
                let makespan = plan.makespan(problem);
                match prestacked {
                    Some((_, _, Some(stacked_top))) if stacked_top < makespan => {
                        drop_later(plan, problem.len());
                        stacked(prestacked)
                    }
                    _ => {
                        unneeded(prestacked);
                        placed((plan, count, Some(makespan)))
                    }
                }
            }
        }
    }

    /// The fallback for every free buffer as a plan ([`Early::Ready`]),
    /// when the placer has the index it needs ([`Early::NoIndex`] with the
    /// skyline or gaps); [`Early::Cut`] once `stop` cuts (polled in its
    /// colouring and gathers).
    fn fallback_plan(&self, stop: &Stop) -> Early {
        if !self.has_fallback_plan() {
            return Early::NoIndex;
        }
        let ready = match self.cheap(Method::Colouring, stop) {
            None => None,
            // Where the colouring stacks instead: through the ranges.
            Some(None) => self
                .fallback_for_all(&self.occupancy, stop)
                .and_then(|(ranges, count)| {
                    let plan = self.by_buffer(&self.occupancy, &ranges, stop)?;
                    Ok(FallbackPlan {
                        top: top(&ranges),
                        plan,
                        count,
                    })
                })
                .ok(),
            Some(Some(cheap)) => self.cheap_plan(cheap, stop),
        };
        ready.map_or(Early::Cut, Early::Ready)
    }

    /// Best fit's plan for every free buffer ([`Method::BestFitAlone`]), made
    /// beside the order's sort and the placement; `None` when
    /// `stop` cuts it, past its work bound, or where the placer has no
    /// index for it.
    fn best_fit_plan(&self, stop: &Stop) -> Option<FallbackPlan> {
        if !self.has_fallback_plan() {
            return None;
        }
        let fitted = self.cheap(Method::BestFitAlone, stop)??;
        self.cheap_plan(fitted, stop)
    }

    /// The plan of a cheap placement for every free buffer, by buffer;
    /// `None` once `stop` cuts the gather.
    fn cheap_plan(&self, cheap: fallback::Cheap, stop: &Stop) -> Option<FallbackPlan> {
        let placed = self.cheap_by_buffer(&cheap, stop);
        let count = cheap.count();
        drop_later(cheap, self.problem.len());
        placed
            .ok()
            .map(|(plan, top)| FallbackPlan { plan, top, count })
    }

    /// [`fallback::cheap_for_all`] on the index by `method`: the
    /// fallback's offsets for every free buffer, as
    /// [`Placer::fallback_for_all`] gives them but with the sizes by
    /// position gathered (8 bytes a buffer) instead of address ranges
    /// (16): at millions of buffers, the memory the stacked plan made
    /// ahead takes while the fallback runs.
    fn cheap(&self, method: Method, stop: &Stop) -> Option<Option<fallback::Cheap>> {
        let buffers = self.problem.buffers();
        let occupancy = &self.occupancy;
        let (sizes, fixed) = self.gather_by_position(occupancy, |b| b.size, stop);
        let alignment = |p: u32| {
            if self.aligned {
                buffers[occupancy.buffer_at(p) as usize].alignment
            } else {
                1
            }
        };
        let columns = (!stop.is_cut())
            .then(|| {
                let fixed_end = self.problem.fixed_end();
                let (sizes, fixed) = (&sizes, &fixed);
                fallback::cheap_for_all(
                    occupancy, sizes, fixed, &alignment, fixed_end, method, stop,
                )
                .ok()
            })
            .flatten();
        // Freed off the path (tens of milliseconds at millions of buffers).
        drop_later((sizes, fixed), buffers.len());
        columns
    }

    /// The fallback's plan from its `cheap` offsets and its makespan, in
    /// chunks that check the token (`Err` once it cuts): a random gather,
    /// longer than a stop may wait at millions of buffers.
    fn cheap_by_buffer(&self, cheap: &fallback::Cheap, stop: &Stop) -> Result<(Plan, u64), Cut> {
        let buffers = self.problem.buffers();
        let mut offsets = vec![0u64; buffers.len()];
        let top = offsets
            .par_chunks_mut(GATHER_CHUNK)
            .zip(buffers.par_chunks(GATHER_CHUNK))
            .enumerate()
            .map(|(k, (offsets, chunk))| {
                stop.check()?;
                let mut top = 0;
                for (b, (offset, buf)) in (k * GATHER_CHUNK..).zip(offsets.iter_mut().zip(chunk)) {
                    *offset = buf.fixed_offset.unwrap_or_else(|| {
                        cheap.offset(self.occupancy.position(b as u32) as usize)
                    });
                    top = top.max(*offset + buf.size);
                }
                Ok(top)
            })
            .try_reduce(|| 0, |a, b| Ok(a.max(b)));
        match top {
            Ok(top) => Ok((Plan::from_offsets(offsets), top)),
            Err(cut) => {
                drop_later(offsets, buffers.len());
                Err(cut)
            }
        }
    }

    /// The plan of offsets by buffer from address ranges by position of
    /// `occupancy`: a random gather, in parallel chunks that check the
    /// token, `Err` once it cuts (at millions of buffers the gather takes
    /// longer than a stop may wait).
    fn by_buffer(
        &self,
        occupancy: &Occupancy,
        ranges: &[(u64, u64)],
        stop: &Stop,
    ) -> Result<Plan, Cut> {
        let mut offsets = vec![0u64; self.problem.len()];
        let gathered = offsets
            .par_chunks_mut(GATHER_CHUNK)
            .enumerate()
            .try_for_each(|(k, offsets)| {
                stop.check()?;
                let from = k * GATHER_CHUNK;
                for (b, offset) in (from..).zip(offsets.iter_mut()) {
                    *offset = ranges[occupancy.position(b as u32) as usize].0;
                }
                Ok(())
            });
        gathered.map(|()| Plan::from_offsets(offsets))
    }

    /// [`Placer::place_within`], with the fallback's plan for every free
    /// buffer already computed (or not). Cut with it in hand, the work
    /// that could only improve on it (the fallback above the placed
    /// buffers, a pass over them all)
    /// is abandoned once `settle` cuts (the caller's own deadline, past
    /// at once on an interrupt, so that a signal is answered promptly),
    /// and the plan in hand returned. Without one, a cut takes the plan
    /// made `ahead` beside it, if ready. The plan's makespan comes with it
    /// when known without a pass (the fallback's).
    fn place_within_or(
        &self,
        order: &[BufferIdx],
        stop: &Stop,
        settle: &Stop,
        mut fallback: Option<FallbackPlan>,
        ahead: &Ahead,
    ) -> (Plan, usize, Option<u64>) {
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
            return (Plan::from_offsets(offsets), count, None);
        }
        // Stopped already, the fallback in hand and no time to improve on
        // it: the run would be cut at once, after setting up its arrays
        // (tens of milliseconds at millions of buffers).
        if (fallback.is_some() || ahead.ready()) && stop.is_cut() && settle.is_cut() {
            if let Some(fallback) = fallback.take().or_else(|| ahead.take()) {
                return fallback.measured();
            }
        }
        let occupancy = if self.fit == Fit::Skyline {
            if let Some(plan) = crate::solvers::greedy::skyline::place(problem, order, None, stop) {
                return (plan, 0, None);
            }
            // The skyline keeps no partial plan: everything but the fixed
            // buffers goes to the fallback, which needs the index: built
            // after the deadline, so only when it is quick.
            if buffers.len() > FALLBACK_INDEX_MAX {
                let (plan, count) = fallback::bucketed_or_stacked(problem);
                return (plan, count, None);
            }
            std::borrow::Cow::Owned(uncut(|never| {
                Occupancy::of_buffers(buffers, usize::MAX, never)
            }))
        } else {
            std::borrow::Cow::Borrowed(&self.occupancy)
        };
        let run = if self.fit == Fit::Skyline {
            None
        } else {
            self.run(order, None, stop)
        };
        // Cut in the run, or in its setup (no run).
        let cut = run.as_ref().map_or(stop.is_cut(), Run::cut);
        if cut && fallback.is_none() {
            fallback = ahead.take();
        }
        if cut && fallback.is_some() && settle.is_cut() {
            if let Some(fallback) = fallback.take() {
                // The run's arrays (tens of bytes a buffer) are freed off
                // the stop's path.
                drop_later(run, buffers.len());
                return fallback.measured();
            }
        }
        let partial = run.map(|run| {
            let occ = &self.occupancy;
            // By position: placed (fixed, or ranked before the first
            // buffer of its group the clock left), or not in the order
            // (offset 0, as in a finished placement).
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
            (run.ranges, skip)
        });
        let (ranges, count, makespan) = match (partial, fallback) {
            (Some((ranges, skip)), _) if skip.iter().all(|&x| x) => (ranges, 0, None),
            (Some((mut ranges, skip)), Some(fallback)) => {
                // Cut midway, the fallback for all ready: it, unless the
                // fallback above what was placed does better (a longer
                // limit must never give a worse plan than a shorter one),
                // which it cannot when the placed buffers reach as high.
                let placed = ranges
                    .par_iter()
                    .zip(&skip)
                    .filter(|(_, &s)| s)
                    .map(|(r, _)| r.1)
                    .max()
                    .unwrap_or(0);
                if placed >= fallback.top {
                    return fallback.measured();
                }
                match self.complete(&occupancy, &mut ranges, &skip, settle) {
                    Ok(count) => match top(&ranges) {
                        top if top <= fallback.top => (ranges, count, Some(top)),
                        _ => return fallback.measured(),
                    },
                    Err(_) => return fallback.measured(),
                }
            }
            (Some((mut ranges, skip)), None) => {
                // Cut midway: the fallback above what was placed, unless
                // the fallback alone does better (a longer limit must
                // never give a worse plan than a shorter one); both at
                // once.
                let (count, (scratch, all)) = rayon::join(
                    || uncut(|never| self.complete(&occupancy, &mut ranges, &skip, never)),
                    || uncut(|never| self.fallback_for_all(&occupancy, never)),
                );
                let (scratch_top, ranges_top) = (top(&scratch), top(&ranges));
                if scratch_top < ranges_top {
                    (scratch, all, Some(scratch_top))
                } else {
                    (ranges, count, Some(ranges_top))
                }
            }
            (None, Some(fallback)) => return fallback.measured(),
            (None, None) => {
                let (ranges, count) = uncut(|never| self.fallback_for_all(&occupancy, never));
                (ranges, count, None)
            }
        };
        let plan = uncut(|never| self.by_buffer(&occupancy, &ranges, never));
        (plan, count, makespan)
    }

    /// Whether [`Placer::fallback_plan`] can make a plan (the skyline and
    /// pieces keep no index for it).
    fn has_fallback_plan(&self) -> bool {
        self.fit != Fit::Skyline && self.pieces.is_none()
    }

    /// Whether [`Placer::place_none`] has no index for the fallback (it
    /// then gives [`fallback::bucketed_or_stacked`]'s plan).
    fn place_none_stacks(&self) -> bool {
        self.pieces.is_some()
            || (self.fit == Fit::Skyline && self.problem.len() > FALLBACK_INDEX_MAX)
    }

    /// The plan when no buffer could be placed in time: the fallback for
    /// every free buffer, or [`fallback::bucketed_or_stacked`] without an
    /// index.
    pub fn place_none(&self) -> (Plan, usize) {
        let problem = self.problem;
        if self.place_none_stacks() {
            return fallback::bucketed_or_stacked(problem);
        }
        let occupancy = if self.fit == Fit::Skyline {
            std::borrow::Cow::Owned(uncut(|never| {
                Occupancy::of_buffers(problem.buffers(), usize::MAX, never)
            }))
        } else {
            std::borrow::Cow::Borrowed(&self.occupancy)
        };
        let (ranges, count) = uncut(|never| self.fallback_for_all(&occupancy, never));
        (
            uncut(|never| self.by_buffer(&occupancy, &ranges, never)),
            count,
        )
    }

    /// By position of `occupancy`: `value` of each buffer and whether it
    /// is fixed. A random gather (tenths of a second at millions of
    /// buffers on a busy machine), so in chunks that check the stop token: once it
    /// cuts, the chunks left are not filled, and the caller checks the stop token
    /// before using them.
    fn gather_by_position<T: Copy + Default + Send>(
        &self,
        occupancy: &Occupancy,
        value: impl Fn(&Buffer) -> T + Sync,
        stop: &Stop,
    ) -> (Vec<T>, Vec<bool>) {
        let buffers = self.problem.buffers();
        let mut values = vec![T::default(); buffers.len()];
        let mut fixed = vec![false; buffers.len()];
        values
            .par_chunks_mut(GATHER_CHUNK)
            .zip(fixed.par_chunks_mut(GATHER_CHUNK))
            .enumerate()
            .for_each(|(k, (values, fixed))| {
                if stop.is_cut() {
                    return;
                }
                let from = k * GATHER_CHUNK;
                for (i, (v, fixed)) in values.iter_mut().zip(fixed).enumerate() {
                    let b = &buffers[occupancy.buffer_at((from + i) as u32) as usize];
                    *v = value(b);
                    *fixed = b.fixed_offset.is_some();
                }
            });
        (values, fixed)
    }

    /// Every free buffer placed by [`fallback::complete`] above the fixed
    /// ones: the address ranges by position of `occupancy` and how many
    /// buffers the fallback placed; `Err` once `stop` cuts (checked in the
    /// gather and the colouring).
    fn fallback_for_all(
        &self,
        occupancy: &Occupancy,
        stop: &Stop,
    ) -> Result<(Vec<(u64, u64)>, usize), Cut> {
        let buffers = self.problem.buffers();
        let (mut ranges, skip) = self.gather_by_position(
            occupancy,
            |b| {
                let offset = b.fixed_offset.unwrap_or(0);
                (offset, offset + b.size)
            },
            stop,
        );
        // Cut, the arrays are freed off the stop's path (tens of
        // milliseconds at millions of buffers).
        let count = match stop
            .check()
            .and_then(|()| self.complete(occupancy, &mut ranges, &skip, stop))
        {
            Ok(count) => count,
            Err(cut) => {
                drop_later((ranges, skip), buffers.len());
                return Err(cut);
            }
        };
        Ok((ranges, count))
    }

    /// [`fallback::complete`] of the positions `skip` leaves out; `Err`
    /// once `stop` cuts.
    fn complete(
        &self,
        occupancy: &Occupancy,
        ranges: &mut [(u64, u64)],
        skip: &[bool],
        stop: &Stop,
    ) -> Result<usize, Cut> {
        let buffers = self.problem.buffers();
        let alignment = |p: u32| {
            if self.aligned {
                buffers[occupancy.buffer_at(p) as usize].alignment
            } else {
                1
            }
        };
        fallback::complete(occupancy, ranges, skip, &alignment, stop)
    }
}

/// Positions per parallel task of the random gathers (by position to by
/// buffer and back), each task one look at the stop token: a position is a
/// cache miss at millions of buffers (a costly unit), and a task of
/// [`Stop::EVERY_COSTLY`] positions would split a gather of millions into
/// thousands of tasks, so a task holds 16 times that.
const GATHER_CHUNK: usize = 16 * Stop::EVERY_COSTLY;

/// Beyond this many buffers, a skyline cut by the clock is not completed
/// by the fallback (whose index would cost a sort after the deadline):
/// the plan is [`fallback::bucketed_or_stacked`]'s.
const FALLBACK_INDEX_MAX: usize = 1 << 18;

/// What [`Placer::place_order_within_from`] gives.
pub(super) struct OrderPlaced {
    /// The plan.
    pub(super) plan: Plan,
    /// How many buffers the fallback placed (0 when the placement ended).
    pub(super) count: usize,
    /// Whether the plan is the stacked one.
    pub(super) stacked: bool,
    /// The plan's makespan, when the pass that made it took it.
    pub(super) makespan: Option<u64>,
    /// The max load, computed beside the order; `None` when stopped first.
    pub(super) max_load: Option<u64>,
}

/// From this many buffers on, [`Placer::place_order_within`] computes the
/// fallback for every free buffer beside the order's sort: after a stop,
/// its passes over the buffers (a random gather) would take longer than
/// a stop may wait.
pub(super) const EARLY_FALLBACK_MIN: usize = 1 << 18;

/// The fallback's plan for every free buffer, computed beside the order
/// ([`Placer::fallback_plan`]).
enum Early {
    /// Not computed: too few buffers for a stop to need it ready.
    NotAsked,
    /// The placer keeps no index for it (the skyline, or gaps).
    NoIndex,
    /// Cut before it was done.
    Cut,
    /// Ready for a stop.
    Ready(FallbackPlan),
}

impl Early {
    /// The plan, when ready.
    fn ready(self) -> Option<FallbackPlan> {
        match self {
            Early::Ready(plan) => Some(plan),
            Early::NotAsked | Early::NoIndex | Early::Cut => None,
        }
    }
}

/// A plan for every free buffer made beside the placement (best fit's),
/// published when done, for a cut placement to take.
#[derive(Default)]
struct Ahead(Mutex<Option<FallbackPlan>>);

impl Ahead {
    /// Publishes `plan`, if any.
    fn publish(&self, plan: Option<FallbackPlan>) {
        if let Some(plan) = plan {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(plan);
        }
    }

    /// The plan published, if any, taken.
    fn take(&self) -> Option<FallbackPlan> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Whether a plan is published.
    fn ready(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// The fallback's plan for every free buffer ([`fallback::complete`] of
/// all, or best fit's), computed ahead of a stop.
pub(super) struct FallbackPlan {
    plan: Plan,
    /// Its makespan.
    top: u64,
    /// How many buffers the fallback placed.
    count: usize,
}

impl FallbackPlan {
    /// The plan, how many buffers it placed and its makespan.
    pub(super) fn of((plan, count, top): (Plan, usize, u64)) -> Self {
        FallbackPlan { plan, top, count }
    }

    /// The plan, how many buffers the fallback placed and its makespan.
    pub(super) fn measured(self) -> (Plan, usize, Option<u64>) {
        (self.plan, self.count, Some(self.top))
    }
}

/// The highest end of `ranges`.
fn top(ranges: &[(u64, u64)]) -> u64 {
    ranges.iter().map(|r| r.1).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::problem::Buffer;
    use crate::problem::Problem;
    use crate::solver::Solver;
    use crate::solvers::anytime::plan::{plan_within, plan_within_beside_from};
    use crate::solvers::greedy::tests::mixed;
    use crate::solvers::greedy::{order, Greedy, Order};

    #[test]
    fn a_placement_cut_midway_is_completed() {
        let mut partial = 0;
        for kind in [crate::generate::Kind::Layered, crate::generate::Kind::Trace] {
            let p = mixed(kind, 6000);
            for fit in [Fit::FirstFit, Fit::BestFit] {
                let o = order(&p, Order::Size, &Stop::never()).unwrap();
                let full = Placer::new(&p, fit, &Stop::never())
                    .unwrap()
                    .place(&o, None, &Stop::never())
                    .unwrap();
                // Stop at the fifth poll (a few in the setup, then one per
                // group and per `Stop::EVERY_COSTLY` buffers): some buffers are
                // placed first.
                let stop = Stop::after_looks(4);
                let placer = Placer::with_min_group(&p, fit, 512, &Stop::never()).unwrap();
                let (plan, fallback) = placer.place_within(&o, &stop);
                assert_eq!(validate(&p, &plan), Ok(()), "{kind:?} {fit:?}");
                assert!(fallback > 0, "{fallback}");
                // Never worse than the fallback alone (a longer limit
                // never gives a worse plan).
                let (none, all) = placer.place_none();
                assert_eq!(validate(&p, &none), Ok(()));
                assert_eq!(all, o.len());
                assert!(plan.makespan(&p) <= none.makespan(&p), "{kind:?} {fit:?}");
                if fallback < o.len() {
                    // The buffers placed before the cut kept their offsets.
                    let same = (0..p.len())
                        .filter(|&i| plan.offsets()[i] == full.offsets()[i])
                        .count();
                    assert!(same >= p.len() - fallback, "{kind:?} {fit:?}");
                    partial += 1;
                }
            }
        }
        // At least one cut plan kept what the greedy placed.
        assert!(partial > 0);
    }

    /// Buffers alive beside thousands of others: the batched path polls by
    /// the positions its fits scan (more often than once per
    /// `BATCH_POLL` buffers), and a cut at any of those polls, in a batch's
    /// guesses or commits, gives a valid plan that keeps what was placed.
    #[test]
    fn long_fits_poll_by_the_positions_they_scan() {
        let n = 3000u64;
        let buffers: Vec<Buffer> = (0..n)
            .map(|i| Buffer::new(format!("b{i}"), i, i + 2000, 1 + (i * 7919) % 4096))
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let o = order(&p, Order::Size, &Stop::never()).unwrap();
        let placer = Placer::with_min_group(&p, Fit::BestFit, usize::MAX, &Stop::never()).unwrap();
        let full = placer.place(&o, None, &Stop::never()).unwrap();
        let counted = Stop::after_looks(u64::MAX);
        assert_eq!(placer.place(&o, None, &counted), Some(full.clone()));
        let total = (u64::MAX - counted.looks_left().unwrap()) as usize;
        assert!(total > 3 * n as usize / 64, "{total} polls");
        let mut fallbacks = std::collections::BTreeSet::new();
        for cut in (0..total).step_by(total / 40 + 1) {
            let stop = Stop::after_looks(cut as u64);
            let (plan, fallback) = placer.place_within(&o, &stop);
            assert_eq!(validate(&p, &plan), Ok(()), "cut {cut}");
            let kept = (0..p.len())
                .filter(|&i| plan.offsets()[i] == full.offsets()[i])
                .count();
            assert!(kept >= p.len() - fallback, "cut {cut}");
            fallbacks.insert(fallback);
        }
        assert!(fallbacks.len() > 20, "{fallbacks:?}");
    }

    /// Whatever poll of the setup or the placement the clock stops at, the
    /// plan is valid, and the fallback count says how many buffers it left.
    #[test]
    fn a_stop_at_any_poll_gives_a_valid_plan() {
        let p = mixed(crate::generate::Kind::Random, 3000);
        let free = p
            .buffers()
            .iter()
            .filter(|b| b.fixed_offset.is_none())
            .count();
        for g in Greedy::all() {
            let mut fallbacks = Vec::new();
            for cut in 0..12 {
                let stop = Stop::after_looks(cut as u64);
                let within = plan_within(&p, g, &stop);
                assert_eq!(validate(&p, &within.plan), Ok(()), "{} cut {cut}", g.name());
                assert!(within.fallback <= free);
                fallbacks.push(within.fallback);
            }
            // Cut at the first poll: nothing placed by the greedy.
            assert_eq!(fallbacks[0], free, "{}", g.name());
            let full = plan_within(&p, g, &Stop::never());
            assert_eq!(full.fallback, 0);
            assert_eq!(
                Some(full.plan),
                Placer::new(&p, g.fit, &Stop::never()).unwrap().place(
                    &order(&p, g.order, &Stop::never()).unwrap(),
                    None,
                    &Stop::never()
                )
            );
        }
    }

    /// With the bucketed plan beside: a stop at any poll of either gives a
    /// valid plan (the stacked one replaced by the bucketed one when that
    /// is done), and uncut, greedy's own plan.
    #[test]
    fn a_stop_at_any_poll_with_the_bucketed_plan_beside_gives_a_valid_plan() {
        let p = mixed(crate::generate::Kind::Random, 3000);
        let g = Greedy::default();
        let (stacked, _) = fallback::stacked(&p);
        for cut in 0..30 {
            let stop = Stop::after_looks(cut as u64);
            let within = plan_within_beside_from(&p, g, &stop, &stop, true, 0);
            assert_eq!(validate(&p, &within.plan), Ok(()), "cut {cut}");
            assert_eq!(within.stacked, within.plan == stacked, "cut {cut}");
        }
        let whole = plan_within_beside_from(&p, g, &Stop::never(), &Stop::never(), true, 0);
        assert_eq!(whole.plan, plan_within(&p, g, &Stop::never()).plan);
        assert_eq!(whole.fallback, 0);
    }

    /// The fallback computed beside the order (as on large problems; the
    /// colouring's where a cut settles, best fit's beside everything): at
    /// every cut a valid plan, never worse than the colouring's once
    /// the fallback is done, the stacked plan when the stop cuts the
    /// fallback too (the stacked plan is the one that fits in what is
    /// left of the time), and the same plan as without it when nothing is
    /// cut. (The two arms of the join share the poll count, so where a
    /// cut falls varies from run to run: every outcome is checked.)
    /// Settled at the cut (an interrupt at scale), the plan of a cut
    /// placement is a fallback's in hand (the colouring's, or best fit's
    /// when ready and lower), not an improvement on it.
    /// The stacked plan made ahead, when given, is the one returned; a
    /// makespan that comes with the plan is its makespan.
    #[test]
    fn the_fallback_ready_beside_the_order_is_never_worse() {
        let p = mixed(crate::generate::Kind::Layered, 6000);
        let stacked = fallback::stacked(&p);
        for fit in [Fit::FirstFit, Fit::BestFit] {
            let placer = Placer::with_min_group(&p, fit, 512, &Stop::never()).unwrap();
            let (none, none_count) = placer.place_none();
            let fitted = placer.best_fit_plan(&Stop::never()).unwrap();
            assert_eq!(validate(&p, &fitted.plan), Ok(()));
            assert!(fitted.top < none.makespan(&p), "{fit:?}");
            let full = placer
                .place(
                    &crate::solvers::greedy::order(&p, Order::Size, &Stop::never()).unwrap(),
                    None,
                    &Stop::never(),
                )
                .unwrap();
            let (mut improved, mut in_hand) = (0, 0);
            for (settled, prestack) in [(false, false), (true, false), (false, true)] {
                for cut in 0..40 {
                    let stop = Stop::after_looks(cut as u64);
                    let settle = if settled { stop.clone() } else { Stop::never() };
                    let prestacked = prestack.then(|| fallback::stacked_measured(&p));
                    let placed = placer.place_order_within_from(
                        Order::Size,
                        &stop,
                        &settle,
                        0,
                        prestacked,
                        None,
                    );
                    let (plan, count) = (placed.plan, placed.count);
                    assert_eq!(validate(&p, &plan), Ok(()), "{fit:?} cut {cut}");
                    let is_stacked = (&plan, count) == (&stacked.0, stacked.1);
                    assert_eq!(placed.stacked, is_stacked, "{fit:?} cut {cut}");
                    if let Some(makespan) = placed.makespan {
                        assert_eq!(makespan, plan.makespan(&p), "{fit:?} cut {cut}");
                    }
                    assert!(
                        plan.makespan(&p) <= none.makespan(&p) || is_stacked,
                        "{fit:?} cut {cut}"
                    );
                    // Cut at once: the stacked plan where the colouring
                    // was asked beside the order (and cut too), else the
                    // placer's own fallback for all.
                    if cut == 0 && settled {
                        assert!(is_stacked, "{fit:?} cut {cut}");
                    }
                    let fallback = (&plan, count) == (&none, none_count)
                        || (&plan, count) == (&fitted.plan, fitted.count);
                    if count > 0 && !is_stacked && !fallback {
                        assert!(!settled, "{fit:?} cut {cut}: settled, yet improved");
                        improved += 1;
                    }
                    if settled && count > 0 && !is_stacked {
                        assert!(fallback, "{fit:?} cut {cut}");
                        in_hand += 1;
                    }
                    if count == 0 {
                        assert_eq!(plan, full, "{fit:?} cut {cut}");
                    }
                }
            }
            assert!(improved > 0 && in_hand > 0, "{fit:?}: {improved} {in_hand}");
            let never = |early_min| {
                placer
                    .place_order_within_from(
                        Order::Size,
                        &Stop::never(),
                        &Stop::never(),
                        early_min,
                        None,
                        None,
                    )
                    .plan
            };
            assert_eq!(never(0), never(usize::MAX));
        }
    }

    /// The fallback's plan coloured from sizes by position (the columns,
    /// no address ranges) is the plan of the fallback through the ranges
    /// ([`Placer::place_none`]), with the same count, and its makespan is
    /// the plan's; cut at any poll, no plan (the caller stacks).
    #[test]
    fn the_columns_fallback_is_the_ranges_fallback() {
        use crate::generate::Kind;
        for kind in [Kind::Random, Kind::Layered, Kind::Trace] {
            let p = mixed(kind, 5000);
            assert!(p.fixed_end() > 0, "{kind:?}");
            for fit in [Fit::FirstFit, Fit::BestFit] {
                let placer = Placer::with_min_group(&p, fit, 512, &Stop::never()).unwrap();
                let (none, none_count) = placer.place_none();
                let Early::Ready(fallback) = placer.fallback_plan(&Stop::never()) else {
                    panic!("no fallback plan without a stop: {kind:?} {fit:?}");
                };
                assert_eq!(validate(&p, &fallback.plan), Ok(()), "{kind:?} {fit:?}");
                assert_eq!(fallback.plan, none, "{kind:?} {fit:?}");
                assert_eq!(fallback.count, none_count, "{kind:?} {fit:?}");
                assert_eq!(fallback.top, none.makespan(&p), "{kind:?} {fit:?}");
                let mut cut_before_done = 0;
                for cut in 0..12 {
                    let stop = Stop::after_looks(cut as u64);
                    match placer.fallback_plan(&stop) {
                        Early::Cut => cut_before_done += 1,
                        Early::Ready(plan) => assert_eq!(plan.plan, none, "cut {cut}"),
                        Early::NoIndex | Early::NotAsked => panic!("cut {cut}: no index"),
                    }
                }
                assert!(cut_before_done > 0, "{kind:?} {fit:?}");
            }
        }
    }

    /// With gaps, a stop at any poll (the piece conflicts' included) gives
    /// a valid plan: the bucketed fallback's before the conflicts exist.
    #[test]
    fn a_stop_at_any_poll_with_gaps_gives_a_valid_plan() {
        let base = crate::generate::generate(crate::generate::Kind::Trace, 2000, 5).problem;
        let buffers = base.buffers().to_vec();
        let gaps = crate::testutil::idle_in_second_step(&buffers);
        let p = Problem::new_with_gaps(buffers, gaps, None).unwrap();
        assert!(p.has_gaps());
        for g in [
            Greedy::default(),
            Greedy {
                order: Order::Start,
                fit: Fit::BestFit,
            },
        ] {
            for cut in 0..8 {
                let stop = Stop::after_looks(cut as u64);
                let within = plan_within(&p, g, &stop);
                assert_eq!(validate(&p, &within.plan), Ok(()), "{} cut {cut}", g.name());
            }
            // Cut at once: every buffer to the bucketed fallback.
            let within = plan_within(&p, g, &Stop::after_looks(0));
            assert_eq!(within.fallback, p.len());
            assert!(within.placer.is_none());
        }
    }

    /// A plan made ahead for every buffer (best fit's bucketed plan, as
    /// at the largest sizes) is never lost: cut at any poll, settled or
    /// not, with the stacked plan made ahead or not, the plan is valid and
    /// at most its makespan; uncut, the placement's own.
    #[test]
    fn a_plan_made_ahead_is_never_worse() {
        for kind in [
            crate::generate::Kind::Layered,
            crate::generate::Kind::Random,
        ] {
            let p = mixed(kind, 6000);
            let made = || {
                let made = fallback::bucketed_best_fit(&p, &Stop::never())
                    .unwrap()
                    .unwrap();
                FallbackPlan::of(made)
            };
            let top = made().top;
            assert_eq!(made().plan.makespan(&p), top);
            let placer = Placer::new(&p, Fit::FirstFit, &Stop::never()).unwrap();
            let full = placer.place_order_within(Order::Size, &Stop::never()).0;
            let (mut taken, mut finished) = (0, 0);
            for cut in (0..40).chain([1000]) {
                for (settled, prestack) in [(false, false), (true, false), (true, true)] {
                    let stop = Stop::after_looks(cut);
                    let settle = if settled { stop.clone() } else { Stop::never() };
                    let prestacked = prestack.then(|| fallback::stacked_measured(&p));
                    let placed = placer.place_order_within_from(
                        Order::Size,
                        &stop,
                        &settle,
                        0,
                        prestacked,
                        Some(made()),
                    );
                    assert_eq!(validate(&p, &placed.plan), Ok(()), "{kind:?} cut {cut}");
                    let makespan = placed.plan.makespan(&p);
                    assert!(makespan <= top.max(full.makespan(&p)), "{kind:?} cut {cut}");
                    if placed.count > 0 {
                        assert!(makespan <= top, "{kind:?} cut {cut}");
                        taken += usize::from(makespan == top);
                    } else {
                        assert_eq!(placed.plan, full, "{kind:?} cut {cut}");
                        finished += 1;
                    }
                }
            }
            assert!(taken > 0 && finished > 0, "{kind:?}: {taken} {finished}");
        }
    }
}
