//! Lifetimes with gaps: a buffer idle for part of its lifetime.
//!
//! MiniMalloc (Moffitt, ASPLOS 2023) reads a `gaps` column: a list of time
//! intervals inside a buffer's lifetime during which the buffer occupies no
//! address (`lo-hi`) or only the window `[offset + wlo, offset + whi)` of
//! its range (`lo-hi@wlo:whi`, `0 <= wlo < whi <= size`): a tensor saved in
//! the forward pass and read in the backward pass, a buffer that shrinks.
//!
//! A buffer's lifetime `[start, end)` stays its *hull*. What it occupies is
//! a list of [`Piece`]s: the stretches between gaps with its whole range,
//! and the windowed gaps with their window. Two buffers conflict exactly
//! when, at some instant, pieces of both are present and their address
//! ranges intersect ([`crate::plan::validate`]); the max load sums the
//! widths of the pieces present at each instant.
//!
//! Gaps are stored beside the buffers, not in them ([`Gaps`], a CSR table):
//! a problem without gaps pays nothing per buffer. A solver that does not
//! exploit gaps plans the hulls
//! ([`solve_hulls`](crate::solver::hulls::solve_hulls), called by
//! [`Solver::solve`](crate::Solver::solve)): every plan of the hulls is
//! valid for the gapped problem, since pieces lie inside the hull.
//! Greedy first-fit and best-fit ([`PieceConflicts`]) and the exact search
//! plan the pieces themselves.

use crate::buffer::{Buffer, BufferIdx};
use crate::geometry::sort::sort;
use crate::stop::{Cut, Stop};

/// One gap of a buffer, in half-open time `[start, end)` inside the
/// buffer's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gap {
    /// First instant of the gap.
    pub start: u64,
    /// First instant after the gap (half-open).
    pub end: u64,
    /// `Some((lo, hi))`: during the gap the buffer still occupies
    /// `[offset + lo, offset + hi)`; `None`: it occupies nothing.
    pub window: Option<(u64, u64)>,
}

impl Gap {
    /// A gap during which the buffer occupies nothing.
    pub fn idle(start: u64, end: u64) -> Self {
        Gap {
            start,
            end,
            window: None,
        }
    }

    /// A gap during which the buffer occupies `[offset + lo, offset + hi)`.
    pub fn windowed(start: u64, end: u64, lo: u64, hi: u64) -> Self {
        Gap {
            start,
            end,
            window: Some((lo, hi)),
        }
    }
}

/// Why the gaps of one buffer are refused (the buffer is named by the
/// caller: [`ProblemError::Gap`](crate::ProblemError::Gap) or a located
/// input error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GapError {
    #[error("empty gap: [{start}, {end}) (half-open) holds no instant")]
    Empty { start: u64, end: u64 },
    #[error("gap [{start}, {end}) (half-open) is outside the lifetime [{lifetime_start}, {lifetime_end})")]
    OutsideLifetime {
        start: u64,
        end: u64,
        lifetime_start: u64,
        lifetime_end: u64,
    },
    #[error(
        "gaps [{first_start}, {first_end}) and [{second_start}, {second_end}) (half-open) overlap"
    )]
    Overlap {
        first_start: u64,
        first_end: u64,
        second_start: u64,
        second_end: u64,
    },
    #[error("window {lo}:{hi} must satisfy 0 <= lo < hi <= size {size}")]
    BadWindow { lo: u64, hi: u64, size: u64 },
}

/// Why a table of gaps cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GapTableError {
    #[error("too many gaps: {0} (at most {max})", max = u32::MAX - 1)]
    TooManyGaps(usize),
    #[error("a gap names buffer {} of {buffers}", .buffer.0)]
    UnknownBuffer { buffer: BufferIdx, buffers: usize },
}

/// Checks the gaps of `buffer` (in any order): each non-empty, inside the
/// lifetime, with a window `lo < hi <= size`, and no two overlapping
/// (touching is fine).
pub fn check_gaps(buffer: &Buffer, gaps: &[Gap]) -> Result<(), GapError> {
    for g in gaps {
        if g.start >= g.end {
            return Err(GapError::Empty {
                start: g.start,
                end: g.end,
            });
        }
        if g.start < buffer.start || g.end > buffer.end {
            return Err(GapError::OutsideLifetime {
                start: g.start,
                end: g.end,
                lifetime_start: buffer.start,
                lifetime_end: buffer.end,
            });
        }
        if let Some((lo, hi)) = g.window {
            if lo >= hi || hi > buffer.size {
                return Err(GapError::BadWindow {
                    lo,
                    hi,
                    size: buffer.size,
                });
            }
        }
    }
    let mut sorted: Vec<&Gap> = gaps.iter().collect();
    sorted.sort_by_key(|g| (g.start, g.end));
    match sorted.windows(2).find(|w| w[1].start < w[0].end) {
        Some(w) => Err(GapError::Overlap {
            first_start: w[0].start,
            first_end: w[0].end,
            second_start: w[1].start,
            second_end: w[1].end,
        }),
        None => Ok(()),
    }
}

