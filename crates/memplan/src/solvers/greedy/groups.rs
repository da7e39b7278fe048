//! Placing one time group of the [`Occupancy`] index: dense first-fit
//! groups in a [`TimeTree`], the others by sorting each buffer's conflicts,
//! in batches computed in parallel.

use crate::stop::Stop;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::geometry::bucket_fit::BucketFit;
use crate::geometry::fit::{best_fit, first_fit};
use crate::geometry::marks::Marks;
use crate::geometry::occupancy::{prefetch_lines, Occupancy, Span, Window};
use crate::geometry::time_tree::TimeTree;
use crate::problem::{Buffer, Hints};

use super::Fit;

/// What placing one group needs besides its own slice of address ranges.
pub(super) struct GroupContext<'a> {
    pub(super) buffers: &'a [Buffer],
    pub(super) occupancy: &'a Occupancy,
    /// Per position: (compressed end, rank in the order).
    pub(super) stamps: &'a [(u32, u32)],
    pub(super) fit: Fit,
    pub(super) aligned: bool,
    /// Preferred offsets, tried before the fit ([`crate::hints`]).
    pub(super) hints: Option<&'a Hints>,
    /// Hints ending above this are not tried (the limit or the capacity).
    pub(super) hint_limit: Option<u64>,
    pub(super) limit: Option<u64>,
    pub(super) stop: &'a Stop,
}

