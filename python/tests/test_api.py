"""The API on the bundled sample data: filters, takes, queries, plans, prewarm, schema,
sessions and I/O counters."""

import pyarrow as pa
import pytest

import lakeseek

KEY = "cam06-029417"
KEY_ADDRESS = (2 << 32) | 9417


@pytest.fixture(scope="module")
def ds():
    return lakeseek.sample.dataset()


def test_filter_returns_row_addresses_as_arrow_and_list(ds):
    rows = ds.filter(f"key = '{KEY}'")
    assert isinstance(rows, lakeseek.RowAddresses)
    assert rows.to_pylist() == [KEY_ADDRESS]
    assert list(rows) == [KEY_ADDRESS] and len(rows) == 1 and rows[0] == rows[-1] == KEY_ADDRESS
    assert rows == [KEY_ADDRESS]
    assert rows.fragment_ids() == [2]
    array = pa.array(rows)
    assert array.type == pa.uint64() and array.to_pylist() == [KEY_ADDRESS]


def test_take_accepts_row_addresses_lists_and_arrow_arrays(ds):
    rows = ds.filter("key IN ('cam05-000000', 'cam06-029417')")
    for given in (rows, rows.to_pylist(), pa.array(rows.to_pylist(), pa.int64())):
        table = pa.table(ds.take(given, ["key", "camera"]))
        assert table.column_names == ["_rowaddr", "key", "camera"]
        assert table.column("key").to_pylist() == ["cam05-000000", KEY]


def test_take_keeps_order_and_repeats(ds):
    rows = [130, 3056, 5072, (1 << 32) | 17, 130]
    table = pa.table(ds.take(rows, ["detections"]))
    assert table.column("_rowaddr").to_pylist() == rows
    assert table.column("detections").type == ds_schema_type(ds, "detections")


def ds_schema_type(ds, name):
    return pa.schema(ds.schema).field(name).type


def test_query_with_and_without_columns(ds):
    only_addresses = ds.query(f"key = '{KEY}'")
    assert only_addresses.column_names == ["_rowaddr"] and only_addresses.num_rows == 1
    table = ds.query(f"key = '{KEY}'", columns=["key", "camera"])
    assert (table.num_rows, table.num_columns, len(table)) == (1, 3, 1)
    assert pa.table(table).column("camera").to_pylist() == [6]


def test_any_element_filter_from_the_list_element_index(ds):
    cars = ds.filter("any_element(detections, 'label = ''car'' AND confidence > 0.9')")
    assert len(cars) > 0
    table = pa.table(ds.take(cars, ["detections"]))
    for detections in table.column("detections").to_pylist():
        assert any(d["label"] == "car" and d["confidence"] > 0.9 for d in detections)


def test_unindexed_filter_needs_allow_scan(ds):
    with pytest.raises(lakeseek.InvalidArgument):
        ds.filter("camera = 3")
    scanned = pa.table(ds.query("camera = 3", columns=["camera"], allow_scan=True))
    assert scanned.num_rows > 0 and set(scanned.column("camera").to_pylist()) == {3}


def test_explain_is_a_plan_dict(ds):
    plan = ds.explain("key IN ('cam00-000001', 'cam06-029417')")
    assert isinstance(plan, dict)
    assert "key_idx" in str(plan)


def test_dataset_metadata(ds):
    assert ds.version >= 1
    assert ds.url == lakeseek.sample.DATASET_URL
    assert {"key_idx", "det_idx"} <= set(ds.index_names())
    assert ds.column_names == pa.schema(ds.schema).names
    assert {"key", "camera", "detections"} <= set(ds.schema.names)
    assert sum(f["physical_rows"] for f in ds.fragments()) == 40_000
    assert "Dataset" in repr(ds)


def test_stats_count_reads_and_a_warm_repeat_is_cheaper():
    stats = lakeseek.IoStats()
    ds = lakeseek.sample.dataset(stats=stats)
    assert stats.requests >= 1  # the open
    cold_before = stats.snapshot()
    ds.take([130, 3056], ["detections"])
    cold = {k: stats.snapshot()[k] - cold_before[k] for k in cold_before}
    warm_stats = lakeseek.IoStats()
    ds.with_stats(warm_stats).take([130, 3056], ["detections"])
    assert cold["requests"] > 0
    assert warm_stats.bytes < cold["bytes"]
    assert set(stats.snapshot()) >= {"requests", "bytes", "round_trips", "retries", "disk_hits"}


def test_prewarm_loads_the_indices():
    ds = lakeseek.sample.dataset()
    report = ds.prewarm(indices=["key_idx"], all_index_pages=True)
    assert report["indices"] == ["key_idx"] and report["index_pages"] > 0
    warm = lakeseek.IoStats()
    ds.with_stats(warm).filter(f"key = '{KEY}'")
    assert warm.requests == 0


def test_session_is_shared_and_configurable(tmp_path):
    session = lakeseek.Session(budget_bytes=64 << 20, cache_dir=tmp_path)
    assert session.budget_bytes == 64 << 20 and session.cache_dir == tmp_path
    a = lakeseek.sample.dataset(session=session)
    assert a.session.budget_bytes == 64 << 20
    assert lakeseek.Session().budget_bytes == lakeseek.DEFAULT_SESSION_BUDGET


def test_lance_file_reads_ranges_and_rows():
    f = lakeseek.sample.lance_file()
    head = pa.table(f.read_range(["key", "camera"], 0, 5))
    assert head.num_rows == 5 and head.column_names == ["key", "camera"]
    some = pa.table(f.take(["key"], [7, 2, 7]))
    keys = some.column("key").to_pylist()
    assert keys[0] == keys[2] and keys[1] == head.column("key")[2].as_py()
    assert f.num_rows >= 5 and "key" in f.schema.names


def test_ecp_search_first_and_next_pages():
    index = lakeseek.sample.ecp_index()
    dim = index.info["dim"]
    search = index.query([0.5] * dim)
    first, second = search.next(10), search.next(10)
    assert len(first) == len(second) == 10
    assert not set(first.ids) & set(second.ids)
    assert first.scores == sorted(first.scores) and first.scores[-1] <= second.scores[0]
    assert index.search([0.5] * dim, 10).ids == first.ids
    table = pa.table(first)
    assert table.column_names == ["id", "score"] and table.column("id").to_pylist() == first.ids
    excluded = index.search([0.5] * dim, 10, exclude=first.ids[:3])
    assert not set(excluded.ids) & set(first.ids[:3])
    assert index.stats()["requests"] > 0
