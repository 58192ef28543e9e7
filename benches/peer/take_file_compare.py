"""Side-by-side random take: `lakeseek bench take` vs pylance 14.0.2 on the same Lance data,
through the same S3 server (moto) behind the counting, latency-injecting proxy of
shared/peer-bench (s3proxy.py).

    python take_file_compare.py --lakeseek target/release/lakeseek \
        --dataset take_1000000_v2.2 --columns id,score [--target dataset|file] \
        [--delay-ms 20] [--runs 5] [--warm 20] [--out-dir DIR] [--lakeseek-option k=v]

Environment as for the peer scripts: ANCHORS_PROXY (default http://127.0.0.1:4572),
ANCHORS_MOTO, ANCHORS_TMP (where gen_data.py wrote the data).

pylance: `ds.take(indices, columns=[col])` (cold = fresh process + lance.dataset(); open and
take counted apart by the proxy; warm = same dataset object, one warm-up take, then new rows
each take). lakeseek: `lakeseek bench take` on the dataset (or, with `--target file`, on its
data file) with `--cold --seed 5000 --takes RUNS` and `--warm --warmup 1 --seed 6000
--takes WARM`, concurrency 1. Both read the same rows (splitmix64: cold run r uses seed
5000+r, warm take i seed 6000+i, the warm-up 5999). Requests/bytes/round trips for pylance
come from the proxy log; for lakeseek from its own report (IoStats), cross-checked against
the proxy's request count (printed).

With `--out-dir`, writes per column: `lakeseek_<col>_{cold,warm}.json` (the `--json`
reports) and `pylance_<col>_{cold,warm}.json` (`{"label", "latencies_ms"}`), which
`lakeseek bench take ... --plot out.svg --compare pylance_<col>_cold.json` overlays.
"""
import argparse
import json
import os
import subprocess
import sys

PEER = os.environ.get("PEER_BENCH", os.path.join(os.path.dirname(__file__), "../../../shared/peer-bench"))
sys.path.insert(0, os.path.abspath(PEER))
import common  # noqa: E402

MASK = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def random_rows(seed, n, total):
    """Same generator as lakeseek::bench::random_rows (splitmix64, seed mixed first so that
    neighbouring seeds give unrelated row sets)."""
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


