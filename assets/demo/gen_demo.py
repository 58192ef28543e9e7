#!/usr/bin/env python3
"""Build the bundled sample data of ``lakeseek demo`` (and of the crate's doctests/examples).

Usage (from the repository root, pinned venv, see tests/fixtures/requirements.txt):

    /work/.venv-pylance/bin/python assets/demo/gen_demo.py                 # everything
    /work/.venv-pylance/bin/python assets/demo/gen_demo.py --answers-only  # keep the data
    /work/.venv-pylance/bin/python assets/demo/gen_demo.py --vectors-only  # rewrite vectors.lance

Lance names data and index files with random UUIDs, so a full run rewrites every binary
file; ``--answers-only`` recomputes ``answers.json`` and ``files.rs`` (and checks the ecp
copy) from the committed ``frames.lance`` without rewriting it.

Writes, next to this script:

* ``frames.lance/``: a Lance dataset (data storage version 2.3) written by pylance 14.0.2,
  ``ROWS`` rows in ``FRAGMENTS`` fragments: ``detections``
  (``list<struct<label: string, confidence: float, area: float, x: float, y: float,
  track_id: int64>>``, field metadata
  ``lance-encoding:structural-encoding=sparse`` so its pages are 2.3 sparse pages; most
  lists are empty, as in real detection data), ``camera`` (int32) and ``key`` (string,
  unique, BTree index ``key_idx`` built by ``create_scalar_index``), plus a list element
  index ``det_idx`` on
  ``detections`` keyed by (label, confidence), written by the fixture generator of
  ``tests/fixtures/list_element/`` (lance 14 has no list element index).
* ``vectors.lance/``: a Lance dataset of ``VECTOR_ROWS`` float32 vectors of dimension
  ``VECTOR_DIM`` (``id`` int64, ``vec``) in one fragment with an IVF_PQ index ``vec_idx``
  (4 partitions, 4 sub-vectors, 8 bits, l2), for ``Dataset::nearest``'s doctest.
* ``ecp_index/``: a copy of the ecpfs fixture ``tests/fixtures/ecp/l2_l2_f32`` (2000
  float32 vectors of dimension 16, L2, 2 levels; written by ``tests/fixtures/ecp/gen_ecp.py``
  with zarr-python as ecp-core does), checked byte-identical to the fixture.
* ``answers.json``: the demo's queries and their answers as pylance returns them
  (``to_table(filter=..., with_row_address=True)``, ``_take_rows``) plus, for
  ``any_element``, the answer computed over pylance's read of the column by the spec's
  independent Python implementation; for the vector search the expected ids of the
  ecp fixture (its numpy reference search).
* ``files.rs``: the list of every bundled file as ``include_bytes!`` entries, for the
  binary (``src/cli/demo.rs``), which loads them into an in-memory object store.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import sys

import numpy as np
import pyarrow as pa

import lance

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIST_ELEMENT = os.path.join(REPO, "tests", "fixtures", "list_element")
ECP_FIXTURE = os.path.join(REPO, "tests", "fixtures", "ecp", "l2_l2_f32")
ECP_EXPECTED = os.path.join(REPO, "tests", "fixtures", "ecp", "expected", "l2_l2_f32.json")
sys.path.insert(0, LIST_ELEMENT)

import gen_list_element as le  # noqa: E402
import spec_impl as spec  # noqa: E402

ROWS = 40_000
FRAGMENTS = 4
NON_EMPTY = 0.08
SEED = 20261201
SPARSE = {"lance-encoding:structural-encoding": "sparse"}
LABELS = ["car", "person", "bicycle", "truck", "bus", "dog", "traffic light", "stop sign"]
LABEL_WEIGHTS = [0.35, 0.25, 0.08, 0.1, 0.05, 0.05, 0.08, 0.04]
DETECTION_TYPE = pa.list_(pa.struct([
    pa.field("label", pa.string()),
    pa.field("confidence", pa.float32()),
    pa.field("area", pa.float32()),
    pa.field("x", pa.float32()),
    pa.field("y", pa.float32()),
    pa.field("track_id", pa.int64()),
]))
LE_INDEX = {"name": "det_idx", "column": "detections", "keys": ["label", "confidence"],
            "batch_size": 1024}

LOOKUP_KEY_ROW = 29_417  # the row whose key the BTree step looks up
ANY_ELEMENT_PRED = ("and", [("cmp", "label", "=", "car"), ("cmp", "confidence", ">", 0.9)])
TAKE_ROWS = 20  # rows per take step (cold, then warm: two seeded draws)
VECTOR_ROWS = 2_000
VECTOR_DIM = 16
VECTOR_QUERY_ROW = 1_234  # the nearest query is this row's vector, slightly moved
VECTOR_K = 5
ECP_CASE = "q0"
ECP_K = 10


def key_of(row: int, camera: int) -> str:
    return "cam%02d-%06d" % (camera, row)


def build_table() -> pa.Table:
    rng = np.random.default_rng(SEED)
    camera = rng.integers(0, 12, ROWS).astype(np.int32)
    keys = pa.array([key_of(i, int(c)) for i, c in enumerate(camera)], pa.string())
    counts = np.where(rng.random(ROWS) < NON_EMPTY, rng.integers(1, 5, ROWS), 0).astype(np.int32)
    offsets = np.zeros(ROWS + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    items = int(offsets[-1])
    labels = np.array(LABELS, dtype=object)[rng.choice(len(LABELS), items, p=LABEL_WEIGHTS)]
    confidence = np.round(rng.random(items), 3).astype(np.float32)
    area = np.round(rng.uniform(10, 5000, items), 1).astype(np.float32)
    x = rng.uniform(0, 1920, items).astype(np.float32)
    y = rng.uniform(0, 1080, items).astype(np.float32)
    track_id = rng.integers(0, 1 << 40, items).astype(np.int64)
    values = pa.StructArray.from_arrays(
        [pa.array(labels, pa.string()), pa.array(confidence), pa.array(area), pa.array(x),
         pa.array(y), pa.array(track_id)],
        fields=list(DETECTION_TYPE.value_type))
    detections = pa.ListArray.from_arrays(pa.array(offsets), values, type=DETECTION_TYPE)
    # Columns are written in schema order: `detections` first puts its pages at the start
    # of each data file, out of reach of the 64 KiB suffix read an open makes (in a real
    # data file most pages are), so a take shows the requests its chunks really cost.
    schema = pa.schema([
        pa.field("detections", DETECTION_TYPE, metadata=SPARSE),
        pa.field("camera", pa.int32(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
    ])
    return pa.Table.from_arrays([detections, pa.array(camera), keys], schema=schema)


def build_dataset(path: str) -> lance.LanceDataset:
    shutil.rmtree(path, ignore_errors=True)
    table = build_table()
    lance.write_dataset(table, path, max_rows_per_file=ROWS // FRAGMENTS,
                        data_storage_version="2.3")
    ds = lance.dataset(path)
    ds.create_scalar_index("key", "BTREE", name="key_idx")
    le.create_index(path, LE_INDEX, None, "frames", dump_dir=None)
    ds = lance.dataset(path)
    assert len(ds.get_fragments()) == FRAGMENTS, ds.get_fragments()
    assert ds.to_table().equals(table.replace_schema_metadata(ds.schema.metadata)) or \
        ds.to_table()["detections"].to_pylist() == table["detections"].to_pylist()
    return ds


def vector_table() -> pa.Table:
    """``VECTOR_ROWS`` float32 vectors of dimension ``VECTOR_DIM`` around 8 centres."""
    rng = np.random.default_rng(SEED + 33)
    centres = rng.normal(0, 4, (8, VECTOR_DIM)).astype(np.float32)
    vec = centres[rng.integers(0, 8, VECTOR_ROWS)] + rng.normal(0, 1, (VECTOR_ROWS, VECTOR_DIM))
    vec = np.round(vec.astype(np.float32), 3)
    return pa.table({
        "id": pa.array(np.arange(VECTOR_ROWS, dtype=np.int64)),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vec.reshape(-1)), VECTOR_DIM),
    })


def build_vectors(path: str) -> lance.LanceDataset:
    """``vectors.lance``: one fragment, IVF_PQ ``vec_idx`` (4 partitions, 4 sub-vectors of
    8 bits, l2)."""
    shutil.rmtree(path, ignore_errors=True)
    lance.write_dataset(vector_table(), path)
    ds = lance.dataset(path)
    ds.create_index("vec", index_type="IVF_PQ", name="vec_idx", metric="l2",
                    num_partitions=4, num_sub_vectors=4, num_bits=8)
    return lance.dataset(path)


def nearest_answer(ds: lance.LanceDataset) -> dict:
    row = ds.take([VECTOR_QUERY_ROW], columns=["vec"])["vec"][0].as_py()
    query = [round(v + 0.01, 3) for v in row]
    t = ds.to_table(nearest={"column": "vec", "q": np.array(query, np.float32), "k": VECTOR_K,
                             "nprobes": 4}, columns=["id"], with_row_address=True)
    return {"path": "vectors.lance", "column": "vec", "query": query, "k": VECTOR_K,
            "nprobes": 4, "row_addresses": t["_rowaddr"].to_pylist(),
            "distances": t["_distance"].to_pylist(), "ids": t["id"].to_pylist()}


def any_element_answer(ds: lance.LanceDataset) -> dict:
    fields = le.lance_fields(ds)
    types = le.element_types(fields, "detections")
    data = ds.to_table(columns=["detections"], with_row_address=True)
    rows = le.rows_of(data["detections"], types)
    addrs = data["_rowaddr"].to_pylist()
    predicate = spec.sql(ANY_ELEMENT_PRED, types)
    results = [spec.any_element(ANY_ELEMENT_PRED, row, types) for row in rows]
    # A plain Python check over pylance's read, independent of spec_impl.
    plain = [a for a, row in zip(addrs, data["detections"].to_pylist())
             if row and any(d["label"] == "car" and d["confidence"] is not None
                            and d["confidence"] > np.float32(0.9) for d in row)]
    true = sorted(a for a, r in zip(addrs, results) if r is True)
    assert true == sorted(plain), "spec_impl and the plain check disagree"
    return {"filter": "any_element(detections, '%s')" % predicate.replace("'", "''"),
            "row_addresses": true}


def take_answer(ds: lance.LanceDataset, seed: int) -> dict:
    """``TAKE_ROWS`` random rows (in random order) of the first draw from ``seed`` on that
    holds at least 2 non-empty lists (so the take reads some value chunks)."""
    per_fragment = ROWS // FRAGMENTS
    while True:
        rng = np.random.default_rng(seed)
        rows = rng.choice(ROWS, TAKE_ROWS, replace=False).tolist()
        addrs = [((r // per_fragment) << 32) | (r % per_fragment) for r in rows]
        got = ds._take_rows(addrs, columns=["detections"]).to_pylist()
        if sum(1 for g in got if g["detections"]) >= 2:
            break
        seed += 1000
    return {"seed": seed, "row_addresses": addrs, "columns": ["detections"],
            "detections": [g["detections"] for g in got],
            "non_empty": sum(1 for g in got if g["detections"])}


def whole_sizes(path: str) -> dict:
    """Bytes of every data file and index file (the demo computes its own page sums)."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, path)] = os.path.getsize(p)
    return out


