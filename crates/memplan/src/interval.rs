//! The index of placed buffers that the fitting step asks "which placed
//! buffers overlap `[start, end)` in time?" without scanning them all.
//!
//! All buffers are known up front, so the index is a static segment tree over
//! the buffers sorted by start time. Each node keeps the largest end among the
//! *placed* buffers below it. A query walks the prefix of buffers starting
//! before `end` and prunes every subtree whose largest end is `<= start`, so it
//! costs O((k + 1) log n) for k reported buffers, and memory is O(n).

use crate::index::BufferIdx;
use crate::problem::Buffer;

/// Placed buffers, searchable by time overlap.
#[derive(Clone, Debug)]
pub struct PlacedIndex {
    /// Start times in increasing order (the leaves' keys).
    starts: Vec<u64>,
    /// The buffer at each leaf.
    order: Vec<BufferIdx>,
    /// The leaf of each buffer.
    leaf: Vec<u32>,
    /// Number of leaves in the complete tree (a power of two).
    half: usize,
    /// Largest end of a placed buffer under each node; 0 when none.
    max_end: Vec<u64>,
    /// Reused traversal stack: (node, first leaf, leaf count).
    stack: Vec<(u32, u32, u32)>,
}

impl PlacedIndex {
    /// An index over `buffers` with nothing placed yet.
    pub fn new(buffers: &[Buffer]) -> Self {
        let mut order: Vec<BufferIdx> = (0..buffers.len()).map(BufferIdx::new).collect();
        order.sort_unstable_by_key(|b| (buffers[b.index()].start, b.0));
        let starts = order.iter().map(|b| buffers[b.index()].start).collect();
        let mut leaf = vec![0u32; buffers.len()];
        for (pos, b) in order.iter().enumerate() {
            leaf[b.index()] = pos as u32;
        }
        let half = buffers.len().next_power_of_two().max(1);
        PlacedIndex {
            starts,
            order,
            leaf,
            half,
            max_end: vec![0; 2 * half],
            stack: Vec::with_capacity(64),
        }
    }

    /// Marks buffer `b`, alive until `end`, as placed.
    pub fn insert(&mut self, b: BufferIdx, end: u64) {
        let mut node = self.half + self.leaf[b.index()] as usize;
        while node >= 1 && self.max_end[node] < end {
            self.max_end[node] = end;
            node /= 2;
        }
    }

    /// Appends to `out` every placed buffer whose lifetime intersects
    /// `[start, end)`, in start order.
    pub fn overlapping(&mut self, start: u64, end: u64, out: &mut Vec<BufferIdx>) {
        let limit = self.starts.partition_point(|&s| s < end) as u32;
        if limit == 0 || self.max_end[1] <= start {
            return;
        }
        self.stack.clear();
        self.stack.push((1, 0, self.half as u32));
        while let Some((node, lo, len)) = self.stack.pop() {
            if lo >= limit || self.max_end[node as usize] <= start {
                continue;
            }
            if len == 1 {
                out.push(self.order[lo as usize]);
                continue;
            }
            let half = len / 2;
            // Right child first so that the left one is popped first.
            self.stack.push((2 * node + 1, lo + half, half));
            self.stack.push((2 * node, lo, half));
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
            spec in proptest::collection::vec((0u64..50, 1u64..20, any::<bool>()), 0..60),
            query in (0u64..60, 1u64..30),
        ) {
            let buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, _))| Buffer::new(i.to_string(), s, s + len, 1))
                .collect();
            let mut index = PlacedIndex::new(&buffers);
            for (i, &(_, _, placed)) in spec.iter().enumerate() {
                if placed {
                    index.insert(BufferIdx::new(i), buffers[i].end);
                }
            }
            let (qs, qe) = (query.0, query.0 + query.1);
            let mut got = Vec::new();
            index.overlapping(qs, qe, &mut got);
            got.sort();
            let want: Vec<BufferIdx> = (0..buffers.len())
                .filter(|&i| spec[i].2 && buffers[i].start < qe && qs < buffers[i].end)
                .map(BufferIdx::new)
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
