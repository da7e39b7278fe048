//! A set of positions as one bit each: which buffers of a time group are
//! placed, so that a scan over a run of positions
//! ([`crate::geometry::occupancy::Occupancy::occupied_marked`]) visits the
//! placed ones only, a word of 64 positions at a time.

/// Positions `[from, from + len)`, each marked or not (none at first).
#[derive(Clone, Debug, Default)]
pub struct Marks {
    from: usize,
    words: Vec<u64>,
}

impl Marks {
    /// The positions `[from, to)`, none marked.
    pub fn new(from: usize, to: usize) -> Self {
        Marks {
            from,
            words: vec![0; (to.saturating_sub(from)).div_ceil(64)],
        }
    }

    /// Marks position `p` (within the range).
    #[inline]
    pub fn set(&mut self, p: usize) {
        let i = p - self.from;
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Whether position `p` (within the range) is marked.
    #[inline]
    pub fn get(&self, p: usize) -> bool {
        let i = p - self.from;
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Calls `f` on every marked position of `[a, b)` (within the range),
    /// in increasing order.
    #[inline]
    pub fn for_each_in(&self, a: usize, b: usize, mut f: impl FnMut(usize)) {
        for (w, mut word) in self.words_in(a, b) {
            while word != 0 {
                f(self.from + w * 64 + word.trailing_zeros() as usize);
                word &= word - 1;
            }
        }
    }

    /// How many positions of `[a, b)` (within the range) are marked.
    #[inline]
    pub fn count_in(&self, a: usize, b: usize) -> usize {
        self.words_in(a, b)
            .map(|(_, word)| word.count_ones() as usize)
            .sum()
    }

    /// The words holding positions `[a, b)` (within the range), each with
    /// its index and its bits outside `[a, b)` cleared; none when `a >= b`.
    #[inline]
    fn words_in(&self, a: usize, b: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (lo, hi) = (a.saturating_sub(self.from), b.saturating_sub(self.from));
        let (first, last) = (lo / 64, hi.saturating_sub(1) / 64);
        let words = if a < b { first..last + 1 } else { 0..0 };
        words.map(move |w| {
            let mut word = self.words[w];
            if w == first {
                word &= u64::MAX << (lo % 64);
            }
            if w == last {
                word &= u64::MAX >> (63 - (hi - 1) % 64);
            }
            (w, word)
        })
    }

    /// The words holding positions `[a, b)`, to prefetch.
    #[inline]
    pub fn words_of(&self, a: usize, b: usize) -> &[u64] {
        if a >= b {
            return &[];
        }
        &self.words[(a - self.from) / 64..=(b - 1 - self.from) / 64]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn visits_and_counts_exactly_the_marked(
            from in 0usize..100,
            len in 0usize..300,
            marked in proptest::collection::vec(any::<proptest::sample::Index>(), 0..80),
            a in any::<proptest::sample::Index>(),
            b in any::<proptest::sample::Index>(),
        ) {
            let mut marks = Marks::new(from, from + len);
            let mut want = vec![false; len];
            if len > 0 {
                for m in &marked {
                    let i = m.index(len);
                    marks.set(from + i);
                    want[i] = true;
                }
            }
            for (i, &w) in want.iter().enumerate() {
                prop_assert_eq!(marks.get(from + i), w);
            }
            let (a, b) = (a.index(len + 1), b.index(len + 1));
            let (a, b) = (from + a.min(b), from + a.max(b));
            let mut got = Vec::new();
            marks.for_each_in(a, b, |p| got.push(p));
            let expected: Vec<usize> = (a..b).filter(|&p| want[p - from]).collect();
            prop_assert_eq!(marks.count_in(a, b), expected.len());
            prop_assert_eq!(got, expected);
        }
    }
}
