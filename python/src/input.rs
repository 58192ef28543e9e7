//! What Python may pass where lakeseek wants row numbers or a vector: a Python sequence, a
//! [`RowAddresses`], or any Arrow array (`__arrow_c_array__`: pyarrow, arro3, polars via
//! pyarrow, ...).

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt64Type};
use arrow_array::Array;
use arrow_schema::DataType;
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3_arrow::PyArray;

use crate::arrow_out::RowAddresses;
use crate::errors::InvalidArgument;

/// Row numbers or row addresses as `u64`s, from a sequence of ints, a [`RowAddresses`] or
/// an Arrow integer array without nulls.
pub(crate) fn extract_u64s(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u64>> {
    if let Ok(addresses) = value.cast::<RowAddresses>() {
        return Ok(addresses.get().values().to_vec());
    }
    if value.hasattr(intern!(value.py(), "__arrow_c_array__"))? {
        let array: PyArray = value.extract()?;
        let cast = cast_without_nulls(array.array().as_ref(), &DataType::UInt64, what)?;
        return Ok(cast.as_primitive::<UInt64Type>().values().to_vec());
    }
    value.extract::<Vec<u64>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a sequence of non-negative ints or an Arrow integer array"
        ))
    })
}

/// A query vector as `f32`s, from a sequence of floats or an Arrow float array.
pub(crate) fn extract_f32s(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f32>> {
    if value.hasattr(intern!(value.py(), "__arrow_c_array__"))? {
        let array: PyArray = value.extract()?;
        let cast = cast_without_nulls(array.array().as_ref(), &DataType::Float32, what)?;
        return Ok(cast.as_primitive::<Float32Type>().values().to_vec());
    }
    value.extract::<Vec<f32>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a sequence of floats or an Arrow float array"
        ))
    })
}

fn cast_without_nulls(
    array: &dyn Array,
    to: &DataType,
    what: &str,
) -> PyResult<arrow_array::ArrayRef> {
    if array.null_count() > 0 {
        return Err(InvalidArgument::new_err(format!(
            "invalid argument: {what} holds {} nulls",
            array.null_count()
        )));
    }
    let options = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow_cast::cast_with_options(array, to, &options)
        .map_err(|e| InvalidArgument::new_err(format!("invalid argument: {what} as {to}: {e}")))
}

/// Column names from a sequence of str (a bare `str` is refused: it would be read as
/// single letters).
pub(crate) fn extract_columns(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    if value.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(
            "columns must be a list of column names, not a str",
        ));
    }
    value.extract::<Vec<String>>()
}

/// Borrow owned names as `&str`s.
pub(crate) fn as_strs(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}
