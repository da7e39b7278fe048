//! The stop token: when work must stop (a wall-clock instant, cancel
//! flags) and how often a loop looks ([`Stop::every`]). Every routine that
//! can be cut takes a `&Stop` and returns `Result<_, Cut>`; work that must
//! run to its end is given [`Stop::never`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What cut a solve short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The time limit ran out.
    TimeLimit,
    /// The cancel flag was raised (Ctrl-C, SIGTERM, a caller's cancel).
    Interrupted,
}

impl Stopped {
    /// The name used in reports: `time_limit` or `interrupted`.
    pub fn name(self) -> &'static str {
        match self {
            Stopped::TimeLimit => "time_limit",
            Stopped::Interrupted => "interrupted",
        }
    }
}

/// Why a routine was cut short: its token's cancel flags were raised
/// ([`Stopped::Interrupted`]), or its instant passed or its budget of looks
/// ran out ([`Stopped::TimeLimit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut(pub Stopped);

/// Shared stop flags: raised when any of them is. All `Cancel` values
/// compare equal (the flags are not part of what a solve means).
#[derive(Clone, Debug, Default)]
pub struct Cancel(Vec<Arc<AtomicBool>>);

impl Cancel {
    /// A flag that `flag.store(true)` raises.
    pub fn new(flag: Arc<AtomicBool>) -> Self {
        Cancel(vec![flag])
    }

    /// These flags and `flag`.
    pub fn with(&self, flag: Arc<AtomicBool>) -> Self {
        let mut flags = self.0.clone();
        flags.push(flag);
        Cancel(flags)
    }

    /// Whether there is a flag at all (without one, nothing can raise it).
    pub fn has_flags(&self) -> bool {
        !self.0.is_empty()
    }

    /// True once any flag is raised.
    pub fn is_raised(&self) -> bool {
        self.0.iter().any(|f| f.load(Ordering::Relaxed))
    }
}

impl PartialEq for Cancel {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Cancel {}

/// When work must stop: an optional instant, cancel flags and an optional
/// budget of looks. The default token is [`Stop::never`]. Clones share the
/// flags and the budget.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    at: Option<Instant>,
    cancel: Cancel,
    /// Looks left before the token cuts (counted over every thread).
    looks: Option<Arc<AtomicU64>>,
}

impl Stop {
    /// Units of cheap work (a copy, a count, a comparison, a step of a
    /// pass in memory order) between two looks in [`Stop::every`].
    pub const EVERY: usize = 1 << 16;

    /// Units of costly work between two looks in [`Stop::every_costly`]:
    /// a buffer placed, a binary search among millions of times (a cache
    /// miss a step), a row of a graph. Such a unit costs tens of cheap
    /// ones, so the work between two looks stays of the same order as
    /// with [`Stop::EVERY`] cheap units.
    pub const EVERY_COSTLY: usize = 1 << 10;

    /// A token that never cuts: no instant, no flag.
    pub const fn never() -> Stop {
        Stop {
            at: None,
            cancel: Cancel(Vec::new()),
            looks: None,
        }
    }

    /// A token cut at `at` (none: never by the clock) or once a flag of
    /// `cancel` is raised.
    pub fn new(at: Option<Instant>, cancel: Cancel) -> Stop {
        Stop {
            at,
            cancel,
            looks: None,
        }
    }

    /// A token that cuts at its look number `looks` (counting from 0, over
    /// every thread and clone), a work budget in looks: with one thread,
    /// cutting a routine at each of its looks in turn.
    pub fn after_looks(looks: u64) -> Stop {
        Stop {
            looks: Some(Arc::new(AtomicU64::new(looks))),
            ..Stop::default()
        }
    }

    /// How many looks are left of the budget ([`Stop::after_looks`]);
    /// `None` without one.
    pub fn looks_left(&self) -> Option<u64> {
        self.looks.as_ref().map(|l| l.load(Ordering::Relaxed))
    }

    /// A token cut `limit` from now (a limit too far away to represent
    /// means no instant: the arithmetic saturates) or by `cancel`.
    pub fn after(limit: Option<Duration>, cancel: Cancel) -> Stop {
        Stop::new(limit.and_then(|t| Instant::now().checked_add(t)), cancel)
    }

    /// `Err` once the flags are raised (checked first) or the instant has
    /// passed: one clock read and one load a flag.
    #[inline]
    pub fn check(&self) -> Result<(), Cut> {
        match self.stopped() {
            Some(why) => Err(Cut(why)),
            None => Ok(()),
        }
    }

    /// [`Stop::check`] at the `unit`-th unit of cheap work when it is a
    /// multiple of [`Stop::EVERY`] (the first unit, 0, included); `Ok`
    /// without a look otherwise.
    #[inline]
    pub fn every(&self, unit: usize) -> Result<(), Cut> {
        if unit % Self::EVERY == 0 {
            self.check()
        } else {
            Ok(())
        }
    }

    /// [`Stop::every`] for costly units: a look every
    /// [`Stop::EVERY_COSTLY`] of them.
    #[inline]
    pub fn every_costly(&self, unit: usize) -> Result<(), Cut> {
        if unit % Self::EVERY_COSTLY == 0 {
            self.check()
        } else {
            Ok(())
        }
    }

