"""The mechanics of sharded evaluation below the protocols: one mergeable outcome per shard.

A protocol that can be evaluated on shards of images declares it (``can_shard = True``) and
implements two methods, which :mod:`ioukit.distributed` (Dask, torch.distributed) calls
without knowing any protocol's name:

``shard_match(gt, pred, /, *, iou_type)``
    On a worker: match ``pred`` (the predictions of some images) against ``gt`` (the whole
    ground truth) and return the shard's mergeable part: a :class:`MatchOutcome` for COCO
    (every similarity) and LVIS, the :class:`~ioukit.evaluation.grouping.MatchedPredictions`
    (an outcome plus the predictions of classes without ground truth) for VOC and YOLO, the
    Open Images partial for Open Images.
``shard_summarize(gt, parts, /, *, iou_type, pred_row_offsets, n_predictions, names)``
    On the client: merge the parts (disjoint images) and summarize once; the numbers of
    ``evaluate`` on all predictions (the shards concatenated in order).

The helpers here are what those methods share: :func:`shard_outcome` (an outcome reduced to
what the merge reads: rows of the whole ground truth, no IoUs, optionally no prediction rows),
:func:`merge_outcomes` (concatenate and re-sort with :func:`merge_order`), the COCO pair
:func:`coco_shard_match` / :func:`coco_shard_summarize`, and :class:`MatchedShards`, the two
methods of the protocols whose match is a
:class:`~ioukit.evaluation.grouping.MatchedPredictions` (VOC, YOLO).

Examples
--------
>>> merge_order(np.array([0, 1, 0]), np.array([0.5, 0.9, 0.7]), np.array([3, 1, 2]), 4)
array([2, 0, 1])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, ClassVar, Protocol

import numpy as np

from ioukit.dataset import Dataset
from ioukit.evaluation.grouping import MatchedPredictions
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.result import ProtocolResult

__all__ = [
    "MatchedShards",
    "coco_shard_match",
    "coco_shard_summarize",
    "empty_predictions",
    "id_rows",
    "merge_order",
    "merge_outcomes",
    "shard_gt_rows",
    "shard_outcome",
    "take_rows",
    "unrecorded_predictions",
    "with_pred_rows",
]


def take_rows(data: Dataset, rows: np.ndarray) -> Dataset:
    """The rows ``rows`` of ``data`` (every column), over the same image and category tables."""
    columns: dict[str, Any] = {}
    for f in dataclasses.fields(Dataset):
        value = getattr(data, f.name)
        if f.name in ("images", "categories") or value is None:
            columns[f.name] = value
        elif f.name == "segmentation":
            columns[f.name] = tuple(value[i] for i in rows.tolist())
        else:
            columns[f.name] = value[rows]
    return Dataset(**columns)


def empty_predictions(gt: Dataset) -> Dataset:
    """No predictions over ``gt``'s tables, with its optional geometry columns (empty)."""
    keypoints = None if gt.keypoints is None else np.zeros((0, *gt.keypoints.shape[1:]))
    return Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=np.zeros((0, 4)),
        image_index=np.zeros(0, dtype=np.int64),
        category_id=np.zeros(0, dtype=np.int64),
        scores=np.zeros(0),
        segmentation=None if gt.segmentation is None else (),
        keypoints=keypoints,
        rotated=None if gt.rotated is None else np.zeros((0, 5)),
    )


