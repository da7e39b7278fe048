//! Synthetic instances for tests and benchmarks. Every generator draws from
//! one ChaCha8 stream seeded with the given seed: same seed, same problem.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::plan::Plan;
use crate::problem::{Buffer, Problem};

/// The kinds of generated instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Uniform start times, lifetimes (1..=200 steps) and sizes (1..=64 KiB).
    Random,
    /// A time × address rectangle cut into pieces: a zero-fragmentation plan
    /// exists, so the optimum equals the max load.
    Perfect,
    /// Training steps of a layered network: activations live from their
    /// forward step to their backward step; gradients and workspaces are
    /// short-lived.
    Layered,
    /// A malloc-like trace: one allocation per tick, mostly small objects,
    /// heavy-tailed (Pareto) lifetimes and a few large blocks.
    Trace,
    /// The character of MiniMalloc's challenging suite: a few hundred
    /// buffers cut from a 1 MiB × 2^20-tick square on a 1 KiB grid, 15 to
    /// 35% of the pieces left out, with a known plan within the capacity
    /// [`CHALLENGING_CAPACITY`] and the max load at (or, without a full
    /// column, just below) it: heavy contention, zero or near-zero
    /// fragmentation at the capacity.
    Challenging,
}

/// The capacity of [`Kind::Challenging`] instances (set on the problem).
pub const CHALLENGING_CAPACITY: u64 = 1 << 20;

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 5] = [
        Kind::Random,
        Kind::Perfect,
        Kind::Layered,
        Kind::Trace,
        Kind::Challenging,
    ];

    /// Name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Random => "random",
            Kind::Perfect => "perfect",
            Kind::Layered => "layered",
            Kind::Trace => "trace",
            Kind::Challenging => "challenging",
        }
    }
}

impl crate::named::Named for Kind {
    const WHAT: &'static str = "kind";
    const ALL: &'static [Self] = &Kind::ALL;
    fn name(self) -> &'static str {
        Kind::name(self)
    }
    fn help(self) -> Option<&'static str> {
        (self == Kind::Challenging)
            .then_some("MiniMalloc's challenging suite's character; solve with --capacity 1048576")
    }
}

/// A generated instance.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The problem (no capacity, except for [`Kind::Challenging`]).
    pub problem: Problem,
    /// A plan whose makespan is the max load, when one is known
    /// ([`Kind::Perfect`]).
    pub optimal_plan: Option<Plan>,
    /// A plan within the problem's capacity, when one is known
    /// ([`Kind::Challenging`]).
    pub known_plan: Option<Plan>,
}

/// Generates `n` buffers of `kind` from `seed`.
pub fn generate(kind: Kind, n: usize, seed: u64) -> Generated {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (buffers, offsets) = match kind {
        Kind::Random => (random(&mut rng, n), None),
        Kind::Perfect => {
            let (b, o) = perfect(&mut rng, n);
            (b, Some(o))
        }
        Kind::Layered => (layered(&mut rng, n), None),
        Kind::Trace => (trace(&mut rng, n), None),
        Kind::Challenging => {
            let (b, o) = challenging(&mut rng, n);
            let problem = Problem::new(b, Some(CHALLENGING_CAPACITY))
                .expect("generators produce valid problems");
            return Generated {
                problem,
                optimal_plan: None,
                known_plan: Some(Plan::from_offsets(o)),
            };
        }
    };
    let problem = Problem::new(buffers, None).expect("generators produce valid problems");
    Generated {
        problem,
        optimal_plan: offsets.map(Plan::from_offsets),
        known_plan: None,
    }
}

fn buffer(i: usize, start: u64, end: u64, size: u64) -> Buffer {
    Buffer::new(i.to_string(), start, end, size)
}

fn random(rng: &mut ChaCha8Rng, n: usize) -> Vec<Buffer> {
    let horizon = (n as u64).max(10);
    let max_len = horizon.min(200);
    (0..n)
        .map(|i| {
            let start = rng.gen_range(0..horizon);
            let len = rng.gen_range(1..=max_len);
            buffer(i, start, start + len, rng.gen_range(1..=65_536))
        })
        .collect()
}

