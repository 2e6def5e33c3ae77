"""The ``"dota"`` and ``"mmrotate"`` protocols (oriented boxes, VOC-style AP); the boxes
are compared by :mod:`ioukit.evaluation.similarity.rotated`.

* ``protocol="dota"``: the DOTA devkit's task-1 evaluation (``dota_evaluation_task1.py``):
  each detection, in descending score, takes the ground truth of highest IoU in its image and
  class; a true positive when ``IoU > 0.5`` (strict) and that ground truth is free, nothing
  when it is difficult, else a false positive; 11-point VOC07 AP (the devkit's ``np.arange``
  grid); mAP over every class of the ground truth's class list (a class without ground truth
  scores 0, as in the devkit). Ties in score keep image order; ``compat="devkit"`` orders each
  class's detections as the devkit does instead (``np.argsort(-confidence)``, NumPy's unstable
  quicksort, over the detections in reading order: the lines of ``Task1_<class>.txt``).
* ``protocol="mmrotate"``: mmrotate's ``eval_rbbox_map``: the same matching with
  ``IoU >= 0.5``, 11-point AP by default (``use_07_metric``) in mmdet's float32 arithmetic,
  mAP over the classes that have ground truth. mmrotate computes the IoU in float32 (mmcv's
  ``box_iou_rotated``) and puts ignored ground truths after the others when two IoUs tie;
  ioukit computes the exact IoU in float64 in file order. Ties in score keep image order.

Examples
--------
>>> import ioukit
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images, cats = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["ship"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0],
...                          category_id=[1], rotated=[[50, 50, 40, 20, 30]])
>>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]], image_index=[0],
...                            category_id=[1], scores=[0.9], rotated=[[52, 50, 40, 20, 35]])
>>> round(ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated").stats["mAP"], 12)
1.0
>>> r = ioukit.evaluate(gt, pred, protocol="coco", iou_type="rotated")
>>> round(r.stats["AP50"], 12), round(r.stats["AP"], 12)
(1.0, 0.7)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.ap import voc07_ap, voc10_ap
from ioukit.evaluation.groups import Groups
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import FALSE_POSITIVE, TRUE_POSITIVE
from ioukit.evaluation.registry import (
    ProtocolTraits,
    check_pair,
    get_similarity,
    register_protocol,
)
from ioukit.evaluation.result import ProtocolResult

__all__ = ["RotatedVOCProtocol"]


@dataclass(frozen=True, slots=True)
class RotatedVOCProtocol:
    """VOC-style evaluation of oriented boxes: the DOTA devkit (task 1) or mmrotate.

    Attributes
    ----------
    name : {"dota", "mmrotate"}
    iou_threshold : float
    strict_threshold : bool
        ``IoU > t`` (DOTA devkit) instead of ``IoU >= t`` (mmrotate).
    interpolation : {"11point", "all"}
        VOC07 11-point AP (both tools' default) or the all-point area.
    classes_with_gt_only : bool
        mAP over the classes that have ground truth (mmrotate) instead of every class of the
        ground truth's class list (DOTA devkit).
    compat : {None, "devkit"}
        ``"devkit"``: break ties in score as the devkit's unstable ``np.argsort(-confidence)``
        over each class's detections in dataset order.
    mmdet_arithmetic : bool
        mmdet's ``average_precision`` arithmetic (mmrotate): float32 TP/FP and precision, the
        11 samples summed in float32 then divided by 11, the mean over classes in float32.
    """

    name: str = "dota"
    iou_threshold: float = 0.5
    strict_threshold: bool = True
    interpolation: str = "11point"
    classes_with_gt_only: bool = False
    compat: str | None = None
    mmdet_arithmetic: bool = False

    @property
    def rule(self) -> MatchRule:
        """Devkit matching: argmax ground truth, no fallback, no crowd, no clamp."""
        return MatchRule(strict=self.strict_threshold, tie="argmax", crowd=False, clamp=None)

    def evaluate(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "rotated"
    ) -> ProtocolResult:
        """mAP and per-class AP (``AP``, ``num_gt``, ``num_pred``, ``recall``)."""

        check_pair(gt, pred)
        devkit_rank = None
        if self.compat == "devkit":
            pred, devkit_rank = _devkit_order(pred)
        groups = Groups.build(gt, pred, use_cats=True, max_det=max(len(pred), 1))
        matrices = get_similarity(iou_type).matrices(gt, pred, groups)
        outcome = match_groups(
            gt,
            pred,
            groups,
            matrices,
            thresholds=np.array([self.iou_threshold]),
            rule=self.rule,
            gt_ignore=gt.difficult | gt.ignore,
        )
        start, end = outcome.class_bounds()
        names = dict(zip(gt.categories.ids.tolist(), gt.categories.names, strict=True))
        num_pred = np.bincount(groups.pred_class, minlength=len(groups.category_ids))
        rows: list[dict[str, Any]] = []
        aps: list[float] = []
        for k, cid in enumerate(groups.category_ids.tolist()):
            status = outcome.status[start[k] : end[k], 0, 0]
            if devkit_rank is not None:
                status = status[np.argsort(outcome.pred_row[start[k] : end[k]], kind="stable")]
            npos = int(outcome.gt_count[k, 0])
            if npos > 0 and self.mmdet_arithmetic:
                ap, last_recall = _mmdet_ap(status, npos, self.interpolation)
                aps.append(ap)
            elif npos > 0:
                tp = np.cumsum(status == TRUE_POSITIVE).astype(np.float64)
                fp = np.cumsum(status == FALSE_POSITIVE).astype(np.float64)
                recall = tp / npos
                precision = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
                ap = (
                    voc07_ap(recall, precision)
                    if self.interpolation == "11point"
                    else (voc10_ap(recall, precision))
                )
                aps.append(ap)
                last_recall = float(recall[-1]) if recall.size else 0.0
            else:
                ap, last_recall = (-1.0, -1.0)
                if not self.classes_with_gt_only:
                    aps.append(0.0)  # the devkit's NaN recall gives AP 0 for such a class
            rows.append(
                {
                    "category_id": int(cid),
                    "name": names[int(cid)],
                    "num_gt": npos,
                    "num_pred": int(num_pred[k]),
                    "AP": float(ap),
                    "recall": last_recall,
                }
            )
        if not aps:
            mean = -1.0
        elif self.mmdet_arithmetic:
            mean = float(np.array(aps, dtype=np.float32).mean())
        else:
            mean = float(np.mean(aps))
        if devkit_rank is not None:  # records name the caller's prediction rows
            outcome = replace(outcome, pred_row=devkit_rank[outcome.pred_row])
        params = {
            "iou_threshold": self.iou_threshold,
            "strict_threshold": self.strict_threshold,
            "interpolation": self.interpolation,
            "classes_with_gt_only": self.classes_with_gt_only,
            "compat": self.compat,
            "iou_type": iou_type,
        }
        return ProtocolResult(self.name, {"mAP": mean}, tuple(rows), {}, params, outcome=outcome)


def _mmdet_ap(status: np.ndarray, npos: int, interpolation: str) -> tuple[float, float]:
    """mmdet's ``average_precision`` on one class (as mmrotate's ``eval_rbbox_map`` calls it)."""
    tp = np.cumsum((status == TRUE_POSITIVE).astype(np.float32))
    fp = np.cumsum((status == FALSE_POSITIVE).astype(np.float32))
    eps = np.finfo(np.float32).eps
    recalls = tp / np.maximum(np.array([npos]), eps)
    precisions = tp / np.maximum(tp + fp, eps)
    ap = np.zeros(1, dtype=np.float32)
    if interpolation == "11point":
        for thr in np.arange(0, 1 + 1e-3, 0.1):
            precs = precisions[recalls >= thr]
            ap[0] += precs.max() if precs.size > 0 else 0
        ap /= 11
    else:
        mrec = np.concatenate([[0.0], recalls, [1.0]])
        mpre = np.concatenate([[0.0], precisions, [0.0]])
        for i in range(mpre.size - 1, 0, -1):
            mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
        ind = np.flatnonzero(mrec[1:] != mrec[:-1])
        ap[0] = np.sum((mrec[ind + 1] - mrec[ind]) * mpre[ind + 1])
    return float(ap[0]), float(recalls[-1]) if recalls.size else 0.0


def _devkit_order(pred: Dataset) -> tuple[Dataset, np.ndarray]:
    """``pred`` with its rows reordered class by class as ``np.argsort(-confidence)`` (the
    devkit's default quicksort) orders them, and that permutation."""
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    parts = []
    for cid in np.unique(pred.category_id).tolist():
        rows = np.flatnonzero(pred.category_id == cid)
        parts.append(rows[np.argsort(-scores[rows])])
    perm = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    seg = pred.segmentation
    reordered = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=pred.boxes[perm],
        image_index=pred.image_index[perm],
        category_id=pred.category_id[perm],
        scores=scores[perm],
        area=pred.area[perm],
        segmentation=None if seg is None else [seg[i] for i in perm.tolist()],
        rotated=None if pred.rotated is None else np.asarray(pred.rotated)[perm],
    )
    return reordered, perm


