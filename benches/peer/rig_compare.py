#!/usr/bin/env python3
"""lakeseek vs pylance 14.0.2 on the project's benchmark S3 server (benches/rig/), same rows,
same keys, one run. Requests and bytes come from the server's counters for both readers
(pylance per operation from the server log; lakeseek from its own report, cross-checked
against the server's totals and printed).

    benches/rig/rig.sh start 20 80 lognormal 100
    /work/.venv-pylance/bin/python benches/peer/rig_compare.py --lakeseek target/release/lakeseek \
        [--sections take,btree,lists] [--warm 40] [--cold 10] \
        [--setting default] [--setting gap8k:coalesce_gap=8192] ... [--out res.json]

take:  100 random rows of one column of one dataset (`--take DATASET:COLUMN`, repeatable;
       default take_1000000_v2.2:id; e.g. take_1000000_v2.3s:detections for the 2.3 sparse
       list<struct> column).
       warm: one open dataset, one warm-up take (seed 5999), then takes with seeds 6000+i;
       cold: dataset open + take with fresh caches (pylance: a new lance.dataset() per take in
       one process; lakeseek: `bench take --cold`), seeds 5000+i. Same rows for both.
       `--file-take` adds lakeseek's file-level take of the same rows from the dataset's one
       data file (`bench take <file>`), so the dataset's cost can be compared with the file's.
btree: `key = v` on btree_1000000 (`--btree DATASET`, repeatable: the same table in other
       storage versions, benches/peer/gen_version_bench.py), open + query with fresh caches (pylance: a new
       lance.dataset() per query; lakeseek: `bench query --cold`), the keys lakeseek's
       `bench query` picks (reproduced here), warm: one open dataset, one warm-up query.
lists: `key IN (10 keys)` and a 20-key range `key >= lo AND key <= hi` on btree_1000000
       (as ../shared/peer-bench/bench_btree.py builds them), cold and warm as for btree;
       lakeseek runs the same filters from a file (`bench query --filters`).
Each --setting NAME:k=v,k=v runs lakeseek once more with those storage options.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

MASK = (1 << 64) - 1
ROWS = 1_000_000


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def random_rows(seed, n, total=ROWS):
    """lakeseek::bench::random_rows (splitmix64, seed mixed first), sorted."""
    state = mix((seed ^ 0x6A09E667F3BCC909) & MASK)
    rows = set()
    while len(rows) < min(n, total):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        rows.add(mix(state) % total)
    return sorted(rows)


class Server:
    def __init__(self, url):
        self.url = url

    def get(self, cmd):
        with urllib.request.urlopen(f"{self.url}/__proxy__/{cmd}", timeout=60) as r:
            return json.loads(r.read())

    def reset(self):
        self.get("reset")

    def log(self):
        return self.get("stats")["log"]


def storage_options(url):
    return {"aws_endpoint": url, "allow_http": "true", "aws_access_key_id": "dummy",
            "aws_secret_access_key": "dummy", "aws_region": "us-east-1",
            "aws_virtual_hosted_style_request": "false"}


def pct(xs, p):
    xs = sorted(xs)
    k = max(1, -(-p * len(xs) // 100))
    return xs[int(k) - 1]


def waves(log):
    """Round trips the server saw: busy periods (a request arriving after every earlier one
    has been answered starts a new one)."""
    n, busy_until = 0, None
    for e in sorted(log, key=lambda e: e["start_ms"]):
        if busy_until is None or e["start_ms"] > busy_until:
            n += 1
            busy_until = e["t_ms"]
        else:
            busy_until = max(busy_until, e["t_ms"])
    return n


def summary(ms, reqs, byts, rts):
    return {"p50": pct(ms, 50), "p90": pct(ms, 90), "p99": pct(ms, 99),
            "rt_p50": pct(rts, 50), "rt_max": max(rts),
            "req_p50": pct(reqs, 50), "req_max": max(reqs),
            "kib_p50": pct(byts, 50) / 1024, "kib_mean": sum(byts) / len(byts) / 1024,
            "n": len(ms)}


def pylance_ops(server, uri, so, ops, warm, kind, column="id"):
    """Run `ops` (row lists or filters) with pylance; per op (ms, requests, bytes)."""
    import lance
    out = []
    ds = lance.dataset(uri, storage_options=so) if warm else None
    if warm:  # warm-up
        first = ops[0]
        (ds.take(indices=first, columns=[column]) if kind == "take"
         else ds.scanner(filter=first, columns=[], with_row_address=True).to_table())
        ops = ops[1:]
    for op in ops:
        server.reset()
        t = time.perf_counter()
        d = ds if warm else lance.dataset(uri, storage_options=so)
        if kind == "take":
            n = d.take(indices=op, columns=[column]).num_rows
        else:
            n = d.scanner(filter=op, columns=[], with_row_address=True).to_table().num_rows
        ms = (time.perf_counter() - t) * 1e3
        assert n >= 1, (op, n)
        log = server.log()
        out.append((ms, len(log), sum(e["resp_bytes"] for e in log), waves(log)))
    return out


def lakeseek_bench(server, binary, argv, options):
    cmd = [binary, "bench"] + argv + ["--json", "--concurrency", "1"]
    for k, v in options.items():
        cmd += ["--storage-option", f"{k}={v}"]
    server.reset()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    rep = json.loads(res.stdout)
    seen = len(server.log())
    own = rep["totals"]["requests"] + rep["setup"]["requests"]
    ops = [(o["latency_ms"], o["requests"], o["bytes"], o["round_trips"])
           for o in rep["operations"]]
    return ops, seen, own, rep


def data_file_url(a, dataset):
    """The one data file of `dataset` (peer-bench's info.json next to it)."""
    with open(os.path.join(a.anchors, "data", dataset + ".info.json")) as f:
        files = json.load(f)["files"]
    if len(files) != 1:
        raise SystemExit(f"--file-take needs a one-fragment dataset, {dataset} has {len(files)}")
    return f"s3://anchors/{dataset}.lance/data/{files[0]['file']}"


def run_take(a, server, so, settings, dataset, column):
    uri = f"s3://anchors/{dataset}.lance"
    rows = lambda s: random_rows(s, 100)  # noqa: E731
    targets = [("", uri)] + ([(" file", data_file_url(a, dataset))] if a.file_take else [])
    res = {}
    for mode, n, seed in (("warm", a.warm, 6000), ("cold", a.cold, 5000)):
        ops = ([rows(5999)] if mode == "warm" else []) + [rows(seed + i) for i in range(n)]
        py = pylance_ops(server, uri, so, ops, mode == "warm", "take", column)
        res[(mode, "pylance 14.0.2")] = (py, None)
        for name, extra in settings:
            for suffix, target in targets:
                argv = ["take", target, "--columns", column, "--rows-per-take", "100",
                        "--takes", str(n), f"--{mode}", "--seed", str(seed), "--warmup", "1"]
                ops_lk, seen, own, _ = lakeseek_bench(server, a.lakeseek, argv,
                                                      {**so, **extra})
                res[(mode, f"lakeseek {name}{suffix}")] = (ops_lk, (seen, own))
    return res


def btree_keys():
    """The key column of btree_1000000 (gen_data.btree_table), in row order."""
    import numpy as np
    x = np.random.default_rng(20240601).integers(0, 2**63 - 1, ROWS, dtype=np.int64)
    return [f"{v:016x}" for v in x.tolist()]


def bench_query_filters(keys, seed, n):
    """The filters `lakeseek bench query --seed SEED --queries N` runs (warm-up first)."""
    vals = [keys[r] for r in random_rows(seed, n)]
    pick = lambda s: vals[mix((s + 0x9E3779B97F4A7C15) & MASK) % len(vals)]  # noqa: E731
    return [f"key = '{pick(seed - 1)}'"] + [f"key = '{pick(seed + i)}'" for i in range(n)]


def run_btree(a, server, so, settings, dataset="btree_1000000"):
    uri = f"s3://anchors/{dataset}.lance"
    keys = btree_keys()
    res = {}
    for mode, n, seed in (("cold", a.cold, 7000), ("warm", a.warm, 8000)):
        filters = bench_query_filters(keys, seed, n)
        py = pylance_ops(server, uri, so, filters if mode == "warm" else filters[1:],
                         mode == "warm", "btree")
        res[(mode, "pylance 14.0.2")] = (py, None)
        for name, extra in settings:
            argv = ["query", uri, "--filter-template", "key = '{}'", "--values-from", "key",
                    "--queries", str(n), f"--{mode}", "--seed", str(seed), "--warmup", "1"]
            ops_lk, seen, own, _ = lakeseek_bench(server, a.lakeseek, argv, {**so, **extra})
            res[(mode, f"lakeseek {name}")] = (ops_lk, (seen, own))
    return res


def list_filters(kind, n):
    """n + 1 filters of `kind` (in10, range20) on btree_1000000's keys: the first is the
    warm-up."""
    import numpy as np
    x = np.random.default_rng(20240601).integers(0, 2**63 - 1, ROWS, dtype=np.int64)
    q = np.random.default_rng(777)
    if kind == "in10":
        pick = q.choice(ROWS, 10 * (n + 1), replace=False)
        keys = [f"{int(x[i]):016x}" for i in pick]
        return ["key IN (" + ", ".join(f"'{k}'" for k in keys[10 * i:10 * i + 10]) + ")"
                for i in range(n + 1)]
    xs = np.sort(x)
    starts = q.choice(ROWS - 25, n + 1, replace=False)
    return [f"key >= '{int(xs[s]):016x}' AND key <= '{int(xs[s + 19]):016x}'" for s in starts]


def run_lists(a, server, so, settings, kind):
    import tempfile
    uri = "s3://anchors/btree_1000000.lance"
    res = {}
    for mode, n in (("cold", a.cold), ("warm", a.warm)):
        filters = list_filters(kind, n)
        py = pylance_ops(server, uri, so, filters if mode == "warm" else filters[1:],
                         mode == "warm", "btree")
        res[(mode, "pylance 14.0.2")] = (py, None)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(filters) + "\n")
        try:
            for name, extra in settings:
                argv = ["query", uri, "--filters", f.name, "--queries", str(n), f"--{mode}",
                        "--warmup", "1"]
                ops_lk, seen, own, _ = lakeseek_bench(server, a.lakeseek, argv, {**so, **extra})
                res[(mode, f"lakeseek {name}")] = (ops_lk, (seen, own))
        finally:
            os.unlink(f.name)
    return res


