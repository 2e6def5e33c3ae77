"""LVIS JSON readers: a COCO-like ground truth plus federated labels, and result lists.

An LVIS ground-truth file is a COCO file whose images also carry ``neg_category_ids`` (classes
verified absent from the image) and ``not_exhaustive_category_ids`` (classes present but not
every instance annotated), and whose categories carry ``frequency``: ``"r"`` (rare, fewer than
10 training images), ``"c"`` (common, 10-99) or ``"f"`` (frequent, 100 or more). lvis-api reads
exactly these keys (``lvis/eval.py``); see :mod:`ioukit.evaluation.protocols.lvis` for how they are
used.

Boxes, areas and ids are read as the COCO reader reads them (:mod:`ioukit.io.coco`): boxes
``[x, y, w, h]`` become xyxy, ground-truth ``area`` is the annotation's field, a result's
area is ``w * h`` (lvis-api's ``LVISResults``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io import coco
from ioukit.io.coco import read_coco_results

__all__ = ["FREQUENCY_GROUPS", "LVISGroundTruth", "read_lvis_ground_truth", "read_lvis_results"]

FREQUENCY_GROUPS = ("r", "c", "f")
"""LVIS frequency groups in lvis-api's order: rare, common, frequent."""


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, eq=False)
class LVISGroundTruth:
    """An LVIS ground truth: the boxes as a :class:`~ioukit.dataset.Dataset` plus the labels
    that make LVIS federated.

    Attributes
    ----------
    dataset : Dataset
        The annotations (``scores`` is None), images and categories, as the COCO reader builds
        them (``crowd`` is read but LVIS evaluation never uses it).
    frequency : ndarray of str, shape (K,)
        ``"r"``, ``"c"`` or ``"f"`` of each row of ``dataset.categories``.
    neg_image_index, neg_category_id : ndarray of int64, shape (N_neg,)
        One pair per entry of an image's ``neg_category_ids``: the image's row in
        ``dataset.images`` and the category id, in file order.
    not_exhaustive_image_index, not_exhaustive_category_id : ndarray of int64, shape (N_ne,)
        Likewise for ``not_exhaustive_category_ids``.

    Examples
    --------
    >>> gt = read_lvis_ground_truth({
    ...     "images": [{"id": 5, "neg_category_ids": [2], "not_exhaustive_category_ids": []}],
    ...     "categories": [{"id": 1, "name": "cat", "frequency": "f"},
    ...                    {"id": 2, "name": "dog", "frequency": "r"}],
    ...     "annotations": [{"id": 1, "image_id": 5, "category_id": 1,
    ...                      "bbox": [0, 0, 4, 4], "area": 16.0}]})
    >>> gt.frequency.tolist(), gt.neg_image_index.tolist(), gt.neg_category_id.tolist()
    (['f', 'r'], [0], [2])
    >>> len(gt.dataset), gt.not_exhaustive_category_id.size
    (1, 0)
    """

    dataset: Dataset
    frequency: np.ndarray
    neg_image_index: np.ndarray
    neg_category_id: np.ndarray
    not_exhaustive_image_index: np.ndarray
    not_exhaustive_category_id: np.ndarray

    def __post_init__(self) -> None:
        if not isinstance(self.dataset, Dataset) or self.dataset.is_prediction:
            raise DataFormatError(
                "dataset: expected a ground-truth Dataset (scores=None), got "
                f"{type(self.dataset).__name__}"
            )
        n_cats = len(self.dataset.categories)
        frequency = np.asarray(self.frequency, dtype="<U1").reshape(-1)
        if frequency.shape != (n_cats,):
            raise DataFormatError(
                f"frequency: expected one group per category ({n_cats}), got {frequency.shape}"
            )
        bad = ~np.isin(frequency, FREQUENCY_GROUPS)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataFormatError(f"frequency[{i}]: expected 'r', 'c' or 'f', got {frequency[i]!r}")
        object.__setattr__(self, "frequency", _readonly(frequency))
        n_images = len(self.dataset.images)
        known = self.dataset.categories.ids
        for kind in ("neg", "not_exhaustive"):
            rows = np.asarray(getattr(self, f"{kind}_image_index"), dtype=np.int64).reshape(-1)
            ids = np.asarray(getattr(self, f"{kind}_category_id"), dtype=np.int64).reshape(-1)
            if rows.shape != ids.shape:
                raise DataFormatError(
                    f"{kind}_image_index, {kind}_category_id: expected equal lengths, got "
                    f"{rows.size} and {ids.size}"
                )
            if rows.size and (rows.min() < 0 or rows.max() >= n_images):
                i = int(np.flatnonzero((rows < 0) | (rows >= n_images))[0])
                raise DataFormatError(
                    f"{kind}_image_index[{i}]: expected a row of the {n_images} images, "
                    f"got {rows[i]}"
                )
            unknown = ~np.isin(ids, known)
            if unknown.any():
                i = int(np.flatnonzero(unknown)[0])
                raise DataFormatError(
                    f"{kind}_category_id[{i}]: {ids[i]} is not an id in categories"
                )
            object.__setattr__(self, f"{kind}_image_index", _readonly(rows))
            object.__setattr__(self, f"{kind}_category_id", _readonly(ids))


