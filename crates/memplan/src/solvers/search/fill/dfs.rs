//! The fill's depth-first search over skylines of one group at one
//! capacity ([`Fill`]): its state (the skyline, the unplaced buffers of
//! each section, the path), its checks and its moves (see the module
//! above for the method).

use super::*;
use crate::geometry::skyline::{flat_runs, Run};

/// The unplaced buffers of each section (by start, or by end), in any
/// order, each as its other end and its size: the checks scan these, not
/// the placed buffers too.
struct Open {
    /// Section `k`'s entries start at `at[k]`, the unplaced ones first.
    at: Vec<u32>,
    /// How many of section `k`'s entries are unplaced.
    len: Vec<u32>,
    /// Entries: the buffer's other end (its end, or its start) and size.
    entry: Vec<(u32, u64)>,
    /// The buffer at each entry, and each buffer's entry.
    id: Vec<u32>,
    pos: Vec<u32>,
}

impl Open {
    /// The buffers `(k, other end, size)` grouped by `k` (`k` < `sections`).
    fn new(sections: usize, items: impl Iterator<Item = (u32, u32, u64)> + Clone) -> Open {
        let mut at = vec![0u32; sections + 1];
        for (k, ..) in items.clone() {
            at[k as usize + 1] += 1;
        }
        for k in 0..sections {
            at[k + 1] += at[k];
        }
        let len: Vec<u32> = (0..sections).map(|k| at[k + 1] - at[k]).collect();
        let n = at[sections] as usize;
        let mut fill = at.clone();
        let (mut entry, mut id, mut pos) = (vec![(0, 0); n], vec![0; n], vec![0; n]);
        for (i, (k, other, size)) in items.enumerate() {
            let p = fill[k as usize] as usize;
            fill[k as usize] += 1;
            entry[p] = (other, size);
            id[p] = i as u32;
            pos[i] = p as u32;
        }
        Open {
            at,
            len,
            entry,
            id,
            pos,
        }
    }

    /// The unplaced entries of section `k`.
    fn unplaced(&self, k: usize) -> &[(u32, u64)] {
        let from = self.at[k] as usize;
        &self.entry[from..from + self.len[k] as usize]
    }

    /// Buffer `i` of section `k` placed: moved to the last unplaced entry,
    /// then out of the unplaced ones.
    fn remove(&mut self, i: usize, k: usize) {
        let last = (self.at[k] + self.len[k] - 1) as usize;
        let p = self.pos[i] as usize;
        let j = self.id[last] as usize;
        self.entry.swap(p, last);
        self.id.swap(p, last);
        self.pos[j] = p as u32;
        self.pos[i] = last as u32;
        self.len[k] -= 1;
    }

    /// Undoes the last [`Open::remove`] of section `k` (the buffer is at
    /// the first placed entry still).
    fn restore(&mut self, k: usize) {
        self.len[k] += 1;
    }
}

/// A move made at a node, undone on backtracking.
#[derive(Clone, Copy)]
enum Move {
    /// Buffer `i` placed at the segment's height.
    Place(u32),
    /// Waste of `g` declared over sections `[k1, s)`.
    Waste(u32),
}

/// A range of sections `[a, b)` whose unplaced buffers lie within it and
/// are solved on their own, created by the move of frame `split` (`None`:
/// the root).
#[derive(Clone, Copy)]
struct Region {
    a: u32,
    b: u32,
    split: Option<u32>,
}

/// A node on the path: its region and segment, and the next move to try.
struct Frame {
    region: Region,
    /// Whether this node is the first of its region: when it fails, so does
    /// the move of `region.split` (the other regions are independent).
    root: bool,
    k1: u32,
    k2: u32,
    h: u64,
    /// State key (placed buffers and waste) before the node's move.
    key: u128,
    /// Next position in the candidates of `k1`; waste after them.
    next: u32,
    waste_tried: bool,
    made: Option<Move>,
    /// The agenda's length before the move, and the region it popped.
    agenda_len: u32,
    popped: Option<Region>,
}

