//! Whether placed buffers collide: an event sweep with an ordered set of
//! live address ranges, O(n log n) (a shift of up to 512 ranges per
//! event while they are few). The validator's core, and the problem's
//! check of its fixed buffers.

use std::collections::BTreeMap;
use std::ops::Bound;

use rayon::prelude::*;

use super::gaps::Gaps;
use super::occupancy::prefetch_lines;
use super::sort::{prefix_sums, sort_parts_by_low_bits};
use crate::buffer::{Buffer, BufferIdx};
use crate::stop::Stop;

/// Finds a pair of the given `(buffer, offset)` placements that are present
/// at the same instant and share an address (zero-size buffers share none;
/// with `gaps`, what a buffer occupies is its [pieces](super::gaps::pieces)).
/// Offsets must not overflow with their sizes. Sweeps events in time order
/// (frees first at equal times) and keeps the live address ranges ordered
/// by address (a sorted vector while they are few, else an ordered map,
/// see `Live`): while no conflict has been found they are disjoint, so only
/// the two neighbours of a new range need checking. From 2^16 events on,
/// parts of the timeline (one per thread) are swept in parallel, each from the ranges live
/// at its start; the pair reported is the one sequential sweep's.
pub fn first_overlap(
    buffers: &[Buffer],
    gaps: &Gaps,
    placed: impl Iterator<Item = (BufferIdx, u64)> + Clone,
) -> Option<(BufferIdx, BufferIdx)> {
    let chunks = rayon::current_num_threads();
    first_overlap_chunked(buffers, gaps, placed, chunks, 1 << 16)
}

/// [`first_overlap`] sweeping about `chunks` parts of the timeline in
/// parallel when there are at least `min_events` events.
fn first_overlap_chunked(
    buffers: &[Buffer],
    gaps: &Gaps,
    placed: impl Iterator<Item = (BufferIdx, u64)> + Clone,
    chunks: usize,
    min_events: usize,
) -> Option<(BufferIdx, BufferIdx)> {
    // (time, 0 = free / 1 = allocate, item, lowest address). Without gaps
    // an item is a buffer; with gaps, a piece of `pieces`.
    let mut events: Vec<Event> = Vec::new();
    // With gaps: (buffer, width, end) of each piece.
    let mut pieces: Vec<(BufferIdx, u64, u64)> = Vec::new();
    // Without gaps: the end and the size of each buffer, by index (the
    // ends read when chunks are seeded, the sizes at each allocation: the
    // buffers themselves are far larger, a cache miss each).
    let mut ends: Vec<u64> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    if gaps.is_empty() {
        ends.resize(buffers.len(), 0);
        sizes.resize(buffers.len(), 0);
        events = buffer_events(buffers, placed, &mut ends, &mut sizes);
    } else {
        // Zero-size buffers occupy no address range: they conflict with
        // nothing.
        for (b, offset) in placed.filter(|&(b, _)| buffers[b.index()].size > 0) {
            for p in super::gaps::pieces(&buffers[b.index()], gaps.of(b)) {
                let item = pieces.len() as u32;
                pieces.push((b, p.hi - p.lo, p.end));
                events.push((p.start, 1, item, offset + p.lo));
                events.push((p.end, 0, item, offset + p.lo));
            }
        }
        events.par_sort_unstable_by_key(time_order);
    }
    let item = |i: u32| {
        if gaps.is_empty() {
            (BufferIdx(i), sizes[i as usize])
        } else {
            let (b, width, _) = pieces[i as usize];
            (b, width)
        }
    };
    // Asks for an item's data ahead of its use (random places).
    let warm = |i: u32| {
        if gaps.is_empty() {
            prefetch_lines(&sizes[i as usize..=i as usize]);
        } else {
            prefetch_lines(&pieces[i as usize..=i as usize]);
        }
    };
    let warm_end = |i: u32| {
        if gaps.is_empty() {
            prefetch_lines(&ends[i as usize..=i as usize]);
        } else {
            prefetch_lines(&pieces[i as usize..=i as usize]);
        }
    };
    let end_of = |i: u32| {
        if gaps.is_empty() {
            ends[i as usize]
        } else {
            pieces[i as usize].2
        }
    };
    // The timeline in chunks swept in parallel, each from the live ranges
    // at its first time: the first conflict of the earliest chunk that has
    // one is the sequential sweep's (until it, the live ranges at a
    // chunk's start are the ones seeded).
    let chunks = if events.len() < min_events {
        vec![0, events.len()]
    } else {
        chunk_starts(&events, chunks)
    };
    chunks.par_windows(2).find_map_first(|w| {
        let (from, to) = (w[0], w[1]);
        // Live at the chunk's start: allocated before it, freed in or
        // after it.
        let t = events.get(from).map_or(0, |e| e.0);
        let mut live = Live::new(SMALL_LIVE);
        let seeds = &events[..from];
        for (k, &(_, kind, i, offset)) in seeds.iter().enumerate() {
            if let Some(&(_, 1, ahead, _)) = seeds.get(k + WARM_AHEAD) {
                warm_end(ahead);
            }
            if kind == 1 && end_of(i) >= t {
                let (b, width) = item(i);
                live.insert(offset, offset.saturating_add(width), b);
            }
        }
        sweep(&events[from..to], &mut live, &item, &warm)
    })
}

