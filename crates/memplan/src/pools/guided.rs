//! The guided strategy: pools are filled in order of preference, each with
//! the set of buffers that keeps the most bytes × time in it, chosen with
//! the solvers deciding what fits.
//!
//! For each pool but the last, from the buffers not yet placed:
//! 1. *must*: the buffers pinned to it and those that fit in no later
//!    pool; *optional*: the others that fit in it;
//! 2. if the load of all of them stays within the capacity, the solvers
//!    ([`Auto`](crate::solvers::auto::Auto) with the pool's capacity) try them all at
//!    once;
//! 3. otherwise the must set is planned by the solvers, and the optional
//!    buffers are offered around it at their first-fit offsets, passed over
//!    when they would end above the capacity, in every [`FillOrder`] (in
//!    parallel); the order that keeps the most bytes × time wins;
//! 4. local improvement while the pool's budget lasts: *pack* (the kept
//!    buffers re-planned by the solvers for the lowest makespan, then the
//!    passed-over buffers offered again in every order), and *insert* (each
//!    passed-over buffer, most bytes × time first, whose load fits: at its
//!    first-fit offset, or else with the kept ones by the solvers within
//!    the capacity).
//!
//! After construction (steps 1–3), the buffers left out must fit in the
//! later pools (by the fastest-first cascade, or by the solvers when one
//! pool is left); when they do not, the buffer that did not fit is forced
//! into the pool and the construction is repeated (a *repair*). An
//! improved fill is kept only if its rest fits too.
//!
//! The last pool takes every buffer left, planned by the solvers within
//! its capacity. The caller compares the result with the fastest-first
//! baseline and keeps the better, so guided is never worse.
//!
//! Budget: each pool but the last gets an equal share of the time left
//! (unused time passes to the next); the solvers' probes get slices of it.
//! A probe cut short by its slice makes the result depend on the clock,
//! and the outcome says so ([`Outcome::stopped`]).

use std::ops::ControlFlow;
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::solver::{NotFoundReason, SolveError, SolveOptions, Stop, Stopped};
use crate::solvers::auto::Auto;

use super::bounds::Infeasible;
use super::fill::{cascade_into, contention, sorted, FillOrder, PoolFill, Spans};
use super::load::{LoadTree, Timeline};
use super::{PoolIdx, PoolProblem};

/// Probes slices: a probe gets at most this fraction (1/n) of its pool's
/// time left.
const PROBE_SHARE: u32 = 8;

/// Swap probes get at most this fraction (1/n) of the time left: most
/// of them are undecided, and use their whole slice.
const SWAP_PROBE_SHARE: u32 = 32;

/// The shortest slice worth giving a solver probe.
const MIN_PROBE: Duration = Duration::from_millis(2);

/// Buffers forced into a pool, at most, so that the later pools can take
/// the rest.
const MAX_REPAIRS: usize = 16;

/// Ruin-and-recreate rounds per optional buffer, at most.
const LNS_ROUNDS_PER_BUFFER: usize = 20;

/// A finished guided assignment.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// Each buffer's pool and offset.
    pub assignment: Vec<(PoolIdx, u64)>,
    /// Set when a probe or the improvement was cut short by the clock or
    /// the cancel flag.
    pub stopped: Option<Stopped>,
    /// Effort: probes, probes that fit, packs, insertions.
    pub counters: Vec<(&'static str, u64)>,
}

/// Why the guided strategy placed nothing.
#[derive(Clone, Debug)]
pub(crate) enum Failure {
    /// Proven: no assignment exists.
    Infeasible(Infeasible),
    /// Not found; an assignment may exist.
    NotFound {
        reason: NotFoundReason,
        detail: String,
    },
}

/// What a solver probe answered.
enum Answer {
    /// Offsets of the probed buffers, in their order, within the capacity.
    Fits(Vec<u64>),
    /// Proven: they do not fit.
    Infeasible,
    /// Undecided.
    Unknown,
}

/// Counters of the effort spent.
#[derive(Clone, Copy, Debug, Default)]
struct Effort {
    probes: u64,
    probes_fit: u64,
    packs: u64,
    inserted: u64,
    lns_rounds: u64,
    lns_gains: u64,
    swaps_tried: u64,
    swaps: u64,
    repairs: u64,
}

