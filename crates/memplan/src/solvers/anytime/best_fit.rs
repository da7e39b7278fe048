//! The cheap plan's first choice: best fit in start order, what a runtime
//! allocator replaying the lifetimes would do. The buffers are visited by
//! start time; each takes the smallest gap between the address ranges
//! alive at its start that holds it, among the first that does and a
//! window above it (the lowest such gap on a tie, the top of the live
//! ranges when none holds it), and frees its range at its end. Linear in the buffers times the ranges alive at once, which a
//! work bound keeps small: past it, the caller colours instead
//! ([`super::fallback`]).
//!
//! Two buffers alive at the same time never share an address: when a
//! buffer starts, every range still alive is in the live set (a range
//! leaves it at its end, and an end at or before a start frees it first),
//! and the range chosen is disjoint from every range in the set.

use crate::dispose::drop_later;
use crate::geometry::fit::align_up;
use crate::stop::{Cut, Stop};

/// One buffer to place: its lifetime as `[start, end)` in some discrete
/// time (compressed times, or time buckets), its size and alignment.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Item {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) size: u64,
    pub(super) alignment: u64,
}

impl Item {
    /// A buffer at a fixed offset, left out of the cheap plans: a start
    /// past every time.
    pub(super) const FIXED: Item = Item {
        start: u32::MAX,
        end: u32::MAX,
        size: 0,
        alignment: 1,
    };

    /// Whether this is [`Item::FIXED`].
    pub(super) fn is_fixed(&self) -> bool {
        self.start == u32::MAX
    }
}

/// Gaps looked at above the first that holds a range, for a smaller
/// one: best fit within a window, since a scan of every gap costs more
/// for plans about as low (figures in `docs/benchmarks.md`).
const WINDOW: usize = 32;

/// No position in a list.
const NONE: u32 = u32::MAX;

/// On average over the positions visited, at most this many live ranges
/// scanned for each (plus a start-up allowance): past it the live set is
/// too large for a scan, and the colouring is linear.
const SCANS_PER_POSITION: u64 = 256;

/// The start-up allowance of the work bound, in live ranges scanned.
const SCANS_ALLOWED: u64 = 1 << 20;

/// Best fit's plan of the positions it was given.
pub(crate) struct Fitted {
    /// The offset of each position (`base` for those left out).
    pub(super) offsets: Vec<u64>,
    /// How many positions were placed.
    pub(super) count: usize,
}

/// Best fit of the `n` positions that `item` gives (`None`: left out),
/// visited in non-decreasing start, ends at most `times`, every range at
/// or above `base`, beside the ranges `alive` (each an offset and the
/// buffer there) that live from the first start to their ends.
/// `alive` is by increasing offset, its ranges disjoint, at or above
/// `base`, each ending at a time in `1..=times`.
/// `Ok(None)` past the work bound, or when an address would pass 2^64.
/// The token is checked every [`Stop::EVERY_COSTLY`] positions.
pub(super) fn best_fit(
    times: usize,
    n: usize,
    item: impl Fn(usize) -> Option<Item>,
    alive: &[(u64, Item)],
    base: u64,
    stop: &Stop,
) -> Result<Option<Fitted>, Cut> {
    let mut offsets = vec![base; n];
    let mut live = Live::new(base);
    // The positions of the live ranges ending at each time, linked
    // through `next`, freed when the visit reaches that time; the ranges
    // of `alive` are positions `n..` there.
    let mut ending = vec![NONE; times + 1];
    let mut next = vec![NONE; n + alive.len()];
    for (k, &(lo, range)) in alive.iter().enumerate() {
        if range.size > 0 {
            live.push(lo, range.size);
            next[n + k] = ending[range.end as usize];
            ending[range.end as usize] = (n + k) as u32;
        }
    }
    let offset = |offsets: &[u64], q: u32| match (q as usize).checked_sub(n) {
        None => offsets[q as usize],
        Some(k) => alive[k].0,
    };
    let (mut count, mut scanned, mut released) = (0usize, 0u64, 0usize);
    for p in 0..n {
        if let Err(cut) = stop.every_costly(p) {
            drop_later((offsets, ending, next), n);
            return Err(cut);
        }
        let Some(Item {
            start,
            end,
            size,
            alignment,
        }) = item(p)
        else {
            continue;
        };
        count += 1;
        while released <= start as usize {
            let mut q = ending[released];
            while q != NONE {
                live.remove(offset(&offsets, q));
                q = next[q as usize];
            }
            released += 1;
        }
        if size == 0 {
            // Occupies no address: aligned, at the base.
            offsets[p] = align_up(base, alignment);
            continue;
        }
        scanned += live.lo.len() as u64;
        let lo = (scanned <= SCANS_ALLOWED + SCANS_PER_POSITION * p as u64)
            .then(|| live.place(size, alignment))
            .flatten();
        let Some(lo) = lo else {
            drop_later((offsets, ending, next), n);
            return Ok(None);
        };
        offsets[p] = lo;
        next[p] = ending[end as usize];
        ending[end as usize] = p as u32;
    }
    drop_later((ending, next), n);
    Ok(Some(Fitted { offsets, count }))
}