def print_table(title, res):
    print(f"\n### {title}\n")
    print("| mode | reader | p50 ms | p90 ms | p99 ms | requests p50 (max) | round trips p50 "
          "(max) | KiB p50 | p50 / pylance | KiB / pylance | server = report |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in ("warm", "cold"):
        base = res.get((mode, "pylance 14.0.2"))
        bs = summary(*zip(*base[0])) if base else None
        for (m, reader), (ops, check) in res.items():
            if m != mode:
                continue
            s = summary(*zip(*ops))
            ratio = f"{s['p50'] / bs['p50']:.2f}" if bs else ""
            kr = f"{s['kib_mean'] / bs['kib_mean']:.2f}" if bs else ""
            chk = f"{check[0]} = {check[1]}" if check else "(server log)"
            print(f"| {mode} | {reader} | {s['p50']:.1f} | {s['p90']:.1f} | {s['p99']:.1f} | "
                  f"{s['req_p50']} ({s['req_max']}) | {s['rt_p50']} ({s['rt_max']}) | {s['kib_p50']:.0f} | {ratio} | {kr} | {chk} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default=os.environ.get("LAKESEEK_BIN", "target/release/lakeseek"))
    ap.add_argument("--server", default="http://127.0.0.1:4582")
    ap.add_argument("--sections", default="take,btree")
    ap.add_argument("--warm", type=int, default=40)
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--setting", action="append", default=[],
                    help="NAME or NAME:key=value,key=value (lakeseek storage options)")
    ap.add_argument("--take", action="append", default=[],
                    help="DATASET:COLUMN for the take section (default take_1000000_v2.2:id)")
    ap.add_argument("--btree", action="append", default=[],
                    help="DATASET for the btree section (repeatable; default btree_1000000: "
                         "the same table in another storage version, gen_version_bench.py)")
    ap.add_argument("--file-take", action="store_true",
                    help="also lakeseek's file-level take of the same rows")
    ap.add_argument("--anchors", default=os.environ.get("ANCHORS_TMP", "/work/anchors"))
    ap.add_argument("--out")
    a = ap.parse_args()
    server = Server(a.server)
    so = storage_options(a.server)
    settings = []
    for s in a.setting or ["default"]:
        name, _, kvs = s.partition(":")
        settings.append((name, dict(kv.split("=", 1) for kv in kvs.split(",") if kv)))
    shape = server.get("config")
    print(f"server: {a.server}, shape {json.dumps(shape)}")
    out = {"shape": shape}
    if "take" in a.sections:
        for spec in a.take or ["take_1000000_v2.2:id"]:
            dataset, _, column = spec.partition(":")
            res = run_take(a, server, so, settings, dataset, column or "id")
            print_table(f"take 100 random rows of `{column}` ({dataset})", res)
            out[f"take {spec}"] = {f"{m}|{r}": v for (m, r), v in res.items()}
    if "btree" in a.sections:
        for dataset in a.btree or ["btree_1000000"]:
            res = run_btree(a, server, so, settings, dataset)
            print_table(f"BTree `key = v` ({dataset})", res)
            key = "btree" if dataset == "btree_1000000" else f"btree {dataset}"
            out[key] = {f"{m}|{r}": v for (m, r), v in res.items()}
    if "lists" in a.sections:
        for kind, title in (("in10", "`key IN (10 keys)`"), ("range20", "20-key range")):
            res = run_lists(a, server, so, settings, kind)
            print_table(f"BTree {title} (btree_1000000)", res)
            out[f"btree {kind}"] = {f"{m}|{r}": v for (m, r), v in res.items()}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    sys.exit(main())
