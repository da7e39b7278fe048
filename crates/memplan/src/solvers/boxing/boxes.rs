//! Boxing (Buchsbaum et al., BA): jobs, and Theorem 16 → Corollary 15 →
//! Theorem 2 → Lemma 1, which nest them into boxes of equal height.

use std::cmp::Reverse;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::dispose::drop_later;
use crate::stop::{Cut, Stop, Stopped};

use super::elementary::interval_coloring;
use super::jobs::Job;
use super::prelude::{Round, MAX_ROUNDS, MU_MAX};

/// Theorem 2 recursions on fewer jobs run sequentially.
const PARALLEL_JOBS: usize = 4096;

/// `jobs` split by `small` into (those that are, those that are not), in
/// their order (as [`Iterator::partition`]), or `Err` once `deadline` has
/// passed (checked every [`Stop::EVERY`] jobs: at millions of jobs one pass
/// takes longer than a stop may wait). The parts are counted first and
/// allocated once (growing them would copy hundreds of megabytes at
/// millions of jobs, unpolled); the second has room for `n` jobs, so that
/// Theorem 16 appends the first part's boxes (no more than its jobs)
/// without a copy.
fn partition(
    jobs: Vec<Job>,
    small: impl Fn(&Job) -> bool,
    deadline: &Stop,
) -> Result<(Vec<Job>, Vec<Job>), Cut> {
    let n = jobs.len();
    let mut yes_count = 0;
    for (k, job) in jobs.iter().enumerate() {
        if let Err(cut) = deadline.every(k + 1) {
            drop_later(jobs, n);
            return Err(cut);
        }
        yes_count += usize::from(small(job));
    }
    let (mut yes, mut no) = (Vec::with_capacity(yes_count), Vec::with_capacity(n));
    let mut jobs = jobs.into_iter();
    for (k, job) in jobs.by_ref().enumerate() {
        if let Err(cut) = deadline.every(k + 1) {
            drop_later((jobs, yes, no), n);
            return Err(cut);
        }
        if small(&job) {
            yes.push(job);
        } else {
            no.push(job);
        }
    }
    // The emptied vector: freeing it is no business of this thread.
    drop_later(jobs, n);
    Ok((yes, no))
}

/// Moves `from` onto the end of `to` (reserving room once), [`Stop::EVERY`]
/// jobs at a time with `deadline` checked in between; `Err` once it has
/// passed (the rest of `from` freed on the disposal thread). Gathering
/// boxes moves millions of jobs, tenths of a second in one go.
fn append(to: &mut Vec<Job>, from: Vec<Job>, deadline: &Stop) -> Result<(), Cut> {
    let n = from.len();
    to.reserve(n);
    let mut from = from.into_iter();
    loop {
        let before = to.len();
        to.extend(from.by_ref().take(Stop::EVERY));
        if to.len() == before {
            break;
        }
        if let Err(cut) = deadline.check() {
            drop_later(from, n);
            return Err(cut);
        }
    }
    drop_later(from, n);
    Ok(())
}

/// Theorem 16: box the smallest jobs with Corollary 15 until
/// (log₂ r)² < 1/ε, then box everything once more with μ* = ε/(log₂ r*)²
/// in place of ε (§3.2, Inequality 10). Returns the outermost boxes; once
/// `deadline` passes, some jobs may be left out (the caller discards them).
pub(super) fn theorem_16(
    mut jobs: Vec<Job>,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Stop,
) -> Vec<Job> {
    let h_max = jobs.iter().map(|j| j.size).max().unwrap_or(1);
    let n = jobs.len();
    for _ in 0..MAX_ROUNDS {
        let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(h_max);
        let Some(round) = Round::new(h_min, h_max, epsilon) else {
            break;
        };
        let Ok((small, large)) = partition(jobs, |j| j.size <= round.small_limit, deadline) else {
            return Vec::new();
        };
        jobs = large;
        let boxes = corollary_15(small, round.box_height, round.mu, rng, deadline);
        if append(&mut jobs, boxes, deadline).is_err() {
            drop_later(jobs, n);
            return Vec::new();
        }
    }
    let h_min = jobs.iter().map(|j| j.size).min().unwrap_or(h_max);
    let log2 = (h_max as f64 / h_min as f64).log2().powi(2);
    let mu_star = if log2 > 0.0 {
        (epsilon / log2).min(MU_MAX)
    } else {
        MU_MAX
    };
    let box_height = (h_max as f64 / mu_star).ceil() as u64;
    corollary_15(jobs, box_height, mu_star, rng, deadline)
}

