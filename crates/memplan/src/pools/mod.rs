//! Memory pools (banks): several memories, each with a capacity, in order of
//! preference (the first is the fastest). Every buffer goes into one pool;
//! some are pinned to one. A plan gives each buffer its pool and its offset
//! in that pool; within a pool it is an ordinary plan, checked by the same
//! [validator](crate::validate).
//!
//! This is a layer above the solvers: a strategy decides which buffers each
//! pool holds, and calls the solvers (through [`Solver`](crate::Solver)) on
//! each pool's sub-problem ([`PoolProblem::sub_problem`]) with the pool's
//! capacity.
//!
//! Objective, in order: (a) every buffer placed; (b) the bytes × time placed
//! outside the first pool as small as possible, then outside the first two,
//! and so on ([`Spill`], compared lexicographically).
//!
//! - [`solve`](mod@solve): the strategies ([`Strategy::FastestFirst`], the
//!   baseline; [`Strategy::Guided`]) and their result;
//! - [`bounds`]: proofs that no assignment exists, and lower bounds on the
//!   spill;
//! - [`validate`](mod@validate): the per-pool validator;
//! - [`io`]: the pool file, the `pool` column of problems, plan files with a
//!   `pool` column.

pub mod bounds;
mod fill;
mod guided;
pub mod io;
mod load;
pub mod solve;
pub mod validate;

use std::fmt;

pub use bounds::Infeasible;
pub use io::{
    read_pool_plan, read_pool_problem, read_pool_problem_from, read_pools, write_pool_plan,
};
pub use solve::{solve_pools, PoolSolution, PoolSolveError, PoolUsage, Strategy};
pub use validate::{validate_pools, PoolPlanError};

use crate::buffer::BufferIdx;
use crate::plan::Plan;
use crate::problem::{Buffer, Problem, ProblemError};
use crate::quote::quoted;

/// Dense index of a pool in preference order: 0 is the fastest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PoolIdx(pub u32);

impl PoolIdx {
    /// The index as a `usize`, for slice access.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Index of the `i`-th pool.
    #[inline]
    pub fn new(i: usize) -> Self {
        PoolIdx(i as u32)
    }
}

impl fmt::Debug for PoolIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pool#{}", self.0)
    }
}

/// One memory: a name, a capacity in bytes and an alignment that every
/// offset in it must have (on top of each buffer's own alignment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Name as written in the pool file and in the `pool` columns.
    pub name: String,
    /// Every buffer in the pool ends at or below this address.
    pub capacity: u64,
    /// Offsets in the pool are multiples of this (1 = no constraint).
    pub alignment: u64,
}

impl Pool {
    /// A pool with alignment 1.
    pub fn new(name: impl Into<String>, capacity: u64) -> Self {
        Pool {
            name: name.into(),
            capacity,
            alignment: 1,
        }
    }

    /// This pool with an alignment.
    pub fn aligned(mut self, alignment: u64) -> Self {
        self.alignment = alignment;
        self
    }
}

/// Why a pooled problem is not valid. Buffers and pools are named by index;
/// [`read_pool_problem`] turns these into errors naming the file line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolProblemError {
    #[error("no pools: at least one is needed")]
    NoPools,
    #[error("too many pools: {0}")]
    TooManyPools(usize),
    #[error("empty pool name")]
    EmptyPoolName(PoolIdx),
    #[error("duplicate pool `{}`", quoted(.name))]
    DuplicatePool {
        name: String,
        first: PoolIdx,
        second: PoolIdx,
    },
    #[error("pool capacity must be positive, got 0")]
    ZeroCapacity(PoolIdx),
    #[error("pool alignment must be positive, got 0")]
    ZeroPoolAlignment(PoolIdx),
    /// A buffer invariant (as for a single memory: sizes, lifetimes, ids).
    #[error("{0}")]
    Problem(ProblemError),
    #[error("{got} pool pins for {expected} buffers")]
    PinCount { expected: usize, got: usize },
    #[error("pinned to pool {} of {pools}", .pool.0)]
    UnknownPin {
        buffer: BufferIdx,
        pool: PoolIdx,
        pools: usize,
    },
    #[error("a fixed buffer must be pinned to a pool (there are {pools})")]
    UnpinnedFixed { buffer: BufferIdx, pools: usize },
    #[error("fixed offset {offset} is not a multiple of pool `{}`'s alignment {alignment}", quoted(.pool_name))]
    MisalignedForPool {
        buffer: BufferIdx,
        pool_name: String,
        offset: u64,
        alignment: u64,
    },
    #[error("the alignment of pool `{}` and the buffer's have no common multiple below 2^64", quoted(.pool_name))]
    AlignmentOverflow {
        buffer: BufferIdx,
        pool_name: String,
    },
    #[error("fixed buffers `{}` and `{}` overlap in time and address in pool `{}`",
        quoted(.first_id), quoted(.second_id), quoted(.pool_name))]
    FixedOverlap {
        first: BufferIdx,
        second: BufferIdx,
        first_id: String,
        second_id: String,
        pool_name: String,
    },
    #[error("sizes (with pool `{}`'s alignment padding and fixed offsets) sum past 2^64: addresses could overflow", quoted(.pool_name))]
    SizeSumOverflow {
        buffer: BufferIdx,
        pool_name: String,
    },
}

