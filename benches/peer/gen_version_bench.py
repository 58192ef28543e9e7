#!/usr/bin/env python3
"""The rig's 1,000,000-row bench datasets written in each data storage version by pylance
14.0.2 (issues 25 and 26: Lance 2.0 and legacy v1 numbers beside the 2.2 reference).

    ANCHORS_TMP=/work/anchors /work/venvs/pylance-14.0.2/bin/python \\
        benches/peer/gen_version_bench.py [--versions 2.2,2.0,legacy] [--only btree,take] \\
        [--rows 1000000] [--force]

Writes $ANCHORS_TMP/data/NAME.lance and NAME.info.json (the data files, as rig_compare.py's
`--file-take` reads them), the same tables, seeds and index as
../shared/peer-bench/gen_data.py builds `btree_1000000` and `take_1000000_v2.2`:

  btree_<rows>[_<tag>]   id int64 (0..rows), key utf8 (16 hex chars of a seeded random
                         int64: unique, random order); BTREE index on key. The 2.2 one keeps
                         its old name `btree_<rows>` (pylance 14.0.2's default is 2.2).
  take_<rows>_<tag>      id int64, score float32, detections list<struct<label utf8,
                         confidence f32, area f32>> (99% empty lists).

tag: v2.2, v2.0 or legacy (data_storage_version "2.2", "2.0", "legacy"). Index files are
whatever pylance 14.0.2 writes for that dataset version. A dataset whose params.json matches
is left alone unless --force.
"""
import argparse
import json
import os
import shutil
import time

import numpy as np
import pyarrow as pa

LABELS = np.array(["car", "person", "truck", "bicycle", "dog", "bus",
                   "traffic light", "motorcycle"])
SEED_KEYS = 20240601
SEED_DET = 12345
VERSIONS = {"v2.2": "2.2", "v2.0": "2.0", "legacy": "legacy"}


def btree_table(rows):
    """gen_data.btree_table: id, key (hex of seeded random int64s)."""
    x = np.random.default_rng(SEED_KEYS).integers(0, 2**63 - 1, rows, dtype=np.int64)
    keys = [f"{v:016x}" for v in x.tolist()]
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "key": pa.array(keys, pa.string())})


def take_table(rows):
    """gen_data.take_table without the sparse field metadata."""
    rng = np.random.default_rng(SEED_DET)
    n_nonempty = rows // 100
    lens = np.zeros(rows, dtype=np.int32)
    pos = rng.choice(rows, n_nonempty, replace=False)
    lens[pos] = rng.integers(1, 6, n_nonempty)
    offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    m = int(offs[-1])
    st = pa.StructArray.from_arrays(
        [pa.array(LABELS[rng.integers(0, len(LABELS), m)], pa.string()),
         pa.array(rng.random(m).astype(np.float32)),
         pa.array((rng.random(m) * 1000).astype(np.float32))],
        names=["label", "confidence", "area"])
    det = pa.ListArray.from_arrays(pa.array(offs), st)
    score = pa.array(rng.random(rows).astype(np.float32))
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "score": score, "detections": det})


def describe(local, params):
    """What rig_compare.py and a reader of the results need: version, files, sizes."""
    import lance
    ds = lance.dataset(local)
    files = [{"file": f.path, "fields": list(f.fields)}
             for frag in ds.get_fragments() for f in frag.data_files()]
    idx = []
    for root, _, names in os.walk(os.path.join(local, "_indices")):
        idx += [{"file": os.path.relpath(os.path.join(root, n), local),
                 "bytes": os.path.getsize(os.path.join(root, n))} for n in sorted(names)]
    total = sum(os.path.getsize(os.path.join(r, n))
                for r, _, ns in os.walk(local) for n in ns)
    return {"name": os.path.basename(local), "version": ds.version,
            "rows": ds.count_rows(), "data_storage_version": ds.data_storage_version,
            "fragments": len(ds.get_fragments()), "schema": str(ds.schema),
            "files": files, "indices": idx, "total_bytes": total, "params": params,
            "writer": f"pylance {lance.__version__}"}


def build(data, name, params, make, force):
    local = os.path.join(data, name + ".lance")
    pfile = os.path.join(data, name + ".params.json")
    if (not force and os.path.isdir(local) and os.path.exists(pfile)
            and json.load(open(pfile)) == params):
        print(f"[gen] {name}: up to date")
        return
    shutil.rmtree(local, ignore_errors=True)
    t0 = time.time()
    make(local)
    info = describe(local, params)
    with open(os.path.join(data, name + ".info.json"), "w") as f:
        json.dump(info, f, indent=1)
    with open(pfile, "w") as f:
        json.dump(params, f)
    print(f"[gen] {name}: {info['data_storage_version']}, built in {time.time() - t0:.1f}s "
          f"({info['total_bytes']} bytes)")


def main():
    import lance
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--versions", default="v2.2,v2.0,legacy")
    ap.add_argument("--only", default="btree,take")
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    data = os.path.join(os.environ.get("ANCHORS_TMP", "/work/anchors"), "data")
    os.makedirs(data, exist_ok=True)
    for tag in a.versions.split(","):
        ver = VERSIONS[tag]
        if "btree" in a.only:
            name = f"btree_{a.rows}" + ("" if tag == "v2.2" else f"_{tag}")

            def make_btree(local, ver=ver):
                ds = lance.write_dataset(btree_table(a.rows), local, data_storage_version=ver)
                ds.create_scalar_index("key", index_type="BTREE")
            build(data, name, {"rows": a.rows, "seed": SEED_KEYS, "version": ver, "v": 1},
                  make_btree, a.force)
        if "take" in a.only:
            def make_take(local, ver=ver):
                lance.write_dataset(take_table(a.rows), local, data_storage_version=ver)
            build(data, f"take_{a.rows}_{tag}", {"rows": a.rows, "seed": SEED_DET,
                                                 "version": ver, "sparse_meta": False,
                                                 "v": 1}, make_take, a.force)


if __name__ == "__main__":
    main()
