//! CSV input: `id,lower,upper,size[,alignment][,offset]`, columns in any
//! order, with aliases. Every refusal names the file, line and column.

use std::path::Path;

use rayon::prelude::*;

use super::{Buffer, Lifetimes, Problem, ProblemError};
use crate::geometry::gaps::Gap;

pub(crate) use super::csv::{
    check_lines, csv_line, csv_reader, each_record, parse_hint, parse_u64, read_file, read_header,
    split_lines, LineCounter,
};
pub use super::input_error::{InputError, InputErrorKind};

/// A column of the input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Id,
    Lower,
    Upper,
    Size,
    Alignment,
    Offset,
    /// The pool a buffer is pinned to (pooled problems only).
    Pool,
    /// Gaps in the lifetime ([`crate::geometry::gaps`]).
    Gaps,
    /// A preferred offset (MiniMalloc's `hint`; empty or -1: none).
    Hint,
}

impl Field {
    fn from_header(name: &str) -> Option<Field> {
        match name.to_ascii_lowercase().as_str() {
            "id" | "buffer" | "buffer_id" => Some(Field::Id),
            "lower" | "start" | "begin" => Some(Field::Lower),
            "upper" | "end" => Some(Field::Upper),
            "size" => Some(Field::Size),
            "alignment" => Some(Field::Alignment),
            "offset" => Some(Field::Offset),
            "pool" => Some(Field::Pool),
            "gaps" => Some(Field::Gaps),
            "hint" => Some(Field::Hint),
            _ => None,
        }
    }

    fn canonical(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Lower => "lower",
            Field::Upper => "upper",
            Field::Size => "size",
            Field::Alignment => "alignment",
            Field::Offset => "offset",
            Field::Pool => "pool",
            Field::Gaps => "gaps",
            Field::Hint => "hint",
        }
    }
}

/// Positions of the known columns in a header, by [`Field`].
#[derive(Default)]
pub(crate) struct Columns {
    pos: [Option<usize>; 9],
    names: Vec<String>,
}

impl Columns {
    pub(crate) fn get(&self, field: Field) -> Option<usize> {
        self.pos[field as usize]
    }

    pub(crate) fn name(&self, field: Field) -> String {
        self.get(field)
            .map(|p| self.names[p].clone())
            .unwrap_or_else(|| field.canonical().to_string())
    }
}

/// Reads a problem from a CSV file. `lifetimes` says how to read the time
/// columns; the capacity is left unset.
pub fn read_problem(path: &Path, lifetimes: Lifetimes) -> Result<Problem, InputError> {
    // The file's bytes are dropped before the checks across rows.
    let rows = read_rows(&read_file(path)?, path, lifetimes)?;
    problem_of_rows(rows, path)
}

/// Reads a problem from CSV bytes; `path` only names the source in errors.
///
/// Large unquoted inputs are parsed in parallel chunks split at line ends;
/// the result is the same as a sequential read. Errors in a row's own cells
/// are reported first (the first such row in the file); checks across rows
/// (duplicate ids, fixed overlaps, the size sum) and per-buffer invariants
/// follow, in the order of [`Problem::new`]. A `pool` column is refused
/// here: pooled problems are read by [`crate::pools::read_pool_problem`].
pub fn read_problem_from(
    bytes: &[u8],
    path: &Path,
    lifetimes: Lifetimes,
) -> Result<Problem, InputError> {
    problem_of_rows(read_rows(bytes, path, lifetimes)?, path)
}

/// The problem of parsed `rows` of the file at `path`, checked across rows.
fn problem_of_rows(rows: Rows, path: &Path) -> Result<Problem, InputError> {
    if let Some(column) = rows.columns.get(Field::Pool) {
        return Err(InputError {
            path: path.to_path_buf(),
            line: Some(1),
            column: Some(rows.columns.names[column].clone()),
            kind: Box::new(InputErrorKind::PoolColumnNeedsPools),
        });
    }
    let gaps = crate::geometry::gaps::Gaps::new(rows.buffers.len(), rows.gaps)
        .map_err(|e| locate(e.into(), path, &rows.lines, &rows.columns))?;
    let problem = Problem::new_with_gaps(rows.buffers, gaps, None)
        .map_err(|e| locate(e, path, &rows.lines, &rows.columns))?;
    if rows.hints.is_empty() {
        return Ok(problem);
    }
    problem
        .with_hints(&rows.hints)
        .map_err(|e| locate(e, path, &rows.lines, &rows.columns))
}

