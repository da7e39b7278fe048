//! The candidates of a decision point (TelaMalloc §5.1, §5.3): the bottom
//! row ranked by the heuristics, or the paper's picks, with the restart
//! noise.

use super::holes::Read;
use super::state::{State, UNPLACED};
use rand::Rng;

impl State<'_> {
    /// Opens the decision point at `depth` and lists its candidates
    /// (TelaMalloc §5.1, §5.3), deduplicated, at most `max_candidates`.
    ///
    /// With `bottom_row`: the unplaced buffers whose floor is the lowest
    /// (the bottom row: where the skyline is lowest), those of the current
    /// phase (the phase of the last placed buffer) first, then those of the
    /// other phases by decreasing contention; within each phase the
    /// heuristics take turns: the best of each, then the second best of
    /// each, and so on.
    ///
    /// Without it, the paper's picks: the best buffer of each heuristic in
    /// the current phase (or the first phase with unplaced buffers), then
    /// in the next phase with unplaced buffers.
    ///
    /// In a run after the first, with probability `restart_noise` percent,
    /// the first candidate swaps places with another one.
    pub(super) fn open_point(&mut self, depth: usize) {
        let m = self.m;
        let limit = self.options.max_candidates.max(1);
        let mut candidates = std::mem::take(&mut self.points[depth].candidates);
        candidates.clear();
        let phases = if self.use_phases { m.phase_count() } else { 1 };
        let in_phase = |p: usize| {
            if self.use_phases {
                m.phases.range(p)
            } else {
                0..m.len()
            }
        };
        let lists = |range: std::ops::Range<usize>| -> Vec<&[u32]> {
            let all = if self.use_phases {
                &m.ranked
            } else {
                &m.ranked_all
            };
            all.iter().map(|list| &list[range.clone()]).collect()
        };
        let last_phase = self
            .trail
            .last()
            .filter(|_| self.use_phases)
            .map(|&b| m.phase[b as usize] as usize);
        let mut read = None;
        if self.holes.is_some() {
            read = self.pick_hole(&mut candidates);
        } else if self.options.bottom_row {
            self.pick_row(last_phase, limit, &mut candidates);
        } else {
            let open = |p: usize| !self.use_phases || self.phase_unplaced[p] > 0;
            let current = last_phase
                .filter(|&p| open(p))
                .or_else(|| (0..phases).find(|&p| open(p)));
            let other = (0..phases).find(|&p| open(p) && Some(p) != current);
            for p in [current, other].into_iter().flatten() {
                self.pick(&lists(in_phase(p)), limit, &mut candidates);
            }
        }
        if self.run > 0
            && candidates.len() > 1
            && self.rng.gen_ratio(self.options.restart_noise.min(100), 100)
        {
            let k = self.rng.gen_range(1..candidates.len());
            candidates.swap(0, k);
        }
        let point = &mut self.points[depth];
        point.candidates = candidates;
        point.next = 0;
        point.conflicts.clear();
        point.undo_mark = self.undo.len();
        point.jumps = 0;
        point.opened = self.backtracks;
        point.proven = true;
        // With the hole rule, the point's first conflicts: the placements
        // its choice read, or (a state that failed before) the last one.
        match read {
            Some(Read::Sections(lo, hi)) => self.explain_sections(lo, hi),
            Some(Read::Before) => {
                self.conflict.clear();
                self.conflict.extend(depth.checked_sub(1).map(|l| l as u32));
            }
            None => return,
        }
        self.blame(depth);
    }

    /// Appends to `candidates` (up to `limit`) the bottom row: the unplaced
    /// buffers whose floor is the lowest, those of `last_phase` first, then
    /// by phase; within a phase, the heuristics' rankings take turns.
    pub(super) fn pick_row(
        &mut self,
        last_phase: Option<usize>,
        limit: usize,
        candidates: &mut Vec<u32>,
    ) {
        let m = self.m;
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        let mut low = u64::MAX;
        for j in 0..m.len() {
            if self.offset[j] != UNPLACED {
                continue;
            }
            let f = self.floor[j];
            if f < low {
                low = f;
                row.clear();
            }
            if f == low {
                row.push(j as u32);
            }
        }
        if self.options.tight_sections {
            self.cut_to_tight_start(&mut row);
        }
        if self.use_phases {
            let phase = |j: u32| m.phase[j as usize] as usize;
            row.sort_by_key(|&j| (Some(phase(j)) != last_phase, phase(j)));
        }
        let mut ranked = std::mem::take(&mut self.ranked_row);
        let mut start = 0;
        while start < row.len() && candidates.len() < limit {
            let mut end = start + 1;
            while end < row.len()
                && (!self.use_phases || m.phase[row[end] as usize] == m.phase[row[start] as usize])
            {
                end += 1;
            }
            let group = &row[start..end];
            ranked.resize_with(m.rank.len(), Vec::new);
            for (list, rank) in ranked.iter_mut().zip(&m.rank) {
                list.clear();
                list.extend_from_slice(group);
                list.sort_unstable_by_key(|&j| rank[j as usize]);
            }
            'turns: for r in 0..group.len() {
                for list in &ranked {
                    if candidates.len() >= limit {
                        break 'turns;
                    }
                    if !candidates.contains(&list[r]) {
                        candidates.push(list[r]);
                    }
                }
            }
            start = end;
        }
        self.row = row;
        self.ranked_row = ranked;
    }

    /// [`TelaOptions::tight_sections`](super::TelaOptions::tight_sections):
    /// when the earliest section where a buffer of the bottom `row` (all at
    /// the lowest floor) starts has no slack, or at most
    /// [`TelaOptions::tight_slack`](super::TelaOptions::tight_slack)
    /// percent of the capacity, cuts the row to the buffers that start
    /// there. Zero-size buffers cover nothing and are ignored.
    pub(super) fn cut_to_tight_start(&self, row: &mut Vec<u32>) {
        let m = self.m;
        let sized = |j: u32| m.size[j as usize] > 0;
        let Some(first) = row
            .iter()
            .filter(|&&j| sized(j))
            .map(|&j| m.span[j as usize].0)
            .min()
        else {
            return;
        };
        let slack = self.capacity.saturating_sub(m.section_load[first as usize]);
        if u128::from(slack) * 100
            <= u128::from(self.capacity) * u128::from(self.options.tight_slack)
        {
            row.retain(|&j| sized(j) && m.span[j as usize].0 == first);
        }
    }

    /// Appends to `candidates` (up to `limit`) the paper's picks in one
    /// pool, given as its members sorted by each heuristic: the first
    /// unplaced member of each list.
    pub(super) fn pick(&self, lists: &[&[u32]], limit: usize, candidates: &mut Vec<u32>) {
        for list in lists {
            if candidates.len() >= limit {
                return;
            }
            let first = list
                .iter()
                .copied()
                .find(|&b| self.offset[b as usize] == UNPLACED);
            if let Some(b) = first.filter(|b| !candidates.contains(b)) {
                candidates.push(b);
            }
        }
    }
}
