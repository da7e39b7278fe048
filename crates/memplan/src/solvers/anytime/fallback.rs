//! What a greedy placement cut short by the clock does with the buffers it
//! has not placed: it places them above every placed buffer, in about
//! linear time, so that a solver out of time still returns a valid plan
//! (and says how many buffers this took, see [`complete`]).
//!
//! The first method is best fit in start order (`best_fit`),
//! within a work bound; past it (too many buffers alive at once), the
//! second, linear whatever the input.
//!
//! The second method is interval colouring by size class: the remaining buffers
//! are visited by start time; each takes a free *slot* of its class (sizes
//! rounded up to a power of two, and the alignment), freed again when the
//! buffer ends. The classes are then stacked above the placed buffers, each
//! as a column of its slots. Within a class two buffers alive at the same
//! time never share a slot, classes never share addresses, and the placed
//! buffers lie below, so the plan is valid; each class takes at most about
//! twice its own max load. It is not meant to be good, only fast and never
//! wrong: the first-fit placement it completes is the real plan.

use crate::dispose::drop_later;
use crate::stop::{Cancel, Cut, Stop};
use std::time::Duration;

use rayon::prelude::*;

use crate::geometry::fit::{align_up, gcd};
use crate::geometry::occupancy::Occupancy;
use crate::geometry::sort::collect;
use crate::plan::Plan;
use crate::problem::Problem;

use super::best_fit::{best_fit, Fitted, Item};
use super::both_ways::{both_ways, radix_order};

/// No buffer in a list.
const NONE: u32 = u32::MAX;

/// The slots of one size class.
struct Class {
    /// Buffers of this class have this alignment...
    alignment: u64,
    /// ...and a size of at most this many bytes: the slot's height, a
    /// multiple of the alignment.
    stride: u64,
    /// Slots used so far.
    slots: u32,
    /// Slots free at the current time of the sweep.
    free: Vec<u32>,
}

/// The classes and slots of a colouring ([`colour`]) by position.
pub(crate) struct Colouring {
    classes: Vec<Class>,
    class_of: Vec<u16>,
    slot_of: Vec<u32>,
    /// How many positions were coloured.
    count: usize,
}

impl Colouring {
    /// The base address of each class's column, the columns stacked from
    /// `base`; `None` when they would pass 2^64.
    fn columns(&self, base: u64) -> Option<Vec<u64>> {
        let mut bases = Vec::with_capacity(self.classes.len());
        let mut top = Some(base);
        for class in &self.classes {
            let from = top.map(|t| align_up(t, class.alignment));
            bases.push(from.unwrap_or(0));
            top = from.and_then(|f| {
                class
                    .stride
                    .checked_mul(u64::from(class.slots))
                    .and_then(|h| f.checked_add(h))
                    .filter(|&t| t != u64::MAX)
            });
        }
        top.map(|_| bases)
    }

    /// The offset of coloured position `p` given the columns' `bases`.
    fn offset(&self, bases: &[u64], p: usize) -> u64 {
        let c = usize::from(self.class_of[p]);
        bases[c] + u64::from(self.slot_of[p]) * self.classes[c].stride
    }
}

/// How [`colour`] ended.
enum Coloured {
    Done(Colouring),
    /// Absurdly many classes.
    TooManyClasses,
    /// The token cut it.
    Stopped(Cut),
}

/// Interval colouring by size class of the `n` positions that `item`
/// gives (`None`: left out), visited in non-decreasing start: a slot
/// freed at an item's end is reused by an item starting at or after it.
/// Ends are at most `times`. The token is checked every [`Stop::EVERY_COSTLY`]
/// positions.
fn colour(times: usize, n: usize, item: impl Fn(usize) -> Option<Item>, stop: &Stop) -> Coloured {
    // Positions ending at each time (linked through `next`), to free their
    // slots when the sweep reaches it.
    let mut ending = vec![NONE; times + 1];
    let mut next = vec![NONE; n];
    let mut classes: Vec<Class> = Vec::new();
    // Class and slot of each coloured position (the slot in `slot_of`).
    let mut class_of = vec![0u16; n];
    let mut slot_of = vec![0u32; n];
    let mut last_class = usize::MAX;
    // The class of unaligned buffers by log2 of their (power-of-two)
    // stride; `u16::MAX`: none yet.
    let mut by_log = [u16::MAX; 64];
    let (mut released, mut count) = (0usize, 0usize);
    for p in 0..n {
        // A position costs a few cache misses at millions of buffers: a
        // costly unit.
        if let Err(cut) = stop.every_costly(p) {
            // Freeing a hundred megabytes at millions of buffers takes
            // tens of milliseconds: not on the stop's path.
            drop_later((ending, next, class_of, slot_of, classes), n);
            return Coloured::Stopped(cut);
        }
        let Some(Item {
            start,
            end,
            size,
            alignment: align,
        }) = item(p)
        else {
            continue;
        };
        while released <= start as usize {
            let mut x = ending[released];
            while x != NONE {
                let i = x as usize;
                classes[usize::from(class_of[i])].free.push(slot_of[i]);
                x = next[i];
            }
            released += 1;
        }
        let stride = align_up(size.checked_next_power_of_two().unwrap_or(size), align);
        let same = |k: &Class| k.stride == stride && k.alignment == align;
        // Unaligned power-of-two strides (most buffers) by table, the
        // others by search: the same class either way.
        let log =
            (align == 1 && stride.is_power_of_two()).then(|| stride.trailing_zeros() as usize);
        let known = log.map_or(u16::MAX, |l| by_log[l]);
        let c = if classes.get(last_class).is_some_and(same) {
            last_class
        } else if known != u16::MAX {
            usize::from(known)
        } else {
            match classes.iter().position(same) {
                Some(c) => c,
                None if classes.len() < usize::from(u16::MAX) => {
                    classes.push(Class {
                        alignment: align,
                        stride,
                        slots: 0,
                        free: Vec::new(),
                    });
                    classes.len() - 1
                }
                None => return Coloured::TooManyClasses,
            }
        };
        last_class = c;
        if let Some(l) = log {
            by_log[l] = c as u16;
        }
        let class = &mut classes[c];
        slot_of[p] = class.free.pop().unwrap_or_else(|| {
            class.slots += 1;
            class.slots - 1
        });
        class_of[p] = c as u16;
        next[p] = ending[end as usize];
        ending[end as usize] = p as u32;
        count += 1;
    }
    Coloured::Done(Colouring {
        classes,
        class_of,
        slot_of,
        count,
    })
}

