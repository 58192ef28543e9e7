#!/usr/bin/env python3
"""The datasets of issue 36's load benchmark (docs/bench-adaptive-load.md), written by
pylance 14.0.2: `--count` (120) small datasets `t0.lance ... t119.lance`, each `--rows`
(10,000) rows of `key` (int64, a seeded permutation of 0..rows) and `value` (string), one
fragment, a BTREE on `key`. Every dataset holds each key once, so `key = K` answers 1 row.

    # straight to the rig (pylance on S3 writes no `_versions/latest_version_hint.json`):
    python benches/peer/gen_load_datasets.py --s3 http://127.0.0.1:4590 --prefix s3://anchors/ln
    # on local disk (pylance writes the hint there), then PUT to the rig by s3_rig --load:
    python benches/peer/gen_load_datasets.py --local /work/rig-h36/data/lh

Prints, per variant, whether the first dataset carries the version hint.
"""
import argparse
import os
import sys

import lance
import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import storage_options  # noqa: E402


def table(i, rows):
    rng = np.random.default_rng(36_000 + i)
    keys = rng.permutation(rows).astype(np.int64)
    values = pa.array([f"ds{i}-row{k:07d}" for k in keys])
    return pa.table({"key": pa.array(keys), "value": values})


def write(uri, i, rows, so):
    kw = {"storage_options": so} if so else {}
    ds = lance.write_dataset(table(i, rows), uri, mode="overwrite", **kw)
    ds.create_scalar_index("key", "BTREE")
    return ds


def has_hint(uri, so):
    import pyarrow.fs as pafs
    if so is None:
        return os.path.exists(os.path.join(uri, "_versions", "latest_version_hint.json"))
    fs = pafs.S3FileSystem(endpoint_override=so["aws_endpoint"], scheme="http",
                           access_key="dummy", secret_key="dummy", region="us-east-1")
    path = uri.removeprefix("s3://") + "/_versions"
    return any(f.base_name == "latest_version_hint.json"
               for f in fs.get_file_info(pafs.FileSelector(path)))


def main():
    ap = argparse.ArgumentParser()
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--s3", help="rig endpoint; datasets go to --prefix (s3://...)")
    where.add_argument("--local", help="local directory of the datasets")
    ap.add_argument("--prefix", default="s3://anchors/ln")
    ap.add_argument("--count", type=int, default=120)
    ap.add_argument("--rows", type=int, default=10_000)
    a = ap.parse_args()
    so = storage_options(a.s3) if a.s3 else None
    base = a.prefix if a.s3 else a.local
    for i in range(a.count):
        write(f"{base}/t{i}.lance", i, a.rows, so)
    first = f"{base}/t0.lance"
    ds = lance.dataset(first, **({"storage_options": so} if so else {}))
    print(f"{a.count} datasets under {base}: version {ds.version}, "
          f"{ds.count_rows()} rows each, hint present: {has_hint(first, so)}")


if __name__ == "__main__":
    sys.exit(main())
