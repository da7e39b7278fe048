//! The orders in which the greedy places buffers ([`Order`]).

use std::cmp::Reverse;

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::geometry::sort::sort_until;
use crate::geometry::sweep::LoadProfile;
use crate::problem::{Buffer, Problem};

use super::Order;

/// The free buffers of `problem` in placement order `order`.
pub fn order(problem: &Problem, order: Order) -> Vec<BufferIdx> {
    order_until(problem, order, &|| false).unwrap_or_default()
}

/// [`order`] that gives up (`None`) once `stop()` holds, polled inside the
/// sort ([`sort_until`]).
pub fn order_until(
    problem: &Problem,
    order: Order,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<BufferIdx>> {
    if stop() {
        return None;
    }
    let profile = if order == Order::Contention {
        LoadProfile::new_until(problem.buffers(), stop)?
    } else {
        LoadProfile::default()
    };
    order_with_profile(problem, order, &profile, stop)
}

fn order_with_profile(
    problem: &Problem,
    order: Order,
    profile: &LoadProfile,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<BufferIdx>> {
    let buffers = problem.buffers();
    match order {
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
            let contention = profile.contention_until(buffers, stop)?;
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
/// index. Keys are computed once, then sorted in parallel; `None` once
/// `stop()` holds.
fn sorted_by_key<K: Ord + Copy + Send + Sync>(
    buffers: &[Buffer],
    key: impl Fn(&Buffer, usize) -> K + Sync,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<BufferIdx>> {
    // Every buffer, fixed ones last: an exact-size collect (a filtered
    // one gathers pieces and copies them, twice the memory).
    let mut keyed: Vec<(bool, K, BufferIdx)> = buffers
        .par_iter()
        .enumerate()
        .map(|(i, b)| (b.fixed_offset.is_some(), key(b, i), BufferIdx::new(i)))
        .collect();
    if !sort_until(&mut keyed, stop) {
        return None;
    }
    let free = keyed.partition_point(|k| !k.0);
    keyed.truncate(free);
    Some(keyed.into_iter().map(|(_, _, b)| b).collect())
}
