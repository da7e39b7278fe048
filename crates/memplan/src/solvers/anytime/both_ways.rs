//! Best fit from the middle of the timeline, both ways at once: the
//! bucketed plan's best fit ([`super::fallback::bucketed`]) on two cores.
//!
//! Cut time at a bucket `t`. The buffers alive across it (starting before,
//! ending after) are stacked first, from the base. Then best fit runs
//! forwards over the buffers starting at or after `t` and, on the other
//! core, backwards (time reversed: a buffer's end is its start) over
//! those ending at or before it; the stacked buffers are alive at the
//! start of both visits, at their stacked offsets.
//!
//! ```text
//!   time:   0 ........... t ........... end
//!           <- backwards -|- forwards ->
//!           [  ends <= t  ][ starts >= t ]
//!           [ ==== alive across t ====== ]   stacked at the base
//! ```
//!
//! The plan is valid: two buffers of one side are kept apart by that
//! side's best fit, which also keeps them off the stacked ones; a buffer
//! ending at or before `t` and one starting at or after it are never alive
//! together (lifetimes are half-open). Reversing time keeps best fit's
//! plans valid, since two lifetimes overlap exactly when their reversals
//! do.

use rayon::prelude::*;

use crate::dispose::drop_later;
use crate::geometry::fit::align_up;
use crate::geometry::sort::{collect, prefix_sums};
use crate::stop::{Cut, Stop};

use super::best_fit::{best_fit, Item};

/// The indices of the items that `key` keys, sorted by that key (below
/// `2^(2 bits)`, `bits` at most 16; ties by index): a two-pass radix sort
/// of key and index packed in one word, a digit of `bits` bits a pass. The
/// words are small and each scatter writes to at most `2^bits` places at a
/// time.
/// The token is checked every [`Stop::EVERY`] items of each pass.
pub(super) fn radix_order(
    items: &[Item],
    bits: u32,
    key: impl Fn(&Item) -> Option<u32>,
    stop: &Stop,
) -> Result<Vec<u32>, Cut> {
    let digits = 1usize << bits;
    let mask = digits as u64 - 1;
    let mut low = vec![0u32; digits + 1];
    let mut high = vec![0u32; digits + 1];
    for (i, it) in items.iter().enumerate() {
        stop.every(i)?;
        if let Some(k) = key(it) {
            low[(k as u64 & mask) as usize + 1] += 1;
            high[(k >> bits) as usize + 1] += 1;
        }
    }
    prefix_sums(&mut low);
    prefix_sums(&mut high);
    let count = low[digits] as usize;
    let mut by_low = vec![0u64; count];
    for (i, it) in items.iter().enumerate() {
        if let Err(cut) = stop.every(i) {
            drop_later(by_low, count);
            return Err(cut);
        }
        if let Some(k) = key(it) {
            let at = &mut low[(k as u64 & mask) as usize];
            by_low[*at as usize] = (k as u64) << 32 | i as u64;
            *at += 1;
        }
    }
    let mut order = vec![0u32; count];
    for (j, &word) in by_low.iter().enumerate() {
        if let Err(cut) = stop.every(j) {
            drop_later((by_low, order), count);
            return Err(cut);
        }
        let at = &mut high[(word >> (32 + bits)) as usize];
        order[*at as usize] = word as u32;
        *at += 1;
    }
    drop_later(by_low, count);
    Ok(order)
}

