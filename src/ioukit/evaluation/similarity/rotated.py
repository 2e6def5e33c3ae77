"""The ``"rotated"`` and ``"probiou"`` similarities (oriented boxes).

Where a dataset's oriented boxes come from (first found): the ``rotated`` column
(``cx, cy, w, h, angle``, degrees counter-clockwise), else a one-polygon segmentation of 8
numbers (the corners, as the DOTA and YOLO OBB readers keep them), else the axis-aligned box.

* ``iou_type="rotated"``: the exact IoU of :func:`ioukit.rotated_box_iou` (float64). With
  ``protocol="coco"`` this is detectron2's ``RotatedCOCOeval`` (pycocotools with the rotated
  IoU); crowd ground truths are refused, as detectron2 asserts ``iscrowd == 0``. The COCO
  area ranges read the datasets' ``area`` column: the DOTA, YOLO OBB and ``coco_rotated``
  readers fill it with the polygon area (``w * h``); a Dataset built by hand with ``rotated=``
  should pass ``area=w * h`` too (its default is the envelope's area).
* ``iou_type="probiou"``: Ultralytics' Gaussian similarity (:func:`ioukit.probiou`), to
  reproduce numbers computed with it; it is not the IoU.

Examples
--------
The two similarities of one pair of oriented boxes (``protocol="coco"`` or ``"dota"`` with
``iou_type="rotated"``: :mod:`ioukit.evaluation.protocols.rotated`):

>>> import ioukit
>>> a, b = [[50, 50, 40, 20, 30]], [[52, 50, 40, 20, 35]]
>>> round(float(ioukit.rotated_box_iou(a, b)[0, 0]), 6), round(float(ioukit.probiou(a, b)[0, 0]), 6)
(0.822948, 0.904776)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ioukit._host import host_float64
from ioukit._kernels import rotated as kernels
from ioukit._rotated_corners import check_convex, signed_area4
from ioukit.boxes import box_convert
from ioukit.dataset import Dataset
from ioukit.errors import BoxError, DataFormatError
from ioukit.evaluation.groups import GroupMatrices, Groups
from ioukit.evaluation.registry import register_similarity
from ioukit.io._oriented import dataset_quads
from ioukit.overlap.rotated import probiou_elementwise

__all__ = [
    "ROTATED_BOX_FORMATS",
    "ProbIoUSimilarity",
    "RotatedIoU",
    "dataset_corners",
    "rotated_columns",
    "streamed_rotated",
]


def dataset_corners(ds: Dataset, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Corners (N, 8) float64 and zero-area flags (N,) of a dataset's oriented boxes.

    From ``ds.rotated`` when present, else one-polygon 8-number segmentations, else the boxes.
    Quadrilaterals must be convex (:class:`~ioukit.errors.BoxError` otherwise).
    """

    if ds.rotated is not None:
        rotated = np.asarray(ds.rotated, dtype=np.float64).reshape(-1, 5)
        corners = np.ascontiguousarray(box_convert(rotated, "cxcywhr", "xyxyxyxy"))
        return corners, (rotated[:, 2] == 0) | (rotated[:, 3] == 0)
    corners = np.ascontiguousarray(dataset_quads(ds))
    check_convex(corners, f"{name} oriented boxes")
    import array_api_compat.numpy as xp

    return corners, np.asarray(signed_area4(xp, corners) == 0)


ROTATED_BOX_FORMATS = ("cxcywhr", "xywhr", "xyxyxyxy")


