//! Jobs (idealloc §5.2): buffers, the dummy job and boxes, all with a
//! height and a lifetime.

use crate::dispose::drop_later;
use crate::stop::{Cut, Stop};

/// What a job holds (idealloc §5.2: buffers and boxes are both jobs).
#[derive(Clone, Debug)]
pub(super) enum Contents {
    /// An input buffer.
    Buffer(u32),
    /// The dummy job of §5.6: boxed, never placed.
    Dummy,
    /// A box and the jobs inside it.
    Boxed(Vec<Job>),
}

/// A BA job: a height and a half-open lifetime.
#[derive(Clone, Debug)]
pub(super) struct Job {
    pub(super) size: u64,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) contents: Contents,
}

impl Job {
    /// Whether `t` lies in the job's lifetime: Theorem 2's R = {j : t ∈ I_j}
    /// (half-open, equivalent to §5.2's exclusive semantics per §5.4).
    pub(super) fn is_live_at(&self, t: u64) -> bool {
        self.start <= t && t < self.end
    }

    /// A box of height `size` around `contents` (non-empty), spanning their
    /// lifetimes (Lemma 1's and Theorem 2's boxes; §5.2: a job with
    /// contents).
    pub(super) fn boxed(size: u64, contents: Vec<Job>) -> Job {
        let start = contents.iter().map(|j| j.start).min().unwrap_or(0);
        let end = contents.iter().map(|j| j.end).max().unwrap_or(0);
        Job {
            size,
            start,
            end,
            contents: Contents::Boxed(contents),
        }
    }
}

/// Frees `jobs` and the boxes nested in them, one level after the other,
/// with `deadline` checked every [`Stop::EVERY_COSTLY`] jobs (a free each):
/// once it has passed,
/// what is left goes to the disposal thread ([`drop_later`]). (At
/// millions of buffers, freeing the boxes of an iteration takes longer
/// than a stop may wait.) Returns how many jobs it freed here.
pub(super) fn free(jobs: Vec<Job>, deadline: &Stop) -> usize {
    if deadline.is_cut() {
        drop_later(jobs, usize::MAX);
        return 0;
    }
    let mut stack = vec![jobs];
    let (mut freed, mut unpolled) = (0usize, 0usize);
    while let Some(mut jobs) = stack.pop() {
        for job in &mut jobs {
            if let Contents::Boxed(inner) = &mut job.contents {
                stack.push(std::mem::take(inner));
            }
        }
        freed += jobs.len();
        unpolled += jobs.len();
        drop(jobs);
        if unpolled >= Stop::EVERY_COSTLY {
            unpolled = 0;
            if deadline.is_cut() {
                drop_later(stack, usize::MAX);
                return freed;
            }
        }
    }
    freed
}

/// A copy of `jobs` (an iteration's own, which Theorem 16 consumes), made
/// [`Stop::EVERY`] jobs at a time with `deadline` checked in between; `Err`
/// once it has passed (the partial copy goes to the disposal thread). At
/// 5M buffers the copy is a quarter of a gigabyte of fresh pages, a tenth
/// of a second.
pub(super) fn copied(jobs: &[Job], deadline: &Stop) -> Result<Vec<Job>, Cut> {
    let mut copy = Vec::with_capacity(jobs.len());
    for chunk in jobs.chunks(Stop::EVERY) {
        if let Err(cut) = deadline.check() {
            drop_later(copy, usize::MAX);
            return Err(cut);
        }
        copy.extend_from_slice(chunk);
    }
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copied_unless_the_deadline_passed() {
        let jobs = tree(1, 3);
        let copy = copied(&jobs, &Stop::default()).unwrap();
        assert_eq!(format!("{copy:?}"), format!("{jobs:?}"));
        let passed = Stop::default().within(std::time::Duration::ZERO);
        assert!(copied(&jobs, &passed).is_err());
        // None, exactly one chunk, and across chunk boundaries.
        for len in [0, Stop::EVERY, Stop::EVERY + 1, 2 * Stop::EVERY + 7] {
            let jobs: Vec<Job> = (0..len)
                .map(|i| Job {
                    size: i as u64 + 1,
                    start: i as u64,
                    end: i as u64 + 2,
                    contents: Contents::Buffer(i as u32),
                })
                .collect();
            let copy = copied(&jobs, &Stop::default()).unwrap();
            assert_eq!(copy.len(), len);
            assert!(copy.iter().zip(&jobs).all(|(a, b)| a.size == b.size
                && a.start == b.start
                && matches!((&a.contents, &b.contents), (Contents::Buffer(x), Contents::Buffer(y)) if x == y)));
        }
    }

    /// `depth` levels of boxes of `width` jobs each, buffers at the bottom.
    fn tree(depth: u32, width: usize) -> Vec<Job> {
        (0..width)
            .map(|i| {
                let contents = if depth == 0 {
                    Contents::Buffer(i as u32)
                } else {
                    Contents::Boxed(tree(depth - 1, width))
                };
                Job {
                    size: 1,
                    start: 0,
                    end: 1,
                    contents,
                }
            })
            .collect()
    }

    /// All of it before the deadline; once it has passed, none of it (the
    /// disposal thread frees it).
    #[test]
    fn freeing_a_tree_of_boxes_before_or_after_the_deadline() {
        use crate::solver::SolveOptions;
        let all = 16 + 16 * 16 + 16 * 16 * 16 + 16 * 16 * 16 * 16;
        let never = SolveOptions::default().stop();
        assert_eq!(free(tree(3, 16), &never), all);
        let passed = SolveOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..SolveOptions::default()
        }
        .stop();
        assert_eq!(free(tree(3, 16), &passed), 0);
    }
}
