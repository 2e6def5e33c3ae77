"""F1-optimal confidence thresholds, per class and overall, from the actual scores.

Read from the COCO match at ``iou_threshold`` (pycocotools' rule, 100 predictions per image
and class). A threshold ``s`` keeps the predictions with ``score >= s`` (inclusive). COCO
matching is greedy in descending score, so the predictions kept at ``s`` match exactly as in
the full evaluation: the TP, FP and FN counts reported at the optimal threshold are those of a
fresh evaluation of only the kept predictions, and P, R, F1 are computed from those counts
(``P = TP / (TP + FP)``, ``R = TP / (TP + FN)``, ``F1 = 2 TP / (2 TP + FP + FN)``).

Candidates are the distinct scores of the (non-ignored) predictions; among equal F1 the
highest threshold wins. A class whose best F1 is 0 (no true positive) has threshold NaN."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.evaluation.pairing import IGNORED, TRUE_POSITIVE, coco_outcome, resolve_pair

__all__ = ["OptimalThresholds", "best_f1_threshold", "optimal_thresholds"]


def best_f1_threshold(
    scores: np.ndarray, tp: np.ndarray, num_gt: int
) -> tuple[float, int, int, int]:
    """The F1-optimal inclusive threshold of scored true / false positives.

    Parameters
    ----------
    scores : ndarray of float, shape (N,)
    tp : ndarray of bool, shape (N,)
        True positive (else false positive).
    num_gt : int
        Ground truths to find.

    Returns
    -------
    threshold, tp, fp, fn
        ``threshold`` NaN when no threshold gives a true positive.

    Examples
    --------
    >>> best_f1_threshold(np.array([0.9, 0.8, 0.7]), np.array([True, False, True]), 2)
    (0.7, 2, 1, 0)
    >>> best_f1_threshold(np.array([0.5]), np.array([False]), 1)
    (nan, 0, 0, 1)
    """
    order = np.argsort(-scores, kind="stable")
    s, hits = scores[order], tp[order]
    n_tp = np.cumsum(hits)
    n_fp = np.cumsum(~hits)
    # the last position of every run of equal scores: threshold s keeps the whole run
    last = np.flatnonzero(np.r_[s[1:] != s[:-1], True]) if len(s) else np.zeros(0, np.int64)
    t_at, f_at = n_tp[last], n_fp[last]
    denom = 2 * t_at + f_at + (num_gt - t_at)
    f1 = np.divide(2 * t_at, denom, out=np.zeros(len(last)), where=denom > 0)
    if len(last) == 0 or f1.max() <= 0:
        return float("nan"), 0, 0, int(num_gt)
    j = int(np.argmax(f1))
    t, f = int(t_at[j]), int(f_at[j])
    return float(s[last[j]]), t, f, int(num_gt) - t


def _best(scores: np.ndarray, tp: np.ndarray, npos: int) -> dict[str, Any]:
    """The F1-optimal threshold of these predictions and its counts, as a row's columns."""
    thr, n_tp, n_fp, n_fn = best_f1_threshold(scores, tp, npos)
    p = n_tp / (n_tp + n_fp) if n_tp + n_fp else 0.0
    r = n_tp / (n_tp + n_fn) if n_tp + n_fn else 0.0
    f = 2 * n_tp / (2 * n_tp + n_fp + n_fn) if n_tp else 0.0
    return {
        "threshold": thr,
        "precision": p,
        "recall": r,
        "f1": f,
        "tp": n_tp,
        "fp": n_fp,
        "fn": n_fn,
    }


@dataclass(frozen=True, slots=True, eq=False)
class OptimalThresholds:
    """F1-optimal thresholds per class and overall.

    Attributes
    ----------
    per_class : tuple of dict
        ``category_id, name, threshold, precision, recall, f1, tp, fp, fn`` per class.
    overall : dict
        The same for one threshold shared by all classes (counts summed over classes).
    iou_threshold : float

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.6, 0.9])
    >>> r = optimal_thresholds(gt, pred)
    >>> r.overall["threshold"], r.overall["f1"], r.overall["fp"]
    (0.6, 0.6666666666666666, 1)
    """

    per_class: tuple[dict[str, Any], ...]
    overall: dict[str, Any]
    iou_threshold: float

    def table(self) -> str:
        """Aligned text: one line per class, then ``all``."""
        lines = [f"{'class':<20} {'conf':>6} {'P':>6} {'R':>6} {'F1':>6} {'TP':>6} {'FP':>6}"]
        for row in (*self.per_class, {**self.overall, "name": "all"}):
            lines.append(
                f"{str(row['name'])[:20]:<20} {row['threshold']:6.3f} {row['precision']:6.3f} "
                f"{row['recall']:6.3f} {row['f1']:6.3f} {row['tp']:6d} {row['fp']:6d}"
            )
        return "\n".join(lines)


def optimal_thresholds(
    gt: Any,
    predictions: Dataset | None = None,
    /,
    *,
    iou_threshold: float = 0.5,
    max_dets: int = 100,
    class_names: Sequence[str] | None = None,
    iou_type: str | None = None,
) -> OptimalThresholds:
    """F1-optimal confidence per class and overall (see the module docstring).

    Parameters
    ----------
    gt : Dataset or EvaluationResult
        Ground truth (then ``predictions`` is required) or an evaluation result.
    predictions : Dataset, optional
    iou_threshold : float
        Match threshold (``IoU >= iou_threshold``).
    max_dets : int
        Predictions per image and class.
    class_names : sequence of str, optional
        Names in category-id order (default: the ground truth's).
    iou_type : {"bbox", "segm"}, optional
        Default: the evaluation result's, else ``"bbox"``.

    Returns
    -------
    OptimalThresholds
    """
    gt_ds, pred_ds, kind, outcome = resolve_pair(gt, predictions, iou_type)
    t = coco_outcome(
        gt_ds, pred_ds, iou_threshold=iou_threshold, max_dets=max_dets, iou_type=kind, reuse=outcome
    )
    status = t.status[:, 0]
    counted = status != IGNORED
    tp = status == TRUE_POSITIVE
    npos = t.num_positives(0)
    names = dict(zip(gt_ds.categories.ids.tolist(), gt_ds.categories.names, strict=True))
    if class_names is not None:
        names = dict(zip(t.cat_ids.tolist(), class_names, strict=False))
    rows: list[dict[str, Any]] = []
    for k, cid in enumerate(t.cat_ids.tolist()):
        mine = counted & (t.pred_class == k)
        best = _best(t.pred_score[mine], tp[mine], int(npos[k]))
        rows.append({"category_id": cid, "name": names.get(cid, str(cid)), **best})
    overall = _best(t.pred_score[counted], tp[counted], int(npos.sum()))
    return OptimalThresholds(tuple(rows), overall, float(iou_threshold))
