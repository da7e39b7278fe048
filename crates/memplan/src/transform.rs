//! Transformations that keep a problem's answer: a plan of one gives a plan
//! of the other with the same makespan (scaled with the sizes). Solvers
//! should be about as fast on the copies as on the original; the
//! differential benchmark and the tests use them to find behaviour that
//! depends on the input's order, ids or time direction.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::buffer::BufferIdx;
use crate::geometry::gaps::{Gap, Gaps};
use crate::problem::{Buffer, Problem, ProblemError};

/// A transformation of a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// Time runs backwards: `[s, e)` becomes `[t0 + t1 - e, t0 + t1 - s)`
    /// over the problem's time range `[t0, t1)`.
    Reverse,
    /// The rows in a random order (from the seed).
    Shuffle(u64),
    /// Every id replaced by a new one (`r` and a scrambled number); order,
    /// times and sizes unchanged.
    Rename,
    /// Sizes, alignments, fixed offsets and the capacity times a constant.
    Scale(u64),
}

impl Transform {
    /// A short name for reports: `reverse`, `shuffle3`, `rename`, `scale3`.
    pub fn name(self) -> String {
        match self {
            Transform::Reverse => "reverse".into(),
            Transform::Shuffle(seed) => format!("shuffle{seed}"),
            Transform::Rename => "rename".into(),
            Transform::Scale(k) => format!("scale{k}"),
        }
    }

