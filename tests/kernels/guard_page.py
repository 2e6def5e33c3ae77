"""Bytes that end exactly where an inaccessible page begins: a scanner's over-read faults.

A memory-mapped results file whose size is a multiple of the page size may be followed by
an unmapped page or a thread's guard page (#23 item 1): a read of ``p[n]`` then kills the
process. :func:`guarded` places the bytes so that the page after the last one is
``PROT_NONE``, whatever their length, so that every read at or past the end faults here, in
the tests. :func:`patch_map_bytes` makes the readers' memory map (``io._text.map_bytes``)
such a buffer, so the whole reading route runs on it. Run anything that may fault in a child
process: a segfault then fails the test instead of killing pytest.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

PAGE = mmap.PAGESIZE
SUPPORTED = sys.platform.startswith("linux") and hasattr(mmap, "MAP_ANONYMOUS")

_PROT_NONE = 0


def _mprotect(address: int, size: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(address, size, _PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")


class Guarded:
    """``data`` copied to the end of anonymous pages followed by one ``PROT_NONE`` page.

    ``view`` is a read-only memoryview of exactly ``data``; :meth:`close` unmaps the pages
    (every view of them must have been released).
    """

    def __init__(self, data: bytes) -> None:
        pages = max(-(-len(data) // PAGE), 1)
        self._map = mmap.mmap(-1, (pages + 1) * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        start = pages * PAGE - len(data)
        self._map[start : pages * PAGE] = data
        address = np.frombuffer(self._map, dtype=np.uint8).ctypes.data  # the view is dropped
        _mprotect(address + pages * PAGE, PAGE)
        self.view = memoryview(self._map)[start : pages * PAGE].toreadonly()

    def close(self) -> None:
        self.view.release()
        self._map.close()


@contextmanager
def guarded(data: bytes) -> Iterator[memoryview]:
    """A read-only view of ``data`` whose next byte is an inaccessible page."""
    buffer = Guarded(data)
    try:
        yield buffer.view
    finally:
        buffer.close()


@contextmanager
def patch_map_bytes() -> Iterator[None]:
    """Make ``ioukit.io._text.map_bytes`` (the readers' memory map of a results file) a
    guarded copy of the file: the reader runs unchanged on a buffer with a fault after it."""
    from ioukit.io import _text

    original = _text.map_bytes
    opened: list[Guarded] = []

    def map_bytes(path: str | os.PathLike[str], **options: Any) -> memoryview | None:
        mapped = original(path, **options)
        if mapped is None:  # as the reader's: None for what it does not map
            return None
        mapped.close()
        with open(path, "rb") as handle:
            buffer = Guarded(handle.read())
        opened.append(buffer)
        return buffer.view  # ``with view:`` in the reader releases it, as it closes a map

    _text.map_bytes = map_bytes  # type: ignore[assignment]
    try:
        yield
    finally:
        _text.map_bytes = original
        for buffer in opened:
            buffer.close()  # a view still held by the reader would raise BufferError here
