"""Mask IoU of every group in the run-length domain (private; the ``"segm"`` similarity).

Moved from ``metrics/coco.py``: masks are parsed once (single polygons rasterised in batches per
image size, everything else as pycocotools' ``annToRLE``), turned into foreground intervals,
and every group's [P_i, G_i] matrix is filled by one kernel call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ioukit import masks
from ioukit._kernels import rle
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.evaluation.groups import GroupMatrices, Groups
from ioukit.evaluation.registry import register_similarity

__all__ = ["MaskIoU"]


def _u8(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.bool_).view(np.uint8)


@dataclass(frozen=True, slots=True)
class MaskIoU:
    """Mask IoU in the run-length domain (pycocotools ``maskUtils.iou``), crowd-aware.

    Needs ``segmentation`` on both datasets (polygons or RLE dicts) and the images' sizes for
    polygons. Against a crowd ground truth the union is the prediction's mask area.
    """

    reads: ClassVar[str] = "segmentation"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Mask IoU of every group."""
        for ds, name in ((gt, "ground_truth"), (pred, "predictions")):
            if ds.segmentation is None:
                raise DataFormatError(
                    f"{name}.segmentation: expected masks (polygons or RLE) for "
                    "iou_type='segm', got none (read COCO files with keep_segmentation=True)"
                )
        values, offsets = _group_mask_ious(
            gt,
            pred,
            groups.gt_rows,
            groups.pred_rows,
            groups.gt_start,
            groups.gt_end,
            groups.pred_start,
            groups.pred_end,
            groups.max_det,
            np.ascontiguousarray(gt.crowd[groups.gt_rows]),
        )
        return GroupMatrices(values, offsets)


register_similarity("segm", MaskIoU)


def _rle_kernel(name: str) -> Any:
    """``name`` from the compiled run-length kernels (``_kernels.rle``)."""

    return getattr(rle, name)


def _rle_of(seg: object, height: float, width: float, where: str) -> dict[str, Any]:
    """One record's segmentation as an RLE dict (pycocotools ``annToRLE``)."""
    if type(seg) is dict and type(seg.get("counts")) in (str, bytes):
        return dict(seg)  # the common case (a compressed RLE), without the checks below

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


PolygonCoords = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Flat coordinates (2K,), their offsets (N + 1,), image heights and widths (N,) and the
rasteriser's room per polygon (N,) of N single polygons."""


