//! The search driver (TelaMalloc §5.1, §5.4): the runs of the search loop
//! with their restarts, for one group ([`Model::decide`]) and for all the
//! groups of a problem ([`Models::decide`]).

use super::holes::MEMO_CAPACITY;
use super::model::{Model, Models};
use super::state::{State, UNPLACED};
use super::{Effort, TelaOptions};
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solver::{NotFoundReason, Probe, Stop};
use rand::RngCore;

/// The work of a solve: the effort so far, and why the last capacity left
/// undecided was left so ([`Probe::Unknown`] carries no reason; only the
/// decision of a given capacity reports it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Work {
    pub(super) effort: Effort,
    /// The step limit, the time limit, or the search giving up.
    pub(super) undecided: Option<NotFoundReason>,
}

impl Work {
    /// [`Probe::Unknown`], for `reason`.
    pub(super) fn unknown(&mut self, reason: NotFoundReason) -> Probe {
        self.undecided = Some(reason);
        Probe::Unknown
    }
}

impl Models {
    /// Decides every group at `capacity`; the plan is the union. The step
    /// limit is shared by the groups; `seed` draws the restart noise.
    /// [`Probe::Infeasible`] is a proof (root propagation failed in a
    /// group).
    pub(super) fn decide(
        &self,
        problem: &Problem,
        capacity: u64,
        options: &TelaOptions,
        deadline: &Stop,
        seed: u64,
        work: &mut Work,
    ) -> Probe {
        let mut offsets: Vec<u64> = problem
            .buffers()
            .iter()
            .map(|b| b.fixed_offset.unwrap_or(0))
            .collect();
        let step_limit = work.effort.steps.saturating_add(options.step_limit);
        for (g, model) in self.models.iter().enumerate() {
            let seed = seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            match model.decide(capacity, options, deadline, seed, step_limit, work) {
                Probe::Fits(local) => {
                    for (b, &o) in model.global.iter().zip(local.offsets()) {
                        offsets[b.index()] = o;
                    }
                }
                other => return other,
            }
        }
        Probe::Fits(Plan::from_offsets(offsets))
    }
}

impl Model {
    /// Decides this group at `capacity` by runs of the search, until a plan,
    /// the step limit or the deadline. Each run has a step budget
    /// ([`TelaOptions::restart_steps`], doubled every second run); runs
    /// alternate without and with phases, and runs after the first draw
    /// their noise from `seed`. When the root
    /// runs out of candidates after an abandoned subtree (§5.4), the next
    /// run allows twice as many backtracks per subtree; after a few runs
    /// that ran out of candidates with nothing abandoned, the search gives
    /// up (with no noise, the next run would search alike). A plan found
    /// holds the offsets of the group's free buffers, by local index.
    pub(super) fn decide(
        &self,
        capacity: u64,
        options: &TelaOptions,
        deadline: &Stop,
        seed: u64,
        step_limit: u64,
        work: &mut Work,
    ) -> Probe {
        let mut state = State::new(self, capacity, options, deadline, seed);
        self.decide_in(&mut state, options, step_limit, work)
    }

    /// [`Model::decide`] in a state made for it (which may record the
    /// major backtracks). With the hole rule and a mirrored model, every
    /// second pair of runs searches the mirrored group ([`Model::mirror`],
    /// same local indices), sharing the failed states: whether the
    /// unplaced buffers fill the space above a skyline does not depend on
    /// the direction of the fill.
    pub(super) fn decide_in<'m>(
        &'m self,
        state: &mut State<'m>,
        options: &'m TelaOptions,
        step_limit: u64,
        work: &mut Work,
    ) -> Probe {
        let mut mirrored = match (&state.holes, &self.mirror) {
            (Some(_), Some(mirror)) => {
                let seed = state.rng.next_u64();
                let m = State::new(mirror, state.capacity, options, state.deadline, seed);
                Some(m).filter(|m| m.holes.is_some())
            }
            _ => None,
        };
        for s in std::iter::once(&mut *state).chain(mirrored.as_mut()) {
            match s.propagate_root() {
                Some(true) => {}
                Some(false) => return Probe::Infeasible,
                None => return work.unknown(NotFoundReason::TimeLimit),
            }
        }
        let lanes = if mirrored.is_some() { 2 } else { 1 };
        let mut subtree_limit = options.subtree_backtracks.max(1);
        let give_up = if options.restart_noise > 0 { 8 } else { 2 };
        let mut fruitless = 0;
        let mut round = state.run;
        // The failed states, shared by the lanes: in the lane of the run.
        let mut memo = state.holes.as_mut().map(|h| std::mem::take(&mut h.failed));
        let reason = loop {
            let state = match &mut mirrored {
                Some(m) if (round / 2) % 2 == 1 => m,
                _ => &mut *state,
            };
            state.run = round;
            if let Some(holes) = &mut state.holes {
                holes.failed = memo.take().unwrap_or_default();
                holes.size_first = round % 2 == 1;
            }
            state.use_phases = options.phases && round % 2 == 1;
            let budget = options
                .restart_steps
                .max(1)
                .saturating_mul(1 << (round / (2 * lanes)).min(40));
            state.run_limit = work.effort.steps.saturating_add(budget).min(step_limit);
            let outcome = state.run(subtree_limit, &mut work.effort);
            if let Some(holes) = &mut state.holes {
                memo = Some(std::mem::take(&mut holes.failed));
            }
            match outcome {
                Outcome::Found => return Probe::Fits(Plan::from_offsets(state.offset.clone())),
                Outcome::StepLimit if work.effort.steps >= step_limit => {
                    break NotFoundReason::StepLimit
                }
                Outcome::TimeLimit => break NotFoundReason::TimeLimit,
                Outcome::Exhausted if !state.abandoned => {
                    fruitless += 1;
                    if fruitless >= give_up {
                        break NotFoundReason::Heuristic;
                    }
                }
                Outcome::Exhausted => subtree_limit = subtree_limit.saturating_mul(2),
                Outcome::StepLimit => {}
            }
            work.effort.restarts += 1;
            state.rewind(0);
            round += 1;
        };
        work.unknown(reason)
    }
}

