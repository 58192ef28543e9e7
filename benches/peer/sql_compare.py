#!/usr/bin/env python3
"""`lakeseek sql` vs pylance 14.0.2 on the project's benchmark S3 server (benches/rig/), one run.
Requests, bytes and round trips come from the server's log for both readers; lakeseek's own
`--stats` are printed beside them as a cross-check.

    RIG_DATASETS="btree_1000000 sql_agg_2000000" benches/rig/rig.sh start 20 80 fixed
    /work/.venv-pylance/bin/python benches/peer/sql_compare.py --lakeseek target/release/lakeseek \
        [--sections point,agg] [--queries 10] [--runs 3] [--out res.json]

point: `SELECT id, key FROM t WHERE key = '<k>'` on btree_1000000 (BTree on key), one new
       `lakeseek sql` process per query (cold: process start, dataset open, index lookup,
       take) vs pylance `lance.dataset(uri).to_table(filter=..., columns=...)` with a new
       dataset per query in one warm Python process. Both rows printed: wall time (lakeseek
       includes its process start) and the server's span (first request in to last byte out,
       the I/O part alone). A third row: `lakeseek sql --cache-dir` with the cache warmed by
       one earlier process (a serverless warm start).
agg:   `SELECT grp, count(*), sum(value) FROM t GROUP BY grp ORDER BY grp` over
       sql_agg_2000000 (32 fragments; benches/peer/gen_sql_bench.py): `lakeseek sql` on one
       node, then `--workers` with 1 and 2 `lakeseek worker` processes on 127.0.0.1 (started
       here for each count, killed after its runs; the first query finds them cold, the later
       ones warm: workers keep their session caches); pylance: `to_table(columns=[grp,
       value])` + pyarrow group_by, a new dataset per run.
       Answers are compared (counts exactly, sums to 1e-9 relative).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rig_compare import Server, btree_keys, pct, random_rows, storage_options, waves  # noqa: E402


def server_span(log):
    if not log:
        return 0.0
    return max(e["t_ms"] for e in log) - min(e["start_ms"] for e in log)


def measure(server, fn):
    server.reset()
    t = time.perf_counter()
    out = fn()
    ms = (time.perf_counter() - t) * 1e3
    log = server.log()
    return out, {"ms": ms, "span_ms": server_span(log), "requests": len(log),
                 "bytes": sum(e["resp_bytes"] for e in log), "round_trips": waves(log)}


def sql_cmd(a, so, tables, sql, extra=()):
    cmd = [a.lakeseek, "sql", "--stats"]
    for name, uri in tables:
        cmd += ["--table", f"{name}={uri}"]
    for k, v in so.items():
        cmd += ["--storage-option", f"{k}={v}"]
    return cmd + list(extra) + [sql]


def run_sql(cmd, env=None):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{res.stderr}")
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    stats = json.loads(res.stderr.strip().splitlines()[-1])
    return rows, stats


def summarize(ms):
    return {k: (pct([m[k] for m in ms], 50), max(m[k] for m in ms))
            for k in ("ms", "span_ms", "requests", "bytes", "round_trips")} | {"n": len(ms)}


def print_rows(title, results, base):
    print(f"\n### {title}\n")
    print("| reader | wall p50 (max) ms | server span p50 ms | requests p50 (max) | "
          "round trips p50 (max) | KiB p50 | own --stats (req / RT) | wall / pylance |")
    print("|---|---|---|---|---|---|---|---|")
    b = summarize(results[base]["ms"])
    for reader, r in results.items():
        s = summarize(r["ms"])
        own = r.get("own")
        own_s = f"{pct([o['requests'] for o in own], 50)} / " \
                f"{pct([o['round_trips'] for o in own], 50)}" if own else ""
        print(f"| {reader} | {s['ms'][0]:.0f} ({s['ms'][1]:.0f}) | {s['span_ms'][0]:.0f} | "
              f"{s['requests'][0]} ({s['requests'][1]}) | {s['round_trips'][0]} "
              f"({s['round_trips'][1]}) | {s['bytes'][0] / 1024:.0f} | {own_s} | "
              f"{s['ms'][0] / b['ms'][0]:.2f} |")


def run_point(a, server, so):
    import lance
    uri = "s3://anchors/btree_1000000.lance"
    keys = btree_keys()
    picked = [keys[r] for r in random_rows(9000, a.queries)]
    sql = "SELECT id, key FROM t WHERE key = '{}'"
    results = {"pylance 14.0.2": {"ms": []}, "lakeseek sql": {"ms": [], "own": []},
               "lakeseek sql --cache-dir (warm)": {"ms": [], "own": []}}
    cache = tempfile.mkdtemp(prefix="lakeseek-sql-bench-")
    try:
        # The cache directory is warmed by one process for another key, then every query
        # below is a new process sharing it.
        run_sql(sql_cmd(a, so, [("t", uri)], sql.format(keys[0]), ["--cache-dir", cache]))
        for k in picked:
            expected = {(i, k) for i, kk in enumerate(keys) if kk == k}
            t, m = measure(server, lambda: lance.dataset(uri, storage_options=so).to_table(
                filter=f"key = '{k}'", columns=["id", "key"]))
            assert set(zip(t["id"].to_pylist(), t["key"].to_pylist())) == expected
            results["pylance 14.0.2"]["ms"].append(m)
            for reader, extra in (("lakeseek sql", []),
                                  ("lakeseek sql --cache-dir (warm)", ["--cache-dir", cache])):
                (rows, own), m = measure(server, lambda: run_sql(
                    sql_cmd(a, so, [("t", uri)], sql.format(k), extra)))
                assert {(r["id"], r["key"]) for r in rows} == expected, (reader, k, rows)
                results[reader]["ms"].append(m)
                results[reader]["own"].append(own)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print_rows(f"point lookup `{sql.format('<k>')}` on btree_1000000, {a.queries} keys, "
               "one process (lakeseek) / dataset (pylance) per query", results, "pylance 14.0.2")
    return results


class Workers:
    """`lakeseek worker` processes on 127.0.0.1, killed by PID on exit."""

    def __init__(self, a, so, n, logdir):
        self.procs, self.urls, self.logs = [], [], []
        for i in range(n):
            log = os.path.join(logdir, f"worker{i}.log")
            cmd = [a.lakeseek, "worker", "--listen", "127.0.0.1:0"]
            for k, v in so.items():
                cmd += ["--storage-option", f"{k}={v}"]
            f = open(log, "w")
            self.procs.append(subprocess.Popen(cmd, stderr=f, stdout=subprocess.DEVNULL))
            self.logs.append(log)
        for log, p in zip(self.logs, self.procs):
            for _ in range(300):
                lines = open(log).read().splitlines()
                if lines and "listening" in lines[0]:
                    self.urls.append("http://" + json.loads(lines[0])["listening"])
                    break
                if p.poll() is not None:
                    raise SystemExit(open(log).read())
                time.sleep(0.1)
            else:
                raise SystemExit(f"worker did not start: {log}")

    def tasks(self):
        out = []
        for log in self.logs:
            out.append([json.loads(line) for line in open(log).read().splitlines()[1:]
                        if line.startswith("{") and '"task"' in line])
        return out

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()


def same_groups(rows, ref):
    if [(r["grp"], r["n"]) for r in rows] != [(r["grp"], r["n"]) for r in ref]:
        return False
    return all(abs(r["s"] - q["s"]) <= 1e-9 * max(1.0, abs(q["s"])) for r, q in zip(rows, ref))


def run_agg(a, server, so):
    import lance
    import pyarrow.compute  # noqa: F401
    uri = "s3://anchors/sql_agg_2000000.lance"
    sql = "SELECT grp, count(*) AS n, sum(value) AS s FROM t GROUP BY grp ORDER BY grp"
    results = {}

    def pylance_agg():
        t = lance.dataset(uri, storage_options=so).to_table(columns=["grp", "value"])
        g = t.group_by("grp").aggregate([("value", "count"), ("value", "sum")]).sort_by("grp")
        return [{"grp": x, "n": n, "s": s} for x, n, s in
                zip(g["grp"].to_pylist(), g["value_count"].to_pylist(),
                    g["value_sum"].to_pylist())]

    ref = None
    results["pylance 14.0.2 (to_table + pyarrow group_by)"] = {"ms": []}
    for _ in range(a.runs):
        rows, m = measure(server, pylance_agg)
        ref = ref or rows
        assert same_groups(rows, ref)
        results["pylance 14.0.2 (to_table + pyarrow group_by)"]["ms"].append(m)
    logdir = tempfile.mkdtemp(prefix="lakeseek-workers-")
    task_counts = {}
    try:
        for n_workers in (0, 1, 2):
            workers = Workers(a, so, n_workers, logdir) if n_workers else None
            extra = ["--workers", ",".join(workers.urls)] if workers else []
            base = f"lakeseek sql, {n_workers} workers" if n_workers else "lakeseek sql, one node"
            # Workers live across queries and keep their session caches: the first query
            # is cold everywhere, the later ones find the workers warm.
            names = [f"{base}, first query", f"{base}, workers warm"] if n_workers else [base]
            for name in names:
                results[name] = {"ms": [], "own": []}
            try:
                for run in range(a.runs):
                    name = names[min(run, len(names) - 1)]
                    (rows, own), m = measure(server, lambda: run_sql(
                        sql_cmd(a, so, [("t", uri)], sql, extra)))
                    assert same_groups(rows, ref), (name, rows[:3], ref[:3])
                    results[name]["ms"].append(m)
                    results[name]["own"].append(own)
                if workers:
                    task_counts[base] = [len(t) for t in workers.tasks()]
            finally:
                if workers:
                    workers.close()
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    print_rows(f"aggregate `{sql}` over sql_agg_2000000 (2M rows, 32 fragments), {a.runs} runs",
               {k: v for k, v in results.items() if v["ms"]}, "lakeseek sql, one node")
    for name, counts in task_counts.items():
        print(f"- {name}: tasks run per worker over {a.runs} queries: {counts}")
    print("- `own --stats` of a distributed query counts the coordinator's requests only; "
          "the workers report theirs per task")
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default=os.environ.get("LAKESEEK_BIN", "target/release/lakeseek"))
    ap.add_argument("--server", default="http://127.0.0.1:4582")
    ap.add_argument("--sections", default="point,agg")
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    server = Server(a.server)
    so = storage_options(a.server)
    print(f"server: {a.server}, shape {json.dumps(server.get('config'))}")
    out = {}
    if "point" in a.sections:
        out["point"] = run_point(a, server, so)
    if "agg" in a.sections:
        out["agg"] = run_agg(a, server, so)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    sys.exit(main())
