//! Pool files and pooled problems and plans as CSV.
//!
//! - The pool file: `pool,capacity[,alignment]`, one pool per row in order
//!   of preference (the first is the fastest); `name` is an alias of `pool`.
//! - A pooled problem is a problem file ([`crate::problem`]) with an
//!   optional `pool` column: the pool a buffer is pinned to, empty for any.
//! - A pooled plan adds `pool` and `offset` columns to the problem's.
//!
//! Every refusal names the file, line and column, like the problem reader.

use std::io::Write;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::problem::read::{
    check_lines, csv_line, csv_reader, locate, parse_u64, read_file, read_rows, Field, LineCounter,
};
use crate::problem::{InputError, InputErrorKind, Lifetimes};

use super::{Pool, PoolIdx, PoolPlan, PoolProblem, PoolProblemError};

/// Reads a pool file (see the module documentation).
pub fn read_pools(path: &Path) -> Result<Vec<Pool>, InputError> {
    read_pools_from(&read_file(path)?, path)
}

/// Reads a pool file from CSV bytes; `path` only names the source in
/// errors.
pub fn read_pools_from(bytes: &[u8], path: &Path) -> Result<Vec<Pool>, InputError> {
    let err = |line: Option<u64>, column: Option<&str>, kind| InputError {
        path: path.to_path_buf(),
        line,
        column: column.map(str::to_string),
        kind: Box::new(kind),
    };
    check_lines(bytes, path)?;
    // Flexible: a row with the wrong number of fields is reported below
    // with its line.
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let header = reader
        .byte_headers()
        .map_err(|e| err(csv_line(&e), None, InputErrorKind::Csv(e.to_string())))?
        .clone();
    if header.is_empty() {
        return Err(err(None, None, InputErrorKind::EmptyFile));
    }
    // Columns: 0 = pool, 1 = capacity, 2 = alignment.
    let mut pos: [Option<usize>; 3] = [None; 3];
    let mut names: Vec<String> = Vec::new();
    for (i, raw) in header.iter().enumerate() {
        let name = String::from_utf8_lossy(raw).into_owned();
        names.push(name.clone());
        if name.is_empty() {
            return Err(err(Some(1), None, InputErrorKind::EmptyColumnName));
        }
        let field = match name.to_ascii_lowercase().as_str() {
            "pool" | "name" => 0,
            "capacity" => 1,
            "alignment" => 2,
            _ => return Err(err(Some(1), Some(&name), InputErrorKind::UnknownPoolColumn)),
        };
        if let Some(previous) = pos[field] {
            return Err(err(
                Some(1),
                Some(&name),
                InputErrorKind::DuplicateColumn(names[previous].clone()),
            ));
        }
        pos[field] = Some(i);
    }
    for (field, canonical) in [(0, "pool"), (1, "capacity")] {
        if pos[field].is_none() {
            return Err(err(
                Some(1),
                None,
                InputErrorKind::MissingPoolColumn(canonical),
            ));
        }
    }
    let column = |field: usize| pos[field].map(|p| names[p].as_str());
    let mut pools: Vec<Pool> = Vec::new();
    let mut first_lines: FxHashMap<String, u64> = FxHashMap::default();
    let mut record = csv::ByteRecord::new();
    let mut lines = LineCounter::new(1);
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(err(csv_line(&e), None, InputErrorKind::Csv(e.to_string()))),
        }
        let line = lines.line(bytes, record.position());
        if record.len() != names.len() {
            return Err(err(
                Some(line),
                None,
                InputErrorKind::FieldCount {
                    expected: names.len(),
                    found: record.len(),
                },
            ));
        }
        let cell = |field: usize| pos[field].and_then(|p| record.get(p)).unwrap_or(b"");
        let field_err = |field: usize, kind| err(Some(line), column(field), kind);
        let name = String::from_utf8_lossy(cell(0)).into_owned();
        if name.is_empty() {
            return Err(field_err(
                0,
                pools_kind(PoolProblemError::EmptyPoolName(PoolIdx::new(pools.len()))),
            ));
        }
        if let Some(&first_line) = first_lines.get(&name) {
            return Err(field_err(
                0,
                InputErrorKind::DuplicatePool {
                    pool: name,
                    first_line,
                },
            ));
        }
        let capacity = parse_u64(cell(1))
            .map_err(|kind| field_err(1, kind))?
            .ok_or_else(|| field_err(1, InputErrorKind::EmptyValue))?;
        if capacity == 0 {
            return Err(field_err(
                1,
                pools_kind(PoolProblemError::ZeroCapacity(PoolIdx::new(pools.len()))),
            ));
        }
        let alignment = parse_u64(cell(2))
            .map_err(|kind| field_err(2, kind))?
            .unwrap_or(1);
        if alignment == 0 {
            return Err(field_err(
                2,
                pools_kind(PoolProblemError::ZeroPoolAlignment(PoolIdx::new(
                    pools.len(),
                ))),
            ));
        }
        first_lines.insert(name.clone(), line);
        pools.push(Pool {
            name,
            capacity,
            alignment,
        });
    }
    super::check_pools(&pools).map_err(|e| err(None, None, pools_kind(e)))?;
    Ok(pools)
}

