"""The IoU family, written once, elementwise, for any array namespace (private).

Every function takes two boxes as 4-tuples of coordinate arrays ``(x1, y1, x2, y2)`` that
broadcast against each other: shapes ``(N,)`` and ``(N,)`` give aligned pairs, ``(N, 1)`` and
``(1, M)`` give the pairwise ``(N, M)`` matrix.

The order of every arithmetic operation here is mirrored exactly by the fused compiled kernel in
``ioukit._kernels.iou_matrix``, so both give bit-identical results; change them together.
Divisions use ``num / where(den > 0, den, 1)``: a zero-area pair gives 0, never NaN, in the
values and in the gradients.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ioukit._array import Array, stop_gradient

Coords = tuple[Array, Array, Array, Array]

FOUR_OVER_PI_SQUARED = 4 / math.pi**2


def safe_divide(xp: Any, numerator: Array, denominator: Array) -> Array:
    """``numerator / denominator``, with 1 in place of a non-positive denominator."""
    return numerator / xp.where(denominator > 0, denominator, xp.ones_like(denominator))


def intersection(xp: Any, a: Coords, b: Coords) -> Array:
    """Overlap area; width and height are each clamped at 0 before they multiply."""
    width = xp.clip(xp.minimum(a[2], b[2]) - xp.maximum(a[0], b[0]), min=0.0)
    height = xp.clip(xp.minimum(a[3], b[3]) - xp.maximum(a[1], b[1]), min=0.0)
    return width * height


def area(box: Coords) -> Array:
    """Continuous area ``(x2 - x1) * (y2 - y1)``."""
    return (box[2] - box[0]) * (box[3] - box[1])


def enclosing_size(xp: Any, a: Coords, b: Coords) -> tuple[Array, Array]:
    """Width and height of the smallest box enclosing both."""
    return xp.maximum(a[2], b[2]) - xp.minimum(a[0], b[0]), xp.maximum(a[3], b[3]) - xp.minimum(
        a[1], b[1]
    )


def aspect_angle(xp: Any, box: Coords) -> Array:
    """``atan(w / h)`` of each box; pi/2 for a flat box and 0 for a point (never NaN).

    Computed as ``atan2(w, h)``, which cannot overflow for tiny heights; the height is
    replaced by 1 where it is 0 so the gradient stays finite too.
    """
    width, height = box[2] - box[0], box[3] - box[1]
    positive = height > 0
    angle = xp.atan2(width, xp.where(positive, height, xp.ones_like(height)))
    flat = xp.where(width > 0, xp.full_like(width, math.pi / 2), xp.zeros_like(width))
    return xp.where(positive, angle, flat)


def iou(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """Intersection over union; 0 when the union is empty."""
    inter = intersection(xp, a, b)
    return safe_divide(xp, inter, area(a) + area(b) - inter)


def dice(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """Dice (F1) overlap ``2 I / (A + B)``; 0 when both areas are 0."""
    return safe_divide(xp, 2 * intersection(xp, a, b), area(a) + area(b))


def generalized_iou(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """GIoU = IoU - (C - U) / C with C the enclosing box's area."""
    inter = intersection(xp, a, b)
    union = area(a) + area(b) - inter
    width, height = enclosing_size(xp, a, b)
    enclosing = width * height
    return safe_divide(xp, inter, union) - safe_divide(xp, enclosing - union, enclosing)


def distance_penalty(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """DIoU's penalty rho^2 / (c^2 + eps): squared centre distance over squared diagonal."""
    width, height = enclosing_size(xp, a, b)
    diagonal_squared = width * width + height * height + eps
    dx = (a[0] + a[2]) / 2 - (b[0] + b[2]) / 2
    dy = (a[1] + a[3]) / 2 - (b[1] + b[3]) / 2
    return safe_divide(xp, dx * dx + dy * dy, diagonal_squared)


def aspect_penalty(xp: Any, a: Coords, b: Coords) -> Array:
    """CIoU's v = 4/pi^2 (atan(wa/ha) - atan(wb/hb))^2."""
    difference = aspect_angle(xp, a) - aspect_angle(xp, b)
    return FOUR_OVER_PI_SQUARED * (difference * difference)


def ciou_alpha(xp: Any, overlap: Array, v: Array, eps: float) -> Array:
    """CIoU's trade-off alpha = v / (1 - IoU + v + eps), computed without gradient."""
    return stop_gradient(xp, safe_divide(xp, v, 1 - overlap + v + eps))


def distance_iou(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """DIoU = IoU - rho^2 / (c^2 + eps), rho the centre distance, c the enclosing diagonal."""
    return iou(xp, a, b, eps) - distance_penalty(xp, a, b, eps)


def complete_iou(xp: Any, a: Coords, b: Coords, eps: float) -> Array:
    """CIoU = DIoU - alpha v (see :func:`aspect_penalty` and :func:`ciou_alpha`)."""
    overlap = iou(xp, a, b, eps)
    v = aspect_penalty(xp, a, b)
    return overlap - distance_penalty(xp, a, b, eps) - ciou_alpha(xp, overlap, v, eps) * v


Formula = Callable[[Any, Coords, Coords, float], Array]

FORMULAS: dict[str, Formula] = {
    "iou": iou,
    "dice": dice,
    "giou": generalized_iou,
    "diou": distance_iou,
    "ciou": complete_iou,
}
