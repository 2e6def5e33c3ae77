"""Average precision from a precision/recall curve, in the four published flavours.

Every function takes the raw curve of one class: ``recall[i]`` and ``precision[i]`` after the
``i + 1`` highest-scored predictions (cumulative TP / number of ground truths, cumulative TP /
(TP + FP)). The flavours differ only in how the curve is interpolated and integrated:

=====================  ===========================================================  ==========
function               formula                                                      reference
=====================  ===========================================================  ==========
coco_interpolated_ap   mean of the precision envelope sampled at 101 recall points  pycocotools
voc07_ap               mean over r in {0, .1, ..., 1} of max precision at recall>=r VOC2007
voc10_ap               area under the precision envelope (all points)               VOC2010+
ultralytics_ap         trapezoid of the envelope linearly interpolated at 101 pts   Ultralytics
=====================  ===========================================================  ==========

Golden vector (REFERENCE 3.7): TP, FP, TP, FP, TP with 3 ground truths gives VOC07 0.763636,
VOC10 0.755556, COCO101 0.756436 and Ultralytics 0.753."""

from __future__ import annotations

import numpy as np

from ioukit.errors import DataFormatError
from ioukit.evaluation.accumulate import sample_envelope

__all__ = ["coco_interpolated_ap", "ultralytics_ap", "voc07_ap", "voc10_ap"]


COCO_RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)


"""pycocotools' ``recThrs``: ``np.linspace(0, 1, 101)``."""


def _curve(recall: object, precision: object) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    if r.ndim != 1 or p.shape != r.shape:
        raise DataFormatError(
            f"recall, precision: expected two 1-D arrays of equal length, got shapes "
            f"{r.shape} and {p.shape}"
        )
    return r, p


def _envelope(precision: np.ndarray) -> np.ndarray:
    """Running maximum from the right: ``out[i] = max(precision[i:])``."""
    return np.maximum.accumulate(precision[::-1])[::-1]


def coco_interpolated_ap(
    recall: object, precision: object, /, recall_thresholds: object = None
) -> float:
    """AP as pycocotools computes it: the precision envelope sampled at fixed recall points.

    For each threshold ``r`` the interpolated precision at the first point whose recall is
    ``>= r`` (``searchsorted(recall, r, side="left")``); 0 above the maximum recall. The AP is
    the mean of the samples.

    Parameters
    ----------
    recall, precision : array_like, shape (N,)
        Cumulative curve in descending-score order (recall non-decreasing).
    recall_thresholds : array_like, shape (R,), optional
        Sampling points; default ``np.linspace(0, 1, 101)`` (COCO).

    Returns
    -------
    float
        0.0 for an empty curve.

    Examples
    --------
    >>> coco_interpolated_ap([1/3, 1/3, 2/3, 2/3, 1], [1, .5, 2/3, .5, .6])  # doctest: +ELLIPSIS
    0.75643564...
    >>> coco_interpolated_ap([], [])
    0.0
    """
    r, p = _curve(recall, precision)
    thresholds = (
        COCO_RECALL_THRESHOLDS
        if recall_thresholds is None
        else np.asarray(recall_thresholds, dtype=np.float64).reshape(-1)
    )
    if thresholds.size == 0:
        return 0.0
    if r.size == 0:
        return 0.0

    return float(np.mean(sample_envelope(r, p, thresholds)))


