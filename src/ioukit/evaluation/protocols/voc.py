"""The PASCAL VOC protocol: VOC2007 11-point and VOC2010+ all-point mAP.

Matching follows the VOC devkit (``VOCevaldet.m``): within an image and class, predictions in
descending score each go to the ground truth with the highest IoU; a match above the threshold
to a free ground truth is a TP, to a taken one an FP (no fallback), to a *difficult* one
neither. Ground truths flagged ``difficult``, ``ignore`` or ``crowd`` all count as difficult:
they are left out of the number of positives and absorb matches without scoring them.

Choices, each documented and switchable:

- IoU threshold inclusive (``>=``, devkit); ``strict_threshold=True`` gives py-faster-rcnn's ``>``.
- Continuous pixel areas by default; ``pixel_inclusive=True`` uses the devkit's
  ``(x2 - x1 + 1) * (y2 - y1 + 1)`` areas and intersections (Padilla's published numbers
  need it).
- Predictions are ranked per class by descending score, stable: ties keep their input order
  (py-faster-rcnn's default quicksort does not guarantee any order for ties).
- The 11-point grid is ``np.arange(0, 1.1, 0.1)`` like the devkit's Python code;
  ``exact_grid=True`` uses exact ``k / 10`` points.
- A class without (non-difficult) ground truth gets AP -1 and is left out of the mean.
- Predictions whose category is not in ``gt.categories`` are not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.accumulate import sample_envelope
from ioukit.evaluation.ap import COCO_RECALL_THRESHOLDS, voc07_ap, voc10_ap
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.match import MatchRule
from ioukit.evaluation.outcome import IGNORED, TRUE_POSITIVE
from ioukit.evaluation.registry import register_protocol
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.sharding import MatchedShards
from ioukit.evaluation.similarity.box import BoxIoU

if TYPE_CHECKING:
    from ioukit.evaluation.grouping import MatchedPredictions

__all__ = ["VOCProtocol", "evaluate_voc", "match_voc", "summarize_voc"]


@dataclass(frozen=True, slots=True)
class VOCProtocol(MatchedShards):
    """PASCAL VOC: devkit argmax matching without fallback; 11-point (VOC07) or all-point AP.

    Attributes mirror :func:`ioukit.evaluation.protocols.voc.evaluate_voc`'s options; ``rule`` is
    ``MatchRule(strict=strict_threshold, tie="argmax", crowd=False, clamp=None)``.
    """

    interpolation: str = "11point"
    iou_threshold: float = 0.5
    pixel_inclusive: bool = False
    strict_threshold: bool = False
    exact_grid: bool = False
    name: str = "voc07"

    @property
    def rule(self) -> MatchRule:
        """The VOC devkit's matching rule."""
        return MatchRule(strict=self.strict_threshold, tie="argmax", crowd=False, clamp=None)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """VOC mAP (see :func:`ioukit.evaluation.protocols.voc.evaluate_voc`): :meth:`match`, then
        :meth:`summarize`."""
        return self.summarize(gt, pred, self.match(gt, pred, iou_type=iou_type), iou_type=iou_type)

    def match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> MatchedPredictions:
        """The first half of :meth:`evaluate` (:func:`ioukit.evaluation.protocols.voc.match_voc`).

        Run it on each shard of images (on the workers), merge with
        :meth:`MatchedPredictions.merge` (``pred_row_offsets``: the shards' offsets in their
        concatenation, which is the input order VOC ranks tied scores by) and call
        :meth:`summarize` once.
        """
        return match_voc(
            gt,
            pred,
            iou_threshold=self.iou_threshold,
            pixel_inclusive=self.pixel_inclusive,
            strict_threshold=self.strict_threshold,
        )

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        matched: MatchedPredictions,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """The second half of :meth:`evaluate`
        (:func:`ioukit.evaluation.protocols.voc.summarize_voc`).

        ``pred`` may be None (the predictions stayed on the workers); the ground truth gives
        the categories and the counts, so ``matched`` may come from shards matched against
        parts of it. Same numbers as :meth:`evaluate` on the same match.
        """
        return summarize_voc(
            gt,
            matched,
            interpolation=self.interpolation,
            iou_threshold=self.iou_threshold,
            pixel_inclusive=self.pixel_inclusive,
            strict_threshold=self.strict_threshold,
            exact_grid=self.exact_grid,
        )


