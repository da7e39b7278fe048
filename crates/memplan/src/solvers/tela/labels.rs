//! Labels for the learned backtracking (TelaMalloc §6.3), from an oracle:
//! memplan's exact search decides whether the placements on the path up
//! to a level can be completed. Test-only: the harness
//! [`backtracking_labels`] writes the training data of
//! `scripts/train_backtracking.py`; [`oracle_guided`] measures the upper
//! bound, tela with every major backtrack steered by the oracle.
//!
//! For a recorded major backtrack from `depth` (an [`Event`]), target `x`
//! keeps the first `x` placements. The *minimum* target `M` is the
//! largest `x` whose placements can be completed (bisection over levels,
//! results cached by path); the *best* target `B` is the largest `x` whose
//! placements all belong to the final plan (tela's, or the search's when
//! tela found none). A target's label is the pointwise score of §6.4:
//! `10 - 5 (x - B) / (M - B + 1)` for `B <= x <= M`, else 0.

use super::drive::Work;
use super::learned::{Event, FEATURE_NAMES};
use super::model::{Model, Models};
use super::state::State;
use super::TelaOptions;
use crate::plan::validate;
use crate::problem::Problem;
use crate::solver::{Effort, NotFoundReason, Probe, SolveError, SolveOptions, Solver};
// The module is test-only; the attribute also tells the layers test so.
#[cfg(test)]
use crate::solvers::search::Search;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The pointwise score of target `x` given the best and minimum targets.
pub(super) fn score(x: u32, best: u32, minimum: u32) -> f64 {
    if x < best || x > minimum {
        0.0
    } else {
        10.0 - 5.0 * f64::from(x - best) / f64::from(minimum - best + 1)
    }
}

/// The oracle: whether the placements `prefix` (local buffer, offset) of
/// `model`'s group can be completed into a plan of `problem` within
/// `capacity`, decided by the exact search within `effort`; `None` when
/// it does not decide. The search is not complete with fixed buffers: when
/// it ends undecided within its budget, the placements are taken as not
/// completable.
pub(super) struct Oracle<'a> {
    pub(super) problem: &'a Problem,
    pub(super) model: &'a Model,
    pub(super) capacity: u64,
    pub(super) effort: f64,
    cache: HashMap<Vec<(u32, u64)>, Option<bool>>,
    /// Search runs made (cache misses).
    pub(super) runs: u64,
    /// The completions found (local offsets), the latest last: a path
    /// whose placements all agree with one is completable.
    completions: Vec<Vec<u64>>,
    /// The paths found not completable, as (length, hash of the
    /// placements): no path extending one is completable.
    failing: HashSet<(usize, u64)>,
    /// Whether answers are inferred from the completions and failures
    /// (off for the labels of the shipped model, which were collected
    /// without, so that its rebuild gives the same labels).
    pub(super) infer: bool,
    /// Whether a prefix whose holes no unplaced buffer fits in is given to
    /// the search as the floor it leaves (see [`Oracle::floor_problem`])
    /// rather than as fixed buffers, with which the search is incomplete.
    pub(super) floor: bool,
    /// Questions asked as a floor (the others as fixed buffers).
    pub(super) floors: u64,
}

/// At most this many completions are kept by the oracle.
const COMPLETIONS: usize = 64;

/// The hashes of the first `0..=n` placements of `prefix`.
fn prefix_hashes(prefix: &[(u32, u64)]) -> Vec<u64> {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut out = Vec::with_capacity(prefix.len() + 1);
    out.push(h);
    for &(b, o) in prefix {
        h = (h.rotate_left(5) ^ u64::from(b).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ o)
            .wrapping_mul(0x0100_0000_01b3);
        out.push(h);
    }
    out
}

impl<'a> Oracle<'a> {
    pub(super) fn new(problem: &'a Problem, model: &'a Model, capacity: u64, effort: f64) -> Self {
        Oracle {
            problem,
            model,
            capacity,
            effort,
            cache: HashMap::new(),
            runs: 0,
            completions: Vec::new(),
            failing: HashSet::new(),
            infer: false,
            floor: false,
            floors: 0,
        }
    }

    /// What the answers so far say of `prefix`: the length of its longest
    /// prefix known completable (it agrees with a completion), and the
    /// longest not known to fail (its shortest prefix known not
    /// completable, less one; `prefix.len()` if none).
    pub(super) fn known(&self, prefix: &[(u32, u64)]) -> (u32, u32) {
        let lo = self
            .completions
            .iter()
            .map(|c| {
                prefix
                    .iter()
                    .take_while(|&&(b, o)| c[b as usize] == o)
                    .count()
            })
            .max()
            .unwrap_or(0);
        let hashes = prefix_hashes(prefix);
        let hi = (lo + 1..=prefix.len())
            .find(|&n| self.failing.contains(&(n, hashes[n])))
            .map_or(prefix.len(), |n| n - 1);
        (lo as u32, hi as u32)
    }

    /// A plan of the problem within the capacity with `prefix` fixed, or
    /// `Err(true)` when proven impossible, `Err(false)` when undecided.
    pub(super) fn complete(&mut self, prefix: &[(u32, u64)]) -> Result<Vec<u64>, bool> {
        if self.floor {
            if let Some((p, kept)) = self.floor_problem(prefix) {
                self.floors += 1;
                let mut offsets = self.search(&p)?;
                offsets.truncate(kept.len());
                let mut global = vec![0u64; self.problem.len()];
                for (k, &i) in kept.iter().enumerate() {
                    global[i] = offsets[k];
                }
                for &(b, o) in prefix {
                    global[self.model.global[b as usize].index()] = o;
                }
                let plan = crate::plan::Plan::from_offsets(global.clone());
                let p = self.problem.clone().with_capacity(Some(self.capacity));
                assert_eq!(validate(&p, &plan), Ok(()));
                return Ok(global);
            }
        }
        let mut buffers = self.problem.buffers().to_vec();
        for &(b, o) in prefix {
            buffers[self.model.global[b as usize].index()].fixed_offset = Some(o);
        }
        let p = Problem::new(buffers, Some(self.capacity)).map_err(|_| false)?;
        self.search(&p)
    }

