//! Whether placed buffers collide: an event sweep with an ordered set of
//! live address ranges, O(n log n). The validator's core, and the
//! problem's check of its fixed buffers.

use std::collections::BTreeMap;
use std::ops::Bound;

use rayon::prelude::*;

use crate::buffer::{Buffer, BufferIdx};

/// Finds a pair of the given `(buffer, offset)` placements that are alive at
/// the same time and share an address (zero-size buffers share none).
/// Offsets must not overflow with their sizes. Sweeps events in time order (frees first at equal times) and keeps
/// the live address ranges in an ordered map: while no conflict has been
/// found they are disjoint, so only the two neighbours of a new range need
/// checking.
pub fn first_overlap(
    buffers: &[Buffer],
    placed: impl Iterator<Item = (BufferIdx, u64)>,
) -> Option<(BufferIdx, BufferIdx)> {
    // (time, 0 = free / 1 = allocate, buffer, offset)
    let mut events: Vec<(u64, u8, BufferIdx, u64)> = Vec::new();
    // Zero-size buffers occupy no address range: they conflict with nothing.
    for (b, offset) in placed.filter(|&(b, _)| buffers[b.index()].size > 0) {
        let buf = &buffers[b.index()];
        events.push((buf.start, 1, b, offset));
        events.push((buf.end, 0, b, offset));
    }
    events.par_sort_unstable_by_key(|&(t, kind, b, _)| (t, kind, b));
    // offset -> (end, buffer) of live ranges.
    let mut live: BTreeMap<u64, (u64, BufferIdx)> = BTreeMap::new();
    for (_, kind, b, offset) in events {
        if kind == 0 {
            live.remove(&offset);
            continue;
        }
        let end = offset.saturating_add(buffers[b.index()].size);
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