def _voc(interpolation: str, name: str) -> Callable[..., VOCProtocol]:
    def factory(
        *,
        iou_threshold: float = 0.5,
        pixel_inclusive: bool = False,
        strict_threshold: bool = False,
        exact_grid: bool = False,
    ) -> VOCProtocol:
        return VOCProtocol(
            interpolation, float(iou_threshold), pixel_inclusive, strict_threshold, exact_grid, name
        )

    return factory


register_protocol("voc07", _voc("11point", "voc07"))


register_protocol("voc10", _voc("all", "voc10"))


def evaluate_voc(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    interpolation: str = "11point",
    iou_threshold: float = 0.5,
    pixel_inclusive: bool = False,
    strict_threshold: bool = False,
    exact_grid: bool = False,
) -> ProtocolResult:
    """PASCAL VOC mAP of ``pred`` against ``gt``.

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth and predictions over the same image table.
    interpolation : {"11point", "all"}
        VOC2007 11-point (protocol ``"voc07"``) or VOC2010+ all-point (``"voc10"``).
    iou_threshold : float, default 0.5
    pixel_inclusive : bool, default False
        VOC devkit ``+1`` pixel areas and intersections.
    strict_threshold : bool, default False
        Require ``IoU > iou_threshold`` instead of ``>=``.
    exact_grid : bool, default False
        11-point grid ``k / 10`` instead of the devkit's ``np.arange(0, 1.1, 0.1)``.

    Returns
    -------
    ProtocolResult
        ``stats={"mAP": ...}``; ``per_class`` rows (category-id order) with ``category_id``,
        ``name``, ``num_gt`` (non-difficult), ``num_pred``, ``AP``, ``TP``, ``FP``;
        ``arrays``: ``AP`` (K,), ``recall`` (K,) final recall, ``precision`` (K, 101) the
        precision envelope sampled at ``recall_thresholds`` (101,), and the raw curves
        ``curve_recall``/``curve_precision``/``curve_scores`` of all classes concatenated
        with ``curve_bounds`` (K + 1,): class ``k`` is ``curve_*[bounds[k]:bounds[k+1]]``.

    Raises
    ------
    ParameterError
        Unknown ``interpolation``, a threshold outside [0, 1].
    DataFormatError
        Mismatched datasets.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 20, 30, 30]],
    ...                          image_index=[0, 0], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.8])
    >>> r = evaluate_voc(gt, pred, interpolation="all")
    >>> r.protocol, r.stats["mAP"], r.per_class[0]["TP"], r.per_class[0]["FP"]
    ('voc10', 0.5, 1, 1)
    """
    if interpolation not in ("11point", "all"):
        raise ParameterError(f"interpolation: expected '11point' or 'all', got {interpolation!r}")
    matched = match_voc(
        gt,
        pred,
        iou_threshold=iou_threshold,
        pixel_inclusive=pixel_inclusive,
        strict_threshold=strict_threshold,
    )
    return summarize_voc(
        gt,
        matched,
        interpolation=interpolation,
        iou_threshold=iou_threshold,
        pixel_inclusive=pixel_inclusive,
        strict_threshold=strict_threshold,
        exact_grid=exact_grid,
    )


def _threshold(iou_threshold: float) -> float:
    threshold = float(iou_threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}")
    return threshold


def match_voc(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.5,
    pixel_inclusive: bool = False,
    strict_threshold: bool = False,
) -> MatchedPredictions:
    """The first half of :func:`evaluate_voc`: the devkit's match of every prediction.

    Returns a :class:`~ioukit.evaluation.grouping.MatchedPredictions` whose outcome holds one
    record per prediction of a ground-truth category (one threshold, one area range ``"all"``;
    ``IGNORED`` marks matches to difficult ground truths). Outcomes of disjoint image shards
    merge (:meth:`MatchedPredictions.merge`) and :func:`summarize_voc` gives the numbers.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> m = match_voc(gt, pred)
    >>> len(m.outcome), m.outcome.status.shape
    (1, (1, 1, 1))
    """

    threshold = _threshold(iou_threshold)
    result: MatchedPredictions = grouping.match_records(
        gt,
        pred,
        thresholds=np.array([threshold]),
        rule=MatchRule(strict=bool(strict_threshold), tie="argmax", crowd=False, clamp=None),
        similarity=BoxIoU(
            crowd=False, pixel_offset=1.0 if pixel_inclusive else 0.0, source_wh=False
        ),
        gt_ignore=gt.difficult | gt.ignore | gt.crowd,
    )
    return result


