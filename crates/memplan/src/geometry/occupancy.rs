//! Which address ranges do placed buffers occupy during a buffer's lifetime?
//! The fitting step of every greedy solver asks this once per buffer, so it
//! must cost about the size of its answer, not the number of placed buffers.
//!
//! Layout: the buffers are laid out by increasing start time (their
//! *positions*), with time compressed to the rank of the distinct start
//! times (two half-open lifetimes overlap exactly when their compressed ones
//! do). The buffers overlapping buffer `b` at position `p`, lifetime
//! `[s, e)`, are (a) those starting in `[s, e)`, a contiguous run of
//! positions around `p`, and (b) those alive at `s` that started before it.
//! For (b), *checkpoints* are placed along the positions; each lists the
//! positions alive at its time that started before it. A query scans the
//! checkpoint at or before `s`, the positions between that checkpoint and
//! `p`, and the run after `p` that starts before `e`. Checkpoints are spaced
//! by at least the size of the previous checkpoint's list, so the lists take
//! at most about `n` entries (memory O(n)), and each query scans O(live + k)
//! entries, mostly sequentially.
//!
//! The index itself is static: which buffers count as placed is decided by
//! the caller's *ranks* (a buffer is placed before every buffer of higher
//! rank), so a query filters by rank and no list changes when a buffer is
//! placed. The address ranges live in the caller's array, by position, so
//! that one index serves several placements at once (boxing's iterations).
//!
//! Independent time groups (no buffer of one alive with a buffer of
//! another, [`crate::geometry::sweep::time_groups`]) are contiguous ranges of
//! positions with a checkpoint at each start: a query never reads outside
//! its group, and groups can be placed in parallel on disjoint slices.

use rayon::prelude::*;

use crate::buffer::Buffer;
use crate::dispose::drop_later;
use crate::geometry::marks::Marks;
use crate::geometry::sort::{collect, counting_sorted, sort};
use crate::stop::{Cut, Stop};

/// The lifetime `[start, end)` and size of one indexed buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First live time.
    pub start: u64,
    /// First dead time.
    pub end: u64,
    /// Bytes.
    pub size: u64,
}

impl From<&Buffer> for Span {
    fn from(b: &Buffer) -> Self {
        Span {
            start: b.start,
            end: b.end,
            size: b.size,
        }
    }
}

/// Where a query of [`Occupancy::occupied_marked`] reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    /// The position queried.
    p: u32,
    /// Its compressed start.
    s: u32,
    /// Its checkpoint's list, as a range of `alive`.
    list: (u32, u32),
    /// Its checkpoint's position.
    q: u32,
    /// Where its prefetch starts ([`Occupancy::prefetch_from`]).
    lo: u32,
    /// The first position starting at or after its compressed end.
    to: u32,
}

impl Window {
    /// How many positions [`Occupancy::occupied_during`] scans for this
    /// window: the measure of a query's work (a buffer alive beside
    /// thousands of others costs thousands of times one alone).
    #[inline]
    pub fn scan_len(&self) -> usize {
        (self.list.1 - self.list.0) as usize + (self.to - self.q) as usize
    }
}

/// Checkpoints are at least this many positions apart.
const MIN_GAP: usize = 32;

/// Buffers laid out by start time, searchable by time overlap. Built once
/// for a set of spans indexed `0..n`; see the module notes.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    /// Position of each buffer.
    position: Vec<u32>,
    /// Buffer at each position.
    buffer_at: Vec<u32>,
    /// Compressed start of the buffer at each position (non-decreasing).
    start: Vec<u32>,
    /// Compressed end of the buffer at each position.
    end: Vec<u32>,
    /// Per compressed time (and one past the last): the first position
    /// starting at or after it.
    run_begin: Vec<u32>,
    /// Per compressed time: its checkpoint (the last at or before it).
    checkpoint_of: Vec<u32>,
    /// Position of each checkpoint (the first of a run).
    checkpoint_at: Vec<u32>,
    /// Per checkpoint (and one past the last): where its list starts in
    /// `alive`.
    alive_from: Vec<u32>,
    /// Per checkpoint, the positions alive at its time that started before.
    alive: Vec<u32>,
    /// Independent time groups as position ranges `[from, to)`.
    groups: Vec<(u32, u32)>,
}

