//! Event traversal (idealloc §5.3): sort allocation and deallocation events by
//! time, deallocations first at equal times, and sweep once.
//!
//! # Sections and partitions, by example
//!
//! Lifetimes are half-open: a buffer alive over `[start, end)` is gone at
//! `end`, so a buffer ending at `t` and one starting at `t` never meet.
//! Take five buffers, each drawn over its lifetime with its size:
//!
//! ```text
//! time        0     1     2     3     4     5     6     7     8     9
//!             |     |     |     |     |     |     |     |     |     |
//!             [===== b0: 2 =====)
//!                   [===== b1: 1 =====)
//!                               [===== b2: 2 =====)
//!                                                 [== b3: 3 ==)
//!                                                       [== b4: 1 ==)
//! ```
//!
//! The *sections* (MiniMalloc §6.2, [`section_spans`]) are the intervals
//! between consecutive distinct start and end times: here the times 0, 1,
//! 3, 4, 6, 7, 8 and 9 make seven sections. Within a section the set of
//! live buffers does not change, so a section's *load* (`section_loads`)
//! is one number: the sum of the sizes alive in it. The highest of them is
//! the max load ([`max_load`], 4 here, in `s5`). Each buffer gets a
//! half-open range of section numbers, and two buffers overlap in time
//! exactly when their ranges intersect: b0 covers `[0, 2)`, b1 `[1, 3)`,
//! b2 `[2, 4)`, b3 `[4, 6)` and b4 `[5, 7)`. So b0 and b2 share no
//! section (b0 is freed at 3, when b2 is allocated), while b1 meets both.
//! A time at which nothing is alive still bounds a section: that section
//! has load 0 and no buffer covers it.
//!
//! The *partitions* (MiniMalloc §7, temporal decomposition; [`time_groups`]
//! here) cut the time line where no buffer is alive across the cut. b1
//! bridges b0 and b2, so they form one partition; at time 6, b2 is freed
//! as b3 is allocated and nothing crosses, so b3 and b4 form a second one:
//!
//! ```text
//! sections    | s0  |    s1     | s2  |    s3     | s4  | s5  | s6  |
//! loads          2        3        3        2        3     4     1
//! partitions  |           p0: b0 b1 b2            |    p1: b3 b4    |
//! ```
//!
//! No buffer of one partition is alive at the same time as a buffer of
//! another, so each can be placed on its own, and a plan's makespan is the
//! highest of its partitions' makespans (here at least 3 for p0 and 4 for
//! p1). [`time_groups`] numbers partitions in time order and, with
//! `min_group` above 1, merges consecutive ones until each has at least
//! that many buffers (the last one may have fewer). The exact search gives each partition its own section table
//! (numbered from 0 again) and also cuts a partition while it searches,
//! where no unplaced buffer crosses a section boundary; its module shows
//! how buffers are then placed canonically ([`crate::solvers::search`]).
//! The test `worked_example_of_the_module_doc` builds these five buffers
//! and checks every number above.

use rayon::prelude::*;

use super::csr::Csr;
use crate::buffer::Buffer;
use crate::dispose::drop_later;
use crate::geometry::sort::{collect, sort};
use crate::stop::{uncut, Cut, Stop};

/// `times` of `spans` (two per span), the token checked every
/// [`Stop::EVERY`] spans.
fn times(
    spans: impl Iterator<Item = (u64, u64)>,
    len: usize,
    stop: &Stop,
) -> Result<Vec<u64>, Cut> {
    let mut times: Vec<u64> = Vec::with_capacity(2 * len);
    for (i, (start, end)) in spans.enumerate() {
        if let Err(cut) = stop.every(i) {
            drop_later(times, 2 * len);
            return Err(cut);
        }
        times.push(start);
        times.push(end);
    }
    Ok(times)
}

