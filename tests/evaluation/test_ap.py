"""AP formulas: golden vectors (REFERENCE 3.5/3.7), literal definitions, cross-identities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit.errors import DataFormatError
from ioukit.evaluation.ap import coco_interpolated_ap, ultralytics_ap, voc07_ap, voc10_ap
from tests.twins import trapezoid

CASES = {
    "TP,FP,TP,FP,TP/3": ([1, 0, 1, 0, 1], 3, 0.763636, 0.755556, 0.756436, 0.753000),
    "TP,FP/2": ([1, 0], 2, 0.545455, 0.500000, 0.504950, 0.495000),
}


def _curve(flags: list[int], num_gt: int) -> tuple[np.ndarray, np.ndarray]:
    tp = np.cumsum(flags)
    fp = np.cumsum(1 - np.asarray(flags))
    return tp / num_gt, tp / (tp + fp)


@pytest.mark.parametrize("case", CASES)
def test_golden_vectors(case: str) -> None:
    flags, num_gt, v07, v10, coco, ul = CASES[case]
    recall, precision = _curve(flags, num_gt)
    assert voc07_ap(recall, precision) == pytest.approx(v07, abs=1e-6)
    assert voc10_ap(recall, precision) == pytest.approx(v10, abs=1e-6)
    assert coco_interpolated_ap(recall, precision) == pytest.approx(coco, abs=1e-6)
    assert ultralytics_ap(recall, precision) == pytest.approx(ul, abs=1e-6)


def test_coco_golden_exact() -> None:
    recall, precision = _curve([1, 0, 1, 0, 1], 3)
    assert coco_interpolated_ap(recall, precision) == pytest.approx(
        (34 * 1 + 33 * 2 / 3 + 34 * 0.6) / 101, abs=1e-15
    )


def _voc07_literal(recall: np.ndarray, precision: np.ndarray, grid: np.ndarray) -> float:
    total = 0.0
    for t in grid:
        above = precision[recall >= t]
        total += (above.max() if above.size else 0.0) / 11.0
    return total


def _voc10_literal(recall: np.ndarray, precision: np.ndarray) -> float:
    mrec = [0.0, *recall.tolist(), 1.0]
    mpre = [0.0, *precision.tolist(), 0.0]
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    return sum(
        (mrec[i + 1] - mrec[i]) * mpre[i + 1]
        for i in range(len(mrec) - 1)
        if mrec[i + 1] != mrec[i]
    )


def _coco_literal(recall: np.ndarray, precision: np.ndarray, thresholds: np.ndarray) -> float:
    pr = precision.tolist()
    for i in range(len(pr) - 1, 0, -1):
        pr[i - 1] = max(pr[i - 1], pr[i])
    q = []
    for t in thresholds:
        idx = next((i for i, r in enumerate(recall) if r >= t), None)
        q.append(pr[idx] if idx is not None else 0.0)
    return float(np.mean(q))


@st.composite
def _curves(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    flags = draw(st.lists(st.integers(0, 1), min_size=1, max_size=30))
    num_gt = draw(st.integers(max(1, sum(flags)), max(1, sum(flags)) + 5))
    return _curve(flags, num_gt)


@settings(max_examples=200, deadline=None)
@given(_curves())
def test_against_literal_definitions(curve: tuple[np.ndarray, np.ndarray]) -> None:
    recall, precision = curve
    arange = np.arange(0.0, 1.1, 0.1)
    assert voc07_ap(recall, precision) == pytest.approx(
        _voc07_literal(recall, precision, arange), abs=1e-12
    )
    exact = np.arange(11) / 10
    assert voc07_ap(recall, precision, exact_grid=True) == pytest.approx(
        _voc07_literal(recall, precision, exact), abs=1e-12
    )
    assert voc10_ap(recall, precision) == pytest.approx(
        _voc10_literal(recall, precision), abs=1e-12
    )
    grid = np.linspace(0, 1, 101)
    assert coco_interpolated_ap(recall, precision) == pytest.approx(
        _coco_literal(recall, precision, grid), abs=1e-12
    )
    # REFERENCE 3.7: COCO sampling at linspace(0, 1, 11) is the VOC07 formula
    assert coco_interpolated_ap(recall, precision, np.linspace(0, 1, 11)) == pytest.approx(
        voc07_ap(recall, precision), abs=1e-12
    )


def test_ultralytics_matches_numpy_trapezoid() -> None:
    recall, precision = _curve([1, 1, 0, 1, 0, 0, 1], 6)
    value, mpre, mrec = ultralytics_ap(recall, precision, return_curves=True)  # type: ignore[misc]
    x = np.linspace(0, 1, 101)
    assert value == trapezoid(np.interp(x, mrec, mpre), x)
    assert mrec.tolist()[-2:] == [recall[-1], 1.0] and mpre.tolist()[-2:] == [0.0, 0.0]


def test_voc07_float_grid_pitfall() -> None:
    # maximum recall exactly 0.6: the devkit grid point 0.6000000000000001 is not reached
    assert voc07_ap([0.6], [1.0]) == pytest.approx(6 / 11)
    assert voc07_ap([0.6], [1.0], exact_grid=True) == pytest.approx(7 / 11)


def test_empty_and_errors() -> None:
    for fn in (coco_interpolated_ap, voc07_ap, voc10_ap, ultralytics_ap):
        assert fn([], []) == 0.0
        with pytest.raises(DataFormatError, match="recall, precision"):
            fn([0.1, 0.2], [1.0])
