"""Diagnostics for the classic mistakes of detection evaluation, run before evaluating.

:func:`diagnose` looks at a ground truth and predictions and returns :class:`Finding` objects,
each saying what was seen (with numbers and an example) and how to fix it:

==========================  ====================================================================
code                        what it catches
==========================  ====================================================================
``box-format``              boxes in another format than the reader assumed (xywh read as xyxy,
                            centre boxes read as corner boxes, x and y swapped): found because
                            matched IoUs rise sharply under the other interpretation
``normalized-vs-pixels``    normalized coordinates on one side, pixels on the other
``outside-image``           predictions far outside their image (another image resolution)
``scale-mismatch``          prediction boxes much larger or smaller than ground-truth boxes
``resolution-mismatch``     predictions made at another resolution (e.g. half): they match once
                            scaled by the ratio of typical box sizes
``image-mismatch``          predictions attached to the neighbouring image (ids shifted by one)
``category-mismatch``       predictions match ground truth of other classes (permuted or offset
                            category ids)
``unknown-images``          predictions for images the ground truth does not have
``unknown-classes``         predictions for classes the ground truth does not have
``classes-without-gt``      predicted classes with no ground-truth instance (AP is -1/ignored)
``near-duplicates``         the same object predicted several times with near-identical boxes
``duplicate-ground-truth``  ground-truth boxes annotated twice
``gt-matched-twice``        predictions that a matcher letting one ground truth be matched twice
                            (a classic upstream bug) would count as true positives
``too-many-predictions``    images with more predictions than COCO's ``max_dets`` keeps
``tied-scores``             many equal scores (results then depend on input order)
``empty``                   no predictions or no ground truth at all
==========================  ====================================================================

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images = ImageTable.from_lists([1], ["a"], [100], [100])
>>> cats = CategoryTable.from_lists([1], ["cat"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[10, 10, 50, 50]], image_index=[0],
...                          category_id=[1])
>>> pred = Dataset.from_arrays(images, cats, boxes=[[10, 10, 50, 50], [10, 10, 50, 51]],
...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.8])
>>> [f.code for f in diagnose(gt, pred)]
['near-duplicates', 'gt-matched-twice']"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from ioukit.dataset import Dataset

if TYPE_CHECKING:
    from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.grouping import match_dataset
from ioukit.evaluation.groups import class_rows
from ioukit.evaluation.outcome import TRUE_POSITIVE, threshold_index
from ioukit.io._build import Unknowns
from ioukit.overlap import box_iou_elementwise

__all__ = ["Finding", "diagnose", "greedy_match", "pairwise_in_groups"]


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnostic: what was seen and the fix.

    Attributes
    ----------
    code : str
        Stable identifier (see the module table).
    severity : {"error", "warning", "info"}
        ``"error"``: the numbers are almost certainly meaningless; ``"warning"``: they are
        probably affected; ``"info"``: worth knowing.
    message : str
        What was seen, with counts and an example.
    fix : str
        What to do about it.

    Examples
    --------
    >>> print(Finding("empty", "warning", "no predictions", "check the path"))
    warning [empty]: no predictions
      fix: check the path
    """

    code: str
    severity: Severity
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.severity} [{self.code}]: {self.message}\n  fix: {self.fix}"


def _group_keys(ds: Dataset, n_classes_key: dict[int, int]) -> np.ndarray:
    cls = _class_column(ds, n_classes_key)
    return np.asarray(ds.image_index * (len(n_classes_key) + 1) + (cls + 1))