/// The max load L: the most bytes alive at one instant. With half-open
/// lifetimes, a buffer ending at `t` and one starting at `t` never coexist.
/// `Err` once `stop` cuts, checked in the sorts ([`sort`]); up to
/// [`Stop::EVERY`] buffers it is computed at once, without a look (as
/// `sort` sorts short slices): a bound that costs microseconds is worth
/// more than an answer cut for lack of it.
pub fn max_load(buffers: &[Buffer], stop: &Stop) -> Result<u64, Cut> {
    let never = Stop::never();
    let stop = if buffers.len() <= Stop::EVERY {
        &never
    } else {
        stop
    };
    // Dense times: one pass, no sort.
    if let Some(max_load) = dense_max_load(buffers, stop)? {
        return Ok(max_load);
    }
    stop.check()?;
    // Allocation and free events as two sorted lists, merged with frees
    // first at equal times.
    let sorted = |key: fn(&Buffer) -> u64| {
        let mut v = collect(buffers.len(), |i| (key(&buffers[i]), buffers[i].size), stop)?;
        sort(&mut v, stop).map(|()| v)
    };
    let (starts, ends) = rayon::join(|| sorted(|b| b.start), || sorted(|b| b.end));
    max_of_sorted(&starts?, &ends?, stop)
}

/// [`max_load`] without a sort when the times are dense (every end below
/// twice the number of buffers): the change of the load at each time
/// (wrapping: the live sum itself is at most the sum of all sizes, which
/// `Problem::new` keeps below 2^64, so the running sum is exact), then
/// one running sum; one pass over the buffers. `Ok(None)` when the times
/// are not dense; `Err` once `stop` cuts (checked every [`Stop::EVERY`]
/// buffers).
pub fn dense_max_load(buffers: &[Buffer], stop: &Stop) -> Result<Option<u64>, Cut> {
    let bound = 2 * buffers.len();
    let mut change = vec![0u64; bound + 1];
    for (i, b) in buffers.iter().enumerate() {
        stop.every(i)?;
        // `start < end` is a problem's invariant; buffers made by hand
        // without it are refused (`None`) rather than indexed past the end.
        let Ok(end) = usize::try_from(b.end) else {
            return Ok(None);
        };
        let start = b.start as usize;
        if end >= bound || start > end {
            return Ok(None);
        }
        change[start] = change[start].wrapping_add(b.size);
        change[end] = change[end].wrapping_sub(b.size);
    }
    let (mut load, mut max) = (0u64, 0u64);
    for &c in &change {
        load = load.wrapping_add(c);
        max = max.max(load);
    }
    Ok(Some(max))
}

/// The highest sum of widths present at one instant, given `(time,
/// width)` allocation and free events (in any order; half-open: frees
/// first at equal times). The max load of pieces ([`super::gaps`]).
pub fn max_load_of_events(mut starts: Vec<(u64, u64)>, mut ends: Vec<(u64, u64)>) -> u64 {
    rayon::join(|| starts.par_sort_unstable(), || ends.par_sort_unstable());
    uncut(|never| max_of_sorted(&starts, &ends, never))
}

/// The max load of sorted allocation and free events; `Err` once `stop`
/// cuts, checked every [`Stop::EVERY`] allocations.
fn max_of_sorted(starts: &[(u64, u64)], ends: &[(u64, u64)], stop: &Stop) -> Result<u64, Cut> {
    let (mut load, mut max, mut j) = (0u64, 0u64, 0usize);
    for (k, &(t, size)) in starts.iter().enumerate() {
        stop.every(k)?;
        while j < ends.len() && ends[j].0 <= t {
            load -= ends[j].1;
            j += 1;
        }
        // The live sum is at most the sum of all sizes, which
        // `Problem::new` keeps below 2^64.
        load += size;
        max = max.max(load);
    }
    Ok(max)
}

/// The load as a step function of time: `loads[k]` bytes are alive during
/// `[times[k], times[k + 1])`. `times` holds every distinct start and end.
#[derive(Clone, Debug, Default)]
pub struct LoadProfile {
    /// Distinct event times, increasing.
    pub times: Vec<u64>,
    /// Load in each elementary segment; one shorter than `times` (or empty).
    pub loads: Vec<u64>,
}

