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

use crate::plan::{offset_cell, read_by_id};
use crate::problem::read::{
    check_lines, each_record, locate, parse_u64, read_file, read_header, read_rows, Columns, Field,
    Rows,
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
    check_lines(bytes, path)?;
    // Flexible: a row with the wrong number of fields is reported below
    // with its line.
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let header = read_header(&mut reader, path)?;
    if header.is_empty() {
        return Err(InputError::at(path, None, None, InputErrorKind::EmptyFile));
    }
    let columns = pool_columns(&header, path)?;
    let mut pools: Vec<Pool> = Vec::new();
    let mut first_lines: FxHashMap<String, u64> = FxHashMap::default();
    each_record(&mut reader, bytes, path, |record, line| {
        let pool = columns.parse(record, line, PoolIdx::new(pools.len()), &first_lines, path)?;
        first_lines.insert(pool.name.clone(), line);
        pools.push(pool);
        Ok(())
    })?;
    super::check_pools(&pools).map_err(|e| InputError::at(path, None, None, pools_kind(e)))?;
    Ok(pools)
}

/// The columns of a pool file: positions of `pool` (or `name`),
/// `capacity` and `alignment`, and the names as written.
struct PoolColumns {
    pos: [Option<usize>; 3],
    names: Vec<String>,
}

/// Maps the pool file's header to [`PoolColumns`]; unknown, repeated and
/// missing columns are refused.
fn pool_columns(header: &csv::ByteRecord, path: &Path) -> Result<PoolColumns, InputError> {
    let err = |column: Option<&str>, kind| {
        InputError::at(path, Some(1), column.map(str::to_string), kind)
    };
    // Columns: 0 = pool, 1 = capacity, 2 = alignment.
    let mut pos: [Option<usize>; 3] = [None; 3];
    let mut names: Vec<String> = Vec::new();
    for (i, raw) in header.iter().enumerate() {
        let name = String::from_utf8_lossy(raw).into_owned();
        names.push(name.clone());
        if name.is_empty() {
            return Err(err(None, InputErrorKind::EmptyColumnName));
        }
        let field = match name.to_ascii_lowercase().as_str() {
            "pool" | "name" => 0,
            "capacity" => 1,
            "alignment" => 2,
            _ => return Err(err(Some(&name), InputErrorKind::UnknownPoolColumn)),
        };
        if let Some(previous) = pos[field] {
            return Err(err(
                Some(&name),
                InputErrorKind::DuplicateColumn(names[previous].clone()),
            ));
        }
        pos[field] = Some(i);
    }
    for (field, canonical) in [(0, "pool"), (1, "capacity")] {
        if pos[field].is_none() {
            return Err(err(None, InputErrorKind::MissingPoolColumn(canonical)));
        }
    }
    Ok(PoolColumns { pos, names })
}

impl PoolColumns {
    /// An error at `line` in column `field` (0 = pool, 1 = capacity,
    /// 2 = alignment).
    fn error(&self, line: u64, field: usize, kind: InputErrorKind, path: &Path) -> InputError {
        let column = self.pos[field].map(|p| self.names[p].clone());
        InputError::at(path, Some(line), column, kind)
    }

    /// Parses the row at `line`, pool `index` of the file, whose name must
    /// not be one of `first_lines` (the names before it, by line).
    fn parse(
        &self,
        record: &csv::ByteRecord,
        line: u64,
        index: PoolIdx,
        first_lines: &FxHashMap<String, u64>,
        path: &Path,
    ) -> Result<Pool, InputError> {
        if record.len() != self.names.len() {
            return Err(InputError::at(
                path,
                Some(line),
                None,
                InputErrorKind::FieldCount {
                    expected: self.names.len(),
                    found: record.len(),
                },
            ));
        }
        let cell = |field: usize| self.pos[field].and_then(|p| record.get(p)).unwrap_or(b"");
        let field_err = |field: usize, kind| self.error(line, field, kind, path);
        let name = String::from_utf8_lossy(cell(0)).into_owned();
        if name.is_empty() {
            return Err(field_err(
                0,
                pools_kind(PoolProblemError::EmptyPoolName(index)),
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
                pools_kind(PoolProblemError::ZeroCapacity(index)),
            ));
        }
        let alignment = parse_u64(cell(2))
            .map_err(|kind| field_err(2, kind))?
            .unwrap_or(1);
        if alignment == 0 {
            return Err(field_err(
                2,
                pools_kind(PoolProblemError::ZeroPoolAlignment(index)),
            ));
        }
        Ok(Pool {
            name,
            capacity,
            alignment,
        })
    }
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
    for (field, kind) in [
        (Field::Gaps, InputErrorKind::GapsWithPools),
        (Field::Hint, InputErrorKind::HintWithPools),
    ] {
        if columns.get(field).is_some() {
            return Err(InputError::at(
                path,
                Some(1),
                Some(columns.name(field)),
                kind,
            ));
        }
    }
    let pins = pins(&rows, pools, path)?;
    PoolProblem::new(rows.buffers, pins, pools.to_vec())
        .map_err(|e| locate_pool_error(e, path, &rows.lines, columns))
}

