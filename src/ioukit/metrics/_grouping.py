"""Shared plumbing of the VOC/YOLO protocols, curves and confusion matrix (private).

Matches a ground-truth and a prediction :class:`~ioukit.dataset.Dataset` through the
pipeline (:mod:`ioukit.evaluation`: groups, box IoU, the one matcher) over the whole dataset,
and turns per-prediction TP/FP flags into per-class cumulative curves. No Python loop runs
per box or per group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset
from ioukit.errors import DataFormatError

ULTRALYTICS_EPS = 1e-7
"""Ultralytics' ``box_iou`` adds this to the union; ioukit follows it for the YOLO protocol."""


def check_pair(gt: Dataset, pred: Dataset) -> None:
    """Raise unless ``gt`` is ground truth and ``pred`` predictions over the same images."""
    if not isinstance(gt, Dataset) or not isinstance(pred, Dataset):
        raise DataFormatError(
            f"gt, pred: expected two ioukit.dataset.Dataset objects, got "
            f"{type(gt).__name__} and {type(pred).__name__}"
        )
    if gt.is_prediction:
        raise DataFormatError("gt: expected ground truth (scores=None), got a dataset with scores")
    if not pred.is_prediction:
        raise DataFormatError("pred: expected predictions (with scores), got scores=None")
    if len(pred.images) != len(gt.images):
        raise DataFormatError(
            f"pred.images: expected the ground truth's image table ({len(gt.images)} images), "
            f"got {len(pred.images)} images"
        )


def sorted_categories(categories: CategoryTable) -> tuple[np.ndarray, tuple[str, ...]]:
    """Category ids in ascending order and their names."""
    order = np.argsort(categories.ids, kind="stable")
    return categories.ids[order], tuple(categories.names[i] for i in order.tolist())