def answers(ds: lance.LanceDataset) -> dict:
    key = ds.take([LOOKUP_KEY_ROW], columns=["key"])["key"][0].as_py()
    key_filter = "key = '%s'" % key
    lookup = ds.to_table(filter=key_filter, columns=["key", "camera"], with_row_address=True)
    assert lookup.num_rows == 1
    plan = ds.scanner(filter=key_filter, columns=["key"]).explain_plan()
    assert "ScalarIndexQuery" in plan or "key_idx" in plan, plan
    with open(ECP_EXPECTED) as f:
        ecp = json.load(f)
    case = next(c for c in ecp["cases"] if c["name"] == ECP_CASE)
    return {
        "generator": "assets/demo/gen_demo.py",
        "pylance": lance.__version__,
        "dataset": {"path": "frames.lance", "rows": ds.count_rows(),
                    "fragments": [f.fragment_id for f in ds.get_fragments()],
                    "data_storage_version": ds.data_storage_version,
                    "version": ds.version,
                    "indices": sorted(i["name"] for i in ds.list_indices())},
        "btree": {"filter": key_filter, "row_addresses": lookup["_rowaddr"].to_pylist(),
                  "key": key, "camera": lookup["camera"][0].as_py()},
        "any_element": any_element_answer(ds),
        "take_cold": take_answer(ds, SEED + 1),
        "take_warm": take_answer(ds, SEED + 2),
        "ecp": {"path": "ecp_index", "source": "tests/fixtures/ecp/l2_l2_f32",
                "case": ECP_CASE, "query": case["query"], "k": ECP_K,
                "expected": {k: v for k, v in case.items() if k not in ("query",)}},
        "files": whole_sizes(os.path.join(HERE, "frames.lance")),
        "nearest": nearest_answer(lance.dataset(os.path.join(HERE, "vectors.lance"))),
    }


