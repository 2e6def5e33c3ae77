"""Corners in either winding, from any corner, are the same rectangle (issue #23 item 8).

Ultralytics writes oriented boxes with ``xywhr2xyxyxyxy``: ``ctr ± v1 ± v2`` with
``v1 = (w/2 cos, w/2 sin)``, ``v2 = (-h/2 sin, h/2 cos)``, corners ``+v1+v2, +v1-v2, -v1-v2,
-v1+v2`` (angle in radians, clockwise on the image), which goes round the box the other way
than torchvision's order. The formulas below are written from that description; shapely is the
oracle of "same rectangle" and Ultralytics' ``batch_probiou`` (transcribed independently in
``_probiou_reference``) the oracle of the similarity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ioukit.boxes import box_convert
from ioukit.overlap.rotated import probiou, rotated_box_iou

shapely = pytest.importorskip("shapely")
from shapely.geometry import Polygon  # noqa: E402


def ultralytics_corners(box: np.ndarray) -> np.ndarray:
    """Ultralytics' xywhr2xyxyxyxy of one (cx, cy, w, h, r) box, as (8,)."""
    cx, cy, w, h, r = box
    v1 = np.array([w / 2 * math.cos(r), w / 2 * math.sin(r)])
    v2 = np.array([-h / 2 * math.sin(r), h / 2 * math.cos(r)])
    c = np.array([cx, cy])
    return np.concatenate([c + v1 + v2, c + v1 - v2, c - v1 - v2, c - v1 + v2])


def _probiou_reference(b1: np.ndarray, b2: np.ndarray, eps: float = 1e-7) -> float:
    """Ultralytics' batch_probiou for one pair of (cx, cy, w, h, r) boxes, plain floats."""

    def cov(b: np.ndarray) -> tuple[float, float, float]:
        a, bb = b[2] ** 2 / 12, b[3] ** 2 / 12
        c, s = math.cos(b[4]), math.sin(b[4])
        return a * c * c + bb * s * s, a * s * s + bb * c * c, (a - bb) * c * s

    a1, bb1, c1 = cov(b1)
    a2, bb2, c2 = cov(b2)
    x1, y1, x2, y2 = b1[0], b1[1], b2[0], b2[1]
    den = (a1 + a2) * (bb1 + bb2) - (c1 + c2) ** 2 + eps
    t1 = ((a1 + a2) * (y1 - y2) ** 2 + (bb1 + bb2) * (x1 - x2) ** 2) / den * 0.25
    t2 = ((c1 + c2) * (x2 - x1) * (y1 - y2)) / den * 0.5
    d1 = max(a1 * bb1 - c1 * c1, 0.0)
    d2 = max(a2 * bb2 - c2 * c2, 0.0)
    t3 = math.log(((a1 + a2) * (bb1 + bb2) - (c1 + c2) ** 2) / (4 * math.sqrt(d1 * d2) + eps) + eps)
    bd = min(max(t1 + t2 + t3 * 0.5, eps), 100.0)
    return 1 - math.sqrt(1 - math.exp(-bd) + eps)


def _boxes(seed: int, n: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.uniform(0, 500, n),
            rng.uniform(0, 500, n),
            rng.uniform(1, 80, n),
            rng.uniform(1, 80, n),
            rng.uniform(-math.pi, math.pi, n),
        ]
    )


def _orders(corners: np.ndarray) -> list[np.ndarray]:
    """The 8 ways to list the same 4 corners round the box: 4 starts x 2 windings."""
    pts = corners.reshape(4, 2)
    out = []
    for start in range(4):
        ring = np.roll(pts, -start, axis=0)
        out.append(ring.reshape(8))
        out.append(ring[[0, 3, 2, 1]].reshape(8))
    return out


def _same_rectangle(c1: np.ndarray, c2: np.ndarray) -> float:
    """Area of the symmetric difference over the area (0 for the same rectangle)."""
    p, q = Polygon(c1.reshape(4, 2)), Polygon(c2.reshape(4, 2))
    return float(p.symmetric_difference(q).area / p.area)


@pytest.mark.parametrize("seed", range(3))
def test_every_listing_converts_to_the_same_rectangle(seed: int) -> None:
    for box in _boxes(seed):
        corners = ultralytics_corners(box)
        for listing in _orders(corners):
            rect = box_convert(listing, "xyxyxyxy", "cxcywhr", angle_unit="radians", clockwise=True)
            back = box_convert(rect, "cxcywhr", "xyxyxyxy", angle_unit="radians", clockwise=True)
            assert _same_rectangle(corners, back) < 1e-12
            assert math.isclose(rect[2] * rect[3], box[2] * box[3], rel_tol=1e-12)


def test_torchvision_order_is_unchanged() -> None:
    """In ioukit's (torchvision's) winding, the first corner and edge give x1, y1, w and r."""
    corners = box_convert(np.array([[10.0, 20.0, 8.0, 4.0, 30.0]]), "xywhr", "xyxyxyxy")
    again = box_convert(corners, "xyxyxyxy", "xywhr")
    np.testing.assert_allclose(again, [[10.0, 20.0, 8.0, 4.0, 30.0]], rtol=1e-13)


@pytest.mark.parametrize("seed", range(2))
def test_probiou_of_a_rectangle_in_both_orders(seed: int) -> None:
    boxes = _boxes(seed)
    identical = _probiou_reference(boxes[0], boxes[0])
    assert identical == pytest.approx(0.999553, abs=1e-6)
    for box in boxes:
        corners = ultralytics_corners(box)
        flipped = corners.reshape(4, 2)[[0, 3, 2, 1]].reshape(8)
        kw = {"angle_unit": "radians", "clockwise": True}
        both = probiou([corners, flipped], [corners], fmt="xyxyxyxy", **kw)  # type: ignore[arg-type]
        assert both[0, 0] == pytest.approx(identical, abs=1e-9)
        assert both[1, 0] == pytest.approx(identical, abs=1e-9)
        pair = probiou([corners], [flipped], fmt="xyxyxyxy", **kw)  # type: ignore[arg-type]
        assert pair[0, 0] == pytest.approx(identical, abs=1e-9)


def test_probiou_of_shifted_boxes_matches_the_reference() -> None:
    boxes = _boxes(5)
    corners = np.array([ultralytics_corners(b) for b in boxes])
    kw = {"angle_unit": "radians", "clockwise": True}
    got = probiou(corners, corners[::-1], fmt="xyxyxyxy", **kw)  # type: ignore[arg-type]
    for i, j in [(0, 0), (3, 7), (10, 29), (39, 0)]:
        # the converted rectangle may swap w and h with r + pi/2: the same Gaussian
        assert got[i, j] == pytest.approx(_probiou_reference(boxes[i], boxes[::-1][j]), abs=1e-9)


def test_exact_iou_of_both_windings_is_one() -> None:
    corners = np.array([ultralytics_corners(b) for b in _boxes(9, 10)])
    flipped = corners.reshape(-1, 4, 2)[:, [0, 3, 2, 1]].reshape(-1, 8)
    assert np.allclose(np.diag(rotated_box_iou(corners, flipped, fmt="xyxyxyxy")), 1.0)