/// The fill search of one group at one capacity.
pub(super) struct Fill<'g> {
    group: &'g Group,
    /// The capacity rounded down to a multiple of `g`.
    capacity: u64,
    g: u64,
    /// Skyline: every address below `height[k]` at section `k` is taken.
    height: Vec<u64>,
    /// Each free buffer's sections `[lo, hi)`, in time or mirrored.
    sections: Vec<(u32, u32)>,
    /// Waste still allowed at each section.
    slack: Vec<u64>,
    /// Free buffers by start section (CSR), each list by end descending,
    /// then size descending, then index: identical buffers are adjacent.
    start_at: Vec<u32>,
    by_start: Vec<u32>,
    /// Each buffer's position in `by_start`: the order tried.
    rank: Vec<u32>,
    /// Scratch of [`Fill::choose_segment`]: the skyline's flat runs in the
    /// region, each with its window (one past the nearest higher section
    /// on its left, the nearest higher one on its right; the region's ends
    /// if none), and a stack of runs.
    runs: Vec<Run>,
    stack: Vec<u32>,
    /// Scratch of [`Fill::covered`]: which boundaries of a run a chain
    /// of buffers (and waste) reaches from its start.
    reach: Vec<bool>,
    /// The placed buffer whose top is the skyline at each section
    /// (`u32::MAX`: waste or the floor), and the owners it replaced.
    owner: Vec<u32>,
    owner_log: Vec<(u32, u32)>,
    /// Placed buffers' offsets (`u64::MAX`: unplaced).
    pub(super) offset: Vec<u64>,
    placed: usize,
    /// Unplaced buffers starting at each section.
    unplaced_starts: Vec<u32>,
    /// The unplaced buffers by start section and by last section.
    open_start: Open,
    open_end: Open,
    /// Unplaced buffers alive at both `k - 1` and `k`: where it is 0, the
    /// unplaced buffers split into independent ranges.
    crossing: Vec<u32>,
    /// Their sizes summed: they must all lie above both sections' heights.
    crossing_load: Vec<u64>,
    /// The sections the last move changed, `[lo, hi)`; `None`: check all
    /// (the root, and after a resumption).
    changed: Option<(u32, u32)>,
    /// Regions waiting to be solved, the next last.
    agenda: Vec<Region>,
    /// The path of the search so far, the region of the node to expand
    /// next (`None`: backtrack), and the frame to jump back to (frames
    /// above it are popped without trying their other moves: a region
    /// created by its move failed): kept between calls of `search`.
    path: Vec<Frame>,
    next: Option<Region>,
    backjump: Option<usize>,
    zobrist: Vec<u128>,
    key: u128,
    failed: HashSet<u128, BuildHasherDefault<KeyHasher>>,
    pub(super) counters: Counters,
    /// Work done: sections and candidate entries visited by the checks,
    /// a deterministic measure of time: the lanes' budgets and race.
    pub(super) work: u64,
}

impl<'g> Fill<'g> {
    /// The search's state at the root: in time, or mirrored (`mirror`);
    /// at a hole, buffers that reach furthest first, then the largest,
    /// or the largest first (`size_first`).
    pub(super) fn new(group: &'g Group, capacity: u64, mirror: bool, size_first: bool) -> Self {
        let n = group.size.len();
        let sections = group.section_count;
        let last = sections as u32;
        let spans: Vec<(u32, u32)> = if mirror {
            group
                .sections
                .iter()
                .map(|&(lo, hi)| (last - hi, last - lo))
                .collect()
        } else {
            group.sections.clone()
        };
        let mut loads = group.section_load.clone();
        let mut height = group.floor.clone().unwrap_or_else(|| vec![0; sections]);
        if mirror {
            loads.reverse();
            height.reverse();
        }
        let g = group
            .size
            .iter()
            .chain(&height)
            .fold(0, |a, &s| gcd(a, s))
            .max(1);
        let capacity = capacity / g * g;
        let mut start_at = vec![0u32; sections + 1];
        let mut unplaced_starts = vec![0u32; sections];
        let mut crossing = vec![0u32; sections + 1];
        let mut crossing_load = vec![0u64; sections + 1];
        for (i, &(lo, hi)) in spans.iter().enumerate() {
            start_at[lo as usize + 1] += 1;
            unplaced_starts[lo as usize] += 1;
            for c in lo + 1..hi {
                crossing[c as usize] += 1;
                crossing_load[c as usize] += group.size[i];
            }
        }
        for k in 0..sections {
            start_at[k + 1] += start_at[k];
        }
        let mut by_start: Vec<u32> = (0..n as u32).collect();
        by_start.sort_unstable_by_key(|&i| {
            let (lo, hi) = spans[i as usize];
            let size = group.size[i as usize];
            if size_first {
                (
                    lo,
                    std::cmp::Reverse(size),
                    std::cmp::Reverse(u64::from(hi)),
                    i,
                )
            } else {
                (
                    lo,
                    std::cmp::Reverse(u64::from(hi)),
                    std::cmp::Reverse(size),
                    i,
                )
            }
        });
        let items = spans.iter().zip(&group.size);
        let open_start = Open::new(sections, items.clone().map(|(&(lo, hi), &s)| (lo, hi, s)));
        let open_end = Open::new(sections, items.map(|(&(lo, hi), &s)| (hi - 1, lo, s)));
        let mut rank = vec![0u32; n];
        for (r, &i) in by_start.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(0x6D65_6D70_6C61_6E00);
        let zobrist = (0..n + 2 * sections).map(|_| rng.gen::<u128>()).collect();
        Fill {
            group,
            capacity,
            g,
            slack: loads
                .iter()
                .zip(&height)
                .map(|(&l, &h)| capacity.saturating_sub(l.saturating_add(h)))
                .collect(),
            height,
            sections: spans,
            start_at,
            by_start,
            rank,
            runs: Vec::with_capacity(sections),
            stack: Vec::with_capacity(sections),
            reach: vec![false; sections + 1],
            owner: vec![u32::MAX; sections],
            owner_log: Vec::new(),
            offset: vec![u64::MAX; n],
            placed: 0,
            unplaced_starts,
            open_start,
            open_end,
            crossing,
            crossing_load,
            agenda: Vec::new(),
            changed: None,
            path: Vec::with_capacity(n + 1),
            next: Some(Region {
                a: 0,
                b: sections as u32,
                split: None,
            }),
            backjump: None,
            zobrist,
            key: 0,
            failed: HashSet::default(),
            counters: Counters::default(),
            work: 0,
        }
    }

