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
//!   no candidates;
//! - a point's conflicts start with the placements alive where its hole
//!   (or its failed run) and the higher sections around it lie
//!   ([`Read`]): with another skyline there, its moves would differ. With
//!   the complete explanations of the cross-section failures, backjumps
//!   are sound, and a state whose point runs out of candidates has no
//!   plan: it is remembered ([`Holes::failed`]) and fails at once when met
//!   again, in any run.
//!
//! This is the reasoning of the search's exact fill (`search/fill`) inside
//! tela's search (its restarts and backjumps stay; subtrees are never
//! abandoned). The state side is in `candidates.rs`; the runs on the group
//! mirrored in time, sharing the failed states, in `drive.rs`.

use super::model::Model;
use crate::geometry::skyline::Run;
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
    /// Scratch of the choice: the skyline's flat runs with their windows,
    /// and a stack of runs.
    pub(super) runs: Vec<Run>,
    pub(super) stack: Vec<u32>,
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
        let applies = m.evenly_loaded() && m.section_load.first() == Some(&capacity);
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
    pub(super) fn covered(
        &mut self,
        m: &Model,
        unplaced: impl Fn(usize) -> bool,
        capacity: u64,
        run: &Run,
    ) -> bool {
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
                if unplaced(i) && hi <= nh && m.size[i] <= room {
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

/// The moves of `hole` at `capacity` (see the module documentation), one
/// per class of identical buffers, in the order of `Model::starts`: all
/// into `out` if given, else counted until past `cap`.
pub(super) fn moves(
    m: &Model,
    unplaced: impl Fn(usize) -> bool,
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
        if !unplaced(i) || span.1 > hole.q || size > room {
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

#[cfg(test)]
mod tests {
    //! The skyline holes against the exact search, every plan checked by
    //! the independent validator.

    use super::super::model::Models;
    use super::super::{Tela, TelaOptions};
    use super::*;
    use crate::plan::validate;
    use crate::problem::Problem;
    use crate::solver::{Solution, SolveError, SolveOptions, Solver, Stop};
    use crate::testutil::problem;
    use proptest::prelude::*;

    /// `spans` (start, end, size) padded to a problem whose every unit of
    /// time holds the same load: a filler over each maximal stretch of units
    /// short of the highest load by the same amount fills it up. Where the
    /// hole rule applies, at that load; a perfect packing may not exist.
    fn padded(spans: &[(u64, u64, u64)]) -> Problem {
        let end = spans.iter().map(|s| s.1).max().unwrap_or(0);
        let load = |t: u64| -> u64 {
            spans
                .iter()
                .filter(|s| s.0 <= t && t < s.1)
                .map(|s| s.2)
                .sum()
        };
        let peak = (0..end).map(load).max().unwrap_or(0);
        let mut all = spans.to_vec();
        let mut t = 0;
        while t < end {
            let short = peak - load(t);
            let mut e = t + 1;
            while e < end && peak - load(e) == short {
                e += 1;
            }
            if short > 0 {
                all.push((t, e, short));
            }
            t = e;
        }
        problem(&all)
    }

    /// Tela (with the hole rule, its default) at the max load of `p`.
    fn holes_at_load(p: &Problem, options: TelaOptions) -> Result<Solution, SolveError> {
        assert!(options.skyline_holes);
        let at = p.clone().with_capacity(Some(p.max_load()));
        Tela { options }.solve(&at, &SolveOptions::default())
    }

    /// The hole rule applies only at zero slack: every section loaded to the
    /// capacity, no fixed, aligned or empty buffer; the mirrored model is
    /// built only then.
    #[test]
    fn the_hole_rule_applies_only_at_zero_slack() {
        let p = padded(&[(0, 3, 2), (1, 4, 3), (2, 5, 1)]);
        let load = p.max_load();
        let options = TelaOptions::default();
        assert!(options.skyline_holes);
        let models = Models::new(&p, &options, &Stop::never()).unwrap();
        let m = &models.models[0];
        assert!(m.evenly_loaded() && m.mirror.is_some());
        assert!(Holes::new(m, load).is_some());
        assert!(Holes::new(m, load + 1).is_none());
        // Off: no mirror.
        let off = TelaOptions {
            skyline_holes: false,
            ..TelaOptions::default()
        };
        let off = Models::new(&p, &off, &Stop::never()).unwrap();
        assert!(off.models[0].mirror.is_none());
        // Unequal loads, an aligned buffer, a fixed one: not eligible.
        let uneven = problem(&[(0, 3, 2), (1, 4, 3)]);
        let m = Models::new(&uneven, &options, &Stop::never()).unwrap();
        assert!(!m.models[0].evenly_loaded() && m.models[0].mirror.is_none());
        let mut buffers = p.buffers().to_vec();
        buffers[0] = buffers[0].clone().aligned(2);
        let aligned = Problem::new(buffers, None).unwrap();
        let m = Models::new(&aligned, &options, &Stop::never()).unwrap();
        assert!(!m.models[0].evenly_loaded());
        let mut buffers = p.buffers().to_vec();
        buffers[1].fixed_offset = Some(0);
        let fixed = Problem::new(buffers, None).unwrap();
        let m = Models::new(&fixed, &options, &Stop::never()).unwrap();
        assert!(!m.models[0].evenly_loaded());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// At zero slack the hole rule's search is complete: on padded random
        /// problems, tela finds a plan (checked by the validator) exactly
        /// when the exact search proves one at the max load, under
        /// combinations of the switches that keep its explanations sound
        /// (backjumps, restarts, noise, learned flags, displaced buffers).
        #[test]
        fn the_hole_rule_finds_every_perfect_packing(
            spec in proptest::collection::vec((0u64..10, 1u64..6, 1u64..6), 2..10),
            bits in 0u32..32,
        ) {
            let spans: Vec<_> = spec.iter().map(|&(s, len, size)| (s, s + len, size)).collect();
            let p = padded(&spans);
            let at = p.clone().with_capacity(Some(p.max_load()));
            let exact = crate::solvers::search::Search::default()
                .solve(&at, &SolveOptions::default());
            let bit = |k: u32| bits & (1 << k) != 0;
            let options = TelaOptions {
                backjump: bit(0),
                restart_steps: if bit(1) { 3 } else { 1000 },
                restart_noise: if bit(2) { 50 } else { 0 },
                learned_backtracking: bit(3),
                displaced_first: bit(4),
                step_limit: 100_000,
                ..TelaOptions::default()
            };
            let found = holes_at_load(&p, options);
            if let Ok(s) = &found {
                prop_assert_eq!(validate(&at, &s.plan), Ok(()));
            }
            match &exact {
                Ok(_) => prop_assert!(found.is_ok(), "{:?}: {:?}", spans, found),
                Err(e) => prop_assert!(found.is_err(), "{:?}: search {:?}", spans, e),
            }
        }
    }

    /// Generated perfect packings at their max load (zero slack everywhere):
    /// the hole rule finds a plan, checked by the validator, on every seed,
    /// and the same plan twice.
    #[test]
    fn the_hole_rule_fills_perfect_packings() {
        for seed in 1..=12 {
            let p = crate::generate::generate(crate::generate::Kind::Perfect, 150, seed).problem;
            let at = p.clone().with_capacity(Some(p.max_load()));
            let options = TelaOptions {
                step_limit: 200_000,
                ..TelaOptions::default()
            };
            let s =
                holes_at_load(&p, options.clone()).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
            assert_eq!(validate(&at, &s.plan), Ok(()), "seed {seed}");
            assert_eq!(s.makespan, p.max_load());
            let again = holes_at_load(&p, options).unwrap();
            assert_eq!(again.plan, s.plan, "seed {seed}");
        }
    }
}