/// The rows of a problem file, parsed but not yet checked across rows.
pub(crate) struct Rows {
    /// One buffer per row, in file order.
    pub buffers: Vec<Buffer>,
    /// The line of each buffer.
    pub lines: Vec<u64>,
    /// The `pool` cell of each buffer (empty when the column is absent).
    pub pools: Vec<String>,
    /// The gaps of the buffers that have some, in file order.
    pub gaps: Vec<(crate::BufferIdx, Gap)>,
    /// The hint of each buffer (empty when the column is absent).
    pub hints: Vec<Option<u64>>,
    /// The header.
    pub columns: Columns,
}

/// Parses the header and every row of a problem file (see
/// [`read_problem_from`]).
pub(crate) fn read_rows(
    bytes: &[u8],
    path: &Path,
    lifetimes: Lifetimes,
) -> Result<Rows, InputError> {
    let err = |line, column, kind| InputError::at(path, line, column, kind);
    check_lines(bytes, path)?;
    let mut reader = csv_reader(bytes);
    let header = read_header(&mut reader, path)?;
    if header.is_empty() {
        return Err(err(None, None, InputErrorKind::EmptyFile));
    }
    let columns = parse_header(&header).map_err(|(column, kind)| err(Some(1), column, kind))?;
    for required in [Field::Id, Field::Lower, Field::Upper, Field::Size] {
        if columns.get(required).is_none() {
            return Err(err(
                Some(1),
                None,
                InputErrorKind::MissingColumn(required.canonical()),
            ));
        }
    }
    let mut body_start = (reader.position().byte() as usize).min(bytes.len());
    // After a CRLF header the reader may stop between `\r` and `\n`.
    if body_start > 0 && bytes[body_start - 1] == b'\r' && bytes.get(body_start) == Some(&b'\n') {
        body_start += 1;
    }
    let body = &bytes[body_start.min(bytes.len())..];
    let ctx = RowContext {
        path,
        columns: &columns,
        lifetimes,
    };
    // Chunks of about a megabyte (`split_lines` takes at least that),
    // parsed a round of one per thread at a time and appended at once: the
    // parsed rows in flight stay a few megabytes, not a copy of the file's
    // buffers (the bytes a buffer costs bound the largest input that
    // fits in memory).
    let threads = rayon::current_num_threads().max(1);
    let chunks = split_lines(body, threads.max(body.len() >> 22));
    // At most one row per line end and one after the last, and one per 8
    // bytes (the shortest row, `a,0,1,1`, and its line end): blank lines
    // reserve nothing.
    // (The line ends before the last chunk are known from its number.)
    let newlines = chunks.last().map_or(0, |&(chunk, first)| {
        (first - 2) as usize + memchr::memchr_iter(b'\n', chunk).count()
    });
    let n = (newlines + 1).min(body.len() / 8 + 1);
    let mut buffers = Vec::with_capacity(n);
    let mut lines = Vec::with_capacity(n);
    let mut pools = Vec::new();
    let mut gaps = Vec::new();
    let mut hints = Vec::new();
    if columns.get(Field::Hint).is_some() {
        hints.reserve_exact(n);
    }
    // One set of columns per thread, reused from round to round (fresh
    // memory per chunk would cost a page fault per 4 KiB), appended at
    // once (a copy, not a move per row).
    let mut parts: Vec<ChunkRows> = (0..threads).map(|_| ChunkRows::default()).collect();
    for round in chunks.chunks(threads) {
        let parsed: Vec<Result<(), InputError>> = round
            .par_iter()
            .zip(parts.par_iter_mut())
            .map(|(&(chunk, first_line), part)| ctx.parse_rows(chunk, first_line, part))
            .collect();
        for (result, part) in parsed.into_iter().zip(parts.iter_mut()) {
            result?;
            let base = buffers.len();
            gaps.extend(
                part.gaps
                    .drain(..)
                    .map(|(row, g)| (crate::BufferIdx::new(base + row), g)),
            );
            // Copied by both threads: a sequential append of millions of
            // rows would leave one idle.
            buffers.par_extend(part.buffers.par_drain(..));
            lines.par_extend(part.lines.par_drain(..));
            pools.append(&mut part.pools);
            hints.append(&mut part.hints);
        }
    }
    Ok(Rows {
        buffers,
        lines,
        pools,
        gaps,
        hints,
        columns,
    })
}

