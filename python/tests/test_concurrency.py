"""Coroutines on one event loop, many event loops, many threads: one shared runtime."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

import lakeseek

# 180 keys of the sample dataset (every 200th row of each fragment) and 20 that do not exist.
_SAMPLE = lakeseek.sample.dataset()
KEYS = _SAMPLE.take([(f << 32) | o for f in range(4) for o in range(0, 9000, 200)], ["key"])
KEYS = KEYS.to_pylist()
KEYS = [row["key"] for row in KEYS] + [f"missing-{i}" for i in range(20)]


@pytest.fixture(scope="module")
def ds():
    return lakeseek.sample.dataset()


@pytest.fixture(scope="module")
def expected(ds):
    """Each key's answer, computed one at a time with the blocking API."""
    return {key: ds.filter(f"key = '{key}'").to_pylist() for key in KEYS}


def test_200_concurrent_queries_on_one_event_loop(ds, expected):
    async def main():
        tasks = [ds.query_async(f"key = '{key}'", columns=["key"]) for key in KEYS]
        return await asyncio.gather(*tasks)

    results = asyncio.run(main())
    assert len(results) == len(KEYS) == 200
    found = 0
    for key, table in zip(KEYS, results):
        table = pa.table(table)
        assert table.column("_rowaddr").to_pylist() == expected[key]
        assert set(table.column("key").to_pylist()) <= {key}
        found += table.num_rows
    assert found == 180


def test_every_async_method_awaits(ds, expected):
    async def main():
        opened = await lakeseek.Dataset.open_async(
            lakeseek.sample.DATASET_URL, object_store=lakeseek.sample.store())
        rows = await opened.filter_async(f"key = '{KEYS[0]}'")
        table = await opened.take_async(rows, ["key"])
        plan = await opened.explain_async(f"key = '{KEYS[0]}'")
        report = await opened.prewarm_async(indices=["key_idx"])
        f = await lakeseek.LanceFile.open_async(
            lakeseek.sample.data_file_url(), object_store=lakeseek.sample.store())
        head = await f.read_range_async(["key"], 0, 3)
        some = await f.take_async(["key"], [2, 1])
        index = await lakeseek.EcpIndex.open_async(
            lakeseek.sample.ECP_INDEX_URL, object_store=lakeseek.sample.store())
        page = await index.search_async([0.5] * index.info["dim"], 5)
        search = index.query([0.5] * index.info["dim"])
        first = await search.next_async(5)
        return rows, table, plan, report, head, some, page, first

    rows, table, plan, report, head, some, page, first = asyncio.run(main())
    assert rows.to_pylist() == expected[KEYS[0]]
    assert table.num_rows == len(rows)
    assert isinstance(plan, dict) and report["indices"] == ["key_idx"]
    assert (head.num_rows, some.num_rows) == (3, 2)
    assert page.ids == first.ids and len(page) == 5


def test_async_errors_raise_in_the_awaiting_coroutine(ds):
    async def main():
        with pytest.raises(lakeseek.InvalidArgument):
            await ds.take_async([99 << 32], ["key"])
        with pytest.raises(lakeseek.NotFound):
            await lakeseek.Dataset.open_async("memory:///nowhere.lance")

    asyncio.run(main())


def test_many_threads_share_the_runtime(ds, expected):
    def one(key):
        return key, ds.filter(f"key = '{key}'").to_pylist()

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = dict(pool.map(one, KEYS))
    assert answers == expected


def test_event_loops_in_several_threads(ds, expected):
    errors = []

    def loop_thread(keys):
        async def main():
            got = await asyncio.gather(*(ds.filter_async(f"key = '{k}'") for k in keys))
            return [g.to_pylist() for g in got]

        try:
            answers = asyncio.run(main())
            if answers != [expected[k] for k in keys]:
                errors.append("wrong answers")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    threads = [threading.Thread(target=loop_thread, args=(KEYS[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_cancelled_coroutines_leave_the_dataset_usable(ds, expected):
    async def main():
        task = asyncio.ensure_future(ds.query_async(f"key = '{KEYS[1]}'", columns=["detections"]))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await ds.filter_async(f"key = '{KEYS[1]}'")

    assert asyncio.run(main()).to_pylist() == expected[KEYS[1]]
