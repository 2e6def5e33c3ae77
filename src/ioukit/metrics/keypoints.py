"""Deprecated alias of :mod:`ioukit.analysis.keypoints`,
:mod:`ioukit.evaluation.protocols.keypoints` and :mod:`ioukit.evaluation.similarity.oks`
(warns on each name's first use)."""

from __future__ import annotations

from typing import Any

from ioukit.metrics import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
