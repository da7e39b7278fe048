//! Solve options: the solver by name, the time limit, the seed, the
//! capacity, and a cancel handle that another thread can raise.

use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use planner::request::{parse, Control, Request, RequestError, RunError};
use planner::solver::Cancel;

use crate::status::{
    from_mut_ptr, from_ptr, guard, memplan_status, write_out, Failure, MEMPLAN_ERROR_INTERNAL,
    MEMPLAN_ERROR_INVALID_ARGUMENT, MEMPLAN_ERROR_OUT_OF_RANGE,
};

/// How to solve: the solver, its time limit, seed and capacity, and an
/// optional cancel handle. Created by `memplan_options_new` with the
/// defaults (solver `auto`, no time limit, seed 0, no capacity, no cancel
/// handle), freed by `memplan_options_free`.
///
/// Thread safety: any number of solves may use one options object at the
/// same time; the setters and `memplan_options_free` need it to themselves.
#[allow(non_camel_case_types)]
pub struct memplan_options {
    /// The library's request: every option but the capacity (the
    /// problem's) and the cancel handle (the run's), checked by the
    /// request's own checks.
    pub(crate) request: Request,
    pub(crate) capacity: Option<u64>,
    pub(crate) cancel: Option<Arc<AtomicBool>>,
}

impl memplan_options {
    /// What the run lends the request: the cancel handle's flag.
    pub(crate) fn control(&self) -> Control {
        Control {
            cancel: self.cancel.clone().map(Cancel::new).unwrap_or_default(),
            ..Control::default()
        }
    }
}

/// `MEMPLAN_ERROR_INVALID_ARGUMENT` for a request error.
pub(crate) fn invalid(e: RequestError) -> Failure {
    Failure::new(MEMPLAN_ERROR_INVALID_ARGUMENT, e.to_string())
}

/// The status of a run that gave no report: an invalid request, or a
/// plan the validator refused (a bug).
pub(crate) fn run_failure(e: RunError) -> Failure {
    match e {
        RunError::Request(e) => invalid(e),
        RunError::Internal(m) => Failure::new(
            MEMPLAN_ERROR_INTERNAL,
            format!("internal error (a bug, please report it): {m}"),
        ),
    }
}

/// A flag that stops a running solve when raised, from any thread. Created by
/// `memplan_cancel_new`, attached to options by `memplan_options_set_cancel`,
/// raised by `memplan_cancel_raise`, freed by `memplan_cancel_free`.
///
/// Thread safety: `memplan_cancel_raise` may be called from any thread at any
/// time, also while solves that use the handle run. The options and running
/// solves hold the flag on their own: freeing the handle does not disturb
/// them (a freed handle can no longer be raised, of course).
#[allow(non_camel_case_types)]
pub struct memplan_cancel {
    flag: Arc<AtomicBool>,
}

/// Creates options with the defaults (solver `auto`, no time limit, seed 0,
/// no capacity, no cancel handle) and stores them in `*out_options`; free
/// them with `memplan_options_free`. On failure `*out_options` is set to NULL
/// (when `out_options` is not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`out_options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_new(
    out_options: *mut *mut memplan_options,
) -> memplan_status {
    guard("memplan_options_new", || {
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_options, std::ptr::null_mut(), "out_options")? };
        let options = memplan_options {
            request: Request::default(),
            capacity: None,
            cancel: None,
        };
        // SAFETY: checked writable above.
        unsafe { write_out(out_options, Box::into_raw(Box::new(options)), "out_options") }
    })
}

/// Frees options made by `memplan_options_new`. NULL is accepted and does
/// nothing (returns `MEMPLAN_OK`). The options must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn memplan_options_free(options: *mut memplan_options) -> memplan_status {
    guard("memplan_options_free", || {
        if !options.is_null() {
            // SAFETY: made by `Box::into_raw` in `memplan_options_new`, and
            // the caller gives up its use.
            drop(unsafe { Box::from_raw(options) });
        }
        Ok(())
    })
}

/// Chooses the solver by its NUL-terminated name (default `auto`):
///
/// - `auto`: the portfolio (every greedy variant, then search, boxing and,
///   with a capacity, tela in parallel within its work budget, the time
///   limit only a safety cap: 30 s when no limit is set, 0 for greedy
///   only);
/// - `greedy`: size order, first-fit (microseconds per buffer);
/// - `greedy/ORDER/FIT` with ORDER one of `size`, `area`, `lifetime`,
///   `start`, `contention` and FIT one of `first-fit`, `best-fit`, `skyline`;
/// - `search`: exact search (MiniMalloc), minimising or deciding a capacity;
///   without a time limit it runs until it proves its answer;
/// - `boxing`: idealloc's boxing (100 iterations, or the time limit);
/// - `tela`: TelaMalloc's search for a capacity.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`, `name`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (not UTF-8, or an unknown name: the
/// message lists the known ones). On failure the solver is unchanged.
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_solver(
    options: *mut memplan_options,
    name: *const c_char,
) -> memplan_status {
    guard("memplan_options_set_solver", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        if name.is_null() {
            return Err(Failure::null("name"));
        }
        // SAFETY: non-null; the caller passes a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) };
        let name = name.to_str().map_err(|_| {
            Failure::new(
                MEMPLAN_ERROR_INVALID_ARGUMENT,
                "the solver name is not UTF-8",
            )
        })?;
        // On failure the request is unchanged.
        let mut request = options.request.clone();
        request.set_solver_name(name).map_err(invalid)?;
        options.request = request;
        Ok(())
    })
}

