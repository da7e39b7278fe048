//! The prelude (idealloc §5.6): the jobs to box, the dummy job, and the
//! calibration of ε by simulating Theorem 16's rounds on the heights.

use crate::dispose::drop_later;
use crate::geometry::sort::{collect, sort};
use crate::problem::Problem;
use crate::stop::{Cut, Stop};

use super::jobs::{Contents, Job};

/// Inequality 12 (§3.2): BA needs `h_max / h_min > 2216.53`.
pub(super) const MIN_RATIO: f64 = 2216.53;
/// Inequality 10 (§3.2): μ* ≤ (√5 − 1) / 2.
pub(super) const MU_MAX: f64 = 0.618_033_988_749_895;

/// What the prelude (§5.6) computes once for all iterations.
#[derive(Clone, Debug)]
pub(super) struct Prelude {
    /// The jobs to box: every free buffer, and the dummy job if any.
    pub(super) jobs: Vec<Job>,
    /// ε, calibrated within Inequality 11.
    pub(super) epsilon: f64,
}

impl Prelude {
    /// Builds the jobs, adds the dummy job when the height ratio breaks
    /// Inequality 12 and calibrates ε (§5.6). `Err` once `stop` cuts
    /// (checked every [`Stop::EVERY`] buffers of the jobs, in the collect
    /// and the sort of the heights).
    pub(super) fn new(problem: &Problem, stop: &Stop) -> Result<Prelude, Cut> {
        // In chunks that check the stop token: at millions of buffers the jobs
        // take a tenth of a second (and a stop must be answered within it).
        let buffers = problem.buffers();
        let mut jobs: Vec<Job> = Vec::new();
        for (k, chunk) in buffers.chunks(Stop::EVERY).enumerate() {
            if let Err(cut) = stop.check() {
                drop_later(jobs, buffers.len());
                return Err(cut);
            }
            jobs.extend(
                chunk
                    .iter()
                    .zip(k * Stop::EVERY..)
                    .filter(|(b, _)| b.fixed_offset.is_none())
                    .map(|(b, i)| Job {
                        size: b.size,
                        start: b.start,
                        end: b.end,
                        contents: Contents::Buffer(i as u32),
                    }),
            );
        }
        let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(1);
        let h_max = jobs.iter().map(|j| j.size).max().unwrap_or(1);
        if (h_max as f64) / (h_min as f64) <= MIN_RATIO {
            let start = jobs.iter().map(|j| j.start).min().unwrap_or(0);
            let end = jobs.iter().map(|j| j.end).max().unwrap_or(1);
            // Saturating: from h_min ≈ 2^53 on, ⌈2216.53·h_min⌉ passes
            // u64::MAX (the float cast saturates, the `+ 1` must too, or the
            // dummy gets height 0 and Corollary 15 divides by it).
            jobs.push(Job {
                size: ((MIN_RATIO * h_min as f64).ceil() as u64).saturating_add(1),
                start,
                end,
                contents: Contents::Dummy,
            });
        }
        let mut heights = match collect(jobs.len(), |i| jobs[i].size, stop) {
            Ok(heights) => heights,
            Err(cut) => {
                drop_later(jobs, buffers.len());
                return Err(cut);
            }
        };
        if let Err(cut) = sort(&mut heights, stop) {
            drop_later((jobs, heights), buffers.len());
            return Err(cut);
        }
        heights.dedup();
        let epsilon = calibrate_epsilon(&heights);
        Ok(Prelude { jobs, epsilon })
    }
}

/// Inequality 11 (§3.2): the legal range of ε for height ratio `r`.
fn epsilon_range(r: f64) -> (f64, f64) {
    let log = r.log2();
    let low = (log.powi(14) / r).powf(1.0 / 6.0);
    let high = MU_MAX * log * log;
    (low, high.max(low))
}

/// §5.6: tries ε from the low end of Inequality 11 upwards in steps of 1% of
/// the range and keeps the value whose Theorem 16 loop ends with the
/// smallest ratio r*. `heights` are the distinct job heights, increasing.
fn calibrate_epsilon(heights: &[u64]) -> f64 {
    let (Some(&h_min), Some(&h_max)) = (heights.first(), heights.last()) else {
        return 1.0;
    };
    let (low, high) = epsilon_range(h_max as f64 / h_min as f64);
    let mut best = (f64::INFINITY, low);
    for step in 0..=100 {
        let epsilon = low + (high - low) * f64::from(step) / 100.0;
        let r_star = simulate_ratio(heights, epsilon);
        if r_star < best.0 {
            best = (r_star, epsilon);
        }
    }
    best.1
}

