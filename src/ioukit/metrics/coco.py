"""The COCO detection protocol on columnar arrays (bbox), equal to pycocotools' ``COCOeval``.

Ground truths and predictions are grouped by (image, class) with stable sorts; IoU, matching
and accumulation run in the numba kernels of :mod:`ioukit._kernels.coco`. The arrays follow
pycocotools' axes and values: ``precision`` [T, R, K, A, M], ``recall`` [T, K, A, M] and
``scores`` [T, R, K, A, M], with -1 where a class has no (non-ignored) ground truth.

Differences from pycocotools, each reproduced by ``compat="pycocotools"``:

* a ground truth with annotation id 0 matches like any other (pycocotools stores matches as
  ids and reads 0 as "unmatched");
* a ground truth's own ``ignore`` (and VOC ``difficult``) flag is honoured (pycocotools
  overwrites ``ignore`` with ``iscrowd``);
* the headline AP uses ``max_dets[-1]`` (pycocotools looks up the literal 100 and reports -1
  when ``max_dets`` does not contain it); AP50, AP75 and the size rows likewise use
  ``max_dets[-1]`` (pycocotools: ``max_dets[2]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.metrics.protocol import ProtocolResult

__all__ = ["DEFAULT_AREA_RANGES", "evaluate_coco"]

DEFAULT_AREA_RANGES: Mapping[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}
_SHORT = {"small": "s", "medium": "m", "large": "l"}


def _float_vector(values: object, name: str, *, low: float, high: float) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a sequence of numbers, got {values!r}") from exc
    if array.size == 0 or not np.all((array >= low) & (array <= high)):
        raise ValueError(f"{name}: expected numbers in [{low}, {high}], got {values!r}")
    return array


def _check_params(
    iou_thresholds: Sequence[float] | np.ndarray | None,
    recall_thresholds: Sequence[float] | np.ndarray | None,
    max_dets: Sequence[int],
    area_ranges: Mapping[str, Sequence[float]] | None,
    compat: str | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], np.ndarray, np.ndarray]:
    if compat not in (None, "pycocotools"):
        raise ValueError(f"compat: expected None or 'pycocotools', got {compat!r}")
    iou_thr = (
        np.linspace(0.5, 0.95, 10)
        if iou_thresholds is None
        else _float_vector(iou_thresholds, "iou_thresholds", low=0.0, high=1.0)
    )
    rec_thr = (
        np.linspace(0.0, 1.0, 101)
        if recall_thresholds is None
        else _float_vector(recall_thresholds, "recall_thresholds", low=0.0, high=1.0)
    )
    if np.any(np.diff(rec_thr) <= 0):
        raise ValueError(f"recall_thresholds: expected increasing values, got {rec_thr.tolist()}")
    try:
        dets = sorted(int(m) for m in max_dets)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"max_dets: expected a sequence of integers, got {max_dets!r}") from exc
    if not dets or dets[0] < 1:
        raise ValueError(f"max_dets: expected positive integers, got {max_dets!r}")
    ranges = dict(DEFAULT_AREA_RANGES if area_ranges is None else area_ranges)
    if "all" not in ranges:
        ranges = {"all": DEFAULT_AREA_RANGES["all"], **ranges}
    names = ["all", *(n for n in ranges if n != "all")]
    bounds = []
    for n in names:
        pair = tuple(ranges[n])
        if len(pair) != 2 or not float(pair[0]) <= float(pair[1]):
            raise ValueError(
                f"area_ranges[{n!r}]: expected (low, high) with low <= high, got {pair}"
            )
        bounds.append((float(pair[0]), float(pair[1])))
    lo = np.array([b[0] for b in bounds], dtype=np.float64)
    hi = np.array([b[1] for b in bounds], dtype=np.float64)
    return iou_thr, rec_thr, np.array(dets, dtype=np.int64), names, lo, hi


def _group_bounds(keys: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.searchsorted(keys, groups, side="left").astype(np.int64),
        np.searchsorted(keys, groups, side="right").astype(np.int64),
    )


def _sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted unique values of two sorted int64 arrays (cheaper than ``np.union1d``)."""
    both = np.sort(np.concatenate([a, b]), kind="stable")
    if both.size == 0:
        return both
    return both[np.r_[True, both[1:] != both[:-1]]]


