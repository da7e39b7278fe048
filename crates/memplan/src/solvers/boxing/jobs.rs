//! Jobs (idealloc §5.2): buffers, the dummy job and boxes, all with a
//! height and a lifetime.

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
