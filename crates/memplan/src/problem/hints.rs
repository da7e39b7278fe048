//! The table of hints (preferred offsets) of a [`Problem`](super::Problem):
//! one per buffer, present only when some buffer has one. What is done
//! with them is in [`crate::hints`].

use crate::buffer::BufferIdx;

/// The marker of "no hint" in the table (never a valid hint: a hint plus
/// its size stays below `u64::MAX`).
const NONE: u64 = u64::MAX;

/// One hint per buffer, by [`BufferIdx`], `None` for buffers without one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints {
    offsets: Box<[u64]>,
}

impl Hints {
    /// The table of `hints` (one per buffer). Values are checked by
    /// [`Problem::with_hints`].
    pub(crate) fn new(hints: &[Option<u64>]) -> Self {
        Hints {
            offsets: hints.iter().map(|h| h.unwrap_or(NONE)).collect(),
        }
    }

    /// The hint of buffer `b`.
    #[inline]
    pub fn get(&self, b: BufferIdx) -> Option<u64> {
        self.at(b.index())
    }

    /// The hint of the buffer at index `i`.
    #[inline]
    pub fn at(&self, i: usize) -> Option<u64> {
        let h = self.offsets[i];
        (h != NONE).then_some(h)
    }

    /// Number of buffers in the table.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether the table is empty (no buffers).
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Number of buffers with a hint.
    pub fn count(&self) -> usize {
        self.offsets.iter().filter(|&&h| h != NONE).count()
    }

    /// The hints of the buffers `kept`, in that order (a sub-problem's).
    pub(crate) fn select(&self, kept: &[BufferIdx]) -> Option<Hints> {
        let offsets: Box<[u64]> = kept.iter().map(|b| self.offsets[b.index()]).collect();
        offsets
            .iter()
            .any(|&h| h != NONE)
            .then_some(Hints { offsets })
    }
}
