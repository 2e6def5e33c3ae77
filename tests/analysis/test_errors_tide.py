"""TIDE error analysis: tidecv side by side, the AP50 identity, hand-made cases, bad input."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.errors import MAIN_ERRORS, SPECIAL_ERRORS, error_analysis
from ioukit.errors import DataFormatError
from tests.conftest import CONFORMANCE, load_conformance
from tests.errors_data import random_coco, with_masks
from tests.tidecv_reference import compare, run_tidecv

FIXTURE = CONFORMANCE / "coco" / "val2014_100"


def _fixture() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt = json.loads((FIXTURE / "instances_val2014_100.json").read_text())
    res = json.loads((FIXTURE / "instances_val2014_fakebbox100_results.json").read_text())
    return gt, res


def _gt(boxes: list[tuple[int, list[float]]], crowd: tuple[int, ...] = ()) -> dict[str, Any]:
    anns = [
        {
            "id": i + 1,
            "image_id": 1,
            "category_id": c,
            "bbox": b,
            "area": b[2] * b[3],
            "iscrowd": int(i in crowd),
        }
        for i, (c, b) in enumerate(boxes)
    ]
    return {
        "images": [{"id": 1}, {"id": 2}],
        "categories": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
        "annotations": anns,
    }


def _det(c: int, b: list[float], s: float, image: int = 1) -> dict[str, Any]:
    return {"image_id": image, "category_id": c, "bbox": b, "score": s}


# ------------------------------------------------------------------ conformance: tidecv numbers
def test_conformance_vector_tidecv_compat() -> None:
    expected = load_conformance("tide/expected.json")
    gt, res = _fixture()
    r = error_analysis(gt, res, compat="tidecv")
    assert r.ap * 100 == pytest.approx(expected["tidecv_ap50_percent"], abs=1e-9)
    for name, value in expected["tidecv_main_dAP_percent"].items():
        assert r.main[name] * 100 == pytest.approx(value, abs=1e-9), name
    for name, value in expected["tidecv_special_dAP_percent"].items():
        assert r.special[name] * 100 == pytest.approx(value, abs=1e-9), name


def test_conformance_fixture_default_is_pycocotools_ap50() -> None:
    gt, res = _fixture()
    r = error_analysis(gt, res)
    assert r.ap == ioukit.evaluate(gt, res).stats["AP50"]
    assert round(r.ap, 3) == 0.697  # the collector's pycocotools number (README)


def test_fixture_side_by_side_with_tidecv() -> None:
    gt, res = _fixture()
    compare(error_analysis(gt, res, compat="tidecv"), run_tidecv(gt, res))


# ------------------------------------------------------------------ generated sets
@pytest.mark.parametrize("seed", range(12))
def test_generated_sets_equal_tidecv(seed: int) -> None:
    gt, res = random_coco(seed, crowded=seed % 4 == 0, crowd=0.1 + 0.1 * (seed % 3))
    compare(error_analysis(gt, res, compat="tidecv"), run_tidecv(gt, res))


@pytest.mark.parametrize(("pos", "bg"), [(0.75, 0.2), (0.3, 0.0), (0.5, 0.5)])
def test_other_thresholds_equal_tidecv(pos: float, bg: float) -> None:
    gt, res = random_coco(100, n_images=15, crowd=0.3)
    ours = error_analysis(gt, res, compat="tidecv", iou_threshold=pos, background_threshold=bg)
    compare(ours, run_tidecv(gt, res, pos_threshold=pos, background_threshold=bg))


@pytest.mark.parametrize("seed", range(12))
def test_default_ap_is_ap50_exactly(seed: int) -> None:
    gt, res = random_coco(seed, crowded=seed % 4 == 0)
    r = error_analysis(gt, res)
    assert r.ap == ioukit.evaluate(gt, res).stats["AP50"]
    r75 = error_analysis(gt, res, iou_threshold=0.75)
    assert r75.ap == ioukit.evaluate(gt, res).stats["AP75"]


@pytest.mark.parametrize("compat", [None, "tidecv"])
@pytest.mark.parametrize("seed", range(6))
def test_internal_consistency(seed: int, compat: str | None) -> None:
    gt, res = random_coco(seed)
    r = error_analysis(gt, res, compat=compat)
    # every evaluated prediction has exactly one code; Miss counts ground truths
    codes = r.prediction_error
    for i, name in enumerate(("Cls", "Loc", "Both", "Dupe", "Bkg"), start=1):
        assert r.counts[name] == int(np.count_nonzero(codes == i))
    assert r.counts["Miss"] == int(r.missed.sum())
    assert all(v >= 0 for v in r.main.values())
    assert r.special["FalsePos"] >= 0 and r.special["FalseNeg"] >= 0
    assert r.ap + r.special["FalsePos"] <= 1 + 1e-12
    # per-class counts add up to the totals
    for name in MAIN_ERRORS:
        assert sum(row[f"n_{name}"] for row in r.per_class) == r.counts[name]
    assert set(r.to_dict()["main"]) == set(MAIN_ERRORS)
    assert json.loads(json.dumps(r.to_dict(), allow_nan=False))["ap"] == r.ap
    assert "Main errors" in r.summary()
    table = r.per_class_table().splitlines()
    assert table[0].split()[:3] == ["class", "AP", "Cls"]
    assert len(table) == 1 + sum(1 for row in r.per_class if not np.isnan(row["AP"]))


# ------------------------------------------------------------------ hand-made identities
def test_perfect_predictions_have_no_error() -> None:
    # tide#40: tidecv reports misses on perfect predictions past its per-image cap; here
    # every ground truth is found, nothing to fix
    boxes = [(1 + i % 2, [float(i * 3), 0.0, 10.0, 10.0]) for i in range(120)]
    gt = _gt(boxes)
    res = [_det(c, b, 0.5) for c, b in boxes]
    r = error_analysis(gt, res)
    assert r.ap == 1.0
    assert all(v == 0 for v in r.main.values()) and all(v == 0 for v in r.special.values())
    assert r.counts == dict.fromkeys(MAIN_ERRORS, 0)
    t = error_analysis(gt, res, compat="tidecv")
    assert t.counts["Miss"] == 20  # tidecv's cap of 100 per image across classes
    compare(t, run_tidecv(gt, res))


def test_each_error_type_on_hand_made_cases() -> None:
    gt = _gt([(1, [0, 0, 10, 10]), (2, [50, 50, 10, 10]), (1, [80, 80, 10, 10])])
    res = [
        _det(1, [0, 0, 10, 10], 0.9),  # TP
        _det(1, [0, 0, 10, 10], 0.8),  # Dupe of gt 1
        _det(1, [50, 50, 10, 10], 0.7),  # Cls: right box of class 2
        _det(1, [80, 80, 10, 4], 0.6),  # Loc: IoU 0.4 with gt 3
        _det(2, [83, 83, 10, 10], 0.5),  # Both: wrong class, IoU 0.2 with gt 3
        _det(2, [100, 0, 10, 10], 0.4),  # Bkg
        _det(1, [0, 0, 10, 10], 0.3, image=2),  # Bkg: image without ground truth
    ]
    r = error_analysis(gt, res)
    assert r.prediction_error.tolist() == [0, 4, 1, 2, 3, 5, 5]
    assert r.counts == {"Cls": 1, "Loc": 1, "Both": 1, "Dupe": 1, "Bkg": 2, "Miss": 0}
    # class 1: TP then FPs; fixing Loc makes gt 3 found: AP(class 1) from 1/2 to 1
    row = r.per_class[0]
    assert row["AP"] == pytest.approx(0.5049504950495, abs=1e-12)
    assert row["dAP_Loc"] > 0 and row["dAP_Miss"] == 0
    compare(error_analysis(gt, res, compat="tidecv"), run_tidecv(gt, res))


def test_miss_and_false_negative() -> None:
    gt = _gt([(1, [0, 0, 10, 10]), (1, [50, 50, 10, 10])])
    r = error_analysis(gt, [_det(1, [0, 0, 10, 10], 0.9)])
    assert r.counts["Miss"] == 1 and r.missed.tolist() == [False, True]
    assert r.ap == pytest.approx(51 / 101, abs=1e-12)
    # removing the missed ground truth gives AP 1: dAP Miss = FalseNeg = 1 - AP
    assert r.main["Miss"] == pytest.approx(1 - 51 / 101, abs=1e-12)
    assert r.special["FalseNeg"] == pytest.approx(1 - 51 / 101, abs=1e-12)


def test_all_ground_truth_missed_is_no_sentinel_arithmetic() -> None:
    # #23 item 6: fixing the false negatives leaves no ground truth; pycocotools' -1 "no
    # ground truth" is not an AP to subtract (tidecv: 0.00), side by side with tidecv
    gt = _gt([(1, [0, 0, 10, 10]), (1, [50, 50, 10, 10])])
    results = [_det(1, [200, 200, 10, 10], 0.9)]
    for compat in (None, "tidecv"):
        r = error_analysis(gt, results, compat=compat)
        assert r.special["FalseNeg"] == 0.0 and r.main["Miss"] >= 0.0
        assert "-100.00" not in r.summary()
    compare(error_analysis(gt, results, compat="tidecv"), run_tidecv(gt, results))
    no_gt = _gt([])
    r = error_analysis(no_gt, results)
    assert r.ap == -1.0 and "AP @ 50: 0.00" in r.summary()
    assert all(v == 0.0 for v in (*r.main.values(), *r.special.values()))


def test_crowd_absorbs_predictions() -> None:
    gt = _gt([(1, [0, 0, 10, 10]), (1, [50, 50, 40, 40])], crowd=(1,))
    res = [_det(1, [0, 0, 10, 10], 0.9), _det(1, [55, 55, 10, 10], 0.8)]
    r = error_analysis(gt, res)
    assert r.ap == pytest.approx(1.0, abs=1e-12) and r.prediction_error.tolist() == [0, 6]
    compare(error_analysis(gt, res, compat="tidecv"), run_tidecv(gt, res))


def test_inputs_not_mutated_and_datasets_accepted() -> None:
    gt, res = random_coco(3)
    gt0, res0 = copy.deepcopy(gt), copy.deepcopy(res)
    r1 = error_analysis(gt, res)
    assert gt == gt0 and res == res0
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results

    g = read_coco_ground_truth(gt)
    r2 = error_analysis(g, read_coco_results(res, g))
    assert r2.ap == r1.ap and r2.main == r1.main


def test_plot(tmp_path: Any) -> None:
    pytest.importorskip("matplotlib")
    gt, res = random_coco(1)
    out = tmp_path / "tide.png"
    error_analysis(gt, res).plot(out)
    assert out.stat().st_size > 1000


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"compat": "pycocotools"}, "compat"),
        ({"iou_type": "mask"}, "iou_type"),
        ({"iou_threshold": 0.0}, "iou_threshold"),
        ({"iou_threshold": 1.5}, "iou_threshold"),
        ({"background_threshold": 0.7}, "background_threshold"),
        ({"max_dets": 0}, "max_dets"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], match: str) -> None:
    gt, res = random_coco(0, n_images=2)
    with pytest.raises(ValueError, match=match):
        error_analysis(gt, res, **kwargs)


def test_bad_inputs() -> None:
    gt, res = random_coco(0, n_images=2)
    with pytest.raises(TypeError, match="gt"):
        error_analysis(3, res)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="results"):
        error_analysis(gt, 3)  # type: ignore[arg-type]
    with pytest.raises(DataFormatError):
        error_analysis(gt, [{"image_id": 7, "category_id": 1, "bbox": [0, 0, 1], "score": 1}])


def test_names() -> None:
    assert MAIN_ERRORS == ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")
    assert SPECIAL_ERRORS == ("FalsePos", "FalseNeg")


@pytest.mark.parametrize("compat", [None, "tidecv"])
def test_empty_inputs(compat: str | None) -> None:
    gt, res = random_coco(8, n_images=4)
    none = error_analysis(gt, [], compat=compat)
    assert none.ap == 0.0 and none.counts["Miss"] == sum(
        1 for a in gt["annotations"] if not a["iscrowd"]
    )
    no_gt = dict(gt, annotations=[])
    r = error_analysis(no_gt, res, compat=compat)
    assert r.counts["Bkg"] == len(r.prediction_error) - int((r.prediction_error == -1).sum())
    if compat is None:
        assert r.ap == -1.0  # no class has ground truth, as pycocotools
    empty = error_analysis(no_gt, [], compat=compat)
    assert empty.counts == dict.fromkeys(MAIN_ERRORS, 0)


# ------------------------------------------------------------------ masks
@pytest.mark.parametrize("seed", range(3))
def test_segm_default_is_ap50_and_compat_equals_tidecv(seed: int) -> None:
    gt, res = with_masks(*random_coco(seed, n_images=10, crowd=0.2))
    r = error_analysis(gt, res, iou_type="segm")
    assert r.ap == ioukit.evaluate(gt, res, iou_type="segm").stats["AP50"]
    ours = error_analysis(gt, res, compat="tidecv", iou_type="segm")
    compare(ours, run_tidecv(gt, res, segm=True))


def test_segm_needs_masks() -> None:
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results

    gt, res = random_coco(0, n_images=3)
    g = read_coco_ground_truth(gt)
    with pytest.raises(DataFormatError, match="segm"):
        error_analysis(g, read_coco_results(res, g), iou_type="segm")


def test_from_evaluation_result_reads_its_match(monkeypatch: Any) -> None:
    from ioukit.analysis import errors as _errors
    from ioukit.evaluation import pairing as _outcome

    gt, res = random_coco(4)
    result = ioukit.evaluate(gt, res)
    expected = error_analysis(gt, res)
    for module in (_outcome, _errors):  # any new match would fail
        monkeypatch.setattr(module, "match_groups", None)
    r = error_analysis(result)
    assert r.ap == expected.ap and r.main == expected.main and r.special == expected.special
    assert r.counts == expected.counts
    np.testing.assert_array_equal(r.prediction_error, expected.prediction_error)


def test_image_pairs_chunks_are_whole_predictions() -> None:
    from ioukit.evaluation.pairing import image_pairs
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results

    gt, res = random_coco(2, crowded=True)
    g = read_coco_ground_truth(gt)
    p = read_coco_results(res, g)
    whole = [np.concatenate(parts) for parts in zip(*image_pairs(g, p), strict=True)]
    chunks = list(image_pairs(g, p, chunk=7))
    assert len(chunks) > 5
    joined = [np.concatenate(parts) for parts in zip(*chunks, strict=True)]
    for a, b in zip(whole, joined, strict=True):
        np.testing.assert_array_equal(a, b)
    seen: set[int] = set()
    for rows, _, _ in chunks:
        here = set(rows.tolist())
        assert not here & seen  # a prediction's pairs never straddle two chunks
        seen |= here


def test_unknown_category_in_a_dataset() -> None:
    from ioukit.dataset import CategoryTable, Dataset, ImageTable

    images = ImageTable.from_lists([1], ["a"])
    gt = Dataset.from_arrays(
        images,
        CategoryTable.from_lists([1], ["a"]),
        boxes=[[0, 0, 1, 1]],
        image_index=[0],
        category_id=[1],
    )
    pred = Dataset.from_arrays(
        images,
        CategoryTable.from_lists([1, 2], ["a", "b"]),
        boxes=[[0, 0, 1, 1]],
        image_index=[0],
        category_id=[2],
        scores=[0.5],
    )
    with pytest.raises(DataFormatError, match=r"results\[0\].category_id"):
        error_analysis(gt, pred)


def test_results_without_scores_or_on_another_image_table_are_refused() -> None:
    from ioukit.dataset import CategoryTable, Dataset, ImageTable

    cats = CategoryTable.from_lists([1], ["a"])
    gt = Dataset.from_arrays(
        ImageTable.from_lists([1], ["x"]), cats, boxes=[[0, 0, 1, 1]], image_index=[0],
        category_id=[1],
    )  # fmt: skip
    with pytest.raises(DataFormatError, match=r"^results: expected predictions with scores, got"):
        error_analysis(gt, gt)
    other = Dataset.from_arrays(
        ImageTable.from_lists([1, 2], ["x", "y"]), cats, boxes=[[0, 0, 1, 1]], image_index=[1],
        category_id=[1], scores=[0.5],
    )  # fmt: skip
    with pytest.raises(DataFormatError, match=r"image table \(1 images\), got 2 images$"):
        error_analysis(gt, other)