def voc07_ap(recall: object, precision: object, /, *, exact_grid: bool = False) -> float:
    """VOC2007 11-point AP: mean over ``r`` in {0, .1, ..., 1} of max precision at recall >= r.

    Parameters
    ----------
    recall, precision : array_like, shape (N,)
    exact_grid : bool, default False
        False builds the grid as the VOC devkit's Python does, ``np.arange(0, 1.1, 0.1)``,
        where 0.3, 0.6 and 0.7 are slightly above their decimal value (0.6000000000000001),
        so a class whose maximum recall is exactly 0.6 gets 0 at that point (this reproduces
        every published number). True uses the exact points ``k / 10``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(voc07_ap([1/3, 1/3, 2/3, 2/3, 1], [1, .5, 2/3, .5, .6]), 6)
    0.763636
    >>> round(voc07_ap([0.6], [1.0]), 6), round(voc07_ap([0.6], [1.0], exact_grid=True), 6)
    (0.545455, 0.636364)
    >>> voc07_ap([], [])
    0.0
    """
    r, p = _curve(recall, precision)
    grid = np.arange(11, dtype=np.float64) / 10 if exact_grid else np.arange(0.0, 1.1, 0.1)
    if r.size == 0:
        return 0.0
    # max precision over recall >= t == envelope at the first index with recall >= t
    # (recall is non-decreasing); summed in grid order as the devkit does.
    envelope = _envelope(p)
    total = 0.0
    for t in grid:
        reached = r >= t
        total += float(envelope[np.argmax(reached)]) / 11.0 if reached.any() else 0.0
    return total


def voc10_ap(recall: object, precision: object, /) -> float:
    """PASCAL VOC2010+ all-point AP: area under the precision envelope.

    ``mrec = [0, recall, 1]``, ``mpre = [0, precision, 0]``, envelope from the right, then
    ``sum((mrec[i+1] - mrec[i]) * mpre[i+1])`` over the points where recall changes.

    Parameters
    ----------
    recall, precision : array_like, shape (N,)

    Returns
    -------
    float

    Examples
    --------
    >>> round(voc10_ap([1/3, 1/3, 2/3, 2/3, 1], [1, .5, 2/3, .5, .6]), 6)
    0.755556
    >>> voc10_ap([0.5, 0.5], [1.0, 0.5])
    0.5
    >>> voc10_ap([], [])
    0.0
    """
    r, p = _curve(recall, precision)
    mrec = np.concatenate(([0.0], r, [1.0]))
    mpre = _envelope(np.concatenate(([0.0], p, [0.0])))
    change = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[change + 1] - mrec[change]) * mpre[change + 1]))


def ultralytics_ap(
    recall: object, precision: object, /, *, return_curves: bool = False
) -> float | tuple[float, np.ndarray, np.ndarray]:
    """AP as current Ultralytics computes it (``utils/metrics.py`` ``compute_ap``).

    ``mrec = [0, recall, recall[-1], 1]`` and ``mpre = [1, precision, 0, 0]`` (a step down to
    0 at the maximum recall; releases before 8.1 joined the last point linearly to (1, 0),
    which inflates AP when the maximum recall is below 1); envelope from the right; linear
    interpolation at ``np.linspace(0, 1, 101)``; trapezoidal integration.

    Parameters
    ----------
    recall, precision : array_like, shape (N,)
    return_curves : bool, default False
        Also return the envelope ``mpre`` and the padded recall ``mrec`` (as Ultralytics does).

    Returns
    -------
    float, or (float, ndarray, ndarray)

    Examples
    --------
    >>> round(ultralytics_ap([1/3, 1/3, 2/3, 2/3, 1], [1, .5, 2/3, .5, .6]), 6)
    0.753
    >>> round(ultralytics_ap([0.5, 0.5], [1.0, 0.5]), 6)
    0.495
    >>> ultralytics_ap([], [])
    0.0
    """
    r, p = _curve(recall, precision)
    last = r[-1] if r.size else 1.0
    mrec = np.concatenate(([0.0], r, [last, 1.0]))
    mpre = _envelope(np.concatenate(([1.0], p, [0.0, 0.0])))
    x = np.linspace(0.0, 1.0, 101)
    y = np.interp(x, mrec, mpre)
    # trapezoid rule, written out (np.trapezoid is NumPy >= 2 only)
    ap = float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))
    if r.size == 0:
        ap = 0.0
    if return_curves:
        return ap, mpre, mrec
    return ap