impl Occupancy {
    /// Indexes `spans` in O(n log n) time and O(n) memory. Consecutive
    /// independent parts of the timeline are merged into groups of at
    /// least `min_group` buffers (see [`Occupancy::groups`]). `Err` once
    /// `stop` cuts, checked every [`Stop::EVERY`] buffers of each pass and
    /// inside the sort ([`sort`]).
    pub fn new(spans: &[Span], min_group: usize, stop: &Stop) -> Result<Self, Cut> {
        Self::build(
            spans.len(),
            |i| (spans[i].start, spans[i].end),
            min_group,
            stop,
        )
    }

    /// [`Occupancy::new`] on the lifetimes of `buffers`.
    pub fn of_buffers(buffers: &[Buffer], min_group: usize, stop: &Stop) -> Result<Self, Cut> {
        Self::build(
            buffers.len(),
            |i| (buffers[i].start, buffers[i].end),
            min_group,
            stop,
        )
    }

    fn build(
        n: usize,
        lifetime: impl Fn(usize) -> (u64, u64) + Sync + Send,
        min_group: usize,
        stop: &Stop,
    ) -> Result<Self, Cut> {
        stop.check()?;
        let sorted: Vec<(u64, u64, u32)> = collect(
            n,
            |i| {
                let (start, end) = lifetime(i);
                (start, end, i as u32)
            },
            stop,
        )?;
        let sorted = sorted_by_start(sorted, stop)?;
        let (times, start, run_begin) = compressed_starts(&sorted, stop)?;
        // Both checked (tens of milliseconds each at 5M buffers), and the
        // sorted lifetimes freed on the disposal thread.
        let buffer_at = collect(n, |p| sorted[p].2, stop);
        let end = match &buffer_at {
            Ok(_) => compressed_ends(&sorted, &start, &times, stop),
            Err(cut) => Err(*cut),
        };
        drop_later(sorted, n);
        let (buffer_at, end) = (buffer_at?, end?);
        let position = positions(&buffer_at, stop)?;
        let groups = batches(&start, &end, min_group, stop)?;
        let (checkpoint_of, checkpoint_at, alive_from, alive) =
            checkpoints(&run_begin, &groups, &end, times.len(), stop)?;
        Ok(Occupancy {
            position,
            buffer_at,
            start,
            end,
            run_begin,
            checkpoint_of,
            checkpoint_at,
            alive_from,
            alive,
            groups,
        })
    }

    /// Number of indexed buffers.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// Number of distinct start times (compressed times are below this,
    /// compressed ends at most this).
    pub fn times(&self) -> usize {
        self.run_begin.len().saturating_sub(1)
    }

    /// The most bytes alive at once, given the size of each buffer: the
    /// max load, from the compressed lifetimes (no sort). `Err` once `stop`
    /// cuts, checked every [`Stop::EVERY`] buffers.
    pub fn max_load(&self, size: impl Fn(u32) -> u64, stop: &Stop) -> Result<u64, Cut> {
        // By position (the compressed times read in order, the starts'
        // changes written in order: two scattered accesses a buffer, its
        // size and its end's change, where a loop by buffer makes four),
        // the change of the load at each
        // compressed time, wrapping: the live sum itself is at most the sum
        // of all sizes, which `Problem::new` keeps below 2^64, so the
        // running sum of the changes is exact.
        let mut change = vec![0u64; self.times() + 1];
        for (p, ((&s, &e), &b)) in self
            .start
            .iter()
            .zip(&self.end)
            .zip(&self.buffer_at)
            .enumerate()
        {
            stop.every(p)?;
            let size = size(b);
            change[s as usize] = change[s as usize].wrapping_add(size);
            change[e as usize] = change[e as usize].wrapping_sub(size);
        }
        let (mut load, mut max) = (0u64, 0u64);
        for &c in &change {
            load = load.wrapping_add(c);
            max = max.max(load);
        }
        Ok(max)
    }

