//! Exact search: the MiniMalloc algorithm (Moffitt, ASPLOS 2023; the paper in
//! `shared/papers/minimalloc.txt`). A depth-first search over *canonical*
//! partial solutions (§6.1), pruned by cross-section inference (§6.2, eq. 3)
//! and dominance (§6.3), expanding the lowest offsets first (§7).
//!
//! It decides "is there a plan within capacity C?" and, without a capacity,
//! minimises C between the max load and the best greedy makespan.
//!
//! Beyond the paper's pseudocode, as in MiniMalloc's reference code (§7
//! names its design choices): dynamic temporal decomposition during search,
//! hatless pruning, and several static preorders (TWA, WAT, TAW) searched in
//! parallel.
//!
//! Deviations from the paper, and why:
//! - a fourth preorder (area alone) joins the default set: it decides the
//!   hardest public instance (challenging E) far sooner than the others;
//! - before expanding a child at offset `o`, eq. 3 is applied to it in O(1):
//!   the child's floor is at least `o` everywhere, so `o` plus the highest
//!   remaining section size must fit (candidates above are skipped);
//! - the preorder searches run in lockstep (they meet every few thousand
//!   nodes) so that the plan found does not depend on thread timing;
//! - fixed buffers are honoured by placing a buffer at the lowest aligned
//!   offset at or above its canonical floor that clears the fixed buffers it
//!   meets. This is sound, but the canonical argument no longer guarantees
//!   completeness, so an exhausted search of a group with fixed buffers is
//!   reported as "unknown", never as "proven infeasible".

use std::time::Duration;

use crate::greedy::{align_up, first_fit_from};
use crate::index::BufferIdx;
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};
use crate::solver::{
    minimise, Deadline, NotFoundReason, Probe, Solution, SolveError, SolveOptions, Solver,
};
use crate::sweep::{overlap_csr, section_loads, section_spans, time_groups, MaxTree};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

/// Static orders in which the search considers buffers with equal offsets
/// (and the tie-break of index monotonicity). Named after MiniMalloc's
/// preordering keys, most significant first: T, the section total (the
/// highest load over the buffer's lifetime); W, the width (lifetime); A, the
/// area (size × lifetime). Larger keys come first, ties by input order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preorder {
    /// Section total, then width, then area.
    Twa,
    /// Width, then area, then section total.
    Wat,
    /// Section total, then area, then width.
    Taw,
    /// Area alone.
    Area,
}

impl Preorder {
    /// Every preorder, the default set tried by the search.
    pub const ALL: [Preorder; 4] = [Preorder::Twa, Preorder::Wat, Preorder::Taw, Preorder::Area];

    /// The keys, most significant first.
    fn keys(self) -> &'static [u8] {
        match self {
            Preorder::Twa => b"TWA",
            Preorder::Wat => b"WAT",
            Preorder::Taw => b"TAW",
            Preorder::Area => b"A",
        }
    }
}

/// The paper's techniques, each switchable for ablation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Only canonical partial solutions: offset and index monotonic (§6.1).
    pub canonical: bool,
    /// Cross-section inference, eq. 3 with the max-offset floor (§6.2).
    pub section_inference: bool,
    /// Use the effective section height in eq. 3 (§6.2).
    pub effective_height: bool,
    /// Prune extensions with `o_i >= h_min` (§6.3).
    pub dominance: bool,
    /// Expand the lowest offsets first, then the static preorder (§7);
    /// without it, candidates follow the preorder alone.
    pub dynamic_order: bool,
    /// Static preorders: each one runs its own search, in parallel and in
    /// lockstep (the first to decide wins, the same one whatever the
    /// timing), or in turn with restarts when `restart_backtracks > 0`.
    pub preorders: Vec<Preorder>,
    /// When positive: one search at a time, restarting with the next
    /// preorder after this many backtracks, doubled after each round
    /// through all preorders.
    pub restart_backtracks: u64,
    /// Solve independent time ranges separately (§7), at the root and
    /// whenever the unplaced buffers split during the search.
    pub decompose: bool,
    /// Hatless pruning (from MiniMalloc's reference implementation): when a
    /// buffer fails at a node without having raised any unplaced buffer's
    /// floor, the node fails.
    pub hatless: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            canonical: true,
            section_inference: true,
            effective_height: true,
            dominance: true,
            dynamic_order: true,
            preorders: Preorder::ALL.to_vec(),
            restart_backtracks: 0,
            decompose: true,
            hatless: true,
        }
    }
}

/// The MiniMalloc exact search solver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    /// Which techniques are on.
    pub options: SearchOptions,
}

/// The answer for one capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Offsets of the group's buffers, within the capacity.
    Fits(Vec<u64>),
    /// No plan within the capacity exists.
    Infeasible,
    /// The time limit ran out first (or completeness is not guaranteed).
    Unknown,
}

