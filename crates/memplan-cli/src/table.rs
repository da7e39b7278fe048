//! The tables of `memplan bench` (its comparisons, the differential
//! benchmark and the pool strategies): rows printed as they come in human
//! units, or as CSV / JSON with raw numbers.

use std::path::Path;

use serde_json::{json, Value};

use crate::args::BenchFormat;
use crate::say;
use crate::Failure;

/// The file name of `file`, for a table's first column.
pub(crate) fn file_name(file: &Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A column: its title and width in the table, its keys in CSV and JSON
/// (a table cell may hold several raw values, e.g. bytes and percent).
pub(crate) struct Column {
    title: &'static str,
    width: usize,
    left: bool,
    keys: &'static [&'static str],
}

impl Column {
    pub(crate) fn left(title: &'static str, width: usize, keys: &'static [&'static str]) -> Self {
        Column {
            title,
            width,
            left: true,
            keys,
        }
    }

    pub(crate) fn right(title: &'static str, width: usize, keys: &'static [&'static str]) -> Self {
        Column {
            title,
            width,
            left: false,
            keys,
        }
    }
}

/// A table cell: its text in human units and its raw values, one per key
/// of its column.
pub(crate) struct Cell {
    text: String,
    values: Vec<Value>,
}

impl Cell {
    pub(crate) fn new<const N: usize>(text: impl Into<String>, values: [Value; N]) -> Self {
        Cell {
            text: text.into(),
            values: values.into(),
        }
    }

    /// No value (a failed run, no `sort`): `-` in the table.
    pub(crate) fn none(keys: usize) -> Self {
        Cell {
            text: "-".into(),
            values: vec![Value::Null; keys],
        }
    }
}

/// Prints rows as they come (table, CSV) or as one JSON document at the
/// end.
pub(crate) struct Printer<'a> {
    format: BenchFormat,
    columns: &'a [Column],
    rows: Vec<Value>,
}

impl<'a> Printer<'a> {
    pub(crate) fn new(format: BenchFormat, columns: &'a [Column]) -> Result<Self, Failure> {
        match format {
            BenchFormat::Table => {
                let titles: Vec<String> = columns.iter().map(|c| pad(c, c.title)).collect();
                say!("{}", titles.join(" ").trim_end())?;
            }
            BenchFormat::Csv => {
                let keys: Vec<&str> = columns
                    .iter()
                    .flat_map(|c| c.keys.iter().copied())
                    .collect();
                say!("{}", keys.join(","))?;
            }
            BenchFormat::Json => {}
        }
        Ok(Printer {
            format,
            columns,
            rows: Vec::new(),
        })
    }

    pub(crate) fn row(&mut self, cells: &[Cell]) -> Result<(), Failure> {
        match self.format {
            BenchFormat::Table => {
                let texts: Vec<String> = self
                    .columns
                    .iter()
                    .zip(cells)
                    .map(|(c, cell)| pad(c, &cell.text))
                    .collect();
                say!("{}", texts.join(" ").trim_end())?;
            }
            BenchFormat::Csv => {
                let fields: Vec<String> = cells
                    .iter()
                    .flat_map(|c| c.values.iter().map(csv_field))
                    .collect();
                say!("{}", fields.join(","))?;
            }
            BenchFormat::Json => {
                let object: serde_json::Map<String, Value> = self
                    .columns
                    .iter()
                    .zip(cells)
                    .flat_map(|(c, cell)| {
                        c.keys
                            .iter()
                            .map(|k| k.to_string())
                            .zip(cell.values.iter().cloned())
                    })
                    .collect();
                self.rows.push(Value::Object(object));
            }
        }
        Ok(())
    }

    /// Prints the summary lines (not in CSV, which holds rows only) and,
    /// in JSON, the whole document.
    pub(crate) fn finish(self, summary: Vec<(String, Value)>) -> Result<(), Failure> {
        match self.format {
            BenchFormat::Table => {
                if !summary.is_empty() {
                    say!()?;
                    for (text, _) in &summary {
                        say!("{text}")?;
                    }
                }
            }
            BenchFormat::Csv => {}
            BenchFormat::Json => {
                let summary: Vec<Value> = summary.into_iter().map(|(_, v)| v).collect();
                say!("{}", json!({ "rows": self.rows, "summary": summary }))?;
            }
        }
        Ok(())
    }
}

fn pad(column: &Column, text: &str) -> String {
    if column.left {
        format!("{text:<width$}", width = column.width)
    } else {
        format!("{text:>width$}", width = column.width)
    }
}

/// A raw value as a CSV field: numbers and booleans as they are, strings
/// quoted when needed, nothing for null.
pub(crate) fn csv_field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.clone()
            }
        }
        other => other.to_string(),
    }
}