/// The gaps of every buffer of a problem, in compressed rows: buffer `b`'s
/// gaps, sorted by start, are `gaps[first[b]..first[b + 1]]`. Empty (no
/// memory per buffer) when no buffer has a gap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    /// Row starts, `n + 1` of them; empty when there are no gaps.
    first: Vec<u32>,
    gaps: Vec<Gap>,
}

impl Gaps {
    /// The table for `n` buffers from `(buffer, gap)` pairs in any order.
    /// Fails if a buffer index is `n` or more, or there are more than
    /// `u32::MAX - 1` gaps. The gaps themselves are checked by
    /// [`Problem::new_with_gaps`](crate::Problem::new_with_gaps).
    pub fn new(
        n: usize,
        pairs: impl IntoIterator<Item = (BufferIdx, Gap)>,
    ) -> Result<Gaps, GapTableError> {
        let mut pairs: Vec<(BufferIdx, Gap)> = pairs.into_iter().collect();
        if pairs.is_empty() {
            return Ok(Gaps::default());
        }
        if pairs.len() >= u32::MAX as usize {
            return Err(GapTableError::TooManyGaps(pairs.len()));
        }
        if let Some(&(b, _)) = pairs.iter().find(|(b, _)| b.index() >= n) {
            return Err(GapTableError::UnknownBuffer {
                buffer: b,
                buffers: n,
            });
        }
        pairs.sort_by_key(|&(b, g)| (b, g.start, g.end));
        let mut first = vec![0u32; n + 1];
        for &(b, _) in &pairs {
            first[b.index() + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        Ok(Gaps {
            first,
            gaps: pairs.into_iter().map(|(_, g)| g).collect(),
        })
    }

    /// The table from one list of gaps per buffer (in buffer order).
    pub fn from_lists(lists: &[Vec<Gap>]) -> Result<Gaps, GapTableError> {
        Gaps::new(
            lists.len(),
            lists
                .iter()
                .enumerate()
                .flat_map(|(i, l)| l.iter().map(move |&g| (BufferIdx::new(i), g))),
        )
    }

    /// True when no buffer has a gap.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.gaps.is_empty()
    }

    /// Total number of gaps.
    pub fn count(&self) -> usize {
        self.gaps.len()
    }

    /// The gaps of buffer `b`, sorted by start (empty without gaps).
    #[inline]
    pub fn of(&self, b: BufferIdx) -> &[Gap] {
        if self.first.is_empty() {
            return &[];
        }
        let (from, to) = (self.first[b.index()], self.first[b.index() + 1]);
        &self.gaps[from as usize..to as usize]
    }

    /// Every gap, buffer after buffer.
    pub fn of_all(&self) -> impl Iterator<Item = &Gap> {
        self.gaps.iter()
    }

    /// The gaps of the buffers `kept`, renumbered in `kept`'s order.
    pub fn subset(&self, kept: &[BufferIdx]) -> Gaps {
        if self.is_empty() {
            return Gaps::default();
        }
        let mut first = Vec::with_capacity(kept.len() + 1);
        let mut gaps = Vec::new();
        first.push(0u32);
        for &b in kept {
            gaps.extend_from_slice(self.of(b));
            first.push(gaps.len() as u32);
        }
        if gaps.is_empty() {
            return Gaps::default();
        }
        Gaps { first, gaps }
    }

    /// The number of buffers the table has rows for (0 when empty).
    pub(crate) fn rows(&self) -> usize {
        self.first.len().saturating_sub(1)
    }
}

/// A stretch of time during which a buffer occupies `[offset + lo, offset +
/// hi)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// First instant.
    pub start: u64,
    /// First instant after (half-open).
    pub end: u64,
    /// Lowest occupied address, relative to the offset.
    pub lo: u64,
    /// First address above, relative to the offset.
    pub hi: u64,
}

