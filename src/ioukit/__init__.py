"""ioukit: intersection over union for object detection.

Box formats, the IoU family (IoU, Dice, GIoU, DIoU, CIoU) and their losses on every array
library; masks and COCO RLE; non-maximum suppression and box fusion; matching predictions to
ground truth; AP/mAP under the COCO, Pascal VOC and Ultralytics protocols; readers and writers
for COCO JSON, YOLO txt and Pascal VOC XML. Numbers identical to the reference tools.

>>> import ioukit
>>> round(ioukit.iou((100, 80, 300, 280), (120, 100, 320, 300)), 3)
0.681
"""

from ioukit import masks
from ioukit.boxes import box_area, box_convert, clip_boxes, denormalize_boxes, normalize_boxes
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.diagnostics import Finding, diagnose
from ioukit.distributed import evaluate_sharded
from ioukit.engine import Evaluator, evaluate
from ioukit.errors import (
    BoxError,
    DataFormatError,
    IoukitError,
    MaskError,
    MissingDependencyError,
)
from ioukit.fusion import weighted_boxes_fusion
from ioukit.io import read_ground_truth, read_predictions, write_dataset
from ioukit.masks import mask_dice, mask_iou
from ioukit.matching import Matches, match_predictions
from ioukit.metrics.ap import coco_interpolated_ap, ultralytics_ap, voc07_ap, voc10_ap
from ioukit.metrics.confusion import ConfusionMatrix, confusion_matrix
from ioukit.metrics.curves import Curves, PrecisionRecallF1, pr_curves, precision_recall_f1
from ioukit.metrics.errors import ErrorAnalysis, error_analysis
from ioukit.metrics.result import EvaluationResult
from ioukit.metrics.voc import evaluate_voc
from ioukit.metrics.yolo import evaluate_yolo
from ioukit.overlap import (
    box_dice,
    box_dice_elementwise,
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
from ioukit.segmentation import SegmentationMetric, SegmentationResult, segmentation_iou
from ioukit.suppression import batched_nms, batched_rotated_nms, nms, rotated_nms, soft_nms

__version__ = "0.1.0"

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
    "PrecisionRecallF1",
    "SegmentationMetric",
    "SegmentationResult",
    "__version__",
    "batched_nms",
    "batched_rotated_nms",
    "box_area",
    "box_convert",
    "box_dice",
    "box_dice_elementwise",
    "box_iou",
    "box_iou_elementwise",
    "box_iou_loss",
    "clip_boxes",
    "coco_interpolated_ap",
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
