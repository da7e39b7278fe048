//! A greedy plan within a deadline ([`plan_within`]): the placer and the
//! order, then the placement, each cut by the stop token; cut before the
//! index, the cheap plans of [`super::fallback`] (the bucketed one made
//! beside it when the time is short, [`plan_within_beside`]); cut later,
//! the placer's own completion (`within`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::geometry::sweep::dense_max_load;
use crate::plan::Plan;
use crate::problem::Problem;
use crate::solvers::greedy::{order, Greedy, Placer};
use crate::stop::Stop;

use super::fallback;
use super::within::{FallbackPlan, EARLY_FALLBACK_MIN};

/// From this many buffers on, when a stop can come, best fit's bucketed
/// plan ([`fallback::bucketed_best_fit`]) is made first, before the index,
/// on both cores; below, best fit is made from the index beside the
/// placement, and is ready soon enough (figures in `docs/benchmarks.md`).
pub(crate) const BEST_FIT_FIRST_MIN: usize = 1 << 21;

/// A greedy plan within a deadline ([`plan_within`]).
pub struct Within<'p> {
    /// Always complete and valid.
    pub plan: Plan,
    /// How many buffers the clock left to the fallback (or to stacking).
    pub fallback: usize,
    /// The max load, when there was time to compute it from the index.
    pub max_load: Option<u64>,
    /// The placer, when there was time to build it.
    pub placer: Option<Placer<'p>>,
    /// The plan's makespan when the pass that made it took it (the
    /// stacked plan's, the fallback's), for the solution to skip a pass
    /// of its own after a stop.
    pub makespan: Option<u64>,
    /// Whether the plan is the stacked one (every free buffer above the
    /// previous one: the clock left no time for better).
    pub stacked: bool,
}

impl Within<'_> {
    /// The stacked plan ([`fallback::stacked_measured`]'s) as the plan of
    /// a greedy run cut before its index: no placer, no max load.
    pub(crate) fn stacked((plan, fallback, makespan): fallback::Stacked) -> Self {
        Within {
            plan,
            fallback,
            max_load: None,
            placer: None,
            makespan,
            stacked: true,
        }
    }
}

/// The plan of `greedy` on `problem` with the stop token checked throughout, the
/// setup included: the placer first (cut there, the plan is
/// [`fallback::bucketed_or_stacked`]'s, which needs no index),
/// then the order (cut there, the fallback places every buffer), then the
/// placement ([`Placer::place_within`]) and the max load from the index.
/// Cut with the fallback's plan in hand on more than
/// [`IMPROVE_AFTER_INTERRUPT_MAX`](super::IMPROVE_AFTER_INTERRUPT_MAX)
/// buffers, that plan is returned at once (`stop` may be an interrupt).
pub fn plan_within<'p>(problem: &'p Problem, greedy: Greedy, stop: &Stop) -> Within<'p> {
    let large = problem.len() > super::IMPROVE_AFTER_INTERRUPT_MAX;
    let settle = if large { stop.clone() } else { Stop::never() };
    plan_within_unless(
        problem,
        greedy,
        stop,
        &settle,
        &AtomicBool::new(false),
        EARLY_FALLBACK_MIN,
        false,
    )
}

/// [`plan_within`], except that cut before the index on more than
/// [`fallback::BUCKETED_MAX`] buffers when `ready` is raised (a better
/// plan is ready elsewhere), the plan is left empty (`stacked` said, for the
/// caller to replace): the stacked plan would cost a pass for nothing.
///
/// The fallback is computed beside the order from `early_min` buffers on
/// ([`EARLY_FALLBACK_MIN`]), and nothing is made ahead when `stop` cannot
/// cut (no time limit, no cancel flag): that work on both cores grows with
/// the buffers, for a stop that cannot come.
///
/// On more than [`fallback::BUCKETED_MAX`] buffers, unless `beside`
/// (`ready` then watches a plan made beside), the stacked plan is also
/// made beside the index (from [`BEST_FIT_FIRST_MIN`] buffers, before it,
/// followed by best fit's bucketed plan, which then stands in for the
/// fallback). A stop that comes before the fallback covers
/// every buffer leaves only the stacked plan, and the index and then the
/// order beside that fallback take long at millions of buffers. The
/// stacked plan's pass over the buffers is memory-bound: made after the
/// stop, it would take most of what a stop may wait. Made beside the
/// index, it is one pass while the index takes far longer, so it is ready
/// in time. Where the fallback's plan is made beside the order, the
/// stacked plan is freed then: its 8 bytes a buffer would add to the peak
/// of memory there.
fn plan_within_unless<'p>(
    problem: &'p Problem,
    greedy: Greedy,
    stop: &Stop,
    settle: &Stop,
    ready: &AtomicBool,
    early_min: usize,
    beside: bool,
) -> Within<'p> {
    let early_min = if stop.can_cut() {
        early_min
    } else {
        usize::MAX
    };
    let prestack = early_min != usize::MAX && !beside && problem.len() > fallback::BUCKETED_MAX;
    // The stacked plan first, on this thread: were it left for another
    // to steal, it would wait for the index when every thread is busy
    // (beside the variants' density check, say), and so come after a stop.
    // At the largest sizes best fit's bucketed plan follows, on both
    // cores, before the index: made beside it or the placement, it would
    // come too late for a stop soon after the start.
    let first = prestack && problem.len() >= BEST_FIT_FIRST_MIN;
    let (prestacked, made) = if first {
        let prestacked = fallback::stacked_measured(problem);
        let made = fallback::bucketed_best_fit(problem, stop).ok().flatten();
        // Never above the stacked plan in hand (its time windows can do
        // better on a few long-lived buffers).
        let made = match (made, &prestacked) {
            (Some(made), (_, _, Some(stacked))) if *stacked < made.2 => {
                drop_later(made, problem.len());
                None
            }
            (made, _) => made,
        };
        (Some(prestacked), made.map(FallbackPlan::of))
    } else {
        (None, None)
    };
    let (prestacked, (placer, sorted)) = rayon::join(
        || prestacked.or_else(|| prestack.then(|| fallback::stacked_measured(problem))),
        || placer_and_order(problem, greedy, stop, early_min),
    );
    let Some(placer) = placer else {
        if let Some(made) = made {
            drop_later(prestacked, problem.len());
            let (plan, fallback, makespan) = made.measured();
            return Within {
                plan,
                fallback,
                max_load: None,
                placer: None,
                makespan,
                stacked: false,
            };
        }
        if problem.len() > fallback::BUCKETED_MAX && ready.load(Ordering::Acquire) {
            drop_later(prestacked, problem.len());
            return Within {
                plan: Plan::default(),
                fallback: 0,
                max_load: None,
                placer: None,
                makespan: None,
                stacked: true,
            };
        }
        // Stacked (see `bucketed_or_stacked`), its pass measures the plan.
        if problem.len() > fallback::BUCKETED_MAX {
            return Within::stacked(fallback::stacked_given(problem, prestacked));
        }
        let (plan, fallback) = fallback::bucketed_or_stacked(problem);
        return Within {
            plan,
            fallback,
            max_load: None,
            placer: None,
            makespan: None,
            stacked: false,
        };
    };
    let placed = match sorted {
        Some((sorted, max_load)) => {
            placer.place_presorted_within(sorted, max_load, prestacked, stop, settle)
        }
        None => {
            placer.place_order_within_from(greedy.order, stop, settle, early_min, prestacked, made)
        }
    };
    Within {
        plan: placed.plan,
        fallback: placed.count,
        // As when it was computed after the placement: unknown once the
        // stop has come (callers read a known max load as time to spare).
        max_load: placed.max_load.filter(|_| !stop.is_cut()),
        placer: Some(placer),
        makespan: placed.makespan,
        stacked: placed.stacked,
    }
}