/// A sweep event: (time, 0 = free / 1 = allocate, item, lowest address).
type Event = (u64, u8, u32, u64);

/// The order of the sweep: by time, frees first, then by item.
fn time_order(&(t, kind, item, _): &Event) -> (u64, u8, u32) {
    (t, kind, item)
}

/// The events of the `placed` buffers without gaps (zero-size ones have
/// none), sorted by (time, kind, buffer), with each one's end and size in
/// `ends` and `sizes` by index (zero for the others). When the buffers
/// come in increasing index order and the times are below twice their
/// number, by a two-level counting sort over time, in linear time: the
/// events scattered by the top 8 bits of their time (counted in the pass
/// that finds whether the times are dense; in each part its frees, then
/// its allocations: two streams per part), then each part by the other
/// bits in parallel (within the cache); both stable, so the order within
/// a time is the comparison sort's. Else by a sort.
fn buffer_events(
    buffers: &[Buffer],
    placed: impl Iterator<Item = (BufferIdx, u64)> + Clone,
    ends: &mut [u64],
    sizes: &mut [u64],
) -> Vec<Event> {
    let all = placed;
    let placed = all.clone().filter(|&(b, _)| buffers[b.index()].size > 0);
    // The top level: at most 256 parts of times below twice the number of
    // buffers, `part_of(t)` (clamped: beyond, the times are not dense and
    // the counts unused). Counted by (part, kind) in the first pass:
    // `next[2 * part + kind + 1]`.
    let shift = (u64::BITS - (2 * buffers.len() as u64).leading_zeros()).saturating_sub(8);
    let last_part = (2 * buffers.len()) >> shift;
    let part_of = |t: u64| ((t >> shift) as usize).min(last_part);
    let mut next = vec![0usize; 2 * last_part + 3];
    let (mut count, mut max_end, mut increasing, mut last) = (0usize, 0u64, true, None);
    for (b, _) in placed.clone() {
        let buf = &buffers[b.index()];
        ends[b.index()] = buf.end;
        sizes[b.index()] = buf.size;
        next[2 * part_of(buf.end) + 1] += 1;
        next[2 * part_of(buf.start) + 2] += 1;
        count += 1;
        max_end = max_end.max(buf.end);
        increasing &= last.is_none_or(|l| l < b.0);
        last = Some(b.0);
    }
    if !increasing || max_end >= 2 * count as u64 {
        return sorted_events(buffers, placed, count);
    }
    // From here on, the buffers of positive size known by their dense
    // sizes: only the starts are read from the buffers themselves.
    let (ends, sizes): (&[u64], &[u64]) = (ends, sizes);
    let placed = all.filter(|&(b, _)| sizes[b.index()] > 0);
    prefix_sums(&mut next);
    // A part's events: its frees, then its allocations, each by buffer.
    let bounds: Vec<usize> = next.iter().step_by(2).copied().collect();
    let mut events = vec![(0, 0, 0, 0); 2 * count];
    for (b, offset) in placed {
        let (end, start) = (ends[b.index()], buffers[b.index()].start);
        for (t, kind) in [(end, 0u8), (start, 1)] {
            let at = &mut next[2 * part_of(t) + usize::from(kind)];
            events[*at] = (t, kind, b.0, offset);
            *at += 1;
        }
    }
    // The second level: each part by the low `shift` bits.
    let sorted = sort_parts_by_low_bits(
        &mut events,
        &bounds,
        shift,
        |e| e.0 as usize,
        &Stop::never(),
    );
    debug_assert!(sorted.is_ok(), "nothing cuts it");
    events
}

