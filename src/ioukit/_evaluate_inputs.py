"""The input rules of :func:`ioukit.evaluate`, shared with :mod:`ioukit.distributed` (private).

Ground truth and predictions given as a Dataset, a COCO dict, result dicts or a path become
Datasets, and a protocol name, IoU type and options become the protocol object, in one place,
so that a sharded evaluation accepts and refuses exactly what ``evaluate`` does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.evaluation.registry import (
    PROTOCOL_MODULES,
    make_protocol,
    protocol_iou_types,
    similarity_input,
)
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints

__all__ = ["ground_truth_dataset", "make_runner", "predictions_dataset"]


def ground_truth_dataset(
    gt: object, *, require_iscrowd: bool, segm: bool = False, keypoints: bool = False
) -> Dataset:
    """``gt`` (a Dataset, a COCO dict or a COCO JSON path) as a ground-truth Dataset.

    ``segm`` keeps the segmentations, ``keypoints`` reads a COCO keypoints file; a Dataset
    with scores is refused (DataFormatError), any other type raises TypeError.
    """
    if isinstance(gt, Dataset):
        if gt.is_prediction:
            raise DataFormatError("gt: expected ground truth, got a dataset with scores")
        return gt
    if keypoints and isinstance(gt, str | os.PathLike | Mapping):
        return read_coco_keypoints(gt, require_iscrowd=require_iscrowd)
    if isinstance(gt, str | os.PathLike | Mapping):
        return read_coco_ground_truth(gt, require_iscrowd=require_iscrowd, keep_segmentation=segm)
    raise TypeError(f"gt: expected a Dataset, a COCO dict or a path, got {type(gt).__name__}")


def predictions_dataset(predictions: object, gt: Dataset, *, iou_type: str = "bbox") -> Dataset:
    """``predictions`` (a Dataset, COCO result dicts or a path) as a Dataset on ``gt``'s tables.

    A Dataset without scores is refused (DataFormatError), any other type raises TypeError.
    """
    if isinstance(predictions, Dataset):
        if not predictions.is_prediction:
            raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
        return predictions
    if similarity_input(iou_type) == "keypoints" and isinstance(
        predictions, str | os.PathLike | Sequence | Mapping
    ):
        return read_coco_keypoint_results(predictions, gt)  # type: ignore[arg-type]
    if isinstance(predictions, str | os.PathLike | Sequence | Mapping):
        masks = similarity_input(iou_type) == "segmentation"  # segm, boundary
        return read_coco_results(
            predictions,  # type: ignore[arg-type]
            gt,
            iou_type="segm" if masks else "bbox",
        )
    raise TypeError(
        "predictions: expected a Dataset, a list of COCO result dicts or a path, "
        f"got {type(predictions).__name__}"
    )


def make_runner(protocol: str, iou_type: str | None, options: Mapping[str, Any]) -> Any:
    """The protocol object: ``protocol``, ``iou_type`` and options validated in one place."""
    return make_protocol(protocol, iou_type=iou_type, **options)


def resolve_iou_type(protocol: str, iou_type: str | None) -> str:
    """``iou_type``, or the protocol's only one where it is None or the default ``"bbox"`` that
    the protocol does not take (``protocol="crowdpose"`` evaluates keypoints; ``"dota"``, which
    takes ``"rotated"`` and ``"probiou"``, asks).

    Examples
    --------
    >>> resolve_iou_type("crowdpose", "bbox"), resolve_iou_type("dota", "bbox")
    ('keypoints', 'bbox')
    """
    if protocol not in PROTOCOL_MODULES:
        return "bbox" if iou_type is None else iou_type
    own = protocol_iou_types(protocol)
    if len(own) == 1 and (iou_type is None or (iou_type == "bbox" and "bbox" not in own)):
        return own[0]
    return "bbox" if iou_type is None else iou_type
