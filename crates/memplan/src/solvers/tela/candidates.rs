//! The candidates of a decision point (TelaMalloc §5.1, §5.3): the bottom
//! row ranked by the heuristics, or the paper's picks, with the restart
//! noise; at zero slack, the skyline holes' moves (`holes.rs`).

use super::holes::{moves, Read};
use super::state::{State, UNPLACED};
use crate::geometry::skyline::{flat_runs, Run};
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

impl State<'_> {
    /// Appends to `candidates` the moves of the hole with the fewest, or
    /// nothing when the state is a dead end: a flat run of the skyline
    /// cannot be covered, a hole has no move, or the state failed before.
    /// Returns what the choice read: the sections whose placements shaped
    /// the hole (or the failed run), which explain why no other move is
    /// needed (or none works). `None` without [`State::holes`].
    pub(super) fn pick_hole(&mut self, candidates: &mut Vec<u32>) -> Option<Read> {
        let mut holes = self.holes.take()?;
        let (m, capacity) = (self.m, self.capacity);
        let offset = &self.offset;
        let unplaced = |i: usize| offset[i] == UNPLACED;
        let sections = holes.height.len() as u32;
        flat_runs(
            &holes.height,
            0,
            sections,
            &mut holes.runs,
            &mut holes.stack,
        );
        // Runs whose window the last placement left alone passed at the
        // parent (the root checks every run).
        let changed = self.trail.last().map(|&b| m.span[b as usize]);
        let mut dead = holes.failed.contains(&holes.key).then_some(Read::Before);
        // The sections a run's check read: its window and the higher
        // sections around it.
        let read = |run: &Run| Read::Sections(run.ah.saturating_sub(1), (run.nh + 1).min(sections));
        for r in 0..holes.runs.len() {
            if dead.is_some() {
                break;
            }
            let run = holes.runs[r];
            let unchanged = changed.is_some_and(|(lo, hi)| run.nh < lo || run.ah > hi);
            if run.h < capacity && !unchanged && !holes.covered(m, unplaced, capacity, &run) {
                dead = Some(read(&run));
            }
        }
        // The hole with the fewest moves, then the lowest, then leftmost.
        let mut best: Option<(u32, u64, usize)> = None;
        for (r, run) in holes.runs.iter().enumerate() {
            if dead.is_some() || run.h >= capacity || !run.is_hole(0, sections) {
                continue;
            }
            let cap = best.map_or(u32::MAX, |(c, ..)| c);
            let count = moves(m, unplaced, capacity, run, cap, None);
            if count == 0 {
                dead = Some(read(run));
            } else if best.is_none_or(|(c, h, _)| (count, run.h) < (c, h)) {
                best = Some((count, run.h, r));
            }
        }
        let chosen = best
            .filter(|_| dead.is_none())
            .map(|(_, _, r)| holes.runs[r]);
        if let Some(hole) = chosen {
            moves(m, unplaced, capacity, &hole, u32::MAX, Some(candidates));
            if holes.size_first {
                candidates.sort_by_key(|&i| {
                    let i = i as usize;
                    (
                        std::cmp::Reverse(m.size[i]),
                        std::cmp::Reverse(m.span[i].1),
                        i,
                    )
                });
            }
            debug_assert!(candidates.iter().all(|&i| self.floor[i as usize] == hole.h));
        }
        self.holes = Some(holes);
        dead.or(chosen.as_ref().map(read))
    }

    /// Sets `self.conflict` to the levels of the placements alive in
    /// sections `[lo, hi)`: with the unplaced buffers, they make the
    /// skyline there, all that a failed check of a run there read.
    pub(super) fn explain_sections(&mut self, lo: u32, hi: u32) {
        self.conflict.clear();
        for (l, &b) in self.trail.iter().enumerate() {
            let (a, e) = self.m.span[b as usize];
            if a < hi && lo < e {
                self.conflict.push(l as u32);
            }
        }
    }
}