impl GroupContext<'_> {
    /// Places the group starting at position `from`: `work` lists its
    /// (position, buffer) pairs in order; fills `ranges` (the group's
    /// address ranges, by position). Returns how it ended (not done when
    /// `limit` is exceeded or `stop` cuts) and the longest batch that
    /// [`GroupContext::place_in_batches`] placed (0 for none: a dense
    /// group, or one buffer at a time throughout).
    pub(super) fn place_group(
        &self,
        ranges: &mut [(u64, u64)],
        from: u32,
        work: &[(u32, u32)],
        tree: Option<&TimeTree>,
    ) -> (GroupEnd, usize) {
        let mut longest_batch = 0;
        let end = match tree {
            Some(tree) => self.place_in_tree(ranges, from, work, tree.clone()),
            None => self.place_in_batches(ranges, from, work, &mut longest_batch),
        };
        (end, longest_batch)
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
            if self.stop.every_costly(k).is_err() {
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
    /// below `r` (the marked ones of `placed`): its hint if free, else by
    /// the group's fit; `top` is at least the end of every one of them.
    /// Its query window and size come from [`GroupContext::windows`].
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        ranges: &[(u64, u64)],
        placed: &Placed,
        from: u32,
        (p, b): (u32, u32),
        &(ref window, size): &(Window, u64),
        r: u32,
        top: u64,
        conflicts: &mut Conflicts,
    ) -> u64 {
        let alignment = self.alignment(b);
        let hint = self.hint(b, size);
        if hint.is_none() && self.fit != Fit::BestFit && top <= u64::from(u32::MAX) {
            // Both ends fit in 32 bits: the ranges read in the scan itself
            // (mostly sequentially), one word each, for the bucketed
            // first-fit.
            let packed = &mut conflicts.packed;
            let found = self
                .occupancy
                .occupied_marked(window, &placed.marks, packed, |c| {
                    placed.packed[c - from as usize]
                });
            return conflicts
                .buckets
                .first_fit(&packed[..found], size, alignment, top);
        }
        let positions = &mut conflicts.positions;
        positions.clear();
        self.occupancy.occupied_during(p, r, self.stamps, positions);
        if let Some(h) = hint {
            let free = positions.iter().all(|&c| {
                let (o, e) = ranges[(c - from) as usize];
                e <= h || h + size <= o
            });
            if free {
                return h;
            }
        }
        if self.fit != Fit::BestFit && top <= u64::from(u32::MAX) {
            // Both ends fit in 32 bits: bucketed as one word.
            let packed = &mut conflicts.packed;
            packed.clear();
            packed.extend(positions.iter().map(|&c| {
                let (o, e) = ranges[(c - from) as usize];
                o << 32 | e
            }));
            return conflicts.buckets.first_fit(packed, size, alignment, top);
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

    /// The [`Occupancy`] path, in batches of [`BATCH`] to [`BATCH_MAX`]
    /// consecutive buffers of the order: each buffer's offset is first
    /// computed in parallel among the buffers placed before the batch,
    /// then the batch is committed in order; a buffer that an earlier one
    /// of the batch overlaps in time (and, for first-fit, in address) is
    /// fitted again (the pairs alive together come from a sweep,
    /// [`BatchOverlaps`]). A first-fit offset computed without obstacles
    /// that turn out not to touch it is still the lowest feasible one, so
    /// the plan is exactly that of one buffer at a time. The batch length
    /// doubles while refits are rare and few buffers of a batch are alive
    /// together (fewer joins of the threads), and halves when not. When
    /// refits are frequent (buffers of the same size competing for the
    /// same gaps), batches stop until they pay again. Raises
    /// `longest_batch` to the length of each batch it places.
    fn place_in_batches(
        &self,
        ranges: &mut [(u64, u64)],
        from: u32,
        work: &[(u32, u32)],
        longest_batch: &mut usize,
    ) -> GroupEnd {
        let mut conflicts = Conflicts::default();
        // Per thread of the pool: the working memory of the guesses.
        let scratch: Vec<GuessScratch> = (0..rayon::current_num_threads().max(1))
            .map(|_| Default::default())
            .collect();
        let mut guesses = vec![0u64; BATCH_MAX];
        let mut overlaps = BatchOverlaps::default();
        let mut placed = Placed::new(self.stamps, ranges, from);
        let mut windows = Vec::with_capacity(CHUNK);
        // At least every end so far (the unplaced ranges hold their sizes).
        let mut top = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        // Recent refits per batched buffer, in 1/16ths; sequential stretch
        // left before batches are tried again; the current batch length.
        let (mut refit_rate, mut sequential, mut batch_len) = (0u32, 0usize, BATCH);
        let (mut k, mut next_poll) = (0, 0);
        // Whether a poll in the batch's guesses found the stop.
        let cut = AtomicBool::new(false);
        // The fits' work since the last poll, on this thread.
        let mut scans = Scans::default();
        while k < work.len() {
            if k >= next_poll {
                next_poll = k + BATCH_POLL;
                if self.stop.is_cut() {
                    return GroupEnd::Stopped(k);
                }
            }
            if work.len() - k < batch_len {
                // The tail: shorter batches, down to the shortest.
                batch_len = ((work.len() - k + 1).next_power_of_two() / 2).max(BATCH);
            }
            if sequential > 0 || work.len() - k < batch_len {
                // One buffer at a time, a chunk of windows at once.
                let chunk = if sequential > 0 {
                    sequential.min(CHUNK)
                } else {
                    CHUNK
                };
                let items = &work[k..(k + chunk).min(work.len())];
                self.windows(ranges, from, items, &mut windows);
                for (i, &item) in items.iter().enumerate() {
                    if scans.passed(windows[i].0.scan_len()) && self.stop.is_cut() {
                        return GroupEnd::Stopped(k + i);
                    }
                    if let Some((ahead, _)) = windows.get(i + PREFETCH) {
                        placed.prefetch(self.occupancy, ahead, from);
                    }
                    let r = self.stamps[item.0 as usize].1;
                    let offset = self.fit(
                        ranges,
                        &placed,
                        from,
                        item,
                        &windows[i],
                        r,
                        top,
                        &mut conflicts,
                    );
                    let Some(end) = self.commit(ranges, &mut placed, from, item.0, offset) else {
                        return GroupEnd::OverLimit;
                    };
                    top = top.max(end);
                }
                sequential = sequential.saturating_sub(items.len());
                k += items.len();
                continue;
            }
            let batch = &work[k..k + batch_len];
            *longest_batch = (*longest_batch).max(batch_len);
            // Only buffers placed before the batch count here.
            let before = self.stamps[batch[0].0 as usize].1;
            {
                let shared: &[(u64, u64)] = ranges;
                let placed = &placed;
                // Which buffers of the batch are alive together depends on
                // the batch alone: found beside the guesses.
                let occupancy = self.occupancy;
                let overlaps = &mut overlaps;
                let find =
                    move || overlaps.find(batch.iter().map(|&(p, _)| occupancy.compressed(p)));
                let task = (batch_len / 8).max(BATCH / 4);
                let cut = &cut;
                let guess = || {
                    batch
                        .par_chunks(task)
                        .zip(guesses[..batch_len].par_chunks_mut(task))
                        .for_each(|(items, guesses)| {
                            // This thread's working memory (kept from
                            // batch to batch; nothing here runs
                            // another task while it is held).
                            let slot = rayon::current_thread_index().unwrap_or(0) % scratch.len();
                            let mut held = scratch[slot]
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                            let (conflicts, windows) = &mut *held;
                            self.windows(shared, from, items, windows);
                            let mut scans = Scans::default();
                            for (i, ((&item, guess), window)) in
                                items.iter().zip(guesses).zip(windows.iter()).enumerate()
                            {
                                if scans.passed(window.0.scan_len()) && self.stop.is_cut() {
                                    cut.store(true, Ordering::Relaxed);
                                    return;
                                }
                                if let Some((ahead, _)) = windows.get(i + PREFETCH) {
                                    placed.prefetch(self.occupancy, ahead, from);
                                }
                                *guess = self.fit(
                                    shared, placed, from, item, window, before, top, conflicts,
                                );
                            }
                        })
                };
                rayon::join(find, guess);
            }
            // Cut in the guesses: none of the batch is placed.
            if cut.load(Ordering::Relaxed) {
                return GroupEnd::Stopped(k);
            }
            let mut refits = 0;
            // First-fit keeps its offset unless an obstacle touches it;
            // best-fit's tightest gap may change with any.
            let first_fit = self.fit != Fit::BestFit;
            for (i, &(p, b)) in batch.iter().enumerate() {
                if let Some(&(ahead, _)) = batch.get(i + COMMIT_AHEAD) {
                    let ahead = (ahead - from) as usize;
                    prefetch_lines(&ranges[ahead..=ahead]);
                    prefetch_lines(&placed.packed[ahead..=ahead]);
                }
                let local = (p - from) as usize;
                let size = ranges[local].1 - ranges[local].0;
                let mut offset = guesses[i];
                let touched = overlaps.earlier(i).any(|j| {
                    let (o, x) = ranges[(batch[j].0 - from) as usize];
                    !first_fit || (o < offset + size && offset < x)
                });
                if touched {
                    refits += 1;
                    let r = self.stamps[p as usize].1;
                    let window = (self.occupancy.window(p), size);
                    // Cut in the commits: the batch's first `i` are placed.
                    if scans.passed(window.0.scan_len()) && self.stop.is_cut() {
                        return GroupEnd::Stopped(k + i);
                    }
                    offset = self.fit(
                        ranges,
                        &placed,
                        from,
                        (p, b),
                        &window,
                        r,
                        top,
                        &mut conflicts,
                    );
                }
                let Some(end) = self.commit(ranges, &mut placed, from, p, offset) else {
                    return GroupEnd::OverLimit;
                };
                top = top.max(end);
            }
            refit_rate = (refit_rate * 3 + refits * 16 / batch_len as u32) / 4;
            k += batch_len;
            if refit_rate >= 4 {
                // A quarter refitted: the batches cost more than they save.
                sequential = 16 * BATCH;
                refit_rate = 0;
                batch_len = BATCH;
            } else if refits as usize * 32 <= batch_len && overlaps.len() <= 2 * batch_len {
                // Rarely refitted, few buffers alive together: longer
                // batches, fewer joins of the threads (each a wake-up of
                // the other).
                batch_len = (2 * batch_len).min(BATCH_MAX);
            } else if refits as usize * 8 > batch_len || overlaps.len() > 8 * batch_len {
                batch_len = (batch_len / 2).max(BATCH);
            }
        }
        GroupEnd::Done
    }

    /// The [`Window`]s and sizes of `items` (position, buffer) in
    /// `windows`: in one loop, so that the processor overlaps their loads
    /// (at random places).
    fn windows(
        &self,
        ranges: &[(u64, u64)],
        from: u32,
        items: &[(u32, u32)],
        windows: &mut Vec<(Window, u64)>,
    ) {
        windows.clear();
        windows.extend(items.iter().map(|&(p, _)| {
            let (o, e) = ranges[(p - from) as usize];
            (self.occupancy.window(p), e - o)
        }));
    }

    /// Records the buffer at position `p` at `offset` and returns its end;
    /// `None` when that is above the limit.
    fn commit(
        &self,
        ranges: &mut [(u64, u64)],
        placed: &mut Placed,
        from: u32,
        p: u32,
        offset: u64,
    ) -> Option<u64> {
        let local = (p - from) as usize;
        let size = ranges[local].1 - ranges[local].0;
        let end = offset + size;
        if self.limit.is_some_and(|l| end > l) {
            return None;
        }
        ranges[local] = (offset, end);
        placed.marks.set(p as usize);
        placed.packed[local] = pack(offset, end);
        Some(end)
    }
}

/// A pool thread's working memory for the guesses of
/// [`GroupContext::place_in_batches`]: [`GroupContext::fit`]'s and the
/// query windows.
type GuessScratch = std::sync::Mutex<(Conflicts, Vec<(Window, u64)>)>;

/// Working memory of [`GroupContext::fit`].
#[derive(Default)]
struct Conflicts {
    /// Positions of the placed buffers overlapping in time.
    positions: Vec<u32>,
    /// Address ranges.
    ranges: Vec<(u64, u64)>,
    /// Address ranges as `offset << 32 | end`, when both fit in 32 bits
    /// (scratch of [`Occupancy::occupied_marked`]: its length is no
    /// count).
    packed: Vec<u64>,
    /// First-fit among `packed`, unsorted.
    buckets: BucketFit,
}

/// The placed buffers of a group as [`GroupContext::fit`] scans them when
/// addresses fit in 32 bits: which positions are placed (the ranks below
/// the current one: fixed buffers and those committed so far), and each
/// address range packed as one word, read in the same pass.
struct Placed {
    marks: Marks,
    /// By position minus the group's start: `offset << 32 | end`, exact
    /// for the placed positions while every end is below 2^32.
    packed: Vec<u64>,
}

impl Placed {
    /// The fixed buffers of the group at `from` (rank 0 in `stamps`),
    /// whose address ranges (by position minus `from`) are `ranges`.
    fn new(stamps: &[(u32, u32)], ranges: &[(u64, u64)], from: u32) -> Self {
        let from = from as usize;
        let mut marks = Marks::new(from, from + ranges.len());
        for (p, &(_, rank)) in (from..).zip(&stamps[from..from + ranges.len()]) {
            if rank == 0 {
                marks.set(p);
            }
        }
        let packed = ranges.iter().map(|&(o, e)| pack(o, e)).collect();
        Placed { marks, packed }
    }

    /// Prefetches what the scan of `window` reads.
    #[inline]
    fn prefetch(&self, occupancy: &Occupancy, window: &Window, from: u32) {
        occupancy.prefetch_marked(window, &self.marks, &self.packed, from);
    }
}

/// An address range as one word, `offset << 32 | end` (exact when both
/// fit in 32 bits).
#[inline]
fn pack(offset: u64, end: u64) -> u64 {
    offset << 32 | (end & u64::from(u32::MAX))
}

/// How many buffers ahead the commits of a batch prefetch their ranges.
const COMMIT_AHEAD: usize = 16;

/// How many buffers ahead [`GroupContext::place_in_batches`] prefetches.
const PREFETCH: usize = 4;

/// Buffers whose [`Window`]s [`GroupContext::place_in_batches`] computes
/// at once when it places one buffer at a time.
const CHUNK: usize = 16;

/// Buffers per batch of [`GroupContext::place_in_batches`] at first, and
/// at least.
const BATCH: usize = 64;

/// Buffers per batch of [`GroupContext::place_in_batches`] at most: the
/// length doubles after each batch that needed few refits.
const BATCH_MAX: usize = 1024;

/// Which buffers of a batch of [`GroupContext::place_in_batches`]
/// overlap which earlier ones in time: for each buffer, the batch indices
/// of the earlier buffers alive with it, found by a sweep by start
/// (O(b log b + pairs) for a batch of b buffers, not O(b²)).
#[derive(Default)]
struct BatchOverlaps {
    /// (compressed start, batch index), sorted: the sweep's order.
    by_start: Vec<(u32, u32)>,
    /// Batch indices of the buffers alive at the sweep's time.
    active: Vec<u32>,
    /// (later, earlier) batch indices of each pair, sorted.
    pairs: Vec<(u32, u32)>,
    /// Per batch index (and one past the last): where its pairs start.
    first: Vec<u32>,
}

impl BatchOverlaps {
    /// The overlapping pairs among the compressed lifetimes `spans` (by
    /// batch index).
    fn find(&mut self, spans: impl ExactSizeIterator<Item = (u32, u32)> + Clone) {
        let n = spans.len();
        self.by_start.clear();
        self.by_start
            .extend(spans.clone().zip(0u32..).map(|((s, _), i)| (s, i)));
        self.by_start.sort_unstable();
        let ends: &mut Vec<u32> = &mut self.first;
        ends.clear();
        ends.extend(spans.map(|(_, e)| e));
        self.active.clear();
        self.pairs.clear();
        for &(s, i) in &self.by_start {
            self.active.retain(|&a| ends[a as usize] > s);
            // Started no later, still alive at `s`: alive together.
            self.pairs
                .extend(self.active.iter().map(|&a| (a.max(i), a.min(i))));
            self.active.push(i);
        }
        self.pairs.sort_unstable();
        let first = &mut self.first;
        first.clear();
        let mut at = 0;
        for i in 0..=n as u32 {
            while at < self.pairs.len() && self.pairs[at].0 < i {
                at += 1;
            }
            first.push(at as u32);
        }
    }

    /// The batch indices of the earlier buffers alive with buffer `i`.
    #[inline]
    fn earlier(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.pairs[self.first[i] as usize..self.first[i + 1] as usize]
            .iter()
            .map(|&(_, j)| j as usize)
    }

    /// How many pairs the last [`BatchOverlaps::find`] found.
    fn len(&self) -> usize {
        self.pairs.len()
    }
}

/// The first-fit tree of the group `[from, to)` of `occupancy` (indexed by
/// position minus `from`) with its fixed buffers placed.
pub(super) fn group_tree(
    buffers: &[Buffer],
    occupancy: &Occupancy,
    from: u32,
    to: u32,
    stop: &Stop,
) -> Option<TimeTree> {
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
    let mut tree = TimeTree::new(&spans, stop).ok()?;
    for p in from..to {
        let b = &buffers[occupancy.buffer_at(p) as usize];
        if let Some(offset) = b.fixed_offset {
            tree.place(p - from, offset, b.size);
        }
    }
    Some(tree)
}

/// How the placement of one group ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupEnd {
    /// Every buffer placed.
    Done,
    /// A buffer would have ended above the limit.
    OverLimit,
    /// `stop` cut after this many buffers of the group's work.
    Stopped(usize),
}

/// How many buffers the batched path places between two looks at the stop
/// token at most (sooner after [`Stop::EVERY`] positions of fits' scans).
/// Smaller than [`Stop::EVERY_COSTLY`]: a batch's buffers are fitted
/// speculatively beside each other and committed together, so a look
/// falls between batches, and a batch can hold up to a thousand buffers.
const BATCH_POLL: usize = 64;

/// The work of fits since the last look, counted in positions scanned
/// (cheap units: a buffer alive beside thousands of others scans that many
/// positions to fit, so looks by count of buffers alone let a stop wait on
/// a few slow fits).
#[derive(Default)]
struct Scans(usize);

impl Scans {
    /// Adds a fit's `scan` and says whether it is time to look (then
    /// starts counting anew).
    #[inline]
    fn passed(&mut self, scan: usize) -> bool {
        self.0 += scan;
        if self.0 >= Stop::EVERY {
            self.0 = 0;
            return true;
        }
        false
    }
}

/// Above this many time-overlapping buffers per buffer on average, first-fit
/// uses the [`TimeTree`] (O(log² n) per buffer) rather than sorting the
/// conflicts (O(k log k)): the tree's cost per buffer does not grow with
/// the overlaps, the sort's does, and the crossover was measured on the
/// public files and generated instances (figures in `docs/benchmarks.md`).
pub(crate) const DENSE_CONFLICTS: u64 = 128;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The sweep finds exactly the pairs a check of every pair finds,
        /// also when reused.
        #[test]
        fn batch_overlaps_are_the_overlapping_pairs(
            batches in proptest::collection::vec(
                proptest::collection::vec((0u32..50, 1u32..20), 0..70),
                1..3,
            ),
        ) {
            let mut overlaps = BatchOverlaps::default();
            for spec in &batches {
                let spans: Vec<(u32, u32)> = spec.iter().map(|&(s, len)| (s, s + len)).collect();
                overlaps.find(spans.iter().copied());
                let mut count = 0;
                for (i, &(s, e)) in spans.iter().enumerate() {
                    let mut got: Vec<usize> = overlaps.earlier(i).collect();
                    got.sort_unstable();
                    let want: Vec<usize> = (0..i)
                        .filter(|&j| spans[j].0 < e && s < spans[j].1)
                        .collect();
                    count += want.len();
                    prop_assert_eq!(got, want, "buffer {}", i);
                }
                prop_assert_eq!(overlaps.len(), count);
            }
        }
    }
}
