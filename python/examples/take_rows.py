"""Random take of a 2.3 sparse nested column by row address; a warm repeat is cheap.

    python python/examples/take_rows.py
"""

import lakeseek

ds = lakeseek.sample.dataset()
rows = [130, 3056, 5072, (1 << 32) | 17, 130]  # any order, repeats kept

cold = lakeseek.IoStats()
table = ds.with_stats(cold).take(rows, ["key", "detections"])
warm = lakeseek.IoStats()
ds.with_stats(warm).take(rows, ["key", "detections"])

print(table)
print(f"cold: {cold.requests} requests, {cold.bytes} bytes; "
      f"warm: {warm.requests} requests, {warm.bytes} bytes")

try:
    import pyarrow as pa  # optional: lakeseek does not need it

    print(pa.table(table).to_pylist()[0])
except ImportError:
    pass
