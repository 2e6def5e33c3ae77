"""Plain-Python twins of the compiled kernels: the test oracles.

Each is written independently of its kernel's tricks (layouts, windows, sort orders) and in
plain Python floats (float64), so a kernel that agrees with its twin on random and edge-case
inputs is computing the textbook algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

trapezoid: Any = getattr(np, "trapezoid", None) or getattr(np, "trapz")  # noqa: B009
"""Ultralytics' integrator: ``np.trapezoid`` on NumPy >= 2, ``np.trapz`` before (its own
``check_version(np.__version__, ">=2.0")`` choice), so the oracles run on the NumPy floor."""

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


# ---------------------------------------------------------------- plain-Python twin (oracle)


def cluster_python(
    boxes: list[list[float]], wscores: list[float], iou_threshold: float
) -> tuple[list[int], list[list[float]]]:
    """Float64 WBF clustering of one sorted label in plain Python: (member_of, fused boxes)."""
    members: list[list[int]] = []
    fused: list[list[float]] = []
    member_of = []
    for j, box in enumerate(boxes):
        best, best_iou = -1, -1.0
        for c, f in enumerate(fused):
            width = min(f[2], box[2]) - max(f[0], box[0])
            height = min(f[3], box[3]) - max(f[1], box[1])
            inter = max(width, 0.0) * max(height, 0.0)
            union = (f[2] - f[0]) * (f[3] - f[1]) + (box[2] - box[0]) * (box[3] - box[1]) - inter
            value = inter / union if union > 0 else 0.0
            if value > best_iou:
                best, best_iou = c, value
        if best < 0 or best_iou <= iou_threshold:
            members.append([j])
            fused.append(list(box))
            member_of.append(len(fused) - 1)
            continue
        members[best].append(j)
        member_of.append(best)
        total = _left_sum(wscores[i] for i in members[best])
        fused[best] = [
            _left_sum(wscores[i] * boxes[i][k] for i in members[best]) / total for k in range(4)
        ]
    return member_of, fused


def _left_sum(values: Iterable[float]) -> float:
    # plain left-to-right float addition, as the kernel adds: the builtin sum() compensates
    # the rounding error of floats from Python 3.12 on (Neumaier), 1 ulp off the kernel
    total = 0.0
    for value in values:
        total += value
    return total


# ---------------------------------------------------------------- rle.polygon_fill's twin


def _c_int(value: float) -> int:
    # C's (int) cast of a double: truncation toward zero; NaN gives INT_MIN as on x86
    if math.isnan(value) or value >= 2147483648.0 or value <= -2147483649.0:
        return -2147483648
    return int(value)


def _toggles_to_runs(positions: np.ndarray, n: int, out: np.ndarray) -> int:
    """Sorted toggle positions ``positions[:n]`` -> run lengths in ``out``; returns their number.

    ``positions`` is overwritten with its differences; ``out`` may be ``positions`` itself
    (reads at ``j`` never fall behind writes at ``r``). Two toggles at the same pixel cancel.
    """
    previous = 0
    for j in range(n):
        t = positions[j]
        positions[j] -= previous
        previous = t
    out[0] = positions[0]
    r = 1
    j = 1
    while j < n:
        if positions[j] > 0:
            out[r] = positions[j]
            r += 1
            j += 1
        else:
            j += 1
            if j < n:
                out[r - 1] += positions[j]
                j += 1
    return r


def polygon_fill_direct(xy: np.ndarray, h: int, w: int, out: np.ndarray) -> int:
    """``rle.polygon_fill`` step by step as pycocotools' ``rleFrPoly`` (its oracle).

    Walks every boundary point of the x5 grid into arrays, then keeps the column crossings.
    """
    scale = 5.0
    k = xy.shape[0] // 2
    x = np.empty(k + 1, dtype=np.int64)
    y = np.empty(k + 1, dtype=np.int64)
    for j in range(k):
        x[j] = _c_int(scale * xy[2 * j] + 0.5)
        y[j] = _c_int(scale * xy[2 * j + 1] + 0.5)
    if k > 0:
        x[k] = x[0]
        y[k] = y[0]
    total = 0
    for j in range(k):
        total += max(abs(x[j] - x[j + 1]), abs(y[j] - y[j + 1])) + 1
    u = np.empty(total, dtype=np.int64)
    v = np.empty(total, dtype=np.int64)
    m = 0
    for j in range(k):
        xs = x[j]
        xe = x[j + 1]
        ys = y[j]
        ye = y[j + 1]
        dx = abs(xe - xs)
        dy = abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe = xe, xs
            ys, ye = ye, ys
        if dx >= dy:
            s = (ye - ys) / dx if dx > 0 else math.nan
            for d in range(dx + 1):
                t = dx - d if flip else d
                u[m] = t + xs
                v[m] = _c_int(ys + s * t + 0.5)
                m += 1
        else:
            s = (xe - xs) / dy
            for d in range(dy + 1):
                t = dy - d if flip else d
                v[m] = t + ys
                u[m] = _c_int(xs + s * t + 0.5)
                m += 1
    # points where the boundary crosses a pixel column, downsampled
    positions = np.empty(m + 1, dtype=np.int64)
    n = 0
    w_last = np.float64(w - 1) if w > 0 else 1.8446744073709552e19
    for j in range(1, m):
        if u[j] == u[j - 1]:
            continue
        xd = np.float64(u[j] if u[j] < u[j - 1] else u[j] - 1)
        xd = (xd + 0.5) / scale - 0.5
        if math.floor(xd) != xd or xd < 0 or xd > w_last:
            continue
        yd = (float(v[j] if v[j] < v[j - 1] else v[j - 1]) + 0.5) / scale - 0.5
        if yd < 0:
            yd = 0.0
        elif yd > h:
            yd = float(h)
        positions[n] = np.int64(xd) * h + np.int64(math.ceil(yd))
        n += 1
    positions[n] = h * w
    n += 1
    positions[:n].sort()
    return _toggles_to_runs(positions, n, out)
