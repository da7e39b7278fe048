//! The portfolio users run by default: every greedy variant, then boxing
//! and the exact search (and, with a capacity, tela) in parallel within the
//! time budget, sharing a stop
//! flag so that a proof of optimality (or a plan within the capacity) ends
//! the others. Reports the best plan, who found it, and the best proven
//! lower bound.
//!
//! Progress: the portfolio publishes the best makespan and lower bound in
//! [`SolveOptions::progress`] as they improve (boxing and search publish
//! theirs while they run), for a caller to display.
//!
//! Determinism: the greedy variants, boxing (for a seed) and the search are
//! each deterministic, so the result is too whenever no member is cut short
//! by the time limit; a member stopped by the clock may stop at a different
//! point on another run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::boxing::{Boxing, BoxingOptions};
use crate::greedy::{Fit, Greedy, Order};
use crate::problem::Problem;
use crate::search::{Search, SearchOptions};
use crate::solver::{NotFoundReason, Solution, SolveError, SolveOptions, Solver};
use crate::tela::Tela;

/// Options of the portfolio.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoOptions {
    /// The exact search joins the portfolio only up to this many buffers
    /// (beyond, its time is better spent on boxing iterations).
    pub search_max_buffers: usize,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            search_max_buffers: 5000,
        }
    }
}

/// The `auto` portfolio solver. Its time limit (default: see
/// [`DEFAULT_TIME_LIMIT`]) bounds the whole run; 0 means greedy only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Auto {
    /// Which members run.
    pub options: AutoOptions,
}

/// Boxing's share of the budget (1/n) beside search: its plans rarely
/// improve after the first tenths of a second, and the exact search uses
/// the cores better (challenging D at 1 s: 5.71% with boxing running
/// throughout).
const BOXING_SHARE: u32 = 4;

/// The budget per buffer below which large instances go to boxing alone.
const SKYLINE_SECONDS_PER_BUFFER: f64 = 2e-6;

/// The budget of `auto` when the caller gives none.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(1);

impl Solver for Auto {
    fn name(&self) -> String {
        "auto".into()
    }

