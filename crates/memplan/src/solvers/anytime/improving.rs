//! The start and end of a solver that improves on a plan (boxing): the
//! deadline that keeps time back for the answer, the plan to start from,
//! the index to place on and the max load, then the solution of whatever
//! plan the solver ends with, cut or not.

use std::borrow::Cow;

use super::{greedy_within, max_load_or_weakest, reserved};
use crate::plan::{Measured, Plan};
use crate::problem::Problem;
use crate::solver::{NotFoundReason, Solution, SolveError, SolveOptions, Stop};
use crate::solvers::greedy::{Fit, Greedy, Placer};

/// What a solver brings to its start ([`improving`]).
#[derive(Clone, Copy, Default)]
pub struct Bootstrap<'a, 'p> {
    /// The plan to start from, the caller's; else the portfolio's prepared
    /// greedy plan, else the default greedy plan made within the deadline.
    /// Ignored when it does not place every buffer.
    pub plan: Option<&'a Plan>,
    /// The index of the problem, built by whoever made the given plan; the
    /// harness builds one when a given plan comes without it.
    pub placer: Option<&'a Placer<'p>>,
    /// Whether the solver will improve at all: when not, a given plan with
    /// the max load known needs no index.
    pub improves: bool,
}

/// What the harness hands a solver that improves on a plan ([`improving`]).
pub struct Improving<'a> {
    /// The plan to improve on, complete and valid.
    pub plan: Plan,
    /// The index of the problem, to place orders on.
    pub placer: &'a Placer<'a>,
    /// The max load of the problem.
    pub max_load: u64,
    /// The caller's deadline brought forward by [`super::reserve`], so that
    /// a cut leaves the time to measure the plan and answer.
    pub deadline: &'a Stop,
    /// The solver's counters, reported in the solution or the error alike.
    pub counters: &'a mut [(&'static str, u64)],
}