    /// The residual problem of `prefix` as a floor, and the global indices
    /// of its first buffers (the problem's other buffers, in order; the
    /// floor's fixed buffers follow): `None` when the problem has fixed
    /// buffers, or when an unplaced buffer of the group fits below the
    /// highest end of the prefix's buffers alive over its lifetime (a hole
    /// it could use). Else every unplaced buffer's valid offsets are
    /// exactly those at or above that end, so the prefix's buffers can be
    /// replaced by fixed buffers `[0, h)`, `h` the highest end of those
    /// alive, over each run of times: a floor, under which the search's
    /// canonical placements stay complete.
    fn floor_problem(&self, prefix: &[(u32, u64)]) -> Option<(Problem, Vec<usize>)> {
        let (problem, m) = (self.problem, self.model);
        if problem.buffers().iter().any(|b| b.fixed_offset.is_some()) {
            return None;
        }
        let mut offset = vec![u64::MAX; m.len()];
        for &(b, o) in prefix {
            offset[b as usize] = o;
        }
        let mut ranges = Vec::new();
        for j in 0..m.len() {
            if offset[j] != u64::MAX {
                continue;
            }
            ranges.clear();
            for &i in m.neighbours(j) {
                let o = offset[i as usize];
                if o != u64::MAX {
                    ranges.push((o, o + m.size[i as usize]));
                }
            }
            ranges.sort_unstable();
            let top = ranges.iter().map(|r| r.1).max().unwrap_or(0);
            if crate::geometry::fit::first_fit(&ranges, m.size[j], m.align[j]) < top {
                return None;
            }
        }
        let buffers = problem.buffers();
        let placed: Vec<(u64, u64, u64)> = prefix
            .iter()
            .map(|&(b, o)| {
                let g = &buffers[m.global[b as usize].index()];
                (g.start, g.end, o + g.size)
            })
            .collect();
        let mut times: Vec<u64> = placed.iter().flat_map(|p| [p.0, p.1]).collect();
        times.sort_unstable();
        times.dedup();
        let mut kept_buffers = Vec::new();
        let mut kept = Vec::new();
        let mut in_prefix = vec![false; buffers.len()];
        for &(b, _) in prefix {
            in_prefix[m.global[b as usize].index()] = true;
        }
        for (i, b) in buffers.iter().enumerate() {
            if !in_prefix[i] {
                kept.push(i);
                kept_buffers.push(b.clone());
            }
        }
        let mut run: Option<(u64, u64, u64)> = None; // (start, end, height)
        let mut floors = Vec::new();
        for w in times.windows(2) {
            let (a, z) = (w[0], w[1]);
            let h = placed
                .iter()
                .filter(|p| p.0 < z && p.1 > a)
                .map(|p| p.2)
                .max()
                .unwrap_or(0);
            match &mut run {
                Some(r) if r.2 == h && r.1 == a => r.1 = z,
                _ => {
                    floors.extend(run.take());
                    run = Some((a, z, h));
                }
            }
        }
        floors.extend(run);
        for (k, &(a, z, h)) in floors.iter().enumerate() {
            if h > 0 {
                let mut b = crate::buffer::Buffer::new(format!("floor-{k}"), a, z, h);
                b.fixed_offset = Some(0);
                kept_buffers.push(b);
            }
        }
        let p = Problem::new(kept_buffers, Some(self.capacity)).ok()?;
        Some((p, kept))
    }

    /// The search's plan of `p` within `self.effort`, or `Err(true)` when
    /// it finds none (proven, or ended within its budget), `Err(false)`
    /// when undecided otherwise.
    fn search(&mut self, p: &Problem) -> Result<Vec<u64>, bool> {
        self.runs += 1;
        let options = SolveOptions {
            effort: Effort::new(self.effort),
            time_limit: Some(Duration::from_secs(20)),
            ..SolveOptions::default()
        };
        match Search::default().solve(p, &options) {
            Ok(s) => {
                assert_eq!(validate(p, &s.plan), Ok(()));
                Ok(s.plan.offsets().to_vec())
            }
            Err(SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            }) => Err(true),
            // With fixed buffers the search is not complete: a search that
            // ended undecided within its budget found no completion in the
            // space it explores, taken as none (an approximation of the
            // paper's ILP oracle).
            Err(SolveError::NotFound {
                reason: NotFoundReason::Incomplete | NotFoundReason::WorkLimit,
                ..
            }) => Err(true),
            Err(_) => Err(false),
        }
    }

    /// Whether `prefix` can be completed (cached); `None`: undecided.
    pub(super) fn completable(&mut self, prefix: &[(u32, u64)]) -> Option<bool> {
        if let Some(&known) = self.cache.get(prefix) {
            return known;
        }
        if self.infer {
            let (lo, hi) = self.known(prefix);
            if lo as usize == prefix.len() && !self.completions.is_empty() {
                return Some(true);
            }
            if (hi as usize) < prefix.len() {
                return Some(false);
            }
        }
        let answer = match self.complete(prefix) {
            Ok(global) => {
                if self.completions.len() >= COMPLETIONS {
                    self.completions.remove(0);
                }
                let local = self.model.global.iter().map(|b| global[b.index()]);
                self.completions.push(local.collect());
                Some(true)
            }
            Err(true) => {
                let hash = prefix_hashes(prefix)[prefix.len()];
                self.failing.insert((prefix.len(), hash));
                Some(false)
            }
            Err(false) => None,
        };
        self.cache.insert(prefix.to_vec(), answer);
        answer
    }

    /// The minimum target of `event`: the largest `x` in `[best, depth]`
    /// whose first `x` placements can be completed, knowing that the first
    /// `best` can; `None` if the oracle leaves a step undecided.
    pub(super) fn minimum(&mut self, event: &Event, best: u32) -> Option<u32> {
        let prefix = &event.prefix[..event.depth as usize];
        let (known_lo, known_hi) = if self.infer {
            self.known(prefix)
        } else {
            (0, event.depth)
        };
        let (mut lo, mut hi) = (best.max(known_lo), known_hi.max(best));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.completable(&prefix[..mid as usize])? {
                // The completion found may agree with the path further.
                lo = if self.infer {
                    mid.max(self.known(prefix).0.min(hi))
                } else {
                    mid
                };
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }
}