    /// True once the instant has passed or a flag is raised.
    #[inline]
    pub fn is_cut(&self) -> bool {
        self.check().is_err()
    }

    /// Whether it can ever cut: it has an instant, a cancel flag or a
    /// budget.
    pub fn can_cut(&self) -> bool {
        self.at.is_some() || self.cancel.has_flags() || self.looks.is_some()
    }

    /// Why it has cut, if it has: the cancel flags first, then the budget
    /// of looks (which this look spends), then the clock.
    pub fn stopped(&self) -> Option<Stopped> {
        if self.cancel.is_raised() {
            Some(Stopped::Interrupted)
        } else if self.budget_spent() || self.at.is_some_and(|d| Instant::now() >= d) {
            Some(Stopped::TimeLimit)
        } else {
            None
        }
    }

    /// Spends a look of the budget; true when none was left.
    fn budget_spent(&self) -> bool {
        self.looks.as_ref().is_some_and(|l| {
            l.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
        })
    }

    /// Time left before the instant; `None` without one.
    pub fn remaining(&self) -> Option<Duration> {
        self.at.map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// The same flags with the instant brought forward by `by` (passed at
    /// once when less than `by` is left): the token of work that must
    /// leave `by` to the work after it (a plan to complete and measure
    /// after a cut).
    pub fn ahead(&self, by: Duration) -> Stop {
        Stop {
            at: self
                .at
                .map(|d| d.checked_sub(by).unwrap_or_else(Instant::now)),
            ..self.clone()
        }
    }

    /// The same flags with the instant brought forward to `slice` from now
    /// when that is sooner (a slice too long to represent changes nothing).
    pub fn within(&self, slice: Duration) -> Stop {
        let at = match (self.at, Instant::now().checked_add(slice)) {
            (Some(d), Some(soon)) => Some(d.min(soon)),
            (at, soon) => at.or(soon),
        };
        Stop { at, ..self.clone() }
    }

    /// The same instant (and budget), without the cancel flags: cut by the
    /// clock alone.
    pub fn clock_only(&self) -> Stop {
        Stop {
            cancel: Cancel::default(),
            ..self.clone()
        }
    }

    /// The same instant and flags, and `flag`: raised by a racing thread to
    /// cut the others (it reads as an interrupt).
    pub fn with(&self, flag: Arc<AtomicBool>) -> Stop {
        Stop {
            cancel: self.cancel.with(flag),
            ..self.clone()
        }
    }
}

/// What `work` returns given [`Stop::never`]: nothing cuts it, so its
/// `Err` arm is never taken (were it, `T::default()`: the library does
/// not panic).
pub fn uncut<T: Default>(work: impl FnOnce(&Stop) -> Result<T, Cut>) -> T {
    work(&Stop::never()).unwrap_or_default()
}

/// Counts units of work of varying size (a row of `k` buffers is `k`
/// units) and looks at a [`Stop`] once per [`Stop::EVERY_COSTLY`] units
/// (and at the first call): a decrement a call between looks.
#[derive(Clone, Debug, Default)]
pub struct Poll {
    left: usize,
}

impl Poll {
    /// A poll that looks at its first call.
    pub fn new() -> Self {
        Poll { left: 0 }
    }

