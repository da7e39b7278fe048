//! Options, solving, reading solutions, capacities, time limits and
//! cancellation from another thread.

use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use planner::generate::{generate, Kind};
use planner::{validate, Plan};

use super::*;
use planner::solvers::names as solver_names;

/// Checks the plan of `s` against the library's problem independently.
#[track_caller]
fn assert_valid(library: &planner::Problem, s: &Read) {
    let plan = Plan::from_offsets(s.offsets.clone());
    validate(library, &plan).unwrap();
    assert_eq!(s.makespan, plan.makespan(library));
    assert_eq!(s.max_load, library.max_load());
    assert!(s.lower_bound >= s.max_load && s.lower_bound <= s.makespan);
    assert_eq!(s.optimal, s.lower_bound == s.makespan);
    assert!(s.seconds >= 0.0);
}

/// A perfect instance (a plan at the max load exists) that no greedy
/// variant solves at the max load.
fn hard_perfect() -> planner::Problem {
    generate(Kind::Perfect, 60, 2).problem
}

#[test]
fn every_solver_by_name_gives_a_valid_plan() {
    let library = generate(Kind::Random, 120, 5).problem;
    let p = from_library(&library);
    for name in solver_names() {
        let o = Options::new(&name, Some(0.5));
        let s = solve(&p, &o).unwrap().read();
        assert_valid(&library, &s);
        if name == "auto" {
            assert!(s.solver.starts_with("auto/"), "{}", s.solver);
        } else if name == "greedy" {
            assert_eq!(s.solver, "greedy/size/first-fit");
        } else {
            assert_eq!(s.solver, name);
        }
    }
}

#[test]
fn solver_names_fit_the_documented_capacity() {
    for name in solver_names() {
        assert!(format!("auto/{name}").len() < MEMPLAN_SOLVER_NAME_CAPACITY);
    }
}

#[test]
fn the_search_proves_the_optimum_greedy_misses() {
    let library = hard_perfect();
    let p = from_library(&library);
    let greedy = solve(&p, &Options::new("greedy", None)).unwrap().read();
    assert_valid(&library, &greedy);
    assert!(!greedy.optimal);
    assert_eq!(greedy.stopped, MEMPLAN_STOPPED_NONE, "greedy finishes");
    let search = solve(&p, &Options::new("search", Some(30.0)))
        .unwrap()
        .read();
    assert_valid(&library, &search);
    assert!(search.optimal);
    assert_eq!(search.makespan, library.max_load());
    assert_eq!(search.stopped, MEMPLAN_STOPPED_NONE);
    // The same problem, options and seed give the same plan.
    let again = solve(&p, &Options::new("search", Some(30.0)))
        .unwrap()
        .read();
    assert_eq!(again.offsets, search.offsets);
}

#[test]
fn capacities_fit_or_say_why_not() {
    let library = hard_perfect();
    let max_load = library.max_load();
    let p = from_library(&library);
    // SAFETY (all below): live options of ours.
    let with_capacity = |solver: &str, capacity: u64| {
        let o = Options::new(solver, Some(30.0));
        unsafe { assert_eq!(memplan_options_set_capacity(o.0, capacity), MEMPLAN_OK) };
        o
    };
    // Below the max load: proven infeasible, by any solver.
    for solver in ["greedy", "search", "auto"] {
        let o = with_capacity(solver, max_load - 1);
        assert_eq!(solve(&p, &o).err(), Some(MEMPLAN_INFEASIBLE));
        assert!(
            last_error().contains("proven infeasible"),
            "{}",
            last_error()
        );
    }
    // At the max load: greedy's plan does not fit, though one exists.
    let o = with_capacity("greedy", max_load);
    assert_eq!(solve(&p, &o).err(), Some(MEMPLAN_NOT_FOUND));
    let message = last_error();
    assert!(
        message.contains("memplan_solve: solver greedy/size/first-fit: no plan within capacity")
            && message.contains("not proven infeasible")
            && message.contains("best makespan"),
        "{message}"
    );
    // The search finds it; the plan fits and validates with the capacity.
    let o = with_capacity("search", max_load);
    let s = solve(&p, &o).unwrap().read();
    assert_valid(&library.clone().with_capacity(Some(max_load)), &s);
    assert!(s.makespan <= max_load);
    // Clearing the capacity minimises again.
    let o = with_capacity("greedy", max_load);
    unsafe { assert_eq!(memplan_options_clear_capacity(o.0), MEMPLAN_OK) };
    assert!(solve(&p, &o).is_ok());
}

