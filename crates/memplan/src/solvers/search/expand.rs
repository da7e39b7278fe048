//! The depth-first search itself: nodes, candidate gathering, dynamic
//! decomposition (§7) and section inference (§6.2).

use super::lockstep::next_meeting;
use super::state::{Candidate, Outcome, State, Undo, UNPLACED};
use crate::stop::Stop;

impl State<'_> {
    /// Searches the whole group.
    pub(super) fn search(&mut self) -> Outcome {
        self.node(0, self.g.section_count as u32, 0, 0, None)
    }

    /// Counts a step (a call of [`State::expand`]); `Some` when the
    /// search must stop here: the step limit is reached, the clock has
    /// passed, or (in lockstep) another search has decided.
    pub(super) fn count_step(&mut self) -> Option<Outcome> {
        if self.lockstep.is_none() && self.steps >= self.step_limit {
            return Some(Outcome::OutOfBudget);
        }
        self.steps += 1;
        // Steps cost O(buffers), costly units: a look every
        // `Stop::EVERY_COSTLY` steps of small groups, at every step of
        // groups larger than twice that (a step is then more work than an
        // interval's).
        let look = if self.g.size.len() > 2 * Stop::EVERY_COSTLY {
            self.deadline.check()
        } else {
            self.deadline.every_costly(self.steps as usize)
        };
        if look.is_err() {
            self.timed_out = true;
            return Some(Outcome::OutOfTime);
        }
        if let Some((lockstep, search)) = self.lockstep {
            if self.steps == self.meeting_at {
                self.meeting_at = next_meeting(self.steps);
                self.meetings += 1;
                if lockstep.meet(search, self.meetings) {
                    return Some(Outcome::Stopped);
                }
                // Every search reaches its limit at the same meeting.
                if self.steps >= self.step_limit {
                    return Some(Outcome::OutOfBudget);
                }
            }
        }
        None
    }

    /// Counts a node (as the reference counts them); `Some` at the node
    /// limit of a round-robin run.
    pub(super) fn count_node(&mut self) -> Option<Outcome> {
        if self.nodes >= self.node_limit {
            return Some(Outcome::OutOfBudget);
        }
        self.nodes += 1;
        None
    }

    /// One node of the search over the unplaced buffers whose lifetimes lie
    /// in sections `[lo, hi)`. Canonical extensions (§6.1) start at offset
    /// `top`, and at `top` itself only buffers of rank `min_rank` or more.
    /// `parent`: the parent's candidates (sorted) and the buffer it has
    /// just placed, from which this node's candidates are updated.
    pub(super) fn node(
        &mut self,
        lo: u32,
        hi: u32,
        top: u64,
        min_rank: u32,
        parent: Option<(&[Candidate], u32)>,
    ) -> Outcome {
        let level = self.level;
        if self.scratch.len() <= level {
            self.scratch.push(Vec::new());
        }
        let mut candidates = std::mem::take(&mut self.scratch[level]);
        candidates.clear();
        self.level += 1;
        let outcome = self.expand(lo, hi, top, min_rank, &mut candidates, parent);
        self.level -= 1;
        self.scratch[level] = candidates;
        outcome
    }

    /// The body of [`State::node`]: gathers the candidates, applies
    /// section inference (§6.2), splits independent parts (§7), then
    /// branches.
    pub(super) fn expand(
        &mut self,
        lo: u32,
        hi: u32,
        top: u64,
        min_rank: u32,
        candidates: &mut Vec<Candidate>,
        parent: Option<(&[Candidate], u32)>,
    ) -> Outcome {
        let opts = self.options;
        if let Some(stop) = self.count_step() {
            return stop;
        }
        // Lowest offsets of the unplaced buffers; h_min for dominance (§6.3).
        let Some(h_min) = self.gather(lo, hi, candidates, parent) else {
            return Outcome::Exhausted;
        };
        // The highest offset a child may take: placed at `o`, a buffer makes
        // `o` the floor of every section (canonical), so eq. 3 fails in the
        // child as soon as `o` plus a section's remaining sizes exceeds the
        // capacity (in the buffer's own sections its size moves from the
        // remaining sizes to the floor).
        let mut highest = u64::MAX;
        if opts.section_inference && !candidates.is_empty() {
            let feasible = self.sections_feasible(lo, hi, top, candidates, opts.dynamic_order);
            // On large groups one node can take a while: look at the clock.
            if self.g.size.len() > 2 * Stop::EVERY_COSTLY && self.deadline.is_cut() {
                self.timed_out = true;
                return Outcome::OutOfTime;
            }
            match feasible {
                None => return Outcome::Exhausted,
                Some(remaining) if opts.canonical => highest = self.capacity - remaining,
                Some(_) => {}
            }
        }
        if opts.decompose && !candidates.is_empty() {
            if let Some(parts) = self.split(lo, hi, candidates) {
                return self.solve_parts(&parts, top, min_rank, candidates);
            }
        }
        if let Some(stop) = self.count_node() {
            return stop;
        }
        if candidates.is_empty() {
            return Outcome::Found;
        }
        self.branch(lo, hi, (top, min_rank), candidates, (h_min, highest))
    }

    /// Completes the independent `parts` of a node one after the other
    /// (§7): each must be completed whatever the others do, so the first
    /// that fails fails the node. As in the reference, the parts' roots are
    /// the nodes counted.
    fn solve_parts(
        &mut self,
        parts: &[(u32, u32)],
        top: u64,
        min_rank: u32,
        candidates: &[Candidate],
    ) -> Outcome {
        for &(a, b) in parts {
            let outcome = if self.options.rerank_parts {
                // New ranks: the canonical sequence of the part starts
                // afresh (offset 0, every rank), as in the reference.
                let mark = self.undo.len();
                self.rerank(a, b, candidates);
                let outcome = self.node(a, b, 0, 0, None);
                if !matches!(outcome, Outcome::Found) {
                    self.rollback(mark);
                }
                outcome
            } else {
                self.node(a, b, top, min_rank, None)
            };
            match outcome {
                Outcome::Found => {}
                other => return other,
            }
        }
        Outcome::Found
    }

    /// Tries the node's `candidates` in turn: canonical ones (§6.1, after
    /// `(top, min_rank)`), undominated (§6.3, below `h_min`) and within
    /// eq. 3's reach (at most `highest`); each placed, searched below and
    /// undone.
    fn branch(
        &mut self,
        lo: u32,
        hi: u32,
        (top, min_rank): (u64, u32),
        candidates: &[Candidate],
        (h_min, highest): (u64, u64),
    ) -> Outcome {
        let opts = self.options;
        let undominated = |o: u64| !opts.dominance || o < h_min;
        for &(o, r, i) in candidates.iter() {
            // Canonical (§6.1), undominated (§6.3), within eq. 3's reach.
            if opts.canonical && (o < top || (o == top && r < min_rank)) {
                continue;
            }
            if !undominated(o) || o > highest {
                // Candidates come by offset (dynamic order): none further.
                if opts.dynamic_order {
                    break;
                }
                continue;
            }
            let mark = self.undo.len();
            let hat = self.place(i as usize, o);
            match self.node(lo, hi, o, r + 1, Some((candidates, i))) {
                Outcome::Found => return Outcome::Found,
                Outcome::Exhausted => {}
                stop => {
                    self.rollback(mark);
                    return stop;
                }
            }
            self.rollback(mark);
            // Hatless pruning: when placing the failed buffer raised no
            // unplaced buffer's floor, it can sit at this very offset in
            // every completion, which would then start with it; so no later
            // candidate can succeed.
            if opts.hatless && opts.dynamic_order && opts.canonical && !hat {
                break;
            }
        }
        self.backtracks += 1;
        Outcome::Exhausted
    }

    /// The unplaced buffers of `[lo, hi)` with their lowest offsets and
    /// ranks, in the dynamic order (§7: lowest offsets first, then the
    /// preorder) or, without it, in the preorder. Updated from the
    /// parent's list when given (only the buffers whose offset moved are
    /// sorted and merged in), else built and sorted. Returns h_min, the
    /// lowest height an unplaced buffer can reach (§6.3), or `None` when
    /// one no longer fits under the capacity.
    pub(super) fn gather(
        &mut self,
        lo: u32,
        hi: u32,
        candidates: &mut Vec<Candidate>,
        parent: Option<(&[Candidate], u32)>,
    ) -> Option<u64> {
        let key = |&(o, r, _): &Candidate| (u128::from(o) << 32) | u128::from(r);
        let mut h_min = u64::MAX;
        match parent {
            Some((list, placed)) if self.options.dynamic_order => {
                let mut moved = std::mem::take(&mut self.moved);
                moved.clear();
                let mut fits = true;
                for &(o, r, j) in list {
                    if j == placed {
                        continue;
                    }
                    let now = self.lowest_offset(j as usize);
                    let h = now + self.g.size[j as usize];
                    if h > self.capacity {
                        fits = false;
                        break;
                    }
                    h_min = h_min.min(h);
                    if now == o {
                        candidates.push((o, r, j));
                    } else {
                        moved.push((now, r, j));
                    }
                }
                if fits && !moved.is_empty() {
                    // Merge the moved ones in, from the back.
                    moved.sort_unstable_by_key(key);
                    let (mut a, mut b) = (candidates.len(), moved.len());
                    candidates.extend_from_slice(&moved);
                    let mut k = candidates.len();
                    while b > 0 {
                        k -= 1;
                        if a > 0 && key(&candidates[a - 1]) > key(&moved[b - 1]) {
                            candidates[k] = candidates[a - 1];
                            a -= 1;
                        } else {
                            candidates[k] = moved[b - 1];
                            b -= 1;
                        }
                    }
                }
                self.moved = moved;
                fits.then_some(h_min)
            }
            _ => {
                for i in 0..self.g.size.len() {
                    let start = self.g.sections[i].0;
                    if self.offset[i] != UNPLACED || start < lo || start >= hi {
                        continue;
                    }
                    let o = self.lowest_offset(i);
                    let h = o + self.g.size[i];
                    if h > self.capacity {
                        return None;
                    }
                    h_min = h_min.min(h);
                    candidates.push((o, self.rank[i], i as u32));
                }
                if self.options.dynamic_order {
                    candidates.sort_unstable_by_key(key);
                } else {
                    candidates.sort_unstable_by_key(|&(_, r, _)| r);
                }
                Some(h_min)
            }
        }
    }

    /// Gives the unplaced buffers of part `[a, b)` (among `candidates`)
    /// new ranks: the preorder's keys with T the highest *remaining* section
    /// total over each buffer's lifetime. Old ranks go to the undo log.
    pub(super) fn rerank(&mut self, a: u32, b: u32, candidates: &[Candidate]) {
        let mut part = std::mem::take(&mut self.part);
        part.clear();
        for &(_, _, i) in candidates {
            let (lo, hi) = self.g.sections[i as usize];
            if a <= lo && lo < b {
                let total = self.section_remaining[lo as usize..hi as usize]
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0);
                part.push((self.g.keys(i as usize, total), i));
            }
        }
        let preorder = self.preorder;
        part.sort_unstable_by(|x, y| preorder.compare(&x.0, &y.0).then(x.1.cmp(&y.1)));
        for (r, &(_, i)) in part.iter().enumerate() {
            self.undo.push(Undo::Rank(i, self.rank[i as usize]));
            self.rank[i as usize] = r as u32;
        }
        self.part = part;
    }

    /// The independent time ranges of the unplaced buffers of `[lo, hi)`,
    /// when there are at least two (§7).
    pub(super) fn split(
        &mut self,
        lo: u32,
        hi: u32,
        candidates: &[Candidate],
    ) -> Option<Vec<(u32, u32)>> {
        self.cuts.clear();
        self.cuts
            .extend((lo + 1..hi).filter(|&t| self.crossing[t as usize] == 0));
        if self.cuts.is_empty() {
            return None;
        }
        // Keep only the parts that hold an unplaced buffer.
        let mut used = vec![false; self.cuts.len() + 1];
        for &(_, _, i) in candidates {
            let start = self.g.sections[i as usize].0;
            used[self.cuts.partition_point(|&c| c <= start)] = true;
        }
        // With re-ranking, a new cut that leaves every unplaced buffer on
        // one side still narrows the range to that side and re-ranks it,
        // as the reference does whenever a placement creates a cut.
        let needed = if self.options.rerank_parts { 1 } else { 2 };
        if used.iter().filter(|&&u| u).count() < needed {
            return None;
        }
        let mut parts = Vec::new();
        let mut from = lo;
        for (k, &u) in used.iter().enumerate() {
            let to = self.cuts.get(k).copied().unwrap_or(hi);
            if u {
                parts.push((from, to));
            }
            from = to;
        }
        Some(parts)
    }

    /// Eq. 3 over sections `[lo, hi)`: in every section, the unplaced sizes
    /// stacked above the section height must fit under the capacity. The
    /// height is the section floor, raised to `top` (canonical: nothing goes
    /// below the highest offset) and to the effective height: the lowest
    /// offset an unplaced buffer alive in the section can take (§6.2).
    /// `candidates` are the unplaced buffers with their lowest offsets,
    /// sorted by offset when `by_offset`.
    ///
    /// Returns the highest remaining size of a section, or `None` when a
    /// section overflows.
    pub(super) fn sections_feasible(
        &mut self,
        lo: u32,
        hi: u32,
        top: u64,
        candidates: &[Candidate],
        by_offset: bool,
    ) -> Option<u64> {
        let (lo, hi) = (lo as usize, hi as usize);
        if self.options.effective_height {
            if by_offset {
                self.effective_heights_by_offset(lo, hi, candidates);
            } else {
                self.effective[lo..hi].fill(u64::MAX);
                for &(o, _, j) in candidates {
                    let (a, b) = self.g.sections[j as usize];
                    for e in &mut self.effective[a as usize..b as usize] {
                        *e = (*e).min(o);
                    }
                }
            }
        }
        let mut highest = 0;
        for s in lo..hi {
            let remaining = self.section_remaining[s];
            if remaining == 0 {
                continue;
            }
            highest = highest.max(remaining);
            let mut height = self.section_floor[s];
            if self.options.canonical {
                height = height.max(top);
            }
            if self.options.effective_height {
                height = height.max(self.effective[s]);
            }
            if height + remaining > self.capacity {
                return None;
            }
        }
        Some(highest)
    }

    /// The effective height of each section of `[lo, hi)` (`u64::MAX`
    /// where no candidate lives) from candidates sorted by offset: each
    /// section takes the offset of the first candidate alive in it, found
    /// by skipping sections already set (path halving), O(sections +
    /// candidates) rather than O(sum of lifetimes).
    pub(super) fn effective_heights_by_offset(
        &mut self,
        lo: usize,
        hi: usize,
        candidates: &[Candidate],
    ) {
        self.effective[lo..hi].fill(u64::MAX);
        let next = &mut self.next_unset;
        for (s, n) in next[lo..=hi].iter_mut().enumerate() {
            *n = (lo + s) as u32;
        }
        let find = |next: &mut [u32], mut s: u32| {
            while next[s as usize] != s {
                let up = next[next[s as usize] as usize];
                next[s as usize] = up;
                s = up;
            }
            s
        };
        for &(o, _, j) in candidates {
            let (a, b) = self.g.sections[j as usize];
            let mut s = find(next, a);
            while s < b {
                self.effective[s as usize] = o;
                next[s as usize] = s + 1;
                s = find(next, s + 1);
            }
        }
    }
}
