//! First-fit among unsorted address ranges, mostly without sorting them:
//! the ranges go to address buckets no wider than the buffer being placed,
//! each keeping only its lowest offset and highest end, and the buckets are
//! scanned in address order. Linear in the ranges for the ~100 conflicts
//! of a typical greedy query, where a sort is O(k log k) with a
//! mispredicted branch per comparison.
//!
//! Why that is exact: the first-fit scan over ranges sorted by offset
//! ([`crate::geometry::fit::first_fit`]) moves its candidate to the end of
//! each range it meets and stops at the first range that starts at least
//! `size` bytes above the candidate. Within a bucket `[B, B + W)` with
//! `W <= size`, that stop can only happen at the bucket's lowest offset:
//! any other range of the bucket starts below `B + W <= B + size`, while
//! the candidate is already past the end of the bucket's first range, so
//! above `B`. And after the bucket the candidate is the highest end seen,
//! whatever the order within the bucket.
//!
//! A buffer small against the spread of its conflicts would need too many
//! buckets: its ranges are sorted instead.

use crate::geometry::fit::first_fit_in;

/// Buckets at most: 4096 are 32 KiB of bounds and 64 words of marks.
pub const MAX_BUCKETS: usize = 1 << BUCKET_BITS;

/// `log2(MAX_BUCKETS)`.
const BUCKET_BITS: u32 = 12;

/// Working memory of [`BucketFit::first_fit`], reused across queries;
/// the buckets allocated at the first query that uses them (a default one
/// allocates nothing).
#[derive(Clone, Debug, Default)]
pub struct BucketFit {
    buckets: Option<Box<Buckets>>,
    /// The ranges sorted, when there are too many buckets.
    sorted: Vec<u64>,
}

/// The buckets of one query.
#[derive(Clone, Debug)]
struct Buckets {
    /// Per bucket: the lowest offset of its ranges, relative to the lowest
    /// offset of the query. Meaningful only where `seen` has the bucket's
    /// bit.
    low: [u32; MAX_BUCKETS],
    /// Per bucket: the highest end of its ranges; as `low`.
    high: [u32; MAX_BUCKETS],
    /// A bit per bucket: whether a range fell in it. All clear between
    /// queries.
    seen: [u64; MAX_BUCKETS / 64],
}

impl BucketFit {
    /// The lowest offset, a multiple of `alignment`, where `size` bytes
    /// avoid every range of `packed` (each `offset << 32 | end`, in any
    /// order, every end at most `top`): the answer of the first-fit scan
    /// over the ranges sorted. Buffers of 2^32 bytes or more are placed by
    /// that scan itself.
    pub fn first_fit(&mut self, packed: &[u64], size: u64, alignment: u64, top: u64) -> u64 {
        if packed.is_empty() || size == 0 {
            // The scan stops at once (an offset is never below 0 + 0).
            return 0;
        }
        debug_assert!(packed.iter().all(|&r| r >> 32 <= r & u64::from(u32::MAX)));
        debug_assert!(packed.iter().all(|&r| r & u64::from(u32::MAX) <= top));
        // At most about 16 buckets a range (few words of marks to scan
        // and clear), from 64 to MAX_BUCKETS.
        let most = (packed.len() * 16)
            .next_power_of_two()
            .clamp(64, MAX_BUCKETS) as u64;
        // Buckets of 2^shift <= size bytes, from 0 to `top` (no pass to
        // find the offsets' spread) or else over that spread.
        let shift = 63 - size.leading_zeros();
        let (lowest, spread) = if top >> shift < most {
            (0, top)
        } else {
            let (lowest, highest) = packed.iter().fold((u64::MAX, 0), |(lo, hi), &r| {
                (lo.min(r >> 32), hi.max(r >> 32))
            });
            (lowest, highest - lowest)
        };
        // Buckets of 32-bit offsets need `shift < 32`; beyond, or with a
        // `top` past 32 bits (not a valid input), the sorted scan.
        if shift >= 32 || top > u64::from(u32::MAX) || spread >> shift >= most {
            self.sorted.clear();
            self.sorted.extend_from_slice(packed);
            self.sorted.sort_unstable();
            let ranges = self
                .sorted
                .iter()
                .map(|&r| (r >> 32, r & u64::from(u32::MAX)));
            return first_fit_in(ranges, 0, size, alignment);
        }
        let buckets = self.buckets.get_or_insert_with(|| {
            Box::new(Buckets {
                low: [0; MAX_BUCKETS],
                high: [0; MAX_BUCKETS],
                seen: [0; MAX_BUCKETS / 64],
            })
        });
        buckets.fill(packed, lowest as u32, shift);
        let words = ((spread >> shift) as usize + 1).div_ceil(64);
        buckets.scan(size, alignment, lowest as u32, words)
    }
}

