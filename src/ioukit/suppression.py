"""Non-maximum suppression: ``nms``, ``batched_nms`` and ``soft_nms``.

Contract (torchvision's): boxes are visited in decreasing score order; a box is kept unless a
kept box of higher score overlaps it with an IoU strictly greater than ``iou_threshold``. The
IoU is exactly :func:`ioukit.box_iou` (continuous coordinates, 0 when the union is 0), so
zero-area boxes never suppress and are never suppressed (torchvision gets NaN for two identical
zero-area boxes, which has the same effect).

**Ties in score**: the box earlier in the input wins (scores are sorted with a stable sort of
``-score``); the result therefore never depends on the platform.

NumPy inputs (and Python sequences) run in compiled kernels; greedy NMS only compares a kept box
with the boxes that can overlap it along x, so it is sub-quadratic on real detections and gives
the same indices as the quadratic loop. PyTorch, CuPy, JAX and other array-API inputs are
copied to the host, suppressed there, and the indices come back as an int64 array of the
caller's library on the caller's device (a host round trip for accelerator arrays).
"""

from __future__ import annotations

from typing import Any, Literal

import array_api_compat.numpy
import numpy as np

from ioukit._array import Array, check_format
from ioukit._host import check_number, from_host, host_boxes, host_vector, to_host
from ioukit._kernels import nms as box_kernels
from ioukit._kernels import rotated as rotated_kernels
from ioukit._rotated_corners import host64, prepare_corners, scale_set
from ioukit.errors import BoxError, ParameterError

__all__ = ["batched_nms", "batched_rotated_nms", "nms", "rotated_nms", "soft_nms"]


def _score_order(scores: np.ndarray, dtype: np.dtype) -> np.ndarray:
    keys = scores.astype(dtype) if scores.dtype.kind != "f" else scores
    return np.argsort(-keys, kind="stable")


def _prepare(boxes: Array, scores: Array, fmt: str) -> tuple[np.ndarray, np.ndarray, Any]:
    check_format(fmt)
    host, like = to_host(boxes, "boxes")
    host_scores, like_scores = to_host(scores, "scores")
    xyxy = host_boxes(host, "boxes", fmt)
    host_vector(host_scores, "scores", xyxy.shape[0])
    return xyxy, host_scores, like if like is not None else like_scores


def _batch(
    classes: Array,
    like: Any,
    scores: np.ndarray,
    score_threshold: float | None,
    max_detections: int | None,
) -> tuple[np.ndarray, Any, int, np.ndarray | None]:
    """The checked classes on the host, the result's array type (``like``, else the classes'),
    the number of boxes to keep at most, and the rows with ``score > score_threshold`` (None:
    no threshold) of a batched NMS."""
    host_classes, like_classes = to_host(classes, "classes")
    host_classes = host_vector(host_classes, "classes", scores.shape[0], integer=True)
    limit = scores.shape[0]
    if max_detections is not None:
        if isinstance(max_detections, bool) or not isinstance(max_detections, (int, np.integer)):
            raise ParameterError(
                f"max_detections: expected a non-negative int, got {max_detections!r}"
            )
        if max_detections < 0:
            raise ParameterError(
                f"max_detections: expected a non-negative int, got {max_detections}"
            )
        limit = min(limit, int(max_detections))
    candidates = None
    if score_threshold is not None:
        cut = check_number(score_threshold, "score_threshold")
        candidates = np.flatnonzero(scores > cut)
    return host_classes, like if like is not None else like_classes, limit, candidates


# ---------------------------------------------------------------------------- public functions


