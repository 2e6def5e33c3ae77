"""Box formats: conversion, normalisation, area and clipping.

Three formats, all continuous coordinates (a box ``[0, 0, 2, 2]`` has area 4, no +1):

``"xyxy"``
    corners ``(x1, y1, x2, y2)`` with ``x2 >= x1`` and ``y2 >= y1``; ioukit's canonical form.
``"xywh"``
    COCO: top-left corner and size ``(x, y, w, h)``.
``"cxcywh"``
    YOLO: centre and size ``(cx, cy, w, h)``.

Any of them may be *normalized* (divided by the image width and height, as YOLO label files
are); ``image_size=(W, H)`` converts between normalized and pixel units.

Rotated (oriented) boxes, with the names and definitions of ``torchvision.ops.box_convert``:

``"cxcywhr"``
    centre, size and angle ``(cx, cy, w, h, r)``.
``"xywhr"``
    first corner, size and angle ``(x1, y1, w, h, r)``; ``(x1, y1)`` is the corner that is the
    top-left one when ``r = 0``.
``"xyxyxyxy"``
    the four corners ``(x1, y1, x2, y2, x3, y3, x4, y4)``: top-left, top-right, bottom-right,
    bottom-left when ``r = 0``; read in either winding and from any corner (any simple
    quadrilateral for IoU).

By default ``r`` is in degrees and turns the box counter-clockwise as seen on the image (y
pointing down), as in torchvision and detectron2. ``angle_unit="radians"`` and ``clockwise=True``
read (and write) the angle of mmcv/mmrotate (``le90``/``oc``) and Ultralytics OBB (``xywhr``
there is ioukit's ``cxcywhr`` with ``angle_unit="radians", clockwise=True``). Converting a
rotated box to ``"xyxy"``, ``"xywh"`` or ``"cxcywh"`` gives its axis-aligned envelope; an
axis-aligned box becomes a rotated box with angle 0.

Every function takes Python sequences, NumPy, PyTorch, JAX, CuPy or any array-API array of
shape ``(..., 4)`` and returns an array of the same library, float dtype and device.
Inputs are never modified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ioukit._array import (
    Array,
    as_boxes,
    check_format,
    check_image_size,
    namespace_of,
    validate_boxes,
)
from ioukit._box_formats import (
    as_rotated,
    box_columns,
    check_angle_unit,
    cxcywhr_to_xywhr,
    from_xyxy,
    to_xyxy,
    to_xyxyxyxy,
    xywhr_to_cxcywhr,
    xywhr_to_xyxyxyxy,
    xyxyxyxy_to_xywhr,
)
from ioukit.errors import ParameterError

__all__ = [
    "box_area",
    "box_convert",
    "clip_boxes",
    "denormalize_boxes",
    "normalize_boxes",
    "prepare_boxes",
    "prepare_rotated_corners",
]

ROTATED_FORMATS = ("cxcywhr", "xywhr", "xyxyxyxy")
"""The rotated box formats and their number of values: 5, 5 and 8."""


def _scale(xp: Any, boxes: Array, sx: float, sy: float) -> Array:
    a, b, c, d = box_columns(boxes)
    return xp.stack([a * sx, b * sy, c * sx, d * sy], axis=-1)


def prepare_boxes(
    xp: Any, boxes: Array, name: str, fmt: str, *, dtype: Any = None, ndim: int | None = None
) -> Array:
    """Shape-check, cast, validate and convert ``boxes`` to float xyxy.

    The one place where ioukit's input rules for boxes live; every function that takes boxes
    calls it. ``xp`` is the namespace from :func:`ioukit._array.namespace_of`.

    Parameters
    ----------
    xp : namespace
    boxes : array, shape (..., 4)
    name : str
        Argument name for error messages.
    fmt : {"xyxy", "xywh", "cxcywh"}
    dtype : dtype, optional
        Float dtype to compute in (default: see :func:`ioukit._array.float_dtype_for`).
    ndim : int, optional
        Required number of dimensions.

    Returns
    -------
    array, shape (..., 4)
        Float xyxy boxes.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> prepare_boxes(xp, xp.asarray([[1, 2, 3, 4]]), "boxes", "xywh")
    array([[1., 2., 4., 6.]])
    """
    check_format(fmt)
    boxes = as_boxes(xp, boxes, name, dtype=dtype, ndim=ndim)
    validate_boxes(boxes, name, fmt)
    return to_xyxy(xp, boxes, fmt)


def box_convert(
    boxes: Array,
    /,
    in_fmt: str,
    out_fmt: str,
    *,
    image_size: Sequence[float] | None = None,
    normalized: Literal["input", "output"] = "input",
    angle_unit: Literal["degrees", "radians"] = "degrees",
    clockwise: bool = False,
) -> Array:
    """Convert boxes between ``"xyxy"``, ``"xywh"``, ``"cxcywh"`` and the rotated formats.

    Parameters
    ----------
    boxes : array_like, shape (..., 4), (..., 5) or (..., 8)
        Boxes in ``in_fmt``.
    in_fmt, out_fmt : {"xyxy", "xywh", "cxcywh", "cxcywhr", "xywhr", "xyxyxyxy"}
        Source and target formats (torchvision's names, definitions and argument order). Between
        rotated formats the values are torchvision's bit for bit (in its default angle
        convention), except for ``"xyxyxyxy"`` corners listed the other way round (Ultralytics'
        order), which give the same rectangle where torchvision mirrors it; from a rotated to an
        axis-aligned format the result is the envelope.
    image_size : (width, height), optional
        When given, one side is in normalized units (fractions of the image size, as in YOLO
        label files) and the other in pixels. With rotated boxes the normalized side must be
        ``"xyxyxyxy"`` or axis-aligned (a normalized angle would not be an angle).
    normalized : {"input", "output"}
        Which side is normalized when ``image_size`` is given: ``"input"`` turns normalized
        boxes into pixels, ``"output"`` turns pixel boxes into normalized ones.
    angle_unit : {"degrees", "radians"}
        Unit of the angle column of ``cxcywhr``/``xywhr`` (input and output).
    clockwise : bool
        The angle turns the box clockwise on the image (mmcv, mmrotate, Ultralytics) instead of
        counter-clockwise (torchvision, detectron2).

    Returns
    -------
    array, shape (..., 4), (..., 5) or (..., 8)
        Float boxes in ``out_fmt``, same library and device as ``boxes``.

    Raises
    ------
    BoxError
        Wrong shape, a NaN or infinite coordinate or angle, or a negative size.

    Examples
    --------
    >>> import numpy as np
    >>> box_convert(np.array([[10, 20, 30, 40]]), "xywh", "xyxy")
    array([[10., 20., 40., 60.]])
    >>> box_convert([[0.5, 0.5, 0.25, 0.5]], "cxcywh", "xyxy", image_size=(640, 480))
    array([[240., 120., 400., 360.]])
    >>> box_convert([[240, 120, 400, 360]], "xyxy", "cxcywh", image_size=(640, 480),
    ...             normalized="output")
    array([[0.5 , 0.5 , 0.25, 0.5 ]])
    >>> box_convert(np.zeros((0, 4)), "xyxy", "cxcywh").shape
    (0, 4)

    Rotated boxes (a 90° counter-clockwise turn swaps the envelope's width and height):

    >>> box_convert([[50, 50, 40, 20, 90]], "cxcywhr", "xyxyxyxy").round(6)
    array([[40., 70., 40., 30., 60., 30., 60., 70.]])
    >>> box_convert([[50, 50, 40, 20, 90]], "cxcywhr", "xyxy").round(6)
    array([[40., 30., 60., 70.]])
    >>> box_convert([[50, 50, 40, 20, np.pi / 2]], "cxcywhr", "xyxy", angle_unit="radians",
    ...             clockwise=True).round(6)
    array([[40., 30., 60., 70.]])
    """
    if in_fmt in ROTATED_FORMATS or out_fmt in ROTATED_FORMATS:
        return _convert_rotated(
            boxes, in_fmt, out_fmt, image_size, normalized, check_angle_unit(angle_unit), clockwise
        )
    check_format(out_fmt, "out_fmt")
    check_format(in_fmt, "in_fmt")
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    xyxy = prepare_boxes(xp, arr, "boxes", in_fmt)
    if image_size is None:
        return from_xyxy(xp, xyxy, out_fmt)
    width, height = check_image_size(image_size)
    if normalized == "input":
        return from_xyxy(xp, _scale(xp, xyxy, width, height), out_fmt)
    if normalized == "output":
        return _scale(xp, from_xyxy(xp, xyxy, out_fmt), 1 / width, 1 / height)
    raise ParameterError(f"normalized: expected 'input' or 'output', got {normalized!r}")


def _by_image_size(boxes: Array, image_size: Sequence[float], *, divide: bool) -> Array:
    """``boxes`` with x scaled by the image width and y by its height (by their inverses when
    ``divide``)."""
    width, height = check_image_size(image_size)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    arr = as_boxes(xp, arr, "boxes")
    if divide:
        return _scale(xp, arr, 1 / width, 1 / height)
    return _scale(xp, arr, width, height)


def normalize_boxes(boxes: Array, /, image_size: Sequence[float]) -> Array:
    """Divide x coordinates by the image width and y coordinates by its height.

    Works for every format, because each one stores x-like values in columns 0 and 2 and
    y-like values in columns 1 and 3.

    Parameters
    ----------
    boxes : array_like, shape (..., 4)
    image_size : (width, height)

    Returns
    -------
    array, shape (..., 4)

    Examples
    --------
    >>> normalize_boxes([[64, 48, 320, 240]], (640, 480))
    array([[0.1, 0.1, 0.5, 0.5]])
    """
    return _by_image_size(boxes, image_size, divide=True)


def denormalize_boxes(boxes: Array, /, image_size: Sequence[float]) -> Array:
    """Multiply normalized x coordinates by the image width and y by its height.

    The inverse of :func:`normalize_boxes`, with its parameters and result shape.

    Parameters
    ----------
    boxes, image_size
        As for :func:`normalize_boxes`.

    Returns
    -------
    array

    Examples
    --------
    >>> denormalize_boxes([[0.5, 0.5, 0.25, 0.5]], (640, 480))
    array([[320., 240., 160., 240.]])
    """
    return _by_image_size(boxes, image_size, divide=False)


def box_area(boxes: Array, /, *, fmt: str = "xyxy") -> Array:
    """Area of each box, in continuous coordinates (no +1).

    Parameters
    ----------
    boxes : array_like, shape (..., 4)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> box_area([[0, 0, 2, 2], [1, 1, 4, 3]])
    array([4., 6.])
    >>> box_area([[10, 10, 3, 5]], fmt="xywh")
    array([15.])
    """
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    x1, y1, x2, y2 = box_columns(prepare_boxes(xp, arr, "boxes", fmt))
    return (x2 - x1) * (y2 - y1)


def clip_boxes(boxes: Array, /, image_size: Sequence[float], *, fmt: str = "xyxy") -> Array:
    """Clip boxes to the image ``[0, W] x [0, H]``, returning them in the same format.

    Parameters
    ----------
    boxes : array_like, shape (..., 4)
    image_size : (width, height)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (..., 4)

    Examples
    --------
    >>> clip_boxes([[-5, 10, 700, 500]], (640, 480))
    array([[  0.,  10., 640., 480.]])
    """
    width, height = check_image_size(image_size)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    x1, y1, x2, y2 = box_columns(prepare_boxes(xp, arr, "boxes", fmt))
    clipped = xp.stack(
        [
            xp.clip(x1, min=0.0, max=width),
            xp.clip(y1, min=0.0, max=height),
            xp.clip(x2, min=0.0, max=width),
            xp.clip(y2, min=0.0, max=height),
        ],
        axis=-1,
    )
    return from_xyxy(xp, clipped, fmt)


# ------------------------------------------------------------------------------ rotated boxes


def _envelope(xp: Any, corners: Array) -> Array:
    xs = xp.stack([corners[..., k] for k in (0, 2, 4, 6)], axis=-1)
    ys = xp.stack([corners[..., k] for k in (1, 3, 5, 7)], axis=-1)
    return xp.stack(
        (xp.min(xs, axis=-1), xp.min(ys, axis=-1), xp.max(xs, axis=-1), xp.max(ys, axis=-1)),
        axis=-1,
    )


def _rotated_from(xp: Any, boxes: Array, fmt: str, out_fmt: str, unit: str, cw: bool) -> Array:
    """Rotated ``out_fmt`` from ``boxes`` in ``fmt`` (torchvision's conversion chain)."""
    if fmt == out_fmt:
        return boxes
    if fmt not in ROTATED_FORMATS:  # axis-aligned: angle 0
        x1, y1, x2, y2 = box_columns(to_xyxy(xp, boxes, fmt))
        zero = xp.zeros_like(x1)
        if out_fmt == "xyxyxyxy":
            return xp.stack((x1, y1, x2, y1, x2, y2, x1, y2), axis=-1)
        if out_fmt == "xywhr":
            return xp.stack((x1, y1, x2 - x1, y2 - y1, zero), axis=-1)
        return xp.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, zero), axis=-1)
    if (fmt, out_fmt) == ("cxcywhr", "xywhr"):
        return cxcywhr_to_xywhr(xp, boxes, unit, cw)
    if (fmt, out_fmt) == ("xywhr", "cxcywhr"):
        return xywhr_to_cxcywhr(xp, boxes, unit, cw)
    if (fmt, out_fmt) == ("xywhr", "xyxyxyxy"):
        return xywhr_to_xyxyxyxy(xp, boxes, unit, cw)
    if (fmt, out_fmt) == ("xyxyxyxy", "xywhr"):
        return xyxyxyxy_to_xywhr(xp, boxes, unit, cw)
    if (fmt, out_fmt) == ("cxcywhr", "xyxyxyxy"):
        return xywhr_to_xyxyxyxy(xp, cxcywhr_to_xywhr(xp, boxes, unit, cw), unit, cw)
    # xyxyxyxy -> cxcywhr
    return xywhr_to_cxcywhr(xp, xyxyxyxy_to_xywhr(xp, boxes, unit, cw), unit, cw)