impl PoolProblemError {
    /// The buffer the error is reported at, if it is about one.
    pub fn buffer(&self) -> Option<BufferIdx> {
        use PoolProblemError::*;
        match self {
            Problem(e) => e.buffer(),
            UnknownPin { buffer, .. }
            | UnpinnedFixed { buffer, .. }
            | MisalignedForPool { buffer, .. }
            | AlignmentOverflow { buffer, .. }
            | SizeSumOverflow { buffer, .. } => Some(*buffer),
            FixedOverlap { second, .. } => Some(*second),
            NoPools
            | TooManyPools(_)
            | EmptyPoolName(_)
            | DuplicatePool { .. }
            | ZeroCapacity(_)
            | ZeroPoolAlignment(_)
            | PinCount { .. } => None,
        }
    }

    /// The pool the error is reported at, if it is about the pool list.
    pub fn pool(&self) -> Option<PoolIdx> {
        use PoolProblemError::*;
        match self {
            EmptyPoolName(p) | ZeroCapacity(p) | ZeroPoolAlignment(p) => Some(*p),
            DuplicatePool { second, .. } => Some(*second),
            _ => None,
        }
    }
}

/// Checks a pool list on its own: at least one pool, names non-empty and
/// unique, capacities and alignments positive.
pub fn check_pools(pools: &[Pool]) -> Result<(), PoolProblemError> {
    if pools.is_empty() {
        return Err(PoolProblemError::NoPools);
    }
    if pools.len() >= u32::MAX as usize {
        return Err(PoolProblemError::TooManyPools(pools.len()));
    }
    let mut seen: rustc_hash::FxHashMap<&str, PoolIdx> = Default::default();
    for (i, pool) in pools.iter().enumerate() {
        let p = PoolIdx::new(i);
        if pool.name.is_empty() {
            return Err(PoolProblemError::EmptyPoolName(p));
        }
        if let Some(&first) = seen.get(pool.name.as_str()) {
            return Err(PoolProblemError::DuplicatePool {
                name: pool.name.clone(),
                first,
                second: p,
            });
        }
        seen.insert(&pool.name, p);
        if pool.capacity == 0 {
            return Err(PoolProblemError::ZeroCapacity(p));
        }
        if pool.alignment == 0 {
            return Err(PoolProblemError::ZeroPoolAlignment(p));
        }
    }
    Ok(())
}

/// A planning problem over several pools: buffers (as for one memory), an
/// optional pin per buffer, and the pools in order of preference.
///
/// A fixed buffer keeps its offset in the pool it is pinned to (with a
/// single pool, pinning is implied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolProblem {
    buffers: Vec<Buffer>,
    pins: Vec<Option<PoolIdx>>,
    pools: Vec<Pool>,
    /// Per pool, each buffer's alignment in it (the least common multiple of
    /// the two), or `None` when the buffer may not go there (pinned
    /// elsewhere).
    alignments: Vec<Vec<Option<u64>>>,
}

