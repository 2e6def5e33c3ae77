"""pycocotools' modules on ioukit: ``coco``, ``cocoeval``, ``mask``.

Import them as ``from ioukit.compat.pycocotools.coco import COCO``, or call
:func:`ioukit.compat.init_as_pycocotools` once so that ``import pycocotools`` and
``from pycocotools.cocoeval import COCOeval`` resolve to them. ``mask`` loads on first use
(it brings :mod:`ioukit.masks`, which a box evaluation never calls).
"""

from __future__ import annotations

from typing import Any

from ioukit.compat.pycocotools import coco, cocoeval

__all__ = ["coco", "cocoeval", "mask"]


def __getattr__(name: str) -> Any:
    # ``pycocotools.mask`` as an attribute of the package (PEP 562); importing the
    # submodule also sets the attribute, so this runs once
    if name == "mask":
        return coco._mask_utils()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