#[test]
fn seeds_reach_the_solver() {
    let library = generate(Kind::Random, 300, 9).problem;
    let p = from_library(&library);
    let plans: Vec<Vec<u64>> = [1u64, 1, 2]
        .iter()
        .map(|&seed| {
            let o = Options::new("boxing", None);
            // SAFETY: live options of ours.
            unsafe { assert_eq!(memplan_options_set_seed(o.0, seed), MEMPLAN_OK) };
            let s = solve(&p, &o).unwrap().read();
            assert_valid(&library, &s);
            s.offsets
        })
        .collect();
    assert_eq!(plans[0], plans[1], "same seed, same plan");
    assert_ne!(plans[0], plans[2], "another seed, another plan");
}

/// An instance that `auto` does not prove optimal: with a large effort, it
/// runs to its time limit.
fn long_instance() -> planner::Problem {
    generate(Kind::Random, 6000, 1).problem
}

#[test]
fn a_time_limit_cut_is_reported() {
    let library = long_instance();
    let p = from_library(&library);
    // A budget far beyond 0.3 s of work: the clock ends the solve.
    let o = Options::new("auto", Some(0.3));
    // SAFETY: live options of ours.
    assert_eq!(
        unsafe { memplan_options_set_effort(o.0, 1000.0) },
        MEMPLAN_OK
    );
    let s = solve(&p, &o).unwrap().read();
    assert_valid(&library, &s);
    assert!(!s.optimal);
    assert_eq!(s.stopped, MEMPLAN_STOPPED_TIME_LIMIT);
    // Its members may stop a little ahead of the clock to finish their
    // plans.
    assert!(s.seconds >= 0.2);
}

#[test]
fn auto_without_a_limit_works_to_its_default_effort() {
    // The default effort, not the clock, ends it: the run is not cut short
    // and a second run gives the same plan.
    let library = long_instance();
    let p = from_library(&library);
    let first = solve(&p, &Options::new("auto", None)).unwrap().read();
    assert_valid(&library, &first);
    assert_eq!(first.stopped, MEMPLAN_STOPPED_NONE);
    let again = solve(&p, &Options::new("auto", None)).unwrap().read();
    assert_eq!(again.offsets, first.offsets);
}

#[test]
fn an_effort_bounds_the_work_and_bad_ones_are_refused() {
    let library = generate(Kind::Perfect, 60, 2).problem;
    let p = from_library(&library);
    let o = Options::new("boxing", None);
    // SAFETY: live options of ours.
    unsafe {
        for bad in [-1.0, f64::NAN, f64::INFINITY, 2e9] {
            assert_eq!(
                memplan_options_set_effort(o.0, bad),
                MEMPLAN_ERROR_INVALID_ARGUMENT,
                "{bad}"
            );
        }
        assert_eq!(
            memplan_options_set_effort(null_mut(), 1.0),
            MEMPLAN_ERROR_NULL_POINTER
        );
        assert_eq!(memplan_options_set_effort(o.0, 0.01), MEMPLAN_OK);
    }
    // Boxing without a limit would run its default iterations; the budget
    // makes the plan the same on every run.
    let a = solve(&p, &o).unwrap().read();
    let b = solve(&p, &o).unwrap().read();
    assert_valid(&library, &a);
    assert_eq!(a.offsets, b.offsets);
    assert_eq!(a.stopped, MEMPLAN_STOPPED_NONE);
}