impl PoolProblem {
    /// Checks the pools ([`check_pools`]), every buffer invariant of
    /// [`Problem::new`] (fixed offsets aside), one pin per buffer naming an
    /// existing pool, fixed buffers pinned (when there are several pools)
    /// and aligned for their pool, fixed buffers of one pool not
    /// overlapping, and no address computation overflowing in any pool.
    pub fn new(
        buffers: Vec<Buffer>,
        pins: Vec<Option<PoolIdx>>,
        pools: Vec<Pool>,
    ) -> Result<Self, PoolProblemError> {
        check_pools(&pools)?;
        if pins.len() != buffers.len() {
            return Err(PoolProblemError::PinCount {
                expected: buffers.len(),
                got: pins.len(),
            });
        }
        // Buffer invariants without the fixed offsets (fixed buffers of
        // different pools may share addresses): the free problem.
        let free: Vec<Buffer> = buffers
            .iter()
            .map(|b| Buffer {
                fixed_offset: None,
                ..b.clone()
            })
            .collect();
        Problem::new(free, None).map_err(PoolProblemError::Problem)?;
        // Each fixed offset against its own alignment, as Problem::new does.
        for (i, b) in buffers.iter().enumerate() {
            if let Some(offset) = b.fixed_offset {
                let buffer = BufferIdx::new(i);
                if offset % b.alignment != 0 {
                    return Err(PoolProblemError::Problem(ProblemError::MisalignedOffset {
                        buffer,
                        offset,
                        alignment: b.alignment,
                    }));
                }
                if offset.checked_add(b.size).is_none() {
                    return Err(PoolProblemError::Problem(ProblemError::FixedEndOverflow {
                        buffer,
                        offset,
                        size: b.size,
                    }));
                }
            }
        }
        let mut pins = pins;
        for (i, pin) in pins.iter_mut().enumerate() {
            let buffer = BufferIdx::new(i);
            if let Some(pool) = *pin {
                if pool.index() >= pools.len() {
                    return Err(PoolProblemError::UnknownPin {
                        buffer,
                        pool,
                        pools: pools.len(),
                    });
                }
            } else if buffers[i].fixed_offset.is_some() {
                if pools.len() > 1 {
                    return Err(PoolProblemError::UnpinnedFixed {
                        buffer,
                        pools: pools.len(),
                    });
                }
                *pin = Some(PoolIdx(0));
            }
        }
        let alignments = pool_alignments(&buffers, &pins, &pools)?;
        let problem = PoolProblem {
            buffers,
            pins,
            pools,
            alignments,
        };
        for p in problem.pool_indices() {
            let members: Vec<BufferIdx> = problem
                .indices()
                .filter(|&b| problem.alignment_in(b, p).is_some())
                .collect();
            problem.check_pool(p, &members)?;
        }
        Ok(problem)
    }

    /// A pooled problem over the buffers of `problem` (its capacity is not
    /// used: each pool has its own).
    pub fn from_problem(
        problem: &Problem,
        pins: Vec<Option<PoolIdx>>,
        pools: Vec<Pool>,
    ) -> Result<Self, PoolProblemError> {
        PoolProblem::new(problem.buffers().to_vec(), pins, pools)
    }

    /// Fixed offsets aligned for the pool, no two fixed buffers of the pool
    /// overlapping, and the sum of sizes with padding below 2^64, over the
    /// buffers that may go into pool `p`.
    fn check_pool(&self, p: PoolIdx, members: &[BufferIdx]) -> Result<(), PoolProblemError> {
        let pool_name = || self.pool(p).name.clone();
        let mut budget: u64 = 0;
        let mut fixed_end: u64 = 0;
        for &b in members {
            let buffer = self.buffer(b);
            let alignment = self.alignment_in(b, p).unwrap_or(1);
            if let Some(offset) = buffer.fixed_offset {
                if offset % alignment != 0 {
                    return Err(PoolProblemError::MisalignedForPool {
                        buffer: b,
                        pool_name: pool_name(),
                        offset,
                        alignment,
                    });
                }
                fixed_end = fixed_end.max(offset + buffer.size);
            }
            budget = budget
                .checked_add(buffer.size)
                .and_then(|s| s.checked_add(alignment - 1))
                .and_then(|s| s.checked_add(fixed_end).map(|_| s))
                .ok_or_else(|| PoolProblemError::SizeSumOverflow {
                    buffer: b,
                    pool_name: pool_name(),
                })?;
        }
        let fixed = members.iter().filter_map(|&b| {
            let buffer = self.buffer(b);
            buffer.fixed_offset.map(|o| (b, o))
        });
        if let Some((a, b)) = crate::geometry::overlap::first_overlap(
            &self.buffers,
            &crate::geometry::gaps::Gaps::default(),
            fixed,
        ) {
            let (first, second) = if a < b { (a, b) } else { (b, a) };
            return Err(PoolProblemError::FixedOverlap {
                first,
                second,
                first_id: self.buffer(first).id.clone(),
                second_id: self.buffer(second).id.clone(),
                pool_name: pool_name(),
            });
        }
        Ok(())
    }

