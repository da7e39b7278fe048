//! The problem model: buffers with half-open lifetimes, sizes, alignments and
//! optional fixed offsets, plus an optional capacity.

pub(crate) mod csv;
pub(crate) mod hints;
pub(crate) mod input_error;
pub(crate) mod read;
pub(crate) mod write;

use rayon::prelude::*;

pub use hints::Hints;
pub use read::{parse_gaps, read_problem, read_problem_from, InputError, InputErrorKind};
pub use write::write_problem;

pub use crate::buffer::Buffer;
use crate::buffer::BufferIdx;
use crate::geometry::gaps::{GapError, GapTableError, Gaps, Pieces};
use crate::quote::quoted;

/// How the two time columns of an input are read. All are converted to the
/// half-open `[start, end)` used inside memplan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lifetimes {
    /// `[lower, upper)`: MiniMalloc's format (the default).
    #[default]
    HalfOpen,
    /// `[lower, upper]`: the first-fit note, XLA. Read as `[lower, upper + 1)`.
    Inclusive,
    /// `(lower, upper)` over continuous time: idealloc (§5.2). Two such
    /// buffers conflict exactly when `[lower, upper)` ones do (idealloc §5.4,
    /// "InEx and Ex are equivalent"), so it is read as `[lower, upper)`.
    Exclusive,
}

impl Lifetimes {
    /// Converts the file's `(lower, upper)` to half-open `[start, end)`;
    /// `None` when `upper + 1` overflows.
    pub fn to_half_open(self, lower: u64, upper: u64) -> Option<(u64, u64)> {
        match self {
            Lifetimes::HalfOpen | Lifetimes::Exclusive => Some((lower, upper)),
            Lifetimes::Inclusive => upper.checked_add(1).map(|end| (lower, end)),
        }
    }

    /// Converts half-open `[start, end)` back to the file's `(lower, upper)`.
    pub fn from_half_open(self, start: u64, end: u64) -> (u64, u64) {
        match self {
            Lifetimes::HalfOpen | Lifetimes::Exclusive => (start, end),
            Lifetimes::Inclusive => (start, end - 1),
        }
    }

    /// Name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Lifetimes::HalfOpen => "half-open",
            Lifetimes::Inclusive => "inclusive",
            Lifetimes::Exclusive => "exclusive",
        }
    }
}

impl crate::named::Named for Lifetimes {
    const WHAT: &'static str = "lifetime convention";
    const ALL: &'static [Self] = &[
        Lifetimes::HalfOpen,
        Lifetimes::Inclusive,
        Lifetimes::Exclusive,
    ];
    fn name(self) -> &'static str {
        Lifetimes::name(self)
    }
    fn help(self) -> Option<&'static str> {
        Some(match self {
            Lifetimes::HalfOpen => "[lower, upper): MiniMalloc",
            Lifetimes::Inclusive => "[lower, upper]: XLA, the first-fit note",
            Lifetimes::Exclusive => "(lower, upper): idealloc",
        })
    }
}

/// Why a set of buffers is not a valid problem. Buffers are named by index;
/// [`read_problem`] turns these into errors naming the file line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProblemError {
    #[error("too many buffers: {0} (at most {max})", max = u32::MAX - 1)]
    TooManyBuffers(usize),
    #[error("empty lifetime: start {start} >= end {end} (half-open)")]
    EmptyLifetime {
        buffer: BufferIdx,
        start: u64,
        end: u64,
    },
    #[error("alignment must be positive, got 0")]
    ZeroAlignment(BufferIdx),
    #[error("fixed offset {offset} is not a multiple of alignment {alignment}")]
    MisalignedOffset {
        buffer: BufferIdx,
        offset: u64,
        alignment: u64,
    },
    #[error("fixed offset {offset} + size {size} overflows 64 bits")]
    FixedEndOverflow {
        buffer: BufferIdx,
        offset: u64,
        size: u64,
    },
    #[error("duplicate id `{}`", quoted(.id))]
    DuplicateId {
        id: String,
        first: BufferIdx,
        second: BufferIdx,
    },
    #[error("fixed buffers `{}` and `{}` overlap in time and address", quoted(.first_id), quoted(.second_id))]
    FixedOverlap {
        first: BufferIdx,
        second: BufferIdx,
        first_id: String,
        second_id: String,
    },
    #[error(
        "sizes (with alignment padding and fixed offsets) sum past 2^64: addresses could overflow"
    )]
    SizeSumOverflow(BufferIdx),
    #[error("{0}")]
    GapTable(GapTableError),
    #[error("the gap table has rows for {rows} buffers, the problem has {buffers}")]
    GapTableSize { rows: usize, buffers: usize },
    #[error("buffer `{}`: {error}", quoted(.id))]
    Gap {
        buffer: BufferIdx,
        id: String,
        error: GapError,
    },
    #[error("{got} hints for {expected} buffers")]
    HintCount { expected: usize, got: usize },
    #[error("hint {hint} is not a multiple of alignment {alignment}")]
    MisalignedHint {
        buffer: BufferIdx,
        hint: u64,
        alignment: u64,
    },
    #[error("hint {hint} differs from the fixed offset {offset}")]
    HintNotFixedOffset {
        buffer: BufferIdx,
        hint: u64,
        offset: u64,
    },
    #[error("hint {hint} is too large: with the sizes (and alignment padding and fixed offsets) addresses could overflow 64 bits")]
    HintTooLarge { buffer: BufferIdx, hint: u64 },
}

