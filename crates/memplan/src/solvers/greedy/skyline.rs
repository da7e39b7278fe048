//! The baseline heuristic of TelaMalloc §3.1 (Figure 4): the placed buffers
//! form a *skyline* (the highest address in use in each time section), and
//! rows are filled bottom-up. The lowest stretch of the skyline (a *gap*)
//! receives, in priority order, every waiting buffer whose lifetime lies
//! inside it and that fits there; when none fits, the gap is raised to its
//! lower neighbour and merges with it, wasting the space below.
//!
//! With the contention order ([`crate::solvers::greedy::Order::Contention`]: the
//! highest load over a buffer's lifetime, ties by alignment, size ×
//! lifetime², lifetime) this is the paper's baseline; any other order can
//! be used as the priority.
//!
//! Deviations, none of which the paper describes: an aligned buffer sits at
//! the gap's height rounded up to its alignment; a fixed buffer is an
//! obstacle, not part of the skyline, and a buffer that a fixed one blocks
//! at the gap's height waits for a higher row; a gap whose neighbours have
//! no waiting buffers (it cannot be raised to them) places its first buffer
//! at its lowest offset clear of the fixed buffers.

use crate::stop::{Cut, Poll, Stop};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::buffer::BufferIdx;
use crate::geometry::fit::{align_up, first_fit_from};
use crate::geometry::groups::TimeGroups;
use crate::geometry::sweep::{section_spans, MaxTree};
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};

/// Height of a segment of the skyline that no waiting buffer lives in: it is
/// never raised nor filled, and never a neighbour to raise a gap to.
const DEAD: u64 = u64::MAX;

/// A stretch `[lo, hi)` of sections of equal skyline height.
#[derive(Clone, Copy, Debug)]
struct Segment {
    hi: u32,
    height: u64,
    /// Matches the heap entry that is current for this segment.
    version: u32,
}

/// Places the fixed buffers, then the buffers of `order` (the priority:
/// earlier first) by the §3.1 skyline. Buffers neither fixed nor in `order`
/// get offset 0. `None` as soon as a buffer would end above `limit`, or when
/// `stop` cuts (checked every few gaps).
pub fn place(
    problem: &Problem,
    order: &[BufferIdx],
    limit: Option<u64>,
    stop: &Stop,
) -> Option<Plan> {
    let buffers = problem.buffers();
    let mut rank = vec![u32::MAX; buffers.len()];
    for (r, b) in order.iter().enumerate() {
        if buffers[b.index()].fixed_offset.is_none() {
            rank[b.index()] = r as u32;
        }
    }
    // Independent time groups share no section: each has a skyline of its
    // own, placed in parallel.
    let groups = TimeGroups::new(buffers, GROUP, stop).ok()?;
    let offsets = groups.solve_each(|m| {
        let group: Vec<&Buffer> = m.iter().map(|b| &buffers[b.index()]).collect();
        let rank: Vec<u32> = m.iter().map(|b| rank[b.index()]).collect();
        place_group(&group, &rank, limit, stop)
    })?;
    Some(Plan::from_offsets(offsets))
}

/// Consecutive independent parts are merged up to this many buffers per
/// group (a skyline per handful of buffers costs more than it saves).
const GROUP: usize = 4096;

