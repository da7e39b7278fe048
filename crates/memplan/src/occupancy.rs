//! Which address ranges do placed buffers occupy during a buffer's lifetime?
//! The fitting step of every greedy solver asks this once per buffer, so it
//! must cost about the size of its answer, not the number of placed buffers.
//!
//! Layout: every buffer is an `Entry` in an array sorted by start time.
//! The buffers overlapping `[s, e)` are (a) those starting in `[s, e)`, a
//! contiguous run of the array, and (b) those alive at `s` that started
//! before it. For (b), *checkpoints* are placed along the array; each stores
//! copies of the entries alive at its time that started before it. A query
//! scans the nearest checkpoint at or before `s`, the run between that
//! checkpoint and `s`, and the run starting in `[s, e)`, keeping placed
//! entries that overlap. Checkpoints are spaced by at least the size of the
//! previous checkpoint's list, so copies take at most n + n/MIN_GAP·MIN_GAP
//! entries (memory O(n)), and each query scans O(live + k) entries, mostly
//! sequentially (few cache misses: the queries come in arbitrary time order).

use rayon::prelude::*;

use crate::problem::Buffer;

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

const UNPLACED: u64 = u64::MAX;

/// Checkpoints are at least this many entries apart.
const MIN_GAP: usize = 32;

/// A buffer's lifetime and, once placed, its address range.
#[derive(Clone, Copy, Debug)]
struct Entry {
    start: u64,
    end: u64,
    offset: u64,
    size: u64,
}

impl Entry {
    /// The occupied address range, if placed.
    #[inline]
    fn range(&self) -> Option<(u64, u64)> {
        (self.offset != UNPLACED).then(|| (self.offset, self.offset + self.size))
    }
}

/// Placed buffers, searchable by time overlap. Built once for a set of
/// spans, indexed `0..n` as given; they are then placed one by one.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    /// Every buffer, by increasing start.
    by_start: Vec<Entry>,
    /// Position of each buffer in `by_start`.
    position: Vec<u32>,
    /// Position of the first entry of each start-time run, per buffer: the
    /// first entry starting at or after the buffer's start.
    run_start: Vec<u32>,
    /// Checkpoint positions in `by_start`, increasing (the first is 0).
    checkpoints: Vec<u32>,
    /// Per checkpoint, the range of its copies in `copies`.
    copy_ranges: Vec<(u32, u32)>,
    /// Copies of the entries alive at each checkpoint that started before it.
    copies: Vec<Entry>,
    /// Per buffer, the range of its copy positions in `copy_slots`.
    slot_ranges: Vec<(u32, u32)>,
    /// Positions in `copies` of each buffer's copies, grouped by buffer.
    copy_slots: Vec<u32>,
}

