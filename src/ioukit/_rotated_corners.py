"""Corners of rotated boxes: simplicity, zero-area flags and host preparation (private).

Shared by :mod:`ioukit.overlap.rotated` (rotated IoU), :mod:`ioukit.suppression` (rotated NMS)
and :mod:`ioukit.evaluation.rotated` (oriented-box evaluation), which must check and prepare
quadrilaterals the same way for their results to agree bit for bit. Corners are
``(x1, y1, ..., x4, y4)`` arrays of shape (..., 8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ioukit._array import Array, host_view
from ioukit._box_formats import as_rotated
from ioukit.boxes import ROTATED_FORMATS, prepare_rotated_corners
from ioukit.errors import BoxError, ParameterError

__all__ = [
    "CONVEXITY_TOLERANCE",
    "CORNER_LIMITS",
    "SET_SPAN",
    "check_convex",
    "check_finite_corners",
    "check_quads",
    "check_simple",
    "convex_mask",
    "corner_exponents",
    "degenerate_flags",
    "envelope",
    "extreme_corners",
    "host64",
    "prepare_corners",
    "scale_set",
    "signed_area4",
    "simple_mask",
    "unit_scaled",
]

CONVEXITY_TOLERANCE = 1e-9
"""A corner turns the wrong way when its cross product is below ``-tol * |e1| * |e2|``."""


CORNER_LIMITS = (2.0**-400, 2.0**500)
"""Boxes whose largest corner magnitude lies in this range (or is 0) are computed directly.

The rotated kernel multiplies corner differences (the clipping's cross products, the shoelace
terms), so a box of 1e155 overflows to ``inf`` and one of 1e-160 underflows to an area of 0.
The IoU is invariant when both boxes are multiplied by one factor: a pair with a box outside
the range is recomputed with its corners multiplied by the power of two (``ldexp``: exact) that
brings the pair's largest magnitude near 1, so identical boxes give 1.0 at every scale.
Rotated NMS scales the whole set by one power of two (:func:`scale_set`)."""

SET_SPAN = 800
"""Rotated NMS refuses a set whose largest corner exponents span more than this many binary
orders of magnitude once it needs scaling (one factor cannot keep every pair exact)."""


def corner_exponents(c: np.ndarray) -> np.ndarray:
    """Per box (n, 8), the binary exponent of its largest |corner| (-4000 for an all-zero box)."""
    magnitude = np.abs(c).max(axis=-1)
    exponents: np.ndarray = np.where(magnitude > 0, np.frexp(magnitude)[1], -4000)
    return exponents


def extreme_corners(c: np.ndarray) -> np.ndarray:
    """(n,) True for boxes (n, 8) whose largest non-zero corner magnitude is out of range."""
    magnitude = np.abs(c).max(axis=-1)
    lo, hi = CORNER_LIMITS
    return np.asarray((magnitude > hi) | ((magnitude < lo) & (magnitude > 0)))


def scale_set(corners: np.ndarray, name: str) -> np.ndarray:
    """Corners (n, 8) multiplied by one power of two when some box is out of range, so that
    every pair's IoU is computed without overflow or underflow (for rotated NMS)."""
    if corners.size == 0 or not extreme_corners(corners).any():
        return corners
    exponents = corner_exponents(corners)
    top = int(exponents.max())
    live = exponents[exponents > -4000]
    if top - int(live.min()) > SET_SPAN:
        raise BoxError(
            f"{name}: the boxes' magnitudes span 2^{int(live.min())} to 2^{top}; rotated NMS "
            f"scales the set by one power of two and needs them within 2^{SET_SPAN} of each "
            "other (suppress the very large and very small boxes separately)"
        )
    with np.errstate(under="ignore"):
        scaled: np.ndarray = np.ldexp(corners, -top)
    return scaled


def degenerate_flags(xp: Any, boxes: Array, fmt: str, corners: Array) -> Array:
    """True for zero-area boxes: zero width or height, or a zero shoelace area."""
    if fmt in ("cxcywhr", "xywhr"):
        return (boxes[..., 2] == 0) | (boxes[..., 3] == 0)
    if fmt == "xyxyxyxy":
        if isinstance(corners, np.ndarray):  # scale-free: no overflow or underflow to 0
            return signed_area4(xp, unit_scaled(corners)) == 0
        return signed_area4(xp, corners) == 0
    x1, y1, x2, y2 = (corners[..., k] for k in (0, 1, 4, 5))
    return (x2 == x1) | (y2 == y1)


def unit_scaled(c: np.ndarray) -> np.ndarray:
    """Host corners (..., 8), each box multiplied by the power of two that brings its largest
    magnitude into [0.5, 1) (exact): shoelace signs and turn directions without overflow."""
    exponent = corner_exponents(c)
    with np.errstate(under="ignore"):
        scaled: np.ndarray = np.ldexp(c, -np.where(exponent > -4000, exponent, 0)[..., None])
    return scaled


