"""Per-image metrics: which images are worst, from the one COCO match.

For every image of the ground truth: regular ground truths, predictions with
``score >= score_threshold`` (inclusive; at most ``max_dets`` per class, as evaluated), their
true / false positives and the missed ground truths at ``iou_threshold``, the image's AP (the
COCO 101-point AP of each class with ground truth in the image, averaged; NaN when the image
has no ground truth) and the mean IoU of its true positives (NaN without one).

Predictions matched to crowd or ignored ground truths count as neither TP nor FP, as in the
evaluation. COCO matching is greedy in descending score, so counts at any score threshold are
those of the full evaluation restricted to the kept predictions, and summed over images they
equal the dataset totals."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.pairing import IGNORED, TRUE_POSITIVE, coco_outcome, resolve_pair
from ioukit.report import write_csv

__all__ = ["PerImageTable", "per_image"]


COLUMNS = (
    "image_id",
    "file_name",
    "num_gt",
    "num_pred",
    "tp",
    "fp",
    "fn",
    "precision",
    "recall",
    "ap",
    "mean_iou",
)


_RECALL = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True, slots=True, eq=False)
class PerImageTable:
    """One row per image; columns are arrays of equal length (see :data:`COLUMNS`).

    Attributes
    ----------
    columns : dict of str to ndarray
        ``image_id`` (int64), ``file_name`` (object: the image's file stem), ``num_gt``,
        ``num_pred``, ``tp``, ``fp``, ``fn`` (int64), ``precision``, ``recall``, ``ap``,
        ``mean_iou`` (float64, NaN where undefined).
    iou_threshold, score_threshold : float

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1, 2], ["a", "b"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [0, 0, 10, 10]],
    ...                          image_index=[0, 1], category_id=[1, 1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> t = per_image(gt, pred)
    >>> t.columns["tp"].tolist(), t.columns["fn"].tolist(), t.worst(1)[0]["file_name"]
    ([1, 0], [0, 1], 'b')
    """

    columns: dict[str, np.ndarray]
    iou_threshold: float
    score_threshold: float

    def __len__(self) -> int:
        return len(self.columns["image_id"])

    def rows(self) -> list[dict[str, Any]]:
        """The table as a list of plain dicts (NaN stays NaN)."""
        return [
            {
                name: self.columns[name][i].item() if name != "file_name" else self.columns[name][i]
                for name in COLUMNS
            }
            for i in range(len(self))
        ]

    def sort_by(self, column: str, *, descending: bool = False) -> PerImageTable:
        """A copy sorted by ``column`` (stable; NaN last)."""
        if column not in self.columns:
            raise ParameterError(f"column: expected one of {', '.join(COLUMNS)}, got {column!r}")
        values = self.columns[column]
        if values.dtype == object:
            order = np.argsort(values.astype(str), kind="stable")
            if descending:
                order = order[::-1]
        else:
            v = values.astype(np.float64)
            nan = np.isnan(v)
            key = np.where(nan, 0.0, -v if descending else v)
            order = np.lexsort((key, nan))
        return PerImageTable(
            {k: v[order] for k, v in self.columns.items()}, self.iou_threshold, self.score_threshold
        )

    def worst(self, n: int = 10) -> list[dict[str, Any]]:
        """The ``n`` images with the lowest AP (then most errors), images without ground
        truth last."""
        c = self.columns
        ap = c["ap"]
        errors = c["fp"] + c["fn"]
        order = np.lexsort((-errors, np.where(np.isnan(ap), np.inf, ap)))
        rows = self.rows()
        return [rows[i] for i in order[: max(int(n), 0)]]

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the table as CSV (header :data:`COLUMNS`; NaN as an empty cell), atomically."""

        write_csv(path, self.rows())


def _group_ap(hits: np.ndarray, start: np.ndarray, end: np.ndarray, npos: np.ndarray) -> np.ndarray:
    """COCO 101-point AP of many small groups at once (pycocotools' arithmetic).

    Group ``i``'s predictions are ``hits[start[i]:end[i]]`` (True positive or not, in
    accumulation order) and it has ``npos[i]`` ground truths; 0 for a group without
    predictions.

    Examples
    --------
    >>> hits = np.array([True, False, True, False, True])
    >>> round(float(_group_ap(hits, np.array([0]), np.array([5]), np.array([3]))[0]), 7)
    0.7564356
    """
    n_g = len(start)
    size = end - start
    out = np.zeros(n_g)
    total = int(size.sum())
    if total == 0:
        return out
    seg = np.repeat(np.arange(n_g), size)
    first = np.cumsum(size) - size  # segment starts in the packed arrays
    local = np.arange(total) - first[seg]
    h = hits[start[seg] + local]
    tps_all = np.cumsum(h)
    before = np.where(first > 0, tps_all[np.maximum(first - 1, 0)], 0)[seg]
    tps = (tps_all - before).astype(float)
    fps = (local + 1) - tps
    rc = tps / npos[seg]
    env = tps / (fps + tps + np.spacing(1))
    # right-to-left running maximum inside each segment, exact: doubling steps
    step = 1
    longest = int(size.max())
    while step < longest:
        ahead = np.arange(total) + step
        same = (ahead < total) & (seg[np.minimum(ahead, total - 1)] == seg)
        env = np.where(same, np.maximum(env, env[np.minimum(ahead, total - 1)]), env)
        step *= 2
    # sample at the first prediction whose recall is >= r (searchsorted "left")
    for r in _RECALL:
        below = np.bincount(seg, weights=rc < r, minlength=n_g).astype(np.int64)
        ok = below < size
        out[ok] += env[first[ok] + below[ok]]
    return out / len(_RECALL)


def per_image(
    gt: Any,
    predictions: Dataset | None = None,
    /,
    *,
    iou_threshold: float = 0.5,
    score_threshold: float = 0.0,
    max_dets: int = 100,
    iou_type: str | None = None,
) -> PerImageTable:
    """Per-image TP/FP/FN, precision, recall, AP and mean matched IoU.

    Parameters
    ----------
    gt : Dataset or EvaluationResult
        Ground truth (then ``predictions`` is required) or an evaluation result.
    predictions : Dataset, optional
    iou_threshold : float
        Match threshold (``IoU >= iou_threshold``).
    score_threshold : float
        Predictions with ``score >= score_threshold`` count (the image AP uses all of them).
    max_dets : int
        Predictions evaluated per image and class.
    iou_type : {"bbox", "segm"}, optional
        Default: the evaluation result's, else ``"bbox"``.

    Returns
    -------
    PerImageTable
    """
    gt_ds, pred_ds, kind, outcome = resolve_pair(gt, predictions, iou_type)
    s_thr = float(score_threshold)
    if np.isnan(s_thr):
        raise ParameterError("score_threshold: expected a number, got nan")
    t = coco_outcome(
        gt_ds, pred_ds, iou_threshold=iou_threshold, max_dets=max_dets, iou_type=kind, reuse=outcome
    )
    n_img = len(gt_ds.images)
    status = t.status[:, 0]
    kept = (t.pred_score >= s_thr) & (status != IGNORED)
    tp = kept & (status == TRUE_POSITIVE)
    fp = kept & ~tp
    regular = t.gt_regular[:, 0]
    num_gt = np.bincount(t.gt_image[regular], minlength=n_img)
    n_tp = np.bincount(t.pred_image[tp], minlength=n_img)
    n_fp = np.bincount(t.pred_image[fp], minlength=n_img)
    n_pred = np.bincount(t.pred_image[kept], minlength=n_img)
    iou_sum = np.bincount(t.pred_image[tp], weights=t.match_iou[tp, 0], minlength=n_img)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_iou = np.where(n_tp > 0, iou_sum / np.maximum(n_tp, 1), np.nan)
        precision = np.where(n_pred > 0, n_tp / np.maximum(n_pred, 1), np.nan)
        recall = np.where(num_gt > 0, n_tp / np.maximum(num_gt, 1), np.nan)

    # image AP: per (image, class) with ground truth, COCO 101-point, then the image mean
    counted = status != IGNORED
    n_k = max(len(t.cat_ids), 1)
    key_p = t.pred_image[counted] * n_k + t.pred_class[counted]
    hits_p = (status == TRUE_POSITIVE)[counted]
    order = np.argsort(key_p, kind="stable")  # accumulation order kept inside each group
    key_p, hits_p = key_p[order], hits_p[order]
    key_g = t.gt_image[regular] * n_k + t.gt_class[regular]
    groups, npos = np.unique(key_g, return_counts=True)
    start = np.searchsorted(key_p, groups, side="left")
    end = np.searchsorted(key_p, groups, side="right")
    ap_sum = np.zeros(n_img)
    ap_n = np.bincount(groups // n_k, minlength=n_img).astype(np.float64)
    group_ap = _group_ap(hits_p, start, end, npos)
    np.add.at(ap_sum, groups // n_k, group_ap)
    with np.errstate(divide="ignore", invalid="ignore"):
        ap = np.where(ap_n > 0, ap_sum / np.maximum(ap_n, 1), np.nan)
    columns = {
        "image_id": gt_ds.images.ids.astype(np.int64),
        "file_name": np.array(gt_ds.images.stems, dtype=object),
        "num_gt": num_gt.astype(np.int64),
        "num_pred": n_pred.astype(np.int64),
        "tp": n_tp.astype(np.int64),
        "fp": n_fp.astype(np.int64),
        "fn": (num_gt - n_tp).astype(np.int64),
        "precision": precision,
        "recall": recall,
        "ap": ap,
        "mean_iou": mean_iou,
    }
    return PerImageTable(columns, float(iou_threshold), s_thr)