def nms(boxes: Array, scores: Array, /, iou_threshold: float, *, fmt: str = "xyxy") -> Array:
    """Greedy non-maximum suppression: indices of the kept boxes, highest score first.

    A box is discarded when a kept box with a higher score overlaps it with an IoU strictly
    greater than ``iou_threshold`` (torchvision's ``nms`` contract). Ties in score are broken
    by input order: the earlier box wins.

    Parameters
    ----------
    boxes : array_like, shape (N, 4)
        Boxes in ``fmt``; NumPy, sequences, PyTorch, CuPy, JAX or any array-API array.
    scores : array_like, shape (N,)
        One score per box (no NaN).
    iou_threshold : float
        Suppress boxes whose IoU with a kept box is ``> iou_threshold``.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array of int64, shape (K,)
        Input indices of the kept boxes in decreasing score order; the library and device of
        ``boxes`` (NumPy for sequences).

    Raises
    ------
    BoxError
        Boxes not (N, 4), an invalid box, ``scores`` not (N,) or a NaN score.

    Examples
    --------
    >>> boxes = [[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]]
    >>> nms(boxes, [0.9, 0.8, 0.7], iou_threshold=0.5)
    array([0, 2])
    >>> nms(boxes, [0.9, 0.8, 0.7], 0.7)  # positional threshold, as torchvision
    array([0, 1, 2])
    >>> nms(np.zeros((0, 4)), np.zeros(0), iou_threshold=0.5)
    array([], dtype=int64)
    """
    threshold = check_number(iou_threshold, "iou_threshold")
    xyxy, host_scores, like = _prepare(boxes, scores, fmt)

    order = _score_order(host_scores, xyxy.dtype)
    kept = box_kernels.greedy_nms(xyxy, order, None, threshold, xyxy.shape[0])
    return from_host(kept, like)


def batched_nms(
    boxes: Array,
    scores: Array,
    classes: Array,
    /,
    iou_threshold: float,
    *,
    score_threshold: float | None = None,
    max_detections: int | None = None,
    class_agnostic: bool = False,
    fmt: str = "xyxy",
) -> Array:
    """Non-maximum suppression within each class: indices of the kept boxes, highest score first.

    Boxes of different classes never suppress each other (torchvision's ``batched_nms``)
    unless ``class_agnostic=True``.

    Parameters
    ----------
    boxes : array_like, shape (N, 4)
    scores : array_like, shape (N,)
        No NaN. Ties are broken by input order (the earlier box wins).
    classes : array_like of int, shape (N,)
        Class (category) of each box; any integers (floats holding whole numbers accepted).
    iou_threshold : float
        Suppress boxes whose IoU with a kept box of the same class is ``> iou_threshold``.
    score_threshold : float, optional
        Drop boxes with ``score <= score_threshold`` first (detectron2, mmdet and Ultralytics
        keep ``score > threshold``).
    max_detections : int, optional
        Keep at most this many boxes (the highest-scoring ones after suppression).
    class_agnostic : bool
        Suppress across classes, as if every box had the same class.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    array of int64, shape (K,)
        Input indices of the kept boxes in decreasing score order, across all classes.

    Raises
    ------
    BoxError
        Bad shapes, an invalid box, a NaN score, or non-integer classes.

    Examples
    --------
    >>> boxes = [[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10]]
    >>> batched_nms(boxes, [0.9, 0.8, 0.7], [0, 0, 1], 0.5)  # torchvision order
    array([0, 2])
    >>> batched_nms(boxes, [0.9, 0.8, 0.7], [0, 0, 1], iou_threshold=0.5, class_agnostic=True)
    array([0])
    >>> batched_nms(boxes, [0.9, 0.8, 0.7], [0, 1, 2], iou_threshold=0.5, score_threshold=0.75,
    ...             max_detections=1)
    array([0])
    """
    threshold = check_number(iou_threshold, "iou_threshold")
    xyxy, host_scores, like = _prepare(boxes, scores, fmt)
    host_classes, like, limit, candidates = _batch(
        classes, like, host_scores, score_threshold, max_detections
    )
    if candidates is not None:
        xyxy, host_scores, host_classes = (
            xyxy[candidates],
            host_scores[candidates],
            host_classes[candidates],
        )

    order = _score_order(host_scores, xyxy.dtype)
    segments = None
    if not class_agnostic and xyxy.shape[0] > 0:
        segments = np.unique(host_classes, return_inverse=True)[1].reshape(-1)
        if segments.max() == 0:
            segments = None
    kept = box_kernels.greedy_nms(xyxy, order, segments, threshold, limit)
    if candidates is not None:
        kept = candidates[kept].astype(np.int64)
    return from_host(kept, like)