    /// Whether buffer `i` may go at the skyline's height where it starts:
    /// not directly on a buffer of the same lifetime with a higher rank
    /// (stacked buffers of one lifetime swap freely; only increasing
    /// ranks upwards are tried).
    fn in_order(&self, i: usize) -> bool {
        let (lo, _) = self.sections[i];
        let p = self.owner[lo as usize];
        p == u32::MAX
            || self.rank[p as usize] <= self.rank[i]
            || self.sections[p as usize] != self.sections[i]
    }

    /// Whether buffer `i` can go at height `h` in a hole ending at `k2`:
    /// unplaced, ending by `k2`, under the capacity, in stacking order.
    fn fits_hole(&self, i: usize, k2: u32, h: u64) -> bool {
        self.offset[i] == u64::MAX
            && self.sections[i].1 <= k2
            && h + self.group.size[i] <= self.capacity
            && self.in_order(i)
    }

    /// The end of the waste strip at the hole `[k1, k2)` at height `h`
    /// when its sections have the slack for it.
    fn waste_at(&self, k1: u32, k2: u32, h: u64) -> Option<u32> {
        let s = self.waste_end(k1, k2);
        let room = h + self.g <= self.capacity;
        (room && (k1..s).all(|k| self.slack[k as usize] >= self.g)).then_some(s)
    }

    /// The moves at the local minimum `[k1, k2)` at height `h` (both
    /// neighbours higher or ends of the region), at most `cap` counted.
    fn moves_at(&self, k1: u32, k2: u32, h: u64, cap: u32) -> u32 {
        let from = self.start_at[k1 as usize] as usize;
        let to = self.start_at[k1 as usize + 1] as usize;
        let mut count = 0;
        let mut last: Option<usize> = None;
        for &i in &self.by_start[from..to] {
            let i = i as usize;
            if !self.fits_hole(i, k2, h) {
                continue;
            }
            let same = last.is_some_and(|j| {
                self.sections[j] == self.sections[i] && self.group.size[j] == self.group.size[i]
            });
            last = Some(i);
            if !same {
                count += 1;
                if count >= cap {
                    return count;
                }
            }
        }
        count + u32::from(self.waste_at(k1, k2, h).is_some())
    }

    /// Whether nothing that the checks at `run` read has changed since
    /// they last passed: its window is apart from the sections the last
    /// move changed. Skipping a check only prunes less.
    fn unchanged(&self, run: &Run) -> bool {
        self.changed
            .is_some_and(|(lo, hi)| run.nh < lo || run.ah > hi)
    }

