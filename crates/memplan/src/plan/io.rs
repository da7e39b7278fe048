//! Plan CSV files: the input's columns plus `offset` (MiniMalloc's output).

use std::io::Write;
use std::path::Path;

use super::Plan;
use crate::problem::read::{check_lines, csv_line, csv_reader, parse_u64, read_file, LineCounter};
use crate::problem::write::write_rows;
use crate::problem::{InputError, InputErrorKind, Lifetimes, Problem};

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
    let err = |line: Option<u64>, column: Option<&str>, kind| InputError {
        path: path.to_path_buf(),
        line,
        column: column.map(str::to_string),
        kind: Box::new(kind),
    };
    check_lines(bytes, path)?;
    let mut reader = csv_reader(bytes);
    let header = reader
        .byte_headers()
        .map_err(|e| err(csv_line(&e), None, InputErrorKind::Csv(e.to_string())))?
        .clone();
    // The single column named by one of `names`; a second one is refused.
    let find = |names: &[&str], canonical: &'static str| {
        let mut found = header
            .iter()
            .enumerate()
            .filter(|(_, h)| names.iter().any(|n| h.eq_ignore_ascii_case(n.as_bytes())));
        let first = found
            .next()
            .ok_or_else(|| err(Some(1), None, InputErrorKind::MissingColumn(canonical)))?;
        if let Some((_, second)) = found.next() {
            let name = String::from_utf8_lossy(second).into_owned();
            return Err(err(
                Some(1),
                Some(&name),
                InputErrorKind::DuplicateColumn(String::from_utf8_lossy(first.1).into_owned()),
            ));
        }
        Ok(first.0)
    };
    let id_col = find(&["id", "buffer", "buffer_id"], "id")?;
    let offset_col = find(&["offset"], "offset")?;

    let index: rustc_hash::FxHashMap<&str, usize> = problem
        .buffers()
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    let mut offsets: Vec<Option<u64>> = vec![None; problem.len()];
    let mut lines = vec![0u64; problem.len()];
    let mut record = csv::ByteRecord::new();
    let mut line_counter = LineCounter::new(1);
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(err(csv_line(&e), None, InputErrorKind::Csv(e.to_string()))),
        }
        let line = line_counter.line(bytes, record.position());
        let id = String::from_utf8_lossy(record.get(id_col).unwrap_or(b"")).into_owned();
        let &i = index.get(id.as_str()).ok_or_else(|| {
            err(
                Some(line),
                Some("id"),
                InputErrorKind::UnknownId(id.clone()),
            )
        })?;
        if offsets[i].is_some() {
            return Err(err(
                Some(line),
                Some("id"),
                InputErrorKind::DuplicateId {
                    id,
                    first_line: lines[i],
                },
            ));
        }
        let offset = parse_u64(record.get(offset_col).unwrap_or(b""))
            .map_err(|kind| err(Some(line), Some("offset"), kind))?
            .ok_or_else(|| err(Some(line), Some("offset"), InputErrorKind::EmptyValue))?;
        offsets[i] = Some(offset);
        lines[i] = line;
    }
    offsets
        .into_iter()
        .zip(problem.buffers())
        .map(|(o, b)| o.ok_or_else(|| err(None, None, InputErrorKind::MissingBuffer(b.id.clone()))))
        .collect::<Result<Vec<u64>, _>>()
        .map(Plan::from_offsets)
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
        assert!(read("id,where\na,0\n").starts_with("plan.csv:1: missing required column `offset`"));
    }
}