/// The guided strategy's state over one solve.
struct Guided<'a> {
    problem: &'a PoolProblem,
    spans: &'a Spans,
    options: &'a SolveOptions,
    deadline: Stop,
    contention: Vec<u64>,
    timeline: Timeline,
    effort: Effort,
    stopped: Option<Stopped>,
}

/// Runs the guided strategy until `deadline`.
pub(crate) fn guided(
    problem: &PoolProblem,
    spans: &Spans,
    options: &SolveOptions,
    deadline: Stop,
) -> Result<Outcome, Failure> {
    let mut g = Guided {
        problem,
        spans,
        options,
        deadline,
        contention: contention(problem),
        timeline: Timeline::new(problem.buffers()),
        effort: Effort::default(),
        stopped: None,
    };
    let mut assignment: Vec<Option<(PoolIdx, u64)>> = vec![None; problem.len()];
    let mut remaining: Vec<BufferIdx> = problem
        .indices()
        .filter(|&b| problem.pin(b).is_none())
        .collect();
    let k = problem.pools().len();
    for p in problem.pool_indices() {
        let last = p.index() + 1 == k;
        // Pools but the last share three quarters of the time left; the
        // last (which only needs a plan of what is left) gets the rest.
        let pool_deadline = match g.deadline.remaining() {
            Some(left) if !last => g.deadline.within(left * 3 / 4 / (k - 1 - p.index()) as u32),
            _ => g.deadline.clone(),
        };
        let fill = g.fill_pool(p, &remaining, &pool_deadline)?;
        for &(b, offset) in &fill.placed {
            assignment[b.index()] = Some((p, offset));
        }
        remaining.retain(|b| assignment[b.index()].is_none());
    }
    let assignment = assignment
        .into_iter()
        .zip(problem.buffers())
        .map(|(a, b)| {
            a.ok_or_else(|| Failure::NotFound {
                reason: NotFoundReason::Heuristic,
                detail: format!("buffer `{}` was left out", crate::quote::quoted(&b.id)),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let e = g.effort;
    Ok(Outcome {
        assignment,
        stopped: g.stopped,
        counters: vec![
            ("probes", e.probes),
            ("probes_fit", e.probes_fit),
            ("packs", e.packs),
            ("inserted", e.inserted),
            ("swaps_tried", e.swaps_tried),
            ("swaps", e.swaps),
            ("repairs", e.repairs),
            ("lns_rounds", e.lns_rounds),
            ("lns_gains", e.lns_gains),
        ],
    })
}

impl Guided<'_> {
    /// Fills pool `p` from the unpinned buffers `remaining` (and the
    /// buffers pinned to it). Must go in: the pinned ones, those that fit
    /// in no later pool, and those forced in by repairs; may go in: the
    /// others that fit. A repair forces in the buffer that the later pools
    /// could not take ([`Guided::rest_fits`]), up to [`MAX_REPAIRS`]
    /// times; an improved fill whose rest no longer fits is dropped for
    /// the constructed one.
    fn fill_pool(
        &mut self,
        p: PoolIdx,
        remaining: &[BufferIdx],
        deadline: &Stop,
    ) -> Result<PoolFill, Failure> {
        let problem = self.problem;
        let k = problem.pools().len();
        let last = p.index() + 1 == k;
        let later_fit =
            |b: BufferIdx| (p.index() + 1..k).any(|q| problem.fits_in(b, PoolIdx::new(q)));
        let mut forced = vec![false; problem.len()];
        let mut repairs = 0;
        let (base, optional) = loop {
            let mut must: Vec<BufferIdx> = problem
                .indices()
                .filter(|&b| problem.pin(b) == Some(p))
                .collect();
            let mut optional = Vec::new();
            for &b in remaining {
                if last || forced[b.index()] || (problem.fits_in(b, p) && !later_fit(b)) {
                    must.push(b);
                } else if problem.fits_in(b, p) {
                    optional.push(b);
                }
            }
            let base = self.construct(p, &must, &optional, deadline)?;
            if last || repairs == MAX_REPAIRS {
                break (base, optional);
            }
            match self.rest_fits(p, &base, remaining, deadline) {
                Ok(()) => break (base, optional),
                Err(b) if problem.fits_in(b, p) && !forced[b.index()] => {
                    forced[b.index()] = true;
                    repairs += 1;
                    self.effort.repairs += 1;
                }
                Err(_) => break (base, optional),
            }
        };
        let mut inside = vec![false; problem.len()];
        for &(b, _) in &base.placed {
            inside[b.index()] = true;
        }
        if optional.iter().all(|b| inside[b.index()]) {
            return Ok(base);
        }
        // Half the time left for the solvers' improvements, the rest (and
        // what they leave) for the ruin-and-recreate rounds.
        let half = match deadline.remaining() {
            Some(left) => deadline.within(left / 2),
            None => deadline.clone(),
        };
        let improved = self.improve(p, base.clone(), &optional, &half);
        let improved = self.ruin_and_recreate(p, improved, &optional, deadline);
        if improved.area > base.area
            && (last || self.rest_fits(p, &improved, remaining, deadline).is_ok())
        {
            Ok(improved)
        } else {
            Ok(base)
        }
    }

    /// Whether the buffers of `remaining` that `fill` leaves out, with the
    /// buffers pinned to later pools, can go into the pools after `p`: by
    /// the fastest-first cascade, or, when one pool is left, by the
    /// solvers. Otherwise the buffer that did not fit.
    fn rest_fits(
        &mut self,
        p: PoolIdx,
        fill: &PoolFill,
        remaining: &[BufferIdx],
        deadline: &Stop,
    ) -> Result<(), BufferIdx> {
        let problem = self.problem;
        let mut inside = vec![false; problem.len()];
        for &(b, _) in &fill.placed {
            inside[b.index()] = true;
        }
        let rest: Vec<BufferIdx> = remaining
            .iter()
            .copied()
            .filter(|b| !inside[b.index()])
            .chain(
                problem
                    .indices()
                    .filter(|&b| problem.pin(b).is_some_and(|q| q > p)),
            )
            .collect();
        let first = p.index() + 1;
        let failed = match cascade_into(problem, self.spans, &rest, first) {
            Ok(_) => return Ok(()),
            Err(b) => b,
        };
        if first + 1 == problem.pools().len() {
            let q = PoolIdx::new(first);
            if rest.iter().all(|&b| problem.fits_in(b, q)) {
                if let Answer::Fits(_) = self.probe(q, &rest, self.slice(deadline, 4), false) {
                    return Ok(());
                }
            }
        }
        Err(failed)
    }

    /// Fills pool `p` with every buffer of `must` and what it can of
    /// `optional`, before any improvement: all of them if the solvers fit
    /// them together; otherwise the must set as the solvers plan it, and
    /// the best [`Guided::best_refill`] of the optional buffers around it.
    fn construct(
        &mut self,
        p: PoolIdx,
        must: &[BufferIdx],
        optional: &[BufferIdx],
        deadline: &Stop,
    ) -> Result<PoolFill, Failure> {
        let capacity = self.problem.pool(p).capacity;
        let all: Vec<BufferIdx> = must.iter().chain(optional).copied().collect();
        if !optional.is_empty() && self.peak(&all) <= capacity {
            if let Answer::Fits(offsets) = self.probe(p, &all, self.slice(deadline, 2), false) {
                return Ok(self.fill_from(p, &all, &offsets));
            }
        }
        let base = if must.is_empty() {
            PoolFill::new(p, self.spans)
        } else {
            match self.probe(p, must, self.slice(deadline, 2), false) {
                Answer::Fits(offsets) => self.fill_from(p, must, &offsets),
                answer => return Err(self.must_failure(p, must, answer)),
            }
        };
        if optional.is_empty() {
            return Ok(base);
        }
        Ok(self.best_refill(base, optional))
    }

    /// Why the must set of pool `p` could not be planned: a proof when
    /// those buffers can go nowhere else (pinned, or too large for any
    /// other pool) and the solvers proved they do not fit.
    fn must_failure(&self, p: PoolIdx, must: &[BufferIdx], answer: Answer) -> Failure {
        let problem = self.problem;
        let exclusive = must.iter().all(|&b| {
            problem.pin(b) == Some(p)
                || problem
                    .pool_indices()
                    .all(|q| q == p || !problem.fits_in(b, q))
        });
        let pool = problem.pool(p);
        match answer {
            Answer::Infeasible if exclusive => Failure::Infeasible(Infeasible::PinnedUnplaceable {
                pool: p,
                pool_name: pool.name.clone(),
                capacity: pool.capacity,
                by: "auto".into(),
            }),
            answer => Failure::NotFound {
                reason: match (answer, self.stopped) {
                    (_, Some(Stopped::Interrupted)) => NotFoundReason::Interrupted,
                    (Answer::Unknown, _) => NotFoundReason::TimeLimit,
                    _ => NotFoundReason::Heuristic,
                },
                detail: format!(
                    "the {} buffers that must go into pool `{}` (pinned there, or too large for \
                     the later pools) were not fitted within its capacity {}",
                    must.len(),
                    crate::quote::quoted(&pool.name),
                    pool.capacity
                ),
            },
        }
    }

    /// The highest load of `buffers` at one instant.
    fn peak(&self, buffers: &[BufferIdx]) -> u64 {
        let mut tree = LoadTree::new(self.timeline.segments());
        for &b in buffers {
            let (lo, hi) = self.timeline.span(b);
            tree.add(lo, hi, self.problem.buffer(b).size);
        }
        tree.max(0, self.timeline.segments())
    }

    /// A fill of pool `p` holding `members` at `offsets`.
    fn fill_from(&self, p: PoolIdx, members: &[BufferIdx], offsets: &[u64]) -> PoolFill {
        let mut fill = PoolFill::new(p, self.spans);
        for (&b, &offset) in members.iter().zip(offsets) {
            fill.put(self.problem, b, offset);
        }
        fill
    }

    /// `base` with the buffers of `candidates` not in it offered at their
    /// first-fit offsets, in every order (in parallel): the fill that holds
    /// the most bytes × time, ties to the first order.
    fn best_refill(&self, base: PoolFill, candidates: &[BufferIdx]) -> PoolFill {
        let problem = self.problem;
        let mut inside = vec![false; problem.len()];
        for &(b, _) in &base.placed {
            inside[b.index()] = true;
        }
        let outside: Vec<BufferIdx> = candidates
            .iter()
            .copied()
            .filter(|b| !inside[b.index()])
            .collect();
        let fills: Vec<PoolFill> = FillOrder::ALL
            .par_iter()
            .map(|&order| {
                let mut fill = base.clone();
                for b in sorted(problem, &outside, order, &self.contention) {
                    fill.offer(problem, b);
                }
                fill
            })
            .collect();
        fills
            .into_iter()
            .rev()
            .max_by_key(|f| f.area)
            .unwrap_or(base)
    }

    /// Local improvement of `fill` with the `optional` buffers it does not
    /// hold, until nothing improves or the deadline passes.
    fn improve(
        &mut self,
        p: PoolIdx,
        fill: PoolFill,
        optional: &[BufferIdx],
        deadline: &Stop,
    ) -> PoolFill {
        match self.pack(p, fill, optional, deadline) {
            ControlFlow::Break(fill) => fill,
            ControlFlow::Continue(fill) => self.insert(p, fill, optional, deadline),
        }
    }

    /// Pack: the kept buffers as low as the solvers put them, then the
    /// `optional` others offered again, while that holds more; `Break`
    /// when the deadline passed.
    fn pack(
        &mut self,
        p: PoolIdx,
        mut fill: PoolFill,
        optional: &[BufferIdx],
        deadline: &Stop,
    ) -> ControlFlow<PoolFill, PoolFill> {
        let problem = self.problem;
        loop {
            if self.passed(deadline) {
                return ControlFlow::Break(fill);
            }
            let members: Vec<BufferIdx> = fill.placed.iter().map(|&(b, _)| b).collect();
            let makespan = fill_makespan(problem, &fill);
            self.effort.packs += 1;
            let Answer::Fits(offsets) = self.probe(p, &members, self.slice(deadline, 4), true)
            else {
                break;
            };
            let packed = self.fill_from(p, &members, &offsets);
            if fill_makespan(problem, &packed) >= makespan {
                break;
            }
            let refilled = self.best_refill(packed, optional);
            if refilled.area <= fill.area {
                break;
            }
            fill = refilled;
        }
        ControlFlow::Continue(fill)
    }

    /// Insert: the `optional` buffers `fill` passed over, most bytes × time
    /// first: offered at their first fit, else planned with the kept ones
    /// by the solvers, or swapped in where the load leaves no room.
    fn insert(
        &mut self,
        p: PoolIdx,
        mut fill: PoolFill,
        optional: &[BufferIdx],
        deadline: &Stop,
    ) -> PoolFill {
        let problem = self.problem;
        let capacity = problem.pool(p).capacity;
        let mut inside = vec![false; problem.len()];
        let mut load = LoadTree::new(self.timeline.segments());
        for &(b, _) in &fill.placed {
            inside[b.index()] = true;
            let (lo, hi) = self.timeline.span(b);
            load.add(lo, hi, problem.buffer(b).size);
        }
        let outside: Vec<BufferIdx> = optional
            .iter()
            .copied()
            .filter(|b| !inside[b.index()])
            .collect();
        let mut is_optional = vec![false; problem.len()];
        for &b in optional {
            is_optional[b.index()] = true;
        }
        for b in sorted(problem, &outside, FillOrder::Area, &[]) {
            let (lo, hi) = self.timeline.span(b);
            let size = problem.buffer(b).size;
            if inside[b.index()] {
                continue;
            }
            if load.max(lo, hi) + size > capacity {
                if !self.passed(deadline) {
                    if let Some(swapped) = self.swap(p, &fill, &mut load, b, &is_optional, deadline)
                    {
                        fill = swapped;
                        inside.iter_mut().for_each(|x| *x = false);
                        for &(x, _) in &fill.placed {
                            inside[x.index()] = true;
                        }
                    }
                }
                continue;
            }
            let added = if fill.offer(problem, b) {
                true
            } else if self.passed(deadline) {
                false
            } else if let Some(planned) = self.plan_with(p, &fill, b, deadline) {
                fill = planned;
                true
            } else {
                false
            };
            if added {
                self.effort.inserted += 1;
                inside[b.index()] = true;
                load.add(lo, hi, size);
            }
        }
        fill
    }

    /// `fill` with `b` added, all planned by the solvers within the pool's
    /// capacity, if they can.
    fn plan_with(
        &mut self,
        p: PoolIdx,
        fill: &PoolFill,
        b: BufferIdx,
        deadline: &Stop,
    ) -> Option<PoolFill> {
        let mut members: Vec<BufferIdx> = fill.placed.iter().map(|&(b, _)| b).collect();
        members.push(b);
        match self.probe(p, &members, self.slice(deadline, PROBE_SHARE), false) {
            Answer::Fits(offsets) => Some(self.fill_from(p, &members, &offsets)),
            _ => None,
        }
    }

    /// Swaps passed-over buffer `b` in for kept optional buffers of less
    /// bytes × time: those alive with `b` where its load does not fit are
    /// taken out, least bytes × time first, until it does; if they hold
    /// less than `b`, the solvers plan the others with `b` within the
    /// capacity, and the taken-out buffers are offered again at their
    /// first-fit offsets. Returns the new fill (and updates `load`) when it
    /// holds more than `fill`; otherwise `load` is left as it was.
    fn swap(
        &mut self,
        p: PoolIdx,
        fill: &PoolFill,
        load: &mut LoadTree,
        b: BufferIdx,
        is_optional: &[bool],
        deadline: &Stop,
    ) -> Option<PoolFill> {
        let problem = self.problem;
        let capacity = problem.pool(p).capacity;
        let size = problem.buffer(b).size;
        let (lo, hi) = self.timeline.span(b);
        let room = capacity - size;
        let mut rivals: Vec<BufferIdx> = fill
            .placed
            .iter()
            .map(|&(x, _)| x)
            .filter(|&x| {
                is_optional[x.index()] && problem.buffer(x).overlaps_in_time(problem.buffer(b))
            })
            .collect();
        rivals.sort_by_key(|&x| (problem.area(x), x));
        let mut out: Vec<BufferIdx> = Vec::new();
        let mut out_area: u128 = 0;
        for x in rivals {
            if load.max(lo, hi) <= room || out_area >= problem.area(b) {
                break;
            }
            let (xlo, xhi) = self.timeline.span(x);
            let (slo, shi) = (xlo.max(lo), xhi.min(hi));
            if load.max(slo, shi) <= room {
                continue;
            }
            load.remove(xlo, xhi, problem.buffer(x).size);
            out.push(x);
            out_area += problem.area(x);
        }
        if load.max(lo, hi) > room || out_area >= problem.area(b) {
            add_loads(problem, &self.timeline, load, &out);
            return None;
        }
        self.effort.swaps_tried += 1;
        let mut members: Vec<BufferIdx> = fill
            .placed
            .iter()
            .map(|&(x, _)| x)
            .filter(|x| !out.contains(x))
            .collect();
        members.push(b);
        let Answer::Fits(offsets) =
            self.probe(p, &members, self.slice(deadline, SWAP_PROBE_SHARE), false)
        else {
            add_loads(problem, &self.timeline, load, &out);
            return None;
        };
        let mut next = self.fill_from(p, &members, &offsets);
        load.add(lo, hi, size);
        for x in sorted(problem, &out, FillOrder::Area, &[]) {
            let (xlo, xhi) = self.timeline.span(x);
            let xsize = problem.buffer(x).size;
            if load.max(xlo, xhi) + xsize <= capacity && next.offer(problem, x) {
                load.add(xlo, xhi, xsize);
            }
        }
        if next.area <= fill.area {
            // Undo: back to the loads of `fill`.
            for &(x, _) in &next.placed {
                let (xlo, xhi) = self.timeline.span(x);
                load.remove(xlo, xhi, problem.buffer(x).size);
            }
            let kept: Vec<BufferIdx> = fill.placed.iter().map(|&(x, _)| x).collect();
            add_loads(problem, &self.timeline, load, &kept);
            return None;
        }
        self.effort.swaps += 1;
        Some(next)
    }

    /// Large neighbourhood search on the optional buffers of `fill`: a
    /// passed-over buffer is drawn, the kept optional buffers alive at the
    /// same time are taken out, and they and the passed-over buffers alive
    /// then are offered again (in a random order, or most bytes × time
    /// first with the drawn buffer leading); the new fill is kept when it
    /// holds at least as much. At most [`LNS_ROUNDS_PER_BUFFER`] rounds per
    /// optional buffer, until the deadline.
    fn ruin_and_recreate(
        &mut self,
        p: PoolIdx,
        mut fill: PoolFill,
        optional: &[BufferIdx],
        deadline: &Stop,
    ) -> PoolFill {
        let problem = self.problem;
        let mut rng = ChaCha8Rng::seed_from_u64(self.options.seed ^ u64::from(p.0));
        let mut is_optional = vec![false; problem.len()];
        for &b in optional {
            is_optional[b.index()] = true;
        }
        let rounds = optional.len().saturating_mul(LNS_ROUNDS_PER_BUFFER);
        let mut inside = vec![false; problem.len()];
        for _ in 0..rounds {
            inside.iter_mut().for_each(|x| *x = false);
            for &(b, _) in &fill.placed {
                inside[b.index()] = true;
            }
            let outside: Vec<BufferIdx> = optional
                .iter()
                .copied()
                .filter(|b| !inside[b.index()])
                .collect();
            if outside.is_empty() || self.passed(deadline) {
                break;
            }
            let drawn = outside[rng.gen_range(0..outside.len())];
            let d = problem.buffer(drawn);
            let alive = |b: BufferIdx| problem.buffer(b).overlaps_in_time(d);
            let mut next = PoolFill::new(p, self.spans);
            let mut again: Vec<BufferIdx> = Vec::new();
            for &(b, offset) in &fill.placed {
                if is_optional[b.index()] && alive(b) {
                    again.push(b);
                } else {
                    next.put(problem, b, offset);
                }
            }
            again.extend(outside.iter().copied().filter(|&b| alive(b)));
            if rng.gen_bool(0.5) {
                again.shuffle(&mut rng);
            } else {
                again = sorted(problem, &again, FillOrder::Area, &[]);
                if let Some(i) = again.iter().position(|&b| b == drawn) {
                    again[..=i].rotate_right(1);
                }
            }
            for b in again {
                next.offer(problem, b);
            }
            self.effort.lns_rounds += 1;
            if next.area >= fill.area {
                if next.area > fill.area {
                    self.effort.lns_gains += 1;
                }
                fill = next;
            }
        }
        fill
    }

    /// Whether `deadline` has passed; records that the work was cut short.
    fn passed(&mut self, deadline: &Stop) -> bool {
        if self.options.cancel.is_raised() {
            self.stopped = Some(Stopped::Interrupted);
            return true;
        }
        if deadline.is_cut() {
            self.stopped.get_or_insert(Stopped::TimeLimit);
            return true;
        }
        false
    }

    /// A probe's time: `1/share` of the time left before `deadline`, at
    /// least [`MIN_PROBE`] (zero: the greedy variants alone).
    fn slice(&self, deadline: &Stop, share: u32) -> Duration {
        match deadline.remaining() {
            Some(left) => (left / share).max(MIN_PROBE).min(left),
            None => Duration::from_secs(1),
        }
    }

    /// Asks the solvers whether `members` fit in pool `p` (or, with
    /// `minimise`, for their lowest makespan, which must still fit), within
    /// `limit`.
    fn probe(
        &mut self,
        p: PoolIdx,
        members: &[BufferIdx],
        limit: Duration,
        minimise: bool,
    ) -> Answer {
        let Ok(sub) = self.problem.sub_problem(p, members) else {
            return Answer::Unknown;
        };
        let capacity = self.problem.pool(p).capacity;
        let sub = if minimise {
            sub.with_capacity(None)
        } else {
            sub
        };
        let options = SolveOptions {
            time_limit: Some(limit),
            seed: self.options.seed,
            cancel: self.options.cancel.clone(),
            progress: Default::default(),
            // auto's default budget, not one derived from this probe's
            // share of the clock (which varies from run to run).
            effort: Some(crate::solver::Effort::DEFAULT),
            ignore_hints: self.options.ignore_hints,
            prepared: None,
        };
        self.effort.probes += 1;
        match crate::solver::run(&Auto::default(), &sub, &options) {
            Ok(solution) => {
                if let Some(stopped) = solution.stopped {
                    self.note(stopped);
                }
                if solution.makespan <= capacity {
                    self.effort.probes_fit += 1;
                    Answer::Fits(solution.plan.offsets().to_vec())
                } else {
                    Answer::Unknown
                }
            }
            Err(SolveError::NotFound { reason, .. }) => match reason {
                NotFoundReason::ProvenInfeasible => Answer::Infeasible,
                NotFoundReason::TimeLimit => {
                    self.note(Stopped::TimeLimit);
                    Answer::Unknown
                }
                NotFoundReason::Interrupted => {
                    self.note(Stopped::Interrupted);
                    Answer::Unknown
                }
                _ => Answer::Unknown,
            },
        }
    }

    /// Records what cut a probe short (an interruption outranks the clock).
    fn note(&mut self, stopped: Stopped) {
        if self.stopped != Some(Stopped::Interrupted) {
            self.stopped = Some(stopped);
        }
    }
}

/// The makespan of the buffers in `fill`.
fn fill_makespan(problem: &PoolProblem, fill: &PoolFill) -> u64 {
    fill.placed
        .iter()
        .map(|&(b, offset)| offset + problem.buffer(b).size)
        .max()
        .unwrap_or(0)
}

/// Adds the loads of `buffers` to `load`.
fn add_loads(
    problem: &PoolProblem,
    timeline: &Timeline,
    load: &mut LoadTree,
    buffers: &[BufferIdx],
) {
    for &x in buffers {
        let (lo, hi) = timeline.span(x);
        load.add(lo, hi, problem.buffer(x).size);
    }
}