def copy_ecp(dst: str) -> None:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(ECP_FIXTURE, dst)
    cmp = filecmp.dircmp(ECP_FIXTURE, dst)
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only


def write_files_rs(paths: list) -> None:
    lines = [
        "// Generated by assets/demo/gen_demo.py: every bundled demo file, for src/cli/demo.rs.",
        "// Do not edit; rerun the generator.",
        "&[",
    ]
    for rel in paths:
        lines.append('    ("%s", include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), '
                     '"/assets/demo/%s"))),' % (rel, rel))
    lines.append("]")
    with open(os.path.join(HERE, "files.rs"), "w") as f:
        f.write("\n".join(lines) + "\n")


def bundled() -> list:
    out = []
    for top in ("frames.lance", "ecp_index", "vectors.lance"):
        for root, _, files in os.walk(os.path.join(HERE, top)):
            for name in files:
                out.append(os.path.relpath(os.path.join(root, name), HERE))
    return sorted(out)


def main() -> None:
    path = os.path.join(HERE, "frames.lance")
    vectors = os.path.join(HERE, "vectors.lance")
    if "--answers-only" in sys.argv[1:] or "--vectors-only" in sys.argv[1:]:
        ds = lance.dataset(path)
    else:
        ds = build_dataset(path)
    if "--answers-only" not in sys.argv[1:] or not os.path.isdir(vectors):
        build_vectors(vectors)
    copy_ecp(os.path.join(HERE, "ecp_index"))
    result = answers(ds)
    with open(os.path.join(HERE, "answers.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    paths = bundled()
    write_files_rs(paths)
    total = sum(os.path.getsize(os.path.join(HERE, p)) for p in paths)
    print("bundled %d files, %d bytes" % (len(paths), total))
    for rel, size in sorted(result["files"].items()):
        print("  frames.lance/%s: %d" % (rel, size))
    print("btree:", result["btree"]["filter"], result["btree"]["row_addresses"])
    print("any_element:", len(result["any_element"]["row_addresses"]), "rows")
    print("take: non-empty", result["take_cold"]["non_empty"], result["take_warm"]["non_empty"])


if __name__ == "__main__":
    main()
