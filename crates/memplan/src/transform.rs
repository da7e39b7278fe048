//! Transformations that keep a problem's answer: a plan of one gives a plan
//! of the other with the same makespan (scaled with the sizes). Solvers
//! should be about as fast on the copies as on the original; the
//! differential benchmark and the tests use them to find behaviour that
//! depends on the input's order, ids or time direction.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::buffer::BufferIdx;
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

    /// The transformed problem; fails only when scaling overflows.
    pub fn apply(self, problem: &Problem) -> Result<Problem, ProblemError> {
        let mut buffers: Vec<Buffer> = problem.buffers().to_vec();
        let mut capacity = problem.capacity;
        match self {
            Transform::Reverse => {
                let t0 = buffers.iter().map(|b| b.start).min().unwrap_or(0);
                let t1 = buffers.iter().map(|b| b.end).max().unwrap_or(0);
                for b in &mut buffers {
                    (b.start, b.end) = (t0 + t1 - b.end, t0 + t1 - b.start);
                }
            }
            Transform::Shuffle(seed) => {
                buffers.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
            }
            Transform::Rename => {
                // A bijection on 0..n: i -> (a i + c) mod n with a coprime to n.
                let n = (buffers.len() as u64).max(1);
                let a = (n / 2 + 1..).find(|&a| gcd(a, n) == 1).unwrap_or(1);
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
                capacity = capacity
                    .map(|c| c.checked_mul(k).ok_or_else(|| overflow(0)))
                    .transpose()?;
            }
        }
        Problem::new(buffers, capacity)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::plan::{validate, Plan};

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