/// [`place`] on one time group: `buffers` with their priority `rank`
/// (`u32::MAX`: not placed, offset 0). Returns the offsets.
fn place_group(
    buffers: &[&Buffer],
    rank: &[u32],
    limit: Option<u64>,
    stop: &Stop,
) -> Option<Vec<u64>> {
    if stop.is_cut() {
        return None;
    }
    let mut offsets: Vec<u64> = buffers
        .iter()
        .map(|b| b.fixed_offset.unwrap_or(0))
        .collect();
    let (spans, section_count) = section_spans(buffers.iter().copied(), stop).ok()?;
    let fixed: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].fixed_offset.is_some())
        .collect();
    let mut sky = Skyline::new(&spans, section_count, rank, stop).ok()?;
    // Every gap, section scanned and candidate tried is a unit of work.
    let mut poll = Poll::new();

    let mut candidates: Vec<u32> = Vec::new();
    let mut taken: BTreeMap<u32, (u32, u64)> = BTreeMap::new(); // lo -> (hi, top)
    let mut blocked: Vec<(u64, u64)> = Vec::new();
    let mut pieces: Vec<(u32, u32, u64)> = Vec::new();
    while let Some((lo, seg)) = sky.pop() {
        if poll.tick(1, stop).is_err() {
            return None;
        }
        let (hi, h) = (seg.hi, seg.height);
        if !sky.alive(lo, hi) {
            sky.replace(lo, hi, &[(lo, hi, DEAD)]);
            continue;
        }
        // The waiting buffers whose lifetimes lie inside the gap, by
        // priority; each goes in if no earlier one of this row is alive
        // with it and no fixed buffer is in the way.
        if !sky.contained(lo, hi, &mut candidates, &mut poll, stop) {
            return None;
        }
        candidates.sort_unstable_by_key(|&i| rank[i as usize]);
        taken.clear();
        for &c in &candidates {
            if poll.tick(1 + fixed.len(), stop).is_err() {
                return None;
            }
            let (clo, chi) = spans[c as usize];
            let clear_of_row = taken
                .range(..chi)
                .next_back()
                .is_none_or(|(_, &(thi, _))| thi <= clo);
            if !clear_of_row {
                continue;
            }
            let b = &buffers[c as usize];
            let at = align_up(h, b.alignment);
            if lowest_clear_of_fixed(buffers, &fixed, &offsets, b, h, &mut blocked) != at {
                continue;
            }
            let top = at.saturating_add(b.size);
            if limit.is_some_and(|l| top > l) {
                return None;
            }
            offsets[c as usize] = at;
            sky.settle(c as usize);
            taken.insert(clo, (chi, top));
        }
        if taken.is_empty() {
            match sky.raise_target(lo, hi) {
                Some(target) => sky.replace(lo, hi, &[(lo, hi, target)]),
                None => {
                    // Nothing to merge with: a fixed buffer blocks every
                    // buffer here at this height; the first goes above it.
                    let Some(&c) = candidates.first() else {
                        sky.replace(lo, hi, &[(lo, hi, DEAD)]);
                        continue;
                    };
                    let b = &buffers[c as usize];
                    let at = lowest_clear_of_fixed(buffers, &fixed, &offsets, b, h, &mut blocked);
                    let top = at.saturating_add(b.size);
                    if limit.is_some_and(|l| top > l) {
                        return None;
                    }
                    offsets[c as usize] = at;
                    sky.settle(c as usize);
                    taken.insert(spans[c as usize].0, (spans[c as usize].1, top));
                }
            }
        }
        if !taken.is_empty() {
            // The row as placed: the buffers' tops, and the gap's height
            // between them (raised when next popped, if nothing fits).
            pieces.clear();
            let mut at = lo;
            for (&tlo, &(thi, top)) in &taken {
                if tlo > at {
                    pieces.push((at, tlo, h));
                }
                pieces.push((tlo, thi, top));
                at = thi;
            }
            if at < hi {
                pieces.push((at, hi, h));
            }
            sky.replace(lo, hi, &pieces);
        }
    }
    Some(offsets)
}

/// The lowest offset at or above `from` (aligned for `b`) where `b` avoids
/// the fixed buffers alive with it.
fn lowest_clear_of_fixed(
    buffers: &[&Buffer],
    fixed: &[usize],
    offsets: &[u64],
    b: &Buffer,
    from: u64,
    ranges: &mut Vec<(u64, u64)>,
) -> u64 {
    ranges.clear();
    for &f in fixed {
        if buffers[f].overlaps_in_time(b) {
            ranges.push((offsets[f], offsets[f] + buffers[f].size));
        }
    }
    ranges.sort_unstable();
    first_fit_from(ranges, from, b.size, b.alignment)
}