def lakeseek_run(binary, url, col, n, takes, mode, seed, warmup=0, extra=()):
    options = dict(common.STORAGE_OPTIONS)
    options.update(kv.split("=", 1) for kv in extra)
    argv = [binary, "bench", "take", url, "--columns", col, "--rows-per-take", str(n),
            "--takes", str(takes), f"--{mode}", "--seed", str(seed), "--concurrency", "1",
            "--json", "--label", f"lakeseek {mode}"]
    if warmup:
        argv += ["--warmup", str(warmup)]
    for k, v in options.items():
        argv += ["--storage-option", f"{k}={v}"]
    common.proxy_reset()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    report = json.loads(res.stdout)
    proxy = common.summarize(common.proxy_stats(log=True))
    return report, proxy


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def rng(xs):
    return f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)}–{max(xs)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lakeseek", required=True, help="path of the lakeseek binary")
    ap.add_argument("--dataset", default="take_1000000_v2.2")
    ap.add_argument("--columns", default="id,score")
    ap.add_argument("--target", choices=["dataset", "file"], default="dataset")
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out-dir")
    ap.add_argument("--lakeseek-option", action="append", default=[],
                    help="extra storage option for lakeseek, e.g. coalesce_gap=65536 (repeatable)")
    a = ap.parse_args()
    common.proxy_delay(a.delay_ms)
    uri = common.s3_uri(a.dataset + ".lance")
    url = uri
    if a.target == "file":
        info = json.load(open(os.path.join(common.DATA, a.dataset + ".info.json")))
        url = f"{uri}/data/{info['files'][0]['file']}"
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)
    table = []
    for col in a.columns.split(","):
        # pylance cold: one fresh process per run; warm: one process, one warm-up take.
        cold = [pylance_run(a.python, uri, col, [random_rows(5000 + r, a.n, a.rows)]) for r in range(a.runs)]
        warm = pylance_run(a.python, uri, col, [random_rows(5999, a.n, a.rows)] +
                           [random_rows(6000 + i, a.n, a.rows) for i in range(a.warm)])["takes"][1:]
        py = {
            "cold_req": rng([c["open"]["requests"] + c["takes"][0]["requests"] for c in cold]),
            "cold_rt": rng([c["open"]["round_trips"] + c["takes"][0]["round_trips"] for c in cold]),
            "cold_kib": rng([round((c["open"]["bytes"] + c["takes"][0]["bytes"]) / 1024) for c in cold]),
            "cold_ms": round(med([c["open_ms"] + c["takes"][0]["ms"] for c in cold])),
            "warm_req": rng([w["requests"] for w in warm]),
            "warm_rt": rng([w["round_trips"] for w in warm]),
            "warm_kib": round(med([w["bytes"] for w in warm]) / 1024),
            "warm_ms": round(med([w["ms"] for w in warm])),
        }
        lk_cold, proxy_cold = lakeseek_run(a.lakeseek, url, col, a.n, a.runs, "cold", 5000,
                                               extra=a.lakeseek_option)
        lk_warm, proxy_warm = lakeseek_run(a.lakeseek, url, col, a.n, a.warm, "warm", 6000, warmup=1,
                                               extra=a.lakeseek_option)
        co, wo = lk_cold["operations"], lk_warm["operations"]
        lk = {
            "cold_req": rng([o["requests"] for o in co]),
            "cold_rt": rng([o["round_trips"] for o in co]),
            "cold_kib": rng([round(o["bytes"] / 1024) for o in co]),
            "cold_ms": round(lk_cold["latency_ms"]["p50"]),
            "warm_req": rng([o["requests"] for o in wo]),
            "warm_rt": rng([o["round_trips"] for o in wo]),
            "warm_kib": round(med([o["bytes"] for o in wo]) / 1024),
            "warm_ms": round(lk_warm["latency_ms"]["p50"]),
        }
        checks = []
        for name, rep, proxy in (("cold", lk_cold, proxy_cold), ("warm", lk_warm, proxy_warm)):
            own = rep["totals"]["requests"] + rep["setup"]["requests"]
            checks.append(f"{name}: proxy counted {proxy['requests']} requests, lakeseek's report "
                          f"{own} ({rep['totals']['requests']} measured + {rep['setup']['requests']} setup)")
        table.append((col, py, lk, checks))
        if a.out_dir:
            for name, rep in (("cold", lk_cold), ("warm", lk_warm)):
                with open(os.path.join(a.out_dir, f"lakeseek_{col}_{name}.json"), "w") as f:
                    json.dump(rep, f)
            with open(os.path.join(a.out_dir, f"pylance_{col}_cold.json"), "w") as f:
                json.dump({"label": "pylance 14.0.2 cold",
                           "latencies_ms": [c["open_ms"] + c["takes"][0]["ms"] for c in cold]}, f)
            with open(os.path.join(a.out_dir, f"pylance_{col}_warm.json"), "w") as f:
                json.dump({"label": "pylance 14.0.2 warm", "latencies_ms": [w["ms"] for w in warm]}, f)
    print(f"\n### Random take of {a.n} rows of {a.dataset} ({a.target}), {a.rows} rows, "
          f"delay {a.delay_ms} ms per request (proxy)\n")
    print("| column | reader | cold requests (open+take) | cold RT | cold KiB | cold p50 ms | "
          "warm requests | warm RT | warm KiB (median) | warm p50 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for col, py, lk, _ in table:
        for name, r in (("pylance 14.0.2", py), ("lakeseek", lk)):
            print(f"| {col} | {name} | {r['cold_req']} | {r['cold_rt']} | {r['cold_kib']} | {r['cold_ms']} | "
                  f"{r['warm_req']} | {r['warm_rt']} | {r['warm_kib']} | {r['warm_ms']} |")
    print()
    for col, _, _, checks in table:
        for c in checks:
            print(f"lakeseek {col} {c}")


if __name__ == "__main__":
    main()