/// The best target of `event` given the final plan's `offsets` (local): the
/// number of leading placements that are in it.
pub(super) fn best(event: &Event, offsets: &[u64]) -> u32 {
    event
        .prefix
        .iter()
        .take_while(|&&(b, o)| offsets[b as usize] == o)
        .count() as u32
}

/// The decision of `model`'s group at `capacity` with its major
/// backtracks recorded: the probe, the effort and the events.
pub(super) fn recorded(
    model: &Model,
    capacity: u64,
    options: &TelaOptions,
    seed: u64,
) -> (Probe, Work, Vec<Event>) {
    let deadline = SolveOptions::default().stop();
    let mut state = State::new(model, capacity, options, &deadline, seed);
    state.events = Some(Vec::new());
    let mut work = Work::default();
    let probe = model.decide_in(&mut state, options, options.step_limit, &mut work);
    let events = state.events.take().unwrap_or_default();
    (probe, work, events)
}

/// One labelled target: the event's number, the target, and its row.
pub(super) struct Label {
    pub(super) event: usize,
    pub(super) depth: u32,
    pub(super) target: u32,
    pub(super) default: u32,
    pub(super) taken: u32,
    pub(super) best: u32,
    pub(super) minimum: u32,
    /// The event's [`Event::holes`].
    pub(super) holes: u32,
    pub(super) score: f64,
    pub(super) features: [f64; super::learned::FEATURES],
}

/// The labels of recorded major backtrack `k` (`event`) given its best
/// target `b` and minimum target `m` (§6.3), one per candidate target.
fn push_labels(out: &mut Vec<Label>, k: usize, event: &Event, b: u32, m: u32) {
    for (&t, x) in event.targets.iter().zip(&event.features) {
        out.push(Label {
            event: k,
            depth: event.depth,
            target: t,
            default: event.default,
            taken: event.taken,
            best: b,
            minimum: m,
            holes: event.holes,
            score: score(t, b, m),
            features: *x,
        });
    }
}

/// The labels of (at most `per_instance`, evenly spaced) recorded major
/// backtracks of tela on `problem` at `capacity` (one time group: the
/// first with major backtracks), with the oracle's `effort`.
pub(super) fn labels(
    problem: &Problem,
    capacity: u64,
    options: &TelaOptions,
    seed: u64,
    per_instance: usize,
    effort: f64,
) -> Vec<Label> {
    let Some(models) = Models::new(problem, options, &crate::stop::Stop::never()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for model in &models.models {
        let (probe, _, events) = recorded(model, capacity, options, seed);
        if events.is_empty() {
            continue;
        }
        let mut oracle = Oracle::new(problem, model, capacity, effort);
        // The final plan: tela's, else the search's from scratch.
        let offsets: Vec<u64> = match probe {
            Probe::Fits(plan) => plan.offsets().to_vec(),
            _ => match oracle.complete(&[]) {
                Ok(global) => model.global.iter().map(|b| global[b.index()]).collect(),
                Err(_) => return out,
            },
        };
        let step = events.len().div_ceil(per_instance.max(1));
        for (k, event) in events.iter().enumerate().step_by(step.max(1)) {
            let b = best(event, &offsets);
            let Some(m) = oracle.minimum(event, b) else {
                continue;
            };
            push_labels(&mut out, k, event, b, m);
        }
        break;
    }
    out
}

/// How [`mixed_labels`] collects: labelled major backtracks per
/// instance, the oracle's work budget per question, and the share of
/// labelled backtracks that jump to the oracle's target.
#[derive(Clone, Copy, Debug)]
pub(super) struct Collection {
    pub(super) per_instance: usize,
    pub(super) effort: f64,
    pub(super) mix: f64,
    /// The oracle's [`Oracle::floor`].
    pub(super) floor: bool,
    /// The forest that picks the targets the oracle does not (with
    /// `options.learned_backtracking`; on-policy labels): `None`, the
    /// shipped one.
    pub(super) policy: Option<&'static super::learned::Forest>,
}

/// The labels of tela's major backtracks on `problem` at `capacity` with
/// the collection mix of TelaMalloc §6.5: the run is steered by the
/// oracle. Labelled backtracks are spaced on a doubling stride (every one
/// at first, then every 2nd, 4th, ..., the stride doubling every
/// `per_instance / 8` labels), so that long runs are covered, up to
/// `per_instance` of them. At each labelled backtrack the oracle finds
/// the minimum target (the deepest level whose placements can be
/// completed), and with probability `mix` (drawn from `seed`) the search
/// jumps to the deepest candidate target at or above it instead of the
/// default target. The best targets come from the final plan (tela's,
/// else `known`, a plan of the problem within the capacity, such as the
/// generator's, else the search's with 20 times the oracle's budget). One
/// time group: the first with major backtracks.
pub(super) fn mixed_labels(
    problem: &Problem,
    capacity: u64,
    options: &TelaOptions,
    seed: u64,
    collection: &Collection,
    known: Option<&[u64]>,
) -> Vec<Label> {
    let Collection {
        per_instance,
        effort,
        mix,
        floor,
        policy,
    } = *collection;
    use rand::{Rng, SeedableRng};
    use std::cell::RefCell;
    let Some(models) = Models::new(problem, options, &crate::stop::Stop::never()) else {
        return Vec::new();
    };
    let per_stride = (per_instance / 8).max(1);
    for model in &models.models {
        let mut fresh = Oracle::new(problem, model, capacity, effort);
        fresh.floor = floor;
        let oracle = RefCell::new(fresh);
        // (event number, minimum target) of the labelled backtracks.
        let minima: RefCell<Vec<(usize, u32)>> = RefCell::new(Vec::new());
        let deadline = SolveOptions::default().stop();
        let mut state = State::new(model, capacity, options, &deadline, seed);
        if options.learned_backtracking && policy.is_some() {
            state.forest = policy;
        }
        state.events = Some(Vec::new());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_add(1));
        let (mut count, mut next, mut stride) = (0usize, 0usize, 1usize);
        let (oracle_at, minima_at) = (&oracle, &minima);
        state.steer = Some(Box::new(move |event: &Event| {
            let k = count;
            count += 1;
            let labelled = minima_at.borrow().len();
            if k != next || labelled >= per_instance {
                return None;
            }
            if (labelled + 1) % per_stride == 0 {
                stride *= 2;
            }
            next += stride;
            let m = oracle_at.borrow_mut().minimum(event, 0)?;
            minima_at.borrow_mut().push((k, m));
            if rng.gen_bool(mix.clamp(0.0, 1.0)) {
                event.targets.iter().rev().find(|&&t| t <= m).copied()
            } else {
                None
            }
        }));
        let mut work = Work::default();
        let probe = model.decide_in(&mut state, options, options.step_limit, &mut work);
        let events = state.events.take().unwrap_or_default();
        drop(state);
        let minima = minima.into_inner();
        if events.is_empty() {
            continue;
        }
        let mut oracle = oracle.into_inner();
        let offsets: Vec<u64> = match (probe, known) {
            (Probe::Fits(plan), _) => plan.offsets().to_vec(),
            (_, Some(global)) => model.global.iter().map(|b| global[b.index()]).collect(),
            _ => {
                oracle.effort *= 20.0;
                let plan = oracle.complete(&[]);
                oracle.effort /= 20.0;
                match plan {
                    Ok(global) => model.global.iter().map(|b| global[b.index()]).collect(),
                    Err(_) => return Vec::new(),
                }
            }
        };
        let mut out = Vec::new();
        for (k, m) in minima {
            let event = &events[k];
            let b = best(event, &offsets);
            let m = if b > m {
                match oracle.minimum(event, b) {
                    Some(m) => m,
                    None => continue,
                }
            } else {
                m
            };
            push_labels(&mut out, k, event, b, m);
        }
        return out;
    }
    Vec::new()
}