/// Search effort.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Nodes expanded.
    pub nodes: u64,
    /// Failed extensions undone.
    pub backtracks: u64,
    /// Restarts with another preorder.
    pub restarts: u64,
}

impl Solver for Search {
    fn name(&self) -> String {
        "search".into()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let deadline = options.deadline();
        let max_load = problem.max_load();
        let mut effort = Effort::default();
        let counters = |e: &Effort| {
            vec![
                ("nodes", e.nodes),
                ("backtracks", e.backtracks),
                ("restarts", e.restarts),
            ]
        };
        // The best greedy plan: the upper bound, and often the answer.
        let (_, greedy) = crate::greedy::best_variant(problem, &|| deadline.passed());
        let groups = Groups::new(problem, self.options.decompose, &deadline);
        let greedy_makespan = greedy.makespan(problem);
        let lower = max_load.max(problem.fixed_end());
        options.progress.improve(greedy_makespan);
        options.progress.raise_lower_bound(lower);

        if let Some(capacity) = problem.capacity {
            if greedy_makespan <= capacity {
                let mut s = Solution::within_capacity(
                    problem,
                    greedy,
                    max_load,
                    NotFoundReason::Heuristic,
                )?;
                s.counters = counters(&effort);
                return Ok(s);
            }
            if lower > capacity {
                return Err(SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::ProvenInfeasible,
                    best_makespan: Some(greedy_makespan),
                    counters: Vec::new(),
                });
            }
            let mut decide = |c: u64, d: &Deadline| match &groups {
                Some(groups) => groups.decide(problem, c, &self.options, d, &mut effort),
                None => Decision::Unknown,
            };
            let tight = lower.div_ceil(problem.granularity().max(1)) * problem.granularity().max(1);
            let decision = match deadline.remaining() {
                // Slack weakens eq. 3 and the search can wander where the
                // tightest capacity would be decided at once (challenging A,
                // B, E, F, G at 1.02 times the max load): C and the lower
                // bound (a plan there fits C too) take turns, with time
                // slices doubling from a 64th of the budget; C alone once
                // the lower bound is proven infeasible.
                Some(left) if tight < capacity => {
                    let mut slice = (left / 64).max(Duration::from_millis(10));
                    let mut try_tight = true;
                    loop {
                        // An answer of "unknown" before the slice ran out
                        // is final: the search ended without deciding
                        // (it is incomplete with fixed buffers), and a
                        // longer slice would answer the same.
                        let within = deadline.within(slice);
                        match decide(capacity, &within) {
                            Decision::Unknown if within.passed() && !deadline.passed() => {}
                            other => break other,
                        }
                        if try_tight {
                            let within = deadline.within(slice);
                            match decide(tight, &within) {
                                fits @ Decision::Fits(_) => break fits,
                                Decision::Infeasible => try_tight = false,
                                Decision::Unknown if !within.passed() => try_tight = false,
                                Decision::Unknown => {}
                            }
                        }
                        if deadline.passed() {
                            break Decision::Unknown;
                        }
                        slice = slice.saturating_mul(2);
                    }
                }
                _ => decide(capacity, &deadline),
            };
            return match decision {
                Decision::Fits(offsets) => {
                    let mut s = Solution::within_capacity(
                        problem,
                        Plan::from_offsets(offsets),
                        max_load,
                        NotFoundReason::Heuristic,
                    )?;
                    s.counters = counters(&effort);
                    Ok(s)
                }
                Decision::Infeasible => Err(SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::ProvenInfeasible,
                    best_makespan: Some(greedy_makespan),
                    counters: counters(&effort),
                }),
                Decision::Unknown => Err(SolveError::NotFound {
                    capacity,
                    reason: if deadline.passed() {
                        NotFoundReason::TimeLimit
                    } else {
                        NotFoundReason::Incomplete
                    },
                    best_makespan: Some(greedy_makespan),
                    counters: counters(&effort),
                }),
            };
        }

        // Minimise: the smallest feasible capacity in [lower, best).
        let mut s = minimise(
            problem,
            greedy,
            lower,
            &deadline,
            &options.progress,
            |c, d| match groups.as_ref().map_or(Decision::Unknown, |g| {
                g.decide(problem, c, &self.options, d, &mut effort)
            }) {
                Decision::Fits(offsets) => Probe::Fits(Plan::from_offsets(offsets)),
                Decision::Infeasible => Probe::Infeasible,
                Decision::Unknown => Probe::Unknown,
            },
        );
        s.counters = counters(&effort);
        Ok(s)
    }
}

/// The independent time groups of a problem, each searched on its own.
struct Groups {
    /// Global indices of each group's buffers.
    members: Vec<Vec<BufferIdx>>,
    /// Static data of each group, built once for every capacity tried.
    groups: Vec<Group>,
}

