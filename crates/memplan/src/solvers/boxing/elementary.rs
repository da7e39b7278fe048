//! Elementary cases (idealloc §2.1, §5.6) and interval graph coloring,
//! which both they and the boxing of unresolved jobs use.

use crate::stop::Stop;
use std::cmp::Reverse;

use rayon::prelude::*;

use crate::geometry::sort::sort;
use crate::plan::Plan;
use crate::problem::Problem;

/// Elementary cases (idealloc §2.1, §5.6): when no two buffers overlap in
/// time, every offset is 0; when all buffers have one size, interval graph
/// coloring is optimal. `None` when neither applies (or fixed buffers or
/// alignments get in the way), or once `stop` cuts (checked in the sort of
/// the lifetimes).
pub fn elementary_case(problem: &Problem, stop: &Stop) -> Option<Plan> {
    let buffers = problem.buffers();
    let first = buffers.first()?;
    let (fixed, sum, lo, hi) = buffers
        .par_iter()
        .map(|b| (b.fixed_offset.is_some(), b.end - b.start, b.start, b.end))
        .reduce(
            || (false, 0, u64::MAX, 0),
            |a, b| {
                (
                    a.0 || b.0,
                    a.1.saturating_add(b.1),
                    a.2.min(b.2),
                    a.3.max(b.3),
                )
            },
        );
    if fixed {
        return None;
    }
    // Lifetimes longer in all than the timeline overlap somewhere: no
    // sort then (it takes tenths of a second at millions of buffers).
    let certain = sum > hi - lo;
    if !certain {
        let spans: Vec<(u64, u64)> = buffers.iter().map(|b| (b.start, b.end)).collect();
        if !overlapping(spans, stop) {
            return Some(Plan::from_offsets(vec![0; buffers.len()]));
        }
    }
    if stop.is_cut() {
        return None;
    }
    let size = first.size;
    if buffers
        .iter()
        .all(|b| b.size == size && size % b.alignment == 0)
    {
        let rows = interval_coloring(buffers.iter().map(|b| (b.start, b.end)));
        let offsets = rows.iter().map(|&r| u64::from(r) * size).collect();
        return Some(Plan::from_offsets(offsets));
    }
    None
}

/// Interval graph coloring (optimal for unit heights, idealloc §2.1): the
/// row of each `(start, end)` lifetime, in input order, so that lifetimes in
/// one row never overlap; uses as many rows as the most alive at once.
/// Lifetimes are visited by start (ties by input order) and take the lowest
/// free row.
pub(super) fn interval_coloring(lifetimes: impl Iterator<Item = (u64, u64)>) -> Vec<u32> {
    let spans: Vec<(u64, u64, u32)> = lifetimes
        .enumerate()
        .map(|(i, (s, e))| (s, e, i as u32))
        .collect();
    let mut order: Vec<u32> = (0..spans.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (spans[i as usize].0, spans[i as usize].2));
    let mut busy: std::collections::BinaryHeap<Reverse<(u64, u32)>> = Default::default();
    let mut free: std::collections::BinaryHeap<Reverse<u32>> = Default::default();
    let mut rows = vec![0u32; spans.len()];
    let mut next_row = 0u32;
    for i in order {
        let (start, end, _) = spans[i as usize];
        while let Some(&Reverse((busy_end, row))) = busy.peek() {
            if busy_end > start {
                break;
            }
            busy.pop();
            free.push(Reverse(row));
        }
        let row = free.pop().map_or_else(
            || {
                next_row += 1;
                next_row - 1
            },
            |Reverse(r)| r,
        );
        rows[i as usize] = row;
        busy.push(Reverse((end, row)));
    }
    rows
}

/// Whether two of the `(start, end)` lifetimes intersect; true (as far as
/// anyone knows) once `stop` cuts.
pub(super) fn overlapping(mut spans: Vec<(u64, u64)>, stop: &Stop) -> bool {
    if sort(&mut spans, stop).is_err() {
        return true;
    }
    spans.windows(2).any(|w| w[1].0 < w[0].1)
}
