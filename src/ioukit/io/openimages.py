"""Open Images CSV readers: boxes, image-level labels, predictions, and the label hierarchy.

Columns are found by their header names, in any order:

=================================  ===========================================================
file                               columns used
=================================  ===========================================================
boxes (``*-annotations-bbox.csv``)  ``ImageID, LabelName, XMin, XMax, YMin, YMax``, optional
                                   ``IsGroupOf`` (0/1, default 0)
image-level labels                 ``ImageID, LabelName, Confidence`` (1 present, 0 absent;
                                   ``ConfidenceImageLabel`` is accepted as well)
predictions                        ``ImageID, LabelName, Score, XMin, XMax, YMin, YMax``
hierarchy (``*-hierarchy.json``)   ``{"LabelName": ..., "Subcategory": [...]}``, the root skipped
=================================  ===========================================================

Coordinates stay as the files give them (normalized to [0, 1]); boxes become xyxy
``(XMin, YMin, XMax, YMax)``. Group-of boxes are flagged in the ``group_of`` column of the
:class:`~ioukit.dataset.Dataset`. Images are numbered 1..I in sorted ImageID order (stems are
the ImageIDs); classes 1..K in the order of ``categories`` or, by default, sorted LabelName
order (names are the LabelNames).

Hierarchy expansion (``hierarchy=``) follows the challenge's
``oid_hierarchical_labels_expansion.py``: each box is followed by one copy per ancestor class
(nearest first); a positive image-level label adds its ancestors, a negative one its
descendants.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "boxes.csv").write_text(
...     "ImageID,LabelName,XMin,XMax,YMin,YMax,IsGroupOf\\n"
...     "img1,/m/cat,0.1,0.5,0.2,0.6,0\\nimg1,/m/cat,0.0,1.0,0.0,1.0,1\\n")
>>> gt = read_openimages_ground_truth(d / "boxes.csv")
>>> gt.dataset.boxes.tolist()[0], gt.dataset.group_of.tolist()
([0.1, 0.2, 0.5, 0.6], [False, True])
>>> _ = (d / "pred.csv").write_text(
...     "ImageID,LabelName,Score,XMin,XMax,YMin,YMax\\nimg1,/m/cat,0.9,0.1,0.5,0.2,0.6\\n")
>>> read_openimages_predictions(d / "pred.csv", gt.dataset).scores.tolist()
[0.9]
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.protocols.openimages import ImageLabels
from ioukit.io._text import check_exists, parse_number, read_text

__all__ = [
    "LabelHierarchy",
    "OpenImagesGroundTruth",
    "read_openimages_ground_truth",
    "read_openimages_hierarchy",
    "read_openimages_predictions",
]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class LabelHierarchy:
    """The Open Images class tree, flattened.

    Attributes
    ----------
    ancestors : dict of str -> tuple of str
        Each class's ancestors, nearest first, each once (a class under several parents, as
        Hat under Clothing and Fashion accessory, lists every parent's line once: the TF
        Object Detection API expands into a set), the root excluded.
    descendants : dict of str -> tuple of str
        Each class's descendants, depth first, each once.

    Examples
    --------
    >>> h = read_openimages_hierarchy({"LabelName": "/m/root", "Subcategory": [
    ...     {"LabelName": "/m/animal", "Subcategory": [{"LabelName": "/m/cat"}]}]})
    >>> h.ancestors["/m/cat"], h.descendants["/m/animal"]
    (('/m/animal',), ('/m/cat',))
    """

    ancestors: dict[str, tuple[str, ...]]
    descendants: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True, eq=False)
class OpenImagesGroundTruth:
    """Boxes (with the ``group_of`` column) and the verified image-level labels.

    Pass both to the challenge protocol:
    ``ioukit.evaluate(gt.dataset, pred, protocol="openimages_challenge",
    image_labels=gt.image_labels)``.
    """

    dataset: Dataset
    image_labels: ImageLabels | None


def _walk(
    node: Mapping[str, Any], where: str, skip: bool
) -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
    """(descendants, ancestors, subtree labels) of ``node``, as the reference builds them."""
    if not isinstance(node, Mapping) or not isinstance(node.get("LabelName"), str):
        raise DataFormatError(f"{where}: expected an object with a string LabelName")
    down: dict[str, list[str]] = {}
    up: dict[str, list[str]] = {}
    subtree: list[str] = []
    children = node.get("Subcategory", [])
    if not isinstance(children, list):
        raise DataFormatError(
            f"{where}.Subcategory: expected a list, got {type(children).__name__}"
        )
    for i, child in enumerate(children):
        d, u, s = _walk(child, f"{where}.Subcategory[{i}]", False)
        for key, values in d.items():
            down.setdefault(key, []).extend(values)
        for key, values in u.items():
            up.setdefault(key, []).extend(values)
        subtree.extend(s)
    if not skip:
        label = node["LabelName"]
        down[label] = subtree
        subtree = [label, *subtree]
        for values in up.values():
            values.append(label)
        up[label] = []
    return down, up, subtree


def read_openimages_hierarchy(source: PathLike | Mapping[str, Any], /) -> LabelHierarchy:
    """Read the hierarchy JSON (a path or the parsed dict); the root node is skipped.

    Raises
    ------
    DataFormatError
        Not JSON, or a node without a string ``LabelName`` (the JSON path is named).
    """
    where = "hierarchy"
    if not isinstance(source, Mapping):
        path = check_exists(source, "hierarchy")
        where = str(path)
        try:
            source = json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{path}: line {exc.lineno}: expected JSON: {exc.msg}") from None
    if not isinstance(source, Mapping):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(source).__name__}")
    down, up, _ = _walk(source, where, True)
    return LabelHierarchy(
        ancestors={k: tuple(dict.fromkeys(v)) for k, v in up.items()},
        descendants={k: tuple(dict.fromkeys(v)) for k, v in down.items()},
    )


def _rows(path: Path, required: Sequence[str]) -> tuple[Iterator[list[str]], dict[str, int]]:
    text = read_text(path)
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise DataFormatError(f"{path}: expected a CSV header, got an empty file")
    columns = {name.strip(): i for i, name in enumerate(header)}
    missing = [c for c in required if c not in columns]
    if missing:
        raise DataFormatError(
            f"{path}: line 1: expected the columns {', '.join(required)}, missing "
            f"{', '.join(missing)} (got {', '.join(header)})"
        )
    return reader, columns


def _cell(row: list[str], index: int, path: Path, line: int, name: str) -> str:
    if index >= len(row):
        raise DataFormatError(f"{path}: line {line}: {name}: missing (only {len(row)} columns)")
    return row[index].strip()


def _flag(token: str, path: Path, line: int, name: str) -> bool:
    if token in ("", "0", "-1"):  # -1: unknown in the released files
        return False
    if token == "1":
        return True
    raise DataFormatError(f"{path}: line {line}: {name}: expected 0 or 1, got {token!r}")


_BOX = ("XMin", "XMax", "YMin", "YMax")


def _read_boxes(
    path: Path, with_score: bool
) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(ImageIDs, LabelNames, xyxy boxes (N, 4), group-of flags (N,), scores (N,))."""
    required = ["ImageID", "LabelName", *(["Score"] if with_score else []), *_BOX]
    reader, col = _rows(path, required)
    rows = [r for r in reader if r and "".join(r).strip()]  # blank lines skipped
    fast = _columns_fast(rows, col, with_score)
    if fast is not None:
        return fast
    # something is off: the row-by-row path names the first bad line
    reader, col = _rows(path, required)
    images: list[str] = []
    labels: list[str] = []
    boxes: list[list[float]] = []
    group: list[bool] = []
    scores: list[float] = []
    group_col = col.get("IsGroupOf")
    for line, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        images.append(_cell(row, col["ImageID"], path, line, "ImageID"))
        labels.append(_cell(row, col["LabelName"], path, line, "LabelName"))
        x1, x2, y1, y2 = (
            parse_number(_cell(row, col[c], path, line, c), path, line, c) for c in _BOX
        )
        if x2 < x1 or y2 < y1:
            raise DataFormatError(
                f"{path}: line {line}: expected XMin <= XMax and YMin <= YMax, got "
                f"XMin={x1}, XMax={x2}, YMin={y1}, YMax={y2}"
            )
        boxes.append([x1, y1, x2, y2])
        if with_score:
            scores.append(
                parse_number(_cell(row, col["Score"], path, line, "Score"), path, line, "Score")
            )
        else:
            group.append(
                False
                if group_col is None
                else _flag(_cell(row, group_col, path, line, "IsGroupOf"), path, line, "IsGroupOf")
            )
    return (
        images,
        labels,
        np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
        np.asarray(group, dtype=bool),
        np.asarray(scores, dtype=np.float64),
    )