/// Sets the wall-clock budget of a solve in seconds (0 is allowed: `auto`
/// then runs the greedy variants only). A limit too long to represent means
/// no limit. The greedy solvers finish whatever the limit.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (negative, NaN or infinite `seconds`;
/// use `memplan_options_clear_time_limit` for no limit).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_time_limit(
    options: *mut memplan_options,
    seconds: f64,
) -> memplan_status {
    guard("memplan_options_set_time_limit", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        options
            .request
            .set_time_limit(Some(seconds))
            .map_err(invalid)
    })
}

/// Sets a work budget, `factor` times the default effort (default: none;
/// `auto` then uses 1 per second of the time limit, else 1): search
/// steps, boxing iterations and tela steps scaled to it, so that the plan
/// is the same whatever the machine's load.
/// With a budget, the time limit is only a safety cap
/// (the result's `stopped` field says when it was hit).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (negative, NaN, infinite or above 1e9).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_effort(
    options: *mut memplan_options,
    factor: f64,
) -> memplan_status {
    guard("memplan_options_set_effort", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        options.request.set_effort(Some(factor)).map_err(invalid)
    })
}

/// Removes the time limit (the default): `auto` then has a 30 s safety cap, `search` and
/// `tela` run until they prove their answer (or hit tela's step limit), and
/// `boxing` until its iterations are done.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_clear_time_limit(
    options: *mut memplan_options,
) -> memplan_status {
    guard("memplan_options_clear_time_limit", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }
            .request
            .time_limit = None;
        Ok(())
    })
}

/// Sets the seed of every random choice (default 0): the same problem,
/// options and seed give the same plan, unless a solver is cut short by the
/// clock or the cancel handle.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_seed(
    options: *mut memplan_options,
    seed: u64,
) -> memplan_status {
    guard("memplan_options_set_seed", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }.request.seed = seed;
        Ok(())
    })
}

/// Sets a capacity: the plan must end at or below `capacity` bytes, and
/// `memplan_solve` answers `MEMPLAN_NOT_FOUND` or `MEMPLAN_INFEASIBLE` when
/// it finds none. Without a capacity (the default) solvers minimise the
/// makespan.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_capacity(
    options: *mut memplan_options,
    capacity: u64,
) -> memplan_status {
    guard("memplan_options_set_capacity", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }.capacity = Some(capacity);
        Ok(())
    })
}

/// With `ignore` non-zero, solves as if the problem had no hints (by
/// default every solver tries a buffer's hint first; see
/// `memplan_problem_set_hint`).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_ignore_hints(
    options: *mut memplan_options,
    ignore: i32,
) -> memplan_status {
    guard("memplan_options_set_ignore_hints", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }
            .request
            .ignore_hints = ignore != 0;
        Ok(())
    })
}

/// With `on` non-zero, tela uses learned backtracking (TelaMalloc §6; the
/// command line's `--learned-backtracking --learned-threshold T
/// --learned-depth-weight W`): at a major backtrack a model shipped in the
/// library scores every level of the path as a target, and the best
/// one, its score weighted by depth (`depth_weight` percent, at most
/// 100), is the learned target when it reaches `threshold` (tenths of a
/// point; scores are 0 to 10): the backtrack point that abandonment
/// returns to, or the target itself with
/// `memplan_options_set_learned_jump`. Off by default (threshold 0, depth
/// weight 0).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`),
/// `MEMPLAN_ERROR_OUT_OF_RANGE` (`depth_weight` over 100).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_learned_backtracking(
    options: *mut memplan_options,
    on: i32,
    threshold: u32,
    depth_weight: u32,
) -> memplan_status {
    guard("memplan_options_set_learned_backtracking", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let o = unsafe { from_mut_ptr(options, "options")? };
        if depth_weight > 100 {
            return Err(Failure::new(
                MEMPLAN_ERROR_OUT_OF_RANGE,
                format!("depth_weight {depth_weight} is over 100"),
            ));
        }
        let tela = &mut o.request.tela;
        tela.learned_backtracking = on != 0;
        tela.learned_threshold = threshold;
        tela.learned_depth_weight = depth_weight;
        Ok(())
    })
}

/// With `on` non-zero, tela's learned backtracking jumps to the learned
/// target (TelaMalloc §6.5; the command line's `--learned-jump`) instead of
/// flagging it as the backtrack point that abandonment returns to (the
/// default). Has an effect only with `memplan_options_set_learned_backtracking`.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_learned_jump(
    options: *mut memplan_options,
    on: i32,
) -> memplan_status {
    guard("memplan_options_set_learned_jump", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }
            .request
            .tela
            .learned_jump = on != 0;
        Ok(())
    })
}