def soft_nms(
    boxes: Array,
    scores: Array,
    /,
    *,
    method: Literal["linear", "gaussian"] = "linear",
    sigma: float = 0.5,
    iou_threshold: float = 0.3,
    score_threshold: float = 0.001,
    fmt: str = "xyxy",
) -> tuple[Array, Array]:
    """Soft-NMS (Bodla et al. 2017): decay the scores of overlapping boxes instead of dropping them.

    Repeatedly select the remaining box with the highest current score (ties: the earlier
    input box) and multiply the score of every remaining box by a weight of its IoU with the
    selected one:

    - ``"linear"``: ``1 - IoU`` when ``IoU > iou_threshold``, else 1;
    - ``"gaussian"``: ``exp(-IoU**2 / sigma)`` (``iou_threshold`` is not used).

    The selected boxes whose decayed score is ``> score_threshold`` are returned. This is the
    behaviour of ensemble-boxes' ``soft_nms`` for one class, with two differences: ensemble-boxes
    returns the *original* scores of the kept boxes (the decayed ones are returned here), and it
    clips boxes to [0, 1] and drops zero-area boxes (here any coordinates are fine; a zero-area
    box has IoU 0 with every box).

    Parameters
    ----------
    boxes : array_like, shape (N, 4)
    scores : array_like, shape (N,)
        Finite scores.
    method : {"linear", "gaussian"}
    sigma : float
        Gaussian width (> 0).
    iou_threshold : float
        Linear method: only boxes with ``IoU > iou_threshold`` are decayed.
    score_threshold : float
        Keep selected boxes with decayed score ``> score_threshold``.
    fmt : {"xyxy", "xywh", "cxcywh"}

    Returns
    -------
    indices : array of int64, shape (K,)
        Input indices of the kept boxes in selection order (decreasing decayed score).
    decayed_scores : array, shape (K,)
        Their decayed scores, in the boxes' float dtype.

    Raises
    ------
    BoxError
        Bad shapes, an invalid box, or a non-finite score.
    ValueError
        Unknown ``method`` or ``sigma <= 0``.

    Examples
    --------
    >>> boxes = [[0, 0, 10, 10], [0, 0, 10, 5], [20, 20, 30, 30]]
    >>> keep, decayed = soft_nms(boxes, [0.9, 0.8, 0.7])
    >>> keep, decayed.round(3)
    (array([0, 2, 1]), array([0.9, 0.7, 0.4]))
    >>> soft_nms(boxes, [0.9, 0.8, 0.7], method="gaussian", sigma=0.5)[1].round(4)
    array([0.9   , 0.7   , 0.4852])
    >>> soft_nms(np.zeros((0, 4)), np.zeros(0))
    (array([], dtype=int64), array([], dtype=float64))
    """
    if method not in ("linear", "gaussian"):
        raise ParameterError(f"method: expected 'linear' or 'gaussian', got {method!r}")
    sigma_value = check_number(sigma, "sigma")
    if not sigma_value > 0:
        raise ParameterError(f"sigma: expected a positive number, got {sigma!r}")
    overlap = check_number(iou_threshold, "iou_threshold")
    cut = check_number(score_threshold, "score_threshold")
    check_format(fmt)
    host, like = to_host(boxes, "boxes")
    host_scores, like_scores = to_host(scores, "scores")
    xyxy = host_boxes(host, "boxes", fmt)
    host_vector(host_scores, "scores", xyxy.shape[0], finite=True)
    like = like if like is not None else like_scores

    work = host_scores.astype(xyxy.dtype)
    kept, decayed = box_kernels.soft_nms(xyxy, work, method, sigma_value, overlap, cut)
    return from_host(kept, like), from_host(decayed, like)


# ------------------------------------------------------------------------------- rotated NMS


def _prepare_rotated(
    boxes: Array, scores: Array, fmt: str, angle_unit: str, clockwise: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]:
    """Host float64 corners (N, 8), envelopes (N, 4), zero-area flags, scores, and ``like``."""
    host, like = to_host(boxes, "boxes")
    host_scores, like_scores = to_host(scores, "scores")
    if host.dtype.kind not in "biuf":
        raise BoxError(f"boxes: expected numbers, got dtype {host.dtype}")
    corners, degenerate = prepare_corners(
        host, "boxes", fmt, angle_unit, clockwise, array_api_compat.numpy, np.float64, 2
    )
    c, env, deg = host64(scale_set(np.asarray(corners).reshape(-1, 8), "boxes"), degenerate)
    host_vector(host_scores, "scores", c.shape[0])
    return c, env, deg, host_scores, like if like is not None else like_scores


