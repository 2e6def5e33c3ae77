"""ioukit: intersection over union for object detection.

Box formats, the IoU family (IoU, Dice, GIoU, DIoU, CIoU) and their losses on every array
library, with numbers identical to the reference tools.

>>> import ioukit
>>> round(ioukit.iou((100, 80, 300, 280), (120, 100, 320, 300)), 3)
0.681
"""

from ioukit.boxes import box_area, box_convert, clip_boxes, denormalize_boxes, normalize_boxes
from ioukit.errors import BoxError, DataFormatError, IoukitError, MissingDependencyError
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
)

__version__ = "0.1.0"

__all__ = [
    "BoxError",
    "DataFormatError",
    "IoukitError",
    "MissingDependencyError",
    "__version__",
    "box_area",
    "box_convert",
    "box_dice",
    "box_dice_elementwise",
    "box_iou",
    "box_iou_elementwise",
    "box_iou_loss",
    "clip_boxes",
    "complete_box_iou",
    "complete_box_iou_elementwise",
    "complete_box_iou_loss",
    "denormalize_boxes",
    "distance_box_iou",
    "distance_box_iou_elementwise",
    "distance_box_iou_loss",
    "generalized_box_iou",
    "generalized_box_iou_elementwise",
    "generalized_box_iou_loss",
    "iou",
    "normalize_boxes",
]
