"""Rotated box formats in box_convert: torchvision's definitions, angle conventions, envelopes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ioukit import BoxError, box_convert
from tests.conftest import Backend


def sample(seed: int = 0, n: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [
            rng.uniform(-50, 50, size=(n, 2)),
            rng.uniform(0.5, 30, size=(n, 2)),
            rng.uniform(-179, 179, size=(n, 1)),
        ],
        axis=1,
    )


def torchvision_formulas(torch: object, boxes: object, pair: tuple[str, str]) -> object:
    """torchvision.ops._box_convert's rotated conversions, written as torchvision writes them."""
    t = torch  # type: ignore[assignment]

    def cxcywhr_to_xywhr(b: object) -> object:
        cx, cy, w, h, r = b.unbind(-1)  # type: ignore[attr-defined]
        r_rad = r * t.pi / 180.0  # type: ignore[attr-defined]
        cos, sin = t.cos(r_rad), t.sin(r_rad)  # type: ignore[attr-defined]
        x1 = cx - w / 2 * cos - h / 2 * sin
        y1 = cy - h / 2 * cos + w / 2 * sin
        return t.stack((x1, y1, w, h, r), dim=-1)  # type: ignore[attr-defined]

    def xywhr_to_xyxyxyxy(b: object) -> object:
        x1, y1, w, h, r = b.unbind(-1)  # type: ignore[attr-defined]
        r_rad = r * t.pi / 180.0  # type: ignore[attr-defined]
        cos, sin = t.cos(r_rad), t.sin(r_rad)  # type: ignore[attr-defined]
        x3 = x1 + w * cos
        y3 = y1 - w * sin
        x2 = x3 + h * sin
        y2 = y3 + h * cos
        x4 = x1 + h * sin
        y4 = y1 + h * cos
        return t.stack((x1, y1, x3, y3, x2, y2, x4, y4), dim=-1)  # type: ignore[attr-defined]

    def xyxyxyxy_to_xywhr(b: object) -> object:
        x1, y1, x3, y3, x2, y2, _x4, _y4 = b.unbind(-1)  # type: ignore[attr-defined]
        r = t.atan2(y1 - y3, x3 - x1) * 180 / t.pi  # type: ignore[attr-defined]
        w = ((x3 - x1) ** 2 + (y1 - y3) ** 2).sqrt()
        h = ((x3 - x2) ** 2 + (y3 - y2) ** 2).sqrt()
        return t.stack((x1, y1, w, h, r), dim=-1)  # type: ignore[attr-defined]

    if pair == ("cxcywhr", "xywhr"):
        return cxcywhr_to_xywhr(boxes)
    if pair == ("cxcywhr", "xyxyxyxy"):
        return xywhr_to_xyxyxyxy(cxcywhr_to_xywhr(boxes))
    if pair == ("xywhr", "xyxyxyxy"):
        return xywhr_to_xyxyxyxy(boxes)
    if pair == ("xyxyxyxy", "xywhr"):
        return xyxyxyxy_to_xywhr(boxes)
    raise AssertionError(pair)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "pair",
    [("cxcywhr", "xywhr"), ("cxcywhr", "xyxyxyxy"), ("xywhr", "xyxyxyxy"), ("xyxyxyxy", "xywhr")],
)
def test_torchvision_bit_for_bit(pair: tuple[str, str], dtype: str) -> None:
    torch = pytest.importorskip("torch")
    boxes = sample()
    if pair[0] == "xyxyxyxy":
        boxes = box_convert(boxes, "cxcywhr", "xyxyxyxy")
    tensor = torch.asarray(boxes.astype(dtype))
    want = torchvision_formulas(torch, tensor, pair)
    got = box_convert(tensor, *pair)
    assert got.dtype == tensor.dtype
    assert torch.equal(got, want)  # type: ignore[arg-type]
    # NumPy's cos/sin may differ from torch's by an ulp (float32 SIMD paths)
    np.testing.assert_allclose(
        box_convert(boxes.astype(dtype), *pair),
        want.numpy(),  # type: ignore[attr-defined]
        rtol=1e-6 if dtype == "float32" else 1e-13,
        atol=1e-4 if dtype == "float32" else 1e-11,
    )


def test_round_trips(backend: Backend) -> None:
    boxes = sample(1)
    x = backend.asarray(boxes)
    for fmt in ("xywhr", "xyxyxyxy"):
        there = box_convert(x, "cxcywhr", fmt)
        back = backend.to_numpy(box_convert(there, fmt, "cxcywhr"))
        np.testing.assert_allclose(back, boxes, rtol=0, atol=1e-9)


def test_corner_layout() -> None:
    corners = box_convert([[10, 20, 4, 2, 0]], "cxcywhr", "xyxyxyxy")
    np.testing.assert_array_equal(corners, [[8, 19, 12, 19, 12, 21, 8, 21]])
    assert box_convert([[8, 19, 4, 2, 0]], "xywhr", "cxcywhr").tolist() == [[10, 20, 4, 2, 0]]


