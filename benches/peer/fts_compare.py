#!/usr/bin/env python3
"""Issue 34 benchmark: lakeseek vs pylance 14.0.2 full-text search and an NGRAM `contains`
filter on the project's benchmark S3 server (benches/rig/), one run. Data from
gen_fts_bench.py (1M short documents; INVERTED with defaults + NGRAM on `name`, and a copy with
positions); the queries are the generator's `fts_1000000.queries.json`. k = 10 for searches
(pylance: `to_table(full_text_query=MatchQuery(..), limit=10)`; lakeseek: `bench search -k 10`),
every match for `contains` (pylance: `to_table(filter=...)`; lakeseek: `bench query --filters`).
Requests and bytes: pylance per query from the server log; lakeseek from its own report,
cross-checked against the server's totals (`server = report`).

    RIG_DATASETS="fts_1000000 fts_1000000_pos" ANCHORS_TMP=/work/anchors-34n \\
        benches/rig/rig.sh start 20 80 fixed
    RUST_LOG=error /work/venvs/pylance-14.0.2/bin/python benches/peer/fts_compare.py \\
        --lakeseek target/release/lakeseek --data /work/anchors-34n/data [--cold 5] [--warm 10] \\
        [--no-phrase-lakeseek] [--only rare,common] [--out r.json]

cold: open + query with fresh caches (pylance: a new lance.dataset() per query in one process;
      lakeseek: `--cold`, a fresh session per query); warm: one open dataset, one warm-up run of
      the same query, then the same query again each time (a repeated query).
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import Server, lakeseek_bench, pct, storage_options, waves  # noqa: E402


def pylance_query(ds, kind, text):
    from lance.query import FullTextOperator, MatchQuery, PhraseQuery
    if kind == "contains":
        return ds.to_table(filter=text, columns=[], with_row_address=True).num_rows
    if kind == "phrase":
        q = PhraseQuery(text, "body")
    elif kind == "and2":
        q = MatchQuery(text, "body", operator=FullTextOperator.AND)
    else:
        q = MatchQuery(text, "body")
    return ds.to_table(full_text_query=q, columns=["id"], limit=10).num_rows


def pylance_ops(server, uri, so, kind, text, n, warm):
    import lance
    out = []
    ds = lance.dataset(uri, storage_options=so) if warm else None
    if warm:
        pylance_query(ds, kind, text)
    for _ in range(n):
        server.reset()
        t = time.perf_counter()
        d = ds if warm else lance.dataset(uri, storage_options=so)
        rows = pylance_query(d, kind, text)
        ms = (time.perf_counter() - t) * 1e3
        log = server.log()
        out.append((ms, len(log), sum(e["resp_bytes"] for e in log), waves(log), rows))
    return out


def lakeseek_ops(server, a, uri, so, kind, text, n, mode, tmp):
    if kind == "contains":
        path = os.path.join(tmp, "filters.txt")
        with open(path, "w") as f:  # the warm-up line, then the measured one
            f.write(f"{text}\n{text}\n")
        argv = ["query", uri, "--filters", path]
    else:
        argv = ["search", uri, "--column", "body", "--text", text, "-k", "10"]
        if kind == "and2":
            argv += ["--operator", "and"]
        if kind == "phrase":
            argv += ["--phrase"]
    argv += ["--queries", str(n), f"--{mode}", "--warmup", "1"]
    ops, seen, own, rep = lakeseek_bench(server, a.lakeseek, argv, so)
    rows = [o["rows"] for o in rep["operations"]]
    return [op + (r,) for op, r in zip(ops, rows)], (seen, own)


def row(name, mode, reader, ops, base, check):
    ms, req, byt, rts, rows = (list(x) for x in zip(*ops))
    p50 = pct(ms, 50)
    r = lambda i, v: f"{v / pct([o[i] for o in base], 50):.2f}" if base else ""  # noqa: E731
    chk = f"{check[0]} = {check[1]}" if check else "(server log)"
    return (f"| {name} | {mode} | {reader} | {p50:.1f} | {pct(req, 50)} ({max(req)}) | "
            f"{pct(rts, 50)} ({max(rts)}) | {pct(byt, 50) / 1024:.0f} | {rows[0]} | "
            f"{r(0, p50)} | {r(2, pct(byt, 50))} | {chk} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default=os.environ.get("LAKESEEK_BIN", "target/release/lakeseek"))
    ap.add_argument("--server", default="http://127.0.0.1:4582")
    ap.add_argument("--data", default="/work/anchors-34n/data")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--warm", type=int, default=10)
    ap.add_argument("--no-phrase-lakeseek", action="store_true",
                    help="run the phrase with pylance only")
    ap.add_argument("--only", help="comma-separated query kinds (default: all)")
    ap.add_argument("--out")
    a = ap.parse_args()
    server = Server(a.server)
    so = storage_options(a.server)
    with open(os.path.join(a.data, f"fts_{a.rows}.queries.json")) as f:
        queries = json.load(f)
    plan = [(f"fts_{a.rows}", k) for k in ("rare", "common", "or3", "and2", "contains")]
    plan += [(f"fts_{a.rows}_pos", k) for k in ("rare", "common", "phrase")]
    if a.only:
        plan = [(d, k) for d, k in plan if k in a.only.split(",")]
    shape = server.get("config")
    print(f"server: {a.server}, shape {json.dumps(shape)}")
    print("\n| query | mode | reader | p50 ms | requests p50 (max) | round trips p50 (max) | "
          "KiB p50 | rows | p50 / pylance | KiB / pylance | server = report |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    out = {"shape": shape, "queries": queries}
    with tempfile.TemporaryDirectory() as tmp:
        for dataset, kind in plan:
            uri = f"s3://anchors/{dataset}.lance"
            text = queries[kind]
            name = f"{kind} `{text}`" + (" (positions)" if dataset.endswith("_pos") else "")
            for mode, n in (("cold", a.cold), ("warm", a.warm)):
                py = pylance_ops(server, uri, so, kind, text, n, mode == "warm")
                print(row(name, mode, "pylance 14.0.2", py, None, None), flush=True)
                out[f"{dataset}|{kind}|{mode}|pylance"] = py
                if kind == "phrase" and a.no_phrase_lakeseek:
                    continue
                try:
                    lk, check = lakeseek_ops(server, a, uri, so, kind, text, n, mode, tmp)
                except SystemExit as e:
                    print(f"| {name} | {mode} | lakeseek | failed: {str(e).strip()[:200]} |")
                    continue
                print(row(name, mode, "lakeseek", lk, py, check), flush=True)
                out[f"{dataset}|{kind}|{mode}|lakeseek"] = lk
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    sys.exit(main())
