"""Published COCO bbox (and detectron2_small segm) vectors (tests/data/conformance/coco,
torchmetrics/map_cases.json; see tests/data/conformance/coco/PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.engine import evaluate
from ioukit.evaluator import Evaluator

DATA = Path(__file__).parents[2] / "data" / "conformance"
COCO = DATA / "coco"
KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]


def expected(folder: str) -> dict[str, Any]:
    return json.loads((COCO / folder / "expected.json").read_text())


def stats_of(result: Any) -> np.ndarray:
    return np.array([result.stats[k] for k in KEYS])


def test_val2014_100_full_precision_and_official() -> None:
    folder = COCO / "val2014_100"
    r = evaluate(
        folder / "instances_val2014_100.json", folder / "instances_val2014_fakebbox100_results.json"
    )
    exp = expected("val2014_100")
    np.testing.assert_allclose(stats_of(r), exp["expected_full_precision"]["stats"], atol=1e-12)
    np.testing.assert_array_equal(np.round(stats_of(r), 3), exp["expected_official_3dp"]["stats"])


def test_val2014_100_custom_area_ranges() -> None:
    folder = COCO / "val2014_100"
    spec = expected("val2014_100")["expected_custom_area_ranges"]
    ranges = {k: v for k, v in spec["area_ranges"].items() if k != "all"}
    gt = folder / "instances_val2014_100.json"
    r = evaluate(gt, folder / "instances_val2014_fakebbox100_results.json", area_ranges=ranges)
    keys = "AP AP50 AP75 AP_nano AP_micro APs APm APl AR1 AR10 AR100 AR_nano AR_micro ARs ARm ARl"
    assert list(r.stats) == keys.split()
    np.testing.assert_allclose(list(r.stats.values()), spec["stats"], atol=1e-12)


def test_review_odm_coco_box_area_gt() -> None:
    folder = COCO / "review_odm_coco"
    r = evaluate(folder / "sampled_gts_bbox_area.json", folder / "cocoapi_results.json")
    exp = expected("review_odm_coco")
    np.testing.assert_allclose(stats_of(r), exp["expected_published"]["stats"], atol=1e-6)
    np.testing.assert_allclose(stats_of(r), exp["pycocotools_2.0.11_full_precision"], atol=1e-12)


def test_detectron2_small() -> None:
    folder = COCO / "detectron2_small"
    r = evaluate(folder / "gt.json", folder / "detections.json")
    np.testing.assert_allclose(
        stats_of(r), expected("detectron2_small")["expected_bbox"]["stats"], atol=1e-12
    )


def test_detectron2_small_segm() -> None:
    folder = COCO / "detectron2_small"
    r = evaluate(folder / "gt.json", folder / "detections.json", iou_type="segm")
    np.testing.assert_allclose(
        stats_of(r), expected("detectron2_small")["expected_segm"]["stats"], atol=1e-12
    )
    pyco = evaluate(
        folder / "gt.json", folder / "detections.json", iou_type="segm", compat="pycocotools"
    )
    np.testing.assert_allclose(
        stats_of(pyco), expected("detectron2_small")["expected_segm"]["stats"], atol=1e-12
    )


def test_mmdet_dummy_category_id_zero() -> None:
    folder = COCO / "mmdet_dummy"
    r = evaluate(folder / "gt.json", folder / "detections.json")
    exp = expected("mmdet_dummy")
    np.testing.assert_allclose(stats_of(r), exp["pycocotools_2.0.11_all12_DERIVED"], atol=1e-12)
    np.testing.assert_array_equal(np.round(stats_of(r)[:6], 4), exp["expected_published"]["first6"])


# ------------------------------------------------------------- torchmetrics MeanAveragePrecision
CASES = json.loads((DATA / "torchmetrics" / "map_cases.json").read_text())["cases"]
TM_KEYS = {
    "map": "AP",
    "map_50": "AP50",
    "map_75": "AP75",
    "map_small": "APs",
    "map_medium": "APm",
    "map_large": "APl",
    "mar_1": "AR1",
    "mar_10": "AR10",
    "mar_100": "AR100",
    "mar_small": "ARs",
    "mar_medium": "ARm",
    "mar_large": "ARl",
}


def run_case(case: dict[str, Any], **options: Any) -> Any:
    ev = Evaluator(**options)
    inputs = case["inputs"]
    for p, t in zip(inputs["preds"], inputs["target"], strict=True):
        ev.update(
            [{k: p[k] for k in ("boxes", "scores", "labels")}],
            [{k: t[k] for k in ("boxes", "labels")}],
        )
    return ev.compute()


def pycocotools_values(case: dict[str, Any]) -> dict[str, Any]:
    for key, value in case.items():
        if key.startswith("pycocotools_2.0.11") and isinstance(value, dict) and "map" in value:
            return value
    raise KeyError("no pycocotools values")


@pytest.mark.parametrize(
    "name",
    [
        "reference_subset_v1",
        "reference_subset_v2",
        "missing_pred",
        "missing_gt",
        "issue_943_inputs2",
        "inputs3_empty_pred_image",
    ],
)
def test_torchmetrics_cases(name: str) -> None:
    case = CASES[name]
    want = pycocotools_values(case)
    r = run_case(case)
    for tm_key, key in TM_KEYS.items():
        assert r.stats[key] == pytest.approx(want[tm_key], abs=1e-12), tm_key
    if "map_per_class" in want:
        got = [row["AP"] for row in r.per_class]
        np.testing.assert_allclose(got, want["map_per_class"], atol=1e-12)
        np.testing.assert_allclose(
            [row["AR100"] for row in r.per_class], want["mar_100_per_class"], atol=1e-12
        )
        assert [row["category_id"] for row in r.per_class] == want["classes"]
    published = case.get("published_expected", {}).get("values")
    if published:
        for tm_key, key in TM_KEYS.items():
            if tm_key in published:
                assert round(r.stats[key], 3) == pytest.approx(published[tm_key], abs=1e-9)


def test_torchmetrics_docstring_single_box() -> None:
    case = CASES["docstring_single_box"]
    values = case["published_expected"]["values"]
    r = run_case(case)
    for tm_key, key in TM_KEYS.items():
        if tm_key in values:
            assert r.stats[key] == pytest.approx(values[tm_key], abs=1e-12), tm_key


def test_torchmetrics_box_format() -> None:
    case = CASES["box_format"]
    for fmt, want in case["published_expected"]["by_box_format"].items():
        r = run_case(case, fmt=fmt, iou_thresholds=[0.2])
        assert r.stats["AP"] == pytest.approx(want["map"]), fmt


def test_torchmetrics_many_detection_thresholds() -> None:
    case = CASES["many_detection_thresholds"]
    assert run_case(case, max_dets=[1, 10, 1000]).stats["AP"] == pytest.approx(0.6)
    pyco = run_case(case, max_dets=[1, 10, 1000], compat="pycocotools")
    np.testing.assert_allclose(
        stats_of_any(pyco), case["pycocotools_2.0.11_stats_DERIVED"], atol=1e-12
    )


def stats_of_any(result: Any) -> list[float]:
    return list(result.stats.values())
