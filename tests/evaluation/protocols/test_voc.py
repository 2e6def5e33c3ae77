"""PASCAL VOC protocol against Padilla's published numbers (tests/data/conformance/padilla_*)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.protocols.voc import evaluate_voc

DATA = Path(__file__).parents[2] / "data" / "conformance"


def _datasets(
    stems: list[str],
    names: list[str],
    gt_rows: list[tuple[int, str, list[float], bool]],
    pred_rows: list[tuple[int, str, float, list[float]]],
) -> tuple[Dataset, Dataset]:
    images = ImageTable.from_lists(list(range(1, len(stems) + 1)), stems)
    cats = CategoryTable.from_lists(list(range(len(names))), names)
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=np.array([r[2] for r in gt_rows], dtype=float).reshape(-1, 4),
        image_index=[r[0] for r in gt_rows],
        category_id=[names.index(r[1]) for r in gt_rows],
        difficult=[r[3] for r in gt_rows],
    )
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=np.array([r[3] for r in pred_rows], dtype=float).reshape(-1, 4),
        image_index=[r[0] for r in pred_rows],
        category_id=[names.index(r[1]) for r in pred_rows],
        scores=[r[2] for r in pred_rows],
    )
    return gt, pred


def _padilla_sample() -> tuple[Dataset, Dataset]:
    """Text files ``class left top width height`` / ``class conf left top width height``."""
    root = DATA / "padilla_sample"
    stems = sorted(p.stem for p in (root / "groundtruths").glob("*.txt"))
    gt_rows, pred_rows = [], []
    for i, stem in enumerate(stems):
        for line in (root / "groundtruths" / f"{stem}.txt").read_text().splitlines():
            if line.strip():
                name, x, y, w, h = line.split()
                x0, y0 = float(x), float(y)
                gt_rows.append((i, name, [x0, y0, x0 + float(w), y0 + float(h)], False))
        for line in (root / "detections" / f"{stem}.txt").read_text().splitlines():
            if line.strip():
                name, conf, x, y, w, h = line.split()
                x0, y0 = float(x), float(y)
                pred_rows.append((i, name, float(conf), [x0, y0, x0 + float(w), y0 + float(h)]))
    return _datasets(stems, ["person"], gt_rows, pred_rows)


def _padilla_toy() -> tuple[Dataset, Dataset]:
    root = DATA / "padilla_toyexample"
    stems = sorted(p.stem for p in (root / "gts_vocpascal_format").glob("*.xml"))
    gt_rows, pred_rows = [], []
    for i, stem in enumerate(stems):
        tree = ET.parse(root / "gts_vocpascal_format" / f"{stem}.xml")
        for obj in tree.getroot().iter("object"):
            box = obj.find("bndbox")
            assert box is not None
            coords = [float(box.findtext(k, "nan")) for k in ("xmin", "ymin", "xmax", "ymax")]
            gt_rows.append((i, obj.findtext("name", ""), coords, obj.findtext("difficult") == "1"))
        det = root / "dets_classname_abs_xyx2y2" / f"{stem}.txt"
        if det.exists():
            for line in det.read_text().splitlines():
                if line.strip():
                    name, conf, *xyxy = line.split()
                    pred_rows.append((i, name, float(conf), [float(v) for v in xyxy]))
    return _datasets(stems, ["cat"], gt_rows, pred_rows)


SAMPLE_EXPECTED = json.loads((DATA / "padilla_sample" / "expected.json").read_text())


@pytest.mark.parametrize("threshold", ["0.1", "0.3", "0.5", "0.75"])
def test_padilla_sample_published(threshold: str) -> None:
    gt, pred = _padilla_sample()
    published = SAMPLE_EXPECTED["expected_published"]["review_object_detection_metrics_test_case_1"]
    for interpolation, key in (
        ("all", "EVERY_POINT_INTERPOLATION"),
        ("11point", "ELEVEN_POINT_INTERPOLATION"),
    ):
        r = evaluate_voc(
            gt,
            pred,
            interpolation=interpolation,
            iou_threshold=float(threshold),
            pixel_inclusive=True,
        )
        assert r.stats["mAP"] == pytest.approx(published[key][threshold], abs=1e-10)


@pytest.mark.parametrize("threshold", ["0.1", "0.3", "0.5", "0.75"])
def test_padilla_sample_exact_fractions(threshold: str) -> None:
    gt, pred = _padilla_sample()
    exact = SAMPLE_EXPECTED["expected_exact_fractions_plus1_convention"][threshold]
    every = evaluate_voc(
        gt, pred, interpolation="all", iou_threshold=float(threshold), pixel_inclusive=True
    )
    assert every.stats["mAP"] == pytest.approx(float(Fraction(exact["every_point"])), rel=1e-12)
    assert every.per_class[0]["TP"] == exact["tp"] and every.per_class[0]["FP"] == exact["fp"]
    assert every.per_class[0]["num_gt"] == exact["num_gt"]
    exact_grid = evaluate_voc(
        gt, pred, iou_threshold=float(threshold), pixel_inclusive=True, exact_grid=True
    )
    assert exact_grid.stats["mAP"] == pytest.approx(
        float(Fraction(exact["eleven_point_exact_grid"])), rel=1e-12
    )


@pytest.mark.parametrize("threshold", ["0.1", "0.3", "0.5", "0.75"])
def test_padilla_sample_continuous_convention(threshold: str) -> None:
    gt, pred = _padilla_sample()
    derived = SAMPLE_EXPECTED["derived_continuous_convention_NOT_PUBLISHED"][threshold]
    r = evaluate_voc(gt, pred, interpolation="all", iou_threshold=float(threshold))
    assert r.stats["mAP"] == pytest.approx(float(Fraction(derived["every_point"])), rel=1e-12)
    r11 = evaluate_voc(gt, pred, iou_threshold=float(threshold))
    assert r11.stats["mAP"] == pytest.approx(derived["eleven_point_float_grid"], rel=1e-12)


def test_padilla_sample_readme_curve() -> None:
    gt, pred = _padilla_sample()
    r = evaluate_voc(gt, pred, interpolation="all", iou_threshold=0.3, pixel_inclusive=True)
    readme = SAMPLE_EXPECTED["expected_published"]["object_detection_metrics_readme_iou_0.3"]
    precision = [round(v, 2) for v in r.arrays["curve_precision"].tolist()]
    recall = [round(v, 2) for v in r.arrays["curve_recall"].tolist()]
    assert precision == [float(v) for v in readme["results_txt"]["precision"]]
    assert recall == [float(v) for v in readme["results_txt"]["recall"]]
    assert round(r.stats["mAP"] * 100, 2) == 24.57


@pytest.mark.parametrize(
    ("threshold", "eleven", "every"), [(0.5, 88.64, 89.58), (0.75, 49.24, 50.97)]
)
def test_padilla_toyexample_published(threshold: float, eleven: float, every: float) -> None:
    gt, pred = _padilla_toy()
    for pixel_inclusive in (False, True):
        r11 = evaluate_voc(gt, pred, iou_threshold=threshold, pixel_inclusive=pixel_inclusive)
        r_all = evaluate_voc(
            gt, pred, interpolation="all", iou_threshold=threshold, pixel_inclusive=pixel_inclusive
        )
        assert round(r11.stats["mAP"] * 100, 2) == eleven
        assert round(r_all.stats["mAP"] * 100, 2) == every
        assert r11.protocol == "voc07" and r_all.protocol == "voc10"


def test_padilla_toyexample_exact() -> None:
    gt, pred = _padilla_toy()
    expected = json.loads((DATA / "padilla_toyexample" / "expected.json").read_text())
    for key, threshold in (("0.5", 0.5), ("0.75", 0.75)):
        exact = expected["expected_exact_fractions"][key]
        r = evaluate_voc(
            gt, pred, interpolation="all", iou_threshold=threshold, pixel_inclusive=True
        )
        assert r.stats["mAP"] == pytest.approx(float(Fraction(exact["every_point"])), rel=1e-12)
        assert (r.per_class[0]["TP"], r.per_class[0]["FP"]) == (exact["tp"], exact["fp"])


def _tiny(difficult: bool = False) -> tuple[Dataset, Dataset]:
    images = ImageTable.from_lists([1, 2], ["a", "b"])
    cats = CategoryTable.from_lists([3, 1], ["dog", "cat"])
    gt = Dataset.from_arrays(
        images,
        cats,
        boxes=[[0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30]],
        image_index=[0, 0, 1],
        category_id=[1, 1, 1],
        difficult=[False, difficult, False],
    )
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=[[0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 5, 5]],
        image_index=[0, 0, 1, 1],
        category_id=[1, 1, 1, 3],
        scores=[0.9, 0.8, 0.7, 0.6],
    )
    return gt, pred


def test_voc_rule_no_fallback_and_difficult() -> None:
    gt, pred = _tiny()
    r = evaluate_voc(gt, pred, interpolation="all")
    cat = next(row for row in r.per_class if row["name"] == "cat")
    # second prediction's best gt (first one on ties) is taken -> FP, no fallback
    assert (cat["TP"], cat["FP"], cat["num_gt"]) == (2, 1, 3)
    dog = next(row for row in r.per_class if row["name"] == "dog")
    assert dog["AP"] == -1.0 and dog["num_pred"] == 1
    assert [row["category_id"] for row in r.per_class] == [1, 3]
    assert r.stats["mAP"] == cat["AP"]
    # the tied gt is difficult: first prediction takes gt 0 (first max), second is FP again
    r2 = evaluate_voc(*_tiny(difficult=True), interpolation="all")
    cat2 = next(row for row in r2.per_class if row["name"] == "cat")
    assert (cat2["TP"], cat2["FP"], cat2["num_gt"]) == (2, 1, 2)


def test_strict_threshold() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["cat"])
    gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1])
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 5]], image_index=[0], category_id=[1], scores=[1.0]
    )
    assert evaluate_voc(gt, pred, interpolation="all").stats["mAP"] == 1.0
    assert evaluate_voc(gt, pred, interpolation="all", strict_threshold=True).stats["mAP"] == 0.0


def test_errors() -> None:
    gt, pred = _tiny()
    with pytest.raises(ParameterError, match="interpolation"):
        evaluate_voc(gt, pred, interpolation="101")
    with pytest.raises(ParameterError, match="iou_threshold"):
        evaluate_voc(gt, pred, iou_threshold=1.5)
    with pytest.raises(DataFormatError, match="pred"):
        evaluate_voc(gt, gt)


def test_empty_predictions() -> None:
    gt, pred = _tiny()
    empty = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=np.zeros((0, 4)),
        image_index=[],
        category_id=[],
        scores=[],
    )
    r = evaluate_voc(gt, empty)
    assert r.stats["mAP"] == 0.0