/// The pieces of `buffer` with its `gaps` (sorted by start, as
/// [`Gaps::of`] gives them), in time order: none for a zero-size buffer,
/// `[start, end) × [0, size)` without gaps.
pub fn pieces<'a>(buffer: &'a Buffer, gaps: &'a [Gap]) -> Pieces<'a> {
    Pieces {
        buffer,
        gaps,
        at: buffer.start,
        pending: None,
    }
}

/// Iterator of [`pieces`].
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    buffer: &'a Buffer,
    gaps: &'a [Gap],
    /// Time up to which pieces were produced.
    at: u64,
    /// A windowed gap's piece, produced after the stretch before it.
    pending: Option<Piece>,
}

impl Iterator for Pieces<'_> {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        let size = self.buffer.size;
        if size == 0 {
            return None;
        }
        loop {
            if let Some(p) = self.pending.take() {
                return Some(p);
            }
            let Some((g, rest)) = self.gaps.split_first() else {
                if self.at < self.buffer.end {
                    let p = Piece {
                        start: self.at,
                        end: self.buffer.end,
                        lo: 0,
                        hi: size,
                    };
                    self.at = self.buffer.end;
                    return Some(p);
                }
                return None;
            };
            self.gaps = rest;
            let before = (self.at < g.start).then_some(Piece {
                start: self.at,
                end: g.start,
                lo: 0,
                hi: size,
            });
            self.pending = g.window.map(|(lo, hi)| Piece {
                start: g.start,
                end: g.end,
                lo,
                hi,
            });
            self.at = g.end;
            if before.is_some() {
                return before;
            }
        }
    }
}

/// For each buffer, the placed-relative offsets the other buffers forbid:
/// entry `(c, lo, hi)` in buffer `b`'s row says `b` may not be at an offset
/// in `[offset(c) + lo, offset(c) + hi)`, because then some piece of `b`
/// and some piece of `c` present at the same instant would share an
/// address. Built by a sweep over the pieces in start order, O(pieces log
/// pieces + pairs); duplicate entries (common: plain gaps give the same
/// interval for every pair of pieces) are merged.
#[derive(Clone, Debug, Default)]
pub struct PieceConflicts {
    first: Vec<usize>,
    entries: Vec<(u32, i128, i128)>,
}