/// Places every buffer that `placed` says is not placed above the highest
/// end of the placed ones. Everything is by position of `occupancy` (start
/// order): `ranges` holds `(offset, end)` of the placed buffers and
/// `(_, _ + size)` of the others, and receives theirs; `alignment(p)` is
/// the alignment at position `p`. Returns how many buffers it placed.
/// No sort, and sequential in memory. `Err` (`ranges` unchanged) once
/// `stop` cuts, checked every [`Stop::EVERY_COSTLY`] buffers.
pub fn complete(
    occupancy: &Occupancy,
    ranges: &mut [(u64, u64)],
    placed: &[bool],
    alignment: &dyn Fn(u32) -> u64,
    stop: &Stop,
) -> Result<usize, Cut> {
    let n = ranges.len();
    let base = ranges
        .iter()
        .zip(placed)
        .filter(|(_, &p)| p)
        .map(|(r, _)| r.1)
        .max()
        .unwrap_or(0);
    stop.check()?;
    // Absurdly many classes, or columns past 2^64 (sizes near the limit
    // the problem allows): one buffer above the other always fits.
    let size = |p: usize| (!placed[p]).then(|| ranges[p].1 - ranges[p].0);
    let method = Method::Colouring;
    let Some(cheap) = cheap_of(occupancy, n, size, alignment, base, method, stop)? else {
        return Ok(stack(ranges, placed, alignment, base));
    };
    for (p, range) in ranges.iter_mut().enumerate() {
        if !placed[p] {
            let offset = cheap.offset(p);
            *range = (offset, offset + (range.1 - range.0));
        }
    }
    Ok(cheap.count())
}

/// The cheap plan of the positions it placed, by position: best fit's
/// offsets, or a colouring ([`colour`]) and its columns' bases (the
/// offset of each coloured position without an array of address ranges,
/// 16 bytes a buffer, the largest array of the fallback at millions).
pub(crate) enum Cheap {
    /// Best fit's offset of each position (`best_fit`).
    Fitted(Fitted),
    /// The colouring and the base address of each class's column.
    Coloured(Colouring, Vec<u64>),
}

impl Cheap {
    /// The offset of placed position `p`.
    #[inline]
    pub(crate) fn offset(&self, p: usize) -> u64 {
        match self {
            Cheap::Fitted(fitted) => fitted.offsets[p],
            Cheap::Coloured(colouring, bases) => colouring.offset(bases, p),
        }
    }

    /// How many positions were placed.
    pub(crate) fn count(&self) -> usize {
        match self {
            Cheap::Fitted(fitted) => fitted.count,
            Cheap::Coloured(colouring, _) => colouring.count,
        }
    }
}

/// How the cheap plan places its buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The colouring: linear whatever the input, for plans made after a
    /// stop, which must answer promptly.
    Colouring,
    /// Best fit (`best_fit`) within its work bound, else the
    /// colouring: several times the colouring's time, for plans made
    /// beside other work, ahead of a stop.
    BestFit,
    /// Best fit alone: no plan past its work bound (where the caller has
    /// the colouring's plan in hand already).
    BestFitAlone,
}

/// The cheap plan of the `n` positions `item` gives (`None`: left out),
/// visited in non-decreasing start, every free buffer from `base`, by
/// `method`. Ends are at most `times`. `Err` once `stop` cuts; `Ok(None)`
/// with absurdly many classes or columns past 2^64.
fn cheap(
    times: usize,
    n: usize,
    item: impl Fn(usize) -> Option<Item>,
    base: u64,
    method: Method,
    stop: &Stop,
) -> Result<Option<Cheap>, Cut> {
    if method != Method::Colouring {
        if let Some(fitted) = best_fit(times, n, &item, &[], base, stop)? {
            return Ok(Some(Cheap::Fitted(fitted)));
        }
        if method == Method::BestFitAlone {
            return Ok(None);
        }
    }
    let colouring = match colour(times, n, item, stop) {
        Coloured::Done(colouring) => colouring,
        Coloured::TooManyClasses => return Ok(None),
        Coloured::Stopped(cut) => return Err(cut),
    };
    Ok(colouring
        .columns(base)
        .map(|bases| Cheap::Coloured(colouring, bases)))
}

