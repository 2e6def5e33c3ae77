"""Readers and writers of every supported format (COCO, YOLO, VOC, txt, DOTA, YOLO OBB).

One interface for every format: :func:`read_ground_truth`, :func:`read_predictions` and
:func:`write_dataset`. Formats are detected from the path when ``format="auto"``:

==========================================  ==========================================
path                                        format
==========================================  ==========================================
``*.json``                                  ``"coco"`` (dataset, or results list)
folder of ``*.xml``                         ``"voc"`` (annotations)
``comp4_det_test_<class>.txt`` (or folder)  ``"voc"`` (devkit detections)
folder of ``*.txt``, numeric class and      ``"yolo"``
every coordinate in [0, 1]
other folders of ``*.txt``                  ``"txt"`` (``class [conf] x y w h``)
``*.txt`` with 8 corners and a class name   ``"dota"`` (oriented boxes, pixels)
``*.txt`` with a class index and 8 corners  ``"yolo_obb"`` (oriented boxes, normalized)
``Task1_<class>.txt`` (or folder)           ``"dota"`` (task-1 detections)
``*.json`` with 5-number ``bbox``           ``"coco_rotated"`` (detectron2; pass it explicitly)
==========================================  ==========================================

Images are matched across formats by file stem; predictions are read against a ground truth
and share its image and category tables.

Examples
--------
>>> import pathlib, tempfile
>>> from ioukit.io import detect_format, read_ground_truth
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.txt").write_text("0 0.5 0.5 0.5 0.5\\n")
>>> detect_format(d)
'yolo'
>>> gt = read_ground_truth(d, image_size="100x100")
>>> gt.boxes.tolist()
[[25.0, 25.0, 75.0, 75.0]]
"""

# The names below load on first use (PEP 562), from the table: importing a reader module
# (``ioukit.io.coco``) runs this file, and a COCO JSON evaluation in a fresh process then
# loads neither pathlib nor the format table nor any text-format reader (#9, #27).

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ioukit.io._any_format import (
        FORMATS,
        ambiguous_txt,
        detect_format,
        read_ground_truth,
        read_predictions,
        write_dataset,
    )
    from ioukit.io._build import Unknowns

__all__ = [
    "FORMATS",
    "Unknowns",
    "ambiguous_txt",
    "detect_format",
    "read_ground_truth",
    "read_predictions",
    "write_dataset",
]

_HOMES = {
    "FORMATS": "ioukit.io._any_format",
    "Unknowns": "ioukit.io._build",
    "ambiguous_txt": "ioukit.io._any_format",
    "detect_format": "ioukit.io._any_format",
    "read_ground_truth": "ioukit.io._any_format",
    "read_predictions": "ioukit.io._any_format",
    "write_dataset": "ioukit.io._any_format",
}
"""Public name -> the module that defines it (read by ``__getattr__``)."""


def __getattr__(name: str) -> Any:
    try:
        home = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module 'ioukit.io' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
