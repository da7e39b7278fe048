//! The skyline of a bottom-up fill (TelaMalloc §3.1, Figure 8a): for each
//! time section, the height below which every address is taken. Its flat
//! runs, each with the window of sections around it that are no higher,
//! are where a fill looks for holes and checks that they can be covered
//! (the search's exact fill, and tela's skyline holes).

/// A flat run `[p, q)` of a skyline at height `h`, and its window
/// `[ah, nh)`: one past the nearest higher section on its left, and the
/// nearest higher section on its right (the range's ends if none). Every
/// section of the window is at most `h` high.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub p: u32,
    pub q: u32,
    pub h: u64,
    pub ah: u32,
    pub nh: u32,
}

impl Run {
    /// Whether the run is a local minimum of the skyline over `[a, b)`
    /// (a *hole*): both its neighbours are higher, or ends of the range.
    #[inline]
    pub fn is_hole(&self, a: u32, b: u32) -> bool {
        (self.p == a || self.ah == self.p) && (self.q == b || self.nh == self.q)
    }
}

/// The flat runs of `height` over sections `[a, b)`, left to right, with
/// their windows, into `runs`; `stack` is scratch. O(b - a).
pub fn flat_runs(height: &[u64], a: u32, b: u32, runs: &mut Vec<Run>, stack: &mut Vec<u32>) {
    runs.clear();
    let mut k = a as usize;
    while k < b as usize {
        let h = height[k];
        let mut e = k + 1;
        while e < b as usize && height[e] == h {
            e += 1;
        }
        runs.push(Run {
            p: k as u32,
            q: e as u32,
            h,
            ah: a,
            nh: b,
        });
        k = e;
    }
    // Nearest higher runs on each side.
    let n = runs.len();
    nearest_higher(runs, stack, (0..n).rev(), |r, t| r.nh = t.p);
    nearest_higher(runs, stack, 0..n, |r, t| r.ah = t.q);
}

/// For each run visited in `order`, the nearest run visited before it that
/// is higher, given to `set(run, higher)`: a stack of runs (`stack`,
/// scratch) whose heights decrease.
fn nearest_higher(
    runs: &mut [Run],
    stack: &mut Vec<u32>,
    order: impl Iterator<Item = usize>,
    set: impl Fn(&mut Run, Run),
) {
    stack.clear();
    for r in order {
        let h = runs[r].h;
        while stack.last().is_some_and(|&t| runs[t as usize].h <= h) {
            stack.pop();
        }
        if let Some(&t) = stack.last() {
            let higher = runs[t as usize];
            set(&mut runs[r], higher);
        }
        stack.push(r as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(height: &[u64]) -> Vec<(u32, u32, u64, u32, u32, bool)> {
        let (mut runs, mut stack) = (Vec::new(), Vec::new());
        let b = height.len() as u32;
        flat_runs(height, 0, b, &mut runs, &mut stack);
        runs.iter()
            .map(|r| (r.p, r.q, r.h, r.ah, r.nh, r.is_hole(0, b)))
            .collect()
    }

    #[test]
    fn runs_windows_and_holes() {
        // 3 3 1 1 2 0 0 4
        let got = runs(&[3, 3, 1, 1, 2, 0, 0, 4]);
        assert_eq!(
            got,
            vec![
                (0, 2, 3, 0, 7, false),
                (2, 4, 1, 2, 4, true),
                (4, 5, 2, 2, 7, false),
                (5, 7, 0, 5, 7, true),
                (7, 8, 4, 0, 8, false),
            ]
        );
        // Flat: one run, a hole between the range's ends.
        assert_eq!(runs(&[5, 5, 5]), vec![(0, 3, 5, 0, 3, true)]);
        assert_eq!(runs(&[]), vec![]);
    }

    #[test]
    fn windows_hold_no_higher_section() {
        let height = [2u64, 7, 1, 1, 4, 4, 0, 9, 3, 3, 5];
        let (mut runs, mut stack) = (Vec::new(), Vec::new());
        flat_runs(&height, 0, height.len() as u32, &mut runs, &mut stack);
        for r in &runs {
            assert!((r.ah..r.nh).all(|k| height[k as usize] <= r.h), "{r:?}");
            assert!(r.ah == 0 || height[r.ah as usize - 1] > r.h, "{r:?}");
            assert!(
                r.nh as usize == height.len() || height[r.nh as usize] > r.h,
                "{r:?}"
            );
        }
    }
}
