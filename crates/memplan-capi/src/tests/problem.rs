//! Building problems: conventions, alignments, fixed offsets, and every
//! rule the library checks, named by buffer index.

use std::ptr::{null, null_mut};

use planner::Buffer;

use super::*;

fn count(p: &Problem) -> usize {
    let mut n = usize::MAX;
    // SAFETY: a live problem and a local output.
    assert_eq!(
        unsafe { memplan_problem_buffer_count(p.0, &mut n) },
        MEMPLAN_OK
    );
    n
}

fn check(p: &Problem) -> memplan_status {
    // SAFETY: a live problem.
    unsafe { memplan_problem_check(p.0) }
}

fn max_load(p: &Problem) -> u64 {
    let mut m = u64::MAX;
    // SAFETY: a live problem and a local output.
    assert_eq!(unsafe { memplan_problem_max_load(p.0, &mut m) }, MEMPLAN_OK);
    m
}

#[test]
fn new_refuses_null_and_unknown_conventions() {
    let mut p = 0x1 as *mut memplan_problem;
    // SAFETY: a local out-pointer, then NULL.
    unsafe {
        for bad in [-1, 3, i32::MAX] {
            expect_error(
                memplan_problem_new(bad, &mut p),
                MEMPLAN_ERROR_INVALID_ARGUMENT,
                &[
                    "memplan_problem_new",
                    "unknown lifetime convention",
                    &bad.to_string(),
                ],
            );
            assert!(p.is_null(), "out-pointer set to NULL on failure");
        }
        expect_error(
            memplan_problem_new(MEMPLAN_LIFETIMES_HALF_OPEN, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_problem`"],
        );
    }
}

#[test]
fn conventions_give_the_same_overlaps_as_their_definitions() {
    // [0, 2) and [2, 4) do not overlap half-open or exclusive; [0, 2] and
    // [2, 4] do (inclusive).
    let spec = [(8, 0, 2), (8, 2, 4)];
    for (lifetimes, expected) in [
        (MEMPLAN_LIFETIMES_HALF_OPEN, 8),
        (MEMPLAN_LIFETIMES_EXCLUSIVE, 8),
        (MEMPLAN_LIFETIMES_INCLUSIVE, 16),
    ] {
        let p = problem(lifetimes, &spec);
        assert_eq!(max_load(&p), expected, "convention {lifetimes}");
    }
    // A one-instant buffer: [3, 3] is fine inclusive, empty half-open.
    let p = problem(MEMPLAN_LIFETIMES_INCLUSIVE, &[(4, 3, 3)]);
    assert_eq!(check(&p), MEMPLAN_OK);
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(4, 3, 3)]);
    expect_error(
        check(&p),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["memplan_problem_check", "buffer 0", "empty lifetime"],
    );
}

#[test]
fn add_buffers_appends_and_numbers_from_the_end() {
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(1, 0, 1), (2, 0, 1)]);
    let (sizes, starts, ends) = ([3u64, 4], [0u64, 0], [1u64, 1]);
    // SAFETY: arrays of two elements.
    let status = unsafe {
        memplan_problem_add_buffers(p.0, 2, sizes.as_ptr(), starts.as_ptr(), ends.as_ptr())
    };
    assert_eq!(status, MEMPLAN_OK);
    assert_eq!(count(&p), 4);
    assert_eq!(max_load(&p), 10);
    // Count 0 with NULL arrays adds nothing.
    // SAFETY: NULL arrays with count 0 are documented as accepted.
    let status = unsafe { memplan_problem_add_buffers(p.0, 0, null(), null(), null()) };
    assert_eq!(status, MEMPLAN_OK);
    assert_eq!(count(&p), 4);
    // An empty problem is valid, with max load 0.
    let empty = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[]);
    assert_eq!(check(&empty), MEMPLAN_OK);
    assert_eq!(max_load(&empty), 0);
}

#[test]
fn add_buffers_error_paths_add_nothing() {
    let p = problem(MEMPLAN_LIFETIMES_INCLUSIVE, &[(1, 0, 1)]);
    let ok = [1u64, 2];
    // SAFETY: arrays of two elements or NULL; a misaligned pointer is
    // never read (refused first).
    unsafe {
        expect_error(
            memplan_problem_add_buffers(null_mut(), 2, ok.as_ptr(), ok.as_ptr(), ok.as_ptr()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_problem_add_buffers", "`problem`"],
        );
        for (i, name) in ["sizes", "starts", "ends"].iter().enumerate() {
            let mut arrays = [ok.as_ptr(); 3];
            arrays[i] = null();
            expect_error(
                memplan_problem_add_buffers(p.0, 2, arrays[0], arrays[1], arrays[2]),
                MEMPLAN_ERROR_NULL_POINTER,
                &[&format!("`{name}` is NULL with a count of 2")],
            );
        }
        let misaligned = (ok.as_ptr() as *const u8).add(1) as *const u64;
        expect_error(
            memplan_problem_add_buffers(p.0, 1, ok.as_ptr(), misaligned, ok.as_ptr()),
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            &["`starts` is not aligned to 8 bytes"],
        );
        expect_error(
            memplan_problem_add_buffers(p.0, usize::MAX / 4, ok.as_ptr(), ok.as_ptr(), ok.as_ptr()),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["`sizes`", "larger than memory"],
        );
        expect_error(
            memplan_problem_add_buffers(
                p.0,
                u32::MAX as usize,
                ok.as_ptr(),
                ok.as_ptr(),
                ok.as_ptr(),
            ),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["at most 4294967294"],
        );
        // Inclusive end 2^64 - 1 has no half-open end: buffer 2 (the second
        // of this call) is named, and the first is not added either.
        let ends = [5u64, u64::MAX];
        expect_error(
            memplan_problem_add_buffers(p.0, 2, ok.as_ptr(), ok.as_ptr(), ends.as_ptr()),
            MEMPLAN_ERROR_INVALID_PROBLEM,
            &["buffer 2", "inclusive end 18446744073709551615"],
        );
    }
    assert_eq!(count(&p), 1, "failed calls add nothing");
}

#[test]
fn alignment_and_fixed_offsets_reach_the_library() {
    let p = problem(
        MEMPLAN_LIFETIMES_HALF_OPEN,
        &[(8, 0, 4), (8, 0, 4), (4, 0, 4)],
    );
    // SAFETY: a live problem, then NULL.
    unsafe {
        assert_eq!(memplan_problem_set_alignment(p.0, 1, 16), MEMPLAN_OK);
        assert_eq!(memplan_problem_set_fixed_offset(p.0, 0, 100), MEMPLAN_OK);
        let out_of_range = ["is out of range (the problem has 3 buffers)"];
        let status = memplan_problem_set_alignment(p.0, 3, 1);
        expect_error(status, MEMPLAN_ERROR_OUT_OF_RANGE, &out_of_range);
        let status = memplan_problem_set_alignment(p.0, usize::MAX, 1);
        expect_error(status, MEMPLAN_ERROR_OUT_OF_RANGE, &out_of_range);
        let status = memplan_problem_set_fixed_offset(p.0, 3, 0);
        expect_error(status, MEMPLAN_ERROR_OUT_OF_RANGE, &out_of_range);
        assert!(last_error().starts_with("memplan_problem_set_fixed_offset: buffer index 3"));
        expect_error(
            memplan_problem_set_alignment(null_mut(), 0, 1),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`problem`"],
        );
        expect_error(
            memplan_problem_set_fixed_offset(null_mut(), 0, 1),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`problem`"],
        );
    }
    assert_eq!(check(&p), MEMPLAN_OK);
    // The fixed end bounds the solution from below.
    let o = Options::new("greedy", None);
    let s = solve(&p, &o).unwrap().read();
    assert_eq!(s.offsets[0], 100);
    assert_eq!(s.offsets[1] % 16, 0);
    assert_eq!(s.makespan, 108);
    assert_eq!(s.lower_bound, 108);
    assert!(s.optimal);
}

#[test]
fn every_library_rule_is_reported_with_the_buffer_index() {
    // (what to do to a valid 3-buffer problem, the words expected)
    type Edit = fn(*mut memplan_problem);
    let cases: [(Edit, &[&str]); 4] = [
        (
            // SAFETY (all cases): a live problem with 3 buffers.
            |p| unsafe {
                memplan_problem_set_alignment(p, 2, 0);
            },
            &["buffer 2", "alignment must be positive"],
        ),
        (
            |p| unsafe {
                memplan_problem_set_alignment(p, 1, 8);
                memplan_problem_set_fixed_offset(p, 1, 12);
            },
            &[
                "buffer 1",
                "fixed offset 12 is not a multiple of alignment 8",
            ],
        ),
        (
            |p| unsafe {
                memplan_problem_set_fixed_offset(p, 0, 0);
                memplan_problem_set_fixed_offset(p, 2, 4);
            },
            &[
                "buffers 0 and 2",
                "both fixed, they overlap in time and address",
            ],
        ),
        (
            |p| unsafe {
                memplan_problem_set_fixed_offset(p, 1, u64::MAX - 2);
            },
            &["buffer 1", "overflows 64 bits"],
        ),
    ];
    for (edit, words) in cases {
        let p = problem(
            MEMPLAN_LIFETIMES_HALF_OPEN,
            &[(8, 0, 4), (8, 2, 6), (8, 3, 5)],
        );
        assert_eq!(check(&p), MEMPLAN_OK);
        edit(p.0);
        expect_error(check(&p), MEMPLAN_ERROR_INVALID_PROBLEM, words);
        // Solve and validate refuse it the same way.
        let o = Options::new("greedy", None);
        assert_eq!(solve(&p, &o).err(), Some(MEMPLAN_ERROR_INVALID_PROBLEM));
        assert!(last_error().starts_with("memplan_solve: "));
        let mut m = 0;
        // SAFETY: a live problem and a local output.
        let status = unsafe { memplan_problem_max_load(p.0, &mut m) };
        expect_error(status, MEMPLAN_ERROR_INVALID_PROBLEM, words);
    }
    // Sizes summing past 2^64.
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(u64::MAX, 0, 2), (1, 5, 6)]);
    expect_error(
        check(&p),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 1", "sum past 2^64"],
    );
    // Empty lifetime, half-open.
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(1, 0, 1), (1, 7, 3)]);
    expect_error(
        check(&p),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 1", "empty lifetime: start 7 >= end 3"],
    );
}

#[test]
fn getters_refuse_null() {
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(1, 0, 1)]);
    let (mut n, mut m) = (0usize, 0u64);
    // SAFETY: NULL arguments are detected.
    unsafe {
        expect_error(
            memplan_problem_buffer_count(null(), &mut n),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_problem_buffer_count", "`problem`"],
        );
        expect_error(
            memplan_problem_buffer_count(p.0, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_count`"],
        );
        expect_error(
            memplan_problem_max_load(null(), &mut m),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`problem`"],
        );
        expect_error(
            memplan_problem_max_load(p.0, null_mut()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`out_max_load`"],
        );
        expect_error(
            memplan_problem_check(null()),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_problem_check", "`problem`"],
        );
    }
}

/// Zero sizes go to the library as they are: the C API accepts them exactly
/// when the library does (the test holds whether or not it does).
#[test]
fn zero_sizes_pass_through_to_the_library() {
    let spec = [(0, 0, 2), (8, 0, 2)];
    let library = planner::Problem::new(
        vec![Buffer::new("0", 0, 2, 0), Buffer::new("1", 0, 2, 8)],
        None,
    );
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &spec);
    match library {
        Ok(library) => {
            assert_eq!(check(&p), MEMPLAN_OK);
            assert_eq!(max_load(&p), library.max_load());
        }
        Err(e) => expect_error(
            check(&p),
            MEMPLAN_ERROR_INVALID_PROBLEM,
            &["buffer 0", &e.to_string()],
        ),
    }
}

/// Zero-size buffers: they occupy no addresses, conflict with
/// nothing and count for nothing in the max load.
#[test]
fn zero_size_buffers_are_planned() {
    let p = problem(
        MEMPLAN_LIFETIMES_INCLUSIVE,
        &[(0, 0, 4), (8, 0, 4), (0, 2, 3), (8, 1, 2)],
    );
    assert_eq!(check(&p), MEMPLAN_OK);
    assert_eq!(max_load(&p), 16);
    let o = Options::new("auto", Some(1.0));
    let s = solve(&p, &o).unwrap().read();
    assert_eq!(s.makespan, 16);
    assert!(s.optimal);
    // SAFETY: a live problem and the solution's offsets.
    let status = unsafe { memplan_validate(p.0, s.offsets.as_ptr(), s.offsets.len()) };
    assert_eq!(status, MEMPLAN_OK, "{}", last_error());
}

#[test]
fn gaps_let_buffers_share_addresses() {
    // examples/gaps.csv: `saved` idle during [3, 7), `shrink` keeping only
    // [0, 2) of its range during [12, 16).
    let spec = [(4, 0, 10), (4, 3, 5), (4, 5, 7), (6, 10, 16), (4, 12, 16)];
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &spec);
    assert_eq!(max_load(&p), 10, "the hulls");
    // SAFETY: a live problem of ours.
    unsafe {
        assert_eq!(memplan_problem_add_gap(p.0, 0, 3, 7), MEMPLAN_OK);
        assert_eq!(
            memplan_problem_add_gap_window(p.0, 3, 12, 16, 0, 2),
            MEMPLAN_OK
        );
    }
    assert_eq!(max_load(&p), 6);
    let library = planner::problem::read_problem_from(
        include_bytes!("../../../../examples/gaps.csv"),
        std::path::Path::new("gaps.csv"),
        planner::Lifetimes::HalfOpen,
    )
    .unwrap();
    for (solver, makespan) in [("greedy", Some(6)), ("auto", Some(6)), ("boxing", None)] {
        let s = super::solve(&p, &Options::new(solver, Some(0.5)))
            .unwrap()
            .read();
        let plan = planner::Plan::from_offsets(s.offsets.clone());
        planner::validate(&library, &plan).unwrap();
        assert_eq!(s.max_load, 6, "{solver}");
        assert_eq!(s.lower_bound, 6, "{solver}");
        if let Some(m) = makespan {
            assert_eq!(s.makespan, m, "{solver}");
            assert!(s.optimal, "{solver}");
        } else {
            assert!(s.makespan >= 10, "{solver}: plans the hulls");
        }
    }
}

