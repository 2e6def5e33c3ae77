"""The matcher's per-prediction records: what every reader of a match uses, and the
mergeable partial result of sharded evaluation.

:class:`MatchOutcome` holds one record per evaluated prediction (the first ``max_det`` of each
(image, class) group) in ACCUMULATION ORDER: class row, then descending score, then image id,
then rank inside the group. That is pycocotools' order (its ``np.argsort(-scores,
kind="mergesort")`` over detections concatenated image by image, images in id order), so
accumulation reads the records front to back.

Layout (lean: about 64 bytes per detection for COCO's 4 area ranges x 10 thresholds, 250
before): the status of every (area range, threshold) is two bit planes (``tp_bits``,
``ignored_bits``, ``ceil(A * T / 8)`` bytes each, bit ``a * T + t`` in ``np.packbits``
order); the matched ground truth and its IoU are kept once per prediction (``first_gt``,
``first_iou``: the match at the first threshold that has one) with a bit per threshold saying
where that match holds (``same_bits``); the rare predictions that take a different ground
truth at another threshold keep their full rows (``other_row``, ``other_gt``, ``other_iou``).
An IoU belongs to a (prediction, ground truth) pair, so this is exact: :attr:`status`,
:attr:`matched_gt` and :attr:`iou` give back the dense arrays bit for bit (built on first
access, then cached, read-only), and :meth:`status_at`, :meth:`matched_gt_at`,
:meth:`iou_at` read one column without building them.

Merging (``Evaluator.merge``, torch.distributed, Dask): outcomes computed on DISJOINT sets of
images, with the same category table, thresholds and area ranges, concatenate and re-sort by
:meth:`MatchOutcome.sort_key` (a stable ``np.lexsort((rank, image_id, -score, class_row))``);
:meth:`MatchOutcome.merge` does exactly that and reproduces the single-process outcome bit for
bit (ground-truth counts add up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ioukit.errors import ParameterError

__all__ = [
    "FALSE_POSITIVE",
    "IGNORED",
    "TRUE_POSITIVE",
    "MatchOutcome",
    "counted_at",
    "kept_outcome",
    "threshold_index",
]

FALSE_POSITIVE = 0
"""Status code: the prediction matched nothing (and is counted)."""
TRUE_POSITIVE = 1
"""Status code: the prediction matched a regular ground truth."""
IGNORED = 2
"""Status code: matched an ignored/crowd/difficult ground truth, or unmatched with its own
area outside the area range: counted neither way."""


def threshold_index(thresholds: np.ndarray, value: float) -> int | None:
    """The index of ``value`` in ``thresholds`` (the first within 1e-12), None when absent:
    how every reader of a match finds the evaluation's own threshold.

    >>> threshold_index(np.linspace(0.5, 0.95, 10), 0.75), threshold_index(np.array([0.5]), 0.7)
    (5, None)
    """
    hit = np.flatnonzero(np.isclose(thresholds, value, rtol=0.0, atol=1e-12))
    return int(hit[0]) if hit.size else None


def kept_outcome(outcome: MatchOutcome | None, protocol: str, reader: str) -> MatchOutcome:
    """``outcome``, or the ``ParameterError`` of an analysis that reads the evaluation's own
    match (``reader``: its name and verb, as "calibration reads") when the evaluation of
    ``protocol`` kept none.

    >>> kept_outcome(None, "pedestrian", "calibration reads")
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: result: expected an evaluation that keeps its match \
(outcome), got protocol 'pedestrian' without one; calibration reads the evaluation's own match
    """
    if outcome is None:
        raise ParameterError(
            f"result: expected an evaluation that keeps its match (outcome), got protocol "
            f"{protocol!r} without one; {reader} the evaluation's own match"
        )
    return outcome


def counted_at(
    outcome: MatchOutcome, t: int, a: int, max_dets: Sequence[int] | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(status, counted)`` of every record at threshold ``t`` and area range ``a``: counted
    records are not ignored and within the largest of ``max_dets`` (an evaluation's
    ``params["max_dets"]``; None or empty: every record).

    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> counted_at(o, 0, 0, [100])
    (array([], dtype=int8), array([], dtype=bool))
    """
    status = outcome.status_at(t, a)
    counted = status != IGNORED
    if max_dets:
        counted &= np.asarray(outcome.rank) < int(list(max_dets)[-1])
    return status, counted


