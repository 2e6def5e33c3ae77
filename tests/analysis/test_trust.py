"""Trust notes: a confidence floor against the recall really lost when the same predictions
are cut, too few detections for max_dets, the provenance line against the protocol options."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.trust import (
    confidence_floor,
    dataset_notes,
    few_detections,
    provenance,
    recall_at_stake,
    trust_notes,
)
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.synthetic import make_detections, to_datasets


def _set(seed: int = 0, n: int = 200) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return make_detections(num_images=n, num_classes=8, seed=seed)


def _tp(r: Any) -> tuple[int, int]:
    o = r.outcome
    return int(o.true_positive(0, 0).sum()), int(o.gt_count[:, 0].sum())


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("cut", [0.25, 0.4])
def test_floor_bounds_the_recall_really_lost(seed: int, cut: float) -> None:
    gt, res = _set(seed)
    full = ioukit.evaluate(*to_datasets(gt, res))
    assert not [n for n in full.trust_notes() if n.code == "confidence-floor"]
    cut_res = [r for r in res if r["score"] >= cut]
    r = ioukit.evaluate(*to_datasets(gt, cut_res))
    [note] = [n for n in r.trust_notes() if n.code == "confidence-floor"]
    assert note.severity == "warning" and f"{min(x['score'] for x in cut_res):.3g}" in note.message
    tp_full, num_gt = _tp(full)
    tp_cut, _ = _tp(r)
    lost = (tp_full - tp_cut) / num_gt  # what the cut predictions really found
    o = r.outcome
    est = recall_at_stake(r.predictions.scores, o.score[o.true_positive(0, 0)], num_gt)
    assert est.recall == pytest.approx(tp_cut / num_gt)
    assert est.at_most >= lost  # a bound: the ground truths not found
    # the rough estimate: measured 1.4-3.2x the true loss on these sets (seeds 0-2)
    assert 0.3 * lost <= est.estimate <= 4.0 * lost
    assert f"{est.recall:.3f}" in note.message and f"+{est.estimate:.3f}" in note.message


def test_floor_levels() -> None:
    s = np.linspace(0.06, 0.9, 40)
    note = confidence_floor(s, s[:10], 20)
    assert note is not None and note.severity == "info"
    assert confidence_floor(s[:10], s[:5], 20) is None  # too few predictions to tell
    assert confidence_floor(np.r_[0.01, s], s[:10], 20) is None
    r = recall_at_stake(np.array([0.5, 0.52, 0.9]), np.array([0.52]), 0)
    assert np.isnan(r.recall)


def test_floor_by_hand() -> None:
    # floor 0.2; 3 TPs below 0.25 -> 3 / 0.05 * 0.2 / 2 = 6 more, capped by the 5 missing
    scores = np.r_[np.full(20, 0.2), np.linspace(0.3, 0.9, 10)]
    tp = np.r_[0.2, 0.21, 0.22, np.linspace(0.3, 0.9, 7)]
    r = recall_at_stake(scores, tp, 15)
    assert (r.floor, r.band_tp, r.recall, r.at_most) == (0.2, 3, 10 / 15, 5 / 15)
    assert r.estimate == pytest.approx(5 / 15)
    r = recall_at_stake(scores, tp, 30)
    assert r.estimate == pytest.approx(6 / 30)


def test_few_detections() -> None:
    gt, res = _set(1, 30)
    top = []
    for image in {r["image_id"] for r in res}:
        mine = sorted((r for r in res if r["image_id"] == image), key=lambda r: -r["score"])
        top += mine[:10]
    r = ioukit.evaluate(*to_datasets(gt, top))
    [note] = [n for n in r.trust_notes() if n.code == "few-detections"]
    assert "at most 10 predictions" in note.message and "AR100" in note.message
    # recall at 100 equals recall at 10 indeed
    assert r.stats["AR100"] == r.stats["AR10"]
    full = ioukit.evaluate(*to_datasets(gt, res))
    assert not [n for n in full.trust_notes() if n.code == "few-detections"]
    # 11 in some image: no note; max_dets below 10: none either
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["cat"])
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 1, 1]] * 11, image_index=[0] * 11, category_id=[1] * 11,
        scores=[0.5] * 11,
    )  # fmt: skip
    assert few_detections(pred, 100) is None and few_detections(pred, 200) is not None
    assert few_detections(pred, 5) is None


def test_provenance_defaults_and_deviations() -> None:
    g, p = to_datasets(*_set(2, 20))
    line = provenance(ioukit.evaluate(g, p)).message
    # the protocol by its reference and its defining settings, not a dataset year
    assert line == (
        "this run is the coco protocol, pycocotools' COCOeval with iouType 'bbox', with its "
        "reference defaults (IoU 0.50:0.05:0.95, 101 recall points, max dets 1/10/100, areas "
        "small < 32², medium 32²..96², large >= 96²)"
    )
    assert "2017" not in line
    r = ioukit.evaluate(
        g, p, max_dets=(1, 10, 300), use_cats=False, compat="pycocotools",
        iou_thresholds=(0.5, 0.75),
    )  # fmt: skip
    line = provenance(r).message
    assert "deviating from its defaults" in line
    assert "max_dets [1, 10, 300] (default [1, 10, 100])" in line
    assert "use_cats False (default True)" in line
    assert "compat 'pycocotools' (default None)" in line
    assert "iou_thresholds [0.5, 0.75] (default [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8" in line
    assert "area_ranges" not in line
    ranges = {
        "all": (0, 1e10),
        "small": (0, 32**2),
        "medium": (32**2, 96**2),
        "large": (96**2, 1e5),
    }
    assert "area_ranges" in provenance(ioukit.evaluate(g, p, area_ranges=ranges)).message
    yolo = provenance(ioukit.evaluate(g, p, protocol="yolo")).message
    assert "yolo protocol" in yolo and "float32" in yolo and "reference defaults" in yolo
    voc = provenance(ioukit.evaluate(g, p, protocol="voc07", iou_threshold=0.7)).message
    assert "iou_threshold 0.7 (default 0.5)" in voc
    plain_voc = provenance(ioukit.evaluate(g, p, protocol="voc07")).message
    assert plain_voc.endswith("with its reference defaults (IoU 0.5, 11point interpolation)")
    assert trust_notes(ioukit.evaluate(g, p))[0].code == "provenance"


def test_dataset_notes_for_check() -> None:
    gt, res = _set(0, 40)
    g, p = to_datasets(gt, [r for r in res if r["score"] >= 0.3])
    [note] = dataset_notes(g, p)
    r = ioukit.evaluate(g, p)
    [same] = [n for n in r.trust_notes() if n.code == "confidence-floor"]
    assert note.message == same.message  # the same COCO match at IoU 0.5
    assert dataset_notes(*to_datasets(gt, res)) == ()


def test_bad_input() -> None:
    with pytest.raises(ParameterError, match="result: expected an EvaluationResult, got int"):
        trust_notes(3)