impl From<GapTableError> for ProblemError {
    fn from(e: GapTableError) -> Self {
        ProblemError::GapTable(e)
    }
}

impl ProblemError {
    /// The buffer the error is reported at (the later one for pairs).
    pub fn buffer(&self) -> Option<BufferIdx> {
        use ProblemError::*;
        match self {
            TooManyBuffers(_) | GapTableSize { .. } | HintCount { .. } => None,
            ZeroAlignment(b) | SizeSumOverflow(b) => Some(*b),
            GapTable(GapTableError::UnknownBuffer { buffer, .. }) | Gap { buffer, .. } => {
                Some(*buffer)
            }
            GapTable(GapTableError::TooManyGaps(_)) => None,
            EmptyLifetime { buffer, .. }
            | MisalignedOffset { buffer, .. }
            | FixedEndOverflow { buffer, .. }
            | MisalignedHint { buffer, .. }
            | HintNotFixedOffset { buffer, .. }
            | HintTooLarge { buffer, .. } => Some(*buffer),
            DuplicateId { second, .. } | FixedOverlap { second, .. } => Some(*second),
        }
    }
}

/// A DSA instance: buffers plus an optional capacity (the address-space size
/// a plan must fit in). Without a capacity, solvers minimise the makespan.
/// Buffers may have [gaps](crate::geometry::gaps) (kept beside them, in a table that
/// is empty without any).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    buffers: Vec<Buffer>,
    /// Invariant: the facts of `buffers` (every constructor takes them).
    facts: Facts,
    gaps: Gaps,
    /// Hard limit on the makespan, if any.
    pub capacity: Option<u64>,
    /// Preferred offsets, when some buffer has one (a side table, so that
    /// problems without hints take no memory for them).
    hints: Option<Hints>,
}

impl Problem {
    /// Checks every invariant of [`Buffer`], unique ids, that fixed buffers do
    /// not overlap each other, and that no address computation can overflow:
    /// the highest fixed end plus the sum of `size + alignment - 1` fits in a
    /// `u64`.
    pub fn new(buffers: Vec<Buffer>, capacity: Option<u64>) -> Result<Self, ProblemError> {
        Self::new_with_gaps(buffers, Gaps::default(), capacity)
    }

    /// [`Problem::new`] with gaps in the buffers' lifetimes: each buffer's
    /// gaps are also checked ([`crate::geometry::gaps::check_gaps`]), and fixed
    /// buffers may overlap in their hulls as long as their pieces do not.
    pub fn new_with_gaps(
        buffers: Vec<Buffer>,
        gaps: Gaps,
        capacity: Option<u64>,
    ) -> Result<Self, ProblemError> {
        if buffers.len() >= u32::MAX as usize {
            return Err(ProblemError::TooManyBuffers(buffers.len()));
        }
        let facts = check_buffers(&buffers)?;
        if !gaps.is_empty() {
            if gaps.rows() != buffers.len() {
                return Err(ProblemError::GapTableSize {
                    rows: gaps.rows(),
                    buffers: buffers.len(),
                });
            }
            for (i, b) in buffers.iter().enumerate() {
                let idx = BufferIdx::new(i);
                crate::geometry::gaps::check_gaps(b, gaps.of(idx)).map_err(|error| {
                    ProblemError::Gap {
                        buffer: idx,
                        id: b.id.clone(),
                        error,
                    }
                })?;
            }
        }
        check_ids(&buffers)?;
        check_fixed(&buffers, &gaps)?;
        Ok(Problem {
            buffers,
            facts,
            gaps,
            capacity,
            hints: None,
        })
    }