/// The harness that writes the training data (`cargo test -p memplan
/// --release backtracking_labels -- --ignored`), configured by
/// environment variables: `MEMPLAN_LABELS` (the CSV written; required),
/// `MEMPLAN_LABELS_KINDS` (generator kinds, default `perfect,challenging`),
/// `MEMPLAN_LABELS_BUFFERS` (`200`), `MEMPLAN_LABELS_SEEDS` (`101:120`),
/// `MEMPLAN_LABELS_FACTORS` (`1.00,1.02,1.05,1.10`),
/// `MEMPLAN_LABELS_EVENTS` (labelled major backtracks per instance, `40`),
/// `MEMPLAN_LABELS_EFFORT` (the oracle's work budget, `0.05`),
/// `MEMPLAN_LABELS_STEPS` (tela's step limit, `100000`) and
/// `MEMPLAN_LABELS_MIX` (the share of labelled backtracks that jump to the
/// oracle's target, TelaMalloc §6.5; `0`: tela's default backtracking,
/// evenly spaced labels); with a mix, `MEMPLAN_LABELS_FLOOR=1` makes the
/// oracle ask as a floor ([`Oracle::floor`]), and `MEMPLAN_LABELS_MODEL`
/// (a model file of `scripts/train_backtracking.py`) picks the other
/// targets with `MEMPLAN_LABELS_POLICY` (its threshold and depth weight,
/// `0,25`) instead of the default backtracking (on-policy labels).
#[cfg(test)]
#[test]
#[ignore]
fn backtracking_labels() {
    use crate::generate::{generate, Kind};
    use crate::named::Named;
    use std::io::Write;
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let Ok(path) = std::env::var("MEMPLAN_LABELS") else {
        eprintln!("MEMPLAN_LABELS is not set: nothing to do");
        return;
    };
    let kinds: Vec<Kind> = var("MEMPLAN_LABELS_KINDS", "perfect,challenging")
        .split(',')
        .map(|k| Kind::parse(k).unwrap())
        .collect();
    let sizes: Vec<usize> = var("MEMPLAN_LABELS_BUFFERS", "200")
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    let seeds = var("MEMPLAN_LABELS_SEEDS", "101:120");
    let (lo, hi) = seeds.split_once(':').unwrap();
    let (lo, hi): (u64, u64) = (lo.parse().unwrap(), hi.parse().unwrap());
    let factors: Vec<f64> = var("MEMPLAN_LABELS_FACTORS", "1.00,1.02,1.05,1.10")
        .split(',')
        .map(|f| f.parse().unwrap())
        .collect();
    let per_instance: usize = var("MEMPLAN_LABELS_EVENTS", "40").parse().unwrap();
    let effort: f64 = var("MEMPLAN_LABELS_EFFORT", "0.05").parse().unwrap();
    let steps: u64 = var("MEMPLAN_LABELS_STEPS", "100000").parse().unwrap();
    let mix: f64 = var("MEMPLAN_LABELS_MIX", "0").parse().unwrap();
    let floor = var("MEMPLAN_LABELS_FLOOR", "0") == "1";
    // On-policy labels: a model's own targets where the oracle's are not
    // taken.
    let policy: Option<&'static super::learned::Forest> =
        std::env::var("MEMPLAN_LABELS_MODEL").ok().map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            &*Box::leak(Box::new(super::learned::Forest::parse(&text).unwrap()))
        });
    let (threshold, weight) = var("MEMPLAN_LABELS_POLICY", "0,25")
        .split_once(',')
        .map(|(t, w)| (t.parse().unwrap(), w.parse().unwrap()))
        .unwrap();
    // The on-policy labels of the shipped model were collected with the
    // policy's jumps.
    let options = TelaOptions {
        step_limit: steps,
        learned_backtracking: policy.is_some(),
        learned_jump: true,
        learned_threshold: threshold,
        learned_depth_weight: weight,
        ..TelaOptions::default()
    };
    let mut out = std::fs::File::create(&path).unwrap();
    write!(
        out,
        "kind,buffers,seed,factor,event,depth,target,default,taken,best,minimum,holes,score"
    )
    .unwrap();
    for name in FEATURE_NAMES {
        write!(out, ",{name}").unwrap();
    }
    writeln!(out).unwrap();
    for &kind in &kinds {
        for &n in &sizes {
            for seed in lo..=hi {
                let generated = generate(kind, n, seed);
                let problem = generated.problem;
                for &factor in &factors {
                    let capacity = (problem.max_load() as f64 * factor) as u64;
                    // The generator's plan, when it is within the capacity.
                    let known = generated
                        .optimal_plan
                        .as_ref()
                        .or(generated.known_plan.as_ref())
                        .filter(|plan| plan.makespan(&problem) <= capacity)
                        .map(|plan| plan.offsets());
                    let labels = if mix > 0.0 {
                        mixed_labels(
                            &problem,
                            capacity,
                            &options,
                            seed,
                            &Collection {
                                per_instance,
                                effort,
                                mix,
                                floor,
                                policy,
                            },
                            known,
                        )
                    } else {
                        labels(&problem, capacity, &options, seed, per_instance, effort)
                    };
                    eprintln!(
                        "{} {n} {seed} {factor}: {} labels",
                        kind.name(),
                        labels.len()
                    );
                    for l in labels {
                        write!(
                            out,
                            "{},{n},{seed},{factor},{},{},{},{},{},{},{},{},{}",
                            kind.name(),
                            l.event,
                            l.depth,
                            l.target,
                            l.default,
                            l.taken,
                            l.best,
                            l.minimum,
                            l.holes,
                            l.score
                        )
                        .unwrap();
                        for x in l.features {
                            write!(out, ",{x}").unwrap();
                        }
                        writeln!(out).unwrap();
                    }
                }
            }
        }
    }
}