def _bytes(bits: int) -> int:
    return (bits + 7) // 8


def _column(planes: np.ndarray, bit: int) -> np.ndarray:
    """(N,) uint8 0/1: bit ``bit`` (``np.packbits`` order) of each row of ``planes``."""
    return np.asarray((planes[:, bit >> 3] >> (7 - (bit & 7))) & 1)


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)  # no slots: cached_property keeps the dense views
class MatchOutcome:
    """Per-prediction match records (N predictions, T thresholds, A area ranges, K classes).

    Attributes
    ----------
    pred_row : ndarray of int64, shape (N,)
        Row of the prediction in the predictions dataset.
    score : ndarray of float64, shape (N,)
    class_row : ndarray of int32, shape (N,)
        Accumulation class: row of the category in ``category_ids`` (0 for every record when
        classes are pooled, ``use_cats=False``).
    category_id : ndarray of int64, shape (N,)
        The prediction's own category id.
    image_id : ndarray of int64, shape (N,)
    rank : ndarray of int32, shape (N,)
        Position in its (image, class) group (0 = highest score); ``max_dets`` cut-offs
        compare with it.
    tp_bits, ignored_bits : ndarray of uint8, shape (N, ceil(A * T / 8))
        Bit ``a * T + t`` (``np.packbits`` order, padding bits 0): TRUE_POSITIVE, IGNORED at
        area range ``a`` and threshold ``t`` (neither: FALSE_POSITIVE). See :attr:`status`.
    first_gt : ndarray of int32, shape (N,)
        Ground-truth row (in the ground-truth dataset) matched at the first threshold that has
        a match (area range 0, ``"all"``), -1 when none (stored as int32 whatever it is given
        as: a ground truth has fewer than 2**31 rows).
    first_iou : ndarray of float64, shape (N,)
        Similarity of that pair; NaN when none.
    same_bits : ndarray of uint8, shape (N, ceil(T / 8))
        Bit ``t``: the match at threshold ``t`` is ``first_gt``.
    other_row : ndarray of int64, shape (M,)
        Increasing record indices whose match at some threshold is another ground truth
        (rare); their full rows are ``other_gt`` (M, T) int64 and ``other_iou`` (M, T).
    gt_count : ndarray of int64, shape (K, A)
        Non-ignored ground truths per class and area range (recall's denominator).
    category_ids : ndarray of int64, shape (K,)
    thresholds : ndarray of float64, shape (T,)
        The thresholds as given (before any clamping).
    area_names : tuple of str, length A
    gt_row : ndarray of int64, shape (G,), or None
        The regular (counted: not crowd, ignore or difficult) ground truths the matcher saw,
        as rows of the ground-truth dataset; None when the outcome was built without them
        (:meth:`from_dense`). Resampling and slicing read them.
    gt_class_row : ndarray of int32, shape (G,), or None
        Accumulation class of each (0 when classes are pooled).
    gt_image_id : ndarray of int64, shape (G,), or None
    gt_in_range : ndarray of bool, shape (G, A), or None
        Whether each lies in area range ``a``: ``gt_count[k, a]`` is the number of rows of
        class ``k`` inside range ``a``.
    pred_count : ndarray of int64, shape (K,), or None
        Predictions per class the matcher saw before any ``max_dets`` cut (the per-class
        tables' ``num_pred``); None when not recorded. Merging adds them up (sharded
        evaluation ships it with each shard's outcome).
    unrecorded : ndarray of int64, shape (E, 3), or None
        Set when the predictions stayed elsewhere (a sharded outcome; the result's
        ``predictions`` are empty): ``(image id, category id, count)`` of the predictions of a
        ground-truth category that have no record (cut by ``max_dets``), so that the records
        and these rows give every image's predictions per class (what a slice's or a
        resample's ``num_pred`` counts). None: the predictions dataset is at hand.

    Examples
    --------
    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> len(o), o.status.shape, o.gt_count.shape
    (0, (0, 1, 1), (1, 1))
    >>> d = MatchOutcome.from_dense(
    ...     pred_row=np.array([0, 1]), score=np.array([0.9, 0.8]), class_row=np.array([0, 0]),
    ...     category_id=np.array([1, 1]), image_id=np.array([1, 1]), rank=np.array([0, 1]),
    ...     status=np.array([[[1, 0]], [[0, 2]]], dtype=np.int8),
    ...     matched_gt=np.array([[4, -1], [-1, 5]]), iou=np.array([[0.6, np.nan], [np.nan, 0.9]]),
    ...     gt_count=np.array([[2]]), category_ids=np.array([1]),
    ...     thresholds=np.array([0.5, 0.75]), area_names=("all",))
    >>> d.status[:, 0].tolist(), d.matched_gt.tolist(), d.iou_at(1).tolist()
    ([[1, 0], [0, 2]], [[4, -1], [-1, 5]], [nan, 0.9])
    """

    pred_row: np.ndarray
    score: np.ndarray
    class_row: np.ndarray
    category_id: np.ndarray
    image_id: np.ndarray
    rank: np.ndarray
    tp_bits: np.ndarray
    ignored_bits: np.ndarray
    first_gt: np.ndarray
    first_iou: np.ndarray
    same_bits: np.ndarray
    other_row: np.ndarray
    other_gt: np.ndarray
    other_iou: np.ndarray
    gt_count: np.ndarray
    category_ids: np.ndarray
    thresholds: np.ndarray
    area_names: tuple[str, ...]
    gt_row: np.ndarray | None = None
    gt_class_row: np.ndarray | None = None
    gt_image_id: np.ndarray | None = None
    gt_in_range: np.ndarray | None = None
    pred_count: np.ndarray | None = None
    unrecorded: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "first_gt", np.asarray(self.first_gt, dtype=np.int32))

    def __len__(self) -> int:
        return int(self.pred_row.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the per-record arrays."""
        return int(
            sum(
                a.nbytes
                for a in (
                    self.pred_row,
                    self.score,
                    self.class_row,
                    self.category_id,
                    self.image_id,
                    self.rank,
                    self.tp_bits,
                    self.ignored_bits,
                    self.first_gt,
                    self.first_iou,
                    self.same_bits,
                    self.other_row,
                    self.other_gt,
                    self.other_iou,
                )
            )
        )

    @classmethod
    def empty(
        cls, category_ids: np.ndarray, thresholds: np.ndarray, area_names: Sequence[str]
    ) -> MatchOutcome:
        """An outcome without predictions or ground truths."""
        k, t, a = len(category_ids), len(thresholds), len(area_names)
        ints = np.zeros(0, dtype=np.int64)
        small = np.zeros(0, dtype=np.int32)
        return cls(
            pred_row=ints,
            score=np.zeros(0),
            class_row=small,
            category_id=ints,
            image_id=ints,
            rank=small,
            tp_bits=np.zeros((0, _bytes(a * t)), dtype=np.uint8),
            ignored_bits=np.zeros((0, _bytes(a * t)), dtype=np.uint8),
            first_gt=ints,
            first_iou=np.zeros(0),
            same_bits=np.zeros((0, _bytes(t)), dtype=np.uint8),
            other_row=ints,
            other_gt=np.zeros((0, t), dtype=np.int64),
            other_iou=np.zeros((0, t)),
            gt_count=np.zeros((k, a), dtype=np.int64),
            category_ids=np.asarray(category_ids, dtype=np.int64),
            thresholds=np.asarray(thresholds, dtype=np.float64),
            area_names=tuple(area_names),
            gt_row=ints,
            gt_class_row=small,
            gt_image_id=ints,
            gt_in_range=np.zeros((0, a), dtype=bool),
        )

    @property
    def has_gt_records(self) -> bool:
        """Whether the per-ground-truth columns (``gt_row``...) are present."""
        return self.gt_row is not None

    @classmethod
    def from_dense(
        cls,
        *,
        pred_row: np.ndarray,
        score: np.ndarray,
        class_row: np.ndarray,
        category_id: np.ndarray,
        image_id: np.ndarray,
        rank: np.ndarray,
        status: np.ndarray,
        matched_gt: np.ndarray,
        iou: np.ndarray,
        gt_count: np.ndarray,
        category_ids: np.ndarray,
        thresholds: np.ndarray,
        area_names: Sequence[str],
    ) -> MatchOutcome:
        """An outcome from dense ``status`` (N, A, T), ``matched_gt`` and ``iou`` (N, T)."""
        status = np.asarray(status)
        n = status.shape[0]
        a, t = len(area_names), len(thresholds)
        flat = status.reshape(n, a * t)
        matched = np.asarray(matched_gt, dtype=np.int64).reshape(n, t)
        iou = np.asarray(iou, dtype=np.float64).reshape(n, t)
        has = matched >= 0
        any_match = has.any(axis=1)
        first_t = np.argmax(has, axis=1) if t else np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        first_gt = np.where(any_match, matched[rows, first_t] if t else -1, -1).astype(np.int32)
        first_iou = np.where(any_match, iou[rows, first_t] if t else np.nan, np.nan)
        same = has & (matched == first_gt[:, None])
        # rows the compact form cannot hold exactly go to the dense exception rows
        iou_ok = (iou == first_iou[:, None]) | (np.isnan(iou) & np.isnan(first_iou[:, None]))
        odd = (has & ~(same & iou_ok)) | (~has & ((matched != -1) | ~np.isnan(iou)))
        other = np.flatnonzero(odd.any(axis=1)).astype(np.int64)
        return cls(
            pred_row=np.asarray(pred_row, dtype=np.int64),
            score=np.asarray(score, dtype=np.float64),
            class_row=np.asarray(class_row, dtype=np.int32),
            category_id=np.asarray(category_id, dtype=np.int64),
            image_id=np.asarray(image_id, dtype=np.int64),
            rank=np.asarray(rank, dtype=np.int32),
            tp_bits=np.packbits(flat == TRUE_POSITIVE, axis=1).reshape(n, _bytes(a * t)),
            ignored_bits=np.packbits(flat == IGNORED, axis=1).reshape(n, _bytes(a * t)),
            first_gt=first_gt,
            first_iou=first_iou,
            same_bits=np.packbits(same, axis=1).reshape(n, _bytes(t)),
            other_row=other,
            other_gt=matched[other],
            other_iou=iou[other],
            gt_count=np.asarray(gt_count, dtype=np.int64),
            category_ids=np.asarray(category_ids, dtype=np.int64),
            thresholds=np.asarray(thresholds, dtype=np.float64),
            area_names=tuple(area_names),
        )

    # ------------------------------------------------------------------ dense views
    @cached_property
    def status(self) -> np.ndarray:
        """(N, A, T) int8: ``TRUE_POSITIVE``, ``FALSE_POSITIVE`` or ``IGNORED`` per area range
        and threshold (built from the bit planes on first access, then cached; read-only)."""
        n, a, t = len(self), len(self.area_names), len(self.thresholds)
        tp = np.unpackbits(self.tp_bits, axis=1, count=a * t)
        ign = np.unpackbits(self.ignored_bits, axis=1, count=a * t)
        codes = tp * np.uint8(TRUE_POSITIVE) + ign * np.uint8(IGNORED)
        return _readonly(codes.view(np.int8).reshape(n, a, t))

    @cached_property
    def matched_gt(self) -> np.ndarray:
        """(N, T) int64: ground-truth row the matcher chose for area range 0 (``"all"``), also
        when that makes the prediction ignored (crowd, difficult); -1 when none. ``status``
        says whether it counted. Built on first access, then cached; read-only."""
        t = len(self.thresholds)
        same = np.unpackbits(self.same_bits, axis=1, count=t).astype(bool)
        # int64 on every NumPy (1.x's value-based casting would keep first_gt's int32)
        out = np.where(same, self.first_gt[:, None], -1).astype(np.int64, copy=False)
        out[self.other_row] = self.other_gt
        return _readonly(out)

    @cached_property
    def iou(self) -> np.ndarray:
        """(N, T) float64: similarity of the ``matched_gt`` pair; NaN when none (built on first
        access, then cached; read-only)."""
        t = len(self.thresholds)
        same = np.unpackbits(self.same_bits, axis=1, count=t).astype(bool)
        out = np.where(same, self.first_iou[:, None], np.nan)
        out[self.other_row] = self.other_iou
        return _readonly(out)

    def status_at(self, t: int = 0, a: int = 0) -> np.ndarray:
        """(N,) int8: the status at threshold index ``t`` and area range ``a``."""
        bit = a * len(self.thresholds) + t
        tp = _column(self.tp_bits, bit)
        ign = _column(self.ignored_bits, bit)
        return np.asarray((tp * TRUE_POSITIVE + ign * IGNORED).astype(np.int8))

    def matched_gt_at(self, t: int = 0) -> np.ndarray:
        """(N,) int64: ``matched_gt[:, t]`` without building the (N, T) array."""
        out = np.where(_column(self.same_bits, t).astype(bool), self.first_gt, np.int64(-1))
        out[self.other_row] = self.other_gt[:, t]
        return np.asarray(out)

    def iou_at(self, t: int = 0) -> np.ndarray:
        """(N,) float64: ``iou[:, t]`` without building the (N, T) array."""
        out = np.where(_column(self.same_bits, t).astype(bool), self.first_iou, np.nan)
        out[self.other_row] = self.other_iou[:, t]
        return np.asarray(out)

    def true_positive(self, t: int = 0, a: int = 0) -> np.ndarray:
        """(N,) bool: true positive at threshold ``t`` and area range ``a``."""
        return _column(self.tp_bits, a * len(self.thresholds) + t).astype(bool)

    def false_positive(self, t: int = 0, a: int = 0) -> np.ndarray:
        """(N,) bool: false positive at threshold ``t`` and area range ``a``."""
        bit = a * len(self.thresholds) + t
        return np.asarray((_column(self.tp_bits, bit) | _column(self.ignored_bits, bit)) == 0)

    def ignore_false_positives(self, records: np.ndarray) -> MatchOutcome:
        """The records ``records`` (bool, (N,)) with every FALSE_POSITIVE turned IGNORED (LVIS'
        not-exhaustively annotated classes); everything else unchanged."""
        records = np.asarray(records, dtype=bool)
        if not records.any():
            return self
        valid = np.packbits(np.ones(len(self.area_names) * len(self.thresholds), dtype=bool))
        ignored = self.ignored_bits.copy()
        ignored[records] |= ~self.tp_bits[records] & valid
        return _replace(self, ignored_bits=ignored)

    # ------------------------------------------------------------------ order and merging
    def sort_key(self) -> np.ndarray:
        """Permutation into accumulation order: ``lexsort((rank, image_id, -score, class_row))``.

        The four keys packed in one integer (score and image id as their dense ranks) when
        it fits, sorted stably: the same permutation as the lexsort, in one pass instead of
        four (the merge of a few million sharded records is dominated by this sort).
        """
        class_row = np.asarray(self.class_row, dtype=np.int64)
        rank = np.asarray(self.rank, dtype=np.int64)
        neg = -np.asarray(self.score, dtype=np.float64)
        if class_row.size == 0 or class_row.min() < 0 or rank.min() < 0:
            return np.lexsort((rank, self.image_id, neg, class_row))
        levels, dense = np.unique(neg, return_inverse=True)
        image_id = np.asarray(self.image_id, dtype=np.int64)
        low, high = int(image_id.min()), int(image_id.max())
        if high - low < 4 * image_id.size + 4096:  # ids offset by the lowest: no sort needed
            image, n_images = image_id - low, high - low + 1
        else:
            images, image = np.unique(image_id, return_inverse=True)
            n_images = images.size
        sizes = [int(class_row.max()) + 1, levels.size, n_images, int(rank.max()) + 1]
        if sizes[0] * sizes[1] * sizes[2] * sizes[3] >= 2**63:
            return np.lexsort((rank, self.image_id, neg, class_row))
        key = class_row * sizes[1] + dense.reshape(-1)
        key *= sizes[2]
        key += image.reshape(-1)
        key *= sizes[3]
        key += rank
        return np.argsort(key, kind="stable")

    def class_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(start, end)`` (K,) each: class ``k``'s records are ``start[k]:end[k]``."""
        k = np.arange(self.gt_count.shape[0])
        return (
            np.searchsorted(self.class_row, k, side="left").astype(np.int64),
            np.searchsorted(self.class_row, k, side="right").astype(np.int64),
        )

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
            Added to each part's ``pred_row`` / matched ground-truth rows (>= 0) when the
            merged datasets are the parts' datasets concatenated.

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
        starts = np.cumsum([0, *(len(p) for p in parts)])[:-1]

        def gt(rows: np.ndarray, offset: int) -> np.ndarray:
            rows = np.asarray(rows, dtype=np.int64)
            return np.where(rows >= 0, rows + offset, -1)

        joined = cls(
            pred_row=np.concatenate([p.pred_row + o for p, o in zip(parts, p_off, strict=True)]),
            score=np.concatenate([p.score for p in parts]),
            class_row=np.concatenate([p.class_row for p in parts]),
            category_id=np.concatenate([p.category_id for p in parts]),
            image_id=np.concatenate([p.image_id for p in parts]),
            rank=np.concatenate([p.rank for p in parts]),
            tp_bits=np.concatenate([p.tp_bits for p in parts]),
            ignored_bits=np.concatenate([p.ignored_bits for p in parts]),
            first_gt=np.concatenate([gt(p.first_gt, o) for p, o in zip(parts, g_off, strict=True)]),
            first_iou=np.concatenate([p.first_iou for p in parts]),
            same_bits=np.concatenate([p.same_bits for p in parts]),
            other_row=np.concatenate(
                [p.other_row + s for p, s in zip(parts, starts, strict=True)]
            ).astype(np.int64),
            other_gt=np.concatenate([gt(p.other_gt, o) for p, o in zip(parts, g_off, strict=True)]),
            other_iou=np.concatenate([p.other_iou for p in parts]),
            gt_count=np.sum([p.gt_count for p in parts], axis=0).astype(np.int64),
            category_ids=first.category_ids,
            thresholds=first.thresholds,
            area_names=first.area_names,
            **_merged_gt_records(parts, g_off),
            pred_count=_summed_pred_count(parts),
            unrecorded=_joined_unrecorded(parts),
        )
        return joined.take(joined.sort_key())

    def take(self, order: np.ndarray) -> MatchOutcome:
        """The records ``order`` (indices; same counts and metadata)."""
        order = np.asarray(order, dtype=np.int64)
        # the exception rows: where ``order`` picks one, in the new numbering
        at = np.flatnonzero(np.isin(order, self.other_row))
        source = np.searchsorted(self.other_row, order[at])
        return MatchOutcome(
            pred_row=self.pred_row[order],
            score=self.score[order],
            class_row=self.class_row[order],
            category_id=self.category_id[order],
            image_id=self.image_id[order],
            rank=self.rank[order],
            tp_bits=self.tp_bits[order],
            ignored_bits=self.ignored_bits[order],
            first_gt=self.first_gt[order],
            first_iou=self.first_iou[order],
            same_bits=self.same_bits[order],
            other_row=at.astype(np.int64),
            other_gt=self.other_gt[source],
            other_iou=self.other_iou[source],
            gt_count=self.gt_count,
            category_ids=self.category_ids,
            thresholds=self.thresholds,
            area_names=self.area_names,
            gt_row=self.gt_row,
            gt_class_row=self.gt_class_row,
            gt_image_id=self.gt_image_id,
            gt_in_range=self.gt_in_range,
            pred_count=self.pred_count,
            unrecorded=self.unrecorded,
        )


def _merged_gt_records(
    parts: Sequence[MatchOutcome], offsets: Sequence[int]
) -> dict[str, np.ndarray | None]:
    # the parts' per-ground-truth columns concatenated (rows shifted), when every part has them
    if not all(p.has_gt_records for p in parts):
        return {"gt_row": None, "gt_class_row": None, "gt_image_id": None, "gt_in_range": None}
    return {
        "gt_row": np.concatenate(
            [np.asarray(p.gt_row) + o for p, o in zip(parts, offsets, strict=True)]
        ).astype(np.int64),
        "gt_class_row": np.concatenate([np.asarray(p.gt_class_row) for p in parts]).astype(
            np.int32
        ),
        "gt_image_id": np.concatenate([np.asarray(p.gt_image_id) for p in parts]).astype(np.int64),
        "gt_in_range": np.concatenate([np.asarray(p.gt_in_range) for p in parts]).astype(bool),
    }


def _summed_pred_count(parts: Sequence[MatchOutcome]) -> np.ndarray | None:
    # the parts' predictions per class added up, when every part has them
    if not all(p.pred_count is not None for p in parts):
        return None
    total: np.ndarray = np.sum([np.asarray(p.pred_count) for p in parts], axis=0)
    return total.astype(np.int64)


def _joined_unrecorded(parts: Sequence[MatchOutcome]) -> np.ndarray | None:
    # the parts' unrecorded predictions (disjoint images), when every part has them
    if not all(p.unrecorded is not None for p in parts):
        return None
    rows = [np.asarray(p.unrecorded, dtype=np.int64).reshape(-1, 3) for p in parts]
    return np.concatenate(rows)


def _replace(outcome: MatchOutcome, **changes: np.ndarray) -> MatchOutcome:
    """``dataclasses.replace`` (the cached dense views are not carried over)."""
    import dataclasses

    return dataclasses.replace(outcome, **changes)  # type: ignore[arg-type]
