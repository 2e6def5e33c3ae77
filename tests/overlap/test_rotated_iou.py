"""Rotated IoU: the compiled kernel against its Python twin (bit for bit), shapely (1e-9), the
published vectors of mmcv and detectron2, the bug-report pairs, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ioukit import BoxError, box_convert
from ioukit.overlap.rotated import (
    rotated_box_iou,
    rotated_box_iou_elementwise,
    rotated_box_iou_loss,
)
from ioukit.synthetic import make_rotated_boxes
from tests.conftest import load_conformance
from tests.rotated_oracle import pair_iou

shapely = pytest.importorskip("shapely")


def random_boxes(rng: np.random.Generator, n: int, spread: float = 20.0) -> np.ndarray:
    """cxcywhr boxes (degrees) clustered so that many pairs overlap."""
    return make_rotated_boxes(n, centre=(0, spread), size=(0.5, 15), angle=(-180, 180), seed=rng)


def shapely_iou(
    corners1: np.ndarray, corners2: np.ndarray, grid_size: float | None = None
) -> np.ndarray:
    p1 = shapely.polygons(corners1.reshape(-1, 4, 2))
    p2 = shapely.polygons(corners2.reshape(-1, 4, 2))
    a, b = np.meshgrid(np.arange(len(p1)), np.arange(len(p2)), indexing="ij")
    inter = shapely.area(shapely.intersection(p1[a], p2[b], grid_size=grid_size))
    union = shapely.area(p1)[a] + shapely.area(p2)[b] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


# ------------------------------------------------------------------------ kernel == oracle


def test_kernel_is_bit_identical_to_python_twin() -> None:
    rng = np.random.default_rng(0)
    b1, b2 = random_boxes(rng, 40), random_boxes(rng, 30)
    b1[:5] = b2[:5]  # identical pairs
    b1[5:8] = b2[5:8] + rng.normal(0, 1e-9, size=(3, 5))  # near-identical
    got = rotated_box_iou(b1, b2)
    c1 = box_convert(b1, "cxcywhr", "xyxyxyxy")
    c2 = box_convert(b2, "cxcywhr", "xyxyxyxy")
    want = np.array([[pair_iou(p, q) for q in c2] for p in c1])
    np.testing.assert_array_equal(got, want)


def test_threads_do_not_change_the_result() -> None:
    from ioukit._kernels import rotated as kernels
    from ioukit._rotated_corners import host64, prepare_corners

    rng = np.random.default_rng(1)
    b1, b2 = random_boxes(rng, 33), random_boxes(rng, 17)
    import array_api_compat.numpy as xp

    c1, d1 = prepare_corners(b1, "boxes1", "cxcywhr", "degrees", False, xp, np.float64, 2)
    c2, d2 = prepare_corners(b2, "boxes2", "cxcywhr", "degrees", False, xp, np.float64, 2)
    serial = kernels.pairwise(*host64(c1, d1), *host64(c2, d2), threads=False)
    threaded = kernels.pairwise(*host64(c1, d1), *host64(c2, d2), threads=True)
    np.testing.assert_array_equal(serial, threaded)


@pytest.mark.parametrize(("n", "m"), [(0, 0), (0, 3), (3, 0), (1, 1), (1, 7), (7, 1), (5, 9)])
def test_shapes_including_empty(n: int, m: int) -> None:
    rng = np.random.default_rng(n * 10 + m)
    b1, b2 = random_boxes(rng, n).reshape(n, 5), random_boxes(rng, m).reshape(m, 5)
    got = rotated_box_iou(b1, b2)
    assert got.shape == (n, m)
    assert got.dtype == np.float64
    for i in range(n):
        np.testing.assert_array_equal(got[i], rotated_box_iou_elementwise(b1[i], b2))


def test_pairwise_is_symmetric_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    b = random_boxes(rng, 50)
    iou = rotated_box_iou(b, b)
    np.testing.assert_array_equal(iou, iou.T)
    np.testing.assert_array_equal(np.diag(iou), np.ones(50))


# --------------------------------------------------------------------------- against shapely


@pytest.mark.parametrize("seed", range(4))
def test_matches_shapely_to_1e9(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    b1, b2 = random_boxes(rng, 60), random_boxes(rng, 50)
    got = rotated_box_iou(b1, b2)
    want = shapely_iou(
        box_convert(b1, "cxcywhr", "xyxyxyxy"), box_convert(b2, "cxcywhr", "xyxyxyxy")
    )
    assert (want > 0).mean() > 0.2  # the test exercises real overlaps
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_quadrilaterals_match_shapely() -> None:
    rng = np.random.default_rng(7)
    # random convex quadrilaterals: 4 sorted angles on an ellipse, jittered radius
    n = 80
    angles = np.sort(rng.uniform(0, 2 * np.pi, size=(n, 4)), axis=1)
    radius = rng.uniform(2, 10, size=(n, 1))
    centre = rng.uniform(0, 12, size=(n, 2))
    quads = np.stack(
        [centre[:, :1] + radius * np.cos(angles), centre[:, 1:] + radius * np.sin(angles)], -1
    ).reshape(n, 8)
    got = rotated_box_iou(quads[:40], quads[40:], fmt="xyxyxyxy")
    want = shapely_iou(quads[:40], quads[40:])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # clockwise corner order is the same quadrilateral
    reverse = quads[:40].reshape(40, 4, 2)[:, ::-1].reshape(40, 8)
    np.testing.assert_allclose(
        rotated_box_iou(reverse, quads[40:], fmt="xyxyxyxy"), want, atol=1e-9
    )


def test_large_coordinates_keep_precision() -> None:
    b1 = np.array([[1e6 + 0.5, 2e6, 10, 4, 30]])
    b2 = np.array([[1e6, 2e6 + 0.25, 10, 4, 33]])
    shift = np.array([[1e6, 2e6, 0, 0, 0]])
    np.testing.assert_allclose(
        rotated_box_iou(b1, b2), rotated_box_iou(b1 - shift, b2 - shift), rtol=1e-9
    )


# ------------------------------------------------------------------------ exact special cases


def test_identical_boxes_are_exactly_one() -> None:
    rng = np.random.default_rng(3)
    b = random_boxes(rng, 200, spread=5000)
    b[:, 2:4] *= rng.uniform(0.001, 100, size=(200, 1))
    np.testing.assert_array_equal(rotated_box_iou_elementwise(b, b), np.ones(200))
    c = box_convert(b, "cxcywhr", "xyxyxyxy")
    np.testing.assert_array_equal(rotated_box_iou_elementwise(c, c, fmt="xyxyxyxy"), np.ones(200))


def test_zero_area_is_zero_never_nan() -> None:
    boxes = np.array([[0, 0, 0, 2, 0], [0, 0, 2, 0, 30], [0, 0, 0, 0, 0], [0, 0, 2, 2, 0]])
    iou = rotated_box_iou(boxes, boxes)
    expected = np.zeros((4, 4))
    expected[3, 3] = 1
    np.testing.assert_array_equal(iou, expected)
    flat = np.array([[0, 0, 1, 1, 2, 2, 3, 3.0]])  # collinear corners: zero area
    assert rotated_box_iou(flat, flat, fmt="xyxyxyxy")[0, 0] == 0


def test_touching_and_disjoint_boxes() -> None:
    a = [[0, 0, 2, 2, 0]]
    assert rotated_box_iou(a, [[2, 0, 2, 2, 0]])[0, 0] == 0  # shared edge
    assert rotated_box_iou(a, [[2, 2, 2, 2, 0]])[0, 0] == 0  # shared corner
    assert rotated_box_iou(a, [[10, 0, 2, 2, 45]])[0, 0] == 0


def test_axis_aligned_formats_agree_with_box_iou() -> None:
    from ioukit import box_iou

    rng = np.random.default_rng(4)
    xy = rng.uniform(0, 10, size=(30, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0.1, 5, size=(30, 2))], axis=1)
    np.testing.assert_allclose(
        rotated_box_iou(boxes, boxes[::-1], fmt="xyxy"), box_iou(boxes, boxes[::-1]), atol=1e-12
    )


def test_float32_in_float32_out() -> None:
    b = np.array([[0, 0, 2, 2, 0], [1, 0, 2, 2, 0]], dtype=np.float32)
    out = rotated_box_iou(b, b)
    assert out.dtype == np.float32
    assert out[0, 1] == np.float32(1 / 3)


# ------------------------------------------------------------- published vectors and reports


def test_mmcv_published_matrix() -> None:
    v = load_conformance("rotated/vectors.json")["mmcv"]
    got = rotated_box_iou(v["boxes1"], v["boxes2"], angle_unit="radians", clockwise=True)
    np.testing.assert_allclose(got, v["iou_published_atol_1e-4"], atol=1e-4)
    # the same boxes in ioukit's default convention (degrees, counter-clockwise)
    deg = np.array(v["boxes1"], dtype=float)
    deg[:, 4] = -np.degrees(deg[:, 4])
    deg2 = np.array(v["boxes2"], dtype=float)
    deg2[:, 4] = -np.degrees(deg2[:, 4])
    np.testing.assert_allclose(rotated_box_iou(deg, deg2), got, atol=1e-12)


def test_detectron2_cases() -> None:
    # orthogonal boxes of the same centre: 36 / 84
    iou = rotated_box_iou([[5, 5, 10, 6, 55]], [[5, 5, 10, 6, -35]])[0, 0]
    assert iou == pytest.approx(36 / 84, abs=1e-12)
    # half overlap of equal boxes, at any common angle
    for angle in (0, 30, 90, -45):
        a = [0, 0, 4, 2, angle]
        shift = 2 * math.cos(math.radians(angle)), -2 * math.sin(math.radians(angle))
        b = [shift[0] * 0.5 * 2, shift[1] * 0.5 * 2, 4, 2, angle]
        assert rotated_box_iou([a], [b])[0, 0] == pytest.approx(1 / 3, abs=1e-12)
        b = [shift[0] / 2, shift[1] / 2, 4, 2, angle]  # moved by a quarter of the width
        assert rotated_box_iou([a], [b])[0, 0] == pytest.approx(3 / 5, abs=1e-12)
    # 45 degrees: a square and the same square turned 45 degrees
    square = rotated_box_iou([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 45]])[0, 0]
    assert square == pytest.approx((8 * math.sqrt(2) - 8) / (8 - (8 * math.sqrt(2) - 8)), 1e-12)
    # detectron2 #1207: disjoint in detectron2's convention (0.2655 was returned)
    b1, b2 = [[160.0, 153.0, 230.0, 23.0, -37.0]], [[190.0, 127.0, 80.0, 21.0, -46.0]]
    assert rotated_box_iou(b1, b2)[0, 0] == 0.0
    assert rotated_box_iou(b1, b2, clockwise=True)[0, 0] > 0.2  # the other angle sense


def test_bug_report_pairs() -> None:
    v = load_conformance("rotated/vectors.json")["bug_reports_exact_answers"]
    # detectron2 #2167: detectron2 returned 0.5848
    d2167 = rotated_box_iou(
        [
            [
                2563.74462890625,
                1436.7901611328125,
                2174.703369140625,
                214.09500122070312,
                115.11834716796875,
            ]
        ],
        [
            [
                2563.74462890625,
                1436.790283203125,
                2174.702880859375,
                214.0949554443359375,
                115.11835479736328125,
            ]
        ],
    )[0, 0]
    assert d2167 == pytest.approx(0.9999989956679833, abs=1e-12)
    assert f"{d2167:.8f}" in v["detectron2 #2167"]
    # detectron2 #2154: 0.600224 was returned. In detectron2's convention (counter-clockwise)
    # the exact value is 0.99999889235; the collector's 0.99999889060 is the same pair read
    # clockwise (mmcv's sense). Both agree with shapely.
    dt = [
        [
            296.6620178222656,
            458.73883056640625,
            23.515729904174805,
            47.677001953125,
            0.08795166015625,
        ]
    ]
    gt = [[296.66201, 458.73882000000003, 23.51573, 47.67702, 0.087951]]
    assert rotated_box_iou(dt, gt)[0, 0] == pytest.approx(0.9999988923488956, abs=1e-12)
    d2154 = rotated_box_iou(dt, gt, clockwise=True)[0, 0]
    assert d2154 == pytest.approx(0.9999988905973366, abs=1e-12)
    assert f"{d2154:.8f}" in v["detectron2 #2154"]
    # mmcv #2621: identical boxes, 0.333 was returned
    box = [[0.0, 0.0, 180.6422271729, 136.3633728027, 0.9559648633]]
    assert rotated_box_iou(box, box, angle_unit="radians", clockwise=True)[0, 0] == 1.0
    # detectron2 #4961: disjoint boxes, 0.3688 was returned
    b1 = [[1010.5, 860.00012207, 12.20655537, 48.82622528, 55.00798035]]
    b2 = [[1022, 870.49993896, 10.81665134, 43.26660919, 56.30992889]]
    want = shapely_iou(
        box_convert(b1, "cxcywhr", "xyxyxyxy"), box_convert(b2, "cxcywhr", "xyxyxyxy")
    )
    assert rotated_box_iou(b1, b2)[0, 0] == pytest.approx(want[0, 0], abs=1e-12)


def test_near_identical_boxes_are_close_to_one() -> None:
    rng = np.random.default_rng(5)
    b = random_boxes(rng, 300, spread=3000)
    b[:, 2:4] += 20
    near = b * (1 + rng.normal(0, 1e-8, size=b.shape))
    iou = rotated_box_iou_elementwise(b, near)
    assert (iou > 0.9999).all()
    c1, c2 = box_convert(b, "cxcywhr", "xyxyxyxy"), box_convert(near, "cxcywhr", "xyxyxyxy")
    want = np.array([shapely_iou(c1[i : i + 1], c2[i : i + 1])[0, 0] for i in range(300)])
    np.testing.assert_allclose(iou, want, atol=1e-9)


# -------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("box", "fmt", "message"),
    [
        ([0, 0, 2, 2, math.nan], "cxcywhr", r"boxes1\[0\]: invalid cxcywhr box .*NaN"),
        ([0, 0, 2, 2, math.inf], "cxcywhr", "NaN or infinite"),
        ([0, 0, -2, 2, 0], "xywhr", "negative width or height"),
        ([0, 0, 2, 2, 0, 2, 2, 0], "xyxyxyxy", "a self-intersecting quadrilateral"),  # bow tie
        ([0, 0, 2, 2, 0], "xyxyxyxy", r"expected shape \(N, 8\)"),
        ([0, 0, 2, 2], "cxcywhr", r"expected shape \(N, 5\)"),
    ],
)
def test_bad_input_raises_box_error(box: list[float], fmt: str, message: str) -> None:
    with pytest.raises(BoxError, match=message):
        rotated_box_iou([box], [box], fmt=fmt)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="angle_unit"):
        rotated_box_iou([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], angle_unit="turns")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fmt"):
        rotated_box_iou([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], fmt="xyxyr")
    with pytest.raises(ValueError, match="reduction"):
        rotated_box_iou_loss([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], reduction="avg")  # type: ignore[arg-type]


def test_inputs_are_not_modified() -> None:
    b = np.array([[0, 0, 2, 2, 10.0], [1, 1, 2, 3, 20.0]])
    before = b.copy()
    rotated_box_iou(b, b)
    rotated_box_iou_elementwise(b, b)
    np.testing.assert_array_equal(b, before)


# detectron2 tests/structures/test_rotated_boxes.py (facebookresearch/detectron2): the inputs
# and expected values of its rotated-IoU tests, float32 inputs as there, allclose as there.
DETECTRON2_CASES = {
    "half_overlap": ([[0.5, 0.5, 1.0, 1.0, 0.0]], [[0.25, 0.5, 0.5, 1.0, 0.0]], [[0.5]]),
    "precision": ([[565, 565, 10, 10.0, 0]], [[565, 565, 10, 8.3, 0]], [[8.3 / 10.0]]),
    "0_degree": (
        [[0.5, 0.5, 1.0, 1.0, 0.0], [0.5, 0.5, 1.0, 1.0, 0.0]],
        [
            [0.5, 0.5, 1.0, 1.0, 0.0],
            [0.25, 0.5, 0.5, 1.0, 0.0],
            [0.5, 0.25, 1.0, 0.5, 0.0],
            [0.25, 0.25, 0.5, 0.5, 0.0],
            [0.75, 0.75, 0.5, 0.5, 0.0],
            [1.0, 1.0, 1.0, 1.0, 0.0],
        ],
        [[1.0, 0.5, 0.5, 0.25, 0.25, 0.25 / (2 - 0.25)]] * 2,
    ),
    "45_degrees": (
        [[1, 1, math.sqrt(2), math.sqrt(2), 45], [1, 1, 2 * math.sqrt(2), 2 * math.sqrt(2), -45]],
        [[1, 1, 2, 2, 0]],
        [[0.5], [0.5]],
    ),
    "orthogonal": ([[5, 5, 10, 6, 55]], [[5, 5, 10, 6, -35]], [[36.0 / 84.0]]),
    "large_close_boxes": (
        [[299.500000, 417.370422, 600.000000, 364.259186, 27.1828]],
        [[299.500000, 417.370422, 600.000000, 364.259155, 27.1828]],
        [[364.259155 / 364.259186]],
    ),
    "issue1207_simplified": ([[3, 3, 8, 2, -45.0]], [[6, 0, 8, 2, -45.0]], [[0.0]]),
    "issue1207": (
        [[160.0, 153.0, 230.0, 23.0, -37.0]],
        [[190.0, 127.0, 80.0, 21.0, -46.0]],
        [[0.0]],
    ),
}


@pytest.mark.parametrize("case", sorted(DETECTRON2_CASES))
def test_detectron2_rotated_boxes_cases(case: str) -> None:
    b1, b2, expected = DETECTRON2_CASES[case]
    a = np.asarray(b1, dtype=np.float32)
    b = np.asarray(b2, dtype=np.float32)
    got = rotated_box_iou(a, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float32), rtol=1e-5, atol=1e-8)


def test_detectron2_many_boxes_and_extreme() -> None:
    n1, n2 = 100, 200
    b1 = np.array([[5 + 20 * i, 5 + 20 * i, 10, 10, 0] for i in range(n1)], dtype=np.float32)
    b2 = np.array(
        [[5 + 20 * i, 5 + 20 * i, 10, 1 + 9 * i / n2, 0] for i in range(n2)], dtype=np.float32
    )
    expected = np.zeros((n1, n2), dtype=np.float32)
    for i in range(n1):
        expected[i, i] = (1 + 9 * i / n2) / 10.0
    np.testing.assert_allclose(rotated_box_iou(b1, b2), expected, rtol=1e-5, atol=1e-8)
    # detectron2 #1266: coordinates around 1e18 broke its CUDA kernel
    extreme = np.array(
        [
            [
                -1.117407639806935e17,
                1.3858420478349148e18,
                1000.0000610351562,
                1000.0000610351562,
                1612.0,
            ]
        ],
        dtype=np.float32,
    )
    got = rotated_box_iou(np.array([[160.0, 153.0, 230.0, 23.0, -37.0]]), extreme)
    assert got[0, 0] == 0.0


# ------------------------------------------------------------------------ properties


def _box_strategy():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    coord = st.floats(-200, 200, allow_nan=False, allow_infinity=False)
    size = st.floats(0.01, 150, allow_nan=False, allow_infinity=False)
    angle = st.floats(-360, 360, allow_nan=False, allow_infinity=False)
    return st.tuples(coord, coord, size, size, angle)


def test_properties_against_shapely() -> None:
    from hypothesis import example, given, settings

    @settings(max_examples=300)
    @given(_box_strategy(), _box_strategy())
    # the two pairs shapely's floating overlay gets wrong (see below)
    @example((0, 90, 141, 127.5, 127.5), (0, 90, 122.5, 127.5, 127.5))
    @example(
        (120.41838935202361, 0.0, 62.375, 1.0, 120.41838935202361),
        (120.41838935202361, 0.0, 120.41838935202361, 1.0, 120.41838935202361),
    )
    def check(a: tuple[float, ...], b: tuple[float, ...]) -> None:
        iou = rotated_box_iou([a], [b])[0, 0]
        assert 0.0 <= iou <= 1.0
        assert rotated_box_iou([b], [a])[0, 0] == iou  # symmetric, bit for bit
        want = shapely_iou(
            box_convert([a], "cxcywhr", "xyxyxyxy"), box_convert([b], "cxcywhr", "xyxyxyxy")
        )[0, 0]
        if abs(iou - want) > 1e-9:
            # shapely 2.2's floating-point overlay returns an empty intersection for some pairs
            # of overlapping valid rectangles with shared centres or collinear edges (e.g.
            # (0, 90, 141, 127.5, 127.5) and (0, 90, 122.5, 127.5, 127.5); a thin box nested in
            # a longer one at the same centre and angle); ask it again with snap rounding on a
            # 1e-12 grid (GEOS OverlayNG), which is robust there and moves the IoU by ~1e-13
            want = shapely_iou(
                box_convert([a], "cxcywhr", "xyxyxyxy"),
                box_convert([b], "cxcywhr", "xyxyxyxy"),
                grid_size=1e-12,
            )[0, 0]
        assert abs(iou - want) <= 1e-9
        # moving both boxes together changes nothing but rounding
        shift = np.array([1234.5, -987.25, 0, 0, 0])
        moved = rotated_box_iou([np.add(a, shift)], [np.add(b, shift)])[0, 0]
        assert abs(moved - iou) <= 1e-9
        # turning both boxes by 90 degrees about the origin: (x, y) -> (y, -x), angle + 90
        turned_a = [a[1], -a[0], a[2], a[3], a[4] + 90]
        turned_b = [b[1], -b[0], b[2], b[3], b[4] + 90]
        assert abs(rotated_box_iou([turned_a], [turned_b])[0, 0] - iou) <= 1e-9

    check()