#[test]
fn cancel_from_another_thread_stops_a_running_solve() {
    let library = long_instance();
    let p = from_library(&library);
    let o = Options::new("auto", Some(120.0));
    let mut cancel = null_mut();
    // SAFETY: live objects of ours and a local out-pointer.
    unsafe {
        // Work for far longer than the cancel takes to come.
        assert_eq!(memplan_options_set_effort(o.0, 1000.0), MEMPLAN_OK);
        assert_eq!(memplan_cancel_new(&mut cancel), MEMPLAN_OK);
        assert_eq!(memplan_options_set_cancel(o.0, cancel), MEMPLAN_OK);
    }
    struct Handle(*const memplan_cancel);
    // SAFETY: the handle is documented as usable from any thread.
    unsafe impl Send for Handle {}
    let handle = Handle(cancel);
    let started = Instant::now();
    let raiser = std::thread::spawn(move || {
        let handle = handle;
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: the handle lives until the main thread frees it after
        // joining this thread.
        unsafe { memplan_cancel_raise(handle.0) }
    });
    let s = solve(&p, &o).unwrap().read();
    let elapsed = started.elapsed();
    assert_eq!(raiser.join().unwrap(), MEMPLAN_OK);
    assert_valid(&library, &s);
    assert_eq!(s.stopped, MEMPLAN_STOPPED_CANCELLED);
    assert!(elapsed >= Duration::from_millis(300));
    assert!(
        elapsed < Duration::from_secs(60),
        "stopped long before the limit: {elapsed:?}"
    );
    // Freeing the handle leaves the options working; a raised flag stops
    // later solves at once (they still return a plan).
    // SAFETY: made by `memplan_cancel_new`, freed once.
    assert_eq!(unsafe { memplan_cancel_free(cancel) }, MEMPLAN_OK);
    let started = Instant::now();
    let s = solve(&p, &o).unwrap().read();
    assert_valid(&library, &s);
    assert_eq!(s.stopped, MEMPLAN_STOPPED_CANCELLED);
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// A solve cancelled before it starts still reports a lower bound of at
/// least the max load (the solvers, stopped before computing it, return
/// weaker bounds; the interface raises them).
#[test]
fn a_cancelled_solve_reports_at_least_the_max_load() {
    let library = generate(Kind::Random, 300, 5).problem;
    let p = from_library(&library);
    for name in ["greedy", "search", "tela", "boxing", "auto"] {
        let o = Options::new(name, None);
        let mut cancel = null_mut();
        // SAFETY: live objects of ours and a local out-pointer.
        unsafe {
            assert_eq!(memplan_cancel_new(&mut cancel), MEMPLAN_OK);
            assert_eq!(memplan_options_set_cancel(o.0, cancel), MEMPLAN_OK);
            assert_eq!(memplan_cancel_raise(cancel), MEMPLAN_OK);
        }
        let s = solve(&p, &o).unwrap().read();
        assert_valid(&library, &s);
        assert_eq!(s.max_load, library.max_load());
        assert!(
            s.lower_bound >= s.max_load && s.lower_bound <= s.makespan,
            "{name}: lower bound {} against max load {} and makespan {}",
            s.lower_bound,
            s.max_load,
            s.makespan
        );
        assert_eq!(s.optimal, s.lower_bound == s.makespan, "{name}");
        // SAFETY: made by `memplan_cancel_new`, freed once.
        assert_eq!(unsafe { memplan_cancel_free(cancel) }, MEMPLAN_OK);
    }
}

#[test]
fn a_cancelled_capacity_search_is_not_found() {
    let library = hard_perfect();
    let p = from_library(&library);
    let o = Options::new("search", None);
    let mut cancel = null_mut();
    // SAFETY: live objects of ours and a local out-pointer.
    unsafe {
        assert_eq!(memplan_cancel_new(&mut cancel), MEMPLAN_OK);
        assert_eq!(memplan_options_set_cancel(o.0, cancel), MEMPLAN_OK);
        assert_eq!(memplan_cancel_raise(cancel), MEMPLAN_OK);
        assert_eq!(
            memplan_cancel_raise(cancel),
            MEMPLAN_OK,
            "raising twice is fine"
        );
        assert_eq!(
            memplan_options_set_capacity(o.0, library.max_load()),
            MEMPLAN_OK
        );
        assert_eq!(memplan_cancel_free(cancel), MEMPLAN_OK);
    }
    assert_eq!(solve(&p, &o).err(), Some(MEMPLAN_NOT_FOUND));
    assert!(
        last_error().contains("unknown: interrupted"),
        "{}",
        last_error()
    );
}

#[test]
fn concurrent_solves_share_a_problem_and_options() {
    let library = generate(Kind::Layered, 400, 3).problem;
    let p = from_library(&library);
    let o = Options::new("auto", Some(0.2));
    struct Shared(*const memplan_problem, *const memplan_options);
    // SAFETY: const use from several threads is documented as safe.
    unsafe impl Sync for Shared {}
    let shared = Shared(p.0, o.0);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let shared = &shared;
                scope.spawn(move || {
                    let mut s = null_mut();
                    // SAFETY: live objects used read-only; a local output.
                    let status = unsafe { memplan_solve(shared.0, shared.1, &mut s) };
                    assert_eq!(status, MEMPLAN_OK);
                    Solution(s).read()
                })
            })
            .collect();
        for t in threads {
            assert_valid(&library, &t.join().unwrap());
        }
    });
}