    /// The same buffers, capacity and hints without the gaps: the hulls
    /// (every buffer over its whole lifetime). Valid as the problem is:
    /// dropping gaps only adds conflicts, and fixed buffers that met only
    /// in gaps are still accepted as given.
    pub(crate) fn without_gaps(&self) -> Self {
        Problem {
            buffers: self.buffers.clone(),
            facts: self.facts,
            gaps: Gaps::default(),
            capacity: self.capacity,
            hints: self.hints.clone(),
        }
    }

    /// The gaps of every buffer (empty when none has any).
    #[inline]
    pub fn gaps(&self) -> &Gaps {
        &self.gaps
    }

    /// True when some buffer has a gap.
    #[inline]
    pub fn has_gaps(&self) -> bool {
        !self.gaps.is_empty()
    }

    /// The load over time: with gaps, of the widths of the pieces present
    /// at each instant.
    pub fn load_profile(&self) -> crate::geometry::sweep::LoadProfile {
        use crate::geometry::sweep::LoadProfile;
        if !self.has_gaps() {
            return crate::stop::uncut(|never| LoadProfile::new(&self.buffers, never));
        }
        crate::stop::uncut(|never| {
            LoadProfile::of_spans(
                self.indices()
                    .flat_map(|b| self.pieces(b).map(|p| (p.start, p.end, p.hi - p.lo))),
                never,
            )
        })
    }

