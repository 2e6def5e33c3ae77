"""Label-error candidates: where the evaluation's own match suggests the ground truth is wrong.

Read from the match at ``iou_threshold`` (area range ``"all"``, the detections the protocol
keeps: within its last ``max_dets``, not ignored), three kinds, all ranked together by the
prediction's score (highest first):

``wrong_label``
    A false positive whose box overlaps (box IoU >= ``overlap``, default 0.5) a regular
    ground truth of **another class** that no prediction of its own class matched: the
    object is probably of the predicted class (the ground truth that overlaps most is named).
``missing_annotation``
    A false positive far from every ground truth of its image, any class, crowds included
    (box IoU < ``far``, default 0.1): probably an object nobody annotated.
``loose_box``
    A true positive whose IoU lies in ``[iou_threshold, loose)`` (default ``[0.5, 0.6)``) on a
    large object (ground-truth ``area`` above ``large_area``, COCO's 96²): a confident, poorly
    fitting match on a big object usually means the annotated box is loose (or tight).

These are candidates to look at, not verdicts: a detector's own mistakes (a confident false
positive on the background, a wrong class on a clear object) look the same. Their precision
on planted errors is measured in the tests (``tests/analysis/test_label_errors.py``).

Examples
--------
>>> from ioukit import evaluate
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images = ImageTable.from_lists([1], ["a"], [200], [200])
>>> cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
...                          category_id=[1])
>>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [100, 100, 150, 150]],
...                            image_index=[0, 0], category_id=[2, 1], scores=[0.9, 0.8])
>>> [(c["kind"], c["score"]) for c in label_errors(evaluate(gt, pred)).rows()]
[('wrong_label', 0.9), ('missing_annotation', 0.8)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit.errors import ParameterError
from ioukit.evaluation.outcome import (
    FALSE_POSITIVE,
    TRUE_POSITIVE,
    counted_at,
    kept_outcome,
    threshold_index,
)
from ioukit.overlap import box_iou_elementwise

if TYPE_CHECKING:
    from ioukit.analysis.result import EvaluationResult

__all__ = ["COLUMNS", "KINDS", "LabelErrors", "label_errors"]

KINDS = ("wrong_label", "missing_annotation", "loose_box")
"""The kinds of candidate, in the order they are tested."""

COLUMNS = (
    "rank",
    "kind",
    "image_id",
    "file_name",
    "prediction_row",
    "prediction_id",
    "gt_annotation_id",
    "pred_category_id",
    "gt_category_id",
    "score",
    "iou",
)
"""Columns of :meth:`LabelErrors.rows` (and of the CSV)."""


@dataclass(frozen=True, slots=True, eq=False)
class LabelErrors:
    """Ranked label-error candidates (N of them), columnar.

    Attributes
    ----------
    kind : tuple of str, length N
        One of :data:`KINDS`.
    image_id : ndarray of int64, shape (N,)
    file_name : tuple of str, length N
        The image's file stem.
    prediction_row : ndarray of int64, shape (N,)
        Row of the prediction in ``result.predictions``.
    prediction_id : ndarray of int64, shape (N,)
        The prediction's annotation id.
    gt_row : ndarray of int64, shape (N,)
        Row of the ground truth in ``result.ground_truth``; -1 for ``missing_annotation``.
    gt_annotation_id : ndarray of int64, shape (N,)
        -1 for ``missing_annotation``.
    pred_category_id, gt_category_id : ndarray of int64, shape (N,)
        ``gt_category_id`` -1 for ``missing_annotation``.
    score : ndarray of float64, shape (N,)
    iou : ndarray of float64, shape (N,)
        Box IoU with the named ground truth (``missing_annotation``: the largest IoU with
        any ground truth of the image).
    counts : dict of str to int
        Candidates of each kind before the cut to ``n``.
    """

    kind: tuple[str, ...]
    image_id: np.ndarray
    file_name: tuple[str, ...]
    prediction_row: np.ndarray
    prediction_id: np.ndarray
    gt_row: np.ndarray
    gt_annotation_id: np.ndarray
    pred_category_id: np.ndarray
    gt_category_id: np.ndarray
    score: np.ndarray
    iou: np.ndarray
    counts: dict[str, int]

    def __len__(self) -> int:
        return len(self.kind)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per candidate, keys :data:`COLUMNS` (rank 1 first)."""
        return [
            {
                "rank": i + 1,
                "kind": self.kind[i],
                "image_id": int(self.image_id[i]),
                "file_name": self.file_name[i],
                "prediction_row": int(self.prediction_row[i]),
                "prediction_id": int(self.prediction_id[i]),
                "gt_annotation_id": int(self.gt_annotation_id[i]),
                "pred_category_id": int(self.pred_category_id[i]),
                "gt_category_id": int(self.gt_category_id[i]),
                "score": float(self.score[i]),
                "iou": float(self.iou[i]),
            }
            for i in range(len(self))
        ]

    def csv_bytes(self) -> bytes:
        """The candidates as UTF-8 CSV with the header :data:`COLUMNS` (also when empty);
        text cells that a spreadsheet would run as a formula are quoted with ``'``."""
        lines = [",".join(COLUMNS)]
        for row in self.rows():
            cells = []
            for c in COLUMNS:
                text = str(row[c])
                if c == "file_name":
                    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
                        text = "'" + text
                    if any(ch in text for ch in ',"\r\n'):
                        text = '"' + text.replace('"', '""') + '"'
                cells.append(text)
            lines.append(",".join(cells))
        return ("\n".join(lines) + "\n").encode("utf-8")

    def table(self, n: int = 20) -> str:
        """Aligned text of the first ``n`` candidates."""
        lines = [f"{'rank':>4} {'kind':<18} {'image':>10} {'score':>6} {'iou':>6}  classes"]
        for r in self.rows()[:n]:
            classes = f"{r['pred_category_id']}" + (
                f" vs gt {r['gt_category_id']}" if r["gt_category_id"] >= 0 else ""
            )
            lines.append(
                f"{r['rank']:>4} {r['kind']:<18} {r['image_id']:>10} {r['score']:6.3f} "
                f"{r['iou']:6.3f}  {classes}"
            )
        return "\n".join(lines)


