//! Whether placed buffers collide: an event sweep with an ordered set of
//! live address ranges, O(n log n). The validator's core, and the
//! problem's check of its fixed buffers.

use std::collections::BTreeMap;
use std::ops::Bound;

use rayon::prelude::*;

use super::gaps::Gaps;
use crate::buffer::{Buffer, BufferIdx};

/// Finds a pair of the given `(buffer, offset)` placements that are present
/// at the same instant and share an address (zero-size buffers share none;
/// with `gaps`, what a buffer occupies is its [pieces](super::gaps::pieces)).
/// Offsets must not overflow with their sizes. Sweeps events in time order
/// (frees first at equal times) and keeps the live address ranges in an
/// ordered map: while no conflict has been found they are disjoint, so only
/// the two neighbours of a new range need checking.
pub fn first_overlap(
    buffers: &[Buffer],
    gaps: &Gaps,
    placed: impl Iterator<Item = (BufferIdx, u64)>,
) -> Option<(BufferIdx, BufferIdx)> {
    // (time, 0 = free / 1 = allocate, item, lowest address). Without gaps
    // an item is a buffer; with gaps, a piece of `pieces`.
    let mut events: Vec<(u64, u8, u32, u64)> = Vec::new();
    // With gaps: (buffer, width) of each piece.
    let mut pieces: Vec<(BufferIdx, u64)> = Vec::new();
    // Zero-size buffers occupy no address range: they conflict with nothing.
    for (b, offset) in placed.filter(|&(b, _)| buffers[b.index()].size > 0) {
        let buf = &buffers[b.index()];
        if gaps.is_empty() {
            events.push((buf.start, 1, b.0, offset));
            events.push((buf.end, 0, b.0, offset));
            continue;
        }
        for p in super::gaps::pieces(buf, gaps.of(b)) {
            let item = pieces.len() as u32;
            pieces.push((b, p.hi - p.lo));
            events.push((p.start, 1, item, offset + p.lo));
            events.push((p.end, 0, item, offset + p.lo));
        }
    }
    events.par_sort_unstable_by_key(|&(t, kind, item, _)| (t, kind, item));
    let item = |i: u32| {
        if gaps.is_empty() {
            (BufferIdx(i), buffers[i as usize].size)
        } else {
            pieces[i as usize]
        }
    };
    // lowest address -> (end, buffer) of live ranges.
    let mut live: BTreeMap<u64, (u64, BufferIdx)> = BTreeMap::new();
    for (_, kind, i, offset) in events {
        if kind == 0 {
            live.remove(&offset);
            continue;
        }
        let (b, width) = item(i);
        let end = offset.saturating_add(width);
        if let Some((_, &(below_end, other))) = live.range(..=offset).next_back() {
            if below_end > offset {
                return Some((other, b));
            }
        }
        if let Some((&above, &(_, other))) = live
            .range((Bound::Excluded(offset), Bound::Unbounded))
            .next()
        {
            if above < end {
                return Some((other, b));
            }
        }
        live.insert(offset, (end, b));
    }
    None
}