def _scale_corners(xp: Any, corners: Array, sx: float, sy: float) -> Array:
    return xp.stack([corners[..., k] * (sx if k % 2 == 0 else sy) for k in range(8)], axis=-1)


def _convert_rotated(
    boxes: Array,
    in_fmt: str,
    out_fmt: str,
    image_size: Sequence[float] | None,
    normalized: str,
    unit: str,
    clockwise: bool,
) -> Array:
    for fmt, arg in ((out_fmt, "out_fmt"), (in_fmt, "in_fmt")):
        if fmt not in ROTATED_FORMATS:
            check_format(fmt, arg)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    arr = as_rotated(xp, arr, "boxes", in_fmt)
    cw = bool(clockwise)
    scale: tuple[float, float] | None = None
    if image_size is not None:
        if normalized not in ("input", "output"):
            raise ParameterError(f"normalized: expected 'input' or 'output', got {normalized!r}")
        side = in_fmt if normalized == "input" else out_fmt
        if side in ("cxcywhr", "xywhr"):
            raise ParameterError(
                f"image_size: normalized {side!r} boxes are not supported (an angle cannot be "
                "normalized); use 'xyxyxyxy' for the normalized side"
            )
        scale = check_image_size(image_size)
    if scale is not None and normalized == "input":
        if in_fmt == "xyxyxyxy":
            arr = _scale_corners(xp, arr, scale[0], scale[1])
        else:
            arr = _scale(xp, arr, scale[0], scale[1])
    if out_fmt in ROTATED_FORMATS:
        out = _rotated_from(xp, arr, in_fmt, out_fmt, unit, cw)
    else:
        out = from_xyxy(xp, _envelope(xp, to_xyxyxyxy(xp, arr, in_fmt, unit, cw)), out_fmt)
    if scale is not None and normalized == "output":
        if out_fmt == "xyxyxyxy":
            return _scale_corners(xp, out, 1 / scale[0], 1 / scale[1])
        return _scale(xp, out, 1 / scale[0], 1 / scale[1])
    return out


