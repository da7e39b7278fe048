//! Plans (an offset per buffer), their independent validation and statistics.

mod io;
mod validate;

pub(crate) use io::{offset_cell, read_by_id};
pub use io::{read_plan, read_plan_from, write_plan};
pub use validate::{validate, PlanError};

use crate::buffer::BufferIdx;
use crate::problem::Problem;
use rayon::prelude::*;

/// An offset for every buffer of a problem, indexed by [`BufferIdx`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    offsets: Vec<u64>,
}

impl Plan {
    /// A plan from offsets in buffer order.
    pub fn from_offsets(offsets: Vec<u64>) -> Self {
        Plan { offsets }
    }

    /// The offsets in buffer order.
    #[inline]
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The offsets in buffer order, by value.
    pub fn into_offsets(self) -> Vec<u64> {
        self.offsets
    }

    /// The offset of buffer `b`.
    #[inline]
    pub fn offset(&self, b: BufferIdx) -> u64 {
        self.offsets[b.index()]
    }

    /// The makespan M = max(offset + size), 0 for no buffers. Saturates on
    /// overflow (which [`validate`] reports as an error).
    pub fn makespan(&self, problem: &Problem) -> u64 {
        // In parallel: a pass over millions of buffers takes tens of
        // milliseconds, which a stop may not wait.
        problem
            .buffers()
            .par_iter()
            .zip(&self.offsets)
            .with_min_len(1 << 16)
            .map(|(b, &o)| o.saturating_add(b.size))
            .max()
            .unwrap_or(0)
    }
}

/// A plan and its makespan when the pass that made it already measured it
/// (the stacked plan's, or a greedy variant's compared with the others):
/// after a stop at millions of buffers, each pass over the buffers costs
/// tens of milliseconds, and a stop may wait a tenth of a second in all.
///
/// Invariant: `makespan`, when `Some`, is `plan.makespan(problem)` for the
/// problem the plan was made for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    /// The plan.
    pub plan: Plan,
    /// Its makespan, when known; `None`: measure the plan.
    pub makespan: Option<u64>,
}

impl Measured {
    /// `plan` with its known `makespan`.
    pub fn new(plan: Plan, makespan: u64) -> Self {
        Measured {
            plan,
            makespan: Some(makespan),
        }
    }

    /// The plan's makespan: the known one, else measured now.
    pub fn makespan(&self, problem: &Problem) -> u64 {
        self.makespan.unwrap_or_else(|| self.plan.makespan(problem))
    }
}

impl From<Plan> for Measured {
    /// A plan not measured yet.
    fn from(plan: Plan) -> Self {
        Measured {
            plan,
            makespan: None,
        }
    }
}

/// The numbers users look at: how far a plan is from the max load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Number of buffers.
    pub buffers: usize,
    /// Max load L, the lower bound on any makespan.
    pub max_load: u64,
    /// Makespan M of the plan.
    pub makespan: u64,
    /// Fragmentation M − L in bytes (idealloc eq. 2).
    pub fragmentation: u64,
    /// Fragmentation in percent of L (0 when L is 0).
    pub fragmentation_percent: f64,
}

impl Stats {
    /// Statistics of `plan`, computing the max load.
    pub fn new(problem: &Problem, plan: &Plan) -> Self {
        Self::with_max_load(problem, plan, problem.max_load())
    }

    /// Statistics of `plan` when the max load is already known.
    pub fn with_max_load(problem: &Problem, plan: &Plan, max_load: u64) -> Self {
        let makespan = plan.makespan(problem);
        let fragmentation = makespan.saturating_sub(max_load);
        let fragmentation_percent = if max_load == 0 {
            0.0
        } else {
            fragmentation as f64 * 100.0 / max_load as f64
        };
        Stats {
            buffers: problem.len(),
            max_load,
            makespan,
            fragmentation,
            fragmentation_percent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;

    #[test]
    fn stats_of_a_plan() {
        let p = Problem::new(
            vec![
                Buffer::new("a", 0, 2, 4),
                Buffer::new("b", 1, 3, 4),
                Buffer::new("c", 2, 4, 2),
            ],
            None,
        )
        .unwrap();
        let plan = Plan::from_offsets(vec![0, 4, 8]);
        let s = Stats::new(&p, &plan);
        assert_eq!(
            (s.buffers, s.max_load, s.makespan, s.fragmentation),
            (3, 8, 10, 2)
        );
        assert_eq!(s.fragmentation_percent, 25.0);
        let empty = Problem::default();
        let s = Stats::new(&empty, &Plan::default());
        assert_eq!(
            (s.makespan, s.fragmentation, s.fragmentation_percent),
            (0, 0, 0.0)
        );
    }
}