    /// What buffer `b` occupies over time ([`crate::geometry::gaps::pieces`]).
    pub fn pieces(&self, b: BufferIdx) -> Pieces<'_> {
        crate::geometry::gaps::pieces(self.buffer(b), self.gaps.of(b))
    }

    /// This problem with a preferred offset per buffer (`None`: no hint);
    /// see [`crate::hints`]. Each hint must be a multiple of the buffer's
    /// alignment, equal its fixed offset if it has one, and end (with the
    /// size) where no address computation can overflow. A table without
    /// any hint removes the hints.
    pub fn with_hints(mut self, hints: &[Option<u64>]) -> Result<Self, ProblemError> {
        if hints.len() != self.buffers.len() {
            return Err(ProblemError::HintCount {
                expected: self.buffers.len(),
                got: hints.len(),
            });
        }
        check_hints(&self.buffers, hints)?;
        self.hints = hints.iter().any(Option::is_some).then(|| Hints::new(hints));
        Ok(self)
    }

    /// This problem without its hints.
    pub fn without_hints(mut self) -> Self {
        self.hints = None;
        self
    }

    /// The hints, if some buffer has one.
    #[inline]
    pub fn hints(&self) -> Option<&Hints> {
        self.hints.as_ref()
    }

    /// The hint of buffer `b`, if any.
    #[inline]
    pub fn hint(&self, b: BufferIdx) -> Option<u64> {
        self.hints.as_ref().and_then(|h| h.get(b))
    }

    /// The buffers `kept` (in that order) as a problem with the same
    /// capacity and their hints: a subset of a valid problem is valid
    /// (ids stay unique, fixed buffers do not overlap, sums only shrink).
    pub(crate) fn subset(&self, kept: &[BufferIdx]) -> Self {
        let buffers: Vec<Buffer> = kept.iter().map(|b| self.buffer(*b).clone()).collect();
        Problem {
            facts: Facts::of(&buffers),
            buffers,
            gaps: self.gaps.subset(kept),
            capacity: self.capacity,
            hints: self.hints.as_ref().and_then(|h| h.select(kept)),
        }
    }

    /// The buffers, indexed by [`BufferIdx`].
    #[inline]
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// The buffer at `b`.
    #[inline]
    pub fn buffer(&self, b: BufferIdx) -> &Buffer {
        &self.buffers[b.index()]
    }

    /// Number of buffers.
    #[inline]
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Whether there are no buffers.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// All buffer indices in input order.
    pub fn indices(&self) -> impl ExactSizeIterator<Item = BufferIdx> + Clone {
        (0..self.buffers.len() as u32).map(BufferIdx)
    }

    /// The same buffers with another capacity.
    pub fn with_capacity(mut self, capacity: Option<u64>) -> Self {
        self.capacity = capacity;
        self
    }

    /// The highest end of a fixed buffer (0 without any): like the max load,
    /// a lower bound on every makespan. Taken when the problem was made.
    #[inline]
    pub fn fixed_end(&self) -> u64 {
        self.facts.fixed_end
    }

    /// The lowest start and the highest end of a buffer that is not fixed;
    /// `None` without one. Taken when the problem was made.
    #[inline]
    pub fn free_time_range(&self) -> Option<(u64, u64)> {
        let (lo, hi) = self.facts.free_times;
        (lo < hi).then_some((lo, hi))
    }

    /// The largest size (0 without buffers): a lower bound on every
    /// makespan. Taken when the problem was made.
    #[inline]
    pub fn max_size(&self) -> u64 {
        self.facts.max_size
    }

    /// The lower bound of every makespan memplan knows without searching:
    /// the max load, or the highest end of a fixed buffer when higher.
    pub fn lower_bound(&self) -> u64 {
        self.max_load().max(self.fixed_end())
    }

    /// A common divisor of every offset of a plan pushed down as far as it
    /// goes (0 for an empty problem): the greatest common divisor of every
    /// size, fixed offset and gap window bound, lowered until each alignment divides it or is
    /// a multiple of it. The optimal makespan is a multiple of it, so
    /// capacities can be rounded down to one.
    pub fn granularity(&self) -> u64 {
        use crate::geometry::fit::gcd;
        // By chunks in parallel (tens of milliseconds at millions of
        // buffers otherwise), each stopping at 1.
        // A multiple of `g` leaves it as it is: tested by a mask when `g`
        // is a power of two (the usual case, and a division costs tens of
        // cycles).
        let with = |g: u64, x: u64| {
            let multiple = if g.is_power_of_two() {
                x & (g - 1) == 0
            } else {
                g != 0 && x % g == 0
            };
            if multiple {
                g
            } else {
                gcd(g, x)
            }
        };
        let chunk = |buffers: &[Buffer]| {
            let mut g = 0;
            for b in buffers {
                g = with(g, b.size);
                g = b.fixed_offset.map_or(g, |o| with(g, o));
                if g == 1 {
                    break;
                }
            }
            g
        };
        let mut g = self
            .buffers
            .par_chunks(1 << 16)
            .map(chunk)
            .reduce(|| 0, gcd);
        if g == 1 {
            // Nothing below: the rest (a pass over millions of buffers)
            // changes nothing.
            return 1;
        }
        // Windows of gaps: a plan pushed down may rest on their bounds.
        g = self
            .gaps
            .of_all()
            .filter_map(|gap| gap.window)
            .fold(g, |g, (lo, hi)| gcd(gcd(g, lo), hi));
        let alignments = distinct_alignments(&self.buffers);
        loop {
            let before = g;
            for &a in &alignments {
                if g != 0 && a % g != 0 && g % a != 0 {
                    g = gcd(g, a);
                }
            }
            if g == before {
                return g;
            }
        }
    }

    /// The max load L: most bytes alive at one instant, the lower bound on
    /// every makespan (idealloc §2, computed by event traversal §5.3).
    /// With gaps, the widths of the pieces present at each instant are
    /// summed ([`crate::geometry::gaps::max_load`]).
    pub fn max_load(&self) -> u64 {
        if self.has_gaps() {
            crate::geometry::gaps::max_load(&self.buffers, &self.gaps)
        } else {
            crate::stop::uncut(|never| crate::geometry::sweep::max_load(&self.buffers, never))
        }
    }
}