/// Reads a pooled problem: a problem file whose optional `pool` column
/// pins buffers to the named `pools` (an empty cell: any pool).
pub fn read_pool_problem(
    path: &Path,
    lifetimes: Lifetimes,
    pools: &[Pool],
) -> Result<PoolProblem, InputError> {
    read_pool_problem_from(&read_file(path)?, path, lifetimes, pools)
}

/// Reads a pooled problem from CSV bytes; `path` only names the source in
/// errors.
pub fn read_pool_problem_from(
    bytes: &[u8],
    path: &Path,
    lifetimes: Lifetimes,
    pools: &[Pool],
) -> Result<PoolProblem, InputError> {
    let rows = read_rows(bytes, path, lifetimes)?;
    let columns = &rows.columns;
    let at = |line: Option<u64>, field: Option<Field>, kind| InputError {
        path: path.to_path_buf(),
        line,
        column: field.map(|f| columns.name(f)),
        kind: Box::new(kind),
    };
    if columns.get(Field::Gaps).is_some() {
        return Err(at(
            Some(1),
            Some(Field::Gaps),
            InputErrorKind::GapsWithPools,
        ));
    }
    let by_name: FxHashMap<&str, PoolIdx> = pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), PoolIdx::new(i)))
        .collect();
    let known = || {
        let names: Vec<String> = pools
            .iter()
            .map(|p| format!("`{}`", crate::quote::quoted(&p.name)))
            .collect();
        names.join(", ")
    };
    if columns.get(Field::Hint).is_some() {
        return Err(at(
            Some(1),
            Some(Field::Hint),
            InputErrorKind::HintWithPools,
        ));
    }
    let mut pins = Vec::with_capacity(rows.buffers.len());
    for (i, line) in rows.lines.iter().enumerate() {
        let cell = rows.pools.get(i).map_or("", String::as_str);
        if cell.is_empty() {
            pins.push(None);
            continue;
        }
        match by_name.get(cell) {
            Some(&p) => pins.push(Some(p)),
            None => {
                return Err(at(
                    Some(*line),
                    Some(Field::Pool),
                    InputErrorKind::UnknownPool {
                        pool: cell.to_string(),
                        known: known(),
                    },
                ))
            }
        }
    }
    let lines = rows.lines;
    PoolProblem::new(rows.buffers, pins, pools.to_vec()).map_err(|e| {
        let line = e
            .buffer()
            .map(|b| lines.get(b.index()).copied().unwrap_or(0));
        let pool_or = |f: Field| {
            if columns.get(Field::Pool).is_some() {
                Field::Pool
            } else {
                f
            }
        };
        match e {
            PoolProblemError::Problem(e) => locate(e, path, &lines, columns),
            PoolProblemError::UnpinnedFixed { .. } => {
                at(line, Some(pool_or(Field::Offset)), pools_kind(e))
            }
            PoolProblemError::MisalignedForPool { .. } | PoolProblemError::FixedOverlap { .. } => {
                at(line, Some(Field::Offset), pools_kind(e))
            }
            PoolProblemError::AlignmentOverflow { .. } => {
                at(line, Some(Field::Alignment), pools_kind(e))
            }
            PoolProblemError::SizeSumOverflow { .. } => at(line, Some(Field::Size), pools_kind(e)),
            other => at(line, None, pools_kind(other)),
        }
    })
}