def _check_fraction(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ParameterError(f"{name}: expected a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ParameterError(f"{name}: expected a number in [0, 1], got {value!r}")
    return float(value)


_DIRECT = (2.0**-300, 2.0**400)
"""Coordinate magnitudes (besides 0) whose IoU arithmetic cannot overflow or underflow: inside
the range where :func:`~ioukit.overlap.box_iou_elementwise` computes directly too."""


def _far_from_one(boxes: np.ndarray) -> np.ndarray:
    # (N,) bool: a non-zero coordinate outside _DIRECT
    magnitude = np.abs(boxes)
    return np.asarray(
        ((magnitude > _DIRECT[1]) | ((magnitude < _DIRECT[0]) & (magnitude > 0))).any(axis=1)
    )


def _pairs_in_images(
    pred: Any, gt: Any, p_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (prediction, ground truth) pair of one image and its box IoU.

    ``i`` indexes ``p_rows`` (increasing), ``j`` the ground-truth rows (in row order within an
    image): the pairs of :func:`~ioukit.analysis.diagnostics.pairwise_in_groups`, found from
    per-image offsets instead of a search. The IoU is
    :func:`~ioukit.overlap.box_iou_elementwise`'s arithmetic, operation for operation (the
    same bits), on coordinates gathered per pair; the boxes whose coordinates that arithmetic
    could overflow or underflow are recomputed by it.
    """
    n_images = len(gt.images)
    g_count = np.bincount(gt.image_index, minlength=n_images)
    g_start = np.cumsum(g_count) - g_count
    g_order = np.argsort(gt.image_index, kind="stable")
    image = pred.image_index[p_rows]
    count = g_count[image]
    total = int(count.sum())
    i = np.repeat(np.arange(len(p_rows), dtype=np.int64), count)
    offsets = np.cumsum(count) - count
    within = np.arange(total, dtype=np.int64) - np.repeat(offsets, count)
    j = g_order[np.repeat(g_start[image], count) + within].astype(np.int64)
    a, b = np.asarray(pred.boxes)[p_rows], np.asarray(gt.boxes)
    if a.dtype != np.float64 or b.dtype != np.float64:  # another dtype's arithmetic: its own
        return i, j, np.asarray(box_iou_elementwise(a[i], b[j]), dtype=np.float64)
    ax1, ay1, ax2, ay2 = (np.ascontiguousarray(a[:, k]) for k in range(4))
    bx1, by1, bx2, by2 = (np.ascontiguousarray(b[:, k]) for k in range(4))
    area_a = (ax2 - ax1) * (ay2 - ay1)
    area_b = (bx2 - bx1) * (by2 - by1)
    width = np.minimum(np.repeat(ax2, count), bx2[j])
    width -= np.maximum(np.repeat(ax1, count), bx1[j])
    np.maximum(width, 0.0, out=width)
    height = np.minimum(np.repeat(ay2, count), by2[j])
    height -= np.maximum(np.repeat(ay1, count), by1[j])
    np.maximum(height, 0.0, out=height)
    inter = np.multiply(width, height, out=width)
    union = np.repeat(area_a, count)
    union += area_b[j]
    union -= inter
    union[union <= 0] = 1.0
    iou = np.divide(inter, union, out=inter)
    iou += 0.0  # -0.0 (an empty overlap) as 0.0
    bad = _far_from_one(a)[i] | _far_from_one(b)[j]
    if bad.any():
        iou[bad] = np.asarray(box_iou_elementwise(a[i[bad]], b[j[bad]]), dtype=np.float64)
    return i, j, iou


def label_errors(
    result: EvaluationResult,
    /,
    *,
    n: int | None = 100,
    iou_threshold: float = 0.5,
    overlap: float = 0.5,
    far: float = 0.1,
    loose: float = 0.6,
    large_area: float = 96.0**2,
    kinds: tuple[str, ...] = KINDS,
) -> LabelErrors:
    """Label-error candidates of an evaluation, ranked by score (see the module docstring).

    Parameters
    ----------
    result : EvaluationResult
        An evaluation that keeps its match (``result.outcome``).
    n : int or None
        Keep the ``n`` best-scored candidates (None: all).
    iou_threshold : float
        The match read (one of the evaluation's thresholds).
    overlap : float
        ``wrong_label``: least box IoU with the other class's ground truth.
    far : float
        ``missing_annotation``: every ground truth of the image below this box IoU.
    loose : float
        ``loose_box``: matched IoU below this.
    large_area : float
        ``loose_box``: ground-truth ``area`` above this.
    kinds : tuple of str
        The kinds to look for (default all of :data:`KINDS`).

    Returns
    -------
    LabelErrors

    Raises
    ------
    ParameterError
        A result without an outcome, a threshold it does not hold, ``n`` not a positive
        integer, a fraction outside [0, 1] or an unknown kind.
    """
    if n is not None and (isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1):
        raise ParameterError(f"n: expected a positive integer or None, got {n!r}")
    overlap = _check_fraction(overlap, "overlap")
    far = _check_fraction(far, "far")
    loose = _check_fraction(loose, "loose")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or isinstance(kinds, str):
        raise ParameterError(f"kinds: expected names from {list(KINDS)}, got {kinds!r}")
    o = kept_outcome(result.outcome, result.protocol, "label errors read")
    t_at = threshold_index(o.thresholds, float(iou_threshold))
    if t_at is None or "all" not in o.area_names:
        raise ParameterError(
            f"iou_threshold: expected one of the evaluation's thresholds "
            f"{np.asarray(o.thresholds).tolist()} (area range 'all'), got {iou_threshold!r}"
        )
    t, a = t_at, o.area_names.index("all")
    gt, pred = result.ground_truth, result.predictions
    status, keep = counted_at(o, t, a, result.params.get("max_dets"))
    matched = o.matched_gt_at(t)
    iou = o.iou_at(t)
    records = np.flatnonzero(keep)
    rows = np.asarray(o.pred_row)[records]
    st = status[records]
    tp_gt = matched[records][st == TRUE_POSITIVE]
    taken = np.zeros(len(gt), dtype=bool)
    taken[tp_gt[tp_gt >= 0]] = True
    regular = ~(gt.crowd | gt.ignore | gt.difficult)

    found: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []  # kind, rec, gt row, iou
    fp = np.flatnonzero(st == FALSE_POSITIVE)
    if len(fp) and ("wrong_label" in kinds or "missing_annotation" in kinds):
        p_rows = rows[fp]
        i, j, pair_iou = _pairs_in_images(pred, gt, p_rows)
        # per false positive the largest IoU with a ground truth of its image (0 without)
        best_any = np.zeros(len(fp))
        if len(i):
            firsts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
            best_any[i[firsts]] = np.maximum(0.0, np.maximum.reduceat(pair_iou, firsts))
        if "missing_annotation" in kinds:
            lone = np.flatnonzero(best_any < far)
            found.append(
                ("missing_annotation", fp[lone], np.full(len(lone), -1, np.int64), best_any[lone])
            )
        if "wrong_label" in kinds:
            other = pair_iou >= overlap  # the cheap test first: few pairs overlap that much
            at = np.flatnonzero(other)
            other[at] = (
                (gt.category_id[j[at]] != pred.category_id[p_rows[i[at]]])
                & regular[j[at]]
                & ~taken[j[at]]
            )
            i2, j2, v2 = i[other], j[other], pair_iou[other]
            # per false positive the overlapping ground truth of highest IoU (first on ties)
            order = np.lexsort((-v2, i2))
            first = order[np.r_[True, i2[order][1:] != i2[order][:-1]]] if len(order) else order
            found.append(("wrong_label", fp[i2[first]], j2[first], v2[first]))
    if "loose_box" in kinds:
        tp = np.flatnonzero(st == TRUE_POSITIVE)
        g = matched[records][tp]
        v = iou[records][tp]
        hit = (v >= float(iou_threshold)) & (v < loose) & (gt.area[g] > float(large_area))
        found.append(("loose_box", tp[hit], g[hit], v[hit]))

    counts = {k: 0 for k in kinds}
    for kind, rec, _, _ in found:
        counts[kind] = len(rec)
    kind_col = np.concatenate(
        [np.full(len(f[1]), KINDS.index(f[0]), dtype=np.int64) for f in found]
        or [np.zeros(0, np.int64)]
    )
    rec_col = np.concatenate([f[1] for f in found] or [np.zeros(0, np.int64)]).astype(np.int64)
    gt_col = np.concatenate([f[2] for f in found] or [np.zeros(0, np.int64)]).astype(np.int64)
    iou_col = np.concatenate([f[3] for f in found] or [np.zeros(0)]).astype(np.float64)
    p_rows = rows[rec_col]
    score = np.asarray(pred.scores, dtype=np.float64)[p_rows]
    # rank: score (highest first), then kind, image id, prediction row: a stable, total order
    image_ids = gt.images.ids[pred.image_index[p_rows]]
    order = np.lexsort((p_rows, image_ids, kind_col, -score))
    if n is not None:
        order = order[: int(n)]
    p_rows, gt_col, kind_col = p_rows[order], gt_col[order], kind_col[order]
    has_gt = gt_col >= 0
    gt_ann = np.full(len(gt_col), -1, dtype=np.int64)
    gt_cat = np.full(len(gt_col), -1, dtype=np.int64)
    gt_ann[has_gt] = gt.annotation_id[gt_col[has_gt]]
    gt_cat[has_gt] = gt.category_id[gt_col[has_gt]]
    stems = gt.images.stems
    image_row = pred.image_index[p_rows]
    return LabelErrors(
        kind=tuple(KINDS[k] for k in kind_col.tolist()),
        image_id=gt.images.ids[image_row].astype(np.int64),
        file_name=tuple(str(stems[r]) for r in image_row.tolist()),
        prediction_row=p_rows.astype(np.int64),
        prediction_id=pred.annotation_id[p_rows].astype(np.int64),
        gt_row=gt_col,
        gt_annotation_id=gt_ann,
        pred_category_id=pred.category_id[p_rows].astype(np.int64),
        gt_category_id=gt_cat,
        score=score[order],
        iou=iou_col[order],
        counts=counts,
    )
