//! The search state over one time group (TelaMalloc §5.1, Figure 7): the
//! placements made, the floors propagation raised, the decision points of
//! the current path, and the moves between them: place, undo, rewind,
//! blame and the major backtrack (§5.4).

use super::holes::Holes;
use super::learned::{self, Event, Forest};
use super::model::Model;
use super::TelaOptions;
use crate::solver::Stop;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub(super) const UNPLACED: u64 = u64::MAX;

/// A decision point (§5.1, Figure 7): the state after `level` placements.
#[derive(Clone, Debug, Default)]
pub(super) struct Point {
    /// Buffers to try here, in order.
    pub(super) candidates: Vec<u32>,
    /// Index of the next candidate to try.
    pub(super) next: usize,
    /// Decision levels (below this one) of the placements blamed for the
    /// failures seen here, sorted (§5.4).
    pub(super) conflicts: Vec<u32>,
    /// Length of the undo log before this point's current placement.
    pub(super) undo_mark: usize,
    /// Major backtracks that landed here since it was opened.
    pub(super) jumps: u32,
    /// The run's backtrack count when it was opened.
    pub(super) opened: u64,
    /// Whether every candidate tried here failed for a sound reason: a
    /// failed propagation, or a subtree exhausted with sound conflicts
    /// (not abandoned, not left by a learned jump). With the hole rule's
    /// complete explanations, an exhausted proven point has no plan.
    pub(super) proven: bool,
}

/// The search state over one [`Model`].
pub(super) struct State<'m> {
    pub(super) m: &'m Model,
    pub(super) capacity: u64,
    pub(super) options: &'m TelaOptions,
    pub(super) deadline: &'m Stop,
    /// The step count at which this run stops.
    pub(super) run_limit: u64,
    /// Whether this run picks candidates phase by phase (§5.3).
    pub(super) use_phases: bool,
    /// Runs started before this one (restarts).
    pub(super) run: u64,
    /// Source of the restart noise.
    pub(super) rng: ChaCha8Rng,
    /// Offset of each buffer, or UNPLACED.
    pub(super) offset: Vec<u64>,
    /// Decision level at which each placed buffer was placed.
    pub(super) level: Vec<u32>,
    /// Lowest offset at which each unplaced buffer fits among the placed
    /// and fixed buffers (the propagated lower bound of its position).
    pub(super) floor: Vec<u64>,
    /// Placed buffers in order: `trail[l]` was placed at level `l`.
    pub(super) trail: Vec<u32>,
    /// Undo log of floors: (buffer, previous floor).
    pub(super) undo: Vec<(u32, u64)>,
    /// Unplaced buffers in each phase.
    pub(super) phase_unplaced: Vec<u32>,
    /// Decision points of the current path; `points[trail.len()]` is open.
    pub(super) points: Vec<Point>,
    /// Backtrack points on the path (§5.4): (level, backtrack count when it
    /// became one), by increasing level, each level once. The first one
    /// governs abandonment ([`State::backtracked`]).
    pub(super) flagged: Vec<(u32, u64)>,
    /// Backtracks in this run.
    pub(super) backtracks: u64,
    /// Whether a subtree was abandoned in this run.
    pub(super) abandoned: bool,
    /// Whether the deadline cut the last propagation short (its failure
    /// then proves nothing).
    pub(super) timed_out: bool,
    /// The unplaced buffers whose floors, raised by the last placement,
    /// made its propagation fail (see [`TelaOptions::displaced_first`]).
    pub(super) displaced: Vec<u32>,
    /// Scratch: address ranges, dirty sections, conflict levels.
    pub(super) ranges: Vec<(u64, u64)>,
    pub(super) stamp: Vec<u32>,
    pub(super) epoch: u32,
    pub(super) dirty: Vec<u32>,
    pub(super) conflict: Vec<u32>,
    pub(super) merged: Vec<u32>,
    /// Scratch: ranges that block a slot, with their level.
    pub(super) blockers: Vec<(u64, u64, u32)>,
    /// Scratch: (floor, size) of the unplaced buffers of a section, and the
    /// address ranges taken there.
    pub(super) pending: Vec<(u64, u64)>,
    pub(super) occupied: Vec<(u64, u64)>,
    /// Scratch: the bottom row, and its groups ranked by each heuristic.
    pub(super) row: Vec<u32>,
    pub(super) ranked_row: Vec<Vec<u32>>,
    /// The skyline of the hole rule, when
    /// [`TelaOptions::skyline_holes`](super::TelaOptions::skyline_holes)
    /// is on and the capacity leaves no slack (`holes.rs`); its candidates
    /// then replace the bottom row's, and no candidate from elsewhere (a
    /// displaced buffer, a failed point's) joins a point's list: placed
    /// outside the hole, it would leave a gap under the skyline.
    pub(super) holes: Option<Holes>,
    /// The forest of the learned backtracking, when it is on and the
    /// shipped model parses ([`TelaOptions::learned_backtracking`]).
    pub(super) forest: Option<&'static Forest>,
    /// The major backtracks, when recorded (for the oracle's labels).
    pub(super) events: Option<Vec<Event>>,
    /// How often each buffer's placement was in the conflict set of a
    /// major backtrack (kept with learned backtracking or recording only).
    pub(super) in_conflicts: Vec<u32>,
    /// Scratch: the candidate targets of a major backtrack.
    pub(super) targets: Vec<u32>,
    /// Scratch of [`learned::holes_level`]: per section, the highest end
    /// and the sizes placed.
    pub(super) sky: Vec<u64>,
    pub(super) covered: Vec<u64>,
    /// Scratch: the features of the candidate targets.
    pub(super) target_features: Vec<[f64; learned::FEATURES]>,
    /// Test-only, when recording: may replace the target of a major
    /// backtrack (the oracle's, for the labels' mix of TelaMalloc §6.5).
    #[cfg(test)]
    pub(super) steer: Option<Steer<'m>>,
    /// Test-only: with `steer`, the major backtracks are not kept (the
    /// oracle-guided runs of [`super::labels`] steer every one).
    #[cfg(test)]
    pub(super) steer_only: bool,
}

