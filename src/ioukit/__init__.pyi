"""The facade's one list of public names (#22 item 9).

``ioukit/__init__.py`` reads this file when ``ioukit`` is imported and loads each name from its
module on first use (PEP 562), so ``import ioukit`` stays cheap; type checkers read it instead
of ``__init__.py``. A public name is added here, once: one ``from MODULE import NAME as NAME``
line (``tests/test_public_api.py`` checks that the loader and ``ast`` read the same table).
"""

from ioukit import masks as masks
from ioukit.analysis.bootstrap import bootstrap as bootstrap
from ioukit.analysis.bootstrap import compare as compare
from ioukit.analysis.confusion import ConfusionMatrix as ConfusionMatrix
from ioukit.analysis.confusion import confusion_matrix as confusion_matrix
from ioukit.analysis.curves import Curves as Curves
from ioukit.analysis.curves import PrecisionRecallF1 as PrecisionRecallF1
from ioukit.analysis.curves import pr_curves as pr_curves
from ioukit.analysis.curves import precision_recall_f1 as precision_recall_f1
from ioukit.analysis.diagnostics import Finding as Finding
from ioukit.analysis.diagnostics import diagnose as diagnose
from ioukit.analysis.errors import ErrorAnalysis as ErrorAnalysis
from ioukit.analysis.errors import error_analysis as error_analysis
from ioukit.analysis.result import EvaluationResult as EvaluationResult
from ioukit.boxes import box_area as box_area
from ioukit.boxes import box_convert as box_convert
from ioukit.boxes import clip_boxes as clip_boxes
from ioukit.boxes import denormalize_boxes as denormalize_boxes
from ioukit.boxes import normalize_boxes as normalize_boxes
from ioukit.dataset import CategoryTable as CategoryTable
from ioukit.dataset import Dataset as Dataset
from ioukit.dataset import ImageTable as ImageTable
from ioukit.distributed import evaluate_sharded as evaluate_sharded
from ioukit.engine import evaluate as evaluate
from ioukit.errors import BoxError as BoxError
from ioukit.errors import DataFormatError as DataFormatError
from ioukit.errors import IoukitError as IoukitError
from ioukit.errors import MaskError as MaskError
from ioukit.errors import MissingDependencyError as MissingDependencyError
from ioukit.evaluation.ap import coco_interpolated_ap as coco_interpolated_ap
from ioukit.evaluation.ap import ultralytics_ap as ultralytics_ap
from ioukit.evaluation.ap import voc07_ap as voc07_ap
from ioukit.evaluation.ap import voc10_ap as voc10_ap
from ioukit.evaluation.protocols.voc import evaluate_voc as evaluate_voc
from ioukit.evaluation.protocols.yolo import evaluate_yolo as evaluate_yolo
from ioukit.evaluator import Evaluator as Evaluator
from ioukit.fusion import weighted_boxes_fusion as weighted_boxes_fusion
from ioukit.io import read_ground_truth as read_ground_truth
from ioukit.io import read_predictions as read_predictions
from ioukit.io import write_dataset as write_dataset
from ioukit.masks import mask_dice as mask_dice
from ioukit.masks import mask_iou as mask_iou
from ioukit.matching import Matches as Matches
from ioukit.matching import match_predictions as match_predictions
from ioukit.overlap import box_dice as box_dice
from ioukit.overlap import box_dice_elementwise as box_dice_elementwise
from ioukit.overlap import box_intersection_elementwise as box_intersection_elementwise
from ioukit.overlap import box_iou as box_iou
from ioukit.overlap import box_iou_elementwise as box_iou_elementwise
from ioukit.overlap import box_iou_loss as box_iou_loss
from ioukit.overlap import complete_box_iou as complete_box_iou
from ioukit.overlap import complete_box_iou_elementwise as complete_box_iou_elementwise
from ioukit.overlap import complete_box_iou_loss as complete_box_iou_loss
from ioukit.overlap import distance_box_iou as distance_box_iou
from ioukit.overlap import distance_box_iou_elementwise as distance_box_iou_elementwise
from ioukit.overlap import distance_box_iou_loss as distance_box_iou_loss
from ioukit.overlap import generalized_box_iou as generalized_box_iou
from ioukit.overlap import generalized_box_iou_elementwise as generalized_box_iou_elementwise
from ioukit.overlap import generalized_box_iou_loss as generalized_box_iou_loss
from ioukit.overlap import iou as iou
from ioukit.overlap import probiou as probiou
from ioukit.overlap import probiou_elementwise as probiou_elementwise
from ioukit.overlap import rotated_box_iou as rotated_box_iou
from ioukit.overlap import rotated_box_iou_elementwise as rotated_box_iou_elementwise
from ioukit.overlap import rotated_box_iou_loss as rotated_box_iou_loss
from ioukit.panoptic import PanopticResult as PanopticResult
from ioukit.panoptic import panoptic_quality as panoptic_quality
from ioukit.panoptic import panoptic_quality_maps as panoptic_quality_maps
from ioukit.segmentation import SegmentationMetric as SegmentationMetric
from ioukit.segmentation import SegmentationResult as SegmentationResult
from ioukit.segmentation import segmentation_iou as segmentation_iou
from ioukit.suppression import batched_nms as batched_nms
from ioukit.suppression import batched_rotated_nms as batched_rotated_nms
from ioukit.suppression import nms as nms
from ioukit.suppression import rotated_nms as rotated_nms
from ioukit.suppression import soft_nms as soft_nms

__version__: str
