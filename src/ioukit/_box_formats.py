"""Box-format arithmetic shared by :mod:`ioukit.boxes` and :mod:`ioukit.overlap` (private).

The column splits and format conversions of axis-aligned boxes, and the input checks, angle
handling and corner conversions of rotated boxes (torchvision's formulas, operation for
operation: ``box_convert`` and the rotated IoU must stay bit-identical). Every function works on
arrays of any array-API namespace ``xp`` and never modifies its input. Formats are those of
:mod:`ioukit.boxes`; ``unit`` is ``"degrees"`` or ``"radians"`` and ``cw`` means clockwise.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ioukit._array import (
    Array,
    as_boxes,
    compat_namespace,
    float_dtype_for,
    host_view,
    validate_boxes,
)
from ioukit.errors import BoxError, ParameterError

__all__ = [
    "ROTATED_WIDTH",
    "as_rotated",
    "box_columns",
    "box_width",
    "check_angle_unit",
    "cxcywhr_to_xywhr",
    "from_radians",
    "from_xyxy",
    "radians",
    "to_xyxy",
    "to_xyxyxyxy",
    "xywhr_to_cxcywhr",
    "xywhr_to_xyxyxyxy",
    "xyxyxyxy_to_xywhr",
]

ROTATED_WIDTH = {"cxcywhr": 5, "xywhr": 5, "xyxyxyxy": 8}


def box_columns(boxes: Array) -> tuple[Array, Array, Array, Array]:
    """The four coordinate columns (...,) of boxes (..., 4)."""
    return boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]


def to_xyxy(xp: Any, boxes: Array, fmt: str) -> Array:
    """Axis-aligned boxes (..., 4) in ``fmt`` as xyxy (``boxes`` itself for xyxy)."""
    if fmt == "xyxy":
        return boxes
    a, b, w, h = box_columns(boxes)
    if fmt == "xywh":
        return xp.stack([a, b, a + w, b + h], axis=-1)
    half_w, half_h = w / 2, h / 2
    return xp.stack([a - half_w, b - half_h, a + half_w, b + half_h], axis=-1)


def from_xyxy(xp: Any, boxes: Array, fmt: str) -> Array:
    """Axis-aligned xyxy boxes (..., 4) as ``fmt`` (``boxes`` itself for xyxy)."""
    if fmt == "xyxy":
        return boxes
    x1, y1, x2, y2 = box_columns(boxes)
    w, h = x2 - x1, y2 - y1
    if fmt == "xywh":
        return xp.stack([x1, y1, w, h], axis=-1)
    return xp.stack([(x1 + x2) / 2, (y1 + y2) / 2, w, h], axis=-1)


# ------------------------------------------------------------------------------ rotated boxes


def check_angle_unit(angle_unit: object) -> Literal["degrees", "radians"]:
    """``angle_unit`` if it is "degrees" or "radians"; ParameterError otherwise."""
    if angle_unit == "degrees":
        return "degrees"
    if angle_unit == "radians":
        return "radians"
    raise ParameterError(f"angle_unit: expected 'degrees' or 'radians', got {angle_unit!r}")


def box_width(fmt: str) -> int:
    """Number of values of one box in ``fmt``: 5, 5, 8 for the rotated formats, else 4."""
    return ROTATED_WIDTH.get(fmt, 4)


def as_rotated(
    xp: Any, x: Array, name: str, fmt: str, *, dtype: Any = None, ndim: int | None = None
) -> Array:
    """Shape-check, cast and validate boxes of any format (last axis 4, 5 or 8)."""
    xp = compat_namespace(xp)
    width = box_width(fmt)
    if width == 4:
        arr = as_boxes(xp, x, name, dtype=dtype, ndim=ndim)
        validate_boxes(arr, name, fmt)
        return arr
    shape = tuple(x.shape)
    if (ndim is not None and len(shape) != ndim) or len(shape) == 0 or shape[-1] != width:
        want = f"(N, {width})" if ndim == 2 else f"(..., {width})"
        raise BoxError(f"{name}: expected shape {want} for {fmt!r} boxes, got {shape}")
    if not xp.isdtype(x.dtype, ("bool", "integral", "real floating")):
        raise BoxError(f"{name}: expected a real-valued array, got dtype {x.dtype}")
    target = float_dtype_for(xp, x) if dtype is None else dtype
    arr = x if x.dtype == target else xp.astype(x, target)
    _validate_rotated(arr, name, fmt)
    return arr


def _validate_rotated(x: Array, name: str, fmt: str) -> None:
    view = host_view(x)
    if view is None or view.size == 0:
        return
    finite = np.isfinite(view).all(axis=-1)
    ok = finite if fmt == "xyxyxyxy" else finite & (view[..., 2] >= 0) & (view[..., 3] >= 0)
    if ok.all():
        return
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    where = name + "".join(f"[{i}]" for i in index)
    reason = (
        "a NaN or infinite coordinate or angle" if not finite[index] else "negative width or height"
    )
    raise BoxError(f"{where}: invalid {fmt} box {view[index].tolist()}: {reason}")


def radians(xp: Any, r: Array, angle_unit: str, clockwise: bool) -> Array:
    """The angle in radians, counter-clockwise (torchvision: ``r * pi / 180.0``)."""
    r = -r if clockwise else r
    return r * math.pi / 180.0 if angle_unit == "degrees" else r


def from_radians(r_rad: Array, angle_unit: str, clockwise: bool) -> Array:
    """Counter-clockwise radians back to ``angle_unit`` and direction (inverse of radians)."""
    r = r_rad * 180 / math.pi if angle_unit == "degrees" else r_rad
    return -r if clockwise else r


def cxcywhr_to_xywhr(xp: Any, boxes: Array, unit: str, cw: bool) -> Array:
    """Rotated boxes (..., 5) from centre form to first-corner form."""
    cx, cy, w, h, r = (boxes[..., k] for k in range(5))
    r_rad = radians(xp, r, unit, cw)
    cos, sin = xp.cos(r_rad), xp.sin(r_rad)
    x1 = cx - w / 2 * cos - h / 2 * sin
    y1 = cy - h / 2 * cos + w / 2 * sin
    return xp.stack((x1, y1, w, h, r), axis=-1)


def xywhr_to_cxcywhr(xp: Any, boxes: Array, unit: str, cw: bool) -> Array:
    """Rotated boxes (..., 5) from first-corner form to centre form."""
    x1, y1, w, h, r = (boxes[..., k] for k in range(5))
    r_rad = radians(xp, r, unit, cw)
    cos, sin = xp.cos(r_rad), xp.sin(r_rad)
    cx = x1 + w / 2 * cos + h / 2 * sin
    cy = y1 - w / 2 * sin + h / 2 * cos
    return xp.stack((cx, cy, w, h, r), axis=-1)


def xywhr_to_xyxyxyxy(xp: Any, boxes: Array, unit: str, cw: bool) -> Array:
    """Rotated boxes (..., 5) in first-corner form as their four corners (..., 8)."""
    x1, y1, w, h, r = (boxes[..., k] for k in range(5))
    r_rad = radians(xp, r, unit, cw)
    cos, sin = xp.cos(r_rad), xp.sin(r_rad)
    x2 = x1 + w * cos
    y2 = y1 - w * sin
    x3 = x2 + h * sin
    y3 = y2 + h * cos
    x4 = x1 + h * sin
    y4 = y1 + h * cos
    return xp.stack((x1, y1, x2, y2, x3, y3, x4, y4), axis=-1)


def xyxyxyxy_to_xywhr(xp: Any, boxes: Array, unit: str, cw: bool) -> Array:
    """Corners (..., 8) as first-corner rotated boxes (..., 5) (from the first three).

    The corners may go round the box either way. ioukit's (and torchvision's) order turns
    clockwise on the image, a positive shoelace area in x-y axes; corners in the other winding
    (Ultralytics' ``xywhr2xyxyxyxy``, many label files) are read as ``1, 4, 3, 2``, so both
    orders give the same rectangle (torchvision would mirror the second one). That is
    torchvision's result bit for bit in its own winding.
    """
    x1, y1, x3, y3 = boxes[..., 0], boxes[..., 1], boxes[..., 4], boxes[..., 5]
    reverse = _shoelace2(boxes) < 0
    x2 = xp.where(reverse, boxes[..., 6], boxes[..., 2])
    y2 = xp.where(reverse, boxes[..., 7], boxes[..., 3])
    r = from_radians(xp.atan2(y1 - y2, x2 - x1), unit, cw)
    w = xp.sqrt((x2 - x1) ** 2 + (y1 - y2) ** 2)
    h = xp.sqrt((x2 - x3) ** 2 + (y2 - y3) ** 2)
    return xp.stack((x1, y1, w, h, r), axis=-1)


def to_xyxyxyxy(xp: Any, boxes: Array, fmt: str, unit: str, cw: bool) -> Array:
    """Corners of boxes in any format (axis-aligned ones included)."""
    if fmt == "xyxyxyxy":
        return boxes
    if fmt == "xywhr":
        return xywhr_to_xyxyxyxy(xp, boxes, unit, cw)
    if fmt == "cxcywhr":
        return xywhr_to_xyxyxyxy(xp, cxcywhr_to_xywhr(xp, boxes, unit, cw), unit, cw)
    x1, y1, x2, y2 = box_columns(to_xyxy(xp, boxes, fmt))
    return xp.stack((x1, y1, x2, y1, x2, y2, x1, y2), axis=-1)


def _shoelace2(c: Array) -> Array:
    """Twice the shoelace area (...) of corners (..., 8): positive in ioukit's winding."""
    dx2, dy2 = c[..., 4] - c[..., 0], c[..., 5] - c[..., 1]
    first = (c[..., 2] - c[..., 0]) * dy2 - dx2 * (c[..., 3] - c[..., 1])
    return first + (dx2 * (c[..., 7] - c[..., 1]) - (c[..., 6] - c[..., 0]) * dy2)
