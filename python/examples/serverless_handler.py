"""A serverless (AWS Lambda style) handler: the dataset is opened once per container, each
invocation answers one key lookup from the BTree index and returns one row.

Run locally on the sample data:

    python python/examples/serverless_handler.py

On Lambda set DATASET_URL=s3://bucket/table.lance (credentials come from the function's
role through the environment) and deploy `pip install lakeseek -t package/` as a zip.
"""

import os

import lakeseek

SESSION = lakeseek.Session(budget_bytes=64 << 20)
_dataset = None


def dataset():
    global _dataset
    if _dataset is None:
        url = os.environ.get("DATASET_URL")
        if url:
            _dataset = lakeseek.Dataset(url, session=SESSION)
        else:
            _dataset = lakeseek.sample.dataset(session=SESSION)
    return _dataset


def handler(event, context=None):
    key = event["key"].replace("'", "''")
    table = dataset().query(f"key = '{key}'", columns=event.get("columns", ["key", "camera"]))
    # JSON-ready rows without pyarrow (or hand `table` to pyarrow/polars/duckdb).
    return {"rows": table.to_pylist()}


if __name__ == "__main__":
    print(handler({"key": "cam06-029417"}))