/// [`complete`] with no buffer placed but the fixed ones, from the sizes
/// by position of `occupancy` (`fixed[p]`: left out) and the highest fixed
/// end `fixed_end`, by `method`: the offsets, as [`Cheap`]. `Err` once
/// `stop` cuts (checked every [`Stop::EVERY_COSTLY`] positions); `Ok(None)`
/// where [`complete`] stacks instead (absurdly many classes, columns past
/// 2^64).
pub(crate) fn cheap_for_all(
    occupancy: &Occupancy,
    sizes: &[u64],
    fixed: &[bool],
    alignment: &dyn Fn(u32) -> u64,
    fixed_end: u64,
    method: Method,
    stop: &Stop,
) -> Result<Option<Cheap>, Cut> {
    let size = |p: usize| (!fixed[p]).then(|| sizes[p]);
    let n = sizes.len();
    cheap_of(occupancy, n, size, alignment, fixed_end, method, stop)
}

/// The cheap plan ([`cheap`]) of the `n` positions of `occupancy` that
/// `size` gives a size (`None`: left out), from `base`, by `method`.
fn cheap_of(
    occupancy: &Occupancy,
    n: usize,
    size: impl Fn(usize) -> Option<u64>,
    alignment: &dyn Fn(u32) -> u64,
    base: u64,
    method: Method,
    stop: &Stop,
) -> Result<Option<Cheap>, Cut> {
    let item = |p: usize| {
        size(p).map(|size| {
            let (start, end) = occupancy.compressed(p as u32);
            Item {
                start,
                end,
                size,
                alignment: alignment(p as u32),
            }
        })
    };
    cheap(occupancy.times(), n, item, base, method, stop)
}

/// A plan for when there is no time for an index (whose sort of the start
/// times takes tenths of a second at millions of buffers): the cheap plan
/// of [`complete`] by `method` with time cut into at most `n` equal *buckets*, the
/// buffers put in bucket order by a radix sort. A buffer's slot is
/// freed at the first bucket boundary at or after its end, so two buffers
/// that share a slot never live at the same time; with at least as many
/// buckets as time steps it is the fallback's plan itself. Every free
/// buffer goes above the highest fixed end. Linear time (a few passes,
/// no sort); returns the plan and how many buffers it placed (the free
/// ones). `Err` once `stop` cuts (before the colouring is done), checked
/// between its passes and every [`Stop::EVERY`] buffers within them.
///
/// By [`Method::BestFit`] it is best fit both ways from the middle of the
/// timeline (`both_ways`), else the colouring.
pub fn bucketed(problem: &Problem, method: Method, stop: &Stop) -> Result<(Plan, usize), Cut> {
    let method = match method {
        Method::BestFitAlone => Method::BestFit,
        method => method,
    };
    bucketed_by(problem, method, stop).map(|done| {
        let (plan, count, _) = done.unwrap_or_else(|| {
            let (plan, count) = stacked(problem);
            (plan, count, 0)
        });
        (plan, count)
    })
}

/// [`bucketed`] by best fit alone ([`Method::BestFitAlone`]): the plan,
/// how many buffers it placed and its makespan; `Ok(None)` past best
/// fit's work bound.
pub(crate) fn bucketed_best_fit(
    problem: &Problem,
    stop: &Stop,
) -> Result<Option<(Plan, usize, u64)>, Cut> {
    bucketed_by(problem, Method::BestFitAlone, stop)
}

