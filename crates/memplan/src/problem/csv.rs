//! CSV plumbing shared by the problem, plan and pool readers: line checks,
//! the reader, line numbers, located CSV errors, cells as numbers.

use std::path::Path;

use rayon::prelude::*;

use super::input_error::{InputError, InputErrorKind, MAX_LINE_BYTES};

/// Refuses `bytes` if a line is longer than [`MAX_LINE_BYTES`] or a quoted
/// field is never closed (which the CSV reader would otherwise report as a
/// field count at the end of the file), naming the line.
pub(crate) fn check_lines(bytes: &[u8], path: &Path) -> Result<(), InputError> {
    let err = |line, kind| InputError {
        path: path.to_path_buf(),
        line: Some(line),
        column: None,
        kind: Box::new(kind),
    };
    if has_long_stretch(bytes) {
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
        for (line, end) in (1u64..).zip(ends) {
            if end - start > MAX_LINE_BYTES {
                return Err(err(line, InputErrorKind::LineTooLong(end - start)));
            }
            start = end + 1;
        }
    }
    match memchr::memchr(b'"', bytes).and_then(|_| unterminated_quote(bytes)) {
        Some(line) => Err(err(line, InputErrorKind::UnterminatedQuote)),
        None => Ok(()),
    }
}

/// Whether `bytes` might hold a line longer than [`MAX_LINE_BYTES`]: false
/// when every aligned block of half that length holds a line end (a line
/// of more than `MAX_LINE_BYTES` bytes covers a whole such block). A few
/// dozen searches of a few bytes each at a million lines, where the exact
/// scan visits every line end; true sends the caller to that scan.
fn has_long_stretch(bytes: &[u8]) -> bool {
    const BLOCK: usize = MAX_LINE_BYTES / 2;
    bytes.len() > MAX_LINE_BYTES
        && bytes
            .chunks_exact(BLOCK)
            .any(|block| memchr::memchr(b'\n', block).is_none())
}

/// The line of a quoted field that is still open at the end of `bytes`, as
/// RFC 4180 reads it: a quote opens a field only at its start, `""` inside
/// is a quote, and a quote followed by anything else closes it.
fn unterminated_quote(bytes: &[u8]) -> Option<u64> {
    #[derive(Clone, Copy)]
    enum State {
        FieldStart,
        Unquoted,
        Quoted,
        QuoteInQuoted,
    }
    let mut state = State::FieldStart;
    let mut line = 1u64;
    let mut opened = 1u64;
    for &b in bytes {
        state = match (state, b) {
            (State::FieldStart, b'"') => {
                opened = line;
                State::Quoted
            }
            (State::Quoted, b'"') => State::QuoteInQuoted,
            (State::Quoted, _) => State::Quoted,
            (State::QuoteInQuoted, b'"') => State::Quoted,
            (_, b',' | b'\n') => State::FieldStart,
            (_, _) => State::Unquoted,
        };
        if b == b'\n' {
            line += 1;
        }
    }
    matches!(state, State::Quoted).then_some(opened)
}

/// The bytes of `path`, or an error naming it.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, InputError> {
    std::fs::read(path).map_err(|e| InputError {
        path: path.to_path_buf(),
        line: None,
        column: None,
        kind: Box::new(InputErrorKind::Io(e.to_string())),
    })
}

/// Splits `body` (which starts on line 2, after the header) into about
/// `parts` chunks at line ends, each with its first line number. Input with
/// quotes stays in one chunk: a quoted cell may hold a line break.
pub(crate) fn split_lines(body: &[u8], parts: usize) -> Vec<(&[u8], u64)> {
    const MIN_CHUNK: usize = 1 << 20;
    if body.len() < 2 * MIN_CHUNK || parts < 2 || memchr::memchr(b'"', body).is_some() {
        return vec![(body, 2)];
    }
    let target = body.len().div_ceil(parts * 4).max(MIN_CHUNK);
    let mut bounds = vec![0];
    let mut from = 0;
    while from < body.len() {
        let to = (from + target).min(body.len());
        from = match memchr::memchr(b'\n', &body[to - 1..]) {
            Some(at) => to + at,
            None => body.len(),
        };
        bounds.push(from);
    }
    // The lines of each chunk counted in parallel, then numbered.
    let counts: Vec<u64> = bounds
        .par_windows(2)
        .map(|w| memchr::memchr_iter(b'\n', &body[w[0]..w[1]]).count() as u64)
        .collect();
    let mut line = 2u64;
    bounds
        .windows(2)
        .zip(counts)
        .map(|(w, count)| {
            let first = line;
            line += count;
            (&body[w[0]..w[1]], first)
        })
        .collect()
}

/// A CSV reader with memplan's settings: header row, cells trimmed.
pub(crate) fn csv_reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(bytes)
}

/// Line numbers of records, counted from the bytes themselves: the CSV
/// reader reports the position before any blank lines it skipped.
pub(crate) struct LineCounter {
    byte: usize,
    line: u64,
}

