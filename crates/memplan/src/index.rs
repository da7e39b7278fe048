//! Typed dense indices (in the style of `rustc_index`).

use std::fmt;

/// Dense index of a buffer inside a [`crate::Problem`]: its row in the input.
///
/// Ids from the file are kept for output only; every algorithm works on these.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BufferIdx(pub u32);

impl BufferIdx {
    /// The index as a `usize`, for slice access.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Index of the `i`-th buffer. Problems hold fewer than `u32::MAX` buffers.
    #[inline]
    pub fn new(i: usize) -> Self {
        debug_assert!(i < u32::MAX as usize);
        BufferIdx(i as u32)
    }
}

impl fmt::Debug for BufferIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}