/// [`bucketed`] by `method`, with the plan's makespan when best fit made
/// it (0 otherwise); `Ok(None)` where [`Method::BestFitAlone`] gives up,
/// or where the colouring stacks instead.
fn bucketed_by(
    problem: &Problem,
    method: Method,
    stop: &Stop,
) -> Result<Option<(Plan, usize, u64)>, Cut> {
    stop.check()?;
    let buffers = problem.buffers();
    // One pass for the timeline of the free buffers, the fixed end and
    // the number of fixed buffers.
    let (lo, hi, fixed_end, fixed) = buffers
        .par_iter()
        .map(|b| match b.fixed_offset {
            None => (b.start, b.end, 0, 0usize),
            Some(o) => (u64::MAX, 0, o + b.size, 1),
        })
        .reduce(
            || (u64::MAX, 0, 0, 0),
            |a, b| (a.0.min(b.0), a.1.max(b.1), a.2.max(b.2), a.3 + b.3),
        );
    let mut offsets = vec![0u64; buffers.len()];
    if fixed > 0 {
        for (i, (o, b)) in offsets.iter_mut().zip(buffers).enumerate() {
            stop.every(i)?;
            *o = b.fixed_offset.unwrap_or(0);
        }
    }
    if lo >= hi {
        // No free buffer.
        let top = problem.fixed_end();
        return Ok(Some((Plan::from_offsets(offsets), 0, top)));
    }
    let span = hi - lo;
    // At most one bucket per buffer (and per time step).
    let buckets = (buffers.len() as u64).clamp(1, span);
    let width = span.div_ceil(buckets);
    // Below `buckets` (and ends at most `buckets`): `Problem` keeps the
    // number of buffers below 2^32.
    let items = collect(
        buffers.len(),
        |i| {
            let b = &buffers[i];
            match b.fixed_offset {
                Some(_) => Item::FIXED,
                None => Item {
                    start: ((b.start - lo) / width) as u32,
                    end: (b.end - lo).div_ceil(width) as u32,
                    size: b.size,
                    alignment: b.alignment,
                },
            }
        },
        stop,
    )?;
    // The radix sorts' keys (buckets, below 2^32) in two digits of `bits`
    // bits, at most 16.
    let bits = (64 - (buckets - 1).leading_zeros()).div_ceil(2).max(1);
    let buckets = buckets as u32;
    if method != Method::Colouring {
        let count = buffers.len() - fixed;
        let fitted = match both_ways(&items, buckets, bits, fixed_end, &mut offsets, stop) {
            Ok(fitted) => fitted,
            Err(cut) => {
                // Freed off the stop's path.
                drop_later((items, offsets), buffers.len());
                return Err(cut);
            }
        };
        if let Some(top) = fitted {
            drop_later(items, buffers.len());
            return Ok(Some((Plan::from_offsets(offsets), count, top)));
        }
        if method == Method::BestFitAlone {
            drop_later((items, offsets), buffers.len());
            return Ok(None);
        }
    }
    // The free buffers in bucket order, ties in input order.
    let free = |it: &Item| (!it.is_fixed()).then_some(it.start);
    let order = radix_order(&items, bits, free, stop)?;
    let count = order.len();
    let sorted = collect(count, |p| items[order[p] as usize], stop)?;
    drop_later(items, buffers.len());
    let item = |p: usize| Some(sorted[p]);
    let colouring = Method::Colouring;
    let Some(cheap) = cheap(buckets as usize, count, item, fixed_end, colouring, stop)? else {
        return Ok(None);
    };
    for (p, &i) in order.iter().enumerate() {
        offsets[i as usize] = cheap.offset(p);
    }
    drop_later((sorted, order), buffers.len());
    Ok(Some((Plan::from_offsets(offsets), count, 0)))
}

/// How long [`bucketed_or_stacked`] gives the bucketed plan: part of what
/// a stop may wait, the rest left to the work after it. The bucketed
/// plan's time grows with the buffers, hence [`BUCKETED_MAX`].
pub const BUCKETED_GRACE: Duration = Duration::from_millis(60);

/// Beyond this many buffers, [`bucketed_or_stacked`] does not try the
/// bucketed plan: it could not be done within [`BUCKETED_GRACE`], and its
/// passes would slow the stacked plan beside it.
pub const BUCKETED_MAX: usize = 1 << 19;

/// The plan of every free buffer after a stop that came before any index
/// exists, and how many buffers it placed: [`bucketed`]'s if it is done
/// within [`BUCKETED_GRACE`] (and there are at most [`BUCKETED_MAX`]
/// buffers), else [`stacked`]'s (computed beside it, one pass), so that
/// the stop waits at most about that long at any size.
pub fn bucketed_or_stacked(problem: &Problem) -> (Plan, usize) {
    if problem.len() > BUCKETED_MAX {
        return stacked(problem);
    }
    bucketed_within(problem, BUCKETED_GRACE)
}

/// [`bucketed_or_stacked`] with `grace` for the bucketed plan.
pub(crate) fn bucketed_within(problem: &Problem, grace: Duration) -> (Plan, usize) {
    let give_up = Stop::after(Some(grace), Cancel::default());
    // Both cores are free after a stop: the stacked plan beside.
    let (bucketed, stacked) = rayon::join(
        || bucketed(problem, Method::Colouring, &give_up).ok(),
        || (problem.len() >= STACKED_BESIDE_MIN).then(|| stacked(problem)),
    );
    bucketed
        .or(stacked)
        .unwrap_or_else(|| self::stacked(problem))
}

/// From this many buffers on, [`bucketed_within`] computes the stacked
/// plan beside the bucketed one, in case the bucketed one takes too long
/// (below, the bucketed plan is done within the grace).
const STACKED_BESIDE_MIN: usize = 1 << 18;

/// A plan for when the clock leaves no time to build an index, in linear
/// time and one parallel pass (valid: the problem keeps the sum of sizes
/// below 2^64). Returns the plan and how many buffers it stacked.
///
/// From `STACKED_CHUNK` (65,536) buffers on, the free buffers are stacked
/// in *time windows*: the free buffers' time range is halved again and
/// again, up to `STACKED_LEVELS` times, and each buffer goes to the
/// smallest window that holds its whole lifetime. Windows of one level
/// never overlap in time, so they share addresses, each stacking its own
/// buffers; the levels are stacked above each other from the highest fixed
/// end. A buffer in a window of any level but the last crosses the
/// window's middle, so the buffers of that window are all alive at one
/// instant: such a level is at most the max load high. The pass runs in
/// parallel chunks, each stacked from 0 in every window; then, in a pass
/// over the offsets alone, each chunk's stack in each window is moved up to
/// its base (the top of the chunks below in that window, rounded up to a
/// common multiple of the chunk's alignments, so that every offset keeps
/// its alignment). When that would pass 2^64 (alignments with a huge
/// common multiple), and below `STACKED_CHUNK` buffers, every free buffer
/// goes above the previous one, in input order.
pub fn stacked(problem: &Problem) -> (Plan, usize) {
    let (plan, count, _) = stacked_measured(problem);
    (plan, count)
}