impl Groups {
    /// The groups' data; `None` when the deadline passes first (instances
    /// of many thousands of buffers).
    fn new(problem: &Problem, decompose: bool, deadline: &Deadline) -> Option<Self> {
        // The greedy plan before may have used the whole budget.
        if deadline.passed() {
            return None;
        }
        let (group_of, count) = if decompose {
            time_groups(problem.buffers(), 1)
        } else {
            (vec![0; problem.len()], usize::from(!problem.is_empty()))
        };
        let mut members = vec![Vec::new(); count];
        for b in problem.indices() {
            members[group_of[b.index()] as usize].push(b);
        }
        let groups = members
            .iter()
            .map(|m| Group::new(problem.buffers(), m, deadline))
            .collect::<Option<Vec<Group>>>()?;
        Some(Groups { members, groups })
    }

    /// Decides every group at `capacity`; the plan is the union.
    fn decide(
        &self,
        problem: &Problem,
        capacity: u64,
        options: &SearchOptions,
        deadline: &Deadline,
        effort: &mut Effort,
    ) -> Decision {
        let mut offsets = vec![0u64; problem.len()];
        for (members, group) in self.members.iter().zip(&self.groups) {
            match group.decide(capacity, options, deadline, effort) {
                Decision::Fits(local) => {
                    for (b, o) in members.iter().zip(local) {
                        offsets[b.index()] = o;
                    }
                }
                other => return other,
            }
        }
        Decision::Fits(offsets)
    }
}

/// Static data of one time group: free buffers get local indices `0..n`.
struct Group {
    /// Offsets of fixed members, by member position.
    members: Vec<(BufferIdx, Option<u64>)>,
    /// Member position of each free buffer.
    free: Vec<usize>,
    size: Vec<u64>,
    align: Vec<u64>,
    /// Section range `[lo, hi)` of each free buffer.
    sections: Vec<(u32, u32)>,
    /// Number of sections.
    section_count: usize,
    /// Free buffers overlapping each free buffer (CSR).
    adj_start: Vec<u32>,
    adj: Vec<u32>,
    /// Address ranges of fixed buffers overlapping each free buffer, sorted (CSR).
    fixed_start: Vec<u32>,
    fixed: Vec<(u64, u64)>,
    /// Section totals of free sizes.
    section_load: Vec<u64>,
    /// Highest load (free buffers) over each free buffer's lifetime.
    contention: Vec<u64>,
    lifetime: Vec<u64>,
}

impl Group {
    /// The group's data, or `None` when the deadline passes first.
    fn new(buffers: &[Buffer], members: &[BufferIdx], deadline: &Deadline) -> Option<Self> {
        let members: Vec<(BufferIdx, Option<u64>)> = members
            .iter()
            .map(|&b| (b, buffers[b.index()].fixed_offset))
            .collect();
        let free: Vec<usize> = (0..members.len())
            .filter(|&i| members[i].1.is_none())
            .collect();
        let buf = |i: usize| &buffers[members[free[i]].0.index()];
        let n = free.len();
        // Sections of every member (fixed ones too), kept for free buffers.
        let (spans, section_count) =
            section_spans(members.iter().map(|(b, _)| &buffers[b.index()]));
        let sections: Vec<(u32, u32)> = free.iter().map(|&m| spans[m]).collect();
        // Section loads by a difference array, contention by range maxima:
        // O(n log n + sections) even when lifetimes span many sections.
        let section_load = section_loads(
            sections
                .iter()
                .enumerate()
                .map(|(i, &span)| (span, buf(i).size)),
            section_count,
        );
        let loads = MaxTree::new(&section_load);
        let contention = sections
            .iter()
            .map(|&(lo, hi)| loads.max(lo as usize, hi as usize))
            .collect();
        let fixed_members: Vec<(&Buffer, u64)> = members
            .iter()
            .filter_map(|(b, o)| o.map(|o| (&buffers[b.index()], o)))
            .collect();
        let (adj_start, adj) = overlap_csr(&sections, &|| deadline.passed())?;
        let mut fixed_start = vec![0u32];
        let mut fixed = Vec::new();
        for i in 0..n {
            let from = fixed.len();
            for &(f, o) in &fixed_members {
                if f.overlaps_in_time(buf(i)) {
                    fixed.push((o, o + f.size));
                }
            }
            fixed[from..].sort_unstable();
            fixed_start.push(fixed.len() as u32);
        }
        Some(Group {
            size: (0..n).map(|i| buf(i).size).collect(),
            align: (0..n).map(|i| buf(i).alignment).collect(),
            lifetime: (0..n).map(|i| buf(i).lifetime()).collect(),
            members,
            free,
            sections,
            section_count,
            adj_start,
            adj,
            fixed_start,
            fixed,
            section_load,
            contention,
        })
    }

