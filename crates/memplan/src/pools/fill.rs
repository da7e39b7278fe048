//! Filling pools one buffer at a time: each buffer goes at its first-fit
//! offset in a pool if it ends within the capacity, and is passed over
//! otherwise. [`cascade`] offers every buffer to the pools in order of
//! preference: the fastest-first baseline (ExecuTorch's banked planning:
//! fill the fastest pool, spill what does not fit to the next).

use std::cmp::Reverse;

use crate::buffer::BufferIdx;
use crate::geometry::fit::first_fit;
use crate::geometry::occupancy::{Occupancy, Span};
use crate::geometry::sweep::LoadProfile;
use crate::geometry::time_tree::TimeTree;

use super::{PoolIdx, PoolProblem};

/// Above this many time-overlapping buffers per buffer on average, the
/// index is the [`TimeTree`] (as in the greedy solver).
const DENSE_CONFLICTS: u64 = 128;

/// What every pool index of a problem shares: the buffers' spans, and
/// whether they are dense enough for the [`TimeTree`].
#[derive(Clone, Debug)]
pub(crate) struct Spans {
    spans: Vec<Span>,
    dense: bool,
}

impl Spans {
    /// The spans of every buffer of `problem`.
    pub fn new(problem: &PoolProblem) -> Self {
        let spans: Vec<Span> = problem.buffers().iter().map(Span::from).collect();
        let dense = mean_conflicts(&spans) > DENSE_CONFLICTS;
        Spans { spans, dense }
    }
}

/// Mean number of other spans overlapping a span (each overlapping pair has
/// its later start inside the other's lifetime).
fn mean_conflicts(spans: &[Span]) -> u64 {
    let mut starts: Vec<u64> = spans.iter().map(|s| s.start).collect();
    starts.sort_unstable();
    let pairs: u64 = spans
        .iter()
        .map(|s| {
            let inside =
                starts.partition_point(|&t| t < s.end) - starts.partition_point(|&t| t < s.start);
            inside as u64 - 1
        })
        .sum();
    pairs / spans.len().max(1) as u64
}

/// The buffers placed in one pool, searchable by time for first-fit.
#[derive(Clone, Debug)]
pub(crate) enum PoolIndex {
    /// Dense problems: O(log² n) per first-fit.
    Tree(TimeTree),
    /// Sparse problems: the conflicts, sorted by offset per query.
    Occupancy(Box<Placed>),
}

/// The [`Occupancy`] index with what is placed: by position, rank 0 for a
/// placed buffer (so that a query for rank 1 sees exactly those) and the
/// address ranges; plus working memory.
#[derive(Clone, Debug)]
pub(crate) struct Placed {
    occupancy: Occupancy,
    stamps: Vec<(u32, u32)>,
    ranges: Vec<(u64, u64)>,
    positions: Vec<u32>,
    occupied: Vec<(u64, u64)>,
}

impl PoolIndex {
    /// An empty pool over the spans of every buffer.
    pub fn new(spans: &Spans) -> Self {
        if spans.dense {
            PoolIndex::Tree(crate::stop::uncut(|never| {
                TimeTree::new(&spans.spans, never)
            }))
        } else {
            let occupancy =
                crate::stop::uncut(|never| Occupancy::new(&spans.spans, usize::MAX, never));
            let stamps = occupancy.stamps();
            let ranges = vec![(0, 0); occupancy.len()];
            PoolIndex::Occupancy(Box::new(Placed {
                occupancy,
                stamps,
                ranges,
                positions: Vec::new(),
                occupied: Vec::new(),
            }))
        }
    }

    /// Records buffer `b` at `offset`.
    pub fn place(&mut self, b: BufferIdx, offset: u64, size: u64) {
        match self {
            PoolIndex::Tree(tree) => tree.place(b.0, offset, size),
            PoolIndex::Occupancy(placed) => {
                let p = placed.occupancy.position(b.0) as usize;
                placed.stamps[p].1 = 0;
                placed.ranges[p] = (offset, offset + size);
            }
        }
    }

