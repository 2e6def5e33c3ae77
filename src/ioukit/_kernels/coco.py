"""Numba kernels of COCO segm evaluation that the run-length port has not moved yet (private).

* :func:`mask_boxes`: half-open pixel boxes of masks of different heights;
* :func:`group_mask_iou`: every (image, class) group's mask IoU matrix in the run-length
  domain (the ``"segm"`` similarity of :mod:`ioukit.evaluation.similarity`).

Matching and accumulation moved to the compiled pipeline kernels (``ioukit._kernels.match``).
These two move to ``ioukit._kernels.rle`` with the same signatures; the plain-Python twin of
``group_mask_iou`` is in ``tests/test_segm_parity.py``.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from ioukit._kernels.rle import _fill_row as fill_row
from ioukit._kernels.rle import interval_boxes

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}


@njit(**_OPTIONS)
def mask_boxes(starts, ends, ioffsets, heights, out):  # type: ignore[no-untyped-def]
    """Half-open pixel boxes (N, 4) int64 of masks of different heights (rle.interval_boxes)."""
    for i in range(heights.shape[0]):
        interval_boxes(starts, ends, ioffsets[i : i + 2], max(heights[i], 1), out[i : i + 1])


@njit(**_OPTIONS)
def group_mask_iou(  # type: ignore[no-untyped-def]
    gt_start,
    gt_end,
    pred_start,
    pred_count,
    heights,
    pred_starts,
    pred_ends,
    pred_offsets,
    pred_boxes,
    pred_areas,
    gt_starts,
    gt_ends,
    gt_offsets,
    gt_boxes,
    gt_areas,
    gt_crowd,
    iou_offsets,
    iou_values,
):
    """Fill every group's mask IoU matrix [P_i, G_i] into ``iou_values`` at ``iou_offsets``.

    Group ``i`` has predictions ``pred_start[i]:pred_start[i] + pred_count[i]`` and ground
    truths ``gt_start[i]:gt_end[i]``. Masks are foreground intervals (``*_starts``/``*_ends``
    with per-mask ``*_offsets``), half-open pixel boxes and areas, as
    :func:`ioukit.masks.mask_iou` computes them; every mask of group ``i`` has height
    ``heights[i]``. Values are those of ``mask_iou(pred, gt, crowd=gt_crowd)``
    (pycocotools ``maskUtils.iou``).
    """
    for group in range(gt_start.shape[0]):
        g0 = gt_start[group]
        p0 = pred_start[group]
        n_gt = gt_end[group] - g0
        n_pred = pred_count[group]
        if n_pred <= 0 or n_gt <= 0:
            continue
        i0 = iou_offsets[group]
        iou = iou_values[i0 : i0 + n_pred * n_gt].reshape((n_pred, n_gt))
        for d in range(n_pred):
            fill_row(
                d,
                heights[group],
                pred_starts,
                pred_ends,
                pred_offsets[p0 : p0 + n_pred + 1],
                pred_boxes[p0 : p0 + n_pred],
                gt_starts,
                gt_ends,
                gt_offsets[g0 : g0 + n_gt + 1],
                gt_boxes[g0 : g0 + n_gt],
                pred_areas[p0 : p0 + n_pred],
                gt_areas[g0 : g0 + n_gt],
                gt_crowd[g0 : g0 + n_gt],
                0,
                iou,
            )
