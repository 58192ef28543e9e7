#!/usr/bin/env python3
"""lakeseek vs pylance 14.0.2 on the scalar index kinds, through one counting S3 proxy
(the peer-bench rig: `../shared/peer-bench/rig/rig.sh start 20 80`), requests / bytes /
round trips from the proxy log for BOTH readers.

  PYLANCE_PY=/work/.venv-pylance/bin/python
  $PYLANCE_PY benches/peer/scalar_index_compare.py --lakeseek target/debug/lakeseek \
      --uri s3://anchors/scalar_bench.lance [--proxy http://127.0.0.1:4582] [--runs 3]

Cold: a fresh process per query for both (pylance: open, then the query, counted apart;
lakeseek: `bench query --cold`, whose per-operation record includes its open). Warm:
pylance one dataset object, the query once unmeasured then measured; lakeseek
`bench query --warm --warmup 1`.
"""
import argparse
import json
import subprocess
import sys
import urllib.request

QUERIES = [
    ("bitmap high-card point", "hc = 'k012345'"),
    ("bitmap low-card point", "lc = 'c07'"),
    ("label list any", "array_has_any(tags, ['t3', 't17'])"),
    ("zonemap time range",
     "t >= TIMESTAMP '2024-01-05 00:00:00' AND t < TIMESTAMP '2024-01-05 00:10:00'"),
    ("3-column AND",
     "hc = 'k012345' AND lc = 'c07' AND t >= TIMESTAMP '2024-01-02 00:00:00'"),
]

PY_CHILD = r"""
import json, sys, time, urllib.request
import lance
proxy, uri, filt, so, warm = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5] == "1"
def g(p):
    with urllib.request.urlopen(proxy + p, timeout=60) as r: return json.loads(r.read())
g("/__proxy__/reset")
ds = lance.dataset(uri, storage_options=so)
open_log = g("/__proxy__/stats")["log"]
if warm:
    ds.scanner(filter=filt, columns=[], with_row_address=True).to_table()
g("/__proxy__/reset"); t = time.perf_counter()
n = ds.scanner(filter=filt, columns=[], with_row_address=True).to_table().num_rows
ms = (time.perf_counter() - t) * 1e3
print(json.dumps({"rows": n, "ms": ms, "open_log": open_log, "log": g("/__proxy__/stats")["log"]}))
"""


def get(proxy, path):
    with urllib.request.urlopen(proxy + path, timeout=60) as r:
        return json.loads(r.read())


def round_trips(log):
    ev = sorted((e["start_ms"], e["t_ms"]) for e in log if "start_ms" in e)
    depth = []
    for i, (s, _) in enumerate(ev):
        d = 1
        for j in range(i):
            if ev[j][1] <= s:
                d = max(d, depth[j] + 1)
        depth.append(d)
    return max(depth) if depth else 0


def summ(log):
    return {"requests": len(log), "bytes": sum(e["resp_bytes"] for e in log),
            "round_trips": round_trips(log)}


def storage(proxy):
    return {"aws_endpoint": proxy, "allow_http": "true", "aws_access_key_id": "dummy",
            "aws_secret_access_key": "dummy", "aws_region": "us-east-1",
            "aws_virtual_hosted_style_request": "false"}


def lakeseek(a, filt, mode):
    """Cold: `lakeseek query --stats`, one process, counted by the proxy (open included;
    the dataset open is one LIST + one manifest GET). Warm: `bench query --warm` on a
    template (`warm_template`), a warm session looking up other keys of the column."""
    so = []
    for k, v in storage(a.proxy).items():
        so += ["--storage-option", f"{k}={v}"]
    if mode == "cold":
        get(a.proxy, "/__proxy__/reset")
        p = subprocess.run([a.lakeseek, "query", a.uri, "--filter", filt] + so,
                           capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise SystemExit(p.stderr[-3000:])
        log = get(a.proxy, "/__proxy__/stats")["log"]
        rows = len(json.loads(p.stdout)["row_addresses"])
        idx = [e for e in log if "/_versions" not in e["path"] and e["kind"] != "LIST"]
        return {"rows": rows, **summ(log), "after_open": summ(idx)}
    template, column = WARM.get(filt, (None, None))
    if template is None:
        return None
    argv = [a.lakeseek, "bench", "query", a.uri, "--filter-template", template, "--values-from",
            column, "--queries", "5", "--warmup", "2", "--concurrency", "1", "--json", "--warm"] + so
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    ops = json.loads(p.stdout)["operations"]
    med = sorted(ops, key=lambda o: o["latency_ms"])[len(ops) // 2]
    return {k: med[k] for k in ("requests", "bytes", "round_trips", "rows")}


WARM = {
    "hc = 'k012345'": ("hc = '{}'", "hc"),
    "lc = 'c07'": ("lc = '{}'", "lc"),
}


def pylance(a, filt, warm):
    so = json.dumps(storage(a.proxy))
    runs = []
    for _ in range(a.runs):
        p = subprocess.run([sys.executable, "-c", PY_CHILD, a.proxy, a.uri, filt, so,
                            "1" if warm else "0"], capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            raise SystemExit(p.stderr[-3000:])
        c = json.loads(p.stdout)
        runs.append({"rows": c["rows"], "ms": c["ms"], **summ(c["log"]),
                     "open": summ(c["open_log"])})
    return sorted(runs, key=lambda r: r["ms"])[len(runs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default="target/release/lakeseek")
    ap.add_argument("--uri", default="s3://anchors/scalar_bench.lance")
    ap.add_argument("--proxy", default="http://127.0.0.1:4582")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    results = []
    for name, filt in QUERIES:
        row = {"query": name, "filter": filt}
        for mode in ("cold", "warm"):
            row[f"lakeseek_{mode}"] = lakeseek(a, filt, mode)
            row[f"pylance_{mode}"] = pylance(a, filt, mode == "warm")
        results.append(row)
        print(json.dumps(row), flush=True)
    return results


if __name__ == "__main__":
    main()
