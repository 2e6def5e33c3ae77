"""Stage 5 of the pipeline: precision/recall from the match outcome, and the AP formulas.

* :func:`coco_accumulate`: pycocotools' ``accumulate`` (cumulative TP/FP per class, area range,
  max_dets and threshold, precision envelope, sampling at the recall thresholds), compiled
  (``ioukit._kernels.match.accumulate_coco``);
* :func:`sample_envelope`: the precision envelope sampled at recall points (the 101-point
  COCO sampling, written once);
* the AP formulas (:func:`~ioukit.metrics.ap.coco_interpolated_ap`, VOC07 11-point
  :func:`~ioukit.metrics.ap.voc07_ap`, VOC10 all-point :func:`~ioukit.metrics.ap.voc10_ap`,
  :func:`~ioukit.metrics.ap.ultralytics_ap`) live in :mod:`ioukit.metrics.ap` and are used
  from there by every protocol.
"""

from __future__ import annotations

import numpy as np

from ioukit.evaluation.outcome import MatchOutcome

__all__ = ["COCO_RECALL_THRESHOLDS", "coco_accumulate", "sample_envelope"]

COCO_RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)
"""pycocotools' 101 recall points ``np.linspace(0, 1, 101)``."""


def sample_envelope(
    recall: np.ndarray, precision: np.ndarray, points: np.ndarray = COCO_RECALL_THRESHOLDS
) -> np.ndarray:
    """Precision envelope sampled at ``points`` (0 above the largest recall).

    ``envelope[i] = max(precision[i:])``; the sample at ``r`` is the envelope at the first
    index with ``recall >= r`` (``searchsorted(..., "left")``), as pycocotools.

    Examples
    --------
    >>> recall, precision = np.array([0.5, 1.0]), np.array([1.0, 0.5])
    >>> sample_envelope(recall, precision, np.array([0, 0.5, 0.6])).tolist()
    [1.0, 1.0, 0.5]
    """
    out = np.zeros(len(points))
    if recall.size == 0:
        return out
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    index = np.searchsorted(recall, points, side="left")
    valid = index < recall.size
    out[valid] = envelope[index[valid]]
    return out


def coco_accumulate(
    outcome: MatchOutcome, /, *, recall_thresholds: np.ndarray, max_dets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' ``accumulate`` on a :class:`MatchOutcome`.

    Parameters
    ----------
    outcome : MatchOutcome
        In accumulation order.
    recall_thresholds : ndarray, shape (R,)
        Increasing, >= 0.
    max_dets : ndarray of int64, shape (M,)
        Increasing.

    Returns
    -------
    precision : ndarray, shape (T, R, K, A, M)
    recall : ndarray, shape (T, K, A, M)
    scores : ndarray, shape (T, R, K, A, M)
        -1 where a class has no regular ground truth in the area range.
    """
    from ioukit._kernels import match as kernels

    n_t = len(outcome.thresholds)
    n_k, n_a = outcome.gt_count.shape
    n_r, n_m = len(recall_thresholds), len(max_dets)
    precision = -np.ones((n_t, n_r, n_k, n_a, n_m))
    recall = -np.ones((n_t, n_k, n_a, n_m))
    scores = -np.ones((n_t, n_r, n_k, n_a, n_m))
    start, end = outcome.class_bounds()
    kernels.accumulate_coco(
        start,
        end,
        np.ascontiguousarray(outcome.rank),
        np.ascontiguousarray(outcome.status),
        np.ascontiguousarray(outcome.score),
        np.ascontiguousarray(outcome.gt_count),
        np.ascontiguousarray(max_dets, dtype=np.int64),
        np.ascontiguousarray(recall_thresholds, dtype=np.float64),
        precision,
        recall,
        scores,
    )
    return precision, recall, scores