/// How one run of the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Found,
    /// The root ran out of candidates.
    Exhausted,
    StepLimit,
    TimeLimit,
}

impl State<'_> {
    /// One run of the search loop (TelaMalloc §5.1 and §5.4) from the
    /// current state, with `subtree_limit` backtracks per backtrack point.
    pub(super) fn run(&mut self, subtree_limit: u64, effort: &mut Effort) -> Outcome {
        let n = self.m.len();
        self.flagged.clear();
        self.backtracks = 0;
        self.abandoned = false;
        let depth = self.trail.len();
        self.open_point(depth);
        loop {
            let depth = self.trail.len();
            if depth == n {
                return Outcome::Found;
            }
            let point = &mut self.points[depth];
            if point.next < point.candidates.len() {
                let b = point.candidates[point.next] as usize;
                point.next += 1;
                point.undo_mark = self.undo.len();
                if self.offset[b] != UNPLACED {
                    continue;
                }
                if effort.steps >= self.run_limit {
                    return Outcome::StepLimit;
                }
                effort.steps += 1;
                // Steps on large groups scan thousands of buffers: look at
                // the clock at every one of them (more work than an
                // interval's), else every `Stop::EVERY_COSTLY` steps.
                let look = if n > 2 * Stop::EVERY_COSTLY {
                    self.deadline.check()
                } else {
                    self.deadline.every_costly(effort.steps as usize)
                };
                if look.is_err() {
                    return Outcome::TimeLimit;
                }
                self.place(b);
                if self.propagate(b) {
                    self.open_point(depth + 1);
                } else if self.timed_out {
                    return Outcome::TimeLimit;
                } else {
                    // Minor backtrack: the next candidate of this point.
                    effort.minor_backtracks += 1;
                    self.unplace_last();
                    if self.options.displaced_first {
                        self.try_displaced_next(depth);
                    }
                    self.blame(depth);
                    self.backtracked(subtree_limit);
                }
            } else {
                // Major backtrack: to the second-to-last conflicting
                // placement (the last is this point's own candidate).
                effort.major_backtracks += 1;
                if let Some(holes) = &mut self.holes {
                    if self.points[depth].proven && holes.failed.len() < MEMO_CAPACITY {
                        holes.failed.insert(holes.key);
                    }
                }
                if depth == 0 {
                    return Outcome::Exhausted;
                }
                let default = match self.points[depth].conflicts.last() {
                    Some(&l) if self.options.backjump => l as usize,
                    _ => depth - 1,
                };
                let (target, flag) = if self.forest.is_some() || self.events.is_some() {
                    for &l in &self.points[depth].conflicts {
                        if let Some(&b) = self.trail.get(l as usize) {
                            self.in_conflicts[b as usize] += 1;
                        }
                    }
                    self.learned_target(depth, default)
                } else {
                    (default, None)
                };
                // A jump above the default target leaves the subtrees
                // between them unsearched: the root running out of
                // candidates afterwards proves nothing, as after an
                // abandonment (§5.4), and the run is not fruitless.
                if target < default {
                    self.abandoned = true;
                }
                let sound = target >= default && self.points[depth].proven;
                self.points[target].proven &= sound;
                self.jump(depth, target);
                self.points[target].jumps += 1;
                self.flagged.retain(|&(l, _)| (l as usize) < target);
                self.flagged.push((target as u32, self.backtracks));
                if let Some(level) = flag {
                    self.flag_learned(level);
                }
                self.backtracked(subtree_limit);
            }
        }
    }
}
