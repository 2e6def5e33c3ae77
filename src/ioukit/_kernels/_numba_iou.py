"""Scalar box IoU for the numba kernels that are not compiled ahead of time yet (private).

Temporary: the same formula as ``ioukit._kernels.iou_matrix`` (operation for operation), used by
the numba NMS and fusion kernels until they are ported to Cython (#9); then this module goes.
"""

from __future__ import annotations

from typing import Any

from numba import njit

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTIONS)
def _iou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c):  # type: ignore[no-untyped-def]
    zero, one = c[0], c[1]
    width = min(ax2, bx2) - max(ax1, bx1)
    height = min(ay2, by2) - max(ay1, by1)
    inter = max(width, zero) * max(height, zero)
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / (union if union > 0 else one)