def _rotated_voc(
    name: str, strict: bool, with_gt_only: bool, mmdet: bool = False
) -> Callable[..., RotatedVOCProtocol]:
    def factory(
        *,
        iou_threshold: float = 0.5,
        strict_threshold: bool = strict,
        interpolation: str = "11point",
        compat: str | None = None,
    ) -> RotatedVOCProtocol:
        if compat not in (None, "devkit"):
            raise ParameterError(f"compat: expected None or 'devkit', got {compat!r}")
        if interpolation not in ("11point", "all"):
            raise ParameterError(
                f"interpolation: expected '11point' or 'all', got {interpolation!r}"
            )
        threshold = float(iou_threshold)
        if not 0.0 <= threshold <= 1.0:
            raise ParameterError(
                f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}"
            )
        return RotatedVOCProtocol(
            name, threshold, bool(strict_threshold), interpolation, with_gt_only, compat, mmdet
        )

    return factory


def _traits(strict: bool) -> ProtocolTraits:
    """The tools' rule for the curves and matched IoUs at another threshold: VOC's (highest
    IoU, no fallback, no crowd) with the tool's threshold test (DOTA ``>``, mmrotate ``>=``)."""

    return ProtocolTraits(rematch=partial(grouping.voc_rematch, strict=strict))


register_protocol(
    "dota",
    _rotated_voc("dota", True, False),
    iou_types=("rotated", "probiou"),
    traits=_traits(strict=True),
)


register_protocol(
    "mmrotate",
    _rotated_voc("mmrotate", False, True, True),
    iou_types=("rotated", "probiou"),
    traits=_traits(strict=False),
)
