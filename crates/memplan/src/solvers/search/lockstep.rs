//! How the preorders share the work: lockstep threads meeting at fixed step
//! counts, so that no thread timing enters the answer, or the node-limited
//! round robin of MiniMalloc's reference.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

/// The longest interval, in steps, between two lockstep meetings.
pub const LOCKSTEP_STEPS: u64 = 4096;

/// The step count of the lockstep meeting after the one at `steps` (the
/// first is at 64): intervals double up to [`LOCKSTEP_STEPS`], so that a
/// search deciding early keeps the others waiting little, and a long one
/// meets the others rarely.
pub(super) fn next_meeting(steps: u64) -> u64 {
    if steps == 0 {
        64
    } else {
        steps.saturating_add(steps.min(LOCKSTEP_STEPS))
    }
}

/// Searches run in lockstep: they meet at the same step counts
/// ([`next_meeting`]), and all stop at the first meeting at which one of
/// them has decided.
pub(super) struct Lockstep<'p> {
    pub(super) barrier: Barrier,
    /// The first meeting at which a search had decided (`u64::MAX`: none).
    pub(super) decided_at: AtomicU64,
    /// Runs before each meeting: `pause(search, meeting)`.
    pub(super) pause: &'p (dyn Fn(usize, u64) + Sync),
}

impl Lockstep<'_> {
    /// Meeting number `meeting` (counted from 1) of search number
    /// `search`: waits for the other searches; true when one of them has
    /// decided by this meeting.
    pub(super) fn meet(&self, search: usize, meeting: u64) -> bool {
        (self.pause)(search, meeting);
        self.barrier.wait();
        self.decided_at.load(Ordering::SeqCst) <= meeting
    }

    /// Announces that this search has ended, at its last meeting.
    pub(super) fn decide(&self, meeting: u64) {
        self.decided_at.fetch_min(meeting, Ordering::SeqCst);
        self.barrier.wait();
    }
}
