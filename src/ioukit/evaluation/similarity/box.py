"""Stage 3 of the pipeline: the similarity of every (prediction, ground truth) pair of a group.

A similarity is any object with a ``matrices(gt, pred, groups)`` method returning
:class:`GroupMatrices`: one flat float64 array holding, for each group ``i`` of
:class:`~ioukit.evaluation.groups.Groups`, the row-major matrix [P_i, G_i] where P_i are the
group's first ``max_det`` predictions in group order (``groups.kept_count``) and G_i its ground
truths in group order. Groups without a ground truth (or without a prediction) have no
matrix. Crowd columns already hold the crowd form (e.g. intersection over the prediction's
area). The matcher (:mod:`ioukit.evaluation.match`) reads nothing else, so a new similarity
(OKS for keypoints, rotated-box IoU, ...) plugs in with :func:`register_similarity` and needs
no change anywhere else; ``iou_type=<name>`` then selects it.

Registered here: ``"bbox"`` (:class:`BoxIoU`, crowd-aware, COCO arithmetic bit-exact with
pycocotools' ``bbIou``), ``"segm"`` (:class:`MaskIoU`, run-length domain, pycocotools'
``maskUtils.iou``), ``"bbox-float32"`` (:class:`Float32BoxIoU`, Ultralytics' ``box_iou``).

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> from ioukit.evaluation.groups import Groups
>>> images = ImageTable.from_lists([1], ["a"])
>>> cats = CategoryTable.from_lists([1], ["cat"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [0, 0, 5, 10]],
...                          image_index=[0, 0], category_id=[1, 1])
>>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 5]], image_index=[0],
...                            category_id=[1], scores=[0.9])
>>> groups = Groups.build(gt, pred)
>>> from ioukit.evaluation.registry import get_similarity
>>> m = get_similarity("bbox").matrices(gt, pred, groups)
>>> m.matrix(groups, 0).round(4).tolist()
[[0.5, 0.3333]]"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ioukit._kernels import match as kernels
from ioukit.dataset import Dataset
from ioukit.evaluation.groups import GroupMatrices, Groups
from ioukit.evaluation.match import _u8
from ioukit.evaluation.registry import register_similarity

__all__ = ["BoxIoU", "Float32BoxIoU"]


@dataclass(frozen=True, slots=True)
class BoxIoU:
    """Axis-aligned box IoU, crowd-aware, in float64.

    ``w = min(x2) - max(x1) + pixel_offset`` (same for ``h``), intersection ``w * h`` (0 when
    either is <= 0), ``union = area_pred + area_gt - inter + eps``; against a crowd ground truth
    ``union = area_pred + eps``.

    Parameters
    ----------
    crowd : bool
        Honour ``gt.crowd`` (COCO); False treats every ground truth as regular.
    pixel_offset : float
        1.0 for the VOC devkit's inclusive pixels (areas ``(x2 - x1 + 1) * (y2 - y1 + 1)``).
    eps : float
        Added to the union.
    source_wh : bool
        Take areas as ``w * h`` of the source COCO boxes (``Dataset.box_wh``) where a dataset
        has them, exactly as pycocotools' ``bbIou``; the overlap uses ``x + w`` as it does.
    """

    reads: ClassVar[str] = "boxes"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    crowd: bool = True
    pixel_offset: float = 0.0
    eps: float = 0.0
    source_wh: bool = True

    def _areas(self, ds: Dataset) -> np.ndarray:
        # (N,) every row's area; the kernel reads the rows of the groups
        if self.source_wh and ds.box_wh is not None and self.pixel_offset == 0.0:
            wh = ds.box_wh
            return np.ascontiguousarray(wh[:, 0] * wh[:, 1])
        b = ds.boxes
        off = self.pixel_offset
        if off == 0.0:
            return np.ascontiguousarray((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]))
        return np.ascontiguousarray((b[:, 2] - b[:, 0] + off) * (b[:, 3] - b[:, 1] + off))

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Box IoU of every group (see the class docstring for the arithmetic)."""

        out = GroupMatrices.allocate(groups)
        crowd = gt.crowd if self.crowd else np.zeros(len(gt), bool)
        # the whole datasets' columns, read through the groups' rows (no gathered copies)
        kernels.group_box_iou(
            groups.gt_start,
            groups.gt_end,
            groups.pred_start,
            groups.kept_count,
            np.ascontiguousarray(gt.boxes),
            self._areas(gt),
            _u8(crowd),
            np.ascontiguousarray(pred.boxes),
            self._areas(pred),
            out.offsets,
            out.values,
            float(self.pixel_offset),
            float(self.eps),
            gt_rows=np.ascontiguousarray(groups.gt_rows, dtype=np.int64),
            pred_rows=np.ascontiguousarray(groups.pred_rows, dtype=np.int64),
        )
        return out


@dataclass(frozen=True, slots=True)
class Float32BoxIoU:
    """Ultralytics' ``box_iou`` (8.x): float32 boxes, ``inter / (a_gt + a_pred - inter + eps)``.

    Every operation rounds to float32 in Ultralytics' order; values are stored as float64
    (exactly), so comparisons with float32 thresholds and ties are those of Ultralytics.
    Crowd flags are not used (Ultralytics drops crowd annotations).

    Parameters
    ----------
    eps : float
        Ultralytics' default ``1e-7`` (rounded to float32).
    """

    reads: ClassVar[str] = "boxes"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    eps: float = 1e-7

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Float32 box IoU of every group."""

        out = GroupMatrices.allocate(groups)
        kernels.group_box_iou_f32(
            groups.gt_start,
            groups.gt_end,
            groups.pred_start,
            groups.kept_count,
            np.ascontiguousarray(gt.boxes[groups.gt_rows], dtype=np.float32),
            np.ascontiguousarray(pred.boxes[groups.pred_rows], dtype=np.float32),
            out.offsets,
            out.values,
            np.float32(self.eps),
        )
        return out


register_similarity("bbox", BoxIoU)


register_similarity("bbox-float32", Float32BoxIoU)
