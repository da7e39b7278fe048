//! An interrupted search keeps the best plan it had: a process of its
//! own (the test binaries run one after another), since the search keeps
//! both cores busy for tenths of a second and the library's unit tests
//! include short time limits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memplan::generate::{generate, Kind};
use memplan::solver::Cancel;
use memplan::solvers::greedy::Greedy;
use memplan::solvers::search::Search;
use memplan::{validate, Progress, SolveOptions, Solver, Stopped};

/// A search that cannot close its problem, without a limit, interrupted
/// (a raised cancel flag, as Ctrl-C raises it) once it has published a
/// plan below its starting plan: it returns a plan at least as low as the best it
/// had published, valid, and says it was interrupted.
#[test]
fn an_interrupted_search_keeps_its_best_plan() {
    // The search improves on greedy's plan of this challenging instance
    // within tenths of a second, and does not prove its optimum for long.
    let p = generate(Kind::Challenging, 300, 7)
        .problem
        .with_capacity(None);
    let greedy = Greedy::default()
        .solve(&p, &SolveOptions::default())
        .unwrap()
        .makespan;
    let flag = Arc::new(AtomicBool::new(false));
    let progress = Progress::default();
    let options = SolveOptions {
        cancel: Cancel::new(flag.clone()),
        progress: progress.clone(),
        ..SolveOptions::default()
    };
    let (result, best_at_signal) = std::thread::scope(|scope| {
        // The first plan published is the search's start (the best greedy
        // variant); the signal comes once a lower one is published.
        let watcher = scope.spawn(|| {
            let since = Instant::now();
            let mut first = None;
            loop {
                let best = progress.best_makespan();
                first = first.or(best);
                let improved = best.is_some_and(|b| first.is_some_and(|f| b < f));
                if improved || since.elapsed() > Duration::from_secs(60) {
                    flag.store(true, Ordering::Relaxed);
                    return (first, best);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let result = Search::default().solve(&p, &options);
        flag.store(true, Ordering::Relaxed);
        (result, watcher.join().unwrap())
    });
    let (first, best) = (best_at_signal.0.unwrap(), best_at_signal.1.unwrap());
    assert!(
        best < first && first <= greedy,
        "no improvement on {first} within 60 s"
    );
    let s = result.unwrap();
    assert_eq!(validate(&p, &s.plan), Ok(()));
    assert!(
        s.makespan <= best,
        "{} above the best published {best}",
        s.makespan
    );
    assert!(!s.optimal);
    assert_eq!(s.stopped, Some(Stopped::Interrupted));
}