def signed_area4(xp: Any, c: Array) -> Array:
    """Shoelace area (...) of corners (..., 8), positive for counter-clockwise in x-y axes."""
    xs = [c[..., 2 * k] for k in range(4)]
    ys = [c[..., 2 * k + 1] for k in range(4)]
    total = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (ys[1] - ys[0])
    total = total + ((xs[2] - xs[0]) * (ys[3] - ys[0]) - (xs[3] - xs[0]) * (ys[2] - ys[0]))
    return total / 2


def check_quads(
    corners: np.ndarray, name: str, valid: Callable[[np.ndarray], np.ndarray], problem: str
) -> None:
    """Raise :class:`BoxError` naming the first box of ``corners`` (a host array (..., 8))
    that ``valid`` (corners (B, 4, 2) scaled to unit size -> (B,) bool) refuses, and
    ``problem``."""
    if corners.size == 0:
        return
    ok = valid(unit_scaled(corners).reshape(-1, 4, 2)).reshape(corners.shape[:-1])
    if ok.all():
        return
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = name + "".join(f"[{i}]" for i in index)
    raise BoxError(f"{where}: invalid xyxyxyxy box {corners[index].tolist()}: {problem}")


def check_simple(corners: np.ndarray, name: str) -> None:
    """Raise :class:`BoxError` for a self-intersecting quadrilateral ("bow tie").

    ``corners`` is a host array (..., 8). Convex quadrilaterals and simple ones with one reflex
    corner (DOTA labels have them; the DOTA devkit measures any polygon) pass: the rotated IoU
    computes both exactly. Collinear corners (a turn of 0) are allowed.
    """
    check_quads(
        corners,
        name,
        simple_mask,
        "a self-intersecting quadrilateral (its corners must go round the box in order, with "
        "no crossing edges); convex_hull_quads() replaces such boxes by their convex hull (the "
        "DOTA and YOLO OBB readers take convex_hull=True)",
    )


check_convex = check_simple
"""The former name of :func:`check_simple` (non-convex simple quadrilaterals were refused)."""


def _turns(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cross products (n, 4) at each corner of quadrilaterals (n, 4, 2) and their tolerances."""
    e = np.roll(p, -1, axis=-2) - p
    f = np.roll(e, -1, axis=-2)
    cross = e[..., 0] * f[..., 1] - e[..., 1] * f[..., 0]
    tol = CONVEXITY_TOLERANCE * np.hypot(e[..., 0], e[..., 1]) * np.hypot(f[..., 0], f[..., 1])
    return cross, tol


def simple_mask(p: np.ndarray) -> np.ndarray:
    """(n,) True where the quadrilaterals (n, 4, 2) do not cross themselves: at most one corner
    turns against the orientation of the shoelace area (a simple polygon turns by +-360 degrees
    in all, which two or more wrong turns out of four cannot make)."""
    cross, tol = _turns(p)
    x, y = p[..., 0], p[..., 1]
    area = (x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y).sum(axis=-1)
    sign = np.where(area < 0, -1.0, 1.0)[..., None]
    wrong = (cross * sign < -tol).sum(axis=-1)
    return np.asarray(wrong <= 1)


def convex_mask(p: np.ndarray) -> np.ndarray:
    """(n,) True where the quadrilaterals (n, 4, 2) turn one way only (within the tolerance)."""
    cross, tol = _turns(p)
    mask = np.asarray((cross >= -tol).all(axis=-1) | (cross <= tol).all(axis=-1))
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
    with np.errstate(over="ignore", invalid="ignore"):  # overflowing corners: refused below
        corners = prepare_rotated_corners(
            xp, arr, name, fmt, angle_unit=angle_unit, clockwise=clockwise, dtype=dtype
        )
    view = host_view(corners)
    if view is not None:
        check_finite_corners(view, host_view(arr), name, fmt)
        if fmt == "xyxyxyxy":
            check_simple(view, name)
    return corners, degenerate_flags(xp, arr, fmt, corners)


def check_finite_corners(
    corners: np.ndarray, boxes: np.ndarray | None, name: str, fmt: str
) -> None:
    """Raise :class:`BoxError` where the corners of finite boxes overflowed to infinity."""
    if corners.size == 0:
        return
    ok = np.isfinite(corners).all(axis=-1)
    if ok.all():
        return
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = name + "".join(f"[{i}]" for i in index)
    box = (boxes if boxes is not None else corners)[index].tolist()
    raise BoxError(
        f"{where}: invalid {fmt} box {box}: its corners overflow to infinity in "
        f"{corners.dtype} (expected corners within the float range)"
    )


def envelope(corners: np.ndarray) -> np.ndarray:
    """Axis-aligned xyxy envelopes (..., 4) of host corners (..., 8)."""
    xs, ys = corners[..., 0::2], corners[..., 1::2]
    return np.stack([xs.min(-1), ys.min(-1), xs.max(-1), ys.max(-1)], axis=-1)


def host64(corners: np.ndarray, degenerate: np.ndarray) -> tuple[np.ndarray, ...]:
    """The compiled kernels' inputs: contiguous float64 corners (n, 8), envelopes (n, 4), uint8
    zero-area flags (n,)."""
    c = np.ascontiguousarray(corners.reshape(-1, 8), dtype=np.float64)
    return c, np.ascontiguousarray(envelope(c)), degenerate.reshape(-1).astype(np.uint8)
