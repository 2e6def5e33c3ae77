"""ioukit: intersection over union for object detection.

Box formats, the IoU family (IoU, Dice, GIoU, DIoU, CIoU) and their losses on every array
library; masks and COCO RLE; non-maximum suppression and box fusion; matching predictions to
ground truth; AP/mAP under the COCO, Pascal VOC and Ultralytics protocols; readers and writers
for COCO JSON, YOLO txt and Pascal VOC XML. Numbers identical to the reference tools.

>>> import ioukit
>>> round(ioukit.iou((100, 80, 300, 280), (120, 100, 320, 300)), 3)
0.681
"""

# Public names are imported on first use (PEP 562), so ``import ioukit`` stays cheap: a
# command or script pays only for the parts it touches. Type checkers see the imports below.

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING
from typing import Any as _Any

if TYPE_CHECKING:
    from ioukit import masks
    from ioukit.analysis.bootstrap import bootstrap, compare
    from ioukit.analysis.confusion import ConfusionMatrix, confusion_matrix
    from ioukit.analysis.curves import Curves, PrecisionRecallF1, pr_curves, precision_recall_f1
    from ioukit.analysis.diagnostics import Finding, diagnose
    from ioukit.analysis.errors import ErrorAnalysis, error_analysis
    from ioukit.analysis.result import EvaluationResult
    from ioukit.boxes import box_area, box_convert, clip_boxes, denormalize_boxes, normalize_boxes
    from ioukit.dataset import CategoryTable, Dataset, ImageTable
    from ioukit.distributed import evaluate_sharded
    from ioukit.engine import evaluate
    from ioukit.errors import (
        BoxError,
        DataFormatError,
        IoukitError,
        MaskError,
        MissingDependencyError,
    )
    from ioukit.evaluation.ap import coco_interpolated_ap, ultralytics_ap, voc07_ap, voc10_ap
    from ioukit.evaluation.protocols.voc import evaluate_voc
    from ioukit.evaluation.protocols.yolo import evaluate_yolo
    from ioukit.evaluator import Evaluator
    from ioukit.fusion import weighted_boxes_fusion
    from ioukit.io import read_ground_truth, read_predictions, write_dataset
    from ioukit.masks import mask_dice, mask_iou
    from ioukit.matching import Matches, match_predictions
    from ioukit.overlap import (
        box_dice,
        box_dice_elementwise,
        box_intersection_elementwise,
        box_iou,
        box_iou_elementwise,
        box_iou_loss,
        complete_box_iou,
        complete_box_iou_elementwise,
        complete_box_iou_loss,
        distance_box_iou,
        distance_box_iou_elementwise,
        distance_box_iou_loss,
        generalized_box_iou,
        generalized_box_iou_elementwise,
        generalized_box_iou_loss,
        iou,
        probiou,
        probiou_elementwise,
        rotated_box_iou,
        rotated_box_iou_elementwise,
        rotated_box_iou_loss,
    )
    from ioukit.panoptic import PanopticResult, panoptic_quality, panoptic_quality_maps
    from ioukit.segmentation import SegmentationMetric, SegmentationResult, segmentation_iou
    from ioukit.suppression import batched_nms, batched_rotated_nms, nms, rotated_nms, soft_nms

__version__ = "0.1.0"

