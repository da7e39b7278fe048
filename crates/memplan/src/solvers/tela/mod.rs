//! TelaMalloc (Maas et al., ASPLOS 2023; `shared/papers/telamalloc.txt`): a
//! search in which domain heuristics pick the next buffer to place and a
//! constraint engine prunes placements and explains failures.
//!
//! How it fits together, top-down, one file per concept:
//! - this file: [`TelaOptions`] and [`Tela::solve`], which decides one
//!   capacity, or minimises it (lower bound, then bisection below the best
//!   greedy makespan, like the search solver);
//! - `model.rs`: `Model`, the static data of one independent time group:
//!   sizes, neighbours, time sections, the heuristics' rankings (§5.1) and
//!   the contention phases of `phases.rs` (§5.3, Figure 9);
//! - `drive.rs`: `Model::decide` runs the search, restarting it until a
//!   plan or a limit; `State::run` is the search loop (§5.1, §5.4): at every
//!   decision point it tries a short list of candidates (`candidates.rs`),
//!   each placed at its lowest valid offset (§5.2). A capacity's answer is
//!   the shared [`Probe`], as for the search solver; the reason of a
//!   [`Probe::Unknown`] (step limit, time limit, or the search giving up)
//!   is kept beside the effort counters (`drive::Work`), since only the
//!   decision of a given capacity reports it;
//! - `state.rs`: the search state and its moves (place, undo, blame, the
//!   major backtrack of §5.4);
//! - `propagate.rs`: `State::propagate`, the engine that replaces CP-SAT:
//!   after every placement it raises each unplaced buffer's lowest valid
//!   offset (its *floor*) and checks two sound conditions; on failure it
//!   returns the decision levels of the placements responsible (the
//!   conflict set);
//! - `holes.rs`: the skyline holes ([`TelaOptions::skyline_holes`]), the
//!   candidates and dead ends at a capacity with no slack;
//! - `learned.rs`: the learned backtracking of §6 (off by default,
//!   [`TelaOptions::learned_backtracking`]): candidate targets, features,
//!   the forest of `backtracking_model.json`; `choose.rs`: features and
//!   the choice of §6.5 (a target to jump to, or a level to flag);
//!   `labels.rs` (tests only) labels major backtracks with the exact
//!   search as oracle (§6.3), for `scripts/train_backtracking.py`.
//!
//! Deviations from the paper, and why (measured on the seven challenging
//! MiniMalloc instances and generated `perfect` ones at 1.00-1.20 times the
//! max load; the paper's own choices remain as options for ablation):
//! - no CP-SAT: the engine keeps, for every unplaced buffer, only the lowest
//!   offset at which it fits among the placed and fixed buffers (a buffer
//!   that fits nowhere under the capacity fails at once), and adds the
//!   cross-section bound of MiniMalloc §6.2, eq. 3, in every section, with
//!   the lowest floor of the unplaced buffers alive there as the section's
//!   height (sound when buffers go underneath placed ones). This is the part
//!   of CP-SAT's propagation the search queries (§5.2, §5.4). The bound at
//!   every unplaced buffer's own floor ([`TelaOptions::own_floors`]; it
//!   is then checked in the maximal sections only, which imply the others)
//!   prunes more and saves steps on most instances, but costs as much time
//!   as it saves, so it is off;
//! - candidates come from the bottom row ([`TelaOptions::bottom_row`]): the
//!   unplaced buffers whose floor is the lowest, i.e. the lowest region of
//!   the skyline of §3.1 and Figure 8a, each still placed at its lowest
//!   valid offset (§5.2). The paper's picks (the longest, largest and
//!   largest-area buffer wherever they are) place buffers high above empty
//!   space that the remaining buffers must then fill exactly: tried after
//!   three bottom-row picks, they left five of the seven challenging
//!   instances unsolved at 1.10 times the max load (challenging E's dead
//!   ends were found 80 to 125 placements deep in its group of 131); with
//!   bottom-row candidates alone, two;
//! - the §3.1 contention (the highest load over a buffer's lifetime) ranks
//!   candidates before §5.1's three heuristics ([`TelaOptions::contention`]):
//!   without it, buffers alive in the most contended sections are placed
//!   late, on top of a skyline raised by others, and the space beneath them
//!   there is lost (challenging D at 1.10 was not solved in 500,000 steps;
//!   with it, in under a thousand). Its ties go to the longest lifetime,
//!   not §3.1's size × lifetime²; in the bottom row the heuristics take
//!   turns (the best of each, then the second best of each, ...) up to
//!   `max_candidates`;
//! - where the bottom row's earliest section has no slack, the row is cut
//!   to the buffers that start there ([`TelaOptions::tight_sections`], on
//!   by default): one of them covers that section's lowest free byte in
//!   every plan, so no plan is lost, and the heuristics' other picks only
//!   leave slivers that no remaining buffer fills exactly (generated
//!   perfect packings at their max load; figures in `docs/solvers.md`).
//!   Sections with little slack ([`TelaOptions::tight_slack`], 5% of the
//!   capacity) are cut alike, as a heuristic: it found more plans than it
//!   lost on a validation population of five kinds at 1.00-1.05;
//! - phases (§5.3) order the bottom row (the current phase's buffers first,
//!   then the others by decreasing contention) in every second run,
//!   starting with the second; with phases as pools of their own, as in the
//!   paper, the highest-contention phase is filled bottom-up before the
//!   buffers around it and leaves more waste;
//! - conflict sets of a failed section explain only the floor of the
//!   unplaced buffer that sets the section's height, not every floor
//!   there: complete explanations backjump less far, and the search then
//!   took several times more steps;
//! - [`TelaOptions::displaced_first`] (on by default): a candidate that
//!   fails because its placement raised other buffers' floors into a
//!   failure (a section over the capacity, or a buffer pushed past it) is
//!   followed, at the same decision point, by those displaced buffers: they
//!   compete for the slot it took, and the short candidate list (§5.4)
//!   often misses them. This was why generated perfect packings at 1.10
//!   times the max load, which have ample slack, still took tens of
//!   thousands of steps on some seeds: the piece that fits the slot was
//!   not among the listed candidates, and the search backjumped and
//!   restarted around it. The displaced buffers push the last listed
//!   candidates out of the list (it keeps `max_candidates`): appended to
//!   it, they widened every point of long failing paths, which lost
//!   instances of other kinds;
//! - at a capacity with no slack (every section's load is the capacity,
//!   as in a perfect packing at its max load), where every address is
//!   taken in a plan, the skyline holes replace the bottom row
//!   ([`TelaOptions::skyline_holes`], on by default): the candidates are
//!   all the moves of the hole with the fewest, a point where a flat run
//!   cannot be covered end to end has none, the placements that shaped a
//!   point's hole are among its conflicts, states proven to fail are
//!   remembered, subtrees are never abandoned, and every second pair of
//!   runs fills the group mirrored in time. On large perfect packings at
//!   their max load, the bottom row fails whatever its backtrack targets,
//!   even an oracle's (`docs/solvers.md`): what they need is the exact
//!   fill's reasoning (`search/fill`);
//! - restarts: the §5.4 rule "a subtree with more than 100 backtracks is
//!   abandoned" (kept: without it, fewer instances are solved at 1.02)
//!   makes the search give up early; when the root runs out of candidates
//!   after such an abandonment, the next run doubles the limit. Runs have
//!   step budgets (1,000 steps, doubling every second run), and every run
//!   after the first swaps, at 10% of its decision points, the first
//!   candidate with another one (seeded by `--seed`): the same search
//!   repeated cannot escape a bad early choice, and the number of steps to
//!   a plan varies by orders of magnitude with such small changes (without
//!   the noise, one challenging instance is solved at 1.02 times the max
//!   load instead of six);
//! - Figure 9 is not in the text: phases are found at thresholds of 100%,
//!   90%, ..., 0% of the group's peak load;
//! - independent time groups (§5.3's first split) are solved one after the
//!   other, sharing the step budget;
//! - learned backtracking scores every level of the path, not §6.2's
//!   candidates (the conflict set's levels and the top of each range of
//!   levels 0-4, 5-8, 9-16, ... that has none): the deepest level from
//!   which the path can be completed is often far below the top of its
//!   range, and with an oracle's choices, jumps to that level turned more
//!   timeouts into successes than jumps to the deepest §6.2 candidate above
//!   it (`docs/solvers.md`). Not an option: the shipped model is trained on
//!   every level;
//! - by default the learned target is not jumped to (§6.5) but flagged as
//!   the backtrack point that §5.4's abandonment returns to
//!   ([`TelaOptions::learned_jump`] off): the search keeps its own
//!   targets, and a subtree the model believes has no plan is given only
//!   `subtree_backtracks` more backtracks. Jumps taken at every backtrack
//!   strand the search when they land below the deepest completable level,
//!   and confident ones are rare; flags turned more timeouts into successes
//!   (`docs/solvers.md`).

