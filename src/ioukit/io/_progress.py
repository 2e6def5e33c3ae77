"""Optional progress bars for long reads (tqdm or rich if installed), off unless enabled.

The library never prints: bars appear only inside :func:`enabled_progress`, which the command
line enters when standard error is a terminal and ``--quiet`` is not given.

Examples
--------
>>> list(track(range(3), total=3, description="reading"))
[0, 1, 2]
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
from collections.abc import Iterable, Iterator
from typing import TypeVar, cast

__all__ = ["enabled_progress", "track"]

T = TypeVar("T")

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("ioukit_progress", default=False)
_MIN_ITEMS = 200


@contextlib.contextmanager
def enabled_progress(enabled: bool = True) -> Iterator[None]:
    """Show progress bars for the reads inside this block (if tqdm or rich is installed)."""
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def track(items: Iterable[T], *, total: int, description: str) -> Iterable[T]:
    """``items``, wrapped in a progress bar when enabled and worth showing."""
    if not _ENABLED.get() or total < _MIN_ITEMS:
        return items
    if importlib.util.find_spec("tqdm") is not None:
        from tqdm import tqdm

        return cast(
            Iterable[T], tqdm(items, total=total, desc=description, leave=False, unit="file")
        )
    if importlib.util.find_spec("rich") is not None:
        from rich.progress import track as rich_track

        return cast(
            Iterable[T], rich_track(items, total=total, description=description, transient=True)
        )
    return items