/// The address ranges alive at the current start time, by address, each
/// by its lowest address and the free gap below it (down to the range
/// below, or to the base): searching the gaps alone scans one array.
struct Live {
    /// Lowest addresses, increasing: the ranges are disjoint, each of
    /// positive size.
    lo: Vec<u64>,
    /// `gap[k]`: free bytes between range `k` and the one below it (or
    /// the base, for the first).
    gap: Vec<u64>,
    /// The end of the highest range, or the base when there is none.
    top: u64,
}

impl Live {
    /// No range, from `base`.
    fn new(base: u64) -> Self {
        Live {
            lo: Vec::new(),
            gap: Vec::new(),
            top: base,
        }
    }

    /// Adds a range of `size` bytes at `lo`, at or above the highest.
    fn push(&mut self, lo: u64, size: u64) {
        self.lo.push(lo);
        self.gap.push(lo - self.top);
        self.top = lo + size;
    }

    /// Removes the range at `lo`: its bytes and the gap below it join
    /// the gap below the range above (its end is where that gap starts).
    fn remove(&mut self, lo: u64) {
        let k = self.lo.partition_point(|&l| l < lo);
        let below = lo - self.gap[k];
        match self.lo.get(k + 1) {
            Some(&above) => self.gap[k + 1] = above - below,
            None => self.top = below,
        }
        self.lo.remove(k);
        self.gap.remove(k);
    }

    /// Places a range of `size` bytes aligned to `alignment` in the gap
    /// [`Live::chosen`], else above the highest range; its lowest
    /// address, `None` when it would pass 2^64.
    fn place(&mut self, size: u64, alignment: u64) -> Option<u64> {
        match self.chosen(size, alignment) {
            Some(k) => {
                let free = self.lo[k] - self.gap[k];
                let from = align_up(free, alignment);
                self.gap[k] = self.lo[k] - (from + size);
                self.lo.insert(k, from);
                self.gap.insert(k, from - free);
                Some(from)
            }
            None => {
                let from = align_up(self.top, alignment);
                from.checked_add(size)?;
                self.push(from, size);
                Some(from)
            }
        }
    }

    /// The gap a range of `size` bytes aligned to `alignment` takes: the
    /// smallest of those that hold it among the first that does and the
    /// [`WINDOW`] gaps above it (the lowest on a tie); `None` when no gap
    /// holds it.
    fn chosen(&self, size: u64, alignment: u64) -> Option<usize> {
        let holds = |k: usize| {
            let (lo, gap) = (self.lo[k], self.gap[k]);
            gap >= size
                && align_up(lo - gap, alignment)
                    .checked_add(size)
                    .is_some_and(|end| end <= lo)
        };
        let first = if alignment == 1 {
            first_at_least(&self.gap, size)?
        } else {
            (0..self.gap.len()).find(|&k| holds(k))?
        };
        let last = self.gap.len().min(first + 1 + WINDOW);
        let (mut best, mut at) = (self.gap[first], first);
        if alignment == 1 {
            // Branch-free: the smallest that holds it, the first of those.
            for (k, &g) in (first + 1..last).zip(&self.gap[first + 1..last]) {
                let better = g >= size && g < best;
                best = if better { g } else { best };
                at = if better { k } else { at };
            }
        } else {
            for k in first + 1..last {
                if self.gap[k] < best && holds(k) {
                    (best, at) = (self.gap[k], k);
                }
            }
        }
        Some(at)
    }
}

