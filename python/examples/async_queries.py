"""Many concurrent lookups from one asyncio event loop (one shared tokio runtime).

    python python/examples/async_queries.py
"""

import asyncio

import lakeseek


async def main():
    ds = await lakeseek.Dataset.open_async(
        lakeseek.sample.DATASET_URL, object_store=lakeseek.sample.store())
    keys = [f"cam{c:02d}-{n:06d}" for c in range(0, 8, 2) for n in range(1, 51)]
    tables = await asyncio.gather(
        *(ds.query_async(f"key = '{k}'", columns=["key", "camera"]) for k in keys))
    print(f"{len(tables)} queries, {sum(t.num_rows for t in tables)} rows found")


asyncio.run(main())
