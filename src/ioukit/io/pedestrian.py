"""Pedestrian ground truth: CityPersons JSON and CrowdHuman ``.odgt``, with each box's height
and visibility (the columns the pedestrian setups filter on).

* CityPersons (Pedestron's ``datasets/CityPersons/val_gt.json``): COCO JSON whose annotations
  carry ``height`` (the full box's height), ``vis_ratio`` (visible area / full area) and
  ``ignore`` (ignore regions and non-pedestrian persons).
* CrowdHuman ``annotation_val.odgt``: one JSON record per line, ``{"ID": ..., "gtboxes":
  [{"tag": "person" | "mask", "fbox": [x, y, w, h], "vbox": [...], "extra": {"ignore": 0 |
  1}}]}``. The full box ``fbox`` is the box; ``tag == "mask"`` and ``extra.ignore == 1`` mark
  ignore regions; visibility is ``vbox`` area / ``fbox`` area (clipped to [0, 1]); images get
  ids 1..n in file order and the one category ``1, "person"``, as Pedestron's
  ``convert_crowdhuman_to_coco.py`` numbers them.

Examples
--------
>>> gt = read_citypersons({"images": [{"id": 1, "height": 1024, "width": 2048}],
...     "categories": [{"id": 1, "name": "pedestrian"}],
...     "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "iscrowd": 0, "ignore": 0,
...                      "bbox": [10, 20, 30, 80], "height": 80, "vis_ratio": 0.5}]})
>>> gt.height.tolist(), gt.visibility.tolist(), type(gt).__name__
([80.0], [0.5], 'PedestrianDataset')
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth

__all__ = ["PedestrianDataset", "read_citypersons", "read_crowdhuman", "read_pedestrian"]


@dataclass(frozen=True, slots=True, eq=False)
class PedestrianDataset(Dataset):
    """A ground-truth :class:`~ioukit.dataset.Dataset` with each box's height and visibility.

    Attributes
    ----------
    height : ndarray of float64, shape (N,), or None
        The annotation's ``height`` field (None: the box height is used).
    visibility : ndarray of float64, shape (N,), or None
        Visible fraction of each box (CityPersons ``vis_ratio``); NaN where an annotation has
        none. Setups with a visibility range need it.
    """

    height: np.ndarray | None = None
    visibility: np.ndarray | None = None

    def __post_init__(self) -> None:
        Dataset.__post_init__(self)
        n = len(self.boxes)
        for name in ("height", "visibility"):
            value = getattr(self, name)
            if value is None:
                continue
            array = np.ascontiguousarray(value, dtype=np.float64)
            if array.shape != (n,):
                raise DataFormatError(f"{name}: expected shape ({n},), got {array.shape}")
            array.setflags(write=False)
            object.__setattr__(self, name, array)


def _label(source: object) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else "ground_truth"


def read_citypersons(source: str | os.PathLike[str] | Mapping[str, Any], /) -> PedestrianDataset:
    """Read a CityPersons (COCO-style) ground truth with ``height`` and ``vis_ratio``.

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        The JSON file or its parsed dict (never modified).

    Returns
    -------
    PedestrianDataset
        The COCO rows (``ignore`` from the annotations' ``ignore``), ``height`` from
        ``height`` (the box height where missing) and ``visibility`` from ``vis_ratio`` (NaN
        where missing: a setup with a visibility range then names the first such row).

    Raises
    ------
    DataFormatError
        The COCO reader's errors; a ``height`` or ``vis_ratio`` that is not a number.
    """
    base = read_coco_ground_truth(source)
    data: Any = source
    if isinstance(source, str | os.PathLike):
        data = json.loads(Path(source).read_bytes())
    anns = data.get("annotations") or []
    label = _label(source)
    by_id = {int(i): k for k, i in enumerate(base.annotation_id.tolist())}
    height = np.array(base.boxes[:, 3] - base.boxes[:, 1], dtype=np.float64)
    if base.box_wh is not None:
        height = np.array(base.box_wh[:, 1], dtype=np.float64)
    visibility = np.full(len(base), np.nan)
    for j, ann in enumerate(anns):
        row = by_id.get(int(ann.get("id", j + 1)), j)
        for key, out in (("height", height), ("vis_ratio", visibility)):
            if key not in ann:
                continue
            value = ann[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise DataFormatError(
                    f"{label}: annotations[{j}].{key}: expected a number, got {value!r}"
                )
            out[row] = float(value)
    return _with_columns(base, height, visibility)


def _with_columns(base: Dataset, height: np.ndarray, visibility: np.ndarray) -> PedestrianDataset:
    fields = {name: getattr(base, name) for name in Dataset.__dataclass_fields__}
    return PedestrianDataset(**fields, height=height, visibility=visibility)


def _box(value: object, where: str) -> list[float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise DataFormatError(f"{where}: expected [x, y, w, h] numbers, got {value!r}")
    return [float(v) for v in value]


def read_crowdhuman(source: str | os.PathLike[str], /) -> PedestrianDataset:
    """Read a CrowdHuman ``.odgt`` ground truth (one JSON record per line).

    Parameters
    ----------
    source : str or os.PathLike

    Returns
    -------
    PedestrianDataset
        One row per ``gtboxes`` entry: box ``fbox``, ``ignore`` for ``tag == "mask"`` or
        ``extra.ignore == 1``, ``height`` the ``fbox`` height, ``visibility`` the ``vbox`` area
        over the ``fbox`` area (clipped to [0, 1]; NaN without a ``vbox``). Images ``1..n`` in
        file order, stems the records' ``ID``.

    Raises
    ------
    DataFormatError
        A line that is not a JSON object, a record without ``ID``, a box that is not 4 numbers;
        the message names the file, line and field.
    """
    label = os.fspath(source)
    stems: list[str] = []
    boxes: list[list[float]] = []
    sizes: list[list[float]] = []
    image_index: list[int] = []
    ignore: list[bool] = []
    visibility: list[float] = []
    text = Path(source).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{label}:{number}: expected a JSON record, {exc}") from None
        if not isinstance(record, dict) or "ID" not in record:
            raise DataFormatError(f"{label}:{number}: expected a record with an 'ID'")
        stems.append(str(record["ID"]))
        for k, item in enumerate(record.get("gtboxes") or []):
            where = f"{label}:{number}: gtboxes[{k}]"
            if not isinstance(item, dict):
                raise DataFormatError(f"{where}: expected an object, got {item!r}")
            x, y, w, h = _box(item.get("fbox"), f"{where}.fbox")
            extra = item.get("extra") or {}
            flagged = item.get("tag") == "mask" or int(extra.get("ignore", 0) or 0) == 1
            vis = float("nan")
            if item.get("vbox") is not None:
                vw, vh = _box(item["vbox"], f"{where}.vbox")[2:]
                vis = float(np.clip(vw * vh / (w * h), 0.0, 1.0)) if w * h > 0 else 0.0
            boxes.append([x, y, x + w, y + h])
            sizes.append([w, h])
            image_index.append(len(stems) - 1)
            ignore.append(flagged)
            visibility.append(vis)
    images = ImageTable.from_lists(list(range(1, len(stems) + 1)), stems)
    categories = CategoryTable.from_lists([1], ["person"])
    xyxy = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    wh = np.array(sizes, dtype=np.float64).reshape(-1, 2)
    base = Dataset.from_arrays(
        images,
        categories,
        boxes=xyxy,
        image_index=np.array(image_index, dtype=np.int64),
        category_id=np.ones(len(boxes), dtype=np.int64),
        ignore=np.array(ignore, dtype=bool),
        box_wh=wh,
    )
    return _with_columns(base, wh[:, 1].copy(), np.array(visibility, dtype=np.float64))


def read_pedestrian(source: str | os.PathLike[str] | Mapping[str, Any], /) -> PedestrianDataset:
    """:func:`read_crowdhuman` for ``*.odgt`` files, else :func:`read_citypersons`."""
    if isinstance(source, str | os.PathLike) and os.fspath(source).endswith(".odgt"):
        return read_crowdhuman(source)
    return read_citypersons(source)