/// The checks of [`Problem::with_hints`]: alignment, agreement with a
/// fixed offset, and the highest hinted end plus the address budget of
/// [`check_buffers`] within 64 bits (so that solvers placing buffers above
/// a kept hint never overflow).
fn check_hints(buffers: &[Buffer], hints: &[Option<u64>]) -> Result<(), ProblemError> {
    let budget = buffers.iter().try_fold(0u64, |s, b| {
        s.checked_add(b.size)?.checked_add(b.alignment - 1)
    });
    let fixed_end = buffers
        .iter()
        .filter_map(|b| b.fixed_offset.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    for (i, (b, hint)) in buffers.iter().zip(hints).enumerate() {
        let Some(hint) = *hint else { continue };
        let buffer = BufferIdx::new(i);
        if hint % b.alignment != 0 {
            return Err(ProblemError::MisalignedHint {
                buffer,
                hint,
                alignment: b.alignment,
            });
        }
        if let Some(offset) = b.fixed_offset.filter(|&o| o != hint) {
            return Err(ProblemError::HintNotFixedOffset {
                buffer,
                hint,
                offset,
            });
        }
        let total = budget
            .and_then(|s| s.checked_add(fixed_end))
            .and_then(|s| s.checked_add(hint))
            .and_then(|s| s.checked_add(b.size));
        if total.is_none_or(|t| t == u64::MAX) {
            return Err(ProblemError::HintTooLarge { buffer, hint });
        }
    }
    Ok(())
}

/// The first buffer invalid on its own, or at which the sizes (with
/// alignment slack) and the highest fixed end so far overflow. The usual
/// case, no error, is seen in one parallel pass (each buffer valid, and
/// the whole sum plus the highest fixed end within `u64`: then so is every
/// prefix); otherwise the buffers are checked in order.
fn check_buffers(buffers: &[Buffer]) -> Result<Facts, ProblemError> {
    let (valid, sum, fixed_end, max_size, free_times) = buffers
        .par_iter()
        .map(|b| {
            // The fixed end (0 when not fixed), `None` when invalid.
            let fixed_end = match b.fixed_offset {
                None => Some(0),
                Some(o) if b.alignment != 0 && o % b.alignment == 0 => o.checked_add(b.size),
                Some(_) => None,
            };
            let valid = b.start < b.end && b.alignment != 0 && fixed_end.is_some();
            let slack = u128::from(b.size) + u128::from(b.alignment.saturating_sub(1));
            let free = match b.fixed_offset {
                None => (b.start, b.end),
                Some(_) => (u64::MAX, 0),
            };
            (valid, slack, fixed_end.unwrap_or(0), b.size, free)
        })
        .reduce(
            || (true, 0, 0, 0, (u64::MAX, 0)),
            |a, b| {
                let free = (a.4 .0.min(b.4 .0), a.4 .1.max(b.4 .1));
                (a.0 && b.0, a.1 + b.1, a.2.max(b.2), a.3.max(b.3), free)
            },
        );
    let facts = Facts {
        fixed_end,
        max_size,
        free_times,
    };
    if valid && sum + u128::from(fixed_end) <= u128::from(u64::MAX) {
        return Ok(facts);
    }
    // Valid, every fixed end is below 2^64: the facts hold.
    check_buffers_in_order(buffers).map(|()| facts)
}

/// What the pass that checks the buffers also takes, so that no later
/// pass is needed for it (each costs tens of milliseconds at millions of
/// buffers, which a stop may not wait).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Facts {
    /// The highest end of a fixed buffer, 0 without any.
    fixed_end: u64,
    /// The largest size, 0 without buffers.
    max_size: u64,
    /// The lowest start and the highest end of a free buffer; `(u64::MAX,
    /// 0)` without any.
    free_times: (u64, u64),
}

impl Facts {
    /// The facts of valid `buffers`, in one pass (in parallel at scale).
    fn of(buffers: &[Buffer]) -> Facts {
        let fact = |b: &Buffer| Facts {
            fixed_end: b.fixed_offset.map_or(0, |o| o.saturating_add(b.size)),
            max_size: b.size,
            free_times: match b.fixed_offset {
                None => (b.start, b.end),
                Some(_) => (u64::MAX, 0),
            },
        };
        let max = |a: Facts, b: Facts| Facts {
            fixed_end: a.fixed_end.max(b.fixed_end),
            max_size: a.max_size.max(b.max_size),
            free_times: (
                a.free_times.0.min(b.free_times.0),
                a.free_times.1.max(b.free_times.1),
            ),
        };
        let none = Facts {
            free_times: (u64::MAX, 0),
            ..Facts::default()
        };
        if buffers.len() < 1 << 16 {
            buffers.iter().map(fact).fold(none, max)
        } else {
            buffers.par_iter().map(fact).reduce(|| none, max)
        }
    }
}

