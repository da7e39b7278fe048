//! Unboxing (idealloc §4, Fig. 6): from nested boxes to sparse offsets.

use std::cmp::Reverse;

use crate::solver::{Poll, Stop};

use super::elementary::{interval_coloring, overlapping};
use super::jobs::{Contents, Job};

/// When unboxing stops: `deadline`, looked at once per
/// [`Stop::EVERY_COSTLY`] jobs unboxed (at 5M buffers,
/// an unboxing takes over half a second); once passed, every call returns
/// at once, the sparse offsets left incomplete.
pub(super) struct Halt<'d> {
    deadline: &'d Stop,
    poll: Poll,
    stopped: bool,
}

impl<'d> Halt<'d> {
    pub(super) fn new(deadline: &'d Stop) -> Self {
        Halt {
            deadline,
            poll: Poll::new(),
            stopped: false,
        }
    }

    /// Counts `jobs` about to be unboxed; true once the deadline passed.
    fn stopped(&mut self, jobs: usize) -> bool {
        if !self.stopped {
            self.stopped = self.poll.tick(jobs, self.deadline).is_err();
        }
        self.stopped
    }
}

/// UnboxAll (§4, Fig. 6): gives every buffer inside `jobs` a sparse offset
/// at or above the watermark `w`. Same-size jobs are placed row by row
/// (interval graph coloring); jobs that never overlap all start at `w`;
/// otherwise each size class, largest first, is placed above the previous.
/// Stops early (some offsets left as they were) once `halt` says so.
pub(super) fn unbox_all(jobs: &[Job], w: u64, sparse: &mut [u64], halt: &mut Halt) {
    let Some(first) = jobs.first() else { return };
    if halt.stopped(jobs.len()) {
        return;
    }
    if jobs.iter().all(|j| j.size == first.size) {
        place_same_sizes(jobs, w, sparse, halt);
    } else if !any_overlap(jobs) {
        for job in jobs {
            place_job(job, w, sparse, halt);
        }
    } else {
        let mut order: Vec<u32> = (0..jobs.len() as u32).collect();
        order.sort_unstable_by_key(|&i| Reverse(jobs[i as usize].size));
        let mut w = w;
        for class in order.chunk_by(|&a, &b| jobs[a as usize].size == jobs[b as usize].size) {
            let members: Vec<&Job> = class.iter().map(|&i| &jobs[i as usize]).collect();
            w = place_same_sizes_ref(&members, w, sparse, halt);
        }
    }
}

/// PlaceSameSizes (Fig. 6): rows by interval graph coloring, each row's jobs
/// unboxed at the watermark, which then rises by the row height.
fn place_same_sizes(jobs: &[Job], w: u64, sparse: &mut [u64], halt: &mut Halt) -> u64 {
    let refs: Vec<&Job> = jobs.iter().collect();
    place_same_sizes_ref(&refs, w, sparse, halt)
}

/// PlaceSameSizes (Fig. 6) on borrowed jobs; returns the new watermark.
fn place_same_sizes_ref(jobs: &[&Job], w: u64, sparse: &mut [u64], halt: &mut Halt) -> u64 {
    let Some(first) = jobs.first() else { return w };
    let size = first.size;
    let rows = interval_coloring(jobs.iter().map(|j| (j.start, j.end)));
    for (job, &row) in jobs.iter().zip(&rows) {
        place_job(
            job,
            w.saturating_add(u64::from(row).saturating_mul(size)),
            sparse,
            halt,
        );
    }
    let used = rows.iter().max().map_or(0, |&r| u64::from(r) + 1);
    w.saturating_add(used.saturating_mul(size))
}

/// Places one job at `w`: a buffer gets the offset, a box unboxes its
/// contents from `w`, the dummy job is skipped (§5.7).
fn place_job(job: &Job, w: u64, sparse: &mut [u64], halt: &mut Halt) {
    match &job.contents {
        Contents::Buffer(i) => sparse[*i as usize] = w,
        Contents::Dummy => {}
        Contents::Boxed(contents) => unbox_all(contents, w, sparse, halt),
    }
}

/// Fig. 6 line 5, Overlap(J): true when two of `jobs` are alive at the
/// same time.
fn any_overlap(jobs: &[Job]) -> bool {
    overlapping(
        jobs.iter().map(|j| (j.start, j.end)).collect(),
        &Stop::never(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Stop;
    use crate::solvers::boxing::boxes::theorem_16;
    use crate::solvers::boxing::prelude::Prelude;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn unboxing_places_every_buffer() {
        let g = crate::generate::generate(crate::generate::Kind::Random, 500, 3);
        let prelude = Prelude::new(&g.problem, &Stop::never()).unwrap();
        assert!(prelude.jobs.len() >= 500);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let boxes = theorem_16(
            prelude.jobs.clone(),
            prelude.epsilon,
            &mut rng,
            &Stop::default(),
        );
        let mut sparse = vec![u64::MAX; 500];
        fn count(jobs: &[Job]) -> usize {
            jobs.iter()
                .map(|j| match &j.contents {
                    Contents::Boxed(c) => count(c),
                    Contents::Buffer(_) => 1,
                    Contents::Dummy => 0,
                })
                .sum()
        }
        assert_eq!(count(&boxes), 500);
        let never = Stop::default();
        unbox_all(&boxes, 0, &mut sparse, &mut Halt::new(&never));
        let missing: Vec<usize> = (0..500).filter(|&i| sparse[i] == u64::MAX).collect();
        assert!(missing.is_empty(), "{missing:?}");
        // Past the deadline, unboxing stops at its first look.
        let passed = crate::solver::SolveOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..Default::default()
        }
        .stop();
        let mut sparse = vec![u64::MAX; 500];
        unbox_all(&boxes, 0, &mut sparse, &mut Halt::new(&passed));
        assert!(sparse.iter().all(|&o| o == u64::MAX));
    }
}
