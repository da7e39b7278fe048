//! Axes: the load profile in steps, byte and count ticks and labels.

use memplan::geometry::sweep::LoadProfile;
use std::ops::Range;

/// The load profile as a step line over `time`, reduced to the maximum of
/// each of `columns` columns when it has more segments than that.
pub(super) fn load_steps(
    profile: &LoadProfile,
    time: &Range<f64>,
    columns: usize,
) -> Vec<(u64, u64)> {
    let segments = profile.loads.len();
    let mut points = Vec::new();
    if segments <= columns * 2 {
        for (k, &load) in profile.loads.iter().enumerate() {
            let (t0, t1) = (profile.times[k], profile.times[k + 1]);
            points.push((t0, load));
            points.push((t1, load));
        }
        return with_ends(points, time);
    }
    let span = time.end - time.start;
    let column =
        |t: f64| (((t - time.start) / span * columns as f64).floor() as usize).min(columns - 1);
    let mut max = vec![0u64; columns];
    for (k, &load) in profile.loads.iter().enumerate() {
        let c0 = column(profile.times[k] as f64);
        // The segment is half-open: its last column holds its end - 1.
        let c1 = column((profile.times[k + 1] as f64 - 1.0).max(profile.times[k] as f64));
        for m in &mut max[c0..=c1] {
            *m = (*m).max(load);
        }
    }
    for (c, &m) in max.iter().enumerate() {
        let t0 = time.start + span * c as f64 / columns as f64;
        let t1 = time.start + span * (c + 1) as f64 / columns as f64;
        points.push((t0.round() as u64, m));
        points.push((t1.round() as u64, m));
    }
    points
}

/// Starts and ends the step line at zero load at the ends of the axis.
pub(super) fn with_ends(points: Vec<(u64, u64)>, time: &Range<f64>) -> Vec<(u64, u64)> {
    let mut all = Vec::with_capacity(points.len() + 2);
    all.push((time.start as u64, 0));
    all.extend(points);
    all.push((time.end as u64, 0));
    all
}

/// Tick values from 0 to `top` bytes, in steps of 1, 2, 2.5 or 5 × 10^k of
/// the largest binary unit (B, KiB, MiB...) not above `top`, at most 10.
pub(super) fn byte_ticks(top: f64) -> (Vec<u64>, u64) {
    let mut unit = 1u64;
    while unit < (1 << 60) && (unit * 1024) as f64 <= top {
        unit *= 1024;
    }
    let in_units = top / unit as f64;
    let mut step = 0.1;
    'search: for exponent in -1..=4 {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let s = m * 10f64.powi(exponent);
            // Whole bytes only.
            if unit == 1 && s < 1.0 {
                continue;
            }
            if in_units / s <= 10.0 {
                step = s;
                break 'search;
            }
        }
    }
    let count = (in_units / step).floor() as usize;
    let ticks = (0..=count)
        .map(|k| (k as f64 * step * unit as f64).round() as u64)
        .collect();
    (ticks, unit)
}

/// `0`, `512 B`, `1.5 MiB`: `v` bytes in `unit` (a power of 1024).
pub(super) fn byte_label(v: f64, unit: u64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let name = match unit {
        1 => "B",
        0x400 => "KiB",
        0x10_0000 => "MiB",
        0x4000_0000 => "GiB",
        0x100_0000_0000 => "TiB",
        0x4_0000_0000_0000 => "PiB",
        _ => "EiB",
    };
    format!("{} {name}", trim(v / unit as f64))
}

/// Up to two decimals, without trailing zeros.
pub(super) fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Logical times: `950`, `12k`, `1.5M`.
pub(super) fn count_label(v: f64) -> String {
    let a = v.abs();
    if a < 10_000.0 {
        trim(v)
    } else if a < 1e6 {
        format!("{}k", trim(v / 1e3))
    } else if a < 1e9 {
        format!("{}M", trim(v / 1e6))
    } else {
        format!("{}G", trim(v / 1e9))
    }
}

/// `1000000` as `1,000,000`.
pub(super) fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