_FLAGS = {"": False, "0": False, "-1": False, "1": True}


def _columns_fast(
    rows: list[list[str]], col: dict[str, int], with_score: bool
) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray] | None:
    """Whole columns at once (NumPy parses the numbers); None when any value is not clean."""
    try:
        images = [r[col["ImageID"]].strip() for r in rows]
        labels = [r[col["LabelName"]].strip() for r in rows]
        x1, x2, y1, y2 = (np.array([r[col[c]] for r in rows], dtype=np.float64) for c in _BOX)
        boxes = np.stack([x1, y1, x2, y2], axis=1).reshape(-1, 4)
        scores = (
            np.array([r[col["Score"]] for r in rows], dtype=np.float64)
            if with_score
            else np.zeros(0)
        )
        group_col = col.get("IsGroupOf")
        group = np.zeros(0 if with_score else len(rows), dtype=bool)
        if group_col is not None and not with_score:
            group = np.array([_FLAGS[r[group_col].strip()] for r in rows], dtype=bool)
    except (IndexError, ValueError, KeyError):
        return None
    if not (np.isfinite(boxes).all() and np.isfinite(scores).all()):
        return None
    if ((x2 < x1) | (y2 < y1)).any():
        return None
    return images, labels, boxes, group, scores


def _read_labels(path: Path) -> tuple[list[str], list[str], list[bool]]:
    text_cols = ("ImageID", "LabelName")
    reader, col = _rows(path, text_cols)
    conf = col.get("Confidence", col.get("ConfidenceImageLabel"))
    if conf is None:
        raise DataFormatError(f"{path}: line 1: expected a Confidence column, got none")
    images: list[str] = []
    labels: list[str] = []
    positive: list[bool] = []
    for line, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        images.append(_cell(row, col["ImageID"], path, line, "ImageID"))
        labels.append(_cell(row, col["LabelName"], path, line, "LabelName"))
        value = parse_number(_cell(row, conf, path, line, "Confidence"), path, line, "Confidence")
        if value not in (0.0, 1.0):
            raise DataFormatError(f"{path}: line {line}: Confidence: expected 0 or 1, got {value}")
        positive.append(value == 1.0)
    return images, labels, positive


