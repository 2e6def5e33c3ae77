"""Bounding-box regression losses with torchvision's semantics.

``loss = 1 - IoU``, ``1 - GIoU``, ``1 - DIoU`` or ``1 - CIoU`` between aligned predicted and
target boxes, with ``eps`` where torchvision puts it (``I / (U + eps)``, ``(C - U) / (C + eps)``,
``c^2 + eps``, CIoU's ``alpha`` computed without gradient). One difference: CIoU's aspect
term uses ``atan(w / h)`` with a flat or point box mapped to pi/2 or 0, so identical point
boxes give a loss of 1 where torchvision gives NaN.
"""

from __future__ import annotations

from typing import Any, Literal

from ioukit._array import Array
from ioukit.errors import ParameterError
from ioukit.overlap import _formulas
from ioukit.overlap.family import DEFAULT_EPS, _check_broadcast, _columns, _prepare_pair

__all__ = [
    "box_iou_loss",
    "complete_box_iou_loss",
    "distance_box_iou_loss",
    "generalized_box_iou_loss",
]

Reduction = Literal["none", "mean", "sum"]


def _reduce(xp: Any, loss: Array, reduction: str) -> Array:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return xp.sum(loss)
    # torchvision: the mean of no boxes is 0, keeping the graph
    size = 1
    for n in loss.shape:
        size *= n
    return xp.mean(loss) if size > 0 else xp.sum(loss) * 0.0


def _loss_iou(xp: Any, a: _formulas.Coords, b: _formulas.Coords, eps: float) -> tuple[Array, Array]:
    """``(I / (U + eps), U)``, the loss-side IoU of torchvision."""
    inter = _formulas.intersection(xp, a, b)
    union = _formulas.area(a) + _formulas.area(b) - inter
    return inter / (union + eps), union


def _loss(kind: str, boxes1: Array, boxes2: Array, reduction: str, eps: float, fmt: str) -> Array:
    if reduction not in ("none", "mean", "sum"):
        raise ParameterError(f"reduction: expected 'none', 'mean' or 'sum', got {reduction!r}")
    xp, p, t = _prepare_pair(boxes1, boxes2, fmt, ndim=None)
    _check_broadcast(p, t)
    a, b = _columns(p), _columns(t)
    overlap, union = _loss_iou(xp, a, b, eps)
    if kind == "iou":
        loss = 1 - overlap
    elif kind == "giou":
        width, height = _formulas.enclosing_size(xp, a, b)
        enclosing = width * height
        loss = 1 - (overlap - (enclosing - union) / (enclosing + eps))
    else:
        loss = 1 - overlap + _formulas.distance_penalty(xp, a, b, eps)
        if kind == "ciou":
            v = _formulas.aspect_penalty(xp, a, b)
            loss = loss + _formulas.ciou_alpha(xp, overlap, v, eps) * v
    return _reduce(xp, loss, reduction)


def box_iou_loss(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    reduction: Reduction = "none",
    eps: float = DEFAULT_EPS,
    fmt: str = "xyxy",
) -> Array:
    """IoU loss ``1 - I / (U + eps)`` between aligned boxes.

    Parameters
    ----------
    boxes1 : array_like, shape (..., 4)
        Predicted boxes.
    boxes2 : array_like, shape (..., 4)
        Target boxes (broadcasts with ``boxes1``).
    reduction : {"none", "mean", "sum"}
    eps : float
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array
        Shape (...) for ``"none"``, a scalar otherwise.

    Examples
    --------
    >>> box_iou_loss([[0, 0, 2, 2]], [[0, 0, 2, 2]], eps=0.0)
    array([0.])
    """
    return _loss("iou", boxes1, boxes2, reduction, eps, fmt)


def generalized_box_iou_loss(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    reduction: Reduction = "none",
    eps: float = DEFAULT_EPS,
    fmt: str = "xyxy",
) -> Array:
    """GIoU loss ``1 - GIoU`` between aligned boxes (torchvision / fvcore semantics).

    Parameters
    ----------
    boxes1 : array_like, shape (..., 4)
    boxes2 : array_like, shape (..., 4)
    reduction : {"none", "mean", "sum"}
    eps : float
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array

    Examples
    --------
    >>> generalized_box_iou_loss([[0, 0, 1, 1]], [[2, 0, 3, 1]]).round(6)
    array([1.333333])
    """
    return _loss("giou", boxes1, boxes2, reduction, eps, fmt)


def distance_box_iou_loss(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    reduction: Reduction = "none",
    eps: float = DEFAULT_EPS,
    fmt: str = "xyxy",
) -> Array:
    """DIoU loss ``1 - IoU + rho^2 / (c^2 + eps)`` between aligned boxes.

    Parameters
    ----------
    boxes1 : array_like, shape (..., 4)
    boxes2 : array_like, shape (..., 4)
    reduction : {"none", "mean", "sum"}
    eps : float
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array

    Examples
    --------
    >>> distance_box_iou_loss([[0, 0, 1, 1]], [[1, 0, 2, 1]]).round(4)
    array([1.2])
    """
    return _loss("diou", boxes1, boxes2, reduction, eps, fmt)


def complete_box_iou_loss(
    boxes1: Array,
    boxes2: Array,
    /,
    *,
    reduction: Reduction = "none",
    eps: float = DEFAULT_EPS,
    fmt: str = "xyxy",
) -> Array:
    """CIoU loss ``1 - IoU + rho^2 / (c^2 + eps) + alpha v`` between aligned boxes.

    ``alpha`` carries no gradient, as in torchvision and Ultralytics.

    Parameters
    ----------
    boxes1 : array_like, shape (..., 4)
    boxes2 : array_like, shape (..., 4)
    reduction : {"none", "mean", "sum"}
    eps : float
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array

    Examples
    --------
    >>> complete_box_iou_loss([[0, 0, 0, 0]], [[0, 0, 0, 0]])
    array([1.])
    """
    return _loss("ciou", boxes1, boxes2, reduction, eps, fmt)