impl LoadProfile {
    /// The profile of `buffers`, in O(n log n); `Err` once `stop` cuts.
    pub fn new(buffers: &[Buffer], stop: &Stop) -> Result<Self, Cut> {
        Self::of_spans(buffers.iter().map(|b| (b.start, b.end, b.size)), stop)
    }

    /// The profile of `(start, end, width)` spans, in O(n log n); `Err`
    /// once `stop` cuts, checked in the sort ([`sort`]) and every
    /// [`Stop::EVERY_COSTLY`] spans of its binary searches (two a span,
    /// each missing the cache among millions of times).
    pub fn of_spans(
        spans: impl Iterator<Item = (u64, u64, u64)> + Clone,
        stop: &Stop,
    ) -> Result<Self, Cut> {
        let len = spans.size_hint().0;
        let mut times = times(spans.clone().map(|(s, e, _)| (s, e)), len, stop)?;
        // Stopped, the arrays (hundreds of megabytes at millions of
        // spans) are freed on the disposal thread.
        if let Err(cut) = sort(&mut times, stop) {
            let len = times.len();
            drop_later(times, len);
            return Err(cut);
        }
        times.dedup();
        let mut delta = vec![0i128; times.len()];
        for (i, (start, end, width)) in spans.enumerate() {
            if let Err(cut) = stop.every_costly(i) {
                let len = times.len();
                drop_later((times, delta), len);
                return Err(cut);
            }
            delta[segment_of(&times, start)] += i128::from(width);
            delta[segment_of(&times, end)] -= i128::from(width);
        }
        let mut loads = Vec::with_capacity(times.len().saturating_sub(1));
        let mut load: i128 = 0;
        for d in delta.iter().take(times.len().saturating_sub(1)) {
            load += d;
            // The sum of live sizes is at most the sum of all sizes, which
            // `Problem::new` keeps below 2^64.
            loads.push(u64::try_from(load).unwrap_or(u64::MAX));
        }
        Ok(LoadProfile { times, loads })
    }

    /// Index of the elementary segment starting at `t` (which must be one of
    /// the profile's times).
    #[inline]
    pub fn segment(&self, t: u64) -> usize {
        segment_of(&self.times, t)
    }

    /// The contention of each buffer: the highest load over its lifetime
    /// (TelaMalloc §3.1). O(n log n) with a range-maximum segment tree.
    /// `Err` once `stop` cuts, checked every [`Stop::EVERY_COSTLY`] buffers
    /// (two binary searches a buffer).
    pub fn contention(&self, buffers: &[Buffer], stop: &Stop) -> Result<Vec<u64>, Cut> {
        let tree = MaxTree::new(&self.loads, stop)?;
        let mut out = Vec::with_capacity(buffers.len());
        for (i, b) in buffers.iter().enumerate() {
            stop.every_costly(i)?;
            out.push(tree.max(self.segment(b.start), self.segment(b.end)));
        }
        Ok(out)
    }
}

/// Splits the buffers into groups that are independent in time (MiniMalloc
/// §7, temporal decomposition): no buffer of one group is alive at the same
/// time as a buffer of another, so each group can be placed on its own.
/// Consecutive independent parts are merged until a group has at least
/// `min_group` buffers. Returns the group of each buffer and the number of
/// groups; groups are numbered in time order. `Err` once `stop` cuts.
pub fn time_groups(
    buffers: &[Buffer],
    min_group: usize,
    stop: &Stop,
) -> Result<(Vec<u32>, usize), Cut> {
    // Collected, sorted and swept with looks: at millions of buffers each
    // pass is long enough to carry a solve past its time limit.
    let mut by_start: Vec<(u64, u64, u32)> = collect(
        buffers.len(),
        |i| (buffers[i].start, buffers[i].end, i as u32),
        stop,
    )?;
    if let Err(cut) = sort(&mut by_start, stop) {
        drop_later(by_start, buffers.len());
        return Err(cut);
    }
    let mut group_of = vec![0u32; buffers.len()];
    let mut group = 0u32;
    let mut size = 0usize;
    let mut reach = 0u64;
    for (k, &(start, end, i)) in by_start.iter().enumerate() {
        if let Err(cut) = stop.every(k) {
            drop_later((by_start, group_of), buffers.len());
            return Err(cut);
        }
        if size >= min_group && start >= reach {
            group += 1;
            size = 0;
        }
        group_of[i as usize] = group;
        size += 1;
        reach = reach.max(end);
    }
    let groups = if buffers.is_empty() {
        0
    } else {
        group as usize + 1
    };
    Ok((group_of, groups))
}

