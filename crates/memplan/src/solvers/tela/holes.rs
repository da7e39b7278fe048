//! Skyline holes ([`TelaOptions::skyline_holes`](super::TelaOptions::skyline_holes)):
//! the candidates of a decision point at zero slack, where every address
//! at every section is taken in a plan. Placements then fill the skyline
//! (TelaMalloc §3.1, Figure 8a) from the bottom, without gaps, and:
//!
//! - the lowest free address of a *hole* (a local minimum of the skyline,
//!   sections `[p, q)` at height `h`, both neighbours higher) is the bottom
//!   of a buffer placed at `h` that starts at `p` and ends by `q`: those are
//!   the hole's *moves*, and every plan that extends the path takes one of
//!   them. The point's candidates are all the moves of the hole with the
//!   fewest (the lowest, then the leftmost, of those), one per class of
//!   identical buffers (same sections, same size): fail first;
//! - every flat run of the skyline below the capacity must be covered, at
//!   its height, by unplaced buffers placed end to end within its window
//!   (the sections around it that are no higher), the first starting at or
//!   before the run: a point where one cannot, or a hole without moves, has
//!   no candidates.
//!
//! This is the reasoning of the search's exact fill (`search/fill`) inside
//! tela's search: its candidates, restarts, backjumps and learned
//! backtracking stay.

use super::model::Model;
use super::state::{State, UNPLACED};
use crate::geometry::skyline::{flat_runs, Run};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// States remembered as failed at most (16 bytes each).
pub(super) const MEMO_CAPACITY: usize = 1 << 20;

/// The skyline and the scratch of the hole rule.
pub(super) struct Holes {
    /// Every address below `height[s]` at section `s` is taken by a placed
    /// buffer: placements fill holes from their bottom, so this is the
    /// placed sizes summed at `s`.
    pub(super) height: Vec<u64>,
    /// Whether a hole's moves are listed largest first (ties: reaching
    /// furthest); else reaching furthest first (ties: largest).
    pub(super) size_first: bool,
    runs: Vec<Run>,
    stack: Vec<u32>,
    /// Which section boundaries a chain of buffers reaches from a run's
    /// start ([`Holes::covered`]).
    reach: Vec<bool>,
    /// A random key of each buffer, and of the state: the keys of the
    /// placed buffers XORed (at zero slack the placed set is the state:
    /// the skyline is their sizes summed).
    zobrist: Vec<u128>,
    pub(super) key: u128,
    /// Keys of states proven to have no plan (see `Point::proven`), at
    /// most [`MEMO_CAPACITY`].
    pub(super) failed: HashSet<u128>,
}

impl Holes {
    /// The hole rule's state at the root, if it applies to `m` at
    /// `capacity`: every section's load is the capacity (zero slack), and
    /// no buffer is fixed or aligned (the fill from the bottom then reaches
    /// every plan).
    pub(super) fn new(m: &Model, capacity: u64) -> Option<Holes> {
        let applies = eligible(m) && m.section_load.first() == Some(&capacity);
        let sections = m.section_load.len();
        let mut rng = ChaCha8Rng::seed_from_u64(0x686F_6C65);
        applies.then(|| Holes {
            zobrist: (0..m.len()).map(|_| rng.gen::<u128>()).collect(),
            key: 0,
            failed: HashSet::new(),
            height: vec![0; sections],
            size_first: false,
            runs: Vec::with_capacity(sections),
            stack: Vec::with_capacity(sections),
            reach: vec![false; sections + 1],
        })
    }

    /// Buffer `b` placed (`raise`) or removed: the skyline over its
    /// sections moves by its size.
    pub(super) fn raise(&mut self, b: usize, (lo, hi): (u32, u32), size: u64, raise: bool) {
        self.key ^= self.zobrist[b];
        for h in &mut self.height[lo as usize..hi as usize] {
            if raise {
                *h += size;
            } else {
                *h -= size;
            }
        }
    }

    /// Whether `run` (below the capacity) can be covered at its height by
    /// unplaced buffers placed end to end within its window, the first
    /// starting in the window at or before the run's start.
    fn covered(&mut self, m: &Model, offset: &[u64], capacity: u64, run: &Run) -> bool {
        let (p, q) = (run.p as usize, run.q as usize);
        let (ah, nh) = (run.ah as usize, run.nh as usize);
        self.reach[p + 1..=nh].iter_mut().for_each(|r| *r = false);
        let room = capacity - run.h;
        for x in ah..nh {
            if x > p && !self.reach[x] {
                continue;
            }
            if x >= q {
                return true;
            }
            for &i in m.starts.row(x) {
                let (i, hi) = (i as usize, m.span[i as usize].1 as usize);
                if offset[i] == UNPLACED && hi <= nh && m.size[i] <= room {
                    if hi >= q {
                        return true;
                    }
                    self.reach[hi] = true;
                }
            }
        }
        false
    }
}

/// Whether the hole rule applies to `m` at some capacity (its load): no
/// buffer fixed, aligned or empty, and every section equally loaded.
pub(super) fn eligible(m: &Model) -> bool {
    let load = m.section_load.first();
    m.fixed_alive.values().is_empty()
        && m.align.iter().all(|&a| a <= 1)
        && m.size.iter().all(|&s| s > 0)
        && m.section_load.iter().all(|l| Some(l) == load)
}

/// The moves of `hole` at `capacity` (see the module documentation), one
/// per class of identical buffers, in the order of `Model::starts`: all
/// into `out` if given, else counted until past `cap`.
fn moves(
    m: &Model,
    offset: &[u64],
    capacity: u64,
    hole: &Run,
    cap: u32,
    mut out: Option<&mut Vec<u32>>,
) -> u32 {
    let room = capacity - hole.h;
    let mut count = 0;
    let mut last: Option<usize> = None;
    for &i in m.starts.row(hole.p as usize) {
        let i = i as usize;
        let (span, size) = (m.span[i], m.size[i]);
        if offset[i] != UNPLACED || span.1 > hole.q || size > room {
            continue;
        }
        // Identical buffers are adjacent in the row: the first unplaced
        // one of a class stands for the class.
        let same = last.is_some_and(|j| m.span[j] == span && m.size[j] == size);
        last = Some(i);
        if same {
            continue;
        }
        count += 1;
        match &mut out {
            Some(out) => out.push(i as u32),
            None if count > cap => return count,
            None => {}
        }
    }
    count
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
            if run.h < capacity && !unchanged && !holes.covered(m, &self.offset, capacity, &run) {
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
            let count = moves(m, &self.offset, capacity, run, cap, None);
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
            moves(m, &self.offset, capacity, &hole, u32::MAX, Some(candidates));
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

/// What the hole rule's choice at a point read: the conflicts its point
/// starts with. When the point runs out of candidates, the placements
/// that shaped its hole are to blame too: with another skyline there, the
/// hole, and its moves, would differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Read {
    /// The skyline over sections `[lo, hi)` (the chosen hole, or a run
    /// whose check failed, with the higher sections around it).
    Sections(u32, u32),
    /// The state failed before ([`Holes::failed`]): blamed on the last
    /// placement.
    Before,
}