    /// Whether `run` (not at the capacity), if its sections have no slack
    /// left, has a buffer that can take the bottom of its free space at
    /// its ends: an unplaced buffer alive there whose lifetime stays in
    /// the run's window; where the left neighbour is higher it starts at
    /// the run's start, where the right one is higher it ends at its end.
    fn supported(&mut self, run: &Run, a: u32, b: u32) -> bool {
        let room = self.capacity - run.h;
        let (p, q) = (run.p as usize, run.q as usize);
        if (run.p == a || self.height[p - 1] > run.h) && self.slack[p] < self.g {
            let list = self.open_start.unplaced(p);
            self.work += list.len() as u64;
            if !list.iter().any(|&(hi, size)| size <= room && hi <= run.nh) {
                return false;
            }
        }
        if (run.q == b || self.height[q] > run.h) && self.slack[q - 1] < self.g {
            let list = self.open_end.unplaced(q - 1);
            self.work += list.len() as u64;
            if !list.iter().any(|&(lo, size)| size <= room && lo >= run.ah) {
                return false;
            }
        }
        true
    }

    /// Whether `run` (not at the capacity) can be covered at its height:
    /// by unplaced buffers placed there, end to end or apart, each within
    /// the run's window, with waste only at sections of the run that have
    /// slack.
    fn covered(&mut self, run: &Run) -> bool {
        let (p, q, h) = (run.p as usize, run.q as usize, run.h);
        let (ah, nh) = (run.ah as usize, run.nh as usize);
        // Boundaries up to `p` are reached from the start; beyond, as
        // marked. Reaching `q` or past it ends the search.
        self.reach[p + 1..=nh].iter_mut().for_each(|r| *r = false);
        let room = self.capacity - h;
        for x in ah..nh {
            if x > p && !self.reach[x] {
                continue;
            }
            if x >= q {
                return true;
            }
            if x >= p && self.slack[x] >= self.g {
                if x + 1 >= q {
                    return true;
                }
                self.reach[x + 1] = true;
            }
            let open = &self.open_start;
            let from = open.at[x] as usize;
            let list = &open.entry[from..from + open.len[x] as usize];
            self.work += 1 + list.len() as u64;
            for &(hi, size) in list {
                let hi = hi as usize;
                if hi <= nh && size <= room {
                    if hi >= q {
                        return true;
                    }
                    self.reach[hi] = true;
                }
            }
        }
        false
    }

    /// The hole to fill next in `[a, b)`: of the skyline's local minima
    /// (segments whose neighbours are higher, or the region's ends), one
    /// with the fewest moves, the lowest then leftmost of those; `None`
    /// when one has no move (a dead end).
    fn choose_segment(&mut self, a: u32, b: u32) -> Option<(u32, u32, u64)> {
        self.work += u64::from(b - a);
        // The unplaced buffers alive on both sides of a boundary lie above
        // the higher side (checked where the last move changed a height or
        // a load: elsewhere it passed at the parent).
        let (from, to) = match self.changed {
            Some((lo, hi)) => (lo.max(a + 1), (hi + 1).min(b)),
            None => (a + 1, b),
        };
        for k in from as usize..to as usize {
            let high = self.height[k - 1].max(self.height[k]);
            if high + self.crossing_load[k] > self.capacity {
                return None;
            }
        }
        flat_runs(&self.height, a, b, &mut self.runs, &mut self.stack);
        for r in 0..self.runs.len() {
            let run = self.runs[r];
            if run.h < self.capacity
                && !self.unchanged(&run)
                && !(self.supported(&run, a, b) && self.covered(&run))
            {
                return None;
            }
        }
        let mut best: Option<(u32, u64, u32, u32)> = None;
        for r in 0..self.runs.len() {
            let Run { p, q, h, .. } = self.runs[r];
            let left_higher = p == a || self.height[p as usize - 1] > h;
            let right_higher = q == b || self.height[q as usize] > h;
            if left_higher && right_higher {
                let cap = best.map_or(u32::MAX, |(c, ..)| c);
                let moves = self.moves_at(p, q, h, cap);
                if moves == 0 {
                    return None;
                }
                let better = match best {
                    None => true,
                    Some((c, bh, _, _)) => moves < c || (moves == c && h < bh),
                };
                if better {
                    best = Some((moves, h, p, q));
                }
            }
        }
        best.map(|(_, h, k1, k2)| (k1, k2, h))
    }

    /// The key of a waste declaration over `[k1, s)` at height `h`.
    fn waste_key(&self, k1: u32, s: u32, h: u64) -> u128 {
        let n = self.group.size.len();
        let a = self.zobrist[n + 2 * k1 as usize];
        let b = self.zobrist[n + 2 * (s as usize - 1) + 1];
        (a ^ b.rotate_left(17)).wrapping_mul(u128::from(h / self.g) | 1) ^ u128::from(h)
    }

