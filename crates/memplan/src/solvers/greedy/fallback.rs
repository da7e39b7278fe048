//! What a greedy placement cut short by the clock does with the buffers it
//! has not placed: it places them above every placed buffer, in linear
//! time, so that a solver out of time still returns a valid plan (and says
//! how many buffers this took, see [`complete`]).
//!
//! The method is interval colouring by size class: the remaining buffers
//! are visited by start time; each takes a free *slot* of its class (sizes
//! rounded up to a power of two, and the alignment), freed again when the
//! buffer ends. The classes are then stacked above the placed buffers, each
//! as a column of its slots. Within a class two buffers alive at the same
//! time never share a slot, classes never share addresses, and the placed
//! buffers lie below, so the plan is valid; each class takes at most about
//! twice its own max load. It is not meant to be good, only fast and never
//! wrong: the first-fit placement it completes is the real plan.

use crate::geometry::fit::align_up;
use crate::geometry::occupancy::Occupancy;

/// No buffer in a list.
const NONE: u32 = u32::MAX;

/// The slots of one size class.
struct Class {
    /// Buffers of this class have this alignment...
    alignment: u64,
    /// ...and a size of at most this many bytes: the slot's height, a
    /// multiple of the alignment.
    stride: u64,
    /// Slots used so far.
    slots: u32,
    /// Slots free at the current time of the sweep.
    free: Vec<u32>,
}

/// Places every buffer that `placed` says is not placed above the highest
/// end of the placed ones. Everything is by position of `occupancy` (start
/// order): `ranges` holds `(offset, end)` of the placed buffers and
/// `(_, _ + size)` of the others, and receives theirs; `alignment(p)` is
/// the alignment at position `p`. Returns how many buffers it placed.
/// Linear in the number of buffers and distinct start times (no sort), and
/// sequential in memory.
pub fn complete(
    occupancy: &Occupancy,
    ranges: &mut [(u64, u64)],
    placed: &[bool],
    alignment: &dyn Fn(u32) -> u64,
) -> usize {
    let n = ranges.len();
    let base = ranges
        .iter()
        .zip(placed)
        .filter(|(_, &p)| p)
        .map(|(r, _)| r.1)
        .max()
        .unwrap_or(0);
    // Positions ending at each compressed time (linked through `next`), to
    // free their slots when the sweep reaches it.
    let mut ending = vec![NONE; occupancy.times() + 1];
    let mut next = vec![NONE; n];
    let mut classes: Vec<Class> = Vec::new();
    // Class and slot of each remaining position (the slot in `slot_of`).
    let mut class_of = vec![0u16; n];
    let mut slot_of = vec![0u32; n];
    let mut last_class = usize::MAX;
    // The class of unaligned buffers by log2 of their (power-of-two)
    // stride; `u16::MAX`: none yet.
    let mut by_log = [u16::MAX; 64];
    let (mut released, mut count) = (0usize, 0usize);
    for p in 0..n {
        if placed[p] {
            continue;
        }
        let (start, end) = occupancy.compressed(p as u32);
        while released <= start as usize {
            let mut x = ending[released];
            while x != NONE {
                let i = x as usize;
                classes[usize::from(class_of[i])].free.push(slot_of[i]);
                x = next[i];
            }
            released += 1;
        }
        let size = ranges[p].1 - ranges[p].0;
        let align = alignment(p as u32);
        let stride = align_up(size.checked_next_power_of_two().unwrap_or(size), align);
        let same = |k: &Class| k.stride == stride && k.alignment == align;
        // Unaligned power-of-two strides (most buffers) by table, the
        // others by search: the same class either way.
        let log =
            (align == 1 && stride.is_power_of_two()).then(|| stride.trailing_zeros() as usize);
        let known = log.map_or(u16::MAX, |l| by_log[l]);
        let c = if classes.get(last_class).is_some_and(same) {
            last_class
        } else if known != u16::MAX {
            usize::from(known)
        } else {
            match classes.iter().position(same) {
                Some(c) => c,
                None if classes.len() < usize::from(u16::MAX) => {
                    classes.push(Class {
                        alignment: align,
                        stride,
                        slots: 0,
                        free: Vec::new(),
                    });
                    classes.len() - 1
                }
                // Absurdly many classes: stack everything instead.
                None => return stack(ranges, placed, alignment, base),
            }
        };
        last_class = c;
        if let Some(l) = log {
            by_log[l] = c as u16;
        }
        let class = &mut classes[c];
        slot_of[p] = class.free.pop().unwrap_or_else(|| {
            class.slots += 1;
            class.slots - 1
        });
        class_of[p] = c as u16;
        next[p] = ending[end as usize];
        ending[end as usize] = p as u32;
        count += 1;
    }
    // Columns of slots, one class above the other.
    let mut bases = Vec::with_capacity(classes.len());
    let mut top = Some(base);
    for class in &classes {
        let from = top.map(|t| align_up(t, class.alignment));
        bases.push(from.unwrap_or(0));
        top = from.and_then(|f| {
            class
                .stride
                .checked_mul(u64::from(class.slots))
                .and_then(|h| f.checked_add(h))
                .filter(|&t| t != u64::MAX)
        });
    }
    if top.is_none() {
        // The columns would pass 2^64 (sizes near the limit the problem
        // allows): one buffer above the other always fits.
        return stack(ranges, placed, alignment, base);
    }
    for (p, range) in ranges.iter_mut().enumerate() {
        if !placed[p] {
            let c = usize::from(class_of[p]);
            let offset = bases[c] + u64::from(slot_of[p]) * classes[c].stride;
            *range = (offset, offset + (range.1 - range.0));
        }
    }
    count
}

