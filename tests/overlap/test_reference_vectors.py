"""Published vectors of torchvision and torchmetrics, and REFERENCE.md's golden CIoU vector."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit
from tests.conftest import Backend, load_conformance

TV = load_conformance("torchvision_box_ops.json")
TM = load_conformance("torchmetrics/iou_family_doctests.json")

PAIRWISE = {
    "box_iou": ioukit.box_iou,
    "generalized_box_iou": ioukit.generalized_box_iou,
    "distance_box_iou": ioukit.distance_box_iou,
    "complete_box_iou": ioukit.complete_box_iou,
}
LOSSES = {
    "generalized_box_iou_loss": ioukit.generalized_box_iou_loss,
    "distance_box_iou_loss": ioukit.distance_box_iou_loss,
    "complete_box_iou_loss": ioukit.complete_box_iou_loss,
}


@pytest.mark.parametrize("name", list(PAIRWISE))
@pytest.mark.parametrize("dtype", ["int16", "int32", "int64"])
def test_torchvision_int_case(name: str, dtype: str, backend: Backend) -> None:
    case = TV["pairwise"][name]["int_case"]
    b1 = backend.asarray(TV["inputs"][case["boxes1"]], dtype)
    b2 = backend.asarray(TV["inputs"][case["boxes2"]], dtype)
    result = PAIRWISE[name](b1, b2)
    assert backend.is_native(result)
    got = backend.to_numpy(result)
    np.testing.assert_allclose(got, case["expected"], atol=case["atol"], rtol=0)
    np.testing.assert_allclose(got, case["collector_float64_recomputation"], atol=1e-6, rtol=0)


@pytest.mark.parametrize("name", list(PAIRWISE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torchvision_float_case(name: str, dtype: str, backend: Backend) -> None:
    case = TV["pairwise"][name]["float_case"]
    boxes = backend.asarray(TV["inputs"]["FLOAT_BOXES"], dtype)
    got = backend.to_numpy(PAIRWISE[name](boxes, boxes))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, case["expected"], atol=case["dtypes_atol"][dtype], rtol=0)
    tight = 1e-5 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(got, case["collector_float64_recomputation"], atol=tight, rtol=0)


def test_torchvision_float16_inputs_are_computed_in_float32() -> None:
    boxes = np.asarray(TV["inputs"]["FLOAT_BOXES"], dtype=np.float16)
    got = ioukit.box_iou(boxes, boxes)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, TV["pairwise"]["box_iou"]["float_case"]["expected"], atol=2e-3)


@pytest.mark.parametrize("name", list(LOSSES))
def test_torchvision_losses(name: str, backend: Backend) -> None:
    boxes = TV["losses"]["boxes"]
    for case in TV["losses"][name]:
        a = backend.asarray(boxes[case["a"]])
        b = backend.asarray(boxes[case["b"]])
        got = backend.to_numpy(LOSSES[name](a, b, reduction=case["reduction"]))
        np.testing.assert_allclose(got, case["expected"], atol=1e-4, rtol=0)
        np.testing.assert_allclose(got, case["collector_float64_recomputation"], atol=1e-6)


def test_torchvision_box_area_and_convert() -> None:
    area = TV["box_area"]
    for dtype in area["int"]["dtypes"]:
        got = ioukit.box_area(np.asarray(area["int"]["boxes"], dtype=dtype))
        np.testing.assert_allclose(got, area["int"]["expected"], atol=1e-4)
    floats = np.asarray(TV["inputs"]["FLOAT_BOXES"])
    np.testing.assert_allclose(ioukit.box_area(floats), area["float"]["expected"], atol=1e-4)
    conv = TV["box_convert"]
    for src in ("xyxy", "xywh", "cxcywh"):
        for dst in ("xyxy", "xywh", "cxcywh"):
            got = ioukit.box_convert(np.asarray(conv[src], dtype=np.float32), src, dst)
            np.testing.assert_array_equal(got, np.asarray(conv[dst], dtype=np.float32))


TM_FUNCS = {
    "intersection_over_union": ioukit.box_iou,
    "generalized_intersection_over_union": ioukit.generalized_box_iou,
    "distance_intersection_over_union": ioukit.distance_box_iou,
    "complete_intersection_over_union": ioukit.complete_box_iou,
}


@pytest.mark.parametrize("name", list(TM_FUNCS))
def test_torchmetrics_doctest_matrices(name: str) -> None:
    inputs = TM["functional"]
    result = TM["functional"]["results"][name]
    matrix = TM_FUNCS[name](np.asarray(inputs["preds"]), np.asarray(inputs["target"]))
    np.testing.assert_allclose(matrix, result["published_matrix_aggregate_false"], atol=5e-5)
    np.testing.assert_allclose(matrix, result["collector_float64"]["matrix"], atol=1e-9)
    assert float(np.mean(np.diag(matrix))) == pytest.approx(result["published_aggregate"], abs=5e-5)


def test_reference_golden_vector_ciou() -> None:
    """REFERENCE.md 3.8: A=[0,0,10,10], B=[2,2,12,8]; torchvision and Ultralytics agree."""
    a, b = [[0.0, 0, 10, 10]], [[2.0, 2, 12, 8]]
    assert float(ioukit.box_iou(a, b)[0, 0]) == pytest.approx(48 / 112, abs=1e-10)
    assert float(ioukit.generalized_box_iou(a, b)[0, 0]) == pytest.approx(0.3619047619, abs=1e-10)
    assert float(ioukit.distance_box_iou(a, b)[0, 0]) == pytest.approx(0.4121779859, abs=1e-9)
    assert float(ioukit.complete_box_iou(a, b)[0, 0]) == pytest.approx(0.4111849423, abs=1e-9)
