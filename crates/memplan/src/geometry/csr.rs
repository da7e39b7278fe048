//! Compressed sparse rows: many short lists (the neighbours of each buffer,
//! the buffers alive in each time section, the members of each phase) kept
//! in two flat vectors instead of a vector per list.
//!
//! ```text
//!   rows:     0        1    2          (row 1 is empty)
//!   offsets:  0        3    3        5
//!   values:   [a  b  c]    [d  e]
//! ```
//!
//! Row `i` is `values[offsets[i]..offsets[i + 1]]`. Building never
//! allocates per row: rows are pushed one after the other
//! ([`Csr::push_row`]), grouped by a key ([`Csr::by_key`]), or filled by
//! the two-pass count-then-fill sweeps of [`super::sweep`]
//! ([`Csr::from_parts`]).

use std::ops::Range;

/// Rows of values in two flat vectors (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr<T> {
    /// Where each row starts in `values`, then where the last one ends.
    ///
    /// Invariant: `offsets[0] == 0`; `offsets` is non-decreasing;
    /// `offsets.len()` is the number of rows plus one; the last offset is
    /// `values.len()` (so `values.len()` fits in `u32`). Every
    /// `offsets[i]..offsets[i + 1]` is therefore a valid range of
    /// `values`, and [`Csr::row`] cannot fail for `i < rows()`.
    offsets: Vec<u32>,
    /// The rows' values, row after row.
    values: Vec<T>,
}

impl<T> Default for Csr<T> {
    fn default() -> Self {
        Csr::new()
    }
}

impl<T> Csr<T> {
    /// No rows.
    pub fn new() -> Self {
        Csr {
            offsets: vec![0],
            values: Vec::new(),
        }
    }

    /// The rows given as `offsets` and `values`, or `None` when they break
    /// the invariant written on [`Csr`]'s fields. O(rows).
    pub fn from_parts(offsets: Vec<u32>, values: Vec<T>) -> Option<Self> {
        let well_formed = offsets.first() == Some(&0)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.last().map(|&e| e as usize) == Some(values.len());
        well_formed.then_some(Csr { offsets, values })
    }

    /// Appends a row; `None` (and the rows unchanged) when the values would
    /// no longer fit `u32` offsets.
    pub fn push_row(&mut self, row: impl IntoIterator<Item = T>) -> Option<()> {
        let from = self.values.len();
        self.values.extend(row);
        match u32::try_from(self.values.len()) {
            Ok(end) => {
                self.offsets.push(end);
                Some(())
            }
            Err(_) => {
                self.values.truncate(from);
                None
            }
        }
    }

    /// The number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Where row `i` lies in [`Csr::values`]. Panics if `i >= rows()`.
    #[inline]
    pub fn range(&self, i: usize) -> Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    /// Row `i`. Panics if `i >= rows()`.
    #[inline]
    pub fn row(&self, i: usize) -> &[T] {
        &self.values[self.range(i)]
    }

    /// Row `i`, mutable (its length cannot change). Panics if `i >=
    /// rows()`.
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        let range = self.range(i);
        &mut self.values[range]
    }

    /// Every value, row after row.
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The offsets and the values (see the invariant on the fields).
    pub fn into_parts(self) -> (Vec<u32>, Vec<T>) {
        (self.offsets, self.values)
    }

    /// The same rows with every value mapped by `f`.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Csr<U> {
        Csr {
            offsets: self.offsets.clone(),
            values: self.values.iter().map(f).collect(),
        }
    }
}

impl Csr<u32> {
    /// Items `0..key.len()` grouped by their key into `rows` rows, each row
    /// in increasing item order (a counting sort). `None` when a key is
    /// `rows` or more, or the items overflow `u32`.
    pub fn by_key(key: &[u32], rows: usize) -> Option<Self> {
        let items = u32::try_from(key.len()).ok()?;
        let mut offsets = vec![0u32; rows + 1];
        for &k in key {
            *offsets.get_mut(k as usize + 1)? += 1;
        }
        for r in 0..rows {
            offsets[r + 1] += offsets[r];
        }
        let mut fill = offsets.clone();
        let mut values = vec![0u32; key.len()];
        for (i, &k) in (0..items).zip(key) {
            let at = &mut fill[k as usize];
            values[*at as usize] = i;
            *at += 1;
        }
        Some(Csr { offsets, values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rows<T: Clone>(c: &Csr<T>) -> Vec<Vec<T>> {
        (0..c.rows()).map(|i| c.row(i).to_vec()).collect()
    }

    #[test]
    fn rows_are_pushed_in_order() {
        let mut c = Csr::new();
        assert_eq!(c.rows(), 0);
        c.push_row([1, 2, 3]).unwrap();
        c.push_row([]).unwrap();
        c.push_row([4, 5]).unwrap();
        assert_eq!(rows(&c), vec![vec![1, 2, 3], vec![], vec![4, 5]]);
        assert_eq!(c.range(2), 3..5);
        assert_eq!(c.values(), &[1, 2, 3, 4, 5]);
        c.row_mut(0).reverse();
        assert_eq!(c.row(0), &[3, 2, 1]);
        assert_eq!(c.map(|&v| v * 10).row(2), &[40, 50]);
        assert_eq!(c.into_parts(), (vec![0, 3, 3, 5], vec![3, 2, 1, 4, 5]));
    }

    #[test]
    fn from_parts_checks_the_invariant() {
        let ok = Csr::from_parts(vec![0, 2, 2, 3], vec!['a', 'b', 'c']).unwrap();
        assert_eq!(rows(&ok), vec![vec!['a', 'b'], vec![], vec!['c']]);
        assert!(Csr::<u8>::from_parts(vec![0], vec![]).is_some());
        // Empty offsets, a first offset above 0, a decrease, a last offset
        // that is not the number of values.
        assert!(Csr::<u8>::from_parts(vec![], vec![]).is_none());
        assert!(Csr::from_parts(vec![1, 1], vec![7u8]).is_none());
        assert!(Csr::from_parts(vec![0, 2, 1, 2], vec![1u8, 2]).is_none());
        assert!(Csr::from_parts(vec![0, 1], vec![1u8, 2]).is_none());
    }

    #[test]
    fn by_key_rejects_keys_out_of_range() {
        assert!(Csr::by_key(&[0, 2], 2).is_none());
        assert_eq!(
            rows(&Csr::by_key(&[], 2).unwrap()),
            vec![Vec::<u32>::new(), Vec::new()]
        );
    }

    proptest! {
        /// Grouping by key is the list of each key's items in order.
        #[test]
        fn by_key_agrees_with_a_vector_per_row(
            key in proptest::collection::vec(0u32..6, 0..40),
        ) {
            let mut expected = vec![Vec::new(); 6];
            for (i, &k) in key.iter().enumerate() {
                expected[k as usize].push(i as u32);
            }
            let c = Csr::by_key(&key, 6).unwrap();
            prop_assert_eq!(rows(&c), expected);
            let (offsets, values) = c.into_parts();
            prop_assert!(Csr::from_parts(offsets, values).is_some());
        }
    }
}
