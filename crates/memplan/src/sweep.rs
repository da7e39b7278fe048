//! Event traversal (idealloc §5.3): sort allocation and deallocation events by
//! time, deallocations first at equal times, and sweep once.

use rayon::prelude::*;

use crate::problem::Buffer;

/// The max load L: the most bytes alive at one instant. With half-open
/// lifetimes, a buffer ending at `t` and one starting at `t` never coexist.
pub fn max_load(buffers: &[Buffer]) -> u64 {
    // Allocation and free events as two sorted lists, merged with frees
    // first at equal times.
    let sorted = |key: fn(&Buffer) -> u64| {
        let mut v: Vec<(u64, u64)> = buffers.iter().map(|b| (key(b), b.size)).collect();
        v.par_sort_unstable();
        v
    };
    let (starts, ends) = rayon::join(|| sorted(|b| b.start), || sorted(|b| b.end));
    let (mut load, mut max, mut j) = (0u64, 0u64, 0usize);
    for &(t, size) in &starts {
        while j < ends.len() && ends[j].0 <= t {
            load -= ends[j].1;
            j += 1;
        }
        // The live sum is at most the sum of all sizes, which
        // `Problem::new` keeps below 2^64.
        load += size;
        max = max.max(load);
    }
    max
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
    /// Builds the profile in O(n log n).
    pub fn new(buffers: &[Buffer]) -> Self {
        let mut times: Vec<u64> = Vec::with_capacity(buffers.len() * 2);
        for b in buffers {
            times.push(b.start);
            times.push(b.end);
        }
        times.par_sort_unstable();
        times.dedup();
        let mut delta = vec![0i128; times.len()];
        for b in buffers {
            delta[segment_of(&times, b.start)] += i128::from(b.size);
            delta[segment_of(&times, b.end)] -= i128::from(b.size);
        }
        let mut loads = Vec::with_capacity(times.len().saturating_sub(1));
        let mut load: i128 = 0;
        for d in delta.iter().take(times.len().saturating_sub(1)) {
            load += d;
            // The sum of live sizes is at most the sum of all sizes, which
            // `Problem::new` keeps below 2^64.
            loads.push(u64::try_from(load).unwrap_or(u64::MAX));
        }
        LoadProfile { times, loads }
    }

    /// Index of the elementary segment starting at `t` (which must be one of
    /// the profile's times).
    #[inline]
    pub fn segment(&self, t: u64) -> usize {
        segment_of(&self.times, t)
    }

    /// The contention of each buffer: the highest load over its lifetime
    /// (TelaMalloc §3.1). O(n log n) with a range-maximum segment tree.
    pub fn contention(&self, buffers: &[Buffer]) -> Vec<u64> {
        let tree = MaxTree::new(&self.loads);
        buffers
            .iter()
            .map(|b| tree.max(self.segment(b.start), self.segment(b.end)))
            .collect()
    }
}

/// Splits the buffers into groups that are independent in time (MiniMalloc
/// §7, temporal decomposition): no buffer of one group is alive at the same
/// time as a buffer of another, so each group can be placed on its own.
/// Consecutive independent parts are merged until a group has at least
/// `min_group` buffers. Returns the group of each buffer and the number of
/// groups; groups are numbered in time order.
pub fn time_groups(buffers: &[Buffer], min_group: usize) -> (Vec<u32>, usize) {
    let mut by_start: Vec<(u64, u64, u32)> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.start, b.end, i as u32))
        .collect();
    by_start.par_sort_unstable();
    let mut group_of = vec![0u32; buffers.len()];
    let mut group = 0u32;
    let mut size = 0usize;
    let mut reach = 0u64;
    for &(start, end, i) in &by_start {
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
    (group_of, groups)
}

/// The elementary time sections of a set of buffers (MiniMalloc §6.2): the
/// intervals between consecutive distinct start and end times. Returns the
/// section range `[lo, hi)` of each buffer, in the iterator's order, and the
/// number of sections. Two buffers overlap in time exactly when their
/// section ranges intersect.
pub fn section_spans<'a>(
    buffers: impl Iterator<Item = &'a Buffer> + Clone,
) -> (Vec<(u32, u32)>, usize) {
    let mut times: Vec<u64> = buffers.clone().flat_map(|b| [b.start, b.end]).collect();
    times.sort_unstable();
    times.dedup();
    let spans = buffers
        .map(|b| {
            (
                segment_of(&times, b.start) as u32,
                segment_of(&times, b.end) as u32,
            )
        })
        .collect();
    (spans, times.len().saturating_sub(1))
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

impl MaxTree {
    pub(crate) fn new(values: &[u64]) -> Self {
        let half = values.len().next_power_of_two().max(1);
        let mut nodes = vec![0u64; 2 * half];
        nodes[half..half + values.len()].copy_from_slice(values);
        for i in (1..half).rev() {
            nodes[i] = nodes[2 * i].max(nodes[2 * i + 1]);
        }
        MaxTree { half, nodes }
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

    proptest::proptest! {
        #[test]
        fn max_load_agrees_with_profile_and_brute_force(
            spec in proptest::collection::vec((0u64..30, 1u64..10, 1u64..100), 0..40)
        ) {
            let b: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size))| Buffer::new(i.to_string(), s, s + len, size))
                .collect();
            let brute = (0..40u64)
                .map(|t| b.iter().filter(|x| x.start <= t && t < x.end).map(|x| x.size).sum::<u64>())
                .max()
                .unwrap_or(0);
            proptest::prop_assert_eq!(max_load(&b), brute);
            let profile = LoadProfile::new(&b);
            proptest::prop_assert_eq!(profile.loads.iter().copied().max().unwrap_or(0), brute);
        }
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
    fn section_spans_cover_lifetimes() {
        let b = bufs(&[(0, 2, 1), (1, 5, 1), (5, 6, 1)]);
        // Times 0, 1, 2, 5, 6: sections [0,1) [1,2) [2,5) [5,6).
        assert_eq!(section_spans(b.iter()), (vec![(0, 2), (1, 3), (3, 4)], 4));
        assert_eq!(section_spans([].iter()), (vec![], 0));
    }

    #[test]
    fn contention_is_peak_load_over_lifetime() {
        let b = bufs(&[(0, 2, 5), (1, 3, 7), (3, 6, 1), (5, 6, 2)]);
        let p = LoadProfile::new(&b);
        assert_eq!(p.contention(&b), vec![12, 12, 3, 3]);
    }
}
