#!/usr/bin/env python3
"""The many-fragment dataset of the SQL benchmark (pylance 14.0.2; not committed, ~80 MB):
2M rows in 32 fragments of 62,500 rows: id int64 (row number), grp int32 (0..99, random),
value float64 (random), key utf8 (16 hex chars, unique; BTREE index).

    /work/.venv-pylance/bin/python benches/peer/gen_sql_bench.py /work/anchors/data/sql_agg_2000000.lance
"""
import shutil
import sys

import lance
import numpy as np
import pyarrow as pa

ROWS, PER_FRAGMENT = 2_000_000, 62_500


def table():
    rng = np.random.default_rng(20261202)
    keys = rng.choice(2**62, ROWS, replace=False)
    return pa.table({
        "id": pa.array(np.arange(ROWS, dtype=np.int64)),
        "grp": pa.array(rng.integers(0, 100, ROWS, dtype=np.int32)),
        "value": pa.array(rng.random(ROWS)),
        "key": pa.array([f"{k:016x}" for k in keys.tolist()], pa.string()),
    })


def main():
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    ds = lance.write_dataset(table(), out, max_rows_per_file=PER_FRAGMENT,
                             max_rows_per_group=PER_FRAGMENT)
    ds.create_scalar_index("key", index_type="BTREE")
    ds = lance.dataset(out)
    print(f"{out}: {ds.count_rows()} rows, {len(ds.get_fragments())} fragments, "
          f"indices {[i['name'] for i in ds.list_indices()]}")


if __name__ == "__main__":
    main()