def test_angle_conventions() -> None:
    boxes = sample(2)
    default = box_convert(boxes, "cxcywhr", "xyxyxyxy")
    mm = boxes.copy()
    mm[:, 4] = -np.radians(boxes[:, 4])
    np.testing.assert_allclose(
        box_convert(mm, "cxcywhr", "xyxyxyxy", angle_unit="radians", clockwise=True),
        default,
        atol=1e-9,
    )
    cw_deg = boxes.copy()
    cw_deg[:, 4] = -boxes[:, 4]
    np.testing.assert_allclose(
        box_convert(cw_deg, "cxcywhr", "xyxyxyxy", clockwise=True), default, atol=1e-12
    )
    # output angles follow the convention too
    back = box_convert(default, "xyxyxyxy", "cxcywhr", angle_unit="radians", clockwise=True)
    np.testing.assert_allclose(back, mm, atol=1e-9)


def test_ultralytics_corner_formula() -> None:
    # Ultralytics xywhr2xyxyxyxy: vec1 = (w/2 cos, w/2 sin), vec2 = (-h/2 sin, h/2 cos)
    cx, cy, w, h, r = 100.0, 50.0, 40.0, 10.0, 0.3
    c, s = math.cos(r), math.sin(r)
    v1, v2 = (w / 2 * c, w / 2 * s), (-h / 2 * s, h / 2 * c)
    ultra = {
        (cx + v1[0] + v2[0], cy + v1[1] + v2[1]),
        (cx + v1[0] - v2[0], cy + v1[1] - v2[1]),
        (cx - v1[0] - v2[0], cy - v1[1] - v2[1]),
        (cx - v1[0] + v2[0], cy - v1[1] + v2[1]),
    }
    ours = box_convert(
        [[cx, cy, w, h, r]], "cxcywhr", "xyxyxyxy", angle_unit="radians", clockwise=True
    )[0].reshape(4, 2)
    for point in ours:
        assert min(math.dist(point, u) for u in ultra) < 1e-9


def test_envelope_and_axis_aligned() -> None:
    env = box_convert([[0, 0, 2, 2, 45]], "cxcywhr", "xyxy")
    np.testing.assert_allclose(env, [[-math.sqrt(2), -math.sqrt(2), math.sqrt(2), math.sqrt(2)]])
    np.testing.assert_allclose(
        box_convert([[0, 0, 4, 2, 90]], "cxcywhr", "xywh"), [[-1, -2, 2, 4]], atol=1e-12
    )
    np.testing.assert_array_equal(box_convert([[1, 2, 5, 6]], "xyxy", "cxcywhr"), [[3, 4, 4, 4, 0]])
    np.testing.assert_array_equal(box_convert([[1, 2, 5, 6]], "xyxy", "xywhr"), [[1, 2, 4, 4, 0]])
    np.testing.assert_array_equal(
        box_convert([[1, 2, 4, 4]], "xywh", "xyxyxyxy"), [[1, 2, 5, 2, 5, 6, 1, 6]]
    )


def test_normalized_corners() -> None:
    corners = [[0.1, 0.2, 0.5, 0.2, 0.5, 0.6, 0.1, 0.6]]
    pixels = box_convert(corners, "xyxyxyxy", "cxcywhr", image_size=(100, 50))
    np.testing.assert_allclose(pixels, [[30, 20, 40, 20, 0]], atol=1e-12)
    again = box_convert(pixels, "cxcywhr", "xyxyxyxy", image_size=(100, 50), normalized="output")
    np.testing.assert_allclose(again, corners, atol=1e-12)
    with pytest.raises(ValueError, match="angle cannot be normalized"):
        box_convert([[0.5, 0.5, 0.1, 0.1, 0]], "cxcywhr", "xyxy", image_size=(10, 10))


def test_shapes_and_empty() -> None:
    assert box_convert(np.zeros((0, 5)), "cxcywhr", "xyxyxyxy").shape == (0, 8)
    assert box_convert(np.zeros((2, 3, 5)), "xywhr", "cxcywhr").shape == (2, 3, 5)


@pytest.mark.parametrize(
    ("boxes", "fmt", "match"),
    [
        ([[0, 0, 1, 1, math.nan]], "cxcywhr", r"boxes\[0\]: invalid cxcywhr box .* NaN"),
        ([[0, 0, -1, 1, 0]], "xywhr", "negative width or height"),
        ([[0, 0, 1, 1]], "cxcywhr", r"expected shape \(\.\.\., 5\)"),
        ([[0, 0, 1, 1, 0]], "xyxyxyxy", r"expected shape \(\.\.\., 8\)"),
    ],
)
def test_bad_rotated_boxes(boxes: list[list[float]], fmt: str, match: str) -> None:
    with pytest.raises(BoxError, match=match):
        box_convert(boxes, fmt, "xyxy")


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="angle_unit"):
        box_convert([[0, 0, 1, 1, 0]], "cxcywhr", "xywhr", angle_unit="grad")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out_fmt"):
        box_convert([[0, 0, 1, 1, 0]], "cxcywhr", "xyxyr")


def test_input_not_modified() -> None:
    boxes = sample(3)
    before = boxes.copy()
    for fmt in ("xywhr", "xyxyxyxy", "xyxy"):
        box_convert(boxes, "cxcywhr", fmt)
    np.testing.assert_array_equal(boxes, before)