/// What [`stacked_measured`] gives: the plan, how many buffers it stacked,
/// and its makespan when its pass took it.
pub(crate) type Stacked = (Plan, usize, Option<u64>);

/// [`stacked`], and when its pass measured the plan (in chunks), its
/// makespan (for
/// [`Solution::within_capacity_measured`](crate::solver::Solution)).
pub(crate) fn stacked_measured(problem: &Problem) -> Stacked {
    let buffers = problem.buffers();
    if buffers.len() >= STACKED_CHUNK {
        if let Some((plan, count, makespan)) = stacked_in_chunks(problem) {
            return (plan, count, Some(makespan));
        }
    }
    let mut offsets = vec![0; buffers.len()];
    let count = stack_from(buffers, &mut offsets, problem.fixed_end());
    (Plan::from_offsets(offsets), count, None)
}

/// `prestacked` (the stacked plan computed ahead of a stop), else
/// [`stacked_measured`] now.
pub(crate) fn stacked_given(problem: &Problem, prestacked: Option<Stacked>) -> Stacked {
    prestacked.unwrap_or_else(|| stacked_measured(problem))
}

/// How many times [`stacked`] halves the time range at most: `2^(L+1) - 1`
/// windows.
const STACKED_LEVELS: u32 = 12;

/// The time windows of [`stacked`]: the free buffers' time range from
/// `lo`, `bits` bits wide (a power of two at least as long), halved
/// `levels` times.
#[derive(Clone, Copy)]
struct Windows {
    lo: u64,
    bits: u32,
    levels: u32,
}

impl Windows {
    /// The windows of the free buffers' time range `[lo, hi)`, `lo < hi`.
    fn of((lo, hi): (u64, u64)) -> Windows {
        let bits = 64 - (hi - lo - 1).leading_zeros();
        Windows {
            lo,
            bits,
            levels: bits.min(STACKED_LEVELS),
        }
    }

    /// The level of window `window` (its index among all windows).
    #[inline]
    fn level(window: usize) -> usize {
        (usize::BITS - 1 - (window + 1).leading_zeros()) as usize
    }

    /// How many windows there are: `2^(levels+1) - 1`.
    fn count(self) -> usize {
        (2usize << self.levels) - 1
    }

    /// The smallest window holding `[start, end)` (a free buffer's
    /// lifetime, `start < end`, within the range): its index among all
    /// windows, level by level (below `2^(levels+1)`).
    #[inline]
    fn of_lifetime(self, start: u64, end: u64) -> usize {
        let (s, e) = (start - self.lo, end - 1 - self.lo);
        // The bits that `s` and `e` share from the top of the range.
        let shared = self.bits - (64 - (s ^ e).leading_zeros());
        let level = shared.min(self.levels);
        // `bits - level` may be 64 (a range of 2^64 at level 0): window 0.
        let window = s.checked_shr(self.bits - level).unwrap_or(0) as usize;
        (1usize << level) - 1 + window
    }
}

/// One chunk of [`stacked_in_chunks`], stacked from 0 in every window.
struct Chunk {
    /// The end of its highest free buffer in each window (from 0); then
    /// the base of its stack in each window.
    tops: Vec<u64>,
    /// A common multiple of its free buffers' alignments.
    alignment: u64,
    /// Its highest fixed end.
    fixed_end: u64,
    /// Its free buffers.
    count: usize,
}

