"""``Evaluator(protocol="lvis")``'s pieces: the frequency table, each image's federated labels,
and the :class:`~ioukit.io.lvis.LVISGroundTruth` built from what the Evaluator saw.

The evaluation itself is :func:`ioukit.metrics.lvis.evaluate_lvis`, the one LVIS protocol
behind ``ioukit.evaluate(..., protocol="lvis")``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.io.lvis import FREQUENCY_GROUPS, LVISGroundTruth
from ioukit.metrics.result import EvaluationResult

__all__ = ["check_frequencies", "federated_labels", "lvis_box_area", "lvis_result"]


def check_frequencies(frequencies: object) -> dict[int, str]:
    """``frequencies`` as ``{category_id: "r" | "c" | "f"}``, validated.

    Examples
    --------
    >>> check_frequencies({3: "f", 1: "r"})
    {1: 'r', 3: 'f'}
    """
    if frequencies is None:
        raise ParameterError(
            "frequencies: Evaluator(protocol='lvis') needs frequencies={category_id: 'r'|'c'|'f'}"
            " (the LVIS categories' 'frequency'), got None"
        )
    if not isinstance(frequencies, Mapping):
        raise TypeError(
            "frequencies: expected a mapping {category_id: 'r'|'c'|'f'}, got "
            f"{type(frequencies).__name__}"
        )
    out: dict[int, str] = {}
    for key, value in frequencies.items():
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"frequencies: expected integer category ids as keys, got {key!r}")
        if value not in FREQUENCY_GROUPS:
            raise ParameterError(f"frequencies[{key}]: expected 'r', 'c' or 'f', got {value!r}")
        out[int(key)] = str(value)
    return dict(sorted(out.items()))


def _check_known(ids: np.ndarray, name: str, frequencies: Mapping[int, str]) -> None:
    for c in ids.tolist():
        if c not in frequencies:
            raise DataFormatError(
                f"{name}: label {c} has no LVIS frequency (frequencies has no key {c}; "
                "give every category id its 'r', 'c' or 'f')"
            )


def federated_labels(
    target: Mapping[str, Any],
    i: int,
    labels: np.ndarray,
    gt_labels: np.ndarray,
    frequencies: Mapping[int, str],
) -> tuple[np.ndarray, np.ndarray]:
    """Image ``i``'s ``neg_category_ids`` and ``not_exhaustive_category_ids`` (default empty),
    after checking that every label of the image has a frequency.

    Examples
    --------
    >>> neg, ne = federated_labels({"neg_category_ids": [2]}, 0, np.array([1]), np.array([1]),
    ...                            {1: "f", 2: "r"})
    >>> neg.tolist(), ne.tolist()
    ([2], [])
    """
    _check_known(labels, f"predictions[{i}].labels", frequencies)
    _check_known(gt_labels, f"targets[{i}].labels", frequencies)
    out = []
    for key in ("neg_category_ids", "not_exhaustive_category_ids"):
        name = f"targets[{i}].{key}"
        value = target.get(key, ())
        detach = getattr(value, "detach", None)
        if detach is not None:  # torch tensor
            value = detach().cpu().numpy()
        ids = np.asarray(value)
        if ids.size == 0:
            ids = np.zeros(0, dtype=np.int64)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise DataFormatError(
                f"{name}: expected a list of integer category ids, got an array of shape "
                f"{ids.shape} and dtype {ids.dtype}"
            )
        ids = ids.astype(np.int64)
        _check_known(ids, name, frequencies)
        out.append(ids)
    return out[0], out[1]


def lvis_box_area(raw: np.ndarray, box_format: str, xyxy: np.ndarray) -> np.ndarray:
    """A result's area as lvis-api computes it from the JSON ``bbox`` ``[x, y, w, h]``:
    ``w * h`` of the incoming widths (xywh, cxcywh), else of the xyxy differences.

    Examples
    --------
    >>> b = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> lvis_box_area(b, "xywh", b).tolist(), lvis_box_area(b, "xyxy", b).tolist()
    ([12.0], [4.0])
    """
    if box_format in ("xywh", "cxcywh"):
        return np.asarray(raw[:, 2] * raw[:, 3])
    return np.asarray((xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1]))


def lvis_result(
    gt: Dataset,
    pred: Dataset,
    federated: Sequence[tuple[np.ndarray, np.ndarray]],
    frequencies: Mapping[int, str],
    *,
    sync: bool,
    iou_type: str,
    options: Mapping[str, Any],
) -> EvaluationResult:
    """Build the LVISGroundTruth from the Evaluator's datasets (categories = ``frequencies``'
    keys, in order) and run :func:`ioukit.metrics.lvis.evaluate_lvis`.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([0], ["0"])
    >>> cats = CategoryTable.from_lists([1], ["1"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> fed = [(np.zeros(0, np.int64), np.zeros(0, np.int64))]
    >>> r = lvis_result(gt, pred, fed, {1: "c"}, sync=False, iou_type="bbox", options={})
    >>> round(r.stats["APc"], 3)
    0.9
    """
    from ioukit.metrics.lvis import evaluate_lvis

    if sync:
        from ioukit._process_group import process_group

        if process_group() is not None:
            raise NotImplementedError(
                "sync: Evaluator(protocol='lvis') does not gather ranks yet; pass sync=False "
                "and merge the ranks' Evaluators, or evaluate the written LVIS files"
            )
    n = [len(f[0]) for f in federated], [len(f[1]) for f in federated]
    rows = np.arange(len(federated))

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    lvis_gt = LVISGroundTruth(
        dataset=gt,
        frequency=np.array([frequencies[c] for c in gt.categories.ids.tolist()], dtype="<U1"),
        neg_image_index=np.repeat(rows, n[0]),
        neg_category_id=cat([f[0] for f in federated]),
        not_exhaustive_image_index=np.repeat(rows, n[1]),
        not_exhaustive_category_id=cat([f[1] for f in federated]),
    )
    result = evaluate_lvis(lvis_gt, pred, iou_type=iou_type, **options)
    return EvaluationResult(result, lvis_gt.dataset, pred)
