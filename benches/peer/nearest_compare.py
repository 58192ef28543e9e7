#!/usr/bin/env python3
"""Issue 33 benchmark: lakeseek vs pylance 14.0.2 nearest-neighbour queries on the project's
benchmark S3 server (benches/rig/), same query vectors, one run. Data from
gen_nearest_bench.py (200,000 x 768 f32; IVF_PQ 96 sub-vectors and IVF_HNSW_SQ copies).
Requests and bytes: pylance per query from the server log; lakeseek from its own
`bench nearest --json` report, cross-checked against the server's totals (`server = report`).
Recall@10 of both against the exact answers (`.gt.npy`, numpy brute force).

    RIG_DATASETS="nearest_200000_ivfpq nearest_200000_hnswsq" ANCHORS_TMP=/work/anchors-34n \\
        benches/rig/rig.sh start 20 80 fixed
    RUST_LOG=error /work/venvs/pylance-14.0.2/bin/python benches/peer/nearest_compare.py \\
        --lakeseek target/release/lakeseek --data /work/anchors-34n/data \\
        [--index ivfpq --index hnswsq:pylance] [--cold 10] [--warm 40] [--nprobes 20] [--out r.json]

cold: open + query with fresh caches (pylance: a new lance.dataset() per query in one process;
      lakeseek: `bench nearest --cold`, a fresh session per query), query vectors 1..cold;
warm: one open dataset, query 0 as the warm-up, then queries 1..warm;
prewarm (`--modes`): as warm, after both readers prewarmed the index (pylance
      `prewarm_index`, lakeseek `bench nearest --prewarm`: the partitions that fit its cache).
`--budget-bytes B` runs lakeseek's sessions with budget B (its vector cache is 6/64ths of it);
pylance keeps its defaults (index cache up to 6 GiB).
`--index NAME:pylance` measures only pylance on that copy (e.g. an index kind lakeseek does not
search yet).
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import Server, lakeseek_bench, pct, storage_options, waves  # noqa: E402


def recall(found, truth, k):
    return len(set(found[:k]) & set(truth[:k].tolist())) / k


def pylance_ops(server, uri, so, queries, truth, a, warm, prewarm=False):
    import lance
    out = []
    ds = lance.dataset(uri, storage_options=so) if warm else None
    params = lambda q: {"column": "vec", "q": q, "k": a.k, "nprobes": a.nprobes}  # noqa: E731
    if prewarm:
        for index in ds.list_indices():
            ds.prewarm_index(index["name"])
    if warm:
        ds.to_table(nearest=params(queries[0]), columns=[], with_row_address=True)
    for i in range(1, len(queries)):
        server.reset()
        t = time.perf_counter()
        d = ds if warm else lance.dataset(uri, storage_options=so)
        tab = d.to_table(nearest=params(queries[i]), columns=[], with_row_address=True)
        ms = (time.perf_counter() - t) * 1e3
        log = server.log()
        rows = tab["_rowaddr"].to_pylist()
        out.append((ms, len(log), sum(e["resp_bytes"] for e in log), waves(log),
                    recall(rows, truth[i], a.k)))
    return out


def lakeseek_ops(server, a, uri, so, mode, n, qfile, gtfile):
    argv = ["nearest", uri, "--column", "vec", "--queries-file", qfile, "--ground-truth",
            gtfile, "--queries", str(n), "-k", str(a.k), "--nprobes", str(a.nprobes),
            "--cold" if mode == "cold" else "--warm", "--warmup", "1"]
    if mode == "prewarm":
        argv.append("--prewarm")
    if a.budget_bytes:
        argv += ["--budget-bytes", str(a.budget_bytes)]
    ops, seen, own, rep = lakeseek_bench(server, a.lakeseek, argv, so)
    recalls = [o.get("recall", 0.0) for o in rep["operations"]]
    return [op + (r,) for op, r in zip(ops, recalls)], (seen, own)


def row(mode, reader, ops, base, check):
    ms, req, byt, rts, rec = (list(x) for x in zip(*ops))
    p50 = pct(ms, 50)
    ratio = f"{p50 / pct([o[0] for o in base], 50):.2f}" if base else ""
    base_req = pct([o[1] for o in base], 50) if base else 0
    req_ratio = f"{pct(req, 50) / base_req:.2f}" if base_req else ""
    chk = f"{check[0]} = {check[1]}" if check else "(server log)"
    return (f"| {mode} | {reader} | {p50:.1f} | {pct(ms, 99):.1f} | {pct(req, 50)} ({max(req)}) | "
            f"{pct(rts, 50)} ({max(rts)}) | {pct(byt, 50) / 1024:.0f} | {np.mean(rec):.3f} | "
            f"{ratio} | {req_ratio} | {chk} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default=os.environ.get("LAKESEEK_BIN", "target/release/lakeseek"))
    ap.add_argument("--server", default="http://127.0.0.1:4582")
    ap.add_argument("--data", default="/work/anchors-34n/data")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--index", action="append", default=[])
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--warm", type=int, default=40)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--nprobes", type=int, default=20)
    ap.add_argument("--modes", default="cold,warm",
                    help="comma-separated: cold, warm, prewarm (warm after both readers "
                         "prewarmed the index: pylance prewarm_index, lakeseek --prewarm)")
    ap.add_argument("--budget-bytes", type=int,
                    help="lakeseek's session budget (default the library's 256 MiB; "
                         "pylance's index cache holds up to 6 GiB by default)")
    ap.add_argument("--out")
    a = ap.parse_args()
    server = Server(a.server)
    so = storage_options(a.server)
    base = os.path.join(a.data, f"nearest_{a.rows}")
    queries = np.load(base + ".queries.npy")
    truth = np.load(base + ".gt.npy")
    shape = server.get("config")
    print(f"server: {a.server}, shape {json.dumps(shape)}; k {a.k}, nprobes {a.nprobes}")
    out = {"shape": shape}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.index or ["ivfpq", "hnswsq:pylance"]:
            name, _, only = spec.partition(":")
            uri = f"s3://anchors/nearest_{a.rows}_{name}.lance"
            print(f"\n### {name} ({uri})\n")
            print("| mode | reader | p50 ms | p99 ms | requests p50 (max) | round trips p50 (max) "
                  "| KiB p50 | recall@10 | p50 / pylance | requests / pylance | server = report |")
            print("|---|---|---|---|---|---|---|---|---|---|---|")
            modes = a.modes.split(",")
            for mode, n in (("cold", a.cold), ("warm", a.warm), ("prewarm", a.warm)):
                if mode not in modes:
                    continue
                qs = queries[: n + 1]
                py = pylance_ops(server, uri, so, qs, truth, a, mode != "cold",
                                 mode == "prewarm")
                print(row(mode, "pylance 14.0.2", py, None, None), flush=True)
                out[f"{name}|{mode}|pylance"] = py
                if only == "pylance":
                    continue
                # lakeseek: warm-up = row 0, operation i = row 1 + i (the same vectors).
                qfile = os.path.join(tmp, "q.npy")
                np.save(qfile, qs.astype(np.float32))
                gtfile = os.path.join(tmp, "gt.txt")
                np.savetxt(gtfile, truth[: n + 1], fmt="%d", delimiter=",")
                lk, check = lakeseek_ops(server, a, uri, so, mode, n, qfile, gtfile)
                print(row(mode, "lakeseek", lk, py, check), flush=True)
                out[f"{name}|{mode}|lakeseek"] = lk
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    sys.exit(main())
