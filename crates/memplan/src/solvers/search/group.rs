//! The static data of the search: independent time groups, each with its
//! sections, overlaps and preorder keys, and the decision of one group at a
//! capacity (MiniMalloc §7).

use super::preorder::{Preorder, PreorderKeys};
use crate::buffer::BufferIdx;
use crate::geometry::groups::TimeGroups;
use crate::geometry::sweep::{overlap_csr, section_loads, section_spans, MaxTree};
use crate::plan::Plan;
use crate::problem::{Buffer, Problem};
use crate::solver::Stop;

/// The independent time groups of a problem, each searched on its own.
pub(super) struct Groups {
    /// Each group's buffers.
    pub(super) members: TimeGroups,
    /// Static data of each group, built once for every capacity tried.
    pub(super) groups: Vec<Group>,
}

impl Groups {
    /// The groups' data; `None` when the deadline passes first (instances
    /// of many thousands of buffers).
    pub(super) fn new(problem: &Problem, decompose: bool, deadline: &Stop) -> Option<Self> {
        // The greedy plan before may have used the whole budget.
        if deadline.is_cut() {
            return None;
        }
        let members = if decompose {
            TimeGroups::new(problem.buffers(), 1, deadline).ok()?
        } else {
            TimeGroups::single(problem.len())
        };
        let groups = members
            .iter()
            .map(|m| Group::new(problem, m, deadline))
            .collect::<Option<Vec<Group>>>()?;
        Some(Groups { members, groups })
    }
}

/// Static data of one time group: free buffers get local indices `0..n`.
pub(super) struct Group {
    /// Offsets of fixed members, by member position.
    pub(super) members: Vec<(BufferIdx, Option<u64>)>,
    /// Member position of each free buffer.
    pub(super) free: Vec<usize>,
    pub(super) size: Vec<u64>,
    pub(super) align: Vec<u64>,
    /// Section range `[lo, hi)` of each free buffer.
    pub(super) sections: Vec<(u32, u32)>,
    /// Number of sections.
    pub(super) section_count: usize,
    /// Free buffers overlapping each free buffer (CSR).
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<u32>,
    /// Address ranges of fixed buffers overlapping each free buffer, sorted (CSR).
    pub(super) fixed_start: Vec<u32>,
    pub(super) fixed: Vec<(u64, u64)>,
    /// Section totals of free sizes.
    pub(super) section_load: Vec<u64>,
    /// No fixed buffer and no alignment above 1: a buffer's lowest offset
    /// is its floor.
    pub(super) plain: bool,
    /// Highest load (free buffers) over each free buffer's lifetime.
    pub(super) contention: Vec<u64>,
    pub(super) lifetime: Vec<u64>,
    /// With gaps ([`crate::geometry::gaps`]), parallel to `adj`: the effective size
    /// of a buffer for the neighbour placed above it (MiniMalloc's
    /// `effective_size`: the highest top of its pieces over the neighbour's
    /// bottoms, at the instants both occupy; 0 if never above). Empty
    /// without gaps: the buffer's size.
    pub(super) adj_size: Vec<u64>,
    /// With gaps: the pieces of each free buffer as section ranges and
    /// windows `(lo, hi, wlo, whi)` (CSR, `piece_start` has `n + 1`
    /// entries); both empty without gaps: the hull `sections[i]` with
    /// window `[0, size)`.
    pub(super) piece_start: Vec<u32>,
    pub(super) pieces: Vec<(u32, u32, u64, u64)>,
    /// No fixed member and no gap window: an exhausted search proves that
    /// no plan fits (§6.1's canonical argument holds for any conflicts
    /// between whole address ranges).
    pub(super) complete: bool,
    /// With fixed members all at offset 0 (and no gaps): the height they
    /// take at each section, the highest of their sizes there (0 where
    /// none is alive). The free buffers then lie above a floor, and a plan
    /// still lowers to one whose offsets are that floor plus sums of
    /// sizes (the exact fill's argument). `None`: no fixed member, or one
    /// above offset 0, or gaps.
    pub(super) floor: Option<Vec<u64>>,
}

