"""The per-prediction match outcome that error analysis, per-image metrics, thresholds and LRP read.

Until the evaluation pipeline's ``MatchOutcome`` (#10) is on main, this module builds the same
table by running the library's one COCO matching rule (:func:`ioukit.match_predictions`, the
COCO engine's kernel ``match_group_coco``) once per (image, class) group and area range. It
never matches by any other rule. When the pipeline lands, :func:`coco_outcome` becomes a thin
adapter over its outcome and nothing downstream changes.

Conventions (as pycocotools ``evaluateImg``): per (image, class) the ``max_dets`` highest-scoring
predictions are evaluated (stable order), ground truths that are crowd, ``ignore``, VOC
``difficult`` or outside the area range are ignored, a prediction matched to one of those is
ignored, an unmatched prediction outside the area range is ignored, ``IoU >= threshold``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError

__all__ = [
    "FALSE_POSITIVE",
    "IGNORED",
    "TRUE_POSITIVE",
    "MatchTable",
    "Similarity",
    "aligned_iou",
    "coco_outcome",
    "image_rank_of",
    "live_groups",
    "pair_iou",
    "resolve_pair",
]

FALSE_POSITIVE, TRUE_POSITIVE, IGNORED = 0, 1, 2

_DEFAULT_RANGES: Mapping[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}


def pair_iou(
    pred_boxes: np.ndarray,
    pred_area: np.ndarray,
    gt_boxes: np.ndarray,
    gt_crowd: np.ndarray,
) -> np.ndarray:
    """IoU matrix ``[pred, gt]`` of xyxy boxes, as the COCO engine computes it.

    ``union = pred_area + gt_box_area - inter``, or ``pred_area`` for a crowd ground truth;
    0 where the boxes do not overlap (width or height <= 0).

    Parameters
    ----------
    pred_boxes : ndarray, shape (P, 4)
    pred_area : ndarray, shape (P,)
        The predictions' ``area`` column (box area for box results).
    gt_boxes : ndarray, shape (G, 4)
    gt_crowd : ndarray of bool, shape (G,)

    Returns
    -------
    ndarray of float64, shape (P, G)

    Examples
    --------
    >>> p = np.array([[0.0, 0, 10, 10]])
    >>> g = np.array([[5.0, 0, 15, 10], [0.0, 0, 100, 100]])
    >>> pair_iou(p, np.array([100.0]), g, np.array([False, True])).round(4).tolist()
    [[0.3333, 1.0]]
    >>> pair_iou(p, np.array([100.0]), np.zeros((0, 4)), np.zeros(0, bool)).shape
    (1, 0)
    """
    w = np.minimum(pred_boxes[:, None, 2], gt_boxes[None, :, 2]) - np.maximum(
        pred_boxes[:, None, 0], gt_boxes[None, :, 0]
    )
    h = np.minimum(pred_boxes[:, None, 3], gt_boxes[None, :, 3]) - np.maximum(
        pred_boxes[:, None, 1], gt_boxes[None, :, 1]
    )
    overlap = (w > 0) & (h > 0)
    inter = np.where(overlap, w * h, 0.0)
    gt_area = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
    union = np.where(
        gt_crowd[None, :], pred_area[:, None], pred_area[:, None] + gt_area[None, :] - inter
    )
    out = np.zeros(inter.shape, dtype=np.float64)
    np.divide(inter, union, out=out, where=overlap)
    return out


def aligned_iou(
    pred_boxes: np.ndarray, pred_area: np.ndarray, gt_boxes: np.ndarray, gt_crowd: np.ndarray
) -> np.ndarray:
    """IoU of aligned (prediction, ground truth) pairs, shape (N,), the formula of :func:`pair_iou`.

    Examples
    --------
    >>> aligned_iou(np.array([[0.0, 0, 10, 10]]), np.array([100.0]),
    ...             np.array([[5.0, 0, 15, 10]]), np.array([False])).round(4).tolist()
    [0.3333]
    """
    w = np.minimum(pred_boxes[:, 2], gt_boxes[:, 2]) - np.maximum(pred_boxes[:, 0], gt_boxes[:, 0])
    h = np.minimum(pred_boxes[:, 3], gt_boxes[:, 3]) - np.maximum(pred_boxes[:, 1], gt_boxes[:, 1])
    overlap = (w > 0) & (h > 0)
    inter = np.where(overlap, w * h, 0.0)
    gt_area = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
    union = np.where(gt_crowd, pred_area, pred_area + gt_area - inter)
    out = np.zeros(len(inter), dtype=np.float64)
    np.divide(inter, union, out=out, where=overlap)
    return out


_MAX_THRESHOLD = 1.0 - 1e-10


def live_groups(values: np.ndarray, offsets: np.ndarray, threshold: float) -> np.ndarray:
    """Groups (non-empty, flat at ``offsets``) holding an IoU >= ``threshold``: in the others
    nothing can match, whatever the rule, and the kernel need not run."""
    if len(offsets) == 0:
        return np.zeros(0, dtype=bool)
    out: np.ndarray = np.maximum.reduceat(values, offsets) >= threshold
    return out


def _rle(seg: object, height: float, width: float, where: str) -> dict[str, Any]:
    """One COCO segmentation (polygons, RLE) as an RLE dict, as pycocotools' ``annToRLE``."""
    from ioukit import masks

    if isinstance(seg, Mapping) and isinstance(seg.get("counts"), str | bytes):
        return dict(seg)
    if isinstance(seg, Mapping) and "size" in seg and (np.isnan(height) or np.isnan(width)):
        height, width = seg["size"]
    if seg is None or np.isnan(height) or np.isnan(width):
        raise DataFormatError(
            f"{where}: expected a segmentation and its image's height/width for "
            f"iou_type='segm', got {type(seg).__name__}"
            + (" without an image size" if seg is not None else "")
        )
    try:
        return masks.from_annotation(
            dict(seg) if isinstance(seg, Mapping) else seg, int(height), int(width)
        )
    except DataFormatError as exc:
        raise DataFormatError(f"{where}: {exc}") from None


