//! The static data of one independent time group (TelaMalloc §5.3): sizes,
//! neighbours in time, time sections, the heuristics' rankings (§5.1) and
//! the contention phases (§5.3). Built once per solve, shared by every
//! capacity decided.

use super::phases::contention_phases;
use super::TelaOptions;
use crate::buffer::BufferIdx;
use crate::geometry::sweep::{
    alive_csr, overlap_csr, section_loads, section_spans, time_groups, MaxTree,
};
use crate::problem::{Buffer, Problem};

/// The independent time groups of a problem (§5.3: "time steps that have no
/// overlap ... subproblems that can be solved independently").
pub(super) struct Models {
    pub(super) models: Vec<Model>,
}

impl Models {
    /// The groups' models, or `None` when `stop` returns true first.
    pub(super) fn new(
        problem: &Problem,
        options: &TelaOptions,
        stop: &dyn Fn() -> bool,
    ) -> Option<Self> {
        // The greedy plan before may have used the whole budget.
        if stop() {
            return None;
        }
        let (group_of, count) = time_groups(problem.buffers(), 1);
        let mut members = vec![Vec::new(); count];
        for b in problem.indices() {
            members[group_of[b.index()] as usize].push(b);
        }
        let models = members
            .iter()
            .map(|m| {
                Model::new(
                    problem.buffers(),
                    m,
                    options.phases,
                    options.contention,
                    stop,
                )
            })
            .collect::<Option<_>>()?;
        Some(Models { models })
    }
}

/// Static data of one time group; its free buffers get local indices `0..n`.
pub(super) struct Model {
    /// Global index of each free buffer.
    pub(super) global: Vec<BufferIdx>,
    pub(super) size: Vec<u64>,
    pub(super) align: Vec<u64>,
    /// Time-section range `[lo, hi)` of each free buffer.
    pub(super) span: Vec<(u32, u32)>,
    /// Free buffers overlapping each free buffer in time (CSR).
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<u32>,
    /// Address ranges of the fixed buffers overlapping each free buffer in
    /// time, sorted (CSR).
    pub(super) fixed_start: Vec<u32>,
    pub(super) fixed: Vec<(u64, u64)>,
    /// Free buffers alive in each section (CSR).
    pub(super) alive_start: Vec<u32>,
    pub(super) alive: Vec<u32>,
    /// Address ranges of the fixed buffers alive in each section (CSR).
    pub(super) fixed_alive_start: Vec<u32>,
    pub(super) fixed_alive: Vec<(u64, u64)>,
    /// Whether the members alive in each section are a subset of those
    /// alive in no other section.
    pub(super) maximal: Vec<bool>,
    /// Phase of each free buffer; phases are numbered by decreasing
    /// contention (§5.3).
    pub(super) phase: Vec<u32>,
    /// Members of each phase (CSR by `phase_start`), sorted by each
    /// heuristic in turn (see [`Model::rankings`]).
    pub(super) phase_start: Vec<u32>,
    pub(super) ranked: Vec<Vec<u32>>,
    /// All free buffers sorted by each heuristic (runs without phases).
    pub(super) ranked_all: Vec<Vec<u32>>,
    /// Position of each free buffer in each list of `ranked_all`.
    pub(super) rank: Vec<Vec<u32>>,
}

impl Model {
    /// Builds the group of `members` (global indices, fixed ones included),
    /// or `None` when `stop` returns true first. O(n log n + pairs +
    /// sections + Σ ranges) time and memory; the clock is polled throughout.
    pub(super) fn new(
        buffers: &[Buffer],
        members: &[BufferIdx],
        phases: bool,
        contention: bool,
        stop: &dyn Fn() -> bool,
    ) -> Option<Self> {
        let (spans, section_count) = section_spans(members.iter().map(|b| &buffers[b.index()]));
        let free: Vec<usize> = (0..members.len())
            .filter(|&m| buffers[members[m].index()].fixed_offset.is_none())
            .collect();
        let fixed_members: Vec<usize> = (0..members.len())
            .filter(|&m| buffers[members[m].index()].fixed_offset.is_some())
            .collect();
        let buf = |m: usize| &buffers[members[m].index()];
        let range = |m: usize| {
            let b = buf(m);
            let o = b.fixed_offset.unwrap_or(0);
            (o, o + b.size)
        };
        let n = free.len();
        let span: Vec<(u32, u32)> = free.iter().map(|&m| spans[m]).collect();

        let (adj_start, adj) = overlap_csr(&span, stop)?;

        let mut fixed_start = Vec::with_capacity(n + 1);
        fixed_start.push(0u32);
        let mut fixed = Vec::new();
        for (k, &m) in free.iter().enumerate() {
            if k % 128 == 0 && stop() {
                return None;
            }
            let from = fixed.len();
            for &f in &fixed_members {
                if buf(f).overlaps_in_time(buf(m)) {
                    fixed.push(range(f));
                }
            }
            fixed[from..].sort_unstable();
            fixed_start.push(u32::try_from(fixed.len()).ok()?);
        }

        let (alive_start, alive) = alive_csr(&span, section_count, stop)?;
        let fixed_spans: Vec<(u32, u32)> = fixed_members.iter().map(|&f| spans[f]).collect();
        let (fixed_alive_start, fixed_alive_index) = alive_csr(&fixed_spans, section_count, stop)?;
        let fixed_alive = fixed_alive_index
            .iter()
            .map(|&k| range(fixed_members[k as usize]))
            .collect();

        // Maximal sections: a member starts where it starts and one ends
        // where it ends. Every other section's buffers are a subset of a
        // neighbour's.
        let mut starts = vec![false; section_count];
        let mut ends = vec![false; section_count];
        for &(lo, hi) in &spans {
            starts[lo as usize] = true;
            ends[hi as usize - 1] = true;
        }
        let maximal = (0..section_count).map(|s| starts[s] && ends[s]).collect();

        // Load of every member in each section, for the phases.
        let load = section_loads(
            members
                .iter()
                .zip(&spans)
                .map(|(b, &span)| (span, buffers[b.index()].size)),
            section_count,
        );
        if stop() {
            return None;
        }
        let phase = if phases {
            contention_phases(&load, &span)
        } else {
            vec![0; n]
        };
        let phase_count = phase.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
        let mut phase_lists: Vec<Vec<u32>> = vec![Vec::new(); phase_count];
        for (i, &p) in phase.iter().enumerate() {
            phase_lists[p as usize].push(i as u32);
        }
        let (phase_start, members_by_phase) = csr(phase_lists);
        let keys = Model::rankings(
            &free.iter().map(|&m| buf(m)).collect::<Vec<_>>(),
            &span,
            &load,
            contention,
        );
        let ranked_all: Vec<Vec<u32>> = keys
            .iter()
            .map(|key| {
                let mut all: Vec<u32> = (0..n as u32).collect();
                all.sort_unstable_by_key(|&i| (std::cmp::Reverse(key[i as usize]), i));
                all
            })
            .collect();
        let ranked: Vec<Vec<u32>> = keys
            .iter()
            .map(|key| {
                let mut list = members_by_phase.clone();
                for p in 0..phase_count {
                    let range = phase_start[p] as usize..phase_start[p + 1] as usize;
                    list[range].sort_unstable_by_key(|&i| (std::cmp::Reverse(key[i as usize]), i));
                }
                list
            })
            .collect();

        Some(Model {
            global: free.iter().map(|&m| members[m]).collect(),
            size: free.iter().map(|&m| buf(m).size).collect(),
            align: free.iter().map(|&m| buf(m).alignment).collect(),
            span,
            adj_start,
            adj,
            fixed_start,
            fixed,
            alive_start,
            alive,
            fixed_alive_start,
            fixed_alive,
            maximal,
            phase,
            phase_start,
            ranked,
            rank: ranked_all
                .iter()
                .map(|list| {
                    let mut rank = vec![0u32; n];
                    for (r, &j) in list.iter().enumerate() {
                        rank[j as usize] = r as u32;
                    }
                    rank
                })
                .collect(),
            ranked_all,
        })
    }