def _expand(
    labels: list[str], table: Mapping[str, tuple[str, ...]], path: Path, what: str
) -> Iterator[tuple[int, str]]:
    """(source row, label) for every row and its expansion, in the reference's order."""
    for i, label in enumerate(labels):
        yield i, label
        if label not in table:
            raise DataFormatError(
                f"{path}: row {i + 1}: LabelName {label!r} is not in the hierarchy ({what})"
            )
        for other in table[label]:
            yield i, other


def read_openimages_ground_truth(
    boxes: PathLike,
    /,
    *,
    image_labels: PathLike | None = None,
    hierarchy: PathLike | Mapping[str, Any] | LabelHierarchy | None = None,
    categories: Sequence[str] | None = None,
) -> OpenImagesGroundTruth:
    """Read Open Images ground truth: the boxes CSV and, optionally, image-level labels.

    Parameters
    ----------
    boxes : path
        Boxes CSV (``ImageID, LabelName, XMin, XMax, YMin, YMax[, IsGroupOf]``).
    image_labels : path, optional
        Image-level labels CSV (``ImageID, LabelName, Confidence``): the verified classes of
        each image, for ``protocol="openimages_challenge"``.
    hierarchy : path, dict or LabelHierarchy, optional
        Expand boxes and labels along the class tree first.
    categories : sequence of str, optional
        LabelNames in id order (ids 1..K), e.g. the challenge's class list. Rows with other
        labels are dropped. Default: every LabelName seen, sorted.

    Returns
    -------
    OpenImagesGroundTruth
    """
    box_path = check_exists(boxes, "boxes")
    img, lab, xyxy, group, _ = _read_boxes(box_path, with_score=False)
    tree: LabelHierarchy | None = None
    if hierarchy is not None:
        tree = (
            hierarchy
            if isinstance(hierarchy, LabelHierarchy)
            else read_openimages_hierarchy(hierarchy)
        )
        expanded = list(_expand(lab, tree.ancestors, box_path, "boxes"))
        src = np.fromiter((i for i, _ in expanded), dtype=np.int64, count=len(expanded))
        lab = [label for _, label in expanded]
        img = [img[i] for i in src.tolist()]
        xyxy = xyxy[src]
        group = group[src]
    l_img: list[str] = []
    l_lab: list[str] = []
    l_pos: list[bool] = []
    label_path: Path | None = None
    if image_labels is not None:
        label_path = check_exists(image_labels, "image_labels")
        l_img, l_lab, l_pos = _read_labels(label_path)
        if tree is not None:
            rows: list[tuple[str, str, bool]] = []
            for i, (im, label, pos) in enumerate(zip(l_img, l_lab, l_pos, strict=True)):
                rows.append((im, label, pos))
                table = tree.ancestors if pos else tree.descendants
                if label not in table:
                    raise DataFormatError(
                        f"{label_path}: row {i + 1}: LabelName {label!r} is not in the hierarchy"
                    )
                rows.extend((im, other, pos) for other in table[label])
            l_img = [r[0] for r in rows]
            l_lab = [r[1] for r in rows]
            l_pos = [r[2] for r in rows]
    names = sorted(set(lab) | set(l_lab)) if categories is None else list(categories)
    if len(set(names)) != len(names):
        raise DataFormatError("categories: expected unique LabelNames")
    class_of = {name: i + 1 for i, name in enumerate(names)}
    stems = sorted(set(img) | set(l_img))
    row_of = {s: i for i, s in enumerate(stems)}
    keep = np.fromiter((lb in class_of for lb in lab), dtype=bool, count=len(lab))
    images = ImageTable.from_lists(list(range(1, len(stems) + 1)), stems)
    cats = CategoryTable.from_lists(list(range(1, len(names) + 1)), names)
    box_array = xyxy[keep]
    dataset = Dataset.from_arrays(
        images,
        cats,
        boxes=box_array,
        image_index=np.fromiter((row_of[s] for s in img), dtype=np.int64, count=len(img))[keep],
        category_id=np.fromiter((class_of.get(lb, 0) for lb in lab), np.int64, len(lab))[keep],
        group_of=group[keep],
    )
    labels: ImageLabels | None = None
    if label_path is not None:
        lk = np.fromiter((lb in class_of for lb in l_lab), dtype=bool, count=len(l_lab))
        labels = ImageLabels.from_arrays(
            np.fromiter((row_of[s] for s in l_img), dtype=np.int64, count=len(l_img))[lk],
            np.fromiter((class_of.get(lb, 0) for lb in l_lab), np.int64, len(l_lab))[lk],
            np.asarray(l_pos, dtype=bool)[lk],
        )
    return OpenImagesGroundTruth(dataset, labels)


