#!/usr/bin/env python3
"""Issue 35's blob benchmark on the benchmark S3 server (benches/rig/; docs/bench-blobs.md):
random takes of K blobs (K = 1, 32, 256) from the 10,000-image datasets of
benches/peer/gen_blob_bench.py (2.2 blob v2 and 2.1 blob v1), cold and warm, lakeseek vs
pylance 14.0.2, then throughput with 64 takes at once.

    flock /tmp/rig-bench.lock /work/venvs/pylance-14.0.2/bin/python benches/peer/blob_compare.py \\
        --lakeseek /work/main/target/release/lakeseek --server http://127.0.0.1:4590 \\
        [--datasets v2.2,v2.1] [--sizes 1,32,256] [--takes 20] [--out r.json]

Same rows for both readers: take i of size K uses lakeseek's row picker
(`random_rows(seed + i, K, 10000)`, splitmix64), seeds 35000 (warm) / 36000 (cold).
  lakeseek: `lakeseek bench blob DS --column img --blobs-per-take K --takes T --warm|--cold
            --warmup 1 --json` (read_blobs: descriptors, then every blob in one wave); its
            own per-operation requests, bytes and round trips (open included when cold).
  pylance:  per take, `ds.take_blobs("img", indices=rows)` then `[b.read() for b in blobs]`
            (cold: a new `lance.dataset()` first); one process, one take at a time, the
            server's log per take gives requests, bytes and round trips (busy periods).
Bytes are compared with the blobs' own size (from gen_blob_bench.sizes()).
Throughput: T64 takes of 32 blobs, 64 at once, warm (lakeseek `--concurrency 64`; pylance a
ThreadPoolExecutor of 64 threads on one dataset).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_blob_bench import ROWS, sizes  # noqa: E402
from rig_compare import Server, pct, random_rows, storage_options, waves  # noqa: E402

SEEDS = {"warm": 35000, "cold": 36000}
SIZES = sizes()


def rows_of(seed, k):
    return random_rows(seed, k, ROWS)


def payload(rows):
    return sum(SIZES[r] for r in rows)


def uri(version):
    return f"s3://anchors/blobs_v{version}.lance"


def lakeseek(a, version, k, mode, takes, concurrency=1):
    cmd = [a.lakeseek, "bench", "blob", uri(version), "--column", "img", "--blobs-per-take",
           str(k), "--takes", str(takes), f"--{mode}", "--warmup", "1", "--seed",
           str(SEEDS[mode]), "--concurrency", str(concurrency), "--json"]
    for key, v in storage_options(a.server).items():
        cmd += ["--storage-option", f"{key}={v}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout)


def lakeseek_row(a, version, k, mode, takes):
    rep = lakeseek(a, version, k, mode, takes)
    ops = rep["operations"]
    ratio = [op["bytes"] / payload(rows_of(SEEDS[mode] + op["index"], k)) for op in ops]
    return summary("lakeseek", version, k, mode, [op["latency_ms"] for op in ops],
                   [op["requests"] for op in ops], [op["round_trips"] for op in ops], ratio,
                   [op["bytes"] for op in ops])


def pylance_row(a, version, k, mode, takes):
    import lance
    so = storage_options(a.server)
    server = Server(a.server)
    ds = lance.dataset(uri(version), storage_options=so)
    if mode == "warm":  # one warm-up take, as lakeseek's --warmup 1
        [b.read() for b in ds.take_blobs("img", indices=rows_of(SEEDS[mode] - 1, k))]
    ms, reqs, rts, ratio, byts = [], [], [], [], []
    for i in range(takes):
        rows = rows_of(SEEDS[mode] + i, k)
        server.reset()
        t = time.perf_counter()
        d = ds if mode == "warm" else lance.dataset(uri(version), storage_options=so)
        data = [b.read() for b in d.take_blobs("img", indices=rows)]
        ms.append((time.perf_counter() - t) * 1e3)
        assert sum(len(x) for x in data) == payload(rows)
        log = server.log()
        got = sum(e["resp_bytes"] for e in log)
        reqs.append(len(log))
        rts.append(waves(log))
        byts.append(got)
        ratio.append(got / payload(rows))
    return summary("pylance 14.0.2", version, k, mode, ms, reqs, rts, ratio, byts)


def summary(reader, version, k, mode, ms, reqs, rts, ratio, byts):
    return {"reader": reader, "dataset": version, "k": k, "mode": mode, "n": len(ms),
            "p50_ms": pct(ms, 50), "p90_ms": pct(ms, 90), "req_p50": pct(reqs, 50),
            "req_max": max(reqs), "rt_p50": pct(rts, 50), "rt_max": max(rts),
            "mb_mean": sum(byts) / len(byts) / 1e6,
            "bytes_ratio_p50": pct(ratio, 50), "bytes_ratio_max": max(ratio)}


def throughput(a, version, takes, k=32, concurrency=64):
    out = []
    rep = lakeseek(a, version, k, "warm", takes, concurrency)
    ops = rep["operations"]
    mb = sum(payload(rows_of(SEEDS["warm"] + op["index"], k)) for op in ops) / 1e6
    out.append({"reader": "lakeseek", "dataset": version, "takes": len(ops),
                "takes_per_s": rep["throughput_ops_per_sec"],
                "mb_per_s": mb / rep["wall_seconds"], "p50_ms": rep["latency_ms"]["p50"],
                "errors": rep.get("errors", 0)})
    import lance
    ds = lance.dataset(uri(version), storage_options=storage_options(a.server))
    [b.read() for b in ds.take_blobs("img", indices=rows_of(SEEDS["warm"] - 1, k))]

    def one(i):
        t = time.perf_counter()
        rows = rows_of(SEEDS["warm"] + i, k)
        n = sum(len(b.read()) for b in ds.take_blobs("img", indices=rows))
        assert n == payload(rows)
        return (time.perf_counter() - t) * 1e3, n

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        res = list(pool.map(one, range(takes)))
    wall = time.perf_counter() - t0
    out.append({"reader": "pylance 14.0.2", "dataset": version, "takes": len(res),
                "takes_per_s": len(res) / wall, "mb_per_s": sum(n for _, n in res) / 1e6 / wall,
                "p50_ms": pct([m for m, _ in res], 50), "errors": 0})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", default="/work/main/target/release/lakeseek")
    ap.add_argument("--server", default="http://127.0.0.1:4590")
    ap.add_argument("--datasets", default="2.2,2.1")
    ap.add_argument("--sizes", default="1,32,256")
    ap.add_argument("--modes", default="cold,warm")
    ap.add_argument("--takes", default="20,20,8", help="takes per size, in --sizes order")
    ap.add_argument("--throughput-takes", type=int, default=128)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--out")
    a = ap.parse_args()
    print(f"server {a.server}: {Server(a.server).get('config')}; load {os.getloadavg()}")
    rows, tput = [], []
    print("| dataset | K | mode | reader | p50 ms | p90 ms | requests p50 (max) "
          "| round trips p50 (max) | MB / take | bytes / blob bytes p50 (max) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    takes = dict(zip(a.sizes.split(","), a.takes.split(",")))
    for version in a.datasets.split(","):
        for k in a.sizes.split(","):
            for mode in a.modes.split(","):
                for fn in (lakeseek_row, pylance_row):
                    r = fn(a, version, int(k), mode, int(takes[k]))
                    rows.append(r)
                    print(f"| {version} | {k} | {mode} | {r['reader']} | {r['p50_ms']:.0f} | "
                          f"{r['p90_ms']:.0f} | {r['req_p50']} ({r['req_max']}) | "
                          f"{r['rt_p50']} ({r['rt_max']}) | {r['mb_mean']:.2f} | "
                          f"{r['bytes_ratio_p50']:.3f} ({r['bytes_ratio_max']:.3f}) |",
                          flush=True)
    if a.throughput_takes:
        print("\n| dataset | reader | takes of 32, 64 at once | takes/s | MB/s | p50 ms | errors |")
        print("|---|---|---|---|---|---|---|")
        for version in a.datasets.split(","):
            for r in throughput(a, version, a.throughput_takes):
                tput.append(r)
                print(f"| {version} | {r['reader']} | {r['takes']} | {r['takes_per_s']:.1f} | "
                      f"{r['mb_per_s']:.0f} | {r['p50_ms']:.0f} | {r['errors']} |", flush=True)
    print(f"load after: {os.getloadavg()}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"takes": rows, "throughput": tput}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
