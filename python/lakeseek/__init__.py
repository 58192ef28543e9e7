"""lakeseek: read Lance datasets, Lance scalar indices and ecpfs vector indices straight
from object storage (S3, GCS, Azure, HTTP, local disk, memory) with the fewest requests and
bytes the formats allow.

Results are Arrow data exported through the Arrow PyCapsule interface, so they go straight
into ``pyarrow.table(t)``, ``polars.DataFrame(t)`` or ``duckdb.sql("FROM t")`` without
lakeseek depending on any of them.

Every blocking method releases the GIL while it waits; every ``*_async`` method returns an
awaitable for asyncio. Both run on one shared tokio runtime, safe from many threads and
event loops.

>>> import lakeseek
>>> ds = lakeseek.sample.dataset()
>>> rows = ds.filter("key = 'cam06-029417'")
>>> rows.to_pylist()
[8589944009]
>>> ds.take(rows, ["key", "camera"]).num_rows
1

``Dataset.nearest`` (k nearest rows from a Lance vector index), ``Dataset.search``
(full-text BM25 search from an INVERTED index), ``Dataset.take_blobs`` (blobs as lazy
``BlobFile`` file objects) and ``Dataset.take_row_ids`` (rows by stable row id) answer as
pylance does; see the README.
"""

import atexit

from . import _lakeseek
from ._lakeseek import (
    DEFAULT_SESSION_BUDGET,
    BlobHandle,
    CommitConflict,
    Corrupt,
    Dataset,
    EcpIndex,
    EcpSearch,
    InvalidArgument,
    IoStats,
    LakeseekError,
    LanceFile,
    NotFound,
    ObjectChanged,
    ObjectStore,
    RowAddresses,
    Schema,
    SearchResult,
    Session,
    StoreError,
    Table,
    Unsupported,
    __version__,
)
from . import sample
from .blob import BlobFile

__all__ = [
    "DEFAULT_SESSION_BUDGET",
    "BlobFile",
    "BlobHandle",
    "CommitConflict",
    "Corrupt",
    "Dataset",
    "EcpIndex",
    "EcpSearch",
    "InvalidArgument",
    "IoStats",
    "LakeseekError",
    "LanceFile",
    "NotFound",
    "ObjectChanged",
    "ObjectStore",
    "RowAddresses",
    "Schema",
    "SearchResult",
    "Session",
    "StoreError",
    "Table",
    "Unsupported",
    "__version__",
    "sample",
]

# Interpreter shutdown must not race a runtime thread that is handing a result to asyncio.
atexit.register(_lakeseek.wait_for_tasks)

del _lakeseek
