"""COCO-style JSON with rotated boxes (detectron2's ``XYWHA_ABS``): ``bbox = [cx, cy, w, h, a]``.

Ground truth is a COCO dataset (``images``, ``categories``, ``annotations``) whose
``bbox`` fields hold five numbers: centre, size and angle in degrees, counter-clockwise (as
detectron2's ``RotatedBoxes``, torchvision's ``cxcywhr``). Results are a list of
``{"image_id", "category_id", "bbox": [cx, cy, w, h, a], "score"}``. The boxes go to the
dataset's ``rotated`` column, their envelopes to ``boxes``; ``area`` is the annotation's
``area`` when given, else ``w * h`` (pycocotools' ``loadRes`` takes ``w * h`` for results).

Examples
--------
>>> doc = {"images": [{"id": 1, "file_name": "a.png"}], "categories": [{"id": 1, "name": "car"}],
...        "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
...                         "bbox": [50, 50, 40, 20, 90], "iscrowd": 0}]}
>>> gt = read_coco_rotated_ground_truth(doc)
>>> gt.rotated.tolist(), gt.boxes.round(6).tolist(), gt.area.tolist()
([[50.0, 50.0, 40.0, 20.0, 90.0]], [[40.0, 30.0, 60.0, 70.0]], [800.0])
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.boxes import box_convert
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io._oriented import dataset_quads
from ioukit.io._text import atomic_write_text, check_exists, read_text

__all__ = [
    "read_coco_rotated_ground_truth",
    "read_coco_rotated_results",
    "write_coco_rotated",
]


def _load(source: object, what: str) -> tuple[Any, str]:
    if isinstance(source, (str, os.PathLike)):
        path = check_exists(source, what)
        try:
            return json.loads(read_text(path)), str(path)
        except ValueError as exc:
            raise DataFormatError(f"{path}: malformed JSON: {exc}") from None
    return source, what


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataFormatError(f"{where}: expected a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise DataFormatError(f"{where}: expected a finite number, got {value!r}")
    return number


def _rbox(record: Mapping[str, Any], where: str) -> list[float]:
    box = record.get("bbox")
    if not isinstance(box, (list, tuple)) or len(box) != 5:
        got = f"{len(box)} numbers" if isinstance(box, (list, tuple)) else repr(box)
        raise DataFormatError(
            f"{where}.bbox: expected 5 numbers [cx, cy, w, h, angle] (rotated), got {got}"
        )
    values = [_number(v, f"{where}.bbox[{i}]") for i, v in enumerate(box)]
    if values[2] < 0 or values[3] < 0:
        raise DataFormatError(f"{where}.bbox: expected w >= 0 and h >= 0, got {values}")
    return values


def _field(record: object, key: str, where: str) -> Any:
    if not isinstance(record, Mapping) or key not in record:
        raise DataFormatError(f"{where}: expected an object with {key!r}")
    return record[key]


def _envelopes(rboxes: np.ndarray) -> np.ndarray:

    if len(rboxes) == 0:
        return np.zeros((0, 4))
    return np.asarray(box_convert(rboxes, "cxcywhr", "xyxy"))


def read_coco_rotated_ground_truth(
    source: str | os.PathLike[str] | Mapping[str, Any], /
) -> Dataset:
    """Read a COCO-style dataset whose ``bbox`` fields are ``[cx, cy, w, h, angle]``.

    Parameters
    ----------
    source : path or dict

    Returns
    -------
    Dataset
        With the ``rotated`` column; ``crowd`` from ``iscrowd``, ``ignore`` from ``ignore``,
        ``difficult`` from ``difficult`` (DOTA's flag; written by :func:`write_coco_rotated`).

    Raises
    ------
    DataFormatError
        A missing section or field, a ``bbox`` without 5 finite numbers, a negative size, an
        unknown image or category (the message names the JSON path).
    """
    doc, label = _load(source, "ground truth")
    if not isinstance(doc, Mapping):
        raise DataFormatError(f"{label}: expected a COCO object with images/annotations")
    for section in ("images", "annotations"):
        if not isinstance(doc.get(section), list):
            raise DataFormatError(f"{label}: {section}: expected a list")
    images_doc = doc["images"]
    ids = [int(_field(im, "id", f"{label}: images[{i}]")) for i, im in enumerate(images_doc)]
    stems = [Path(str(im.get("file_name", ids[i]))).stem for i, im in enumerate(images_doc)]
    sizes = [
        (float(im.get("width", math.nan)), float(im.get("height", math.nan))) for im in images_doc
    ]
    images = ImageTable.from_lists(ids, stems, [s[0] for s in sizes], [s[1] for s in sizes])
    cats_doc = doc.get("categories") or []
    cat_ids = [int(_field(c, "id", f"{label}: categories[{i}]")) for i, c in enumerate(cats_doc)]
    names = [str(c.get("name", cid)) for c, cid in zip(cats_doc, cat_ids, strict=True)]
    categories = CategoryTable.from_lists(cat_ids, names)
    known_cats = set(cat_ids)
    rboxes, image_index, category_id, area, crowd, ignore, ann_ids = [], [], [], [], [], [], []
    difficult: list[bool] = []
    for i, ann in enumerate(doc["annotations"]):
        where = f"{label}: annotations[{i}]"
        image_id = int(_field(ann, "image_id", where))
        try:
            row = images.index_of(image_id)
        except KeyError:
            raise DataFormatError(f"{where}.image_id: {image_id} is not in images") from None
        cid = int(_field(ann, "category_id", where))
        if cid not in known_cats:
            raise DataFormatError(f"{where}.category_id: {cid} is not in categories")
        box = _rbox(ann, where)
        rboxes.append(box)
        image_index.append(row)
        category_id.append(cid)
        area.append(_number(ann["area"], f"{where}.area") if "area" in ann else box[2] * box[3])
        crowd.append(bool(ann.get("iscrowd", 0)))
        ignore.append(bool(ann.get("ignore", 0)))
        difficult.append(bool(ann.get("difficult", 0)))  # DOTA's flag, kept by the writer
        ann_ids.append(int(ann.get("id", i + 1)))
    rotated = np.asarray(rboxes, dtype=np.float64).reshape(-1, 5)
    return Dataset.from_arrays(
        images,
        categories,
        boxes=_envelopes(rotated),
        image_index=image_index,
        category_id=category_id,
        area=area,
        crowd=crowd,
        ignore=ignore,
        difficult=difficult,
        annotation_id=ann_ids,
        rotated=rotated,
    )


def read_coco_rotated_results(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]], /, ground_truth: Dataset
) -> Dataset:
    """Read detectron2-style rotated results against a ground truth.

    Parameters
    ----------
    source : path or list of dict
        ``{"image_id", "category_id", "bbox": [cx, cy, w, h, angle], "score"}`` entries.
    ground_truth : Dataset
        Gives the image and category tables.

    Returns
    -------
    Dataset
        Predictions with ``rotated``, ``area = w * h``.

    Examples
    --------
    >>> gt = read_coco_rotated_ground_truth({"images": [{"id": 1}], "categories": [{"id": 1}],
    ...     "annotations": [{"image_id": 1, "category_id": 1, "bbox": [5, 5, 4, 2, 0]}]})
    >>> pred = read_coco_rotated_results(
    ...     [{"image_id": 1, "category_id": 1, "bbox": [5, 5, 4, 2, 30], "score": 0.8}], gt)
    >>> pred.scores.tolist(), pred.rotated.tolist()
    ([0.8], [[5.0, 5.0, 4.0, 2.0, 30.0]])
    """
    doc, label = _load(source, "predictions")
    if isinstance(doc, Mapping) and isinstance(doc.get("annotations"), list):
        doc = doc["annotations"]
    if not isinstance(doc, list):
        raise DataFormatError(f"{label}: expected a list of result objects")
    known_cats = set(ground_truth.categories.ids.tolist())
    rboxes, image_index, category_id, scores = [], [], [], []
    for i, res in enumerate(doc):
        where = f"{label}: [{i}]"
        image_id = int(_field(res, "image_id", where))
        try:
            row = ground_truth.images.index_of(image_id)
        except KeyError:
            raise DataFormatError(
                f"{where}.image_id: {image_id} is not in the ground truth's images"
            ) from None
        cid = int(_field(res, "category_id", where))
        if cid not in known_cats:
            raise DataFormatError(f"{where}.category_id: {cid} is not a ground-truth category")
        rboxes.append(_rbox(res, where))
        image_index.append(row)
        category_id.append(cid)
        scores.append(_number(_field(res, "score", where), f"{where}.score"))
    rotated = np.asarray(rboxes, dtype=np.float64).reshape(-1, 5)
    return Dataset.from_arrays(
        ground_truth.images,
        ground_truth.categories,
        boxes=_envelopes(rotated),
        image_index=image_index,
        category_id=category_id,
        scores=scores,
        area=rotated[:, 2] * rotated[:, 3],
        rotated=rotated,
    )


def write_coco_rotated(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ground truth as a rotated COCO dataset, or predictions as a rotated results list.

    Boxes come from ``rotated``; a dataset without it (corners from DOTA / YOLO OBB, or
    axis-aligned boxes) is converted with torchvision's ``xyxyxyxy -> cxcywhr`` (the first
    edge is the width), exact for rectangles. Written atomically.

    Parameters
    ----------
    dataset : Dataset
    path : path
        The ``.json`` file.

    Returns
    -------
    Path
    """

    if dataset.rotated is not None:
        rotated = np.asarray(dataset.rotated, dtype=np.float64).reshape(-1, 5)
    else:
        quads = dataset_quads(dataset)
        rotated = (
            np.asarray(box_convert(quads, "xyxyxyxy", "cxcywhr"))
            if len(quads)
            else (np.zeros((0, 5)))
        )
    image_ids = dataset.images.ids[dataset.image_index].tolist()
    boxes = rotated.tolist()
    cats = dataset.category_id.tolist()
    if dataset.scores is not None:
        scores = dataset.scores.tolist()
        out: Any = [
            {"image_id": image_ids[k], "category_id": cats[k], "bbox": boxes[k], "score": scores[k]}
            for k in range(len(dataset))
        ]
    else:
        out = {
            "images": [
                {"id": int(i), "file_name": stem}
                | ({"width": float(w)} if w == w else {})
                | ({"height": float(h)} if h == h else {})
                for i, stem, w, h in zip(
                    dataset.images.ids.tolist(),
                    dataset.images.stems,
                    dataset.images.widths.tolist(),
                    dataset.images.heights.tolist(),
                    strict=True,
                )
            ],
            "categories": [
                {"id": int(i), "name": n}
                for i, n in zip(
                    dataset.categories.ids.tolist(), dataset.categories.names, strict=True
                )
            ],
            "annotations": [
                {
                    "id": int(dataset.annotation_id[k]),
                    "image_id": image_ids[k],
                    "category_id": cats[k],
                    "bbox": boxes[k],
                    "area": float(dataset.area[k]),
                    "iscrowd": int(dataset.crowd[k]),
                }
                | ({"ignore": 1} if dataset.ignore[k] else {})
                | ({"difficult": 1} if dataset.difficult[k] else {})
                for k in range(len(dataset))
            ],
        }
    return atomic_write_text(path, json.dumps(out))
