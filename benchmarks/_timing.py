"""Shared timing helpers for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import gc
import importlib.util
import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], *, repeat: int = 5, min_time: float = 0.2) -> float:
    """Best wall time of ``fn()`` in seconds over ``repeat`` rounds (after one warm-up call).

    A round repeats the call until it lasts ``min_time`` so short calls are not lost in noise.
    """
    fn()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        calls = 0
        start = time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time or calls >= 1000:
                break
        best = min(best, elapsed / calls)
    return best


def have(module: str) -> bool:
    """Whether ``module`` can be imported (reference tools are optional)."""
    return importlib.util.find_spec(module) is not None


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    """Print a plain aligned table."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n## {title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


def fmt_time(seconds: float) -> str:
    """Seconds as a short human string."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"