    /// Ranks of free buffers under a preorder (0 = first).
    fn ranks(&self, preorder: Preorder) -> Vec<u32> {
        let n = self.size.len();
        let mut order: Vec<usize> = (0..n).collect();
        let key = |i: usize, k: u8| -> u128 {
            match k {
                b'W' => u128::from(self.lifetime[i]),
                b'A' => u128::from(self.size[i]) * u128::from(self.lifetime[i]),
                _ => u128::from(self.contention[i]),
            }
        };
        order.sort_by(|&i, &j| {
            for &k in preorder.keys() {
                let c = key(j, k).cmp(&key(i, k));
                if c != std::cmp::Ordering::Equal {
                    return c;
                }
            }
            i.cmp(&j)
        });
        let mut rank = vec![0u32; n];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        rank
    }

    /// Decides whether the group fits in `capacity`: one search per
    /// preorder, in parallel lockstep, or in turn with restarts.
    fn decide(
        &self,
        capacity: u64,
        options: &SearchOptions,
        deadline: &Deadline,
        effort: &mut Effort,
    ) -> Decision {
        let preorders = if options.preorders.is_empty() {
            vec![Preorder::Twa]
        } else {
            options.preorders.clone()
        };
        if options.restart_backtracks > 0 || preorders.len() == 1 {
            self.decide_in_turn(capacity, options, &preorders, deadline, effort)
        } else {
            self.decide_in_lockstep(capacity, options, &preorders, deadline, effort)
        }
    }

    /// The answer of a search that ended with `outcome`.
    fn decision(&self, outcome: &Outcome, state: &State) -> Option<Decision> {
        match outcome {
            Outcome::Found => {
                let mut offsets: Vec<u64> =
                    self.members.iter().map(|(_, o)| o.unwrap_or(0)).collect();
                for (i, &m) in self.free.iter().enumerate() {
                    offsets[m] = state.offset[i];
                }
                Some(Decision::Fits(offsets))
            }
            // Placing buffers above fixed ones is sound but not complete.
            Outcome::Exhausted if self.members.iter().all(|(_, o)| o.is_none()) => {
                Some(Decision::Infeasible)
            }
            Outcome::Exhausted | Outcome::OutOfTime => Some(Decision::Unknown),
            Outcome::OutOfBudget | Outcome::Stopped => None,
        }
    }

