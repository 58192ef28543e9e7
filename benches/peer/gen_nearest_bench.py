#!/usr/bin/env python3
"""Issue 33 benchmark data (pylance 14.0.2; not committed, ~1.3 GB): 200,000 x 768 float32
vectors, clustered (1,024 Gaussian centres, so IVF partitions mean something), column `vec`,
plus `id` int64 = row number; one fragment. Two copies, one per index:

    OUT/nearest_200000_ivfpq.lance    IVF_PQ, 256 partitions, 96 sub-vectors, 8 bits, l2
    OUT/nearest_200000_hnswsq.lance   IVF_HNSW_SQ, 256 partitions, l2
    OUT/nearest_200000.queries.npy    200 query vectors (float32, 200 x 768), drawn like the data
    OUT/nearest_200000.gt.npy         their exact 100 nearest row numbers (int64, 200 x 100, l2)
    OUT/nearest_200000.gt.txt         the same as text (`lakeseek bench nearest --ground-truth`)

    /work/venvs/pylance-14.0.2/bin/python benches/peer/gen_nearest_bench.py OUT [--rows N]
"""
import argparse
import os
import shutil
import time

import lance
import numpy as np
import pyarrow as pa

DIM = 768


def vectors(rng, centres, n):
    pick = rng.integers(0, len(centres), n)
    out = np.empty((n, DIM), np.float32)
    step = 20_000
    for s in range(0, n, step):
        e = min(n, s + step)
        out[s:e] = centres[pick[s:e]] + 0.6 * rng.standard_normal((e - s, DIM), np.float32)
    return out


def exact(data, queries, k):
    norms = np.einsum("ij,ij->i", data, data)
    d = norms[None, :] - 2.0 * (queries @ data.T)
    top = np.argpartition(d, k, axis=1)[:, :k]
    order = np.take_along_axis(d, top, 1).argsort(1)
    return np.take_along_axis(top, order, 1).astype(np.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    n = a.rows
    rng = np.random.default_rng(33)
    centres = rng.standard_normal((1024, DIM), np.float32)
    data = vectors(rng, centres, n)
    queries = vectors(np.random.default_rng(3333), centres, a.queries)
    base = os.path.join(a.out, f"nearest_{n}")
    np.save(base + ".queries.npy", queries)
    t = time.time()
    gt = exact(data, queries, 100)
    np.save(base + ".gt.npy", gt)
    np.savetxt(base + ".gt.txt", gt, fmt="%d", delimiter=",")  # `bench nearest --ground-truth`
    print(f"ground truth {time.time() - t:.1f} s", flush=True)
    table = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(data.reshape(-1)), DIM),
    })
    del data
    pq, hnsw = base + "_ivfpq.lance", base + "_hnswsq.lance"
    for p in (pq, hnsw):
        shutil.rmtree(p, ignore_errors=True)
    lance.write_dataset(table, pq)
    shutil.copytree(pq, hnsw)
    t = time.time()
    lance.dataset(pq).create_index("vec", index_type="IVF_PQ", metric="l2",
                                   num_partitions=256, num_sub_vectors=96, num_bits=8)
    print(f"IVF_PQ {time.time() - t:.1f} s", flush=True)
    t = time.time()
    lance.dataset(hnsw).create_index("vec", index_type="IVF_HNSW_SQ", metric="l2",
                                     num_partitions=256)
    print(f"IVF_HNSW_SQ {time.time() - t:.1f} s", flush=True)
    for p in (pq, hnsw):
        for i in lance.dataset(p).list_indices():
            print(p, i["name"], i["type"], i["uuid"])


if __name__ == "__main__":
    main()
