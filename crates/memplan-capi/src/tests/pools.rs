//! Several memories through the C API: pools, pins, the strategies, the
//! plan read back and checked per pool, proofs and errors.

use std::ffi::CString;
use std::ptr::null_mut;

use super::*;

/// Pools that free themselves.
struct Pools(*mut memplan_pools);

impl Pools {
    fn new(pools: &[(&str, u64, u64)]) -> Self {
        let mut p = null_mut();
        // SAFETY: a local out-pointer, then a live list and C strings.
        unsafe {
            assert_eq!(memplan_pools_new(&mut p), MEMPLAN_OK);
            for &(name, capacity, alignment) in pools {
                let name = CString::new(name).unwrap();
                assert_eq!(
                    memplan_pools_add(p, name.as_ptr(), capacity, alignment),
                    MEMPLAN_OK
                );
            }
        }
        Pools(p)
    }
}

impl Drop for Pools {
    fn drop(&mut self) {
        // SAFETY: made by `memplan_pools_new`, freed once.
        assert_eq!(unsafe { memplan_pools_free(self.0) }, MEMPLAN_OK);
    }
}

/// Solves; the assignment (pool, offset) per buffer, or the status.
fn solve_pools(p: &Problem, pools: &Pools, o: &Options) -> Result<Vec<(u32, u64)>, memplan_status> {
    let mut s = 0x1 as *mut memplan_pool_solution;
    // SAFETY: live objects and a local out-pointer.
    let status = unsafe { memplan_solve_pools(p.0, pools.0, o.0, &mut s) };
    if status != MEMPLAN_OK {
        assert!(s.is_null());
        return Err(status);
    }
    let mut count = 0usize;
    // SAFETY: a live problem.
    unsafe { memplan_problem_buffer_count(p.0, &mut count) };
    let mut where_ = vec![u32::MAX; count];
    let mut offsets = vec![u64::MAX; count];
    // SAFETY: a live solution and arrays of `count`.
    unsafe {
        assert_eq!(
            memplan_pool_solution_assignment(s, where_.as_mut_ptr(), offsets.as_mut_ptr(), count),
            MEMPLAN_OK
        );
        if count > 0 {
            expect_error(
                memplan_pool_solution_assignment(
                    s,
                    where_.as_mut_ptr(),
                    offsets.as_mut_ptr(),
                    count - 1,
                ),
                MEMPLAN_ERROR_BUFFER_TOO_SMALL,
                &["do not fit"],
            );
        }
        let (mut buffers, mut makespan) = (0usize, 0u64);
        assert_eq!(
            memplan_pool_solution_usage(s, 0, &mut buffers, &mut makespan),
            MEMPLAN_OK
        );
        assert_eq!(buffers, where_.iter().filter(|&&w| w == 0).count());
        expect_error(
            memplan_pool_solution_usage(s, 9, &mut buffers, &mut makespan),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["pool index 9"],
        );
        // Spill outside the first pool: 2 buffers of 8 bytes for 4 steps
        // in the test below; pools are counted from 1.
        let mut spill = u64::MAX;
        if where_.len() == 4 {
            assert_eq!(memplan_pool_solution_spill(s, 1, &mut spill), MEMPLAN_OK);
            let outside = where_.iter().filter(|&&w| w != 0).count() as u64;
            assert_eq!(spill, outside * 8 * 4);
            expect_error(
                memplan_pool_solution_spill(s, 0, &mut spill),
                MEMPLAN_ERROR_OUT_OF_RANGE,
                &["expected 1 to 1"],
            );
        }
        assert_eq!(memplan_pool_solution_free(s), MEMPLAN_OK);
    }
    Ok(where_.into_iter().zip(offsets).collect())
}

#[test]
fn buffers_spill_to_the_slow_pool_and_pins_hold() {
    // Four buffers of 8 bytes alive together; the fast pool holds two.
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(8, 0, 4); 4]);
    let pools = Pools::new(&[("fast", 16, 1), ("slow", 64, 8)]);
    for strategy in ["fastest-first", "guided"] {
        let o = Options::new("auto", Some(0.2));
        let name = CString::new(strategy).unwrap();
        // SAFETY: live options and a C string.
        unsafe {
            assert_eq!(
                memplan_options_set_pool_strategy(o.0, name.as_ptr()),
                MEMPLAN_OK
            );
        }
        let got = solve_pools(&p, &pools, &o).unwrap();
        assert_eq!(got.iter().filter(|(w, _)| *w == 0).count(), 2);
        for pool in [0u32, 1] {
            let mut ranges: Vec<u64> = got
                .iter()
                .filter(|(w, _)| *w == pool)
                .map(|(_, o)| *o)
                .collect();
            ranges.sort_unstable();
            assert!(
                ranges.windows(2).all(|w| w[0] + 8 <= w[1]),
                "{strategy}: {ranges:?}"
            );
            let capacity = if pool == 0 { 16 } else { 64 };
            assert!(ranges.iter().all(|&o| o + 8 <= capacity));
            if pool == 1 {
                assert!(ranges.iter().all(|&o| o % 8 == 0));
            }
        }
    }
    // Buffer 3 pinned to the slow pool stays there.
    // SAFETY: a live problem.
    unsafe { assert_eq!(memplan_problem_set_pool(p.0, 3, 1), MEMPLAN_OK) };
    let got = solve_pools(&p, &pools, &Options::new("auto", Some(0.2))).unwrap();
    assert_eq!(got[3].0, 1);
}

#[test]
fn pool_errors_and_proofs() {
    let p = problem(MEMPLAN_LIFETIMES_HALF_OPEN, &[(8, 0, 4), (32, 0, 4)]);
    let o = Options::new("auto", Some(0.1));
    // 32 bytes fit in no pool: proven.
    let small = Pools::new(&[("fast", 16, 1)]);
    expect_error(
        solve_pools(&p, &small, &o).unwrap_err(),
        MEMPLAN_INFEASIBLE,
        &["cannot all be placed"],
    );
    // A pin to a pool that does not exist, a duplicate pool: by index.
    let two = Pools::new(&[("fast", 64, 1), ("fast", 64, 1)]);
    expect_error(
        solve_pools(&p, &two, &o).unwrap_err(),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["pool 1", "duplicate pool"],
    );
    let one = Pools::new(&[("fast", 64, 1)]);
    // SAFETY: live objects of ours.
    unsafe {
        assert_eq!(memplan_problem_set_pool(p.0, 1, 3), MEMPLAN_OK);
        expect_error(
            memplan_problem_set_pool(p.0, 2, 0),
            MEMPLAN_ERROR_OUT_OF_RANGE,
            &["buffer index 2"],
        );
        let bad = CString::new("best").unwrap();
        expect_error(
            memplan_options_set_pool_strategy(o.0, bad.as_ptr()),
            MEMPLAN_ERROR_INVALID_ARGUMENT,
            &["unknown pool strategy `best`"],
        );
    }
    expect_error(
        solve_pools(&p, &one, &o).unwrap_err(),
        MEMPLAN_ERROR_INVALID_PROBLEM,
        &["buffer 1", "pinned to pool 3 of 1"],
    );
}