/// Guillotine cuts of `[0, T) × [0, W)`; returns the pieces and their offsets.
fn perfect(rng: &mut ChaCha8Rng, n: usize) -> (Vec<Buffer>, Vec<u64>) {
    let time = 16 * n.max(1) as u64;
    let width = 64 * n.max(1) as u64;
    // (start, end, offset, size)
    let mut pieces: Vec<(u64, u64, u64, u64)> = Vec::with_capacity(n);
    if n > 0 {
        pieces.push((0, time, 0, width));
    }
    while pieces.len() < n {
        let k = rng.gen_range(0..pieces.len());
        let (s, e, o, w) = pieces[k];
        let by_time = if e - s >= 2 && w >= 2 {
            rng.gen_bool(0.5)
        } else if e - s >= 2 {
            true
        } else if w >= 2 {
            false
        } else {
            continue;
        };
        if by_time {
            let cut = rng.gen_range(s + 1..e);
            pieces[k] = (s, cut, o, w);
            pieces.push((cut, e, o, w));
        } else {
            let cut = rng.gen_range(1..w);
            pieces[k] = (s, e, o, cut);
            pieces.push((s, e, o + cut, w - cut));
        }
    }
    let buffers = pieces
        .iter()
        .enumerate()
        .map(|(i, &(s, e, _, w))| buffer(i, s, e, w))
        .collect();
    (buffers, pieces.iter().map(|p| p.2).collect())
}

/// Guillotine cuts of a square of `CHALLENGING_CAPACITY` ticks by as many
/// bytes on a 1 KiB (1024-tick) grid into `n / (1 - d)` pieces, `d` drawn
/// in [0.15, 0.35) (less is mostly beyond MiniMalloc's reach at a few
/// hundred buffers, more mostly trivial), each cut in a
/// piece drawn by area, across its longer side three times in five. Every
/// piece crossing one random instant (a full column: the max load reaches the
/// capacity) is kept, except in one instance of three; of the others, a
/// random selection makes up `n`. Returns the buffers (shuffled) and their
/// offsets in the square.
fn challenging(rng: &mut ChaCha8Rng, n: usize) -> (Vec<Buffer>, Vec<u64>) {
    const UNIT: u64 = 1024;
    const GRID: u64 = CHALLENGING_CAPACITY / UNIT;
    let left_out = rng.gen_range(0.15..0.35);
    let total = (n as f64 / (1.0 - left_out)).ceil() as usize;
    // (start, end, offset, top) in grid units.
    let mut pieces: Vec<(u64, u64, u64, u64)> = vec![(0, GRID, 0, GRID)];
    // Cumulative areas are recomputed per cut: n is a few hundred.
    let capacity = (GRID * GRID) as usize;
    while pieces.len() < total.min(capacity) {
        let areas: u64 = pieces.iter().map(|p| (p.1 - p.0) * (p.3 - p.2)).sum();
        let mut pick = rng.gen_range(0..areas);
        let k = pieces
            .iter()
            .position(|p| {
                let a = (p.1 - p.0) * (p.3 - p.2);
                if pick < a {
                    true
                } else {
                    pick -= a;
                    false
                }
            })
            .unwrap_or(0);
        let (s, e, o, t) = pieces[k];
        let (width, height) = (e - s, t - o);
        if width < 2 && height < 2 {
            continue;
        }
        let across_longer = rng.gen_bool(0.6);
        let by_time = height < 2 || (width >= 2 && across_longer == (width >= height));
        if by_time {
            let cut = rng.gen_range(s + 1..e);
            pieces[k] = (s, cut, o, t);
            pieces.push((cut, e, o, t));
        } else {
            let cut = rng.gen_range(o + 1..t);
            pieces[k] = (s, e, o, cut);
            pieces.push((s, e, cut, t));
        }
    }
    let column = rng.gen_range(0..GRID);
    let full_column = !rng.gen_ratio(1, 3);
    let (mut kept, mut rest): (Vec<_>, Vec<_>) = pieces
        .into_iter()
        .partition(|p| full_column && p.0 <= column && column < p.1);
    rest.shuffle(rng);
    rest.truncate(n.saturating_sub(kept.len()));
    kept.extend(rest);
    kept.truncate(n);
    kept.shuffle(rng);
    let buffers = kept
        .iter()
        .enumerate()
        .map(|(i, &(s, e, o, t))| buffer(i, s * UNIT, e * UNIT, (t - o) * UNIT))
        .collect();
    (buffers, kept.iter().map(|p| p.2 * UNIT).collect())
}

