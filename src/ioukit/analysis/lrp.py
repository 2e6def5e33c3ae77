"""Optimal LRP (Localisation-Recall-Precision error, Oksuz et al.), from the COCO match.

Definitions of the LRP-Error reference (kemaloksuz/LRP-Error ``cocoeval.py`` ``accumulate``),
per class and area range, at ``tau`` (the match threshold, 0.5), over the class's evaluated
predictions in descending score (pycocotools' order; ignored ones keep their position):

* ``tp``, ``fp``: cumulative true and false positives; ``fn = npig - tp``;
* ``loc = tp - cumsum(IoU of each true positive)``;
* ``LRP = (loc / (1 - tau) + fp + fn) / (tp + fp + fn)`` at every position;
* ``oLRP = min LRP`` at the *first* minimising position, whose score is the LRP-optimal
  threshold, with components ``loc / tp``, ``fp / (tp + fp)``, ``fn / npig``;
* a class with ground truth but no prediction or no true positive: ``oLRP = 1``,
  ``oLRP_FN = 1``, ``oLRP_loc = oLRP_FP = threshold = NaN``; a class without (regular)
  ground truth in the range: -1 (not counted).

The dataset values average the classes' values that are neither NaN nor -1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.pairing import FALSE_POSITIVE, TRUE_POSITIVE, coco_outcome, resolve_pair

__all__ = ["LRPResult", "lrp", "lrp_curve"]


DEFAULT_AREA_RANGES: Mapping[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}


def lrp_curve(
    tp: np.ndarray, fp: np.ndarray, iou: np.ndarray, num_gt: int, tau: float = 0.5
) -> np.ndarray:
    """LRP at every position of a score-sorted list of predictions.

    Parameters
    ----------
    tp, fp : ndarray of bool, shape (N,)
        True / false positive flags in descending score (both False: ignored).
    iou : ndarray of float, shape (N,)
        IoU of each prediction with its match (read only where ``tp``).
    num_gt : int
        Regular ground truths (> 0).
    tau : float
        The match threshold.

    Returns
    -------
    ndarray of float64, shape (N,)

    Examples
    --------
    >>> lrp_curve(np.array([True, False]), np.array([False, True]), np.array([0.75, 0]), 2)
    array([0.75      , 0.83333333])
    >>> lrp_curve(np.zeros(0, bool), np.zeros(0, bool), np.zeros(0), 1).shape
    (0,)
    """
    tp_num = np.cumsum(tp)
    fp_num = np.cumsum(fp)
    fn_num = num_gt - tp_num
    total_loc = tp_num - np.cumsum(np.where(tp, iou, 0.0))
    out: np.ndarray = (total_loc / (1 - tau) + fp_num + fn_num) / (tp_num + fp_num + fn_num)
    return out


@dataclass(frozen=True, slots=True, eq=False)
class LRPResult:
    """Optimal LRP per class and area range, and the dataset means.

    Attributes
    ----------
    olrp, olrp_loc, olrp_fp, olrp_fn, threshold : ndarray of float64, shape (K, A)
        oLRP, its components and the LRP-optimal score threshold; -1 for a class without
        ground truth in the range, NaN as the reference (see the module docstring).
    cat_ids : ndarray of int64, shape (K,)
    area_names : tuple of str, length A
    stats : dict of str to float
        ``oLRP, oLRP_loc, oLRP_FP, oLRP_FN`` (area "all") and ``oLRP_<area>`` for the other
        ranges: means over classes (NaN and -1 skipped; -1 when nothing is left).
    tau : float

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 8]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> r = lrp(gt, pred)
    >>> round(r.stats["oLRP"], 4), round(r.stats["oLRP_loc"], 4), float(r.threshold[0, 0])
    (0.4, 0.2, 0.9)
    """

    olrp: np.ndarray
    olrp_loc: np.ndarray
    olrp_fp: np.ndarray
    olrp_fn: np.ndarray
    threshold: np.ndarray
    cat_ids: np.ndarray
    area_names: tuple[str, ...]
    stats: dict[str, float]
    tau: float

    @property
    def per_class(self) -> tuple[dict[str, Any], ...]:
        """One row per class (area "all"): ``category_id``, ``oLRP``, components, threshold."""
        return tuple(
            {
                "category_id": int(c),
                "oLRP": float(self.olrp[k, 0]),
                "oLRP_loc": float(self.olrp_loc[k, 0]),
                "oLRP_FP": float(self.olrp_fp[k, 0]),
                "oLRP_FN": float(self.olrp_fn[k, 0]),
                "threshold": float(self.threshold[k, 0]),
            }
            for k, c in enumerate(self.cat_ids.tolist())
        )

    def summary(self) -> str:
        """The reference's LRP lines (means over classes)."""
        return "\n".join(f" {key:<12} = {value:0.3f}" for key, value in self.stats.items())


