"""Ultralytics OBB label files: ``class x1 y1 x2 y2 x3 y3 x4 y4`` normalized to [0, 1].

A folder of ``<image>.txt`` files, one oriented box per line as its four corners divided by the
image width (x) and height (y), as Ultralytics' ``yolo obb`` datasets and ``save_txt`` write
them; predictions add the confidence at the end (``save_conf``). In the
:class:`~ioukit.dataset.Dataset` the corners are kept in pixels as a one-polygon segmentation,
the envelope as ``boxes`` (see :mod:`ioukit.io._oriented`). Without image sizes the corners
stay in normalized units.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\\n")
>>> gt = read_yolo_obb_ground_truth(d, image_size="100x50", classes=["plane"])
>>> gt.boxes.tolist(), gt.categories.names
([[10.0, 5.0, 50.0, 15.0]], ('plane',))
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ioukit.dataset import Dataset
from ioukit.io._build import (
    ClassSource,
    Unknowns,
    ground_truth_categories,
    prediction_category,
)
from ioukit.io._conversion import rows_kept, take_rows
from ioukit.io._names import check_writable
from ioukit.io._oriented import dataset_quads, quads_dataset
from ioukit.io._yolo_folder import (
    parse_label,
    pixel_points,
    prediction_folder,
    read_label_folder,
    records,
    require_image_sizes,
    write_label_folder,
)
from ioukit.overlap.rotated import convex_hull_quads

__all__ = ["read_yolo_obb_ground_truth", "read_yolo_obb_predictions", "write_yolo_obb"]

_HINT = "pixel corners are DOTA's format: use --gt-format dota"
_PRED_HINT = "pixel corners are DOTA's format: use --pred-format dota"
_CORNERS = ("x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4")


def read_yolo_obb_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    image_size: str | Sequence[float] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    classes: ClassSource = None,
    convex_hull: bool = False,
) -> Dataset:
    """Read a folder of Ultralytics OBB label files as ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<image>.txt`` files (``class x1 y1 ... x4 y4`` per line, normalized).
    image_size : "WxH" or (width, height), optional
        One size for every image.
    images_dir : path, optional
        Images matched by stem; their headers give the sizes.
    classes : path, list of str or mapping, optional
        ``classes.txt``, ``data.yaml`` or the names; default: looked up next to ``path``.
    convex_hull : bool
        Replace non-convex or self-intersecting quadrilaterals by their convex hull
        (:func:`ioukit.overlap.rotated.convex_hull_quads`); the rotated IoU refuses them.

    Returns
    -------
    Dataset
        Category ids equal the class indices; corners kept in pixels.

    Raises
    ------
    DataFormatError
        A malformed line (file and line named), a coordinate outside [0, 1].
    """
    labels = read_label_folder(path, image_size=image_size, images_dir=images_dir, classes=classes)
    images = labels.images
    rows: list[int] = []
    marks: list[str] = []
    quads: list[list[float]] = []
    for file, row, line, tokens in records(labels.files, labels.rows, "reading labels"):
        assert row is not None
        cls, corners, _ = parse_label(
            tokens, file, line, _CORNERS, prediction=False, range_hint=_HINT
        )
        rows.append(row)
        marks.append(str(cls))
        quads.append(pixel_points(corners, float(images.widths[row]), float(images.heights[row])))
    table, ids = ground_truth_categories(marks, labels.names, labels.folder, indices=True)
    if convex_hull and quads:
        quads = convex_hull_quads(np.asarray(quads).reshape(-1, 8)).tolist()
    return quads_dataset(
        images, table, image_index=rows, category_id=[ids[x] for x in marks], quads=quads
    )


def read_yolo_obb_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    classes: ClassSource = None,
    unknowns: Unknowns | None = None,
) -> Dataset:
    """Read Ultralytics OBB prediction files (``class x1 y1 ... x4 y4 conf``).

    Parameters
    ----------
    path : path
        Folder of ``<image>.txt`` files, matched to the ground truth's images by stem.
    ground_truth : Dataset
        Gives the images (and their sizes) and the categories.
    classes : path, list of str or mapping, optional
        Names of the prediction class indices.
    unknowns : Unknowns, optional
        Collects predictions of images or classes the ground truth lacks instead of raising.

    Returns
    -------
    Dataset
        Predictions sharing ``ground_truth``'s tables.
    """
    lookup, lines = prediction_folder(path, ground_truth, classes)
    widths, heights = ground_truth.images.widths, ground_truth.images.heights
    rows: list[int] = []
    cats: list[int] = []
    quads: list[list[float]] = []
    scores: list[float] = []
    for file, row, line, tokens in lines:
        cls, corners, score = parse_label(
            tokens, file, line, _CORNERS, prediction=True, range_hint=_PRED_HINT
        )
        category = prediction_category(row, cls, lookup, unknowns, file, line)
        if category is None or row is None:  # row None: category None (skipped or raised)
            continue
        rows.append(row)
        cats.append(category)
        quads.append(pixel_points(corners, float(widths[row]), float(heights[row])))
        scores.append(score if score is not None else 0.0)
    return quads_dataset(
        ground_truth.images,
        ground_truth.categories,
        image_index=rows,
        category_id=cats,
        quads=quads,
        scores=scores,
    )


def write_yolo_obb(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ``dataset`` as Ultralytics OBB label files and ``classes.txt``.

    Lines are ``class x1 y1 ... x4 y4`` (normalized by the image size), predictions add
    ``conf``. Boxes without corners are written as rectangles. The folder is written atomically
    and must not exist or be empty.

    Parameters
    ----------
    dataset : Dataset
        Needs known image sizes.
    path : path

    Returns
    -------
    Path

    Raises
    ------
    DataFormatError
        An image size is unknown.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> gt = Dataset.from_arrays(ImageTable.from_lists([1], ["a"], [100], [50]),
    ...     CategoryTable.from_lists([0], ["ship"]), boxes=[[0, 0, 50, 25]], image_index=[0],
    ...     category_id=[0])
    >>> out = write_yolo_obb(gt, pathlib.Path(tempfile.mkdtemp()) / "labels")
    >>> (out / "a.txt").read_text()
    '0 0.0 0.0 0.5 0.0 0.5 0.5 0.0 0.5\\n'
    """
    check_writable(dataset, "yolo")
    require_image_sizes(dataset, "YOLO OBB")
    dataset = take_rows(dataset, rows_kept(dataset, "yolo_obb"))  # no crowd or ignore flag
    images = dataset.images
    quads = dataset_quads(dataset)
    norm = quads.copy()
    norm[:, 0::2] = quads[:, 0::2] / images.widths[dataset.image_index][:, None]
    norm[:, 1::2] = quads[:, 1::2] / images.heights[dataset.image_index][:, None]
    return write_label_folder(dataset, path, norm)
