//! What a search counted: nodes, steps, backtracks, restarts.

/// What a search did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Nodes: partial solutions that passed the checks (eq. 3), and the
    /// roots of independent parts, counted as MiniMalloc's reference counts
    /// its recursive calls.
    pub nodes: u64,
    /// Steps: nodes and the children that failed eq. 3 at once, each
    /// costing about the same (O(buffers)): the unit of work budgets.
    pub steps: u64,
    /// Nodes whose every extension failed.
    pub backtracks: u64,
    /// Searches abandoned at their node limit (round robin).
    pub restarts: u64,
    /// Whether the clock (or a cancel flag) cut a search short.
    pub timed_out: bool,
    /// Whether a search ended without deciding: it exhausted its tree with
    /// fixed buffers present, where placing above them is sound but not
    /// complete. More work would answer the same.
    pub incomplete: bool,
}

impl Counters {
    /// Adds another search's counters.
    pub(super) fn add(&mut self, other: &Counters) {
        self.nodes += other.nodes;
        self.steps += other.steps;
        self.backtracks += other.backtracks;
        self.restarts += other.restarts;
        self.timed_out |= other.timed_out;
        self.incomplete |= other.incomplete;
    }
}