/// The skyline as segments, the heap of their heights, and the waiting
/// buffers by start section.
struct Skyline<'a> {
    spans: &'a [(u32, u32)],
    /// Segments by their first section; they tile `[0, sections)`.
    segments: BTreeMap<u32, Segment>,
    /// (height, first section, version), lowest first.
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    version: u32,
    /// Buffers by start section (CSR); in row `s`, the first `live[s]` are
    /// the waiting ones, and `pos[i]` is buffer `i`'s place in `by_start`.
    start: Vec<u32>,
    by_start: Vec<u32>,
    live: Vec<u32>,
    pos: Vec<u32>,
    /// Latest end section of the waiting buffers starting in each section.
    reach: MaxTree,
}

impl<'a> Skyline<'a> {
    /// The skyline at height 0 over `section_count` sections, the buffers
    /// of finite `rank` waiting; `Err` once `stop` cuts (checked every
    /// [`Stop::EVERY`] buffers, and in the tree's build).
    fn new(
        spans: &'a [(u32, u32)],
        section_count: usize,
        rank: &[u32],
        stop: &Stop,
    ) -> Result<Self, Cut> {
        let waiting = |i: usize| rank[i] != u32::MAX;
        // A counting sort by start section (a row is a set: the buffers
        // taken from it are chosen by rank, so the order within it does
        // not matter).
        let mut start = vec![0u32; section_count + 1];
        for (i, &(lo, _)) in spans.iter().enumerate() {
            stop.every(i)?;
            if waiting(i) {
                start[lo as usize + 1] += 1;
            }
        }
        let live: Vec<u32> = start[1..].to_vec();
        for s in 0..section_count {
            start[s + 1] += start[s];
        }
        let mut by_start = vec![0u32; start[section_count] as usize];
        let mut next = start.clone();
        for (i, &(lo, _)) in spans.iter().enumerate() {
            stop.every(i)?;
            if waiting(i) {
                by_start[next[lo as usize] as usize] = i as u32;
                next[lo as usize] += 1;
            }
        }
        drop(next);
        let mut pos = vec![u32::MAX; spans.len()];
        for (k, &i) in by_start.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        let mut reach = vec![0u64; section_count];
        for &i in &by_start {
            let (lo, hi) = spans[i as usize];
            reach[lo as usize] = reach[lo as usize].max(u64::from(hi));
        }
        let mut sky = Skyline {
            spans,
            segments: BTreeMap::new(),
            heap: BinaryHeap::new(),
            version: 0,
            start,
            by_start,
            live,
            pos,
            reach: MaxTree::new(&reach, stop)?,
        };
        if section_count > 0 {
            sky.insert(0, section_count as u32, 0);
        }
        Ok(sky)
    }

    /// The lowest live segment, removed from the heap (it stays in place
    /// until [`Skyline::replace`]).
    fn pop(&mut self) -> Option<(u32, Segment)> {
        while let Some(Reverse((_, lo, version))) = self.heap.pop() {
            if let Some(&seg) = self.segments.get(&lo) {
                if seg.version == version {
                    return Some((lo, seg));
                }
            }
        }
        None
    }

    /// Whether a waiting buffer lives in a section of `[lo, hi)`.
    fn alive(&self, lo: u32, hi: u32) -> bool {
        self.reach.max(0, hi as usize) > u64::from(lo)
    }

    /// The waiting buffers living only in `[lo, hi)`, into `out`; false
    /// when `stop` cuts (checked as `poll` says: a gap may span most of
    /// the sections).
    fn contained(
        &self,
        lo: u32,
        hi: u32,
        out: &mut Vec<u32>,
        poll: &mut Poll,
        stop: &Stop,
    ) -> bool {
        out.clear();
        for s in lo as usize..hi as usize {
            if poll.tick(1 + self.row(s).len(), stop).is_err() {
                return false;
            }
            out.extend(
                self.row(s)
                    .iter()
                    .copied()
                    .filter(|&i| self.spans[i as usize].1 <= hi),
            );
        }
        true
    }

    /// The waiting buffers starting in section `s`.
    fn row(&self, s: usize) -> &[u32] {
        let first = self.start[s] as usize;
        &self.by_start[first..first + self.live[s] as usize]
    }

