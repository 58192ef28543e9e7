//! Arrow results for Python through the Arrow PyCapsule interface (no pyarrow needed):
//! [`Table`] (`__arrow_c_stream__`), [`RowAddresses`] (`__arrow_c_array__`) and [`Schema`]
//! (`__arrow_c_schema__`). Any consumer of the interface takes them: `pyarrow.table(t)`,
//! `polars.from_arrow(t)` / `polars.DataFrame(t)`, `duckdb.sql("SELECT * FROM t")`, arro3.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StructArray, UInt64Array};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, SchemaRef};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use pyo3_arrow::ffi::{
    to_array_pycapsules, to_schema_pycapsule, to_stream_pycapsule, ArrayIterator,
};

/// Arrow data: record batches of one schema. Export it with the Arrow PyCapsule interface
/// (`pyarrow.table(t)`, `polars.DataFrame(t)`, `duckdb.sql("FROM t")`).
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct Table {
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
}

impl Table {
    /// A one-column table of row addresses (`_rowaddr`, uint64).
    pub(crate) fn row_addresses(addresses: Vec<u64>) -> Self {
        let column: ArrayRef = Arc::new(UInt64Array::from(addresses));
        let schema = Arc::new(arrow_schema::Schema::new(vec![RowAddresses::field()]));
        let batch = RecordBatch::try_new(schema, vec![column]);
        // One non-null uint64 column matching its field: cannot fail.
        Self::from_batch(
            batch.unwrap_or_else(|_| {
                RecordBatch::new_empty(Arc::new(arrow_schema::Schema::empty()))
            }),
        )
    }

    pub(crate) fn from_batch(batch: RecordBatch) -> Self {
        Self {
            schema: batch.schema(),
            batches: vec![batch],
        }
    }
}

#[pymethods]
impl Table {
    /// Number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Number of columns.
    #[getter]
    fn num_columns(&self) -> usize {
        self.schema.fields().len()
    }

    /// Column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// The Arrow schema.
    #[getter]
    fn schema(&self) -> Schema {
        Schema(Arc::clone(&self.schema))
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    /// The rows as a JSON array of objects (arrow-json: nulls explicit, timestamps as ISO
    /// 8601 text, decimals and 64-bit integers as numbers, binary as hex).
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.json())
    }

    /// The rows as a list of dicts of JSON-compatible values (`json.loads(t.to_json())`):
    /// no pyarrow needed, e.g. for the answer of a serverless handler.
    fn to_pylist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = py.detach(|| self.json())?;
        py.import("json")?.call_method1("loads", (json,))
    }

    fn __repr__(&self) -> String {
        format!(
            "lakeseek.Table({} rows; {})",
            self.num_rows(),
            describe_fields(&self.schema)
        )
    }

    /// The Arrow C schema (PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(to_schema_pycapsule(py, self.schema.as_ref())?)
    }

    /// An Arrow C stream of the batches (PyCapsule interface).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        self.stream(py, requested_schema)
    }
}

impl Table {
    fn json(&self) -> PyResult<String> {
        let mut writer = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::JsonArray>(Vec::new());
        let batches: Vec<&RecordBatch> = self.batches.iter().collect();
        let written = writer
            .write_batches(&batches)
            .and_then(|()| writer.finish());
        written.map_err(|e| crate::errors::LakeseekError::new_err(format!("to_json: {e}")))?;
        let bytes = writer.into_inner();
        if bytes.is_empty() {
            return Ok("[]".to_string());
        }
        String::from_utf8(bytes)
            .map_err(|e| crate::errors::LakeseekError::new_err(format!("to_json: {e}")))
    }

    /// The batches as an Arrow C stream capsule.
    pub(crate) fn stream<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let struct_field = Field::new_struct("", self.schema.fields().clone(), false)
            .with_metadata(self.schema.metadata().clone());
        let arrays: Vec<_> = self
            .batches
            .iter()
            .map(|b| Ok::<ArrayRef, ArrowError>(Arc::new(StructArray::from(b.clone()))))
            .collect();
        let reader = ArrayIterator::new(arrays, Arc::new(struct_field));
        Ok(to_stream_pycapsule(py, Box::new(reader), requested_schema)?)
    }
}

/// Row addresses (`fragment << 32 | offset`, ascending for a filter's answer): an Arrow
/// `UInt64` array (`__arrow_c_array__`) that is also a read-only sequence of ints.
#[pyclass(module = "lakeseek", frozen, sequence)]
pub(crate) struct RowAddresses {
    array: Arc<UInt64Array>,
}

impl RowAddresses {
    pub(crate) fn new(addresses: Vec<u64>) -> Self {
        Self {
            array: Arc::new(UInt64Array::from(addresses)),
        }
    }

    pub(crate) fn values(&self) -> &[u64] {
        self.array.values()
    }

    fn field() -> FieldRef {
        Arc::new(Field::new("_rowaddr", DataType::UInt64, false))
    }
}

#[pymethods]
impl RowAddresses {
    /// The addresses as a Python list of ints.
    fn to_pylist(&self) -> Vec<u64> {
        self.values().to_vec()
    }

    /// The fragment id of each address (the high 32 bits).
    fn fragment_ids(&self) -> Vec<u64> {
        self.values().iter().map(|a| a >> 32).collect()
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<u64> {
        let len = self.array.len() as isize;
        let at = if index < 0 { index + len } else { index };
        if !(0..len).contains(&at) {
            return Err(PyIndexError::new_err("row address index out of range"));
        }
        Ok(self.values()[at as usize])
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(other) = other.cast::<RowAddresses>() {
            return other.get().values() == self.values();
        }
        match other.extract::<Vec<u64>>() {
            Ok(list) => list == self.values(),
            Err(_) => false,
        }
    }

    fn __repr__(&self) -> String {
        let shown: Vec<String> = self.values().iter().take(8).map(u64::to_string).collect();
        let more = if self.array.len() > 8 { ", ..." } else { "" };
        format!("lakeseek.RowAddresses([{}{more}])", shown.join(", "))
    }

    /// The Arrow C schema (`uint64`, PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(to_schema_pycapsule(py, Self::field().as_ref())?)
    }

    /// The Arrow C schema and array (PyCapsule interface).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let array: &dyn Array = self.array.as_ref();
        Ok(to_array_pycapsules(
            py,
            Self::field(),
            array,
            requested_schema,
        )?)
    }
}

/// An Arrow schema (`__arrow_c_schema__`): `pyarrow.schema(s)` reads it.
#[pyclass(module = "lakeseek", frozen)]
pub(crate) struct Schema(pub(crate) SchemaRef);

#[pymethods]
impl Schema {
    /// Field names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.0.fields().iter().map(|f| f.name().clone()).collect()
    }

    /// `[(name, arrow type as text)]`, in order.
    fn types(&self) -> Vec<(String, String)> {
        let fields = self.0.fields().iter();
        fields
            .map(|f| (f.name().clone(), f.data_type().to_string()))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.0.fields().len()
    }

    fn __repr__(&self) -> String {
        format!("lakeseek.Schema({})", describe_fields(&self.0))
    }

    /// The Arrow C schema (PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(to_schema_pycapsule(py, self.0.as_ref())?)
    }
}

fn describe_fields(schema: &SchemaRef) -> String {
    let fields = schema.fields().iter();
    let parts: Vec<String> = fields
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    parts.join(", ")
}