# public name -> (module, attribute); attribute None: the module itself
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "BoxError": ("ioukit.errors", "BoxError"),
    "CategoryTable": ("ioukit.dataset", "CategoryTable"),
    "ConfusionMatrix": ("ioukit.analysis.confusion", "ConfusionMatrix"),
    "Curves": ("ioukit.analysis.curves", "Curves"),
    "DataFormatError": ("ioukit.errors", "DataFormatError"),
    "Dataset": ("ioukit.dataset", "Dataset"),
    "ErrorAnalysis": ("ioukit.analysis.errors", "ErrorAnalysis"),
    "EvaluationResult": ("ioukit.analysis.result", "EvaluationResult"),
    "Evaluator": ("ioukit.evaluator", "Evaluator"),
    "Finding": ("ioukit.analysis.diagnostics", "Finding"),
    "ImageTable": ("ioukit.dataset", "ImageTable"),
    "IoukitError": ("ioukit.errors", "IoukitError"),
    "MaskError": ("ioukit.errors", "MaskError"),
    "Matches": ("ioukit.matching", "Matches"),
    "MissingDependencyError": ("ioukit.errors", "MissingDependencyError"),
    "PrecisionRecallF1": ("ioukit.analysis.curves", "PrecisionRecallF1"),
    "SegmentationMetric": ("ioukit.segmentation", "SegmentationMetric"),
    "SegmentationResult": ("ioukit.segmentation", "SegmentationResult"),
    "batched_nms": ("ioukit.suppression", "batched_nms"),
    "batched_rotated_nms": ("ioukit.suppression", "batched_rotated_nms"),
    "box_area": ("ioukit.boxes", "box_area"),
    "bootstrap": ("ioukit.analysis.bootstrap", "bootstrap"),
    "box_convert": ("ioukit.boxes", "box_convert"),
    "box_dice": ("ioukit.overlap", "box_dice"),
    "box_dice_elementwise": ("ioukit.overlap", "box_dice_elementwise"),
    "box_intersection_elementwise": ("ioukit.overlap", "box_intersection_elementwise"),
    "box_iou": ("ioukit.overlap", "box_iou"),
    "box_iou_elementwise": ("ioukit.overlap", "box_iou_elementwise"),
    "box_iou_loss": ("ioukit.overlap", "box_iou_loss"),
    "clip_boxes": ("ioukit.boxes", "clip_boxes"),
    "coco_interpolated_ap": ("ioukit.evaluation.ap", "coco_interpolated_ap"),
    "compare": ("ioukit.analysis.bootstrap", "compare"),
    "complete_box_iou": ("ioukit.overlap", "complete_box_iou"),
    "complete_box_iou_elementwise": ("ioukit.overlap", "complete_box_iou_elementwise"),
    "complete_box_iou_loss": ("ioukit.overlap", "complete_box_iou_loss"),
    "confusion_matrix": ("ioukit.analysis.confusion", "confusion_matrix"),
    "denormalize_boxes": ("ioukit.boxes", "denormalize_boxes"),
    "diagnose": ("ioukit.analysis.diagnostics", "diagnose"),
    "distance_box_iou": ("ioukit.overlap", "distance_box_iou"),
    "distance_box_iou_elementwise": ("ioukit.overlap", "distance_box_iou_elementwise"),
    "distance_box_iou_loss": ("ioukit.overlap", "distance_box_iou_loss"),
    "error_analysis": ("ioukit.analysis.errors", "error_analysis"),
    "evaluate": ("ioukit.engine", "evaluate"),
    "evaluate_sharded": ("ioukit.distributed", "evaluate_sharded"),
    "evaluate_voc": ("ioukit.evaluation.protocols.voc", "evaluate_voc"),
    "evaluate_yolo": ("ioukit.evaluation.protocols.yolo", "evaluate_yolo"),
    "generalized_box_iou": ("ioukit.overlap", "generalized_box_iou"),
    "generalized_box_iou_elementwise": ("ioukit.overlap", "generalized_box_iou_elementwise"),
    "generalized_box_iou_loss": ("ioukit.overlap", "generalized_box_iou_loss"),
    "iou": ("ioukit.overlap", "iou"),
    "mask_dice": ("ioukit.masks", "mask_dice"),
    "mask_iou": ("ioukit.masks", "mask_iou"),
    "masks": ("ioukit.masks", None),
    "match_predictions": ("ioukit.matching", "match_predictions"),
    "nms": ("ioukit.suppression", "nms"),
    "normalize_boxes": ("ioukit.boxes", "normalize_boxes"),
    "pr_curves": ("ioukit.analysis.curves", "pr_curves"),
    "precision_recall_f1": ("ioukit.analysis.curves", "precision_recall_f1"),
    "probiou": ("ioukit.overlap", "probiou"),
    "probiou_elementwise": ("ioukit.overlap", "probiou_elementwise"),
    "read_ground_truth": ("ioukit.io", "read_ground_truth"),
    "read_predictions": ("ioukit.io", "read_predictions"),
    "rotated_box_iou": ("ioukit.overlap", "rotated_box_iou"),
    "rotated_box_iou_elementwise": ("ioukit.overlap", "rotated_box_iou_elementwise"),
    "rotated_box_iou_loss": ("ioukit.overlap", "rotated_box_iou_loss"),
    "rotated_nms": ("ioukit.suppression", "rotated_nms"),
    "segmentation_iou": ("ioukit.segmentation", "segmentation_iou"),
    "soft_nms": ("ioukit.suppression", "soft_nms"),
    "ultralytics_ap": ("ioukit.evaluation.ap", "ultralytics_ap"),
    "voc07_ap": ("ioukit.evaluation.ap", "voc07_ap"),
    "voc10_ap": ("ioukit.evaluation.ap", "voc10_ap"),
    "weighted_boxes_fusion": ("ioukit.fusion", "weighted_boxes_fusion"),
    "PanopticResult": ("ioukit.panoptic", "PanopticResult"),
    "panoptic_quality": ("ioukit.panoptic", "panoptic_quality"),
    "panoptic_quality_maps": ("ioukit.panoptic", "panoptic_quality_maps"),
    "write_dataset": ("ioukit.io", "write_dataset"),
}