/// The pool each row pins its buffer to, by the `pool` cells (empty: any
/// pool); an unknown name is refused at its line.
fn pins(rows: &Rows, pools: &[Pool], path: &Path) -> Result<Vec<Option<PoolIdx>>, InputError> {
    let by_name: FxHashMap<&str, PoolIdx> = pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), PoolIdx::new(i)))
        .collect();
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
                return Err(InputError::at(
                    path,
                    Some(*line),
                    Some(rows.columns.name(Field::Pool)),
                    InputErrorKind::UnknownPool {
                        pool: cell.to_string(),
                        known: known_pools(pools),
                    },
                ))
            }
        }
    }
    Ok(pins)
}

/// A [`PoolProblemError`] as an error at the line and column of the
/// buffer it is about (`lines` gives each buffer's line).
fn locate_pool_error(
    e: PoolProblemError,
    path: &Path,
    lines: &[u64],
    columns: &Columns,
) -> InputError {
    let line = e
        .buffer()
        .map(|b| lines.get(b.index()).copied().unwrap_or(0));
    let at = |field: Option<Field>, kind| {
        InputError::at(path, line, field.map(|f| columns.name(f)), kind)
    };
    let pool_or = |f: Field| {
        if columns.get(Field::Pool).is_some() {
            Field::Pool
        } else {
            f
        }
    };
    match e {
        PoolProblemError::Problem(e) => locate(e, path, lines, columns),
        PoolProblemError::UnpinnedFixed { .. } => at(Some(pool_or(Field::Offset)), pools_kind(e)),
        PoolProblemError::MisalignedForPool { .. } | PoolProblemError::FixedOverlap { .. } => {
            at(Some(Field::Offset), pools_kind(e))
        }
        PoolProblemError::AlignmentOverflow { .. } => at(Some(Field::Alignment), pools_kind(e)),
        PoolProblemError::SizeSumOverflow { .. } => at(Some(Field::Size), pools_kind(e)),
        other => at(None, pools_kind(other)),
    }
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
    let pools: FxHashMap<&str, PoolIdx> = problem
        .pools()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), PoolIdx::new(i)))
        .collect();
    let placed = read_by_id(
        bytes,
        path,
        problem.buffers(),
        [(&["pool"], "pool"), (&["offset"], "offset")],
        |record, [pool_col, offset_col], line| {
            let name = String::from_utf8_lossy(record.get(pool_col).unwrap_or(b"")).into_owned();
            let &pool = pools.get(name.as_str()).ok_or_else(|| {
                InputError::at(
                    path,
                    Some(line),
                    Some("pool".to_string()),
                    InputErrorKind::UnknownPool {
                        pool: name.clone(),
                        known: known_pools(problem.pools()),
                    },
                )
            })?;
            Ok((pool, offset_cell(record, offset_col, line, path)?))
        },
    )?;
    let (pools, offsets) = placed.into_iter().unzip();
    Ok(PoolPlan::new(pools, offsets))
}

/// The names of `pools` for an error message: `` `a`, `b` ``.
fn known_pools(pools: &[Pool]) -> String {
    let names: Vec<String> = pools
        .iter()
        .map(|p| format!("`{}`", crate::quote::quoted(&p.name)))
        .collect();
    names.join(", ")
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
        assert_eq!(
            read("id,offset\na,0\n"),
            "plan.csv:1: missing required column `pool` (expected columns: id|buffer|buffer_id, pool, offset)"
        );
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
