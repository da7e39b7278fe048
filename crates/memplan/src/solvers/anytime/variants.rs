//! Every greedy variant at once: the best plan of several orders and fits,
//! in parallel, within a deadline.

use rayon::prelude::*;

use crate::buffer::BufferIdx;
use crate::dispose::drop_later;
use crate::plan::{Measured, Plan};
use crate::problem::{Buffer, Problem};
use crate::stop::{Cut, Stop};

use crate::geometry::sort::{collect, sort};

use crate::solvers::greedy::groups::DENSE_CONFLICTS;

use super::plan_within;
use crate::solvers::greedy::{order, Fit, Greedy, Order, Placer};

/// True when buffers meet more than `DENSE_CONFLICTS` others on average:
/// first-fit is then fast (the [`TimeTree`](crate::geometry::time_tree::TimeTree)) but best-fit sorts thousands
/// of conflicts per buffer. `Err` once `stop` cuts.
pub fn is_dense(problem: &Problem, stop: &Stop) -> Result<bool, Cut> {
    Ok(mean_conflicts(problem.buffers(), stop)? > DENSE_CONFLICTS)
}

/// Mean number of other buffers overlapping a buffer, in O(n log n): each
/// overlapping pair has its later start inside the other's lifetime. By
/// start order, the starts inside a lifetime follow its own, so they are
/// counted by a search outwards from there (lifetimes are mostly short).
fn mean_conflicts(buffers: &[Buffer], stop: &Stop) -> Result<u64, Cut> {
    // Stopped already: not even the pass that gathers the lifetimes.
    stop.check()?;
    let n = buffers.len();
    // Every pass polls (at 5M buffers, an unpolled gather or count kept a
    // stop waiting up to a tenth of a second), and the lifetimes are freed
    // off the caller's path.
    let mut spans: Vec<(u64, u64)> = collect(n, |i| (buffers[i].start, buffers[i].end), stop)?;
    if let Err(cut) = sort(&mut spans, stop) {
        drop_later(spans, n);
        return Err(cut);
    }
    // A chunk of costly units (a search each, longer where lifetimes are
    // long) a parallel task, the token checked before each.
    let pairs = spans
        .par_chunks(Stop::EVERY_COSTLY)
        .enumerate()
        .map(|(k, chunk)| {
            stop.check()?;
            Ok((k * Stop::EVERY_COSTLY..)
                .zip(chunk)
                .map(|(p, &(_, end))| {
                    // The first position at or after p starting at `end`
                    // or later.
                    let (mut lo, mut step) = (p, 1);
                    while lo + step < spans.len() && spans[lo + step].0 < end {
                        lo += step;
                        step *= 2;
                    }
                    let hi = (lo + step).min(spans.len());
                    let to = lo + spans[lo..hi].partition_point(|s| s.0 < end);
                    (to - p - 1) as u64
                })
                .sum::<u64>())
        })
        .try_reduce(|| 0, |a, b| Ok(a + b));
    drop_later(spans, n);
    Ok(pairs? / n.max(1) as u64)
}

/// The best plan of every greedy variant (run in parallel), ties to the
/// first in [`Greedy::all`] order. On dense problems best-fit is skipped:
/// it weighs every gap where first-fit takes the first, so there it costs
/// far more than first-fit and the skyline, and the budget is better spent
/// elsewhere. Once
/// `stop` cuts, unfinished variants are dropped; the default one
/// (size/first-fit) always returns a plan, completed by the fallback when
/// cut short ([`Placer::place_within`]).
pub fn best_variant(problem: &Problem, stop: &Stop) -> (Greedy, Plan) {
    let (greedy, best) = best_variant_measured(problem, stop);
    (greedy, best.plan)
}

/// [`best_variant`] with the plan's makespan when a pass measured it.
fn best_variant_measured(problem: &Problem, stop: &Stop) -> (Greedy, Measured) {
    let default = Greedy::default();
    // The variants' density check (a sort) beside the default plan, whose
    // start makes the plan a stop takes at scale (the stacked plan).
    let (variants, finished) = rayon::join(
        || variants(problem, stop),
        || finished(problem, default, stop),
    );
    best_of_given(problem, &variants, Some((default, finished)), stop)
        .unwrap_or_else(|| (default, Measured::default()))
}

/// The variants [`best_variant`] runs: all but best-fit on dense problems
/// (and when `stop` cut the density check: only the default variant
/// runs then anyway).
fn variants(problem: &Problem, stop: &Stop) -> Vec<Greedy> {
    let dense = is_dense(problem, stop).unwrap_or(true);
    Greedy::all()
        .filter(|g| !dense || g.fit != Fit::BestFit)
        .collect()
}

/// [`best_variant`] with the default variant's plan `default` already
/// made (by [`greedy_first`](super::greedy_first), at scale under a time
/// limit): the same plan, without placing the default variant again.
/// `default` must be complete (not cut by a stop) for that to hold.
fn best_variant_from(problem: &Problem, default: Plan, stop: &Stop) -> (Greedy, Measured) {
    let variants = variants(problem, stop);
    best_of_given(
        problem,
        &variants,
        Some((Greedy::default(), default.into())),
        stop,
    )
    .unwrap_or_else(|| (Greedy::default(), Measured::default()))
}

/// The starting plan of an exact solver: [`best_variant`]'s, from
/// `default` (`best_variant_from`) when the default variant's complete
/// plan is at hand, the variants stopped at the [`reserved`](super::reserved)
/// deadline so that the work after them (measuring, the search's first
/// poll) ends within `deadline`. The makespan comes with the plan when a
/// pass measured it (every variant's, compared; the stacked plan's).
pub fn best_variant_plan(problem: &Problem, default: Option<&Plan>, deadline: &Stop) -> Measured {
    let ahead = super::reserved(problem, deadline);
    let stop = ahead.clone();
    match default {
        Some(plan) => best_variant_from(problem, plan.clone(), &stop).1,
        None => best_variant_measured(problem, &stop).1,
    }
}

