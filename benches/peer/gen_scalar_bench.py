#!/usr/bin/env python3
"""Benchmark dataset for the scalar index kinds (pylance 14.0.2; not committed, ~47 MB):
1M rows; hc string with 100k distinct values (BITMAP), hci the same as int64 (BITMAP),
lc 20 distinct strings (BITMAP), t timestamp growing with the row (ZONEMAP, 8192-row
zones), tags list<string> of 0-3 of 50 labels (LABEL_LIST).

    /work/.venv-pylance/bin/python benches/peer/gen_scalar_bench.py OUT.lance
"""
import sys
import lance, pyarrow as pa, numpy as np, shutil, datetime as dt
n=1_000_000; rng=np.random.default_rng(7)
p=sys.argv[1]; shutil.rmtree(p, ignore_errors=True)
hc=rng.integers(0,100_000,n)
t=pa.table({"id":pa.array(np.arange(n),pa.int64()),
 "hc":pa.array([f"k{x:06d}" for x in hc]),
 "hci":pa.array(hc.astype(np.int64)),
 "lc":pa.array([f"c{x:02d}" for x in rng.integers(0,20,n)]),
 "t":pa.array(np.datetime64('2024-01-01T00:00:00','us')+np.arange(n).astype('timedelta64[s]')+rng.integers(0,30,n).astype('timedelta64[s]')),
 "tags":pa.array([[f"t{x}" for x in rng.integers(0,50,int(k))] for k in rng.integers(0,4,n)],pa.list_(pa.string())),
})
ds=lance.write_dataset(t,p)
for c,k in [("hc","BITMAP"),("hci","BITMAP"),("lc","BITMAP"),("t","ZONEMAP"),("tags","LABEL_LIST")]:
    ds.create_scalar_index(c,k)
ds=lance.dataset(p)
for i in ds.list_indices(): print(i['name'], i['uuid'])
