#!/usr/bin/env python3
"""The datasets of issue 35's blob benchmark (docs/bench-blobs.md), written by pylance
14.0.2 straight to the rig (or to a local directory): `--rows` (10,000) "images" of random
bytes, each 50,000-500,000 bytes (seeded sizes: `sizes()`), as

* `blobs_v2.2.lance`: 2.2 files, `img` a `large_binary` field marked `lance-encoding:blob`,
  which pylance stores as blob v2 with its default thresholds (values up to 64 KiB inline,
  larger ones packed into shared `.blob` files; none reaches the 4 MiB dedicated threshold);
* `blobs_v2.1.lance`: the same rows in 2.1 files, blob v1 (a position/size descriptor, the
  bytes out of line in the data file).

    python benches/peer/gen_blob_bench.py --s3 http://127.0.0.1:4590 --prefix s3://anchors
    python benches/peer/gen_blob_bench.py --local /work/rig-h35

The data is not committed (2.75 GB per dataset); this script makes it again, byte for byte.
"""
import argparse
import os
import sys

import lance
import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import storage_options  # noqa: E402

ROWS = 10_000
MIN_SIZE, MAX_SIZE = 50_000, 500_000
BATCH = 200
VERSIONS = ("2.2", "2.1")


def sizes(rows=ROWS):
    """Blob size of every row (bytes), seeded."""
    return np.random.default_rng(35).integers(MIN_SIZE, MAX_SIZE + 1, rows).tolist()


def schema():
    meta = {"lance-encoding:blob": "true"}
    return pa.schema([pa.field("id", pa.int64()),
                      pa.field("img", pa.large_binary(), metadata=meta)])


def batches(rows):
    rng = np.random.default_rng(3500)
    all_sizes = sizes(rows)
    for start in range(0, rows, BATCH):
        part = all_sizes[start:start + BATCH]
        imgs = [rng.bytes(s) for s in part]
        yield pa.record_batch([pa.array(range(start, start + len(part)), pa.int64()),
                               pa.array(imgs, pa.large_binary())], schema=schema())


def write(uri, version, rows, so):
    reader = pa.RecordBatchReader.from_batches(schema(), batches(rows))
    kw = {"storage_options": so} if so else {}
    return lance.write_dataset(reader, uri, mode="overwrite", data_storage_version=version,
                               **kw)


def main():
    ap = argparse.ArgumentParser()
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--s3", help="rig endpoint; datasets go under --prefix")
    where.add_argument("--local", help="local directory of the datasets")
    ap.add_argument("--prefix", default="s3://anchors")
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--versions", default=",".join(VERSIONS))
    a = ap.parse_args()
    so = storage_options(a.s3) if a.s3 else None
    base = a.prefix if a.s3 else a.local
    for version in a.versions.split(","):
        ds = write(f"{base}/blobs_v{version}.lance", version, a.rows, so)
        print(f"{ds.uri}: {ds.count_rows()} rows, {len(ds.get_fragments())} fragments, "
              f"{sum(sizes(a.rows)) / 1e9:.2f} GB of blobs, storage {ds.data_storage_version}")


if __name__ == "__main__":
    sys.exit(main())