def _single_polygon_coords(
    segs: tuple[Any, ...],
    rows: np.ndarray,
    ks: np.ndarray,
    heights: np.ndarray,
    widths: np.ndarray,
) -> tuple[np.ndarray, PolygonCoords | None]:
    """The masks ``ks`` (positions in ``rows``) that are one polygon of plain numbers on an
    image of known size, read from the lists by the kernel: ``(positions, coordinates)``.
    ``(positions, None)`` when any coordinate is not finite or out of reach:
    :func:`masks.polygon_runs`, per size, then words it."""
    sub = np.ascontiguousarray(rows[ks], dtype=np.int64)
    lengths = np.empty(len(ks), dtype=np.int64)
    rle.single_polygons(segs, sub, lengths)
    known = ~(np.isnan(heights[ks]) | np.isnan(widths[ks]))
    take = (lengths >= 0) & known
    fast = ks[take]
    if not fast.size:
        return fast, None
    lengths = lengths[take]
    n = len(fast)
    xy_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=xy_offsets[1:])
    flat = np.empty(int(xy_offsets[-1]), dtype=np.float64)
    rle.single_polygons_fill(segs, sub[take], xy_offsets, flat)
    h = heights[fast].astype(np.int64)
    w = widths[fast].astype(np.int64)
    # masks.polygon_runs' checks: finite, within [-W, 2W] x [-H, 2H] of its image
    ph, pw = np.repeat(h, lengths // 2), np.repeat(w, lengths // 2)
    xs, ys = flat[0::2], flat[1::2]
    if not (np.isfinite(flat).all() and ((xs >= -pw) & (xs <= 2 * pw) & (ys >= -ph)
                                         & (ys <= 2 * ph)).all()):  # fmt: skip
        return fast, None
    capacity = np.empty(n, dtype=np.int64)
    rle.polygons_capacity(flat, xy_offsets, capacity)
    return fast, (flat, xy_offsets, h, w, capacity)


def _single_polygon_runs(
    segs: tuple[Any, ...],
    rows: np.ndarray,
    ks: np.ndarray,
    heights: np.ndarray,
    widths: np.ndarray,
) -> tuple[np.ndarray, masks.RunLengths | None]:
    """:func:`_single_polygon_coords`' polygons rasterised in one kernel call (each on its
    image's size): ``(positions, runs)``, or ``(positions, None)`` as it."""
    fast, coords = _single_polygon_coords(segs, rows, ks, heights, widths)
    if coords is None:
        return fast, None
    flat, xy_offsets, h, w, capacity = coords
    nruns = np.empty(len(fast), dtype=np.int64)
    counts = rle.polygons_runs(flat, xy_offsets, h, w, capacity, nruns)
    offsets = np.zeros(len(fast) + 1, dtype=np.int64)
    np.cumsum(nruns, out=offsets[1:])
    return fast, masks.RunLengths(counts, offsets, h, w)


def _slow_runs(
    segs: tuple[Any, ...],
    rows: np.ndarray,
    ks: list[int],
    heights: np.ndarray,
    widths: np.ndarray,
    where: str,
    *,
    fast_polygons: bool = True,
) -> list[tuple[np.ndarray, masks.RunLengths]]:
    """Masks ``ks`` (positions in ``rows``) that are not plain compressed RLE dicts: single
    polygons on images of known size rasterised in one kernel call (``fast_polygons``:
    :func:`_single_polygon_runs`) or one batch per image size, everything else
    (uncompressed RLE, several polygons, odd dicts) as pycocotools' ``annToRLE``, one by one.
    Returns ``(positions, runs)`` parts."""
    parts: list[tuple[np.ndarray, masks.RunLengths]] = []
    if fast_polygons:
        fast, runs = _single_polygon_runs(
            segs, rows, np.asarray(ks, dtype=np.int64), heights, widths
        )
        if runs is not None:
            parts.append((fast, runs))
            ks = np.setdiff1d(np.asarray(ks, dtype=np.int64), fast, assume_unique=True).tolist()
    single: dict[tuple[int, int], list[int]] = {}
    others: list[int] = []
    row_list, h_list, w_list = rows.tolist(), heights.tolist(), widths.tolist()
    for k in ks:
        seg = segs[row_list[k]]
        h, w = h_list[k], w_list[k]
        if (
            isinstance(seg, list)
            and len(seg) == 1
            and isinstance(seg[0], list)
            and not (math.isnan(h) or math.isnan(w))
        ):
            single.setdefault((int(h), int(w)), []).append(k)
        else:
            others.append(k)
    for (h, w), group in single.items():
        try:
            runs = masks.polygon_runs([segs[row_list[k]][0] for k in group], h, w, name=where)
        except DataFormatError:
            others.extend(group)  # the one-by-one path names the bad record
            continue
        parts.append((np.array(group, dtype=np.int64), runs))
    if not others:
        return parts
    others.sort()
    dicts = [
        _rle_of(segs[rows[k]], heights[k], widths[k], f"{where}[{rows[k]}].segmentation")
        for k in others
    ]
    try:
        parts.append((np.array(others, dtype=np.int64), masks.parse_rles(dicts, name=where)))
    except DataFormatError:
        for k, d in zip(others, dicts, strict=True):
            masks.parse_rles([d], name=f"{where}[{rows[k]}].segmentation")
        raise
    return parts


def _mask_runs(
    ds: Dataset, rows: np.ndarray, where: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Intervals (starts, ends, offsets), boxes, areas and sizes of ``ds``'s masks ``rows``.

    Plain compressed RLE dicts (the COCO results' form) are decoded straight into intervals by
    the kernels; the rest go through :class:`masks.RunLengths` (see :func:`_slow_runs`). Every
    mask must have its image's size (taken from the first mask where the image table does not
    know it).
    """

    segs = ds.segmentation
    if segs is None:  # pragma: no cover - checked by evaluate_coco
        raise DataFormatError(f"{where}: no segmentation")
    segs = tuple(segs)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    img = ds.image_index[rows]
    heights = ds.images.heights[img]
    widths = ds.images.widths[img]
    n = len(rows)
    plain = np.zeros(n, dtype=np.uint8)
    mask_h = np.zeros(n, dtype=np.int64)
    mask_w = np.zeros(n, dtype=np.int64)
    rle.plain_rle_sizes(segs, rows, plain, mask_h, mask_w)
    nint = np.zeros(n, dtype=np.int64)
    if rle.plain_rle_count(segs, rows, plain, nint) >= 0:
        plain[:] = 0  # a refused string: the Python path names it and says why
    rest = np.flatnonzero(plain == 0)
    # single polygons straight to intervals (no run array of them all)
    fast, coords = _single_polygon_coords(segs, rows, rest, heights, widths)
    polygons: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    if coords is not None:
        flat, xy_offsets, h, w, capacity = coords
        p_nint = np.empty(len(fast), dtype=np.int64)
        p_starts, p_ends = rle.polygons_intervals(flat, xy_offsets, h, w, capacity, p_nint)
        del flat, coords
        mask_h[fast], mask_w[fast], nint[fast] = h, w, p_nint
        polygons = (fast, p_starts, p_ends, p_nint)
        rest = np.setdiff1d(rest, fast, assume_unique=True)
    parts = _slow_runs(segs, rows, rest.tolist(), heights, widths, where, fast_polygons=False)
    for pos, runs in parts:
        mask_h[pos] = runs.heights
        mask_w[pos] = runs.widths
        counted = np.empty(len(pos), dtype=np.int64)
        rle.interval_count(runs.counts, runs.offsets, counted)
        nint[pos] = counted
    known = ~(np.isnan(heights) | np.isnan(widths))
    bad = known & ((mask_h != heights) | (mask_w != widths))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{where}[{rows[i]}].segmentation.size: expected the image size "
            f"[{int(heights[i])}, {int(widths[i])}], got [{mask_h[i]}, {mask_w[i]}]"
        )
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nint, out=offsets[1:])
    if polygons is not None and len(polygons[0]) == n:  # every mask one polygon, in order
        starts, ends = polygons[1], polygons[2]
    else:
        starts = np.empty(int(offsets[-1]), dtype=np.int64)
        ends = np.empty(int(offsets[-1]), dtype=np.int64)
        rle.plain_rle_fill(segs, rows, plain, offsets, starts, ends)
        for pos, runs in parts:
            rle.interval_fill(runs.counts, runs.offsets, offsets[pos], starts, ends)
        if polygons is not None:
            pos, p_starts, p_ends, p_nint = polygons
            first = np.zeros(len(pos), dtype=np.int64)
            np.cumsum(p_nint[:-1], out=first[1:])
            at = np.repeat(offsets[pos] - first, p_nint) + np.arange(len(p_starts))
            starts[at] = p_starts
            ends[at] = p_ends
    boxes = np.empty((n, 4), dtype=np.int64)
    rle.mask_boxes(starts, ends, offsets, mask_h, boxes)
    areas = np.empty(n, dtype=np.int64)
    rle.interval_area(starts, ends, offsets, areas)
    sizes = mask_h * (1 << 32) + mask_w
    return starts, ends, offsets, boxes, areas, sizes


def _check_group_sizes(
    both: np.ndarray,
    group_size: np.ndarray,
    g_count: np.ndarray,
    kept: np.ndarray,
    g_sizes: np.ndarray,
    p_sizes: np.ndarray,
    g_rows: np.ndarray,
    p_rows: np.ndarray,
) -> None:
    """Refuse a mask of a group (both sides non-empty: ``both``) whose packed size differs
    from its group's ``group_size``, naming its row; ``g_count`` / ``kept`` masks per group."""
    g_group = np.repeat(np.arange(len(g_count)), g_count)
    p_group = np.repeat(np.arange(len(kept)), kept)
    for group_of, own, label, rows in (
        (g_group, g_sizes, "annotations", g_rows),
        (p_group, p_sizes, "results", p_rows),
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


def _plain_group_ious(
    predictions: Dataset,
    p_kept: np.ndarray,
    kept: np.ndarray,
    group_size: np.ndarray,
    g_runs: tuple[np.ndarray, ...],
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    sub_start: np.ndarray,
    gt_crowd: np.ndarray,
    iou_offsets: np.ndarray,
    iou_values: np.ndarray,
) -> bool:
    """Fill ``iou_values`` when every kept prediction is a plain compressed RLE dict of the
    right size: each group's predictions are decoded by the kernel into a per-thread scratch
    (no intervals of all predictions at once). False when anything is odd (polygons, sizes
    that differ, a bad string): then the general path runs and words the error."""
    segs = predictions.segmentation
    if segs is None:  # pragma: no cover - checked by matrices
        return False
    img = predictions.image_index[p_kept]
    image_h = np.ascontiguousarray(predictions.images.heights[img])
    image_w = np.ascontiguousarray(predictions.images.widths[img])
    rest = (gt_start, gt_end, sub_start, kept, group_size, *g_runs[:5], gt_crowd, iou_offsets,
            iou_values)  # fmt: skip
    if isinstance(segs, masks.RleStrings):  # the reader's flat strings, read in place
        code = _rle_kernel("group_rle_strings_iou")(
            segs.counts, segs.offsets, segs.heights, segs.widths, p_kept, image_h, image_w, *rest
        )
    else:
        code = _rle_kernel("group_rle_iou")(tuple(segs), p_kept, image_h, image_w, *rest)
    return bool(code == -1)


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
    # kept predictions of a group are contiguous in p_sub: group i starts at sub_start[i]
    sub_start = np.zeros(len(kept), dtype=np.int64)
    np.cumsum(kept[:-1], out=sub_start[1:])
    # one size per group: every kept prediction must have its ground truths' size
    both = (kept > 0) & (g_count > 0)
    group_size = np.zeros(len(g_count), dtype=np.int64)
    group_size[both] = g_runs[5][gt_start[both]]
    p_kept = np.ascontiguousarray(p_rows[needed], dtype=np.int64)
    if _plain_group_ious(
        predictions, p_kept, kept, group_size, g_runs, gt_start, gt_end, sub_start,
        np.ascontiguousarray(gt_crowd), iou_offsets, iou_values,
    ):  # fmt: skip
        return iou_values, iou_offsets
    p_sub = _mask_runs(predictions, p_kept, "results")
    _check_group_sizes(both, group_size, g_count, kept, g_runs[5], p_sub[5], g_rows, p_rows[needed])
    _rle_kernel("group_mask_iou")(
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


# ---- boundary AP: the masks as run lengths, parsed once for the mask IoU and a derived
# ---- mask (the boundary) of each; the general path (no fused decoding) serves both


def _combine_runs(n: int, parts: list[tuple[np.ndarray, Any]]) -> masks.RunLengths:
    """One batch of ``n`` run-length encodings from parts ``(positions, masks.RunLengths)``."""

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
    return masks.RunLengths(counts, offsets, heights, widths)


def _mask_run_lengths(ds: Dataset, rows: np.ndarray, where: str) -> masks.RunLengths:
    """The run lengths of ``ds``'s masks ``rows``.

    Every mask must have its image's size (taken from the first mask where the image table
    does not know it).
    """

    segs = ds.segmentation
    if segs is None:  # pragma: no cover - checked by evaluate_coco
        raise DataFormatError(f"{where}: no segmentation")
    img = ds.image_index[rows]
    heights = ds.images.heights[img]
    widths = ds.images.widths[img]
    n = len(rows)
    runs = _strings_runs(segs, rows, where)
    if runs is None:
        runs = _combine_runs(
            n, _slow_runs(tuple(segs), rows, list(range(n)), heights, widths, where)
        )
    known = ~(np.isnan(heights) | np.isnan(widths))
    bad = known & ((runs.heights != heights) | (runs.widths != widths))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{where}[{rows[i]}].segmentation.size: expected the image size "
            f"[{int(heights[i])}, {int(widths[i])}], got [{runs.heights[i]}, {runs.widths[i]}]"
        )
    return runs


def _strings_runs(segs: Sequence[object], rows: np.ndarray, where: str) -> masks.RunLengths | None:
    """The run lengths of the masks ``rows`` of a reader's flat strings, decoded in place;
    None for other segmentations, or when a string is refused (the general path names it)."""
    if not isinstance(segs, masks.RleStrings):
        return None
    try:
        return segs.take(rows).to_runs(name=where)
    except DataFormatError:
        return None


MaskIntervals = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Foreground intervals (starts, ends, offsets), boxes, areas and packed sizes of N masks."""


def _intervals(runs: masks.RunLengths) -> MaskIntervals:
    """The interval form the group kernel reads, of every mask of ``runs``."""
    n = len(runs)
    nint = np.empty(n, dtype=np.int64)
    rle.interval_count(runs.counts, runs.offsets, nint)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nint, out=offsets[1:])
    starts = np.empty(int(offsets[-1]), dtype=np.int64)
    ends = np.empty(int(offsets[-1]), dtype=np.int64)
    rle.interval_fill(runs.counts, runs.offsets, offsets, starts, ends)
    boxes = np.empty((n, 4), dtype=np.int64)
    _rle_kernel("mask_boxes")(starts, ends, offsets, runs.heights, boxes)
    areas = np.empty(n, dtype=np.int64)
    rle.area(runs.counts, runs.offsets, areas)
    sizes = runs.heights * (1 << 32) + runs.widths
    return starts, ends, offsets, boxes, areas, sizes


def _group_derived_ious(
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
    *,
    derived: Callable[[masks.RunLengths], masks.RunLengths] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Mask IoU matrices [P_i, G_i] of every group, flat, and their offsets.

    With ``derived`` (a function of a batch of run lengths to as many masks of the same
    sizes, e.g. their boundaries), also the plain IoU (no crowd rule) of the derived masks of
    every pair, laid out as the first; the masks are parsed once for both.
    """
    kept = np.minimum(pred_end - pred_start, max_det)
    g_count = gt_end - gt_start
    sizes = np.where(g_count > 0, kept * g_count, 0)
    iou_offsets = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=iou_offsets[1:])
    # only the first max_det predictions of each group are evaluated: parse only those
    rank = np.arange(len(p_rows), dtype=np.int64) - np.repeat(pred_start, pred_end - pred_start)
    needed = rank < max_det
    g_masks = _mask_run_lengths(ground_truth, g_rows, "annotations")
    p_masks = _mask_run_lengths(predictions, p_rows[needed], "results")
    g_runs = _intervals(g_masks)
    p_sub = _intervals(p_masks)
    # kept predictions of a group are contiguous in p_sub: group i starts at sub_start[i]
    sub_start = np.zeros(len(kept), dtype=np.int64)
    np.cumsum(kept[:-1], out=sub_start[1:])
    # one size per group: every kept prediction must have its ground truths' size
    both = (kept > 0) & (g_count > 0)
    group_size = np.zeros(len(g_count), dtype=np.int64)
    group_size[both] = g_runs[5][gt_start[both]]
    _check_group_sizes(both, group_size, g_count, kept, g_runs[5], p_sub[5], g_rows, p_rows[needed])

    def fill(g: MaskIntervals, p: MaskIntervals, crowd: np.ndarray) -> np.ndarray:
        values = np.zeros(int(sizes.sum()), dtype=np.float64)
        _rle_kernel("group_mask_iou")(
            gt_start,
            gt_end,
            sub_start,
            kept,
            np.ascontiguousarray(group_size >> 32),
            *p[:5],
            *g[:5],
            np.ascontiguousarray(crowd),
            iou_offsets,
            values,
        )
        return values

    iou_values = fill(g_runs, p_sub, gt_crowd)
    if derived is None:
        return iou_values, iou_offsets, None
    # the derived masks of the masks in a pair of positive IoU with a regular ground truth
    # only (the others stand for empty masks: callers take min(IoU, derived IoU) there, and 0
    # against a crowd it is not read)
    group = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(len(iou_values), dtype=np.int64) - iou_offsets[group]
    g_of = g_count[group]
    gi = gt_start[group] + local % np.maximum(g_of, 1)
    pi = sub_start[group] + local // np.maximum(g_of, 1)
    live = (iou_values > 0) & ~np.asarray(gt_crowd, dtype=bool)[gi]
    g_need = np.zeros(len(g_masks), dtype=bool)
    g_need[gi[live]] = True
    p_need = np.zeros(len(p_masks), dtype=bool)
    p_need[pi[live]] = True
    no_crowd = np.zeros(len(gt_crowd), dtype=np.asarray(gt_crowd).dtype)
    extra = fill(
        _intervals(derived(_emptied(g_masks, g_need))),
        _intervals(derived(_emptied(p_masks, p_need))),
        no_crowd,
    )
    return iou_values, iou_offsets, extra


def _emptied(runs: masks.RunLengths, keep: np.ndarray) -> masks.RunLengths:
    """``runs`` with every mask not in ``keep`` replaced by the empty mask of its size."""
    if keep.all():
        return runs
    lengths = np.where(keep, np.diff(runs.offsets), 1)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    counts = np.empty(int(offsets[-1]), dtype=np.int64)
    counts[offsets[:-1][~keep]] = (runs.heights * runs.widths)[~keep]
    src_len = np.diff(runs.offsets)[keep]
    src = np.repeat(runs.offsets[:-1][keep] - offsets[:-1][keep], src_len)
    dst = np.repeat(offsets[:-1][keep], src_len) + (
        np.arange(int(src_len.sum()), dtype=np.int64)
        - np.repeat(np.cumsum(src_len) - src_len, src_len)
    )
    counts[dst] = runs.counts[dst + src]
    return masks.RunLengths(counts, offsets, runs.heights, runs.widths)
