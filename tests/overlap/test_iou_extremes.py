"""#16 item 7: the IoU family stays in range for every finite input, and inputs that cannot
be computed honestly (corners overflowing to inf, masked arrays) are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit import (
    box_dice,
    box_iou,
    box_iou_elementwise,
    complete_box_iou,
    distance_box_iou,
    generalized_box_iou,
    iou,
    nms,
)
from ioukit.errors import BoxError
from ioukit.overlap import _safe

CASES = [
    ([[0, 0, 1e200, 1e200]], [[0, 0, 1e200, 5e199]], np.float64, 0.5),
    ([[0, 0, 1e-320, 1e-320]], [[0, 0, 1e-320, 1e-320]], np.float64, 1.0),
    ([[0, 0, 2e19, 2e19]], [[0, 0, 2e19, 2e19]], np.float32, 1.0),
    ([[-1e308, -1e308, 1e308, 1e308]], [[0, 0, 1e308, 1e308]], np.float64, 0.25),
    ([[0, 0, 4e-30, 4e-30]], [[0, 0, 4e-30, 2e-30]], np.float32, 0.5),
]


@pytest.mark.parametrize(("a", "b", "dtype", "expected"), CASES)
def test_overflow_and_underflow_give_the_true_iou(a, b, dtype, expected) -> None:
    a, b = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    for value in (box_iou(a, b)[0, 0], box_iou_elementwise(a, b)[0]):
        assert value.dtype == dtype
        assert value == pytest.approx(expected, rel=1e-6)
    assert iou(a[0], b[0]) == pytest.approx(expected, rel=1e-6)
    assert 0 <= box_dice(a, b)[0, 0] <= 1
    assert -1 <= generalized_box_iou(a, b)[0, 0] <= 1
    for metric in (distance_box_iou, complete_box_iou):
        assert np.isfinite(metric(a, b)).all()


def test_kernel_path_is_fixed_too() -> None:
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 100, (200, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(1, 50, (200, 2))], axis=1)
    boxes[3] = [0, 0, 1e200, 1e200]
    others = boxes.copy()
    others[5] = [0, 0, 1e200, 5e199]
    got = box_iou(boxes, others)  # 40 000 elements: the compiled kernel
    assert np.isfinite(got).all() and (got >= 0).all() and (got <= 1).all()
    assert got[3, 5] == pytest.approx(0.5)
    normal = np.ones(200, dtype=bool)
    normal[3] = False
    keep = np.ones(200, dtype=bool)
    keep[5] = False
    np.testing.assert_array_equal(got[normal][:, keep], box_iou(boxes[normal], others[keep]))


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(finite, min_size=4, max_size=4),
    st.lists(finite, min_size=4, max_size=4),
    st.sampled_from([np.float32, np.float64]),
)
def test_every_finite_pair_stays_in_range(a: list[float], b: list[float], dtype: type) -> None:
    def box(values: list[float]) -> np.ndarray:
        x = np.asarray(values, dtype=np.float64)
        x = np.clip(x, np.finfo(dtype).min, np.finfo(dtype).max).astype(dtype)
        return np.array([[min(x[0], x[2]), min(x[1], x[3]), max(x[0], x[2]), max(x[1], x[3])]])

    ba, bb = box(a), box(b)
    value = box_iou(ba, bb)
    assert 0 <= value[0, 0] <= 1
    assert 0 <= box_dice(ba, bb)[0, 0] <= 1
    assert -1 <= generalized_box_iou(ba, bb)[0, 0] <= 1
    assert box_iou(ba, ba)[0, 0] in (0.0, 1.0)  # 0 only for a zero-area box


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(-40, 40))
def test_safe_path_is_bit_identical_where_direct_arithmetic_is_fine(k: int) -> None:
    rng = np.random.default_rng(k + 100)
    xy = rng.uniform(0, 100, (30, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0, 50, (30, 2))], axis=1) * 2.0**k
    for metric in ("iou", "dice", "giou", "diou", "ciou"):
        direct = np.asarray(
            {
                "iou": box_iou,
                "dice": box_dice,
                "giou": generalized_box_iou,
                "diou": distance_box_iou,
                "ciou": complete_box_iou,
            }[metric](boxes, boxes[::-1])
        )
        safe = _safe.rescaled(metric, boxes[:, None, :], boxes[::-1][None, :, :], 1e-7)
        np.testing.assert_array_equal(safe, direct)


@pytest.mark.parametrize("fmt", ["xywh", "cxcywh"])
def test_corners_overflowing_to_inf_are_refused(fmt: str) -> None:
    with pytest.raises(BoxError, match=r"boxes1\[0\].*overflow"):
        box_iou([[1.7e308, 0, 1.7e308, 1]], [[0, 0, 1, 1]], fmt=fmt)


def test_masked_arrays_are_refused() -> None:
    masked = np.ma.masked_array([[0, 0, 1, 1.0]], mask=[[0, 0, 0, 1]])
    with pytest.raises(BoxError, match="boxes1: masked arrays"):
        box_iou(masked, [[0, 0, 1, 1]])
    with pytest.raises(BoxError, match="boxes: masked arrays"):
        nms(masked, [1.0], 0.5)