impl LineCounter {
    /// A counter at the start of `bytes`, which is line `first_line`.
    pub(crate) fn new(first_line: u64) -> Self {
        LineCounter {
            byte: 0,
            line: first_line,
        }
    }

    /// The line of the record at `position` (records come in order).
    pub(crate) fn line(&mut self, bytes: &[u8], position: Option<&csv::Position>) -> u64 {
        let Some(p) = position else { return self.line };
        let target = (p.byte() as usize).min(bytes.len());
        if target >= self.byte {
            self.line += bytes[self.byte..target]
                .iter()
                .filter(|&&c| c == b'\n')
                .count() as u64;
            self.byte = target;
        }
        // Skip the line ends before the record's first byte.
        while self.byte < bytes.len() && matches!(bytes[self.byte], b'\n' | b'\r') {
            if bytes[self.byte] == b'\n' {
                self.line += 1;
            }
            self.byte += 1;
        }
        self.line
    }
}

/// The line a CSV error happened at, if the error knows it.
pub(crate) fn csv_line(e: &csv::Error) -> Option<u64> {
    e.position().map(|p| p.line())
}

/// A CSV error located at its line in `path`.
pub(crate) fn csv_error(e: &csv::Error, path: &Path) -> InputError {
    InputError::at(path, csv_line(e), None, InputErrorKind::Csv(e.to_string()))
}

/// The header row of `reader`'s file.
pub(crate) fn read_header(
    reader: &mut csv::Reader<&[u8]>,
    path: &Path,
) -> Result<csv::ByteRecord, InputError> {
    reader
        .byte_headers()
        .cloned()
        .map_err(|e| csv_error(&e, path))
}

/// Calls `f` with each record after the header of `reader` (over `bytes`)
/// and its line, stopping at the first error.
pub(crate) fn each_record(
    reader: &mut csv::Reader<&[u8]>,
    bytes: &[u8],
    path: &Path,
    mut f: impl FnMut(&csv::ByteRecord, u64) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut record = csv::ByteRecord::new();
    let mut lines = LineCounter::new(1);
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| csv_error(&e, path))?
    {
        f(&record, lines.line(bytes, record.position()))?;
    }
    Ok(())
}

/// Parses a `hint` cell as MiniMalloc writes it: an offset, or `-1` (or
/// an empty cell) for none. Other negative numbers are refused.
pub(crate) fn parse_hint(cell: &[u8]) -> Result<Option<u64>, InputErrorKind> {
    if cell == b"-1" {
        return Ok(None);
    }
    parse_u64(cell).map_err(|kind| match kind {
        InputErrorKind::NotInteger(s) | InputErrorKind::Negative(s) => InputErrorKind::BadHint(s),
        other => other,
    })
}

/// Parses a decimal `u64` cell; `Ok(None)` for an empty cell.
pub(crate) fn parse_u64(cell: &[u8]) -> Result<Option<u64>, InputErrorKind> {
    if cell.is_empty() {
        return Ok(None);
    }
    let text = || String::from_utf8_lossy(cell).into_owned();
    let (negative, digits) = match cell.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, cell),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(InputErrorKind::NotInteger(text()));
    }
    if negative {
        return Err(if digits.iter().all(|&d| d == b'0') {
            InputErrorKind::NotInteger(text())
        } else {
            InputErrorKind::Negative(text())
        });
    }
    let mut value: u64 = 0;
    for &d in digits {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(|| InputErrorKind::Overflow(text()))?;
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of `lengths` bytes (line ends apart), starting `shift` bytes
    /// into a first line.
    fn lines(shift: usize, lengths: &[usize]) -> Vec<u8> {
        let mut bytes = vec![b'x'; shift];
        for &n in lengths {
            bytes.push(b'\n');
            bytes.extend(std::iter::repeat_n(b'y', n));
        }
        bytes
    }

    #[test]
    fn long_lines_are_found_wherever_they_lie() {
        let m = MAX_LINE_BYTES;
        let path = Path::new("f.csv");
        for shift in [0, 1, m / 2 - 1, m / 2, m / 2 + 1, m - 1] {
            // At the limit: accepted, and the quick check may pass.
            let ok = lines(shift, &[m, 10, m]);
            assert!(check_lines(&ok, path).is_ok(), "shift {shift}");
            // One byte over, anywhere: the quick check sends to the scan,
            // which names the line.
            for (at, line) in [(0, 2), (2, 4)] {
                let mut lengths = vec![m, 10, m];
                lengths[at] += 1;
                let bad = lines(shift, &lengths);
                assert!(has_long_stretch(&bad), "shift {shift}, at {at}");
                let e = check_lines(&bad, path).unwrap_err();
                assert_eq!(e.line, Some(line));
                assert!(matches!(*e.kind, InputErrorKind::LineTooLong(n) if n == m + 1));
            }
        }
        // Short lines: no block without a line end.
        assert!(!has_long_stretch(&lines(3, &[40; 100_000])));
    }
}