def _iou_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise IoU of aligned xyxy boxes (N, 4), (N, 4) -> (N,): the library's one
    array-API formula (:func:`ioukit.overlap.box_iou_elementwise`); 0 for empty unions."""

    return np.asarray(box_iou_elementwise(a, b), dtype=np.float64)


def pairwise_in_groups(
    keys_a: np.ndarray, keys_b: np.ndarray, *, max_pairs: int = 50_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs ``(i, j)`` with ``keys_a[i] == keys_b[j]``, as two int64 arrays.

    Parameters
    ----------
    keys_a : ndarray of int64, shape (N,)
    keys_b : ndarray of int64, shape (M,)
    max_pairs : int
        Refuse (``MemoryError``) beyond this many pairs.

    Returns
    -------
    i, j : ndarray of int64, shape (P,)
        Pairs grouped by ``i`` in increasing order.

    Examples
    --------
    >>> i, j = pairwise_in_groups(np.array([1, 2, 1]), np.array([1, 1, 3]))
    >>> i.tolist(), j.tolist()
    ([0, 0, 2, 2], [0, 1, 0, 1])
    """
    order = np.argsort(keys_b, kind="stable")
    sorted_b = keys_b[order]
    start = np.searchsorted(sorted_b, keys_a, side="left")
    count = np.searchsorted(sorted_b, keys_a, side="right") - start
    total = int(count.sum())
    if total > max_pairs:
        raise MemoryError(f"{total} pairs exceed max_pairs={max_pairs}")
    i = np.repeat(np.arange(len(keys_a), dtype=np.int64), count)
    offsets = np.cumsum(count) - count
    within = np.arange(total, dtype=np.int64) - np.repeat(offsets, count)
    j = order[np.repeat(start, count) + within]
    return i, j.astype(np.int64)


_CHUNK_PAIRS = 4_000_000


"""Pairs of boxes handled at once: the diagnostics' memory is bounded whatever the data."""


_PER_GROUP = 1000


"""The near-duplicate checks compare at most this many boxes (the best-scoring) per
(image, class): an image with a million predictions costs 500 000 pairs, not 5e11."""


def _pair_chunks(
    keys_a: np.ndarray, keys_b: np.ndarray, chunk: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """All pairs ``(i, j)`` with ``keys_a[i] == keys_b[j]``, in chunks of about ``chunk`` pairs
    (default ``_CHUNK_PAIRS``; rows of ``keys_a`` are never split, so one chunk holds at most
    ``max(chunk, len(keys_b))``)."""
    chunk = _CHUNK_PAIRS if chunk is None else chunk
    order = np.argsort(keys_b, kind="stable")
    sorted_b = keys_b[order]
    start = np.searchsorted(sorted_b, keys_a, side="left")
    count = np.searchsorted(sorted_b, keys_a, side="right") - start
    cum = np.cumsum(count)
    lo = 0
    while lo < len(keys_a):
        base = int(cum[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(cum, base + chunk, side="right")), lo + 1)
        c = count[lo:hi]
        total = int(c.sum())
        if total:
            i = np.repeat(np.arange(lo, hi, dtype=np.int64), c)
            within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
            yield i, order[np.repeat(start[lo:hi], c) + within].astype(np.int64)
        lo = hi


def _class_key(gt: Dataset) -> dict[int, int]:
    return {int(c): k for k, c in enumerate(gt.categories.ids.tolist())}


def _best_iou(
    gt: Dataset,
    pred_boxes: np.ndarray,
    pred: Dataset,
    *,
    image_index: np.ndarray | None = None,
    class_agnostic: bool = False,
) -> np.ndarray:
    """Best IoU of each prediction with a ground truth of its image (and class), 0 if none.

    ``image_index`` replaces the predictions' image rows (to test shifted ids); pairs are
    handled in bounded chunks.
    """
    key = _class_key(gt)
    images = pred.image_index if image_index is None else image_index
    n_k = len(key) + 1
    if class_agnostic:
        p_keys, g_keys = images * n_k, gt.image_index * n_k
    else:
        p_keys = images * n_k + _class_column(pred, key) + 1
        g_keys = gt.image_index * n_k + _class_column(gt, key) + 1
    best = np.zeros(len(pred))
    for i, j in _pair_chunks(p_keys, g_keys):
        # i is grouped (increasing): one reduceat per run instead of np.maximum.at
        starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
        rows = i[starts]
        best[rows] = np.maximum(
            best[rows], np.maximum.reduceat(_iou_pairs(pred_boxes[i], gt.boxes[j]), starts)
        )
    return best


def _class_column(ds: Dataset, key: dict[int, int]) -> np.ndarray:
    """Class row of each box (rows of the sorted category ids in ``key``), -1 when unknown."""

    return class_rows(np.sort(np.fromiter(key, dtype=np.int64, count=len(key))), ds.category_id)


def greedy_match(
    gt: Dataset, pred: Dataset, /, *, iou_threshold: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy matching in descending score order per (image, class), for diagnostics and plots.

    The pipeline's matcher (:func:`ioukit.evaluation.match.match_groups`, first ground truth on
    IoU ties): each prediction takes the unmatched same-class ground truth of its image with
    the highest IoU ``>= iou_threshold`` (crowd, ignore and difficult flags are not treated
    specially: use the evaluation protocols for official numbers). Memory stays bounded
    (images are matched in chunks).

    Parameters
    ----------
    gt, pred : Dataset
        ``pred`` refers to ``gt``'s image table.
    iou_threshold : float

    Returns
    -------
    matched_gt : ndarray of int64, shape (P,)
        Row of the matched ground truth, or -1.
    matched_iou : ndarray of float64, shape (P,)
        IoU with it (0 when unmatched).
    taken_best : ndarray of bool, shape (P,)
        Unmatched predictions whose IoU with an already matched ground truth reaches the
        threshold: a matcher that lets one ground truth be matched twice counts them as TP.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> im, c = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["x"])
    >>> gt = Dataset.from_arrays(im, c, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1])
    >>> pr = Dataset.from_arrays(im, c, boxes=[[0, 0, 10, 10], [0, 0, 10, 9]],
    ...                          image_index=[0, 0], category_id=[1, 1], scores=[0.5, 0.9])
    >>> m, iou, twice = greedy_match(gt, pr)
    >>> m.tolist(), iou.tolist(), twice.tolist()
    ([-1, 0], [0.0, 0.9], [True, False])
    """
    n = len(pred)
    if n == 0 or len(gt) == 0:
        return np.full(n, -1, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=bool)
    matched, iou = _greedy(gt, pred, iou_threshold)
    twice = (matched < 0) & (_best_iou(gt, pred.boxes, pred) >= iou_threshold)
    return matched, iou, twice


def _greedy(gt: Dataset, pred: Dataset, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Matched gt row (-1) and its IoU (0) of each prediction: the pipeline's matcher, first
    ground truth on ties, no crowd or ignore handling, in bounded image chunks."""

    none = np.zeros(len(gt), dtype=bool)
    m = match_dataset(
        gt,
        pred,
        iou_thresholds=np.array([float(threshold)]),
        rule="first",
        gt_ignore=none,
        gt_crowd=none,
    )
    matched = m.matched[0]
    return matched, np.where(matched >= 0, m.iou[0] if m.iou is not None else 0.0, 0.0)


