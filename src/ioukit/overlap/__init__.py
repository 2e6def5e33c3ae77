"""The IoU family: IoU, Dice, GIoU, DIoU, CIoU (pairwise and elementwise) and their losses.

Everything here is re-exported by :mod:`ioukit`. (The subpackage is not called ``ioukit.iou``
because ``ioukit.iou`` is the function that measures two boxes.)
"""

from ioukit.overlap.family import (
    box_dice,
    box_dice_elementwise,
    box_intersection_elementwise,
    box_iou,
    box_iou_elementwise,
    complete_box_iou,
    complete_box_iou_elementwise,
    distance_box_iou,
    distance_box_iou_elementwise,
    generalized_box_iou,
    generalized_box_iou_elementwise,
    iou,
)
from ioukit.overlap.losses import (
    box_iou_loss,
    complete_box_iou_loss,
    distance_box_iou_loss,
    generalized_box_iou_loss,
)
from ioukit.overlap.rotated import (
    probiou,
    probiou_elementwise,
    rotated_box_iou,
    rotated_box_iou_elementwise,
    rotated_box_iou_loss,
)

__all__ = [
    "box_dice",
    "box_dice_elementwise",
    "box_intersection_elementwise",
    "box_iou",
    "box_iou_elementwise",
    "box_iou_loss",
    "complete_box_iou",
    "complete_box_iou_elementwise",
    "complete_box_iou_loss",
    "distance_box_iou",
    "distance_box_iou_elementwise",
    "distance_box_iou_loss",
    "generalized_box_iou",
    "generalized_box_iou_elementwise",
    "generalized_box_iou_loss",
    "iou",
    "probiou",
    "probiou_elementwise",
    "rotated_box_iou",
    "rotated_box_iou_elementwise",
    "rotated_box_iou_loss",
]
