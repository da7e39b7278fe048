//! Plan CSV files: the input's columns plus `offset` (MiniMalloc's output).

use std::io::Write;
use std::path::Path;

use super::Plan;
use crate::problem::read::{
    check_lines, csv_reader, each_record, parse_u64, read_file, read_header,
};
use crate::problem::write::write_rows;
use crate::problem::{Buffer, InputError, InputErrorKind, Lifetimes, Problem};

/// Writes `plan` as CSV: `id,lower,upper,size[,alignment][,gaps],offset`,
/// with the time columns converted back to `lifetimes`. The alignment
/// column is written when any buffer has an alignment other than 1, the
/// gaps column when any buffer has a gap.
pub fn write_plan<W: Write>(
    out: W,
    problem: &Problem,
    plan: &Plan,
    lifetimes: Lifetimes,
) -> std::io::Result<()> {
    if plan.offsets().len() != problem.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "plan has {} offsets for {} buffers",
                plan.offsets().len(),
                problem.len()
            ),
        ));
    }
    let mut w = csv::Writer::from_writer(out);
    write_rows(&mut w, problem, lifetimes, true, None, |i| {
        Some(plan.offsets()[i])
    })?;
    w.flush()
}

/// Reads a plan CSV for `problem`: it needs an `id` column (or an alias) and
/// an `offset` column; other columns are ignored. Every buffer of the
/// problem must appear exactly once.
pub fn read_plan(path: &Path, problem: &Problem) -> Result<Plan, InputError> {
    read_plan_from(&read_file(path)?, path, problem)
}

/// Reads a plan from CSV bytes; `path` only names the source in errors.
pub fn read_plan_from(bytes: &[u8], path: &Path, problem: &Problem) -> Result<Plan, InputError> {
    let offsets = read_by_id(
        bytes,
        path,
        problem.buffers(),
        [(&["offset"], "offset")],
        |record, [offset], line| offset_cell(record, offset, line, path),
    )?;
    Ok(Plan::from_offsets(offsets))
}

