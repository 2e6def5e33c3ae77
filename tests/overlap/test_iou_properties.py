"""Hypothesis properties of the IoU family (NumPy, float64)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import ioukit

coordinate = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_subnormal=False)
size = st.floats(min_value=0, max_value=1e3, allow_nan=False, allow_subnormal=False)


@st.composite
def box_arrays(draw: st.DrawFn, min_size: int = 1, max_size: int = 8) -> np.ndarray:
    n = draw(st.integers(min_size, max_size))
    xy = draw(arrays(np.float64, (n, 2), elements=coordinate))
    wh = draw(arrays(np.float64, (n, 2), elements=size))
    return np.concatenate([xy, xy + wh], axis=1)


@st.composite
def integer_box_arrays(draw: st.DrawFn) -> np.ndarray:
    """Boxes with integer coordinates: translations and power-of-two scalings are exact."""
    n = draw(st.integers(1, 8))
    xy = draw(arrays(np.int64, (n, 2), elements=st.integers(-10_000, 10_000)))
    wh = draw(arrays(np.int64, (n, 2), elements=st.integers(0, 1_000)))
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float64)


PAIRWISE = [
    ioukit.box_iou,
    ioukit.box_dice,
    ioukit.generalized_box_iou,
    ioukit.distance_box_iou,
    ioukit.complete_box_iou,
]
ELEMENTWISE = [
    ioukit.box_iou_elementwise,
    ioukit.box_dice_elementwise,
    ioukit.generalized_box_iou_elementwise,
    ioukit.distance_box_iou_elementwise,
    ioukit.complete_box_iou_elementwise,
]


@settings(max_examples=60, deadline=None)
@given(box_arrays(), box_arrays())
def test_symmetric_and_bounded(a: np.ndarray, b: np.ndarray) -> None:
    iou = ioukit.box_iou(a, b)
    np.testing.assert_array_equal(iou, ioukit.box_iou(b, a).T)
    assert np.all((iou >= 0) & (iou <= 1))
    giou = ioukit.generalized_box_iou(a, b)
    assert np.all(giou > -1 - 1e-12) and np.all(giou <= iou + 1e-12)
    for fn in PAIRWISE:
        assert np.all(np.isfinite(fn(a, b)))


@settings(max_examples=60, deadline=None)
@given(box_arrays())
def test_self_iou_is_one_for_positive_area(a: np.ndarray) -> None:
    # positive width and height, even when their product underflows to 0 (#16 item 7)
    positive = (a[:, 2] > a[:, 0]) & (a[:, 3] > a[:, 1])
    iou = ioukit.box_iou_elementwise(a, a)
    np.testing.assert_allclose(iou[positive], 1.0, rtol=1e-12)
    assert np.all(iou[~positive] == 0)


@settings(max_examples=60, deadline=None)
@given(
    integer_box_arrays(),
    integer_box_arrays(),
    st.integers(-500, 500),
    st.integers(-500, 500),
    st.sampled_from([0.25, 0.5, 2.0, 8.0]),
)
def test_translation_and_scale_invariance(
    a: np.ndarray, b: np.ndarray, dx: int, dy: int, scale: float
) -> None:
    shift = np.array([dx, dy, dx, dy], dtype=np.float64)
    for fn in PAIRWISE:
        # DIoU/CIoU add eps to the squared diagonal (torchvision), which is not scale-free
        kwargs = {"eps": 0.0} if fn in (ioukit.distance_box_iou, ioukit.complete_box_iou) else {}
        base = fn(a, b, **kwargs)
        np.testing.assert_allclose(fn(a + shift, b + shift, **kwargs), base, atol=1e-12)
        np.testing.assert_allclose(fn(a * scale, b * scale, **kwargs), base, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(box_arrays(), box_arrays())
def test_dice_from_iou(a: np.ndarray, b: np.ndarray) -> None:
    iou = ioukit.box_iou(a, b)
    np.testing.assert_allclose(ioukit.box_dice(a, b), 2 * iou / (1 + iou), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(box_arrays(), box_arrays())
def test_pairwise_equals_elementwise_over_cartesian_product(a: np.ndarray, b: np.ndarray) -> None:
    rows = np.repeat(a, len(b), axis=0)
    cols = np.tile(b, (len(a), 1))
    for pairwise, elementwise in zip(PAIRWISE, ELEMENTWISE, strict=True):
        expected = elementwise(rows, cols).reshape(len(a), len(b))
        np.testing.assert_array_equal(pairwise(a, b), expected)


@settings(max_examples=60, deadline=None)
@given(integer_box_arrays(), st.floats(1, 4000), st.floats(1, 4000))
def test_format_round_trips(a: np.ndarray, width: float, height: float) -> None:
    # integer corners: centre/size arithmetic is exact, so IoU must survive the round trip
    for fmt in ("xywh", "cxcywh"):
        there = ioukit.box_convert(a, "xyxy", fmt)
        np.testing.assert_array_equal(ioukit.box_convert(there, fmt, "xyxy"), a)
        np.testing.assert_array_equal(ioukit.box_iou(there, there, fmt=fmt), ioukit.box_iou(a, a))
        normalized = ioukit.box_convert(
            a, "xyxy", fmt, image_size=(width, height), normalized="output"
        )
        back = ioukit.box_convert(normalized, fmt, "xyxy", image_size=(width, height))
        np.testing.assert_allclose(back, a, atol=1e-7, rtol=1e-9)