/// Every unplaced buffer above the previous one, from `base`: fits in 64
/// bits by the problem's own check on the sum of sizes.
fn stack(
    ranges: &mut [(u64, u64)],
    placed: &[bool],
    alignment: &dyn Fn(u32) -> u64,
    base: u64,
) -> usize {
    let mut top = base;
    let mut count = 0;
    for (p, range) in ranges.iter_mut().enumerate() {
        if !placed[p] {
            let at = align_up(top, alignment(p as u32));
            let end = at.saturating_add(range.1 - range.0);
            *range = (at, end);
            top = end;
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::geometry::occupancy::Span;
    use crate::plan::{validate, Plan};
    use crate::problem::{Buffer, Problem};

    /// Completes `offsets` (by buffer) where `placed` (by buffer) is false.
    fn complete_plan(p: &Problem, placed: &[bool], offsets: &[u64]) -> (Plan, usize) {
        let spans: Vec<Span> = p.buffers().iter().map(Span::from).collect();
        let occupancy = Occupancy::new(&spans, usize::MAX);
        let at = |q: u32| occupancy.buffer_at(q) as usize;
        let mut ranges: Vec<(u64, u64)> = (0..p.len() as u32)
            .map(|q| (offsets[at(q)], offsets[at(q)] + p.buffers()[at(q)].size))
            .collect();
        let by_position: Vec<bool> = (0..p.len() as u32).map(|q| placed[at(q)]).collect();
        let count = complete(&occupancy, &mut ranges, &by_position, &|q| {
            p.buffers()[at(q)].alignment
        });
        let offsets = (0..p.len() as u32)
            .map(|b| ranges[occupancy.position(b) as usize].0)
            .collect();
        (Plan::from_offsets(offsets), count)
    }

    #[test]
    fn completes_any_valid_partial_plan() {
        for kind in [Kind::Random, Kind::Layered, Kind::Trace] {
            let p = generate(kind, 600, 4).problem;
            let full = crate::solvers::greedy::place(
                &p,
                &crate::solvers::greedy::order(&p, crate::solvers::greedy::Order::Size),
                crate::solvers::greedy::Fit::FirstFit,
                None,
            )
            .unwrap();
            for keep in [0, 1, 3, 10] {
                // Every `keep`-th buffer keeps its first-fit offset.
                let placed: Vec<bool> = (0..p.len()).map(|i| keep > 0 && i % keep == 0).collect();
                let (plan, count) = complete_plan(&p, &placed, full.offsets());
                assert_eq!(validate(&p, &plan), Ok(()), "{kind:?} keep {keep}");
                assert_eq!(count, placed.iter().filter(|&&x| !x).count());
                for (i, &x) in placed.iter().enumerate() {
                    if x {
                        assert_eq!(plan.offsets()[i], full.offsets()[i]);
                    }
                }
            }
        }
    }

    #[test]
    fn honours_alignment_and_fixed_buffers() {
        let p = Problem::new(
            vec![
                Buffer::new("f", 0, 10, 100).fixed(1000),
                Buffer::new("a", 0, 5, 3).aligned(24),
                Buffer::new("b", 2, 8, 3).aligned(24),
                Buffer::new("c", 5, 9, 7),
                Buffer::new("d", 1, 3, u64::MAX / 4),
            ],
            None,
        )
        .unwrap();
        let placed = [true, false, false, false, false];
        let (plan, count) = complete_plan(&p, &placed, &[1000, 0, 0, 0, 0]);
        assert_eq!(count, 4);
        assert_eq!(validate(&p, &plan), Ok(()));
        assert!(plan.offsets()[1..].iter().all(|&o| o >= 1100));
    }
}
