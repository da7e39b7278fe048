//! The static data of one independent time group (TelaMalloc §5.3): sizes,
//! neighbours in time, time sections, the heuristics' rankings (§5.1) and
//! the contention phases (§5.3). Built once per solve, shared by every
//! capacity decided.

use super::phases::contention_phases;
use super::TelaOptions;
use crate::buffer::BufferIdx;
use crate::geometry::csr::Csr;
use crate::geometry::groups::TimeGroups;
use crate::geometry::sweep::{alive_csr, overlap_csr, section_loads, section_spans, MaxTree};
use crate::problem::{Buffer, Problem};
use crate::stop::Stop;

/// The independent time groups of a problem (§5.3: "time steps that have no
/// overlap ... subproblems that can be solved independently").
pub(super) struct Models {
    pub(super) models: Vec<Model>,
}

impl Models {
    /// The groups' models, or `None` when `stop` returns true first.
    pub(super) fn new(problem: &Problem, options: &TelaOptions, stop: &Stop) -> Option<Self> {
        // The greedy plan before may have used the whole budget.
        if stop.is_cut() {
            return None;
        }
        // The groups' sort polls too (tens of milliseconds at 1M buffers).
        let groups = TimeGroups::new(problem.buffers(), 1, stop).ok()?;
        let build = |buffers: &[Buffer], members: &[BufferIdx]| {
            Model::new(buffers, members, options.phases, options.contention, stop)
        };
        let mut models: Vec<Model> = groups
            .iter()
            .map(|members| build(problem.buffers(), members))
            .collect::<Option<_>>()?;
        // The hole rule's data, and the mirrored groups, where it may apply.
        let holes = |m: &Model| options.skyline_holes && m.evenly_loaded();
        if models.iter().any(holes) {
            let reversed = reversed_in_time(problem.buffers());
            for (model, members) in models.iter_mut().zip(groups.iter()) {
                if holes(model) {
                    let mut mirror = build(&reversed, members)?;
                    for m in [&mut *model, &mut mirror] {
                        m.starts = starts_by_section(&m.span, &m.size, m.section_load.len())?;
                    }
                    model.mirror = Some(Box::new(mirror));
                }
            }
        }
        Some(Models { models })
    }
}

/// Static data of one time group; its free buffers get local indices `0..n`.
pub(super) struct Model {
    /// Global index of each free buffer.
    pub(super) global: Vec<BufferIdx>,
    pub(super) size: Vec<u64>,
    pub(super) align: Vec<u64>,
    /// Time-section range `[lo, hi)` of each free buffer.
    pub(super) span: Vec<(u32, u32)>,
    /// Row `i`: the free buffers overlapping free buffer `i` in time.
    pub(super) adj: Csr<u32>,
    /// Row `i`: the address ranges of the fixed buffers overlapping free
    /// buffer `i` in time, sorted.
    pub(super) fixed: Csr<(u64, u64)>,
    /// Row `s`: the free buffers alive in section `s`.
    pub(super) alive: Csr<u32>,
    /// Row `s`: the address ranges of the fixed buffers alive in section
    /// `s`.
    pub(super) fixed_alive: Csr<(u64, u64)>,
    /// Whether the members alive in each section are a subset of those
    /// alive in no other section.
    pub(super) maximal: Vec<bool>,
    /// Phase of each free buffer; phases are numbered by decreasing
    /// contention (§5.3).
    pub(super) phase: Vec<u32>,
    /// Row `p`: the members of phase `p`, in increasing order; the rows'
    /// ranges index the lists of `ranked`.
    pub(super) phases: Csr<u32>,
    /// The members of each phase, phase after phase as in `phases`, sorted
    /// within each phase by each heuristic in turn (see
    /// [`Model::rankings`]).
    pub(super) ranked: Vec<Vec<u32>>,
    /// All free buffers sorted by each heuristic (runs without phases).
    pub(super) ranked_all: Vec<Vec<u32>>,
    /// Position of each free buffer in each list of `ranked_all`.
    pub(super) rank: Vec<Vec<u32>>,
    /// Lifetime of each free buffer.
    pub(super) lifetime: Vec<u64>,
    /// Contention of each free buffer (§3.1: the highest load over its
    /// lifetime, fixed buffers included).
    pub(super) contention: Vec<u64>,
    /// From the first start to the last end of the group's members.
    pub(super) horizon: u64,
    /// Load of every section: the sizes of the members alive there, fixed
    /// ones included.
    pub(super) section_load: Vec<u64>,
    /// Row `s`: the free buffers starting at section `s`, by end
    /// descending, then size descending, then index: identical buffers
    /// (same sections, same size) are adjacent (the moves of
    /// `holes.rs`). Empty unless the skyline holes may apply.
    pub(super) starts: Csr<u32>,
    /// The same group with time reversed (same local indices), when
    /// [`TelaOptions::skyline_holes`] is on and the hole rule may apply
    /// (`holes.rs`): its runs fill the skyline from the other end.
    pub(super) mirror: Option<Box<Model>>,
}