/// Corollary 15: round every height up to ⌊(1+ε)^i⌋, then box each size
/// class with Theorem 2 into boxes of height `box_height`, ⌊H/h⌋ jobs
/// stacked per box. Size classes are boxed in parallel (§5.9).
fn corollary_15(
    jobs: Vec<Job>,
    box_height: u64,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Stop,
) -> Vec<Job> {
    let base = (1.0 + epsilon).ln();
    let rounded = |h: u64| -> u64 {
        let i = ((h as f64).ln() / base).ceil();
        let r = (i * base).exp().floor() as u64;
        r.max(h)
    };
    if deadline.is_cut() {
        let len = jobs.len();
        drop_later(jobs, len);
        return Vec::new();
    }
    let Ok(jobs) = sort_by_size(jobs, deadline) else {
        return Vec::new();
    };
    // Split into size classes (consecutive after the sort).
    let mut classes: Vec<(u64, Vec<Job>, u64)> = Vec::new();
    let n = jobs.len();
    let mut jobs = jobs.into_iter();
    for (k, job) in jobs.by_ref().enumerate() {
        if deadline.every(k + 1).is_err() {
            drop_later((jobs, classes), n);
            return Vec::new();
        }
        let class = rounded(job.size);
        match classes.last_mut() {
            Some((c, members, _)) if *c == class => members.push(job),
            _ => classes.push((class, vec![job], rng.gen())),
        }
    }
    let per_class: Vec<Vec<Job>> = classes
        .into_par_iter()
        .map(|(class, members, seed)| {
            let per_box = (box_height / class).max(1);
            let height = box_height.max(class);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut boxes = Vec::new();
            theorem_2(
                members, per_box, height, epsilon, &mut rng, deadline, &mut boxes,
            );
            boxes
        })
        .collect();
    // Stopped: the caller discards the boxes; gathering them would cost a
    // copy of millions of jobs.
    if deadline.is_cut() {
        drop_later(per_class, usize::MAX);
        return Vec::new();
    }
    let mut boxes = Vec::with_capacity(per_class.iter().map(Vec::len).sum());
    let mut classes = per_class.into_iter();
    for class in classes.by_ref() {
        if append(&mut boxes, class, deadline).is_err() {
            drop_later((boxes, classes), usize::MAX);
            return Vec::new();
        }
    }
    boxes
}

/// From this many jobs on, [`sort_by_size`] sorts on a thread of its own
/// (tenths of a second at millions of jobs).
const SORT_APART_JOBS: usize = 1 << 16;

/// How often [`sort_by_size`] looks at the stop token while it waits for
/// the sort's thread: a wait, not work, so a time rather than units of
/// work ([`Stop::EVERY`]) between two looks.
const SORT_POLL: Duration = Duration::from_millis(2);