    fn solve_positive(
        &self,
        problem: &Problem,
        options: &SolveOptions,
    ) -> Result<Solution, SolveError> {
        let started = Instant::now();
        let limit = options.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
        let max_load = problem.max_load();
        let lower_bound = max_load.max(problem.fixed_end());
        options.progress.raise_lower_bound(lower_bound);
        if problem.len() > self.options.search_max_buffers && !limit.is_zero() {
            // Large instances: search is out of reach, and the greedy
            // variants cost tenths of a second that boxing (which starts
            // from the default, size-first greedy plan) puts to better use;
            // boxing gets the whole budget, as when it runs alone. Beside
            // it, the §3.1 skyline in two orders, dropped if unfinished at
            // the deadline (iopddl S_1: a fifth of a second, and a fifth of
            // boxing's fragmentation).
            let boxing = Boxing {
                options: BoxingOptions {
                    iterations: u32::MAX,
                    ..BoxingOptions::default()
                },
            };
            // Raised when the skyline or boxing reaches the lower bound.
            let optimal = Arc::new(AtomicBool::new(false));
            let member_options = SolveOptions {
                time_limit: Some(limit),
                cancel: options.cancel.with(optimal.clone()),
                ..options.clone()
            };
            // Only when the budget lets it finish beside boxing on two
            // cores (about 2 µs per buffer; at 1M buffers and 1 s it would
            // only slow boxing down).
            let skylines: Vec<Greedy> =
                if limit.as_secs_f64() >= problem.len() as f64 * SKYLINE_SECONDS_PER_BUFFER {
                    [Order::Contention, Order::Area]
                        .map(|order| Greedy {
                            order,
                            fit: Fit::Skyline,
                        })
                        .to_vec()
                } else {
                    Vec::new()
                };
            let until = started.checked_add(limit);
            // A thread and a one-thread pool of its own: in the global pool,
            // either solver's parallel work could wait for the other's to end
            // (trace 1M at 3 s: boxing took 4.4 s).
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().ok();
            let (boxed, skyline) = std::thread::scope(|scope| {
                let skyline = scope.spawn(|| {
                    let pool = pool.as_ref().filter(|_| !skylines.is_empty())?;
                    let found = pool.install(|| {
                        crate::greedy::best_of(problem, &skylines, None, &|| {
                            until.is_some_and(|t| Instant::now() >= t)
                                || options.cancel.is_raised()
                                || optimal.load(Ordering::Relaxed)
                        })
                    });
                    if found
                        .as_ref()
                        .is_some_and(|(_, plan)| plan.makespan(problem) <= lower_bound)
                    {
                        optimal.store(true, Ordering::Relaxed);
                    }
                    found
                });
                let boxed = boxing.solve(problem, &member_options);
                if boxed.as_ref().is_ok_and(|s| s.makespan <= lower_bound) {
                    optimal.store(true, Ordering::Relaxed);
                }
                // A panic in the skyline thread is a bug; treat it as no plan.
                (boxed, skyline.join().ok().flatten())
            });
            let boxed = boxed.map(|mut s| {
                s.found_by = Some(format!("auto/{}", boxing.name()));
                s
            });
            return match skyline {
                Some((greedy, plan)) => {
                    let sky = Solution::within_capacity(
                        problem,
                        plan,
                        max_load,
                        NotFoundReason::Heuristic,
                    )
                    .map(|mut s| {
                        s.found_by = Some(format!("auto/{}", greedy.name()));
                        s
                    });
                    better(boxed, sky)
                }
                None => boxed,
            };
        }
        // With a budget, variants still running when it ends are dropped;
        // without one (0), every variant runs.
        let greedy_until = (!limit.is_zero())
            .then(|| started.checked_add(limit))
            .flatten();
        let (greedy, greedy_plan) = crate::greedy::best_variant(problem, &|| {
            greedy_until.is_some_and(|t| Instant::now() >= t) || options.cancel.is_raised()
        });
        options.progress.improve(greedy_plan.makespan(problem));
        let mut best = Solution::within_capacity(
            problem,
            greedy_plan.clone(),
            max_load,
            NotFoundReason::Heuristic,
        );
        let greedy_name = format!("auto/{}", greedy.name());
        if let Ok(s) = &mut best {
            s.found_by = Some(greedy_name.clone());
        }
        let done = |r: &Result<Solution, SolveError>| match r {
            Ok(s) => s.optimal || problem.capacity.is_some(),
            Err(SolveError::NotFound { reason, .. }) => *reason == NotFoundReason::ProvenInfeasible,
        };
        let remaining = limit.saturating_sub(started.elapsed());
        if done(&best) || problem.is_empty() {
            return best;
        }
        if remaining.is_zero() || options.cancel.is_raised() {
            // The exact members had no time: a miss is the clock's.
            return best.map_err(|e| match e {
                SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::Heuristic,
                    best_makespan,
                    counters,
                } => SolveError::NotFound {
                    capacity,
                    reason: NotFoundReason::TimeLimit,
                    best_makespan,
                    counters,
                },
                other => other,
            });
        }
        // The members share one stop flag, raised by the first conclusive
        // answer (and by the caller's own flags).
        let stop = Arc::new(AtomicBool::new(false));
        let member_options = SolveOptions {
            time_limit: Some(remaining),
            seed: options.seed,
            cancel: options.cancel.with(stop.clone()),
            progress: options.progress.clone(),
        };
        // One deadline for all: a member that starts late (tela waits for a
        // core on two) gets what is left of its share, not a share anew.
        let members_started = Instant::now();
        let run = |solver: &dyn Solver, share: u32| {
            let left = (remaining / share).saturating_sub(members_started.elapsed());
            let options = SolveOptions {
                time_limit: Some(left),
                ..member_options.clone()
            };
            let result = solver.solve(problem, &options);
            if done(&result) {
                stop.store(true, Ordering::Relaxed);
            }
            if let Ok(s) = &result {
                options.progress.improve(s.makespan);
                options.progress.raise_lower_bound(s.lower_bound);
            }
            result.map(|mut s| {
                s.found_by = Some(format!("auto/{}", solver.name()));
                s
            })
        };
        let boxing = Boxing {
            options: BoxingOptions {
                iterations: u32::MAX,
                bootstrap: Some(greedy_plan),
                ..BoxingOptions::default()
            },
        };
        let search = Search {
            options: SearchOptions::default(),
        };
        let use_search = problem.len() <= self.options.search_max_buffers;
        // Tela decides capacities; it does not minimise better than search.
        let use_tela = use_search && problem.capacity.is_some();
        let tela = Tela::default();
        let (boxed, (searched, tela_result)) = rayon::join(
            || run(&boxing, BOXING_SHARE),
            || {
                rayon::join(
                    || use_search.then(|| run(&search, 1)),
                    || use_tela.then(|| run(&tela, 1)),
                )
            },
        );
        for result in [Some(boxed), searched, tela_result].into_iter().flatten() {
            best = better(best, result);
        }
        if let Ok(s) = &mut best {
            s.lower_bound = s.lower_bound.max(lower_bound);
            s.optimal = s.optimal || s.makespan == s.lower_bound;
            if s.found_by.is_none() {
                s.found_by = Some(greedy_name);
            }
        }
        best
    }
}