    /// Counts `units` of work; [`Stop::check`] when a look is due.
    #[inline]
    pub fn tick(&mut self, units: usize, stop: &Stop) -> Result<(), Cut> {
        if self.left > units {
            self.left -= units;
            Ok(())
        } else {
            self.left = Stop::EVERY_COSTLY;
            stop.check()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{seconds, SolveOptions};

    #[test]
    fn a_check_returns_why_it_cut() {
        let flag = Arc::new(AtomicBool::new(false));
        let stop = Stop::new(None, Cancel::new(flag.clone()));
        assert_eq!(stop.check(), Ok(()));
        assert!(!stop.is_cut() && stop.can_cut());
        flag.store(true, Ordering::Relaxed);
        assert_eq!(stop.check(), Err(Cut(Stopped::Interrupted)));
        let passed = Stop::after(Some(Duration::ZERO), Cancel::default());
        assert_eq!(passed.check(), Err(Cut(Stopped::TimeLimit)));
        assert_eq!(passed.stopped(), Some(Stopped::TimeLimit));
        // Both: the flags first.
        let both = Stop::after(Some(Duration::ZERO), Cancel::new(flag));
        assert_eq!(both.check(), Err(Cut(Stopped::Interrupted)));
    }

    #[test]
    fn a_budget_of_looks_cuts_at_its_end() {
        let stop = Stop::after_looks(3);
        assert!(stop.can_cut());
        let looks: Vec<bool> = (0..5).map(|_| stop.check().is_ok()).collect();
        assert_eq!(looks, [true, true, true, false, false]);
        assert_eq!(stop.looks_left(), Some(0));
        assert_eq!(stop.check(), Err(Cut(Stopped::TimeLimit)));
        // Clones share the budget.
        let shared = Stop::after_looks(1);
        assert!(shared.clone().check().is_ok() && shared.check().is_err());
        assert_eq!(Stop::never().looks_left(), None);
    }

    #[test]
    fn never_stop_never_cuts() {
        let never = Stop::never();
        assert!(!never.can_cut());
        assert_eq!(never.remaining(), None);
        for unit in [0, 1, Stop::EVERY, Stop::EVERY_COSTLY, usize::MAX] {
            assert_eq!(never.every(unit), Ok(()));
            assert_eq!(never.every_costly(unit), Ok(()));
        }
        assert_eq!(never.ahead(Duration::MAX).check(), Ok(()));
    }

    #[test]
    fn extra_flags_compose() {
        let (outer, racer) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let stop = Stop::new(None, Cancel::new(outer.clone()));
        let raced = stop.with(racer.clone());
        racer.store(true, Ordering::Relaxed);
        assert_eq!(raced.check(), Err(Cut(Stopped::Interrupted)));
        // The racer's flag is the composed token's only.
        assert_eq!(stop.check(), Ok(()));
        racer.store(false, Ordering::Relaxed);
        outer.store(true, Ordering::Relaxed);
        assert_eq!(raced.check(), Err(Cut(Stopped::Interrupted)));
        assert_eq!(stop.check(), Err(Cut(Stopped::Interrupted)));
        // The instant carries over.
        let timed = Stop::after(Some(Duration::ZERO), Cancel::default()).with(racer);
        assert_eq!(timed.check(), Err(Cut(Stopped::TimeLimit)));
    }

    #[test]
    fn the_policy_looks_once_per_interval() {
        let passed = Stop::after(Some(Duration::ZERO), Cancel::default());
        let looks = (0..10 * Stop::EVERY)
            .filter(|&i| passed.every(i).is_err())
            .count();
        assert_eq!(looks, 10);
        let looks = (0..10 * Stop::EVERY_COSTLY)
            .filter(|&i| passed.every_costly(i).is_err())
            .count();
        assert_eq!(looks, 10);
        assert!(passed.every(0).is_err() && passed.every(1).is_ok());
    }

    #[test]
    fn poll_is_due_first_then_once_per_period() {
        let passed = Stop::after(Some(Duration::ZERO), Cancel::default());
        let mut poll = Poll::new();
        assert!(poll.tick(1, &passed).is_err());
        let dues = (0..10 * Stop::EVERY_COSTLY)
            .filter(|_| poll.tick(1, &passed).is_err())
            .count();
        assert_eq!(dues, 10);
        // Large units count as much work.
        assert!(poll.tick(Stop::EVERY_COSTLY, &passed).is_err());
        assert!(poll.tick(Stop::EVERY_COSTLY - 1, &passed).is_ok());
        assert!(poll.tick(1, &passed).is_err());
    }

    /// No user number and no retry loop can overflow a token's
    /// arithmetic: instants saturate.
    #[test]
    fn time_limits_and_tokens_saturate() {
        assert_eq!(seconds(f64::NAN), Duration::ZERO);
        assert_eq!(seconds(-1.0), Duration::ZERO);
        assert_eq!(seconds(f64::NEG_INFINITY), Duration::ZERO);
        assert_eq!(seconds(1.5), Duration::from_millis(1500));
        for huge in [9.3e18, 1.85e19, 1e300, f64::INFINITY] {
            // 9.3e18 s is a duration, but no instant that far ahead.
            if huge >= 1.85e19 {
                assert_eq!(seconds(huge), Duration::MAX, "{huge}");
            }
            // Past what an instant can hold: no limit, never cut.
            let options = SolveOptions {
                time_limit: Some(seconds(huge)),
                ..SolveOptions::default()
            };
            let stop = options.stop();
            assert!(!stop.is_cut() && !stop.can_cut());
            assert_eq!(stop.stopped(), None);
        }
        let limited = SolveOptions {
            time_limit: Some(Duration::from_secs(3600)),
            ..SolveOptions::default()
        }
        .stop();
        // A slice doubled until it cannot be represented keeps the
        // instant it had.
        let mut slice = Duration::from_millis(1);
        for _ in 0..80 {
            let within = limited.within(slice);
            assert!(within.at.is_some() && within.at <= limited.at);
            assert!(!within.is_cut());
            slice = slice.saturating_mul(2);
        }
        assert_eq!(slice, Duration::MAX);
        assert_eq!(limited.within(Duration::MAX).at, limited.at);
        // Without an instant, a slice gives one, unless it is too long.
        let unlimited = SolveOptions::default().stop();
        assert!(unlimited
            .within(Duration::from_secs(60))
            .remaining()
            .is_some());
        assert_eq!(unlimited.within(Duration::MAX).remaining(), None);
        // Brought forward by more than is left: cut at once.
        assert!(limited.ahead(Duration::MAX).is_cut());
        assert_eq!(
            limited.ahead(Duration::MAX).check(),
            Err(Cut(Stopped::TimeLimit))
        );
        assert_eq!(unlimited.ahead(Duration::MAX).remaining(), None);
    }
}
