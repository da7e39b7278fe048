//! The load of a changing set of buffers over time: which instants a buffer
//! would push over a capacity (a necessary condition for it to fit in a
//! pool), in O(log n) per buffer added, removed or queried.

use crate::buffer::BufferIdx;
use crate::problem::Buffer;

/// The elementary time segments of a set of buffers (between consecutive
/// distinct starts and ends) and each buffer's segment range.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    /// Distinct start and end times, increasing.
    pub times: Vec<u64>,
    /// Per buffer, the segments `[lo, hi)` it is alive in.
    pub spans: Vec<(u32, u32)>,
}

impl Timeline {
    /// The timeline of `buffers`, in O(n log n).
    pub fn new(buffers: &[Buffer]) -> Self {
        let mut times: Vec<u64> = buffers.iter().flat_map(|b| [b.start, b.end]).collect();
        times.sort_unstable();
        times.dedup();
        let at = |t: u64| times.partition_point(|&x| x < t) as u32;
        let spans = buffers.iter().map(|b| (at(b.start), at(b.end))).collect();
        Timeline { times, spans }
    }

    /// Number of elementary segments.
    pub fn segments(&self) -> usize {
        self.times.len().saturating_sub(1)
    }

    /// Segment range of buffer `b`.
    #[inline]
    pub fn span(&self, b: BufferIdx) -> (usize, usize) {
        let (lo, hi) = self.spans[b.index()];
        (lo as usize, hi as usize)
    }

    /// Length in time of segment `s`.
    #[inline]
    pub fn length(&self, s: usize) -> u64 {
        self.times[s + 1] - self.times[s]
    }
}

/// Range add and range maximum over the segments of a [`Timeline`]: each
/// node keeps the amount added to its whole range and the maximum below it.
#[derive(Clone, Debug)]
pub(crate) struct LoadTree {
    half: usize,
    /// Added to the node's whole range.
    added: Vec<u64>,
    /// Maximum over the node's range, its own `added` included.
    max: Vec<u64>,
}

impl LoadTree {
    /// An empty load over `segments` segments.
    pub fn new(segments: usize) -> Self {
        let half = segments.next_power_of_two().max(1);
        LoadTree {
            half,
            added: vec![0; 2 * half],
            max: vec![0; 2 * half],
        }
    }

    /// Adds `size` over segments `[lo, hi)`.
    pub fn add(&mut self, lo: usize, hi: usize, size: u64) {
        self.update(1, 0, self.half, lo, hi, size, true);
    }

    /// Removes `size` over segments `[lo, hi)`, which an [`add`](Self::add)
    /// of the same range put there.
    pub fn remove(&mut self, lo: usize, hi: usize, size: u64) {
        self.update(1, 0, self.half, lo, hi, size, false);
    }

    /// The highest load over segments `[lo, hi)` (0 when empty).
    pub fn max(&self, lo: usize, hi: usize) -> u64 {
        self.query(1, 0, self.half, lo, hi)
    }

    #[allow(clippy::too_many_arguments)]
    fn update(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, v: u64, add: bool) {
        if hi <= l || r <= lo {
            return;
        }
        if lo <= l && r <= hi {
            if add {
                self.added[node] += v;
                self.max[node] += v;
            } else {
                self.added[node] -= v;
                self.max[node] -= v;
            }
            return;
        }
        let mid = (l + r) / 2;
        self.update(2 * node, l, mid, lo, hi, v, add);
        self.update(2 * node + 1, mid, r, lo, hi, v, add);
        self.max[node] = self.added[node] + self.max[2 * node].max(self.max[2 * node + 1]);
    }

    fn query(&self, node: usize, l: usize, r: usize, lo: usize, hi: usize) -> u64 {
        if hi <= l || r <= lo {
            return 0;
        }
        if lo <= l && r <= hi {
            return self.max[node];
        }
        let mid = (l + r) / 2;
        self.added[node]
            + self
                .query(2 * node, l, mid, lo, hi)
                .max(self.query(2 * node + 1, mid, r, lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a plain array of loads, with adds and removes mixed.
        #[test]
        fn matches_an_array(
            ops in proptest::collection::vec((0usize..40, 1usize..20, 1u64..100, any::<bool>()), 1..60),
            query in (0usize..40, 1usize..40),
        ) {
            let n = 50;
            let mut tree = LoadTree::new(n);
            let mut loads = vec![0u64; n];
            let mut added: Vec<(usize, usize, u64)> = Vec::new();
            for (lo, len, v, remove) in ops {
                let hi = (lo + len).min(n);
                if remove {
                    if let Some((lo, hi, v)) = added.pop() {
                        tree.remove(lo, hi, v);
                        loads[lo..hi].iter_mut().for_each(|x| *x -= v);
                    }
                } else {
                    tree.add(lo, hi, v);
                    loads[lo..hi].iter_mut().for_each(|x| *x += v);
                    added.push((lo, hi, v));
                }
            }
            let (lo, len) = query;
            let hi = (lo + len).min(n);
            let want = loads[lo..hi].iter().copied().max().unwrap_or(0);
            prop_assert_eq!(tree.max(lo, hi), want);
        }
    }

    #[test]
    fn timeline_segments() {
        let t = Timeline::new(&[Buffer::new("a", 2, 5, 1), Buffer::new("b", 4, 9, 1)]);
        assert_eq!(t.times, vec![2, 4, 5, 9]);
        assert_eq!(t.span(BufferIdx(0)), (0, 2));
        assert_eq!(t.span(BufferIdx(1)), (1, 3));
        assert_eq!((t.segments(), t.length(2)), (3, 4));
    }
}