/// The best plan of `variants` (run in parallel), ties to the first listed,
/// with its makespan when a pass measured it. Once `stop` cuts,
/// unfinished variants are dropped, except `finish`, which
/// [`Placer::place_within`] completes; `None` when every variant was
/// dropped.
pub fn best_of(
    problem: &Problem,
    variants: &[Greedy],
    finish: Option<Greedy>,
    stop: &Stop,
) -> Option<(Greedy, Measured)> {
    // The variant that must finish goes first, alone: on large instances
    // its setup and placement take the whole budget, which the others
    // would otherwise share.
    let finished = finish.map(|g| (g, finished(problem, g, stop)));
    best_of_given(problem, variants, finished, stop)
}

/// The plan of the variant that must finish ([`plan_within`]), with its
/// makespan when the pass that made it measured it (the stacked plan's).
fn finished(problem: &Problem, greedy: Greedy, stop: &Stop) -> Measured {
    let within = plan_within(problem, greedy, stop);
    Measured {
        plan: within.plan,
        makespan: within.makespan,
    }
}

/// [`best_of`] with the plan of the variant that must finish given; the
/// best plan comes with its makespan, unless that variant finished alone
/// unmeasured.
fn best_of_given(
    problem: &Problem,
    variants: &[Greedy],
    finished: Option<(Greedy, Measured)>,
    stop: &Stop,
) -> Option<(Greedy, Measured)> {
    let finish = finished.as_ref().map(|(g, _)| *g);
    // One placer per fit and one order per order kind, shared by the
    // other variants; none is built once `stop` cuts.
    let others: Vec<Greedy> = variants
        .iter()
        .copied()
        .filter(|g| Some(*g) != finish)
        .collect();
    let mut fits: Vec<Fit> = others.iter().map(|g| g.fit).collect();
    let mut orders: Vec<Order> = others.iter().map(|g| g.order).collect();
    fits.sort_by_key(|f| *f as u8);
    fits.dedup();
    orders.sort_by_key(|o| *o as u8);
    orders.dedup();
    let (placers, sorted): (Vec<Option<Placer>>, Vec<Option<Vec<BufferIdx>>>) = rayon::join(
        || {
            fits.par_iter()
                .map(|&f| Placer::new(problem, f, stop).ok())
                .collect()
        },
        || {
            orders
                .par_iter()
                .map(|&o| order(problem, o, stop).ok())
                .collect()
        },
    );
    let mut plans: Vec<(u64, usize, Plan)> = others
        .par_iter()
        .filter_map(|g| {
            let placer = placers[fits.iter().position(|&f| f == g.fit)?].as_ref()?;
            let order = sorted[orders.iter().position(|&o| o == g.order)?].as_ref()?;
            let plan = if stop.is_cut() {
                None
            } else {
                placer.place(order, None, stop)
            }?;
            let i = variants.iter().position(|v| v == g)?;
            Some((plan.makespan(problem), i, plan))
        })
        .collect();
    // The orders are freed off the caller's path (tens of megabytes each
    // at millions of buffers); the placers free their index likewise.
    drop_later(sorted, problem.len());
    if let Some((g, best)) = finished {
        // Alone (the others cut), no need to measure it.
        if plans.is_empty() {
            return Some((g, best));
        }
        let i = variants
            .iter()
            .position(|v| *v == g)
            .unwrap_or(variants.len());
        plans.push((best.makespan(problem), i, best.plan));
    }
    plans
        .into_iter()
        .min_by_key(|(m, i, _)| (*m, *i))
        .map(|(makespan, i, plan)| {
            (
                variants.get(i).copied().or(finish).unwrap_or_default(),
                Measured::new(plan, makespan),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::plan::validate;

    /// Given the default variant's plan, the best variant is the one
    /// found by placing every variant (dense or not, ties to the default).
    #[test]
    fn best_variant_from_the_default_plan_is_best_variant() {
        let never = Stop::never();
        for (kind, n, seed) in [
            (Kind::Random, 800, 1),
            (Kind::Layered, 800, 2),
            (Kind::Trace, 800, 3),
            (Kind::Random, 60, 4),
        ] {
            let p = generate(kind, n, seed).problem;
            let default = plan_within(&p, Greedy::default(), &never).plan;
            let (g, plan) = best_variant(&p, &never);
            let (g_from, from) = best_variant_from(&p, default.clone(), &never);
            assert_eq!((g_from, &from.plan), (g, &plan), "{kind:?}");
            assert_eq!(validate(&p, &from.plan), Ok(()));
            // Compared with the others, the best plan comes measured.
            let makespan = plan.makespan(&p);
            assert_eq!(from.makespan, Some(makespan), "{kind:?}");
            let never_deadline = crate::solver::SolveOptions::default().stop();
            for default in [Some(&default), None] {
                let best = best_variant_plan(&p, default, &never_deadline);
                assert_eq!(best, Measured::new(plan.clone(), makespan), "{kind:?}");
            }
        }
        // Stopped at once: the default plan given is what is left, not
        // measured (no variant to compare it with).
        let p = generate(Kind::Random, 500, 5).problem;
        let default = plan_within(&p, Greedy::default(), &never).plan;
        let (g, best) = best_variant_from(&p, default.clone(), &Stop::after_looks(0));
        assert_eq!((g, best), (Greedy::default(), Measured::from(default)));
    }
}