    /// The buffers, indexed by [`BufferIdx`].
    #[inline]
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// The buffer at `b`.
    #[inline]
    pub fn buffer(&self, b: BufferIdx) -> &Buffer {
        &self.buffers[b.index()]
    }

    /// The pool buffer `b` is pinned to, if any.
    #[inline]
    pub fn pin(&self, b: BufferIdx) -> Option<PoolIdx> {
        self.pins[b.index()]
    }

    /// The pin of every buffer.
    pub fn pins(&self) -> &[Option<PoolIdx>] {
        &self.pins
    }

    /// The pools in order of preference.
    pub fn pools(&self) -> &[Pool] {
        &self.pools
    }

    /// The pool at `p`.
    #[inline]
    pub fn pool(&self, p: PoolIdx) -> &Pool {
        &self.pools[p.index()]
    }

    /// The pool named `name`, if any.
    pub fn pool_named(&self, name: &str) -> Option<PoolIdx> {
        self.pools
            .iter()
            .position(|p| p.name == name)
            .map(PoolIdx::new)
    }

    /// Number of buffers.
    #[inline]
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Whether there are no buffers.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// All buffer indices in input order.
    pub fn indices(&self) -> impl ExactSizeIterator<Item = BufferIdx> + Clone {
        (0..self.buffers.len() as u32).map(BufferIdx)
    }

    /// All pool indices in order of preference.
    pub fn pool_indices(&self) -> impl ExactSizeIterator<Item = PoolIdx> + Clone {
        (0..self.pools.len() as u32).map(PoolIdx)
    }

    /// The alignment buffer `b` needs in pool `p` (the least common
    /// multiple of its own and the pool's), or `None` when it is pinned to
    /// another pool.
    #[inline]
    pub fn alignment_in(&self, b: BufferIdx, p: PoolIdx) -> Option<u64> {
        self.alignments[p.index()][b.index()]
    }

    /// Whether buffer `b` may go into pool `p`: not pinned elsewhere and
    /// not larger than the pool.
    #[inline]
    pub fn fits_in(&self, b: BufferIdx, p: PoolIdx) -> bool {
        self.alignment_in(b, p).is_some() && self.buffer(b).size <= self.pool(p).capacity
    }

    /// The bytes × time of buffer `b`: its size times its lifetime.
    #[inline]
    pub fn area(&self, b: BufferIdx) -> u128 {
        let buffer = self.buffer(b);
        u128::from(buffer.size) * u128::from(buffer.lifetime())
    }

    /// The single-memory problem of pool `p` holding `members`: those
    /// buffers with the pool's alignment and capacity (fixed ones keep
    /// their offsets). `members` must be allowed in `p`.
    pub fn sub_problem(&self, p: PoolIdx, members: &[BufferIdx]) -> Result<Problem, ProblemError> {
        let buffers = members
            .iter()
            .map(|&b| {
                let buffer = self.buffer(b);
                Buffer {
                    alignment: self.alignment_in(b, p).unwrap_or(buffer.alignment),
                    ..buffer.clone()
                }
            })
            .collect();
        Problem::new(buffers, Some(self.pool(p).capacity))
    }
}

/// Per pool, the alignment of each buffer allowed in it.
fn pool_alignments(
    buffers: &[Buffer],
    pins: &[Option<PoolIdx>],
    pools: &[Pool],
) -> Result<Vec<Vec<Option<u64>>>, PoolProblemError> {
    let mut all = Vec::with_capacity(pools.len());
    for (p, pool) in pools.iter().enumerate() {
        let mut column = Vec::with_capacity(buffers.len());
        for (i, (b, pin)) in buffers.iter().zip(pins).enumerate() {
            if pin.is_some_and(|pin| pin.index() != p) {
                column.push(None);
                continue;
            }
            let alignment = lcm(b.alignment, pool.alignment).ok_or_else(|| {
                PoolProblemError::AlignmentOverflow {
                    buffer: BufferIdx::new(i),
                    pool_name: pool.name.clone(),
                }
            })?;
            column.push(Some(alignment));
        }
        all.push(column);
    }
    Ok(all)
}

