"""Read one Lance file by row range or row list.

    python python/examples/read_file.py
"""

import lakeseek

f = lakeseek.sample.lance_file()  # or lakeseek.LanceFile("s3://bucket/path/file.lance")
print(f"{f.num_rows} rows, columns {f.schema.names}")
print(f.read_range(["key", "camera"], 0, 5))
print(f.take(["key", "detections"], [7, 2, 7]))
print("cost:", f.stats.snapshot())
