"""Every error path of the IoU family names the argument, what was expected and what arrived."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (
            [1, 2, 3],
            [0, 0, 1, 1],
            r"box_a: expected exactly 4 coordinates, got 3 values: \[1, 2, 3\]",
        ),
        ([0, 0, 1, 1], [0, 0, 1, 1, 5], r"box_b: expected exactly 4 coordinates, got 5 values"),
        (
            [5, 0, 1, 1],
            [0, 0, 1, 1],
            r"box_a: invalid xyxy box \[5.0, 0.0, 1.0, 1.0\]: x2 < x1 or y2 < y1",
        ),
        (
            [0, 0, 1, 1],
            [0, 0, 1, float("nan")],
            r"box_b: invalid xyxy box \[0.0, 0.0, 1.0, nan\]: a NaN",
        ),
        ([0, 0, 1, 1], [0, 0, float("inf"), 1], r"box_b: .*a NaN or infinite coordinate"),
        (["x", 0, 1, 1], [0, 0, 1, 1], r"box_a: expected 4 numbers, got \['x', 0, 1, 1\]"),
        ([[0, 0, 1, 1]], [0, 0, 1, 1], r"box_a: expected exactly 4 coordinates, got 4 values"),
    ],
)
def test_iou_of_two_boxes_errors(a: object, b: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ioukit.iou(a, b)


def test_iou_bad_format() -> None:
    with pytest.raises(
        ValueError, match=r"fmt: expected one of 'xyxy', 'xywh', 'cxcywh', got 'xyhw'"
    ):
        ioukit.iou([0, 0, 1, 1], [0, 0, 1, 1], fmt="xyhw")
    with pytest.raises(
        ValueError, match=r"box_a: invalid xywh box \[0.0, 0.0, -1.0, 1.0\]: negative width"
    ):
        ioukit.iou([0, 0, -1, 1], [0, 0, 1, 1], fmt="xywh")


def test_pairwise_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"boxes1: expected shape \(N, 4\), got \(4,\)"):
        ioukit.box_iou([0, 0, 1, 1], [[0, 0, 1, 1]])
    with pytest.raises(ValueError, match=r"boxes2: expected shape \(N, 4\), got \(1, 2, 4\)"):
        ioukit.box_iou([[0, 0, 1, 1]], np.zeros((1, 2, 4)))
    with pytest.raises(ValueError, match=r"boxes2\[1\]: invalid xyxy box"):
        ioukit.generalized_box_iou([[0, 0, 1, 1]], [[0, 0, 1, 1], [3, 3, 2, 2]])


def test_elementwise_shapes_must_broadcast() -> None:
    with pytest.raises(
        ValueError, match=r"boxes1 and boxes2: expected aligned shapes .* got \(2, 4\) and \(3, 4\)"
    ):
        ioukit.box_iou_elementwise(np.zeros((2, 4)), np.zeros((3, 4)))


def test_loss_reduction_error() -> None:
    with pytest.raises(ValueError, match=r"reduction: expected 'none', 'mean' or 'sum', got 'xyz'"):
        ioukit.generalized_box_iou_loss([[0, 0, 1, 1]], [[0, 0, 1, 1]], reduction="xyz")  # type: ignore[arg-type]


def test_mixing_array_libraries_is_refused() -> None:
    with pytest.raises(TypeError, match=r"arrays from different libraries cannot be mixed"):
        ioukit.box_iou(
            torch.zeros((1, 4)), __import__("array_api_strict").asarray(np.zeros((1, 4)))
        )


def test_numpy_and_torch_mix_converts_numpy_side() -> None:
    out = ioukit.box_iou(torch.tensor([[0.0, 0, 2, 2]]), np.array([[1.0, 1, 3, 3]]))
    assert torch.is_tensor(out) and out.dtype == torch.float64


def test_torch_cpu_tensors_are_validated() -> None:
    with pytest.raises(ValueError, match=r"boxes1\[0\]: invalid xyxy box"):
        ioukit.box_iou(torch.tensor([[2.0, 0, 1, 1]], requires_grad=True), torch.zeros((1, 4)))
