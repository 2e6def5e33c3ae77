"""Shared plumbing of the VOC/YOLO protocols, curves and confusion matrix (private).

Matches a ground-truth and a prediction :class:`~ioukit.dataset.Dataset` through the
pipeline (:mod:`ioukit.evaluation`: groups, box IoU, the one matcher) over the whole dataset,
and turns per-prediction TP/FP flags into per-class cumulative curves. No Python loop runs
per box or per group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset
from ioukit.evaluation.groups import Groups, class_rows
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import IGNORED, MatchOutcome
from ioukit.evaluation.registry import check_pair as check
from ioukit.evaluation.similarity.box import BoxIoU, Float32BoxIoU

__all__ = [
    "CHUNK_PAIRS",
    "ULTRALYTICS_EPS",
    "DatasetMatches",
    "MatchedPredictions",
    "check_pair",
    "class_order",
    "image_chunks",
    "image_rows",
    "match_dataset",
    "match_records",
    "record_order",
    "row_order",
    "similarity_columns",
    "smooth",
    "sorted_categories",
    "subset_rows",
    "voc_rematch",
]


@dataclass(frozen=True, slots=True, eq=False)
class MatchedPredictions:
    """The first half of a VOC or YOLO evaluation: what their ``summarize`` reads.

    Attributes
    ----------
    outcome : MatchOutcome
        One record per prediction of a ground-truth category (no ``max_dets`` cut), area
        range ``"all"``; ``pred_row`` are rows of the predictions dataset.
    other_row : ndarray of int64, shape (U,)
        Rows of the predictions whose category the ground truth lacks (never matched, not
        counted; Ultralytics' confidence sort still sees them).
    other_score : ndarray of float64, shape (U,)
    other_image_id : ndarray of int64, shape (U,)

    Examples
    --------
    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> m = MatchedPredictions(o, np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    >>> len(MatchedPredictions.merge([m, m]).outcome)
    0
    """

    outcome: MatchOutcome
    other_row: np.ndarray
    other_score: np.ndarray
    other_image_id: np.ndarray

    @classmethod
    def merge(
        cls,
        parts: Sequence[MatchedPredictions],
        /,
        *,
        pred_row_offsets: Sequence[int] | None = None,
    ) -> MatchedPredictions:
        """Matches of disjoint image shards as one (:meth:`MatchOutcome.merge`).

        ``pred_row_offsets``: added to each part's prediction rows, so that rows are those of
        the shards' predictions concatenated (the input order VOC ranks ties by).
        """
        if not parts:
            raise ValueError("parts: expected at least one MatchedPredictions, got none")
        offsets = [0] * len(parts) if pred_row_offsets is None else list(pred_row_offsets)
        if len(offsets) != len(parts):
            raise ValueError("pred_row_offsets: expected one offset per part")
        return cls(
            outcome=MatchOutcome.merge([p.outcome for p in parts], pred_row_offsets=offsets),
            other_row=np.concatenate(
                [p.other_row + o for p, o in zip(parts, offsets, strict=True)]
            ).astype(np.int64),
            other_score=np.concatenate([p.other_score for p in parts]).astype(np.float64),
            other_image_id=np.concatenate([p.other_image_id for p in parts]).astype(np.int64),
        )


ULTRALYTICS_EPS = 1e-7


"""Ultralytics' ``box_iou`` adds this to the union; ioukit follows it for the YOLO protocol."""


def check_pair(gt: Dataset, pred: Dataset) -> None:
    """Raise unless ``gt`` is ground truth and ``pred`` predictions over the same images
    (:func:`ioukit.evaluation.registry.check_pair`, the one check)."""

    check(gt, pred)


def sorted_categories(categories: CategoryTable) -> tuple[np.ndarray, tuple[str, ...]]:
    """Category ids in ascending order and their names."""
    order = np.argsort(categories.ids, kind="stable")
    return categories.ids[order], tuple(categories.names[i] for i in order.tolist())


@dataclass(frozen=True, slots=True)
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


CHUNK_PAIRS = 4_000_000


"""Matching works on chunks of whole images holding at most about this many (pred, gt) pairs,
so memory stays bounded by the data however crowded the images are."""


def subset_rows(ds: Dataset, rows: np.ndarray, **columns: np.ndarray) -> Dataset:
    """Rows of ``ds`` (same image and category tables); optional columns dropped."""

    fields = {
        "boxes": ds.boxes[rows],
        "image_index": ds.image_index[rows],
        "category_id": ds.category_id[rows],
        "scores": None if ds.scores is None else ds.scores[rows],
        "area": ds.area[rows],
        "crowd": ds.crowd[rows],
        "ignore": ds.ignore[rows],
        "difficult": ds.difficult[rows],
        "annotation_id": np.arange(len(rows), dtype=np.int64),
        "segmentation": None,
        "keypoints": None,
        "rotated": None,
        "group_of": None,
        "box_wh": None,
    }
    fields.update(columns)
    return replace(ds, **fields)


def similarity_columns(ds: Dataset, rows: np.ndarray) -> dict[str, Any]:
    """The optional columns a similarity may read (keypoints, rotated, polygons, box w/h)."""
    seg = ds.segmentation
    return {
        "keypoints": None if ds.keypoints is None else ds.keypoints[rows],
        "rotated": None if ds.rotated is None else np.asarray(ds.rotated)[rows],
        "segmentation": None if seg is None else [seg[i] for i in rows.tolist()],
        "box_wh": None if ds.box_wh is None else ds.box_wh[rows],
    }


def image_chunks(
    gt_key: np.ndarray, gt_image: np.ndarray, pred_key: np.ndarray, pred_image: np.ndarray,
    n_images: int, budget: int | None = None,
) -> list[np.ndarray]:  # fmt: skip
    """Consecutive image-row ranges (as boolean image masks) whose same-key pairs stay within
    ``budget`` each (default :data:`CHUNK_PAIRS`; a single image above it is its own chunk)."""
    budget = CHUNK_PAIRS if budget is None else budget
    span = int(max(gt_key.max(initial=0), pred_key.max(initial=0))) + 1
    if span <= 4 * (len(gt_key) + len(pred_key)) + 1024:  # dense keys: counts by bincount
        g_count = np.bincount(gt_key, minlength=span)
        p_count = np.bincount(pred_key, minlength=span)
        both = np.flatnonzero((g_count > 0) & (p_count > 0))
        key_image = np.zeros(span, dtype=np.int64)
        key_image[gt_key] = gt_image
        weights = (g_count[both] * p_count[both]).astype(float)
        pairs = np.bincount(key_image[both], weights=weights, minlength=n_images)
    else:
        keys, inverse = np.unique(np.concatenate([gt_key, pred_key]), return_inverse=True)
        g_count = np.bincount(inverse[: len(gt_key)], minlength=len(keys))
        p_count = np.bincount(inverse[len(gt_key) :], minlength=len(keys))
        key_image = np.zeros(len(keys), dtype=np.int64)
        key_image[inverse[: len(gt_key)]] = gt_image
        key_image[inverse[len(gt_key) :]] = pred_image
        pairs = np.bincount(
            key_image, weights=(g_count * p_count).astype(float), minlength=n_images
        )
    if pairs.sum() <= budget:
        return [np.ones(n_images, dtype=bool)]
    chunks, cum, start = [], np.cumsum(pairs), 0
    while start < n_images:
        base = cum[start - 1] if start else 0.0
        stop = max(int(np.searchsorted(cum, base + budget, side="right")), start + 1)
        mask = np.zeros(n_images, dtype=bool)
        mask[start:stop] = True
        chunks.append(mask)
        start = stop
    return chunks


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
    similarity: Any = None,
) -> DatasetMatches:
    """Match every prediction of ``pred`` to ``gt`` per (image, class) group, through the
    pipeline's one matcher (:func:`ioukit.evaluation.match.match_groups`).

    ``rule``: ``"coco"`` (greedy, last gt on IoU ties), ``"first"`` (greedy, first gt on ties,
    Ultralytics) or ``"voc"`` (devkit argmax, no fallback). ``gt_keep`` drops ground truths
    entirely (as if absent). Under ``class_agnostic`` the groups are whole images (classes are
    still reported per box). ``float32``: Ultralytics' float32 IoU
    (:class:`~ioukit.evaluation.similarity.box.Float32BoxIoU`); pass float32-valued thresholds.
    ``similarity``: any pipeline similarity instead (keypoints, rotated columns kept).
    Images are matched in chunks of at most :data:`CHUNK_PAIRS` pairs (bounded memory).
    """
    check_pair(gt, pred)
    category_ids, names = sorted_categories(gt.categories)
    gt_class = class_rows(category_ids, gt.category_id)
    pred_class = class_rows(category_ids, pred.category_id)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    keep = gt_class >= 0 if gt_keep is None else (gt_keep & (gt_class >= 0))
    num_t = np.asarray(iou_thresholds).size
    matched = np.full((num_t, len(pred)), -1, dtype=np.int64)
    ignored = np.zeros((num_t, len(pred)), dtype=bool)
    iou = np.full((num_t, len(pred)), np.nan)
    n_k = max(len(category_ids), 1)
    g_rows_all, p_rows_all = np.flatnonzero(keep), np.flatnonzero(pred_class >= 0)
    g_img, p_img = gt.image_index[g_rows_all], pred.image_index[p_rows_all]
    g_key = g_img * n_k + (0 if class_agnostic else gt_class[g_rows_all])
    p_key = p_img * n_k + (0 if class_agnostic else pred_class[p_rows_all])
    for images in image_chunks(g_key, g_img, p_key, p_img, len(gt.images)):
        g_rows = g_rows_all[images[g_img]]
        p_rows = p_rows_all[images[p_img]]
        _match_rows(
            gt, pred, g_rows, p_rows, np.asarray(iou_thresholds, dtype=np.float64), rule,
            np.asarray(gt_ignore, dtype=bool), np.asarray(gt_crowd, dtype=bool), strict, plus1,
            eps, class_agnostic, float32, (matched, ignored, iou), similarity,
        )  # fmt: skip
    return DatasetMatches(
        category_ids=category_ids,
        names=names,
        gt_class=np.where(keep, gt_class, -1),
        gt_ignore=gt_ignore,
        pred_class=pred_class,
        scores=scores,
        matched=matched,
        ignored=ignored,
        iou=iou,
    )


def voc_rematch(
    gt: Dataset,
    pred: Dataset,
    thresholds: np.ndarray,
    similarity: Any = None,
    *,
    strict: bool = False,
) -> DatasetMatches:
    """:func:`match_dataset` by the VOC rule (highest IoU, no fallback; difficult, ignored and
    crowd ground truths absorb matches without scoring; ``strict``: ``IoU > t``): the match of
    curves and matched IoUs at a threshold a protocol's outcome lacks.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images, cats = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["c"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 5], [0, 0, 10, 10]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.8])
    >>> voc_rematch(gt, pred, np.array([0.5])).tp.tolist()
    [[True, False]]
    """
    return match_dataset(
        gt,
        pred,
        iou_thresholds=thresholds,
        rule="voc",
        gt_ignore=gt.crowd | gt.ignore | gt.difficult,
        gt_crowd=np.zeros(len(gt), dtype=bool),
        strict=strict,
        similarity=similarity,
    )


def match_records(
    gt: Dataset,
    pred: Dataset,
    *,
    thresholds: np.ndarray,
    rule: Any,
    similarity: Any,
    gt_ignore: np.ndarray,
    gt_keep: np.ndarray | None = None,
) -> Any:
    """Every prediction of a ground-truth category matched per (image, class) group, no
    ``max_det`` cut: a :class:`~ioukit.evaluation.grouping.MatchedPredictions`.

    The datasets are used as they are (no row subsets are built); images are matched in
    chunks of at most :data:`CHUNK_PAIRS` pairs (bounded memory) whose outcomes are merged.
    ``rule`` is a :class:`~ioukit.evaluation.match.MatchRule`; ``gt_keep`` drops ground truths
    entirely (as if absent); ``gt_ignore`` ones are matched but not counted.
    """
    check_pair(gt, pred)
    category_ids = np.unique(gt.categories.ids)
    gt_class = class_rows(category_ids, gt.category_id)
    pred_class = class_rows(category_ids, pred.category_id)
    keep = gt_class >= 0 if gt_keep is None else (gt_keep & (gt_class >= 0))
    known = pred_class >= 0
    n_k = max(len(category_ids), 1)
    g_rows_all, p_rows_all = np.flatnonzero(keep), np.flatnonzero(known)
    g_img, p_img = gt.image_index[g_rows_all], pred.image_index[p_rows_all]
    g_key = g_img * n_k + gt_class[g_rows_all]
    p_key = p_img * n_k + pred_class[p_rows_all]
    chunks = image_chunks(g_key, g_img, p_key, p_img, len(gt.images))
    thresholds = np.asarray(thresholds, dtype=np.float64).reshape(-1)
    parts = []
    for images in chunks:
        one = len(chunks) == 1
        mine = images[g_img], images[p_img]
        if images.sum() == 1 and _pairs(g_key[mine[0]], p_key[mine[1]]) > CHUNK_PAIRS:
            # one image above the budget: its largest groups in blocks of predictions
            g_rows = np.flatnonzero(keep & images[gt.image_index])
            p_rows = np.flatnonzero(known & images[pred.image_index])
            parts.extend(
                _match_image_blocks(
                    gt, pred, g_rows, p_rows, thresholds, rule, similarity, gt_ignore
                )
            )
            continue
        groups = Groups.build(
            gt,
            pred,
            use_cats=True,
            max_det=max(len(pred), 1),
            gt_keep=keep if one else keep & images[gt.image_index],
            pred_keep=None if one else known & images[pred.image_index],
        )
        matrices = similarity.matrices(gt, pred, groups)
        parts.append(
            match_groups(
                gt, pred, groups, matrices, thresholds=thresholds, rule=rule, gt_ignore=gt_ignore
            )
        )
    outcome = parts[0] if len(parts) == 1 else MatchOutcome.merge(parts)
    other = np.flatnonzero(~known)
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    return MatchedPredictions(
        outcome=outcome,
        other_row=other,
        other_score=scores[other],
        other_image_id=gt.images.ids[pred.image_index[other]],
    )


def _pairs(gt_key: np.ndarray, pred_key: np.ndarray) -> int:
    """Number of same-key (ground truth, prediction) pairs."""
    keys, count = np.unique(np.concatenate([gt_key, pred_key]), return_counts=True)
    g = np.unique(gt_key, return_counts=True)
    g_count = np.zeros(keys.size, dtype=np.int64)
    g_count[np.searchsorted(keys, g[0])] = g[1]
    return int(np.sum(g_count * (count - g_count)))


def _match_image_blocks(
    gt: Dataset,
    pred: Dataset,
    gt_rows: np.ndarray,
    pred_rows: np.ndarray,
    thresholds: np.ndarray,
    rule: Any,
    similarity: Any,
    gt_ignore: np.ndarray,
) -> list[MatchOutcome]:
    """Outcomes of one image's groups (``gt_rows`` / ``pred_rows``: its rows), each group's
    similarity at most :data:`CHUNK_PAIRS` pairs at a time.

    A group of P predictions and G ground truths above the budget is matched in consecutive
    blocks of its predictions (descending score, stable) of ``CHUNK_PAIRS // (4 G)`` rows, the
    ground truths each threshold's earlier blocks took carried from block to block
    (``match_groups``' ``carry``): the outcome of one [P, G] matrix in memory O(CHUNK_PAIRS).
    """
    sub_gt = subset_rows(gt, gt_rows, **similarity_columns(gt, gt_rows))
    sub_pred = subset_rows(pred, pred_rows, **similarity_columns(pred, pred_rows))
    ignore = gt_ignore[gt_rows]
    g_cat, p_cat = sub_gt.category_id, sub_pred.category_id
    cats, g_count = np.unique(g_cat, return_counts=True)
    p_count = np.zeros(cats.size, dtype=np.int64)
    known = np.isin(p_cat, cats)
    np.add.at(p_count, np.searchsorted(cats, p_cat[known]), 1)
    big = cats[g_count * p_count > CHUNK_PAIRS]
    scores = np.asarray(sub_pred.scores, dtype=np.float64)

    def run(
        g_keep: np.ndarray, p_keep: np.ndarray, carry: np.ndarray | None, offset: int, count: bool
    ) -> MatchOutcome:
        groups = Groups.build(
            sub_gt, sub_pred, use_cats=True, max_det=max(int(p_keep.sum()), 1),
            gt_keep=g_keep, pred_keep=p_keep,
        )  # fmt: skip
        outcome = match_groups(
            sub_gt,
            sub_pred,
            groups,
            similarity.matrices(sub_gt, sub_pred, groups),
            thresholds=thresholds,
            rule=rule,
            gt_ignore=ignore,
            carry=carry,
        )
        return replace(  # rows of the image's datasets -> rows of gt / pred, global ranks
            outcome,
            pred_row=pred_rows[outcome.pred_row],
            rank=(outcome.rank + offset).astype(np.int32),
            first_gt=np.where(outcome.first_gt >= 0, gt_rows[outcome.first_gt], -1),
            other_gt=np.where(outcome.other_gt >= 0, gt_rows[outcome.other_gt], -1),
            gt_count=outcome.gt_count if count else np.zeros_like(outcome.gt_count),
            **_gt_records(outcome, gt_rows, count),
        )

    small_gt, small_pred = ~np.isin(g_cat, big), ~np.isin(p_cat, big)
    parts = [run(small_gt, small_pred, None, 0, True)]
    for c in big.tolist():
        g_keep = g_cat == c
        mine = np.flatnonzero(p_cat == c)
        mine = mine[np.lexsort((mine, -scores[mine]))]  # the group's order
        n_gt = int(g_keep.sum())
        block = max(CHUNK_PAIRS // (4 * n_gt), 1)  # a quarter: 8 MB of float64 per block
        carry = np.zeros((1, thresholds.size, n_gt), dtype=np.uint8)
        for lo in range(0, mine.size, block):
            p_keep = np.zeros(len(sub_pred), dtype=bool)
            p_keep[mine[lo : lo + block]] = True
            parts.append(run(g_keep, p_keep, carry, lo, lo == 0))
    merged = MatchOutcome.merge(parts)
    if not merged.has_gt_records:
        return [merged]
    order = np.argsort(
        np.asarray(merged.gt_class_row), kind="stable"
    )  # group order: class, then row
    return [
        replace(
            merged,
            gt_row=np.asarray(merged.gt_row)[order],
            gt_class_row=np.asarray(merged.gt_class_row)[order],
            gt_image_id=np.asarray(merged.gt_image_id)[order],
            gt_in_range=np.asarray(merged.gt_in_range)[order],
        )
    ]


def _gt_records(outcome: MatchOutcome, gt_rows: np.ndarray, count: bool) -> dict[str, Any]:
    """The per-ground-truth columns in ``gt``'s rows (a group's first block only)."""
    if not outcome.has_gt_records:
        return {}
    if count:
        return {
            "gt_row": gt_rows[np.asarray(outcome.gt_row)],
            "gt_class_row": np.asarray(outcome.gt_class_row),
            "gt_image_id": np.asarray(outcome.gt_image_id),
            "gt_in_range": np.asarray(outcome.gt_in_range),
        }
    # empty copies, not [0:0] views: a view keeps its block's whole [G] columns alive (every
    # later block of a 30 000-object group held 0.4 MB that way: 360 MiB in all)
    return {
        name: np.asarray(getattr(outcome, name))[:0].copy()
        for name in ("gt_row", "gt_class_row", "gt_image_id", "gt_in_range")
    }


def image_rows(gt: Dataset, image_id: np.ndarray) -> np.ndarray:
    """Rows of the image table of ``gt`` holding ``image_id`` (ids known to the table)."""
    ids = gt.images.ids
    image_id = np.asarray(image_id, dtype=np.int64)
    if ids.size == 0 or image_id.size == 0:
        return np.zeros(image_id.shape, dtype=np.int64)
    low, high = int(ids.min()), int(ids.max())
    if high - low <= 4 * (ids.size + image_id.size) + 1024:  # one lookup table
        table = np.zeros(high - low + 1, dtype=np.int64)
        table[ids - low] = np.arange(ids.size)
        return np.asarray(table[image_id - low])
    sorter = np.argsort(ids, kind="stable")
    return np.asarray(sorter[np.searchsorted(ids, image_id, sorter=sorter)], dtype=np.int64)


def row_order(rows: np.ndarray) -> np.ndarray:
    """Stable ``argsort(rows)``; a scatter when ``rows`` is a permutation of ``0..N-1``."""
    n = rows.size
    if n and rows.min() == 0 and rows.max() == n - 1:
        inverse = np.full(n, -1, dtype=np.int64)
        inverse[rows] = np.arange(n)
        if inverse.min() >= 0:  # every row hit once
            return inverse
    return np.argsort(rows, kind="stable")


def record_order(
    class_row: np.ndarray, score: np.ndarray, row: np.ndarray, num_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Records grouped by class, descending score, ties by ``row`` (input order).

    Returns ``(order, bounds)`` as :func:`class_order` (records with class -1 left out).
    Records already in (class, descending score) order (a match outcome's accumulation order)
    only have their tied runs put in row order.

    Examples
    --------
    >>> order, bounds = record_order(np.array([0, 0, 1, -1]), np.array([0.5, 0.5, 0.2, 0.9]),
    ...                              np.array([3, 1, 0, 2]), 2)
    >>> order.tolist(), bounds.tolist()
    ([1, 0, 2], [0, 2, 3])
    """
    index = np.flatnonzero(class_row >= 0)
    c, s, r = class_row[index], score[index], row[index]
    order = None
    if index.size > 1:
        same_class = c[1:] == c[:-1]
        tied = same_class & (s[1:] == s[:-1])
        if np.all((c[1:] > c[:-1]) | (same_class & (s[1:] < s[:-1])) | tied):
            # (class, -score) order already: only tied runs may need row order
            if not np.any(tied & (r[1:] < r[:-1])):
                order = index
            elif r.min() >= 0 and index.size * (int(r.max()) + 1) < 2**62:
                run = np.cumsum(np.r_[0, ~tied])
                perm = np.argsort(run * (int(r.max()) + 1) + r, kind="stable")
                order = index[perm]
    if order is None:
        order = index[np.lexsort((r, -s, c))]
    counts = np.bincount(class_row[order], minlength=num_classes)
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return order, bounds


def _match_rows(
    gt: Dataset, pred: Dataset, g_rows: np.ndarray, p_rows: np.ndarray, thresholds: np.ndarray,
    rule: str, gt_ignore: np.ndarray, gt_crowd: np.ndarray, strict: bool, plus1: bool,
    eps: float, class_agnostic: bool, float32: bool,
    out: tuple[np.ndarray, np.ndarray, np.ndarray], custom: Any = None,
) -> None:  # fmt: skip
    """Match ``pred`` rows ``p_rows`` against ``gt`` rows ``g_rows``; write into ``out``."""

    crowd_rows = gt_crowd[g_rows]
    no_crowd = not crowd_rows.any()
    # the datasets as they are (no row subsets, nothing re-validated) whenever the crowd flags
    # the similarity and the matcher read there are those asked for
    whole = np.array_equal(crowd_rows, gt.crowd[g_rows]) or (custom is None and no_crowd)
    if whole:
        sub_gt, sub_pred = gt, pred
        g_keep = np.zeros(len(gt), dtype=bool)
        g_keep[g_rows] = True
        p_keep = np.zeros(len(pred), dtype=bool)
        p_keep[p_rows] = True
        keep: dict[str, Any] = {"gt_keep": g_keep, "pred_keep": p_keep}
        ignore = gt_ignore
    else:
        extra_g, extra_p = (
            ({}, {})
            if custom is None
            else (similarity_columns(gt, g_rows), similarity_columns(pred, p_rows))
        )
        sub_gt = subset_rows(gt, g_rows, crowd=crowd_rows, **extra_g)
        sub_pred = subset_rows(pred, p_rows, **extra_p)
        keep = {}
        ignore = gt_ignore[g_rows]
    groups = Groups.build(
        sub_gt,
        sub_pred,
        use_cats=not class_agnostic,
        max_det=max(len(sub_pred), 1),
        pooled_order="file",  # class-agnostic matching keeps file order (Ultralytics)
        **keep,
    )
    similarity = (
        custom
        if custom is not None
        else Float32BoxIoU(eps=eps)
        if float32
        else BoxIoU(
            crowd=not no_crowd, pixel_offset=1.0 if plus1 else 0.0, eps=eps, source_wh=False
        )
    )
    matrices = similarity.matrices(sub_gt, sub_pred, groups)
    tie = {"coco": "last", "first": "first", "voc": "argmax"}[rule]
    outcome = match_groups(
        sub_gt,
        sub_pred,
        groups,
        matrices,
        thresholds=thresholds,
        rule=MatchRule(
            strict=strict,
            tie=tie,
            crowd=not no_crowd,
            clamp=1.0 - 1e-10 if tie == "last" else None,
        ),
        gt_ignore=ignore,
    )
    matched, ignored, iou = out
    if whole:
        rows, hit = outcome.pred_row, outcome.matched_gt.T
    else:
        rows, hit = p_rows[outcome.pred_row], np.append(g_rows, -1)[outcome.matched_gt].T
    matched[:, rows] = hit
    ignored[:, rows] = (outcome.status[:, 0, :] == IGNORED).T
    iou[:, rows] = outcome.iou.T


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