/// `jobs` by size (`sort_unstable_by_key`), or `Err` once `stop` cuts.
/// The plans depend on the order of jobs of equal size, which is that
/// unstable sort's own, so the sort cannot be swapped for one that polls
/// ([`crate::geometry::sort::sort`] orders ties otherwise): from
/// [`SORT_APART_JOBS`] jobs, it runs on a thread of its own while this one
/// checks the stop token, and a stop abandons it (the thread ends with its sort,
/// its result dropped). Below, or if no thread can be started, it runs
/// here.
fn sort_by_size(mut jobs: Vec<Job>, stop: &Stop) -> Result<Vec<Job>, Cut> {
    if jobs.len() < SORT_APART_JOBS {
        jobs.sort_unstable_by_key(|j| j.size);
        return Ok(jobs);
    }
    // The jobs stay reachable from here if the thread cannot start.
    let shared = Arc::new(Mutex::new(jobs));
    let (sorted, receive) = mpsc::channel();
    let theirs = Arc::clone(&shared);
    let started = std::thread::Builder::new()
        .name("memplan-boxing-sort".into())
        .spawn(move || {
            let mut jobs =
                std::mem::take(&mut *theirs.lock().unwrap_or_else(PoisonError::into_inner));
            jobs.sort_unstable_by_key(|j| j.size);
            // The receiver is gone after a stop: nothing to do.
            let _ = sorted.send(jobs);
        });
    if started.is_err() {
        let mut jobs = std::mem::take(&mut *shared.lock().unwrap_or_else(PoisonError::into_inner));
        jobs.sort_unstable_by_key(|j| j.size);
        return Ok(jobs);
    }
    loop {
        match receive.recv_timeout(SORT_POLL) {
            Ok(jobs) => return Ok(jobs),
            Err(RecvTimeoutError::Timeout) => stop.check()?,
            // The sort's thread is gone (a panic): given up, as when cut.
            Err(RecvTimeoutError::Disconnected) => {
                return Err(stop.check().err().unwrap_or(Cut(Stopped::Interrupted)))
            }
        }
    }
}

/// Theorem 2 as simplified in §5.8 (no free spaces): pick a critical point
/// t at which some job is live (§3.3 critical point injection: the start of
/// a random job), box the jobs live at t with Lemma 1 and its unresolved jobs
/// by interval graph coloring, `per_box` rows per box, then recurse on the
/// jobs wholly before and wholly after t (in parallel, §5.9). Gives up,
/// leaving `jobs` out, once `deadline` has passed.
fn theorem_2(
    jobs: Vec<Job>,
    per_box: u64,
    box_height: u64,
    epsilon: f64,
    rng: &mut ChaCha8Rng,
    deadline: &Stop,
    out: &mut Vec<Job>,
) {
    if jobs.is_empty() {
        return;
    }
    if deadline.is_cut() {
        let len = jobs.len();
        drop_later(jobs, len);
        return;
    }
    let t = jobs[rng.gen_range(0..jobs.len())].start;
    let n = jobs.len();
    // Counted first, then allocated once (see `partition`).
    let (mut live_count, mut before_count) = (0, 0);
    for (k, job) in jobs.iter().enumerate() {
        if deadline.every(k + 1).is_err() {
            drop_later(jobs, n);
            return;
        }
        live_count += usize::from(job.is_live_at(t));
        before_count += usize::from(job.end <= t);
    }
    let mut live = Vec::with_capacity(live_count);
    let mut before = Vec::with_capacity(before_count);
    let mut after = Vec::with_capacity(n - live_count - before_count);
    let mut jobs = jobs.into_iter();
    for (k, job) in jobs.by_ref().enumerate() {
        if deadline.every(k + 1).is_err() {
            drop_later((jobs, live, before, after), n);
            return;
        }
        if job.is_live_at(t) {
            live.push(job);
        } else if job.end <= t {
            before.push(job);
        } else {
            after.push(job);
        }
    }
    drop_later(jobs, n);
    let unresolved = lemma_1(live, per_box, box_height, epsilon, out);
    box_rows(unresolved, per_box, box_height, out);
    let (seed_before, seed_after): (u64, u64) = (rng.gen(), rng.gen());
    if before.len() + after.len() >= PARALLEL_JOBS {
        let (a, b) = rayon::join(
            || {
                let mut out = Vec::new();
                let mut rng = ChaCha8Rng::seed_from_u64(seed_before);
                theorem_2(
                    before, per_box, box_height, epsilon, &mut rng, deadline, &mut out,
                );
                out
            },
            || {
                let mut out = Vec::new();
                let mut rng = ChaCha8Rng::seed_from_u64(seed_after);
                theorem_2(
                    after, per_box, box_height, epsilon, &mut rng, deadline, &mut out,
                );
                out
            },
        );
        // Stopped: the caller discards what was boxed, and gathering it
        // (a copy at every level of the recursion) would take tenths of a
        // second at millions of jobs.
        if deadline.is_cut() {
            drop_later((a, b), usize::MAX);
            return;
        }
        out.reserve(a.len() + b.len());
        if append(out, a, deadline).is_err() {
            drop_later(b, usize::MAX);
            return;
        }
        // Cut, what is appended is discarded by the caller.
        let _ = append(out, b, deadline);
    } else {
        theorem_2(
            before,
            per_box,
            box_height,
            epsilon,
            &mut ChaCha8Rng::seed_from_u64(seed_before),
            deadline,
            out,
        );
        theorem_2(
            after,
            per_box,
            box_height,
            epsilon,
            &mut ChaCha8Rng::seed_from_u64(seed_after),
            deadline,
            out,
        );
    }
}

