#!/usr/bin/env python3
"""Warm load in one process, lakeseek vs pylance 14.0.2, on the benchmark S3 server
(benches/rig/; issue 24): warm point lookups (`key = v`, BTREE, btree_1000000) and warm
100-row takes (`id` of take_1000000_v2.2) at 1, 8, 64, 512 and 4096 concurrent operations.

    benches/rig/rig.sh start 20 80
    /work/venvs/pylance-14.0.2/bin/python benches/peer/load_compare.py \\
        --lakeseek /work/target/release/lakeseek [--levels 1,8,64,512,4096] \\
        [--kinds lookup,take] [--readers lakeseek,pylance] [--min-ops 200] [--ops-factor 2] \\
        [--timeout 300] [--out res.json]

Per level N: ops = max(--min-ops, --ops-factor * N), each reader in its own process under
`/usr/bin/time -v` (peak RSS = its "Maximum resident set size").
  lakeseek: `lakeseek bench take|query --warm --warmup 1 --concurrency N --keep-going`: one
            open dataset, one session (its admission control: 256 requests in flight per
            store by default), N operations in flight on one tokio runtime.
  pylance:  this script with `--worker`: one lance.dataset(), one warm-up operation, then a
            ThreadPoolExecutor of N threads running the ops (each thread blocks in
            ds.take / ds.scanner(...).to_table()).
Same rows (lakeseek's splitmix64 row picker) and the same keys (`bench query`'s picks) for
both. Latency per operation from submit to answer (queueing behind the N in flight
included); throughput = ops / wall time of the measured phase; errors = failed operations
(must be 0). CPU seconds per 1,000 warm operations: pylance from getrusage around the
measured phase; lakeseek from /usr/bin/time's user+sys minus that of the same command with
one operation (its setup: open, value sampling, warm-up), over the ops.
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import (bench_query_filters, btree_keys, pct, random_rows,  # noqa: E402
                         storage_options)

TAKE = ("take_1000000_v2.2", "id")
LOOKUP = "btree_1000000"


def ops_for(a, n):
    return max(a.min_ops, a.ops_factor * n)


def time_v(cmd, timeout):
    """Run `cmd` under /usr/bin/time -v: (returncode, stdout, stderr, rss_kib, cpu_s, wall_s)."""
    t = time.perf_counter()
    # Own process group: a timeout kills the reader too, not only /usr/bin/time.
    proc = subprocess.Popen(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, "", f"timed out after {timeout} s", 0, 0.0, time.perf_counter() - t
    res = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    rss, cpu = 0, 0.0
    for line in res.stderr.splitlines():
        line = line.strip()
        if line.startswith("Maximum resident set size"):
            rss = int(line.rsplit(":", 1)[1])
        elif line.startswith(("User time", "System time")):
            cpu += float(line.rsplit(":", 1)[1])
    return res.returncode, res.stdout, res.stderr, rss, cpu, time.perf_counter() - t


def server_requests(url, reset=False):
    cmd = "reset" if reset else "stats?log=0"
    with urllib.request.urlopen(f"{url}/__proxy__/{cmd}", timeout=60) as r:
        body = json.loads(r.read())
    return None if reset else f"{body['total']['requests']} (max {body['max_inflight']} in flight)"


def lakeseek_cmd(a, kind, n, ops):
    common = ["--warm", "--warmup", "1", "--concurrency", str(n), "--json", "--keep-going"]
    if kind == "take":
        cmd = [a.lakeseek, "bench", "take", f"s3://anchors/{TAKE[0]}.lance", "--columns",
               TAKE[1], "--rows-per-take", "100", "--takes", str(ops), "--seed", "6000"]
    else:
        cmd = [a.lakeseek, "bench", "query", f"s3://anchors/{LOOKUP}.lance",
               "--filter-template", "key = '{}'", "--values-from", "key",
               "--queries", str(ops), "--seed", "8000"]
    for k, v in storage_options(a.server).items():
        cmd += ["--storage-option", f"{k}={v}"]
    return cmd + common


def run_lakeseek(a, kind, n, ops, baseline_cpu):
    server_requests(a.server, reset=True)
    rc, out, err, rss, cpu, wall = time_v(lakeseek_cmd(a, kind, n, ops), a.timeout)
    row = {"reader": "lakeseek", "kind": kind, "concurrency": n, "ops": ops, "rss_mib": rss / 1024,
           "server_requests": server_requests(a.server)}
    if rc != 0:
        row["failed"] = (err.strip().splitlines() or ["?"])[-1]
        return row
    rep = json.loads(out)
    done = rep["operations_completed"]
    row.update({"completed": done, "errors": rep.get("errors", 0),
                "error_messages": rep.get("error_messages", []),
                "ops_per_s": rep["throughput_ops_per_sec"],
                "p50_ms": rep["latency_ms"]["p50"], "p99_ms": rep["latency_ms"]["p99"],
                "requests_per_op": rep["per_operation"]["requests"]["mean"],
                "cpu_s": cpu, "cpu_s_per_1000": (cpu - baseline_cpu) / max(1, ops - 1) * 1000})
    return row


def lakeseek_baseline_cpu(a, kind):
    """CPU seconds of the same command with one operation (setup + warm-up + 1 op)."""
    rc, _, err, _, cpu, _ = time_v(lakeseek_cmd(a, kind, 1, 1), a.timeout)
    if rc != 0:
        raise SystemExit(err)
    return cpu


def run_pylance(a, kind, n, ops):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--server", a.server,
           "--concurrency", str(n), "--ops", str(ops)]
    server_requests(a.server, reset=True)
    rc, out, err, rss, cpu, wall = time_v(cmd, a.timeout)
    row = {"reader": "pylance 14.0.2", "kind": kind, "concurrency": n, "ops": ops,
           "rss_mib": rss / 1024, "server_requests": server_requests(a.server)}
    if rc != 0:
        row["failed"] = (err.strip().splitlines() or ["?"])[-1] if rc is not None else err
        return row
    row.update(json.loads(out.strip().splitlines()[-1]))
    return row


def worker(a):
    """One process: open, warm up, then `--ops` operations on `--concurrency` threads."""
    import lance
    so = storage_options(a.server)
    if a.worker == "take":
        ds = lance.dataset(f"s3://anchors/{TAKE[0]}.lance", storage_options=so)
        run = lambda rows: ds.take(indices=rows, columns=[TAKE[1]]).num_rows  # noqa: E731
        work = [random_rows(5999, 100)] + [random_rows(6000 + i, 100) for i in range(a.ops)]
    else:
        ds = lance.dataset(f"s3://anchors/{LOOKUP}.lance", storage_options=so)
        run = lambda f: ds.scanner(filter=f, columns=[],  # noqa: E731
                                   with_row_address=True).to_table().num_rows
        work = bench_query_filters(btree_keys(), 8000, a.ops)
    run(work[0])  # warm-up

    def one(op):
        t = time.perf_counter()
        try:
            if run(op) < 1:
                return None, "no rows"
            return (time.perf_counter() - t) * 1e3, None
        except Exception as e:  # noqa: BLE001
            return None, f"{type(e).__name__}: {e}"[:300]

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=a.concurrency) as pool:
        results = list(pool.map(one, work[1:]))
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    ms = [m for m, _ in results if m is not None]
    errs = [e for _, e in results if e is not None]
    print(json.dumps({"completed": len(ms), "errors": len(errs),
                      "error_messages": sorted(set(errs))[:10],
                      "ops_per_s": len(ms) / wall, "p50_ms": pct(ms, 50) if ms else None,
                      "p99_ms": pct(ms, 99) if ms else None, "cpu_s": cpu,
                      "cpu_s_per_1000": cpu / a.ops * 1000}))


def print_rows(rows):
    print("| op | concurrency | reader | ops | ops/s | p50 ms | p99 ms | errors | peak RSS MiB "
          "| CPU s / 1,000 ops | server requests |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "failed" in r:
            print(f"| {r['kind']} | {r['concurrency']} | {r['reader']} | {r['ops']} | "
                  f"failed: {r['failed']} | | | | {r['rss_mib']:.0f} | | {r['server_requests']} |")
            continue
        print(f"| {r['kind']} | {r['concurrency']} | {r['reader']} | {r['ops']} | "
              f"{r['ops_per_s']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['errors']} | "
              f"{r['rss_mib']:.0f} | {r['cpu_s_per_1000']:.2f} | {r['server_requests']} |")
        for m in r.get("error_messages", []):
            print(f"|  | | error: {m} | | | | | | | | |")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default=os.environ.get("LAKESEEK_BIN", "target/release/lakeseek"))
    ap.add_argument("--server", default="http://127.0.0.1:4582")
    ap.add_argument("--levels", default="1,8,64,512,4096")
    ap.add_argument("--kinds", default="lookup,take")
    ap.add_argument("--readers", default="lakeseek,pylance")
    ap.add_argument("--min-ops", type=int, default=200)
    ap.add_argument("--ops-factor", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per reader and level")
    ap.add_argument("--out")
    ap.add_argument("--worker", choices=["take", "lookup"], help=argparse.SUPPRESS)
    ap.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--ops", type=int, default=200, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    with urllib.request.urlopen(f"{a.server}/__proxy__/config", timeout=60) as r:
        print(f"server: {a.server}, shape {r.read().decode()}")
    readers = a.readers.split(",")
    rows = []
    for kind in a.kinds.split(","):
        base = lakeseek_baseline_cpu(a, kind) if "lakeseek" in readers else 0.0
        for n in [int(x) for x in a.levels.split(",")]:
            ops = ops_for(a, n)
            level = []
            if "lakeseek" in readers:
                level.append(run_lakeseek(a, kind, n, ops, base))
            if "pylance" in readers:
                level.append(run_pylance(a, kind, n, ops))
            print_rows(level)
            rows += level
    print()
    print_rows(rows)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
