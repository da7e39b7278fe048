//! Helpers shared by the unit tests of several solvers.

use crate::geometry::fit::align_up;
use crate::problem::{Buffer, Problem};

/// The optimum by brute force: every order, each buffer dropped onto
/// the placed buffers it overlaps (every plan can be pushed down into
/// such a form, so the minimum over orders is the optimum). Ignores fixed
/// offsets: use it on problems without fixed buffers.
pub fn brute_force(p: &Problem) -> u64 {
    brute_force_plan(p).0
}

/// [`brute_force`]'s optimum and the offsets of a plan that reaches it.
pub fn brute_force_plan(p: &Problem) -> (u64, Vec<u64>) {
    brute_force_from(p, Vec::new())
}

/// The optimum by brute force over a floor: the fixed buffers of `p` at
/// their offsets, the others dropped as in [`brute_force`]. Exact when the
/// fixed buffers sit at offset 0 (a plan then pushes down onto them).
pub fn brute_force_over_floor(p: &Problem) -> u64 {
    let fixed = p
        .buffers()
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.fixed_offset.map(|o| (i, o)))
        .collect();
    brute_force_from(p, fixed).0
}

/// The optimum and a plan, with the buffers of `placed` placed first.
fn brute_force_from(p: &Problem, mut placed: Vec<(usize, u64)>) -> (u64, Vec<u64>) {
    fn go(p: &Problem, placed: &mut Vec<(usize, u64)>, best: &mut (u64, Vec<u64>)) {
        let b = p.buffers();
        if placed.len() == b.len() {
            let m = placed
                .iter()
                .map(|&(i, o)| o + b[i].size)
                .max()
                .unwrap_or(0);
            if m < best.0 {
                best.0 = m;
                best.1 = vec![0; b.len()];
                for &(i, o) in placed.iter() {
                    best.1[i] = o;
                }
            }
            return;
        }
        for i in 0..b.len() {
            if placed.iter().any(|&(j, _)| j == i) {
                continue;
            }
            let floor = placed
                .iter()
                .filter(|&&(j, _)| b[j].overlaps_in_time(&b[i]))
                .map(|&(j, o)| o + b[j].size)
                .max()
                .unwrap_or(0);
            let o = align_up(floor, b[i].alignment);
            if o + b[i].size < best.0 {
                placed.push((i, o));
                go(p, placed, best);
                placed.pop();
            }
        }
    }
    let mut best = (u64::MAX, Vec::new());
    go(p, &mut placed, &mut best);
    if p.is_empty() {
        (0, Vec::new())
    } else {
        best
    }
}

/// A problem of buffers `b0, b1, ...` given as `(start, end, size)`,
/// half-open lifetimes, no capacity.
pub fn problem(spec: &[(u64, u64, u64)]) -> Problem {
    let buffers = spec
        .iter()
        .enumerate()
        .map(|(i, &(s, e, size))| Buffer::new(format!("b{i}"), s, e, size))
        .collect();
    Problem::new(buffers, None).unwrap()
}

/// Gaps for `buffers`: every buffer of three or more steps idle in its
/// second step (the stop tests' gapped instances).
pub fn idle_in_second_step(buffers: &[Buffer]) -> crate::geometry::gaps::Gaps {
    use crate::buffer::BufferIdx;
    use crate::geometry::gaps::{Gap, Gaps};
    let gaps = buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.end - b.start >= 3)
        .map(|(i, b)| (BufferIdx::new(i), Gap::idle(b.start + 1, b.start + 2)));
    Gaps::new(buffers.len(), gaps).unwrap()
}
