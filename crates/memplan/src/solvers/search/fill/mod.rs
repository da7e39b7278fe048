//! Exact fill: a depth-first search over skylines for capacities with
//! little or no slack, where every address at a peak instant is taken and
//! a hole that no remaining buffer fills exactly is a dead end.
//!
//! Time is cut into the group's sections. The *skyline* gives, for each
//! section, the height below which every address is taken, by a placed
//! buffer or by declared waste. A node takes the lowest segment of the
//! skyline, the leftmost of the lowest, sections `[k1, k2)` at height `h`:
//! both its neighbours are higher (or the ends of the group). In every
//! plan that extends the node, the `g` addresses from `h` at section `k1`
//! (`g` the gcd of the sizes) are either
//!
//! - the bottom of an unplaced buffer placed at `h` that starts at `k1` and
//!   ends by `k2` (it cannot start earlier or end later: the neighbours are
//!   higher): one child per such buffer, one per class of identical buffers
//!   (same sections, same size); or
//! - empty: one child declares `[h, h + g)` waste over sections `[k1, s)`,
//!   `s` the first section after `k1` where an unplaced buffer starts (or
//!   `k2`): no buffer can start in between, so the strip is empty in that
//!   plan too. Waste at a section is allowed up to its *slack*, the capacity
//!   less its load.
//!
//! At zero slack no waste is ever declared: the lowest segment must be
//! tiled exactly by buffers that start where it starts, which prunes far
//! more than the offsets' floors do. Sound and complete for groups without
//! gaps or alignments whose fixed buffers, if any, all sit at offset 0 (any
//! plan lowers, buffer by buffer from the bottom, to one whose offsets are
//! sums of sizes above the *floor* those fixed buffers make, multiples of
//! `g`, the gcd of the sizes and the floor's heights): the skyline starts
//! at the floor, and a section's slack is the capacity less its load and
//! its floor. States that failed are remembered by a 128-bit hash of the placed
//! buffers and the waste declared (identical buffers are placed in index
//! order, so their placed set is a prefix and interchangeable orders meet).
//!
//! ```text
//! sections     0    1    2    3        the lowest segment is [1, 3) at 2:
//! height  4  +----+              +     a buffer starting at section 1,
//!            | b0 |    hole      |     ending by section 3, goes at 2;
//!         2  |    +---------+----+     or, with slack, [2, 2 + g) over
//!            |    |    b1   | b2 |     [1, s) is declared waste
//!         0  +----+---------+----+
//! ```

mod dfs;

use super::counters::Counters;
use super::group::Group;
use crate::geometry::fit::gcd;
use crate::solver::Probe;
use crate::stop::Stop;
use dfs::Fill;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// Failed states remembered at most by each direction (16 bytes each).
const MEMO_CAPACITY: usize = 1 << 20;

/// Work (sections and entries visited) of the fill that costs about as
/// much time as one step of the canonical search per buffer (a step costs
/// O(buffers) there): step budgets convert to work with it.
const WORK_PER_STEP_BUFFER: u64 = 2;

/// Whether the exact fill applies to `group` at `capacity`: no gap or
/// alignment, and no fixed buffer (the search's `plain` and `complete`)
/// or only fixed buffers at offset 0 (its `floor`); and the slack summed
/// over the sections (the capacity less the load and the floor) at most
/// `max_slack` (a fraction) of the capacity summed over them.
pub(super) fn applies(group: &Group, capacity: u64, max_slack: f64) -> bool {
    let floored = group.floor.is_some() && group.align.iter().all(|&a| a == 1);
    if !((group.plain && group.complete || floored) && group.pieces.is_empty())
        || group.size.is_empty()
    {
        return false;
    }
    let mut slack: u128 = 0;
    for k in 0..group.section_count {
        let floor = group.floor.as_ref().map_or(0, |f| f[k]);
        let taken = group.section_load[k].saturating_add(floor);
        if taken > capacity {
            return false;
        }
        slack += u128::from(capacity - taken);
    }
    let whole = u128::from(capacity) * group.section_count as u128;
    (slack as f64) <= max_slack * whole as f64
}

/// How one fill search ended.
#[derive(Clone, Copy, Debug)]
enum End {
    Found,
    Exhausted,
    OutOfBudget,
    OutOfTime,
}

/// Hashes the state keys, already uniform 128-bit values, by folding them.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 ^= (v as u64) ^ ((v >> 64) as u64);
    }
}

/// The lanes' race: the least `(work, lane)` at which a
/// lane decided, packed as `work << 2 | lane` (`u64::MAX`: none yet). A
/// lane whose own `(work, lane)` is past it stops: it cannot decide first.
struct Race(AtomicU64);

