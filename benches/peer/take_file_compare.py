"""Side-by-side random take: lakeseek vs pylance 14.0.2 on the same Lance data file, through
the same S3 server (moto) behind the counting, latency-injecting proxy of
shared/peer-bench (s3proxy.py on 127.0.0.1:4572).

    python take_file_compare.py --lakeseek target/release/examples/take_bench \
        --dataset btree_1000000 --columns id,key [--delay-ms 20] [--runs 5] [--warm 20]

pylance: `ds.take(indices, columns=[col])` (cold = fresh process + lance.dataset(); open and
take counted apart by the proxy; warm = same dataset object, new rows each take).
lakeseek: examples/take_bench on the dataset's data file (cold = fresh caches, open + take;
warm = shared caches). Both use the same row sets (splitmix64 seeds 5000+r cold, 6000+i
warm). Requests/bytes/round trips for pylance come from the proxy log; for lakeseek from its
IoStats (the test suite checks they equal the HTTP-layer counts), with the proxy's totals
printed as a cross-check.
"""
import argparse
import json
import os
import subprocess
import sys
import time

PEER = os.environ.get("PEER_BENCH", os.path.join(os.path.dirname(__file__), "../../../shared/peer-bench"))
sys.path.insert(0, os.path.abspath(PEER))
import common  # noqa: E402

MASK = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def random_rows(seed, n, total):
    """Same generator as examples/take_bench.rs (seed mixed first: neighbouring seeds give
    unrelated row sets)."""
    state = mix(seed ^ 0x6A09E667F3BCC909)
    rows = set()
    while len(rows) < min(n, total):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        rows.add(mix(state) % total)
    return sorted(rows)


CHILD = r"""
import json, sys, time, lance
sys.path.insert(0, {peer!r}); import common
uri, col, rows_sets = {uri!r}, {col!r}, {rows!r}
common.proxy_reset(); t0 = time.perf_counter()
ds = lance.dataset(uri, storage_options=common.STORAGE_OPTIONS)
open_ms = (time.perf_counter() - t0) * 1e3
open_stats = common.summarize(common.proxy_stats()); common.proxy_reset()
out = {{"open": open_stats, "open_ms": open_ms, "takes": []}}
for rows in rows_sets:
    common.proxy_reset(); t = time.perf_counter()
    tbl = ds.take(indices=rows, columns=[col]); assert tbl.num_rows == len(rows)
    ms = (time.perf_counter() - t) * 1e3
    out["takes"].append(dict(common.summarize(common.proxy_stats()), ms=ms))
print(json.dumps(out))
"""


def pylance_run(py, uri, col, row_sets):
    code = CHILD.format(peer=os.path.abspath(PEER), uri=uri, col=col, rows=row_sets)
    res = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, RUST_LOG="error", LANCE_LOG="error"))
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def rng(xs):
    return f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)}–{max(xs)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", required=True)
    ap.add_argument("--dataset", default="btree_1000000")
    ap.add_argument("--columns", default="id,key")
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    common.proxy_delay(a.delay_ms)
    info = json.load(open(os.path.join(common.DATA, a.dataset + ".info.json")))
    data_file = info["files"][0]["file"]
    uri = common.s3_uri(a.dataset + ".lance")
    file_url = f"{uri}/data/{data_file}"
    env = dict(os.environ, AWS_ENDPOINT=common.PROXY, AWS_ALLOW_HTTP="true",
               AWS_ACCESS_KEY_ID="dummy", AWS_SECRET_ACCESS_KEY="dummy", AWS_REGION="us-east-1")
    rows_table = []
    for col in a.columns.split(","):
        # pylance cold: one fresh process per run
        cold = [pylance_run(a.python, uri, col, [random_rows(5000 + r, a.n, a.rows)]) for r in range(a.runs)]
        warm = pylance_run(a.python, uri, col, [random_rows(5999, a.n, a.rows)] +
                           [random_rows(6000 + i, a.n, a.rows) for i in range(a.warm)])["takes"][1:]
        py = {
            "cold_req": rng([c["open"]["requests"] + c["takes"][0]["requests"] for c in cold]),
            "cold_rt": rng([c["open"]["round_trips"] + c["takes"][0]["round_trips"] for c in cold]),
            "cold_take_kib": rng([round(c["takes"][0]["bytes"] / 1024) for c in cold]),
            "cold_ms": round(med([c["open_ms"] + c["takes"][0]["ms"] for c in cold])),
            "warm_req": rng([w["requests"] for w in warm]),
            "warm_rt": rng([w["round_trips"] for w in warm]),
            "warm_kib": round(med([w["bytes"] for w in warm]) / 1024),
            "warm_ms": round(med([w["ms"] for w in warm])),
        }
        common.proxy_reset()
        res = subprocess.run([a.lakeseek, file_url, col, str(a.n), str(a.runs), str(a.warm)],
                             capture_output=True, text=True, env=env, timeout=600)
        if res.returncode != 0:
            raise SystemExit(res.stderr)
        ls = json.loads(res.stdout)
        proxy_total = common.summarize(common.proxy_stats(log=True))
        c, w = ls["cold"], ls["warm"]
        lk = {
            "cold_req": rng([o + t for o, t in zip(c["open"]["requests"], c["take"]["requests"])]),
            "cold_rt": rng([o + t for o, t in zip(c["open"]["round_trips"], c["take"]["round_trips"])]),
            "cold_take_kib": rng([round(b / 1024) for b in c["take"]["bytes"]]),
            "cold_ms": round(c["total_median_ms"]),
            "warm_req": rng(w["requests"]),
            "warm_rt": rng(w["round_trips"]),
            "warm_kib": round(med(w["bytes"]) / 1024),
            "warm_ms": round(w["median_ms"]),
            "proxy_total_requests": proxy_total["requests"],
            "own_total_requests": sum(c["open"]["requests"]) + sum(c["take"]["requests"]) + sum(w["requests"]),
        }
        rows_table.append((col, py, lk))
    print(f"\n### Random take of {a.n} rows, {a.rows} rows, delay {a.delay_ms} ms per request\n")
    print("| column | reader | cold requests (open+take) | cold RT | cold take KiB | cold ms | warm requests | warm RT | warm KiB (median) | warm ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for col, py, lk in rows_table:
        for name, r in (("pylance 14.0.2", py), ("lakeseek", lk)):
            print(f"| {col} | {name} | {r['cold_req']} | {r['cold_rt']} | {r['cold_take_kib']} | {r['cold_ms']} | "
                  f"{r['warm_req']} | {r['warm_rt']} | {r['warm_kib']} | {r['warm_ms']} |")
    for col, _, lk in rows_table:
        print(f"\nlakeseek {col}: proxy counted {lk['proxy_total_requests']} requests (incl. the warm-up open/take), "
              f"IoStats counted {lk['own_total_requests']} in the measured phases")


if __name__ == "__main__":
    main()
