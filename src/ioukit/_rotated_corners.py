"""Corners of rotated boxes: convexity, zero-area flags and host preparation (private).

Shared by :mod:`ioukit.overlap.rotated` (rotated IoU), :mod:`ioukit.suppression` (rotated NMS)
and :mod:`ioukit.evaluation.rotated` (oriented-box evaluation), which must check and prepare
quadrilaterals the same way for their results to agree bit for bit. Corners are
``(x1, y1, ..., x4, y4)`` arrays of shape (..., 8).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ioukit._array import Array, host_view
from ioukit._box_formats import as_rotated
from ioukit.boxes import ROTATED_FORMATS, prepare_rotated_corners
from ioukit.errors import BoxError, ParameterError

__all__ = [
    "CONVEXITY_TOLERANCE",
    "check_convex",
    "convex_mask",
    "degenerate_flags",
    "envelope",
    "host64",
    "prepare_corners",
    "signed_area4",
]

CONVEXITY_TOLERANCE = 1e-9
"""A corner turns the wrong way when its cross product is below ``-tol * |e1| * |e2|``."""


def degenerate_flags(xp: Any, boxes: Array, fmt: str, corners: Array) -> Array:
    """True for zero-area boxes: zero width or height, or a zero shoelace area."""
    if fmt in ("cxcywhr", "xywhr"):
        return (boxes[..., 2] == 0) | (boxes[..., 3] == 0)
    if fmt == "xyxyxyxy":
        return signed_area4(xp, corners) == 0
    x1, y1, x2, y2 = (corners[..., k] for k in (0, 1, 4, 5))
    return (x2 == x1) | (y2 == y1)


def signed_area4(xp: Any, c: Array) -> Array:
    """Shoelace area (...) of corners (..., 8), positive for counter-clockwise in x-y axes."""
    xs = [c[..., 2 * k] for k in range(4)]
    ys = [c[..., 2 * k + 1] for k in range(4)]
    total = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (ys[1] - ys[0])
    total = total + ((xs[2] - xs[0]) * (ys[3] - ys[0]) - (xs[3] - xs[0]) * (ys[2] - ys[0]))
    return total / 2


def check_convex(corners: np.ndarray, name: str) -> None:
    """Raise :class:`BoxError` for a quadrilateral that is self-intersecting or not convex.

    ``corners`` is a host array (..., 8). Collinear corners (a turn of 0) are allowed.
    """
    if corners.size == 0:
        return
    ok = convex_mask(corners.reshape(-1, 4, 2)).reshape(corners.shape[:-1])
    if ok.all():
        return
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = name + "".join(f"[{i}]" for i in index)
    raise BoxError(
        f"{where}: invalid xyxyxyxy box {corners[index].tolist()}: not a convex quadrilateral "
        "(its corners must go round the box in order, with no reflex corner and no crossing "
        "edges); convex_hull_quads() replaces such boxes by their convex hull (the DOTA and "
        "YOLO OBB readers take convex_hull=True)"
    )


def convex_mask(p: np.ndarray) -> np.ndarray:
    """(n,) True where the quadrilaterals (n, 4, 2) turn one way only (within the tolerance)."""
    e = np.roll(p, -1, axis=-2) - p
    f = np.roll(e, -1, axis=-2)
    cross = e[..., 0] * f[..., 1] - e[..., 1] * f[..., 0]
    tol = CONVEXITY_TOLERANCE * np.hypot(e[..., 0], e[..., 1]) * np.hypot(f[..., 0], f[..., 1])
    mask: np.ndarray = (cross >= -tol).all(axis=-1) | (cross <= tol).all(axis=-1)
    return mask


def prepare_corners(
    boxes: Array,
    name: str,
    fmt: str,
    angle_unit: str,
    clockwise: bool,
    xp: Any,
    dtype: Any,
    ndim: int | None,
) -> tuple[Array, Array]:
    """Corners (..., 8) and zero-area flags (...) of validated boxes."""
    if fmt not in ROTATED_FORMATS and fmt not in ("xyxy", "xywh", "cxcywh"):
        raise ParameterError(
            "fmt: expected one of 'cxcywhr', 'xywhr', 'xyxyxyxy', 'xyxy', 'xywh', 'cxcywh', "
            f"got {fmt!r}"
        )
    arr = as_rotated(xp, boxes, name, fmt, dtype=dtype, ndim=ndim)
    corners = prepare_rotated_corners(
        xp, arr, name, fmt, angle_unit=angle_unit, clockwise=clockwise, dtype=dtype
    )
    if fmt == "xyxyxyxy":
        view = host_view(corners)
        if view is not None:
            check_convex(view, name)
    return corners, degenerate_flags(xp, arr, fmt, corners)


def envelope(corners: np.ndarray) -> np.ndarray:
    """Axis-aligned xyxy envelopes (..., 4) of host corners (..., 8)."""
    xs, ys = corners[..., 0::2], corners[..., 1::2]
    return np.stack([xs.min(-1), ys.min(-1), xs.max(-1), ys.max(-1)], axis=-1)


def host64(corners: np.ndarray, degenerate: np.ndarray) -> tuple[np.ndarray, ...]:
    """The compiled kernels' inputs: contiguous float64 corners (n, 8), envelopes (n, 4), uint8
    zero-area flags (n,)."""
    c = np.ascontiguousarray(corners.reshape(-1, 8), dtype=np.float64)
    return c, np.ascontiguousarray(envelope(c)), degenerate.reshape(-1).astype(np.uint8)