def id_rows(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """The row of each of ``ids`` in ``sorted_ids`` (increasing, unique); None when one of
    ``ids`` is not there. A lookup table when the ids span a range not much wider than their
    number (image ids mostly do: one gather instead of a binary search per id).

    >>> id_rows(np.array([3, 5, 9]), np.array([9, 3, 3])).tolist(), id_rows(np.array([3]), [4])
    ([2, 0, 0], None)
    """
    sorted_ids = np.asarray(sorted_ids, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        return np.zeros(ids.shape, dtype=np.int64)
    if sorted_ids.size == 0:
        return None
    low, high = int(sorted_ids[0]), int(sorted_ids[-1])
    if int(ids.min()) < low or int(ids.max()) > high:
        return None
    if high - low < 4 * sorted_ids.size + 4096:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[sorted_ids - low] = np.arange(sorted_ids.size)
        rows: np.ndarray = table[ids - low]
        return None if bool((rows < 0).any()) else rows
    rows = np.searchsorted(sorted_ids, ids).astype(np.int64)
    return rows if np.array_equal(sorted_ids[rows], ids) else None


def shard_gt_rows(gt: Dataset, pred: Dataset) -> np.ndarray:
    """Rows of ``gt`` on the images ``pred`` has predictions on (the others would form groups
    without predictions, which add nothing but time; their counts come from the client)."""
    return np.flatnonzero(np.isin(gt.image_index, np.unique(pred.image_index)))


def shard_outcome(
    outcome: MatchOutcome,
    gt_rows: np.ndarray,
    *,
    pred_count: np.ndarray | None = None,
    unrecorded: np.ndarray | None = None,
    pred_rows: bool = False,
    matches: bool = True,
) -> MatchOutcome:
    """``outcome`` (matched against the ground-truth rows ``gt_rows``) as a shard ships it.

    The matched ground truths become rows of the whole ground truth (or -1 everywhere without
    ``matches``), the IoUs stay on the worker (NaN), the prediction rows too (-1) unless
    ``pred_rows`` (VOC ranks tied scores by them), the per-ground-truth records go (the
    client takes them from the whole ground truth). Constant columns cost nothing to ship.
    ``unrecorded`` (:func:`unrecorded_predictions`) lets slices and resamples of the merged
    outcome count every image's predictions per class.
    """
    n, t = len(outcome), len(outcome.thresholds)
    to_gt = np.append(np.asarray(gt_rows, dtype=np.int64), -1)  # -1 stays -1
    if matches:
        first_gt = to_gt[np.asarray(outcome.first_gt, dtype=np.int64)]
        same_bits = outcome.same_bits
        other_row = np.asarray(outcome.other_row, dtype=np.int64)
        other_gt = to_gt[np.asarray(outcome.other_gt, dtype=np.int64)]
    else:
        first_gt = np.broadcast_to(np.int64(-1), (n,))
        same_bits = np.broadcast_to(np.uint8(0), (n, (t + 7) // 8))
        other_row = np.zeros(0, dtype=np.int64)
        other_gt = np.zeros((0, t), dtype=np.int64)
    return dataclasses.replace(
        outcome,
        pred_row=outcome.pred_row if pred_rows else np.broadcast_to(np.int64(-1), (n,)),
        first_gt=first_gt,
        first_iou=np.broadcast_to(np.float64(np.nan), (n,)),
        same_bits=same_bits,
        other_row=other_row,
        other_gt=other_gt,
        other_iou=np.broadcast_to(np.float64(np.nan), other_gt.shape),
        gt_row=None,
        gt_class_row=None,
        gt_image_id=None,
        gt_in_range=None,
        pred_count=None if pred_count is None else np.asarray(pred_count, dtype=np.int64),
        unrecorded=None if unrecorded is None else np.asarray(unrecorded, dtype=np.int64),
    )


def unrecorded_predictions(
    outcome: MatchOutcome, pred: Dataset, category_ids: np.ndarray
) -> np.ndarray:
    """The predictions of ``pred`` in ``category_ids`` (sorted) that have no record in
    ``outcome`` (cut by ``max_dets``), per image and category.

    Returns
    -------
    ndarray of int64, shape (E, 3)
        ``(image id, category id, count)``, one row per (image, category) with such
        predictions (none in the common case: a group's records are its predictions).

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images, cats = ImageTable.from_lists([5], ["a"]), CategoryTable.from_lists([1], ["c"])
    >>> pred = Dataset.from_arrays(images, cats, boxes=np.zeros((3, 4)), image_index=[0, 0, 0],
    ...                            category_id=[1, 1, 1], scores=[0.9, 0.8, 0.7])
    >>> none = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> unrecorded_predictions(none, pred, np.array([1])).tolist()
    [[5, 1, 3]]
    """
    k = max(len(category_ids), 1)
    sorted_ids = np.sort(np.asarray(pred.images.ids, dtype=np.int64))

    def keys(image_id: np.ndarray, category_id: np.ndarray) -> np.ndarray:
        row = class_rows(category_ids, np.asarray(category_id, dtype=np.int64))
        ok = row >= 0
        image = np.searchsorted(sorted_ids, np.asarray(image_id, dtype=np.int64)[ok])
        return np.asarray(image * k + row[ok], dtype=np.int64)

    image_ids = np.asarray(pred.images.ids, dtype=np.int64)[pred.image_index]
    key, count = np.unique(keys(image_ids, pred.category_id), return_counts=True)
    recorded, times = np.unique(keys(outcome.image_id, outcome.category_id), return_counts=True)
    count[np.searchsorted(key, recorded)] -= times  # every record is one of the predictions
    left = count > 0
    key = key[left]
    return np.stack(
        [sorted_ids[key // k], np.asarray(category_ids, dtype=np.int64)[key % k], count[left]],
        axis=1,
    ).astype(np.int64)


def with_pred_rows(part: Any, rows: np.ndarray) -> Any:
    """``part`` with its prediction rows (>= 0) ``r`` replaced by ``rows[r]`` (a shard's rows
    in the predictions of all shards, in the order one process sees them): a
    :class:`MatchOutcome`'s ``pred_row``, and VOC / YOLO's other-class rows; other parts
    unchanged."""
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(part, MatchOutcome):
        own = np.asarray(part.pred_row, dtype=np.int64)
        if not (own >= 0).any():
            return part
        return dataclasses.replace(part, pred_row=np.where(own >= 0, rows[np.maximum(own, 0)], -1))
    outcome, other = getattr(part, "outcome", None), getattr(part, "other_row", None)
    if isinstance(outcome, MatchOutcome) and other is not None:
        return dataclasses.replace(
            part,
            outcome=with_pred_rows(outcome, rows),
            other_row=rows[np.asarray(other, dtype=np.int64)],
        )
    return part


def merge_order(
    class_row: np.ndarray, score: np.ndarray, image_rank: np.ndarray, n_images: int
) -> np.ndarray:
    """Permutation of concatenated shards' records into accumulation order.

    Each shard's records are in accumulation order (class row, descending score, image,
    rank in the group) and no image is in two shards, so a STABLE sort by (class row,
    descending score, image) reproduces one process's order (within an image the shard's
    own rank order is kept). The three keys are packed in one integer (the score as its
    dense rank) when they fit, and numpy's stable sort (timsort) merges the already sorted
    runs of the shards in O(N log shards); otherwise a lexsort of the three.

    Parameters
    ----------
    class_row, image_rank : ndarray of int, shape (N,)
        Non-negative.
    score : ndarray of float64, shape (N,)
    n_images : int
        Bound on ``image_rank``.

    Returns
    -------
    ndarray of int64, shape (N,)

    Examples
    --------
    >>> merge_order(np.array([0, 1, 0]), np.array([0.5, 0.9, 0.7]), np.array([3, 1, 2]), 4)
    array([2, 0, 1])
    """
    neg = -np.asarray(score, dtype=np.float64)
    if neg.size == 0:
        return np.zeros(0, dtype=np.int64)
    levels = np.sort(neg, kind="stable")  # merges the shards' descending runs
    levels = levels[np.r_[True, levels[1:] != levels[:-1]]]
    dense = np.searchsorted(levels, neg)
    classes = int(np.max(class_row)) + 1
    if classes * levels.size * max(int(n_images), 1) < 2**62:
        key = np.asarray(class_row, dtype=np.int64) * levels.size + dense
        key *= max(int(n_images), 1)
        key += image_rank
        return np.argsort(key, kind="stable").astype(np.int64, copy=False)
    return np.lexsort((image_rank, dense, class_row)).astype(np.int64, copy=False)


def merge_outcomes(
    parts: Sequence[MatchOutcome], base: MatchOutcome, image_ids: np.ndarray
) -> MatchOutcome:
    """The shards' outcomes (disjoint images) as one, in accumulation order, with ``base``'s
    ground-truth counts, records and metadata (``base``: the whole ground truth matched
    against no predictions). ``image_ids``: the ground truth's sorted image ids."""
    parts = [base, *parts]
    starts = np.cumsum([0, *(len(p) for p in parts)])[:-1]
    n = int(sum(len(p) for p in parts))

    def joined(name: str) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(p, name)) for p in parts])

    class_row = joined("class_row")
    score = joined("score")
    image_rank = id_rows(image_ids, joined("image_id"))
    if image_rank is None:
        raise ValueError("parts: expected records of the ground truth's images only")
    order = merge_order(class_row, score, image_rank, max(len(image_ids), 1))
    del image_rank

    def taken(name: str, rows: np.ndarray = order) -> np.ndarray:
        # one field of every part, in merged order: a constant column (what the workers
        # keep: prediction rows, IoUs) stays one broadcast value, the others are gathered
        # one field at a time (no second copy of the whole outcome)
        arrays = [np.asarray(getattr(p, name)) for p in parts if len(p)]
        if arrays and all(not any(a.strides) for a in arrays):
            first = arrays[0].reshape(-1)[:1]
            same = all(np.array_equal(a.reshape(-1)[:1], first, equal_nan=True) for a in arrays)
            if same and first.size:
                return np.broadcast_to(first[0], (rows.size, *arrays[0].shape[1:]))
        gathered: np.ndarray = joined(name)[rows]
        return gathered

    other = np.concatenate(
        [np.asarray(p.other_row, dtype=np.int64) + s for p, s in zip(parts, starts, strict=True)]
    )  # increasing: each part's rows are, and the parts follow each other
    at = np.flatnonzero(np.isin(order, other)) if other.size else np.zeros(0, dtype=np.int64)
    source = np.searchsorted(other, order[at])
    unrecorded = [p.unrecorded for p in parts]
    counts = [p.pred_count for p in parts[1:]]
    pred_count = (
        np.sum([np.asarray(c) for c in counts], axis=0).astype(np.int64)
        if counts and all(c is not None for c in counts)
        else base.pred_count
    )
    assert order.size == n
    return dataclasses.replace(
        base,
        pred_row=taken("pred_row"),
        score=score[order],
        class_row=class_row[order],
        category_id=taken("category_id"),
        image_id=taken("image_id"),
        rank=taken("rank"),
        tp_bits=taken("tp_bits"),
        ignored_bits=taken("ignored_bits"),
        first_gt=taken("first_gt"),
        first_iou=taken("first_iou"),
        same_bits=taken("same_bits"),
        other_row=at.astype(np.int64),
        other_gt=joined("other_gt")[source],
        other_iou=joined("other_iou")[source],
        pred_count=pred_count,
        unrecorded=(
            np.concatenate([np.asarray(u, dtype=np.int64).reshape(-1, 3) for u in unrecorded])
            if all(u is not None for u in unrecorded)
            else None
        ),
    )


def coco_shard_match(protocol: Any, gt: Dataset, pred: Dataset, iou_type: str) -> MatchOutcome:
    """``protocol.match`` (COCO and its variants) on one shard, as :func:`shard_outcome`."""
    rows = shard_gt_rows(gt, pred)
    groups, outcome = protocol.match(take_rows(gt, rows), pred, iou_type=iou_type)
    k = len(groups.category_ids)
    pred_count = np.bincount(groups.pred_class, minlength=k)[:k]
    unrecorded = unrecorded_predictions(outcome, pred, groups.category_ids)
    return shard_outcome(outcome, rows, pred_count=pred_count, unrecorded=unrecorded)


def coco_shard_summarize(
    protocol: Any, gt: Dataset, parts: Sequence[MatchOutcome], iou_type: str
) -> ProtocolResult:
    """``protocol.summarize`` of merged shard outcomes: the one-process numbers."""
    groups, base = protocol.match(gt, empty_predictions(gt), iou_type=iou_type)
    k = len(groups.category_ids)
    base = dataclasses.replace(
        base, pred_count=np.zeros(k, dtype=np.int64), unrecorded=np.zeros((0, 3), dtype=np.int64)
    )
    outcome = merge_outcomes(parts, base, np.sort(gt.images.ids))
    assert outcome.pred_count is not None
    layout = SimpleNamespace(
        category_ids=groups.category_ids,
        gt_rows=groups.gt_rows,
        gt_class=groups.gt_class,
        pred_class=np.repeat(np.arange(k), outcome.pred_count[:k]),
    )
    result: ProtocolResult = protocol.summarize(gt, None, layout, outcome, iou_type=iou_type)
    return result


class _MatchesRecords(Protocol):
    def match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str) -> MatchedPredictions: ...

    def summarize(
        self, gt: Dataset, pred: Dataset | None, matched: MatchedPredictions, /, *, iou_type: str
    ) -> ProtocolResult: ...


class MatchedShards:
    """The sharding methods of a protocol whose ``match(gt, pred, /, *, iou_type)`` returns a
    :class:`~ioukit.evaluation.grouping.MatchedPredictions` and whose
    ``summarize(gt, pred, matched, /, *, iou_type)`` takes one (VOC, YOLO): a base class (no
    fields, no slots) of the protocol's dataclass.

    Examples
    --------
    >>> from ioukit.evaluation.protocols.voc import VOCProtocol
    >>> VOCProtocol.can_shard, VOCProtocol.shard_match is MatchedShards.shard_match
    (True, True)
    """

    __slots__ = ()

    can_shard: ClassVar[bool] = True
    """Sharded evaluation (Dask, torch.distributed) runs :meth:`shard_match` on the workers."""

    def shard_match(
        self: _MatchesRecords, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox"
    ) -> MatchedPredictions:
        """On a worker: ``match`` of some images' predictions, as the shard ships it (the
        prediction rows kept: tied scores rank by them; the matched ground truths stay)."""
        rows = shard_gt_rows(gt, pred)
        matched = self.match(take_rows(gt, rows), pred, iou_type=iou_type)
        outcome = shard_outcome(matched.outcome, rows, pred_rows=True, matches=False)
        return dataclasses.replace(matched, outcome=outcome)

    def shard_summarize(
        self: _MatchesRecords,
        gt: Dataset,
        parts: Sequence[MatchedPredictions],
        /,
        *,
        iou_type: str = "bbox",
        pred_row_offsets: Sequence[int] = (),
        n_predictions: int = 0,
        names: Sequence[str] = (),
    ) -> ProtocolResult:
        """On the client: the shards' matches merged (prediction rows shifted by
        ``pred_row_offsets``) and ``summarize`` once."""
        if not parts:
            parts = [MatchedShards.shard_match(self, gt, empty_predictions(gt), iou_type=iou_type)]
            pred_row_offsets = [0]
        merged = MatchedPredictions.merge(parts, pred_row_offsets=list(pred_row_offsets) or None)
        return self.summarize(gt, None, merged, iou_type=iou_type)
