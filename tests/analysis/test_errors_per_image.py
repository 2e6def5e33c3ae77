"""Per-image metrics: totals equal pycocotools' match, image AP equals AP50 of the image alone."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import math
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.per_image import COLUMNS, per_image
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from tests.errors_data import random_coco


def _table(gt: dict[str, Any], res: list[dict[str, Any]], **kw: Any) -> Any:
    g = read_coco_ground_truth(gt)
    return per_image(g, read_coco_results(res, g), **kw)


def _pycocotools_totals(gt: dict[str, Any], res: list[dict[str, Any]]) -> tuple[int, int, int]:
    """TP, FP, FN at IoU 0.5, area all, maxDets 100, from pycocotools' evaluateImg."""
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(copy.deepcopy(res)), "bbox")
        e.evaluate()
    tp = fp = npos = 0
    n_a, n_i = len(e.params.areaRng), len(e.params.imgIds)
    for k in range(len(e.params.catIds)):
        for i in range(n_i):
            x = e.evalImgs[k * n_a * n_i + i]  # area "all"
            if x is None:
                continue
            m, ig = np.asarray(x["dtMatches"][0]), np.asarray(x["dtIgnore"][0], dtype=bool)
            tp += int(np.count_nonzero((m > 0) & ~ig))
            fp += int(np.count_nonzero((m == 0) & ~ig))
            npos += int(np.count_nonzero(np.asarray(x["gtIgnore"]) == 0))
    return tp, fp, npos - tp


@pytest.mark.parametrize("seed", range(8))
def test_totals_equal_dataset(seed: int) -> None:
    gt, res = random_coco(seed, crowded=seed % 3 == 0)
    t = _table(gt, res)
    c = t.columns
    assert (int(c["tp"].sum()), int(c["fp"].sum()), int(c["fn"].sum())) == _pycocotools_totals(
        gt, res
    )
    assert np.all(c["tp"] + c["fn"] == c["num_gt"])
    assert np.all(c["tp"] + c["fp"] == c["num_pred"])
    assert len(t) == len(gt["images"])


@pytest.mark.parametrize("seed", range(4))
def test_image_ap_is_ap50_of_the_image_alone(seed: int) -> None:
    gt, res = random_coco(seed)
    t = _table(gt, res)
    for i, image_id in enumerate(t.columns["image_id"].tolist()):
        alone = dict(gt)
        alone["images"] = [im for im in gt["images"] if im["id"] == image_id]
        alone["annotations"] = [a for a in gt["annotations"] if a["image_id"] == image_id]
        mine = [d for d in res if d["image_id"] == image_id]
        ap50 = ioukit.evaluate(alone, mine).stats["AP50"]
        got = t.columns["ap"][i]
        if ap50 == -1:
            assert math.isnan(got)
        else:
            assert got == pytest.approx(ap50, abs=1e-12)


def test_score_threshold_is_inclusive_and_consistent() -> None:
    gt, res = random_coco(4)
    t = _table(gt, res, score_threshold=0.5)
    kept = [d for d in res if d["score"] >= 0.5]
    fresh = _table(gt, kept)
    for name in ("num_gt", "num_pred", "tp", "fp", "fn"):
        np.testing.assert_array_equal(t.columns[name], fresh.columns[name])
    np.testing.assert_allclose(t.columns["mean_iou"], fresh.columns["mean_iou"], rtol=0, atol=0)


def test_sorting_worst_and_csv(tmp_path: Any) -> None:
    gt, res = random_coco(5)
    t = _table(gt, res)
    by_ap = t.sort_by("ap")
    ap = by_ap.columns["ap"]
    finite = ap[~np.isnan(ap)]
    assert np.all(np.diff(finite) >= 0) and np.all(np.isnan(ap[len(finite) :]))
    desc = t.sort_by("fp", descending=True).columns["fp"]
    assert np.all(np.diff(desc) <= 0)
    worst = t.worst(3)
    assert len(worst) == 3 and worst[0]["ap"] == np.nanmin(ap)
    out = tmp_path / "per_image.csv"
    t.to_csv(out)
    with out.open() as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS and len(rows) == len(t) + 1
    with pytest.raises(ValueError, match="column"):
        t.sort_by("nope")


def test_from_evaluation_result() -> None:
    gt, res = random_coco(6)
    a = per_image(ioukit.evaluate(gt, res))
    b = _table(gt, res)
    for name in ("tp", "fp", "fn"):
        np.testing.assert_array_equal(a.columns[name], b.columns[name])


def test_empty_predictions() -> None:
    gt, _ = random_coco(7, n_images=3)
    t = _table(gt, [])
    assert t.columns["tp"].sum() == 0 and np.all(t.columns["fn"] == t.columns["num_gt"])
    assert all(math.isnan(v) or v == 0 for v in t.columns["ap"].tolist())


def test_reads_the_evaluations_outcome_without_matching_again(monkeypatch: Any) -> None:
    from ioukit.evaluation import pairing as _outcome

    gt, res = random_coco(9)
    result = ioukit.evaluate(gt, res)
    expected = _table(gt, res)
    calls = []
    original = _outcome.match_groups

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_outcome, "match_groups", counting)
    t = per_image(result)
    from ioukit.analysis.thresholds import optimal_thresholds

    optimal_thresholds(result)
    assert calls == []
    for name in ("tp", "fp", "fn", "num_pred"):
        np.testing.assert_array_equal(t.columns[name], expected.columns[name])
    np.testing.assert_array_equal(t.columns["ap"], expected.columns["ap"])
    # a threshold the evaluation does not hold: matched again, same answer as from datasets
    t2 = per_image(result, iou_threshold=0.3)
    assert calls
    np.testing.assert_array_equal(
        t2.columns["tp"], _table(gt, res, iou_threshold=0.3).columns["tp"]
    )
