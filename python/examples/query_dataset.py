"""Answer a SQL filter from the dataset's indices, read the matching rows, print the plan.

    python python/examples/query_dataset.py
"""

import json

import lakeseek

session = lakeseek.Session()  # one per process: every dataset shares its caches
stats = lakeseek.IoStats()
ds = lakeseek.sample.dataset(session=session, stats=stats)  # or lakeseek.Dataset("s3://...")

rows = ds.filter("key = 'cam06-029417'")  # from the BTree index
print("row addresses:", rows.to_pylist())

cars = ds.filter("any_element(detections, 'label = ''car'' AND confidence > 0.9')")
print("frames with a confident car:", len(cars))

table = ds.query("key >= 'cam03' AND key < 'cam03-000005'", columns=["key", "camera"])
print(table)  # Arrow data: pyarrow.table(table), polars.DataFrame(table), duckdb...

print(json.dumps(ds.explain("key IN ('cam00-000001', 'cam06-029417')"), indent=1)[:600])
print("cost so far:", stats.snapshot())