/// Best fit both ways from about the bucket by which half the free items
/// have started, every offset at or above `base`, written to `offsets` (by
/// item; the fixed ones left as they are). Times are buckets `0..=buckets`,
/// keys of the radix sorts `bits` bits a digit. The plan's makespan, `None`
/// when either side passes best fit's work bound (`offsets` then partly
/// written), or an address would pass 2^64.
pub(super) fn both_ways(
    items: &[Item],
    buckets: u32,
    bits: u32,
    base: u64,
    offsets: &mut [u64],
    stop: &Stop,
) -> Result<Option<u64>, Cut> {
    let t = middle(items, bits, stop)?.min(buckets);
    // Alive across `t`, stacked from the base in input order.
    let mut across = Vec::new();
    let mut top = base;
    for (i, it) in items.iter().enumerate() {
        stop.every(i)?;
        if !it.is_fixed() && it.start < t && it.end > t {
            let lo = align_up(top, it.alignment);
            let Some(end) = lo.checked_add(it.size) else {
                return Ok(None);
            };
            offsets[i] = lo;
            across.push((lo, *it));
            top = end;
        }
    }
    // Each side's items and the stacked ones by that side's times.
    let forwards = || {
        let key = |it: &Item| (!it.is_fixed() && it.start >= t).then(|| it.start - t);
        let shifted = |it: &Item| Item {
            start: it.start - t,
            end: it.end - t,
            ..*it
        };
        let alive = stacked_alive(&across, |it| it.end - t);
        fit_side(items, bits, key, shifted, buckets - t, &alive, base, stop)
    };
    let backwards = || {
        let key = |it: &Item| (!it.is_fixed() && it.end <= t).then(|| t - it.end);
        let reversed = |it: &Item| Item {
            start: t - it.end,
            end: t - it.start,
            ..*it
        };
        let alive = stacked_alive(&across, |it| t - it.start);
        fit_side(items, bits, key, reversed, t, &alive, base, stop)
    };
    let (after, before) = match rayon::join(forwards, backwards) {
        (Ok(Some(after)), Ok(Some(before))) => (after, before),
        (after, before) => {
            // A cut or a side past the work bound: the other side's arrays
            // freed off the stop's path.
            let cut = after.as_ref().err().or(before.as_ref().err()).copied();
            drop_later((after, before), items.len());
            return cut.map_or(Ok(None), Err);
        }
    };
    // The scatter is not polled: it is a pass well within what a stop
    // may wait, and a cut would throw the finished plan away.
    for (order, fitted, side_top) in [after, before] {
        for (&i, &o) in order.iter().zip(&fitted) {
            offsets[i as usize] = o;
        }
        drop_later((order, fitted), items.len());
        top = top.max(side_top);
    }
    Ok(Some(top))
}

/// The stacked buffers `across` as ranges alive from a side's first time
/// to `end` of each (its end on that side).
fn stacked_alive(across: &[(u64, Item)], end: impl Fn(&Item) -> u32) -> Vec<(u64, Item)> {
    let from_start = |it: &Item| Item {
        start: 0,
        end: end(it),
        ..*it
    };
    across
        .iter()
        .map(|(lo, it)| (*lo, from_start(it)))
        .collect()
}

/// One side of [`both_ways`]: the items `key` keys, sorted by it (their
/// start on that side), as `on_side` gives them, fitted beside `alive`
/// over `times` buckets; their indices and offsets and the highest end,
/// `None` past the work bound.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn fit_side(
    items: &[Item],
    bits: u32,
    key: impl Fn(&Item) -> Option<u32>,
    on_side: impl Fn(&Item) -> Item + Sync,
    times: u32,
    alive: &[(u64, Item)],
    base: u64,
    stop: &Stop,
) -> Result<Option<(Vec<u32>, Vec<u64>, u64)>, Cut> {
    let order = radix_order(items, bits, key, stop)?;
    // Gathered in order first: the reads at random overlap there, and
    // best fit's visit reads in sequence.
    let sorted = match collect(order.len(), |p| on_side(&items[order[p] as usize]), stop) {
        Ok(sorted) => sorted,
        Err(cut) => {
            drop_later(order, items.len());
            return Err(cut);
        }
    };
    let item = |p: usize| Some(sorted[p]);
    let fitted = best_fit(times as usize, sorted.len(), item, alive, base, stop);
    let fitted = match fitted {
        Ok(fitted) => fitted,
        Err(cut) => {
            drop_later((order, sorted), items.len());
            return Err(cut);
        }
    };
    let fitted = fitted.map(|f| {
        let top = (sorted.iter().zip(&f.offsets))
            .map(|(it, &o)| o + it.size)
            .max()
            .unwrap_or(base);
        (order, f.offsets, top)
    });
    drop_later(sorted, items.len());
    Ok(fitted)
}