mod candidates;
mod choose;
mod drive;
mod holes;
#[cfg(test)]
mod labels;
mod learned;
mod model;
mod phases;
mod propagate;
mod state;

use crate::plan::{validate, Plan};
use crate::problem::Problem;
use crate::solver::{
    minimise, starting_plan, NotFoundReason, Probe, Solution, SolveError, SolveOptions, Solver,
};
use crate::solvers::anytime::{self, Exact};
use drive::Work;
use model::Models;

/// Tuning of the TelaMalloc search. The limits follow the paper; the
/// switches select our deviations (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TelaOptions {
    /// Candidate placements tried per capacity before giving up (§7.2:
    /// 500,000).
    pub step_limit: u64,
    /// Backtracks allowed inside the subtree of a backtrack point before it
    /// is abandoned (§5.4: 100).
    pub subtree_backtracks: u64,
    /// At most this many candidates per decision point, prepended ones
    /// included (§5.4).
    pub max_candidates: usize,
    /// Contention-based grouping into phases (§5.3); off: one phase.
    pub phases: bool,
    /// Conflict-directed major backtracks (§5.4); off: one level up.
    pub backjump: bool,
    /// Candidates come from the bottom row (the unplaced buffers whose
    /// floor is the lowest), ranked by the heuristics; off: the paper's
    /// picks, the best buffer of each heuristic wherever its floor lies.
    pub bottom_row: bool,
    /// The §3.1 contention (the highest load over a buffer's lifetime)
    /// ranks candidates before the three §5.1 heuristics.
    pub contention: bool,
    /// The cross-section bound at every unplaced buffer's own floor, not
    /// only at the lowest one (MiniMalloc's effective height).
    pub own_floors: bool,
    /// With `bottom_row`: where the row's earliest section has no slack
    /// (its load is the capacity), the row is cut to the buffers that
    /// start there. Every byte of that section is covered in a plan, and
    /// the lowest free one, at the row's floor, can be covered only by an
    /// unplaced buffer alive there whose floor is that low: a row buffer,
    /// which starts there as no row buffer starts earlier. So every plan
    /// that extends the path places one of them there, and none is lost;
    /// the other candidates only leave that byte to waste. On by default;
    /// off: the whole row.
    pub tight_sections: bool,
    /// With `tight_sections`: a section whose slack is at most this
    /// percentage of the capacity also counts as tight. Above 0 this is a
    /// heuristic, not a proof: a plan may leave that byte empty (it then
    /// fills the hole from its left end, as the exact fill does).
    pub tight_slack: u32,
    /// When a candidate fails because its placement raised the floors of
    /// other buffers into a failure (a section over the capacity, or a
    /// buffer pushed past it), those displaced buffers become the next
    /// candidates of the same decision point, ahead of the remaining
    /// listed ones, within `max_candidates`: they compete for the slot the
    /// candidate took, and may be missing from the point's short list. On
    /// by default; off: the listed candidates only (§5.4).
    pub displaced_first: bool,
    /// At a capacity that leaves no slack (every section's load is the
    /// capacity; no fixed or aligned buffer), the candidates are the moves
    /// of the skyline's hole with the fewest (the buffers that start where
    /// the hole starts and end within it), all of them, one per class of
    /// identical buffers, largest first in every second run; a point where
    /// a flat run of the skyline cannot be covered end to end has none
    /// (`holes.rs`: the reasoning of the search's exact fill). Every
    /// second pair of runs fills the group mirrored in time; the states
    /// proven to fail are remembered, and subtrees are never abandoned.
    /// On by default; off: the bottom row, as at any other capacity.
    pub skyline_holes: bool,
    /// Learned backtracking (TelaMalloc §6): at a major backtrack, a
    /// forest of gradient-boosted trees trained offline scores every level
    /// of the path as a target (§6.2 scores a few); the best score,
    /// weighted by depth, is the learned target if at least
    /// `learned_threshold`. The search jumps to the default target (§5.4)
    /// and a learned target above it becomes the backtrack point that
    /// abandonment returns to (§5.4; ours), or, with `learned_jump`, the
    /// search jumps to it (§6.5).
    pub learned_backtracking: bool,
    /// With `learned_backtracking`: the search jumps to the learned target
    /// (TelaMalloc §6.5), in place of the default one; off: the learned
    /// target, when above the default one, is flagged as a backtrack point
    /// with a fresh count, so that `subtree_backtracks` more backtracks
    /// below it abandon the path back to it (ours).
    pub learned_jump: bool,
    /// With `learned_backtracking`: the lowest weighted score (tenths of
    /// a point; scores are 0 to 10, 10 for the best target) of a learned
    /// target.
    pub learned_threshold: u32,
    /// With `learned_backtracking`: the depth weighting, in percent: a
    /// target's score is multiplied by `1 - w × (distance / depth)`, which
    /// discourages far backtracks.
    pub learned_depth_weight: u32,
    /// Steps of the first two runs; the budget doubles every second run.
    pub restart_steps: u64,
    /// In every run after the first, the percentage of decision points
    /// whose first candidate swaps places with another of its candidates,
    /// drawn from `SolveOptions::seed`; 0: every run searches alike.
    pub restart_noise: u32,
    /// A plan to start from, like boxing's `bootstrap` (the paper has no
    /// initial solution: it decides the capacity a compiler gives it).
    /// Without a capacity, it is the first upper bound of the minimisation
    /// in place of the best greedy plan (whose variants then do not run);
    /// with one, the answer when it fits. Used only if it is a valid plan
    /// of the problem (one offset per buffer, alignments and fixed offsets
    /// kept, no overlap, within the capacity if any). Tela then never
    /// returns a plan with a higher makespan than it, nor "not found"
    /// (with zero-size buffers or gaps, whose problem the search does not
    /// see as given, it is kept when better than the search's plan).
    /// `None`: the portfolio's greedy plan
    /// ([`SolveOptions::prepared`](crate::solver::SolveOptions::prepared))
    /// when given, else the best greedy variant.
    pub warm_start: Option<Plan>,
}