impl Occupancy {
    /// Indexes all `buffers`, none placed, in O(n log n) time and O(n) memory.
    pub fn new(buffers: &[Span]) -> Self {
        let n = buffers.len();
        let mut order: Vec<(u64, u32)> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.start, i as u32))
            .collect();
        if n > 1 << 16 {
            order.par_sort_unstable();
        } else {
            order.sort_unstable();
        }
        let by_start: Vec<Entry> = order
            .iter()
            .map(|&(_, i)| {
                let b = &buffers[i as usize];
                Entry {
                    start: b.start,
                    end: b.end,
                    offset: UNPLACED,
                    size: b.size,
                }
            })
            .collect();
        let mut position = vec![0u32; n];
        let mut run_start = vec![0u32; n];
        let mut run = 0usize;
        for (pos, &(start, i)) in order.iter().enumerate() {
            if order[run].0 != start {
                run = pos;
            }
            position[i as usize] = pos as u32;
            run_start[i as usize] = run as u32;
        }
        drop(order);

        // Checkpoints: sweep by start, keeping the positions seen since the
        // last checkpoint plus its live copies.
        let mut checkpoints = Vec::new();
        let mut copy_ranges = Vec::new();
        let mut copy_owner: Vec<u32> = Vec::new(); // position in by_start of each copy
        let mut live: Vec<u32> = Vec::new();
        let mut last = 0usize;
        let mut gap = 0usize;
        for pos in 0..n {
            let is_run_start = pos == 0 || by_start[pos - 1].start != by_start[pos].start;
            if is_run_start && (pos == 0 || pos - last >= gap) {
                let t = by_start[pos].start;
                live.retain(|&p| by_start[p as usize].end > t);
                let from = copy_owner.len() as u32;
                copy_owner.extend_from_slice(&live);
                checkpoints.push(pos as u32);
                copy_ranges.push((from, copy_owner.len() as u32));
                last = pos;
                gap = live.len().max(MIN_GAP);
            }
            live.push(pos as u32);
        }
        let copies = copy_owner.iter().map(|&p| by_start[p as usize]).collect();

        // For updates: where each buffer's copies are.
        let mut counts = vec![0u32; n + 1];
        for &p in &copy_owner {
            counts[p as usize + 1] += 1;
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut copy_slots = vec![0u32; copy_owner.len()];
        for (c, &p) in copy_owner.iter().enumerate() {
            copy_slots[fill[p as usize] as usize] = c as u32;
            fill[p as usize] += 1;
        }
        // Ranges per buffer (by index, through its position).
        let slot_ranges = position
            .iter()
            .map(|&p| (counts[p as usize], counts[p as usize + 1]))
            .collect();

        Occupancy {
            by_start,
            position,
            run_start,
            checkpoints,
            copy_ranges,
            copies,
            slot_ranges,
            copy_slots,
        }
    }

    /// Records that buffer `b` now sits at `offset`.
    pub fn place(&mut self, b: u32, offset: u64) {
        let b = b as usize;
        self.by_start[self.position[b] as usize].offset = offset;
        let (from, to) = self.slot_ranges[b];
        for &c in &self.copy_slots[from as usize..to as usize] {
            self.copies[c as usize].offset = offset;
        }
    }

    /// Calls `f(offset, end)` with the address range of every placed buffer
    /// whose lifetime intersects that of buffer `b` (`b` excluded).
    pub fn occupied_during(&self, b: u32, mut f: impl FnMut(u64, u64)) {
        let own = self.position[b as usize] as usize;
        let (s, e) = (self.by_start[own].start, self.by_start[own].end);
        let p_s = self.run_start[b as usize] as usize;
        let k = self.checkpoints.partition_point(|&c| c as usize <= p_s) - 1;
        let q = self.checkpoints[k] as usize;
        let (from, to) = self.copy_ranges[k];
        let mut report = |x: &Entry| {
            if let Some((offset, end)) = x.range() {
                f(offset, end);
            }
        };
        // Alive at s and started before s: the checkpoint's copies, then the
        // entries between the checkpoint and s.
        for x in &self.copies[from as usize..to as usize] {
            if x.end > s {
                report(x);
            }
        }
        for x in &self.by_start[q..p_s] {
            if x.end > s {
                report(x);
            }
        }
        // Starting in [s, e), except `b` itself.
        for (pos, x) in self.by_start.iter().enumerate().skip(p_s) {
            if x.start >= e {
                break;
            }
            if pos != own {
                report(x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_linear_scan(
            spec in proptest::collection::vec((0u64..60, 1u64..40, proptest::option::of(0u64..100)), 1..150),
            query in any::<proptest::sample::Index>(),
        ) {
            let buffers: Vec<Span> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, _))| Span { start: s, end: s + len, size: 1 + i as u64 })
                .collect();
            let mut occ = Occupancy::new(&buffers);
            for (i, &(_, _, offset)) in spec.iter().enumerate() {
                if let Some(o) = offset {
                    occ.place(i as u32, o);
                }
            }
            let q = query.index(buffers.len());
            let mut got = Vec::new();
            occ.occupied_during(q as u32, |o, e| got.push((o, e)));
            got.sort();
            let overlaps = |a: &Span, b: &Span| a.start < b.end && b.start < a.end;
            let mut want: Vec<(u64, u64)> = (0..buffers.len())
                .filter(|&i| i != q && overlaps(&buffers[i], &buffers[q]))
                .filter_map(|i| spec[i].2.map(|o| (o, o + buffers[i].size)))
                .collect();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn copies_stay_linear() {
        // Everything alive at once: the worst case for checkpoint copies.
        let buffers: Vec<Span> = (0..1000)
            .map(|i| Span {
                start: i,
                end: 2000,
                size: 1,
            })
            .collect();
        let occ = Occupancy::new(&buffers);
        assert!(
            occ.copies.len() <= 2 * buffers.len(),
            "{} copies",
            occ.copies.len()
        );
    }
}
