"""``--classes-only``, ``--image-ids`` and ``--conf``: what ``ioukit eval`` evaluates.

As pycocotools' ``params.catIds`` and ``params.imgIds``: the ground truth and the predictions
keep the named classes (the per-class table and the means are over them) and the named
images (the image table shrinks to them); ``--conf`` drops predictions whose score is not
above the threshold, as Ultralytics' ``yolo val conf=``. The protocol then runs unchanged on
the smaller pair.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images = ImageTable.from_lists([1, 2], ["a", "b"])
>>> cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 9, 9], [0, 0, 5, 5]],
...                          image_index=[0, 1], category_id=[1, 2])
>>> sub = select(gt, classes=["dog"], image_ids=None)
>>> sub.categories.names, len(sub), len(sub.images)
(('dog',), 1, 2)
>>> len(select(gt, classes=None, image_ids=[2]).images)
1
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.io._conversion import take_rows

__all__ = ["class_ids", "missing_as", "read_image_ids", "select", "table_rows"]


def class_ids(categories: CategoryTable, names: Sequence[str]) -> np.ndarray:
    """The category ids of ``names`` (a class name, or its id as a number), in table order.

    Raises
    ------
    ParameterError
        A name the ground truth has no class for (the message lists a few it has).
    """
    by_name = {n: int(i) for i, n in zip(categories.ids.tolist(), categories.names, strict=True)}
    known = set(categories.ids.tolist())
    wanted: set[int] = set()
    for name in names:
        if name in by_name:
            wanted.add(by_name[name])
        elif name.lstrip("-").isdigit() and int(name) in known:
            wanted.add(int(name))
        else:
            shown = ", ".join(repr(n) for n in categories.names[:8])
            more = ", ..." if len(categories.names) > 8 else ""
            raise ParameterError(
                f"--classes-only: expected class names or ids of the ground truth "
                f"({shown}{more}), got {name!r}"
            )
    return np.asarray([i for i in categories.ids.tolist() if i in wanted], dtype=np.int64)


def read_image_ids(path: str, images: ImageTable) -> np.ndarray:
    """The image rows named in ``path`` (``-``: stdin): one image id or file stem a line,
    blank lines and ``#`` comments skipped.

    Raises
    ------
    ParameterError
        An id or stem the ground truth has no image for (file and line named), or no image.
    """
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParameterError(f"--image-ids {path}: no such file") from None
    except IsADirectoryError:
        raise ParameterError(f"--image-ids {path}: expected a file, got a folder") from None
    except UnicodeDecodeError as exc:
        raise ParameterError(
            f"--image-ids {path}: expected UTF-8 text (one id or file stem a line), got a "
            f"byte {exc.object[exc.start]:#04x} at offset {exc.start}"
        ) from None
    by_stem = {s: row for row, s in enumerate(images.stems)}
    rows: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        row = -1
        if item.lstrip("-").isdigit():
            row = int(images.lookup(np.asarray([int(item)]))[0])
        if row < 0:
            row = by_stem.get(item, by_stem.get(Path(item).stem, -1))
        if row < 0:
            raise ParameterError(
                f"--image-ids {path}: line {number}: expected an image id or file stem of the "
                f"ground truth, got {item!r}"
            )
        rows.append(row)
    if not rows:
        raise ParameterError(f"--image-ids {path}: expected at least one image id, got none")
    return np.unique(np.asarray(rows, dtype=np.int64))


def select(
    ds: Dataset,
    /,
    *,
    classes: Sequence[str] | None = None,
    image_ids: Sequence[int] | None = None,
    image_rows: np.ndarray | None = None,
    conf: float | None = None,
) -> Dataset:
    """``ds`` restricted to the classes, images and (predictions) scores asked for.

    Parameters
    ----------
    ds : Dataset
    classes : sequence of str or None
        Class names or ids (``--classes-only``); the category table keeps only them.
    image_ids, image_rows : sequence of int, ndarray (I',) or None
        Image ids, or rows of ``ds.images`` (``--image-ids``); the image table keeps only them.
    conf : float or None
        Predictions with ``score > conf`` are kept (``--conf``); ground truth is left alone.

    Returns
    -------
    Dataset
        A new dataset, or ``ds`` itself when nothing is left out (``ds`` is not changed).
    """
    keep = np.ones(len(ds), dtype=bool)
    tables: dict[str, Any] = {}
    if classes is not None:
        ids = class_ids(ds.categories, classes)
        keep &= np.isin(ds.category_id, ids)
        names = tuple(ds.categories.name_of(int(i)) for i in ids)
        tables["categories"] = CategoryTable(ids, names)
    if image_ids is not None:
        image_rows = ds.images.lookup(np.asarray(image_ids, dtype=np.int64))
    if image_rows is not None:
        rows = np.unique(np.asarray(image_rows, dtype=np.int64))
        keep &= np.isin(ds.image_index, rows)
        old = ds.images
        tables["images"] = ImageTable(
            old.ids[rows],
            tuple(old.stems[r] for r in rows.tolist()),
            old.widths[rows],
            old.heights[rows],
        )
        remap = np.full(len(old), -1, dtype=np.int64)
        remap[rows] = np.arange(len(rows))
    if conf is not None and ds.scores is not None:
        keep &= ds.scores > conf
    if image_rows is not None:
        tables["image_index"] = remap[ds.image_index[keep]]
    return take_rows(ds, keep, **tables)


_COUNTS = ("category_id", "name", "num_gt", "num_pred", "images", "instances")


def missing_as(rows: Sequence[dict[str, Any]], value: float | None) -> list[dict[str, Any]]:
    """Per-class rows with pycocotools' ``-1`` (a class without ground truth) as ``value``:
    ``None`` (JSON ``null``, an empty CSV cell) unless ``--missing -1`` keeps it.

    >>> missing_as([{"category_id": 3, "name": "cat", "num_gt": 0, "AP": -1.0}], None)
    [{'category_id': 3, 'name': 'cat', 'num_gt': 0, 'AP': None}]
    """
    if value == -1:
        return [dict(r) for r in rows]
    return [
        {
            k: (value if k not in _COUNTS and isinstance(v, float) and v == -1 else v)
            for k, v in r.items()
        }
        for r in rows
    ]


def table_rows(
    rows: Sequence[dict[str, Any]], /, *, sort: str | None = None, hide_empty: bool = False
) -> list[dict[str, Any]]:
    """The per-class rows ``--sort KEY[:asc|:desc]`` and ``--hide-empty`` (no ground truth
    and no prediction) ask for. Numbers sort descending and names ascending unless ``:asc`` /
    ``:desc`` says otherwise; missing values (``-1``, ``None``) sort last either way.

    >>> rows = [{"name": "a", "num_gt": 0, "num_pred": 0, "AP": -1.0},
    ...         {"name": "b", "num_gt": 2, "num_pred": 1, "AP": 0.5},
    ...         {"name": "c", "num_gt": 1, "num_pred": 1, "AP": 0.9}]
    >>> [r["name"] for r in table_rows(rows, sort="AP", hide_empty=True)]
    ['c', 'b']
    >>> [r["name"] for r in table_rows(rows, sort="AP:asc")]
    ['b', 'c', 'a']
    """
    out = [dict(r) for r in rows]
    if hide_empty:
        out = [r for r in out if r.get("num_gt", 1) or r.get("num_pred", 1)]
    if sort is None:
        return out
    key, _, order = sort.partition(":")
    columns = list(rows[0]) if rows else []
    if (rows and key not in columns) or order not in ("", "asc", "desc"):
        raise ParameterError(
            f"--sort: expected a column of the per-class table ({', '.join(columns)}), "
            f"optionally with :asc or :desc, got {sort!r}"
        )
    present = [r for r in out if r.get(key) is not None and r.get(key) != -1]
    absent = [r for r in out if r.get(key) is None or r.get(key) == -1]
    text = any(isinstance(r[key], str) for r in present)
    descending = order == "desc" or (order == "" and not text)
    present.sort(key=lambda r: r[key], reverse=descending)
    return present + absent