/// The first index of `gaps` whose value is at least `size`: by chunks
/// of [`CHUNK`] compared whole (no early exit within one, so they
/// vectorise), then within the first chunk that has one.
fn first_at_least(gaps: &[u64], size: u64) -> Option<usize> {
    let mut chunks = gaps.chunks_exact(CHUNK);
    let mut from = 0;
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |any, &g| any | (g >= size)) {
            return chunk.iter().position(|&g| g >= size).map(|k| from + k);
        }
        from += CHUNK;
    }
    chunks
        .remainder()
        .iter()
        .position(|&g| g >= size)
        .map(|k| from + k)
}

/// Gaps compared at once by [`first_at_least`].
const CHUNK: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    fn item(start: u32, end: u32, size: u64, alignment: u64) -> Item {
        Item {
            start,
            end,
            size,
            alignment,
        }
    }

    /// Best fit of `items` (sorted by start here), never stopped.
    fn fit(items: &[Item], base: u64) -> Option<Fitted> {
        let times = items.iter().map(|i| i.end as usize).max().unwrap_or(0);
        best_fit(
            times,
            items.len(),
            |p| Some(items[p]),
            &[],
            base,
            &Stop::never(),
        )
        .unwrap()
    }

    proptest::proptest! {
        /// Every pair alive at once is disjoint, every range aligned and
        /// at or above the base, whatever the sizes (zero included).
        #[test]
        fn plans_are_valid(
            spec in proptest::collection::vec((0u32..30, 1u32..10, 0u64..50, 0usize..3), 1..60),
            base in 0u64..100,
        ) {
            let mut items: Vec<Item> = spec
                .iter()
                .map(|&(s, len, size, a)| item(s, s + len, size, [1, 4, 6][a]))
                .collect();
            items.sort_by_key(|i| i.start);
            let fitted = fit(&items, base).unwrap();
            proptest::prop_assert_eq!(fitted.count, items.len());
            for (i, a) in items.iter().enumerate() {
                let o = fitted.offsets[i];
                proptest::prop_assert!(o >= base && o % a.alignment == 0);
                for (j, b) in items.iter().enumerate().take(i) {
                    let q = fitted.offsets[j];
                    let together = a.start < b.end && b.start < a.end;
                    let shared = o < q + b.size && q < o + a.size;
                    proptest::prop_assert!(
                        !(together && shared && a.size > 0 && b.size > 0),
                        "{i} at {o} and {j} at {q}"
                    );
                }
            }
        }
    }

    /// The smallest gap that holds a buffer takes it, not the first.
    #[test]
    fn the_smallest_gap_is_taken() {
        // Ranges 0..10, 10..20, 20..24, 24..30, 30..40 alive over [0, 4);
        // the second and fourth end at 2, leaving gaps of 10 and 6.
        let items = [
            item(0, 4, 10, 1),
            item(0, 2, 10, 1),
            item(0, 4, 4, 1),
            item(0, 2, 6, 1),
            item(0, 4, 10, 1),
            item(2, 4, 5, 1),
        ];
        let fitted = fit(&items, 0).unwrap();
        assert_eq!(fitted.offsets, [0, 10, 20, 24, 30, 24]);
        // Aligned to 16, 3 bytes fit only the gap of 10 (at 16).
        let mut aligned = items;
        aligned[5].size = 3;
        assert_eq!(fit(&aligned, 0).unwrap().offsets[5], 24);
        aligned[5].alignment = 16;
        assert_eq!(fit(&aligned, 0).unwrap().offsets[5], 16);
        // Too large for any gap: above the highest.
        let mut large = items;
        large[5].size = 11;
        assert_eq!(fit(&large, 0).unwrap().offsets[5], 40);
    }

    /// Thousands alive at once pass the work bound (the colouring then
    /// places them); a stop cuts.
    #[test]
    fn too_many_alive_at_once_or_a_stop_give_up() {
        let all: Vec<Item> = (0..3000).map(|_| item(0, 1, 8, 1)).collect();
        assert!(fit(&all, 0).is_none());
        assert!(fit(&all[..100], 0).is_some());
        let cut = best_fit(1, 100, |p| Some(all[p]), &[], 0, &Stop::after_looks(0));
        assert!(cut.is_err());
    }
}
