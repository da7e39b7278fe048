//! The search driver (TelaMalloc §5.1, §5.4): the runs of the search loop
//! with their restarts, for one group ([`Model::decide`]) and for all the
//! groups of a problem ([`Models::decide`]).

use super::model::{Model, Models};
use super::state::{State, UNPLACED};
use super::{Decision, Effort, TelaOptions};
use crate::problem::Problem;
use crate::solver::{Deadline, NotFoundReason};

impl Models {
    /// Decides every group at `capacity`; the plan is the union. The step
    /// limit is shared by the groups; `seed` draws the restart noise.
    pub(super) fn decide(
        &self,
        problem: &Problem,
        capacity: u64,
        options: &TelaOptions,
        deadline: &Deadline,
        seed: u64,
        effort: &mut Effort,
    ) -> Decision {
        let mut offsets: Vec<u64> = problem
            .buffers()
            .iter()
            .map(|b| b.fixed_offset.unwrap_or(0))
            .collect();
        let step_limit = effort.steps.saturating_add(options.step_limit);
        for (g, model) in self.models.iter().enumerate() {
            let seed = seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            match model.decide(capacity, options, deadline, seed, step_limit, effort) {
                Decision::Fits(local) => {
                    for (b, o) in model.global.iter().zip(local) {
                        offsets[b.index()] = o;
                    }
                }
                other => return other,
            }
        }
        Decision::Fits(offsets)
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
    /// up (with no noise, the next run would search alike).
    pub(super) fn decide(
        &self,
        capacity: u64,
        options: &TelaOptions,
        deadline: &Deadline,
        seed: u64,
        step_limit: u64,
        effort: &mut Effort,
    ) -> Decision {
        let mut state = State::new(self, capacity, options, deadline, seed);
        match state.propagate_root() {
            Some(true) => {}
            Some(false) => return Decision::Infeasible,
            None => return Decision::Unknown(NotFoundReason::TimeLimit),
        }
        let mut subtree_limit = options.subtree_backtracks.max(1);
        let give_up = if options.restart_noise > 0 { 8 } else { 2 };
        let mut fruitless = 0;
        loop {
            let round = state.run;
            state.use_phases = options.phases && round % 2 == 1;
            let budget = options
                .restart_steps
                .max(1)
                .saturating_mul(1 << (round / 2).min(40));
            state.run_limit = effort.steps.saturating_add(budget).min(step_limit);
            match state.run(subtree_limit, effort) {
                Outcome::Found => return Decision::Fits(state.offset.clone()),
                Outcome::StepLimit if effort.steps >= step_limit => {
                    return Decision::Unknown(NotFoundReason::StepLimit)
                }
                Outcome::TimeLimit => return Decision::Unknown(NotFoundReason::TimeLimit),
                Outcome::Exhausted if !state.abandoned => {
                    fruitless += 1;
                    if fruitless >= give_up {
                        return Decision::Unknown(NotFoundReason::Heuristic);
                    }
                }
                Outcome::Exhausted => subtree_limit = subtree_limit.saturating_mul(2),
                Outcome::StepLimit => {}
            }
            effort.restarts += 1;
            state.run += 1;
            state.rewind(0);
        }
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
                // the clock at every one of them.
                if (effort.steps % 256 == 0 || n > 2048) && self.deadline.passed() {
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
                    self.blame(depth);
                    self.backtracked(subtree_limit);
                }
            } else {
                // Major backtrack: to the second-to-last conflicting
                // placement (the last is this point's own candidate).
                effort.major_backtracks += 1;
                if depth == 0 {
                    return Outcome::Exhausted;
                }
                let target = match self.points[depth].conflicts.last() {
                    Some(&l) if self.options.backjump => l as usize,
                    _ => depth - 1,
                };
                self.jump(depth, target);
                self.flagged.retain(|&(l, _)| (l as usize) < target);
                self.flagged.push((target as u32, self.backtracks));
                self.backtracked(subtree_limit);
            }
        }
    }
}
