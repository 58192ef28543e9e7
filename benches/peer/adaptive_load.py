#!/usr/bin/env python3
"""Issue 36's load scenario on the benchmark S3 server (benches/rig/;
docs/bench-adaptive-load.md): N queries at once through one session (16 MiB budget), over
120 datasets (benches/peer/gen_load_datasets.py), two thirds of the queries opening their
own dataset, every request with a 5 s timeout; lakeseek before/after and pylance 14.0.2.

    flock /tmp/rig-bench.lock /work/venvs/pylance-14.0.2/bin/python benches/peer/adaptive_load.py \\
        --lakeseek /work/main/target/release/lakeseek --server http://127.0.0.1:4590 \\
        --levels 300,3000 --runs before:ln,after:ln,after:lh,pylance:ln [--timeout 900] [--out r.json]

A run is READER:PREFIX, PREFIX the datasets' folder in bucket `anchors` (`ln`: written by
pylance straight to the rig, no version hint; `lh`: written on local disk, with the hint).
  before   `lakeseek --max-requests 256 bench load ...` (the old fixed bound)
  after    `lakeseek bench load ...` (the adaptive limit, the default)
  pylance  this script with `--worker`: N threads; thread q opens `lance.dataset(t{q%120})`
           (two of every three) or uses dataset 0 opened before, then
           `scanner(filter=..., columns=[], with_row_address=True).to_table()`.
Each run in its own process under /usr/bin/time -v (peak RSS), with a time box; the server's
counters (requests by kind, most in flight at once) reset before each run.
"""
import argparse
import json
import os
import resource
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_compare import time_v  # noqa: E402
from rig_compare import pct, storage_options  # noqa: E402

FILTER = "key = 4242"
TIMEOUT = "5s"


def server(url, cmd):
    with urllib.request.urlopen(f"{url}/__proxy__/{cmd}", timeout=60) as r:
        return json.loads(r.read())


def lakeseek_cmd(a, pinned, prefix, n):
    cmd = [a.lakeseek] + (["--max-requests", "256"] if pinned else [])
    cmd += ["bench", "load", f"s3://anchors/{prefix}/t{{}}.lance", "--datasets",
            str(a.datasets), "--filter", FILTER, "--expect-rows", "1", "--queries", str(n),
            "--budget-bytes", str(16 << 20), "--json", "--storage-option",
            f"timeout={TIMEOUT}"]
    for k, v in storage_options(a.server).items():
        cmd += ["--storage-option", f"{k}={v}"]
    return cmd


def run(a, reader, prefix, n):
    if reader == "pylance":
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", prefix, "--server",
               a.server, "--queries", str(n), "--datasets", str(a.datasets)]
    else:
        cmd = lakeseek_cmd(a, reader == "before", prefix, n)
    server(a.server, "reset")
    rc, out, err, rss, cpu, wall = time_v(cmd, a.timeout)
    stats = server(a.server, "stats?log=0")
    kinds = {k: v["requests"] for k, v in stats.get("by_kind", {}).items()}
    row = {"reader": reader, "prefix": prefix, "queries": n, "rss_mib": rss / 1024,
           "cpu_s": cpu, "wall_s": wall, "server": kinds,
           "server_max_inflight": stats["max_inflight"]}
    if rc != 0:
        row["failed"] = (err.strip().splitlines() or ["?"])[-1] if rc is not None else err
        return row
    rep = json.loads(out.strip().splitlines()[-1])
    row.update({k: rep[k] for k in ("completed", "errors", "error_messages")})
    row["qps"] = rep.get("throughput_qps", rep.get("qps"))
    row["p50_ms"], row["p99_ms"] = rep["latency_ms"]["p50"], rep["latency_ms"]["p99"]
    if "limit" in rep:
        row["limit"] = rep["limit"]
        row["retries"] = rep["io"]["retries"]
    return row


