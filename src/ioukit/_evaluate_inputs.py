"""The input rules of :func:`ioukit.evaluate`, shared with :mod:`ioukit.distributed` (private).

Ground truth and predictions given as a Dataset, a COCO dict, result dicts or a path become
Datasets, and a protocol name, IoU type and options become the protocol object, in one place,
so that a sharded evaluation accepts and refuses exactly what ``evaluate`` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.evaluation.registry import (
    coco_json_reader,
    make_protocol,
    resolve_iou_type,
    similarity_input,
)
from ioukit.io.coco import read_coco_ground_truth, read_coco_results

__all__ = [
    "COCO_READERS",
    "CocoReaders",
    "coco_readers",
    "ground_truth_dataset",
    "make_runner",
    "predictions_dataset",
    "resolve_iou_type",
]


def _boxes_gt(source: Any, *, require_iscrowd: bool = False) -> Dataset:
    return read_coco_ground_truth(source, require_iscrowd=require_iscrowd)


def _masks_gt(source: Any, *, require_iscrowd: bool = False) -> Dataset:
    return read_coco_ground_truth(source, require_iscrowd=require_iscrowd, keep_segmentation=True)


def _boxes_results(source: Any, gt: Dataset) -> Dataset:
    return read_coco_results(source, gt, iou_type="bbox")


def _masks_results(source: Any, gt: Dataset) -> Dataset:
    return read_coco_results(source, gt, iou_type="segm")


def _keypoints_gt(source: Any, *, require_iscrowd: bool = False) -> Dataset:
    # the keypoint readers load through the registry when keypoints are read, not at import
    read: Callable[..., Dataset] = coco_json_reader("keypoints", "read_coco_keypoints")
    return read(source, require_iscrowd=require_iscrowd)


def _keypoints_results(source: Any, gt: Dataset) -> Dataset:
    read: Callable[..., Dataset] = coco_json_reader("keypoints", "read_coco_keypoint_results")
    return read(source, gt)


class CocoReaders(NamedTuple):
    """How COCO JSON gives the column a similarity compares: the ground-truth reader
    (``source, require_iscrowd=...``) and the results reader (``source, gt``).

    A named tuple, not a dataclass: this pair is built three times at import, on every
    fresh evaluation's path, where a frozen dataclass's generated methods cost 10x more."""

    ground_truth: Callable[..., Dataset]
    results: Callable[[Any, Dataset], Dataset]


COCO_READERS: dict[str, CocoReaders] = {
    "boxes": CocoReaders(_boxes_gt, _boxes_results),
    "segmentation": CocoReaders(_masks_gt, _masks_results),
    "keypoints": CocoReaders(_keypoints_gt, _keypoints_results),
}
"""The Dataset column a similarity compares (:func:`~ioukit.evaluation.registry.
similarity_input`) -> its COCO JSON readers; a column COCO JSON does not hold (``rotated``)
reads the boxes (the protocol reads its own columns)."""


def coco_readers(iou_type: str | None) -> CocoReaders:
    """The COCO JSON readers of ``iou_type``'s column (boxes for an unknown name).

    >>> coco_readers("boundary") is COCO_READERS["segmentation"]
    True
    """
    column = similarity_input(iou_type) if isinstance(iou_type, str) else None
    return COCO_READERS.get(column or "boxes", COCO_READERS["boxes"])


def ground_truth_dataset(
    gt: object,
    *,
    require_iscrowd: bool,
    segm: bool = False,
    keypoints: bool = False,
    iou_type: str | None = None,
) -> Dataset:
    """``gt`` (a Dataset, a COCO dict or a COCO JSON path) as a ground-truth Dataset.

    The reader is ``iou_type``'s (:func:`coco_readers`); without it ``segm`` keeps the
    segmentations and ``keypoints`` reads a COCO keypoints file. A Dataset with scores is
    refused (DataFormatError), any other type raises TypeError.
    """
    if isinstance(gt, Dataset):
        if gt.is_prediction:
            raise DataFormatError("gt: expected ground truth, got a dataset with scores")
        return gt
    if isinstance(gt, str | os.PathLike | Mapping):
        if iou_type is None:
            column = "keypoints" if keypoints else "segmentation" if segm else "boxes"
            readers = COCO_READERS[column]
        else:
            readers = coco_readers(iou_type)
        return readers.ground_truth(gt, require_iscrowd=require_iscrowd)
    raise TypeError(f"gt: expected a Dataset, a COCO dict or a path, got {type(gt).__name__}")


def predictions_dataset(predictions: object, gt: Dataset, *, iou_type: str = "bbox") -> Dataset:
    """``predictions`` (a Dataset, COCO result dicts or a path) as a Dataset on ``gt``'s tables.

    A Dataset without scores is refused (DataFormatError), any other type raises TypeError.
    """
    if isinstance(predictions, Dataset):
        if not predictions.is_prediction:
            raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
        return predictions
    if isinstance(predictions, str | os.PathLike | Sequence | Mapping):
        return coco_readers(iou_type).results(predictions, gt)
    raise TypeError(
        "predictions: expected a Dataset, a list of COCO result dicts or a path, "
        f"got {type(predictions).__name__}"
    )


def make_runner(protocol: str, iou_type: str | None, options: Mapping[str, Any]) -> Any:
    """The protocol object: ``protocol``, ``iou_type`` and options validated in one place."""
    return make_protocol(protocol, iou_type=iou_type, **options)