def class_rows(category_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row of each id in the sorted ``category_ids``; -1 for ids not in it."""
    if category_ids.size == 0:
        return np.full(ids.shape, -1, dtype=np.int64)
    rows = np.searchsorted(category_ids, ids)
    rows = np.minimum(rows, category_ids.size - 1)
    return np.where(category_ids[rows] == ids, rows, -1).astype(np.int64)


@dataclass(frozen=True)
class DatasetMatches:
    """Matching of a whole dataset at T thresholds, in the predictions' original order.

    ``pred_class``/``gt_class`` are rows in ``category_ids`` (-1: unknown, never matched).
    ``matched`` holds original gt indices (-1: none); ``iou`` (T, P) the IoU of that match
    (NaN: none).
    """

    category_ids: np.ndarray
    names: tuple[str, ...]
    gt_class: np.ndarray
    gt_ignore: np.ndarray
    pred_class: np.ndarray
    scores: np.ndarray
    matched: np.ndarray
    ignored: np.ndarray
    iou: np.ndarray | None = None

    @property
    def tp(self) -> np.ndarray:
        """(T, P) bool."""
        return np.asarray((self.matched >= 0) & ~self.ignored)

    @property
    def fp(self) -> np.ndarray:
        """(T, P) bool: unmatched and not ignored, among predictions of a known class."""
        return np.asarray((self.matched < 0) & ~self.ignored & (self.pred_class >= 0))

    def num_gt(self) -> np.ndarray:
        """(K,) number of non-ignored ground truths per class."""
        keep = ~self.gt_ignore & (self.gt_class >= 0)
        return np.bincount(self.gt_class[keep], minlength=self.category_ids.size)

    def num_pred(self) -> np.ndarray:
        """(K,) number of predictions per class."""
        known = self.pred_class >= 0
        return np.bincount(self.pred_class[known], minlength=self.category_ids.size)


def match_dataset(
    gt: Dataset,
    pred: Dataset,
    *,
    iou_thresholds: np.ndarray,
    rule: str,
    gt_ignore: np.ndarray,
    gt_crowd: np.ndarray,
    gt_keep: np.ndarray | None = None,
    strict: bool = False,
    plus1: bool = False,
    eps: float = 0.0,
    class_agnostic: bool = False,
    float32: bool = False,
) -> DatasetMatches:
    """Match every prediction of ``pred`` to ``gt`` per (image, class) group, through the
    pipeline's one matcher (:func:`ioukit.evaluation.match.match_groups`).

    ``rule``: ``"coco"`` (greedy, last gt on IoU ties), ``"first"`` (greedy, first gt on ties,
    Ultralytics) or ``"voc"`` (devkit argmax, no fallback). ``gt_keep`` drops ground truths
    entirely (as if absent). Under ``class_agnostic`` the groups are whole images (classes are
    still reported per box). ``float32``: Ultralytics' float32 IoU
    (:class:`~ioukit.evaluation.similarity.Float32BoxIoU`); pass float32-valued thresholds.
    """
    from dataclasses import replace

    from ioukit.evaluation.groups import Groups
    from ioukit.evaluation.match import MatchRule, match_groups
    from ioukit.evaluation.outcome import IGNORED
    from ioukit.evaluation.similarity import BoxIoU, Float32BoxIoU

    check_pair(gt, pred)
    category_ids, names = sorted_categories(gt.categories)
    gt_class = class_rows(category_ids, gt.category_id)
    pred_class = class_rows(category_ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    keep = gt_class >= 0 if gt_keep is None else (gt_keep & (gt_class >= 0))
    kept_rows = np.flatnonzero(keep)
    sub = replace(
        gt,
        boxes=gt.boxes[kept_rows],
        image_index=gt.image_index[kept_rows],
        category_id=gt.category_id[kept_rows],
        area=gt.area[kept_rows],
        crowd=np.asarray(gt_crowd, dtype=bool)[kept_rows],
        ignore=gt.ignore[kept_rows],
        difficult=gt.difficult[kept_rows],
        annotation_id=np.arange(len(kept_rows), dtype=np.int64),
        segmentation=None,
        keypoints=None,
        rotated=None,
        group_of=None,
        box_wh=None,
    )
    groups = Groups.build(sub, pred, use_cats=not class_agnostic, max_det=max(len(pred), 1))
    similarity = (
        Float32BoxIoU(eps=eps)
        if float32
        else BoxIoU(pixel_offset=1.0 if plus1 else 0.0, eps=eps, source_wh=False)
    )
    matrices = similarity.matrices(sub, pred, groups)
    tie = {"coco": "last", "first": "first", "voc": "argmax"}[rule]
    outcome = match_groups(
        sub,
        pred,
        groups,
        matrices,
        thresholds=np.asarray(iou_thresholds, dtype=np.float64),
        rule=MatchRule(
            strict=strict, tie=tie, crowd=True, clamp=1.0 - 1e-10 if tie == "last" else None
        ),
        gt_ignore=np.asarray(gt_ignore, dtype=bool)[kept_rows],
    )
    num_t = np.asarray(iou_thresholds).size
    matched = np.full((num_t, len(pred)), -1, dtype=np.int64)
    ignored = np.zeros((num_t, len(pred)), dtype=bool)
    matched[:, outcome.pred_row] = np.append(kept_rows, -1)[outcome.matched_gt].T
    ignored[:, outcome.pred_row] = (outcome.status[:, 0, :] == IGNORED).T
    return DatasetMatches(
        category_ids=category_ids,
        names=names,
        gt_class=np.where(keep, gt_class, -1),
        gt_ignore=gt_ignore,
        pred_class=pred_class,
        scores=scores,
        matched=matched,
        ignored=ignored,
        iou=_scatter_iou(outcome, num_t, len(pred)),
    )


def _scatter_iou(outcome: Any, num_t: int, n: int) -> np.ndarray:
    iou = np.full((num_t, n), np.nan)
    iou[:, outcome.pred_row] = outcome.iou.T
    return iou


def class_order(
    pred_class: np.ndarray, scores: np.ndarray, counted: np.ndarray, num_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Counted predictions grouped by class, descending score, ties in input order.

    Returns ``(order, bounds)``: predictions ``order[bounds[k]:bounds[k+1]]`` are class ``k``'s.
    """
    index = np.flatnonzero(counted & (pred_class >= 0))
    order = index[np.lexsort((-scores[index], pred_class[index]))]
    counts = np.bincount(pred_class[order], minlength=num_classes)
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return order, bounds


def smooth(values: np.ndarray, fraction: float) -> np.ndarray:
    """Box filter over ``fraction`` of the length, edges padded (Ultralytics ``smooth``)."""
    width = round(len(values) * fraction * 2) // 2 + 1
    pad = np.ones(width // 2)
    padded = np.concatenate((pad * values[0], values, pad * values[-1]))
    return np.convolve(padded, np.ones(width) / width, mode="valid")
