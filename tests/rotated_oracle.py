"""Plain-Python twins of the rotated kernels (the oracles), operation for operation.

``pair_iou`` repeats ``ioukit._kernels.rotated._pair_iou`` with Python floats (IEEE doubles,
no fused multiply-add), so the two agree bit for bit; ``greedy_rotated_nms`` is the quadratic
greedy loop over that IoU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CAPACITY = 24


def _clip(
    sx: list[float], sy: list[float], px: float, py: float, qx: float, qy: float
) -> tuple[list[float], list[float]]:
    ex, ey = qx - px, qy - py
    n = len(sx)
    ox: list[float] = []
    oy: list[float] = []
    if n == 0:
        return ox, oy
    prev = n - 1
    d_prev = ex * (sy[prev] - py) - ey * (sx[prev] - px)
    for i in range(n):
        d_cur = ex * (sy[i] - py) - ey * (sx[i] - px)
        if ((d_prev < 0 and d_cur > 0) or (d_prev > 0 and d_cur < 0)) and len(ox) < CAPACITY:
            t = d_prev / (d_prev - d_cur)
            ox.append(sx[prev] + t * (sx[i] - sx[prev]))
            oy.append(sy[prev] + t * (sy[i] - sy[prev]))
        if d_cur >= 0 and len(ox) < CAPACITY:
            ox.append(sx[i])
            oy.append(sy[i])
        prev, d_prev = i, d_cur
    return ox, oy


def _area(x: list[float], y: list[float]) -> float:
    total = 0.0
    for i in range(1, len(x) - 1):
        total = total + ((x[i] - x[0]) * (y[i + 1] - y[0]) - (x[i + 1] - x[0]) * (y[i] - y[0]))
    return total / 2


def _load(c: Sequence[float], sx: float, sy: float) -> tuple[list[float], list[float]]:
    x = [c[2 * k] - sx for k in range(4)]
    y = [c[2 * k + 1] - sy for k in range(4)]
    if _area(x, y) < 0:
        x[1], x[3] = x[3], x[1]
        y[1], y[3] = y[3], y[1]
    return x, y


def envelope(c: Sequence[float]) -> tuple[float, float, float, float]:
    xs, ys = c[0::2], c[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def pair_iou(
    a: Sequence[float], b: Sequence[float], degenerate_a: bool = False, degenerate_b: bool = False
) -> float:
    """Exact IoU of two convex quadrilaterals given as 8 corner values."""
    a, b = [float(v) for v in a], [float(v) for v in b]
    if degenerate_a or degenerate_b:
        return 0.0
    ea, eb = envelope(a), envelope(b)
    if ea[2] < eb[0] or eb[2] < ea[0] or ea[3] < eb[1] or eb[3] < ea[1]:
        return 0.0
    if a > b:  # lexicographic, as the kernel's canonical order
        a, b = b, a
    sx = ((a[0] + a[2] + a[4] + a[6]) / 4 + (b[0] + b[2] + b[4] + b[6]) / 4) / 2
    sy = ((a[1] + a[3] + a[5] + a[7]) / 4 + (b[1] + b[3] + b[5] + b[7]) / 4) / 2
    ax, ay = _load(a, sx, sy)
    bx, by = _load(b, sx, sy)
    area_a, area_b = _area(ax, ay), _area(bx, by)
    if not (area_a > 0 and area_b > 0):
        return 0.0
    px, py = list(ax), list(ay)
    for k in range(4):
        j = (k + 1) % 4
        px, py = _clip(px, py, bx[k], by[k], bx[j], by[j])
    inter = _area(px, py) if len(px) >= 3 else 0.0
    if not inter > 0:
        return 0.0
    union = area_a + area_b - inter
    if not union > 0:
        return 0.0
    value = inter / union
    return value if value <= 1 else 1.0


def greedy_rotated_nms(
    corners: np.ndarray,
    degenerate: np.ndarray,
    scores: np.ndarray,
    threshold: float,
    classes: np.ndarray | None = None,
) -> list[int]:
    """The quadratic greedy loop: stable order of -score, suppress IoU > threshold."""
    order = np.argsort(-scores, kind="stable")
    removed = np.zeros(len(order), dtype=bool)
    kept: list[int] = []
    for p, k in enumerate(order):
        if removed[k]:
            continue
        kept.append(int(k))
        for j in order[p + 1 :]:
            if removed[j] or (classes is not None and classes[j] != classes[k]):
                continue
            iou = pair_iou(corners[k], corners[j], bool(degenerate[k]), bool(degenerate[j]))
            if iou > threshold:
                removed[j] = True
    return kept