def rotated_nms(
    boxes: Array,
    scores: Array,
    /,
    *,
    iou_threshold: float,
    fmt: str = "cxcywhr",
    angle_unit: Literal["degrees", "radians"] = "degrees",
    clockwise: bool = False,
) -> Array:
    """Greedy non-maximum suppression of rotated boxes with the exact rotated IoU.

    The contract of :func:`nms` (suppress when IoU ``> iou_threshold``, ties in score keep the
    earlier box) with :func:`ioukit.rotated_box_iou` as the overlap. A kept box is compared only
    with the boxes whose axis-aligned envelopes can meet its own along x, so sparse scenes cost
    far less than the quadratic loop, with the same kept indices.

    Parameters
    ----------
    boxes : array_like, shape (N, 5) or (N, 8)
        Rotated boxes in ``fmt``; NumPy, sequences, PyTorch, CuPy, JAX or any array-API array.
    scores : array_like, shape (N,)
        One score per box (no NaN).
    iou_threshold : float
    fmt : {"cxcywhr", "xywhr", "xyxyxyxy", "xyxy", "xywh", "cxcywh"}
    angle_unit : {"degrees", "radians"}
    clockwise : bool
        As for :func:`ioukit.rotated_box_iou`.

    Returns
    -------
    array of int64, shape (K,)
        The kept boxes, as :func:`nms` returns them.

    Raises
    ------
    BoxError
        Bad shapes, an invalid box (see :func:`ioukit.rotated_box_iou`) or a NaN score.

    Examples
    --------
    >>> boxes = [[0, 0, 10, 4, 0], [0, 0, 10, 4, 10], [0, 0, 10, 4, 90], [30, 0, 10, 4, 0]]
    >>> rotated_nms(boxes, [0.9, 0.8, 0.7, 0.6], iou_threshold=0.5)
    array([0, 2, 3])
    >>> rotated_nms(np.zeros((0, 5)), np.zeros(0), iou_threshold=0.5)
    array([], dtype=int64)
    """
    threshold = check_number(iou_threshold, "iou_threshold")
    c, env, deg, host_scores, like = _prepare_rotated(boxes, scores, fmt, angle_unit, clockwise)

    order = _score_order(host_scores, np.dtype(np.float64))
    kept = rotated_kernels.greedy_nms(c, env, deg, order, None, threshold, c.shape[0])
    return from_host(kept, like)


def batched_rotated_nms(
    boxes: Array,
    scores: Array,
    classes: Array,
    /,
    *,
    iou_threshold: float,
    score_threshold: float | None = None,
    max_detections: int | None = None,
    class_agnostic: bool = False,
    fmt: str = "cxcywhr",
    angle_unit: Literal["degrees", "radians"] = "degrees",
    clockwise: bool = False,
) -> Array:
    """Rotated NMS within each class: :func:`batched_nms` with the exact rotated IoU.

    Parameters
    ----------
    boxes : array_like, shape (N, 5) or (N, 8)
    scores : array_like, shape (N,)
    classes : array_like of int, shape (N,)
    iou_threshold : float
    score_threshold : float, optional
        Drop boxes with ``score <= score_threshold`` first.
    max_detections : int, optional
        Keep at most this many boxes (the highest-scoring ones after suppression).
    class_agnostic : bool
        Suppress across classes.
    fmt, angle_unit, clockwise
        As for :func:`rotated_nms`.

    Returns
    -------
    array of int64, shape (K,)
        Input indices of the kept boxes in decreasing score order, across all classes.

    Examples
    --------
    >>> boxes = [[0, 0, 10, 4, 0], [0, 0, 10, 4, 10], [0, 0, 10, 4, 0]]
    >>> batched_rotated_nms(boxes, [0.9, 0.8, 0.7], [0, 0, 1], iou_threshold=0.5)
    array([0, 2])
    >>> batched_rotated_nms(boxes, [0.9, 0.8, 0.7], [0, 0, 1], iou_threshold=0.5,
    ...                     class_agnostic=True)
    array([0])
    """
    threshold = check_number(iou_threshold, "iou_threshold")
    c, env, deg, host_scores, like = _prepare_rotated(boxes, scores, fmt, angle_unit, clockwise)
    host_classes, like, limit, candidates = _batch(
        classes, like, host_scores, score_threshold, max_detections
    )
    if candidates is not None:
        c, env, deg = c[candidates], env[candidates], deg[candidates]
        host_scores, host_classes = host_scores[candidates], host_classes[candidates]

    order = _score_order(host_scores, np.dtype(np.float64))
    segments = None
    if not class_agnostic and c.shape[0] > 0:
        segments = np.unique(host_classes, return_inverse=True)[1].reshape(-1).astype(np.int64)
    kept = rotated_kernels.greedy_nms(c, env, deg, order, segments, threshold, limit)
    if candidates is not None:
        kept = candidates[kept].astype(np.int64)
    return from_host(kept, like)
