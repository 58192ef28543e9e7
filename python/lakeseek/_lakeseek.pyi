"""Type stubs of the native module (re-exported by ``lakeseek``)."""

from collections.abc import Awaitable, Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Optional, Protocol, Union, final

from .blob import BlobFile

__version__: str
DEFAULT_SESSION_BUDGET: int
SAMPLE_DATASET_URL: str
SAMPLE_ECP_INDEX_URL: str

class ArrowArrayExportable(Protocol):
    """Anything with ``__arrow_c_array__`` (pyarrow, arro3, nanoarrow arrays, ...)."""

    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> tuple[object, object]: ...

class NDArrayLike(Protocol):
    """A one-dimensional numpy array (any float or integer dtype)."""

    @property
    def ndim(self) -> int: ...
    @property
    def dtype(self) -> Any: ...
    def tolist(self) -> Any: ...

Vector = Union[Sequence[float], NDArrayLike, ArrowArrayExportable]
"""A query vector: floats, a 1-D numpy array of any float dtype, or an Arrow float array."""

Addresses = Union["RowAddresses", Sequence[int], ArrowArrayExportable]
"""Row addresses or row numbers: ints, a :class:`RowAddresses`, or an Arrow integer array."""

StorageOptions = Mapping[str, Union[str, bool, int]]
"""object_store builder keys (``aws_endpoint``, ``aws_region``, ``allow_http``, ...) and
lakeseek I/O options (``coalesce_gap``, ...); values are passed as strings."""

class LakeseekError(Exception):
    """Base class of every lakeseek error. ``path``: the object path or logical name (or
    None); ``range``: the byte range ``(start, end)`` being read or decoded (or None)."""

    path: Optional[str]
    range: Optional[tuple[int, int]]

class NotFound(LakeseekError):
    """The object, dataset, column, index or node does not exist."""

class InvalidArgument(LakeseekError):
    """The caller passed something invalid (a bad row address, URL, filter, ...)."""

class Corrupt(LakeseekError):
    """Bytes read from storage violate the format."""

class Unsupported(LakeseekError):
    """Valid input that uses a feature lakeseek does not implement."""

class StoreError(LakeseekError):
    """The object store failed (after its retries)."""

class ObjectChanged(LakeseekError):
    """An object was replaced while it was being read: reopen."""

class CommitConflict(LakeseekError):
    """A commit lost to a concurrent writer."""

@final
class Session:
    """Caches shared by every dataset, file and index opened with it, within one byte
    budget; optionally a disk tier (``cache_dir``, at most ``cache_bytes``) shared by
    processes. Create one per process and pass it to every open."""

    def __init__(
        self,
        budget_bytes: Optional[int] = None,
        cache_dir: Union[str, PathLike[str], None] = None,
        cache_bytes: Optional[int] = None,
    ) -> None: ...
    @property
    def budget_bytes(self) -> int: ...
    @property
    def cache_dir(self) -> Optional[Path]: ...

@final
class IoStats:
    """Counters of what reads cost; shared by every handle given it."""

    def __init__(self) -> None: ...
    @property
    def requests(self) -> int:
        """Requests sent to the object store."""
    @property
    def bytes(self) -> int:
        """Bytes received."""
    @property
    def round_trips(self) -> int:
        """Sequential waves of requests."""
    def snapshot(self) -> dict[str, int]:
        """``requests``, ``bytes``, ``round_trips``, ``retries``, ``hedges``, ``disk_hits``,
        ``disk_bytes``."""

@final
class ObjectStore:
    """A ready-made object store (e.g. ``lakeseek.sample.store()``)."""

@final
class Schema:
    """An Arrow schema (``__arrow_c_schema__``)."""

    @property
    def names(self) -> list[str]: ...
    def types(self) -> list[tuple[str, str]]: ...
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self) -> object: ...

@final
class Table:
    """Arrow record batches of one schema (``__arrow_c_stream__``): pass it to
    ``pyarrow.table``, ``polars.DataFrame``, ``duckdb.sql("FROM t")``, arro3."""

    @property
    def num_rows(self) -> int: ...
    @property
    def num_columns(self) -> int: ...
    @property
    def column_names(self) -> list[str]: ...
    @property
    def schema(self) -> Schema: ...
    def __len__(self) -> int: ...
    def to_json(self) -> str:
        """The rows as a JSON array of objects (nulls explicit, timestamps ISO 8601)."""
    def to_pylist(self) -> list[dict[str, Any]]:
        """The rows as dicts of JSON-compatible values; no pyarrow needed."""
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

