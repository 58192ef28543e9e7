#!/usr/bin/env python3
"""Issue 34 benchmark data (pylance 14.0.2; not committed, ~300 MB): 1,000,000 short documents
(`body`: 4-16 words drawn Zipf(1) from 30,000 synthetic words) and a `name` column
("First Last" from 300 x 3,000 synthetic names), `id` int64; one fragment. Two copies:

    OUT/fts_1000000.lance       INVERTED on body (pylance's defaults) + NGRAM on name
    OUT/fts_1000000_pos.lance   INVERTED on body with positions (with_position=True)
    OUT/fts_1000000.queries.json  the benchmark's queries: rare term, common term, 3-term OR,
                                  2-term AND, a phrase (two adjacent words of one document),
                                  a `contains(name, '...')` filter

    /work/venvs/pylance-14.0.2/bin/python benches/peer/gen_fts_bench.py OUT [--rows N]
"""
import argparse
import json
import os
import shutil
import time

import lance
import numpy as np
import pyarrow as pa

CONS = "bdfgklmnprtvz"
VOWELS = "aeiou"


def words(rng, n, lo, hi):
    out, seen = [], set()
    while len(out) < n:
        k = int(rng.integers(lo, hi + 1))
        w = "".join(CONS[rng.integers(len(CONS))] + VOWELS[rng.integers(len(VOWELS))]
                    for _ in range(k))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=1_000_000)
    a = ap.parse_args()
    n = a.rows
    rng = np.random.default_rng(34)
    vocab = words(rng, 30_000, 2, 4)
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    lengths = rng.integers(4, 17, n)
    tokens = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    body = [" ".join(vocab[t] for t in tokens[s:e]) for s, e in zip(starts, ends)]
    firsts = [w.capitalize() for w in words(np.random.default_rng(341), 300, 2, 3)]
    lasts = [w.capitalize() for w in words(np.random.default_rng(342), 3_000, 3, 4)]
    name = [f"{firsts[f]} {lasts[l]}" for f, l in
            zip(rng.integers(0, len(firsts), n), rng.integers(0, len(lasts), n))]
    phrase_doc = body[123_457].split()
    queries = {
        "rare": vocab[25_000],
        "common": vocab[3],
        "or3": f"{vocab[100]} {vocab[500]} {vocab[2000]}",
        "and2": f"{vocab[20]} {vocab[50]}",
        "phrase": f"{phrase_doc[1]} {phrase_doc[2]}",
        "contains": f"contains(name, '{lasts[1234][1:5].lower()}')",
    }
    base = os.path.join(a.out, f"fts_{n}")
    with open(base + ".queries.json", "w") as f:
        json.dump(queries, f, indent=1)
    table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                      "body": pa.array(body, pa.string()),
                      "name": pa.array(name, pa.string())})
    plain, pos = base + ".lance", base + "_pos.lance"
    for d in (plain, pos):
        shutil.rmtree(d, ignore_errors=True)
    lance.write_dataset(table, plain)
    shutil.copytree(plain, pos)
    for d, col, kind, kw in ((plain, "body", "INVERTED", {}), (plain, "name", "NGRAM", {}),
                             (pos, "body", "INVERTED", {"with_position": True})):
        t = time.time()
        lance.dataset(d).create_scalar_index(col, kind, **kw)
        print(f"{os.path.basename(d)} {col} {kind} {kw} {time.time() - t:.1f} s", flush=True)
    print(json.dumps(queries, indent=1))


if __name__ == "__main__":
    main()
