//! Hints: a preferred offset per buffer (MiniMalloc's `hint` column). A
//! compiler that replans after a small change gives the old offsets as
//! hints and wants most buffers to keep them; a warm start from a known
//! plan helps a search too.
//!
//! Hints live in a side table of the [`Problem`], present only when some
//! buffer has one, so that problems without hints take no memory for them
//! (8 bytes per buffer when they do). A hint is a preference, never a
//! constraint: a plan is valid whatever it does with them. The solvers try
//! a buffer's hint before their own choice (greedy: before first fit or
//! best fit, when the hint is free; search and the portfolio: through the
//! greedy plan they start from, as the search's own candidate order is
//! what its pruning relies on), unless [`SolveOptions::ignore_hints`](crate::SolveOptions::ignore_hints)
//! is set. [`crate::stable`] minimises the number of hints not kept.
//!
//! Invariants (checked by [`Problem::with_hints`]): a hint is a multiple of
//! the buffer's alignment, equals its fixed offset if it has one, and the
//! hint plus the size, plus the problem's other address sums, cannot
//! overflow 64 bits.

use crate::buffer::BufferIdx;
use crate::geometry::occupancy::Occupancy;
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};

pub use crate::problem::Hints;

/// How many buffers of `problem` with a hint have it as their offset in
/// `plan` (0 without hints).
pub fn kept(problem: &Problem, plan: &Plan) -> usize {
    let Some(hints) = problem.hints() else {
        return 0;
    };
    plan.offsets()
        .iter()
        .enumerate()
        .filter(|&(i, &o)| hints.at(i) == Some(o))
        .count()
}

/// Number of buffers of `problem` with a hint.
pub fn count(problem: &Problem) -> usize {
    problem.hints().map_or(0, Hints::count)
}

/// Which hints can be kept together, and a bound on how many.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Buffers whose hints are kept: no two of them (nor one of them and a
    /// fixed buffer) overlap in time and address at their hints, and every
    /// one ends within the makespan given.
    pub keep: Vec<BufferIdx>,
    /// An upper bound on the number of hints any plan within that makespan
    /// keeps: the hints minus those that cannot be kept alone (past the
    /// makespan, or overlapping a fixed buffer) minus a matching among the
    /// pairwise conflicts of the others (of each matched pair, at least one
    /// buffer moves, and the pairs are disjoint).
    pub bound: usize,
}

/// Chooses hints to keep within `makespan`: first the buffers of `first`
/// (which must be compatible with each other, e.g. the hints a valid plan
/// already keeps), then every other hinted buffer in start order whose
/// hint is compatible with those chosen before it (a maximal compatible
/// set: every hint not chosen conflicts with a chosen one or the fixed
/// buffers, or ends past `makespan`). Also returns the bound of
/// [`Selection::bound`], computed along the way from the conflicts met.
///
/// Cost: one [`Occupancy`] query per hinted buffer, O(n log n + P) for P
/// pairs of hinted buffers alive together.
pub fn select(problem: &Problem, makespan: u64, first: &[BufferIdx]) -> Selection {
    let buffers = problem.buffers();
    let Some(hints) = problem.hints() else {
        return Selection {
            keep: Vec::new(),
            bound: 0,
        };
    };
    let occ = crate::stop::uncut(|never| Occupancy::of_buffers(buffers, usize::MAX, never));
    let mut stamps = occ.stamps();
    let fits = |b: usize| hints.at(b).is_some_and(|h| h + buffers[b].size <= makespan);
    // Rank 0: fixed buffers and `first`, placed before everything.
    let mut chosen = vec![false; buffers.len()];
    for (b, buf) in buffers.iter().enumerate() {
        if buf.fixed_offset.is_some() {
            stamps[occ.position(b as u32) as usize].1 = 0;
        }
    }
    for &b in first {
        if fits(b.index()) && !chosen[b.index()] {
            chosen[b.index()] = true;
            stamps[occ.position(b.0) as usize].1 = 0;
        }
    }
    // The others by start time (position order), each checked against
    // every chosen buffer: those of rank 0 and those chosen earlier in
    // this pass (rank 1, set when chosen).
    let mut found = Vec::new();
    let mut forced = 0usize; // hints that cannot be kept alone
    let mut matched = vec![false; buffers.len()];
    let mut matching = 0usize;
    for p in 0..occ.len() as u32 {
        let b = occ.buffer_at(p) as usize;
        if chosen[b] || buffers[b].fixed_offset.is_some() || hints.at(b).is_none() {
            continue;
        }
        if !fits(b) {
            forced += 1;
            continue;
        }
        let Some(at) = range(buffers, hints, b) else {
            // Size 0: conflicts with nothing.
            chosen[b] = true;
            continue;
        };
        found.clear();
        occ.occupied_during(p, 2, &stamps, &mut found);
        let chosen_alive = found.iter().map(|&q| occ.buffer_at(q) as usize);
        match clash(buffers, hints, at, chosen_alive, &matched) {
            Clash::Fixed => forced += 1,
            Clash::Hint(c) => {
                // Chosen before and unmatched: the pair joins the matching.
                if !matched[c] && !matched[b] {
                    matched[c] = true;
                    matched[b] = true;
                    matching += 1;
                }
            }
            Clash::None => {
                chosen[b] = true;
                stamps[p as usize].1 = 1;
            }
        }
    }
    let keep: Vec<BufferIdx> = (0..buffers.len())
        .filter(|&b| chosen[b])
        .map(BufferIdx::new)
        .collect();
    let total = hints.count() - hinted_fixed(buffers, hints);
    let bound = total.saturating_sub(forced + matching);
    Selection {
        keep,
        bound: bound + hinted_fixed(buffers, hints),
    }
}

/// The range buffer `b` occupies if it keeps its hint (a fixed buffer:
/// its offset); `None` without a hint and for size 0.
fn range(buffers: &[Buffer], hints: &Hints, b: usize) -> Option<(u64, u64)> {
    let buf = &buffers[b];
    let at = buf.fixed_offset.or_else(|| hints.at(b))?;
    (buf.size > 0).then_some((at, at + buf.size))
}

/// What a hint overlaps among the chosen buffers alive with it.
enum Clash {
    /// Nothing: the hint can be kept.
    None,
    /// A fixed buffer: the hint cannot be kept alone.
    Fixed,
    /// A chosen hint (an unmatched one if any).
    Hint(usize),
}

/// The clash of the hint occupying `(lo, hi)` with the buffers `alive`
/// (chosen or fixed), preferring a fixed buffer, then one not `matched`.
fn clash(
    buffers: &[Buffer],
    hints: &Hints,
    (lo, hi): (u64, u64),
    alive: impl Iterator<Item = usize>,
    matched: &[bool],
) -> Clash {
    let mut conflict = None;
    for c in alive {
        if let Some((clo, chi)) = range(buffers, hints, c) {
            if clo < hi && lo < chi {
                if buffers[c].fixed_offset.is_some() {
                    return Clash::Fixed;
                } else if conflict.is_none() || !matched[c] {
                    conflict = Some(c);
                }
            }
        }
    }
    conflict.map_or(Clash::None, Clash::Hint)
}

/// Number of fixed buffers with a hint (always kept: a hint on a fixed
/// buffer equals its offset).
fn hinted_fixed(buffers: &[Buffer], hints: &Hints) -> usize {
    buffers
        .iter()
        .enumerate()
        .filter(|(i, b)| b.fixed_offset.is_some() && hints.at(*i).is_some())
        .count()
}