/// Lemma 1 (Appendix A): the jobs `live` all share an instant. The
/// `per_box·⌈1/ε²⌉` earliest-starting and then as many latest-ending jobs
/// are unresolved (returned); the rest is cut into alternating vertical
/// strips (earliest starts) and horizontal strips (latest ends) of
/// `per_box·⌈1/ε⌉` jobs, boxed `per_box` at a time in order of decreasing end
/// (vertical) or increasing start (horizontal).
fn lemma_1(
    live: Vec<Job>,
    per_box: u64,
    box_height: u64,
    epsilon: f64,
    out: &mut Vec<Job>,
) -> Vec<Job> {
    let first_strip = strip_len(per_box, (1.0 / (epsilon * epsilon)).ceil());
    if live.len() <= 2 * first_strip {
        return live;
    }
    let strip = strip_len(per_box, (1.0 / epsilon).ceil());
    let n = live.len();
    let mut by_start: Vec<u32> = (0..n as u32).collect();
    by_start.sort_unstable_by_key(|&i| live[i as usize].start);
    let mut by_end: Vec<u32> = (0..n as u32).collect();
    by_end.sort_unstable_by_key(|&i| Reverse(live[i as usize].end));
    let mut slots: Vec<Option<Job>> = live.into_iter().map(Some).collect();
    let (mut s, mut e) = (0usize, 0usize);
    // Takes up to `count` remaining jobs from the front of `order`.
    let take = |order: &[u32], cursor: &mut usize, count: usize, slots: &mut Vec<Option<Job>>| {
        let mut taken = Vec::with_capacity(count);
        while taken.len() < count && *cursor < order.len() {
            if let Some(job) = slots[order[*cursor] as usize].take() {
                taken.push(job);
            }
            *cursor += 1;
        }
        taken
    };
    let mut unresolved = take(&by_start, &mut s, first_strip, &mut slots);
    unresolved.extend(take(&by_end, &mut e, first_strip, &mut slots));
    let per_box = per_box as usize;
    loop {
        let mut vertical = take(&by_start, &mut s, strip, &mut slots);
        if vertical.is_empty() {
            break;
        }
        vertical.sort_unstable_by_key(|j| Reverse(j.end));
        box_chunks(vertical, per_box, box_height, out);
        let mut horizontal = take(&by_end, &mut e, strip, &mut slots);
        if horizontal.is_empty() {
            break;
        }
        horizontal.sort_unstable_by_key(|j| j.start);
        box_chunks(horizontal, per_box, box_height, out);
    }
    unresolved
}

/// Lemma 1's strip length `H·factor` (`factor` = ⌈1/ε²⌉ or ⌈1/ε⌉) in
/// jobs, saturating.
fn strip_len(per_box: u64, factor: f64) -> usize {
    let len = per_box as f64 * factor.max(1.0);
    if len >= usize::MAX as f64 {
        usize::MAX / 4
    } else {
        len as usize
    }
}

/// Lemma 1: boxes a strip's `jobs`, already in order, in consecutive groups
/// of `per_box` (H), the last possibly smaller.
fn box_chunks(jobs: Vec<Job>, per_box: usize, box_height: u64, out: &mut Vec<Job>) {
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        let group: Vec<Job> = jobs.by_ref().take(per_box).collect();
        out.push(Job::boxed(box_height, group));
    }
}