impl Default for TelaOptions {
    fn default() -> Self {
        TelaOptions {
            step_limit: 500_000,
            subtree_backtracks: 100,
            max_candidates: 8,
            phases: true,
            backjump: true,
            bottom_row: true,
            contention: true,
            own_floors: false,
            tight_sections: true,
            tight_slack: 5,
            displaced_first: true,
            skyline_holes: true,
            learned_backtracking: false,
            learned_jump: false,
            learned_threshold: 0,
            learned_depth_weight: 0,
            restart_steps: 1000,
            restart_noise: 10,
            warm_start: None,
        }
    }
}

/// The TelaMalloc solver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tela {
    /// Limits and switches.
    pub options: TelaOptions,
}

/// Search effort, reported as solution counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Candidate placements tried (each followed by propagation).
    pub steps: u64,
    /// Candidates whose placement failed propagation at once (§5.4).
    pub minor_backtracks: u64,
    /// Decision points left after all their candidates failed (§5.4).
    pub major_backtracks: u64,
    /// Restarts: after a run's step budget, or after the root ran out of
    /// candidates.
    pub restarts: u64,
}

impl Effort {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("steps", self.steps),
            ("minor_backtracks", self.minor_backtracks),
            ("major_backtracks", self.major_backtracks),
            ("restarts", self.restarts),
        ]
    }
}

