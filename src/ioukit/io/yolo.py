"""YOLO txt folders (Ultralytics layout) <-> :class:`~ioukit.dataset.Dataset`.

One ``<stem>.txt`` per image. Labels: ``class cx cy w h``; predictions (``save_txt`` +
``save_conf``): ``class cx cy w h conf``; coordinates normalized to [0, 1] by the image width
and height. Class names come from ``classes.txt`` or a ``data.yaml`` ``names`` list, found in
the folder or its parent, or given explicitly.

Image sizes turn normalized boxes into pixels: ``image_size=(W, H)`` for all images, or
``images_dir`` whose image headers are read (no decoding, no Pillow needed); an Ultralytics
``.../labels/<split>`` folder finds its ``.../images/<split>`` sibling by itself. Without sizes
boxes stay in normalized units (each image counts as 1 x 1): IoU, VOC and YOLO AP are unchanged
by that, but COCO's small/medium/large ranges then mean nothing. Predictions read against a
ground truth use the ground truth's image sizes.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "img1.txt").write_text("0 0.5 0.5 0.25 0.5\\n")
>>> _ = (d / "classes.txt").write_text("cat\\n")
>>> gt = read_yolo_ground_truth(d, image_size=(640, 480))
>>> gt.boxes.tolist(), gt.categories.names
([[240.0, 120.0, 400.0, 360.0]], ('cat',))
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ioukit._kernels.text_rows import FALLBACK as ROWS_FALLBACK
from ioukit._kernels.text_rows import parse_rows
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io._build import (
    ClassSource,
    Columns,
    Unknowns,
    ground_truth_categories,
    prediction_category,
)
from ioukit.io._conversion import clip_beyond_normalized, rows_kept, take_rows
from ioukit.io._names import check_writable
from ioukit.io._progress import track
from ioukit.io._text import decode_text, iter_records, read_bytes
from ioukit.io._yolo_folder import (
    TOLERANCE,
    parse_box_label,
    pixel_box,
    prediction_files,
    read_label_folder,
    records,
    require_image_sizes,
    write_label_folder,
    yolo_class_indices,
)

__all__ = ["read_yolo_ground_truth", "read_yolo_predictions", "write_yolo", "yolo_class_indices"]

# what a coordinate above 1 suggests
_HINT = (
    "pixel coordinates in a YOLO file? YOLO divides by the image size; use --gt-format txt for "
    "pixel boxes"
)
_PRED_HINT = (
    "pixel coordinates in a YOLO file? YOLO divides by the image size; use --pred-format txt "
    "for pixel boxes (class conf x y w h)"
)


def read_yolo_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    image_size: str | Sequence[float] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    classes: ClassSource = None,
) -> Dataset:
    """Read a folder of YOLO label files as ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` label files (``class cx cy w h`` per line, normalized).
    image_size : "WxH" or (width, height), optional
        One size for every image.
    images_dir : path, optional
        Folder of images matched by stem; their headers give the sizes. Images without a label
        file are kept as images without objects.
    classes : path, list of str or mapping, optional
        ``classes.txt``, ``data.yaml`` or the names; default: looked up next to ``path``.

    Returns
    -------
    Dataset
        Ground truth with images numbered 1..I in sorted stem order and category ids equal to
        the YOLO class indices; boxes absolute xyxy (normalized units if no size is known).

    Raises
    ------
    DataFormatError
        A malformed line (the message names file and line), a coordinate outside [0, 1]
        (pixel coordinates in a YOLO file), a class missing from the class list.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("1 0.5 0.5 1 1\\n")
    >>> gt = read_yolo_ground_truth(d, image_size="100x50", classes=["cat", "dog"])
    >>> gt.boxes.tolist(), gt.category_id.tolist(), gt.categories.names
    ([[0.0, 0.0, 100.0, 50.0]], [1], ('cat', 'dog'))
    >>> len(read_yolo_ground_truth(pathlib.Path(tempfile.mkdtemp())))
    0
    """
    labels = read_label_folder(path, image_size=image_size, images_dir=images_dir, classes=classes)
    parsed: list[tuple[int, int, tuple[float, float, float, float]]] = []
    for file, row, line, tokens in records(labels.files, labels.rows, "reading labels"):
        assert row is not None  # every label file is an image of the folder
        cls, box, _ = parse_box_label(tokens, file, line, prediction=False, range_hint=_HINT)
        parsed.append((row, cls, box))
    table, ids = ground_truth_categories(
        (str(c) for _, c, _ in parsed), labels.names, labels.folder, indices=True
    )
    images = labels.images
    cols = Columns()
    for row, cls, box in parsed:
        cols.add(
            row,
            ids[str(cls)],
            pixel_box(box, float(images.widths[row]), float(images.heights[row])),
        )
    return cols.to_dataset(images, table, predictions=False)


def read_yolo_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    classes: ClassSource = None,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """Read a folder of YOLO prediction files (``class cx cy w h conf``) against a ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<stem>.txt`` files, matched to the ground truth's images by stem.
    ground_truth : Dataset
        Gives the images (and their sizes) and the categories.
    classes : path, list of str or mapping, optional
        Names of the prediction class indices (default: ``classes.txt``/``data.yaml`` next to
        ``path``, else indices are ground-truth category ids).
    unknowns : Unknowns, optional
        Collects predictions for images or classes the ground truth lacks instead of raising.

    Returns
    -------
    Dataset
        Predictions sharing ``ground_truth``'s image and category tables.

    Raises
    ------
    DataFormatError
        A malformed line, or (without ``unknowns``) an unknown image or class.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("0 0.5 0.5 1 1\\n")
    >>> gt = read_yolo_ground_truth(d, image_size=(10, 10))
    >>> p = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (p / "a.txt").write_text("0 0.5 0.5 1 1 0.9\\n")
    >>> read_yolo_predictions(p, gt).scores.tolist()
    [0.9]
    """
    lookup, files, rows = prediction_files(path, ground_truth, classes)
    widths, heights = ground_truth.images.widths, ground_truth.images.heights
    datas: list[bytes] = []
    failed: dict[int, Exception] = {}  # raised in file order, after earlier files' problems
    for index, file in enumerate(track(files, total=len(files), description="reading predictions")):
        try:
            datas.append(read_bytes(file))
        except (OSError, DataFormatError) as exc:
            failed[index] = exc
            datas.append(b"")
    fast = _fast_rows(datas, rows, _lookup_table(lookup), widths, heights)
    slow = sorted({f for f, row in enumerate(rows) if row is None} | fast.fallback | set(failed))
    if not slow:
        image_index, category_id, boxes, scores = fast.columns
    else:
        blocks = []
        starts = np.concatenate([[0], np.cumsum(fast.counts)])
        for f in range(len(files)):
            if f in failed:
                raise failed[f]
            if f in fast.fallback or rows[f] is None:
                text = decode_text(datas[f], files[f])
                block = _slow_block(text, files[f], rows[f], lookup, unknowns, widths, heights)
            else:
                a, b = starts[f], starts[f + 1]
                i, c, x, s = fast.columns
                block = (i[a:b], c[a:b], x[a:b], s[a:b])
            blocks.append(block)
        image_index, category_id, boxes, scores = (
            np.concatenate(c) for c in zip(*blocks, strict=True)
        )
    return Dataset.from_arrays(
        ground_truth.images,
        ground_truth.categories,
        boxes=boxes,
        image_index=image_index,
        category_id=category_id,
        scores=scores,
        difficult=np.zeros(len(boxes), dtype=bool),
        crowd=np.zeros(len(boxes), dtype=bool),
    )


def _lookup_table(lookup: dict[str, int]) -> np.ndarray:
    """``lookup`` (class index -> category id) as an array; -1 where a class is unknown."""
    indices = [int(k) for k in lookup]
    table = np.full(max(indices, default=-1) + 1, -1, dtype=np.int64)
    for key, category in lookup.items():
        table[int(key)] = category
    return table


@dataclass(frozen=True, slots=True)
class _FastRows:
    """The rows of the files that :func:`_fast_rows` read: ``columns`` (image row, category
    id, pixel box, score) of those files in file order, ``counts`` (rows per file, 0 for a file
    not read) and ``fallback`` (the files left to the line-by-line reader)."""

    columns: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    counts: np.ndarray
    fallback: set[int]


def _fast_rows(
    datas: list[bytes],
    rows: Sequence[int | None],
    table: np.ndarray,
    widths: np.ndarray,
    heights: np.ndarray,
) -> _FastRows:
    """Every file of plain ``class cx cy w h conf`` lines, all valid, in one compiled pass
    and one pass of NumPy (#29 item 5: 5 000 files / 320 000 rows). A file with anything else
    (commas, a line of another length, a class token that is not ASCII digits, a value out of
    range, an unknown class, non-ASCII text), and a file of no ground-truth image, is left in
    ``fallback`` for :func:`_slow_block`, which reads it line by line and names the problem.

    The numbers are ``float()`` of each token (``PyOS_string_to_double``) and the pixels the
    same IEEE operations as :func:`~ioukit.io._yolo_folder.pixel_box`: bit for bit what the
    line reader gives.
    """
    files = len(datas)
    known = np.array([row is not None for row in rows], dtype=bool)
    sizes = np.array([len(d) if k else 0 for d, k in zip(datas, known, strict=True)])
    offsets = np.zeros(files + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    joined = b"".join(d for d, k in zip(datas, known, strict=True) if k)
    out = np.empty((joined.count(b"\n") + files, 6))
    counts = np.empty(files, dtype=np.int64)
    parse_rows(joined, offsets, 6, out, counts)
    fallback = counts == ROWS_FALLBACK
    counts[fallback] = 0
    values = out[: int(counts.sum())]
    file_of = np.repeat(np.arange(files), counts)
    image = np.array([-1 if row is None else row for row in rows], dtype=np.int64)[file_of]
    cls = values[:, 0].astype(np.int64)
    coords = values[:, 1:5]
    inside = cls < len(table)
    category = table[np.where(inside, cls, 0)] if len(table) else np.full(len(cls), -1)
    bad = ~(
        np.isfinite(values).all(axis=1)
        & (coords <= 1 + TOLERANCE).all(axis=1)
        & (coords >= -TOLERANCE).all(axis=1)
        & (coords[:, 2:] >= 0).all(axis=1)
        & inside
        & (category >= 0)
    )
    if bad.any():
        fallback[file_of[bad]] = True
        keep = ~fallback[file_of]
        counts[fallback] = 0
        values, coords, image, category = values[keep], coords[keep], image[keep], category[keep]
    width, height = widths[image], heights[image]
    unsized = np.isnan(width)  # unknown size: keep normalized units
    width, height = np.where(unsized, 1.0, width), np.where(unsized, 1.0, height)
    cx, cy, w, h = coords.T
    boxes = np.stack(
        [(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height],
        axis=1,
    )
    return _FastRows(
        (image, category, boxes, values[:, 5].copy()),
        counts,
        set(np.flatnonzero(fallback | ~known).tolist()),
    )


def _slow_block(
    text: str,
    file: Path,
    row: int | None,
    lookup: dict[str, int],
    unknowns: Unknowns | None,
    widths: np.ndarray,
    heights: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One file line by line: every check of :func:`parse_box_label`, unknown images and
    classes raised or counted in ``unknowns``."""
    cols = Columns()
    for line, tokens in iter_records(text):
        cls, box, score = parse_box_label(
            tokens, file, line, prediction=True, range_hint=_PRED_HINT
        )
        category = prediction_category(row, cls, lookup, unknowns, file, line)
        if category is None or row is None:  # row None: category None (skipped or raised)
            continue
        cols.add(row, category, pixel_box(box, float(widths[row]), float(heights[row])), score)
    n = len(cols.boxes)
    return (
        np.asarray(cols.image_index, dtype=np.int64),
        np.asarray(cols.category_id, dtype=np.int64),
        np.asarray(cols.boxes, dtype=np.float64).reshape(n, 4),
        np.asarray(cols.scores, dtype=np.float64),
    )


def write_yolo(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` as a YOLO folder: one ``<stem>.txt`` per image and ``classes.txt``.

    Ground truth lines are ``class cx cy w h``; predictions add ``conf``. Coordinates are
    normalized by the image sizes (shortest round-trip decimals); a box whose centre or size
    lies outside its image is clipped to the image first, so that every value reads back in
    [0, 1]. Crowd regions, ignored and difficult
    boxes are left out (YOLO cannot mark them; Ultralytics' converters skip them too): see
    :func:`ioukit.io._conversion.conversion_notes`. The folder is written
    atomically (a temporary folder renamed at the end); it must not exist or be empty.

    Parameters
    ----------
    dataset : Dataset
        Needs known image sizes.
    path : path
        Output folder.

    Returns
    -------
    Path
        The folder written.

    Raises
    ------
    DataFormatError
        An image size is unknown.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [50]),
    ...     CategoryTable.from_lists([1], ["cat"]), boxes=[[0, 0, 50, 50]], image_index=[0],
    ...     category_id=[1])
    >>> out = write_yolo(gt, pathlib.Path(tempfile.mkdtemp()) / "labels")
    >>> (out / "a.txt").read_text()
    '0 0.25 0.5 0.5 1.0\\n'
    """
    check_writable(dataset, "yolo")
    require_image_sizes(dataset, "YOLO")
    dataset = take_rows(dataset, rows_kept(dataset, "yolo"))  # no crowd, ignore, difficult
    images = dataset.images
    w = images.widths[dataset.image_index]
    h = images.heights[dataset.image_index]
    b = clip_beyond_normalized(dataset)  # what cannot be written in [0, 1], clipped
    norm = np.stack(
        [
            (b[:, 0] + b[:, 2]) / 2 / w,
            (b[:, 1] + b[:, 3]) / 2 / h,
            (b[:, 2] - b[:, 0]) / w,
            (b[:, 3] - b[:, 1]) / h,
        ],
        axis=1,
    )
    return write_label_folder(dataset, path, norm)
