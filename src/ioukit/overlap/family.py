"""Public IoU-family functions: pairwise ``(N, M)`` matrices and aligned ``(N,)`` pairs.

Names and argument order follow ``torchvision.ops`` so switching is an import change.
Every function accepts Python sequences, NumPy, PyTorch (CPU or GPU), JAX, CuPy or any
array-API array, and returns the caller's array type, float dtype and device. Integer inputs
become the library's default float; float16/bfloat16 are computed in float32.

Degenerate boxes give 0, never NaN (torchvision gives NaN for two identical zero-area boxes).
Boxes are validated (finite, ``x2 >= x1``, ``y2 >= y1``) whenever they live in host memory;
for tensors on an accelerator and for JAX values under ``jit`` the check is skipped, because
it would force a device synchronisation.

Pairwise functions on NumPy inputs with at least 4096 output elements run in a fused compiled
kernel that gives bit-identical values and allocates nothing but the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ioukit._array import Array, float_dtype_for, namespace_of
from ioukit._kernels import iou_matrix
from ioukit.boxes import prepare_boxes
from ioukit.errors import BoxError
from ioukit.overlap import _formulas, _safe

__all__ = [
    "box_dice",
    "box_dice_elementwise",
    "box_intersection_elementwise",
    "box_iou",
    "box_iou_elementwise",
    "complete_box_iou",
    "complete_box_iou_elementwise",
    "distance_box_iou",
    "distance_box_iou_elementwise",
    "generalized_box_iou",
    "generalized_box_iou_elementwise",
    "iou",
]

KERNEL_MIN_ELEMENTS = 4096
"""Pairwise NumPy results at least this large are computed by the compiled kernel."""

DEFAULT_EPS = 1e-7


def _columns(boxes: Array) -> _formulas.Coords:
    return boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]


def _prepare_pair(
    boxes1: Array, boxes2: Array, fmt: str, ndim: int | None
) -> tuple[Any, Array, Array]:
    xp, (a, b) = namespace_of(boxes1, boxes2, names=("boxes1", "boxes2"))
    dtype = xp.result_type(float_dtype_for(xp, a), float_dtype_for(xp, b))
    a = prepare_boxes(xp, a, "boxes1", fmt, dtype=dtype, ndim=ndim)
    b = prepare_boxes(xp, b, "boxes2", fmt, dtype=dtype, ndim=ndim)
    return xp, a, b


def _pairwise(
    metric: str,
    boxes1: Array,
    boxes2: Array,
    *,
    fmt: str = "xyxy",
    eps: float = DEFAULT_EPS,
    use_kernel: bool | None = None,
) -> Array:
    """The (N, M) matrix of ``metric`` (a key of ``_formulas.FORMULAS``) between two box sets.

    ``use_kernel`` forces (True) or forbids (False) the compiled kernel for NumPy inputs; by
    default it is used from :data:`KERNEL_MIN_ELEMENTS` output elements on.
    """
    xp, a, b = _prepare_pair(boxes1, boxes2, fmt, ndim=2)
    if isinstance(a, np.ndarray) and (_safe.extreme(a).any() or _safe.extreme(b).any()):
        with np.errstate(all="ignore"):  # overflow here is expected: the pairs are redone
            out = _pairwise_direct(xp, metric, a, b, eps, use_kernel)
        _safe.fix_pairwise(metric, a, b, eps, out)
        return out
    return _pairwise_direct(xp, metric, a, b, eps, use_kernel)


def _pairwise_direct(
    xp: Any, metric: str, a: Array, b: Array, eps: float, use_kernel: bool | None
) -> Array:
    if isinstance(a, np.ndarray):
        wanted = (
            a.shape[0] * b.shape[0] >= KERNEL_MIN_ELEMENTS if use_kernel is None else use_kernel
        )
        if wanted:
            if metric == "ciou":
                angle1 = _formulas.aspect_angle(xp, _columns(a))
                angle2 = _formulas.aspect_angle(xp, _columns(b))
            else:
                angle1 = angle2 = np.empty(0, dtype=a.dtype)
            return iou_matrix.pairwise(metric, a, b, angle1, angle2, eps)
    rows = tuple(c[:, None] for c in _columns(a))
    cols = tuple(c[None, :] for c in _columns(b))
    return _formulas.FORMULAS[metric](xp, rows, cols, eps)


def _elementwise(
    metric: str, boxes1: Array, boxes2: Array, *, fmt: str = "xyxy", eps: float = DEFAULT_EPS
) -> Array:
    """``metric`` between aligned boxes: shapes (..., 4) that broadcast give shape (...)."""
    xp, a, b = _prepare_pair(boxes1, boxes2, fmt, ndim=None)
    _check_broadcast(a, b)
    if isinstance(a, np.ndarray):
        bad = _safe.extreme(a) | _safe.extreme(b)
        if bad.any():
            with np.errstate(all="ignore"):  # overflow here is expected: the pairs are redone
                direct = _formulas.FORMULAS[metric](xp, _columns(a), _columns(b), eps)
            return np.where(bad, _safe.rescaled(metric, a, b, eps), direct)
    return _formulas.FORMULAS[metric](xp, _columns(a), _columns(b), eps)


def _check_broadcast(a: Array, b: Array) -> None:
    try:
        np.broadcast_shapes(tuple(a.shape[:-1]), tuple(b.shape[:-1]))
    except ValueError:
        raise BoxError(
            f"boxes1 and boxes2: expected aligned shapes (..., 4) that broadcast, "
            f"got {tuple(a.shape)} and {tuple(b.shape)}"
        ) from None


def box_iou(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Intersection over union of every pair: ``I / (A + B - I)``, 0 when the union is 0.

    Parameters
    ----------
    boxes1 : array_like, shape (N, 4)
    boxes2 : array_like, shape (M, 4)
    fmt : {"xyxy", "xywh", "cxcywh"}
        Format of both box sets.

    Returns
    -------
    array, shape (N, M)
        ``out[i, j]`` is the IoU of ``boxes1[i]`` and ``boxes2[j]``.

    Raises
    ------
    BoxError
        A shape other than (N, 4), a NaN or infinite coordinate, or ``x2 < x1``/``y2 < y1``.

    Examples
    --------
    >>> box_iou([[0, 0, 2, 2], [0, 0, 1, 1]], [[1, 1, 3, 3]])
    array([[0.14285714],
           [0.        ]])
    >>> box_iou(np.zeros((0, 4)), [[0, 0, 1, 1]]).shape
    (0, 1)
    """
    return _pairwise("iou", boxes1, boxes2, fmt=fmt)