/// The least common multiple of two positive numbers, `None` on overflow.
fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / crate::geometry::fit::gcd(a, b)).checked_mul(b)
}

/// A plan over pools: every buffer's pool and its offset in that pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolPlan {
    pools: Vec<PoolIdx>,
    offsets: Vec<u64>,
}

impl PoolPlan {
    /// A plan from each buffer's pool and offset, in buffer order (the
    /// two must have the same length).
    pub fn new(pools: Vec<PoolIdx>, offsets: Vec<u64>) -> Self {
        PoolPlan { pools, offsets }
    }

    /// Each buffer's pool, in buffer order.
    #[inline]
    pub fn pools(&self) -> &[PoolIdx] {
        &self.pools
    }

    /// Each buffer's offset in its pool, in buffer order.
    #[inline]
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The pool of buffer `b`.
    #[inline]
    pub fn pool(&self, b: BufferIdx) -> PoolIdx {
        self.pools[b.index()]
    }

    /// The offset of buffer `b` in its pool.
    #[inline]
    pub fn offset(&self, b: BufferIdx) -> u64 {
        self.offsets[b.index()]
    }

    /// The buffers placed in pool `p`, in buffer order.
    pub fn members(&self, p: PoolIdx) -> Vec<BufferIdx> {
        self.pools
            .iter()
            .enumerate()
            .filter(|&(_, &q)| q == p)
            .map(|(i, _)| BufferIdx::new(i))
            .collect()
    }

    /// The plan of pool `p`'s sub-problem: its members (in buffer order)
    /// and their offsets.
    pub fn pool_plan(&self, p: PoolIdx) -> (Vec<BufferIdx>, Plan) {
        let members = self.members(p);
        let offsets = members.iter().map(|&b| self.offset(b)).collect();
        (members, Plan::from_offsets(offsets))
    }

    /// The spill of this plan (see [`Spill`]).
    pub fn spill(&self, problem: &PoolProblem) -> Spill {
        Spill::of(problem, &self.pools)
    }
}

/// The objective of a pooled plan: entry `j` is the bytes × time placed
/// outside the first `j + 1` pools (so there are one fewer entries than
/// pools). Smaller is better, compared lexicographically: first what
/// leaves the fastest pool, then what leaves the two fastest, and so on.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Spill(pub Vec<u128>);

impl Spill {
    /// The spill of an assignment of buffers to pools.
    pub fn of(problem: &PoolProblem, pools: &[PoolIdx]) -> Spill {
        let k = problem.pools().len();
        let mut per_pool = vec![0u128; k];
        for (b, p) in problem.indices().zip(pools) {
            per_pool[p.index()] += problem.area(b);
        }
        Spill::from_areas(&per_pool)
    }

    /// The spill when pool `p` holds `areas[p]` bytes × time.
    pub fn from_areas(areas: &[u128]) -> Spill {
        let k = areas.len();
        let mut outside = vec![0u128; k.saturating_sub(1)];
        let mut sum = 0u128;
        for j in (0..k.saturating_sub(1)).rev() {
            sum += areas[j + 1];
            outside[j] = sum;
        }
        Spill(outside)
    }

