"""The dataset of the Python benchmarks (not committed, ~40 MB), written by pylance 14.0.2:

    /work/venvs/pylance-14.0.2/bin/python python/bench/gen_bench_dataset.py OUT_DIR [--rows 1000000]

`OUT_DIR/handler_<rows>.lance`: `id` int64, `key` utf8 (16 hex chars, unique, random order,
BTree index `key_idx`), `score` float32, `label` utf8 — a lookup `key = v` reads one row of
three columns (`id`, `key`, `score`). Deterministic (numpy seed 20240601, as
../shared/peer-bench/gen_data.py makes its btree keys).
"""

import argparse
import os
import shutil

import lance
import numpy as np
import pyarrow as pa

LABELS = ["car", "person", "truck", "bicycle", "dog", "bus", "traffic light", "motorcycle"]


def table(rows):
    rng = np.random.default_rng(20240601)
    keys = [f"{v:016x}" for v in rng.integers(0, 2**63 - 1, rows, dtype=np.int64).tolist()]
    labels = np.array(LABELS)[rng.integers(0, len(LABELS), rows)]
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "key": pa.array(keys, pa.string()),
        "score": pa.array(rng.random(rows, dtype=np.float32)),
        "label": pa.array(labels.tolist(), pa.string()),
    })


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    path = os.path.join(args.out_dir, f"handler_{args.rows}.lance")
    if os.path.exists(path):
        shutil.rmtree(path)
    data = table(args.rows)
    ds = lance.write_dataset(data, path, max_rows_per_file=args.rows)
    ds.create_scalar_index("key", index_type="BTREE", name="key_idx")
    ds = lance.dataset(path)
    print(path, ds.count_rows(), [i["name"] for i in ds.list_indices()])


if __name__ == "__main__":
    main()
