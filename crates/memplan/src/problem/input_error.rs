//! Why an input file was refused: the file, line and column, and what
//! was wrong, with the bad cell quoted (escaped, bounded).

use std::fmt;
use std::path::{Path, PathBuf};

use super::ProblemError;
use crate::quote::quoted;

/// Why an input file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file as named by the caller.
    pub path: PathBuf,
    /// 1-based line (the header is line 1), when the error is at a line.
    pub line: Option<u64>,
    /// Column name as written in the header, when the error is at a field.
    pub column: Option<String>,
    /// What is wrong (boxed to keep `Result`s small).
    pub kind: Box<InputErrorKind>,
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error in `path`, at `line` and `column` when known.
    pub(crate) fn at(
        path: &Path,
        line: Option<u64>,
        column: Option<String>,
        kind: InputErrorKind,
    ) -> Self {
        InputError {
            path: path.to_path_buf(),
            line,
            column,
            kind: Box::new(kind),
        }
    }

    /// True when a plan file was read but its ids do not match the
    /// problem's (an unknown, repeated or missing buffer): the plan is
    /// invalid, as opposed to unreadable.
    pub fn is_plan_mismatch(&self) -> bool {
        matches!(
            *self.kind,
            InputErrorKind::UnknownId(_)
                | InputErrorKind::MissingBuffer(_)
                | InputErrorKind::DuplicateId { .. }
                | InputErrorKind::UnknownPool { .. }
        )
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if let Some(column) = &self.column {
            write!(f, "column `{}`: ", quoted(column))?;
        }
        write!(f, "{}", self.kind)
    }
}

/// The kinds of bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputErrorKind {
    #[error("cannot read file: {0}")]
    Io(String),
    #[error("malformed CSV: {0}")]
    Csv(String),
    #[error("missing required column `{0}` (expected columns: {COLUMNS_HELP})")]
    MissingColumn(&'static str),
    /// In a plan file.
    #[error("missing required column `{column}` (expected columns: {expected})")]
    MissingPlanColumn {
        column: &'static str,
        expected: String,
    },
    #[error("column given twice (also as `{}`)", quoted(.0))]
    DuplicateColumn(String),
    #[error("unknown column (expected columns: {COLUMNS_HELP})")]
    UnknownColumn,
    #[error("expected {expected} fields as in the header, found {found}")]
    FieldCount { expected: usize, found: usize },
    #[error("empty id")]
    EmptyId,
    #[error("id is not valid UTF-8")]
    NotUtf8,
    #[error("empty file: expected a header row")]
    EmptyFile,
    #[error("empty column name (a trailing comma?)")]
    EmptyColumnName,
    #[error("empty value in a required column")]
    EmptyValue,
    #[error("expected a non-negative integer, got `{}`", quoted(.0))]
    NotInteger(String),
    #[error("must not be negative, got `{}`", quoted(.0))]
    Negative(String),
    #[error("`{}` does not fit in an unsigned 64-bit integer", quoted(.0))]
    Overflow(String),
    #[error("inclusive upper {0} cannot be converted to half-open: {0} + 1 overflows 64 bits")]
    UpperOverflow(u64),
    #[error("empty lifetime: lower {lower}, upper {upper} is empty under {semantics} semantics")]
    EmptyLifetime {
        lower: u64,
        upper: u64,
        semantics: &'static str,
    },
    #[error("duplicate id `{}` (first on line {first_line})", quoted(.id))]
    DuplicateId { id: String, first_line: u64 },
    #[error("fixed buffer `{}` overlaps fixed buffer `{}` (line {other_line}) in time and address", quoted(.id), quoted(.other_id))]
    FixedOverlap {
        id: String,
        other_id: String,
        other_line: u64,
    },
    #[error("unknown buffer id `{}`", quoted(.0))]
    UnknownId(String),
    #[error("no offset for buffer `{}`", quoted(.0))]
    MissingBuffer(String),
    #[error("{0}")]
    Problem(ProblemError),
    #[error("unterminated quoted field (a `\"` opened here is never closed)")]
    UnterminatedQuote,
    #[error("line longer than {MAX_LINE_BYTES} bytes ({0} bytes): not a planning problem")]
    LineTooLong(usize),
    #[error("a `pool` column needs the list of pools (memplan: `--pools POOLS.csv`)")]
    PoolColumnNeedsPools,
    #[error("unknown pool `{}` (pools: {known})", quoted(.pool))]
    UnknownPool { pool: String, known: String },
    #[error("duplicate pool `{}` (first on line {first_line})", quoted(.pool))]
    DuplicatePool { pool: String, first_line: u64 },
    /// A rule of the pool model (see `pools::PoolProblemError`), as text:
    /// this layer knows no pools.
    #[error("{0}")]
    Pools(String),
    #[error("missing required column `{0}` (expected columns: {POOL_COLUMNS_HELP})")]
    MissingPoolColumn(&'static str),
    #[error("unknown column (expected columns: {POOL_COLUMNS_HELP})")]
    UnknownPoolColumn,
    #[error("gap `{}`: expected `lo-hi` or `lo-hi@wlo:whi` (non-negative integers, entries separated by spaces)", quoted(.0))]
    GapSyntax(String),
    #[error("gap `{}`: {error}", quoted(.entry))]
    GapNumber {
        entry: String,
        error: Box<InputErrorKind>,
    },
    #[error("gap `{}` is empty under {semantics} semantics", quoted(.entry))]
    EmptyGap {
        entry: String,
        semantics: &'static str,
    },
    #[error("gap `{}` is outside the lifetime {lower}-{upper}", quoted(.entry))]
    GapOutsideLifetime {
        entry: String,
        lower: u64,
        upper: u64,
    },
    #[error("gaps `{}` and `{}` overlap", quoted(.first), quoted(.second))]
    GapsOverlap { first: String, second: String },
    #[error("gap `{}`: the window must satisfy 0 <= wlo < whi <= size ({size})", quoted(.entry))]
    GapWindow { entry: String, size: u64 },
    #[error("a `gaps` column is not supported with pools")]
    GapsWithPools,
    #[error("expected an offset or -1 (no hint), got `{}`", quoted(.0))]
    BadHint(String),
    #[error("hints are not supported with pools (yet): remove the `hint` column")]
    HintWithPools,
}

/// The columns of a pool file, for messages.
const POOL_COLUMNS_HELP: &str = "pool|name, capacity, and optionally alignment";

pub(crate) const COLUMNS_HELP: &str =
    "id|buffer|buffer_id, lower|start|begin, upper|end, size, and optionally alignment, offset, hint, gaps, pool";

/// The longest line accepted in an input or plan file, in bytes (1 MiB):
/// a longer line is refused before parsing, so that reading costs memory
/// in proportion to the file, with a small constant.
pub const MAX_LINE_BYTES: usize = 1 << 20;