/// The better of two outcomes: a plan beats none, a lower makespan beats a
/// higher one (ties keep `a`); proofs (lower bounds, infeasibility) are
/// kept from both.
fn better(
    a: Result<Solution, SolveError>,
    b: Result<Solution, SolveError>,
) -> Result<Solution, SolveError> {
    match (a, b) {
        (Ok(mut x), Ok(y)) => {
            let bound = x.lower_bound.max(y.lower_bound);
            if y.makespan < x.makespan {
                x = y;
            }
            x.lower_bound = bound;
            x.optimal = x.optimal || x.makespan == bound;
            Ok(x)
        }
        (Ok(x), Err(e)) | (Err(e), Ok(x)) => {
            // A plan within the capacity and a proof of infeasibility
            // cannot both hold; the plan (validated by the caller) wins.
            let _ = e;
            Ok(x)
        }
        (Err(x), Err(y)) => {
            let proven = |e: &SolveError| {
                matches!(
                    e,
                    SolveError::NotFound {
                        reason: NotFoundReason::ProvenInfeasible,
                        ..
                    }
                )
            };
            let best_makespan = |e: &SolveError| match e {
                SolveError::NotFound { best_makespan, .. } => best_makespan.unwrap_or(u64::MAX),
            };
            // Keep the proof if either has one, else the reason of a member
            // that was stopped (its search might have decided) over a
            // heuristic's miss, and the lowest makespan seen.
            let heuristic = |e: &SolveError| {
                matches!(
                    e,
                    SolveError::NotFound {
                        reason: NotFoundReason::Heuristic,
                        ..
                    }
                )
            };
            let m = best_makespan(&x).min(best_makespan(&y));
            let kept = if (proven(&y) && !proven(&x)) || (heuristic(&x) && !heuristic(&y)) {
                y
            } else {
                x
            };
            let SolveError::NotFound {
                capacity,
                reason,
                counters,
                ..
            } = kept;
            Err(SolveError::NotFound {
                capacity,
                reason,
                best_makespan: (m != u64::MAX).then_some(m),
                counters,
            })
        }
    }
}

