//! Python exceptions mirroring `lakeseek::Error`: one class per variant under a common base,
//! the object path and byte range as attributes, the message as the Rust error prints it.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

create_exception!(
    lakeseek,
    LakeseekError,
    PyException,
    "Base class of every lakeseek error."
);
create_exception!(
    lakeseek,
    NotFound,
    LakeseekError,
    "The object, dataset, column, index or node does not exist."
);
create_exception!(
    lakeseek,
    InvalidArgument,
    LakeseekError,
    "The caller passed something invalid (a bad row address, URL, filter, ...)."
);
create_exception!(
    lakeseek,
    Corrupt,
    LakeseekError,
    "Bytes read from storage violate the format (the message names object and byte range)."
);
create_exception!(
    lakeseek,
    Unsupported,
    LakeseekError,
    "Valid input that uses a feature lakeseek does not implement."
);
create_exception!(
    lakeseek,
    StoreError,
    LakeseekError,
    "The object store failed (after its retries)."
);
create_exception!(
    lakeseek,
    ObjectChanged,
    LakeseekError,
    "An object was replaced while it was being read: reopen the dataset, file or index."
);
create_exception!(
    lakeseek,
    CommitConflict,
    LakeseekError,
    "A commit lost to a concurrent writer; nothing of it was committed."
);

/// Register the exception classes on the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("LakeseekError", py.get_type::<LakeseekError>())?;
    module.add("NotFound", py.get_type::<NotFound>())?;
    module.add("InvalidArgument", py.get_type::<InvalidArgument>())?;
    module.add("Corrupt", py.get_type::<Corrupt>())?;
    module.add("Unsupported", py.get_type::<Unsupported>())?;
    module.add("StoreError", py.get_type::<StoreError>())?;
    module.add("ObjectChanged", py.get_type::<ObjectChanged>())?;
    module.add("CommitConflict", py.get_type::<CommitConflict>())?;
    Ok(())
}

/// The Python exception for a lakeseek error, with `path` (object path or logical name,
/// `None` when the variant has none) and `range` (`(start, end)` byte range or `None`).
pub(crate) fn to_py_err(error: lakeseek::Error) -> PyErr {
    use lakeseek::Error as E;
    let message = error.to_string();
    let (err, path, range) = match &error {
        E::NotFound { path, .. } => (NotFound::new_err(message), Some(path), None),
        E::InvalidArgument(_) => (InvalidArgument::new_err(message), None, None),
        E::Corrupt { path, range, .. } => (Corrupt::new_err(message), Some(path), range.clone()),
        E::Unsupported { path, .. } => (Unsupported::new_err(message), Some(path), None),
        E::Store { path, range, .. } => (StoreError::new_err(message), Some(path), range.clone()),
        E::ObjectChanged { path, range, .. } => {
            (ObjectChanged::new_err(message), Some(path), range.clone())
        }
        E::Conflict { path, .. } => (CommitConflict::new_err(message), Some(path), None),
        _ => (LakeseekError::new_err(message), None, None),
    };
    Python::attach(|py| {
        let value = err.value(py);
        let range = range
            .map(|r| PyTuple::new(py, [r.start, r.end]))
            .transpose();
        // Attribute failures cannot happen on a fresh exception object; ignore them rather
        // than replace the error being raised.
        let _ = value.setattr("path", path.cloned());
        if let Ok(range) = range {
            let _ = value.setattr("range", range);
        }
    });
    err
}
