//! First-fit on dense instances: a segment tree over time whose nodes hold
//! the occupied address ranges as sorted, coalesced interval lists.
//!
//! [`crate::geometry::occupancy::Occupancy`] answers "which placed buffers overlap this
//! lifetime?" in time proportional to the answer, which the first-fit step
//! then sorts by offset: O(k log k) per buffer with k conflicts. On inputs
//! where thousands of buffers are alive at once (iopddl S_1: 43M overlapping
//! pairs) that sort dominates. Here every placed buffer is inserted, as one
//! address range, into O(log n) node lists; neighbouring ranges coalesce, so
//! lists stay short in a well-packed plan, and a first-fit query walks
//! O(log n) lists by binary search instead of sorting its conflicts.
//!
//! Time is compressed to the distinct start times: two half-open lifetimes
//! overlap exactly when the later start lies in both. A lifetime covers the
//! leaf range of the starts inside it. Each node has two lists:
//! - `own`: ranges of buffers whose canonical decomposition holds the node
//!   (they are alive during the node's whole time range);
//! - `below`: ranges of every buffer stored at the node or a descendant.
//!
//! The buffers overlapping a query lifetime are exactly those in `below` of
//! its canonical nodes and in `own` of their ancestors.

use crate::geometry::fit::align_up;
use crate::geometry::occupancy::Span;
use crate::stop::{Cut, Stop};

/// No list allocated for a node yet.
const NONE: u32 = u32::MAX;
/// Canonical nodes and ancestors of one lifetime: at most 2 per level on a
/// tree of at most 2^32 leaves.
const MAX_NODES: usize = 130;

/// Occupied address ranges by time. Built once for a set of spans, indexed
/// `0..n` as given; they are then placed one by one.
#[derive(Clone, Debug, Default)]
pub struct TimeTree {
    /// Leaf range `[l, r)` of each span.
    leaves: Vec<(u32, u32)>,
    /// Number of leaves, rounded up to a power of two.
    width: usize,
    /// Per node, index of its `own` list in `lists` (or [`NONE`]).
    own: Vec<u32>,
    /// Per node, index of its `below` list in `lists` (or [`NONE`]).
    below: Vec<u32>,
    /// Sorted, disjoint, non-touching `[start, end)` address ranges.
    lists: Vec<Vec<(u64, u64)>>,
}