impl Group {
    /// The group's plan (by member position) from the offsets of its free
    /// buffers (by local index): fixed members keep theirs.
    pub(super) fn plan(&self, free_offsets: &[u64]) -> Plan {
        let mut offsets: Vec<u64> = self.members.iter().map(|(_, o)| o.unwrap_or(0)).collect();
        for (i, &m) in self.free.iter().enumerate() {
            offsets[m] = free_offsets[i];
        }
        Plan::from_offsets(offsets)
    }
}

/// A group's members with their fixed offsets, and the member positions
/// of its free buffers.
pub(super) fn split_members(
    buffers: &[Buffer],
    members: &[BufferIdx],
) -> (Vec<(BufferIdx, Option<u64>)>, Vec<usize>) {
    let members: Vec<(BufferIdx, Option<u64>)> = members
        .iter()
        .map(|&b| (b, buffers[b.index()].fixed_offset))
        .collect();
    let free = (0..members.len())
        .filter(|&i| members[i].1.is_none())
        .collect();
    (members, free)
}

/// The time layout of a group's free buffers, as [`Group`]'s fields of the
/// same names (with or without gaps).
pub(super) struct Layout {
    pub(super) sections: Vec<(u32, u32)>,
    pub(super) section_count: usize,
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<u32>,
    pub(super) adj_size: Vec<u64>,
    pub(super) section_load: Vec<u64>,
    pub(super) contention: Vec<u64>,
    pub(super) piece_start: Vec<u32>,
    pub(super) pieces: Vec<(u32, u32, u64, u64)>,
}

impl Group {
    /// The group's data, or `None` when the deadline passes first.
    pub(super) fn new(problem: &Problem, members: &[BufferIdx], deadline: &Stop) -> Option<Self> {
        if problem.has_gaps() {
            return Self::with_gaps(problem, members, deadline);
        }
        let buffers = problem.buffers();
        let (members, free) = split_members(buffers, members);
        let buf = |i: usize| &buffers[members[free[i]].0.index()];
        let stop = deadline.clone();
        // Sections of every member (fixed ones too), kept for free buffers
        // (their sort polls the clock: tens of milliseconds at 1M buffers).
        let (spans, section_count) =
            section_spans(members.iter().map(|(b, _)| &buffers[b.index()]), &stop).ok()?;
        let sections: Vec<(u32, u32)> = free.iter().map(|&m| spans[m]).collect();
        // Section loads by a difference array, contention by range maxima:
        // O(n log n + sections) even when lifetimes span many sections.
        let section_load = section_loads(
            sections
                .iter()
                .enumerate()
                .map(|(i, &span)| (span, buf(i).size)),
            section_count,
        );
        if stop.is_cut() {
            return None;
        }
        let contention = contention(&sections, &section_load);
        let (adj_start, adj) = overlap_csr(&sections, &stop).ok().flatten()?.into_parts();
        let complete = members.iter().all(|(_, o)| o.is_none());
        let floor =
            (!complete && members.iter().all(|(_, o)| o.is_none_or(|o| o == 0))).then(|| {
                let mut floor = vec![0u64; section_count];
                for (m, (b, o)) in members.iter().enumerate() {
                    if o.is_some() {
                        let (lo, hi) = spans[m];
                        let size = buffers[b.index()].size;
                        for h in &mut floor[lo as usize..hi as usize] {
                            *h = (*h).max(size);
                        }
                    }
                }
                floor
            });
        let mut group = Group::assemble(
            buffers,
            members,
            free,
            Layout {
                sections,
                section_count,
                adj_start,
                adj,
                adj_size: Vec::new(),
                section_load,
                contention,
                piece_start: Vec::new(),
                pieces: Vec::new(),
            },
            complete,
        );
        group.floor = floor;
        Some(group)
    }

