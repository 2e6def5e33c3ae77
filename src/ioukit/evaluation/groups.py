"""Stage 2 of the pipeline: rows of both datasets grouped by (image, class), computed once.

The order is pycocotools' and every later stage relies on it:

* ground-truth rows: stable sort by (image rank, class row): within a group, file order;
* prediction rows: stable sort by (image rank, class row, descending score) with
  ``use_cats=True``, by (image rank, descending score, class row) with ``use_cats=False``;
  ties in score keep file order;
* image rank: position of the image's id among the sorted image ids (pycocotools iterates
  ``sorted(imgIds)``); class row: position of the category id among the sorted category ids of
  the ground truth. Predictions and ground truths of unknown categories are left out.

A group is one (image, class) pair, or one image with ``use_cats=False``. Only the first
``max_det`` predictions of each group are evaluated (``kept``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ioukit._kernels import match as kernels
from ioukit.dataset import Dataset
from ioukit.errors import ParameterError

__all__ = ["GroupMatrices", "Groups", "Similarity", "class_rows", "stable_key_order"]


@dataclass(frozen=True, slots=True, eq=False)
class GroupMatrices:
    """Every group's similarity matrix, flat.

    Attributes
    ----------
    values : ndarray of float64, shape (sum of P_i * G_i,)
    offsets : ndarray of int64, shape (n_groups,)
        Group ``i``'s matrix [P_i, G_i] is ``values[offsets[i]:offsets[i] + P_i * G_i]``
        row-major (P_i = ``groups.kept_count[i]``, G_i = ``groups.gt_count[i]``; empty when
        either is 0).
    """

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def allocate(cls, groups: Groups) -> GroupMatrices:
        """Zeros laid out for ``groups`` (for similarities that fill matrices in place)."""
        g_count = groups.gt_count
        sizes = np.where(g_count > 0, groups.kept_count * g_count, 0)
        offsets = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        return cls(np.zeros(int(sizes.sum()), dtype=np.float64), offsets)

    def matrix(self, groups: Groups, i: int) -> np.ndarray:
        """Group ``i``'s matrix [P_i, G_i] (a view)."""
        p, g = int(groups.kept_count[i]), int(groups.gt_count[i])
        if p == 0 or g == 0:
            return np.zeros((p, g))
        start = int(self.offsets[i])
        return self.values[start : start + p * g].reshape(p, g)


@runtime_checkable
class Similarity(Protocol):
    """What the pipeline needs from a similarity: every group's matrix [P_i, G_i]."""

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Similarity matrices of every group of ``groups`` (see :class:`GroupMatrices`)."""
        ...


def class_rows(category_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row of each id in the sorted ``category_ids`` (int64); -1 for ids not in it.

    Parameters
    ----------
    category_ids : ndarray of int64, shape (K,)
        Sorted, unique.
    ids : ndarray of int64, shape (N,)

    Examples
    --------
    >>> class_rows(np.array([3, 7]), np.array([7, 5, 3])).tolist()
    [1, -1, 0]
    """
    ids = np.asarray(ids, dtype=np.int64)
    if category_ids.size == 0:
        return np.full(ids.shape, -1, dtype=np.int64)
    low, high = int(category_ids[0]), int(category_ids[-1])
    if ids.size > 64 and high - low <= 4 * ids.size + 1024 and low > -(2**62) and high < 2**62:
        # small id range: one lookup table, one gather (no binary search per id)
        table = np.full(high - low + 3, -1, dtype=np.int64)  # [0]: below, [-1]: above
        table[category_ids - low + 1] = np.arange(category_ids.size)
        return np.asarray(table[np.clip(ids, low - 1, high + 1) - (low - 1)])
    rows = np.minimum(np.searchsorted(category_ids, ids), category_ids.size - 1)
    return np.where(category_ids[rows] == ids, rows, -1).astype(np.int64)


