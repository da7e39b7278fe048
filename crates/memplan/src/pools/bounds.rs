//! What can be proven before any placement: that no assignment of the
//! buffers to the pools exists ([`infeasibility`]), and how much bytes ×
//! time must leave each prefix of the pools whatever the plan
//! ([`spill_lower_bound`]).

use crate::buffer::BufferIdx;
use crate::quote::quoted;

use super::load::Timeline;
use super::{PoolIdx, PoolProblem, Spill};

/// A proof that the buffers cannot all be placed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Infeasible {
    #[error("fixed buffer `{}` ends at {end}, past pool `{}`'s capacity {capacity}", quoted(.id), quoted(.pool_name))]
    FixedPastCapacity {
        buffer: BufferIdx,
        id: String,
        pool_name: String,
        end: u64,
        capacity: u64,
    },
    #[error("buffer `{}` ({size} B) is larger than every pool it may go to (the largest, `{}`, holds {capacity} B)", quoted(.id), quoted(.pool_name))]
    TooLarge {
        buffer: BufferIdx,
        id: String,
        size: u64,
        pool_name: String,
        capacity: u64,
    },
    #[error("the buffers pinned to pool `{}` need {load} B at time {time}, over its capacity {capacity}", quoted(.pool_name))]
    PinnedOverCapacity {
        pool: PoolIdx,
        pool_name: String,
        time: u64,
        load: u64,
        capacity: u64,
    },
    #[error("{load} B are alive at time {time}, over the {capacity} B of all pools together")]
    TotalOverCapacity {
        time: u64,
        load: u128,
        capacity: u128,
    },
    #[error("the buffers pinned to pool `{}` fit in no plan within its capacity {capacity} (proven by {by})", quoted(.pool_name))]
    PinnedUnplaceable {
        pool: PoolIdx,
        pool_name: String,
        capacity: u64,
        /// The solver that proved it.
        by: String,
    },
}

/// The first proof found, in the order of [`Infeasible`]'s variants, that
/// the buffers cannot all be placed; `None` when none of these simple
/// arguments applies (which does not mean a plan exists). Exact proofs for
/// a pool's pinned buffers come from the solvers, in the strategies.
pub fn infeasibility(problem: &PoolProblem) -> Option<Infeasible> {
    for b in problem.indices() {
        let buffer = problem.buffer(b);
        if let (Some(offset), Some(p)) = (buffer.fixed_offset, problem.pin(b)) {
            let pool = problem.pool(p);
            if offset + buffer.size > pool.capacity {
                return Some(Infeasible::FixedPastCapacity {
                    buffer: b,
                    id: buffer.id.clone(),
                    pool_name: pool.name.clone(),
                    end: offset + buffer.size,
                    capacity: pool.capacity,
                });
            }
        }
    }
    for b in problem.indices() {
        if !problem.pool_indices().any(|p| problem.fits_in(b, p)) {
            let buffer = problem.buffer(b);
            let largest = problem
                .pool_indices()
                .filter(|&p| problem.alignment_in(b, p).is_some())
                .max_by_key(|&p| (problem.pool(p).capacity, std::cmp::Reverse(p)))
                .unwrap_or(PoolIdx(0));
            return Some(Infeasible::TooLarge {
                buffer: b,
                id: buffer.id.clone(),
                size: buffer.size,
                pool_name: problem.pool(largest).name.clone(),
                capacity: problem.pool(largest).capacity,
            });
        }
    }
    for p in problem.pool_indices() {
        let pinned = problem.indices().filter(|&b| problem.pin(b) == Some(p));
        if let Some((load, time)) = peak(problem, pinned) {
            let pool = problem.pool(p);
            if load > u128::from(pool.capacity) {
                return Some(Infeasible::PinnedOverCapacity {
                    pool: p,
                    pool_name: pool.name.clone(),
                    time,
                    // At most the sum of sizes, below 2^64 (PoolProblem::new).
                    load: u64::try_from(load).unwrap_or(u64::MAX),
                    capacity: pool.capacity,
                });
            }
        }
    }
    let capacity: u128 = problem.pools().iter().map(|p| u128::from(p.capacity)).sum();
    match peak(problem, problem.indices()) {
        Some((load, time)) if load > capacity => Some(Infeasible::TotalOverCapacity {
            time,
            load,
            capacity,
        }),
        _ => None,
    }
}

/// The highest load of `buffers` and the first time it is reached; `None`
/// without buffers.
fn peak(problem: &PoolProblem, buffers: impl Iterator<Item = BufferIdx>) -> Option<(u128, u64)> {
    // (time, +1 start / 0 end, size): ends first at equal times.
    let mut events: Vec<(u64, u8, u64)> = Vec::new();
    for b in buffers {
        let buffer = problem.buffer(b);
        events.push((buffer.start, 1, buffer.size));
        events.push((buffer.end, 0, buffer.size));
    }
    events.sort_unstable();
    let mut load: u128 = 0;
    let mut best: Option<(u128, u64)> = None;
    for (t, kind, size) in events {
        if kind == 0 {
            load -= u128::from(size);
        } else {
            load += u128::from(size);
            if best.is_none_or(|(m, _)| load > m) {
                best = Some((load, t));
            }
        }
    }
    best
}