/// [`stacked`] in parallel chunks, with the plan's makespan (see
/// [`stacked_measured`]); `None` when an address would pass 2^64.
fn stacked_in_chunks(problem: &Problem) -> Option<(Plan, usize, u64)> {
    let buffers = problem.buffers();
    let Some(windows) = problem.free_time_range().map(Windows::of) else {
        // No free buffer: every offset is fixed.
        let offsets = buffers
            .iter()
            .map(|b| b.fixed_offset.unwrap_or(0))
            .collect();
        let top = buffers
            .iter()
            .map(|b| b.fixed_offset.map_or(0, |f| f + b.size))
            .max()
            .unwrap_or(0);
        return Some((Plan::from_offsets(offsets), 0, top));
    };
    let mut offsets = vec![0u64; buffers.len()];
    // Each free buffer's window (below 2^13), so that the last pass reads
    // two bytes a buffer rather than the buffer.
    let mut in_window = vec![0u16; buffers.len()];
    let chunks: Option<Vec<Chunk>> = offsets
        .par_chunks_mut(STACKED_CHUNK)
        .zip(in_window.par_chunks_mut(STACKED_CHUNK))
        .zip(buffers.par_chunks(STACKED_CHUNK))
        .map(|((offsets, in_window), chunk)| {
            let mut c = Chunk {
                tops: vec![0; windows.count()],
                alignment: 1,
                fixed_end: 0,
                count: 0,
            };
            for ((o, w), b) in offsets.iter_mut().zip(in_window).zip(chunk) {
                if let Some(f) = b.fixed_offset {
                    *o = f;
                    *w = u16::MAX;
                    c.fixed_end = c.fixed_end.max(f + b.size);
                    continue;
                }
                if b.alignment != 1 && c.alignment % b.alignment != 0 {
                    c.alignment = lcm(c.alignment, b.alignment)?;
                }
                let window = windows.of_lifetime(b.start, b.end);
                *w = window as u16;
                let top = &mut c.tops[window];
                let at = align_up(*top, b.alignment);
                *o = at;
                *top = at.checked_add(b.size)?;
                c.count += 1;
            }
            Some(c)
        })
        .collect();
    let mut chunks = chunks?;
    // Each chunk's base in each window: the top of the chunks below there.
    let mut heights = vec![0u64; windows.count()];
    let mut alignment = 1u64;
    for c in &mut chunks {
        alignment = lcm(alignment, c.alignment)?;
        for (top, height) in c.tops.iter_mut().zip(&mut heights) {
            if *top > 0 {
                let base = height.checked_next_multiple_of(c.alignment)?;
                *height = base.checked_add(*top)?;
                *top = base;
            }
        }
    }
    // The levels, from the highest fixed end, each at a common multiple of
    // every chunk's alignments.
    let fixed_end = chunks.iter().map(|c| c.fixed_end).max().unwrap_or(0);
    let mut level_bases = Vec::with_capacity(windows.levels as usize + 1);
    let mut top = fixed_end;
    for level in 0..=windows.levels {
        let from = (1usize << level) - 1;
        let height = heights[from..2 * from + 1]
            .iter()
            .max()
            .copied()
            .unwrap_or(0);
        let base = top.checked_next_multiple_of(alignment)?;
        level_bases.push(base);
        if height > 0 {
            top = base.checked_add(height)?;
        }
    }
    offsets
        .par_chunks_mut(STACKED_CHUNK)
        .zip(in_window.par_chunks(STACKED_CHUNK))
        .zip(&chunks)
        .for_each(|((offsets, in_window), c)| {
            for (o, &w) in offsets.iter_mut().zip(in_window) {
                if w != u16::MAX {
                    let w = usize::from(w);
                    *o += level_bases[Windows::level(w)] + c.tops[w];
                }
            }
        });
    crate::dispose::drop_later(in_window, buffers.len());
    let count = chunks.iter().map(|c| c.count).sum();
    // `top` is the end of the highest free buffer (or the fixed end).
    Some((Plan::from_offsets(offsets), count, top.max(fixed_end)))
}

/// The least common multiple of `a` and `b`; `None` past 2^64.
fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

/// Buffers per chunk of [`stacked`] (below, one chunk, sequentially).
const STACKED_CHUNK: usize = 1 << 16;

/// The free buffers of `buffers` one above the other from `base` into
/// `offsets` (the fixed ones at their offsets); how many were free.
fn stack_from(buffers: &[crate::problem::Buffer], offsets: &mut [u64], base: u64) -> usize {
    let mut top = base;
    let mut count = 0;
    for (o, b) in offsets.iter_mut().zip(buffers) {
        *o = b.fixed_offset.unwrap_or_else(|| {
            let at = align_up(top, b.alignment);
            top = at.saturating_add(b.size);
            count += 1;
            at
        });
    }
    count
}