/// The events of `placed` (buffers of positive size, `count` of them),
/// sorted by (time, kind, buffer) by a comparison sort.
fn sorted_events(
    buffers: &[Buffer],
    placed: impl Iterator<Item = (BufferIdx, u64)>,
    count: usize,
) -> Vec<Event> {
    let mut events = Vec::with_capacity(2 * count);
    for (b, offset) in placed {
        let buf = &buffers[b.index()];
        events.push((buf.start, 1, b.0, offset));
        events.push((buf.end, 0, b.0, offset));
    }
    events.par_sort_unstable_by_key(time_order);
    events
}

/// Where the chunks of `events` (sorted by time) start, at most `count`
/// of them, each at the first event of its time; then the length.
fn chunk_starts(events: &[Event], count: usize) -> Vec<usize> {
    let count = count.max(1);
    let mut starts = vec![0];
    for k in 1..count {
        let mut i = (events.len() * k / count).max(*starts.last().unwrap_or(&0));
        while i < events.len() && i > 0 && events[i].0 == events[i - 1].0 {
            i += 1;
        }
        if i < events.len() && i > *starts.last().unwrap_or(&0) {
            starts.push(i);
        }
    }
    starts.push(events.len());
    starts
}

/// Sweeps `events` (sorted) from the live address ranges `live` (lowest
/// address -> end, buffer), disjoint: the first pair found sharing an
/// address. `item` gives an event's buffer and width.
fn sweep(
    events: &[Event],
    live: &mut Live,
    item: &impl Fn(u32) -> (BufferIdx, u64),
    warm: &impl Fn(u32),
) -> Option<(BufferIdx, BufferIdx)> {
    for (k, &(_, kind, i, offset)) in events.iter().enumerate() {
        if let Some(&(_, 1, ahead, _)) = events.get(k + WARM_AHEAD) {
            warm(ahead);
        }
        if kind == 0 {
            live.remove(offset);
            continue;
        }
        let (b, width) = item(i);
        let end = offset.saturating_add(width);
        let (below, above) = live.neighbours(offset);
        if let Some((_, below_end, other)) = below {
            if below_end > offset {
                return Some((other, b));
            }
        }
        if let Some((above, _, other)) = above {
            if above < end {
                return Some((other, b));
            }
        }
        live.insert(offset, end, b);
    }
    None
}

/// How many events ahead [`sweep`] asks for an allocation's size.
const WARM_AHEAD: usize = 16;

/// Up to this many live ranges, [`Live`] keeps a sorted vector.
const SMALL_LIVE: usize = 512;

/// The live address ranges of a sweep, disjoint, by lowest address (at
/// most one range per address): sorted vectors while they are few (a
/// binary search over the offsets alone and a shift within a few cache
/// lines, several times faster than the ordered map), an ordered map once
/// they pass a limit (then for good).
enum Live {
    /// The offsets, increasing; the `(end, buffer)` of each, in the same
    /// order; the limit on their number.
    Small(Vec<u64>, Vec<(u64, BufferIdx)>, usize),
    /// offset -> (end, buffer).
    Large(BTreeMap<u64, (u64, BufferIdx)>),
}

