"""Numba kernels for greedy and soft non-maximum suppression (private).

NumPy in, NumPy out: the caller sorts (stable) and allocates every array; the kernels loop.
The IoU of two boxes is :func:`ioukit._kernels.iou_matrix._iou`, the scalar formula behind
``ioukit.box_iou`` (continuous coordinates, 0 when the union is 0), so a pair is suppressed
exactly when ``box_iou`` of that pair is greater than the threshold.

Greedy NMS is sub-quadratic: boxes are laid out sorted by ``(segment, x1)`` (a segment is one
class for ``batched_nms``), and a kept box visits only the positions whose boxes can intersect
it along x: from the first position whose running maximum of ``x2`` exceeds its ``x1`` to the
last position whose ``x1`` is below its ``x2``. Every box outside that window has a computed
intersection width ``<= 0`` (the bounds are found by comparisons only, no arithmetic), hence an
IoU of exactly 0, which no threshold ``>= 0`` exceeds; so the result is identical to the
quadratic loop. A negative threshold visits the whole segment.

The plain-Python twins :func:`greedy_nms_python` and :func:`soft_nms_python` are the test
oracles: the textbook quadratic loops, written independently of the layout tricks above.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ioukit._kernels._numba_iou import _iou

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}

LINEAR, GAUSSIAN = 1, 2
SOFT_METHODS = {"linear": LINEAR, "gaussian": GAUSSIAN}


@njit(**_OPTIONS)
def _first_greater(values, lo, hi, target):  # type: ignore[no-untyped-def]
    # first index in [lo, hi) with values[index] > target; values non-decreasing on [lo, hi)
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] > target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(**_OPTIONS)
def _first_not_less(values, lo, hi, target):  # type: ignore[no-untyped-def]
    # first index in [lo, hi) with values[index] >= target; values non-decreasing on [lo, hi)
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(**_OPTIONS)
def _greedy(  # type: ignore[no-untyped-def]
    x1, y1, x2, y2, pos_of_rank, seg_lo, seg_hi, reach, done, threshold, consts, limit, keep
):
    """Greedy NMS over boxes laid out by position; returns how many ranks were written to keep.

    x1, y1, x2, y2 : (n,) box columns in position order (sorted by segment, then x1).
    pos_of_rank : (n,) position of the box of each score rank (rank 0 = highest score).
    seg_lo, seg_hi : (n,) bounds [lo, hi) of the segment of each position.
    reach : (n,) scratch, filled with the running maximum of x2 within each segment.
    done : (n,) uint8 scratch, zeros on entry: 1 once a position is kept or suppressed.
    threshold : suppress when IoU > threshold.  consts : iou_matrix constants.
    limit : stop after this many kept boxes.  keep : (n,) output, ranks of kept boxes.
    """
    n = x1.shape[0]
    for p in range(n):
        if p == seg_lo[p] or x2[p] > reach[p - 1]:
            reach[p] = x2[p]
        else:
            reach[p] = reach[p - 1]
    windowed = threshold >= consts[0]
    count = 0
    for r in range(n):
        if count >= limit:
            break
        p = pos_of_rank[r]
        if done[p]:
            continue
        done[p] = 1
        keep[count] = r
        count += 1
        ax1, ay1, ax2, ay2 = x1[p], y1[p], x2[p], y2[p]
        lo, hi = seg_lo[p], seg_hi[p]
        if windowed:
            lo = _first_greater(reach, lo, hi, ax1)
            hi = _first_not_less(x1, lo, hi, ax2)
        for q in range(lo, hi):
            if done[q]:
                continue
            if _iou(ax1, ay1, ax2, ay2, x1[q], y1[q], x2[q], y2[q], consts) > threshold:
                done[q] = 1
    return count


@njit(**_OPTIONS)
def _greedy_one_segment(boxes, order, threshold, consts, limit):  # type: ignore[no-untyped-def]
    """:func:`_greedy` for a single segment with the whole set-up in one compiled call.

    Small inputs are dominated by per-call overhead (NumPy temporaries and numba's argument
    checks), so the x1 layout, the rank map and the scratch arrays are built here.
    Returns the kept input indices in score order.
    """
    n = boxes.shape[0]
    layout = np.argsort(boxes[:, 0].copy(), kind="mergesort")  # stable
    x1 = np.empty(n, dtype=boxes.dtype)
    y1 = np.empty(n, dtype=boxes.dtype)
    x2 = np.empty(n, dtype=boxes.dtype)
    y2 = np.empty(n, dtype=boxes.dtype)
    pos_of_input = np.empty(n, dtype=np.int64)
    for p in range(n):
        i = layout[p]
        x1[p], y1[p], x2[p], y2[p] = boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3]
        pos_of_input[i] = p
    pos_of_rank = np.empty(n, dtype=np.int64)
    for r in range(n):
        pos_of_rank[r] = pos_of_input[order[r]]
    seg_lo = np.zeros(n, dtype=np.int64)
    seg_hi = np.full(n, n, dtype=np.int64)
    reach = np.empty(n, dtype=boxes.dtype)
    done = np.zeros(n, dtype=np.uint8)
    keep = np.empty(n, dtype=np.int64)
    count = _greedy(
        x1, y1, x2, y2, pos_of_rank, seg_lo, seg_hi, reach, done, threshold, consts, limit, keep
    )
    kept = np.empty(count, dtype=np.int64)
    for k in range(count):
        kept[k] = order[keep[k]]
    return kept


@njit(**_OPTIONS)
def _soft(  # type: ignore[no-untyped-def]
    x1,
    y1,
    x2,
    y2,
    scores,
    method,
    sigma,
    iou_threshold,
    score_threshold,
    early_stop,
    consts,
    done,
    order,
    decayed,
):
    """Soft-NMS (ensemble-boxes' semantics); returns the number of selection steps written.

    x1, y1, x2, y2, scores : (n,) in input order; ``scores`` is a scratch copy, decayed in place.
    method : LINEAR or GAUSSIAN.  done : (n,) uint8 scratch of zeros.
    order, decayed : (n,) outputs: input index and score of each selected box, in selection
    order (the highest current score first, the lowest input index on ties).
    early_stop : stop once the best remaining score is <= score_threshold (exact when the
    threshold is >= 0, because decay never raises a score above a non-negative threshold).
    """
    n = x1.shape[0]
    one = consts[1]
    steps = 0
    for _ in range(n):
        best = -1
        best_score = scores[0]
        for j in range(n):
            if done[j] == 0 and (best < 0 or scores[j] > best_score):
                best = j
                best_score = scores[j]
        if best < 0 or (early_stop and best_score <= score_threshold):
            break
        done[best] = 1
        order[steps] = best
        decayed[steps] = best_score
        steps += 1
        ax1, ay1, ax2, ay2 = x1[best], y1[best], x2[best], y2[best]
        for j in range(n):
            if done[j]:
                continue
            overlap = _iou(ax1, ay1, ax2, ay2, x1[j], y1[j], x2[j], y2[j], consts)
            if method == LINEAR:
                if overlap > iou_threshold:
                    scores[j] = (one - overlap) * scores[j]
            else:
                scores[j] = math.exp(-(overlap * overlap) / sigma) * scores[j]
    return steps


def _consts(dtype: np.dtype) -> np.ndarray:
    return np.array([0.0, 1.0, 2.0, 0.0, 4 / np.pi**2], dtype=dtype)


def greedy_nms(
    boxes: np.ndarray,
    order: np.ndarray,
    segments: np.ndarray | None,
    threshold: float,
    limit: int,
) -> np.ndarray:
    """Kept input indices, in processing order.

    boxes : (n, 4) float xyxy.  order : (n,) input indices in processing (score) order.
    segments : (n,) non-negative int segment (class) of each box, or None for one segment.
    """
    n = boxes.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    if segments is None:
        return _greedy_one_segment(  # type: ignore[no-any-return]
            np.ascontiguousarray(boxes),
            np.ascontiguousarray(order, dtype=np.int64),
            boxes.dtype.type(threshold),
            _consts(boxes.dtype),
            limit,
        )
    layout = np.lexsort((boxes[:, 0], segments))
    seg_sorted = segments[layout]
    starts = np.flatnonzero(np.r_[True, seg_sorted[1:] != seg_sorted[:-1]])
    ends = np.r_[starts[1:], n]
    sizes = ends - starts
    seg_lo = np.repeat(starts, sizes).astype(np.int64)
    seg_hi = np.repeat(ends, sizes).astype(np.int64)
    columns = np.ascontiguousarray(boxes[layout].T)  # (4, n): one gather, one copy
    pos_of_input = np.empty(n, dtype=np.int64)
    pos_of_input[layout] = np.arange(n, dtype=np.int64)
    pos_of_rank = pos_of_input[order]
    reach = np.empty(n, dtype=boxes.dtype)
    done = np.zeros(n, dtype=np.uint8)
    keep = np.empty(n, dtype=np.int64)
    count = _greedy(
        *columns,
        pos_of_rank,
        seg_lo,
        seg_hi,
        reach,
        done,
        boxes.dtype.type(threshold),
        _consts(boxes.dtype),
        limit,
        keep,
    )
    return np.asarray(order[keep[:count]], dtype=np.int64)


def soft_nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    method: str,
    sigma: float,
    iou_threshold: float,
    score_threshold: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Selected input indices and their decayed scores, before the final score filter.

    boxes : (n, 4) float xyxy.  scores : (n,) float of the same dtype (not modified).
    Returns only the steps with a decayed score > score_threshold.
    """
    n = boxes.shape[0]
    dtype = boxes.dtype
    columns = [np.ascontiguousarray(boxes[:, k]) for k in range(4)]
    work = np.array(scores, dtype=dtype, copy=True)
    done = np.zeros(n, dtype=np.uint8)
    order = np.empty(n, dtype=np.int64)
    decayed = np.empty(n, dtype=dtype)
    if n == 0:
        return order, decayed
    steps = _soft(
        *columns,
        work,
        SOFT_METHODS[method],
        dtype.type(sigma),
        dtype.type(iou_threshold),
        dtype.type(score_threshold),
        score_threshold >= 0,
        _consts(dtype),
        done,
        order,
        decayed,
    )
    selected = decayed[:steps] > dtype.type(score_threshold)
    return order[:steps][selected], decayed[:steps][selected]


# ---------------------------------------------------------------- plain-Python twins (oracles)


def _iou_python(a: list[float], b: list[float]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(width, 0.0) * max(height, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def greedy_nms_python(
    boxes: list[list[float]],
    scores: list[float],
    threshold: float,
    classes: list[int] | None = None,
) -> list[int]:
    """Textbook quadratic greedy NMS in plain Python (float64): the oracle of :func:`greedy_nms`."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    removed = [False] * len(scores)
    kept = []
    for rank, i in enumerate(order):
        if removed[i]:
            continue
        kept.append(i)
        for j in order[rank + 1 :]:
            same = classes is None or classes[i] == classes[j]
            if same and not removed[j] and _iou_python(boxes[i], boxes[j]) > threshold:
                removed[j] = True
    return kept


def soft_nms_python(
    boxes: list[list[float]],
    scores: list[float],
    method: str,
    sigma: float,
    iou_threshold: float,
    score_threshold: float,
) -> tuple[list[int], list[float]]:
    """Quadratic soft-NMS in plain Python (float64): the oracle of :func:`soft_nms`."""
    current = list(scores)
    remaining = list(range(len(scores)))
    order, decayed = [], []
    while remaining:
        best = max(remaining, key=lambda i: (current[i], -i))
        remaining.remove(best)
        order.append(best)
        decayed.append(current[best])
        for j in remaining:
            overlap = _iou_python(boxes[best], boxes[j])
            if method == "linear":
                if overlap > iou_threshold:
                    current[j] = (1.0 - overlap) * current[j]
            else:
                current[j] = math.exp(-(overlap * overlap) / sigma) * current[j]
    kept = [k for k, s in enumerate(decayed) if s > score_threshold]
    return [order[k] for k in kept], [decayed[k] for k in kept]