/// A [`ProblemError`] as an error at the line and column of the buffer it
/// is about (`lines` gives each buffer's line).
pub(crate) fn locate(e: ProblemError, path: &Path, lines: &[u64], columns: &Columns) -> InputError {
    let line_of = |b: crate::BufferIdx| lines.get(b.index()).copied().unwrap_or(0);
    let line = e.buffer().map(line_of);
    let (field, kind) = match e {
        ProblemError::SizeSumOverflow(_) => (Some(Field::Size), InputErrorKind::Problem(e)),
        ProblemError::Gap { .. } | ProblemError::GapTable(_) => {
            (Some(Field::Gaps), InputErrorKind::Problem(e))
        }
        ProblemError::ZeroAlignment(_) => (Some(Field::Alignment), InputErrorKind::Problem(e)),
        ProblemError::MisalignedOffset { .. } | ProblemError::FixedEndOverflow { .. } => {
            (Some(Field::Offset), InputErrorKind::Problem(e))
        }
        ProblemError::MisalignedHint { .. }
        | ProblemError::HintNotFixedOffset { .. }
        | ProblemError::HintTooLarge { .. } => (Some(Field::Hint), InputErrorKind::Problem(e)),
        ProblemError::DuplicateId { id, first, .. } => (
            Some(Field::Id),
            InputErrorKind::DuplicateId {
                id,
                first_line: line_of(first),
            },
        ),
        ProblemError::FixedOverlap {
            first,
            first_id,
            second_id,
            ..
        } => (
            Some(Field::Offset),
            InputErrorKind::FixedOverlap {
                id: second_id,
                other_id: first_id,
                other_line: line_of(first),
            },
        ),
        other => (None, InputErrorKind::Problem(other)),
    };
    InputError {
        path: path.to_path_buf(),
        line,
        column: field.map(|f| columns.name(f)),
        kind: Box::new(kind),
    }
}

/// One parsed row: the buffer, its line, its `pool` cell (empty when
/// the column is absent), its gaps and its hint.
struct Row {
    buffer: Buffer,
    line: u64,
    pool: String,
    gaps: Vec<Gap>,
    hint: Option<u64>,
}

/// The parsed rows of one chunk, by column ([`Rows`]'s, the gaps by row
/// within the chunk).
#[derive(Default)]
struct ChunkRows {
    buffers: Vec<Buffer>,
    lines: Vec<u64>,
    /// Only with a `pool` column.
    pools: Vec<String>,
    gaps: Vec<(usize, Gap)>,
    /// Only with a `hint` column.
    hints: Vec<Option<u64>>,
}

/// What parsing a row needs to know.
struct RowContext<'a> {
    path: &'a Path,
    columns: &'a Columns,
    lifetimes: Lifetimes,
}