def worker(a):
    """pylance: `--queries` threads at once, two thirds opening their own dataset."""
    import lance
    so = dict(storage_options(a.server), timeout=TIMEOUT)
    uri = lambda d: f"s3://anchors/{a.worker}/t{d}.lance"  # noqa: E731
    shared = lance.dataset(uri(0), storage_options=so)

    def one(q):
        t = time.perf_counter()
        try:
            ds = shared if q % 3 == 0 else lance.dataset(uri(q % a.datasets), storage_options=so)
            n = ds.scanner(filter=FILTER, columns=[], with_row_address=True).to_table().num_rows
            if n != 1:
                return None, f"wrong answer: {n} rows"
            return (time.perf_counter() - t) * 1e3, None
        except Exception as e:  # noqa: BLE001
            return None, f"{type(e).__name__}: {e}"[:300]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=a.queries) as pool:
        results = list(pool.map(one, range(a.queries)))
    wall = time.perf_counter() - t0
    ms = sorted(m for m, _ in results if m is not None)
    errs = [e for _, e in results if e is not None]
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"completed": len(ms), "errors": len(errs),
                      "error_messages": sorted(set(errs))[:10], "qps": len(ms) / wall,
                      "latency_ms": {"p50": pct(ms, 50) if ms else None,
                                     "p99": pct(ms, 99) if ms else None},
                      "cpu_s": r.ru_utime + r.ru_stime}))


def fmt(r):
    srv = r["server"]
    reqs = f"{sum(srv.values())} ({srv.get('LIST', 0)} LIST)"
    name = {"before": "lakeseek main, --max-requests 256", "after": "lakeseek main (adaptive)",
            "pylance": "pylance 14.0.2"}[r["reader"]]
    hint = "hint" if r["prefix"] == "lh" else "no hint"
    head = f"| {r['queries']} | {name} | {hint} |"
    if "failed" in r:
        return (f"{head} failed: {r['failed']} | | | | | {r['server_max_inflight']} | "
                f"{r['rss_mib']:.0f} | {reqs} | |")
    lim = r.get("limit")
    lim = f"{lim['min']}–{lim['max']} (last {lim['last']}, {lim['decreases']}↓ {lim['increases']}↑)" \
        if lim else ""
    return (f"{head} {r['errors']} | {r['qps']:.1f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | "
            f"{r['wall_s']:.0f} | {r['server_max_inflight']} | {r['rss_mib']:.0f} | {reqs} | "
            f"{lim} |")


HEADER = ("| queries | reader | datasets | errors | q/s | p50 ms | p99 ms | wall s | peak in flight "
          "| peak RSS MiB | server requests | limit min–max |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default="/work/main/target/release/lakeseek")
    ap.add_argument("--server", default="http://127.0.0.1:4590")
    ap.add_argument("--levels", default="300,3000,10000")
    ap.add_argument("--runs", default="before:ln,after:ln,after:lh,pylance:ln")
    ap.add_argument("--datasets", type=int, default=120)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run")
    ap.add_argument("--out")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--queries", type=int, default=300, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    print(f"server {a.server}: {server(a.server, 'config')}; load: {os.getloadavg()}")
    rows = []
    for n in [int(x) for x in a.levels.split(",")]:
        for spec in a.runs.split(","):
            reader, prefix = spec.split(":")
            r = run(a, reader, prefix, n)
            rows.append(r)
            print(HEADER if len(rows) == 1 else "", fmt(r), sep="\n" if len(rows) == 1 else "")
            for m in r.get("error_messages", [])[:3]:
                print(f"|  | error: {m[:200]} |")
            sys.stdout.flush()
            if a.out:
                with open(a.out, "w") as f:
                    json.dump(rows, f, indent=1)
    print(f"\nload after: {os.getloadavg()}\n{HEADER}")
    for r in rows:
        print(fmt(r))


if __name__ == "__main__":
    sys.exit(main())
