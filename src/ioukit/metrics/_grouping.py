"""Shared plumbing of the VOC/YOLO protocols, curves and confusion matrix (private).

Groups a ground-truth and a prediction :class:`~ioukit.dataset.Dataset` by (image, class) by
sorting, runs the matching kernel over the whole dataset at once, and turns per-prediction
TP/FP flags into per-class cumulative curves. No Python loop runs per box or per group.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    ``matched`` holds original gt indices (-1: none).
    """

    category_ids: np.ndarray
    names: tuple[str, ...]
    gt_class: np.ndarray
    gt_ignore: np.ndarray
    pred_class: np.ndarray
    scores: np.ndarray
    matched: np.ndarray
    ignored: np.ndarray

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
) -> DatasetMatches:
    """Match every prediction of ``pred`` to ``gt`` per (image, class) group.

    ``gt_keep`` drops ground truths entirely (as if absent). Under ``class_agnostic`` the
    groups are whole images (classes are still reported per box).
    """
    from ioukit._kernels import matching as kernels

    check_pair(gt, pred)
    category_ids, names = sorted_categories(gt.categories)
    gt_class = class_rows(category_ids, gt.category_id)
    pred_class = class_rows(category_ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    keep = gt_class >= 0 if gt_keep is None else (gt_keep & (gt_class >= 0))
    num_classes = max(int(category_ids.size), 1)

    gt_group_class = np.zeros_like(gt_class) if class_agnostic else gt_class
    pred_group_class = np.zeros_like(pred_class) if class_agnostic else pred_class
    gt_key = gt.image_index * num_classes + gt_group_class
    gt_key = np.where(keep, gt_key, -1)  # dropped ground truths sort first, out of every group
    pred_key = pred.image_index * num_classes + pred_group_class
    pred_key = np.where(pred_class >= 0, pred_key, -2)  # unknown classes match nothing

    gt_order = (
        np.lexsort((gt_ignore, gt_key)) if rule == "coco" else np.argsort(gt_key, kind="stable")
    )
    pred_order = np.lexsort((-scores, pred_key))
    sorted_gt_key = gt_key[gt_order]
    sorted_pred_key = pred_key[pred_order]
    start = np.searchsorted(sorted_gt_key, sorted_pred_key, side="left")
    stop = np.searchsorted(sorted_gt_key, sorted_pred_key, side="right")
    stop = np.where(sorted_pred_key < 0, start, stop)

    num_t = iou_thresholds.size
    matched_sorted = np.empty((num_t, len(pred)), dtype=np.int64)
    ignored_sorted = np.empty((num_t, len(pred)), dtype=bool)
    kernels.match_dataset(
        np.ascontiguousarray(pred.boxes[pred_order]),
        np.ascontiguousarray(start, dtype=np.int64),
        np.ascontiguousarray(stop, dtype=np.int64),
        np.ascontiguousarray(gt.boxes[gt_order]),
        np.ascontiguousarray(gt_ignore[gt_order], dtype=bool),
        np.ascontiguousarray(gt_crowd[gt_order], dtype=bool),
        np.ascontiguousarray(iou_thresholds, dtype=np.float64),
        kernels.RULE_CODES[rule],
        strict,
        1.0 if plus1 else 0.0,
        float(eps),
        matched_sorted,
        ignored_sorted,
        np.zeros((num_t, len(gt)), dtype=bool),
        np.empty(len(gt), dtype=np.float64),
    )
    matched = np.empty_like(matched_sorted)
    matched[:, pred_order] = np.append(gt_order, -1)[matched_sorted]
    ignored = np.empty_like(ignored_sorted)
    ignored[:, pred_order] = ignored_sorted
    return DatasetMatches(
        category_ids=category_ids,
        names=names,
        gt_class=np.where(keep, gt_class, -1),
        gt_ignore=gt_ignore,
        pred_class=pred_class,
        scores=scores,
        matched=matched,
        ignored=ignored,
    )


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