class Similarity:
    """IoU between rows of the predictions and rows of the ground truth: boxes or masks.

    A crowd ground truth's IoU is intersection / prediction area (box) or prediction mask
    area (segm), as pycocotools. Boxes use the COCO engine's formula (:func:`pair_iou`);
    masks :func:`ioukit.masks.mask_iou` (pycocotools' ``maskUtils.iou``), one call per image.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[5, 0, 15, 10]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> Similarity(gt, pred).pairs(np.array([0]), np.array([0])).round(4).tolist()
    [0.3333]
    """

    def __init__(self, gt: Dataset, pred: Dataset, iou_type: str = "bbox") -> None:
        if iou_type not in ("bbox", "segm"):
            raise ValueError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
        if iou_type == "segm":
            for ds, name in ((gt, "gt"), (pred, "results")):
                if ds.segmentation is None:
                    raise DataFormatError(
                        f"{name}: expected masks ('segmentation') for iou_type='segm', got none"
                    )
        self.gt = gt
        self.pred = pred
        self.iou_type = iou_type
        self._gt_rles: dict[int, dict[str, Any]] = {}
        self._pred_rles: dict[int, dict[str, Any]] = {}

    def _rles(self, rows: np.ndarray, which: str) -> list[dict[str, Any]]:
        ds, cache, where = (
            (self.gt, self._gt_rles, "annotations")
            if which == "gt"
            else (self.pred, self._pred_rles, "results")
        )
        segs = ds.segmentation
        assert segs is not None  # checked in __init__
        out = []
        for r in rows.tolist():
            rle = cache.get(r)
            if rle is None:
                i = int(ds.image_index[r])
                rle = _rle(
                    segs[r],
                    float(ds.images.heights[i]),
                    float(ds.images.widths[i]),
                    f"{where}[{r}].segmentation",
                )
                cache[r] = rle
            out.append(rle)
        return out

    def pairs(self, pred_rows: np.ndarray, gt_rows: np.ndarray) -> np.ndarray:
        """IoU of aligned (prediction row, ground-truth row) pairs, shape (N,)."""
        crowd = self.gt.crowd[gt_rows]
        if self.iou_type == "bbox":
            return aligned_iou(
                self.pred.boxes[pred_rows],
                self.pred.area[pred_rows],
                self.gt.boxes[gt_rows],
                crowd,
            )
        from ioukit.masks import mask_iou

        out = np.zeros(len(pred_rows), dtype=np.float64)
        image = self.pred.image_index[pred_rows]
        order = np.argsort(image, kind="stable")
        starts = np.flatnonzero(np.r_[True, image[order][1:] != image[order][:-1]])
        ends = np.r_[starts[1:], len(order)]
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            sel = order[s:e]
            p_unique, p_inv = np.unique(pred_rows[sel], return_inverse=True)
            g_unique, g_inv = np.unique(gt_rows[sel], return_inverse=True)
            matrix = np.asarray(
                mask_iou(
                    self._rles(p_unique, "pred"),
                    self._rles(g_unique, "gt"),
                    crowd=self.gt.crowd[g_unique],
                )
            )
            out[sel] = matrix[p_inv, g_inv]
        return out

    def groups(
        self,
        pred_rows: np.ndarray,
        gt_rows: np.ndarray,
        p_start: np.ndarray,
        p_end: np.ndarray,
        g_start: np.ndarray,
        g_end: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """IoU matrices [P_i, G_i] of groups ``pred_rows[p_start[i]:p_end[i]]`` x
        ``gt_rows[g_start[i]:g_end[i]]``, row-major in one flat array, and their offsets."""
        n_p = p_end - p_start
        n_g = g_end - g_start
        sizes = n_p * n_g
        offsets = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        total = int(sizes.sum())
        group = np.repeat(np.arange(len(sizes)), sizes)
        local = np.arange(total, dtype=np.int64) - offsets[group]
        width = np.maximum(n_g[group], 1)
        pred = p_start[group] + local // width
        gt = g_start[group] + local % width
        return self.pairs(pred_rows[pred], gt_rows[gt]), offsets


@dataclass(frozen=True, eq=False)
class MatchTable:
    """Outcome of matching at one IoU threshold, per evaluated prediction and area range.

    Attributes
    ----------
    iou_threshold : float
    area_names : tuple of str, length A
        ``"all"`` first.
    cat_ids : ndarray of int64, shape (K,)
        Sorted category ids of the ground truth; class index ``k`` means ``cat_ids[k]``.
    pred_rows : ndarray of int64, shape (N,)
        Rows of the prediction dataset that were evaluated, in accumulation order: descending
        score, then image id, then row (pycocotools' order within every class).
    pred_image, pred_class : ndarray of int64, shape (N,)
        Image-table row and class index of each evaluated prediction.
    pred_score : ndarray of float64, shape (N,)
    status : ndarray of int8, shape (N, A)
        ``TRUE_POSITIVE`` (1), ``FALSE_POSITIVE`` (0) or ``IGNORED`` (2).
    matched_gt : ndarray of int64, shape (N, A)
        Row of the ground-truth dataset matched (true positives and ignored matches), or -1.
    match_iou : ndarray of float64, shape (N, A)
        IoU with the matched ground truth; 0 when unmatched.
    gt_rows : ndarray of int64, shape (G,)
        Ground-truth rows of known classes.
    gt_image, gt_class : ndarray of int64, shape (G,)
    gt_regular : ndarray of bool, shape (G, A)
        Counted as a positive in area range ``a`` (not crowd, ignore, difficult; area in range).
    image_rank : ndarray of int64, shape (I,)
        Rank of each image-table row by image id.
    """

    iou_threshold: float
    area_names: tuple[str, ...]
    cat_ids: np.ndarray
    pred_rows: np.ndarray
    pred_image: np.ndarray
    pred_class: np.ndarray
    pred_score: np.ndarray
    status: np.ndarray
    matched_gt: np.ndarray
    match_iou: np.ndarray
    gt_rows: np.ndarray
    gt_image: np.ndarray
    gt_class: np.ndarray
    gt_regular: np.ndarray
    image_rank: np.ndarray

    def num_positives(self, area: int = 0) -> np.ndarray:
        """Regular ground truths per class in area range ``area``, shape (K,)."""
        keep = self.gt_regular[:, area]
        return np.bincount(self.gt_class[keep], minlength=len(self.cat_ids))[: len(self.cat_ids)]


def _check(gt: Dataset, pred: Dataset) -> None:
    if gt.is_prediction:
        raise DataFormatError("gt: expected ground truth (no scores), got predictions")
    if pred.scores is None:
        raise DataFormatError("results: expected predictions with scores, got ground truth")
    if len(pred.images) != len(gt.images):
        raise DataFormatError(
            "results: expected the ground truth's image table "
            f"({len(gt.images)} images), got {len(pred.images)} images"
        )


def _class_index(ds: Dataset, cat_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``ds`` whose category is in ``cat_ids`` and their class index."""
    if len(cat_ids) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos = np.minimum(np.searchsorted(cat_ids, ds.category_id), len(cat_ids) - 1)
    known = cat_ids[pos] == ds.category_id
    return np.flatnonzero(known), pos[known]


def resolve_pair(
    gt: Any, predictions: Dataset | None, iou_type: str | None
) -> tuple[Dataset, Dataset, str]:
    """``(ground truth, predictions, iou_type)`` from an EvaluationResult or two Datasets.

    Examples
    --------
    >>> resolve_pair(3, None, None)
    Traceback (most recent call last):
    ...
    TypeError: gt: expected an EvaluationResult, or a Dataset and predictions=Dataset, got int
    """
    if predictions is None:
        ground_truth = getattr(gt, "ground_truth", None)
        preds = getattr(gt, "predictions", None)
        if not isinstance(ground_truth, Dataset) or not isinstance(preds, Dataset):
            raise TypeError(
                "gt: expected an EvaluationResult, or a Dataset and predictions=Dataset, "
                f"got {type(gt).__name__}"
            )
        params = getattr(gt, "params", {})
        return ground_truth, preds, iou_type or str(params.get("iou_type") or "bbox")
    if not isinstance(gt, Dataset) or not isinstance(predictions, Dataset):
        raise TypeError(
            "gt, predictions: expected two Datasets, "
            f"got {type(gt).__name__} and {type(predictions).__name__}"
        )
    return gt, predictions, iou_type or "bbox"


def image_rank_of(gt: Dataset) -> np.ndarray:
    """Rank of each image-table row by image id (pycocotools evaluates images sorted by id)."""
    rank = np.empty(len(gt.images), dtype=np.int64)
    rank[np.argsort(gt.images.ids, kind="stable")] = np.arange(len(gt.images))
    return rank


def coco_outcome(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    iou_threshold: float = 0.5,
    area_ranges: Mapping[str, Sequence[float]] | None = None,
    max_dets: int = 100,
    iou_type: str = "bbox",
) -> MatchTable:
    """Match ``pred`` to ``gt`` by the COCO rule at one threshold, per area range.

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth and predictions on the same image table.
    iou_threshold : float
        A match needs ``IoU >= min(iou_threshold, 1 - 1e-10)``.
    area_ranges : mapping of str to (low, high), optional
        Default: ``{"all": (0, 1e10)}``; ``"all"`` is always first.
    max_dets : int
        Predictions evaluated per (image, class).
    iou_type : {"bbox", "segm"}
        Box IoU, or mask IoU of the ``segmentation`` columns (see :class:`Similarity`).

    Returns
    -------
    MatchTable

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9], [0, 0, 10, 8]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.8, 0.9])
    >>> t = coco_outcome(gt, pred)
    >>> t.pred_rows.tolist(), t.status[:, 0].tolist(), t.matched_gt[:, 0].tolist()
    ([1, 0], [1, 0], [0, -1])
    """
    _check(gt, pred)
    similarity = Similarity(gt, pred, iou_type)
    if not 0.0 <= float(iou_threshold) <= 1.0:
        raise ValueError(f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}")
    if int(max_dets) < 1:
        raise ValueError(f"max_dets: expected a positive integer, got {max_dets!r}")
    ranges = {"all": _DEFAULT_RANGES["all"]} if area_ranges is None else dict(area_ranges)
    if "all" not in ranges:
        ranges = {"all": _DEFAULT_RANGES["all"], **ranges}
    names = ("all", *(n for n in ranges if n != "all"))
    lo = np.array([float(ranges[n][0]) for n in names])
    hi = np.array([float(ranges[n][1]) for n in names])
    n_a = len(names)
    from ioukit._kernels.coco import match_group_coco

    cat_ids = np.unique(gt.categories.ids).astype(np.int64)
    n_k = max(len(cat_ids), 1)
    rank = image_rank_of(gt)
    assert pred.scores is not None  # checked above

    g_rows, g_cls = _class_index(gt, cat_ids)
    g_img = gt.image_index[g_rows]
    order = np.lexsort((g_rows, g_cls, rank[g_img]))
    g_rows, g_cls, g_img = g_rows[order], g_cls[order], g_img[order]
    g_ignore = gt.crowd[g_rows] | gt.ignore[g_rows] | gt.difficult[g_rows]
    g_area = gt.area[g_rows]
    g_regular = ~g_ignore[:, None] & (g_area[:, None] >= lo) & (g_area[:, None] <= hi)
    g_key = rank[g_img] * n_k + g_cls

    p_rows, p_cls = _class_index(pred, cat_ids)
    p_img = pred.image_index[p_rows]
    p_score = pred.scores[p_rows]
    order = np.lexsort((p_rows, -p_score, p_cls, rank[p_img]))
    p_rows, p_cls, p_img, p_score = p_rows[order], p_cls[order], p_img[order], p_score[order]
    p_key = rank[p_img] * n_k + p_cls
    # the first max_dets of every (image, class) group
    starts = np.searchsorted(p_key, p_key, side="left")
    kept = (np.arange(len(p_key)) - starts) < int(max_dets)
    p_rows, p_cls, p_img, p_score, p_key = (
        p_rows[kept],
        p_cls[kept],
        p_img[kept],
        p_score[kept],
        p_key[kept],
    )
    n = len(p_rows)
    p_area = pred.area[p_rows]
    g_crowd = gt.crowd[g_rows]

    status = np.full((n, n_a), FALSE_POSITIVE, dtype=np.int8)
    matched = np.full((n, n_a), -1, dtype=np.int64)
    miou = np.zeros((n, n_a), dtype=np.float64)
    outside = (p_area[:, None] < lo) | (p_area[:, None] > hi)  # [N, A]

    groups, p_start = np.unique(p_key, return_index=True)
    p_end = np.append(p_start[1:], n)[: len(p_start)]
    g_start = np.searchsorted(g_key, groups, side="left")
    g_end = np.searchsorted(g_key, groups, side="right")
    with_gt = g_end > g_start
    p_start, p_end, g_start, g_end = (
        p_start[with_gt],
        p_end[with_gt],
        g_start[with_gt],
        g_end[with_gt],
    )
    threshold = np.array([min(float(iou_threshold), _MAX_THRESHOLD)])
    for a in range(n_a):
        # within each group: regular ground truths first, ignored ones last (stable)
        g_order = np.lexsort((np.arange(len(g_key)), ~g_regular[:, a], g_key))
        ignore_a = np.ascontiguousarray(~g_regular[g_order, a])
        crowd_a = np.ascontiguousarray(g_crowd[g_order])
        values, offsets = similarity.groups(p_rows, g_rows[g_order], p_start, p_end, g_start, g_end)
        hit = np.full((1, n), -1, dtype=np.int64)
        ignored = np.zeros((1, n), dtype=bool)
        live = live_groups(values, offsets, threshold[0])
        for p0, p1, q0, q1, o in zip(
            p_start[live].tolist(),
            p_end[live].tolist(),
            g_start[live].tolist(),
            g_end[live].tolist(),
            offsets[live].tolist(),
            strict=True,
        ):
            # the engine's kernel, writing straight into this group's slice of hit / ignored
            match_group_coco(
                values[o : o + (p1 - p0) * (q1 - q0)].reshape(p1 - p0, q1 - q0),
                ignore_a[q0:q1],
                crowd_a[q0:q1],
                threshold,
                hit[:, p0:p1],
                ignored[:, p0:p1],
                np.empty((1, q1 - q0), dtype=np.int64),
            )
        rows = np.flatnonzero(hit[0] >= 0)
        if len(rows) == 0:
            continue
        group = np.searchsorted(p_start, rows, side="right") - 1
        cols = hit[0, rows]
        width = g_end[group] - g_start[group]
        matched[rows, a] = g_order[g_start[group] + cols]
        miou[rows, a] = values[offsets[group] + (rows - p_start[group]) * width + cols]
        status[rows, a] = np.where(ignored[0, rows], IGNORED, TRUE_POSITIVE)
    status[(matched < 0) & outside] = IGNORED
    # accumulation order: descending score, image rank, row (stable in pycocotools' order)
    acc = np.lexsort((p_rows, rank[p_img], -p_score))
    matched = matched[acc]
    matched_rows = np.full(matched.shape, -1, dtype=np.int64)
    matched_rows[matched >= 0] = g_rows[matched[matched >= 0]]
    return MatchTable(
        iou_threshold=float(iou_threshold),
        area_names=names,
        cat_ids=cat_ids,
        pred_rows=p_rows[acc],
        pred_image=p_img[acc],
        pred_class=p_cls[acc],
        pred_score=p_score[acc],
        status=status[acc],
        matched_gt=matched_rows,
        match_iou=miou[acc],
        gt_rows=g_rows,
        gt_image=g_img,
        gt_class=g_cls,
        gt_regular=g_regular,
        image_rank=rank,
    )