    /// The bytes × time outside the first pool (0 with a single pool).
    pub fn first(&self) -> u128 {
        self.0.first().copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools() -> Vec<Pool> {
        vec![Pool::new("sram", 16), Pool::new("dram", 64).aligned(8)]
    }

    #[test]
    fn checks_pools_pins_and_fixed_buffers() {
        let b = |id: &str, s, e, size| Buffer::new(id, s, e, size);
        let err = |buffers: Vec<Buffer>, pins: Vec<Option<u32>>, pools: Vec<Pool>| {
            PoolProblem::new(
                buffers,
                pins.into_iter().map(|p| p.map(PoolIdx)).collect(),
                pools,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            err(vec![], vec![], vec![]),
            "no pools: at least one is needed"
        );
        assert_eq!(
            err(vec![], vec![], vec![Pool::new("a", 1), Pool::new("a", 2)]),
            "duplicate pool `a`"
        );
        assert_eq!(
            err(vec![], vec![], vec![Pool::new("a", 0)]),
            "pool capacity must be positive, got 0"
        );
        assert_eq!(
            err(vec![], vec![], vec![Pool::new("a", 1).aligned(0)]),
            "pool alignment must be positive, got 0"
        );
        assert_eq!(
            err(vec![b("x", 0, 1, 4)], vec![Some(2)], pools()),
            "pinned to pool 2 of 2"
        );
        assert_eq!(
            err(vec![b("x", 0, 1, 4).fixed(0)], vec![None], pools()),
            "a fixed buffer must be pinned to a pool (there are 2)"
        );
        assert_eq!(
            err(vec![b("x", 0, 1, 4).fixed(4)], vec![Some(1)], pools()),
            "fixed offset 4 is not a multiple of pool `dram`'s alignment 8"
        );
        assert_eq!(
            err(
                vec![b("x", 0, 2, 4).fixed(0), b("y", 1, 3, 4).fixed(2)],
                vec![Some(0), Some(0)],
                pools()
            ),
            "fixed buffers `x` and `y` overlap in time and address in pool `sram`"
        );
        assert_eq!(
            err(vec![b("x", 1, 1, 4)], vec![None], pools()),
            "empty lifetime: start 1 >= end 1 (half-open)"
        );
        assert_eq!(
            err(vec![b("x", 0, 1, 1)], vec![], pools()),
            "0 pool pins for 1 buffers"
        );
        // Fixed buffers of different pools may share addresses; a single
        // pool pins fixed buffers implicitly.
        let p = PoolProblem::new(
            vec![b("x", 0, 2, 8).fixed(0), b("y", 0, 2, 8).fixed(0)],
            vec![Some(PoolIdx(0)), Some(PoolIdx(1))],
            pools(),
        )
        .unwrap();
        assert_eq!(p.alignment_in(BufferIdx(0), PoolIdx(1)), None);
        assert_eq!(p.alignment_in(BufferIdx(1), PoolIdx(1)), Some(8));
        let single = PoolProblem::new(
            vec![b("x", 0, 2, 8).fixed(0)],
            vec![None],
            vec![Pool::new("only", 8)],
        )
        .unwrap();
        assert_eq!(single.pin(BufferIdx(0)), Some(PoolIdx(0)));
    }

    #[test]
    fn sub_problems_take_the_pool_alignment_and_capacity() {
        let p = PoolProblem::new(
            vec![
                Buffer::new("x", 0, 2, 8).aligned(4),
                Buffer::new("y", 0, 2, 8).aligned(3),
            ],
            vec![None, None],
            pools(),
        )
        .unwrap();
        let sub = p
            .sub_problem(PoolIdx(1), &[BufferIdx(0), BufferIdx(1)])
            .unwrap();
        assert_eq!(sub.capacity, Some(64));
        assert_eq!(sub.buffers()[0].alignment, 8);
        assert_eq!(sub.buffers()[1].alignment, 24);
        let sub = p.sub_problem(PoolIdx(0), &[BufferIdx(1)]).unwrap();
        assert_eq!((sub.capacity, sub.buffers()[0].alignment), (Some(16), 3));
    }

    #[test]
    fn spill_counts_what_leaves_each_prefix_of_pools() {
        assert_eq!(Spill::from_areas(&[5, 3, 2]), Spill(vec![5, 2]));
        assert_eq!(Spill::from_areas(&[5]), Spill(vec![]));
        assert!(Spill(vec![4, 9]) < Spill(vec![5, 0]));
        assert!(Spill(vec![4, 1]) < Spill(vec![4, 2]));
        let p = PoolProblem::new(
            vec![Buffer::new("x", 0, 2, 8), Buffer::new("y", 1, 4, 2)],
            vec![None, None],
            vec![Pool::new("a", 8), Pool::new("b", 8), Pool::new("c", 8)],
        )
        .unwrap();
        assert_eq!(
            Spill::of(&p, &[PoolIdx(1), PoolIdx(2)]),
            Spill(vec![16 + 6, 6])
        );
    }
}