impl Buckets {
    /// Puts the ranges of `packed` in buckets of `2^shift` bytes from
    /// `lowest` (which the ranges' offsets are at or above, by fewer than
    /// [`MAX_BUCKETS`] buckets).
    #[inline]
    fn fill(&mut self, packed: &[u64], lowest: u32, shift: u32) {
        // Indexed below the arrays' length by a mask: no bounds checks.
        let (low, high, seen) = (&mut self.low, &mut self.high, &mut self.seen);
        for &range in packed {
            let (offset, end) = ((range >> 32) as u32 - lowest, range as u32);
            let b = (offset >> shift) as usize & (MAX_BUCKETS - 1);
            let (word, bit) = (b / 64, b % 64);
            // All ones when the bucket has ranges already. Branch-free:
            // whether a bucket is new is as good as random.
            let old = 0u32.wrapping_sub((seen[word] >> bit) as u32 & 1);
            low[b] = (low[b] | !old).min(offset);
            high[b] = (high[b] & old).max(end);
            seen[word] |= 1 << bit;
        }
    }

    /// The first-fit scan over the buckets filled by [`Buckets::fill`]
    /// (the first `words` words of marks), which it clears: each bucket
    /// stands for one range, its lowest offset to its highest end.
    #[inline]
    fn scan(&mut self, size: u64, alignment: u64, lowest: u32, words: usize) -> u64 {
        let (low, high) = (&self.low, &self.high);
        // Masked (a no-op: the marks are MAX_BUCKETS bits): no bounds checks.
        let buckets = set_bits(&self.seen[..words]).map(|b| {
            let b = b & (MAX_BUCKETS - 1);
            (u64::from(low[b] + lowest), u64::from(high[b]))
        });
        let offset = first_fit_in(buckets, 0, size, alignment);
        self.seen[..words].fill(0);
        offset
    }
}

/// The indices of the set bits of `words`, increasing.
fn set_bits(words: &[u64]) -> SetBits<'_> {
    SetBits {
        words,
        at: 0,
        bits: words.first().copied().unwrap_or(0),
    }
}

