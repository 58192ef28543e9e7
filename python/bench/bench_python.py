"""lakeseek (the Python package) vs pylance 14.0.2: installed size, import time and RSS,
serverless cold start on the project's S3 rig, warm take and warm lookup.

    python/bench/run.sh        # everything below, in one command (python/README.md, Benchmarks)

or by hand:

    # the dataset (pylance writes it) and the S3 server binary
    /work/venvs/pylance-14.0.2/bin/python python/bench/gen_bench_dataset.py /work/bench-data
    cargo build --release --example s3_rig
    # a fresh venv with only the wheel (the `wheel` profile: pyproject.toml)
    python3 -m venv /work/venvs/lakeseek-wheel && /work/venvs/lakeseek-wheel/bin/pip install ./python
    /work/venvs/pylance-14.0.2/bin/python python/bench/bench_python.py \
        --lakeseek-python /work/venvs/lakeseek-wheel/bin/python \
        --pylance-python /work/venvs/pylance-14.0.2/bin/python \
        --rig "$CARGO_TARGET_DIR/release/examples/s3_rig" --data /work/bench-data/handler_1000000.lance

Runs under the pylance venv's python (numpy regenerates the dataset's keys); every measured
reader runs in its own process. The rig (benches/rig/README.md) is started and stopped here on
`$RIG_PORT` (4583) with the shaping of `benches/rig/rig.sh start 20 80`: a fixed 20 ms first
byte and 80 MB/s per connection. Every timed section holds an exclusive `flock` on
`--lock` (/tmp/rig-bench.lock), as `flock /tmp/rig-bench.lock CMD` does, so two benchmarks on
the same machine never measure at the same time.
"""

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 1_000_000
COLUMNS = ["id", "key", "score"]
PORT = int(os.environ.get("RIG_PORT", "4583"))

OPTIONS = {
    "aws_endpoint": f"http://127.0.0.1:{PORT}",
    "aws_access_key_id": "dummy",
    "aws_secret_access_key": "dummy",
    "aws_region": "us-east-1",
    "allow_http": "true",
}
URL = "s3://pybench/handler_1000000.lance"

SIZE_SNIPPET = r"""
import importlib.metadata as md, json, os, re, sys
def size(dist):
    return sum(os.path.getsize(f.locate()) for f in dist.files or [] if os.path.isfile(f.locate()))
def closure(root):
    seen, todo = {}, [root]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        dist = md.distribution(name)
        seen[key] = size(dist)
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            todo.append(re.match(r"[A-Za-z0-9_.-]+", req).group(0))
    return seen
print(json.dumps(closure(sys.argv[1])))
"""

IMPORT_SNIPPET = r"""
import time
t = time.perf_counter()
import {module}
dt = time.perf_counter() - t
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print(dt, int(status["VmHWM"].split()[0]), int(status["VmRSS"].split()[0]))
"""

HANDLER = {
    "lakeseek": r"""
import sys, lakeseek
ds = lakeseek.Dataset(sys.argv[1], storage_options=dict(a.split("=", 1) for a in sys.argv[3:]))
t = ds.query(f"key = '{sys.argv[2]}'", columns=["id", "key", "score"])
assert t.num_rows == 1, t
print(t.to_pylist())
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print(int(status["VmHWM"].split()[0]))
""",
    "pylance": r"""
import sys, lance
ds = lance.dataset(sys.argv[1], storage_options=dict(a.split("=", 1) for a in sys.argv[3:]))
t = ds.to_table(filter=f"key = '{sys.argv[2]}'", columns=["id", "key", "score"])
assert t.num_rows == 1, t
print(t.to_pylist())
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print(int(status["VmHWM"].split()[0]))
""",
}