    /// One search per preorder, each in its own thread; every
    /// [`LOCKSTEP_NODES`] nodes they wait for each other, and stop once one
    /// has decided. The answer is that of the first preorder (in the given
    /// order) that decided within the last round, so it does not depend on
    /// the thread timing (unless the clock stops a search).
    fn decide_in_lockstep(
        &self,
        capacity: u64,
        options: &SearchOptions,
        preorders: &[Preorder],
        deadline: &Deadline,
        effort: &mut Effort,
    ) -> Decision {
        let lockstep = Lockstep {
            barrier: Barrier::new(preorders.len()),
            decided_at: AtomicU64::new(u64::MAX),
        };
        let results: Vec<(Option<Decision>, u64, u64)> = std::thread::scope(|scope| {
            let handles: Vec<_> = preorders
                .iter()
                .map(|&p| {
                    let lockstep = &lockstep;
                    scope.spawn(move || {
                        let rank = self.ranks(p);
                        let mut state =
                            State::new(self, capacity, rank, options, deadline, u64::MAX);
                        state.lockstep = Some(lockstep);
                        let outcome = state.search();
                        if !matches!(outcome, Outcome::Stopped) {
                            lockstep.decide(state.meetings + 1);
                        }
                        (
                            self.decision(&outcome, &state),
                            state.nodes,
                            state.backtracks,
                        )
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or((Some(Decision::Unknown), 0, 0)))
                .collect()
        });
        let mut answer = Decision::Unknown;
        for (decision, nodes, backtracks) in results {
            effort.nodes += nodes;
            effort.backtracks += backtracks;
            match decision {
                Some(d @ (Decision::Fits(_) | Decision::Infeasible))
                    if answer == Decision::Unknown =>
                {
                    answer = d
                }
                _ => {}
            }
        }
        answer
    }

    /// One search at a time, restarting through the preorders with a
    /// growing backtrack budget until the deadline.
    fn decide_in_turn(
        &self,
        capacity: u64,
        options: &SearchOptions,
        preorders: &[Preorder],
        deadline: &Deadline,
        effort: &mut Effort,
    ) -> Decision {
        let mut budget = if options.restart_backtracks == 0 {
            u64::MAX
        } else {
            options.restart_backtracks
        };
        let mut round = 0usize;
        loop {
            let preorder = preorders[round % preorders.len()];
            let mut state = State::new(
                self,
                capacity,
                self.ranks(preorder),
                options,
                deadline,
                budget,
            );
            let outcome = state.search();
            effort.nodes += state.nodes;
            effort.backtracks += state.backtracks;
            if let Some(decision) = self.decision(&outcome, &state) {
                return decision;
            }
            effort.restarts += 1;
            round += 1;
            if round % preorders.len() == 0 {
                budget = budget.saturating_mul(2);
            }
        }
    }
}

/// Nodes each lockstep search expands between two meetings.
const LOCKSTEP_NODES: u64 = 4096;

/// Searches run in lockstep: they meet every [`LOCKSTEP_NODES`] nodes, and
/// all stop at the first meeting at which one of them has decided.
struct Lockstep {
    barrier: Barrier,
    /// The first meeting at which a search had decided (`u64::MAX`: none).
    decided_at: AtomicU64,
}

impl Lockstep {
    /// Meeting number `meeting` (counted from 1): waits for the other
    /// searches; true when one of them has decided by this meeting.
    fn meet(&self, meeting: u64) -> bool {
        self.barrier.wait();
        self.decided_at.load(Ordering::SeqCst) <= meeting
    }

    /// Announces that this search has ended, at its last meeting.
    fn decide(&self, meeting: u64) {
        self.decided_at.fetch_min(meeting, Ordering::SeqCst);
        self.barrier.wait();
    }
}

enum Outcome {
    Found,
    Exhausted,
    OutOfTime,
    OutOfBudget,
    /// Another search of the lockstep decided first.
    Stopped,
}

/// Undo-log entries: restoring the search state on backtrack.
enum Undo {
    Floor(u32, u64),
    SectionFloor(u32, u64),
    Placed(u32),
}

const UNPLACED: u64 = u64::MAX;

/// A candidate extension: (offset, preorder rank, buffer).
type Candidate = (u64, u32, u32);

/// The incremental search state.
struct State<'a> {
    g: &'a Group,
    capacity: u64,
    rank: Vec<u32>,
    options: &'a SearchOptions,
    deadline: &'a Deadline,
    budget: u64,
    /// Offset of each free buffer, or UNPLACED.
    offset: Vec<u64>,
    /// Canonical floor: highest end of placed overlapping free buffers.
    floor: Vec<u64>,
    /// Highest end of placed buffers in each section.
    section_floor: Vec<u64>,
    /// Free sizes not yet placed in each section.
    section_remaining: Vec<u64>,
    /// `crossing[t]`: unplaced buffers alive in both section `t - 1` and
    /// section `t`. A zero cuts the unplaced buffers into independent time
    /// ranges (§7, dynamic temporal decomposition).
    crossing: Vec<u32>,
    placed: usize,
    undo: Vec<Undo>,
    /// Candidate lists of each recursion level, reused.
    scratch: Vec<Vec<Candidate>>,
    level: usize,
    /// Scratch: effective height of each section.
    effective: Vec<u64>,
    /// Scratch: section boundaries where the unplaced buffers split.
    cuts: Vec<u32>,
    nodes: u64,
    backtracks: u64,
    /// The other searches this one runs in lockstep with.
    lockstep: Option<&'a Lockstep>,
    /// Meetings with the other lockstep searches so far.
    meetings: u64,
}

impl<'a> State<'a> {
    fn new(
        g: &'a Group,
        capacity: u64,
        rank: Vec<u32>,
        options: &'a SearchOptions,
        deadline: &'a Deadline,
        budget: u64,
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
            rank,
            options,
            deadline,
            budget,
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
            cuts: Vec::new(),
            nodes: 0,
            backtracks: 0,
            lockstep: None,
            meetings: 0,
        }
    }

    /// The lowest aligned offset at or above the floor of `i` that clears
    /// the fixed buffers it meets.
    fn lowest_offset(&self, i: usize) -> u64 {
        let base = align_up(self.floor[i], self.g.align[i]);
        let fixed =
            &self.g.fixed[self.g.fixed_start[i] as usize..self.g.fixed_start[i + 1] as usize];
        first_fit_from(fixed, base, self.g.size[i], self.g.align[i])
    }

    /// Searches the whole group.
    fn search(&mut self) -> Outcome {
        self.node(0, self.g.section_count as u32, 0, 0)
    }

    /// One node of the search over the unplaced buffers whose lifetimes lie
    /// in sections `[lo, hi)`. Canonical extensions (§6.1) start at offset
    /// `top`, and at `top` itself only buffers of rank `min_rank` or more.
    fn node(&mut self, lo: u32, hi: u32, top: u64, min_rank: u32) -> Outcome {
        self.nodes += 1;
        // Nodes cost O(buffers): look at the clock at every node of large
        // groups, every 256 nodes of small ones.
        if self.nodes % 256 == 0 || self.g.size.len() > 2048 {
            if self.deadline.passed() {
                return Outcome::OutOfTime;
            }
            if self.nodes % LOCKSTEP_NODES == 0 && self.lockstep.is_some() {
                if let Some(lockstep) = self.lockstep {
                    self.meetings += 1;
                    if lockstep.meet(self.meetings) {
                        return Outcome::Stopped;
                    }
                }
            }
        }
        if self.backtracks > self.budget {
            return Outcome::OutOfBudget;
        }
        let level = self.level;
        if self.scratch.len() <= level {
            self.scratch.push(Vec::new());
        }
        let mut candidates = std::mem::take(&mut self.scratch[level]);
        candidates.clear();
        self.level += 1;
        let outcome = self.expand(lo, hi, top, min_rank, &mut candidates);
        self.level -= 1;
        self.scratch[level] = candidates;
        outcome
    }

    fn expand(
        &mut self,
        lo: u32,
        hi: u32,
        top: u64,
        min_rank: u32,
        candidates: &mut Vec<Candidate>,
    ) -> Outcome {
        // Lowest offsets of the unplaced buffers; h_min for dominance (§6.3).
        let mut h_min = u64::MAX;
        for i in 0..self.g.size.len() {
            let start = self.g.sections[i].0;
            if self.offset[i] != UNPLACED || start < lo || start >= hi {
                continue;
            }
            let o = self.lowest_offset(i);
            let h = o + self.g.size[i];
            if h > self.capacity {
                return Outcome::Exhausted;
            }
            h_min = h_min.min(h);
            candidates.push((o, self.rank[i], i as u32));
        }
        if candidates.is_empty() {
            return Outcome::Found;
        }
        let opts = self.options;
        // The highest offset a child may take: placed at `o`, a buffer makes
        // `o` the floor of every section (canonical), so eq. 3 fails in the
        // child as soon as `o` plus a section's remaining sizes exceeds the
        // capacity (in the buffer's own sections its size moves from the
        // remaining sizes to the floor).
        let mut highest = u64::MAX;
        if opts.section_inference {
            let feasible = self.sections_feasible(lo, hi, top, candidates);
            // On large groups one node can take a while: look at the clock.
            if self.g.size.len() > 2048 && self.deadline.passed() {
                return Outcome::OutOfTime;
            }
            match feasible {
                None => return Outcome::Exhausted,
                Some(remaining) if opts.canonical => highest = self.capacity - remaining,
                Some(_) => {}
            }
        }
        if opts.decompose {
            if let Some(parts) = self.split(lo, hi, candidates) {
                // Independent parts: each must be completed, whatever the
                // others do, so the first that fails fails the node.
                for (a, b) in parts {
                    match self.node(a, b, top, min_rank) {
                        Outcome::Found => {}
                        other => return other,
                    }
                }
                return Outcome::Found;
            }
        }
        candidates.retain(|&(o, r, _)| {
            let canonical = !opts.canonical || o > top || (o == top && r >= min_rank);
            let undominated = !opts.dominance || o < h_min;
            canonical && undominated && o <= highest
        });
        if opts.dynamic_order {
            candidates.sort_unstable();
        } else {
            candidates.sort_unstable_by_key(|&(_, r, _)| r);
        }
        for &(o, r, i) in candidates.iter() {
            let mark = self.undo.len();
            let hat = self.place(i as usize, o);
            match self.node(lo, hi, o, r + 1) {
                Outcome::Found => return Outcome::Found,
                Outcome::Exhausted => {}
                stop => {
                    self.rollback(mark);
                    return stop;
                }
            }
            self.rollback(mark);
            self.backtracks += 1;
            // Hatless pruning: when placing the failed buffer raised no
            // unplaced buffer's floor, it can sit at this very offset in
            // every completion, which would then start with it; so no later
            // candidate can succeed.
            if opts.hatless && opts.dynamic_order && opts.canonical && !hat {
                break;
            }
        }
        Outcome::Exhausted
    }

    /// The independent time ranges of the unplaced buffers of `[lo, hi)`,
    /// when there are at least two (§7).
    fn split(&mut self, lo: u32, hi: u32, candidates: &[Candidate]) -> Option<Vec<(u32, u32)>> {
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
        if used.iter().filter(|&&u| u).count() < 2 {
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

    /// Places `i` at `o`; true when that raised an unplaced buffer's floor
    /// (the buffer has a "hat").
    fn place(&mut self, i: usize, o: u64) -> bool {
        let end = o + self.g.size[i];
        self.undo.push(Undo::Placed(i as u32));
        self.offset[i] = o;
        self.placed += 1;
        let mut hat = false;
        for k in self.g.adj_start[i]..self.g.adj_start[i + 1] {
            let j = self.g.adj[k as usize];
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
        for s in lo..hi {
            self.section_remaining[s as usize] -= self.g.size[i];
            if self.section_floor[s as usize] < end {
                self.undo
                    .push(Undo::SectionFloor(s, self.section_floor[s as usize]));
                self.section_floor[s as usize] = end;
            }
        }
        hat
    }

    fn rollback(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(Undo::Floor(j, v)) => self.floor[j as usize] = v,
                Some(Undo::SectionFloor(s, v)) => self.section_floor[s as usize] = v,
                Some(Undo::Placed(i)) => {
                    let i = i as usize;
                    self.offset[i] = UNPLACED;
                    self.placed -= 1;
                    let (lo, hi) = self.g.sections[i];
                    for c in &mut self.crossing[lo as usize + 1..hi as usize] {
                        *c += 1;
                    }
                    for s in lo..hi {
                        self.section_remaining[s as usize] += self.g.size[i];
                    }
                }
                None => break,
            }
        }
    }

    /// Eq. 3 over sections `[lo, hi)`: in every section, the unplaced sizes
    /// stacked above the section height must fit under the capacity. The
    /// height is the section floor, raised to `top` (canonical: nothing goes
    /// below the highest offset) and to the effective height: the lowest
    /// offset an unplaced buffer alive in the section can take (§6.2).
    ///
    /// Returns the highest remaining size of a section, or `None` when a
    /// section overflows.
    fn sections_feasible(
        &mut self,
        lo: u32,
        hi: u32,
        top: u64,
        candidates: &[Candidate],
    ) -> Option<u64> {
        let (lo, hi) = (lo as usize, hi as usize);
        if self.options.effective_height {
            self.effective[lo..hi].fill(u64::MAX);
            for (k, &(o, _, j)) in candidates.iter().enumerate() {
                // Large groups: stop early at the deadline (the caller sees
                // it passed and does not take this for a proof).
                if k % 256 == 255 && self.g.size.len() > 2048 && self.deadline.passed() {
                    return Some(0);
                }
                let (a, b) = self.g.sections[j as usize];
                for e in &mut self.effective[a as usize..b as usize] {
                    *e = (*e).min(o);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use proptest::prelude::*;

    /// The paper's running example (Figure 2): five buffers, capacity 12.
    fn running_example() -> Problem {
        let b = |id: &str, s, e| Buffer::new(id, s, e, 4);
        Problem::new(
            vec![
                b("b1", 0, 3),
                b("b2", 3, 9),
                b("b3", 0, 9),
                b("b4", 9, 21),
                b("b5", 0, 21),
            ],
            None,
        )
        .unwrap()
    }

    /// Decides `problem` at `capacity` with the search alone (no greedy).
    fn decide(problem: &Problem, capacity: u64, options: &SearchOptions) -> (Decision, Effort) {
        let mut effort = Effort::default();
        let groups = Groups::new(problem, options.decompose, &Deadline::default()).unwrap();
        (
            groups.decide(
                problem,
                capacity,
                options,
                &Deadline::default(),
                &mut effort,
            ),
            effort,
        )
    }

    #[test]
    fn running_example_fits_12_and_not_11() {
        let p = running_example();
        for options in [
            SearchOptions::default(),
            SearchOptions {
                decompose: false,
                ..Default::default()
            },
        ] {
            let (d, effort) = decide(&p, 12, &options);
            let Decision::Fits(offsets) = d else {
                panic!("{d:?}")
            };
            let plan = Plan::from_offsets(offsets);
            validate(&p.clone().with_capacity(Some(12)), &plan).unwrap();
            assert!(effort.nodes >= 1);
            assert_eq!(decide(&p, 11, &options).0, Decision::Infeasible);
        }
        // Through the solver interface.
        let s = Search::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        assert_eq!((s.makespan, s.lower_bound, s.optimal), (12, 12, true));
        let err =
            Search::default().solve(&p.clone().with_capacity(Some(11)), &SolveOptions::default());
        assert!(matches!(
            err,
            Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            })
        ));
    }

    #[test]
    fn every_ablation_still_decides_the_example() {
        let p = running_example();
        let all = SearchOptions::default();
        let variants = [
            SearchOptions {
                canonical: false,
                ..all.clone()
            },
            SearchOptions {
                section_inference: false,
                ..all.clone()
            },
            SearchOptions {
                effective_height: false,
                ..all.clone()
            },
            SearchOptions {
                dominance: false,
                ..all.clone()
            },
            SearchOptions {
                dynamic_order: false,
                ..all.clone()
            },
            SearchOptions {
                preorders: vec![Preorder::Wat],
                ..all.clone()
            },
            SearchOptions {
                hatless: false,
                ..all.clone()
            },
            SearchOptions {
                decompose: false,
                ..all.clone()
            },
            SearchOptions {
                restart_backtracks: 1,
                ..all.clone()
            },
        ];
        for options in variants {
            assert!(
                matches!(decide(&p, 12, &options).0, Decision::Fits(_)),
                "{options:?}"
            );
            assert_eq!(
                decide(&p, 11, &options).0,
                Decision::Infeasible,
                "{options:?}"
            );
        }
    }

    #[test]
    fn time_limit_gives_unknown_not_a_wrong_answer() {
        let g = crate::generate::generate(crate::generate::Kind::Random, 60, 1).problem;
        let load = g.max_load();
        let options = SolveOptions {
            time_limit: Some(Duration::from_millis(50)),
            ..SolveOptions::default()
        };
        let started = std::time::Instant::now();
        match Search::default().solve(&g.clone().with_capacity(Some(load)), &options) {
            Ok(s) => validate(&g.with_capacity(Some(load)), &s.plan).unwrap(),
            Err(SolveError::NotFound { reason, .. }) => {
                assert!(matches!(
                    reason,
                    NotFoundReason::TimeLimit | NotFoundReason::ProvenInfeasible
                ))
            }
        }
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    /// Two independent halves joined by nothing: the search splits them
    /// (§7) and the plan is the same in every run (lockstep preorders).
    #[test]
    fn lockstep_search_is_deterministic_and_splits_independent_parts() {
        let g = crate::generate::generate(crate::generate::Kind::Perfect, 120, 3).problem;
        let load = g.max_load();
        let runs: Vec<(Decision, Effort)> = (0..3)
            .map(|_| decide(&g, load, &SearchOptions::default()))
            .collect();
        let Decision::Fits(offsets) = &runs[0].0 else {
            panic!("{:?}", runs[0].0)
        };
        validate(
            &g.clone().with_capacity(Some(load)),
            &Plan::from_offsets(offsets.clone()),
        )
        .unwrap();
        assert!(runs.iter().all(|r| r == &runs[0]));
    }

    #[test]
    fn minimising_rounds_capacities_to_the_granularity() {
        // Sizes are multiples of 4: from a weak lower bound (1) and a plan
        // of makespan 20, the optimum 12 is found and proven by asking only
        // multiples of 4 (never 11, 10 or 9).
        let p = running_example();
        assert_eq!(p.granularity(), 4);
        let mut asked = Vec::new();
        let s = crate::solver::minimise(
            &p,
            Plan::from_offsets(vec![0, 4, 8, 12, 16]),
            1,
            &Deadline::default(),
            &crate::solver::Progress::default(),
            |c, _| {
                asked.push(c);
                match decide(&p, c, &SearchOptions::default()).0 {
                    Decision::Fits(o) => Probe::Fits(Plan::from_offsets(o)),
                    Decision::Infeasible => Probe::Infeasible,
                    Decision::Unknown => Probe::Unknown,
                }
            },
        );
        assert_eq!((s.makespan, s.lower_bound, s.optimal), (12, 12, true));
        assert_eq!(asked, vec![4, 12, 8]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Beyond brute-force sizes: the pruning that is not in the paper
        /// (hatless, dynamic decomposition, the child cutoff through eq. 3)
        /// never changes an answer of the plain search.
        #[test]
        fn extra_pruning_agrees_with_the_plain_search(
            spec in proptest::collection::vec((0u64..30, 1u64..12, 1u64..9), 10..16),
            slack in 0u64..3,
        ) {
            let buffers = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size))| Buffer::new(format!("b{i}"), s, s + len, size))
                .collect();
            let p = Problem::new(buffers, None).unwrap();
            let capacity = p.max_load() + slack;
            let plain = SearchOptions {
                hatless: false,
                decompose: false,
                preorders: vec![Preorder::Twa],
                ..SearchOptions::default()
            };
            let expected = decide(&p, capacity, &plain).0;
            let got = decide(&p, capacity, &SearchOptions::default()).0;
            prop_assert_eq!(
                matches!(expected, Decision::Fits(_)),
                matches!(got, Decision::Fits(_))
            );
            if let Decision::Fits(offsets) = got {
                prop_assert_eq!(
                    validate(&p.clone().with_capacity(Some(capacity)), &Plan::from_offsets(offsets)),
                    Ok(())
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn minimised_capacity_is_the_brute_force_optimum(
            spec in proptest::collection::vec((0u64..12, 1u64..8, 1u64..9, 0u32..3), 0..8)
        ) {
            let buffers = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size, a))| Buffer::new(format!("b{i}"), s, s + len, size).aligned(1 << a))
                .collect();
            let p = Problem::new(buffers, None).unwrap();
            let s = Search::default().solve(&p, &SolveOptions::default()).unwrap();
            prop_assert_eq!(validate(&p, &s.plan), Ok(()));
            prop_assert!(s.optimal);
            prop_assert_eq!(s.makespan, crate::testutil::brute_force(&p));
            // The search alone, at the optimum and one below.
            let opt = s.makespan;
            let all = SearchOptions::default();
            let variants = [
                all.clone(),
                SearchOptions { hatless: false, ..all.clone() },
                SearchOptions { decompose: false, ..all.clone() },
                SearchOptions { preorders: vec![Preorder::Area], ..all.clone() },
                SearchOptions { restart_backtracks: 2, ..all.clone() },
                SearchOptions { effective_height: false, dominance: false, ..all.clone() },
            ];
            for options in &variants {
                let d = decide(&p, opt, options).0;
                let Decision::Fits(offsets) = d else {
                    return Err(TestCaseError::fail(format!("{options:?}: {d:?}")));
                };
                let plan = Plan::from_offsets(offsets);
                prop_assert_eq!(validate(&p.clone().with_capacity(Some(opt)), &plan), Ok(()));
                if opt > 0 {
                    prop_assert_eq!(decide(&p, opt - 1, options).0, Decision::Infeasible, "{:?}", options);
                }
            }
        }
    }
}
