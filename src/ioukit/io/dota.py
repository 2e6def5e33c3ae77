"""DOTA oriented boxes: ``labelTxt`` ground truth and task-1 detection files.

Ground truth: a folder of ``<image>.txt`` files, one object per line::

    imagesource:GoogleEarth          (optional header lines, skipped)
    gsd:0.146343590398
    x1 y1 x2 y2 x3 y3 x4 y4 class difficult

(``difficult`` may be missing: 0). Detections (DOTA devkit task 1): ``Task1_<class>.txt`` files
(a folder of them, or one file), one detection per line::

    <image> score x1 y1 x2 y2 x3 y3 x4 y4

Coordinates are absolute pixels. In the :class:`~ioukit.dataset.Dataset` each box keeps its
four corners as a one-polygon segmentation, its envelope as ``boxes`` and its polygon area as
``area`` (see :mod:`ioukit.io._oriented`). Images are numbered 1..I in sorted stem order;
without a class list, categories are numbered 1..K in sorted name order (DOTA's class lists are
:data:`DOTA_V1_CLASSES` and :data:`DOTA_V15_CLASSES`).

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "P0001.txt").write_text("gsd:0.1\\n0 0 10 0 10 5 0 5 plane 0\\n")
>>> gt = read_dota_ground_truth(d)
>>> gt.boxes.tolist(), gt.categories.names, gt.area.tolist()
([[0.0, 0.0, 10.0, 5.0]], ('plane',), [50.0])
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from ioukit.dataset import Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io._build import (
    ClassSource,
    Unknowns,
    ground_truth_categories,
    load_class_names,
    resolve_image_sizes,
    stem_rows,
)
from ioukit.io._oriented import dataset_quads, quads_dataset
from ioukit.io._progress import track
from ioukit.io._text import atomic_directory, check_exists, iter_records, parse_number, read_text
from ioukit.overlap.rotated import convex_hull_quads

__all__ = [
    "DETECTION_FILE",
    "DOTA_V1_CLASSES",
    "DOTA_V15_CLASSES",
    "read_dota_ground_truth",
    "read_dota_predictions",
    "write_dota",
]

DOTA_V1_CLASSES = (
    "plane",
    "baseball-diamond",
    "bridge",
    "ground-track-field",
    "small-vehicle",
    "large-vehicle",
    "ship",
    "tennis-court",
    "basketball-court",
    "storage-tank",
    "soccer-ball-field",
    "roundabout",
    "harbor",
    "swimming-pool",
    "helicopter",
)
"""The 15 classes of DOTA v1.0, in the devkit's order."""

DOTA_V15_CLASSES = (*DOTA_V1_CLASSES, "container-crane")
"""The 16 classes of DOTA v1.5."""

DETECTION_FILE = re.compile(r"Task1_(?P<cls>.+)\.txt\Z")
"""Name of a DOTA task-1 detection file."""

_CORNERS = ("x1", "y1", "x2", "y2", "x3", "y3", "x4", "y4")


def _is_header(tokens: list[str]) -> bool:
    return len(tokens) == 1 and ":" in tokens[0]


def _corners(tokens: list[str], path: Path, line: int) -> list[float]:
    return [parse_number(t, path, line, f) for t, f in zip(tokens, _CORNERS, strict=True)]


def _label_files(folder: Path, what: str) -> list[Path]:
    if not folder.is_dir():
        raise DataFormatError(f"{what} {folder}: expected a folder of DOTA .txt files, got a file")
    return sorted(
        (p for p in folder.iterdir() if p.suffix == ".txt" and p.name != "classes.txt"),
        key=lambda p: p.stem,
    )