__all__ = [
    "BoxError",
    "CategoryTable",
    "ConfusionMatrix",
    "Curves",
    "DataFormatError",
    "Dataset",
    "ErrorAnalysis",
    "EvaluationResult",
    "Evaluator",
    "Finding",
    "ImageTable",
    "IoukitError",
    "MaskError",
    "Matches",
    "MissingDependencyError",
    "PanopticResult",
    "PrecisionRecallF1",
    "SegmentationMetric",
    "SegmentationResult",
    "__version__",
    "batched_nms",
    "batched_rotated_nms",
    "bootstrap",
    "box_area",
    "box_convert",
    "box_dice",
    "box_dice_elementwise",
    "box_intersection_elementwise",
    "box_iou",
    "box_iou_elementwise",
    "box_iou_loss",
    "clip_boxes",
    "coco_interpolated_ap",
    "compare",
    "complete_box_iou",
    "complete_box_iou_elementwise",
    "complete_box_iou_loss",
    "confusion_matrix",
    "denormalize_boxes",
    "diagnose",
    "distance_box_iou",
    "distance_box_iou_elementwise",
    "distance_box_iou_loss",
    "error_analysis",
    "evaluate",
    "evaluate_sharded",
    "evaluate_voc",
    "evaluate_yolo",
    "generalized_box_iou",
    "generalized_box_iou_elementwise",
    "generalized_box_iou_loss",
    "iou",
    "mask_dice",
    "mask_iou",
    "masks",
    "match_predictions",
    "nms",
    "normalize_boxes",
    "panoptic_quality",
    "panoptic_quality_maps",
    "pr_curves",
    "precision_recall_f1",
    "probiou",
    "probiou_elementwise",
    "read_ground_truth",
    "read_predictions",
    "rotated_box_iou",
    "rotated_box_iou_elementwise",
    "rotated_box_iou_loss",
    "rotated_nms",
    "segmentation_iou",
    "soft_nms",
    "ultralytics_ap",
    "voc07_ap",
    "voc10_ap",
    "weighted_boxes_fusion",
    "write_dataset",
]


def __getattr__(name: str) -> _Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'ioukit' has no attribute {name!r}") from None
    module = _importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