    /// Whether no buffer is indexed.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// The position of buffer `b` (its rank by start time).
    #[inline]
    pub fn position(&self, b: u32) -> u32 {
        self.position[b as usize]
    }

    /// The buffer at position `p`.
    #[inline]
    pub fn buffer_at(&self, p: u32) -> u32 {
        self.buffer_at[p as usize]
    }

    /// The independent time groups, as position ranges `[from, to)` in
    /// time order: no buffer of one overlaps a buffer of another in time.
    pub fn groups(&self) -> &[(u32, u32)] {
        &self.groups
    }

    /// The compressed lifetime of the buffer at position `p`: two buffers
    /// overlap in time exactly when these do.
    pub fn compressed(&self, p: u32) -> (u32, u32) {
        (self.start[p as usize], self.end[p as usize])
    }

    /// How many buffers of group `[from, to)` overlap each one in time,
    /// on average, counting each pair once (the later start lies in the
    /// earlier lifetime).
    pub fn mean_conflicts(&self, from: u32, to: u32) -> u64 {
        let pairs: u64 = (from as usize..to as usize)
            .map(|p| {
                let (s, e) = (self.start[p] as usize, self.end[p] as usize);
                u64::from(self.run_begin[e] - self.run_begin[s] - 1)
            })
            .sum();
        pairs / u64::from((to - from).max(1))
    }

    /// The per-placement stamps of the positions: `(compressed end, rank)`
    /// with every rank `u32::MAX` (never placed); the caller sets the ranks
    /// (see [`Occupancy::occupied_during`]).
    pub fn stamps(&self) -> Vec<(u32, u32)> {
        self.end.iter().map(|&e| (e, u32::MAX)).collect()
    }

    /// Appends to `out` the position of every buffer overlapping the one
    /// at position `p` in time whose rank is below `r` (the placed ones),
    /// in no particular order. `stamps` is by position, from
    /// [`Occupancy::stamps`] with the ranks set. Branch-free filtering: the
    /// tests are as good as random, and mispredicted branches would cost
    /// more than the scan.
    #[inline]
    pub fn occupied_during(&self, p: u32, r: u32, stamps: &[(u32, u32)], out: &mut Vec<u32>) {
        let w = self.window(p);
        let (p, s, q, to) = (p as usize, w.s, w.q as usize, w.to as usize);
        let list = &self.alive[w.list.0 as usize..w.list.1 as usize];
        let mut len = out.len();
        out.resize(len + list.len() + (to - q), 0);
        // Alive at s and started before it: the checkpoint's list, then
        // the positions between the checkpoint and p.
        for &c in list {
            let (end, rank) = stamps[c as usize];
            out[len] = c;
            len += usize::from(end > s && rank < r);
        }
        for (c, &(end, rank)) in (q..p).zip(&stamps[q..p]) {
            out[len] = c as u32;
            len += usize::from(end > s && rank < r);
        }
        // Starting in [s, e) after p.
        for (c, &(_, rank)) in (p + 1..to).zip(&stamps[p + 1..to]) {
            out[len] = c as u32;
            len += usize::from(rank < r);
        }
        out.truncate(len);
    }

    /// Where a query for position `p` reads: its compressed start, its
    /// checkpoint's list and the runs of positions. Five dependent loads
    /// at random places: a caller computing the windows of several
    /// upcoming queries in one loop lets the processor overlap them.
    #[inline]
    pub fn window(&self, p: u32) -> Window {
        let pu = p as usize;
        let (s, e) = (self.start[pu], self.end[pu]);
        let k = self.checkpoint_of[s as usize] as usize;
        let list = (self.alive_from[k], self.alive_from[k + 1]);
        let q = self.checkpoint_at[k];
        Window {
            p,
            s,
            list,
            q,
            lo: self.prefetch_from(list, q),
            to: self.run_begin[e as usize],
        }
    }

