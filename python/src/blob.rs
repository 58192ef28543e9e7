//! `lakeseek.BlobHandle`: one blob of a blob column, its bytes read by range on demand (the
//! GIL released, on the shared runtime). `Dataset.take_blobs` hands each out wrapped in the
//! package's `lakeseek.BlobFile`, an `io.RawIOBase` (file object) over it.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::runtime::{block_on, spawn_awaitable};

/// One blob: its size and where it is; bytes are read only when asked.
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct BlobHandle(lakeseek::BlobHandle);

#[pymethods]
impl BlobHandle {
    /// The blob's size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.0.size()
    }

    /// The object holding the blob (a data file or a `.blob` file), relative to the store's
    /// root.
    #[getter]
    fn object_path(&self) -> String {
        self.0.object_path().to_string()
    }

    /// The blob's byte range `(start, end)` in its object.
    #[getter]
    fn object_range(&self) -> (u64, u64) {
        let r = self.0.object_range();
        (r.start, r.end)
    }

    /// Bytes `start:end` of the blob (`InvalidArgument` past its end); blocks with the GIL
    /// released.
    fn read_range<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        end: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let handle = self.0.clone();
        let range = start..end;
        let bytes = block_on(py, async move { handle.read_range(range).await })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// `await handle.read_range_async(start, end)`.
    fn read_range_async<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        end: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.0.clone();
        let range = start..end;
        spawn_awaitable(
            py,
            async move { Ok(handle.read_range(range).await?.to_vec()) },
        )
    }

    /// The whole blob.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.read_range(py, 0, self.0.size())
    }

    /// `await handle.read_all_async()`.
    fn read_all_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_range_async(py, 0, self.0.size())
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.0.size()).unwrap_or(usize::MAX)
    }

    fn __repr__(&self) -> String {
        let r = self.0.object_range();
        format!(
            "lakeseek.BlobHandle({} bytes at {}[{}..{}])",
            self.0.size(),
            self.0.object_path(),
            r.start,
            r.end
        )
    }
}

/// The blobs of one take: each `None` or a `lakeseek.BlobFile` over its handle.
pub(crate) struct BlobFiles(pub(crate) Vec<Option<lakeseek::BlobHandle>>);

impl<'py> IntoPyObject<'py> for BlobFiles {
    type Target = PyList;
    type Output = Bound<'py, PyList>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let file_class = py
            .import(intern!(py, "lakeseek.blob"))?
            .getattr(intern!(py, "BlobFile"))?;
        let files = self
            .0
            .into_iter()
            .map(|blob| match blob {
                Some(handle) => file_class.call1((BlobHandle(handle),)),
                None => Ok(py.None().into_bound(py)),
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, files)
    }
}