/// Plans `problem` with the default portfolio: the library's entry point.
pub fn plan(problem: &Problem, options: &SolveOptions) -> Result<Solution, SolveError> {
    Auto::default().solve(problem, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate, Kind};
    use crate::greedy::Greedy;
    use crate::plan::validate;
    use crate::solver::Cancel;

    fn options(seconds: f64) -> SolveOptions {
        SolveOptions {
            time_limit: Some(Duration::from_secs_f64(seconds)),
            ..SolveOptions::default()
        }
    }

    /// Perfect instance (zero-fragmentation plan exists) where no greedy
    /// variant reaches the max load.
    fn hard_perfect() -> Problem {
        generate(Kind::Perfect, 60, 2).problem
    }

    #[test]
    fn zero_budget_is_the_best_greedy_variant() {
        let p = hard_perfect();
        let s = plan(&p, &options(0.0)).unwrap();
        let best = Greedy::all()
            .map(|g| g.solve(&p, &SolveOptions::default()).unwrap().makespan)
            .min()
            .unwrap();
        assert_eq!(s.makespan, best);
        assert!(s.makespan > p.max_load());
        assert!(s.found_by.unwrap().starts_with("auto/greedy/"));
        assert!(!s.optimal);
    }

    #[test]
    fn progress_reports_the_best_plan_and_the_bound() {
        let p = hard_perfect();
        let options = options(0.0);
        assert_eq!(options.progress.best_makespan(), None);
        let s = plan(&p, &options).unwrap();
        assert_eq!(options.progress.best_makespan(), Some(s.makespan));
        assert_eq!(options.progress.lower_bound(), p.max_load());
        // Clones share the values; lower makespans and higher bounds win.
        let view = options.progress.clone();
        options.progress.improve(s.makespan + 1);
        options.progress.raise_lower_bound(1);
        assert_eq!(view.best_makespan(), Some(s.makespan));
        assert_eq!(view.lower_bound(), p.max_load());
    }

    #[test]
    fn budget_reaches_and_proves_the_optimum() {
        let p = hard_perfect();
        let s = plan(&p, &options(20.0)).unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert_eq!(s.makespan, p.max_load());
        assert_eq!(s.lower_bound, p.max_load());
        assert!(s.optimal);
    }

    #[test]
    fn capacity_stops_at_the_first_plan_within_it() {
        let p = hard_perfect();
        let loose = p.clone().with_capacity(Some(p.max_load() * 2));
        let s = plan(&loose, &options(20.0)).unwrap();
        assert!(s.makespan <= p.max_load() * 2);
        assert!(s.found_by.unwrap().starts_with("auto/greedy/"));
        let below = p.clone().with_capacity(Some(p.max_load() - 1));
        let e = plan(&below, &options(20.0)).unwrap_err();
        assert!(matches!(
            e,
            SolveError::NotFound {
                reason: NotFoundReason::ProvenInfeasible,
                ..
            }
        ));
    }

    #[test]
    fn raised_cancel_returns_the_greedy_plan_at_once() {
        let p = hard_perfect();
        let flag = Arc::new(AtomicBool::new(true));
        let started = Instant::now();
        let s = plan(
            &p,
            &SolveOptions {
                time_limit: Some(Duration::from_secs(60)),
                seed: 0,
                cancel: Cancel::new(flag),
                ..SolveOptions::default()
            },
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(validate(&p, &s.plan), Ok(()));
    }

    #[test]
    fn large_instances_get_boxing_and_the_skyline() {
        // "Large" lowered to 100 buffers to keep the test small.
        let auto = Auto {
            options: AutoOptions {
                search_max_buffers: 100,
            },
        };
        let p = generate(Kind::Random, 400, 3).problem;
        let s = auto.solve(&p, &options(0.3)).unwrap();
        assert_eq!(validate(&p, &s.plan), Ok(()));
        let skyline = Greedy {
            order: Order::Contention,
            fit: Fit::Skyline,
        }
        .solve(&p, &SolveOptions::default())
        .unwrap();
        let boxed = Boxing::default().solve(&p, &options(0.05)).unwrap();
        assert!(
            s.makespan <= skyline.makespan,
            "{} > {}",
            s.makespan,
            skyline.makespan
        );
        assert!(s.makespan <= boxed.makespan.max(skyline.makespan));
        let by = s.found_by.unwrap();
        assert!(by == "auto/boxing" || by.ends_with("/skyline"), "{by}");
        // The skyline reaches the max load of this layered instance (boxing's
        // first plan does not): boxing is stopped long before its budget.
        let p = generate(Kind::Layered, 400, 1).problem;
        let started = Instant::now();
        let s = auto.solve(&p, &options(20.0)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(validate(&p, &s.plan), Ok(()));
        assert!(s.optimal);
    }

    #[test]
    fn better_keeps_the_lower_makespan_and_the_higher_bound() {
        let p = hard_perfect();
        let g = Greedy::default()
            .solve(&p, &SolveOptions::default())
            .unwrap();
        let mut worse = g.clone();
        worse.makespan += 10;
        worse.lower_bound += 5;
        let b = better(Ok(worse), Ok(g.clone())).unwrap();
        assert_eq!(b.makespan, g.makespan);
        assert_eq!(b.lower_bound, g.lower_bound + 5);
        let err = SolveError::NotFound {
            capacity: 1,
            reason: NotFoundReason::TimeLimit,
            best_makespan: Some(9),
            counters: Vec::new(),
        };
        let proof = SolveError::NotFound {
            capacity: 1,
            reason: NotFoundReason::ProvenInfeasible,
            best_makespan: None,
            counters: Vec::new(),
        };
        assert_eq!(
            better(Err(err), Err(proof)).unwrap_err(),
            SolveError::NotFound {
                capacity: 1,
                reason: NotFoundReason::ProvenInfeasible,
                best_makespan: Some(9),
                counters: Vec::new(),
            }
        );
    }
}
