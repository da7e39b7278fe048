//! The orders in which the greedy places buffers ([`Order`]).

use std::cmp::Reverse;

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::geometry::sweep::LoadProfile;
use crate::problem::{Buffer, Problem};

use super::Order;

/// The free buffers of `problem` in placement order `order`.
pub fn order(problem: &Problem, order: Order) -> Vec<BufferIdx> {
    let profile = if order == Order::Contention {
        LoadProfile::new(problem.buffers())
    } else {
        LoadProfile::default()
    };
    order_with_profile(problem, order, &profile)
}

fn order_with_profile(problem: &Problem, order: Order, profile: &LoadProfile) -> Vec<BufferIdx> {
    let buffers = problem.buffers();
    match order {
        Order::Size => sorted_by_key(buffers, |b, _| (Reverse(b.size), Reverse(b.lifetime()))),
        Order::Area => sorted_by_key(buffers, |b, _| {
            (
                Reverse(u128::from(b.size) * u128::from(b.lifetime())),
                Reverse(b.size),
            )
        }),
        Order::Lifetime => sorted_by_key(buffers, |b, _| (Reverse(b.lifetime()), Reverse(b.size))),
        Order::Start => sorted_by_key(buffers, |b, _| (b.start, Reverse(b.size))),
        Order::Contention => {
            let contention = profile.contention(buffers);
            sorted_by_key(buffers, |b, i| {
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
            })
        }
    }
}

/// The free (not fixed) buffers sorted by `key(buffer, index)`, ties by
/// index. Keys are computed once, then sorted in parallel.
fn sorted_by_key<K: Ord + Send>(
    buffers: &[Buffer],
    key: impl Fn(&Buffer, usize) -> K + Sync,
) -> Vec<BufferIdx> {
    // Every buffer, fixed ones last: an exact-size collect (a filtered
    // one gathers pieces and copies them, twice the memory).
    let mut keyed: Vec<(bool, K, BufferIdx)> = buffers
        .par_iter()
        .enumerate()
        .map(|(i, b)| (b.fixed_offset.is_some(), key(b, i), BufferIdx::new(i)))
        .collect();
    keyed.par_sort_unstable();
    let free = keyed.partition_point(|k| !k.0);
    keyed.truncate(free);
    keyed.into_iter().map(|(_, _, b)| b).collect()
}