    /// Marks waiting buffer `i` placed: it leaves its row.
    fn settle(&mut self, i: usize) {
        let lo = self.spans[i].0 as usize;
        self.live[lo] -= 1;
        let last = (self.start[lo] + self.live[lo]) as usize;
        let k = self.pos[i] as usize;
        let moved = self.by_start[last];
        self.by_start.swap(k, last);
        self.pos[moved as usize] = k as u32;
        self.pos[i] = last as u32;
        let reach = self
            .row(lo)
            .iter()
            .map(|&j| u64::from(self.spans[j as usize].1))
            .max()
            .unwrap_or(0);
        self.reach.set(lo, reach);
    }

    /// The height to raise the gap `[lo, hi)` to: its lower live neighbour's;
    /// `None` when neither neighbour is live.
    fn raise_target(&self, lo: u32, hi: u32) -> Option<u64> {
        let left = self
            .segments
            .range(..lo)
            .next_back()
            .map_or(DEAD, |(_, s)| s.height);
        let right = self.segments.get(&hi).map_or(DEAD, |s| s.height);
        Some(left.min(right)).filter(|&t| t != DEAD)
    }

    /// Replaces the segment starting at `lo` (ending at `hi`) by `pieces`
    /// `(lo, hi, height)`, which tile `[lo, hi)` from left to right.
    fn replace(&mut self, lo: u32, hi: u32, pieces: &[(u32, u32, u64)]) {
        debug_assert_eq!(self.segments.get(&lo).map(|s| s.hi), Some(hi));
        self.segments.remove(&lo);
        for &(plo, phi, height) in pieces {
            self.insert(plo, phi, height);
        }
    }

