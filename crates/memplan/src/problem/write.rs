//! CSV output of problems (and, through `plan::write_plan`, of plans).

use std::fmt::Write as _;
use std::io::Write;

use super::Hints;
use super::{Lifetimes, Problem};

/// Writes `problem` as CSV `id,lower,upper,size[,alignment][,gaps][,offset][,hint]`,
/// the time columns (and gaps) converted back to `lifetimes`. The alignment
/// column appears when any alignment is not 1, the gaps column when any
/// buffer has a gap (MiniMalloc's syntax), the offset column when any
/// buffer is fixed, the hint column (`-1`: none, as MiniMalloc writes it)
/// when the problem has hints.
pub fn write_problem<W: Write>(
    out: W,
    problem: &Problem,
    lifetimes: Lifetimes,
) -> std::io::Result<()> {
    let fixed = problem.buffers().iter().any(|b| b.fixed_offset.is_some());
    let mut w = csv::Writer::from_writer(out);
    write_rows(&mut w, problem, lifetimes, fixed, problem.hints(), |i| {
        problem.buffers()[i].fixed_offset
    })?;
    w.flush()
}

/// Writes the rows of `problem` with an offset column if `offset_column`,
/// filled by `offset(i)` (empty cell for `None`), and a hint column with
/// `hints` if given.
pub(crate) fn write_rows<W: Write>(
    w: &mut csv::Writer<W>,
    problem: &Problem,
    lifetimes: Lifetimes,
    offset_column: bool,
    hints: Option<&Hints>,
    offset: impl Fn(usize) -> Option<u64>,
) -> std::io::Result<()> {
    let aligned = problem.buffers().iter().any(|b| b.alignment != 1);
    let gapped = problem.has_gaps();
    let mut header = vec!["id", "lower", "upper", "size"];
    if aligned {
        header.push("alignment");
    }
    if gapped {
        header.push("gaps");
    }
    if offset_column {
        header.push("offset");
    }
    if hints.is_some() {
        header.push("hint");
    }
    w.write_record(&header)?;
    let mut nums: [itoa::Buffer; 6] = Default::default();
    let mut cell = String::new();
    for (i, b) in problem.buffers().iter().enumerate() {
        let (lower, upper) = lifetimes.from_half_open(b.start, b.end);
        w.write_field(&b.id)?;
        w.write_field(nums[0].format(lower))?;
        w.write_field(nums[1].format(upper))?;
        w.write_field(nums[2].format(b.size))?;
        if aligned {
            w.write_field(nums[3].format(b.alignment))?;
        }
        if gapped {
            cell.clear();
            for g in problem.gaps().of(crate::BufferIdx::new(i)) {
                if !cell.is_empty() {
                    cell.push(' ');
                }
                let (lo, hi) = lifetimes.from_half_open(g.start, g.end);
                let _ = write!(cell, "{lo}-{hi}");
                if let Some((wlo, whi)) = g.window {
                    let _ = write!(cell, "@{wlo}:{whi}");
                }
            }
            w.write_field(&cell)?;
        }
        if offset_column {
            match offset(i) {
                Some(o) => w.write_field(nums[4].format(o))?,
                None => w.write_field("")?,
            }
        }
        if let Some(hints) = hints {
            match hints.at(i) {
                Some(h) => w.write_field(nums[5].format(h))?,
                None => w.write_field("-1")?,
            }
        }
        w.write_record(None::<&[u8]>)?;
    }
    Ok(())
}
