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

Every function takes Python sequences, NumPy, PyTorch, JAX, CuPy or any array-API array of
shape ``(..., 4)`` and returns an array of the same library, float dtype and device.
Inputs are never modified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from ioukit._array import Array, as_boxes, check_format, namespace_of, validate_boxes

__all__ = [
    "box_area",
    "box_convert",
    "clip_boxes",
    "denormalize_boxes",
    "normalize_boxes",
    "prepare_boxes",
]


def _columns(boxes: Array) -> tuple[Array, Array, Array, Array]:
    return boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]


def _to_xyxy(xp: Any, boxes: Array, fmt: str) -> Array:
    if fmt == "xyxy":
        return boxes
    a, b, w, h = _columns(boxes)
    if fmt == "xywh":
        return xp.stack([a, b, a + w, b + h], axis=-1)
    half_w, half_h = w / 2, h / 2
    return xp.stack([a - half_w, b - half_h, a + half_w, b + half_h], axis=-1)


def _from_xyxy(xp: Any, boxes: Array, fmt: str) -> Array:
    if fmt == "xyxy":
        return boxes
    x1, y1, x2, y2 = _columns(boxes)
    w, h = x2 - x1, y2 - y1
    if fmt == "xywh":
        return xp.stack([x1, y1, w, h], axis=-1)
    return xp.stack([(x1 + x2) / 2, (y1 + y2) / 2, w, h], axis=-1)


def _check_image_size(image_size: object) -> tuple[float, float]:
    try:
        width, height = (float(v) for v in image_size)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ValueError(f"image_size: expected (width, height), got {image_size!r}") from None
    if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
        raise ValueError(
            f"image_size: expected positive finite (width, height), got {image_size!r}"
        )
    return width, height


def _scale(xp: Any, boxes: Array, sx: float, sy: float) -> Array:
    a, b, c, d = _columns(boxes)
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
    return _to_xyxy(xp, boxes, fmt)


def box_convert(
    boxes: Array,
    /,
    in_fmt: str,
    out_fmt: str,
    *,
    image_size: Sequence[float] | None = None,
    normalized: Literal["input", "output"] = "input",
) -> Array:
    """Convert boxes between ``"xyxy"``, ``"xywh"`` and ``"cxcywh"``.

    Parameters
    ----------
    boxes : array_like, shape (..., 4)
        Boxes in ``in_fmt``.
    in_fmt, out_fmt : {"xyxy", "xywh", "cxcywh"}
        Source and target formats (torchvision's names and argument order).
    image_size : (width, height), optional
        When given, one side is in normalized units (fractions of the image size, as in YOLO
        label files) and the other in pixels.
    normalized : {"input", "output"}
        Which side is normalized when ``image_size`` is given: ``"input"`` turns normalized
        boxes into pixels, ``"output"`` turns pixel boxes into normalized ones.

    Returns
    -------
    array, shape (..., 4)
        Float boxes in ``out_fmt``, same library and device as ``boxes``.

    Raises
    ------
    BoxError
        Wrong shape, a NaN or infinite coordinate, or a negative size.

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
    """
    check_format(out_fmt, "out_fmt")
    check_format(in_fmt, "in_fmt")
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    xyxy = prepare_boxes(xp, arr, "boxes", in_fmt)
    if image_size is None:
        return _from_xyxy(xp, xyxy, out_fmt)
    width, height = _check_image_size(image_size)
    if normalized == "input":
        return _from_xyxy(xp, _scale(xp, xyxy, width, height), out_fmt)
    if normalized == "output":
        return _scale(xp, _from_xyxy(xp, xyxy, out_fmt), 1 / width, 1 / height)
    raise ValueError(f"normalized: expected 'input' or 'output', got {normalized!r}")


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
    width, height = _check_image_size(image_size)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    arr = as_boxes(xp, arr, "boxes")
    return _scale(xp, arr, 1 / width, 1 / height)


def denormalize_boxes(boxes: Array, /, image_size: Sequence[float]) -> Array:
    """Multiply normalized x coordinates by the image width and y by its height.

    Parameters
    ----------
    boxes : array_like, shape (..., 4)
    image_size : (width, height)

    Returns
    -------
    array, shape (..., 4)

    Examples
    --------
    >>> denormalize_boxes([[0.5, 0.5, 0.25, 0.5]], (640, 480))
    array([[320., 240., 160., 240.]])
    """
    width, height = _check_image_size(image_size)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    arr = as_boxes(xp, arr, "boxes")
    return _scale(xp, arr, width, height)


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
    x1, y1, x2, y2 = _columns(prepare_boxes(xp, arr, "boxes", fmt))
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
    width, height = _check_image_size(image_size)
    xp, (arr,) = namespace_of(boxes, names=("boxes",))
    x1, y1, x2, y2 = _columns(prepare_boxes(xp, arr, "boxes", fmt))
    clipped = xp.stack(
        [
            xp.clip(x1, min=0.0, max=width),
            xp.clip(y1, min=0.0, max=height),
            xp.clip(x2, min=0.0, max=width),
            xp.clip(y2, min=0.0, max=height),
        ],
        axis=-1,
    )
    return _from_xyxy(xp, clipped, fmt)
