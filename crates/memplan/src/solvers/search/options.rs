//! The search's options: one documented switch per technique.

use super::preorder::Preorder;
use crate::plan::Plan;

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
    /// Static preorders, each searched on its own; the first (in this
    /// order) to decide gives the answer, as arranged by `schedule`.
    pub preorders: Vec<Preorder>,
    /// How the preorders share the work.
    pub schedule: Schedule,
    /// Solve independent time ranges separately (§7), at the root and
    /// whenever the unplaced buffers split during the search.
    pub decompose: bool,
    /// When the unplaced buffers split during the search, order each
    /// part's buffers by the preorder's keys recomputed from the part's
    /// *remaining* (unplaced) load (the section total T), as MiniMalloc's
    /// reference does, rather than by the ranks computed once from the
    /// whole problem. Each part then starts its own canonical sequence
    /// (index monotonicity restarts with the new ranks).
    pub rerank_parts: bool,
    /// Hatless pruning (from MiniMalloc's reference implementation): when a
    /// buffer fails at a node without having raised any unplaced buffer's
    /// floor, the node fails.
    pub hatless: bool,
    /// Exact fill (the module `solvers/search/fill/`): at a capacity with little slack
    /// (at most [`FILL_SLACK`](super::FILL_SLACK) of the capacity over the
    /// group's sections), a group without gaps or alignments, and without
    /// fixed buffers other than at offset 0 (a floor), is first searched by filling the lowest hole of the
    /// skyline, with half of the group's step limit (or of its time).
    pub exact_fill: bool,
    /// The plan to start from (a warm start, like boxing's §5.5
    /// bootstrap): the upper bound the minimisation improves on, and the
    /// plan returned when the search cannot better it. `None`: the
    /// portfolio's greedy plan ([`SolveOptions::prepared`](crate::solver::SolveOptions::prepared))
    /// when given, else the best greedy variant. Not a technique: a plan
    /// for these very buffers (its length is checked, its validity is the
    /// caller's promise and is checked by the validator in debug builds).
    pub warm_start: Option<Plan>,
}

/// How the searches of several preorders share the work. Both are
/// deterministic: the answer is that of the first preorder (in the given
/// order) to decide within the same node count, whatever the thread timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// One thread per preorder; the searches meet at fixed step counts
    /// (64, 128, 256... then every [`LOCKSTEP_STEPS`](super::LOCKSTEP_STEPS)) and stop at the
    /// first meeting by which one has decided. No work is repeated.
    Lockstep,
    /// One search at a time (MiniMalloc's reference): each preorder in turn
    /// gets a node limit, starting at twice the number of buffers and
    /// doubled after every round; a search that reaches it is abandoned
    /// and restarted from scratch in the next round.
    RoundRobin,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            canonical: true,
            section_inference: true,
            effective_height: true,
            dominance: true,
            dynamic_order: true,
            preorders: Preorder::DEFAULT.to_vec(),
            schedule: Schedule::Lockstep,
            decompose: true,
            rerank_parts: true,
            hatless: true,
            exact_fill: true,
            warm_start: None,
        }
    }
}