/// Every unplaced buffer above the previous one, from `base`: fits in 64
/// bits by the problem's own check on the sum of sizes.
fn stack(
    ranges: &mut [(u64, u64)],
    placed: &[bool],
    alignment: &dyn Fn(u32) -> u64,
    base: u64,
) -> usize {
    let mut top = base;
    let mut count = 0;
    for (p, range) in ranges.iter_mut().enumerate() {
        if !placed[p] {
            let at = align_up(top, alignment(p as u32));
            let end = at.saturating_add(range.1 - range.0);
            *range = (at, end);
            top = end;
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::geometry::occupancy::Span;
    use crate::plan::{validate, Plan};
    use crate::problem::{Buffer, Problem};

    /// Completes `offsets` (by buffer) where `placed` (by buffer) is false.
    fn complete_plan(p: &Problem, placed: &[bool], offsets: &[u64]) -> (Plan, usize) {
        let spans: Vec<Span> = p.buffers().iter().map(Span::from).collect();
        let occupancy = Occupancy::new(&spans, usize::MAX, &Stop::never()).unwrap();
        let at = |q: u32| occupancy.buffer_at(q) as usize;
        let mut ranges: Vec<(u64, u64)> = (0..p.len() as u32)
            .map(|q| (offsets[at(q)], offsets[at(q)] + p.buffers()[at(q)].size))
            .collect();
        let by_position: Vec<bool> = (0..p.len() as u32).map(|q| placed[at(q)]).collect();
        let count = complete(
            &occupancy,
            &mut ranges,
            &by_position,
            &|q| p.buffers()[at(q)].alignment,
            &Stop::never(),
        )
        .unwrap();
        let offsets = (0..p.len() as u32)
            .map(|b| ranges[occupancy.position(b) as usize].0)
            .collect();
        (Plan::from_offsets(offsets), count)
    }

    #[test]
    fn completes_any_valid_partial_plan() {
        for kind in [Kind::Random, Kind::Layered, Kind::Trace] {
            let p = generate(kind, 600, 4).problem;
            let full = crate::solvers::greedy::place(
                &p,
                &crate::solvers::greedy::order(
                    &p,
                    crate::solvers::greedy::Order::Size,
                    &Stop::never(),
                )
                .unwrap(),
                crate::solvers::greedy::Fit::FirstFit,
                None,
            )
            .unwrap();
            for keep in [0, 1, 3, 10] {
                // Every `keep`-th buffer keeps its first-fit offset.
                let placed: Vec<bool> = (0..p.len()).map(|i| keep > 0 && i % keep == 0).collect();
                let (plan, count) = complete_plan(&p, &placed, full.offsets());
                assert_eq!(validate(&p, &plan), Ok(()), "{kind:?} keep {keep}");
                assert_eq!(count, placed.iter().filter(|&&x| !x).count());
                for (i, &x) in placed.iter().enumerate() {
                    if x {
                        assert_eq!(plan.offsets()[i], full.offsets()[i]);
                    }
                }
            }
        }
    }

    /// Stacked in one chunk or in several (from `STACKED_CHUNK` buffers,
    /// with fixed and aligned buffers), the plan is valid and counts every
    /// free buffer.
    #[test]
    fn stacked_plans_are_valid() {
        for n in [500, 2 * STACKED_CHUNK + 7] {
            let p = crate::solvers::greedy::tests::mixed(Kind::Trace, n);
            let (plan, count) = stacked(&p);
            assert_eq!(validate(&p, &plan), Ok(()), "{n}");
            let free = p.buffers().iter().filter(|b| b.fixed_offset.is_none());
            assert_eq!(count, free.count(), "{n}");
        }
    }

    /// Stacked in time windows, the plan is a small multiple of the max
    /// load where stacking every buffer above the previous one is the sum
    /// of the sizes: on instances of four kinds, below a fifth of it (2 to
    /// 30 max loads where the sum is 75 to 1,200), and within four max
    /// loads a level.
    #[test]
    fn stacking_in_time_windows_is_far_below_the_sum_of_sizes() {
        for kind in [Kind::Random, Kind::Layered, Kind::Trace, Kind::Perfect] {
            let p = generate(kind, 2 * STACKED_CHUNK + 7, 3).problem;
            let (plan, count, makespan) = stacked_measured(&p);
            assert_eq!(validate(&p, &plan), Ok(()), "{kind:?}");
            assert_eq!(count, p.len(), "{kind:?}");
            assert_eq!(makespan, Some(plan.makespan(&p)), "{kind:?}");
            let sum: u64 = p.buffers().iter().map(|b| b.size).sum();
            let makespan = plan.makespan(&p);
            assert!(makespan * 5 < sum, "{kind:?}: {makespan} against {sum}");
            let levels = u64::from(STACKED_LEVELS) + 1;
            assert!(
                makespan <= levels * p.max_load() * 4,
                "{kind:?}: {makespan}"
            );
        }
        // A lifetime as long as the whole range goes to the top window;
        // one instant wide, to the last level: still valid.
        let mut buffers: Vec<Buffer> = (0..STACKED_CHUNK as u64)
            .map(|i| Buffer::new(format!("b{i}"), i, i + 1 + i % 5, 1 + i % 13))
            .collect();
        buffers.push(Buffer::new("all", 0, STACKED_CHUNK as u64 + 10, 7));
        let p = Problem::new(buffers, None).unwrap();
        let (plan, _, _) = stacked_measured(&p);
        assert_eq!(validate(&p, &plan), Ok(()));
    }

    /// Stacked in chunks with alignments that are not powers of two (each
    /// chunk based on a common multiple), or with alignments whose common
    /// multiple passes 2^64 (then sequentially): valid, every free buffer
    /// counted.
    #[test]
    fn stacked_chunks_keep_any_alignment() {
        let n = 2 * STACKED_CHUNK + 3;
        let base = generate(Kind::Random, n, 6).problem;
        // Two large coprime alignments: their multiple passes 2^64.
        let huge = [(1u64 << 33) - 9, (1 << 33) - 1];
        for aligns in [[24u64, 40], huge] {
            let buffers: Vec<Buffer> = base
                .buffers()
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let b = Buffer::new(b.id.clone(), b.start, b.end, b.size % 1000 + 1);
                    match i % 7 {
                        0 => b.aligned(aligns[0]),
                        3 => b.aligned(aligns[1]),
                        _ if i % 1001 == 5 => b.fixed((i as u64) << 20),
                        _ => b,
                    }
                })
                .collect();
            let fixed = buffers.iter().filter(|b| b.fixed_offset.is_some()).count();
            let p = Problem::new(buffers, None).unwrap();
            assert_eq!(
                stacked_in_chunks(&p).is_some(),
                aligns[0] == 24,
                "{aligns:?}"
            );
            let (plan, count, makespan) = stacked_measured(&p);
            assert_eq!(validate(&p, &plan), Ok(()), "{aligns:?}");
            assert_eq!(count, n - fixed, "{aligns:?}");
            if let Some(makespan) = makespan {
                let stats = crate::plan::Stats::new(&p, &plan);
                assert_eq!(makespan, stats.makespan, "{aligns:?}");
            }
        }
    }

    /// The bucketed plan: valid with fixed and aligned buffers, every free
    /// buffer counted, far below stacking, and with a bucket per time
    /// step, the fallback's own plan for every free buffer.
    #[test]
    fn bucketed_plans_are_valid_and_far_below_stacking() {
        for kind in [Kind::Random, Kind::Layered, Kind::Trace] {
            let p = crate::solvers::greedy::tests::mixed(kind, 3000);
            let free = p.buffers().iter().filter(|b| b.fixed_offset.is_none());
            let (plan, count) = bucketed(&p, Method::BestFit, &Stop::never()).unwrap();
            assert_eq!(validate(&p, &plan), Ok(()), "{kind:?}");
            assert_eq!(count, free.count());
            // Heights above the fixed buffers (placed up to 2^41).
            let base = p.fixed_end();
            let (stack, _) = stacked(&p);
            let (ours, theirs) = (plan.makespan(&p) - base, stack.makespan(&p) - base);
            assert!(ours * 4 < theirs, "{kind:?}: {ours} against {theirs}");
        }
        // Fewer time steps than buffers: one bucket per step, the
        // fallback's plan exactly.
        let halved: Vec<Buffer> = generate(Kind::Random, 600, 4)
            .problem
            .buffers()
            .iter()
            .map(|b| {
                Buffer::new(
                    b.id.clone(),
                    b.start / 2,
                    (b.end / 2).max(b.start / 2 + 1),
                    b.size,
                )
            })
            .collect();
        let p = Problem::new(halved, None).unwrap();
        let span = p.buffers().iter().map(|b| b.end).max().unwrap()
            - p.buffers().iter().map(|b| b.start).min().unwrap();
        assert!(span <= p.len() as u64, "{span}");
        let none = vec![false; p.len()];
        let (exact, _) = complete_plan(&p, &none, &vec![0; p.len()]);
        assert_eq!(
            bucketed(&p, Method::Colouring, &Stop::never())
                .unwrap()
                .0
                .makespan(&p),
            exact.makespan(&p)
        );
        // Wider buckets than steps (a long timeline): still valid.
        let stretched: Vec<Buffer> = p
            .buffers()
            .iter()
            .map(|b| Buffer::new(b.id.clone(), b.start * 1000, b.end * 1000 - 7, b.size))
            .collect();
        let q = Problem::new(stretched, None).unwrap();
        assert_eq!(
            validate(
                &q,
                &bucketed(&q, Method::BestFit, &Stop::never()).unwrap().0
            ),
            Ok(())
        );
        // Nothing free, or nothing at all.
        let fixed = Problem::new(vec![Buffer::new("f", 0, 4, 8).fixed(16)], None).unwrap();
        assert_eq!(
            bucketed(&fixed, Method::BestFit, &Stop::never()).unwrap(),
            (Plan::from_offsets(vec![16]), 0)
        );
        let empty = Problem::new(Vec::new(), None).unwrap();
        assert_eq!(
            bucketed(&empty, Method::BestFit, &Stop::never()).unwrap(),
            (Plan::default(), 0)
        );
    }

    /// The bucketed plan cut at any poll gives up (`None`), else it is the
    /// uncut plan; with no grace the stop takes the stacked plan, with
    /// all the time it needs the bucketed one. A problem above
    /// `STACKED_BESIDE_MIN` buffers is too large for a unit test: the
    /// stacked plan beside is the same function.
    #[test]
    fn a_stop_at_any_poll_of_the_bucketed_plan_gives_a_valid_plan() {
        let p = crate::solvers::greedy::tests::mixed(Kind::Trace, 3000);
        let whole = bucketed(&p, Method::Colouring, &Stop::never()).unwrap();
        let mut cuts = 0;
        for cut in 0..12 {
            let stop = Stop::after_looks(cut as u64);
            match bucketed(&p, Method::Colouring, &stop) {
                Ok(plan) => assert_eq!(plan, whole, "cut {cut}"),
                Err(_) => cuts += 1,
            }
        }
        // A stop at the first poll and at the poll of each pass.
        assert!(cuts >= 3, "{cuts}");
        assert_eq!(bucketed_within(&p, Duration::ZERO), stacked(&p));
        assert_eq!(bucketed_within(&p, Duration::MAX), whole);
        assert_eq!(validate(&p, &bucketed_or_stacked(&p).0), Ok(()));
    }

    #[test]
    fn honours_alignment_and_fixed_buffers() {
        let p = Problem::new(
            vec![
                Buffer::new("f", 0, 10, 100).fixed(1000),
                Buffer::new("a", 0, 5, 3).aligned(24),
                Buffer::new("b", 2, 8, 3).aligned(24),
                Buffer::new("c", 5, 9, 7),
                Buffer::new("d", 1, 3, u64::MAX / 4),
            ],
            None,
        )
        .unwrap();
        let placed = [true, false, false, false, false];
        let (plan, count) = complete_plan(&p, &placed, &[1000, 0, 0, 0, 0]);
        assert_eq!(count, 4);
        assert_eq!(validate(&p, &plan), Ok(()));
        assert!(plan.offsets()[1..].iter().all(|&o| o >= 1100));
        let (plan, count) = bucketed(&p, Method::BestFit, &Stop::never()).unwrap();
        assert_eq!(count, 4);
        assert_eq!(validate(&p, &plan), Ok(()));
        assert!(plan.offsets()[1..].iter().all(|&o| o >= 1100));
    }
}