/// The elementary time sections of a set of buffers (MiniMalloc §6.2): the
/// intervals between consecutive distinct start and end times. Returns the
/// section range `[lo, hi)` of each buffer, in the iterator's order, and the
/// number of sections. Two buffers overlap in time exactly when their
/// section ranges intersect. `Err` once `stop` cuts, checked in the sort of
/// the times ([`sort`]) and every [`Stop::EVERY_COSTLY`] buffers (two
/// binary searches a buffer).
pub fn section_spans<'a>(
    buffers: impl Iterator<Item = &'a Buffer> + Clone,
    stop: &Stop,
) -> Result<(Vec<(u32, u32)>, usize), Cut> {
    let len = buffers.size_hint().0;
    let mut times = times(buffers.clone().map(|b| (b.start, b.end)), len, stop)?;
    // Equal times are identical: the order of `sort_unstable`.
    if let Err(cut) = sort(&mut times, stop) {
        drop_later(times, 2 * len);
        return Err(cut);
    }
    times.dedup();
    let mut spans = Vec::new();
    for (i, b) in buffers.enumerate() {
        if let Err(cut) = stop.every_costly(i) {
            drop_later((times, spans), len);
            return Err(cut);
        }
        spans.push((
            segment_of(&times, b.start) as u32,
            segment_of(&times, b.end) as u32,
        ));
    }
    Ok((spans, times.len().saturating_sub(1)))
}

/// Total size alive in each of `section_count` sections, given each
/// buffer's section range `[lo, hi)` and size: a difference array, O(n +
/// sections) however long the lifetimes.
pub(crate) fn section_loads(
    spans: impl Iterator<Item = ((u32, u32), u64)>,
    section_count: usize,
) -> Vec<u64> {
    let mut delta = vec![0i128; section_count + 1];
    for ((lo, hi), size) in spans {
        delta[lo as usize] += i128::from(size);
        delta[hi as usize] -= i128::from(size);
    }
    let mut running = 0i128;
    delta[..section_count]
        .iter()
        .map(|d| {
            running += d;
            // At most the sum of all sizes, which `Problem::new` keeps below
            // 2^64.
            u64::try_from(running).unwrap_or(u64::MAX)
        })
        .collect()
}

/// The pairs of buffers that overlap in time, as symmetric adjacency rows
/// (row `i`: the buffers overlapping buffer `i`): a sweep in start order, O(n log n +
/// pairs), one pass counting and one filling. `spans` are section ranges.
/// `Err` once `stop` cuts (checked every [`Stop::EVERY_COSTLY`] buffers,
/// each a row of pairs); `Ok(None)` when the pairs overflow `u32` indices.
pub(crate) fn overlap_csr(spans: &[(u32, u32)], stop: &Stop) -> Result<Option<Csr<u32>>, Cut> {
    let n = spans.len();
    let mut by_start: Vec<u32> = (0..n as u32).collect();
    by_start.sort_unstable_by_key(|&i| spans[i as usize].0);
    let later = |k: usize| {
        let end = spans[by_start[k] as usize].1;
        by_start[k + 1..]
            .iter()
            .take_while(move |&&j| spans[j as usize].0 < end)
    };
    let mut degree = vec![0u32; n];
    for (k, &i) in by_start.iter().enumerate() {
        stop.every_costly(k)?;
        for &j in later(k) {
            degree[i as usize] += 1;
            degree[j as usize] += 1;
        }
    }
    let mut start = Vec::with_capacity(n + 1);
    let mut total = 0u32;
    for d in &degree {
        start.push(total);
        let Some(next) = total.checked_add(*d) else {
            return Ok(None);
        };
        total = next;
    }
    start.push(total);
    let mut fill = start.clone();
    let mut items = vec![0u32; total as usize];
    for (k, &i) in by_start.iter().enumerate() {
        stop.every_costly(k)?;
        for &j in later(k) {
            items[fill[i as usize] as usize] = j;
            fill[i as usize] += 1;
            items[fill[j as usize] as usize] = i;
            fill[j as usize] += 1;
        }
    }
    Ok(Csr::from_parts(start, items))
}

