//! A buffer to place and its dense index: the plain data every layer
//! above shares (geometry works on buffers before any problem exists).

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

/// One buffer to place.
///
/// Invariants (checked by [`Problem::new`](crate::Problem::new)): `start < end`, `alignment > 0`,
/// and a fixed offset is a multiple of `alignment`. A size of 0 is allowed:
/// such a buffer occupies no address range (see [`crate::solver::zero_size`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// The id as written in the input, kept for output.
    pub id: String,
    /// First logical time at which the buffer is live.
    pub start: u64,
    /// First logical time at which the buffer is dead again (half-open).
    pub end: u64,
    /// Size in bytes (0: an empty buffer, which conflicts with nothing).
    pub size: u64,
    /// Offsets must be multiples of this (1 = no constraint).
    pub alignment: u64,
    /// A pre-placed buffer: every solver must keep this offset.
    pub fixed_offset: Option<u64>,
}

impl Buffer {
    /// A free buffer with alignment 1.
    pub fn new(id: impl Into<String>, start: u64, end: u64, size: u64) -> Self {
        Buffer {
            id: id.into(),
            start,
            end,
            size,
            alignment: 1,
            fixed_offset: None,
        }
    }

    /// This buffer with an alignment.
    pub fn aligned(mut self, alignment: u64) -> Self {
        self.alignment = alignment;
        self
    }

    /// This buffer pinned at `offset`.
    pub fn fixed(mut self, offset: u64) -> Self {
        self.fixed_offset = Some(offset);
        self
    }

    /// Length of the lifetime, `end - start`.
    #[inline]
    pub fn lifetime(&self) -> u64 {
        self.end - self.start
    }

    /// Whether the two half-open lifetimes intersect.
    #[inline]
    pub fn overlaps_in_time(&self, other: &Buffer) -> bool {
        self.start < other.end && other.start < self.end
    }
}
