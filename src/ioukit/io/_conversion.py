"""What a target format cannot hold, said before writing (#23 items 13 and 14).

Every writer keeps what its format can say; :func:`conversion_notes` lists the rest for
``ioukit convert`` to print, and :func:`rows_kept` gives the rows a YOLO-family writer keeps:

- YOLO, YOLO OBB and YOLO pose have no crowd, ignore or difficult flag. A crowd region or an
  ignored box written as an ordinary box would count as an object to find, so YOLO leaves
  them out, as Ultralytics' converters do (``convert_coco`` skips ``iscrowd``; its VOC
  script skips ``difficult``). YOLO OBB keeps DOTA's difficult boxes as ordinary boxes, as
  Ultralytics' ``convert_dota_to_yolo_obb`` does (the flag is lost: said in a note).
- Normalized ``cx cy w h`` hold a box whose centre and size lie inside the image; a box whose
  centre lies outside or that is larger than the image (a prediction, most often) is clipped
  to the image, as Ultralytics clips its predictions, so that the file reads back (a value
  above 1 is refused by the readers).
- COCO keeps ``iscrowd`` and writes ``difficult`` and ``ignore`` as ``"ignore": 1``; COCO
  rotated keeps ``iscrowd``, ``ignore`` and ``difficult``; VOC keeps ``difficult`` and writes
  a crowd region as a non-standard ``<iscrowd>``; DOTA keeps ``difficult`` only.
- Masks and keypoints are written only by the formats that hold them.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [100]),
...     CategoryTable.from_lists([1], ["cat"]), boxes=[[0, 0, 50, 50], [90, 10, 130, 90]],
...     image_index=[0, 0], category_id=[1, 1], crowd=[True, False])
>>> for note in conversion_notes(gt, "yolo"):
...     print(note[:60])
1 crowd region(s) left out: YOLO has no crowd flag (Ultralyt
1 box(es) whose centre or size lies outside the image clippe
>>> rows_kept(gt, "yolo").tolist()
[False, True]
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.io.formats import file_format

__all__ = [
    "beyond_normalized",
    "clip_beyond_normalized",
    "clip_to_images",
    "conversion_notes",
    "rows_kept",
    "take_rows",
]


def rows_kept(dataset: Dataset, format: str) -> np.ndarray:
    """Boolean mask of the rows ``format``'s writer keeps (ground truth of the YOLO family
    leaves out crowd regions and ignored boxes; YOLO also difficult ones)."""
    keep = np.ones(len(dataset), dtype=bool)
    if dataset.scores is not None:
        return keep
    for flag in sorted(file_format(format).leaves_out):
        keep &= ~getattr(dataset, flag)
    return keep


def take_rows(dataset: Dataset, keep: np.ndarray, **tables: Any) -> Dataset:
    """The rows of ``dataset`` where ``keep`` is True (every per-row column), with ``tables``
    (other fields replaced as given; the same tables by default)."""
    if keep.all() and not tables:
        return dataset
    n = len(dataset)
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(dataset):
        value = getattr(dataset, f.name)
        if f.name in ("images", "categories") or value is None:
            continue
        if isinstance(value, np.ndarray) and value.shape[:1] == (n,):
            changes[f.name] = value[keep]
        elif isinstance(value, list | tuple) and len(value) == n:
            changes[f.name] = type(value)(v for v, k in zip(value, keep.tolist(), strict=True) if k)
    return dataclasses.replace(dataset, **{**changes, **tables})


def beyond_normalized(dataset: Dataset) -> np.ndarray:
    """Rows whose normalized ``cx, cy, w, h`` would lie outside [0, 1] (a centre outside the
    image, a box larger than it): YOLO cannot write them so that they read back. A box that
    only crosses the border (its centre and size inside) is written as it is."""
    if not len(dataset):
        return np.zeros(0, dtype=bool)
    w = dataset.images.widths[dataset.image_index]
    h = dataset.images.heights[dataset.image_index]
    b = dataset.boxes
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.stack(
            [
                (b[:, 0] + b[:, 2]) / 2 / w,
                (b[:, 1] + b[:, 3]) / 2 / h,
                (b[:, 2] - b[:, 0]) / w,
                (b[:, 3] - b[:, 1]) / h,
            ],
            axis=1,
        )
        out = ((values < 0) | (values > 1)).any(axis=1)
    return np.asarray(out & np.isfinite(w) & np.isfinite(h), dtype=bool)


def clip_to_images(boxes: np.ndarray, widths: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """``(N, 4)`` xyxy boxes clipped to ``[0, W] x [0, H]`` of their images (new array).

    >>> clip_to_images(np.array([[-5.0, 10, 120, 90]]), np.array([100.0]), np.array([50.0]))
    array([[  0.,  10., 100.,  50.]])
    """
    out = np.array(boxes, dtype=np.float64, copy=True)
    out[:, 0] = np.clip(out[:, 0], 0, widths)
    out[:, 2] = np.clip(out[:, 2], 0, widths)
    out[:, 1] = np.clip(out[:, 1], 0, heights)
    out[:, 3] = np.clip(out[:, 3], 0, heights)
    return out


def clip_beyond_normalized(dataset: Dataset) -> np.ndarray:
    """``dataset.boxes`` with the rows of :func:`beyond_normalized` clipped to their image."""
    rows = beyond_normalized(dataset)
    boxes = np.array(dataset.boxes, dtype=np.float64, copy=True)
    if rows.any():
        index = dataset.image_index[rows]
        boxes[rows] = clip_to_images(
            boxes[rows], dataset.images.widths[index], dataset.images.heights[index]
        )
    return boxes


def conversion_notes(dataset: Dataset, format: str) -> list[str]:
    """One line for each kind of thing ``format`` cannot hold that ``dataset`` has."""
    notes: list[str] = []
    fmt = file_format(format)
    target = fmt.label
    truth = dataset.scores is None
    crowd, ignore, difficult = (
        int(dataset.crowd.sum()),
        int(dataset.ignore.sum()),
        int(dataset.difficult.sum()),
    )
    if truth and fmt.leaves_out:  # the YOLO family
        if crowd:
            notes.append(
                f"{crowd} crowd region(s) left out: {target} has no crowd flag (Ultralytics' "
                "converter skips them too)"
            )
        if ignore:
            notes.append(f"{ignore} ignored box(es) left out: {target} has no ignore flag")
        if difficult and "difficult" in fmt.leaves_out:
            notes.append(
                f"{difficult} difficult box(es) left out: YOLO has no difficult flag "
                "(Ultralytics' VOC script skips them too)"
            )
        elif difficult and "difficult" in fmt.drops:
            notes.append(
                f"{difficult} difficult flag(s) dropped: YOLO OBB has no difficult field; the "
                "boxes are written as ordinary ones (as Ultralytics' DOTA converter does)"
            )
    elif truth and {"crowd", "ignore"} <= fmt.drops:  # DOTA: a difficult flag only
        if crowd or ignore:
            notes.append(
                f"{crowd + ignore} crowd or ignore flag(s) dropped: DOTA has a difficult flag "
                "only; the boxes are written as ordinary ones"
            )
    elif truth and "ignore" in fmt.drops and ignore:  # VOC: difficult, no ignore
        notes.append(f"{ignore} ignore flag(s) dropped: VOC has difficult and no ignore flag")
    if fmt.clips_to_image and len(dataset):
        kept = rows_kept(dataset, format)
        clipped = int((beyond_normalized(dataset) & kept).sum())
        if clipped:
            notes.append(
                f"{clipped} box(es) whose centre or size lies outside the image clipped to the "
                "image (normalized values stay in [0, 1] and read back)"
            )
    if dataset.segmentation is not None and not fmt.holds_masks:
        notes.append(f"masks not written: {target} holds boxes")
    return notes
