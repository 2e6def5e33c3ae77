"""Exact IoU of simple quadrilaterals that are not convex (issue #23 item 23, geometry half).

DOTA labels include quadrilaterals with a reflex corner; the DOTA devkit's ``polyiou`` measures
any polygon, and ioukit refused them. shapely (GEOS, exact polygon overlay) is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.errors import BoxError
from ioukit.overlap.rotated import rotated_box_iou, rotated_box_iou_elementwise
from ioukit.suppression import rotated_nms

shapely = pytest.importorskip("shapely")
from shapely.geometry import Polygon  # noqa: E402


def _shapely_iou(a: np.ndarray, b: np.ndarray) -> float:
    p, q = Polygon(a.reshape(4, 2)), Polygon(b.reshape(4, 2))
    inter = p.intersection(q).area
    union = p.area + q.area - inter
    return inter / union if union > 0 else 0.0


def _dart(rng: np.random.Generator, centre: np.ndarray, size: float) -> np.ndarray:
    """A quadrilateral with one reflex corner (a corner inside the triangle of the other three),
    listed from a random corner in a random winding."""
    tri = centre + rng.uniform(-size, size, (3, 2))

    def doubled_area(t: np.ndarray) -> float:
        (ax, ay), (bx, by) = t[1] - t[0], t[2] - t[0]
        return float(abs(ax * by - ay * bx))

    while doubled_area(tri) < 0.2 * size * size:
        tri = centre + rng.uniform(-size, size, (3, 2))
    w = rng.dirichlet([1.0, 1.0, 1.0]) * 0.9 + 0.1 / 3
    inside = w @ tri
    ring = np.array([tri[0], tri[1], tri[2], inside])
    ring = np.roll(ring, int(rng.integers(4)), axis=0)
    if rng.random() < 0.5:
        ring = ring[::-1]
    return ring.reshape(8)


def _convex(rng: np.random.Generator, centre: np.ndarray, size: float) -> np.ndarray:
    """Four points in angular order on an ellipse (one per quadrant): convex."""
    angles = np.arange(4) * np.pi / 2 + rng.uniform(0, np.pi / 2, 4)
    axes = rng.uniform(0.4, 1.0, 2) * size
    return (centre + np.column_stack([np.cos(angles), np.sin(angles)]) * axes).reshape(8)


def _mixed(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        centre = rng.uniform(0, 30, 2)
        size = rng.uniform(3, 15)
        out.append(_dart(rng, centre, size) if i % 3 else _convex(rng, centre, size))
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_pairwise_matches_shapely(seed: int) -> None:
    a, b = _mixed(seed, 30), _mixed(seed + 100, 25)
    got = rotated_box_iou(a, b, fmt="xyxyxyxy")
    want = np.array([[_shapely_iou(p, q) for q in b] for p in a])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    assert (want > 0.05).sum() > 20  # the sets do overlap
    np.testing.assert_array_equal(got, rotated_box_iou(b, a, fmt="xyxyxyxy").T)


def test_elementwise_and_identical() -> None:
    a = _mixed(11, 40)
    np.testing.assert_array_equal(rotated_box_iou_elementwise(a, a, fmt="xyxyxyxy"), 1.0)
    b = a + 0.75
    want = [_shapely_iou(p, q) for p, q in zip(a, b, strict=True)]
    got = rotated_box_iou_elementwise(a, b, fmt="xyxyxyxy")
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


def test_same_dart_in_every_listing_is_the_same_polygon() -> None:
    rng = np.random.default_rng(3)
    dart = _dart(rng, np.array([10.0, 10.0]), 8.0).reshape(4, 2)
    listings = [np.roll(dart, k, axis=0) for k in range(4)]
    listings += [ring[::-1] for ring in listings]
    flat = np.array([r.reshape(8) for r in listings])
    np.testing.assert_allclose(rotated_box_iou(flat, flat, fmt="xyxyxyxy"), 1.0, rtol=1e-13)


def test_a_known_dart() -> None:
    # the square [0, 4]^2 with its corner (4, 4) pushed in to (1, 1): area 4
    dart = np.array([[0, 0, 4, 0, 1, 1, 0, 4]], dtype=float)
    square = np.array([[0, 0, 4, 0, 4, 4, 0, 4]], dtype=float)
    assert rotated_box_iou(dart, square, fmt="xyxyxyxy")[0, 0] == 0.25
    shifted = dart + np.array([2, 0, 2, 0, 2, 0, 2, 0])
    assert rotated_box_iou(dart, shifted, fmt="xyxyxyxy")[0, 0] == pytest.approx(
        _shapely_iou(dart[0], shifted[0]), rel=1e-14
    )


def test_self_intersecting_quadrilaterals_are_still_refused() -> None:
    bow_tie = [[0, 0, 2, 2, 0, 2, 2, 0]]
    with pytest.raises(BoxError, match=r"boxes1\[0\]: .*self-intersecting"):
        rotated_box_iou(bow_tie, [[0, 0, 1, 0, 1, 1, 0, 1]], fmt="xyxyxyxy")


def test_array_api_path_refuses_what_it_cannot_clip() -> None:
    torch = pytest.importorskip("torch")
    dart = torch.tensor([[0, 0, 4, 0, 1, 1, 0, 4]], dtype=torch.float64)
    with pytest.raises(BoxError, match=r"boxes1\[0\]: .*not convex is computed on NumPy"):
        rotated_box_iou(dart, dart, fmt="xyxyxyxy")


def test_rotated_nms_with_darts_matches_a_shapely_greedy_loop() -> None:
    boxes = _mixed(21, 60)
    scores = np.random.default_rng(21).random(60)
    order = np.argsort(-scores, kind="stable")
    removed = np.zeros(60, dtype=bool)
    kept = []
    for i in order:
        if removed[i]:
            continue
        kept.append(int(i))
        for j in order:
            if not removed[j] and j != i and _shapely_iou(boxes[i], boxes[j]) > 0.3:
                removed[j] = True
    got = rotated_nms(boxes, scores, iou_threshold=0.3, fmt="xyxyxyxy")
    assert got.tolist() == kept