    /// [`Group::new`] with gaps: sections cut at every piece boundary,
    /// section loads summing the pieces' widths, and neighbours only the
    /// buffers whose pieces meet, each with its effective size
    /// (MiniMalloc's treatment of gaps in its sweep). Fixed members are
    /// avoided by their hulls (sound). Without gap windows the search
    /// stays complete: conflicts are then between whole address ranges.
    pub(super) fn with_gaps(
        problem: &Problem,
        members: &[BufferIdx],
        deadline: &Stop,
    ) -> Option<Self> {
        let buffers = problem.buffers();
        let (members, free) = split_members(buffers, members);
        let n = free.len();
        let (sections, section_count, piece_start, pieces) =
            piece_sections(problem, &members, &free);
        let section_load = section_loads(
            pieces
                .iter()
                .map(|&(lo, hi, wlo, whi)| ((lo, hi), whi - wlo)),
            section_count,
        );
        let contention = contention(&sections, &section_load);
        let (adj_start, adj, adj_size) = meeting_pieces(n, &piece_start, &pieces, deadline)?;
        let windows = members
            .iter()
            .any(|&(b, _)| problem.gaps().of(b).iter().any(|g| g.window.is_some()));
        let complete = members.iter().all(|(_, o)| o.is_none()) && !windows;
        Some(Group::assemble(
            buffers,
            members,
            free,
            Layout {
                sections,
                section_count,
                adj_start,
                adj,
                adj_size,
                section_load,
                contention,
                piece_start,
                pieces,
            },
            complete,
        ))
    }

    /// The group from its members, free buffers and time layout: the
    /// per-buffer columns and the fixed members' ranges each free buffer
    /// meets in time (CSR, sorted), shared by both constructors.
    pub(super) fn assemble(
        buffers: &[Buffer],
        members: Vec<(BufferIdx, Option<u64>)>,
        free: Vec<usize>,
        layout: Layout,
        complete: bool,
    ) -> Self {
        let buf = |i: usize| &buffers[members[free[i]].0.index()];
        let n = free.len();
        let fixed_members: Vec<(&Buffer, u64)> = members
            .iter()
            .filter_map(|(b, o)| o.map(|o| (&buffers[b.index()], o)))
            .collect();
        let mut fixed_start = vec![0u32];
        let mut fixed = Vec::new();
        for i in 0..n {
            let from = fixed.len();
            for &(f, o) in &fixed_members {
                if f.overlaps_in_time(buf(i)) {
                    fixed.push((o, o + f.size));
                }
            }
            fixed[from..].sort_unstable();
            fixed_start.push(fixed.len() as u32);
        }
        Group {
            plain: fixed.is_empty() && (0..n).all(|i| buf(i).alignment == 1),
            size: (0..n).map(|i| buf(i).size).collect(),
            align: (0..n).map(|i| buf(i).alignment).collect(),
            lifetime: (0..n).map(|i| buf(i).lifetime()).collect(),
            sections: layout.sections,
            section_count: layout.section_count,
            adj_start: layout.adj_start,
            adj: layout.adj,
            fixed_start,
            fixed,
            section_load: layout.section_load,
            contention: layout.contention,
            adj_size: layout.adj_size,
            piece_start: layout.piece_start,
            pieces: layout.pieces,
            members,
            free,
            complete,
            floor: None,
        }
    }

    /// The pieces of free buffer `i`: `(section lo, section hi, wlo, whi)`.
    #[inline]
    pub(super) fn pieces_of(&self, i: usize) -> impl Iterator<Item = (u32, u32, u64, u64)> + '_ {
        let hull = self.piece_start.is_empty().then(|| {
            let (lo, hi) = self.sections[i];
            (lo, hi, 0, self.size[i])
        });
        let gapped = if self.piece_start.is_empty() {
            &[][..]
        } else {
            &self.pieces[self.piece_start[i] as usize..self.piece_start[i + 1] as usize]
        };
        hull.into_iter().chain(gapped.iter().copied())
    }

    /// The preorder keys of free buffer `i`, with `total` as its section
    /// total T.
    pub(super) fn keys(&self, i: usize, total: u64) -> PreorderKeys {
        PreorderKeys {
            total,
            width: self.lifetime[i],
            area: u128::from(self.size[i]) * u128::from(self.lifetime[i]),
        }
    }

    /// Ranks of free buffers under a preorder (0 = first), from the whole
    /// problem's loads.
    pub(super) fn ranks(&self, preorder: Preorder) -> Vec<u32> {
        let n = self.size.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| {
            preorder
                .compare(
                    &self.keys(i, self.contention[i]),
                    &self.keys(j, self.contention[j]),
                )
                .then(i.cmp(&j))
        });
        let mut rank = vec![0u32; n];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r as u32;
        }
        rank
    }
}

