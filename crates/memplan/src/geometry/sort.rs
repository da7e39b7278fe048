//! A parallel sort that a deadline or a cancel flag can cut short.
//!
//! At millions of buffers one `par_sort_unstable` takes tenths of a second
//! (5M keys: about 0.25 s on the 2 cores of the development machine), longer
//! than a Ctrl-C may wait (issue 14: ≤ 100 ms). [`sort_until`] sorts runs of
//! [`RUN`] elements in parallel, then merges runs pairwise, level by level,
//! polling `stop()` between runs and every [`POLL`] merged elements; it gives
//! up (`false`) as soon as `stop()` holds, the slice then unspecified (a
//! merge cut midway leaves some elements twice and others out): every
//! caller discards it. When it finishes, the slice is sorted: since callers sort keys
//! without equal elements (or whose equal elements are identical), the
//! result is exactly that of `sort_unstable`.

use rayon::prelude::*;

use crate::dispose::drop_later;

/// Elements per run sorted at once (a few milliseconds of work).
pub const RUN: usize = 1 << 16;

/// Elements merged between two polls of `stop()`.
pub const POLL: usize = 1 << 14;

/// Sorts `v` unless `stop()` holds first (then `false`, and `v`'s contents
/// are unspecified: a cut merge leaves a mix of two levels).
/// Short slices are sorted at once, without a poll.
pub fn sort_until<T: Ord + Copy + Send + Sync + 'static>(
    v: &mut [T],
    stop: &(dyn Fn() -> bool + Sync),
) -> bool {
    if v.len() <= RUN {
        v.sort_unstable();
        return true;
    }
    v.par_chunks_mut(RUN).for_each(|run| {
        if !stop() {
            run.sort_unstable();
        }
    });
    if stop() {
        return false;
    }
    // The merge buffer, copied a run at a time with polls: at millions
    // of elements, touching its fresh pages takes tenths of a second.
    let mut buffer = Vec::with_capacity(v.len());
    for run in v.chunks(RUN) {
        if stop() {
            drop_later(buffer, v.len());
            return false;
        }
        buffer.extend_from_slice(run);
    }
    // Runs of `width` in `src` merge into runs of `2 * width` in `dst`.
    let mut width = RUN;
    let mut in_buffer = false;
    while width < v.len() {
        let ok = {
            let (src, dst): (&[T], &mut [T]) = if in_buffer {
                (&buffer, v)
            } else {
                (v, &mut buffer)
            };
            merge_level(src, dst, width, stop)
        };
        if !ok {
            drop_later(buffer, v.len());
            return false;
        }
        in_buffer = !in_buffer;
        width *= 2;
    }
    if in_buffer {
        v.copy_from_slice(&buffer);
    }
    true
}

/// `(0..n).map(f)` collected in parallel, [`RUN`] elements at a time with
/// `stop()` polled in between; `None` once it holds (the part collected
/// is freed on the disposal thread). At millions of elements, touching the
/// vector's fresh pages alone takes a tenth of a second.
pub fn collect_until<T: Send + 'static>(
    n: usize,
    f: impl Fn(usize) -> T + Sync + Send,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<T>> {
    let mut out = Vec::with_capacity(n);
    for from in (0..n).step_by(RUN) {
        if stop() {
            drop_later(out, n);
            return None;
        }
        out.par_extend((from..(from + RUN).min(n)).into_par_iter().map(&f));
    }
    Some(out)
}

/// Turns counts into starts, in place: each entry becomes the sum of it
/// and those before it (with counts at `k + 1`, entry `k` is then where the
/// items of key `k` start: the counting sort's running positions).
pub fn prefix_sums<T: Copy + std::ops::AddAssign>(v: &mut [T]) {
    for k in 1..v.len() {
        let before = v[k - 1];
        v[k] += before;
    }
}

/// Merges each pair of adjacent sorted runs of `width` in `src` into `dst`
/// (in parallel across pairs); false when `stop()` held.
fn merge_level<T: Ord + Copy + Send + Sync>(
    src: &[T],
    dst: &mut [T],
    width: usize,
    stop: &(dyn Fn() -> bool + Sync),
) -> bool {
    dst.par_chunks_mut(2 * width)
        .zip(src.par_chunks(2 * width))
        .map(|(out, pair)| {
            let (a, b) = pair.split_at(width.min(pair.len()));
            merge(a, b, out, stop)
        })
        .reduce(|| true, |x, y| x && y)
}

/// Merges sorted `a` and `b` into `out` (of their total length), ties from
/// `a` first; false when `stop()` held at a poll.
fn merge<T: Ord + Copy>(a: &[T], b: &[T], out: &mut [T], stop: &(dyn Fn() -> bool + Sync)) -> bool {
    let (mut i, mut j) = (0, 0);
    for (k, slot) in out.iter_mut().enumerate() {
        if k % POLL == 0 && stop() {
            return false;
        }
        let take_a = j >= b.len() || (i < a.len() && a[i] <= b[j]);
        if take_a {
            *slot = a[i];
            i += 1;
        } else {
            *slot = b[j];
            j += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A reproducible sequence with repeated values.
    fn values(n: usize, seed: u64) -> Vec<(u64, u32)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 40) % 1000, i as u32)
            })
            .collect()
    }

    #[test]
    fn sorts_like_sort_unstable() {
        // Below one run, exactly one run, and several levels with a short
        // last run.
        for n in [0, 1, 5, RUN, RUN + 1, 3 * RUN + 17, 5 * RUN] {
            let mut v = values(n, n as u64);
            let mut want = v.clone();
            want.sort_unstable();
            assert!(sort_until(&mut v, &|| false));
            assert_eq!(v, want, "{n}");
        }
    }

    #[test]
    fn collects_in_order_unless_stopped() {
        for n in [0, 1, RUN, 2 * RUN + 5] {
            let got = collect_until(n, |i| i * 3, &|| false).unwrap();
            assert_eq!(got, (0..n).map(|i| i * 3).collect::<Vec<_>>(), "{n}");
        }
        assert!(collect_until(5, |i| i, &|| true).is_none());
        // Cut after the first run.
        let polls = AtomicUsize::new(0);
        let stop = || polls.fetch_add(1, Ordering::Relaxed) >= 1;
        assert!(collect_until(3 * RUN, |i| i, &stop).is_none());
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn stops_at_every_poll() {
        // Four runs: polls in the run sorts, before the merge buffer, in
        // its copy, and in both merge levels. Cut at each one in turn,
        // `sort_until` says so; past the last poll it sorts.
        let n = 4 * RUN;
        let mut sorted = values(n, 3);
        sorted.sort_unstable();
        let count = AtomicUsize::new(0);
        assert!(sort_until(&mut values(n, 3), &|| {
            count.fetch_add(1, Ordering::Relaxed);
            false
        }));
        let total = count.load(Ordering::Relaxed);
        // The four runs, the check after them, the copy of four runs,
        // two merge levels.
        assert_eq!(total, 4 + 1 + 4 + 2 * (n / POLL));
        for cut in 0..=total {
            let polls = AtomicUsize::new(0);
            let mut w = values(n, 3);
            let stop = || polls.fetch_add(1, Ordering::Relaxed) >= cut;
            let finished = sort_until(&mut w, &stop);
            assert_eq!(finished, cut == total, "cut at poll {cut}");
            if finished {
                assert_eq!(w, sorted);
            }
        }
    }
}