/// The iterator of [`set_bits`]: the word at `at`, its bits not yet
/// returned in `bits`.
struct SetBits<'a> {
    words: &'a [u64],
    at: usize,
    bits: u64,
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.at += 1;
            self.bits = *self.words.get(self.at)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.at * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::fit::first_fit;
    use proptest::prelude::*;

    fn pack(ranges: &[(u64, u64)]) -> Vec<u64> {
        ranges.iter().map(|&(o, e)| o << 32 | e).collect()
    }

    /// The sorted scan's answer.
    fn sorted_first_fit(packed: &[u64], size: u64, alignment: u64) -> u64 {
        let mut ranges: Vec<(u64, u64)> =
            packed.iter().map(|&r| (r >> 32, r & 0xffff_ffff)).collect();
        ranges.sort_unstable();
        first_fit(&ranges, size, alignment)
    }

    #[test]
    fn finds_the_first_gap_that_holds_the_size() {
        let mut fit = BucketFit::default();
        // Gaps [10, 14) (too small for 8) and [20, 40).
        let packed = pack(&[(40, 50), (0, 10), (14, 20)]);
        assert_eq!(fit.first_fit(&packed, 8, 1, 50), 20);
        assert_eq!(fit.first_fit(&packed, 4, 1, 50), 10);
        // Aligned to 8: 16 is too close to 20, 24 fits before 40.
        assert_eq!(fit.first_fit(&packed, 4, 8, 50), 24);
        assert_eq!(fit.first_fit(&packed, 30, 1, 50), 50);
        assert_eq!(fit.first_fit(&[], 30, 1, 0), 0);
        // Nothing below 40: 0 holds 40 bytes.
        assert_eq!(fit.first_fit(&pack(&[(40, 50), (60, 70)]), 40, 1, 70), 0);
        assert_eq!(fit.first_fit(&pack(&[(40, 50), (60, 70)]), 41, 1, 70), 70);
    }

    /// A size of 2^32 or more (buckets wider than 32-bit offsets): the
    /// sorted scan, and the working memory left clean for later queries.
    #[test]
    fn sizes_past_32_bits_are_scanned_sorted() {
        let mut fit = BucketFit::default();
        let packed = pack(&[(100, 200), (0, 10)]);
        assert_eq!(fit.first_fit(&packed, 1 << 32, 1, 200), 200);
        assert_eq!(fit.first_fit(&packed, u64::MAX / 2, 8, 200), 200);
        let later = pack(&[(0, 100), (0, 1), (0, 6), (100, 101)]);
        assert_eq!(fit.first_fit(&later, 1, 1, 101), 101);
    }

    #[test]
    fn sorts_the_ranges_of_small_sizes() {
        let mut fit = BucketFit::default();
        // A spread of 2^20 for a size of 3 (buckets of 2 bytes): sorted.
        // The one gap of 3 bytes near 1000 is between the last two.
        let packed = pack(&[
            (1 << 20, (1 << 20) + 5),
            (1004, 1010),
            (0, 1000),
            (1000, 1003),
            (1013, 1020),
        ]);
        assert_eq!(fit.first_fit(&packed, 3, 1, (1 << 20) + 5), 1010);
        assert_eq!(fit.first_fit(&packed, 4, 1, (1 << 20) + 5), 1020);
        assert_eq!(fit.first_fit(&packed, 3, 4, (1 << 20) + 5), 1020);
        assert_eq!(sorted_first_fit(&packed, 3, 1), 1010);
    }

    proptest! {
        /// The answer of the sorted first-fit scan, for ranges that
        /// overlap each other or not, in any order, with alignments,
        /// sizes from far below the spread of the offsets (sorted) to
        /// above it (buckets from 0 or from the lowest offset), and with
        /// the working memory reused across queries.
        #[test]
        fn equals_the_sorted_scan(
            queries in proptest::collection::vec(
                (
                    proptest::collection::vec((0u64..5000, 0u64..700), 0..200),
                    0u32..20,
                    1u64..900,
                    prop_oneof![Just(1u64), Just(8), Just(64), Just(3)],
                    0u32..3,
                ),
                1..6,
            ),
        ) {
            let mut fit = BucketFit::default();
            for (spec, scale, size, alignment, slack) in queries {
                // Scaled up to 2^31: offsets and ends stay below 2^32.
                let ranges: Vec<(u64, u64)> = spec
                    .iter()
                    .map(|&(o, len)| (o << scale >> 1, (o + len) << scale >> 1))
                    .collect();
                let packed = pack(&ranges);
                // Any bound on the ends will do (a loose one: fewer buckets
                // from 0, or a spread found by a pass).
                let top = ranges.iter().map(|r| r.1).max().unwrap_or(0) << slack;
                prop_assert_eq!(
                    fit.first_fit(&packed, size, alignment, top),
                    sorted_first_fit(&packed, size, alignment)
                );
            }
        }
    }
}