impl Live {
    /// No range, vectors up to `limit` ranges.
    fn new(limit: usize) -> Self {
        Live::Small(Vec::new(), Vec::new(), limit)
    }

    /// Adds the range `[offset, end)` of buffer `b` (no live range starts
    /// at `offset`).
    fn insert(&mut self, offset: u64, end: u64, b: BufferIdx) {
        match self {
            Live::Small(offsets, rest, limit) if offsets.len() < *limit => {
                let at = offsets.partition_point(|&o| o < offset);
                offsets.insert(at, offset);
                rest.insert(at, (end, b));
            }
            Live::Small(offsets, rest, _) => {
                let mut map: BTreeMap<u64, (u64, BufferIdx)> =
                    offsets.iter().copied().zip(rest.iter().copied()).collect();
                map.insert(offset, (end, b));
                *self = Live::Large(map);
            }
            Live::Large(map) => {
                map.insert(offset, (end, b));
            }
        }
    }

    /// Removes the range starting at `offset`, if any.
    fn remove(&mut self, offset: u64) {
        match self {
            Live::Small(offsets, rest, _) => {
                let at = offsets.partition_point(|&o| o < offset);
                if offsets.get(at) == Some(&offset) {
                    offsets.remove(at);
                    rest.remove(at);
                }
            }
            Live::Large(map) => {
                map.remove(&offset);
            }
        }
    }