/// The placer of `greedy` within `stop` and, below `early_min` buffers,
/// the order sorted beside it (with the max load when the times are dense).
#[allow(clippy::type_complexity)]
fn placer_and_order<'p>(
    problem: &'p Problem,
    greedy: Greedy,
    stop: &Stop,
    early_min: usize,
) -> (
    Option<Placer<'p>>,
    Option<(Option<Vec<BufferIdx>>, Option<u64>)>,
) {
    // Without the fallback beside the order (which needs the index), the
    // order is sorted beside the index: each alone keeps the second core
    // only partly busy.
    if problem.len() >= early_min {
        (Placer::new(problem, greedy.fit, stop).ok(), None)
    } else {
        // Beside the order too, the max load when the times are dense
        // (without the index: one pass, no sort).
        let (placer, sorted) = rayon::join(
            || Placer::new(problem, greedy.fit, stop).ok(),
            || {
                let sorted = order(problem, greedy.order, stop).ok();
                let dense = (!problem.has_gaps())
                    .then(|| dense_max_load(problem.buffers(), stop).ok().flatten())
                    .flatten();
                (sorted, dense)
            },
        );
        (placer, Some(sorted))
    }
}

/// [`plan_within`] with, on more than [`fallback::BUCKETED_MAX`] buffers
/// and when `beside` (a time limit too short for the greedy plan), the
/// bucketed plan ([`fallback::bucketed`], no index needed)
/// computed beside it from the start: a cut that leaves greedy only the
/// stacked plan (at millions of buffers, before the index is built) then
/// has the bucketed one instead, orders of magnitude lower on random
/// instances. The bucketed plan gives up
/// once the greedy plan is done, or at the stop. `stop` is the caller's
/// deadline brought forward ([`Stop::ahead`](crate::solver::Stop::ahead)),
/// `settle` its own: a cut placement may use the time between them to
/// improve on the fallback's plan (see [`Placer::place_within`]).
pub fn plan_within_beside<'p>(
    problem: &'p Problem,
    greedy: Greedy,
    stop: &Stop,
    settle: &Stop,
    beside: bool,
) -> Within<'p> {
    plan_within_beside_from(
        problem,
        greedy,
        stop,
        settle,
        beside,
        fallback::BUCKETED_MAX + 1,
    )
}

/// [`plan_within_beside`] from `min` buffers on.
pub(super) fn plan_within_beside_from<'p>(
    problem: &'p Problem,
    greedy: Greedy,
    stop: &Stop,
    settle: &Stop,
    beside: bool,
    min: usize,
) -> Within<'p> {
    if !beside || problem.len() < min {
        return plan_within_unless(
            problem,
            greedy,
            stop,
            settle,
            &AtomicBool::new(false),
            EARLY_FALLBACK_MIN,
            false,
        );
    }
    // The greedy plan done raises `done`, which cuts the bucketed plan.
    let (done, ready) = (Arc::new(AtomicBool::new(false)), AtomicBool::new(false));
    let (within, bucketed) = rayon::join(
        || {
            let within = plan_within_unless(
                problem,
                greedy,
                stop,
                settle,
                &ready,
                EARLY_FALLBACK_MIN,
                true,
            );
            done.store(true, Ordering::Relaxed);
            within
        },
        || {
            let method = fallback::Method::Colouring;
            let bucketed = fallback::bucketed(problem, method, &stop.with(done.clone())).ok();
            ready.store(bucketed.is_some(), Ordering::Release);
            bucketed
        },
    );
    match bucketed {
        Some((plan, fallback)) if within.stacked => Within {
            plan,
            fallback,
            makespan: None,
            stacked: false,
            ..within
        },
        _ => within,
    }
}