@final
class RowAddresses(Sequence[int]):
    """Row addresses (``fragment << 32 | offset``): an Arrow ``uint64`` array
    (``__arrow_c_array__``) and a read-only sequence of ints."""

    def to_pylist(self) -> list[int]: ...
    def fragment_ids(self) -> list[int]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> int: ...  # type: ignore[override]
    def __iter__(self) -> Iterator[int]: ...
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> tuple[object, object]: ...

@final
class Dataset:
    """A Lance dataset at one version, opened from ``s3://``, ``gs://``, ``az://``,
    ``https://``, a local path or ``memory://`` (with ``object_store=``)."""

    def __init__(
        self,
        url: str,
        storage_options: Optional[StorageOptions] = None,
        version: Optional[int] = None,
        session: Optional[Session] = None,
        stats: Optional[IoStats] = None,
        object_store: Optional[ObjectStore] = None,
    ) -> None: ...
    @staticmethod
    def open_async(
        url: str,
        storage_options: Optional[StorageOptions] = None,
        version: Optional[int] = None,
        session: Optional[Session] = None,
        stats: Optional[IoStats] = None,
        object_store: Optional[ObjectStore] = None,
    ) -> Awaitable[Dataset]: ...
    @property
    def version(self) -> int: ...
    @property
    def url(self) -> str: ...
    @property
    def schema(self) -> Schema: ...
    @property
    def column_names(self) -> list[str]: ...
    @property
    def session(self) -> Session: ...
    @property
    def stats(self) -> IoStats: ...
    def index_names(self) -> list[str]: ...
    def fragments(self) -> list[dict[str, Optional[int]]]: ...
    def with_stats(self, stats: IoStats) -> Dataset: ...
    def filter(self, filter: str) -> RowAddresses:
        """Row addresses (ascending) where the SQL ``filter`` is TRUE, answered from the
        indices (``=``, ``IN``, ranges, ``IS NULL``, ``any_element(list, '...')``,
        ``contains(col, 'x')`` / ``col LIKE 'p%'`` / ``starts_with(col, 'x')`` from an NGRAM
        index, ...). A
        filter no index answers raises :class:`InvalidArgument`: use ``query(...,
        allow_scan=True)``."""
    def filter_async(self, filter: str) -> Awaitable[RowAddresses]: ...
    def take(self, addresses: Addresses, columns: Sequence[str]) -> Table:
        """The ``columns`` of the rows at ``addresses``, in the order given, repeats kept,
        deleted rows left out; ``_rowaddr`` first."""
    def take_async(self, addresses: Addresses, columns: Sequence[str]) -> Awaitable[Table]: ...
    def query(
        self, filter: str, columns: Optional[Sequence[str]] = None, allow_scan: bool = False
    ) -> Table:
        """Filter, then read ``columns`` of the matching rows (``_rowaddr`` first; only
        ``_rowaddr`` without columns)."""
    def query_async(
        self, filter: str, columns: Optional[Sequence[str]] = None, allow_scan: bool = False
    ) -> Awaitable[Table]: ...
    def explain(self, filter: str, allow_scan: bool = False) -> dict[str, Any]:
        """The plan: which index answers each part, the pages and byte ranges it will read."""
    def explain_async(self, filter: str, allow_scan: bool = False) -> Awaitable[dict[str, Any]]: ...
    def prewarm(
        self,
        indices: Optional[Sequence[str]] = None,
        columns: Optional[Sequence[str]] = None,
        all_index_pages: bool = False,
    ) -> dict[str, Any]:
        """Load index lookups (and optionally every index page and column page inits) into
        the session's caches. Returns ``indices``, ``segments``, ``index_pages``,
        ``column_pages``, ``stats``, ``millis``."""
    def prewarm_async(
        self,
        indices: Optional[Sequence[str]] = None,
        columns: Optional[Sequence[str]] = None,
        all_index_pages: bool = False,
    ) -> Awaitable[dict[str, Any]]: ...
    def nearest(
        self,
        column: str,
        q: Vector,
        k: int = 10,
        nprobes: Optional[int] = None,
        minimum_nprobes: Optional[int] = None,
        maximum_nprobes: Optional[int] = None,
        refine_factor: Optional[int] = None,
        filter: Optional[str] = None,
        prefilter: bool = True,
        columns: Optional[Sequence[str]] = None,
        ef: Optional[int] = None,
        fast_search: bool = False,
        use_index: bool = True,
        allow_scan: bool = False,
        distance_range: Optional[Sequence[Optional[float]]] = None,
        metric: Optional[str] = None,
    ) -> Table:
        """The ``k`` rows of vector column ``column`` nearest to ``q``, found through its
        Lance vector index (IVF_FLAT, IVF_PQ, IVF_SQ) with pylance's semantics and names:
        ``_rowaddr``, ``_distance`` (float32), then ``columns``, nearest first.

        ``nprobes`` partitions probed per index segment (default: at least 20; or
        ``minimum_nprobes`` / ``maximum_nprobes``); ``refine_factor`` re-ranks
        ``k * refine_factor`` candidates with exact distances; ``filter`` (any SQL filter
        ``query`` takes) is applied before the search unless ``prefilter=False`` (note:
        pylance's default is a postfilter, lakeseek's a prefilter); ``fast_search``
        searches only what the index covers; ``use_index=False`` (with ``allow_scan``)
        searches every vector exactly with ``metric`` (``l2``, ``cosine``, ``dot``);
        ``distance_range=(lower, upper)`` keeps ``lower <= _distance < upper``; ``ef`` is
        HNSW's (HNSW indices are not searched yet). A wrong dimension, NaN, ``k=0`` or a
        column without a vector index raises :class:`InvalidArgument`; an index kind not
        searched, :class:`Unsupported`."""
    def nearest_async(
        self,
        column: str,
        q: Vector,
        k: int = 10,
        nprobes: Optional[int] = None,
        minimum_nprobes: Optional[int] = None,
        maximum_nprobes: Optional[int] = None,
        refine_factor: Optional[int] = None,
        filter: Optional[str] = None,
        prefilter: bool = True,
        columns: Optional[Sequence[str]] = None,
        ef: Optional[int] = None,
        fast_search: bool = False,
        use_index: bool = True,
        allow_scan: bool = False,
        distance_range: Optional[Sequence[Optional[float]]] = None,
        metric: Optional[str] = None,
    ) -> Awaitable[Table]: ...
    def explain_nearest(
        self,
        column: str,
        q: Vector,
        k: int = 10,
        nprobes: Optional[int] = None,
        minimum_nprobes: Optional[int] = None,
        maximum_nprobes: Optional[int] = None,
        refine_factor: Optional[int] = None,
        filter: Optional[str] = None,
        prefilter: bool = True,
        columns: Optional[Sequence[str]] = None,
        ef: Optional[int] = None,
        fast_search: bool = False,
        use_index: bool = True,
        allow_scan: bool = False,
        distance_range: Optional[Sequence[Optional[float]]] = None,
        metric: Optional[str] = None,
    ) -> dict[str, Any]:
        """Run the nearest query with these arguments and report how it ran: the index, its
        type and metric, segments, partitions probed (and served from the cache), rows
        scored, fragments searched exactly, candidates refined, the filter's plan."""
    def search(
        self,
        text: str,
        column: Optional[str] = None,
        k: Optional[int] = None,
        operator: str = "or",
        filter: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        allow_scan: bool = False,
        index_only: bool = False,
    ) -> Table:
        """Full-text search of ``column`` (it needs an INVERTED index; required) for
        ``text``, tokenized and BM25-scored as pylance 14.0.2 does: ``_rowaddr``,
        ``_score`` (float32), then ``columns``, best first. ``operator``: ``"or"`` (any
        token) or ``"and"`` (every token); ``k`` best rows (all matches by default);
        ``filter``: only rows where it is TRUE (the best ``k`` of them; ``allow_scan`` lets
        it scan); ``index_only``: skip fragments appended after the index was built (by
        default they are read and scored, as pylance does)."""
    def search_async(
        self,
        text: str,
        column: Optional[str] = None,
        k: Optional[int] = None,
        operator: str = "or",
        filter: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        allow_scan: bool = False,
        index_only: bool = False,
    ) -> Awaitable[Table]: ...
    def take_blobs(self, column: str, addresses: Addresses) -> list[Optional[BlobFile]]:
        """The blobs of blob column ``column`` at ``addresses``, in order: ``None`` for a
        null blob, else a :class:`lakeseek.BlobFile` (an ``io.RawIOBase``) that reads its
        bytes on demand. Only the descriptors are read here. Blob v1 (2.0/2.1 files) and v2
        (2.2: inline, packed and dedicated blobs). A deleted address raises
        :class:`InvalidArgument`, as pylance's ``take_blobs(addresses=...)``."""
    def take_blobs_async(
        self, column: str, addresses: Addresses
    ) -> Awaitable[list[Optional[BlobFile]]]: ...
    def take_row_ids(self, ids: Addresses, columns: Sequence[str]) -> Table:
        """The ``columns`` of the rows whose stable row id (``_rowid``) is in ``ids``, in
        the order asked, repeats kept, like pylance's ``_take_rows``: an id whose row is
        deleted is left out, an id never assigned raises :class:`InvalidArgument`.
        ``_rowaddr`` first; ask for ``_rowid`` to get the ids. Without stable row ids, a
        row id is the row address."""
    def take_row_ids_async(self, ids: Addresses, columns: Sequence[str]) -> Awaitable[Table]: ...
    @property
    def has_stable_row_ids(self) -> bool:
        """Whether the dataset has stable row ids."""