impl RowContext<'_> {
    /// Parses the header-less rows of `chunk`, whose first line is line
    /// `first_line` of the file, into `out` (emptied first): each buffer
    /// with its line.
    fn parse_rows(
        &self,
        chunk: &[u8],
        first_line: u64,
        out: &mut ChunkRows,
    ) -> Result<(), InputError> {
        out.buffers.clear();
        out.lines.clear();
        out.pools.clear();
        out.gaps.clear();
        out.hints.clear();
        if memchr::memchr2(b'"', b'\r', chunk).is_none() {
            return self.parse_plain_rows(chunk, first_line, out);
        }
        let err = |line: u64, kind| InputError::at(self.path, Some(line), None, kind);
        // Cells are trimmed by `parse_row` as they are read: the reader's
        // own trim copies every record into a fresh allocation.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(chunk);
        let mut lines = LineCounter::new(first_line);
        let mut record = csv::ByteRecord::new();
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    let line = first_line + csv_line(&e).unwrap_or(1) - 1;
                    return Err(err(line, InputErrorKind::Csv(e.to_string())));
                }
            }
            let line = lines.line(chunk, record.position());
            self.take_row(record.len(), |p| record.get(p), line, out)?;
        }
        Ok(())
    }

    /// [`RowContext::parse_rows`] for a chunk without quotes or carriage
    /// returns, where a record is a line and a cell what lies between
    /// commas: split directly, the same rows as the CSV reader's (blank
    /// lines skipped), several times faster at millions of rows.
    fn parse_plain_rows(
        &self,
        chunk: &[u8],
        first_line: u64,
        out: &mut ChunkRows,
    ) -> Result<(), InputError> {
        let width = self.columns.names.len();
        let mut cells: Vec<&[u8]> = Vec::with_capacity(width);
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', chunk).chain(std::iter::once(chunk.len()));
        for (line, end) in (first_line..).zip(ends) {
            let text = &chunk[start..end];
            start = end + 1;
            if text.is_empty() {
                continue;
            }
            cells.clear();
            cells.extend(text.split(|&b| b == b','));
            self.take_row(cells.len(), |p| cells.get(p).copied(), line, out)?;
        }
        Ok(())
    }

    /// Checks the field count (`found` cells) of the record at `line`,
    /// given as its cell at each column, parses it and appends it to `out`.
    fn take_row<'c>(
        &self,
        found: usize,
        record: impl Fn(usize) -> Option<&'c [u8]>,
        line: u64,
        out: &mut ChunkRows,
    ) -> Result<(), InputError> {
        let expected = self.columns.names.len();
        if found != expected {
            return Err(InputError::at(
                self.path,
                Some(line),
                None,
                InputErrorKind::FieldCount { expected, found },
            ));
        }
        let row = self.parse_row(record, line)?;
        self.push_row(row, out);
        Ok(())
    }

    /// Appends a parsed row to `out`.
    fn push_row(&self, row: Row, out: &mut ChunkRows) {
        let r = out.buffers.len();
        out.gaps.extend(row.gaps.into_iter().map(|g| (r, g)));
        out.buffers.push(row.buffer);
        out.lines.push(row.line);
        if self.columns.get(Field::Pool).is_some() {
            out.pools.push(row.pool);
        }
        if self.columns.get(Field::Hint).is_some() {
            out.hints.push(row.hint);
        }
    }

    /// Parses one record (at `line`), whose field count is checked, given
    /// as its cell at each column.
    fn parse_row<'c>(
        &self,
        record: impl Fn(usize) -> Option<&'c [u8]>,
        line: u64,
    ) -> Result<Row, InputError> {
        let columns = self.columns;
        let field_err =
            |f: Field, kind| InputError::at(self.path, Some(line), Some(columns.name(f)), kind);
        // Trimmed of ASCII whitespace, as `csv::Trim::All` would.
        let cell = |f: Field| columns.get(f).and_then(&record).unwrap_or(b"").trim_ascii();
        let number = |f: Field| -> Result<Option<u64>, InputError> {
            parse_u64(cell(f)).map_err(|kind| field_err(f, kind))
        };
        let required = |f: Field| -> Result<u64, InputError> {
            number(f)?.ok_or_else(|| field_err(f, InputErrorKind::EmptyValue))
        };

        let id = std::str::from_utf8(cell(Field::Id))
            .map_err(|_| field_err(Field::Id, InputErrorKind::NotUtf8))?
            .to_string();
        if id.is_empty() {
            return Err(field_err(Field::Id, InputErrorKind::EmptyId));
        }
        let lower = required(Field::Lower)?;
        let upper = required(Field::Upper)?;
        let size = required(Field::Size)?;
        let alignment = number(Field::Alignment)?.unwrap_or(1);
        let fixed_offset = number(Field::Offset)?;
        let (start, end) = self
            .lifetimes
            .to_half_open(lower, upper)
            .ok_or_else(|| field_err(Field::Upper, InputErrorKind::UpperOverflow(upper)))?;
        if start >= end {
            return Err(field_err(
                Field::Upper,
                InputErrorKind::EmptyLifetime {
                    lower,
                    upper,
                    semantics: self.lifetimes.name(),
                },
            ));
        }
        let pool = match columns.get(Field::Pool) {
            // Not UTF-8: named by the pool list, which is, it is unknown.
            Some(_) => String::from_utf8_lossy(cell(Field::Pool)).into_owned(),
            None => String::new(),
        };
        let hint = parse_hint(cell(Field::Hint)).map_err(|kind| field_err(Field::Hint, kind))?;
        let buffer = Buffer {
            id,
            start,
            end,
            size,
            alignment,
            fixed_offset,
        };
        let gaps = match columns.get(Field::Gaps) {
            Some(_) => parse_gaps(cell(Field::Gaps), &buffer, (lower, upper), self.lifetimes)
                .map_err(|kind| field_err(Field::Gaps, kind))?,
            None => Vec::new(),
        };
        Ok(Row {
            buffer,
            line,
            pool,
            gaps,
            hint,
        })
    }
}