impl Model {
    /// Builds the group of `members` (global indices, fixed ones included),
    /// or `None` when `stop` returns true first. O(n log n + pairs +
    /// sections + Σ ranges) time and memory; the clock is polled throughout.
    pub(super) fn new(
        buffers: &[Buffer],
        members: &[BufferIdx],
        phases: bool,
        contention: bool,
        stop: &Stop,
    ) -> Option<Self> {
        let (spans, section_count) =
            section_spans(members.iter().map(|b| &buffers[b.index()]), stop).ok()?;
        let (free, fixed): (Vec<usize>, Vec<usize>) =
            (0..members.len()).partition(|&m| buffers[members[m].index()].fixed_offset.is_none());
        let buf = |m: usize| &buffers[members[m].index()];
        let free_buffers: Vec<&Buffer> = free.iter().map(|&m| buf(m)).collect();
        let fixed_buffers: Vec<&Buffer> = fixed.iter().map(|&f| buf(f)).collect();
        let span: Vec<(u32, u32)> = free.iter().map(|&m| spans[m]).collect();

        let adj = overlap_csr(&span, stop).ok().flatten()?;
        let fixed_ranges = fixed_overlaps(&free_buffers, &fixed_buffers, stop)?;
        let alive = alive_csr(&span, section_count, stop).ok().flatten()?;
        let fixed_spans: Vec<(u32, u32)> = fixed.iter().map(|&f| spans[f]).collect();
        let fixed_alive = alive_csr(&fixed_spans, section_count, stop)
            .ok()
            .flatten()?
            .map(|&k| address_range(fixed_buffers[k as usize]));
        let maximal = maximal_sections(&spans, section_count);

        // Load of every member in each section, for the phases.
        let load = section_loads(
            members
                .iter()
                .zip(&spans)
                .map(|(b, &span)| (span, buffers[b.index()].size)),
            section_count,
        );
        if stop.is_cut() {
            return None;
        }
        let phase = if phases {
            contention_phases(&load, &span)
        } else {
            vec![0; free.len()]
        };
        let keys = Model::rankings(&free_buffers, &span, &load, contention);
        let lists = RankedLists::new(&keys, &phase)?;
        let loads = crate::stop::uncut(|never| MaxTree::new(&load, never));
        let peaks = span
            .iter()
            .map(|&(lo, hi)| loads.max(lo as usize, hi as usize))
            .collect();
        let first = members.iter().map(|b| buffers[b.index()].start).min();
        let last = members.iter().map(|b| buffers[b.index()].end).max();

        Some(Model {
            global: free.iter().map(|&m| members[m]).collect(),
            size: free_buffers.iter().map(|b| b.size).collect(),
            align: free_buffers.iter().map(|b| b.alignment).collect(),
            span,
            adj,
            fixed: fixed_ranges,
            alive,
            fixed_alive,
            maximal,
            phase,
            phases: lists.phases,
            ranked: lists.ranked,
            ranked_all: lists.ranked_all,
            rank: lists.rank,
            lifetime: free_buffers.iter().map(|b| b.lifetime()).collect(),
            contention: peaks,
            horizon: last.unwrap_or(0).saturating_sub(first.unwrap_or(0)),
            section_load: load,
            starts: Csr::new(),
            mirror: None,
        })
    }

