"""`Dataset.take_blobs` (file objects over the blobs of a blob column) and
`Dataset.take_row_ids` answer as pylance 14.0.2 did: tests/fixtures/blobs/answers.json
(sizes and sha256 of every blob and of one range of each, for the 2.2 blob v2 dataset with
inline, packed and dedicated blobs and the 2.1 / 2.0 blob v1 ones) and
tests/fixtures/rowids/answers.json (`_take_rows` on a stable-row-id dataset before and
after a compaction). Pillow decodes images straight from the file objects as it does from
pylance's (tests/fixtures/blobs/images.json)."""

import asyncio
import hashlib
import io
import threading

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

import lakeseek
from conftest import FIXTURES, load_json

BLOBS = FIXTURES / "blobs"
BLOB_ANSWERS = load_json(BLOBS / "answers.json")["datasets"]
ROWIDS = FIXTURES / "rowids"
ROWID_ANSWERS = load_json(ROWIDS / "answers.json")


def sha(data):
    return hashlib.sha256(data).hexdigest()


def rows_of(name):
    return BLOB_ANSWERS[name]["rows"]


def read_by_readinto(f, chunk):
    """The whole blob through `readinto` with a buffer of `chunk` bytes."""
    out, buffer = bytearray(), bytearray(chunk)
    while True:
        n = f.readinto(buffer)
        if n == 0:
            return bytes(out)
        out += buffer[:n]


@pytest.mark.parametrize("name", sorted(BLOB_ANSWERS))
def test_blobs_read_as_pylance_wrote_them(name):
    dataset = lakeseek.Dataset(str(BLOBS / name))
    rows = rows_of(name)
    files = dataset.take_blobs("img", [r["address"] for r in rows])
    assert len(files) == len(rows)
    non_null = 0
    for row, f in zip(rows, files):
        want = row["blob"]
        if want is None:
            assert f is None, row["address"]
            continue
        non_null += 1
        assert isinstance(f, io.RawIOBase) and isinstance(f, lakeseek.BlobFile)
        assert f.readable() and f.seekable() and not f.writable()
        assert f.size == len(f) == want["size"]
        assert sha(f.read()) == want["sha256"], row["address"]
        assert f.read() == b"" and f.tell() == want["size"]
        # A range through seek + read.
        start, end = want["range"]
        assert f.seek(start) == start
        assert sha(f.read(end - start)) == want["range_sha256"]
        # From the end, relative, and readinto with small buffers.
        f.seek(0)
        assert sha(read_by_readinto(f, 997)) == want["sha256"]
        f.seek(-(end - start) - (want["size"] - end), io.SEEK_END)
        assert f.tell() == start
        f.seek(0, io.SEEK_SET)
        f.seek(start, io.SEEK_CUR)
        assert sha(f.read(end - start)) == want["range_sha256"]
        assert sha(f.handle.read_range(start, end)) == want["range_sha256"]
        assert sha(f.handle.read_all()) == want["sha256"]
        f.close()
        assert f.closed
        with pytest.raises(ValueError):
            f.read()
    assert non_null >= 18


def test_pillow_decodes_images_from_blob_files_as_from_pylances():
    answers = load_json(BLOBS / "images.json")["rows"]
    dataset = lakeseek.Dataset(str(BLOBS / "images"))
    files = dataset.take_blobs("img", [r["address"] for r in answers])
    decoded = 0
    for want, f in zip(answers, files):
        if want["image"] is None:
            assert f is None, want["address"]
            continue
        # Pillow seeks and reads the file object itself (format sniffing, then the decoder).
        with Image.open(f) as img:
            img.load()
            got = {
                "format": img.format,
                "mode": img.mode,
                "size": list(img.size),
                "pixels_sha256": sha(img.tobytes()),
            }
        assert got == want["image"], want["address"]
        decoded += 1
    assert decoded == 5