/// Parses a `gaps` cell of `buffer` (whose lifetime is `lower-upper` in
/// the file's convention): entries `lo-hi` or `lo-hi@wlo:whi` separated by
/// spaces (MiniMalloc's syntax), times in the file's `lifetimes`. Each
/// must be non-empty, inside the lifetime, with `wlo < whi <= size`, and
/// no two may overlap; errors quote the entry as written.
pub fn parse_gaps(
    cell: &[u8],
    buffer: &Buffer,
    (lower, upper): (u64, u64),
    lifetimes: Lifetimes,
) -> Result<Vec<Gap>, InputErrorKind> {
    let text = std::str::from_utf8(cell)
        .map_err(|_| InputErrorKind::GapSyntax(String::from_utf8_lossy(cell).into_owned()))?;
    let mut gaps: Vec<(Gap, &str)> = Vec::new();
    for entry in text.split_ascii_whitespace() {
        let syntax = || InputErrorKind::GapSyntax(entry.to_string());
        let number = |s: &str| -> Result<u64, InputErrorKind> {
            if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
                return Err(syntax());
            }
            parse_u64(s.as_bytes())
                .map_err(|e| InputErrorKind::GapNumber {
                    entry: entry.to_string(),
                    error: Box::new(e),
                })?
                .ok_or_else(syntax)
        };
        let (time, window) = match entry.split_once('@') {
            Some((time, window)) => (time, Some(window)),
            None => (entry, None),
        };
        let (lo, hi) = time.split_once('-').ok_or_else(syntax)?;
        let (lo, hi) = (number(lo)?, number(hi)?);
        let window = match window {
            Some(w) => {
                let (wlo, whi) = w.split_once(':').ok_or_else(syntax)?;
                Some((number(wlo)?, number(whi)?))
            }
            None => None,
        };
        let (start, end) =
            lifetimes
                .to_half_open(lo, hi)
                .ok_or_else(|| InputErrorKind::GapNumber {
                    entry: entry.to_string(),
                    error: Box::new(InputErrorKind::UpperOverflow(hi)),
                })?;
        if start >= end {
            return Err(InputErrorKind::EmptyGap {
                entry: entry.to_string(),
                semantics: lifetimes.name(),
            });
        }
        if start < buffer.start || end > buffer.end {
            return Err(InputErrorKind::GapOutsideLifetime {
                entry: entry.to_string(),
                lower,
                upper,
            });
        }
        if let Some((wlo, whi)) = window {
            if wlo >= whi || whi > buffer.size {
                return Err(InputErrorKind::GapWindow {
                    entry: entry.to_string(),
                    size: buffer.size,
                });
            }
        }
        gaps.push((Gap { start, end, window }, entry));
    }
    gaps.sort_by_key(|(g, _)| (g.start, g.end));
    if let Some(w) = gaps.windows(2).find(|w| w[1].0.start < w[0].0.end) {
        return Err(InputErrorKind::GapsOverlap {
            first: w[0].1.to_string(),
            second: w[1].1.to_string(),
        });
    }
    Ok(gaps.into_iter().map(|(g, _)| g).collect())
}