    /// The heuristics that rank candidates, as keys (larger first) of each
    /// free buffer, in the order they take turns: with `contention`, the
    /// §3.1 baseline's contention (the highest load over the buffer's
    /// lifetime), ties by lifetime then size (the first §5.1 heuristic;
    /// §3.1's own tie-break, size × lifetime², solves fewer benchmark
    /// instances); then the three of §5.1: the longest lifetime (ties by
    /// size), the largest size (ties by lifetime), the largest area.
    pub(super) fn rankings(
        free: &[&Buffer],
        span: &[(u32, u32)],
        load: &[u64],
        contention: bool,
    ) -> Vec<Vec<u128>> {
        let lifetime = |b: &Buffer| u128::from(b.lifetime());
        let size = |b: &Buffer| u128::from(b.size);
        let mut keys = Vec::new();
        if contention {
            // Rank by the tuple, then use the rank as the key.
            let loads = crate::stop::uncut(|never| MaxTree::new(load, never));
            let tuples: Vec<(u64, u64, u64)> = (0..free.len())
                .map(|i| {
                    let (lo, hi) = span[i];
                    let peak = loads.max(lo as usize, hi as usize);
                    (peak, free[i].lifetime(), free[i].size)
                })
                .collect();
            let tuple = |i: usize| tuples[i];
            let mut order: Vec<usize> = (0..free.len()).collect();
            order.sort_unstable_by_key(|&i| (std::cmp::Reverse(tuple(i)), i));
            let mut key = vec![0u128; free.len()];
            for (rank, &i) in order.iter().enumerate() {
                key[i] = (free.len() - rank) as u128;
            }
            keys.push(key);
        }
        keys.push(free.iter().map(|b| (lifetime(b) << 64) | size(b)).collect());
        keys.push(free.iter().map(|b| (size(b) << 64) | lifetime(b)).collect());
        keys.push(free.iter().map(|b| size(b) * lifetime(b)).collect());
        keys
    }

    /// Whether the skyline holes may apply (`holes.rs`), at the capacity
    /// of its load: no buffer fixed, aligned or empty, and every section
    /// equally loaded.
    pub(super) fn evenly_loaded(&self) -> bool {
        let load = self.section_load.first();
        self.fixed_alive.values().is_empty()
            && self.align.iter().all(|&a| a <= 1)
            && self.size.iter().all(|&s| s > 0)
            && self.section_load.iter().all(|l| Some(l) == load)
    }

    pub(super) fn len(&self) -> usize {
        self.size.len()
    }

    pub(super) fn phase_count(&self) -> usize {
        self.phases.rows()
    }

    #[inline]
    pub(super) fn neighbours(&self, i: usize) -> &[u32] {
        self.adj.row(i)
    }

    #[inline]
    pub(super) fn fixed_ranges(&self, i: usize) -> &[(u64, u64)] {
        self.fixed.row(i)
    }

    #[inline]
    pub(super) fn alive_in(&self, s: usize) -> &[u32] {
        self.alive.row(s)
    }

    #[inline]
    pub(super) fn fixed_alive_in(&self, s: usize) -> &[(u64, u64)] {
        self.fixed_alive.row(s)
    }
}

/// `buffers` with time running backwards: `[s, e)` becomes
/// `[t0 + t1 - e, t0 + t1 - s)` over their time range `[t0, t1)`.
fn reversed_in_time(buffers: &[Buffer]) -> Vec<Buffer> {
    let t0 = buffers.iter().map(|b| b.start).min().unwrap_or(0);
    let t1 = buffers.iter().map(|b| b.end).max().unwrap_or(0);
    buffers
        .iter()
        .map(|b| {
            let mut r = b.clone();
            (r.start, r.end) = (t0 + t1 - b.end, t0 + t1 - b.start);
            r
        })
        .collect()
}

