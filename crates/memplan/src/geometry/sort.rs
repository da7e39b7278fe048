//! Sorts that a stop token can cut short: a parallel merge sort
//! ([`sort`]), a radix sort of one-word keys ([`radix_sort`]) and a
//! counting sort ([`counting_sorted`]).
//!
//! At millions of buffers one `par_sort_unstable` runs longer than a stop
//! (Ctrl-C, a time limit) may wait, and nothing can cut it short.
//! [`sort`] sorts runs of
//! [`RUN`] elements in parallel, then merges runs pairwise, level by level,
//! checking the token between runs and every [`PIECE`] merged elements; it
//! gives up (`Err`) as soon as the token cuts, the slice then unspecified (a
//! merge cut midway leaves some elements twice and others out): every
//! caller discards it. When it finishes, the slice is sorted: since callers sort keys
//! without equal elements (or whose equal elements are identical), the
//! result is exactly that of `sort_unstable`.

use rayon::prelude::*;

use crate::dispose::drop_later;
use crate::stop::{Cut, Stop};

/// Elements per run sorted at once (a few milliseconds of work).
pub const RUN: usize = 1 << 16;

/// Elements per run at most: a run is sorted without a poll, so it must
/// stay a small part of what a stop may wait.
const RUN_MAX: usize = 1 << 18;

/// Elements of a merge piece, merged in parallel, the token checked before
/// each: a piece must divide [`RUN`] (runs merge piece by piece).
pub const PIECE: usize = 1 << 14;

/// Sorts `v` unless `stop` cuts first (then `Err`, and `v`'s contents
/// are unspecified: a cut merge leaves a mix of two levels).
/// Short slices are sorted at once, without a look.
pub fn sort<T: Ord + Copy + Send + Sync + 'static>(v: &mut [T], stop: &Stop) -> Result<(), Cut> {
    if v.len() <= RUN {
        v.sort_unstable();
        return Ok(());
    }
    // Longer runs on long slices (fewer merge levels, each a pass over
    // them all), a few per thread, at most a few tens of milliseconds each.
    let threads = rayon::current_num_threads().max(1);
    let run_len = (v.len() / (2 * threads))
        .clamp(RUN, RUN_MAX)
        .next_power_of_two();
    v.par_chunks_mut(run_len).for_each(|run| {
        if !stop.is_cut() {
            run.sort_unstable();
        }
    });
    stop.check()?;
    // The merge buffer, copied a run at a time with polls: at millions
    // of elements, touching its fresh pages takes tenths of a second.
    let mut buffer = Vec::with_capacity(v.len());
    for run in v.chunks(RUN) {
        if let Err(cut) = stop.check() {
            drop_later(buffer, v.len());
            return Err(cut);
        }
        buffer.par_extend(run.par_iter().copied());
    }
    // Runs of `width` in `src` merge into runs of `2 * width` in `dst`.
    let mut width = run_len;
    let mut in_buffer = false;
    while width < v.len() {
        let merged = {
            let (src, dst): (&[T], &mut [T]) = if in_buffer {
                (&buffer, v)
            } else {
                (v, &mut buffer)
            };
            merge_level(src, dst, width, stop)
        };
        if let Err(cut) = merged {
            drop_later(buffer, v.len());
            return Err(cut);
        }
        in_buffer = !in_buffer;
        width *= 2;
    }
    if in_buffer {
        v.copy_from_slice(&buffer);
    }
    Ok(())
}