    /// Inserts a segment, merged with neighbours of the same live height so
    /// that every gap is maximal.
    fn insert(&mut self, mut lo: u32, mut hi: u32, height: u64) {
        if height != DEAD {
            let left = self.segments.range(..lo).next_back().map(|(&l, &s)| (l, s));
            if let Some((l, _)) = left.filter(|(_, s)| s.hi == lo && s.height == height) {
                self.segments.remove(&l);
                lo = l;
            }
            if let Some(s) = self.segments.get(&hi).copied() {
                if s.height == height {
                    self.segments.remove(&hi);
                    hi = s.hi;
                }
            }
        }
        self.version = self.version.wrapping_add(1);
        let version = self.version;
        self.segments.insert(
            lo,
            Segment {
                hi,
                height,
                version,
            },
        );
        if height != DEAD {
            self.heap.push(Reverse((height, lo, version)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::solvers::greedy::{order, Order};
    use crate::testutil::problem;
    use proptest::prelude::*;

    fn skyline(p: &Problem, by: Order) -> Vec<u64> {
        let plan = place(
            p,
            &order(p, by, &Stop::never()).unwrap(),
            None,
            &Stop::never(),
        )
        .unwrap();
        assert_eq!(validate(p, &plan), Ok(()));
        plan.offsets().to_vec()
    }

    #[test]
    fn rows_fill_bottom_up_by_priority() {
        // Sections [0,2), [2,4), [4,6). Sizes give the priority under the
        // size order: b0 (8) spans [0,4); b1 (6) and b2 (5) both want [4,6)
        // on the first row; b2 waits for the next row there; b3 (2) spans
        // everything and goes on top of the highest point it meets.
        let p = problem(&[(0, 4, 8), (4, 6, 6), (4, 6, 5), (0, 6, 2)]);
        // Row 0: b0 at 0 over [0,4), b1 at 0 over [4,6) (b3 does not fit:
        // it would overlap them). Lowest gap: [4,6) at 6: b2 at 6. Then
        // [0,4) at 8 is lowest but b3 is not inside it; raise to 11, merge;
        // b3 at 11.
        assert_eq!(skyline(&p, Order::Size), vec![0, 0, 6, 11]);
    }

    #[test]
    fn a_gap_nothing_fits_is_raised_to_its_lower_neighbour() {
        // b0 [0,2) size 10, b1 [4,6) size 3, b2 [2,6) size 4 (priority by
        // size: b0, b2, b1). Row 0: b0 at 0, b2 at 0 over [2,6); b1 blocked
        // by b2. Gaps: [0,2) at 10, [2,6) at 4. [2,6) at 4: b1 at 4.
        let p = problem(&[(0, 2, 10), (4, 6, 3), (2, 6, 4)]);
        assert_eq!(skyline(&p, Order::Size), vec![0, 4, 0]);
        // b0 [0,4) 4, b1 [2,6) 2, b2 [4,6) 1: row 0 takes b0 and b2; the
        // gap [4,6) at 1 is raised to 4 (its only live neighbour [0,4)),
        // and b1 goes at 4 over [2,6).
        let p = problem(&[(0, 4, 4), (2, 6, 2), (4, 6, 1)]);
        assert_eq!(skyline(&p, Order::Size), vec![0, 4, 0]);
    }

    #[test]
    fn fixed_buffers_and_alignment() {
        let mut buffers = vec![
            Buffer::new("fixed", 0, 4, 4),
            Buffer::new("a", 0, 4, 3),
            Buffer::new("b", 0, 2, 2),
        ];
        buffers[0].fixed_offset = Some(0);
        buffers[2].alignment = 8;
        let p = Problem::new(buffers, None).unwrap();
        // The fixed buffer blocks row 0: a goes at 4 (above it), then b,
        // aligned, at 8 on a's top (7 rounded up).
        assert_eq!(skyline(&p, Order::Size), vec![0, 4, 8]);
    }

    #[test]
    fn limit_and_stop() {
        let p = problem(&[(0, 4, 8), (4, 6, 6), (4, 6, 5), (0, 6, 2)]);
        let o = order(&p, Order::Size, &Stop::never()).unwrap();
        assert!(place(&p, &o, Some(12), &Stop::never()).is_none());
        assert!(place(&p, &o, Some(13), &Stop::never()).is_some());
        let empty = problem(&[]);
        assert_eq!(
            place(&empty, &[], None, &Stop::never()),
            Some(Plan::default())
        );
    }

    /// A stop at any poll of the setup (time groups, sections, rows, the
    /// tree) or of the rows gives `None`; never stopped, the same plan.
    #[test]
    fn the_setup_polls_the_stop() {
        let p = crate::generate::generate(crate::generate::Kind::Layered, 3000, 2).problem;
        let o = order(&p, Order::Contention, &Stop::never()).unwrap();
        let full = place(&p, &o, None, &Stop::never()).unwrap();
        assert_eq!(validate(&p, &full), Ok(()));
        let mut cut = 0;
        for k in 0..40 {
            let stop = Stop::after_looks(k as u64);
            match place(&p, &o, None, &stop) {
                None => cut += 1,
                Some(plan) => assert_eq!(plan, full, "{k}"),
            }
        }
        // The setup alone polls four times per group.
        assert!(cut >= 4, "{cut}");
    }

    proptest! {
        #[test]
        fn plans_validate(
            spec in proptest::collection::vec((0u64..20, 1u64..8, 1u64..50, 0u32..4), 0..40),
            fixed in proptest::collection::vec((0u64..20, 1u64..8, 1u64..50, 0u64..60), 0..3),
        ) {
            let mut buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, a))| {
                    let mut b = Buffer::new(format!("b{i}"), s, s + len, size);
                    b.alignment = 1 << a;
                    b
                })
                .collect();
            for (k, &(s, len, size, o)) in fixed.iter().enumerate() {
                let mut b = Buffer::new(format!("f{k}"), s, s + len, size);
                b.fixed_offset = Some(o * 8);
                buffers.push(b);
            }
            let Ok(p) = Problem::new(buffers, None) else {
                return Ok(()); // fixed buffers that collide
            };
            for by in Order::ALL {
                let plan = place(&p, &order(&p, by, &Stop::never()).unwrap(), None, &Stop::never()).unwrap();
                prop_assert_eq!(validate(&p, &plan), Ok(()));
                prop_assert!(plan.makespan(&p) >= p.max_load());
            }
        }
    }
}
