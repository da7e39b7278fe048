//! The choice of a major backtrack's learned target (TelaMalloc §6.4,
//! §6.5): the features of the candidate targets of the current path,
//! scored by the forest of `learned.rs`; the target is jumped to or
//! flagged as a backtrack point ([`super::TelaOptions::learned_jump`]).

use super::learned::{holes_level, targets, Event, FEATURES, MAX_EVENTS};
use super::state::State;

impl State<'_> {
    /// The features (see [`super::learned::FEATURE_NAMES`]) of target
    /// level `t` of a major backtrack from `depth`, whose default target is
    /// `default`; `rank` counts the targets deeper than `t`, of `count`;
    /// `in_set` tells whether `t` is in the conflict set; `holes` is the
    /// path's [`holes_level`](super::learned::holes_level).
    fn features(
        &self,
        depth: usize,
        t: usize,
        default: usize,
        (rank, count): (usize, usize),
        in_set: bool,
        holes: usize,
    ) -> [f64; FEATURES] {
        let m = self.m;
        let b = self.trail[t] as usize;
        let capacity = self.capacity.max(1) as f64;
        let n = m.len().max(1) as f64;
        let distance = (depth - t) as f64;
        let failed_phase = self.points[depth]
            .candidates
            .first()
            .map(|&c| m.phase[c as usize]);
        let point = &self.points[t];
        [
            m.size[b] as f64 / capacity,
            m.lifetime[b] as f64 / m.horizon.max(1) as f64,
            m.contention[b] as f64 / capacity,
            self.offset[b] as f64 / capacity,
            t as f64 / n,
            distance / depth.max(1) as f64,
            distance.ln_1p(),
            f64::from(self.in_conflicts[b]).ln_1p(),
            f64::from(point.jumps).ln_1p(),
            (self.backtracks.saturating_sub(point.opened) as f64).ln_1p(),
            f64::from(u8::from(failed_phase == Some(m.phase[b]))),
            (self.backtracks as f64).ln_1p(),
            f64::from(u8::from(t == default)),
            f64::from(u8::from(in_set)),
            rank as f64 / count.max(1) as f64,
            depth as f64 / n,
            (holes as f64 - t as f64) / depth.max(1) as f64,
            (depth - holes) as f64 / depth.max(1) as f64,
        ]
    }

    /// The target of a major backtrack from `depth` whose default (§5.4) is
    /// `default`, and the level to flag as a backtrack point, if any. With
    /// learned backtracking, the learned target is the candidate target of
    /// best score weighted by depth, if at least the threshold: the target
    /// with [`TelaOptions::learned_jump`](super::TelaOptions::learned_jump),
    /// else the flag when above `default`. When recording, the backtrack is
    /// kept as an [`Event`].
    pub(super) fn learned_target(
        &mut self,
        depth: usize,
        default: usize,
    ) -> (usize, Option<usize>) {
        let forest = if self.options.learned_backtracking {
            self.forest
        } else {
            None
        };
        if forest.is_none() && self.events.is_none() {
            return (default, None);
        }
        let mut list = std::mem::take(&mut self.targets);
        targets(depth, &mut list);
        let (mut sky, mut covered) = (
            std::mem::take(&mut self.sky),
            std::mem::take(&mut self.covered),
        );
        let path = self.trail[..depth]
            .iter()
            .map(|&b| (b, self.offset[b as usize]));
        let holes = holes_level(self.m, self.capacity, path, &mut sky, &mut covered);
        (self.sky, self.covered) = (sky, covered);
        let conflicts = &self.points[depth].conflicts;
        let mut features = std::mem::take(&mut self.target_features);
        features.clear();
        features.extend(list.iter().enumerate().map(|(i, &t)| {
            // The conflict set is sorted.
            let in_set = conflicts.binary_search(&t).is_ok();
            self.features(
                depth,
                t as usize,
                default,
                (list.len() - 1 - i, list.len()),
                in_set,
                holes,
            )
        }));
        let mut taken = default;
        let mut flag = None;
        if let Some(forest) = forest {
            let weight = f64::from(self.options.learned_depth_weight.min(100)) / 100.0;
            let threshold = f64::from(self.options.learned_threshold) / 10.0;
            let mut best: Option<(f64, usize)> = None;
            for (x, &t) in features.iter().zip(&list) {
                let distance = (depth - t as usize) as f64 / depth.max(1) as f64;
                let score = forest.score(x) * (1.0 - weight * distance);
                // Ties go to the deeper target.
                if best.is_none_or(|(s, _)| score >= s) {
                    best = Some((score, t as usize));
                }
            }
            if let Some((_, t)) = best.filter(|&(score, _)| score >= threshold) {
                if self.options.learned_jump {
                    taken = t;
                } else if t < default {
                    flag = Some(t);
                }
            }
        }
        if self.events.as_ref().is_some_and(|e| e.len() < MAX_EVENTS) {
            #[cfg_attr(not(test), allow(unused_mut))]
            let mut event = Event {
                depth: depth as u32,
                prefix: self.trail[..depth]
                    .iter()
                    .map(|&b| (b, self.offset[b as usize]))
                    .collect(),
                targets: list.clone(),
                features: features.clone(),
                default: default as u32,
                holes: holes as u32,
                taken: taken as u32,
            };
            #[cfg(test)]
            if let Some(steer) = &mut self.steer {
                if let Some(t) = steer(&event).filter(|&t| (t as usize) < depth) {
                    taken = t as usize;
                    event.taken = t;
                    flag = None;
                }
            }
            #[cfg(test)]
            if self.steer_only {
                self.targets = list;
                self.target_features = features;
                return (taken, flag);
            }
            if let Some(events) = &mut self.events {
                events.push(event);
            }
        }
        self.targets = list;
        self.target_features = features;
        (taken, flag)
    }
}