    /// The heuristics that rank candidates, as keys (larger first) of each
    /// free buffer, in the order they take turns: with `contention`, the
    /// §3.1 baseline's contention (the highest load over the buffer's
    /// lifetime), ties by lifetime then size (the first §5.1 heuristic;
    /// §3.1's own tie-break, size × lifetime², solves fewer benchmark
    /// instances); then the three of §5.1: the longest lifetime (ties by
    /// size), the largest size (ties by lifetime), the largest area.
    pub(super) fn rankings(
        free: &[&Buffer],
        span: &[(u32, u32)],
        load: &[u64],
        contention: bool,
    ) -> Vec<Vec<u128>> {
        let lifetime = |b: &Buffer| u128::from(b.lifetime());
        let size = |b: &Buffer| u128::from(b.size);
        let mut keys = Vec::new();
        if contention {
            // Rank by the tuple, then use the rank as the key.
            let loads = MaxTree::new(load);
            let tuples: Vec<(u64, u64, u64)> = (0..free.len())
                .map(|i| {
                    let (lo, hi) = span[i];
                    let peak = loads.max(lo as usize, hi as usize);
                    (peak, free[i].lifetime(), free[i].size)
                })
                .collect();
            let tuple = |i: usize| tuples[i];
            let mut order: Vec<usize> = (0..free.len()).collect();
            order.sort_unstable_by_key(|&i| (std::cmp::Reverse(tuple(i)), i));
            let mut key = vec![0u128; free.len()];
            for (rank, &i) in order.iter().enumerate() {
                key[i] = (free.len() - rank) as u128;
            }
            keys.push(key);
        }
        keys.push(free.iter().map(|b| (lifetime(b) << 64) | size(b)).collect());
        keys.push(free.iter().map(|b| (size(b) << 64) | lifetime(b)).collect());
        keys.push(free.iter().map(|b| size(b) * lifetime(b)).collect());
        keys
    }

    pub(super) fn len(&self) -> usize {
        self.size.len()
    }

    pub(super) fn phase_count(&self) -> usize {
        self.phase_start.len() - 1
    }

    #[inline]
    pub(super) fn neighbours(&self, i: usize) -> &[u32] {
        &self.adj[self.adj_start[i] as usize..self.adj_start[i + 1] as usize]
    }

    #[inline]
    pub(super) fn fixed_ranges(&self, i: usize) -> &[(u64, u64)] {
        &self.fixed[self.fixed_start[i] as usize..self.fixed_start[i + 1] as usize]
    }

    #[inline]
    pub(super) fn alive_in(&self, s: usize) -> &[u32] {
        &self.alive[self.alive_start[s] as usize..self.alive_start[s + 1] as usize]
    }

    #[inline]
    pub(super) fn fixed_alive_in(&self, s: usize) -> &[(u64, u64)] {
        &self.fixed_alive
            [self.fixed_alive_start[s] as usize..self.fixed_alive_start[s + 1] as usize]
    }
}

/// Flattens lists into CSR form: `(starts, items)`.
pub(super) fn csr<T>(lists: Vec<Vec<T>>) -> (Vec<u32>, Vec<T>) {
    let mut start = Vec::with_capacity(lists.len() + 1);
    start.push(0u32);
    let mut items = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    for list in lists {
        items.extend(list);
        start.push(items.len() as u32);
    }
    (start, items)
}
