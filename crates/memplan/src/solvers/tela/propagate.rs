//! The propagation engine that replaces CP-SAT (TelaMalloc §5.2, §5.4):
//! floors raised after every placement, the cross-section bound of
//! MiniMalloc §6.2 in every touched section, and the explanations of
//! failures (conflict sets) that the major backtracks follow.

use super::state::{State, UNPLACED};
use crate::geometry::fit::{align_up, first_fit_from};

impl State<'_> {
    /// Propagation before any decision (§5.2): floors among the fixed
    /// buffers, then every check. A failure here is a proof.
    /// `None` when the deadline passes first.
    pub(super) fn propagate_root(&mut self) -> Option<bool> {
        for i in 0..self.m.len() {
            self.floor[i] =
                first_fit_from(self.m.fixed_ranges(i), 0, self.m.size[i], self.m.align[i]);
            if self.floor[i].saturating_add(self.m.size[i]) > self.capacity {
                return Some(false);
            }
        }
        for s in 0..self.stamp.len() {
            if self.deadline.every_costly(s).is_err() {
                return None;
            }
            if self.section_fails(s).is_some() {
                return Some(false);
            }
        }
        Some(true)
    }

    /// The propagation engine (replacing CP-SAT, TelaMalloc §5.2 and §5.4),
    /// after placing `b`: raises the floor of every unplaced neighbour whose
    /// lowest slot `b` now covers, then checks that (1) every such
    /// neighbour still fits under the capacity and (2) every time section
    /// touched holds its unplaced buffers above their lowest floor
    /// (MiniMalloc §6.2). On failure, `self.conflict` holds the decision
    /// levels of the placements responsible, `self.displaced` (with
    /// [`super::TelaOptions::displaced_first`]) the buffers whose raised floors
    /// failed, and the result is false.
    pub(super) fn propagate(&mut self, b: usize) -> bool {
        let m = self.m;
        let (o, e) = (self.offset[b], self.offset[b] + m.size[b]);
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
        self.dirty.clear();
        self.mark_dirty(b);
        for &j in m.neighbours(b) {
            let j = j as usize;
            let f = self.floor[j];
            if self.offset[j] != UNPLACED || !(o < f + m.size[j] && f < e) {
                continue;
            }
            // Its slot is taken: the new floor is above `b`.
            let nf = self.lowest_offset(j, e);
            self.undo.push((j as u32, f));
            self.floor[j] = nf;
            if nf.saturating_add(m.size[j]) > self.capacity {
                if self.options.displaced_first {
                    self.displaced.clear();
                    self.displaced.push(j as u32);
                }
                self.conflict.clear();
                // Every slot with an end within the capacity is blocked.
                self.explain_floor(j, self.capacity - m.size[j] + 1);
                return false;
            }
            self.mark_dirty(j);
        }
        for k in 0..self.dirty.len() {
            // On large groups one placement can touch thousands of crowded
            // sections.
            if self.deadline.every_costly(k + 1).is_err() {
                self.timed_out = true;
                return false;
            }
            let s = self.dirty[k] as usize;
            if let Some(t) = self.section_fails(s) {
                self.explain_section(s, t);
                // Only read by the displaced-first switch.
                if self.options.displaced_first {
                    self.displaced_in(s);
                }
                return false;
            }
        }
        true
    }

    /// Sets `self.displaced` to the unplaced buffers alive in section `s`
    /// whose floors the last placement raised (the undo log since its
    /// point's mark): the buffers it pushed up when `s` failed.
    pub(super) fn displaced_in(&mut self, s: usize) {
        self.displaced.clear();
        let Some(level) = self.trail.len().checked_sub(1) else {
            return;
        };
        let mark = self.points[level].undo_mark.min(self.undo.len());
        for &(j, _) in &self.undo[mark..] {
            let (lo, hi) = self.m.span[j as usize];
            if (lo as usize..hi as usize).contains(&s) && !self.displaced.contains(&j) {
                self.displaced.push(j);
            }
        }
    }

    /// Marks the sections of buffer `i` for checking.
    pub(super) fn mark_dirty(&mut self, i: usize) {
        let (lo, hi) = self.m.span[i];
        let all = !self.options.own_floors;
        for s in lo..hi {
            if (all || self.m.maximal[s as usize]) && self.stamp[s as usize] != self.epoch {
                self.stamp[s as usize] = self.epoch;
                self.dirty.push(s);
            }
        }
    }

    /// The lowest aligned offset at or above `from` where unplaced buffer
    /// `j` avoids every placed and fixed buffer it meets. Jumps past the
    /// ranges met by the current slot until none is met (no sorting: few
    /// jumps are needed in practice).
    pub(super) fn lowest_offset(&mut self, j: usize, from: u64) -> u64 {
        let m = self.m;
        self.ranges.clear();
        for &i in m.neighbours(j) {
            let o = self.offset[i as usize];
            if o != UNPLACED && o + m.size[i as usize] > from {
                self.ranges.push((o, o + m.size[i as usize]));
            }
        }
        self.ranges
            .extend(m.fixed_ranges(j).iter().filter(|r| r.1 > from));
        let (size, align) = (m.size[j], m.align[j]);
        let mut slot = align_up(from, align);
        loop {
            let end = slot.saturating_add(size);
            let reach = self
                .ranges
                .iter()
                .filter(|&&(o, e)| o < end && e > slot)
                .map(|r| r.1)
                .max();
            match reach {
                Some(e) => slot = align_up(e, align),
                None => return slot,
            }
        }
    }

    /// The cross-section bound (MiniMalloc §6.2, eq. 3) in section `s`.
    /// Every unplaced buffer alive there lies above its own floor, so for
    /// every threshold `t`, those whose floor is at least `t` must fit in
    /// `[t, capacity)` beside the placed and fixed buffers reaching above
    /// `t`. At the lowest floor (the section's effective height) this is
    /// eq. 3; with `own_floors`, every floor is a threshold. Returns the
    /// lowest failing threshold, or `None` if they all fit.
    pub(super) fn section_fails(&mut self, s: usize) -> Option<u64> {
        let m = self.m;
        self.pending.clear();
        self.occupied.clear();
        let (mut low, mut high, mut total) = (u64::MAX, 0u64, 0u64);
        for &j in m.alive_in(s) {
            let (j, size) = (j as usize, m.size[j as usize]);
            let o = self.offset[j];
            if o == UNPLACED {
                let f = self.floor[j];
                (low, high) = (low.min(f), high.max(f));
                total = total.saturating_add(size);
                self.pending.push((f, size));
            } else {
                self.occupied.push((o, o + size));
            }
        }
        if self.pending.is_empty() {
            return None;
        }
        self.occupied.extend_from_slice(m.fixed_alive_in(s));
        let above = |t: u64, occupied: &[(u64, u64)]| -> u64 {
            occupied
                .iter()
                .map(|&(o, e)| e.saturating_sub(o.max(t)))
                .fold(0u64, u64::saturating_add)
        };
        let taken = above(low, &self.occupied);
        let used = |t: u64| t.saturating_add(total).saturating_add(taken);
        if used(low) > self.capacity {
            return Some(low);
        }
        // Every higher threshold holds no more than all the unplaced sizes,
        // and its placed part is at most that above `low`.
        if !self.options.own_floors || used(high) <= self.capacity {
            return None;
        }
        // Only thresholds `t` with `t + (sizes with floors >= t) + taken`
        // over the capacity can fail, and only floors at or above `cut` do.
        let cut = self.capacity.saturating_sub(total).saturating_sub(taken);
        let top = self.occupied.iter().map(|r| r.1).max().unwrap_or(0);
        self.pending.retain(|&(f, _)| f > cut);
        self.pending
            .sort_unstable_by_key(|&(f, _)| std::cmp::Reverse(f));
        let mut sum = 0u64;
        let mut failed = None;
        let mut k = 0;
        while k < self.pending.len() {
            let t = self.pending[k].0;
            while k < self.pending.len() && self.pending[k].0 == t {
                sum = sum.saturating_add(self.pending[k].1);
                k += 1;
            }
            let mut need = t.saturating_add(sum);
            if t < top {
                need = need.saturating_add(above(t, &self.occupied));
            }
            if need > self.capacity {
                failed = Some(t);
            }
        }
        failed
    }

    /// The placements blamed when section `s` fails at threshold `t`: those
    /// alive there that reach above `t`, and those that keep the unplaced
    /// buffer with the lowest floor at or above `t` there from any slot
    /// below `t`. The other unplaced buffers' floors are not explained:
    /// complete explanations backjump less far and cost more steps than
    /// they save (measured on the benchmark instances).
    pub(super) fn explain_section(&mut self, s: usize, t: u64) {
        let m = self.m;
        self.conflict.clear();
        let mut lowest: Option<usize> = None;
        for &i in m.alive_in(s) {
            let i = i as usize;
            let o = self.offset[i];
            if o == UNPLACED {
                if self.floor[i] >= t && lowest.is_none_or(|l| self.floor[i] < self.floor[l]) {
                    lowest = Some(i);
                }
            } else if o + m.size[i] > t {
                self.conflict.push(self.level[i]);
            }
        }
        if let Some(i) = lowest {
            self.explain_floor(i, t);
        }
        // With the hole rule, complete: the floor of every unplaced buffer
        // counted at `t` (the memo of failed states relies on it).
        if self.holes.is_some() {
            for &i in m.alive_in(s) {
                let i = i as usize;
                if self.offset[i] == UNPLACED && self.floor[i] >= t && Some(i) != lowest {
                    self.explain_floor(i, t);
                }
            }
        }
    }

    /// Adds to `self.conflict` the levels of placements that, with the
    /// fixed buffers, block every aligned slot of unplaced buffer `j`
    /// starting below `limit`: a greedy cover, each step taking among the
    /// ranges meeting the lowest unblocked slot the one that reaches
    /// highest (the explanation of §5.4's conflicting assignments).
    pub(super) fn explain_floor(&mut self, j: usize, limit: u64) {
        const FIXED: u32 = u32::MAX;
        let m = self.m;
        let (size, align) = (m.size[j], m.align[j]);
        self.blockers.clear();
        for &i in m.neighbours(j) {
            let o = self.offset[i as usize];
            if o != UNPLACED && o < limit.saturating_add(size) {
                self.blockers
                    .push((o, o + m.size[i as usize], self.level[i as usize]));
            }
        }
        self.blockers.extend(
            m.fixed_ranges(j)
                .iter()
                .filter(|r| r.0 < limit.saturating_add(size))
                .map(|&(o, e)| (o, e, FIXED)),
        );
        self.blockers.sort_unstable();
        let mut x = 0u64;
        let mut k = 0usize;
        // The range reaching highest among those starting below the slot's end.
        let mut best: Option<(u64, u32)> = None;
        while x < limit {
            while k < self.blockers.len() && self.blockers[k].0 < x.saturating_add(size) {
                let (_, e, l) = self.blockers[k];
                // Highest end; on ties, fixed ranges and early levels first.
                if best.is_none_or(|(be, bl)| e > be || (e == be && l > bl)) {
                    best = Some((e, l));
                }
                k += 1;
            }
            match best {
                Some((e, l)) if e > x => {
                    if l != FIXED {
                        self.conflict.push(l);
                    }
                    x = align_up(e, align);
                    best = None;
                    // Ranges already scanned may still reach past the new slot.
                    for &(_, e2, l2) in &self.blockers[..k] {
                        if e2 > x && best.is_none_or(|(be, bl)| e2 > be || (e2 == be && l2 > bl)) {
                            best = Some((e2, l2));
                        }
                    }
                }
                // A free slot: cannot happen when the floor is at or above
                // `limit`; blame every placement met to stay safe.
                _ => {
                    for &(_, _, l) in &self.blockers {
                        if l != FIXED {
                            self.conflict.push(l);
                        }
                    }
                    return;
                }
            }
        }
    }
}