impl Race {
    /// Whether a lane at `work` can no longer decide before the leader.
    fn beaten(&self, work: u64, lane: u64) -> bool {
        (work << 2 | lane) > self.0.load(Ordering::Relaxed)
    }
    /// Records that `lane` decided at `work`.
    fn offer(&self, work: u64, lane: u64) {
        self.0.fetch_min(work << 2 | lane, Ordering::Relaxed);
    }
    /// The lane that decided first, if any.
    fn leader(&self) -> Option<usize> {
        let v = self.0.load(Ordering::Relaxed);
        (v != u64::MAX).then_some((v & 3) as usize)
    }
}

impl Group {
    /// Decides the group at `capacity` by the exact fill within
    /// `step_limit` steps (counted in `counters`): a plan, a proof that
    /// none fits, or `Unknown`. Only for groups where [`applies`] holds
    /// (no gap or alignment, fixed buffers only at offset 0).
    pub(super) fn decide_by_fill(
        &self,
        capacity: u64,
        stop: &Stop,
        step_limit: u64,
        counters: &mut Counters,
    ) -> Probe {
        // Four lanes: forward in time and mirrored (bottom-left and
        // bottom-right fill), each with two orders of the buffers at a
        // hole, racing: a dead end hard to see one way is often plain
        // another. Deterministic: the budgets are counted in work, and the
        // answer is that of the lane that decided with the least work (the
        // first in this order on a tie); the others stop once past it and
        // are charged the work up to it.
        let mut lanes = [
            Fill::new(self, capacity, false, false),
            Fill::new(self, capacity, false, true),
            Fill::new(self, capacity, true, false),
            Fill::new(self, capacity, true, true),
        ];
        let per_step = WORK_PER_STEP_BUFFER * self.size.len().max(100) as u64;
        // Each lane's share of the budget, in work.
        let cap = step_limit.saturating_mul(per_step) / lanes.len() as u64;
        let race = Race(AtomicU64::new(u64::MAX));
        // A first slice in this thread, lane after lane (small groups end
        // there), then one thread per lane up to its share.
        let first = (4 * self.size.len() as u64).max(4096) * per_step / 16;
        let mut ends: Vec<End> = lanes
            .iter_mut()
            .enumerate()
            .map(|(k, lane)| lane.search(stop, first.min(cap), &race, k as u64))
            .collect();
        let undecided = race.leader().is_none()
            && !ends.iter().any(|e| matches!(e, End::OutOfTime))
            && lanes.iter().any(|lane| lane.work < cap);
        if undecided {
            let race = &race;
            ends = std::thread::scope(|scope| {
                let handles: Vec<_> = lanes
                    .iter_mut()
                    .enumerate()
                    .map(|(k, lane)| scope.spawn(move || lane.search(stop, cap, race, k as u64)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| crate::solver::joined(h, || End::OutOfTime))
                    .collect()
            });
        }
        let end = match race.leader() {
            Some(k) => ends[k],
            None if ends.iter().any(|e| matches!(e, End::OutOfTime)) => End::OutOfTime,
            None => End::OutOfBudget,
        };
        // The work charged: each lane's, up to the leader's.
        let leader = race.leader();
        let upto = leader.map_or(u64::MAX, |k| lanes[k].work);
        let work: u64 = lanes.iter().map(|lane| lane.work.min(upto)).sum();
        for lane in &lanes {
            counters.add(&Counters {
                steps: 0,
                ..lane.counters
            });
        }
        counters.steps += work.div_ceil(per_step);
        counters.timed_out |= matches!(end, End::OutOfTime);
        let fill = &lanes[leader.unwrap_or(0)];
        match end {
            End::Found => Probe::Fits(self.plan(&fill.offset)),
            End::Exhausted => Probe::Infeasible,
            End::OutOfBudget | End::OutOfTime => Probe::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::plan::validate;
    use crate::problem::{Buffer, Problem};
    use crate::solvers::search::group::Groups;
    use proptest::prelude::*;

    /// The one group of `p` (no decomposition).
    fn group(p: &Problem) -> Group {
        let mut groups = Groups::new(p, false, &Stop::never()).unwrap();
        groups.groups.remove(0)
    }

    /// One lane of the fill, run to the end.
    fn run(group: &Group, capacity: u64, mirror: bool, size_first: bool) -> (End, Vec<u64>) {
        let mut fill = Fill::new(group, capacity, mirror, size_first);
        let race = Race(AtomicU64::new(u64::MAX));
        let end = fill.search(&Stop::never(), u64::MAX, &race, 0);
        (end, fill.offset.clone())
    }

    /// A plan of the fill, checked by the validator at `capacity`.
    fn check_plan(p: &Problem, g: &Group, capacity: u64, offsets: &[u64]) {
        let mut plan = vec![0; p.len()];
        for (i, &m) in g.free.iter().enumerate() {
            plan[g.members[m].0.index()] = offsets[i];
        }
        let at = p.clone().with_capacity(Some(capacity));
        assert_eq!(
            validate(&at, &crate::plan::Plan::from_offsets(plan)),
            Ok(())
        );
    }

    /// Every lane finds a plan of `p` at `opt` (checked by the validator)
    /// and exhausts its search at `opt - 1`.
    fn every_lane_decides(p: &Problem, g: &Group, opt: u64) -> Result<(), TestCaseError> {
        for (mirror, size_first) in [(false, false), (false, true), (true, false), (true, true)] {
            let lane = format!("mirror {mirror}, size first {size_first}");
            let (end, offsets) = run(g, opt, mirror, size_first);
            prop_assert!(matches!(end, End::Found), "{lane}: not found at {opt}");
            check_plan(p, g, opt, &offsets);
            let (below, _) = run(g, opt - 1, mirror, size_first);
            prop_assert!(matches!(below, End::Exhausted), "{lane}: fits below {opt}");
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// Every lane decides exactly what brute force decides: a plan
        /// at the optimum (waste declared where there is slack), none one
        /// below it.
        #[test]
        fn every_lane_agrees_with_brute_force(
            spec in proptest::collection::vec((0u64..10, 1u64..7, 1u64..9), 1..8)
        ) {
            let spans: Vec<(u64, u64, u64)> =
                spec.iter().map(|&(s, len, size)| (s, s + len, size)).collect();
            let p = crate::testutil::problem(&spans);
            let opt = crate::testutil::brute_force(&p);
            let g = group(&p);
            every_lane_decides(&p, &g, opt)?;
            // Through the group's decision, the lanes in turns.
            let mut counters = Counters::default();
            let d = g.decide_by_fill(opt, &Stop::never(), u64::MAX, &mut counters);
            prop_assert!(matches!(d, Probe::Fits(_)));
            let d = g.decide_by_fill(opt - 1, &Stop::never(), u64::MAX, &mut counters);
            prop_assert_eq!(d, Probe::Infeasible);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Fixed buffers at offset 0 make a floor the fill starts from:
        /// every lane decides what brute force decides above it (a plan at
        /// the optimum, none one below), and the search reports the same.
        #[test]
        fn every_lane_fills_above_a_floor(
            spec in proptest::collection::vec((0u64..10, 1u64..7, 1u64..9), 1..7),
            floor in proptest::collection::vec((0u64..3, 1u64..5, 1u64..7), 1..4),
        ) {
            let mut buffers: Vec<Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, len, size))| Buffer::new(format!("b{i}"), s, s + len, size))
                .collect();
            // Floor pieces one after the other in time, apart or touching.
            let mut t = 0;
            for (k, &(gap, len, size)) in floor.iter().enumerate() {
                t += gap;
                let mut b = Buffer::new(format!("f{k}"), t, t + len, size);
                b.fixed_offset = Some(0);
                buffers.push(b);
                t += len;
            }
            let p = Problem::new(buffers, None).unwrap();
            let opt = crate::testutil::brute_force_over_floor(&p);
            let g = group(&p);
            prop_assert!(g.floor.is_some());
            prop_assert!(applies(&g, opt, 1.0));
            every_lane_decides(&p, &g, opt)?;
            use crate::solver::Solver;
            let search = crate::solvers::search::Search::default();
            let at = |c: u64| search.solve(&p.clone().with_capacity(Some(c)), &crate::solver::SolveOptions::default());
            let s = at(opt).unwrap();
            prop_assert_eq!(validate(&p.clone().with_capacity(Some(opt)), &s.plan), Ok(()));
            // Below the optimum: no plan, and a proof where the fill runs.
            let below = at(opt - 1);
            let proven = matches!(
                below,
                Err(crate::solver::SolveError::NotFound {
                    reason: crate::solver::NotFoundReason::ProvenInfeasible,
                    ..
                })
            );
            prop_assert!(below.is_err());
            prop_assert!(proven || !applies(&g, opt - 1, super::super::FILL_SLACK), "{below:?}");
        }
    }

    /// Guillotine packings at their max load, zero slack everywhere: the
    /// fill applies, finds a plan of exactly the max load, and the same
    /// plan twice.
    #[test]
    fn perfect_packings_are_filled_at_their_max_load() {
        for seed in 1..=12 {
            let p = generate(Kind::Perfect, 80, seed).problem;
            let load = p.max_load();
            let g = group(&p);
            assert!(applies(&g, load, 0.0), "seed {seed}");
            let mut counters = Counters::default();
            let first = g.decide_by_fill(load, &Stop::never(), 1 << 22, &mut counters);
            let Probe::Fits(plan) = first.clone() else {
                panic!("seed {seed}: {first:?} after {counters:?}");
            };
            assert_eq!(
                validate(&p.clone().with_capacity(Some(load)), &plan),
                Ok(())
            );
            assert_eq!(plan.makespan(&p), load);
            let again = g.decide_by_fill(load, &Stop::never(), 1 << 22, &mut Counters::default());
            assert_eq!(again, first, "seed {seed}");
        }
    }

    /// Lanes racing in threads: the same plan and the same steps charged
    /// every time, whatever the threads' timing (an instance that only
    /// one lane decides, after the first slice).
    #[test]
    fn the_race_decides_the_same_whatever_the_timing() {
        let p = generate(Kind::Perfect, 300, 3).problem;
        let load = p.max_load();
        let groups = Groups::new(&p, true, &Stop::never()).unwrap();
        let g = groups.groups.iter().max_by_key(|g| g.size.len()).unwrap();
        let mut seen = None;
        for _ in 0..3 {
            let mut counters = Counters::default();
            let d = g.decide_by_fill(load, &Stop::never(), 1 << 22, &mut counters);
            assert!(matches!(d, Probe::Fits(_)), "{d:?} after {counters:?}");
            // The first slice, lane after lane, in steps.
            let first = 4 * (4 * g.size.len() as u64).max(4096) / 16;
            assert!(counters.steps > first, "{counters:?}");
            match &seen {
                None => seen = Some((d, counters.steps)),
                Some(s) => assert_eq!(s, &(d, counters.steps)),
            }
        }
    }

    /// The fill runs only where it is complete and the slack is small.
    #[test]
    fn applies_only_to_plain_groups_with_little_slack() {
        let p = generate(Kind::Perfect, 40, 3).problem;
        let load = p.max_load();
        let g = group(&p);
        assert!(applies(&g, load, 0.01));
        assert!(!applies(&g, load * 11 / 10, 0.01));
        assert!(!applies(&g, load - 1, 0.01), "a section above the capacity");
        let aligned: Vec<Buffer> = p.buffers().iter().map(|b| b.clone().aligned(8)).collect();
        let aligned = Problem::new(aligned, None).unwrap();
        assert!(!applies(&group(&aligned), load, 0.01));
        // Fixed buffers at offset 0 are a floor; one above it is not.
        let fixed = |offset: u64| {
            let mut buffers = p.buffers().to_vec();
            buffers[0].fixed_offset = Some(offset);
            Problem::new(buffers, None).unwrap()
        };
        let floored = group(&fixed(0));
        assert_eq!(
            floored.floor.as_ref().map(|f| f.iter().max()),
            Some(Some(&p.buffers()[0].size))
        );
        assert!(applies(&floored, load, 0.01));
        assert!(!applies(&group(&fixed(1)), load, 0.01));
        assert!(group(&fixed(1)).floor.is_none());
    }

    /// A step budget leaves the answer unknown, and the search resumes
    /// where it stopped: the same answer in slices as in one go.
    #[test]
    fn a_search_cut_by_steps_resumes() {
        let p = generate(Kind::Perfect, 120, 5).problem;
        let load = p.max_load();
        let g = group(&p);
        let (whole, offsets) = run(&g, load, false, false);
        assert!(matches!(whole, End::Found));
        let mut fill = Fill::new(&g, load, false, false);
        let mut limit = 1;
        let end = loop {
            let race = Race(AtomicU64::new(u64::MAX));
            match fill.search(&Stop::never(), limit, &race, 0) {
                End::OutOfBudget => limit += 7,
                other => break other,
            }
        };
        assert!(matches!(end, End::Found));
        assert_eq!(fill.offset, offsets);
        // A step limit, converted to work, is shared by the four lanes,
        // each stopping at the first step past its share: charged that
        // much, up to a step of work over.
        for limit in [0, 4, 40] {
            let mut counters = Counters::default();
            assert_eq!(
                g.decide_by_fill(load, &Stop::never(), limit, &mut counters),
                Probe::Unknown
            );
            assert!(
                (limit..=limit + 8).contains(&counters.steps),
                "{limit}: {counters:?}"
            );
        }
    }
}