def read_dota_ground_truth(
    path: str | os.PathLike[str],
    /,
    *,
    classes: ClassSource = None,
    images_dir: str | os.PathLike[str] | None = None,
    convex_hull: bool = False,
) -> Dataset:
    """Read a folder of DOTA ``labelTxt`` files as ground truth.

    Parameters
    ----------
    path : path
        Folder of ``<image>.txt`` files (``x1 y1 ... x4 y4 class [difficult]`` per line).
    classes : path, list of str or mapping, optional
        The class list (e.g. :data:`DOTA_V1_CLASSES`); ids are its indices. Default: the names
        found, numbered 1..K in sorted order.
    images_dir : path, optional
        Images matched by stem; their headers give the sizes (else sizes are unknown, NaN).
    convex_hull : bool
        Replace non-convex or self-intersecting quadrilaterals by their convex hull
        (:func:`ioukit.overlap.rotated.convex_hull_quads`); the rotated IoU measures one with
        a reflex corner as the DOTA devkit does and refuses self-intersecting ones.

    Returns
    -------
    Dataset
        Ground truth with ``difficult`` flags and the corners kept (see the module notes).

    Raises
    ------
    DataFormatError
        A line without 8 coordinates, a class and an optional 0/1 difficult flag (the message
        names file and line), or a class missing from the class list.
    """
    folder = check_exists(path, "ground truth")
    files = _label_files(folder, "ground truth")
    stems = [p.stem for p in files]
    widths, heights = resolve_image_sizes(stems, image_size=None, images_dir=images_dir)
    rows: list[int] = []
    labels: list[str] = []
    quads: list[list[float]] = []
    difficult: list[bool] = []
    for row, file in enumerate(track(files, total=len(files), description="reading labels")):
        for line, tokens in iter_records(read_text(file)):
            if _is_header(tokens):
                continue
            if len(tokens) not in (9, 10):
                raise DataFormatError(
                    f"{file}: line {line}: expected 9 or 10 values "
                    f"(x1 y1 x2 y2 x3 y3 x4 y4 class [difficult]), got {len(tokens)}"
                )
            flag = tokens[9] if len(tokens) == 10 else "0"
            if flag not in ("0", "1"):
                raise DataFormatError(
                    f"{file}: line {line}: difficult: expected 0 or 1, got {flag!r}"
                )
            rows.append(row)
            quads.append(_corners(tokens[:8], file, line))
            labels.append(tokens[8])
            difficult.append(flag == "1")
    names = load_class_names(classes)
    table, ids = ground_truth_categories(labels, names, folder)
    images = ImageTable(np.arange(1, len(stems) + 1, dtype=np.int64), tuple(stems), widths, heights)
    return quads_dataset(
        images,
        table,
        image_index=rows,
        category_id=[ids[label] for label in labels],
        quads=_hull(quads) if convex_hull else quads,
        difficult=difficult,
    )


def read_dota_predictions(
    path: str | os.PathLike[str],
    /,
    ground_truth: Dataset,
    *,
    unknowns: Unknowns | None = None,
    convex_hull: bool = False,
) -> Dataset:
    """Read DOTA task-1 detection files (``Task1_<class>.txt``) against a ground truth.

    Parameters
    ----------
    path : path
        A ``Task1_<class>.txt`` file or a folder of them; lines are
        ``<image> score x1 y1 ... x4 y4``.
    ground_truth : Dataset
        Images are matched by stem, classes by name.
    unknowns : Unknowns, optional
        Collects detections of images or classes the ground truth lacks instead of raising.
    convex_hull : bool
        Replace non-convex quadrilaterals by their convex hull.

    Returns
    -------
    Dataset
        Predictions sharing ``ground_truth``'s tables, in file order (files sorted by name).

    Raises
    ------
    DataFormatError
        A malformed line, or (without ``unknowns``) an unknown image or class.
    """
    p = check_exists(path, "predictions")
    files = sorted(f for f in p.iterdir() if DETECTION_FILE.match(f.name)) if p.is_dir() else [p]
    if p.is_dir() and not files:
        raise DataFormatError(f"{p}: expected DOTA detection files Task1_<class>.txt, found none")
    by_name = dict(
        zip(ground_truth.categories.names, ground_truth.categories.ids.tolist(), strict=True)
    )
    rows_of = stem_rows(ground_truth.images)
    rows: list[int] = []
    cats: list[int] = []
    quads: list[list[float]] = []
    scores: list[float] = []
    for file in files:
        match = DETECTION_FILE.match(file.name)
        if match is None:
            raise DataFormatError(f"{file}: expected a DOTA detection file Task1_<class>.txt")
        name = match.group("cls")
        category = by_name.get(name)
        for line, tokens in iter_records(read_text(file)):
            if len(tokens) != 10:
                raise DataFormatError(
                    f"{file}: line {line}: expected 10 values "
                    f"(image score x1 y1 x2 y2 x3 y3 x4 y4), got {len(tokens)}"
                )
            score = parse_number(tokens[1], file, line, "score")
            corners = _corners(tokens[2:], file, line)
            row = rows_of.get(tokens[0])
            if row is None:
                if unknowns is None:
                    raise DataFormatError(
                        f"{file}: line {line}: image {tokens[0]!r} is not in the ground truth"
                    )
                unknowns.add_image(tokens[0])
                continue
            if category is None:
                if unknowns is None:
                    raise DataFormatError(
                        f"{file}: class {name!r} (from the file name) is not a ground-truth class"
                    )
                unknowns.add_class(name)
                continue
            rows.append(row)
            cats.append(category)
            quads.append(corners)
            scores.append(score)
    return quads_dataset(
        ground_truth.images,
        ground_truth.categories,
        image_index=rows,
        category_id=cats,
        quads=_hull(quads) if convex_hull else quads,
        scores=scores,
    )