/// The highest section load over each free buffer's sections (range
/// maxima, O(n log n + sections)).
fn contention(sections: &[(u32, u32)], section_load: &[u64]) -> Vec<u64> {
    let loads = crate::stop::uncut(|never| MaxTree::new(section_load, never));
    sections
        .iter()
        .map(|&(lo, hi)| loads.max(lo as usize, hi as usize))
        .collect()
}

/// The group's sections with gaps, cut at every lifetime and gap boundary
/// of its members: each free buffer's section range, the number of
/// sections, and its pieces `(first section, end section, lo, hi)` (CSR by
/// free buffer).
#[allow(clippy::type_complexity)]
fn piece_sections(
    problem: &Problem,
    members: &[(BufferIdx, Option<u64>)],
    free: &[usize],
) -> (Vec<(u32, u32)>, usize, Vec<u32>, Vec<(u32, u32, u64, u64)>) {
    let buffers = problem.buffers();
    let idx = |i: usize| members[free[i]].0;
    let buf = |i: usize| &buffers[idx(i).index()];
    let mut times: Vec<u64> = Vec::new();
    for &(b, _) in members {
        let x = &buffers[b.index()];
        times.extend([x.start, x.end]);
        for g in problem.gaps().of(b) {
            times.extend([g.start, g.end]);
        }
    }
    times.sort_unstable();
    times.dedup();
    let section_count = times.len().saturating_sub(1);
    let seg = |t: u64| times.partition_point(|&x| x < t) as u32;
    let sections = (0..free.len())
        .map(|i| (seg(buf(i).start), seg(buf(i).end)))
        .collect();
    let mut piece_start = vec![0u32];
    let mut pieces = Vec::new();
    for i in 0..free.len() {
        pieces.extend(
            problem
                .pieces(idx(i))
                .map(|p| (seg(p.start), seg(p.end), p.lo, p.hi)),
        );
        piece_start.push(pieces.len() as u32);
    }
    (sections, section_count, piece_start, pieces)
}

/// The neighbours of each of the `n` free buffers with gaps: the buffers
/// whose pieces meet its own, each with its effective size below the
/// neighbour (the highest over their meeting pieces), as CSR
/// `(starts, neighbours, effective sizes)`; `None` when the deadline
/// passes first.
#[allow(clippy::type_complexity)]
fn meeting_pieces(
    n: usize,
    piece_start: &[u32],
    pieces: &[(u32, u32, u64, u64)],
    deadline: &Stop,
) -> Option<(Vec<u32>, Vec<u32>, Vec<u64>)> {
    // Meeting pieces, by a sweep in start order: (i, j, effective size
    // of i below j), both ways, the highest per pair.
    let mut by_start: Vec<(u32, u32, u32)> = Vec::new();
    for i in 0..n {
        for k in piece_start[i]..piece_start[i + 1] {
            by_start.push((pieces[k as usize].0, i as u32, k));
        }
    }
    by_start.sort_unstable();
    let mut pairs: Vec<(u32, u32, u64)> = Vec::new();
    for (a, &(_, i, k)) in by_start.iter().enumerate() {
        if deadline.every_costly(a).is_err() {
            return None;
        }
        let (_, end, ilo, ihi) = pieces[k as usize];
        for &(_, j, q) in by_start[a + 1..].iter().take_while(|x| x.0 < end) {
            if i == j {
                continue;
            }
            let (_, _, jlo, jhi) = pieces[q as usize];
            pairs.push((i, j, ihi.saturating_sub(jlo)));
            pairs.push((j, i, jhi.saturating_sub(ilo)));
        }
    }
    pairs.sort_unstable();
    // The highest effective size of each pair is last of its run.
    pairs.dedup_by(|later, earlier| {
        let same = later.0 == earlier.0 && later.1 == earlier.1;
        if same {
            earlier.2 = earlier.2.max(later.2);
        }
        same
    });
    let mut adj_start = vec![0u32; n + 1];
    for &(i, _, _) in &pairs {
        adj_start[i as usize + 1] += 1;
    }
    for i in 0..n {
        adj_start[i + 1] = adj_start[i].checked_add(adj_start[i + 1])?;
    }
    let adj = pairs.iter().map(|p| p.1).collect();
    let adj_size = pairs.iter().map(|p| p.2).collect();
    Some((adj_start, adj, adj_size))
}
