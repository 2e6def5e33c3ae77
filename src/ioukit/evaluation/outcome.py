"""The matcher's per-prediction records: what every reader of a match uses, and the
mergeable partial result of sharded evaluation.

:class:`MatchOutcome` holds one record per evaluated prediction (the first ``max_det`` of each
(image, class) group) in ACCUMULATION ORDER: class row, then descending score, then image id,
then rank inside the group. That is pycocotools' order (its ``np.argsort(-scores,
kind="mergesort")`` over detections concatenated image by image, images in id order), so
accumulation reads the records front to back.

Merging (``Evaluator.merge``, torch.distributed, Dask): outcomes computed on DISJOINT sets of
images, with the same category table, thresholds and area ranges, concatenate and re-sort by
:meth:`MatchOutcome.sort_key` (a stable ``np.lexsort((rank, image_id, -score, class_row))``);
:meth:`MatchOutcome.merge` does exactly that and reproduces the single-process outcome bit for
bit (ground-truth counts add up). About 30 bytes per detection and threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["FALSE_POSITIVE", "IGNORED", "TRUE_POSITIVE", "MatchOutcome"]

FALSE_POSITIVE = 0
"""Status code: the prediction matched nothing (and is counted)."""
TRUE_POSITIVE = 1
"""Status code: the prediction matched a regular ground truth."""
IGNORED = 2
"""Status code: matched an ignored/crowd/difficult ground truth, or unmatched with its own
area outside the area range: counted neither way."""


@dataclass(frozen=True, eq=False)
class MatchOutcome:
    """Per-prediction match records (N predictions, T thresholds, A area ranges, K classes).

    Attributes
    ----------
    pred_row : ndarray of int64, shape (N,)
        Row of the prediction in the predictions dataset.
    score : ndarray of float64, shape (N,)
    class_row : ndarray of int64, shape (N,)
        Accumulation class: row of the category in ``category_ids`` (0 for every record when
        classes are pooled, ``use_cats=False``).
    category_id : ndarray of int64, shape (N,)
        The prediction's own category id.
    image_id : ndarray of int64, shape (N,)
    rank : ndarray of int64, shape (N,)
        Position in its (image, class) group (0 = highest score); ``max_dets`` cut-offs
        compare with it.
    status : ndarray of int8, shape (N, A, T)
        ``TRUE_POSITIVE``, ``FALSE_POSITIVE`` or ``IGNORED`` per area range and threshold.
    matched_gt : ndarray of int64, shape (N, T)
        Ground-truth row (in the ground-truth dataset) the matcher chose for area range 0
        (``"all"``), also when that makes the prediction ignored (crowd, difficult); -1 when
        none. ``status`` says whether it counted.
    iou : ndarray of float64, shape (N, T)
        Similarity of that match; NaN when none.
    gt_count : ndarray of int64, shape (K, A)
        Non-ignored ground truths per class and area range (recall's denominator).
    category_ids : ndarray of int64, shape (K,)
    thresholds : ndarray of float64, shape (T,)
        The thresholds as given (before any clamping).
    area_names : tuple of str, length A

    Examples
    --------
    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> len(o), o.status.shape, o.gt_count.shape
    (0, (0, 1, 1), (1, 1))
    """

    pred_row: np.ndarray
    score: np.ndarray
    class_row: np.ndarray
    category_id: np.ndarray
    image_id: np.ndarray
    rank: np.ndarray
    status: np.ndarray
    matched_gt: np.ndarray
    iou: np.ndarray
    gt_count: np.ndarray
    category_ids: np.ndarray
    thresholds: np.ndarray
    area_names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.pred_row.shape[0])

    @classmethod
    def empty(
        cls, category_ids: np.ndarray, thresholds: np.ndarray, area_names: Sequence[str]
    ) -> MatchOutcome:
        """An outcome without predictions or ground truths."""
        k, t, a = len(category_ids), len(thresholds), len(area_names)
        ints = np.zeros(0, dtype=np.int64)
        return cls(
            pred_row=ints,
            score=np.zeros(0),
            class_row=ints,
            category_id=ints,
            image_id=ints,
            rank=ints,
            status=np.zeros((0, a, t), dtype=np.int8),
            matched_gt=np.zeros((0, t), dtype=np.int64),
            iou=np.zeros((0, t)),
            gt_count=np.zeros((k, a), dtype=np.int64),
            category_ids=np.asarray(category_ids, dtype=np.int64),
            thresholds=np.asarray(thresholds, dtype=np.float64),
            area_names=tuple(area_names),
        )

    def sort_key(self) -> np.ndarray:
        """Permutation into accumulation order: ``lexsort((rank, image_id, -score, class_row))``."""
        return np.lexsort((self.rank, self.image_id, -self.score, self.class_row))

    def class_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(start, end)`` (K,) each: class ``k``'s records are ``start[k]:end[k]``."""
        k = np.arange(self.gt_count.shape[0])
        return (
            np.searchsorted(self.class_row, k, side="left").astype(np.int64),
            np.searchsorted(self.class_row, k, side="right").astype(np.int64),
        )

    def true_positive(self, t: int = 0, a: int = 0) -> np.ndarray:
        """(N,) bool: true positive at threshold ``t`` and area range ``a``."""
        return np.asarray(self.status[:, a, t] == TRUE_POSITIVE)

    def false_positive(self, t: int = 0, a: int = 0) -> np.ndarray:
        """(N,) bool: false positive at threshold ``t`` and area range ``a``."""
        return np.asarray(self.status[:, a, t] == FALSE_POSITIVE)

    @classmethod
    def merge(
        cls,
        parts: Sequence[MatchOutcome],
        /,
        *,
        pred_row_offsets: Sequence[int] | None = None,
        gt_row_offsets: Sequence[int] | None = None,
    ) -> MatchOutcome:
        """Outcomes of disjoint image shards as one, in accumulation order.

        Parameters
        ----------
        parts : sequence of MatchOutcome
            Same ``category_ids``, ``thresholds`` and ``area_names``; disjoint image ids.
        pred_row_offsets, gt_row_offsets : sequence of int, optional
            Added to each part's ``pred_row`` / ``matched_gt`` (>= 0) when the merged
            datasets are the parts' datasets concatenated.

        Examples
        --------
        >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
        >>> len(MatchOutcome.merge([o, o]))
        0
        """
        if not parts:
            raise ValueError("parts: expected at least one MatchOutcome, got none")
        first = parts[0]
        for i, p in enumerate(parts):
            if (
                not np.array_equal(p.category_ids, first.category_ids)
                or not np.array_equal(p.thresholds, first.thresholds)
                or p.area_names != first.area_names
            ):
                raise ValueError(
                    f"parts[{i}]: expected the categories, thresholds and area ranges of parts[0]"
                )
        n = len(parts)
        p_off = [0] * n if pred_row_offsets is None else list(pred_row_offsets)
        g_off = [0] * n if gt_row_offsets is None else list(gt_row_offsets)
        if len(p_off) != n or len(g_off) != n:
            raise ValueError("pred_row_offsets, gt_row_offsets: expected one offset per part")
        matched = np.concatenate(
            [
                np.where(p.matched_gt >= 0, p.matched_gt + o, -1)
                for p, o in zip(parts, g_off, strict=True)
            ]
        )
        joined = cls(
            pred_row=np.concatenate([p.pred_row + o for p, o in zip(parts, p_off, strict=True)]),
            score=np.concatenate([p.score for p in parts]),
            class_row=np.concatenate([p.class_row for p in parts]),
            category_id=np.concatenate([p.category_id for p in parts]),
            image_id=np.concatenate([p.image_id for p in parts]),
            rank=np.concatenate([p.rank for p in parts]),
            status=np.concatenate([p.status for p in parts]),
            matched_gt=matched,
            iou=np.concatenate([p.iou for p in parts]),
            gt_count=np.sum([p.gt_count for p in parts], axis=0).astype(np.int64),
            category_ids=first.category_ids,
            thresholds=first.thresholds,
            area_names=first.area_names,
        )
        return joined.take(joined.sort_key())

    def take(self, order: np.ndarray) -> MatchOutcome:
        """The records ``order`` (same counts and metadata)."""
        return MatchOutcome(
            pred_row=self.pred_row[order],
            score=self.score[order],
            class_row=self.class_row[order],
            category_id=self.category_id[order],
            image_id=self.image_id[order],
            rank=self.rank[order],
            status=np.ascontiguousarray(self.status[order]),
            matched_gt=self.matched_gt[order],
            iou=self.iou[order],
            gt_count=self.gt_count,
            category_ids=self.category_ids,
            thresholds=self.thresholds,
            area_names=self.area_names,
        )