def _mean(values: np.ndarray) -> float:
    s = values[~np.isnan(values)]
    s = s[s > -1]
    return float(np.mean(s)) if s.size else -1.0


def lrp(
    gt: Any,
    predictions: Dataset | None = None,
    /,
    *,
    tau: float = 0.5,
    area_ranges: Mapping[str, Sequence[float]] | None = None,
    max_dets: int = 100,
    iou_type: str | None = None,
) -> LRPResult:
    """Optimal LRP and LRP-optimal thresholds per class and area range.

    Parameters
    ----------
    gt : Dataset or EvaluationResult
        Ground truth (then ``predictions`` is required), or an evaluation result whose
        ``ground_truth`` and ``predictions`` are used.
    predictions : Dataset, optional
    tau : float
        The IoU threshold of the match (the reference: 0.5, its first COCO threshold).
    area_ranges : mapping of str to (low, high), optional
        Default all/small/medium/large.
    max_dets : int
        Predictions per image and class (the reference: ``maxDets[2]`` = 100).
    iou_type : {"bbox", "segm"}, optional
        Default: the evaluation result's, else ``"bbox"``.

    Returns
    -------
    LRPResult
    """
    gt_ds, pred_ds, kind, outcome = resolve_pair(gt, predictions, iou_type)
    tau = float(tau)
    if not 0.0 <= tau < 1.0:
        raise ParameterError(f"tau: expected a number in [0, 1), got {tau!r}")
    ranges = DEFAULT_AREA_RANGES if area_ranges is None else area_ranges
    t = coco_outcome(
        gt_ds,
        pred_ds,
        iou_threshold=tau,
        area_ranges=ranges,
        max_dets=max_dets,
        iou_type=kind,
        reuse=outcome,
    )
    n_k, n_a = len(t.cat_ids), len(t.area_names)
    shape = (n_k, n_a)
    olrp, loc, fp_c, fn_c, thr = (np.full(shape, -1.0) for _ in range(5))
    # predictions are in accumulation order; a stable sort by class keeps it within classes
    by_class = np.argsort(t.pred_class, kind="stable")
    bounds = np.searchsorted(t.pred_class[by_class], np.arange(n_k + 1))
    for a in range(n_a):
        npig = t.num_positives(a)
        for k in range(n_k):
            if npig[k] == 0:
                continue
            idx = by_class[bounds[k] : bounds[k + 1]]
            status = t.status[idx, a]
            tp = status == TRUE_POSITIVE
            if not tp.any():
                olrp[k, a], fn_c[k, a] = 1.0, 1.0
                loc[k, a] = fp_c[k, a] = thr[k, a] = np.nan
                continue
            fp = status == FALSE_POSITIVE
            iou = np.where(tp, t.match_iou[idx, a], 0.0)
            tp_num = np.cumsum(tp)
            fp_num = np.cumsum(fp)
            total_loc = tp_num - np.cumsum(iou)
            curve = lrp_curve(tp, fp, iou, int(npig[k]), tau)
            best = int(np.argmin(curve))
            tp_n, fp_n = int(tp_num[best]), int(fp_num[best])
            olrp[k, a] = curve[best]
            loc[k, a] = total_loc[best] / tp_n if tp_n else np.nan
            fp_c[k, a] = fp_n / (tp_n + fp_n) if tp_n + fp_n else np.nan
            fn_c[k, a] = (int(npig[k]) - tp_n) / int(npig[k])
            thr[k, a] = t.pred_score[idx[best]]
    stats = {
        "oLRP": _mean(olrp[:, 0]),
        "oLRP_loc": _mean(loc[:, 0]),
        "oLRP_FP": _mean(fp_c[:, 0]),
        "oLRP_FN": _mean(fn_c[:, 0]),
    }
    for a, name in enumerate(t.area_names[1:], start=1):
        stats[f"oLRP_{name}"] = _mean(olrp[:, a])
    return LRPResult(
        olrp=olrp,
        olrp_loc=loc,
        olrp_fp=fp_c,
        olrp_fn=fn_c,
        threshold=thr,
        cat_ids=t.cat_ids,
        area_names=t.area_names,
        stats=stats,
        tau=tau,
    )