/// Maps header names to fields; unknown and repeated columns are refused.
fn parse_header(header: &csv::ByteRecord) -> Result<Columns, (Option<String>, InputErrorKind)> {
    let mut columns = Columns::default();
    for (i, raw) in header.iter().enumerate() {
        let name = String::from_utf8_lossy(raw).into_owned();
        columns.names.push(name.clone());
        if name.is_empty() {
            return Err((None, InputErrorKind::EmptyColumnName));
        }
        let field =
            Field::from_header(&name).ok_or((Some(name.clone()), InputErrorKind::UnknownColumn))?;
        if let Some(previous) = columns.pos[field as usize] {
            return Err((
                Some(name),
                InputErrorKind::DuplicateColumn(columns.names[previous].clone()),
            ));
        }
        columns.pos[field as usize] = Some(i);
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Problem, InputError> {
        read_problem_from(text.as_bytes(), Path::new("in.csv"), Lifetimes::HalfOpen)
    }

    fn error(text: &str) -> String {
        read(text).unwrap_err().to_string()
    }

    /// The outcome of reading `text`, and of reading it with CRLF line
    /// ends (through the CSV reader, where plain LF text takes the split
    /// of `parse_plain_rows`): buffers, or the error's message.
    fn both_paths(text: &str) -> (Result<Vec<Buffer>, String>, Result<Vec<Buffer>, String>) {
        let outcome = |text: &str| {
            read(text)
                .map(|p| p.buffers().to_vec())
                .map_err(|e| e.to_string())
        };
        (outcome(text), outcome(&text.replace('\n', "\r\n")))
    }

    #[test]
    fn plain_rows_read_as_the_csv_reader_reads_them() {
        for body in [
            "a,0,2,8\nb,1,3,4\n",
            "a,0,2,8\nb,1,3,4",
            "\n\na,0,2,8\n\n\nb,1,3,4\n\n",
            " a , 0,2 ,8\n\tb,1,3,\t4 \n",
            "a,0,2,8\n   \nb,1,3,4\n",
            "a,0,2\n",
            "a,0,2,8,\n",
            "a,0,2,8\nb,,3,4\n",
            "a,0,2,8\n,1,3,4\n",
            "a,0,2,8\nb,3,1,4\n",
            "a,0,2,8\na,1,3,4\n",
            ",\n",
            "",
        ] {
            let text = format!("id,lower,upper,size\n{body}");
            let (plain, csv) = both_paths(&text);
            assert_eq!(plain, csv, "{body:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Bodies of rows of 0 to 5 cells (blank lines, short and long
        /// rows, cells of digits, letters and spaces, some empty), with or
        /// without a last line end: both paths agree.
        #[test]
        fn plain_rows_agree_with_the_csv_reader(
            rows in proptest::collection::vec(
                proptest::collection::vec("[ a0-9]{0,3}", 0..6),
                0..8,
            ),
            last_line_end: bool,
        ) {
            let mut body = rows
                .iter()
                .map(|cells| cells.join(","))
                .collect::<Vec<_>>()
                .join("\n");
            if last_line_end {
                body.push('\n');
            }
            let text = format!("id,lower,upper,size\n{body}");
            let (plain, csv) = both_paths(&text);
            proptest::prop_assert_eq!(plain, csv);
        }
    }

    #[test]
    fn reads_columns_in_any_order_with_aliases() {
        let p = read("size,end,buffer,start,alignment,offset\n8,3,x,1,,\n4,9,y,2,4,16\n").unwrap();
        assert_eq!(p.buffers()[0], Buffer::new("x", 1, 3, 8));
        assert_eq!(
            p.buffers()[1],
            Buffer::new("y", 2, 9, 4).aligned(4).fixed(16)
        );
    }

    /// Cells are trimmed of ASCII whitespace (spaces, tabs) on both sides,
    /// ids included; inner spaces are kept; a cell of spaces is empty.
    #[test]
    fn trims_cells() {
        let text = "id , lower,upper,size ,offset\n\t a b ,  1,3 , 8\t,  \n";
        let p = read(text).unwrap();
        assert_eq!(p.buffers()[0], Buffer::new("a b", 1, 3, 8));
        assert!(error("id,lower,upper,size\n  ,1,3,8\n").ends_with(":2: column `id`: empty id"));
    }

    /// MiniMalloc's full format: gaps and hints together, in any order,
    /// and both survive a write and a read.
    #[test]
    fn reads_gaps_and_hints_together() {
        let text = "id,lower,upper,size,hint,gaps\na,0,10,4,0,3-7\nb,3,7,4,0,\nc,0,2,2,-1,\n";
        let p = read(text).unwrap();
        assert_eq!(p.gaps().of(crate::BufferIdx(0)).len(), 1);
        assert!(p.gaps().of(crate::BufferIdx(1)).is_empty());
        let hints: Vec<Option<u64>> = p.indices().map(|b| p.hint(b)).collect();
        assert_eq!(hints, [Some(0), Some(0), None]);
        // `b` lives in `a`'s gap: both keep their hint 0, a valid plan.
        let plan = crate::Plan::from_offsets(vec![0, 0, 4]);
        assert_eq!(crate::validate(&p, &plan), Ok(()));
        let mut out = Vec::new();
        crate::problem::write_problem(&mut out, &p, Lifetimes::HalfOpen).unwrap();
        let q = read(std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(q.gaps(), p.gaps());
        assert_eq!(q.hints(), p.hints());
    }

    #[test]
    fn reads_zero_size_buffers() {
        let p = read("id,lower,upper,size,offset\na,0,2,0,\nb,1,3,0,12\nc,0,3,4,\n").unwrap();
        let sizes: Vec<u64> = p.buffers().iter().map(|b| b.size).collect();
        assert_eq!(sizes, [0, 0, 4]);
        assert_eq!(p.buffer(crate::BufferIdx(1)).fixed_offset, Some(12));
        assert_eq!(p.max_load(), 4);
    }

    #[test]
    fn header_only_is_empty_problem() {
        let p = read("id,lower,upper,size\n").unwrap();
        assert!(p.is_empty());
        assert_eq!(p.max_load(), 0);
    }

    #[test]
    fn parse_numbers() {
        assert_eq!(parse_u64(b"42"), Ok(Some(42)));
        assert_eq!(parse_u64(b""), Ok(None));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(Some(u64::MAX)));
        assert_eq!(
            parse_u64(b"18446744073709551616"),
            Err(InputErrorKind::Overflow("18446744073709551616".into()))
        );
        assert_eq!(parse_u64(b"-3"), Err(InputErrorKind::Negative("-3".into())));
        assert_eq!(
            parse_u64(b"4.5"),
            Err(InputErrorKind::NotInteger("4.5".into()))
        );
        assert_eq!(parse_u64(b"-"), Err(InputErrorKind::NotInteger("-".into())));
    }

    #[test]
    fn errors_name_file_line_and_column() {
        assert_eq!(
            error("id,lower,upper\na,0,1\n"),
            "in.csv:1: missing required column `size` (expected columns: id|buffer|buffer_id, lower|start|begin, upper|end, size, and optionally alignment, offset, hint, gaps, pool)"
        );
        assert_eq!(
            error("id,start,lower,upper,size\n"),
            "in.csv:1: column `lower`: column given twice (also as `start`)"
        );
        assert_eq!(
            error("id,lower,upper,size\na,0,2,4\nb,0,x,4\n"),
            "in.csv:3: column `upper`: expected a non-negative integer, got `x`"
        );
        assert_eq!(
            error("id,lower,upper,size\na,0,2,-4\n"),
            "in.csv:2: column `size`: must not be negative, got `-4`"
        );
        assert_eq!(
            error("id,lower,upper,size\na,3,3,1\n"),
            "in.csv:2: column `upper`: empty lifetime: lower 3, upper 3 is empty under half-open semantics"
        );
        assert_eq!(
            error("id,lower,upper,size\na,0,3,1\nb,1,2,1\na,2,3,1\n"),
            "in.csv:4: column `id`: duplicate id `a` (first on line 2)"
        );
        assert_eq!(
            error("id,lower,upper,size,alignment\na,0,3,1,0\n"),
            "in.csv:2: column `alignment`: alignment must be positive, got 0"
        );
        assert_eq!(
            error("id,lower,upper,size,alignment,offset\na,0,3,1,8,12\n"),
            "in.csv:2: column `offset`: fixed offset 12 is not a multiple of alignment 8"
        );
        assert_eq!(
            error("id,lower,upper,size,offset\na,0,3,8,0\nb,0,3,8,\nc,1,2,4,4\n"),
            "in.csv:4: column `offset`: fixed buffer `c` overlaps fixed buffer `a` (line 2) in time and address"
        );
        assert_eq!(
            error("id,lower,upper,size\na,0,3,18446744073709551615\nb,5,6,1\n"),
            "in.csv:3: column `size`: sizes (with alignment padding and fixed offsets) sum past 2^64: addresses could overflow"
        );
        assert_eq!(
            error("id,lower,upper,size\na,0,3\n"),
            "in.csv:2: expected 4 fields as in the header, found 3"
        );
    }

    #[test]
    fn chunked_parsing_keeps_lines_and_order() {
        let mut text = String::from("id,lower,upper,size\n");
        for i in 0..150_000u64 {
            text.push_str(&format!("b{i},{i},{},{}\n", i + 3, 1 + i % 7));
        }
        let p = read(&text).unwrap();
        assert_eq!(p.len(), 150_000);
        assert_eq!(
            p.buffers()[123_456],
            Buffer::new("b123456", 123_456, 123_459, 1 + 123_456 % 7)
        );
        // Errors deep in the file report their line, and the first one wins.
        let bad = text.replacen("b140000,140000", "b140000,x", 1).replacen(
            "b100000,100000",
            "b100000,-1",
            1,
        );
        assert_eq!(
            read(&bad).unwrap_err().to_string(),
            "in.csv:100002: column `lower`: must not be negative, got `-1`"
        );
        let dup = text.replacen("b140000,", "b7,", 1);
        assert_eq!(
            read(&dup).unwrap_err().to_string(),
            "in.csv:140002: column `id`: duplicate id `b7` (first on line 9)"
        );
    }

    #[test]
    fn chunked_parsing_keeps_gaps_and_hints_with_their_buffers() {
        // Large enough for several chunks and rounds; a quote keeps the
        // same rows in one chunk.
        let mut text = String::from("id,lower,upper,size,hint,gaps\n");
        for i in 0..150_000u64 {
            let gaps = if i % 997 == 0 {
                format!("{}-{}", i + 3, i + 5)
            } else {
                String::new()
            };
            let hint = if i % 13 == 0 { "0" } else { "" };
            text.push_str(&format!("b{i},{i},{},4,{hint},{gaps}\n", i + 9));
        }
        let chunked = read(&text).unwrap();
        let whole = read(&text.replacen("b0,", "\"b0\",", 1)).unwrap();
        assert_eq!(chunked.buffers(), whole.buffers());
        assert_eq!(chunked.gaps(), whole.gaps());
        assert_eq!(chunked.hints(), whole.hints());
        let b = crate::BufferIdx(997 * 13 * 11);
        assert_eq!(chunked.gaps().of(b).len(), 1);
        assert_eq!(chunked.hint(b), Some(0));
        let next = crate::BufferIdx(997 * 13 * 11 + 1);
        assert!(chunked.gaps().of(next).is_empty());
        assert_eq!(chunked.hint(next), None);
    }

    #[test]
    fn lifetime_semantics() {
        let text = "id,lower,upper,size\na,1,3,4\nb,3,5,4\n";
        let path = Path::new("in.csv");
        let half = read_problem_from(text.as_bytes(), path, Lifetimes::HalfOpen).unwrap();
        assert_eq!(half.max_load(), 4, "[1,3) and [3,5) do not overlap");
        let incl = read_problem_from(text.as_bytes(), path, Lifetimes::Inclusive).unwrap();
        assert_eq!(incl.max_load(), 8, "[1,3] and [3,5] share time 3");
        assert_eq!(incl.buffers()[0].end, 4);
        let excl = read_problem_from(text.as_bytes(), path, Lifetimes::Exclusive).unwrap();
        assert_eq!(excl.max_load(), 4, "(1,3) and (3,5) are disjoint");
        let err = read_problem_from(
            b"id,lower,upper,size\na,4,3,1\n",
            path,
            Lifetimes::Inclusive,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in.csv:2: column `upper`: empty lifetime: lower 4, upper 3 is empty under inclusive semantics"
        );
    }
}