/// Reads the rows of a plan file (plain or pooled) for `buffers`: finds
/// the `id` column (or an alias) and `columns` (each by its names, then
/// its canonical name for errors), and calls `value` with each row, the
/// columns' positions and the row's line. Every buffer must appear
/// exactly once; the values come in buffer order.
pub(crate) fn read_by_id<T, const N: usize>(
    bytes: &[u8],
    path: &Path,
    buffers: &[Buffer],
    columns: [(&[&str], &'static str); N],
    mut value: impl FnMut(&csv::ByteRecord, [usize; N], u64) -> Result<T, InputError>,
) -> Result<Vec<T>, InputError> {
    let err = |line, column: Option<&str>, kind| {
        InputError::at(path, line, column.map(str::to_string), kind)
    };
    check_lines(bytes, path)?;
    let mut reader = csv_reader(bytes);
    let header = read_header(&mut reader, path)?;
    // What a plan file holds, for the error of a missing column.
    let expected = || {
        std::iter::once(ID_NAMES.join("|"))
            .chain(columns.iter().map(|(names, _)| names.join("|")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let id_col = find_column(&header, ID_NAMES, "id", path, &expected)?;
    let mut positions = [0; N];
    for (p, (names, canonical)) in positions.iter_mut().zip(columns) {
        *p = find_column(&header, names, canonical, path, &expected)?;
    }
    let index: rustc_hash::FxHashMap<&str, usize> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    let mut values: Vec<Option<T>> = (0..buffers.len()).map(|_| None).collect();
    let mut lines = vec![0u64; buffers.len()];
    each_record(&mut reader, bytes, path, |record, line| {
        let id = String::from_utf8_lossy(record.get(id_col).unwrap_or(b"")).into_owned();
        let &i = index.get(id.as_str()).ok_or_else(|| {
            err(
                Some(line),
                Some("id"),
                InputErrorKind::UnknownId(id.clone()),
            )
        })?;
        if values[i].is_some() {
            return Err(err(
                Some(line),
                Some("id"),
                InputErrorKind::DuplicateId {
                    id,
                    first_line: lines[i],
                },
            ));
        }
        values[i] = Some(value(record, positions, line)?);
        lines[i] = line;
        Ok(())
    })?;
    values
        .into_iter()
        .zip(buffers)
        .map(|(v, b)| v.ok_or_else(|| err(None, None, InputErrorKind::MissingBuffer(b.id.clone()))))
        .collect()
}

/// The names of a plan's id column.
const ID_NAMES: &[&str] = &["id", "buffer", "buffer_id"];

/// The position of the single column of `header` named by one of `names`
/// (any case); a missing one is named `canonical` (the file's columns are
/// `expected()`), a second one refused.
fn find_column(
    header: &csv::ByteRecord,
    names: &[&str],
    canonical: &'static str,
    path: &Path,
    expected: &dyn Fn() -> String,
) -> Result<usize, InputError> {
    let mut found = header
        .iter()
        .enumerate()
        .filter(|(_, h)| names.iter().any(|n| h.eq_ignore_ascii_case(n.as_bytes())));
    let first = found.next().ok_or_else(|| {
        InputError::at(
            path,
            Some(1),
            None,
            InputErrorKind::MissingPlanColumn {
                column: canonical,
                expected: expected(),
            },
        )
    })?;
    if let Some((_, second)) = found.next() {
        return Err(InputError::at(
            path,
            Some(1),
            Some(String::from_utf8_lossy(second).into_owned()),
            InputErrorKind::DuplicateColumn(String::from_utf8_lossy(first.1).into_owned()),
        ));
    }
    Ok(first.0)
}

/// The required offset in column `at` of a plan row at `line`.
pub(crate) fn offset_cell(
    record: &csv::ByteRecord,
    at: usize,
    line: u64,
    path: &Path,
) -> Result<u64, InputError> {
    let err = |kind| InputError::at(path, Some(line), Some("offset".to_string()), kind);
    parse_u64(record.get(at).unwrap_or(b""))
        .map_err(err)?
        .ok_or_else(|| err(InputErrorKind::EmptyValue))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::read_problem_from;

    #[test]
    fn round_trip_in_every_semantics() {
        let text = "id,lower,upper,size\na,1,3,4\nb,3,5,\"4\"\n";
        for lifetimes in [
            Lifetimes::HalfOpen,
            Lifetimes::Inclusive,
            Lifetimes::Exclusive,
        ] {
            let p = read_problem_from(text.as_bytes(), Path::new("in.csv"), lifetimes).unwrap();
            let plan = Plan::from_offsets(vec![0, 4]);
            let mut out = Vec::new();
            write_plan(&mut out, &p, &plan, lifetimes).unwrap();
            let written = String::from_utf8(out.clone()).unwrap();
            assert_eq!(
                written,
                "id,lower,upper,size,offset\na,1,3,4,0\nb,3,5,4,4\n"
            );
            let back = read_plan_from(&out, Path::new("plan.csv"), &p).unwrap();
            assert_eq!(back, plan);
            let again = read_problem_from(&out, Path::new("plan.csv"), lifetimes);
            assert!(
                again.is_ok(),
                "a plan file is also a problem with fixed offsets"
            );
        }
    }

    #[test]
    fn refuses_incomplete_or_unknown_plans() {
        let p = read_problem_from(
            b"id,lower,upper,size\na,1,3,4\nb,3,5,4\n",
            Path::new("in.csv"),
            Lifetimes::HalfOpen,
        )
        .unwrap();
        let read = |t: &str| {
            read_plan_from(t.as_bytes(), Path::new("plan.csv"), &p)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            read("id,offset\na,0\n"),
            "plan.csv: no offset for buffer `b`"
        );
        assert_eq!(
            read("id,offset\na,0\nc,0\n"),
            "plan.csv:3: column `id`: unknown buffer id `c`"
        );
        assert_eq!(
            read("id,offset\na,0\na,4\n"),
            "plan.csv:3: column `id`: duplicate id `a` (first on line 2)"
        );
        assert_eq!(
            read("id,offset\na,x\n"),
            "plan.csv:2: column `offset`: expected a non-negative integer, got `x`"
        );
        // The columns of a plan, not those of a problem.
        assert_eq!(
            read("id,where\na,0\n"),
            "plan.csv:1: missing required column `offset` (expected columns: id|buffer|buffer_id, offset)"
        );
        assert_eq!(
            read("name,offset\na,0\n"),
            "plan.csv:1: missing required column `id` (expected columns: id|buffer|buffer_id, offset)"
        );
    }
}
