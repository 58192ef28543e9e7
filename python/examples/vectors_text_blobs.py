"""Nearest neighbours from a Lance vector index, full-text search from an INVERTED index,
blobs as file objects, and takes by stable row id — on the repository's test fixtures
(written by pylance 14.0.2).

    python python/examples/vectors_text_blobs.py
"""

import hashlib
import io
from pathlib import Path

import lakeseek

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"

# k nearest rows to a vector (a list, a numpy array of any float dtype, or an Arrow array).
ds = lakeseek.Dataset(str(FIXTURES / "vector" / "datasets" / "ivf_pq_l2"))   # IVF_PQ, l2, dim 16
q = [0.5, -0.25] * 8
table = ds.nearest("vec", q, k=3, nprobes=4, refine_factor=2, columns=["id"])
print(table.to_pylist())              # [{'_rowaddr': ..., '_distance': ..., 'id': ...}, ...]
# Filtered before the search (prefilter=False: after it); `cat` has no scalar index: scan it.
table = ds.nearest("vec", q, k=3, filter="cat = 2", allow_scan=True, columns=["id", "cat"])
print(table.to_pylist())

# Full-text search with BM25 scores as pylance computes them.
docs = lakeseek.Dataset(str(FIXTURES / "fts" / "datasets" / "default"))
found = docs.search("zebra river", column="body", k=3, operator="and", columns=["id"])
print(found.to_pylist())              # [{'_rowaddr': 663, '_score': 5.698..., 'id': 663}, ...]

# Blobs: None for a null blob, else a lazy read-only file object (io.RawIOBase).
media = lakeseek.Dataset(str(FIXTURES / "blobs" / "v22"))
blobs = media.take_blobs("img", addresses=[0, 5, 6])
print(blobs[0])                       # None: a null blob
with blobs[2] as f:                   # 95006 bytes in a dedicated .blob file
    header = f.read(16)               # fetches one read-ahead range, not the whole blob
    f.seek(-100, io.SEEK_END)
    tail = f.read()
    f.seek(0)
    digest = hashlib.sha256(f.read()).hexdigest()
print(len(blobs[2]), header[:4], len(tail), digest[:16])
# Any file-object consumer works: PIL.Image.open(f), io.BufferedReader(f), torch loaders.

# Rows by stable row id, in the order asked (pylance's _take_rows).
srid = lakeseek.Dataset(str(FIXTURES / "rowids" / "srid.lance"))
print(srid.has_stable_row_ids, srid.take_row_ids([46, 5, 679], ["id", "k", "_rowid"]).to_pylist())