@final
class BlobHandle:
    """One blob of a blob column: its size and where it is; bytes read on demand (the GIL
    released). :class:`lakeseek.BlobFile` wraps it as a file object."""

    @property
    def size(self) -> int: ...
    @property
    def object_path(self) -> str:
        """The object holding the blob (a data file or a ``.blob`` file)."""
    @property
    def object_range(self) -> tuple[int, int]:
        """The blob's byte range in its object."""
    def read_range(self, start: int, end: int) -> bytes:
        """Bytes ``start:end`` of the blob (:class:`InvalidArgument` past its end)."""
    def read_range_async(self, start: int, end: int) -> Awaitable[bytes]: ...
    def read_all(self) -> bytes: ...
    def read_all_async(self) -> Awaitable[bytes]: ...
    def __len__(self) -> int: ...

@final
class LanceFile:
    """One Lance file (2.1, 2.2, 2.3)."""

    def __init__(
        self,
        url: str,
        storage_options: Optional[StorageOptions] = None,
        session: Optional[Session] = None,
        stats: Optional[IoStats] = None,
        object_store: Optional[ObjectStore] = None,
        size: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def open_async(
        url: str,
        storage_options: Optional[StorageOptions] = None,
        session: Optional[Session] = None,
        stats: Optional[IoStats] = None,
        object_store: Optional[ObjectStore] = None,
        size: Optional[int] = None,
    ) -> Awaitable[LanceFile]: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def schema(self) -> Schema: ...
    @property
    def stats(self) -> IoStats: ...
    def read_range(self, columns: Sequence[str], start: int, stop: int) -> Table:
        """Rows ``start:stop`` of the named top-level columns."""
    def read_range_async(self, columns: Sequence[str], start: int, stop: int) -> Awaitable[Table]: ...
    def take(self, columns: Sequence[str], rows: Addresses) -> Table:
        """The rows ``rows`` (any order, repeats kept) of the named columns."""
    def take_async(self, columns: Sequence[str], rows: Addresses) -> Awaitable[Table]: ...

@final
class SearchResult:
    """One page of k-NN results, best first (``__arrow_c_stream__``: ``id``, ``score``)."""

    @property
    def ids(self) -> list[int]: ...
    @property
    def scores(self) -> list[float]:
        """Lower is better (L2 distance, or -dot for IP)."""
    def to_table(self) -> Table: ...
    def __len__(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

@final
class EcpSearch:
    """An open search: each ``next(k)`` continues where the last page stopped."""

    def next(self, k: int) -> SearchResult: ...
    def next_async(self, k: int) -> Awaitable[SearchResult]: ...


@final
class EcpIndex:
    """An ecpfs vector index."""

    def __init__(
        self,
        url: str,
        storage_options: Optional[StorageOptions] = None,
        session: Optional[Session] = None,
        object_store: Optional[ObjectStore] = None,
        node_cache_bytes: Optional[int] = None,
        prefetch: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def open_async(
        url: str,
        storage_options: Optional[StorageOptions] = None,
        session: Optional[Session] = None,
        object_store: Optional[ObjectStore] = None,
        node_cache_bytes: Optional[int] = None,
        prefetch: Optional[int] = None,
    ) -> Awaitable[EcpIndex]: ...
    @property
    def info(self) -> dict[str, Any]: ...
    def stats(self) -> dict[str, int]: ...
    def search(
        self,
        vector: Vector,
        k: int,
        exclude: Optional[Addresses] = None,
        search_exp: Optional[int] = None,
        max_increments: Optional[int] = None,
    ) -> SearchResult: ...
    def search_async(
        self,
        vector: Vector,
        k: int,
        exclude: Optional[Addresses] = None,
        search_exp: Optional[int] = None,
        max_increments: Optional[int] = None,
    ) -> Awaitable[SearchResult]: ...
    def query(
        self,
        vector: Vector,
        exclude: Optional[Addresses] = None,
        search_exp: Optional[int] = None,
        max_increments: Optional[int] = None,
    ) -> EcpSearch: ...

def wait_for_tasks(timeout: float = 5.0) -> int:
    """Wait until no coroutine's work is still running (registered with atexit)."""
def sample_store() -> ObjectStore: ...
def sample_data_file_url() -> str: ...
