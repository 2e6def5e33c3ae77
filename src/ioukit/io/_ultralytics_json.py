"""COCO results written by ``yolo val save_json=True`` on a YOLO dataset (#23 item 19).

Ultralytics' ``DetectionValidator.pred_to_json`` writes, for a dataset that is not COCO:

- ``"image_id": int(stem) if stem.isnumeric() else stem`` — the image's file stem, not an id;
- ``"category_id": class_map[cls]`` with ``class_map = range(1, nc + 1)`` — the class index
  plus one.

Read against the YOLO label folder they came from, such records find their image by stem and
their class by ``category_id - 1``. :func:`yolo_val_records` recognises a file written so and
rewrites its records to the ground truth's ids; anything else is left to the COCO reader.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> gt = Dataset.from_arrays(ImageTable.from_lists([1, 2], ["000042", "cat_7"]),
...     CategoryTable.from_lists([0, 1], ["0", "1"]), boxes=[], image_index=[], category_id=[])
>>> records = [{"image_id": 42, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
...            {"image_id": "cat_7", "category_id": 2, "bbox": [0, 0, 1, 1], "score": 0.5}]
>>> [(r["image_id"], r["category_id"]) for r in yolo_val_records(records, gt)]
[(1, 0), (2, 1)]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ioukit.dataset import Dataset
from ioukit.io.coco import _parse, _read

__all__ = ["read_yolo_val_json", "yolo_val_records"]


def _stem_ids(gt: Dataset) -> dict[object, int]:
    """What ``yolo val`` writes for each ground-truth image -> its id (numeric stems: int)."""
    found: dict[object, int] = {}
    for image_id, stem in zip(gt.images.ids.tolist(), gt.images.stems, strict=True):
        found[int(stem) if stem.isnumeric() else stem] = int(image_id)
    return found


def yolo_val_records(doc: Any, gt: Dataset) -> list[dict[str, Any]] | None:
    """``doc``'s records with ``image_id`` and ``category_id`` turned into ``gt``'s ids when it
    reads as ``yolo val save_json=True`` output, else None.

    It does when ``doc`` is a list of records whose every ``image_id`` is a stem of ``gt``'s
    images as ``yolo val`` writes it (an ``int`` for a numeric stem), whose every
    ``category_id`` is an integer >= 1 (``yolo val`` never writes 0), and some ``image_id``
    is a string or is no image id of ``gt`` (otherwise the ids are read as ids, as always).
    The records are copied, never modified.

    Parameters
    ----------
    doc : object
        The parsed JSON file.
    gt : Dataset
        Ground truth read from a YOLO label folder (images 1..I in sorted stem order,
        category ids = class indices).

    Returns
    -------
    list of dict or None
    """
    if not isinstance(doc, list) or not doc:
        return None
    by_stem = _stem_ids(gt)
    known_ids = set(gt.images.ids.tolist())
    needs_stems = False
    for record in doc:
        if not isinstance(record, Mapping):
            return None
        image, category = record.get("image_id"), record.get("category_id")
        if isinstance(image, bool) or not isinstance(image, int | str) or image not in by_stem:
            return None
        if isinstance(category, bool) or not isinstance(category, int) or category < 1:
            return None
        needs_stems = needs_stems or isinstance(image, str) or image not in known_ids
    if not needs_stems:
        return None
    return [
        {
            **record,
            "image_id": by_stem[record["image_id"]],
            "category_id": record["category_id"] - 1,
        }
        for record in doc
    ]


def read_yolo_val_json(path: str | os.PathLike[str], gt: Dataset) -> list[dict[str, Any]] | None:
    """:func:`yolo_val_records` of the JSON file ``path`` (strict JSON; errors name the file)."""

    label = os.fspath(path)
    return yolo_val_records(_parse(_read(label), label), gt)