    /// The end of a waste strip from `k1` in `[k1, k2)`: the first section
    /// after `k1` where an unplaced buffer starts, or `k2`.
    fn waste_end(&self, k1: u32, k2: u32) -> u32 {
        ((k1 + 1)..k2)
            .find(|&k| self.unplaced_starts[k as usize] > 0)
            .unwrap_or(k2)
    }

    /// Makes move `m` of `frame`, then sets the region to solve next:
    /// the parts of the frame's region that still hold unplaced buffers
    /// (the first now, the others on the agenda), else the agenda's next.
    /// Returns the region, `None` when every buffer is placed.
    fn apply(&mut self, frame: &mut Frame, m: Move, me: u32) -> Option<Region> {
        match m {
            Move::Place(i) => {
                let i = i as usize;
                let (lo, hi) = self.sections[i];
                let top = frame.h + self.group.size[i];
                for k in lo..hi {
                    self.height[k as usize] = top;
                    self.owner_log.push((k, self.owner[k as usize]));
                    self.owner[k as usize] = i as u32;
                }
                for c in lo + 1..hi {
                    self.crossing[c as usize] -= 1;
                    self.crossing_load[c as usize] -= self.group.size[i];
                }
                self.offset[i] = frame.h;
                self.placed += 1;
                self.unplaced_starts[lo as usize] -= 1;
                self.open_start.remove(i, lo as usize);
                self.open_end.remove(i, hi as usize - 1);
                self.key ^= self.zobrist[i];
            }
            Move::Waste(s) => {
                for k in frame.k1..s {
                    self.height[k as usize] += self.g;
                    self.slack[k as usize] -= self.g;
                    self.owner_log.push((k, self.owner[k as usize]));
                    self.owner[k as usize] = u32::MAX;
                }
                self.key ^= self.waste_key(frame.k1, s, frame.h);
            }
        }
        self.changed = Some(match m {
            Move::Place(i) => self.sections[i as usize],
            Move::Waste(s) => (frame.k1, s),
        });
        frame.agenda_len = self.agenda.len() as u32;
        frame.popped = None;
        // The parts of the region, split where no unplaced buffer crosses.
        let Region { a, b, .. } = frame.region;
        let mut parts = 0u32;
        let mut first: Option<Region> = None;
        let mut from = a;
        let mut holds = 0u32;
        for k in a..=b {
            if k == b || (k > a && self.crossing[k as usize] == 0) {
                if holds > 0 {
                    let part = Region {
                        a: from,
                        b: k,
                        split: Some(me),
                    };
                    parts += 1;
                    match first {
                        None => first = Some(part),
                        Some(_) => self.agenda.push(part),
                    }
                }
                from = k;
                holds = 0;
            }
            if k < b {
                holds += self.unplaced_starts[k as usize];
            }
        }
        // Parts after the first, the next one last.
        self.agenda[frame.agenda_len as usize..].reverse();
        match (first, parts) {
            // One part: the same region, narrowed (not a new root).
            (Some(part), 1) => Some(Region {
                split: None,
                ..part
            }),
            (Some(part), _) => Some(part),
            (None, _) => {
                let next = self.agenda.pop();
                frame.popped = next;
                next
            }
        }
    }

    fn undo(&mut self, frame: &Frame, m: Move) {
        self.agenda.truncate(frame.agenda_len as usize);
        if let Some(r) = frame.popped {
            self.agenda.push(r);
        }
        match m {
            Move::Place(i) => {
                let i = i as usize;
                let (lo, hi) = self.sections[i];
                for k in lo..hi {
                    self.height[k as usize] = frame.h;
                }
                for _ in lo..hi {
                    if let Some((k, o)) = self.owner_log.pop() {
                        self.owner[k as usize] = o;
                    }
                }
                for c in lo + 1..hi {
                    self.crossing[c as usize] += 1;
                    self.crossing_load[c as usize] += self.group.size[i];
                }
                self.offset[i] = u64::MAX;
                self.placed -= 1;
                self.unplaced_starts[lo as usize] += 1;
                self.open_start.restore(lo as usize);
                self.open_end.restore(hi as usize - 1);
                self.key ^= self.zobrist[i];
            }
            Move::Waste(s) => {
                for k in frame.k1..s {
                    self.height[k as usize] -= self.g;
                    self.slack[k as usize] += self.g;
                }
                for _ in frame.k1..s {
                    if let Some((k, o)) = self.owner_log.pop() {
                        self.owner[k as usize] = o;
                    }
                }
                self.key ^= self.waste_key(frame.k1, s, frame.h);
            }
        }
    }