/// The address range `[offset, offset + size)` of a fixed buffer.
fn address_range(b: &Buffer) -> (u64, u64) {
    let o = b.fixed_offset.unwrap_or(0);
    (o, o + b.size)
}

/// Row `i`: the address ranges of the `fixed` buffers that overlap
/// `free[i]` in time, sorted. `None` once `stop` cuts (checked every
/// [`Stop::EVERY_COSTLY`] rows) or when the ranges overflow `u32` indices.
fn fixed_overlaps(free: &[&Buffer], fixed: &[&Buffer], stop: &Stop) -> Option<Csr<(u64, u64)>> {
    let mut rows = Csr::new();
    for (k, b) in free.iter().enumerate() {
        if stop.every_costly(k).is_err() {
            return None;
        }
        rows.push_row(
            fixed
                .iter()
                .filter(|f| f.overlaps_in_time(b))
                .map(|f| address_range(f)),
        )?;
        rows.row_mut(k).sort_unstable();
    }
    Some(rows)
}

/// Row `s`: the free buffers starting at section `s`, by end descending,
/// then size descending, then index. `None` when they overflow `u32`
/// indices.
fn starts_by_section(span: &[(u32, u32)], size: &[u64], section_count: usize) -> Option<Csr<u32>> {
    let lo: Vec<u32> = span.iter().map(|s| s.0).collect();
    let mut starts = Csr::by_key(&lo, section_count)?;
    for s in 0..section_count {
        starts.row_mut(s).sort_unstable_by_key(|&i| {
            let i = i as usize;
            (std::cmp::Reverse(span[i].1), std::cmp::Reverse(size[i]), i)
        });
    }
    Some(starts)
}

/// Maximal sections (MiniMalloc §6.2), given every member's section range:
/// a member starts where it starts and one ends where it ends. Every other
/// section's buffers are a subset of a neighbour's.
fn maximal_sections(spans: &[(u32, u32)], section_count: usize) -> Vec<bool> {
    let mut starts = vec![false; section_count];
    let mut ends = vec![false; section_count];
    for &(lo, hi) in spans {
        starts[lo as usize] = true;
        ends[hi as usize - 1] = true;
    }
    (0..section_count).map(|s| starts[s] && ends[s]).collect()
}

/// Sorts buffer indices by decreasing `key`, ties by index.
fn by_key(key: &[u128]) -> impl Fn(&u32) -> (std::cmp::Reverse<u128>, u32) + '_ {
    move |&i| (std::cmp::Reverse(key[i as usize]), i)
}

/// The lists the candidates are drawn from (§5.1, §5.3), given the keys of
/// [`Model::rankings`] and the phase of each free buffer.
struct RankedLists {
    phases: Csr<u32>,
    ranked: Vec<Vec<u32>>,
    ranked_all: Vec<Vec<u32>>,
    rank: Vec<Vec<u32>>,
}

impl RankedLists {
    /// `None` when the free buffers overflow `u32` indices.
    fn new(keys: &[Vec<u128>], phase: &[u32]) -> Option<Self> {
        let n = phase.len();
        let phase_count = phase.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
        let phases = Csr::by_key(phase, phase_count)?;
        let ranked_all: Vec<Vec<u32>> = keys
            .iter()
            .map(|key| {
                let mut all: Vec<u32> = (0..n as u32).collect();
                all.sort_unstable_by_key(by_key(key));
                all
            })
            .collect();
        let ranked = keys
            .iter()
            .map(|key| {
                let mut list = phases.values().to_vec();
                for p in 0..phase_count {
                    list[phases.range(p)].sort_unstable_by_key(by_key(key));
                }
                list
            })
            .collect();
        let rank = ranked_all
            .iter()
            .map(|list| {
                let mut rank = vec![0u32; n];
                for (r, &j) in list.iter().enumerate() {
                    rank[j as usize] = r as u32;
                }
                rank
            })
            .collect();
        Some(RankedLists {
            phases,
            ranked,
            ranked_all,
            rank,
        })
    }
}