#[test]
fn bad_gaps_are_named_by_buffer_index() {
    let gapped = |add: &dyn Fn(*mut memplan_problem) -> memplan_status| {
        let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(8, 0, 10), (4, 2, 6)]);
        assert_eq!(add(p.0), MEMPLAN_OK, "{}", last_error());
        check(&p)
    };
    // SAFETY (each closure): a live problem of ours.
    expect_error(
        gapped(&|p| unsafe { memplan_problem_add_gap(p, 1, 1, 4) }),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 1", "outside the lifetime [2, 6)"],
    );
    expect_error(
        gapped(&|p| unsafe { memplan_problem_add_gap_window(p, 0, 1, 4, 2, 9) }),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 0", "window 2:9"],
    );
    expect_error(
        gapped(&|p| unsafe {
            memplan_problem_add_gap(p, 0, 1, 4);
            memplan_problem_add_gap(p, 0, 3, 5)
        }),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 0", "overlap"],
    );
    let p = problem(MEMPLAN_LIFETIMES_INCLUSIVE, &[(8, 0, 10)]);
    // SAFETY: a live problem of ours, then NULL.
    unsafe {
        expect_error(
            memplan_problem_add_gap(p.0, 1, 1, 4),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["memplan_problem_add_gap", "buffer index 1"],
        );
        expect_error(
            memplan_problem_add_gap(p.0, 0, 1, u64::MAX),
            MEMPLAN_ERROR_INVALID_PROBLEM,
            &["buffer 0", "gap end"],
        );
        expect_error(
            memplan_problem_add_gap_window(null_mut(), 0, 1, 4, 0, 1),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`problem`"],
        );
        // Inclusive: [1, 10] holds the gap 4-10.
        assert_eq!(memplan_problem_add_gap(p.0, 0, 4, 10), MEMPLAN_OK);
    }
    assert_eq!(check(&p), MEMPLAN_OK);
}
