"""Private helpers of the oriented-box readers and writers (DOTA, Ultralytics OBB).

An oriented box is kept in a :class:`~ioukit.dataset.Dataset` as its four corners, stored as a
one-polygon COCO segmentation ``[[x1, y1, x2, y2, x3, y3, x4, y4]]`` in absolute pixels; its
``boxes`` row is the axis-aligned envelope and ``area`` the polygon's area. Any writer that
keeps segmentations (COCO JSON) keeps the corners; the axis-aligned writers (YOLO, VOC) write
the envelope.

Examples
--------
>>> quads = np.array([[0, 0, 4, 0, 4, 2, 0, 2.0]])
>>> envelope(quads).tolist(), polygon_area(quads).tolist()
([[0.0, 0.0, 4.0, 2.0]], [8.0])
"""

from __future__ import annotations

import numpy as np

from ioukit.boxes import box_convert
from ioukit.dataset import CategoryTable, Dataset, ImageTable

__all__ = ["dataset_quads", "envelope", "polygon_area", "quads_dataset"]


def envelope(quads: np.ndarray) -> np.ndarray:
    """Axis-aligned envelopes ``(N, 4)`` xyxy of corners ``(N, 8)``."""
    xs, ys = quads[:, 0::2], quads[:, 1::2]
    return np.stack([xs.min(1), ys.min(1), xs.max(1), ys.max(1)], axis=1).reshape(-1, 4)


def polygon_area(quads: np.ndarray) -> np.ndarray:
    """Shoelace area (unsigned) of corners ``(N, 8)``."""
    xs, ys = quads[:, 0::2], quads[:, 1::2]
    signed = (xs * np.roll(ys, -1, axis=1) - np.roll(xs, -1, axis=1) * ys).sum(1) / 2
    area: np.ndarray = np.abs(signed)
    return area


def quads_dataset(
    images: ImageTable,
    categories: CategoryTable,
    *,
    image_index: list[int],
    category_id: list[int],
    quads: list[list[float]],
    scores: list[float] | None = None,
    difficult: list[bool] | None = None,
) -> Dataset:
    """A dataset of oriented boxes given as absolute corners (see the module notes)."""
    corners = np.asarray(quads, dtype=np.float64).reshape(-1, 8)
    return Dataset.from_arrays(
        images,
        categories,
        boxes=envelope(corners),
        image_index=np.asarray(image_index, dtype=np.int64),
        category_id=np.asarray(category_id, dtype=np.int64),
        scores=None if scores is None else np.asarray(scores, dtype=np.float64),
        area=polygon_area(corners),
        difficult=None if difficult is None else np.asarray(difficult, dtype=bool),
        segmentation=[[row] for row in corners.tolist()],
    )


def dataset_quads(dataset: Dataset) -> np.ndarray:
    """Corners ``(N, 8)`` of every box: from the ``rotated`` column (cxcywhr, degrees
    counter-clockwise) when the dataset has one, else a one-polygon 8-number segmentation,
    else the box.

    An axis-aligned box ``(x1, y1, x2, y2)`` becomes ``(x1, y1, x2, y1, x2, y2, x1, y2)``.
    """
    if dataset.rotated is not None:
        rotated = np.asarray(dataset.rotated, dtype=np.float64).reshape(-1, 5)
        corners: np.ndarray = np.asarray(box_convert(rotated, "cxcywhr", "xyxyxyxy"))
        return corners.reshape(-1, 8)
    b = dataset.boxes
    out = np.stack([b[:, 0], b[:, 1], b[:, 2], b[:, 1], b[:, 2], b[:, 3], b[:, 0], b[:, 3]], 1)
    out = out.reshape(-1, 8)
    if dataset.segmentation is not None:
        for k, seg in enumerate(dataset.segmentation):
            if isinstance(seg, list) and len(seg) == 1 and len(seg[0]) == 8:
                out[k] = np.asarray(seg[0], dtype=np.float64)
    return out