WARM = {
    "lakeseek": r"""
import json, sys, time, lakeseek
keys, rowsets = json.loads(sys.stdin.read())
ds = lakeseek.Dataset(sys.argv[1], storage_options=dict(a.split("=", 1) for a in sys.argv[2:]))
take = lambda rows: ds.take(rows, ["id", "key", "score"])
lookup = lambda key: ds.query(f"key = '{key}'", columns=["id", "key", "score"])
""",
    "pylance": r"""
import json, sys, time, lance
keys, rowsets = json.loads(sys.stdin.read())
ds = lance.dataset(sys.argv[1], storage_options=dict(a.split("=", 1) for a in sys.argv[2:]))
take = lambda rows: ds.take(rows, columns=["id", "key", "score"])
lookup = lambda key: ds.to_table(filter=f"key = '{key}'", columns=["id", "key", "score"])
""",
}
WARM_LOOP = r"""
take(rowsets[0]); lookup(keys[0])  # warm-up
takes, lookups = [], []
for rows in rowsets[1:]:
    t = time.perf_counter(); r = take(rows); takes.append(time.perf_counter() - t)
    assert r.num_rows == len(rows)
for key in keys[1:]:
    t = time.perf_counter(); r = lookup(key); lookups.append(time.perf_counter() - t)
    assert r.num_rows == 1
print(json.dumps({"take": takes, "lookup": lookups}))
"""


def keys_and_rows(n_keys, n_sets):
    rng = np.random.default_rng(20240601)
    all_keys = [f"{v:016x}" for v in rng.integers(0, 2**63 - 1, ROWS, dtype=np.int64).tolist()]
    pick = np.random.default_rng(7)
    keys = [all_keys[i] for i in pick.choice(ROWS, n_keys, replace=False)]
    rowsets = [sorted(pick.choice(ROWS, 100, replace=False).tolist()) for _ in range(n_sets)]
    return keys, rowsets