#[test]
fn an_empty_problem_has_an_empty_plan() {
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[]);
    let solution = solve(&p, &Options::new("auto", None)).unwrap();
    let s = solution.read();
    assert_eq!((s.offsets.len(), s.makespan, s.max_load), (0, 0, 0));
    assert!(s.optimal);
    // SAFETY: no offsets to write: NULL is accepted with count 0.
    assert_eq!(
        unsafe { memplan_solution_offsets(solution.0, null_mut(), 0) },
        MEMPLAN_OK
    );
}

#[test]
fn options_error_paths() {
    let o = Options::new("auto", None);
    let mut out = 0x1 as *mut memplan_options;
    // SAFETY: live options, local strings and NULLs.
    unsafe {
        expect_error(
            memplan_options_new(null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_options_new", "`out_options`"],
        );
        let name = CString::new("greedy/size/nope").unwrap();
        expect_error(
            memplan_options_set_solver(o.0, name.as_ptr()),
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            &[
                "unknown solver `greedy/size/nope`",
                "expected one of `auto`, `greedy`, `search`",
                "greedy/ORDER/FIT",
            ],
        );
        let bad_utf8 = [0xffu8 as c_char, 0];
        expect_error(
            memplan_options_set_solver(o.0, bad_utf8.as_ptr()),
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            &["not UTF-8"],
        );
        expect_error(
            memplan_options_set_solver(o.0, null()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`name`"],
        );
        let greedy = CString::new("greedy").unwrap();
        expect_error(
            memplan_options_set_solver(null_mut(), greedy.as_ptr()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`options`"],
        );
        for bad in [f64::NAN, -1.0, -0.001, f64::INFINITY, f64::NEG_INFINITY] {
            expect_error(
                memplan_options_set_time_limit(o.0, bad),
                MEMPLAN_ERROR_INVALID_ARGUMENT,
                &[
                    "memplan_options_set_time_limit",
                    "expected a finite number of seconds >= 0",
                ],
            );
        }
        assert_eq!(memplan_options_set_time_limit(o.0, 0.0), MEMPLAN_OK);
        assert_eq!(memplan_options_set_time_limit(o.0, 1e300), MEMPLAN_OK);
        assert_eq!(memplan_options_clear_time_limit(o.0), MEMPLAN_OK);
        let mut cancel = null_mut();
        assert_eq!(memplan_cancel_new(&mut cancel), MEMPLAN_OK);
        for status in [
            memplan_options_set_time_limit(null_mut(), 1.0),
            memplan_options_clear_time_limit(null_mut()),
            memplan_options_set_seed(null_mut(), 1),
            memplan_options_set_capacity(null_mut(), 1),
            memplan_options_clear_capacity(null_mut()),
            memplan_options_set_cancel(null_mut(), cancel),
        ] {
            expect_error(status, MEMPLAN_ERROR_NULL_POINTER, &["`options` is NULL"]);
        }
        expect_error(
            memplan_options_set_cancel(o.0, null()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`cancel`"],
        );
        expect_error(
            memplan_cancel_new(null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_cancel`"],
        );
        expect_error(
            memplan_cancel_raise(null()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_cancel_raise", "`cancel`"],
        );
        assert_eq!(memplan_cancel_free(cancel), MEMPLAN_OK);
        // A failed set leaves the solver as it was.
        assert_eq!(memplan_options_new(&mut out), MEMPLAN_OK);
        assert_eq!(memplan_options_set_solver(out, greedy.as_ptr()), MEMPLAN_OK);
        let bad = CString::new("fast").unwrap();
        assert_eq!(
            memplan_options_set_solver(out, bad.as_ptr()),
            MEMPLAN_ERROR_INVALID_ARGUMENT
        );
        assert_eq!((*out).request.solver().name(), "greedy/size/first-fit");
        assert_eq!(memplan_options_free(out), MEMPLAN_OK);
    }
    // A 100-year limit with a solver that ignores it works.
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(1, 0, 1)]);
    let o = Options::new("greedy", Some(1e300));
    assert!(solve(&p, &o).is_ok());
}

#[test]
fn solve_and_solution_error_paths() {
    let p = problem(
        MEMPLAN_LIFETIMES_HALF_OPEN,
        &[(4, 0, 2), (4, 1, 3), (2, 2, 4)],
    );
    let o = Options::new("greedy", None);
    let mut out = 0x1 as *mut memplan_solution;
    // SAFETY: live objects, local outputs, NULLs.
    unsafe {
        expect_error(
            memplan_solve(null(), o.0, &mut out),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_solve", "`problem`"],
        );
        assert!(out.is_null());
        expect_error(
            memplan_solve(p.0, null(), &mut out),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`options`"],
        );
        expect_error(
            memplan_solve(p.0, o.0, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_solution`"],
        );
    }
    let solution = solve(&p, &o).unwrap();
    let s = solution.0;
    let (mut n, mut u, mut b, mut st, mut secs) = (0usize, 0u64, false, 0i32, 0f64);
    let mut name = [0x55 as c_char; 8];
    let mut length = 0usize;
    // SAFETY: a live solution, local outputs, NULLs.
    unsafe {
        let null_outputs = [
            memplan_solution_buffer_count(s, null_mut()),
            memplan_solution_makespan(s, null_mut()),
            memplan_solution_max_load(s, null_mut()),
            memplan_solution_lower_bound(s, null_mut()),
            memplan_solution_optimal(s, null_mut()),
            memplan_solution_stopped(s, null_mut()),
            memplan_solution_seconds(s, null_mut()),
            memplan_solution_solver(s, name.as_mut_ptr(), 8, null_mut()),
        ];
        for status in null_outputs {
            assert_eq!(status, MEMPLAN_ERROR_NULL_POINTER);
        }
        let null_solution = [
            memplan_solution_buffer_count(null(), &mut n),
            memplan_solution_offsets(null(), &mut u, 1),
            memplan_solution_makespan(null(), &mut u),
            memplan_solution_max_load(null(), &mut u),
            memplan_solution_lower_bound(null(), &mut u),
            memplan_solution_optimal(null(), &mut b),
            memplan_solution_stopped(null(), &mut st),
            memplan_solution_seconds(null(), &mut secs),
            memplan_solution_solver(null(), name.as_mut_ptr(), 8, &mut length),
        ];
        for status in null_solution {
            expect_error(status, MEMPLAN_ERROR_NULL_POINTER, &["`solution` is NULL"]);
        }
        // Too few offsets: nothing written.
        let mut offsets = [u64::MAX; 3];
        expect_error(
            memplan_solution_offsets(s, offsets.as_mut_ptr(), 2),
            MEMPLAN_ERROR_BUFFER_TOO_SMALL,
            &["2 offsets do not hold the 3 buffers"],
        );
        assert_eq!(offsets, [u64::MAX; 3]);
        expect_error(
            memplan_solution_offsets(s, null_mut(), 3),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`offsets`"],
        );
        // More room than needed: only the buffers' offsets are written.
        let mut offsets = [u64::MAX; 5];
        assert_eq!(
            memplan_solution_offsets(s, offsets.as_mut_ptr(), 5),
            MEMPLAN_OK
        );
        assert_eq!(offsets[3..], [u64::MAX; 2]);
        // The solver's name cut to 8 bytes.
        expect_error(
            memplan_solution_solver(s, name.as_mut_ptr(), 8, &mut length),
            MEMPLAN_ERROR_BUFFER_TOO_SMALL,
            &["memplan_solution_solver", "21 bytes"],
        );
        assert_eq!(length, "greedy/size/first-fit".len());
        let cut: Vec<u8> = name[..7].iter().map(|&c| c as u8).collect();
        assert_eq!(cut, b"greedy/");
        assert_eq!(name[7], 0);
    }
}

/// Hints and kept counts of a solution.
fn hints_kept(s: &Solution) -> (usize, usize) {
    let (mut hints, mut kept) = (usize::MAX, usize::MAX);
    // SAFETY: a live solution and local outputs.
    let status = unsafe { memplan_solution_hints_kept(s.0, &mut hints, &mut kept) };
    assert_eq!(status, MEMPLAN_OK);
    (hints, kept)
}

#[test]
fn hints_are_tried_first_ignored_on_request_and_kept_by_stable() {
    // First fit would put buffer 0 at 0 and 1 at 8: the hints swap them.
    let p = problem(
        MEMPLAN_LIFETIMES_HALF_OPEN,
        &[(8, 0, 4), (8, 1, 3), (16, 4, 6)],
    );
    // SAFETY: a live problem of ours.
    unsafe {
        assert_eq!(memplan_problem_set_hint(p.0, 0, 8), MEMPLAN_OK);
        assert_eq!(memplan_problem_set_hint(p.0, 1, 0), MEMPLAN_OK);
        expect_error(
            memplan_problem_set_hint(p.0, 3, 0),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["buffer index 3"],
        );
    }
    let o = Options::new("greedy", None);
    let s = solve(&p, &o).unwrap();
    assert_eq!(s.read().offsets, [8, 0, 0]);
    assert_eq!(hints_kept(&s), (2, 2));
    // SAFETY: live options of ours.
    unsafe { assert_eq!(memplan_options_set_ignore_hints(o.0, 1), MEMPLAN_OK) };
    let s = solve(&p, &o).unwrap();
    assert_eq!(s.read().offsets, [0, 8, 0]);
    assert_eq!(hints_kept(&s), (2, 0));
    // Stable within 16: buffer 2 at its hint 8 would end at 24, so it
    // moves; both others keep theirs.
    // SAFETY: live objects of ours.
    unsafe {
        assert_eq!(memplan_options_set_ignore_hints(o.0, 0), MEMPLAN_OK);
        assert_eq!(memplan_problem_set_hint(p.0, 2, 8), MEMPLAN_OK);
        assert_eq!(memplan_options_set_stable(o.0, 1, 1, 16), MEMPLAN_OK);
    }
    let s = solve(&p, &o).unwrap();
    let read = s.read();
    assert_eq!(read.makespan, 16);
    assert_eq!(hints_kept(&s), (3, 2));
    assert!(read.solver.starts_with("greedy") || read.solver.starts_with("stable/"));
    // A misaligned hint is refused when the problem is used, by index.
    // SAFETY: live objects of ours.
    unsafe {
        assert_eq!(memplan_problem_set_alignment(p.0, 1, 4), MEMPLAN_OK);
        assert_eq!(memplan_problem_set_hint(p.0, 1, 6), MEMPLAN_OK);
    }
    expect_error(
        solve(&p, &o).map(|_| ()).unwrap_err(),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 1", "hint 6 is not a multiple of alignment 4"],
    );
}

/// The learned backtracking's setter reaches tela's options; tela's plan
/// with it validates.
#[test]
fn learned_backtracking_is_set() {
    let library = hard_perfect();
    let p = from_library(&library);
    let o = Options::new("tela", None);
    let capacity = library.max_load() * 110 / 100;
    // SAFETY: live options of ours; NULL is refused.
    unsafe {
        assert_eq!(memplan_options_set_capacity(o.0, capacity), MEMPLAN_OK);
        assert_eq!(
            memplan_options_set_learned_backtracking(o.0, 1, 30, 101),
            MEMPLAN_ERROR_OUT_OF_RANGE
        );
        assert_eq!(
            memplan_options_set_learned_backtracking(null_mut(), 1, 30, 20),
            MEMPLAN_ERROR_NULL_POINTER
        );
        assert_eq!(
            memplan_options_set_learned_backtracking(o.0, 1, 30, 20),
            MEMPLAN_OK
        );
        assert_eq!(
            memplan_options_set_learned_jump(null_mut(), 1),
            MEMPLAN_ERROR_NULL_POINTER
        );
        assert!(!(*o.0).request.tela.learned_jump);
        assert_eq!(memplan_options_set_learned_jump(o.0, 1), MEMPLAN_OK);
        let tela = &(*o.0).request.tela;
        assert!(tela.learned_backtracking && tela.learned_jump);
        assert_eq!(
            (tela.learned_threshold, tela.learned_depth_weight),
            (30, 20)
        );
    }
    let s = solve(&p, &o).unwrap().read();
    assert_valid(&library, &s);
    assert!(s.makespan <= capacity);
}
