"""Write keypoint datasets: COCO keypoint JSON and Ultralytics pose label folders.

COCO: the document of :func:`ioukit.io.coco_writer.coco_dict` plus each annotation's
``keypoints`` (``[x, y, v, ...]``, ``v`` an integer, or a confidence kept as it is) and
``num_keypoints`` (the count of ``v > 0``), or each result's ``keypoints`` (the third value as
read: a score or visibility).
YOLO pose: ``class cx cy w h x1 y1 v1 ...`` (predictions add ``conf``), coordinates normalized
by the image size, ``classes.txt`` and a ``data.yaml`` with ``names`` and ``kpt_shape``.
Both are written atomically and read back by :mod:`ioukit.io.coco_keypoints` and
:mod:`ioukit.io.yolo_pose` to the same numbers.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [50]),
...     CategoryTable.from_lists([0], ["person"]), boxes=[[10, 10, 30, 40]], image_index=[0],
...     category_id=[0], keypoints=[[[20, 20, 2], [0, 0, 0]]])
>>> ann = coco_keypoints_dict(gt)["annotations"][0]
>>> ann["keypoints"], ann["num_keypoints"]
([20.0, 20.0, 2, 0.0, 0.0, 0], 1)
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io._text import atomic_directory, atomic_write_bytes
from ioukit.io._yolo_folder import require_image_sizes
from ioukit.io.coco_writer import _dumps, coco_dict
from ioukit.io.yolo import yolo_class_indices

__all__ = ["coco_keypoints_dict", "write_coco_keypoints", "write_yolo_pose"]


def _flag(v: float) -> int | float:
    """A visibility as written: 0/1/2 as integers, a confidence (COCO-WholeBody's 0.187) as
    it is, so that ``v > 0`` stays labelled (#23 item 21)."""
    return int(v) if v == int(v) else v


def _keypoints(dataset: Dataset) -> np.ndarray:
    if dataset.keypoints is None:
        raise DataFormatError("dataset.keypoints: expected (N, K, 3) keypoints to write, got none")
    return dataset.keypoints


def coco_keypoints_dict(dataset: Dataset, /) -> dict[str, Any] | list[dict[str, Any]]:
    """The COCO keypoint document of ``dataset`` (dict for ground truth, list for results)."""
    kp = _keypoints(dataset)
    visible = (kp[:, :, 2] > 0).sum(axis=1)
    # persons without a visible keypoint are ignored by the keypoint readers anyway: no
    # "ignore" key for them
    plain = dataclasses.replace(dataset, ignore=dataset.ignore & (visible > 0))
    doc = coco_dict(plain)
    flat = kp.reshape(len(kp), -1).tolist()
    if isinstance(doc, list):
        for record, values in zip(doc, flat, strict=True):
            record["keypoints"] = values
        return doc
    for ann, values, count in zip(doc["annotations"], flat, visible.tolist(), strict=True):
        values[2::3] = [_flag(v) for v in values[2::3]]
        ann["keypoints"] = values
        ann["num_keypoints"] = int(count)
    return doc


def write_coco_keypoints(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` (with keypoints) as COCO keypoint JSON, atomically; returns the path."""
    atomic_write_bytes(Path(path), _dumps(coco_keypoints_dict(dataset)))
    return Path(path)


def write_yolo_pose(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` (with keypoints) as an Ultralytics pose label folder.

    Raises
    ------
    DataFormatError
        An image size is unknown (normalized coordinates need it).
    """
    kp = _keypoints(dataset)
    require_image_sizes(dataset, "YOLO")
    images = dataset.images
    index = yolo_class_indices(dataset)
    w = images.widths[dataset.image_index]
    h = images.heights[dataset.image_index]
    b = dataset.boxes
    boxes = np.stack(
        [(b[:, 0] + b[:, 2]) / 2 / w, (b[:, 1] + b[:, 3]) / 2 / h,
         (b[:, 2] - b[:, 0]) / w, (b[:, 3] - b[:, 1]) / h],
        axis=1,
    )  # fmt: skip
    points = np.stack([kp[:, :, 0] / w[:, None], kp[:, :, 1] / h[:, None], kp[:, :, 2]], axis=2)
    scores = dataset.scores.tolist() if dataset.scores is not None else None
    lines: list[list[str]] = [[] for _ in range(len(images))]
    classes = [index[int(c)] for c in dataset.category_id.tolist()]
    for i, (row, box, pts) in enumerate(
        zip(dataset.image_index.tolist(), boxes.tolist(), points.tolist(), strict=True)
    ):
        fields = [str(classes[i]), *(repr(v) for v in box)]
        for x, y, v in pts:
            third = repr(v) if scores is not None else str(_flag(v))
            fields += [repr(x), repr(y), third]
        if scores is not None:
            fields.append(repr(scores[i]))
        lines[row].append(" ".join(fields))
    names = dict(zip(dataset.categories.ids.tolist(), dataset.categories.names, strict=True))
    by_index = sorted((i, names[c]) for c, i in index.items())
    yaml = "names:\n" + "".join(f"  {i}: {n!r}\n" for i, n in by_index)
    yaml += f"kpt_shape: [{kp.shape[1]}, 3]\n"
    with atomic_directory(path) as tmp:
        for stem, rows in zip(images.stems, lines, strict=True):
            (tmp / f"{stem}.txt").write_text("".join(f"{r}\n" for r in rows), encoding="utf-8")
        (tmp / "classes.txt").write_text("".join(f"{n}\n" for _, n in by_index), encoding="utf-8")
        (tmp / "data.yaml").write_text(yaml, encoding="utf-8")
    return Path(path)