/// Writes `plan` as CSV: `id,lower,upper,size[,alignment],pool,offset`,
/// with the time columns converted back to `lifetimes`. The alignment
/// column is written when any buffer has an alignment other than 1.
pub fn write_pool_plan<W: Write>(
    out: W,
    problem: &PoolProblem,
    plan: &PoolPlan,
    lifetimes: Lifetimes,
) -> std::io::Result<()> {
    if plan.pools().len() != problem.len() || plan.offsets().len() != problem.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "plan has {} entries for {} buffers",
                plan.pools().len(),
                problem.len()
            ),
        ));
    }
    let aligned = problem.buffers().iter().any(|b| b.alignment != 1);
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["id", "lower", "upper", "size"];
    if aligned {
        header.push("alignment");
    }
    header.extend(["pool", "offset"]);
    w.write_record(&header)?;
    let mut nums: [itoa::Buffer; 5] = Default::default();
    for (b, buffer) in problem.indices().zip(problem.buffers()) {
        let (lower, upper) = lifetimes.from_half_open(buffer.start, buffer.end);
        w.write_field(&buffer.id)?;
        w.write_field(nums[0].format(lower))?;
        w.write_field(nums[1].format(upper))?;
        w.write_field(nums[2].format(buffer.size))?;
        if aligned {
            w.write_field(nums[3].format(buffer.alignment))?;
        }
        w.write_field(&problem.pool(plan.pool(b)).name)?;
        w.write_field(nums[4].format(plan.offset(b)))?;
        w.write_record(None::<&[u8]>)?;
    }
    w.flush()?;
    Ok(())
}

/// Reads a pooled plan for `problem`: it needs `id` (or an alias), `pool`
/// and `offset` columns; other columns are ignored. Every buffer must
/// appear exactly once, in a pool of the problem.
pub fn read_pool_plan(path: &Path, problem: &PoolProblem) -> Result<PoolPlan, InputError> {
    read_pool_plan_from(&read_file(path)?, path, problem)
}

/// Reads a pooled plan from CSV bytes; `path` only names the source in
/// errors.
pub fn read_pool_plan_from(
    bytes: &[u8],
    path: &Path,
    problem: &PoolProblem,
) -> Result<PoolPlan, InputError> {
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
    let pool_col = find(&["pool"], "pool")?;
    let offset_col = find(&["offset"], "offset")?;
    let index: FxHashMap<&str, usize> = problem
        .buffers()
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    let pools: FxHashMap<&str, PoolIdx> = problem
        .pools()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), PoolIdx::new(i)))
        .collect();
    let mut placed: Vec<Option<(PoolIdx, u64)>> = vec![None; problem.len()];
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
        if placed[i].is_some() {
            return Err(err(
                Some(line),
                Some("id"),
                InputErrorKind::DuplicateId {
                    id,
                    first_line: lines[i],
                },
            ));
        }
        let name = String::from_utf8_lossy(record.get(pool_col).unwrap_or(b"")).into_owned();
        let &pool = pools.get(name.as_str()).ok_or_else(|| {
            let known: Vec<String> = problem
                .pools()
                .iter()
                .map(|p| format!("`{}`", crate::quote::quoted(&p.name)))
                .collect();
            err(
                Some(line),
                Some("pool"),
                InputErrorKind::UnknownPool {
                    pool: name.clone(),
                    known: known.join(", "),
                },
            )
        })?;
        let offset = parse_u64(record.get(offset_col).unwrap_or(b""))
            .map_err(|kind| err(Some(line), Some("offset"), kind))?
            .ok_or_else(|| err(Some(line), Some("offset"), InputErrorKind::EmptyValue))?;
        placed[i] = Some((pool, offset));
        lines[i] = line;
    }
    let placed = placed
        .into_iter()
        .zip(problem.buffers())
        .map(|(o, b)| o.ok_or_else(|| err(None, None, InputErrorKind::MissingBuffer(b.id.clone()))))
        .collect::<Result<Vec<(PoolIdx, u64)>, _>>()?;
    let (pools, offsets) = placed.into_iter().unzip();
    Ok(PoolPlan::new(pools, offsets))
}