/// Sorts `v` by its words, stably (equal words keep their order), unless
/// `stop` cuts first (then `Err`, `v`'s contents unspecified). A
/// least-significant-digit radix sort by bytes that skips the bytes every
/// word shares: one pass counts all eight bytes, then one scatter per byte
/// that varies (sizes below 2^17 and lifetimes below 2^8 take 4 of 8).
/// Its passes are linear and few (one per varying byte), where
/// [`sort`] adds a pass per merge level (the log of the number of
/// runs), so on the greedy size order it is the faster of the two (figures
/// in `docs/benchmarks.md`). The token is checked every [`PIECE`] items of
/// the count and every [`Stop::EVERY`] items of each scatter.
pub fn radix_sort<T: Copy + Send + Sync + 'static>(
    v: &mut [(u64, T)],
    stop: &Stop,
) -> Result<(), Cut> {
    if v.len() <= RUN {
        v.sort_by_key(|item| item.0);
        return Ok(());
    }
    let counts = byte_counts(v, stop)?;
    // A byte every word shares moves nothing.
    let varying: Vec<usize> = (0..8).filter(|&d| !counts[d].contains(&v.len())).collect();
    if varying.is_empty() {
        return Ok(());
    }
    let mut other = collect(v.len(), |i| v[i], stop)?;
    let mut in_other = false;
    for &d in &varying {
        let done = if in_other {
            scatter_by_byte(&other, v, &counts[d], d, stop)
        } else {
            scatter_by_byte(v, &mut other, &counts[d], d, stop)
        };
        if let Err(cut) = done {
            drop_later(other, v.len());
            return Err(cut);
        }
        in_other = !in_other;
    }
    if in_other {
        v.copy_from_slice(&other);
    }
    drop_later(other, v.len());
    Ok(())
}

/// One pass of [`radix_sort`]: `src` into `dst` stably by byte `byte` of
/// the words, whose values `counts` counts; `Err` once `stop` cuts.
fn scatter_by_byte<T: Copy>(
    src: &[(u64, T)],
    dst: &mut [(u64, T)],
    counts: &[usize; 256],
    byte: usize,
    stop: &Stop,
) -> Result<(), Cut> {
    let mut next = [0usize; 256];
    let mut at = 0;
    for (slot, &count) in next.iter_mut().zip(counts) {
        *slot = at;
        at += count;
    }
    let shift = 8 * byte as u32;
    for (i, &item) in src.iter().enumerate() {
        stop.every(i)?;
        let slot = &mut next[(item.0 >> shift) as usize & 0xff];
        dst[*slot] = item;
        *slot += 1;
    }
    Ok(())
}

/// Per byte of the words of `v` (least significant first), how many words
/// have each value there; counted in parallel, pieces of [`PIECE`], `Err`
/// once `stop` cuts.
fn byte_counts<T: Sync>(v: &[(u64, T)], stop: &Stop) -> Result<Vec<[usize; 256]>, Cut> {
    v.par_chunks(PIECE)
        .map(|chunk| {
            stop.check().map(|()| {
                let mut counts = vec![[0usize; 256]; 8];
                for item in chunk {
                    for (d, count) in counts.iter_mut().enumerate() {
                        count[(item.0 >> (8 * d)) as usize & 0xff] += 1;
                    }
                }
                counts
            })
        })
        .try_reduce(
            || vec![[0usize; 256]; 8],
            |mut a, b| {
                for (a, b) in a.iter_mut().zip(&b) {
                    for (a, b) in a.iter_mut().zip(b) {
                        *a += b;
                    }
                }
                Ok(a)
            },
        )
}