def box_dice(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Dice coefficient of every pair: ``2 I / (A + B)`` (= 2 IoU / (1 + IoU)).

    Parameters
    ----------
    boxes1 : array_like, shape (N, 4)
    boxes2 : array_like, shape (M, 4)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (N, M)

    Examples
    --------
    >>> box_dice([[100, 80, 300, 280]], [[120, 100, 320, 300]])
    array([[0.81]])
    """
    return _pairwise("dice", boxes1, boxes2, fmt=fmt)


def generalized_box_iou(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Generalized IoU of every pair: ``IoU - (C - U) / C``, C the enclosing box's area.

    Values lie in (-1, 1]. Identical zero-area boxes give 0 (torchvision: NaN).

    Parameters
    ----------
    boxes1 : array_like, shape (N, 4)
    boxes2 : array_like, shape (M, 4)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (N, M)

    Examples
    --------
    >>> generalized_box_iou([[0, 0, 1, 1]], [[2, 0, 3, 1]])
    array([[-0.33333333]])
    """
    return _pairwise("giou", boxes1, boxes2, fmt=fmt)


def distance_box_iou(
    boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy", eps: float = DEFAULT_EPS
) -> Array:
    """Distance IoU of every pair: ``IoU - rho^2 / (c^2 + eps)``.

    rho is the distance between the box centres and c the diagonal of the enclosing box.

    Parameters
    ----------
    boxes1 : array_like, shape (N, 4)
    boxes2 : array_like, shape (M, 4)
    fmt : {"xyxy", "xywh", "cxcywh"}
    eps : float
        Added to c^2, as in torchvision.

    Returns
    -------
    array, shape (N, M)

    Examples
    --------
    >>> distance_box_iou([[0, 0, 10, 10]], [[2, 2, 12, 8]]).round(6)
    array([[0.412178]])
    """
    return _pairwise("diou", boxes1, boxes2, fmt=fmt, eps=eps)


def complete_box_iou(
    boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy", eps: float = DEFAULT_EPS
) -> Array:
    """Complete IoU of every pair: ``DIoU - alpha v``.

    ``v = 4/pi^2 (atan(w1/h1) - atan(w2/h2))^2`` compares aspect ratios and
    ``alpha = v / (1 - IoU + v + eps)`` is computed without gradient, as in torchvision.

    Parameters
    ----------
    boxes1 : array_like, shape (N, 4)
    boxes2 : array_like, shape (M, 4)
    fmt : {"xyxy", "xywh", "cxcywh"}
    eps : float

    Returns
    -------
    array, shape (N, M)

    Examples
    --------
    >>> complete_box_iou([[0, 0, 10, 10]], [[2, 2, 12, 8]]).round(7)
    array([[0.4111849]])
    """
    return _pairwise("ciou", boxes1, boxes2, fmt=fmt, eps=eps)


def box_iou_elementwise(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """IoU of aligned pairs ``boxes1[i]``, ``boxes2[i]``.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
        Shapes broadcast against each other.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> box_iou_elementwise([[0, 0, 4, 4], [0, 0, 1, 1]], [[2, 0, 6, 4], [2, 2, 3, 3]])
    array([0.33333333, 0.        ])
    """
    return _elementwise("iou", boxes1, boxes2, fmt=fmt)


def box_intersection_elementwise(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Intersection area of aligned pairs: each overlap side clamped at 0, then multiplied.

    The same formula the IoU family uses (one formula in :mod:`ioukit.overlap`).

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
        Shapes broadcast against each other.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> box_intersection_elementwise([[0, 0, 4, 4], [0, 0, 1, 1]], [[2, 0, 6, 4], [2, 2, 3, 3]])
    array([8., 0.])
    """
    xp, a, b = _prepare_pair(boxes1, boxes2, fmt, ndim=None)
    _check_broadcast(a, b)
    return _formulas.intersection(xp, _columns(a), _columns(b))


def box_dice_elementwise(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Dice coefficient of aligned pairs.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> box_dice_elementwise([[0, 0, 4, 4]], [[2, 0, 6, 4]])
    array([0.5])
    """
    return _elementwise("dice", boxes1, boxes2, fmt=fmt)


def generalized_box_iou_elementwise(boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy") -> Array:
    """Generalized IoU of aligned pairs.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> generalized_box_iou_elementwise([[0, 0, 1, 1]], [[0, 0, 1, 1]])
    array([1.])
    """
    return _elementwise("giou", boxes1, boxes2, fmt=fmt)


def distance_box_iou_elementwise(
    boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy", eps: float = DEFAULT_EPS
) -> Array:
    """Distance IoU of aligned pairs.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
    fmt : {"xyxy", "xywh", "cxcywh"}
    eps : float

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> distance_box_iou_elementwise([[0, 0, 2, 2]], [[0, 0, 2, 2]])
    array([1.])
    """
    return _elementwise("diou", boxes1, boxes2, fmt=fmt, eps=eps)


def complete_box_iou_elementwise(
    boxes1: Array, boxes2: Array, /, *, fmt: str = "xyxy", eps: float = DEFAULT_EPS
) -> Array:
    """Complete IoU of aligned pairs.

    Parameters
    ----------
    boxes1, boxes2 : array_like, shape (..., 4)
    fmt : {"xyxy", "xywh", "cxcywh"}
    eps : float

    Returns
    -------
    array, shape (...)

    Examples
    --------
    >>> complete_box_iou_elementwise([[0, 0, 2, 2], [0, 0, 0, 0]], [[0, 0, 2, 2], [0, 0, 0, 0]])
    array([1., 0.])
    """
    return _elementwise("ciou", boxes1, boxes2, fmt=fmt, eps=eps)


def _single_box(box: object, name: str) -> np.ndarray:
    try:
        values = np.asarray(box, dtype=np.float64)
    except (TypeError, ValueError):
        raise BoxError(f"{name}: expected 4 numbers, got {box!r}") from None
    if values.shape != (4,):
        raise BoxError(f"{name}: expected exactly 4 coordinates, got {values.size} values: {box!r}")
    return values[None, :]


def iou(box_a: object, box_b: object, *, fmt: str = "xyxy") -> float:
    """IoU of two boxes, as a Python float: ``I / (A + B - I)``, 0.0 when the union is 0.

    The intersection's width and height are each clamped at 0 before they multiply, so two
    disjoint boxes never get a positive "overlap"; coordinates are continuous (no +1).

    Parameters
    ----------
    box_a, box_b : sequence of 4 numbers
        Two boxes in ``fmt``.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    float

    Raises
    ------
    BoxError
        (a ``ValueError``) for a box without exactly 4 values, a NaN or infinite coordinate,
        or ``x2 < x1``/``y2 < y1``; the message names the argument and shows the box.

    Examples
    --------
    >>> iou((100, 80, 300, 280), (120, 100, 320, 300))
    0.680672268907563
    >>> iou([0, 0, 1, 1], [2, 2, 3, 3])
    0.0
    >>> iou([0, 0, 2, 2], [1, 1, 2, 2], fmt="xywh")
    0.14285714285714285
    """
    a = _single_box(box_a, "box_a")
    b = _single_box(box_b, "box_b")
    try:
        value = _elementwise("iou", a, b, fmt=fmt)
    except BoxError as exc:
        message = str(exc).replace("boxes1[0]", "box_a").replace("boxes2[0]", "box_b")
        raise BoxError(message) from None
    return float(value[0])