/// With `stable` non-zero, keeps as many buffers at their hints as it can
/// among plans with the best makespan the solver finds, or within
/// `makespan` when `has_makespan` is non-zero (the command line's
/// `--stable [--stable-makespan M]`; see docs/hints.md for what is
/// guaranteed). `memplan_solution_hints_kept` says how many were kept.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_stable(
    options: *mut memplan_options,
    stable: i32,
    has_makespan: i32,
    makespan: u64,
) -> memplan_status {
    guard("memplan_options_set_stable", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        options.request.stable = stable != 0;
        options.request.stable_makespan = (stable != 0 && has_makespan != 0).then_some(makespan);
        Ok(())
    })
}

/// Sets how `memplan_solve_pools` shares buffers out among pools: `guided`
/// (the default: never worse than the baseline, within the time limit, 30 s
/// when none is set) or `fastest-first` (ExecuTorch's banked planning).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`, `name`),
/// `MEMPLAN_ERROR_INVALID_ARGUMENT` (another name, or not UTF-8).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_pool_strategy(
    options: *mut memplan_options,
    name: *const c_char,
) -> memplan_status {
    guard("memplan_options_set_pool_strategy", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        if name.is_null() {
            return Err(Failure::null("name"));
        }
        // SAFETY: non-null; the caller passes a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }.to_str().unwrap_or("");
        options.request.pool_strategy = parse("strategy", name).map_err(invalid)?;
        Ok(())
    })
}

/// Removes the capacity (the default): solvers minimise the makespan.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_clear_capacity(
    options: *mut memplan_options,
) -> memplan_status {
    guard("memplan_options_clear_capacity", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        unsafe { from_mut_ptr(options, "options")? }.capacity = None;
        Ok(())
    })
}

/// Attaches a cancel handle: solves with these options stop soon after it is
/// raised and return their best plan so far (as at a time limit), or
/// `MEMPLAN_NOT_FOUND` with a capacity. The options share the handle's flag
/// (it stays alive with them even if the handle is freed); attaching another
/// handle replaces it.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`options`, `cancel`).
#[no_mangle]
pub unsafe extern "C" fn memplan_options_set_cancel(
    options: *mut memplan_options,
    cancel: *const memplan_cancel,
) -> memplan_status {
    guard("memplan_options_set_cancel", || {
        // SAFETY: the caller passes NULL or options of ours, to itself.
        let options = unsafe { from_mut_ptr(options, "options")? };
        // SAFETY: the caller passes NULL or a live handle of ours.
        let cancel = unsafe { from_ptr(cancel, "cancel")? };
        options.cancel = Some(cancel.flag.clone());
        Ok(())
    })
}

/// Creates a cancel handle, not raised, and stores it in `*out_cancel`; free
/// it with `memplan_cancel_free`. On failure `*out_cancel` is set to NULL
/// (when `out_cancel` is not NULL).
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`out_cancel`).
#[no_mangle]
pub unsafe extern "C" fn memplan_cancel_new(
    out_cancel: *mut *mut memplan_cancel,
) -> memplan_status {
    guard("memplan_cancel_new", || {
        // SAFETY: the caller passes NULL or a writable pointer.
        unsafe { write_out(out_cancel, std::ptr::null_mut(), "out_cancel")? };
        let cancel = memplan_cancel {
            flag: Arc::new(AtomicBool::new(false)),
        };
        // SAFETY: checked writable above.
        unsafe { write_out(out_cancel, Box::into_raw(Box::new(cancel)), "out_cancel") }
    })
}

/// Raises the handle: every solve using options it is attached to stops
/// soon and returns its best plan so far; solves started later stop at once.
/// It stays raised (use a new handle for the next solve). Safe to call from
/// any thread, any number of times.
///
/// Errors: `MEMPLAN_ERROR_NULL_POINTER` (`cancel`).
#[no_mangle]
pub unsafe extern "C" fn memplan_cancel_raise(cancel: *const memplan_cancel) -> memplan_status {
    guard("memplan_cancel_raise", || {
        // SAFETY: the caller passes NULL or a live handle of ours.
        unsafe { from_ptr(cancel, "cancel")? }
            .flag
            .store(true, Ordering::Relaxed);
        Ok(())
    })
}

/// Frees a cancel handle made by `memplan_cancel_new`. NULL is accepted and
/// does nothing (returns `MEMPLAN_OK`). Options and solves it was attached
/// to keep working. No other thread may use the handle afterwards.
#[no_mangle]
pub unsafe extern "C" fn memplan_cancel_free(cancel: *mut memplan_cancel) -> memplan_status {
    guard("memplan_cancel_free", || {
        if !cancel.is_null() {
            // SAFETY: made by `Box::into_raw` in `memplan_cancel_new`, and
            // the caller gives up its use.
            drop(unsafe { Box::from_raw(cancel) });
        }
        Ok(())
    })
}
