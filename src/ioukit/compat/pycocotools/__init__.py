"""pycocotools' modules on ioukit: ``coco``, ``cocoeval``, ``mask``.

Import them as ``from ioukit.compat.pycocotools.coco import COCO``, or call
:func:`ioukit.compat.init_as_pycocotools` once so that ``import pycocotools`` and
``from pycocotools.cocoeval import COCOeval`` resolve to them.
"""

from __future__ import annotations

from ioukit.compat.pycocotools import coco, cocoeval, mask

__all__ = ["coco", "cocoeval", "mask"]
