"""Precision, recall and F1 at a confidence, and PR / F1-confidence curves per class.

Matching follows the chosen protocol's rule at one IoU threshold:

- ``"coco"`` (default): greedy in descending score, best unmatched ground truth with
  ``IoU >= t``; crowd, ``ignore`` and ``difficult`` ground truths are ignored (predictions
  matched to them count as neither TP nor FP; crowd IoU is intersection / prediction area);
- ``"voc07"``/``"voc10"``: the VOC devkit rule (highest-IoU ground truth, no fallback);
- ``"yolo"``: Ultralytics (crowds dropped, ``IoU = inter / (union + 1e-7)``).

Since matching is greedy in descending score, the predictions scored at or above a
confidence ``c`` are matched exactly as if the lower ones did not exist; so the numbers at
``c`` are those of a detector whose output was cut at ``c``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.accumulate import sample_envelope
from ioukit.evaluation.ap import COCO_RECALL_THRESHOLDS
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.outcome import IGNORED, threshold_index
from ioukit.evaluation.protocols.yolo import float32_values, ultralytics_class_curves
from ioukit.evaluation.registry import ProtocolTraits, protocol_traits

__all__ = [
    "Curves",
    "PrecisionRecallF1",
    "curves_from_matches",
    "curves_from_outcome",
    "curves_of",
    "matches_from_outcome",
    "pr_curves",
    "precision_recall_f1",
    "rematch",
]


CONFIDENCE_GRID = np.linspace(0.0, 1.0, 1000)


_PROTOCOLS = ("coco", "voc07", "voc10", "yolo")


@dataclass(frozen=True, slots=True)
class PrecisionRecallF1:
    """Counts and rates at one IoU threshold and confidence.

    Attributes
    ----------
    category_ids : ndarray of int64, shape (K,)
    names : tuple of str, length K
    tp, fp, fn : ndarray of int64, shape (K,)
        Per class; ``fn`` = non-ignored ground truths not matched.
    precision, recall, f1 : ndarray of float64, shape (K,)
        ``tp / (tp + fp)`` (0 without predictions), ``tp / (tp + fn)`` (-1 without ground
        truth), harmonic mean (0 when both are 0; -1 without ground truth).
    micro : dict
        ``precision``, ``recall``, ``f1`` over the pooled counts of all classes.
    macro : dict
        Means of the per-class values over classes with ground truth.
    iou_threshold, score_threshold : float
    """

    category_ids: np.ndarray
    names: tuple[str, ...]
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    micro: dict[str, float]
    macro: dict[str, float]
    iou_threshold: float
    score_threshold: float


@dataclass(frozen=True, slots=True)
class Curves:
    """Per-class precision/recall curves.

    Attributes
    ----------
    category_ids : ndarray of int64, shape (K,)
    names : tuple of str, length K
    recall_grid : ndarray, shape (101,)
        ``np.linspace(0, 1, 101)``.
    precision : ndarray, shape (K, 101)
        Interpolated precision (envelope) at each recall of ``recall_grid``, as pycocotools
        samples it (0 above the class's maximum recall; -1 rows for classes without ground truth).
    confidence : ndarray, shape (1000,)
        ``np.linspace(0, 1, 1000)``.
    precision_at_confidence, recall_at_confidence, f1_at_confidence : ndarray, shape (K, 1000)
        Values of the predictions scored at or above each confidence (Ultralytics'
        ``p_curve``, ``r_curve``, ``f1_curve``: linear interpolation between predictions,
        precision 1 and recall 0 above the highest score).
    mean_f1 : ndarray, shape (1000,)
        Mean F1 over classes with ground truth.
    best_confidence, best_f1 : float
        ``confidence[i]`` and ``mean_f1[i]`` where ``i`` maximises ``mean_f1`` smoothed with
        Ultralytics' box filter of 0.1 (as ``yolo val`` picks its P and R).
    iou_threshold : float
    """

    category_ids: np.ndarray
    names: tuple[str, ...]
    recall_grid: np.ndarray
    precision: np.ndarray
    confidence: np.ndarray
    precision_at_confidence: np.ndarray
    recall_at_confidence: np.ndarray
    f1_at_confidence: np.ndarray
    mean_f1: np.ndarray
    best_confidence: float
    best_f1: float
    iou_threshold: float


def _match(
    gt: Dataset, pred: Dataset, iou_threshold: float, protocol: str, similarity: Any = None
) -> grouping.DatasetMatches:
    if protocol not in _PROTOCOLS:
        raise ParameterError(f"protocol: expected one of {_PROTOCOLS}, got {protocol!r}")
    return rematch(gt, pred, iou_threshold, protocol_traits(protocol), similarity)


def rematch(
    gt: Dataset,
    pred: Dataset,
    iou_threshold: float,
    traits: ProtocolTraits,
    similarity: Any = None,
) -> grouping.DatasetMatches:
    """Every prediction matched at ``iou_threshold`` by the protocol's rule (its
    :attr:`~ioukit.evaluation.registry.ProtocolTraits.rematch`; the VOC rule when it has
    none): for the curves and matched IoUs of an evaluation whose outcome lacks the threshold."""
    threshold = float(iou_threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}")
    thresholds = np.array([threshold])
    if traits.rematch is not None:
        matches: grouping.DatasetMatches = traits.rematch(gt, pred, thresholds, similarity)
        return matches
    return grouping.voc_rematch(gt, pred, thresholds, similarity)


def precision_recall_f1(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.5,
    score_threshold: float = 0.0,
    protocol: str = "coco",
) -> PrecisionRecallF1:
    """Precision, recall and F1 per class and overall, counting predictions scored >= a threshold.

    Parameters
    ----------
    gt, pred : Dataset
    iou_threshold : float, default 0.5
    score_threshold : float, default 0.0
        Predictions with ``score >= score_threshold`` count.
    protocol : {"coco", "voc07", "voc10", "yolo"}
        Matching rule (see the module docstring).

    Returns
    -------
    PrecisionRecallF1

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 20, 30, 30]],
    ...                          image_index=[0, 0], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.3])
    >>> r = precision_recall_f1(gt, pred)
    >>> r.tp, r.fp, r.fn, r.precision, r.recall
    (array([1]), array([1]), array([1]), array([0.5]), array([0.5]))
    >>> precision_recall_f1(gt, pred, score_threshold=0.5).micro["precision"]
    1.0
    """
    matches = _match(gt, pred, iou_threshold, protocol)
    k = matches.category_ids.size
    keep = matches.scores >= float(score_threshold)
    known = matches.pred_class >= 0
    tp = np.bincount(matches.pred_class[keep & known & matches.tp[0]], minlength=k)
    fp = np.bincount(matches.pred_class[keep & known & matches.fp[0]], minlength=k)
    num_gt = matches.num_gt()
    fn = num_gt - tp
    has = num_gt > 0
    precision = np.divide(tp, tp + fp, out=np.zeros(k), where=(tp + fp) > 0)
    recall = np.where(has, tp / np.maximum(num_gt, 1), -1.0)
    f1 = _f1(precision, recall)
    f1 = np.where(has, f1, -1.0)
    tp_all, fp_all, gt_all = int(tp.sum()), int(fp.sum()), int(num_gt.sum())
    micro_p = tp_all / (tp_all + fp_all) if tp_all + fp_all else 0.0
    micro_r = tp_all / gt_all if gt_all else -1.0
    micro = {
        "precision": micro_p,
        "recall": micro_r,
        "f1": float(_f1(micro_p, micro_r)) if gt_all else -1.0,
    }
    macro = (
        {
            "precision": float(precision[has].mean()),
            "recall": float(recall[has].mean()),
            "f1": float(f1[has].mean()),
        }
        if has.any()
        else {"precision": -1.0, "recall": -1.0, "f1": -1.0}
    )
    return PrecisionRecallF1(
        category_ids=matches.category_ids,
        names=matches.names,
        tp=tp.astype(np.int64),
        fp=fp.astype(np.int64),
        fn=fn.astype(np.int64),
        precision=precision,
        recall=recall,
        f1=f1,
        micro=micro,
        macro=macro,
        iou_threshold=float(iou_threshold),
        score_threshold=float(score_threshold),
    )


def _f1(precision: np.ndarray | float, recall: np.ndarray | float) -> np.ndarray:
    p = np.asarray(precision, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    total = p + r
    return np.divide(2 * p * r, total, out=np.zeros(np.broadcast(p, r).shape), where=total > 0)


def pr_curves(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.5,
    protocol: str = "coco",
    similarity: Any = None,
) -> Curves:
    """Per-class PR curves on a recall grid and P/R/F1 on a 1000-point confidence grid.

    Parameters
    ----------
    gt, pred : Dataset
    iou_threshold : float, default 0.5
    protocol : {"coco", "voc07", "voc10", "yolo"}
    similarity : Similarity, optional
        Match with this pipeline similarity (rotated IoU, probiou...) instead of box IoU.
        Matching rule (see the module docstring).

    Returns
    -------
    Curves

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 20, 30, 30]],
    ...                          image_index=[0, 0], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.3])
    >>> c = pr_curves(gt, pred)
    >>> c.precision.shape, c.f1_at_confidence.shape
    ((1, 101), (1, 1000))
    >>> c.precision[0, [0, 50, 51]].tolist(), round(c.best_f1, 3)
    ([1.0, 1.0, 0.0], 0.657)
    """
    if protocol not in _PROTOCOLS:
        raise ParameterError(f"protocol: expected one of {_PROTOCOLS}, got {protocol!r}")
    return curves_of(gt, pred, iou_threshold, protocol_traits(protocol), similarity)


def curves_of(
    gt: Dataset,
    pred: Dataset,
    iou_threshold: float,
    traits: ProtocolTraits,
    similarity: Any = None,
) -> Curves:
    """:func:`pr_curves` of a protocol given by its traits (:func:`rematch`; Ultralytics'
    confidence curves where the protocol draws them so): what
    :meth:`~ioukit.analysis.result.EvaluationResult.curves` calls for any protocol."""
    return curves_from_matches(
        rematch(gt, pred, iou_threshold, traits, similarity),
        iou_threshold,
        ultralytics_image_index=pred.image_index if traits.ultralytics_curves else None,
    )


def curves_from_matches(
    matches: grouping.DatasetMatches,
    iou_threshold: float,
    *,
    ultralytics_image_index: np.ndarray | None = None,
) -> Curves:
    """:class:`Curves` from a match at one threshold (``matches`` with T = 1).

    ``ultralytics_image_index`` (the predictions' image rows) computes the confidence curves
    as the yolo protocol does (float32 confidences, Ultralytics' order). Used by
    :func:`pr_curves` and by :meth:`ioukit.analysis.result.EvaluationResult.curves`,
    which passes the evaluation's own match (:func:`matches_from_outcome`) instead of matching
    again.
    """

    k = matches.category_ids.size
    num_gt = matches.num_gt()
    counted = ~matches.ignored[0]
    # Ultralytics-style confidence curves over counted predictions
    pred_class = np.where(counted, matches.pred_class, -1)
    if ultralytics_image_index is None:
        yolo = ultralytics_class_curves(matches.tp[:1], pred_class, matches.scores, num_gt)
    else:  # the yolo protocol: float32 confidences in Ultralytics' order, as evaluate_yolo
        yolo = ultralytics_class_curves(
            matches.tp[:1],
            pred_class,
            matches.scores.astype(np.float32).astype(np.float64),
            num_gt,
            stable_ties=False,
            image_index=ultralytics_image_index,
        )
    # COCO-style recall-grid sampling
    order, bounds = grouping.class_order(matches.pred_class, matches.scores, counted, k)
    tp_sorted = matches.tp[0][order].astype(np.int64)
    precision = np.full((k, COCO_RECALL_THRESHOLDS.size), -1.0)
    for c in np.flatnonzero(num_gt > 0).tolist():
        lo, hi = int(bounds[c]), int(bounds[c + 1])
        precision[c] = 0.0
        if hi == lo:
            continue
        tp_cum = np.cumsum(tp_sorted[lo:hi])
        precision[c] = sample_envelope(tp_cum / num_gt[c], tp_cum / np.arange(1, hi - lo + 1))
    has = num_gt > 0
    mean_f1 = yolo.f1_curve[has].mean(axis=0) if has.any() else np.zeros(CONFIDENCE_GRID.size)
    best = yolo.best_index
    return Curves(
        category_ids=matches.category_ids,
        names=matches.names,
        recall_grid=COCO_RECALL_THRESHOLDS.copy(),
        precision=precision,
        confidence=CONFIDENCE_GRID.copy(),
        precision_at_confidence=yolo.p_curve,
        recall_at_confidence=yolo.r_curve,
        f1_at_confidence=yolo.f1_curve,
        mean_f1=mean_f1,
        best_confidence=float(CONFIDENCE_GRID[best]),
        best_f1=float(mean_f1[best]),
        iou_threshold=float(iou_threshold),
    )


def curves_from_outcome(
    gt: Dataset, pred: Dataset, outcome: Any, iou_threshold: float, *, protocol: str = "coco"
) -> Curves | None:
    """:class:`Curves` from an evaluation's own match (None when the outcome does not hold
    ``iou_threshold``); equal to :func:`pr_curves` with the same protocol.

    ``protocol="yolo"``: the outcome of the yolo protocol (float32 thresholds, crowd ground
    truths dropped, no ignored ones), with Ultralytics' confidence order.
    """
    if not protocol_traits(protocol).ultralytics_curves:
        matches = matches_from_outcome(gt, pred, outcome, iou_threshold)
        return None if matches is None else curves_from_matches(matches, iou_threshold)

    wanted = float32_values(np.array([float(iou_threshold)]))[0]
    t = np.flatnonzero(outcome.thresholds == wanted)
    if t.size == 0 or (len(outcome.category_ids) == 1 and outcome.category_ids[0] == -1):
        return None
    category_ids, names = grouping.sorted_categories(gt.categories)
    matched = np.full((1, len(pred)), -1, dtype=np.int64)
    iou = np.full((1, len(pred)), np.nan)
    matched[0, outcome.pred_row] = outcome.matched_gt_at(int(t[0]))
    iou[0, outcome.pred_row] = outcome.iou_at(int(t[0]))
    gt_class = class_rows(category_ids, gt.category_id)
    matches = grouping.DatasetMatches(
        category_ids=category_ids,
        names=names,
        gt_class=np.where(gt.crowd, -1, gt_class),
        gt_ignore=np.zeros(len(gt), dtype=bool),
        pred_class=class_rows(category_ids, pred.category_id),
        scores=pred.scores if pred.scores is not None else np.zeros(len(pred)),
        matched=matched,
        ignored=np.zeros((1, len(pred)), dtype=bool),
        iou=iou,
    )
    return curves_from_matches(matches, iou_threshold, ultralytics_image_index=pred.image_index)


def matches_from_outcome(
    gt: Dataset, pred: Dataset, outcome: Any, iou_threshold: float
) -> grouping.DatasetMatches | None:
    """The pipeline's :class:`~ioukit.evaluation.outcome.MatchOutcome` at ``iou_threshold`` as
    per-prediction matches (None when the outcome does not hold that threshold or pooled the
    classes). Predictions the protocol did not evaluate (beyond ``max_dets``) count as ignored.
    """
    t = threshold_index(outcome.thresholds, iou_threshold)
    if t is None or (len(outcome.category_ids) == 1 and outcome.category_ids[0] == -1):
        return None

    category_ids, names = grouping.sorted_categories(gt.categories)
    matched = np.full((1, len(pred)), -1, dtype=np.int64)
    ignored = np.ones((1, len(pred)), dtype=bool)
    iou = np.full((1, len(pred)), np.nan)
    rows = outcome.pred_row
    matched[0, rows] = outcome.matched_gt_at(t)  # one column of the outcome
    ignored[0, rows] = outcome.status_at(t) == IGNORED
    iou[0, rows] = outcome.iou_at(t)
    return grouping.DatasetMatches(
        category_ids=category_ids,
        names=names,
        gt_class=class_rows(category_ids, gt.category_id),
        gt_ignore=gt.crowd | gt.ignore | gt.difficult,
        pred_class=class_rows(category_ids, pred.category_id),
        scores=pred.scores if pred.scores is not None else np.zeros(len(pred)),
        matched=matched,
        ignored=ignored,
        iou=iou,
    )
