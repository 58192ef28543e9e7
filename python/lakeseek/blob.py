"""``BlobFile``: one blob of a blob column as a read-only, seekable binary file object.

``Dataset.take_blobs(column, addresses)`` returns one per non-null blob. Nothing is read
until asked; each read fetches only the byte range it needs (plus a bounded read-ahead
that serves the many small reads of parsers such as ``PIL.Image.open``), on lakeseek's
runtime with the GIL released.
"""

import io
import operator

__all__ = ["BlobFile", "DEFAULT_READAHEAD"]

DEFAULT_READAHEAD = 1 << 20
"""Bytes a small read fetches ahead (at most this much is held at a time)."""


class BlobFile(io.RawIOBase):
    """A blob's bytes as an ``io.RawIOBase``: ``read(n=-1)``, ``readinto(buf)``,
    ``readall()``, ``seek(offset, whence)``, ``tell()``, ``size`` / ``len()``, ``close()``
    and ``with``. Reads past the end return ``b""``.

    A read smaller than ``readahead`` bytes fetches ``readahead`` bytes (or up to the end of
    the blob) and serves the following reads from them; a larger read fetches exactly what
    it asks for. Not thread-safe: give each thread its own ``BlobFile`` (``take_blobs``
    again, or ``BlobFile(f.handle)``).
    """

    def __init__(self, handle, readahead=DEFAULT_READAHEAD):
        """Wrap a :class:`lakeseek.BlobHandle`; ``readahead`` in bytes (0: none)."""
        super().__init__()
        if readahead < 0:
            raise ValueError("readahead must be >= 0")
        self._handle = handle
        self._size = handle.size
        self._readahead = readahead
        self._pos = 0
        self._buffer = b""
        self._buffer_start = 0

    @property
    def handle(self):
        """The :class:`lakeseek.BlobHandle` read from."""
        return self._handle

    @property
    def size(self):
        """The blob's size in bytes."""
        return self._size

    def __len__(self):
        return self._size

    def __repr__(self):
        state = "closed" if self.closed else f"at {self._pos}"
        return f"<lakeseek.BlobFile {self._size} bytes, {state}>"

    def _check_open(self):
        if self.closed:
            raise ValueError("I/O operation on closed file.")

    def readable(self):
        """True: a blob is readable."""
        self._check_open()
        return True

    def seekable(self):
        """True: any position can be read without reading what lies before it."""
        self._check_open()
        return True

    def writable(self):
        """False: blobs are read-only."""
        self._check_open()
        return False

    def tell(self):
        """The current position."""
        self._check_open()
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        """Move to ``offset`` from the start (``SEEK_SET``), the current position
        (``SEEK_CUR``) or the end (``SEEK_END``); returns the new position. Reads nothing."""
        self._check_open()
        offset = operator.index(offset)  # an int (TypeError for a float, as io.BytesIO)
        if whence == io.SEEK_SET:
            position = offset
        elif whence == io.SEEK_CUR:
            position = self._pos + offset
        elif whence == io.SEEK_END:
            position = self._size + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if position < 0:
            raise ValueError(f"negative seek position {position}")
        self._pos = position
        return position

    def read(self, size=-1):
        """Up to ``size`` bytes from the current position (all the rest if ``size`` is
        negative or None); ``b""`` at the end."""
        if size is None or size < 0:
            return self.readall()
        return self._read(size)

    def readall(self):
        """The rest of the blob, in one read."""
        self._check_open()
        return self._read(max(0, self._size - self._pos))

    def readinto(self, buffer):
        """Read into a writable buffer (``bytearray``, ``memoryview``, numpy array, ...);
        returns the number of bytes read (0 at the end)."""
        with memoryview(buffer) as view, view.cast("B") as target:
            data = self._read(len(target))
            target[: len(data)] = data
            return len(data)

    def close(self):
        """Drop the read-ahead; further reads raise ``ValueError``."""
        self._buffer = b""
        super().close()

    def _read(self, n):
        """Exactly ``min(n, remaining)`` bytes from the position, which moves past them."""
        self._check_open()
        start = self._pos
        end = min(self._size, start + max(0, n))
        if end <= start:
            return b""
        parts = []
        buffer_end = self._buffer_start + len(self._buffer)
        if self._buffer_start <= start < buffer_end:
            upto = min(end, buffer_end)
            parts.append(self._buffer[start - self._buffer_start : upto - self._buffer_start])
            start = upto
        if start < end:
            parts.append(self._fetch(start, end))
        self._pos = end
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _fetch(self, start, end):
        """Bytes ``start:end``, fetching ahead when the read is small."""
        if end - start >= self._readahead:
            return self._handle.read_range(start, end)
        ahead = min(self._size, start + self._readahead)
        self._buffer = self._handle.read_range(start, ahead)
        self._buffer_start = start
        return self._buffer[: end - start]