def _id_lists(
    images: Sequence[Any], key: str, label: str, known: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(image row, category id) pairs of every image's ``key`` list, validated."""
    rows: list[int] = []
    ids: list[int] = []
    for i, im in enumerate(images):
        if key not in im:
            raise DataFormatError(
                f"{label}: images[{i}].{key}: missing (an LVIS image lists its "
                "neg_category_ids and not_exhaustive_category_ids, possibly empty)"
            )
        values = im[key]
        if not isinstance(values, list | tuple):
            raise DataFormatError(
                f"{label}: images[{i}].{key}: expected a list of category ids, "
                f"got {type(values).__name__}"
            )
        for j, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise DataFormatError(
                    f"{label}: images[{i}].{key}[{j}]: expected an integer category id, got {v!r}"
                )
        rows.extend([i] * len(values))
        ids.extend(int(v) for v in values)
    id_array = np.asarray(ids, dtype=np.int64)
    row_array = np.asarray(rows, dtype=np.int64)
    unknown = ~np.isin(id_array, known)
    if unknown.any():
        k = int(np.flatnonzero(unknown)[0])
        i = int(row_array[k])
        j = k - int(np.searchsorted(row_array, i, side="left"))
        raise DataFormatError(
            f"{label}: images[{i}].{key}[{j}]: {id_array[k]} is not an id in categories"
        )
    return row_array, id_array


def _frequencies(categories: Sequence[Any], label: str) -> np.ndarray:
    out = []
    for i, cat in enumerate(categories):
        if "frequency" not in cat:
            raise DataFormatError(
                f"{label}: categories[{i}].frequency: missing (expected 'r', 'c' or 'f'; "
                "LVIS groups AP by it)"
            )
        value = cat["frequency"]
        if value not in FREQUENCY_GROUPS:
            raise DataFormatError(
                f"{label}: categories[{i}].frequency: expected 'r', 'c' or 'f', got {value!r}"
            )
        out.append(value)
    return np.asarray(out, dtype="<U1")


def read_lvis_ground_truth(
    source: str | os.PathLike[str] | Mapping[str, Any], /, *, keep_segmentation: bool = False
) -> LVISGroundTruth:
    """Read an LVIS ground-truth file (or the already-parsed dict, never modified).

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        Path to an LVIS JSON file (``images``, ``annotations``, ``categories``) or the dict.
    keep_segmentation : bool
        Keep each annotation's ``segmentation`` (needed for ``iou_type="segm"``).

    Returns
    -------
    LVISGroundTruth

    Raises
    ------
    DataFormatError
        Naming the file and record: an image without ``neg_category_ids`` or
        ``not_exhaustive_category_ids``, an id in them that is not a category, a category
        without ``frequency`` or with a value other than r/c/f, and every error of the COCO
        reader (``lvis_val.json: annotations[17].bbox: expected 4 numbers, got 3``).

    Examples
    --------
    >>> read_lvis_ground_truth({"images": [{"id": 1, "neg_category_ids": [9],
    ...                                     "not_exhaustive_category_ids": []}],
    ...                         "categories": [{"id": 1, "frequency": "c"}],
    ...                         "annotations": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: ground_truth: images[0].neg_category_ids[0]: 9 is not an id ...
    """

    data, label = coco._load(source, "ground_truth")
    if not isinstance(data, Mapping):
        raise DataFormatError(
            f"{label}: expected a JSON object with images, annotations and categories, "
            f"got {type(data).__name__}"
        )
    try:
        dataset = coco.read_coco_ground_truth(data, keep_segmentation=keep_segmentation)
    except DataFormatError as exc:
        # the COCO reader was given the parsed dict: put the file's name back in the message
        message = str(exc)
        if label != "ground_truth" and message.startswith("ground_truth:"):
            raise DataFormatError(label + message[len("ground_truth") :]) from None
        raise
    images = coco._list_section(data, "images", label, True)
    categories = coco._list_section(data, "categories", label, False)
    known = dataset.categories.ids
    neg_rows, neg_ids = _id_lists(images, "neg_category_ids", label, known)
    ne_rows, ne_ids = _id_lists(images, "not_exhaustive_category_ids", label, known)
    return LVISGroundTruth(
        dataset=dataset,
        frequency=_frequencies(categories, label),
        neg_image_index=neg_rows,
        neg_category_id=neg_ids,
        not_exhaustive_image_index=ne_rows,
        not_exhaustive_category_id=ne_ids,
    )


def read_lvis_results(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    /,
    ground_truth: LVISGroundTruth | Dataset,
    *,
    iou_type: str = "bbox",
) -> Dataset:
    """Read LVIS results (the COCO results format) for ``ground_truth``'s images.

    Parameters
    ----------
    source : str, os.PathLike or sequence of Mapping
        A JSON list of ``{"image_id", "category_id", "bbox": [x, y, w, h], "score"}``
        records (``"segmentation"`` RLE for ``iou_type="segm"``), or the list itself.
    ground_truth : LVISGroundTruth or Dataset
    iou_type : {"bbox", "segm"}

    Returns
    -------
    Dataset
        Predictions in file order, ``area = w * h`` (segm: the mask's area unless the first
        record has a ``bbox``, as lvis-api's ``LVISResults``). No per-image cap is applied
        here: :func:`ioukit.evaluation.protocols.lvis.evaluate_lvis` applies lvis-api's top 300.

    Raises
    ------
    DataFormatError
        For a malformed record or a result on an image or category the ground truth does not
        have, naming the file and record (``results.json: results[4].category_id: 999 is not
        a category id of the ground truth``).

    Examples
    --------
    >>> gt = read_lvis_ground_truth({"images": [{"id": 1, "neg_category_ids": [],
    ...                                          "not_exhaustive_category_ids": []}],
    ...                              "categories": [{"id": 1, "frequency": "r"}],
    ...                              "annotations": []})
    >>> read_lvis_results([{"image_id": 1, "category_id": 2, "bbox": [0, 0, 1, 1],
    ...                     "score": 0.5}], gt)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: results: results[0].category_id: 2 is not a category id ...
    """

    gt = ground_truth.dataset if isinstance(ground_truth, LVISGroundTruth) else ground_truth
    return read_coco_results(source, gt, iou_type=iou_type)
