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
# command or script pays only for the parts it touches. The names are written once, in the
# stub ``__init__.pyi`` beside this file: type checkers read it, and so does the loader below.

from __future__ import annotations

import importlib as _importlib
import os as _os
from typing import Any as _Any

__version__ = "0.1.0"


def _read_stub(text: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) from the stub's ``from M import A as NAME`` lines
    (a plain line reader: ``ast`` would cost ``import ioukit`` more than the rest of it)."""
    exports = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 6 and words[0] == "from" and words[2] == "import" and words[4] == "as":
            exports[words[5]] = (words[1], words[3])
    return exports


with open(_os.path.join(_os.path.dirname(__file__), "__init__.pyi"), encoding="utf-8") as _stub:
    _EXPORTS = _read_stub(_stub.read())

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> _Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'ioukit' has no attribute {name!r}") from None
    if module_name == __name__:  # a subpackage: ``from ioukit import masks as masks``
        value = _importlib.import_module(f"{__name__}.{attribute}")
    else:
        value = getattr(_importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
