"""Rotated IoU and probiou at extreme magnitudes (issue #23 item 10).

Identical rotated boxes gave IoU 0 beyond ~1e154 and below ~1e-160 (products of coordinate
differences overflow or underflow) and probiou was NaN from 1e78 (``inf - inf``). Both are
invariant under scaling (probiou up to its ``eps``), so a pair out of range is recomputed with
its coordinates multiplied by a power of two. The oracles: shapely where its float64 overlay is
accurate (magnitudes 1e-100 .. 1e100), the scale invariance of the IoU (the same pair at
scale 1, measured by shapely), and Ultralytics' probiou formula transcribed in plain Python.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ioukit.boxes import box_convert
from ioukit.errors import BoxError
from ioukit.overlap.rotated import (
    probiou,
    probiou_elementwise,
    rotated_box_iou,
    rotated_box_iou_elementwise,
)
from ioukit.suppression import rotated_nms

shapely = pytest.importorskip("shapely")
from shapely.geometry import Polygon  # noqa: E402

SCALES = [1e-300, 1e-250, 1e-200, 1e-161, 1e-155, 1e-100, 1.0, 1e100, 1e154, 1e155, 1e200, 1e300]


def _shapely_iou(a: np.ndarray, b: np.ndarray) -> float:
    p, q = Polygon(a.reshape(4, 2)), Polygon(b.reshape(4, 2))
    inter = p.intersection(q).area
    return inter / (p.area + q.area - inter)


BOXES = np.array([[3.0, 4.0, 2.0, 1.0, 30.0], [3.5, 4.2, 2.5, 1.2, 10.0], [0.0, 0.0, 1.0, 1.0, 0]])


@pytest.mark.parametrize("scale", SCALES)
def test_identical_boxes_give_one_at_every_scale(scale: float) -> None:
    boxes = BOXES * [scale, scale, scale, scale, 1]
    assert np.diag(rotated_box_iou(boxes, boxes)).tolist() == [1.0, 1.0, 1.0]
    assert rotated_box_iou_elementwise(boxes, boxes).tolist() == [1.0, 1.0, 1.0]
    corners = box_convert(boxes, "cxcywhr", "xyxyxyxy")
    assert np.diag(rotated_box_iou(corners, corners, fmt="xyxyxyxy")).tolist() == [1.0] * 3
    dart = np.array([[0, 0, 4, 0, 1, 1, 0, 4]], dtype=float) * scale
    assert rotated_box_iou(dart, dart, fmt="xyxyxyxy").tolist() == [[1.0]]


@pytest.mark.parametrize("scale", SCALES)
def test_scaled_pairs_equal_the_pair_at_scale_one(scale: float) -> None:
    corners = box_convert(BOXES, "cxcywhr", "xyxyxyxy")
    want = np.array([[_shapely_iou(p, q) for q in corners] for p in corners])
    got = rotated_box_iou(corners * scale, corners * scale, fmt="xyxyxyxy")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert want[0, 1] > 0.2  # overlapping, not a trivial 0


@pytest.mark.parametrize("scale", [1e-100, 1e-50, 1e50, 1e100])
def test_direct_shapely_where_it_is_accurate(scale: float) -> None:
    corners = box_convert(BOXES, "cxcywhr", "xyxyxyxy") * scale
    want = np.array([[_shapely_iou(p, q) for q in corners] for p in corners])
    np.testing.assert_allclose(
        rotated_box_iou(corners, corners, fmt="xyxyxyxy"), want, rtol=1e-12, atol=1e-15
    )


def test_mixed_magnitudes_in_one_matrix() -> None:
    small = BOXES * [1e-200, 1e-200, 1e-200, 1e-200, 1]
    big = BOXES * [1e200, 1e200, 1e200, 1e200, 1]
    both = np.concatenate([small, BOXES, big])
    got = rotated_box_iou(both, both)
    corners = box_convert(BOXES, "cxcywhr", "xyxyxyxy")
    block = np.array([[_shapely_iou(p, q) for q in corners] for p in corners])
    for k in range(3):
        part = got[3 * k : 3 * k + 3, 3 * k : 3 * k + 3]
        np.testing.assert_allclose(part, block, rtol=1e-12, atol=1e-15)
    off = got.copy()
    for k in range(3):
        off[3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = 0
    assert off.max() < 1e-300  # a box 1e200 times smaller has no measurable share
    assert not np.isnan(got).any()


def test_corners_that_overflow_are_refused() -> None:
    with pytest.raises(BoxError, match=r"boxes1\[0\]: invalid cxcywhr box .*overflow to infinity"):
        rotated_box_iou([[1.7e308, 0, 1e308, 1, 0]], [[0, 0, 1, 1, 0]])


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_rotated_nms_suppresses_identical_boxes_at_any_scale(scale: float) -> None:
    boxes = BOXES[[0, 0, 1, 2]] * [scale, scale, scale, scale, 1]
    assert rotated_nms(boxes, [0.9, 0.8, 0.7, 0.6], iou_threshold=0.5).tolist() == [0, 2, 3]


def test_rotated_nms_refuses_a_set_no_single_scale_can_hold() -> None:
    boxes = np.concatenate([BOXES * [1e200, 1e200, 1e200, 1e200, 1], BOXES * [1e-200] * 4 + [0]])
    with pytest.raises(BoxError, match=r"boxes: the boxes' magnitudes span"):
        rotated_nms(boxes, np.arange(6.0), iou_threshold=0.5)


# ------------------------------------------------------------------------------------ probiou


def _reference(b1: np.ndarray, b2: np.ndarray, eps: float = 1e-7, eps4: float = 1e-7) -> float:
    """Ultralytics' batch_probiou of one pair (cx, cy, w, h, r radians), plain floats; ``eps4``
    is the eps of its two length^4 denominators."""

    def cov(b: np.ndarray) -> tuple[float, float, float]:
        a, bb = b[2] ** 2 / 12, b[3] ** 2 / 12
        c, s = math.cos(b[4]), math.sin(b[4])
        return a * c * c + bb * s * s, a * s * s + bb * c * c, (a - bb) * c * s

    a1, bb1, c1 = cov(b1)
    a2, bb2, c2 = cov(b2)
    den = (a1 + a2) * (bb1 + bb2) - (c1 + c2) ** 2
    t1 = ((a1 + a2) * (b1[1] - b2[1]) ** 2 + (bb1 + bb2) * (b1[0] - b2[0]) ** 2) / (den + eps4)
    t2 = ((c1 + c2) * (b2[0] - b1[0]) * (b1[1] - b2[1])) / (den + eps4)
    root = 4 * math.sqrt(max(a1 * bb1 - c1 * c1, 0) * max(a2 * bb2 - c2 * c2, 0))
    t3 = math.log(den / (root + eps4) + eps) * 0.5
    bd = min(max(t1 * 0.25 + t2 * 0.5 + t3, eps), 100.0)
    return 1 - math.sqrt(1 - math.exp(-bd) + eps)


RADIANS = {"angle_unit": "radians", "clockwise": True}


@pytest.mark.parametrize("scale", [1e78, 1e100, 1e154, 1e200, 1e300])
def test_probiou_is_finite_and_scale_free_at_large_magnitudes(scale: float) -> None:
    boxes = np.array([[3.0, 4.0, 2.0, 1.0, 0.5], [3.5, 4.2, 2.5, 1.2, 0.2]])
    scaled = boxes * [scale, scale, scale, scale, 1]
    got = probiou(scaled, scaled, **RADIANS)  # type: ignore[arg-type]
    want = [[_reference(p, q, eps4=0.0) for q in boxes] for p in boxes]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(
        probiou_elementwise(scaled, scaled[::-1], **RADIANS),  # type: ignore[arg-type]
        [want[0][1], want[1][0]],
        rtol=1e-12,
    )


def test_probiou_below_the_limit_is_ultralytics_formula() -> None:
    boxes = np.array([[3.0, 4.0, 2.0, 1.0, 0.5], [3.5, 4.2, 2.5, 1.2, 0.2]]) * [1e28] * 4 + [1]
    got = probiou(boxes, boxes, **RADIANS)  # type: ignore[arg-type]
    want = [[_reference(p, q) for q in boxes] for p in boxes]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e38, 1e40, 1e77])
def test_probiou_where_the_direct_formula_saturates(scale: float) -> None:
    """From 1e38 sqrt(det1 * det2) overflows to inf (a constant answer), from 1e78 to nan."""
    boxes = np.array([[3.0, 4.0, 2.0, 1.0, 0.5], [3.5, 4.2, 2.5, 1.2, 0.2]])
    scaled = boxes * [scale, scale, scale, scale, 1]
    got = probiou(scaled, scaled, **RADIANS)  # type: ignore[arg-type]
    want = [[_reference(p, q, eps4=0.0) for q in boxes] for p in boxes]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_probiou_float32_does_not_overflow() -> None:
    boxes = np.array([[3.0, 4.0, 2.0, 1.0, 0.5], [3.5, 4.2, 2.5, 1.2, 0.2]], dtype=np.float32)
    unit = probiou(boxes, boxes, **RADIANS)  # type: ignore[arg-type]
    for scale in (1e5, 1e10, 1e20, 1e30):
        scaled = boxes * np.array([scale, scale, scale, scale, 1], dtype=np.float32)
        got = probiou(scaled, scaled, **RADIANS)  # type: ignore[arg-type]
        assert got.dtype == np.float32
        # float32 rounding and eps (negligible only at large scales) separate them
        np.testing.assert_allclose(got, unit, rtol=1e-4)


def test_probiou_of_far_apart_huge_boxes_is_zero_not_nan() -> None:
    got = probiou([[-1.5e308, 0, 1e300, 1e300, 0]], [[1.5e308, 0, 1e300, 1e300, 0]])
    assert got.tolist() == [[pytest.approx(0.0, abs=1e-3)]]