/// The buffers alive in each of `section_count` sections (row `s`: those
/// alive in section `s`, in increasing order), built without per-section
/// vectors. O(n +
/// sections + Σ ranges). `Err` once `stop` cuts (checked every
/// [`Stop::EVERY_COSTLY`] buffers, each a range of sections); `Ok(None)`
/// when the entries overflow `u32` indices.
pub(crate) fn alive_csr(
    spans: &[(u32, u32)],
    section_count: usize,
    stop: &Stop,
) -> Result<Option<Csr<u32>>, Cut> {
    let mut count = vec![0i64; section_count + 1];
    for &(lo, hi) in spans {
        count[lo as usize] += 1;
        count[hi as usize] -= 1;
    }
    let mut start = Vec::with_capacity(section_count + 1);
    let (mut alive, mut total) = (0i64, 0u32);
    for c in &count[..section_count] {
        start.push(total);
        alive += c;
        let Some(next) = u32::try_from(alive).ok().and_then(|a| total.checked_add(a)) else {
            return Ok(None);
        };
        total = next;
    }
    start.push(total);
    let mut fill = start.clone();
    let mut items = vec![0u32; total as usize];
    for (i, &(lo, hi)) in spans.iter().enumerate() {
        stop.every_costly(i)?;
        for f in &mut fill[lo as usize..hi as usize] {
            items[*f as usize] = i as u32;
            *f += 1;
        }
    }
    Ok(Csr::from_parts(start, items))
}

#[inline]
fn segment_of(times: &[u64], t: u64) -> usize {
    times.partition_point(|&x| x < t)
}

/// A static range-maximum tree over `u64` values.
pub(crate) struct MaxTree {
    half: usize,
    nodes: Vec<u64>,
}

impl Default for MaxTree {
    /// The tree of no values (its maximum is 0).
    fn default() -> Self {
        MaxTree {
            half: 1,
            nodes: vec![0; 2],
        }
    }
}

impl MaxTree {
    /// The tree of `values`; `Err` once `stop` cuts, checked every
    /// [`Stop::EVERY`] nodes.
    pub(crate) fn new(values: &[u64], stop: &Stop) -> Result<Self, Cut> {
        let half = values.len().next_power_of_two().max(1);
        let mut nodes = vec![0u64; 2 * half];
        // The leaves a chunk at a time: their fresh pages take tens of
        // milliseconds at millions of values.
        let leaves = nodes[half..half + values.len()].chunks_mut(Stop::EVERY);
        for (chunk, from) in leaves.zip(values.chunks(Stop::EVERY)) {
            if let Err(cut) = stop.check() {
                drop_later(nodes, 2 * half);
                return Err(cut);
            }
            chunk.copy_from_slice(from);
        }
        for i in (1..half).rev() {
            if let Err(cut) = stop.every(i) {
                drop_later(nodes, 2 * half);
                return Err(cut);
            }
            nodes[i] = nodes[2 * i].max(nodes[2 * i + 1]);
        }
        Ok(MaxTree { half, nodes })
    }

    /// Sets `values[i]` to `value`.
    pub(crate) fn set(&mut self, i: usize, value: u64) {
        let mut k = i + self.half;
        self.nodes[k] = value;
        while k > 1 {
            k /= 2;
            self.nodes[k] = self.nodes[2 * k].max(self.nodes[2 * k + 1]);
        }
    }