def summarize_voc(
    gt: Dataset,
    matched: MatchedPredictions,
    /,
    *,
    interpolation: str = "11point",
    iou_threshold: float = 0.5,
    pixel_inclusive: bool = False,
    strict_threshold: bool = False,
    exact_grid: bool = False,
) -> ProtocolResult:
    """The second half of :func:`evaluate_voc`: numbers from a :func:`match_voc` outcome.

    Reads the ground truth only for its categories and the number of non-difficult ground
    truths per class (so a merged outcome of shards matched against parts of the ground truth
    gives the one-process numbers). Predictions are ranked per class by descending score,
    ties by ``outcome.pred_row`` (input order: after a merge, pass the shards' row offsets).
    ``iou_threshold``, ``pixel_inclusive`` and ``strict_threshold`` go to ``params`` only.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [20, 20, 30, 30]],
    ...                          image_index=[0, 0], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> summarize_voc(gt, match_voc(gt, pred), interpolation="all").stats["mAP"]
    0.5
    """

    if interpolation not in ("11point", "all"):
        raise ParameterError(f"interpolation: expected '11point' or 'all', got {interpolation!r}")
    threshold = _threshold(iou_threshold)
    outcome = matched.outcome
    category_ids, names = grouping.sorted_categories(gt.categories)
    num_classes = category_ids.size
    gt_class = class_rows(category_ids, gt.category_id)
    regular = ~(gt.difficult | gt.ignore | gt.crowd) & (gt_class >= 0)
    num_gt = np.bincount(gt_class[regular], minlength=num_classes)
    num_pred = np.bincount(outcome.class_row, minlength=num_classes)
    status = outcome.status_at(0, 0)
    counted_class = np.where(status != IGNORED, outcome.class_row, -1)
    order, bounds = grouping.record_order(
        counted_class, outcome.score, outcome.pred_row, num_classes
    )

    tp_sorted = (status[order] == TRUE_POSITIVE).astype(np.int64)
    ap = np.full(num_classes, -1.0)
    final_recall = np.full(num_classes, -1.0)
    sampled = np.full((num_classes, COCO_RECALL_THRESHOLDS.size), -1.0)
    curve_recall = np.zeros(order.size)
    curve_precision = np.zeros(order.size)
    tp_total = np.zeros(num_classes, dtype=np.int64)
    fp_total = np.zeros(num_classes, dtype=np.int64)
    for k in range(num_classes):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        tp_cum = np.cumsum(tp_sorted[lo:hi])
        fp_cum = np.arange(1, hi - lo + 1) - tp_cum
        tp_total[k] = tp_cum[-1] if hi > lo else 0
        fp_total[k] = fp_cum[-1] if hi > lo else 0
        if num_gt[k] == 0:
            continue
        recall = tp_cum / num_gt[k]
        precision = tp_cum / np.maximum(tp_cum + fp_cum, 1)
        curve_recall[lo:hi] = recall
        curve_precision[lo:hi] = precision
        ap[k] = (
            voc07_ap(recall, precision, exact_grid=exact_grid)
            if interpolation == "11point"
            else voc10_ap(recall, precision)
        )
        final_recall[k] = recall[-1] if recall.size else 0.0
        sampled[k] = sample_envelope(recall, precision)
    valid = num_gt > 0
    mean_ap = float(np.mean(ap[valid])) if valid.any() else -1.0
    rows: list[dict[str, Any]] = [
        {
            "category_id": int(category_ids[k]),
            "name": names[k],
            "num_gt": int(num_gt[k]),
            "num_pred": int(num_pred[k]),
            "AP": float(ap[k]),
            "TP": int(tp_total[k]),
            "FP": int(fp_total[k]),
        }
        for k in range(num_classes)
    ]
    return ProtocolResult(
        protocol="voc07" if interpolation == "11point" else "voc10",
        stats={"mAP": mean_ap},
        per_class=tuple(rows),
        arrays={
            "AP": ap,
            "recall": final_recall,
            "precision": sampled,
            "recall_thresholds": COCO_RECALL_THRESHOLDS.copy(),
            "curve_recall": curve_recall,
            "curve_precision": curve_precision,
            "curve_scores": outcome.score[order],
            "curve_bounds": bounds,
        },
        params={
            "interpolation": interpolation,
            "iou_threshold": threshold,
            "pixel_inclusive": pixel_inclusive,
            "strict_threshold": strict_threshold,
            "exact_grid": exact_grid,
        },
    )