def read_openimages_predictions(
    path: PathLike, gt: Dataset, /, *, unknown: str = "error"
) -> Dataset:
    """Read a predictions CSV (``ImageID, LabelName, Score, XMin, XMax, YMin, YMax``).

    Parameters
    ----------
    path : path
    gt : Dataset
        The ground truth (from :func:`read_openimages_ground_truth`): images are matched by
        ImageID (stem), classes by LabelName (category name).
    unknown : {"error", "drop"}
        What to do with a row whose image or class the ground truth lacks.

    Returns
    -------
    Dataset
        Predictions over ``gt``'s image and category tables, in file order.
    """
    if unknown not in ("error", "drop"):
        raise ParameterError(f"unknown: expected 'error' or 'drop', got {unknown!r}")
    p = check_exists(path, "predictions")
    img, lab, xyxy, _, scores = _read_boxes(p, with_score=True)
    row_of = {s: i for i, s in enumerate(gt.images.stems)}
    class_of = {
        n: int(i) for n, i in zip(gt.categories.names, gt.categories.ids.tolist(), strict=True)
    }
    rows = np.fromiter((row_of.get(s, -1) for s in img), dtype=np.int64, count=len(img))
    cats = np.fromiter((class_of.get(lb, -1) for lb in lab), dtype=np.int64, count=len(lab))
    bad = (rows < 0) | (cats < 0)
    if unknown == "error" and bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = f"ImageID {img[i]!r}" if rows[i] < 0 else f"LabelName {lab[i]!r}"
        raise DataFormatError(
            f"{p}: row {i + 1}: {what} is not in the ground truth ({int(bad.sum())} such rows; "
            f"unknown='drop' skips them)"
        )
    keep = ~bad
    return Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=xyxy[keep],
        image_index=rows[keep],
        category_id=cats[keep],
        scores=scores[keep],
    )