    /// The range starting at or below `offset` with the highest start,
    /// and the one with the lowest start above it, as `(offset, end,
    /// buffer)`.
    #[allow(clippy::type_complexity)]
    fn neighbours(
        &self,
        offset: u64,
    ) -> (Option<(u64, u64, BufferIdx)>, Option<(u64, u64, BufferIdx)>) {
        match self {
            Live::Small(offsets, rest, _) => {
                let at = offsets.partition_point(|&o| o <= offset);
                let range = |i: usize| {
                    let (end, b) = rest[i];
                    (offsets[i], end, b)
                };
                let below = at.checked_sub(1).map(range);
                (below, (at < offsets.len()).then(|| range(at)))
            }
            Live::Large(map) => {
                let below = map.range(..=offset).next_back();
                let above = map
                    .range((Bound::Excluded(offset), Bound::Unbounded))
                    .next();
                let range = |(&o, &(e, b)): (&u64, &(u64, BufferIdx))| (o, e, b);
                (below.map(range), above.map(range))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::gaps::Gap;
    use proptest::prelude::*;

    /// A range (offset, end, buffer), if any.
    type Neighbour = Option<(u64, u64, BufferIdx)>;

    /// The ranges of `model` starting at or below `offset` and above it,
    /// nearest first: what [`Live::neighbours`] must answer.
    fn neighbours(model: &BTreeMap<u64, (u64, BufferIdx)>, offset: u64) -> (Neighbour, Neighbour) {
        let entry = |(&o, &(e, b)): (&u64, &(u64, BufferIdx))| (o, e, b);
        let below = model.range(..=offset).next_back().map(entry);
        let above = model
            .range((Bound::Excluded(offset), Bound::Unbounded))
            .next()
            .map(entry);
        (below, above)
    }

    proptest! {
        /// The live set answers as an ordered map does, before and after
        /// it turns into one.
        #[test]
        fn live_is_an_ordered_map(
            ops in proptest::collection::vec((0u64..60, 1u64..5, any::<bool>()), 0..200),
            limit in 0usize..12,
        ) {
            let mut live = Live::new(limit);
            let mut model: BTreeMap<u64, (u64, BufferIdx)> = BTreeMap::new();
            for (k, &(offset, width, add)) in ops.iter().enumerate() {
                prop_assert_eq!(live.neighbours(offset), neighbours(&model, offset));
                if add && !model.contains_key(&offset) {
                    let b = BufferIdx::new(k);
                    live.insert(offset, offset + width, b);
                    model.insert(offset, (offset + width, b));
                } else {
                    live.remove(offset);
                    model.remove(&offset);
                }
            }
            for offset in 0..61 {
                prop_assert_eq!(live.neighbours(offset), neighbours(&model, offset));
            }
        }

        /// Swept in chunks, in parallel, the answer is the sequential
        /// sweep's, on plans valid or not, with gaps or without.
        #[test]
        fn chunks_agree_with_one_sweep(
            spec in proptest::collection::vec((0u64..30, 1u64..8, 0u64..6, 0u64..40, 0u8..4), 1..40),
            chunks in 2usize..7,
        ) {
            let buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, _, _))| Buffer::new(format!("b{i}"), s, s + len, size))
                .collect();
            let placed = || spec.iter().enumerate().map(|(i, x)| (BufferIdx::new(i), x.3));
            // An idle gap in the middle of some buffers of 3+ steps.
            let lists: Vec<Vec<Gap>> = spec
                .iter()
                .map(|&(s, len, _, _, g)| {
                    if g == 0 && len >= 3 { vec![Gap::idle(s + 1, s + 2)] } else { vec![] }
                })
                .collect();
            for gaps in [Gaps::default(), Gaps::from_lists(&lists).unwrap()] {
                let one = first_overlap_chunked(&buffers, &gaps, placed(), 1, 0);
                let many = first_overlap_chunked(&buffers, &gaps, placed(), chunks, 0);
                prop_assert_eq!(one, many);
            }
        }

        /// The counting sort's events are the comparison sort's: times
        /// dense (below 1.5 times the number of buffers, counted, both
        /// levels at work) or sparse (sorted), zero sizes left out, the
        /// buffers in order or not (then sorted).
        #[test]
        fn counted_events_are_the_sorted_ones(
            spec in proptest::collection::vec((any::<u32>(), any::<u32>(), 0u64..8, 0u64..1000), 200..2000),
            sparse in any::<bool>(),
            shuffle in any::<bool>(),
        ) {
            let n = spec.len() as u64;
            let scale = if sparse { 1000 } else { 1 };
            let buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, _))| {
                    let start = u64::from(s) % n * scale;
                    let len = (1 + u64::from(len) % (n / 2)) * scale;
                    Buffer::new(format!("b{i}"), start, start + len, size)
                })
                .collect();
            let mut placed: Vec<(BufferIdx, u64)> =
                spec.iter().enumerate().map(|(i, x)| (BufferIdx::new(i), x.3)).collect();
            if shuffle {
                placed.reverse();
            }
            let n = buffers.len();
            let (mut ends, mut sizes) = (vec![0; n], vec![0; n]);
            let counted = buffer_events(&buffers, placed.iter().copied(), &mut ends, &mut sizes);
            let positive: Vec<_> =
                placed.iter().copied().filter(|&(b, _)| buffers[b.index()].size > 0).collect();
            let sorted = sorted_events(&buffers, positive.iter().copied(), positive.len());
            prop_assert_eq!(counted, sorted);
            for (i, b) in buffers.iter().enumerate() {
                let present = b.size > 0;
                prop_assert_eq!((ends[i], sizes[i]), if present { (b.end, b.size) } else { (0, 0) });
            }
        }
    }

    /// Dense times take the counting sort (the case the test above checks
    /// against the comparison sort; here, that it is taken at all).
    #[test]
    fn dense_times_are_counted() {
        let buffers: Vec<Buffer> = (0..1000u64)
            .map(|i| {
                Buffer::new(
                    format!("b{i}"),
                    (i * 7) % 900,
                    (i * 7) % 900 + 50,
                    1 + i % 3,
                )
            })
            .collect();
        let placed = (0..1000).map(|i| (BufferIdx::new(i), 0));
        let (mut ends, mut sizes) = (vec![0; 1000], vec![0; 1000]);
        let events = buffer_events(&buffers, placed.clone(), &mut ends, &mut sizes);
        assert!(events
            .windows(2)
            .all(|w| (w[0].0, w[0].1, w[0].2) < (w[1].0, w[1].1, w[1].2)));
        assert_eq!(events, sorted_events(&buffers, placed, 1000));
    }
}