/// `(0..n).map(f)` collected in parallel, [`RUN`] elements at a time with
/// the token checked in between; `Err` once it cuts (the part collected
/// is freed on the disposal thread). At millions of elements, touching the
/// vector's fresh pages alone takes a tenth of a second.
pub fn collect<T: Send + 'static>(
    n: usize,
    f: impl Fn(usize) -> T + Sync + Send,
    stop: &Stop,
) -> Result<Vec<T>, Cut> {
    let mut out = Vec::with_capacity(n);
    for from in (0..n).step_by(RUN) {
        if let Err(cut) = stop.check() {
            drop_later(out, n);
            return Err(cut);
        }
        out.par_extend((from..(from + RUN).min(n)).into_par_iter().map(&f));
    }
    Ok(out)
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

/// `items` stably ordered by `key` (every key below `bound`): a two-level
/// counting sort in linear time. The items are scattered by the top 8 bits
/// of their key (at most 256 streams of writes, nearly sequential; a
/// one-level scatter over millions of keys is one cache miss per item),
/// then each part by the other bits ([`sort_parts_by_low_bits`]). `Err`
/// once `stop` cuts, checked every [`Stop::EVERY`] items of each pass (the
/// second level's too).
pub fn counting_sorted<T: Copy + Send + Sync + 'static>(
    items: &[T],
    key: impl Fn(&T) -> usize + Sync,
    bound: usize,
    stop: &Stop,
) -> Result<Vec<T>, Cut> {
    let Some(&first) = items.first() else {
        return Ok(Vec::new());
    };
    let shift = (usize::BITS - bound.leading_zeros()).saturating_sub(8);
    let mut next = vec![0usize; (bound >> shift) + 2];
    for (k, item) in items.iter().enumerate() {
        stop.every(k)?;
        next[(key(item) >> shift) + 1] += 1;
    }
    prefix_sums(&mut next);
    let bounds = next.clone();
    // Filled in parallel with polls: at millions of items, touching the
    // fresh pages of a `vec![first; n]` at once would keep a stop waiting.
    let mut sorted = collect(items.len(), |_| first, stop)?;
    for (k, &item) in items.iter().enumerate() {
        if let Err(cut) = stop.every(k) {
            drop_later(sorted, items.len());
            return Err(cut);
        }
        let at = &mut next[key(&item) >> shift];
        sorted[*at] = item;
        *at += 1;
    }
    if let Err(cut) = sort_parts_by_low_bits(&mut sorted, &bounds, shift, |item| key(item), stop) {
        drop_later(sorted, items.len());
        return Err(cut);
    }
    Ok(sorted)
}

/// The second level of a two-level counting sort: each part of `items`
/// (from `bounds[k]` to `bounds[k + 1]`, every item of a part with the
/// same `key >> shift`) stably ordered by the low `shift` bits of `key`,
/// parts in parallel, each within the cache. `Err` (the parts' contents
/// then unspecified) once `stop` cuts, checked every [`Stop::EVERY`] items
/// of each part's passes (one part may hold every item: equal high bits).
pub fn sort_parts_by_low_bits<T: Copy + Send + Sync>(
    items: &mut [T],
    bounds: &[usize],
    shift: u32,
    key: impl Fn(&T) -> usize + Sync,
    stop: &Stop,
) -> Result<(), Cut> {
    let mut parts = Vec::with_capacity(bounds.len());
    let mut rest = &mut items[..];
    for w in bounds.windows(2) {
        let (part, tail) = rest.split_at_mut(w[1] - w[0]);
        parts.push(part);
        rest = tail;
    }
    let low = |item: &T| key(item) & ((1 << shift) - 1);
    parts
        .into_par_iter()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(copy, next): &mut (Vec<T>, Vec<usize>), part| {
                copy.clear();
                copy.extend_from_slice(part);
                next.clear();
                next.resize((1 << shift) + 1, 0);
                for (k, item) in copy.iter().enumerate() {
                    stop.every(k)?;
                    next[low(item) + 1] += 1;
                }
                prefix_sums(next);
                for (k, item) in copy.iter().enumerate() {
                    if k > 0 {
                        stop.every(k)?;
                    }
                    let at = &mut next[low(item)];
                    part[*at] = *item;
                    *at += 1;
                }
                Ok(())
            },
        )
        .collect::<Result<(), Cut>>()
}

/// Merges each pair of adjacent sorted runs of `width` (a multiple of
/// [`PIECE`]) in `src` into `dst`, in pieces of [`PIECE`] output elements
/// merged in parallel (each from where the merge path crosses its start:
/// the top levels, one or two pairs, would otherwise keep a thread each),
/// the token checked before each; `Err` when it cut.
fn merge_level<T: Ord + Copy + Send + Sync>(
    src: &[T],
    dst: &mut [T],
    width: usize,
    stop: &Stop,
) -> Result<(), Cut> {
    debug_assert_eq!(width % PIECE, 0);
    dst.par_chunks_mut(PIECE)
        .enumerate()
        .map(|(k, out)| {
            stop.check()?;
            // The pair this piece belongs to, and where in its output.
            let (pair, at) = ((k * PIECE) / (2 * width), (k * PIECE) % (2 * width));
            let pair = &src[pair * 2 * width..((pair + 1) * 2 * width).min(src.len())];
            let (a, b) = pair.split_at(width.min(pair.len()));
            let (i, j) = merge_path(a, b, at);
            merge(&a[i..], &b[j..], out);
            Ok(())
        })
        .collect::<Result<(), Cut>>()
}