def prepare_rotated_corners(
    xp: Any,
    boxes: Array,
    name: str,
    fmt: str,
    *,
    angle_unit: str = "degrees",
    clockwise: bool = False,
    dtype: Any = None,
    ndim: int | None = None,
) -> Array:
    """Shape-check, cast and validate boxes of any format and return their corners.

    The input rules for rotated boxes live here, as :func:`prepare_boxes` holds those of
    axis-aligned ones.

    Parameters
    ----------
    xp : namespace
    boxes : array, shape (..., 4), (..., 5) or (..., 8)
    name : str
        Argument name for error messages.
    fmt : {"cxcywhr", "xywhr", "xyxyxyxy", "xyxy", "xywh", "cxcywh"}
    angle_unit : {"degrees", "radians"}
    clockwise : bool
    dtype : dtype, optional
    ndim : int, optional

    Returns
    -------
    array, shape (..., 8)
        The corners ``(x1, y1, ..., x4, y4)``, as ``box_convert(boxes, fmt, "xyxyxyxy")``.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> prepare_rotated_corners(xp, xp.asarray([[0, 0, 2, 1]]), "boxes", "xyxy")
    array([[0., 0., 2., 0., 2., 1., 0., 1.]])
    """
    if fmt not in ROTATED_FORMATS:
        check_format(fmt)
    unit = check_angle_unit(angle_unit)
    arr = as_rotated(xp, boxes, name, fmt, dtype=dtype, ndim=ndim)
    return to_xyxyxyxy(xp, arr, fmt, unit, bool(clockwise))