def streamed_rotated(
    value: object, name: str, box_format: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oriented boxes of one image's side of ``Evaluator.update``, checked.

    Parameters
    ----------
    value : array_like, shape (N, 5) or (N, 8)
        ``cxcywhr``/``xywhr`` boxes (degrees, counter-clockwise) or convex quadrilaterals'
        corners; a sequence, NumPy array or torch tensor.
    name : str
        Where ``value`` came from, for error messages.
    box_format : {"cxcywhr", "xywhr", "xyxyxyxy"} or None
        None: by width (5 -> ``cxcywhr``, 8 -> ``xyxyxyxy``).

    Returns
    -------
    boxes : ndarray of float64, shape (N, 5) or (N, 8)
        ``cxcywhr`` boxes or corners.
    envelope : ndarray of float64, shape (N, 4)
        Axis-aligned xyxy envelopes.
    area : ndarray of float64, shape (N,)
        Polygon areas.

    Examples
    --------
    >>> boxes, envelope, area = streamed_rotated([[5, 5, 4, 2, 0]], "targets[0].boxes", None)
    >>> envelope.tolist(), area.tolist()
    ([[3.0, 4.0, 7.0, 6.0]], [8.0])
    """

    boxes = np.asarray(host_float64(value, name), dtype=np.float64)
    if boxes.size == 0:
        boxes = boxes.reshape(0, 5 if box_format in (None, "cxcywhr", "xywhr") else 8)
    width = {"cxcywhr": 5, "xywhr": 5, "xyxyxyxy": 8}.get(box_format or "", 0)
    if boxes.ndim != 2 or boxes.shape[1] not in ((5, 8) if width == 0 else (width,)):
        want = "(N, 5) or (N, 8)" if width == 0 else f"(N, {width}) for {box_format!r}"
        raise BoxError(f"{name}: expected oriented boxes of shape {want}, got {boxes.shape}")
    bad = ~np.isfinite(boxes).all(axis=1)
    if bad.any():
        raise BoxError(f"{name}[{int(np.flatnonzero(bad)[0])}]: expected finite numbers")
    if boxes.shape[1] == 5:
        if box_format == "xywhr":
            boxes = np.asarray(box_convert(boxes, "xywhr", "cxcywhr"), dtype=np.float64)
        neg = (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
        if neg.any():
            i = int(np.flatnonzero(neg)[0])
            raise BoxError(f"{name}[{i}]: expected width and height >= 0, got {boxes[i].tolist()}")
        area = boxes[:, 2] * boxes[:, 3]
        envelope = np.asarray(box_convert(boxes, "cxcywhr", "xyxy"), dtype=np.float64).reshape(
            -1, 4
        )
    else:
        check_convex(boxes, name)
        x, y = boxes[:, 0::2], boxes[:, 1::2]
        area = (
            np.abs(
                (x * np.roll(y, -1, axis=1)).sum(axis=1) - (np.roll(x, -1, axis=1) * y).sum(axis=1)
            )
            / 2
        )
        envelope = _envelope(boxes) if len(boxes) else np.zeros((0, 4))
    return boxes, envelope, area


def rotated_columns(parts: list[np.ndarray]) -> dict[str, Any]:
    """The Dataset column of streamed oriented boxes: ``rotated`` or ``segmentation``.

    Parameters
    ----------
    parts : list of ndarray, each of shape (N_i, 5) or (N_i, 8)
        Each image's boxes as :func:`streamed_rotated` returns them.

    Returns
    -------
    dict
        ``{"rotated": (sum N_i, 5) cxcywhr}`` when every part is 5 wide, else
        ``{"segmentation": [[corners], ...]}`` with one 8-number polygon per box.

    Examples
    --------
    >>> rotated_columns([np.array([[5.0, 5.0, 4.0, 2.0, 0.0]])])["rotated"].shape
    (1, 5)
    """

    if all(p.shape[1] == 5 for p in parts):
        rot = np.concatenate(parts) if parts else np.zeros((0, 5))
        return {"rotated": rot}
    corners = np.concatenate(
        [p if p.shape[1] == 8 else np.asarray(box_convert(p, "cxcywhr", "xyxyxyxy")).reshape(-1, 8)
         for p in parts]
    )  # fmt: skip
    return {"segmentation": [[row] for row in corners.tolist()]}


def _envelope(corners: np.ndarray) -> np.ndarray:
    xs, ys = corners[:, 0::2], corners[:, 1::2]
    return np.ascontiguousarray(
        np.stack([xs.min(1), ys.min(1), xs.max(1), ys.max(1)], axis=1).reshape(-1, 4)
    )


def _refuse_crowd(gt: Dataset, groups: Groups) -> None:
    crowd = gt.crowd[groups.gt_rows]
    if crowd.any():
        row = int(groups.gt_rows[int(np.flatnonzero(crowd)[0])])
        raise DataFormatError(
            f"ground_truth[{row}]: crowd regions have no rotated IoU (detectron2's "
            "RotatedCOCOeval asserts iscrowd == 0); mark them ignore instead"
        )


@dataclass(frozen=True, slots=True)
class RotatedIoU:
    """The exact rotated-box IoU of every group (see the module notes for the box source)."""

    reads: ClassVar[str] = "rotated"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Rotated IoU [P_i, G_i] of every group, float64."""

        _refuse_crowd(gt, groups)
        out = GroupMatrices.allocate(groups)
        g_c, g_d = dataset_corners(gt, "ground_truth")
        p_c, p_d = dataset_corners(pred, "predictions")
        g_c, g_d = g_c[groups.gt_rows], g_d[groups.gt_rows]
        p_c, p_d = p_c[groups.pred_rows], p_d[groups.pred_rows]
        kernels.group_iou(
            groups.gt_start,
            groups.gt_end,
            groups.pred_start,
            np.ascontiguousarray(groups.kept_count, dtype=np.int64),
            np.ascontiguousarray(g_c),
            _envelope(g_c),
            g_d.astype(np.uint8),
            np.ascontiguousarray(p_c),
            _envelope(p_c),
            p_d.astype(np.uint8),
            out.offsets,
            out.values,
        )
        return out


@dataclass(frozen=True, slots=True)
class ProbIoUSimilarity:
    """Ultralytics' probiou of every group (not an IoU; see :func:`ioukit.probiou`).

    Boxes are taken as rectangles: from ``rotated``, else fitted to the corners as torchvision's
    ``xyxyxyxy -> cxcywhr`` does (first edge = width).
    """

    reads: ClassVar[str] = "rotated"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    eps: float = 1e-7

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """probiou [P_i, G_i] of every group."""

        _refuse_crowd(gt, groups)
        out = GroupMatrices.allocate(groups)
        rects = []
        for ds, name in ((gt, "ground_truth"), (pred, "predictions")):
            if ds.rotated is not None:
                rects.append(np.asarray(ds.rotated, dtype=np.float64).reshape(-1, 5))
            else:
                corners, _ = dataset_corners(ds, name)
                rects.append(box_convert(corners, "xyxyxyxy", "cxcywhr"))
        g_r, p_r = rects[0][groups.gt_rows], rects[1][groups.pred_rows]
        # every (prediction, ground truth) pair of every group, in the matrices' row-major order
        g_count = groups.gt_count
        sizes = np.where(g_count > 0, groups.kept_count * g_count, 0)
        group = np.repeat(np.arange(len(sizes)), sizes)
        local = np.arange(int(sizes.sum())) - np.repeat(out.offsets, sizes)
        width = g_count[group]
        p_idx = groups.pred_start[group] + local // np.maximum(width, 1)
        g_idx = groups.gt_start[group] + local % np.maximum(width, 1)
        out.values[:] = probiou_elementwise(p_r[p_idx], g_r[g_idx], eps=self.eps)
        return out


register_similarity("rotated", RotatedIoU)


register_similarity("probiou", ProbIoUSimilarity)