def test_blob_files_read_whole_blobs_in_few_requests():
    """Many small reads are served from one read-ahead; a whole read is one range."""
    stats = lakeseek.IoStats()
    dataset = lakeseek.Dataset(str(BLOBS / "v22"), stats=stats)
    row = max((r for r in rows_of("v22") if r["blob"]), key=lambda r: r["blob"]["size"])
    (f,) = dataset.take_blobs("img", [row["address"]])
    size = row["blob"]["size"]
    before = stats.snapshot()
    parts = []
    with f:
        while True:
            part = f.read(100)
            if not part:
                break
            parts.append(part)
    after = stats.snapshot()
    assert sha(b"".join(parts)) == row["blob"]["sha256"]
    assert len(parts) == -(-size // 100)
    # Under 1 MiB: one read-ahead request of about the blob's bytes.
    assert after["requests"] - before["requests"] == 1
    assert size <= after["bytes"] - before["bytes"] <= size + 4096
    # No read-ahead: each read fetches exactly what it asks.
    g = lakeseek.BlobFile(f.handle, readahead=0)
    before = stats.snapshot()
    assert len(g.read(10)) == 10 and len(g.read(10)) == 10
    assert stats.snapshot()["requests"] - before["requests"] == 2


def test_blob_files_work_as_binary_files():
    rows = [r for r in rows_of("v22") if r["blob"] and r["blob"]["size"] > 1000]
    dataset = lakeseek.Dataset(str(BLOBS / "v22"))
    files = dataset.take_blobs("img", [r["address"] for r in rows])
    for row, f in zip(rows, files):
        # Buffered reader / TextIOWrapper-style consumers only need RawIOBase.
        buffered = io.BufferedReader(f, buffer_size=4096)
        assert sha(buffered.read()) == row["blob"]["sha256"]
        f.seek(0)
        # readinto a numpy array (a non-byte buffer format).
        array = np.zeros(row["blob"]["size"] // 4, dtype=np.uint32)
        n = f.readinto(array)
        assert n == array.nbytes
        f.seek(0)
        assert array.tobytes() == f.read(n)


def test_blob_reads_from_threads_and_asyncio():
    rows = [r for r in rows_of("v21") if r["blob"]]
    dataset = lakeseek.Dataset(str(BLOBS / "v21"))
    results = {}

    def worker(i, row):
        (f,) = dataset.take_blobs("img", [row["address"]])
        results[i] = sha(f.read())

    threads = [threading.Thread(target=worker, args=(i, r)) for i, r in enumerate(rows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i] for i in range(len(rows))] == [r["blob"]["sha256"] for r in rows]

    async def main():
        files = await dataset.take_blobs_async("img", [r["address"] for r in rows])
        return [await f.handle.read_all_async() for f in files]

    assert [sha(b) for b in asyncio.run(main())] == [r["blob"]["sha256"] for r in rows]


def test_bad_blob_takes_raise():
    dataset = lakeseek.Dataset(str(BLOBS / "v22"))
    deleted = BLOB_ANSWERS["v22"]["deleted"]
    with pytest.raises(lakeseek.InvalidArgument):
        dataset.take_blobs("img", deleted[:1])
    with pytest.raises(lakeseek.LakeseekError):
        dataset.take_blobs("id", [0])
    with pytest.raises(lakeseek.LakeseekError):
        dataset.take_blobs("no_such_column", [0])
    with pytest.raises(TypeError):
        dataset.take_blobs("img", ["a"])
    row = next(r for r in rows_of("v22") if r["blob"] and r["blob"]["size"] > 10)
    (f,) = dataset.take_blobs("img", [row["address"]])
    with pytest.raises(lakeseek.InvalidArgument):
        f.handle.read_range(0, row["blob"]["size"] + 1)
    with pytest.raises(ValueError):
        f.seek(-1)
    with pytest.raises(ValueError):
        f.seek(0, 7)
    with pytest.raises(TypeError):
        f.seek(1.5)
    f.seek(row["blob"]["size"] + 100)
    assert f.read(10) == b"" and f.read() == b""


def _id_k(table):
    return [[i, k] for i, k in zip(table.column("id").to_pylist(), table.column("k").to_pylist())]


@pytest.mark.parametrize("name", sorted(ROWID_ANSWERS))
def test_take_row_ids_matches_pylance(name):
    doc = ROWID_ANSWERS[name]
    checked = 0
    for label, version in doc["versions"].items():
        dataset = lakeseek.Dataset(str(ROWIDS / f"{name}.lance"), version=version)
        assert dataset.has_stable_row_ids
        for take in doc["takes"][label]:
            ids = take["ids"]
            if not take["rows"] and len(ids) == 1 and ids[0] > 10_000:
                # An id the version never assigned: pylance returned nothing, lakeseek refuses.
                with pytest.raises(lakeseek.InvalidArgument, match="never assigned"):
                    dataset.take_row_ids(ids, ["id", "k"])
                continue
            table = pa.table(dataset.take_row_ids(ids, ["id", "k", "_rowid"]))
            assert _id_k(table) == take["rows"], f"{name} {label} {ids}"
            live = table.column("_rowid").to_pylist()
            assert live == [i for i in ids if i in set(live)]
            checked += 1
    assert checked >= 8


def test_take_row_ids_async_and_arrow_ids():
    doc = ROWID_ANSWERS["srid"]
    take = doc["takes"]["latest"][1]
    dataset = lakeseek.Dataset(str(ROWIDS / "srid.lance"), version=doc["versions"]["latest"])

    async def main():
        return await dataset.take_row_ids_async(pa.array(take["ids"], pa.uint64()), ["id", "k"])

    assert _id_k(pa.table(asyncio.run(main()))) == take["rows"]