    /// Where the prefetch of a query whose checkpoint list is `list` (a
    /// range of `alive`) and checkpoint is at `q` starts: the list's first
    /// position (lists are in position order), unless the list is sparse
    /// there (a long-lived buffer started far before: prefetching the span
    /// would cost more than the scan), then `q`.
    #[inline]
    fn prefetch_from(&self, list: (u32, u32), q: u32) -> u32 {
        let len = list.1 - list.0;
        match self.alive.get(list.0 as usize) {
            Some(&first) if len > 0 && q - first <= 4 * len + 64 => first,
            _ => q,
        }
    }

    /// [`Occupancy::occupied_during`] of the query `w` (from
    /// [`Occupancy::window`]) with the placed positions given as `marks`
    /// (a position is placed when marked) rather than by rank, writing
    /// `item(c)` for each position `c` found, rather than `c`, at the
    /// start of `scratch` and returning how many: a caller that needs, say,
    /// the address ranges reads them in the same pass. `scratch` only
    /// grows (no clearing per query); what lies past the count is garbage.
    /// The runs of positions are scanned a word of marks at a time, so
    /// `item` is called on the marked positions of the runs only (and on
    /// every position of the checkpoint's list). `marks` covers the group
    /// of the query.
    #[inline]
    pub fn occupied_marked<T: Copy + Default>(
        &self,
        w: &Window,
        marks: &Marks,
        scratch: &mut Vec<T>,
        item: impl Fn(usize) -> T,
    ) -> usize {
        let (p, s, q, to) = (w.p as usize, w.s, w.q as usize, w.to as usize);
        let list = &self.alive[w.list.0 as usize..w.list.1 as usize];
        let end = &self.end;
        let mut len = 0;
        // Alive at s and started before it: the checkpoint's list (in
        // blocks, each written whole past the positions found so far: the
        // scratch holds what is found plus a block, not the whole list of
        // a time when a million buffers are alive), then the positions
        // between the checkpoint and p.
        for block in list.chunks(LIST_BLOCK) {
            let out = room(scratch, len + block.len());
            for &c in block {
                let c = c as usize;
                out[len] = item(c);
                len += usize::from((end[c] > s) & marks.get(c));
            }
        }
        // The marked positions of the runs only: a long-lived buffer's
        // runs span up to the whole group, few of them placed when it is.
        let out = room(scratch, len + marks.count_in(q, to));
        marks.for_each_in(q, p, |c| {
            out[len] = item(c);
            len += usize::from(end[c] > s);
        });
        // Starting in [s, e) after p.
        marks.for_each_in(p + 1, to, |c| {
            out[len] = item(c);
            len += 1;
        });
        len
    }

    /// Asks the processor to start loading what
    /// [`Occupancy::occupied_marked`] will read for the query `w`, so that
    /// a caller can overlap the memory latency of upcoming queries (they
    /// come in no particular time order) with the current one: the
    /// checkpoint's list, and from its first position on
    /// the marks, the compressed ends and `items` (the caller's data by
    /// position minus `from`).
    #[inline]
    pub fn prefetch_marked<T>(&self, w: &Window, marks: &Marks, items: &[T], from: u32) {
        let (lo, p, to, from) = (w.lo as usize, w.p as usize, w.to as usize, from as usize);
        prefetch_lines(&self.alive[w.list.0 as usize..w.list.1 as usize]);
        prefetch_lines(marks.words_of(lo, to));
        prefetch_lines(&self.end[lo..p]);
        prefetch_lines(&items[lo - from..to - from]);
    }
}

/// Positions of a checkpoint's list that [`Occupancy::occupied_marked`]
/// writes between two checks of its scratch's room.
const LIST_BLOCK: usize = 1024;

/// The first `len` items of `scratch`, grown to hold them if need be (with
/// defaults: what lies past the caller's count is garbage anyway).
#[inline]
fn room<T: Copy + Default>(scratch: &mut Vec<T>, len: usize) -> &mut [T] {
    if scratch.len() < len {
        scratch.resize(len, T::default());
    }
    &mut scratch[..len]
}