/// The ratio r* at which Theorem 16's loop stops for ε, computed on the
/// heights alone: each round boxes the jobs of height at most μH into boxes
/// of height H.
fn simulate_ratio(heights: &[u64], epsilon: f64) -> f64 {
    let h_max = heights[heights.len() - 1];
    let mut first_unboxed = 0usize;
    let mut box_heights: Vec<u64> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let h_min = heights
            .get(first_unboxed)
            .copied()
            .into_iter()
            .chain(box_heights.iter().copied())
            .min()
            .unwrap_or(h_max);
        let Some(round) = Round::new(h_min, h_max, epsilon) else {
            return h_max as f64 / h_min as f64;
        };
        first_unboxed += heights[first_unboxed..].partition_point(|&h| h <= round.small_limit);
        box_heights.retain(|&h| h > round.small_limit);
        box_heights.push(round.box_height);
    }
    let h_min = heights
        .get(first_unboxed)
        .copied()
        .into_iter()
        .chain(box_heights)
        .min()
        .unwrap_or(h_max);
    h_max as f64 / h_min as f64
}

/// Theorem 16's loop never needs more rounds than this (each round raises
/// h_min geometrically); the bound only guards against float corner cases.
pub(super) const MAX_ROUNDS: usize = 200;

/// One round of Theorem 16's loop (§3.2 eqs. 3-5).
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    /// μ = ε / (log₂ r)².
    pub(super) mu: f64,
    /// H = ⌈μ⁵ h_max / (log₂ r)²⌉.
    pub(super) box_height: u64,
    /// Jobs of height at most μH are boxed this round.
    pub(super) small_limit: u64,
}

impl Round {
    /// The round for the current heights, or `None` when the loop ends:
    /// (log₂ r)² < 1/ε, or μ would exceed (√5 − 1)/2 (Corollary 15 needs
    /// μ ≤ 1; as r shrinks, ε/(log₂ r)² grows past it when ε > 1), or no
    /// progress (h_min > μH, or boxes as high as the highest job).
    pub(super) fn new(h_min: u64, h_max: u64, epsilon: f64) -> Option<Round> {
        let r = h_max as f64 / h_min as f64;
        let log2 = r.log2().powi(2);
        if log2 < 1.0 / epsilon {
            return None;
        }
        let mu = epsilon / log2;
        let height = (mu.powi(5) * h_max as f64 / log2).ceil();
        if mu > MU_MAX || height >= h_max as f64 {
            return None;
        }
        let box_height = height as u64;
        let small_limit = (mu * box_height as f64).floor() as u64;
        (h_min <= small_limit && box_height > h_min).then_some(Round {
            mu,
            box_height,
            small_limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jobs look every `Stop::EVERY` buffers: a stop at any poll gives up,
    /// and the jobs of an uncut prelude are the free buffers, in order.
    #[test]
    fn stops_at_any_poll_of_the_jobs() {
        let n = 2 * Stop::EVERY + 5;
        let buffers: Vec<crate::Buffer> = (0..n as u64)
            .map(|i| {
                let b = crate::Buffer::new(format!("b{i}"), i % 7, i % 7 + 3, 1 + i % 5000);
                if i % 1000 == 0 {
                    b.fixed(i * 5000)
                } else {
                    b
                }
            })
            .collect();
        let p = Problem::new(buffers, None).unwrap();
        let counted = Stop::after_looks(u64::MAX);
        let full = Prelude::new(&p, &counted).unwrap();
        let polls = (u64::MAX - counted.looks_left().unwrap()) as usize;
        // Three chunks of jobs, then the heights' collect and sort.
        assert!(polls > 3, "{polls}");
        for cut in 0..polls {
            let stop = Stop::after_looks(cut as u64);
            assert!(Prelude::new(&p, &stop).is_err(), "cut at poll {cut}");
        }
        let free: Vec<u32> = (0..n as u32).filter(|i| i % 1000 != 0).collect();
        let jobs: Vec<u32> = full
            .jobs
            .iter()
            .filter_map(|j| match j.contents {
                Contents::Buffer(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(jobs, free);
    }

    #[test]
    fn epsilon_stays_within_inequality_11() {
        // At r = 2216.53 the range of Inequality 11 closes (Inequality 12).
        let (low, high) = epsilon_range(MIN_RATIO);
        assert!((low - high).abs() / high < 0.01, "{low} {high}");
        let (low, high) = epsilon_range(1e6);
        assert!(low < high);
        let heights = [1, 3, 50, 700, 1_000_000];
        let e = calibrate_epsilon(&heights);
        assert!(
            low * (1.0 - 1e-9) <= e && e <= high,
            "{low} <= {e} <= {high}"
        );
    }

    #[test]
    fn theorem_16_rounds_always_box_something() {
        // Every round of the loop must have h_min <= μH (§3.2), and H
        // grows the minimum height, so the loop ends.
        for &(h_min, h_max) in &[(1u64, 1_000_000u64), (7, 100_000), (1, 2217)] {
            let (low, high) = epsilon_range(h_max as f64 / h_min as f64);
            for e in [low, (low + high) / 2.0, high] {
                if let Some(round) = Round::new(h_min, h_max, e) {
                    assert!(h_min <= round.small_limit);
                    assert!(round.box_height > h_min);
                    assert!(round.mu <= MU_MAX);
                }
            }
        }
    }
}
