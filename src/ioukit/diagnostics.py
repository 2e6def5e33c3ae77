"""Deprecated alias of :mod:`ioukit.analysis.diagnostics` (warns on each name's first use)."""

from __future__ import annotations

from typing import Any

from ioukit.metrics import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