/// The distinct start times of `spans`, sorted.
fn distinct_starts(spans: &[Span]) -> Vec<u64> {
    let mut starts: Vec<u64> = spans.iter().map(|s| s.start).collect();
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// The leaf range `[l, r)` of span `s` among the distinct `starts`.
fn leaf(starts: &[u64], s: &Span) -> (u32, u32) {
    let l = starts.partition_point(|&t| t < s.start);
    let r = starts.partition_point(|&t| t < s.end);
    (l as u32, r as u32)
}

impl TimeTree {
    /// Indexes `spans`, none placed, in O(n log n); `Err` once `stop`
    /// cuts, checked every [`Stop::EVERY`] spans (at millions of spans,
    /// the leaves' binary searches take tenths of a second).
    pub fn new(spans: &[Span], stop: &Stop) -> Result<Self, Cut> {
        let starts = distinct_starts(spans);
        let mut leaves = Vec::with_capacity(spans.len());
        for chunk in spans.chunks(Stop::EVERY) {
            stop.check()?;
            leaves.extend(chunk.iter().map(|s| leaf(&starts, s)));
        }
        Ok(Self::with_leaves(&starts, leaves))
    }

    /// The tree over the distinct `starts`, with the leaf range of each span.
    fn with_leaves(starts: &[u64], leaves: Vec<(u32, u32)>) -> Self {
        let width = starts.len().max(1).next_power_of_two();
        TimeTree {
            leaves,
            width,
            own: vec![NONE; 2 * width],
            below: vec![NONE; 2 * width],
            lists: Vec::new(),
        }
    }

    /// Canonical nodes of span `b` (into `canonical`) and their ancestors
    /// (into `ancestors`, deduplicated); returns the two counts.
    fn nodes(
        &self,
        b: u32,
        canonical: &mut [u32; MAX_NODES],
        ancestors: &mut [u32; MAX_NODES],
    ) -> (usize, usize) {
        let (l, r) = self.leaves[b as usize];
        let (mut l, mut r) = (l as usize + self.width, r as usize + self.width);
        let mut n = 0;
        while l < r {
            if l & 1 == 1 {
                canonical[n] = l as u32;
                n += 1;
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                canonical[n] = r as u32;
                n += 1;
            }
            l >>= 1;
            r >>= 1;
        }
        // Ancestors: walk up from each canonical node until a node already
        // listed (paths merge towards the root).
        let mut m = 0;
        for &c in &canonical[..n] {
            let mut p = c >> 1;
            while p >= 1 && !ancestors[..m].contains(&p) {
                ancestors[m] = p;
                m += 1;
                p >>= 1;
            }
        }
        (n, m)
    }

    /// Records span `b` as occupying `[offset, offset + size)`.
    pub fn place(&mut self, b: u32, offset: u64, size: u64) {
        let mut canonical = [0u32; MAX_NODES];
        let mut ancestors = [0u32; MAX_NODES];
        let (n, m) = self.nodes(b, &mut canonical, &mut ancestors);
        let range = (offset, offset + size);
        for &c in &canonical[..n] {
            let list = self.list(c, false);
            insert(&mut self.lists[list], range);
            let list = self.list(c, true);
            insert(&mut self.lists[list], range);
        }
        for &a in &ancestors[..m] {
            let list = self.list(a, true);
            insert(&mut self.lists[list], range);
        }
    }

    /// The list of `node` (`below` or `own`), allocated on first use.
    fn list(&mut self, node: u32, below: bool) -> usize {
        let slot = if below {
            &mut self.below[node as usize]
        } else {
            &mut self.own[node as usize]
        };
        if *slot == NONE {
            *slot = self.lists.len() as u32;
            self.lists.push(Vec::new());
        }
        *slot as usize
    }

    /// The lowest offset, a multiple of `alignment` and at least `floor`,
    /// where span `b`'s `size` bytes avoid every placed span alive at the
    /// same time (first-fit).
    pub fn first_fit(&self, b: u32, size: u64, alignment: u64, floor: u64) -> u64 {
        let mut canonical = [0u32; MAX_NODES];
        let mut ancestors = [0u32; MAX_NODES];
        let (n, m) = self.nodes(b, &mut canonical, &mut ancestors);
        // The lists to respect, as indices into `lists`.
        let mut lists = [0u32; 2 * MAX_NODES];
        let mut k = 0;
        for &c in &canonical[..n] {
            if self.below[c as usize] != NONE {
                lists[k] = self.below[c as usize];
                k += 1;
            }
        }
        for &a in &ancestors[..m] {
            if self.own[a as usize] != NONE {
                lists[k] = self.own[a as usize];
                k += 1;
            }
        }
        let mut candidate = align_up(floor, alignment);
        // Every pass either moves the candidate above a conflicting range or
        // confirms it against all lists.
        loop {
            let mut moved = false;
            for &list in &lists[..k] {
                let list = &self.lists[list as usize];
                let i = list.partition_point(|r| r.1 <= candidate);
                if let Some(&(start, end)) = list.get(i) {
                    if start < candidate.saturating_add(size) {
                        candidate = align_up(end, alignment);
                        moved = true;
                    }
                }
            }
            if !moved {
                return candidate;
            }
        }
    }
}

/// Inserts `range` into a sorted list of disjoint, non-touching ranges,
/// merging it with the ranges it overlaps or touches.
fn insert(list: &mut Vec<(u64, u64)>, range: (u64, u64)) {
    let (mut start, mut end) = range;
    let i = list.partition_point(|r| r.1 < start);
    let mut j = i;
    while j < list.len() && list[j].0 <= end {
        start = start.min(list[j].0);
        end = end.max(list[j].1);
        j += 1;
    }
    if i == j {
        list.insert(i, (start, end));
    } else {
        list[i] = (start, end);
        list.drain(i + 1..j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::fit::first_fit_from;
    use proptest::prelude::*;

    #[test]
    fn insert_coalesces_touching_and_overlapping_ranges() {
        let mut list = Vec::new();
        insert(&mut list, (10, 20));
        insert(&mut list, (30, 40));
        insert(&mut list, (0, 5));
        assert_eq!(list, vec![(0, 5), (10, 20), (30, 40)]);
        insert(&mut list, (20, 30));
        assert_eq!(list, vec![(0, 5), (10, 40)]);
        insert(&mut list, (3, 12));
        assert_eq!(list, vec![(0, 40)]);
    }

    /// Uncut, every span's leaves; cut at any look, none.
    #[test]
    fn a_build_cut_at_any_poll_gives_up() {
        let spans: Vec<Span> = (0..3 * Stop::EVERY as u64)
            .map(|i| Span {
                start: i % 1000,
                end: i % 1000 + 1 + i % 7,
                size: 1 + i % 5,
            })
            .collect();
        let whole = TimeTree::new(&spans, &Stop::never()).unwrap();
        assert_eq!(whole.width, 1024);
        let starts = distinct_starts(&spans);
        assert_eq!(whole.leaves.len(), spans.len());
        assert_eq!(whole.leaves[7], leaf(&starts, &spans[7]));
        for cut in 0..3 {
            let stop = Stop::after_looks(cut);
            assert!(TimeTree::new(&spans, &stop).is_err(), "cut {cut}");
        }
    }

    proptest! {
        /// Placing random spans in random order at their first-fit offset
        /// gives the same offsets as the plain sorted-conflicts first-fit.
        #[test]
        fn first_fit_matches_the_sorted_conflicts_scan(
            raw in prop::collection::vec((0u64..40, 1u64..15, 1u64..20, 0u32..3), 1..60)
        ) {
            let spans: Vec<Span> = raw.iter().map(|&(s, l, size, _)| Span { start: s, end: s + l, size }).collect();
            let aligns: Vec<u64> = raw.iter().map(|r| 1u64 << r.3).collect();
            let mut tree = TimeTree::new(&spans, &Stop::never()).unwrap();
            let mut offsets: Vec<Option<u64>> = vec![None; spans.len()];
            for (b, span) in spans.iter().enumerate() {
                let mut occupied: Vec<(u64, u64)> = spans.iter().zip(&offsets)
                    .filter(|(o, off)| off.is_some() && o.start < span.end && span.start < o.end)
                    .map(|(o, off)| (off.unwrap(), off.unwrap() + o.size))
                    .collect();
                occupied.sort_unstable();
                let expected = first_fit_from(&occupied, 0, span.size, aligns[b]);
                let got = tree.first_fit(b as u32, span.size, aligns[b], 0);
                prop_assert_eq!(got, expected);
                tree.place(b as u32, got, span.size);
                offsets[b] = Some(got);
            }
        }
    }
}
