//! The incremental search state of one group at one capacity: offsets,
//! floors, section floors and the undo log (MiniMalloc §5–6).

use super::counters::Counters;
use super::group::Group;
use super::lockstep::{next_meeting, Lockstep};
use super::options::SearchOptions;
use super::preorder::{Preorder, PreorderKeys};
use crate::geometry::fit::{align_up, first_fit_from};
use crate::solver::Stop;

pub(super) enum Outcome {
    Found,
    Exhausted,
    OutOfTime,
    OutOfBudget,
    /// Another search of the lockstep decided first.
    Stopped,
}

/// Undo-log entries: restoring the search state on backtrack.
pub(super) enum Undo {
    Floor(u32, u64),
    SectionFloor(u32, u64),
    Placed(u32),
    Rank(u32, u32),
}

pub(super) const UNPLACED: u64 = u64::MAX;

/// A candidate extension: (offset, preorder rank, buffer).
pub(super) type Candidate = (u64, u32, u32);

/// The incremental search state.
pub(super) struct State<'a> {
    pub(super) g: &'a Group,
    pub(super) capacity: u64,
    pub(super) preorder: Preorder,
    pub(super) rank: Vec<u32>,
    pub(super) options: &'a SearchOptions,
    pub(super) deadline: &'a Stop,
    /// Nodes this search may count (a round-robin run's limit).
    pub(super) node_limit: u64,
    /// Steps this search may take (its share of the work budget).
    pub(super) step_limit: u64,
    /// Offset of each free buffer, or UNPLACED.
    pub(super) offset: Vec<u64>,
    /// Canonical floor: highest end of placed overlapping free buffers.
    pub(super) floor: Vec<u64>,
    /// Highest end of placed buffers in each section.
    pub(super) section_floor: Vec<u64>,
    /// Free sizes not yet placed in each section.
    pub(super) section_remaining: Vec<u64>,
    /// `crossing[t]`: unplaced buffers alive in both section `t - 1` and
    /// section `t`. A zero cuts the unplaced buffers into independent time
    /// ranges (§7, dynamic temporal decomposition).
    pub(super) crossing: Vec<u32>,
    pub(super) placed: usize,
    pub(super) undo: Vec<Undo>,
    /// Candidate lists of each recursion level, reused.
    pub(super) scratch: Vec<Vec<Candidate>>,
    pub(super) level: usize,
    /// Scratch: effective height of each section.
    pub(super) effective: Vec<u64>,
    /// Scratch: the next section whose effective height is unset (with
    /// one sentinel past the end).
    pub(super) next_unset: Vec<u32>,
    /// Scratch: section boundaries where the unplaced buffers split.
    pub(super) cuts: Vec<u32>,
    /// Scratch: candidates whose offset moved since the parent node.
    pub(super) moved: Vec<Candidate>,
    /// Scratch: the keys and buffers of a part being re-ranked.
    pub(super) part: Vec<(PreorderKeys, u32)>,
    pub(super) nodes: u64,
    pub(super) steps: u64,
    pub(super) backtracks: u64,
    pub(super) timed_out: bool,
    /// The other searches this one runs in lockstep with, and its number
    /// among them.
    pub(super) lockstep: Option<(&'a Lockstep<'a>, usize)>,
    /// Meetings with the other lockstep searches so far.
    pub(super) meetings: u64,
    /// The step count of the next meeting.
    pub(super) meeting_at: u64,
}

