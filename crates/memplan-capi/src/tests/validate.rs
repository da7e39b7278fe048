//! Validating plans: valid ones pass, each broken rule is named.

use std::ptr::null;

use super::*;

fn validate(p: &Problem, offsets: &[u64]) -> memplan_status {
    // SAFETY: a live problem and a local array of its length.
    unsafe { memplan_validate(p.0, offsets.as_ptr(), offsets.len()) }
}

#[test]
fn valid_plans_pass_and_each_broken_rule_is_named() {
    // b0 [0,4) 4 B, b1 [2,6) 4 B aligned 4, b2 [4,8) 4 B fixed at 8.
    let p = problem(
        MEMPLAN_LIFETIMES_HALF_OPEN,
        &[(4, 0, 4), (4, 2, 6), (4, 4, 8)],
    );
    // SAFETY: a live problem.
    unsafe {
        assert_eq!(memplan_problem_set_alignment(p.0, 1, 4), MEMPLAN_OK);
        assert_eq!(memplan_problem_set_fixed_offset(p.0, 2, 8), MEMPLAN_OK);
    }
    assert_eq!(validate(&p, &[0, 4, 8]), MEMPLAN_OK);
    assert_eq!(validate(&p, &[0, 12, 8]), MEMPLAN_OK);
    let cases: [(&[u64], &[&str]); 6] = [
        (
            &[0, 0, 8],
            &["buffers `0` and `1` are alive at the same time and share addresses"],
        ),
        (
            &[0, 6, 8],
            &["buffer `1`: offset 6 is not a multiple of alignment 4"],
        ),
        (
            &[0, 4, 0],
            &["buffer `2` is fixed at offset 8 but placed at 0"],
        ),
        (
            &[u64::MAX, 4, 8],
            &["buffer `0`: offset 18446744073709551615 + size 4 overflows"],
        ),
        (&[0, 4], &["plan has 2 offsets for 3 buffers"]),
        (&[0, 4, 8, 0], &["plan has 4 offsets for 3 buffers"]),
    ];
    for (offsets, words) in cases {
        expect_error(validate(&p, offsets), MEMPLAN_INVALID_PLAN, words);
        assert!(last_error().starts_with("memplan_validate: invalid plan: "));
    }
    // With a capacity.
    // SAFETY: a live problem and local arrays of the counts given.
    unsafe {
        let plan = [0u64, 4, 8];
        assert_eq!(
            memplan_validate_capacity(p.0, plan.as_ptr(), 3, 12),
            MEMPLAN_OK
        );
        expect_error(
            memplan_validate_capacity(p.0, plan.as_ptr(), 3, 11),
            MEMPLAN_INVALID_PLAN,
            &[
                "memplan_validate_capacity",
                "buffer `2` ends at 12, past the capacity 11",
            ],
        );
    }
}

#[test]
fn validate_error_paths() {
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(4, 0, 4)]);
    let plan = [0u64];
    // SAFETY: a live problem, local arrays, NULLs.
    unsafe {
        expect_error(
            memplan_validate(null(), plan.as_ptr(), 1),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_validate", "`problem`"],
        );
        expect_error(
            memplan_validate(p.0, null(), 1),
            MEMPLAN_ERROR_NULL_POINTER,
            &["`offsets` is NULL with a count of 1"],
        );
        expect_error(
            memplan_validate_capacity(null(), plan.as_ptr(), 1, 4),
            MEMPLAN_ERROR_NULL_POINTER,
            &["memplan_validate_capacity", "`problem`"],
        );
        expect_error(
            memplan_validate(p.0, plan.as_ptr(), usize::MAX),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["larger than memory"],
        );
        let misaligned = (plan.as_ptr() as *const u8).add(1) as *const u64;
        expect_error(
            memplan_validate(p.0, misaligned, 1),
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            &["not aligned"],
        );
        // NULL with count 0: an empty plan, wrong for one buffer.
        expect_error(
            memplan_validate(p.0, null(), 0),
            MEMPLAN_INVALID_PLAN,
            &["plan has 0 offsets for 1 buffers"],
        );
        // An invalid problem is reported as such, not as a plan error.
        assert_eq!(memplan_problem_set_alignment(p.0, 0, 0), MEMPLAN_OK);
        expect_error(
            memplan_validate(p.0, plan.as_ptr(), 1),
            MEMPLAN_ERROR_INVALID_PROBLEM,
            &["buffer 0: alignment must be positive"],
        );
    }
    let empty = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[]);
    // SAFETY: an empty plan may be NULL.
    assert_eq!(unsafe { memplan_validate(empty.0, null(), 0) }, MEMPLAN_OK);
}

/// Plans from every solver pass the C API's validator, and a plan moved
/// onto another buffer fails it.
#[test]
fn solver_plans_validate() {
    let library = planner::generate::generate(planner::generate::Kind::Layered, 200, 4).problem;
    let p = from_library(&library);
    let s = solve(&p, &Options::new("auto", Some(0.2))).unwrap().read();
    assert_eq!(validate(&p, &s.offsets), MEMPLAN_OK);
    // Put a buffer on top of one alive at the same time: invalid.
    let b = library.buffers();
    let (i, j) = (0..b.len())
        .flat_map(|i| (0..b.len()).map(move |j| (i, j)))
        .find(|&(i, j)| i != j && b[i].overlaps_in_time(&b[j]))
        .unwrap();
    let mut broken = s.offsets.clone();
    broken[i] = broken[j];
    expect_error(
        validate(&p, &broken),
        MEMPLAN_INVALID_PLAN,
        &["share addresses"],
    );
}