impl PieceConflicts {
    /// The conflicts of `buffers` with their `gaps` (or none). `Err` once
    /// `stop` cuts, checked in the sorts ([`sort`]: the same order, since
    /// equal tuples are identical and the pairs are deduplicated) and every
    /// [`Stop::EVERY_COSTLY`] buffers (each its pieces) and pieces or pairs.
    pub fn new(buffers: &[Buffer], gaps: &Gaps, stop: &Stop) -> Result<Self, Cut> {
        let n = buffers.len();
        // (start, end, buffer, lo, hi)
        let mut all: Vec<(u64, u64, u32, u64, u64)> = Vec::new();
        for (i, b) in buffers.iter().enumerate() {
            stop.every_costly(i)?;
            for p in pieces(b, gaps.of(BufferIdx::new(i))) {
                all.push((p.start, p.end, i as u32, p.lo, p.hi));
            }
        }
        sort(&mut all, stop)?;
        let mut pairs: Vec<(u32, u32, i128, i128)> = Vec::new();
        // Each piece and each pair a unit of work (a dense instance has
        // many pairs per piece).
        let mut work = 0usize;
        let mut due = || {
            work += 1;
            stop.every_costly(work)
        };
        for (k, &(_, end, a, alo, ahi)) in all.iter().enumerate() {
            due()?;
            for &(_, _, c, clo, chi) in all[k + 1..].iter().take_while(|q| q.0 < end) {
                due()?;
                if c == a {
                    continue;
                }
                // a at x and c at y conflict iff x + alo < y + chi and
                // y + clo < x + ahi: x - y in (clo - ahi, chi - alo).
                let (clo, chi, alo, ahi) = (
                    i128::from(clo),
                    i128::from(chi),
                    i128::from(alo),
                    i128::from(ahi),
                );
                pairs.push((a, c, clo - ahi + 1, chi - alo));
                pairs.push((c, a, alo - chi + 1, ahi - clo));
            }
        }
        sort(&mut pairs, stop)?;
        pairs.dedup();
        let mut first = vec![0usize; n + 1];
        for &(a, ..) in &pairs {
            first[a as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let entries = pairs
            .into_iter()
            .map(|(_, c, lo, hi)| (c, lo, hi))
            .collect();
        Ok(PieceConflicts { first, entries })
    }

    /// Buffer `b`'s row: `(other, lo, hi)` entries, by other buffer.
    #[inline]
    pub fn of(&self, b: BufferIdx) -> &[(u32, i128, i128)] {
        &self.entries[self.first[b.index()]..self.first[b.index() + 1]]
    }

    /// Total number of entries (twice the conflicting piece pairs, after
    /// merging).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no two buffers conflict.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The offsets of `b` forbidden by the buffers placed so far
    /// (`offsets[c]` is `Some`), as `[lo, hi)` ranges of non-negative
    /// offsets, sorted by `lo`, into `out`.
    pub fn forbidden(&self, b: BufferIdx, offsets: &[Option<u64>], out: &mut Vec<(u64, u64)>) {
        out.clear();
        for &(c, lo, hi) in self.of(b) {
            let Some(oc) = offsets[c as usize] else {
                continue;
            };
            let (lo, hi) = (i128::from(oc) + lo, i128::from(oc) + hi);
            if hi <= 0 {
                continue;
            }
            // hi <= offset(c) + size(c), which `Problem::new` keeps in u64.
            let hi = u64::try_from(hi).unwrap_or(u64::MAX);
            out.push((u64::try_from(lo.max(0)).unwrap_or(0), hi));
        }
        out.sort_unstable();
    }
}

/// The lowest aligned offset at or above `start` outside every forbidden
/// range of `forbidden` (sorted by start).
pub fn first_free(forbidden: &[(u64, u64)], start: u64, alignment: u64) -> u64 {
    let mut candidate = super::fit::align_up(start, alignment);
    for &(lo, hi) in forbidden {
        if lo > candidate {
            break;
        }
        if hi > candidate {
            candidate = super::fit::align_up(hi, alignment);
        }
    }
    candidate
}

/// Best-fit among free offsets: the aligned offset in the shortest
/// bounded stretch of offsets outside every forbidden range (sorted by
/// start), the lowest on ties; above them all when no bounded stretch has
/// an aligned offset. Without gaps this is the tightest address gap that
/// holds the buffer, as in [`super::fit::best_fit`].
pub fn best_free(forbidden: &[(u64, u64)], alignment: u64) -> u64 {
    let mut best: Option<(u64, u64)> = None; // (stretch length, offset)
    let mut reach = 0u64;
    for &(lo, hi) in forbidden {
        if lo > reach {
            let candidate = super::fit::align_up(reach, alignment);
            let stretch = lo - reach;
            if candidate < lo && best.is_none_or(|(s, _)| stretch < s) {
                best = Some((stretch, candidate));
            }
        }
        reach = reach.max(hi);
    }
    best.map_or_else(
        || super::fit::align_up(reach, alignment),
        |(_, offset)| offset,
    )
}

/// The max load with gaps: the most bytes occupied at one instant, summing
/// the widths of the pieces present (a lower bound on every makespan:
/// pieces present together have disjoint ranges below it).
pub fn max_load(buffers: &[Buffer], gaps: &Gaps) -> u64 {
    let mut starts: Vec<(u64, u64)> = Vec::new();
    let mut ends: Vec<(u64, u64)> = Vec::new();
    for (i, b) in buffers.iter().enumerate() {
        for p in pieces(b, gaps.of(BufferIdx::new(i))) {
            starts.push((p.start, p.hi - p.lo));
            ends.push((p.end, p.hi - p.lo));
        }
    }
    super::sweep::max_load_of_events(starts, ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_between_and_in_gaps() {
        let b = Buffer::new("b", 0, 10, 8);
        let all = |gaps: &[Gap]| pieces(&b, gaps).collect::<Vec<_>>();
        let p = |start, end, lo, hi| Piece { start, end, lo, hi };
        assert_eq!(all(&[]), [p(0, 10, 0, 8)]);
        assert_eq!(all(&[Gap::idle(2, 4)]), [p(0, 2, 0, 8), p(4, 10, 0, 8)]);
        assert_eq!(
            all(&[Gap::idle(0, 3), Gap::windowed(3, 5, 2, 4), Gap::idle(8, 10)]),
            [p(3, 5, 2, 4), p(5, 8, 0, 8)]
        );
        assert_eq!(all(&[Gap::idle(0, 10)]), []);
        assert_eq!(all(&[Gap::windowed(0, 10, 0, 1)]), [p(0, 10, 0, 1)]);
        assert_eq!(pieces(&Buffer::new("z", 0, 4, 0), &[]).count(), 0);
    }

    #[test]
    fn gap_checks() {
        let b = Buffer::new("b", 2, 10, 8);
        assert_eq!(check_gaps(&b, &[Gap::idle(2, 10)]), Ok(()));
        assert_eq!(
            check_gaps(&b, &[Gap::idle(3, 6), Gap::windowed(6, 7, 0, 8)]),
            Ok(())
        );
        assert_eq!(
            check_gaps(&b, &[Gap::idle(1, 4)]).unwrap_err().to_string(),
            "gap [1, 4) (half-open) is outside the lifetime [2, 10)"
        );
        assert!(matches!(
            check_gaps(&b, &[Gap::idle(5, 5)]),
            Err(GapError::Empty { .. })
        ));
        assert_eq!(
            check_gaps(&b, &[Gap::idle(6, 9), Gap::idle(3, 7)])
                .unwrap_err()
                .to_string(),
            "gaps [3, 7) and [6, 9) (half-open) overlap"
        );
        assert_eq!(
            check_gaps(&b, &[Gap::windowed(3, 4, 4, 9)])
                .unwrap_err()
                .to_string(),
            "window 4:9 must satisfy 0 <= lo < hi <= size 8"
        );
        assert!(check_gaps(&b, &[Gap::windowed(3, 4, 4, 4)]).is_err());
    }

    /// A generated instance where every buffer of three or more steps is
    /// idle in its second step.
    fn gapped(n: usize) -> (Vec<Buffer>, Gaps) {
        let buffers = crate::generate::generate(crate::generate::Kind::Random, n, 3)
            .problem
            .buffers()
            .to_vec();
        let gaps = crate::testutil::idle_in_second_step(&buffers);
        (buffers, gaps)
    }

    #[test]
    fn piece_conflicts_poll_the_stop() {
        let (buffers, gaps) = gapped(3000);
        assert!(!gaps.is_empty());
        let counted = Stop::after_looks(u64::MAX);
        let full = PieceConflicts::new(&buffers, &gaps, &counted).unwrap();
        assert!(full.len() > 1 << 13, "{}", full.len());
        let looks = u64::MAX - counted.looks_left().unwrap();
        // A cut at the k-th look gives up, whichever phase it falls in
        // (pieces, then pairs): the looks are not all at the start.
        assert!(looks > 4, "{looks}");
        for k in [0, 1, 2, 3, looks / 2, looks - 1] {
            let stop = Stop::after_looks(k);
            assert!(PieceConflicts::new(&buffers, &gaps, &stop).is_err(), "{k}");
            assert_eq!(stop.looks_left(), Some(0), "{k}");
        }
    }

    #[test]
    fn table_rows_and_subsets() {
        let t = Gaps::new(
            3,
            [
                (BufferIdx(2), Gap::idle(5, 6)),
                (BufferIdx(0), Gap::idle(3, 4)),
                (BufferIdx(2), Gap::idle(1, 2)),
            ],
        )
        .unwrap();
        assert_eq!(t.of(BufferIdx(0)), [Gap::idle(3, 4)]);
        assert_eq!(t.of(BufferIdx(1)), []);
        assert_eq!(t.of(BufferIdx(2)), [Gap::idle(1, 2), Gap::idle(5, 6)]);
        let s = t.subset(&[BufferIdx(2), BufferIdx(1)]);
        assert_eq!(s.of(BufferIdx(0)), [Gap::idle(1, 2), Gap::idle(5, 6)]);
        assert!(t.subset(&[BufferIdx(1)]).is_empty());
        assert!(Gaps::new(2, [(BufferIdx(2), Gap::idle(0, 1))]).is_err());
        assert_eq!(Gaps::new(5, []).unwrap(), Gaps::default());
    }

    #[test]
    fn free_offsets() {
        let f = [(0, 4), (6, 10), (12, 20)];
        assert_eq!(first_free(&f, 0, 1), 4);
        assert_eq!(first_free(&f, 0, 8), 24);
        assert_eq!(first_free(&f, 0, 4), 4);
        assert_eq!(first_free(&[], 3, 4), 4);
        // Stretches [4, 6) and [10, 12) tie: the lowest; [20, ..) unbounded.
        assert_eq!(best_free(&f, 1), 4);
        assert_eq!(best_free(&[(0, 4), (6, 10), (11, 20)], 1), 10);
        assert_eq!(best_free(&f, 16), 32);
    }
}