/// Theorem 2's treatment of unresolved jobs: pack them in rows by interval
/// graph coloring, then box `per_box` consecutive rows at a time.
fn box_rows(jobs: Vec<Job>, per_box: u64, box_height: u64, out: &mut Vec<Job>) {
    if jobs.is_empty() {
        return;
    }
    let rows = interval_coloring(jobs.iter().map(|j| (j.start, j.end)));
    let boxes = rows.iter().max().map_or(0, |&r| u64::from(r) / per_box + 1) as usize;
    let mut groups: Vec<Vec<Job>> = vec![Vec::new(); boxes];
    for (job, row) in jobs.into_iter().zip(rows) {
        groups[(u64::from(row) / per_box) as usize].push(job);
    }
    for group in groups.into_iter().filter(|g| !g.is_empty()) {
        out.push(Job::boxed(box_height, group));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs with many equal sizes, so that the order of ties shows.
    fn jobs(n: usize) -> Vec<Job> {
        (0..n as u64)
            .map(|i| Job {
                size: i * 7919 % 97,
                start: i,
                end: i + 1,
                contents: super::super::jobs::Contents::Buffer(i as u32),
            })
            .collect()
    }

    fn key(jobs: &[Job]) -> Vec<(u64, u64)> {
        jobs.iter().map(|j| (j.size, j.start)).collect()
    }

    /// Appending keeps the order (what was there, then what is moved);
    /// past the deadline it stops after the first chunk. The partition
    /// keeps the order of each part, or gives up past the deadline.
    #[test]
    fn append_and_partition_keep_order_or_stop() {
        let n = 2 * Stop::EVERY + 3;
        let mut to = jobs(5);
        assert!(append(&mut to, jobs(n), &Stop::default()).is_ok());
        let want: Vec<_> = key(&jobs(5)).into_iter().chain(key(&jobs(n))).collect();
        assert_eq!(key(&to), want);
        let passed = Stop::default().within(std::time::Duration::ZERO);
        let mut to = jobs(5);
        assert!(append(&mut to, jobs(n), &passed).is_err());
        assert_eq!(to.len(), 5 + Stop::EVERY);
        let small = |j: &Job| j.size < 40;
        let (yes, no) = partition(jobs(n), small, &Stop::default()).unwrap();
        let (want_yes, want_no): (Vec<Job>, Vec<Job>) = jobs(n).into_iter().partition(small);
        assert_eq!((key(&yes), key(&no)), (key(&want_yes), key(&want_no)));
        assert!(no.capacity() >= n);
        assert!(partition(jobs(n), small, &passed).is_err());
        // A stop raised during the second pass (by the predicate itself,
        // after the first pass's n calls and a chunk of the second's) is
        // seen there too.
        use crate::solver::{Cancel, SolveOptions};
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let flag = Arc::new(AtomicBool::new(false));
        let options = SolveOptions {
            cancel: Cancel::new(flag.clone()),
            ..SolveOptions::default()
        };
        let calls = AtomicUsize::new(0);
        let raising = |j: &Job| {
            if calls.fetch_add(1, Ordering::Relaxed) == n + Stop::EVERY / 2 {
                flag.store(true, Ordering::Relaxed);
            }
            small(j)
        };
        assert!(partition(jobs(n), raising, &options.stop()).is_err());
        // Stopped at the second pass's first poll after the flag.
        assert_eq!(calls.load(Ordering::Relaxed), n + Stop::EVERY - 1);
    }

    /// Sorted apart or here, the order is `sort_unstable_by_key`'s, ties
    /// included (boxing's plans depend on it); stopped at any poll, it is
    /// that order or nothing.
    #[test]
    fn the_sort_by_size_orders_ties_as_the_unstable_sort() {
        for n in [100, SORT_APART_JOBS + 5] {
            let mut want = jobs(n);
            want.sort_unstable_by_key(|j| j.size);
            let got = sort_by_size(jobs(n), &Stop::never()).unwrap();
            assert_eq!(key(&got), key(&want), "{n}");
            for cut in 0..3 {
                let stop = Stop::after_looks(cut as u64);
                if let Ok(got) = sort_by_size(jobs(n), &stop) {
                    assert_eq!(key(&got), key(&want), "{n} cut {cut}");
                }
            }
        }
    }
}