/// Prefetches every cache line of `items`.
#[inline]
pub(crate) fn prefetch_lines<T>(items: &[T]) {
    const LINE: usize = 64;
    let bytes = std::mem::size_of_val(items);
    let start = items.as_ptr() as *const u8;
    let mut at = 0;
    while at < bytes {
        prefetch(start.wrapping_add(at));
        at += LINE;
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn prefetch(at: *const u8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint: it never faults, whatever the
    // address, and changes no state the program can observe; `sse` is part
    // of every x86_64 target.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(at as *const i8) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn prefetch(_at: *const u8) {}

/// `lifetimes` (start, end, index) sorted, `Err` once `stop` cuts
/// (checked every [`Stop::EVERY`] elements of each pass and inside the
/// sort). When the starts are dense (below twice their number), by a
/// counting sort over the start ([`counting_sorted`]: stable, so by index
/// within a start), each run of equal starts then sorted by (end, index):
/// linear, the order of the comparison sort, which sorts the others
/// ([`sort`]).
fn sorted_by_start(
    lifetimes: Vec<(u64, u64, u32)>,
    stop: &Stop,
) -> Result<Vec<(u64, u64, u32)>, Cut> {
    sorted_by_start_from(lifetimes, COUNTING_MIN, stop)
}

/// From this many lifetimes on, [`sorted_by_start`] may count.
const COUNTING_MIN: usize = 1 << 16;

/// [`sorted_by_start`] counting from `min` lifetimes on.
fn sorted_by_start_from(
    mut lifetimes: Vec<(u64, u64, u32)>,
    min: usize,
    stop: &Stop,
) -> Result<Vec<(u64, u64, u32)>, Cut> {
    let n = lifetimes.len();
    let max_start = lifetimes.par_iter().map(|l| l.0).max().unwrap_or(0);
    if n < min.max(1) || max_start >= 2 * n as u64 {
        if let Err(cut) = sort(&mut lifetimes, stop) {
            drop_later(lifetimes, n);
            return Err(cut);
        }
        return Ok(lifetimes);
    }
    let sorted = counting_sorted(&lifetimes, |l| l.0 as usize, max_start as usize + 1, stop);
    drop_later(lifetimes, n);
    let mut sorted = sorted?;
    // Checked every EVERY lifetimes, not runs: one run may hold them all
    // (every buffer starting at 0), sorted then by `sort` (parallel,
    // checked; short runs at once).
    let mut unlooked = 0;
    for run in sorted.chunk_by_mut(|a, b| a.0 == b.0) {
        unlooked += run.len();
        let mut looked = Ok(());
        if unlooked >= Stop::EVERY {
            unlooked = 0;
            looked = stop.check();
        }
        if looked.is_ok() && run.len() > 1 {
            looked = sort(run, stop);
        }
        if let Err(cut) = looked {
            drop_later(sorted, n);
            return Err(cut);
        }
    }
    Ok(sorted)
}

/// The distinct start times of `sorted` (lifetimes by start), each
/// position's compressed start, and where each run of equal starts begins
/// (then `n`); `Err` once `stop` cuts.
#[allow(clippy::type_complexity)]
fn compressed_starts(
    sorted: &[(u64, u64, u32)],
    stop: &Stop,
) -> Result<(Vec<u64>, Vec<u32>, Vec<u32>), Cut> {
    let mut times: Vec<u64> = Vec::new();
    let mut start = Vec::with_capacity(sorted.len());
    let mut run_begin = Vec::new();
    for (p, &(t, _, _)) in sorted.iter().enumerate() {
        stop.every(p)?;
        if times.last() != Some(&t) {
            times.push(t);
            run_begin.push(p as u32);
        }
        start.push(times.len() as u32 - 1);
    }
    run_begin.push(sorted.len() as u32);
    Ok((times, start, run_begin))
}

/// Each position's compressed end: the number of distinct starts before
/// the end, searched from the start outwards (lifetimes are mostly short,
/// so this stays within a few cache lines); `Err` once `stop` cuts
/// (checked between chunks of [`collect`]).
fn compressed_ends(
    sorted: &[(u64, u64, u32)],
    start: &[u32],
    times: &[u64],
    stop: &Stop,
) -> Result<Vec<u32>, Cut> {
    let compress = |p: usize| {
        let (s, e) = (start[p] as usize, sorted[p].1);
        let (mut lo, mut step) = (s, 1);
        while lo + step < times.len() && times[lo + step] < e {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(times.len());
        (lo + times[lo..hi].partition_point(|&t| t < e)) as u32
    };
    collect(sorted.len(), compress, stop)
}

/// The position of each buffer, the inverse of `buffer_at`.
fn positions(buffer_at: &[u32], stop: &Stop) -> Result<Vec<u32>, Cut> {
    let mut position = vec![0u32; buffer_at.len()];
    for (p, &i) in buffer_at.iter().enumerate() {
        stop.every(p)?;
        position[i as usize] = p as u32;
    }
    Ok(position)
}

/// The independent groups as position ranges, consecutive ones merged up
/// to `min_group` positions: a sweep by start.
fn batches(
    start: &[u32],
    end: &[u32],
    min_group: usize,
    stop: &Stop,
) -> Result<Vec<(u32, u32)>, Cut> {
    let n = start.len();
    let mut groups = Vec::new();
    let (mut from, mut reach) = (0usize, 0u32);
    for p in 0..n {
        stop.every(p)?;
        if p - from >= min_group.max(1) && start[p] >= reach {
            groups.push((from as u32, p as u32));
            from = p;
        }
        reach = reach.max(end[p]);
    }
    if n > 0 {
        groups.push((from as u32, n as u32));
    }
    Ok(groups)
}

/// The checkpoints (one at each group start, and wherever as many
/// positions have passed as were alive at the last one): a sweep by start
/// keeping the live list. Returns, as [`Occupancy`]'s fields of the same
/// names, `checkpoint_of`, `checkpoint_at`, `alive_from` and `alive`.
#[allow(clippy::type_complexity)]
fn checkpoints(
    run_begin: &[u32],
    groups: &[(u32, u32)],
    end: &[u32],
    times: usize,
    stop: &Stop,
) -> Result<(Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>), Cut> {
    let mut checkpoint_of = Vec::with_capacity(times);
    let mut checkpoint_at = Vec::new();
    let mut alive_from = Vec::new();
    let mut alive: Vec<u32> = Vec::new();
    let mut live: Vec<u32> = Vec::new();
    let (mut last, mut gap) = (0usize, 0usize);
    let mut next_group = groups.iter().map(|g| g.0 as usize).peekable();
    for (t, w) in run_begin.windows(2).enumerate() {
        stop.every(t)?;
        let p = w[0] as usize;
        let group_start = next_group.peek() == Some(&p);
        if group_start {
            next_group.next();
        }
        if group_start || p - last >= gap {
            live.retain(|&x| end[x as usize] > t as u32);
            checkpoint_at.push(p as u32);
            alive_from.push(alive.len() as u32);
            alive.extend_from_slice(&live);
            last = p;
            gap = live.len().max(MIN_GAP);
        }
        checkpoint_of.push(checkpoint_at.len() as u32 - 1);
        live.extend(w[0]..w[1]);
    }
    alive_from.push(alive.len() as u32);
    Ok((checkpoint_of, checkpoint_at, alive_from, alive))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NEVER: &Stop = &Stop::never();

    /// Looks spent by `work` run to its end.
    fn looks_of(work: impl FnOnce(&Stop) -> bool) -> usize {
        let budget = Stop::after_looks(u64::MAX);
        assert!(work(&budget));
        (u64::MAX - budget.looks_left().unwrap_or(0)) as usize
    }

    /// One run of equal starts longer than a sort run (every buffer
    /// starting at 0) is sorted by (end, index) through `sort`, and a
    /// token cut from any look on gives `Err`, never a part.
    #[test]
    fn a_long_run_of_equal_starts_is_sorted_and_polled() {
        let n = 2 * crate::geometry::sort::RUN + 3;
        let lifetimes: Vec<(u64, u64, u32)> = (0..n as u32)
            .map(|i| (0, 1 + u64::from(i.wrapping_mul(2_654_435_761) % 1000), i))
            .collect();
        let mut want = lifetimes.clone();
        want.sort_unstable();
        let polls = looks_of(|stop| sorted_by_start(lifetimes.clone(), stop) == Ok(want.clone()));
        // The long run's sort looks too (each run, each copy, each merge
        // piece), beyond the counting sort's passes and the runs' loop.
        let counting =
            looks_of(|stop| counting_sorted(&lifetimes, |l| l.0 as usize, 1, stop).is_ok());
        assert!(
            polls > counting + 1,
            "{polls} looks, {counting} of them counting"
        );
        for k in 0..polls {
            let stop = Stop::after_looks(k as u64);
            assert!(
                sorted_by_start(lifetimes.clone(), &stop).is_err(),
                "cut at look {k}"
            );
        }
    }

    proptest! {
        /// Counted (dense starts) or compared, lifetimes come out as
        /// `sort_unstable` orders them, ties of start by end then index.
        #[test]
        fn counting_by_start_sorts_as_the_comparison(
            spec in proptest::collection::vec((0u64..40, 1u64..6), 0..60),
            spread in 1u64..4,
        ) {
            let lifetimes: Vec<(u64, u64, u32)> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len))| (s * spread, s * spread + len, i as u32))
                .collect();
            let mut want = lifetimes.clone();
            want.sort_unstable();
            let counted = sorted_by_start_from(lifetimes.clone(), 0, NEVER);
            prop_assert_eq!(counted.as_ref(), Ok(&want));
            // Counted (dense starts), a stop is seen in its first pass.
            let dense = lifetimes.iter().all(|l| l.0 < 2 * lifetimes.len() as u64);
            if dense && !lifetimes.is_empty() {
                prop_assert!(sorted_by_start_from(lifetimes, 0, &Stop::after_looks(0)).is_err());
            }
        }

        /// The index's max load (by buffer, from compressed times) is the
        /// sweep's over the lifetimes themselves (sizes up to 2^55: their
        /// sum stays below 2^64, as `Problem::new` ensures; the changes
        /// at ends wrap).
        #[test]
        fn max_load_matches_the_sweep(
            spec in proptest::collection::vec((0u64..60, 1u64..40, 0u64..4), 1..150),
            min_group in 1usize..40,
        ) {
            let sizes = [1u64, 7, 1 << 40, 1 << 55];
            let buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size))| {
                    Buffer::new(format!("b{i}"), s, s + len, sizes[size as usize])
                })
                .collect();
            let occ = Occupancy::of_buffers(&buffers, min_group, NEVER).unwrap();
            prop_assert_eq!(
                occ.max_load(|b| buffers[b as usize].size, NEVER),
                crate::geometry::sweep::max_load(&buffers, NEVER)
            );
        }

        #[test]
        fn matches_linear_scan(
            spec in proptest::collection::vec((0u64..60, 1u64..40, 0u32..200), 1..150),
            query in any::<proptest::sample::Index>(),
            min_group in 1usize..40,
        ) {
            let spans: Vec<Span> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, _))| Span { start: s, end: s + len, size: 1 + i as u64 })
                .collect();
            let occ = Occupancy::new(&spans, min_group, NEVER).unwrap();
            let n = spans.len();
            // Rank and address range by position; range i is (i, i + size).
            let mut stamps = occ.stamps();
            for (p, stamp) in stamps.iter_mut().enumerate() {
                stamp.1 = spec[occ.buffer_at(p as u32) as usize].2;
            }
            let ranges: Vec<(u64, u64)> = (0..n as u32)
                .map(|p| {
                    let i = occ.buffer_at(p) as usize;
                    (i as u64, i as u64 + spans[i].size)
                })
                .collect();
            let q = query.index(n);
            let p = occ.position(q as u32);
            let &(from, to) = occ.groups().iter().find(|g| g.0 <= p && p < g.1).unwrap();
            let mut positions = vec![7];
            occ.occupied_during(p, stamps[p as usize].1, &stamps, &mut positions);
            prop_assert_eq!(positions[0], 7, "appends");
            let mut listed: Vec<u64> = positions[1..].iter().map(|&c| u64::from(c)).collect();
            listed.sort_unstable();
            // So does the scan by marks: placed means ranked below.
            let r = stamps[p as usize].1;
            let mut marks = Marks::new(from as usize, to as usize);
            for c in from..to {
                if stamps[c as usize].1 < r {
                    marks.set(c as usize);
                }
            }
            let window = occ.window(p);
            occ.prefetch_marked(&window, &marks, &ranges[from as usize..], from);
            let mut scratch = vec![u64::MAX; 3];
            let count = occ.occupied_marked(&window, &marks, &mut scratch, |c| c as u64);
            let mut marked: Vec<u64> = scratch[..count].to_vec();
            marked.sort_unstable();
            prop_assert_eq!(&marked, &listed);
            prop_assert!(positions[1..].iter().all(|&c| c >= from && c < to), "within the group");
            let mut got: Vec<(u64, u64)> = positions[1..].iter().map(|&c| ranges[c as usize]).collect();
            got.sort();
            let overlaps = |a: &Span, b: &Span| a.start < b.end && b.start < a.end;
            let mut want: Vec<(u64, u64)> = (0..n)
                .filter(|&i| i != q && overlaps(&spans[i], &spans[q]) && spec[i].2 < spec[q].2)
                .map(|i| (i as u64, i as u64 + spans[i].size))
                .collect();
            want.sort();
            prop_assert_eq!(got, want);
            // Groups tile the positions, and buffers of different groups
            // never overlap in time.
            let groups = occ.groups();
            prop_assert_eq!(groups.first().map(|g| g.0), Some(0));
            prop_assert_eq!(groups.last().map(|g| g.1), Some(n as u32));
            for w in groups.windows(2) {
                prop_assert_eq!(w[0].1, w[1].0);
                prop_assert!(w[0].1 - w[0].0 >= min_group as u32);
            }
            let group = |i: usize| groups.iter().position(|g| g.0 <= occ.position(i as u32) && occ.position(i as u32) < g.1);
            for i in 0..n {
                for j in 0..n {
                    if overlaps(&spans[i], &spans[j]) {
                        prop_assert_eq!(group(i), group(j));
                    }
                }
            }
        }
    }

    #[test]
    fn prefetch_skips_a_sparse_list() {
        // One buffer alive throughout, then short ones: a late query's
        // list holds the first position, far before its checkpoint.
        let mut spans = vec![Span {
            start: 0,
            end: 10_000,
            size: 1,
        }];
        spans.extend((1..5000).map(|i| Span {
            start: i,
            end: i + 2,
            size: 1,
        }));
        let occ = Occupancy::new(&spans, usize::MAX, NEVER).unwrap();
        let w = occ.window(occ.position(4000));
        assert!(w.list.1 > w.list.0, "the long-lived buffer is listed");
        assert_eq!(occ.alive[w.list.0 as usize], 0);
        assert!(w.lo >= w.q.saturating_sub(64), "{} {}", w.lo, w.q);
        // Dense lists are prefetched from their first position.
        let w = occ.window(occ.position(2));
        assert!(w.lo <= w.q);
    }

    #[test]
    fn lists_stay_linear() {
        // Everything alive at once: the worst case for checkpoint lists.
        let spans: Vec<Span> = (0..1000)
            .map(|i| Span {
                start: i,
                end: 2000,
                size: 1,
            })
            .collect();
        let occ = Occupancy::new(&spans, 1, NEVER).unwrap();
        assert!(
            occ.alive.len() <= 2 * spans.len(),
            "{} entries",
            occ.alive.len()
        );
    }
}
