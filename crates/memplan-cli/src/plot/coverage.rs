//! Coverage of pixels by many buffers: fractional areas per pixel, shade
//! levels, and runs of equal shades merged into rectangles.

use memplan::{Plan, Problem};
use std::ops::Range;

/// Maps data coordinates (time, address) to the plotting area's pixels.
pub(super) struct Pixels {
    pub(super) time: Range<f64>,
    pub(super) top: f64,
    pub(super) x: Range<f64>,
    pub(super) y: Range<f64>,
    pub(super) origin: (i32, i32),
}

impl Pixels {
    pub(super) fn fx(&self, t: f64) -> f64 {
        self.x.start
            + (t - self.time.start) / (self.time.end - self.time.start)
                * (self.x.end - self.x.start)
    }

    /// From the bottom of the area, in pixels.
    pub(super) fn fy(&self, address: f64) -> f64 {
        address / self.top * (self.y.end - self.y.start)
    }

    pub(super) fn x_of(&self, t: f64) -> i32 {
        self.fx(t).round() as i32
    }

    pub(super) fn y_of(&self, address: f64) -> i32 {
        (self.y.end - self.fy(address)).round() as i32
    }
}

/// The share of each cell covered by buffers, exactly (a buffer covers a
/// cell by the product of its overlaps in time and in address), built with
/// a 2-D difference array: O(n + cells).
pub(super) struct Coverage {
    pub(super) w: usize,
    pub(super) h: usize,
    /// Row-major, row 0 at address 0.
    pub(super) share: Vec<f64>,
}

impl Coverage {
    pub(super) fn of(
        problem: &Problem,
        plan: &Plan,
        px: &Pixels,
        cell: i32,
        (w, h): (usize, usize),
    ) -> Self {
        let cell = f64::from(cell);
        let mut diff = vec![0.0f64; (w + 1) * (h + 1)];
        let stride = w + 1;
        // What each buffer occupies: its pieces with gaps, else its hull.
        let spans = problem
            .indices()
            .zip(plan.offsets())
            .flat_map(|(i, &offset)| {
                let b = problem.buffer(i);
                let hull = problem
                    .gaps()
                    .of(i)
                    .is_empty()
                    .then_some((b.start, b.end, 0, b.size));
                let pieces = hull
                    .is_none()
                    .then(|| problem.pieces(i).map(|p| (p.start, p.end, p.lo, p.hi)))
                    .into_iter()
                    .flatten();
                hull.into_iter()
                    .chain(pieces)
                    .map(move |(start, end, lo, hi)| {
                        (
                            start,
                            end,
                            offset.saturating_add(lo),
                            offset.saturating_add(hi),
                        )
                    })
            });
        for (start, end, lo, hi) in spans {
            let cx0 = (px.fx(start as f64) - px.x.start) / cell;
            let cx1 = (px.fx(end as f64) - px.x.start) / cell;
            let cy0 = px.fy(lo as f64) / cell;
            let cy1 = px.fy(hi as f64) / cell;
            for (xa, xb, wx) in pieces(cx0, cx1, w).into_iter().flatten() {
                for (ya, yb, wy) in pieces(cy0, cy1, h).into_iter().flatten() {
                    let v = wx * wy;
                    diff[ya * stride + xa] += v;
                    diff[ya * stride + xb] -= v;
                    diff[yb * stride + xa] -= v;
                    diff[yb * stride + xb] += v;
                }
            }
        }
        // Prefix sums along rows, then along columns.
        for row in diff.chunks_mut(stride) {
            for x in 1..stride {
                row[x] += row[x - 1];
            }
        }
        for y in 1..=h {
            for x in 0..stride {
                diff[y * stride + x] += diff[(y - 1) * stride + x];
            }
        }
        let mut share = Vec::with_capacity(w * h);
        for y in 0..h {
            share.extend_from_slice(&diff[y * stride..y * stride + w]);
        }
        Coverage { w, h, share }
    }

    /// Level 0 (unused) to `levels` (full) for each cell.
    pub(super) fn levels(&self, levels: usize) -> Vec<u8> {
        debug_assert_eq!(self.share.len(), self.w * self.h);
        self.share
            .iter()
            .map(|&s| {
                if s <= 1e-9 {
                    0
                } else {
                    (s.min(1.0) * levels as f64)
                        .ceil()
                        .clamp(1.0, levels as f64) as u8
                }
            })
            .collect()
    }
}

/// The cells that `[a, b)` (in cell units) overlaps among `0..n`, as up to
/// three runs `(from, to, share of each cell)`: a partial first cell, full
/// cells, a partial last cell.
pub(super) fn pieces(a: f64, b: f64, n: usize) -> [Option<(usize, usize, f64)>; 3] {
    let a = a.clamp(0.0, n as f64);
    let b = b.clamp(0.0, n as f64);
    if b <= a || n == 0 {
        return [None, None, None];
    }
    let first = (a.floor() as usize).min(n - 1);
    let last = ((b.ceil() as usize).max(1) - 1).clamp(first, n - 1);
    if first == last {
        return [Some((first, first + 1, b - a)), None, None];
    }
    let head = Some((first, first + 1, (first + 1) as f64 - a));
    let middle = (last > first + 1).then_some((first + 1, last, 1.0));
    let tail = Some((last, last + 1, b - last as f64));
    [head, middle, tail]
}

/// A rectangle of cells of one level: columns `x0..x1`, rows `y0..y1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) x0: usize,
    pub(super) x1: usize,
    pub(super) y0: usize,
    pub(super) y1: usize,
    pub(super) level: u8,
}

/// Merges equal non-zero cells into horizontal runs, and identical runs of
/// consecutive rows into rectangles.
pub(super) fn merged_runs(levels: &[u8], w: usize, h: usize) -> Vec<Run> {
    let mut done = Vec::new();
    // Runs open at the previous row, sorted by x0.
    let mut open: Vec<Run> = Vec::new();
    for y in 0..h {
        let row = &levels[y * w..(y + 1) * w];
        let mut current = Vec::new();
        let mut x = 0;
        while x < w {
            let level = row[x];
            let start = x;
            while x < w && row[x] == level {
                x += 1;
            }
            if level > 0 {
                current.push((start, x, level));
            }
        }
        let mut next_open = Vec::with_capacity(current.len());
        let mut previous = open.into_iter().peekable();
        for (x0, x1, level) in current {
            while previous.peek().is_some_and(|r| r.x0 < x0) {
                done.extend(previous.next());
            }
            match previous.peek() {
                Some(r) if r.x0 == x0 && r.x1 == x1 && r.level == level => {
                    let mut r = *r;
                    previous.next();
                    r.y1 = y + 1;
                    next_open.push(r);
                }
                _ => next_open.push(Run {
                    x0,
                    x1,
                    y0: y,
                    y1: y + 1,
                    level,
                }),
            }
        }
        done.extend(previous);
        open = next_open;
    }
    done.extend(open);
    done
}