/// A pool-model rule broken, as a located input error's kind (the problem
/// layer below knows no pools: it keeps the message).
fn pools_kind(e: PoolProblemError) -> InputErrorKind {
    InputErrorKind::Pools(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;

    fn pools(text: &str) -> Result<Vec<Pool>, String> {
        read_pools_from(text.as_bytes(), Path::new("pools.csv")).map_err(|e| e.to_string())
    }

    fn two() -> Vec<Pool> {
        vec![Pool::new("sram", 16), Pool::new("dram", 64).aligned(8)]
    }

    fn problem(text: &str) -> Result<PoolProblem, String> {
        read_pool_problem_from(
            text.as_bytes(),
            Path::new("in.csv"),
            Lifetimes::HalfOpen,
            &two(),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_pool_files() {
        assert_eq!(
            pools("pool,capacity\nsram,16\ndram,64\n").unwrap(),
            vec![Pool::new("sram", 16), Pool::new("dram", 64)]
        );
        assert_eq!(
            pools("Capacity,Alignment,Name\n16,,sram\n64,8,dram\n").unwrap(),
            two()
        );
        assert_eq!(
            pools("pool,capacity\n").unwrap_err(),
            "pools.csv: no pools: at least one is needed"
        );
        assert_eq!(
            pools("").unwrap_err(),
            "pools.csv: empty file: expected a header row"
        );
        assert_eq!(pools("pool\nsram\n").unwrap_err(), "pools.csv:1: missing required column `capacity` (expected columns: pool|name, capacity, and optionally alignment)");
        assert_eq!(pools("pool,capacity,speed\n").unwrap_err(), "pools.csv:1: column `speed`: unknown column (expected columns: pool|name, capacity, and optionally alignment)");
        assert_eq!(
            pools("pool,capacity\nsram,16\nsram,32\n").unwrap_err(),
            "pools.csv:3: column `pool`: duplicate pool `sram` (first on line 2)"
        );
        assert_eq!(
            pools("pool,capacity\n,16\n").unwrap_err(),
            "pools.csv:2: column `pool`: empty pool name"
        );
        assert_eq!(
            pools("pool,capacity\nsram,0\n").unwrap_err(),
            "pools.csv:2: column `capacity`: pool capacity must be positive, got 0"
        );
        assert_eq!(
            pools("pool,capacity\nsram,16k\n").unwrap_err(),
            "pools.csv:2: column `capacity`: expected a non-negative integer, got `16k`"
        );
        assert_eq!(
            pools("pool,capacity\nsram,\n").unwrap_err(),
            "pools.csv:2: column `capacity`: empty value in a required column"
        );
        assert_eq!(
            pools("pool,capacity,alignment\nsram,16,0\n").unwrap_err(),
            "pools.csv:2: column `alignment`: pool alignment must be positive, got 0"
        );
        assert_eq!(
            pools("pool,capacity\nsram,16,3\n").unwrap_err(),
            "pools.csv:2: expected 2 fields as in the header, found 3"
        );
    }

    #[test]
    fn reads_the_pool_column_with_located_errors() {
        let p = problem("id,lower,upper,size,pool\na,0,2,4,\nb,1,3,4,dram\n").unwrap();
        assert_eq!(p.pins(), &[None, Some(PoolIdx(1))]);
        let p = problem("id,lower,upper,size\na,0,2,4\n").unwrap();
        assert_eq!(p.pins(), &[None]);
        assert_eq!(
            problem("id,lower,upper,size,pool\na,0,2,4,\nb,1,3,4,tcm\n").unwrap_err(),
            "in.csv:3: column `pool`: unknown pool `tcm` (pools: `sram`, `dram`)"
        );
        assert_eq!(
            problem("id,lower,upper,size,offset,pool\na,0,2,4,0,\n").unwrap_err(),
            "in.csv:2: column `pool`: a fixed buffer must be pinned to a pool (there are 2)"
        );
        assert_eq!(
            problem("id,lower,upper,size,offset,pool\na,0,2,4,4,dram\n").unwrap_err(),
            "in.csv:2: column `offset`: fixed offset 4 is not a multiple of pool `dram`'s alignment 8"
        );
        assert_eq!(
            problem("id,lower,upper,size,offset,pool\na,0,2,4,0,sram\nb,1,3,4,2,sram\nc,1,3,4,0,dram\n").unwrap_err(),
            "in.csv:3: column `offset`: fixed buffers `a` and `b` overlap in time and address in pool `sram`"
        );
        assert_eq!(
            problem("id,lower,upper,size,pool\na,0,2,4,\na,1,3,4,dram\n").unwrap_err(),
            "in.csv:3: column `id`: duplicate id `a` (first on line 2)"
        );
        assert_eq!(
            problem("id,lower,upper,size,pool\na,2,2,4,\n").unwrap_err(),
            "in.csv:2: column `upper`: empty lifetime: lower 2, upper 2 is empty under half-open semantics"
        );
        // The single-memory reader refuses the column.
        assert_eq!(
            crate::problem::read_problem_from(b"id,lower,upper,size,pool\na,0,2,4,\n", Path::new("in.csv"), Lifetimes::HalfOpen)
                .unwrap_err()
                .to_string(),
            "in.csv:1: column `pool`: a `pool` column needs the list of pools (memplan: `--pools POOLS.csv`)"
        );
    }

    #[test]
    fn plans_round_trip_and_refuse_unknown_pools() {
        let p = PoolProblem::new(
            vec![
                Buffer::new("a", 1, 3, 4),
                Buffer::new("b", 2, 5, 4).aligned(2),
            ],
            vec![None, Some(PoolIdx(1))],
            two(),
        )
        .unwrap();
        let plan = PoolPlan::new(vec![PoolIdx(0), PoolIdx(1)], vec![0, 8]);
        let mut out = Vec::new();
        write_pool_plan(&mut out, &p, &plan, Lifetimes::Inclusive).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "id,lower,upper,size,alignment,pool,offset\na,1,2,4,1,sram,0\nb,2,4,4,2,dram,8\n"
        );
        assert_eq!(
            read_pool_plan_from(&out, Path::new("plan.csv"), &p).unwrap(),
            plan
        );
        let read = |t: &str| {
            read_pool_plan_from(t.as_bytes(), Path::new("plan.csv"), &p)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            read("id,pool,offset\na,sram,0\nb,hbm,0\n"),
            "plan.csv:3: column `pool`: unknown pool `hbm` (pools: `sram`, `dram`)"
        );
        assert_eq!(read("id,offset\na,0\n"), "plan.csv:1: missing required column `pool` (expected columns: id|buffer|buffer_id, lower|start|begin, upper|end, size, and optionally alignment, offset, hint, gaps, pool)");
        assert_eq!(
            read("id,pool,offset\na,sram,0\n"),
            "plan.csv: no offset for buffer `b`"
        );
        assert_eq!(
            read("id,pool,offset\na,sram,x\n"),
            "plan.csv:2: column `offset`: expected a non-negative integer, got `x`"
        );
    }
}