    /// The next move of `frame` not yet tried, advancing its cursor.
    fn next_move(&self, frame: &mut Frame) -> Option<Move> {
        let from = self.start_at[frame.k1 as usize];
        let to = self.start_at[frame.k1 as usize + 1];
        let mut p = from + frame.next;
        while p < to {
            let i = self.by_start[p as usize] as usize;
            p += 1;
            if !self.fits_hole(i, frame.k2, frame.h) {
                continue;
            }
            // One buffer per class of identical ones: skip it when the
            // one before it in its class is unplaced (tried already here).
            let same_class_before = p - 1 > from && {
                let j = self.by_start[p as usize - 2] as usize;
                self.sections[j] == self.sections[i]
                    && self.group.size[j] == self.group.size[i]
                    && self.offset[j] == u64::MAX
            };
            if same_class_before {
                continue;
            }
            frame.next = p - from;
            return Some(Move::Place(i as u32));
        }
        frame.next = to - from;
        if frame.waste_tried {
            return None;
        }
        frame.waste_tried = true;
        self.waste_at(frame.k1, frame.k2, frame.h).map(Move::Waste)
    }

    /// Searches on until `work_limit` work in all (resumable: a search
    /// that ran out goes on where it stopped when called again), or until
    /// `race` has a leader it cannot beat as lane `lane`; a decision is
    /// offered to `race`.
    pub(super) fn search(&mut self, stop: &Stop, work_limit: u64, race: &Race, lane: u64) -> End {
        let n = self.group.size.len();
        if self.placed == n {
            race.offer(self.work, lane);
            return End::Found;
        }
        let mut path = std::mem::take(&mut self.path);
        self.changed = None;
        let mut next = self.next.take();
        let mut backjump = self.backjump.take();
        let end = loop {
            if let Some(region) = next {
                if self.work >= work_limit || race.beaten(self.work, lane) {
                    break End::OutOfBudget;
                }
                // A step costs O(sections): costly units.
                if stop.every_costly(self.counters.steps as usize).is_err() {
                    break End::OutOfTime;
                }
                next = None;
                self.counters.steps += 1;
                self.work += 1;
                if self.failed.contains(&self.key) {
                    self.counters.backtracks += 1;
                    if let Some(x) = region.split {
                        backjump = Some(x as usize);
                    }
                    continue;
                }
                let Some((k1, k2, h)) = self.choose_segment(region.a, region.b) else {
                    if self.failed.len() < MEMO_CAPACITY {
                        self.failed.insert(self.key);
                    }
                    self.counters.backtracks += 1;
                    if let Some(x) = region.split {
                        backjump = Some(x as usize);
                    }
                    continue;
                };
                self.counters.nodes += 1;
                path.push(Frame {
                    region,
                    root: region.split.is_some(),
                    k1,
                    k2,
                    h,
                    key: self.key,
                    next: 0,
                    waste_tried: false,
                    made: None,
                    agenda_len: 0,
                    popped: None,
                });
            }
            let Some(mut frame) = path.pop() else {
                break End::Exhausted;
            };
            if let Some(m) = frame.made.take() {
                self.undo(&frame, m);
            }
            if backjump.is_some_and(|x| path.len() > x) {
                // Skipped: not proven to fail, so not remembered.
                continue;
            }
            backjump = None;
            match self.next_move(&mut frame) {
                Some(m) => {
                    let me = path.len() as u32;
                    let region = self.apply(&mut frame, m, me);
                    frame.made = Some(m);
                    path.push(frame);
                    match region {
                        Some(r) => next = Some(r),
                        None => break End::Found,
                    }
                }
                None => {
                    if self.failed.len() < MEMO_CAPACITY {
                        self.failed.insert(frame.key);
                    }
                    self.counters.backtracks += 1;
                    if frame.root {
                        if let Some(x) = frame.region.split {
                            backjump = Some(x as usize);
                        }
                    }
                }
            }
        };
        self.path = path;
        self.next = next;
        self.backjump = backjump;
        if matches!(end, End::Found | End::Exhausted) {
            race.offer(self.work, lane);
        }
        end
    }
}
