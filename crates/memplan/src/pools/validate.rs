//! The per-pool validator: every buffer in an existing pool, pinned buffers
//! in theirs, and each pool's plan checked by the independent single-memory
//! [validator](crate::validate) on the pool's sub-problem (alignment with
//! the pool's, fixed offsets, the pool's capacity, no overlap).

use crate::plan::PlanError;
use crate::problem::ProblemError;
use crate::quote::quoted;

use super::{PoolPlan, PoolProblem};

/// Why a pooled plan is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolPlanError {
    #[error("plan has {got} entries for {expected} buffers")]
    WrongLength { expected: usize, got: usize },
    #[error("buffer `{}` is in pool {pool}, but there are {pools} pools", quoted(.id))]
    UnknownPool { id: String, pool: u32, pools: usize },
    #[error("buffer `{}` is pinned to pool `{}` but placed in `{}`", quoted(.id), quoted(.pinned), quoted(.placed))]
    PinnedElsewhere {
        id: String,
        pinned: String,
        placed: String,
    },
    #[error("pool `{}`: {error}", quoted(.pool))]
    InPool { pool: String, error: PlanError },
    #[error("pool `{}`: {error}", quoted(.pool))]
    SubProblem { pool: String, error: ProblemError },
}

/// Checks that `plan` is a valid placement of `problem`: one pool and one
/// offset per buffer, pinned buffers in their pools, and each pool's plan
/// valid for its sub-problem (see the module documentation).
pub fn validate_pools(problem: &PoolProblem, plan: &PoolPlan) -> Result<(), PoolPlanError> {
    let n = problem.len();
    if plan.pools().len() != n || plan.offsets().len() != n {
        return Err(PoolPlanError::WrongLength {
            expected: n,
            got: plan.pools().len().min(plan.offsets().len()),
        });
    }
    for b in problem.indices() {
        let p = plan.pool(b);
        let id = || problem.buffer(b).id.clone();
        if p.index() >= problem.pools().len() {
            return Err(PoolPlanError::UnknownPool {
                id: id(),
                pool: p.0,
                pools: problem.pools().len(),
            });
        }
        if let Some(pin) = problem.pin(b).filter(|&pin| pin != p) {
            return Err(PoolPlanError::PinnedElsewhere {
                id: id(),
                pinned: problem.pool(pin).name.clone(),
                placed: problem.pool(p).name.clone(),
            });
        }
    }
    for p in problem.pool_indices() {
        let pool = || problem.pool(p).name.clone();
        let (members, pool_plan) = plan.pool_plan(p);
        let sub = problem
            .sub_problem(p, &members)
            .map_err(|error| PoolPlanError::SubProblem {
                pool: pool(),
                error,
            })?;
        crate::plan::validate(&sub, &pool_plan).map_err(|error| PoolPlanError::InPool {
            pool: pool(),
            error,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pools::{Pool, PoolIdx};
    use crate::problem::Buffer;

    #[test]
    fn checks_pins_and_each_pool() {
        let p = PoolProblem::new(
            vec![
                Buffer::new("a", 0, 4, 8),
                Buffer::new("b", 2, 6, 8),
                Buffer::new("c", 0, 6, 4),
            ],
            vec![None, None, Some(PoolIdx(1))],
            vec![Pool::new("fast", 8), Pool::new("slow", 16).aligned(4)],
        )
        .unwrap();
        let plan = |pools: [u32; 3], offsets: [u64; 3]| {
            PoolPlan::new(pools.map(PoolIdx).to_vec(), offsets.to_vec())
        };
        let check = |pools, offsets| {
            validate_pools(&p, &plan(pools, offsets))
                .err()
                .map(|e| e.to_string())
        };
        // `a` and `b` overlap in time but sit in different pools.
        assert_eq!(check([0, 1, 1], [0, 0, 8]), None);
        assert_eq!(
            check([0, 0, 1], [0, 0, 8]).unwrap(),
            "pool `fast`: buffers `a` and `b` are alive at the same time and share addresses"
        );
        assert_eq!(
            check([0, 1, 1], [0, 0, 4]).unwrap(),
            "pool `slow`: buffers `b` and `c` are alive at the same time and share addresses"
        );
        assert_eq!(
            check([0, 1, 1], [0, 2, 8]).unwrap(),
            "pool `slow`: buffer `b`: offset 2 is not a multiple of alignment 4"
        );
        assert_eq!(check([0, 1, 1], [0, 0, 12]), None);
        assert_eq!(
            check([0, 1, 1], [0, 0, 16]).unwrap(),
            "pool `slow`: buffer `c` ends at 20, past the capacity 16"
        );
        assert_eq!(
            check([0, 1, 0], [0, 0, 8]).unwrap(),
            "buffer `c` is pinned to pool `slow` but placed in `fast`"
        );
        assert_eq!(
            check([0, 1, 2], [0, 0, 8]).unwrap(),
            "buffer `c` is in pool 2, but there are 2 pools"
        );
        assert_eq!(check([1, 0, 1], [0, 0, 8]), None);
        assert_eq!(
            check([0, 1, 1], [4, 0, 8]).unwrap(),
            "pool `fast`: buffer `a` ends at 12, past the capacity 8"
        );
        assert_eq!(
            validate_pools(&p, &PoolPlan::new(vec![PoolIdx(0)], vec![0])).unwrap_err(),
            PoolPlanError::WrongLength {
                expected: 3,
                got: 1
            }
        );
    }
}