    /// The first-fit offset of buffer `b` among the placed buffers.
    pub fn fit(&mut self, b: BufferIdx, size: u64, alignment: u64) -> u64 {
        match self {
            PoolIndex::Tree(tree) => tree.first_fit(b.0, size, alignment, 0),
            PoolIndex::Occupancy(placed) => {
                let Placed {
                    occupancy,
                    stamps,
                    ranges,
                    positions,
                    occupied,
                } = &mut **placed;
                positions.clear();
                occupancy.occupied_during(occupancy.position(b.0), 1, stamps, positions);
                occupied.clear();
                occupied.extend(positions.iter().map(|&p| ranges[p as usize]));
                occupied.sort_unstable_by_key(|r| r.0);
                first_fit(occupied, size, alignment)
            }
        }
    }
}

/// One pool being filled: its index and what it holds.
#[derive(Clone, Debug)]
pub(crate) struct PoolFill {
    pub pool: PoolIdx,
    pub index: PoolIndex,
    /// The buffers placed, with their offsets, in placement order.
    pub placed: Vec<(BufferIdx, u64)>,
    /// Bytes × time placed.
    pub area: u128,
}

impl PoolFill {
    /// An empty pool.
    pub fn new(pool: PoolIdx, spans: &Spans) -> Self {
        PoolFill {
            pool,
            index: PoolIndex::new(spans),
            placed: Vec::new(),
            area: 0,
        }
    }

    /// Places `b` at `offset` (which the caller checked). A zero-size
    /// buffer occupies no address and stays out of the index.
    pub fn put(&mut self, problem: &PoolProblem, b: BufferIdx, offset: u64) {
        let size = problem.buffer(b).size;
        if size > 0 {
            self.index.place(b, offset, size);
        }
        self.placed.push((b, offset));
        self.area += problem.area(b);
    }

    /// Places `b` at its first-fit offset if it may go into the pool and
    /// ends within its capacity; returns whether it did.
    pub fn offer(&mut self, problem: &PoolProblem, b: BufferIdx) -> bool {
        if !problem.fits_in(b, self.pool) {
            return false;
        }
        let buffer = problem.buffer(b);
        let capacity = problem.pool(self.pool).capacity;
        let offset = match buffer.fixed_offset {
            Some(offset) => offset,
            None => {
                let alignment = problem.alignment_in(b, self.pool).unwrap_or(1);
                self.index.fit(b, buffer.size, alignment)
            }
        };
        if offset.saturating_add(buffer.size) > capacity {
            return false;
        }
        self.put(problem, b, offset);
        true
    }
}

/// An order in which buffers are offered to a pool (ties by input order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FillOrder {
    /// Decreasing size, ties by longer lifetime (the greedy default).
    Size,
    /// Decreasing size × lifetime: the most bytes × time first.
    Area,
    /// Decreasing lifetime, ties by size.
    Lifetime,
    /// Increasing start, like an online allocator.
    Start,
    /// Decreasing contention (the highest load over the lifetime).
    Contention,
}

impl FillOrder {
    /// Every order.
    pub const ALL: [FillOrder; 5] = [
        FillOrder::Size,
        FillOrder::Area,
        FillOrder::Lifetime,
        FillOrder::Start,
        FillOrder::Contention,
    ];
}

/// `buffers` sorted by `order`; `contention` is needed for
/// [`FillOrder::Contention`] (indexed by buffer).
pub(crate) fn sorted(
    problem: &PoolProblem,
    buffers: &[BufferIdx],
    order: FillOrder,
    contention: &[u64],
) -> Vec<BufferIdx> {
    let mut v = buffers.to_vec();
    let b = |i: BufferIdx| problem.buffer(i);
    match order {
        FillOrder::Size => v.sort_by_key(|&i| (Reverse(b(i).size), Reverse(b(i).lifetime()), i)),
        FillOrder::Area => v.sort_by_key(|&i| (Reverse(problem.area(i)), Reverse(b(i).size), i)),
        FillOrder::Lifetime => {
            v.sort_by_key(|&i| (Reverse(b(i).lifetime()), Reverse(b(i).size), i))
        }
        FillOrder::Start => v.sort_by_key(|&i| (b(i).start, Reverse(b(i).size), i)),
        FillOrder::Contention => v.sort_by_key(|&i| {
            (
                Reverse(contention.get(i.index()).copied().unwrap_or(0)),
                Reverse(problem.area(i)),
                i,
            )
        }),
    }
    v
}

