"""COCO keypoint annotations and results -> :class:`~ioukit.dataset.Dataset` with ``keypoints``.

Ground truth: a COCO dataset whose annotations carry ``keypoints`` ``[x1, y1, v1, x2, ...]``
(K triples; ``v`` in {0, 1, 2}, any ``v > 0`` counting as labelled, as pycocotools counts it) and
``num_keypoints``. The boxes, areas, crowd flags and ids
are read as :func:`ioukit.io.coco.read_coco_ground_truth` reads them; an annotation whose
``num_keypoints`` is 0 (pycocotools' rule; the count of ``v > 0`` when the field is missing)
is marked ``ignore``. An annotation without ``keypoints`` has K keypoints ``(0, 0, 0)``.

Results: pycocotools' ``loadRes`` format, ``{"image_id", "category_id", "keypoints",
"score"}``, with its semantics: when the first record has a non-empty ``bbox``, every record's
``bbox`` is kept and its area is ``w * h``; otherwise each result's box is the extent of its K
keypoints (keypoints at ``(0, 0)``, which mark "not predicted", included, as pycocotools
does) and its area the extent's area. The third value of each result triple (a score or a
visibility) is kept but never used.

Every error names the file (or argument), the record and the value, e.g.
``gt.json: annotations[3].keypoints: expected 51 numbers (17 keypoints, as annotations[0]),
got 50``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit._kernels.keypoint_json import INVALID, OK, scan_keypoint_results
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io._text import map_bytes
from ioukit.io.coco import (
    _MAX_JSON_BYTES,
    _NUMBER_TYPES,
    _bbox_column,
    _check_boxes,
    _check_result_columns,
    _describe,
    _float_column,
    _gc_paused,
    _int_column,
    _json_error,
    _load,
    _number_rows,
    _only_types,
    _parse,
    _read,
    _xywh_to_xyxy,
    read_coco_ground_truth,
)

if TYPE_CHECKING:
    import mmap

__all__ = [
    "read_coco_keypoint_results",
    "read_coco_keypoints",
    "read_crowd_index",
    "unusual_visibility",
]


def _keypoint_column(
    records: Sequence[Any],
    label: str,
    section: str,
    *,
    num_keypoints: int | None = None,
    required: bool,
    reference: str = "",
) -> np.ndarray:
    """The (N, K, 3) keypoints of ``records`` (private helper, shared with the writers).

    ``num_keypoints``: the K every record must have (else K of the first record that has
    keypoints). ``required``: a record
    without ``keypoints`` is an error (else K zeros). ``reference`` names where K came from,
    for the error message.
    """
    if num_keypoints is None and records and isinstance(records, list | tuple):
        first = records[0].get("keypoints") if isinstance(records[0], dict) else None
        if isinstance(first, list | tuple) and len(first) % 3 == 0:
            num_keypoints = len(first) // 3  # the rule below, when records[0] has a list
            reference = f"{section}[0]"
    if num_keypoints is not None:
        rows = _number_rows(records, "keypoints", 3 * num_keypoints)
        if rows is not None:  # what the general path below gives for these records
            array = rows.reshape(len(records), num_keypoints, 3)
            _check_values(array, label, section)
            return array
    n = len(records)
    lists = [r.get("keypoints") if isinstance(r, Mapping) else None for r in records]
    if num_keypoints is None:
        first = next((i for i, v in enumerate(lists) if isinstance(v, list | tuple)), None)
        if first is not None and len(lists[first]) % 3 == 0:  # type: ignore[arg-type]
            num_keypoints = len(lists[first]) // 3  # type: ignore[arg-type]
            reference = f"{section}[{first}]"
    k = num_keypoints
    try:
        if k is None or any(v is None for v in lists) or n == 0:
            raise ValueError("slow path")
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=n)  # type: ignore[arg-type]
        if lengths.min() != 3 * k or lengths.max() != 3 * k:
            raise ValueError("ragged")
        if not _only_types(chain.from_iterable(lists), _NUMBER_TYPES):  # type: ignore[arg-type]
            raise TypeError("keypoints")
        flat = np.fromiter(chain.from_iterable(lists), dtype=np.float64, count=3 * k * n)  # type: ignore[arg-type]
        array = flat.reshape(n, k, 3)
    except (TypeError, ValueError):
        array = _keypoints_one_by_one(records, lists, label, section, k, required, reference)
    _check_values(array, label, section)
    return array


def _keypoints_one_by_one(
    records: Sequence[Any],
    lists: list[Any],
    label: str,
    section: str,
    k: int | None,
    required: bool,
    reference: str,
) -> np.ndarray:
    """The slow path: every record checked, the first bad one named."""
    rows = []
    for i, (rec, value) in enumerate(zip(records, lists, strict=True)):
        where = f"{label}: {section}[{i}]"
        if not isinstance(rec, Mapping):
            raise DataFormatError(f"{where}: expected a JSON object, got {_describe(rec)}")
        if value is None:
            null = "keypoints" in rec  # the field is there, its value null (else: absent)
            if required or null:
                raise DataFormatError(f"{where}.keypoints: " + ("got null" if null else "missing"))
            rows.append(np.zeros((k or 0) * 3))
            continue
        if not isinstance(value, list | tuple):
            raise DataFormatError(
                f"{where}.keypoints: expected a list of numbers, got {_describe(value)}"
            )
        if len(value) % 3:
            raise DataFormatError(
                f"{where}.keypoints: expected x, y, v per keypoint (a multiple of 3 numbers), "
                f"got {len(value)}"
            )
        if k is not None and len(value) != 3 * k:
            source = f", as {reference}" if reference else ""
            raise DataFormatError(
                f"{where}.keypoints: expected {3 * k} numbers ({k} keypoints{source}), "
                f"got {len(value)}"
            )
        for j, x in enumerate(value):
            if not (
                isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
            ):
                raise DataFormatError(
                    f"{where}.keypoints[{j}]: expected a number, got {_describe(x)}"
                )
        rows.append(np.asarray(value, dtype=np.float64))
    width = 3 * (k or 0)
    return np.array(rows, dtype=np.float64).reshape(len(records), width // 3, 3)


def _check_values(array: np.ndarray, label: str, section: str) -> None:
    finite = np.isfinite(array)
    if not finite.all():
        i, kk, c = (int(t) for t in np.argwhere(~finite)[0])
        raise DataFormatError(
            f"{label}: {section}[{i}].keypoints[{3 * kk + c}]: expected a finite number, "
            f"got {array[i, kk, c]}"
        )
    # visibility: any v >= 0 is accepted, v > 0 counts as labelled, as pycocotools and
    # xtcocotools count it (COCO-WholeBody's hand and face keypoints carry confidences such
    # as 0.187 there, #23 item 21); unusual_visibility() finds them for a note
    negative = array[:, :, 2] < 0
    if negative.any():
        i, kk = (int(t) for t in np.argwhere(negative)[0])
        raise DataFormatError(
            f"{label}: {section}[{i}].keypoints[{3 * kk + 2}]: expected a visibility >= 0 "
            f"(0 not labelled, > 0 labelled), got {array[i, kk, 2]:g}"
        )


def unusual_visibility(keypoints: np.ndarray | None) -> tuple[int, int, int, float] | None:
    """``(count, record, keypoint, v)``: how many ground-truth visibilities lie outside
    {0, 1, 2}, and the first of them; None when every one is 0, 1 or 2.

    >>> unusual_visibility(np.array([[[1.0, 2.0, 2.0], [3.0, 4.0, 0.187]]]))
    (1, 0, 1, 0.187)
    """
    if keypoints is None or not keypoints.size:
        return None
    v = keypoints[:, :, 2]
    odd = ~((v == 0) | (v == 1) | (v == 2))
    if not odd.any():
        return None
    i, k = (int(t) for t in np.argwhere(odd)[0])
    return int(odd.sum()), i, k, float(v[i, k])


def _fresh_floats(count: int) -> np.ndarray:
    """``count`` float64 in anonymous memory of their own, for the scanner's largest outputs.

    Sized for the most records the file could hold, they are written only in part, and only
    the pages written are ever backed. NumPy asks for huge pages for large arrays; on a
    virtual machine whose host backs fresh memory lazily (the 2-core benchmark machine), a
    huge-page fault on fresh memory cost 0.02-0.7 s of system time for the 247 MB keypoints of
    the 5 000-image benchmark, plain pages a steady 0.1-0.15 s. The pages are private: a shared
    anonymous map is a shared-memory file, whose pages cost half as much again to fault in
    and to free.
    """
    import mmap

    size = max(count, 1) * 8
    if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS"):  # POSIX
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    else:  # pragma: no cover - Windows: the paging file
        memory = mmap.mmap(-1, size)
    return np.frombuffer(memory, dtype=np.float64, count=count)


def _scan_file(
    data: bytes | mmap.mmap, k: int, label: str, ground_truth: Dataset
) -> Dataset | None:
    """Results of a file by the compiled scanner; None when it cannot handle the file (the
    general parser then reads it, and names any bad record). A file that is not JSON is
    refused here, from the place where the scanner stopped."""

    buf = np.frombuffer(data, dtype=np.uint8)
    # every record takes at least 54 + 6 K bytes ({"image_id":1,"category_id":1,"score":1,
    # "keypoints":[1,1,1]} for K = 1): an upper bound on their count without a pass
    capacity = len(buf) // (54 + 6 * k) + 1
    image_ids = np.empty(capacity, dtype=np.int64)
    category_ids = np.empty(capacity, dtype=np.int64)
    scores = np.empty(capacity, dtype=np.float64)
    flat = _fresh_floats(capacity * 3 * k)
    bbox = _fresh_floats(capacity * 4)
    bbox_count = np.empty(capacity, dtype=np.uint8)
    extent_boxes = _fresh_floats(capacity * 4)
    extent_areas = np.empty(capacity, dtype=np.float64)
    negative_zero = np.empty(capacity, dtype=np.uint8)
    code, n = scan_keypoint_results(
        buf, 3 * k, image_ids, category_ids, scores, flat, bbox, bbox_count, extent_boxes,
        extent_areas, negative_zero,
    )  # fmt: skip
    del buf  # no view of a memory map outlives the scan: the caller closes it
    if code == INVALID:  # not JSON: the error from where the scanner stopped, no second parse
        error = _json_error(data, label)
        if error is not None:
            raise error
    if code != OK:
        return None
    # the lexer yields finite numbers only (one that overflows is left to the general parser)
    keypoints = flat[: n * 3 * k].reshape(n, k, 3)
    has_bbox = bbox_count[:n]
    if n and has_bbox[0] and not has_bbox.all():
        return None  # pycocotools needs every bbox then: the general path names the record
    scores, image_ids, category_ids = scores[:n], image_ids[:n], category_ids[:n]
    rows = _check_result_columns(scores, image_ids, category_ids, label, "results", ground_truth, 0)
    if n and has_bbox[0]:
        xywh = bbox[: 4 * n].reshape(n, 4)
        _check_boxes(xywh, label, "results")
        area = xywh[:, 2] * xywh[:, 3]
    else:  # the scanner's, computed as _result_boxes computes them
        xywh, area = extent_boxes[: 4 * n].reshape(n, 4), extent_areas[:n]
        signed = np.flatnonzero(negative_zero[:n])
        if len(signed):  # which of -0.0 and +0.0 is a zero extent: NumPy's choice
            xywh[signed], area[signed] = _result_boxes(
                [], keypoints[signed], label, "results", first_has_bbox=False
            )
    return _results_dataset(ground_truth, rows, category_ids, scores, keypoints, xywh, area)


def _result_boxes(
    records: Sequence[Any],
    keypoints: np.ndarray,
    label: str,
    section: str,
    *,
    first_has_bbox: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """xywh boxes and areas of keypoint results, as pycocotools' ``loadRes``.

    The first record decides: a non-empty ``bbox`` there means every record's ``bbox`` with
    area ``w * h``; else the extent of each result's keypoints (all K, zeros included).
    The compiled twin of the extent boxes is in ``_kernels/keypoint_json.pyx``.
    """
    n = len(keypoints)
    if first_has_bbox is None:
        first_has_bbox = n > 0 and records[0].get("bbox") not in (None, [])
    if first_has_bbox:
        xywh = _bbox_column(records, label, section)
        return xywh, xywh[:, 2] * xywh[:, 3]
    if n == 0 or keypoints.shape[1] == 0:
        return np.zeros((n, 4)), np.zeros(n)
    x, y = keypoints[:, :, 0], keypoints[:, :, 1]
    x0, x1, y0, y1 = x.min(axis=1), x.max(axis=1), y.min(axis=1), y.max(axis=1)
    return np.stack([x0, y0, x1 - x0, y1 - y0], axis=1), (x1 - x0) * (y1 - y0)


def _with_columns(ds: Dataset, **columns: Any) -> Dataset:
    fields = {f.name for f in dataclasses.fields(Dataset)}
    missing = [name for name in columns if name not in fields and name != "box_wh"]
    if missing:  # pragma: no cover - the evaluation pipeline's Dataset has them
        raise NotImplementedError(f"this ioukit's Dataset has no {', '.join(missing)} column")
    return dataclasses.replace(ds, **{k: v for k, v in columns.items() if k in fields})


def read_coco_keypoints(
    source: str | os.PathLike[str] | Mapping[str, Any],
    /,
    *,
    require_iscrowd: bool = False,
) -> Dataset:
    """Read a COCO keypoint ground-truth file (or the already-parsed dict).

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        Path to a COCO JSON file (``images``, ``annotations`` with ``keypoints``,
        ``categories``), or the parsed dict itself (never modified).
    require_iscrowd : bool
        Raise when an annotation has no ``iscrowd`` key (pycocotools needs it).

    Returns
    -------
    Dataset
        ``keypoints`` (N, K, 3); ``ignore`` set where ``num_keypoints`` is 0 (or the user's
        ``ignore`` key); boxes, areas and flags as :func:`ioukit.io.coco.read_coco_ground_truth`.

    Raises
    ------
    DataFormatError
        Naming the file and record: keypoints not a multiple of 3, a K different from the
        first annotation's, a non-finite coordinate or visibility.

    Examples
    --------
    >>> gt = read_coco_keypoints({
    ...     "images": [{"id": 1}], "categories": [{"id": 1, "name": "person"}],
    ...     "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 8],
    ...                      "area": 20, "num_keypoints": 1, "keypoints": [1, 2, 2, 0, 0, 0]}]})
    >>> gt.keypoints.shape, gt.keypoints[0, 0].tolist(), bool(gt.ignore[0])
    ((1, 2, 3), [1.0, 2.0, 2.0], False)
    """
    # the collector stays paused until the parsed JSON is freed (see read_coco_ground_truth)
    with _gc_paused():
        return _keypoint_ground_truth(source, require_iscrowd)


def _keypoint_ground_truth(
    source: str | os.PathLike[str] | Mapping[str, Any], require_iscrowd: bool
) -> Dataset:
    data, label = _load(source, "ground_truth")
    try:
        base = read_coco_ground_truth(data, require_iscrowd=require_iscrowd)
    except DataFormatError as exc:
        message = str(exc)
        if label != "ground_truth" and message.startswith("ground_truth:"):
            message = label + message[len("ground_truth") :]
        raise DataFormatError(message) from None
    anns = data.get("annotations", [])
    keypoints = _keypoint_column(anns, label, "annotations", required=False)
    visible = (keypoints[:, :, 2] > 0).sum(axis=1).astype(np.float64)
    count = visible
    if any(isinstance(a, Mapping) and "num_keypoints" in a for a in anns):
        count = _float_column(anns, label, "annotations", "num_keypoints", default=-1.0)
        count = np.where(count < 0, visible, count)
    xywh = _number_rows(anns, "bbox", 4)  # read_coco_ground_truth checked every bbox
    if xywh is None:
        xywh = np.array(
            [a["bbox"] for a in anns] if anns else np.zeros((0, 4)), dtype=np.float64
        ).reshape(-1, 4)
    return _with_columns(
        base,
        keypoints=keypoints,
        ignore=base.ignore | (count == 0),
        box_wh=np.ascontiguousarray(xywh[:, 2:]),
    )


def read_coco_keypoint_results(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    /,
    ground_truth: Dataset,
) -> Dataset:
    """Read COCO keypoint results (``loadRes`` format) for ``ground_truth``'s images.

    Parameters
    ----------
    source : str, os.PathLike or sequence of Mapping
        A JSON file holding a list of ``{"image_id", "category_id", "keypoints", "score"}``
        records (``bbox`` optional), or the list itself (never modified).
    ground_truth : Dataset
        The results refer to its image and category tables; when it has ``keypoints``, every
        result must have its K.

    Returns
    -------
    Dataset
        ``keypoints`` (N, K, 3), ``scores``, and as pycocotools' ``loadRes``: boxes and areas
        from the first record's choice (its ``bbox``: ``w * h``; none: the keypoints'
        extent, zeros included), ``annotation_id`` 1..N in file order.

    Raises
    ------
    DataFormatError
        Naming the file and record: a missing ``keypoints``, a K different from the ground
        truth's, a non-finite value, an unknown image or category id.

    Examples
    --------
    >>> gt = read_coco_keypoints({
    ...     "images": [{"id": 1}], "categories": [{"id": 1}],
    ...     "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 9, 9],
    ...                      "area": 50, "num_keypoints": 2, "keypoints": [2, 3, 2, 6, 8, 1]}]})
    >>> pred = read_coco_keypoint_results(
    ...     [{"image_id": 1, "category_id": 1, "score": 0.9,
    ...       "keypoints": [2, 3, 0.8, 7, 9, 0.5]}], gt)
    >>> pred.boxes.tolist(), pred.area.tolist()
    ([[2.0, 3.0, 7.0, 9.0]], [30.0])
    """
    with _gc_paused():  # until the parsed JSON, if any, is freed
        return _keypoint_results(source, ground_truth)


def _keypoint_results(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]], ground_truth: Dataset
) -> Dataset:
    gt_k = getattr(ground_truth, "keypoints", None)
    k = None if gt_k is None or gt_k.shape[1] == 0 else int(gt_k.shape[1])
    if isinstance(source, str | os.PathLike):
        label = os.fspath(source)
        if k is not None:
            mapped = map_bytes(label, limit=_MAX_JSON_BYTES)  # no copy of a large file
            if mapped is not None:
                with mapped:
                    scanned = _scan_file(mapped, k, label, ground_truth)
                if scanned is not None:
                    return scanned
        data: Any = _parse(_read(label), label)
    else:
        data, label = source, "results"
    section = "results"
    if isinstance(data, Mapping) and "annotations" in data:
        data, section = data["annotations"], "annotations"
    if not isinstance(data, list | tuple):
        raise DataFormatError(
            f"{label}: expected a list of result objects, got {type(data).__name__}"
        )
    records = list(data)
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise DataFormatError(f"{label}: {section}[{i}]: expected a JSON object")
    keypoints = _keypoint_column(
        records,
        label,
        section,
        num_keypoints=k,
        required=True,
        reference="the ground truth",
    )
    scores = _float_column(records, label, section, "score")
    image_ids = _int_column(records, label, section, "image_id")
    category_ids = _int_column(records, label, section, "category_id")
    image_index = _check_result_columns(
        scores, image_ids, category_ids, label, section, ground_truth, 0
    )
    xywh, area = _result_boxes(records, keypoints, label, section)
    return _results_dataset(ground_truth, image_index, category_ids, scores, keypoints, xywh, area)


def _results_dataset(
    ground_truth: Dataset,
    image_index: np.ndarray,
    category_ids: np.ndarray,
    scores: np.ndarray,
    keypoints: np.ndarray,
    xywh: np.ndarray,
    area: np.ndarray,
) -> Dataset:
    n = len(scores)
    false = np.zeros(n, dtype=bool)
    return Dataset(
        images=ground_truth.images,
        categories=ground_truth.categories,
        boxes=_xywh_to_xyxy(xywh),
        image_index=image_index,
        category_id=category_ids,
        scores=scores,
        area=area,
        crowd=false,
        ignore=false,
        difficult=false,
        annotation_id=np.arange(1, n + 1, dtype=np.int64),
        keypoints=keypoints,
        box_wh=np.ascontiguousarray(xywh[:, 2:]),
    )


def read_crowd_index(source: str | os.PathLike[str] | Mapping[str, Any], /) -> dict[int, float]:
    """CrowdPose's ``crowdIndex`` of every image that has one: image id -> crowd index.

    Raises
    ------
    DataFormatError
        A ``crowdIndex`` that is not a finite number (naming the file and image).

    Examples
    --------
    >>> read_crowd_index({"images": [{"id": 3, "crowdIndex": 0.25}, {"id": 4}]})
    {3: 0.25}
    """
    data, label = _load(source, "ground_truth")
    images = data.get("images", []) if isinstance(data, Mapping) else []
    out: dict[int, float] = {}
    for i, image in enumerate(images):
        if not isinstance(image, Mapping) or "crowdIndex" not in image:
            continue
        value = image["crowdIndex"]
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise DataFormatError(
                f"{label}: images[{i}].crowdIndex: expected a finite number, got {_describe(value)}"
            )
        out[int(image["id"])] = float(value)
    return out
