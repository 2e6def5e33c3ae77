"""pycocotools.mask drop-in against pycocotools side by side."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pycocotools.mask as ref
import pytest

from ioukit.compat.pycocotools import mask as ours


def _ref_decode(rles: Any) -> np.ndarray:
    with warnings.catch_warnings():  # pycocotools' __array__ under newer NumPy rules
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.asarray(ref.decode(rles))


@pytest.fixture(scope="module")
def masks() -> np.ndarray:
    rng = np.random.default_rng(7)
    m = np.zeros((23, 31, 6), dtype=np.uint8, order="F")
    for i in range(5):
        y, x = rng.integers(0, 15, 2)
        m[y : y + rng.integers(2, 9), x : x + rng.integers(2, 14), i] = 1
    m[:, :, 4] = rng.random((23, 31)) > 0.6  # ragged
    return m  # the last one is empty


def test_encode_decode_area_to_bbox(masks: np.ndarray) -> None:
    a, b = ref.encode(masks), ours.encode(masks)
    assert a == b
    assert ref.encode(masks[:, :, 0].copy(order="F")) == ours.encode(masks[:, :, 0])
    da, db = _ref_decode(a), ours.decode(a)
    assert da.shape == db.shape and np.array_equal(da, db) and db.flags.f_contiguous
    assert np.array_equal(_ref_decode(a[1]), ours.decode(a[1]))
    for fn in ("area", "toBbox"):
        x, y = getattr(ref, fn)(a), getattr(ours, fn)(a)
        assert x.dtype == y.dtype and np.array_equal(x, y), fn
        x, y = getattr(ref, fn)(a[2]), getattr(ours, fn)(a[2])
        assert np.asarray(x).dtype == np.asarray(y).dtype and np.array_equal(x, y), fn
    assert ours.decode([]).shape == (0, 0, 0)  # pycocotools reads garbage sizes there
    assert np.array_equal(ref.area([]), ours.area([]))


def test_merge_and_iou_of_rles(masks: np.ndarray) -> None:
    rles = ref.encode(masks)
    for intersect in (0, 1):
        assert ref.merge(rles[:4], intersect) == ours.merge(rles[:4], intersect)
    assert ref.merge([]) == ours.merge([])
    crowd = [0, 1, 0, 0, 1, 0]
    assert np.array_equal(ref.iou(rles, rles, crowd), ours.iou(rles, rles, crowd))
    assert ref.iou([], rles, crowd) == ours.iou([], rles, crowd) == []


def test_box_iou_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    dt = np.round(rng.random((40, 4)) * [50, 50, 30, 30], 2)
    gt = np.round(rng.random((25, 4)) * [50, 50, 30, 30], 2)
    gt[3] = dt[5]  # identical pair
    gt[4, 2] = 0.0  # zero width
    crowd = rng.random(25) > 0.7
    x, y = ref.iou(dt, gt, crowd.astype(np.uint8)), ours.iou(dt, gt, crowd.tolist())
    assert x.tobytes() == y.tobytes()
    assert np.array_equal(
        ref.iou(dt.tolist(), gt.tolist(), crowd), ours.iou(dt.tolist(), gt.tolist(), crowd)
    )
    assert np.array_equal(ref.iou(dt, gt.tolist(), crowd), ours.iou(dt, gt.tolist(), crowd))


def test_iou_errors_have_pycocotools_types(masks: np.ndarray) -> None:
    rles = ref.encode(masks)
    for m in (ref, ours):
        with pytest.raises(Exception, match="same data type"):
            m.iou([[0, 0, 1, 1]], rles[:1], [0])
        with pytest.raises(AssertionError, match="same length as gt"):
            m.iou([[0, 0, 1, 1]], [[0, 0, 2, 2]], [0, 1])


@pytest.mark.parametrize(
    "obj",
    [
        [[1, 1, 9, 1, 9, 7, 5, 9, 1, 7]],  # polygons
        "array",
        {"size": [10, 12], "counts": [5, 7, 20, 3, 85]},  # uncompressed RLE
        [{"size": [10, 12], "counts": [5, 7, 108]}],
    ],
)
def test_fr_py_objects(obj: object) -> None:
    if isinstance(obj, str):
        obj = np.array([[2, 3, 5, 4], [1.5, 1.5, 2, 2]])
    assert ref.frPyObjects(obj, 10, 12) == ours.frPyObjects(obj, 10, 12)


def test_fr_py_objects_boxes_as_a_list() -> None:
    boxes = [[2, 3, 5, 4], [0, 0, 3.5, 2.5]]  # pycocotools takes boxes as an ndarray only
    assert ours.frPyObjects(boxes, 10, 12) == ref.frPyObjects(np.array(boxes, float), 10, 12)


def test_fr_py_objects_rejects_what_pycocotools_rejects() -> None:
    for m in (ref, ours):
        with pytest.raises(Exception, match="input type is not supported"):
            m.frPyObjects("abc", 10, 12)
        with pytest.raises(TypeError):
            m.frPyObjects([1, 1, 9, 1, 9, 7, 5, 9], 10, 12)  # a flat polygon
