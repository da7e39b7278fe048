//! Independent time groups: split the buffers into groups that share no
//! instant (MiniMalloc §7, "temporal decomposition"; TelaMalloc §5.3: "time
//! steps that have no overlap ... subproblems that can be solved
//! independently"), solve each, scatter the offsets back. The one copy of
//! this pattern, for every solver that uses it.

use rayon::prelude::*;

use crate::buffer::{Buffer, BufferIdx};
use crate::geometry::csr::Csr;
use crate::geometry::sweep::time_groups;
use crate::stop::{Cut, Stop};

/// The buffers of each independent time group: row `g` of `members` is
/// group `g`, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeGroups {
    /// Invariant: every buffer in exactly one row, rows in buffer order, no
    /// row empty.
    members: Csr<BufferIdx>,
}

impl TimeGroups {
    /// The independent groups of `buffers`, consecutive ones merged until a
    /// group has at least `min_group` buffers (groups in time order); `Err`
    /// once `stop` cuts.
    pub fn new(buffers: &[Buffer], min_group: usize, stop: &Stop) -> Result<Self, Cut> {
        let (group_of, count) = time_groups(buffers, min_group, stop)?;
        // A counting sort by group keeps buffer order within each group
        // (it cannot overflow below `u32::MAX` buffers).
        Ok(match Csr::by_key(&group_of, count) {
            Some(members) => TimeGroups {
                members: members.map(|&i| BufferIdx::new(i as usize)),
            },
            None => Self::single(buffers.len()),
        })
    }

    /// All `n` buffers in one group (none when `n` is 0): decomposition
    /// switched off. `n` is below `u32::MAX`, as [`crate::problem::Problem`]
    /// guarantees.
    pub fn single(n: usize) -> Self {
        let mut members = Csr::new();
        if n > 0 {
            // Cannot fail below u32::MAX buffers.
            let _ = members.push_row((0..n).map(BufferIdx::new));
        }
        TimeGroups { members }
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.members.rows()
    }

    /// Whether there is no group (no buffer).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffers of group `g`, in buffer order.
    pub fn members(&self, g: usize) -> &[BufferIdx] {
        self.members.row(g)
    }

    /// The groups in time order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[BufferIdx]> + '_ {
        (0..self.len()).map(|g| self.members(g))
    }

    /// One plan's offsets from each group's local offsets (in the order of
    /// [`members`](Self::members)).
    pub fn scatter(&self, local: impl IntoIterator<Item = Vec<u64>>) -> Vec<u64> {
        let mut offsets = vec![0u64; self.members.values().len()];
        for (members, local) in self.iter().zip(local) {
            for (b, o) in members.iter().zip(local) {
                offsets[b.index()] = o;
            }
        }
        offsets
    }

    /// Solves every group with `solve` (in parallel) and scatters the
    /// offsets; `None` as soon as one group's solve gives `None`.
    pub fn solve_each(
        &self,
        solve: impl Fn(&[BufferIdx]) -> Option<Vec<u64>> + Sync,
    ) -> Option<Vec<u64>> {
        let groups: Vec<&[BufferIdx]> = self.iter().collect();
        let local: Vec<Vec<u64>> = groups.par_iter().map(|m| solve(m)).collect::<Option<_>>()?;
        Some(self.scatter(local))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffers(spans: &[(u64, u64)]) -> Vec<Buffer> {
        spans
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| Buffer::new(format!("b{i}"), s, e, 1))
            .collect()
    }

    fn groups_as_indices(g: &TimeGroups) -> Vec<Vec<usize>> {
        g.iter()
            .map(|m| m.iter().map(|b| b.index()).collect())
            .collect()
    }

    #[test]
    fn groups_are_independent_in_time_and_keep_buffer_order() {
        // [0,2) [1,3) | [3,5) | [5,6) [5,7), with the rows shuffled.
        let b = buffers(&[(5, 7), (0, 2), (3, 5), (1, 3), (5, 6)]);
        let g = TimeGroups::new(&b, 1, &Stop::never()).unwrap();
        assert_eq!(groups_as_indices(&g), vec![vec![1, 3], vec![2], vec![0, 4]]);
        // Merged up to two buffers a group.
        let g = TimeGroups::new(&b, 2, &Stop::never()).unwrap();
        assert_eq!(groups_as_indices(&g), vec![vec![1, 3], vec![0, 2, 4]]);
        assert_eq!(
            groups_as_indices(&TimeGroups::single(3)),
            vec![vec![0, 1, 2]]
        );
        assert!(TimeGroups::new(&[], 1, &Stop::never()).unwrap().is_empty());
        assert!(TimeGroups::single(0).is_empty());
    }

    #[test]
    fn solve_each_scatters_local_offsets_back() {
        let b = buffers(&[(5, 7), (0, 2), (3, 5), (1, 3), (5, 6)]);
        let g = TimeGroups::new(&b, 1, &Stop::never()).unwrap();
        // Each group stacks its buffers: local offsets 0, 10, 20...
        let offsets = g
            .solve_each(|m| Some((0..m.len() as u64).map(|k| k * 10).collect()))
            .unwrap();
        assert_eq!(offsets, vec![0, 0, 0, 10, 10]);
        assert_eq!(g.solve_each(|m| (m.len() < 2).then(Vec::new)), None);
    }
}