    /// The transformed problem (gaps follow their buffers); fails only
    /// when scaling overflows.
    pub fn apply(self, problem: &Problem) -> Result<Problem, ProblemError> {
        let mut buffers: Vec<Buffer> = problem.buffers().to_vec();
        // One list per buffer, only when there are gaps.
        let mut gaps: Vec<Vec<Gap>> = if problem.has_gaps() {
            problem
                .indices()
                .map(|i| problem.gaps().of(i).to_vec())
                .collect()
        } else {
            Vec::new()
        };
        let mut capacity = problem.capacity;
        match self {
            Transform::Reverse => {
                let t0 = buffers.iter().map(|b| b.start).min().unwrap_or(0);
                let t1 = buffers.iter().map(|b| b.end).max().unwrap_or(0);
                for b in &mut buffers {
                    (b.start, b.end) = (t0 + t1 - b.end, t0 + t1 - b.start);
                }
                for g in gaps.iter_mut().flatten() {
                    (g.start, g.end) = (t0 + t1 - g.end, t0 + t1 - g.start);
                }
            }
            Transform::Shuffle(seed) => {
                // The same permutation as shuffling the buffers themselves.
                let mut order: Vec<usize> = (0..buffers.len()).collect();
                order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
                buffers = order.iter().map(|&i| buffers[i].clone()).collect();
                if !gaps.is_empty() {
                    gaps = order
                        .iter()
                        .map(|&i| std::mem::take(&mut gaps[i]))
                        .collect();
                }
            }
            Transform::Rename => {
                // A bijection on 0..n: i -> (a i + c) mod n with a coprime to n.
                let n = (buffers.len() as u64).max(1);
                let a = (n / 2 + 1..)
                    .find(|&a| crate::geometry::fit::gcd(a, n) == 1)
                    .unwrap_or(1);
                for (i, b) in buffers.iter_mut().enumerate() {
                    b.id = format!("r{}", (a * i as u64 + 11) % n);
                }
            }
            Transform::Scale(k) => {
                let overflow = |i: usize| ProblemError::SizeSumOverflow(BufferIdx::new(i));
                for (i, b) in buffers.iter_mut().enumerate() {
                    b.size = b.size.checked_mul(k).ok_or_else(|| overflow(i))?;
                    b.alignment = b.alignment.checked_mul(k).ok_or_else(|| overflow(i))?;
                    if let Some(o) = &mut b.fixed_offset {
                        *o = o.checked_mul(k).ok_or_else(|| overflow(i))?;
                    }
                }
                for (i, list) in gaps.iter_mut().enumerate() {
                    for w in list.iter_mut().filter_map(|g| g.window.as_mut()) {
                        w.0 = w.0.checked_mul(k).ok_or_else(|| overflow(i))?;
                        w.1 = w.1.checked_mul(k).ok_or_else(|| overflow(i))?;
                    }
                }
                capacity = capacity
                    .map(|c| c.checked_mul(k).ok_or_else(|| overflow(0)))
                    .transpose()?;
            }
        }
        Problem::new_with_gaps(buffers, Gaps::from_lists(&gaps)?, capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::plan::{validate, Plan};

    #[test]
    fn gaps_follow_their_buffers() {
        let p = crate::problem::read_problem_from(
            b"id,lower,upper,size,gaps\nsaved,0,10,4,3-7\ntmp,3,7,4,\nshrink,10,16,6,12-16@0:2\nlate,12,16,4,\n",
            std::path::Path::new("gaps.csv"),
            crate::Lifetimes::HalfOpen,
        )
        .unwrap();
        let plan = Plan::from_offsets(vec![0, 0, 0, 2]);
        validate(&p, &plan).unwrap();
        for t in [Transform::Reverse, Transform::Rename] {
            let q = t.apply(&p).unwrap();
            assert_eq!(q.max_load(), 6, "{t:?}");
            validate(&q, &plan).unwrap();
        }
        assert_eq!(
            Transform::Reverse
                .apply(&p)
                .unwrap()
                .gaps()
                .of(BufferIdx(2)),
            [Gap::windowed(0, 4, 0, 2)]
        );
        let q = Transform::Scale(3).apply(&p).unwrap();
        assert_eq!(q.max_load(), 18);
        validate(&q, &Plan::from_offsets(vec![0, 0, 0, 6])).unwrap();
        let q = Transform::Shuffle(1).apply(&p).unwrap();
        let offsets = q
            .buffers()
            .iter()
            .map(|b| if b.id == "late" { 2 } else { 0 })
            .collect();
        validate(&q, &Plan::from_offsets(offsets)).unwrap();
        assert_eq!(q.gaps().count(), 2);
    }

    #[test]
    fn transformed_copies_keep_the_known_plan() {
        let g = generate(Kind::Challenging, 120, 4);
        let p = &g.problem;
        let plan = g.known_plan.unwrap();
        let offsets: Vec<u64> = plan.offsets().to_vec();
        // Reverse, rename: same rows, same plan.
        for t in [Transform::Reverse, Transform::Rename] {
            let q = t.apply(p).unwrap();
            assert_eq!(q.max_load(), p.max_load(), "{t:?}");
            validate(&q, &plan).unwrap();
        }
        let r = Transform::Reverse.apply(p).unwrap();
        assert_ne!(r, *p);
        assert_eq!(Transform::Reverse.apply(&r).unwrap(), *p);
        let ids: std::collections::HashSet<String> = Transform::Rename
            .apply(p)
            .unwrap()
            .buffers()
            .iter()
            .map(|b| b.id.clone())
            .collect();
        assert_eq!(ids.len(), p.len());
        assert!(ids.iter().all(|id| id.starts_with('r')));
        // Scale: offsets scale too.
        let q = Transform::Scale(3).apply(p).unwrap();
        assert_eq!(q.capacity, p.capacity.map(|c| c * 3));
        assert_eq!(q.max_load(), p.max_load() * 3);
        validate(
            &q,
            &Plan::from_offsets(offsets.iter().map(|o| o * 3).collect()),
        )
        .unwrap();
        // Shuffle: the same rows in another order.
        let q = Transform::Shuffle(5).apply(p).unwrap();
        assert_ne!(q, *p);
        let mut a: Vec<_> = p
            .buffers()
            .iter()
            .map(|b| (b.id.clone(), b.start, b.size))
            .collect();
        let mut b: Vec<_> = q
            .buffers()
            .iter()
            .map(|b| (b.id.clone(), b.start, b.size))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert!(Transform::Scale(u64::MAX).apply(p).is_err());
    }
}
