"""Box formats, normalisation, area, clipping and validation."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit
from ioukit.errors import BoxError
from tests.conftest import Backend


def test_convert_on_every_backend(backend: Backend) -> None:
    boxes = backend.asarray([[10, 20, 30, 60]])
    xywh = backend.to_numpy(ioukit.box_convert(boxes, "xyxy", "xywh"))
    cxcywh = backend.to_numpy(ioukit.box_convert(boxes, "xyxy", "cxcywh"))
    np.testing.assert_array_equal(xywh, [[10, 20, 20, 40]])
    np.testing.assert_array_equal(cxcywh, [[20, 40, 20, 40]])
    back = ioukit.box_convert(backend.asarray(cxcywh), "cxcywh", "xywh")
    assert backend.is_native(back)
    np.testing.assert_array_equal(backend.to_numpy(back), xywh)


def test_yolo_normalized_to_pixels_and_back() -> None:
    yolo = np.array([[0.5, 0.5, 0.25, 0.5], [0.1, 0.2, 0.2, 0.2]])
    pixels = ioukit.box_convert(yolo, "cxcywh", "xyxy", image_size=(640, 480))
    np.testing.assert_allclose(pixels, [[240, 120, 400, 360], [0, 48, 128, 144]])
    again = ioukit.box_convert(pixels, "xyxy", "cxcywh", image_size=(640, 480), normalized="output")
    np.testing.assert_allclose(again, yolo)
    np.testing.assert_allclose(
        ioukit.normalize_boxes(ioukit.denormalize_boxes(yolo, (640, 480)), (640, 480)), yolo
    )


def test_box_area_formats_and_batched_shapes() -> None:
    assert ioukit.box_area([[0, 0, 2, 3]]).tolist() == [6.0]
    assert ioukit.box_area([[5, 5, 2, 3]], fmt="xywh").tolist() == [6.0]
    assert ioukit.box_area([[5, 5, 2, 3]], fmt="cxcywh").tolist() == [6.0]
    assert ioukit.box_area(np.zeros((2, 3, 4))).shape == (2, 3)


def test_clip_boxes_keeps_format() -> None:
    clipped = ioukit.clip_boxes([[-10, -10, 30, 30]], (20, 25), fmt="xywh")
    np.testing.assert_array_equal(clipped, [[0, 0, 20, 20]])


def test_inputs_are_not_mutated() -> None:
    boxes = np.array([[10.0, 20.0, 30.0, 40.0]])
    before = boxes.copy()
    ioukit.box_convert(boxes, "xywh", "xyxy")
    ioukit.clip_boxes(boxes, (15, 15))
    ioukit.normalize_boxes(boxes, (100, 100))
    np.testing.assert_array_equal(boxes, before)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: ioukit.box_convert([[1, 2, 3]], "xyxy", "xywh"),
            r"boxes: expected shape \(\.\.\., 4\), got \(1, 3\)",
        ),
        (
            lambda: ioukit.box_convert([[0, 0, 1, 1]], "xyxy", "yolo"),
            r"out_fmt: expected one of 'xyxy', 'xywh', 'cxcywh', got 'yolo'",
        ),
        (lambda: ioukit.box_convert([[0, 0, 1, 1]], "ltrb", "xyxy"), r"in_fmt: expected one of"),
        (
            lambda: ioukit.box_convert([[0, 0, -1, 1]], "xywh", "xyxy"),
            r"boxes\[0\]: invalid xywh box \[0.0, 0.0, -1.0, 1.0\]: negative width or height",
        ),
        (
            lambda: ioukit.box_area([[0, 0, 1, 1], [5, 0, 1, 1]]),
            r"boxes\[1\]: invalid xyxy box \[5.0, 0.0, 1.0, 1.0\]: x2 < x1 or y2 < y1",
        ),
        (
            lambda: ioukit.box_area([[0, 0, float("nan"), 1]]),
            r"boxes\[0\]: invalid xyxy box \[0.0, 0.0, nan, 1.0\]: a NaN or infinite coordinate",
        ),
        (lambda: ioukit.box_area([[0, 0, float("inf"), 1]]), r"a NaN or infinite coordinate"),
        (
            lambda: ioukit.box_area([["a", "b", "c", "d"]]),
            r"boxes: expected numbers, got dtype <U1",
        ),
        (
            lambda: ioukit.box_area([[0, 0, 1], [0, 0, 1, 1]]),
            r"boxes: expected an array of numbers with last axis 4",
        ),
        (
            lambda: ioukit.clip_boxes([[0, 0, 1, 1]], (0, 10)),
            r"image_size: expected positive finite \(width, height\), got \(0, 10\)",
        ),
        (
            lambda: ioukit.box_convert([[0, 0, 1, 1]], "xyxy", "xywh", image_size=(10,)),
            r"image_size: expected \(width, height\)",
        ),
        (
            lambda: ioukit.box_convert(
                [[0, 0, 1, 1]], "xyxy", "xywh", image_size=(10, 10), normalized="both"
            ),
            r"normalized: expected 'input' or 'output', got 'both'",
        ),
    ],
)
def test_bad_boxes_raise_clear_errors(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()


def test_box_error_is_a_value_error_and_ioukit_error() -> None:
    with pytest.raises(BoxError):
        ioukit.box_iou([[0, 0, 1, 1]], [[1, 1, 0, 0]])
    assert issubclass(BoxError, ValueError) and issubclass(BoxError, ioukit.IoukitError)