/// Runs a solver that improves on a plan under the harness: `direct`'s
/// plan when it has one (a case the solver solves outright), else the
/// bootstrap ([`Bootstrap`]) with its index and the max load handed to
/// `improve`, whose plan is the answer; without the time for an index or
/// the max load, the bootstrap as it is. Every step works to the reserved
/// deadline, so a cut solve still returns a complete, valid plan, with
/// `counters` and the stop recorded unless the plan is proven optimal.
pub fn improving<'p>(
    problem: &'p Problem,
    options: &SolveOptions,
    bootstrap: Bootstrap<'_, 'p>,
    mut counters: Vec<(&'static str, u64)>,
    direct: impl FnOnce(&Stop) -> Option<Plan>,
    improve: impl FnOnce(Improving<'_>) -> Plan,
) -> Result<Solution, SolveError> {
    // A cut leaves time to measure the plan.
    let own = options.stop();
    let deadline = reserved(problem, &own);
    // The caller's plan, else the portfolio's greedy plan.
    let prepared = options.prepared.as_ref().and_then(|p| p.greedy.as_ref());
    let given = bootstrap
        .plan
        .or(prepared.map(|(_, plan)| plan))
        .filter(|plan| plan.offsets().len() == problem.len());
    // The max load a portfolio computed once, for every member.
    let known_load = options.prepared.as_ref().map(|p| p.max_load);
    // Every step polls the clock: cut before the index, the plan is the
    // given one or the bucketed fallback's (no index needed; the stacked
    // one if that takes too long); cut before the order, the greedy
    // fallback's; cut in the greedy placement, the fallback completes it.
    // `makespan`: the plan's, when the pass that made it took it.
    let (plan, max_load, makespan) = if let Some(plan) = direct(&deadline) {
        (plan, None, None)
    } else {
        let (placer, best, max_load, makespan) = match given {
            // Nothing to improve: the given plan, without an index.
            Some(plan) if !bootstrap.improves && known_load.is_some() => {
                (None, plan.clone(), known_load, None)
            }
            Some(plan) => {
                let placer = match bootstrap.placer {
                    Some(placer) => Some(Cow::Borrowed(placer)),
                    None => Placer::new(problem, Fit::FirstFit, &deadline)
                        .ok()
                        .map(Cow::Owned),
                };
                let max_load = known_load.or_else(|| placer.as_ref()?.max_load(&deadline));
                (placer, plan.clone(), max_load, None)
            }
            // The default greedy plan and its placer (at scale under a
            // short limit, the bucketed plan computed beside).
            None => {
                let within = greedy_within(problem, Greedy::default(), &own);
                // The stacked plan comes measured (a stop before the
                // index): no second pass over the buffers after it.
                let placer = within.placer.map(Cow::Owned);
                (placer, within.plan, within.max_load, within.makespan)
            }
        };
        match (placer, max_load) {
            (Some(placer), Some(max_load)) => {
                let best = improve(Improving {
                    plan: best,
                    placer: &placer,
                    max_load,
                    deadline: &deadline,
                    counters: &mut counters,
                });
                (best, Some(max_load), None)
            }
            _ => (best, max_load, makespan),
        }
    };
    // Without the time for it, the weakest bound.
    let max_load = max_load_or_weakest(problem, max_load, &deadline);
    // A plan over the capacity when the clock ran out: more time might
    // have found one.
    let reason = if deadline.is_cut() {
        NotFoundReason::TimeLimit
    } else {
        NotFoundReason::Heuristic
    };
    let best = Measured { plan, makespan };
    let solution = Solution::within_capacity_of_counted(problem, best, max_load, reason, counters);
    solution.map(|mut solution| {
        if !solution.optimal {
            solution.stopped = deadline.stopped();
        }
        solution
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::validate;
    use crate::solver::{Prepared, Solver, Stopped};
    use crate::solvers::greedy::tests::mixed;
    use std::sync::Arc;

    fn counters() -> Vec<(&'static str, u64)> {
        vec![("iterations", 0)]
    }

    /// A bootstrap plan that `improve` leaves as it is comes back as the
    /// answer, with the max load and the counters `improve` set; without
    /// improvement and with the max load known, `improve` is not called.
    #[test]
    fn an_unimproved_bootstrap_is_the_answer() {
        let p = mixed(crate::generate::Kind::Random, 500);
        let plan = crate::solvers::anytime::stacked(&p).0;
        let options = SolveOptions::default();
        let bootstrap = Bootstrap {
            plan: Some(&plan),
            improves: true,
            ..Bootstrap::default()
        };
        let s = improving(
            &p,
            &options,
            bootstrap,
            counters(),
            |_| None,
            |start| {
                assert_eq!(start.max_load, p.max_load());
                assert_eq!(start.plan, plan);
                start.counters[0].1 = 7;
                start.plan
            },
        )
        .unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert_eq!(s.plan, plan);
        assert_eq!(s.lower_bound, p.max_load().max(p.fixed_end()));
        assert_eq!(s.counters, vec![("iterations", 7)]);
        assert_eq!(s.stopped, None);
        let prepared = SolveOptions {
            prepared: Some(Arc::new(Prepared::bounds(&p, &Stop::never()).unwrap())),
            ..SolveOptions::default()
        };
        let still = Bootstrap {
            improves: false,
            ..bootstrap
        };
        let s = improving(
            &p,
            &prepared,
            still,
            counters(),
            |_| None,
            |_| panic!("improved without iterations"),
        )
        .unwrap();
        assert_eq!((s.plan, s.counters), (plan, counters()));
    }

    /// Without a given plan, the default greedy plan is the bootstrap; a
    /// plan found outright is the answer, with nothing improved.
    #[test]
    fn greedy_bootstraps_and_a_direct_plan_answers() {
        let p = mixed(crate::generate::Kind::Random, 500);
        let greedy = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let options = SolveOptions::default();
        let s = improving(
            &p,
            &options,
            Bootstrap::default(),
            counters(),
            |_| None,
            |start| start.plan,
        )
        .unwrap();
        assert_eq!((s.plan, s.makespan), (greedy.plan.clone(), greedy.makespan));
        let direct = crate::solvers::anytime::stacked(&p).0;
        let s = improving(
            &p,
            &options,
            Bootstrap::default(),
            counters(),
            |_| Some(direct.clone()),
            |_| panic!("improved a direct plan"),
        )
        .unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert_eq!(s.plan, direct);
    }

    /// Cut at once (a limit of 0, a raised cancel flag), the answer is still a complete, valid plan, the stop
    /// recorded.
    #[test]
    fn cut_at_once_still_answers_a_valid_plan() {
        use crate::solver::Cancel;
        use std::sync::atomic::AtomicBool;
        let p = mixed(crate::generate::Kind::Random, 3000);
        let bootstrap = Bootstrap {
            improves: true,
            ..Bootstrap::default()
        };
        let passed = SolveOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..SolveOptions::default()
        };
        let cancelled = SolveOptions {
            cancel: Cancel::new(Arc::new(AtomicBool::new(true))),
            ..SolveOptions::default()
        };
        for (options, why) in [
            (passed, Stopped::TimeLimit),
            (cancelled, Stopped::Interrupted),
        ] {
            let s = improving(
                &p,
                &options,
                bootstrap,
                counters(),
                |_| None,
                |start| start.plan,
            )
            .unwrap();
            assert_eq!(validate(&p, &s.plan), Ok(()));
            assert_eq!(s.stopped, Some(why));
            assert_eq!(s.counters, counters());
        }
    }
}