/// How many of the first `t` elements of the merge of sorted `a` and `b`
/// (ties from `a` first) come from `a` and from `b`: a binary search.
fn merge_path<T: Ord>(a: &[T], b: &[T], t: usize) -> (usize, usize) {
    let (mut lo, mut hi) = (t.saturating_sub(b.len()), t.min(a.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // a[mid] is among the first t when it goes before b[t - mid - 1].
        if a[mid] <= b[t - mid - 1] {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo, t - lo)
}

/// Fills `out` with the first `out.len()` elements of the merge of sorted
/// `a` and `b` (at least that many in all), ties from `a` first.
fn merge<T: Ord + Copy>(a: &[T], b: &[T], out: &mut [T]) {
    let (mut i, mut j) = (0, 0);
    for slot in out.iter_mut() {
        let take_a = j >= b.len() || (i < a.len() && a[i] <= b[j]);
        if take_a {
            *slot = a[i];
            i += 1;
        } else {
            *slot = b[j];
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Looks spent by `work` run to its end.
    fn looks_of(work: impl FnOnce(&Stop) -> bool) -> usize {
        let budget = Stop::after_looks(u64::MAX);
        assert!(work(&budget));
        (u64::MAX - budget.looks_left().unwrap_or(0)) as usize
    }

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
        // Longer runs (up to RUN_MAX) with a short last one, merged in
        // pieces across pairs.
        for n in [
            0,
            1,
            5,
            RUN,
            RUN + 1,
            3 * RUN + 17,
            5 * RUN,
            3 * RUN_MAX + 5,
        ] {
            let mut v = values(n, n as u64);
            let mut want = v.clone();
            want.sort_unstable();
            assert!(sort(&mut v, &Stop::never()).is_ok());
            assert_eq!(v, want, "{n}");
        }
    }

    proptest::proptest! {
        /// The two-level counting sort is the stable sort by key, with one
        /// level (keys below 256) or two, and stops when asked.
        #[test]
        fn counting_sorted_is_the_stable_sort(
            keys in proptest::collection::vec(0usize..5000, 0..400),
            bound_extra in 0usize..3000,
        ) {
            let bound = keys.iter().max().map_or(0, |&k| k + 1) + bound_extra;
            let items: Vec<(usize, usize)> = keys.iter().copied().zip(0..).collect();
            let mut want = items.clone();
            want.sort_by_key(|&(k, _)| k);
            let got = counting_sorted(&items, |&(k, _)| k, bound, &Stop::never());
            proptest::prop_assert_eq!(got, Ok(want));
            if !items.is_empty() {
                let cut = counting_sorted(&items, |&(k, _)| k, bound, &Stop::after_looks(0));
                proptest::prop_assert!(cut.is_err());
            }
        }
    }

    /// One part holding every item (equal high bits of the key): its
    /// second level looks, so a token cut from any look on cuts the sort,
    /// the last look being past the first level's passes.
    #[test]
    fn counting_sorted_polls_its_second_level() {
        let n = 3 * Stop::EVERY + 5;
        // Bound 4096: shift 5, every key below 32 in part 0.
        let items: Vec<(usize, usize)> = (0..n).map(|i| ((i * 7) % 32, i)).collect();
        let mut want = items.clone();
        want.sort_by_key(|&(k, _)| k);
        let total =
            looks_of(|stop| counting_sorted(&items, |&(k, _)| k, 4096, stop).as_ref() == Ok(&want));
        // The first level's two passes look every EVERY items each.
        let first_level = 2 * n.div_ceil(Stop::EVERY);
        assert!(
            total > first_level,
            "{total} looks, {first_level} in the first level"
        );
        for cut in 0..total {
            let stop = Stop::after_looks(cut as u64);
            assert!(
                counting_sorted(&items, |&(k, _)| k, 4096, &stop).is_err(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn collects_in_order_unless_stopped() {
        for n in [0, 1, RUN, 2 * RUN + 5] {
            let got = collect(n, |i| i * 3, &Stop::never()).unwrap();
            assert_eq!(got, (0..n).map(|i| i * 3).collect::<Vec<_>>(), "{n}");
        }
        assert!(collect(5, |i| i, &Stop::after_looks(0)).is_err());
        // Cut after the first run: its second look is its last.
        let stop = Stop::after_looks(1);
        assert!(collect(3 * RUN, |i| i, &stop).is_err());
        assert_eq!(stop.looks_left(), Some(0));
    }

    /// Runs `sort` on `input` without a cut, counting its looks, then
    /// cut at each look in turn: it must say so, and past the last one
    /// give `sorted`. Returns the number of looks.
    fn cuts_at_every_poll(
        input: &[(u64, u32)],
        sorted: &[(u64, u32)],
        sort: impl Fn(&mut [(u64, u32)], &Stop) -> Result<(), Cut>,
    ) -> usize {
        let total = looks_of(|stop| sort(&mut input.to_vec(), stop).is_ok());
        for cut in 0..=total {
            let mut w = input.to_vec();
            let finished = sort(&mut w, &Stop::after_looks(cut as u64)).is_ok();
            assert_eq!(finished, cut == total, "cut at poll {cut}");
            if finished {
                assert_eq!(w, sorted);
            }
        }
        total
    }

    #[test]
    fn stops_at_every_poll() {
        // Four runs: polls in the run sorts, before the merge buffer, in
        // its copy, and in both merge levels. Cut at each one in turn,
        // `sort` says so; past the last look it sorts.
        let n = 4 * RUN;
        let mut sorted = values(n, 3);
        sorted.sort_unstable();
        let total = cuts_at_every_poll(&values(n, 3), &sorted, sort);
        // The four runs, the check after them, the copy of four runs,
        // two merge levels.
        assert_eq!(total, 4 + 1 + 4 + 2 * (n / PIECE));
    }

    /// Words spread over a few of their bytes (some shared by all, one
    /// varying in the top byte) with many repeats.
    fn words(n: usize, seed: u64) -> Vec<(u64, u32)> {
        values(n, seed)
            .into_iter()
            .map(|(v, i)| ((v % 7) << 56 | 0xab << 40 | (v % 300) << 8 | 0x11, i))
            .collect()
    }

    #[test]
    fn radix_sort_is_the_stable_sort_by_word() {
        // Below one run (the stable comparison sort), above it with an
        // odd and an even number of varying bytes, and all words equal.
        for n in [0, 1, 5, RUN, RUN + 1, 3 * RUN + 17] {
            let inputs = [
                words(n, n as u64),
                words(n, 1)
                    .into_iter()
                    .map(|(w, i)| ((w >> 8) & 0xffff, i))
                    .collect(),
                (0..n as u32).map(|i| (42, i)).collect(),
            ];
            for input in inputs {
                let mut want = input.clone();
                want.sort_by_key(|item| item.0);
                let mut got = input;
                assert!(radix_sort(&mut got, &Stop::never()).is_ok());
                assert_eq!(got, want, "{n}");
            }
        }
    }

    #[test]
    fn radix_sort_stops_at_every_poll() {
        let n = 2 * RUN + 5;
        let mut sorted = words(n, 9);
        sorted.sort_by_key(|item| item.0);
        let total = cuts_at_every_poll(&words(n, 9), &sorted, radix_sort);
        // The count's pieces, the copy's runs, a pass per varying byte.
        let passes = n.div_ceil(Stop::EVERY);
        assert_eq!(total, n.div_ceil(PIECE) + n.div_ceil(RUN) + 3 * passes);
    }
}