/// [`check_buffers`], one buffer after the other.
fn check_buffers_in_order(buffers: &[Buffer]) -> Result<(), ProblemError> {
    let mut budget: u64 = 0;
    let mut max_fixed_end: u64 = 0;
    for (i, b) in buffers.iter().enumerate() {
        let idx = BufferIdx::new(i);
        if b.start >= b.end {
            return Err(ProblemError::EmptyLifetime {
                buffer: idx,
                start: b.start,
                end: b.end,
            });
        }
        if b.alignment == 0 {
            return Err(ProblemError::ZeroAlignment(idx));
        }
        if let Some(offset) = b.fixed_offset {
            if offset % b.alignment != 0 {
                return Err(ProblemError::MisalignedOffset {
                    buffer: idx,
                    offset,
                    alignment: b.alignment,
                });
            }
            let end = offset
                .checked_add(b.size)
                .ok_or(ProblemError::FixedEndOverflow {
                    buffer: idx,
                    offset,
                    size: b.size,
                })?;
            max_fixed_end = max_fixed_end.max(end);
        }
        budget = budget
            .checked_add(b.size)
            .and_then(|s| s.checked_add(b.alignment - 1))
            .and_then(|s| s.checked_add(max_fixed_end).map(|_| s))
            .ok_or(ProblemError::SizeSumOverflow(idx))?;
    }
    Ok(())
}

/// The first id (by the later index of a pair) given twice. The ids are
/// hashed, the (hash, index) pairs sorted, and only equal hashes compared:
/// 16 bytes per buffer and a parallel sort, where a hash set of the ids
/// takes three times the memory.
fn check_ids(buffers: &[Buffer]) -> Result<(), ProblemError> {
    use std::hash::BuildHasher;
    let hasher = rustc_hash::FxBuildHasher;
    let mut keys: Vec<(u64, u32)> = buffers
        .par_iter()
        .enumerate()
        .map(|(i, b)| (hasher.hash_one(b.id.as_str()), i as u32))
        .collect();
    keys.par_sort_unstable();
    // Per run of equal hashes, the first index whose id an earlier index
    // of the run has: (second, first).
    let mut found: Option<(u32, u32)> = None;
    for run in keys.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
        for (k, &(_, second)) in run.iter().enumerate().skip(1) {
            if found.is_some_and(|(s, _)| s < second) {
                break;
            }
            let id = &buffers[second as usize].id;
            if let Some(&(_, first)) = run[..k]
                .iter()
                .find(|&&(_, f)| buffers[f as usize].id == *id)
            {
                found = Some((second, first));
                break;
            }
        }
    }
    match found {
        Some((second, first)) => Err(ProblemError::DuplicateId {
            id: buffers[second as usize].id.clone(),
            first: BufferIdx(first),
            second: BufferIdx(second),
        }),
        None => Ok(()),
    }
}

/// The first pair of fixed buffers that overlap. The fixed ones are
/// gathered first, in parallel (the sweep passes over them several times;
/// most problems have none or a few).
fn check_fixed(buffers: &[Buffer], gaps: &Gaps) -> Result<(), ProblemError> {
    let fixed: Vec<(BufferIdx, u64)> = buffers
        .par_iter()
        .enumerate()
        .filter_map(|(i, b)| b.fixed_offset.map(|o| (BufferIdx::new(i), o)))
        .collect();
    if fixed.len() < 2 {
        return Ok(());
    }
    match crate::geometry::overlap::first_overlap(buffers, gaps, fixed.iter().copied()) {
        None => Ok(()),
        Some((a, b)) => {
            let (first, second) = if a < b { (a, b) } else { (b, a) };
            Err(ProblemError::FixedOverlap {
                first,
                second,
                first_id: buffers[first.index()].id.clone(),
                second_id: buffers[second.index()].id.clone(),
            })
        }
    }
}

/// The distinct alignments of `buffers`, in increasing order: gathered in
/// small sorted vectors by chunks in parallel (a handful of values in
/// practice; a sort of millions of alignments took a tenth of a second,
/// which a stop may not wait), with a sort of all of them past
/// [`DISTINCT_ALIGNMENTS_MAX`].
fn distinct_alignments(buffers: &[Buffer]) -> Vec<u64> {
    let few = buffers
        .par_chunks(1 << 16)
        .map(|chunk| {
            let mut distinct: Vec<u64> = Vec::new();
            let mut last = None;
            for b in chunk {
                if last != Some(b.alignment) {
                    last = Some(b.alignment);
                    distinct = union(distinct, &[b.alignment])?;
                }
            }
            Some(distinct)
        })
        .try_reduce(Vec::new, |a, b| union(a, &b));
    few.unwrap_or_else(|| {
        let mut all: Vec<u64> = buffers.iter().map(|b| b.alignment).collect();
        all.sort_unstable();
        all.dedup();
        all
    })
}