    /// Maximum over `values[lo..hi]` (0 when empty).
    pub(crate) fn max(&self, lo: usize, hi: usize) -> u64 {
        let (mut lo, mut hi) = (lo + self.half, hi + self.half);
        let mut best = 0;
        while lo < hi {
            if lo & 1 == 1 {
                best = best.max(self.nodes[lo]);
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                best = best.max(self.nodes[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEVER: &Stop = &Stop::never();

    fn max_load(b: &[Buffer]) -> u64 {
        super::max_load(b, NEVER).unwrap()
    }

    fn section_spans<'a>(b: impl Iterator<Item = &'a Buffer> + Clone) -> (Vec<(u32, u32)>, usize) {
        super::section_spans(b, NEVER).unwrap()
    }

    fn time_groups(b: &[Buffer], min_group: usize) -> (Vec<u32>, usize) {
        super::time_groups(b, min_group, NEVER).unwrap()
    }

    fn bufs(spec: &[(u64, u64, u64)]) -> Vec<Buffer> {
        spec.iter()
            .enumerate()
            .map(|(i, &(s, e, size))| Buffer::new(i.to_string(), s, e, size))
            .collect()
    }

    #[test]
    fn max_load_frees_before_allocations() {
        assert_eq!(max_load(&[]), 0);
        assert_eq!(max_load(&bufs(&[(0, 2, 5), (2, 4, 7)])), 7);
        assert_eq!(max_load(&bufs(&[(0, 3, 5), (2, 4, 7)])), 12);
        assert_eq!(
            max_load(&bufs(&[(0, 10, 1), (1, 2, 4), (3, 4, 4), (2, 3, 2)])),
            5
        );
    }

    /// The five buffers of the module doc's example: every section,
    /// load and partition it draws.
    #[test]
    fn worked_example_of_the_module_doc() {
        let b = bufs(&[(0, 3, 2), (1, 4, 1), (3, 6, 2), (6, 8, 3), (7, 9, 1)]);
        let (spans, count) = section_spans(b.iter());
        assert_eq!(count, 7);
        assert_eq!(spans, [(0, 2), (1, 3), (2, 4), (4, 6), (5, 7)]);
        let loads = section_loads(spans.iter().copied().zip(b.iter().map(|x| x.size)), count);
        assert_eq!(loads, [2, 3, 3, 2, 3, 4, 1]);
        assert_eq!(max_load(&b), 4);
        let rows = |csr: Csr<u32>| -> Vec<Vec<u32>> {
            (0..csr.rows()).map(|i| csr.row(i).to_vec()).collect()
        };
        // b0 and b2 share no section; b1 meets both.
        let overlaps = rows(overlap_csr(&spans, NEVER).unwrap().unwrap());
        assert_eq!(overlaps, [vec![1], vec![0, 2], vec![1], vec![4], vec![3]]);
        let alive = rows(alive_csr(&spans, count, NEVER).unwrap().unwrap());
        let want: [&[u32]; 7] = [&[0], &[0, 1], &[1, 2], &[2], &[3], &[3, 4], &[4]];
        assert_eq!(alive, want);
        // Two partitions, cut at time 6: p0 = {b0, b1, b2}, p1 = {b3, b4}.
        assert_eq!(time_groups(&b, 1), (vec![0, 0, 0, 1, 1], 2));
        // With at least 4 buffers a group, they merge into one.
        assert_eq!(time_groups(&b, 4), (vec![0; 5], 1));
    }

    /// Past one interval, a cut token cuts either path (dense times and
    /// times scaled out of density); an uncut one gives the load.
    #[test]
    fn max_load_is_cut_past_one_interval() {
        let n = Stop::EVERY + 1;
        for scale in [1u64, 4] {
            // Buffer i lives [i, i + 3) (times scaled), of size 1 or 2:
            // three alive at once, 2 + 1 + 2 bytes at most.
            let b: Vec<Buffer> = (0..n as u64)
                .map(|i| Buffer::new(i.to_string(), scale * i, scale * (i + 3), 1 + i % 2))
                .collect();
            assert_eq!(super::max_load(&b, NEVER), Ok(5), "scale {scale}");
            assert!(
                super::max_load(&b, &Stop::after_looks(0)).is_err(),
                "scale {scale}"
            );
        }
    }

    /// Up to 40 buffers starting in [0, 30), lifetimes 1..10.
    fn arb_buffers() -> impl proptest::strategy::Strategy<Value = Vec<Buffer>> {
        use proptest::strategy::Strategy;
        proptest::collection::vec((0u64..30, 1u64..10, 1u64..100), 0..40).prop_map(|spec| {
            spec.iter()
                .enumerate()
                .map(|(i, &(s, len, size))| Buffer::new(i.to_string(), s, s + len, size))
                .collect()
        })
    }

    proptest::proptest! {
        #[test]
        fn max_load_agrees_with_profile_and_brute_force(b in arb_buffers()) {
            let brute = (0..40u64)
                .map(|t| b.iter().filter(|x| x.start <= t && t < x.end).map(|x| x.size).sum::<u64>())
                .max()
                .unwrap_or(0);
            proptest::prop_assert_eq!(max_load(&b), brute);
            // Dense (ends below twice the count) or not: exact or `None`.
            let dense = b.iter().all(|x| x.end < 2 * b.len() as u64);
            let expected = dense.then_some(brute);
            proptest::prop_assert_eq!(dense_max_load(&b, NEVER), Ok(expected));
            // Short inputs are not looked at: a cut token changes nothing.
            proptest::prop_assert_eq!(super::max_load(&b, &Stop::after_looks(0)), Ok(brute));
            let profile = LoadProfile::new(&b, NEVER).unwrap();
            proptest::prop_assert_eq!(profile.loads.iter().copied().max().unwrap_or(0), brute);
        }
    }

    proptest::proptest! {
        #[test]
        fn section_tables_agree_with_brute_force(b in arb_buffers()) {
            let (spans, count) = section_spans(b.iter());
            let rows = |csr: Csr<u32>| -> Vec<Vec<u32>> {
                (0..csr.rows())
                    .map(|i| {
                        let mut row = csr.row(i).to_vec();
                        row.sort_unstable();
                        row
                    })
                    .collect()
            };
            let overlaps = rows(overlap_csr(&spans, NEVER).unwrap().unwrap());
            let alive = rows(alive_csr(&spans, count, NEVER).unwrap().unwrap());
            let loads = section_loads(spans.iter().zip(&b).map(|(&sp, x)| (sp, x.size)), count);
            for (i, x) in b.iter().enumerate() {
                let brute: Vec<u32> = (0..b.len() as u32)
                    .filter(|&j| j as usize != i && b[j as usize].overlaps_in_time(x))
                    .collect();
                proptest::prop_assert_eq!(&overlaps[i], &brute);
            }
            proptest::prop_assert_eq!(alive.len(), count);
            for s in 0..count {
                let brute: Vec<u32> = (0..b.len() as u32)
                    .filter(|&j| spans[j as usize].0 as usize <= s && s < spans[j as usize].1 as usize)
                    .collect();
                let load: u64 = brute.iter().map(|&j| b[j as usize].size).sum();
                proptest::prop_assert_eq!(&alive[s], &brute);
                proptest::prop_assert_eq!(loads[s], load);
            }
        }
    }

    #[test]
    fn section_tables_stop_when_asked() {
        let b = bufs(&[(0, 2, 1), (1, 3, 1)]);
        let (spans, count) = section_spans(b.iter());
        assert!(overlap_csr(&spans, &Stop::after_looks(0)).is_err());
        assert!(alive_csr(&spans, count, &Stop::after_looks(0)).is_err());
        assert_eq!(
            overlap_csr(&spans, NEVER).map(|c| c.map(Csr::into_parts)),
            Ok(Some((vec![0, 1, 2], vec![1, 0])))
        );
        assert_eq!(
            alive_csr(&spans, count, NEVER).map(|c| c.map(Csr::into_parts)),
            Ok(Some((vec![0, 1, 3, 4], vec![0, 0, 1, 1])))
        );
    }

    #[test]
    fn time_groups_split_at_idle_points() {
        let b = bufs(&[
            (0, 2, 1),
            (1, 3, 1),
            (3, 4, 1),
            (5, 9, 1),
            (6, 7, 1),
            (3, 4, 1),
        ]);
        assert_eq!(time_groups(&b, 1), (vec![0, 0, 1, 2, 2, 1], 3));
        assert_eq!(time_groups(&b, 3), (vec![0, 0, 0, 1, 1, 0], 2));
        assert_eq!(time_groups(&[], 1), (vec![], 0));
    }

    #[test]
    fn section_spans_and_the_max_tree_poll_the_stop() {
        let b = bufs(&[(0, 2, 1), (1, 3, 1), (3, 4, 1)]);
        assert!(super::section_spans(b.iter(), &Stop::after_looks(0)).is_err());
        assert_eq!(
            super::section_spans(b.iter(), NEVER),
            Ok((vec![(0, 2), (1, 3), (3, 4)], 4))
        );
        let values: Vec<u64> = (0..(3u64 << 16)).map(|i| i * 7 % 1000).collect();
        assert!(MaxTree::new(&values, &Stop::after_looks(0)).is_err());
        let tree = MaxTree::new(&values, NEVER).unwrap();
        assert_eq!(tree.max(5, 1 << 17), 999);
        assert_eq!(tree.max(0, values.len()), 999);
        assert_eq!(tree.max(1, 2), 7);
    }

    /// The time groups' passes poll the stop: cut at any poll, nothing;
    /// past the last, the groups of `time_groups`.
    #[test]
    fn time_groups_poll_the_stop() {
        // Beyond one run of the sort and one look of the sweep.
        let n = 3 * Stop::EVERY + 5;
        let b: Vec<Buffer> = (0..n as u64)
            .map(|i| {
                let start = (i * 7919) % (n as u64);
                Buffer::new(i.to_string(), start, start + 1 + i % 5, 1)
            })
            .collect();
        let want = time_groups(&b, 1);
        let counted = Stop::after_looks(u64::MAX);
        assert_eq!(super::time_groups(&b, 1, &counted).as_ref(), Ok(&want));
        let total = (u64::MAX - counted.looks_left().unwrap()) as usize;
        // The collect's (a run of the sort's length at a time), the sort's
        // own and the sweep's (every EVERY buffers).
        let sorted = Stop::after_looks(u64::MAX);
        let mut keys: Vec<(u64, u64, u32)> = (0..n as u32).map(|i| (0, 0, i)).collect();
        assert!(sort(&mut keys, &sorted).is_ok());
        let sort_looks = (u64::MAX - sorted.looks_left().unwrap()) as usize;
        let runs = n.div_ceil(crate::geometry::sort::RUN);
        assert_eq!(
            total,
            runs + sort_looks + n.div_ceil(Stop::EVERY),
            "{total} looks"
        );
        for cut in 0..total {
            let stop = Stop::after_looks(cut as u64);
            assert!(
                super::time_groups(&b, 1, &stop).is_err(),
                "cut at look {cut}"
            );
        }
    }

    #[test]
    fn section_spans_cover_lifetimes() {
        let b = bufs(&[(0, 2, 1), (1, 5, 1), (5, 6, 1)]);
        // Times 0, 1, 2, 5, 6: sections [0,1) [1,2) [2,5) [5,6).
        assert_eq!(section_spans(b.iter()), (vec![(0, 2), (1, 3), (3, 4)], 4));
        assert_eq!(section_spans([].iter()), (vec![], 0));
    }

    #[test]
    fn contention_is_peak_load_over_lifetime() {
        let b = bufs(&[(0, 2, 5), (1, 3, 7), (3, 6, 1), (5, 6, 2)]);
        let p = LoadProfile::new(&b, NEVER).unwrap();
        assert_eq!(p.contention(&b, NEVER), Ok(vec![12, 12, 3, 3]));
    }
}