def _matched_and_twice(
    gt: Dataset,
    pred: Dataset,
    threshold: float,
    outcome: MatchOutcome | None,
    best_all: np.ndarray,
    rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Matched gt per prediction (-1) and "would match a taken gt" flags, from ``outcome`` when
    it holds ``threshold`` (the evaluation's match), else from :func:`greedy_match`. ``pred``
    holds the rows ``rows`` of the predictions the outcome refers to."""
    if outcome is not None:
        t = threshold_index(outcome.thresholds, threshold)
        if t is not None:
            position = np.full(
                int(max(rows.max(initial=-1), outcome.pred_row.max(initial=-1))) + 1, -1
            )
            position[rows] = np.arange(len(rows))
            matched = np.full(len(pred), -1, dtype=np.int64)
            hit = outcome.status_at(t) == TRUE_POSITIVE  # one column of the outcome
            at = position[outcome.pred_row[hit]]
            matched[at[at >= 0]] = outcome.matched_gt_at(t)[hit][at >= 0]
            return matched, (matched < 0) & (best_all >= threshold)
    if len(pred) == 0 or len(gt) == 0:
        return np.full(len(pred), -1, dtype=np.int64), np.zeros(len(pred), dtype=bool)
    matched, _ = _greedy(gt, pred, threshold)
    return matched, (matched < 0) & (best_all >= threshold)


def _within_duplicates(
    ds: Dataset, key: dict[int, int], threshold: float
) -> tuple[np.ndarray, int]:
    """Rows that have a near-identical (IoU >= threshold) same-group box earlier in score order.

    Pairs are handled in bounded chunks.
    """
    n = len(ds)
    flags = np.zeros(n, dtype=bool)
    if n < 2:
        return flags, 0
    groups = _group_keys(ds, key)
    scores = ds.scores if ds.scores is not None else np.zeros(n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(-scores, kind="stable")] = np.arange(n)
    # at most _PER_GROUP boxes per (image, class), the best-ranked: pairs grow quadratically
    order = np.lexsort((rank, groups))
    first = np.r_[0, np.flatnonzero(groups[order][1:] != groups[order][:-1]) + 1]
    sizes = np.diff(np.r_[first, n])
    within = np.arange(n) - np.repeat(first, sizes)
    checked = np.sort(order[within < _PER_GROUP])
    pairs = 0
    for i, j in _pair_chunks(groups[checked], groups[checked]):
        i, j = checked[i], checked[j]
        keep = i < j
        i, j = i[keep], j[keep]
        hit = _iou_pairs(ds.boxes[i], ds.boxes[j]) >= threshold
        i, j = i[hit], j[hit]
        # the lower-ranked box of each pair is the duplicate
        flags[np.where(rank[i] > rank[j], i, j)] = True
        pairs += len(i)
    return flags, pairs


def _example(ds: Dataset, rows: np.ndarray) -> str:
    row = int(rows[0])
    stem = ds.images.stems[int(ds.image_index[row])]
    box = ", ".join(f"{v:g}" for v in ds.boxes[row].tolist())
    return f"e.g. image {stem!r}, box ({box})"


Transform = Callable[[np.ndarray], np.ndarray]


def _alternatives() -> list[tuple[str, str, Transform]]:
    """(what the numbers really were, fix, canonical boxes -> reinterpreted boxes)."""

    def cols(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return b[:, 0], b[:, 1], b[:, 2], b[:, 3]

    def xywh_read_as_xyxy(b: np.ndarray) -> np.ndarray:
        a, c, w, h = cols(b)
        return np.stack([a, c, a + w, c + h], axis=1)

    def xyxy_read_as_xywh(b: np.ndarray) -> np.ndarray:
        x1, y1, x2, y2 = cols(b)
        return np.stack([x1, y1, x2 - x1, y2 - y1], axis=1)

    def cxcywh_read_as_xywh(b: np.ndarray) -> np.ndarray:
        x1, y1, x2, y2 = cols(b)
        w, h = x2 - x1, y2 - y1
        return np.stack([x1 - w / 2, y1 - h / 2, x1 + w / 2, y1 + h / 2], axis=1)

    def xywh_read_as_cxcywh(b: np.ndarray) -> np.ndarray:
        x1, y1, x2, y2 = cols(b)
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        return np.stack([cx, cy, cx + (x2 - x1), cy + (y2 - y1)], axis=1)

    def cxcywh_read_as_xyxy(b: np.ndarray) -> np.ndarray:
        a, c, w, h = cols(b)
        return np.stack([a - w / 2, c - h / 2, a + w / 2, c + h / 2], axis=1)

    def xyxy_read_as_cxcywh(b: np.ndarray) -> np.ndarray:
        x1, y1, x2, y2 = cols(b)
        return np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], axis=1)

    def swapped(b: np.ndarray) -> np.ndarray:
        return b[:, [1, 0, 3, 2]]

    return [
        (
            "x y w h boxes read as x1 y1 x2 y2",
            "read them as xywh (e.g. --txt-box-format xywh)",
            xywh_read_as_xyxy,
        ),
        (
            "x1 y1 x2 y2 boxes read as x y w h",
            "read them as xyxy (COCO results must hold [x, y, w, h]: "
            "convert with ioukit.box_convert(b, 'xyxy', 'xywh'))",
            xyxy_read_as_xywh,
        ),
        (
            "centre cx cy w h boxes read as x y w h",
            "read them as cxcywh, or convert with ioukit.box_convert(b, 'cxcywh', 'xywh')",
            cxcywh_read_as_xywh,
        ),
        ("x y w h boxes read as centre cx cy w h", "read them as xywh", xywh_read_as_cxcywh),
        ("centre cx cy w h boxes read as x1 y1 x2 y2", "read them as cxcywh", cxcywh_read_as_xyxy),
        ("x1 y1 x2 y2 boxes read as centre cx cy w h", "read them as xyxy", xyxy_read_as_cxcywh),
        (
            "boxes with x and y swapped (y1 x1 y2 x2, TensorFlow order)",
            "reorder the columns to x1 y1 x2 y2 (boxes[:, [1, 0, 3, 2]])",
            swapped,
        ),
    ]


def _valid(b: np.ndarray) -> np.ndarray:
    ok: np.ndarray = np.all(np.isfinite(b), axis=1) & (b[:, 2] >= b[:, 0]) & (b[:, 3] >= b[:, 1])
    return ok


def _box_format_findings(
    gt: Dataset, pred: Dataset, threshold: float, limit: int, best_all: np.ndarray
) -> list[Finding]:
    if len(pred) == 0 or len(gt) == 0:
        return []
    rows = _top_rows(pred, limit)
    sub = _subset(pred, rows)
    base = float(np.mean(best_all[rows] >= threshold))
    if 2 * base + 0.1 > 1.0:
        return []  # no alternative could reach the required rate: skip the work
    best: tuple[float, str, str] | None = None
    for what, fix, transform in _alternatives():
        alt = transform(sub.boxes)
        ok = _valid(alt)
        iou = _best_iou(gt, np.where(ok[:, None], alt, 0.0), sub)
        rate = float(np.mean((iou >= threshold) & ok))
        if rate >= 0.3 and rate >= 2 * base + 0.1 and (best is None or rate > best[0]):
            best = (rate, what, fix)
    if best is None:
        return []
    rate, what, fix = best
    return [
        Finding(
            "box-format",
            "error",
            f"predictions look like {what}: {base:.0%} of them overlap a ground-truth box of their "
            f"class with IoU >= {threshold:g} as read, {rate:.0%} would if they were "
            f"{what.split(' read')[0]}",
            fix,
        )
    ]


def _top_rows(pred: Dataset, limit: int) -> np.ndarray:
    """Rows of the ``limit`` highest-scoring predictions (all when fewer), in row order."""
    rows = np.arange(len(pred))
    if len(pred) > limit and pred.scores is not None:
        rows = np.sort(np.argsort(-pred.scores, kind="stable")[:limit])
    return rows


def _shifted_images(ds: Dataset, shift: int) -> np.ndarray:
    """Image rows after moving each box to the image whose id ranks ``shift`` later (-1: none)."""
    ids = ds.images.ids
    by_id = np.argsort(ids, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[by_id] = np.arange(len(ids))
    target = rank[ds.image_index] + shift
    inside = (target >= 0) & (target < len(ids))
    return np.where(inside, by_id[np.clip(target, 0, max(len(ids) - 1, 0))], -1)


def _misassignment_findings(
    gt: Dataset, pred: Dataset, threshold: float, limit: int, best_all: np.ndarray
) -> list[Finding]:
    """Predictions that would match if their class, image or resolution were different.

    Each candidate explanation is tested on the top-scoring predictions: the share that
    overlaps a ground truth with IoU >= threshold must be at least 30 % and at least twice (plus
    10 points) the share as read. The best explanation is reported.
    """
    if len(pred) == 0 or len(gt) == 0:
        return []
    rows = _top_rows(pred, limit)
    sub = _subset(pred, rows)
    base = float(np.mean(best_all[rows] >= threshold))
    if base >= 0.3:
        return []
    candidates: list[tuple[float, str, str, str]] = []
    agnostic = float(np.mean(_best_iou(gt, sub.boxes, sub, class_agnostic=True) >= threshold))
    candidates.append(
        (
            agnostic,
            "category-mismatch",
            f"predictions overlap ground-truth boxes of other classes: {base:.0%} overlap one of "
            f"their own class with IoU >= {threshold:g}, {agnostic:.0%} one of any class; the "
            "category ids look permuted or offset",
            "map the model's class ids to the dataset's (--classes, the COCO 80 -> 91 ids, "
            "0- vs 1-based labels)",
        )
    )
    for shift in (1, -1):
        moved = _shifted_images(sub, shift)
        ok = moved >= 0
        best = _best_iou(gt, sub.boxes, sub, image_index=np.where(ok, moved, 0))
        rate = float(np.mean((best >= threshold) & ok))
        candidates.append(
            (
                rate,
                "image-mismatch",
                f"predictions overlap the ground truth of the image whose id is one "
                f"{'higher' if shift > 0 else 'lower'}: {base:.0%} match their own image, "
                f"{rate:.0%} that one; the image ids look shifted by {shift:+d}",
                "use the ground truth's image ids in the predictions (0- vs 1-based ids, or a "
                "different image order)",
            )
        )
    g_side = np.median(np.sqrt(np.prod(gt.boxes[:, 2:] - gt.boxes[:, :2], axis=1)))
    p_side = np.median(np.sqrt(np.prod(sub.boxes[:, 2:] - sub.boxes[:, :2], axis=1)))
    if g_side > 0 and p_side > 0 and not 0.85 <= p_side / g_side <= 1.15:
        factor = float(2.0 ** (np.round(np.log2(g_side / p_side) * 4) / 4))  # quarter octaves
        rate = float(np.mean(_best_iou(gt, sub.boxes * factor, sub) >= threshold))
        candidates.append(
            (
                rate,
                "resolution-mismatch",
                f"predictions look made at {1 / factor:.3g} times the image resolution: "
                f"{base:.0%} overlap a ground truth with IoU >= {threshold:g} as read, "
                f"{rate:.0%} after scaling by {factor:.3g}",
                "scale the predictions back to the original image size (letterbox or resize "
                "in the inference pipeline)",
            )
        )
    rate, code, message, fix = max(candidates, key=lambda c: c[0])
    if rate >= 0.3 and rate >= 2 * base + 0.1:
        return [Finding(code, "error", message, fix)]
    return []


def _subset(ds: Dataset, rows: np.ndarray) -> Dataset:
    return Dataset.from_arrays(
        ds.images,
        ds.categories,
        boxes=ds.boxes[rows],
        image_index=ds.image_index[rows],
        category_id=ds.category_id[rows],
        scores=None if ds.scores is None else ds.scores[rows],
    )


def _scale_findings(gt: Dataset, pred: Dataset) -> list[Finding]:
    out: list[Finding] = []
    if len(gt) == 0 or len(pred) == 0:
        return out
    gmax = float(np.max(gt.boxes))
    pmax = float(np.max(pred.boxes))
    if gmax > 4 and pmax <= 1.5:
        out.append(
            Finding(
                "normalized-vs-pixels",
                "error",
                f"ground-truth boxes are in pixels (coordinates up to {gmax:g}) but every "
                "prediction "
                f"coordinate lies in [0, 1] (max {pmax:g}): the predictions look normalized",
                "give the image sizes when reading normalized predictions (YOLO: --image-size WxH "
                "or "
                "--images DIR on the ground truth), or multiply by the image width and height "
                "(ioukit.denormalize_boxes)",
            )
        )
        return out
    if pmax > 4 and gmax <= 1.5:
        out.append(
            Finding(
                "normalized-vs-pixels",
                "error",
                f"every ground-truth coordinate lies within about [0, 1] (max {gmax:g}) but "
                "predictions are in "
                f"pixels (up to {pmax:g}): the ground truth looks normalized",
                "pass --image-size WxH or --images DIR so normalized labels become pixels",
            )
        )
        return out
    w = pred.images.widths[pred.image_index]
    h = pred.images.heights[pred.image_index]
    known = np.isfinite(w) & np.isfinite(h)
    if np.any(known):
        b = pred.boxes[known]
        outside = (
            (b[:, 2] > 1.25 * w[known]) | (b[:, 3] > 1.25 * h[known]) | (b[:, 0] < -0.25 * w[known])
        )
        if np.mean(outside) > 0.05:
            rows = np.flatnonzero(known)[outside]
            out.append(
                Finding(
                    "outside-image",
                    "warning",
                    f"{int(outside.sum())} predictions ({np.mean(outside):.0%}) reach far outside "
                    "their "
                    f"image ({_example(pred, rows)}, image {w[rows[0]]:g} x {h[rows[0]]:g})",
                    "predictions made on resized or letterboxed images must be scaled back to the "
                    "original image size before evaluation",
                )
            )
    g_size = np.median(
        np.sqrt(np.clip(np.prod(gt.boxes[:, 2:] - gt.boxes[:, :2], axis=1), 0, None))
    )
    p_size = np.median(
        np.sqrt(np.clip(np.prod(pred.boxes[:, 2:] - pred.boxes[:, :2], axis=1), 0, None))
    )
    if g_size > 0 and p_size > 0 and not 0.25 <= p_size / g_size <= 4:
        out.append(
            Finding(
                "scale-mismatch",
                "warning",
                f"the median prediction box side ({p_size:.4g}) is {p_size / g_size:.3g} times the "
                f"median ground-truth box side ({g_size:.4g})",
                "check that both sides use the same image resolution and units",
            )
        )
    return out


def diagnose(
    gt: Dataset,
    pred: Dataset,
    /,
    *,
    unknowns: Unknowns | None = None,
    iou_threshold: float = 0.5,
    duplicate_iou: float = 0.95,
    max_dets: int = 100,
    sample: int = 20_000,
    outcome: MatchOutcome | None = None,
) -> tuple[Finding, ...]:
    """Look for the classic mistakes before evaluating ``pred`` against ``gt``.

    Parameters
    ----------
    gt, pred : Dataset
        Ground truth and predictions sharing one image table.
    unknowns : Unknowns, optional
        Predictions a lenient reader left out (unknown images or classes).
    iou_threshold : float
        IoU that counts as a match for the format and matching checks.
    duplicate_iou : float
        IoU at which two boxes of one class in one image count as the same box.
    max_dets : int
        Predictions per image that COCO keeps.
    sample : int
        The box-format test uses at most this many top-scoring predictions.
    outcome : MatchOutcome, optional
        The evaluation's own match (``EvaluationResult.outcome``): the matching checks read it
        at ``iou_threshold`` instead of matching again.

    Returns
    -------
    tuple of Finding
        Most serious first; empty when nothing looks wrong.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> im, c = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["x"])
    >>> gt = Dataset.from_arrays(im, c, boxes=[[100, 100, 200, 200]], image_index=[0],
    ...                          category_id=[1])
    >>> pr = Dataset.from_arrays(im, c, boxes=[[100, 100, 100, 100]], image_index=[0],
    ...                          category_id=[1], scores=[0.9])
    >>> print(diagnose(gt, pr)[0].message)  # doctest: +ELLIPSIS
    predictions look like x y w h boxes read as x1 y1 x2 y2: 0% of them ...
    >>> diagnose(gt, Dataset.from_arrays(im, c, boxes=[[100, 100, 200, 200]], image_index=[0],
    ...          category_id=[1], scores=[0.9]))
    ()
    """
    findings: list[Finding] = []
    if len(pred) == 0:
        findings.append(
            Finding(
                "empty", "warning", "there are no predictions", "check the --pred path and format"
            )
        )
    if len(gt) == 0:
        findings.append(
            Finding(
                "empty",
                "warning",
                "the ground truth has no boxes",
                "check the --gt path and format",
            )
        )
    if unknowns:
        if unknowns.images:
            n = sum(unknowns.images.values())
            example = next(iter(unknowns.images))
            findings.append(
                Finding(
                    "unknown-images",
                    "warning",
                    f"{n} predictions are for {len(unknowns.images)} images the ground truth does "
                    "not "
                    f"have (e.g. {example!r}); they were left out",
                    "evaluate on the same image set; images are matched by COCO id or by file stem",
                )
            )
        if unknowns.classes:
            n = sum(unknowns.classes.values())
            names = ", ".join(repr(k) for k in list(unknowns.classes)[:5])
            findings.append(
                Finding(
                    "unknown-classes",
                    "warning",
                    f"{n} predictions have classes the ground truth does not have ({names}); "
                    "they were left out",
                    "map the model's class indices to the dataset's (pass the class list with "
                    "--classes; COCO-80 models need the 80 -> 91 id mapping)",
                )
            )
    findings.extend(_scale_findings(gt, pred))
    # the matching checks look at the `sample` highest-scoring predictions (all of them when
    # fewer); their best IoU with a same-image, same-class ground truth is computed once
    top = _top_rows(pred, sample)
    psub = pred if len(top) == len(pred) else _subset(pred, top)
    best_all = _best_iou(gt, psub.boxes, psub) if len(gt) else np.zeros(len(psub))
    if not any(f.code == "normalized-vs-pixels" for f in findings):
        findings.extend(_box_format_findings(gt, psub, iou_threshold, sample, best_all))
    if not any(f.severity == "error" for f in findings):
        findings.extend(_misassignment_findings(gt, psub, iou_threshold, sample, best_all))
    key = _class_key(gt)
    if len(pred) and len(gt):
        num_gt = np.bincount([key[int(c)] for c in gt.category_id.tolist()], minlength=len(key))
        pred_classes = {int(c) for c in np.unique(pred.category_id).tolist()}
        empty = [
            gt.categories.name_of(c)
            for c in sorted(pred_classes)
            if c in key and num_gt[key[c]] == 0
        ]
        if empty:
            findings.append(
                Finding(
                    "classes-without-gt",
                    "info",
                    f"{len(empty)} predicted classes have no ground-truth instance "
                    f"({', '.join(empty[:5])}); "
                    "COCO reports -1 for them and leaves them out of the mean",
                    "nothing to do if that is expected",
                )
            )
    dup_flags, _ = _within_duplicates(pred, key, duplicate_iou)
    if dup_flags.any():
        n = int(dup_flags.sum())
        findings.append(
            Finding(
                "near-duplicates",
                "warning",
                f"{n} predictions ({n / len(pred):.1%}) repeat a higher-scoring prediction of the "
                "same "
                f"class in the same image with IoU >= {duplicate_iou:g} "
                f"({_example(pred, np.flatnonzero(dup_flags))}); "
                "each repeat counts as a false positive",
                "apply non-maximum suppression (ioukit.batched_nms, IoU 0.5-0.7) before evaluating",
            )
        )
    gt_dups, _ = _within_duplicates(gt, key, duplicate_iou)
    if gt_dups.any():
        n = int(gt_dups.sum())
        findings.append(
            Finding(
                "duplicate-ground-truth",
                "warning",
                f"{n} ground-truth boxes repeat another box of the same class in the same image "
                "with "
                f"IoU >= {duplicate_iou:g} ({_example(gt, np.flatnonzero(gt_dups))}); each needs "
                "its own "
                "prediction, so recall cannot reach 1",
                "remove duplicated annotations (an export that wrote objects twice?)",
            )
        )
    if len(pred) and len(gt):
        matched, twice = _matched_and_twice(gt, psub, iou_threshold, outcome, best_all, top)
        n_twice = int(twice.sum())
        n_seen = len(psub)
        among = "" if n_seen == len(pred) else f" (among the {n_seen} highest-scoring)"
        if n_twice:
            tp = int((matched >= 0).sum())
            findings.append(
                Finding(
                    "gt-matched-twice",
                    "info",
                    f"{n_twice} predictions{among} overlap (IoU >= {iou_threshold:g}) a ground "
                    "truth that a "
                    "higher-scoring prediction already matched: a correct matcher counts them as "
                    "false "
                    f"positives (precision {tp / n_seen:.3f} at this IoU), a tool that lets "
                    "one ground "
                    f"truth be matched twice counts them as true positives (precision "
                    f"{(tp + n_twice) / n_seen:.3f}, recall can exceed 1)",
                    "if another tool reports higher numbers, check that it marks matched ground "
                    "truths",
                )
            )
    if len(pred):
        per_image = np.bincount(pred.image_index, minlength=len(pred.images))
        over = int((per_image > max_dets).sum())
        if over:
            findings.append(
                Finding(
                    "too-many-predictions",
                    "info",
                    f"{over} images have more than {max_dets} predictions (up to "
                    f"{int(per_image.max())}); "
                    f"COCO keeps only the {max_dets} best-scoring per image",
                    "nothing to do unless you expected all of them to count (max_dets option)",
                )
            )
        unique = len(np.unique(pred.scores)) if pred.scores is not None else 1
        if pred.scores is not None and len(pred) >= 20 and unique <= max(1, len(pred) // 20):
            findings.append(
                Finding(
                    "tied-scores",
                    "info",
                    f"{len(pred)} predictions share only {unique} distinct scores: ranking ties "
                    "are broken "
                    "by input order, so AP depends on it",
                    "export the raw confidences instead of rounded or constant scores",
                )
            )
    order = {"error": 0, "warning": 1, "info": 2}
    return tuple(sorted(findings, key=lambda f: order[f.severity]))