/// The sorted union of two sorted sets, `None` past
/// [`DISTINCT_ALIGNMENTS_MAX`] values.
fn union(mut a: Vec<u64>, b: &[u64]) -> Option<Vec<u64>> {
    for &x in b {
        if let Err(at) = a.binary_search(&x) {
            if a.len() == DISTINCT_ALIGNMENTS_MAX {
                return None;
            }
            a.insert(at, x);
        }
    }
    Some(a)
}

/// Past this many distinct alignments, [`distinct_alignments`] sorts them
/// all.
const DISTINCT_ALIGNMENTS_MAX: usize = 64;

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// The parallel check answers as the in-order one: the same first
        /// error, or none (invalid lifetimes, alignments of 0, misaligned
        /// or overflowing fixed offsets, sums past `u64`).
        #[test]
        fn buffers_are_checked_as_in_order(
            spec in proptest::collection::vec(
                (0u64..4, 0u64..4, 0u8..6, 0u8..4, proptest::option::of(0u8..4)),
                0..12,
            ),
        ) {
            let sizes = [0, 1, 7, u64::MAX / 4, u64::MAX - 3, u64::MAX];
            let alignments = [0, 1, 4, 1 << 62];
            let offsets = [0, 4, 5, u64::MAX - 1];
            let buffers: Vec<super::Buffer> = spec
                .iter()
                .enumerate()
                .map(|(i, &(start, len, size, alignment, offset))| super::Buffer {
                    alignment: alignments[alignment as usize],
                    fixed_offset: offset.map(|o| offsets[o as usize]),
                    ..super::Buffer::new(format!("b{i}"), start, start + len, sizes[size as usize])
                })
                .collect();
            let checked = super::check_buffers(&buffers);
            proptest::prop_assert_eq!(
                checked.as_ref().map(|_| ()).map_err(Clone::clone),
                super::check_buffers_in_order(&buffers)
            );
            // Valid, the facts are those of the buffers.
            if let Ok(facts) = checked {
                proptest::prop_assert_eq!(facts, super::Facts::of(&buffers));
            }
        }
    }

    use super::*;

    /// The facts taken when a problem is made (the highest fixed end, the
    /// largest size) are those of its buffers, for a problem read, a
    /// subset, the hulls and no buffers (both 0); at scale too (the
    /// parallel pass).
    #[test]
    fn the_facts_taken_at_construction_are_the_buffers_own() {
        let brute = |p: &Problem| {
            let fixed_end = p
                .buffers()
                .iter()
                .filter_map(|b| b.fixed_offset.map(|o| o + b.size));
            let max_size = p.buffers().iter().map(|b| b.size).max().unwrap_or(0);
            (fixed_end.max().unwrap_or(0), max_size)
        };
        let facts = |p: &Problem| (p.fixed_end(), p.max_size());
        assert_eq!(facts(&Problem::default()), (0, 0));
        assert_eq!(facts(&Problem::new(Vec::new(), None).unwrap()), (0, 0));
        for n in [10, 70_000] {
            let mut buffers = crate::generate::generate(crate::generate::Kind::Random, n, 3)
                .problem
                .buffers()
                .to_vec();
            // Two fixed buffers far above the rest, alive at different times.
            buffers[1].start = 0;
            buffers[1].end = 1;
            buffers[1].fixed_offset = Some(1 << 40);
            buffers[2].start = 1;
            buffers[2].end = 2;
            buffers[2].fixed_offset = Some(1 << 41);
            let p = Problem::new(buffers, None).unwrap();
            assert_eq!(facts(&p), brute(&p), "{n}");
            assert_eq!(p.fixed_end(), (1 << 41) + p.buffers()[2].size, "{n}");
            assert_eq!(facts(&p.without_gaps()), brute(&p), "{n}");
            for kept in [vec![0, 1], vec![0, 3], vec![]] {
                let sub = p.subset(&kept.iter().map(|&i| BufferIdx::new(i)).collect::<Vec<_>>());
                assert_eq!(facts(&sub), brute(&sub), "{n} {kept:?}");
            }
        }
    }

    /// The distinct alignments, as a sort of all of them gives them, on
    /// either side of the switch to that sort.
    #[test]
    fn distinct_alignments_as_sorted_and_deduplicated() {
        let b = |k: u64| Buffer::new(format!("b{k}"), 0, 1, 1).aligned(k);
        for (count, distinct) in [(0, 1), (10, 1), (200, 3), (500, 64), (500, 65), (900, 300)] {
            // A scrambled sequence of `distinct` alignments.
            let buffers: Vec<Buffer> = (0..count)
                .map(|i: u64| b(1 + (i * 7919 + i / 3) % distinct))
                .collect();
            let mut expected: Vec<u64> = buffers.iter().map(|b| b.alignment).collect();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(
                distinct_alignments(&buffers),
                expected,
                "{count} {distinct}"
            );
        }
    }

    #[test]
    fn granularity_divides_every_pushed_down_offset() {
        let p = |bufs: Vec<Buffer>| Problem::new(bufs, None).unwrap().granularity();
        assert_eq!(p(vec![]), 0);
        let b = |size| Buffer::new(format!("b{size}"), 0, 1, size);
        assert_eq!(p(vec![b(12), b(8)]), 4);
        // Alignment 1 and 2 divide 4; 16 is a multiple of it.
        assert_eq!(p(vec![b(12), b(8).aligned(2), b(4).aligned(16)]), 4);
        // 6 neither divides 12 nor is a multiple of it: gcd 6; then 8
        // neither: gcd 2.
        assert_eq!(p(vec![b(12).aligned(8), b(24).aligned(6)]), 2);
        assert_eq!(p(vec![b(12), Buffer::new("f", 2, 3, 4).fixed(6)]), 2);
    }

    #[test]
    fn new_checks_invariants() {
        let ok = Problem::new(vec![Buffer::new("a", 0, 2, 4)], None).unwrap();
        assert_eq!(ok.len(), 1);
        // Zero-size buffers are valid, fixed or not.
        Problem::new(
            vec![
                Buffer::new("a", 0, 2, 0),
                Buffer::new("z", 0, 2, 0).fixed(7),
            ],
            None,
        )
        .unwrap();
        assert!(matches!(
            Problem::new(vec![Buffer::new("a", 2, 2, 1)], None),
            Err(ProblemError::EmptyLifetime {
                start: 2,
                end: 2,
                ..
            })
        ));
        assert_eq!(
            Problem::new(vec![Buffer::new("a", 0, 2, 1).aligned(0)], None),
            Err(ProblemError::ZeroAlignment(BufferIdx(0)))
        );
        assert!(matches!(
            Problem::new(vec![Buffer::new("a", 0, 2, 1).aligned(8).fixed(4)], None),
            Err(ProblemError::MisalignedOffset {
                offset: 4,
                alignment: 8,
                ..
            })
        ));
        assert!(matches!(
            Problem::new(
                vec![Buffer::new("a", 0, 2, 1), Buffer::new("a", 0, 2, 1)],
                None
            ),
            Err(ProblemError::DuplicateId {
                first: BufferIdx(0),
                second: BufferIdx(1),
                ..
            })
        ));
        assert!(matches!(
            Problem::new(
                vec![Buffer::new("a", 0, 2, u64::MAX), Buffer::new("b", 5, 6, 1)],
                None
            ),
            Err(ProblemError::SizeSumOverflow(BufferIdx(1)))
        ));
    }

    #[test]
    fn fixed_buffers_must_not_overlap() {
        let err = Problem::new(
            vec![
                Buffer::new("a", 0, 4, 8).fixed(0),
                Buffer::new("b", 4, 6, 8).fixed(0),
                Buffer::new("c", 3, 5, 8).fixed(4),
            ],
            None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "fixed buffers `a` and `c` overlap in time and address"
        );
        // Touching in time or address is fine.
        Problem::new(
            vec![
                Buffer::new("a", 0, 4, 8).fixed(0),
                Buffer::new("b", 4, 6, 8).fixed(0),
                Buffer::new("c", 3, 5, 8).fixed(8),
            ],
            None,
        )
        .unwrap();
    }

    #[test]
    fn lifetime_conversions_round_trip() {
        for l in [
            Lifetimes::HalfOpen,
            Lifetimes::Inclusive,
            Lifetimes::Exclusive,
        ] {
            let (s, e) = l.to_half_open(3, 7).unwrap();
            assert_eq!(l.from_half_open(s, e), (3, 7));
        }
        assert_eq!(Lifetimes::Inclusive.to_half_open(3, 7), Some((3, 8)));
        assert_eq!(Lifetimes::Inclusive.to_half_open(3, u64::MAX), None);
    }
}