impl<'a> State<'a> {
    pub(super) fn new(
        g: &'a Group,
        capacity: u64,
        preorder: Preorder,
        options: &'a SearchOptions,
        deadline: &'a Stop,
        node_limit: u64,
        step_limit: u64,
    ) -> Self {
        let n = g.size.len();
        // Difference array: +1 after each start section, -1 at each end.
        let mut delta = vec![0i64; g.section_count + 2];
        for &(lo, hi) in &g.sections {
            if lo + 1 < hi {
                delta[lo as usize + 1] += 1;
                delta[hi as usize] -= 1;
            }
        }
        let mut running = 0i64;
        let crossing: Vec<u32> = delta[..=g.section_count]
            .iter()
            .map(|d| {
                running += d;
                running as u32
            })
            .collect();
        State {
            g,
            capacity,
            preorder,
            rank: g.ranks(preorder),
            options,
            deadline,
            node_limit,
            step_limit,
            offset: vec![UNPLACED; n],
            floor: vec![0; n],
            section_floor: vec![0; g.section_count],
            section_remaining: g.section_load.clone(),
            crossing,
            placed: 0,
            undo: Vec::new(),
            scratch: Vec::new(),
            level: 0,
            effective: vec![0; g.section_count],
            next_unset: vec![0; g.section_count + 1],
            cuts: Vec::new(),
            moved: Vec::new(),
            part: Vec::new(),
            nodes: 0,
            steps: 0,
            backtracks: 0,
            timed_out: false,
            lockstep: None,
            meetings: 0,
            meeting_at: next_meeting(0),
        }
    }

    /// The counters so far.
    pub(super) fn counters(&self) -> Counters {
        Counters {
            nodes: self.nodes,
            steps: self.steps,
            backtracks: self.backtracks,
            restarts: 0,
            timed_out: self.timed_out,
            incomplete: false,
        }
    }

    /// The lowest aligned offset at or above the floor of `i` that clears
    /// the fixed buffers it meets.
    #[inline]
    pub(super) fn lowest_offset(&self, i: usize) -> u64 {
        if self.g.plain {
            return self.floor[i];
        }
        let base = align_up(self.floor[i], self.g.align[i]);
        let fixed =
            &self.g.fixed[self.g.fixed_start[i] as usize..self.g.fixed_start[i + 1] as usize];
        first_fit_from(fixed, base, self.g.size[i], self.g.align[i])
    }

    /// Places `i` at `o`; true when that raised an unplaced buffer's floor
    /// (the buffer has a "hat").
    pub(super) fn place(&mut self, i: usize, o: u64) -> bool {
        let end = o + self.g.size[i];
        self.undo.push(Undo::Placed(i as u32));
        self.offset[i] = o;
        self.placed += 1;
        let mut hat = false;
        let gapped = !self.g.adj_size.is_empty();
        for k in self.g.adj_start[i]..self.g.adj_start[i + 1] {
            let j = self.g.adj[k as usize];
            // With gaps, a neighbour above clears i's effective size.
            let end = if gapped {
                o + self.g.adj_size[k as usize]
            } else {
                end
            };
            if self.floor[j as usize] < end && self.offset[j as usize] == UNPLACED {
                hat = true;
                self.undo.push(Undo::Floor(j, self.floor[j as usize]));
                self.floor[j as usize] = end;
            }
        }
        let (lo, hi) = self.g.sections[i];
        for c in &mut self.crossing[lo as usize + 1..hi as usize] {
            *c -= 1;
        }
        let g = self.g;
        for (lo, hi, wlo, whi) in g.pieces_of(i) {
            let end = o + whi;
            for s in lo..hi {
                self.section_remaining[s as usize] -= whi - wlo;
                if self.section_floor[s as usize] < end {
                    self.undo
                        .push(Undo::SectionFloor(s, self.section_floor[s as usize]));
                    self.section_floor[s as usize] = end;
                }
            }
        }
        hat
    }

    pub(super) fn rollback(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(Undo::Floor(j, v)) => self.floor[j as usize] = v,
                Some(Undo::SectionFloor(s, v)) => self.section_floor[s as usize] = v,
                Some(Undo::Rank(i, r)) => self.rank[i as usize] = r,
                Some(Undo::Placed(i)) => {
                    let i = i as usize;
                    self.offset[i] = UNPLACED;
                    self.placed -= 1;
                    let (lo, hi) = self.g.sections[i];
                    for c in &mut self.crossing[lo as usize + 1..hi as usize] {
                        *c += 1;
                    }
                    let g = self.g;
                    for (lo, hi, wlo, whi) in g.pieces_of(i) {
                        for s in lo..hi {
                            self.section_remaining[s as usize] += whi - wlo;
                        }
                    }
                }
                None => break,
            }
        }
    }
}