def sizes(python, dist):
    """Installed bytes of `dist` and of everything it requires (recursively, no extras)."""
    out = subprocess.run([python, "-c", SIZE_SNIPPET, dist], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def import_stats(python, module, runs):
    times, hwm = [], []
    for _ in range(runs):
        out = subprocess.run([python, "-c", IMPORT_SNIPPET.format(module=module)],
                             capture_output=True, text=True, check=True).stdout.split()
        times.append(float(out[0]))
        hwm.append(int(out[1]))
    return {"import_s_p50": statistics.median(times), "peak_rss_mb_p50": statistics.median(hwm) / 1024}


def run_measured(args):
    """Wall time of one fresh process, and its peak RSS in MB: the handler prints its own
    `VmHWM` last (the child's `ru_maxrss` would count the pages it shared with this process
    between fork and exec)."""
    start = time.perf_counter()
    out = subprocess.run(args, capture_output=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {out.stderr.decode()[-2000:]}")
    lines = out.stdout.decode().split()
    return wall, int(lines[-1]) / 1024, out.stdout


def cold_start(python, reader, keys):
    walls, rss = [], []
    opts = [f"{k}={v}" for k, v in OPTIONS.items()]
    for key in keys:
        wall, peak, _ = run_measured([python, "-c", HANDLER[reader], URL, key] + opts)
        walls.append(wall)
        rss.append(peak)
    return {"wall_s_p50": statistics.median(walls), "peak_rss_mb_p50": statistics.median(rss),
            "wall_s_min": min(walls), "wall_s_max": max(walls)}


def warm(python, reader, keys, rowsets):
    opts = [f"{k}={v}" for k, v in OPTIONS.items()]
    out = subprocess.run([python, "-c", WARM[reader] + WARM_LOOP, URL] + opts,
                         input=json.dumps([keys, rowsets]), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    got = json.loads(out.stdout)
    return {"take100_ms_p50": statistics.median(got["take"]) * 1e3,
            "lookup_ms_p50": statistics.median(got["lookup"]) * 1e3}


@contextlib.contextmanager
def bench_lock(path):
    """Hold an exclusive flock(2) on `path` (the lock `flock(1)` takes) while measuring."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def start_rig(binary, data):
    """`s3_rig` on 127.0.0.1:$RIG_PORT, root under $RIG_HOME (or a temporary directory)."""
    home = os.environ.get("RIG_HOME")
    if home:
        os.makedirs(home, exist_ok=True)
    root = tempfile.mkdtemp(prefix="pybench-rig-", dir=home)
    log = open(os.path.join(root, "log"), "w")
    proc = subprocess.Popen([binary, "--root", os.path.join(root, "data"), "--listen",
                             f"127.0.0.1:{PORT}", "--bucket", "pybench", "--delay-ms", "20",
                             "--bw-mbps", "80", "--dist", "fixed",
                             "--load", f"handler_1000000.lance={data}"], stdout=log, stderr=log)
    for _ in range(600):
        if "ready on" in open(log.name).read():
            return proc, root
        if proc.poll() is not None:
            raise RuntimeError(open(log.name).read())
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("rig did not start")


def table_md(result):
    """The README's benchmark table."""
    ls, pl = result["lakeseek"], result["pylance"]

    def mb(sizes):
        return sum(sizes.values()) / 1e6

    def parts(sizes):
        return ", ".join(f"{k} {v / 1e6:.1f}" for k, v in
                         sorted(sizes.items(), key=lambda kv: -kv[1]) if v >= 1e6)

    rows = [
        ("installed, with everything it pulls in (MB = 10^6 B)",
         f"**{mb(ls['installed_bytes']):.1f}** ({parts(ls['installed_bytes'])})",
         f"**{mb(pl['installed_bytes']):.1f}** ({parts(pl['installed_bytes'])})"),
    ]
    for label, get, fmt in [
        ("`import` time, p50 of fresh processes", lambda r: r["import"]["import_s_p50"], "{:.3f} s"),
        ("peak RSS after `import`, p50", lambda r: r["import"]["peak_rss_mb_p50"], "{:.0f} MB"),
        ("cold serverless handler (import, open, `key = v`, 1 row x 3 columns), wall p50",
         lambda r: r["cold_handler"]["wall_s_p50"], "{:.3f} s"),
        ("cold serverless handler, peak RSS p50",
         lambda r: r["cold_handler"]["peak_rss_mb_p50"], "{:.0f} MB"),
        ("warm `take` of 100 random rows (3 columns), p50",
         lambda r: r["warm"]["take100_ms_p50"], "{:.1f} ms"),
        ("warm lookup `key = v` (3 columns), p50", lambda r: r["warm"]["lookup_ms_p50"], "{:.1f} ms"),
    ]:
        rows.append((label, "**" + fmt.format(get(ls)) + "**", "**" + fmt.format(get(pl)) + "**"))
    lines = ["| | lakeseek | pylance 14.0.2 |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lakeseek-python", required=True)
    p.add_argument("--pylance-python", required=True)
    p.add_argument("--rig", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--lock", default="/tmp/rig-bench.lock")
    p.add_argument("--out")
    args = p.parse_args()
    pythons = {"lakeseek": args.lakeseek_python, "pylance": args.pylance_python}
    modules = {"lakeseek": "lakeseek", "pylance": "lance"}
    result = {}
    for reader, python in pythons.items():
        dist = {"lakeseek": "lakeseek", "pylance": "pylance"}[reader]
        with bench_lock(args.lock):
            imports = import_stats(python, modules[reader], args.runs)
        result[reader] = {"installed_bytes": sizes(python, dist), "import": imports}
        print(reader, json.dumps(result[reader]), flush=True)
    keys, rowsets = keys_and_rows(args.runs + 41, 41)
    rig, rig_root = start_rig(args.rig, args.data)
    try:
        for reader, python in pythons.items():
            with bench_lock(args.lock):
                result[reader]["cold_handler"] = cold_start(python, reader, keys[: args.runs])
            with bench_lock(args.lock):
                result[reader]["warm"] = warm(python, reader, keys[args.runs:], rowsets)
            print(reader, json.dumps({k: result[reader][k] for k in ("cold_handler", "warm")}),
                  flush=True)
    finally:
        rig.terminate()
        rig.wait()
        shutil.rmtree(rig_root, ignore_errors=True)
    print(table_md(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