def _hull(quads: list[list[float]]) -> list[list[float]]:

    hull: list[list[float]] = convex_hull_quads(np.asarray(quads).reshape(-1, 8)).tolist()
    return hull


def write_dota(dataset: Dataset, path: str | os.PathLike[str], /) -> Path:
    """Write ground truth as DOTA ``labelTxt`` files, or predictions as task-1 files.

    Ground truth: one ``<image>.txt`` per image (``x1 y1 ... x4 y4 class difficult``).
    Predictions: one ``Task1_<class>.txt`` per category (``<image> score x1 y1 ... x4 y4``).
    Boxes without corners (read from an axis-aligned format) are written as rectangles. The
    folder is written atomically and must not exist or be empty.

    Parameters
    ----------
    dataset : Dataset
    path : path
        Output folder.

    Returns
    -------
    Path

    Raises
    ------
    DataFormatError
        A class name or image stem with whitespace (DOTA lines are split on whitespace).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("0 0 10 0 10 5 0 5 ship 1\\n")
    >>> out = write_dota(read_dota_ground_truth(d), pathlib.Path(tempfile.mkdtemp()) / "out")
    >>> (out / "a.txt").read_text()
    '0.0 0.0 10.0 0.0 10.0 5.0 0.0 5.0 ship 1\\n'
    """
    names = dict(zip(dataset.categories.ids.tolist(), dataset.categories.names, strict=True))
    for text, what in [(n, "class name") for n in names.values()] + [
        (s, "image stem") for s in dataset.images.stems
    ]:
        if not text or any(c.isspace() for c in text):
            raise DataFormatError(f"DOTA output: {what} {text!r} is empty or has whitespace")
    quads = dataset_quads(dataset).tolist()
    rows = dataset.image_index.tolist()
    cats = dataset.category_id.tolist()
    with atomic_directory(path) as tmp:
        if dataset.scores is None:
            lines: list[list[str]] = [[] for _ in range(len(dataset.images))]
            flags = dataset.difficult.tolist()
            for k, row in enumerate(rows):
                coords = " ".join(repr(v) for v in quads[k])
                lines[row].append(f"{coords} {names[cats[k]]} {int(flags[k])}\n")
            for stem, body in zip(dataset.images.stems, lines, strict=True):
                (tmp / f"{stem}.txt").write_text("".join(body), encoding="utf-8")
        else:
            per_class: dict[int, list[str]] = {c: [] for c in names}
            scores = dataset.scores.tolist()
            for k, row in enumerate(rows):
                coords = " ".join(repr(v) for v in quads[k])
                stem = dataset.images.stems[row]
                per_class[cats[k]].append(f"{stem} {scores[k]!r} {coords}\n")
            for cid, body in per_class.items():
                (tmp / f"Task1_{names[cid]}.txt").write_text("".join(body), encoding="utf-8")
    return Path(path)
