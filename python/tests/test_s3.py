"""Reads over S3 (the repository's s3s-based server, started by the `s3_server` fixture)."""

import asyncio

import pyarrow as pa

import lakeseek
from conftest import DATASETS, FIXTURES, assert_same_column, from_deltas, load_json, read_ipc


def test_filters_over_s3_match_pylance(s3_server):
    answers = load_json(DATASETS / "answers.json")["datasets"]["bitmap_del"]
    stats = lakeseek.IoStats()
    ds = lakeseek.Dataset(s3_server.url("bitmap_del.lance"),
                          storage_options=s3_server.storage_options, stats=stats)
    for q in answers["queries"]:
        if q.get("version") is None and q["filter"] not in answers.get("unindexed_filters", []):
            assert ds.filter(q["filter"]).to_pylist() == from_deltas(q["addr_deltas"]), q["filter"]
    assert stats.requests > 0 and stats.bytes > 0 and stats.round_trips > 0


def test_nested_take_over_s3_matches_pylance(s3_server):
    doc = load_json(DATASETS / "take_answers.json")
    columns = doc["variants"]["v2_3_sparse"]["columns"]
    ds = lakeseek.Dataset(s3_server.url("take_v2_3_sparse.lance"),
                          storage_options=s3_server.storage_options)
    want = read_ipc(DATASETS / "take" / "v2_3_sparse.takes.arrow")[0]
    got = pa.table(ds.take(doc["row_sets"][0], columns))
    for name in want.schema.names:
        assert_same_column(got.column(name), want.column(name), f"s3 take {name}")


def test_lance_file_and_ecp_index_over_s3(s3_server):
    catalog = load_json(FIXTURES / "files" / "catalog.json")
    entry = next(f for f in catalog["files"] if f["path"] == "nested/v2_3_sparse/detections.lance")
    f = lakeseek.LanceFile(s3_server.url("nested_v2_3_sparse/detections.lance"),
                           storage_options=s3_server.storage_options)
    names = [c["name"] for c in entry["columns"]]
    got = pa.table(f.take(names, entry["take_row_lists"][0]))
    want = read_ipc(FIXTURES / "files" / entry["oracle_take"])[0]
    for name in names:
        assert_same_column(got.column(name), want.column(name), f"s3 file {name}")

    expected = load_json(FIXTURES / "ecp" / "expected" / "l2_l2_f32.json")
    index = lakeseek.EcpIndex(s3_server.url("ecp_l2_l2_f32"),
                              storage_options=s3_server.storage_options)
    case = expected["cases"][0]
    page = index.search(case["query"], case["pages"][0]["k"], search_exp=case["search_exp"],
                        max_increments=case["max_increments"])
    assert page.ids == case["pages"][0]["ids"]


def test_concurrent_async_queries_over_s3(s3_server):
    answers = load_json(DATASETS / "answers.json")["datasets"]["bitmap_del"]["queries"]
    queries = [q for q in answers if q.get("version") is None][:4] * 25  # 100 queries

    async def main():
        ds = await lakeseek.Dataset.open_async(s3_server.url("bitmap_del.lance"),
                                               storage_options=s3_server.storage_options)
        return await asyncio.gather(*(ds.filter_async(q["filter"]) for q in queries))

    for q, got in zip(queries, asyncio.run(main())):
        assert got.to_pylist() == from_deltas(q["addr_deltas"])


def test_missing_object_over_s3_is_not_found(s3_server):
    import pytest

    with pytest.raises(lakeseek.NotFound) as err:
        lakeseek.Dataset(s3_server.url("nothing_here.lance"),
                         storage_options=s3_server.storage_options)
    assert "nothing_here.lance" in str(err.value)


def test_nearest_search_blobs_and_row_ids_over_s3(s3_server):
    """The new query kinds over the S3 protocol answer as pylance did (the local tests
    check every recorded answer; this one one of each)."""
    from test_blobs_rowids import BLOB_ANSWERS, ROWID_ANSWERS, sha
    from test_nearest_search import CATALOG, FTS_CASES, compare_nearest, compare_search

    options = s3_server.storage_options
    ds_doc = CATALOG["datasets"]["ivf_pq_l2"]
    q = next(q for q in ds_doc["queries"] if q.get("nprobes") and not q.get("filter")
             and "error" not in q)
    vectors = lakeseek.Dataset(s3_server.url("ivf_pq_l2"), storage_options=options)
    table = pa.table(vectors.nearest("vec", ds_doc["query_vectors"][q["q"]], k=q["k"],
                                     nprobes=q["nprobes"], refine_factor=q.get("refine_factor")))
    assert compare_nearest(table.column("_rowaddr").to_pylist(),
                           table.column("_distance").to_pylist(), q) is None

    docs = lakeseek.Dataset(s3_server.url("fts_default"), storage_options=options)
    for _, column, text, operator, k, label, rows, scores in (
            c for c in FTS_CASES if c[0] == "default"):
        found = pa.table(docs.search(text, column=column, k=k, operator=operator))
        got = list(zip(found.column("_rowaddr").to_pylist(), found.column("_score").to_pylist()))
        assert compare_search(got, rows, scores, k) is None, label

    stats = lakeseek.IoStats()
    media = lakeseek.Dataset(s3_server.url("blobs_v22"), storage_options=options, stats=stats)
    rows = [r for r in BLOB_ANSWERS["v22"]["rows"] if r["blob"]]
    files = media.take_blobs("img", [r["address"] for r in rows])
    for row, f in zip(rows, files):
        start, end = row["blob"]["range"]
        f.seek(start)
        assert sha(f.read(end - start)) == row["blob"]["range_sha256"]
        f.seek(0)
        assert sha(f.read()) == row["blob"]["sha256"]

    doc = ROWID_ANSWERS["srid"]
    srid = lakeseek.Dataset(s3_server.url("srid.lance"), storage_options=options,
                            version=doc["versions"]["latest"])
    take = doc["takes"]["latest"][2]
    got = pa.table(srid.take_row_ids(take["ids"], ["id", "k"]))
    assert [[i, k] for i, k in zip(got.column("id").to_pylist(),
                                   got.column("k").to_pylist())] == take["rows"]
