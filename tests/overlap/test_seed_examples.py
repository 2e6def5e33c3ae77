"""The worked example that every test and the README agree with.

Data: tests/data/conformance/seed_examples.json (see PROVENANCE.md there).
"""

from __future__ import annotations

from fractions import Fraction

import array_api_compat.numpy as npx
import numpy as np
import pytest

import ioukit
from ioukit.overlap import _formulas
from tests.conftest import load_conformance

CASES = load_conformance("seed_examples.json")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[str(c["ground_truth_xyxy"]) for c in CASES])
def test_iou_of_two_boxes_matches_exact_fraction(case: dict) -> None:
    value = ioukit.iou(case["ground_truth_xyxy"], case["predicted_xyxy"])
    assert value == pytest.approx(float(Fraction(case["iou_fraction"])), rel=0, abs=1e-15)
    assert value == pytest.approx(case["iou"], abs=1e-15)


@pytest.mark.parametrize("case", CASES, ids=[str(c["ground_truth_xyxy"]) for c in CASES])
def test_dice_intersection_union(case: dict) -> None:
    gt = np.asarray([case["ground_truth_xyxy"]], dtype=float)
    pred = np.asarray([case["predicted_xyxy"]], dtype=float)
    dice = float(ioukit.box_dice(gt, pred)[0, 0])
    assert dice == pytest.approx(float(Fraction(case["dice_fraction"])), abs=1e-15)
    inter = float(_formulas.intersection(npx, tuple(gt[0]), tuple(pred[0])))
    assert inter == case["intersection"]
    assert float(ioukit.box_area(gt)[0] + ioukit.box_area(pred)[0]) - inter == case["union"]


def test_disjoint_boxes_never_get_the_unclamped_product() -> None:
    # raw overlap (-20) x (-10) = 200 would be the classic bug
    assert ioukit.iou((700, 100, 800, 200), (820, 210, 900, 300)) == 0.0
    assert ioukit.iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0


def test_headline_table_rounding() -> None:
    rows = [
        ((100, 80, 300, 280), (120, 100, 320, 300), 0.681, 0.810, True, False),
        ((50, 60, 210, 260), (110, 90, 260, 280), 0.391, 0.562, False, False),
        ((400, 150, 600, 450), (430, 190, 570, 410), 0.513, 0.678, True, False),
        ((700, 100, 800, 200), (820, 210, 900, 300), 0.0, 0.0, False, False),
    ]
    for gt, pred, iou, dice, hit50, hit75 in rows:
        value = ioukit.iou(gt, pred)
        assert round(value, 3) == iou
        assert round(float(ioukit.box_dice([gt], [pred])[0, 0]), 3) == dice
        assert (value >= 0.5, value >= 0.75) == (hit50, hit75)


def test_dice_equals_two_iou_over_one_plus_iou() -> None:
    gt = np.asarray([c["ground_truth_xyxy"] for c in CASES], dtype=float)
    pred = np.asarray([c["predicted_xyxy"] for c in CASES], dtype=float)
    iou = ioukit.box_iou_elementwise(gt, pred)
    np.testing.assert_allclose(
        ioukit.box_dice_elementwise(gt, pred), 2 * iou / (1 + iou), rtol=1e-15
    )