/// A lower bound on every plan's [`Spill`], entry by entry (hence also
/// lexicographically). At each instant, the first `j + 1` pools hold at
/// most the load of the buffers not pinned to a later pool, and each pool
/// `q` among them at most its capacity and the load of the buffers that
/// may go into it; what is alive beyond that is spilled.
pub fn spill_lower_bound(problem: &PoolProblem) -> Spill {
    let k = problem.pools().len();
    if k < 2 {
        return Spill(Vec::new());
    }
    let timeline = Timeline::new(problem.buffers());
    let segments = timeline.segments();
    // Per pool: load of the buffers allowed in it (delta arrays), and of
    // the buffers pinned to it.
    let mut allowed = vec![vec![0i128; segments + 1]; k];
    let mut pinned = vec![vec![0i128; segments + 1]; k];
    let mut total = vec![0i128; segments + 1];
    let mut area: u128 = 0;
    for b in problem.indices() {
        let size = i128::from(problem.buffer(b).size);
        let (lo, hi) = timeline.span(b);
        area += problem.area(b);
        total[lo] += size;
        total[hi] -= size;
        for p in problem.pool_indices() {
            if problem.fits_in(b, p) {
                allowed[p.index()][lo] += size;
                allowed[p.index()][hi] -= size;
            }
        }
        if let Some(p) = problem.pin(b) {
            pinned[p.index()][lo] += size;
            pinned[p.index()][hi] -= size;
        }
    }
    let prefix = |v: &mut Vec<i128>| {
        for s in 1..v.len() {
            v[s] += v[s - 1];
        }
    };
    allowed.iter_mut().for_each(prefix);
    pinned.iter_mut().for_each(prefix);
    prefix(&mut total);
    let mut bound = Vec::with_capacity(k - 1);
    for j in 0..k - 1 {
        let mut kept: u128 = 0;
        for s in 0..segments {
            // Alive and not pinned beyond pool j.
            let later: i128 = (j + 1..k).map(|q| pinned[q][s]).sum();
            let movable = total[s] - later;
            let by_pool: i128 = (0..=j)
                .map(|q| allowed[q][s].min(i128::from(problem.pools()[q].capacity)))
                .sum();
            let held = movable.min(by_pool).max(0) as u128;
            kept += held * u128::from(timeline.length(s));
        }
        bound.push(area - kept);
    }
    Spill(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pools::Pool;
    use crate::problem::Buffer;

    fn pooled(buffers: Vec<Buffer>, pins: &[Option<u32>], pools: Vec<Pool>) -> PoolProblem {
        PoolProblem::new(
            buffers,
            pins.iter().map(|p| p.map(PoolIdx)).collect(),
            pools,
        )
        .unwrap()
    }

    #[test]
    fn proofs_of_infeasibility() {
        let two = || vec![Pool::new("fast", 10), Pool::new("slow", 20)];
        let proof = |buffers, pins: &[Option<u32>]| {
            infeasibility(&pooled(buffers, pins, two())).map(|e| e.to_string())
        };
        assert_eq!(
            proof(vec![Buffer::new("f", 0, 2, 8).fixed(4)], &[Some(0)]),
            Some("fixed buffer `f` ends at 12, past pool `fast`'s capacity 10".into())
        );
        assert_eq!(
            proof(vec![Buffer::new("big", 0, 2, 21)], &[None]),
            Some("buffer `big` (21 B) is larger than every pool it may go to (the largest, `slow`, holds 20 B)".into())
        );
        assert_eq!(
            proof(vec![Buffer::new("big", 0, 2, 11)], &[Some(0)]),
            Some("buffer `big` (11 B) is larger than every pool it may go to (the largest, `fast`, holds 10 B)".into())
        );
        assert_eq!(
            proof(
                vec![
                    Buffer::new("a", 0, 4, 6),
                    Buffer::new("b", 2, 6, 6),
                    Buffer::new("c", 0, 9, 1)
                ],
                &[Some(0), Some(0), None]
            ),
            Some(
                "the buffers pinned to pool `fast` need 12 B at time 2, over its capacity 10"
                    .into()
            )
        );
        assert_eq!(
            proof(
                vec![
                    Buffer::new("a", 0, 4, 10),
                    Buffer::new("b", 2, 6, 20),
                    Buffer::new("c", 3, 9, 1)
                ],
                &[None, None, None]
            ),
            Some("31 B are alive at time 3, over the 30 B of all pools together".into())
        );
        assert_eq!(
            proof(
                vec![
                    Buffer::new("a", 0, 4, 10),
                    Buffer::new("b", 2, 6, 20),
                    Buffer::new("c", 4, 9, 1)
                ],
                &[None, None, None]
            ),
            None
        );
    }

    #[test]
    fn spill_bound_clips_the_load_at_the_capacities() {
        // Load 12 during [0, 4), then 5 during [4, 8): the fast pool (8)
        // leaves at least 4 × 4 outside.
        let p = pooled(
            vec![Buffer::new("a", 0, 8, 5), Buffer::new("b", 0, 4, 7)],
            &[None, None],
            vec![Pool::new("fast", 8), Pool::new("slow", 100)],
        );
        assert_eq!(spill_lower_bound(&p), Spill(vec![16]));
        // Pinned to the slow pool: all of it is spilled.
        let p = pooled(
            vec![Buffer::new("a", 0, 8, 5), Buffer::new("b", 0, 4, 7)],
            &[None, Some(1)],
            vec![Pool::new("fast", 8), Pool::new("slow", 100)],
        );
        assert_eq!(spill_lower_bound(&p), Spill(vec![28]));
        // Three pools: `b` (7) fits only the middle one and the last.
        let p = pooled(
            vec![Buffer::new("a", 0, 8, 5), Buffer::new("b", 0, 4, 7)],
            &[None, None],
            vec![Pool::new("a", 6), Pool::new("b", 7), Pool::new("c", 100)],
        );
        assert_eq!(spill_lower_bound(&p), Spill(vec![28, 0]));
    }
}