def stable_key_order(*keys: tuple[np.ndarray, int]) -> np.ndarray:
    """Permutation sorting rows by ``keys`` (the first most significant), ties in row order.

    Each key is ``(values, n)`` with integer ``values`` in ``[0, n)``. The same permutation as
    ``np.argsort`` of the combined key with ``kind="stable"`` (or ``np.lexsort``), computed as
    a least-significant-first radix sort: one counting pass per key (compiled
    ``ioukit._kernels.match.counting_order``), linear in rows + ``n``.

    Parameters
    ----------
    *keys : tuple of (ndarray of int, shape (N,), int)

    Returns
    -------
    ndarray of int64, shape (N,)

    Examples
    --------
    >>> stable_key_order((np.array([1, 0, 1, 0]), 2), (np.array([0, 1, 0, 0]), 2)).tolist()
    [3, 1, 0, 2]
    """

    if not keys:
        raise ValueError("keys: expected at least one (values, n) pair, got none")
    n = len(keys[0][0])
    order = np.arange(n, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    for values, n_keys in reversed(keys):
        counts = np.empty(int(n_keys) + 1, dtype=np.int64)
        kernels.counting_order(
            np.ascontiguousarray(values, dtype=np.int64), int(n_keys), order, out, counts
        )
        order, out = out, order
    return order


def _dense_rank(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense rank of each score, descending (0: highest; equal scores share a rank), and the
    number of ranks (at least 1): compiled radix sort, NumPy's sort when a score is NaN."""

    scores = np.ascontiguousarray(scores, dtype=np.float64)
    dense = np.empty(len(scores), dtype=np.int64)
    if not np.isnan(scores).any():
        return dense, int(kernels.dense_score_rank(scores, dense))
    by_score = np.argsort(-scores)  # ties share a rank: any order of them will do
    sorted_scores = scores[by_score]
    dense[by_score] = np.cumsum(np.r_[False, sorted_scores[1:] != sorted_scores[:-1]])
    return dense, int(dense.max()) + 1 if len(dense) else 1


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, start of each value's run) of a sorted array."""
    if sorted_keys.size == 0:
        return sorted_keys, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    return sorted_keys[starts], starts


def _bounds(
    values: np.ndarray, starts: np.ndarray, n: int, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``searchsorted(keys, groups, "left"/"right")`` for sorted ``keys`` of length ``n``
    given as their runs (binary search over the distinct values only)."""
    j = np.searchsorted(values, groups)
    start_ext = np.append(starts, n).astype(np.int64)
    end_ext = np.append(starts[1:], [n, n]).astype(np.int64)
    start = start_ext[j]
    present = np.zeros(len(groups), dtype=bool)
    inside = j < len(values)
    present[inside] = values[j[inside]] == groups[inside]
    return start, np.where(present, end_ext[j], start)


def _sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # two sorted runs: the stable sort merges them in linear time
    both = np.sort(np.concatenate([a, b]), kind="stable")
    if both.size == 0:
        return both
    return both[np.r_[True, both[1:] != both[:-1]]]


@dataclass(frozen=True, slots=True, eq=False)
class Groups:
    """Both datasets' rows in group order, with each group's ranges.

    Attributes
    ----------
    category_ids : ndarray of int64, shape (K,)
        Sorted category ids of the ground truth; class row ``k`` is ``category_ids[k]``.
    use_cats : bool
        False: one group per image (class-agnostic); classes are still recorded per row.
    max_det : int
        Predictions evaluated per group (the first ``max_det`` in group order).
    image_rank : ndarray of int64, shape (I,)
        Rank of each image (row of the image table) by image id.
    gt_rows : ndarray of int64, shape (G,)
        Ground-truth rows (into the ground-truth dataset) in group order.
    gt_class : ndarray of int32, shape (G,)
        Their class rows.
    pred_rows : ndarray of int64, shape (P,)
        Prediction rows in group order.
    pred_class : ndarray of int32, shape (P,)
        Their class rows.
    pred_dense : ndarray of int32, shape (P,)
        Dense rank of the prediction's score, 0 for the highest (equal scores share a rank).
    n_dense : int
        Number of distinct scores (at least 1).
    keys : ndarray of int64, shape (n_groups,)
        Group keys, ascending: ``image_rank * K + class`` (``image_rank`` without classes).
    gt_start, gt_end, pred_start, pred_end : ndarray of int64, shape (n_groups,)
        Group ``i`` holds ``gt_rows[gt_start[i]:gt_end[i]]`` and
        ``pred_rows[pred_start[i]:pred_end[i]]``.
    rank : ndarray of int32, shape (P,)
        Each prediction's position inside its group (0 = highest score).

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([2, 1], ["b", "a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1], [0, 0, 2, 2]],
    ...                          image_index=[0, 1], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]] * 3,
    ...                            image_index=[0, 0, 1], category_id=[1, 1, 1],
    ...                            scores=[0.5, 0.9, 0.7])
    >>> g = Groups.build(gt, pred, max_det=1)
    >>> g.n_groups, g.gt_rows.tolist(), g.pred_rows.tolist(), g.kept_count.tolist()
    (2, [1, 0], [2, 1, 0], [1, 1])
    """

    category_ids: np.ndarray
    use_cats: bool
    max_det: int
    image_rank: np.ndarray
    gt_rows: np.ndarray
    gt_class: np.ndarray
    pred_rows: np.ndarray
    pred_class: np.ndarray
    pred_dense: np.ndarray
    n_dense: int
    keys: np.ndarray
    gt_start: np.ndarray
    gt_end: np.ndarray
    pred_start: np.ndarray
    pred_end: np.ndarray
    rank: np.ndarray

    @classmethod
    def build(
        cls,
        gt: Dataset,
        pred: Dataset,
        /,
        *,
        use_cats: bool = True,
        max_det: int = 100,
        pooled_order: str = "class",
        gt_keep: np.ndarray | None = None,
        pred_keep: np.ndarray | None = None,
    ) -> Groups:
        """Group ``gt`` and ``pred`` (which share an image table) by (image, class).

        Parameters
        ----------
        gt, pred : Dataset
            Ground truth and predictions (``pred.scores`` present).
        use_cats : bool
            False: group by image only.
        max_det : int
            Predictions evaluated per group.
        pooled_order : {"class", "file"}
            With ``use_cats=False``: a group's rows ordered by class first (pycocotools, which
            concatenates the classes) or in file order (Ultralytics' class-agnostic
            confusion matrix); equal scores then keep that order.
        gt_keep, pred_keep : ndarray of bool, shape (len(gt),) / (len(pred),), optional
            Only these rows take part (as if the others were absent); row numbers stay
            those of ``gt`` and ``pred``.
        """

        if pooled_order not in ("class", "file"):
            raise ParameterError(f"pooled_order: expected 'class' or 'file', got {pooled_order!r}")
        by_file = not use_cats and pooled_order == "file"
        cat_ids = np.sort(gt.categories.ids)  # unique already; np.unique imports numpy.ma
        n_cats = len(cat_ids)
        ids = gt.images.ids
        image_rank = np.empty(len(ids), dtype=np.int64)
        image_rank[np.argsort(ids, kind="stable")] = np.arange(len(ids))

        # each temporary is freed as soon as its successor exists (at 80 000 images a column
        # is 11 MB: what this stage leaves in the heap, the later stages find there)
        g_cls = class_rows(cat_ids, gt.category_id)
        g_ok = g_cls >= 0
        g_rows = np.flatnonzero(g_ok if gt_keep is None else g_ok & gt_keep)
        del g_ok
        g_cls = g_cls[g_rows]
        g_img = image_rank[gt.image_index[g_rows]]
        n_img = len(ids)
        if by_file:
            g_order = stable_key_order((g_img, n_img))
        else:
            g_order = stable_key_order((g_img, n_img), (g_cls, max(n_cats, 1)))
        g_rows, g_cls, g_img = g_rows[g_order], g_cls[g_order], g_img[g_order]
        del g_order
        if use_cats:
            g_img *= n_cats
            g_img += g_cls
        g_key = g_img  # image_rank * n_cats + class (image_rank without classes)
        del g_img
        g_cls = g_cls.astype(np.int32)  # class rows < 2**31: half the bytes of int64

        p_cls = class_rows(cat_ids, pred.category_id)
        p_ok = p_cls >= 0
        p_rows = np.flatnonzero(p_ok if pred_keep is None else p_ok & pred_keep)
        del p_ok
        p_cls = p_cls[p_rows]
        scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
        # dense rank of -score (equal scores share a rank): the group order is counting passes
        dense, n_dense = _dense_rank(scores[p_rows])
        p_img = image_rank[pred.image_index[p_rows]]
        # one counting pass per key (least significant first) instead of a comparison sort
        if use_cats:
            p_order = stable_key_order((p_img, n_img), (p_cls, n_cats), (dense, n_dense))
        elif by_file:
            p_order = stable_key_order((p_img, n_img), (dense, n_dense))
        else:
            p_order = stable_key_order((p_img, n_img), (dense, n_dense), (p_cls, max(n_cats, 1)))
        p_rows = p_rows[p_order]
        p_cls = p_cls[p_order]
        dense = dense[p_order]
        p_img = p_img[p_order]
        del p_order
        if use_cats:
            p_img *= n_cats
            p_img += p_cls
        p_key = p_img
        del p_img
        p_cls = p_cls.astype(np.int32)
        dense = dense.astype(np.int32)  # ranks < 2**31 (one per prediction at most)

        # one linear merge of the two sorted key columns (as _runs/_sorted_union/_bounds)
        keys, gt_start, gt_end, pred_start, pred_end = kernels.merge_group_keys(
            np.ascontiguousarray(g_key, dtype=np.int64), np.ascontiguousarray(p_key, dtype=np.int64)
        )
        del g_key, p_key
        rank = np.arange(len(p_rows), dtype=np.int32)
        rank -= np.repeat(pred_start, pred_end - pred_start).astype(np.int32)
        return cls(
            category_ids=cat_ids,
            use_cats=bool(use_cats),
            max_det=int(max_det),
            image_rank=image_rank,
            gt_rows=g_rows,
            gt_class=g_cls,
            pred_rows=p_rows,
            pred_class=p_cls,
            pred_dense=dense,
            n_dense=n_dense,
            keys=keys,
            gt_start=gt_start,
            gt_end=gt_end,
            pred_start=pred_start,
            pred_end=pred_end,
            rank=rank,
        )

    @property
    def n_groups(self) -> int:
        """Number of (image, class) groups holding a ground truth or a prediction."""
        return int(self.keys.shape[0])

    @property
    def gt_count(self) -> np.ndarray:
        """(n_groups,) ground truths per group."""
        return np.asarray(self.gt_end - self.gt_start)

    @property
    def kept_count(self) -> np.ndarray:
        """(n_groups,) evaluated predictions per group: ``min(count, max_det)``."""
        return np.asarray(np.minimum(self.pred_end - self.pred_start, self.max_det))

    @property
    def kept(self) -> np.ndarray:
        """Positions (into ``pred_rows``) of the evaluated predictions, in group order."""
        return np.asarray(np.flatnonzero(self.rank < self.max_det))
