"""Write a :class:`~ioukit.dataset.Dataset` as COCO JSON (ground truth or a results list).

Ground truth becomes ``{"images", "annotations", "categories"}`` with ``bbox`` in COCO's
``[x, y, w, h]``, the dataset's ``area`` and ``iscrowd``; a VOC ``difficult`` box also gets
``"ignore": 1`` (which ioukit honours and pycocotools ignores). Image ``file_name`` is the
stem plus ``.jpg``, so stems survive the round trip. Predictions become the results list
``[{"image_id", "category_id", "bbox", "score"}]``.
Files are written atomically (temporary file, then rename).

Examples
--------
>>> from ioukit.dataset import CategoryTable, ImageTable
>>> gt = Dataset.from_arrays(ImageTable.from_lists([5], ["a"], [640], [480]),
...     CategoryTable.from_lists([1], ["cat"]), boxes=[[10, 20, 30, 60]], image_index=[0],
...     category_id=[1])
>>> coco_dict(gt)["annotations"][0]["bbox"]
[10.0, 20.0, 20.0, 40.0]
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ioukit.dataset import Dataset
from ioukit.io._names import check_writable
from ioukit.io._text import atomic_write_bytes

__all__ = ["coco_dict", "write_coco"]


def _dumps(obj: object) -> bytes:
    try:
        import orjson
    except ImportError:
        return json.dumps(obj, separators=(",", ":")).encode("utf-8")
    return orjson.dumps(obj)


def coco_dict(dataset: Dataset, /) -> dict[str, Any] | list[dict[str, Any]]:
    """The COCO JSON document of ``dataset`` as Python objects (dict for ground truth, list of
    result dicts for predictions).

    Parameters
    ----------
    dataset : Dataset

    Returns
    -------
    dict or list of dict

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1], ["img"])
    >>> pred = Dataset.from_arrays(images, CategoryTable.from_lists([2], ["dog"]),
    ...     boxes=[[0, 0, 1, 2]], image_index=[0], category_id=[2], scores=[0.5])
    >>> coco_dict(pred)
    [{'image_id': 1, 'category_id': 2, 'bbox': [0.0, 0.0, 1.0, 2.0], 'score': 0.5}]
    """
    images = dataset.images
    image_ids = images.ids.tolist()
    b = dataset.boxes
    xywh = [[x1, y1, x2 - x1, y2 - y1] for x1, y1, x2, y2 in b.tolist()]
    image_of = [image_ids[i] for i in dataset.image_index.tolist()]
    categories = dataset.category_id.tolist()
    if dataset.scores is not None:
        return [
            {"image_id": i, "category_id": c, "bbox": box, "score": s}
            for i, c, box, s in zip(
                image_of, categories, xywh, dataset.scores.tolist(), strict=True
            )
        ]
    image_rows = []
    for image_id, stem, width, height in zip(
        image_ids, images.stems, images.widths.tolist(), images.heights.tolist(), strict=True
    ):
        row: dict[str, Any] = {"id": image_id, "file_name": f"{stem}.jpg"}
        if math.isfinite(width) and math.isfinite(height):
            row["width"] = int(width) if width.is_integer() else width
            row["height"] = int(height) if height.is_integer() else height
        image_rows.append(row)
    annotations = []
    segmentation = dataset.segmentation
    for k, (ann_id, image_id, cat, box, area, crowd, ignore, difficult) in enumerate(
        zip(
            dataset.annotation_id.tolist(),
            image_of,
            categories,
            xywh,
            dataset.area.tolist(),
            dataset.crowd.tolist(),
            dataset.ignore.tolist(),
            dataset.difficult.tolist(),
            strict=True,
        )
    ):
        ann: dict[str, Any] = {
            "id": ann_id,
            "image_id": image_id,
            "category_id": cat,
            "bbox": box,
            "area": area,
            "iscrowd": int(crowd),
        }
        if ignore or difficult:
            ann["ignore"] = 1
        if segmentation is not None and segmentation[k] is not None:
            ann["segmentation"] = segmentation[k]
        annotations.append(ann)
    cats = [
        {"id": i, "name": n}
        for i, n in zip(dataset.categories.ids.tolist(), dataset.categories.names, strict=True)
    ]
    return {"images": image_rows, "annotations": annotations, "categories": cats}


def write_coco(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` to ``path`` as COCO JSON (atomically).

    Parameters
    ----------
    dataset : Dataset
        Ground truth (written as a COCO dataset) or predictions (a COCO results list).
    path : path
        Output ``.json`` file.

    Returns
    -------
    Path

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"]),
    ...     CategoryTable.from_lists([1], ["cat"]), boxes=[], image_index=[], category_id=[])
    >>> out = write_coco(gt, pathlib.Path(tempfile.mkdtemp()) / "gt.json")
    >>> json.loads(out.read_text())["images"]
    [{'id': 1, 'file_name': 'a.jpg'}]
    """
    check_writable(dataset, "coco")
    return atomic_write_bytes(path, _dumps(coco_dict(dataset)))