fn layered(rng: &mut ChaCha8Rng, n: usize) -> Vec<Buffer> {
    let layers = ((n / 4).max(1)).min(rng.gen_range(50..=150));
    // Per layer: activation size, forward and backward workspace sizes.
    let sizes: Vec<(u64, u64, u64)> = (0..layers)
        .map(|_| {
            let act = 256 * rng.gen_range(16u64..=16_384);
            (
                act,
                256 * rng.gen_range(1u64..=1_024),
                256 * rng.gen_range(1u64..=2_048),
            )
        })
        .collect();
    let l = layers as u64;
    let step_len = 2 * l + 2;
    let mut out = Vec::with_capacity(n);
    let mut step = 0u64;
    'steps: loop {
        let base = step * step_len;
        for (i, &(act, fwd_ws, bwd_ws)) in sizes.iter().enumerate() {
            let i = i as u64;
            let fwd = base + i;
            let bwd = base + 2 * l - i;
            let jitter = rng.gen_range(0..=act / 8) & !255;
            for (start, end, size) in [
                (fwd, bwd + 1, act - jitter),
                (fwd, fwd + 1, fwd_ws),
                (bwd, bwd + 2, act),
                (bwd, bwd + 1, bwd_ws),
            ] {
                if out.len() == n {
                    break 'steps;
                }
                out.push(buffer(out.len(), start, end, size));
            }
        }
        step += 1;
    }
    out
}

fn trace(rng: &mut ChaCha8Rng, n: usize) -> Vec<Buffer> {
    let mut t = 0u64;
    (0..n)
        .map(|i| {
            t += u64::from(rng.gen_bool(0.3));
            // Pareto(alpha = 1.1) lifetime, capped.
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            let len = (u.powf(-1.0 / 1.1)).min(1e7) as u64;
            let size = if rng.gen_bool(0.95) {
                16 * rng.gen_range(1u64..=32)
            } else {
                let u: f64 = rng.gen_range(f64::EPSILON..1.0);
                ((4096.0 * u.powf(-1.0 / 1.5)).min(64.0 * 1024.0 * 1024.0)) as u64
            };
            buffer(i, t, t + len.max(1), size)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;

    #[test]
    fn same_seed_same_problem() {
        for kind in Kind::ALL {
            let a = generate(kind, 300, 7);
            let b = generate(kind, 300, 7);
            let c = generate(kind, 300, 8);
            assert_eq!(a.problem, b.problem, "{kind:?}");
            assert_ne!(a.problem, c.problem, "{kind:?}");
            assert_eq!(a.problem.len(), 300);
        }
        assert_eq!(generate(Kind::Layered, 0, 1).problem.len(), 0);
        assert_eq!(generate(Kind::Perfect, 1, 1).problem.len(), 1);
    }

    #[test]
    fn perfect_instances_have_a_zero_fragmentation_plan() {
        for seed in 0..5 {
            let g = generate(Kind::Perfect, 200, seed);
            let plan = g.optimal_plan.unwrap();
            validate(&g.problem, &plan).unwrap();
            assert_eq!(plan.makespan(&g.problem), g.problem.max_load());
            assert_eq!(g.problem.max_load(), 64 * 200);
        }
    }

    #[test]
    fn challenging_instances_fit_their_capacity_tightly() {
        let mut full = 0;
        for seed in 0..6 {
            let g = generate(Kind::Challenging, 250, seed);
            let p = &g.problem;
            assert_eq!(p.len(), 250);
            assert_eq!(p.capacity, Some(CHALLENGING_CAPACITY));
            validate(p, &g.known_plan.unwrap()).unwrap();
            assert!(p.max_load() <= CHALLENGING_CAPACITY);
            assert!(p.max_load() * 10 >= CHALLENGING_CAPACITY * 7, "seed {seed}");
            full += usize::from(p.max_load() == CHALLENGING_CAPACITY);
            assert!(p
                .buffers()
                .iter()
                .all(|b| b.size % 1024 == 0 && b.start % 1024 == 0));
        }
        // Most instances have a full column.
        assert!(full >= 3, "{full}");
    }
}