/// The oracle's say at a recorded major backtrack: a target, or `None`
/// for the default one.
#[cfg(test)]
pub(super) type Steer<'m> = Box<dyn FnMut(&Event) -> Option<u32> + 'm>;

impl<'m> State<'m> {
    pub(super) fn new(
        m: &'m Model,
        capacity: u64,
        options: &'m TelaOptions,
        deadline: &'m Stop,
        seed: u64,
    ) -> Self {
        let n = m.len();
        let mut phase_unplaced = vec![0u32; m.phase_count()];
        for &p in &m.phase {
            phase_unplaced[p as usize] += 1;
        }
        State {
            m,
            capacity,
            options,
            deadline,
            run_limit: 0,
            use_phases: true,
            run: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            offset: vec![UNPLACED; n],
            level: vec![0; n],
            floor: vec![0; n],
            trail: Vec::with_capacity(n),
            undo: Vec::new(),
            phase_unplaced,
            points: vec![Point::default(); n + 1],
            flagged: Vec::new(),
            backtracks: 0,
            abandoned: false,
            timed_out: false,
            displaced: Vec::new(),
            ranges: Vec::new(),
            stamp: vec![0; m.alive.rows()],
            epoch: 0,
            dirty: Vec::new(),
            conflict: Vec::new(),
            merged: Vec::new(),
            blockers: Vec::new(),
            pending: Vec::new(),
            occupied: Vec::new(),
            row: Vec::new(),
            ranked_row: Vec::new(),
            holes: if options.skyline_holes {
                Holes::new(m, capacity)
            } else {
                None
            },
            forest: if options.learned_backtracking {
                learned::shipped()
            } else {
                None
            },
            events: None,
            in_conflicts: vec![0; n],
            targets: Vec::new(),
            sky: Vec::new(),
            covered: Vec::new(),
            target_features: Vec::new(),
            #[cfg(test)]
            steer: None,
            #[cfg(test)]
            steer_only: false,
        }
    }

    /// Places `b` at its floor, the lowest valid offset (TelaMalloc §5.2).
    pub(super) fn place(&mut self, b: usize) {
        self.place_at(b, self.floor[b]);
    }

    /// Places `b` at `offset` (at or above its floor, clear of the placed
    /// and fixed buffers).
    pub(super) fn place_at(&mut self, b: usize, offset: u64) {
        self.offset[b] = offset;
        self.level[b] = self.trail.len() as u32;
        self.trail.push(b as u32);
        self.phase_unplaced[self.m.phase[b] as usize] -= 1;
        if let Some(holes) = &mut self.holes {
            holes.raise(b, self.m.span[b], self.m.size[b], true);
        }
    }

    /// Undoes the last placement and the floors it raised.
    pub(super) fn unplace_last(&mut self) {
        if let Some(b) = self.trail.pop() {
            let b = b as usize;
            self.offset[b] = UNPLACED;
            self.phase_unplaced[self.m.phase[b] as usize] += 1;
            if let Some(holes) = &mut self.holes {
                holes.raise(b, self.m.span[b], self.m.size[b], false);
            }
            let mark = self.points[self.trail.len()].undo_mark;
            while self.undo.len() > mark {
                if let Some((j, f)) = self.undo.pop() {
                    self.floor[j as usize] = f;
                }
            }
        }
    }

