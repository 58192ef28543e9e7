"""Results go into pyarrow, polars and duckdb through the Arrow PyCapsule interface."""

import duckdb
import polars as pl
import pyarrow as pa

import lakeseek

FILTER = "key >= 'cam03' AND key < 'cam03-010000'"


N = len(lakeseek.sample.dataset().filter(FILTER))


def _result():
    return lakeseek.sample.dataset().query(FILTER, columns=["key", "camera", "detections"])


def test_pyarrow_reads_tables_arrays_and_schemas():
    table = pa.table(_result())
    assert table.num_rows == N > 100
    assert table.schema.field("camera").type == pa.int32()
    reader = pa.RecordBatchReader.from_stream(_result())
    assert reader.read_all().equals(table)
    assert pa.schema(_result().schema).names == ["_rowaddr", "key", "camera", "detections"]
    rows = lakeseek.sample.dataset().filter(FILTER)
    assert pa.array(rows).to_pylist() == table.column("_rowaddr").to_pylist()


def test_polars_reads_the_table():
    result = _result()
    frame = pl.DataFrame(result)
    assert frame.height == N
    assert frame["key"].to_list() == pa.table(_result()).column("key").to_pylist()
    assert isinstance(frame.schema["detections"], pl.List)
    rows = pl.Series(lakeseek.sample.dataset().filter(FILTER))  # __arrow_c_array__
    assert rows.dtype == pl.UInt64 and rows.to_list() == frame["_rowaddr"].to_list()


def test_duckdb_queries_the_table():
    result = _result()  # noqa: F841  (duckdb finds it by name)
    ((count, cameras),) = duckdb.sql("SELECT count(*), count(DISTINCT camera) FROM result").fetchall()
    assert (count, cameras) == (N, 1)
    ((nested,),) = duckdb.sql("SELECT sum(len(detections)) FROM result").fetchall()
    expected = sum(len(d) for d in pa.table(_result()).column("detections").to_pylist())
    assert nested == expected


def test_requested_schema_casts_on_export():
    rows = lakeseek.sample.dataset().filter(FILTER)
    as_int64 = pa.array(rows, type=pa.int64())
    assert as_int64.type == pa.int64() and len(as_int64) == N
