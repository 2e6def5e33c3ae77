"""Fused numba kernels for the pairwise IoU family on NumPy arrays (private).

One pass writes the (N, M) result with no (N, M) temporaries. Each scalar formula mirrors
``ioukit.overlap._formulas`` operation for operation, in the same dtype, so the results are
bit-identical to the generic path (tests check this). Constants arrive typed in ``consts`` so
float32 inputs are computed in float32, exactly as NumPy does.

The plain-Python oracle for these kernels is the generic path itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

IOU, DICE, GIOU, DIOU, CIOU = 0, 1, 2, 3, 4
METRIC_CODES = {"iou": IOU, "dice": DICE, "giou": GIOU, "diou": DIOU, "ciou": CIOU}

# indices into ``consts``
_ZERO, _ONE, _TWO, _EPS, _FOUR_OVER_PI_SQUARED = 0, 1, 2, 3, 4

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTIONS)
def _safe_divide(numerator, denominator, one):  # type: ignore[no-untyped-def]
    return numerator / (denominator if denominator > 0 else one)


@njit(**_OPTIONS)
def _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, zero):  # type: ignore[no-untyped-def]
    width = min(ax2, bx2) - max(ax1, bx1)
    height = min(ay2, by2) - max(ay1, by1)
    return max(width, zero) * max(height, zero)


@njit(**_OPTIONS)
def _iou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c):  # type: ignore[no-untyped-def]
    inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c[_ZERO])
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return _safe_divide(inter, union, c[_ONE])


@njit(**_OPTIONS)
def _dice(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c):  # type: ignore[no-untyped-def]
    inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c[_ZERO])
    total = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1)
    return _safe_divide(c[_TWO] * inter, total, c[_ONE])


@njit(**_OPTIONS)
def _giou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c):  # type: ignore[no-untyped-def]
    inter = _intersection(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c[_ZERO])
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    enclosing = (max(ax2, bx2) - min(ax1, bx1)) * (max(ay2, by2) - min(ay1, by1))
    return _safe_divide(inter, union, c[_ONE]) - _safe_divide(enclosing - union, enclosing, c[_ONE])


@njit(**_OPTIONS)
def _distance_penalty(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c):  # type: ignore[no-untyped-def]
    width = max(ax2, bx2) - min(ax1, bx1)
    height = max(ay2, by2) - min(ay1, by1)
    diagonal_squared = width * width + height * height + c[_EPS]
    dx = (ax1 + ax2) / c[_TWO] - (bx1 + bx2) / c[_TWO]
    dy = (ay1 + ay2) / c[_TWO] - (by1 + by2) / c[_TWO]
    return _safe_divide(dx * dx + dy * dy, diagonal_squared, c[_ONE])


@njit(**_OPTIONS)
def _ciou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, angle_a, angle_b, c):  # type: ignore[no-untyped-def]
    overlap = _iou(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c)
    penalty = _distance_penalty(ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, c)
    difference = angle_a - angle_b
    v = c[_FOUR_OVER_PI_SQUARED] * (difference * difference)
    alpha = _safe_divide(v, c[_ONE] - overlap + v + c[_EPS], c[_ONE])
    return overlap - penalty - alpha * v


@njit(**_OPTIONS)
def _fill_row(i, boxes1, x1, y1, x2, y2, angle1, angle2, c, metric, out):  # type: ignore[no-untyped-def]
    # one loop per metric, so the branch sits outside the inner loop and LLVM vectorises it
    ax1, ay1, ax2, ay2 = boxes1[i, 0], boxes1[i, 1], boxes1[i, 2], boxes1[i, 3]
    row = out[i]
    m = row.shape[0]
    if metric == IOU:
        for j in range(m):
            row[j] = _iou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], c)
    elif metric == DICE:
        for j in range(m):
            row[j] = _dice(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], c)
    elif metric == GIOU:
        for j in range(m):
            row[j] = _giou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], c)
    elif metric == DIOU:
        for j in range(m):
            row[j] = _iou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], c) - _distance_penalty(
                ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], c
            )
    else:
        angle_a = angle1[i]
        for j in range(m):
            row[j] = _ciou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], angle_a, angle2[j], c)


@njit(**_OPTIONS)
def _pairwise_serial(boxes1, x1, y1, x2, y2, angle1, angle2, consts, metric, out):  # type: ignore[no-untyped-def]
    for i in range(boxes1.shape[0]):
        _fill_row(i, boxes1, x1, y1, x2, y2, angle1, angle2, consts, metric, out)


@njit(parallel=True, **_OPTIONS)
def _pairwise_parallel(boxes1, x1, y1, x2, y2, angle1, angle2, consts, metric, out):  # type: ignore[no-untyped-def]
    for i in prange(boxes1.shape[0]):
        _fill_row(i, boxes1, x1, y1, x2, y2, angle1, angle2, consts, metric, out)


PARALLEL_MIN_ELEMENTS = 100_000


def pairwise(
    metric: str,
    boxes1: np.ndarray,
    boxes2: np.ndarray,
    angle1: np.ndarray,
    angle2: np.ndarray,
    eps: float,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Fill the (N, M) matrix of ``metric`` for xyxy float boxes (N, 4) and (M, 4).

    ``angle1``/``angle2`` are the per-box aspect angles (used by CIoU only, any length
    otherwise). ``boxes1`` and ``boxes2`` share one float dtype, which the result takes.
    """
    dtype = boxes1.dtype
    boxes1 = np.ascontiguousarray(boxes1)
    x1, y1, x2, y2 = (np.ascontiguousarray(boxes2[:, k]) for k in range(4))
    if out is None:
        out = np.empty((boxes1.shape[0], boxes2.shape[0]), dtype=dtype)
    consts = np.array([0.0, 1.0, 2.0, eps, 4 / np.pi**2], dtype=dtype)
    angle1 = np.ascontiguousarray(angle1, dtype=dtype)
    angle2 = np.ascontiguousarray(angle2, dtype=dtype)
    kernel = _pairwise_parallel if out.size >= PARALLEL_MIN_ELEMENTS else _pairwise_serial
    kernel(boxes1, x1, y1, x2, y2, angle1, angle2, consts, METRIC_CODES[metric], out)
    return out
