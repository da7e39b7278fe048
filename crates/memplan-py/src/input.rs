//! Input from Python: integer columns given as NumPy arrays (read in place,
//! whatever their integer dtype and strides) or as any iterable of ints,
//! and the names of lifetimes, solvers and their options. Every refusal
//! names the argument and, for a value, the buffer index.

use numpy::{PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::errors::argument_error;

/// What is wrong with one value of a column.
enum Bad {
    Negative(i128),
    TooLarge(String),
    NotInteger(String),
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bad::Negative(v) => write!(f, "must not be negative, got {v}"),
            Bad::TooLarge(v) => write!(f, "{v} does not fit in an unsigned 64-bit integer"),
            Bad::NotInteger(v) => write!(f, "expected an integer, got {v}"),
        }
    }
}

/// A column of optional values (`None`: no value).
pub type OptionalColumn = Vec<Option<u64>>;

/// Reads a column of non-negative integers; `field` names the argument in
/// errors.
pub fn column(py: Python<'_>, ob: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<u64>> {
    let values = read(py, ob, field, false)?;
    // Without `allow_missing`, every value is present.
    Ok(values.into_iter().flatten().collect())
}

/// Reads a column where `None` or a negative value means "no value" (fixed
/// offsets: a free buffer).
pub fn optional_column(
    py: Python<'_>,
    ob: &Bound<'_, PyAny>,
    field: &str,
) -> PyResult<OptionalColumn> {
    read(py, ob, field, true)
}

/// Reads a NumPy array of any integer dtype in place, or iterates any other
/// object; `allow_missing` turns `None` and negative values into `None`.
fn read(
    py: Python<'_>,
    ob: &Bound<'_, PyAny>,
    field: &str,
    allow_missing: bool,
) -> PyResult<Vec<Option<u64>>> {
    let located = |index: Option<usize>, bad: Bad| argument_error(py, field, index, bad);
    if let Ok(array) = ob.cast::<PyUntypedArray>() {
        if array.ndim() != 1 {
            return Err(located(
                None,
                Bad::NotInteger(format!("a {}-dimensional array", array.ndim())),
            ));
        }
        macro_rules! typed {
            ($($t:ty),*) => {
                $(
                    if let Ok(a) = ob.extract::<PyReadonlyArray1<'_, $t>>() {
                        return a
                            .as_array()
                            .iter()
                            .enumerate()
                            .map(|(i, &v)| {
                                let v = i128::from(v);
                                match u64::try_from(v) {
                                    Ok(v) => Ok(Some(v)),
                                    Err(_) if allow_missing => Ok(None),
                                    Err(_) => Err(located(Some(i), Bad::Negative(v))),
                                }
                            })
                            .collect();
                    }
                )*
            };
        }
        typed!(u64, i64, u32, i32, u16, i16, u8, i8);
        let dtype = array.dtype().str()?.to_string();
        return Err(located(
            None,
            Bad::NotInteger(format!("an array of dtype {dtype}")),
        ));
    }
    let mut values = Vec::with_capacity(ob.len().unwrap_or(0));
    for (i, item) in ob.try_iter()?.enumerate() {
        let item = item?;
        if allow_missing && item.is_none() {
            values.push(None);
            continue;
        }
        match item.extract::<i128>() {
            Ok(v) => match u64::try_from(v) {
                Ok(v) => values.push(Some(v)),
                Err(_) if v < 0 && allow_missing => values.push(None),
                Err(_) if v < 0 => return Err(located(Some(i), Bad::Negative(v))),
                Err(_) => return Err(located(Some(i), Bad::TooLarge(v.to_string()))),
            },
            Err(_) => {
                let text = item.repr()?.to_string();
                let bad = if item.is_instance_of::<PyInt>() {
                    Bad::TooLarge(text)
                } else {
                    Bad::NotInteger(text)
                };
                return Err(located(Some(i), bad));
            }
        }
    }
    Ok(values)
}

/// A lifetime convention by name: `half-open`, `inclusive`, `exclusive`
/// (underscores accepted for dashes); `None`: the request's default.
pub fn lifetimes(py: Python<'_>, name: Option<&str>) -> PyResult<memplan::Lifetimes> {
    match name {
        Some(name) => crate::solve::named(py, "lifetimes", name),
        None => Ok(memplan::request::DEFAULT_LIFETIMES),
    }
}
