//! The orders in which the greedy places buffers ([`Order`]).

use crate::stop::{Cut, Stop};
use std::cmp::Reverse;

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::geometry::sort::{collect, radix_sort, sort};
use crate::geometry::sweep::LoadProfile;
use crate::problem::{Buffer, Problem};

use super::Order;

/// The free buffers of `problem` in placement order `order`; `Err` once
/// `stop` cuts, checked inside the sort ([`sort`]).
pub fn order(problem: &Problem, order: Order, stop: &Stop) -> Result<Vec<BufferIdx>, Cut> {
    stop.check()?;
    let profile = if order == Order::Contention {
        LoadProfile::new(problem.buffers(), stop)?
    } else {
        LoadProfile::default()
    };
    order_with_profile(problem, order, &profile, stop)
}

fn order_with_profile(
    problem: &Problem,
    order: Order,
    profile: &LoadProfile,
    stop: &Stop,
) -> Result<Vec<BufferIdx>, Cut> {
    let buffers = problem.buffers();
    match order {
        // Sizes and lifetimes below 2^32 (the usual case): one word per
        // key, half the memory of the pair.
        // (Each pass over millions of buffers takes tens of milliseconds:
        // a stop is polled between them.)
        Order::Size
            if fits_u32(buffers, |b| b.size)
                && !stop.is_cut()
                && fits_u32(buffers, Buffer::lifetime) =>
        {
            sorted_by_word(
                buffers,
                |b| {
                    let reversed = |x: u64| u64::from(u32::MAX) - x;
                    reversed(b.size) << 32 | reversed(b.lifetime())
                },
                stop,
            )
        }
        Order::Size => sorted_by_key(
            buffers,
            |b, _| (Reverse(b.size), Reverse(b.lifetime())),
            stop,
        ),
        Order::Area => sorted_by_key(
            buffers,
            |b, _| {
                (
                    Reverse(u128::from(b.size) * u128::from(b.lifetime())),
                    Reverse(b.size),
                )
            },
            stop,
        ),
        Order::Lifetime => sorted_by_key(
            buffers,
            |b, _| (Reverse(b.lifetime()), Reverse(b.size)),
            stop,
        ),
        Order::Start => sorted_by_key(buffers, |b, _| (b.start, Reverse(b.size)), stop),
        Order::Contention => {
            let contention = profile.contention(buffers, stop)?;
            sorted_by_key(
                buffers,
                |b, i| {
                    let lifetime = u128::from(b.lifetime());
                    (
                        Reverse(contention[i]),
                        Reverse(b.alignment),
                        Reverse(
                            u128::from(b.size)
                                .saturating_mul(lifetime)
                                .saturating_mul(lifetime),
                        ),
                        Reverse(b.lifetime()),
                    )
                },
                stop,
            )
        }
    }
}

/// The free (not fixed) buffers sorted by `key(buffer, index)`, ties by
/// index. Keys are computed once, then sorted in parallel; `Err` once
/// `stop` cuts.
fn sorted_by_key<K: Ord + Copy + Send + Sync + 'static>(
    buffers: &[Buffer],
    key: impl Fn(&Buffer, usize) -> K + Sync + Send,
    stop: &Stop,
) -> Result<Vec<BufferIdx>, Cut> {
    // Every buffer, fixed ones last: an exact-size collect (a filtered
    // one gathers pieces and copies them, twice the memory).
    let mut keyed: Vec<(bool, K, BufferIdx)> = collect(
        buffers.len(),
        |i| {
            let b = &buffers[i];
            (b.fixed_offset.is_some(), key(b, i), BufferIdx::new(i))
        },
        stop,
    )?;
    if let Err(cut) = sort(&mut keyed, stop) {
        drop_later(keyed, buffers.len());
        return Err(cut);
    }
    let free = keyed.partition_point(|k| !k.0);
    indices(keyed, free, |k| k.2, stop)
}

/// The buffers of the first `free` entries of the sorted `keyed`, in
/// order, gathered in parallel with the token checked ([`collect`]): at
/// millions of buffers a plain collect keeps a stop waiting. `keyed` is
/// freed on the disposal thread.
fn indices<T: Sync + Send + 'static>(
    keyed: Vec<T>,
    free: usize,
    index: impl Fn(&T) -> BufferIdx + Sync + Send,
    stop: &Stop,
) -> Result<Vec<BufferIdx>, Cut> {
    let n = keyed.len();
    let indices = collect(free, |i| index(&keyed[i]), stop);
    drop_later(keyed, n);
    indices
}

/// Whether `value` is below 2^32 for every buffer.
fn fits_u32(buffers: &[Buffer], value: impl Fn(&Buffer) -> u64 + Sync) -> bool {
    buffers.par_iter().all(|b| value(b) <= u64::from(u32::MAX))
}

/// [`sorted_by_key`] with a one-word key below `u64::MAX` (16 bytes per
/// buffer while sorting rather than 24 or more): fixed buffers take
/// `u64::MAX`, which sorts them last.
fn sorted_by_word(
    buffers: &[Buffer],
    key: impl Fn(&Buffer) -> u64 + Sync + Send,
    stop: &Stop,
) -> Result<Vec<BufferIdx>, Cut> {
    let mut keyed: Vec<(u64, BufferIdx)> = collect(
        buffers.len(),
        |i| {
            let word = match buffers[i].fixed_offset {
                Some(_) => u64::MAX,
                None => key(&buffers[i]),
            };
            (word, BufferIdx::new(i))
        },
        stop,
    )?;
    // By index at first: the stable sort by word ties by index.
    if let Err(cut) = radix_sort(&mut keyed, stop) {
        drop_later(keyed, buffers.len());
        return Err(cut);
    }
    let free = keyed.partition_point(|k| k.0 != u64::MAX);
    indices(keyed, free, |k| k.1, stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::greedy::tests::mixed;

    /// The one-word size order is the pair order, fixed buffers left out,
    /// and sizes past 2^32 take the pair path with the same result; also
    /// past one run of the sorts (the radix sort's passes).
    #[test]
    fn word_size_order_equals_the_pair_order() {
        for n in [3000, crate::geometry::sort::RUN + 3000] {
            word_size_order_equals_the_pair_order_on(n);
        }
    }

    fn word_size_order_equals_the_pair_order_on(n: usize) {
        let p = mixed(crate::generate::Kind::Trace, n);
        let by_pair = |p: &Problem| {
            let mut free: Vec<usize> = (0..p.len())
                .filter(|&i| p.buffers()[i].fixed_offset.is_none())
                .collect();
            let b = p.buffers();
            free.sort_by_key(|&i| (Reverse(b[i].size), Reverse(b[i].lifetime()), i));
            free.into_iter().map(BufferIdx::new).collect::<Vec<_>>()
        };
        let fixed = p
            .buffers()
            .iter()
            .filter(|b| b.fixed_offset.is_some())
            .count();
        assert!(fixed > 0);
        assert!(fits_u32(p.buffers(), |b| b.size));
        assert_eq!(order(&p, Order::Size, &Stop::never()).unwrap(), by_pair(&p));
        let mut huge = p.buffers().to_vec();
        huge[1].size = 1 << 33;
        let huge = Problem::new(huge, None).unwrap();
        assert!(!fits_u32(huge.buffers(), |b| b.size));
        assert_eq!(
            order(&huge, Order::Size, &Stop::never()).unwrap(),
            by_pair(&huge)
        );
    }
}
