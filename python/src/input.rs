//! What Python may pass where lakeseek wants row numbers or a vector: a Python sequence, a
//! [`RowAddresses`], a numpy array (vectors), or any Arrow array (`__arrow_c_array__`:
//! pyarrow, arro3, polars via pyarrow, ...).

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

/// A query vector as `f32`s, from a sequence of numbers, a one-dimensional numpy array of
/// any float (or integer) dtype, or an Arrow float array.
pub(crate) fn extract_f32s(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f32>> {
    let py = value.py();
    if value.hasattr(intern!(py, "__arrow_c_array__"))? {
        let array: PyArray = value.extract()?;
        let cast = cast_without_nulls(array.array().as_ref(), &DataType::Float32, what)?;
        return Ok(cast.as_primitive::<Float32Type>().values().to_vec());
    }
    let numbers = if is_ndarray(value)? {
        ndarray_numbers(value, what)?
    } else {
        value.clone()
    };
    // Each number as a Python float (`__float__`: numpy scalars of every dtype), rounded
    // to f32 as lakeseek searches in f32.
    let values = numbers.extract::<Vec<f64>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a sequence of floats, a 1-D numpy array or an Arrow float array"
        ))
    })?;
    Ok(values.into_iter().map(|v| v as f32).collect())
}

/// Whether `value` looks like a numpy array (`ndim`, `dtype` and `tolist`).
fn is_ndarray(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = value.py();
    Ok(value.hasattr(intern!(py, "ndim"))?
        && value.hasattr(intern!(py, "dtype"))?
        && value.hasattr(intern!(py, "tolist"))?)
}

/// The numbers of a one-dimensional numeric numpy array as a list of Python numbers.
fn ndarray_numbers<'py>(value: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = value.py();
    let ndim: usize = value.getattr(intern!(py, "ndim"))?.extract()?;
    if ndim != 1 {
        return Err(InvalidArgument::new_err(format!(
            "invalid argument: {what} must be one vector (a 1-D array), not {ndim}-D"
        )));
    }
    let kind: String = value
        .getattr(intern!(py, "dtype"))?
        .getattr(intern!(py, "kind"))?
        .extract()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        let dtype = value.getattr(intern!(py, "dtype"))?.str()?.to_string();
        return Err(PyTypeError::new_err(format!(
            "{what} must be a float array, not dtype {dtype}"
        )));
    }
    value.call_method0(intern!(py, "tolist"))
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
