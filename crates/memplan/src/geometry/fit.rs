//! Fitting one buffer among placed ones: alignment and the first-fit /
//! best-fit scans over sorted address ranges, shared by every solver.

/// The greatest common divisor of `a` and `b` (`gcd(0, b) = b`).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The smallest multiple of `alignment` that is `>= x`.
#[inline]
pub fn align_up(x: u64, alignment: u64) -> u64 {
    if alignment.is_power_of_two() {
        // No division on the hot path (alignment 1 included).
        let mask = alignment - 1;
        x.checked_add(mask).map_or(u64::MAX, |y| y & !mask)
    } else {
        x.checked_next_multiple_of(alignment).unwrap_or(u64::MAX)
    }
}

/// The lowest aligned offset where `size` bytes avoid every `(offset, end)`
/// range of `occupied` (sorted by offset). After a conflict the candidate
/// jumps past the conflicting range (the first-fit note's offset jump).
pub fn first_fit(occupied: &[(u64, u64)], size: u64, alignment: u64) -> u64 {
    first_fit_from(occupied, 0, size, alignment)
}

/// [`first_fit`] among offsets at or above `start`.
pub fn first_fit_from(occupied: &[(u64, u64)], start: u64, size: u64, alignment: u64) -> u64 {
    first_fit_in(occupied.iter().copied(), start, size, alignment)
}

/// [`first_fit_from`] over `(offset, end)` ranges given in offset order
/// by an iterator (which it stops at the first gap that holds `size`).
#[inline]
pub fn first_fit_in(
    occupied: impl IntoIterator<Item = (u64, u64)>,
    start: u64,
    size: u64,
    alignment: u64,
) -> u64 {
    let mut candidate = align_up(start, alignment);
    for (offset, end) in occupied {
        if offset >= candidate + size {
            break;
        }
        if end > candidate {
            candidate = align_up(end, alignment);
        }
    }
    candidate
}

/// The aligned offset in the smallest gap between the `occupied` ranges
/// (sorted by offset) that holds `size` bytes, the lowest such gap on ties;
/// above all ranges when no gap holds it.
pub fn best_fit(occupied: &[(u64, u64)], size: u64, alignment: u64) -> u64 {
    let mut best: Option<(u64, u64)> = None; // (gap length, offset)
    let mut reach = 0;
    for &(offset, end) in occupied {
        if offset > reach {
            let candidate = align_up(reach, alignment);
            let gap = offset - reach;
            if candidate + size <= offset && best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, candidate));
            }
        }
        reach = reach.max(end);
    }
    best.map_or_else(|| align_up(reach, alignment), |(_, offset)| offset)
}