impl Solver for Tela {
    fn name(&self) -> String {
        "tela".into()
    }

    /// TelaMalloc §5: decides `problem.capacity`, or, without one, minimises
    /// the capacity: the lower bound first (perfect plans are common), then
    /// bisection below the best greedy makespan, until the time limit.
    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        // A work budget caps the steps per capacity.
        let budgeted;
        let this = match options.effort {
            Some(effort) => {
                budgeted = Tela {
                    options: TelaOptions {
                        step_limit: effort
                            .scale(STEPS_PER_EFFORT)
                            .clamp(1, self.options.step_limit),
                        ..self.options.clone()
                    },
                };
                &budgeted
            }
            None => self,
        };
        this.solve_within(problem, options)
    }

    /// The default [`Solver::solve`], then the warm start instead of the
    /// result when it is better: with zero-size buffers or gaps, the
    /// problem [`Solver::solve_positive`] sees is not the one given, so the
    /// warm start could not seed it.
    fn solve(&self, problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
        let result = Searched(self).solve(problem, options);
        match self.warm_start(problem) {
            Some(warm) => keep_better(problem, warm, result),
            None => result,
        }
    }
}

/// Tela with the default [`Solver::solve`] (zero-size buffers set aside,
/// hulls for gaps), for [`Tela`]'s own `solve`.
struct Searched<'a>(&'a Tela);

impl Solver for Searched<'_> {
    fn name(&self) -> String {
        self.0.name()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        self.0.solve_positive(problem, options)
    }
}