/// Where an oracle-guided run ([`guided`]) jumps at every major backtrack.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Guide {
    /// Tela's own target (a check that the harness runs tela as it is).
    Default,
    /// The best target B (§6.3): the deepest level whose placements all
    /// belong to a known plan.
    Best,
    /// The oracle's minimum target M (§6.3), the deepest level found
    /// completable, searched from B.
    Minimum,
    /// The deepest candidate target (§6.2) at or above M: the best a model
    /// ranking the candidates can do.
    Candidate,
}

/// The end of an oracle-guided run: whether a plan was found, tela's
/// steps and major backtracks, the backtracks steered, the oracle's
/// search runs and seconds, and whether the oracle's time ran out.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Guided {
    pub(super) found: bool,
    pub(super) steps: u64,
    pub(super) major: u64,
    pub(super) steered: u64,
    pub(super) runs: u64,
    pub(super) seconds: f64,
    pub(super) capped: bool,
    /// Steered backtracks where the oracle proved no level deeper than B
    /// completable (its target is then B, or the deepest candidate at or
    /// above it).
    pub(super) shallow: u64,
    /// The sum of the steered jumps' lengths (depth - target).
    pub(super) jumped: u64,
    /// The oracle's questions asked as a floor ([`Oracle::floor`]).
    pub(super) floors: u64,
}

/// The oracle of an oracle-guided run: the search's work budget per
/// question and the seconds of questions per run.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget {
    pub(super) effort: f64,
    pub(super) seconds: f64,
    /// The oracle's [`Oracle::floor`].
    pub(super) floor: bool,
}

/// Tela on `problem` at `capacity` (every time group, the step limit
/// shared as in [`Models::decide`], seed `seed`) with every major backtrack
/// steered by `guide`, given `known`, a plan within the capacity (the
/// generator's or the search's). The oracle answers within `budget`,
/// after which the run backtracks by default. The upper bound of learned backtracking (§6):
/// what a perfect choice of target achieves.
#[cfg(test)]
pub(super) fn guided(
    problem: &Problem,
    capacity: u64,
    options: &TelaOptions,
    seed: u64,
    known: &[u64],
    guide: Guide,
    budget: Budget,
) -> Guided {
    let Budget {
        effort,
        seconds: oracle_seconds,
        floor,
    } = budget;
    use std::cell::Cell;
    let Some(models) = Models::new(problem, options, &crate::stop::Stop::never()) else {
        return Guided::default();
    };
    let mut work = Work::default();
    let step_limit = options.step_limit;
    let (steered, runs, spent, capped) =
        (Cell::new(0), Cell::new(0), Cell::new(0.0), Cell::new(false));
    let (shallow, jumped, floors) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let deadline = SolveOptions::default().stop();
    let mut found = true;
    for (g, model) in models.models.iter().enumerate() {
        let seed = seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let local: Vec<u64> = model.global.iter().map(|b| known[b.index()]).collect();
        let mut oracle = Oracle::new(problem, model, capacity, effort);
        oracle.infer = true;
        oracle.floor = floor;
        let mut state = State::new(model, capacity, options, &deadline, seed);
        state.events = Some(Vec::new());
        state.steer_only = true;
        let (steered, runs, spent, capped) = (&steered, &runs, &spent, &capped);
        let (shallow, jumped, floors) = (&shallow, &jumped, &floors);
        state.steer = Some(Box::new(move |event: &Event| {
            let b = best(event, &local);
            if guide == Guide::Default || capped.get() {
                return None;
            }
            steered.set(steered.get() + 1);
            if guide == Guide::Best {
                jumped.set(jumped.get() + u64::from(event.depth - b));
                return Some(b);
            }
            if spent.get() >= oracle_seconds {
                capped.set(true);
                return None;
            }
            let start = std::time::Instant::now();
            let (before, floors_before) = (oracle.runs, oracle.floors);
            if oracle.cache.len() > 4096 {
                oracle.cache.clear();
            }
            let target = match guide {
                // Bisection over the candidates: completable is monotone
                // (a prefix of a completable path is completable), and the
                // first `b` placements are completable.
                Guide::Candidate => {
                    let t = &event.targets;
                    let (mut lo, mut hi) = (0usize, t.len());
                    while lo < hi {
                        let mid = (lo + hi) / 2;
                        let yes = t[mid] <= b
                            || oracle
                                .completable(&event.prefix[..t[mid] as usize])
                                .unwrap_or(false);
                        if yes {
                            lo = mid + 1;
                        } else {
                            hi = mid;
                        }
                    }
                    lo.checked_sub(1).map(|i| t[i])
                }
                _ => Some(oracle.minimum(event, b).unwrap_or(b)),
            };
            let proven = match guide {
                Guide::Candidate => target.is_some_and(|t| t > b),
                _ => target != Some(b),
            };
            if !proven {
                shallow.set(shallow.get() + 1);
            }
            if let Some(t) = target {
                jumped.set(jumped.get() + u64::from(event.depth - t));
            }
            runs.set(runs.get() + oracle.runs - before);
            floors.set(floors.get() + oracle.floors - floors_before);
            spent.set(spent.get() + start.elapsed().as_secs_f64());
            target
        }));
        match model.decide_in(&mut state, options, step_limit, &mut work) {
            Probe::Fits(_) => {}
            _ => {
                found = false;
                break;
            }
        }
    }
    Guided {
        found,
        steps: work.effort.steps,
        major: work.effort.major_backtracks,
        steered: steered.get(),
        runs: runs.get(),
        seconds: spent.get(),
        capped: capped.get(),
        shallow: shallow.get(),
        jumped: jumped.get(),
        floors: floors.get(),
    }
}

