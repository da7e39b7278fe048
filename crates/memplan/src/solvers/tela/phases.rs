//! Contention-based grouping into phases (TelaMalloc §5.3, Figure 9).

use crate::geometry::sweep::MaxTree;

/// Contention-based grouping (TelaMalloc §5.3, Figure 9): for thresholds of
/// 100%, 90%, ..., 0% of the peak load, every maximal run of sections whose
/// load reaches the threshold gathers the still unassigned buffers alive in
/// it into a new phase. Phases are numbered in the order found, i.e. by
/// decreasing contention. Returns the phase of each buffer of `spans`.
pub(super) fn contention_phases(load: &[u64], spans: &[(u32, u32)]) -> Vec<u32> {
    const UNASSIGNED: u32 = u32::MAX;
    let mut phase = vec![UNASSIGNED; spans.len()];
    let peak = load.iter().copied().max().unwrap_or(0);
    let mut next = 0u32;
    let mut runs: Vec<(u64, u32, u32)> = Vec::new(); // (peak, lo, hi)
    let mut label = vec![0u64; load.len()];
    let mut first = Vec::new();
    for step in (0..=10u64).rev() {
        let threshold = (u128::from(peak) * u128::from(step) / 10) as u64;
        runs.clear();
        let mut s = 0usize;
        while s < load.len() {
            if load[s] < threshold || load[s] == 0 {
                s += 1;
                continue;
            }
            let lo = s;
            let mut top = 0;
            while s < load.len() && load[s] >= threshold && load[s] > 0 {
                top = top.max(load[s]);
                s += 1;
            }
            runs.push((top, lo as u32, s as u32));
        }
        runs.sort_unstable_by_key(|&(top, lo, _)| (std::cmp::Reverse(top), lo));
        // Each unassigned buffer joins the first run (in this order) it
        // meets: label each section with its run's priority (higher first,
        // 0 outside the runs) and take the range maximum over the buffer.
        label.fill(0);
        for (rank, &(_, lo, hi)) in runs.iter().enumerate() {
            label[lo as usize..hi as usize].fill((runs.len() - rank) as u64);
        }
        let labels = crate::stop::uncut(|never| MaxTree::new(&label, never));
        first.clear();
        first.resize(runs.len(), UNASSIGNED);
        let mut joined: Vec<(u32, u32)> = Vec::new(); // (run rank, buffer)
        for (i, &(lo, hi)) in spans.iter().enumerate() {
            if phase[i] != UNASSIGNED {
                continue;
            }
            let best = labels.max(lo as usize, hi as usize);
            if best > 0 {
                joined.push(((runs.len() as u64 - best) as u32, i as u32));
            }
        }
        // Runs that gathered buffers become phases, in run order.
        joined.sort_unstable();
        for &(rank, i) in &joined {
            if first[rank as usize] == UNASSIGNED {
                first[rank as usize] = next;
                next += 1;
            }
            phase[i as usize] = first[rank as usize];
        }
    }
    // Every buffer is alive in a section of positive load, so none is left;
    // still, never leave one out.
    for p in &mut phase {
        if *p == UNASSIGNED {
            *p = next;
        }
    }
    phase
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn phases_follow_contention() {
        // Loads 10, 4, 9, 1 over four sections.
        let load = [10, 4, 9, 1];
        let spans = [(0, 1), (0, 2), (2, 3), (3, 4), (1, 2)];
        // 100%: section 0 → {0, 1}; 90%: section 2 → {2}; 40%: section 1
        // → {4}; 10%: section 3 → {3}.
        assert_eq!(contention_phases(&load, &spans), vec![0, 0, 1, 3, 2]);
        assert_eq!(contention_phases(&[], &[]), Vec::<u32>::new());
    }

    /// Figure 9 as written: for each threshold, the runs by decreasing
    /// peak, each gathering the unassigned buffers alive in it. The
    /// reference for [`contention_phases`], which finds each buffer's run by
    /// a range maximum instead.
    fn contention_phases_naive(load: &[u64], spans: &[(u32, u32)]) -> Vec<u32> {
        let mut phase = vec![None; spans.len()];
        let peak = load.iter().copied().max().unwrap_or(0);
        let mut next = 0;
        for step in (0..=10u64).rev() {
            let threshold = peak * step / 10;
            let hot = |s: usize| load[s] >= threshold && load[s] > 0;
            let mut runs = Vec::new();
            let mut s = 0;
            while s < load.len() {
                if !hot(s) {
                    s += 1;
                    continue;
                }
                let lo = s;
                while s < load.len() && hot(s) {
                    s += 1;
                }
                let top = load[lo..s].iter().copied().max().unwrap_or(0);
                runs.push((std::cmp::Reverse(top), lo, s));
            }
            runs.sort();
            for (_, lo, hi) in runs {
                let mut used = false;
                for (i, &(a, b)) in spans.iter().enumerate() {
                    if phase[i].is_none() && (a as usize) < hi && (b as usize) > lo {
                        phase[i] = Some(next);
                        used = true;
                    }
                }
                next += u32::from(used);
            }
        }
        phase.into_iter().map(|p| p.unwrap_or(next)).collect()
    }

    proptest! {
        #[test]
        fn phases_agree_with_figure_9_as_written(
            load in proptest::collection::vec(0u64..20, 1..12),
            raw in proptest::collection::vec((0u32..12, 1u32..6), 0..15),
        ) {
            let sections = load.len() as u32;
            // Spans inside the sections, over positive loads only (every
            // buffer adds to the load where it lives).
            let spans: Vec<(u32, u32)> = raw
                .iter()
                .map(|&(a, len)| (a % sections, (a % sections + len).min(sections)))
                .filter(|&(a, b)| load[a as usize..b as usize].iter().all(|&l| l > 0))
                .collect();
            prop_assert_eq!(
                contention_phases(&load, &spans),
                contention_phases_naive(&load, &spans)
            );
        }
    }
}