def _summarize(
    array: np.ndarray, t_index: np.ndarray | None, a: int, m: int, *, precision: bool
) -> float:
    # exactly COCOeval._summarize: mean of the entries > -1 in pycocotools' slicing order
    s = array if t_index is None else array[t_index]
    s = s[:, :, :, [a], [m]] if precision else s[:, :, [a], [m]]
    valid = s[s > -1]
    return -1.0 if valid.size == 0 else float(np.mean(valid))


def _threshold_index(iou_thr: np.ndarray, value: float, *, exact: bool) -> np.ndarray:
    if exact:
        return np.flatnonzero(value == iou_thr)
    return np.flatnonzero(np.isclose(iou_thr, value, rtol=0.0, atol=1e-12))


def evaluate_coco(
    ground_truth: Dataset,
    predictions: Dataset,
    /,
    *,
    iou_thresholds: Sequence[float] | np.ndarray | None = None,
    recall_thresholds: Sequence[float] | np.ndarray | None = None,
    max_dets: Sequence[int] = (1, 10, 100),
    area_ranges: Mapping[str, Sequence[float]] | None = None,
    use_cats: bool = True,
    compat: str | None = None,
    iou_type: str = "bbox",
    unmatched_ignored: np.ndarray | None = None,
) -> ProtocolResult:
    """COCO bbox or segm evaluation of ``predictions`` against ``ground_truth``.

    Parameters
    ----------
    ground_truth : Dataset
        Ground truth (``scores`` is None); ``area`` gives the size ranges, ``crowd`` the
        iscrowd regions (IoU = intersection / prediction area).
    predictions : Dataset
        Predictions on the ground truth's images (``scores`` present).
    iou_thresholds : sequence of float, shape (T,), optional
        Default ``linspace(0.5, 0.95, 10)``; a match needs ``iou >= min(t, 1 - 1e-10)``.
    recall_thresholds : sequence of float, shape (R,), optional
        Increasing; default ``linspace(0, 1, 101)``.
    max_dets : sequence of int, shape (M,)
        Predictions kept per image and class, sorted ascending. Default (1, 10, 100).
    area_ranges : mapping of str to (low, high), optional
        Inclusive ground-truth area ranges; ``"all"`` (0, 1e10) is added first if missing.
        Default all/small/medium/large.
    use_cats : bool
        False pools all classes (class-agnostic; K = 1).
    compat : {None, "pycocotools"}
        ``"pycocotools"`` reproduces pycocotools' bugs (see the module docstring).
    iou_type : {"bbox", "segm"}
        ``"segm"``: IoU of the masks in both datasets' ``segmentation`` (polygons, RLE dicts;
        crowd columns divide by the prediction's mask area), as pycocotools'
        ``COCOeval(iouType="segm")``. Size ranges still use the ``area`` columns.
    unmatched_ignored : ndarray of bool, shape (P,), optional
        Predictions whose unmatched outcome is IGNORED instead of a false positive (LVIS:
        classes not exhaustively annotated in the image; see :mod:`ioukit.metrics.lvis`).

    Returns
    -------
    ProtocolResult
        ``stats`` (AP, AP50, AP75, one AP per extra area range, AR per max_dets, one AR per
        extra area range: the 12 familiar keys by default), ``per_class`` rows, ``arrays``
        ``precision`` [T,R,K,A,M], ``recall`` [T,K,A,M], ``scores`` [T,R,K,A,M].

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> r = evaluate_coco(gt, pred)
    >>> round(r.stats["AP"], 4), round(r.stats["AP50"], 4), r.arrays["precision"].shape
    (0.9, 1.0, (10, 101, 1, 4, 3))
    """
    from ioukit._kernels import coco as kernels

    if ground_truth.is_prediction:
        raise DataFormatError("ground_truth: expected a dataset without scores, got predictions")
    if predictions.scores is None:
        raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
    if len(predictions.images) != len(ground_truth.images):
        raise DataFormatError(
            "predictions: expected the ground truth's image table "
            f"({len(ground_truth.images)} images), got {len(predictions.images)} images"
        )
    if iou_type not in ("bbox", "segm"):
        raise ValueError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
    if iou_type == "segm":
        for ds, name in ((ground_truth, "ground_truth"), (predictions, "predictions")):
            if ds.segmentation is None:
                raise DataFormatError(
                    f"{name}.segmentation: expected masks (polygons or RLE) for "
                    "iou_type='segm', got none (read COCO files with keep_segmentation=True)"
                )
    iou_thr, rec_thr, dets, area_names, area_lo, area_hi = _check_params(
        iou_thresholds, recall_thresholds, max_dets, area_ranges, compat
    )
    pyco = compat == "pycocotools"
    cat_ids = np.unique(ground_truth.categories.ids)
    n_cats = len(cat_ids)
    n_k = n_cats if use_cats else 1
    n_t, n_r, n_a, n_m = len(iou_thr), len(rec_thr), len(area_names), len(dets)
    max_det = int(dets[-1])

    ids = ground_truth.images.ids
    image_rank = np.empty(len(ids), dtype=np.int64)
    image_rank[np.argsort(ids, kind="stable")] = np.arange(len(ids))

    def _class_index(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
        pos = np.searchsorted(cat_ids, ds.category_id)
        pos = np.minimum(pos, max(n_cats - 1, 0))
        known = (cat_ids[pos] == ds.category_id) if n_cats else np.zeros(len(ds), dtype=bool)
        return np.flatnonzero(known), pos[known]

    # ground truth: sort by (image rank, class), stable
    g_rows, g_cls = _class_index(ground_truth)
    g_img = image_rank[ground_truth.image_index[g_rows]]
    g_order = np.argsort(g_img * max(n_cats, 1) + g_cls, kind="stable")
    g_rows, g_cls, g_img = g_rows[g_order], g_cls[g_order], g_img[g_order]
    g_key = g_img * n_cats + g_cls if use_cats else g_img
    gt_boxes = np.ascontiguousarray(ground_truth.boxes[g_rows])
    gt_box_area = (gt_boxes[:, 2] - gt_boxes[:, 0]) * (gt_boxes[:, 3] - gt_boxes[:, 1])
    gt_area = np.ascontiguousarray(ground_truth.area[g_rows])
    gt_crowd = np.ascontiguousarray(ground_truth.crowd[g_rows])
    if pyco:
        gt_ignore = gt_crowd.copy()
        gt_never = np.ascontiguousarray(ground_truth.annotation_id[g_rows] == 0)
    else:
        gt_ignore = gt_crowd | ground_truth.ignore[g_rows] | ground_truth.difficult[g_rows]
        gt_never = np.zeros(len(g_rows), dtype=bool)

    # predictions: sort by (image rank, class, -score) or (image rank, -score, class), stable;
    # dense rank of -score (equal scores share a rank) turns every sort into one int64 sort
    p_rows, p_cls = _class_index(predictions)
    p_img = image_rank[predictions.image_index[p_rows]]
    p_score = predictions.scores[p_rows]
    by_score = np.argsort(-p_score, kind="stable")
    sorted_scores = p_score[by_score]
    dense = np.empty(len(p_rows), dtype=np.int64)
    dense[by_score] = np.cumsum(np.r_[False, sorted_scores[1:] != sorted_scores[:-1]])
    n_dense = int(dense.max()) + 1 if len(dense) else 1
    if use_cats:
        p_order = np.argsort((p_img * n_cats + p_cls) * n_dense + dense, kind="stable")
    else:
        p_order = np.argsort((p_img * n_dense + dense) * n_cats + p_cls, kind="stable")
    p_rows, p_cls, p_img, dense = p_rows[p_order], p_cls[p_order], p_img[p_order], dense[p_order]
    p_key = p_img * n_cats + p_cls if use_cats else p_img

    groups = _sorted_union(g_key, p_key)
    gt_start, gt_end = _group_bounds(g_key, groups)
    pred_start, pred_end = _group_bounds(p_key, groups)
    p_count = pred_end - pred_start
    rank = np.arange(len(p_rows), dtype=np.int64) - np.repeat(pred_start, p_count)
    kept_count = np.minimum(p_count, max_det)
    g_count = gt_end - gt_start

    # accumulation order: class, then descending score; ties keep (image rank, in-group order)
    kept = np.flatnonzero(rank < max_det)
    seq_cls = p_cls[kept] if use_cats else np.zeros(len(kept), dtype=np.int64)
    perm = np.argsort(seq_cls * n_dense + dense[kept], kind="stable")
    seq, seq_cls = kept[perm], seq_cls[perm]
    class_start, class_end = _group_bounds(seq_cls, np.arange(n_k))
    slot = np.zeros(len(p_rows), dtype=np.int64)
    slot[seq] = np.arange(len(seq))
    pred_boxes = np.ascontiguousarray(predictions.boxes[p_rows])
    pred_area = np.ascontiguousarray(predictions.area[p_rows])
    pred_scores = np.ascontiguousarray(predictions.scores[p_rows])
    thresholds = np.minimum(iou_thr, 1 - 1e-10)
    status = np.zeros((len(seq), n_a, n_t), dtype=np.int8)
    max_g = int(g_count.max()) if len(groups) else 0
    max_p = int(kept_count.max()) if len(groups) else 0
    max_pg = int((kept_count * g_count).max()) if len(groups) else 0
    buffers = (
        np.empty((n_a, max(max_g, 1)), dtype=np.int64),
        np.empty((n_a, max(max_g, 1)), dtype=np.bool_),
        np.empty((n_a, max(max_g, 1)), dtype=np.bool_),
        np.empty((n_a, n_t, max(max_p, 1)), dtype=np.int64),
        np.empty((n_a, n_t, max(max_p, 1)), dtype=np.bool_),
        np.empty((n_t, max(max_g, 1)), dtype=np.int64),
    )
    if iou_type == "segm":
        iou_values, iou_offsets = _group_mask_ious(
            ground_truth,
            predictions,
            g_rows,
            p_rows,
            gt_start,
            gt_end,
            pred_start,
            pred_end,
            max_det,
            gt_crowd,
        )
        kernels.evaluate_groups_iou(
            gt_start,
            gt_end,
            pred_start,
            pred_end,
            iou_values,
            iou_offsets,
            gt_area,
            gt_ignore,
            gt_crowd,
            gt_never,
            pred_area,
            thresholds,
            area_lo,
            area_hi,
            max_det,
            slot,
            status,
            *buffers,
        )
    else:
        kernels.evaluate_groups(
            gt_start,
            gt_end,
            pred_start,
            pred_end,
            gt_boxes,
            gt_box_area,
            gt_area,
            gt_ignore,
            gt_crowd,
            gt_never,
            pred_boxes,
            pred_area,
            thresholds,
            area_lo,
            area_hi,
            max_det,
            slot,
            status,
            np.empty(max(max_pg, 1), dtype=np.float64),
            *buffers,
        )

    if unmatched_ignored is not None:
        # LVIS: an unmatched prediction of a not-exhaustively annotated class is ignored
        flags = np.asarray(unmatched_ignored, dtype=bool).reshape(-1)
        if flags.shape != (len(predictions),):
            raise ValueError(
                f"unmatched_ignored: expected shape ({len(predictions)},), got {flags.shape}"
            )
        flagged = np.flatnonzero(flags[p_rows[seq]])
        outcome = status[flagged]
        outcome[outcome == kernels.FALSE_POSITIVE] = kernels.IGNORED
        status[flagged] = outcome

    regular = ~gt_ignore
    gt_k = g_cls if use_cats else np.zeros(len(g_cls), dtype=np.int64)
    num_regular = np.zeros((n_k, n_a), dtype=np.int64)
    for a in range(n_a):
        in_range = regular & (gt_area >= area_lo[a]) & (gt_area <= area_hi[a])
        num_regular[:, a] = np.bincount(gt_k[in_range], minlength=n_k)[:n_k]
    precision = -np.ones((n_t, n_r, n_k, n_a, n_m))
    recall = -np.ones((n_t, n_k, n_a, n_m))
    scores = -np.ones((n_t, n_r, n_k, n_a, n_m))
    longest = int((class_end - class_start).max()) if n_k else 0
    kernels.accumulate(
        class_start,
        class_end,
        np.ascontiguousarray(rank[seq]),
        status,
        np.ascontiguousarray(pred_scores[seq]),
        num_regular,
        dets,
        rec_thr,
        precision,
        recall,
        scores,
        np.empty((n_m, max(longest, 1))),
        np.empty((n_m, max(longest, 1))),
        np.empty((n_m, max(longest, 1))),
    )

    # summary: layout first, then values
    headline = 100 if pyco else max_det
    second = int(dets[2]) if pyco and n_m > 2 else max_det
    layout: list[dict[str, Any]] = [
        {"key": "AP", "kind": "AP", "iou": None, "area": "all", "max_dets": headline},
        {"key": "AP50", "kind": "AP", "iou": 0.5, "area": "all", "max_dets": second},
        {"key": "AP75", "kind": "AP", "iou": 0.75, "area": "all", "max_dets": second},
    ]
    extra = area_names[1:]
    layout += [
        {
            "key": "AP" + _SHORT.get(n, "_" + n),
            "kind": "AP",
            "iou": None,
            "area": n,
            "max_dets": second,
        }
        for n in extra
    ]
    layout += [
        {"key": f"AR{int(d)}", "kind": "AR", "iou": None, "area": "all", "max_dets": int(d)}
        for d in dets
    ]
    layout += [
        {
            "key": "AR" + _SHORT.get(n, "_" + n),
            "kind": "AR",
            "iou": None,
            "area": n,
            "max_dets": second,
        }
        for n in extra
    ]

    def value(spec: Mapping[str, Any], *, per_class: bool = False) -> Any:
        a = area_names.index(spec["area"])
        m_list = [i for i, d in enumerate(dets.tolist()) if d == spec["max_dets"]]
        if not m_list or (per_class and n_k == 0):
            return np.full(n_k, -1.0) if per_class else -1.0
        t_index = (
            None if spec["iou"] is None else _threshold_index(iou_thr, spec["iou"], exact=pyco)
        )
        ap = spec["kind"] == "AP"
        array = precision if ap else recall
        if not per_class:
            return _summarize(array, t_index, a, m_list[0], precision=ap)
        s = (array if t_index is None else array[t_index])[..., a, m_list[0]]
        s = s.reshape(-1, n_k)  # [T*R, K] or [T, K]
        valid = s > -1
        count = valid.sum(axis=0)
        total = np.where(valid, s, 0.0).sum(axis=0)
        return np.where(count > 0, total / np.maximum(count, 1), -1.0)

    stats = {spec["key"]: value(spec) for spec in layout}

    # per class rows
    num_pred = np.bincount(p_cls, minlength=n_cats)[:n_cats] if n_cats else np.zeros(0, np.int64)
    gt_counts = np.bincount(g_cls[regular], minlength=n_cats)[:n_cats] if n_cats else num_pred
    names = dict(
        zip(ground_truth.categories.ids.tolist(), ground_truth.categories.names, strict=True)
    )
    ar_spec = {"key": f"AR{max_det}", "kind": "AR", "iou": None, "area": "all", "max_dets": second}
    class_values = {
        spec["key"]: value(spec, per_class=True).tolist() for spec in (*layout[:3], ar_spec)
    }
    per_class: list[dict[str, Any]] = []
    for k in range(n_k):
        row: dict[str, Any] = (
            {
                "category_id": int(cat_ids[k]),
                "name": names[int(cat_ids[k])],
                "num_gt": int(gt_counts[k]),
                "num_pred": int(num_pred[k]),
            }
            if use_cats
            else {
                "category_id": -1,
                "name": "(all classes)",
                "num_gt": int(gt_counts.sum()),
                "num_pred": int(num_pred.sum()),
            }
        )
        for key, values in class_values.items():
            row[key] = values[k]
        per_class.append(row)

    params: dict[str, Any] = {
        "iou_thresholds": iou_thr.tolist(),
        "recall_thresholds": rec_thr.tolist(),
        "max_dets": dets.tolist(),
        "area_ranges": {
            n: [float(lo), float(hi)]
            for n, lo, hi in zip(area_names, area_lo, area_hi, strict=True)
        },
        "use_cats": bool(use_cats),
        "compat": compat,
        "category_ids": cat_ids.tolist() if use_cats else [-1],
        "iou_type": iou_type,
        "stat_layout": [dict(spec) for spec in layout],
    }
    return ProtocolResult(
        "coco",
        stats,
        tuple(per_class),
        {"precision": precision, "recall": recall, "scores": scores},
        params,
    )


# ------------------------------------------------------------------------------------------------
# segm: masks in the run-length domain, IoU matrices of every group
# ------------------------------------------------------------------------------------------------


def _rle_of(seg: object, height: float, width: float, where: str) -> dict[str, Any]:
    """One record's segmentation as an RLE dict (pycocotools ``annToRLE``)."""
    from ioukit import masks

    if seg is None:
        raise DataFormatError(f"{where}: missing (needed for iou_type='segm')")
    if isinstance(seg, Mapping) and isinstance(seg.get("counts"), str | bytes):
        return dict(seg)  # compressed: checked when parsed with the others
    if isinstance(seg, Mapping) and "size" in seg and np.isnan(height):
        size = seg["size"]
        if isinstance(size, list | tuple) and len(size) == 2:
            height, width = size  # uncompressed RLE on an image of unknown size
    if isinstance(seg, list | tuple | Mapping) and (np.isnan(height) or np.isnan(width)):
        raise DataFormatError(
            f"{where}: polygons need the image size, but its image has no height/width"
        )
    try:
        return masks.from_annotation(
            dict(seg) if isinstance(seg, Mapping) else seg, int(height), int(width)
        )
    except DataFormatError as exc:
        raise DataFormatError(f"{where}: {exc}") from None


def _combine_runs(n: int, parts: list[tuple[np.ndarray, Any]]) -> Any:
    """One batch of ``n`` run-length encodings from parts ``(positions, _Runs)``."""
    from ioukit import masks

    lengths = np.zeros(n, dtype=np.int64)
    heights = np.zeros(n, dtype=np.int64)
    widths = np.zeros(n, dtype=np.int64)
    for pos, runs in parts:
        lengths[pos] = np.diff(runs.offsets)
        heights[pos] = runs.heights
        widths[pos] = runs.widths
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    counts = np.empty(int(offsets[-1]), dtype=np.int64)
    for pos, runs in parts:
        total = int(runs.offsets[-1] - runs.offsets[0])
        shift = np.repeat(offsets[pos] - runs.offsets[:-1], np.diff(runs.offsets))
        counts[np.arange(runs.offsets[0], runs.offsets[0] + total) + shift] = runs.counts[
            runs.offsets[0] : runs.offsets[-1]
        ]
    return masks._Runs(counts, offsets, heights, widths)


def _mask_runs(
    ds: Dataset, rows: np.ndarray, where: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intervals (starts, ends, offsets), boxes, areas and heights of ``ds``'s masks ``rows``.

    Every mask must have its image's size (taken from the first mask where the image table
    does not know it).
    """
    from ioukit import masks
    from ioukit._kernels import coco as kernels
    from ioukit._kernels import rle

    segs = ds.segmentation
    if segs is None:  # pragma: no cover - checked by evaluate_coco
        raise DataFormatError(f"{where}: no segmentation")
    img = ds.image_index[rows]
    heights = ds.images.heights[img]
    widths = ds.images.widths[img]
    # single polygons on images of known size: rasterised in one batch per image size;
    # everything else (RLE dicts, several polygons) as pycocotools' annToRLE, one by one
    n = len(rows)
    single: dict[tuple[int, int], list[int]] = {}
    others: list[int] = []
    for k, (r, h, w) in enumerate(
        zip(rows.tolist(), heights.tolist(), widths.tolist(), strict=True)
    ):
        seg = segs[r]
        if (
            isinstance(seg, list)
            and len(seg) == 1
            and isinstance(seg[0], list)
            and not (np.isnan(h) or np.isnan(w))
        ):
            single.setdefault((int(h), int(w)), []).append(k)
        else:
            others.append(k)
    parts: list[tuple[np.ndarray, masks._Runs]] = []
    for (h, w), ks in single.items():
        try:
            runs = masks._polygon_runs([segs[rows[k]][0] for k in ks], h, w, where)
        except DataFormatError:
            others.extend(ks)  # the one-by-one path names the bad record
            continue
        parts.append((np.array(ks, dtype=np.int64), runs))
    others.sort()
    dicts = [
        _rle_of(segs[rows[k]], heights[k], widths[k], f"{where}[{rows[k]}].segmentation")
        for k in others
    ]
    try:
        parts.append((np.array(others, dtype=np.int64), masks._parse_rles(dicts, where)))
    except DataFormatError:
        for k, d in zip(others, dicts, strict=True):
            masks._parse_rles([d], f"{where}[{rows[k]}].segmentation")
        raise
    runs = _combine_runs(n, parts)
    known = ~(np.isnan(heights) | np.isnan(widths))
    bad = known & ((runs.heights != heights) | (runs.widths != widths))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{where}[{rows[i]}].segmentation.size: expected the image size "
            f"[{int(heights[i])}, {int(widths[i])}], got [{runs.heights[i]}, {runs.widths[i]}]"
        )
    nint = np.empty(n, dtype=np.int64)
    rle.interval_count(runs.counts, runs.offsets, nint)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nint, out=offsets[1:])
    starts = np.empty(int(offsets[-1]), dtype=np.int64)
    ends = np.empty(int(offsets[-1]), dtype=np.int64)
    rle.interval_fill(runs.counts, runs.offsets, offsets, starts, ends)
    boxes = np.empty((n, 4), dtype=np.int64)
    kernels.mask_boxes(starts, ends, offsets, runs.heights, boxes)
    areas = np.empty(n, dtype=np.int64)
    rle.area(runs.counts, runs.offsets, areas)
    sizes = runs.heights * (1 << 32) + runs.widths
    return starts, ends, offsets, boxes, areas, sizes


def _group_mask_ious(
    ground_truth: Dataset,
    predictions: Dataset,
    g_rows: np.ndarray,
    p_rows: np.ndarray,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    pred_end: np.ndarray,
    max_det: int,
    gt_crowd: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Mask IoU matrices [P_i, G_i] of every group, flat, and their offsets."""
    from ioukit._kernels import coco as kernels

    kept = np.minimum(pred_end - pred_start, max_det)
    g_count = gt_end - gt_start
    sizes = np.where(g_count > 0, kept * g_count, 0)
    iou_offsets = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=iou_offsets[1:])
    iou_values = np.zeros(int(sizes.sum()), dtype=np.float64)
    # only the first max_det predictions of each group are evaluated: parse only those
    rank = np.arange(len(p_rows), dtype=np.int64) - np.repeat(pred_start, pred_end - pred_start)
    needed = rank < max_det
    g_runs = _mask_runs(ground_truth, g_rows, "annotations")
    p_sub = _mask_runs(predictions, p_rows[needed], "results")
    # kept predictions of a group are contiguous in p_sub: group i starts at sub_start[i]
    sub_start = np.zeros(len(kept), dtype=np.int64)
    np.cumsum(kept[:-1], out=sub_start[1:])
    # one size per group: every kept prediction must have its ground truths' size
    both = (kept > 0) & (g_count > 0)
    group_size = np.zeros(len(g_count), dtype=np.int64)
    group_size[both] = g_runs[5][gt_start[both]]
    g_group = np.repeat(np.arange(len(g_count)), g_count)
    p_group = np.repeat(np.arange(len(kept)), kept)
    for group_of, own, label, rows in (
        (g_group, g_runs[5], "annotations", g_rows),
        (p_group, p_sub[5], "results", p_rows[needed]),
    ):
        wrong = both[group_of] & (own != group_size[group_of])
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            want, got = int(group_size[group_of[i]]), int(own[i])
            raise DataFormatError(
                f"{label}[{rows[i]}].segmentation.size: expected the size of the other masks "
                f"of its image, [{want >> 32}, {want & 0xFFFFFFFF}], got "
                f"[{got >> 32}, {got & 0xFFFFFFFF}]"
            )
    kernels.group_mask_iou(
        gt_start,
        gt_end,
        sub_start,
        kept,
        np.ascontiguousarray(group_size >> 32),
        p_sub[0],
        p_sub[1],
        p_sub[2],
        p_sub[3],
        p_sub[4],
        g_runs[0],
        g_runs[1],
        g_runs[2],
        g_runs[3],
        g_runs[4],
        np.ascontiguousarray(gt_crowd),
        iou_offsets,
        iou_values,
    )
    return iou_values, iou_offsets
