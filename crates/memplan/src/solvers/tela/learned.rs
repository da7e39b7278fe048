//! Learned backtracking (TelaMalloc §6): at a major backtrack, the
//! candidate targets (every level of the path, where §6.2 takes a few),
//! their features (§6.4 and a few of ours), a forest of gradient-boosted
//! regression trees trained offline
//! (`scripts/train_backtracking.py`) that scores each target, and the
//! choice of §6.5: the best score weighted by depth, if above a threshold,
//! is the learned target (jumped to, or flagged as a backtrack point). The
//! trees are data (`backtracking_model.json`, compiled in), evaluated here
//! with no dependency.

use std::sync::OnceLock;

/// Number of features of a candidate target.
pub(super) const FEATURES: usize = 18;

/// The names of the features, in order (the model file lists them too, and
/// must agree).
pub(super) const FEATURE_NAMES: [&str; FEATURES] = [
    "size",
    "lifetime",
    "contention",
    "offset",
    "level",
    "distance",
    "log_distance",
    "in_conflicts",
    "jumps_here",
    "subtree_backtracks",
    "same_phase",
    "backtracks",
    "is_default",
    "in_conflict_set",
    "rank_from_deepest",
    "depth",
    "holes_margin",
    "holes_depth",
];

/// The trained forest: the score of a target is `base` plus the value of
/// the leaf it reaches in every tree.
#[derive(Debug)]
pub(super) struct Forest {
    base: f64,
    trees: Vec<Tree>,
}

/// One regression tree in arrays: node `i` is a leaf when `left[i] < 0`;
/// else a feature at most `threshold[i]` goes to `left[i]`, above it to
/// `right[i]`.
#[derive(Debug)]
struct Tree {
    feature: Vec<usize>,
    threshold: Vec<f64>,
    left: Vec<i64>,
    right: Vec<i64>,
    value: Vec<f64>,
}

impl Forest {
    /// Parses the model file; `None` if it is malformed (or its features are
    /// not ours), and the search then backtracks by default.
    pub(super) fn parse(text: &str) -> Option<Forest> {
        let json: serde_json::Value = serde_json::from_str(text).ok()?;
        let names = json.get("features")?.as_array()?;
        if names.len() != FEATURES
            || names
                .iter()
                .zip(FEATURE_NAMES)
                .any(|(a, b)| a.as_str() != Some(b))
        {
            return None;
        }
        let base = json.get("base")?.as_f64()?;
        let numbers = |tree: &serde_json::Value, key: &str| -> Option<Vec<f64>> {
            tree.get(key)?
                .as_array()?
                .iter()
                .map(serde_json::Value::as_f64)
                .collect()
        };
        let integers = |tree: &serde_json::Value, key: &str| -> Option<Vec<i64>> {
            tree.get(key)?
                .as_array()?
                .iter()
                .map(serde_json::Value::as_i64)
                .collect()
        };
        let mut trees = Vec::new();
        for tree in json.get("trees")?.as_array()? {
            let feature = integers(tree, "feature")?;
            let t = Tree {
                feature: feature.iter().map(|&f| f.max(0) as usize).collect(),
                threshold: numbers(tree, "threshold")?,
                left: integers(tree, "left")?,
                right: integers(tree, "right")?,
                value: numbers(tree, "value")?,
            };
            let n = t.value.len();
            let valid = n > 0
                && [
                    t.feature.len(),
                    t.threshold.len(),
                    t.left.len(),
                    t.right.len(),
                ]
                .iter()
                .all(|&k| k == n)
                && (0..n).all(|i| {
                    t.left[i] < 0
                        || (t.feature[i] < FEATURES
                            && (i as i64) < t.left[i]
                            && t.left[i] < n as i64
                            && (i as i64) < t.right[i]
                            && t.right[i] < n as i64)
                });
            if !valid {
                return None;
            }
            trees.push(t);
        }
        Some(Forest { base, trees })
    }

    /// The predicted score of a target with features `x`.
    pub(super) fn score(&self, x: &[f64; FEATURES]) -> f64 {
        let mut sum = self.base;
        for t in &self.trees {
            let mut i = 0usize;
            // Children come after their parent (checked by `parse`): this
            // ends.
            while t.left[i] >= 0 {
                i = if x[t.feature[i]] <= t.threshold[i] {
                    t.left[i] as usize
                } else {
                    t.right[i] as usize
                };
            }
            sum += t.value[i];
        }
        sum
    }
}

/// The shipped forest, parsed once; `None` if the file is malformed.
pub(super) fn shipped() -> Option<&'static Forest> {
    static FOREST: OnceLock<Option<Forest>> = OnceLock::new();
    FOREST
        .get_or_init(|| Forest::parse(include_str!("backtracking_model.json")))
        .as_ref()
}

/// A major backtrack as seen by the learned backtracking, kept when
/// recording (for the labels of the oracle).
#[derive(Clone, Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) struct Event {
    /// The level of the exhausted point.
    pub(super) depth: u32,
    /// The placements on the path: (local buffer, offset), by level.
    pub(super) prefix: Vec<(u32, u64)>,
    /// The candidate targets (levels below `depth`), increasing.
    pub(super) targets: Vec<u32>,
    /// The features of each target.
    pub(super) features: Vec<[f64; FEATURES]>,
    /// The default target (§5.4).
    pub(super) default: u32,
    /// The path's [`holes_level`].
    pub(super) holes: u32,
    /// The target taken.
    pub(super) taken: u32,
}

/// The candidate targets of a major backtrack from `depth`, into `out`
/// (increasing): every level of the path below it. Ours, not §6.2's (the
/// conflict set's levels and the top of each range of levels 0-4, 5-8,
/// 9-16, ... that has none): the deepest level from which the path can be
/// completed is often far below the top of its range, and a jump above it
/// throws away the placements between them (docs/solvers.md, "Learned
/// backtracking").
pub(super) fn targets(depth: usize, out: &mut Vec<u32>) {
    out.clear();
    out.extend(0..depth as u32);
}

/// At most this many recorded major backtracks per decision.
pub(super) const MAX_EVENTS: usize = 20_000;

/// The holes' level of a path (ours; the features `holes_margin` and
/// `holes_depth`): the placements `path` (local buffer, offset) in order;
/// the largest `t` such that after each of the first `t` placements every
/// time section's holes (the space under the highest placed end there that
/// no placed buffer covers) are at most its slack (the capacity less its
/// load). A path whose holes stay unfilled cannot be completed past that
/// level; a later placement can fill a hole, so it is a hint, not a bound.
/// `sky` and `placed` are scratch (one entry per section).
pub(super) fn holes_level(
    m: &super::model::Model,
    capacity: u64,
    path: impl Iterator<Item = (u32, u64)>,
    sky: &mut Vec<u64>,
    placed: &mut Vec<u64>,
) -> usize {
    let sections = m.section_load.len();
    sky.clear();
    sky.resize(sections, 0);
    placed.clear();
    placed.resize(sections, 0);
    let over = |s: usize, sky: &[u64], placed: &[u64]| {
        // Placed buffers do not overlap: `placed[s] <= sky[s]`.
        let hole = sky[s].saturating_sub(placed[s]);
        hole > capacity.saturating_sub(m.section_load[s])
    };
    let mut count = 0;
    for (t, (b, o)) in path.enumerate() {
        let (lo, hi) = m.span[b as usize];
        let end = o + m.size[b as usize];
        for s in lo as usize..hi as usize {
            sky[s] = sky[s].max(end);
            placed[s] += m.size[b as usize];
            if over(s, sky, placed) {
                return t;
            }
        }
        count = t + 1;
    }
    count
}