/// The oracle-guided runs (`cargo test -p memplan --release --lib
/// oracle_guided -- --ignored`): for every input of `MEMPLAN_GUIDED_INPUTS`
/// (a CSV with columns kind, buffers, seed, factor), tela with each guide
/// of `MEMPLAN_GUIDED_MODES` (`default,best,minimum,candidate`), written to
/// `MEMPLAN_GUIDED` as CSV; the oracle's budget `MEMPLAN_GUIDED_EFFORT`
/// (`0.05`) per question, `MEMPLAN_GUIDED_SECONDS` (`120`) per run, tela's
/// `MEMPLAN_GUIDED_STEPS` (`100000`); `MEMPLAN_GUIDED_FLOOR=1`: the
/// oracle asks as a floor ([`Oracle::floor`]). The known plan is the
/// generator's when it is within the capacity, else the search's (effort
/// `MEMPLAN_GUIDED_SEARCH`, `0.5`: the population's proof).
#[cfg(test)]
#[test]
#[ignore]
fn oracle_guided() {
    use crate::generate::{generate, Kind};
    use crate::named::Named;
    use std::io::Write;
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let (Ok(inputs), Ok(path)) = (
        std::env::var("MEMPLAN_GUIDED_INPUTS"),
        std::env::var("MEMPLAN_GUIDED"),
    ) else {
        eprintln!("MEMPLAN_GUIDED_INPUTS or MEMPLAN_GUIDED is not set: nothing to do");
        return;
    };
    let modes: Vec<Guide> = var("MEMPLAN_GUIDED_MODES", "default,best,minimum,candidate")
        .split(',')
        .map(|m| match m {
            "default" => Guide::Default,
            "best" => Guide::Best,
            "minimum" => Guide::Minimum,
            "candidate" => Guide::Candidate,
            other => panic!("unknown guide {other}"),
        })
        .collect();
    let effort: f64 = var("MEMPLAN_GUIDED_EFFORT", "0.05").parse().unwrap();
    let seconds: f64 = var("MEMPLAN_GUIDED_SECONDS", "120").parse().unwrap();
    let steps: u64 = var("MEMPLAN_GUIDED_STEPS", "100000").parse().unwrap();
    let search: f64 = var("MEMPLAN_GUIDED_SEARCH", "0.5").parse().unwrap();
    let floor = var("MEMPLAN_GUIDED_FLOOR", "0") == "1";
    let options = TelaOptions {
        step_limit: steps,
        ..TelaOptions::default()
    };
    let text = std::fs::read_to_string(&inputs).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|&h| h == name).unwrap();
    let (ck, cb, cs, cf) = (col("kind"), col("buffers"), col("seed"), col("factor"));
    let mut out = std::fs::File::create(&path).unwrap();
    writeln!(
        out,
        "kind,buffers,seed,factor,mode,found,steps,major,steered,oracle_runs,oracle_seconds,capped,shallow,jumped,floor_questions"
    )
    .unwrap();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let kind = Kind::parse(f[ck]).unwrap();
        let n: usize = f[cb].parse().unwrap();
        let seed: u64 = f[cs].parse().unwrap();
        let factor: f64 = f[cf].parse().unwrap();
        let generated = generate(kind, n, seed);
        let problem = generated.problem;
        let capacity = (problem.max_load() as f64 * factor) as u64;
        let known: Vec<u64> = match generated
            .optimal_plan
            .as_ref()
            .or(generated.known_plan.as_ref())
            .filter(|plan| plan.makespan(&problem) <= capacity)
        {
            Some(plan) => plan.offsets().to_vec(),
            None => {
                let p = problem.clone().with_capacity(Some(capacity));
                let o = SolveOptions {
                    effort: Effort::new(search),
                    time_limit: Some(Duration::from_secs(60)),
                    ..SolveOptions::default()
                };
                match Search::default().solve(&p, &o) {
                    Ok(s) => s.plan.offsets().to_vec(),
                    Err(_) => {
                        eprintln!("{line}: no known plan");
                        continue;
                    }
                }
            }
        };
        for &mode in &modes {
            let g = guided(
                &problem,
                capacity,
                &options,
                0,
                &known,
                mode,
                Budget {
                    effort,
                    seconds,
                    floor,
                },
            );
            let name = format!("{mode:?}").to_lowercase();
            eprintln!("{} {n} {seed} {factor} {name}: {g:?}", kind.name());
            writeln!(
                out,
                "{},{n},{seed},{factor},{name},{},{},{},{},{},{:.3},{},{},{},{}",
                kind.name(),
                u8::from(g.found),
                g.steps,
                g.major,
                g.steered,
                g.runs,
                g.seconds,
                u8::from(g.capped),
                g.shallow,
                g.jumped,
                g.floors
            )
            .unwrap();
            out.flush().unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::learned::{holes_level, targets, Forest};
    use super::*;

    #[test]
    fn scores_are_pointwise_between_best_and_minimum() {
        assert_eq!(score(3, 4, 8), 0.0);
        assert_eq!(score(4, 4, 8), 10.0);
        assert_eq!(score(8, 4, 8), 10.0 - 5.0 * 4.0 / 5.0);
        assert_eq!(score(9, 4, 8), 0.0);
        assert_eq!(score(5, 5, 5), 10.0);
    }

    #[test]
    fn targets_are_every_level_and_holes_find_the_overfull_section() {
        let mut out = vec![7];
        targets(4, &mut out);
        assert_eq!(out, [0, 1, 2, 3]);
        targets(0, &mut out);
        assert!(out.is_empty());
        // a [0, 10) of 4, b [0, 5) and c [5, 10) of 2: every section is
        // full at capacity 6.
        let buffers = vec![
            crate::buffer::Buffer::new("a", 0, 10, 4),
            crate::buffer::Buffer::new("b", 0, 5, 2),
            crate::buffer::Buffer::new("c", 5, 10, 2),
        ];
        let p = Problem::new(buffers, None).unwrap();
        let models = Models::new(&p, &TelaOptions::default(), &crate::stop::Stop::never()).unwrap();
        let m = &models.models[0];
        let local = |g: usize| m.global.iter().position(|b| b.index() == g).unwrap() as u32;
        let (a, b, c) = (local(0), local(1), local(2));
        let level = |path: &[(u32, u64)]| {
            holes_level(m, 6, path.iter().copied(), &mut Vec::new(), &mut Vec::new())
        };
        // a above b leaves a hole of 2 under it where c lives: over at once.
        assert_eq!(level(&[(b, 0), (a, 2), (c, 0)]), 1);
        assert_eq!(level(&[(b, 0), (c, 0), (a, 2)]), 3);
        // With slack 2 (capacity 8) the hole fits.
        let slack = holes_level(
            m,
            8,
            [(b, 0), (a, 2), (c, 0)].into_iter(),
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert_eq!(slack, 3);
    }

    #[test]
    fn forests_parse_and_score() {
        let names: Vec<String> = super::super::learned::FEATURE_NAMES
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect();
        let text = format!(
            r#"{{"features": [{}], "base": 1.5, "trees": [
                {{"feature": [4, 0, 0], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
                  "right": [2, -1, -1], "value": [0, 2.0, -1.0]}}]}}"#,
            names.join(",")
        );
        let forest = Forest::parse(&text).unwrap();
        let mut x = [0.0; super::super::learned::FEATURES];
        assert_eq!(forest.score(&x), 3.5);
        x[4] = 0.7;
        assert_eq!(forest.score(&x), 0.5);
        // A child before its parent, or other features, are refused.
        assert!(Forest::parse(&text.replace("[1, -1, -1]", "[0, -1, -1]")).is_none());
        assert!(Forest::parse(&text.replace("\"size\"", "\"area\"")).is_none());
        // The shipped model parses.
        assert!(super::super::learned::shipped().is_some());
    }

    /// A perfect packing at its max load: tela's recorded major backtracks
    /// get labels with `best <= minimum <= depth`, every target below the
    /// depth, and the oracle's completions are valid plans.
    #[test]
    fn labels_come_from_the_oracle() {
        let options = TelaOptions {
            step_limit: 20_000,
            ..TelaOptions::default()
        };
        // The first seed whose search backtracks.
        let labels = (1..=20)
            .map(|seed| {
                let p = crate::generate::generate(crate::generate::Kind::Perfect, 60, seed).problem;
                let capacity = p.max_load();
                labels(&p, capacity, &options, 1, 5, 0.05)
            })
            .find(|l| !l.is_empty())
            .unwrap();
        for l in &labels {
            assert!(
                l.best <= l.minimum && l.minimum <= l.depth,
                "{} {}",
                l.best,
                l.minimum
            );
            assert!(l.target < l.depth);
            assert_eq!(l.score, score(l.target, l.best, l.minimum));
        }
        assert!(labels.iter().any(|l| l.score > 0.0));
    }

    /// With the shipped model, flagging or jumping, tela's plans validate
    /// and the learned targets change the search: the jumps are taken at
    /// some major backtracks, and the flags change the effort of some runs
    /// (perfect packings at 1.02 times their max load).
    #[test]
    fn learned_backtracking_plans_validate() {
        use super::super::Tela;
        for jump in [false, true] {
            let options = TelaOptions {
                learned_backtracking: true,
                learned_jump: jump,
                step_limit: 20_000,
                ..TelaOptions::default()
            };
            let (mut found, mut changed, mut jumps) = (0, 0, 0);
            for seed in 1..=6 {
                let p = crate::generate::generate(crate::generate::Kind::Perfect, 60, seed).problem;
                let capacity = p.max_load() * 102 / 100;
                let p = p.with_capacity(Some(capacity));
                let solve = |options: &TelaOptions| {
                    let tela = Tela {
                        options: options.clone(),
                    };
                    let s = tela.solve(&p, &SolveOptions::default());
                    if let Ok(s) = &s {
                        assert_eq!(validate(&p, &s.plan), Ok(()));
                        assert!(s.makespan <= capacity);
                    }
                    s.map(|s| s.counters)
                };
                let learned = solve(&options);
                let default = solve(&TelaOptions {
                    learned_backtracking: false,
                    ..options.clone()
                });
                found += usize::from(learned.is_ok());
                changed += usize::from(learned.ok() != default.ok());
                let models = Models::new(&p, &options, &crate::stop::Stop::never()).unwrap();
                for model in &models.models {
                    let (_, _, events) = recorded(model, capacity, &options, 0);
                    jumps += events.iter().filter(|e| e.taken != e.default).count();
                }
            }
            assert!(found >= 5, "jump {jump}: {found}");
            assert!(changed > 0, "jump {jump}");
            assert_eq!(jumps > 0, jump);
        }
    }

    /// The oracle-guided harness runs tela as it is when it does not steer
    /// (the same steps and major backtracks as the solver's counters), and
    /// with the best target of the generator's plan it steers every major
    /// backtrack; the oracle's inferences agree with its searches.
    #[test]
    fn guided_runs_are_tela_steered() {
        use super::super::Tela;
        let options = TelaOptions {
            step_limit: 20_000,
            ..TelaOptions::default()
        };
        let budget = Budget {
            effort: 0.05,
            seconds: 10.0,
            floor: false,
        };
        let mut checked = 0;
        for seed in 1..=20 {
            let generated = crate::generate::generate(crate::generate::Kind::Perfect, 60, seed);
            let p = generated.problem;
            let capacity = p.max_load();
            let known = generated.optimal_plan.unwrap();
            let g = guided(
                &p,
                capacity,
                &options,
                0,
                known.offsets(),
                Guide::Default,
                budget,
            );
            let tela = Tela {
                options: options.clone(),
            };
            let counters = match tela.solve(
                &p.clone().with_capacity(Some(capacity)),
                &SolveOptions::default(),
            ) {
                Ok(s) => s.counters,
                Err(SolveError::NotFound { counters, .. }) => counters,
            };
            let counter = |name: &str| counters.iter().find(|c| c.0 == name).map_or(0, |c| c.1);
            assert_eq!(
                (g.steps, g.major),
                (counter("steps"), counter("major_backtracks"))
            );
            assert_eq!(g.steered, 0);
            if g.major == 0 {
                continue;
            }
            let best = guided(
                &p,
                capacity,
                &options,
                0,
                known.offsets(),
                Guide::Best,
                budget,
            );
            assert_eq!(best.steered, best.major);
            assert_eq!(best.runs, 0);
            checked += 1;
        }
        assert!(checked > 0);
        // A completion makes its own placements known completable.
        let generated = crate::generate::generate(crate::generate::Kind::Perfect, 60, 1);
        let p = generated.problem;
        let models = Models::new(&p, &TelaOptions::default(), &crate::stop::Stop::never()).unwrap();
        let model = models.models.iter().max_by_key(|m| m.global.len()).unwrap();
        assert!(model.global.len() > 10);
        let mut oracle = Oracle::new(&p, model, p.max_load(), 0.05);
        oracle.infer = true;
        assert_eq!(oracle.completable(&[]), Some(true));
        let plan = oracle.completions[0].clone();
        let path: Vec<(u32, u64)> = (0..model.global.len() as u32)
            .map(|b| (b, plan[b as usize]))
            .collect();
        assert_eq!(oracle.known(&path), (path.len() as u32, path.len() as u32));
        let runs = oracle.runs;
        assert_eq!(oracle.completable(&path[..10]), Some(true));
        assert_eq!(oracle.runs, runs);
    }

    /// The floor oracle answers as the fixed-buffer one wherever that one
    /// completes a path (its plans validate, the prefix kept), goes
    /// further on tela's paths of perfect packings at their max load (the
    /// search's exact fill runs above a floor, not among fixed buffers),
    /// and falls back to fixed buffers when an unplaced buffer fits in a
    /// hole of the prefix.
    #[test]
    fn the_floor_oracle_completes_more_paths() {
        let options = TelaOptions {
            step_limit: 5_000,
            ..TelaOptions::default()
        };
        let (mut floors, mut agreed, mut further) = (0, 0, 0);
        for seed in 1..=4 {
            let p = crate::generate::generate(crate::generate::Kind::Perfect, 300, seed).problem;
            let capacity = p.max_load();
            let models = Models::new(&p, &options, &crate::stop::Stop::never()).unwrap();
            let model = models.models.iter().max_by_key(|m| m.global.len()).unwrap();
            let (_, _, events) = recorded(model, capacity, &options, 0);
            let Some(event) = events.iter().max_by_key(|e| e.depth) else {
                continue;
            };
            let mut fixed = Oracle::new(&p, model, capacity, 0.01);
            let mut floor = Oracle::new(&p, model, capacity, 0.01);
            floor.floor = true;
            for x in (0..=event.depth as usize).step_by(8) {
                let prefix = &event.prefix[..x];
                let (a, b) = (fixed.completable(prefix), floor.completable(prefix));
                if a == Some(true) {
                    assert_eq!(b, Some(true), "seed {seed}, {x} placements");
                    agreed += 1;
                } else if b == Some(true) {
                    further += 1;
                }
            }
            floors += floor.floors;
        }
        assert!(
            floors > 0 && agreed > 0 && further > 0,
            "{floors} {agreed} {further}"
        );
        // Buffer 2 fits under buffer 1, beside buffer 0: a hole, so the
        // prefix {0, 1} is asked with fixed buffers.
        let p = crate::testutil::problem(&[(0, 2, 4), (1, 3, 2), (1, 2, 4)]);
        let models = Models::new(&p, &options, &crate::stop::Stop::never()).unwrap();
        let model = &models.models[0];
        let local = |g: usize| model.global.iter().position(|b| b.index() == g).unwrap() as u32;
        let mut oracle = Oracle::new(&p, model, 10, 0.01);
        oracle.floor = true;
        assert!(oracle
            .floor_problem(&[(local(0), 0), (local(1), 8)])
            .is_none());
        assert!(oracle
            .floor_problem(&[(local(0), 0), (local(1), 4)])
            .is_some());
    }

    /// The model's cost per candidate target (printed; `--ignored`).
    #[test]
    #[ignore]
    fn forest_cost_per_candidate() {
        let forest = super::super::learned::shipped().unwrap();
        let n = 200_000;
        let mut x = [0.0; super::super::learned::FEATURES];
        let start = std::time::Instant::now();
        let mut sum = 0.0;
        for i in 0..n {
            for (k, v) in x.iter_mut().enumerate() {
                *v = ((i * 31 + k * 17) % 101) as f64 / 100.0;
            }
            sum += forest.score(&x);
        }
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        eprintln!("{ns:.0} ns per candidate (checksum {sum:.3})");
        assert!(sum.is_finite());
    }
}
