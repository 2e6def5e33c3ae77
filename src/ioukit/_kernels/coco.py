"""Former numba home of two COCO segm kernels, now compiled in :mod:`ioukit._kernels.rle`
(#9) with the same signatures; re-exported here for callers of the old module (private).

* :func:`mask_boxes`: half-open pixel boxes of masks of different heights;
* :func:`group_mask_iou`: every (image, class) group's mask IoU matrix in the run-length
  domain (the ``"segm"`` similarity of :mod:`ioukit.evaluation.similarity`).
"""

from __future__ import annotations

from ioukit._kernels.rle import group_mask_iou as group_mask_iou
from ioukit._kernels.rle import mask_boxes as mask_boxes