/// About the bucket by which half the free items have started: the first
/// multiple of `2^bits` by which they have (starts counted by their high
/// digit, in parallel).
fn middle(items: &[Item], bits: u32, stop: &Stop) -> Result<u32, Cut> {
    stop.check()?;
    let digits = 1usize << bits;
    let per_digit = items
        .par_chunks(Stop::EVERY)
        .map(|chunk| {
            stop.check()?;
            let mut counts = vec![0u64; digits + 1];
            for it in chunk.iter().filter(|it| !it.is_fixed()) {
                counts[(it.start >> bits) as usize + 1] += 1;
            }
            Ok(counts)
        })
        .try_reduce(
            || vec![0u64; digits + 1],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                Ok(a)
            },
        )?;
    let half = per_digit.iter().sum::<u64>().div_ceil(2);
    let mut seen = 0u64;
    for (k, &c) in per_digit.iter().enumerate() {
        seen += c;
        if seen >= half {
            return Ok((k as u32) << bits);
        }
    }
    Ok(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Every pair alive at once is disjoint, every offset aligned and
        /// at or above the base, the makespan returned is the plan's; the
        /// fixed items keep their offsets. Lifetimes cross the middle or
        /// not, sizes are zero or not.
        #[test]
        fn plans_are_valid(
            spec in proptest::collection::vec(
                (0u32..40, 1u32..25, 0u64..50, 0usize..3, 0u8..10),
                1..80,
            ),
            base in 0u64..100,
            buckets in proptest::sample::select(vec![40u32, 65]),
        ) {
            let items: Vec<Item> = spec
                .iter()
                .map(|&(s, len, size, a, fixed)| match fixed {
                    0 => Item::FIXED,
                    _ => Item {
                        start: s.min(buckets - 1),
                        end: (s + len).min(buckets),
                        size,
                        alignment: [1, 4, 6][a],
                    },
                })
                .collect();
            let bits = (64 - (buckets - 1).leading_zeros()).div_ceil(2);
            let mut offsets = vec![7u64; items.len()];
            let top = both_ways(&items, buckets, bits, base, &mut offsets, &Stop::never())
                .unwrap()
                .unwrap();
            let free: Vec<usize> = (0..items.len()).filter(|&i| !items[i].is_fixed()).collect();
            let highest = free.iter().map(|&i| offsets[i] + items[i].size).max().unwrap_or(base);
            proptest::prop_assert_eq!(top, highest.max(base));
            for (k, &i) in free.iter().enumerate() {
                let (a, o) = (items[i], offsets[i]);
                proptest::prop_assert!(o >= base && o % a.alignment == 0);
                for &j in &free[..k] {
                    let (b, q) = (items[j], offsets[j]);
                    let together = a.start < b.end && b.start < a.end;
                    let shared = o < q + b.size && q < o + a.size;
                    proptest::prop_assert!(
                        !(together && shared && a.size > 0 && b.size > 0),
                        "{i} at {o} and {j} at {q}"
                    );
                }
            }
            for (i, it) in items.iter().enumerate() {
                if it.is_fixed() {
                    proptest::prop_assert_eq!(offsets[i], 7);
                }
            }
        }
    }

    /// The radix order is by key, ties by index, the items without a key
    /// left out.
    #[test]
    fn radix_order_sorts_by_key_then_index() {
        let keys = [5u32, 3, 900, 3, 0, 70_000, 5];
        let items: Vec<Item> = keys
            .iter()
            .map(|&k| Item {
                start: k,
                end: k + 1,
                size: 1,
                alignment: 1,
            })
            .chain([Item::FIXED])
            .collect();
        let key = |it: &Item| (!it.is_fixed()).then_some(it.start);
        let order = radix_order(&items, 9, key, &Stop::never()).unwrap();
        assert_eq!(order, [4, 1, 3, 0, 6, 2, 5]);
        assert!(radix_order(&items, 9, key, &Stop::after_looks(0)).is_err());
    }

    /// Best fit gives up (`None`) when a side passes its work bound, and a
    /// stop cuts.
    #[test]
    fn gives_up_past_the_work_bound_or_at_a_stop() {
        let items: Vec<Item> = (0..6000)
            .map(|i| Item {
                start: (i % 2) * 2,
                end: (i % 2) * 2 + 1,
                size: 8,
                alignment: 1,
            })
            .collect();
        let mut offsets = vec![0u64; items.len()];
        assert_eq!(
            both_ways(&items, 3, 1, 0, &mut offsets, &Stop::never()),
            Ok(None)
        );
        let few = &items[..40];
        let fitted = both_ways(few, 3, 1, 0, &mut offsets, &Stop::never());
        assert_eq!(fitted, Ok(Some(20 * 8)));
        assert!(both_ways(few, 3, 1, 0, &mut offsets, &Stop::after_looks(0)).is_err());
    }
}