    /// After the candidate of the point at `depth` failed and was undone:
    /// the buffers it displaced ([`State::displaced`]), unplaced and not
    /// yet listed there, become the point's next candidates
    /// ([`TelaOptions::displaced_first`]). The list stays within
    /// `max_candidates` (the displaced buffers push the last listed ones
    /// out), unless the tried and displaced ones alone exceed it: unbounded
    /// lists widened every point of long failing paths.
    pub(super) fn try_displaced_next(&mut self, depth: usize) {
        if self.holes.is_some() {
            return;
        }
        let limit = self.options.max_candidates.max(1);
        let point = &mut self.points[depth];
        let mut at = point.next;
        for &j in &self.displaced {
            if self.offset[j as usize] == UNPLACED && !point.candidates.contains(&j) {
                point.candidates.insert(at, j);
                at += 1;
            }
        }
        point.candidates.truncate(limit.max(at));
    }

    /// Undoes placements until only `level` remain (the decision point at
    /// `level` is open again, with its remaining candidates).
    pub(super) fn rewind(&mut self, level: usize) {
        while self.trail.len() > level {
            self.unplace_last();
        }
    }

    /// Merges the conflict scratch (levels of blamed placements) into the
    /// conflicts of the point at `depth`, keeping levels below it.
    pub(super) fn blame(&mut self, depth: usize) {
        self.conflict.retain(|&l| (l as usize) < depth);
        self.conflict.sort_unstable();
        self.conflict.dedup();
        let conflicts = &mut self.points[depth].conflicts;
        self.merged.clear();
        let (mut a, mut b) = (0, 0);
        while a < conflicts.len() || b < self.conflict.len() {
            let x = if b == self.conflict.len()
                || (a < conflicts.len() && conflicts[a] <= self.conflict[b])
            {
                a += 1;
                conflicts[a - 1]
            } else {
                b += 1;
                self.conflict[b - 1]
            };
            if self.merged.last() != Some(&x) {
                self.merged.push(x);
            }
        }
        std::mem::swap(conflicts, &mut self.merged);
    }

    /// A major backtrack from the exhausted point at `depth` to the point
    /// at `target` (TelaMalloc §5.4): the placement made there is undone,
    /// the failed point's candidates go first among its remaining ones
    /// (bounded), and its conflicts are inherited.
    pub(super) fn jump(&mut self, depth: usize, target: usize) {
        self.rewind(target);
        self.conflict.clear();
        self.conflict
            .extend_from_slice(&self.points[depth].conflicts);
        self.blame(target);
        let limit = self.options.max_candidates.max(1);
        let (upper, lower) = self.points.split_at_mut(depth);
        // With the hole rule, only the target's own moves.
        let failed: &[u32] = if self.holes.is_some() {
            &[]
        } else {
            &lower[0].candidates
        };
        let point = &mut upper[target];
        // Tried candidates stay (never retried: the state here is the same),
        // then the failed point's candidates, then the remaining ones,
        // deduplicated, at most `limit` in all.
        let tried = point.next;
        self.merged.clear();
        let limit = if self.holes.is_some() {
            usize::MAX
        } else {
            limit
        };
        for &b in failed.iter().chain(&point.candidates[tried..]) {
            if tried + self.merged.len() < limit
                && self.offset[b as usize] == UNPLACED
                && !point.candidates[..tried].contains(&b)
                && !self.merged.contains(&b)
            {
                self.merged.push(b);
            }
        }
        point.candidates.truncate(tried);
        point.candidates.extend_from_slice(&self.merged);
    }

    /// Flags `level`, a learned target above the one just taken, as a
    /// backtrack point with a fresh count (ours;
    /// [`TelaOptions::learned_jump`](super::TelaOptions::learned_jump) off):
    /// when it is the shallowest, `limit` more backtracks below it abandon
    /// the path back to it. A level already flagged keeps its count.
    pub(super) fn flag_learned(&mut self, level: usize) {
        let at = self.flagged.partition_point(|&(l, _)| (l as usize) < level);
        if self
            .flagged
            .get(at)
            .is_none_or(|&(l, _)| l as usize != level)
        {
            self.flagged.insert(at, (level as u32, self.backtracks));
        }
    }

    /// Counts a backtrack; when the shallowest backtrack point's subtree
    /// has seen more than `limit` of them since it was flagged, abandons its
    /// current placement (TelaMalloc §5.4). Without learned flags, points
    /// deeper on the path were flagged later, so the shallowest one has
    /// seen the most; a learned flag ([`State::flag_learned`]) restarts the
    /// count at its level.
    pub(super) fn backtracked(&mut self, limit: u64) {
        self.backtracks += 1;
        // The hole rule's search remembers failed states instead: it is
        // never abandoned.
        if self.holes.is_some() {
            return;
        }
        let Some(&(level, since)) = self.flagged.first() else {
            return;
        };
        if self.backtracks - since <= limit {
            return;
        }
        let level = level as usize;
        self.abandoned = true;
        if self.trail.len() > level {
            self.rewind(level);
        }
        self.points[level].proven = false;
        // Nothing specific is to blame: fall back to the previous level.
        if level > 0 {
            self.conflict.clear();
            self.conflict.push(level as u32 - 1);
            self.blame(level);
        }
        self.flagged.clear();
        self.flagged.push((level as u32, self.backtracks));
    }
}