/// `result`, or the `warm` plan of `problem` (valid, within the capacity
/// if any) when its makespan is lower or `result` found no plan.
fn keep_better(
    problem: &Problem,
    warm: &Plan,
    result: Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    let makespan = warm.makespan(problem);
    match result {
        Ok(s) if s.makespan <= makespan => Ok(s),
        Ok(s) => Ok(Solution {
            plan: warm.clone(),
            makespan,
            optimal: makespan == s.lower_bound,
            ..s
        }),
        Err(SolveError::NotFound { counters, .. }) => {
            let mut s = Solution::within_capacity(
                problem,
                warm.clone(),
                problem.max_load(),
                NotFoundReason::Heuristic,
            )?;
            s.counters = counters;
            Ok(s)
        }
    }
}

/// Steps per capacity per unit of [`crate::solver::Effort`] (about a
/// second of one core on the challenging instances).
const STEPS_PER_EFFORT: u64 = 200_000;

impl Tela {
    /// [`TelaOptions::warm_start`], if it is a valid plan of `problem`
    /// (within its capacity, if any).
    fn warm_start(&self, problem: &Problem) -> Option<&Plan> {
        self.options
            .warm_start
            .as_ref()
            .filter(|plan| validate(problem, plan).is_ok())
    }

    /// [`Solver::solve_positive`] with the step limit of `self.options`.
    fn solve_within(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        // The harness gives the bounds (a portfolio's, when it computed
        // them), and at scale under a time limit the default greedy plan
        // first: the floor of what a cut returns.
        anytime::exact(problem, options, |start| match problem.capacity {
            Some(capacity) => self.decide(problem, capacity, start, options),
            None => Ok(self.minimise(problem, start, options)),
        })
    }

    /// Decides `capacity`, TelaMalloc's own question (§5): a plan within
    /// it, or why none was found.
    fn decide(
        &self,
        problem: &Problem,
        capacity: u64,
        start: &Exact,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let (prepared, deadline) = (&*start.prepared, &start.deadline);
        if let Some(warm) = self.warm_start(problem) {
            return Solution::within_capacity(
                problem,
                warm.clone(),
                prepared.max_load,
                NotFoundReason::Heuristic,
            );
        }
        if prepared.lower_bound > capacity {
            return Err(SolveError::NotFound {
                capacity,
                reason: NotFoundReason::ProvenInfeasible,
                best_makespan: None,
                counters: Vec::new(),
            });
        }
        // `None` when the deadline passes while building (instances of many
        // thousands of buffers): the capacity is then undecided.
        // Its setup stops ahead of the deadline, leaving the time to answer.
        let models = Models::new(problem, &self.options, &start.setup);
        let mut work = Work::default();
        let probe = match &models {
            Some(models) => models.decide(
                problem,
                capacity,
                &self.options,
                deadline,
                options.seed,
                &mut work,
            ),
            None => work.unknown(NotFoundReason::TimeLimit),
        };
        let reason = match probe {
            Probe::Fits(plan) => {
                let mut s = Solution::within_capacity(
                    problem,
                    plan,
                    prepared.max_load,
                    NotFoundReason::Heuristic,
                )?;
                s.counters = work.effort.counters();
                return Ok(s);
            }
            Probe::Infeasible => NotFoundReason::ProvenInfeasible,
            Probe::Unknown => work.undecided.unwrap_or(NotFoundReason::Heuristic),
        };
        Err(SolveError::NotFound {
            capacity,
            reason,
            best_makespan: None,
            counters: work.effort.counters(),
        })
    }

    /// Minimises the capacity ([`minimise`]: the lower bound first, then
    /// bisection) below the warm start, or else the portfolio's greedy plan
    /// ([`Prepared`]), or else the best greedy variant.
    fn minimise(&self, problem: &Problem, start: &Exact, options: &SolveOptions) -> Solution {
        let (prepared, deadline, setup) = (&*start.prepared, &start.deadline, &start.setup);
        // The first upper bound comes first, so that a plan exists whatever
        // the time limit.
        let best = starting_plan(
            problem,
            self.options.warm_start.as_ref(),
            Some(prepared),
            || start.best_variant(problem),
        );
        // `None` when the deadline passes while building: every capacity
        // is then undecided.
        // Its setup stops ahead of the deadline, leaving the time to answer.
        let models = Models::new(problem, &self.options, setup);
        let mut work = Work::default();
        let mut s = minimise(
            problem,
            best,
            prepared.lower_bound,
            deadline,
            &options.progress,
            |c, d| match &models {
                Some(m) => m.decide(problem, c, &self.options, d, options.seed, &mut work),
                None => Probe::Unknown,
            },
        );
        // A setup cut ahead of the deadline: the result was cut short.
        if models.is_none() && !s.optimal && s.stopped.is_none() {
            s.stopped = setup.stopped();
        }
        s.counters = work.effort.counters();
        s
    }
}

#[cfg(test)]
mod tests;