/// The contention of every buffer of `problem` (TelaMalloc §3.1).
pub(crate) fn contention(problem: &PoolProblem) -> Vec<u64> {
    crate::stop::uncut(|never| {
        LoadProfile::new(problem.buffers(), never)?.contention(problem.buffers(), never)
    })
}

/// The fastest-first baseline: fixed buffers at their offsets, then the
/// pinned buffers in their pools, then every other buffer offered to the
/// pools in order of preference, each in decreasing size order; a buffer
/// goes into the first pool where its first-fit offset ends within the
/// capacity. Returns each buffer's pool and offset, or the first buffer
/// that fits in no pool.
pub(crate) fn cascade(
    problem: &PoolProblem,
    spans: &Spans,
) -> Result<Vec<(PoolIdx, u64)>, BufferIdx> {
    let all: Vec<BufferIdx> = problem.indices().collect();
    let placed = cascade_into(problem, spans, &all, 0)?;
    let mut assignment = vec![(PoolIdx(0), 0u64); problem.len()];
    for (b, p, offset) in placed {
        assignment[b.index()] = (p, offset);
    }
    Ok(assignment)
}

/// [`cascade`] of `buffers` into the pools from `first` on: each buffer's
/// pool and offset, or the first buffer that fits in none of them.
pub(crate) fn cascade_into(
    problem: &PoolProblem,
    spans: &Spans,
    buffers: &[BufferIdx],
    first: usize,
) -> Result<Vec<(BufferIdx, PoolIdx, u64)>, BufferIdx> {
    let mut pools: Vec<PoolFill> = problem
        .pool_indices()
        .skip(first)
        .map(|p| PoolFill::new(p, spans))
        .collect();
    let order = sorted(problem, buffers, FillOrder::Size, &[]);
    let fixed = order
        .iter()
        .filter(|&&b| problem.buffer(b).fixed_offset.is_some());
    let pinned = order
        .iter()
        .filter(|&&b| problem.buffer(b).fixed_offset.is_none() && problem.pin(b).is_some());
    let free = order.iter().filter(|&&b| problem.pin(b).is_none());
    let mut placed = Vec::with_capacity(buffers.len());
    for &b in fixed.chain(pinned).chain(free) {
        let pool = pools.iter_mut().find_map(|fill| {
            let before = fill.placed.len();
            fill.offer(problem, b)
                .then(|| (b, fill.pool, fill.placed[before].1))
        });
        placed.push(pool.ok_or(b)?);
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pools::Pool;
    use crate::problem::Buffer;

    #[test]
    fn cascade_spills_what_does_not_fit() {
        // Fast pool of 8: `a` (6) goes first (largest), `b` (4) overlaps it
        // and spills, `c` (2) fits beside `a`.
        let p = PoolProblem::new(
            vec![
                Buffer::new("a", 0, 4, 6),
                Buffer::new("b", 2, 6, 4),
                Buffer::new("c", 1, 3, 2),
                Buffer::new("d", 0, 9, 3),
            ],
            vec![None, None, None, Some(PoolIdx(1))],
            vec![Pool::new("fast", 8), Pool::new("slow", 16).aligned(4)],
        )
        .unwrap();
        let spans = Spans::new(&p);
        let got = cascade(&p, &spans).unwrap();
        assert_eq!(
            got,
            vec![
                (PoolIdx(0), 0),
                (PoolIdx(1), 4),
                (PoolIdx(0), 6),
                (PoolIdx(1), 0)
            ]
        );
        // Nothing fits `e` (10) beside `f` (8) in the slow pool.
        let p = PoolProblem::new(
            vec![Buffer::new("e", 0, 4, 10), Buffer::new("f", 0, 4, 8)],
            vec![None, Some(PoolIdx(1))],
            vec![Pool::new("fast", 8), Pool::new("slow", 16)],
        )
        .unwrap();
        assert_eq!(cascade(&p, &Spans::new(&p)), Err(BufferIdx(0)));
    }
}
